/*
 * log_remote_index.h — the index files of a tiered segment in the layout
 * Fluss (after Kafka) gives them in remote storage, and the two lookups the
 * server makes in them (Fluss RemoteLogIndexCache): the file position to
 * start a remote read at, and the offset for a timestamp.
 *
 *   <base>.index      n x (0 int32 offset - base | 4 int32 position)   (BE)
 *   <base>.timeindex  m x (0 int64 timestamp | 8 int32 offset - base)  (BE)
 *
 * Entries ascend in both fields. They are written from a rolled segment's
 * in-memory indexes (an offset entry every log.index.interval-size bytes,
 * a time entry wherever the segment's largest timestamp grew). Files read
 * back are outside bytes: a lookup binary-searches with bounded reads and
 * checks the entry it lands on; anything implausible falls back to the
 * segment's start, which is always a correct (if slower) answer.
 *
 * No I/O of its own: reads go through a callback. Thread rule: none.
 */
#ifndef FL_LOG_REMOTE_INDEX_H
#define FL_LOG_REMOTE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "log_segment.h"

#define FL_REMOTE_OFFSET_ENTRY 8
#define FL_REMOTE_TIME_ENTRY 12

/* Appends the .index / .timeindex bytes of rolled segment s to out. */
void fl_remote_index_encode_offsets(const fl_log_segment_t *s, fl_buf_t *out);
void fl_remote_index_encode_times(const fl_log_segment_t *s, fl_buf_t *out);

/* Reads len bytes at pos of the index file into dst (*got fewer at its end). */
typedef int (*fl_remote_index_read_fn)(void *ctx, uint64_t pos, size_t len, uint8_t *dst,
                                       size_t *got, fl_error_t *err);

/* The position of the last entry at or below target in an offset index
 * of file_bytes bytes of the segment [base, end) that is segment_bytes
 * long; 0 when there is none or the entry is implausible. */
int fl_remote_index_position(fl_remote_index_read_fn read, void *ctx, uint64_t file_bytes,
                             int64_t base, int64_t end, int64_t segment_bytes, int64_t target,
                             uint64_t *position, fl_error_t *err);
/* The offset of the first entry whose timestamp is >= ts in a time index
 * of the segment [base, end); base when there is none or it is implausible. */
int fl_remote_index_offset_for_time(fl_remote_index_read_fn read, void *ctx, uint64_t file_bytes,
                                    int64_t base, int64_t end, int64_t ts, int64_t *offset,
                                    fl_error_t *err);

#endif
