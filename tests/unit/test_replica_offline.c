/*
 * test_replica_offline.c — fail-stop of a bucket replica (replica.h) under
 * storage faults injected through the file-system seam
 * (common_vfs_fault.h): a failed fsync in the durable mode leaves the
 * high watermark where it was (the append is never acknowledged), a failed
 * flush for log.flush.interval-messages leaves the flushed offset, a failed
 * write refuses the append, a failed writer snapshot or index of a rolled
 * segment fails its flush — each takes the replica offline for good
 * (later appends and flushes refuse, nothing is retried), tells the
 * watermark hook so that waiting requests answer, and keeps reads below
 * the high watermark working. A reopen without faults recovers the log.
 * A failed open (a leader-epoch checkpoint that cannot be written, the
 * recovery's fsync of what a crash left) keeps the bucket offline until a
 * restart, and leaves no checkpoint file behind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_tmpdir.h"

#include "batch_builder.h"
#include "common_log.h"
#include "common_vfs.h"
#include "common_vfs_fault.h"
#include "common_workq.h"
#include "replica_manager.h"

typedef struct fixture {
    fl_replica_manager_t rm;
    fl_workq_t *workers;
    atomic_int notified;
    atomic_int notified_offline;
} fixture_t;

static void on_watermark(void *ctx, fl_replica_t *r) {
    fixture_t *f = ctx;
    atomic_fetch_add(&f->notified, 1);
    if (fl_replica_offline(r)) atomic_fetch_add(&f->notified_offline, 1);
}

static fl_replica_t *start(fixture_t *f, const char *dir, uint64_t segment_bytes,
                           fl_durability_t d, bool workers) {
    memset(f, 0, sizeof(*f));
    fl_log_config_t lc = {segment_bytes, 4096, 0, 1 << 20, false, false, false};
    f->workers = workers ? fl_workq_new(1, "t-work") : NULL;
    fl_replica_manager_init(&f->rm, dir, &lc, &d, f->workers);
    fl_replica_manager_set_watermark_hook(&f->rm, on_watermark, f);
    fl_replica_t *r = NULL;
    fl_error_t err;
    if (fl_replica_manager_open(&f->rm, "db", "t", 1, -1, NULL, 0, 0, &r, &err))
        fail_msg("open: %s", err.msg);
    return r;
}

static void stop(fixture_t *f, fl_replica_t *r) {
    fl_replica_unref(r);
    if (f->workers) fl_workq_destroy(f->workers);
    f->rm.workers = NULL;
    fl_replica_manager_close(&f->rm);
}

static fl_vfs_fault_t *faults(const char *dir, const char *what) {
    char spec[4300];
    snprintf(spec, sizeof(spec), "rate=1,%s,path=%s", what, dir);
    fl_vfs_fault_config_t cfg;
    fl_error_t err;
    if (fl_vfs_fault_parse(spec, &cfg, &err)) fail_msg("%s", err.msg);
    fl_vfs_fault_t *vf = fl_vfs_fault_new(&cfg);
    fl_vfs_install(fl_vfs_fault_ops(), vf);
    return vf;
}

static void faults_off(fl_vfs_fault_t *vf) {
    fl_vfs_install(NULL, NULL);
    fl_vfs_fault_free(vf);
}

static int append(fl_replica_t *r, int32_t records, size_t payload, fl_replica_append_t *res,
                  fl_error_t *err) {
    bb_spec_t s = bb_spec(-1, -1, records, payload, 7);
    size_t len;
    uint8_t *req = bb_new(&s, &len);
    int rc = fl_replica_append(r, req, len, 1000, res, err);
    free(req);
    return rc;
}

static void append_ok(fl_replica_t *r, int32_t records) {
    fl_replica_append_t res;
    fl_error_t err;
    if (append(r, records, 64, &res, &err)) fail_msg("append: %s", err.msg);
}

/* Whole batches read from 0 cover exactly [0, want). */
static void expect_readable(fl_replica_t *r, int64_t want) {
    fl_buf_t out;
    fl_buf_init(&out);
    fl_error_t err;
    assert_int_equal(fl_replica_read(r, 0, 1 << 20, &out, &err), 0);
    int64_t next = 0;
    size_t pos = 0;
    while (pos < out.len) {
        size_t n;
        fl_batch_view_t v;
        assert_int_equal(fl_batch_peek_size(out.data + pos, out.len - pos, 1 << 20, &n, &err), 0);
        assert_int_equal(fl_batch_parse(out.data + pos, n, &v, &err), 0);
        assert_int_equal(v.base_offset, next);
        next = fl_batch_last_offset(&v) + 1;
        pos += n;
    }
    assert_int_equal(next, want);
    fl_buf_free(&out);
}

