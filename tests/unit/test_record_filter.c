/*
 * test_record_filter.c — batch statistics (record_stats.h) and filters
 * decided against them (record_filter.h): the AlignedRow values pyfluss
 * 1.0.0 writes (bytes recorded from it), every leaf function over ints,
 * doubles, strings and timestamps, AND/OR, all-null columns, and that what
 * is not understood never skips a batch. Also the magic 0 down-conversion.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common_alloc.h"
#include "record_batch.h"
#include "record_filter.h"
#include "record_stats.h"

/* Statistics of pyfluss 1.0.0 for one batch of (id BIGINT, name STRING,
 * score DOUBLE, ts TIMESTAMP(3)) rows: id 10..15, name "a1" (one null),
 * score 1.5 (one null), ts 1000..2000. */
static const char *const PYFLUSS_STATS =
    "0104000000010002000300000000000100000001000000000000002800000000000000000000000a000000"
    "000000006131000000000082000000000000f83fe8030000000000002800000000000000000000000f0000"
    "00000000006131000000000082000000000000f83fd007000000000000";

static size_t unhex(const char *h, uint8_t *out) {
    size_t n = strlen(h) / 2;
    for (size_t i = 0; i < n; i++) sscanf(h + 2 * i, "%2hhx", &out[i]);
    return n;
}

static fl_datatype_t *ty(fl_type_root_t r, int32_t precision) {
    fl_datatype_t *t = fl_datatype_new(r);
    t->precision = precision;
    return t;
}

static void test_pyfluss_statistics(void **state) {
    (void)state;
    uint8_t b[256];
    size_t n = unhex(PYFLUSS_STATS, b);
    fl_batch_stats_t s;
    fl_error_t err;
    assert_int_equal(fl_batch_stats_parse(b, n, &s, &err), 0);
    assert_int_equal(s.count, 4);
    assert_int_equal(fl_batch_stats_find(&s, 2), 2);
    assert_int_equal(fl_batch_stats_find(&s, 9), -1);
    assert_int_equal(fl_batch_stats_null_count(&s, 1), 1);
    fl_datatype_t *big = ty(FL_TYPE_BIGINT, 0), *str = ty(FL_TYPE_STRING, 0),
                  *dbl = ty(FL_TYPE_DOUBLE, 0), *ts = ty(FL_TYPE_TIMESTAMP, 3);
    fl_stat_value_t v = fl_batch_stats_value(&s, false, 0, big);
    assert_int_equal(v.kind, FL_STAT_INT);
    assert_int_equal(v.i, 10);
    v = fl_batch_stats_value(&s, true, 0, big);
    assert_int_equal(v.i, 15);
    v = fl_batch_stats_value(&s, true, 1, str);
    assert_int_equal(v.kind, FL_STAT_BYTES);
    assert_int_equal(v.len, 2);
    assert_memory_equal(v.bytes, "a1", 2);
    v = fl_batch_stats_value(&s, false, 2, dbl);
    assert_int_equal(v.kind, FL_STAT_DOUBLE);
    assert_true(v.d == 1.5);
    v = fl_batch_stats_value(&s, true, 3, ts);
    assert_int_equal(v.kind, FL_STAT_TIMESTAMP);
    assert_int_equal(v.i, 2000);
    /* every truncation is refused, never read past */
    for (size_t cut = 0; cut < n; cut++)
        assert_int_not_equal(fl_batch_stats_parse(b, cut, &s, &err), 0);
    fl_datatype_destroy(big);
    fl_datatype_destroy(str);
    fl_datatype_destroy(dbl);
    fl_datatype_destroy(ts);
}

/* A leaf over column 0 (BIGINT) of the pyfluss batch, id in [10, 15]. */
static bool leaf_int(fl_filter_fn_t fn, int64_t lit, int column, fl_type_root_t root) {
    uint8_t b[256];
    size_t n = unhex(PYFLUSS_STATS, b);
    fl_batch_stats_t s;
    fl_error_t err;
    assert_int_equal(fl_batch_stats_parse(b, n, &s, &err), 0);
    fl_datatype_t *t = ty(root, 3);
    fl_stat_value_t l = {.kind = root == FL_TYPE_TIMESTAMP ? FL_STAT_TIMESTAMP : FL_STAT_INT,
                         .i = lit};
    fl_filter_node_t node = {.kind = FL_FILTER_NODE_LEAF, .fn = fn, .column = column, .type = t,
                             .literal_count = 1, .literals = &l};
    bool r = fl_filter_may_match(&node, &s, 6);
    fl_datatype_destroy(t);
    return r;
}

