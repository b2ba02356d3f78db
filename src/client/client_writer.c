/*
 * client_writer.c — libfluss's append writer for log tables (fluss.h
 * fluss_append_writer_*): Fluss's RecordAccumulator + Sender +
 * IdempotenceManager in one thread. Rows go to a bucket (bucket-key hash
 * or sticky), into that bucket's open Arrow batch (record_builder.h); a
 * batch closes at batch_bytes or after linger_ms and waits in the ready
 * queue; ready batches go out in PRODUCE_LOG requests (one batch per
 * bucket per request) pipelined up to max_inflight per tablet server; a
 * retriable failure sends the same bytes (same writer id and batch
 * sequence) again, after the bucket's other in-flight batches came back,
 * so the server's sequence check keeps the order (protocol.md §4.7).
 *
 * In kv mode (the upsert writer, client_upsert.c) the same machinery
 * carries KvRecordBatches (record_kv.h) in PUT_KV requests: a bucket's
 * open batch is a KvRecordBatch builder, the request names the target
 * columns of a partial update, and the answer has no base offset.
 *
 * Thread rule: no thread of its own; everything happens inside _append,
 * _flush and _poll on the caller's thread (the ack callback too). One
 * user at a time.
 *
 * A lingering batch whose server has no free in-flight slot stays open
 * (it keeps filling up to batch_bytes) instead of queueing behind the
 * full pipeline: with linger_ms 0 that is Kafka's "send as soon as the
 * sender can", batching whatever arrives while the pipeline is full.
 *
 * Limits: buffer_memory_max bounds open batches + ready + in-flight
 * bytes; FL_WRITER_REQUEST_BYTES_MAX one request; FL_WRITER_RETRIES_MAX
 * sends of one batch.
 */
#include <assert.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client_partition.h"
#include "client_table.h"
#include "common_alloc.h"
#include "common_time.h"
#include "fluss_api.pb-c.h"
#include "proto_api.h"
#include "record_builder.h"
#include "record_kv.h"

#define FL_WRITER_REQUEST_BYTES_MAX (8u * 1024 * 1024)
#define FL_WRITER_RETRIES_MAX 10
#define FL_WRITER_RETRY_BACKOFF_MS 100
#define FL_WRITER_INFLIGHT_MAX 64
#define FL_WRITER_LINGER_CHECK_ROWS 256

typedef struct fl_wbatch {
    struct fl_wbatch *next;
    int32_t slot;      /* its (partition, bucket) in the writer */
    int32_t bucket;
    int64_t partition_id; /* -1: none */
    int32_t sequence;
    int64_t rows;
    size_t raw_bytes;
    int64_t opened_us; /* the batch's first row was appended (monotonic) */
    fl_buf_t bytes; /* the whole V0 batch */
    int attempts;
    int64_t not_before_ms;
} fl_wbatch_t;

/* A bucket of the table, or of one of its partitions. */
typedef struct fl_wbucket {
    int32_t part;                /* index in the writer's partition cache */
    int32_t bucket;
    fl_record_builder_t builder; /* log mode */
    fl_kv_batch_builder_t kvb;   /* kv mode */
    bool open;
    int64_t opened_ms;
    int64_t opened_us;
    int32_t next_sequence;
    int inflight;
    bool blocked; /* a batch is being retried: send nothing else until inflight is 0 */
} fl_wbucket_t;

typedef struct fl_winflight {
    bool used;
    int node;
    int32_t request_id;
    int64_t sent_us;
    size_t count;
    fl_wbatch_t **batches;
} fl_winflight_t;

typedef struct fl_wconn {
    fl_client_conn_t conn;
    int inflight;
} fl_wconn_t;

struct fluss_append_writer {
    fluss_table_t *t;
    fluss_append_writer_options_t o;
    int64_t writer_id;
    fl_parts_t parts;         /* the partitions written to (one pseudo partition if none) */
    fl_wbucket_t **slots;     /* slot = part * bucket_count + bucket */
    size_t slot_count;
    int32_t *sticky;          /* per partition: the bucket rows without a bucket key go to */
    fl_buf_t pname;           /* a row's partition name */
    fl_record_builder_options_t bo;
    fl_wconn_t *conns;
    fl_wbatch_t *ready;
    fl_winflight_t *inflight;
    size_t inflight_cap;
    size_t inflight_count;
    size_t memory;
    int64_t rows_since_linger_check;
    fl_error_t failed;
    int64_t rows_acked;
    int64_t bytes_acked;
    fl_buf_t key;
    fluss_append_ack_cb ack_cb;
    void *ack_opaque;
    bool kv;              /* PUT_KV of KvRecordBatches */
    int32_t *targets;     /* kv: target columns of a partial update */
    size_t n_targets;
};

static size_t fl_wbucket_size(const fluss_append_writer_t *w, const fl_wbucket_t *wb) {
    return w->kv ? fl_kv_batch_builder_size(&wb->kvb) : fl_record_builder_size(&wb->builder);
}

static int64_t fl_wbucket_rows(const fluss_append_writer_t *w, const fl_wbucket_t *wb) {
    return w->kv ? fl_kv_batch_builder_count(&wb->kvb) : fl_record_builder_rows(&wb->builder);
}

