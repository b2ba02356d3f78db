/*
 * client_row.c — libfluss rows (fluss.h fluss_row_*): a thin layer over
 * types_row.h that checks every value against the table's column type,
 * text parsing per column type for the CLI, and the bucket of a row like
 * Fluss's Java client (CompactedKeyEncoder of types_row_compacted.h +
 * FlussBucketingFunction, protocol.md §5.6, §6.1). Thread rule: a row has
 * one user at a time.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client_table.h"
#include "common_alloc.h"
#include "common_murmur.h"
#include "types_row_compacted.h"

#define FL_ERR_ARG FLUSS_ERR__INVALID_ARG

fluss_row_t *fluss_row_new(const fluss_table_t *t) {
    fluss_row_t *r = fl_calloc(1, sizeof(*r));
    r->t = t;
    fl_row_init(&r->row, t->desc.schema.column_count);
    return r;
}

void fluss_row_destroy(fluss_row_t *r) {
    if (!r) return;
    fl_row_free(&r->row);
    fl_free(r);
}

void fluss_row_clear(fluss_row_t *r) { fl_row_clear(&r->row); }

/* The target of a setter: cell col of a table row (col checked). */
static int fl_row_target(fluss_row_t *r, size_t col, fl_cell_target_t *tg, fl_error_t *err) {
    if (col >= r->row.column_count)
        return fl_err_set(err, FL_ERR_ARG, "column %zu out of range (%zu columns)", col,
                          r->row.column_count);
    tg->row = &r->row;
    tg->col = col;
    tg->type = fl_table_type(r->t, col);
    tg->name = r->t->desc.schema.columns[col].name;
    tg->type_text = r->t->type_text[col];
    tg->nested_format = r->t->kv_format;
    return 0;
}

static int fl_type_error(const fl_cell_target_t *tg, const char *what, fl_error_t *err) {
    return fl_err_set(err, FL_ERR_ARG, "column %s (%s) cannot take %s", tg->name, tg->type_text,
                      what);
}

static int fl_row_set_null_i(const fl_cell_target_t *tg, fl_error_t *err) {
    fl_cell_t *c = &tg->row->cells[tg->col];
    if (!tg->type->nullable)
        return fl_err_set(err, FL_ERR_ARG, "column %s is NOT NULL",
                          tg->name);
    c->is_null = true;
    return 0;
}

static int fl_row_set_bool_i(const fl_cell_target_t *tg, bool v, fl_error_t *err) {
    fl_cell_t *c = &tg->row->cells[tg->col];
    if (tg->type->root != FL_TYPE_BOOLEAN) return fl_type_error(tg, "a boolean", err);
    c->i = v;
    c->is_null = false;
    return 0;
}

static int fl_row_set_double_i(const fl_cell_target_t *tg, double v, fl_error_t *err) {
    fl_cell_t *c = &tg->row->cells[tg->col];
    fl_type_root_t root = tg->type->root;
    if (root != FL_TYPE_FLOAT && root != FL_TYPE_DOUBLE)
        return fl_type_error(tg, "a floating-point number", err);
    c->d = v;
    c->is_null = false;
    return 0;
}

static int fl_row_set_int_i(const fl_cell_target_t *tg, int64_t v, fl_error_t *err) {
    fl_cell_t *c = &tg->row->cells[tg->col];
    int64_t lo, hi;
    switch (tg->type->root) {
    case FL_TYPE_TINYINT: lo = INT8_MIN, hi = INT8_MAX; break;
    case FL_TYPE_SMALLINT: lo = INT16_MIN, hi = INT16_MAX; break;
    case FL_TYPE_INTEGER: lo = INT32_MIN, hi = INT32_MAX; break;
    case FL_TYPE_BIGINT: lo = INT64_MIN, hi = INT64_MAX; break;
    case FL_TYPE_FLOAT:
    case FL_TYPE_DOUBLE: return fl_row_set_double_i(tg, (double)v, err);
    default: return fl_type_error(tg, "an integer", err);
    }
    if (v < lo || v > hi)
        return fl_err_set(err, FL_ERR_ARG, "%lld is out of range for column %s (%s)",
                          (long long)v, tg->name, tg->type_text);
    c->i = v;
    c->is_null = false;
    return 0;
}

