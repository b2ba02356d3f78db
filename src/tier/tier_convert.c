/*
 * tier_convert.c — Fluss columns and cells as Iceberg/Parquet columns and
 * values (tier_convert.h has the map).
 */
#include "tier_convert.h"

#include <string.h>

#include "arrow_ipc.h"

#define TC_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION
#define TC_DECIMAL_INT32_MAX 9
#define TC_DECIMAL_INT64_MAX 18
#define TC_DECIMAL_MAX 38

static fl_pq_logical_t logical(int16_t kind) {
    fl_pq_logical_t l;
    memset(&l, 0, sizeof(l));
    l.kind = kind;
    return l;
}

static fl_pq_logical_t micros(int16_t kind, bool utc) {
    fl_pq_logical_t l = logical(kind);
    l.unit = FL_PQ_UNIT_MICROS;
    l.utc = utc;
    return l;
}

/* Physical and logical type of t; false for a type outside the map. */
static bool physical_of(const fl_datatype_t *t, int32_t *type, fl_pq_logical_t *l) {
    *l = logical(FL_PQ_LT_NONE);
    switch (t->root) {
    case FL_TYPE_BOOLEAN: *type = FL_PQ_BOOLEAN; return true;
    case FL_TYPE_TINYINT:
    case FL_TYPE_SMALLINT:
    case FL_TYPE_INTEGER: *type = FL_PQ_INT32; return true;
    case FL_TYPE_BIGINT: *type = FL_PQ_INT64; return true;
    case FL_TYPE_FLOAT: *type = FL_PQ_FLOAT; return true;
    case FL_TYPE_DOUBLE: *type = FL_PQ_DOUBLE; return true;
    case FL_TYPE_DATE: *type = FL_PQ_INT32, *l = logical(FL_PQ_LT_DATE); return true;
    case FL_TYPE_TIME: *type = FL_PQ_INT64, *l = micros(FL_PQ_LT_TIME, false); return true;
    case FL_TYPE_TIMESTAMP:
        *type = FL_PQ_INT64, *l = micros(FL_PQ_LT_TIMESTAMP, false);
        return true;
    case FL_TYPE_TIMESTAMP_LTZ:
        *type = FL_PQ_INT64, *l = micros(FL_PQ_LT_TIMESTAMP, true);
        return true;
    case FL_TYPE_DECIMAL:
        if (t->precision < 1 || t->precision > TC_DECIMAL_MAX) return false;
        *type = t->precision <= TC_DECIMAL_INT32_MAX   ? FL_PQ_INT32
                : t->precision <= TC_DECIMAL_INT64_MAX ? FL_PQ_INT64
                                                       : FL_PQ_FLBA;
        *l = logical(FL_PQ_LT_DECIMAL);
        l->precision = t->precision;
        l->scale = t->scale;
        return true;
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING: *type = FL_PQ_BYTE_ARRAY, *l = logical(FL_PQ_LT_STRING); return true;
    case FL_TYPE_BINARY:
    case FL_TYPE_BYTES: *type = FL_PQ_BYTE_ARRAY; return true;
    default: return false; /* ARRAY, MAP, ROW */
    }
}

int fl_tier_column_spec(const char *name, const fl_datatype_t *t, int32_t field_id,
                        fl_pq_column_spec_t *out, fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    if (!physical_of(t, &out->type, &out->logical)) {
        if (t->root == FL_TYPE_DECIMAL)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "column %s: DECIMAL(%d, %d)", name,
                              t->precision, t->scale);
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "column %s: %s columns are not supported in lake tables", name,
                          fl_type_root_json_name(t->root));
    }
    out->name = name;
    out->field_id = field_id;
    out->optional = t->nullable;
    if (out->type == FL_PQ_FLBA) out->type_length = (int32_t)fl_pq_decimal_bytes(t->precision);
    return 0;
}

