/*
 * client_lake_read.c — libfluss's lake scanner: the rows of one lake
 * snapshot read straight from the table's Iceberg files (the Hadoop
 * layout under the warehouse the table's properties name), as record
 * batches like the log scanner's, so that a reader unions them with the
 * log from each bucket's lake offset on (fluss.h, "union read").
 *
 * Open: the table's newest metadata, the snapshot GET_LAKE_SNAPSHOT
 * named (an older one than the newest is fine: rounds keep committing),
 * its manifest list and data manifests, and every live data file, sorted
 * by (partition, bucket, first offset) so that each bucket's rows come
 * in log order. Next: one row group of one file at a time, in chunks of
 * FL_LAKE_READ_ROWS rows: each Parquet column is matched to a Fluss
 * column through the Iceberg field id the table's schema gives the
 * column's name (a column added after the file was written is NULL), and
 * each column's values turned at once into the Arrow column a fetched
 * batch of the handle's schema decodes to (tier_convert.h's map read
 * backwards), so that the projection, the filter and every accessor work
 * as in the log scanner. The system columns give each row its bucket,
 * offset (__offset) and commit timestamp (__timestamp).
 *
 * Every file is untrusted: the metadata, Avro and Parquet readers check
 * their bytes, and a system column that is missing, NULL or disagrees
 * with the file's bucket is CORRUPT.
 *
 * Thread rule: a scanner has one user at a time (fluss.h).
 */
#include <stdlib.h>
#include <string.h>

#include "client_filter.h"
#include "client_table.h"
#include "common_alloc.h"
#include "lake_iceberg_table.h"
#include "lake_parquet_reader.h"
#include "tier_assemble.h"
#include "tier_nested.h"
#include "tier_convert.h"
#include "tier_deletes.h"
#include "tier_eq_deletes.h"

#define FL_LAKE_READ_ROWS 8192
#define FL_LAKE_FILE_BYTES_MAX (1ull << 31) /* one data file read whole */
#define FL_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION

/* One live data file of the snapshot. */
typedef struct fl_lake_file {
    char *path;          /* local path */
    char *uri;           /* the manifest's file_path (what position deletes name) */
    bool has_deletes;    /* some row of it is position-deleted */
    int64_t partition_id; /* -1: the table is not partitioned */
    int32_t bucket;       /* from the spec's bucket field; -1 when it has none */
    int64_t first_offset; /* the __offset lower bound, for the order */
    int64_t seq;          /* its data sequence number (equality deletes apply below it) */
} fl_lake_file_t;

struct fluss_lake_scanner {
    fluss_table_t *t;
    /* fl_lake_scanner_of_image: the one data file, in memory (borrowed) */
    const uint8_t *image;
    size_t image_len;
    int32_t *present;     /* schema positions presented, in order */
    size_t present_count;
    int32_t *field_of;    /* per schema position: the Iceberg field id, -1 none */
    int32_t fid_bucket, fid_offset, fid_timestamp;
    fl_cfilter_t filter;
    fl_lake_file_t *files;
    size_t file_count, next_file;
    /* the open file */
    fl_pq_reader_t *pq;
    size_t group, group_rows, group_next;
    int32_t *col_of;      /* per schema position: the Parquet column, -1 none */
    fl_pq_values_t *vals; /* per schema position, of the open row group */
    /* ARRAY, MAP, ROW columns: their leaves in the file ([col_of, col_of +
     * leaves_of)) and the row group's column assembled (tier_assemble.h) */
    size_t *leaves_of;
    fl_arrow_array_t *nested;
    fl_pq_values_t sys[3]; /* __bucket, __offset, __timestamp */
    int64_t partition_id;
    int32_t bucket;
    int64_t group_row0; /* the open row group's first row in its file */
    const fl_lake_file_t *cur;
    /* the snapshot's position deletes (primary-key tables) */
    fl_tier_deletes_t dels;
};

