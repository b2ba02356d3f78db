/*
 * iceberg_table_sample.c — a test helper for the table interop test
 * (tests/lake/test_iceberg_table_interop.py), built as
 * lake_iceberg_table_sample:
 *
 *   lake_iceberg_table_sample write DIR     (DIR absolute, new or empty)
 *       creates an Iceberg table at DIR as flussd's tiering will
 *       (lake_iceberg_table.h): a Fluss log table's columns id int
 *       required, name string, ts timestamptz, amount decimal(10,2), then
 *       the system columns __bucket int, __offset long, __timestamp
 *       timestamptz (required); identifier ids [id]; spec identity(__bucket)
 *       (field 1000); sort order 1 on __offset asc nulls-first; fluss.*
 *       properties. Then two rounds, each one snapshot appending one
 *       Parquet file (lake_parquet_writer.h, Iceberg field ids) under
 *       data/__bucket=<b>/, described in a manifest with the column stats
 *       of the file's footer, and a manifest list (the second round's also
 *       names the first manifest), summaries as Appendix F. Versions v1
 *       (no snapshot), v2, v3. Prints what it wrote as one JSON object:
 *       table uuid, location, the snapshots (ids, parents, sequence
 *       numbers, manifest lists, summaries, data files, rows).
 *   lake_iceberg_table_sample write-nested DIR
 *       creates the Iceberg table of a Fluss log table with nested columns
 *       as fl_lake_table_create makes it (coordinator_lake_table.h; these
 *       ids are that function's, asserted in test_coordinator_lake_table):
 *       a INT, b ARRAY<ROW<x INT, y STRING NOT NULL>> (comment "rows"),
 *       c MAP<STRING, INT NOT NULL> — a=1, b=2, c=3, __bucket=4,
 *       __offset=5, __timestamp=6, b.element=7, x=8, y=9, c.key=10,
 *       c.value=11 — as v1 (no snapshot); then v2, ALTER's ADD COLUMN
 *       d MAP<STRING, ARRAY<ROW<p INT NOT NULL>>> (fl_ice_meta_with_schema):
 *       d=12, key=13, value=14, element=15, p=16, before __bucket. Prints
 *       {"location": ...}.
 *   lake_iceberg_table_sample --decode FILE
 *       prints what fl_ice_meta_decode reads from a metadata file, encoded
 *       again by fl_ice_meta_encode, with the partition value types
 *   lake_iceberg_table_sample load DIR
 *       prints fl_ice_table_load's version, path and metadata the same way
 *
 * Exit status 1 with the error on stderr if anything fails.
 */
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_fs.h"
#include "common_time.h"
#include "common_uuid.h"
#include "lake_iceberg_manifest.h"
#include "lake_iceberg_table.h"
#include "lake_parquet_reader.h"
#include "lake_parquet_writer.h"

/* ---- the table ---- */

enum { C_ID, C_NAME, C_TS, C_AMOUNT, C_BUCKET, C_OFFSET, C_TIMESTAMP, NCOL };

static const fl_ice_field_t FIELDS[NCOL] = {
    {1, "id", true, "int", NULL, NULL},
    {2, "name", false, "string", "a customer", NULL},
    {3, "ts", false, "timestamptz", NULL, NULL},
    {4, "amount", false, "decimal(10,2)", NULL, NULL},
    {5, "__bucket", true, "int", NULL, NULL},
    {6, "__offset", true, "long", NULL, NULL},
    {7, "__timestamp", true, "timestamptz", NULL, NULL},
};
static const int32_t IDENT[] = {1};
static const fl_ice_schema_t SCHEMA = {0, FIELDS, NCOL, IDENT, 1};

