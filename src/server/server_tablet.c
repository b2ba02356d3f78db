/*
 * server_tablet.c — the tablet server object (server_tablet.h): lifecycle,
 * what a published or forgotten table means for the replicas here, bucket
 * → replica resolution, the watermark hook
 * into the purgatory, and the periodic retention and time-based flush.
 */
#include "server_tablet.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common_alloc.h"
#include "common_duration.h"
#include "common_fs.h"
#include "common_log.h"
#include "common_time.h"
#include "kv_lease.h"
#include "kv_snapshot.h"
#include "proto_api.h"
#include "server_call.h"
#include "server_fetcher.h"
#include "replica_kv_log.h"
#include "replica_replication.h"
#include "server_config.h"
#include "server_hosted_table.h"
#include "server_tiering.h"

#define FL_RETENTION_CHECK_MS_DEFAULT (5 * 60 * 1000)

/* ---- hosted tables ---- */

/* Auto-increment blocks come from the coordinator (the one durable
 * counter per table that every bucket draws from), asked with fluss-c's
 * RESERVE_AUTO_INCREMENT; on the kv writer, which may wait. */
static int fl_tablet_autoinc_reserve(void *ctx, int64_t table_id, int64_t count, int64_t *first,
                                     fl_error_t *err) {
    fl_tablet_server_t *ts = ctx;
    if (!ts->coordinator)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          "Failed to fetch auto-increment values: no coordinator.");
    Fluss__ReserveAutoIncrementRequest req = FLUSS__RESERVE_AUTO_INCREMENT_REQUEST__INIT;
    req.table_id = table_id;
    req.count = count;
    ProtobufCMessage *resp = NULL;
    int rc = fl_server_call(ts->coordinator, FL_API_RESERVE_AUTO_INCREMENT, &req.base,
                            &fluss__reserve_auto_increment_response__descriptor, &resp, err);
    if (rc) return rc;
    *first = ((Fluss__ReserveAutoIncrementResponse *)resp)->first;
    protobuf_c_message_free_unpacked(resp, NULL);
    return 0;
}

/* The replicas of t open here keep what its lake lacks, or no longer. */
static void fl_tablet_lake_guard(fl_tablet_server_t *ts, const fl_hosted_table_t *t) {
    size_t n;
    fl_replica_t **all = fl_replica_manager_list(&ts->replicas, &n);
    for (size_t i = 0; i < n; i++) {
        if (all[i]->table_id == t->table_id) atomic_store(&all[i]->lake_guard, t->lake_enabled);
        fl_replica_unref(all[i]);
    }
    fl_free(all);
}

void fl_tablet_server_publish_table(fl_tablet_server_t *ts, fl_hosted_table_t *t) {
    if (t->kv) { /* set before the table is published */
        t->kv->autoinc_reserve = fl_tablet_autoinc_reserve;
        t->kv->autoinc_ctx = ts;
    }
    fl_hosted_table_unref(fl_tablet_catalog_put(ts->catalog, t));
    fl_tablet_lake_guard(ts, t);
}

void fl_tablet_server_forget_table(fl_tablet_server_t *ts, const char *db, const char *name) {
    fl_hosted_table_t *old = fl_tablet_catalog_remove(ts->catalog, db, name);
    /* what is left of it here goes: the table directory (partitions
     * included), its tiered log and KV snapshots */
    if (old) fl_tablet_server_drop_table(ts, db, name, old->table_id);
    fl_hosted_table_unref(old);
}

void fl_tablet_server_drop_table(fl_tablet_server_t *ts, const char *db, const char *name,
                                 int64_t table_id) {
    fl_error_t e;
    fl_replica_manager_drop_table(&ts->replicas, db, name, table_id, &e);
    /* its tiered log too, as the reference's RemoteStorageCleaner does */
    fl_tablet_tiering_drop(ts, db, name, table_id, NULL, -1);
    /* the table's KV snapshots go with it */
    char remote[8400];
    snprintf(remote, sizeof(remote), "%s/kv/%s/%s-%lld", ts->cfg.remote_dir, db, name,
             (long long)table_id);
    if (fl_fs_remove_tree(remote, &e)) FL_WARN("dropping %s: %s", remote, e.msg);
}

void fl_tablet_server_drop_partition(fl_tablet_server_t *ts, const char *db, const char *name,
                                     int64_t table_id, const char *partition_name,
                                     int64_t partition_id) {
    fl_error_t e;
    fl_replica_manager_drop_partition(&ts->replicas, db, name, table_id, partition_name,
                                      partition_id, &e);
    fl_tablet_tiering_drop(ts, db, name, table_id, partition_name, partition_id);
}

void fl_tablet_kv_dir(const fl_replica_t *r, char *dir, size_t cap) {
    const char *ld = r->log->dir;
    const char *slash = strrchr(ld, '/');
    size_t base = slash ? (size_t)(slash - ld) + 1 : 0;
    snprintf(dir, cap, "%.*skv-%d", (int)base, ld, r->bucket);
}