static int fl_file_cmp(const void *a, const void *b) {
    const fl_lake_file_t *x = a, *y = b;
    if (x->partition_id != y->partition_id) return x->partition_id < y->partition_id ? -1 : 1;
    if (x->bucket != y->bucket) return x->bucket < y->bucket ? -1 : 1;
    if (x->first_offset != y->first_offset) return x->first_offset < y->first_offset ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* The id of the schema's field called name, -1 when none. */
static int32_t fl_field_id(const fl_ice_schema_t *s, const char *name) {
    for (size_t i = 0; i < s->n_fields; i++)
        if (strcmp(s->fields[i].name, name) == 0) return s->fields[i].id;
    return -1;
}

/* The partition id of a data file from its identity partition values
 * (Fluss's partition name: the values joined by '$', in key order) and
 * the snapshot's partitions; its bucket from the spec's bucket field.
 * False for a file of a partition the Fluss table no longer has (the
 * snapshot names no such partition): its rows have no partition id to
 * go with, and the scanner leaves them out. */
static bool fl_file_place(const fl_ice_manifest_t *m, const fl_ice_data_file_t *f,
                          const fluss_lake_snapshot_t *snap, int32_t fid_bucket,
                          fl_lake_file_t *out) {
    fl_buf_t name;
    fl_buf_init(&name);
    bool partitioned = false;
    out->bucket = -1;
    for (size_t i = 0; i < m->spec.n_fields; i++) {
        const fl_ice_partition_field_t *pf = &m->spec.fields[i];
        const fl_ice_value_t *v = &f->partition[i];
        /* identity(__bucket), or bucket[N](bucket key): Iceberg's bucket
         * transform is the lake table's bucketing, so either value is the
         * Fluss bucket */
        if (pf->source_id == fid_bucket || pf->transform == FL_ICE_BUCKET) {
            if (!v->null) out->bucket = (int32_t)v->i;
            continue;
        }
        if (pf->transform != FL_ICE_IDENTITY || v->null || pf->type != FL_ICE_STRING) continue;
        if (partitioned) fl_buf_put_u8(&name, '$');
        fl_buf_append(&name, v->s.p, v->s.len);
        partitioned = true;
    }
    out->partition_id = -1;
    bool live = true;
    if (partitioned) {
        for (size_t i = 0; i < snap->bucket_count && out->partition_id < 0; i++) {
            const char *pn = snap->buckets[i].partition_name;
            if (pn && strlen(pn) == name.len && memcmp(pn, name.data, name.len) == 0)
                out->partition_id = snap->buckets[i].partition_id;
        }
        live = out->partition_id >= 0;
    }
    fl_buf_free(&name);
    return live;
}

/* The lower bound of __offset in the file's stats (8 bytes little-endian),
 * 0 when absent. */
static int64_t fl_first_offset(const fl_ice_data_file_t *f, int32_t fid_offset) {
    for (size_t i = 0; i < f->n_columns; i++) {
        const fl_ice_column_stats_t *c = &f->columns[i];
        if (c->field_id != fid_offset || !c->lower.p || c->lower.len != 8) continue;
        uint64_t v = 0;
        for (int k = 7; k >= 0; k--) v = v << 8 | ((const uint8_t *)c->lower.p)[k];
        return (int64_t)v;
    }
    return 0;
}

static void fl_add_file(fluss_lake_scanner_t *s, size_t *cap, const fl_lake_file_t *f) {
    if (s->file_count == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        s->files = fl_realloc(s->files, *cap * sizeof(*s->files));
    }
    s->files[s->file_count++] = *f;
}

/* The live data files of snapshot snap_id of the table at head. */
static int fl_collect_files(fluss_lake_scanner_t *s, const fl_ice_table_meta_t *m,
                            const fluss_lake_snapshot_t *snap, fl_error_t *err) {
    const fl_ice_snapshot_t *sn = fl_ice_meta_snapshot(m, snap->snapshot_id);
    if (!sn)
        return fl_err_set(err, FLUSS_ERR_LAKE_SNAPSHOT_NOT_EXIST,
                          "lake snapshot %lld of %s.%s is not in its Iceberg table (expired?)",
                          (long long)snap->snapshot_id, s->t->database, s->t->name);
    fl_ice_manifest_list_read_t list;
    fl_ice_manifest_list_read_init(&list);
    fl_ice_manifest_read_t man;
    fl_ice_manifest_read_init(&man);
    /* equality deletes (Fluss's own tiering job writes them for PK
     * tables) become position deletes of the rows they name */
    fl_tier_eq_deletes_t eq;
    fl_tier_eq_deletes_init(&eq);
    size_t cap = 0;
    int rc = fl_ice_manifest_list_read(fl_lake_uri_path(sn->manifest_list), &list, err);
    for (size_t i = 0; !rc && i < list.list.n_manifests; i++) {
        const fl_ice_manifest_file_t *mf = &list.list.manifests[i];
        if ((rc = fl_ice_manifest_read(fl_lake_uri_path(mf->manifest_path), &man, err))) break;
        for (size_t e = 0; !rc && e < man.manifest.n_entries; e++) {
            const fl_ice_manifest_entry_t *en = &man.manifest.entries[e];
            if (en->status == FL_ICE_DELETED) continue;
            fl_lake_file_t f;
            if (!fl_file_place(&man.manifest, &en->file, snap, s->fid_bucket, &f)) continue;
            /* an added entry's null sequence number is its manifest's */
            f.seq = en->sequence_number != FL_ICE_NONE ? en->sequence_number : mf->sequence_number;
            if (en->file.content == FL_ICE_POSITION_DELETES) {
                rc = fl_tier_deletes_read(&s->dels, fl_lake_uri_path(en->file.file_path),
                                          FL_LAKE_FILE_BYTES_MAX, err);
                continue;
            }
            if (en->file.content == FL_ICE_EQUALITY_DELETES) {
                rc = fl_tier_eq_deletes_read(&eq, fl_lake_uri_path(en->file.file_path),
                                             en->file.equality_ids, en->file.n_equality_ids,
                                             f.seq, FL_LAKE_FILE_BYTES_MAX, err);
                continue;
            }
            if (en->file.content != FL_ICE_DATA) continue;
            f.first_offset = fl_first_offset(&en->file, s->fid_offset);
            f.path = fl_strdup(fl_lake_uri_path(en->file.file_path));
            f.uri = fl_strdup(en->file.file_path);
            f.has_deletes = false;
            fl_add_file(s, &cap, &f);
        }
    }
    fl_tier_eq_deletes_seal(&eq);
    for (size_t i = 0; !rc && fl_tier_eq_deletes_count(&eq) && i < s->file_count; i++)
        rc = fl_tier_eq_deletes_apply(&eq, s->files[i].path, s->files[i].uri, s->files[i].seq,
                                      FL_LAKE_FILE_BYTES_MAX, &s->dels, err);
    fl_tier_eq_deletes_free(&eq);
    fl_tier_deletes_seal(&s->dels);
    for (size_t i = 0; i < s->file_count; i++)
        s->files[i].has_deletes = fl_tier_deletes_count(&s->dels, s->files[i].uri) > 0;
    fl_ice_manifest_read_reset(&man);
    fl_ice_manifest_list_read_reset(&list);
    if (!rc && s->file_count) qsort(s->files, s->file_count, sizeof(*s->files), fl_file_cmp);
    return rc;
}

/* The Iceberg table's directory: <warehouse>/<db>/<table>. */
static int fl_lake_dir(const fluss_table_t *t, char *out, size_t cap, fl_error_t *err) {
    const char *w = fl_kvlist_get(&t->desc.properties, "table.datalake.iceberg.warehouse");
    if (!w)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "%s.%s has no lake: its properties name no "
                          "table.datalake.iceberg.warehouse",
                          t->database, t->name);
    int n = snprintf(out, cap, "%s/%s/%s", fl_lake_uri_path(w), t->database, t->name);
    if (n < 0 || (size_t)n >= cap)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "lake path of %s.%s is too long",
                          t->database, t->name);
    return 0;
}

