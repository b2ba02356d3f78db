/*
 * test_client_partition.c — partition names as Fluss builds them
 * (client_partition_name.c): the value text of every partition-key type
 * against the vectors of Fluss 0.9.1's PartitionUtilsTest, Java's
 * Float/Double.toString forms, names of rows with several keys (and
 * fluss_row_partition_name), the "k=v,..." spec parser and the name of a
 * spec, with their errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>

#include <cmocka.h>

#include "../../src/client/client_partition.h"
#include "test_client_util.h"

/* A table with partition keys (test_client_util.h's has none). */
static fluss_table_t *partitioned(const char *schema, const char *keys) {
    fluss_table_spec_t spec = {0};
    spec.schema = schema;
    spec.partition_keys = keys;
    spec.bucket_count = 2;
    fluss_error_t e;
    char *json = fluss_table_spec_to_json(&spec, &e);
    assert_non_null(json);
    fl_table_desc_t d;
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_table_desc_from_bytes(json, strlen(json), &d, &err), 0);
    free(json);
    fluss_table_t *t = fl_table_new_local("db", "t", 42, 1, &d, &err);
    assert_non_null(t);
    return t;
}

#define ALL_TYPES                                                                          \
    "s STRING, c CHAR(3), b BOOLEAN, by BYTES, bi BINARY(6), ti TINYINT, si SMALLINT, "    \
    "i INT, d DATE, tm TIME, bg BIGINT, f FLOAT, db DOUBLE, ts TIMESTAMP(9), "             \
    "ltz TIMESTAMP_LTZ(9)"

/* The partition text of column col of row r. */
static const char *text_of(fluss_row_t *r, size_t col, fl_buf_t *b) {
    fl_error_t err;
    fl_err_clear(&err);
    b->len = 0;
    assert_int_equal(fl_partition_value_text(fl_table_type(r->t, col), &r->row,
                                             &r->row.cells[col], b, &err),
                     0);
    fl_buf_put_u8(b, '\0');
    return (const char *)b->data;
}

static void test_fluss_vectors(void **state) {
    (void)state;
    fluss_table_t *t = partitioned(ALL_TYPES, "s");
    fluss_row_t *r = fluss_row_new(t);
    fl_buf_t b;
    fl_buf_init(&b);
    assert_int_equal(fluss_row_set_string(r, 0, "Fluss", NULL), 0);
    assert_string_equal(text_of(r, 0, &b), "Fluss");
    assert_int_equal(fluss_row_set_string(r, 1, "F", NULL), 0);
    assert_string_equal(text_of(r, 1, &b), "F");
    assert_int_equal(fluss_row_set_bool(r, 2, true, NULL), 0);
    assert_string_equal(text_of(r, 2, &b), "true");
    assert_int_equal(fluss_row_set_bytes(r, 3, "\x10\x20\x30\x40\x50\xff", 6, NULL), 0);
    assert_string_equal(text_of(r, 3, &b), "1020304050ff");
    assert_int_equal(fluss_row_set_bytes(r, 4, "\x10\x20\x30\x40\x50\xff", 6, NULL), 0);
    assert_string_equal(text_of(r, 4, &b), "1020304050ff");
    assert_int_equal(fluss_row_set_int64(r, 5, 100, NULL), 0);
    assert_string_equal(text_of(r, 5, &b), "100");
    assert_int_equal(fluss_row_set_int64(r, 6, -32760, NULL), 0);
    assert_string_equal(text_of(r, 6, &b), "-32760");
    assert_int_equal(fluss_row_set_int64(r, 7, 299000, NULL), 0);
    assert_string_equal(text_of(r, 7, &b), "299000");
    assert_int_equal(fluss_row_set_date(r, 8, 20235, NULL), 0);
    assert_string_equal(text_of(r, 8, &b), "2025-05-27");
    assert_int_equal(fluss_row_set_time(r, 9, 5402199, NULL), 0);
    assert_string_equal(text_of(r, 9, &b), "01-30-02_199");
    assert_int_equal(fluss_row_set_int64(r, 10, -9223372036854775807LL - 1, NULL), 0);
    assert_string_equal(text_of(r, 10, &b), "-9223372036854775808");
    assert_int_equal(fluss_row_set_double(r, 11, 5.73f, NULL), 0);
    assert_string_equal(text_of(r, 11, &b), "5_73");
    assert_int_equal(fluss_row_set_double(r, 12, 5.73, NULL), 0);
    assert_string_equal(text_of(r, 12, &b), "5_73");
    /* timestamps: millis + nanos of milli, the fraction without trailing zeros */
    static const struct {
        int64_t ms;
        int32_t nanos;
        const char *want;
    } ts[] = {
        {1748662955428LL, 99988, "2025-05-31-03-42-35_428099988"},
        {1748662955428LL, 0, "2025-05-31-03-42-35_428"},
        {1748662955000LL, 99988, "2025-05-31-03-42-35_000099988"},
        {1748662955000LL, 0, "2025-05-31-03-42-35_"},
        {-1748662955428LL, 99988, "1914-08-03-20-17-24_572099988"},
    };
    for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
        assert_int_equal(fluss_row_set_timestamp(r, 13, ts[i].ms, ts[i].nanos, NULL), 0);
        assert_string_equal(text_of(r, 13, &b), ts[i].want);
        assert_int_equal(fluss_row_set_timestamp(r, 14, ts[i].ms, ts[i].nanos, NULL), 0);
        assert_string_equal(text_of(r, 14, &b), ts[i].want);
    }
    fl_buf_free(&b);
    fluss_row_destroy(r);
    fluss_table_close(t);
}

