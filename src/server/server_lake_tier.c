/*
 * server_lake_tier.c — the coordinator's lake tiering service
 * (server_lake_tier.h).
 */
#define _GNU_SOURCE
#include "server_lake_tier.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common_alloc.h"
#include "common_duration.h"
#include "common_fs.h"
#include "lake_parquet_meta.h"
#include "common_log.h"
#include "common_time.h"
#include "common_uuid.h"
#include "common_vfs.h"
#include "coordinator_lake_table.h"
#include "proto_api.h"
#include "server_call.h"
#include "server_coordinator.h"
#include "server_lake_commit.h"
#include "server_lake_expire.h"
#include "server_lake_gc.h"
#include "server_push.h"
#include "tier_writer.h"

#define FL_TIER_TICK_MS 500

/* A table's next round begins table.datalake.freshness after base_ms:
 * when its last round began, or when the service first saw it (as Fluss
 * schedules a new table: after one freshness). The freshness is read
 * again every tick, so an ALTER of it applies at once. */
typedef struct fl_tier_due {
    int64_t table_id;
    int64_t base_ms; /* monotonic */
    /* its orphans were swept since the service started, and its last
     * round did not fail (a failure sweeps again: server_lake_gc.h) */
    bool clean;
} fl_tier_due_t;

/* A round asked for now (LAKE_TIER_NOW), answered by its callback. */
typedef struct fl_tier_ask {
    int64_t table_id;
    fl_lake_tier_done_fn done;
    void *arg;
    struct fl_tier_ask *next;
} fl_tier_ask_t;

struct fl_lake_tierer {
    fl_coordinator_server_t *cs;
    fl_tier_ask_t *asks; /* (mu) asked, not run yet */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool running;
    atomic_bool stopping;
    /* the tiering thread's own */
    fl_tier_due_t *due;
    size_t n_due, cap_due;
};

/* One bucket of a round, copied from the catalog. */
typedef struct fl_tier_bucket {
    int64_t partition_id; /* -1: none */
    fl_strlist_t values;  /* the partition's values, in partition-key order */
    int32_t bucket;
    int32_t leader;
    Fluss__TierLakeBucketResponse *resp;
} fl_tier_bucket_t;

typedef struct fl_tier_round {
    bool sweep; /* remove its orphans first */
    /* asked for (LAKE_TIER_NOW): a bucket that was not tiered fails it,
     * after the others were committed */
    bool strict;
    int64_t table_id;
    char *db, *name;
    fl_table_desc_t desc;
    fl_tier_bucket_t *buckets;
    size_t n;
} fl_tier_round_t;

static void fl_tier_round_free(fl_tier_round_t *r) {
    for (size_t i = 0; i < r->n; i++) {
        fl_strlist_free(&r->buckets[i].values);
        if (r->buckets[i].resp) protobuf_c_message_free_unpacked(&r->buckets[i].resp->base, NULL);
    }
    fl_free(r->buckets);
    fl_free(r->db);
    fl_free(r->name);
    fl_table_desc_free(&r->desc);
    memset(r, 0, sizeof(*r));
}

static void fl_tier_add_bucket(fl_tier_round_t *r, size_t *cap, int64_t partition_id,
                               char *const *values, size_t n_values, int32_t bucket,
                               const fl_ms_bucket_t *b) {
    if (r->n == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        r->buckets = fl_realloc(r->buckets, *cap * sizeof(*r->buckets));
    }
    fl_tier_bucket_t *tb = &r->buckets[r->n++];
    memset(tb, 0, sizeof(*tb));
    tb->partition_id = partition_id;
    for (size_t i = 0; i < n_values; i++) fl_strlist_add(&tb->values, values[i]);
    tb->bucket = bucket;
    tb->leader = b->leader;
}

