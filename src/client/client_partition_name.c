/*
 * client_partition_name.c — partition names and specs (client_partition.h):
 * the text Fluss's PartitionUtils#convertValueOfType and
 * PartitionNameConverters give a partition column's value, names of rows
 * and of specs, and the "k1=v1,k2=v2" spec users type. Pure functions;
 * thread rule: none.
 *
 * | type             | text (Fluss 0.9.1)                               | example                |
 * |------------------|--------------------------------------------------|------------------------|
 * | CHAR, STRING     | as is                                            | eu                     |
 * | BOOLEAN          | true / false                                     | true                   |
 * | TINYINT..BIGINT  | decimal                                          | -32760                 |
 * | BINARY, BYTES    | lowercase hex                                    | 1020ff                 |
 * | DATE             | yyyy-MM-dd (String.format %04d of the year)      | 2025-05-27             |
 * | TIME             | HH-mm-ss_SSS                                     | 01-30-02_199           |
 * | FLOAT, DOUBLE    | Java's toString, '.' → '_'; NaN, Inf, -Inf       | 5_73, 1_0E10           |
 * | TIMESTAMP(_LTZ)  | yyyy-MM-dd-HH-mm-ss_ + nanos of the second, no   | 2025-05-31-03-42-35_428|
 * |                  | trailing zeros (none for 0), UTC                 |                        |
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_partition.h"
#include "common_alloc.h"
#include "common_civil.h"

static void fl_puts(fl_buf_t *o, const char *s) { fl_buf_append(o, s, strlen(s)); }

bool fl_partition_type_ok(const fl_datatype_t *t) {
    switch (t->root) {
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
    case FL_TYPE_BOOLEAN:
    case FL_TYPE_BINARY:
    case FL_TYPE_BYTES:
    case FL_TYPE_TINYINT:
    case FL_TYPE_SMALLINT:
    case FL_TYPE_INTEGER:
    case FL_TYPE_DATE:
    case FL_TYPE_TIME:
    case FL_TYPE_BIGINT:
    case FL_TYPE_FLOAT:
    case FL_TYPE_DOUBLE:
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ: return true;
    default: return false;
    }
}

/* The shortest decimal digits of d that read back as d (as a float when
 * single) and the exponent of the first digit: d = 0.D × 10^(exp + 1). */
static void fl_shortest_digits(double d, bool single, char *digits, size_t cap, int *exp) {
    char tmp[48];
    for (int prec = 0; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*e", prec, d);
        bool same = single ? strtof(tmp, NULL) == (float)d : strtod(tmp, NULL) == d;
        if (same) break;
    }
    /* tmp is "[-]d[.ddd]e±XX" */
    const char *p = tmp + (tmp[0] == '-');
    size_t n = 0;
    for (; *p && *p != 'e'; p++)
        if (isdigit((unsigned char)*p) && n + 1 < cap) digits[n++] = *p;
    while (n > 1 && digits[n - 1] == '0') n--;
    digits[n] = '\0';
    *exp = *p == 'e' ? atoi(p + 1) : 0;
}

/* Java's Float.toString / Double.toString: plain for 1e-3 <= |d| < 1e7
 * (at least one fraction digit), else d.dddE±n. */