void fl_tier_pad_binary(fl_row_t *row, size_t col, const fl_datatype_t *t, fl_buf_t *scratch) {
    const fl_cell_t *c = &row->cells[col];
    if (t->root != FL_TYPE_BINARY || c->is_null || t->length <= 0 || c->len >= (size_t)t->length)
        return;
    fl_buf_reset(scratch);
    fl_buf_append(scratch, fl_row_cell_bytes(row, c), c->len);
    size_t pad = (size_t)t->length - c->len;
    memset(fl_buf_reserve(scratch, pad), 0, pad);
    scratch->len += pad;
    fl_row_set_bytes(row, col, scratch->data, scratch->len);
}

int fl_tier_micros_of_millis(int64_t ms, int64_t *us, fl_error_t *err) {
    if (__builtin_mul_overflow(ms, 1000, us))
        return fl_err_set(err, TC_CORRUPT, "%lld ms do not fit in 64-bit microseconds",
                          (long long)ms);
    return 0;
}

/* ms and the nanos of that millisecond as microseconds, floor: nanos
 * outside 0..999999 (a decoder does not promise them) still round down. */
static int timestamp_micros(const fl_cell_t *c, int64_t *us, fl_error_t *err) {
    int64_t q = c->nanos / 1000, r = c->nanos % 1000;
    if (r < 0) q--;
    if (fl_tier_micros_of_millis(c->i, us, err)) return TC_CORRUPT;
    if (__builtin_add_overflow(*us, q, us))
        return fl_err_set(err, TC_CORRUPT, "timestamp %lld ms + %d ns overflows microseconds",
                          (long long)c->i, c->nanos);
    return 0;
}

/* 10^precision (precision <= 38). */
static __int128 decimal_limit(int32_t precision) {
    __int128 limit = 1;
    for (int32_t i = 0; i < precision && i < TC_DECIMAL_MAX; i++) limit *= 10;
    return limit;
}

/* An unscaled decimal checked to have at most precision digits. */
static int decimal_of(const fl_datatype_t *t, __int128 v, fl_error_t *err) {
    __int128 limit = decimal_limit(t->precision);
    if (v >= limit || v <= -limit)
        return fl_err_set(err, TC_CORRUPT, "a DECIMAL(%d, %d) value has more than %d digits",
                          t->precision, t->scale, t->precision);
    return 0;
}

void fl_tier_decimal_be(__int128 v, uint8_t *out, size_t n) {
    for (size_t k = 0; k < n; k++) out[n - 1 - k] = (uint8_t)((unsigned __int128)v >> (8 * k));
}

__int128 fl_tier_decimal_of_be(const uint8_t *p, size_t n) {
    unsigned __int128 u = (p[0] & 0x80) ? ~(unsigned __int128)0 : 0; /* sign-extended */
    for (size_t k = 0; k < n; k++) u = u << 8 | p[k];
    return (__int128)u;
}

int fl_tier_value_of(const fl_datatype_t *t, const fl_row_t *row, const fl_cell_t *c,
                     fl_tier_value_t *out, fl_error_t *err) {
    switch (t->root) {
    case FL_TYPE_BOOLEAN: out->b = c->i != 0; return 0;
    case FL_TYPE_TINYINT:
    case FL_TYPE_SMALLINT:
    case FL_TYPE_INTEGER:
    case FL_TYPE_DATE: out->i32 = (int32_t)c->i; return 0;
    case FL_TYPE_BIGINT: out->i64 = c->i; return 0;
    case FL_TYPE_FLOAT: out->f = (float)c->d; return 0; /* cells widen FLOAT exactly */
    case FL_TYPE_DOUBLE: out->d = c->d; return 0;
    case FL_TYPE_TIME: return fl_tier_micros_of_millis(c->i, &out->i64, err);
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ: return timestamp_micros(c, &out->i64, err);
    case FL_TYPE_DECIMAL:
        if (decimal_of(t, c->dec, err)) return TC_CORRUPT;
        if (t->precision <= TC_DECIMAL_INT32_MAX) out->i32 = (int32_t)c->dec;
        else if (t->precision <= TC_DECIMAL_INT64_MAX) out->i64 = (int64_t)c->dec;
        else fl_tier_decimal_be(c->dec, out->fixed, fl_pq_decimal_bytes(t->precision));
        return 0;
    default: /* CHAR, STRING, BINARY, BYTES */
        if (c->len > UINT32_MAX)
            return fl_err_set(err, TC_CORRUPT, "a value of %zu bytes", c->len);
        out->bytes.p = fl_row_cell_bytes(row, c);
        out->bytes.len = (uint32_t)c->len;
        return 0;
    }
}

