/*
 * replica.h — one bucket replica on a tablet server (Fluss Replica): its
 * log, the log start and end offsets, the high watermark, the flushed
 * (durable) offset, the leader epoch, and the append/read API the request
 * layers use. Knows nothing of protobuf.
 *
 * Offsets: high watermark <= log end. With one replica the high watermark
 * follows the end offset at each append — except in the durable mode
 * (log.flush.mode: sync), where it follows the flushed offset, so nothing
 * is visible to readers or acknowledged to acks=all writers before an fsync
 * covers it. Replication will drive the same high watermark from follower
 * fetches. Readers never see past the high watermark.
 *
 * Flushing runs on the worker pool, one flush per replica at a time; one
 * fsync covers every append that arrived before it started (group commit).
 * When a watermark (high or flushed) moves, the replica manager's
 * on_watermark callback runs, without any replica lock held.
 *
 * Fail-stop: a failed write or fsync of the log (an append, a flush, the
 * index or writer snapshot of a rolled segment) takes the replica offline
 * for good (until the process restarts and recovery runs): appends and
 * flushes refuse with LOG_STORAGE_EXCEPTION, the flushed offset and — in
 * the durable mode — the high watermark never move again, so nothing the
 * failed fsync should have covered is acknowledged. A failed fsync is never
 * retried (after one the page cache may hold data the disk lost). Reads go
 * on below the high watermark. Going offline runs on_watermark too, so
 * requests waiting for this replica answer at once.
 *
 * Thread rule: every function is safe from any thread. The log and the
 * fields marked (lock) are guarded by `lock`; background work (flush,
 * retention, close) is serialised by `bg_lock`, taken before `lock`.
 */
#ifndef FL_REPLICA_H
#define FL_REPLICA_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "log_tablet.h"
#include "replica_epoch.h"
#include "replica_isr.h"
#include "replica_kv.h"

typedef struct fl_replica_manager fl_replica_manager_t;
struct fl_remote_log;

typedef struct fl_replica {
    int64_t table_id;
    int64_t partition_id; /* -1 when the table is not partitioned */
    int32_t bucket;
    char *table_dir;
    fl_replica_manager_t *rm;
    pthread_mutex_t lock;
    pthread_mutex_t bg_lock;
    fl_log_tablet_t *log;               /* (lock) */
    atomic_int_fast64_t log_start_offset;
    atomic_int_fast64_t log_end_offset;
    atomic_int_fast64_t high_watermark;
    atomic_int_fast64_t flushed_offset;
    atomic_uint_fast64_t hw_bytes;      /* record bytes below the high watermark since open */
    uint64_t end_bytes;                 /* (lock) record bytes below the log end since open */
    int32_t leader_epoch;
    int64_t unflushed_messages;         /* (lock) */
    bool flush_scheduled;               /* (lock) */
    int64_t flush_asked_ms;             /* (lock) monotonic time the queued flush was asked for */
    atomic_bool deleted;                /* dropped: close without a snapshot, remove files */
    atomic_int refs;
    atomic_uint_fast64_t flushes;       /* fsync rounds done (stats, tests) */
    atomic_bool offline;                /* the log refused a write: see "Fail-stop" */
    /* The bucket's primary-key state (kv_tablet.h, opaque to this layer):
     * published by the layer above while it leads, used through
     * acquire/release, retired when it is demoted (replica_kv.h); a
     * published one closes here with the replica. */
    fl_replica_kv_t kv;
    /* Tiered storage (replica_tiering.h): the bucket's remote log, set at
     * open before the replica is published (NULL: not tiered), and the
     * offsets its committed manifest covers, [start, end). */
    struct fl_remote_log *remote;
    /* (the tiering round) the leader epoch whose first round refreshed the
     * remote log and cleaned up after the one before; -1: none yet */
    int32_t tier_epoch;
    atomic_int_fast64_t remote_start_offset; /* INT64_MAX: nothing remote */
    atomic_int_fast64_t remote_end_offset;   /* -1: nothing remote */
    /* A follower: the remote log's bounds as the coordinator last told
     * (NOTIFY_REMOTE_LOG_OFFSETS), INT64_MIN before it told any; its
     * tiering round reads the remote log again only when they differ
     * from the published ones (or nothing was told) */
    atomic_int_fast64_t remote_told_start, remote_told_end;
    /* A primary-key follower: the offset its leader's newest committed KV
     * snapshot covers (NOTIFY_KV_SNAPSHOT_OFFSET; 0: none known), below
     * which tiering may delete its changelog */
    atomic_int_fast64_t kv_snapshot_offset;
    /* A lake table's replica (lake_guard, set by the server from its
     * table): retention and tiering delete no segment holding an offset
     * at or above the bucket's lake offset (lake_offset, as the
     * coordinator last told: NOTIFY_LAKE_TABLE_OFFSET; -1 before it told
     * any, which keeps every segment), so a tiering round always finds its
     * range in the local log (fl_replica_retain_from) */
    atomic_bool lake_guard;
    atomic_int_fast64_t lake_offset;
    /* Replication (replica_replication.h): the role; a leader with
     * followers ("replicated") takes its high watermark from the ISR */
    atomic_int role;                    /* FL_REPLICA_LEADER / _FOLLOWER / _UNTOLD */
    /* the leader epoch it leads in, -1 while a follower (set with role):
     * a write waiting for the high watermark is acknowledged only in the
     * leadership that appended it (server_ackwait.h) */
    atomic_int lead_epoch;
    bool replicated;                    /* (lock) */
    fl_isr_t isr;                       /* (lock) while replicated */
    int32_t leader_id;                  /* (lock) a follower's leader */
    bool hw_known;                      /* (lock) led or followed since opened */
    /* (lock) which leader epoch began where, as in the bucket's
     * leader-epoch-checkpoint (replica_epoch.h): a leader adds its epoch
     * at its log end when elected, a follower takes its leader's */
    fl_epoch_cache_t epochs;
    bool truncation_pending;            /* (lock) following a new leader: cut by epoch first */
    int32_t bucket_epoch;               /* (lock) of the leader and ISR it has */
    bool isr_unsent;                    /* (lock) an ISR proposal awaits ADJUST_ISR */
    /* the error code of the follower's last answer from its leader (0:
     * none): its fetcher says in the log when it changes */
    atomic_int fetch_error;
} fl_replica_t;

