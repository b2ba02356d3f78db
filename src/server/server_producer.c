/*
 * server_producer.c — the coordinator's producer offsets APIs
 * (REGISTER/GET/DELETE_PRODUCER_OFFSETS, Fluss's CoordinatorService over
 * its ProducerOffsetsManager), the Flink sink's undo recovery. The store
 * (coordinator_producer_offsets.h) holds the semantics; here the wire.
 *
 * Errors as the reference answers them: an id that breaks TablePath's
 * rules 63 (INVALID_PRODUCER_ID_EXCEPTION), a bucket without a
 * log_end_offset -1 (the reference's getter throws and the service wraps
 * it in UnknownServerException), storage failures 26. Table ids are not
 * checked. REGISTER and DELETE write files and run on the coordinator's
 * worker; GET reads memory on the loop.
 */
#include <string.h>

#include "common_alloc.h"
#include "common_time.h"
#include "coordinator_producer_offsets.h"
#include "server_authz.h"
#include "server_coordinator.h"
#include "server_node.h"

/* The request's offsets, flattened (*out owned by the caller). */
static int fl_register_buckets(const Fluss__RegisterProducerOffsetsRequest *req,
                               fl_producer_bucket_offset_t **out, size_t *n, fl_error_t *err) {
    size_t total = 0;
    for (size_t i = 0; i < req->n_table_offsets; i++)
        total += req->table_offsets[i]->n_bucket_offsets;
    fl_producer_bucket_offset_t *b = fl_calloc(total ? total : 1, sizeof(*b));
    size_t k = 0;
    for (size_t i = 0; i < req->n_table_offsets; i++) {
        const Fluss__PbProducerTableOffsets *t = req->table_offsets[i];
        for (size_t j = 0; j < t->n_bucket_offsets; j++) {
            const Fluss__PbBucketOffset *x = t->bucket_offsets[j];
            if (!x->has_log_end_offset) {
                fl_free(b);
                return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                                  "Failed to register producer offsets for producer %s: bucket "
                                  "%d of table %lld has no log_end_offset",
                                  req->producer_id, x->bucket_id, (long long)t->table_id);
            }
            b[k++] = (fl_producer_bucket_offset_t){t->table_id, x->has_partition_id,
                                                   x->has_partition_id ? x->partition_id : 0,
                                                   x->bucket_id, x->log_end_offset};
        }
    }
    *out = b;
    *n = k;
    return 0;
}

FL_API_HANDLER(fl_api_register_producer_offsets) {
    const Fluss__RegisterProducerOffsetsRequest *req =
        (const Fluss__RegisterProducerOffsetsRequest *)m;
    fl_producer_bucket_offset_t *b = NULL;
    size_t n = 0;
    int rc = fl_register_buckets(req, &b, &n, err);
    for (size_t i = 0; i < n && !rc; i++)
        if (i == 0 || b[i].table_id != b[i - 1].table_id)
            rc = fl_cs_authorize_table_id(ctx, FL_ACL_OP_WRITE, b[i].table_id, false, err);
    if (rc) {
        fl_free(b);
        return rc;
    }
    int64_t ttl_ms = req->has_ttl_ms ? req->ttl_ms : ctx->cs->cfg.producer_offsets_ttl_ms;
    fl_producer_register_t result;
    rc = fl_producer_offsets_register(ctx->cs->producers, req->producer_id, b, n, ttl_ms,
                                      fl_time_wall_ms(), &result, err);
    fl_free(b);
    if (rc) return rc;
    Fluss__RegisterProducerOffsetsResponse resp = FLUSS__REGISTER_PRODUCER_OFFSETS_RESPONSE__INIT;
    resp.has_result = 1;
    resp.result = (int32_t)result;
    fl_server_reply(out, ctx->request_id, &resp.base);
    return 0;
}

/* The response's messages for one entry, grouped by table (the entry is
 * in table order); they point into e and free with fl_get_msgs_free. */
typedef struct fl_get_msgs {
    Fluss__PbProducerTableOffsets *t, **tp;
    Fluss__PbBucketOffset *b, **bp;
    size_t nt;
} fl_get_msgs_t;

