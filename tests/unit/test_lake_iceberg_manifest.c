/*
 * test_lake_iceberg_manifest.c — Iceberg v2 manifests and manifest lists
 * (lake_iceberg_manifest.h): round trips of a partitioned manifest
 * (identity int/string/date/long and bucket fields, nulls, stats present
 * and absent), an unpartitioned one and a delete manifest; the summary a
 * manifest list needs; round trips of a manifest list; the header keys
 * and the field ids of the written schema; files on disk with their exact
 * length; bad input to the writers refused with INVALID_ARG, and corrupt
 * bytes (every truncation, flipped bytes, wrong headers) refused by the
 * readers with an error, never a crash.
 */
#define _GNU_SOURCE /* nftw (test_tmpdir.h) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "lake_avro_file.h"
#include "lake_iceberg_manifest.h"
#include "lake_iceberg_manifest_int.h"
#include "test_tmpdir.h"

#define assert_error(rc, e, code_, text)                                       \
    do {                                                                       \
        assert_int_equal((rc), (code_));                                       \
        assert_int_equal((e).code, (code_));                                   \
        if (!strstr((e).msg, (text))) fail_msg("message \"%s\" lacks \"%s\"", (e).msg, (text)); \
    } while (0)

static const char SCHEMA[] =
    "{\"type\":\"struct\",\"schema-id\":3,\"fields\":[{\"id\":1,\"name\":\"id\",\"required\":true,"
    "\"type\":\"long\"},{\"id\":2,\"name\":\"name\",\"required\":false,\"type\":\"string\"}]}";

static const fl_ice_partition_field_t FIELDS[] = {
    {"__bucket", 5, 1000, FL_ICE_IDENTITY, 0, FL_ICE_INT},
    {"region", 2, 1001, FL_ICE_IDENTITY, 0, FL_ICE_STRING},
    {"day", 4, 1002, FL_ICE_IDENTITY, 0, FL_ICE_DATE},
    {"id_bucket", 1, 1003, FL_ICE_BUCKET, 16, FL_ICE_INT},
    {"big", 6, 1004, FL_ICE_IDENTITY, 0, FL_ICE_LONG},
};

#define STR(s) ((fl_avro_bytes_t){(const uint8_t *)(s), sizeof(s) - 1})
#define NONE_STATS FL_ICE_NONE, FL_ICE_NONE, FL_ICE_NONE, FL_ICE_NONE

static const uint8_t LO1[] = {1, 0, 0, 0, 0, 0, 0, 0}, HI1[] = {99, 0, 0, 0, 0, 0, 0, 0};

static const fl_ice_value_t PART[3][5] = {
    {{false, 3, {0}}, {false, 0, STR("eu")}, {false, 19000, {0}}, {false, 7, {0}},
     {false, -5, {0}}},
    {{false, 1, {0}}, {true, 0, {0}}, {false, -2, {0}}, {false, 15, {0}},
     {false, INT64_MAX, {0}}},
    {{false, 2, {0}}, {false, 0, STR("")}, {true, 0, {0}}, {false, 0, {0}}, {true, 0, {0}}},
};

static const fl_ice_column_stats_t STATS[] = {
    {1, 120, 10, 0, FL_ICE_NONE, {LO1, 8}, {HI1, 8}},
    {2, 340, 10, 4, FL_ICE_NONE, STR("a"), STR("zz")},
    {7, FL_ICE_NONE, 10, FL_ICE_NONE, 0, STR(""), {0}},
};
static const int64_t SPLITS[] = {4, 1000, 90000};
static const int32_t EQ_IDS[] = {1, 2};

static fl_ice_manifest_entry_t entry(fl_ice_status_t st, const char *path, const fl_ice_value_t *p,
                                     int64_t rows) {
    fl_ice_manifest_entry_t e = {st, FL_ICE_NONE, FL_ICE_NONE, FL_ICE_NONE, {0}};
    e.file.content = FL_ICE_DATA;
    e.file.file_path = path;
    e.file.file_format = "PARQUET";
    e.file.partition = p;
    e.file.record_count = rows;
    e.file.file_size_bytes = 1000 + rows;
    e.file.sort_order_id = FL_ICE_NO_ORDER;
    return e;
}

/* Three data files in a partitioned manifest: stats, splits and sort order
 * in the first; nothing optional in the second; an existing entry with
 * explicit ids and sequence numbers third. */
static void partitioned(fl_ice_manifest_t *m, fl_ice_manifest_entry_t e[3]) {
    e[0] = entry(FL_ICE_ADDED, "file:///wh/db/t/data/__bucket=3/a.parquet", PART[0], 10);
    e[0].file.columns = STATS;
    e[0].file.n_columns = 3;
    e[0].file.split_offsets = SPLITS;
    e[0].file.n_split_offsets = 3;
    e[0].file.sort_order_id = 1;
    e[1] = entry(FL_ICE_ADDED, "file:///wh/db/t/data/__bucket=1/b.parquet", PART[1], 0);
    e[2] = entry(FL_ICE_EXISTING, "file:///wh/db/t/data/__bucket=2/c.parquet", PART[2], 77);
    e[2].snapshot_id = 41;
    e[2].sequence_number = 5;
    e[2].file_sequence_number = 6;
    e[2].file.columns = STATS + 2;
    e[2].file.n_columns = 1;
    *m = (fl_ice_manifest_t){FL_ICE_MANIFEST_DATA, SCHEMA, 3, {2, FIELDS, 5}, 42, e, 3};
}

