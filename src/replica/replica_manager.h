/*
 * replica_manager.h — the bucket replicas a tablet server hosts (Fluss
 * ReplicaManager): one replica per (table, partition, bucket), opened on
 * first use under data.dir/<db>/<table>-<table id>/log-<bucket>
 * (partitions: .../<partition name>-p<partition id>/log-<bucket>), closed
 * on shutdown, deleted with their table. It also owns the durability
 * policy the replicas follow (log.flush.*) and the hooks to the layers
 * above: the worker pool their flushes run on, and the callback that runs
 * when a replica's watermark moves (the tablet server checks its delayed
 * operations there).
 *
 * Thread rule: every function is safe from any thread; the table of
 * replicas is guarded by `lock`. find/open return a referenced replica:
 * the caller unrefs it.
 */
#ifndef FL_REPLICA_MANAGER_H
#define FL_REPLICA_MANAGER_H

#include <pthread.h>
#include <stdint.h>

#include "common_error.h"
#include "common_workq.h"
#include "log_remote_storage.h"
#include "log_tablet.h"
#include "replica.h"

typedef struct fl_durability {
    int64_t flush_interval_messages; /* log.flush.interval-messages (INT64_MAX: never) */
    int64_t flush_interval_ms;       /* log.flush.interval-ms (ours; <= 0: never) */
    bool sync;                       /* log.flush.mode: sync (ours) */
} fl_durability_t;

typedef void (*fl_watermark_fn)(void *ctx, fl_replica_t *r);

struct fl_replica_manager {
    char *data_dir;
    fl_log_config_t log_defaults;
    fl_durability_t durability;
    fl_workq_t *workers;         /* NULL: flushes run inline */
    /* Tiered storage: when set, every replica opens its remote log
     * (log_remote_log.h) before it is published; the tiering rounds
     * themselves are replica_tiering.h's. Set before the first open. */
    fl_remote_storage_t *remote_storage;
    fl_watermark_fn on_watermark;
    void *on_watermark_ctx;
    pthread_mutex_t lock;
    size_t count, cap;
    fl_replica_t **replicas;
    /* buckets whose open (recovery) failed: offline until a restart, like
     * a replica whose write failed — a recovery is not retried after its
     * fsync failed */
    size_t failed_count, failed_cap;
    struct fl_rm_failed {
        int64_t table_id, partition_id;
        int32_t bucket;
    } *failed;
};

/* A zeroed manager (no init) hosts nothing: opens fail, drops do nothing. */
void fl_replica_manager_init(fl_replica_manager_t *rm, const char *data_dir,
                             const fl_log_config_t *log_defaults, const fl_durability_t *durability,
                             fl_workq_t *workers);
void fl_replica_manager_set_watermark_hook(fl_replica_manager_t *rm, fl_watermark_fn fn, void *ctx);
/* Closes every replica (fsync, snapshots). */
void fl_replica_manager_close(fl_replica_manager_t *rm);

/* The replica (referenced), or NULL when it is not open. */
fl_replica_t *fl_replica_manager_find(fl_replica_manager_t *rm, int64_t table_id,
                                      int64_t partition_id, int32_t bucket);
/* Opens (recovering) the replica's log if needed; *out is referenced.
 * ttl_ms is the table's table.log.ttl. A bucket whose open failed answers
 * LOG_STORAGE_EXCEPTION from then on, until the process restarts. */
int fl_replica_manager_open(fl_replica_manager_t *rm, const char *db, const char *table,
                            int64_t table_id, int64_t partition_id, const char *partition_name,
                            int32_t bucket, int64_t ttl_ms, fl_replica_t **out, fl_error_t *err);
/* The same, a replica it opens starting in `role` (FL_REPLICA_LEADER, as
 * fl_replica_manager_open, or FL_REPLICA_UNTOLD); one already open keeps
 * the role it has. */
int fl_replica_manager_open_as(fl_replica_manager_t *rm, const char *db, const char *table,
                               int64_t table_id, int64_t partition_id, const char *partition_name,
                               int32_t bucket, int64_t ttl_ms, int role, fl_replica_t **out,
                               fl_error_t *err);
/* Drops every replica of the table and removes its directory. */
int fl_replica_manager_drop_table(fl_replica_manager_t *rm, const char *db, const char *table,
                                  int64_t table_id, fl_error_t *err);
/* Drops the replicas of one partition and removes its directory. */
int fl_replica_manager_drop_partition(fl_replica_manager_t *rm, const char *db, const char *table,
                                      int64_t table_id, const char *partition_name,
                                      int64_t partition_id, fl_error_t *err);
/* Every open replica, referenced (the caller unrefs each, frees the array). */
fl_replica_t **fl_replica_manager_list(fl_replica_manager_t *rm, size_t *count);
/* Applies retention to every open replica (blocks: run it on a worker). */
void fl_replica_manager_retention(fl_replica_manager_t *rm, int64_t now_ms);
/* Writer-id expiry on every replica (server.writer-id.expiration-time). */
void fl_replica_manager_expire_writers(fl_replica_manager_t *rm, int64_t now_ms,
                                       int64_t expiration_ms);
/* Queues a flush of every replica with unflushed data (the time-based
 * flush of log.flush.interval-ms). */
void fl_replica_manager_flush_dirty(fl_replica_manager_t *rm);

#endif
