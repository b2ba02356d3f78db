/*
 * server_kv.c — the primary-key APIs of the tablet server: PUT_KV, LOOKUP,
 * PREFIX_LOOKUP, and LIMIT_SCAN and GET_TABLE_STATS (both table kinds),
 * over the buckets' kv tablets (kv_tablet.h); and the kv view of a table
 * descriptor.
 *
 * Threads: PUT_KV runs on the tablet server's kv writer (one thread, so a
 * connection's writes keep their order); the reads run on its worker
 * pool, LOOKUP's insert_if_not_exists writes included (the bucket's write
 * lock orders them). Neither touches RocksDB on a network loop. PUT_KV
 * and inserting LOOKUPs with acks=all wait in the purgatory until the high
 * watermark covers the changelog batch (at once with one replica, after
 * the fsync in the durable mode).
 *
 * Per-bucket failures travel inside a SUCCESS response, as in Fluss.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"
#include "record_batch.h"
#include "record_value.h"
#include "replica_replication.h"
#include "server_authz.h"
#include "server_ackwait.h"
#include "server_node.h"
#include "server_tablet.h"

#define FL_LIMIT_SCAN_MAX 1000000
/* table.auto-increment.cache-size (ConfigOptions) */
#define FL_AUTOINC_CACHE_DEFAULT 100000

/* ---- the kv view of a table ---- */

static const fl_datatype_t *const *fl_kv_hosted_types(const void *ctx, int16_t schema_id,
                                                      size_t *count) {
    return fl_hosted_table_schema_types(ctx, schema_id, count);
}

static const fl_schema_map_t *fl_kv_hosted_map(const void *ctx, int16_t schema_id) {
    return fl_hosted_table_latest_map(ctx, schema_id);
}

static const char *fl_kv_prop(const json_t *props, const char *key) {
    return json_string_value(json_object_get(props, key));
}

fl_kv_table_t *fl_hosted_kv_table_new(const fl_hosted_table_t *t, const json_t *table_json) {
    if (t->schema_id < 1 || (size_t)t->schema_id > t->schema_count ||
        !t->schema_ok[t->schema_id - 1])
        return NULL;
    const fl_schema_t *s = &t->schemas[t->schema_id - 1];
    if (!s->has_primary_key || s->primary_key.count > FL_KV_PK_MAX) return NULL;
    const json_t *props = json_object_get(table_json, "properties");
    const json_t *pkeys = json_object_get(table_json, "partition_key");
    fl_kv_table_t *kv = fl_calloc(1, sizeof(*kv));
    kv->latest = s;
    kv->latest_schema_id = (int16_t)t->schema_id;
    kv->types = fl_kv_hosted_types;
    kv->latest_map = fl_kv_hosted_map;
    kv->types_ctx = t;
    kv->version_col = -1;
    const char *f = fl_kv_prop(props, "table.kv.format");
    kv->kv_format = f && strcasecmp(f, "INDEXED") == 0 ? FL_ROW_INDEXED : FL_ROW_COMPACTED;
    const char *me = fl_kv_prop(props, "table.merge-engine");
    if (me && strcasecmp(me, "FIRST_ROW") == 0) kv->engine = FL_KV_ENGINE_FIRST_ROW;
    else if (me && strcasecmp(me, "VERSIONED") == 0) kv->engine = FL_KV_ENGINE_VERSIONED;
    else if (me && strcasecmp(me, "AGGREGATION") == 0) kv->engine = FL_KV_ENGINE_AGGREGATION;
    const char *db = fl_kv_prop(props, "table.delete.behavior");
    kv->delete_behavior = kv->engine == FL_KV_ENGINE_LAST_ROW ? FL_KV_DELETE_ALLOW
                                                              : FL_KV_DELETE_IGNORE;
    if (db && strcasecmp(db, "ALLOW") == 0) kv->delete_behavior = FL_KV_DELETE_ALLOW;
    else if (db && strcasecmp(db, "IGNORE") == 0) kv->delete_behavior = FL_KV_DELETE_IGNORE;
    else if (db && strcasecmp(db, "DISABLE") == 0) kv->delete_behavior = FL_KV_DELETE_DISABLE;
    const char *img = fl_kv_prop(props, "table.changelog.image");
    kv->changelog_wal = img && strcasecmp(img, "WAL") == 0;
    const char *vc = fl_kv_prop(props, "table.merge-engine.versioned.ver-column");
    if (kv->engine == FL_KV_ENGINE_VERSIONED && vc) kv->version_col = fl_schema_column_index(s, vc);
    const char *lf = fl_kv_prop(props, "table.log.format");
    if (lf && strcasecmp(lf, "COMPACTED") == 0) {
        kv->log_rows = true;
        kv->log_format = FL_ROW_COMPACTED;
    } else if (lf && strcasecmp(lf, "INDEXED") == 0) {
        kv->log_rows = true;
        kv->log_format = FL_ROW_INDEXED;
    }
    const char *comp = fl_kv_prop(props, "table.log.arrow.compression.type");
    kv->codec = FL_ARROW_CODEC_ZSTD;
    if (comp && strcasecmp(comp, "NONE") == 0) kv->codec = FL_ARROW_CODEC_NONE;
    else if (comp && strcasecmp(comp, "LZ4_FRAME") == 0) kv->codec = FL_ARROW_CODEC_LZ4_FRAME;
    const char *lvl = fl_kv_prop(props, "table.log.arrow.compression.zstd.level");
    kv->zstd_level = lvl ? atoi(lvl) : 3;
    kv->table_id = t->table_id;
    if (s->auto_increment.count == 1) {
        kv->has_autoinc = true;
        kv->autoinc_col = fl_schema_column_index(s, s->auto_increment.items[0]);
        if (kv->autoinc_col < 0) goto fail;
        const char *cs = fl_kv_prop(props, "table.auto-increment.cache-size");
        kv->autoinc_cache = cs ? atoll(cs) : FL_AUTOINC_CACHE_DEFAULT;
        if (kv->autoinc_cache < 1) kv->autoinc_cache = 1;
    }
    for (size_t k = 0; k < json_array_size(pkeys) && k < FL_KV_PK_MAX; k++) {
        int c = fl_schema_column_index(s, json_string_value(json_array_get(pkeys, k)));
        if (c < 0) goto fail;
        kv->part_cols[kv->part_count++] = c;
    }
    for (size_t i = 0; i < s->primary_key.count; i++) {
        int c = fl_schema_column_index(s, s->primary_key.items[i]);
        if (c < 0) goto fail;
        kv->pk_cols[kv->pk_count++] = c;
        bool part = false;
        for (size_t k = 0; k < json_array_size(pkeys); k++) {
            const char *pk = json_string_value(json_array_get(pkeys, k));
            part |= pk && strcmp(pk, s->primary_key.items[i]) == 0;
        }
        if (!part) kv->phys_pk_cols[kv->phys_pk_count++] = c;
    }
    /* the default bucket key is the physical primary key, in its order */
    const json_t *bkeys = json_object_get(table_json, "bucket_key");
    bool default_bucket = json_array_size(bkeys) == kv->phys_pk_count;
    for (size_t k = 0; default_bucket && k < kv->phys_pk_count; k++) {
        const char *bk = json_string_value(json_array_get(bkeys, k));
        default_bucket = bk && fl_schema_column_index(s, bk) == kv->phys_pk_cols[k];
    }
    kv->pk_codec = fl_key_codec_of_primary(fl_kv_prop(props, "table.datalake.format"),
                                           fl_kv_prop(props, "table.kv.format-version"),
                                           default_bucket);
    if (kv->pk_codec == FL_KEY_UNSUPPORTED) {
        FL_WARN("table %s.%s: primary keys of its lake format are not encoded here", t->database,
                t->name);
        goto fail;
    }
    for (size_t c = 0; c < s->column_count; c++) {
        fl_type_root_t r = s->columns[c].type->root;
        kv->has_nested |= !kv->log_rows && (r == FL_TYPE_ARRAY || r == FL_TYPE_MAP || r == FL_TYPE_ROW);
    }
    if (kv->engine == FL_KV_ENGINE_AGGREGATION) {
        fl_error_t e;
        if (fl_kv_agg_spec_init(&kv->agg, s, &e)) {
            FL_WARN("table %s.%s: aggregation functions: %s", t->database, t->name, e.msg);
            goto fail;
        }
        kv->has_agg = true;
    }
    return kv;
fail:
    fl_hosted_kv_table_free(kv);
    return NULL;
}

