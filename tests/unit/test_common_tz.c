/*
 * test_common_tz.c — the calendar (common_civil.h), POSIX TZ rules
 * (common_tz_rule.h) and TZif zones (common_tz.h): day numbers, month
 * clamping, rule strings with their v3 extensions, offsets of real zones
 * around their DST changes and after 2037 (footer rule), java.time's
 * gap/overlap resolution, and a decoder that refuses every cut or bent file.
 * Expected values were checked against java.time (JDK 17).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common_civil.h"
#include "common_tz.h"
#include "common_tz_rule.h"

#define ZONEINFO "/usr/share/zoneinfo"

/* ---- calendar ---- */

static void test_civil_days(void **state) {
    (void)state;
    assert_int_equal(fl_civil_days_from_ymd(1970, 1, 1), 0);
    assert_int_equal(fl_civil_days_from_ymd(2000, 2, 29), 11016);
    assert_int_equal(fl_civil_days_from_ymd(1969, 12, 31), -1);
    assert_int_equal(fl_civil_days_from_ymd(1, 1, 1), -719162);
    /* every day from 1600 to 2400 goes there and back */
    for (int64_t d = fl_civil_days_from_ymd(1600, 1, 1); d < fl_civil_days_from_ymd(2400, 1, 1);
         d += 1) {
        int64_t y;
        int m, dd;
        fl_civil_ymd_from_days(d, &y, &m, &dd);
        assert_true(m >= 1 && m <= 12 && dd >= 1 && dd <= fl_civil_month_days(y, m));
        assert_int_equal(fl_civil_days_from_ymd(y, m, dd), d);
    }
    assert_int_equal(fl_civil_weekday(0), 4);                                   /* Thursday */
    assert_int_equal(fl_civil_weekday(fl_civil_days_from_ymd(2024, 11, 11)), 1); /* Monday */
    assert_int_equal(fl_civil_weekday(-1), 3);
    assert_true(fl_civil_is_leap(2000) && !fl_civil_is_leap(1900) && fl_civil_is_leap(2024));
}

static void test_civil_seconds_and_months(void **state) {
    (void)state;
    fl_civil_t c;
    fl_civil_from_seconds(-1, &c);
    assert_true(c.year == 1969 && c.month == 12 && c.day == 31 && c.hour == 23 &&
                c.minute == 59 && c.second == 59);
    assert_int_equal(fl_civil_to_seconds(&c), -1);
    c = (fl_civil_t){2024, 1, 31, 10, 0, 0};
    fl_civil_add_months(&c, 1);
    assert_true(c.year == 2024 && c.month == 2 && c.day == 29 && c.hour == 10);
    c = (fl_civil_t){2024, 2, 29, 0, 0, 0};
    fl_civil_add_months(&c, 12);
    assert_true(c.year == 2025 && c.month == 2 && c.day == 28);
    c = (fl_civil_t){2024, 3, 15, 0, 0, 0};
    fl_civil_add_months(&c, -15);
    assert_true(c.year == 2022 && c.month == 12 && c.day == 15);
}

/* ---- POSIX rules ---- */

static fl_tz_rule_t rule(const char *text) {
    fl_tz_rule_t r;
    fl_error_t err;
    int rc = fl_tz_rule_parse(text, strlen(text), &r, &err);
    if (rc) fail_msg("%s: %s", text, err.msg);
    return r;
}

static int64_t utc(int64_t y, int mo, int d, int h, int mi) {
    fl_civil_t c = {y, mo, d, h, mi, 0};
    return fl_civil_to_seconds(&c);
}

