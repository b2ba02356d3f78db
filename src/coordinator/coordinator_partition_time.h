/*
 * coordinator_partition_time.h — the time side of auto-partitioning
 * (Fluss's AutoPartitionTimeUnit and PartitionUtils#generateAutoPartitionTime):
 * the partition value of "now plus N units" in a table's time zone, and
 * how a `table.auto-partition.time-zone` value names a zone (Java's
 * TimeZone.getTimeZone, which the reference server uses).
 *
 * | time-unit | value format | example (2024-11-11 11:11) | N units later is             |
 * |-----------|--------------|----------------------------|------------------------------|
 * | HOUR      | yyyyMMddHH   | 2024111111                 | N hours on the time line     |
 * | DAY       | yyyyMMdd     | 20241111                   | N calendar days, local       |
 * | MONTH     | yyyyMM       | 202411                     | N months (day clamped)       |
 * | QUARTER   | yyyyQ        | 20244 (quarter 1..4)       | 3N months                    |
 * | YEAR      | yyyy         | 2024                       | N years (Feb 29 → Feb 28)    |
 *
 * Calendar units move the local date-time and then place it in the zone
 * like java.time (a reading inside a DST gap moves forward by the gap), so
 * "tomorrow" is the next calendar day even across a DST change; HOUR moves
 * the instant, so an hour repeated when clocks go back yields the same
 * value twice.
 *
 * Thread rule: none (pure functions; zones are immutable).
 */
#ifndef FL_COORDINATOR_PARTITION_TIME_H
#define FL_COORDINATOR_PARTITION_TIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_tz.h"

typedef enum fl_partition_time_unit {
    FL_PARTITION_TIME_YEAR = 0,
    FL_PARTITION_TIME_QUARTER,
    FL_PARTITION_TIME_MONTH,
    FL_PARTITION_TIME_DAY,
    FL_PARTITION_TIME_HOUR,
} fl_partition_time_unit_t;

/* Longest value: yyyyMMddHH and its NUL. */
#define FL_PARTITION_TIME_VALUE_MAX 11

/* "HOUR", "day", ... (case-insensitive, like Fluss's enum options);
 * false for anything else. */
bool fl_partition_time_unit_parse(const char *text, fl_partition_time_unit_t *out);
const char *fl_partition_time_unit_name(fl_partition_time_unit_t unit);

/* The partition value of now_ms (epoch ms) plus `offset` units in tz into
 * out (at least FL_PARTITION_TIME_VALUE_MAX bytes). false (and nothing
 * written) when the result falls outside years 1..9999, which no 4-digit
 * format can hold. */
bool fl_partition_time_value(const fl_tz_t *tz, int64_t now_ms, int64_t offset,
                             fl_partition_time_unit_t unit, char out[FL_PARTITION_TIME_VALUE_MAX]);

/* The zone a time-zone option names, as Java's TimeZone.getTimeZone(id):
 * a zone id from zoneinfo_dir ("Asia/Shanghai", "UTC", links included),
 * one of Java's legacy three-letter ids ("PST", "CTT", ...; EST, MST and
 * HST are fixed offsets), or "GMT" followed by a sign and hours[[:]mm]
 * ("GMT+8", "GMT-05:30", "GMT+0530"); anything else is GMT (offset 0),
 * silently, as in Java — *known tells the caller so it can warn. Never NULL;
 * the caller frees it with fl_tz_free. */
fl_tz_t *fl_partition_time_zone(const char *zoneinfo_dir, const char *id, bool *known);

#endif