void fl_hosted_kv_table_free(fl_kv_table_t *kv) {
    if (!kv) return;
    if (kv->has_agg) fl_kv_agg_spec_reset(&kv->agg);
    fl_free(kv);
}

/* The kv tablet of one requested bucket, acquired (fl_tablet_kv_release
 * before *r is let go), or the bucket's error. */
static int fl_kv_bucket(fl_tablet_server_t *ts, int64_t table_id, const fl_hosted_table_t *t,
                        bool has_partition, int64_t partition_id, int32_t bucket,
                        fl_replica_t **r, fl_kv_tablet_t **kt, fl_error_t *err) {
    *r = NULL;
    int rc = fl_tablet_server_replica(ts, table_id, t, has_partition, partition_id, bucket, r, err);
    if (rc) return rc;
    if (!t->kv) {
        rc = t->has_primary_key
                 ? fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION,
                              "The primary-key table %s.%s cannot be served (its schema).",
                              t->database, t->name)
                 : fl_err_set(err, FLUSS_ERR_NON_PRIMARY_KEY_TABLE_EXCEPTION,
                              "the primary key table not exists for TableBucket{tableId=%lld, "
                              "bucket=%d}",
                              (long long)table_id, bucket);
    } else {
        rc = fl_tablet_kv_acquire(ts->kv, t, *r, kt, err);
    }
    if (rc) {
        fl_replica_unref(*r);
        *r = NULL;
    }
    return rc;
}

/* ---- PUT_KV ---- */

typedef struct fl_put_kv_op {
    fl_ack_wait_t wait; /* first: the purgatory sees the op through it */
    Fluss__PbPutKvRespForBucket *resp;
    char **messages;
} fl_put_kv_op_t;

static void fl_put_kv_destroy(fl_ack_wait_t *w) {
    fl_put_kv_op_t *p = (fl_put_kv_op_t *)w;
    for (size_t i = 0; i < w->count; i++) fl_free(p->messages[i]);
    fl_free(p->messages);
    fl_free(p->resp);
    fl_ack_wait_release(w);
    fl_free(p);
}

/* The answer: buckets not ready get fl_ack_wait_error's code (offline
 * replica, or the deadline passed). */
static void fl_put_kv_reply(fl_ack_wait_t *w, int32_t rid, fl_buf_t *out) {
    fl_put_kv_op_t *p = (fl_put_kv_op_t *)w;
    Fluss__PbPutKvRespForBucket **ptrs = fl_calloc(w->count ? w->count : 1, sizeof(*ptrs));
    for (size_t i = 0; i < w->count; i++) {
        const char *msg;
        int code = fl_ack_wait_error(w, i, "Timed out waiting for the high watermark to cover "
                                           "the changelog.", &msg);
        if (code && !p->resp[i].has_error_code) {
            p->resp[i].has_log_end_offset = 0;
            p->resp[i].has_error_code = 1;
            p->resp[i].error_code = code;
            p->messages[i] = fl_strdup(msg);
            p->resp[i].error_message = p->messages[i];
        }
        ptrs[i] = &p->resp[i];
    }
    Fluss__PutKvResponse resp = FLUSS__PUT_KV_RESPONSE__INIT;
    resp.n_buckets_resp = w->count;
    resp.buckets_resp = ptrs;
    fl_server_reply(out, rid, &resp.base);
    fl_free(ptrs);
}

static const fl_ack_wait_ops_t fl_put_kv_wait_ops = {fl_put_kv_reply, fl_put_kv_destroy};