static void assert_bytes_equal(fl_avro_bytes_t a, fl_avro_bytes_t b) {
    assert_int_equal(a.p == NULL, b.p == NULL);
    if (!a.p) return;
    assert_int_equal(a.len, b.len);
    if (a.len) assert_memory_equal(a.p, b.p, a.len);
}

static void assert_file_equal(const fl_ice_partition_spec_t *spec, const fl_ice_data_file_t *a,
                              const fl_ice_data_file_t *b) {
    assert_int_equal(a->content, b->content);
    assert_string_equal(a->file_path, b->file_path);
    assert_string_equal(a->file_format, b->file_format);
    for (size_t i = 0; i < spec->n_fields; i++) {
        assert_int_equal(a->partition[i].null, b->partition[i].null);
        if (a->partition[i].null) continue;
        if (spec->fields[i].type == FL_ICE_STRING)
            assert_bytes_equal(a->partition[i].s, b->partition[i].s);
        else
            assert_int_equal(a->partition[i].i, b->partition[i].i);
    }
    assert_int_equal(a->record_count, b->record_count);
    assert_int_equal(a->file_size_bytes, b->file_size_bytes);
    assert_int_equal(a->n_columns, b->n_columns);
    for (size_t c = 0; c < a->n_columns; c++) {
        const fl_ice_column_stats_t *x = &a->columns[c], *y = &b->columns[c];
        assert_int_equal(x->field_id, y->field_id);
        assert_int_equal(x->column_size, y->column_size);
        assert_int_equal(x->value_count, y->value_count);
        assert_int_equal(x->null_count, y->null_count);
        assert_int_equal(x->nan_count, y->nan_count);
        assert_bytes_equal(x->lower, y->lower);
        assert_bytes_equal(x->upper, y->upper);
    }
    assert_int_equal(a->n_split_offsets, b->n_split_offsets);
    for (size_t i = 0; i < a->n_split_offsets; i++)
        assert_int_equal(a->split_offsets[i], b->split_offsets[i]);
    assert_int_equal(a->n_equality_ids, b->n_equality_ids);
    for (size_t i = 0; i < a->n_equality_ids; i++)
        assert_int_equal(a->equality_ids[i], b->equality_ids[i]);
    assert_int_equal(a->sort_order_id, b->sort_order_id);
}

static void assert_manifest_equal(const fl_ice_manifest_t *a, const fl_ice_manifest_t *b) {
    assert_int_equal(a->content, b->content);
    assert_string_equal(a->schema_json, b->schema_json);
    assert_int_equal(a->schema_id, b->schema_id);
    assert_int_equal(a->spec.spec_id, b->spec.spec_id);
    assert_int_equal(a->spec.n_fields, b->spec.n_fields);
    for (size_t i = 0; i < a->spec.n_fields; i++) {
        const fl_ice_partition_field_t *x = &a->spec.fields[i], *y = &b->spec.fields[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->source_id, y->source_id);
        assert_int_equal(x->field_id, y->field_id);
        assert_int_equal(x->transform, y->transform);
        if (x->transform == FL_ICE_BUCKET) assert_int_equal(x->buckets, y->buckets);
        assert_int_equal(x->type, y->type);
    }
    assert_int_equal(a->n_entries, b->n_entries);
    for (size_t e = 0; e < a->n_entries; e++) {
        assert_int_equal(a->entries[e].status, b->entries[e].status);
        assert_int_equal(a->entries[e].snapshot_id, b->entries[e].snapshot_id);
        assert_int_equal(a->entries[e].sequence_number, b->entries[e].sequence_number);
        assert_int_equal(a->entries[e].file_sequence_number, b->entries[e].file_sequence_number);
        assert_file_equal(&a->spec, &a->entries[e].file, &b->entries[e].file);
    }
}

/* encode, decode, compare; returns the summary (caller resets it) */
static void round_trip(const fl_ice_manifest_t *m, fl_ice_manifest_summary_t *s, fl_buf_t *bytes) {
    fl_error_t err;
    fl_buf_init(bytes);
    fl_ice_manifest_summary_init(s);
    assert_int_equal(fl_ice_manifest_encode(m, bytes, s, &err), 0);
    assert_int_equal(s->file.manifest_length, (int64_t)bytes->len);
    fl_ice_manifest_read_t r;
    fl_ice_manifest_read_init(&r);
    int rc = fl_ice_manifest_decode(bytes->data, bytes->len, &r, &err);
    if (rc) fail_msg("decode: %s", err.msg);
    assert_int_equal(r.manifest.snapshot_id, FL_ICE_NONE);
    assert_manifest_equal(m, &r.manifest);
    fl_ice_manifest_read_reset(&r);
}

