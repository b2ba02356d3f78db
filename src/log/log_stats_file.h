/*
 * log_stats_file.h — a segment's statistics sidecar (`<base>.stats` beside
 * `<base>.log`): the column statistics the server computed for batches
 * that came without them (record_stats_build.h), keyed by the batch's base
 * offset and CRC. Derived data: written without fsync, a torn tail or a
 * stale entry (a truncated and rewritten offset has another CRC) is
 * ignored, a lost file only means those batches are not skipped.
 *
 * Record: int64 base offset | uint32 batch CRC | int32 length | length
 * bytes of statistics | uint32 CRC-32C of the record's first 16 + length
 * bytes. All little-endian. One segment, its bucket's lock.
 */
#ifndef FL_LOG_STATS_FILE_H
#define FL_LOG_STATS_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"

typedef struct fl_stats_file fl_stats_file_t;

/* Opens (creating when `create`) the sidecar at path and loads its valid
 * records; NULL when it does not exist and create is false, or on I/O
 * errors (statistics are an optimisation: the caller goes on without). */
fl_stats_file_t *fl_stats_file_open(const char *path, bool create);
void fl_stats_file_close(fl_stats_file_t *f);
/* Appends a record (no fsync). */
int fl_stats_file_put(fl_stats_file_t *f, int64_t base_offset, uint32_t crc, const uint8_t *stats,
                      size_t len, fl_error_t *err);
/* Appends the statistics of (base_offset, crc) to out; false when none. */
bool fl_stats_file_get(const fl_stats_file_t *f, int64_t base_offset, uint32_t crc, fl_buf_t *out);

/* Parses the records of a sidecar's bytes, calling fn for each valid one
 * until the first that is not (the loader; also the fuzz target's). */
typedef void (*fl_stats_record_fn)(int64_t base_offset, uint32_t crc, const uint8_t *stats,
                                   size_t len, void *ctx);
size_t fl_stats_file_parse(const uint8_t *p, size_t len, fl_stats_record_fn fn, void *ctx);

#endif
