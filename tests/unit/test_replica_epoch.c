/*
 * test_replica_epoch.c — the leader-epoch cache (replica_epoch.h): assign,
 * end offsets, truncation at both ends, the checkpoint file; the follower
 * truncation step on the KIP-101 and KIP-279 traces; and a randomized
 * history of leader changes between two replicas with divergent writes,
 * after which the follower's truncation and catch-up must leave it equal
 * to the leader, having cut nothing the two logs shared.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common_alloc.h"
#include "fluss_errors.h"
#include "replica_epoch.h"

static void cache_of(fl_epoch_cache_t *c, const int64_t (*pairs)[2], size_t n) {
    fl_epoch_cache_init(c);
    for (size_t i = 0; i < n; i++) assert_true(fl_epoch_cache_assign(c, (int32_t)pairs[i][0], pairs[i][1]));
}

static void test_assign(void **state) {
    (void)state;
    fl_epoch_cache_t c;
    fl_epoch_cache_init(&c);
    assert_int_equal(fl_epoch_cache_latest(&c), FL_EPOCH_UNDEFINED);
    assert_true(fl_epoch_cache_assign(&c, 0, 0));
    assert_false(fl_epoch_cache_assign(&c, 0, 0)); /* the latest entry again */
    assert_true(fl_epoch_cache_assign(&c, 2, 10));
    assert_false(fl_epoch_cache_assign(&c, 1, 20)); /* an older epoch */
    assert_false(fl_epoch_cache_assign(&c, -1, 20));
    assert_false(fl_epoch_cache_assign(&c, 3, -5));
    assert_int_equal(c.count, 2);
    /* a new epoch starting at or before an entry's start replaces it */
    assert_true(fl_epoch_cache_assign(&c, 3, 10));
    assert_int_equal(c.count, 2);
    assert_int_equal(c.entries[1].epoch, 3);
    assert_int_equal(c.entries[1].start_offset, 10);
    /* the same epoch moved earlier (a leader that truncated) */
    assert_true(fl_epoch_cache_assign(&c, 3, 8));
    assert_int_equal(c.count, 2);
    assert_int_equal(c.entries[1].start_offset, 8);
    assert_true(fl_epoch_cache_assign(&c, 5, 30));
    assert_int_equal(fl_epoch_cache_latest(&c), 5);
    fl_epoch_cache_free(&c);
}

static void expect_end(const fl_epoch_cache_t *c, int32_t asked, int64_t log_end, int32_t epoch,
                       int64_t offset) {
    int32_t e;
    int64_t o;
    fl_epoch_cache_end_offset(c, asked, log_end, &e, &o);
    if (e != epoch || o != offset)
        fail_msg("end of epoch %d: (%d, %lld), want (%d, %lld)", asked, e, (long long)o, epoch,
                 (long long)offset);
}

static void test_end_offset(void **state) {
    (void)state;
    fl_epoch_cache_t c;
    const int64_t p[][2] = {{1, 5}, {3, 12}, {4, 20}};
    cache_of(&c, p, 3);
    expect_end(&c, 4, 25, 4, 25);                   /* the latest: the log end */
    expect_end(&c, 3, 25, 3, 20);                   /* ends where epoch 4 starts */
    expect_end(&c, 2, 25, 1, 12);                   /* unknown: the one below, up to 3's start */
    expect_end(&c, 0, 25, 0, 5);                    /* before every entry: the first start */
    expect_end(&c, 5, 25, FL_EPOCH_UNDEFINED, -1);  /* above the latest */
    expect_end(&c, -1, 25, FL_EPOCH_UNDEFINED, -1);
    fl_epoch_cache_t empty;
    fl_epoch_cache_init(&empty);
    expect_end(&empty, 0, 3, FL_EPOCH_UNDEFINED, -1);
    fl_epoch_cache_free(&c);
}

static void test_truncate(void **state) {
    (void)state;
    fl_epoch_cache_t c;
    const int64_t p[][2] = {{1, 5}, {3, 12}, {4, 20}};
    cache_of(&c, p, 3);
    fl_epoch_cache_truncate_end(&c, 21);
    assert_int_equal(c.count, 3);
    fl_epoch_cache_truncate_end(&c, 20);
    assert_int_equal(c.count, 2);
    fl_epoch_cache_truncate_start(&c, 3); /* before the first entry: nothing */
    assert_int_equal(c.entries[0].start_offset, 5);
    fl_epoch_cache_truncate_start(&c, 13);
    assert_int_equal(c.count, 1);
    assert_int_equal(c.entries[0].epoch, 3);
    assert_int_equal(c.entries[0].start_offset, 13);
    fl_epoch_cache_truncate_end(&c, 0);
    assert_int_equal(c.count, 0);
    fl_epoch_cache_free(&c);
}

