/*
 * test_kv_lease.c — KV snapshot leases (kv_lease.h): acquire, renew, move a
 * bucket to a newer snapshot, release (an emptied lease goes), drop,
 * expiry; what pins a snapshot; the file written at every change read
 * back by a new instance; damaged files refused; and acquires racing pin
 * checks from other threads (run under ThreadSanitizer by make test-tsan).
 */
#define _XOPEN_SOURCE 700
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_tmpdir.h"

#include "common_fs.h"
#include "kv_lease.h"

static void test_acquire_release_expire_persist(void **state) {
    char path[512];
    snprintf(path, sizeof(path), "%s/leases.json", (const char *)*state);
    fl_kv_leases_t *l;
    fl_error_t err;
    assert_int_equal(fl_kv_leases_open(path, &l, &err), 0);
    fl_kv_lease_bucket_t b[3] = {{7, -1, 0, 3}, {7, -1, 1, 4}, {9, 12, 0, 1}};
    assert_int_equal(fl_kv_leases_acquire(l, "reader", 1000, 10000, b, 3, &err), 0);
    assert_true(fl_kv_leases_pinned(l, 7, -1, 0, 3, 10500));
    assert_false(fl_kv_leases_pinned(l, 7, -1, 0, 4, 10500)); /* another snapshot */
    assert_false(fl_kv_leases_pinned(l, 7, 12, 0, 3, 10500)); /* another partition */
    assert_true(fl_kv_leases_pinned(l, 9, 12, 0, 1, 10500));
    assert_false(fl_kv_leases_pinned(l, 7, -1, 0, 3, 11000)); /* expired */
    /* renew and move bucket 0 to snapshot 5 */
    fl_kv_lease_bucket_t mv = {7, -1, 0, 5};
    assert_int_equal(fl_kv_leases_acquire(l, "reader", 5000, 10800, &mv, 1, &err), 0);
    assert_false(fl_kv_leases_pinned(l, 7, -1, 0, 3, 11000));
    assert_true(fl_kv_leases_pinned(l, 7, -1, 0, 5, 15000));
    assert_true(fl_kv_leases_pinned(l, 7, -1, 1, 4, 15000));
    assert_int_equal(fl_kv_leases_count(l), 1);
    /* a second lease; the file holds both */
    fl_kv_lease_bucket_t other = {7, -1, 1, 4};
    assert_int_equal(fl_kv_leases_acquire(l, "flink-job", 60000, 10000, &other, 1, &err), 0);
    fl_kv_leases_close(l);
    assert_int_equal(fl_kv_leases_open(path, &l, &err), 0);
    assert_int_equal(fl_kv_leases_count(l), 2);
    assert_true(fl_kv_leases_pinned(l, 7, -1, 0, 5, 15000));
    /* release bucket 1 of "reader": still pinned by "flink-job" */
    assert_int_equal(fl_kv_leases_release(l, "reader", &other, 1, &err), 0);
    assert_true(fl_kv_leases_pinned(l, 7, -1, 1, 4, 15000));
    assert_int_equal(fl_kv_leases_drop(l, "flink-job", &err), 0);
    assert_false(fl_kv_leases_pinned(l, 7, -1, 1, 4, 15000));
    /* releasing the rest empties "reader": it goes */
    fl_kv_lease_bucket_t rest[2] = {{7, -1, 0, -1}, {9, 12, 0, -1}};
    assert_int_equal(fl_kv_leases_release(l, "reader", rest, 2, &err), 0);
    assert_int_equal(fl_kv_leases_count(l), 0);
    /* unknown ids are no error */
    assert_int_equal(fl_kv_leases_release(l, "nobody", rest, 2, &err), 0);
    assert_int_equal(fl_kv_leases_drop(l, "nobody", &err), 0);
    /* expiry drops what is past its time, and the file follows */
    assert_int_equal(fl_kv_leases_acquire(l, "short", 10, 100, b, 1, &err), 0);
    assert_int_equal(fl_kv_leases_acquire(l, "long", 100000, 100, b, 1, &err), 0);
    assert_int_equal(fl_kv_leases_expire(l, 200), 1);
    /* an acquire drops what has expired by its time too */
    assert_int_equal(fl_kv_leases_acquire(l, "short2", 10, 300, b, 1, &err), 0);
    assert_int_equal(fl_kv_leases_count(l), 2);
    assert_int_equal(fl_kv_leases_acquire(l, "other", 10, 400, b, 1, &err), 0);
    assert_int_equal(fl_kv_leases_count(l), 2); /* "long" and "other"; "short2" gone */
    assert_int_equal(fl_kv_leases_drop(l, "other", &err), 0);
    fl_kv_leases_close(l);
    assert_int_equal(fl_kv_leases_open(path, &l, &err), 0);
    assert_int_equal(fl_kv_leases_count(l), 1);
    /* refusals */
    assert_int_not_equal(fl_kv_leases_acquire(l, "", 10, 0, b, 1, &err), 0);
    assert_int_not_equal(fl_kv_leases_acquire(l, "x", 0, 0, b, 1, &err), 0);
    fl_kv_leases_close(l);
}

