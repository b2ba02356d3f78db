/*
 * replica_replication.c — leader and follower roles of a bucket replica
 * (replica_replication.h).
 */
#include "replica_replication.h"

#include <string.h>

#include "common_alloc.h"
#include "common_log.h"
#include "replica_manager.h"

/* (lock) Rewrites the bucket's leader-epoch-checkpoint from r->epochs. A
 * failed write takes the replica offline (fail-stop): a leader that
 * cannot record where its epoch began could answer its followers wrong
 * after a restart. */
static void fl_replica_epochs_store_locked(fl_replica_t *r) {
    fl_error_t e;
    if (!r->log || !fl_epoch_cache_store(r->log->dir, &r->epochs, &e)) return;
    FL_ERROR("bucket %d of table %lld: %s; the replica is offline", r->bucket,
             (long long)r->table_id, e.msg);
    atomic_store(&r->offline, true);
}

void fl_replica_become_leader(fl_replica_t *r, const fl_replica_leadership_t *l, int64_t now_ms) {
    pthread_mutex_lock(&r->lock);
    /* a new epoch begins at the log end (an epoch already recorded, as
     * every local bucket's epoch 0, stays where it began) */
    if (r->log && l->leader_epoch > fl_epoch_cache_latest(&r->epochs) &&
        fl_epoch_cache_assign(&r->epochs, l->leader_epoch, r->log->log_end_offset))
        fl_replica_epochs_store_locked(r);
    r->truncation_pending = false;
    bool same = atomic_load(&r->role) == FL_REPLICA_LEADER && r->replicated &&
                r->leader_epoch == l->leader_epoch;
    atomic_store(&r->role, FL_REPLICA_LEADER);
    atomic_store(&r->lead_epoch, l->leader_epoch);
    r->leader_epoch = l->leader_epoch;
    r->leader_id = l->self;
    r->hw_known = true;
    if (same) {
        /* a newer ISR of the coordinator's (a member it removed after its
         * server went): taken as committed */
        if (l->bucket_epoch > r->bucket_epoch) {
            fl_isr_complete(&r->isr, l->isr, l->isr_count);
            r->isr_unsent = false;
            r->bucket_epoch = l->bucket_epoch;
        }
    } else {
        r->bucket_epoch = l->bucket_epoch;
        r->isr_unsent = false;
        r->replicated = l->replica_count > 1;
        if (r->replicated)
            fl_isr_init(&r->isr, l->self, l->leader_epoch, r->log->log_end_offset, l->replicas,
                        l->replica_count, l->isr, l->isr_count, l->min_isr, l->max_lag_ms,
                        now_ms);
    }
    pthread_mutex_unlock(&r->lock);
}

/* (lock) Cuts the log at offset (nothing after it stays); the high
 * watermark follows it down. */
static int fl_replica_truncate_locked(fl_replica_t *r, int64_t offset, fl_error_t *err) {
    if (!r->log) return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "the log is offline");
    if (offset >= r->log->log_end_offset) return 0;
    int rc = fl_log_tablet_truncate(&r->log, offset, err);
    if (!r->log || r->log->offline) {
        atomic_store(&r->offline, true);
        return rc ? rc : fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "the log is offline");
    }
    int64_t end = r->log->log_end_offset;
    atomic_store(&r->log_end_offset, end);
    if (atomic_load(&r->high_watermark) > end) atomic_store(&r->high_watermark, end);
    if (atomic_load(&r->flushed_offset) > end) atomic_store(&r->flushed_offset, end);
    size_t before = r->epochs.count;
    fl_epoch_cache_truncate_end(&r->epochs, end);
    if (r->epochs.count != before) fl_replica_epochs_store_locked(r);
    return rc;
}

int fl_replica_check_leader_epoch(fl_replica_t *r, int32_t leader_epoch, fl_error_t *err) {
    pthread_mutex_lock(&r->lock);
    int32_t now = r->leader_epoch;
    pthread_mutex_unlock(&r->lock);
    if (leader_epoch >= now) return 0;
    return fl_err_set(err, FLUSS_ERR_FENCED_LEADER_EPOCH_EXCEPTION,
                      "Leader epoch %d of bucket %d of table %lld is older than this replica's "
                      "epoch %d.",
                      leader_epoch, r->bucket, (long long)r->table_id, now);
}

