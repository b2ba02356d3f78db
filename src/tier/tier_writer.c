/*
 * tier_writer.c — a bucket's log batches into Iceberg data files
 * (tier_writer.h). ARROW append batches go column by column
 * (tier_columns); the others per record: decode under the batch's schema
 * (record_rows), move the cells into the current schema's layout
 * (types_schema_map), let the change hook decide, convert each cell
 * (tier_convert), count it (tier_metrics) and append the row to the open
 * Parquet file; per batch: roll the file at the target size; per file:
 * finish it and keep its manifest description in the result's arena.
 */
#include "tier_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "common_fs.h"
#include "common_strlist.h"
#include "common_uuid.h"
#include "common_vfs.h"
#include "lake_parquet_writer.h"
#include "record_rows.h"
#include "tier_columns.h"
#include "tier_convert.h"
#include "tier_metrics.h"
#include "tier_nested.h"
#include "types_schema_map.h"

#define TW_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION

static const char *const SYSTEM_NAMES[FL_TIER_SYSTEM_COLUMNS] = {"__bucket", "__offset",
                                                                 "__timestamp"};

/* A schema batches were written under, with its map into the current one. */
typedef struct tier_schema {
    int16_t id;
    const fl_schema_t *schema; /* borrowed */
    const fl_datatype_t **types;
    fl_schema_map_t map;
    bool current; /* the current schema: no map needed */
} tier_schema_t;

/* A Parquet leaf column of the files. */
typedef struct tier_column {
    fl_pq_column_spec_t spec;  /* the name borrowed from the schema, SYSTEM_NAMES or a nested */
    const fl_datatype_t *type; /* primitive user columns; NULL for system and nested leaves */
    fl_tier_metrics_t metrics; /* of the open file */
    bool bounds;               /* Iceberg keeps its bounds: no list or map above it */
    bool nested;               /* a leaf of a nested column (its tier_top's shredder fills it) */
} tier_column_t;

/* A user column: its first leaf, and for ARRAY, MAP and ROW its shredder. */
typedef struct tier_top {
    size_t leaf;
    fl_tier_nested_t *nested;
} tier_top_t;

struct fl_tier_writer {
    fl_tier_writer_options_t o; /* dir and prefix point at our copies */
    size_t n_user, n_cols; /* user columns; leaves (user, then system) */
    tier_top_t *tops;
    tier_column_t *cols;
    fl_pq_column_spec_t *specs;
    fl_pq_node_t *nodes; /* the files' schema tree */
    size_t n_nodes;
    tier_schema_t *schemas;
    size_t n_schemas;
    /* one row at a time: decoded cells, then a Parquet value per column */
    fl_row_t row;
    fl_tier_value_t *vals;
    uint8_t *valid;
    fl_pq_column_data_t *data;
    /* one batch at a time (the column path): a buffer and data per column */
    fl_tier_column_buf_t *bufs;
    fl_pq_column_data_t *batch;
    /* the row path's current ARROW batch, for nested columns (whose cells
     * the row decoder leaves NULL): its columns, schema and row */
    const fl_batch_rows_t *cur_it;
    const tier_schema_t *cur_s;
    int64_t cur_i;
    fl_row_format_t cur_fmt; /* else: the format of nested values in cells */
    /* the open file */
    fl_pq_writer_t *pq;
    char *path;
    int64_t file_rows, file_first, file_last;
    uint32_t seq;
    /* the result */
    fl_strlist_t created; /* every path made, for abort */
    fl_tier_file_t *files;
    size_t n_files, cap_files;
    fl_avro_arena_t arena; /* the files' descriptions */
    fl_tier_writer_result_t result;
    fl_buf_t scratch;
    bool failed, finished;
};

void fl_tier_writer_options_init(fl_tier_writer_options_t *o) {
    memset(o, 0, sizeof(*o));
    o->log_format = FL_LOG_FORMAT_ARROW;
    o->codec = FL_PQ_CODEC_ZSTD;
}

/* ---- open ---- */

static int check_options(const fl_tier_writer_options_t *o, fl_error_t *err) {
    const int code = FLUSS_ERR__INVALID_ARG;
    if (!o->dir || o->dir[0] != '/')
        return fl_err_set(err, code, "tier: the directory must be an absolute path");
    if (o->prefix && strchr(o->prefix, '/'))
        return fl_err_set(err, code, "tier: the file prefix '%s' holds a '/'", o->prefix);
    if (!o->schema || !o->schema->column_count || o->schema->column_count > FL_SCHEMA_COLUMNS_MAX)
        return fl_err_set(err, code, "tier: a schema of 1 to %d columns is needed",
                          FL_SCHEMA_COLUMNS_MAX);
    if (o->bucket < 0 || o->schema_id < 0)
        return fl_err_set(err, code, "tier: bucket %d, schema id %d", o->bucket, o->schema_id);
    if (o->log_format != FL_LOG_FORMAT_ARROW && o->log_format != FL_LOG_FORMAT_INDEXED &&
        o->log_format != FL_LOG_FORMAT_COMPACTED)
        return fl_err_set(err, code, "tier: log format %d", (int)o->log_format);
    if (o->codec != FL_PQ_CODEC_ZSTD && o->codec != FL_PQ_CODEC_UNCOMPRESSED &&
        o->codec != FL_PQ_CODEC_SNAPPY && o->codec != FL_PQ_CODEC_GZIP)
        return fl_err_set(err, code, "tier: codec %d not built", o->codec);
    return 0;
}