/* (cs->lock) What a round of t needs; false when t is not a lake table. */
static bool fl_tier_round_of(const fl_ms_table_t *t, fl_tier_round_t *r, int64_t *freshness_ms) {
    fl_error_t err;
    memset(r, 0, sizeof(*r));
    if (!strstr(t->table_json, "table.datalake.enabled")) return false;
    if (fl_table_desc_from_bytes(t->table_json, strlen(t->table_json), &r->desc, &err))
        return false;
    if (!fl_lake_table_enabled(&r->desc.properties)) {
        fl_table_desc_free(&r->desc);
        return false;
    }
    const char *f = fl_kvlist_get(&r->desc.properties, "table.datalake.freshness");
    *freshness_ms = FL_LAKE_FRESHNESS_DEFAULT_MS;
    if (f && fl_duration_parse_ms(f, freshness_ms, &err)) *freshness_ms = FL_LAKE_FRESHNESS_DEFAULT_MS;
    r->table_id = t->table_id;
    r->db = fl_strdup(t->database);
    r->name = fl_strdup(t->name);
    size_t cap = 0;
    for (int32_t b = 0; b < t->bucket_count; b++)
        fl_tier_add_bucket(r, &cap, -1, NULL, 0, b, &t->buckets[b]);
    for (size_t p = 0; p < t->partition_count; p++) {
        const fl_ms_partition_t *part = &t->partitions[p];
        for (int32_t b = 0; b < part->bucket_count; b++)
            fl_tier_add_bucket(r, &cap, part->partition_id, part->values, part->value_count, b,
                               &part->buckets[b]);
    }
    return true;
}

/* The lake field ids of the table's columns (every node of a nested
 * column's type, tier_writer.h), then of the system ones. */
static int32_t *fl_tier_field_ids(const fl_tier_round_t *r, const fl_ice_table_head_t *h,
                                  size_t *n, fl_error_t *err) {
    const fl_ice_table_meta_t *m = &h->meta.meta;
    const fl_ice_schema_t *s = fl_ice_meta_schema(m, m->current_schema_id);
    const fl_schema_t *fs = &r->desc.schema;
    static const char *const sys[] = {"__bucket", "__offset", "__timestamp"};
    size_t cap = fl_tier_field_id_count(fs), at = 0;
    int32_t *ids = fl_calloc(cap, sizeof(*ids));
    for (size_t i = 0; i < fs->column_count + 3; i++) {
        const char *name = i < fs->column_count ? fs->columns[i].name : sys[i - fs->column_count];
        const fl_ice_field_t *f = NULL;
        for (size_t k = 0; s && k < s->n_fields && !f; k++)
            if (strcmp(s->fields[k].name, name) == 0) f = &s->fields[k];
        if (!f) {
            fl_err_set(err, FLUSS_ERR__STATE,
                       "column '%s' of %s.%s is not in its lake table's schema", name, r->db,
                       r->name);
            fl_free(ids);
            return NULL;
        }
        if (i >= fs->column_count || !f->nested) {
            ids[at++] = f->id;
            continue;
        }
        size_t got = 0;
        if (fl_lake_column_ids(fs->columns[i].type, f, ids + at, cap - at, &got, err)) {
            fl_err_prefix(err, "%s.%s: ", r->db, r->name);
            fl_free(ids);
            return NULL;
        }
        at += got;
    }
    if (at != cap) {
        fl_err_set(err, FLUSS_ERR__STATE, "%s.%s: %zu lake field ids for %zu nodes", r->db,
                   r->name, at, cap);
        fl_free(ids);
        return NULL;
    }
    *n = at;
    return ids;
}

/* Where bucket tb's files go: <dir>/data/[<key>=<value>/...]<bucket field>=<b> */
static void fl_tier_data_dir(const char *dir, const fl_tier_round_t *r, const fl_tier_bucket_t *tb,
                             char *out, size_t cap) {
    size_t n = (size_t)snprintf(out, cap, "%s/data", dir);
    for (size_t i = 0; i < tb->values.count && i < r->desc.partition_keys.count && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "/%s=%s", r->desc.partition_keys.items[i],
                              tb->values.items[i]);
    if (n >= cap) return;
    if (r->desc.bucket_keys.count > 0)
        snprintf(out + n, cap - n, "/%s_bucket=%d", r->desc.bucket_keys.items[0], tb->bucket);
    else
        snprintf(out + n, cap - n, "/__bucket=%d", tb->bucket);
}

