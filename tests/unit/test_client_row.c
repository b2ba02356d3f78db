/*
 * test_client_row.c — libfluss rows without a server: the key of a row
 * set through fluss_row_* and its bucket against protocol.md's vectors
 * (§5.6, §6.1; the encoding itself is test_types_row_compacted.c), and
 * fluss_row_set_text per column type, with its errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "test_client_util.h"
#include "types_row_compacted.h"

static void encode(fluss_row_t *r, const int32_t *cols, size_t n, fl_buf_t *out) {
    fl_error_t err;
    fl_err_clear(&err);
    out->len = 0;
    assert_int_equal(fl_compacted_key_encode(&r->row, &r->t->desc.schema, cols, n, out, &err), 0);
}

static void test_int_key_vector(void **state) {
    (void)state;
    fluss_table_t *t = test_table("id INT NOT NULL, v STRING", "id", 8, NULL);
    assert_non_null(t);
    fluss_row_t *r = fluss_row_new(t);
    assert_int_equal(fluss_row_set_int64(r, 0, 1, NULL), 0);
    fl_buf_t key;
    fl_buf_init(&key);
    int32_t col = 0;
    encode(r, &col, 1, &key);
    assert_int_equal(key.len, 1);
    assert_int_equal(key.data[0], 0x01);
    int32_t bucket = -1;
    fl_error_t err;
    assert_int_equal(fl_row_bucket(r, &key, &bucket, &err), 0);
    assert_int_equal(bucket, 4);
    /* negative INT: unsigned LEB128 of the two's complement, 5 bytes */
    fluss_row_set_int64(r, 0, -1, NULL);
    encode(r, &col, 1, &key);
    uint8_t minus1[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
    assert_int_equal(key.len, 5);
    assert_memory_equal(key.data, minus1, 5);
    fl_buf_free(&key);
    fluss_row_destroy(r);
    fluss_table_close(t);
}

static void test_int_string_key_vector(void **state) {
    (void)state;
    fluss_table_t *t = test_table("a INT NOT NULL, b STRING NOT NULL, c BIGINT", "a,b", 16, NULL);
    assert_non_null(t);
    fluss_row_t *r = fluss_row_new(t);
    fluss_row_set_int64(r, 0, 1, NULL);
    fluss_row_set_string(r, 1, "hello", NULL);
    fl_buf_t key;
    fl_buf_init(&key);
    encode(r, t->bucket_key, t->bucket_key_count, &key);
    uint8_t want[] = {0x01, 0x05, 0x68, 0x65, 0x6C, 0x6C, 0x6F};
    assert_int_equal(key.len, sizeof(want));
    assert_memory_equal(key.data, want, sizeof(want));
    /* BIGINT 300 → ac 02 */
    fluss_row_set_int64(r, 2, 300, NULL);
    int32_t c = 2;
    encode(r, &c, 1, &key);
    assert_int_equal(key.len, 2);
    assert_int_equal(key.data[0], 0xac);
    assert_int_equal(key.data[1], 0x02);
    /* a NULL key column is an error */
    fluss_row_clear(r);
    fl_error_t err;
    int32_t bucket;
    assert_int_equal(fl_row_bucket(r, &key, &bucket, &err), FLUSS_ERR__INVALID_ARG);
    fl_buf_free(&key);
    fluss_row_destroy(r);
    fluss_table_close(t);
}

