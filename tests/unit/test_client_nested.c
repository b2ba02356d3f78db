/*
 * test_client_nested.c — ARRAY, MAP and ROW values of libfluss rows
 * (client_nested_text.c over types_row_nested.c): text → Fluss's binary
 * form → the same text, in both row formats, for elements of every kind
 * (inline and out-of-line strings, compact and wide decimals and
 * timestamps, rows in arrays, maps of rows, NULLs at each level); the
 * exact bytes of small BinaryArrays and a BinaryMap against Fluss's
 * layout (protocol.md §5.8); parse errors; corrupt bytes refused by
 * fl_nested_check; and the Arrow column the append writer's builder
 * makes from such cells printing the same text as the row does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "record_builder.h"
#include "test_client_util.h"
#include "types_row_nested.h"

#define SCHEMA                                                                                  \
    "id INT, a ARRAY<INT>, s ARRAY<STRING>, m MAP<STRING, BIGINT>, r ROW<x INT, s STRING, d DATE>, " \
    "aa ARRAY<ARRAY<SMALLINT>>, ar ARRAY<ROW<q BIGINT, w STRING>>, "                         \
    "dec ARRAY<DECIMAL(20, 3)>, ts ARRAY<TIMESTAMP(6)>, mr MAP<INT, ROW<b BOOLEAN, f DOUBLE>>, " \
    "nn ARRAY<INT NOT NULL>, by ARRAY<BYTES>, small ARRAY<DECIMAL(5, 1)>"

static fluss_table_t *table(const char *kv_format) {
    char prop[64];
    snprintf(prop, sizeof(prop), "table.kv.format=%s", kv_format);
    const char *props[] = {prop, NULL};
    fluss_table_t *t = test_table(SCHEMA, NULL, 1, props);
    assert_non_null(t);
    return t;
}

/* Sets column col from text and checks it prints as want (text itself
 * when want is NULL). */
static void round_trip(fluss_table_t *t, fluss_row_t *r, size_t col, const char *text,
                       const char *want) {
    fluss_error_t e;
    if (fluss_row_set_text(r, col, text, &e)) fail_msg("%s: %s", text, e.message);
    char out[1024];
    fluss_row_value_text(r, col, 0, out, sizeof(out));
    if (strcmp(out, want ? want : text) != 0) fail_msg("%s -> %s", text, out);
    (void)t;
}

static void check_format(const char *format) {
    fluss_table_t *t = table(format);
    fluss_row_t *r = fluss_row_new(t);
    round_trip(t, r, 1, "[1, null, -3]", NULL);
    round_trip(t, r, 1, "[]", NULL);
    round_trip(t, r, 1, " [ 7 ,8 ] ", "[7, 8]");
    round_trip(t, r, 2, "[\"a\", \"1234567\", \"12345678\", null, \"q\\\"uote\\\\ \\u00e9\"]",
               "[\"a\", \"1234567\", \"12345678\", null, \"q\\\"uote\\\\ \xc3\xa9\"]");
    round_trip(t, r, 3, "{\"k\": 1, \"a longer key\": null, \"\": -9223372036854775808}", NULL);
    round_trip(t, r, 4, "{\"x\": 5, \"s\": \"hi there, a long one\", \"d\": \"2024-01-31\"}", NULL);
    round_trip(t, r, 4, "{\"d\": \"1970-01-01\"}", "{\"x\": null, \"s\": null, \"d\": \"1970-01-01\"}");
    round_trip(t, r, 4, "[1, \"p\", null]", "{\"x\": 1, \"s\": \"p\", \"d\": null}");
    round_trip(t, r, 5, "[[1, 2], [], null, [-32768]]", NULL);
    round_trip(t, r, 6, "[{\"q\": 7, \"w\": \"seven\"}, null, {\"q\": -8, \"w\": \"a longer string\"}]",
               NULL);
    round_trip(t, r, 7, "[12345678901234567.125, null, -1.5, 0]",
               "[12345678901234567.125, null, -1.500, 0.000]");
    round_trip(t, r, 8, "[\"2024-01-31T10:00:01.123456\", null, \"1969-12-31 23:59:59.999999\"]",
               "[\"2024-01-31T10:00:01.123456\", null, \"1969-12-31T23:59:59.999999\"]");
    round_trip(t, r, 9, "{\"1\": {\"b\": true, \"f\": 1.5}, \"-2\": null, \"3\": {\"b\": null, \"f\": NaN}}",
               "{\"1\": {\"b\": true, \"f\": 1.5}, \"-2\": null, \"3\": {\"b\": null, \"f\": \"NaN\"}}");
    round_trip(t, r, 11, "[\"00ff\", \"0x0102030405060708\", null]",
               "[\"00ff\", \"0102030405060708\", null]");
    round_trip(t, r, 12, "[1.25, -99.9]", "[1.3, -99.9]");
    /* the JSON form (FLUSS_TEXT_JSON) is the same; NULL is null */
    char out[64];
    fluss_row_set_null(r, 1, NULL);
    fluss_row_value_text(r, 1, FLUSS_TEXT_JSON, out, sizeof(out));
    assert_string_equal(out, "null");
    fluss_row_destroy(r);
    fluss_table_close(t);
}