static void expect_same(const fl_epoch_cache_t *a, const fl_epoch_cache_t *b) {
    assert_int_equal(a->count, b->count);
    for (size_t i = 0; i < a->count; i++) {
        assert_int_equal(a->entries[i].epoch, b->entries[i].epoch);
        assert_int_equal(a->entries[i].start_offset, b->entries[i].start_offset);
    }
}

static void test_checkpoint_file(void **state) {
    (void)state;
    fl_epoch_cache_t c, back;
    const int64_t p[][2] = {{0, 0}, {7, 1234567890123LL}, {2147483647, 9223372036854775807LL}};
    cache_of(&c, p, 3);
    size_t len;
    char *text = fl_epoch_cache_format(&c, &len);
    assert_string_equal(text, "0\n3\n0 0\n7 1234567890123\n2147483647 9223372036854775807\n");
    fl_error_t err;
    assert_int_equal(fl_epoch_cache_parse(text, len, &back, &err), 0);
    expect_same(&back, &c);
    fl_epoch_cache_free(&back);
    fl_free(text);

    const char *bad[] = {
        "", "1\n0\n", "0\n", "0\n1\n", "0\n1\n0 5", "0\n1\n0 5\n\n", "0\n2\n1 5\n1 6\n",
        "0\n2\n1 5\n2 5\n", "0\n1\n-1 5\n", "0\n1\n2147483648 5\n", "0\n1\n0 99999999999999999999\n",
        "0\n100001\n", "0\n1\n0  5\n", "0\n1\n 0 5\n", "00000000000000000000\n0\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (fl_epoch_cache_parse(bad[i], strlen(bad[i]), &back, &err) != FLUSS_ERR__CORRUPT)
            fail_msg("parsed: \"%s\"", bad[i]);
        assert_int_equal(back.count, 0);
    }
    assert_int_equal(fl_epoch_cache_parse("0\n0\n", 4, &back, &err), 0);
    assert_int_equal(back.count, 0);

    char dir[] = "/tmp/fl_epoch_XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(fl_epoch_cache_load(dir, &back, &err), 0); /* no file: empty */
    assert_int_equal(back.count, 0);
    assert_int_equal(fl_epoch_cache_store(dir, &c, &err), 0);
    assert_int_equal(fl_epoch_cache_load(dir, &back, &err), 0);
    expect_same(&back, &c);
    fl_epoch_cache_free(&back);
    char path[64];
    snprintf(path, sizeof(path), "%s/leader-epoch-checkpoint", dir);
    FILE *f = fopen(path, "w");
    fputs("0\n2\n1 5\n", f); /* cut short */
    fclose(f);
    assert_int_equal(fl_epoch_cache_load(dir, &back, &err), FLUSS_ERR__CORRUPT);
    unlink(path);
    rmdir(dir);
    fl_epoch_cache_free(&c);
}

/* ---- truncation ---- */

/* Runs the follower's side until done against the leader's cache: each
 * step asks where the follower's latest epoch ended, cuts, and repeats. */
static int64_t truncate_follower(fl_epoch_cache_t *f, int64_t *f_end, const fl_epoch_cache_t *l,
                                 int64_t l_end, int *steps) {
    *steps = 0;
    if (f->count == 0) { /* no record here: every record has an epoch */
        assert_int_equal(*f_end, 0);
        return 0;
    }
    for (;;) {
        int32_t le;
        int64_t lo;
        fl_epoch_cache_end_offset(l, fl_epoch_cache_latest(f), l_end, &le, &lo);
        int64_t to;
        int32_t next;
        bool done;
        fl_epoch_truncation_step(f, *f_end, le, lo, &to, &next, &done);
        (*steps)++;
        assert_true(*steps < 64);
        if (to == FL_EPOCH_OFFSET_UNDEFINED) fail_msg("no decision (leader answered %d)", le);
        assert_true(to <= *f_end);
        *f_end = to;
        fl_epoch_cache_truncate_end(f, to);
        if (done) return to;
        assert_int_equal(fl_epoch_cache_latest(f), next);
    }
}

/* KIP-101 scenario 1: the follower had fetched the leader's second batch
 * but not yet learnt the high watermark covering it, and restarted. Cut
 * at its high watermark (1) it would lose an acknowledged batch when it
 * becomes leader; by epoch it keeps it. */
