/*
 * test_common_duration.c — the one duration parser: every unit label of
 * Fluss/Flink TimeUtils (short, long, plural, any case), no unit = ms,
 * spaces, sub-millisecond truncation, and rejection of empty text, signs,
 * fractions, unknown units, trailing garbage and int64 overflow.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common_duration.h"

static void expect_ms(const char *text, int64_t want) {
    int64_t v = -7;
    fl_error_t err;
    if (fl_duration_parse_ms(text, &v, &err) != 0) fail_msg("'%s' rejected: %s", text, err.msg);
    if (v != want) fail_msg("'%s' = %lld, want %lld", text, (long long)v, (long long)want);
}

static void expect_bad(const char *text) {
    int64_t v = -7;
    fl_error_t err;
    if (fl_duration_parse_ms(text, &v, &err) == 0) fail_msg("'%s' accepted as %lld", text, (long long)v);
    assert_int_equal(err.code, FLUSS_ERR__INVALID_ARG);
    assert_int_equal(v, -7);
}

static void test_units(void **state) {
    (void)state;
    const int64_t D = 86400000, H = 3600000, M = 60000;
    const char *days[] = {"3d", "3 d", "3 day", "3 days", "3 DAYS", "3 Day"};
    for (size_t i = 0; i < sizeof(days) / sizeof(days[0]); i++) expect_ms(days[i], 3 * D);
    const char *hours[] = {"2h", "2 h", "2 hour", "2 hours", "2H"};
    for (size_t i = 0; i < sizeof(hours) / sizeof(hours[0]); i++) expect_ms(hours[i], 2 * H);
    const char *mins[] = {"5m", "5 min", "5 mins", "5 minute", "5 minutes", "5MIN"};
    for (size_t i = 0; i < sizeof(mins) / sizeof(mins[0]); i++) expect_ms(mins[i], 5 * M);
    const char *secs[] = {"7s", "7 s", "7 sec", "7 secs", "7 second", "7 seconds"};
    for (size_t i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) expect_ms(secs[i], 7000);
    const char *ms[] = {"9", "9ms", "9 ms", "9 milli", "9 millis", "9 millisecond",
                        "9 milliseconds"};
    for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) expect_ms(ms[i], 9);
    const char *us[] = {"2500us", "2500 \xc2\xb5s", "2500 micro", "2500 micros",
                        "2500 microsecond", "2500 microseconds"};
    for (size_t i = 0; i < sizeof(us) / sizeof(us[0]); i++) expect_ms(us[i], 2);
    const char *ns[] = {"3999999ns", "3999999 nano", "3999999 nanos", "3999999 nanosecond",
                        "3999999 nanoseconds"};
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) expect_ms(ns[i], 3);
    expect_ms("  10 min  ", 600000);
    expect_ms("0", 0);
    expect_ms("0 d", 0);
    expect_ms("007 s", 7000);
    expect_ms("9223372036854775807", INT64_MAX);
    expect_ms("9223372036854775807 ns", 9223372036854);
    expect_ms("106751991167 d", 106751991167LL * D);
}

static void test_rejects(void **state) {
    (void)state;
    const char *bad[] = {"",         "   ",       "s",          "ten s",      "-1 s",
                         "+1 s",     "1.5 h",     "1e3",        "10 fortnights", "1min30s",
                         "10 mb",    "1 s x",     "1 ss",       "1 hourss",   "0x10",
                         "9223372036854775808",     "99999999999999999999 ms",
                         "106751991168 d",          "9223372036854776 s"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) expect_bad(bad[i]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
