/*
 * server_tablet.c — the tablet server object (server_tablet.h): lifecycle,
 * the hosted-table table, bucket → replica resolution, the watermark hook
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
#include "server_coordinator.h"
#include "server_tiering.h"

#define FL_RETENTION_CHECK_MS_DEFAULT (5 * 60 * 1000)

/* ---- hosted tables ---- */

static void fl_hosted_table_free(fl_hosted_table_t *t) {
    for (size_t i = 0; i < t->schema_count; i++) {
        if (t->schema_ok[i]) fl_schema_free(&t->schemas[i]);
        fl_free(t->schema_types[i]);
        fl_schema_map_free(&t->latest_maps[i]);
    }
    fl_free(t->latest_maps);
    fl_free(t->schemas);
    fl_free(t->schema_ok);
    fl_free(t->schema_types);
    fl_free(t->buckets);
    for (size_t i = 0; i < t->partition_count; i++) {
        fl_free(t->partitions[i].name);
        fl_free(t->partitions[i].buckets);
    }
    fl_free(t->partitions);
    fl_free(t->database);
    fl_free(t->name);
    fl_free(t->log_format);
    fl_free(t->stats_columns);
    fl_hosted_kv_table_free(t->kv);
    fl_free(t);
}

void fl_hosted_table_unref(fl_hosted_table_t *t) {
    if (t && atomic_fetch_sub(&t->refs, 1) == 1) fl_hosted_table_free(t);
}

/* table.log.ttl in Fluss's duration syntax; the default when unset or
 * unreadable (CREATE_TABLE validated it). */
static int64_t fl_parse_ttl_ms(const char *v, int64_t dflt) {
    int64_t ms;
    fl_error_t e;
    if (!v || fl_duration_parse_ms(v, &ms, &e) != 0) return dflt;
    return ms;
}

static fl_ms_bucket_t *fl_buckets_copy(const fl_ms_bucket_t *b, int32_t n) {
    fl_ms_bucket_t *c = fl_calloc(n > 0 ? (size_t)n : 1, sizeof(*c));
    if (n > 0) memcpy(c, b, (size_t)n * sizeof(*c));
    return c;
}