/* The node leading a slot's bucket, -1 none. */
static int32_t fl_slot_leader(const fluss_append_writer_t *w, int32_t slot) {
    const fl_wbucket_t *wb = w->slots[slot];
    return fl_parts_leader(&w->parts, (size_t)wb->part, wb->bucket);
}

/* Makes the slots of partition index part exist (new buckets' batches
 * empty). */
static void fl_writer_grow(fluss_append_writer_t *w, size_t part) {
    size_t nb = (size_t)w->t->bucket_count;
    size_t need = (part + 1) * nb;
    if (need <= w->slot_count) return;
    w->slots = fl_realloc(w->slots, need * sizeof(*w->slots));
    w->sticky = fl_realloc(w->sticky, (part + 1) * sizeof(int32_t));
    for (size_t s = w->slot_count; s < need; s++) {
        fl_wbucket_t *wb = fl_calloc(1, sizeof(*wb));
        wb->part = (int32_t)(s / nb);
        wb->bucket = (int32_t)(s % nb);
        if (w->kv) fl_kv_batch_builder_init(&wb->kvb, (int16_t)w->t->schema_id, -1, -1);
        else {
            fl_record_builder_init(&wb->builder, &w->t->desc.schema, &w->bo);
            /* nested cells hold values encoded with rows in the kv format (client_nested_text.c) */
            fl_record_builder_set_nested(&wb->builder, w->t->kv_format);
        }
        w->slots[s] = wb;
        if (wb->bucket == 0)
            w->sticky[wb->part] = (int32_t)((uint64_t)fl_time_mono_ms() % (uint64_t)nb);
    }
    w->slot_count = need;
}

bool fl_client_retriable(int code) {
    switch (code) {
    case FLUSS_ERR_NETWORK_EXCEPTION:
    case FLUSS_ERR_NOT_LEADER_OR_FOLLOWER:
    case FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION:
    case FLUSS_ERR_REQUEST_TIME_OUT:
    case FLUSS_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND_EXCEPTION:
    case FLUSS_ERR_NOT_ENOUGH_REPLICAS_EXCEPTION:
    case FLUSS_ERR_LEADER_NOT_AVAILABLE_EXCEPTION:
    case FLUSS_ERR_STORAGE_BACKPRESSURE_EXCEPTION:
    case FLUSS_ERR__TRANSPORT:
    case FLUSS_ERR__TIMED_OUT: return true;
    default: return false;
    }
}

static void fl_wbatch_free(fl_wbatch_t *b) {
    fl_buf_free(&b->bytes);
    fl_free(b);
}

static void fl_writer_fail(fluss_append_writer_t *w, const fl_error_t *err) {
    if (w->failed.code == 0) w->failed = *err;
}

static void fl_writer_failf(fluss_append_writer_t *w, int code, const char *fmt, int32_t bucket,
                            const char *msg) {
    if (w->failed.code != 0) return;
    fl_err_set(&w->failed, code, fmt, bucket, msg);
}

/* ---- ready queue ---- */

static void fl_ready_push_tail(fluss_append_writer_t *w, fl_wbatch_t *b) {
    b->next = NULL;
    fl_wbatch_t **p = &w->ready;
    while (*p) p = &(*p)->next;
    *p = b;
}

/* Puts a batch to retry back in sequence order: after the last queued
 * batch of its bucket with a lower sequence, else first. */
static void fl_ready_requeue(fluss_append_writer_t *w, fl_wbatch_t *b) {
    fl_wbatch_t **pos = &w->ready;
    for (fl_wbatch_t **p = &w->ready; *p; p = &(*p)->next)
        if ((*p)->slot == b->slot && (*p)->sequence < b->sequence) pos = &(*p)->next;
    b->next = *pos;
    *pos = b;
}

static void fl_writer_retry(fluss_append_writer_t *w, fl_wbatch_t *b, const fl_error_t *why) {
    w->slots[b->slot]->blocked = true;
    if (++b->attempts > FL_WRITER_RETRIES_MAX) {
        fl_error_t e;
        fl_err_set(&e, why->code, "bucket %d: gave up after %d attempts: %s", b->bucket,
                   b->attempts, why->msg);
        fl_writer_fail(w, &e);
    }
    b->not_before_ms = fl_time_mono_ms() + FL_WRITER_RETRY_BACKOFF_MS;
    fl_ready_requeue(w, b);
}

/* ---- closing batches ---- */

static int fl_writer_close_bucket(fluss_append_writer_t *w, int32_t slot) {
    fl_wbucket_t *wb = w->slots[slot];
    if (!wb->open) return 0;
    fl_wbatch_t *b = fl_calloc(1, sizeof(*b));
    fl_buf_init(&b->bytes);
    b->slot = slot;
    b->bucket = wb->bucket;
    b->partition_id = w->parts.items[wb->part].id;
    b->rows = fl_wbucket_rows(w, wb);
    b->raw_bytes = fl_wbucket_size(w, wb);
    b->opened_us = wb->opened_us;
    b->sequence = w->writer_id >= 0 ? wb->next_sequence : -1;
    fl_error_t err;
    fl_err_clear(&err);
    int rc = 0;
    if (w->kv) {
        fl_kv_batch_builder_finish(&wb->kvb, &b->bytes);
        fl_kv_batch_set_writer_state(b->bytes.data, b->bytes.len, w->writer_id, b->sequence);
        w->memory -= b->raw_bytes;
    } else {
        rc = fl_record_builder_finish(&wb->builder, w->writer_id, b->sequence, &b->bytes, &err);
        w->memory -= fl_record_builder_size(&wb->builder);
        fl_record_builder_clear(&wb->builder);
    }
    wb->open = false;
    if (rc) {
        fl_wbatch_free(b);
        fl_writer_fail(w, &err);
        return rc;
    }
    if (w->writer_id >= 0) wb->next_sequence = wb->next_sequence == INT32_MAX ? 0 : wb->next_sequence + 1;
    w->memory += b->bytes.len;
    fl_ready_push_tail(w, b);
    if (w->t->bucket_key_count == 0 && wb->bucket == w->sticky[wb->part])
        w->sticky[wb->part] = (wb->bucket + 1) % w->t->bucket_count;
    return 0;
}

