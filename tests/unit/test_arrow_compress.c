/*
 * test_arrow_compress.c — Arrow buffer-level body compression
 * (arrow_compress.c): LZ4_FRAME and ZSTD round trips including multi-block
 * LZ4 frames, the −1 raw convention when compression does not pay, the LZ4
 * frame header Fluss's Java reader expects, decompression of every buffer of
 * pyarrow's compressed fixtures to the bytes of the uncompressed fixture,
 * and rejections: caps, bad prefixes, lying lengths, cut and garbled frames.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_arrow_util.h"

static const fl_arrow_codec_t codecs[2] = {FL_ARROW_CODEC_LZ4_FRAME, FL_ARROW_CODEC_ZSTD};

static int64_t prefix_of(const fl_buf_t *b) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | b->data[i];
    return (int64_t)v;
}

static void fill_pattern(uint8_t *p, size_t n, uint32_t seed, int compressible) {
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = compressible ? (uint8_t)("fluss arrow "[i % 12] + (i / 4096) % 3) : (uint8_t)(x >> 16);
    }
}

static void round_trip(fl_arrow_codec_t codec, const uint8_t *p, size_t n, int64_t *prefix) {
    fl_buf_t c, d;
    fl_buf_init(&c);
    fl_buf_init(&d);
    fl_error_t err;
    assert_int_equal(fl_arrow_compress(codec, 3, p, n, &c, &err), 0);
    if (n == 0) {
        assert_int_equal(c.len, 0);
    } else {
        *prefix = prefix_of(&c);
        assert_int_equal(fl_arrow_decompress(codec, c.data, c.len, n, &d, &err), 0);
        assert_int_equal(d.len, n);
        assert_memory_equal(d.data, p, n);
        if (*prefix != -1) {
            /* one byte under the cap is refused */
            fl_buf_reset(&d);
            assert_int_equal(fl_arrow_decompress(codec, c.data, c.len, n - 1, &d, &err),
                             FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
            assert_int_equal(d.len, 0);
        }
    }
    fl_buf_free(&c);
    fl_buf_free(&d);
}

static void test_round_trips(void **state) {
    (void)state;
    static const size_t sizes[] = {0, 1, 7, 100, 4096, 65535, 65536, 65537, 300000};
    uint8_t *p = malloc(300000);
    for (int ci = 0; ci < 2; ci++) {
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            int64_t prefix = 0;
            fill_pattern(p, sizes[s], (uint32_t)s, 1);
            round_trip(codecs[ci], p, sizes[s], &prefix);
            if (sizes[s] >= 4096) assert_int_equal(prefix, (int64_t)sizes[s]); /* compressed */
            fill_pattern(p, sizes[s], (uint32_t)s, 0);
            round_trip(codecs[ci], p, sizes[s], &prefix);
            if (sizes[s] > 0) assert_int_equal(prefix, -1); /* random: stored raw */
        }
    }
    free(p);
}

/* 64 KB independent blocks, no block/content checksum, no content size:
 * FLG = 0b01100000, BD = 0b01000000 (max block 64 KB). */
static void test_lz4_frame_header(void **state) {
    (void)state;
    uint8_t p[200000];
    fill_pattern(p, sizeof(p), 7, 1);
    fl_buf_t c;
    fl_buf_init(&c);
    fl_error_t err;
    assert_int_equal(fl_arrow_compress(FL_ARROW_CODEC_LZ4_FRAME, 0, p, sizeof(p), &c, &err), 0);
    assert_int_equal(prefix_of(&c), (int64_t)sizeof(p));
    const uint8_t magic[4] = {0x04, 0x22, 0x4D, 0x18};
    assert_memory_equal(c.data + 8, magic, 4);
    assert_int_equal(c.data[12], 0x60);
    assert_int_equal(c.data[13], 0x40);
    fl_buf_free(&c);
}

static void test_empty_and_java_zero_prefix(void **state) {
    (void)state;
    fl_buf_t d;
    fl_buf_init(&d);
    fl_error_t err;
    const uint8_t zero[8] = {0};
    for (int ci = 0; ci < 2; ci++) {
        assert_int_equal(fl_arrow_decompress(codecs[ci], NULL, 0, 100, &d, &err), 0);
        assert_int_equal(fl_arrow_decompress(codecs[ci], zero, 8, 100, &d, &err), 0);
        assert_int_equal(d.len, 0);
    }
    uint8_t raw[12] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 'a', 'b', 'c', 'd'};
    assert_int_equal(fl_arrow_decompress(FL_ARROW_CODEC_ZSTD, raw, 12, 4, &d, &err), 0);
    assert_int_equal(d.len, 4);
    assert_memory_equal(d.data, "abcd", 4);
    fl_buf_reset(&d);
    assert_int_equal(fl_arrow_decompress(FL_ARROW_CODEC_ZSTD, raw, 12, 3, &d, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION); /* raw bytes over the cap */
    assert_int_equal(fl_arrow_compress(FL_ARROW_CODEC_NONE, 0, raw, 12, &d, &err),
                     FLUSS_ERR__INVALID_ARG);
    fl_buf_free(&d);
}

