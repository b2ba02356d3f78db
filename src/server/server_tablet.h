/*
 * server_tablet.h — the tablet server (Fluss TabletServer): its bucket
 * replicas (replica_manager.h), its view of the cluster from the
 * coordinator's UPDATE_METADATA (server_tablet_catalog.h: the tables and
 * buckets it hosts, the peers, the metadata cache — the request path never
 * reads the metastore), its primary-key tablets (server_tablet_kv.h), its
 * delayed operations, N network loops (netty.server.num-network-threads)
 * and a worker pool (netty.server.num-worker-threads) for fsyncs, segment
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
#include "rpc_client.h"
#include "rpc_loop.h"
#include "rpc_server.h"
#include "server_disk.h"
#include "server_hosted_table.h"
#include "server_node.h"
#include "server_tablet_catalog.h"
#include "server_tablet_kv.h"
#include "kv_store.h"
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
    /* the internal listener (the coordinator's and other tablet servers'
     * connections); "" = none (local mode: in-process connections) */
    char internal_host[FL_SERVER_HOST_MAX];
    int internal_port;
    bool client_listener_internal; /* one listener for both (internal.listener.name names it) */
    /* how the client listener authenticates (server_security.h; NULL:
     * PLAINTEXT); not owned */
    const struct fl_listener_security *client_security;
    /* authorization (server_authz.h; NULL: authorizer.enabled is false);
     * this role's own, not owned */
    struct fl_authz *authz;
    /* SCRAM users (server_scram.h); this role's own, not owned */
    struct fl_scram_users *scram;
    char internal_listener_name[64]; /* internal.listener.name: where peers are reached */
    int64_t replica_max_lag_ms;    /* log.replica.max-lag-time (30 s) */
    int32_t replica_min_isr;       /* log.replica.min-in-sync-replicas-number (1) */
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

/* The tablet server: what it is made of, by concern. The parts that are
 * their own objects (catalog, kv, duties) state their thread and lock
 * rules in their headers; the members here are set at _new and not
 * changed after _start unless noted. */
struct fl_tablet_server {
    fl_tablet_config_t cfg;         /* with the defaults applied at _new */
    fl_endpoint_t self;             /* id and advertised client endpoint */

    /* -- network: N loops (connections accepted on loop 0, handed round
     * robin), one rpc server with the client and internal listeners -- */
    size_t loop_count;
    fl_rpc_loop_t *loops[FL_TABLET_LOOPS_MAX];
    fl_rpc_server_t *rpc;
    fl_server_role_t role;          /* the client listener */
    fl_server_role_t internal_role; /* the coordinator's connection: inter-server APIs */
    int internal_bound_port;        /* the internal listener's port, once bound */

    /* -- the coordinator link -- */
    /* the coordinator's internal side (set by whoever wires the roles,
     * before start; on client_loop): catalog reads and INIT_WRITER passed
     * on, auto-increment blocks, leases and commits */
    fl_rpc_client_t *coordinator;
    /* the loop of the server's own clients (the coordinator's above, a
     * follower's fetchers): outlives the workers that call through them */
    fl_rpc_loop_t *client_loop;
    /* the coordinator's messages (UPDATE_METADATA, NOTIFY_LEADER_AND_ISR,
     * STOP_REPLICA) run here, one at a time, in the order they came */
    fl_workq_t *control;
    /* (control) the newest coordinator epoch a message came with: one
     * from an older coordinator (a deposed one still running, a message
     * delayed) is refused. 0 at start, the lowest epoch there is; read
     * by the tiering and snapshot commits too */
    _Atomic int32_t coordinator_epoch;
    /* the tables hosted here, the peers, the metadata cache: what
     * UPDATE_METADATA says (server_tablet_catalog.h) */
    fl_tablet_catalog_t *catalog;

