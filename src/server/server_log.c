/*
 * server_log.c — the log-table APIs of the tablet server: INIT_WRITER,
 * PRODUCE_LOG, FETCH_LOG (with long poll) and LIST_OFFSETS, over the
 * replica manager's bucket logs.
 *
 * Long poll: a fetch that finds fewer than min_bytes parks (keeps its
 * decoded request and a reference on its connection) until an append
 * brings data or max_wait_ms passes; then it is answered like a fresh
 * fetch. Per-bucket failures travel inside a SUCCESS response, as Fluss
 * does; success answers always carry high_watermark, log_start_offset and
 * records (the Java client reads them unconditionally).
 */
#include <jansson.h>
#include <string.h>
#include <strings.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"
#include "record_project.h"
#include "record_validate.h"
#include "server_node.h"
#include "types_schema.h"

#define FL_FETCH_WAIT_MAX_MS 30000
#define FL_PARKED_FETCHES_MAX 4096
#define FL_OFFSET_EARLIEST (-2)

enum { FL_OFFSETS_EARLIEST = 0, FL_OFFSETS_LATEST = 1, FL_OFFSETS_TIMESTAMP = 2, FL_OFFSETS_LEO = 3 };

struct fl_delayed_fetch {
    fl_delayed_fetch_t *prev, *next;
    fl_server_t *srv;
    fl_rpc_conn_t *conn;
    int32_t request_id;
    Fluss__FetchLogRequest *req;
    uv_timer_t timer;
};

/* ---- the table and bucket a request names ---- */

static int64_t fl_table_ttl_ms(const fl_ms_table_t *t) {
    int64_t ttl = 7LL * 24 * 3600 * 1000;
    json_t *j = json_loads(t->table_json, 0, NULL);
    const char *v = j ? json_string_value(json_object_get(json_object_get(j, "properties"),
                                                          "table.log.ttl"))
                      : NULL;
    if (v) {
        /* "7 d", "1h", "3600000": number and unit */
        char *end;
        long long n = strtoll(v, &end, 10);
        while (*end == ' ') end++;
        int64_t unit = 1;
        if (!strncmp(end, "d", 1)) unit = 86400000;
        else if (!strncmp(end, "h", 1)) unit = 3600000;
        else if (!strncmp(end, "min", 3) || !strcmp(end, "m")) unit = 60000;
        else if (!strncmp(end, "ms", 2)) unit = 1;
        else if (!strncmp(end, "s", 1)) unit = 1000;
        ttl = n * unit;
    }
    if (j) json_decref(j);
    return ttl;
}

/* Opens the replica of (table, partition, bucket) or sets a per-bucket
 * error: UNKNOWN_TABLE_OR_BUCKET for a table or bucket we do not have,
 * NOT_LEADER_OR_FOLLOWER when another server leads it. */
static int fl_bucket_replica(fl_server_role_t *role, int64_t table_id, bool has_partition,
                             int64_t partition_id, int32_t bucket, fl_replica_t **out,
                             fl_error_t *err) {
    fl_server_t *srv = role->server;
    fl_replica_t *r = fl_replica_manager_find(&srv->replicas, table_id,
                                              has_partition ? partition_id : -1, bucket);
    if (r) {
        *out = r;
        return 0;
    }
    const fl_ms_table_t *t = srv->catalog.ms->ops->table_by_id(srv->catalog.ms, table_id);
    if (!t)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                          "Unknown table or bucket: TableBucket{tableId=%lld, bucket=%d}",
                          (long long)table_id, bucket);
    const fl_ms_partition_t *part = NULL;
    if (has_partition) {
        part = fl_ms_table_partition(t, partition_id, NULL);
        if (!part)
            return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                              "Unknown table or bucket: TableBucket{tableId=%lld, "
                              "partitionId=%lld, bucket=%d}",
                              (long long)table_id, (long long)partition_id, bucket);
    } else if (t->partition_count > 0 || t->bucket_count == 0) {
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                          "Table %lld is partitioned: a bucket needs a partition id.",
                          (long long)table_id);
    }
    int32_t count = part ? part->bucket_count : t->bucket_count;
    const fl_ms_bucket_t *buckets = part ? part->buckets : t->buckets;
    if (bucket < 0 || bucket >= count)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                          "Unknown table or bucket: TableBucket{tableId=%lld, bucket=%d}",
                          (long long)table_id, bucket);
    if (buckets[bucket].leader != role->self->id)
        return fl_err_set(err, FLUSS_ERR_NOT_LEADER_OR_FOLLOWER,
                          "Leader of bucket %d of table %lld is server %d, not %d.", bucket,
                          (long long)table_id, buckets[bucket].leader, role->self->id);
    return fl_replica_manager_open(&srv->replicas, t->database, t->name, table_id,
                                   part ? part->partition_id : -1, part ? part->name : NULL,
                                   bucket, fl_table_ttl_ms(t), out, err);
}