int fl_tablet_server_replica(fl_tablet_server_t *ts, int64_t table_id, const fl_hosted_table_t *t,
                             bool has_partition, int64_t partition_id, int32_t bucket,
                             fl_replica_t **out, fl_error_t *err) {
    if (!t)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                          "Unknown table or bucket: TableBucket{tableId=%lld, bucket=%d}",
                          (long long)table_id, bucket);
    const fl_hosted_partition_t *part = NULL;
    if (has_partition) {
        for (size_t i = 0; i < t->partition_count && !part; i++)
            if (t->partitions[i].partition_id == partition_id) part = &t->partitions[i];
        if (!part)
            return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                              "Unknown table or bucket: TableBucket{tableId=%lld, "
                              "partitionId=%lld, bucket=%d}",
                              (long long)t->table_id, (long long)partition_id, bucket);
    } else if (t->partitioned) {
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                          "Table %lld is partitioned: a bucket needs a partition id.",
                          (long long)t->table_id);
    }
    int32_t count = part ? part->bucket_count : t->bucket_count;
    const fl_ms_bucket_t *buckets = part ? part->buckets : t->buckets;
    if (bucket < 0 || bucket >= count)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                          "Unknown table or bucket: TableBucket{tableId=%lld, bucket=%d}",
                          (long long)t->table_id, bucket);
    if (buckets[bucket].leader != ts->self.id)
        return fl_err_set(err, FLUSS_ERR_NOT_LEADER_OR_FOLLOWER,
                          "Leader of bucket %d of table %lld is server %d, not %d.", bucket,
                          (long long)t->table_id, buckets[bucket].leader, ts->self.id);
    return fl_tablet_server_open_replica(ts, t, has_partition, partition_id, bucket, out, err);
}

int fl_tablet_server_open_replica(fl_tablet_server_t *ts, const fl_hosted_table_t *t,
                                  bool has_partition, int64_t partition_id, int32_t bucket,
                                  fl_replica_t **out, fl_error_t *err) {
    const fl_hosted_partition_t *part = has_partition ? fl_hosted_table_partition(t, partition_id)
                                                      : NULL;
    if (has_partition && !part)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                          "Unknown partition %lld of table %lld", (long long)partition_id,
                          (long long)t->table_id);
    int64_t pid = part ? part->partition_id : -1;
    fl_replica_t *r = fl_replica_manager_find(&ts->replicas, t->table_id, pid, bucket);
    if (r) {
        *out = r;
        return 0;
    }
    /* a tiered log's TTL is for its remote segments (server_tiering.h) */
    int rc = fl_replica_manager_open(&ts->replicas, t->database, t->name, t->table_id, pid,
                                     part ? part->name : NULL, bucket,
                                     ts->remote_storage ? 0 : t->ttl_ms, out, err);
    /* before a retention pass can see it (retention runs on a worker) */
    if (!rc) atomic_store(&(*out)->lake_guard, t->lake_enabled);
    return rc;
}

static void fl_kv_close_cb(void *kv, bool deleted) {
    fl_kv_tablet_close(kv, deleted);
}

/* The memtable size each open kv tablet gets: the configured size, or a
 * fair share of kv.rocksdb.write-buffer-budget when that is smaller (at
 * least 64 KiB). Under kv_open_lock. */
static size_t fl_kv_share(const fl_tablet_server_t *ts) {
    size_t per = ts->cfg.kv_write_buffer_bytes ? ts->cfg.kv_write_buffer_bytes : (size_t)4 << 20;
    size_t count = ts->cfg.kv_write_buffer_count > 0 ? (size_t)ts->cfg.kv_write_buffer_count : 2;
    if (ts->cfg.kv_write_buffer_budget && ts->kv_open_count) {
        size_t share = ts->cfg.kv_write_buffer_budget / (ts->kv_open_count * count);
        if (share < per) per = share;
    }
    return per < 64 * 1024 ? 64 * 1024 : per;
}

static void fl_kv_budget_apply(fl_tablet_server_t *ts) {
    size_t per = fl_kv_share(ts);
    size_t now = ts->kv_write_buffer_now;
    /* in geometric steps: each change rewrites every store's OPTIONS file */
    if (now && per <= now && per * 4 >= now * 3) return;
    if (now && per > now && per * 2 < now * 3) return;
    ts->kv_write_buffer_now = per;
    for (size_t i = 0; i < ts->kv_open_count; i++) {
        fl_error_t e;
        if (fl_kv_tablet_set_write_buffer(ts->kv_open[i], per, &e))
            FL_WARN("tablet server %d: kv write buffer: %s", ts->self.id, e.msg);
    }
}

static void fl_kv_commit_run(void *arg) {
    fl_kv_tablet_commit_job(arg);
}

/* kv tablets' RocksDB writes run on the committer thread, beside the puts
 * on the kv writer thread */
static void fl_kv_commit_submit(void *ctx, fl_kv_tablet_t *kt) {
    fl_tablet_server_t *ts = ctx;
    fl_workq_submit(ts->kv_committer, fl_kv_commit_run, kt);
}