static const char *fl_tier_codec(const fl_ice_table_meta_t *m) {
    for (size_t i = 0; i < m->n_properties; i++)
        if (strcmp(m->properties[i].key, "write.parquet.compression-codec") == 0) {
            switch (fl_pq_codec_of_name(m->properties[i].value)) {
            case FL_PQ_CODEC_UNCOMPRESSED: return "uncompressed";
            case FL_PQ_CODEC_SNAPPY: return "snappy";
            case FL_PQ_CODEC_GZIP: return "gzip";
            default: return "zstd";
            }
        }
    return "zstd";
}

/* The request to bucket tb's leader for its range from start (the
 * strings it points to are the caller's). */
typedef struct fl_tier_ask_bucket {
    char data_dir[8192];
    Fluss__TierLakeBucketRequest req;
    fl_push_send_ctx_t to;
} fl_tier_ask_bucket_t;

static int fl_tier_prepare(fl_lake_tierer_t *t, const char *dir, const fl_tier_round_t *r,
                           const fl_tier_bucket_t *tb, int64_t start, int64_t base_snapshot_id,
                           const char *prefix, int32_t *ids, size_t n_ids, const char *codec,
                           fl_tier_ask_bucket_t *a, fl_error_t *err) {
    fl_tier_data_dir(dir, r, tb, a->data_dir, sizeof(a->data_dir));
    if (fl_fs_mkdirs(a->data_dir, err)) return err->code;
    Fluss__TierLakeBucketRequest *req = &a->req;
    fluss__tier_lake_bucket_request__init(req);
    req->coordinator_epoch = t->cs->cfg.coordinator_epoch;
    req->table_id = r->table_id;
    req->has_partition_id = tb->partition_id >= 0;
    req->partition_id = tb->partition_id;
    req->bucket_id = tb->bucket;
    req->start_offset = start;
    req->data_dir = a->data_dir;
    req->file_prefix = (char *)prefix;
    req->has_target_file_bytes = true;
    req->target_file_bytes = FL_TIER_TARGET_FILE_BYTES;
    req->compression = (char *)codec;
    req->field_ids = ids;
    req->n_field_ids = n_ids;
    if (r->desc.schema.has_primary_key) {
        /* the leader's lake index follows the snapshot the round builds on */
        req->table_dir = (char *)dir;
        req->has_base_snapshot_id = base_snapshot_id != FL_ICE_NONE;
        req->base_snapshot_id = base_snapshot_id;
        req->partition_values = tb->values.items;
        req->n_partition_values = tb->values.count;
    }
    a->to = (fl_push_send_ctx_t){t->cs->push, tb->leader};
    return 0;
}

/* Says why bucket tb was not tiered, in the log and, for the first, in
 * *first. */
static void fl_tier_bucket_failed(const fl_tier_round_t *r, const fl_tier_bucket_t *tb,
                                  int code, const char *why, fl_error_t *first) {
    FL_WARN("lake tiering: %s.%s bucket %d (partition %" PRId64 "): %s", r->db, r->name,
            tb->bucket, tb->partition_id, why);
    if (!first->code)
        fl_err_set(first, code ? code : FLUSS_ERR__INVALID_ARG,
                   "bucket %d (partition %" PRId64 ") of %s.%s was not tiered: %s", tb->bucket,
                   tb->partition_id, r->db, r->name, why);
}

/* Asks every bucket's leader at once (they write side by side, each on
 * its tablet server's pool); tb->resp for each that answered. Returns how
 * many did not (a leader that died mid-write may have left files), the
 * first one's error in *first. */
