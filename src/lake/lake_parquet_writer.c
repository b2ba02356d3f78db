/*
 * lake_parquet_writer.c — the Parquet writer (lake_parquet_writer.h has
 * the file layout). Open turns the schema tree into the footer's schema
 * list once (lake_parquet_meta.h's tree gives each leaf its levels and
 * path). Appends buffer each column of the open row group as definition
 * and repetition levels (a byte per level entry; a flat column's entry is
 * a row) and PLAIN values of the entries at max_def (a byte per BOOLEAN);
 * a row group goes out column chunk by column chunk: decide dictionary or
 * PLAIN for the chunk, cut pages at row starts by rows and value bytes,
 * compress each page body, write header and body. The footer collects
 * every chunk's metadata. Statistics are kept while appending.
 */
#include "lake_parquet_writer.h"

#include <assert.h>
#include <fcntl.h>
#include <math.h>
#include <snappy-c.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "common_alloc.h"
#include "common_vfs.h"
#include "lake_rle.h"

#ifndef FLUSS_BUILD_SHA
#define FLUSS_BUILD_SHA "unknown"
#endif

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "PLAIN values are copied as little-endian memory"
#endif

#define PQ_MAGIC "PAR1"
/* A single value may not exceed this: page sizes are i32 in PageHeader. */
#define PQ_VALUE_BYTES_MAX (64u << 20)

typedef struct pq_column {
    fl_pq_column_spec_t spec; /* name: the schema element's */
    size_t element; /* its schema element */
    int max_def, max_rep;
    uint8_t rep_def[FL_PQ_LEVEL_MAX + 1]; /* [r]: def level of the r-th repeated ancestor */
    fl_buf_t defs; /* a def level per entry of the open group (max_def: present) */
    fl_buf_t reps; /* a rep level per entry; empty when max_rep == 0 */
    fl_buf_t vals; /* PLAIN values of the present entries (BOOLEAN: a byte each) */
    size_t nonnull;
    int64_t nulls;
    bool has_minmax;
    fl_buf_t min, max; /* PLAIN bytes (BYTE_ARRAY: without the length) */
} pq_column_t;

struct fl_pq_writer {
    fl_pq_writer_options_t opts;
    fl_pq_schema_element_t *schema; /* the footer's, names owned; [0] the root */
    size_t n_schema;
    fl_pq_schema_tree_t tree;
    pq_column_t *cols; /* one per leaf */
    size_t n_cols;
    int fd; /* -1: in memory */
    fl_buf_t mem;
    uint64_t pos;
    bool failed;
    size_t group_rows;
    fl_pq_row_group_t *groups;
    size_t n_groups, cap_groups;
    int64_t total_rows;
    fl_buf_t scratch, page, packed;
};

void fl_pq_writer_options_init(fl_pq_writer_options_t *o) {
    memset(o, 0, sizeof(*o));
    o->codec = FL_PQ_CODEC_ZSTD;
    o->zstd_level = 3;
    o->page_bytes_max = 1u << 20;
    o->page_rows_max = 20000;
    o->row_group_bytes_max = 64u << 20;
    o->dictionary_bytes_max = 1u << 20;
}

/* Bytes of each PLAIN value of a column of spec c; 0 for BYTE_ARRAY. */
static size_t value_width(const fl_pq_column_spec_t *c) {
    return c->type == FL_PQ_FLBA ? (size_t)c->type_length : fl_pq_fixed_width(c->type);
}

static int check_spec(const fl_pq_column_spec_t *c, fl_error_t *err) {
    const fl_pq_logical_t *l = &c->logical;
    if (!c->name || !*c->name) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "parquet: unnamed column");
    bool flba = c->type == FL_PQ_FLBA;
    if ((c->type != FL_PQ_BYTE_ARRAY && !flba && !fl_pq_fixed_width(c->type)) ||
        (flba && (c->type_length < 1 || c->type_length > FL_PQ_FLBA_BYTES_MAX)))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "parquet: column %s: type %d outside the subset",
                          c->name, c->type);
    bool ok;
    switch (l->kind) {
    case FL_PQ_LT_NONE: ok = true; break;
    case FL_PQ_LT_STRING: ok = c->type == FL_PQ_BYTE_ARRAY; break;
    case FL_PQ_LT_DATE: ok = c->type == FL_PQ_INT32; break;
    case FL_PQ_LT_TIME:
    case FL_PQ_LT_TIMESTAMP: ok = c->type == FL_PQ_INT64 && l->unit == FL_PQ_UNIT_MICROS; break;
    case FL_PQ_LT_DECIMAL:
        ok = l->precision >= 1 && l->scale >= 0 && l->scale <= l->precision &&
             ((c->type == FL_PQ_INT32 && l->precision <= 9) ||
              (c->type == FL_PQ_INT64 && l->precision <= 18) ||
              (flba && l->precision <= 38 &&
               (size_t)c->type_length >= fl_pq_decimal_bytes(l->precision)));
        break;
    default: ok = false;
    }
    if (!ok)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "parquet: column %s: logical type %d does not fit type %d", c->name,
                          l->kind, c->type);
    return 0;
}

/* ---- output ---- */

static int emit(fl_pq_writer_t *w, const void *p, size_t n, fl_error_t *err) {
    if (w->failed) return fl_err_set(err, FLUSS_ERR__STATE, "parquet: writer failed earlier");
    if (w->fd < 0) {
        fl_buf_append(&w->mem, p, n);
    } else if (fl_vfs_pwrite_full(w->fd, p, n, (off_t)w->pos)) {
        w->failed = true;
        return fl_err_set(err, FLUSS_ERR__IO, "parquet: write at %llu: %m",
                          (unsigned long long)w->pos);
    }
    w->pos += n;
    return 0;
}

/* The schema list of nodes (root first): names copied, converted and
 * logical types of groups and leaves. INVALID_ARG for a node outside the
 * subset or a tree whose counts do not add up. */