/* Closes the open batches older than linger_ms whose leader has a free
 * in-flight slot (the others keep filling until one is free). */
static void fl_writer_close_lingering(fluss_append_writer_t *w, int64_t now) {
    for (size_t i = 0; i < w->slot_count; i++) {
        if (!w->slots[i]->open || now - w->slots[i]->opened_ms < w->o.linger_ms) continue;
        int32_t node = fl_slot_leader(w, (int32_t)i);
        if (node >= 0 && w->conns[node].inflight >= w->o.max_inflight) continue;
        fl_writer_close_bucket(w, (int32_t)i);
    }
}

/* Milliseconds until the oldest open batch reaches linger_ms, or -1. */
static int64_t fl_writer_linger_due(const fluss_append_writer_t *w, int64_t now) {
    int64_t due = -1;
    for (size_t i = 0; i < w->slot_count; i++) {
        if (!w->slots[i]->open) continue;
        int64_t left = w->slots[i]->opened_ms + w->o.linger_ms - now;
        if (left < 0) left = 0;
        if (due < 0 || left < due) due = left;
    }
    return due;
}

/* ---- sending ---- */

static fl_winflight_t *fl_inflight_slot(fluss_append_writer_t *w) {
    for (size_t i = 0; i < w->inflight_cap; i++)
        if (!w->inflight[i].used) return &w->inflight[i];
    return NULL;
}

/* Everything in flight on node is lost (transport failure or timeout):
 * those batches are retried. */
static void fl_writer_node_lost(fluss_append_writer_t *w, int node, const fl_error_t *why) {
    fl_client_conn_close(&w->conns[node].conn);
    for (size_t i = 0; i < w->inflight_cap; i++) {
        fl_winflight_t *f = &w->inflight[i];
        if (!f->used || f->node != node) continue;
        for (size_t k = 0; k < f->count; k++) {
            w->slots[f->batches[k]->slot]->inflight--;
            fl_writer_retry(w, f->batches[k], why);
        }
        fl_free(f->batches);
        memset(f, 0, sizeof(*f));
        w->inflight_count--;
    }
    w->conns[node].inflight = 0;
}

/* Sends a PUT_KV request with batches picked[0..n) (kv mode). */
static int fl_writer_send_put_kv(fluss_append_writer_t *w, fl_wconn_t *c, fl_wbatch_t **picked,
                                 size_t n, int32_t *rid, fl_error_t *err) {
    Fluss__PbPutKvReqForBucket *reqs = fl_calloc(n, sizeof(*reqs));
    Fluss__PbPutKvReqForBucket **ptrs = fl_calloc(n, sizeof(*ptrs));
    for (size_t k = 0; k < n; k++) {
        fluss__pb_put_kv_req_for_bucket__init(&reqs[k]);
        reqs[k].has_partition_id = picked[k]->partition_id >= 0;
        reqs[k].partition_id = picked[k]->partition_id;
        reqs[k].bucket_id = picked[k]->bucket;
        reqs[k].records.data = picked[k]->bytes.data;
        reqs[k].records.len = picked[k]->bytes.len;
        ptrs[k] = &reqs[k];
    }
    Fluss__PutKvRequest req = FLUSS__PUT_KV_REQUEST__INIT;
    req.acks = w->o.acks;
    req.table_id = w->t->table_id;
    req.timeout_ms = w->o.request_timeout_ms;
    req.n_target_columns = w->n_targets;
    req.target_columns = w->targets;
    req.n_buckets_req = n;
    req.buckets_req = ptrs;
    int rc = fl_client_conn_send(&c->conn, FL_API_PUT_KV, &req.base, rid, err);
    fl_free(reqs);
    fl_free(ptrs);
    return rc;
}

/* Sends one request to node with the first due batch of every unblocked
 * bucket it leads. Returns 1 when something was sent, 0 if nothing to
 * send, or an error. */