static int compare_ids(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Iceberg field ids are positive and name one field each. */
static int check_field_ids(const fl_tier_writer_t *w, fl_error_t *err) {
    int32_t *ids = fl_malloc(w->n_nodes * sizeof(*ids));
    size_t n = 0;
    for (size_t k = 0; k < w->n_nodes; k++)
        if (w->nodes[k].field_id != -1 || w->nodes[k].n_children == 0)
            ids[n++] = w->nodes[k].field_id;
    qsort(ids, n, sizeof(*ids), compare_ids);
    int rc = 0;
    for (size_t k = 0; k < n && !rc; k++)
        if (ids[k] <= 0 || (k && ids[k] == ids[k - 1]))
            rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "tier: field id %d is %s", ids[k],
                            ids[k] <= 0 ? "not positive" : "given twice");
    fl_free(ids);
    return rc;
}

size_t fl_tier_field_id_count(const fl_schema_t *s) {
    return fl_tier_field_id_index(s, s->column_count) + FL_TIER_SYSTEM_COLUMNS;
}

size_t fl_tier_field_id_index(const fl_schema_t *s, size_t col) {
    size_t n = 0;
    for (size_t k = 0; k < col && k < s->column_count; k++)
        n += fl_tier_nested_ids(s->columns[k].type);
    return n;
}

static bool is_nested_type(const fl_datatype_t *t) {
    return t->root == FL_TYPE_ARRAY || t->root == FL_TYPE_MAP || t->root == FL_TYPE_ROW;
}

static void leaf_node(fl_tier_writer_t *w, const fl_pq_column_spec_t *spec) {
    fl_pq_node_t *p = &w->nodes[w->n_nodes++];
    memset(p, 0, sizeof(*p));
    p->name = spec->name;
    p->field_id = spec->field_id;
    p->repetition = spec->optional ? FL_PQ_OPTIONAL : FL_PQ_REQUIRED;
    p->type = spec->type;
    p->logical = spec->logical;
    p->type_length = spec->type_length;
}

/* A user column of nested type: its shredder's leaves and nodes. */
static int nested_init(fl_tier_writer_t *w, size_t k, const int32_t *ids, size_t *leaf,
                       fl_error_t *err) {
    const fl_column_t *col = &w->o.schema->columns[k];
    tier_top_t *top = &w->tops[k];
    if (!ids)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "tier: nested column %s needs the lake table's field ids", col->name);
    int rc = fl_tier_nested_open(col->name, col->type, ids, &top->nested, err);
    if (rc) return rc;
    size_t n_nodes, leaves = fl_tier_nested_leaves(top->nested);
    const fl_pq_node_t *nodes = fl_tier_nested_nodes(top->nested, &n_nodes);
    memcpy(&w->nodes[w->n_nodes], nodes, n_nodes * sizeof(*nodes));
    w->n_nodes += n_nodes;
    for (size_t i = 0; i < leaves; i++) {
        tier_column_t *c = &w->cols[*leaf + i];
        c->spec = *fl_tier_nested_leaf(top->nested, i, &c->bounds);
        c->nested = true;
    }
    *leaf += leaves;
    return 0;
}