static int schema_of_nodes(fl_pq_writer_t *w, const fl_pq_node_t *nodes, size_t n, bool flat,
                           fl_error_t *err) {
    if (n == 0) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "parquet: no columns");
    if (n > INT32_MAX - 1) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "parquet: %zu nodes", n);
    /* the root's children: the subtrees at depth 0 */
    int64_t left[FL_PQ_LEVEL_MAX + 1];
    size_t depth = 0, top = 0;
    for (size_t i = 0; i < n; i++) {
        const fl_pq_node_t *d = &nodes[i];
        while (depth && left[depth - 1] == 0) depth--;
        if (depth == 0)
            top++;
        else
            left[depth - 1]--;
        if (!d->name || !*d->name)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "parquet: unnamed node %zu", i);
        if (d->repetition < FL_PQ_REQUIRED || d->repetition > FL_PQ_REPEATED || d->n_children < 0)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "parquet: node %s: repetition %d, %d children", d->name,
                              d->repetition, d->n_children);
        if (d->n_children > 0) {
            if (d->group < FL_PQ_GROUP_PLAIN || d->group > FL_PQ_GROUP_MAP)
                return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "parquet: group %s: annotation %d",
                                  d->name, d->group);
            if (depth == FL_PQ_LEVEL_MAX)
                return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "parquet: group %s too deep",
                                  d->name);
            left[depth++] = d->n_children;
        }
    }
    while (depth && left[depth - 1] == 0) depth--;
    if (depth)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "parquet: children past the end of the nodes");
    w->n_schema = n + 1;
    w->schema = fl_calloc(n + 1, sizeof(*w->schema));
    fl_pq_schema_element_t *s = w->schema;
    s[0].name = fl_strdup("schema");
    s[0].type = -1;
    s[0].repetition = -1;
    s[0].converted_type = -1;
    s[0].num_children = (int32_t)top;
    for (size_t i = 0; i < n; i++) {
        const fl_pq_node_t *d = &nodes[i];
        fl_pq_schema_element_t *e = &s[i + 1];
        e->name = fl_strdup(d->name);
        e->repetition = d->repetition;
        e->has_field_id = flat || d->field_id >= 0;
        e->field_id = d->field_id;
        e->converted_type = -1;
        if (d->n_children > 0) {
            e->type = -1;
            e->num_children = d->n_children;
            if (d->group == FL_PQ_GROUP_LIST) {
                e->converted_type = FL_PQ_CT_LIST;
                e->logical.kind = FL_PQ_LT_LIST;
            } else if (d->group == FL_PQ_GROUP_MAP) {
                e->converted_type = FL_PQ_CT_MAP;
                e->logical.kind = FL_PQ_LT_MAP;
            }
            continue;
        }
        fl_pq_column_spec_t c = {d->name, d->field_id, d->type, d->repetition != FL_PQ_REQUIRED,
                                 d->logical, d->type_length};
        if (check_spec(&c, err)) return FLUSS_ERR__INVALID_ARG;
        e->type = c.type;
        e->type_length = c.type == FL_PQ_FLBA ? c.type_length : 0;
        e->logical = c.logical;
        switch (c.logical.kind) {
        case FL_PQ_LT_STRING: e->converted_type = FL_PQ_CT_UTF8; break;
        case FL_PQ_LT_DATE: e->converted_type = FL_PQ_CT_DATE; break;
        case FL_PQ_LT_TIME: e->converted_type = FL_PQ_CT_TIME_MICROS; break;
        /* also for local timestamps (LogicalTypes.md: legacy annotation) */
        case FL_PQ_LT_TIMESTAMP: e->converted_type = FL_PQ_CT_TIMESTAMP_MICROS; break;
        case FL_PQ_LT_DECIMAL:
            e->converted_type = FL_PQ_CT_DECIMAL;
            e->scale = c.logical.scale;
            e->precision = c.logical.precision;
            break;
        default: break;
        }
    }
    if (fl_pq_schema_tree_build(s, n + 1, &w->tree, err))
        return err ? (err->code = FLUSS_ERR__INVALID_ARG) : FLUSS_ERR__INVALID_ARG;
    return 0;
}

/* The columns of the tree's leaves: spec, levels, and the def level of
 * each repeated ancestor (what a rep level r > 0 needs its def to reach). */
static void columns_of_tree(fl_pq_writer_t *w) {
    const fl_pq_schema_tree_t *t = &w->tree;
    w->n_cols = t->n_columns;
    w->cols = fl_calloc(w->n_cols, sizeof(*w->cols));
    for (size_t k = 0; k < w->n_cols; k++) {
        pq_column_t *c = &w->cols[k];
        size_t e = t->leaves[k];
        const fl_pq_schema_element_t *el = &w->schema[e];
        c->element = e;
        c->spec = (fl_pq_column_spec_t){el->name, el->field_id, el->type,
                                        el->repetition != FL_PQ_REQUIRED, el->logical,
                                        el->type_length};
        c->max_def = t->def[e];
        c->max_rep = t->rep[e];
        for (int32_t a = (int32_t)e; a > 0; a = t->parent[a])
            if (w->schema[a].repetition == FL_PQ_REPEATED) c->rep_def[t->rep[a]] = t->def[a];
    }
}

static int writer_open(const char *path, const fl_pq_node_t *nodes, size_t n_nodes, bool flat,
                       const fl_pq_writer_options_t *opts, fl_pq_writer_t **out,
                       fl_error_t *err) {
    *out = NULL;
    if (opts->codec != FL_PQ_CODEC_UNCOMPRESSED && opts->codec != FL_PQ_CODEC_ZSTD &&
        opts->codec != FL_PQ_CODEC_SNAPPY && opts->codec != FL_PQ_CODEC_GZIP)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "parquet: codec %d not built", opts->codec);
    if (!opts->page_rows_max || !opts->page_bytes_max || opts->page_bytes_max > FL_PQ_PAGE_BYTES_MAX / 2)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "parquet: page limits");
    fl_pq_writer_t *w = fl_calloc(1, sizeof(*w));
    w->opts = *opts;
    w->fd = -1;
    if (schema_of_nodes(w, nodes, n_nodes, flat, err)) {
        fl_pq_writer_destroy(w);
        return FLUSS_ERR__INVALID_ARG;
    }
    columns_of_tree(w);
    if (path) {
        w->fd = fl_vfs_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (w->fd < 0) {
            fl_err_set(err, FLUSS_ERR__IO, "parquet: create %s: %m", path);
            fl_pq_writer_destroy(w);
            return FLUSS_ERR__IO;
        }
    }
    if (emit(w, PQ_MAGIC, 4, err)) {
        fl_pq_writer_destroy(w);
        return FLUSS_ERR__IO;
    }
    *out = w;
    return 0;
}

