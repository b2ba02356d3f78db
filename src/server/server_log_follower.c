/*
 * server_log_follower.c — a leader's answer to its followers' FETCH_LOG
 * (follower_server_id set, on the internal side): whole batches from the
 * follower's fetch offset up to the log end (not the high watermark), no
 * projection and no filter, with the leader's high watermark. Each fetch
 * tells the replica how far that follower got (replica_replication.h),
 * which is what moves the ISR and the high watermark; the follower's
 * offset is its log end, so a fetch at offset N says it holds everything
 * before N.
 *
 * A fetch that finds nothing new parks until a bucket's log end passes
 * the offset it asked for, or max_wait_ms: a quiet bucket costs no loop,
 * and a new batch reaches the followers as soon as it is appended.
 */
#include <string.h>

#include "common_alloc.h"
#include "common_time.h"
#include "replica_purgatory.h"
#include "replica_replication.h"
#include "server_node.h"
#include "server_tablet.h"

#define FL_FOLLOWER_WAIT_MAX_MS 5000
#define FL_FOLLOWER_PARKED_MAX 4096

typedef struct fl_follower_fetch {
    fl_delayed_op_t op; /* first: the purgatory's view */
    fl_tablet_server_t *ts;
    fl_req_ctx_t *req;
    size_t count;
    fl_replica_t **replicas; /* referenced */
    int64_t *offsets;        /* what each bucket was fetched from */
    fl_bucket_key_t *keys;
} fl_follower_fetch_t;

static void fl_follower_fetch_free(fl_follower_fetch_t *f) {
    for (size_t i = 0; i < f->count; i++) fl_replica_unref(f->replicas[i]);
    fl_free(f->replicas);
    fl_free(f->offsets);
    fl_free(f->keys);
    if (f->req) fl_req_free(f->req);
    fl_free(f);
}

/* The answer to req; *records: bytes read. The fetches are reported to
 * the replicas first, so the high watermark answered includes them. */
static void fl_follower_build(fl_tablet_server_t *ts, const Fluss__FetchLogRequest *req,
                              Fluss__FetchLogResponse *resp, size_t *records) {
    int32_t follower = req->follower_server_id;
    size_t left = req->max_bytes > 0 ? (size_t)req->max_bytes : (16u << 20);
    int64_t now = fl_time_mono_ms();
    *records = 0;
    resp->n_tables_resp = req->n_tables_req;
    resp->tables_resp = fl_calloc(req->n_tables_req ? req->n_tables_req : 1,
                                  sizeof(*resp->tables_resp));
    for (size_t t = 0; t < req->n_tables_req; t++) {
        const Fluss__PbFetchLogReqForTable *tr = req->tables_req[t];
        Fluss__PbFetchLogRespForTable *rt = fl_calloc(1, sizeof(*rt));
        fluss__pb_fetch_log_resp_for_table__init(rt);
        rt->table_id = tr->table_id;
        rt->n_buckets_resp = tr->n_buckets_req;
        rt->buckets_resp = fl_calloc(tr->n_buckets_req ? tr->n_buckets_req : 1,
                                     sizeof(*rt->buckets_resp));
        resp->tables_resp[t] = rt;
        fl_hosted_table_t *table = fl_tablet_catalog_table(ts->catalog, tr->table_id);
        for (size_t k = 0; k < tr->n_buckets_req; k++) {
            const Fluss__PbFetchLogReqForBucket *br = tr->buckets_req[k];
            Fluss__PbFetchLogRespForBucket *b = fl_calloc(1, sizeof(*b));
            fluss__pb_fetch_log_resp_for_bucket__init(b);
            rt->buckets_resp[k] = b;
            b->has_partition_id = br->has_partition_id;
            b->partition_id = br->partition_id;
            b->bucket_id = br->bucket_id;
            fl_error_t e;
            fl_err_clear(&e);
            fl_replica_t *r = NULL;
            int rc = fl_tablet_server_replica(ts, tr->table_id, table, br->has_partition_id,
                                              br->partition_id, br->bucket_id, &r, &e);
            fl_buf_t data;
            fl_buf_init(&data);
            if (!rc) {
                fl_replica_follower_fetched(r, follower, br->fetch_offset, now);
                size_t cap = br->max_fetch_bytes > 0 ? (size_t)br->max_fetch_bytes : left;
                if (cap > left) cap = left;
                if (cap > 0) rc = fl_replica_read_to_end(r, br->fetch_offset, cap, &data, &e);
            }
            if (rc) {
                b->has_error_code = 1;
                b->error_code = fl_server_wire_code(rc);
                b->error_message = fl_strdup(e.msg);
                fl_buf_free(&data);
                if (r) {
                    /* where this log begins: a follower that fell below
                     * it (tiered away meanwhile) starts again there */
                    b->has_log_start_offset = 1;
                    b->log_start_offset = fl_replica_log_start(r);
                }
            } else {
                b->has_high_watermark = 1;
                b->high_watermark = fl_replica_high_watermark(r);
                b->has_log_start_offset = 1;
                b->log_start_offset = fl_replica_log_start(r);
                if (data.len) {
                    b->has_records = 1;
                    b->records.data = data.data; /* owned: freed with the answer */
                    b->records.len = data.len;
                    left = data.len < left ? left - data.len : 0;
                    *records += data.len;
                } else {
                    fl_buf_free(&data);
                }
            }
            fl_replica_unref(r);
        }
        fl_hosted_table_unref(table);
    }
}