static void test_damaged_files_refused(void **state) {
    static const char *bad[] = {
        "", "{", "[]", "{\"version\":2,\"leases\":[]}", "{\"version\":1}",
        "{\"version\":1,\"leases\":[{\"id\":\"a\"}]}",
        "{\"version\":1,\"leases\":[{\"id\":\"\",\"expires_ms\":1,\"buckets\":[]}]}",
        "{\"version\":1,\"leases\":[{\"id\":\"a\",\"expires_ms\":1,\"buckets\":[]},"
        "{\"id\":\"a\",\"expires_ms\":1,\"buckets\":[]}]}",
        "{\"version\":1,\"leases\":[{\"id\":\"a\",\"expires_ms\":1,\"buckets\":[[1,2,3]]}]}",
        "{\"version\":1,\"leases\":[{\"id\":\"a\",\"expires_ms\":1,\"buckets\":[[1,-2,3,4]]}]}",
        "{\"version\":1,\"leases\":[{\"id\":\"a\",\"expires_ms\":1,\"buckets\":[[1,-1,-3,4]]}]}",
        "{\"version\":1,\"leases\":[{\"id\":\"a\",\"expires_ms\":1,\"buckets\":[[1,-1,\"3\",4]]}]}",
    };
    char path[512];
    snprintf(path, sizeof(path), "%s/leases.json", (const char *)*state);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        fl_error_t err;
        assert_int_equal(fl_fs_write_atomic(path, bad[i], strlen(bad[i]), &err), 0);
        fl_kv_leases_t *l = NULL;
        if (fl_kv_leases_open(path, &l, &err) == 0) fail_msg("accepted #%zu: %s", i, bad[i]);
    }
}

typedef struct race {
    fl_kv_leases_t *l;
    atomic_bool stop;
    atomic_long checks;
} race_t;

static void *pin_checker(void *arg) {
    race_t *r = arg;
    while (!atomic_load(&r->stop)) {
        for (int32_t b = 0; b < 8; b++) (void)fl_kv_leases_pinned(r->l, 1, -1, b, b, 50);
        fl_kv_leases_expire(r->l, 10);
        atomic_fetch_add(&r->checks, 1);
    }
    return NULL;
}

static void test_threads(void **state) {
    (void)state;
    race_t r = {0};
    fl_error_t err;
    assert_int_equal(fl_kv_leases_open(NULL, &r.l, &err), 0);
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, pin_checker, &r);
    /* at least 2000 changes, and on until the checkers have run a while
     * beside them (a loaded machine may start them late) */
    for (int i = 0; i < 2000 || atomic_load(&r.checks) < 20; i++) {
        char id[32];
        snprintf(id, sizeof(id), "lease-%d", i % 16);
        fl_kv_lease_bucket_t b = {1, -1, i % 8, i % 8};
        assert_int_equal(fl_kv_leases_acquire(r.l, id, 1000, 0, &b, 1, &err), 0);
        if (i % 3 == 0) assert_int_equal(fl_kv_leases_release(r.l, id, &b, 1, &err), 0);
        if (i % 7 == 0) assert_int_equal(fl_kv_leases_drop(r.l, id, &err), 0);
    }
    atomic_store(&r.stop, true);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    assert_true(atomic_load(&r.checks) > 0);
    fl_kv_leases_close(r.l);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_acquire_release_expire_persist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_files_refused, setup, teardown),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
