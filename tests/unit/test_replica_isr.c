/*
 * test_replica_isr.c — the leader's ISR bookkeeping (replica_isr.h) on a
 * simulated clock: a bucket of three replicas (min ISR 2, max lag 10 s)
 * whose followers stop and resume (reliability.md D3: the ISR shrinks
 * after the max lag, acks=all is refused below min ISR, the high
 * watermark never passes a replica that may be in the ISR, a follower
 * that caught up rejoins), the slow-follower rule, and proposals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "replica_isr.h"

#define LAG 10000

static void start(fl_isr_t *s, int64_t now) {
    const int32_t replicas[3] = {1, 2, 3};
    fl_isr_init(s, 1, 5, 100, replicas, 3, replicas, 3, 2, LAG, now);
}

static void test_stop_shrink_rejoin(void **state) {
    (void)state;
    fl_isr_t s;
    int64_t now = 1000, leo = 100, hw = 100;
    start(&s, now);
    assert_int_equal(s.isr_count, 3);
    assert_int_equal(s.follower_count, 2);
    /* followers not heard from yet: the high watermark waits for them */
    leo = 110;
    assert_int_equal(fl_isr_high_watermark(&s, leo, hw), 100);
    fl_isr_on_fetch(&s, 2, 110, leo, now);
    fl_isr_on_fetch(&s, 3, 105, leo, now);
    hw = fl_isr_high_watermark(&s, leo, hw);
    assert_int_equal(hw, 105);
    fl_isr_on_fetch(&s, 3, 110, leo, now);
    hw = fl_isr_high_watermark(&s, leo, hw);
    assert_int_equal(hw, 110);

    /* follower 3 stops; the leader appends, follower 2 keeps up */
    int32_t out[FL_ISR_REPLICAS_MAX];
    for (int i = 0; i < 12; i++) {
        now += 1000;
        leo += 10;
        fl_isr_on_fetch(&s, 2, leo, leo, now);
        hw = fl_isr_high_watermark(&s, leo, hw);
        assert_int_equal(hw, 110); /* held by 3 */
        size_t n = fl_isr_out_of_sync(&s, leo, now, out);
        if (now - 1000 <= LAG) assert_int_equal(n, 0); /* within the max lag */
    }
    size_t n = fl_isr_out_of_sync(&s, leo, now, out);
    assert_int_equal(n, 1);
    assert_int_equal(out[0], 3);
    assert_true(fl_isr_propose(&s, out, n, NULL, 0));
    /* in flight: 3 still counts; no second proposal */
    assert_int_equal(fl_isr_high_watermark(&s, leo, hw), 110);
    assert_false(fl_isr_propose(&s, out, n, NULL, 0));
    assert_int_equal(fl_isr_out_of_sync(&s, leo, now, out), 0);
    const int32_t shrunk[2] = {1, 2};
    fl_isr_complete(&s, shrunk, 2);
    assert_false(fl_isr_contains(&s, 3));
    hw = fl_isr_high_watermark(&s, leo, hw);
    assert_int_equal(hw, leo);
    assert_true(fl_isr_enough_for_acks_all(&s));

    /* follower 2 stops too: below min ISR, acks=all refused, hw frozen */
    int64_t frozen_leo = leo;
    now += LAG + 1;
    leo += 10;
    n = fl_isr_out_of_sync(&s, leo, now, out);
    assert_int_equal(n, 1);
    assert_int_equal(out[0], 2);
    assert_true(fl_isr_propose(&s, out, n, NULL, 0));
    const int32_t alone[1] = {1};
    fl_isr_complete(&s, alone, 1);
    assert_false(fl_isr_enough_for_acks_all(&s));
    leo += 10;
    assert_int_equal(fl_isr_high_watermark(&s, leo, hw), hw);
    assert_int_equal(hw, frozen_leo);

    /* follower 3 resumes: behind the hw it may not join; at it, it may */
    fl_isr_on_fetch(&s, 3, 115, leo, now);
    assert_false(fl_isr_may_join(&s, 3, hw));
    fl_isr_on_fetch(&s, 3, hw, leo, now);
    assert_true(fl_isr_may_join(&s, 3, hw));
    const int32_t join[1] = {3};
    assert_true(fl_isr_propose(&s, NULL, 0, join, 1));
    assert_false(fl_isr_may_join(&s, 3, hw)); /* in flight */
    /* being added, it already holds the high watermark back */
    assert_int_equal(fl_isr_high_watermark(&s, leo, hw), hw);
    const int32_t back[2] = {1, 3};
    fl_isr_complete(&s, back, 2);
    assert_true(fl_isr_enough_for_acks_all(&s));
    fl_isr_on_fetch(&s, 3, leo, leo, now);
    assert_int_equal(fl_isr_high_watermark(&s, leo, hw), leo);
}

/* A follower that fetches all the time but each fetch ends behind the
 * leader stays in sync as long as it reaches what the leader had at its
 * previous fetch; one that falls further behind leaves after the lag. */
static void test_slow_follower(void **state) {
    (void)state;
    fl_isr_t s;
    int64_t now = 0, leo = 100;
    start(&s, now);
    int32_t out[FL_ISR_REPLICAS_MAX];
    int64_t f2 = 100, f3 = 100;
    for (int i = 0; i < 40; i++) {
        now += 500;
        fl_isr_on_fetch(&s, 2, f2, leo, now);
        fl_isr_on_fetch(&s, 3, f3, leo, now);
        f2 = leo;           /* next time it asks for what the leader has now */
        f3 += 5;            /* appends outrun it */
        leo += 10;
    }
    size_t n = fl_isr_out_of_sync(&s, leo, now, out);
    assert_int_equal(n, 1);
    assert_int_equal(out[0], 3);
}

static void test_proposals(void **state) {
    (void)state;
    fl_isr_t s;
    start(&s, 0);
    const int32_t leader[1] = {1}, unknown[1] = {9}, two[1] = {2};
    assert_false(fl_isr_propose(&s, leader, 1, NULL, 0));  /* the leader stays */
    assert_false(fl_isr_propose(&s, NULL, 0, two, 1));     /* already in: no change */
    assert_false(fl_isr_propose(&s, NULL, 0, unknown, 1)); /* not a replica */
    assert_true(fl_isr_propose(&s, two, 1, NULL, 0));
    fl_isr_complete(&s, NULL, 0); /* refused: nothing changes, nothing in flight */
    assert_true(fl_isr_contains(&s, 2));
    assert_false(s.inflight);
    /* a dead follower does not join */
    fl_isr_complete(&s, leader, 1);
    s.followers[0].alive = false;
    fl_isr_on_fetch(&s, s.followers[0].id, 200, 200, 0);
    assert_false(fl_isr_may_join(&s, s.followers[0].id, 150));
    s.followers[0].alive = true;
    assert_true(fl_isr_may_join(&s, s.followers[0].id, 150));
    /* nor one that has not fetched into the leader's epoch (starts at 100) */
    fl_isr_on_fetch(&s, s.followers[1].id, 90, 200, 0);
    assert_false(fl_isr_may_join(&s, s.followers[1].id, 50));
    assert_false(fl_isr_may_join(&s, 9, 0)); /* not a replica */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stop_shrink_rejoin),
        cmocka_unit_test(test_slow_follower),
        cmocka_unit_test(test_proposals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
