/*
 * types_schema_map.c — column maps between two schemas of a table
 * (types_schema_map.h).
 */
#include "types_schema_map.h"

#include <string.h>

#include "common_alloc.h"

/* Same type up to the top-level nullability (SchemaUtil compares
 * copy(true) of both). */
static bool fl_types_match(const fl_datatype_t *a, const fl_datatype_t *b) {
    fl_datatype_t ca = *a, cb = *b;
    ca.nullable = cb.nullable = true;
    return fl_datatype_equal(&ca, &cb);
}

void fl_schema_map_init(fl_schema_map_t *m, const fl_schema_t *from, const fl_schema_t *to) {
    m->count = to->column_count;
    m->from_count = from->column_count;
    m->source = fl_calloc(m->count ? m->count : 1, sizeof(int32_t));
    m->prefix = m->from_count <= m->count;
    for (size_t j = 0; j < to->column_count; j++) {
        m->source[j] = -1;
        for (size_t i = 0; i < from->column_count; i++) {
            if (from->columns[i].id != to->columns[j].id) continue;
            if (fl_types_match(from->columns[i].type, to->columns[j].type))
                m->source[j] = (int32_t)i;
            break;
        }
        if (j < m->from_count ? m->source[j] != (int32_t)j : m->source[j] != -1)
            m->prefix = false;
    }
}

void fl_schema_map_free(fl_schema_map_t *m) {
    fl_free(m->source);
    memset(m, 0, sizeof(*m));
}

void fl_schema_map_row(const fl_schema_map_t *m, fl_row_t *row) {
    size_t have = row->column_count;
    fl_cell_t *cells = fl_calloc(m->count ? m->count : 1, sizeof(fl_cell_t));
    for (size_t j = 0; j < m->count; j++) {
        int32_t s = m->source[j];
        if (s >= 0 && (size_t)s < have) cells[j] = row->cells[s];
        else cells[j].is_null = true;
    }
    fl_free(row->cells);
    row->cells = cells;
    row->column_count = m->count;
}

/* FileLogProjection's words, which an ADD COLUMN history gives in 0.9.1
 * (its positions are used as they are, so a newer column is past the
 * end of an older batch's schema). */
static int fl_schema_map_missing(const fl_schema_map_t *m, const int32_t *fields, size_t n,
                                 fl_error_t *err) {
    char list[FL_ERROR_MSG_MAX / 2];
    size_t len = (size_t)snprintf(list, sizeof(list), "[");
    for (size_t i = 0; i < n && len < sizeof(list); i++)
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", i ? ", " : "",
                                fields[i]);
    if (len < sizeof(list)) snprintf(list + len, sizeof(list) - len, "]");
    return fl_err_set(err, FLUSS_ERR_INVALID_COLUMN_PROJECTION,
                      "Projected fields %s is out of bound for schema with %zu fields.", list,
                      m->from_count);
}

int fl_schema_map_positions(const fl_schema_map_t *m, const int32_t *fields, size_t n,
                            int32_t *out, fl_error_t *err) {
    for (size_t i = 0; i < n; i++) {
        int32_t f = fields[i];
        int32_t s = f >= 0 && (size_t)f < m->count ? m->source[f] : -1;
        if (s < 0) return fl_schema_map_missing(m, fields, n, err);
        out[i] = s;
    }
    return 0;
}
