/*
 * test_coordinator_partition_time.c — partition values of auto-partitioned
 * tables (coordinator_partition_time.h): every time unit around the
 * reference's own example, time zones, the retention cut-off, quarter and
 * month-end boundaries, DST changes (New York, Lord Howe's half hour,
 * Samoa's skipped day), dates past 2037, and how time-zone ids resolve.
 * Every expected value was computed with java.time (JDK 17) the way
 * PartitionUtils#generateAutoPartitionTime does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "coordinator_partition_time.h"

#define ZONEINFO "/usr/share/zoneinfo"

typedef struct expect {
    const char *zone;
    int64_t now_ms;
    fl_partition_time_unit_t unit;
    int64_t offset;
    const char *value;
} expect_t;

#define Y FL_PARTITION_TIME_YEAR
#define Q FL_PARTITION_TIME_QUARTER
#define M FL_PARTITION_TIME_MONTH
#define D FL_PARTITION_TIME_DAY
#define H FL_PARTITION_TIME_HOUR

static void check(const expect_t *e, size_t n) {
    for (size_t i = 0; i < n; i++) {
        bool known;
        fl_tz_t *tz = fl_partition_time_zone(ZONEINFO, e[i].zone, &known);
        char v[FL_PARTITION_TIME_VALUE_MAX];
        assert_true(fl_partition_time_value(tz, e[i].now_ms, e[i].offset, e[i].unit, v));
        if (strcmp(v, e[i].value) != 0)
            fail_msg("%s %lld %s%+lld: got %s, want %s", e[i].zone, (long long)e[i].now_ms,
                     fl_partition_time_unit_name(e[i].unit), (long long)e[i].offset, v,
                     e[i].value);
        fl_tz_free(tz);
    }
}

/* 2024-11-11 11:11 at UTC-8, the reference's PartitionUtilsTest instant */
#define REF_NOW 1731352260000LL

static void test_units(void **state) {
    (void)state;
    static const expect_t e[] = {
        {"GMT-8", REF_NOW, Y, -1, "2023"},       {"GMT-8", REF_NOW, Y, 0, "2024"},
        {"GMT-8", REF_NOW, Y, 3, "2027"},        {"GMT-8", REF_NOW, Q, -1, "20243"},
        {"GMT-8", REF_NOW, Q, 0, "20244"},       {"GMT-8", REF_NOW, Q, 1, "20251"},
        {"GMT-8", REF_NOW, Q, 3, "20253"},       {"GMT-8", REF_NOW, M, -1, "202410"},
        {"GMT-8", REF_NOW, M, 1, "202412"},      {"GMT-8", REF_NOW, M, 2, "202501"},
        {"GMT-8", REF_NOW, M, 3, "202502"},      {"GMT-8", REF_NOW, D, -1, "20241110"},
        {"GMT-8", REF_NOW, D, 0, "20241111"},    {"GMT-8", REF_NOW, D, 3, "20241114"},
        {"GMT-8", REF_NOW, D, 20, "20241201"},   {"GMT-8", REF_NOW, H, -2, "2024111109"},
        {"GMT-8", REF_NOW, H, 0, "2024111111"},  {"GMT-8", REF_NOW, H, 3, "2024111114"},
        {"GMT-8", REF_NOW, H, 13, "2024111200"},
    };
    check(e, sizeof(e) / sizeof(e[0]));
}

static void test_time_zones(void **state) {
    (void)state;
    /* 2024-11-11 20:00 UTC is already the 12th in Shanghai; 2024-11-11
     * 03:00 UTC is still the 10th in New York */
    static const expect_t e[] = {
        {"UTC", 1731355200000LL, D, 0, "20241111"},
        {"Asia/Shanghai", 1731355200000LL, D, 0, "20241112"},
        {"America/New_York", 1731294000000LL, D, 0, "20241110"},
        {"GMT+8", 1731355200000LL, H, 0, "2024111204"},
        {"GMT-05:30", 1731355200000LL, H, 0, "2024111114"},
        {"PST", 1720728000000LL, H, 0, "2024071113"}, /* Java's alias of Los Angeles, in DST */
        {"EST", 1720728000000LL, H, 0, "2024071115"}, /* fixed -5 in Java, no DST */
        {"UTC+8", 1731355200000LL, H, 0, "2024111120"}, /* not a Java id: GMT */
        {"UTC", -1, H, 0, "1969123123"},
    };
    check(e, sizeof(e) / sizeof(e[0]));
}

