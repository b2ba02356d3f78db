/*
 * test_types_schema_map.c — column maps between schemas of one table
 * (types_schema_map.h) and what the kv path does with them
 * (fl_kv_row_to_latest): ADD COLUMN leaves a prefix map (rows padded),
 * DROP COLUMN shifts positions, a re-added name is a new column, a
 * column whose type differs is not matched; rows keep their values
 * (strings in the arena included) when cells move; projections translate
 * or name the column a batch lacks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kv_merge.h"
#include "kv_table.h"
#include "types_schema_map.h"

/* A schema of (name, id, type root) columns. */
typedef struct col_spec {
    const char *name;
    int32_t id;
    fl_type_root_t root;
} col_spec_t;

static void make_schema(fl_schema_t *s, const col_spec_t *cols, size_t n) {
    memset(s, 0, sizeof(*s));
    for (size_t i = 0; i < n; i++) {
        fl_datatype_t *t = fl_datatype_new(cols[i].root);
        t->nullable = true;
        fl_schema_add_column(s, cols[i].name, t, NULL);
        s->columns[i].id = cols[i].id;
        if (cols[i].id > s->highest_field_id) s->highest_field_id = cols[i].id;
    }
}

/* v1: id a b c; v2: + d (added); v3: a dropped; v4: c renamed label, a re-added (id 5) */
static const col_spec_t V1[] = {{"id", 0, FL_TYPE_INTEGER}, {"a", 1, FL_TYPE_STRING},
                                {"b", 2, FL_TYPE_BIGINT}, {"c", 3, FL_TYPE_STRING}};
static const col_spec_t V2[] = {{"id", 0, FL_TYPE_INTEGER}, {"a", 1, FL_TYPE_STRING},
                                {"b", 2, FL_TYPE_BIGINT}, {"c", 3, FL_TYPE_STRING},
                                {"d", 4, FL_TYPE_INTEGER}};
static const col_spec_t V4[] = {{"id", 0, FL_TYPE_INTEGER}, {"b", 2, FL_TYPE_BIGINT},
                                {"label", 3, FL_TYPE_STRING}, {"d", 4, FL_TYPE_INTEGER},
                                {"a", 5, FL_TYPE_STRING}};

static void test_add_is_a_prefix(void **state) {
    (void)state;
    fl_schema_t s1, s2;
    make_schema(&s1, V1, 4);
    make_schema(&s2, V2, 5);
    fl_schema_map_t m;
    fl_schema_map_init(&m, &s1, &s2);
    assert_true(m.prefix);
    assert_int_equal(m.count, 5);
    assert_int_equal(m.from_count, 4);
    const int32_t want[] = {0, 1, 2, 3, -1};
    assert_memory_equal(m.source, want, sizeof(want));
    fl_schema_map_free(&m);
    fl_schema_map_init(&m, &s2, &s2); /* the latest onto itself */
    assert_true(m.prefix);
    fl_schema_map_free(&m);
    fl_schema_free(&s1);
    fl_schema_free(&s2);
}

static void test_drop_shifts(void **state) {
    (void)state;
    fl_schema_t s1, s4;
    make_schema(&s1, V1, 4);
    make_schema(&s4, V4, 5);
    fl_schema_map_t m;
    fl_schema_map_init(&m, &s1, &s4);
    assert_false(m.prefix);
    /* the new "a" (id 5) is not the old one (id 1) */
    const int32_t want[] = {0, 2, 3, -1, -1};
    assert_memory_equal(m.source, want, sizeof(want));

    fl_row_t r;
    fl_row_init(&r, 4);
    r.cells[0].is_null = false;
    r.cells[0].i = 7;
    fl_row_set_bytes(&r, 1, "gone", 4);
    r.cells[2].is_null = false;
    r.cells[2].i = -3;
    fl_row_set_bytes(&r, 3, "label-7", 7);
    fl_schema_map_row(&m, &r);
    assert_int_equal(r.column_count, 5);
    assert_int_equal(r.cells[0].i, 7);
    assert_int_equal(r.cells[1].i, -3);
    assert_false(r.cells[2].is_null);
    assert_memory_equal(fl_row_cell_bytes(&r, &r.cells[2]), "label-7", 7);
    assert_int_equal(r.cells[2].len, 7);
    assert_true(r.cells[3].is_null);
    assert_true(r.cells[4].is_null);
    fl_row_free(&r);

    /* positions of the latest (id, label) in v1's batches: 0 and 3 */
    int32_t out[2];
    fl_error_t err;
    const int32_t want_pos[] = {0, 3};
    assert_int_equal(fl_schema_map_positions(&m, (const int32_t[]){0, 2}, 2, out, &err), 0);
    assert_memory_equal(out, want_pos, sizeof(want_pos));
    assert_int_equal(fl_schema_map_positions(&m, (const int32_t[]){0, 4}, 2, out, &err), 34);
    assert_string_equal(err.msg,
                        "Projected fields [0, 4] is out of bound for schema with 4 fields.");
    assert_int_equal(fl_schema_map_positions(&m, (const int32_t[]){9}, 1, out, &err), 34);
    assert_int_equal(fl_schema_map_positions(&m, (const int32_t[]){-1}, 1, out, &err), 34);
    fl_schema_map_free(&m);
    fl_schema_free(&s1);
    fl_schema_free(&s4);
}

