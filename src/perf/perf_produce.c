/*
 * perf_produce.c — fluss-perf's producer threads: each opens its own
 * client, table and append writer (Fluss's producer), builds rows
 * "id BIGINT, ts BIGINT, payload BYTES[, payload_1 BYTES, ...]" sized to
 * the record size (the payload split evenly over the payload columns), and
 * appends its share of the records at its share of the target rate.
 * Acknowledgements come back through the writer's ack callback, which
 * counts rows and bytes and records the request latency. In latency
 * mode ts is the append time on the monotonic clock (read back by the
 * consumer thread of the same process) and every row is pushed out at
 * once (linger 0 + fluss_append_writer_poll after each append).
 *
 * Thread rule: one producer per thread; it shares only the atomics of
 * fl_perf_stats_t.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf_int.h"

/* Rows take their payload at pseudo-random starts of one pool shared by
 * the producers: distinct rows without generating bytes per row, and big
 * enough that rows of one batch rarely overlap (so a compressor sees
 * about the entropy of the payload kind, not repeats of a small buffer). */
#define FL_PERF_POOL_BYTES_MAX (64u * 1024 * 1024)

typedef struct fl_perf_prod_ctx {
    fluss_client_t *client;
    fluss_table_t *table;
    fluss_append_writer_t *writer;
    fluss_row_t *row;
    int col_id, col_ts;
    int col_payload[FL_PERF_COLUMNS_MAX];
    int payload_columns;
    size_t payload_len; /* per payload column */
} fl_perf_prod_ctx_t;

static void fl_perf_on_ack(void *opaque, const fluss_append_ack_t *a) {
    fl_perf_stats_t *st = opaque;
    if (a->error_code) return; /* the writer's next call reports it */
    atomic_fetch_add_explicit(&st->records, a->rows, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->bytes, a->bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->wire_bytes, a->wire_bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->requests, 1, memory_order_relaxed);
    fl_perf_hist_record(&st->lat_window, a->request_us);
    fl_perf_hist_record(&st->lat_total, a->request_us);
}

/* xorshift64: payload bytes only need to differ, not be unpredictable. */
static uint64_t fl_perf_rand(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Payload bytes of a row over n payload columns. Arrow per row: 8 (id)
 * + 8 (ts) + per payload column 4 (offset) + its bytes. */
static size_t fl_perf_payload_len(const fl_perf_opts_t *o, int n) {
    int over = 16 + 4 * n;
    return o->record_size > over ? (size_t)(o->record_size - over) : 0;
}

void fl_perf_payload_name(int k, char *buf, size_t cap) {
    if (k == 0) snprintf(buf, cap, "payload");
    else snprintf(buf, cap, "payload_%d", k);
}

void fl_perf_pool_new(const fl_perf_opts_t *o, uint8_t **pool, size_t *len) {
    size_t n = FL_PERF_POOL_BYTES_MAX, pl = fl_perf_payload_len(o, 1); /* the most of any n */
    if (o->records > 0 && (uint64_t)o->records * pl < n) n = (size_t)o->records * pl;
    n += pl + 1;
    *pool = malloc(n);
    if (!*pool) abort();
    *len = n;
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t r = fl_perf_rand(&seed);
        for (size_t k = 0; k < 8 && i + k < n; k++, r >>= 8)
            (*pool)[i + k] = o->random_payload ? (uint8_t)r : (uint8_t)('A' + (r & 0xff) % 26);
    }
}

