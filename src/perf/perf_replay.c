/*
 * perf_replay.c — fluss-perf's replay producers (`produce --replay`): to
 * measure the server and not the client, each thread builds ONE real
 * PRODUCE_LOG request (a batch of --batch-bytes of rows, the table's log
 * compression, no writer id) and sends it again and again over its own
 * connection to the leader of its bucket, keeping --max-inflight requests
 * in flight (pipelined), as Kafka's ProducerPerformance does with a fixed
 * payload. The server appends every copy (offsets are assigned in its own
 * buffer). Counts rows, bytes and request latency per answer; an answer
 * with an error stops the thread.
 *
 * It uses libfluss's internals (the table's leaders, the pipelined
 * connection, the batch builder) because the public writer would spend the
 * client CPU this mode exists to avoid.
 *
 * Thread rule: one replay producer per thread; it shares only the atomics
 * of fl_perf_stats_t.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client_conn.h"
#include "client_table.h"
#include "fluss_api.pb-c.h"
#include "perf_int.h"
#include "proto_api.h"
#include "record_builder.h"

#define FL_PERF_REPLAY_INFLIGHT_MAX 256

static uint64_t fl_replay_rand(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* One batch of rows "id, ts, payload[...]" of about batch_bytes. */
static int fl_replay_build(const fl_perf_producer_t *p, fluss_table_t *t, fl_buf_t *out,
                           int64_t *rows, int64_t *raw_bytes, fl_error_t *err) {
    const fl_perf_opts_t *o = p->o;
    int col_id = fluss_table_column_index(t, "id"), col_ts = fluss_table_column_index(t, "ts");
    int cols[FL_PERF_COLUMNS_MAX], n = 0;
    for (int k = 0; k < FL_PERF_COLUMNS_MAX; k++) {
        char name[32];
        fl_perf_payload_name(k, name, sizeof(name));
        int c = fluss_table_column_index(t, name);
        if (c < 0) break;
        cols[n++] = c;
    }
    if (col_id < 0 || col_ts < 0 || n == 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "table %s needs the columns id BIGINT, ts BIGINT, payload BYTES",
                          o->tables[0]);
    int over = 16 + 4 * n;
    size_t plen = (o->record_size > over ? (size_t)(o->record_size - over) : 0) / (size_t)n;
    size_t starts = p->pool_len > plen ? p->pool_len - plen : 1;
    fl_record_builder_options_t bo = {t->schema_id, t->codec, t->zstd_level};
    fl_record_builder_t b;
    fl_record_builder_init(&b, &t->desc.schema, &bo);
    fluss_row_t *row = fluss_row_new(t);
    fluss_error_t ferr;
    uint64_t seed = 0x9E3779B97F4A7C15ull * ((uint64_t)p->index + 7);
    int64_t i = 0;
    size_t want = o->batch_bytes > 0 ? (size_t)o->batch_bytes : 1024 * 1024; /* the writer's default */
    while (i == 0 || fl_record_builder_size(&b) < want) {
        fluss_row_set_int64(row, (size_t)col_id, ((int64_t)p->index << 40) + i, &ferr);
        fluss_row_set_int64(row, (size_t)col_ts, (int64_t)time(NULL) * 1000, &ferr);
        for (int k = 0; k < n; k++)
            fluss_row_set_bytes(row, (size_t)cols[k], p->pool + fl_replay_rand(&seed) % starts,
                                plen, &ferr);
        fl_record_builder_append(&b, &row->row);
        i++;
    }
    *rows = fl_record_builder_rows(&b);
    *raw_bytes = (int64_t)fl_record_builder_size(&b);
    int rc = fl_record_builder_finish(&b, -1, -1, out, err);
    fl_record_builder_free(&b);
    fluss_row_destroy(row);
    return rc;
}

