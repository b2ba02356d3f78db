/*
 * replica_epoch.h — a bucket replica's leader-epoch cache: which leader
 * epoch began at which log offset (Fluss's and Kafka's LeaderEpochFileCache),
 * kept durable beside the log in `leader-epoch-checkpoint`, and the
 * follower truncation it makes possible (Kafka's KIP-101 and KIP-279): a
 * follower that comes back asks the leader where its latest epoch ended and
 * cuts its log there, never at its high watermark, so neither a lost
 * acknowledged batch nor two logs that differ at the same offset can come
 * out of a leader change (0.9.1 truncates to the high watermark:
 * apache/fluss#673, #749).
 *
 * The checkpoint file (text, Kafka's layout, replaced atomically):
 *
 * | line  | content                               |
 * |-------|---------------------------------------|
 * | 1     | version: 0                            |
 * | 2     | entry count n                         |
 * | 3..   | n lines "epoch start_offset", epochs  |
 * |       | and offsets strictly increasing       |
 *
 * Thread rule: a cache has one user at a time (the replica's lock).
 */
#ifndef FL_REPLICA_EPOCH_H
#define FL_REPLICA_EPOCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"

#define FL_EPOCH_UNDEFINED (-1)
#define FL_EPOCH_OFFSET_UNDEFINED (-1LL)
#define FL_EPOCH_ENTRIES_MAX 100000 /* a checkpoint with more is refused */

typedef struct fl_epoch_entry {
    int32_t epoch;
    int64_t start_offset;
} fl_epoch_entry_t;

typedef struct fl_epoch_cache {
    fl_epoch_entry_t *entries; /* epochs and start offsets strictly increasing */
    size_t count, cap;
} fl_epoch_cache_t;

void fl_epoch_cache_init(fl_epoch_cache_t *c);
void fl_epoch_cache_free(fl_epoch_cache_t *c);

/* Records that epoch began at start_offset (a leader at its election, a
 * follower at the first batch of a new epoch it appends). Entries that
 * conflict with it — an epoch at or above it, or a start at or above
 * start_offset — go first. Returns false (nothing changed) for an epoch
 * below the latest one, negative values, or the latest entry itself. */
bool fl_epoch_cache_assign(fl_epoch_cache_t *c, int32_t epoch, int64_t start_offset);

/* The latest epoch, or FL_EPOCH_UNDEFINED when empty. */
int32_t fl_epoch_cache_latest(const fl_epoch_cache_t *c);

/* Where `epoch` ended on this replica (what a leader answers a follower's
 * OffsetsForLeaderEpoch): the start of the first later epoch, or log_end
 * for the latest epoch; *out_epoch is the largest epoch <= the one asked
 * (the asked one when it precedes every entry). An epoch above the latest,
 * or an empty cache, gives FL_EPOCH_UNDEFINED / FL_EPOCH_OFFSET_UNDEFINED. */
void fl_epoch_cache_end_offset(const fl_epoch_cache_t *c, int32_t epoch, int64_t log_end,
                               int32_t *out_epoch, int64_t *out_offset);

/* The log was cut at end_offset: entries starting at or after it go. */
void fl_epoch_cache_truncate_end(fl_epoch_cache_t *c, int64_t end_offset);
/* The log now starts at start_offset: entries wholly before it go, and the
 * one it falls in starts there. */
void fl_epoch_cache_truncate_start(fl_epoch_cache_t *c, int64_t start_offset);

/* The checkpoint text of c (fl_free'd by the caller), and its parser:
 * text[0, len) that is not exactly such a file (version, count, entries
 * strictly increasing, nothing after) is FLUSS_ERR__CORRUPT. */
char *fl_epoch_cache_format(const fl_epoch_cache_t *c, size_t *len);
int fl_epoch_cache_parse(const char *text, size_t len, fl_epoch_cache_t *out, fl_error_t *err);

/* Reads dir/leader-epoch-checkpoint (a missing file is an empty cache) /
 * replaces it durably. Errors are FLUSS_ERR_LOG_STORAGE_EXCEPTION, or
 * FLUSS_ERR__CORRUPT for a file that does not parse. */
int fl_epoch_cache_load(const char *dir, fl_epoch_cache_t *out, fl_error_t *err);
int fl_epoch_cache_store(const char *dir, const fl_epoch_cache_t *c, fl_error_t *err);

/* One step of a follower's truncation (KIP-279). The follower asked the
 * leader where epoch `asked` ended and got (leader_epoch, leader_end):
 *  - the leader knows no such epoch (undefined): nothing is decided, ask
 *    again later (*done false, *truncate_to FL_EPOCH_OFFSET_UNDEFINED);
 *  - the follower has leader_epoch too: cut at min(leader_end, where
 *    leader_epoch ends here) and stop (*done true);
 *  - it does not: cut where the largest epoch below leader_epoch ends here
 *    and ask again with that epoch (*next_epoch; *done false): the leader
 *    never had the data this replica wrote after it;
 *  - the follower has no epoch at all: cut at min(leader_end,
 *    follower_end) and stop.
 * The offset to cut at never exceeds follower_end. */
void fl_epoch_truncation_step(const fl_epoch_cache_t *follower, int64_t follower_end,
                              int32_t leader_epoch, int64_t leader_end, int64_t *truncate_to,
                              int32_t *next_epoch, bool *done);

/* Where a follower's log (its cache, its log end) and its leader's (the
 * leader's cache and log end) agree: the truncation steps above run
 * against the leader's whole cache, as a follower asking one epoch at a
 * time would get them. FL_EPOCH_OFFSET_UNDEFINED when the leader's
 * epochs say nothing about the follower's (the leader knows none of
 * them). Never more than my_end. */
int64_t fl_epoch_divergence(const fl_epoch_cache_t *mine, int64_t my_end,
                            const fl_epoch_cache_t *leader, int64_t leader_end);

/* Whether entries[0, n) could be a cache: epochs and start offsets
 * non-negative and strictly increasing (what a leader's answer must be
 * before a follower takes it). */
bool fl_epoch_entries_valid(const fl_epoch_entry_t *entries, size_t n);

#endif
