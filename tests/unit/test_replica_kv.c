/*
 * test_replica_kv.c — the slot of a replica's primary-key store
 * (replica_kv.h): a published store is acquired and released; a retire
 * detaches it at once and hands it back for closing exactly once, to
 * the retire when nothing uses it or to the last release; nothing is
 * published while a retired store is still to close; a retire between
 * an open's begin and its publish turns the publish into a retirement;
 * an open that failed learns whether a demotion left its clean-up to
 * it; the replica's end closes a published store. The stress test runs
 * users acquiring the store while another thread publishes and retires
 * stores in a loop: a store is never used after it closed (its memory is
 * freed at close, and its fields are plain, so ASan and ThreadSanitizer
 * see a late use). Run under ThreadSanitizer by make test-tsan.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <cmocka.h>

#include "replica_kv.h"

/* A stand-in for a KvTablet: plain fields, freed when closed. */
typedef struct fake_kv {
    int id;
    int reads; /* bumped by users under the slot's use, never after close */
} fake_kv_t;

static atomic_int closes;
static atomic_int close_deleted;

static void fake_close(void *kv, bool deleted) {
    atomic_fetch_add(&closes, 1);
    if (deleted) atomic_fetch_add(&close_deleted, 1);
    free(kv);
}

static fake_kv_t *fake_new(int id) {
    fake_kv_t *k = calloc(1, sizeof(*k));
    k->id = id;
    return k;
}

/* An open as the server does it: begin, open, publish. */
static fake_kv_t *open_and_publish(fl_replica_kv_t *s, int id) {
    void *kv;
    uint64_t gen;
    assert_int_equal(fl_replica_kv_begin(s, &kv, &gen), FL_REPLICA_KV_EMPTY);
    fake_kv_t *k = fake_new(id);
    assert_true(fl_replica_kv_publish(s, k, gen, fake_close));
    return k;
}

static void test_retire_with_users_hands_back_on_last_release(void **state) {
    (void)state;
    fl_replica_kv_t s;
    fl_replica_kv_init(&s);
    assert_null(fl_replica_kv_acquire(&s));
    fake_kv_t *k = open_and_publish(&s, 1); /* the opener holds one use */
    assert_ptr_equal(fl_replica_kv_acquire(&s), k);
    assert_null(fl_replica_kv_release(&s, k)); /* published: never handed back */
    assert_ptr_equal(fl_replica_kv_acquire(&s), k);
    /* two uses now: the retire detaches it, nothing to close yet */
    void *now;
    assert_int_equal(fl_replica_kv_retire(&s, &now), FL_REPLICA_KV_RETIRE_LATER);
    assert_null(now);
    assert_true(fl_replica_kv_busy(&s));
    assert_null(fl_replica_kv_acquire(&s));
    void *kv;
    uint64_t gen;
    assert_int_equal(fl_replica_kv_begin(&s, &kv, &gen), FL_REPLICA_KV_BUSY);
    assert_false(fl_replica_kv_wait_closed(&s, 20));
    k->reads++; /* still held: usable */
    assert_null(fl_replica_kv_release(&s, k));
    assert_ptr_equal(fl_replica_kv_release(&s, k), k); /* the last use */
    free(k);
    fl_replica_kv_closed(&s);
    assert_false(fl_replica_kv_busy(&s));
    assert_true(fl_replica_kv_wait_closed(&s, 0));
    /* a new leadership opens a new store in the new generation */
    assert_int_equal(fl_replica_kv_begin(&s, &kv, &gen), FL_REPLICA_KV_EMPTY);
    assert_int_equal(gen, 1);
    fake_kv_t *k2 = fake_new(2);
    assert_true(fl_replica_kv_publish(&s, k2, gen, fake_close));
    assert_null(fl_replica_kv_release(&s, k2));
    atomic_store(&closes, 0);
    fl_replica_kv_reset(&s, false); /* the replica goes: the published store closes */
    assert_int_equal(atomic_load(&closes), 1);
}