static void test_java_float_forms(void **state) {
    (void)state;
    static const struct {
        double v;
        bool single;
        const char *want;
    } cases[] = {
        {1e10, false, "1_0E10"},     {1e-4, false, "1_0E-4"},   {100.0, false, "100_0"},
        {0.001, false, "0_001"},     {1e7, false, "1_0E7"},     {9999999.0, false, "9999999_0"},
        {-0.0, false, "-0_0"},       {0.0, false, "0_0"},       {0.1, false, "0_1"},
        {1.0 / 3, false, "0_3333333333333333"},                 {123456789.5, false, "1_234567895E8"},
        {0.1f, true, "0_1"},         {1e10f, true, "1_0E10"},   {3.4028235e38f, true, "3_4028235E38"},
        {NAN, false, "NaN"},         {INFINITY, false, "Inf"},  {-INFINITY, true, "-Inf"},
    };
    fluss_table_t *t = partitioned("f FLOAT, d DOUBLE", "d");
    fluss_row_t *r = fluss_row_new(t);
    fl_buf_t b;
    fl_buf_init(&b);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t col = cases[i].single ? 0 : 1;
        assert_int_equal(fluss_row_set_double(r, col, cases[i].v, NULL), 0);
        const char *got = text_of(r, col, &b);
        if (strcmp(got, cases[i].want) != 0) fail_msg("%g: %s, want %s", cases[i].v, got, cases[i].want);
    }
    fl_buf_free(&b);
    fluss_row_destroy(r);
    fluss_table_close(t);
}

static void test_row_names(void **state) {
    (void)state;
    fluss_table_t *t = partitioned("id INT, region STRING, day DATE, hour INT", "region,day,hour");
    const int32_t *keys;
    assert_int_equal(fluss_table_partition_keys(t, &keys), 3);
    assert_int_equal(keys[0], 1);
    assert_int_equal(keys[2], 3);
    fluss_row_t *r = fluss_row_new(t);
    char name[64];
    fluss_error_t e;
    assert_int_equal(fluss_row_set_text(r, 1, "eu", NULL), 0);
    assert_int_equal(fluss_row_set_text(r, 2, "2026-01-31", NULL), 0);
    /* a NULL partition value has no name */
    assert_int_equal(fluss_row_partition_name(r, name, sizeof(name), &e), FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(e.message, "null"));
    assert_int_equal(fluss_row_set_text(r, 3, "7", NULL), 0);
    assert_int_equal(fluss_row_partition_name(r, name, sizeof(name), &e), 0);
    assert_string_equal(name, "eu$2026-01-31$7");
    assert_int_equal(fluss_row_partition_name(r, name, 8, &e), FLUSS_ERR__INVALID_ARG);
    fluss_row_destroy(r);
    fluss_table_close(t);
    /* a table without partitions */
    t = test_table("id INT", NULL, 1, NULL);
    r = fluss_row_new(t);
    assert_int_equal(fluss_row_partition_name(r, name, sizeof(name), &e),
                     FLUSS_ERR_TABLE_NOT_PARTITIONED_EXCEPTION);
    fluss_row_destroy(r);
    fluss_table_close(t);
}