static void fl_kv_on_close(void *ctx, fl_kv_tablet_t *kt) {
    fl_tablet_server_t *ts = ctx;
    pthread_mutex_lock(&ts->kv_open_lock);
    for (size_t i = 0; i < ts->kv_open_count; i++) {
        if (ts->kv_open[i] == kt) {
            ts->kv_open[i] = ts->kv_open[--ts->kv_open_count];
            break;
        }
    }
    pthread_mutex_unlock(&ts->kv_open_lock);
}

/* The remote snapshot directory of a replica's bucket, made by the same
 * function the coordinator's snapshot APIs use (kv_snapshot.h). */
static void fl_kv_remote_dir(const fl_tablet_server_t *ts, const fl_hosted_table_t *t,
                             const fl_replica_t *r, char *out, size_t cap) {
    const char *partition = NULL;
    for (size_t i = 0; r->partition_id >= 0 && i < t->partition_count && !partition; i++)
        if (t->partitions[i].partition_id == r->partition_id) partition = t->partitions[i].name;
    fl_kv_snapshot_bucket_dir(out, cap, ts->cfg.remote_dir, t->database, t->name, t->table_id,
                              partition, r->partition_id, r->bucket);
}

static void fl_kv_restore(const fl_tablet_server_t *ts, const char *remote, const char *dir) {
    int64_t *ids = NULL;
    size_t n = 0;
    fl_error_t e;
    if (fl_kv_snapshot_list(remote, &ids, &n, &e) == 0 && n) {
        for (size_t k = n; k-- > 0;) {
            if (fl_kv_snapshot_restore(remote, ids[k], dir, &e) == 0) {
                FL_INFO("tablet server %d: kv %s restored from snapshot %lld", ts->self.id, dir,
                        (long long)ids[k]);
                break;
            }
            FL_WARN("tablet server %d: restoring kv %s from snapshot %lld: %s", ts->self.id, dir,
                    (long long)ids[k], e.msg);
        }
    }
    fl_free(ids);
}

/* How long a request (or NOTIFY_LEADER_AND_ISR) that finds the store of
 * an earlier leadership here still closing waits for it before it answers
 * LEADER_NOT_AVAILABLE, which clients retry: the close is a RocksDB close
 * without a flush, after the operations that held it. */
#define FL_KV_RETIRED_WAIT_MS 1000

/* A retired store (its leader demoted while the process runs) closes on a
 * worker, never on the thread that let it go (a network loop, the control
 * thread), and its directory goes: a follower keeps no kv state, the next
 * leadership here restores the newest snapshot and replays the log. No
 * flush: what the store holds is dropped. The slot takes no new store
 * until this is done (replica_kv.h), so nothing opens that directory
 * meanwhile. */
typedef struct fl_kv_retire_job {
    fl_tablet_server_t *ts;
    fl_replica_t *r;
    fl_kv_tablet_t *kt;
} fl_kv_retire_job_t;

static void fl_kv_remove_dir(fl_tablet_server_t *ts, fl_replica_t *r) {
    char dir[4200];
    fl_tablet_kv_dir(r, dir, sizeof(dir));
    fl_error_t e;
    if (fl_fs_remove_tree(dir, &e))
        FL_WARN("tablet server %d: removing %s: %s", ts->self.id, dir, e.msg);
}

static void fl_kv_retire_run(void *arg) {
    fl_kv_retire_job_t *j = arg;
    fl_kv_tablet_close(j->kt, true);
    fl_kv_remove_dir(j->ts, j->r);
    FL_INFO("tablet server %d: bucket %d of table %lld: the primary-key store of its "
            "leadership here is closed (now a follower)",
            j->ts->self.id, j->r->bucket, (long long)j->r->table_id);
    fl_replica_kv_closed(&j->r->kv);
    fl_replica_unref(j->r);
    fl_free(j);
}

/* kt: a retired store the slot handed back (NULL: nothing to do). The
 * caller holds r. */
static void fl_kv_close_retired(fl_tablet_server_t *ts, fl_replica_t *r, fl_kv_tablet_t *kt) {
    if (!kt) return;
    fl_kv_retire_job_t *j = fl_calloc(1, sizeof(*j));
    fl_replica_ref(r);
    *j = (fl_kv_retire_job_t){ts, r, kt};
    fl_workq_submit(ts->workers, fl_kv_retire_run, j);
}

void fl_tablet_server_kv_release(fl_tablet_server_t *ts, fl_replica_t *r, fl_kv_tablet_t *kt) {
    if (kt) fl_kv_close_retired(ts, r, fl_replica_kv_release(&r->kv, kt));
}

void fl_tablet_server_kv_retire(fl_tablet_server_t *ts, fl_replica_t *r) {
    void *kv;
    switch (fl_replica_kv_retire(&r->kv, &kv)) {
    case FL_REPLICA_KV_RETIRE_NOW:
        fl_kv_close_retired(ts, r, kv);
        break;
    case FL_REPLICA_KV_RETIRE_LATER: /* its last user, closer or opener cleans up */
        break;
    case FL_REPLICA_KV_RETIRE_NONE:
        /* a store left on disk (a former leader before a restart) goes:
         * it may hold a tail that the follower's cut by epoch removes */
        fl_kv_remove_dir(ts, r);
        break;
    }
}