static void test_kip101_no_loss(void **state) {
    (void)state;
    fl_epoch_cache_t leader, follower;
    const int64_t e0[][2] = {{0, 0}};
    cache_of(&leader, e0, 1);
    cache_of(&follower, e0, 1);
    int64_t f_end = 2;
    int steps;
    assert_int_equal(truncate_follower(&follower, &f_end, &leader, 2, &steps), 2);
    assert_int_equal(steps, 1);
    fl_epoch_cache_free(&leader);
    fl_epoch_cache_free(&follower);
}

/* KIP-101 scenario 2: A (epoch 0) wrote offsets 0-1, B got only 0; both
 * crashed, B came back first and leads epoch 1 with a new batch at 1. A
 * must drop its offset 1 (epoch 0), not keep it beside B's. */
static void test_kip101_no_divergence(void **state) {
    (void)state;
    fl_epoch_cache_t b, a;
    const int64_t eb[][2] = {{0, 0}, {1, 1}};
    const int64_t ea[][2] = {{0, 0}};
    cache_of(&b, eb, 2);
    cache_of(&a, ea, 1);
    int64_t a_end = 2;
    int steps;
    assert_int_equal(truncate_follower(&a, &a_end, &b, 2, &steps), 1);
    fl_epoch_cache_free(&a);
    fl_epoch_cache_free(&b);
}

/* KIP-279: the follower's latest epoch is one the leader never had; the
 * leader answers with an older epoch, which the follower does not have
 * either, so it cuts in two steps. */
static void test_kip279_two_steps(void **state) {
    (void)state;
    fl_epoch_cache_t l, f;
    const int64_t el[][2] = {{0, 0}, {1, 3}, {3, 6}};
    const int64_t ef[][2] = {{0, 0}, {2, 5}};
    cache_of(&l, el, 3);
    cache_of(&f, ef, 2);
    int64_t f_end = 8;
    int steps;
    assert_int_equal(truncate_follower(&f, &f_end, &l, 9, &steps), 3);
    assert_int_equal(steps, 2);
    assert_int_equal(fl_epoch_cache_latest(&f), 0);
    /* and an unknown answer decides nothing */
    int64_t to;
    int32_t next;
    bool done;
    fl_epoch_truncation_step(&f, 3, FL_EPOCH_UNDEFINED, FL_EPOCH_OFFSET_UNDEFINED, &to, &next,
                             &done);
    assert_false(done);
    assert_int_equal(to, FL_EPOCH_OFFSET_UNDEFINED);
    fl_epoch_cache_free(&l);
    fl_epoch_cache_free(&f);
}

/* The cut from a leader's whole cache: the KIP cases above, a follower
 * with no epoch, a leader that knows none of the follower's; and which
 * answers a follower takes at all. */
static void test_divergence(void **state) {
    (void)state;
    fl_epoch_cache_t l, f, none;
    const int64_t el[][2] = {{0, 0}, {1, 3}, {3, 6}};
    const int64_t ef[][2] = {{0, 0}, {2, 5}};
    cache_of(&l, el, 3);
    cache_of(&f, ef, 2);
    fl_epoch_cache_init(&none);
    assert_int_equal(fl_epoch_divergence(&f, 8, &l, 9), 3);      /* KIP-279 */
    const int64_t e01[][2] = {{0, 0}, {1, 100}};
    const int64_t e0[][2] = {{0, 0}};
    fl_epoch_cache_t l01, f0;
    cache_of(&l01, e01, 2);
    cache_of(&f0, e0, 1);
    assert_int_equal(fl_epoch_divergence(&f0, 150, &l01, 130), 100); /* its own tail goes */
    assert_int_equal(fl_epoch_divergence(&f0, 80, &l01, 130), 80);   /* a prefix: all kept */
    assert_int_equal(fl_epoch_divergence(&l01, 120, &l01, 130), 120); /* the same epochs */
    assert_int_equal(fl_epoch_divergence(&none, 10, &l01, 5), 5);
    assert_int_equal(fl_epoch_divergence(&f0, 10, &none, 5), FL_EPOCH_OFFSET_UNDEFINED);
    const fl_epoch_entry_t ok[] = {{0, 0}, {1, 100}, {4, 101}};
    const fl_epoch_entry_t same_epoch[] = {{0, 0}, {0, 100}};
    const fl_epoch_entry_t same_start[] = {{0, 5}, {1, 5}};
    const fl_epoch_entry_t negative[] = {{-1, 0}};
    assert_true(fl_epoch_entries_valid(ok, 3));
    assert_true(fl_epoch_entries_valid(ok, 0));
    assert_false(fl_epoch_entries_valid(same_epoch, 2));
    assert_false(fl_epoch_entries_valid(same_start, 2));
    assert_false(fl_epoch_entries_valid(negative, 1));
    fl_epoch_cache_free(&l);
    fl_epoch_cache_free(&f);
    fl_epoch_cache_free(&l01);
    fl_epoch_cache_free(&f0);
}