static void put_prefix(uint8_t *p, int64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

static void test_decompress_rejections(void **state) {
    (void)state;
    uint8_t p[100000];
    fill_pattern(p, sizeof(p), 3, 1);
    fl_buf_t c, d;
    fl_buf_init(&c);
    fl_buf_init(&d);
    fl_error_t err;
    for (int ci = 0; ci < 2; ci++) {
        fl_arrow_codec_t codec = codecs[ci];
        fl_buf_reset(&c);
        assert_int_equal(fl_arrow_compress(codec, 1, p, sizeof(p), &c, &err), 0);
        assert_true(c.len < sizeof(p));
        /* short prefix */
        assert_int_equal(fl_arrow_decompress(codec, c.data, 7, SIZE_MAX, &d, &err),
                         FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
        /* absurd and negative declared lengths */
        static const int64_t bad_lengths[] = {-2, INT64_MIN, (int64_t)1 << 31 | 1, INT64_MAX};
        for (size_t i = 0; i < 4; i++) {
            put_prefix(c.data, bad_lengths[i]);
            assert_int_equal(fl_arrow_decompress(codec, c.data, c.len, SIZE_MAX, &d, &err),
                             FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
            assert_non_null(strstr(err.msg, "declares"));
        }
        /* lying lengths: one more or one less than the frame holds */
        put_prefix(c.data, (int64_t)sizeof(p) + 1);
        assert_int_equal(fl_arrow_decompress(codec, c.data, c.len, SIZE_MAX, &d, &err),
                         FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
        put_prefix(c.data, (int64_t)sizeof(p) - 1);
        assert_int_equal(fl_arrow_decompress(codec, c.data, c.len, SIZE_MAX, &d, &err),
                         FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
        put_prefix(c.data, (int64_t)sizeof(p));
        /* every cut of the frame */
        for (size_t cut = 8; cut < c.len; cut += (cut < 64 ? 1 : 97)) {
            uint8_t *copy = malloc(cut);
            memcpy(copy, c.data, cut);
            fl_buf_reset(&d);
            assert_int_equal(fl_arrow_decompress(codec, copy, cut, SIZE_MAX, &d, &err),
                             FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
            free(copy);
        }
        /* garbage after the prefix */
        uint8_t garbage[64];
        put_prefix(garbage, 1000);
        memset(garbage + 8, 0x5A, 56);
        assert_int_equal(fl_arrow_decompress(codec, garbage, sizeof(garbage), SIZE_MAX, &d, &err),
                         FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
        /* the other codec's frame */
        fl_buf_reset(&d);
        assert_int_equal(fl_arrow_decompress(codecs[1 - ci], c.data, c.len, SIZE_MAX, &d, &err),
                         FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
        assert_int_equal(d.len, 0);
    }
    fl_buf_free(&c);
    fl_buf_free(&d);
}

/* Every buffer of pyarrow's LZ4/ZSTD fixtures decompresses to the bytes of
 * the same buffer of the uncompressed fixture. */
static void test_fixture_buffers(void **state) {
    (void)state;
    fl_buf_t raw, comp, a, b;
    fl_buf_init(&raw);
    fl_buf_init(&comp);
    fl_buf_init(&a);
    fl_buf_init(&b);
    fl_error_t err;
    arrow_fixture("all_types_none.arrow", &raw);
    fl_arrow_batch_view_t rv, cv;
    assert_int_equal(fl_arrow_message_parse(raw.data, raw.len, &rv, &err), 0);
    for (int c = 1; c < 3; c++) {
        char name[64];
        snprintf(name, sizeof(name), "all_types_%s.arrow", arrow_codec_names[c]);
        arrow_fixture(name, &comp);
        assert_int_equal(fl_arrow_message_parse(comp.data, comp.len, &cv, &err), 0);
        assert_int_equal(cv.buffer_count, rv.buffer_count);
        for (size_t i = 0; i < rv.buffer_count; i++) {
            fl_buf_reset(&a);
            fl_buf_reset(&b);
            assert_int_equal(fl_arrow_buffer_get(&rv, i, SIZE_MAX, &a, &err), 0);
            if (fl_arrow_buffer_get(&cv, i, SIZE_MAX, &b, &err)) fail_msg("%s %zu: %s", name, i, err.msg);
            assert_int_equal(a.len, b.len);
            if (a.len) assert_memory_equal(a.data, b.data, a.len);
        }
        assert_int_equal(fl_arrow_buffer_get(&cv, cv.buffer_count, SIZE_MAX, &b, &err),
                         FLUSS_ERR__INVALID_ARG);
    }
    /* the i8 values buffer is 5 bytes: a 4-byte cap refuses it */
    fl_buf_reset(&a);
    assert_int_equal(fl_arrow_buffer_get(&rv, 1, 4, &a, &err), FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_int_equal(fl_arrow_buffer_get(&rv, 1, 5, &a, &err), 0);
    const uint8_t i8[5] = {1, 0, 0x80, 0x7F, 0};
    assert_memory_equal(a.data, i8, 5);
    fl_buf_free(&raw);
    fl_buf_free(&comp);
    fl_buf_free(&a);
    fl_buf_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_lz4_frame_header),
        cmocka_unit_test(test_empty_and_java_zero_prefix),
        cmocka_unit_test(test_decompress_rejections),
        cmocka_unit_test(test_fixture_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
