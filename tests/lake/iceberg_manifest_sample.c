/*
 * iceberg_manifest_sample.c — a test helper for the manifest interop test
 * (tests/lake/test_iceberg_manifest_interop.py), built as
 * lake_iceberg_manifest_sample:
 *
 *   lake_iceberg_manifest_sample write DIR [ENTRIES]   writes with
 *       lake_iceberg_manifest.h, in DIR:
 *       data.avro     a data manifest of ENTRIES (default 50) data files,
 *                     partitioned by identity(__bucket) int,
 *                     identity(dt) string, identity(day) date and
 *                     bucket[8](id); values by the formulas of sample_entry
 *                     (the pytest computes the same ones)
 *       deletes.avro  a delete manifest: a position-delete file and an
 *                     equality-delete file (equality_ids [1])
 *       snap.avro     the manifest list of snapshot 1001 (parent 1000,
 *                     sequence number 2) naming both by file:// URI
 *   lake_iceberg_manifest_sample read-manifest PATH
 *   lake_iceberg_manifest_sample read-list PATH
 *       print what our readers read, as one JSON object (bytes as hex)
 *
 * Exit status 1 with the error on stderr if anything fails.
 */
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lake_iceberg_manifest.h"

static const char SCHEMA[] =
    "{\"type\":\"struct\",\"schema-id\":0,\"identifier-field-ids\":[],\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"name\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":3,\"name\":\"__bucket\",\"required\":true,\"type\":\"int\"},"
    "{\"id\":4,\"name\":\"day\",\"required\":false,\"type\":\"date\"},"
    "{\"id\":5,\"name\":\"dt\",\"required\":false,\"type\":\"string\"}]}";

static const fl_ice_partition_field_t FIELDS[] = {
    {"__bucket", 3, 1000, FL_ICE_IDENTITY, 0, FL_ICE_INT},
    {"dt", 5, 1001, FL_ICE_IDENTITY, 0, FL_ICE_STRING},
    {"day", 4, 1002, FL_ICE_IDENTITY, 0, FL_ICE_DATE},
    {"id_bucket", 1, 1003, FL_ICE_BUCKET, 8, FL_ICE_INT},
};
#define N_FIELDS 4

/* Storage behind one entry's pointers. */
typedef struct scratch {
    char path[96];
    char dt[16];
    char lo_name[16], hi_name[16];
    uint8_t lo_id[8], hi_id[8], bucket[4];
    fl_ice_value_t part[N_FIELDS];
    fl_ice_column_stats_t cols[3];
    int64_t splits[2];
} scratch_t;

static void sample_partition(int k, scratch_t *x) {
    x->part[0] = (fl_ice_value_t){false, k % 4, {0}};
    snprintf(x->dt, sizeof(x->dt), "2026-12-%02d", k % 28 + 1);
    x->part[1] = (fl_ice_value_t){k % 7 == 0, 0, fl_avro_str(x->dt)};
    x->part[2] = (fl_ice_value_t){false, 20000 + k, {0}};
    x->part[3] = (fl_ice_value_t){false, k % 8, {0}};
}

/* Stats of columns 1 (long), 2 (string), 3 (int, no size), none if k%3==0. */
static void sample_stats(int k, scratch_t *x, fl_ice_data_file_t *f) {
    if (k % 3 == 0) return;
    fl_ice_bound_long(k, x->lo_id);
    fl_ice_bound_long(k + 1000, x->hi_id);
    fl_ice_bound_int(k % 4, x->bucket);
    int lo = snprintf(x->lo_name, sizeof(x->lo_name), "a%d", k);
    int hi = snprintf(x->hi_name, sizeof(x->hi_name), "z%d", k);
    int64_t rows = 100LL * k + 1;
    x->cols[0] = (fl_ice_column_stats_t){1, 10LL * k + 1, rows, 0, FL_ICE_NONE,
                                         {x->lo_id, 8}, {x->hi_id, 8}};
    x->cols[1] = (fl_ice_column_stats_t){2, 20LL * k + 2, rows, k % 5, FL_ICE_NONE,
                                         {(uint8_t *)x->lo_name, (size_t)lo},
                                         {(uint8_t *)x->hi_name, (size_t)hi}};
    x->cols[2] = (fl_ice_column_stats_t){3, FL_ICE_NONE, rows, 0, FL_ICE_NONE,
                                         {x->bucket, 4}, {x->bucket, 4}};
    f->columns = x->cols;
    f->n_columns = 3;
    x->splits[0] = 4;
    x->splits[1] = 4 + 1000LL * k;
    f->split_offsets = x->splits;
    f->n_split_offsets = k % 2 ? 2 : 1;
}

