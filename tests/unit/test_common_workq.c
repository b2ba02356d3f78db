/*
 * test_common_workq.c — the worker pool's fork-join (common_workq.h): each
 * forked job runs exactly once, by a worker or by its joiner; jobs that
 * fork and join from inside a pool all of whose workers do the same never
 * deadlock (the joiner runs a job no worker has started). Run under
 * ThreadSanitizer by make test-tsan.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sched.h>

#include <cmocka.h>

#include "common_workq.h"

typedef struct counter {
    atomic_int runs;
    int plain; /* written by the job, read after the join: no atomics needed */
} counter_t;

static void bump(void *arg) {
    counter_t *c = arg;
    atomic_fetch_add(&c->runs, 1);
    c->plain++;
}

static void test_fork_join_runs_once(void **state) {
    (void)state;
    fl_workq_t *q = fl_workq_new(2, "t-fork");
    enum { N = 2000 };
    static counter_t c[N];
    for (int i = 0; i < N; i++) {
        fl_workq_fork_t *f = fl_workq_fork(q, bump, &c[i]);
        fl_workq_join(f);
        assert_int_equal(atomic_load(&c[i].runs), 1);
        assert_int_equal(c[i].plain, 1);
    }
    fl_workq_destroy(q);
}

static atomic_bool gate_open;

static void wait_gate(void *arg) {
    (void)arg;
    while (!atomic_load(&gate_open)) sched_yield();
}

/* Who ran it, made certain: a job no worker can start (the only worker is
 * held) is run by its joiner; one a worker finished first is not. */
static void test_join_reports_who_ran(void **state) {
    (void)state;
    fl_workq_t *q = fl_workq_new(1, "t-who");
    atomic_store(&gate_open, false);
    fl_workq_submit(q, wait_gate, NULL);
    static counter_t held, idle;
    fl_workq_fork_t *f = fl_workq_fork(q, bump, &held);
    assert_false(fl_workq_join(f));
    assert_int_equal(atomic_load(&held.runs), 1);
    atomic_store(&gate_open, true);
    f = fl_workq_fork(q, bump, &idle);
    while (atomic_load(&idle.runs) == 0) sched_yield();
    assert_true(fl_workq_join(f));
    assert_int_equal(idle.plain, 1);
    fl_workq_destroy(q);
    assert_int_equal(atomic_load(&held.runs), 1); /* its queued copy did nothing */
}

typedef struct outer {
    fl_workq_t *q;
    counter_t inner[4];
    atomic_int *done;
} outer_t;

/* A job of the pool that forks four more into the same pool and joins them. */
static void outer_job(void *arg) {
    outer_t *o = arg;
    fl_workq_fork_t *f[4];
    for (int i = 0; i < 4; i++) f[i] = fl_workq_fork(o->q, bump, &o->inner[i]);
    for (int i = 3; i >= 0; i--) fl_workq_join(f[i]);
    for (int i = 0; i < 4; i++) {
        if (atomic_load(&o->inner[i].runs) != 1 || o->inner[i].plain != 1) return;
    }
    atomic_fetch_add(o->done, 1);
}

static void test_nested_forks_never_deadlock(void **state) {
    (void)state;
    fl_workq_t *q = fl_workq_new(2, "t-nest");
    enum { N = 300 };
    static outer_t o[N];
    atomic_int done;
    atomic_init(&done, 0);
    for (int i = 0; i < N; i++) {
        o[i].q = q;
        o[i].done = &done;
        fl_workq_submit(q, outer_job, &o[i]);
    }
    fl_workq_destroy(q); /* runs every queued job, then joins the workers */
    assert_int_equal(atomic_load(&done), N);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fork_join_runs_once),
        cmocka_unit_test(test_join_reports_who_ran),
        cmocka_unit_test(test_nested_forks_never_deadlock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
