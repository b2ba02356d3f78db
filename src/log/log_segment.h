/*
 * log_segment.h — one segment file of a bucket's log (Fluss LogSegment):
 * <dir>/<20-digit base offset>.log holding whole record batches back to
 * back, with a sparse in-memory offset index (an entry every
 * index_interval bytes: offset → file position) and time index (largest
 * commit timestamp so far → offset), both rebuilt by scanning the file when
 * the segment is opened. Scanning stops at the first torn or CRC-bad batch
 * (the caller decides to truncate there) — unless the bad batch is followed
 * by a whole batch that continues its offsets exactly: that is damage at
 * rest, not a torn tail, so the batch is recorded as a damaged range and
 * the scan goes on. Reads check the CRC of every batch they return and
 * never return a bad one. One bucket, one thread.
 */
#ifndef FL_LOG_SEGMENT_H
#define FL_LOG_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "record_batch.h"

typedef struct fl_index_entry {
    int64_t offset;    /* base offset of a batch */
    uint64_t position; /* its byte position in the file */
} fl_index_entry_t;

typedef struct fl_time_entry {
    int64_t timestamp; /* commit timestamp of the batch (monotonic in a log) */
    int64_t offset;    /* its base offset */
} fl_time_entry_t;

/* A batch found damaged at rest (its CRC fails) with whole batches after
 * it: its bytes stay where they are, its offsets are never served. */
typedef struct fl_damaged_range {
    int64_t start_offset, end_offset; /* [start, end) */
    uint64_t position, size;          /* bytes in the file */
} fl_damaged_range_t;

typedef struct fl_log_segment {
    int64_t base_offset;
    int64_t next_offset; /* one past the last offset in the segment */
    int64_t max_timestamp; /* -1 when empty */
    uint64_t size;       /* bytes of whole batches */
    uint64_t synced_size; /* bytes known to be on disk (fsynced) */
    bool needs_index;    /* rolled, its index file not yet written */
    int fd;
    char *path;
    size_t index_count, index_cap;
    fl_index_entry_t *index;
    size_t time_count, time_cap;
    fl_time_entry_t *time_index;
    uint64_t bytes_since_index;
    uint64_t index_interval;
    size_t damaged_count;
    fl_damaged_range_t *damaged; /* ascending, found by the recovery scan */
    struct fl_stats_file *stats; /* the statistics sidecar, opened on first use */
    bool stats_missing;          /* looked for it, there is none */
} fl_log_segment_t;

/* Called for every whole valid batch found while scanning (recovery). */
typedef void (*fl_segment_batch_fn)(const fl_batch_view_t *b, void *ctx);

/* Opens (creating) the segment of base_offset in dir and scans it. On
 * return *valid_bytes is the length of the whole valid prefix; bytes after
 * it (a torn or corrupt tail) are truncated away when truncate_tail is
 * set. Calls fn for each valid batch. */
int fl_log_segment_open(const char *dir, int64_t base_offset, uint64_t index_interval,
                        bool truncate_tail, fl_segment_batch_fn fn, void *ctx,
                        fl_log_segment_t **out, fl_error_t *err);
void fl_log_segment_close(fl_log_segment_t *s);
/* Cuts the file back to the valid prefix the scan found (a torn tail),
 * durably; nothing to do when there is none. */
int fl_log_segment_cut_tail(fl_log_segment_t *s, fl_error_t *err);
/* Appends whole batches (already offset-assigned) in one write. */
int fl_log_segment_append(fl_log_segment_t *s, const uint8_t *data, size_t len,
                          const fl_batch_view_t *batches, size_t batch_count, fl_error_t *err);
/* Position of the batch that contains offset (or the first batch after it),
 * scanning batch headers from the nearest index entry. Returns 1 when the
 * offset is at or past the end of the segment. */
int fl_log_segment_find(const fl_log_segment_t *s, int64_t offset, uint64_t *position,
                        fl_error_t *err);
/* Appends to out whole batches from position: at least one batch, then
 * more while the total stays within max_bytes and below end_offset. A
 * batch that is damaged — its CRC fails, or its offsets do not follow the
 * batch before it — is not returned: the read ends before it (returns
 * FL_LOG_SEGMENT_CUT), or, when it is the first, fails with
 * LOG_STORAGE_EXCEPTION naming it. */
#define FL_LOG_SEGMENT_CUT 2
int fl_log_segment_read(const fl_log_segment_t *s, uint64_t position, size_t max_bytes,
                        int64_t end_offset, bool at_least_one, fl_buf_t *out, size_t *read_bytes,
                        fl_error_t *err);
/* First batch whose commit timestamp >= ts: its base offset, or -1. */
int64_t fl_log_segment_offset_for_time(const fl_log_segment_t *s, int64_t ts, fl_error_t *err);
int fl_log_segment_sync(fl_log_segment_t *s, fl_error_t *err);
/* Removes the file and its index file (after close). */
int fl_log_segment_delete(fl_log_segment_t *s, fl_error_t *err);
/* The segment's statistics sidecar (log_stats_file.h): put creates it;
 * get answers false when there is none or it has no such batch. */
int fl_log_segment_put_stats(fl_log_segment_t *s, int64_t base_offset, uint32_t crc,
                             const uint8_t *stats, size_t len, fl_error_t *err);
bool fl_log_segment_get_stats(fl_log_segment_t *s, int64_t base_offset, uint32_t crc,
                              fl_buf_t *out);

/* Index files. A segment that is no longer appended to (rolled) gets
 * <base>.index, written atomically, so a later open need not scan it:
 *
 *   0 "FLIX" | 4 int32 version 1 | 8 int64 segment size | 16 int64 next offset
 *   | 24 int64 max timestamp | 32 int32 offset entries n | 36 int32 time
 *   entries m | 40 n x (int64 offset, int64 position) | m x (int64
 *   timestamp, int64 offset) | int32 CRC-32C of all before it.  (LE)
 *
 * It describes the segment only while the segment file has exactly the
 * recorded size; anything else (missing, torn, CRC, size) means "scan". */
int fl_log_segment_write_index(const fl_log_segment_t *s, fl_error_t *err);
/* Opens the segment from its index file without scanning. Returns 1 when
 * there is no usable index (the caller opens it with a scan instead). */
int fl_log_segment_open_indexed(const char *dir, int64_t base_offset, uint64_t index_interval,
                                fl_log_segment_t **out, fl_error_t *err);

#endif