static void sample_entry(int k, scratch_t *x, fl_ice_manifest_entry_t *e) {
    memset(e, 0, sizeof(*e));
    bool existing = k % 10 == 9;
    e->status = existing ? FL_ICE_EXISTING : FL_ICE_ADDED;
    e->snapshot_id = existing ? 7 : FL_ICE_NONE;
    e->sequence_number = existing ? 1 : FL_ICE_NONE;
    e->file_sequence_number = existing ? 1 : FL_ICE_NONE;
    fl_ice_data_file_t *f = &e->file;
    snprintf(x->path, sizeof(x->path), "file:///wh/db/t/data/__bucket=%d/%05d.parquet", k % 4, k);
    f->content = FL_ICE_DATA;
    f->file_path = x->path;
    f->file_format = "PARQUET";
    sample_partition(k, x);
    f->partition = x->part;
    f->record_count = 100LL * k + 1;
    f->file_size_bytes = 4096 + 17LL * k;
    sample_stats(k, x, f);
    f->sort_order_id = k % 2 ? FL_ICE_NO_ORDER : 1;
}

static int fail(const fl_error_t *err) {
    fprintf(stderr, "lake_iceberg_manifest_sample: %s\n", err->msg);
    return 1;
}

static int write_data(const char *dir, int n, fl_ice_manifest_summary_t *s, fl_error_t *err) {
    fl_ice_manifest_entry_t *e = calloc((size_t)n + 1, sizeof(*e));
    scratch_t *x = calloc((size_t)n + 1, sizeof(*x));
    for (int k = 0; k < n; k++) sample_entry(k, &x[k], &e[k]);
    fl_ice_manifest_t m = {FL_ICE_MANIFEST_DATA, SCHEMA, 0, {0, FIELDS, N_FIELDS}, 1001, e,
                           (size_t)n};
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/data.avro", dir);
    int rc = fl_ice_manifest_write(path, &m, s, err);
    free(e);
    free(x);
    return rc;
}

static int write_deletes(const char *dir, fl_ice_manifest_summary_t *s, fl_error_t *err) {
    scratch_t x[2];
    fl_ice_manifest_entry_t e[2];
    static const int32_t EQ[] = {1};
    for (int k = 0; k < 2; k++) {
        sample_entry(k + 1, &x[k], &e[k]);
        e[k].file.content = k ? FL_ICE_EQUALITY_DELETES : FL_ICE_POSITION_DELETES;
        snprintf(x[k].path, sizeof(x[k].path), "file:///wh/db/t/data/delete-%d.parquet", k);
        e[k].file.sort_order_id = FL_ICE_NO_ORDER;
    }
    e[1].file.equality_ids = EQ;
    e[1].file.n_equality_ids = 1;
    fl_ice_manifest_t m = {FL_ICE_MANIFEST_DELETES, SCHEMA, 0, {0, FIELDS, N_FIELDS}, 1001, e, 2};
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/deletes.avro", dir);
    return fl_ice_manifest_write(path, &m, s, err);
}

