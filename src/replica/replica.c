/*
 * replica.c — a bucket replica's offsets, appends, reads and flushes
 * (replica.h).
 */
#include "replica.h"

#include <string.h>
#include <time.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"
#include "log_remote_log.h"
#include "replica_manager.h"
#include "replica_replication.h"

static void fl_replica_destroy(fl_replica_t *r) {
    fl_replica_kv_reset(&r->kv, atomic_load(&r->deleted));
    /* a dropped bucket's remote files go with it */
    fl_remote_log_close(r->remote, atomic_load(&r->deleted));
    if (r->log) {
        if (atomic_load(&r->deleted)) {
            fl_error_t e;
            if (fl_log_tablet_delete(r->log, &e)) FL_WARN("dropping a bucket log: %s", e.msg);
        } else {
            fl_log_tablet_close(r->log);
        }
    }
    fl_epoch_cache_free(&r->epochs);
    pthread_mutex_destroy(&r->lock);
    pthread_mutex_destroy(&r->bg_lock);
    fl_free(r->table_dir);
    fl_free(r);
}

void fl_replica_ref(fl_replica_t *r) { atomic_fetch_add(&r->refs, 1); }

bool fl_replica_tryref(fl_replica_t *r) {
    int n = atomic_load(&r->refs);
    while (n > 0)
        if (atomic_compare_exchange_weak(&r->refs, &n, n + 1)) return true;
    return false;
}

void fl_replica_unref(fl_replica_t *r) {
    if (r && atomic_fetch_sub(&r->refs, 1) == 1) fl_replica_destroy(r);
}

bool fl_replica_hw_advance_locked(fl_replica_t *r, int64_t hw) {
    int64_t end = r->log ? r->log->log_end_offset : hw;
    if (hw > end) hw = end;
    if (hw <= atomic_load(&r->high_watermark)) return false;
    atomic_store(&r->high_watermark, hw);
    /* bytes below it, for parked readers: exact at the end, else one more
     * (what wakes a reader waiting for any byte) */
    uint64_t b = atomic_load(&r->hw_bytes);
    atomic_store(&r->hw_bytes, hw == end ? r->end_bytes : (b + 1 < r->end_bytes ? b + 1 : b));
    return true;
}

void fl_replica_notify(fl_replica_t *r) {
    fl_replica_manager_t *rm = r->rm;
    if (rm && rm->on_watermark) rm->on_watermark(rm->on_watermark_ctx, r);
}

/* Under r->lock: publishes the log's offline latch once (the log set it
 * when a write or fsync failed); true when it was new, so the caller tells
 * the waiters after unlocking. */
static bool fl_replica_latch_locked(fl_replica_t *r, const char *why) {
    if (!r->log->offline || atomic_load(&r->offline)) return false;
    atomic_store(&r->offline, true);
    FL_ERROR("bucket %d of table %lld (partition %lld) is offline after a failed write or fsync, "
             "refusing writes until a restart recovers it; nothing after offset %lld is "
             "acknowledged: %s",
             r->bucket, (long long)r->table_id, (long long)r->partition_id,
             (long long)atomic_load(&r->high_watermark), why);
    return true;
}

static int fl_replica_offline_err(const fl_replica_t *r, fl_error_t *err) {
    return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION,
                      "the log in %s is offline after a failed write", r->log->dir);
}

static void fl_replica_flush_job(void *arg) {
    fl_replica_t *r = arg;
    fl_error_t e;
    /* a failure that took the replica offline was said once, loudly */
    if (fl_replica_flush(r, &e) && !fl_replica_offline(r))
        FL_WARN("flush of bucket %d of table %lld: %s", r->bucket, (long long)r->table_id, e.msg);
    fl_replica_unref(r);
}

void fl_replica_schedule_flush(fl_replica_t *r) {
    pthread_mutex_lock(&r->lock);
    bool submit = !r->flush_scheduled;
    if (submit) r->flush_asked_ms = fl_time_mono_ms();
    r->flush_scheduled = true;
    pthread_mutex_unlock(&r->lock);
    if (!submit) return;
    fl_replica_ref(r);
    if (r->rm && r->rm->workers) {
        fl_workq_submit(r->rm->workers, fl_replica_flush_job, r);
    } else {
        fl_replica_flush_job(r);
    }
}