int fl_pq_writer_open_tree(const char *path, const fl_pq_node_t *nodes, size_t n_nodes,
                           const fl_pq_writer_options_t *opts, fl_pq_writer_t **out,
                           fl_error_t *err) {
    return writer_open(path, nodes, n_nodes, false, opts, out, err);
}

/* The flat schema: each spec a leaf of the root, its field id written
 * whatever its value (as before trees). */
int fl_pq_writer_open(const char *path, const fl_pq_column_spec_t *cols, size_t n_cols,
                      const fl_pq_writer_options_t *opts, fl_pq_writer_t **out, fl_error_t *err) {
    *out = NULL;
    if (n_cols == 0) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "parquet: no columns");
    for (size_t i = 0; i < n_cols; i++)
        if (check_spec(&cols[i], err)) return err ? err->code : FLUSS_ERR__INVALID_ARG;
    fl_pq_node_t *nodes = fl_calloc(n_cols, sizeof(*nodes));
    for (size_t i = 0; i < n_cols; i++)
        nodes[i] = (fl_pq_node_t){cols[i].name, cols[i].field_id,
                                  cols[i].optional ? FL_PQ_OPTIONAL : FL_PQ_REQUIRED, 0,
                                  FL_PQ_GROUP_PLAIN, cols[i].type, cols[i].logical,
                                  cols[i].type_length};
    int rc = writer_open(path, nodes, n_cols, true, opts, out, err);
    fl_free(nodes);
    return rc;
}

void fl_pq_writer_levels(const fl_pq_writer_t *w, size_t column, int *max_def, int *max_rep) {
    assert(column < w->n_cols);
    *max_def = w->cols[column].max_def;
    *max_rep = w->cols[column].max_rep;
}

/* ---- statistics ---- */

/* compare()'s order of a DECIMAL in FLBA: signed big-endian numbers */
#define PQ_SIGNED_BE (-2)

/* The order compare() puts c's values in. */
static int32_t order_of(const fl_pq_column_spec_t *c) {
    return c->type == FL_PQ_FLBA && c->logical.kind == FL_PQ_LT_DECIMAL ? PQ_SIGNED_BE : c->type;
}

/* <0, 0, >0 as a sorts before, with, after b (TYPE_ORDER). */
static int compare(int32_t type, const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    switch (type) {
    case FL_PQ_BOOLEAN: return (int)a[0] - (int)b[0];
    case FL_PQ_INT32: {
        int32_t x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return (x > y) - (x < y);
    }
    case FL_PQ_INT64: {
        int64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return (x > y) - (x < y);
    }
    case FL_PQ_FLOAT: {
        float x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return (x > y) - (x < y);
    }
    case FL_PQ_DOUBLE: {
        double x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return (x > y) - (x < y);
    }
    case PQ_SIGNED_BE:
        /* two's complement of equal lengths: the sign byte decides first */
        if ((int8_t)a[0] != (int8_t)b[0]) return (int8_t)a[0] < (int8_t)b[0] ? -1 : 1;
        return an > 1 ? memcmp(a + 1, b + 1, an - 1) : 0;
    default: {
        /* unsigned bytes; an empty min buffer has no data pointer */
        int c = an && bn ? memcmp(a, b, an < bn ? an : bn) : 0;
        return c ? c : (an > bn) - (an < bn);
    }
    }
}

static bool is_nan(int32_t type, const uint8_t *v) {
    if (type == FL_PQ_FLOAT) {
        float f;
        memcpy(&f, v, 4);
        return isnan(f);
    }
    if (type == FL_PQ_DOUBLE) {
        double d;
        memcpy(&d, v, 8);
        return isnan(d);
    }
    return false;
}

static void set_buf(fl_buf_t *b, const uint8_t *p, size_t n) {
    fl_buf_reset(b);
    fl_buf_append(b, p, n);
}

static void stats_add(pq_column_t *c, const uint8_t *v, size_t n) {
    int32_t t = order_of(&c->spec);
    if (is_nan(t, v)) return; /* never in min/max */
    if (!c->has_minmax) {
        set_buf(&c->min, v, n);
        set_buf(&c->max, v, n);
        c->has_minmax = true;
        return;
    }
    if (compare(t, v, n, c->min.data, c->min.len) < 0) set_buf(&c->min, v, n);
    if (compare(t, v, n, c->max.data, c->max.len) > 0) set_buf(&c->max, v, n);
}

/* A zero min is written -0.0 and a zero max +0.0 (the format's rule: a
 * reader cannot tell which zeros the chunk holds). */
static void stats_zero_signs(pq_column_t *c) {
    if (!c->has_minmax) return;
    if (c->spec.type == FL_PQ_FLOAT) {
        float f;
        memcpy(&f, c->min.data, 4);
        if (f == 0.0f) f = -0.0f, memcpy(c->min.data, &f, 4);
        memcpy(&f, c->max.data, 4);
        if (f == 0.0f) f = 0.0f, memcpy(c->max.data, &f, 4);
    } else if (c->spec.type == FL_PQ_DOUBLE) {
        double d;
        memcpy(&d, c->min.data, 8);
        if (d == 0.0) d = -0.0, memcpy(c->min.data, &d, 8);
        memcpy(&d, c->max.data, 8);
        if (d == 0.0) d = 0.0, memcpy(c->max.data, &d, 8);
    }
}

/* ---- append ---- */

static int check_value_len(const pq_column_t *c, const fl_pq_column_data_t *d, size_t i,
                           fl_error_t *err) {
    if (c->spec.type == FL_PQ_BYTE_ARRAY &&
        ((const fl_pq_bytes_t *)d->values)[i].len > PQ_VALUE_BYTES_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "parquet: value of %u bytes in column %s",
                          ((const fl_pq_bytes_t *)d->values)[i].len, c->spec.name);
    return 0;
}

