/*
 * replica_manager.c — hosted bucket replicas (replica_manager.h). A flat
 * array under one mutex is enough for the bucket counts of one server;
 * lookups are linear in the number of open replicas. Opening a replica
 * (recovery) holds the table lock.
 */
#include "replica_manager.h"

#include "replica_epoch.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common_alloc.h"
#include "common_fs.h"
#include "common_log.h"
#include "common_vfs.h"
#include "log_remote_log.h"

void fl_replica_manager_init(fl_replica_manager_t *rm, const char *data_dir,
                             const fl_log_config_t *log_defaults, const fl_durability_t *durability,
                             fl_workq_t *workers) {
    memset(rm, 0, sizeof(*rm));
    rm->data_dir = fl_strdup(data_dir);
    rm->log_defaults = *log_defaults;
    rm->log_defaults.defer_sync = workers != NULL;
    rm->durability = *durability;
    if (rm->durability.flush_interval_messages <= 0) rm->durability.flush_interval_messages = INT64_MAX;
    rm->workers = workers;
    pthread_mutex_init(&rm->lock, NULL);
}

void fl_replica_manager_set_watermark_hook(fl_replica_manager_t *rm, fl_watermark_fn fn, void *ctx) {
    rm->on_watermark = fn;
    rm->on_watermark_ctx = ctx;
}

void fl_replica_manager_close(fl_replica_manager_t *rm) {
    if (!rm->data_dir) return;
    pthread_mutex_lock(&rm->lock);
    fl_replica_t **all = rm->replicas;
    size_t n = rm->count;
    rm->replicas = NULL;
    rm->count = rm->cap = 0;
    pthread_mutex_unlock(&rm->lock);
    for (size_t i = 0; i < n; i++) fl_replica_unref(all[i]);
    fl_free(all);
    fl_free(rm->failed);
    fl_free(rm->data_dir);
    rm->data_dir = NULL;
    pthread_mutex_destroy(&rm->lock);
}

/* Under rm->lock. */
static bool fl_rm_failed_locked(const fl_replica_manager_t *rm, int64_t table_id,
                                int64_t partition_id, int32_t bucket) {
    for (size_t i = 0; i < rm->failed_count; i++) {
        const struct fl_rm_failed *f = &rm->failed[i];
        if (f->table_id == table_id && f->partition_id == partition_id && f->bucket == bucket)
            return true;
    }
    return false;
}

/* Under rm->lock: the open of a bucket failed; it stays offline. */
static void fl_rm_fail_locked(fl_replica_manager_t *rm, int64_t table_id, int64_t partition_id,
                              int32_t bucket, const char *why) {
    if (rm->failed_count == rm->failed_cap) {
        rm->failed_cap = rm->failed_cap ? rm->failed_cap * 2 : 8;
        rm->failed = fl_realloc(rm->failed, rm->failed_cap * sizeof(*rm->failed));
    }
    rm->failed[rm->failed_count++] = (struct fl_rm_failed){table_id, partition_id, bucket};
    FL_ERROR("bucket %d of table %lld (partition %lld) is offline after its log failed to open, "
             "refusing it until a restart recovers it: %s",
             bucket, (long long)table_id, (long long)partition_id, why);
}

/* Under rm->lock. */
static fl_replica_t *fl_rm_find_locked(fl_replica_manager_t *rm, int64_t table_id,
                                       int64_t partition_id, int32_t bucket) {
    for (size_t i = 0; i < rm->count; i++) {
        fl_replica_t *r = rm->replicas[i];
        if (r->table_id == table_id && r->partition_id == partition_id && r->bucket == bucket)
            return r;
    }
    return NULL;
}

fl_replica_t *fl_replica_manager_find(fl_replica_manager_t *rm, int64_t table_id,
                                      int64_t partition_id, int32_t bucket) {
    if (!rm->data_dir) return NULL;
    pthread_mutex_lock(&rm->lock);
    fl_replica_t *r = fl_rm_find_locked(rm, table_id, partition_id, bucket);
    if (r) fl_replica_ref(r);
    pthread_mutex_unlock(&rm->lock);
    return r;
}

