/*
 * test_server_ackwait.c — an acks=all write waits for the high watermark
 * of the leadership that appended it (server_ackwait.h): a leader demoted
 * before its followers had the records (a zombie whose ZooKeeper session
 * expired, told it follows the new leader) must not acknowledge them when
 * the high watermark it takes as a follower passes their offsets — the
 * new leader's records, not these. The wait answers NOT_LEADER_OR_FOLLOWER
 * instead; one in the same leadership is acknowledged once covered. A
 * wait that parks after the demotion (its append raced it) is deposed
 * from the start, and a follower takes no client write at all; nor does
 * a replica a request opened before its role was told (FL_REPLICA_UNTOLD).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_tmpdir.h"

#include "batch_builder.h"
#include "replica_manager.h"
#include "replica_replication.h"
#include "server_ackwait.h"

static void append_ok(fl_replica_t *r, int32_t records) {
    bb_spec_t s = bb_spec(-1, -1, records, 64, 7);
    size_t len;
    uint8_t *req = bb_new(&s, &len);
    fl_replica_append_t res;
    fl_error_t err;
    if (fl_replica_append(r, req, len, 1000, &res, &err)) fail_msg("append: %s", err.msg);
    free(req);
}

static void lead(fl_replica_t *r, int32_t epoch) {
    static const int32_t replicas[2] = {0, 1};
    fl_replica_leadership_t l = {.self = 0, .leader_epoch = epoch, .replicas = replicas,
                                 .replica_count = 2, .isr = replicas, .isr_count = 2,
                                 .bucket_epoch = 0, .min_isr = 1, .max_lag_ms = 30000};
    fl_replica_become_leader(r, &l, 0);
}

static void raise_hw(fl_replica_t *r, int64_t hw) {
    pthread_mutex_lock(&r->lock);
    fl_replica_hw_advance_locked(r, hw);
    pthread_mutex_unlock(&r->lock);
}

/* An acks=all wait for r's high watermark to reach hw. */
static void wait_for(fl_ack_wait_t *w, fl_replica_t *r, int64_t hw) {
    memset(w, 0, sizeof(*w));
    fl_ack_wait_init(w, NULL, 1);
    fl_replica_ref(r);
    fl_ack_wait_bucket(w, 0, r, hw, 0);
}

/* A records batch refused with NOT_LEADER_OR_FOLLOWER, r's log unchanged. */
static void append_refused(fl_replica_t *r) {
    int64_t end = fl_replica_log_end(r);
    bb_spec_t s = bb_spec(-1, -1, 3, 64, 7);
    size_t len;
    uint8_t *req = bb_new(&s, &len);
    fl_replica_append_t res;
    fl_error_t err;
    assert_int_equal(fl_replica_append(r, req, len, 1000, &res, &err),
                     FLUSS_ERR_NOT_LEADER_OR_FOLLOWER);
    free(req);
    assert_int_equal(fl_replica_log_end(r), end);
}

/* A replica manager over dir: 1 MiB segments, no flush (a replica's
 * high watermark is its ISR's here). */
static void manager(fl_replica_manager_t *rm, const char *dir) {
    static const fl_log_config_t lc = {1 << 20, 4096, 0, 1 << 20, false, false, false};
    static const fl_durability_t d = {INT64_MAX, 0, false};
    fl_replica_manager_init(rm, dir, &lc, &d, NULL);
}

/* Bucket 0 of table 1, opened (referenced) in `role` if it is not open. */
static fl_replica_t *open_as(fl_replica_manager_t *rm, int role) {
    fl_replica_t *r = NULL;
    fl_error_t err;
    if (fl_replica_manager_open_as(rm, "db", "t", 1, -1, NULL, 0, 0, role, &r, &err))
        fail_msg("open: %s", err.msg);
    return r;
}