static size_t fl_tier_ask_leaders(fl_lake_tierer_t *t, const char *dir, fl_tier_round_t *r,
                                const fl_lake_offsets_t *offs, int64_t base_snapshot_id,
                                const char *prefix, int32_t *ids, size_t n_ids,
                                const char *codec, fl_error_t *first) {
    fl_tier_ask_bucket_t *asks = fl_calloc(r->n ? r->n : 1, sizeof(*asks));
    fl_server_call_t *calls = fl_calloc(r->n ? r->n : 1, sizeof(*calls));
    size_t *which = fl_calloc(r->n ? r->n : 1, sizeof(*which));
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++) {
        const fl_tier_bucket_t *tb = &r->buckets[i];
        int64_t start = fl_lake_offsets_get(offs, tb->partition_id, tb->bucket);
        fl_error_t e;
        fl_err_clear(&e);
        if (tb->leader < 0) {
            fl_tier_bucket_failed(r, tb, FLUSS_ERR_LEADER_NOT_AVAILABLE_EXCEPTION, "no leader",
                                  first);
            continue;
        }
        if (fl_tier_prepare(t, dir, r, tb, start < 0 ? 0 : start, base_snapshot_id, prefix, ids,
                            n_ids, codec, &asks[n], &e)) {
            fl_tier_bucket_failed(r, tb, e.code, e.msg, first);
            continue;
        }
        calls[n] = (fl_server_call_t){.send = fl_push_send,
                                      .ctx = &asks[n].to,
                                      .api_key = FL_API_TIER_LAKE_BUCKET,
                                      .req = &asks[n].req.base,
                                      .resp_desc = &fluss__tier_lake_bucket_response__descriptor};
        which[n++] = i;
    }
    fl_server_call_all(calls, n);
    size_t failed = r->n - n;
    for (size_t k = 0; k < n; k++) {
        fl_tier_bucket_t *tb = &r->buckets[which[k]];
        failed += calls[k].rc != 0;
        if (calls[k].rc)
            fl_tier_bucket_failed(r, tb, calls[k].rc, calls[k].err.msg, first);
        else
            tb->resp = (Fluss__TierLakeBucketResponse *)calls[k].resp;
    }
    fl_free(which);
    fl_free(calls);
    fl_free(asks);
    return failed;
}

static void fl_tier_remove_files(const fl_tier_round_t *r) {
    for (size_t i = 0; i < r->n; i++) {
        const Fluss__TierLakeBucketResponse *resp = r->buckets[i].resp;
        for (size_t k = 0; resp && k < resp->n_data_files; k++)
            fl_vfs_unlink(fl_lake_uri_path(resp->data_files[k]->file_path));
        for (size_t k = 0; resp && k < resp->n_delete_files; k++)
            fl_vfs_unlink(fl_lake_uri_path(resp->delete_files[k]->file_path));
    }
}

static void fl_tier_notify_done(void *arg, const fl_rpc_reply_t *reply) {
    (void)arg;
    (void)reply; /* a lost one keeps more log until the next round's */
}

/* NOTIFY_LAKE_TABLE_OFFSET of the table's lake offsets to every tablet
 * server: their replicas keep the segments the lake lacks, and delete
 * the rest as retention allows. Sent after every round, so that servers
 * that (re)started learn them too. */
