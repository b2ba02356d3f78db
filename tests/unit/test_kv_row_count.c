/*
 * test_kv_row_count.c — a kv tablet's row count (Fluss's KvTablet rowCount,
 * what GET_TABLE_STATS answers for a primary-key bucket) over a real
 * replica and RocksDB: inserts, updates and deletes (of present and of
 * missing keys, in one batch and across batches), partial deletes, merge
 * engines and inserted lookup keys move it exactly; it survives a clean
 * close, a crash (memtables lost, changelog replayed), a restart of the
 * whole bucket, a store whose rows ran ahead of its committed offset, a
 * store without a stored count (counted once), a stored count that does
 * not match its rows (never trusted below zero), a snapshot restore; the
 * durable flush mode counts changes still in the pre-write buffer below
 * the high watermark; a WAL changelog image keeps no count.
 */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "test_tmpdir.h"
#include "test_kv_util.h"

#include "common_fs.h"
#include "common_time.h"
#include "kv_snapshot.h"
#include "kv_store.h"

static int64_t rows_of(env_t *e) {
    int64_t n = -1;
    fl_error_t err;
    int rc = fl_kv_tablet_row_count(e->kt, &n, &err);
    if (rc) fail_msg("row count: %s", err.msg);
    return n;
}

/* The count a store holds on disk (the tablet closed). */
static int64_t stored_rows(env_t *e, int64_t *applied) {
    fl_kv_store_t *st;
    fl_error_t err;
    if (fl_kv_store_open(e->kvdir, NULL, &st, &err)) fail_msg("store open: %s", err.msg);
    int64_t n = fl_kv_store_row_count(st);
    if (applied) *applied = fl_kv_store_applied_offset(st);
    fl_kv_store_close(st, false);
    return n;
}

/* Rewrites the store's committed pair (no rows change): what a crash
 * between the rows' flush and the meta family's leaves behind, or a store
 * written before the count existed (rows FL_KV_ROW_COUNT_UNKNOWN). */
static void set_stored_pair(env_t *e, int64_t applied, int64_t rows) {
    fl_kv_store_t *st;
    fl_error_t err;
    if (fl_kv_store_open(e->kvdir, NULL, &st, &err)) fail_msg("store open: %s", err.msg);
    fl_kv_write_t *w = fl_kv_write_new();
    assert_int_equal(fl_kv_store_commit(st, w, applied, rows, &err), 0);
    fl_kv_write_destroy(w);
    fl_kv_store_close(st, true);
}

/* The whole bucket stopped and started again: log and kv reopened. */
static void env_restart(env_t *e) {
    fl_kv_tablet_close(e->kt, false);
    fl_replica_unref(e->r);
    fl_replica_manager_close(&e->rm);
    fl_log_config_t lc = {1 << 20, 4096, 0, 1 << 20, false, false, false};
    fl_durability_t d = {INT64_MAX, 0, false};
    fl_replica_manager_init(&e->rm, e->dir, &lc, &d, e->workers);
    fl_error_t err;
    assert_int_equal(fl_replica_manager_open(&e->rm, "db", "t", 1, -1, NULL, 0, 0, &e->r, &err), 0);
    env_open_kv(e);
}

static void test_inserts_updates_deletes(void **state) {
    env_t *e = env_new(*state);
    assert_int_equal(rows_of(e), 0);
    op_t a[] = {{1, "a", 1, false}, {2, "b", 2, false}, {3, "c", 3, false}};
    put_ok(e, a, 3);
    assert_int_equal(rows_of(e), 3);
    op_t u[] = {{2, "b2", 20, false}, {1, "a2", 10, false}}; /* updates: no change */
    put_ok(e, u, 2);
    assert_int_equal(rows_of(e), 3);
    op_t d[] = {{3, NULL, 0, true}};
    put_ok(e, d, 1);
    assert_int_equal(rows_of(e), 2);
    op_t missing[] = {{3, NULL, 0, true}, {99, NULL, 0, true}}; /* nothing to delete */
    put_ok(e, missing, 2);
    assert_int_equal(rows_of(e), 2);
    /* one batch: a key inserted and deleted, another inserted and updated,
     * a third deleted and inserted again */
    op_t mix[] = {{5, "e", 5, false}, {5, NULL, 0, true}, {6, "f", 6, false},
                  {6, "f2", 60, false}, {1, NULL, 0, true}, {1, "a3", 11, false}};
    put_ok(e, mix, 6);
    assert_int_equal(rows_of(e), 3); /* 1, 2, 6 */
    assert_int_equal(look(e, 5, NULL, 0), -1);
    assert_int_equal(look(e, 6, NULL, 0), 60);
    assert_int_equal(look(e, 1, NULL, 0), 11);
    /* everything went through the buffer to RocksDB, count included */
    assert_int_equal(e->kt->pw.entries, 0);
    fl_kv_tablet_close(e->kt, false);
    assert_int_equal(stored_rows(e, NULL), 3);
    env_open_kv(e);
    assert_int_equal(rows_of(e), 3);
    /* a refused put changes nothing */
    fl_kv_appended_t res;
    fl_error_t err;
    int32_t no_pk[] = {2};
    op_t p[] = {{7, "g", 7, false}};
    assert_int_equal(put_ops(e, p, 1, no_pk, 1, &res, &err), FLUSS_ERR_INVALID_TARGET_COLUMN);
    assert_int_equal(rows_of(e), 3);
    env_free(e);
}

