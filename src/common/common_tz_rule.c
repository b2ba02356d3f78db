/*
 * common_tz_rule.c — POSIX TZ rule strings (common_tz_rule.h): a parser
 * that reads only inside [text, text + len) and an evaluator on top of the
 * civil calendar (common_civil.h). Thread rule: none.
 *
 *   rule   = std offset [dst [offset] [',' date ['/' time] ',' date ['/' time]]]
 *   name   = 3+ letters | '<' 3+ of [A-Za-z0-9+-] '>'
 *   offset = [+-] hh [':' mm [':' ss]]      hh 0..24, west of UTC positive
 *   time   = [+-] hh [':' mm [':' ss]]      hh 0..167 (RFC 8536 version 3)
 *   date   = 'J' 1..365 | 0..365 | 'M' 1..12 '.' 1..5 '.' 0..6
 */
#include "common_tz_rule.h"

#include "common_civil.h"

typedef struct fl_tz_cursor {
    const char *p, *end;
} fl_tz_cursor_t;

static bool fl_tz_is_digit(char c) { return c >= '0' && c <= '9'; }
static bool fl_tz_is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

static bool fl_tz_peek(const fl_tz_cursor_t *c, char ch) { return c->p < c->end && *c->p == ch; }

static bool fl_tz_name(fl_tz_cursor_t *c) {
    const char *start;
    if (fl_tz_peek(c, '<')) {
        start = ++c->p;
        while (c->p < c->end && *c->p != '>') {
            char ch = *c->p;
            if (!fl_tz_is_alpha(ch) && !fl_tz_is_digit(ch) && ch != '+' && ch != '-') return false;
            c->p++;
        }
        if (c->p >= c->end || c->p - start < 3) return false;
        c->p++; /* '>' */
        return true;
    }
    start = c->p;
    while (c->p < c->end && fl_tz_is_alpha(*c->p)) c->p++;
    return c->p - start >= 3;
}

/* 1..3 decimal digits, value <= max. */
static bool fl_tz_number(fl_tz_cursor_t *c, int max, int *out) {
    int v = 0, n = 0;
    while (c->p < c->end && fl_tz_is_digit(*c->p) && n < 3) {
        v = v * 10 + (*c->p - '0');
        c->p++;
        n++;
    }
    if (n == 0 || v > max || (c->p < c->end && fl_tz_is_digit(*c->p))) return false;
    *out = v;
    return true;
}

/* [+-] hh [':' mm [':' ss]] in seconds, sign applied. */
static bool fl_tz_hms(fl_tz_cursor_t *c, int hours_max, int32_t *out) {
    int sign = 1;
    if (fl_tz_peek(c, '+') || fl_tz_peek(c, '-')) sign = *c->p++ == '-' ? -1 : 1;
    int h, m = 0, s = 0;
    if (!fl_tz_number(c, hours_max, &h)) return false;
    if (fl_tz_peek(c, ':')) {
        c->p++;
        if (!fl_tz_number(c, 59, &m)) return false;
        if (fl_tz_peek(c, ':')) {
            c->p++;
            if (!fl_tz_number(c, 59, &s)) return false;
        }
    }
    *out = sign * (h * 3600 + m * 60 + s);
    return true;
}

static bool fl_tz_date(fl_tz_cursor_t *c, fl_tz_rule_date_t *d) {
    d->time_s = 2 * 3600; /* POSIX default: 02:00 */
    d->week = d->weekday = 0;
    if (fl_tz_peek(c, 'J')) {
        c->p++;
        d->kind = 'J';
        if (!fl_tz_number(c, 365, &d->n) || d->n < 1) return false;
    } else if (fl_tz_peek(c, 'M')) {
        c->p++;
        d->kind = 'M';
        if (!fl_tz_number(c, 12, &d->n) || d->n < 1) return false;
        if (!fl_tz_peek(c, '.')) return false;
        c->p++;
        if (!fl_tz_number(c, 5, &d->week) || d->week < 1) return false;
        if (!fl_tz_peek(c, '.')) return false;
        c->p++;
        if (!fl_tz_number(c, 6, &d->weekday)) return false;
    } else {
        d->kind = 'N';
        if (!fl_tz_number(c, 365, &d->n)) return false;
    }
    if (fl_tz_peek(c, '/')) {
        c->p++;
        if (!fl_tz_hms(c, 167, &d->time_s)) return false;
    }
    return true;
}