FL_API_HANDLER(fl_api_put_kv) {
    const Fluss__PutKvRequest *req = (const Fluss__PutKvRequest *)m;
    fl_tablet_server_t *ts = ctx->ts;
    if (fl_ts_authorize_table_id(ctx, FL_ACL_OP_WRITE, req->table_id, err)) return err->code;
    if (req->acks != -1 && req->acks != 0 && req->acks != 1)
        return fl_err_set(err, FLUSS_ERR_INVALID_REQUIRED_ACKS, "Invalid required acks: %d",
                          req->acks);
    size_t nb = req->n_buckets_req;
    fl_put_kv_op_t *p = fl_calloc(1, sizeof(*p));
    fl_ack_wait_init(&p->wait, &fl_put_kv_wait_ops, nb);
    p->resp = fl_calloc(nb ? nb : 1, sizeof(*p->resp));
    p->messages = fl_calloc(nb ? nb : 1, sizeof(char *));
    fl_hosted_table_t *table = fl_tablet_catalog_table(ts->catalog, req->table_id);
    fl_error_t disk_err; /* the data-disk watermark: one flag read */
    int disk_rc = fl_disk_guard_refuse(&ts->disk, &disk_err);
    fl_kv_put_t put = {.targets = req->target_columns,
                       .n_targets = req->n_target_columns,
                       .overwrite = req->has_agg_mode && req->agg_mode == 1,
                       .now_ms = fl_time_wall_ms()};
    for (size_t i = 0; i < nb; i++) {
        const Fluss__PbPutKvReqForBucket *br = req->buckets_req[i];
        Fluss__PbPutKvRespForBucket b = FLUSS__PB_PUT_KV_RESP_FOR_BUCKET__INIT;
        b.bucket_id = br->bucket_id;
        b.has_partition_id = br->has_partition_id;
        b.partition_id = br->partition_id;
        fl_error_t e;
        fl_err_clear(&e);
        fl_replica_t *r = NULL;
        fl_kv_tablet_t *kt = NULL;
        fl_kv_appended_t res;
        int rc = disk_rc ? fl_err_set(&e, disk_rc, "%s", disk_err.msg)
                         : fl_kv_bucket(ts, req->table_id, table, br->has_partition_id,
                                        br->partition_id, br->bucket_id, &r, &kt, &e);
        if (!rc && req->acks == -1) rc = fl_replica_check_acks_all(r, &e);
        if (!rc) {
            put.records = br->records.data;
            put.len = br->records.len;
            rc = fl_kv_tablet_put(kt, table->kv, &put, &res, &e);
        }
        if (r) fl_tablet_kv_release(ts->kv, r, kt);
        if (rc) {
            b.has_error_code = 1;
            b.error_code = fl_server_wire_code(rc);
            p->messages[i] = fl_strdup(e.msg);
            b.error_message = p->messages[i];
            fl_replica_unref(r);
        } else {
            b.has_log_end_offset = 1;
            b.log_end_offset = res.end_offset;
            fl_ack_wait_bucket(&p->wait, i, r, req->acks == -1 ? res.end_offset : 0,
                               res.durable_wait_offset);
        }
        p->resp[i] = b;
    }
    fl_hosted_table_unref(table);
    fl_ack_wait_finish(&p->wait, ctx, ts->purgatory, req->timeout_ms, out);
    return 0;
}

/* ---- LOOKUP ---- */

/* A LOOKUP, answered at once, or — with insert_if_not_exists and acks=all
 * — once the changelog of the inserted rows is covered like PUT_KV's. */
typedef struct fl_lookup_op {
    fl_ack_wait_t wait; /* first: the purgatory sees the op through it */
    size_t total;       /* keys of all buckets */
    Fluss__PbLookupRespForBucket *bs;
    char **messages;
    fl_buf_t *vals;     /* one per key, all buckets */
    Fluss__PbValue *pv;
    Fluss__PbValue **pvp;
    size_t *first;      /* bucket i's keys start at first[i] */
    /* while the handler runs: each bucket's replica and kv tablet */
    fl_replica_t **replicas;
    fl_kv_tablet_t **tablets;
} fl_lookup_op_t;

static void fl_lookup_destroy(fl_ack_wait_t *w) {
    fl_lookup_op_t *p = (fl_lookup_op_t *)w;
    for (size_t i = 0; i < w->count; i++) fl_free(p->messages[i]);
    for (size_t i = 0; i < p->total; i++) fl_buf_free(&p->vals[i]);
    fl_free(p->messages);
    fl_free(p->vals);
    fl_free(p->pv);
    fl_free(p->pvp);
    fl_free(p->bs);
    fl_free(p->first);
    fl_free(p->replicas);
    fl_free(p->tablets);
    fl_ack_wait_release(w);
    fl_free(p);
}

static void fl_lookup_bucket_error(fl_lookup_op_t *p, size_t i, int rc, const char *msg) {
    Fluss__PbLookupRespForBucket *b = &p->bs[i];
    b->n_values = 0;
    b->values = NULL;
    b->has_error_code = 1;
    b->error_code = fl_server_wire_code(rc);
    fl_free(p->messages[i]);
    p->messages[i] = fl_strdup(msg);
    b->error_message = p->messages[i];
}

/* Buckets whose inserts the watermark did not cover in time get
 * REQUEST_TIME_OUT, as the reference's delayed write answers them (an
 * offline replica: LOG_STORAGE_EXCEPTION). */
static void fl_lookup_reply(fl_ack_wait_t *w, int32_t rid, fl_buf_t *out) {
    fl_lookup_op_t *p = (fl_lookup_op_t *)w;
    Fluss__PbLookupRespForBucket **ptrs = fl_calloc(w->count ? w->count : 1, sizeof(*ptrs));
    for (size_t i = 0; i < w->count; i++) {
        const char *msg;
        int code = fl_ack_wait_error(w, i, "Timed out waiting for the high watermark to cover "
                                           "the changelog.", &msg);
        if (code && !p->bs[i].has_error_code) fl_lookup_bucket_error(p, i, code, msg);
        ptrs[i] = &p->bs[i];
    }
    Fluss__LookupResponse resp = FLUSS__LOOKUP_RESPONSE__INIT;
    resp.n_buckets_resp = w->count;
    resp.buckets_resp = ptrs;
    fl_server_reply(out, rid, &resp.base);
    fl_free(ptrs);
}