static int write_all(const char *dir, int n) {
    fl_ice_manifest_summary_t s[2];
    fl_ice_manifest_summary_init(&s[0]);
    fl_ice_manifest_summary_init(&s[1]);
    fl_error_t err;
    char abs[PATH_MAX], uris[2][PATH_MAX + 48], path[PATH_MAX + 32];
    int rc = realpath(dir, abs) ? 0 : fl_err_set(&err, FLUSS_ERR__IO, "realpath %s", dir);
    if (!rc) rc = write_data(abs, n, &s[0], &err);
    if (!rc) rc = write_deletes(abs, &s[1], &err);
    if (!rc) {
        fl_ice_manifest_file_t files[2] = {s[0].file, s[1].file};
        for (int i = 0; i < 2; i++) {
            snprintf(uris[i], sizeof(uris[i]), "file://%s", files[i].manifest_path);
            files[i].manifest_path = uris[i];
        }
        fl_ice_manifest_list_t l = {1001, 1000, 2, files, 2};
        snprintf(path, sizeof(path), "%s/snap.avro", abs);
        rc = fl_ice_manifest_list_write(path, &l, NULL, &err);
    }
    fl_ice_manifest_summary_reset(&s[0]);
    fl_ice_manifest_summary_reset(&s[1]);
    return rc ? fail(&err) : 0;
}

/* ---- read ---- */

static json_t *hex(fl_avro_bytes_t b) {
    if (!b.p) return json_null();
    char *s = malloc(2 * b.len + 1);
    for (size_t i = 0; i < b.len; i++) snprintf(s + 2 * i, 3, "%02x", b.p[i]);
    s[2 * b.len] = 0;
    json_t *j = json_string(s);
    free(s);
    return j;
}

static json_t *opt_int(int64_t v) { return v == FL_ICE_NONE ? json_null() : json_integer(v); }

static json_t *columns_json(const fl_ice_data_file_t *f) {
    json_t *a = json_array();
    for (size_t c = 0; c < f->n_columns; c++) {
        const fl_ice_column_stats_t *s = &f->columns[c];
        json_array_append_new(a, json_pack("{s:i,s:o,s:o,s:o,s:o,s:o,s:o}", "id", s->field_id,
                                           "size", opt_int(s->column_size), "values",
                                           opt_int(s->value_count), "nulls", opt_int(s->null_count),
                                           "nans", opt_int(s->nan_count), "lower", hex(s->lower),
                                           "upper", hex(s->upper)));
    }
    return a;
}

static json_t *file_json(const fl_ice_partition_spec_t *spec, const fl_ice_data_file_t *f) {
    json_t *part = json_array(), *splits = json_array(), *eq = json_array();
    for (size_t i = 0; i < spec->n_fields; i++) {
        const fl_ice_value_t *v = &f->partition[i];
        json_array_append_new(part, v->null ? json_null()
                                    : spec->fields[i].type == FL_ICE_STRING
                                        ? json_stringn((const char *)v->s.p, v->s.len)
                                        : json_integer(v->i));
    }
    for (size_t i = 0; i < f->n_split_offsets; i++)
        json_array_append_new(splits, json_integer(f->split_offsets[i]));
    for (size_t i = 0; i < f->n_equality_ids; i++)
        json_array_append_new(eq, json_integer(f->equality_ids[i]));
    return json_pack("{s:i,s:s,s:s,s:o,s:I,s:I,s:o,s:o,s:o,s:o}", "content", f->content, "path",
                     f->file_path, "format", f->file_format, "partition", part, "records",
                     (json_int_t)f->record_count, "size", (json_int_t)f->file_size_bytes,
                     "columns", columns_json(f), "splits", splits, "equality_ids", eq,
                     "sort_order_id", opt_int(f->sort_order_id == FL_ICE_NO_ORDER ? FL_ICE_NONE
                                                                                  : f->sort_order_id));
}