/* ---- INIT_WRITER ---- */

int fl_api_init_writer(fl_server_role_t *role, const ProtobufCMessage *m, int32_t rid,
                       fl_buf_t *out, fl_error_t *err) {
    (void)m;
    fl_metastore_t *ms = role->server->catalog.ms;
    Fluss__InitWriterResponse resp = FLUSS__INIT_WRITER_RESPONSE__INIT;
    int rc = ms->ops->next_id(ms, FL_MS_COUNTER_WRITER_ID, &resp.writer_id, err);
    if (rc) return rc;
    fl_server_reply(out, rid, &resp.base);
    return 0;
}

/* ---- FETCH_LOG ---- */

#define FL_SCHEMAS_CACHED_MAX 64

/* The schemas of one table, parsed on demand for projection. */
typedef struct fl_proj_ctx {
    const fl_ms_table_t *table;
    bool parsed[FL_SCHEMAS_CACHED_MAX];
    fl_schema_t schemas[FL_SCHEMAS_CACHED_MAX];
    const fl_datatype_t **types[FL_SCHEMAS_CACHED_MAX];
} fl_proj_ctx_t;

static const fl_datatype_t *const *fl_proj_schema_types(void *vctx, int16_t schema_id,
                                                        size_t *column_count) {
    fl_proj_ctx_t *c = vctx;
    if (schema_id < 1 || (size_t)schema_id > c->table->schema_count ||
        schema_id >= FL_SCHEMAS_CACHED_MAX)
        return NULL;
    if (!c->parsed[schema_id]) {
        json_t *j = json_loads(c->table->schema_jsons[schema_id - 1], 0, NULL);
        fl_error_t e;
        int rc = j ? fl_schema_from_json(j, &c->schemas[schema_id], &e) : -1;
        if (j) json_decref(j);
        if (rc) return NULL;
        fl_schema_t *s = &c->schemas[schema_id];
        c->types[schema_id] = fl_calloc(s->column_count ? s->column_count : 1, sizeof(fl_datatype_t *));
        for (size_t i = 0; i < s->column_count; i++) c->types[schema_id][i] = s->columns[i].type;
        c->parsed[schema_id] = true;
    }
    *column_count = c->schemas[schema_id].column_count;
    return c->types[schema_id];
}

static void fl_proj_ctx_free(fl_proj_ctx_t *c) {
    for (int i = 0; i < FL_SCHEMAS_CACHED_MAX; i++) {
        if (!c->parsed[i]) continue;
        fl_schema_free(&c->schemas[i]);
        fl_free(c->types[i]);
    }
}

/* Checks that a table can be projected as requested (ARROW log format,
 * a valid field list for its latest schema). */
static int fl_proj_prepare(fl_server_t *srv, const Fluss__PbFetchLogReqForTable *tr,
                           fl_proj_ctx_t *c, fl_error_t *err) {
    memset(c, 0, sizeof(*c));
    c->table = srv->catalog.ms->ops->table_by_id(srv->catalog.ms, tr->table_id);
    if (!c->table) return 0; /* per-bucket UNKNOWN_TABLE_OR_BUCKET follows */
    json_t *j = json_loads(c->table->table_json, 0, NULL);
    const char *fmt = j ? json_string_value(json_object_get(json_object_get(j, "properties"),
                                                            "table.log.format"))
                        : NULL;
    bool arrow = !fmt || strcasecmp(fmt, "ARROW") == 0;
    if (j) json_decref(j);
    if (!arrow)
        return fl_err_set(err, FLUSS_ERR_INVALID_COLUMN_PROJECTION,
                          "Projection pushdown is only supported for the ARROW log format, the "
                          "table uses %s.",
                          fmt);
    size_t columns = 0;
    if (!fl_proj_schema_types(c, (int16_t)c->table->schema_id, &columns))
        return fl_err_set(err, FLUSS_ERR_SCHEMA_NOT_EXIST, "The table schema cannot be read.");
    return fl_projection_check(tr->projected_fields, tr->n_projected_fields, columns, err);
}

