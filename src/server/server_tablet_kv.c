/*
 * server_tablet_kv.c — a tablet server's primary-key (kv) tablets
 * (server_tablet_kv.h): opening a leader's store (restored from its newest
 * snapshot when its directory is gone), the write-buffer budget, the
 * retirement of a demoted leader's store, and the snapshot round.
 */
#include "server_tablet_kv.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common_alloc.h"
#include "common_fs.h"
#include "common_log.h"
#include "common_time.h"
#include "kv_snapshot.h"
#include "proto_api.h"
#include "replica_kv_log.h"
#include "replica_replication.h"
#include "server_call.h"

struct fl_tablet_kv {
    fl_tablet_kv_config_t cfg;
    fl_workq_t *workers;   /* borrowed: where a retired store closes */
    /* PUT_KV runs here, one request at a time, so that the writes of a
     * connection keep their order; lookups run on `workers` */
    fl_workq_t *writer;
    fl_workq_t *committer; /* one thread: every kv tablet's RocksDB writes */
    /* watermark moves submit commits (fl_tablet_kv_committed) under it
     * read-held; stop write-holds it to end them (hooks_off) before the
     * committer goes */
    pthread_rwlock_t hooks_lock;
    bool hooks_off; /* (hooks_lock) */
    pthread_mutex_t open_lock; /* opening a bucket's kv tablet; the list below */
    fl_kv_tablet_t **open;     /* (open_lock) open kv tablets (the write-buffer budget) */
    size_t open_count, open_cap;
    size_t write_buffer_now;   /* (open_lock) the memtable size every tablet has now */
    fl_kv_cache_t *cache;      /* one RocksDB block cache for every store */
};

fl_tablet_kv_t *fl_tablet_kv_new(const fl_tablet_kv_config_t *cfg, fl_workq_t *workers) {
    fl_tablet_kv_t *tkv = fl_calloc(1, sizeof(*tkv));
    tkv->cfg = *cfg;
    tkv->workers = workers;
    pthread_mutex_init(&tkv->open_lock, NULL);
    pthread_rwlock_init(&tkv->hooks_lock, NULL);
    tkv->cache = fl_kv_cache_new(cfg->block_cache_bytes ? cfg->block_cache_bytes
                                                        : (size_t)64 << 20);
    char name[48]; /* thread names are cut to 15 bytes where they are set */
    snprintf(name, sizeof(name), "ts%d-kv", cfg->server_id);
    tkv->writer = fl_workq_new(1, name);
    snprintf(name, sizeof(name), "ts%d-kvc", cfg->server_id);
    tkv->committer = fl_workq_new(1, name);
    return tkv;
}

fl_workq_t *fl_tablet_kv_writer(fl_tablet_kv_t *tkv) {
    return tkv->writer;
}

void fl_tablet_kv_stop(fl_tablet_kv_t *tkv) {
    pthread_rwlock_wrlock(&tkv->hooks_lock);
    tkv->hooks_off = true; /* no watermark move submits a commit from here on */
    pthread_rwlock_unlock(&tkv->hooks_lock);
    fl_workq_destroy(tkv->writer);
    tkv->writer = NULL;
    fl_workq_destroy(tkv->committer); /* after the puts that queue its jobs */
    tkv->committer = NULL;
}

void fl_tablet_kv_destroy(fl_tablet_kv_t *tkv) {
    if (!tkv) return;
    fl_tablet_kv_stop(tkv);
    pthread_mutex_destroy(&tkv->open_lock);
    pthread_rwlock_destroy(&tkv->hooks_lock);
    fl_free(tkv->open);
    fl_kv_cache_destroy(tkv->cache); /* after every store closed with its replica */
    fl_free(tkv);
}

void fl_tablet_kv_dir(const fl_replica_t *r, char *dir, size_t cap) {
    const char *ld = r->log->dir;
    const char *slash = strrchr(ld, '/');
    size_t base = slash ? (size_t)(slash - ld) + 1 : 0;
    snprintf(dir, cap, "%.*skv-%d", (int)base, ld, r->bucket);
}