static int fl_kv_not_leader(const fl_tablet_server_t *ts, const fl_replica_t *r, fl_error_t *err) {
    return fl_err_set(err, FLUSS_ERR_NOT_LEADER_OR_FOLLOWER,
                      "Server %d does not lead bucket %d of table %lld now.", ts->self.id,
                      r->bucket, (long long)r->table_id);
}

static int fl_kv_still_closing(const fl_tablet_server_t *ts, const fl_replica_t *r,
                               fl_error_t *err) {
    return fl_err_set(err, FLUSS_ERR_LEADER_NOT_AVAILABLE_EXCEPTION,
                      "The primary-key store of bucket %d of table %lld from an earlier "
                      "leadership on server %d is still closing; try again.",
                      r->bucket, (long long)r->table_id, ts->self.id);
}

/* Opens the bucket's store (under kv_open_lock, the slot empty in
 * generation gen) and publishes it: 0 with *out acquired. */
static int fl_kv_open_locked(fl_tablet_server_t *ts, const fl_hosted_table_t *t, fl_replica_t *r,
                             uint64_t gen, fl_kv_tablet_t **out, fl_error_t *err) {
    char dir[4200], remote[8400];
    fl_tablet_kv_dir(r, dir, sizeof(dir));
    fl_kv_remote_dir(ts, t, r, remote, sizeof(remote));
    /* a bucket whose local state is gone starts from its newest
     * snapshot, then replays the log after it */
    struct stat st;
    if (stat(dir, &st) != 0 && errno == ENOENT) fl_kv_restore(ts, remote, dir);
    if (ts->kv_open_count == ts->kv_open_cap) {
        ts->kv_open_cap = ts->kv_open_cap ? ts->kv_open_cap * 2 : 16;
        ts->kv_open = fl_realloc(ts->kv_open, ts->kv_open_cap * sizeof(*ts->kv_open));
    }
    ts->kv_open_count++; /* counted in its own share before it opens */
    fl_kv_store_options_t o = {.block_cache = ts->kv_cache,
                               .write_buffer_bytes = fl_kv_share(ts),
                               .write_buffer_count = ts->cfg.kv_write_buffer_count,
                               .wal = t->kv->has_nested,
                               .compression_levels = ts->cfg.kv_compression_levels};
    memcpy(o.compression, ts->cfg.kv_compression, sizeof(o.compression));
    ts->kv_open_count--;
    fl_kv_tablet_t *kt;
    int rc = fl_kv_tablet_open(dir, fl_replica_kv_log(r), t->kv, &o, &kt, err);
    if (rc) {
        /* demoted meanwhile: what the open left goes, as the demotion
         * left it to this opener */
        if (fl_replica_kv_abandon(&r->kv, gen)) fl_kv_remove_dir(ts, r);
        return rc;
    }
    kt->on_close = fl_kv_on_close;
    kt->on_close_ctx = ts;
    kt->commit_submit = fl_kv_commit_submit;
    kt->commit_ctx = ts;
    fl_error_t e;
    if (fl_kv_tablet_set_remote(kt, remote, &e))
        FL_WARN("kv %s: snapshots in %s: %s", dir, remote, e.msg);
    if (!fl_replica_kv_publish(&r->kv, kt, gen, fl_kv_close_cb)) {
        /* demoted while it opened: closed as a retired store, never used */
        fl_kv_close_retired(ts, r, kt);
        return fl_kv_not_leader(ts, r, err);
    }
    ts->kv_open[ts->kv_open_count++] = kt;
    fl_kv_budget_apply(ts);
    *out = kt;
    return 0;
}

int fl_tablet_server_kv(fl_tablet_server_t *ts, const fl_hosted_table_t *t, fl_replica_t *r,
                        fl_kv_tablet_t **out, fl_error_t *err) {
    *out = fl_replica_kv_acquire(&r->kv);
    if (*out) return 0;
    if (!t->kv)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "Table %s.%s has no primary key.", t->database, t->name);
    if (fl_replica_role(r) != FL_REPLICA_LEADER) return fl_kv_not_leader(ts, r, err);
    /* not under kv_open_lock: the retired store's close takes it */
    if (!fl_replica_kv_wait_closed(&r->kv, FL_KV_RETIRED_WAIT_MS))
        return fl_kv_still_closing(ts, r, err);
    pthread_mutex_lock(&ts->kv_open_lock);
    void *kv;
    uint64_t gen;
    int rc = 0;
    switch (fl_replica_kv_begin(&r->kv, &kv, &gen)) {
    case FL_REPLICA_KV_PUBLISHED: /* another thread opened it meanwhile */
        *out = kv;
        break;
    case FL_REPLICA_KV_BUSY: /* retired again meanwhile */
        rc = fl_kv_still_closing(ts, r, err);
        break;
    case FL_REPLICA_KV_EMPTY:
        /* the role after begin: a demotion sets it before it retires (a
         * new generation), so either this sees the follower or the
         * publish sees the generation move */
        if (fl_replica_role(r) == FL_REPLICA_LEADER) {
            rc = fl_kv_open_locked(ts, t, r, gen, out, err);
        } else {
            rc = fl_kv_not_leader(ts, r, err);
            /* a demotion that found this open under way left the
             * directory to it */
            if (fl_replica_kv_abandon(&r->kv, gen)) fl_kv_remove_dir(ts, r);
        }
        break;
    }
    pthread_mutex_unlock(&ts->kv_open_lock);
    return rc;
}

