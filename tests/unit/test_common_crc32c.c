/*
 * test_common_crc32c.c — CRC-32C (common_crc32c.h): the standard check
 * vectors (RFC 3720 B.4 and the "123456789" check value), incremental
 * use equal to one shot, and the SSE4.2 and slicing-table paths agreeing
 * with each other and with a bit-at-a-time reference on large random
 * buffers at every alignment.
 *
 * To reach the two static paths the implementation file is compiled into
 * this test under another name for its one external function; the
 * library's fl_crc32c (whichever path the CPU picks) is tested as well.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common_crc32c.h"

#define fl_crc32c fl_crc32c_copy
#include "../../src/common/common_crc32c.c"
#undef fl_crc32c

/* Bit-at-a-time reference, reflected polynomial 0x82F63B78. */
static uint32_t ref_crc32c(uint32_t crc, const uint8_t *p, size_t len) {
    crc = ~crc;
    for (size_t i = 0; i < len; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint8_t rng_byte(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint8_t)(rng_state >> 24);
}

static void test_check_vectors(void **state) {
    (void)state;
    assert_int_equal(fl_crc32c(0, "123456789", 9), 0xE3069283u);
    uint8_t buf[32];
    memset(buf, 0, sizeof(buf));
    assert_int_equal(fl_crc32c(0, buf, 32), 0x8A9136AAu);
    memset(buf, 0xFF, sizeof(buf));
    assert_int_equal(fl_crc32c(0, buf, 32), 0x62A8AB43u);
    for (int i = 0; i < 32; i++) buf[i] = (uint8_t)i; /* RFC 3720 B.4 incrementing */
    assert_int_equal(fl_crc32c(0, buf, 32), 0x46DD794Eu);
    for (int i = 0; i < 32; i++) buf[i] = (uint8_t)(31 - i); /* decrementing */
    assert_int_equal(fl_crc32c(0, buf, 32), 0x113FDB5Cu);
    assert_int_equal(fl_crc32c(0, NULL, 0), 0u);
    assert_int_equal(fl_crc32c(0x12345678u, "", 0), 0x12345678u);
    assert_int_equal(ref_crc32c(0, (const uint8_t *)"123456789", 9), 0xE3069283u);
}

static void test_incremental_equals_one_shot(void **state) {
    (void)state;
    const char *s = "123456789";
    for (size_t cut = 0; cut <= 9; cut++) {
        uint32_t c = fl_crc32c(0, s, cut);
        assert_int_equal(fl_crc32c(c, s + cut, 9 - cut), 0xE3069283u);
    }
    size_t n = 5000;
    uint8_t *buf = malloc(n);
    for (size_t i = 0; i < n; i++) buf[i] = rng_byte();
    uint32_t whole = fl_crc32c(0, buf, n);
    assert_int_equal(whole, ref_crc32c(0, buf, n));
    for (size_t cut = 0; cut <= 64; cut++) { /* every small split, both ends */
        assert_int_equal(fl_crc32c(fl_crc32c(0, buf, cut), buf + cut, n - cut), whole);
        assert_int_equal(fl_crc32c(fl_crc32c(0, buf, n - cut), buf + n - cut, cut), whole);
    }
    /* many random pieces, including empty ones */
    for (int round = 0; round < 50; round++) {
        uint32_t c = 0;
        size_t pos = 0;
        while (pos < n) {
            size_t piece = rng_byte() % 40;
            if (piece > n - pos) piece = n - pos;
            c = fl_crc32c(c, buf + pos, piece);
            pos += piece;
        }
        assert_int_equal(c, whole);
    }
    free(buf);
}

static void test_paths_agree(void **state) {
    (void)state;
    size_t n = 1 << 20;
    uint8_t *buf = malloc(n + 16);
    for (size_t i = 0; i < n + 16; i++) buf[i] = rng_byte();
    (void)fl_crc32c_copy(0, "", 0); /* builds the tables, picks the path */
    for (size_t start = 0; start < 16; start++) {
        size_t len = n - start * 7; /* unaligned starts, odd lengths */
        const uint8_t *p = buf + start;
        uint32_t want = ref_crc32c(0, p, len);
        assert_int_equal(~fl_crc_sw(~0u, p, len), want);
        assert_int_equal(fl_crc32c(0, p, len), want);
        assert_int_equal(fl_crc32c_copy(0, p, len), want);
#if defined(__x86_64__)
        if (fl_crc_hw) assert_int_equal(~fl_crc_hw_run(~0u, p, len), want);
#endif
    }
    /* lengths around the three-stream rounds (3 x 8 KiB) */
    for (size_t len = 3 * 8192 - 9; len <= 3 * 8192 * 2 + 9; len += 8191) {
        uint32_t want = ref_crc32c(0x12345678u, buf + 3, len);
        assert_int_equal(fl_crc32c(0x12345678u, buf + 3, len), want);
#if defined(__x86_64__)
        if (fl_crc_hw) assert_int_equal(~fl_crc_hw_run(~0x12345678u, buf + 3, len), want);
#endif
    }
    /* short lengths around the 8-byte step at every alignment */
    for (size_t start = 0; start < 8; start++)
        for (size_t len = 0; len <= 40; len++) {
            uint32_t want = ref_crc32c(0x5A5A5A5Au, buf + start, len);
            assert_int_equal(~fl_crc_sw(~0x5A5A5A5Au, buf + start, len), want);
            assert_int_equal(fl_crc32c(0x5A5A5A5Au, buf + start, len), want);
#if defined(__x86_64__)
            if (fl_crc_hw)
                assert_int_equal(~fl_crc_hw_run(~0x5A5A5A5Au, buf + start, len), want);
#endif
        }
#if defined(__x86_64__)
    if (!fl_crc_hw) print_message("note: no SSE4.2 on this CPU; only the table path ran\n");
#endif
    free(buf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_vectors),
        cmocka_unit_test(test_incremental_equals_one_shot),
        cmocka_unit_test(test_paths_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