static const fl_pq_column_spec_t PQ[NCOL] = {
    {"id", 1, FL_PQ_INT32, false, {0}, 0},
    {"name", 2, FL_PQ_BYTE_ARRAY, true, {FL_PQ_LT_STRING, 0, 0, false, 0}, 0},
    {"ts", 3, FL_PQ_INT64, true, {FL_PQ_LT_TIMESTAMP, 0, 0, true, FL_PQ_UNIT_MICROS}, 0},
    {"amount", 4, FL_PQ_INT64, true, {FL_PQ_LT_DECIMAL, 2, 10, false, 0}, 0},
    {"__bucket", 5, FL_PQ_INT32, false, {0}, 0},
    {"__offset", 6, FL_PQ_INT64, false, {0}, 0},
    {"__timestamp", 7, FL_PQ_INT64, false, {FL_PQ_LT_TIMESTAMP, 0, 0, true, FL_PQ_UNIT_MICROS}, 0},
};

static const fl_ice_partition_field_t SPEC_FIELDS[] = {
    {"__bucket", 5, 1000, FL_ICE_IDENTITY, 0, FL_ICE_INT},
};
static const fl_ice_partition_spec_t SPEC = {0, SPEC_FIELDS, 1};
static const fl_ice_sort_field_t SORT_FIELDS[] = {{6, false, false}};
static const fl_ice_sort_order_t SORT = {1, SORT_FIELDS, 1};
static const fl_ice_prop_t PROPS[] = {
    {"fluss.table.replication.factor", "1"},
    {"fluss.table.datalake.enabled", "true"},
    {"fluss.table.datalake.format", "iceberg"},
    {"write.parquet.compression-codec", "zstd"},
};

/* ---- the rows of a round ---- */

#define ROWS_MAX 4

typedef struct round {
    int32_t bucket;
    size_t n;
    int32_t id[ROWS_MAX];
    const char *name[ROWS_MAX]; /* NULL: null */
    int64_t ts[ROWS_MAX]; /* INT64_MIN: null */
    int64_t amount[ROWS_MAX]; /* unscaled cents; INT64_MIN: null */
    int64_t timestamp[ROWS_MAX];
} round_t;

#define NUL INT64_MIN
static const round_t ROUNDS[2] = {
    {0, 3, {1, 2, 3}, {"alice", NULL, "carol"},
     {1700000000000000, NUL, 1700000002000000}, {1234, -500, NUL},
     {1700000000001000, 1700000000002000, 1700000000003000}},
    {1, 2, {4, 5}, {"dave", ""}, {1700000003000000, -1000000}, {99999999, 0},
     {1700000000004000, 1700000000005000}},
};

static int fail(const fl_error_t *err) {
    fprintf(stderr, "lake_iceberg_table_sample: %s\n", err->msg);
    return 1;
}

/* The round's rows into one column-wise append. */
static int append_rows(fl_pq_writer_t *w, const round_t *r, fl_error_t *err) {
    uint8_t valid[NCOL][ROWS_MAX];
    int32_t bucket[ROWS_MAX];
    int64_t offset[ROWS_MAX], ts[ROWS_MAX], amount[ROWS_MAX];
    fl_pq_bytes_t name[ROWS_MAX];
    memset(valid, 1, sizeof(valid));
    for (size_t i = 0; i < r->n; i++) {
        bucket[i] = r->bucket;
        offset[i] = (int64_t)i;
        valid[C_NAME][i] = r->name[i] != NULL;
        name[i] = (fl_pq_bytes_t){(const uint8_t *)(r->name[i] ? r->name[i] : ""),
                                  r->name[i] ? (uint32_t)strlen(r->name[i]) : 0};
        valid[C_TS][i] = r->ts[i] != NUL;
        ts[i] = r->ts[i] == NUL ? 0 : r->ts[i];
        valid[C_AMOUNT][i] = r->amount[i] != NUL;
        amount[i] = r->amount[i] == NUL ? 0 : r->amount[i];
    }
    fl_pq_column_data_t cols[NCOL] = {
        {NULL, r->id, NULL, NULL, 0},          {valid[C_NAME], name, NULL, NULL, 0},
        {valid[C_TS], ts, NULL, NULL, 0},      {valid[C_AMOUNT], amount, NULL, NULL, 0},
        {NULL, bucket, NULL, NULL, 0},         {NULL, offset, NULL, NULL, 0},
        {NULL, r->timestamp, NULL, NULL, 0},
    };
    return fl_pq_writer_append(w, cols, r->n, err);
}