void fl_lake_notify_offsets(fl_coordinator_server_t *cs, int64_t table_id, int64_t snapshot_id,
                            const fl_lake_offsets_t *offs) {
    size_t n = 0;
    for (size_t i = 0; i < offs->count; i++) n += offs->items[i].offset >= 0;
    if (!n) return;
    Fluss__PbNotifyLakeTableOffsetReqForBucket *bs = fl_calloc(n, sizeof(*bs));
    Fluss__PbNotifyLakeTableOffsetReqForBucket **ptrs = fl_calloc(n, sizeof(*ptrs));
    size_t k = 0;
    for (size_t i = 0; i < offs->count; i++) {
        const fl_lake_offset_t *o = &offs->items[i];
        if (o->offset < 0) continue;
        fluss__pb_notify_lake_table_offset_req_for_bucket__init(&bs[k]);
        bs[k].table_id = table_id;
        bs[k].has_partition_id = o->partition_id >= 0;
        bs[k].partition_id = o->partition_id;
        bs[k].bucket_id = o->bucket;
        bs[k].snapshot_id = snapshot_id;
        bs[k].has_log_end_offset = 1;
        bs[k].log_end_offset = o->offset;
        ptrs[k] = &bs[k];
        k++;
    }
    Fluss__NotifyLakeTableOffsetRequest req = FLUSS__NOTIFY_LAKE_TABLE_OFFSET_REQUEST__INIT;
    req.coordinator_epoch = cs->cfg.coordinator_epoch;
    req.n_notify_buckets_req = k;
    req.notify_buckets_req = ptrs;
    size_t len = protobuf_c_message_get_packed_size(&req.base);
    uint8_t *body = fl_malloc(len ? len : 1);
    protobuf_c_message_pack(&req.base, body);
    fl_endpoint_t eps[FL_CATALOG_TABLET_SERVERS_MAX];
    size_t ne = fl_push_tablets(cs->push, eps, FL_CATALOG_TABLET_SERVERS_MAX);
    for (size_t i = 0; i < ne; i++) {
        fl_push_send_ctx_t to = {cs->push, eps[i].id};
        fl_push_send(&to, FL_API_NOTIFY_LAKE_TABLE_OFFSET, body, len, fl_tier_notify_done, NULL);
    }
    fl_free(body);
    fl_free(ptrs);
    fl_free(bs);
}

static fl_tier_due_t *fl_tier_due_of(fl_lake_tierer_t *t, int64_t table_id, int64_t now);

/* table.datalake.auto-expire-snapshot, read from the round's copy of
 * the table (each round sees the table's properties as they are then),
 * or the server's lake.tiering.auto-expire-snapshot for every table, as
 * 0.9.1's PaimonLakeCommitter takes either. */
static bool fl_tier_auto_expire(const fl_lake_tierer_t *t, const fl_tier_round_t *r) {
    const char *v = fl_kvlist_get(&r->desc.properties, FL_LAKE_AUTO_EXPIRE_KEY);
    return (v && strcasecmp(v, "true") == 0) || t->cs->cfg.defaults.lake.auto_expire_snapshot;
}

/* Snapshot expiry after a committed round (server_lake_expire.h). Its
 * failure is not the round's: the round's version stands. Files it could
 * not delete are orphans, so the next round sweeps first. */
static void fl_tier_expire(fl_lake_tierer_t *t, const fl_tier_round_t *r, const char *dir) {
    fl_lake_expire_result_t res;
    fl_error_t e;
    fl_err_clear(&e);
    int rc = fl_lake_expire(dir, fl_time_wall_ms(), &res, &e);
    if (res.version)
        FL_INFO("lake tiering: %s.%s: %zu snapshot(s) expired (v%d), %zu file(s) deleted", r->db,
                r->name, res.expired, res.version, res.deleted);
    if (!rc) return;
    FL_WARN("lake tiering: %s.%s: snapshot expiry: %s", r->db, r->name, e.msg);
    if (res.version) fl_tier_due_of(t, r->table_id, fl_time_mono_ms())->clean = false;
}

/* One round of r's table: ask every leader, commit what they wrote.
 * *snapshot_id: the table's lake snapshot after it (FL_ICE_NONE: none),
 * *added: the rows it tiered. */