/* A column given as levels: each level in range, rows where rep is 0,
 * a continued list (rep r > 0) only below a present r-th repeated field. */
static int check_levels(const pq_column_t *c, const fl_pq_column_data_t *d, size_t rows,
                        fl_error_t *err) {
    size_t n = d->levels, seen = 0;
    if (n > FL_PQ_CHUNK_LEVELS_MAX / 2)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "parquet: column %s: %zu levels",
                          c->spec.name, n);
    if (c->max_rep > 0 && !d->rep)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "parquet: column %s: no repetition levels (max %d)", c->spec.name,
                          c->max_rep);
    for (size_t i = 0; i < n; i++) {
        int def = d->def[i], rep = d->rep ? d->rep[i] : 0;
        if (def > c->max_def || rep > c->max_rep)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "parquet: column %s: levels def %d rep %d at %zu past %d/%d",
                              c->spec.name, def, rep, i, c->max_def, c->max_rep);
        if (rep == 0) {
            seen++;
        } else if (i == 0) {
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "parquet: column %s: the batch starts inside a row (rep %d)",
                              c->spec.name, rep);
        } else if (def < c->rep_def[rep]) {
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "parquet: column %s: rep %d with def %d below %d at %zu",
                              c->spec.name, rep, def, c->rep_def[rep], i);
        }
        if (def == c->max_def && check_value_len(c, d, i, err)) return FLUSS_ERR__INVALID_ARG;
    }
    if (seen != rows)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "parquet: column %s: %zu rows, not %zu",
                          c->spec.name, seen, rows);
    return 0;
}

static int check_append(const fl_pq_writer_t *w, const fl_pq_column_data_t *cols, size_t rows,
                        fl_error_t *err) {
    for (size_t k = 0; k < w->n_cols; k++) {
        const pq_column_t *c = &w->cols[k];
        if (cols[k].def) {
            if (check_levels(c, &cols[k], rows, err)) return FLUSS_ERR__INVALID_ARG;
            continue;
        }
        if (c->max_rep > 0 || c->max_def > 1)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "parquet: column %s takes levels (max def %d, rep %d)",
                              c->spec.name, c->max_def, c->max_rep);
        for (size_t i = 0; i < rows; i++) {
            bool present = !cols[k].valid || cols[k].valid[i];
            if (!present && c->max_def == 0)
                return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                                  "parquet: null in required column %s (row %zu)", c->spec.name, i);
            if (present && check_value_len(c, &cols[k], i, err)) return FLUSS_ERR__INVALID_ARG;
        }
    }
    return 0;
}

/* The batch's least and greatest present values (NaN left out, the
 * first of equals kept) into the chunk's statistics: what stats_add of
 * every value in turn gives, with two calls. PLAIN values p[0, n). */
#define PQ_EXTREMES(T, NAN_TEST)                                                                 \
    do {                                                                                         \
        for (size_t i = 0; i < n; i++) {                                                         \
            T e;                                                                                 \
            memcpy(&e, p + i * sizeof(T), sizeof(T));                                            \
            if (NAN_TEST) continue;                                                              \
            if (lo == SIZE_MAX) {                                                                \
                lo = hi = i, elo = ehi = e;                                                      \
                continue;                                                                        \
            }                                                                                    \
            if (e < elo) lo = i, elo = e;                                                        \
            if (e > ehi) hi = i, ehi = e;                                                        \
        }                                                                                        \
    } while (0)

static void stats_add_fixed(pq_column_t *c, const uint8_t *p, size_t n, size_t width) {
    size_t lo = SIZE_MAX, hi = SIZE_MAX;
    switch (c->spec.type) {
    case FL_PQ_BOOLEAN: {
        uint8_t elo = 0, ehi = 0;
        PQ_EXTREMES(uint8_t, false);
        break;
    }
    case FL_PQ_INT32: {
        int32_t elo = 0, ehi = 0;
        PQ_EXTREMES(int32_t, false);
        break;
    }
    case FL_PQ_INT64: {
        int64_t elo = 0, ehi = 0;
        PQ_EXTREMES(int64_t, false);
        break;
    }
    case FL_PQ_FLOAT: {
        float elo = 0, ehi = 0;
        PQ_EXTREMES(float, isnan(e));
        break;
    }
    case FL_PQ_FLBA:
        for (size_t i = 0; i < n; i++) stats_add(c, p + i * width, width);
        return;
    default: {
        double elo = 0, ehi = 0;
        PQ_EXTREMES(double, isnan(e));
        break;
    }
    }
    if (lo == SIZE_MAX) return;
    stats_add(c, p + lo * width, width);
    if (hi != lo) stats_add(c, p + hi * width, width);
}

/* Levels, PLAIN values and statistics of a column's entries (rows of a
 * flat column given by valid): one reservation per buffer and the
 * statistics' two extremes per append (an append is a whole log batch for
 * the tiering writer's column path). */