static void test_int_leaves(void **state) {
    (void)state;
    assert_true(leaf_int(FL_FILTER_EQUAL, 10, 0, FL_TYPE_BIGINT));
    assert_true(leaf_int(FL_FILTER_EQUAL, 15, 0, FL_TYPE_BIGINT));
    assert_false(leaf_int(FL_FILTER_EQUAL, 9, 0, FL_TYPE_BIGINT));
    assert_false(leaf_int(FL_FILTER_EQUAL, 16, 0, FL_TYPE_BIGINT));
    assert_true(leaf_int(FL_FILTER_NOT_EQUAL, 12, 0, FL_TYPE_BIGINT));
    assert_true(leaf_int(FL_FILTER_LESS_THAN, 11, 0, FL_TYPE_BIGINT));
    assert_false(leaf_int(FL_FILTER_LESS_THAN, 10, 0, FL_TYPE_BIGINT));
    assert_true(leaf_int(FL_FILTER_LESS_OR_EQUAL, 10, 0, FL_TYPE_BIGINT));
    assert_false(leaf_int(FL_FILTER_GREATER_THAN, 15, 0, FL_TYPE_BIGINT));
    assert_true(leaf_int(FL_FILTER_GREATER_OR_EQUAL, 15, 0, FL_TYPE_BIGINT));
    assert_false(leaf_int(FL_FILTER_GREATER_OR_EQUAL, 16, 0, FL_TYPE_BIGINT));
    /* timestamps */
    assert_false(leaf_int(FL_FILTER_LESS_THAN, 1000, 3, FL_TYPE_TIMESTAMP));
    assert_true(leaf_int(FL_FILTER_LESS_OR_EQUAL, 1000, 3, FL_TYPE_TIMESTAMP));
    assert_false(leaf_int(FL_FILTER_GREATER_THAN, 2000, 3, FL_TYPE_TIMESTAMP));
    /* nulls: id has none, name one */
    assert_false(leaf_int(FL_FILTER_IS_NULL, 0, 0, FL_TYPE_BIGINT));
    assert_true(leaf_int(FL_FILTER_IS_NULL, 0, 1, FL_TYPE_STRING));
    assert_true(leaf_int(FL_FILTER_IS_NOT_NULL, 0, 0, FL_TYPE_BIGINT));
    /* unknown: functions the statistics cannot decide, columns without them */
    assert_true(leaf_int(FL_FILTER_CONTAINS, 0, 0, FL_TYPE_BIGINT));
    assert_true(leaf_int(FL_FILTER_EQUAL, 99, 7, FL_TYPE_BIGINT));
    /* a literal of another kind than the column's values is never compared */
    assert_true(leaf_int(FL_FILTER_EQUAL, 99, 1, FL_TYPE_STRING));
}

static fl_filter_node_t str_leaf(fl_filter_fn_t fn, const char *lit, fl_datatype_t *t) {
    fl_stat_value_t *l = fl_calloc(1, sizeof(*l));
    l->kind = FL_STAT_BYTES;
    l->len = strlen(lit);
    uint8_t *copy = fl_malloc(l->len + 1);
    memcpy(copy, lit, l->len + 1);
    l->bytes = copy;
    return (fl_filter_node_t){.kind = FL_FILTER_NODE_LEAF, .fn = fn, .column = 1, .type = t,
                              .literal_count = 1, .literals = l};
}

