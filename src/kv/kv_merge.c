/*
 * kv_merge.c — the merge engines (kv_merge.h).
 */
#include "kv_merge.h"

#include <string.h>

#include "common_alloc.h"
#include "common_buf.h"

static bool fl_kv_type_has_bytes(const fl_datatype_t *t) {
    switch (t->root) {
    case FL_TYPE_CHAR: case FL_TYPE_STRING: case FL_TYPE_BINARY: case FL_TYPE_BYTES:
    case FL_TYPE_ARRAY: case FL_TYPE_MAP: case FL_TYPE_ROW:
        return true;
    default:
        return false;
    }
}

void fl_kv_cell_copy(fl_row_t *dst, size_t dc, const fl_row_t *src, size_t sc,
                     const fl_datatype_t *type) {
    const fl_cell_t *c = &src->cells[sc];
    if (c->is_null) {
        dst->cells[dc].is_null = true;
        return;
    }
    if (fl_kv_type_has_bytes(type)) {
        fl_row_set_bytes(dst, dc, fl_row_cell_bytes(src, c), c->len);
        return;
    }
    dst->cells[dc] = *c;
}

void fl_kv_row_pad(fl_row_t *r, size_t n) {
    if (r->column_count >= n) return;
    r->cells = fl_realloc(r->cells, n * sizeof(fl_cell_t));
    for (size_t i = r->column_count; i < n; i++) {
        memset(&r->cells[i], 0, sizeof(fl_cell_t));
        r->cells[i].is_null = true;
    }
    r->column_count = n;
}

void fl_kv_row_to_latest(const fl_kv_table_t *t, int16_t schema_id, fl_row_t *r) {
    const fl_schema_map_t *m = t->latest_map ? t->latest_map(t->types_ctx, schema_id) : NULL;
    if (m && !m->prefix) fl_schema_map_row(m, r);
    else fl_kv_row_pad(r, t->latest->column_count);
}

static const char *fl_kv_engine_name(fl_kv_engine_t e) {
    switch (e) {
    case FL_KV_ENGINE_FIRST_ROW: return "first_row";
    case FL_KV_ENGINE_VERSIONED: return "versioned";
    case FL_KV_ENGINE_AGGREGATION: return "aggregation";
    default: return "default";
    }
}

static void fl_kv_names(const fl_schema_t *s, const int32_t *cols, size_t n, fl_buf_t *b) {
    fl_buf_put_u8(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) fl_buf_append(b, ", ", 2);
        const char *name = cols[i] >= 0 && (size_t)cols[i] < s->column_count
                               ? s->columns[cols[i]].name
                               : "?";
        fl_buf_append(b, name, strlen(name));
    }
    fl_buf_append(b, "]", 2); /* with the terminating NUL */
}

/* An auto-increment column is the server's to fill: a write must name its
 * target columns, and not that one (PerSchemaAutoIncrementUpdater). */
static int fl_kv_autoinc_targets_check(const fl_kv_table_t *t, const int32_t *cols, size_t n,
                                       fl_error_t *err) {
    const char *name = t->latest->columns[t->autoinc_col].name;
    if (n == 0)
        return fl_err_set(err, FLUSS_ERR_INVALID_TARGET_COLUMN,
                          "The table contains an auto-increment column [%s], but update target "
                          "columns are not explicitly specified. Please specify the update "
                          "target columns and exclude the auto-increment column from them.",
                          name);
    for (size_t i = 0; i < n; i++)
        if (cols[i] == t->autoinc_col)
            return fl_err_set(err, FLUSS_ERR_INVALID_TARGET_COLUMN,
                              "Auto-increment column [%s] at index %d must not be included in "
                              "target columns.",
                              name, t->autoinc_col);
    return 0;
}

int fl_kv_targets_check(const fl_kv_table_t *t, const int32_t *cols, size_t n, bool *mask,
                        bool *partial, fl_error_t *err) {
    *partial = false;
    if (t->has_autoinc) {
        int rc = fl_kv_autoinc_targets_check(t, cols, n, err);
        if (rc) return rc;
    }
    if (n == 0) return 0;
    if (t->engine == FL_KV_ENGINE_FIRST_ROW || t->engine == FL_KV_ENGINE_VERSIONED)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          "Partial update is not supported for the %s merge engine.",
                          fl_kv_engine_name(t->engine));
    const fl_schema_t *s = t->latest;
    memset(mask, 0, s->column_count * sizeof(bool));
    for (size_t i = 0; i < n; i++) {
        if (cols[i] < 0 || (size_t)cols[i] >= s->column_count)
            return fl_err_set(err, FLUSS_ERR_INVALID_TARGET_COLUMN,
                              "The target column index %d is out of range: the table has %zu "
                              "columns.",
                              cols[i], s->column_count);
        mask[cols[i]] = true;
    }
    for (size_t i = 0; i < t->pk_count; i++) {
        if (!mask[t->pk_cols[i]]) {
            fl_buf_t a, b;
            fl_buf_init(&a);
            fl_buf_init(&b);
            fl_kv_names(s, cols, n, &a);
            fl_kv_names(s, t->pk_cols, t->pk_count, &b);
            int rc = fl_err_set(err, FLUSS_ERR_INVALID_TARGET_COLUMN,
                                "The target write columns %s must contain the primary key "
                                "columns %s.",
                                (char *)a.data, (char *)b.data);
            fl_buf_free(&a);
            fl_buf_free(&b);
            return rc;
        }
    }
    for (size_t c = 0; c < s->column_count; c++) {
        bool is_pk = false;
        for (size_t i = 0; i < t->pk_count; i++) is_pk |= (size_t)t->pk_cols[i] == c;
        if (!is_pk && !s->columns[c].type->nullable)
            return fl_err_set(err, FLUSS_ERR_INVALID_TARGET_COLUMN,
                              "Partial Update requires all columns except primary key to be "
                              "nullable, but column %s is NOT NULL.",
                              s->columns[c].name);
    }
    *partial = true;
    return 0;
}