/* ---- the read direction: Parquet values back into Arrow columns ---- */

/* Floor division of a by 1000 and its non-negative remainder. */
static void floor_div_1000(int64_t a, int64_t *q, int64_t *r) {
    *q = a / 1000;
    *r = a % 1000;
    if (*r < 0) (*q)--, *r += 1000;
}

/* A value in microseconds (of the day, or since the epoch) in the Arrow
 * unit of t's precision: seconds, millis (floor), micros or nanos. */
static bool micros_to_unit(const fl_datatype_t *t, int64_t us, int64_t *out) {
    int64_t q, r;
    if (t->precision == 0) {
        q = us / 1000000, r = us % 1000000;
        *out = r < 0 ? q - 1 : q;
        return true;
    }
    if (t->precision <= 3) {
        floor_div_1000(us, &q, &r);
        *out = q;
        return true;
    }
    if (t->precision <= 6) {
        *out = us;
        return true;
    }
    return !__builtin_mul_overflow(us, 1000, out);
}

static void put_le(uint8_t *p, uint64_t v, size_t w) {
    for (size_t k = 0; k < w; k++) p[k] = (uint8_t)(v >> (8 * k));
}

/* Row i's fixed-width value of a non-NULL slot into p (w bytes); false
 * when it does not fit the type. */
static bool fixed_value(const fl_datatype_t *t, const fl_pq_values_t *v, size_t i, uint8_t *p,
                        size_t w) {
    int64_t x = 0;
    switch (t->root) {
    case FL_TYPE_TINYINT:
    case FL_TYPE_SMALLINT:
    case FL_TYPE_INTEGER:
    case FL_TYPE_DATE: {
        int32_t y = ((const int32_t *)v->values)[i];
        if ((t->root == FL_TYPE_TINYINT && (y < INT8_MIN || y > INT8_MAX)) ||
            (t->root == FL_TYPE_SMALLINT && (y < INT16_MIN || y > INT16_MAX)))
            return false;
        put_le(p, (uint64_t)(int64_t)y, w);
        return true;
    }
    case FL_TYPE_BIGINT: put_le(p, (uint64_t)((const int64_t *)v->values)[i], w); return true;
    case FL_TYPE_FLOAT: memcpy(p, &((const float *)v->values)[i], 4); return true;
    case FL_TYPE_DOUBLE: memcpy(p, &((const double *)v->values)[i], 8); return true;
    case FL_TYPE_TIME: {
        int64_t us = ((const int64_t *)v->values)[i];
        if (us < 0 || us >= 86400000000LL || !micros_to_unit(t, us, &x)) return false;
        put_le(p, (uint64_t)x, w);
        return true;
    }
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ:
        if (!micros_to_unit(t, ((const int64_t *)v->values)[i], &x)) return false;
        put_le(p, (uint64_t)x, w);
        return true;
    case FL_TYPE_DECIMAL: {
        __int128 u = v->type == FL_PQ_INT32   ? ((const int32_t *)v->values)[i]
                     : v->type == FL_PQ_INT64 ? ((const int64_t *)v->values)[i]
                                              : fl_tier_decimal_of_be(
                                                    (const uint8_t *)v->values + i * v->width,
                                                    v->width);
        __int128 limit = decimal_limit(t->precision);
        if (u >= limit || u <= -limit) return false;
        put_le(p, (uint64_t)u, 8);
        put_le(p + 8, (uint64_t)(u >> 64), 8);
        return true;
    }
    default: return false;
    }
}

