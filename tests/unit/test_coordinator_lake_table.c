/*
 * test_coordinator_lake_table.c — the Iceberg table of a Fluss lake table
 * (coordinator_lake_table.h), read back from the metadata the calls
 * commit: a table with ROW, ARRAY and MAP columns gets the ids the
 * reference's Hadoop catalog gives (DESIGN.md's example exactly, and the
 * requiredness of every element, key, value and field); ALTER's ADD
 * COLUMN of nested types numbers each new column and then its inside
 * after last-column-id, before the system columns, kept columns keeping
 * theirs, and a second sync with nothing new commits nothing;
 * fl_lake_column_ids gives a column's ids in pre-order and refuses a
 * shape that differs; fl_lake_table_check takes nested columns.
 */
#define _GNU_SOURCE /* nftw (test_tmpdir.h) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coordinator_lake_table.h"
#include "lake_iceberg_table.h"
#include "test_tmpdir.h"

static fl_lake_config_t config(const char *warehouse) {
    fl_lake_config_t c;
    memset(&c, 0, sizeof(c));
    strcpy(c.format, "iceberg");
    snprintf(c.warehouse, sizeof(c.warehouse), "%s", warehouse);
    return c;
}

static fl_datatype_t *type_of(const char *sql) {
    const char *p = sql;
    fl_datatype_t *t = NULL;
    fl_error_t err = {0};
    if (fl_datatype_parse(&p, &t, &err)) fail_msg("%s: %s", sql, err.msg);
    return t;
}

static void add_column(fl_table_desc_t *d, const char *name, const char *sql) {
    fl_schema_add_column(&d->schema, name, type_of(sql), NULL);
}

/* A log table of the example's columns, bucketed by nothing, lake on. */
static void example_desc(fl_table_desc_t *d) {
    memset(d, 0, sizeof(*d));
    add_column(d, "a", "INT");
    add_column(d, "b", "ARRAY<ROW<x INT, y STRING NOT NULL>>");
    add_column(d, "c", "MAP<STRING, INT NOT NULL>");
    d->has_distribution = d->has_bucket_count = true;
    d->bucket_count = 3;
    fl_kvlist_set(&d->properties, "table.datalake.enabled", "true");
}

static void load_ok(const fl_lake_config_t *c, fl_ice_table_head_t *h) {
    char dir[8192];
    fl_error_t err = {0};
    assert_true(fl_lake_table_dir(c, "db", "t", dir, sizeof(dir)));
    fl_ice_table_head_init(h);
    if (fl_ice_table_load(dir, h, &err)) fail_msg("load: %s", err.msg);
}

static const fl_ice_schema_t *current(const fl_ice_table_head_t *h) {
    return fl_ice_meta_schema(&h->meta.meta, h->meta.meta.current_schema_id);
}

static void assert_field(const fl_ice_field_t *f, int32_t id, const char *name, bool required,
                         const char *type) {
    assert_non_null(f);
    assert_int_equal(f->id, id);
    assert_string_equal(f->name, name);
    assert_int_equal(f->required, required);
    if (type)
        assert_string_equal(f->type, type);
    else
        assert_non_null(f->nested);
}

/* The example columns' ids (and requiredness) in a schema. */
static void assert_example(const fl_ice_schema_t *s, size_t at_bucket) {
    assert_field(&s->fields[0], 1, "a", false, "int");
    const fl_ice_field_t *b = &s->fields[1], *c = &s->fields[2];
    assert_field(b, 2, "b", false, NULL);
    assert_int_equal(b->nested->kind, FL_ICE_LIST);
    const fl_ice_field_t *e = b->nested->element;
    assert_field(e, 7, "element", false, NULL); /* the ROW is nullable */
    assert_int_equal(e->nested->kind, FL_ICE_STRUCT);
    assert_int_equal(e->nested->n_fields, 2);
    assert_field(&e->nested->fields[0], 8, "x", false, "int");
    assert_field(&e->nested->fields[1], 9, "y", true, "string");
    assert_field(c, 3, "c", false, NULL);
    assert_int_equal(c->nested->kind, FL_ICE_MAP);
    assert_field(c->nested->key, 10, "key", true, "string");
    assert_field(c->nested->value, 11, "value", true, "int"); /* INT NOT NULL */
    assert_field(&s->fields[at_bucket], 4, "__bucket", true, "int");
    assert_field(&s->fields[at_bucket + 1], 5, "__offset", true, "long");
    assert_field(&s->fields[at_bucket + 2], 6, "__timestamp", true, "timestamptz");
}