static int fl_replay_loop(fl_perf_producer_t *p, fluss_table_t *t, fl_error_t *err) {
    const fl_perf_opts_t *o = p->o;
    fl_buf_t batch;
    fl_buf_init(&batch);
    int64_t rows = 0, raw = 0;
    int rc = fl_replay_build(p, t, &batch, &rows, &raw, err);
    if (rc) return rc;
    int32_t bucket = p->index % (t->bucket_count > 0 ? t->bucket_count : 1);
    fl_client_conn_t conn;
    int node;
    rc = fl_table_connect_leader(t, bucket, &conn, &node, err);
    if (rc) {
        fl_buf_free(&batch);
        return rc;
    }
    Fluss__PbProduceLogReqForBucket br = FLUSS__PB_PRODUCE_LOG_REQ_FOR_BUCKET__INIT;
    br.bucket_id = bucket;
    br.records.data = batch.data;
    br.records.len = batch.len;
    Fluss__PbProduceLogReqForBucket *brs[1] = {&br};
    Fluss__ProduceLogRequest req = FLUSS__PRODUCE_LOG_REQUEST__INIT;
    req.acks = o->acks;
    req.table_id = t->table_id;
    req.timeout_ms = o->timeout_ms;
    req.n_buckets_req = 1;
    req.buckets_req = brs;
    int inflight_max = o->max_inflight > 0 ? o->max_inflight : 5;
    if (inflight_max > FL_PERF_REPLAY_INFLIGHT_MAX) inflight_max = FL_PERF_REPLAY_INFLIGHT_MAX;
    int64_t sent_us[FL_PERF_REPLAY_INFLIGHT_MAX];
    int32_t ids[FL_PERF_REPLAY_INFLIGHT_MAX];
    int inflight = 0;
    int64_t to_send = p->records > 0 ? (p->records + rows - 1) / rows : -1; /* requests */
    while (!rc) {
        bool stop = atomic_load_explicit(&fl_perf_stop, memory_order_relaxed);
        while (!stop && inflight < inflight_max && to_send != 0) {
            int32_t id;
            if ((rc = fl_client_conn_send(&conn, FL_API_PRODUCE_LOG, &req.base, &id, err))) break;
            ids[inflight] = id;
            sent_us[inflight++] = fl_perf_now_us();
            if (to_send > 0) to_send--;
        }
        if (rc || inflight == 0) break;
        int32_t id;
        ProtobufCMessage *m = NULL;
        rc = fl_client_conn_recv(&conn, fl_perf_now_us() / 1000 + o->timeout_ms,
                                 &fluss__produce_log_response__descriptor, &id, &m, err);
        if (rc) break;
        int64_t now = fl_perf_now_us();
        int slot = -1;
        for (int k = 0; k < inflight; k++)
            if (ids[k] == id) slot = k;
        if (slot < 0) {
            protobuf_c_message_free_unpacked(m, NULL);
            rc = fl_err_set(err, FLUSS_ERR__STATE, "answer to unknown request %d", id);
            break;
        }
        int64_t us = now - sent_us[slot];
        ids[slot] = ids[inflight - 1];
        sent_us[slot] = sent_us[--inflight];
        Fluss__ProduceLogResponse *resp = (Fluss__ProduceLogResponse *)m;
        if (resp->n_buckets_resp != 1 || resp->buckets_resp[0]->has_error_code) {
            int code = resp->n_buckets_resp ? resp->buckets_resp[0]->error_code : -1;
            rc = fl_err_set(err, code ? code : FLUSS_ERR__STATE, "PRODUCE_LOG answered %d: %s", code,
                            resp->n_buckets_resp && resp->buckets_resp[0]->error_message
                                ? resp->buckets_resp[0]->error_message
                                : "no bucket");
        } else {
            fl_perf_stats_t *st = p->st;
            atomic_fetch_add_explicit(&st->records, rows, memory_order_relaxed);
            atomic_fetch_add_explicit(&st->bytes, raw, memory_order_relaxed);
            atomic_fetch_add_explicit(&st->wire_bytes, (int64_t)batch.len, memory_order_relaxed);
            atomic_fetch_add_explicit(&st->requests, 1, memory_order_relaxed);
            fl_perf_hist_record(&st->lat_window, us);
            fl_perf_hist_record(&st->lat_total, us);
        }
        protobuf_c_message_free_unpacked(m, NULL);
    }
    fl_client_conn_close(&conn);
    fl_buf_free(&batch);
    return rc;
}

void *fl_perf_replay_run(void *arg) {
    fl_perf_producer_t *p = arg;
    const fl_perf_opts_t *o = p->o;
    char db[256];
    const char *name;
    fl_perf_split_path(o->tables[0], db, sizeof(db), &name);
    fluss_client_t *client = NULL;
    fluss_table_t *t = NULL;
    fluss_error_t ferr;
    memset(&ferr, 0, sizeof(ferr));
    int rc = fluss_client_new(o->bootstrap, o->timeout_ms, &client, &ferr);
    if (!rc) rc = fluss_table_open(client, db, name, &t, &ferr);
    if (!rc) {
        fl_error_t err;
        fl_err_clear(&err);
        rc = fl_replay_loop(p, t, &err);
        if (rc) fl_client_error_out(&ferr, &err);
    }
    if (rc) fl_perf_error(p->st, "replay producer", &ferr);
    fluss_table_close(t);
    fluss_client_destroy(client);
    fl_perf_worker_done(p->st);
    return NULL;
}