/* The leader-epoch → start-offset checkpoint beside the log (the batch
 * format of magic 0 cannot carry epochs; replica_epoch.h), loaded into c.
 * A bucket without a readable checkpoint gets epoch 0 from the log's
 * first offset (a local server leads every bucket at epoch 0). Epochs
 * that begin past the log end (a crash between a cut of the log and the
 * checkpoint's rewrite) go. */
static int fl_replica_epoch_checkpoint(const char *dir, const fl_log_tablet_t *log,
                                       fl_epoch_cache_t *c, fl_error_t *err) {
    fl_error_t e;
    int rc = fl_epoch_cache_load(dir, c, &e);
    if (rc == FLUSS_ERR_LOG_STORAGE_EXCEPTION) {
        fl_epoch_cache_free(c);
        return fl_err_set(err, rc, "%s", e.msg);
    }
    if (rc) FL_WARN("%s: %s; written anew", dir, e.msg);
    if (!rc && c->count > 0) {
        fl_epoch_cache_truncate_end(c, log->log_end_offset + 1);
        return 0;
    }
    fl_epoch_cache_free(c);
    fl_epoch_cache_init(c);
    fl_epoch_cache_assign(c, 0, log->log_start_offset);
    if (fl_epoch_cache_store(dir, c, &e)) {
        /* the open fails and the bucket stays offline until a restart,
         * whose open writes the file anew (a failed directory fsync may
         * have left the rename behind) */
        size_t plen = strlen(dir) + sizeof("/leader-epoch-checkpoint");
        char *path = fl_malloc(plen);
        snprintf(path, plen, "%s/leader-epoch-checkpoint", dir);
        fl_vfs_unlink(path);
        fl_free(path);
        rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "%s", e.msg);
        fl_epoch_cache_free(c);
    } else {
        rc = 0;
    }
    return rc;
}

static char *fl_table_dir(const fl_replica_manager_t *rm, const char *db, const char *table,
                          int64_t table_id) {
    size_t n = strlen(rm->data_dir) + strlen(db) + strlen(table) + 48;
    char *dir = fl_malloc(n);
    snprintf(dir, n, "%s/%s/%s-%" PRId64, rm->data_dir, db, table, table_id);
    return dir;
}

int fl_replica_manager_open(fl_replica_manager_t *rm, const char *db, const char *table,
                            int64_t table_id, int64_t partition_id, const char *partition_name,
                            int32_t bucket, int64_t ttl_ms, fl_replica_t **out, fl_error_t *err) {
    return fl_replica_manager_open_as(rm, db, table, table_id, partition_id, partition_name, bucket,
                                      ttl_ms, FL_REPLICA_LEADER, out, err);
}