static int fl_row_set_bytes_i(const fl_cell_target_t *tg, const void *p, size_t n,
                              fl_error_t *err) {
    const fl_datatype_t *t = tg->type;
    switch (t->root) {
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
    case FL_TYPE_BYTES: break;
    case FL_TYPE_BINARY:
        if (n != (size_t)t->length)
            return fl_err_set(err, FL_ERR_ARG, "column %s is BINARY(%d) but got %zu bytes",
                              tg->name, t->length, n);
        break;
    default: return fl_type_error(tg, "a string or bytes", err);
    }
    if (n > INT32_MAX) return fl_err_set(err, FL_ERR_ARG, "value of %zu bytes is too large", n);
    fl_row_set_bytes(tg->row, tg->col, p, n);
    return 0;
}

static int fl_row_set_decimal_i(const fl_cell_target_t *tg, const char *text, fl_error_t *err) {
    fl_cell_t *c = &tg->row->cells[tg->col];
    const fl_datatype_t *t = tg->type;
    if (t->root != FL_TYPE_DECIMAL) return fl_type_error(tg, "a decimal", err);
    __int128 v;
    int rc = fl_decimal_parse(text, t->precision, t->scale, &v, err);
    if (rc) return rc;
    c->dec = v;
    c->is_null = false;
    return 0;
}

static int fl_row_set_date_i(const fl_cell_target_t *tg, int32_t days, fl_error_t *err) {
    fl_cell_t *c = &tg->row->cells[tg->col];
    if (tg->type->root != FL_TYPE_DATE) return fl_type_error(tg, "a date", err);
    c->i = days;
    c->is_null = false;
    return 0;
}

static int fl_row_set_time_i(const fl_cell_target_t *tg, int32_t ms, fl_error_t *err) {
    fl_cell_t *c = &tg->row->cells[tg->col];
    if (tg->type->root != FL_TYPE_TIME) return fl_type_error(tg, "a time", err);
    if (ms < 0 || ms >= 86400000)
        return fl_err_set(err, FL_ERR_ARG, "time %d ms is outside a day", ms);
    c->i = ms;
    c->is_null = false;
    return 0;
}

static int fl_row_set_timestamp_i(const fl_cell_target_t *tg, int64_t ms, int32_t nanos,
                                  fl_error_t *err) {
    fl_cell_t *c = &tg->row->cells[tg->col];
    const fl_datatype_t *t = tg->type;
    if (t->root != FL_TYPE_TIMESTAMP && t->root != FL_TYPE_TIMESTAMP_LTZ)
        return fl_type_error(tg, "a timestamp", err);
    if (nanos < 0 || nanos > 999999)
        return fl_err_set(err, FL_ERR_ARG, "nanos of millisecond %d out of range", nanos);
    /* truncate to the column's precision */
    static const int64_t unit_ns[10] = {1000000000, 100000000, 10000000, 1000000, 100000,
                                        10000,      1000,      100,      10,      1};
    int p = t->precision < 0 ? 6 : t->precision > 9 ? 9 : t->precision;
    if (p < 3) {
        int64_t u = unit_ns[p] / 1000000;
        ms = ms >= 0 ? ms / u * u : -((-ms + u - 1) / u) * u;
        nanos = 0;
    } else {
        nanos = (int32_t)(nanos / unit_ns[p] * unit_ns[p]);
    }
    c->i = ms;
    c->nanos = nanos;
    c->is_null = false;
    return 0;
}

/* ---- public setters ---- */

#define FL_ROW_PUBLIC(call)                                          \
    do {                                                             \
        fl_error_t err_;                                             \
        fl_err_clear(&err_);                                         \
        fl_cell_target_t tg_ = {.name = "", .type_text = ""};        \
        const fl_cell_target_t *tg = &tg_;                           \
        if (fl_row_target(r, col, &tg_, &err_))                      \
            return fl_client_error_out(e, &err_);                    \
        int rc_ = (call);                                            \
        return rc_ ? fl_client_error_out(e, &err_) : 0;             \
    } while (0)

