/*
 * perf_kv.c — fluss-perf's key-value modes on a primary-key table
 * "id BIGINT NOT NULL, v BYTES" (Fluss's KV write and lookup paths):
 *   upsert  each thread opens its own client, table and upsert writer
 *           and writes keys (i x threads + index) mod keys, so the first
 *           `keys` records write every key once and later ones overwrite;
 *           rows are counted when acknowledged, with the PUT_KV request
 *           latency (the writer's ack callback);
 *   lookup  each thread opens its own lookuper and looks up random keys,
 *           lookup_batch per call, recording each call's latency and how
 *           many keys had a row.
 * Values are value_size bytes at pseudo-random starts of the run's
 * payload pool (fl_perf_pool_new). Rate limiting as in perf_produce.c.
 *
 * Thread rule: one worker per thread; it shares only the atomics of
 * fl_perf_stats_t.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf_int.h"

typedef struct fl_perf_kv_ctx {
    fluss_client_t *client;
    fluss_table_t *table;
    fluss_upsert_writer_t *writer;
    fluss_lookuper_t *lookuper;
} fl_perf_kv_ctx_t;

static uint64_t fl_perf_kv_rand(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void fl_perf_kv_on_ack(void *opaque, const fluss_append_ack_t *a) {
    fl_perf_stats_t *st = opaque;
    if (a->error_code) return; /* the writer's next call reports it */
    atomic_fetch_add_explicit(&st->records, a->rows, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->bytes, a->bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->wire_bytes, a->wire_bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->requests, 1, memory_order_relaxed);
    fl_perf_hist_record(&st->lat_window, a->request_us);
    fl_perf_hist_record(&st->lat_total, a->request_us);
}

int fl_perf_kv_prepare_table(fl_perf_opts_t *o, fluss_error_t *err) {
    if (o->table_count == 0) o->tables[o->table_count++] = strdup("perf.perf_kv");
    /* --compression: the changelog's (table.log.arrow.compression.type) */
    char prop[128];
    snprintf(prop, sizeof(prop), "table.log.arrow.compression.type=%s",
             o->compression ? o->compression : "");
    const char *props[2] = {o->compression ? prop : NULL, NULL};
    fluss_table_spec_t spec = {0};
    spec.schema = "id BIGINT NOT NULL, v BYTES";
    spec.primary_key = "id";
    spec.bucket_count = o->buckets > 0 ? o->buckets : 1;
    spec.properties = props;
    bool created;
    int rc = fl_perf_ensure_table(o, &spec, &created, err);
    if (!rc && !created && !o->quiet && o->compression)
        fprintf(stderr, "fluss-perf: %s exists; --compression is not applied\n", o->tables[0]);
    return rc;
}

static int fl_perf_kv_open(fl_perf_kv_ctx_t *c, const fl_perf_producer_t *p, fluss_error_t *err) {
    const fl_perf_opts_t *o = p->o;
    char db[256];
    const char *name;
    fl_perf_split_path(o->tables[0], db, sizeof(db), &name);
    int rc = fluss_client_new(o->bootstrap, o->timeout_ms, &c->client, err);
    if (!rc) rc = fluss_table_open(c->client, db, name, &c->table, err);
    if (rc) return rc;
    if (fluss_table_column_count(c->table) != 2 || fluss_table_column_index(c->table, "id") != 0 ||
        fluss_table_column_index(c->table, "v") != 1) {
        err->code = FLUSS_ERR__INVALID_ARG;
        snprintf(err->message, sizeof(err->message),
                 "table %s needs the columns id BIGINT NOT NULL, v BYTES", o->tables[0]);
        return err->code;
    }
    if (o->mode == FL_PERF_LOOKUP) return fluss_lookuper_new(c->table, &c->lookuper, err);
    fluss_upsert_writer_options_t wo = {0};
    wo.base.batch_bytes = (size_t)o->batch_bytes;
    wo.base.linger_ms = o->linger_ms;
    wo.base.max_inflight = o->max_inflight;
    wo.base.acks = o->acks;
    wo.base.idempotent = o->idempotent ? 1 : 0;
    wo.base.request_timeout_ms = o->timeout_ms;
    rc = fluss_upsert_writer_new(c->table, &wo, &c->writer, err);
    if (!rc) fluss_upsert_writer_set_ack_callback(c->writer, fl_perf_kv_on_ack, p->st);
    return rc;
}

/* Waits until record i is due at rate (the writer keeps working). */
static int fl_perf_kv_pace(fl_perf_kv_ctx_t *c, double rate, int64_t start_us, int64_t i,
                           fluss_error_t *err) {
    if (rate <= 0) return 0;
    int64_t due = start_us + (int64_t)((double)i * 1e6 / rate);
    for (;;) {
        int64_t now = fl_perf_now_us();
        if (now >= due || atomic_load(&fl_perf_stop)) return 0;
        int64_t ms = (due - now + 999) / 1000;
        if (c->writer) {
            int rc = fluss_upsert_writer_poll(c->writer, ms > 100 ? 100 : (int)ms, err);
            if (rc) return rc;
        } else {
            struct timespec ts = {0, (long)((due - now) * 1000)};
            nanosleep(&ts, NULL);
        }
    }
}