static void test_retire_without_users_hands_back_at_once(void **state) {
    (void)state;
    fl_replica_kv_t s;
    fl_replica_kv_init(&s);
    fake_kv_t *k = open_and_publish(&s, 1);
    assert_null(fl_replica_kv_release(&s, k));
    void *now;
    assert_int_equal(fl_replica_kv_retire(&s, &now), FL_REPLICA_KV_RETIRE_NOW);
    assert_ptr_equal(now, k);
    assert_null(fl_replica_kv_acquire(&s));
    /* a second demotion while it closes detaches nothing more, and
     * leaves the clean-up to its closer */
    assert_int_equal(fl_replica_kv_retire(&s, &now), FL_REPLICA_KV_RETIRE_LATER);
    assert_null(now);
    assert_true(fl_replica_kv_busy(&s));
    free(k);
    fl_replica_kv_closed(&s);
    /* a demotion with nothing open nor opening: the caller cleans up */
    assert_int_equal(fl_replica_kv_retire(&s, &now), FL_REPLICA_KV_RETIRE_NONE);
    atomic_store(&closes, 0);
    fl_replica_kv_reset(&s, true);
    assert_int_equal(atomic_load(&closes), 0); /* nothing published: nothing to close */
}

/* An open that a demotion overtook: its publish fails, and the store is
 * retired (busy) for its opener to close; nobody ever acquired it. */
static void test_publish_after_a_retire_is_refused(void **state) {
    (void)state;
    fl_replica_kv_t s;
    fl_replica_kv_init(&s);
    void *kv;
    uint64_t gen;
    assert_int_equal(fl_replica_kv_begin(&s, &kv, &gen), FL_REPLICA_KV_EMPTY);
    /* the demotion, while the store opens: the opener cleans up */
    void *now;
    assert_int_equal(fl_replica_kv_retire(&s, &now), FL_REPLICA_KV_RETIRE_LATER);
    fake_kv_t *k = fake_new(1);
    assert_false(fl_replica_kv_publish(&s, k, gen, fake_close));
    assert_null(fl_replica_kv_acquire(&s));
    assert_true(fl_replica_kv_busy(&s));
    free(k);
    fl_replica_kv_closed(&s);
    /* an open that failed: abandoned, and told whether a demotion came */
    assert_int_equal(fl_replica_kv_begin(&s, &kv, &gen), FL_REPLICA_KV_EMPTY);
    assert_false(fl_replica_kv_abandon(&s, gen));
    assert_int_equal(fl_replica_kv_begin(&s, &kv, &gen), FL_REPLICA_KV_EMPTY);
    assert_int_equal(fl_replica_kv_retire(&s, &now), FL_REPLICA_KV_RETIRE_LATER);
    assert_true(fl_replica_kv_abandon(&s, gen));
    assert_false(fl_replica_kv_busy(&s));
    assert_int_equal(fl_replica_kv_begin(&s, &kv, &gen), FL_REPLICA_KV_EMPTY);
    assert_false(fl_replica_kv_abandon(&s, gen));
    fl_replica_kv_reset(&s, false);
}

typedef struct closer_arg {
    fl_replica_kv_t *s;
    void *kv;
} closer_arg_t;

static void *close_later(void *arg) {
    closer_arg_t *a = arg;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    free(a->kv);
    fl_replica_kv_closed(a->s);
    return NULL;
}

static void test_wait_closed_wakes_when_closed(void **state) {
    (void)state;
    fl_replica_kv_t s;
    fl_replica_kv_init(&s);
    fake_kv_t *k = open_and_publish(&s, 1);
    assert_null(fl_replica_kv_release(&s, k));
    closer_arg_t a = {&s, NULL};
    assert_int_equal(fl_replica_kv_retire(&s, &a.kv), FL_REPLICA_KV_RETIRE_NOW);
    assert_ptr_equal(a.kv, k);
    pthread_t t;
    pthread_create(&t, NULL, close_later, &a);
    assert_true(fl_replica_kv_wait_closed(&s, 10000));
    pthread_join(t, NULL);
    fl_replica_kv_reset(&s, false);
}