static void test_partial_deletes_engines_inserted_keys(void **state) {
    env_t *e = env_new(*state);
    op_t a[] = {{1, "keep", 1, false}};
    put_ok(e, a, 1);
    fl_kv_appended_t res;
    fl_error_t err;
    /* a partial delete that leaves a column: the row stays */
    int32_t id_score[] = {0, 2}, id_name[] = {0, 1};
    op_t d[] = {{1, NULL, 0, true}};
    assert_int_equal(put_ops(e, d, 1, id_score, 2, &res, &err), 0);
    assert_int_equal(rows_of(e), 1);
    assert_int_equal(look(e, 1, NULL, 0), -2);
    /* ... and one that leaves nothing: it goes */
    assert_int_equal(put_ops(e, d, 1, id_name, 2, &res, &err), 0);
    assert_int_equal(rows_of(e), 0);
    assert_int_equal(look(e, 1, NULL, 0), -1);
    /* a partial update of a new key adds it */
    op_t p[] = {{2, NULL, 7, false}};
    assert_int_equal(put_ops(e, p, 1, id_score, 2, &res, &err), 0);
    assert_int_equal(rows_of(e), 1);
    /* first_row: the second write of a key and deletes change nothing */
    e->t.engine = FL_KV_ENGINE_FIRST_ROW;
    e->t.delete_behavior = FL_KV_DELETE_IGNORE;
    op_t f[] = {{3, "first", 1, false}, {3, "second", 2, false}, {2, NULL, 0, true}};
    put_ok(e, f, 3);
    assert_int_equal(rows_of(e), 2);
    /* versioned: an older version is dropped, a newer one replaces */
    e->t.engine = FL_KV_ENGINE_VERSIONED;
    e->t.version_col = 2;
    op_t v[] = {{4, "v5", 5, false}, {4, "v3", 3, false}, {4, "v6", 6, false}};
    put_ok(e, v, 3);
    assert_int_equal(rows_of(e), 3);
    e->t.engine = FL_KV_ENGINE_LAST_ROW;
    e->t.delete_behavior = FL_KV_DELETE_ALLOW;
    e->t.version_col = -1;
    /* LOOKUP's inserts of missing keys: only the missing ones count */
    fl_buf_t k[3], row;
    fl_buf_init(&row);
    fl_kv_key_t kk[3];
    int32_t ids[3] = {2, 8, 9};
    for (int i = 0; i < 3; i++) {
        fl_buf_init(&k[i]);
        encode(e, ids[i], NULL, 0, &k[i], &row);
        kk[i] = (fl_kv_key_t){k[i].data, k[i].len};
    }
    assert_int_equal(fl_kv_tablet_insert_keys(e->kt, &e->t, kk, 3, NULL, 1000, &res, &err), 0);
    assert_int_equal(rows_of(e), 5);
    for (int i = 0; i < 3; i++) fl_buf_free(&k[i]);
    fl_buf_free(&row);
    /* all of it replayed from the log alone: the same count */
    fl_kv_tablet_close(e->kt, true);
    assert_int_equal(fl_fs_remove_tree(e->kvdir, &err), 0);
    env_open_kv(e);
    assert_int_equal(rows_of(e), 5);
    env_free(e);
}

/* Clean close, crash (RocksDB holding a prefix of the writes, rows and
 * pair alike: the changelog replays the rest), a restart of the whole
 * bucket, the store rebuilt from the log alone. */