static void test_partitioned_round_trip(void **state) {
    (void)state;
    fl_ice_manifest_t m;
    fl_ice_manifest_entry_t e[3];
    partitioned(&m, e);
    fl_ice_manifest_summary_t s;
    fl_buf_t b;
    round_trip(&m, &s, &b);
    const fl_ice_manifest_file_t *f = &s.file;
    assert_string_equal(f->manifest_path, "");
    assert_int_equal(f->partition_spec_id, 2);
    assert_int_equal(f->content, FL_ICE_MANIFEST_DATA);
    assert_int_equal(f->added_snapshot_id, 42);
    assert_int_equal(f->sequence_number, FL_ICE_NONE);
    assert_int_equal(f->min_sequence_number, 5); /* the existing entry's */
    assert_int_equal(f->added_files_count, 2);
    assert_int_equal(f->existing_files_count, 1);
    assert_int_equal(f->deleted_files_count, 0);
    assert_int_equal(f->added_rows_count, 10);
    assert_int_equal(f->existing_rows_count, 77);
    assert_int_equal(f->n_partitions, 5);
    uint8_t x[8];
    /* __bucket: 1..3, no null */
    assert_false(f->partitions[0].contains_null);
    assert_int_equal(f->partitions[0].contains_nan, 0);
    assert_bytes_equal(f->partitions[0].lower, (fl_avro_bytes_t){x, fl_ice_bound_int(1, x)});
    assert_bytes_equal(f->partitions[0].upper, (fl_avro_bytes_t){x, fl_ice_bound_int(3, x)});
    /* region: "" .. "eu", a null */
    assert_true(f->partitions[1].contains_null);
    assert_bytes_equal(f->partitions[1].lower, STR(""));
    assert_bytes_equal(f->partitions[1].upper, STR("eu"));
    /* day: -2 .. 19000 */
    assert_true(f->partitions[2].contains_null);
    assert_bytes_equal(f->partitions[2].lower, (fl_avro_bytes_t){x, fl_ice_bound_int(-2, x)});
    assert_bytes_equal(f->partitions[2].upper, (fl_avro_bytes_t){x, fl_ice_bound_int(19000, x)});
    assert_bytes_equal(f->partitions[3].lower, (fl_avro_bytes_t){x, fl_ice_bound_int(0, x)});
    assert_bytes_equal(f->partitions[3].upper, (fl_avro_bytes_t){x, fl_ice_bound_int(15, x)});
    assert_bytes_equal(f->partitions[4].lower, (fl_avro_bytes_t){x, fl_ice_bound_long(-5, x)});
    assert_bytes_equal(f->partitions[4].upper,
                       (fl_avro_bytes_t){x, fl_ice_bound_long(INT64_MAX, x)});
    fl_ice_manifest_summary_reset(&s);
    fl_buf_free(&b);
}

static void test_unpartitioned_and_deletes(void **state) {
    (void)state;
    fl_ice_manifest_entry_t e[2];
    e[0] = entry(FL_ICE_ADDED, "file:///wh/t/data/x.parquet", NULL, 5);
    e[0].file.columns = STATS;
    e[0].file.n_columns = 2;
    e[1] = entry(FL_ICE_DELETED, "file:///wh/t/data/y.parquet", NULL, 9);
    e[1].sequence_number = e[1].file_sequence_number = 2;
    fl_ice_manifest_t m = {FL_ICE_MANIFEST_DATA, SCHEMA, 0, {0, NULL, 0}, 7, e, 2};
    fl_ice_manifest_summary_t s;
    fl_buf_t b;
    round_trip(&m, &s, &b);
    assert_int_equal(s.file.n_partitions, 0);
    assert_non_null(s.file.partitions);
    assert_int_equal(s.file.deleted_files_count, 1);
    assert_int_equal(s.file.deleted_rows_count, 9);
    assert_int_equal(s.file.min_sequence_number, FL_ICE_NONE); /* deleted: not live */
    fl_ice_manifest_summary_reset(&s);
    fl_buf_free(&b);

    /* a delete manifest: position and equality deletes */
    e[0] = entry(FL_ICE_ADDED, "file:///wh/t/data/pos.parquet", PART[0], 3);
    e[0].file.content = FL_ICE_POSITION_DELETES;
    e[1] = entry(FL_ICE_ADDED, "file:///wh/t/data/eq.parquet", PART[1], 4);
    e[1].file.content = FL_ICE_EQUALITY_DELETES;
    e[1].file.equality_ids = EQ_IDS;
    e[1].file.n_equality_ids = 2;
    m = (fl_ice_manifest_t){FL_ICE_MANIFEST_DELETES, SCHEMA, 1, {2, FIELDS, 5}, 8, e, 2};
    round_trip(&m, &s, &b);
    assert_int_equal(s.file.content, FL_ICE_MANIFEST_DELETES);
    fl_ice_manifest_summary_reset(&s);
    fl_buf_free(&b);

    /* no entries at all */
    m = (fl_ice_manifest_t){FL_ICE_MANIFEST_DATA, SCHEMA, 0, {0, FIELDS, 1}, 8, NULL, 0};
    round_trip(&m, &s, &b);
    assert_null(s.file.partitions[0].lower.p);
    assert_false(s.file.partitions[0].contains_null);
    fl_ice_manifest_summary_reset(&s);
    fl_buf_free(&b);
}