static void test_rule_offsets(void **state) {
    (void)state;
    fl_tz_rule_t ny = rule("EST5EDT,M3.2.0,M11.1.0");
    assert_int_equal(fl_tz_rule_offset_at(&ny, utc(2100, 1, 15, 12, 0)), -5 * 3600);
    assert_int_equal(fl_tz_rule_offset_at(&ny, utc(2100, 7, 1, 12, 0)), -4 * 3600);
    /* 2100-03-14 is the second Sunday: 02:00 EST = 07:00 UTC */
    assert_int_equal(fl_tz_rule_offset_at(&ny, utc(2100, 3, 14, 6, 59)), -5 * 3600);
    assert_int_equal(fl_tz_rule_offset_at(&ny, utc(2100, 3, 14, 7, 0)), -4 * 3600);
    /* 2100-11-07 first Sunday: 02:00 EDT = 06:00 UTC */
    assert_int_equal(fl_tz_rule_offset_at(&ny, utc(2100, 11, 7, 5, 59)), -4 * 3600);
    assert_int_equal(fl_tz_rule_offset_at(&ny, utc(2100, 11, 7, 6, 0)), -5 * 3600);
    fl_tz_rule_t syd = rule("AEST-10AEDT,M10.1.0,M4.1.0/3");
    assert_int_equal(fl_tz_rule_offset_at(&syd, utc(2080, 1, 15, 0, 0)), 11 * 3600);
    assert_int_equal(fl_tz_rule_offset_at(&syd, utc(2080, 7, 15, 0, 0)), 10 * 3600);
    fl_tz_rule_t tehran = rule("<+0330>-3:30");
    assert_false(tehran.has_dst);
    assert_int_equal(fl_tz_rule_offset_at(&tehran, 0), 3 * 3600 + 1800);
    /* version-3 extensions: times past 24h and negative times */
    fl_tz_rule_t il = rule("IST-2IDT,M3.4.4/26,M10.5.0");
    assert_int_equal(il.start.time_s, 26 * 3600);
    fl_tz_rule_t gl = rule("<-02>2<-01>,M3.5.0/-1,M10.5.0/0");
    assert_int_equal(gl.start.time_s, -3600);
    assert_int_equal(fl_tz_rule_offset_at(&gl, utc(2090, 7, 1, 0, 0)), -3600);
    /* permanent DST spelled as a rule */
    fl_tz_rule_t perm = rule("EST5EDT4,0/0,J365/25");
    assert_int_equal(fl_tz_rule_offset_at(&perm, utc(2090, 1, 1, 5, 0)), -4 * 3600);
    assert_int_equal(fl_tz_rule_offset_at(&perm, utc(2090, 12, 31, 20, 0)), -4 * 3600);
    /* Julian days skip Feb 29: J60 is March 1 in every year */
    fl_tz_rule_t j = rule("AAA0BBB,J60/0,J300/0");
    assert_int_equal(fl_tz_rule_offset_at(&j, utc(2096, 2, 29, 12, 0)), 0);
    assert_int_equal(fl_tz_rule_offset_at(&j, utc(2096, 3, 1, 0, 0)), 3600);
    /* dst without dates: the US rules */
    fl_tz_rule_t us = rule("PST8PDT");
    assert_int_equal(fl_tz_rule_offset_at(&us, utc(2090, 7, 1, 0, 0)), -7 * 3600);
}

static void test_rule_refusals(void **state) {
    (void)state;
    const char *bad[] = {"", "EST", "ES5", "EST25", "<AB>5", "<ABC5", "EST5EDT,M13.1.0,M11.1.0",
                         "EST5EDT,M3.0.0,M11.1.0", "EST5EDT,M3.2.7,M11.1.0", "EST5EDT,M3.2.0",
                         "EST5EDT,M3.2.0,M11.1.0x", "EST5EDT,J0,J10", "EST5EDT,366,10",
                         "EST5EDT,M3.2.0/168,M11.1.0", "EST5:60", "EST5EDT,,", "EST5 ",
                         "EST5EDT,M3.2.0,M11.1.0/1:2:3:4", "EST+"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        fl_tz_rule_t r;
        fl_error_t err;
        if (fl_tz_rule_parse(bad[i], strlen(bad[i]), &r, &err) != FLUSS_ERR__CORRUPT)
            fail_msg("accepted '%s'", bad[i]);
    }
}

/* ---- TZif ---- */

