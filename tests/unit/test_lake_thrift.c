/*
 * test_lake_thrift.c — the Thrift compact protocol (lake_thrift.h) and the
 * RLE/bit-packing hybrid (lake_rle.h): exact bytes for short and long
 * field headers, bools, negative numbers, nested structs (the last field
 * id comes back after a nested struct) and long list headers; round trips;
 * unknown fields of every type skipped; every truncation of a valid input
 * and random garbage give an error, never a crash; the RLE test vector
 * 0..7 at width 3 -> 88 C6 FA and round trips mixing runs and groups.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lake_rle.h"
#include "lake_thrift.h"

/* struct { 1: i32 -3, 2: bool true, 20: i64 -1234567890123 (long form),
 *          21: struct { 1: binary "ab", 16: bool false (long form) },
 *          22: list<i32> of 20 elements, 23: string "x" } */
static void write_sample(fl_buf_t *b) {
    fl_tc_writer_t w;
    fl_tc_writer_init(&w, b);
    fl_tc_struct_begin(&w);
    fl_tc_field_i32(&w, 1, -3);
    fl_tc_field_bool(&w, 2, true);
    fl_tc_field_i64(&w, 20, -1234567890123LL);
    fl_tc_field_struct_begin(&w, 21);
    fl_tc_field_binary(&w, 1, "ab", 2);
    fl_tc_field_bool(&w, 16, false);
    fl_tc_struct_end(&w);
    fl_tc_field_list_begin(&w, 22, FL_TC_I32, 20);
    for (int i = 0; i < 20; i++) fl_tc_i32(&w, i - 10);
    fl_tc_field_string(&w, 23, "x");
    fl_tc_struct_end(&w);
    assert_int_equal(w.depth, 0);
}

static void test_bytes(void **state) {
    (void)state;
    fl_buf_t b;
    fl_buf_init(&b);
    write_sample(&b);
    /* field 1 i32: 0x15, zigzag(-3) = 5 */
    assert_int_equal(b.data[0], 0x15);
    assert_int_equal(b.data[1], 0x05);
    /* field 2 bool true: delta 1, type 1 */
    assert_int_equal(b.data[2], 0x11);
    /* field 20 (delta 18): long form, type 6 then zigzag(20) = 40 */
    assert_int_equal(b.data[3], 0x06);
    assert_int_equal(b.data[4], 40);
    /* after the i64 varint: field 21 struct, delta 1 */
    size_t p = 5;
    while (b.data[p] & 0x80) p++;
    p++;
    assert_int_equal(b.data[p], 0x1c);
    /* nested: field 1 binary (delta from 0), len 2, "ab" */
    assert_int_equal(b.data[p + 1], 0x18);
    assert_int_equal(b.data[p + 2], 2);
    assert_memory_equal(b.data + p + 3, "ab", 2);
    /* field 16 bool false: delta 15 -> 0xF2 */
    assert_int_equal(b.data[p + 5], 0xf2);
    assert_int_equal(b.data[p + 6], 0x00); /* stop of the nested struct */
    /* field 22 after the nested struct: delta 1 from 21 */
    assert_int_equal(b.data[p + 7], 0x19);
    assert_int_equal(b.data[p + 8], 0xf5); /* long list header */
    assert_int_equal(b.data[p + 9], 20);
    assert_int_equal(b.data[b.len - 1], 0x00);
    fl_buf_free(&b);
}

static void read_sample(const uint8_t *p, size_t len) {
    fl_tc_reader_t r;
    fl_error_t err;
    fl_tc_reader_init(&r, p, len);
    int16_t id;
    uint8_t t;
    assert_int_equal(fl_tc_read_struct_begin(&r, &err), 0);
    assert_int_equal(fl_tc_read_field(&r, &id, &t, &err), 0);
    assert_int_equal(id, 1);
    int32_t i32;
    assert_int_equal(fl_tc_read_i32(&r, &i32, &err), 0);
    assert_int_equal(i32, -3);
    assert_int_equal(fl_tc_read_field(&r, &id, &t, &err), 0);
    bool bv;
    assert_int_equal(id, 2);
    assert_int_equal(fl_tc_field_bool_value(t, &bv, &err), 0);
    assert_true(bv);
    assert_int_equal(fl_tc_read_field(&r, &id, &t, &err), 0);
    assert_int_equal(id, 20);
    int64_t i64;
    assert_int_equal(fl_tc_read_i64(&r, &i64, &err), 0);
    assert_true(i64 == -1234567890123LL);
    assert_int_equal(fl_tc_read_field(&r, &id, &t, &err), 0);
    assert_int_equal(id, 21);
    assert_int_equal(t, FL_TC_STRUCT);
    assert_int_equal(fl_tc_read_struct_begin(&r, &err), 0);
    const uint8_t *bp;
    uint32_t bn;
    assert_int_equal(fl_tc_read_field(&r, &id, &t, &err), 0);
    assert_int_equal(id, 1);
    assert_int_equal(fl_tc_read_binary(&r, &bp, &bn, &err), 0);
    assert_int_equal(bn, 2);
    assert_int_equal(fl_tc_read_field(&r, &id, &t, &err), 0);
    assert_int_equal(id, 16);
    assert_int_equal(fl_tc_field_bool_value(t, &bv, &err), 0);
    assert_false(bv);
    assert_int_equal(fl_tc_read_field(&r, &id, &t, &err), 0);
    assert_int_equal(t, FL_TC_STOP);
    fl_tc_read_struct_end(&r);
    assert_int_equal(fl_tc_read_field(&r, &id, &t, &err), 0);
    assert_int_equal(id, 22); /* the outer last id came back */
    uint8_t elem;
    uint32_t n;
    assert_int_equal(fl_tc_read_list_header(&r, &elem, &n, &err), 0);
    assert_int_equal(elem, FL_TC_I32);
    assert_int_equal(n, 20);
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(fl_tc_read_i32(&r, &i32, &err), 0);
        assert_int_equal(i32, (int32_t)i - 10);
    }
    assert_int_equal(fl_tc_read_field(&r, &id, &t, &err), 0);
    assert_int_equal(id, 23);
    assert_int_equal(fl_tc_skip(&r, t, true, &err), 0);
    assert_int_equal(fl_tc_read_field(&r, &id, &t, &err), 0);
    assert_int_equal(t, FL_TC_STOP);
    fl_tc_read_struct_end(&r);
    assert_int_equal(r.pos, len);
}