static const fl_ack_wait_ops_t fl_lookup_wait_ops = {fl_lookup_reply, fl_lookup_destroy};

/* Looks up key k of the request into its slot; *found tells. */
static int fl_lookup_key(fl_lookup_op_t *p, fl_kv_tablet_t *kt, size_t k,
                         const ProtobufCBinaryData *key, bool *found, fl_error_t *err) {
    *found = false;
    fl_buf_reset(&p->vals[k]);
    int rc = fl_kv_tablet_lookup(kt, key->data, key->len, &p->vals[k], found, err);
    Fluss__PbValue v = FLUSS__PB_VALUE__INIT;
    if (!rc && *found) {
        v.has_values = 1;
        v.values.data = p->vals[k].data;
        v.values.len = p->vals[k].len;
    }
    p->pv[k] = v;
    return rc;
}

/* A bucket's keys from this many on are read in two halves at once: the
 * second by another worker if one is free (else by this one, after the
 * first), so a large batch uses two cores while its caller waits. */
#define FL_LOOKUP_SPLIT_KEYS 64

typedef struct fl_lookup_half {
    fl_kv_tablet_t *kt;
    size_t n;
    const uint8_t **keys;
    const size_t *lens;
    fl_buf_t *vals;
    bool *found;
    int rc;
    fl_error_t err;
} fl_lookup_half_t;

static void fl_lookup_half_run(void *arg) {
    fl_lookup_half_t *h = arg;
    h->rc = fl_kv_tablet_lookup_many(h->kt, h->n, h->keys, h->lens, h->vals, h->found, &h->err);
}

/* Every key of one bucket's request into p->vals[first...] (batched
 * reads, split over two workers of pool when there are many); *missing
 * counts the keys without a row. */
static int fl_lookup_bucket_keys(fl_lookup_op_t *p, fl_workq_t *pool, fl_kv_tablet_t *kt,
                                 size_t first, const Fluss__PbLookupReqForBucket *br,
                                 size_t *missing, fl_error_t *err) {
    size_t n = br->n_keys;
    const uint8_t **keys = fl_calloc(n ? n : 1, sizeof(*keys));
    size_t *lens = fl_calloc(n ? n : 1, sizeof(*lens));
    bool *found = fl_calloc(n ? n : 1, sizeof(*found));
    for (size_t j = 0; j < n; j++) {
        keys[j] = br->keys[j].data;
        lens[j] = br->keys[j].len;
    }
    int rc;
    if (pool && n >= FL_LOOKUP_SPLIT_KEYS && fl_workq_threads(pool) > 1) {
        size_t half = n / 2;
        fl_lookup_half_t second = {.kt = kt, .n = n - half, .keys = keys + half,
                                   .lens = lens + half, .vals = p->vals + first + half,
                                   .found = found + half};
        fl_workq_fork_t *f = fl_workq_fork(pool, fl_lookup_half_run, &second);
        rc = fl_kv_tablet_lookup_many(kt, half, keys, lens, p->vals + first, found, err);
        fl_workq_join(f);
        if (!rc && second.rc) {
            rc = second.rc;
            *err = second.err;
        }
    } else {
        rc = fl_kv_tablet_lookup_many(kt, n, keys, lens, p->vals + first, found, err);
    }
    for (size_t j = 0; !rc && j < n; j++) {
        Fluss__PbValue v = FLUSS__PB_VALUE__INIT;
        if (found[j]) {
            v.has_values = 1;
            v.values.data = p->vals[first + j].data;
            v.values.len = p->vals[first + j].len;
        }
        p->pv[first + j] = v;
        *missing += !found[j];
    }
    fl_free(keys);
    fl_free(lens);
    fl_free(found);
    return rc;
}

/* The partition columns of a bucket's rows (from the partition's name,
 * values joined by '$' in partition-key order) into base. STRING, CHAR
 * and integer partition columns. */
static int fl_lookup_partition_row(const fl_hosted_table_t *t, int64_t partition_id,
                                   fl_row_t *base, fl_error_t *err) {
    const fl_kv_table_t *kv = t->kv;
    const char *name = NULL;
    for (size_t i = 0; i < t->partition_count && !name; i++)
        if (t->partitions[i].partition_id == partition_id) name = t->partitions[i].name;
    if (!name)
        return fl_err_set(err, FLUSS_ERR_PARTITION_NOT_EXISTS,
                          "Partition %lld does not exist.", (long long)partition_id);
    const char *p = name;
    for (size_t k = 0; k < kv->part_count; k++) {
        const char *end = strchr(p, '$');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        size_t col = (size_t)kv->part_cols[k];
        const fl_column_t *c = &kv->latest->columns[col];
        fl_type_root_t r = c->type->root;
        if (r == FL_TYPE_STRING || r == FL_TYPE_CHAR) {
            fl_row_set_bytes(base, col, p, len);
        } else if (r == FL_TYPE_INTEGER || r == FL_TYPE_BIGINT || r == FL_TYPE_SMALLINT ||
                   r == FL_TYPE_TINYINT) {
            char num[32];
            char *stop;
            snprintf(num, sizeof(num), "%.*s", (int)(len < 31 ? len : 31), p);
            base->cells[col].i = strtoll(num, &stop, 10);
            base->cells[col].is_null = *stop != '\0' || len == 0 || len > 20;
            if (base->cells[col].is_null)
                return fl_err_set(err, FLUSS_ERR_PARTITION_SPEC_INVALID_EXCEPTION,
                                  "Partition value '%.*s' of column %s is not a number.",
                                  (int)len, p, c->name);
        } else {
            return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                              "Lookup with insert_if_not_exists is not supported by this "
                              "server for partition column %s of this type.",
                              c->name);
        }
        if (!end && k + 1 < kv->part_count)
            return fl_err_set(err, FLUSS_ERR_PARTITION_SPEC_INVALID_EXCEPTION,
                              "Partition name '%s' has fewer values than partition keys.", name);
        p = end ? end + 1 : p + len;
    }
    return 0;
}

