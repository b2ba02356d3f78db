/*
 * server_log.c — the log-table APIs of the tablet server: INIT_WRITER,
 * PRODUCE_LOG, FETCH_LOG (with long poll) and LIST_OFFSETS, over the
 * tablet server's replicas.
 *
 * Long poll: a fetch that finds fewer than min_bytes parks in the
 * purgatory on the buckets it asked for, with a byte counter per bucket
 * (the replica's bytes below the high watermark when it parked): it is
 * checked only when one of those buckets' high watermark moves, with no
 * disk read, and answered — on its connection's loop — like a fresh fetch
 * when the counter reaches min_bytes or max_wait_ms passes.
 *
 * Produce: acks=all (-1) waits until the high watermark covers the
 * appended batches (with one replica, at once — except in the durable mode,
 * where it moves after the fsync); an append that crossed
 * log.flush.interval-messages waits for the flush too. Both wait in the
 * purgatory; acks 0 and 1 answer once the leader appended.
 *
 * Per-bucket failures travel inside a SUCCESS response, as Fluss does;
 * success answers always carry high_watermark, log_start_offset and
 * records (the Java client reads them unconditionally) — except for an
 * offset below the local log that remote storage holds (tiered storage):
 * then remote_log_fetch_info instead of records, as the reference answers,
 * and the clients download the segments themselves; such an answer is
 * never parked.
 */
#include <string.h>
#include <strings.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"
#include "record_project.h"
#include "record_validate.h"
#include "replica_replication.h"
#include "server_authz.h"
#include "server_ackwait.h"
#include "record_stats_build.h"
#include "server_filter.h"
#include "server_node.h"
#include "server_tablet.h"
#include "server_tiering.h"
#include "types_row_compacted.h" /* base-128 varints, as protobuf writes them */

#define FL_FETCH_WAIT_MAX_MS 30000
#define FL_PARKED_FETCHES_MAX 65536
#define FL_OFFSET_EARLIEST (-2)

enum { FL_OFFSETS_EARLIEST = 0, FL_OFFSETS_LATEST = 1, FL_OFFSETS_TIMESTAMP = 2, FL_OFFSETS_LEO = 3 };

/* ---- INIT_WRITER (on the coordinator's worker: the id block may be written) ---- */

/* ---- FETCH_LOG ---- */

static const fl_datatype_t *const *fl_proj_schema_types(void *vctx, int16_t schema_id,
                                                        size_t *column_count) {
    return fl_hosted_table_schema_types(vctx, schema_id, column_count);
}

static int fl_proj_positions(void *vctx, int16_t schema_id, const int32_t *fields, size_t n,
                             int32_t *out, fl_error_t *err) {
    const fl_schema_map_t *m = fl_hosted_table_latest_map(vctx, schema_id);
    if (!m)
        return fl_err_set(err, FLUSS_ERR_SCHEMA_NOT_EXIST, "Unknown schema id %d in a log batch.",
                          schema_id);
    return fl_schema_map_positions(m, fields, n, out, err);
}

/* Checks that a table can be projected as requested (ARROW log format,
 * a valid field list for its latest schema). */
static int fl_proj_prepare(const fl_hosted_table_t *t, const Fluss__PbFetchLogReqForTable *tr,
                           fl_error_t *err) {
    if (!t) return 0; /* per-bucket UNKNOWN_TABLE_OR_BUCKET follows */
    if (strcasecmp(t->log_format, "ARROW") != 0)
        return fl_err_set(err, FLUSS_ERR_INVALID_COLUMN_PROJECTION,
                          "Projection pushdown is only supported for the ARROW log format, the "
                          "table uses %s.",
                          t->log_format);
    size_t columns = 0;
    if (!fl_hosted_table_schema_types(t, (int16_t)t->schema_id, &columns))
        return fl_err_set(err, FLUSS_ERR_SCHEMA_NOT_EXIST, "The table schema cannot be read.");
    return fl_projection_check(tr->projected_fields, tr->n_projected_fields, columns, err);
}

/* What a parked fetch watches: a replica per requested bucket (NULL for a
 * bucket that failed), with its bytes below the high watermark at parking. */
typedef struct fl_fetch_watch {
    size_t count;
    fl_replica_t **replicas;
    uint64_t *base_bytes;
    fl_bucket_key_t *keys;
    size_t key_count;
} fl_fetch_watch_t;

static void fl_fetch_watch_free(fl_fetch_watch_t *w) {
    for (size_t i = 0; i < w->count; i++) fl_replica_unref(w->replicas[i]);
    fl_free(w->replicas);
    fl_free(w->base_bytes);
    fl_free(w->keys);
    memset(w, 0, sizeof(*w));
}