static void fl_fetch_wake_all(fl_server_t *srv);

/* Builds the whole fetch answer into frame (when not NULL); returns the
 * record bytes, or SIZE_MAX when a bucket failed (an error is answered at
 * once, never parked). */
static size_t fl_fetch_build(fl_server_role_t *role, const Fluss__FetchLogRequest *req,
                             int32_t request_id, fl_buf_t *frame) {
    bool failed = false;
    size_t nt = req->n_tables_req, total = 0;
    size_t request_max = req->max_bytes > 0 ? (size_t)req->max_bytes : 0;
    Fluss__PbFetchLogRespForTable *tables = fl_calloc(nt ? nt : 1, sizeof(*tables));
    Fluss__PbFetchLogRespForTable **table_ptrs = fl_calloc(nt ? nt : 1, sizeof(*table_ptrs));
    Fluss__PbFetchLogRespForBucket **blocks = fl_calloc(nt ? nt : 1, sizeof(*blocks));
    Fluss__PbFetchLogRespForBucket ***block_ptrs = fl_calloc(nt ? nt : 1, sizeof(*block_ptrs));
    fl_buf_t **datas = fl_calloc(nt ? nt : 1, sizeof(*datas));
    char **messages = NULL;
    size_t message_count = 0;
    for (size_t i = 0; i < nt; i++) {
        const Fluss__PbFetchLogReqForTable *tr = req->tables_req[i];
        Fluss__PbFetchLogRespForTable t = FLUSS__PB_FETCH_LOG_RESP_FOR_TABLE__INIT;
        t.table_id = tr->table_id;
        size_t nb = tr->n_buckets_req;
        fl_proj_ctx_t proj;
        fl_error_t proj_err;
        fl_err_clear(&proj_err);
        int proj_rc = 0;
        if (tr->projection_pushdown_enabled)
            proj_rc = fl_proj_prepare(role->server, tr, &proj, &proj_err);
        blocks[i] = fl_calloc(nb ? nb : 1, sizeof(Fluss__PbFetchLogRespForBucket));
        block_ptrs[i] = fl_calloc(nb ? nb : 1, sizeof(Fluss__PbFetchLogRespForBucket *));
        datas[i] = fl_calloc(nb ? nb : 1, sizeof(fl_buf_t));
        for (size_t k = 0; k < nb; k++) {
            const Fluss__PbFetchLogReqForBucket *br = tr->buckets_req[k];
            Fluss__PbFetchLogRespForBucket b = FLUSS__PB_FETCH_LOG_RESP_FOR_BUCKET__INIT;
            b.bucket_id = br->bucket_id;
            b.has_partition_id = br->has_partition_id;
            b.partition_id = br->partition_id;
            fl_error_t err;
            fl_err_clear(&err);
            fl_replica_t *r = NULL;
            int rc = fl_bucket_replica(role, tr->table_id, br->has_partition_id, br->partition_id,
                                       br->bucket_id, &r, &err);
            if (!rc && proj_rc) rc = fl_err_set(&err, proj_rc, "%s", proj_err.msg);
            fl_buf_t *data = &datas[i][k];
            if (!rc) {
                int64_t offset = br->fetch_offset == FL_OFFSET_EARLIEST ? r->log->log_start_offset
                                                                        : br->fetch_offset;
                size_t bucket_max = br->max_fetch_bytes > 0 ? (size_t)br->max_fetch_bytes : 0;
                size_t left = request_max > total ? request_max - total : 0;
                size_t limit = bucket_max < left ? bucket_max : left;
                /* at least one batch per answer (never an empty answer
                 * because of a small limit) */
                if (limit == 0 && total == 0) limit = 1;
                if (limit > 0)
                    rc = fl_log_tablet_read(r->log, offset, limit, r->log->log_end_offset, data, &err);
                else if (offset < r->log->log_start_offset || offset > r->log->log_end_offset)
                    rc = fl_log_tablet_read(r->log, offset, 1, r->log->log_end_offset, data, &err);
                if (!rc && tr->projection_pushdown_enabled && data->len > 0) {
                    fl_buf_t projected;
                    fl_buf_init(&projected);
                    fl_projection_t p = {tr->projected_fields, tr->n_projected_fields};
                    rc = fl_record_project(data->data, data->len, &p, fl_proj_schema_types, &proj,
                                           &projected, &err);
                    fl_buf_free(data);
                    *data = projected;
                }
            }
            if (rc) {
                failed = true;
                b.has_error_code = 1;
                b.error_code = fl_server_wire_code(rc);
                messages = fl_realloc(messages, (message_count + 1) * sizeof(char *));
                messages[message_count] = fl_strdup(err.msg);
                b.error_message = messages[message_count++];
            } else {
                b.has_high_watermark = 1;
                b.high_watermark = r->log->log_end_offset;
                b.has_log_start_offset = 1;
                b.log_start_offset = r->log->log_start_offset;
                b.has_records = 1;
                b.records.data = data->data;
                b.records.len = data->len;
                total += data->len;
            }
            blocks[i][k] = b;
            block_ptrs[i][k] = &blocks[i][k];
        }
        if (tr->projection_pushdown_enabled) fl_proj_ctx_free(&proj);
        t.n_buckets_resp = nb;
        t.buckets_resp = block_ptrs[i];
        tables[i] = t;
        table_ptrs[i] = &tables[i];
    }
    Fluss__FetchLogResponse resp = FLUSS__FETCH_LOG_RESPONSE__INIT;
    resp.n_tables_resp = nt;
    resp.tables_resp = table_ptrs;
    if (frame) fl_server_reply(frame, request_id, &resp.base);
    for (size_t i = 0; i < nt; i++) {
        for (size_t k = 0; k < req->tables_req[i]->n_buckets_req; k++) fl_buf_free(&datas[i][k]);
        fl_free(datas[i]);
        fl_free(blocks[i]);
        fl_free(block_ptrs[i]);
    }
    for (size_t i = 0; i < message_count; i++) fl_free(messages[i]);
    fl_free(messages);
    fl_free(datas);
    fl_free(blocks);
    fl_free(block_ptrs);
    fl_free(tables);
    fl_free(table_ptrs);
    return failed ? SIZE_MAX : total;
}

