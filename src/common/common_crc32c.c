/*
 * common_crc32c.c — CRC-32C (common_crc32c.h). Reflected polynomial
 * 0x82F63B78; the hardware path is picked once per process.
 *
 * The SSE4.2 crc32 instruction takes 3 cycles but can start one per cycle,
 * so long inputs run three independent streams over three adjacent blocks
 * of FL_CRC_BLOCK bytes and join them: the CRC register is linear over
 * GF(2), so the register after A||B is shift(reg after A, |B|) xor (reg
 * after B from 0), where shifting by n bytes multiplies by x^(8n) mod P.
 * For the one block length used that multiplication is a table lookup
 * (fl_crc_shift_table, built at init from a bitwise multiply).
 */
#include "common_crc32c.h"

#include <pthread.h>
#include <string.h>

#define FL_CRC_POLY 0x82F63B78u
#define FL_CRC_BLOCK 8192 /* bytes per stream per round of the 3-stream path */

/* Built once by fl_crc_init, read-only afterwards. */
static uint32_t fl_crc_table[8][256];
static uint32_t fl_crc_shift_table[4][256]; /* r -> r * x^(8 * FL_CRC_BLOCK) mod P */
static int fl_crc_hw;

/* a * b mod P, reflected (bit 31 is the x^0 coefficient). */
static uint32_t fl_crc_mulmod(uint32_t a, uint32_t b) {
    uint32_t prod = 0;
    for (uint32_t m = 1u << 31; m; m >>= 1) {
        if (a & m) prod ^= b;
        b = (b & 1) ? (b >> 1) ^ FL_CRC_POLY : b >> 1; /* b *= x */
    }
    return prod;
}

/* x^(8n) mod P, reflected, by repeated squaring. */
static uint32_t fl_crc_xpow8n(uint64_t n) {
    uint32_t result = 1u << 31, sq = 1u << 30; /* x^0, x^1 */
    for (uint64_t e = 8 * n; e; e >>= 1) {
        if (e & 1) result = fl_crc_mulmod(result, sq);
        sq = fl_crc_mulmod(sq, sq);
    }
    return result;
}

static inline uint32_t fl_crc_shift_block(uint32_t r) {
    return fl_crc_shift_table[0][r & 0xFF] ^ fl_crc_shift_table[1][(r >> 8) & 0xFF] ^
           fl_crc_shift_table[2][(r >> 16) & 0xFF] ^ fl_crc_shift_table[3][r >> 24];
}
static pthread_once_t fl_crc_once = PTHREAD_ONCE_INIT;

static void fl_crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
        fl_crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            fl_crc_table[t][i] = (fl_crc_table[t - 1][i] >> 8) ^ fl_crc_table[0][fl_crc_table[t - 1][i] & 0xFF];
    uint32_t k = fl_crc_xpow8n(FL_CRC_BLOCK);
    for (int t = 0; t < 4; t++)
        for (uint32_t i = 0; i < 256; i++) fl_crc_shift_table[t][i] = fl_crc_mulmod(k, i << (8 * t));
#if defined(__x86_64__)
    __builtin_cpu_init();
    fl_crc_hw = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t fl_crc_sw(uint32_t crc, const uint8_t *p, size_t len) {
    while (len >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        v ^= crc; /* little-endian hosts */
        crc = fl_crc_table[7][v & 0xFF] ^ fl_crc_table[6][(v >> 8) & 0xFF] ^
              fl_crc_table[5][(v >> 16) & 0xFF] ^ fl_crc_table[4][(v >> 24) & 0xFF] ^
              fl_crc_table[3][(v >> 32) & 0xFF] ^ fl_crc_table[2][(v >> 40) & 0xFF] ^
              fl_crc_table[1][(v >> 48) & 0xFF] ^ fl_crc_table[0][v >> 56];
        p += 8;
        len -= 8;
    }
    while (len--) crc = (crc >> 8) ^ fl_crc_table[0][(crc ^ *p++) & 0xFF];
    return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t fl_crc_hw_run(uint32_t crc, const uint8_t *p,
                                                                size_t len) {
    uint64_t c = crc;
    while (len >= 3 * FL_CRC_BLOCK) {
        uint64_t c1 = 0, c2 = 0;
        for (size_t i = 0; i < FL_CRC_BLOCK; i += 8) {
            uint64_t v0, v1, v2;
            memcpy(&v0, p + i, 8);
            memcpy(&v1, p + FL_CRC_BLOCK + i, 8);
            memcpy(&v2, p + 2 * FL_CRC_BLOCK + i, 8);
            c = __builtin_ia32_crc32di(c, v0);
            c1 = __builtin_ia32_crc32di(c1, v1);
            c2 = __builtin_ia32_crc32di(c2, v2);
        }
        c = fl_crc_shift_block(fl_crc_shift_block((uint32_t)c) ^ (uint32_t)c1) ^ (uint32_t)c2;
        p += 3 * FL_CRC_BLOCK;
        len -= 3 * FL_CRC_BLOCK;
    }
    while (len >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        len -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (len--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}
#endif

uint32_t fl_crc32c(uint32_t crc, const void *data, size_t len) {
    pthread_once(&fl_crc_once, fl_crc_init);
    crc = ~crc;
#if defined(__x86_64__)
    if (fl_crc_hw) return ~fl_crc_hw_run(crc, data, len);
#endif
    return ~fl_crc_sw(crc, data, len);
}