/* ---- the send path: record data spliced into the answer, not copied ---- */

/* Protobuf wire tags of the fields written by hand (field << 3 | type). */
#define FL_TAG_RESP_TABLES 0x0a  /* FetchLogResponse.tables_resp = 1, bytes */
#define FL_TAG_TABLE_ID 0x08     /* PbFetchLogRespForTable.table_id = 1, varint */
#define FL_TAG_TABLE_BUCKETS 0x12 /* PbFetchLogRespForTable.buckets_resp = 2, bytes */
#define FL_TAG_BUCKET_RECORDS 0x42 /* PbFetchLogRespForBucket.records = 8, bytes */

/* The FETCH_LOG answer with every bucket's records spliced into o as the
 * buffers they were read into (one writev sends them): each bucket message
 * is packed by protobuf-c without `records`, which follows it as field 8
 * written here (field order is free in protobuf). datas[i][k] are taken. */
static void fl_fetch_reply_spliced(fl_rpc_out_t *o, int32_t request_id,
                                   Fluss__FetchLogResponse *resp, fl_buf_t **datas) {
    size_t nt = resp->n_tables_resp, total = 0;
    size_t *tlen = fl_calloc(nt ? nt : 1, sizeof(size_t));
    size_t **blen = fl_calloc(nt ? nt : 1, sizeof(size_t *));
    for (size_t i = 0; i < nt; i++) {
        Fluss__PbFetchLogRespForTable *t = resp->tables_resp[i];
        size_t tl = 1 + fl_uvarint_len((uint64_t)t->table_id);
        blen[i] = fl_calloc(t->n_buckets_resp ? t->n_buckets_resp : 1, sizeof(size_t));
        for (size_t k = 0; k < t->n_buckets_resp; k++) {
            Fluss__PbFetchLogRespForBucket *b = t->buckets_resp[k];
            bool rec = b->has_records;
            size_t rl = b->records.len;
            b->has_records = 0;
            size_t bl = protobuf_c_message_get_packed_size(&b->base);
            b->has_records = rec;
            if (rec) bl += 1 + fl_uvarint_len(rl) + rl;
            blen[i][k] = bl;
            tl += 1 + fl_uvarint_len(bl) + bl;
        }
        tlen[i] = tl;
        total += 1 + fl_uvarint_len(tl) + tl;
    }
    fl_frame_put_response_header(&o->buf, FL_RESPONSE_SUCCESS, request_id, total);
    for (size_t i = 0; i < nt; i++) {
        Fluss__PbFetchLogRespForTable *t = resp->tables_resp[i];
        fl_buf_put_u8(&o->buf, FL_TAG_RESP_TABLES);
        fl_buf_put_uvarint(&o->buf, tlen[i]);
        fl_buf_put_u8(&o->buf, FL_TAG_TABLE_ID);
        fl_buf_put_uvarint(&o->buf, (uint64_t)t->table_id);
        for (size_t k = 0; k < t->n_buckets_resp; k++) {
            Fluss__PbFetchLogRespForBucket *b = t->buckets_resp[k];
            bool rec = b->has_records;
            b->has_records = 0;
            fl_buf_put_u8(&o->buf, FL_TAG_TABLE_BUCKETS);
            fl_buf_put_uvarint(&o->buf, blen[i][k]);
            size_t ps = protobuf_c_message_get_packed_size(&b->base);
            uint8_t *dst = fl_buf_reserve(&o->buf, ps);
            protobuf_c_message_pack(&b->base, dst);
            o->buf.len += ps;
            if (rec) {
                fl_buf_put_u8(&o->buf, FL_TAG_BUCKET_RECORDS);
                fl_buf_put_uvarint(&o->buf, b->records.len);
                fl_rpc_out_attach(o, &datas[i][k]);
            }
        }
        fl_free(blen[i]);
    }
    fl_free(blen);
    fl_free(tlen);
}

/* Reads one bucket: into data, or — offset below the local log and held
 * remotely — the remote fetch info into *remote. A read that lost a race
 * with the deletion of the segments it wanted tries the remote log again. */