static fl_hosted_table_t *fl_hosted_table_from(const fl_ms_table_t *m) {
    fl_hosted_table_t *t = fl_calloc(1, sizeof(*t));
    atomic_init(&t->refs, 1);
    t->table_id = m->table_id;
    t->database = fl_strdup(m->database);
    t->name = fl_strdup(m->name);
    t->schema_id = m->schema_id;
    json_t *j = json_loads(m->table_json, 0, NULL);
    json_t *props = j ? json_object_get(j, "properties") : NULL;
    t->ttl_ms = fl_parse_ttl_ms(json_string_value(json_object_get(props, "table.log.ttl")),
                                7LL * 24 * 3600 * 1000);
    /* validated at CREATE TABLE (> 0) */
    const char *ls = json_string_value(json_object_get(props, "table.log.tiered.local-segments"));
    t->tiered_local_segments = ls ? (int32_t)strtol(ls, NULL, 10) : 2;
    if (t->tiered_local_segments < 1) t->tiered_local_segments = 2;
    const char *fmt = json_string_value(json_object_get(props, "table.log.format"));
    t->log_format = fl_strdup(fmt ? fmt : "ARROW");
    const char *sc = json_string_value(json_object_get(props, "table.statistics.columns"));
    t->stats_columns = sc ? fl_strdup(sc) : NULL;
    json_t *pk = j ? json_object_get(json_object_get(j, "schema"), "primary_key") : NULL;
    t->has_primary_key = pk && json_array_size(pk) > 0;
    t->schema_count = m->schema_count;
    size_t n = m->schema_count ? m->schema_count : 1;
    t->schemas = fl_calloc(n, sizeof(*t->schemas));
    t->schema_ok = fl_calloc(n, sizeof(bool));
    t->schema_types = fl_calloc(n, sizeof(*t->schema_types));
    for (size_t i = 0; i < m->schema_count; i++) {
        json_t *sj = json_loads(m->schema_jsons[i], 0, NULL);
        fl_error_t e;
        if (sj && fl_schema_from_json(sj, &t->schemas[i], &e) == 0) {
            t->schema_ok[i] = true;
            fl_schema_t *s = &t->schemas[i];
            t->schema_types[i] = fl_calloc(s->column_count ? s->column_count : 1,
                                           sizeof(fl_datatype_t *));
            for (size_t c = 0; c < s->column_count; c++) t->schema_types[i][c] = s->columns[c].type;
            if (i + 1 == m->schema_count) t->has_primary_key |= s->has_primary_key;
        }
        if (sj) json_decref(sj);
    }
    /* every schema's columns in the latest one; a schema that does not
     * parse (or an unparsed latest) gets no map */
    t->latest_maps = fl_calloc(n, sizeof(*t->latest_maps));
    bool latest_ok = m->schema_count > 0 && t->schema_ok[m->schema_count - 1];
    for (size_t i = 0; latest_ok && i < m->schema_count; i++)
        if (t->schema_ok[i])
            fl_schema_map_init(&t->latest_maps[i], &t->schemas[i],
                               &t->schemas[m->schema_count - 1]);
    t->bucket_count = m->bucket_count;
    t->buckets = fl_buckets_copy(m->buckets, m->bucket_count);
    t->partitioned = m->partition_count > 0 || m->bucket_count == 0;
    t->partition_count = m->partition_count;
    t->partitions = fl_calloc(m->partition_count ? m->partition_count : 1, sizeof(*t->partitions));
    for (size_t i = 0; i < m->partition_count; i++) {
        const fl_ms_partition_t *p = &m->partitions[i];
        t->partitions[i].partition_id = p->partition_id;
        t->partitions[i].name = fl_strdup(p->name);
        t->partitions[i].bucket_count = p->bucket_count;
        t->partitions[i].buckets = fl_buckets_copy(p->buckets, p->bucket_count);
    }
    if (t->has_primary_key && j) t->kv = fl_hosted_kv_table_new(t, j);
    if (j) json_decref(j);
    return t;
}

const fl_datatype_t *const *fl_hosted_table_schema_types(const fl_hosted_table_t *t,
                                                         int16_t schema_id, size_t *count) {
    if (schema_id < 1 || (size_t)schema_id > t->schema_count || !t->schema_ok[schema_id - 1])
        return NULL;
    *count = t->schemas[schema_id - 1].column_count;
    return t->schema_types[schema_id - 1];
}

const fl_schema_map_t *fl_hosted_table_latest_map(const fl_hosted_table_t *t, int16_t schema_id) {
    if (schema_id < 1 || (size_t)schema_id > t->schema_count ||
        !t->latest_maps[schema_id - 1].source)
        return NULL;
    return &t->latest_maps[schema_id - 1];
}

/* Under the write lock: index of table_id or -1. */
static ssize_t fl_tables_find(fl_tablet_server_t *ts, int64_t table_id) {
    for (size_t i = 0; i < ts->table_count; i++)
        if (ts->tables[i]->table_id == table_id) return (ssize_t)i;
    return -1;
}

/* Opens (recovering) every bucket of t this server leads, on the caller's
 * thread — the coordinator's worker after a DDL, main at start — so that
 * no network loop pays for a bucket's recovery. */