int fl_replica_manager_open_as(fl_replica_manager_t *rm, const char *db, const char *table,
                               int64_t table_id, int64_t partition_id, const char *partition_name,
                               int32_t bucket, int64_t ttl_ms, int role, fl_replica_t **out,
                               fl_error_t *err) {
    if (!rm->data_dir)
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "this server hosts no bucket data");
    pthread_mutex_lock(&rm->lock);
    fl_replica_t *r = fl_rm_find_locked(rm, table_id, partition_id, bucket);
    if (r) {
        fl_replica_ref(r);
        pthread_mutex_unlock(&rm->lock);
        *out = r;
        return 0;
    }
    if (fl_rm_failed_locked(rm, table_id, partition_id, bucket)) {
        pthread_mutex_unlock(&rm->lock);
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION,
                          "the log of bucket %d of table %lld failed to open (storage error); it "
                          "stays offline until the server restarts",
                          bucket, (long long)table_id);
    }
    char *tdir = fl_table_dir(rm, db, table, table_id);
    char dir[4096];
    if (partition_id >= 0)
        snprintf(dir, sizeof(dir), "%s/%s-p%" PRId64 "/log-%d", tdir, partition_name ? partition_name : "",
                 partition_id, bucket);
    else
        snprintf(dir, sizeof(dir), "%s/log-%d", tdir, bucket);
    fl_log_config_t cfg = rm->log_defaults;
    cfg.ttl_ms = ttl_ms;
    fl_log_tablet_t *log = NULL;
    int rc = fl_log_tablet_open(dir, &cfg, &log, err);
    fl_epoch_cache_t epochs;
    fl_epoch_cache_init(&epochs);
    if (!rc) rc = fl_replica_epoch_checkpoint(dir, log, &epochs, err);
    if (rc) {
        /* not retried by the next request: the recovery's fsync of what a
         * crash left in the page cache may be what failed (fsyncgate) */
        if (rc == FLUSS_ERR_LOG_STORAGE_EXCEPTION)
            fl_rm_fail_locked(rm, table_id, partition_id, bucket, err->msg);
        pthread_mutex_unlock(&rm->lock);
        if (log) fl_log_tablet_close(log);
        fl_free(tdir);
        return rc;
    }
    r = fl_calloc(1, sizeof(*r));
    r->table_id = table_id;
    r->partition_id = partition_id;
    r->bucket = bucket;
    r->table_dir = tdir;
    r->rm = rm;
    r->log = log;
    r->epochs = epochs;
    pthread_mutex_init(&r->lock, NULL);
    pthread_mutex_init(&r->bg_lock, NULL);
    fl_replica_kv_init(&r->kv);
    atomic_init(&r->log_start_offset, log->log_start_offset);
    atomic_init(&r->log_end_offset, log->log_end_offset);
    atomic_init(&r->high_watermark, log->log_end_offset);
    atomic_init(&r->flushed_offset, log->log_end_offset);
    atomic_init(&r->refs, 2); /* the table's and the caller's */
    atomic_init(&r->remote_start_offset, INT64_MAX);
    atomic_init(&r->remote_end_offset, -1);
    atomic_init(&r->kv_snapshot_offset, 0);
    atomic_init(&r->lake_guard, false);
    atomic_init(&r->lake_offset, -1);
    /* before it is published: NOTIFY_LEADER_AND_ISR may find it at once */
    atomic_init(&r->role, role);
    atomic_init(&r->lead_epoch, role == FL_REPLICA_LEADER ? 0 : -1);
    r->leader_id = -1;
    atomic_init(&r->remote_told_start, INT64_MIN);
    atomic_init(&r->remote_told_end, INT64_MIN);
    r->tier_epoch = -1;
    if (rm->remote_storage) {
        /* before anyone reads: a log whose start was tiered away must
         * answer with its remote part from the first fetch on */
        fl_remote_bucket_t rb = {db, table, partition_id >= 0 ? (partition_name ? partition_name : "") : NULL,
                                 table_id, partition_id, bucket};
        fl_error_t re;
        if (fl_remote_log_open(rm->remote_storage, &rb, &r->remote, &re) == 0) {
            int64_t rs, rend;
            fl_remote_log_bounds(r->remote, &rs, &rend);
            atomic_store(&r->remote_start_offset, rs);
            atomic_store(&r->remote_end_offset, rend);
        } else {
            FL_WARN("bucket %d of table %lld: its remote log is unavailable, not tiering it: %s",
                    bucket, (long long)table_id, re.msg);
        }
    }
    if (rm->count == rm->cap) {
        rm->cap = rm->cap ? rm->cap * 2 : 16;
        rm->replicas = fl_realloc(rm->replicas, rm->cap * sizeof(*rm->replicas));
    }
    rm->replicas[rm->count++] = r;
    pthread_mutex_unlock(&rm->lock);
    *out = r;
    return 0;
}

/* Takes the replicas matching (table_id, partition_id or any when < -1) out
 * of the table and drops them: deleted when the last reference goes. */