int fluss_row_set_null(fluss_row_t *r, size_t col, fluss_error_t *e) {
    FL_ROW_PUBLIC(fl_row_set_null_i(tg, &err_));
}
int fluss_row_set_bool(fluss_row_t *r, size_t col, bool v, fluss_error_t *e) {
    FL_ROW_PUBLIC(fl_row_set_bool_i(tg, v, &err_));
}
int fluss_row_set_int64(fluss_row_t *r, size_t col, int64_t v, fluss_error_t *e) {
    FL_ROW_PUBLIC(fl_row_set_int_i(tg, v, &err_));
}
int fluss_row_set_double(fluss_row_t *r, size_t col, double v, fluss_error_t *e) {
    FL_ROW_PUBLIC(fl_row_set_double_i(tg, v, &err_));
}
int fluss_row_set_bytes(fluss_row_t *r, size_t col, const void *p, size_t n, fluss_error_t *e) {
    FL_ROW_PUBLIC(fl_row_set_bytes_i(tg, p, n, &err_));
}
int fluss_row_set_string(fluss_row_t *r, size_t col, const char *s, fluss_error_t *e) {
    FL_ROW_PUBLIC(fl_row_set_bytes_i(tg, s, strlen(s), &err_));
}
int fluss_row_set_decimal(fluss_row_t *r, size_t col, const char *text, fluss_error_t *e) {
    FL_ROW_PUBLIC(fl_row_set_decimal_i(tg, text, &err_));
}
int fluss_row_set_date(fluss_row_t *r, size_t col, int32_t days, fluss_error_t *e) {
    FL_ROW_PUBLIC(fl_row_set_date_i(tg, days, &err_));
}
int fluss_row_set_time(fluss_row_t *r, size_t col, int32_t ms, fluss_error_t *e) {
    FL_ROW_PUBLIC(fl_row_set_time_i(tg, ms, &err_));
}
int fluss_row_set_timestamp(fluss_row_t *r, size_t col, int64_t ms, int32_t nanos,
                            fluss_error_t *e) {
    FL_ROW_PUBLIC(fl_row_set_timestamp_i(tg, ms, nanos, &err_));
}

/* ---- dates ---- */

/* Howard Hinnant's days_from_civil / civil_from_days. */
int64_t fl_days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void fl_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t yy = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yy + (*m <= 2);
}

/* Reads exactly n digits. */
static bool fl_digits(const char **p, int n, int64_t *out) {
    int64_t v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i])) return false;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return true;
}

static bool fl_parse_date(const char **p, int64_t *days) {
    int64_t y, m, d;
    const char *s = *p;
    bool neg = *s == '-';
    if (neg || *s == '+') s++;
    if (!fl_digits(&s, 4, &y) || *s++ != '-' || !fl_digits(&s, 2, &m) || *s++ != '-' ||
        !fl_digits(&s, 2, &d))
        return false;
    if (m < 1 || m > 12 || d < 1 || d > 31) return false;
    if (neg) y = -y;
    static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > mdays[m - 1] || (m == 2 && d == 29 && !leap)) return false;
    *days = fl_days_from_civil(y, (unsigned)m, (unsigned)d);
    *p = s;
    return true;
}

/* HH:MM[:SS[.fffffffff]] → nanos of day. */
static bool fl_parse_time(const char **p, int64_t *nanos) {
    int64_t h, mi, sec = 0, frac = 0;
    const char *s = *p;
    if (!fl_digits(&s, 2, &h) || *s++ != ':' || !fl_digits(&s, 2, &mi)) return false;
    if (*s == ':') {
        s++;
        if (!fl_digits(&s, 2, &sec)) return false;
        if (*s == '.') {
            s++;
            int n = 0;
            while (isdigit((unsigned char)*s)) {
                if (n < 9) frac = frac * 10 + (*s - '0');
                n++;
                s++;
            }
            if (n == 0) return false;
            for (; n < 9; n++) frac *= 10;
        }
    }
    if (h > 23 || mi > 59 || sec > 59) return false;
    *nanos = ((h * 60 + mi) * 60 + sec) * 1000000000LL + frac;
    *p = s;
    return true;
}

static bool fl_parse_int(const char *s, int64_t *out) {
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (errno || end == s || *end) return false;
    *out = v;
    return true;
}