void fl_replica_become_follower(fl_replica_t *r, int32_t leader, int32_t leader_epoch) {
    pthread_mutex_lock(&r->lock);
    bool same = atomic_load(&r->role) == FL_REPLICA_FOLLOWER && r->leader_id == leader &&
                r->leader_epoch == leader_epoch;
    /* first: a write this replica appended as leader is not covered by
     * the high watermark it takes from the new leader */
    atomic_store(&r->lead_epoch, -1);
    /* what this replica holds past where its log and the new leader's
     * agree may never have been committed: it is cut by epoch
     * (fl_replica_follower_truncate) before the first fetch */
    if (!same) r->truncation_pending = true;
#ifdef FL_MUTATION_TRUNCATE_TO_HW
    /* a mutant for D9 (make test-cluster-mutants): the rule before
     * KIP-101, cut at the replica's own high watermark at once and fetch
     * from there, whatever the new leader holds */
    if (!same && r->hw_known) {
        fl_error_t e;
        (void)fl_replica_truncate_locked(r, atomic_load(&r->high_watermark), &e);
        r->truncation_pending = false;
    }
#endif
    atomic_store(&r->role, FL_REPLICA_FOLLOWER);
    r->replicated = false;
    r->leader_id = leader;
    r->leader_epoch = leader_epoch;
    pthread_mutex_unlock(&r->lock);
}

bool fl_replica_truncation_pending(fl_replica_t *r, int32_t *leader_epoch) {
    pthread_mutex_lock(&r->lock);
    bool pending = r->truncation_pending && atomic_load(&r->role) == FL_REPLICA_FOLLOWER;
    if (leader_epoch) *leader_epoch = r->leader_epoch;
    pthread_mutex_unlock(&r->lock);
    return pending;
}