#define FL_REPLICA_LEADER 0
#define FL_REPLICA_FOLLOWER 1
/* opened by a request before NOTIFY_LEADER_AND_ISR told it its role (a
 * bucket with several replicas, on a server that just started or just
 * took the table): it appends nothing, leads no kv and tiers nothing
 * until then, so a write cannot be acknowledged by a replica that holds
 * no ISR and no epoch, and may be about to follow */
#define FL_REPLICA_UNTOLD 2

typedef struct fl_replica_append {
    int64_t base_offset; /* first offset of the request (original offset of a duplicate) */
    int64_t end_offset;  /* one past its last offset */
    bool duplicate;
    /* The answer waits until the flushed offset reaches this (0: no wait):
     * log.flush.interval-messages was crossed by this append. */
    int64_t durable_wait_offset;
} fl_replica_append_t;

void fl_replica_ref(fl_replica_t *r);
/* A reference unless the replica is already being destroyed (refs 0). */
bool fl_replica_tryref(fl_replica_t *r);
void fl_replica_unref(fl_replica_t *r);

/* Appends a validated-by-the-log batch set (see fl_log_tablet_append) and
 * moves the offsets; records are rewritten in place. */
int fl_replica_append(fl_replica_t *r, uint8_t *records, size_t len, int64_t now_ms,
                      fl_replica_append_t *res, fl_error_t *err);
/* Appends whole batches from offset up to max_bytes (at least one), never
 * past the high watermark. */
int fl_replica_read(fl_replica_t *r, int64_t offset, size_t max_bytes, fl_buf_t *out,
                    fl_error_t *err);
int64_t fl_replica_offset_for_time(fl_replica_t *r, int64_t ts, fl_error_t *err);

static inline int64_t fl_replica_high_watermark(const fl_replica_t *r) {
    return atomic_load(&((fl_replica_t *)r)->high_watermark);
}
/* The local log's first offset. */
static inline int64_t fl_replica_log_start(const fl_replica_t *r) {
    return atomic_load(&((fl_replica_t *)r)->log_start_offset);
}
/* The first offset a client can read: in remote storage or local. */
static inline int64_t fl_replica_earliest(const fl_replica_t *r) {
    int64_t local = fl_replica_log_start(r);
    int64_t remote = atomic_load(&((fl_replica_t *)r)->remote_start_offset);
    return remote < local ? remote : local;
}
static inline int64_t fl_replica_log_end(const fl_replica_t *r) {
    return atomic_load(&((fl_replica_t *)r)->log_end_offset);
}
static inline int64_t fl_replica_flushed(const fl_replica_t *r) {
    return atomic_load(&((fl_replica_t *)r)->flushed_offset);
}
/* Below which offset a kv tablet may write its pre-write buffer into its
 * store: the high watermark, and where answers wait for an fsync
 * (log.flush.interval-messages) the flushed offset too — a store never
 * runs ahead of what its changelog keeps when that fsync fails. */
int64_t fl_replica_apply_bound(const fl_replica_t *r);
/* The log went offline after a failed write or fsync (lock-free). */
static inline bool fl_replica_offline(const fl_replica_t *r) {
    return atomic_load(&((fl_replica_t *)r)->offline);
}

/* Queues a flush on the worker pool unless one is queued already. */
void fl_replica_schedule_flush(fl_replica_t *r);
/* Flushes now on the caller's thread (blocks; for workers and close). */
int fl_replica_flush(fl_replica_t *r, fl_error_t *err);
/* Deletes whole segments past the table's TTL (blocks; for workers). */
/* The offset from which retention and tiering keep every segment:
 * INT64_MAX unless the replica is a lake table's (see lake_guard). */
static inline int64_t fl_replica_retain_from(const fl_replica_t *r) {
    if (!atomic_load(&((fl_replica_t *)r)->lake_guard)) return INT64_MAX;
    int64_t o = atomic_load(&((fl_replica_t *)r)->lake_offset);
    return o < 0 ? 0 : o;
}
int fl_replica_apply_retention(fl_replica_t *r, int64_t now_ms, fl_error_t *err);
/* The statistics sidecar of the replica's log (fl_log_tablet_put_stats). */
int fl_replica_put_stats(fl_replica_t *r, int64_t base_offset, uint32_t crc, const uint8_t *stats,
                         size_t len, fl_error_t *err);
bool fl_replica_get_stats(fl_replica_t *r, int64_t base_offset, uint32_t crc, fl_buf_t *out);
/* Under lock: moves the high watermark up to hw (never past the log end,
 * never down); true when it moved. The caller notifies after unlocking. */
bool fl_replica_hw_advance_locked(fl_replica_t *r, int64_t hw);
/* Tells the replica manager's watermark hook (no lock held). */
void fl_replica_notify(fl_replica_t *r);
/* Forgets idempotent writers idle past expiration_ms; returns how many. */
size_t fl_replica_expire_writers(fl_replica_t *r, int64_t now_ms, int64_t expiration_ms);

#endif
