/*
 * test_replica_tiering.c — tiering rounds of a bucket replica
 * (replica_tiering.h) through a replica manager with remote storage:
 * nothing goes before a rolled segment is durable, rolled segments go up
 * and local ones beyond table.log.tiered.local-segments are deleted only
 * once committed, the earliest offset stays the remote start, a restart
 * reloads the remote log, the local TTL leaves a tiered replica alone,
 * the retain offset (a KV snapshot's) bounds deletion, remote expiry by
 * TTL, a dropped table takes its remote files, and the commit point
 * handed to another (the coordinator's): a refusal leaves no file, an
 * unanswered commit is learnt by the next round from storage; a follower
 * reads the remote log again only when the coordinator told it of a
 * commit it has not read (or told nothing yet).
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
#include <unistd.h>

#include <cmocka.h>

#include "test_tmpdir.h"

#include "batch_builder.h"
#include "common_alloc.h"
#include "common_workq.h"
#include "log_remote_log.h"
#include "replica_manager.h"
#include "replica_tiering.h"

typedef struct env {
    char data[512], remote[512];
    fl_workq_t *workers;
    fl_remote_storage_t *storage;
    fl_replica_manager_t rm;
    fl_replica_t *r;
} env_t;

static void env_start(env_t *e, const char *tmp, bool deferred) {
    snprintf(e->data, sizeof(e->data), "%s/data", tmp);
    snprintf(e->remote, sizeof(e->remote), "%s/remote", tmp);
    fl_error_t err;
    assert_int_equal(fl_remote_storage_fs_new(e->remote, &e->storage, &err), 0);
    fl_log_config_t lc = {700, 150, 7LL * 24 * 3600 * 1000, 1 << 20, false, false, false};
    fl_durability_t d = {INT64_MAX, 0, false};
    e->workers = deferred ? fl_workq_new(1, "t-work") : NULL;
    fl_replica_manager_init(&e->rm, e->data, &lc, &d, e->workers);
    e->rm.remote_storage = e->storage;
    assert_int_equal(fl_replica_manager_open(&e->rm, "db", "t", 9, -1, NULL, 0,
                                             7LL * 24 * 3600 * 1000, &e->r, &err),
                     0);
}

static void env_stop(env_t *e) {
    fl_replica_unref(e->r);
    if (e->workers) fl_workq_destroy(e->workers);
    e->rm.workers = NULL;
    fl_replica_manager_close(&e->rm);
    fl_remote_storage_destroy(e->storage);
}

static void append(fl_replica_t *r, int from, int count, int64_t now) {
    for (int i = from; i < from + count; i++) {
        bb_spec_t s = bb_spec(-1, -1, 3, 150, (uint8_t)i);
        size_t len = 0;
        uint8_t *req = bb_append(NULL, &len, &s);
        fl_replica_append_t res;
        fl_error_t err;
        if (fl_replica_append(r, req, len, now, &res, &err)) fail_msg("append: %s", err.msg);
        free(req);
    }
}

/* The follower's copy of the leader's batches, written straight into its
 * log (fl_replica_append takes client records on a leader only). */
static void append_copy(fl_replica_t *follower, int from, int count, int64_t now) {
    atomic_store(&follower->role, FL_REPLICA_LEADER);
    append(follower, from, count, now);
    atomic_store(&follower->role, FL_REPLICA_FOLLOWER);
}

static size_t local_segments(const env_t *e) {
    char dir[600];
    snprintf(dir, sizeof(dir), "%s/db/t-9/log-0", e->data);
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d))) n += strlen(de->d_name) == 24 && strstr(de->d_name, ".log");
    closedir(d);
    return n;
}

static fl_tier_result_t tier(env_t *e, size_t keep, int64_t ttl, int64_t retain, int64_t now) {
    fl_tier_params_t p = {keep, ttl, retain, NULL, NULL};
    fl_tier_result_t res;
    fl_error_t err;
    if (fl_replica_tier(e->r, &p, now, &res, &err)) fail_msg("tier: %s", err.msg);
    return res;
}