int fl_tz_rule_parse(const char *text, size_t len, fl_tz_rule_t *out, fl_error_t *err) {
    fl_tz_cursor_t c = {text, text + len};
    fl_tz_rule_t r = {0};
    int32_t west;
    if (len > FL_TZ_RULE_TEXT_MAX) goto bad;
    if (!fl_tz_name(&c) || !fl_tz_hms(&c, 24, &west)) goto bad;
    r.std_offset_s = -west;
    if (c.p < c.end) {
        if (!fl_tz_name(&c)) goto bad;
        r.has_dst = true;
        r.dst_offset_s = r.std_offset_s + 3600;
        if (c.p < c.end && *c.p != ',') {
            if (!fl_tz_hms(&c, 24, &west)) goto bad;
            r.dst_offset_s = -west;
        }
        if (c.p < c.end) {
            if (!fl_tz_peek(&c, ',')) goto bad;
            c.p++;
            if (!fl_tz_date(&c, &r.start) || !fl_tz_peek(&c, ',')) goto bad;
            c.p++;
            if (!fl_tz_date(&c, &r.end)) goto bad;
        } else {
            /* no dates: POSIX leaves them to the implementation; the US
             * rules, as glibc and the tz code assume */
            r.start = (fl_tz_rule_date_t){'M', 3, 2, 0, 2 * 3600};
            r.end = (fl_tz_rule_date_t){'M', 11, 1, 0, 2 * 3600};
        }
    }
    if (c.p != c.end) goto bad;
    *out = r;
    return 0;
bad:
    return fl_err_set(err, FLUSS_ERR__CORRUPT, "not a POSIX TZ rule: '%.*s'",
                      (int)(len > FL_TZ_RULE_TEXT_MAX ? FL_TZ_RULE_TEXT_MAX : len), text);
}

/* Local seconds (civil) of a rule date in a year, time of day included. */
static int64_t fl_tz_rule_local(const fl_tz_rule_date_t *d, int64_t year) {
    int64_t days;
    if (d->kind == 'J') {
        days = fl_civil_days_from_ymd(year, 1, 1) + d->n - 1;
        if (fl_civil_is_leap(year) && d->n >= 60) days++; /* Feb 29 is never counted */
    } else if (d->kind == 'N') {
        days = fl_civil_days_from_ymd(year, 1, 1) + d->n;
    } else {
        int64_t first = fl_civil_days_from_ymd(year, d->n, 1);
        days = first + (d->weekday - fl_civil_weekday(first) + 7) % 7 + (d->week - 1) * 7;
        while (days >= first + fl_civil_month_days(year, d->n)) days -= 7;
    }
    return days * FL_CIVIL_SECONDS_PER_DAY + d->time_s;
}

int32_t fl_tz_rule_offset_at(const fl_tz_rule_t *r, int64_t utc_s) {
    if (!r->has_dst) return r->std_offset_s;
    fl_civil_t local;
    fl_civil_from_seconds(utc_s + r->std_offset_s, &local);
    /* DST starts at the start date's time in standard time and ends at the
     * end date's time in daylight time */
    int64_t start = fl_tz_rule_local(&r->start, local.year) - r->std_offset_s;
    int64_t end = fl_tz_rule_local(&r->end, local.year) - r->dst_offset_s;
    bool dst = start < end ? (utc_s >= start && utc_s < end)   /* northern: within the year */
                           : (utc_s < end || utc_s >= start);  /* southern: across new year */
    return dst ? r->dst_offset_s : r->std_offset_s;
}