static int fl_writer_send_node(fluss_append_writer_t *w, int node, int64_t now) {
    fl_wconn_t *c = &w->conns[node];
    if (c->inflight >= w->o.max_inflight) return 0;
    fl_wbatch_t *picked[256];
    size_t n = 0, bytes = 0;
    for (fl_wbatch_t **p = &w->ready; *p && n < 256;) {
        fl_wbatch_t *b = *p;
        fl_wbucket_t *wb = w->slots[b->slot];
        bool dup = false;
        for (size_t k = 0; k < n; k++) dup |= picked[k]->slot == b->slot;
        bool ok = !dup && fl_slot_leader(w, b->slot) == node && b->not_before_ms <= now &&
                  !(wb->blocked && wb->inflight > 0) &&
                  (n == 0 || bytes + b->bytes.len <= FL_WRITER_REQUEST_BYTES_MAX);
        if (!ok) {
            p = &b->next;
            continue;
        }
        *p = b->next;
        picked[n++] = b;
        bytes += b->bytes.len;
    }
    if (n == 0) return 0;
    fl_error_t err;
    fl_err_clear(&err);
    int rc = 0;
    if (c->conn.fd < 0) rc = fl_table_connect_node(w->t, node, &c->conn, &err);
    int32_t rid = -1;
    int64_t sent_us = fl_time_mono_us(); /* before the write: a big frame's write waits for the reader */
    if (!rc && w->kv) {
        rc = fl_writer_send_put_kv(w, c, picked, n, &rid, &err);
    } else if (!rc) {
        Fluss__PbProduceLogReqForBucket *reqs = fl_calloc(n, sizeof(*reqs));
        Fluss__PbProduceLogReqForBucket **ptrs = fl_calloc(n, sizeof(*ptrs));
        for (size_t k = 0; k < n; k++) {
            fluss__pb_produce_log_req_for_bucket__init(&reqs[k]);
            reqs[k].has_partition_id = picked[k]->partition_id >= 0;
            reqs[k].partition_id = picked[k]->partition_id;
            reqs[k].bucket_id = picked[k]->bucket;
            reqs[k].records.data = picked[k]->bytes.data;
            reqs[k].records.len = picked[k]->bytes.len;
            ptrs[k] = &reqs[k];
        }
        Fluss__ProduceLogRequest req = FLUSS__PRODUCE_LOG_REQUEST__INIT;
        req.acks = w->o.acks;
        req.table_id = w->t->table_id;
        req.timeout_ms = w->o.request_timeout_ms;
        req.n_buckets_req = n;
        req.buckets_req = ptrs;
        rc = fl_client_conn_send(&c->conn, FL_API_PRODUCE_LOG, &req.base, &rid, &err);
        fl_free(reqs);
        fl_free(ptrs);
    }
    if (rc) {
        /* not sent: retry the batches (a fresh connection next time) */
        for (size_t k = n; k-- > 0;) fl_writer_retry(w, picked[k], &err);
        if (c->conn.fd >= 0) fl_client_conn_close(&c->conn);
        if (!fl_client_retriable(rc)) fl_writer_fail(w, &err);
        return 0;
    }
    fl_winflight_t *f = fl_inflight_slot(w);
    if (!f) abort(); /* cannot happen: max_inflight per node × nodes = inflight_cap */
    f->used = true;
    f->node = node;
    f->request_id = rid;
    f->sent_us = sent_us;
    f->count = n;
    f->batches = fl_malloc(n * sizeof(fl_wbatch_t *));
    memcpy(f->batches, picked, n * sizeof(fl_wbatch_t *));
    for (size_t k = 0; k < n; k++) w->slots[picked[k]->slot]->inflight++;
    c->inflight++;
    w->inflight_count++;
    return 1;
}

static void fl_writer_send_ready(fluss_append_writer_t *w) {
    if (w->failed.code) return;
    int64_t now = fl_time_mono_ms();
    /* batches of leaderless buckets cannot go anywhere */
    for (fl_wbatch_t *b = w->ready; b; b = b->next)
        if (fl_slot_leader(w, b->slot) < 0) {
            fl_writer_failf(w, FLUSS_ERR_LEADER_NOT_AVAILABLE_EXCEPTION, "bucket %d%s has no leader",
                            b->bucket, b->partition_id >= 0 ? " of a partition" : "");
            return;
        }
    for (size_t node = 0; node < w->t->node_count; node++)
        while (w->ready && fl_writer_send_node(w, (int)node, now) == 1) {}
}

/* ---- acknowledgements ---- */

static void fl_writer_report(fluss_append_writer_t *w, const fl_wbatch_t *b, int64_t sent_us,
                             int64_t now_us, int64_t base_offset, int code) {
    if (!w->ack_cb) return;
    fluss_append_ack_t a;
    a.bucket = b->bucket;
    a.partition_id = b->partition_id;
    a.base_offset = base_offset;
    a.rows = b->rows;
    a.bytes = (int64_t)b->raw_bytes;
    a.wire_bytes = (int64_t)b->bytes.len;
    a.request_us = now_us - sent_us;
    a.batch_us = now_us - b->opened_us;
    a.error_code = code;
    w->ack_cb(w->ack_opaque, &a);
}

/* The answer of one bucket in a PRODUCE_LOG or PUT_KV response: its error
 * (into e) and base offset (-1 for PUT_KV, which answers the log end). */
