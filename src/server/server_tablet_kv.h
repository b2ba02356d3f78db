/*
 * server_tablet_kv.h — a tablet server's primary-key tablets (Fluss's
 * KvManager): the stores of the buckets it leads, each opened (recovered:
 * restored from the bucket's newest snapshot when its directory is gone,
 * then the changelog replayed) on first use or when NOTIFY_LEADER_AND_ISR
 * makes it leader; retired when it is demoted (replica_kv.h: closed on a
 * worker once no operation uses it, its directory removed); the memtable
 * budget shared by every open store (kv.rocksdb.write-buffer-budget); one
 * RocksDB block cache; the kv writer thread (PUT_KV, one request at a
 * time: a connection's writes keep their order) and the committer thread
 * (every store's RocksDB writes below the high watermark); the snapshot
 * round (kv.snapshot.interval) with its leases and commits asked of the
 * coordinator.
 *
 * It knows the replicas it is handed, never the replica manager, the
 * hosted tables or the network.
 *
 * Thread rule: any thread unless noted. `open_lock` (inside) guards the
 * list of open stores and the memtable size they have, and is held while a
 * store opens; it is taken before a replica's locks and never while a
 * retired store's close is waited for (the close takes it).
 */
#ifndef FL_SERVER_TABLET_KV_H
#define FL_SERVER_TABLET_KV_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common_workq.h"
#include "kv_store.h"
#include "kv_tablet.h"
#include "replica.h"
#include "rpc_client.h"
#include "server_hosted_table.h"

typedef struct fl_tablet_kv_config {
    int32_t server_id;             /* for the log lines and thread names */
    char remote_dir[4096];         /* remote.data.dir: the snapshots */
    size_t block_cache_bytes;      /* 0 = 64 MiB */
    size_t write_buffer_bytes;     /* per store memtable; 0 = 4 MiB */
    int write_buffer_count;        /* <= 0: 2 */
    size_t write_buffer_budget;    /* all memtables together; 0 = none */
    int compression[FL_KV_LEVELS_MAX];
    int compression_levels;        /* 0: Fluss's default */
    int snapshot_retained;         /* kv.snapshot.num-retained; <= 0: 2 */
} fl_tablet_kv_config_t;

typedef struct fl_tablet_kv fl_tablet_kv_t;

/* Starts the kv writer and committer threads. workers (borrowed, outlives
 * the stop below its jobs) closes retired stores. */
fl_tablet_kv_t *fl_tablet_kv_new(const fl_tablet_kv_config_t *cfg, fl_workq_t *workers);
/* The PUT_KV queue (one thread). */
fl_workq_t *fl_tablet_kv_writer(fl_tablet_kv_t *tkv);
/* Runs what the writer, then the committer, have queued and ends them:
 * after the network loops, before the workers. */
void fl_tablet_kv_stop(fl_tablet_kv_t *tkv);
/* After every store closed (with its replica). Stops first if not done. */
void fl_tablet_kv_destroy(fl_tablet_kv_t *tkv);

/* The bucket's kv directory: <table>/kv-<bucket> beside its
 * <table>/log-<bucket>. */
void fl_tablet_kv_dir(const fl_replica_t *r, char *dir, size_t cap);
/* The kv tablet of a primary-key bucket this server leads (t: its hosted
 * table), acquired for the caller (replica_kv.h: fl_tablet_kv_release
 * when done; the caller holds r meanwhile), opened and recovered on first
 * use. Errors: NOT_LEADER_OR_FOLLOWER when the replica does not lead (or
 * was demoted while the store opened), LEADER_NOT_AVAILABLE (clients
 * retry) while the store of an earlier leadership here is still closing
 * after a wait of up to a second. Not on a loop. */
int fl_tablet_kv_acquire(fl_tablet_kv_t *tkv, const fl_hosted_table_t *t, fl_replica_t *r,
                         fl_kv_tablet_t **out, fl_error_t *err);
/* Gives back a use of kt (NULL: none); the last use of a retired store
 * has it closed on a worker. Any thread, loops included. */
void fl_tablet_kv_release(fl_tablet_kv_t *tkv, fl_replica_t *r, fl_kv_tablet_t *kt);
/* What r commits moved (its watermark hook: the high watermark, or the
 * flushed offset): its store, when one is open, takes the changes below
 * it into RocksDB now rather than at its next put. Never opens a store.
 * Any thread, loops included; no replica lock held. */
void fl_tablet_kv_committed(fl_tablet_kv_t *tkv, fl_replica_t *r);
/* r became a follower: its store is retired at once (no operation
 * acquires it again) and closed on a worker once the operations holding
 * it are done, then its directory is removed; with no store open, the
 * directory is removed now. Never waits for an operation. */
void fl_tablet_kv_retire(fl_tablet_kv_t *tkv, fl_replica_t *r);

/* Takes a KV snapshot of every open store whose changelog moved since its
 * last one (what kv.snapshot.interval runs); of the older ones,
 * kv.snapshot.num-retained stay, and those the coordinator leases. The
 * coordinator (NULL: none; its _METADATA is then written here, and leases
 * count as unknown: nothing goes) is asked LIST_LEASED_KV_SNAPSHOTS and
 * commits each snapshot (COMMIT_KV_SNAPSHOT, with *coordinator_epoch as
 * it is then). Returns how many were taken. Not on a loop. */
size_t fl_tablet_kv_snapshot_round(fl_tablet_kv_t *tkv, fl_rpc_client_t *coordinator,
                                   _Atomic int32_t *coordinator_epoch);

#endif
