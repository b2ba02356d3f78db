/*
 * tier_columns.c — a decoded Arrow column into Parquet values and metrics
 * in one loop (tier_columns.h).
 */
#include "tier_columns.h"

#include <string.h>

#include "arrow_rows.h"
#include "tier_convert.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tier_columns copies Arrow's little-endian values as they are"
#endif

#define TC_ROW_PATH FL_TIER_COLUMN_ROW_PATH

void fl_tier_column_buf_init(fl_tier_column_buf_t *b) {
    fl_buf_init(&b->values);
    fl_buf_init(&b->valid);
}

void fl_tier_column_buf_free(fl_tier_column_buf_t *b) {
    fl_buf_free(&b->values);
    fl_buf_free(&b->valid);
}

/* rows slots of width bytes, uninitialised. */
static void *slots(fl_buf_t *buf, int64_t rows, size_t width) {
    fl_buf_reset(buf);
    size_t n = (size_t)rows * width;
    void *p = fl_buf_reserve(buf, n ? n : 1);
    buf->len = n;
    return p;
}

/* The validity bytes of a; false when a NULL sits in a NOT NULL column. */
static bool validity(const fl_arrow_array_t *a, bool optional, int64_t rows, uint8_t *valid) {
    if (!a) {
        memset(valid, 0, (size_t)rows);
        return optional || rows == 0;
    }
    if (a->validity.len == 0) {
        memset(valid, 1, (size_t)rows);
        return true;
    }
    const uint8_t *bits = a->validity.data;
    uint8_t any_null = 0;
    for (int64_t i = 0; i < rows; i++) {
        valid[i] = bits[i >> 3] >> (i & 7) & 1;
        any_null |= !valid[i];
    }
    return optional || !any_null;
}

/* The value of a non-NULL slot i as the row path makes it: the cell
 * arrow_rows would read, then fl_tier_value_of. False when that fails. */
static bool cell_value(const fl_arrow_array_t *a, const fl_datatype_t *t, int64_t i,
                       fl_tier_value_t *v) {
    fl_cell_t c;
    memset(&c, 0, sizeof(c));
    switch (t->root) {
    case FL_TYPE_TIME:
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ:
        if (!fl_arrow_time_cell(a->type, fl_arrow_array_int(a, i), &c)) return false;
        break;
    case FL_TYPE_DECIMAL: c.dec = fl_arrow_array_decimal(a, i); break;
    default: c.i = fl_arrow_array_int(a, i); break;
    }
    return fl_tier_value_of(t, NULL, &c, v, NULL) == 0;
}

/* INT32 and INT64 columns: copied where Arrow has the same width and
 * unit, else slot by slot through the row path's conversion. */
static bool convert_ints(const fl_arrow_array_t *a, const fl_datatype_t *t, bool int32,
                         int64_t rows, const uint8_t *valid, fl_buf_t *out) {
    void *x = slots(out, rows, int32 ? 4 : 8);
    bool same_width = t->root == FL_TYPE_INTEGER || t->root == FL_TYPE_DATE ||
                      t->root == FL_TYPE_BIGINT;
    bool millis = (t->root == FL_TYPE_TIMESTAMP || t->root == FL_TYPE_TIMESTAMP_LTZ ||
                   t->root == FL_TYPE_TIME) &&
                  a->type->precision >= 1 && a->type->precision <= 3;
    if (same_width) {
        memcpy(x, a->values.data, (size_t)rows * (int32 ? 4 : 8));
    } else if (millis && t->root != FL_TYPE_TIME) {
        /* ms in int64 (TIMESTAMP p 1..3): µs = ms * 1000, as the row path */
        const int64_t *ms = (const int64_t *)a->values.data;
        int64_t *us = x;
        for (int64_t i = 0; i < rows; i++)
            if (__builtin_mul_overflow(ms[i], 1000, &us[i]) && valid[i]) return false;
    } else {
        fl_tier_value_t v;
        for (int64_t i = 0; i < rows; i++) {
            v.i64 = 0;
            if (valid[i] && !cell_value(a, t, i, &v)) return false;
            if (int32) ((int32_t *)x)[i] = v.i32;
            else ((int64_t *)x)[i] = v.i64;
        }
    }
    return true;
}