static void test_retention_cutoff(void **state) {
    (void)state;
    /* now 2024-05-08, 2 retained: 20240506 is the oldest kept, and names
     * compare as strings against it */
    bool known;
    fl_tz_t *tz = fl_partition_time_zone(ZONEINFO, "UTC", &known);
    char cut[FL_PARTITION_TIME_VALUE_MAX];
    assert_true(fl_partition_time_value(tz, 1715162400000LL, -2, D, cut));
    assert_string_equal(cut, "20240506");
    assert_true(strcmp("20240505", cut) < 0);
    assert_true(strcmp("20240506", cut) >= 0);
    /* retention 0 keeps only the current period */
    assert_true(fl_partition_time_value(tz, 1715162400000LL, 0, H, cut));
    assert_string_equal(cut, "2024050810");
    fl_tz_free(tz);
}

static void test_boundaries(void **state) {
    (void)state;
    static const expect_t e[] = {
        {"UTC", 1711927800000LL, Q, 0, "20241"},  /* 2024-03-31 23:30 */
        {"UTC", 1711927800000LL, Q, 1, "20242"},
        {"UTC", 1711927800000LL, Q, -1, "20234"},
        {"UTC", 1711929600000LL, Q, 0, "20242"},  /* 2024-04-01 00:00 */
        {"UTC", 1735689599000LL, Q, 0, "20244"},  /* 2024-12-31 23:59:59 */
        {"UTC", 1735689599000LL, Q, 1, "20251"},
        {"UTC", 1735689599000LL, Q, -4, "20234"},
        {"Asia/Shanghai", 1735660800000LL, Q, 0, "20251"}, /* already 2025 there */
        {"UTC", 1706695200000LL, M, 1, "202402"}, /* Jan 31 + 1 month = Feb 29 */
        {"UTC", 1732960800000LL, Q, 1, "20251"},  /* Nov 30 + 3 months = Feb 28 */
        {"UTC", 1709200800000LL, Y, 1, "2025"},   /* Feb 29 + 1 year = Feb 28 */
        {"UTC", 1709200800000LL, Y, 4, "2028"},
    };
    check(e, sizeof(e) / sizeof(e[0]));
}

static void test_dst(void **state) {
    (void)state;
    static const expect_t e[] = {
        /* New York, 2024-03-10 01:30 EST: the next hour is 03 (02 never happens) */
        {"America/New_York", 1710052200000LL, H, 0, "2024031001"},
        {"America/New_York", 1710052200000LL, H, 1, "2024031003"},
        {"America/New_York", 1710052200000LL, H, 2, "2024031004"},
        /* 2024-11-03 01:30 EDT: the next hour is 01 again */
        {"America/New_York", 1730611800000LL, H, 0, "2024110301"},
        {"America/New_York", 1730611800000LL, H, 1, "2024110301"},
        {"America/New_York", 1730611800000LL, H, 2, "2024110302"},
        /* 2024-03-09 02:30 + 1 day is in the gap: still the 10th */
        {"America/New_York", 1709969400000LL, D, 0, "20240309"},
        {"America/New_York", 1709969400000LL, D, 1, "20240310"},
        {"America/New_York", 1709969400000LL, D, 2, "20240311"},
        /* Samoa skipped 2011-12-30: the day after the 29th is the 31st */
        {"Pacific/Apia", 1325196000000LL, D, 0, "20111229"},
        {"Pacific/Apia", 1325196000000LL, D, 1, "20111231"},
        {"Pacific/Apia", 1325196000000LL, D, 2, "20111231"},
        /* Lord Howe moves its clocks by half an hour */
        {"Australia/Lord_Howe", 1728143100000LL, H, 0, "2024100602"},
        {"Australia/Lord_Howe", 1728143100000LL, H, 1, "2024100603"},
        /* past the transitions a fat file lists: the footer rule */
        {"America/New_York", 4118126400000LL, H, 0, "2100070108"},
        {"America/New_York", 4131345600000LL, H, 0, "2100120107"},
        {"Australia/Sydney", 3472502400000LL, H, 0, "2080011511"},
    };
    check(e, sizeof(e) / sizeof(e[0]));
}