static void fl_kv_close_cb(void *kv, bool deleted) {
    fl_kv_tablet_close(kv, deleted);
}

/* The memtable size each open kv tablet gets: the configured size, or a
 * fair share of kv.rocksdb.write-buffer-budget when that is smaller (at
 * least 64 KiB). Under open_lock. */
static size_t fl_kv_share(const fl_tablet_kv_t *tkv) {
    size_t per = tkv->cfg.write_buffer_bytes ? tkv->cfg.write_buffer_bytes : (size_t)4 << 20;
    size_t count = tkv->cfg.write_buffer_count > 0 ? (size_t)tkv->cfg.write_buffer_count : 2;
    if (tkv->cfg.write_buffer_budget && tkv->open_count) {
        size_t share = tkv->cfg.write_buffer_budget / (tkv->open_count * count);
        if (share < per) per = share;
    }
    return per < 64 * 1024 ? 64 * 1024 : per;
}

static void fl_kv_budget_apply(fl_tablet_kv_t *tkv) {
    size_t per = fl_kv_share(tkv);
    size_t now = tkv->write_buffer_now;
    /* in geometric steps: each change rewrites every store's OPTIONS file */
    if (now && per <= now && per * 4 >= now * 3) return;
    if (now && per > now && per * 2 < now * 3) return;
    tkv->write_buffer_now = per;
    for (size_t i = 0; i < tkv->open_count; i++) {
        fl_error_t e;
        if (fl_kv_tablet_set_write_buffer(tkv->open[i], per, &e))
            FL_WARN("tablet server %d: kv write buffer: %s", tkv->cfg.server_id, e.msg);
    }
}

static void fl_kv_commit_run(void *arg) {
    fl_kv_tablet_commit_job(arg);
}

/* kv tablets' RocksDB writes run on the committer thread, beside the puts
 * on the kv writer thread */
static void fl_kv_commit_submit(void *ctx, fl_kv_tablet_t *kt) {
    fl_tablet_kv_t *tkv = ctx;
    fl_workq_submit(tkv->committer, fl_kv_commit_run, kt);
}

static void fl_kv_on_close(void *ctx, fl_kv_tablet_t *kt) {
    fl_tablet_kv_t *tkv = ctx;
    pthread_mutex_lock(&tkv->open_lock);
    for (size_t i = 0; i < tkv->open_count; i++) {
        if (tkv->open[i] == kt) {
            tkv->open[i] = tkv->open[--tkv->open_count];
            break;
        }
    }
    pthread_mutex_unlock(&tkv->open_lock);
}

/* The remote snapshot directory of a replica's bucket, made by the same
 * function the coordinator's snapshot APIs use (kv_snapshot.h). */
static void fl_kv_remote_dir(const fl_tablet_kv_t *tkv, const fl_hosted_table_t *t,
                             const fl_replica_t *r, char *out, size_t cap) {
    const char *partition = NULL;
    for (size_t i = 0; r->partition_id >= 0 && i < t->partition_count && !partition; i++)
        if (t->partitions[i].partition_id == r->partition_id) partition = t->partitions[i].name;
    fl_kv_snapshot_bucket_dir(out, cap, tkv->cfg.remote_dir, t->database, t->name, t->table_id,
                              partition, r->partition_id, r->bucket);
}