/* insert_if_not_exists for bucket i (Fluss's lookups → putRecordsToKv →
 * re-lookup): the keys found missing get their rows, then are read
 * again; with acks=all the answer waits for the changelog. */
static void fl_lookup_insert_bucket(fl_tablet_server_t *ts, fl_lookup_op_t *p, size_t i,
                                    const fl_hosted_table_t *t, const Fluss__LookupRequest *req) {
    const Fluss__PbLookupReqForBucket *br = req->buckets_req[i];
    size_t first = p->first[i], missing = 0;
    for (size_t j = 0; j < br->n_keys; j++) missing += !p->pv[first + j].has_values;
    if (missing == 0) return;
    fl_error_t de; /* the inserts are writes: the data-disk watermark applies */
    if (fl_disk_guard_refuse(&ts->disk, &de)) {
        fl_lookup_bucket_error(p, i, de.code, de.msg);
        return;
    }
    fl_kv_key_t *keys = fl_calloc(missing, sizeof(*keys));
    size_t m = 0;
    for (size_t j = 0; j < br->n_keys; j++)
        if (!p->pv[first + j].has_values)
            keys[m++] = (fl_kv_key_t){br->keys[j].data, br->keys[j].len};
    fl_error_t e;
    fl_err_clear(&e);
    fl_row_t base;
    fl_row_init(&base, t->kv->latest->column_count);
    int rc = 0;
    if (br->has_partition_id) rc = fl_lookup_partition_row(t, br->partition_id, &base, &e);
    fl_kv_appended_t res;
    if (!rc)
        rc = fl_kv_tablet_insert_keys(p->tablets[i], t->kv, keys, missing,
                                      br->has_partition_id ? &base : NULL, fl_time_wall_ms(),
                                      &res, &e);
    for (size_t j = 0; !rc && j < br->n_keys; j++) {
        bool found;
        if (!p->pv[first + j].has_values)
            rc = fl_lookup_key(p, p->tablets[i], first + j, &br->keys[j], &found, &e);
    }
    fl_row_free(&base);
    fl_free(keys);
    if (rc) {
        fl_lookup_bucket_error(p, i, rc, e.msg);
        return;
    }
    /* the wait holds the replica from here, not the tablet */
    fl_tablet_kv_release(ts->kv, p->replicas[i], p->tablets[i]);
    p->tablets[i] = NULL;
    fl_ack_wait_bucket(&p->wait, i, p->replicas[i], req->acks == -1 ? res.end_offset : 0,
                       res.durable_wait_offset);
    p->replicas[i] = NULL; /* the wait holds it now */
}

FL_API_HANDLER(fl_api_lookup) {
    const Fluss__LookupRequest *req = (const Fluss__LookupRequest *)m;
    fl_tablet_server_t *ts = ctx->ts;
    bool insert = req->has_insert_if_not_exists && req->insert_if_not_exists;
    /* WRITE when it may insert, else READ (0.9.1 answers that denial per
     * bucket; ours for the request, with the same words) */
    if (insert ? fl_ts_authorize_table_id(ctx, FL_ACL_OP_WRITE, req->table_id, err)
               : fl_ts_authorize_bucket(ctx, FL_ACL_OP_READ, req->table_id, err))
        return err->code;
    if (insert && (!req->has_acks || !req->has_timeout_ms))
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          "timeoutMs and requiredAcks must be set");
    size_t nb = req->n_buckets_req, total = 0;
    for (size_t i = 0; i < nb; i++) total += req->buckets_req[i]->n_keys;
    size_t n = nb ? nb : 1, nk = total ? total : 1;
    fl_lookup_op_t *p = fl_calloc(1, sizeof(*p));
    fl_ack_wait_init(&p->wait, &fl_lookup_wait_ops, nb);
    p->total = total;
    p->bs = fl_calloc(n, sizeof(*p->bs));
    p->messages = fl_calloc(n, sizeof(char *));
    p->first = fl_calloc(n, sizeof(size_t));
    p->replicas = fl_calloc(n, sizeof(*p->replicas));
    p->tablets = fl_calloc(n, sizeof(*p->tablets));
    p->vals = fl_calloc(nk, sizeof(*p->vals));
    p->pv = fl_calloc(nk, sizeof(*p->pv));
    p->pvp = fl_calloc(nk, sizeof(*p->pvp));
    for (size_t k = 0; k < total; k++) {
        fl_buf_init(&p->vals[k]);
        p->pv[k] = (Fluss__PbValue)FLUSS__PB_VALUE__INIT;
        p->pvp[k] = &p->pv[k];
    }
    fl_hosted_table_t *table = fl_tablet_catalog_table(ts->catalog, req->table_id);
    size_t k = 0, missing = 0;
    for (size_t i = 0; i < nb; i++) {
        const Fluss__PbLookupReqForBucket *br = req->buckets_req[i];
        Fluss__PbLookupRespForBucket b = FLUSS__PB_LOOKUP_RESP_FOR_BUCKET__INIT;
        b.bucket_id = br->bucket_id;
        b.has_partition_id = br->has_partition_id;
        b.partition_id = br->partition_id;
        p->bs[i] = b;
        p->first[i] = k;
        k += br->n_keys;
        fl_error_t e;
        fl_err_clear(&e);
        int rc = fl_kv_bucket(ts, req->table_id, table, br->has_partition_id, br->partition_id,
                              br->bucket_id, &p->replicas[i], &p->tablets[i], &e);
        if (!rc)
            rc = fl_lookup_bucket_keys(p, ts->workers, p->tablets[i], p->first[i], br, &missing,
                                       &e);
        if (rc) {
            fl_lookup_bucket_error(p, i, rc, e.msg);
            if (p->replicas[i]) fl_tablet_kv_release(ts->kv, p->replicas[i], p->tablets[i]);
            p->tablets[i] = NULL;
            fl_replica_unref(p->replicas[i]);
            p->replicas[i] = NULL;
        } else {
            p->bs[i].n_values = br->n_keys;
            p->bs[i].values = p->pvp + p->first[i];
        }
    }
    int rc = 0;
    if (insert && missing && req->acks != -1 && req->acks != 0 && req->acks != 1)
        rc = fl_err_set(err, FLUSS_ERR_INVALID_REQUIRED_ACKS, "Invalid required acks: %d",
                        req->acks);
    for (size_t i = 0; !rc && insert && i < nb; i++)
        if (p->replicas[i]) fl_lookup_insert_bucket(ts, p, i, table, req);
    for (size_t i = 0; i < nb; i++) {
        if (p->replicas[i]) fl_tablet_kv_release(ts->kv, p->replicas[i], p->tablets[i]);
        p->tablets[i] = NULL;
        fl_replica_unref(p->replicas[i]);
        p->replicas[i] = NULL;
    }
    fl_hosted_table_unref(table);
    if (rc) {
        fl_lookup_destroy(&p->wait);
        return rc;
    }
    fl_ack_wait_finish(&p->wait, ctx, ts->purgatory, req->timeout_ms, out);
    return 0;
}

