/*
 * replica_tiering.c — a bucket replica's tiering round (replica_tiering.h).
 */
#include "replica_tiering.h"

#include <string.h>

#include "common_alloc.h"
#include "common_log.h"
#include "log_remote_log.h"
#include "log_tiering.h"

/* The log's segments as the decisions see them. Under r->lock. */
static fl_tier_segment_t *fl_tier_describe(const fl_log_tablet_t *log, size_t *n) {
    *n = log->segment_count;
    fl_tier_segment_t *v = fl_calloc(*n ? *n : 1, sizeof(*v));
    for (size_t i = 0; i < *n; i++) {
        const fl_log_segment_t *s = log->segments[i];
        v[i] = (fl_tier_segment_t){s->base_offset, s->next_offset, s->size, s->max_timestamp,
                                   !s->needs_index && s->synced_size >= s->size};
    }
    return v;
}

static void fl_tier_publish_bounds(fl_replica_t *r) {
    int64_t start, end;
    fl_remote_log_bounds(r->remote, &start, &end);
    atomic_store(&r->remote_start_offset, start);
    atomic_store(&r->remote_end_offset, end);
}

/* Whether a follower's view of the remote log may be behind: nothing was
 * told yet, or what was told is not what it published. */
static bool fl_tier_told_news(fl_replica_t *r) {
    int64_t start = atomic_load(&r->remote_told_start), end = atomic_load(&r->remote_told_end);
    if (start == INT64_MIN || end == INT64_MIN) return true;
    if (start < 0) start = INT64_MAX; /* told empty */
    return start != atomic_load(&r->remote_start_offset) ||
           end != atomic_load(&r->remote_end_offset);
}

/* Whether r leads in leader epoch `epoch` (-1: any) now; *now: the epoch. */
static bool fl_tier_leads(fl_replica_t *r, int32_t epoch, int32_t *now) {
    pthread_mutex_lock(&r->lock);
    bool leads = atomic_load(&r->role) == FL_REPLICA_LEADER &&
                 (epoch < 0 || r->leader_epoch == epoch);
    if (now) *now = r->leader_epoch;
    pthread_mutex_unlock(&r->lock);
    return leads;
}

typedef struct fl_tier_commit_ctx {
    const fl_tier_params_t *p;
    fl_replica_t *r;
    int32_t epoch;
} fl_tier_commit_ctx_t;

static int fl_tier_commit(void *arg, const char *manifest_path, int64_t start, int64_t end,
                          fl_error_t *err) {
    fl_tier_commit_ctx_t *c = arg;
    return c->p->commit(c->p->commit_ctx, c->r, c->epoch, manifest_path, start, end, err);
}

/* Uploads and commits as the leader of `epoch`; *copied segments went
 * up. A leadership lost meanwhile commits nothing. */
static int fl_tier_copy_and_expire(fl_replica_t *r, const fl_tier_params_t *p, int64_t now_ms,
                                   int32_t epoch, fl_tier_result_t *res, fl_error_t *err) {
    fl_remote_log_t *rl = r->remote;
    pthread_mutex_lock(&r->lock);
    if (r->log->offline) {
        pthread_mutex_unlock(&r->lock);
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "the log in %s is offline",
                          r->log->dir);
    }
    size_t n;
    fl_tier_segment_t *segs = fl_tier_describe(r->log, &n);
    fl_log_segment_t **ptrs = fl_calloc(n ? n : 1, sizeof(*ptrs));
    memcpy(ptrs, r->log->segments, n * sizeof(*ptrs));
    int64_t hw = fl_replica_high_watermark(r), local_end = r->log->log_end_offset;
    char *dir = fl_strdup(r->log->dir);
    pthread_mutex_unlock(&r->lock);

    fl_remote_manifest_t m;
    fl_remote_log_manifest(rl, &m);
    int64_t remote_end = fl_remote_manifest_end(&m);
    int rc = 0;
    size_t first = 0, count = 0;
    if (remote_end > local_end) {
        /* the local log lost records the remote log holds: never copy
         * offsets twice; expiry still runs */
        FL_WARN("bucket %d of table %lld: local log ends at %lld, before its remote log "
                "(%lld): not tiering it",
                r->bucket, (long long)r->table_id, (long long)local_end, (long long)remote_end);
    } else {
        count = fl_tiering_to_copy(segs, n, hw, remote_end, &first);
    }
    fl_remote_segment_t *added = fl_calloc(count ? count : 1, sizeof(*added));
    size_t up = 0;
    for (; up < count; up++) {
        /* rolled and durable: it no longer changes, and only this round
         * deletes a tiered replica's segments */
        rc = fl_remote_log_upload(rl, ptrs[first + up], dir, segs[first + up].next_offset,
                                  &added[up], err);
        if (rc) break;
    }
    size_t expired = fl_tiering_remote_expired(&m, now_ms, p->ttl_ms);
    if ((up || expired) && !fl_tier_leads(r, epoch, NULL)) {
        /* the new leader writes the remote log now: this round's uploads
         * go, its commit would overwrite theirs */
        for (size_t i = 0; i < up; i++) fl_remote_log_discard(rl, &added[i]);
        up = expired = 0;
    }
    if (up || expired) {
        fl_error_t ce;
        fl_tier_commit_ctx_t cc = {p, r, epoch};
        int crc = fl_remote_log_commit(rl, expired, added, up, p->commit ? fl_tier_commit : NULL,
                                       &cc, &ce);
        if (crc == FLUSS_ERR_NETWORK_EXCEPTION) {
            /* it may have committed: the next round reads the remote log
             * again and removes what no committed manifest names */
            r->tier_epoch = -1;
            if (!rc) rc = fl_err_set(err, crc, "%s", ce.msg);
        } else if (crc) {
            for (size_t i = 0; i < up; i++) fl_remote_log_discard(rl, &added[i]);
            if (!rc) rc = fl_err_set(err, crc, "%s", ce.msg);
        } else {
            res->copied = up;
            res->expired = expired;
            fl_tier_publish_bounds(r);
        }
    }
    fl_free(added);
    fl_remote_manifest_free(&m);
    fl_free(dir);
    fl_free(ptrs);
    fl_free(segs);
    return rc;
}