static const char *meta(const fl_avro_file_reader_t *r, const char *key, char *buf) {
    const fl_avro_meta_t *m = fl_avro_file_reader_meta(r, key);
    if (!m) return NULL;
    memcpy(buf, m->value, m->len);
    buf[m->len] = 0;
    return buf;
}

static const fl_avro_schema_t *field_type(const fl_avro_schema_t *rec, const char *name,
                                          int32_t id) {
    int i = fl_avro_schema_field_index(rec, name);
    if (i < 0) fail_msg("no field %s", name);
    assert_int_equal(rec->fields[i].field_id, id);
    const fl_avro_schema_t *t = rec->fields[i].type;
    return t->type == FL_AVRO_UNION ? t->branches[t->n_branches - 1] : t;
}

static void assert_int_map(const fl_avro_schema_t *df, const char *name, int32_t id, int32_t k,
                           int32_t v) {
    const fl_avro_schema_t *a = field_type(df, name, id);
    assert_int_equal(a->type, FL_AVRO_ARRAY);
    assert_string_equal(a->logical_type, "map");
    char rn[32];
    snprintf(rn, sizeof(rn), "k%d_v%d", k, v);
    assert_string_equal(a->items->name, rn);
    field_type(a->items, "key", k);
    field_type(a->items, "value", v);
}

static void test_header_and_field_ids(void **state) {
    (void)state;
    fl_ice_manifest_t m;
    fl_ice_manifest_entry_t e[3];
    partitioned(&m, e);
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t err;
    assert_int_equal(fl_ice_manifest_encode(&m, &b, NULL, &err), 0);
    fl_avro_file_reader_t *r;
    assert_int_equal(fl_avro_file_reader_open_bytes(b.data, b.len, &r, &err), 0);
    char buf[1024];
    assert_string_equal(meta(r, "schema", buf), SCHEMA);
    assert_string_equal(meta(r, "schema-id", buf), "3");
    assert_string_equal(meta(r, "partition-spec-id", buf), "2");
    assert_string_equal(meta(r, "format-version", buf), "2");
    assert_string_equal(meta(r, "content", buf), "data");
    assert_string_equal(
        meta(r, "partition-spec", buf),
        "[{\"name\":\"__bucket\",\"transform\":\"identity\",\"source-id\":5,\"field-id\":1000},"
        "{\"name\":\"region\",\"transform\":\"identity\",\"source-id\":2,\"field-id\":1001},"
        "{\"name\":\"day\",\"transform\":\"identity\",\"source-id\":4,\"field-id\":1002},"
        "{\"name\":\"id_bucket\",\"transform\":\"bucket[16]\",\"source-id\":1,\"field-id\":1003},"
        "{\"name\":\"big\",\"transform\":\"identity\",\"source-id\":6,\"field-id\":1004}]");
    const fl_avro_schema_t *s = fl_avro_file_reader_schema(r);
    assert_string_equal(s->name, "manifest_entry");
    field_type(s, "status", 0);
    field_type(s, "snapshot_id", 1);
    field_type(s, "sequence_number", 3);
    field_type(s, "file_sequence_number", 4);
    const fl_avro_schema_t *df = field_type(s, "data_file", 2);
    assert_string_equal(df->name, "r2");
    static const struct { const char *name; int32_t id; } DF[] = {
        {"content", 134}, {"file_path", 100}, {"file_format", 101}, {"partition", 102},
        {"record_count", 103}, {"file_size_in_bytes", 104}, {"sort_order_id", 140}};
    for (size_t i = 0; i < sizeof(DF) / sizeof(DF[0]); i++) field_type(df, DF[i].name, DF[i].id);
    assert_int_map(df, "column_sizes", 108, 117, 118);
    assert_int_map(df, "value_counts", 109, 119, 120);
    assert_int_map(df, "null_value_counts", 110, 121, 122);
    assert_int_map(df, "nan_value_counts", 137, 138, 139);
    assert_int_map(df, "lower_bounds", 125, 126, 127);
    assert_int_map(df, "upper_bounds", 128, 129, 130);
    assert_int_equal(field_type(df, "split_offsets", 132)->element_id, 133);
    assert_int_equal(field_type(df, "equality_ids", 135)->element_id, 136);
    const fl_avro_schema_t *p = field_type(df, "partition", 102);
    assert_string_equal(p->name, "r102");
    assert_int_equal(field_type(p, "__bucket", 1000)->type, FL_AVRO_INT);
    assert_int_equal(field_type(p, "region", 1001)->type, FL_AVRO_STRING);
    assert_string_equal(field_type(p, "day", 1002)->logical_type, "date");
    assert_int_equal(field_type(p, "id_bucket", 1003)->type, FL_AVRO_INT);
    assert_int_equal(field_type(p, "big", 1004)->type, FL_AVRO_LONG);
    fl_avro_file_reader_destroy(r);
    fl_buf_free(&b);
}