static void fl_parked_unlink(fl_delayed_fetch_t *d) {
    fl_server_t *srv = d->srv;
    if (d->prev) d->prev->next = d->next;
    else srv->parked = d->next;
    if (d->next) d->next->prev = d->prev;
}

static void fl_parked_on_closed(uv_handle_t *h) {
    fl_delayed_fetch_t *d = h->data;
    fl_rpc_conn_unref(d->conn);
    protobuf_c_message_free_unpacked(&d->req->base, NULL);
    fl_free(d);
}

/* Answers a parked fetch now (whatever it finds) and frees it. */
static void fl_parked_complete(fl_delayed_fetch_t *d) {
    fl_parked_unlink(d);
    uv_timer_stop(&d->timer);
    if (fl_rpc_conn_is_open(d->conn)) {
        fl_buf_t frame;
        fl_buf_init(&frame);
        fl_fetch_build(&d->srv->tablet_roles[0], d->req, d->request_id, &frame);
        fl_rpc_conn_send(d->conn, frame.data, frame.len);
        fl_buf_free(&frame);
    }
    uv_close((uv_handle_t *)&d->timer, fl_parked_on_closed);
}

static void fl_parked_on_timer(uv_timer_t *t) { fl_parked_complete(t->data); }

/* After an append: answer every parked fetch that now has min_bytes. */
static void fl_fetch_wake_all(fl_server_t *srv) {
    for (fl_delayed_fetch_t *d = srv->parked, *next; d; d = next) {
        next = d->next;
        if (!fl_rpc_conn_is_open(d->conn)) {
            fl_parked_complete(d);
            continue;
        }
        size_t min = d->req->has_min_bytes && d->req->min_bytes > 0 ? (size_t)d->req->min_bytes : 1;
        if (fl_fetch_build(&srv->tablet_roles[0], d->req, d->request_id, NULL) >= min)
            fl_parked_complete(d);
    }
}

void fl_server_fetch_shutdown(fl_server_t *srv) {
    while (srv->parked) fl_parked_complete(srv->parked);
}

