/*
 * test_client_filter.c — the scanner's row filter (client_filter.c): the
 * parser (every operator, literals of several types, IS [NOT] NULL,
 * AND, case-insensitive keywords, backquoted names) and its errors; the
 * wire form (Fluss main's PbPredicate: leaf or AND compound, field ids
 * from the schema, literal types and value fields per
 * PredicateMessageUtils), packed and read back with protobuf-c; and rows
 * of a built batch kept or dropped (SQL NULL semantics, strings by
 * bytes, timestamps to the nanosecond, decimals by value), the thinned
 * batch's offsets, change types and taken columns, nested ones included.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "../../src/client/client_filter.h"
#include "record_builder.h"
#include "test_client_util.h"

#define SCHEMA                                                                                \
    "id INT NOT NULL, name STRING, amount DECIMAL(10, 2), ts TIMESTAMP(6), f DOUBLE, "        \
    "tags ARRAY<INT>, ok BOOLEAN, day DATE, big DECIMAL(30, 1)"

static fluss_table_t *table(void) {
    fluss_table_t *t = test_table(SCHEMA, NULL, 1, NULL);
    assert_non_null(t);
    return t;
}

static int parse(const fluss_table_t *t, const char *text, fl_cfilter_t *f, fl_error_t *err) {
    memset(f, 0, sizeof(*f));
    fl_err_clear(err);
    return fl_cfilter_parse(t, text, f, err);
}

static void test_parse(void **state) {
    (void)state;
    fluss_table_t *t = table();
    fl_cfilter_t f;
    fl_error_t err;
    assert_int_equal(parse(t, "id >= 5 and name = 'it''s' AND `amount`<>1.5 AND ts IS NOT NULL "
                              "AND f is null AND day < '2024-02-01' AND ok == true",
                           &f, &err),
                     0);
    assert_int_equal(f.count, 7);
    assert_int_equal(f.preds[0].fn, FL_FILTER_GREATER_OR_EQUAL);
    assert_int_equal(f.preds[0].column, 0);
    assert_int_equal(f.preds[0].lit->row.cells[0].i, 5);
    assert_int_equal(f.preds[1].fn, FL_FILTER_EQUAL);
    const fl_cell_t *c = &f.preds[1].lit->row.cells[1];
    assert_int_equal(c->len, 4);
    assert_memory_equal(fl_row_cell_bytes(&f.preds[1].lit->row, c), "it's", 4);
    assert_int_equal(f.preds[2].fn, FL_FILTER_NOT_EQUAL);
    assert_true(f.preds[2].lit->row.cells[2].dec == 150);
    assert_int_equal(f.preds[3].fn, FL_FILTER_IS_NOT_NULL);
    assert_null(f.preds[3].lit);
    assert_int_equal(f.preds[4].fn, FL_FILTER_IS_NULL);
    assert_int_equal(f.preds[5].fn, FL_FILTER_LESS_THAN);
    assert_int_equal(f.preds[5].lit->row.cells[7].i, 19754);
    assert_int_equal(f.preds[6].lit->row.cells[6].i, 1);
    fl_cfilter_free(&f);
    /* errors name what went wrong */
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"nope = 1", "unknown column 'nope'"},
        {"id ~ 1", "an operator expected"},
        {"id >", "a value expected"},
        {"name = 'x", "an unclosed quote"},
        {"id = 1 OR id = 2", "AND or the end expected"},
        {"id = 1 AND", "a column name expected"},
        {"id = x1", "'x1' is not an integer"},
        {"id = 99999999999", "out of range"},
        {"tags = 1", "cannot be filtered"},
        {"f IS NOT 3", "NULL expected"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(t, bad[i].text, &f, &err), FLUSS_ERR__INVALID_ARG);
        if (!strstr(err.msg, bad[i].why)) fail_msg("%s: %s", bad[i].text, err.msg);
        assert_int_equal(f.count, 0);
    }
    fluss_table_close(t);
}

/* Packs the wire form and reads it back as a server would. */
static Fluss__PbPredicate *wire_round_trip(const fl_cfilter_t *f, const fluss_table_t *t) {
    fl_cfilter_wire_t *w = malloc(sizeof(*w));
    fl_cfilter_to_wire(f, t, w);
    size_t n = protobuf_c_message_get_packed_size(&w->root.base);
    uint8_t *buf = malloc(n);
    protobuf_c_message_pack(&w->root.base, buf);
    Fluss__PbPredicate *p = fluss__pb_predicate__unpack(NULL, n, buf);
    free(buf);
    fl_cfilter_wire_free(w);
    free(w);
    assert_non_null(p);
    return p;
}