static void test_list_round_trip(void **state) {
    (void)state;
    fl_ice_manifest_t m;
    fl_ice_manifest_entry_t e[3];
    partitioned(&m, e);
    fl_ice_manifest_summary_t s;
    fl_buf_t b;
    round_trip(&m, &s, &b);
    fl_buf_free(&b);
    static const uint8_t KEY[] = {9, 8, 7};
    fl_ice_manifest_file_t files[2] = {s.file, {0}};
    files[0].manifest_path = "file:///wh/db/t/metadata/m0.avro";
    files[1] = (fl_ice_manifest_file_t){"file:///wh/db/t/metadata/old.avro", 5000, 1,
                                        FL_ICE_MANIFEST_DELETES, 3, 2, 40, 0, 7, 1, 0, 700, 9,
                                        NULL, 0, {KEY, 3}};
    fl_ice_manifest_list_t l = {43, 41, 6, files, 2};
    fl_error_t err;
    fl_buf_init(&b);
    assert_int_equal(fl_ice_manifest_list_encode(&l, &b, &err), 0);
    fl_ice_manifest_list_read_t r;
    fl_ice_manifest_list_read_init(&r);
    int rc = fl_ice_manifest_list_decode(b.data, b.len, &r, &err);
    if (rc) fail_msg("%s", err.msg);
    assert_int_equal(r.list.snapshot_id, 43);
    assert_int_equal(r.list.parent_snapshot_id, 41);
    assert_int_equal(r.list.sequence_number, 6);
    assert_int_equal(r.list.n_manifests, 2);
    for (size_t i = 0; i < 2; i++) {
        const fl_ice_manifest_file_t *x = &files[i], *y = &r.list.manifests[i];
        assert_string_equal(x->manifest_path, y->manifest_path);
        assert_int_equal(x->manifest_length, y->manifest_length);
        assert_int_equal(x->partition_spec_id, y->partition_spec_id);
        assert_int_equal(x->content, y->content);
        assert_int_equal(x->added_snapshot_id, y->added_snapshot_id);
        assert_int_equal(x->added_files_count, y->added_files_count);
        assert_int_equal(x->existing_files_count, y->existing_files_count);
        assert_int_equal(x->deleted_files_count, y->deleted_files_count);
        assert_int_equal(x->added_rows_count, y->added_rows_count);
        assert_int_equal(x->existing_rows_count, y->existing_rows_count);
        assert_int_equal(x->deleted_rows_count, y->deleted_rows_count);
        assert_int_equal(x->n_partitions, y->n_partitions);
        assert_int_equal(x->partitions == NULL, y->partitions == NULL);
        for (size_t p = 0; p < x->n_partitions; p++) {
            assert_int_equal(x->partitions[p].contains_null, y->partitions[p].contains_null);
            assert_int_equal(x->partitions[p].contains_nan, y->partitions[p].contains_nan);
            assert_bytes_equal(x->partitions[p].lower, y->partitions[p].lower);
            assert_bytes_equal(x->partitions[p].upper, y->partitions[p].upper);
        }
        assert_bytes_equal(x->key_metadata, y->key_metadata);
    }
    /* the new manifest gets the list's sequence number; min stays 5 */
    assert_int_equal(r.list.manifests[0].sequence_number, 6);
    assert_int_equal(r.list.manifests[0].min_sequence_number, 5);
    assert_int_equal(r.list.manifests[1].sequence_number, 3);
    assert_int_equal(r.list.manifests[1].min_sequence_number, 2);
    fl_ice_manifest_list_read_reset(&r);

    /* no parent: "null" in the header, as Java writes it */
    fl_avro_file_reader_t *ar;
    l.parent_snapshot_id = FL_ICE_NONE;
    l.n_manifests = 0;
    fl_buf_reset(&b);
    assert_int_equal(fl_ice_manifest_list_encode(&l, &b, &err), 0);
    assert_int_equal(fl_avro_file_reader_open_bytes(b.data, b.len, &ar, &err), 0);
    char buf[64];
    assert_string_equal(meta(ar, "parent-snapshot-id", buf), "null");
    assert_string_equal(meta(ar, "snapshot-id", buf), "43");
    assert_string_equal(meta(ar, "sequence-number", buf), "6");
    assert_string_equal(meta(ar, "format-version", buf), "2");
    const fl_avro_schema_t *ms = fl_avro_file_reader_schema(ar);
    assert_string_equal(ms->name, "manifest_file");
    static const struct { const char *name; int32_t id; } MF[] = {
        {"manifest_path", 500}, {"manifest_length", 501}, {"partition_spec_id", 502},
        {"content", 517}, {"sequence_number", 515}, {"min_sequence_number", 516},
        {"added_snapshot_id", 503}, {"added_files_count", 504}, {"existing_files_count", 505},
        {"deleted_files_count", 506}, {"added_rows_count", 512}, {"existing_rows_count", 513},
        {"deleted_rows_count", 514}, {"key_metadata", 519}};
    for (size_t i = 0; i < sizeof(MF) / sizeof(MF[0]); i++) field_type(ms, MF[i].name, MF[i].id);
    const fl_avro_schema_t *parts = field_type(ms, "partitions", 507);
    assert_int_equal(parts->element_id, 508);
    assert_string_equal(parts->items->name, "r508");
    field_type(parts->items, "contains_null", 509);
    field_type(parts->items, "contains_nan", 518);
    field_type(parts->items, "lower_bound", 510);
    field_type(parts->items, "upper_bound", 511);
    fl_avro_file_reader_destroy(ar);
    assert_int_equal(fl_ice_manifest_list_decode(b.data, b.len, &r, &err), 0);
    assert_int_equal(r.list.parent_snapshot_id, FL_ICE_NONE);
    assert_int_equal(r.list.n_manifests, 0);
    fl_ice_manifest_list_read_reset(&r);
    fl_buf_free(&b);
    fl_ice_manifest_summary_reset(&s);
}