int fl_tier_arrow_column(const fl_datatype_t *t, const char *name, const fl_pq_values_t *v,
                         size_t from, size_t to, fl_arrow_array_t *out, fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    int32_t want;
    fl_pq_logical_t l;
    if (!physical_of(t, &want, &l))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "column %s: %s columns are not read from the lake", name,
                          fl_type_root_json_name(t->root));
    if (v->type != want)
        return fl_err_set(err, TC_CORRUPT,
                          "column %s: the lake file holds Parquet type %d, its Fluss type needs %d",
                          name, v->type, want);
    if (from > to || to > v->rows)
        return fl_err_set(err, TC_CORRUPT, "column %s: rows %zu..%zu of %zu", name, from, to,
                          v->rows);
    size_t n = to - from, nulls = 0;
    for (size_t i = from; i < to; i++) nulls += !v->valid[i];
    if (nulls && !t->nullable)
        return fl_err_set(err, TC_CORRUPT, "column %s is NOT NULL, the lake file has a null",
                          name);
    out->kind = (int)t->root;
    out->type = t;
    out->length = (int64_t)n;
    out->null_count = (int64_t)nulls;
    if (nulls) {
        uint8_t *bits = fl_buf_reserve(&out->validity, (n + 7) / 8);
        memset(bits, 0, (n + 7) / 8);
        for (size_t i = 0; i < n; i++)
            if (v->valid[from + i]) bits[i / 8] |= (uint8_t)(1u << (i % 8));
        out->validity.len = (n + 7) / 8;
    }
    bool var = t->root == FL_TYPE_CHAR || t->root == FL_TYPE_STRING || t->root == FL_TYPE_BYTES;
    if (t->root == FL_TYPE_BOOLEAN) {
        uint8_t *bits = fl_buf_reserve(&out->values, (n + 7) / 8);
        memset(bits, 0, (n + 7) / 8);
        for (size_t i = 0; i < n; i++)
            if (v->valid[from + i] && ((const uint8_t *)v->values)[from + i])
                bits[i / 8] |= (uint8_t)(1u << (i % 8));
        out->values.len = (n + 7) / 8;
    } else if (var || t->root == FL_TYPE_BINARY) {
        size_t w = t->root == FL_TYPE_BINARY ? (size_t)t->length : 0;
        uint64_t total = v->offsets[to] - v->offsets[from];
        if (v->offsets[to] < v->offsets[from] || total > INT32_MAX)
            goto corrupt;
        if (var) {
            int32_t *offs = (int32_t *)fl_buf_reserve(&out->values, (n + 1) * 4);
            offs[0] = 0;
            for (size_t i = 0; i < n; i++) {
                uint64_t a = v->offsets[from + i], b = v->offsets[from + i + 1];
                if (b < a) goto corrupt;
                offs[i + 1] = offs[i] + (int32_t)(b - a);
            }
            out->values.len = (n + 1) * 4;
            if (total) fl_buf_append(&out->data, v->bytes + v->offsets[from], (size_t)total);
        } else {
            uint8_t *p = fl_buf_reserve(&out->values, n * w + 1);
            memset(p, 0, n * w);
            for (size_t i = 0; i < n; i++) {
                uint64_t a = v->offsets[from + i], b = v->offsets[from + i + 1];
                if (!v->valid[from + i]) continue;
                if (b - a != w) goto range;
                memcpy(p + i * w, v->bytes + a, w);
            }
            out->values.len = n * w;
        }
    } else {
        size_t w = t->root == FL_TYPE_DECIMAL ? 16 : fl_arrow_value_width(t);
        uint8_t *p = fl_buf_reserve(&out->values, n * w + 1); /* n may be 0 */
        memset(p, 0, n * w);
        for (size_t i = 0; i < n; i++)
            if (v->valid[from + i] && !fixed_value(t, v, from + i, p + i * w, w)) goto range;
        out->values.len = n * w;
    }
    return 0;
range:
    fl_arrow_array_free(out);
    return fl_err_set(err, TC_CORRUPT, "column %s: a lake value does not fit its type %s", name,
                      fl_type_root_json_name(t->root));
corrupt:
    fl_arrow_array_free(out);
    return fl_err_set(err, TC_CORRUPT, "column %s: bad value offsets", name);
}