static void test_wire(void **state) {
    (void)state;
    fluss_table_t *t = table();
    fl_cfilter_t f;
    fl_error_t err;
    /* one leaf: no compound */
    assert_int_equal(parse(t, "id < 7", &f, &err), 0);
    Fluss__PbPredicate *p = wire_round_trip(&f, t);
    assert_int_equal(p->type, 0);
    assert_non_null(p->leaf);
    assert_int_equal(p->leaf->function, 2);
    assert_int_equal(p->leaf->field_id, t->desc.schema.columns[0].id);
    assert_int_equal(p->leaf->n_literals, 1);
    assert_int_equal(p->leaf->literals[0]->literal_type, 3); /* INT */
    assert_true(p->leaf->literals[0]->has_int_value && p->leaf->literals[0]->int_value == 7);
    fluss__pb_predicate__free_unpacked(p, NULL);
    fl_cfilter_free(&f);
    /* an AND of every literal kind */
    assert_int_equal(parse(t, "name = 'abc' AND amount > 1.25 AND ts <= '2024-01-31 10:00:01.123456' "
                              "AND f != 2.5 AND ok = false AND day = '1970-01-02' AND big = 7.5 "
                              "AND id IS NULL",
                           &f, &err),
                     0);
    p = wire_round_trip(&f, t);
    assert_int_equal(p->type, 1);
    assert_int_equal(p->compound->function, 0);
    assert_int_equal(p->compound->n_children, 8);
    Fluss__PbLeafPredicate **l = malloc(8 * sizeof(*l));
    for (int i = 0; i < 8; i++) {
        assert_int_equal(p->compound->children[i]->type, 0);
        l[i] = p->compound->children[i]->leaf;
    }
    assert_int_equal(l[0]->literals[0]->literal_type, 8); /* VARCHAR */
    assert_string_equal(l[0]->literals[0]->string_value, "abc");
    assert_int_equal(l[1]->literals[0]->literal_type, 9); /* DECIMAL, compact */
    assert_true(l[1]->literals[0]->has_decimal_value && l[1]->literals[0]->decimal_value == 125);
    assert_int_equal(l[2]->literals[0]->literal_type, 12);
    assert_int_equal(l[2]->literals[0]->timestamp_millis_value, 1706695201123LL);
    assert_int_equal(l[2]->literals[0]->timestamp_nano_of_millis_value, 456000);
    assert_int_equal(l[3]->function, 1);
    assert_true(l[3]->literals[0]->has_double_value && l[3]->literals[0]->double_value == 2.5);
    assert_int_equal(l[4]->literals[0]->literal_type, 0);
    assert_true(l[4]->literals[0]->has_boolean_value && !l[4]->literals[0]->boolean_value);
    assert_int_equal(l[5]->literals[0]->literal_type, 10); /* DATE as bigint */
    assert_true(l[5]->literals[0]->has_bigint_value && l[5]->literals[0]->bigint_value == 1);
    assert_true(l[6]->literals[0]->has_decimal_bytes); /* DECIMAL(30): BigInteger bytes */
    assert_int_equal(l[6]->literals[0]->decimal_bytes.len, 1);
    assert_int_equal(l[6]->literals[0]->decimal_bytes.data[0], 75);
    assert_int_equal(l[7]->function, 6);
    assert_int_equal(l[7]->n_literals, 0);
    free(l);
    fluss__pb_predicate__free_unpacked(p, NULL);
    fl_cfilter_free(&f);
    fluss_table_close(t);
}

#define ROWS 12

/* A batch of ROWS rows: id i, name "n<i>" (NULL for i % 5 == 0),
 * amount i.25, ts 2024-01-31 10:00:00 + i µs, f i / 2, tags [i, i+1]
 * (NULL for odd i), ok i % 2, day i, big i.5; a changelog whose change
 * types cycle. */
static void build(fluss_table_t *t, fl_buf_t *out) {
    fl_record_builder_options_t o = {t->schema_id, FL_ARROW_CODEC_NONE, 0};
    fl_record_builder_t b;
    fl_record_builder_init(&b, &t->desc.schema, &o);
    fl_record_builder_set_nested(&b, FL_ROW_COMPACTED);
    fluss_row_t *r = fluss_row_new(t);
    char text[64];
    for (int i = 0; i < ROWS; i++) {
        fluss_row_clear(r);
        assert_int_equal(fluss_row_set_int64(r, 0, i, NULL), 0);
        snprintf(text, sizeof(text), "n%d", i);
        if (i % 5) assert_int_equal(fluss_row_set_string(r, 1, text, NULL), 0);
        snprintf(text, sizeof(text), "%d.25", i);
        assert_int_equal(fluss_row_set_decimal(r, 2, text, NULL), 0);
        assert_int_equal(fluss_row_set_timestamp(r, 3, 1706695200000LL, i * 1000, NULL), 0);
        assert_int_equal(fluss_row_set_double(r, 4, i / 2.0, NULL), 0);
        snprintf(text, sizeof(text), "[%d, %d]", i, i + 1);
        if (i % 2 == 0) assert_int_equal(fluss_row_set_text(r, 5, text, NULL), 0);
        assert_int_equal(fluss_row_set_bool(r, 6, i % 2, NULL), 0);
        assert_int_equal(fluss_row_set_date(r, 7, i, NULL), 0);
        snprintf(text, sizeof(text), "%d.5", i);
        assert_int_equal(fluss_row_set_decimal(r, 8, text, NULL), 0);
        fl_record_builder_append_change(&b, &r->row, (fl_change_type_t)(1 + i % 4));
    }
    fluss_row_destroy(r);
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_record_builder_finish(&b, -1, -1, out, &err), 0);
    fl_record_builder_free(&b);
    /* offsets 100.. as a server would assign them */
    fl_batch_set_base_offset(out->data, 100);
}