static int fl_fetch_bucket(fl_replica_t *r, int64_t offset, size_t limit, fl_buf_t *data,
                           fl_remote_fetch_pb_t **remote, fl_error_t *err) {
    if (offset < fl_replica_log_start(r) && (*remote = fl_tablet_remote_fetch(r, offset)))
        return 0;
    int rc = 0;
    if (limit > 0)
        rc = fl_replica_read(r, offset, limit, data, err);
    else if (offset < fl_replica_log_start(r) || offset > fl_replica_log_end(r))
        rc = fl_replica_read(r, offset, 1, data, err);
    if (rc == FLUSS_ERR_LOG_OFFSET_OUT_OF_RANGE_EXCEPTION && offset < fl_replica_log_start(r) &&
        (*remote = fl_tablet_remote_fetch(r, offset))) {
        fl_err_clear(err);
        rc = 0;
    }
    return rc;
}

#define FL_STATS_COLUMNS_MAX 256

/* Statistics the server computed at append for a batch without them. */
static bool fl_sidecar_lookup(void *ctx, const fl_batch_view_t *b, fl_buf_t *out) {
    return fl_replica_get_stats(ctx, b->base_offset, b->crc, out);
}

/* Builds the whole fetch answer — spliced into rout when set (on the
 * connection's loop), else copied into frame when that is set — and
 * returns the record bytes, or SIZE_MAX when a bucket failed or is
 * answered from remote storage (answered at once, never parked). With
 * watch set, records the buckets for parking. */
