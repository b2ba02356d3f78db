/*
 * tier_metrics.c — an Iceberg data file's column metrics (tier_metrics.h
 * has the rules).
 */
#include "tier_metrics.h"

#include <math.h>
#include <string.h>

#include "lake_iceberg_manifest.h"
#include "tier_convert.h"

/* Units kept of the least and greatest string or binary: one more than a
 * bound holds, to know whether the value was cut. */
#define TM_KEPT_UNITS (FL_TIER_TRUNCATE_UNITS + 1)
#define TM_CODE_POINT_MAX 0x10FFFF

void fl_tier_metrics_init(fl_tier_metrics_t *m, const fl_pq_column_spec_t *spec) {
    memset(m, 0, sizeof(*m));
    fl_buf_init(&m->min_b);
    fl_buf_init(&m->max_b);
    bool decimal = spec->logical.kind == FL_PQ_LT_DECIMAL;
    switch (spec->type) {
    case FL_PQ_BOOLEAN: m->kind = FL_TIER_BOUND_BOOLEAN; break;
    case FL_PQ_INT32: m->kind = decimal ? FL_TIER_BOUND_DECIMAL : FL_TIER_BOUND_INT; break;
    case FL_PQ_INT64: m->kind = decimal ? FL_TIER_BOUND_DECIMAL : FL_TIER_BOUND_LONG; break;
    case FL_PQ_FLOAT: m->kind = FL_TIER_BOUND_FLOAT; break;
    case FL_PQ_DOUBLE: m->kind = FL_TIER_BOUND_DOUBLE; break;
    case FL_PQ_FLBA:
        if (decimal) {
            m->kind = FL_TIER_BOUND_DECIMAL;
            m->fixed = spec->type_length;
            break;
        }
        /* fall through */
    default:
        m->kind = spec->logical.kind == FL_PQ_LT_STRING ? FL_TIER_BOUND_STRING
                                                        : FL_TIER_BOUND_BINARY;
    }
    m->int32 = spec->type == FL_PQ_INT32;
}

void fl_tier_metrics_reset(fl_tier_metrics_t *m) {
    m->values = m->nulls = m->nans = 0;
    m->has_bounds = false;
    fl_buf_reset(&m->min_b);
    fl_buf_reset(&m->max_b);
}

void fl_tier_metrics_free(fl_tier_metrics_t *m) {
    fl_buf_free(&m->min_b);
    fl_buf_free(&m->max_b);
}

/* ---- units: UTF-8 code points of a string, bytes of a binary ---- */

/* Bytes of the well-formed UTF-8 sequence at p[0, n) (RFC 3629: no
 * overlong forms, no surrogates, at most U+10FFFF), or 0. */
static size_t utf8_len(const uint8_t *p, size_t n, uint32_t *cp) {
    uint8_t b = p[0];
    size_t len;
    uint32_t v, least;
    if (b < 0x80) return *cp = b, 1;
    if (b >= 0xC2 && b <= 0xDF) len = 2, v = b & 0x1F, least = 0x80;
    else if (b >= 0xE0 && b <= 0xEF) len = 3, v = b & 0x0F, least = 0x800;
    else if (b >= 0xF0 && b <= 0xF4) len = 4, v = b & 0x07, least = 0x10000;
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        v = v << 6 | (p[i] & 0x3F);
    }
    if (v < least || v > TM_CODE_POINT_MAX || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return len;
}

/* Bytes of the unit at p[0, n) (n > 0); *cp its code point, or -1 for a
 * byte that is not UTF-8 (and for every byte of a binary). */
static size_t unit_len(fl_tier_bound_kind_t kind, const uint8_t *p, size_t n, int64_t *cp) {
    uint32_t v;
    size_t len = kind == FL_TIER_BOUND_STRING ? utf8_len(p, n, &v) : 0;
    if (!len) return *cp = -1, 1;
    *cp = v;
    return len;
}

/* Bytes of the first `units` units of p[0, n). */
static size_t prefix_bytes(fl_tier_bound_kind_t kind, const uint8_t *p, size_t n, size_t units) {
    /* ASCII bytes are a unit each in strings and binaries alike */
    size_t at = 0, lim = n < units ? n : units;
    while (at < lim && p[at] < 0x80) at++;
    if (at == lim) return at;
    int64_t cp;
    for (size_t u = at; u < units && at < n; u++) at += unit_len(kind, p + at, n - at, &cp);
    return at;
}

static void put_utf8(fl_buf_t *out, uint32_t cp) {
    uint8_t b[4];
    size_t n;
    if (cp < 0x80) b[0] = (uint8_t)cp, n = 1;
    else if (cp < 0x800) b[0] = (uint8_t)(0xC0 | cp >> 6), n = 2;
    else if (cp < 0x10000) b[0] = (uint8_t)(0xE0 | cp >> 12), n = 3;
    else b[0] = (uint8_t)(0xF0 | cp >> 18), n = 4;
    for (size_t i = 1; i < n; i++) b[i] = (uint8_t)(0x80 | ((cp >> (6 * (n - 1 - i))) & 0x3F));
    fl_buf_append(out, b, n);
}