static int fl_tier_round_run(fl_lake_tierer_t *t, fl_tier_round_t *r, int64_t *snapshot_id,
                             int64_t *added, fl_error_t *err) {
    const fl_lake_config_t *lake = &t->cs->cfg.defaults.lake;
    char dir[4096 + 512];
    if (!fl_lake_table_dir(lake, r->db, r->name, dir, sizeof(dir)))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "the lake table's path is too long");
    fl_ice_table_head_t h;
    fl_ice_table_head_init(&h);
    fl_lake_offsets_t offs = {0};
    fl_lake_new_file_t *files = NULL;
    int32_t *ids = NULL;
    size_t n_ids = 0, n_files = 0, cap_files = 0;
    fl_error_t first; /* the first bucket that was not tiered */
    fl_err_clear(&first);
    if (r->sweep) {
        size_t removed = 0;
        fl_error_t e;
        fl_err_clear(&e);
        if (fl_lake_gc(dir, lake->orphan_min_age_ms, &removed, &e))
            FL_WARN("lake tiering: %s.%s: orphan sweep: %s", r->db, r->name, e.msg);
        else if (removed)
            FL_INFO("lake tiering: %s.%s: %zu orphan file(s) removed", r->db, r->name, removed);
    }
    int rc = fl_ice_table_load(dir, &h, err);
    if (!rc) rc = fl_lake_head_offsets(&h, r->table_id, &offs, err);
    *snapshot_id = rc ? FL_ICE_NONE : h.meta.meta.current_snapshot_id;
    *added = 0;
    if (!rc && !(ids = fl_tier_field_ids(r, &h, &n_ids, err))) rc = err->code;
    if (rc) goto done;
    char prefix[FL_UUID_TEXT_LEN + 1];
    fl_uuid_random(prefix);
    const char *codec = fl_tier_codec(&h.meta.meta);
    /* a bucket that failed is tiered by the next round, which first
     * sweeps what its leader may have left */
    if (fl_tier_ask_leaders(t, dir, r, &offs, h.meta.meta.current_snapshot_id, prefix, ids, n_ids,
                            codec, &first)) {
        fl_tier_due_of(t, r->table_id, fl_time_mono_ms())->clean = false;
    }
    bool moved = false;
    for (size_t i = 0; i < r->n; i++) {
        fl_tier_bucket_t *tb = &r->buckets[i];
        if (!tb->resp) continue; /* its offset stays; the next round asks again */
        int64_t start = fl_lake_offsets_get(&offs, tb->partition_id, tb->bucket);
        if (tb->resp->end_offset != start) moved = true;
        fl_lake_offsets_set(&offs, tb->partition_id, tb->bucket, tb->resp->end_offset);
        size_t nd = tb->resp->n_data_files, nx = tb->resp->n_delete_files;
        for (size_t k = 0; k < nd + nx; k++) {
            if (n_files == cap_files) {
                cap_files = cap_files ? cap_files * 2 : 16;
                files = fl_realloc(files, cap_files * sizeof(*files));
            }
            bool del = k >= nd;
            files[n_files++] = (fl_lake_new_file_t){
                del ? tb->resp->delete_files[k - nd] : tb->resp->data_files[k], tb->bucket,
                tb->partition_id, (const char *const *)tb->values.items, del};
        }
    }
    if (!moved) {
        /* nothing new anywhere: no version; the tablets hear the offsets */
        const fl_ice_table_meta_t *m = &h.meta.meta;
        if (m->current_snapshot_id != FL_ICE_NONE)
            fl_lake_notify_offsets(t->cs, r->table_id, m->current_snapshot_id, &offs);
        goto done;
    }
    fl_lake_round_result_t res = {0};
    rc = fl_lake_commit_round(dir, &h, r->table_id, &r->desc.partition_keys, files, n_files,
                              &offs, &res, err);
    if (rc) {
        fl_tier_remove_files(r);
    } else {
        *snapshot_id = res.snapshot_id;
        *added = res.added_records;
        fl_lake_kill_point("linked");
        fl_lake_notify_offsets(t->cs, r->table_id, res.snapshot_id, &offs);
        FL_INFO("lake tiering: %s.%s: snapshot %" PRId64 " (v%d), %zu files, %" PRId64
                " records",
                r->db, r->name, res.snapshot_id, res.version, n_files, res.added_records);
        if (fl_tier_auto_expire(t, r)) fl_tier_expire(t, r, dir);
    }