/* The field ids of the handle's columns and of the system columns in the
 * table's current schema; the lake table must be this Fluss table's. */
static int fl_map_fields(fluss_lake_scanner_t *s, const fl_ice_table_meta_t *m, fl_error_t *err) {
    char want[32];
    snprintf(want, sizeof(want), "%lld", (long long)s->t->table_id);
    for (size_t i = 0; i < m->n_properties; i++)
        if (strcmp(m->properties[i].key, "fluss.table-id") == 0 &&
            strcmp(m->properties[i].value, want) != 0)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "the lake table of %s.%s belongs to table id %s, not %s",
                              s->t->database, s->t->name, m->properties[i].value, want);
    const fl_ice_schema_t *sc = fl_ice_meta_schema(m, m->current_schema_id);
    if (!sc) return fl_err_set(err, FL_CORRUPT, "lake table has no current schema");
    size_t n = s->t->desc.schema.column_count;
    for (size_t c = 0; c < n; c++)
        s->field_of[c] = fl_field_id(sc, s->t->desc.schema.columns[c].name);
    s->fid_bucket = fl_field_id(sc, "__bucket");
    s->fid_offset = fl_field_id(sc, "__offset");
    s->fid_timestamp = fl_field_id(sc, "__timestamp");
    if (s->fid_bucket < 0 || s->fid_offset < 0 || s->fid_timestamp < 0)
        return fl_err_set(err, FL_CORRUPT,
                          "lake table of %s.%s lacks the system columns __bucket, __offset, "
                          "__timestamp",
                          s->t->database, s->t->name);
    return 0;
}