void fl_java_float_text(double d, bool single, fl_buf_t *o) {
    if (isnan(d) || isinf(d)) {
        fl_puts(o, isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
        return;
    }
    if (signbit(d)) fl_buf_put_u8(o, '-');
    double a = fabs(d);
    if (a == 0) {
        fl_puts(o, "0.0");
        return;
    }
    char digits[32];
    int exp;
    fl_shortest_digits(a, single, digits, sizeof(digits), &exp);
    size_t n = strlen(digits);
    if (a >= 1e-3 && a < 1e7) {
        if (exp >= 0) {
            for (int i = 0; i <= exp; i++) fl_buf_put_u8(o, (size_t)i < n ? (uint8_t)digits[i] : '0');
            fl_buf_put_u8(o, '.');
            if ((size_t)exp + 1 < n) fl_puts(o, digits + exp + 1);
            else fl_buf_put_u8(o, '0');
        } else {
            fl_puts(o, "0.");
            for (int i = 0; i < -exp - 1; i++) fl_buf_put_u8(o, '0');
            fl_puts(o, digits);
        }
        return;
    }
    fl_buf_put_u8(o, (uint8_t)digits[0]);
    fl_buf_put_u8(o, '.');
    fl_puts(o, n > 1 ? digits + 1 : "0");
    char e[16];
    snprintf(e, sizeof(e), "E%d", exp);
    fl_puts(o, e);
}

static void fl_fmt(fl_buf_t *o, const char *fmt, long long a, long long b, long long c,
                   long long d) {
    char tmp[96];
    int n = snprintf(tmp, sizeof(tmp), fmt, a, b, c, d);
    if (n > 0) fl_buf_append(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* DateTimeFormatter "yyyy": year of era, at least 4 digits, '+' past 9999. */
static void fl_year_of_era(fl_buf_t *o, int64_t year) {
    int64_t yoe = year > 0 ? year : 1 - year;
    fl_fmt(o, yoe > 9999 ? "+%04lld" : "%04lld", (long long)yoe, 0, 0, 0);
}

static void fl_timestamp_name(fl_buf_t *o, int64_t ms, int32_t nanos_of_milli) {
    int64_t s = fl_civil_floor_div(ms, 1000);
    int64_t nanos = (ms - s * 1000) * 1000000 + nanos_of_milli;
    fl_civil_t c;
    fl_civil_from_seconds(s, &c);
    fl_year_of_era(o, c.year);
    fl_fmt(o, "-%02lld-%02lld-%02lld", c.month, c.day, c.hour, 0);
    fl_fmt(o, "-%02lld-%02lld_", c.minute, c.second, 0, 0);
    if (nanos == 0) return;
    char frac[16];
    snprintf(frac, sizeof(frac), "%09lld", (long long)nanos);
    size_t n = 9;
    while (n > 0 && frac[n - 1] == '0') n--;
    fl_buf_append(o, frac, n);
}

int fl_partition_value_text(const fl_datatype_t *t, const fl_row_t *row, const fl_cell_t *c,
                            fl_buf_t *o, fl_error_t *err) {
    if (c->is_null)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "Partition value shouldn't be null.");
    switch (t->root) {
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING: fl_buf_append(o, fl_row_cell_bytes(row, c), c->len); return 0;
    case FL_TYPE_BOOLEAN: fl_puts(o, c->i ? "true" : "false"); return 0;
    case FL_TYPE_BINARY:
    case FL_TYPE_BYTES:
        for (size_t k = 0; k < c->len; k++) {
            static const char hex[] = "0123456789abcdef";
            uint8_t b = fl_row_cell_bytes(row, c)[k];
            fl_buf_put_u8(o, (uint8_t)hex[b >> 4]);
            fl_buf_put_u8(o, (uint8_t)hex[b & 15]);
        }
        return 0;
    case FL_TYPE_TINYINT:
    case FL_TYPE_SMALLINT:
    case FL_TYPE_INTEGER:
    case FL_TYPE_BIGINT: fl_fmt(o, "%lld", (long long)c->i, 0, 0, 0); return 0;
    case FL_TYPE_DATE: {
        int64_t y;
        int m, d;
        fl_civil_ymd_from_days(c->i, &y, &m, &d);
        fl_fmt(o, "%04lld-%02lld-%02lld", (long long)y, m, d, 0);
        return 0;
    }
    case FL_TYPE_TIME: {
        int64_t v = c->i;
        int64_t h = fl_civil_floor_div(v, 3600000);
        int64_t rest = v - h * 3600000;
        fl_fmt(o, "%02lld-%02lld-%02lld_%03lld", (long long)h, (long long)(rest / 60000),
               (long long)(rest % 60000 / 1000), (long long)(rest % 1000));
        return 0;
    }
    case FL_TYPE_FLOAT:
    case FL_TYPE_DOUBLE: {
        if (isnan(c->d) || isinf(c->d)) {
            fl_puts(o, isnan(c->d) ? "NaN" : c->d > 0 ? "Inf" : "-Inf");
            return 0;
        }
        size_t start = o->len;
        fl_java_float_text(c->d, t->root == FL_TYPE_FLOAT, o);
        for (size_t k = start; k < o->len; k++)
            if (o->data[k] == '.') o->data[k] = '_';
        return 0;
    }
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ: fl_timestamp_name(o, c->i, c->nanos); return 0;
    default:
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "a partition key of type %s",
                          fl_type_root_json_name(t->root));
    }
}

int fl_partition_name_of_row(const fl_datatype_t *const *types, const fl_row_t *row,
                             const int32_t *cols, size_t n, fl_buf_t *out, fl_error_t *err) {
    out->len = 0;
    for (size_t i = 0; i < n; i++) {
        if (i) fl_buf_put_u8(out, '$');
        size_t col = (size_t)cols[i];
        int rc = fl_partition_value_text(types[col], row, &row->cells[col], out, err);
        if (rc) return rc;
    }
    fl_buf_put_u8(out, '\0');
    out->len--;
    return 0;
}

static char *fl_trimmed(const char *s, size_t n) {
    while (n && isspace((unsigned char)*s)) s++, n--;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    return fl_strndup(s, n);
}

int fl_partition_spec_parse(const char *spec, fl_kvlist_t *out, fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    const char *p = spec;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        char *item = fl_trimmed(p, n);
        bool blank = item[0] == '\0';
        fl_free(item);
        if (blank && !end) break;
        if (!eq) {
            fl_kvlist_free(out);
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "partition spec '%s': expected key=value items", spec);
        }
        char *k = fl_trimmed(p, (size_t)(eq - p));
        char *v = fl_trimmed(eq + 1, n - (size_t)(eq - p) - 1);
        int rc = 0;
        if (!k[0] || fl_kvlist_get(out, k))
            rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "partition spec '%s': %s key '%s'",
                            spec, k[0] ? "repeated" : "empty", k);
        else fl_kvlist_set(out, k, v);
        fl_free(k);
        fl_free(v);
        if (rc) {
            fl_kvlist_free(out);
            return rc;
        }
        p += n + (end ? 1 : 0);
    }
    return 0;
}

int fl_partition_name_of_spec(const fl_kvlist_t *spec, const fl_strlist_t *keys, fl_buf_t *out,
                              fl_error_t *err) {
    out->len = 0;
    for (size_t i = 0; i < spec->count; i++)
        if (fl_strlist_index(keys, spec->items[i].key) < 0)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "'%s' is not a partition key",
                              spec->items[i].key);
    for (size_t i = 0; i < keys->count; i++) {
        const char *v = fl_kvlist_get(spec, keys->items[i]);
        if (!v)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "the partition spec has no value for partition key '%s'",
                              keys->items[i]);
        if (i) fl_buf_put_u8(out, '$');
        fl_puts(out, v);
    }
    fl_buf_put_u8(out, '\0');
    out->len--;
    return 0;
}