int fl_replica_append(fl_replica_t *r, uint8_t *records, size_t len, int64_t now_ms,
                      fl_replica_append_t *res, fl_error_t *err) {
    memset(res, 0, sizeof(*res));
    const fl_durability_t *d = &r->rm->durability;
    pthread_mutex_lock(&r->lock);
    /* a client's records go into a leader's log only: the server's table
     * of leaders (metadata) and the replica's role change at different
     * moments, and a follower appending would take the write out of its
     * leader's sequence (and lose it at the next cut by epoch) */
    int role = atomic_load(&r->role);
    if (role == FL_REPLICA_UNTOLD) {
        pthread_mutex_unlock(&r->lock);
        return fl_err_set(err, FLUSS_ERR_NOT_LEADER_OR_FOLLOWER,
                          "Bucket %d of table %lld has not been told its leader here yet.",
                          r->bucket, (long long)r->table_id);
    }
    if (role != FL_REPLICA_LEADER) {
        int32_t leader = r->leader_id;
        pthread_mutex_unlock(&r->lock);
        return fl_err_set(err, FLUSS_ERR_NOT_LEADER_OR_FOLLOWER,
                          "This server follows server %d for bucket %d of table %lld: it does "
                          "not lead it.",
                          leader, r->bucket, (long long)r->table_id);
    }
    fl_append_result_t ar;
    int rc = fl_log_tablet_append(r->log, records, len, now_ms, &ar, err);
    if (rc) {
        bool latched = fl_replica_latch_locked(r, err->msg);
        pthread_mutex_unlock(&r->lock);
        if (latched) fl_replica_notify(r);
        return rc;
    }
    res->base_offset = ar.base_offset;
    res->end_offset = ar.last_offset + 1;
    res->duplicate = ar.duplicate;
    bool moved = false, flush = false;
    if (!ar.duplicate) {
        int64_t end = r->log->log_end_offset;
        r->end_bytes += len;
        r->unflushed_messages += end - ar.base_offset;
        atomic_store(&r->log_end_offset, end);
        /* (FL_MUTATION_ACK_BEFORE_FSYNC: a mutant for the storage fault
         * tests that acknowledges sync-mode appends before their fsync) */
#ifndef FL_MUTATION_ACK_BEFORE_FSYNC
        if (d->sync) {
            flush = true;
        } else
#endif
        if (r->replicated) {
            /* the followers move it (fl_replica_follower_fetched); they
             * are told of the new end: parked follower fetches wake */
            fl_replica_hw_from_isr_locked(r);
            moved = true;
        } else {
            atomic_store(&r->high_watermark, end);
            atomic_store(&r->hw_bytes, r->end_bytes);
            moved = true;
        }
        if (r->unflushed_messages >= d->flush_interval_messages) {
            flush = true;
            res->durable_wait_offset = end;
        }
    }
    pthread_mutex_unlock(&r->lock);
    if (flush) fl_replica_schedule_flush(r);
    if (moved) fl_replica_notify(r);
    return 0;
}

int64_t fl_replica_apply_bound(const fl_replica_t *r) {
    int64_t hw = fl_replica_high_watermark(r);
    if (!r->rm || r->rm->durability.flush_interval_messages == INT64_MAX) return hw;
    int64_t flushed = fl_replica_flushed(r);
    return flushed < hw ? flushed : hw;
}