static void test_type_mismatch_not_matched(void **state) {
    (void)state;
    const col_spec_t X[] = {{"id", 0, FL_TYPE_INTEGER}, {"v", 1, FL_TYPE_STRING}};
    const col_spec_t Y[] = {{"id", 0, FL_TYPE_INTEGER}, {"v", 1, FL_TYPE_BIGINT}};
    fl_schema_t x, y;
    make_schema(&x, X, 2);
    make_schema(&y, Y, 2);
    y.columns[0].type->nullable = false; /* nullability alone does not matter */
    fl_schema_map_t m;
    fl_schema_map_init(&m, &x, &y);
    assert_int_equal(m.source[0], 0);
    assert_int_equal(m.source[1], -1);
    assert_false(m.prefix);
    fl_schema_map_free(&m);
    fl_schema_free(&x);
    fl_schema_free(&y);
}

/* ---- the kv path: rows of schema ids 1 and 2 under a latest 3 ---- */

typedef struct kv_fixture {
    fl_schema_t s[3];
    fl_schema_map_t maps[3];
} kv_fixture_t;

static const fl_schema_map_t *fixture_map(const void *ctx, int16_t id) {
    const kv_fixture_t *f = ctx;
    return id >= 1 && id <= 3 ? &f->maps[id - 1] : NULL;
}

static void test_kv_rows_to_latest(void **state) {
    (void)state;
    kv_fixture_t f;
    make_schema(&f.s[0], V1, 4);
    make_schema(&f.s[1], V2, 5);
    make_schema(&f.s[2], V4, 5);
    for (int i = 0; i < 3; i++) fl_schema_map_init(&f.maps[i], &f.s[i], &f.s[2]);
    fl_kv_table_t t;
    memset(&t, 0, sizeof(t));
    t.latest = &f.s[2];
    t.latest_schema_id = 3;
    t.types_ctx = &f;
    t.latest_map = fixture_map;

    fl_row_t r;
    fl_row_init(&r, 5); /* a row of schema 2: id a b c d */
    for (int c = 0; c < 5; c++) {
        r.cells[c].is_null = false;
        r.cells[c].i = 100 + c;
    }
    fl_kv_row_to_latest(&t, 2, &r);
    assert_int_equal(r.column_count, 5);
    const int64_t want[] = {100, 102, 103, 104};
    for (int c = 0; c < 4; c++) assert_int_equal(r.cells[c].i, want[c]);
    assert_true(r.cells[4].is_null);
    fl_row_free(&r);

    /* no map (a table built without one): padded, as before */
    t.latest_map = NULL;
    fl_row_init(&r, 2);
    r.cells[1].is_null = false;
    r.cells[1].i = 5;
    fl_kv_row_to_latest(&t, 1, &r);
    assert_int_equal(r.column_count, 5);
    assert_int_equal(r.cells[1].i, 5);
    assert_true(r.cells[4].is_null);
    fl_row_free(&r);
    for (int i = 0; i < 3; i++) {
        fl_schema_map_free(&f.maps[i]);
        fl_schema_free(&f.s[i]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_is_a_prefix),
        cmocka_unit_test(test_drop_shifts),
        cmocka_unit_test(test_type_mismatch_not_matched),
        cmocka_unit_test(test_kv_rows_to_latest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
