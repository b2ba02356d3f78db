/*
 * log_tablet.h — the log of one bucket replica (Fluss LogTablet): an
 * ordered list of segments in one directory, the log start and end
 * offsets, idempotent-writer state, appends that assign offsets and commit
 * timestamps, whole-batch reads, timestamp lookups, segment rolling and
 * retention by age. Recovery on open scans the segments, truncates the
 * active one at its first torn or CRC-bad batch and rebuilds the writer
 * state from the newest writer snapshot (<offset>.writer_snapshot, written
 * at every roll and clean close, so writers whose batches retention deleted
 * stay known) plus the batches after it; nothing past the last whole batch
 * is ever served.
 *
 * Durability: appends reach the page cache before they are acknowledged
 * (they survive a process crash); segments are fsynced when rolled and on
 * close, and on every append when flush_every_append is set. A failed write
 * or fsync takes the tablet offline: every later append, flush and sync
 * fails with LOG_STORAGE_EXCEPTION, nothing is retried (a failed fsync
 * proves nothing about the page cache it was to write). Reads go on: what
 * lies below the caller's high watermark was acknowledged before.
 *
 * Thread rule: one bucket is used by one thread at a time.
 */
#ifndef FL_LOG_TABLET_H
#define FL_LOG_TABLET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "log_segment.h"
#include "log_writer_state.h"

typedef struct fl_log_config {
    uint64_t segment_bytes;  /* log.segment.file-size (1 GiB) */
    uint64_t index_interval; /* log.index.interval-size (4 KiB) */
    int64_t ttl_ms;          /* table.log.ttl (7 days); <= 0 keeps everything */
    size_t batch_bytes_max;  /* largest batch accepted */
    bool flush_every_append;
    /* Server mode: a roll fsyncs nothing and writes no index or snapshot
     * itself; that work waits for the next flush (flush_begin/_run/_end),
     * which the replica runs on a worker thread. */
    bool defer_sync;
    /* The caller checked every batch's CRC before appending (the tablet
     * server runs fl_record_validate first): append parses, not re-CRCs. */
    bool crc_checked;
} fl_log_config_t;

typedef struct fl_log_tablet {
    char *dir;
    fl_log_config_t cfg;
    size_t segment_count, segment_cap;
    fl_log_segment_t **segments; /* ascending base offset; last is active */
    int64_t log_start_offset;
    int64_t log_end_offset;
    int64_t last_commit_timestamp;
    fl_writer_state_t writers;
    int64_t snapshot_offset; /* writer state loaded from a snapshot up to here */
    bool offline;
    /* deferred roll work (defer_sync) */
    fl_buf_t pending_snapshot;  /* writer state encoded at the last roll */
    int64_t pending_snapshot_offset; /* -1: none */
    bool dir_dirty;             /* a segment file was created since the last flush */
} fl_log_tablet_t;

/* One flush, in three steps so that only the middle one blocks and it runs
 * without the bucket's lock: _begin (under the lock) captures what is not
 * yet durable, _run fsyncs it and writes the index files and writer
 * snapshot of rolled segments, _end (under the lock) records the result.
 * Segments named by a flush must not be deleted until _end: the caller
 * serialises flushes, retention and close. */
#define FL_LOG_FLUSH_SEGMENTS_MAX 64
typedef struct fl_log_flush {
    int64_t end_offset; /* everything below is durable after a good _run */
    size_t count;
    fl_log_segment_t *segments[FL_LOG_FLUSH_SEGMENTS_MAX];
    int fds[FL_LOG_FLUSH_SEGMENTS_MAX];      /* dup()s, closed by _end */
    uint64_t sizes[FL_LOG_FLUSH_SEGMENTS_MAX];
    bool index[FL_LOG_FLUSH_SEGMENTS_MAX];   /* write its index file */
    char *dir;
    bool sync_dir;
    fl_buf_t snapshot;
    int64_t snapshot_offset; /* -1: none */
    int rc;
    fl_error_t err;
} fl_log_flush_t;

/* Returns false when there is nothing to flush (f needs no _run/_end). */
bool fl_log_tablet_flush_begin(fl_log_tablet_t *t, fl_log_flush_t *f);
int fl_log_tablet_flush_run(fl_log_flush_t *f);
/* A failed flush takes the log offline. */
void fl_log_tablet_flush_end(fl_log_tablet_t *t, fl_log_flush_t *f);