static void fl_follower_resp_free(Fluss__FetchLogResponse *resp) {
    for (size_t t = 0; t < resp->n_tables_resp; t++) {
        Fluss__PbFetchLogRespForTable *rt = resp->tables_resp[t];
        for (size_t k = 0; k < rt->n_buckets_resp; k++) {
            Fluss__PbFetchLogRespForBucket *b = rt->buckets_resp[k];
            fl_free(b->error_message);
            if (b->has_records) fl_free(b->records.data);
            fl_free(b);
        }
        fl_free(rt->buckets_resp);
        fl_free(rt);
    }
    fl_free(resp->tables_resp);
}

/* A bucket's log end passed the offset it was fetched from (atomics). */
static bool fl_follower_try_complete(fl_delayed_op_t *op, const fl_bucket_key_t *key) {
    (void)key;
    fl_follower_fetch_t *f = (fl_follower_fetch_t *)op;
    for (size_t i = 0; i < f->count; i++)
        if (fl_replica_log_end(f->replicas[i]) > f->offsets[i]) return true;
    return false;
}

/* On the connection's loop: read and answer (not on the appending thread
 * that completed the wait). */
static void fl_follower_answer_task(void *arg) {
    fl_follower_fetch_t *f = arg;
    if (fl_rpc_conn_is_open(f->req->conn)) {
        Fluss__FetchLogResponse resp = FLUSS__FETCH_LOG_RESPONSE__INIT;
        size_t got;
        fl_follower_build(f->ts, (const Fluss__FetchLogRequest *)f->req->body, &resp, &got);
        fl_req_answer(f->req, &resp.base);
        fl_follower_resp_free(&resp);
    }
    fl_follower_fetch_free(f);
}

static void fl_follower_on_complete(fl_delayed_op_t *op, bool expired) {
    (void)expired;
    fl_follower_fetch_t *f = (fl_follower_fetch_t *)op;
    if (!fl_rpc_conn_is_open(f->req->conn)) {
        fl_follower_fetch_free(f);
        return;
    }
    fl_rpc_loop_post(fl_rpc_conn_loop(f->req->conn), fl_follower_answer_task, f);
}

static const fl_delayed_ops_t fl_follower_ops = {fl_follower_try_complete,
                                                 fl_follower_on_complete};

/* Parks req until one of its buckets grows; false when it cannot (a
 * bucket that is not led here: answer now). */
static bool fl_follower_park(fl_req_ctx_t *ctx, fl_tablet_server_t *ts,
                             const Fluss__FetchLogRequest *req, int32_t wait) {
    size_t n = 0;
    for (size_t t = 0; t < req->n_tables_req; t++) n += req->tables_req[t]->n_buckets_req;
    if (n == 0) return false;
    fl_follower_fetch_t *f = fl_calloc(1, sizeof(*f));
    f->op.ops = &fl_follower_ops;
    f->op.deadline_ms = fl_time_mono_ms() + wait;
    f->ts = ts;
    f->replicas = fl_calloc(n, sizeof(*f->replicas));
    f->offsets = fl_calloc(n, sizeof(*f->offsets));
    f->keys = fl_calloc(n, sizeof(*f->keys));
    for (size_t t = 0; t < req->n_tables_req; t++) {
        const Fluss__PbFetchLogReqForTable *tr = req->tables_req[t];
        fl_hosted_table_t *table = fl_tablet_catalog_table(ts->catalog, tr->table_id);
        for (size_t k = 0; k < tr->n_buckets_req; k++) {
            const Fluss__PbFetchLogReqForBucket *br = tr->buckets_req[k];
            fl_error_t e;
            fl_replica_t *r = NULL;
            if (fl_tablet_server_replica(ts, tr->table_id, table, br->has_partition_id,
                                         br->partition_id, br->bucket_id, &r, &e) != 0) {
                fl_hosted_table_unref(table);
                fl_follower_fetch_free(f);
                return false;
            }
            f->replicas[f->count] = r;
            f->offsets[f->count] = br->fetch_offset;
            f->keys[f->count++] = (fl_bucket_key_t){r->table_id, r->partition_id, r->bucket};
        }
        fl_hosted_table_unref(table);
    }
    f->req = fl_req_defer(ctx);
    fl_purgatory_watch(ts->purgatory, &f->op, f->keys, f->count);
    return true;
}

int fl_fetch_log_follower(fl_req_ctx_t *ctx, const Fluss__FetchLogRequest *req, fl_buf_t *out) {
    fl_tablet_server_t *ts = ctx->ts;
    Fluss__FetchLogResponse resp = FLUSS__FETCH_LOG_RESPONSE__INIT;
    size_t got;
    fl_follower_build(ts, req, &resp, &got);
    int32_t wait = req->has_max_wait_ms ? req->max_wait_ms : 0;
    if (wait > FL_FOLLOWER_WAIT_MAX_MS) wait = FL_FOLLOWER_WAIT_MAX_MS;
    if (got == 0 && wait > 0 && ctx->conn && ts->purgatory &&
        fl_purgatory_size(ts->purgatory) < FL_FOLLOWER_PARKED_MAX &&
        fl_follower_park(ctx, ts, req, wait)) {
        fl_follower_resp_free(&resp);
        return 0;
    }
    fl_server_reply(out, ctx->request_id, &resp.base);
    fl_follower_resp_free(&resp);
    return 0;
}