/* Appendix D's decimal bound: the unscaled value's minimal big-endian
 * two's complement (Parquet's INT64 statistics hold it little-endian). */
static size_t decimal_bound(const uint8_t le[8], uint8_t out[8]) {
    int64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (int64_t)((uint64_t)le[i] << (8 * i));
    size_t n = 1; /* the fewest low bytes that sign-extend back to v */
    while (n < 8) {
        int shift = 64 - 8 * (int)n;
        if ((int64_t)((uint64_t)v << shift) >> shift == v) break;
        n++;
    }
    for (size_t i = 0; i < n; i++) out[i] = (uint8_t)((uint64_t)v >> (8 * (n - 1 - i)));
    return n;
}

/* Storage behind a data file's description. */
typedef struct described {
    char path[PATH_MAX + 128];
    fl_ice_value_t partition[1];
    fl_ice_column_stats_t cols[NCOL];
    uint8_t lower[NCOL][64], upper[NCOL][64];
    int64_t split;
} described_t;

/* What the footer of the file just written says, as Iceberg stats. */
static void stats_from_footer(const fl_pq_file_meta_t *fm, size_t rows, described_t *d) {
    const fl_pq_row_group_t *g = &fm->row_groups[0]; /* one group: a few rows */
    d->split = g->file_offset; /* Iceberg's split offsets: row group starts */
    for (size_t c = 0; c < NCOL; c++) {
        const fl_pq_column_meta_t *cm = &g->columns[c].meta;
        const fl_pq_stats_t *st = &cm->stats;
        fl_ice_column_stats_t *s = &d->cols[c];
        *s = (fl_ice_column_stats_t){PQ[c].field_id, cm->total_compressed_size, (int64_t)rows,
                                     st->has_null_count ? st->null_count : FL_ICE_NONE,
                                     FL_ICE_NONE, {0}, {0}};
        if (!st->has_min || !st->has_max || st->min_len > 64 || st->max_len > 64) continue;
        if (c == C_AMOUNT) {
            s->lower = (fl_avro_bytes_t){d->lower[c], decimal_bound(st->min, d->lower[c])};
            s->upper = (fl_avro_bytes_t){d->upper[c], decimal_bound(st->max, d->upper[c])};
            continue;
        }
        memcpy(d->lower[c], st->min, st->min_len);
        memcpy(d->upper[c], st->max, st->max_len);
        s->lower = (fl_avro_bytes_t){d->lower[c], st->min_len};
        s->upper = (fl_avro_bytes_t){d->upper[c], st->max_len};
    }
}

/* Writes the round's Parquet file and describes it. */
static int write_data_file(const char *dir, const round_t *r, fl_ice_data_file_t *f,
                           described_t *d, fl_error_t *err) {
    char part[PATH_MAX + 64], uuid[FL_UUID_TEXT_LEN + 1];
    snprintf(part, sizeof(part), "%s/data/__bucket=%" PRId32, dir, r->bucket);
    fl_uuid_random(uuid);
    char *path = d->path + strlen("file://");
    snprintf(d->path, sizeof(d->path), "file://%s/00000-0-%s.parquet", part, uuid);
    fl_pq_writer_options_t o;
    fl_pq_writer_options_init(&o);
    fl_pq_writer_t *w = NULL;
    int rc = fl_fs_mkdirs(part, err);
    if (!rc) rc = fl_pq_writer_open(path, PQ, NCOL, &o, &w, err);
    if (!rc) rc = append_rows(w, r, err);
    if (!rc) rc = fl_pq_writer_finish(w, err);
    if (!rc) rc = fl_fs_fsync_dir(part, err);
    uint64_t size = w ? fl_pq_writer_position(w) : 0;
    if (w) fl_pq_writer_destroy(w);
    fl_pq_reader_t *rd = NULL;
    if (!rc) rc = fl_pq_reader_open_file(path, 1u << 20, &rd, err);
    if (rc) return rc;
    stats_from_footer(fl_pq_reader_meta(rd), r->n, d);
    fl_pq_reader_destroy(rd);
    d->partition[0] = (fl_ice_value_t){false, r->bucket, {0}};
    *f = (fl_ice_data_file_t){FL_ICE_DATA, d->path, "PARQUET", d->partition, (int64_t)r->n,
                              (int64_t)size, d->cols, NCOL, &d->split, 1, NULL, 0, SORT.order_id};
    return 0;
}