static int fl_scanner_open(fluss_lake_scanner_t *s, const fluss_lake_snapshot_t *snap,
                           fl_error_t *err) {
    char dir[8192];
    int rc = fl_lake_dir(s->t, dir, sizeof(dir), err);
    if (rc) return rc;
    fl_ice_table_head_t head;
    fl_ice_table_head_init(&head);
    if (!(rc = fl_ice_table_load(dir, &head, err)) &&
        !(rc = fl_map_fields(s, &head.meta.meta, err)))
        rc = fl_collect_files(s, &head.meta.meta, snap, err);
    fl_ice_table_head_reset(&head);
    return rc;
}

static fluss_lake_scanner_t *fl_scanner_alloc(fluss_table_t *t, const int32_t *projection,
                                              size_t n) {
    size_t cols = t->desc.schema.column_count;
    fluss_lake_scanner_t *s = fl_calloc(1, sizeof(*s));
    s->t = t;
    s->present_count = projection ? n : cols;
    s->present = fl_calloc(s->present_count, sizeof(int32_t));
    s->field_of = fl_calloc(cols ? cols : 1, sizeof(int32_t));
    s->col_of = fl_calloc(cols ? cols : 1, sizeof(int32_t));
    s->vals = fl_calloc(cols ? cols : 1, sizeof(fl_pq_values_t));
    s->leaves_of = fl_calloc(cols ? cols : 1, sizeof(size_t));
    s->nested = fl_calloc(cols ? cols : 1, sizeof(fl_arrow_array_t));
    for (size_t i = 0; i < s->present_count; i++)
        s->present[i] = projection ? projection[i] : (int32_t)i;
    return s;
}

int fluss_lake_scanner_new(fluss_table_t *t, const fluss_lake_snapshot_t *snap,
                           const int32_t *projection, size_t n, fluss_lake_scanner_t **out,
                           fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    *out = NULL;
    size_t cols = t->desc.schema.column_count;
    if (!snap) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "no lake snapshot given");
        return fl_client_error_out(e, &err);
    }
    if (projection && n == 0) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "empty projection");
        return fl_client_error_out(e, &err);
    }
    for (size_t i = 0; projection && i < n; i++)
        if (projection[i] < 0 || (size_t)projection[i] >= cols) {
            fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "projection names column %d of %zu",
                       projection[i], cols);
            return fl_client_error_out(e, &err);
        }
    fluss_lake_scanner_t *s = fl_scanner_alloc(t, projection, n);
    int rc = fl_scanner_open(s, snap, &err);
    if (rc) {
        fluss_lake_scanner_destroy(s);
        return fl_client_error_out(e, &err);
    }
    *out = s;
    return 0;
}

int fl_lake_scanner_of_image(fluss_table_t *t, const uint8_t *file, size_t len,
                             fluss_lake_scanner_t **out, fl_error_t *err) {
    (void)err;
    fluss_lake_scanner_t *s = fl_scanner_alloc(t, NULL, 0);
    size_t n = t->desc.schema.column_count;
    for (size_t c = 0; c < n; c++) s->field_of[c] = (int32_t)c + 1;
    s->fid_bucket = (int32_t)n + 1;
    s->fid_offset = (int32_t)n + 2;
    s->fid_timestamp = (int32_t)n + 3;
    s->image = file;
    s->image_len = len;
    s->files = fl_calloc(1, sizeof(*s->files));
    s->files[0] = (fl_lake_file_t){fl_strdup("(image)"), fl_strdup("(image)"), false, -1, -1, 0, 0};
    s->file_count = 1;
    *out = s;
    return 0;
}