static void test_zone_ids(void **state) {
    (void)state;
    struct {
        const char *id;
        bool known;
        int32_t offset_s; /* at 2024-01-15 00:00 UTC */
    } ids[] = {
        {"UTC", true, 0},
        {"Asia/Shanghai", true, 8 * 3600},
        {"CTT", true, 8 * 3600},
        {"IST", true, 5 * 3600 + 1800},
        {"HST", true, -10 * 3600},
        {"GMT+8", true, 8 * 3600},
        {"GMT+08:00", true, 8 * 3600},
        {"GMT-0530", true, -(5 * 3600 + 1800)},
        {"GMT+530", true, 5 * 3600 + 1800},
        {"GMT+:30", true, 1800},
        {"GMT+000008", true, 8 * 60},
        {"GMT+24", false, 0},
        {"GMT+8:0", false, 0},
        {"GMT+123:00", false, 0},
        {"GMT8", false, 0},
        {"UTC+8", false, 0},
        {"asia/shanghai", false, 0},
        {"Nope/Zone", false, 0},
        {"../../etc/passwd", false, 0},
        {"posixrules", false, 0},
        {"right/UTC", false, 0},
        {"", false, 0},
    };
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        bool known;
        fl_tz_t *tz = fl_partition_time_zone(ZONEINFO, ids[i].id, &known);
        assert_non_null(tz);
        if (known != ids[i].known || fl_tz_offset_at(tz, 1705276800) != ids[i].offset_s)
            fail_msg("'%s': known %d offset %d", ids[i].id, known, fl_tz_offset_at(tz, 1705276800));
        fl_tz_free(tz);
    }
}

static void test_units_parse_and_range(void **state) {
    (void)state;
    fl_partition_time_unit_t u;
    assert_true(fl_partition_time_unit_parse("hour", &u) && u == H);
    assert_true(fl_partition_time_unit_parse("Quarter", &u) && u == Q);
    assert_false(fl_partition_time_unit_parse("WEEK", &u));
    assert_false(fl_partition_time_unit_parse("", &u));
    assert_string_equal(fl_partition_time_unit_name(M), "MONTH");
    bool known;
    fl_tz_t *tz = fl_partition_time_zone(ZONEINFO, "UTC", &known);
    char v[FL_PARTITION_TIME_VALUE_MAX];
    assert_false(fl_partition_time_value(tz, REF_NOW, 8000, Y, v));       /* year 10024 */
    assert_false(fl_partition_time_value(tz, REF_NOW, -2100 * 4, Q, v));  /* before year 1 */
    assert_false(fl_partition_time_value(tz, REF_NOW, INT64_MAX, H, v));
    assert_false(fl_partition_time_value(tz, REF_NOW, INT64_MIN, D, v));
    assert_true(fl_partition_time_value(tz, REF_NOW, 7975, Y, v));
    assert_string_equal(v, "9999");
    fl_tz_free(tz);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units),           cmocka_unit_test(test_time_zones),
        cmocka_unit_test(test_retention_cutoff), cmocka_unit_test(test_boundaries),
        cmocka_unit_test(test_dst),             cmocka_unit_test(test_zone_ids),
        cmocka_unit_test(test_units_parse_and_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
