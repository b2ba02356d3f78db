/*
 * test_coordinator_auto_partition.c — auto-partitioning passes
 * (coordinator_auto_partition.h) over a real catalog and embedded
 * metastore in a temporary directory, with the clock passed in: the
 * reference's AutoPartitionManagerTest scenarios for every time unit with
 * one and with several partition keys (pre-creation, manual partitions,
 * expiry by string order of the time value), max.partition.num and
 * max.bucket.num, the DAY delay, time zones, and a reopened store going on
 * without duplicates.
 */
#define _GNU_SOURCE
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common_civil.h"
#include "coordinator_auto_partition.h"
#include "metastore.h"

#define ZONEINFO "/usr/share/zoneinfo"

typedef struct fixture {
    char dir[64];
    fl_metastore_t *ms;
    fl_catalog_t cat;
    fl_tz_t *utc;
    fl_auto_partition_env_t env;
    size_t created_calls, dropped_calls;
    char dropped_names[64][16];
    int64_t hold_table; /* may_drop says no for this table (-1: none) */
    size_t may_drop_calls;
} fixture_t;

static const int32_t tablets[] = {0};

static void on_created(void *arg, int64_t table_id) {
    (void)table_id;
    ((fixture_t *)arg)->created_calls++;
}

static void on_dropped(void *arg, const char *db, const char *table, int64_t table_id,
                       const char *partition_name, int64_t partition_id) {
    fixture_t *f = arg;
    (void)db;
    (void)table;
    (void)table_id;
    assert_true(partition_id >= 0);
    if (f->dropped_calls < 64)
        snprintf(f->dropped_names[f->dropped_calls], sizeof(f->dropped_names[0]), "%s",
                 partition_name);
    f->dropped_calls++;
}

static bool on_may_drop(void *arg, int64_t table_id) {
    fixture_t *f = arg;
    f->may_drop_calls++;
    return table_id != f->hold_table;
}

static void open_catalog(fixture_t *f, const fl_table_defaults_t *d) {
    fl_error_t err;
    if (fl_metastore_embedded_open(f->dir, &f->ms, &err)) fail_msg("%s", err.msg);
    if (fl_catalog_init(&f->cat, f->ms, d, tablets, 1, &err)) fail_msg("%s", err.msg);
    f->env.cat = &f->cat;
}