static void test_create_nested(void **state) {
    fl_lake_config_t c = config(*state);
    fl_table_desc_t d;
    example_desc(&d);
    fl_error_t err = {0};
    assert_int_equal(fl_lake_table_check(&d, &c, &err), 0);
    if (fl_lake_table_create(&c, "db", "t", 42, &d, &err)) fail_msg("create: %s", err.msg);
    fl_ice_table_head_t h;
    load_ok(&c, &h);
    assert_int_equal(h.version, 1);
    assert_int_equal(h.meta.meta.last_column_id, 11);
    const fl_ice_schema_t *s = current(&h);
    assert_int_equal(s->n_fields, 6);
    assert_example(s, 3);
    /* spec and sort order still name the system columns by id */
    assert_int_equal(h.meta.meta.specs[0].fields[0].source_id, 4);
    assert_int_equal(h.meta.meta.sort_orders[0].fields[0].source_id, 5);
    fl_ice_table_head_reset(&h);
    fl_table_desc_free(&d);
}

/* DESIGN.md's example, word for word: every type nullable. */
static void test_create_design_example(void **state) {
    fl_lake_config_t c = config(*state);
    fl_table_desc_t d;
    memset(&d, 0, sizeof(d));
    add_column(&d, "a", "INT");
    add_column(&d, "b", "ARRAY<ROW<x INT, y STRING>>");
    add_column(&d, "c", "MAP<STRING, INT>");
    d.has_distribution = d.has_bucket_count = true;
    d.bucket_count = 1;
    fl_error_t err = {0};
    if (fl_lake_table_create(&c, "db", "t", 7, &d, &err)) fail_msg("create: %s", err.msg);
    fl_ice_table_head_t h;
    load_ok(&c, &h);
    const fl_ice_schema_t *s = current(&h);
    static const struct {
        int32_t id;
        const char *name;
    } want[] = {{1, "a"}, {2, "b"}, {3, "c"}, {4, "__bucket"}, {5, "__offset"},
                {6, "__timestamp"}, {7, "element"}, {8, "x"}, {9, "y"}, {10, "key"},
                {11, "value"}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const fl_ice_field_t *f = fl_ice_schema_find(s, want[i].id);
        assert_non_null(f);
        assert_string_equal(f->name, want[i].name);
    }
    assert_int_equal(h.meta.meta.last_column_id, 11);
    assert_null(fl_ice_schema_find(s, 12));
    assert_false(fl_ice_schema_find(s, 11)->required); /* value-required: false */
    assert_false(fl_ice_schema_find(s, 9)->required);
    assert_true(fl_ice_schema_find(s, 10)->required); /* keys always */
    fl_ice_table_head_reset(&h);
    fl_table_desc_free(&d);
}

static void collect(const fl_table_desc_t *d, const fl_ice_schema_t *s, const char *name,
                    int32_t *ids, size_t cap, size_t *n) {
    int idx = fl_schema_column_index(&d->schema, name);
    assert_true(idx >= 0);
    const fl_ice_field_t *f = NULL;
    for (size_t i = 0; i < s->n_fields && !f; i++)
        if (!strcmp(s->fields[i].name, name)) f = &s->fields[i];
    assert_non_null(f);
    fl_error_t err = {0};
    *n = 0;
    if (fl_lake_column_ids(d->schema.columns[idx].type, f, ids, cap, n, &err))
        fail_msg("ids of %s: %s", name, err.msg);
}