int fl_api_fetch_log(fl_server_role_t *role, const ProtobufCMessage *m, int32_t rid,
                     fl_buf_t *out, fl_error_t *err) {
    (void)err;
    const Fluss__FetchLogRequest *req = (const Fluss__FetchLogRequest *)m;
    fl_server_t *srv = role->server;
    size_t min = req->has_min_bytes && req->min_bytes > 0 ? (size_t)req->min_bytes : 1;
    int32_t wait = req->has_max_wait_ms ? req->max_wait_ms : 0;
    if (wait > FL_FETCH_WAIT_MAX_MS) wait = FL_FETCH_WAIT_MAX_MS;
    size_t mark = out->len;
    size_t got = fl_fetch_build(role, req, rid, out);
    size_t parked = 0;
    for (fl_delayed_fetch_t *d = srv->parked; d; d = d->next) parked++;
    if (got >= min || wait <= 0 || !srv->loop || !srv->conn || parked >= FL_PARKED_FETCHES_MAX)
        return 0;
    /* park: take the answer back and wait for data or the deadline */
    out->len = mark;
    fl_delayed_fetch_t *d = fl_calloc(1, sizeof(*d));
    d->srv = srv;
    d->conn = srv->conn;
    d->request_id = rid;
    d->req = (Fluss__FetchLogRequest *)req;
    srv->request_kept = true;
    fl_rpc_conn_ref(d->conn);
    uv_timer_init(srv->loop, &d->timer);
    d->timer.data = d;
    uv_timer_start(&d->timer, fl_parked_on_timer, (uint64_t)wait, 0);
    d->next = srv->parked;
    if (srv->parked) srv->parked->prev = d;
    srv->parked = d;
    return 0;
}

/* ---- PRODUCE_LOG ---- */

/* What no bucket of table_id may store, stricter than Fluss 0.9.1: records
 * for a primary-key table (written with PUT_KV only), and batches that fail
 * fl_record_validate (unknown schema id, records that do not match their
 * header or schema). */
static int fl_produce_validate(fl_server_t *srv, int64_t table_id, const uint8_t *records,
                               size_t len, fl_error_t *err) {
    fl_proj_ctx_t c;
    memset(&c, 0, sizeof(c));
    c.table = srv->catalog.ms->ops->table_by_id(srv->catalog.ms, table_id);
    if (!c.table) return 0; /* fl_bucket_replica has answered */
    json_t *j = json_loads(c.table->table_json, 0, NULL);
    int format = fl_log_format_from_name(json_string_value(
        json_object_get(json_object_get(j, "properties"), "table.log.format")));
    if (j) json_decref(j);
    size_t columns;
    int rc;
    if (format < 0 || !fl_proj_schema_types(&c, (int16_t)c.table->schema_id, &columns))
        rc = fl_err_set(err, FLUSS_ERR_STORAGE_EXCEPTION, "The table %s.%s cannot be read.",
                        c.table->database, c.table->name);
    else if (c.schemas[c.table->schema_id].has_primary_key)
        rc = fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                        "Table %s.%s has a primary key: write it with PUT_KV (an upsert "
                        "writer), not PRODUCE_LOG.",
                        c.table->database, c.table->name);
    else
        rc = fl_record_validate(records, len, (fl_log_format_t)format, fl_proj_schema_types, &c,
                                err);
    fl_proj_ctx_free(&c);
    return rc;
}

int fl_api_produce_log(fl_server_role_t *role, const ProtobufCMessage *m, int32_t rid,
                       fl_buf_t *out, fl_error_t *err) {
    const Fluss__ProduceLogRequest *req = (const Fluss__ProduceLogRequest *)m;
    if (req->acks != -1 && req->acks != 0 && req->acks != 1)
        return fl_err_set(err, FLUSS_ERR_INVALID_REQUIRED_ACKS, "Invalid required acks: %d",
                          req->acks);
    size_t nb = req->n_buckets_req;
    Fluss__PbProduceLogRespForBucket *bs = fl_calloc(nb ? nb : 1, sizeof(*bs));
    Fluss__PbProduceLogRespForBucket **ptrs = fl_calloc(nb ? nb : 1, sizeof(*ptrs));
    char **messages = fl_calloc(nb ? nb : 1, sizeof(char *));
    int64_t now = fl_time_wall_ms();
    bool appended = false;
    for (size_t i = 0; i < nb; i++) {
        Fluss__PbProduceLogReqForBucket *br = req->buckets_req[i];
        Fluss__PbProduceLogRespForBucket b = FLUSS__PB_PRODUCE_LOG_RESP_FOR_BUCKET__INIT;
        b.bucket_id = br->bucket_id;
        b.has_partition_id = br->has_partition_id;
        b.partition_id = br->partition_id;
        fl_error_t e;
        fl_err_clear(&e);
        int rc = 0;
        fl_replica_t *r = NULL;
        fl_append_result_t res;
        rc = fl_bucket_replica(role, req->table_id, br->has_partition_id, br->partition_id,
                                   br->bucket_id, &r, &e);
        if (!rc)
            rc = fl_produce_validate(role->server, req->table_id, br->records.data,
                                     br->records.len, &e);
        if (!rc) rc = fl_log_tablet_append(r->log, br->records.data, br->records.len, now, &res, &e);
        if (rc) {
            b.has_error_code = 1;
            b.error_code = fl_server_wire_code(rc);
            messages[i] = fl_strdup(e.msg);
            b.error_message = messages[i];
        } else {
            b.has_base_offset = 1;
            b.base_offset = res.base_offset;
            appended |= !res.duplicate;
        }
        bs[i] = b;
        ptrs[i] = &bs[i];
    }
    Fluss__ProduceLogResponse resp = FLUSS__PRODUCE_LOG_RESPONSE__INIT;
    resp.n_buckets_resp = nb;
    resp.buckets_resp = ptrs;
    fl_server_reply(out, rid, &resp.base);
    for (size_t i = 0; i < nb; i++) fl_free(messages[i]);
    fl_free(messages);
    fl_free(bs);
    fl_free(ptrs);
    if (appended) fl_fetch_wake_all(role->server);
    return 0;
}