/* ---- watermarks → delayed operations ---- */

static void fl_tablet_on_watermark(void *ctx, fl_replica_t *r) {
    fl_tablet_server_t *ts = ctx;
    fl_bucket_key_t key = {r->table_id, r->partition_id, r->bucket};
    fl_purgatory_check(ts->purgatory, &key);
}

/* ---- periodic work (timers on the first loop, work on the pool) ---- */

static void fl_retention_job(void *arg) {
    fl_tablet_server_t *ts = arg;
    fl_replica_manager_retention(&ts->replicas, fl_time_wall_ms());
}

static void fl_on_retention_timer(uv_timer_t *t) {
    fl_tablet_server_t *ts = t->data;
    fl_workq_submit(ts->workers, fl_retention_job, ts);
}

static void fl_writer_expiry_job(void *arg) {
    fl_tablet_server_t *ts = arg;
    fl_replica_manager_expire_writers(&ts->replicas, fl_time_wall_ms(),
                                      ts->cfg.writer_expiration_ms);
}

static void fl_on_writer_expiry_timer(uv_timer_t *t) {
    fl_tablet_server_t *ts = t->data;
    fl_workq_submit(ts->workers, fl_writer_expiry_job, ts);
}

/* A leader's followers that fell behind leave its ISR (every bucket this
 * server leads with followers). */
static void fl_isr_check_job(void *arg) {
    fl_tablet_server_t *ts = arg;
    fl_tablet_isr_round(ts);
    atomic_store(&ts->isr_check_queued, false);
}

static void fl_on_isr_timer(uv_timer_t *t) {
    fl_tablet_server_t *ts = t->data;
    if (!atomic_exchange(&ts->isr_check_queued, true))
        fl_workq_submit(ts->workers, fl_isr_check_job, ts);
}

static void fl_on_flush_timer(uv_timer_t *t) {
    fl_tablet_server_t *ts = t->data;
    fl_replica_manager_flush_dirty(&ts->replicas);
}

/* What retention asks of the coordinator's leases for one bucket: the
 * leased ids, fetched once, when retention first asks (most rounds take
 * no snapshot and ask nothing). */
typedef struct fl_pin_ctx {
    fl_tablet_server_t *ts;
    fl_replica_t *r;
    bool fetched, failed;
    size_t n;
    int64_t *ids;
    int32_t leader_epoch; /* the replica's when the round came to it */
} fl_pin_ctx_t;

static bool fl_snapshot_pinned(void *arg, int64_t id) {
    fl_pin_ctx_t *p = arg;
    if (!p->fetched) {
        p->fetched = true;
        Fluss__ListLeasedKvSnapshotsRequest req = FLUSS__LIST_LEASED_KV_SNAPSHOTS_REQUEST__INIT;
        req.table_id = p->r->table_id;
        req.has_partition_id = p->r->partition_id >= 0;
        req.partition_id = p->r->partition_id;
        req.bucket_id = p->r->bucket;
        ProtobufCMessage *resp = NULL;
        fl_error_t e;
        if (!p->ts->coordinator ||
            fl_server_call(p->ts->coordinator, FL_API_LIST_LEASED_KV_SNAPSHOTS, &req.base,
                           &fluss__list_leased_kv_snapshots_response__descriptor, &resp, &e)) {
            p->failed = true;
        } else {
            const Fluss__ListLeasedKvSnapshotsResponse *lr =
                (const Fluss__ListLeasedKvSnapshotsResponse *)resp;
            p->n = lr->n_snapshot_id;
            p->ids = fl_calloc(p->n ? p->n : 1, sizeof(int64_t));
            if (p->n) memcpy(p->ids, lr->snapshot_id, p->n * sizeof(int64_t));
            protobuf_c_message_free_unpacked(resp, NULL);
        }
    }
    if (p->failed) return true; /* leases unknown: nothing goes this round */
    for (size_t i = 0; i < p->n; i++)
        if (p->ids[i] == id) return true;
    return false;
}

/* The commit point of a leader's snapshot: the coordinator writes its
 * _METADATA if the epoch the round started in is still the bucket's. */