static void test_round_copies_then_deletes(void **state) {
    env_t e;
    env_start(&e, *state, false);
    assert_non_null(e.r->remote);
    append(e.r, 0, 30, 1000);
    size_t segs = e.r->log->segment_count;
    assert_true(segs >= 6);
    assert_int_equal(local_segments(&e), segs);
    fl_tier_result_t res = tier(&e, 2, 0, INT64_MAX, 2000);
    assert_int_equal(res.copied, segs - 1);  /* every rolled segment */
    assert_int_equal(res.deleted, segs - 2); /* two kept, the active one among them */
    assert_int_equal(local_segments(&e), 2);
    assert_int_equal(fl_replica_earliest(e.r), 0);
    assert_int_equal(fl_replica_log_start(e.r), e.r->log->segments[0]->base_offset);
    assert_int_equal(atomic_load(&e.r->remote_end_offset), e.r->log->segments[1]->base_offset);
    /* below the local start, the local log has nothing: the remote log does */
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t err;
    assert_int_equal(fl_replica_read(e.r, 0, 1 << 20, &b, &err),
                     FLUSS_ERR_LOG_OFFSET_OUT_OF_RANGE_EXCEPTION);
    fl_remote_fetch_t f;
    assert_int_equal(fl_remote_log_fetch(e.r->remote, 0, &f, &err), 0);
    assert_int_equal(f.count, segs - 1);
    fl_remote_fetch_free(&f);
    fl_buf_free(&b);
    /* nothing new: the round changes nothing */
    res = tier(&e, 2, 0, INT64_MAX, 2000);
    assert_int_equal(res.copied + res.deleted + res.expired, 0);
    /* more data: only the new rolled segments go */
    size_t before = e.r->log->segment_count;
    append(e.r, 30, 9, 3000);
    size_t rolled = e.r->log->segment_count - before;
    assert_true(rolled >= 1);
    res = tier(&e, 2, 0, INT64_MAX, 4000);
    assert_int_equal(res.copied, rolled);
    assert_int_equal(local_segments(&e), 2);
    /* the local TTL leaves a tiered replica to tiering */
    assert_int_equal(fl_replica_apply_retention(e.r, INT64_MAX / 2, &err), 0);
    assert_int_equal(local_segments(&e), 2);
    int64_t remote_end = atomic_load(&e.r->remote_end_offset);
    env_stop(&e);

    /* a restart: the remote log is there before the first read */
    env_start(&e, *state, false);
    assert_int_equal(fl_replica_earliest(e.r), 0);
    assert_int_equal(atomic_load(&e.r->remote_end_offset), remote_end);
    assert_true(fl_replica_log_start(e.r) > 0);
    assert_int_equal(local_segments(&e), 2);
    env_stop(&e);
}

static void test_durable_before_copied(void **state) {
    env_t e;
    env_start(&e, *state, true); /* server mode: a roll defers its fsync and index */
    append(e.r, 0, 12, 1000);
    size_t segs = e.r->log->segment_count;
    assert_true(segs >= 3);
    assert_true(e.r->log->segments[0]->needs_index);
    /* the round finalises them first (index written, fsynced), then copies */
    uint64_t flushes = atomic_load(&e.r->flushes);
    fl_tier_result_t res = tier(&e, 1, 0, INT64_MAX, 2000);
    assert_true(atomic_load(&e.r->flushes) > flushes);
    assert_int_equal(res.copied, segs - 1);
    assert_int_equal(res.deleted, segs - 1);
    assert_int_equal(e.r->log->segment_count, 1);
    env_stop(&e);
}

static void test_retain_offset_and_expiry(void **state) {
    env_t e;
    env_start(&e, *state, false);
    append(e.r, 0, 30, 1000);
    size_t segs = e.r->log->segment_count;
    int64_t retain = e.r->log->segments[2]->base_offset; /* a KV snapshot's offset */
    fl_tier_result_t res = tier(&e, 1, 0, retain, 2000);
    assert_int_equal(res.copied, segs - 1);
    assert_int_equal(res.deleted, 2); /* the two wholly below the retain offset */
    assert_int_equal(fl_replica_log_start(e.r), retain);
    /* every remote segment is past a 1 s TTL a minute later; the local
     * ones stay, and the earliest offset is local again */
    res = tier(&e, 1, 1000, retain, 60000);
    assert_int_equal(res.expired, segs - 1);
    assert_int_equal(atomic_load(&e.r->remote_start_offset), INT64_MAX);
    assert_int_equal(fl_replica_earliest(e.r), retain);
    env_stop(&e);
}

static void test_drop_takes_remote_files(void **state) {
    env_t e;
    env_start(&e, *state, false);
    append(e.r, 0, 12, 1000);
    tier(&e, 1, 0, INT64_MAX, 2000);
    char tdir[700];
    char *canon = realpath(e.remote, NULL);
    snprintf(tdir, sizeof(tdir), "%s/log/db/t-9/0", canon);
    free(canon);
    assert_int_equal(access(tdir, F_OK), 0);
    fl_error_t err;
    fl_replica_unref(e.r);
    e.r = NULL;
    assert_int_equal(fl_replica_manager_drop_table(&e.rm, "db", "t", 9, &err), 0);
    assert_int_not_equal(access(tdir, F_OK), 0);
    e.rm.workers = NULL;
    fl_replica_manager_close(&e.rm);
    fl_remote_storage_destroy(e.storage);
}

