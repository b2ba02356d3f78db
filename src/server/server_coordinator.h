/*
 * server_coordinator.h — the coordinator server (Fluss CoordinatorServer):
 * the metadata store and catalog, the registry of tablet servers, writer-id
 * blocks, KV snapshot leases and producer offsets (with a timer that sweeps
 * out the expired ones), its listener on one network loop, and a worker
 * thread for the APIs that write metadata (so no network loop waits on an
 * fsync).
 *
 * The catalog and every metastore view are guarded by `lock`; handlers of
 * catalog APIs run with it held (server_dispatch.c). After a DDL the
 * coordinator sends the change to every registered tablet server as
 * messages (server_push.h), after the lock is released and before the DDL
 * is answered. Its auto-partition scheduler
 * (server_auto_partition.h) creates and drops partitions of
 * auto-partitioned tables on a thread of its own, under the same lock.
 *
 * Thread rule: safe from any thread unless noted.
 */
#ifndef FL_SERVER_COORDINATOR_H
#define FL_SERVER_COORDINATOR_H

#include <pthread.h>
#include <stdatomic.h>

#include "common_workq.h"
#include "kv_lease.h"
#include "coordinator_catalog.h"
#include "coordinator_producer_offsets.h"
#include "metastore.h"
#include "replica_purgatory.h"
#include "rpc_loop.h"
#include "rpc_server.h"
#include "server_auto_partition.h"
#include "server_node.h"
#include "server_push.h"

#define FL_WRITER_ID_BLOCK_DEFAULT 1000

typedef struct fl_coordinator_config {
    const char *meta_dir;          /* the metadata store's directory; coordinator state files */
    /* cluster mode: the store to use (ZooKeeper, opened and elected by the
     * caller; taken). NULL: the embedded store in meta_dir */
    fl_metastore_t *metastore;
    /* the epoch the store was won in (ZooKeeper's /coordinators/epoch; 0
     * for the embedded store): stamped on every message to the tablet
     * servers, which refuse one older than the newest they have seen */
    int32_t coordinator_epoch;
    /* the internal listener (tablet servers' connections); port -1: none */
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
    fl_table_defaults_t defaults;
    size_t tablet_count;           /* tablet servers the catalog assigns buckets to */
    int32_t tablet_ids[FL_CATALOG_TABLET_SERVERS_MAX];
    char bind_host[FL_SERVER_HOST_MAX];
    int bind_port;
    fl_endpoint_t advertised;      /* id 0; port 0 = the bound port */
    fl_rpc_limits_t limits;
    int64_t writer_id_block;       /* writer ids reserved per durable write */
    char remote_dir[4096];         /* remote.data.dir (KV snapshots, leases); "" = data dir's */
    int64_t producer_offsets_ttl_ms;     /* coordinator.producer-offsets.ttl; 0 = 24 h */
    int64_t producer_offsets_cleanup_ms; /* ….cleanup-interval; 0 = 1 h */
    int64_t auto_partition_interval_ms; /* auto-partition.check.interval; 0 = 10 min */
    char auto_partition_clock_file[4096]; /* auto-partition.test.clock-file; "" = system clock */
    char default_time_zone[128];   /* zone of tables without one; "" = the process's */
} fl_coordinator_config_t;

struct fl_coordinator_server {
    fl_coordinator_config_t cfg;
    pthread_mutex_t lock;
    fl_metastore_t *ms;
    fl_catalog_t catalog;
    fl_endpoint_t self;
    fl_push_t *push;       /* its messages to the tablet servers */
    fl_rpc_loop_t *loop;
    fl_rpc_server_t *rpc;
    fl_workq_t *workers;
    /* what tablet servers ask that may write (INIT_WRITER's ids,
     * auto-increment blocks): its own thread, never behind a DDL that
     * waits for those tablet servers */
    fl_workq_t *internal_workers;
    fl_server_role_t role;          /* the client listener */
    fl_server_role_t internal_role; /* the tablet servers' connections */
    int64_t writer_next, writer_limit; /* (lock) the current block of writer ids */
    fl_kv_leases_t *leases;            /* KV snapshot leases (own lock) */
    fl_producer_offsets_t *producers;  /* producer offsets (own locks) */
    uv_timer_t producer_sweep_timer;   /* on loop: expired producer offsets go */
    atomic_bool producer_sweep_queued;
    uv_timer_t resync_timer;           /* on loop: servers that missed a message told again */
    atomic_bool resync_queued;
    fl_auto_partitioner_t *auto_partitioner; /* its thread takes `lock` per pass */
    struct fl_lake_tierer *lake_tierer;      /* its thread takes `lock` to plan a round */
    /* the schedule an external tiering job follows (lake.tiering.mode:
     * external; coordinator_lake_tiering.h), its own mutex */
    struct fl_lake_tiering *lake_tiering;
    /* (lock) cluster mode: the registration each live tablet server came
     * with (its incarnation epoch), which its CONTROLLED_SHUTDOWN names */
    size_t incarnation_count;
    struct fl_tablet_incarnation {
        int32_t id;
        int64_t incarnation;
    } incarnations[FL_CATALOG_TABLET_SERVERS_MAX];
    /* (lock) remote.data.dir, opened at the first remote-log commit: the
     * coordinator writes each bucket's manifest handle */
    struct fl_remote_storage *remote_storage;
    bool started;
};

int fl_coordinator_server_new(const fl_coordinator_config_t *cfg, fl_coordinator_server_t **out,
                              fl_error_t *err);
/* Registers a tablet server and the client that reaches it (taken: made
 * on fl_coordinator_server_loop). Before start. */
void fl_coordinator_server_add_tablet(fl_coordinator_server_t *cs, const fl_endpoint_t *ep,
                                      fl_rpc_client_t *client);
