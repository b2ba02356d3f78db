/*
 * record_stats.h — the column statistics of a log batch (magic 1 and 2 in
 * Fluss main's layout, LogRecordBatchStatistics version 1): per listed
 * column its null count, minimum and maximum, the latter two as one
 * AlignedRow each over the listed columns only. All little-endian:
 *
 *   0 int8 version (1) | 1 int16 N | 3 N x int16 column position in the
 *   batch's schema | N x int32 null count | int32 min row size (0 = none) |
 *   min row | int32 max row size | max row
 *
 * AlignedRow (Flink's BinaryRow family) of n fields: a null-bit region of
 * ((n + 63 + 8) / 64) * 8 bytes (bit i + 8, LSB first, is field i), one
 * 8-byte slot per field, then a variable part. Strings of up to 7 bytes sit
 * in the slot (byte 7 = 0x80 | length), longer ones in the variable part
 * (slot = offset << 32 | length, offset from the row start); a TIMESTAMP of
 * precision > 3 keeps its milliseconds in the variable part (slot = offset
 * << 32 | nanos of the millisecond). Views only: nothing is copied. Thread
 * rule: none (pure functions over caller-owned bytes).
 */
#ifndef FL_RECORD_STATS_H
#define FL_RECORD_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"
#include "types_datatype.h"

typedef struct fl_batch_stats {
    int32_t count;               /* N */
    const uint8_t *columns;      /* N int16 */
    const uint8_t *null_counts;  /* N int32 */
    const uint8_t *min_row;      /* NULL when absent */
    size_t min_len;
    const uint8_t *max_row;
    size_t max_len;
} fl_batch_stats_t;

/* Parses the statistics bytes p[0, len) of a batch. CORRUPT_RECORD_EXCEPTION
 * for another version or a layout that does not fit len. */
int fl_batch_stats_parse(const uint8_t *p, size_t len, fl_batch_stats_t *out, fl_error_t *err);

/* The index k of the statistics of the column at position `column` of the
 * batch's schema, or -1 when it has none. */
int fl_batch_stats_find(const fl_batch_stats_t *s, int column);
int32_t fl_batch_stats_null_count(const fl_batch_stats_t *s, int k);

typedef enum fl_stat_kind {
    FL_STAT_UNKNOWN = 0, /* absent, unreadable, or a type not compared */
    FL_STAT_NULL,        /* every value of the column is null */
    FL_STAT_INT,         /* i: BOOLEAN (0/1), integers, DATE, TIME, compact DECIMAL */
    FL_STAT_DOUBLE,      /* d: FLOAT, DOUBLE */
    FL_STAT_BYTES,       /* bytes/len: STRING, CHAR */
    FL_STAT_TIMESTAMP,   /* i = epoch millis, nanos = nanos of the millisecond */
} fl_stat_kind_t;

typedef struct fl_stat_value {
    fl_stat_kind_t kind;
    int64_t i;
    int32_t nanos;
    double d;
    const uint8_t *bytes;
    size_t len;
} fl_stat_value_t;

/* The minimum (max = false) or maximum of statistics k, read as `type`
 * (the column's type). Out-of-bounds slots or offsets give FL_STAT_UNKNOWN,
 * never a read past the row. */
fl_stat_value_t fl_batch_stats_value(const fl_batch_stats_t *s, bool max, int k,
                                     const fl_datatype_t *type);

#endif