/* LOOKUP on the network loop when it needs no I/O and no wait: no
 * inserts, a few keys, every bucket's kv tablet open here, no writer
 * holding one, and every key answered from memory (pre-write buffer,
 * memtables, block cache: RocksDB's kBlockCacheTier). Anything else — and
 * every per-bucket error — goes to the worker pool as before. This saves
 * the two thread hand-offs that dominate a point lookup. Larger batches go
 * to the pool at once: there one batched MultiGet beats a Get per key, the
 * hand-off is spread over many keys, and a batch that meets one uncached
 * key would otherwise be read twice. (RocksDB 7.8's batched MultiGet reads
 * the disk even under kBlockCacheTier, so it cannot serve the loop.) */
#define FL_LOOKUP_INLINE_KEYS_MAX 8

bool fl_lookup_inline(fl_req_ctx_t *ctx, const ProtobufCMessage *m, fl_buf_t *out) {
    const Fluss__LookupRequest *req = (const Fluss__LookupRequest *)m;
    fl_tablet_server_t *ts = ctx->ts;
    if (!ts || (req->has_insert_if_not_exists && req->insert_if_not_exists)) return false;
    if (FL_AUTHZ(ctx) && !ctx->who.trusted) return false; /* checked by fl_api_lookup */
    size_t nb = req->n_buckets_req, total = 0;
    for (size_t i = 0; i < nb; i++) total += req->buckets_req[i]->n_keys;
    if (nb == 0 || total > FL_LOOKUP_INLINE_KEYS_MAX) return false;
    fl_hosted_table_t *t = fl_tablet_catalog_table(ts->catalog, req->table_id);
    if (!t || !t->kv) {
        fl_hosted_table_unref(t);
        return false;
    }
    fl_buf_t *vals = fl_calloc(total ? total : 1, sizeof(*vals));
    Fluss__PbValue *pv = fl_calloc(total ? total : 1, sizeof(*pv));
    Fluss__PbValue **pvp = fl_calloc(total ? total : 1, sizeof(*pvp));
    Fluss__PbLookupRespForBucket *bs = fl_calloc(nb, sizeof(*bs));
    Fluss__PbLookupRespForBucket **bsp = fl_calloc(nb, sizeof(*bsp));
    bool ok = true;
    size_t k = 0;
    for (size_t i = 0; ok && i < nb; i++) {
        const Fluss__PbLookupReqForBucket *br = req->buckets_req[i];
        fl_replica_t *r = fl_replica_manager_find(&ts->replicas, t->table_id,
                                                  br->has_partition_id ? br->partition_id : -1,
                                                  br->bucket_id);
        fl_kv_tablet_t *kt = r ? fl_replica_kv_acquire(&r->kv) : NULL;
        fluss__pb_lookup_resp_for_bucket__init(&bs[i]);
        bs[i].bucket_id = br->bucket_id;
        bs[i].has_partition_id = br->has_partition_id;
        bs[i].partition_id = br->partition_id;
        bs[i].n_values = br->n_keys;
        bs[i].values = pvp + k;
        bsp[i] = &bs[i];
        for (size_t j = 0; kt && ok && j < br->n_keys; j++, k++) {
            bool found = false, would_block = false;
            fl_error_t e;
            fl_buf_init(&vals[k]);
            fluss__pb_value__init(&pv[k]);
            pvp[k] = &pv[k];
            if (fl_kv_tablet_lookup_nowait(kt, br->keys[j].data, br->keys[j].len, &vals[k], &found,
                                           &would_block, &e) ||
                would_block) {
                ok = false;
                k++;
                break;
            }
            if (found) {
                pv[k].has_values = 1;
                pv[k].values.data = vals[k].data;
                pv[k].values.len = vals[k].len;
            }
        }
        if (!kt) ok = false;
        if (r) fl_tablet_kv_release(ts->kv, r, kt); /* a retired store closes on a worker */
        fl_replica_unref(r);
    }
    if (ok) {
        Fluss__LookupResponse resp = FLUSS__LOOKUP_RESPONSE__INIT;
        resp.n_buckets_resp = nb;
        resp.buckets_resp = bsp;
        fl_server_reply(out, ctx->request_id, &resp.base);
    }
    for (size_t i = 0; i < k && i < total; i++) fl_buf_free(&vals[i]);
    fl_free(vals);
    fl_free(pv);
    fl_free(pvp);
    fl_free(bs);
    fl_free(bsp);
    fl_hosted_table_unref(t);
    return ok;
}