typedef struct fl_append_result {
    int64_t base_offset; /* of the first batch (original offset of a duplicate) */
    int64_t last_offset;
    bool duplicate;
} fl_append_result_t;

int fl_log_tablet_open(const char *dir, const fl_log_config_t *cfg, fl_log_tablet_t **out,
                       fl_error_t *err);
/* fsyncs and closes. */
void fl_log_tablet_close(fl_log_tablet_t *t);
/* Closes and removes the directory. */
int fl_log_tablet_delete(fl_log_tablet_t *t, fl_error_t *err);

/* Validates every batch of records (header, CRC, sizes) and appends them
 * all or nothing. records is rewritten in place (offsets, timestamps).
 * A batch of a known writer with a retained sequence is a duplicate: not
 * appended, answered with its original offset (only when the request is
 * that single batch). */
int fl_log_tablet_append(fl_log_tablet_t *t, uint8_t *records, size_t len, int64_t now_ms,
                         fl_append_result_t *res, fl_error_t *err);
/* A follower's append: batches as the leader wrote them (offsets, commit
 * timestamps kept), every one CRC-checked, the first at this log's end
 * and each after the one before; the writer state learns their writers
 * (so a new leader deduplicates a retry). Nothing appended on an error. */
int fl_log_tablet_append_follower(fl_log_tablet_t *t, uint8_t *records, size_t len,
                                  fl_append_result_t *res, fl_error_t *err);
/* Cuts the log at end_offset (a follower truncating to where it diverged
 * from its leader): the tablet is closed, later segments and writer
 * snapshots deleted (from the end: a crash leaves a shorter log, never a
 * hole), the segment holding the cut shortened to the batch that contains
 * end_offset, and the tablet opened again (recovery rebuilds the index and
 * the writer state), into *t. end_offset at or past the end: nothing. A
 * failure leaves *t NULL or offline. */
int fl_log_tablet_truncate(fl_log_tablet_t **t, int64_t end_offset, fl_error_t *err);
/* Empties the log and starts it again at offset, with nothing below it (a
 * follower whose leader's log now begins past this log's end: its older
 * records are in remote storage). Like a truncation: the tablet is closed
 * and opened again (*t replaced; NULL if that failed). Its files go from
 * the oldest on, so a crash meanwhile leaves a log that starts later,
 * never a hole. */
int fl_log_tablet_reset_at(fl_log_tablet_t **t, int64_t offset, fl_error_t *err);
/* Appends to out whole batches starting with the one containing offset,
 * up to max_bytes (at least one batch), never past upper_offset.
 * offset < log start or > log end is LOG_OFFSET_OUT_OF_RANGE_EXCEPTION;
 * offset == log end reads nothing. */
int fl_log_tablet_read(fl_log_tablet_t *t, int64_t offset, size_t max_bytes,
                       int64_t upper_offset, fl_buf_t *out, fl_error_t *err);
/* First offset whose batch commit timestamp >= ts, or the log end offset. */
int64_t fl_log_tablet_offset_for_time(fl_log_tablet_t *t, int64_t ts, fl_error_t *err);
/* Deletes the oldest `count` segments (never the active one) and moves the
 * log start to the first one left. */
int fl_log_tablet_drop_oldest(fl_log_tablet_t *t, size_t count, fl_error_t *err);
/* Deletes whole segments older than the TTL (never the active one), and
 * none holding an offset at or above keep_from (INT64_MAX: no bound). */
int fl_log_tablet_apply_retention(fl_log_tablet_t *t, int64_t now_ms, int64_t keep_from,
                                  fl_error_t *err);
/* Statistics the server computed for the batch at base_offset (crc: the
 * batch's), kept in its segment's sidecar; get appends them to out and
 * answers false when there are none. */
int fl_log_tablet_put_stats(fl_log_tablet_t *t, int64_t base_offset, uint32_t crc,
                            const uint8_t *stats, size_t len, fl_error_t *err);
bool fl_log_tablet_get_stats(fl_log_tablet_t *t, int64_t base_offset, uint32_t crc,
                             fl_buf_t *out);
/* Forgets idempotent writers idle longer than expiration_ms (their newest
 * batch's commit timestamp); returns how many. */
size_t fl_log_tablet_expire_writers(fl_log_tablet_t *t, int64_t now_ms, int64_t expiration_ms);
int fl_log_tablet_sync(fl_log_tablet_t *t, fl_error_t *err);

#endif