/* ---- a round: data file, manifest, manifest list, commit ---- */

typedef struct totals {
    int64_t files, records, bytes;
    fl_ice_manifest_file_t kept; /* the earlier rounds' manifest (one) */
    bool have_kept;
    char kept_path[PATH_MAX + 128];
    fl_ice_field_summary_t kept_partitions[1];
    uint8_t kept_bounds[2][8];
} totals_t;

/* Appendix F's counts into summary (storage in text). */
static size_t summarize(const fl_ice_data_file_t *f, const totals_t *t, fl_ice_prop_t *p,
                        char text[8][24]) {
    size_t n = 0;
    p[n++] = (fl_ice_prop_t){"operation", "append"};
    p[n++] = (fl_ice_prop_t){"commit-user", "__fluss_lake_tiering"};
    const char *keys[] = {"added-data-files", "added-records", "added-files-size",
                          "changed-partition-count", "total-data-files", "total-records",
                          "total-files-size", "total-delete-files"};
    int64_t values[] = {1, f->record_count, f->file_size_bytes, 1, t->files, t->records, t->bytes, 0};
    for (size_t i = 0; i < 8; i++) {
        snprintf(text[i], sizeof(text[i]), "%" PRId64, values[i]);
        p[n++] = (fl_ice_prop_t){keys[i], text[i]};
    }
    p[n++] = (fl_ice_prop_t){"total-position-deletes", "0"};
    p[n++] = (fl_ice_prop_t){"total-equality-deletes", "0"};
    return n;
}

/* The manifest of the round's file; its manifest-list entry into *mf. */
static int write_manifest(const char *dir, int64_t snapshot_id, const fl_ice_data_file_t *f,
                          fl_ice_manifest_summary_t *ms, fl_error_t *err) {
    fl_buf_t schema;
    fl_buf_init(&schema);
    int rc = fl_ice_schema_encode(&SCHEMA, &schema, err);
    fl_buf_append(&schema, "", 1);
    fl_ice_manifest_entry_t e = {FL_ICE_ADDED, FL_ICE_NONE, FL_ICE_NONE, FL_ICE_NONE, *f};
    fl_ice_manifest_t m = {FL_ICE_MANIFEST_DATA, (const char *)schema.data, SCHEMA.schema_id,
                           SPEC, snapshot_id, &e, 1};
    char uuid[FL_UUID_TEXT_LEN + 1], path[PATH_MAX + 128];
    fl_uuid_random(uuid);
    snprintf(path, sizeof(path), "%s/metadata/%s-m0.avro", dir, uuid);
    if (!rc) rc = fl_ice_manifest_write(path, &m, ms, err);
    fl_buf_free(&schema);
    if (rc) return rc;
    /* the list names it by URI */
    char uri[PATH_MAX + 160];
    snprintf(uri, sizeof(uri), "file://%s", path);
    ms->file.manifest_path = fl_avro_arena_try_alloc(&ms->arena, strlen(uri) + 1);
    if (!ms->file.manifest_path) abort();
    strcpy((char *)ms->file.manifest_path, uri);
    return 0;
}