static void append_column(pq_column_t *c, const fl_pq_column_data_t *d, size_t rows) {
    size_t width = value_width(&c->spec), present = 0;
    size_t n = d->def ? d->levels : rows;
    const uint8_t md = (uint8_t)c->max_def;
    uint8_t *defs = fl_buf_reserve(&c->defs, n ? n : 1);
    if (d->def) {
        if (n) memcpy(defs, d->def, n);
        for (size_t i = 0; i < n; i++) present += defs[i] == md;
    } else {
        for (size_t i = 0; i < n; i++) present += (defs[i] = !d->valid || d->valid[i] ? md : 0) == md;
    }
    c->defs.len += n;
    if (c->max_rep > 0) {
        uint8_t *reps = fl_buf_reserve(&c->reps, n ? n : 1);
        if (n) memcpy(reps, d->rep, n);
        c->reps.len += n;
    }
    c->nonnull += present;
    c->nulls += (int64_t)(n - present);
    rows = n; /* from here on a slot per entry */
    if (c->spec.type == FL_PQ_BYTE_ARRAY) {
        const fl_pq_bytes_t *b = d->values;
        size_t total = 0;
        for (size_t i = 0; i < rows; i++)
            if (defs[i] == md) total += 4 + (size_t)b[i].len;
        uint8_t *out = fl_buf_reserve(&c->vals, total ? total : 1);
        const fl_pq_bytes_t *lo = NULL, *hi = NULL;
        for (size_t i = 0; i < rows; i++) {
            if (defs[i] != md) continue;
            const fl_pq_bytes_t *v = &b[i];
            uint32_t len = v->len;
            out[0] = (uint8_t)len, out[1] = (uint8_t)(len >> 8), out[2] = (uint8_t)(len >> 16),
            out[3] = (uint8_t)(len >> 24);
            if (len) memcpy(out + 4, v->p, len);
            out += 4 + len;
            if (!lo) {
                lo = hi = v;
            } else {
                if (compare(FL_PQ_BYTE_ARRAY, v->p, len, lo->p, lo->len) < 0) lo = v;
                if (compare(FL_PQ_BYTE_ARRAY, v->p, len, hi->p, hi->len) > 0) hi = v;
            }
        }
        c->vals.len += total;
        if (lo) {
            stats_add(c, lo->p ? lo->p : (const uint8_t *)"", lo->len);
            if (hi != lo) stats_add(c, hi->p ? hi->p : (const uint8_t *)"", hi->len);
        }
        return;
    }
    size_t at = c->vals.len;
    uint8_t *out = fl_buf_reserve(&c->vals, present ? present * width : 1);
    const uint8_t *in = d->values;
    if (c->spec.type == FL_PQ_BOOLEAN) {
        for (size_t i = 0; i < rows; i++)
            if (defs[i] == md) *out++ = in[i] ? 1 : 0;
    } else if (present == rows) {
        memcpy(out, in, rows * width);
    } else {
        for (size_t i = 0; i < rows; i++)
            if (defs[i] == md) memcpy(out, in + i * width, width), out += width;
    }
    c->vals.len += present * width;
    stats_add_fixed(c, c->vals.data + at, present, width);
}

static size_t group_bytes(const fl_pq_writer_t *w) {
    size_t n = 0;
    for (size_t k = 0; k < w->n_cols; k++)
        n += w->cols[k].vals.len + w->cols[k].defs.len + w->cols[k].reps.len;
    return n;
}

/* The most level entries a column of the open group holds. */
static size_t group_levels(const fl_pq_writer_t *w) {
    size_t n = 0;
    for (size_t k = 0; k < w->n_cols; k++)
        if (w->cols[k].defs.len > n) n = w->cols[k].defs.len;
    return n;
}

int fl_pq_writer_append(fl_pq_writer_t *w, const fl_pq_column_data_t *cols, size_t rows,
                        fl_error_t *err) {
    if (w->failed) return fl_err_set(err, FLUSS_ERR__STATE, "parquet: writer failed earlier");
    if (rows > FL_PQ_GROUP_ROWS_MAX / 2)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "parquet: append of %zu rows", rows);
    if (check_append(w, cols, rows, err)) return FLUSS_ERR__INVALID_ARG;
    for (size_t k = 0; k < w->n_cols; k++) append_column(&w->cols[k], &cols[k], rows);
    w->group_rows += rows;
    if (group_bytes(w) >= w->opts.row_group_bytes_max || w->group_rows >= FL_PQ_GROUP_ROWS_MAX / 2 ||
        group_levels(w) >= FL_PQ_CHUNK_LEVELS_MAX / 2)
        return fl_pq_writer_flush_row_group(w, err);
    return 0;
}

/* ---- chunks ---- */

/* The chunk being written: where each present value's PLAIN bytes start
 * in vals (n+1 offsets), its dictionary if any. */
typedef struct pq_chunk {
    pq_column_t *c;
    size_t *off;
    uint32_t *idx; /* dictionary index per present value, or NULL */
    size_t *dict; /* value number of each dictionary entry */
    size_t n_dict;
    size_t dict_bytes;
    fl_pq_column_meta_t *meta;
    int64_t start;
    bool used_plain;
} pq_chunk_t;

/* 8 bytes at a time, each step multiplied and folded (splitmix64's
 * constants): the dictionary's order is the values' first appearance, so
 * the hash only decides where a value's slot is, never the output. */
static uint64_t hash_bytes(const uint8_t *p, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n, x;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&x, p, 8);
        h = (h ^ x) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    x = 0;
    if (n) memcpy(&x, p, n);
    h = (h ^ x) * 0x94D049BB133111EBull;
    return h ^ (h >> 29);
}

/* The hash of present value i of the chunk (BYTE_ARRAY without its
 * length prefix). */
static uint64_t value_hash(const pq_chunk_t *ch, size_t i) {
    const uint8_t *v = ch->c->vals.data + ch->off[i];
    size_t len = ch->off[i + 1] - ch->off[i];
    return ch->c->spec.type == FL_PQ_BYTE_ARRAY ? hash_bytes(v + 4, len - 4)
                                                 : hash_bytes(v, len);
}

/* A slot: the entry + 1 in the low half (0: empty), the hash's high half
 * above, so that most mismatches are told without touching the values. */
#define PQ_SLOT(h, entry) (((h) & 0xFFFFFFFF00000000ull) | (uint64_t)((entry) + 1))

/* The table at twice its slots, every entry placed again. */
static uint64_t *grow_table(const pq_chunk_t *ch, uint64_t *table, size_t *slots) {
    size_t n = *slots * 2;
    uint64_t *t = fl_calloc(n, sizeof(*t));
    for (size_t e = 0; e < ch->n_dict; e++) {
        uint64_t h = value_hash(ch, ch->dict[e]);
        size_t s = (size_t)h & (n - 1);
        while (t[s]) s = (s + 1) & (n - 1);
        t[s] = PQ_SLOT(h, e);
    }
    fl_free(table);
    *slots = n;
    return t;
}

/* Builds the dictionary (entries in the order of their first value);
 * false (and nothing kept) once its PLAIN size passes the limit. The
 * table starts small and doubles at half full: a column of few distinct
 * values probes a table that stays in cache. */