/* Deletes the local segments the committed remote log covers. */
static int fl_tier_delete_local(fl_replica_t *r, const fl_tier_params_t *p,
                                fl_tier_result_t *res, fl_error_t *err) {
    int64_t remote_end = atomic_load(&r->remote_end_offset);
    if (remote_end < 0) return 0;
    int rc = 0;
    pthread_mutex_lock(&r->bg_lock);
    pthread_mutex_lock(&r->lock);
    if (!r->log->offline) {
        size_t n;
        fl_tier_segment_t *segs = fl_tier_describe(r->log, &n);
        size_t k = fl_tiering_local_deletable(segs, n, remote_end, p->retain_offset,
                                              p->local_segments);
        fl_free(segs);
        if (k) {
            rc = fl_log_tablet_drop_oldest(r->log, k, err);
            atomic_store(&r->log_start_offset, r->log->log_start_offset);
            if (!rc) res->deleted = k;
        }
    }
    pthread_mutex_unlock(&r->lock);
    pthread_mutex_unlock(&r->bg_lock);
    return rc;
}

/* Whether a rolled segment still waits for its fsync and index (a server
 * defers them to the next flush, which the async mode may not run soon). */
static bool fl_tier_needs_flush(fl_replica_t *r) {
    pthread_mutex_lock(&r->lock);
    bool need = false;
    for (size_t i = 0; i + 1 < r->log->segment_count && !need; i++) {
        const fl_log_segment_t *s = r->log->segments[i];
        need = s->needs_index || s->synced_size < s->size;
    }
    pthread_mutex_unlock(&r->lock);
    return need;
}

int fl_replica_tier(fl_replica_t *r, const fl_tier_params_t *p, int64_t now_ms,
                    fl_tier_result_t *res, fl_error_t *err) {
    memset(res, 0, sizeof(*res));
    if (!r->remote || atomic_load(&r->deleted)) return 0;
    int32_t epoch;
    if (!fl_tier_leads(r, -1, &epoch)) {
        /* a follower: the bucket's leader writes the remote log (every
         * replica sees the same remote.data.dir); this one reads what it
         * committed — when the coordinator told of a commit it has not
         * read, or told nothing yet — and deletes the local segments
         * that covers */
        if (fl_tier_told_news(r)) {
            if (fl_remote_log_refresh(r->remote, err)) return err->code;
            fl_tier_publish_bounds(r);
        }
        return fl_tier_delete_local(r, p, res, err);
    }
    if (r->tier_epoch != epoch) {
        /* a new leadership: the commits of the leaders before it, then
         * what an interrupted round (this server's or theirs) left */
        if (fl_remote_log_refresh(r->remote, err)) return err->code;
        fl_tier_publish_bounds(r);
        fl_remote_log_clean_orphans(r->remote);
        r->tier_epoch = epoch;
    }
    /* rolled segments become durable first: only those are copied */
    if (fl_tier_needs_flush(r) && fl_replica_flush(r, err)) return err->code;
    int rc = fl_tier_copy_and_expire(r, p, now_ms, epoch, res, err);
    /* what earlier rounds committed may go even when this one failed */
    fl_error_t de;
    int drc = fl_tier_delete_local(r, p, res, &de);
    if (!rc && drc) rc = fl_err_set(err, drc, "%s", de.msg);
    return rc;
}