    /* -- replicas and replication -- */
    fl_replica_manager_t replicas;
    fl_purgatory_t *purgatory;      /* parked fetches and produce waits */
    /* fsyncs, segment finalisation, lookups, the duties' jobs */
    fl_workq_t *workers;
    struct fl_fetchers *fetchers;   /* server_fetcher.h: a follower's fetches */
    /* How a follower reaches its leader's internal side: set in local mode
     * (an in-process connection to the tablet server with that id, or
     * NULL); unset, TCP to the peer's internal listener. */
    fl_rpc_client_t *(*peer_client)(void *ctx, int32_t id, fl_rpc_loop_t *loop);
    void *peer_client_ctx;

    /* -- storage beside the logs -- */
    /* the primary-key tablets, their threads, budget and snapshots
     * (server_tablet_kv.h) */
    fl_tablet_kv_t *kv;
    /* the lake indexes of the primary-key buckets it tiers as leader
     * (server_lake_index.h) */
    struct fl_lake_indexes *lake_indexes;
    /* data-disk write protection: sampled by a duty, read on the data path */
    fl_disk_guard_t disk;
    /* tiered log storage (server_tiering.h): NULL when off */
    fl_remote_storage_t *remote_storage;

    /* retention, flushes, snapshots, ISR checks, disk samples, tiering
     * rounds on timers (server_tablet_duties.h) */
    struct fl_tablet_duties *duties;
    bool started;
};

int fl_tablet_server_new(const fl_tablet_config_t *cfg, fl_tablet_server_t **out, fl_error_t *err);
int fl_tablet_server_start(fl_tablet_server_t *ts, fl_error_t *err);
/* Starts accepting clients on the client listener, which fl_tablet_server_start
 * opens without accepting (its port known, connections in the backlog). Local mode calls it
 * once the coordinator's first messages are answered; the internal
 * listener accepts from the start. */
int fl_tablet_server_accept(fl_tablet_server_t *ts, fl_error_t *err);
/* Stops serving: closes connections, completes parked operations. */
void fl_tablet_server_stop(fl_tablet_server_t *ts);
void fl_tablet_server_destroy(fl_tablet_server_t *ts);

/* Takes a KV snapshot of every kv tablet whose changelog moved since its
 * last one (what kv.snapshot.interval runs; tests call it). Returns how
 * many were taken. Not on a loop. */
size_t fl_tablet_server_snapshot_now(fl_tablet_server_t *ts);

/* What the coordinator's messages do (server_tablet_control.c decodes
 * them): publish a table (replacing the one of its id); forget a deleted
 * one (what is left of it here goes: replicas, tiered log, KV snapshots);
 * delete a table's or a partition's replicas here. On the control
 * thread. */
void fl_tablet_server_publish_table(fl_tablet_server_t *ts, fl_hosted_table_t *t);
void fl_tablet_server_forget_table(fl_tablet_server_t *ts, const char *db, const char *name);
void fl_tablet_server_drop_table(fl_tablet_server_t *ts, const char *db, const char *name,
                                 int64_t table_id);
void fl_tablet_server_drop_partition(fl_tablet_server_t *ts, const char *db, const char *name,
                                     int64_t table_id, const char *partition_name,
                                     int64_t partition_id);

/* server_isr.c: one ISR round over the buckets this server leads (on a
 * worker): followers behind leave, caught-up ones join, each change
 * committed by the coordinator through ADJUST_ISR first. */
void fl_tablet_isr_round(fl_tablet_server_t *ts);

/* Opens (recovers) a bucket's replica whatever leads it (a follower's). */
int fl_tablet_server_open_replica(fl_tablet_server_t *ts, const fl_hosted_table_t *t,
                                  bool has_partition, int64_t partition_id, int32_t bucket,
                                  fl_replica_t **out, fl_error_t *err);
/* The replica of a bucket this server leads (referenced), or a per-bucket
 * error; t is the hosted table of table_id, or NULL when it has none.
 * error: UNKNOWN_TABLE_OR_BUCKET, NOT_LEADER_OR_FOLLOWER. Opens (recovers)
 * the log on first use. */
int fl_tablet_server_replica(fl_tablet_server_t *ts, int64_t table_id, const fl_hosted_table_t *t,
                             bool has_partition, int64_t partition_id, int32_t bucket,
                             fl_replica_t **out, fl_error_t *err);

#endif
