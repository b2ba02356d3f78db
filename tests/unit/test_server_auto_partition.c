/*
 * test_server_auto_partition.c — the coordinator's auto-partition
 * scheduler (server_auto_partition.h) in an in-process local cluster: the
 * test clock file's syntax, the pass after CREATE TABLE, periodic passes
 * following the clock file, dropped partitions' directories removed on the
 * tablet server, and a clean stop while the thread waits.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common_time.h"
#include "server_auto_partition.h"
#include "server_local.h"

#include "test_tmpdir.h"

static void test_clock_parse(void **state) {
    (void)state;
    struct {
        const char *text;
        int ok;
        int64_t ms;
    } cases[] = {
        {"1725946200000", 1, 1725946200000LL}, {" 1725946200000\n", 1, 1725946200000LL},
        {"-5", 1, -5},                           {"0", 1, 0},
        {"9223372036854775807", 1, INT64_MAX},  {"", 0, 0},
        {"\n", 0, 0},                            {"-", 0, 0},
        {"12a", 0, 0},                           {"1 2", 0, 0},
        {"+5", 0, 0},                            {"92233720368547758070", 0, 0},
        {"0x10", 0, 0},
        /* 19 digits past INT64_MAX: refused, not wrapped (fuzz_auto_partition_clock) */
        {"9223372036854775808", 0, 0},           {"9999999999999999999", 0, 0},
        {"-9223372036854775808", 0, 0},          {"-9223372036854775807", 1, -INT64_MAX},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t ms = -1;
        fl_error_t err;
        int rc = fl_auto_partition_clock_parse(cases[i].text, strlen(cases[i].text), &ms, &err);
        if ((rc == 0) != cases[i].ok || (rc == 0 && ms != cases[i].ms))
            fail_msg("'%s': rc %d ms %lld", cases[i].text, rc, (long long)ms);
    }
}

static void set_clock(const char *path, int64_t ms) {
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fprintf(f, "%lld\n", (long long)ms);
    fclose(f);
    assert_int_equal(rename(tmp, path), 0);
}

/* The table's partition names joined in store order, read under the lock. */
static void names(fl_coordinator_server_t *cs, char *out, size_t cap, int64_t *ids) {
    pthread_mutex_lock(&cs->lock);
    const fl_ms_table_t *t = cs->ms->ops->table_get(cs->ms, "fluss", "hourly");
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; t && i < t->partition_count; i++) {
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? " " : "", t->partitions[i].name);
        if (ids) ids[i] = t->partitions[i].partition_id;
    }
    pthread_mutex_unlock(&cs->lock);
}

static void wait_names(fl_coordinator_server_t *cs, const char *want) {
    char got[512];
    int64_t deadline = fl_time_mono_ms() + 10000;
    for (;;) {
        names(cs, got, sizeof(got), NULL);
        if (strcmp(got, want) == 0) return;
        if (fl_time_mono_ms() > deadline) fail_msg("partitions [%s], want [%s]", got, want);
        usleep(5000);
    }
}

static bool dir_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_scheduler(void **state) {
    const char *dir = *state;
    fl_coordinator_config_t cc;
    fl_tablet_config_t tc[1];
    fl_local_test_config(dir, 1, &cc, tc);
    cc.auto_partition_interval_ms = 20;
    snprintf(cc.auto_partition_clock_file, sizeof(cc.auto_partition_clock_file), "%s/clock", dir);
    const int64_t t0 = 1725946200000LL; /* 2024-09-10T05:30:00Z */
    set_clock(cc.auto_partition_clock_file, t0);
    fl_local_cluster_t lc;
    fl_error_t err;
    assert_int_equal(fl_local_cluster_new(&cc, tc, 1, &lc, &err), 0);
    assert_int_equal(fl_local_cluster_start(&lc, &err), 0);
    fl_coordinator_server_t *cs = lc.cs;

    /* CREATE TABLE's path: catalog, push, then the pass */
    const char *json =
        "{\"version\":1,\"schema\":{\"version\":1,\"columns\":["
        "{\"name\":\"id\",\"data_type\":{\"type\":\"INTEGER\"}},"
        "{\"name\":\"dt\",\"data_type\":{\"type\":\"STRING\"}}]},"
        "\"partition_key\":[\"dt\"],\"bucket_key\":[],\"bucket_count\":1,"
        "\"properties\":{\"table.auto-partition.enabled\":\"true\","
        "\"table.auto-partition.time-unit\":\"HOUR\","
        "\"table.auto-partition.num-precreate\":\"2\","
        "\"table.auto-partition.num-retention\":\"1\","
        "\"table.auto-partition.time-zone\":\"UTC\"},\"custom_properties\":{}}";
    pthread_mutex_lock(&cs->lock);
    assert_int_equal(fl_catalog_create_table(&cs->catalog, "fluss", "hourly", (const uint8_t *)json,
                                             strlen(json), false, &err),
                     0);
    int64_t table_id = cs->ms->ops->table_get(cs->ms, "fluss", "hourly")->table_id;
    fl_coordinator_server_table_changed(cs, table_id);
    fl_auto_partitioner_table_created(cs->auto_partitioner, table_id);
    pthread_mutex_unlock(&cs->lock);
    fl_coordinator_server_push_flush(cs); /* as the DDL's dispatch does */
    char got[512];
    int64_t ids[8];
    names(cs, got, sizeof(got), ids);
    assert_string_equal(got, "2024091005 2024091006");
    char old_dir[4400];
    snprintf(old_dir, sizeof(old_dir), "%s/tablet-server-0/fluss/hourly-%lld/2024091005-p%lld", dir,
             (long long)table_id, (long long)ids[0]);
    assert_true(dir_exists(old_dir));

    /* the periodic passes follow the clock file */
    set_clock(cc.auto_partition_clock_file, t0 + 2 * 3600 * 1000);
    wait_names(cs, "2024091006 2024091007 2024091008");
    /* the pass tells the tablet server (STOP_REPLICA) after the store */
    for (int i = 0; i < 500 && dir_exists(old_dir); i++) usleep(10000);
    assert_false(dir_exists(old_dir));
    /* an unreadable clock skips passes */
    FILE *f = fopen(cc.auto_partition_clock_file, "w");
    fputs("soon", f);
    fclose(f);
    usleep(100000);
    names(cs, got, sizeof(got), NULL);
    assert_string_equal(got, "2024091006 2024091007 2024091008");
    /* stopping while the thread waits returns at once */
    int64_t before = fl_time_mono_ms();
    fl_local_cluster_destroy(&lc);
    assert_true(fl_time_mono_ms() - before < 5000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_parse),
        cmocka_unit_test_setup_teardown(test_scheduler, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