static void test_specs(void **state) {
    (void)state;
    fl_kvlist_t kv;
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_partition_spec_parse(" day = 2026-01-31 ,region=eu", &kv, &err), 0);
    assert_int_equal(kv.count, 2);
    assert_string_equal(kv.items[0].key, "day");
    assert_string_equal(kv.items[0].value, "2026-01-31");
    fl_strlist_t keys = {0};
    fl_strlist_add(&keys, "region");
    fl_strlist_add(&keys, "day");
    fl_buf_t name;
    fl_buf_init(&name);
    assert_int_equal(fl_partition_name_of_spec(&kv, &keys, &name, &err), 0);
    assert_string_equal((const char *)name.data, "eu$2026-01-31");
    fl_kvlist_free(&kv);
    /* partial and foreign specs have no name */
    assert_int_equal(fl_partition_spec_parse("region=eu", &kv, &err), 0);
    assert_int_equal(fl_partition_name_of_spec(&kv, &keys, &name, &err), FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(err.msg, "'day'"));
    fl_kvlist_free(&kv);
    assert_int_equal(fl_partition_spec_parse("region=eu,day=1,hour=2", &kv, &err), 0);
    assert_int_equal(fl_partition_name_of_spec(&kv, &keys, &name, &err), FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(err.msg, "'hour' is not a partition key"));
    fl_kvlist_free(&kv);
    /* empty is no pairs; malformed items fail */
    assert_int_equal(fl_partition_spec_parse("", &kv, &err), 0);
    assert_int_equal(kv.count, 0);
    fl_kvlist_free(&kv);
    assert_int_equal(fl_partition_spec_parse("region", &kv, &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fl_partition_spec_parse("=eu", &kv, &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fl_partition_spec_parse("a=1,a=2", &kv, &err), FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(err.msg, "repeated"));
    /* names from text: a spec, or a name as it is */
    fluss_table_t *t = partitioned("id INT, region STRING, day STRING", "region,day");
    assert_int_equal(fl_partition_name_of_text(t, "day=d1,region=r1", &name, &err), 0);
    assert_string_equal((const char *)name.data, "r1$d1");
    assert_int_equal(fl_partition_name_of_text(t, "r1$d1", &name, &err), 0);
    assert_string_equal((const char *)name.data, "r1$d1");
    fluss_table_close(t);
    fl_buf_free(&name);
    fl_strlist_free(&keys);
}

static void test_partition_key_types(void **state) {
    (void)state;
    /* DECIMAL cannot name a partition (PartitionUtils' supported types) */
    fluss_table_spec_t spec = {0};
    spec.schema = "id INT, p DECIMAL(10, 2)";
    spec.partition_keys = "p";
    fluss_error_t e;
    char *json = fluss_table_spec_to_json(&spec, &e);
    assert_non_null(json);
    fl_table_desc_t d;
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_table_desc_from_bytes(json, strlen(json), &d, &err), 0);
    free(json);
    assert_null(fl_table_new_local("db", "t", 1, 1, &d, &err));
    assert_int_equal(err.code, FLUSS_ERR__INVALID_ARG);
    fl_table_desc_free(&d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fluss_vectors),       cmocka_unit_test(test_java_float_forms),
        cmocka_unit_test(test_row_names),           cmocka_unit_test(test_specs),
        cmocka_unit_test(test_partition_key_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