static int fl_perf_upsert_loop(fl_perf_kv_ctx_t *c, const fl_perf_producer_t *p,
                               fluss_error_t *err) {
    const fl_perf_opts_t *o = p->o;
    fluss_row_t *row = fluss_row_new(c->table);
    size_t vlen = (size_t)o->value_size;
    size_t starts = p->pool_len - vlen; /* >= 1 */
    uint64_t seed = 0x2545F4914F6CDD1Dull * ((uint64_t)p->index + 1);
    int64_t start = fl_perf_now_us();
    int rc = 0;
    for (int64_t i = 0; !rc && (p->records == 0 || i < p->records); i++) {
        if ((rc = fl_perf_kv_pace(c, p->rate, start, i, err))) break;
        if (atomic_load_explicit(&fl_perf_stop, memory_order_relaxed)) break;
        int64_t key = (i * o->threads + p->index) % o->keys;
        size_t shift = (size_t)(fl_perf_kv_rand(&seed) % starts);
        if ((rc = fluss_row_set_int64(row, 0, key, err))) break;
        if ((rc = fluss_row_set_bytes(row, 1, p->pool + shift, vlen, err))) break;
        rc = fluss_upsert_writer_upsert(c->writer, row, err);
    }
    if (!rc) rc = fluss_upsert_writer_flush(c->writer, err);
    fluss_row_destroy(row);
    return rc;
}

static int fl_perf_lookup_loop(fl_perf_kv_ctx_t *c, const fl_perf_producer_t *p,
                               fluss_error_t *err) {
    const fl_perf_opts_t *o = p->o;
    size_t nb = (size_t)o->lookup_batch;
    fluss_row_t **keys = calloc(nb, sizeof(*keys));
    fluss_row_t **rows = calloc(nb, sizeof(*rows));
    if (!keys || !rows) abort();
    for (size_t k = 0; k < nb; k++) keys[k] = fluss_row_new(c->table);
    uint64_t seed = 0x9E3779B97F4A7C15ull * ((uint64_t)p->index + 7);
    fl_perf_stats_t *st = p->st;
    int64_t start = fl_perf_now_us();
    int rc = 0;
    for (int64_t i = 0; !rc && (p->records == 0 || i < p->records); i += (int64_t)nb) {
        if ((rc = fl_perf_kv_pace(c, p->rate, start, i, err))) break;
        if (atomic_load_explicit(&fl_perf_stop, memory_order_relaxed)) break;
        size_t n = nb;
        if (p->records > 0 && (int64_t)n > p->records - i) n = (size_t)(p->records - i);
        for (size_t k = 0; k < n; k++)
            fluss_row_set_int64(keys[k], 0, (int64_t)(fl_perf_kv_rand(&seed) % (uint64_t)o->keys),
                                NULL);
        int64_t t0 = fl_perf_now_us();
        rc = fluss_lookuper_lookup(c->lookuper, (const fluss_row_t *const *)keys, n, rows, err);
        int64_t us = fl_perf_now_us() - t0;
        if (rc) break;
        int64_t found = 0, bytes = 0;
        for (size_t k = 0; k < n; k++) {
            if (!rows[k]) continue;
            size_t len = 0;
            fluss_row_get_bytes(rows[k], 1, &len);
            found++;
            bytes += (int64_t)len + 8;
            fluss_row_destroy(rows[k]);
        }
        atomic_fetch_add_explicit(&st->records, (int64_t)n, memory_order_relaxed);
        atomic_fetch_add_explicit(&st->found, found, memory_order_relaxed);
        atomic_fetch_add_explicit(&st->bytes, bytes, memory_order_relaxed);
        atomic_fetch_add_explicit(&st->requests, 1, memory_order_relaxed);
        fl_perf_hist_record(&st->lat_window, us);
        fl_perf_hist_record(&st->lat_total, us);
    }
    for (size_t k = 0; k < nb; k++) fluss_row_destroy(keys[k]);
    free(keys);
    free(rows);
    return rc;
}

void *fl_perf_kv_run(void *arg) {
    fl_perf_producer_t *p = arg;
    fl_perf_kv_ctx_t c;
    memset(&c, 0, sizeof(c));
    fluss_error_t err;
    memset(&err, 0, sizeof(err));
    int rc = fl_perf_kv_open(&c, p, &err);
    if (!rc)
        rc = p->o->mode == FL_PERF_LOOKUP ? fl_perf_lookup_loop(&c, p, &err)
                                          : fl_perf_upsert_loop(&c, p, &err);
    if (rc) fl_perf_error(p->st, p->o->mode == FL_PERF_LOOKUP ? "lookuper" : "upsert writer", &err);
    fluss_lookuper_destroy(c.lookuper);
    fluss_upsert_writer_destroy(c.writer);
    fluss_table_close(c.table);
    fluss_client_destroy(c.client);
    fl_perf_worker_done(p->st);
    return NULL;
}