static fl_tz_t *zone(const char *id) {
    fl_tz_t *tz = NULL;
    fl_error_t err;
    if (fl_tz_load(ZONEINFO, id, &tz, &err)) fail_msg("%s: %s", id, err.msg);
    return tz;
}

static void test_real_zones(void **state) {
    (void)state;
    fl_tz_t *ny = zone("America/New_York");
    assert_string_equal(fl_tz_name(ny), "America/New_York");
    assert_int_equal(fl_tz_offset_at(ny, utc(2024, 3, 10, 6, 59)), -5 * 3600);
    assert_int_equal(fl_tz_offset_at(ny, utc(2024, 3, 10, 7, 0)), -4 * 3600);
    assert_int_equal(fl_tz_offset_at(ny, utc(2100, 7, 1, 12, 0)), -4 * 3600); /* footer */
    assert_int_equal(fl_tz_offset_at(ny, utc(2100, 12, 1, 12, 0)), -5 * 3600);
    assert_int_equal(fl_tz_offset_at(ny, utc(1800, 1, 1, 0, 0)), -(4 * 3600 + 56 * 60 + 2));
    fl_tz_t *sh = zone("Asia/Shanghai");
    assert_int_equal(fl_tz_offset_at(sh, utc(2024, 11, 11, 0, 0)), 8 * 3600);
    fl_tz_t *dub = zone("Europe/Dublin"); /* negative DST: winter is the "daylight" type */
    assert_int_equal(fl_tz_offset_at(dub, utc(2024, 1, 15, 0, 0)), 0);
    assert_int_equal(fl_tz_offset_at(dub, utc(2024, 7, 15, 0, 0)), 3600);
    assert_int_equal(fl_tz_offset_at(dub, utc(2090, 7, 15, 0, 0)), 3600);
    fl_tz_t *lhi = zone("Australia/Lord_Howe"); /* half-hour DST */
    assert_int_equal(fl_tz_offset_at(lhi, utc(2024, 7, 1, 0, 0)), 10 * 3600 + 1800);
    assert_int_equal(fl_tz_offset_at(lhi, utc(2025, 1, 1, 0, 0)), 11 * 3600);
    fl_tz_free(ny);
    fl_tz_free(sh);
    fl_tz_free(dub);
    fl_tz_free(lhi);
}

static void test_local_to_utc(void **state) {
    (void)state;
    fl_tz_t *ny = zone("America/New_York");
    int32_t off;
    /* an ordinary reading */
    assert_int_equal(fl_tz_local_to_utc(ny, utc(2024, 7, 1, 12, 0), 0, &off),
                     utc(2024, 7, 1, 16, 0));
    assert_int_equal(off, -4 * 3600);
    /* 2024-03-10 02:30 does not exist: moved an hour on, to 03:30 EDT */
    assert_int_equal(fl_tz_local_to_utc(ny, utc(2024, 3, 10, 2, 30), -5 * 3600, &off),
                     utc(2024, 3, 10, 7, 30));
    assert_int_equal(off, -4 * 3600);
    /* 2024-11-03 01:30 exists twice: the preferred offset wins, else the earlier */
    assert_int_equal(fl_tz_local_to_utc(ny, utc(2024, 11, 3, 1, 30), -5 * 3600, &off),
                     utc(2024, 11, 3, 6, 30));
    assert_int_equal(off, -5 * 3600);
    assert_int_equal(fl_tz_local_to_utc(ny, utc(2024, 11, 3, 1, 30), 0, &off),
                     utc(2024, 11, 3, 5, 30));
    assert_int_equal(off, -4 * 3600);
    /* Samoa skipped 2011-12-30 whole: a reading on it lands on the 31st */
    fl_tz_t *apia = zone("Pacific/Apia");
    int64_t u = fl_tz_local_to_utc(apia, utc(2011, 12, 30, 12, 0), -10 * 3600, &off);
    assert_int_equal(off, 14 * 3600);
    assert_int_equal(u + off, utc(2011, 12, 31, 12, 0));
    fl_tz_free(ny);
    fl_tz_free(apia);
}