static int columns_init(fl_tier_writer_t *w, fl_error_t *err) {
    const fl_schema_t *s = w->o.schema;
    const int32_t *ids = w->o.field_ids;
    size_t leaf = 0, at = 0;
    int rc;
    for (size_t k = 0; k < w->n_user; k++) {
        const fl_column_t *col = &s->columns[k];
        for (size_t i = 0; i < FL_TIER_SYSTEM_COLUMNS; i++)
            if (strcmp(col->name, SYSTEM_NAMES[i]) == 0)
                return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                                  "tier: column %s has the name of a system column", col->name);
        w->tops[k].leaf = leaf;
        if (is_nested_type(col->type)) {
            if ((rc = nested_init(w, k, ids ? ids + at : NULL, &leaf, err))) return rc;
        } else {
            tier_column_t *c = &w->cols[leaf++];
            c->type = col->type;
            c->bounds = true;
            int32_t id = ids ? ids[at] : (int32_t)k + 1;
            if ((rc = fl_tier_column_spec(col->name, col->type, id, &c->spec, err))) return rc;
            leaf_node(w, &c->spec);
        }
        at += fl_tier_nested_ids(col->type);
    }
    for (size_t i = 0; i < FL_TIER_SYSTEM_COLUMNS; i++) {
        tier_column_t *c = &w->cols[leaf++];
        fl_datatype_t *t = fl_datatype_new(i == 0   ? FL_TYPE_INTEGER
                                           : i == 1 ? FL_TYPE_BIGINT
                                                    : FL_TYPE_TIMESTAMP_LTZ);
        t->nullable = false;
        t->precision = 6;
        int32_t id = ids ? ids[at + i] : (int32_t)(w->n_user + i) + 1;
        rc = fl_tier_column_spec(SYSTEM_NAMES[i], t, id, &c->spec, err);
        fl_datatype_destroy(t);
        if (rc) return rc;
        c->bounds = true;
        leaf_node(w, &c->spec);
    }
    for (size_t k = 0; k < w->n_cols; k++) {
        tier_column_t *c = &w->cols[k];
        w->specs[k] = c->spec;
        fl_tier_metrics_init(&c->metrics, &c->spec);
        w->data[k].valid = &w->valid[k];
        w->data[k].values = &w->vals[k];
    }
    return check_field_ids(w, err);
}

int fl_tier_writer_open(const fl_tier_writer_options_t *o, fl_tier_writer_t **out,
                        fl_error_t *err) {
    *out = NULL;
    int rc = check_options(o, err);
    if (rc) return rc;
    fl_tier_writer_t *w = fl_calloc(1, sizeof(*w));
    w->o = *o;
    w->o.dir = fl_strdup(o->dir);
    w->o.prefix = o->prefix && *o->prefix ? fl_strdup(o->prefix) : NULL;
    if (!w->o.target_file_bytes) w->o.target_file_bytes = FL_TIER_TARGET_FILE_BYTES;
    w->n_user = o->schema->column_count;
    /* the files' leaves and schema nodes (a list or a map adds its repeated group) */
    size_t leaves = 0, nodes = FL_TIER_SYSTEM_COLUMNS;
    for (size_t k = 0; k < w->n_user; k++) {
        fl_tier_shape_t sh;
        fl_tier_nested_shape(o->schema->columns[k].type, &sh);
        leaves += sh.leaves;
        nodes += sh.nodes + sh.repeated;
    }
    w->n_cols = leaves + FL_TIER_SYSTEM_COLUMNS;
    w->tops = fl_calloc(w->n_user, sizeof(*w->tops));
    w->nodes = fl_calloc(nodes, sizeof(*w->nodes));
    w->cols = fl_calloc(w->n_cols, sizeof(*w->cols));
    w->specs = fl_calloc(w->n_cols, sizeof(*w->specs));
    w->vals = fl_calloc(w->n_cols, sizeof(*w->vals));
    w->valid = fl_calloc(w->n_cols, 1);
    w->data = fl_calloc(w->n_cols, sizeof(*w->data));
    w->bufs = fl_calloc(w->n_cols, sizeof(*w->bufs));
    w->batch = fl_calloc(w->n_cols, sizeof(*w->batch));
    for (size_t k = 0; k < w->n_cols; k++) fl_tier_column_buf_init(&w->bufs[k]);
    fl_row_init(&w->row, w->n_user);
    fl_avro_arena_init(&w->arena);
    fl_buf_init(&w->scratch);
    w->result.first_offset = w->result.next_offset = -1;
    w->result.bucket = o->bucket;
    w->result.bucket_value.i = o->bucket;
    if ((rc = columns_init(w, err))) {
        fl_tier_writer_close(w);
        return rc;
    }
    w->o.field_ids = NULL; /* not kept: the specs hold them */
    *out = w;
    return 0;
}

/* ---- schemas ---- */

static tier_schema_t *schema_find(fl_tier_writer_t *w, int16_t id) {
    for (size_t i = 0; i < w->n_schemas; i++)
        if (w->schemas[i].id == id) return &w->schemas[i];
    return NULL;
}

/* The schema a batch of schema id `id` was written under, cached. */
static int schema_get(fl_tier_writer_t *w, int16_t id, tier_schema_t **out, fl_error_t *err) {
    if ((*out = schema_find(w, id))) return 0;
    const fl_schema_t *s = id == w->o.schema_id ? w->o.schema
                           : w->o.schema_of     ? w->o.schema_of(w->o.schema_ctx, id)
                                                : NULL;
    if (!s)
        return fl_err_set(err, FLUSS_ERR_SCHEMA_NOT_EXIST,
                          "The schema id %d does not exist (tiering schema %d).", id,
                          w->o.schema_id);
    w->schemas = fl_realloc(w->schemas, (w->n_schemas + 1) * sizeof(*w->schemas));
    tier_schema_t *t = &w->schemas[w->n_schemas++];
    memset(t, 0, sizeof(*t));
    t->id = id;
    t->schema = s;
    t->current = id == w->o.schema_id;
    t->types = fl_calloc(s->column_count ? s->column_count : 1, sizeof(*t->types));
    for (size_t k = 0; k < s->column_count; k++) t->types[k] = s->columns[k].type;
    fl_schema_map_init(&t->map, s, w->o.schema);
    *out = t;
    return 0;
}