/* The ids the filter keeps (from min_offset on), with checks of the
 * batch that carries them. */
static size_t keep(fluss_table_t *t, const fl_buf_t *bytes, const char *text,
                   const int32_t *present, size_t np, int64_t min_offset, int *ids) {
    fl_cfilter_t f;
    fl_error_t err;
    assert_int_equal(parse(t, text, &f, &err), 0);
    int32_t all[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    fluss_record_batch_t *b = NULL;
    assert_int_equal(fl_record_batch_decode_filtered(t, bytes->data, bytes->len, 0, all, 9,
                                                     present, np, min_offset, true, &f, NULL, &b,
                                                     &err),
                     0);
    fl_cfilter_free(&f);
    if (!b) return 0;
    size_t n = fluss_record_batch_row_count(b);
    char v[128];
    for (size_t r = 0; r < n; r++) {
        int64_t off = fluss_record_batch_offset(b, r);
        int id = (int)(off - 100);
        ids[r] = id;
        assert_int_equal(fluss_record_batch_change_type(b, r), 1 + id % 4);
        for (size_t c = 0; c < np; c++) {
            fluss_record_batch_value_text(b, r, c, FLUSS_TEXT_JSON, v, sizeof(v));
            char want[128];
            switch (present[c]) {
            case 0: snprintf(want, sizeof(want), "%d", id); break;
            case 1: snprintf(want, sizeof(want), id % 5 ? "\"n%d\"" : "null", id); break;
            case 5: snprintf(want, sizeof(want), id % 2 ? "null" : "[%d, %d]", id, id + 1); break;
            default: continue;
            }
            assert_string_equal(v, want);
        }
    }
    assert_int_equal(fluss_record_batch_base_offset(b), 100 + ids[0]);
    /* the thinned batch exports like any other */
    struct ArrowSchema s;
    struct ArrowArray a;
    assert_int_equal(fluss_record_batch_to_arrow(b, &s, &a, NULL), 0);
    assert_int_equal(a.length, (int64_t)n);
    a.release(&a);
    s.release(&s);
    fluss_record_batch_free(b);
    return n;
}

static void test_rows(void **state) {
    (void)state;
    fluss_table_t *t = table();
    fl_buf_t bytes;
    fl_buf_init(&bytes);
    build(t, &bytes);
    int32_t shown[] = {5, 1, 0};
    int ids[ROWS];
    size_t n;
    n = keep(t, &bytes, "id >= 9", shown, 3, 0, ids);
    assert_int_equal(n, 3);
    assert_int_equal(ids[0], 9);
    assert_int_equal(ids[2], 11);
    /* NULLs match only IS NULL: 0, 5 and 10 have no name */
    n = keep(t, &bytes, "name != 'n3'", shown, 3, 0, ids);
    assert_int_equal(n, 8);
    n = keep(t, &bytes, "name IS NULL", shown, 3, 0, ids);
    assert_int_equal(n, 3);
    assert_int_equal(ids[1], 5);
    /* strings by bytes: "n10" < "n2" */
    n = keep(t, &bytes, "name < 'n2' AND name IS NOT NULL", shown, 3, 0, ids);
    assert_int_equal(n, 2);
    assert_int_equal(ids[0], 1);
    assert_int_equal(ids[1], 11);
    /* decimals by value, timestamps to the microsecond, doubles, booleans, dates */
    n = keep(t, &bytes, "amount > 3.25 AND amount <= 6.25", shown, 3, 0, ids);
    assert_int_equal(n, 3);
    assert_int_equal(ids[0], 4);
    n = keep(t, &bytes, "ts = '2024-01-31 10:00:00.000007'", shown, 3, 0, ids);
    assert_int_equal(n, 1);
    assert_int_equal(ids[0], 7);
    n = keep(t, &bytes, "f > 4 AND ok = true", shown, 3, 0, ids);
    assert_int_equal(n, 2); /* 9 and 11 */
    n = keep(t, &bytes, "day = '1970-01-04' AND big = 3.5", shown, 3, 0, ids);
    assert_int_equal(n, 1);
    assert_int_equal(ids[0], 3);
    /* every row: the batch as it was (no offsets table); none: no batch */
    n = keep(t, &bytes, "id >= 0", shown, 3, 0, ids);
    assert_int_equal(n, ROWS);
    n = keep(t, &bytes, "id > 100", shown, 3, 0, ids);
    assert_int_equal(n, 0);
    /* rows below the position are not looked at */
    n = keep(t, &bytes, "ok = false", shown, 3, 106, ids);
    assert_int_equal(n, 3);
    assert_int_equal(ids[0], 6);
    /* a filter on a column that is not shown */
    int32_t only_id[] = {0};
    n = keep(t, &bytes, "amount < 2", only_id, 1, 0, ids);
    assert_int_equal(n, 2);
    fl_buf_free(&bytes);
    fluss_table_close(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_wire),
        cmocka_unit_test(test_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
