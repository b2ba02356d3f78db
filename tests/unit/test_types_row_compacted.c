/*
 * test_types_row_compacted.c — the compacted key encoding of
 * types_row_compacted.h on rows built without libfluss, against
 * protocol.md's vectors (§5.4, §5.6): INT/BIGINT varints (negatives as
 * unsigned two's complement), STRING, SMALLINT LE, compact and big
 * DECIMAL, TIMESTAMP(6) millis + nanos, DATE, BYTES, BOOLEAN, FLOAT and
 * DOUBLE; NULL and nested key columns are refused naming the column.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_types_util.h"
#include "types_row_compacted.h"

static void expect_key(const fl_row_t *r, const fl_schema_t *s, const int32_t *cols, size_t n,
                       const uint8_t *want, size_t want_len) {
    fl_buf_t key;
    fl_buf_init(&key);
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_compacted_key_encode(r, s, cols, n, &key, &err), 0);
    assert_int_equal(key.len, want_len);
    assert_memory_equal(key.data, want, want_len);
    fl_buf_free(&key);
}

static void set_int(fl_row_t *r, size_t col, int64_t v) {
    r->cells[col].is_null = false;
    r->cells[col].i = v;
}

static void test_int_and_string_vectors(void **state) {
    (void)state;
    const char *types[] = {"INT NOT NULL", "STRING NOT NULL", "BIGINT"};
    fl_schema_t s;
    test_schema_of(&s, types, 3);
    fl_row_t r;
    fl_row_init(&r, 3);
    int32_t c0 = 0, c2 = 2, ab[] = {0, 1};
    set_int(&r, 0, 1);
    expect_key(&r, &s, &c0, 1, (const uint8_t *)"\x01", 1);
    set_int(&r, 0, -1);
    expect_key(&r, &s, &c0, 1, (const uint8_t *)"\xff\xff\xff\xff\x0f", 5);
    set_int(&r, 0, 1);
    fl_row_set_bytes(&r, 1, "hello", 5);
    expect_key(&r, &s, ab, 2, (const uint8_t *)"\x01\x05hello", 7);
    set_int(&r, 2, 300);
    expect_key(&r, &s, &c2, 1, (const uint8_t *)"\xac\x02", 2);
    set_int(&r, 2, -1);
    expect_key(&r, &s, &c2, 1, (const uint8_t *)"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10);
    fl_row_free(&r);
    fl_schema_free(&s);
}

static void test_other_types(void **state) {
    (void)state;
    const char *types[] = {"SMALLINT", "DECIMAL(10, 2)", "DECIMAL(20, 0)", "TIMESTAMP(6)",
                           "DATE", "BYTES", "BOOLEAN", "FLOAT", "DOUBLE", "TIMESTAMP(3)",
                           "TIME(3)", "BINARY(2)"};
    fl_schema_t s;
    test_schema_of(&s, types, 12);
    fl_row_t r;
    fl_row_init(&r, 12);
    int32_t c;
    set_int(&r, 0, -2);
    c = 0;
    expect_key(&r, &s, &c, 1, (const uint8_t *)"\xfe\xff", 2);
    r.cells[1].is_null = false;
    r.cells[1].dec = 150; /* 1.50: unscaled long like BIGINT */
    c = 1;
    expect_key(&r, &s, &c, 1, (const uint8_t *)"\x96\x01", 2);
    r.cells[2].is_null = false;
    r.cells[2].dec = 128; /* length + BigInteger.toByteArray */
    c = 2;
    expect_key(&r, &s, &c, 1, (const uint8_t *)"\x02\x00\x80", 3);
    r.cells[2].dec = -1;
    expect_key(&r, &s, &c, 1, (const uint8_t *)"\x01\xff", 2);
    r.cells[2].dec = -129;
    expect_key(&r, &s, &c, 1, (const uint8_t *)"\x02\xff\x7f", 3);
    set_int(&r, 3, 1);
    r.cells[3].nanos = 1000;
    c = 3;
    expect_key(&r, &s, &c, 1, (const uint8_t *)"\x01\xe8\x07", 3);
    set_int(&r, 4, 1);
    fl_row_set_bytes(&r, 5, "\xca\xfe", 2);
    set_int(&r, 6, 1);
    int32_t multi[] = {4, 5, 6};
    expect_key(&r, &s, multi, 3, (const uint8_t *)"\x01\x02\xca\xfe\x01", 5);
    r.cells[7].is_null = false;
    r.cells[7].d = 1.0; /* float 1.0f = 0x3f800000 LE */
    c = 7;
    expect_key(&r, &s, &c, 1, (const uint8_t *)"\x00\x00\x80\x3f", 4);
    r.cells[8].is_null = false;
    r.cells[8].d = -2.0; /* 0xc000000000000000 LE */
    c = 8;
    expect_key(&r, &s, &c, 1, (const uint8_t *)"\x00\x00\x00\x00\x00\x00\x00\xc0", 8);
    set_int(&r, 9, 5); /* TIMESTAMP(3): millis only */
    r.cells[9].nanos = 0;
    c = 9;
    expect_key(&r, &s, &c, 1, (const uint8_t *)"\x05", 1);
    set_int(&r, 10, 128);
    c = 10;
    expect_key(&r, &s, &c, 1, (const uint8_t *)"\x80\x01", 2);
    fl_row_set_bytes(&r, 11, "\x00\x01", 2);
    c = 11;
    expect_key(&r, &s, &c, 1, (const uint8_t *)"\x02\x00\x01", 3);
    fl_row_free(&r);
    fl_schema_free(&s);
}

static void test_refused(void **state) {
    (void)state;
    const char *types[] = {"INT", "ARRAY<INT>"};
    fl_schema_t s;
    test_schema_of(&s, types, 2);
    fl_row_t r;
    fl_row_init(&r, 2);
    fl_buf_t key;
    fl_buf_init(&key);
    fl_error_t err;
    int32_t c0 = 0, c1 = 1;
    assert_int_equal(fl_compacted_key_encode(&r, &s, &c0, 1, &key, &err), FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(err.msg, "c0 is NULL"));
    r.cells[1].is_null = false;
    assert_int_equal(fl_compacted_key_encode(&r, &s, &c1, 1, &key, &err), FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(err.msg, "c1 has an unsupported type"));
    /* clearing makes every cell NULL and empties the arena */
    fl_row_set_bytes(&r, 0, "xyz", 3);
    fl_row_clear(&r);
    assert_true(r.cells[0].is_null && r.cells[1].is_null);
    assert_int_equal(r.arena.len, 0);
    fl_buf_free(&key);
    fl_row_free(&r);
    fl_schema_free(&s);
}

static void test_uvarint(void **state) {
    (void)state;
    fl_buf_t b;
    fl_buf_init(&b);
    fl_buf_put_uvarint(&b, 0);
    fl_buf_put_uvarint(&b, 127);
    fl_buf_put_uvarint(&b, 128);
    fl_buf_put_uvarint(&b, UINT64_MAX);
    const uint8_t want[] = {0x00, 0x7f, 0x80, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff,
                            0xff, 0xff, 0xff, 0xff, 0x01};
    assert_int_equal(b.len, sizeof(want));
    assert_memory_equal(b.data, want, sizeof(want));
    fl_buf_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_int_and_string_vectors),
        cmocka_unit_test(test_other_types),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_uvarint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