/* A stand-in coordinator: what it does with a commit, and what it asks. */
typedef struct committer {
    fl_remote_storage_t *storage;
    bool write;      /* writes the handle (commits) */
    int answer;      /* then answers this (0: success) */
    int calls;
    int32_t epoch;   /* the leader epoch the last commit came with */
} committer_t;

static int commit_hook(void *ctx, fl_replica_t *r, int32_t epoch, const char *path,
                       int64_t start, int64_t end, fl_error_t *err) {
    committer_t *c = ctx;
    c->calls++;
    c->epoch = epoch;
    (void)start;
    fl_remote_bucket_t b = {"db", "t", NULL, r->table_id, -1, r->bucket};
    if (c->write && fl_remote_log_commit_handle(c->storage, &b, path, end, err)) return err->code;
    return c->answer ? fl_err_set(err, c->answer, "the committer says %d", c->answer) : 0;
}

static int tier_with(env_t *e, committer_t *c, fl_tier_result_t *res, int64_t now) {
    fl_tier_params_t p = {1, 0, INT64_MAX, commit_hook, c};
    fl_error_t err;
    return fl_replica_tier(e->r, &p, now, res, &err);
}

/* Entries of the bucket's remote directory that are segment directories
 * (uuid names) and manifests under metadata/. */
static void remote_files(const env_t *e, size_t *segments, size_t *manifests) {
    char dir[700];
    snprintf(dir, sizeof(dir), "%s/log/db/t-9/0", e->remote);
    *segments = *manifests = 0;
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d))) *segments += strlen(de->d_name) == 36;
    closedir(d);
    snprintf(dir, sizeof(dir), "%s/log/db/t-9/0/metadata", e->remote);
    d = opendir(dir);
    if (!d) return;
    while ((de = readdir(d))) *manifests += strstr(de->d_name, ".manifest") != NULL;
    closedir(d);
}

static void test_commit_refused_leaves_nothing(void **state) {
    env_t e;
    env_start(&e, *state, false);
    append(e.r, 0, 12, 1000);
    size_t segs = e.r->log->segment_count, rs, rm;
    committer_t c = {e.storage, false, FLUSS_ERR_FENCED_LEADER_EPOCH_EXCEPTION, 0, -1};
    fl_tier_result_t res;
    assert_int_equal(tier_with(&e, &c, &res, 2000), FLUSS_ERR_FENCED_LEADER_EPOCH_EXCEPTION);
    assert_int_equal(c.calls, 1);
    assert_int_equal(c.epoch, e.r->leader_epoch);
    assert_int_equal(res.copied + res.deleted, 0);
    assert_int_equal(e.r->log->segment_count, segs);
    assert_int_equal(atomic_load(&e.r->remote_end_offset), -1);
    remote_files(&e, &rs, &rm);
    assert_int_equal(rs, 0); /* the uploads went again */
    assert_int_equal(rm, 0);
    /* accepted: the same round commits */
    c.write = true;
    c.answer = 0;
    assert_int_equal(tier_with(&e, &c, &res, 3000), 0);
    assert_int_equal(res.copied, segs - 1);
    assert_int_equal(res.deleted, segs - 1);
    remote_files(&e, &rs, &rm);
    assert_int_equal(rs, segs - 1);
    assert_int_equal(rm, 1);
    env_stop(&e);
}