static void test_restart_crash_replay(void **state) {
    env_t *e = env_new(*state);
    int64_t model[KEYS];
    for (int i = 0; i < KEYS; i++) model[i] = -1;
    unsigned seed = 3;
    random_ops(e, model, &seed, 30);
    assert_int_equal(rows_of(e), model_rows(model));
    fl_kv_tablet_close(e->kt, false);
    env_open_kv(e);
    assert_int_equal(e->kt->recovered_records, 0);
    assert_int_equal(rows_of(e), model_rows(model));
    char prefix[700];
    snprintf(prefix, sizeof(prefix), "%s/prefix", e->dir);
    int64_t off, rows;
    fl_error_t err;
    assert_int_equal(fl_kv_tablet_checkpoint(e->kt, prefix, &off, &rows, &err), 0);
    assert_int_equal(rows, model_rows(model));
    random_ops(e, model, &seed, 30);
    fl_kv_tablet_close(e->kt, true);
    assert_int_equal(fl_fs_remove_tree(e->kvdir, &err), 0);
    assert_int_equal(rename(prefix, e->kvdir), 0);
    env_open_kv(e);
    assert_true(e->kt->recovered_records > 0);
    assert_int_equal(rows_of(e), model_rows(model));
    assert_model(e, model);
    random_ops(e, model, &seed, 10);
    env_restart(e);
    assert_int_equal(rows_of(e), model_rows(model));
    assert_model(e, model);
    fl_kv_tablet_close(e->kt, true);
    assert_int_equal(fl_fs_remove_tree(e->kvdir, &err), 0);
    env_open_kv(e);
    assert_int_equal(rows_of(e), model_rows(model));
    env_free(e);
}

/* The rows of a store may run ahead of the offset committed beside them
 * (a crash between the flushes of the two column families): the replay
 * from the older pair moves the older count by the changelog and lands on
 * the exact count, not on the rows counted twice. */
static void test_rows_ahead_of_committed_pair(void **state) {
    env_t *e = env_new(*state);
    int64_t model[KEYS];
    for (int i = 0; i < KEYS; i++) model[i] = -1;
    unsigned seed = 5;
    random_ops(e, model, &seed, 20);
    int64_t mid_offset = fl_replica_log_end(e->r), mid_rows = model_rows(model);
    random_ops(e, model, &seed, 20);
    fl_kv_tablet_close(e->kt, false);
    set_stored_pair(e, mid_offset, mid_rows);
    env_open_kv(e);
    assert_true(e->kt->recovered_records > 0);
    assert_int_equal(rows_of(e), model_rows(model));
    assert_model(e, model);
    env_free(e);
}

/* A store without a count (written before there was one; a snapshot of
 * one): counted once at open, then kept — with the offset current and
 * with a changelog to replay after it. */
static void test_store_without_count(void **state) {
    env_t *e = env_new(*state);
    int64_t model[KEYS];
    for (int i = 0; i < KEYS; i++) model[i] = -1;
    unsigned seed = 9;
    random_ops(e, model, &seed, 20);
    int64_t mid_offset = fl_replica_log_end(e->r);
    fl_kv_tablet_close(e->kt, false);
    int64_t applied = 0;
    set_stored_pair(e, mid_offset, FL_KV_ROW_COUNT_UNKNOWN);
    assert_int_equal(stored_rows(e, &applied), FL_KV_ROW_COUNT_UNKNOWN);
    assert_int_equal(applied, mid_offset);
    env_open_kv(e);
    assert_int_equal(rows_of(e), model_rows(model));
    fl_kv_tablet_close(e->kt, false);
    assert_int_equal(stored_rows(e, NULL), model_rows(model)); /* stored by the count */
    env_open_kv(e);
    random_ops(e, model, &seed, 20);
    fl_kv_tablet_close(e->kt, false);
    set_stored_pair(e, mid_offset, FL_KV_ROW_COUNT_UNKNOWN); /* and a replay after it */
    env_open_kv(e);
    assert_true(e->kt->recovered_records > 0);
    assert_int_equal(rows_of(e), model_rows(model));
    assert_model(e, model);
    env_free(e);
}

/* A stored count that does not belong to the rows (a store put together
 * from parts of different states) is never trusted below zero: a replay
 * that would take it there counts the keys instead, a live write that
 * would do it makes the count unavailable until the next open counts. */
static void test_mismatched_count_recounted(void **state) {
    env_t *e = env_new(*state);
    op_t ins[] = {{1, "a", 1, false}, {2, "b", 2, false}, {3, "c", 3, false}};
    put_ok(e, ins, 3);
    int64_t after_insert = fl_replica_log_end(e->r);
    op_t del[] = {{1, NULL, 0, true}, {2, NULL, 0, true}};
    put_ok(e, del, 2);
    fl_kv_tablet_close(e->kt, false);
    set_stored_pair(e, after_insert, 0); /* it was 3 there */
    env_open_kv(e);
    assert_int_equal(rows_of(e), 1);
    /* live: a count of 0 for a bucket holding a row, then a delete */
    fl_kv_tablet_close(e->kt, false);
    set_stored_pair(e, fl_replica_log_end(e->r), 0);
    env_open_kv(e);
    op_t d3[] = {{3, NULL, 0, true}};
    put_ok(e, d3, 1);
    int64_t n = 0;
    fl_error_t err;
    assert_int_equal(fl_kv_tablet_row_count(e->kt, &n, &err), FLUSS_ERR_KV_STORAGE_EXCEPTION);
    put_ok(e, ins, 3); /* writes go on */
    fl_kv_tablet_close(e->kt, false);
    assert_int_equal(stored_rows(e, NULL), FL_KV_ROW_COUNT_UNKNOWN);
    env_open_kv(e);
    assert_int_equal(rows_of(e), 3);
    env_free(e);
}

