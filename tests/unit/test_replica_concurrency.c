/*
 * test_replica_concurrency.c — the tablet-server core under threads (runs
 * under ThreadSanitizer in `make test`): the worker pool, the network
 * loop's inbox, the purgatory (a parked operation is checked only when a
 * bucket it watches moves; completed exactly once whatever races: checks
 * from many threads, deadlines, shutdown), and replicas appended to from
 * several threads at once across many buckets, with flushes on the pool,
 * readers, and acks-style waits in the purgatory.
 */
#define _GNU_SOURCE
#include <pthread.h>
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
#include "common_time.h"
#include "common_workq.h"
#include "replica_manager.h"
#include "replica_purgatory.h"
#include "rpc_loop.h"

/* ---- worker pool ---- */

static atomic_int job_count;

static void count_job(void *arg) {
    (void)arg;
    atomic_fetch_add(&job_count, 1);
}

static void *submit_many(void *arg) {
    fl_workq_t *q = arg;
    for (int i = 0; i < 1000; i++) fl_workq_submit(q, count_job, NULL);
    return NULL;
}

static void test_workq_runs_every_job(void **state) {
    (void)state;
    atomic_store(&job_count, 0);
    fl_workq_t *q = fl_workq_new(3, "t");
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, submit_many, q);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    fl_workq_destroy(q); /* drains */
    assert_int_equal(atomic_load(&job_count), 4000);
}

/* ---- loop inbox ---- */

typedef struct loop_probe {
    fl_rpc_loop_t *loop;
    atomic_int ran;
    atomic_int on_thread;
} loop_probe_t;

static void probe_task(void *arg) {
    loop_probe_t *p = arg;
    if (fl_rpc_loop_on_thread(p->loop)) atomic_fetch_add(&p->on_thread, 1);
    atomic_fetch_add(&p->ran, 1);
}

static void *post_many(void *arg) {
    loop_probe_t *p = arg;
    for (int i = 0; i < 500; i++) fl_rpc_loop_post(p->loop, probe_task, p);
    return NULL;
}

static void test_loop_runs_posted_tasks_on_its_thread(void **state) {
    (void)state;
    loop_probe_t p;
    memset(&p, 0, sizeof(p));
    p.loop = fl_rpc_loop_new("t-net");
    assert_int_equal(fl_rpc_loop_start(p.loop), 0);
    pthread_t th[3];
    for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, post_many, &p);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    fl_rpc_loop_destroy(p.loop); /* runs what was posted before stopping */
    assert_int_equal(atomic_load(&p.ran), 1500);
    assert_int_equal(atomic_load(&p.on_thread), 1500);
}

/* ---- purgatory ---- */

typedef struct test_op {
    fl_delayed_op_t op;
    atomic_int *level;     /* ready when *level >= want */
    int want;
    atomic_int completions;
    atomic_int expired;
} test_op_t;

static bool test_try(fl_delayed_op_t *op, const fl_bucket_key_t *key) {
    (void)key;
    test_op_t *t = (test_op_t *)op;
    return atomic_load(t->level) >= t->want;
}

static void test_done(fl_delayed_op_t *op, bool expired) {
    test_op_t *t = (test_op_t *)op;
    atomic_fetch_add(&t->completions, 1);
    if (expired) atomic_fetch_add(&t->expired, 1);
}

static const fl_delayed_ops_t test_ops = {test_try, test_done};

static void op_init(test_op_t *t, atomic_int *level, int want, int64_t wait_ms) {
    memset(t, 0, sizeof(*t));
    t->op.ops = &test_ops;
    t->op.deadline_ms = fl_time_mono_ms() + wait_ms;
    t->level = level;
    t->want = want;
}

static void test_purgatory_checks_only_watched_buckets(void **state) {
    (void)state;
    fl_purgatory_t *p = fl_purgatory_new("t");
    atomic_int level = 0;
    test_op_t a;
    op_init(&a, &level, 1, 60000);
    fl_bucket_key_t ka = {7, -1, 0}, kb = {7, -1, 1}, kc = {8, -1, 0};
    fl_purgatory_watch(p, &a.op, &ka, 1);
    uint64_t after_park = atomic_load(&a.op.checks);
    assert_int_equal(after_park, 1); /* the check right after parking */
    for (int i = 0; i < 1000; i++) {
        fl_purgatory_check(p, &kb);
        fl_purgatory_check(p, &kc);
    }
    assert_int_equal(atomic_load(&a.op.checks), after_park); /* never touched */
    assert_int_equal(atomic_load(&a.completions), 0);
    atomic_store(&level, 1);
    fl_purgatory_check(p, &ka);
    assert_int_equal(atomic_load(&a.completions), 1);
    assert_int_equal(atomic_load(&a.expired), 0);
    assert_int_equal(fl_purgatory_size(p), 0);
    fl_purgatory_destroy(p);
}