/* ---- PREFIX_LOOKUP ---- */

FL_API_HANDLER(fl_api_prefix_lookup) {
    const Fluss__PrefixLookupRequest *req = (const Fluss__PrefixLookupRequest *)m;
    fl_tablet_server_t *ts = ctx->ts;
    if (fl_ts_authorize_bucket(ctx, FL_ACL_OP_READ, req->table_id, err)) return err->code;
    size_t nb = req->n_buckets_req;
    size_t total = 0, k = 0;
    for (size_t i = 0; i < nb; i++) total += req->buckets_req[i]->n_keys;
    Fluss__PbPrefixLookupRespForBucket *bs = fl_calloc(nb ? nb : 1, sizeof(*bs));
    Fluss__PbPrefixLookupRespForBucket **bptrs = fl_calloc(nb ? nb : 1, sizeof(*bptrs));
    char **messages = fl_calloc(nb ? nb : 1, sizeof(char *));
    fl_kv_values_t *vals = fl_calloc(total ? total : 1, sizeof(*vals));
    Fluss__PbValueList *lists = fl_calloc(total ? total : 1, sizeof(*lists));
    Fluss__PbValueList **lptrs = fl_calloc(total ? total : 1, sizeof(*lptrs));
    ProtobufCBinaryData **items = fl_calloc(total ? total : 1, sizeof(*items));
    fl_hosted_table_t *table = fl_tablet_catalog_table(ts->catalog, req->table_id);
    for (size_t i = 0; i < nb; i++) {
        const Fluss__PbPrefixLookupReqForBucket *br = req->buckets_req[i];
        Fluss__PbPrefixLookupRespForBucket b = FLUSS__PB_PREFIX_LOOKUP_RESP_FOR_BUCKET__INIT;
        b.bucket_id = br->bucket_id;
        b.has_partition_id = br->has_partition_id;
        b.partition_id = br->partition_id;
        fl_error_t e;
        fl_err_clear(&e);
        fl_replica_t *r = NULL;
        fl_kv_tablet_t *kt = NULL;
        int rc = fl_kv_bucket(ts, req->table_id, table, br->has_partition_id, br->partition_id,
                              br->bucket_id, &r, &kt, &e);
        size_t first = k;
        for (size_t j = 0; !rc && j < br->n_keys; j++, k++) {
            fl_kv_values_init(&vals[k]);
            rc = fl_kv_tablet_prefix_lookup(kt, br->keys[j].data, br->keys[j].len, 0, &vals[k],
                                            &e);
            Fluss__PbValueList l = FLUSS__PB_VALUE_LIST__INIT;
            items[k] = fl_calloc(vals[k].count ? vals[k].count : 1, sizeof(ProtobufCBinaryData));
            for (size_t x = 0; x < vals[k].count; x++) {
                items[k][x].data = vals[k].bytes.data + vals[k].off[x];
                items[k][x].len = vals[k].len[x];
            }
            l.n_values = vals[k].count;
            l.values = items[k];
            lists[k] = l;
            lptrs[k] = &lists[k];
        }
        if (r) fl_tablet_kv_release(ts->kv, r, kt);
        fl_replica_unref(r);
        if (rc) {
            b.has_error_code = 1;
            b.error_code = fl_server_wire_code(rc);
            messages[i] = fl_strdup(e.msg);
            b.error_message = messages[i];
        } else {
            b.n_value_lists = br->n_keys;
            b.value_lists = lptrs + first;
        }
        bs[i] = b;
        bptrs[i] = &bs[i];
    }
    fl_hosted_table_unref(table);
    Fluss__PrefixLookupResponse resp = FLUSS__PREFIX_LOOKUP_RESPONSE__INIT;
    resp.n_buckets_resp = nb;
    resp.buckets_resp = bptrs;
    fl_server_reply(out, ctx->request_id, &resp.base);
    for (size_t i = 0; i < k; i++) {
        fl_kv_values_free(&vals[i]);
        fl_free(items[i]);
    }
    for (size_t i = 0; i < nb; i++) fl_free(messages[i]);
    fl_free(messages);
    fl_free(vals);
    fl_free(items);
    fl_free(lists);
    fl_free(lptrs);
    fl_free(bs);
    fl_free(bptrs);
    return 0;
}

/* ---- LIMIT_SCAN ---- */

/* A log table: whole batches from max(log start, HW - limit) to the HW. */
static int fl_limit_scan_log(fl_replica_t *r, int32_t limit, fl_buf_t *out, fl_error_t *err) {
    int64_t hw = fl_replica_high_watermark(r);
    int64_t from = hw - limit;
    if (from < fl_replica_log_start(r)) from = fl_replica_log_start(r);
    while (from < hw) {
        size_t before = out->len;
        int rc = fl_replica_read(r, from, (size_t)8 << 20, out, err);
        if (rc) return rc;
        if (out->len == before) break;
        /* the last batch read tells where to go on */
        size_t pos = before;
        int64_t next = from;
        fl_batch_view_t b;
        while ((rc = fl_batch_parse_next(out->data, out->len, &pos, &b, err)) == 0)
            next = fl_batch_next_offset(&b);
        if (rc != 1) return rc;
        if (next <= from) break;
        from = next;
    }
    return 0;
}