int fluss_lake_scanner_set_filter(fluss_lake_scanner_t *s, const char *expr, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    fl_cfilter_t f;
    if (fl_cfilter_parse_opt(s->t, expr, &f, &err)) return fl_client_error_out(e, &err);
    fl_cfilter_free(&s->filter);
    s->filter = f;
    return 0;
}

size_t fluss_lake_scanner_file_count(const fluss_lake_scanner_t *s) { return s->file_count; }

static void fl_group_free(fluss_lake_scanner_t *s) {
    for (size_t c = 0; c < s->t->desc.schema.column_count; c++) {
        fl_pq_values_free(&s->vals[c]);
        fl_arrow_array_free(&s->nested[c]);
    }
    for (size_t k = 0; k < 3; k++) fl_pq_values_free(&s->sys[k]);
}

static void fl_file_close(fluss_lake_scanner_t *s) {
    fl_group_free(s);
    fl_pq_reader_destroy(s->pq);
    s->pq = NULL;
}

static bool fl_is_nested(const fl_datatype_t *t) {
    return t->root == FL_TYPE_ARRAY || t->root == FL_TYPE_MAP || t->root == FL_TYPE_ROW;
}

/* Points a's types (and its children's) at t's, a type of the same shape. */
static void fl_arrow_retype(fl_arrow_array_t *a, const fl_datatype_t *t) {
    a->type = t;
    switch (a->kind) {
    case FL_TYPE_ARRAY: fl_arrow_retype(&a->children[0], t->element); break;
    case FL_TYPE_MAP:
        fl_arrow_retype(&a->children[0].children[0], t->key);
        fl_arrow_retype(&a->children[0].children[1], t->value);
        break;
    case FL_TYPE_ROW:
        for (size_t f = 0; f < t->field_count && f < a->child_count; f++)
            fl_arrow_retype(&a->children[f], t->fields[f].type);
        break;
    default: break;
    }
}

static int fl_file_open(fluss_lake_scanner_t *s, const fl_lake_file_t *f, fl_error_t *err) {
    int rc = s->image ? fl_pq_reader_open(s->image, s->image_len, &s->pq, err)
                      : fl_pq_reader_open_file(f->path, FL_LAKE_FILE_BYTES_MAX, &s->pq, err);
    if (rc) return rc;
    for (size_t c = 0; c < s->t->desc.schema.column_count; c++) {
        const fl_datatype_t *t = s->t->desc.schema.columns[c].type;
        s->leaves_of[c] = 0;
        if (!fl_is_nested(t)) {
            s->col_of[c] = fl_pq_reader_column_of(s->pq, s->field_of[c]);
            continue;
        }
        /* a group: its leaves, as many as the type's layout has */
        int e = s->field_of[c] >= 0 ? fl_pq_reader_element_of(s->pq, s->field_of[c]) : -1;
        s->col_of[c] = -1;
        if (e < 0) continue;
        size_t first, n;
        fl_pq_reader_element_columns(s->pq, (size_t)e, &first, &n);
        fl_tier_shape_t sh;
        fl_tier_nested_shape(t, &sh);
        if (n != sh.leaves)
            return fl_err_set(err, FL_CORRUPT, "lake column %s has %zu leaves, its type %zu",
                              s->t->desc.schema.columns[c].name, n, sh.leaves);
        s->col_of[c] = (int32_t)first;
        s->leaves_of[c] = n;
    }
    s->group = 0;
    s->group_rows = s->group_next = 0;
    s->group_row0 = 0;
    s->cur = f;
    s->partition_id = f->partition_id;
    s->bucket = f->bucket;
    return 0;
}

/* Column c's leaves in row group s->group, assembled into s->nested[c]. */
static int fl_nested_read(fluss_lake_scanner_t *s, size_t c, fl_error_t *err) {
    const fl_column_t *col = &s->t->desc.schema.columns[c];
    size_t n = s->leaves_of[c];
    size_t rows = (size_t)fl_pq_reader_meta(s->pq)->row_groups[s->group].num_rows;
    fl_pq_values_t *leaves = fl_calloc(n, sizeof(*leaves));
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = fl_pq_reader_read_column(s->pq, s->group, (size_t)s->col_of[c] + i, &leaves[i], err);
    if (!rc) rc = fl_tier_assemble(col->type, col->name, leaves, rows, &s->nested[c], err);
    for (size_t i = 0; i < n; i++) fl_pq_values_free(&leaves[i]);
    fl_free(leaves);
    return rc;
}