/* Remembers this round's manifest-list entry (sequence number explicit
 * now) for the next round's list, as a fast append keeps it. */
static void keep_manifest(totals_t *t, const fl_ice_manifest_file_t *f, int64_t seq) {
    t->kept = *f;
    snprintf(t->kept_path, sizeof(t->kept_path), "%s", f->manifest_path);
    t->kept.manifest_path = t->kept_path;
    t->kept.sequence_number = t->kept.min_sequence_number = seq;
    t->kept_partitions[0] = f->partitions[0];
    memcpy(t->kept_bounds[0], f->partitions[0].lower.p, f->partitions[0].lower.len);
    memcpy(t->kept_bounds[1], f->partitions[0].upper.p, f->partitions[0].upper.len);
    t->kept_partitions[0].lower.p = t->kept_bounds[0];
    t->kept_partitions[0].upper.p = t->kept_bounds[1];
    t->kept.partitions = t->kept_partitions;
    t->have_kept = true;
}

typedef struct written {
    int64_t snapshot_id, parent, seq;
    char manifest_list[PATH_MAX + 160];
    described_t file;
    fl_ice_data_file_t df;
} written_t;

static int commit_round(const char *dir, const round_t *r, int64_t snapshot_id, totals_t *t,
                        written_t *out, fl_error_t *err) {
    fl_ice_table_head_t h;
    fl_ice_table_head_init(&h);
    int rc = fl_ice_table_load(dir, &h, err);
    if (!rc) rc = write_data_file(dir, r, &out->df, &out->file, err);
    if (rc) goto done;
    int64_t seq = h.meta.meta.last_sequence_number + 1;
    t->files++;
    t->records += out->df.record_count;
    t->bytes += out->df.file_size_bytes;
    fl_ice_manifest_summary_t ms;
    fl_ice_manifest_summary_init(&ms);
    rc = write_manifest(dir, snapshot_id, &out->df, &ms, err);
    fl_ice_manifest_file_t files[2];
    size_t n = 0;
    if (!rc) files[n++] = ms.file;
    if (!rc && t->have_kept) files[n++] = t->kept;
    fl_ice_manifest_list_t list = {snapshot_id, h.meta.meta.current_snapshot_id, seq, files, n};
    char uuid[FL_UUID_TEXT_LEN + 1];
    fl_uuid_random(uuid);
    snprintf(out->manifest_list, sizeof(out->manifest_list),
             "file://%s/metadata/snap-%" PRId64 "-1-%s.avro", dir, snapshot_id, uuid);
    if (!rc) rc = fl_ice_manifest_list_write(out->manifest_list + 7, &list, NULL, err);
    if (!rc) keep_manifest(t, &ms.file, seq);
    fl_ice_manifest_summary_reset(&ms);
    if (rc) goto done;
    /* the metadata names the files above: each fsynced by its writer,
     * their directory entries now */
    char mdir[PATH_MAX + 16];
    snprintf(mdir, sizeof(mdir), "%s/metadata", dir);
    if ((rc = fl_fs_fsync_dir(mdir, err))) goto done;
    fl_ice_prop_t summary[12];
    char text[8][24];
    size_t ns = summarize(&out->df, t, summary, text);
    fl_ice_snapshot_t s = {snapshot_id, h.meta.meta.current_snapshot_id, seq, FL_ICE_NONE,
                           out->manifest_list, FL_ICE_NO_SCHEMA, summary, ns};
    fl_ice_meta_read_t next;
    fl_ice_meta_read_init(&next);
    rc = fl_ice_meta_with_snapshot(&h.meta.meta, h.metadata_location, &s, &next, err);
    if (!rc) rc = fl_ice_table_commit(dir, h.version, &next.meta, err);
    fl_ice_meta_read_reset(&next);
    out->snapshot_id = snapshot_id;
    out->parent = s.parent_snapshot_id;
    out->seq = seq;
done:
    fl_ice_table_head_reset(&h);
    return rc;
}