static void fl_tablet_server_open_led(fl_tablet_server_t *ts, const fl_hosted_table_t *t) {
    for (int32_t b = 0; b < t->bucket_count; b++) {
        if (t->buckets[b].leader != ts->self.id) continue;
        fl_replica_t *r = NULL;
        fl_error_t e;
        if (fl_tablet_server_replica(ts, t->table_id, t, false, -1, b, &r, &e) == 0) {
            fl_kv_tablet_t *kt;
            if (t->kv && fl_tablet_server_kv(ts, t, r, &kt, &e))
                FL_WARN("tablet server %d: opening the kv of bucket %d of table %lld: %s",
                        ts->self.id, b, (long long)t->table_id, e.msg);
            fl_replica_unref(r);
        } else FL_WARN("tablet server %d: opening bucket %d of table %lld: %s", ts->self.id, b,
                     (long long)t->table_id, e.msg);
    }
    for (size_t i = 0; i < t->partition_count; i++) {
        const fl_hosted_partition_t *p = &t->partitions[i];
        for (int32_t b = 0; b < p->bucket_count; b++) {
            if (p->buckets[b].leader != ts->self.id) continue;
            fl_replica_t *r = NULL;
            fl_error_t e;
            if (fl_tablet_server_replica(ts, t->table_id, t, true, p->partition_id, b, &r, &e) == 0) {
                fl_kv_tablet_t *kt;
                if (t->kv && fl_tablet_server_kv(ts, t, r, &kt, &e))
                    FL_WARN("tablet server %d: opening the kv of bucket %d of partition %lld: %s",
                            ts->self.id, b, (long long)p->partition_id, e.msg);
                fl_replica_unref(r);
            } else FL_WARN("tablet server %d: opening bucket %d of partition %lld: %s", ts->self.id,
                         b, (long long)p->partition_id, e.msg);
        }
    }
}

/* Auto-increment blocks come from the coordinator's metadata store (the
 * one durable counter per table that every bucket draws from). */
static int fl_tablet_autoinc_reserve(void *ctx, int64_t table_id, int64_t count, int64_t *first,
                                     fl_error_t *err) {
    fl_tablet_server_t *ts = ctx;
    if (!ts->cs)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          "Failed to fetch auto-increment values: no coordinator.");
    return fl_coordinator_server_autoinc_reserve(ts->cs, table_id, count, first, err);
}

void fl_tablet_server_update_table(fl_tablet_server_t *ts, const fl_ms_table_t *m) {
    fl_hosted_table_t *t = fl_hosted_table_from(m), *old = NULL;
    if (t->kv) { /* set before the table is published */
        t->kv->autoinc_reserve = fl_tablet_autoinc_reserve;
        t->kv->autoinc_ctx = ts;
    }
    pthread_rwlock_wrlock(&ts->tables_lock);
    ssize_t i = fl_tables_find(ts, m->table_id);
    if (i >= 0) {
        old = ts->tables[i];
        ts->tables[i] = t;
    } else {
        if (ts->table_count == ts->table_cap) {
            ts->table_cap = ts->table_cap ? ts->table_cap * 2 : 16;
            ts->tables = fl_realloc(ts->tables, ts->table_cap * sizeof(*ts->tables));
        }
        ts->tables[ts->table_count++] = t;
    }
    atomic_fetch_add(&t->refs, 1);
    pthread_rwlock_unlock(&ts->tables_lock);
    fl_hosted_table_unref(old);
    fl_tablet_server_open_led(ts, t);
    fl_hosted_table_unref(t);
}