static void fl_get_msgs_build(const fl_producer_entry_t *e, fl_get_msgs_t *g) {
    g->nt = 0;
    for (size_t i = 0; i < e->n; i++) g->nt += i == 0 || e->b[i - 1].table_id != e->b[i].table_id;
    g->t = fl_calloc(g->nt ? g->nt : 1, sizeof(*g->t));
    g->tp = fl_calloc(g->nt ? g->nt : 1, sizeof(*g->tp));
    g->b = fl_calloc(e->n ? e->n : 1, sizeof(*g->b));
    g->bp = fl_calloc(e->n ? e->n : 1, sizeof(*g->bp));
    size_t k = 0;
    for (size_t i = 0; i < e->n; i++) {
        const fl_producer_bucket_offset_t *x = &e->b[i];
        if (i == 0 || e->b[i - 1].table_id != x->table_id) {
            fluss__pb_producer_table_offsets__init(&g->t[k]);
            g->t[k].table_id = x->table_id;
            g->t[k].bucket_offsets = &g->bp[i];
            g->tp[k] = &g->t[k];
            k++;
        }
        Fluss__PbBucketOffset *y = &g->b[i];
        fluss__pb_bucket_offset__init(y);
        y->bucket_id = x->bucket;
        y->has_log_end_offset = 1;
        y->log_end_offset = x->offset;
        y->has_partition_id = x->has_partition;
        y->partition_id = x->partition_id;
        g->bp[i] = y;
        g->t[k - 1].n_bucket_offsets++;
    }
}

static void fl_get_msgs_free(fl_get_msgs_t *g) {
    fl_free(g->t);
    fl_free(g->tp);
    fl_free(g->b);
    fl_free(g->bp);
}

FL_API_HANDLER(fl_api_get_producer_offsets) {
    const Fluss__GetProducerOffsetsRequest *req = (const Fluss__GetProducerOffsetsRequest *)m;
    fl_producer_entry_t e;
    bool found;
    int rc = fl_producer_offsets_get(ctx->cs->producers, req->producer_id, fl_time_wall_ms(), &e,
                                     &found, err);
    if (rc) return rc;
    Fluss__GetProducerOffsetsResponse resp = FLUSS__GET_PRODUCER_OFFSETS_RESPONSE__INIT;
    if (!found) {
        /* no producer_id: the client's "none" */
        fl_server_reply(out, ctx->request_id, &resp.base);
        return 0;
    }
    /* only the tables the caller may READ, silently */
    if (FL_AUTHZ(ctx) && !ctx->who.trusted) {
        /* an entry's buckets come grouped by table: one check per table */
        size_t k = 0;
        bool allowed = false;
        for (size_t i = 0; i < e.n; i++) {
            fl_error_t denied;
            if (i == 0 || e.b[i].table_id != e.b[i - 1].table_id)
                allowed = fl_cs_authorize_table_id(ctx, FL_ACL_OP_READ, e.b[i].table_id, false,
                                                   &denied) == 0;
            if (allowed) e.b[k++] = e.b[i];
        }
        e.n = k;
    }
    fl_get_msgs_t g;
    fl_get_msgs_build(&e, &g);
    resp.producer_id = e.producer_id;
    resp.has_expiration_time = 1;
    resp.expiration_time = e.expiration_ms;
    resp.n_table_offsets = g.nt;
    resp.table_offsets = g.tp;
    fl_server_reply(out, ctx->request_id, &resp.base);
    fl_get_msgs_free(&g);
    fl_producer_entry_free(&e);
    return 0;
}

FL_API_HANDLER(fl_api_delete_producer_offsets) {
    const Fluss__DeleteProducerOffsetsRequest *req =
        (const Fluss__DeleteProducerOffsetsRequest *)m;
    if (FL_AUTHZ(ctx) && !ctx->who.trusted) {
        /* WRITE on every table the entry holds (none stored: no check) */
        fl_producer_entry_t e;
        bool found = false;
        int rc = fl_producer_offsets_get(ctx->cs->producers, req->producer_id, fl_time_wall_ms(),
                                         &e, &found, err);
        if (rc) return rc;
        for (size_t i = 0; found && i < e.n && !rc; i++)
            if (i == 0 || e.b[i].table_id != e.b[i - 1].table_id)
                rc = fl_cs_authorize_table_id(ctx, FL_ACL_OP_WRITE, e.b[i].table_id, false, err);
        if (found) fl_producer_entry_free(&e);
        if (rc) return rc;
    }
    int rc = fl_producer_offsets_delete(ctx->cs->producers, req->producer_id, err);
    if (rc) return rc;
    Fluss__DeleteProducerOffsetsResponse resp = FLUSS__DELETE_PRODUCER_OFFSETS_RESPONSE__INIT;
    fl_server_reply(out, ctx->request_id, &resp.base);
    return 0;
}