static void test_round_trips(void **state) {
    (void)state;
    check_format("COMPACTED");
    check_format("INDEXED");
}

static void test_parse_errors(void **state) {
    (void)state;
    fluss_table_t *t = table("COMPACTED");
    fluss_row_t *r = fluss_row_new(t);
    static const struct {
        size_t col;
        const char *text, *why;
    } bad[] = {
        {1, "[1, 2", "',' or ']' expected"},
        {1, "1, 2]", "'[' expected"},
        {1, "[1, x]", "'x' is not an integer"},
        {1, "[1, 99999999999]", "out of range"},
        {1, "[1] 2", "text after the value"},
        {2, "[\"abc]", "an unclosed string"},
        {2, "[\"\\q\"]", "a bad escape"},
        {3, "{\"k\" 1}", "':' expected"},
        {4, "{\"nope\": 1}", "an unknown field"},
        {4, "[1, \"a\", \"2024-01-01\", 4]", "more values than fields"},
        {10, "[1, null]", "null for a NOT NULL element"},
        {12, "[123456.7]", "does not fit"},
    };
    fluss_error_t e;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(fluss_row_set_text(r, bad[i].col, bad[i].text, &e), FLUSS_ERR__INVALID_ARG);
        if (!strstr(e.message, bad[i].why)) fail_msg("%s: %s", bad[i].text, e.message);
    }
    fluss_row_destroy(r);
    fluss_table_close(t);
}

/* The cell bytes of column col after setting text. */
static const uint8_t *bytes_of(fluss_row_t *r, size_t col, const char *text, size_t *len) {
    assert_int_equal(fluss_row_set_text(r, col, text, NULL), 0);
    return fluss_row_get_bytes(r, col, len);
}