/* ---- stress: users against publish/retire ---- */

enum { USERS = 3, ROUNDS = 300 };

typedef struct stress {
    fl_replica_kv_t slot;
    atomic_bool stop;
    atomic_long uses;
    atomic_int bad;         /* a user saw a closed store */
    atomic_int handed_back; /* retired stores closed (each exactly once) */
} stress_t;

static void close_retired(stress_t *st, void *kv) {
    fake_kv_t *k = kv;
    k->id = -1; /* a write racing a user's read if the slot let one through */
    free(k);
    atomic_fetch_add(&st->handed_back, 1);
    fl_replica_kv_closed(&st->slot);
}

static void *user_run(void *arg) {
    stress_t *st = arg;
    while (!atomic_load(&st->stop)) {
        fake_kv_t *k = fl_replica_kv_acquire(&st->slot);
        if (!k) {
            sched_yield();
            continue;
        }
        /* reads only: several users hold it at once (no cmocka asserts
         * off the test's thread) */
        int seen = 0;
        for (int i = 0; i < 50; i++) seen += k->id > 0;
        if (seen != 50) atomic_fetch_add(&st->bad, 1);
        atomic_fetch_add(&st->uses, 1);
        void *last = fl_replica_kv_release(&st->slot, k);
        if (last) close_retired(st, last); /* the server hands this to a worker */
    }
    return NULL;
}

static void test_stress_no_use_after_close(void **state) {
    (void)state;
    static stress_t st;
    fl_replica_kv_init(&st.slot);
    atomic_store(&st.stop, false);
    pthread_t users[USERS];
    for (int i = 0; i < USERS; i++) pthread_create(&users[i], NULL, user_run, &st);
    int opened = 0;
    for (int round = 1; round <= ROUNDS; round++) {
        /* lead: wait for the last store to close, open, publish */
        assert_true(fl_replica_kv_wait_closed(&st.slot, 10000));
        void *kv;
        uint64_t gen;
        assert_int_equal(fl_replica_kv_begin(&st.slot, &kv, &gen), FL_REPLICA_KV_EMPTY);
        fake_kv_t *k = fake_new(round);
        opened++;
        if (round % 7 == 0) {
            /* a demotion overtakes this open */
            void *none;
            assert_int_equal(fl_replica_kv_retire(&st.slot, &none), FL_REPLICA_KV_RETIRE_LATER);
            assert_false(fl_replica_kv_publish(&st.slot, k, gen, fake_close));
            close_retired(&st, k);
            continue;
        }
        assert_true(fl_replica_kv_publish(&st.slot, k, gen, fake_close));
        void *last = fl_replica_kv_release(&st.slot, k); /* the opener's use */
        assert_null(last);
        for (int i = 0; i < 200; i++) sched_yield(); /* users at work */
        /* follow: detach; closed here or by the last user */
        void *now;
        if (fl_replica_kv_retire(&st.slot, &now) == FL_REPLICA_KV_RETIRE_NOW)
            close_retired(&st, now);
    }
    assert_true(fl_replica_kv_wait_closed(&st.slot, 10000));
    atomic_store(&st.stop, true);
    for (int i = 0; i < USERS; i++) pthread_join(users[i], NULL);
    assert_int_equal(atomic_load(&st.handed_back), opened);
    assert_true(atomic_load(&st.uses) > 0);
    assert_int_equal(atomic_load(&st.bad), 0);
    fl_replica_kv_reset(&st.slot, false);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_retire_with_users_hands_back_on_last_release),
        cmocka_unit_test(test_retire_without_users_hands_back_at_once),
        cmocka_unit_test(test_publish_after_a_retire_is_refused),
        cmocka_unit_test(test_wait_closed_wakes_when_closed),
        cmocka_unit_test(test_stress_no_use_after_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
