/*
 * coordinator_auto_partition.h — one auto-partitioning pass over a table
 * (Fluss's AutoPartitionManager#doAutoPartition, without its scheduler):
 * drop the partitions older than `table.auto-partition.num-retention` time
 * units, then pre-create `num-precreate` of them from the current one on.
 * Everything it needs comes from the catalog at the time of the pass (the
 * table's options and current partitions), so nothing is kept between
 * passes and a restarted coordinator simply goes on.
 *
 * The semantics are the reference's, including its corners:
 * - a partition's time value is its name (one partition key) or the value
 *   of `table.auto-partition.key` in it (several); it expires when that
 *   value sorts (as a string) before the value of "now - num-retention
 *   units" — manual partitions included; num-retention < 0 keeps all;
 * - only tables with one partition key get partitions pre-created (with
 *   several, num-precreate is 0 by validation), named by the time unit's
 *   format (coordinator_partition_time.h);
 * - creation stops at the first partition the limits refuse
 *   (max.partition.num, max.bucket.num) and is logged, not failed;
 * - DAY tables are checked as of "now - a delay" (0..22h59m, fixed per
 *   table for the life of the coordinator) except in the pass right after
 *   CREATE TABLE, spreading the daily creations of many tables over the day.
 *
 * Thread rule: the caller holds the coordinator's catalog lock.
 */
#ifndef FL_COORDINATOR_AUTO_PARTITION_H
#define FL_COORDINATOR_AUTO_PARTITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"
#include "common_tz.h"
#include "coordinator_catalog.h"
#include "coordinator_partition_time.h"

#define FL_AUTO_PARTITION_DAY_DELAY_MINUTES 1380 /* delays are 0 .. 23h - 1min */

/* A table's table.auto-partition.* options, defaults applied. */
typedef struct fl_auto_partition_strategy {
    bool enabled;
    char *key;                     /* NULL when unset */
    fl_partition_time_unit_t unit; /* DAY */
    int32_t num_precreate;         /* 2 */
    int32_t num_retention;         /* 7 */
    char *time_zone;               /* NULL = the server's zone */
} fl_auto_partition_strategy_t;

/* Reads the options from a stored table descriptor (JSON). FLUSS_ERR__CORRUPT
 * when the JSON or an option value cannot be read (CREATE TABLE validated
 * them, so only a damaged store gets here). Free with _clear. */
int fl_auto_partition_strategy_read(const char *table_json, fl_auto_partition_strategy_t *out,
                                    fl_error_t *err);
void fl_auto_partition_strategy_clear(fl_auto_partition_strategy_t *s);

/* What a pass tells its caller, with the catalog lock still held: a table
 * got partitions (push it to the tablet servers), a partition was dropped
 * (remove its data); and what it asks: may the table's expired partitions
 * go now (NULL: always)? False keeps them to a later pass (a lake table's
 * partitions wait for a tiering round). */
typedef struct fl_auto_partition_hooks {
    void (*created)(void *arg, int64_t table_id);
    void (*dropped)(void *arg, const char *db, const char *table, int64_t table_id,
                    const char *partition_name, int64_t partition_id);
    bool (*may_drop)(void *arg, int64_t table_id);
    void *arg;
} fl_auto_partition_hooks_t;

typedef struct fl_auto_partition_env {
    fl_catalog_t *cat;
    const char *zoneinfo_dir;  /* where zone ids are looked up */
    const fl_tz_t *default_tz; /* for tables without table.auto-partition.time-zone */
    uint64_t day_delay_seed;   /* picks each DAY table's delay */
    fl_auto_partition_hooks_t hooks;
} fl_auto_partition_env_t;

typedef struct fl_auto_partition_stats {
    size_t created, dropped, refused; /* refused: by the limits or an error */
    size_t waiting; /* expired, kept for a later pass by hooks.may_drop */
} fl_auto_partition_stats_t;

/* One pass over one table at now_ms (epoch ms); force: no DAY delay (the
 * pass after CREATE TABLE). A table that is gone or not auto-partitioned is
 * no work. Adds to *stats. */
void fl_auto_partition_table(const fl_auto_partition_env_t *env, int64_t table_id, int64_t now_ms,
                             bool force, fl_auto_partition_stats_t *stats);
/* One pass over every auto-partitioned table (the periodic check). */
void fl_auto_partition_all(const fl_auto_partition_env_t *env, int64_t now_ms,
                           fl_auto_partition_stats_t *stats);
/* The delay of a DAY table, in minutes (0..1379). */
int fl_auto_partition_day_delay_minutes(uint64_t seed, int64_t table_id);

#endif