/* Reads row group s->group of the open file. */
static int fl_group_read(fluss_lake_scanner_t *s, fl_error_t *err) {
    fl_group_free(s);
    const fl_pq_file_meta_t *meta = fl_pq_reader_meta(s->pq);
    const int32_t sys_fid[3] = {s->fid_bucket, s->fid_offset, s->fid_timestamp};
    const int32_t sys_type[3] = {FL_PQ_INT32, FL_PQ_INT64, FL_PQ_INT64};
    int rc = 0;
    for (size_t k = 0; k < 3 && !rc; k++) {
        int32_t pc = fl_pq_reader_column_of(s->pq, sys_fid[k]);
        if (pc < 0) return fl_err_set(err, FL_CORRUPT, "lake file lacks a system column");
        rc = fl_pq_reader_read_column(s->pq, s->group, (size_t)pc, &s->sys[k], err);
        if (!rc && s->sys[k].type != sys_type[k])
            rc = fl_err_set(err, FL_CORRUPT, "lake file's system column has type %d",
                            s->sys[k].type);
    }
    s->group_rows = (size_t)meta->row_groups[s->group].num_rows;
    for (size_t c = 0; !rc && c < s->t->desc.schema.column_count; c++) {
        if (s->col_of[c] < 0) continue;
        if (s->leaves_of[c]) {
            rc = fl_nested_read(s, c, err);
            continue;
        }
        rc = fl_pq_reader_read_column(s->pq, s->group, (size_t)s->col_of[c], &s->vals[c], err);
        if (!rc && s->vals[c].rows != s->group_rows)
            rc = fl_err_set(err, FL_CORRUPT, "lake file's row group has columns of unequal length");
    }
    for (size_t k = 0; !rc && k < 3; k++)
        if (s->sys[k].rows != s->group_rows)
            rc = fl_err_set(err, FL_CORRUPT, "lake file's row group has columns of unequal length");
    for (size_t r = 0; !rc && r < s->group_rows; r++) {
        int32_t b = ((const int32_t *)s->sys[0].values)[r];
        if (!s->sys[0].valid[r] || !s->sys[1].valid[r] || !s->sys[2].valid[r])
            rc = fl_err_set(err, FL_CORRUPT, "lake file has a NULL system column");
        else if (s->bucket >= 0 && b != s->bucket)
            rc = fl_err_set(err, FL_CORRUPT, "lake file of bucket %d holds a row of bucket %d",
                            s->bucket, b);
        else if (r == 0 && s->bucket < 0)
            s->bucket = b;
        else if (b != s->bucket)
            rc = fl_err_set(err, FL_CORRUPT, "lake file holds rows of several buckets");
    }
    s->group_next = 0;
    return rc;
}

/* Rows [from, to) of an assembled nested column, as an array of type t. */
static void fl_nested_take(const fl_arrow_array_t *src, const fl_datatype_t *t, size_t from,
                           size_t to, fl_arrow_array_t *out) {
    int64_t *idx = fl_calloc(to - from + 1, sizeof(int64_t));
    for (size_t i = from; i < to; i++) idx[i - from] = (int64_t)i;
    fl_arrow_take(src, idx, to - from, out);
    fl_free(idx);
    fl_arrow_retype(out, t);
}

/* Rows [from, to) of the open row group as one decoded batch (NULL when
 * the filter kept none): each column converted at once into the Arrow
 * column a fetched batch would have decoded to (fl_tier_arrow_column). */
