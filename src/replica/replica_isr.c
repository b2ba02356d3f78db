/*
 * replica_isr.c — the leader's in-sync replica bookkeeping (replica_isr.h).
 * Replica sets are a handful of ids: plain arrays, linear scans.
 */
#include "replica_isr.h"

#include <string.h>

static bool fl_ids_contain(const int32_t *ids, size_t n, int32_t id) {
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id) return true;
    return false;
}

bool fl_isr_contains(const fl_isr_t *s, int32_t id) {
    return fl_ids_contain(s->isr, s->isr_count, id);
}

/* in the ISR, or being added to it */
static bool fl_isr_maximal_contains(const fl_isr_t *s, int32_t id) {
    return fl_isr_contains(s, id) ||
           (s->inflight && fl_ids_contain(s->proposed, s->proposed_count, id));
}

static fl_isr_follower_t *fl_isr_follower(fl_isr_t *s, int32_t id) {
    for (size_t i = 0; i < s->follower_count; i++)
        if (s->followers[i].id == id) return &s->followers[i];
    return NULL;
}

void fl_isr_init(fl_isr_t *s, int32_t leader_id, int32_t epoch, int64_t epoch_start,
                 const int32_t *replicas, size_t replica_count, const int32_t *isr,
                 size_t isr_count, int32_t min_isr, int64_t max_lag_ms, int64_t now_ms) {
    memset(s, 0, sizeof(*s));
    s->leader_id = leader_id;
    s->leader_epoch = epoch;
    s->epoch_start_offset = epoch_start;
    s->min_isr = min_isr;
    s->max_lag_ms = max_lag_ms;
    for (size_t i = 0; i < isr_count && s->isr_count < FL_ISR_REPLICAS_MAX; i++)
        if (!fl_ids_contain(s->isr, s->isr_count, isr[i])) s->isr[s->isr_count++] = isr[i];
    if (!fl_isr_contains(s, leader_id) && s->isr_count < FL_ISR_REPLICAS_MAX)
        s->isr[s->isr_count++] = leader_id;
    for (size_t i = 0; i < replica_count && s->follower_count < FL_ISR_REPLICAS_MAX; i++) {
        if (replicas[i] == leader_id || fl_isr_follower(s, replicas[i])) continue;
        fl_isr_follower_t *f = &s->followers[s->follower_count++];
        f->id = replicas[i];
        f->log_end = -1;
        f->last_caught_up_ms = fl_isr_contains(s, replicas[i]) ? now_ms : 0;
        f->last_fetch_leader_end = -1;
        f->last_fetch_ms = 0;
        f->alive = true;
    }
}

void fl_isr_on_fetch(fl_isr_t *s, int32_t follower, int64_t fetch_offset, int64_t leader_end,
                     int64_t now_ms) {
    fl_isr_follower_t *f = fl_isr_follower(s, follower);
    if (!f) return;
    int64_t caught_up = -1;
    if (fetch_offset >= leader_end) caught_up = now_ms;
    else if (fetch_offset >= f->last_fetch_leader_end) caught_up = f->last_fetch_ms;
    if (caught_up > f->last_caught_up_ms) f->last_caught_up_ms = caught_up;
    f->log_end = fetch_offset;
    f->last_fetch_leader_end = leader_end;
    f->last_fetch_ms = now_ms;
}

int64_t fl_isr_high_watermark(const fl_isr_t *s, int64_t leader_end, int64_t current_hw) {
#ifndef FL_MUTATION_ACKS_BELOW_MIN_ISR /* a mutant: the minimum ISR ignored */
    if ((int64_t)s->isr_count < s->min_isr) return current_hw;
#endif
#ifdef FL_MUTATION_ACK_BEFORE_REPLICATE
    /* a mutant for the cluster fault suites (make test-cluster-mutants):
     * the leader's log end, whatever the followers hold */
    return leader_end > current_hw ? leader_end : current_hw;
#endif
    int64_t hw = leader_end;
    for (size_t i = 0; i < s->follower_count; i++) {
        const fl_isr_follower_t *f = &s->followers[i];
        if (fl_isr_maximal_contains(s, f->id) && f->log_end < hw) hw = f->log_end;
    }
    return hw > current_hw ? hw : current_hw;
}

size_t fl_isr_out_of_sync(const fl_isr_t *s, int64_t leader_end, int64_t now_ms,
                          int32_t out[FL_ISR_REPLICAS_MAX]) {
    if (s->inflight) return 0;
    size_t n = 0;
    for (size_t i = 0; i < s->isr_count; i++) {
        int32_t id = s->isr[i];
        if (id == s->leader_id) continue;
        const fl_isr_follower_t *f = fl_isr_follower((fl_isr_t *)s, id);
        bool caught_up = f && (f->log_end >= leader_end ||
                               now_ms - f->last_caught_up_ms <= s->max_lag_ms);
        if (!caught_up) out[n++] = id;
    }
    return n;
}

bool fl_isr_may_join(const fl_isr_t *s, int32_t follower, int64_t hw) {
    const fl_isr_follower_t *f = fl_isr_follower((fl_isr_t *)s, follower);
    return !s->inflight && f && f->alive && !fl_isr_contains(s, follower) && f->log_end >= hw &&
           f->log_end >= s->epoch_start_offset;
}

bool fl_isr_enough_for_acks_all(const fl_isr_t *s) {
#ifdef FL_MUTATION_ACKS_BELOW_MIN_ISR
    return s != NULL;
#endif
    return (int64_t)s->isr_count >= s->min_isr;
}

bool fl_isr_propose(fl_isr_t *s, const int32_t *remove, size_t remove_count, const int32_t *add,
                    size_t add_count) {
    if (s->inflight) return false;
    int32_t next[FL_ISR_REPLICAS_MAX];
    size_t n = 0;
    for (size_t i = 0; i < s->isr_count; i++)
        if (!fl_ids_contain(remove, remove_count, s->isr[i])) next[n++] = s->isr[i];
    for (size_t i = 0; i < add_count && n < FL_ISR_REPLICAS_MAX; i++)
        if (!fl_ids_contain(next, n, add[i]) && fl_isr_follower(s, add[i])) next[n++] = add[i];
    if (!fl_ids_contain(next, n, s->leader_id)) return false;
    bool same = n == s->isr_count;
    for (size_t i = 0; same && i < n; i++) same = fl_isr_contains(s, next[i]);
    if (same) return false;
    memcpy(s->proposed, next, n * sizeof(*next));
    s->proposed_count = n;
    s->inflight = true;
    return true;
}

void fl_isr_complete(fl_isr_t *s, const int32_t *committed, size_t count) {
    if (committed) {
        s->isr_count = 0;
        for (size_t i = 0; i < count && s->isr_count < FL_ISR_REPLICAS_MAX; i++)
            if (!fl_ids_contain(s->isr, s->isr_count, committed[i]))
                s->isr[s->isr_count++] = committed[i];
    }
    s->inflight = false;
    s->proposed_count = 0;
}