static void test_strings_and_compounds(void **state) {
    (void)state;
    uint8_t b[256];
    size_t n = unhex(PYFLUSS_STATS, b);
    fl_batch_stats_t s;
    fl_error_t err;
    assert_int_equal(fl_batch_stats_parse(b, n, &s, &err), 0);
    fl_datatype_t *str = ty(FL_TYPE_STRING, 0);
    struct { fl_filter_fn_t fn; const char *lit; bool may; } cases[] = {
        {FL_FILTER_EQUAL, "a1", true},       {FL_FILTER_EQUAL, "a", false},
        {FL_FILTER_EQUAL, "a10", false},     {FL_FILTER_STARTS_WITH, "a", true},
        {FL_FILTER_STARTS_WITH, "a1", true}, {FL_FILTER_STARTS_WITH, "a2", false},
        {FL_FILTER_STARTS_WITH, "b", false}, {FL_FILTER_GREATER_THAN, "a1", false},
        {FL_FILTER_LESS_THAN, "a10", true},  {FL_FILTER_NOT_EQUAL, "a1", false},
        {FL_FILTER_END_WITH, "zz", true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fl_filter_node_t leaf = str_leaf(cases[i].fn, cases[i].lit, str);
        assert_int_equal(fl_filter_may_match(&leaf, &s, 6), cases[i].may);
        fl_filter_node_clear(&leaf);
    }
    /* AND / OR of a true and a false leaf */
    fl_filter_node_t kids[2] = {str_leaf(FL_FILTER_EQUAL, "a1", str),
                                str_leaf(FL_FILTER_EQUAL, "zz", str)};
    fl_filter_node_t and_ = {.kind = FL_FILTER_NODE_AND, .child_count = 2, .children = kids};
    fl_filter_node_t or_ = {.kind = FL_FILTER_NODE_OR, .child_count = 2, .children = kids};
    assert_false(fl_filter_may_match(&and_, &s, 6));
    assert_true(fl_filter_may_match(&or_, &s, 6));
    fl_filter_node_t any = {.kind = FL_FILTER_NODE_ANY};
    assert_true(fl_filter_may_match(&any, &s, 6));
    fl_filter_node_clear(&kids[0]);
    fl_filter_node_clear(&kids[1]);
    /* a batch whose name column is all null: comparisons cannot hold */
    fl_filter_node_t eq = str_leaf(FL_FILTER_EQUAL, "a1", str);
    assert_false(fl_filter_may_match(&eq, &s, 1)); /* 1 row, 1 null */
    /* a null count above the row count is not believed */
    assert_true(fl_filter_may_match(&eq, &s, 0));
    fl_filter_node_clear(&eq);
    fl_datatype_destroy(str);
}

static void test_down_conversion(void **state) {
    (void)state;
    /* a magic 1 batch: 52-byte header, 5 bytes of statistics, 7 of records */
    uint8_t p[64];
    memset(p, 0, sizeof(p));
    size_t len = 52 + 5 + 7;
    memcpy(p + 57, "records", 7);
    memcpy(p + 52, "stats", 5);
    fl_batch_header_t h = {.magic = 1, .base_offset = 40, .commit_timestamp = 1234,
                           .schema_id = 3, .attributes = 1, .last_offset_delta = 4,
                           .writer_id = 9, .batch_sequence = 2, .record_count = 5,
                           .stats_size = 5};
    fl_batch_write_header(p, len, &h);
    fl_batch_view_t v;
    fl_error_t err;
    assert_int_equal(fl_batch_parse(p, len, &v, &err), 0);
    assert_int_equal(fl_batch_check_crc(&v, &err), 0);
    fl_buf_t out;
    fl_buf_init(&out);
    fl_batch_append_v0(&v, &out);
    assert_int_equal(out.len, 48 + 7);
    fl_batch_view_t w;
    assert_int_equal(fl_batch_parse(out.data, out.len, &w, &err), 0);
    assert_int_equal(fl_batch_check_crc(&w, &err), 0);
    assert_int_equal(w.magic, 0);
    assert_int_equal(w.base_offset, 40);
    assert_int_equal(w.commit_timestamp, 1234);
    assert_int_equal(w.schema_id, 3);
    assert_int_equal(w.writer_id, 9);
    assert_int_equal(w.batch_sequence, 2);
    assert_int_equal(w.record_count, 5);
    assert_memory_equal(out.data + 48, "records", 7);
    fl_buf_free(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pyfluss_statistics),
        cmocka_unit_test(test_int_leaves),
        cmocka_unit_test(test_strings_and_compounds),
        cmocka_unit_test(test_down_conversion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
