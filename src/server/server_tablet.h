/*
 * server_tablet.h — the tablet server (Fluss TabletServer): its bucket
 * replicas (replica_manager.h), its own table of the tables and buckets it
 * hosts (leader, epoch, schemas: what the request path needs, pushed by the
 * coordinator — the request path never reads the metastore), its delayed
 * operations, N network loops (netty.server.num-network-threads) and a
 * worker pool (netty.server.num-worker-threads) for fsyncs, segment
 * finalisation, retention.
 *
 * Thread rule: safe from any thread unless noted.
 */
#ifndef FL_SERVER_TABLET_H
#define FL_SERVER_TABLET_H

#include <pthread.h>
#include <stdatomic.h>

#include "common_workq.h"
#include "metastore.h"
#include "replica_manager.h"
#include "replica_purgatory.h"
#include "rpc_loop.h"
#include "rpc_server.h"
#include "server_disk.h"
#include "server_node.h"
#include "kv_store.h"
#include "kv_table.h"
#include "kv_tablet.h"
#include "types_schema.h"
#include "types_schema_map.h"

#define FL_TABLET_LOOPS_MAX 16
#define FL_TABLET_SCHEMAS_MAX 64

typedef struct fl_tablet_config {
    int32_t id;
    char data_dir[4096];           /* this server's bucket logs */
    char bind_host[FL_SERVER_HOST_MAX];
    int bind_port;
    fl_endpoint_t advertised;      /* port 0 = the bound port */
    fl_rpc_limits_t limits;
    size_t network_threads;
    size_t worker_threads;
    fl_log_config_t log;
    fl_durability_t durability;
    int64_t retention_check_ms;
    int64_t writer_expiration_ms;       /* server.writer-id.expiration-time (7 d) */
    int64_t writer_expiration_check_ms; /* server.writer-id.expiration-check-interval (10 min) */
    size_t kv_block_cache_bytes;   /* one RocksDB block cache for every kv tablet */
    size_t kv_write_buffer_bytes;  /* per kv tablet memtable */
    int kv_write_buffer_count;
    size_t kv_write_buffer_budget; /* all memtables of the server together; 0 = none */
    int kv_compression[FL_KV_LEVELS_MAX]; /* kv.rocksdb.compression.per.level */
    int kv_compression_levels;     /* 0: Fluss's default */
    char remote_dir[4096];         /* remote.data.dir: KV snapshots, tiered logs; "" = <data_dir>/../remote */
    int64_t remote_log_interval_ms; /* remote.log.task-interval-duration; <= 0: no tiering */
    int64_t kv_snapshot_interval_ms; /* kv.snapshot.interval; 0 = 10 min */
    int kv_snapshot_retained;      /* kv.snapshot.num-retained; 0 = 2 */
    /* server.data-disk.* (server_disk.h); a limit <= 0 (a zeroed config)
     * or >= 1.0 turns the write protection off */
    double disk_limit_ratio;
    double disk_recover_ratio;
    int64_t disk_check_interval_ms; /* 0 = 30 s */
} fl_tablet_config_t;

typedef struct fl_hosted_partition {
    int64_t partition_id;
    char *name;
    int32_t bucket_count;
    fl_ms_bucket_t *buckets;
} fl_hosted_partition_t;

/* What the tablet server knows of one table: immutable once published;
 * a change publishes a new one (readers hold a reference). */
typedef struct fl_hosted_table {
    atomic_int refs;
    int64_t table_id;
    char *database, *name;
    int64_t ttl_ms;             /* table.log.ttl */
    int32_t tiered_local_segments; /* table.log.tiered.local-segments (2) */
    char *log_format;           /* table.log.format: ARROW, INDEXED, COMPACTED */
    char *stats_columns;        /* table.statistics.columns, NULL when unset */
    bool has_primary_key;
    bool partitioned;
    int32_t schema_id;          /* latest */
    size_t schema_count;        /* schemas[i] is schema id i + 1 (parsed ones) */
    fl_schema_t *schemas;
    bool *schema_ok;
    const fl_datatype_t ***schema_types;
    fl_schema_map_t *latest_maps; /* [i]: schema id i + 1's columns in the latest */
    int32_t bucket_count;
    fl_ms_bucket_t *buckets;
    size_t partition_count;
    fl_hosted_partition_t *partitions;
    fl_kv_table_t *kv;          /* primary-key tables: merge engine, formats, key */
} fl_hosted_table_t;

