/*
 * server_auto_partition.h — the coordinator's auto-partition scheduler
 * (the thread of Fluss's AutoPartitionManager): one pass over every
 * auto-partitioned table when the coordinator starts and then every
 * `auto-partition.check.interval`, and a pass over a new table right after
 * CREATE TABLE, so its first partitions exist when the client's call
 * returns. The passes themselves are coordinator_auto_partition.h; this
 * file owns the thread, the clock and the zone a table without a time zone
 * uses (the process's, like the reference's JVM default).
 *
 * The clock: the system's, unless the coordinator is configured with
 * `auto-partition.test.clock-file` (a fluss-c test facility, off by
 * default): then "now" is the epoch-millisecond number in that file, read
 * at every pass, so tests can move auto-partitioning's time while the
 * server runs; a pass whose file cannot be read is skipped (logged).
 * Nothing else in the server follows that clock.
 *
 * Thread rule: _new/_start/_stop/_destroy from the coordinator's owner;
 * _table_created with the coordinator's catalog lock held (the CREATE
 * TABLE handler). The scheduler thread takes that lock for each pass.
 */
#ifndef FL_SERVER_AUTO_PARTITION_H
#define FL_SERVER_AUTO_PARTITION_H

#include <stdint.h>

#include "common_error.h"
#include "server_node.h"

#define FL_AUTO_PARTITION_INTERVAL_MS_DEFAULT (10LL * 60 * 1000)
#define FL_AUTO_PARTITION_ZONEINFO_DEFAULT "/usr/share/zoneinfo"

typedef struct fl_auto_partitioner fl_auto_partitioner_t;

typedef struct fl_auto_partitioner_config {
    int64_t interval_ms;        /* auto-partition.check.interval; <= 0: 10 min */
    const char *clock_file;     /* auto-partition.test.clock-file; NULL/"": the system clock */
    const char *zoneinfo_dir;   /* NULL/"": $TZDIR, else /usr/share/zoneinfo */
    const char *default_zone;   /* NULL/"": the process's zone ($TZ, /etc/localtime, else UTC) */
} fl_auto_partitioner_config_t;

fl_auto_partitioner_t *fl_auto_partitioner_new(fl_coordinator_server_t *cs,
                                               const fl_auto_partitioner_config_t *cfg);
/* Starts the thread; its first pass runs at once. */
void fl_auto_partitioner_start(fl_auto_partitioner_t *ap);
/* Stops and joins the thread (a pass under way finishes first). Idempotent. */
void fl_auto_partitioner_stop(fl_auto_partitioner_t *ap);
void fl_auto_partitioner_destroy(fl_auto_partitioner_t *ap);
/* The pass after CREATE TABLE (no DAY delay); catalog lock held. */
void fl_auto_partitioner_table_created(fl_auto_partitioner_t *ap, int64_t table_id);

/* The test clock file: optional whitespace, an optional '-', at most 19
 * digits of a value up to INT64_MAX, optional whitespace;
 * FLUSS_ERR__INVALID_ARG otherwise. */
int fl_auto_partition_clock_parse(const char *text, size_t len, int64_t *now_ms, fl_error_t *err);

#endif