static void fl_writer_bucket_answer(const fluss_append_writer_t *w, const ProtobufCMessage *m,
                                    const fl_wbatch_t *b, fl_error_t *e, int64_t *base_offset) {
    int32_t bucket = b->bucket;
    bool found = false, has_code = false;
    int32_t code = 0;
    const char *msg = NULL;
    if (w->kv) {
        const Fluss__PutKvResponse *resp = (const Fluss__PutKvResponse *)m;
        for (size_t j = 0; resp && j < resp->n_buckets_resp; j++) {
            const Fluss__PbPutKvRespForBucket *br = resp->buckets_resp[j];
            if (br->bucket_id != bucket || (br->has_partition_id ? br->partition_id : -1) != b->partition_id)
                continue;
            found = true;
            has_code = br->has_error_code;
            code = br->error_code;
            msg = br->error_message;
        }
    } else {
        const Fluss__ProduceLogResponse *resp = (const Fluss__ProduceLogResponse *)m;
        for (size_t j = 0; resp && j < resp->n_buckets_resp; j++) {
            const Fluss__PbProduceLogRespForBucket *br = resp->buckets_resp[j];
            if (br->bucket_id != bucket || (br->has_partition_id ? br->partition_id : -1) != b->partition_id)
                continue;
            found = true;
            has_code = br->has_error_code;
            code = br->error_code;
            msg = br->error_message;
            if (br->has_base_offset) *base_offset = br->base_offset;
        }
    }
    if (!found)
        fl_err_set(e, FLUSS_ERR__CORRUPT, "%s did not answer bucket %d",
                   w->kv ? "PUT_KV" : "PRODUCE_LOG", bucket);
    else if (has_code && code != 0 && code != FLUSS_ERR_DUPLICATE_SEQUENCE_EXCEPTION)
        fl_err_set(e, code, "bucket %d: %s", bucket, msg ? msg : fl_err_default_message(code));
    if (e->code) *base_offset = -1;
}

static void fl_writer_complete(fluss_append_writer_t *w, fl_winflight_t *f,
                               const ProtobufCMessage *resp, const fl_error_t *req_err) {
    int64_t now_us = w->ack_cb ? fl_time_mono_us() : 0;
    w->conns[f->node].inflight--;
    for (size_t k = 0; k < f->count; k++) {
        fl_wbatch_t *b = f->batches[k];
        fl_wbucket_t *wb = w->slots[b->slot];
        wb->inflight--;
        fl_error_t e;
        fl_err_clear(&e);
        int64_t base_offset = -1;
        if (req_err) e = *req_err;
        else fl_writer_bucket_answer(w, resp, b, &e, &base_offset);
        if (e.code == 0) {
            w->rows_acked += b->rows;
            w->bytes_acked += (int64_t)b->raw_bytes;
            w->memory -= b->bytes.len;
            fl_writer_report(w, b, f->sent_us, now_us, base_offset, 0);
            fl_wbatch_free(b);
        } else if (fl_client_retriable(e.code) ||
                   (e.code == FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION && wb->blocked)) {
            fl_writer_retry(w, b, &e);
        } else {
            w->memory -= b->bytes.len;
            fl_writer_report(w, b, f->sent_us, now_us, -1, e.code);
            fl_wbatch_free(b);
            fl_writer_fail(w, &e);
        }
        if (wb->inflight == 0) wb->blocked = false;
    }
    fl_free(f->batches);
    memset(f, 0, sizeof(*f));
    w->inflight_count--;
}

/* Reads one response from node (waiting until deadline). */
static void fl_writer_recv_node(fluss_append_writer_t *w, int node, int64_t deadline) {
    fl_wconn_t *c = &w->conns[node];
    fl_error_t err;
    fl_err_clear(&err);
    int32_t rid;
    ProtobufCMessage *resp = NULL;
    int rc = fl_client_conn_recv(&c->conn, deadline,
                                 w->kv ? &fluss__put_kv_response__descriptor
                                       : &fluss__produce_log_response__descriptor,
                                 &rid, &resp, &err);
    if (c->conn.fd < 0 || rc == FLUSS_ERR__TIMED_OUT) {
        fl_writer_node_lost(w, node, &err);
        return;
    }
    fl_winflight_t *f = NULL;
    for (size_t i = 0; i < w->inflight_cap; i++)
        if (w->inflight[i].used && w->inflight[i].node == node && w->inflight[i].request_id == rid)
            f = &w->inflight[i];
    if (!f) {
        if (resp) protobuf_c_message_free_unpacked(resp, NULL);
        fl_err_set(&err, FLUSS_ERR__CORRUPT, "answer to unknown request %d", rid);
        fl_writer_node_lost(w, node, &err);
        return;
    }
    fl_writer_complete(w, f, resp, rc ? &err : NULL);
    if (resp) protobuf_c_message_free_unpacked(resp, NULL);
}

/* The descriptors of the connections with requests in flight (up to 64),
 * with their node indexes. */
static size_t fl_writer_poll_set(const fluss_append_writer_t *w, struct pollfd *fds, int *nodes) {
    size_t n = 0;
    for (size_t i = 0; i < w->t->node_count && n < 64; i++)
        if (w->conns[i].inflight > 0 && w->conns[i].conn.fd >= 0) {
            fds[n].fd = w->conns[i].conn.fd;
            fds[n].events = POLLIN;
            fds[n].revents = 0;
            nodes[n++] = (int)i;
        }
    return n;
}

/* Handles every response that is already there; with wait, blocks for
 * at least one (up to the request timeout). */