static void test_round_trip(void **state) {
    (void)state;
    fl_buf_t b;
    fl_buf_init(&b);
    write_sample(&b);
    read_sample(b.data, b.len);
    /* the whole struct skipped as an unknown field value */
    fl_tc_reader_t r;
    fl_error_t err;
    fl_tc_reader_init(&r, b.data, b.len);
    assert_int_equal(fl_tc_skip(&r, FL_TC_STRUCT, true, &err), 0);
    assert_int_equal(r.pos, b.len);
    fl_buf_free(&b);
}

static void test_skip_every_type(void **state) {
    (void)state;
    /* byte, i16, double, a map<i32,binary>, a set<bool>, then field 9 */
    const uint8_t in[] = {0x13, 0x7f,                               /* 1 byte */
                          0x14, 0x03,                               /* 2 i16 -2 */
                          0x17, 1, 2, 3, 4, 5, 6, 7, 8,             /* 3 double */
                          0x1b, 0x02, 0x58, 0x02, 0x01, 'a', 0x04, 0x00, /* 4 map */
                          0x1a, 0x21, 0x01, 0x02,                   /* 5 set<bool> */
                          0x1c, 0x00,                               /* 6 empty struct */
                          0x35, 0x0e,                               /* 9 i32 7 */
                          0x00};
    fl_tc_reader_t r;
    fl_error_t err;
    fl_tc_reader_init(&r, in, sizeof(in));
    assert_int_equal(fl_tc_read_struct_begin(&r, &err), 0);
    for (;;) {
        int16_t id;
        uint8_t t;
        assert_int_equal(fl_tc_read_field(&r, &id, &t, &err), 0);
        if (t == FL_TC_STOP) break;
        if (id == 9) {
            int32_t v;
            assert_int_equal(fl_tc_read_i32(&r, &v, &err), 0);
            assert_int_equal(v, 7);
            continue;
        }
        assert_int_equal(fl_tc_skip(&r, t, true, &err), 0);
    }
    assert_int_equal(r.pos, sizeof(in));
}

static void test_truncated_and_garbage(void **state) {
    (void)state;
    fl_buf_t b;
    fl_buf_init(&b);
    write_sample(&b);
    fl_error_t err;
    for (size_t n = 0; n < b.len; n++) {
        uint8_t *cut = malloc(n ? n : 1);
        memcpy(cut, b.data, n);
        fl_tc_reader_t r;
        fl_tc_reader_init(&r, cut, n);
        assert_int_equal(fl_tc_skip(&r, FL_TC_STRUCT, true, &err), FLUSS_ERR__CORRUPT);
        free(cut);
    }
    /* nesting past the limit */
    uint8_t deep[200];
    memset(deep, 0x1c, sizeof(deep));
    fl_tc_reader_t r;
    fl_tc_reader_init(&r, deep, sizeof(deep));
    assert_int_equal(fl_tc_skip(&r, FL_TC_STRUCT, true, &err), FLUSS_ERR__CORRUPT);
    /* lists of lists */
    memset(deep, 0x19, sizeof(deep));
    fl_tc_reader_init(&r, deep, sizeof(deep));
    assert_int_equal(fl_tc_skip(&r, FL_TC_LIST, false, &err), FLUSS_ERR__CORRUPT);
    /* over-long varint */
    uint8_t vi[12];
    memset(vi, 0xff, sizeof(vi));
    uint64_t v;
    fl_tc_reader_init(&r, vi, sizeof(vi));
    assert_int_equal(fl_tc_read_uvarint(&r, &v, &err), FLUSS_ERR__CORRUPT);
    /* a list claiming more elements than bytes */
    const uint8_t big[] = {0xf5, 0xff, 0xff, 0x03};
    uint8_t elem;
    uint32_t n;
    fl_tc_reader_init(&r, big, sizeof(big));
    assert_int_equal(fl_tc_read_list_header(&r, &elem, &n, &err), FLUSS_ERR__CORRUPT);
    /* random bytes: any outcome but a crash */
    srand(7);
    uint8_t junk[64];
    for (int k = 0; k < 20000; k++) {
        for (size_t i = 0; i < sizeof(junk); i++) junk[i] = (uint8_t)rand();
        fl_tc_reader_init(&r, junk, sizeof(junk));
        (void)fl_tc_skip(&r, FL_TC_STRUCT, true, &err);
        assert_true(r.pos <= sizeof(junk));
    }
    fl_buf_free(&b);
}