static int read_manifest(const char *path) {
    fl_ice_manifest_read_t r;
    fl_ice_manifest_read_init(&r);
    fl_error_t err;
    if (fl_ice_manifest_read(path, &r, &err)) return fail(&err);
    const fl_ice_manifest_t *m = &r.manifest;
    json_t *fields = json_array(), *entries = json_array();
    for (size_t i = 0; i < m->spec.n_fields; i++) {
        const fl_ice_partition_field_t *f = &m->spec.fields[i];
        json_array_append_new(fields, json_pack("{s:s,s:i,s:i,s:i,s:i,s:i}", "name", f->name,
                                                "source_id", f->source_id, "field_id", f->field_id,
                                                "transform", f->transform, "buckets",
                                                f->transform == FL_ICE_BUCKET ? f->buckets : 0,
                                                "type", f->type));
    }
    for (size_t e = 0; e < m->n_entries; e++) {
        const fl_ice_manifest_entry_t *x = &m->entries[e];
        json_array_append_new(entries, json_pack("{s:i,s:o,s:o,s:o,s:o}", "status", x->status,
                                                 "snapshot_id", opt_int(x->snapshot_id),
                                                 "sequence_number", opt_int(x->sequence_number),
                                                 "file_sequence_number",
                                                 opt_int(x->file_sequence_number), "data_file",
                                                 file_json(&m->spec, &x->file)));
    }
    json_t *j = json_pack("{s:i,s:s,s:i,s:i,s:o,s:o}", "content", m->content, "schema",
                          m->schema_json, "schema_id", m->schema_id, "spec_id", m->spec.spec_id,
                          "fields", fields, "entries", entries);
    json_dumpf(j, stdout, JSON_COMPACT);
    putchar('\n');
    json_decref(j);
    fl_ice_manifest_read_reset(&r);
    return 0;
}

static int read_list(const char *path) {
    fl_ice_manifest_list_read_t r;
    fl_ice_manifest_list_read_init(&r);
    fl_error_t err;
    if (fl_ice_manifest_list_read(path, &r, &err)) return fail(&err);
    json_t *files = json_array();
    for (size_t i = 0; i < r.list.n_manifests; i++) {
        const fl_ice_manifest_file_t *m = &r.list.manifests[i];
        json_t *parts = json_array();
        for (size_t p = 0; p < m->n_partitions; p++)
            json_array_append_new(parts, json_pack("{s:b,s:o,s:o,s:o}", "contains_null",
                                                   m->partitions[p].contains_null, "contains_nan",
                                                   m->partitions[p].contains_nan < 0
                                                       ? json_null()
                                                       : json_boolean(m->partitions[p].contains_nan),
                                                   "lower", hex(m->partitions[p].lower), "upper",
                                                   hex(m->partitions[p].upper)));
        json_array_append_new(
            files, json_pack("{s:s,s:I,s:i,s:i,s:I,s:I,s:I,s:i,s:i,s:i,s:I,s:I,s:I,s:o}", "path",
                             m->manifest_path, "length", (json_int_t)m->manifest_length, "spec_id",
                             m->partition_spec_id, "content", m->content, "seq",
                             (json_int_t)m->sequence_number, "min_seq",
                             (json_int_t)m->min_sequence_number, "snapshot",
                             (json_int_t)m->added_snapshot_id, "added_files",
                             m->added_files_count, "existing_files", m->existing_files_count,
                             "deleted_files", m->deleted_files_count, "added_rows",
                             (json_int_t)m->added_rows_count, "existing_rows",
                             (json_int_t)m->existing_rows_count, "deleted_rows",
                             (json_int_t)m->deleted_rows_count, "partitions", parts));
    }
    json_t *j = json_pack("{s:I,s:o,s:I,s:o}", "snapshot_id", (json_int_t)r.list.snapshot_id,
                          "parent", opt_int(r.list.parent_snapshot_id), "seq",
                          (json_int_t)r.list.sequence_number, "manifests", files);
    json_dumpf(j, stdout, JSON_COMPACT);
    putchar('\n');
    json_decref(j);
    fl_ice_manifest_list_read_reset(&r);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && !strcmp(argv[1], "write")) return write_all(argv[2], argc > 3 ? atoi(argv[3]) : 50);
    if (argc == 3 && !strcmp(argv[1], "read-manifest")) return read_manifest(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "read-list")) return read_list(argv[2]);
    fprintf(stderr, "usage: lake_iceberg_manifest_sample write DIR [ENTRIES] | read-manifest PATH"
                    " | read-list PATH\n");
    return 2;
}
