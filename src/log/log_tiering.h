/*
 * log_tiering.h — the decisions of a bucket's tiering round (Fluss
 * LogTieringTask's candidate choice, LogTablet's deletion of segments
 * already remote, RemoteLogTablet's expiry), as pure functions over a
 * description of the local segments and the remote manifest, so that they
 * are tested without files:
 *
 *   copy     rolled segments (never the active one), in offset order from
 *            the remote end on, each whole below the high watermark
 *            (remote storage holds only committed records) and already
 *            durable locally (fsynced, index written); the first one that
 *            cannot go yet stops the run, so the remote log has no holes
 *            of our making;
 *   delete   the oldest local segments that lie wholly below the remote
 *            end — only what a committed manifest covers — and below the
 *            retain offset (a primary-key table's changelog after its
 *            newest KV snapshot stays: recovery replays it), keeping at
 *            least `keep` segments (table.log.tiered.local-segments, the
 *            active one included);
 *   expire   the oldest remote segments whose newest record is older than
 *            table.log.ttl (ttl <= 0: never).
 *
 * Thread rule: none (plain values).
 */
#ifndef FL_LOG_TIERING_H
#define FL_LOG_TIERING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log_remote_manifest.h"

/* A segment's bytes must fit PbRemoteLogSegment.segment_size_in_bytes. */
#define FL_TIER_SEGMENT_BYTES_MAX ((uint64_t)INT32_MAX)

typedef struct fl_tier_segment {
    int64_t base_offset;
    int64_t next_offset;   /* = the next segment's base offset */
    uint64_t size;
    int64_t max_timestamp;
    bool durable;          /* fsynced and indexed: it no longer changes */
} fl_tier_segment_t;

/* Segments [*first, *first + returned) of the n local ones (ascending, the
 * last active) go to remote storage now. remote_end: -1 when nothing is. */
size_t fl_tiering_to_copy(const fl_tier_segment_t *segs, size_t n, int64_t high_watermark,
                          int64_t remote_end, size_t *first);

/* How many of the oldest local segments may be deleted. */
size_t fl_tiering_local_deletable(const fl_tier_segment_t *segs, size_t n, int64_t remote_end,
                                  int64_t retain_offset, size_t keep);

/* How many of the oldest remote segments have expired at now_ms. */
size_t fl_tiering_remote_expired(const fl_remote_manifest_t *m, int64_t now_ms, int64_t ttl_ms);

#endif