static bool build_dictionary(pq_chunk_t *ch, size_t limit) {
    pq_column_t *c = ch->c;
    size_t n = c->nonnull;
    if (c->spec.type == FL_PQ_BOOLEAN || n == 0 || limit == 0) return false;
    size_t slots = 1024;
    uint64_t *table = fl_calloc(slots, sizeof(*table));
    ch->idx = fl_malloc(n * sizeof(uint32_t));
    ch->dict = fl_malloc(n * sizeof(size_t));
    ch->n_dict = 0;
    ch->dict_bytes = 0;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *v = c->vals.data + ch->off[i];
        size_t len = ch->off[i + 1] - ch->off[i];
        uint64_t h = value_hash(ch, i);
        size_t s = (size_t)h & (slots - 1);
        for (;;) {
            uint64_t slot = table[s];
            if (!slot) {
                ch->dict_bytes += len;
                if (ch->dict_bytes > limit) goto too_big;
                ch->dict[ch->n_dict] = i;
                ch->idx[i] = (uint32_t)ch->n_dict;
                table[s] = PQ_SLOT(h, ch->n_dict);
                ch->n_dict++;
                if (2 * ch->n_dict > slots) table = grow_table(ch, table, &slots);
                break;
            }
            if ((slot ^ h) >> 32 == 0) {
                size_t entry = (size_t)(uint32_t)slot - 1, e = ch->dict[entry];
                size_t elen = ch->off[e + 1] - ch->off[e];
                if (elen == len && memcmp(c->vals.data + ch->off[e], v, len) == 0) {
                    ch->idx[i] = (uint32_t)entry;
                    break;
                }
            }
            s = (s + 1) & (slots - 1);
        }
    }
    fl_free(table);
    return true;
too_big:
    fl_free(table);
    fl_free(ch->idx);
    fl_free(ch->dict);
    ch->idx = NULL;
    ch->dict = NULL;
    return false;
}

/* A GZIP member (RFC 1952, as parquet-mr's GzipCodec writes it: zlib's
 * default level) of body into w->packed. */
static int gzip_page(fl_pq_writer_t *w, const fl_buf_t *body, fl_error_t *err) {
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "parquet: cannot start deflating");
    size_t bound = deflateBound(&z, (uLong)body->len) + 32; /* + the gzip header and trailer */
    uint8_t *dst = fl_buf_reserve(&w->packed, bound);
    z.next_in = body->data;
    z.avail_in = (uInt)body->len;
    z.next_out = dst;
    z.avail_out = (uInt)bound;
    int zr = deflate(&z, Z_FINISH);
    w->packed.len = z.total_out;
    deflateEnd(&z);
    if (zr != Z_STREAM_END) return fl_err_set(err, FLUSS_ERR__IO, "parquet: gzip: %d", zr);
    return 0;
}

/* The page body compressed with the writer's codec into w->packed. */
static int compress_page(fl_pq_writer_t *w, const fl_buf_t *body, fl_error_t *err) {
    fl_buf_reset(&w->packed);
    switch (w->opts.codec) {
    case FL_PQ_CODEC_ZSTD: {
        size_t bound = ZSTD_compressBound(body->len);
        uint8_t *dst = fl_buf_reserve(&w->packed, bound);
        size_t got = ZSTD_compress(dst, bound, body->data, body->len, w->opts.zstd_level);
        if (ZSTD_isError(got))
            return fl_err_set(err, FLUSS_ERR__IO, "parquet: zstd: %s", ZSTD_getErrorName(got));
        w->packed.len = got;
        return 0;
    }
    case FL_PQ_CODEC_SNAPPY: { /* a raw block, not the framed format */
        size_t got = snappy_max_compressed_length(body->len);
        char *dst = (char *)fl_buf_reserve(&w->packed, got);
        if (snappy_compress((const char *)body->data, body->len, dst, &got) != SNAPPY_OK)
            return fl_err_set(err, FLUSS_ERR__IO, "parquet: snappy failed");
        w->packed.len = got;
        return 0;
    }
    default: return gzip_page(w, body, err);
    }
}

/* Header + (compressed) body of one page; sizes into the chunk's meta. */
static int write_page(fl_pq_writer_t *w, pq_chunk_t *ch, fl_pq_page_header_t *h,
                      const fl_buf_t *body, fl_error_t *err) {
    const uint8_t *out = body->data;
    size_t out_len = body->len;
    if (w->opts.codec != FL_PQ_CODEC_UNCOMPRESSED) {
        int rc = compress_page(w, body, err);
        if (rc) return rc;
        out = w->packed.data;
        out_len = w->packed.len;
    }
    assert(body->len <= INT32_MAX && out_len <= INT32_MAX);
    h->uncompressed_page_size = (int32_t)body->len;
    h->compressed_page_size = (int32_t)out_len;
    fl_buf_reset(&w->scratch);
    fl_pq_page_header_encode(&w->scratch, h);
    ch->meta->total_uncompressed_size += (int64_t)(w->scratch.len + body->len);
    ch->meta->total_compressed_size += (int64_t)(w->scratch.len + out_len);
    if (emit(w, w->scratch.data, w->scratch.len, err)) return FLUSS_ERR__IO;
    return emit(w, out, out_len, err);
}

static int write_dictionary_page(fl_pq_writer_t *w, pq_chunk_t *ch, fl_error_t *err) {
    fl_buf_reset(&w->page);
    for (size_t e = 0; e < ch->n_dict; e++) {
        size_t i = ch->dict[e];
        fl_buf_append(&w->page, ch->c->vals.data + ch->off[i], ch->off[i + 1] - ch->off[i]);
    }
    fl_pq_page_header_t h;
    memset(&h, 0, sizeof(h));
    h.type = FL_PQ_PAGE_DICTIONARY;
    h.has_dictionary = true;
    h.dict_num_values = (int32_t)ch->n_dict;
    h.dict_encoding = FL_PQ_ENC_PLAIN;
    ch->meta->has_dictionary_page_offset = true;
    ch->meta->dictionary_page_offset = (int64_t)w->pos;
    return write_page(w, ch, &h, &w->page, err);
}

