/*
 * server_ackwait.c — write requests waiting for watermarks
 * (server_ackwait.h).
 */
#include "server_ackwait.h"

#include "common_alloc.h"
#include "common_time.h"

#define FL_ACK_WAIT_MAX_MS 300000

void fl_ack_wait_init(fl_ack_wait_t *w, const fl_ack_wait_ops_t *ops, size_t count) {
    size_t n = count ? count : 1;
    w->ops = ops;
    w->count = count;
    w->replicas = fl_calloc(n, sizeof(*w->replicas));
    w->hw_wait = fl_calloc(n, sizeof(int64_t));
    w->durable_wait = fl_calloc(n, sizeof(int64_t));
    w->lead_epoch = fl_calloc(n, sizeof(int32_t));
    w->keys = fl_calloc(n, sizeof(*w->keys));
}

void fl_ack_wait_bucket(fl_ack_wait_t *w, size_t i, fl_replica_t *r, int64_t hw, int64_t durable) {
    if (!hw && !durable) {
        fl_replica_unref(r);
        return;
    }
    w->replicas[i] = r;
    w->hw_wait[i] = hw;
    w->durable_wait[i] = durable;
    /* the records went in as leader (fl_replica_append refuses on a
     * follower): a replica that is a follower already was demoted since,
     * and its high watermark from another leader says nothing of them */
    int32_t epoch = atomic_load(&r->lead_epoch);
    w->lead_epoch[i] = epoch >= 0 ? epoch : INT32_MIN;
    w->keys[w->key_count++] = (fl_bucket_key_t){r->table_id, r->partition_id, r->bucket};
}

/* An acks=all wait whose replica no longer leads in the epoch that
 * appended: the high watermark it has now (a follower's, from another
 * leader) says nothing of these records. */
static bool fl_ack_wait_deposed(const fl_ack_wait_t *w, size_t i) {
    fl_replica_t *r = w->replicas[i];
    return r && w->hw_wait[i] && atomic_load(&r->lead_epoch) != w->lead_epoch[i];
}

bool fl_ack_wait_ready(const fl_ack_wait_t *w, size_t i) {
    const fl_replica_t *r = w->replicas[i];
    if (!r) return true;
    /* the watermarks first, then the leadership: a demotion is published
     * before the follower's high watermark moves */
    bool covered = fl_replica_high_watermark(r) >= w->hw_wait[i] &&
                   fl_replica_flushed(r) >= w->durable_wait[i];
    return covered && !fl_ack_wait_deposed(w, i);
}

/* Not ready and never will be: the replica is offline (fail-stop), so
 * its watermarks stay where the failure left them; or deposed. */
static bool fl_ack_wait_failed(const fl_ack_wait_t *w, size_t i) {
    return w->replicas[i] && !fl_ack_wait_ready(w, i) &&
           (fl_replica_offline(w->replicas[i]) || fl_ack_wait_deposed(w, i));
}

int fl_ack_wait_error(const fl_ack_wait_t *w, size_t i, const char *timeout_msg, const char **msg) {
    if (fl_ack_wait_ready(w, i)) return 0;
    if (fl_ack_wait_deposed(w, i)) {
        *msg = "This server stopped leading the bucket in the epoch that appended these "
               "records before they were replicated: they are not acknowledged.";
        return FLUSS_ERR_NOT_LEADER_OR_FOLLOWER;
    }
    if (fl_ack_wait_failed(w, i)) {
        *msg = "The log of this bucket went offline after a failed write or fsync before these "
               "records were covered: they are not acknowledged (the server must restart).";
        return FLUSS_ERR_LOG_STORAGE_EXCEPTION;
    }
    *msg = timeout_msg;
    return FLUSS_ERR_REQUEST_TIME_OUT;
}

static bool fl_ack_wait_try_complete(fl_delayed_op_t *op, const fl_bucket_key_t *key) {
    (void)key;
    fl_ack_wait_t *w = (fl_ack_wait_t *)op;
    for (size_t i = 0; i < w->count; i++)
        if (!fl_ack_wait_ready(w, i) && !fl_ack_wait_failed(w, i)) return false;
    return true;
}

static void fl_ack_wait_on_complete(fl_delayed_op_t *op, bool expired) {
    (void)expired;
    fl_ack_wait_t *w = (fl_ack_wait_t *)op;
    fl_buf_t frame;
    fl_buf_init(&frame);
    w->ops->reply(w, w->req->request_id, &frame);
    fl_req_answer_frames(w->req, &frame); /* thread-safe: copied to the conn's loop */
    fl_buf_free(&frame);
    w->ops->destroy(w);
}

static const fl_delayed_ops_t fl_ack_wait_delayed = {fl_ack_wait_try_complete,
                                                     fl_ack_wait_on_complete};

void fl_ack_wait_finish(fl_ack_wait_t *w, fl_req_ctx_t *ctx, fl_purgatory_t *purgatory,
                        int32_t timeout_ms, fl_buf_t *out) {
    if (fl_ack_wait_try_complete(&w->op, NULL) || !ctx->conn || !purgatory) {
        w->ops->reply(w, ctx->request_id, out);
        w->ops->destroy(w);
        return;
    }
    int32_t timeout = timeout_ms > 0 ? timeout_ms : 30000;
    if (timeout > FL_ACK_WAIT_MAX_MS) timeout = FL_ACK_WAIT_MAX_MS;
    w->op.ops = &fl_ack_wait_delayed;
    w->op.deadline_ms = fl_time_mono_ms() + timeout;
    w->req = fl_req_defer(ctx);
    fl_purgatory_watch(purgatory, &w->op, w->keys, w->key_count);
}

void fl_ack_wait_release(fl_ack_wait_t *w) {
    for (size_t i = 0; i < w->count; i++) fl_replica_unref(w->replicas[i]);
    fl_free(w->replicas);
    fl_free(w->hw_wait);
    fl_free(w->durable_wait);
    fl_free(w->lead_epoch);
    fl_free(w->keys);
    if (w->req) fl_req_free(w->req);
}