/* ---- files ---- */

static void *arena_alloc(fl_tier_writer_t *w, size_t n) {
    void *p = fl_avro_arena_try_alloc(&w->arena, n ? n : 1);
    if (!p) abort(); /* our own sizes: the allocation funnel's rule */
    return p;
}

static const char *arena_str(fl_tier_writer_t *w, const char *a, const char *b) {
    size_t na = strlen(a), nb = strlen(b);
    char *s = arena_alloc(w, na + nb + 1);
    memcpy(s, a, na);
    memcpy(s + na, b, nb + 1);
    return s;
}

static char *file_name(const fl_tier_writer_t *w) {
    char uuid[FL_UUID_TEXT_LEN + 1];
    fl_uuid_random(uuid);
    const char *p = w->o.prefix ? w->o.prefix : "";
    size_t n = strlen(w->o.dir) + strlen(p) + 80;
    char *path = fl_malloc(n);
    snprintf(path, n, "%s/%s%s%d-%u-%s.parquet", w->o.dir, p, w->o.prefix ? "-" : "",
             w->o.bucket, w->seq, uuid);
    return path;
}

static int file_open(fl_tier_writer_t *w, fl_error_t *err) {
    fl_pq_writer_options_t po;
    fl_pq_writer_options_init(&po);
    po.codec = w->o.codec;
    if (w->o.row_group_bytes) po.row_group_bytes_max = w->o.row_group_bytes;
    w->path = file_name(w);
    fl_strlist_add(&w->created, w->path); /* before the create: abort removes it either way */
    w->seq++;
    int rc = fl_pq_writer_open_tree(w->path, w->nodes, w->n_nodes, &po, &w->pq, err);
    if (rc) return rc;
    for (size_t k = 0; k < w->n_cols; k++) fl_tier_metrics_reset(&w->cols[k].metrics);
    w->file_rows = 0;
    return 0;
}

/* A column's bound, copied into the arena; {NULL, 0} when it has none. */
static fl_avro_bytes_t bound_of(fl_tier_writer_t *w, const fl_tier_metrics_t *m, bool upper) {
    fl_avro_bytes_t b = {NULL, 0};
    if (!(upper ? fl_tier_metrics_upper(m, &w->scratch) : fl_tier_metrics_lower(m, &w->scratch)))
        return b;
    uint8_t *p = arena_alloc(w, w->scratch.len);
    if (w->scratch.len) memcpy(p, w->scratch.data, w->scratch.len);
    b.p = p;
    b.len = w->scratch.len;
    return b;
}

static int compare_stats(const void *a, const void *b) {
    return compare_ids(&((const fl_ice_column_stats_t *)a)->field_id,
                       &((const fl_ice_column_stats_t *)b)->field_id);
}

/* Per column: chunk bytes summed over the row groups, counts, bounds. */
static void describe_columns(fl_tier_writer_t *w, fl_ice_data_file_t *f,
                             const fl_pq_row_group_t *groups, size_t n_groups) {
    fl_ice_column_stats_t *st = arena_alloc(w, w->n_cols * sizeof(*st));
    for (size_t k = 0; k < w->n_cols; k++) {
        const fl_tier_metrics_t *m = &w->cols[k].metrics;
        st[k].field_id = w->cols[k].spec.field_id;
        for (size_t g = 0; g < n_groups; g++)
            st[k].column_size += groups[g].columns[k].meta.total_compressed_size;
        st[k].value_count = m->values;
        st[k].null_count = m->nulls;
        int64_t nans = fl_tier_metrics_nans(m);
        st[k].nan_count = nans < 0 ? FL_ICE_NONE : nans;
        st[k].lower = w->cols[k].bounds ? bound_of(w, m, false) : (fl_avro_bytes_t){NULL, 0};
        st[k].upper = w->cols[k].bounds ? bound_of(w, m, true) : (fl_avro_bytes_t){NULL, 0};
    }
    qsort(st, w->n_cols, sizeof(*st), compare_stats); /* the manifest wants ascending ids */
    f->columns = st;
    f->n_columns = w->n_cols;
}

