/*
 * replica_tiering.h — one tiering round of a bucket replica (Fluss
 * LogTieringTask.runOnce with LogTablet's deletion of segments already in
 * remote storage): rolled, durable segments below the high watermark are
 * uploaded, the remote segments past table.log.ttl expire, a new manifest
 * is committed, and only then are local segments beyond
 * table.log.tiered.local-segments deleted — never one that a committed
 * manifest does not cover. The decisions are log_tiering.h's; this file
 * holds the locking:
 *
 *   - the segment list is read under the replica's `lock` (appends roll
 *     segments); a rolled, durable segment never changes, and nothing but
 *     this round deletes segments of a tiered replica (its local TTL is
 *     off), so the uploads read it with no lock held: appends, reads and
 *     flushes go on meanwhile;
 *   - the deletion takes `bg_lock` then `lock`, like retention;
 *   - rolled segments still waiting for their deferred fsync and index are
 *     flushed first (fl_replica_flush), as Fluss flushes a rolled segment
 *     right after the roll.
 *
 * In a cluster only the bucket's leader uploads, expires and commits
 * (checked again before its commit, and the commit itself is the
 * coordinator's, which refuses a leader epoch that is not the bucket's
 * current one: a leadership lost meanwhile commits nothing; a commit that
 * was not answered makes the next round read the remote log again); a leader's first round of a leadership reads the remote log
 * again and removes what an interrupted round left. A follower's round
 * reads the committed manifest — when the coordinator told it of a commit
 * it has not read (NOTIFY_REMOTE_LOG_OFFSETS), or told nothing yet — and
 * deletes the local segments it covers.
 *
 * Thread rule: one round per replica at a time (the tablet server runs
 * them one after another on a worker); blocks on storage I/O.
 */
#ifndef FL_REPLICA_TIERING_H
#define FL_REPLICA_TIERING_H

#include <stddef.h>
#include <stdint.h>

#include "common_error.h"
#include "replica.h"

/* The commit point of r's remote log for its leader of leader_epoch
 * (fl_remote_commit_fn with the bucket and epoch it commits for). */
typedef int (*fl_tier_commit_fn)(void *ctx, fl_replica_t *r, int32_t leader_epoch,
                                 const char *manifest_path, int64_t start_offset,
                                 int64_t end_offset, fl_error_t *err);

typedef struct fl_tier_params {
    size_t local_segments; /* table.log.tiered.local-segments (>= 1) */
    int64_t ttl_ms;        /* table.log.ttl, for remote segments; <= 0: kept */
    /* Local segments at or above this offset stay (a primary-key bucket's
     * changelog after its newest KV snapshot); INT64_MAX: no bound. */
    int64_t retain_offset;
    /* Who commits (a tablet server: the coordinator, asked with the
     * leader epoch); NULL: the remote log writes its handle itself. */
    fl_tier_commit_fn commit;
    void *commit_ctx;
} fl_tier_params_t;

typedef struct fl_tier_result {
    size_t copied;         /* segments uploaded and committed */
    size_t expired;        /* remote segments expired */
    size_t deleted;        /* local segments deleted */
} fl_tier_result_t;

/* One round on r (a replica with a remote log; others are left alone). */
int fl_replica_tier(fl_replica_t *r, const fl_tier_params_t *p, int64_t now_ms,
                    fl_tier_result_t *res, fl_error_t *err);

#endif