static void fl_kv_restore(const fl_tablet_kv_t *tkv, const char *remote, const char *dir) {
    int64_t *ids = NULL;
    size_t n = 0;
    fl_error_t e;
    if (fl_kv_snapshot_list(remote, &ids, &n, &e) == 0 && n) {
        for (size_t k = n; k-- > 0;) {
            if (fl_kv_snapshot_restore(remote, ids[k], dir, &e) == 0) {
                FL_INFO("tablet server %d: kv %s restored from snapshot %lld", tkv->cfg.server_id, dir,
                        (long long)ids[k]);
                break;
            }
            FL_WARN("tablet server %d: restoring kv %s from snapshot %lld: %s", tkv->cfg.server_id, dir,
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
    fl_tablet_kv_t *tkv;
    fl_replica_t *r;
    fl_kv_tablet_t *kt;
} fl_kv_retire_job_t;

static void fl_kv_remove_dir(fl_tablet_kv_t *tkv, fl_replica_t *r) {
    char dir[4200];
    fl_tablet_kv_dir(r, dir, sizeof(dir));
    fl_error_t e;
    if (fl_fs_remove_tree(dir, &e))
        FL_WARN("tablet server %d: removing %s: %s", tkv->cfg.server_id, dir, e.msg);
}

static void fl_kv_retire_run(void *arg) {
    fl_kv_retire_job_t *j = arg;
    fl_kv_tablet_close(j->kt, true);
    fl_kv_remove_dir(j->tkv, j->r);
    FL_INFO("tablet server %d: bucket %d of table %lld: the primary-key store of its "
            "leadership here is closed (now a follower)",
            j->tkv->cfg.server_id, j->r->bucket, (long long)j->r->table_id);
    fl_replica_kv_closed(&j->r->kv);
    fl_replica_unref(j->r);
    fl_free(j);
}

/* kt: a retired store the slot handed back (NULL: nothing to do). The
 * caller holds r. */
static void fl_kv_close_retired(fl_tablet_kv_t *tkv, fl_replica_t *r, fl_kv_tablet_t *kt) {
    if (!kt) return;
    fl_kv_retire_job_t *j = fl_calloc(1, sizeof(*j));
    fl_replica_ref(r);
    *j = (fl_kv_retire_job_t){tkv, r, kt};
    fl_workq_submit(tkv->workers, fl_kv_retire_run, j);
}

void fl_tablet_kv_release(fl_tablet_kv_t *tkv, fl_replica_t *r, fl_kv_tablet_t *kt) {
    if (kt) fl_kv_close_retired(tkv, r, fl_replica_kv_release(&r->kv, kt));
}

void fl_tablet_kv_committed(fl_tablet_kv_t *tkv, fl_replica_t *r) {
    pthread_rwlock_rdlock(&tkv->hooks_lock);
    fl_kv_tablet_t *kt = tkv->hooks_off ? NULL : fl_replica_kv_acquire(&r->kv);
    if (kt) fl_kv_tablet_committed(kt); /* the committer lives while this is held */
    pthread_rwlock_unlock(&tkv->hooks_lock);
    fl_tablet_kv_release(tkv, r, kt);
}

void fl_tablet_kv_retire(fl_tablet_kv_t *tkv, fl_replica_t *r) {
    void *kv;
    switch (fl_replica_kv_retire(&r->kv, &kv)) {
    case FL_REPLICA_KV_RETIRE_NOW:
        fl_kv_close_retired(tkv, r, kv);
        break;
    case FL_REPLICA_KV_RETIRE_LATER: /* its last user, closer or opener cleans up */
        break;
    case FL_REPLICA_KV_RETIRE_NONE:
        /* a store left on disk (a former leader before a restart) goes:
         * it may hold a tail that the follower's cut by epoch removes */
        fl_kv_remove_dir(tkv, r);
        break;
    }
}

static int fl_kv_not_leader(const fl_tablet_kv_t *tkv, const fl_replica_t *r, fl_error_t *err) {
    return fl_err_set(err, FLUSS_ERR_NOT_LEADER_OR_FOLLOWER,
                      "Server %d does not lead bucket %d of table %lld now.", tkv->cfg.server_id,
                      r->bucket, (long long)r->table_id);
}

static int fl_kv_still_closing(const fl_tablet_kv_t *tkv, const fl_replica_t *r,
                               fl_error_t *err) {
    return fl_err_set(err, FLUSS_ERR_LEADER_NOT_AVAILABLE_EXCEPTION,
                      "The primary-key store of bucket %d of table %lld from an earlier "
                      "leadership on server %d is still closing; try again.",
                      r->bucket, (long long)r->table_id, tkv->cfg.server_id);
}

/* Opens the bucket's store (under open_lock, the slot empty in
 * generation gen) and publishes it: 0 with *out acquired. */
static int fl_open_locked(fl_tablet_kv_t *tkv, const fl_hosted_table_t *t, fl_replica_t *r,
                             uint64_t gen, fl_kv_tablet_t **out, fl_error_t *err) {
    char dir[4200], remote[8400];
    fl_tablet_kv_dir(r, dir, sizeof(dir));
    fl_kv_remote_dir(tkv, t, r, remote, sizeof(remote));
    /* a bucket whose local state is gone starts from its newest
     * snapshot, then replays the log after it */
    struct stat st;
    if (stat(dir, &st) != 0 && errno == ENOENT) fl_kv_restore(tkv, remote, dir);
    if (tkv->open_count == tkv->open_cap) {
        tkv->open_cap = tkv->open_cap ? tkv->open_cap * 2 : 16;
        tkv->open = fl_realloc(tkv->open, tkv->open_cap * sizeof(*tkv->open));
    }
    tkv->open_count++; /* counted in its own share before it opens */
    fl_kv_store_options_t o = {.block_cache = tkv->cache,
                               .write_buffer_bytes = fl_kv_share(tkv),
                               .write_buffer_count = tkv->cfg.write_buffer_count,
                               .wal = t->kv->has_nested,
                               .compression_levels = tkv->cfg.compression_levels};
    memcpy(o.compression, tkv->cfg.compression, sizeof(o.compression));
    tkv->open_count--;
    fl_kv_tablet_t *kt;
    int rc = fl_kv_tablet_open(dir, fl_replica_kv_log(r), t->kv, &o, &kt, err);
    if (rc) {
        /* demoted meanwhile: what the open left goes, as the demotion
         * left it to this opener */
        if (fl_replica_kv_abandon(&r->kv, gen)) fl_kv_remove_dir(tkv, r);
        return rc;
    }
    kt->on_close = fl_kv_on_close;
    kt->on_close_ctx = tkv;
    kt->commit_submit = fl_kv_commit_submit;
    kt->commit_ctx = tkv;
    fl_error_t e;
    if (fl_kv_tablet_set_remote(kt, remote, &e))
        FL_WARN("kv %s: snapshots in %s: %s", dir, remote, e.msg);
    if (!fl_replica_kv_publish(&r->kv, kt, gen, fl_kv_close_cb)) {
        /* demoted while it opened: closed as a retired store, never used */
        fl_kv_close_retired(tkv, r, kt);
        return fl_kv_not_leader(tkv, r, err);
    }
    tkv->open[tkv->open_count++] = kt;
    fl_kv_budget_apply(tkv);
    *out = kt;
    return 0;
}

int fl_tablet_kv_acquire(fl_tablet_kv_t *tkv, const fl_hosted_table_t *t, fl_replica_t *r,
                        fl_kv_tablet_t **out, fl_error_t *err) {
    *out = fl_replica_kv_acquire(&r->kv);
    if (*out) return 0;
    if (!t->kv)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "Table %s.%s has no primary key.", t->database, t->name);
    if (fl_replica_role(r) != FL_REPLICA_LEADER) return fl_kv_not_leader(tkv, r, err);
    /* not under open_lock: the retired store's close takes it */
    if (!fl_replica_kv_wait_closed(&r->kv, FL_KV_RETIRED_WAIT_MS))
        return fl_kv_still_closing(tkv, r, err);
    pthread_mutex_lock(&tkv->open_lock);
    void *kv;
    uint64_t gen;
    int rc = 0;
    switch (fl_replica_kv_begin(&r->kv, &kv, &gen)) {
    case FL_REPLICA_KV_PUBLISHED: /* another thread opened it meanwhile */
        *out = kv;
        break;
    case FL_REPLICA_KV_BUSY: /* retired again meanwhile */
        rc = fl_kv_still_closing(tkv, r, err);
        break;
    case FL_REPLICA_KV_EMPTY:
        /* the role after begin: a demotion sets it before it retires (a
         * new generation), so either this sees the follower or the
         * publish sees the generation move */
        if (fl_replica_role(r) == FL_REPLICA_LEADER) {
            rc = fl_open_locked(tkv, t, r, gen, out, err);
        } else {
            rc = fl_kv_not_leader(tkv, r, err);
            /* a demotion that found this open under way left the
             * directory to it */
            if (fl_replica_kv_abandon(&r->kv, gen)) fl_kv_remove_dir(tkv, r);
        }
        break;
    }
    pthread_mutex_unlock(&tkv->open_lock);
    return rc;
}

/* What retention asks of the coordinator's leases for one bucket: the
 * leased ids, fetched once, when retention first asks (most rounds take
 * no snapshot and ask nothing). */
typedef struct fl_pin_ctx {
    fl_rpc_client_t *coordinator; /* NULL: none (leases unknown, no commit) */
    _Atomic int32_t *coordinator_epoch; /* the newest seen, read at the commit */
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
        if (!p->coordinator ||
            fl_server_call(p->coordinator, FL_API_LIST_LEASED_KV_SNAPSHOTS, &req.base,
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
    req.coordinator_epoch = atomic_load(p->coordinator_epoch);
    req.bucket_leader_epoch = p->leader_epoch;
    ProtobufCMessage *resp = NULL;
    int rc = fl_server_call(p->coordinator, FL_API_COMMIT_KV_SNAPSHOT, &req.base,
                            &fluss__commit_kv_snapshot_response__descriptor, &resp, err);
    if (rc == FLUSS_ERR_CORRUPT_MESSAGE) err->code = rc = FLUSS_ERR_NETWORK_EXCEPTION;
    if (resp) protobuf_c_message_free_unpacked(resp, NULL);
    fl_buf_free(&b);
    return rc;
}

size_t fl_tablet_kv_snapshot_round(fl_tablet_kv_t *tkv, fl_rpc_client_t *coordinator,
                                   _Atomic int32_t *coordinator_epoch) {
    /* the replicas of the open kv tablets, referenced while we work (a
     * replica being destroyed is skipped: its tablet is closing) */
    pthread_mutex_lock(&tkv->open_lock);
    size_t n = 0;
    fl_replica_t **rs = fl_calloc(tkv->open_count ? tkv->open_count : 1, sizeof(*rs));
    for (size_t i = 0; i < tkv->open_count; i++)
        if (fl_replica_tryref(fl_replica_of_kv_log(&tkv->open[i]->log)))
            rs[n++] = fl_replica_of_kv_log(&tkv->open[i]->log);
    pthread_mutex_unlock(&tkv->open_lock);
    size_t taken = 0;
    int keep = tkv->cfg.snapshot_retained > 0 ? tkv->cfg.snapshot_retained : 2;
    for (size_t i = 0; i < n; i++) {
        fl_kv_tablet_t *kt = fl_replica_kv_acquire(&rs[i]->kv);
        if (kt && !atomic_load(&rs[i]->deleted)) {
            fl_pin_ctx_t pin = {.coordinator = coordinator,
                                 .coordinator_epoch = coordinator_epoch,
                                 .r = rs[i]};
            pthread_mutex_lock(&rs[i]->lock);
            pin.leader_epoch = rs[i]->leader_epoch;
            pthread_mutex_unlock(&rs[i]->lock);
            fl_kv_snapshot_hooks_t hooks = {fl_snapshot_pinned,
                                            coordinator ? fl_snapshot_commit : NULL, &pin};
            bool took = false;
            fl_error_t e;
            if (fl_kv_tablet_snapshot(kt, fl_time_wall_ms(), (size_t)keep, &hooks, &took, &e))
                FL_WARN("tablet server %d: kv snapshot of %s: %s", tkv->cfg.server_id, kt->dir, e.msg);
            fl_free(pin.ids);
            taken += took;
        }
        fl_tablet_kv_release(tkv, rs[i], kt);
        fl_replica_unref(rs[i]);
    }
    fl_free(rs);
    return taken;
}
