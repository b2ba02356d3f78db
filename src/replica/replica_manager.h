/*
 * replica_manager.h — the bucket replicas a tablet server hosts (Fluss
 * ReplicaManager): one log per (table, partition, bucket), opened on first
 * use under data.dir/<db>/<table>-<table id>/log-<bucket> (partitions:
 * .../<partition name>-p<partition id>/log-<bucket>), closed on shutdown,
 * deleted with their table. Single replica per bucket in local mode, so the
 * high watermark is the log end offset.
 *
 * Thread rule: the tablet server's loop thread.
 */
#ifndef FL_REPLICA_MANAGER_H
#define FL_REPLICA_MANAGER_H

#include <stdint.h>

#include "common_error.h"
#include "log_tablet.h"

typedef struct fl_replica {
    int64_t table_id;
    int64_t partition_id; /* -1 when the table is not partitioned */
    int32_t bucket;
    char *table_dir;
    fl_log_tablet_t *log;
} fl_replica_t;

typedef struct fl_replica_manager {
    char *data_dir;
    fl_log_config_t log_defaults;
    size_t count, cap;
    fl_replica_t **replicas;
} fl_replica_manager_t;

/* A zeroed manager (no init) hosts nothing: opens fail, drops do nothing. */
void fl_replica_manager_init(fl_replica_manager_t *rm, const char *data_dir,
                             const fl_log_config_t *log_defaults);
void fl_replica_manager_close(fl_replica_manager_t *rm);

/* The replica, or NULL when it is not open. */
fl_replica_t *fl_replica_manager_find(fl_replica_manager_t *rm, int64_t table_id,
                                      int64_t partition_id, int32_t bucket);
/* Opens (recovering) the replica's log if needed. ttl_ms is the table's
 * table.log.ttl. */
int fl_replica_manager_open(fl_replica_manager_t *rm, const char *db, const char *table,
                            int64_t table_id, int64_t partition_id, const char *partition_name,
                            int32_t bucket, int64_t ttl_ms, fl_replica_t **out, fl_error_t *err);
/* Closes every replica of the table and removes its directory. */
int fl_replica_manager_drop_table(fl_replica_manager_t *rm, const char *db, const char *table,
                                  int64_t table_id, fl_error_t *err);
/* Closes the replicas of one partition and removes its directory. */
int fl_replica_manager_drop_partition(fl_replica_manager_t *rm, const char *db, const char *table,
                                      int64_t table_id, const char *partition_name,
                                      int64_t partition_id, fl_error_t *err);
/* Applies retention to every open replica. */
void fl_replica_manager_retention(fl_replica_manager_t *rm, int64_t now_ms);

#endif