static size_t fl_fetch_build(fl_tablet_server_t *ts, fl_req_ctx_t *ctx,
                             const Fluss__FetchLogRequest *req, int32_t request_id, fl_buf_t *frame, fl_rpc_out_t *rout,
                             fl_fetch_watch_t *watch, bool to_v0, bool *progress) {
    bool failed = false;
    size_t nt = req->n_tables_req, total = 0;
    size_t request_max = req->max_bytes > 0 ? (size_t)req->max_bytes : 0;
    Fluss__PbFetchLogRespForTable *tables = fl_calloc(nt ? nt : 1, sizeof(*tables));
    Fluss__PbFetchLogRespForTable **table_ptrs = fl_calloc(nt ? nt : 1, sizeof(*table_ptrs));
    Fluss__PbFetchLogRespForBucket **blocks = fl_calloc(nt ? nt : 1, sizeof(*blocks));
    Fluss__PbFetchLogRespForBucket ***block_ptrs = fl_calloc(nt ? nt : 1, sizeof(*block_ptrs));
    fl_buf_t **datas = fl_calloc(nt ? nt : 1, sizeof(*datas));
    fl_remote_fetch_pb_t ***remotes = fl_calloc(nt ? nt : 1, sizeof(*remotes));
    char **messages = NULL;
    size_t message_count = 0;
    if (watch) {
        size_t all = 0;
        for (size_t i = 0; i < nt; i++) all += req->tables_req[i]->n_buckets_req;
        watch->replicas = fl_calloc(all ? all : 1, sizeof(*watch->replicas));
        watch->base_bytes = fl_calloc(all ? all : 1, sizeof(*watch->base_bytes));
        watch->keys = fl_calloc(all ? all : 1, sizeof(*watch->keys));
    }
    for (size_t i = 0; i < nt; i++) {
        const Fluss__PbFetchLogReqForTable *tr = req->tables_req[i];
        Fluss__PbFetchLogRespForTable t = FLUSS__PB_FETCH_LOG_RESP_FOR_TABLE__INIT;
        t.table_id = tr->table_id;
        size_t nb = tr->n_buckets_req;
        fl_hosted_table_t *table = fl_tablet_catalog_table(ts->catalog, tr->table_id);
        /* READ on the table, or every bucket of it answers the denial */
        fl_error_t auth_err;
        int auth_rc = fl_ts_authorize_bucket(ctx, FL_ACL_OP_READ, tr->table_id, &auth_err);
        fl_error_t proj_err;
        fl_err_clear(&proj_err);
        int proj_rc = tr->projection_pushdown_enabled ? fl_proj_prepare(table, tr, &proj_err) : 0;
        /* filter pushdown: against the schema the filter names */
        fl_filter_node_t filter_tree;
        const fl_filter_node_t *filter = NULL;
        int32_t filter_sid = tr->has_filter_schema_id ? tr->filter_schema_id
                                                      : (table ? table->schema_id : 0);
        if (tr->filter_predicate && table && filter_sid >= 1 &&
            (size_t)filter_sid <= table->schema_count && table->schema_ok[filter_sid - 1]) {
            fl_filter_from_wire(tr->filter_predicate, &table->schemas[filter_sid - 1],
                                &filter_tree);
            filter = &filter_tree;
        }
        blocks[i] = fl_calloc(nb ? nb : 1, sizeof(Fluss__PbFetchLogRespForBucket));
        block_ptrs[i] = fl_calloc(nb ? nb : 1, sizeof(Fluss__PbFetchLogRespForBucket *));
        datas[i] = fl_calloc(nb ? nb : 1, sizeof(fl_buf_t));
        remotes[i] = fl_calloc(nb ? nb : 1, sizeof(fl_remote_fetch_pb_t *));
        for (size_t k = 0; k < nb; k++) {
            const Fluss__PbFetchLogReqForBucket *br = tr->buckets_req[k];
            Fluss__PbFetchLogRespForBucket b = FLUSS__PB_FETCH_LOG_RESP_FOR_BUCKET__INIT;
            b.bucket_id = br->bucket_id;
            b.has_partition_id = br->has_partition_id;
            b.partition_id = br->partition_id;
            fl_error_t err;
            fl_err_clear(&err);
            fl_replica_t *r = NULL;
            int rc = auth_rc ? fl_err_set(&err, auth_rc, "%s", auth_err.msg)
                             : fl_tablet_server_replica(ts, tr->table_id, table,
                                                        br->has_partition_id, br->partition_id,
                                                        br->bucket_id, &r, &err);
            if (!rc && proj_rc) rc = fl_err_set(&err, proj_rc, "%s", proj_err.msg);
            fl_buf_t *data = &datas[i][k];
            int64_t hw = 0, start = 0;
            if (!rc) {
                /* read the offsets first: data read below never passes this HW */
                uint64_t hw_bytes = atomic_load(&r->hw_bytes);
                hw = fl_replica_high_watermark(r);
                start = fl_replica_earliest(r); /* remote storage included */
                int64_t offset = br->fetch_offset == FL_OFFSET_EARLIEST ? start : br->fetch_offset;
                size_t bucket_max = br->max_fetch_bytes > 0 ? (size_t)br->max_fetch_bytes : 0;
                size_t left = request_max > total ? request_max - total : 0;
                size_t limit = bucket_max < left ? bucket_max : left;
                /* at least one batch per answer (never an empty answer
                 * because of a small limit) */
                if (limit == 0 && total == 0) limit = 1;
                rc = fl_fetch_bucket(r, offset, limit, data, &remotes[i][k], &err);
                if (remotes[i][k]) failed = true; /* answered now: the client reads remotely */
                int64_t filtered_end = -1;
                if (!rc && data->len > 0 &&
                    (filter || (to_v0 && fl_records_have_new_layout(data->data, data->len)))) {
                    fl_buf_t kept;
                    fl_buf_init(&kept);
                    rc = fl_fetch_filter(data->data, data->len, filter, filter_sid, to_v0,
                                         table->stats_columns ? fl_sidecar_lookup : NULL, r,
                                         &kept, &filtered_end, &err);
                    fl_buf_free(data);
                    *data = kept;
                }
                if (!rc && filtered_end >= 0) {
                    b.has_filtered_end_offset = 1;
                    b.filtered_end_offset = filtered_end;
                    if (progress) *progress = true;
                }
                if (!rc && tr->projection_pushdown_enabled && data->len > 0) {
                    fl_buf_t projected;
                    fl_buf_init(&projected);
                    fl_projection_t p = {tr->projected_fields, tr->n_projected_fields,
                                         fl_proj_positions};
                    rc = fl_record_project(data->data, data->len, &p, fl_proj_schema_types,
                                           table, &projected, &err);
                    fl_buf_free(data);
                    *data = projected;
                }
                if (!rc && watch) {
                    watch->replicas[watch->count] = r;
                    watch->base_bytes[watch->count++] = hw_bytes;
                    watch->keys[watch->key_count++] =
                        (fl_bucket_key_t){r->table_id, r->partition_id, r->bucket};
                    r = NULL; /* the watch holds the reference */
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
                b.high_watermark = hw;
                b.has_log_start_offset = 1;
                b.log_start_offset = start;
                if (remotes[i][k]) {
                    b.remote_log_fetch_info = &remotes[i][k]->info;
                } else {
                    b.has_records = 1;
                    b.records.data = data->data;
                    b.records.len = data->len;
                    total += data->len;
                }
            }
            fl_replica_unref(r);
            blocks[i][k] = b;
            block_ptrs[i][k] = &blocks[i][k];
        }
        if (filter) fl_filter_node_clear(&filter_tree);
        fl_hosted_table_unref(table);
        t.n_buckets_resp = nb;
        t.buckets_resp = block_ptrs[i];
        tables[i] = t;
        table_ptrs[i] = &tables[i];
    }
    Fluss__FetchLogResponse resp = FLUSS__FETCH_LOG_RESPONSE__INIT;
    resp.n_tables_resp = nt;
    resp.tables_resp = table_ptrs;
    if (rout) fl_fetch_reply_spliced(rout, request_id, &resp, datas);
    else if (frame) fl_server_reply(frame, request_id, &resp.base);
    for (size_t i = 0; i < nt; i++) {
        for (size_t k = 0; k < req->tables_req[i]->n_buckets_req; k++) {
            fl_buf_free(&datas[i][k]);
            fl_remote_fetch_pb_free(remotes[i][k]);
        }
        fl_free(remotes[i]);
        fl_free(datas[i]);
        fl_free(blocks[i]);
        fl_free(block_ptrs[i]);
    }
    for (size_t i = 0; i < message_count; i++) fl_free(messages[i]);
    fl_free(messages);
    fl_free(datas);
    fl_free(remotes);
    fl_free(blocks);
    fl_free(block_ptrs);
    fl_free(tables);
    fl_free(table_ptrs);
    return failed ? SIZE_MAX : total;
}

/* Batches go out as magic 0 unless the client reads main's layout. */
static bool fl_fetch_to_v0(const fl_rpc_conn_t *conn) {
    return !conn || !(fl_rpc_conn_flags(conn) & FL_CONN_READS_STATISTICS);
}

typedef struct fl_fetch_op {
    fl_delayed_op_t op; /* first: the purgatory's view */
    fl_tablet_server_t *ts;
    fl_req_ctx_t *req;
    fl_fetch_watch_t watch;
    uint64_t min_bytes;
} fl_fetch_op_t;

/* New bytes below the high watermarks since parking (atomics only). */
static bool fl_fetch_try_complete(fl_delayed_op_t *op, const fl_bucket_key_t *key) {
    (void)key;
    fl_fetch_op_t *f = (fl_fetch_op_t *)op;
    uint64_t got = 0;
    for (size_t i = 0; i < f->watch.count; i++) {
        uint64_t now = atomic_load(&f->watch.replicas[i]->hw_bytes);
        if (now > f->watch.base_bytes[i]) got += now - f->watch.base_bytes[i];
    }
    return got >= f->min_bytes;
}

/* On the connection's loop: read and answer. */
static void fl_fetch_answer_task(void *arg) {
    fl_fetch_op_t *f = arg;
    if (fl_rpc_conn_is_open(f->req->conn)) {
        fl_rpc_out_t o;
        fl_rpc_out_init(&o);
        fl_fetch_build(f->ts, f->req, (const Fluss__FetchLogRequest *)f->req->body,
                       f->req->request_id,
                       NULL, &o, NULL, fl_fetch_to_v0(f->req->conn), NULL);
        fl_rpc_conn_send_out(f->req->conn, &o); /* on its loop: no copy */
        fl_rpc_out_free(&o);
    }
    fl_fetch_watch_free(&f->watch);
    fl_req_free(f->req);
    fl_free(f);
}

static void fl_fetch_on_complete(fl_delayed_op_t *op, bool expired) {
    (void)expired;
    fl_fetch_op_t *f = (fl_fetch_op_t *)op;
    if (!fl_rpc_conn_is_open(f->req->conn)) {
        fl_fetch_watch_free(&f->watch);
        fl_req_free(f->req);
        fl_free(f);
        return;
    }
    fl_rpc_loop_post(fl_rpc_conn_loop(f->req->conn), fl_fetch_answer_task, f);
}

static const fl_delayed_ops_t fl_fetch_ops = {fl_fetch_try_complete, fl_fetch_on_complete};

static int fl_fetch_park(fl_req_ctx_t *ctx, fl_tablet_server_t *ts, fl_fetch_watch_t *watch,
                         size_t missing, int32_t wait);

FL_API_HANDLER(fl_api_fetch_log) {
    (void)err;
    int32_t rid = ctx->request_id;
    const Fluss__FetchLogRequest *req = (const Fluss__FetchLogRequest *)m;
    fl_tablet_server_t *ts = ctx->ts;
    /* a follower's fetch (server_log_follower.c): only another tablet
     * server, on the internal side; on a client listener it is refused
     * (clients send -1; 0.9.1 serves it as a follower's, which lets a
     * client move the high watermark and read past it) */
    if (req->follower_server_id >= 0) {
        if (ctx->role->internal) return fl_fetch_log_follower(ctx, req, out);
        fl_server_reply_error(out, rid, FLUSS_ERR_AUTHORIZATION_EXCEPTION,
                              "A FETCH_LOG with a follower_server_id is an inter-server request: "
                              "not served on a client listener.");
        return 0;
    }
    size_t min = req->has_min_bytes && req->min_bytes > 0 ? (size_t)req->min_bytes : 1;
    int32_t wait = req->has_max_wait_ms ? req->max_wait_ms : 0;
    if (wait > FL_FETCH_WAIT_MAX_MS) wait = FL_FETCH_WAIT_MAX_MS;
    bool may_park = wait > 0 && ctx->conn && ts->purgatory &&
                    fl_purgatory_size(ts->purgatory) < FL_PARKED_FETCHES_MAX;
    bool spliced = ctx->rout && out == &ctx->rout->buf;
    size_t mark = out->len, mark_ext = spliced ? ctx->rout->ext_count : 0;
    fl_fetch_watch_t watch = {0};
    bool progress = false;
    size_t got = fl_fetch_build(ts, ctx, req, rid, out, spliced ? ctx->rout : NULL,
                                may_park ? &watch : NULL, fl_fetch_to_v0(ctx->conn), &progress);
    /* a filtered_end_offset moves the reader on: answer it at once */
    if (got >= min || !may_park || progress) {
        fl_fetch_watch_free(&watch);
        return 0;
    }
    /* park: take the answer back and wait for data or the deadline */
    if (spliced) fl_rpc_out_truncate(ctx->rout, mark, mark_ext);
    else out->len = mark;
    return fl_fetch_park(ctx, ts, &watch, min - got, wait);
}

/* Parks a fetch that found `got` < min bytes until min more arrive. */
static int fl_fetch_park(fl_req_ctx_t *ctx, fl_tablet_server_t *ts, fl_fetch_watch_t *watch,
                         size_t missing, int32_t wait) {
    fl_fetch_op_t *f = fl_calloc(1, sizeof(*f));
    f->op.ops = &fl_fetch_ops;
    f->op.deadline_ms = fl_time_mono_ms() + wait;
    f->ts = ts;
    f->min_bytes = missing;
    f->watch = *watch;
    f->req = fl_req_defer(ctx);
    fl_purgatory_watch(ts->purgatory, &f->op, f->watch.keys, f->watch.key_count);
    return 0;
}

/* ---- PRODUCE_LOG ---- */

typedef struct fl_produce_op {
    fl_ack_wait_t wait; /* first: the purgatory sees the op through it */
    Fluss__PbProduceLogRespForBucket *resp;
    char **messages;
} fl_produce_op_t;

static void fl_produce_op_destroy(fl_ack_wait_t *w) {
    fl_produce_op_t *p = (fl_produce_op_t *)w;
    for (size_t i = 0; i < w->count; i++) fl_free(p->messages[i]);
    fl_free(p->messages);
    fl_free(p->resp);
    fl_ack_wait_release(w);
    fl_free(p);
}

/* The answer: buckets not ready get fl_ack_wait_error's code (offline
 * replica, or the deadline passed). */
static void fl_produce_reply(fl_ack_wait_t *w, int32_t rid, fl_buf_t *out) {
    fl_produce_op_t *p = (fl_produce_op_t *)w;
    Fluss__PbProduceLogRespForBucket **ptrs = fl_calloc(w->count ? w->count : 1, sizeof(*ptrs));
    for (size_t i = 0; i < w->count; i++) {
        const char *msg;
        int code = fl_ack_wait_error(w, i, "Timed out waiting for the high watermark to cover "
                                           "the appended batches.", &msg);
        if (code && !p->resp[i].has_error_code) {
            p->resp[i].has_base_offset = 0;
            p->resp[i].has_error_code = 1;
            p->resp[i].error_code = code;
            fl_free(p->messages[i]);
            p->messages[i] = fl_strdup(msg);
            p->resp[i].error_message = p->messages[i];
        }
        ptrs[i] = &p->resp[i];
    }
    Fluss__ProduceLogResponse resp = FLUSS__PRODUCE_LOG_RESPONSE__INIT;
    resp.n_buckets_resp = w->count;
    resp.buckets_resp = ptrs;
    fl_server_reply(out, rid, &resp.base);
    fl_free(ptrs);
}

static const fl_ack_wait_ops_t fl_produce_wait_ops = {fl_produce_reply, fl_produce_op_destroy};

/* What no bucket of the table may store, stricter than Fluss 0.9.1:
 * records for a primary-key table (written with PUT_KV only), and batches
 * that fail fl_record_validate (unknown schema id, records that do not
 * match their header or schema). The table-level part (t known). */
static int fl_produce_table_check(const fl_hosted_table_t *t, int *format, fl_error_t *err) {
    size_t columns;
    *format = fl_log_format_from_name(t->log_format);
    if (*format < 0 || !fl_hosted_table_schema_types(t, (int16_t)t->schema_id, &columns))
        return fl_err_set(err, FLUSS_ERR_STORAGE_EXCEPTION, "The table %s.%s cannot be read.",
                          t->database, t->name);
    if (t->has_primary_key)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "Table %s.%s has a primary key: write it with PUT_KV (an upsert "
                          "writer), not PRODUCE_LOG.",
                          t->database, t->name);
    return 0;
}