static void test_add_nested_columns(void **state) {
    fl_lake_config_t c = config(*state);
    fl_table_desc_t d;
    example_desc(&d);
    fl_error_t err = {0};
    if (fl_lake_table_create(&c, "db", "t", 42, &d, &err)) fail_msg("create: %s", err.msg);
    /* ALTER TABLE ADD COLUMN d ..., e ..., f ... (nullable, as Fluss adds) */
    add_column(&d, "d", "MAP<STRING, ARRAY<ROW<p INT NOT NULL>>>");
    add_column(&d, "e", "ROW<q INT, r ARRAY<BIGINT NOT NULL>>");
    add_column(&d, "f", "ROW<s ROW<u INT>, v INT>");
    if (fl_lake_table_sync(&c, "db", "t", 42, &d, false, &err)) fail_msg("sync: %s", err.msg);
    fl_ice_table_head_t h;
    load_ok(&c, &h);
    assert_int_equal(h.version, 2);
    assert_int_equal(h.meta.meta.n_schemas, 2);
    const fl_ice_schema_t *s = current(&h);
    assert_int_equal(s->n_fields, 9);
    assert_example(s, 6); /* the kept columns keep every id */
    /* d: the column, then its inside in assignFreshIds order */
    const fl_ice_field_t *fd = &s->fields[3];
    assert_field(fd, 12, "d", false, NULL);
    assert_field(fd->nested->key, 13, "key", true, "string");
    const fl_ice_field_t *dv = fd->nested->value;
    assert_field(dv, 14, "value", false, NULL);
    assert_field(dv->nested->element, 15, "element", false, NULL);
    assert_field(&dv->nested->element->nested->fields[0], 16, "p", true, "int");
    const fl_ice_field_t *fe = &s->fields[4];
    assert_field(fe, 17, "e", false, NULL);
    assert_field(&fe->nested->fields[0], 18, "q", false, "int");
    assert_field(&fe->nested->fields[1], 19, "r", false, NULL);
    assert_field(fe->nested->fields[1].nested->element, 20, "element", true, "long");
    /* f: a struct numbers its fields (s, v) before s's inside (u) */
    const fl_ice_field_t *ff = &s->fields[5];
    assert_field(ff, 21, "f", false, NULL);
    assert_field(&ff->nested->fields[0], 22, "s", false, NULL);
    assert_field(&ff->nested->fields[1], 23, "v", false, "int");
    assert_field(&ff->nested->fields[0].nested->fields[0], 24, "u", false, "int");
    assert_string_equal(s->fields[6].name, "__bucket");
    assert_int_equal(h.meta.meta.last_column_id, 24);

    /* the ids the tiering walks by: pre-order, not the numbering order */
    int32_t ids[16];
    size_t n;
    collect(&d, s, "b", ids, 16, &n);
    int32_t want_b[] = {2, 7, 8, 9};
    assert_int_equal(n, 4);
    assert_memory_equal(ids, want_b, sizeof(want_b));
    collect(&d, s, "c", ids, 16, &n);
    int32_t want_c[] = {3, 10, 11};
    assert_int_equal(n, 3);
    assert_memory_equal(ids, want_c, sizeof(want_c));
    collect(&d, s, "d", ids, 16, &n);
    int32_t want_d[] = {12, 13, 14, 15, 16};
    assert_int_equal(n, 5);
    assert_memory_equal(ids, want_d, sizeof(want_d));
    collect(&d, s, "f", ids, 16, &n);
    int32_t want_f[] = {21, 22, 24, 23};
    assert_int_equal(n, 4);
    assert_memory_equal(ids, want_f, sizeof(want_f));
    collect(&d, s, "a", ids, 16, &n);
    assert_int_equal(n, 1);
    assert_int_equal(ids[0], 1);

    /* nothing new: no new version */
    if (fl_lake_table_sync(&c, "db", "t", 42, &d, false, &err)) fail_msg("sync 2: %s", err.msg);
    fl_ice_table_head_reset(&h);
    load_ok(&c, &h);
    assert_int_equal(h.version, 2);
    /* the ALTER path with the lake on (the check first) takes them too */
    if (fl_lake_table_sync(&c, "db", "t", 42, &d, true, &err)) fail_msg("sync 3: %s", err.msg);
    fl_ice_table_head_reset(&h);
    load_ok(&c, &h);
    assert_int_equal(h.version, 2);
    fl_ice_table_head_reset(&h);
    fl_table_desc_free(&d);
}