static const fl_table_defaults_t defaults = {.bucket_number = 1,
                                             .replication_factor = 1,
                                             .max_bucket_num = FL_MAX_BUCKET_NUM_DEFAULT,
                                             .max_partition_num = FL_MAX_PARTITION_NUM_DEFAULT};

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int setup(void **state) {
    fixture_t *f = calloc(1, sizeof(*f));
    strcpy(f->dir, "/tmp/fl_autopart_XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    open_catalog(f, &defaults);
    f->utc = fl_tz_fixed(0, "UTC");
    f->hold_table = -1;
    f->env = (fl_auto_partition_env_t){
        &f->cat, ZONEINFO, f->utc, 12345,
        {.created = on_created, .dropped = on_dropped, .may_drop = on_may_drop, .arg = f}};
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture_t *f = *state;
    f->ms->ops->close(f->ms);
    fl_tz_free(f->utc);
    nftw(f->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

/* ---- helpers ---- */

static int64_t create_table(fixture_t *f, const char *name, bool multi, const char *props,
                            int buckets) {
    char *json = NULL;
    if (asprintf(&json,
                 "{\"version\":1,\"schema\":{\"version\":1,\"columns\":["
                 "{\"name\":\"id\",\"data_type\":{\"type\":\"INTEGER\"}},"
                 "{\"name\":\"dt\",\"data_type\":{\"type\":\"STRING\"}},"
                 "{\"name\":\"a\",\"data_type\":{\"type\":\"STRING\"}}]},"
                 "\"partition_key\":%s,\"bucket_key\":[],\"bucket_count\":%d,"
                 "\"properties\":{%s},\"custom_properties\":{}}",
                 multi ? "[\"dt\",\"a\"]" : "[\"dt\"]", buckets, props) < 0)
        abort();
    fl_error_t err;
    if (fl_catalog_create_table(&f->cat, "fluss", name, (const uint8_t *)json, strlen(json), false,
                                &err))
        fail_msg("create %s: %s", name, err.msg);
    free(json);
    return fl_catalog_get_table(&f->cat, "fluss", name, &err)->table_id;
}

static void split(const char *name, const char **values, char buf[2][32]) {
    const char *d = strchr(name, '$');
    if (!d) {
        snprintf(buf[0], 32, "%s", name);
        values[0] = buf[0];
        return;
    }
    snprintf(buf[0], 32, "%.*s", (int)(d - name), name);
    snprintf(buf[1], 32, "%s", d + 1);
    values[0] = buf[0];
    values[1] = buf[1];
}

static void manual(fixture_t *f, const char *table, bool multi, const char *name, bool create) {
    const char *keys[2] = {"dt", "a"}, *values[2];
    char buf[2][32];
    split(name, values, buf);
    fl_error_t err;
    int64_t dropped;
    int rc = create ? fl_catalog_create_partition(&f->cat, "fluss", table, keys, values,
                                                  multi ? 2 : 1, false, &err)
                    : fl_catalog_drop_partition(&f->cat, "fluss", table, keys, values,
                                                multi ? 2 : 1, false, &dropped, &err);
    if (rc) fail_msg("%s %s: %s", create ? "create" : "drop", name, err.msg);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The table's partition names, sorted and joined by ' '. */
static void names(fixture_t *f, const char *table, char *out, size_t cap) {
    fl_error_t err;
    const fl_ms_table_t *t = fl_catalog_get_table(&f->cat, "fluss", table, &err);
    assert_non_null(t);
    const char **v = calloc(t->partition_count + 1, sizeof(*v));
    for (size_t i = 0; i < t->partition_count; i++) v[i] = t->partitions[i].name;
    qsort(v, t->partition_count, sizeof(*v), cmp_str);
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < t->partition_count; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? " " : "", v[i]);
    free(v);
}

static void expect_names(fixture_t *f, const char *table, const char *want) {
    char got[2048];
    names(f, table, got, sizeof(got));
    if (strcmp(got, want) != 0) fail_msg("%s: got [%s], want [%s]", table, got, want);
}

static int64_t utc_ms(int64_t y, int mo, int d, int h) {
    fl_civil_t c = {y, mo, d, h, 0, 0};
    return fl_civil_to_seconds(&c) * 1000;
}

/* java.time's plusMonths/plusDays/plus(hours) on a UTC instant */
static int64_t advance(int64_t ms, int months, int days, int hours) {
    fl_civil_t c;
    fl_civil_from_seconds(ms / 1000, &c);
    fl_civil_add_months(&c, months);
    return (fl_civil_to_seconds(&c) + (int64_t)days * 86400 + (int64_t)hours * 3600) * 1000;
}

/* ---- the reference's scenarios ---- */

typedef struct scenario {
    const char *unit;
    bool multi;
    const char *created;        /* after the pass at CREATE TABLE */
    const char *manual_create;  /* then created by hand ... */
    const char *manual_drop;    /* ... and dropped by hand */
    int adv1[3];                /* months, days, hours */
    const char *after1;
    int adv2[3];
    const char *after2;
} scenario_t;

static const scenario_t scenarios[] = {
    {"HOUR", false, "2024091001 2024091002 2024091003 2024091004", "2024091006", "2024091001",
     {0, 0, 3}, "2024091002 2024091003 2024091004 2024091005 2024091006 2024091007",
     {0, 0, 2}, "2024091004 2024091005 2024091006 2024091007 2024091008 2024091009"},
    {"HOUR", true, "",
     "2024091001$A 2024091001$B 2024091001$C 2024091002$A 2024091002$B 2024091003$A "
     "2024091004$A 2024091005$A",
     "2024091002$A", {0, 0, 3}, "2024091002$B 2024091003$A 2024091004$A 2024091005$A",
     {0, 0, 2}, "2024091004$A 2024091005$A"},
    {"DAY", false, "20240910 20240911 20240912 20240913", "20240915", "20240910", {0, 3, 23},
     "20240911 20240912 20240913 20240914 20240915 20240916", {0, 2, 0},
     "20240913 20240914 20240915 20240916 20240917 20240918"},
    {"DAY", true, "",
     "20240910$A 20240910$B 20240910$C 20240911$A 20240911$B 20240912$A 20240913$A 20240914$A",
     "20240911$A", {0, 3, 23}, "20240911$B 20240912$A 20240913$A 20240914$A", {0, 2, 0},
     "20240913$A 20240914$A"},
    {"MONTH", false, "202409 202410 202411 202412", "202502", "202409", {3, 0, 0},
     "202410 202411 202412 202501 202502 202503", {2, 0, 0},
     "202412 202501 202502 202503 202504 202505"},
    {"MONTH", true, "",
     "202409$A 202409$B 202409$C 202410$A 202410$B 202411$A 202412$A 202413$A", "202410$A",
     {3, 0, 0}, "202410$B 202411$A 202412$A 202413$A", {2, 0, 0}, "202412$A 202413$A"},
    {"QUARTER", false, "20243 20244 20251 20252", "20254", "20243", {9, 0, 0},
     "20244 20251 20252 20253 20254 20261", {6, 0, 0}, "20252 20253 20254 20261 20262 20263"},
    {"QUARTER", true, "", "20243$A 20243$B 20243$C 20244$A 20244$B 20251$A 20252$A 20253$B 20254$C",
     "20243$A", {9, 0, 0}, "20244$A 20244$B 20251$A 20252$A 20253$B 20254$C", {6, 0, 0},
     "20252$A 20253$B 20254$C"},
    {"YEAR", false, "2024 2025 2026 2027", "2029", "2024", {36, 0, 0},
     "2025 2026 2027 2028 2029 2030", {24, 0, 0}, "2027 2028 2029 2030 2031 2032"},
    {"YEAR", true, "", "2024$A 2024$B 2024$C 2025$A 2025$B 2026$A 2027$B 2028$C", "2025$B",
     {36, 0, 0}, "2025$A 2026$A 2027$B 2028$C", {24, 0, 0}, "2027$B 2028$C"},
};

static void for_each_name(const char *list, fixture_t *f, const char *table, bool multi,
                          bool create) {
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
        manual(f, table, multi, tok, create);
}

static void test_reference_scenarios(void **state) {
    fixture_t *f = *state;
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        const scenario_t *s = &scenarios[i];
        char table[32], props[512];
        snprintf(table, sizeof(table), "t%zu", i);
        snprintf(props, sizeof(props),
                 "\"table.auto-partition.enabled\":\"true\","
                 "\"table.auto-partition.time-unit\":\"%s\","
                 "\"table.auto-partition.num-precreate\":\"%d\","
                 "\"table.auto-partition.num-retention\":\"2\","
                 "\"table.auto-partition.time-zone\":\"UTC\"%s",
                 s->unit, s->multi ? 0 : 4, s->multi ? ",\"table.auto-partition.key\":\"dt\"" : "");
        int64_t id = create_table(f, table, s->multi, props, 1);
        int64_t now = utc_ms(2024, 9, 10, s->unit[0] == 'H' ? 1 : 0);
        fl_auto_partition_stats_t st = {0};
        fl_auto_partition_table(&f->env, id, now, true, &st);
        expect_names(f, table, s->created);
        for_each_name(s->manual_create, f, table, s->multi, true);
        for_each_name(s->manual_drop, f, table, s->multi, false);
        now = advance(now, s->adv1[0], s->adv1[1], s->adv1[2]);
        fl_auto_partition_all(&f->env, now, &st);
        expect_names(f, table, s->after1);
        now = advance(now, s->adv2[0], s->adv2[1], s->adv2[2]);
        fl_auto_partition_all(&f->env, now, &st);
        expect_names(f, table, s->after2);
        /* the same instant again changes nothing */
        fl_auto_partition_stats_t again = {0};
        fl_auto_partition_all(&f->env, now, &again);
        expect_names(f, table, s->after2);
        assert_int_equal(again.created + again.dropped + again.refused, 0);
        fl_error_t err;
        assert_int_equal(fl_catalog_drop_table(&f->cat, "fluss", table, false, &err), 0);
    }
}

/* testMaxPartitions: max.partition.num 10, no expiry, 4 pre-created, 4 far
 * future ones by hand; 4d23h later only two more fit. */
static void test_max_partitions(void **state) {
    fixture_t *f = *state;
    f->cat.defaults.max_partition_num = 10;
    int64_t id = create_table(f, "maxp", false,
                              "\"table.auto-partition.enabled\":\"true\","
                              "\"table.auto-partition.num-precreate\":\"4\","
                              "\"table.auto-partition.num-retention\":\"-1\","
                              "\"table.auto-partition.time-zone\":\"UTC\"",
                              1);
    int64_t now = utc_ms(2024, 9, 10, 0);
    fl_auto_partition_stats_t st = {0};
    fl_auto_partition_table(&f->env, id, now, true, &st);
    expect_names(f, "maxp", "20240910 20240911 20240912 20240913");
    assert_int_equal(st.created, 4);
    assert_int_equal(f->created_calls, 1); /* one push for the pass */
    for_each_name("20250101 20250102 20250103 20250104", f, "maxp", false, true);
    memset(&st, 0, sizeof(st));
    fl_auto_partition_all(&f->env, advance(now, 0, 4, 23), &st);
    expect_names(f, "maxp",
                 "20240910 20240911 20240912 20240913 20240914 20240915 20250101 20250102 "
                 "20250103 20250104");
    assert_int_equal(st.created, 2);
    assert_int_equal(st.refused, 1); /* 20240916: stopped there */
    assert_int_equal(st.dropped, 0);
}

/* max.bucket.num counts the buckets of all partitions with the new one. */
static void test_max_buckets(void **state) {
    fixture_t *f = *state;
    f->cat.defaults.max_bucket_num = 7;
    int64_t id = create_table(f, "maxb", false,
                              "\"table.auto-partition.enabled\":\"true\","
                              "\"table.auto-partition.time-unit\":\"HOUR\","
                              "\"table.auto-partition.num-precreate\":\"5\","
                              "\"table.auto-partition.time-zone\":\"UTC\"",
                              2);
    fl_auto_partition_stats_t st = {0};
    fl_auto_partition_table(&f->env, id, utc_ms(2024, 9, 10, 22), true, &st);
    expect_names(f, "maxb", "2024091022 2024091023 2024091100");
    assert_int_equal(st.created, 3);
    assert_int_equal(st.refused, 1);
    /* an hour later the oldest is still retained (7 by default): no room */
    memset(&st, 0, sizeof(st));
    fl_auto_partition_all(&f->env, utc_ms(2024, 9, 10, 23), &st);
    assert_int_equal(st.created, 0);
    assert_int_equal(st.refused, 1);
}

/* DAY tables are checked "delay" minutes late except right after CREATE
 * TABLE; the delay is fixed per table and below 23 hours. */
static void test_day_delay(void **state) {
    fixture_t *f = *state;
    for (int64_t t = 0; t < 5000; t++) {
        int d = fl_auto_partition_day_delay_minutes(99, t);
        assert_true(d >= 0 && d < FL_AUTO_PARTITION_DAY_DELAY_MINUTES);
        assert_int_equal(d, fl_auto_partition_day_delay_minutes(99, t));
    }
    int64_t id = create_table(f, "day", false,
                              "\"table.auto-partition.enabled\":\"true\","
                              "\"table.auto-partition.num-precreate\":\"1\","
                              "\"table.auto-partition.time-zone\":\"UTC\"",
                              1);
    int delay = fl_auto_partition_day_delay_minutes(f->env.day_delay_seed, id);
    int64_t now = utc_ms(2024, 9, 10, 0);
    fl_auto_partition_stats_t st = {0};
    fl_auto_partition_table(&f->env, id, now, true, &st); /* forced: no delay */
    expect_names(f, "day", "20240910");
    /* just after midnight: tomorrow's partition waits for the delay */
    int64_t next = utc_ms(2024, 9, 11, 0) + 60000;
    fl_auto_partition_all(&f->env, next, &st);
    expect_names(f, "day", delay >= 1 ? "20240910" : "20240910 20240911");
    fl_auto_partition_all(&f->env, next + (int64_t)delay * 60000, &st);
    expect_names(f, "day", "20240910 20240911");
    /* at 23:00 every delay has passed */
    fl_auto_partition_all(&f->env, utc_ms(2024, 9, 12, 23), &st);
    expect_names(f, "day", "20240910 20240911 20240912");
}

/* The table's zone decides the names; tables without one use the server's. */
static void test_time_zones(void **state) {
    fixture_t *f = *state;
    int64_t sh = create_table(f, "sh", false,
                              "\"table.auto-partition.enabled\":\"true\","
                              "\"table.auto-partition.time-unit\":\"HOUR\","
                              "\"table.auto-partition.time-zone\":\"Asia/Shanghai\"",
                              1);
    int64_t srv = create_table(f, "srv", false,
                               "\"table.auto-partition.enabled\":\"true\","
                               "\"table.auto-partition.time-unit\":\"DAY\"",
                               1);
    int64_t bad = create_table(f, "bad", false,
                               "\"table.auto-partition.enabled\":\"true\","
                               "\"table.auto-partition.time-unit\":\"HOUR\","
                               "\"table.auto-partition.num-precreate\":\"1\","
                               "\"table.auto-partition.time-zone\":\"UTC+8\"",
                               1);
    fl_tz_t *ny = NULL;
    fl_error_t err;
    assert_int_equal(fl_tz_load(ZONEINFO, "America/New_York", &ny, &err), 0);
    f->env.default_tz = ny;
    int64_t now = utc_ms(2024, 11, 11, 2); /* 10:00 in Shanghai, the 10th in New York */
    fl_auto_partition_stats_t st = {0};
    fl_auto_partition_table(&f->env, sh, now, true, &st);
    fl_auto_partition_table(&f->env, srv, now, true, &st);
    fl_auto_partition_table(&f->env, bad, now, true, &st);
    expect_names(f, "sh", "2024111110 2024111111");
    expect_names(f, "srv", "20241110 20241111");
    expect_names(f, "bad", "2024111102"); /* not a Java zone id: GMT */
    f->env.default_tz = f->utc;
    fl_tz_free(ny);
}

/* Nothing is kept between passes: a reopened store goes on, no duplicates. */
static void test_reopen_goes_on(void **state) {
    fixture_t *f = *state;
    int64_t id = create_table(f, "re", false,
                              "\"table.auto-partition.enabled\":\"true\","
                              "\"table.auto-partition.time-unit\":\"HOUR\","
                              "\"table.auto-partition.num-precreate\":\"3\","
                              "\"table.auto-partition.num-retention\":\"1\","
                              "\"table.auto-partition.time-zone\":\"UTC\"",
                              1);
    int64_t now = utc_ms(2024, 9, 10, 5);
    fl_auto_partition_stats_t st = {0};
    fl_auto_partition_table(&f->env, id, now, true, &st);
    expect_names(f, "re", "2024091005 2024091006 2024091007");
    f->ms->ops->close(f->ms);
    open_catalog(f, &defaults);
    memset(&st, 0, sizeof(st));
    fl_auto_partition_all(&f->env, now, &st);
    assert_int_equal(st.created + st.dropped, 0);
    expect_names(f, "re", "2024091005 2024091006 2024091007");
    f->dropped_calls = 0;
    fl_auto_partition_all(&f->env, now + 2 * 3600 * 1000, &st);
    expect_names(f, "re", "2024091006 2024091007 2024091008 2024091009");
    assert_int_equal(f->dropped_calls, 1);
    assert_string_equal(f->dropped_names[0], "2024091005");
}

/* may_drop holding a table back keeps its expired partitions (counted
 * waiting, asked once per pass, not per partition) and still creates the
 * new ones; once it lets go the next pass drops them all. */
static void test_may_drop_holds(void **state) {
    fixture_t *f = *state;
    int64_t id = create_table(f, "held", false,
                              "\"table.auto-partition.enabled\":\"true\","
                              "\"table.auto-partition.time-unit\":\"HOUR\","
                              "\"table.auto-partition.num-precreate\":\"2\","
                              "\"table.auto-partition.num-retention\":\"1\","
                              "\"table.auto-partition.time-zone\":\"UTC\"",
                              1);
    int64_t now = utc_ms(2024, 9, 10, 5);
    fl_auto_partition_stats_t st = {0};
    fl_auto_partition_table(&f->env, id, now, true, &st);
    expect_names(f, "held", "2024091005 2024091006");
    f->hold_table = id;
    f->may_drop_calls = 0;
    memset(&st, 0, sizeof(st));
    fl_auto_partition_all(&f->env, now + 3 * 3600 * 1000, &st); /* 05 and 06 expired */
    assert_int_equal(st.dropped, 0);
    assert_int_equal(st.waiting, 2);
    assert_int_equal(f->may_drop_calls, 1);
    expect_names(f, "held", "2024091005 2024091006 2024091008 2024091009");
    f->hold_table = -1;
    memset(&st, 0, sizeof(st));
    fl_auto_partition_all(&f->env, now + 3 * 3600 * 1000, &st);
    assert_int_equal(st.dropped, 2);
    assert_int_equal(st.waiting, 0);
    expect_names(f, "held", "2024091008 2024091009");
}

/* Tables that are not auto-partitioned are left alone; options are read
 * with the reference's defaults; a damaged option skips the table. */
static void test_options(void **state) {
    fixture_t *f = *state;
    fl_auto_partition_strategy_t s;
    fl_error_t err;
    assert_int_equal(fl_auto_partition_strategy_read("{\"properties\":{}}", &s, &err), 0);
    assert_false(s.enabled);
    assert_int_equal(s.unit, FL_PARTITION_TIME_DAY);
    assert_int_equal(s.num_precreate, 2);
    assert_int_equal(s.num_retention, 7);
    assert_null(s.key);
    assert_null(s.time_zone);
    fl_auto_partition_strategy_clear(&s);
    assert_int_equal(fl_auto_partition_strategy_read(
                         "{\"properties\":{\"table.auto-partition.enabled\":\"TRUE\","
                         "\"table.auto-partition.time-unit\":\"quarter\","
                         "\"table.auto-partition.num-precreate\":\" 5 \","
                         "\"table.auto-partition.num-retention\":\"-1\","
                         "\"table.auto-partition.key\":\"dt\","
                         "\"table.auto-partition.time-zone\":\"Asia/Tokyo\"}}",
                         &s, &err),
                     0);
    assert_true(s.enabled);
    assert_int_equal(s.unit, FL_PARTITION_TIME_QUARTER);
    assert_int_equal(s.num_precreate, 5);
    assert_int_equal(s.num_retention, -1);
    assert_string_equal(s.key, "dt");
    assert_string_equal(s.time_zone, "Asia/Tokyo");
    fl_auto_partition_strategy_clear(&s);
    const char *bad[] = {"{\"properties\":{\"table.auto-partition.time-unit\":\"WEEK\"}}",
                         "{\"properties\":{\"table.auto-partition.num-precreate\":\"x\"}}",
                         "{\"properties\":{\"table.auto-partition.num-retention\":\"9999999999\"}}",
                         "{\"properties\":{\"table.auto-partition.enabled\":true}}",
                         "{}", "not json"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(fl_auto_partition_strategy_read(bad[i], &s, &err), FLUSS_ERR__CORRUPT);
    /* a partitioned table without auto partitioning, and a log table */
    create_table(f, "manual", false, "", 1);
    fl_auto_partition_stats_t st = {0};
    fl_auto_partition_all(&f->env, utc_ms(2024, 9, 10, 0), &st);
    expect_names(f, "manual", "");
    assert_int_equal(st.created + st.dropped + st.refused, 0);
    /* a table that is gone is no work */
    fl_auto_partition_table(&f->env, 424242, utc_ms(2024, 9, 10, 0), true, &st);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reference_scenarios, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_partitions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_buckets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_day_delay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_time_zones, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopen_goes_on, setup, teardown),
        cmocka_unit_test_setup_teardown(test_may_drop_holds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_options, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