/* fluss-c beyond Fluss: for a table with table.statistics.columns, the
 * statistics of each appended batch that came without them (magic 0, the
 * Java client 0.9.1) go to its segment's sidecar, so filters skip those
 * batches too. Offsets are in the batches now (assigned in place). A
 * failure only costs the skipping: logged, never the append. */
static void fl_produce_keep_stats(const fl_hosted_table_t *t, fl_replica_t *r,
                                  const uint8_t *records, size_t len) {
    size_t pos = 0;
    fl_batch_view_t b;
    fl_error_t err;
    fl_buf_t stats;
    fl_buf_init(&stats);
    while (fl_batch_parse_next(records, len, &pos, &b, &err) == 0) {
        size_t n = 0;
        const fl_datatype_t *const *types = fl_hosted_table_schema_types(t, b.schema_id, &n);
        if (b.magic != 0 || !types || b.record_count <= 0) continue;
        int cols[FL_STATS_COLUMNS_MAX];
        size_t nc = 0;
        fl_error_t ignored; /* checked at CREATE; a renamed or dropped column just goes */
        (void)fl_schema_statistics_columns(&t->schemas[b.schema_id - 1], t->stats_columns, cols,
                                           FL_STATS_COLUMNS_MAX, &nc, &ignored);
        if (nc > FL_STATS_COLUMNS_MAX) nc = FL_STATS_COLUMNS_MAX;
        stats.len = 0;
        if (fl_stats_build(&b, types, n, cols, nc, &stats, &err) != 0) {
            FL_WARN("statistics of the batch at %lld: %s", (long long)b.base_offset, err.msg);
            continue;
        }
        if (stats.len && fl_replica_put_stats(r, b.base_offset, b.crc, stats.data, stats.len, &err))
            FL_WARN("statistics of the batch at %lld: %s", (long long)b.base_offset, err.msg);
    }
    fl_buf_free(&stats);
}