static int fl_snapshot_commit(void *arg, int64_t id, const char *meta, size_t len,
                              fl_error_t *err) {
    fl_pin_ctx_t *p = arg;
    fl_kv_snapshot_commit_t c = {p->r->table_id, p->r->partition_id, p->r->bucket, id,
                                 (char *)meta, len};
    fl_buf_t b;
    fl_buf_init(&b);
    fl_kv_snapshot_commit_encode(&c, &b);
    Fluss__CommitKvSnapshotRequest req = FLUSS__COMMIT_KV_SNAPSHOT_REQUEST__INIT;
    req.completed_snapshot.data = b.data;
    req.completed_snapshot.len = b.len;
    req.coordinator_epoch = atomic_load(&p->ts->coordinator_epoch);
    req.bucket_leader_epoch = p->leader_epoch;
    ProtobufCMessage *resp = NULL;
    int rc = fl_server_call(p->ts->coordinator, FL_API_COMMIT_KV_SNAPSHOT, &req.base,
                            &fluss__commit_kv_snapshot_response__descriptor, &resp, err);
    if (rc == FLUSS_ERR_CORRUPT_MESSAGE) err->code = rc = FLUSS_ERR_NETWORK_EXCEPTION;
    if (resp) protobuf_c_message_free_unpacked(resp, NULL);
    fl_buf_free(&b);
    return rc;
}

size_t fl_tablet_server_snapshot_now(fl_tablet_server_t *ts) {
    /* the replicas of the open kv tablets, referenced while we work (a
     * replica being destroyed is skipped: its tablet is closing) */
    pthread_mutex_lock(&ts->kv_open_lock);
    size_t n = 0;
    fl_replica_t **rs = fl_calloc(ts->kv_open_count ? ts->kv_open_count : 1, sizeof(*rs));
    for (size_t i = 0; i < ts->kv_open_count; i++)
        if (fl_replica_tryref(fl_replica_of_kv_log(&ts->kv_open[i]->log)))
            rs[n++] = fl_replica_of_kv_log(&ts->kv_open[i]->log);
    pthread_mutex_unlock(&ts->kv_open_lock);
    size_t taken = 0;
    int keep = ts->cfg.kv_snapshot_retained > 0 ? ts->cfg.kv_snapshot_retained : 2;
    for (size_t i = 0; i < n; i++) {
        fl_kv_tablet_t *kt = fl_replica_kv_acquire(&rs[i]->kv);
        if (kt && !atomic_load(&rs[i]->deleted)) {
            fl_pin_ctx_t pin = {.ts = ts, .r = rs[i]};
            pthread_mutex_lock(&rs[i]->lock);
            pin.leader_epoch = rs[i]->leader_epoch;
            pthread_mutex_unlock(&rs[i]->lock);
            fl_kv_snapshot_hooks_t hooks = {fl_snapshot_pinned,
                                            ts->coordinator ? fl_snapshot_commit : NULL, &pin};
            bool took = false;
            fl_error_t e;
            if (fl_kv_tablet_snapshot(kt, fl_time_wall_ms(), (size_t)keep, &hooks, &took, &e))
                FL_WARN("tablet server %d: kv snapshot of %s: %s", ts->self.id, kt->dir, e.msg);
            fl_free(pin.ids);
            taken += took;
        }
        fl_tablet_server_kv_release(ts, rs[i], kt);
        fl_replica_unref(rs[i]);
    }
    fl_free(rs);
    return taken;
}

static void fl_snapshot_job(void *arg) {
    fl_tablet_server_t *ts = arg;
    fl_tablet_server_snapshot_now(ts);
    atomic_store(&ts->snapshot_queued, false);
}

static void fl_on_snapshot_timer(uv_timer_t *t) {
    fl_tablet_server_t *ts = t->data;
    if (!atomic_exchange(&ts->snapshot_queued, true))
        fl_workq_submit(ts->workers, fl_snapshot_job, ts);
}

static void fl_disk_sample_job(void *arg) {
    fl_tablet_server_t *ts = arg;
    fl_disk_guard_sample(&ts->disk);
    atomic_store(&ts->disk_queued, false);
}

/* statvfs runs on a worker (it may block on a sick file system); the data
 * path only reads the flag it leaves */
static void fl_on_disk_timer(uv_timer_t *t) {
    fl_tablet_server_t *ts = t->data;
    if (!atomic_exchange(&ts->disk_queued, true)) fl_workq_submit(ts->workers, fl_disk_sample_job, ts);
}