/* The manifest description of the file just finished. */
static void describe_file(fl_tier_writer_t *w) {
    if (w->n_files == w->cap_files) {
        w->cap_files = w->cap_files ? 2 * w->cap_files : 4;
        w->files = fl_realloc(w->files, w->cap_files * sizeof(*w->files));
    }
    fl_tier_file_t *t = &w->files[w->n_files++];
    memset(t, 0, sizeof(*t));
    t->path = arena_str(w, w->path, "");
    t->first_offset = w->file_first;
    t->last_offset = w->file_last;
    fl_ice_data_file_t *f = &t->file;
    f->content = FL_ICE_DATA;
    f->file_path = arena_str(w, "file://", w->path);
    f->file_format = "PARQUET";
    f->record_count = w->file_rows;
    f->file_size_bytes = (int64_t)fl_pq_writer_position(w->pq);
    size_t n_groups;
    const fl_pq_row_group_t *groups = fl_pq_writer_row_groups(w->pq, &n_groups);
    int64_t *splits = arena_alloc(w, n_groups * sizeof(*splits));
    for (size_t g = 0; g < n_groups; g++) splits[g] = groups[g].file_offset;
    f->split_offsets = splits;
    f->n_split_offsets = n_groups;
    describe_columns(w, f, groups, n_groups);
    f->sort_order_id = FL_TIER_SORT_ORDER_ID;
}

/* Finishes the open file (fsynced, closed) and describes it. */
static int file_close(fl_tier_writer_t *w, fl_error_t *err) {
    int rc = fl_pq_writer_finish(w->pq, err);
    if (rc) return rc;
    describe_file(w);
    fl_pq_writer_destroy(w->pq);
    w->pq = NULL;
    fl_free(w->path);
    w->path = NULL;
    return 0;
}

/* ---- records ---- */

static const char *change_name(fl_change_type_t ct) {
    static const char *const names[] = {"+A", "+I", "-U", "+U", "-D"};
    return (unsigned)ct <= FL_CHANGE_TYPE_MAX ? names[ct] : "?";
}

/* The hook's decision, or the rule without one: +A and +I only. */
static int decide(fl_tier_writer_t *w, int64_t offset, fl_change_type_t ct,
                  fl_tier_row_action_t *action, fl_error_t *err) {
    *action = FL_TIER_ROW_WRITE;
    if (w->o.on_change) {
        fl_tier_record_t rec = {
            .offset = offset,
            .change_type = ct,
            .row = &w->row,
            .file = w->n_files, /* the open file, or the one the row would open */
            .position = w->pq ? w->file_rows : 0,
        };
        return w->o.on_change(w->o.change_ctx, &rec, action, err);
    }
    if (ct == FL_CHANGE_APPEND_ONLY || ct == FL_CHANGE_INSERT) return 0;
    return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                      "tier: the record at offset %lld is a %s change; without a change hook "
                      "the tiering writer takes +A and +I records only (log tables)",
                      (long long)offset, change_name(ct));
}

/* Row cur_i of the current batch's nested column k (an ARROW batch),
 * or the value its cell holds (a row format), shredded into its leaves. */
static int nested_row(fl_tier_writer_t *w, size_t k, fl_error_t *err) {
    const tier_top_t *top = &w->tops[k];
    fl_tier_nested_reset(top->nested);
    int rc;
    if (w->cur_it) {
        int32_t src = w->cur_s->current ? (int32_t)k : w->cur_s->map.source[k];
        const fl_arrow_array_t *a = src >= 0 ? &w->cur_it->cols[src] : NULL;
        rc = fl_tier_nested_add_arrow(top->nested, a, w->cur_i, err);
    } else {
        const fl_cell_t *c = &w->row.cells[k];
        rc = fl_tier_nested_add_encoded(top->nested, w->cur_fmt,
                                        c->is_null ? NULL : fl_row_cell_bytes(&w->row, c),
                                        c->len, err);
    }
    if (!rc) fl_tier_nested_columns(top->nested, &w->data[top->leaf]);
    return rc;
}

/* The Parquet values of the row: the user columns' cells, then the
 * system columns. */
static int convert_row(fl_tier_writer_t *w, int64_t offset, int64_t ts_us, fl_error_t *err) {
    /* first everything that grows the arena, then the pointers into it */
    for (size_t k = 0; k < w->n_user; k++)
        if (!w->tops[k].nested)
            fl_tier_pad_binary(&w->row, k, w->cols[w->tops[k].leaf].type, &w->scratch);
    for (size_t k = 0; k < w->n_user; k++) {
        const fl_cell_t *c = &w->row.cells[k];
        size_t l = w->tops[k].leaf;
        const tier_column_t *col = &w->cols[l];
        if (w->tops[k].nested) {
            if (nested_row(w, k, err)) {
                fl_err_prefix(err, "the record at offset %lld: ", (long long)offset);
                return TW_CORRUPT;
            }
            continue;
        }
        w->valid[l] = !c->is_null;
        if (c->is_null && !col->spec.optional)
            return fl_err_set(err, TW_CORRUPT, "the record at offset %lld has a NULL in NOT NULL "
                                               "column %s",
                              (long long)offset, col->spec.name);
        if (!c->is_null && fl_tier_value_of(col->type, &w->row, c, &w->vals[l], err)) {
            fl_err_prefix(err, "the record at offset %lld, column %s: ", (long long)offset,
                          col->spec.name);
            return TW_CORRUPT;
        }
    }
    size_t n = w->n_cols - FL_TIER_SYSTEM_COLUMNS;
    w->vals[n].i32 = w->o.bucket;
    w->vals[n + 1].i64 = offset;
    w->vals[n + 2].i64 = ts_us;
    memset(w->valid + n, 1, FL_TIER_SYSTEM_COLUMNS);
    return 0;
}