/* u32-LE length, then levels lv[0, n) as RLE at the width of max. */
static void put_levels(fl_buf_t *b, const uint8_t *lv, size_t n, int max) {
    uint32_t *tmp = fl_malloc((n + 1) * sizeof(uint32_t));
    for (size_t i = 0; i < n; i++) tmp[i] = lv[i];
    size_t at = b->len;
    fl_buf_reserve(b, 4);
    b->len += 4;
    fl_rle_encode(b, tmp, n, fl_rle_bit_width((uint32_t)max));
    uint32_t len = (uint32_t)(b->len - at - 4);
    uint8_t le[4] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), (uint8_t)(len >> 24)};
    memcpy(b->data + at, le, 4);
    fl_free(tmp);
}

/* Level entries [r0, r1) (whole rows) holding present values [v0, v1). */
static int write_data_page(fl_pq_writer_t *w, pq_chunk_t *ch, size_t r0, size_t r1, size_t v0,
                           size_t v1, fl_error_t *err) {
    pq_column_t *c = ch->c;
    fl_buf_t *b = &w->page;
    fl_buf_reset(b);
    if (c->max_rep > 0) put_levels(b, c->reps.data + r0, r1 - r0, c->max_rep);
    if (c->max_def > 0) put_levels(b, c->defs.data + r0, r1 - r0, c->max_def);
    int32_t encoding;
    if (ch->idx) {
        encoding = FL_PQ_ENC_RLE_DICTIONARY;
        int width = fl_rle_bit_width((uint32_t)(ch->n_dict - 1));
        if (width == 0) width = 1; /* some readers refuse width 0 */
        fl_buf_put_u8(b, (uint8_t)width);
        fl_rle_encode(b, ch->idx + v0, v1 - v0, width);
    } else if (c->spec.type == FL_PQ_BOOLEAN) {
        encoding = FL_PQ_ENC_PLAIN;
        size_t n = v1 - v0;
        uint8_t *bits = fl_buf_reserve(b, (n + 7) / 8);
        memset(bits, 0, (n + 7) / 8);
        for (size_t i = 0; i < n; i++)
            if (c->vals.data[v0 + i]) bits[i / 8] |= (uint8_t)(1u << (i % 8));
        b->len += (n + 7) / 8;
    } else {
        encoding = FL_PQ_ENC_PLAIN;
        fl_buf_append(b, c->vals.data + ch->off[v0], ch->off[v1] - ch->off[v0]);
    }
    if (encoding == FL_PQ_ENC_PLAIN) ch->used_plain = true;
    fl_pq_page_header_t h;
    memset(&h, 0, sizeof(h));
    h.type = FL_PQ_PAGE_DATA;
    h.has_data = true;
    h.data_num_values = (int32_t)(r1 - r0);
    h.data_encoding = encoding;
    h.def_encoding = FL_PQ_ENC_RLE;
    h.rep_encoding = FL_PQ_ENC_RLE;
    if (!ch->meta->data_page_offset) ch->meta->data_page_offset = (int64_t)w->pos;
    return write_page(w, ch, &h, b, err);
}

static void chunk_offsets(pq_chunk_t *ch) {
    pq_column_t *c = ch->c;
    size_t n = c->nonnull, width = value_width(&c->spec);
    ch->off = fl_malloc((n + 1) * sizeof(size_t));
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        ch->off[i] = at;
        if (width) {
            at += width;
        } else {
            const uint8_t *p = c->vals.data + at;
            at += 4 + ((size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 | (size_t)p[3] << 24);
        }
    }
    ch->off[n] = at;
    assert(at == c->vals.len);
}

static void chunk_meta_finish(const fl_pq_writer_t *w, pq_chunk_t *ch) {
    pq_column_t *c = ch->c;
    fl_pq_column_meta_t *m = ch->meta;
    m->type = c->spec.type;
    m->encodings = fl_malloc(3 * sizeof(int32_t)); /* filled once the pages are out */
    /* the names from below the root down to the leaf */
    const fl_pq_schema_tree_t *t = &w->tree;
    size_t depth = 0;
    for (int32_t a = (int32_t)c->element; a > 0; a = t->parent[a]) depth++;
    m->path = fl_malloc(depth * sizeof(char *));
    m->n_path = depth;
    for (int32_t a = (int32_t)c->element; a > 0; a = t->parent[a])
        m->path[--depth] = fl_strdup(w->schema[a].name);
    m->codec = 0;
    m->num_values = (int64_t)c->defs.len;
    m->has_stats = true;
    stats_zero_signs(c);
    m->stats.has_null_count = true;
    m->stats.null_count = c->nulls;
    if (c->has_minmax) {
        m->stats.has_min = m->stats.has_max = true;
        m->stats.min_len = (uint32_t)c->min.len;
        m->stats.max_len = (uint32_t)c->max.len;
        m->stats.min = fl_malloc(c->min.len + 1);
        m->stats.max = fl_malloc(c->max.len + 1);
        memcpy(m->stats.min, c->min.data ? c->min.data : (const uint8_t *)"", c->min.len);
        memcpy(m->stats.max, c->max.data ? c->max.data : (const uint8_t *)"", c->max.len);
    }
}

static int write_chunk(fl_pq_writer_t *w, pq_column_t *c, fl_pq_column_chunk_t *cc,
                       fl_error_t *err) {
    pq_chunk_t ch;
    memset(&ch, 0, sizeof(ch));
    ch.c = c;
    ch.meta = &cc->meta;
    ch.start = (int64_t)w->pos;
    cc->file_offset = ch.start;
    chunk_offsets(&ch);
    build_dictionary(&ch, w->opts.dictionary_bytes_max);
    chunk_meta_finish(w, &ch); /* type, path, stats; the pages add their sizes */
    cc->meta.codec = w->opts.codec;
    int rc = 0;
    if (ch.idx) rc = write_dictionary_page(w, &ch, err);
    /* pages of whole rows: a row is its entries up to the next rep 0 */
    size_t entries = c->defs.len, r = 0, v = 0;
    const uint8_t *defs = c->defs.data, *reps = c->max_rep > 0 ? c->reps.data : NULL;
    assert(entries > 0); /* empty groups are not written */
    while (!rc && r < entries) {
        size_t r1 = r, v1 = v, page_rows = 0;
        while (r1 < entries && page_rows < w->opts.page_rows_max &&
               (v1 == v || ch.off[v1] - ch.off[v] < w->opts.page_bytes_max)) {
            do {
                if (defs[r1] == c->max_def) v1++;
                r1++;
            } while (r1 < entries && reps && reps[r1] != 0);
            page_rows++;
        }
        rc = write_data_page(w, &ch, r, r1, v, v1, err);
        r = r1;
        v = v1;
    }
    /* every encoding the pages used: PLAIN values or dictionary page,
     * RLE levels (declared by every data page), RLE_DICTIONARY indices */
    if (!rc) {
        cc->meta.n_encodings = 0;
        if (ch.idx || ch.used_plain) cc->meta.encodings[cc->meta.n_encodings++] = FL_PQ_ENC_PLAIN;
        cc->meta.encodings[cc->meta.n_encodings++] = FL_PQ_ENC_RLE;
        if (ch.idx) cc->meta.encodings[cc->meta.n_encodings++] = FL_PQ_ENC_RLE_DICTIONARY;
    }
    fl_free(ch.off);
    fl_free(ch.idx);
    fl_free(ch.dict);
    return rc;
}