FL_API_HANDLER(fl_api_produce_log) {
    const Fluss__ProduceLogRequest *req = (const Fluss__ProduceLogRequest *)m;
    fl_tablet_server_t *ts = ctx->ts;
    int arc = fl_ts_authorize_table_id(ctx, FL_ACL_OP_WRITE, req->table_id, err);
    if (arc) return arc;
    if (req->acks != -1 && req->acks != 0 && req->acks != 1)
        return fl_err_set(err, FLUSS_ERR_INVALID_REQUIRED_ACKS, "Invalid required acks: %d",
                          req->acks);
    size_t nb = req->n_buckets_req;
    fl_produce_op_t *p = fl_calloc(1, sizeof(*p));
    fl_ack_wait_init(&p->wait, &fl_produce_wait_ops, nb);
    p->resp = fl_calloc(nb ? nb : 1, sizeof(*p->resp));
    p->messages = fl_calloc(nb ? nb : 1, sizeof(char *));
    int64_t now = fl_time_wall_ms();
    fl_hosted_table_t *table = fl_tablet_catalog_table(ts->catalog, req->table_id);
    fl_error_t table_err;
    fl_err_clear(&table_err);
    int format = 0;
    int table_rc = table ? fl_produce_table_check(table, &format, &table_err) : 0;
    fl_error_t disk_err; /* the data-disk watermark: one flag read */
    int disk_rc = fl_disk_guard_refuse(&ts->disk, &disk_err);
    for (size_t i = 0; i < nb; i++) {
        Fluss__PbProduceLogReqForBucket *br = req->buckets_req[i];
        Fluss__PbProduceLogRespForBucket b = FLUSS__PB_PRODUCE_LOG_RESP_FOR_BUCKET__INIT;
        b.bucket_id = br->bucket_id;
        b.has_partition_id = br->has_partition_id;
        b.partition_id = br->partition_id;
        fl_error_t e;
        fl_err_clear(&e);
        fl_replica_t *r = NULL;
        fl_replica_append_t res;
        int rc = disk_rc ? fl_err_set(&e, disk_rc, "%s", disk_err.msg)
                         : fl_tablet_server_replica(ts, req->table_id, table,
                                                    br->has_partition_id, br->partition_id,
                                                    br->bucket_id, &r, &e);
        if (!rc && table_rc) rc = fl_err_set(&e, table_rc, "%s", table_err.msg);
        if (!rc && br->records.len == 0) {
            /* no batch at all: nothing to append, answered as the
             * reference answers it (success, no offset) */
            b.has_base_offset = 1;
            b.base_offset = -1;
            fl_replica_unref(r);
            p->resp[i] = b;
            continue;
        }
        if (!rc)
            rc = fl_record_validate(br->records.data, br->records.len, (fl_log_format_t)format,
                                    fl_proj_schema_types, table, &e);
        if (!rc && req->acks == -1) rc = fl_replica_check_acks_all(r, &e);
        if (!rc) rc = fl_replica_append(r, br->records.data, br->records.len, now, &res, &e);
        if (!rc && !res.duplicate && table && table->stats_columns && format == FL_LOG_FORMAT_ARROW)
            fl_produce_keep_stats(table, r, br->records.data, br->records.len);
        if (rc) {
            b.has_error_code = 1;
            b.error_code = fl_server_wire_code(rc);
            p->messages[i] = fl_strdup(e.msg);
            b.error_message = p->messages[i];
            fl_replica_unref(r);
        } else {
            b.has_base_offset = 1;
            b.base_offset = res.base_offset;
            fl_ack_wait_bucket(&p->wait, i, r, req->acks == -1 ? res.end_offset : 0,
                               res.durable_wait_offset);
        }
        p->resp[i] = b;
    }
    fl_hosted_table_unref(table);
    fl_ack_wait_finish(&p->wait, ctx, ts->purgatory, req->timeout_ms, out);
    return 0;
}