static int fl_chunk_batch(fluss_lake_scanner_t *s, size_t from, size_t to,
                          fluss_record_batch_t **out, fl_error_t *err) {
    const fl_schema_t *sc = &s->t->desc.schema;
    size_t n = sc->column_count;
    fl_arrow_array_t *cols = fl_calloc(n ? n : 1, sizeof(*cols));
    fl_datatype_t **types = fl_calloc(n ? n : 1, sizeof(*types));
    int rc = 0;
    for (size_t c = 0; c < n && !rc; c++) {
        types[c] = fl_datatype_clone(sc->columns[c].type);
        if (s->col_of[c] >= 0 && s->leaves_of[c])
            fl_nested_take(&s->nested[c], types[c], from, to, &cols[c]);
        else if (s->col_of[c] >= 0)
            rc = fl_tier_arrow_column(types[c], sc->columns[c].name, &s->vals[c], from, to,
                                      &cols[c], err);
        else if (!types[c]->nullable)
            rc = fl_err_set(err, FL_CORRUPT, "lake file lacks NOT NULL column %s",
                            sc->columns[c].name);
        else /* added after the file was written */
            fl_arrow_null_array(types[c], (int)types[c]->root, (int64_t)(to - from), &cols[c]);
    }
    fluss_record_batch_t *b = NULL;
    if (!rc)
        b = fl_record_batch_of_columns(s->t, cols, types, (int64_t)(to - from), s->present,
                                       s->present_count, s->filter.count ? &s->filter : NULL);
    for (size_t c = 0; c < n; c++) {
        fl_arrow_array_free(&cols[c]);
        fl_datatype_destroy(types[c]);
    }
    fl_free(cols);
    fl_free(types);
    *out = b;
    if (rc || !b) return rc;
    /* the rows count from 0 here: give them the log's offsets and times */
    const int64_t *offs = s->sys[1].values, *us = s->sys[2].values;
    int64_t *o = fl_calloc(b->rows ? b->rows : 1, sizeof(int64_t));
    int64_t *ts = fl_calloc(b->rows ? b->rows : 1, sizeof(int64_t));
    for (size_t i = 0; i < b->rows; i++) {
        size_t r = from + (size_t)(b->offsets ? b->offsets[i] : (int64_t)i);
        int64_t q = us[r] / 1000;
        if (us[r] % 1000 < 0) q--;
        o[i] = offs[r];
        ts[i] = q;
    }
    fl_free(b->offsets);
    b->offsets = o;
    b->timestamps = ts;
    b->base_offset = b->rows ? o[0] : 0;
    b->commit_timestamp = b->rows ? ts[0] : 0;
    b->bucket = s->bucket;
    b->partition_id = s->partition_id;
    return 0;
}

int fluss_lake_scanner_next(fluss_lake_scanner_t *s, fluss_record_batch_t **out,
                            fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    *out = NULL;
    int rc = 0;
    while (!rc && !*out) {
        if (!s->pq) {
            if (s->next_file == s->file_count) return 0;
            rc = fl_file_open(s, &s->files[s->next_file++], &err);
            if (!rc && fl_pq_reader_meta(s->pq)->n_row_groups) rc = fl_group_read(s, &err);
            continue;
        }
        if (s->group_next == s->group_rows) {
            s->group_row0 += (int64_t)s->group_rows;
            if (++s->group >= fl_pq_reader_meta(s->pq)->n_row_groups) fl_file_close(s);
            else rc = fl_group_read(s, &err);
            continue;
        }
        size_t from = s->group_next, to = from + FL_LAKE_READ_ROWS;
        if (to > s->group_rows) to = s->group_rows;
        if (s->cur->has_deletes) {
            /* a chunk is a run of live rows: deleted ones are stepped over */
            const char *uri = s->cur->uri;
            while (from < to && fl_tier_deletes_has(&s->dels, uri, s->group_row0 + (int64_t)from))
                from++;
            for (size_t r = from + 1; r < to; r++)
                if (fl_tier_deletes_has(&s->dels, uri, s->group_row0 + (int64_t)r)) to = r;
            if (from == to) {
                s->group_next = to;
                continue;
            }
        }
        s->group_next = to;
        rc = fl_chunk_batch(s, from, to, out, &err);
    }
    if (rc) {
        fluss_record_batch_free(*out);
        *out = NULL;
        return fl_client_error_out(e, &err);
    }
    return 0;
}

void fluss_lake_scanner_destroy(fluss_lake_scanner_t *s) {
    if (!s) return;
    if (s->pq) fl_file_close(s);
    for (size_t i = 0; i < s->file_count; i++) {
        fl_free(s->files[i].path);
        fl_free(s->files[i].uri);
    }
    fl_tier_deletes_free(&s->dels);
    fl_free(s->files);
    fl_cfilter_free(&s->filter);
    fl_free(s->present);
    fl_free(s->field_of);
    fl_free(s->col_of);
    fl_free(s->vals);
    fl_free(s->leaves_of);
    fl_free(s->nested);
    fl_free(s);
}
