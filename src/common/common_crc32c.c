/*
 * common_crc32c.c — CRC-32C (common_crc32c.h). Reflected polynomial
 * 0x82F63B78; the hardware path is picked once per process.
 */
#include "common_crc32c.h"

#include <pthread.h>
#include <string.h>

static uint32_t fl_crc_table[8][256];
static int fl_crc_hw;
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
