/*
 * client_value_text.c — the text of one value of a decoded column
 * (fluss.h fluss_record_batch_value_text; values read by arrow_decode.h):
 * what the CLI prints for `fluss scan`, plain or as a JSON value, and of
 * a row's cell (fluss_row_value_text; nested cells through
 * client_nested_text.c, in the same JSON form). Units follow the Arrow
 * mapping of protocol.md §4.3 (TIME/TIMESTAMP precision bands). Thread
 * rule: none.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_table.h"

#define FL_JSON (flags & FLUSS_TEXT_JSON)

static void fl_puts(fl_buf_t *o, const char *s) { fl_buf_append(o, s, strlen(s)); }

static void fl_printf(fl_buf_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fl_printf(fl_buf_t *o, const char *fmt, ...) {
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n > 0) fl_buf_append(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void fl_json_string(fl_buf_t *o, const uint8_t *p, size_t n) {
    fl_buf_put_u8(o, '"');
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        switch (c) {
        case '"': fl_puts(o, "\\\""); break;
        case '\\': fl_puts(o, "\\\\"); break;
        case '\n': fl_puts(o, "\\n"); break;
        case '\r': fl_puts(o, "\\r"); break;
        case '\t': fl_puts(o, "\\t"); break;
        case '\b': fl_puts(o, "\\b"); break;
        case '\f': fl_puts(o, "\\f"); break;
        default:
            if (c < 0x20) fl_printf(o, "\\u%04x", c);
            else fl_buf_put_u8(o, c);
        }
    }
    fl_buf_put_u8(o, '"');
}

/* Shortest text that reads back as the same double (or float). */
static void fl_float_text(fl_buf_t *o, double d, bool single, int flags) {
    if (isnan(d) || isinf(d)) {
        const char *s = isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity";
        if (FL_JSON) fl_printf(o, "\"%s\"", s);
        else fl_puts(o, s);
        return;
    }
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
        double back = strtod(tmp, NULL);
        if (single ? (float)back == (float)d : back == d) break;
    }
    fl_puts(o, tmp);
    /* make it look like a float: 1 → 1.0 */
    if (!strpbrk(tmp, ".eEn")) fl_puts(o, ".0");
}