/* A replica as the simulation sees it: the epoch of each record. */
#define SIM_MAX 4096
typedef struct sim_replica {
    int32_t epoch_at[SIM_MAX];
    int64_t end;
    fl_epoch_cache_t cache;
} sim_replica_t;

static void sim_append(sim_replica_t *r, int32_t epoch) {
    assert_true(r->end < SIM_MAX);
    if (fl_epoch_cache_latest(&r->cache) != epoch) fl_epoch_cache_assign(&r->cache, epoch, r->end);
    r->epoch_at[r->end++] = epoch;
}

#define SIM_REPLICAS 3

/* Three replicas; leadership moves among them with new epochs; a leader
 * appends, each follower either reconciles with it (truncation by epoch)
 * and copies some prefix of what it lacks, or stays stale, so divergent
 * tails from several epochs pile up (three replicas are what it takes for
 * a follower's latest epoch and the leader's answer to be unknown to each
 * other: KIP-279's case). At the end every follower truncates and catches
 * up fully: all logs must equal the leader's, and no cut may drop a record
 * the follower shared with the leader (same offset, same epoch). */
static void test_random_histories(void **state) {
    (void)state;
    srand(12345);
    int divergent = 0, multi_step = 0;
    for (int round = 0; round < 3000; round++) {
        sim_replica_t *r = fl_calloc(SIM_REPLICAS, sizeof(*r));
        int leader = 0;
        int32_t epoch = 0;
        fl_epoch_cache_assign(&r[0].cache, 0, 0);
        for (int change = 0; change < 10; change++) {
            sim_replica_t *l = &r[leader];
            int appends = rand() % 5;
            for (int i = 0; i < appends; i++) sim_append(l, epoch);
            for (int k = 0; k < SIM_REPLICAS; k++) {
                if (k == leader) continue;
                sim_replica_t *f = &r[k];
                if (f->cache.count > 0) {
                    if (rand() % 2) continue; /* still stale: its tail may diverge */
                    int steps;
                    truncate_follower(&f->cache, &f->end, &l->cache, l->end, &steps);
                }
                int64_t copy = f->end + rand() % (l->end - f->end + 1);
                while (f->end < copy) sim_append(f, l->epoch_at[f->end]);
            }
            if (rand() % 2) { /* leadership moves */
                leader = (leader + 1 + rand() % (SIM_REPLICAS - 1)) % SIM_REPLICAS;
                epoch++;
                fl_epoch_cache_assign(&r[leader].cache, epoch, r[leader].end);
            }
        }
        sim_replica_t *l = &r[leader];
        for (int k = 0; k < SIM_REPLICAS; k++) {
            if (k == leader) continue;
            sim_replica_t *f = &r[k];
            int64_t shared = 0;
            while (shared < f->end && shared < l->end && f->epoch_at[shared] == l->epoch_at[shared])
                shared++;
            if (shared < f->end) divergent++;
            /* the whole-cache answer (LIST_LEADER_EPOCHS) cuts where the
             * steps do */
            int64_t whole = fl_epoch_divergence(&f->cache, f->end, &l->cache, l->end);
            int steps;
            int64_t cut = truncate_follower(&f->cache, &f->end, &l->cache, l->end, &steps);
            assert_int_equal(whole, cut);
            if (steps > 1) multi_step++;
            if (cut < shared)
                fail_msg("round %d: cut at %lld but %lld records were shared", round,
                         (long long)cut, (long long)shared);
            for (int64_t i = 0; i < f->end; i++)
                if (f->epoch_at[i] != l->epoch_at[i])
                    fail_msg("round %d: offset %lld differs after truncation", round, (long long)i);
            while (f->end < l->end) sim_append(f, l->epoch_at[f->end]);
            assert_int_equal(memcmp(f->epoch_at, l->epoch_at, (size_t)l->end * sizeof(int32_t)), 0);
        }
        for (int k = 0; k < SIM_REPLICAS; k++) fl_epoch_cache_free(&r[k].cache);
        fl_free(r);
    }
    /* the histories did reach the cases under test */
    print_message("divergent followers %d, multi-step truncations %d\n", divergent, multi_step);
    assert_true(divergent > 100);
    assert_true(multi_step > 10);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_assign),          cmocka_unit_test(test_end_offset),
        cmocka_unit_test(test_truncate),        cmocka_unit_test(test_checkpoint_file),
        cmocka_unit_test(test_kip101_no_loss),  cmocka_unit_test(test_kip101_no_divergence),
        cmocka_unit_test(test_kip279_two_steps), cmocka_unit_test(test_random_histories),
        cmocka_unit_test(test_divergence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