static void fl_writer_poll(fluss_append_writer_t *w, bool wait) {
    struct pollfd fds[64];
    int nodes[64];
    for (;;) {
        size_t n = fl_writer_poll_set(w, fds, nodes);
        if (n == 0) return;
        int timeout = wait ? w->o.request_timeout_ms : 0;
        /* answers TLS decrypted already: poll(2) cannot see them */
        for (size_t i = 0; i < n; i++)
            if (fl_client_conn_buffered(&w->conns[nodes[i]].conn)) timeout = 0;
        int rc = poll(fds, n, timeout);
        for (size_t i = 0; i < n; i++)
            if (fl_client_conn_buffered(&w->conns[nodes[i]].conn)) {
                fds[i].revents |= POLLIN;
                if (rc == 0) rc = 1;
            }
        if (rc < 0) continue;
        if (rc == 0) {
            if (!wait) return;
            fl_error_t err;
            fl_err_set(&err, FLUSS_ERR__TIMED_OUT, "no %s answer within %d ms",
                       w->kv ? "PUT_KV" : "PRODUCE_LOG", w->o.request_timeout_ms);
            for (size_t i = 0; i < n; i++) fl_writer_node_lost(w, nodes[i], &err);
            return;
        }
        for (size_t i = 0; i < n; i++)
            if (fds[i].revents)
                fl_writer_recv_node(w, nodes[i], fl_time_mono_ms() + w->o.request_timeout_ms);
        wait = false;
    }
}

/* Earliest not_before of a queued batch, or -1. */
static int64_t fl_writer_next_due(const fluss_append_writer_t *w) {
    int64_t due = -1;
    for (fl_wbatch_t *b = w->ready; b; b = b->next)
        if (due < 0 || b->not_before_ms < due) due = b->not_before_ms;
    return due;
}

static void fl_sleep_ms(int64_t ms) {
    if (ms <= 0) return;
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* One step of progress when the writer must make room or drain: send,
 * then wait for an answer or for a retry to come due. */
static void fl_writer_step(fluss_append_writer_t *w) {
    fl_writer_send_ready(w);
    if (w->inflight_count > 0) {
        fl_writer_poll(w, true);
    } else if (w->ready && !w->failed.code) {
        int64_t due = fl_writer_next_due(w);
        fl_sleep_ms(due - fl_time_mono_ms());
    }
}

/* ---- public ---- */

static int fl_init_writer(fluss_append_writer_t *w, fl_error_t *err) {
    int node = -1;
    for (int32_t b = 0; b < w->t->bucket_count && node < 0; b++) node = w->t->leader_node[b];
    if (node < 0) node = 0;
    fl_client_conn_t *c = &w->conns[node].conn;
    int rc = fl_table_connect_node(w->t, node, c, err);
    if (rc) return rc;
    Fluss__PbTablePath path = FLUSS__PB_TABLE_PATH__INIT;
    path.database_name = w->t->database;
    path.table_name = w->t->name;
    Fluss__PbTablePath *paths[1] = {&path};
    Fluss__InitWriterRequest req = FLUSS__INIT_WRITER_REQUEST__INIT;
    req.n_table_path = 1;
    req.table_path = paths;
    Fluss__InitWriterResponse *resp = NULL;
    rc = fl_client_conn_call(c, FL_API_INIT_WRITER, &req.base,
                             &fluss__init_writer_response__descriptor, (ProtobufCMessage **)&resp,
                             err);
    if (rc) return rc;
    w->writer_id = resp->writer_id;
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return 0;
}

/* FLUSS_ERR__INVALID_ARG when the table's batches cannot be written yet. */
static int fl_writer_check_table(const fluss_table_t *t, bool kv, fl_error_t *err) {
    if (kv != (t->pk_count > 0))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "%s.%s %s; use %s", t->database, t->name,
                          kv ? "has no primary key" : "has a primary key",
                          kv ? "an append writer" : "an upsert writer");
    if (kv) return 0;
    if (!t->arrow_format)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "%s.%s: only the ARROW log format can be written yet", t->database,
                          t->name);
    return fl_record_builder_check_schema(&t->desc.schema, err);
}

int fl_writer_open(fluss_table_t *t, const fluss_append_writer_options_t *opts, bool kv,
                   const int32_t *targets, size_t n_targets, fluss_append_writer_t **out,
                   fl_error_t *err) {
    int rc = fl_writer_check_table(t, kv, err);
    if (rc) return rc;
    if (t->node_count == 0)
        return fl_err_set(err, FLUSS_ERR_LEADER_NOT_AVAILABLE_EXCEPTION,
                          "the cluster has no tablet server");
    fluss_append_writer_t *w = fl_calloc(1, sizeof(*w));
    w->t = t;
    w->kv = kv;
    if (n_targets > 0) {
        w->targets = fl_malloc(n_targets * sizeof(int32_t));
        memcpy(w->targets, targets, n_targets * sizeof(int32_t));
        w->n_targets = n_targets;
    }
    if (opts) w->o = *opts;
    else w->o.linger_ms = -1, w->o.idempotent = -1;
    if (w->o.batch_bytes == 0) w->o.batch_bytes = 1024 * 1024;
    if (w->o.linger_ms < 0) w->o.linger_ms = 100;
    if (w->o.buffer_memory_max == 0) w->o.buffer_memory_max = 64u * 1024 * 1024;
    if (w->o.max_inflight <= 0) w->o.max_inflight = 5;
    if (w->o.max_inflight > FL_WRITER_INFLIGHT_MAX) w->o.max_inflight = FL_WRITER_INFLIGHT_MAX;
    if (w->o.acks == 0) w->o.acks = -1;
    if (w->o.request_timeout_ms <= 0) w->o.request_timeout_ms = t->timeout_ms;
    w->bo = (fl_record_builder_options_t){t->schema_id, t->codec, t->zstd_level};
    fl_parts_init(&w->parts, t);
    if (w->parts.count) fl_writer_grow(w, 0);
    fl_buf_init(&w->pname);
    w->conns = fl_calloc(t->node_count, sizeof(fl_wconn_t));
    for (size_t i = 0; i < t->node_count; i++) w->conns[i].conn.fd = -1;
    w->inflight_cap = t->node_count * (size_t)w->o.max_inflight;
    w->inflight = fl_calloc(w->inflight_cap, sizeof(fl_winflight_t));
    w->writer_id = -1;
    fl_buf_init(&w->key);
    if (w->o.idempotent != 0 && (rc = fl_init_writer(w, err))) {
        fluss_append_writer_destroy(w);
        return rc;
    }
    *out = w;
    return 0;
}