static bool fl_kv_is_pk(const fl_kv_table_t *t, size_t c) {
    for (size_t i = 0; i < t->pk_count; i++)
        if ((size_t)t->pk_cols[i] == c) return true;
    return false;
}

/* -1, 0, 1 as a's version is below, equal to, above b's; NULL is the
 * smallest version. */
static int fl_kv_version_cmp(const fl_kv_table_t *t, const fl_row_t *a, const fl_row_t *b) {
    const fl_cell_t *x = &a->cells[t->version_col], *y = &b->cells[t->version_col];
    if (x->is_null || y->is_null) return x->is_null == y->is_null ? 0 : (x->is_null ? -1 : 1);
    if (x->i != y->i) return x->i < y->i ? -1 : 1;
    const fl_datatype_t *ty = t->latest->columns[t->version_col].type;
    if (ty->root == FL_TYPE_TIMESTAMP || ty->root == FL_TYPE_TIMESTAMP_LTZ)
        if (x->nanos != y->nanos) return x->nanos < y->nanos ? -1 : 1;
    return 0;
}

int fl_kv_merge_upsert(const fl_kv_table_t *t, const bool *mask, const fl_row_t *old,
                       const fl_row_t *in, fl_row_t *out, fl_kv_merge_result_t *res,
                       fl_error_t *err) {
    const fl_schema_t *s = t->latest;
    size_t n = s->column_count;
    if (t->engine == FL_KV_ENGINE_AGGREGATION) {
        fl_row_clear(out);
        fl_kv_row_pad(out, n);
        int rc = fl_kv_agg_merge(&t->agg, (const fl_datatype_t *const *)t->types(t->types_ctx,
                                 t->latest_schema_id, &n), n, old, in, mask, out, err);
        if (rc) return rc;
        *res = FL_KV_MERGE_ROW;
        return 0;
    }
    if (mask) {
        if (old) { /* PK-only targets change nothing of an existing row */
            bool pk_only = true;
            for (size_t c = 0; c < n; c++) pk_only &= mask[c] == fl_kv_is_pk(t, c);
            if (pk_only) {
                *res = FL_KV_MERGE_OLD;
                return 0;
            }
        }
        fl_row_clear(out);
        fl_kv_row_pad(out, n);
        for (size_t c = 0; c < n; c++) {
            const fl_datatype_t *ty = s->columns[c].type;
            if (mask[c]) fl_kv_cell_copy(out, c, in, c, ty);
            else if (old && c < old->column_count) fl_kv_cell_copy(out, c, old, c, ty);
            else out->cells[c].is_null = true;
        }
        *res = FL_KV_MERGE_ROW;
        return 0;
    }
    switch (t->engine) {
    case FL_KV_ENGINE_FIRST_ROW:
        *res = old ? FL_KV_MERGE_OLD : FL_KV_MERGE_NEW;
        return 0;
    case FL_KV_ENGINE_VERSIONED:
        *res = !old || fl_kv_version_cmp(t, old, in) <= 0 ? FL_KV_MERGE_NEW : FL_KV_MERGE_OLD;
        return 0;
    default:
        *res = FL_KV_MERGE_NEW;
        return 0;
    }
}

int fl_kv_merge_delete(const fl_kv_table_t *t, const bool *mask, const fl_row_t *old,
                       fl_row_t *out, fl_kv_merge_result_t *res, fl_error_t *err) {
    if (t->engine == FL_KV_ENGINE_FIRST_ROW || t->engine == FL_KV_ENGINE_VERSIONED)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          "DELETE is not supported for the %s merge engine.",
                          fl_kv_engine_name(t->engine));
    if (!mask) {
        *res = FL_KV_MERGE_DELETE;
        return 0;
    }
    const fl_schema_t *s = t->latest;
    size_t n = s->column_count;
    bool others_null = true; /* every column outside the targets is NULL */
    for (size_t c = 0; c < old->column_count && c < n; c++)
        if (!mask[c] && !old->cells[c].is_null) others_null = false;
    if (others_null) {
        *res = FL_KV_MERGE_DELETE;
        return 0;
    }
    fl_row_clear(out);
    fl_kv_row_pad(out, n);
    for (size_t c = 0; c < n; c++) {
        if (mask[c] && !fl_kv_is_pk(t, c)) out->cells[c].is_null = true;
        else if (c < old->column_count) fl_kv_cell_copy(out, c, old, c, s->columns[c].type);
        else out->cells[c].is_null = true;
    }
    *res = FL_KV_MERGE_ROW;
    return 0;
}