static void test_purgatory_deadline_and_shutdown(void **state) {
    (void)state;
    fl_purgatory_t *p = fl_purgatory_new("t");
    atomic_int level = 0;
    test_op_t soon, late;
    op_init(&soon, &level, 1, 50);
    op_init(&late, &level, 1, 600000);
    fl_bucket_key_t k = {1, -1, 0};
    fl_purgatory_watch(p, &late.op, &k, 1);
    fl_purgatory_watch(p, &soon.op, &k, 1);
    for (int i = 0; i < 200 && atomic_load(&soon.completions) == 0; i++) usleep(10000);
    assert_int_equal(atomic_load(&soon.completions), 1);
    assert_int_equal(atomic_load(&soon.expired), 1);
    assert_int_equal(atomic_load(&late.completions), 0);
    fl_purgatory_destroy(p); /* completes what is parked */
    assert_int_equal(atomic_load(&late.completions), 1);
    assert_int_equal(atomic_load(&late.expired), 1);
}

#define RACE_OPS 400
#define RACE_KEYS 8

typedef struct race {
    fl_purgatory_t *p;
    atomic_int level;
    test_op_t ops[RACE_OPS];
} race_t;

static void *race_checker(void *arg) {
    race_t *r = arg;
    for (int round = 0; round < 200; round++) {
        atomic_fetch_add(&r->level, 1);
        for (int k = 0; k < RACE_KEYS; k++) {
            fl_bucket_key_t key = {1, -1, k};
            fl_purgatory_check(r->p, &key);
        }
    }
    return NULL;
}

static void *race_parker(void *arg) {
    race_t *r = arg;
    for (int i = 0; i < RACE_OPS; i++) {
        fl_bucket_key_t keys[2] = {{1, -1, i % RACE_KEYS}, {1, -1, (i + 3) % RACE_KEYS}};
        /* some expire, some complete by checks, some are still parked at destroy */
        op_init(&r->ops[i], &r->level, 50 + i * 3, i % 3 == 0 ? 1 : 600000);
        fl_purgatory_watch(r->p, &r->ops[i].op, keys, 2);
    }
    return NULL;
}

static void test_purgatory_completes_exactly_once_under_races(void **state) {
    (void)state;
    race_t *r = calloc(1, sizeof(*r));
    r->p = fl_purgatory_new("t");
    pthread_t th[4];
    pthread_create(&th[0], NULL, race_parker, r);
    for (int i = 1; i < 4; i++) pthread_create(&th[i], NULL, race_checker, r);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    fl_purgatory_destroy(r->p);
    for (int i = 0; i < RACE_OPS; i++)
        assert_int_equal(atomic_load(&r->ops[i].completions), 1);
    free(r);
}

/* ---- replicas under concurrent appends ---- */

#define BUCKETS 16
#define APPENDERS 4
#define APPENDS_PER_THREAD 200

typedef struct wait_op {
    fl_delayed_op_t op;
    fl_replica_t *r;
    int64_t want;
    atomic_int done;
    atomic_int expired;
} wait_op_t;

static bool wait_try(fl_delayed_op_t *op, const fl_bucket_key_t *key) {
    (void)key;
    wait_op_t *w = (wait_op_t *)op;
    return fl_replica_high_watermark(w->r) >= w->want;
}

static void wait_done(fl_delayed_op_t *op, bool expired) {
    wait_op_t *w = (wait_op_t *)op;
    if (expired) atomic_fetch_add(&w->expired, 1);
    atomic_store(&w->done, 1);
}

static const fl_delayed_ops_t wait_ops = {wait_try, wait_done};

typedef struct cluster {
    fl_replica_manager_t rm;
    fl_workq_t *workers;
    fl_purgatory_t *p;
    fl_replica_t *replicas[BUCKETS];
    atomic_int failures;
    atomic_int waits_expired;
} cluster_t;

static void on_watermark(void *ctx, fl_replica_t *r) {
    cluster_t *c = ctx;
    fl_bucket_key_t k = {r->table_id, r->partition_id, r->bucket};
    fl_purgatory_check(c->p, &k);
}

static void *appender(void *arg) {
    cluster_t *c = ((void **)arg)[0];
    int id = (int)(intptr_t)((void **)arg)[1];
    for (int i = 0; i < APPENDS_PER_THREAD; i++) {
        int b = (id * 7 + i) % BUCKETS;
        bb_spec_t s = bb_spec(-1, -1, 3, 100, (uint8_t)i);
        size_t len;
        uint8_t *req = bb_new(&s, &len);
        fl_replica_append_t res;
        fl_error_t err;
        if (fl_replica_append(c->replicas[b], req, len, fl_time_wall_ms(), &res, &err)) {
            atomic_fetch_add(&c->failures, 1);
        } else if (res.end_offset != res.base_offset + 3) {
            atomic_fetch_add(&c->failures, 1);
        } else if (i % 10 == 0) {
            /* an acks=all-style wait: the high watermark must reach it */
            wait_op_t *w = calloc(1, sizeof(*w));
            w->op.ops = &wait_ops;
            w->op.deadline_ms = fl_time_mono_ms() + 20000;
            w->r = c->replicas[b];
            w->want = res.end_offset;
            fl_bucket_key_t k = {1, -1, b};
            fl_purgatory_watch(c->p, &w->op, &k, 1);
            for (int t = 0; t < 2000 && !atomic_load(&w->done); t++) usleep(1000);
            if (!atomic_load(&w->done) || atomic_load(&w->expired))
                atomic_fetch_add(&c->waits_expired, 1);
            while (!atomic_load(&w->done)) usleep(1000);
            free(w);
        }
        free(req);
    }
    return NULL;
}