int fl_replica_read(fl_replica_t *r, int64_t offset, size_t max_bytes, fl_buf_t *out,
                    fl_error_t *err) {
    pthread_mutex_lock(&r->lock);
    int rc = fl_log_tablet_read(r->log, offset, max_bytes, atomic_load(&r->high_watermark), out,
                                err);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

int64_t fl_replica_offset_for_time(fl_replica_t *r, int64_t ts, fl_error_t *err) {
    pthread_mutex_lock(&r->lock);
    int64_t off = fl_log_tablet_offset_for_time(r->log, ts, err);
    pthread_mutex_unlock(&r->lock);
    int64_t hw = fl_replica_high_watermark(r);
    return off > hw ? hw : off;
}

/* The durable mode's gathering window (log.flush.interval-ms with
 * log.flush.mode: sync): a flush waits this long after it was asked for,
 * so one fsync covers every append of the window. */
static void fl_replica_linger(fl_replica_t *r) {
    const fl_durability_t *d = &r->rm->durability;
    if (!d->sync || d->flush_interval_ms <= 0) return;
    pthread_mutex_lock(&r->lock);
    int64_t asked = r->flush_asked_ms;
    pthread_mutex_unlock(&r->lock);
    int64_t left = asked + d->flush_interval_ms - fl_time_mono_ms();
    if (left > 0) {
        struct timespec ts = {left / 1000, (left % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* Under r->lock: whether a flush may start. An offline log flushes
 * nothing (a failed fsync is never retried) and moves no offset; the
 * waiters still hear of it (notify), so none waits for its deadline. */
static int fl_replica_flush_check(fl_replica_t *r, fl_error_t *err) {
    return r->log->offline ? fl_replica_offline_err(r, err) : 0;
}

int fl_replica_flush(fl_replica_t *r, fl_error_t *err) {
    fl_replica_linger(r);
    pthread_mutex_lock(&r->bg_lock);
    pthread_mutex_lock(&r->lock);
    r->flush_scheduled = false;
    fl_log_flush_t *f = fl_malloc(sizeof(*f));
    bool work = false;
    int64_t end = r->log->log_end_offset;
    uint64_t end_bytes = r->end_bytes;
    int rc = fl_replica_flush_check(r, err);
    if (!rc) {
        work = fl_log_tablet_flush_begin(r->log, f);
        r->unflushed_messages = 0;
        /* _begin latches when it had to fsync under the lock and failed */
        if ((rc = fl_replica_flush_check(r, err))) fl_replica_latch_locked(r, "fsync failed");
    }
    pthread_mutex_unlock(&r->lock);

    if (!rc && work && fl_log_tablet_flush_run(f)) {
        rc = f->rc;
        *err = f->err;
    }

    pthread_mutex_lock(&r->lock);
    if (work) fl_log_tablet_flush_end(r->log, f); /* a failed run latches the log */
    if (rc) fl_replica_latch_locked(r, err->msg);
    else {
        if (atomic_load(&r->flushed_offset) < end) atomic_store(&r->flushed_offset, end);
        if (r->rm->durability.sync && r->replicated) {
            fl_replica_hw_from_isr_locked(r);
        } else if (r->rm->durability.sync && atomic_load(&r->high_watermark) < end) {
            atomic_store(&r->high_watermark, end);
            atomic_store(&r->hw_bytes, end_bytes);
        }
    }
    pthread_mutex_unlock(&r->lock);
    pthread_mutex_unlock(&r->bg_lock);
    fl_free(f);
    atomic_fetch_add(&r->flushes, 1);
    fl_replica_notify(r); /* every flush tells the waiters, failed ones too */
    return rc;
}

int fl_replica_put_stats(fl_replica_t *r, int64_t base_offset, uint32_t crc, const uint8_t *stats,
                         size_t len, fl_error_t *err) {
    pthread_mutex_lock(&r->lock);
    int rc = r->log ? fl_log_tablet_put_stats(r->log, base_offset, crc, stats, len, err) : 0;
    pthread_mutex_unlock(&r->lock);
    return rc;
}

bool fl_replica_get_stats(fl_replica_t *r, int64_t base_offset, uint32_t crc, fl_buf_t *out) {
    pthread_mutex_lock(&r->lock);
    bool got = r->log && fl_log_tablet_get_stats(r->log, base_offset, crc, out);
    pthread_mutex_unlock(&r->lock);
    return got;
}

size_t fl_replica_expire_writers(fl_replica_t *r, int64_t now_ms, int64_t expiration_ms) {
    pthread_mutex_lock(&r->lock);
    size_t n = fl_log_tablet_expire_writers(r->log, now_ms, expiration_ms);
    pthread_mutex_unlock(&r->lock);
    return n;
}

int fl_replica_apply_retention(fl_replica_t *r, int64_t now_ms, fl_error_t *err) {
    /* a tiered replica's segments go by tiering only (replica_tiering.h):
     * its TTL applies to its remote segments */
    if (r->remote) return 0;
    pthread_mutex_lock(&r->bg_lock);
    pthread_mutex_lock(&r->lock);
    int rc = fl_log_tablet_apply_retention(r->log, now_ms, fl_replica_retain_from(r), err);
    atomic_store(&r->log_start_offset, r->log->log_start_offset);
    pthread_mutex_unlock(&r->lock);
    pthread_mutex_unlock(&r->bg_lock);
    return rc;
}