int fluss_append_writer_new(fluss_table_t *t, const fluss_append_writer_options_t *opts,
                            fluss_append_writer_t **out, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    int rc = fl_writer_open(t, opts, false, NULL, 0, out, &err);
    return rc ? fl_client_error_out(e, &err) : 0;
}

/* Opens a slot's batch if it is not open (the first row's time). */
static fl_wbucket_t *fl_writer_open_bucket(fluss_append_writer_t *w, int32_t slot) {
    fl_wbucket_t *wb = w->slots[slot];
    if (!wb->open) {
        wb->open = true;
        wb->opened_us = fl_time_mono_us();
        wb->opened_ms = wb->opened_us / 1000;
    }
    return wb;
}

/* After a row went into bucket's open batch (now `after` bytes): closes
 * full and lingering batches, sends, and blocks while over the memory
 * budget. Returns the writer's first error. */
static int fl_writer_added(fluss_append_writer_t *w, int32_t slot, size_t after) {
    if (after >= w->o.batch_bytes) fl_writer_close_bucket(w, slot);
    if (++w->rows_since_linger_check >= FL_WRITER_LINGER_CHECK_ROWS) {
        w->rows_since_linger_check = 0;
        fl_writer_close_lingering(w, fl_time_mono_ms());
    }
    if (w->ready) fl_writer_send_ready(w);
    if (w->inflight_count) fl_writer_poll(w, false);
    while (w->memory > w->o.buffer_memory_max && !w->failed.code) {
        if (!w->ready && w->inflight_count == 0) {
            int32_t big = -1;
            for (size_t b = 0; b < w->slot_count; b++)
                if (w->slots[b]->open &&
                    (big < 0 || fl_wbucket_size(w, w->slots[b]) > fl_wbucket_size(w, w->slots[big])))
                    big = (int32_t)b;
            if (big < 0) break;
            fl_writer_close_bucket(w, big);
        }
        fl_writer_step(w);
    }
    return w->failed.code;
}

int fl_writer_route(fluss_append_writer_t *w, const fl_row_t *row, size_t *part,
                    fl_error_t *err) {
    const fluss_table_t *t = w->t;
    if (t->part_count == 0) {
        *part = 0;
        return 0;
    }
    int rc = fl_partition_name_of_row(t->types, row, t->part_cols, t->part_count, &w->pname, err);
    if (!rc)
        rc = fl_parts_by_name(&w->parts, (const char *)w->pname.data, w->o.dynamic_partitions >= 0,
                              part, err);
    if (!rc) fl_writer_grow(w, *part);
    return rc;
}

int fl_writer_put_kv(fluss_append_writer_t *w, size_t part, int32_t bucket, const uint8_t *key,
                     size_t key_len, const uint8_t *value, size_t value_len, fl_error_t *err) {
    assert(w->kv && bucket >= 0 && bucket < w->t->bucket_count && part < w->parts.count);
    if (w->failed.code) {
        *err = w->failed;
        return err->code;
    }
    int32_t slot = (int32_t)(part * (size_t)w->t->bucket_count) + bucket;
    /* an empty builder already holds the batch header: the first row of a
     * batch counts it, so what closing the batch takes off adds up */
    size_t before = w->slots[slot]->open ? fl_kv_batch_builder_size(&w->slots[slot]->kvb) : 0;
    fl_wbucket_t *wb = fl_writer_open_bucket(w, slot);
    fl_kv_batch_builder_add(&wb->kvb, key, key_len, value, value_len);
    size_t after = fl_kv_batch_builder_size(&wb->kvb);
    w->memory += after - before;
    if (fl_writer_added(w, slot, after)) {
        *err = w->failed;
        return err->code;
    }
    return 0;
}

int fluss_append_writer_append(fluss_append_writer_t *w, const fluss_row_t *row,
                               fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    if (w->failed.code) return fl_client_error_out(e, &w->failed);
    if (row->t != w->t && row->row.column_count != w->t->desc.schema.column_count) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "the row is of another table");
        return fl_client_error_out(e, &err);
    }
    for (size_t i = 0; i < row->row.column_count; i++)
        if (row->row.cells[i].is_null && !fl_table_type(w->t, i)->nullable) {
            fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "column %s is NOT NULL but has no value",
                       w->t->desc.schema.columns[i].name);
            return fl_client_error_out(e, &err);
        }
    if (w->kv) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "an upsert writer does not append");
        return fl_client_error_out(e, &err);
    }
    size_t part = 0;
    if (fl_writer_route(w, &row->row, &part, &err)) return fl_client_error_out(e, &err);
    int32_t bucket = w->sticky[part];
    if (w->t->bucket_key_count > 0 && fl_row_bucket(row, &w->key, &bucket, &err))
        return fl_client_error_out(e, &err);
    int32_t slot = (int32_t)(part * (size_t)w->t->bucket_count) + bucket;
    fl_wbucket_t *wb = fl_writer_open_bucket(w, slot);
    size_t before = fl_record_builder_size(&wb->builder);
    fl_record_builder_append(&wb->builder, &row->row);
    size_t after = fl_record_builder_size(&wb->builder);
    w->memory += after - before;
    if (fl_writer_added(w, slot, after)) return fl_client_error_out(e, &w->failed);
    return 0;
}