static void test_load_refusals(void **state) {
    (void)state;
    const char *bad[] = {"", "/etc/passwd", "../../etc/passwd", "America/../../etc/passwd",
                         "America//New_York", "America/", "a b", "Asia/Shang\nhai", "./UTC"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        fl_tz_t *tz = NULL;
        fl_error_t err;
        assert_int_equal(fl_tz_load(ZONEINFO, bad[i], &tz, &err), FLUSS_ERR__INVALID_ARG);
        assert_null(tz);
    }
    fl_tz_t *tz = NULL;
    fl_error_t err;
    assert_int_equal(fl_tz_load(ZONEINFO, "Nope/Zone", &tz, &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fl_tz_load(ZONEINFO, "America", &tz, &err), FLUSS_ERR__INVALID_ARG);
    /* a file that is not TZif */
    assert_int_equal(fl_tz_load(ZONEINFO, "zone.tab", &tz, &err), FLUSS_ERR__CORRUPT);
}

/* A small version-2 file built by hand: +1h standard, +2h from
 * 1000000000 to 1100000000, then a CET-like footer. */
typedef struct tzif_builder {
    uint8_t b[512];
    size_t n;
} tzif_builder_t;

static void put(tzif_builder_t *t, const void *p, size_t n) {
    memcpy(t->b + t->n, p, n);
    t->n += n;
}
static void put32(tzif_builder_t *t, uint32_t v) {
    uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    put(t, x, 4);
}
static void put64(tzif_builder_t *t, uint64_t v) {
    put32(t, (uint32_t)(v >> 32));
    put32(t, (uint32_t)v);
}

static void header(tzif_builder_t *t, char version) {
    put(t, "TZif", 4);
    uint8_t v = (uint8_t)version, zero[15] = {0};
    put(t, &v, 1);
    put(t, zero, 15);
    put32(t, 2); /* isutcnt */
    put32(t, 2); /* isstdcnt */
    put32(t, 0); /* leapcnt */
    put32(t, 2); /* timecnt */
    put32(t, 2); /* typecnt */
    put32(t, 8); /* charcnt */
}

static void block(tzif_builder_t *t, int wide) {
    if (wide) {
        put64(t, 1000000000);
        put64(t, 1100000000);
    } else {
        put32(t, 1000000000);
        put32(t, 1100000000);
    }
    uint8_t idx[2] = {1, 0};
    put(t, idx, 2);
    put32(t, 3600);
    uint8_t s[2] = {0, 0};
    put(t, s, 2);
    put32(t, 7200);
    uint8_t d[2] = {1, 4};
    put(t, d, 2);
    put(t, "AAA\0BBB\0", 8);
    uint8_t flags[4] = {0, 0, 0, 0};
    put(t, flags, 4);
}

static tzif_builder_t build(const char *footer) {
    tzif_builder_t t = {{0}, 0};
    header(&t, '2');
    block(&t, 0);
    header(&t, '2');
    block(&t, 1);
    put(&t, footer, strlen(footer));
    return t;
}

static void test_tzif_decoder(void **state) {
    (void)state;
    tzif_builder_t t = build("\nAAA-1BBB,M3.5.0,M10.5.0/3\n");
    fl_tz_t *tz = NULL;
    fl_error_t err;
    assert_int_equal(fl_tz_parse_tzif(t.b, t.n, "test", &tz, &err), 0);
    assert_int_equal(fl_tz_offset_at(tz, 999999999), 3600);
    assert_int_equal(fl_tz_offset_at(tz, 1000000000), 7200);
    assert_int_equal(fl_tz_offset_at(tz, 1099999999), 7200);
    assert_int_equal(fl_tz_offset_at(tz, utc(2090, 1, 1, 0, 0)), 3600); /* the footer */
    assert_int_equal(fl_tz_offset_at(tz, utc(2090, 7, 1, 0, 0)), 7200);
    fl_tz_free(tz);
    /* every cut is refused */
    for (size_t n = 0; n < t.n; n++) {
        tz = NULL;
        assert_int_equal(fl_tz_parse_tzif(t.b, n, "cut", &tz, &err), FLUSS_ERR__CORRUPT);
        assert_null(tz);
    }
    /* an empty footer: the last transition holds */
    tzif_builder_t e = build("\n\n");
    assert_int_equal(fl_tz_parse_tzif(e.b, e.n, "empty footer", &tz, &err), 0);
    assert_int_equal(fl_tz_offset_at(tz, utc(2090, 7, 1, 0, 0)), 3600);
    fl_tz_free(tz);
    /* bent files */
    const size_t v1 = 44 + 2 * 4 + 2 + 12 + 8 + 4, idx2 = v1 + 44 + 16;
    struct {
        size_t at;
        uint8_t value;
        const char *what;
    } bends[] = {
        {0, 'X', "magic"},           {4, '9', "version"},
        {v1 + 4, '3', "second header's version"},
        {idx2, 2, "type index"},     {idx2 - 4, 0, "unsorted"},
        {35, 0, "v1 timecnt 0 with data after it"},
        {v1 + 44 + 16 + 2 + 4, 2, "isdst 2"},
        {v1 + 44 + 16 + 2 + 5, 8, "abbreviation index"},
        {v1 + 44 + 16 + 2 + 12 + 8, 2, "isstd 2"},
        {39, 0, "typecnt 0"},
    };
    for (size_t i = 0; i < sizeof(bends) / sizeof(bends[0]); i++) {
        tzif_builder_t b = t;
        b.b[bends[i].at] = bends[i].value;
        tz = NULL;
        if (fl_tz_parse_tzif(b.b, b.n, "bent", &tz, &err) != FLUSS_ERR__CORRUPT)
            fail_msg("accepted a file with a bad %s", bends[i].what);
    }
    tzif_builder_t nofoot = build("");
    assert_int_equal(fl_tz_parse_tzif(nofoot.b, nofoot.n, "x", &tz, &err), FLUSS_ERR__CORRUPT);
    tzif_builder_t twolines = build("\nAAA-1\nX\n");
    assert_int_equal(fl_tz_parse_tzif(twolines.b, twolines.n, "x", &tz, &err),
                     FLUSS_ERR__CORRUPT);
    tzif_builder_t badrule = build("\nAAA-1BBB,M3.5.0\n");
    assert_int_equal(fl_tz_parse_tzif(badrule.b, badrule.n, "x", &tz, &err), FLUSS_ERR__CORRUPT);
    /* version 1 alone */
    tzif_builder_t one = {{0}, 0};
    header(&one, 0);
    block(&one, 0);
    assert_int_equal(fl_tz_parse_tzif(one.b, one.n, "v1", &tz, &err), 0);
    assert_int_equal(fl_tz_offset_at(tz, utc(2090, 7, 1, 0, 0)), 3600);
    fl_tz_free(tz);
    one.b[one.n++] = '\n';
    assert_int_equal(fl_tz_parse_tzif(one.b, one.n, "v1+", &tz, &err), FLUSS_ERR__CORRUPT);
}

static void test_fixed(void **state) {
    (void)state;
    fl_tz_t *tz = fl_tz_fixed(-(5 * 3600 + 1800), "GMT-05:30");
    assert_int_equal(fl_tz_offset_at(tz, INT64_MIN / 2), -(5 * 3600 + 1800));
    int32_t off;
    assert_int_equal(fl_tz_local_to_utc(tz, 0, 0, &off), 5 * 3600 + 1800);
    fl_tz_free(tz);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_civil_days),       cmocka_unit_test(test_civil_seconds_and_months),
        cmocka_unit_test(test_rule_offsets),     cmocka_unit_test(test_rule_refusals),
        cmocka_unit_test(test_real_zones),       cmocka_unit_test(test_local_to_utc),
        cmocka_unit_test(test_load_refusals),    cmocka_unit_test(test_tzif_decoder),
        cmocka_unit_test(test_fixed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