/* ---- LIST_OFFSETS ---- */

FL_API_HANDLER(fl_api_list_offsets) {
    int32_t rid = ctx->request_id;
    (void)err;
    const Fluss__ListOffsetsRequest *req = (const Fluss__ListOffsetsRequest *)m;
    size_t nb = req->n_bucket_id;
    Fluss__PbListOffsetsRespForBucket *bs = fl_calloc(nb ? nb : 1, sizeof(*bs));
    Fluss__PbListOffsetsRespForBucket **ptrs = fl_calloc(nb ? nb : 1, sizeof(*ptrs));
    char **messages = fl_calloc(nb ? nb : 1, sizeof(char *));
    int64_t now = fl_time_wall_ms();
    fl_hosted_table_t *table = fl_tablet_catalog_table(ctx->ts->catalog, req->table_id);
    for (size_t i = 0; i < nb; i++) {
        Fluss__PbListOffsetsRespForBucket b = FLUSS__PB_LIST_OFFSETS_RESP_FOR_BUCKET__INIT;
        b.bucket_id = req->bucket_id[i];
        fl_error_t e;
        fl_err_clear(&e);
        fl_replica_t *r = NULL;
        int rc = fl_tablet_server_replica(ctx->ts, req->table_id, table, req->has_partition_id,
                                          req->partition_id, req->bucket_id[i], &r, &e);
        int64_t offset = 0;
        if (!rc) {
            switch (req->offset_type) {
            case FL_OFFSETS_EARLIEST: /* for clients, remote storage included */
                offset = req->follower_server_id >= 0 ? fl_replica_log_start(r)
                                                      : fl_replica_earliest(r);
                break;
            case FL_OFFSETS_LATEST: /* what readers can see */
                offset = fl_replica_high_watermark(r);
                break;
            case FL_OFFSETS_LEO:
                offset = fl_replica_log_end(r);
                break;
            case FL_OFFSETS_TIMESTAMP:
                if (!req->has_starttimestamp) {
                    rc = fl_err_set(&e, FLUSS_ERR_INVALID_TIMESTAMP_EXCEPTION,
                                    "A timestamp offset request needs startTimestamp.");
                } else if (req->starttimestamp > now) {
                    rc = fl_err_set(&e, FLUSS_ERR_INVALID_TIMESTAMP_EXCEPTION,
                                    "Invalid timestamp %lld: it is later than the current time %lld.",
                                    (long long)req->starttimestamp, (long long)now);
                } else if (!r->remote || fl_remote_log_offset_for_time(
                                             r->remote, req->starttimestamp, &offset, &e) != 0) {
                    /* remote storage first: it holds the older records */
                    offset = fl_replica_offset_for_time(r, req->starttimestamp, &e);
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
        fl_replica_unref(r);
        bs[i] = b;
        ptrs[i] = &bs[i];
    }
    fl_hosted_table_unref(table);
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