/* The least value greater than every value starting with p[0, n): p with
 * its last unit that can grow incremented and the units after it dropped.
 * False when no unit can grow. */
static bool increment(fl_tier_bound_kind_t kind, const uint8_t *p, size_t n, fl_buf_t *out) {
    size_t starts[TM_KEPT_UNITS], count = 0, at = 0;
    int64_t cps[TM_KEPT_UNITS];
    while (at < n && count < TM_KEPT_UNITS) {
        starts[count] = at;
        at += unit_len(kind, p + at, n - at, &cps[count]);
        count++;
    }
    while (count > 0) {
        count--;
        int64_t cp = cps[count];
        size_t start = starts[count];
        bool grows = kind == FL_TIER_BOUND_STRING ? cp >= 0 && cp < TM_CODE_POINT_MAX
                                                  : p[start] < 0xFF;
        if (!grows) continue;
        fl_buf_reset(out);
        fl_buf_append(out, p, start);
        if (kind == FL_TIER_BOUND_BINARY) {
            fl_buf_put_u8(out, (uint8_t)(p[start] + 1));
        } else {
            uint32_t next = (uint32_t)cp + 1;
            if (next >= 0xD800 && next <= 0xDFFF) next = 0xE000; /* no surrogates in UTF-8 */
            put_utf8(out, next);
        }
        return true;
    }
    return false;
}

/* ---- adding values ---- */

static int compare_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    int c = an && bn ? memcmp(a, b, an < bn ? an : bn) : 0;
    return c ? c : (an > bn) - (an < bn);
}

static void set_bytes(fl_buf_t *b, const uint8_t *p, size_t n) {
    fl_buf_reset(b);
    fl_buf_append(b, p, n);
}

static void add_bytes(fl_tier_metrics_t *m, const fl_pq_bytes_t *v) {
    const uint8_t *p = v->len ? v->p : (const uint8_t *)"";
    size_t n = prefix_bytes(m->kind, p, v->len, TM_KEPT_UNITS);
    if (!m->has_bounds) {
        set_bytes(&m->min_b, p, n);
        set_bytes(&m->max_b, p, n);
        m->has_bounds = true;
        return;
    }
    if (compare_bytes(p, n, m->min_b.data, m->min_b.len) < 0) set_bytes(&m->min_b, p, n);
    if (compare_bytes(p, n, m->max_b.data, m->max_b.len) > 0) set_bytes(&m->max_b, p, n);
}

static void add_double(fl_tier_metrics_t *m, double d) {
    if (isnan(d)) {
        m->nans++;
        return;
    }
    if (!m->has_bounds || d < m->min_d) m->min_d = d;
    if (!m->has_bounds || d > m->max_d) m->max_d = d;
    m->has_bounds = true;
}

static void add_int(fl_tier_metrics_t *m, __int128 i) {
    if (!m->has_bounds || i < m->min_i) m->min_i = i;
    if (!m->has_bounds || i > m->max_i) m->max_i = i;
    m->has_bounds = true;
}

void fl_tier_metrics_add(fl_tier_metrics_t *m, const fl_tier_value_t *v) {
    m->values++;
    if (!v) {
        m->nulls++;
        return;
    }
    switch (m->kind) {
    case FL_TIER_BOUND_BOOLEAN: add_int(m, v->b); break;
    case FL_TIER_BOUND_INT: add_int(m, v->i32); break;
    case FL_TIER_BOUND_LONG: add_int(m, v->i64); break;
    case FL_TIER_BOUND_DECIMAL:
        add_int(m, m->fixed ? fl_tier_decimal_of_be(v->fixed, (size_t)m->fixed)
                   : m->int32 ? v->i32
                              : v->i64);
        break;
    case FL_TIER_BOUND_FLOAT: add_double(m, v->f); break;
    case FL_TIER_BOUND_DOUBLE: add_double(m, v->d); break;
    default: add_bytes(m, &v->bytes); break;
    }
}

/* The column's least and greatest of x's present values merged in with
 * add_int: integers have no ties to keep apart. */
#define TM_INT_RANGE(T)                                                                          \
    do {                                                                                         \
        const T *v = x;                                                                          \
        int64_t lo = INT64_MAX, hi = INT64_MIN;                                                  \
        bool any = false;                                                                        \
        for (size_t i = 0; i < rows; i++) {                                                      \
            if (valid && !valid[i]) continue;                                                    \
            int64_t e = (int64_t)v[i];                                                           \
            lo = e < lo ? e : lo;                                                                \
            hi = e > hi ? e : hi;                                                                \
            any = true;                                                                          \
        }                                                                                        \
        if (any) add_int(m, lo), add_int(m, hi);                                                 \
    } while (0)

/* NaNs counted, the first least and first greatest of the others merged
 * in with add_double (strict comparisons: the first of equals stays, as
 * one add_double per value keeps it). */