static int fl_perf_prod_open(fl_perf_prod_ctx_t *c, const fl_perf_producer_t *p,
                             fluss_error_t *err) {
    const fl_perf_opts_t *o = p->o;
    char db[256];
    const char *name;
    fl_perf_split_path(o->tables[0], db, sizeof(db), &name);
    int rc = fluss_client_new(o->bootstrap, o->timeout_ms, &c->client, err);
    if (!rc) rc = fluss_table_open(c->client, db, name, &c->table, err);
    if (rc) return rc;
    c->col_id = fluss_table_column_index(c->table, "id");
    c->col_ts = fluss_table_column_index(c->table, "ts");
    for (int k = 0; k < FL_PERF_COLUMNS_MAX; k++) {
        char col_name[32];
        fl_perf_payload_name(k, col_name, sizeof(col_name));
        int col = fluss_table_column_index(c->table, col_name);
        if (col < 0) break;
        c->col_payload[c->payload_columns++] = col;
    }
    if (c->col_id < 0 || c->col_ts < 0 || c->payload_columns == 0) {
        err->code = FLUSS_ERR__INVALID_ARG;
        snprintf(err->message, sizeof(err->message),
                 "table %s needs the columns id BIGINT, ts BIGINT, payload BYTES", o->tables[0]);
        return err->code;
    }
    fluss_append_writer_options_t wo = {0};
    wo.batch_bytes = (size_t)o->batch_bytes;
    wo.linger_ms = o->mode == FL_PERF_LATENCY ? 0 : o->linger_ms;
    wo.max_inflight = o->max_inflight;
    wo.acks = o->acks;
    wo.idempotent = o->idempotent ? 1 : 0;
    wo.request_timeout_ms = o->timeout_ms;
    rc = fluss_append_writer_new(c->table, &wo, &c->writer, err);
    if (rc) return rc;
    fluss_append_writer_set_ack_callback(c->writer, fl_perf_on_ack, p->st);
    c->row = fluss_row_new(c->table);
    c->payload_len = fl_perf_payload_len(o, c->payload_columns) / (size_t)c->payload_columns;
    return 0;
}

static void fl_perf_prod_close(fl_perf_prod_ctx_t *c) {
    fluss_row_destroy(c->row);
    fluss_append_writer_destroy(c->writer);
    fluss_table_close(c->table);
    fluss_client_destroy(c->client);
}

/* Waits (letting the writer work) until the row i is due at rate. */
static int fl_perf_pace(fl_perf_prod_ctx_t *c, double rate, int64_t start_us, int64_t i,
                        fluss_error_t *err) {
    if (rate <= 0) return 0;
    int64_t due = start_us + (int64_t)((double)i * 1e6 / rate);
    for (;;) {
        int64_t now = fl_perf_now_us();
        if (now >= due || atomic_load(&fl_perf_stop)) return 0;
        /* wait inside the writer (answers are read as they come, so the
         * request latency is not inflated by our sleeping), rounded up to
         * its millisecond timeout: a late row is caught up by the next */
        int64_t ms = (due - now + 999) / 1000;
        int rc = fluss_append_writer_poll(c->writer, ms > 100 ? 100 : (int)ms, err);
        if (rc) return rc;
    }
}

static int fl_perf_prod_loop(fl_perf_prod_ctx_t *c, const fl_perf_producer_t *p,
                             fluss_error_t *err) {
    const fl_perf_opts_t *o = p->o;
    bool latency = o->mode == FL_PERF_LATENCY;
    int64_t start = fl_perf_now_us();
    int64_t id_base = (int64_t)p->index << 40;
    uint64_t seed = 0x2545F4914F6CDD1Dull * ((uint64_t)p->index + 1);
    size_t starts = p->pool_len - c->payload_len; /* >= 1 */
    int rc = 0;
    for (int64_t i = 0; !rc && (p->records == 0 || i < p->records); i++) {
        if ((rc = fl_perf_pace(c, p->rate, start, i, err))) break;
        if (atomic_load_explicit(&fl_perf_stop, memory_order_relaxed)) break;
        int64_t ts = latency ? fl_perf_now_us() : (int64_t)time(NULL) * 1000;
        if ((rc = fluss_row_set_int64(c->row, (size_t)c->col_id, id_base + i, err))) break;
        if ((rc = fluss_row_set_int64(c->row, (size_t)c->col_ts, ts, err))) break;
        for (int k = 0; !rc && k < c->payload_columns; k++) {
            size_t shift = (size_t)(fl_perf_rand(&seed) % starts);
            rc = fluss_row_set_bytes(c->row, (size_t)c->col_payload[k], p->pool + shift,
                                     c->payload_len, err);
        }
        if (rc) break;
        if ((rc = fluss_append_writer_append(c->writer, c->row, err))) break;
        if (latency) rc = fluss_append_writer_poll(c->writer, 0, err);
    }
    if (!rc) rc = fluss_append_writer_flush(c->writer, err);
    return rc;
}

void *fl_perf_produce_run(void *arg) {
    fl_perf_producer_t *p = arg;
    fl_perf_prod_ctx_t c;
    memset(&c, 0, sizeof(c));
    fluss_error_t err;
    memset(&err, 0, sizeof(err));
    int rc = fl_perf_prod_open(&c, p, &err);
    if (!rc) rc = fl_perf_prod_loop(&c, p, &err);
    if (rc) fl_perf_error(p->st, "producer", &err);
    fl_perf_prod_close(&c);
    fl_perf_worker_done(p->st);
    return NULL;
}