int fl_replica_leader_epochs(fl_replica_t *r, int32_t leader_epoch, fl_epoch_entry_t **entries,
                             size_t *count, int64_t *log_end, fl_error_t *err) {
    pthread_mutex_lock(&r->lock);
    int rc = 0;
    if (atomic_load(&r->role) != FL_REPLICA_LEADER || !r->log)
        rc = fl_err_set(err, FLUSS_ERR_NOT_LEADER_OR_FOLLOWER,
                        "This server does not lead bucket %d of table %lld.", r->bucket,
                        (long long)r->table_id);
    else if (leader_epoch < r->leader_epoch)
        rc = fl_err_set(err, FLUSS_ERR_FENCED_LEADER_EPOCH_EXCEPTION,
                        "Leader epoch %d of bucket %d of table %lld is older than the "
                        "leader's %d.",
                        leader_epoch, r->bucket, (long long)r->table_id, r->leader_epoch);
    else if (leader_epoch > r->leader_epoch)
        rc = fl_err_set(err, FLUSS_ERR_NOT_LEADER_OR_FOLLOWER,
                        "Leader epoch %d of bucket %d of table %lld is not known here yet "
                        "(this leader is in %d).",
                        leader_epoch, r->bucket, (long long)r->table_id, r->leader_epoch);
    if (!rc) {
        *count = r->epochs.count;
        *entries = fl_malloc((r->epochs.count ? r->epochs.count : 1) * sizeof(**entries));
        memcpy(*entries, r->epochs.entries, r->epochs.count * sizeof(**entries));
        *log_end = r->log->log_end_offset;
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}

int fl_replica_follower_truncate(fl_replica_t *r, int32_t leader, int32_t leader_epoch,
                                 const fl_epoch_entry_t *entries, size_t count,
                                 int64_t leader_end, fl_error_t *err) {
    pthread_mutex_lock(&r->lock);
    int rc = 0;
    if (!r->truncation_pending || atomic_load(&r->role) != FL_REPLICA_FOLLOWER ||
        r->leader_id != leader || r->leader_epoch != leader_epoch || !r->log) {
        pthread_mutex_unlock(&r->lock);
        return 0; /* a newer leadership arrived meanwhile: its own round decides */
    }
    fl_epoch_cache_t theirs = {(fl_epoch_entry_t *)entries, count, count};
    int64_t end = r->log->log_end_offset;
    int64_t to = fl_epoch_divergence(&r->epochs, end, &theirs, leader_end);
    if (to == FL_EPOCH_OFFSET_UNDEFINED) {
        /* nothing in common: what the high watermark covers (or, for a
         * replica opened since, nothing) is all that is certain */
        to = r->hw_known ? atomic_load(&r->high_watermark) : atomic_load(&r->log_start_offset);
        FL_WARN("bucket %d of table %lld: no leader epoch in common with leader %d; cut at "
                "%lld",
                r->bucket, (long long)r->table_id, leader, (long long)to);
    }
    if (to < end) {
        FL_INFO("bucket %d of table %lld: log cut at %lld (was %lld) by leader %d's epochs",
                r->bucket, (long long)r->table_id, (long long)to, (long long)end, leader);
        rc = fl_replica_truncate_locked(r, to, err);
    }
    if (!rc) {
        /* the epochs this replica will fetch from its leader */
        bool changed = false;
        for (size_t i = 0; i < count; i++)
            if (entries[i].epoch > fl_epoch_cache_latest(&r->epochs))
                changed |= fl_epoch_cache_assign(&r->epochs, entries[i].epoch,
                                                 entries[i].start_offset);
        if (changed) fl_replica_epochs_store_locked(r);
        r->truncation_pending = false;
        r->hw_known = true;
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}

int fl_replica_follower_reset(fl_replica_t *r, int32_t leader, int64_t offset,
                              fl_error_t *err) {
    pthread_mutex_lock(&r->lock);
    int rc = 0;
    if (r->truncation_pending || atomic_load(&r->role) != FL_REPLICA_FOLLOWER ||
        r->leader_id != leader || !r->log || offset <= r->log->log_end_offset) {
        pthread_mutex_unlock(&r->lock);
        return 0; /* another leader, or the log reaches it after all */
    }
    FL_INFO("bucket %d of table %lld: log starts again at %lld (was %lld..%lld): leader %d's "
            "log begins there",
            r->bucket, (long long)r->table_id, (long long)offset,
            (long long)r->log->log_start_offset, (long long)r->log->log_end_offset, leader);
    rc = fl_log_tablet_reset_at(&r->log, offset, err);
    if (!r->log || r->log->offline) {
        atomic_store(&r->offline, true);
        if (!rc) rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "the log is offline");
    } else {
        /* what lies below is the leader's, committed and in remote storage */
        atomic_store(&r->log_start_offset, r->log->log_start_offset);
        atomic_store(&r->log_end_offset, r->log->log_end_offset);
        atomic_store(&r->high_watermark, r->log->log_end_offset);
        atomic_store(&r->flushed_offset, r->log->log_end_offset);
        r->unflushed_messages = 0;
        size_t before = r->epochs.count;
        fl_epoch_cache_truncate_start(&r->epochs, offset);
        if (r->epochs.count != before) fl_replica_epochs_store_locked(r);
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}

int fl_replica_follower_append(fl_replica_t *r, int32_t leader, uint8_t *records, size_t len,
                               int64_t leader_hw, fl_error_t *err) {
    pthread_mutex_lock(&r->lock);
    int rc = 0;
    bool moved = false, flush = false;
    if (r->truncation_pending || atomic_load(&r->role) != FL_REPLICA_FOLLOWER ||
        r->leader_id != leader) {
        /* fetched from a leader it no longer follows, or before its cut */
        pthread_mutex_unlock(&r->lock);
        return 0;
    }
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

bool fl_replica_hw_from_isr_locked(fl_replica_t *r) {
    int64_t end = r->rm->durability.sync ? atomic_load(&r->flushed_offset)
                                         : r->log->log_end_offset;
    return fl_replica_hw_advance_locked(
        r, fl_isr_high_watermark(&r->isr, end, atomic_load(&r->high_watermark)));
}

void fl_replica_follower_fetched(fl_replica_t *r, int32_t follower, int64_t fetch_offset,
                                 int64_t now_ms) {
    pthread_mutex_lock(&r->lock);
    bool moved = false;
    if (r->replicated && atomic_load(&r->role) == FL_REPLICA_LEADER) {
        int64_t end = r->log->log_end_offset;
        fl_isr_on_fetch(&r->isr, follower, fetch_offset, end, now_ms);
        int64_t hw = atomic_load(&r->high_watermark);
        /* caught up: proposed to the coordinator (ADJUST_ISR); the high
         * watermark counts it from now on */
        if (!fl_isr_contains(&r->isr, follower) && fl_isr_may_join(&r->isr, follower, hw) &&
            fl_isr_propose(&r->isr, NULL, 0, &follower, 1))
            r->isr_unsent = true;
        moved = fl_replica_hw_from_isr_locked(r);
    }
    pthread_mutex_unlock(&r->lock);
    if (moved) fl_replica_notify(r);
}

void fl_replica_isr_check(fl_replica_t *r, int64_t now_ms) {
    pthread_mutex_lock(&r->lock);
    bool moved = false;
    if (r->replicated && atomic_load(&r->role) == FL_REPLICA_LEADER) {
        /* a follower that fell behind leaves once the coordinator has
         * committed it (ADJUST_ISR): until then acks=all still waits for
         * it, so no replica the coordinator may elect lacks an
         * acknowledged batch */
        int32_t out[FL_ISR_REPLICAS_MAX];
        size_t n = fl_isr_out_of_sync(&r->isr, r->log->log_end_offset, now_ms, out);
        if (n && fl_isr_propose(&r->isr, out, n, NULL, 0)) {
            FL_WARN("bucket %d of table %lld: replica %d is out of sync (no catch-up within "
                    "%lld ms): proposing an ISR without it",
                    r->bucket, (long long)r->table_id, out[0], (long long)r->isr.max_lag_ms);
            r->isr_unsent = true;
        }
        moved = fl_replica_hw_from_isr_locked(r);
    }
    pthread_mutex_unlock(&r->lock);
    if (moved) fl_replica_notify(r);
}

int fl_replica_read_to_end(fl_replica_t *r, int64_t offset, size_t max_bytes, fl_buf_t *out,
                           fl_error_t *err) {
    pthread_mutex_lock(&r->lock);
    int rc = fl_log_tablet_read(r->log, offset, max_bytes, r->log->log_end_offset, out, err);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

bool fl_replica_isr_proposal(fl_replica_t *r, fl_isr_proposal_t *out) {
    pthread_mutex_lock(&r->lock);
    bool send = r->isr_unsent && r->replicated && r->isr.inflight &&
                atomic_load(&r->role) == FL_REPLICA_LEADER;
    if (send) {
        out->leader_epoch = r->leader_epoch;
        out->bucket_epoch = r->bucket_epoch;
        out->count = r->isr.proposed_count;
        memcpy(out->isr, r->isr.proposed, out->count * sizeof(int32_t));
        r->isr_unsent = false;
    }
    pthread_mutex_unlock(&r->lock);
    return send;
}

void fl_replica_isr_answer(fl_replica_t *r, int32_t leader_epoch, const int32_t *isr,
                           size_t count, int32_t bucket_epoch) {
    pthread_mutex_lock(&r->lock);
    bool moved = false;
    if (r->replicated && atomic_load(&r->role) == FL_REPLICA_LEADER &&
        r->leader_epoch == leader_epoch) {
        if (isr && bucket_epoch > r->bucket_epoch) {
            fl_isr_complete(&r->isr, isr, count);
            r->bucket_epoch = bucket_epoch;
            FL_INFO("bucket %d of table %lld: ISR now %zu replica(s) (bucket epoch %d)",
                    r->bucket, (long long)r->table_id, r->isr.isr_count, bucket_epoch);
        } else {
            fl_isr_complete(&r->isr, NULL, 0); /* refused: proposed again when it holds */
        }
        moved = fl_replica_hw_from_isr_locked(r);
    }
    pthread_mutex_unlock(&r->lock);
    if (moved) fl_replica_notify(r);
}

int fl_replica_check_acks_all(fl_replica_t *r, fl_error_t *err) {
    pthread_mutex_lock(&r->lock);
    bool ok = !r->replicated || fl_isr_enough_for_acks_all(&r->isr);
    int32_t size = r->replicated ? (int32_t)r->isr.isr_count : 1;
    int32_t min = r->replicated ? r->isr.min_isr : 1;
    pthread_mutex_unlock(&r->lock);
    if (ok) return 0;
    return fl_err_set(err, FLUSS_ERR_NOT_ENOUGH_REPLICAS_EXCEPTION,
                      "The size of the current ISR (%d) of bucket %d of table %lld is below "
                      "log.replica.min-in-sync-replicas-number (%d).",
                      size, r->bucket, (long long)r->table_id, min);
}