/* Counts a nested column's leaves into their metrics. */
static void nested_count(fl_tier_writer_t *w, size_t k) {
    const tier_top_t *top = &w->tops[k];
    for (size_t i = 0; i < fl_tier_nested_leaves(top->nested); i++)
        fl_tier_nested_count(top->nested, i, &w->cols[top->leaf + i].metrics);
}

static int write_record(fl_tier_writer_t *w, int64_t offset, fl_change_type_t ct, int64_t ts_us,
                        fl_error_t *err) {
    fl_tier_row_action_t action;
    int rc = decide(w, offset, ct, &action, err);
    if (rc || action == FL_TIER_ROW_SKIP) return rc;
    if (!w->pq && (rc = file_open(w, err))) return rc;
    if ((rc = convert_row(w, offset, ts_us, err))) return rc;
    if ((rc = fl_pq_writer_append(w->pq, w->data, 1, err))) return rc;
    for (size_t k = 0; k < w->n_cols; k++)
        if (!w->cols[k].nested)
            fl_tier_metrics_add(&w->cols[k].metrics, w->valid[k] ? &w->vals[k] : NULL);
    for (size_t k = 0; k < w->n_user; k++)
        if (w->tops[k].nested) nested_count(w, k);
    if (w->file_rows++ == 0) w->file_first = offset;
    w->file_last = offset;
    w->result.record_count++;
    return 0;
}

static int write_rows(fl_tier_writer_t *w, const fl_batch_view_t *b, tier_schema_t *s,
                      int64_t ts_us, fl_error_t *err) {
    int rc;
    fl_batch_rows_t it;
    if ((rc = fl_batch_rows_open(&it, b, w->o.log_format, s->types, s->schema->column_count, err)))
        return rc;
    w->cur_fmt = w->o.log_format == FL_LOG_FORMAT_INDEXED ? FL_ROW_INDEXED : FL_ROW_COMPACTED;
    for (;;) {
        fl_change_type_t ct;
        fl_batch_rows_next_t next = fl_batch_rows_next(&it, &ct, &w->row, err);
        if (next == FL_BATCH_ROWS_END) break;
        if (next == FL_BATCH_ROWS_ERROR) {
            rc = err ? err->code : TW_CORRUPT;
            break;
        }
        if (!s->current) fl_schema_map_row(&s->map, &w->row);
        w->cur_it = w->o.log_format == FL_LOG_FORMAT_ARROW ? &it : NULL;
        w->cur_s = s;
        w->cur_i = it.index - 1;
        rc = write_record(w, b->base_offset + it.index - 1, ct, ts_us, err);
        w->cur_it = NULL;
        if (rc) break;
    }
    fl_batch_rows_close(&it);
    return rc;
}

/* ---- the column path ---- */

typedef enum tier_columns_outcome {
    TIER_COLUMNS_DONE,     /* the batch is written */
    TIER_COLUMNS_ROW_PATH, /* nothing written, nothing counted: the row path's */
    TIER_COLUMNS_REFUSED,  /* a value for the row path to report; metrics touched */
    TIER_COLUMNS_ERROR,    /* err set */
} tier_columns_outcome_t;

/* Whether the batch's decoded columns can go as whole columns: no hook,
 * every record +A or +I, each current column read as its own type. */
static bool columns_fit(const fl_tier_writer_t *w, const fl_batch_rows_t *it,
                        const tier_schema_t *s) {
    if (w->o.on_change || w->o.row_path) return false;
    if (it->b->record_count > (int32_t)(FL_PQ_GROUP_ROWS_MAX / 2)) return false;
    if (it->change_types)
        for (int32_t i = 0; i < it->b->record_count; i++)
            if (it->change_types[i] > FL_CHANGE_INSERT) return false;
    for (size_t k = 0; k < w->n_user && !s->current; k++) {
        int32_t src = s->map.source[k];
        if (src >= 0 && !fl_datatype_equal(s->types[src], w->o.schema->columns[k].type))
            return false;
    }
    return true;
}

/* The batch's rows as columns: each user column converted and counted,
 * the system columns made, one append. */