static void test_files_on_disk(void **state) {
    const char *dir = *state;
    char mpath[512], lpath[512];
    snprintf(mpath, sizeof(mpath), "%s/m0.avro", dir);
    snprintf(lpath, sizeof(lpath), "%s/snap-1.avro", dir);
    fl_ice_manifest_t m;
    fl_ice_manifest_entry_t e[3];
    partitioned(&m, e);
    fl_ice_manifest_summary_t s;
    fl_ice_manifest_summary_init(&s);
    fl_error_t err;
    assert_int_equal(fl_ice_manifest_write(mpath, &m, &s, &err), 0);
    struct stat st;
    assert_int_equal(stat(mpath, &st), 0);
    assert_int_equal(s.file.manifest_length, st.st_size);
    assert_string_equal(s.file.manifest_path, mpath);
    fl_ice_manifest_read_t r;
    fl_ice_manifest_read_init(&r);
    assert_int_equal(fl_ice_manifest_read(mpath, &r, &err), 0);
    assert_manifest_equal(&m, &r.manifest);
    fl_ice_manifest_read_reset(&r);
    fl_ice_manifest_list_t l = {1, FL_ICE_NONE, 1, &s.file, 1};
    uint64_t len = 0;
    assert_int_equal(fl_ice_manifest_list_write(lpath, &l, &len, &err), 0);
    assert_int_equal(stat(lpath, &st), 0);
    assert_int_equal(len, (uint64_t)st.st_size);
    fl_ice_manifest_list_read_t lr;
    fl_ice_manifest_list_read_init(&lr);
    assert_int_equal(fl_ice_manifest_list_read(lpath, &lr, &err), 0);
    assert_string_equal(lr.list.manifests[0].manifest_path, mpath);
    assert_int_equal(lr.list.manifests[0].sequence_number, 1);
    /* a manifest list is not a manifest, and the other way round */
    assert_int_not_equal(fl_ice_manifest_read(lpath, &r, &err), 0);
    assert_int_not_equal(fl_ice_manifest_list_read(mpath, &lr, &err), 0);
    assert_error(fl_ice_manifest_read("/nonexistent/m.avro", &r, &err), err, FLUSS_ERR__IO, "");
    fl_ice_manifest_list_read_reset(&lr);
    fl_ice_manifest_read_reset(&r);
    fl_ice_manifest_summary_reset(&s);
}