FL_API_HANDLER(fl_api_limit_scan) {
    const Fluss__LimitScanRequest *req = (const Fluss__LimitScanRequest *)m;
    fl_tablet_server_t *ts = ctx->ts;
    if (fl_ts_authorize_table_id(ctx, FL_ACL_OP_READ, req->table_id, err)) return err->code;
    Fluss__LimitScanResponse resp = FLUSS__LIMIT_SCAN_RESPONSE__INIT;
    fl_error_t e;
    fl_err_clear(&e);
    fl_buf_t records;
    fl_buf_init(&records);
    fl_kv_values_t vals;
    fl_kv_values_init(&vals);
    fl_hosted_table_t *table = fl_tablet_catalog_table(ts->catalog, req->table_id);
    fl_replica_t *r = NULL;
    int rc = 0;
    /* a limit <= 0 reads nothing, as in Fluss */
    size_t limit = req->limit <= 0 ? 0 : req->limit > FL_LIMIT_SCAN_MAX ? FL_LIMIT_SCAN_MAX
                                                                        : (size_t)req->limit;
    if (table && table->has_primary_key) {
        fl_kv_tablet_t *kt = NULL;
        rc = fl_kv_bucket(ts, req->table_id, table, req->has_partition_id, req->partition_id,
                          req->bucket_id, &r, &kt, &e);
        if (!rc && limit) rc = fl_kv_tablet_prefix_lookup(kt, NULL, 0, limit, &vals, &e);
        if (!rc) {
            fl_value_batch_writer_t w;
            fl_value_batch_begin(&w, &records);
            for (size_t i = 0; i < vals.count; i++)
                fl_value_batch_add_value(&w, vals.bytes.data + vals.off[i], vals.len[i]);
            fl_value_batch_end(&w);
            resp.has_is_log_table = 1;
            resp.is_log_table = 0;
        }
        if (r) fl_tablet_kv_release(ts->kv, r, kt);
    } else {
        rc = fl_tablet_server_replica(ts, req->table_id, table, req->has_partition_id,
                                      req->partition_id, req->bucket_id, &r, &e);
        if (!rc && limit) rc = fl_limit_scan_log(r, (int32_t)limit, &records, &e);
        resp.has_is_log_table = 1;
        resp.is_log_table = 1;
    }
    fl_replica_unref(r);
    fl_hosted_table_unref(table);
    if (rc) {
        resp.has_is_log_table = 0;
        resp.has_error_code = 1;
        resp.error_code = fl_server_wire_code(rc);
        resp.error_message = e.msg;
    } else {
        resp.has_records = 1;
        resp.records.data = records.data;
        resp.records.len = records.len;
    }
    fl_server_reply(out, ctx->request_id, &resp.base);
    fl_buf_free(&records);
    fl_kv_values_free(&vals);
    return 0;
}

/* ---- GET_TABLE_STATS ---- */

/* A bucket's row count (Fluss's Replica.getRowCount): a primary-key
 * bucket's live rows (its kv tablet's count, none kept for a WAL
 * changelog image), a log bucket's records (high watermark - log start). */
static int fl_table_stats_bucket(fl_tablet_server_t *ts, int64_t table_id,
                                 const fl_hosted_table_t *t,
                                 const Fluss__PbTableStatsReqForBucket *br, int64_t *rows,
                                 fl_error_t *err) {
    fl_replica_t *r = NULL;
    int rc;
    if (t && t->has_primary_key) {
        fl_kv_tablet_t *kt = NULL;
        rc = fl_kv_bucket(ts, table_id, t, br->has_partition_id, br->partition_id, br->bucket_id,
                          &r, &kt, err);
        if (!rc && t->kv->changelog_wal)
            rc = fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                            "Row count is disabled for this table '%s.%s': its "
                            "table.changelog.image is WAL, under which keeping a row count "
                            "is costly and rarely needed. Set table.changelog.image to FULL "
                            "to have one.",
                            t->database, t->name);
        if (!rc) rc = fl_kv_tablet_row_count(kt, rows, err);
        if (r) fl_tablet_kv_release(ts->kv, r, kt);
    } else {
        rc = fl_tablet_server_replica(ts, table_id, t, br->has_partition_id, br->partition_id,
                                      br->bucket_id, &r, err);
        if (!rc) *rows = fl_replica_high_watermark(r) - fl_replica_earliest(r);
    }
    fl_replica_unref(r);
    return rc;
}

FL_API_HANDLER(fl_api_get_table_stats) {
    const Fluss__GetTableStatsRequest *req = (const Fluss__GetTableStatsRequest *)m;
    fl_tablet_server_t *ts = ctx->ts;
    if (fl_ts_authorize_table_id(ctx, FL_ACL_OP_READ, req->table_id, err)) return err->code;
    size_t nb = req->n_buckets_req;
    Fluss__PbTableStatsRespForBucket *bs = fl_calloc(nb ? nb : 1, sizeof(*bs));
    Fluss__PbTableStatsRespForBucket **ptrs = fl_calloc(nb ? nb : 1, sizeof(*ptrs));
    char **messages = fl_calloc(nb ? nb : 1, sizeof(*messages));
    fl_hosted_table_t *table = fl_tablet_catalog_table(ts->catalog, req->table_id);
    /* target_columns (column statistics) are reserved in 0.9.1: ignored */
    for (size_t i = 0; i < nb; i++) {
        const Fluss__PbTableStatsReqForBucket *br = req->buckets_req[i];
        Fluss__PbTableStatsRespForBucket b = FLUSS__PB_TABLE_STATS_RESP_FOR_BUCKET__INIT;
        b.bucket_id = br->bucket_id;
        b.has_partition_id = br->has_partition_id;
        b.partition_id = br->partition_id;
        fl_error_t e;
        fl_err_clear(&e);
        int64_t rows = 0;
        int rc = fl_table_stats_bucket(ts, req->table_id, table, br, &rows, &e);
        if (rc) {
            b.has_error_code = 1;
            b.error_code = fl_server_wire_code(rc);
            messages[i] = fl_strdup(e.msg);
            b.error_message = messages[i];
        } else {
            b.has_row_count = 1;
            b.row_count = rows;
        }
        bs[i] = b;
        ptrs[i] = &bs[i];
    }
    fl_hosted_table_unref(table);
    Fluss__GetTableStatsResponse resp = FLUSS__GET_TABLE_STATS_RESPONSE__INIT;
    resp.n_buckets_resp = nb;
    resp.buckets_resp = ptrs;
    fl_server_reply(out, ctx->request_id, &resp.base);
    for (size_t i = 0; i < nb; i++) fl_free(messages[i]);
    fl_free(messages);
    fl_free(ptrs);
    fl_free(bs);
    return 0;
}