static void test_other_key_encodings(void **state) {
    (void)state;
    fluss_table_t *t = test_table(
        "s SMALLINT, d DECIMAL(10, 2), big DECIMAL(20, 0), ts TIMESTAMP(6), dt DATE, b BYTES, "
        "f BOOLEAN",
        NULL, 1, NULL);
    assert_non_null(t);
    fluss_row_t *r = fluss_row_new(t);
    fl_buf_t key;
    fl_buf_init(&key);
    int32_t c;
    assert_int_equal(fluss_row_set_text(r, 0, "-2", NULL), 0);
    c = 0;
    encode(r, &c, 1, &key);
    assert_int_equal(key.len, 2);
    assert_int_equal(key.data[0], 0xfe);
    assert_int_equal(key.data[1], 0xff);
    /* compact decimal: unscaled long like BIGINT (1.50 → 150 → 96 01) */
    assert_int_equal(fluss_row_set_text(r, 1, "1.5", NULL), 0);
    c = 1;
    encode(r, &c, 1, &key);
    assert_int_equal(key.len, 2);
    assert_int_equal(key.data[0], 0x96);
    assert_int_equal(key.data[1], 0x01);
    /* non-compact: length + BigInteger.toByteArray */
    uint8_t v128[] = {0x02, 0x00, 0x80};
    fluss_row_set_text(r, 2, "128", NULL);
    c = 2;
    encode(r, &c, 1, &key);
    assert_int_equal(key.len, 3);
    assert_memory_equal(key.data, v128, 3);
    uint8_t vm1[] = {0x01, 0xff};
    fluss_row_set_text(r, 2, "-1", NULL);
    encode(r, &c, 1, &key);
    assert_int_equal(key.len, 2);
    assert_memory_equal(key.data, vm1, 2);
    /* TIMESTAMP(6): millis then nanos of milli */
    assert_int_equal(fluss_row_set_timestamp(r, 3, 1, 1000, NULL), 0);
    c = 3;
    encode(r, &c, 1, &key);
    uint8_t ts[] = {0x01, 0xe8, 0x07};
    assert_int_equal(key.len, 3);
    assert_memory_equal(key.data, ts, 3);
    /* DATE as INT; BYTES as length + bytes; BOOLEAN one byte */
    fluss_row_set_text(r, 4, "1970-01-02", NULL);
    fluss_row_set_text(r, 5, "0xCAFE", NULL);
    fluss_row_set_text(r, 6, "true", NULL);
    int32_t cols[] = {4, 5, 6};
    encode(r, cols, 3, &key);
    uint8_t multi[] = {0x01, 0x02, 0xca, 0xfe, 0x01};
    assert_int_equal(key.len, sizeof(multi));
    assert_memory_equal(key.data, multi, sizeof(multi));
    fl_buf_free(&key);
    fluss_row_destroy(r);
    fluss_table_close(t);
}