/* ---- LIST_OFFSETS ---- */

int fl_api_list_offsets(fl_server_role_t *role, const ProtobufCMessage *m, int32_t rid,
                        fl_buf_t *out, fl_error_t *err) {
    (void)err;
    const Fluss__ListOffsetsRequest *req = (const Fluss__ListOffsetsRequest *)m;
    size_t nb = req->n_bucket_id;
    Fluss__PbListOffsetsRespForBucket *bs = fl_calloc(nb ? nb : 1, sizeof(*bs));
    Fluss__PbListOffsetsRespForBucket **ptrs = fl_calloc(nb ? nb : 1, sizeof(*ptrs));
    char **messages = fl_calloc(nb ? nb : 1, sizeof(char *));
    int64_t now = fl_time_wall_ms();
    for (size_t i = 0; i < nb; i++) {
        Fluss__PbListOffsetsRespForBucket b = FLUSS__PB_LIST_OFFSETS_RESP_FOR_BUCKET__INIT;
        b.bucket_id = req->bucket_id[i];
        fl_error_t e;
        fl_err_clear(&e);
        fl_replica_t *r = NULL;
        int rc = fl_bucket_replica(role, req->table_id, req->has_partition_id, req->partition_id,
                                   req->bucket_id[i], &r, &e);
        int64_t offset = 0;
        if (!rc) {
            switch (req->offset_type) {
            case FL_OFFSETS_EARLIEST:
                offset = r->log->log_start_offset;
                break;
            case FL_OFFSETS_LATEST:
            case FL_OFFSETS_LEO:
                offset = r->log->log_end_offset;
                break;
            case FL_OFFSETS_TIMESTAMP:
                if (!req->has_starttimestamp) {
                    rc = fl_err_set(&e, FLUSS_ERR_INVALID_TIMESTAMP_EXCEPTION,
                                    "A timestamp offset request needs startTimestamp.");
                } else if (req->starttimestamp > now) {
                    rc = fl_err_set(&e, FLUSS_ERR_INVALID_TIMESTAMP_EXCEPTION,
                                    "Invalid timestamp %lld: it is later than the current time %lld.",
                                    (long long)req->starttimestamp, (long long)now);
                } else {
                    offset = fl_log_tablet_offset_for_time(r->log, req->starttimestamp, &e);
                }
                break;
            default:
                rc = fl_err_set(&e, FLUSS_ERR_UNKNOWN_SERVER_ERROR, "Unknown offset type %d.",
                                req->offset_type);
            }
        }
        if (rc) {
            b.has_error_code = 1;
            b.error_code = fl_server_wire_code(rc);
            messages[i] = fl_strdup(e.msg);
            b.error_message = messages[i];
        } else {
            b.has_offset = 1;
            b.offset = offset;
        }
        bs[i] = b;
        ptrs[i] = &bs[i];
    }
    Fluss__ListOffsetsResponse resp = FLUSS__LIST_OFFSETS_RESPONSE__INIT;
    resp.n_buckets_resp = nb;
    resp.buckets_resp = ptrs;
    fl_server_reply(out, rid, &resp.base);
    for (size_t i = 0; i < nb; i++) fl_free(messages[i]);
    fl_free(messages);
    fl_free(bs);
    fl_free(ptrs);
    return 0;
}