static void test_writer_refuses(void **state) {
    (void)state;
    fl_ice_manifest_t m;
    fl_ice_manifest_entry_t e[3];
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t err;
    static const fl_ice_column_stats_t UNSORTED[] = {{2, 1, 1, 0, 0, {0}, {0}},
                                                      {1, 1, 1, 0, 0, {0}, {0}}};
    partitioned(&m, e);
    e[1].file.columns = UNSORTED;
    e[1].file.n_columns = 2;
    assert_error(fl_ice_manifest_encode(&m, &b, NULL, &err), err, FLUSS_ERR__INVALID_ARG,
                 "manifest entry 1: stats field ids not ascending");
    partitioned(&m, e);
    e[2].sequence_number = FL_ICE_NONE;
    assert_error(fl_ice_manifest_encode(&m, &b, NULL, &err), err, FLUSS_ERR__INVALID_ARG,
                 "needs its sequence numbers");
    partitioned(&m, e);
    e[0].file.content = FL_ICE_POSITION_DELETES;
    assert_error(fl_ice_manifest_encode(&m, &b, NULL, &err), err, FLUSS_ERR__INVALID_ARG,
                 "content 1 in a data manifest");
    partitioned(&m, e);
    e[0].file.equality_ids = EQ_IDS;
    e[0].file.n_equality_ids = 2;
    assert_error(fl_ice_manifest_encode(&m, &b, NULL, &err), err, FLUSS_ERR__INVALID_ARG,
                 "equality ids");
    partitioned(&m, e);
    static const int64_t BACKWARDS[] = {10, 4};
    e[0].file.split_offsets = BACKWARDS;
    e[0].file.n_split_offsets = 2;
    assert_error(fl_ice_manifest_encode(&m, &b, NULL, &err), err, FLUSS_ERR__INVALID_ARG,
                 "not ascending");
    partitioned(&m, e);
    e[0].file.record_count = e[1].file.record_count = INT64_MAX;
    assert_error(fl_ice_manifest_encode(&m, &b, NULL, &err), err, FLUSS_ERR__INVALID_ARG,
                 "row counts overflow");
    partitioned(&m, e);
    fl_ice_value_t wide[5];
    memcpy(wide, PART[0], sizeof(wide));
    wide[2].i = INT64_C(1) << 40;
    e[0].file.partition = wide;
    assert_error(fl_ice_manifest_encode(&m, &b, NULL, &err), err, FLUSS_ERR__INVALID_ARG,
                 "partition value 2 over 32 bits");
    partitioned(&m, e);
    fl_ice_partition_field_t bad[2] = {FIELDS[0], FIELDS[1]};
    m.spec.fields = bad;
    m.spec.n_fields = 2;
    bad[1].name = "a-b";
    assert_error(fl_ice_manifest_encode(&m, &b, NULL, &err), err, FLUSS_ERR__INVALID_ARG,
                 "partition field 1 malformed");
    bad[1] = FIELDS[3];
    bad[1].type = FL_ICE_STRING;
    assert_error(fl_ice_manifest_encode(&m, &b, NULL, &err), err, FLUSS_ERR__INVALID_ARG,
                 "bad transform");
    bad[1] = FIELDS[0];
    assert_error(fl_ice_manifest_encode(&m, &b, NULL, &err), err, FLUSS_ERR__INVALID_ARG,
                 "repeats");
    assert_int_equal(b.len, 0);
    fl_ice_manifest_list_t l = {-3, FL_ICE_NONE, 1, NULL, 0};
    assert_error(fl_ice_manifest_list_encode(&l, &b, &err), err, FLUSS_ERR__INVALID_ARG,
                 "manifest list");
    fl_buf_free(&b);
}

/* The bytes of the partitioned manifest, with one header value replaced
 * (NULL: left out). */
static void encode_with_meta(const char *key, const char *value, fl_buf_t *out) {
    fl_ice_manifest_t m;
    fl_ice_manifest_entry_t e[3];
    partitioned(&m, e);
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t err;
    assert_int_equal(fl_ice_manifest_encode(&m, &b, NULL, &err), 0);
    fl_avro_file_reader_t *r;
    assert_int_equal(fl_avro_file_reader_open_bytes(b.data, b.len, &r, &err), 0);
    fl_avro_meta_t metas[16];
    size_t n = 0;
    for (size_t i = 0; i < fl_avro_file_reader_meta_count(r); i++) {
        const fl_avro_meta_t *x = fl_avro_file_reader_meta_at(r, i);
        if (!strncmp(x->key, "avro.", 5)) continue;
        metas[n] = *x;
        if (!strcmp(x->key, key) && !value) continue; /* dropped */
        if (!strcmp(x->key, key)) metas[n] = fl_avro_meta_str(key, value);
        n++;
    }
    fl_avro_schema_t *s = fl_ice_manifest_entry_schema(&m.spec);
    fl_avro_file_writer_t *w;
    fl_avro_file_options_t o;
    fl_avro_file_options_init(&o);
    assert_int_equal(fl_avro_file_writer_open(NULL, s, metas, n, &o, &w, &err), 0);
    const fl_avro_value_t *v;
    while (fl_avro_file_reader_next(r, &v, &err) == 0 && v)
        assert_int_equal(fl_avro_file_writer_append(w, v, &err), 0);
    assert_int_equal(fl_avro_file_writer_finish(w, &err), 0);
    fl_buf_init(out);
    fl_buf_append(out, fl_avro_file_writer_bytes(w)->data, fl_avro_file_writer_bytes(w)->len);
    fl_avro_file_writer_destroy(w);
    fl_avro_schema_destroy(s);
    fl_avro_file_reader_destroy(r);
    fl_buf_free(&b);
}