static void test_text_parsing(void **state) {
    (void)state;
    fluss_table_t *t = test_table(
        "b BOOLEAN, i8 TINYINT, i32 INT NOT NULL, f FLOAT, d DECIMAL(5, 2), s STRING, "
        "fb BINARY(2), dt DATE, tm TIME(3), ts TIMESTAMP(3), ltz TIMESTAMP_LTZ(6), "
        "arr ARRAY<INT>",
        NULL, 1, NULL);
    assert_non_null(t);
    fluss_row_t *r = fluss_row_new(t);
    fluss_error_t e;
    assert_int_equal(fluss_row_set_text(r, 0, "TRUE", &e), 0);
    assert_int_equal(r->row.cells[0].i, 1);
    assert_int_equal(fluss_row_set_text(r, 0, "maybe", &e), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fluss_row_set_text(r, 1, "-128", &e), 0);
    assert_int_equal(fluss_row_set_text(r, 1, "128", &e), FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(e.message, "out of range"));
    assert_int_equal(fluss_row_set_text(r, 2, NULL, &e), FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(e.message, "NOT NULL"));
    assert_int_equal(fluss_row_set_text(r, 2, "12x", &e), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fluss_row_set_text(r, 3, "2.5e1", &e), 0);
    assert_true(r->row.cells[3].d == 25.0);
    /* decimals: scale padding, half-up rounding, precision overflow */
    assert_int_equal(fluss_row_set_text(r, 4, "1.5", &e), 0);
    assert_true(r->row.cells[4].dec == 150);
    assert_int_equal(fluss_row_set_text(r, 4, "-1.005", &e), 0);
    assert_true(r->row.cells[4].dec == -101);
    assert_int_equal(fluss_row_set_text(r, 4, "999.99", &e), 0);
    assert_int_equal(fluss_row_set_text(r, 4, "1000", &e), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fluss_row_set_text(r, 4, "1.2.3", &e), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fluss_row_set_text(r, 5, "", &e), 0);
    assert_false(r->row.cells[5].is_null);
    assert_int_equal(r->row.cells[5].len, 0);
    assert_int_equal(fluss_row_set_text(r, 6, "abcd", &e), 0);
    assert_int_equal(fluss_row_set_text(r, 6, "ab", &e), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fluss_row_set_text(r, 6, "zz00", &e), FLUSS_ERR__INVALID_ARG);
    /* dates: leap years, range */
    assert_int_equal(fluss_row_set_text(r, 7, "2000-02-29", &e), 0);
    assert_int_equal(r->row.cells[7].i, 11016);
    assert_int_equal(fluss_row_set_text(r, 7, "1900-02-29", &e), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fluss_row_set_text(r, 7, "1969-12-31", &e), 0);
    assert_int_equal(r->row.cells[7].i, -1);
    assert_int_equal(fluss_row_set_text(r, 8, "23:59:59.999", &e), 0);
    assert_int_equal(r->row.cells[8].i, 86399999);
    assert_int_equal(fluss_row_set_text(r, 8, "24:00", &e), FLUSS_ERR__INVALID_ARG);
    /* timestamps: text, epoch ms, truncation to the precision, LTZ offsets */
    assert_int_equal(fluss_row_set_text(r, 9, "1970-01-01 00:00:01.2345", &e), 0);
    assert_int_equal(r->row.cells[9].i, 1234);
    assert_int_equal(r->row.cells[9].nanos, 0);
    assert_int_equal(fluss_row_set_text(r, 9, "-1", &e), 0);
    assert_int_equal(r->row.cells[9].i, -1);
    assert_int_equal(fluss_row_set_text(r, 9, "1970-01-01T00:00:00+01:00", &e), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fluss_row_set_text(r, 10, "1970-01-01T01:00:00.0000019+01:00", &e), 0);
    assert_int_equal(r->row.cells[10].i, 0);
    assert_int_equal(r->row.cells[10].nanos, 1000);
    assert_int_equal(fluss_row_set_text(r, 10, "1970-01-01T00:00:00Z", &e), 0);
    /* nested values from their JSON text (test_client_nested.c has the rest); NULL too */
    assert_int_equal(fluss_row_set_text(r, 11, "[1]", &e), 0);
    assert_int_equal(fluss_row_set_text(r, 11, "[x]", &e), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fluss_row_set_text(r, 11, NULL, &e), 0);
    /* typed setters check the column type and index */
    assert_int_equal(fluss_row_set_bool(r, 1, true, &e), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fluss_row_set_string(r, 99, "x", &e), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fluss_row_set_double(r, 3, 0.5, &e), 0);
    assert_int_equal(fluss_row_set_time(r, 8, 86400000, &e), FLUSS_ERR__INVALID_ARG);
    fluss_row_destroy(r);
    fluss_table_close(t);
}

static void test_dates_round_trip(void **state) {
    (void)state;
    for (int64_t d = -800000; d <= 800000; d += 997) {
        int64_t y;
        unsigned m, dd;
        fl_civil_from_days(d, &y, &m, &dd);
        assert_int_equal(fl_days_from_civil(y, m, dd), d);
    }
    assert_int_equal(fl_days_from_civil(1970, 1, 1), 0);
    assert_int_equal(fl_days_from_civil(1, 1, 1), -719162);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_int_key_vector),
        cmocka_unit_test(test_int_string_key_vector),
        cmocka_unit_test(test_other_key_encodings),
        cmocka_unit_test(test_text_parsing),
        cmocka_unit_test(test_dates_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
