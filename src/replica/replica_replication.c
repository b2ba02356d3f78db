/*
 * replica_replication.c — leader and follower roles of a bucket replica
 * (replica_replication.h).
 */
#include "replica_replication.h"

#include <string.h>

#include "common_log.h"
#include "replica_manager.h"

void fl_replica_become_leader(fl_replica_t *r, const fl_replica_leadership_t *l, int64_t now_ms) {
    pthread_mutex_lock(&r->lock);
    bool same = atomic_load(&r->role) == FL_REPLICA_LEADER && r->replicated &&
                r->leader_epoch == l->leader_epoch;
    atomic_store(&r->role, FL_REPLICA_LEADER);
    r->leader_epoch = l->leader_epoch;
    r->leader_id = l->self;
    if (!same) {
        r->replicated = l->replica_count > 1;
        if (r->replicated)
            fl_isr_init(&r->isr, l->self, l->leader_epoch, r->log->log_end_offset, l->replicas,
                        l->replica_count, l->isr, l->isr_count, l->min_isr, l->max_lag_ms,
                        now_ms);
    }
    pthread_mutex_unlock(&r->lock);
}

void fl_replica_become_follower(fl_replica_t *r, int32_t leader, int32_t leader_epoch) {
    pthread_mutex_lock(&r->lock);
    atomic_store(&r->role, FL_REPLICA_FOLLOWER);
    r->replicated = false;
    r->leader_id = leader;
    r->leader_epoch = leader_epoch;
    pthread_mutex_unlock(&r->lock);
}

int fl_replica_follower_append(fl_replica_t *r, uint8_t *records, size_t len, int64_t leader_hw,
                               fl_error_t *err) {
    pthread_mutex_lock(&r->lock);
    int rc = 0;
    bool moved = false, flush = false;
    if (len) {
        fl_append_result_t ar;
        rc = fl_log_tablet_append_follower(r->log, records, len, &ar, err);
        if (!rc) {
            int64_t end = r->log->log_end_offset;
            r->end_bytes += len;
            r->unflushed_messages += end - ar.base_offset;
            atomic_store(&r->log_end_offset, end);
            if (r->unflushed_messages >= r->rm->durability.flush_interval_messages) flush = true;
        } else if (r->log->offline) {
            atomic_store(&r->offline, true);
        }
    }
    if (!rc) moved = fl_replica_hw_advance_locked(r, leader_hw);
    pthread_mutex_unlock(&r->lock);
    if (flush) fl_replica_schedule_flush(r);
    if (moved) fl_replica_notify(r);
    return rc;
}

/* Under lock: the ISR changes the leader decides, applied at once (their
 * commit through the coordinator comes with leader failover). */
static void fl_replica_isr_apply(fl_replica_t *r, const int32_t *remove, size_t nr,
                                 const int32_t *add, size_t na) {
    if (!fl_isr_propose(&r->isr, remove, nr, add, na)) return;
    int32_t isr[FL_ISR_REPLICAS_MAX];
    size_t n = r->isr.proposed_count;
    memcpy(isr, r->isr.proposed, n * sizeof(int32_t));
    fl_isr_complete(&r->isr, isr, n);
    FL_INFO("bucket %d of table %lld: ISR now %zu replica(s) (%s %d)", r->bucket,
            (long long)r->table_id, n, nr ? "without" : "with", nr ? remove[0] : add[0]);
}

static int64_t fl_replica_leader_end(const fl_replica_t *r) {
    return r->rm->durability.sync ? atomic_load(&((fl_replica_t *)r)->flushed_offset)
                                  : r->log->log_end_offset;
}

void fl_replica_follower_fetched(fl_replica_t *r, int32_t follower, int64_t fetch_offset,
                                 int64_t now_ms) {
    pthread_mutex_lock(&r->lock);
    bool moved = false;
    if (r->replicated && atomic_load(&r->role) == FL_REPLICA_LEADER) {
        int64_t end = r->log->log_end_offset;
        fl_isr_on_fetch(&r->isr, follower, fetch_offset, end, now_ms);
        int64_t hw = atomic_load(&r->high_watermark);
        if (!fl_isr_contains(&r->isr, follower) && fl_isr_may_join(&r->isr, follower, hw))
            fl_replica_isr_apply(r, NULL, 0, &follower, 1);
        moved = fl_replica_hw_advance_locked(
            r, fl_isr_high_watermark(&r->isr, fl_replica_leader_end(r), hw));
    }
    pthread_mutex_unlock(&r->lock);
    if (moved) fl_replica_notify(r);
}

void fl_replica_isr_check(fl_replica_t *r, int64_t now_ms) {
    pthread_mutex_lock(&r->lock);
    bool moved = false;
    if (r->replicated && atomic_load(&r->role) == FL_REPLICA_LEADER) {
        int32_t out[FL_ISR_REPLICAS_MAX];
        size_t n = fl_isr_out_of_sync(&r->isr, r->log->log_end_offset, now_ms, out);
        if (n) fl_replica_isr_apply(r, out, n, NULL, 0);
        moved = fl_replica_hw_advance_locked(
            r, fl_isr_high_watermark(&r->isr, fl_replica_leader_end(r),
                                     atomic_load(&r->high_watermark)));
    }
    pthread_mutex_unlock(&r->lock);
    if (moved) fl_replica_notify(r);
}

bool fl_replica_enough_isr(fl_replica_t *r, int32_t *isr_size, int32_t *min_isr) {
    pthread_mutex_lock(&r->lock);
    bool ok = !r->replicated || fl_isr_enough_for_acks_all(&r->isr);
    *isr_size = r->replicated ? (int32_t)r->isr.isr_count : 1;
    *min_isr = r->replicated ? r->isr.min_isr : 1;
    pthread_mutex_unlock(&r->lock);
    return ok;
}

int fl_replica_read_to_end(fl_replica_t *r, int64_t offset, size_t max_bytes, fl_buf_t *out,
                           fl_error_t *err) {
    pthread_mutex_lock(&r->lock);
    int rc = fl_log_tablet_read(r->log, offset, max_bytes, r->log->log_end_offset, out, err);
    pthread_mutex_unlock(&r->lock);
    return rc;
}