done:
    if (!rc && r->strict && first.code) { /* answered once the others are committed */
        *err = first;
        rc = first.code;
    }
    fl_free(files);
    fl_free(ids);
    fl_lake_offsets_free(&offs);
    fl_ice_table_head_reset(&h);
    return rc;
}

/* ---- scheduling ---- */

static fl_tier_due_t *fl_tier_due_of(fl_lake_tierer_t *t, int64_t table_id, int64_t now) {
    for (size_t i = 0; i < t->n_due; i++)
        if (t->due[i].table_id == table_id) return &t->due[i];
    if (t->n_due == t->cap_due) {
        t->cap_due = t->cap_due ? t->cap_due * 2 : 16;
        t->due = fl_realloc(t->due, t->cap_due * sizeof(*t->due));
    }
    t->due[t->n_due] = (fl_tier_due_t){table_id, now, false};
    return &t->due[t->n_due++];
}

/* The next table whose round is due, copied under the lock. */
static bool fl_tier_next_due(fl_lake_tierer_t *t, int64_t now, fl_tier_round_t *r) {
    fl_coordinator_server_t *cs = t->cs;
    bool found = false;
    pthread_mutex_lock(&cs->lock);
    for (size_t i = 0; i < cs->ms->ops->table_count(cs->ms) && !found; i++) {
        const fl_ms_table_t *tab = cs->ms->ops->table_at(cs->ms, i);
        fl_tier_due_t *d = fl_tier_due_of(t, tab->table_id, now);
        int64_t freshness;
        if (!fl_tier_round_of(tab, r, &freshness)) {
            d->base_ms = now; /* a lake turned on later waits one freshness too */
            continue;
        }
        if (now < d->base_ms + freshness) {
            fl_tier_round_free(r);
            continue;
        }
        d->base_ms = now;
        r->sweep = !d->clean;
        d->clean = true;
        found = true;
    }
    pthread_mutex_unlock(&cs->lock);
    return found;
}

/* Rounds asked for now, one by one, each answered by its callback. */
static void fl_tier_run_asked(fl_lake_tierer_t *t) {
    for (;;) {
        pthread_mutex_lock(&t->mu);
        fl_tier_ask_t *a = t->asks;
        if (a) t->asks = a->next;
        pthread_mutex_unlock(&t->mu);
        if (!a) return;
        fl_tier_round_t r;
        bool lake = false;
        pthread_mutex_lock(&t->cs->lock);
        const fl_ms_table_t *tab = t->cs->ms->ops->table_by_id(t->cs->ms, a->table_id);
        int64_t freshness;
        if (tab) lake = fl_tier_round_of(tab, &r, &freshness);
        pthread_mutex_unlock(&t->cs->lock);
        int rc;
        fl_error_t err;
        fl_err_clear(&err);
        int64_t sid = FL_ICE_NONE, added = 0;
        if (!lake) {
            rc = fl_err_set(&err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                            "Table %" PRId64 " is not a lake table "
                            "('table.datalake.enabled' is not true).",
                            a->table_id);
        } else {
            /* an asked round sweeps as a due one would: it may be the
             * first round since the start, or follow a failed one */
            fl_tier_due_t *d = fl_tier_due_of(t, a->table_id, fl_time_mono_ms());
            r.sweep = !d->clean;
            r.strict = true;
            d->clean = true;
            rc = fl_tier_round_run(t, &r, &sid, &added, &err);
            d = fl_tier_due_of(t, a->table_id, fl_time_mono_ms()); /* due may have grown */
            d->base_ms = fl_time_mono_ms(); /* the next one a freshness later */
            if (rc) d->clean = false;
            fl_tier_round_free(&r);
        }
        a->done(a->arg, rc, &err, sid, added);
        fl_free(a);
    }
}