static void convert_floats(const fl_arrow_array_t *a, bool single, int64_t rows, fl_buf_t *out) {
    if (single) {
        float *x = slots(out, rows, sizeof(float));
        const float *in = (const float *)a->values.data;
        for (int64_t i = 0; i < rows; i++)
            x[i] = (float)(double)in[i]; /* through the row path's widened cell */
        return;
    }
    double *x = slots(out, rows, sizeof(double));
    memcpy(x, a->values.data, (size_t)rows * sizeof(double));
}

static bool convert_bytes(const fl_arrow_array_t *a, const fl_datatype_t *t, int64_t rows,
                          const uint8_t *valid, fl_buf_t *out) {
    fl_pq_bytes_t *x = slots(out, rows, sizeof(fl_pq_bytes_t));
    bool fixed = t->root == FL_TYPE_BINARY && t->length > 0;
    for (int64_t i = 0; i < rows; i++) {
        size_t len = 0;
        const uint8_t *p = valid[i] ? fl_arrow_array_bytes(a, i, &len) : NULL;
        /* BINARY(n) slots are n wide in Arrow: nothing to pad back */
        if (fixed && valid[i] && len < (size_t)t->length) return false;
        x[i].p = p;
        x[i].len = (uint32_t)len;
    }
    return true;
}

/* DECIMAL(P > 18) into FLBA: each value through the row path's
 * conversion (checked against P, big-endian in `width` bytes). */
static bool convert_fixed(const fl_arrow_array_t *a, const fl_datatype_t *t, size_t width,
                          int64_t rows, const uint8_t *valid, fl_buf_t *out) {
    uint8_t *x = slots(out, rows, width);
    fl_tier_value_t v;
    for (int64_t i = 0; i < rows; i++) {
        memset(&v, 0, sizeof(v));
        if (valid[i] && !cell_value(a, t, i, &v)) return false;
        memcpy(x + (size_t)i * width, v.fixed, width);
    }
    return true;
}

static void convert_bools(const fl_arrow_array_t *a, int64_t rows, fl_buf_t *out) {
    uint8_t *x = slots(out, rows, 1);
    for (int64_t i = 0; i < rows; i++) x[i] = fl_arrow_array_bool(a, i);
}

fl_tier_column_outcome_t fl_tier_column_convert(const fl_arrow_array_t *a,
                                                const fl_datatype_t *t,
                                                const fl_pq_column_spec_t *spec, int64_t rows,
                                                fl_tier_metrics_t *m, fl_tier_column_buf_t *b,
                                                fl_pq_column_data_t *out) {
    uint8_t *valid = slots(&b->valid, rows, 1);
    if (!validity(a, spec->optional, rows, valid)) return TC_ROW_PATH;
    out->valid = valid;
    bool ok = true;
    if (!a) {
        slots(&b->values, rows, sizeof(fl_pq_bytes_t)); /* wide enough for any type; ignored */
        memset(b->values.data, 0, b->values.len);
    } else {
        switch (spec->type) {
        case FL_PQ_BOOLEAN: convert_bools(a, rows, &b->values); break;
        case FL_PQ_INT32: ok = convert_ints(a, t, true, rows, valid, &b->values); break;
        case FL_PQ_INT64: ok = convert_ints(a, t, false, rows, valid, &b->values); break;
        case FL_PQ_FLOAT: convert_floats(a, true, rows, &b->values); break;
        case FL_PQ_DOUBLE: convert_floats(a, false, rows, &b->values); break;
        case FL_PQ_FLBA:
            ok = convert_fixed(a, t, (size_t)spec->type_length, rows, valid, &b->values);
            break;
        default: ok = convert_bytes(a, t, rows, valid, &b->values); break;
        }
    }
    if (!ok) return TC_ROW_PATH;
    /* counted while the column is still in cache */
    fl_tier_metrics_add_column(m, valid, b->values.data, (size_t)rows);
    out->values = b->values.data;
    return FL_TIER_COLUMN_DONE;
}

void fl_tier_column_sequence(int64_t first, int64_t step, const fl_pq_column_spec_t *spec,
                             int64_t rows, fl_tier_metrics_t *m, fl_tier_column_buf_t *b,
                             fl_pq_column_data_t *out) {
    bool int32 = spec->type == FL_PQ_INT32;
    void *x = slots(&b->values, rows, int32 ? 4 : 8);
    for (int64_t i = 0; i < rows; i++) {
        int64_t v = first + step * i;
        if (int32) ((int32_t *)x)[i] = (int32_t)v;
        else ((int64_t *)x)[i] = v;
    }
    fl_tier_metrics_add_column(m, NULL, x, (size_t)rows);
    out->valid = NULL;
    out->values = x;
}