/* ---- printing ---- */

static json_t *rows_json(const round_t *r) {
    json_t *rows = json_array();
    for (size_t i = 0; i < r->n; i++) {
        char amount[32];
        if (r->amount[i] != NUL) {
            int64_t a = r->amount[i];
            uint64_t u = a < 0 ? (uint64_t)0 - (uint64_t)a : (uint64_t)a;
            snprintf(amount, sizeof(amount), "%s%" PRIu64 ".%02" PRIu64, a < 0 ? "-" : "",
                     u / 100, u % 100);
        }
        json_array_append_new(
            rows, json_pack("{s:i, s:o, s:o, s:o, s:i, s:I, s:I}", "id", r->id[i], "name",
                            r->name[i] ? json_string(r->name[i]) : json_null(), "ts",
                            r->ts[i] != NUL ? json_integer(r->ts[i]) : json_null(), "amount",
                            r->amount[i] != NUL ? json_string(amount) : json_null(), "__bucket",
                            r->bucket, "__offset", (json_int_t)i, "__timestamp",
                            (json_int_t)r->timestamp[i]));
    }
    return rows;
}

static json_t *snapshot_json(const written_t *w, const round_t *r) {
    json_t *files = json_pack("[{s:s, s:I, s:I, s:i}]", "file_path", w->df.file_path,
                              "record_count", (json_int_t)w->df.record_count, "file_size_in_bytes",
                              (json_int_t)w->df.file_size_bytes, "bucket", r->bucket);
    return json_pack("{s:I, s:o, s:I, s:s, s:o, s:o}", "snapshot_id", (json_int_t)w->snapshot_id,
                     "parent", w->parent == FL_ICE_NONE ? json_null() : json_integer(w->parent),
                     "sequence_number", (json_int_t)w->seq, "manifest_list", w->manifest_list,
                     "data_files", files, "rows", rows_json(r));
}

static int write_table(const char *dir) {
    fl_error_t err = {0};
    if (dir[0] != '/') {
        fprintf(stderr, "lake_iceberg_table_sample: DIR must be absolute\n");
        return 1;
    }
    char location[PATH_MAX + 16];
    snprintf(location, sizeof(location), "file://%s", dir);
    fl_ice_table_meta_t m = {
        .location = location, .last_updated_ms = fl_time_wall_ms(), .last_column_id = 7,
        .schemas = &SCHEMA, .n_schemas = 1, .current_schema_id = 0,
        .specs = &SPEC, .n_specs = 1, .default_spec_id = 0, .last_partition_id = 1000,
        .sort_orders = &SORT, .n_sort_orders = 1, .default_sort_order_id = 1,
        .properties = PROPS, .n_properties = sizeof(PROPS) / sizeof(PROPS[0]),
        .current_snapshot_id = FL_ICE_NONE,
    };
    fl_uuid_random(m.table_uuid);
    if (fl_ice_table_create(dir, &m, &err)) return fail(&err);
    /* increasing ids from a time-derived base (lakehouse.md: never random) */
    int64_t base = fl_time_wall_ms() * 1000;
    totals_t t = {0};
    static written_t w[2];
    json_t *snaps = json_array();
    for (int i = 0; i < 2; i++) {
        if (commit_round(dir, &ROUNDS[i], base + i, &t, &w[i], &err)) {
            json_decref(snaps);
            return fail(&err);
        }
        json_array_append_new(snaps, snapshot_json(&w[i], &ROUNDS[i]));
    }
    json_t *out = json_pack("{s:s, s:s, s:o}", "table_uuid", m.table_uuid, "location", location,
                            "snapshots", snaps);
    json_dumpf(out, stdout, JSON_COMPACT);
    putchar('\n');
    json_decref(out);
    return 0;
}

/* ---- a table with nested columns ---- */