static void fl_decimal_text(fl_buf_t *o, __int128 v, int scale) {
    char digits[64];
    int n = 0;
    bool neg = v < 0;
    unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;
    do {
        digits[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    while (n <= scale) digits[n++] = '0';
    if (neg) fl_buf_put_u8(o, '-');
    for (int i = n - 1; i >= 0; i--) {
        fl_buf_put_u8(o, (uint8_t)digits[i]);
        if (i == scale && scale > 0) fl_buf_put_u8(o, '.');
    }
}

static int64_t fl_fdiv(int64_t a, int64_t b, int64_t *rem) {
    int64_t q = a / b, r = a % b;
    if (r < 0) {
        r += b;
        q--;
    }
    *rem = r;
    return q;
}

/* p fraction digits of frac_ns (nanoseconds). */
static void fl_fraction(fl_buf_t *o, int64_t frac_ns, int p) {
    if (p <= 0) return;
    char tmp[16];
    snprintf(tmp, sizeof(tmp), "%09lld", (long long)frac_ns);
    fl_buf_put_u8(o, '.');
    fl_buf_append(o, tmp, (size_t)(p > 9 ? 9 : p));
}

/* Converts a TIME/TIMESTAMP value in the column's unit to (seconds, nanos). */
static int64_t fl_to_seconds(int64_t v, int p, int64_t *ns) {
    int64_t rem;
    if (p == 0) {
        *ns = 0;
        return v;
    }
    if (p <= 3) {
        int64_t s = fl_fdiv(v, 1000, &rem);
        *ns = rem * 1000000;
        return s;
    }
    if (p <= 6) {
        int64_t s = fl_fdiv(v, 1000000, &rem);
        *ns = rem * 1000;
        return s;
    }
    int64_t s = fl_fdiv(v, 1000000000, &rem);
    *ns = rem;
    return s;
}

static void fl_date_text(fl_buf_t *o, int64_t days) {
    int64_t y;
    unsigned m, d;
    fl_civil_from_days(days, &y, &m, &d);
    fl_printf(o, "%04lld-%02u-%02u", (long long)y, m, d);
}

void fl_client_value_text(const fl_arrow_array_t *c, int64_t i, int flags, fl_buf_t *o) {
    if (fl_arrow_array_is_null(c, i)) {
        if (FL_JSON) fl_puts(o, "null");
        return;
    }
    const fl_datatype_t *t = c->type;
    switch (c->kind) {
    case FL_TYPE_BOOLEAN: fl_puts(o, fl_arrow_array_bool(c, i) ? "true" : "false"); return;
    case FL_TYPE_TINYINT:
    case FL_TYPE_SMALLINT:
    case FL_TYPE_INTEGER:
    case FL_TYPE_BIGINT: fl_printf(o, "%lld", (long long)fl_arrow_array_int(c, i)); return;
    case FL_TYPE_FLOAT: fl_float_text(o, fl_arrow_array_double(c, i), true, flags); return;
    case FL_TYPE_DOUBLE: fl_float_text(o, fl_arrow_array_double(c, i), false, flags); return;
    case FL_TYPE_DECIMAL: fl_decimal_text(o, fl_arrow_array_decimal(c, i), t->scale); return;
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING: {
        size_t n;
        const uint8_t *p = fl_arrow_array_bytes(c, i, &n);
        if (FL_JSON) fl_json_string(o, p, n);
        else fl_buf_append(o, p, n);
        return;
    }
    case FL_TYPE_BYTES:
    case FL_TYPE_BINARY: {
        size_t n;
        const uint8_t *p = fl_arrow_array_bytes(c, i, &n);
        if (FL_JSON) fl_buf_put_u8(o, '"');
        for (size_t k = 0; k < n; k++) fl_printf(o, "%02x", p[k]);
        if (FL_JSON) fl_buf_put_u8(o, '"');
        return;
    }
    case FL_TYPE_DATE:
        if (FL_JSON) fl_buf_put_u8(o, '"');
        fl_date_text(o, fl_arrow_array_int(c, i));
        if (FL_JSON) fl_buf_put_u8(o, '"');
        return;
    case FL_TYPE_TIME: {
        int64_t ns, s = fl_to_seconds(fl_arrow_array_int(c, i), t->precision, &ns);
        if (FL_JSON) fl_buf_put_u8(o, '"');
        fl_printf(o, "%02lld:%02lld:%02lld", (long long)(s / 3600), (long long)(s / 60 % 60),
                  (long long)(s % 60));
        fl_fraction(o, ns, t->precision);
        if (FL_JSON) fl_buf_put_u8(o, '"');
        return;
    }
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ: {
        int64_t ns, s = fl_to_seconds(fl_arrow_array_int(c, i), t->precision, &ns);
        int64_t sod, days = fl_fdiv(s, 86400, &sod);
        if (FL_JSON) fl_buf_put_u8(o, '"');
        fl_date_text(o, days);
        fl_printf(o, "T%02lld:%02lld:%02lld", (long long)(sod / 3600), (long long)(sod / 60 % 60),
                  (long long)(sod % 60));
        fl_fraction(o, ns, t->precision);
        if (c->kind == FL_TYPE_TIMESTAMP_LTZ) fl_buf_put_u8(o, 'Z');
        if (FL_JSON) fl_buf_put_u8(o, '"');
        return;
    }
    case FL_TYPE_ARRAY: {
        int64_t a, b;
        fl_arrow_array_child_range(c, i, &a, &b);
        fl_buf_put_u8(o, '[');
        for (int64_t k = a; k < b; k++) {
            if (k > a) fl_puts(o, ", ");
            fl_client_value_text(&c->children[0], k, FLUSS_TEXT_JSON, o);
        }
        fl_buf_put_u8(o, ']');
        return;
    }
    case FL_TYPE_MAP: {
        int64_t a, b;
        fl_arrow_array_child_range(c, i, &a, &b);
        const fl_arrow_array_t *e = &c->children[0];
        fl_buf_put_u8(o, '{');
        for (int64_t k = a; k < b; k++) {
            if (k > a) fl_puts(o, ", ");
            fl_buf_t key;
            fl_buf_init(&key);
            fl_client_value_text(&e->children[0], k, 0, &key);
            fl_json_string(o, key.data ? key.data : (const uint8_t *)"", key.len);
            fl_buf_free(&key);
            fl_puts(o, ": ");
            fl_client_value_text(&e->children[1], k, FLUSS_TEXT_JSON, o);
        }
        fl_buf_put_u8(o, '}');
        return;
    }
    case FL_TYPE_ROW: {
        fl_buf_put_u8(o, '{');
        for (size_t k = 0; k < c->child_count; k++) {
            if (k) fl_puts(o, ", ");
            const char *name = t->fields[k].name;
            fl_json_string(o, (const uint8_t *)name, strlen(name));
            fl_puts(o, ": ");
            fl_client_value_text(&c->children[k], i, FLUSS_TEXT_JSON, o);
        }
        fl_buf_put_u8(o, '}');
        return;
    }
    default: fl_puts(o, "?"); return;
    }
}

/* TIMESTAMP(_LTZ) of epoch ms + nanos of the millisecond, precision p. */
static void fl_timestamp_text(fl_buf_t *o, int64_t ms, int32_t nanos, int p, bool ltz) {
    int64_t msr, s = fl_fdiv(ms, 1000, &msr);
    int64_t sod, days = fl_fdiv(s, 86400, &sod);
    fl_date_text(o, days);
    fl_printf(o, "T%02lld:%02lld:%02lld", (long long)(sod / 3600), (long long)(sod / 60 % 60),
              (long long)(sod % 60));
    fl_fraction(o, msr * 1000000 + nanos, p);
    if (ltz) fl_buf_put_u8(o, 'Z');
}

void fl_client_cell_text(const fl_datatype_t *t, fl_row_format_t fmt, const fl_row_t *row,
                         size_t col, int flags, fl_buf_t *o) {
    const fl_cell_t *c = &row->cells[col];
    if (c->is_null) {
        if (FL_JSON) fl_puts(o, "null");
        return;
    }
    bool quote = FL_JSON && (t->root == FL_TYPE_BYTES || t->root == FL_TYPE_BINARY ||
                             t->root == FL_TYPE_DATE || t->root == FL_TYPE_TIME ||
                             t->root == FL_TYPE_TIMESTAMP || t->root == FL_TYPE_TIMESTAMP_LTZ);
    if (quote) fl_buf_put_u8(o, '"');
    switch (t->root) {
    case FL_TYPE_BOOLEAN: fl_puts(o, c->i ? "true" : "false"); break;
    case FL_TYPE_TINYINT:
    case FL_TYPE_SMALLINT:
    case FL_TYPE_INTEGER:
    case FL_TYPE_BIGINT: fl_printf(o, "%lld", (long long)c->i); break;
    case FL_TYPE_FLOAT: fl_float_text(o, c->d, true, flags); break;
    case FL_TYPE_DOUBLE: fl_float_text(o, c->d, false, flags); break;
    case FL_TYPE_DECIMAL: fl_decimal_text(o, c->dec, t->scale); break;
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
        if (FL_JSON) fl_json_string(o, fl_row_cell_bytes(row, c), c->len);
        else fl_buf_append(o, fl_row_cell_bytes(row, c), c->len);
        break;
    case FL_TYPE_BYTES:
    case FL_TYPE_BINARY:
        for (size_t k = 0; k < c->len; k++) fl_printf(o, "%02x", fl_row_cell_bytes(row, c)[k]);
        break;
    case FL_TYPE_DATE: fl_date_text(o, c->i); break;
    case FL_TYPE_TIME: {
        int64_t msr, s = fl_fdiv(c->i, 1000, &msr);
        fl_printf(o, "%02lld:%02lld:%02lld", (long long)(s / 3600), (long long)(s / 60 % 60),
                  (long long)(s % 60));
        fl_fraction(o, msr * 1000000, t->precision > 3 ? 3 : t->precision);
        break;
    }
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ:
        fl_timestamp_text(o, c->i, c->nanos, t->precision, t->root == FL_TYPE_TIMESTAMP_LTZ);
        break;
    case FL_TYPE_ARRAY:
    case FL_TYPE_MAP:
    case FL_TYPE_ROW: {
        /* checked when the row was decoded or built; "?" if it is not */
        fl_buf_t tmp;
        fl_buf_init(&tmp);
        fl_error_t err;
        if (fl_nested_text(t, fmt, fl_row_cell_bytes(row, c), c->len, &tmp, &err) == 0)
            fl_buf_append(o, tmp.data, tmp.len);
        else
            fl_puts(o, "?");
        fl_buf_free(&tmp);
        break;
    }
    default: fl_puts(o, "?"); break;
    }
    if (quote) fl_buf_put_u8(o, '"');
}