static tier_columns_outcome_t write_columns(fl_tier_writer_t *w, const fl_batch_rows_t *it,
                                            const tier_schema_t *s, int64_t ts_us,
                                            fl_error_t *err) {
    const fl_batch_view_t *b = it->b;
    int64_t rows = b->record_count;
    if (!columns_fit(w, it, s)) return TIER_COLUMNS_ROW_PATH;
    if (!w->pq && file_open(w, err)) return TIER_COLUMNS_ERROR;
    for (size_t k = 0; k < w->n_user; k++) {
        const tier_top_t *top = &w->tops[k];
        tier_column_t *c = &w->cols[top->leaf];
        int32_t src = s->current ? (int32_t)k : s->map.source[k];
        const fl_arrow_array_t *a = src >= 0 ? &it->cols[src] : NULL;
        if (top->nested) {
            fl_tier_nested_reset(top->nested);
            for (int64_t i = 0; i < rows; i++)
                if (fl_tier_nested_add_arrow(top->nested, a, i, NULL)) return TIER_COLUMNS_REFUSED;
            fl_tier_nested_columns(top->nested, &w->batch[top->leaf]);
            nested_count(w, k);
            continue;
        }
        if (fl_tier_column_convert(a, c->type, &c->spec, rows, &c->metrics, &w->bufs[top->leaf],
                                   &w->batch[top->leaf]) != FL_TIER_COLUMN_DONE)
            return TIER_COLUMNS_REFUSED;
    }
    const int64_t first[FL_TIER_SYSTEM_COLUMNS] = {w->o.bucket, b->base_offset, ts_us};
    for (size_t i = 0; i < FL_TIER_SYSTEM_COLUMNS; i++) {
        size_t k = w->n_cols - FL_TIER_SYSTEM_COLUMNS + i;
        fl_tier_column_sequence(first[i], i == 1, &w->cols[k].spec, rows, &w->cols[k].metrics,
                                &w->bufs[k], &w->batch[k]);
    }
    if (fl_pq_writer_append(w->pq, w->batch, (size_t)rows, err)) return TIER_COLUMNS_ERROR;
    if (w->file_rows == 0) w->file_first = b->base_offset;
    w->file_last = b->base_offset + rows - 1;
    w->file_rows += rows;
    w->result.record_count += rows;
    return TIER_COLUMNS_DONE;
}

/* ARROW batches column by column when they fit, else (and every other
 * format) row by row. A value the column path refused is the row path's
 * to report: the batch then fails there, naming its record. */
static int write_records(fl_tier_writer_t *w, const fl_batch_view_t *b, tier_schema_t *s,
                         fl_error_t *err) {
    int64_t ts_us;
    int rc = fl_tier_micros_of_millis(b->commit_timestamp, &ts_us, err);
    if (rc) return rc;
    if (w->o.log_format != FL_LOG_FORMAT_ARROW || w->o.on_change || w->o.row_path)
        return write_rows(w, b, s, ts_us, err);
    fl_batch_rows_t it;
    if ((rc = fl_batch_rows_open(&it, b, w->o.log_format, s->types, s->schema->column_count, err)))
        return rc;
    tier_columns_outcome_t out = write_columns(w, &it, s, ts_us, err);
    fl_batch_rows_close(&it);
    switch (out) {
    case TIER_COLUMNS_DONE: return 0;
    case TIER_COLUMNS_ERROR: return err ? err->code : TW_CORRUPT;
    case TIER_COLUMNS_ROW_PATH: return write_rows(w, b, s, ts_us, err);
    case TIER_COLUMNS_REFUSED: break;
    }
    if ((rc = write_rows(w, b, s, ts_us, err))) return rc;
    /* the metrics counted part of the batch twice: the writer must fail */
    return fl_err_set(err, FLUSS_ERR__STATE, "tier: the column path refused the batch at offset "
                                             "%lld, which the row path took",
                      (long long)b->base_offset);
}

/* Offsets a batch read back from the log can be trusted with: not
 * negative, its last offset representable, right after the batch before. */
static int check_offsets(const fl_tier_writer_t *w, const fl_batch_view_t *b, fl_error_t *err) {
    if (b->base_offset < 0 || b->base_offset > INT64_MAX - 1 - b->last_offset_delta)
        return fl_err_set(err, TW_CORRUPT, "record batch has base offset %lld",
                          (long long)b->base_offset);
    if (w->result.next_offset >= 0 && b->base_offset != w->result.next_offset)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "tier: the batch at offset %lld does not follow the one before, which "
                          "ended before %lld",
                          (long long)b->base_offset, (long long)w->result.next_offset);
    return 0;
}