#define TM_DOUBLE_RANGE(T)                                                                       \
    do {                                                                                         \
        const T *v = x;                                                                          \
        double lo = 0, hi = 0;                                                                   \
        bool any = false;                                                                        \
        for (size_t i = 0; i < rows; i++) {                                                      \
            if (valid && !valid[i]) continue;                                                    \
            double e = v[i];                                                                     \
            if (isnan(e)) {                                                                      \
                m->nans++;                                                                       \
                continue;                                                                        \
            }                                                                                    \
            if (!any || e < lo) lo = e;                                                          \
            if (!any || e > hi) hi = e;                                                          \
            any = true;                                                                          \
        }                                                                                        \
        if (any) add_double(m, lo), add_double(m, hi);                                           \
    } while (0)

void fl_tier_metrics_add_column(fl_tier_metrics_t *m, const uint8_t *valid, const void *x,
                                size_t rows) {
    size_t present = rows;
    if (valid) {
        present = 0;
        for (size_t i = 0; i < rows; i++) present += valid[i] != 0;
    }
    m->values += (int64_t)rows;
    m->nulls += (int64_t)(rows - present);
    switch (m->kind) {
    case FL_TIER_BOUND_BOOLEAN: TM_INT_RANGE(uint8_t); break;
    case FL_TIER_BOUND_INT: TM_INT_RANGE(int32_t); break;
    case FL_TIER_BOUND_LONG: TM_INT_RANGE(int64_t); break;
    case FL_TIER_BOUND_DECIMAL:
        if (m->fixed) {
            const uint8_t *v = x;
            size_t w = (size_t)m->fixed;
            for (size_t i = 0; i < rows; i++)
                if (!valid || valid[i]) add_int(m, fl_tier_decimal_of_be(v + i * w, w));
        } else if (m->int32) {
            TM_INT_RANGE(int32_t);
        } else {
            TM_INT_RANGE(int64_t);
        }
        break;
    case FL_TIER_BOUND_FLOAT: TM_DOUBLE_RANGE(float); break;
    case FL_TIER_BOUND_DOUBLE: TM_DOUBLE_RANGE(double); break;
    default: {
        const fl_pq_bytes_t *v = x;
        for (size_t i = 0; i < rows; i++)
            if (!valid || valid[i]) add_bytes(m, &v[i]);
    }
    }
}

int64_t fl_tier_metrics_nans(const fl_tier_metrics_t *m) {
    return m->kind == FL_TIER_BOUND_FLOAT || m->kind == FL_TIER_BOUND_DOUBLE ? m->nans : -1;
}

/* ---- bounds ---- */

/* A single value of the column's type in Appendix D's bytes. */
static void encode(const fl_tier_metrics_t *m, __int128 i, double d, fl_buf_t *out) {
    uint8_t b[16];
    size_t n = 0;
    switch (m->kind) {
    case FL_TIER_BOUND_BOOLEAN: b[0] = i != 0, n = 1; break;
    case FL_TIER_BOUND_INT: n = fl_ice_bound_int((int32_t)i, b); break;
    case FL_TIER_BOUND_LONG: n = fl_ice_bound_long((int64_t)i, b); break;
    case FL_TIER_BOUND_DECIMAL: n = fl_ice_bound_decimal(i, b); break;
    case FL_TIER_BOUND_FLOAT: n = fl_ice_bound_float((float)d, b); break;
    case FL_TIER_BOUND_DOUBLE: n = fl_ice_bound_double(d, b); break;
    default: break;
    }
    set_bytes(out, b, n);
}

static bool bytes_kind(const fl_tier_metrics_t *m) {
    return m->kind == FL_TIER_BOUND_STRING || m->kind == FL_TIER_BOUND_BINARY;
}

bool fl_tier_metrics_lower(const fl_tier_metrics_t *m, fl_buf_t *out) {
    if (!m->has_bounds) return false;
    if (bytes_kind(m)) {
        const uint8_t *p = m->min_b.len ? m->min_b.data : (const uint8_t *)"";
        set_bytes(out, p, prefix_bytes(m->kind, p, m->min_b.len, FL_TIER_TRUNCATE_UNITS));
        return true;
    }
    /* -0.0 for a zero: a file holding +0.0 may be asked for -0.0 */
    double d = m->min_d == 0.0 ? -0.0 : m->min_d;
    encode(m, m->min_i, d, out);
    return true;
}

bool fl_tier_metrics_upper(const fl_tier_metrics_t *m, fl_buf_t *out) {
    if (!m->has_bounds) return false;
    if (bytes_kind(m)) {
        const uint8_t *p = m->max_b.len ? m->max_b.data : (const uint8_t *)"";
        size_t cut = prefix_bytes(m->kind, p, m->max_b.len, FL_TIER_TRUNCATE_UNITS);
        if (cut == m->max_b.len) {
            set_bytes(out, p, cut);
            return true;
        }
        return increment(m->kind, p, cut, out);
    }
    double d = m->max_d == 0.0 ? 0.0 : m->max_d;
    encode(m, m->max_i, d, out);
    return true;
}