static void fl_tablet_timers_start(void *arg) {
    fl_tablet_server_t *ts = arg;
    uv_loop_t *uv = fl_rpc_loop_uv(ts->loops[0]);
    uv_timer_init(uv, &ts->retention_timer);
    ts->retention_timer.data = ts;
    uint64_t every = (uint64_t)ts->cfg.retention_check_ms;
    uv_timer_start(&ts->retention_timer, fl_on_retention_timer, every, every);
    uv_timer_init(uv, &ts->writer_expiry_timer);
    ts->writer_expiry_timer.data = ts;
    uint64_t we = (uint64_t)ts->cfg.writer_expiration_check_ms;
    uv_timer_start(&ts->writer_expiry_timer, fl_on_writer_expiry_timer, we, we);
    uv_timer_init(uv, &ts->isr_timer);
    ts->isr_timer.data = ts;
    /* a follower leaves within max-lag plus this (and the coordinator's
     * answer): a quarter of max-lag, at most 250 ms (a round is cheap) */
    uint64_t ic = (uint64_t)(ts->cfg.replica_max_lag_ms / 4 > 0 ? ts->cfg.replica_max_lag_ms / 4 : 1);
    if (ic > 250) ic = 250;
    uv_timer_start(&ts->isr_timer, fl_on_isr_timer, ic, ic);
    uv_timer_init(uv, &ts->flush_timer);
    ts->flush_timer.data = ts;
    if (!ts->cfg.durability.sync && ts->cfg.durability.flush_interval_ms > 0) {
        uint64_t f = (uint64_t)ts->cfg.durability.flush_interval_ms;
        uv_timer_start(&ts->flush_timer, fl_on_flush_timer, f, f);
    }
    uv_timer_init(uv, &ts->snapshot_timer);
    ts->snapshot_timer.data = ts;
    uint64_t s = (uint64_t)ts->cfg.kv_snapshot_interval_ms;
    uv_timer_start(&ts->snapshot_timer, fl_on_snapshot_timer, s, s);
    uv_timer_init(uv, &ts->disk_timer);
    ts->disk_timer.data = ts;
    uint64_t d = (uint64_t)ts->cfg.disk_check_interval_ms;
    if (ts->disk.limit_ratio < 1.0) uv_timer_start(&ts->disk_timer, fl_on_disk_timer, d, d);
    fl_tablet_tiering_timer_start(ts);
}

/* ---- lifecycle ---- */

int fl_tablet_server_new(const fl_tablet_config_t *cfg, fl_tablet_server_t **out, fl_error_t *err) {
    fl_tablet_server_t *ts = fl_calloc(1, sizeof(*ts));
    ts->cfg = *cfg;
    ts->catalog = fl_tablet_catalog_new(ts->cfg.internal_listener_name);
    if (ts->cfg.network_threads < 1) ts->cfg.network_threads = 1;
    if (ts->cfg.network_threads > FL_TABLET_LOOPS_MAX) ts->cfg.network_threads = FL_TABLET_LOOPS_MAX;
    if (ts->cfg.worker_threads < 1) ts->cfg.worker_threads = 1;
    if (ts->cfg.retention_check_ms <= 0) ts->cfg.retention_check_ms = FL_RETENTION_CHECK_MS_DEFAULT;
    if (ts->cfg.writer_expiration_ms <= 0) ts->cfg.writer_expiration_ms = 7LL * 24 * 3600 * 1000;
    if (ts->cfg.writer_expiration_check_ms <= 0)
        ts->cfg.writer_expiration_check_ms = 10LL * 60 * 1000;
    if (ts->cfg.kv_snapshot_interval_ms <= 0) ts->cfg.kv_snapshot_interval_ms = 10LL * 60 * 1000;
    if (ts->cfg.disk_limit_ratio <= 0 || ts->cfg.disk_limit_ratio > 1.0) ts->cfg.disk_limit_ratio = 1.0;
    if (ts->cfg.disk_check_interval_ms <= 0)
        ts->cfg.disk_check_interval_ms = FL_DISK_CHECK_INTERVAL_MS_DEFAULT;
    if (!ts->cfg.remote_dir[0])
        snprintf(ts->cfg.remote_dir, sizeof(ts->cfg.remote_dir), "%.4000s/../remote", cfg->data_dir);
    ts->self = cfg->advertised;
    ts->self.id = cfg->id;
    fl_disk_guard_init(&ts->disk, cfg->id, cfg->data_dir, ts->cfg.disk_limit_ratio,
                       ts->cfg.disk_recover_ratio);
    pthread_mutex_init(&ts->kv_open_lock, NULL);
    ts->kv_cache = fl_kv_cache_new(ts->cfg.kv_block_cache_bytes ? ts->cfg.kv_block_cache_bytes
                                                                : (size_t)64 << 20);
    char name[48]; /* thread names are cut to 15 bytes where they are set */
    snprintf(name, sizeof(name), "ts%d-work", cfg->id);
    ts->workers = fl_workq_new(ts->cfg.worker_threads, name);
    snprintf(name, sizeof(name), "ts%d-kv", cfg->id);
    ts->kv_writer = fl_workq_new(1, name);
    snprintf(name, sizeof(name), "ts%d-kvc", cfg->id);
    ts->kv_committer = fl_workq_new(1, name);
    snprintf(name, sizeof(name), "ts%d-delay", cfg->id);
    ts->purgatory = fl_purgatory_new(name);
    /* produce validates (CRC included) before it appends: the log need
     * not compute the CRC a second time */
    fl_log_config_t log = cfg->log;
    log.crc_checked = true;
    fl_replica_manager_init(&ts->replicas, cfg->data_dir, &log, &cfg->durability, ts->workers);
    fl_replica_manager_set_watermark_hook(&ts->replicas, fl_tablet_on_watermark, ts);
    if (fl_tablet_tiering_init(ts, err)) {
        FL_WARN("tablet server %d: tiered log storage is off: %s", cfg->id, err->msg);
        fl_err_clear(err);
    }
    ts->loop_count = ts->cfg.network_threads;
    for (size_t i = 0; i < ts->loop_count; i++) {
        snprintf(name, sizeof(name), "ts%d-net%zu", cfg->id, i);
        ts->loops[i] = fl_rpc_loop_new(name);
    }
    snprintf(name, sizeof(name), "ts%d-cli", cfg->id);
    ts->client_loop = fl_rpc_loop_new(name);
    ts->rpc = fl_rpc_server_new(ts->loops, ts->loop_count, &cfg->limits, fl_server_handle);
    ts->role = (fl_server_role_t){FL_ROLE_TS, NULL, ts, &ts->self, false};
    ts->internal_role = (fl_server_role_t){FL_ROLE_TS, NULL, ts, &ts->self, true};
    snprintf(name, sizeof(name), "ts%d-ctl", cfg->id);
    ts->control = fl_workq_new(1, name);
    ts->fetchers = fl_fetchers_new(ts);
    if (ts->cfg.replica_max_lag_ms <= 0) ts->cfg.replica_max_lag_ms = 30 * 1000;
    if (ts->cfg.replica_min_isr <= 0) ts->cfg.replica_min_isr = 1;
    (void)err;
    *out = ts;
    return 0;
}