static void *reader(void *arg) {
    cluster_t *c = arg;
    for (int round = 0; round < 100; round++) {
        for (int b = 0; b < BUCKETS; b++) {
            fl_buf_t out;
            fl_buf_init(&out);
            fl_error_t err;
            int64_t hw = fl_replica_high_watermark(c->replicas[b]);
            if (fl_replica_read(c->replicas[b], 0, 1 << 20, &out, &err))
                atomic_fetch_add(&c->failures, 1);
            /* whole batches only, never past what the HW allowed then or later */
            size_t pos = 0;
            int64_t next = 0;
            while (pos + 12 <= out.len) {
                fl_batch_view_t v;
                size_t n = 0;
                if (fl_batch_peek_size(out.data + pos, out.len - pos, 1 << 20, &n, &err) ||
                    fl_batch_parse(out.data + pos, n, &v, &err) || v.base_offset != next) {
                    atomic_fetch_add(&c->failures, 1);
                    break;
                }
                next = fl_batch_last_offset(&v) + 1;
                pos += n;
            }
            if (pos != out.len || next < hw) atomic_fetch_add(&c->failures, 1);
            fl_buf_free(&out);
        }
    }
    return NULL;
}

static void run_cluster(const char *dir, bool sync_mode) {
    cluster_t *c = calloc(1, sizeof(*c));
    c->workers = fl_workq_new(2, "t-work");
    c->p = fl_purgatory_new("t-delay");
    fl_log_config_t lc = {64 * 1024, 4096, 0, 1 << 20, false, false, false};
    fl_durability_t d = {sync_mode ? INT64_MAX : 50, 0, sync_mode};
    fl_replica_manager_init(&c->rm, dir, &lc, &d, c->workers);
    fl_replica_manager_set_watermark_hook(&c->rm, on_watermark, c);
    fl_error_t err;
    for (int b = 0; b < BUCKETS; b++)
        assert_int_equal(fl_replica_manager_open(&c->rm, "db", "t", 1, -1, NULL, b, 0,
                                                 &c->replicas[b], &err), 0);
    pthread_t th[APPENDERS + 1];
    void *args[APPENDERS][2];
    for (int i = 0; i < APPENDERS; i++) {
        args[i][0] = c;
        args[i][1] = (void *)(intptr_t)i;
        pthread_create(&th[i], NULL, appender, args[i]);
    }
    pthread_create(&th[APPENDERS], NULL, reader, c);
    for (int i = 0; i <= APPENDERS; i++) pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&c->failures), 0);
    assert_int_equal(atomic_load(&c->waits_expired), 0);
    /* every offset exactly once; after a final flush everything is durable */
    int64_t total = 0;
    for (int b = 0; b < BUCKETS; b++) {
        assert_int_equal(fl_replica_flush(c->replicas[b], &err), 0);
        assert_int_equal(fl_replica_log_end(c->replicas[b]), fl_replica_high_watermark(c->replicas[b]));
        assert_int_equal(fl_replica_flushed(c->replicas[b]), fl_replica_log_end(c->replicas[b]));
        total += fl_replica_log_end(c->replicas[b]);
        if (sync_mode) assert_true(atomic_load(&c->replicas[b]->flushes) > 0);
        fl_replica_unref(c->replicas[b]);
    }
    assert_int_equal(total, (int64_t)APPENDERS * APPENDS_PER_THREAD * 3);
    fl_workq_destroy(c->workers);
    c->rm.workers = NULL;
    fl_replica_manager_close(&c->rm);
    fl_purgatory_destroy(c->p);
    /* and it all reopens: rolled segments were finalised by the flushes */
    fl_replica_manager_t rm2;
    fl_replica_manager_init(&rm2, dir, &lc, &d, NULL);
    total = 0;
    for (int b = 0; b < BUCKETS; b++) {
        fl_replica_t *r;
        assert_int_equal(fl_replica_manager_open(&rm2, "db", "t", 1, -1, NULL, b, 0, &r, &err), 0);
        total += fl_replica_log_end(r);
        fl_replica_unref(r);
    }
    fl_replica_manager_close(&rm2);
    assert_int_equal(total, (int64_t)APPENDERS * APPENDS_PER_THREAD * 3);
    free(c);
}

static void test_concurrent_appends_async(void **state) { run_cluster(*state, false); }
static void test_concurrent_appends_sync(void **state) { run_cluster(*state, true); }

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workq_runs_every_job),
        cmocka_unit_test(test_loop_runs_posted_tasks_on_its_thread),
        cmocka_unit_test(test_purgatory_checks_only_watched_buckets),
        cmocka_unit_test(test_purgatory_deadline_and_shutdown),
        cmocka_unit_test(test_purgatory_completes_exactly_once_under_races),
        cmocka_unit_test_setup_teardown(test_concurrent_appends_async, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_appends_sync, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