struct fl_tablet_server {
    fl_tablet_config_t cfg;
    fl_endpoint_t self;
    fl_coordinator_server_t *cs;
    fl_replica_manager_t replicas;
    fl_purgatory_t *purgatory;
    fl_workq_t *workers;
    size_t loop_count;
    fl_rpc_loop_t *loops[FL_TABLET_LOOPS_MAX];
    fl_rpc_server_t *rpc;
    fl_server_role_t role;
    pthread_rwlock_t tables_lock;
    size_t table_count, table_cap;
    fl_hosted_table_t **tables;
    uv_timer_t retention_timer, flush_timer, snapshot_timer, writer_expiry_timer;
    atomic_bool snapshot_queued;   /* a snapshot round is queued or running */
    /* data-disk write protection: sampled on a worker, read on the data path */
    fl_disk_guard_t disk;
    uv_timer_t disk_timer;
    atomic_bool disk_queued;       /* a sample is queued or running */
    /* tiered log storage (server_tiering.h): NULL when off */
    fl_remote_storage_t *remote_storage;
    uv_timer_t tiering_timer;
    atomic_bool tiering_queued;    /* a tiering round is queued or running */
    /* PUT_KV runs here, one request at a time, so that the writes of a
     * connection keep their order; lookups run on `workers` */
    fl_workq_t *kv_writer;
    fl_workq_t *kv_committer; /* one thread: every kv tablet's RocksDB writes */
    pthread_mutex_t kv_open_lock;  /* opening a bucket's kv tablet; the list below */
    fl_kv_tablet_t **kv_open;      /* open kv tablets (the write-buffer budget) */
    size_t kv_open_count, kv_open_cap;
    size_t kv_write_buffer_now;    /* the memtable size every tablet has now */
    fl_kv_cache_t *kv_cache;
    bool started;
};

int fl_tablet_server_new(const fl_tablet_config_t *cfg, fl_tablet_server_t **out, fl_error_t *err);
int fl_tablet_server_start(fl_tablet_server_t *ts, fl_error_t *err);
/* Stops serving: closes connections, completes parked operations. */
void fl_tablet_server_stop(fl_tablet_server_t *ts);
void fl_tablet_server_destroy(fl_tablet_server_t *ts);

/* Takes a KV snapshot of every kv tablet whose changelog moved since its
 * last one (what kv.snapshot.interval runs; tests call it). Returns how
 * many were taken. Not on a loop. */
size_t fl_tablet_server_snapshot_now(fl_tablet_server_t *ts);

/* The coordinator's pushes. */
void fl_tablet_server_update_table(fl_tablet_server_t *ts, const fl_ms_table_t *t);
void fl_tablet_server_drop_table(fl_tablet_server_t *ts, const char *db, const char *name,
                                 int64_t table_id);
void fl_tablet_server_drop_partition(fl_tablet_server_t *ts, const char *db, const char *name,
                                     int64_t table_id, const char *partition_name,
                                     int64_t partition_id);

/* The table (referenced: fl_hosted_table_unref), or NULL. */
fl_hosted_table_t *fl_tablet_server_table(fl_tablet_server_t *ts, int64_t table_id);
void fl_hosted_table_unref(fl_hosted_table_t *t);
/* Column types of a schema id of the table, or NULL (unknown id). */
const fl_datatype_t *const *fl_hosted_table_schema_types(const fl_hosted_table_t *t,
                                                         int16_t schema_id, size_t *count);

/* How the columns of a schema id of the table sit in its latest schema
 * (by column id), or NULL (unknown id). */
const fl_schema_map_t *fl_hosted_table_latest_map(const fl_hosted_table_t *t, int16_t schema_id);

/* The replica of a bucket this server leads (referenced), or a per-bucket
 * error; t is the hosted table of table_id, or NULL when it has none.
 * error: UNKNOWN_TABLE_OR_BUCKET, NOT_LEADER_OR_FOLLOWER. Opens (recovers)
 * the log on first use. */
int fl_tablet_server_replica(fl_tablet_server_t *ts, int64_t table_id, const fl_hosted_table_t *t,
                             bool has_partition, int64_t partition_id, int32_t bucket,
                             fl_replica_t **out, fl_error_t *err);

/* The kv tablet of a primary-key bucket this server leads (borrowed: it
 * lives as long as r), opened and recovered on first use. Not on a loop. */
int fl_tablet_server_kv(fl_tablet_server_t *ts, const fl_hosted_table_t *t, fl_replica_t *r,
                        fl_kv_tablet_t **out, fl_error_t *err);
/* server_kv.c: the kv view of a table descriptor (NULL for log tables). */
fl_kv_table_t *fl_hosted_kv_table_new(const fl_hosted_table_t *t, const json_t *table_json);
void fl_hosted_kv_table_free(fl_kv_table_t *kv);
#endif