int fluss_append_writer_flush(fluss_append_writer_t *w, fluss_error_t *e) {
    for (size_t b = 0; b < w->slot_count && !w->failed.code; b++)
        fl_writer_close_bucket(w, (int32_t)b);
    while ((w->ready || w->inflight_count) && !w->failed.code) fl_writer_step(w);
    /* a failure still waits for what is in flight, so nothing is lost silently */
    while (w->inflight_count) fl_writer_poll(w, true);
    if (w->failed.code) return fl_client_error_out(e, &w->failed);
    return 0;
}

void fluss_append_writer_set_ack_callback(fluss_append_writer_t *w, fluss_append_ack_cb cb,
                                          void *opaque) {
    w->ack_cb = cb;
    w->ack_opaque = opaque;
}

/* Waits up to timeout_ms for answers on the connections with requests in
 * flight and handles every one that came; a quiet wait is not a timeout
 * of the requests (those expire in fl_writer_poll's wait). */
static void fl_writer_wait_answers(fluss_append_writer_t *w, int timeout_ms) {
    struct pollfd fds[64];
    int nodes[64];
    size_t n = fl_writer_poll_set(w, fds, nodes);
    if (n == 0) return;
    bool buffered = false;
    for (size_t i = 0; i < n; i++) buffered |= fl_client_conn_buffered(&w->conns[nodes[i]].conn);
    if (!buffered && poll(fds, n, timeout_ms) <= 0) return;
    for (size_t i = 0; i < n; i++)
        if (fds[i].revents)
            fl_writer_recv_node(w, nodes[i], fl_time_mono_ms() + w->o.request_timeout_ms);
    fl_writer_poll(w, false);
}

int fluss_append_writer_poll(fluss_append_writer_t *w, int timeout_ms, fluss_error_t *e) {
    if (timeout_ms < 0) timeout_ms = 0;
    int64_t now = fl_time_mono_ms();
    int64_t end = now + timeout_ms;
    for (;;) {
        if (w->failed.code) return fl_client_error_out(e, &w->failed);
        fl_writer_close_lingering(w, now);
        fl_writer_send_ready(w);
        if (w->inflight_count) fl_writer_poll(w, false);
        fl_writer_close_lingering(w, fl_time_mono_ms());
        fl_writer_send_ready(w);
        now = fl_time_mono_ms();
        int64_t left = end - now;
        if (left <= 0) break;
        if (w->inflight_count) {
            fl_writer_wait_answers(w, (int)left);
            now = fl_time_mono_ms();
            continue;
        }
        /* nothing in flight: sleep until a batch lingers long enough or a retry is due */
        int64_t wake = fl_writer_linger_due(w, now);
        int64_t due = fl_writer_next_due(w);
        if (due >= 0 && (wake < 0 || due - now < wake)) wake = due - now < 0 ? 0 : due - now;
        if (wake < 0 || wake > left) wake = left;
        fl_sleep_ms(wake);
        now = fl_time_mono_ms();
        if (wake == left) {
            fl_writer_close_lingering(w, now);
            fl_writer_send_ready(w);
            break;
        }
    }
    if (w->failed.code) return fl_client_error_out(e, &w->failed);
    return 0;
}

void fluss_append_writer_stats(const fluss_append_writer_t *w, int64_t *rows_acked,
                               int64_t *bytes_acked) {
    if (rows_acked) *rows_acked = w->rows_acked;
    if (bytes_acked) *bytes_acked = w->bytes_acked;
}

void fluss_append_writer_destroy(fluss_append_writer_t *w) {
    if (!w) return;
    while (w->ready) {
        fl_wbatch_t *b = w->ready;
        w->ready = b->next;
        fl_wbatch_free(b);
    }
    for (size_t i = 0; i < w->inflight_cap; i++) {
        fl_winflight_t *f = &w->inflight[i];
        if (!f->used) continue;
        for (size_t k = 0; k < f->count; k++) fl_wbatch_free(f->batches[k]);
        fl_free(f->batches);
    }
    fl_free(w->inflight);
    for (size_t i = 0; i < w->t->node_count; i++) fl_client_conn_close(&w->conns[i].conn);
    fl_free(w->conns);
    for (size_t b = 0; b < w->slot_count; b++) {
        if (w->kv) fl_kv_batch_builder_free(&w->slots[b]->kvb);
        else fl_record_builder_free(&w->slots[b]->builder);
        fl_free(w->slots[b]);
    }
    fl_free(w->slots);
    fl_free(w->sticky);
    fl_parts_free(&w->parts);
    fl_buf_free(&w->pname);
    fl_free(w->targets);
    fl_buf_free(&w->key);
    fl_free(w);
}