static void column_reset(pq_column_t *c) {
    fl_buf_reset(&c->defs);
    fl_buf_reset(&c->reps);
    fl_buf_reset(&c->vals);
    c->nonnull = 0;
    c->nulls = 0;
    c->has_minmax = false;
}

int fl_pq_writer_flush_row_group(fl_pq_writer_t *w, fl_error_t *err) {
    if (w->failed) return fl_err_set(err, FLUSS_ERR__STATE, "parquet: writer failed earlier");
    if (w->group_rows == 0) return 0;
    if (w->n_groups == w->cap_groups) {
        w->cap_groups = w->cap_groups ? 2 * w->cap_groups : 4;
        w->groups = fl_realloc(w->groups, w->cap_groups * sizeof(*w->groups));
    }
    fl_pq_row_group_t *g = &w->groups[w->n_groups++];
    memset(g, 0, sizeof(*g));
    g->columns = fl_calloc(w->n_cols, sizeof(*g->columns));
    g->n_columns = w->n_cols;
    g->num_rows = (int64_t)w->group_rows;
    g->file_offset = (int64_t)w->pos;
    g->ordinal = (int32_t)(w->n_groups - 1);
    for (size_t k = 0; k < w->n_cols; k++) {
        if (write_chunk(w, &w->cols[k], &g->columns[k], err)) {
            w->failed = true;
            return err ? err->code : FLUSS_ERR__IO;
        }
        g->total_byte_size += g->columns[k].meta.total_uncompressed_size;
        g->total_compressed_size += g->columns[k].meta.total_compressed_size;
        column_reset(&w->cols[k]);
    }
    w->total_rows += (int64_t)w->group_rows;
    w->group_rows = 0;
    return 0;
}

int fl_pq_writer_finish(fl_pq_writer_t *w, fl_error_t *err) {
    if (fl_pq_writer_flush_row_group(w, err)) return err ? err->code : FLUSS_ERR__IO;
    fl_pq_file_meta_t m;
    memset(&m, 0, sizeof(m));
    m.version = 2;
    m.schema = w->schema;
    m.n_schema = w->n_schema;
    m.num_rows = w->total_rows;
    m.row_groups = w->groups;
    m.n_row_groups = w->n_groups;
    m.created_by = (char *)"fluss-c version " FL_LAKE_VERSION " (build " FLUSS_BUILD_SHA ")";
    m.n_column_orders = w->n_cols;
    fl_buf_reset(&w->scratch);
    fl_pq_file_meta_encode(&w->scratch, &m);
    uint32_t n = (uint32_t)w->scratch.len;
    uint8_t tail[8] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24),
                       'P', 'A', 'R', '1'};
    if (emit(w, w->scratch.data, w->scratch.len, err) || emit(w, tail, 8, err))
        return FLUSS_ERR__IO;
    if (w->fd >= 0) {
        int fd = w->fd;
        w->fd = -1;
        w->failed = true; /* finished: no more appends */
        if (fl_vfs_fsync(fd)) {
            fl_err_set(err, FLUSS_ERR__IO, "parquet: fsync: %m");
            fl_vfs_close(fd);
            return FLUSS_ERR__IO;
        }
        if (fl_vfs_close(fd)) return fl_err_set(err, FLUSS_ERR__IO, "parquet: close: %m");
    }
    w->failed = true;
    return 0;
}

const fl_buf_t *fl_pq_writer_bytes(const fl_pq_writer_t *w) { return &w->mem; }

uint64_t fl_pq_writer_position(const fl_pq_writer_t *w) { return w->pos; }

size_t fl_pq_writer_buffered_bytes(const fl_pq_writer_t *w) { return group_bytes(w); }

const fl_pq_row_group_t *fl_pq_writer_row_groups(const fl_pq_writer_t *w, size_t *n) {
    *n = w->n_groups;
    return w->groups;
}

void fl_pq_writer_destroy(fl_pq_writer_t *w) {
    if (!w) return;
    if (w->fd >= 0) fl_vfs_close(w->fd);
    for (size_t k = 0; k < w->n_cols; k++) {
        pq_column_t *c = &w->cols[k];
        fl_buf_free(&c->defs);
        fl_buf_free(&c->reps);
        fl_buf_free(&c->vals);
        fl_buf_free(&c->min);
        fl_buf_free(&c->max);
    }
    fl_free(w->cols);
    for (size_t i = 0; w->schema && i < w->n_schema; i++) fl_free(w->schema[i].name);
    fl_free(w->schema);
    fl_pq_schema_tree_free(&w->tree);
    for (size_t i = 0; i < w->n_groups; i++) {
        fl_pq_row_group_t *g = &w->groups[i];
        for (size_t k = 0; k < g->n_columns; k++) {
            fl_pq_column_meta_t *m = &g->columns[k].meta;
            fl_free(m->encodings);
            for (size_t p = 0; p < m->n_path; p++) fl_free(m->path[p]);
            fl_free(m->path);
            fl_free(m->stats.min);
            fl_free(m->stats.max);
        }
        fl_free(g->columns);
    }
    fl_free(w->groups);
    fl_buf_free(&w->mem);
    fl_buf_free(&w->scratch);
    fl_buf_free(&w->page);
    fl_buf_free(&w->packed);
    fl_free(w);
}