/* A snapshot records the count at its offset (the checkpoint holds it
 * beside the offset); restored, the changelog after it moves it on. */
static void test_snapshot_restore(void **state) {
    env_t *e = env_new(*state);
    char remote[700];
    snprintf(remote, sizeof(remote), "%s/remote/kv/db/t-1/0", e->dir);
    fl_error_t err;
    assert_int_equal(fl_kv_tablet_set_remote(e->kt, remote, &err), 0);
    int64_t model[KEYS];
    for (int i = 0; i < KEYS; i++) model[i] = -1;
    unsigned seed = 13;
    random_ops(e, model, &seed, 30);
    int64_t snap_rows = model_rows(model);
    bool taken = false;
    assert_int_equal(fl_kv_tablet_snapshot(e->kt, 1000, 1, NULL, &taken, &err), 0);
    assert_true(taken);
    fl_kv_snapshot_t s;
    assert_int_equal(fl_kv_snapshot_read(remote, 0, &s, &err), 0);
    assert_int_equal(s.row_count, snap_rows);
    fl_kv_snapshot_free(&s);
    random_ops(e, model, &seed, 30);
    fl_kv_tablet_close(e->kt, false);
    assert_int_equal(fl_fs_remove_tree(e->kvdir, &err), 0);
    assert_int_equal(fl_kv_snapshot_restore(remote, 0, e->kvdir, &err), 0);
    assert_int_equal(stored_rows(e, NULL), snap_rows); /* the checkpoint's own */
    env_open_kv(e);
    assert_true(e->kt->recovered_records > 0);
    assert_int_equal(rows_of(e), model_rows(model));
    assert_model(e, model);
    env_free(e);
}

/* Waits (10 s at most) for the high watermark to reach the log end. */
static void wait_hw(env_t *e) {
    int64_t deadline = fl_time_mono_ms() + 10000;
    while (fl_replica_high_watermark(e->r) < fl_replica_log_end(e->r)) {
        assert_true(fl_time_mono_ms() < deadline);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

/* log.flush.mode sync: the high watermark moves after the fsync, so a
 * put's changes wait in the pre-write buffer; the count includes those
 * below the high watermark and none above it. */
static void test_durable_mode_counts_buffer(void **state) {
    env_t *e = env_new_with(*state, true);
    op_t a[] = {{1, "a", 1, false}, {2, "b", 2, false}};
    put_ok(e, a, 2);
    wait_hw(e);
    assert_true(e->kt->pw.entries > 0); /* not in RocksDB yet */
    assert_int_equal(rows_of(e), 2);
    op_t d[] = {{1, NULL, 0, true}, {3, "c", 3, false}, {4, "d", 4, false}};
    put_ok(e, d, 3);
    wait_hw(e);
    assert_int_equal(rows_of(e), 3);
    assert_int_equal(fl_kv_tablet_flush_hw(e->kt, &(fl_error_t){0}), 0);
    assert_int_equal(e->kt->pw.entries, 0);
    assert_int_equal(rows_of(e), 3);
    env_free(e);
}

/* table.changelog.image WAL: no count kept (Fluss refuses the same way);
 * the store holds none, and a table back to FULL counts its keys. */
static void test_wal_image_keeps_no_count(void **state) {
    env_t *e = env_new(*state);
    op_t a[] = {{1, "a", 1, false}};
    put_ok(e, a, 1);
    fl_kv_tablet_close(e->kt, false);
    e->t.changelog_wal = true;
    env_open_kv(e);
    op_t b[] = {{2, "b", 2, false}, {1, "a2", 3, false}};
    put_ok(e, b, 2);
    int64_t n = 7;
    fl_error_t err;
    assert_int_equal(fl_kv_tablet_row_count(e->kt, &n, &err), FLUSS_ERR_INVALID_TABLE_EXCEPTION);
    assert_non_null(strstr(err.msg, "WAL"));
    assert_int_equal(n, 7);
    fl_kv_tablet_close(e->kt, false);
    assert_int_equal(stored_rows(e, NULL), FL_KV_ROW_COUNT_UNKNOWN);
    e->t.changelog_wal = false;
    env_open_kv(e);
    assert_int_equal(rows_of(e), 2);
    env_free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_inserts_updates_deletes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partial_deletes_engines_inserted_keys, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_restart_crash_replay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rows_ahead_of_committed_pair, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_without_count, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mismatched_count_recounted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_restore, setup, teardown),
        cmocka_unit_test_setup_teardown(test_durable_mode_counts_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wal_image_keeps_no_count, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