int fl_tablet_server_start(fl_tablet_server_t *ts, fl_error_t *err) {
    /* a disk already past the limit refuses the first write too */
    if (ts->disk.limit_ratio < 1.0) fl_disk_guard_sample(&ts->disk);
    int port = 0;
    /* the client listener takes its port now and accepts once the
     * coordinator has told this server its tables (fl_tablet_server_accept):
     * a client never meets a table it hosts as unknown after a restart;
     * its connection waits in the backlog meanwhile */
    int rc = fl_rpc_server_bind(ts->rpc, ts->cfg.bind_host, ts->cfg.bind_port,
                                ts->cfg.client_listener_internal ? &ts->internal_role : &ts->role,
                                &port, err);
    if (rc) return rc;
    if (ts->self.port == 0) ts->self.port = port;
    if (ts->cfg.internal_host[0]) {
        rc = fl_rpc_server_listen(ts->rpc, ts->cfg.internal_host, ts->cfg.internal_port,
                                  &ts->internal_role, &ts->internal_bound_port, err);
        if (rc) return rc;
    }
    fl_rpc_loop_post(ts->loops[0], fl_tablet_timers_start, ts);
    if (fl_rpc_loop_start(ts->client_loop))
        return fl_err_set(err, FLUSS_ERR__STATE, "cannot start the client thread");
    for (size_t i = 0; i < ts->loop_count; i++)
        if (fl_rpc_loop_start(ts->loops[i]))
            return fl_err_set(err, FLUSS_ERR__STATE, "cannot start network thread %zu", i);
    ts->started = true;
    return 0;
}

int fl_tablet_server_accept(fl_tablet_server_t *ts, fl_error_t *err) {
    return fl_rpc_server_accept(ts->rpc, err);
}

void fl_tablet_server_stop(fl_tablet_server_t *ts) {
    if (!ts->started) return;
    ts->started = false;
    /* parked operations answer first: their answers are posted to the
     * loops ahead of the connection close below (each loop runs its tasks
     * in order); anything parked after this completes at once */
    fl_purgatory_shutdown(ts->purgatory);
    fl_rpc_server_close(ts->rpc);
    /* a follower's connections end here, before any tablet server of the
     * process (local mode: its leaders) is freed */
    fl_fetchers_shutdown(ts->fetchers);
}

void fl_tablet_server_destroy(fl_tablet_server_t *ts) {
    if (!ts) return;
    fl_tablet_server_stop(ts);
    for (size_t i = 0; i < ts->loop_count; i++) fl_rpc_loop_destroy(ts->loops[i]);
    fl_rpc_server_destroy(ts->rpc);
    /* no loop runs now: nothing appends; the coordinator's messages,
     * puts and flushes in the queues finish first */
    fl_workq_destroy(ts->control);
    fl_workq_destroy(ts->kv_writer);
    fl_workq_destroy(ts->kv_committer); /* after the puts that queue its jobs */
    fl_workq_destroy(ts->workers);
    ts->replicas.workers = NULL;
    fl_fetchers_destroy(ts->fetchers); /* their clients live on client_loop */
    /* nothing calls the coordinator any more: its client, then its loop */
    fl_rpc_client_destroy(ts->coordinator);
    fl_rpc_loop_destroy(ts->client_loop);
    fl_replica_manager_close(&ts->replicas);
    fl_tablet_tiering_destroy(ts); /* after the replicas' remote logs closed */
    fl_purgatory_destroy(ts->purgatory); /* last: flushes above still reported moves */
    pthread_mutex_destroy(&ts->kv_open_lock);
    fl_free(ts->kv_open);
    fl_kv_cache_destroy(ts->kv_cache); /* after every store closed with its replica */
    fl_tablet_catalog_destroy(ts->catalog);
    fl_free(ts);
}