static int64_t reopened_end(const char *dir) {
    fixture_t f;
    fl_replica_t *r = start(&f, dir, 1 << 20, (fl_durability_t){INT64_MAX, 0, false}, false);
    assert_false(fl_replica_offline(r));
    int64_t end = fl_replica_log_end(r);
    append_ok(r, 1); /* and it takes writes again */
    assert_int_equal(fl_replica_log_end(r), end + 1);
    stop(&f, r);
    return end;
}

static void test_sync_mode_failed_fsync_is_never_acknowledged(void **state) {
    const char *dir = *state;
    fixture_t f;
    fl_replica_t *r = start(&f, dir, 1 << 20, (fl_durability_t){INT64_MAX, 0, true}, false);
    append_ok(r, 2); /* flushed inline: durable and visible */
    assert_int_equal(fl_replica_high_watermark(r), 2);
    fl_vfs_fault_t *vf = faults(dir, "ops=fsync");
    fl_replica_append_t res;
    fl_error_t err;
    /* the write lands, its fsync fails: the high watermark stays */
    assert_int_equal(append(r, 3, 64, &res, &err), 0);
    assert_int_equal(res.end_offset, 5);
    assert_true(fl_replica_offline(r));
    assert_int_equal(fl_replica_log_end(r), 5);
    assert_int_equal(fl_replica_high_watermark(r), 2);
    assert_int_equal(fl_replica_flushed(r), 2);
    assert_true(atomic_load(&f.notified_offline) >= 1);
    /* fail-stop: no retried fsync, no later append */
    int notified = atomic_load(&f.notified);
    assert_int_equal(fl_replica_flush(r, &err), FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    assert_true(atomic_load(&f.notified) > notified);
    assert_int_equal(append(r, 1, 64, &res, &err), FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    fl_vfs_fault_stats_t st;
    fl_vfs_fault_get_stats(vf, &st);
    assert_int_equal(st.injected[FL_VFS_FAULT_FSYNC], 1);
    faults_off(vf);
    assert_int_equal(fl_replica_flush(r, &err), FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    assert_int_equal(fl_replica_high_watermark(r), 2);
    expect_readable(r, 2);
    stop(&f, r);
    /* the unacknowledged batch was in the page cache: recovery keeps it */
    assert_int_equal(reopened_end(dir), 5);
}

static void test_flush_interval_failure_leaves_flushed_offset(void **state) {
    const char *dir = *state;
    fixture_t f;
    fl_replica_t *r = start(&f, dir, 1 << 20, (fl_durability_t){1, 0, false}, false);
    append_ok(r, 1);
    assert_int_equal(fl_replica_flushed(r), 1);
    fl_vfs_fault_t *vf = faults(dir, "ops=fsync,errno=ENOSPC");
    fl_replica_append_t res;
    fl_error_t err;
    assert_int_equal(append(r, 1, 64, &res, &err), 0);
    assert_int_equal(res.durable_wait_offset, 2); /* the answer waits for this... */
    assert_int_equal(fl_replica_flushed(r), 1);   /* ...which never comes */
    assert_true(fl_replica_offline(r));
    faults_off(vf);
    expect_readable(r, 2); /* async: the high watermark moved at the append */
    stop(&f, r);
    assert_int_equal(reopened_end(dir), 2);
}

static void test_failed_write_refuses_the_append(void **state) {
    const char *dir = *state;
    fixture_t f;
    fl_replica_t *r = start(&f, dir, 1 << 20, (fl_durability_t){INT64_MAX, 0, false}, false);
    append_ok(r, 4);
    fl_vfs_fault_t *vf = faults(dir, "ops=write,errno=EIO+ENOSPC");
    fl_replica_append_t res;
    fl_error_t err;
    assert_int_equal(append(r, 2, 3000, &res, &err), FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    assert_true(fl_replica_offline(r));
    assert_int_equal(atomic_load(&f.notified_offline), 1);
    assert_int_equal(fl_replica_log_end(r), 4);
    faults_off(vf);
    /* no write is tried again, with or without faults */
    assert_int_equal(append(r, 1, 64, &res, &err), FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    expect_readable(r, 4);
    stop(&f, r);
    assert_int_equal(reopened_end(dir), 4); /* a torn tail, if any, is cut at open */
}

static void test_failed_segment_finalisation_takes_offline(void **state) {
    const char *dir = *state;
    fixture_t f;
    /* workers: rolls defer the index and writer snapshot to the next flush */
    fl_replica_t *r = start(&f, dir, 1024, (fl_durability_t){INT64_MAX, 0, false}, true);
    fl_replica_append_t res;
    fl_error_t err;
    for (int i = 0; i < 6; i++) assert_int_equal(append(r, 1, 400, &res, &err), 0);
    assert_true(r->log->segment_count > 1); /* two batches a segment */
    /* the index and snapshot files go through temp + rename */
    fl_vfs_fault_t *vf = faults(dir, "ops=rename");
    assert_int_equal(fl_replica_flush(r, &err), FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    assert_true(fl_replica_offline(r));
    assert_int_equal(fl_replica_flushed(r), 0);
    faults_off(vf);
    assert_int_equal(append(r, 1, 64, &res, &err), FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    expect_readable(r, 6);
    stop(&f, r);
    assert_int_equal(reopened_end(dir), 6);
}

static void test_failed_epoch_checkpoint_fails_the_open(void **state) {
    const char *dir = *state;
    fl_vfs_fault_t *vf = faults(dir, "ops=fsync");
    fl_replica_manager_t rm;
    fl_log_config_t lc = {1 << 20, 4096, 0, 1 << 20, false, false, false};
    fl_replica_manager_init(&rm, dir, &lc, &(fl_durability_t){INT64_MAX, 0, false}, NULL);
    fl_replica_t *r = NULL;
    fl_error_t err;
    assert_int_not_equal(fl_replica_manager_open(&rm, "db", "t", 1, -1, NULL, 0, 0, &r, &err), 0);
    assert_null(r);
    char path[4300];
    snprintf(path, sizeof(path), "%s/db/t-1/log-0/leader-epoch-checkpoint", dir);
    assert_int_not_equal(access(path, F_OK), 0);
    faults_off(vf);
    /* offline until a restart: no open is retried in this process */
    assert_int_equal(fl_replica_manager_open(&rm, "db", "t", 1, -1, NULL, 0, 0, &r, &err),
                     FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    assert_non_null(strstr(err.msg, "until the server restarts"));
    /* other buckets are not concerned */
    assert_int_equal(fl_replica_manager_open(&rm, "db", "t", 1, -1, NULL, 1, 0, &r, &err), 0);
    fl_replica_unref(r);
    fl_replica_manager_close(&rm);
    /* the restart: the bucket opens and gets its checkpoint */
    fl_replica_manager_init(&rm, dir, &lc, &(fl_durability_t){INT64_MAX, 0, false}, NULL);
    assert_int_equal(fl_replica_manager_open(&rm, "db", "t", 1, -1, NULL, 0, 0, &r, &err), 0);
    assert_int_equal(access(path, F_OK), 0);
    fl_replica_unref(r);
    fl_replica_manager_close(&rm);
}

static void test_failed_recovery_fsync_is_not_retried(void **state) {
    /* a bucket reopened after a crash fsyncs what the crash left in the
     * page cache before serving it; when that fsync fails the bucket stays
     * offline — a second open whose fsync "succeeds" proves nothing */
    const char *dir = *state;
    fixture_t f;
    fl_replica_t *r = start(&f, dir, 1 << 20, (fl_durability_t){INT64_MAX, 0, false}, true);
    append_ok(r, 3);
    stop(&f, r);
    fl_vfs_fault_t *vf = faults(dir, "ops=fsync");
    memset(&f, 0, sizeof(f));
    fl_log_config_t lc = {1 << 20, 4096, 0, 1 << 20, false, false, false};
    f.workers = fl_workq_new(1, "t-work"); /* server mode: the open fsyncs the active segment */
    fl_replica_manager_init(&f.rm, dir, &lc, &(fl_durability_t){INT64_MAX, 0, false}, f.workers);
    fl_error_t err;
    r = NULL;
    assert_int_equal(fl_replica_manager_open(&f.rm, "db", "t", 1, -1, NULL, 0, 0, &r, &err),
                     FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    faults_off(vf);
    assert_int_equal(fl_replica_manager_open(&f.rm, "db", "t", 1, -1, NULL, 0, 0, &r, &err),
                     FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    fl_workq_destroy(f.workers);
    f.rm.workers = NULL;
    fl_replica_manager_close(&f.rm);
    assert_int_equal(reopened_end(dir), 3);
}

int main(void) {
    fl_log_set_level(FL_LOG_ERROR); /* the injector's WARN line per fault */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sync_mode_failed_fsync_is_never_acknowledged, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_flush_interval_failure_leaves_flushed_offset, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_failed_write_refuses_the_append, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_segment_finalisation_takes_offline, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_failed_epoch_checkpoint_fails_the_open, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_failed_recovery_fsync_is_not_retried, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