static void test_column_ids_refusals(void **state) {
    fl_lake_config_t c = config(*state);
    fl_table_desc_t d;
    example_desc(&d);
    fl_error_t err = {0};
    if (fl_lake_table_create(&c, "db", "t", 42, &d, &err)) fail_msg("create: %s", err.msg);
    fl_ice_table_head_t h;
    load_ok(&c, &h);
    const fl_ice_schema_t *s = current(&h);
    int32_t ids[8];
    size_t n = 0;
    static const struct {
        const char *type;
        size_t column;
        int code;
        const char *text;
    } bad[] = {
        {"ARRAY<INT>", 2, FLUSS_ERR__STATE, "lake column c: field 3 does not have the shape"},
        {"MAP<STRING, BIGINT>", 2, FLUSS_ERR__STATE, "lake column c: field 11 is not the long"},
        {"ARRAY<ROW<x INT, z STRING>>", 1, FLUSS_ERR__STATE, "lake column b: field 7 does not"},
        {"ARRAY<ROW<x INT>>", 1, FLUSS_ERR__STATE, "lake column b: field 7 does not"},
        {"ARRAY<ROW<x INT, y ARRAY<STRING>>>", 1, FLUSS_ERR__STATE, "field 9 does not have"},
        {"ROW<x INT>", 0, FLUSS_ERR__STATE, "lake column a: field 1 does not have the shape"},
        {"STRING", 0, FLUSS_ERR__STATE, "lake column a: field 1 is not the string"},
        {"INT", 1, FLUSS_ERR__STATE, "lake column b: field 2 is not the int"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        fl_datatype_t *t = type_of(bad[i].type);
        n = 0;
        int rc = fl_lake_column_ids(t, &s->fields[bad[i].column], ids, 8, &n, &err);
        if (rc != bad[i].code || !strstr(err.msg, bad[i].text))
            fail_msg("%s: got %d \"%s\", want %d \"%s\"", bad[i].type, rc, err.msg, bad[i].code,
                     bad[i].text);
        fl_datatype_destroy(t);
    }
    /* TINYINT is an Iceberg int too; and a full buffer is the caller's */
    fl_datatype_t *t = type_of("TINYINT");
    n = 0;
    assert_int_equal(fl_lake_column_ids(t, &s->fields[0], ids, 8, &n, &err), 0);
    fl_datatype_destroy(t);
    n = 0;
    assert_int_equal(fl_lake_column_ids(d.schema.columns[1].type, &s->fields[1], ids, 3, &n, &err),
                     FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(err.msg, "lake column b: more than 3 fields"));
    n = 1; /* appended after what is there */
    ids[0] = -5;
    assert_int_equal(fl_lake_column_ids(d.schema.columns[2].type, &s->fields[2], ids, 8, &n, &err), 0);
    assert_int_equal(n, 4);
    assert_int_equal(ids[0], -5);
    assert_int_equal(ids[1], 3);
    fl_ice_table_head_reset(&h);
    fl_table_desc_free(&d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_nested, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_design_example, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_nested_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_column_ids_refusals, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