static void test_reader_refuses(void **state) {
    (void)state;
    fl_ice_manifest_read_t r;
    fl_ice_manifest_read_init(&r);
    fl_error_t err;
    static const struct {
        const char *key, *value;
        int code;
        const char *text;
    } BAD[] = {
        {"format-version", "3", FLUSS_ERR__INVALID_ARG, "format-version \"3\" not supported"},
        {"content", "both", FLUSS_ERR__CORRUPT, "header content"},
        {"schema-id", "x1", FLUSS_ERR__CORRUPT, "header schema-id"},
        {"partition-spec-id", "-1", FLUSS_ERR__CORRUPT, "partition-spec-id"},
        {"content", "deletes", FLUSS_ERR__CORRUPT, "content against"},
        {"partition-spec", "[]", FLUSS_ERR__CORRUPT, "partition-spec not an array"},
        {"partition-spec", "{", FLUSS_ERR__CORRUPT, "partition-spec not an array"},
        {"partition-spec",
         "[{\"name\":\"__bucket\",\"transform\":\"day\",\"source-id\":5,\"field-id\":1000},"
         "{},{},{},{}]",
         FLUSS_ERR__INVALID_ARG, "transform day not supported"},
        {"partition-spec",
         "[{\"name\":\"__bucket\",\"transform\":\"bucket[0]\",\"source-id\":5,\"field-id\":1000},"
         "{},{},{},{}]",
         FLUSS_ERR__INVALID_ARG, "transform bucket[0] not supported"},
        {"partition-spec",
         "[{\"name\":\"big\",\"transform\":\"bucket[4]\",\"source-id\":6,\"field-id\":1004},"
         "{},{},{},{}]",
         FLUSS_ERR__CORRUPT, "a bucket not an int"},
    };
    for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
        fl_buf_t b;
        encode_with_meta(BAD[i].key, BAD[i].value, &b);
        int rc = fl_ice_manifest_decode(b.data, b.len, &r, &err);
        if (rc != BAD[i].code || !strstr(err.msg, BAD[i].text))
            fail_msg("case %zu: rc %d \"%s\"", i, rc, err.msg);
        assert_int_equal(r.manifest.n_entries, 0);
        fl_buf_free(&b);
    }
    fl_buf_t b;
    encode_with_meta("schema-id", "3", &b);
    assert_int_equal(fl_ice_manifest_decode(b.data, b.len, &r, &err), 0);
    fl_ice_manifest_read_reset(&r);
    fl_buf_free(&b);
    /* no schema-id (pyiceberg writes none): the schema JSON's */
    encode_with_meta("schema-id", NULL, &b);
    assert_int_equal(fl_ice_manifest_decode(b.data, b.len, &r, &err), 0);
    assert_int_equal(r.manifest.schema_id, 3);
    fl_ice_manifest_read_reset(&r);
    fl_buf_free(&b);
    encode_with_meta("format-version", NULL, &b);
    assert_error(fl_ice_manifest_decode(b.data, b.len, &r, &err), err, FLUSS_ERR__CORRUPT,
                 "header format-version missing");
    fl_buf_free(&b);
}

/* Every truncation is refused; flipped bytes are refused or read, never a
 * crash (ASan and the fuzz target look closer). */
static void test_corrupt_bytes(void **state) {
    (void)state;
    fl_ice_manifest_t m;
    fl_ice_manifest_entry_t e[3];
    partitioned(&m, e);
    fl_ice_manifest_summary_t s;
    fl_buf_t b, lb;
    round_trip(&m, &s, &b);
    fl_ice_manifest_list_t l = {43, 41, 6, &s.file, 1};
    fl_error_t err;
    fl_buf_init(&lb);
    assert_int_equal(fl_ice_manifest_list_encode(&l, &lb, &err), 0);
    fl_ice_manifest_read_t r;
    fl_ice_manifest_read_init(&r);
    fl_ice_manifest_list_read_t lr;
    fl_ice_manifest_list_read_init(&lr);
    /* An Avro file has no end marker: cut right after the header (a block
     * boundary) it reads as a file of no records. That is why a manifest
     * list records each manifest's length, and why every file is fsynced
     * before the metadata that names it. Every other cut is refused. */
    size_t empty = 0;
    for (size_t n = 0; n < b.len; n++) {
        if (fl_ice_manifest_decode(b.data, n, &r, &err)) continue;
        assert_int_equal(r.manifest.n_entries, 0);
        empty++;
    }
    for (size_t n = 0; n < lb.len; n++) {
        if (fl_ice_manifest_list_decode(lb.data, n, &lr, &err)) continue;
        assert_int_equal(lr.list.n_manifests, 0);
        empty++;
    }
    assert_int_equal(empty, 2);
    fl_ice_manifest_read_reset(&r);
    fl_ice_manifest_list_read_reset(&lr);
    uint8_t *copy = malloc(b.len > lb.len ? b.len : lb.len);
    for (size_t i = 0; i < b.len; i++) {
        memcpy(copy, b.data, b.len);
        copy[i] ^= (uint8_t)(0x5a + i);
        (void)fl_ice_manifest_decode(copy, b.len, &r, &err);
        fl_ice_manifest_read_reset(&r);
    }
    for (size_t i = 0; i < lb.len; i++) {
        memcpy(copy, lb.data, lb.len);
        copy[i] ^= 0xff;
        (void)fl_ice_manifest_list_decode(copy, lb.len, &lr, &err);
        fl_ice_manifest_list_read_reset(&lr);
    }
    free(copy);
    fl_buf_free(&b);
    fl_buf_free(&lb);
    fl_ice_manifest_summary_reset(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_partitioned_round_trip),
        cmocka_unit_test(test_unpartitioned_and_deletes),
        cmocka_unit_test(test_header_and_field_ids),
        cmocka_unit_test(test_list_round_trip),
        cmocka_unit_test_setup_teardown(test_files_on_disk, setup, teardown),
        cmocka_unit_test(test_writer_refuses),
        cmocka_unit_test(test_reader_refuses),
        cmocka_unit_test(test_corrupt_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