static void test_rle_vector(void **state) {
    (void)state;
    uint32_t v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    fl_buf_t b;
    fl_buf_init(&b);
    fl_rle_encode(&b, v, 8, 3);
    const uint8_t want[] = {0x03, 0x88, 0xc6, 0xfa}; /* header: 1 group, bit-packed */
    assert_int_equal(b.len, sizeof(want));
    assert_memory_equal(b.data, want, sizeof(want));
    uint32_t back[8];
    fl_error_t err;
    size_t used;
    assert_int_equal(fl_rle_decode(b.data, b.len, 3, back, 8, &used, &err), 0);
    assert_int_equal(used, b.len);
    assert_memory_equal(back, v, sizeof(v));
    fl_buf_free(&b);
    assert_int_equal(fl_rle_bit_width(0), 0);
    assert_int_equal(fl_rle_bit_width(1), 1);
    assert_int_equal(fl_rle_bit_width(7), 3);
    assert_int_equal(fl_rle_bit_width(8), 4);
    assert_int_equal(fl_rle_bit_width(UINT32_MAX), 32);
}

static void test_rle_round_trips(void **state) {
    (void)state;
    enum { N = 5000 };
    uint32_t *v = malloc(N * sizeof(uint32_t)), *back = malloc(N * sizeof(uint32_t));
    fl_error_t err;
    srand(3);
    for (int width = 1; width <= 32; width++) {
        uint64_t lim = width == 32 ? UINT32_MAX : ((uint64_t)1 << width) - 1;
        for (size_t n = 0; n < 40; n += 1) { /* short inputs: partial groups */
            for (size_t i = 0; i < n; i++) v[i] = (uint32_t)((uint64_t)rand() % (lim + 1));
            fl_buf_t b;
            fl_buf_init(&b);
            fl_rle_encode(&b, v, n, width);
            assert_int_equal(fl_rle_decode(b.data, b.len, width, back, n, NULL, &err), 0);
            if (n) assert_memory_equal(back, v, n * sizeof(uint32_t));
            fl_buf_free(&b);
        }
        /* runs of random lengths mixed with noise */
        size_t i = 0;
        while (i < N) {
            size_t len = (size_t)(rand() % 40) + 1;
            uint32_t x = (uint32_t)((uint64_t)rand() % (lim + 1));
            bool noise = rand() % 2;
            for (size_t k = 0; k < len && i < N; k++, i++)
                v[i] = noise ? (uint32_t)((uint64_t)rand() % (lim + 1)) : x;
        }
        fl_buf_t b;
        fl_buf_init(&b);
        fl_rle_encode(&b, v, N, width);
        assert_int_equal(fl_rle_decode(b.data, b.len, width, back, N, NULL, &err), 0);
        assert_memory_equal(back, v, N * sizeof(uint32_t));
        /* every truncation fails cleanly or decodes a prefix-consistent value set */
        for (size_t cut = 0; cut < b.len; cut += 1 + b.len / 50)
            (void)fl_rle_decode(b.data, cut, width, back, N, NULL, &err);
        assert_int_equal(fl_rle_decode(b.data, 0, width, back, N, NULL, &err), FLUSS_ERR__CORRUPT);
        fl_buf_free(&b);
    }
    /* a long run is one RLE run: header + one byte */
    for (size_t k = 0; k < 1000; k++) v[k] = 1;
    fl_buf_t b;
    fl_buf_init(&b);
    fl_rle_encode(&b, v, 1000, 1);
    assert_int_equal(b.len, 3); /* varint(2000) = 2 bytes, value 1 byte */
    fl_buf_free(&b);
    /* values over the width are corrupt; widths over 32 too */
    const uint8_t bad[] = {0x02, 0x05};
    assert_int_equal(fl_rle_decode(bad, 2, 2, back, 1, NULL, &err), FLUSS_ERR__CORRUPT);
    assert_int_equal(fl_rle_decode(bad, 2, 33, back, 1, NULL, &err), FLUSS_ERR__CORRUPT);
    free(v);
    free(back);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_skip_every_type),
        cmocka_unit_test(test_truncated_and_garbage),
        cmocka_unit_test(test_rle_vector),
        cmocka_unit_test(test_rle_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