void fl_lake_tierer_ask(fl_lake_tierer_t *t, int64_t table_id, fl_lake_tier_done_fn done,
                        void *arg) {
    pthread_mutex_lock(&t->mu);
    if (!t->running || atomic_load(&t->stopping)) {
        pthread_mutex_unlock(&t->mu);
        fl_error_t err;
        fl_err_set(&err, FLUSS_ERR__STATE,
                   t->cs->cfg.defaults.lake.external_tiering
                       ? "flussd does not tier lake tables itself here (lake.tiering.mode is "
                         "external: the tiering job does)"
                       : "the lake tiering service is not running (the cluster has no "
                         "datalake.format)");
        done(arg, err.code, &err, FL_ICE_NONE, 0);
        return;
    }
    fl_tier_ask_t *a = fl_calloc(1, sizeof(*a));
    *a = (fl_tier_ask_t){table_id, done, arg, NULL};
    fl_tier_ask_t **tail = &t->asks;
    while (*tail) tail = &(*tail)->next;
    *tail = a;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

static void *fl_tier_main(void *arg) {
    fl_lake_tierer_t *t = arg;
    pthread_setname_np(pthread_self(), "cs-laketier");
    pthread_mutex_lock(&t->mu);
    while (!atomic_load(&t->stopping)) {
        pthread_mutex_unlock(&t->mu);
        fl_tier_round_t r;
        fl_tier_run_asked(t);
        while (!atomic_load(&t->stopping) && fl_tier_next_due(t, fl_time_mono_ms(), &r)) {
            fl_error_t err;
            fl_err_clear(&err);
            int64_t sid, added;
            if (fl_tier_round_run(t, &r, &sid, &added, &err)) {
                FL_WARN("lake tiering: %s.%s: round failed: %s", r.db, r.name, err.msg);
                fl_tier_due_of(t, r.table_id, 0)->clean = false;
            }
            fl_tier_round_free(&r);
        }
        pthread_mutex_lock(&t->mu);
        if (atomic_load(&t->stopping)) break;
        if (t->asks) continue; /* asked while a round ran */
        int64_t next = fl_time_mono_ms() + FL_TIER_TICK_MS;
        struct timespec ts = {(time_t)(next / 1000), (long)(next % 1000) * 1000000};
        pthread_cond_timedwait(&t->cv, &t->mu, &ts);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

fl_lake_tierer_t *fl_lake_tierer_new(fl_coordinator_server_t *cs) {
    fl_lake_tierer_t *t = fl_calloc(1, sizeof(*t));
    t->cs = cs;
    pthread_mutex_init(&t->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cv, &ca);
    pthread_condattr_destroy(&ca);
    return t;
}

void fl_lake_tierer_start(fl_lake_tierer_t *t) {
    /* an external tiering job tiers instead (server_lake_external.c) */
    if (t->running || !fl_lake_config_on(&t->cs->cfg.defaults.lake) ||
        t->cs->cfg.defaults.lake.external_tiering)
        return;
    atomic_store(&t->stopping, false);
    pthread_mutex_lock(&t->mu);
    t->running = pthread_create(&t->thread, NULL, fl_tier_main, t) == 0;
    pthread_mutex_unlock(&t->mu);
    if (!t->running) FL_ERROR("lake tiering: cannot start its thread; no table is tiered");
}

void fl_lake_tierer_stop(fl_lake_tierer_t *t) {
    if (!t || !t->running) return;
    pthread_mutex_lock(&t->mu);
    atomic_store(&t->stopping, true);
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    pthread_mutex_lock(&t->mu);
    t->running = false;
    fl_tier_ask_t *left = t->asks;
    t->asks = NULL;
    pthread_mutex_unlock(&t->mu);
    while (left) {
        fl_tier_ask_t *next = left->next;
        fl_error_t err;
        fl_err_set(&err, FLUSS_ERR__STATE, "the lake tiering service stopped");
        left->done(left->arg, err.code, &err, FL_ICE_NONE, 0);
        fl_free(left);
        left = next;
    }
}

void fl_lake_tierer_destroy(fl_lake_tierer_t *t) {
    if (!t) return;
    fl_lake_tierer_stop(t);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    fl_free(t->due);
    fl_free(t);
}