static void test_exact_bytes(void **state) {
    (void)state;
    fluss_table_t *t = table("COMPACTED");
    fluss_row_t *r = fluss_row_new(t);
    size_t n;
    /* ARRAY<INT> [1, null, 3]: count, null bits (bit 1), three int slots, padding to 24 */
    const uint8_t a[] = {3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0};
    const uint8_t *p = bytes_of(r, 1, "[1, null, 3]", &n);
    assert_int_equal(n, sizeof(a));
    assert_memory_equal(p, a, sizeof(a));
    /* ARRAY<STRING> ["a", "longer than 7"]: "a" inline (0x81 in byte 7), the
     * other at offset 24 with length 13, padded to 16 */
    const uint8_t s[] = {2, 0, 0, 0, 0, 0, 0, 0, 'a', 0, 0, 0, 0, 0, 0, 0x81, 13, 0, 0, 0, 24, 0, 0, 0,
                         'l', 'o', 'n', 'g', 'e', 'r', ' ', 't', 'h', 'a', 'n', ' ', '7', 0, 0, 0};
    p = bytes_of(r, 2, "[\"a\", \"longer than 7\"]", &n);
    assert_int_equal(n, sizeof(s));
    assert_memory_equal(p, s, sizeof(s));
    /* MAP<STRING, BIGINT> {"k": 5}: the key array's size, keys, values */
    const uint8_t m[] = {16, 0, 0, 0,
                         1, 0, 0, 0, 0, 0, 0, 0, 'k', 0, 0, 0, 0, 0, 0, 0x81,
                         1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0};
    p = bytes_of(r, 3, "{\"k\": 5}", &n);
    assert_int_equal(n, sizeof(m));
    assert_memory_equal(p, m, sizeof(m));
    /* ARRAY<DECIMAL(20, 3)> [-1.5]: 16 bytes reserved, BigInteger bytes of -1500 (fa 24) */
    const uint8_t d[] = {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 16, 0, 0, 0,
                         0xfa, 0x24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    p = bytes_of(r, 7, "[-1.5]", &n);
    assert_int_equal(n, sizeof(d));
    assert_memory_equal(p, d, sizeof(d));
    fluss_row_destroy(r);
    fluss_table_close(t);
}

static void test_corrupt(void **state) {
    (void)state;
    fl_datatype_t *it = fl_datatype_new(FL_TYPE_INTEGER);
    fl_datatype_t *st = fl_datatype_new(FL_TYPE_STRING);
    fl_datatype_t *arr = fl_datatype_new(FL_TYPE_ARRAY);
    arr->element = st;
    fl_error_t err;
    fl_err_clear(&err);
    /* fewer bytes than the count needs */
    const uint8_t a[] = {3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
    assert_int_not_equal(fl_nested_check(arr, FL_ROW_COMPACTED, a, sizeof(a), 0, &err), 0);
    assert_int_equal(err.code, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    /* a negative count */
    const uint8_t neg[] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
    assert_int_not_equal(fl_nested_check(arr, FL_ROW_COMPACTED, neg, sizeof(neg), 0, &err), 0);
    /* a string slot pointing past the end */
    const uint8_t out[] = {1, 0, 0, 0, 0, 0, 0, 0, 13, 0, 0, 0, 24, 0, 0, 0};
    assert_int_not_equal(fl_nested_check(arr, FL_ROW_COMPACTED, out, sizeof(out), 0, &err), 0);
    /* an inline length over 7 */
    const uint8_t inl[] = {1, 0, 0, 0, 0, 0, 0, 0, 'a', 0, 0, 0, 0, 0, 0, 0x89};
    assert_int_not_equal(fl_nested_check(arr, FL_ROW_COMPACTED, inl, sizeof(inl), 0, &err), 0);
    /* a map whose key array claims more bytes than there are */
    fl_datatype_t *map = fl_datatype_new(FL_TYPE_MAP);
    map->key = fl_datatype_clone(st);
    map->value = it;
    const uint8_t mk[] = {100, 0, 0, 0, 0, 0, 0, 0};
    assert_int_not_equal(fl_nested_check(map, FL_ROW_COMPACTED, mk, sizeof(mk), 0, &err), 0);
    /* keys and values of different counts */
    const uint8_t kv[] = {8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    assert_int_not_equal(fl_nested_check(map, FL_ROW_COMPACTED, kv, sizeof(kv), 0, &err), 0);
    fl_datatype_destroy(arr);
    fl_datatype_destroy(map);
}

/* Arrow (the append writer's builder) and the row print a value alike. */
static void test_arrow_agrees(void **state) {
    (void)state;
    fluss_table_t *t = table("COMPACTED");
    fluss_row_t *r = fluss_row_new(t);
    const char *texts[] = {
        NULL,
        "[1, null, -3]",
        "[\"a\", \"12345678\", null]",
        "{\"k\": 1, \"a longer key\": null}",
        "{\"x\": 5, \"s\": \"hi\", \"d\": \"2024-01-31\"}",
        "[[1, 2], [], null, [3]]",
        "[{\"q\": 7, \"w\": \"seven\"}, null]",
        "[12345678901234567.125, null]",
        "[\"2024-01-31T10:00:01.123456\", null]",
        "{\"1\": {\"b\": true, \"f\": 1.5}, \"2\": null}",
        "[1, 2]",
        "[\"00ff\"]",
        "[1.5]",
    };
    fl_record_builder_options_t o = {1, FL_ARROW_CODEC_NONE, 0};
    fl_record_builder_t b;
    fl_record_builder_init(&b, &t->desc.schema, &o);
    fl_record_builder_set_nested(&b, FL_ROW_COMPACTED);
    for (int row = 0; row < 3; row++) {
        fluss_row_clear(r);
        assert_int_equal(fluss_row_set_int64(r, 0, row, NULL), 0);
        for (size_t c = 1; c < 13; c++)
            if (row != 1) assert_int_equal(fluss_row_set_text(r, c, texts[c], NULL), 0);
        fl_record_builder_append(&b, &r->row);
    }
    fl_buf_t out;
    fl_buf_init(&out);
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_record_builder_finish(&b, -1, -1, &out, &err), 0);
    fl_record_builder_free(&b);
    int32_t all[13];
    for (int i = 0; i < 13; i++) all[i] = i;
    fluss_record_batch_t *batch = NULL;
    assert_int_equal(fl_record_batch_decode(t, out.data, out.len, 0, all, 13, all, 13, 0, true,
                                            &batch, &err),
                     0);
    char got[512], want[512];
    for (size_t row = 0; row < 3; row++)
        for (size_t c = 1; c < 13; c++) {
            fluss_record_batch_value_text(batch, row, c, FLUSS_TEXT_JSON, got, sizeof(got));
            if (row == 1) {
                assert_string_equal(got, "null");
                continue;
            }
            assert_int_equal(fluss_row_set_text(r, c, texts[c], NULL), 0);
            fluss_row_value_text(r, c, FLUSS_TEXT_JSON, want, sizeof(want));
            if (strcmp(got, want) != 0) fail_msg("column %zu: arrow %s, row %s", c, got, want);
        }
    fluss_record_batch_free(batch);
    fl_buf_free(&out);
    fluss_row_destroy(r);
    fluss_table_close(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),  cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_exact_bytes),  cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_arrow_agrees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