static const fl_ice_field_t NX[] = {
    {8, "x", false, "int", NULL, NULL},
    {9, "y", true, "string", NULL, NULL},
};
static const fl_ice_nested_t NX_ROW = {FL_ICE_STRUCT, NX, 2, NULL, NULL, NULL};
static const fl_ice_field_t NB_ELEMENT = {7, "element", false, NULL, NULL, &NX_ROW};
static const fl_ice_nested_t NB_LIST = {FL_ICE_LIST, NULL, 0, &NB_ELEMENT, NULL, NULL};
static const fl_ice_field_t NC_KEY = {10, "key", true, "string", NULL, NULL};
static const fl_ice_field_t NC_VALUE = {11, "value", true, "int", NULL, NULL};
static const fl_ice_nested_t NC_MAP = {FL_ICE_MAP, NULL, 0, NULL, &NC_KEY, &NC_VALUE};
static const fl_ice_field_t ND_P[] = {{16, "p", true, "int", NULL, NULL}};
static const fl_ice_nested_t ND_ROW = {FL_ICE_STRUCT, ND_P, 1, NULL, NULL, NULL};
static const fl_ice_field_t ND_ELEMENT = {15, "element", false, NULL, NULL, &ND_ROW};
static const fl_ice_nested_t ND_LIST = {FL_ICE_LIST, NULL, 0, &ND_ELEMENT, NULL, NULL};
static const fl_ice_field_t ND_KEY = {13, "key", true, "string", NULL, NULL};
static const fl_ice_field_t ND_VALUE = {14, "value", false, NULL, NULL, &ND_LIST};
static const fl_ice_nested_t ND_MAP = {FL_ICE_MAP, NULL, 0, NULL, &ND_KEY, &ND_VALUE};
static const fl_ice_field_t NESTED0[] = {
    {1, "a", false, "int", NULL, NULL},
    {2, "b", false, NULL, "rows", &NB_LIST},
    {3, "c", false, NULL, NULL, &NC_MAP},
    {4, "__bucket", true, "int", NULL, NULL},
    {5, "__offset", true, "long", NULL, NULL},
    {6, "__timestamp", true, "timestamptz", NULL, NULL},
};
static const fl_ice_field_t NESTED1[] = {
    {1, "a", false, "int", NULL, NULL},
    {2, "b", false, NULL, "rows", &NB_LIST},
    {3, "c", false, NULL, NULL, &NC_MAP},
    {12, "d", false, NULL, NULL, &ND_MAP},
    {4, "__bucket", true, "int", NULL, NULL},
    {5, "__offset", true, "long", NULL, NULL},
    {6, "__timestamp", true, "timestamptz", NULL, NULL},
};
static const fl_ice_schema_t NESTED_SCHEMA0 = {0, NESTED0, 6, NULL, 0};
static const fl_ice_schema_t NESTED_SCHEMA1 = {FL_ICE_NO_SCHEMA, NESTED1, 7, NULL, 0};
static const fl_ice_partition_field_t NESTED_SPEC_FIELDS[] = {
    {"__bucket", 4, 1000, FL_ICE_IDENTITY, 0, FL_ICE_INT},
};
static const fl_ice_partition_spec_t NESTED_SPEC = {0, NESTED_SPEC_FIELDS, 1};
static const fl_ice_sort_field_t NESTED_SORT_FIELDS[] = {{5, false, false}};
static const fl_ice_sort_order_t NESTED_SORT = {1, NESTED_SORT_FIELDS, 1};