static int add_batch(fl_tier_writer_t *w, const uint8_t *p, size_t len, fl_error_t *err) {
    fl_batch_view_t b;
    tier_schema_t *s;
    int rc = fl_batch_parse(p, len, &b, err);
    if (!rc) rc = fl_batch_check_crc(&b, err);
    if (!rc) rc = check_offsets(w, &b, err);
    if (!rc && b.record_count > 0) {
        rc = schema_get(w, b.schema_id, &s, err);
        if (!rc) rc = write_records(w, &b, s, err);
    }
    if (rc) return rc;
    if (w->result.first_offset < 0) w->result.first_offset = b.base_offset;
    w->result.next_offset = fl_batch_next_offset(&b);
    /* roll between batches: the estimate counts buffered values uncompressed */
    if (w->pq && fl_pq_writer_position(w->pq) + fl_pq_writer_buffered_bytes(w->pq) >=
                     w->o.target_file_bytes)
        return file_close(w, err);
    return 0;
}

int fl_tier_writer_add_batch(fl_tier_writer_t *w, const uint8_t *p, size_t len, fl_error_t *err) {
    if (w->failed || w->finished)
        return fl_err_set(err, FLUSS_ERR__STATE, "tier: the writer %s",
                          w->failed ? "failed earlier" : "is finished");
    int rc = add_batch(w, p, len, err);
    if (rc) w->failed = true;
    return rc;
}

int fl_tier_writer_add_row(fl_tier_writer_t *w, int64_t offset, int64_t ts_ms,
                           fl_change_type_t ct, fl_row_t *row, fl_error_t *err) {
    if (w->failed || w->finished)
        return fl_err_set(err, FLUSS_ERR__STATE, "tier: the writer %s",
                          w->failed ? "failed earlier" : "is finished");
    if (row->column_count != w->n_user) {
        w->failed = true;
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "tier: a row of %zu columns for a schema of %zu", row->column_count,
                          w->n_user);
    }
    /* the row stands in for the writer's own while it is written */
    fl_row_t own = w->row;
    w->row = *row;
    w->cur_it = NULL;
    w->cur_fmt = w->o.kv_format;
    int rc = write_record(w, offset, ct, ts_ms * 1000, err);
    *row = w->row; /* padding may have grown its arena */
    w->row = own;
    if (!rc && w->pq && fl_pq_writer_position(w->pq) + fl_pq_writer_buffered_bytes(w->pq) >=
                            w->o.target_file_bytes)
        rc = file_close(w, err);
    if (rc) w->failed = true;
    return rc;
}

/* ---- finish, close, abort ---- */

int fl_tier_writer_finish(fl_tier_writer_t *w, const fl_tier_writer_result_t **out, fl_error_t *err) {
    *out = NULL;
    if (w->failed || w->finished)
        return fl_err_set(err, FLUSS_ERR__STATE, "tier: the writer %s",
                          w->failed ? "failed earlier" : "is finished");
    int rc = w->pq ? file_close(w, err) : 0;
    /* one directory fsync makes every file's name durable */
    if (!rc && w->n_files) rc = fl_fs_fsync_dir(w->o.dir, err);
    if (rc) {
        w->failed = true;
        return rc;
    }
    w->finished = true;
    w->result.files = w->files;
    w->result.n_files = w->n_files;
    *out = &w->result;
    return 0;
}

void fl_tier_writer_close(fl_tier_writer_t *w) {
    if (!w) return;
    fl_pq_writer_destroy(w->pq);
    for (size_t k = 0; k < w->n_cols; k++) fl_tier_metrics_free(&w->cols[k].metrics);
    for (size_t i = 0; i < w->n_schemas; i++) {
        fl_free(w->schemas[i].types);
        fl_schema_map_free(&w->schemas[i].map);
    }
    fl_free(w->schemas);
    if (w->tops)
        for (size_t k = 0; k < w->n_user; k++) fl_tier_nested_destroy(w->tops[k].nested);
    fl_free(w->tops);
    fl_free(w->nodes);
    fl_free(w->cols);
    fl_free(w->specs);
    fl_free(w->vals);
    fl_free(w->valid);
    fl_free(w->data);
    if (w->bufs)
        for (size_t k = 0; k < w->n_cols; k++) fl_tier_column_buf_free(&w->bufs[k]);
    fl_free(w->bufs);
    fl_free(w->batch);
    fl_row_free(&w->row);
    fl_free(w->path);
    fl_free(w->files);
    fl_strlist_free(&w->created);
    fl_avro_arena_reset(&w->arena);
    fl_buf_free(&w->scratch);
    fl_free((char *)w->o.dir);
    fl_free((char *)w->o.prefix);
    fl_free(w);
}

void fl_tier_writer_abort(fl_tier_writer_t *w) {
    if (!w) return;
    fl_pq_writer_destroy(w->pq); /* closes the open file's descriptor first */
    w->pq = NULL;
    for (size_t i = 0; i < w->created.count; i++) fl_vfs_unlink(w->created.items[i]);
    fl_tier_writer_close(w);
}
