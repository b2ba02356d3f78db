/*
 * test_coordinator_election.c — a bucket's leader and ISR when tablet
 * servers go and come back (coordinator_election.h): the first live
 * in-sync replica in assignment order leads, the ISR never empties, a
 * bucket without a leader gets its last in-sync replica back, and a
 * server outside the ISR is never elected.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "coordinator_election.h"

static fl_ms_bucket_t bucket(int32_t leader, int32_t epoch, int32_t a, int32_t b, int32_t c) {
    fl_ms_bucket_t k;
    memset(&k, 0, sizeof(k));
    k.leader = leader;
    k.leader_epoch = epoch;
    k.replica_count = 3;
    k.replicas[0] = a;
    k.replicas[1] = b;
    k.replicas[2] = c;
    return k; /* isr_count 0: every replica in sync */
}

static void assert_isr(const fl_ms_bucket_t *b, int32_t n, const int32_t *want) {
    int32_t got_n;
    const int32_t *got = fl_ms_bucket_isr(b, &got_n);
    assert_int_equal(got_n, n);
    for (int32_t i = 0; i < n; i++) assert_int_equal(got[i], want[i]);
}

static void test_leader_goes(void **state) {
    (void)state;
    fl_ms_bucket_t b = bucket(2, 4, 2, 0, 1), out;
    int32_t live[] = {0, 1};
    assert_true(fl_election_server_down(&b, 2, live, 2, &out));
    assert_int_equal(out.leader, 0); /* assignment order after the leader */
    assert_int_equal(out.leader_epoch, 5);
    assert_isr(&out, 2, (int32_t[]){0, 1});
    assert_int_equal(out.replica_count, 3); /* replicas never change */
}

static void test_follower_goes(void **state) {
    (void)state;
    fl_ms_bucket_t b = bucket(2, 4, 2, 0, 1), out;
    int32_t live[] = {2, 1};
    assert_true(fl_election_server_down(&b, 0, live, 2, &out));
    assert_int_equal(out.leader, 2);
    assert_int_equal(out.leader_epoch, 4); /* the leader stays: same epoch */
    assert_isr(&out, 2, (int32_t[]){2, 1});
    /* a server that holds no replica changes nothing */
    assert_false(fl_election_server_down(&b, 7, live, 2, &out));
}

static void test_only_in_sync_replicas_lead(void **state) {
    (void)state;
    fl_ms_bucket_t b = bucket(0, 1, 0, 1, 2), out;
    b.isr_count = 2; /* 1 fell out */
    b.isr[0] = 0;
    b.isr[1] = 2;
    int32_t live[] = {1, 2};
    assert_true(fl_election_server_down(&b, 0, live, 2, &out));
    assert_int_equal(out.leader, 2);
    assert_isr(&out, 1, (int32_t[]){2});
    /* 2 goes too: the ISR keeps its last member, nobody leads */
    fl_ms_bucket_t out2;
    int32_t live2[] = {1};
    assert_true(fl_election_server_down(&out, 2, live2, 1, &out2));
    assert_int_equal(out2.leader, -1);
    assert_isr(&out2, 1, (int32_t[]){2});
    /* 1 comes back: not in sync, not elected; 2 comes back: leads */
    fl_ms_bucket_t out3;
    assert_false(fl_election_server_up(&out2, 1, &out3));
    assert_true(fl_election_server_up(&out2, 2, &out3));
    assert_int_equal(out3.leader, 2);
    assert_int_equal(out3.leader_epoch, out2.leader_epoch + 1);
    /* a bucket with a leader is left alone */
    assert_false(fl_election_server_up(&out3, 1, &out2));
}

static void test_set_leader_bumps_bucket_epoch(void **state) {
    (void)state;
    fl_ms_bucket_t stored = bucket(0, 0, 0, 1, 2), next;
    int32_t live[] = {1, 2};
    assert_true(fl_election_server_down(&stored, 0, live, 2, &next));
    fl_ms_bucket_set_leader(&stored, &next);
    assert_int_equal(stored.leader, 1);
    assert_int_equal(stored.leader_epoch, 1);
    assert_int_equal(stored.bucket_epoch, 1);
    assert_isr(&stored, 2, (int32_t[]){1, 2});
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leader_goes),
        cmocka_unit_test(test_follower_goes),
        cmocka_unit_test(test_only_in_sync_replicas_lead),
        cmocka_unit_test(test_set_leader_bumps_bucket_epoch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