static int fl_hex_val(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int fl_set_timestamp_text(const fl_cell_target_t *tg, const char *text, fl_error_t *err) {
    const fl_datatype_t *t = tg->type;
    int64_t v;
    if (fl_parse_int(text, &v)) return fl_row_set_timestamp_i(tg, v, 0, err);
    const char *p = text;
    int64_t days, nanos = 0;
    if (!fl_parse_date(&p, &days)) goto bad;
    if (*p == 'T' || *p == ' ') {
        p++;
        if (!fl_parse_time(&p, &nanos)) goto bad;
    }
    int64_t offset_min = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if ((*p == '+' || *p == '-') && t->root == FL_TYPE_TIMESTAMP_LTZ) {
        int sign = *p++ == '-' ? -1 : 1;
        int64_t oh, om = 0;
        if (!fl_digits(&p, 2, &oh)) goto bad;
        if (*p == ':') p++;
        if (isdigit((unsigned char)*p) && !fl_digits(&p, 2, &om)) goto bad;
        offset_min = sign * (oh * 60 + om);
    }
    if (*p) goto bad;
    int64_t ms = days * 86400000LL + nanos / 1000000 - offset_min * 60000;
    return fl_row_set_timestamp_i(tg, ms, (int32_t)(nanos % 1000000), err);
bad:
    return fl_err_set(err, FL_ERR_ARG,
                      "column %s: '%s' is not a timestamp (YYYY-MM-DD[ T]HH:MM[:SS[.f]] or epoch ms)",
                      tg->name, text);
}

int fluss_row_set_text(fluss_row_t *r, size_t col, const char *text, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    fl_cell_target_t tg;
    int rc = fl_row_target(r, col, &tg, &err);
    if (!rc) rc = fl_cell_set_text(&tg, text, &err);
    return rc ? fl_client_error_out(e, &err) : 0;
}

int fl_cell_set_text(const fl_cell_target_t *tg, const char *text, fl_error_t *err) {
    int rc = 0;
    if (!text) return fl_row_set_null_i(tg, err);
    const fl_datatype_t *t = tg->type;
    const char *name = tg->name;
    int64_t v;
    switch (t->root) {
    case FL_TYPE_BOOLEAN:
        if (strcasecmp(text, "true") == 0 || strcmp(text, "1") == 0) rc = fl_row_set_bool_i(tg, true, err);
        else if (strcasecmp(text, "false") == 0 || strcmp(text, "0") == 0) rc = fl_row_set_bool_i(tg, false, err);
        else rc = fl_err_set(err, FL_ERR_ARG, "column %s: '%s' is not a boolean", name, text);
        break;
    case FL_TYPE_TINYINT:
    case FL_TYPE_SMALLINT:
    case FL_TYPE_INTEGER:
    case FL_TYPE_BIGINT:
        if (!fl_parse_int(text, &v)) rc = fl_err_set(err, FL_ERR_ARG, "column %s: '%s' is not an integer", name, text);
        else rc = fl_row_set_int_i(tg, v, err);
        break;
    case FL_TYPE_FLOAT:
    case FL_TYPE_DOUBLE: {
        char *end;
        errno = 0;
        double d = strtod(text, &end);
        while (isspace((unsigned char)*end)) end++;
        if (end == text || *end) rc = fl_err_set(err, FL_ERR_ARG, "column %s: '%s' is not a number", name, text);
        else rc = fl_row_set_double_i(tg, d, err);
        break;
    }
    case FL_TYPE_DECIMAL: rc = fl_row_set_decimal_i(tg, text, err); break;
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING: rc = fl_row_set_bytes_i(tg, text, strlen(text), err); break;
    case FL_TYPE_BYTES:
    case FL_TYPE_BINARY: {
        const char *h = text;
        if (h[0] == '0' && (h[1] == 'x' || h[1] == 'X')) h += 2;
        size_t n = strlen(h);
        if (n % 2) {
            rc = fl_err_set(err, FL_ERR_ARG, "column %s: odd number of hex digits", name);
            break;
        }
        uint8_t *bytes = fl_malloc(n / 2 + 1);
        for (size_t i = 0; i < n / 2 && !rc; i++) {
            int hi = fl_hex_val(h[2 * i]), lo = fl_hex_val(h[2 * i + 1]);
            if (hi < 0 || lo < 0) rc = fl_err_set(err, FL_ERR_ARG, "column %s: '%s' is not hex", name, text);
            else bytes[i] = (uint8_t)(hi << 4 | lo);
        }
        if (!rc) rc = fl_row_set_bytes_i(tg, bytes, n / 2, err);
        fl_free(bytes);
        break;
    }
    case FL_TYPE_DATE: {
        const char *p = text;
        int64_t days;
        if (fl_parse_date(&p, &days) && !*p) rc = fl_row_set_date_i(tg, (int32_t)days, err);
        else if (fl_parse_int(text, &v) && v >= INT32_MIN && v <= INT32_MAX) rc = fl_row_set_date_i(tg, (int32_t)v, err);
        else rc = fl_err_set(err, FL_ERR_ARG, "column %s: '%s' is not a date (YYYY-MM-DD)", name, text);
        break;
    }
    case FL_TYPE_TIME: {
        const char *p = text;
        int64_t ns;
        if (fl_parse_time(&p, &ns) && !*p) rc = fl_row_set_time_i(tg, (int32_t)(ns / 1000000), err);
        else rc = fl_err_set(err, FL_ERR_ARG, "column %s: '%s' is not a time (HH:MM:SS[.fff])", name, text);
        break;
    }
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ: rc = fl_set_timestamp_text(tg, text, err); break;
    case FL_TYPE_ARRAY:
    case FL_TYPE_MAP:
    case FL_TYPE_ROW: rc = fl_nested_set_text(tg, text, err); break;
    default:
        rc = fl_err_set(err, FL_ERR_ARG, "column %s: %s values cannot be written yet", name,
                        tg->type_text);
    }
    return rc;
}

/* ---- decimals ---- */

int fl_decimal_parse(const char *text, int32_t p, int32_t s, __int128 *out, fl_error_t *err) {
    const char *c = text;
    while (isspace((unsigned char)*c)) c++;
    bool neg = false;
    if (*c == '-' || *c == '+') neg = *c++ == '-';
    __int128 v = 0;
    int int_digits = 0, frac_digits = 0, sig = 0;
    bool any = false, round_up = false;
    int64_t exp = 0;
    for (; isdigit((unsigned char)*c); c++) {
        any = true;
        if (sig || *c != '0') sig++;
        if (sig > FL_DECIMAL_PRECISION_MAX + 1) goto range;
        v = v * 10 + (*c - '0');
        int_digits++;
    }
    if (*c == '.') {
        c++;
        for (; isdigit((unsigned char)*c); c++) {
            any = true;
            if (frac_digits < s) {
                v = v * 10 + (*c - '0');
                frac_digits++;
                if (sig || *c != '0') sig++;
            } else if (frac_digits == s) {
                round_up = *c >= '5'; /* half up, like BigDecimal.setScale(HALF_UP) */
                frac_digits++;
            }
        }
    }
    if (*c == 'e' || *c == 'E') {
        char *end;
        exp = strtoll(c + 1, &end, 10);
        c = end;
    }
    while (isspace((unsigned char)*c)) c++;
    if (!any || *c || exp != 0)
        return fl_err_set(err, FL_ERR_ARG, "'%s' is not a decimal number", text);
    for (int k = frac_digits > s ? s : frac_digits; k < s; k++) v *= 10;
    if (round_up) v += 1;
    __int128 limit = 1;
    for (int k = 0; k < p; k++) limit *= 10;
    if (v >= limit) goto range;
    (void)int_digits;
    *out = neg ? -v : v;
    return 0;
range:
    return fl_err_set(err, FL_ERR_ARG, "'%s' does not fit DECIMAL(%d, %d)", text, p, s);
}

/* ---- bucket ---- */

int fl_row_bucket(const fluss_row_t *r, fl_buf_t *scratch, int32_t *bucket, fl_error_t *err) {
    scratch->len = 0;
    int rc = fl_key_encode(r->t->bucket_codec, &r->row, &r->t->desc.schema, r->t->bucket_key,
                           r->t->bucket_key_count, scratch, err);
    if (!rc) *bucket = fl_key_bucket(r->t->bucket_codec, scratch->data, scratch->len,
                                     r->t->bucket_count);
    return rc;
}

/* ---- reading (rows a lookuper returns) ---- */

static const fl_cell_t *fl_row_cell_view(const fluss_row_t *r, size_t col) {
    static const fl_cell_t null_cell = {.is_null = true};
    return col < r->row.column_count ? &r->row.cells[col] : &null_cell;
}

bool fluss_row_is_null(const fluss_row_t *r, size_t col) { return fl_row_cell_view(r, col)->is_null; }

int64_t fluss_row_get_int64(const fluss_row_t *r, size_t col) {
    const fl_cell_t *c = fl_row_cell_view(r, col);
    if (c->is_null) return 0;
    if (fl_table_type(r->t, col)->root == FL_TYPE_DECIMAL) return (int64_t)c->dec;
    return c->i;
}

double fluss_row_get_double(const fluss_row_t *r, size_t col) {
    const fl_cell_t *c = fl_row_cell_view(r, col);
    return c->is_null ? 0 : c->d;
}

int32_t fluss_row_get_nanos(const fluss_row_t *r, size_t col) {
    const fl_cell_t *c = fl_row_cell_view(r, col);
    return c->is_null ? 0 : c->nanos;
}

const void *fluss_row_get_bytes(const fluss_row_t *r, size_t col, size_t *len) {
    const fl_cell_t *c = fl_row_cell_view(r, col);
    *len = c->is_null ? 0 : c->len;
    return c->is_null ? NULL : fl_row_cell_bytes(&r->row, c);
}

size_t fluss_row_value_text(const fluss_row_t *r, size_t col, int flags, char *buf, size_t cap) {
    fl_buf_t o;
    fl_buf_init(&o);
    if (col < r->row.column_count) fl_client_cell_text(fl_table_type(r->t, col), r->t->kv_format, &r->row, col, flags,
                                                    &o);
    size_t n = o.len;
    if (cap > 0) {
        size_t k = n < cap - 1 ? n : cap - 1;
        if (k) memcpy(buf, o.data, k);
        buf[k] = '\0';
    }
    fl_buf_free(&o);
    return n;
}