void fl_tablet_server_drop_table(fl_tablet_server_t *ts, const char *db, const char *name,
                                 int64_t table_id) {
    fl_hosted_table_t *old = NULL;
    pthread_rwlock_wrlock(&ts->tables_lock);
    ssize_t i = fl_tables_find(ts, table_id);
    if (i >= 0) {
        old = ts->tables[i];
        ts->tables[i] = ts->tables[--ts->table_count];
    }
    pthread_rwlock_unlock(&ts->tables_lock);
    fl_hosted_table_unref(old);
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

fl_hosted_table_t *fl_tablet_server_table(fl_tablet_server_t *ts, int64_t table_id) {
    pthread_rwlock_rdlock(&ts->tables_lock);
    fl_hosted_table_t *t = NULL;
    for (size_t i = 0; i < ts->table_count && !t; i++)
        if (ts->tables[i]->table_id == table_id) t = ts->tables[i];
    if (t) atomic_fetch_add(&t->refs, 1);
    pthread_rwlock_unlock(&ts->tables_lock);
    return t;
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
    int64_t pid = part ? part->partition_id : -1;
    fl_replica_t *r = fl_replica_manager_find(&ts->replicas, t->table_id, pid, bucket);
    if (r) {
        *out = r;
        return 0;
    }
    /* a tiered log's TTL is for its remote segments (server_tiering.h) */
    return fl_replica_manager_open(&ts->replicas, t->database, t->name, t->table_id, pid,
                                   part ? part->name : NULL, bucket,
                                   ts->remote_storage ? 0 : t->ttl_ms, out, err);
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

int fl_tablet_server_kv(fl_tablet_server_t *ts, const fl_hosted_table_t *t, fl_replica_t *r,
                        fl_kv_tablet_t **out, fl_error_t *err) {
    fl_kv_tablet_t *kt = atomic_load(&r->kv);
    if (kt) {
        *out = kt;
        return 0;
    }
    if (!t->kv)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "Table %s.%s has no primary key.", t->database, t->name);
    pthread_mutex_lock(&ts->kv_open_lock);
    int rc = 0;
    kt = atomic_load(&r->kv);
    if (!kt) {
        /* <table>/kv-<bucket> beside <table>/log-<bucket> */
        char dir[4200], remote[8400];
        const char *ld = r->log->dir;
        const char *slash = strrchr(ld, '/');
        size_t base = slash ? (size_t)(slash - ld) + 1 : 0;
        snprintf(dir, sizeof(dir), "%.*skv-%d", (int)base, ld, r->bucket);
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
        rc = fl_kv_tablet_open(dir, r, t->kv, &o, &kt, err);
        if (!rc) {
            kt->on_close = fl_kv_on_close;
            kt->on_close_ctx = ts;
            kt->commit_submit = fl_kv_commit_submit;
            kt->commit_ctx = ts;
            fl_error_t e;
            if (fl_kv_tablet_set_remote(kt, remote, &e))
                FL_WARN("kv %s: snapshots in %s: %s", dir, remote, e.msg);
            ts->kv_open[ts->kv_open_count++] = kt;
            fl_kv_budget_apply(ts);
            r->kv_close = fl_kv_close_cb;
            atomic_store(&r->kv, kt);
        }
    }
    pthread_mutex_unlock(&ts->kv_open_lock);
    if (!rc) *out = kt;
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

static void fl_on_flush_timer(uv_timer_t *t) {
    fl_tablet_server_t *ts = t->data;
    fl_replica_manager_flush_dirty(&ts->replicas);
}

/* What retention asks of the coordinator's leases for one bucket. */
typedef struct fl_pin_ctx {
    fl_tablet_server_t *ts;
    fl_replica_t *r;
    int64_t now_ms;
} fl_pin_ctx_t;

static bool fl_snapshot_pinned(void *arg, int64_t id) {
    fl_pin_ctx_t *p = arg;
    fl_kv_leases_t *l = p->ts->cs ? p->ts->cs->leases : NULL;
    return l && fl_kv_leases_pinned(l, p->r->table_id, p->r->partition_id, p->r->bucket, id,
                                    p->now_ms);
}

size_t fl_tablet_server_snapshot_now(fl_tablet_server_t *ts) {
    /* the replicas of the open kv tablets, referenced while we work (a
     * replica being destroyed is skipped: its tablet is closing) */
    pthread_mutex_lock(&ts->kv_open_lock);
    size_t n = 0;
    fl_replica_t **rs = fl_calloc(ts->kv_open_count ? ts->kv_open_count : 1, sizeof(*rs));
    for (size_t i = 0; i < ts->kv_open_count; i++)
        if (fl_replica_tryref(ts->kv_open[i]->replica)) rs[n++] = ts->kv_open[i]->replica;
    pthread_mutex_unlock(&ts->kv_open_lock);
    size_t taken = 0;
    int keep = ts->cfg.kv_snapshot_retained > 0 ? ts->cfg.kv_snapshot_retained : 2;
    for (size_t i = 0; i < n; i++) {
        fl_kv_tablet_t *kt = atomic_load(&rs[i]->kv);
        if (kt && !atomic_load(&rs[i]->deleted)) {
            fl_pin_ctx_t pin = {ts, rs[i], fl_time_wall_ms()};
            bool took = false;
            fl_error_t e;
            if (fl_kv_tablet_snapshot(kt, pin.now_ms, (size_t)keep, fl_snapshot_pinned, &pin,
                                      &took, &e))
                FL_WARN("tablet server %d: kv snapshot of %s: %s", ts->self.id, kt->dir, e.msg);
            taken += took;
        }
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
    pthread_rwlock_init(&ts->tables_lock, NULL);
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
    ts->rpc = fl_rpc_server_new(ts->loops, ts->loop_count, &cfg->limits, fl_server_handle);
    ts->role = (fl_server_role_t){FL_ROLE_TS, NULL, ts, &ts->self};
    (void)err;
    *out = ts;
    return 0;
}

int fl_tablet_server_start(fl_tablet_server_t *ts, fl_error_t *err) {
    /* a disk already past the limit refuses the first write too */
    if (ts->disk.limit_ratio < 1.0) fl_disk_guard_sample(&ts->disk);
    int port = 0;
    int rc = fl_rpc_server_listen(ts->rpc, ts->cfg.bind_host, ts->cfg.bind_port, &ts->role, &port,
                                  err);
    if (rc) return rc;
    if (ts->self.port == 0) ts->self.port = port;
    fl_rpc_loop_post(ts->loops[0], fl_tablet_timers_start, ts);
    for (size_t i = 0; i < ts->loop_count; i++)
        if (fl_rpc_loop_start(ts->loops[i]))
            return fl_err_set(err, FLUSS_ERR__STATE, "cannot start network thread %zu", i);
    ts->started = true;
    return 0;
}

void fl_tablet_server_stop(fl_tablet_server_t *ts) {
    if (!ts->started) return;
    ts->started = false;
    /* parked operations answer first: their answers are posted to the
     * loops ahead of the connection close below (each loop runs its tasks
     * in order); anything parked after this completes at once */
    fl_purgatory_shutdown(ts->purgatory);
    fl_rpc_server_close(ts->rpc);
}

void fl_tablet_server_destroy(fl_tablet_server_t *ts) {
    if (!ts) return;
    fl_tablet_server_stop(ts);
    for (size_t i = 0; i < ts->loop_count; i++) fl_rpc_loop_destroy(ts->loops[i]);
    fl_rpc_server_destroy(ts->rpc);
    /* no loop runs now: nothing appends; puts and flushes in the queues
     * finish first */
    fl_workq_destroy(ts->kv_writer);
    fl_workq_destroy(ts->kv_committer); /* after the puts that queue its jobs */
    fl_workq_destroy(ts->workers);
    ts->replicas.workers = NULL;
    fl_replica_manager_close(&ts->replicas);
    fl_tablet_tiering_destroy(ts); /* after the replicas' remote logs closed */
    fl_purgatory_destroy(ts->purgatory); /* last: flushes above still reported moves */
    for (size_t i = 0; i < ts->table_count; i++) fl_hosted_table_unref(ts->tables[i]);
    fl_free(ts->tables);
    pthread_rwlock_destroy(&ts->tables_lock);
    pthread_mutex_destroy(&ts->kv_open_lock);
    fl_free(ts->kv_open);
    fl_kv_cache_destroy(ts->kv_cache); /* after every store closed with its replica */
    fl_free(ts);
}