static void test_commit_unanswered(void **state) {
    env_t e;
    env_start(&e, *state, false);
    append(e.r, 0, 12, 1000);
    size_t segs = e.r->log->segment_count, rs, rm;
    /* committed, but the answer was lost: nothing is removed, nothing
     * local goes on a commit not known */
    committer_t c = {e.storage, true, FLUSS_ERR_NETWORK_EXCEPTION, 0, -1};
    fl_tier_result_t res;
    assert_int_equal(tier_with(&e, &c, &res, 2000), FLUSS_ERR_NETWORK_EXCEPTION);
    assert_int_equal(res.copied + res.deleted, 0);
    assert_int_equal(e.r->log->segment_count, segs);
    remote_files(&e, &rs, &rm);
    assert_int_equal(rs, segs - 1);
    assert_int_equal(rm, 1);
    /* the next round reads the commit from storage: nothing copied twice */
    c.answer = 0;
    assert_int_equal(tier_with(&e, &c, &res, 3000), 0);
    assert_int_equal(res.copied, 0);
    assert_int_equal(res.deleted, segs - 1);
    assert_int_equal(atomic_load(&e.r->remote_end_offset), e.r->log->segments[0]->base_offset);
    /* not committed and not answered: the next round removes the uploads
     * as orphans and copies again */
    append(e.r, 12, 12, 4000);
    size_t more = e.r->log->segment_count - 1;
    c.write = false;
    c.answer = FLUSS_ERR_NETWORK_EXCEPTION;
    assert_int_equal(tier_with(&e, &c, &res, 5000), FLUSS_ERR_NETWORK_EXCEPTION);
    remote_files(&e, &rs, &rm);
    assert_int_equal(rs, segs - 1 + more);
    assert_int_equal(rm, 2);
    c.write = true;
    c.answer = 0;
    assert_int_equal(tier_with(&e, &c, &res, 6000), 0);
    assert_int_equal(res.copied, more);
    remote_files(&e, &rs, &rm);
    assert_int_equal(rs, segs - 1 + more);
    assert_int_equal(rm, 1);
    fl_remote_fetch_t f;
    fl_error_t err;
    assert_int_equal(fl_remote_log_fetch(e.r->remote, 0, &f, &err), 0);
    assert_int_equal(f.count, segs - 1 + more);
    fl_remote_fetch_free(&f);
    env_stop(&e);
}

/* A second replica of the same bucket (its own data directory, the same
 * remote storage), a follower. */
static void env_start_follower(env_t *e, const char *tmp, fl_remote_storage_t *shared) {
    snprintf(e->data, sizeof(e->data), "%s/data-follower", tmp);
    e->remote[0] = 0;
    e->storage = NULL;
    fl_error_t err;
    fl_log_config_t lc = {700, 150, 7LL * 24 * 3600 * 1000, 1 << 20, false, false, false};
    fl_durability_t d = {INT64_MAX, 0, false};
    e->workers = NULL;
    fl_replica_manager_init(&e->rm, e->data, &lc, &d, NULL);
    e->rm.remote_storage = shared;
    assert_int_equal(fl_replica_manager_open(&e->rm, "db", "t", 9, -1, NULL, 0,
                                             7LL * 24 * 3600 * 1000, &e->r, &err),
                     0);
    atomic_store(&e->r->role, FL_REPLICA_FOLLOWER);
}

static void test_follower_reads_what_it_is_told(void **state) {
    env_t a, b;
    env_start(&a, *state, false);
    env_start_follower(&b, *state, a.storage);
    append(a.r, 0, 12, 1000);
    append_copy(b.r, 0, 12, 1000);
    size_t segs = b.r->log->segment_count;
    /* told nothing yet: every round reads the remote log */
    fl_tier_result_t res = tier(&a, 1, 0, INT64_MAX, 2000);
    assert_int_equal(res.copied, segs - 1);
    res = tier(&b, 1, 0, INT64_MAX, 2000);
    assert_int_equal(res.copied, 0);
    assert_int_equal(res.deleted, segs - 1);
    int64_t end1 = atomic_load(&b.r->remote_end_offset);
    assert_int_equal(end1, atomic_load(&a.r->remote_end_offset));
    /* told what it has: a commit it was not told of is not read */
    atomic_store(&b.r->remote_told_start, 0);
    atomic_store(&b.r->remote_told_end, end1);
    append(a.r, 12, 12, 3000);
    append_copy(b.r, 12, 12, 3000);
    res = tier(&a, 1, 0, INT64_MAX, 4000);
    assert_true(res.copied > 0);
    int64_t end2 = atomic_load(&a.r->remote_end_offset);
    assert_true(end2 > end1);
    res = tier(&b, 1, 0, INT64_MAX, 4000);
    assert_int_equal(res.deleted, 0);
    assert_int_equal(atomic_load(&b.r->remote_end_offset), end1);
    /* told of it: read, and what it covers goes */
    atomic_store(&b.r->remote_told_end, end2);
    res = tier(&b, 1, 0, INT64_MAX, 5000);
    assert_true(res.deleted > 0);
    assert_int_equal(atomic_load(&b.r->remote_end_offset), end2);
    assert_int_equal(b.r->log->segment_count, 1);
    fl_replica_unref(b.r);
    fl_replica_manager_close(&b.rm);
    env_stop(&a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_copies_then_deletes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_durable_before_copied, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retain_offset_and_expiry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drop_takes_remote_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_refused_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_unanswered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_follower_reads_what_it_is_told, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