static int write_nested(const char *dir) {
    fl_error_t err = {0};
    if (dir[0] != '/') {
        fprintf(stderr, "lake_iceberg_table_sample: DIR must be absolute\n");
        return 1;
    }
    char location[PATH_MAX + 16];
    snprintf(location, sizeof(location), "file://%s", dir);
    fl_ice_table_meta_t m = {
        .location = location, .last_updated_ms = fl_time_wall_ms(), .last_column_id = 11,
        .schemas = &NESTED_SCHEMA0, .n_schemas = 1, .current_schema_id = 0,
        .specs = &NESTED_SPEC, .n_specs = 1, .default_spec_id = 0, .last_partition_id = 1000,
        .sort_orders = &NESTED_SORT, .n_sort_orders = 1, .default_sort_order_id = 1,
        .properties = PROPS, .n_properties = sizeof(PROPS) / sizeof(PROPS[0]),
        .current_snapshot_id = FL_ICE_NONE,
    };
    fl_uuid_random(m.table_uuid);
    if (fl_ice_table_create(dir, &m, &err)) return fail(&err);
    fl_ice_table_head_t h;
    fl_ice_table_head_init(&h);
    fl_ice_meta_read_t next;
    fl_ice_meta_read_init(&next);
    int rc = fl_ice_table_load(dir, &h, &err);
    if (!rc)
        rc = fl_ice_meta_with_schema(&h.meta.meta, h.metadata_location, &NESTED_SCHEMA1, &next,
                                     &err);
    if (!rc) rc = fl_ice_table_commit(dir, h.version, &next.meta, &err);
    fl_ice_meta_read_reset(&next);
    fl_ice_table_head_reset(&h);
    if (rc) return fail(&err);
    json_t *out = json_pack("{s:s}", "location", location);
    json_dumpf(out, stdout, JSON_COMPACT);
    putchar('\n');
    json_decref(out);
    return 0;
}

/* The metadata as we read it: encoded again, plus the partition value
 * types our decoder gave each spec field. */
static int print_meta(const fl_ice_table_meta_t *m, json_t *extra) {
    fl_buf_t b;
    fl_error_t err = {0};
    fl_buf_init(&b);
    if (fl_ice_meta_encode(m, &b, &err)) return fail(&err);
    json_t *j = json_loadb((const char *)b.data, b.len, 0, NULL);
    fl_buf_free(&b);
    static const char *TYPES[] = {"int", "long", "string", "date"};
    json_t *types = json_array();
    for (size_t i = 0; i < m->n_specs; i++) {
        json_t *a = json_array();
        for (size_t f = 0; f < m->specs[i].n_fields; f++)
            json_array_append_new(a, json_string(TYPES[m->specs[i].fields[f].type]));
        json_array_append_new(types, a);
    }
    json_object_set_new(extra, "metadata", j);
    json_object_set_new(extra, "partition_value_types", types);
    json_dumpf(extra, stdout, JSON_COMPACT);
    putchar('\n');
    json_decref(extra);
    return 0;
}

static int decode_file(const char *path) {
    fl_buf_t b;
    fl_error_t err = {0};
    fl_buf_init(&b);
    if (fl_fs_read_all(path, FL_ICE_META_BYTES_MAX, &b, NULL, &err)) return fail(&err);
    fl_ice_meta_read_t r;
    fl_ice_meta_read_init(&r);
    int rc = fl_ice_meta_decode(b.data, b.len, &r, &err);
    fl_buf_free(&b);
    rc = rc ? fail(&err) : print_meta(&r.meta, json_object());
    fl_ice_meta_read_reset(&r);
    return rc;
}

static int load_table(const char *dir) {
    fl_ice_table_head_t h;
    fl_error_t err = {0};
    fl_ice_table_head_init(&h);
    if (fl_ice_table_load(dir, &h, &err)) return fail(&err);
    int rc = print_meta(&h.meta.meta, json_pack("{s:i, s:s, s:s}", "version", h.version,
                                                "metadata_path", h.metadata_path,
                                                "metadata_location", h.metadata_location));
    fl_ice_table_head_reset(&h);
    return rc;
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "write")) return write_table(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "write-nested")) return write_nested(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "--decode")) return decode_file(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "load")) return load_table(argv[2]);
    fprintf(stderr, "usage: lake_iceberg_table_sample write DIR | write-nested DIR | --decode FILE "
                    "| load DIR\n");
    return 2;
}