static void test_deposed_leader_does_not_acknowledge(void **state) {
    fl_replica_manager_t rm;
    manager(&rm, *state);
    fl_replica_t *r = open_as(&rm, FL_REPLICA_LEADER);
    lead(r, 1);
    append_ok(r, 5); /* the follower has none of it: the high watermark stays */
    assert_int_equal(fl_replica_high_watermark(r), 0);
    fl_ack_wait_t w;
    const char *msg;
    wait_for(&w, r, 5);
    assert_false(fl_ack_wait_ready(&w, 0));
    assert_int_equal(fl_ack_wait_error(&w, 0, "t/o", &msg), FLUSS_ERR_REQUEST_TIME_OUT);
    /* deposed: it follows server 1 in epoch 2, whose high watermark
     * passes offset 5 with records of its own */
    fl_replica_become_follower(r, 1, 2);
    raise_hw(r, 5);
    assert_int_equal(fl_replica_high_watermark(r), 5);
    assert_false(fl_ack_wait_ready(&w, 0));
    assert_int_equal(fl_ack_wait_error(&w, 0, "t/o", &msg), FLUSS_ERR_NOT_LEADER_OR_FOLLOWER);
    fl_ack_wait_release(&w);
    /* leading again, in epoch 3: a write appended now is acknowledged
     * once covered; one from epoch 1 would still not be */
    lead(r, 3);
    append_ok(r, 2);
    wait_for(&w, r, 7);
    assert_false(fl_ack_wait_ready(&w, 0));
    raise_hw(r, 7);
    assert_true(fl_ack_wait_ready(&w, 0));
    assert_int_equal(fl_ack_wait_error(&w, 0, "t/o", &msg), 0);
    fl_ack_wait_release(&w);
    fl_replica_unref(r);
    fl_replica_manager_close(&rm);
}

static void test_demoted_before_the_wait_parks(void **state) {
    fl_replica_manager_t rm;
    manager(&rm, *state);
    fl_replica_t *r = open_as(&rm, FL_REPLICA_LEADER);
    lead(r, 1);
    append_ok(r, 5);
    /* demoted between the append and the wait parking */
    fl_replica_become_follower(r, 1, 2);
    fl_ack_wait_t w;
    const char *msg;
    wait_for(&w, r, 5);
    raise_hw(r, 5); /* the new leader's records reach offset 5 */
    assert_false(fl_ack_wait_ready(&w, 0));
    assert_int_equal(fl_ack_wait_error(&w, 0, "t/o", &msg), FLUSS_ERR_NOT_LEADER_OR_FOLLOWER);
    fl_ack_wait_release(&w);
    /* a follower refuses a client's records and its log stays as it was */
    append_refused(r);
    assert_int_equal(fl_replica_log_end(r), 5);
    fl_replica_unref(r);
    fl_replica_manager_close(&rm);
}

static void test_untold_replica_takes_no_write(void **state) {
    fl_replica_manager_t rm;
    manager(&rm, *state);
    fl_replica_t *r = open_as(&rm, FL_REPLICA_UNTOLD);
    assert_int_equal(fl_replica_role(r), FL_REPLICA_UNTOLD);
    append_refused(r);
    /* a wait parked on it is not acknowledged by any high watermark */
    fl_ack_wait_t w;
    const char *msg;
    wait_for(&w, r, 1);
    assert_int_equal(fl_ack_wait_error(&w, 0, "t/o", &msg), FLUSS_ERR_NOT_LEADER_OR_FOLLOWER);
    fl_ack_wait_release(&w);
    lead(r, 3);
    append_ok(r, 4);
    assert_int_equal(fl_replica_log_end(r), 4);
    /* opening it again keeps the role it was told */
    fl_replica_t *again = open_as(&rm, FL_REPLICA_UNTOLD);
    assert_ptr_equal(again, r);
    assert_int_equal(fl_replica_role(again), FL_REPLICA_LEADER);
    fl_replica_unref(again);
    fl_replica_unref(r);
    /* reopened after a restart, it waits to be told again */
    fl_replica_manager_close(&rm);
    manager(&rm, *state);
    r = open_as(&rm, FL_REPLICA_UNTOLD);
    assert_int_equal(fl_replica_log_end(r), 4);
    append_refused(r);
    fl_replica_become_follower(r, 1, 4);
    append_refused(r);
    fl_replica_unref(r);
    fl_replica_manager_close(&rm);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_deposed_leader_does_not_acknowledge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_demoted_before_the_wait_parks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_untold_replica_takes_no_write, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