/* Local mode, after stop: destroys the client of tablet server id (what
 * is still pending on it fails), so nothing on the coordinator's loop
 * reaches that server once it is freed. */
void fl_coordinator_server_drop_tablet(fl_coordinator_server_t *cs, int32_t id);
/* Cluster mode: a tablet server came (client endpoint for clients, its
 * rack or NULL, its internal listener for the coordinator's messages) or
 * went. The catalog assigns new buckets over the live ones, by rack when
 * they have racks; one that came is told every table. From the
 * membership thread, never a loop. */
void fl_coordinator_server_tablet_up(fl_coordinator_server_t *cs, const fl_endpoint_t *client_ep,
                                     const char *listeners, const char *rack,
                                     const char *internal_host, int internal_port,
                                     int64_t incarnation);
void fl_coordinator_server_tablet_down(fl_coordinator_server_t *cs, int32_t id);
/* A leader's COMMIT_REMOTE_LOG_MANIFEST: the manifest at manifest_path
 * (written by the leader, ending at end_offset) becomes the bucket's
 * committed remote log, if leader_epoch is the bucket's current leader
 * epoch (FENCED_LEADER_EPOCH_EXCEPTION otherwise: a leader deposed while
 * it uploaded overwrites nothing) and coordinator_epoch is not newer than
 * this coordinator's (INVALID_COORDINATOR_EXCEPTION: a deposed one).
 * Checked and written under the lock elections take; then the followers
 * are told [start_offset, end_offset) (NOTIFY_REMOTE_LOG_OFFSETS). */
int fl_coordinator_server_commit_remote_log(fl_coordinator_server_t *cs, int64_t table_id,
                                            int64_t partition_id, int32_t bucket,
                                            int32_t leader_epoch, int32_t coordinator_epoch,
                                            const char *manifest_path, int64_t start_offset,
                                            int64_t end_offset, fl_error_t *err);
/* A leader's COMMIT_KV_SNAPSHOT: snapshot snapshot_id of the bucket, whose
 * files the leader uploaded and whose _METADATA is meta[0, len), becomes
 * complete (fl_kv_snapshot_commit_meta), with the same leader-epoch and
 * coordinator-epoch checks as the remote-log commit. */
int fl_coordinator_server_commit_kv_snapshot(fl_coordinator_server_t *cs, int64_t table_id,
                                             int64_t partition_id, int32_t bucket,
                                             int32_t leader_epoch, int32_t coordinator_epoch,
                                             int64_t snapshot_id, const char *meta, size_t len,
                                             fl_error_t *err);
/* A leader's ADJUST_ISR for one bucket (coordinator_election.h's rules),
 * stored; *out is the bucket as stored. */
int fl_coordinator_server_adjust_isr(fl_coordinator_server_t *cs, int32_t server,
                                     int64_t table_id, int64_t partition_id, int32_t bucket,
                                     int32_t leader_epoch, int32_t bucket_epoch,
                                     const int32_t *isr, size_t count, fl_ms_bucket_t *out,
                                     fl_error_t *err);
/* CONTROLLED_SHUTDOWN from tablet server id in incarnation epoch (the
 * low 32 bits of its registration's; the wire field is an int32): its
 * leaderships move to other in-sync replicas and it leaves every ISR
 * (pushed before the answer); *kept (fl_free'd by the caller): the
 * buckets it still leads for want of another replica in sync (not those
 * with one replica). An unregistered server, or a registration that is
 * not the live one (a process whose session expired, asking after it
 * registered again or another took its id): SERVER_NOT_EXIST. */
int fl_coordinator_server_controlled_shutdown(fl_coordinator_server_t *cs, int32_t id,
                                              int32_t epoch, fl_bucket_key_t **kept,
                                              size_t *kept_count, fl_error_t *err);
/* The network loop the coordinator's clients live on. */
fl_rpc_loop_t *fl_coordinator_server_loop(fl_coordinator_server_t *cs);
/* Starts its loop, sends every table to the registered tablet servers and
 * waits for their answers, then binds and serves. */
int fl_coordinator_server_start(fl_coordinator_server_t *cs, fl_error_t *err);
/* Stops serving (closes connections) and finishes the queued metadata
 * jobs, without freeing. Stop the tablet servers' listeners first (their
 * INIT_WRITER runs on this worker). */
void fl_coordinator_server_stop(fl_coordinator_server_t *cs);
void fl_coordinator_server_destroy(fl_coordinator_server_t *cs);

/* The next writer id (INIT_WRITER); a durable write only once per block. */
int fl_coordinator_server_writer_id(fl_coordinator_server_t *cs, int64_t *out, fl_error_t *err);
/* Reserves count values of a table's auto-increment counter with one
 * durable write (Fluss's ZK sequence node): *first is the counter before
 * the block. Takes the coordinator's lock: callers may hold a kv tablet's
 * lock, never the other way round. */
int fl_coordinator_server_autoinc_reserve(fl_coordinator_server_t *cs, int64_t table_id,
                                          int64_t count, int64_t *first, fl_error_t *err);

/* The messages a metadata change sends to the tablet servers, queued
 * (lock held, from the DDL handlers); fl_coordinator_server_push_flush
 * (lock not held, never on a loop) sends them and waits for the answers. */
void fl_coordinator_server_table_changed(fl_coordinator_server_t *cs, int64_t table_id);
void fl_coordinator_server_table_dropped(fl_coordinator_server_t *cs, const char *db,
                                         const char *name, int64_t table_id);
void fl_coordinator_server_partition_dropped(fl_coordinator_server_t *cs, const char *db,
                                             const char *name, int64_t table_id,
                                             const char *partition_name, int64_t partition_id);
void fl_coordinator_server_push_flush(fl_coordinator_server_t *cs);

#endif