static void fl_rm_drop_matching(fl_replica_manager_t *rm, int64_t table_id, int64_t partition_id) {
    pthread_mutex_lock(&rm->lock);
    for (size_t i = rm->failed_count; i-- > 0;) {
        const struct fl_rm_failed *f = &rm->failed[i];
        if (f->table_id == table_id && (partition_id < -1 || f->partition_id == partition_id))
            rm->failed[i] = rm->failed[--rm->failed_count];
    }
    size_t n = 0;
    fl_replica_t **gone = fl_calloc(rm->count ? rm->count : 1, sizeof(*gone));
    for (size_t i = rm->count; i-- > 0;) {
        fl_replica_t *r = rm->replicas[i];
        if (r->table_id != table_id || (partition_id >= -1 && r->partition_id != partition_id))
            continue;
        gone[n++] = r;
        memmove(&rm->replicas[i], &rm->replicas[i + 1], (rm->count - i - 1) * sizeof(*rm->replicas));
        rm->count--;
    }
    pthread_mutex_unlock(&rm->lock);
    for (size_t i = 0; i < n; i++) {
        atomic_store(&gone[i]->deleted, true);
        fl_replica_unref(gone[i]);
    }
    fl_free(gone);
}

int fl_replica_manager_drop_table(fl_replica_manager_t *rm, const char *db, const char *table,
                                  int64_t table_id, fl_error_t *err) {
    if (!rm->data_dir) return 0; /* a server without bucket data (tests) */
    fl_rm_drop_matching(rm, table_id, -2);
    char *tdir = fl_table_dir(rm, db, table, table_id);
    int rc = fl_fs_remove_tree(tdir, err);
    if (rc) FL_WARN("dropping %s: %s", tdir, err->msg);
    fl_free(tdir);
    return rc;
}

int fl_replica_manager_drop_partition(fl_replica_manager_t *rm, const char *db, const char *table,
                                      int64_t table_id, const char *partition_name,
                                      int64_t partition_id, fl_error_t *err) {
    if (!rm->data_dir) return 0;
    fl_rm_drop_matching(rm, table_id, partition_id);
    char *tdir = fl_table_dir(rm, db, table, table_id);
    size_t n = strlen(tdir) + strlen(partition_name) + 32;
    char *pdir = fl_malloc(n);
    snprintf(pdir, n, "%s/%s-p%" PRId64, tdir, partition_name, partition_id);
    int rc = fl_fs_remove_tree(pdir, err);
    if (rc) FL_WARN("dropping %s: %s", pdir, err->msg);
    fl_free(pdir);
    fl_free(tdir);
    return rc;
}

fl_replica_t **fl_replica_manager_list(fl_replica_manager_t *rm, size_t *n) {
    pthread_mutex_lock(&rm->lock);
    *n = rm->count;
    fl_replica_t **all = fl_calloc(rm->count ? rm->count : 1, sizeof(*all));
    for (size_t i = 0; i < rm->count; i++) {
        all[i] = rm->replicas[i];
        fl_replica_ref(all[i]);
    }
    pthread_mutex_unlock(&rm->lock);
    return all;
}

void fl_replica_manager_retention(fl_replica_manager_t *rm, int64_t now_ms) {
    if (!rm->data_dir) return;
    size_t n;
    fl_replica_t **all = fl_replica_manager_list(rm, &n);
    for (size_t i = 0; i < n; i++) {
        fl_error_t err;
        if (fl_replica_apply_retention(all[i], now_ms, &err)) FL_WARN("retention: %s", err.msg);
        fl_replica_unref(all[i]);
    }
    fl_free(all);
}

void fl_replica_manager_expire_writers(fl_replica_manager_t *rm, int64_t now_ms,
                                       int64_t expiration_ms) {
    size_t n, expired = 0;
    fl_replica_t **all = fl_replica_manager_list(rm, &n);
    for (size_t i = 0; i < n; i++) {
        if (all[i]->log) expired += fl_replica_expire_writers(all[i], now_ms, expiration_ms);
        fl_replica_unref(all[i]);
    }
    fl_free(all);
    if (expired) FL_INFO("expired %zu idle writer id(s)", expired);
}

void fl_replica_manager_flush_dirty(fl_replica_manager_t *rm) {
    if (!rm->data_dir) return;
    size_t n;
    fl_replica_t **all = fl_replica_manager_list(rm, &n);
    for (size_t i = 0; i < n; i++) {
        /* an offline replica flushes nothing again (fail-stop) */
        if (!fl_replica_offline(all[i]) && fl_replica_flushed(all[i]) < fl_replica_log_end(all[i]))
            fl_replica_schedule_flush(all[i]);
        fl_replica_unref(all[i]);
    }
    fl_free(all);
}
