/*
 * perf_consume.c — fluss-perf's consumer threads: each opens its own
 * client, table and log scanner (Fluss's LogScanner), subscribes its
 * buckets at the earliest or latest offset and polls (FETCH_LOG long
 * polls), counting rows and the record bytes the server sent (after
 * projection pushdown). It stops at the latest offsets seen at start
 * (a full read), after the total record count, or when fl_perf_stop is
 * set. The latency consumer projects the ts column and records
 * now - ts for every row (the producer threads of the same process
 * wrote their monotonic send time there).
 *
 * Thread rule: one consumer per thread; it shares only the atomics of
 * fl_perf_stats_t and the ready/target flags of its fl_perf_consumer_t.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_int.h"

#define FL_PERF_POLL_MS 200
#define FL_PERF_LATENCY_GRACE_S 10.0 /* after the producers end, wait this long for stragglers */

typedef struct fl_perf_cons_ctx {
    fluss_client_t *client;
    fluss_table_t *table;
    fluss_log_scanner_t *scanner;
    int64_t *end;       /* per subscribed bucket: stop at this offset, or -1 (tail) */
    int64_t bytes_seen; /* scanner bytes already added to the stats */
} fl_perf_cons_ctx_t;

/* Column indexes of a comma list of names. */
static int fl_perf_projection(const fluss_table_t *t, const char *list, int32_t *cols, size_t *n,
                              fluss_error_t *err) {
    char buf[4096];
    snprintf(buf, sizeof(buf), "%s", list);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        int c = fluss_table_column_index(t, tok);
        if (c < 0 || *n >= FL_PERF_COLUMNS_MAX) {
            err->code = FLUSS_ERR__INVALID_ARG;
            snprintf(err->message, sizeof(err->message), "no column %s (or more than %d)", tok,
                     FL_PERF_COLUMNS_MAX);
            return err->code;
        }
        cols[(*n)++] = c;
    }
    return 0;
}

static int fl_perf_cons_open(fl_perf_cons_ctx_t *c, const fl_perf_consumer_t *p,
                             fluss_error_t *err) {
    const fl_perf_opts_t *o = p->o;
    char db[256];
    const char *name;
    fl_perf_split_path(p->table, db, sizeof(db), &name);
    int rc = fluss_client_new(o->bootstrap, o->timeout_ms, &c->client, err);
    if (!rc) rc = fluss_table_open(c->client, db, name, &c->table, err);
    if (rc) return rc;
    int32_t cols[FL_PERF_COLUMNS_MAX];
    size_t n = 0;
    const char *list = p->measure_latency ? "ts" : o->columns;
    if (list && (rc = fl_perf_projection(c->table, list, cols, &n, err))) return rc;
    if ((rc = fluss_log_scanner_new(c->table, list ? cols : NULL, n, &c->scanner, err))) return rc;
    c->end = calloc((size_t)p->bucket_count + 1, sizeof(int64_t));
    if (!c->end) abort();
    bool to_end = !o->from_latest && o->records == 0 && o->duration_s == 0 && !p->measure_latency;
    for (int i = 0; i < p->bucket_count; i++) {
        c->end[i] = -1;
        if (to_end &&
            (rc = fluss_table_list_offsets(c->table, &p->buckets[i], 1, FLUSS_OFFSETS_LATEST, 0,
                                           &c->end[i], err)))
            return rc;
        int64_t from = o->from_latest || p->measure_latency ? FLUSS_OFFSET_LATEST : FLUSS_OFFSET_EARLIEST;
        if (to_end && c->end[i] == 0) continue; /* empty bucket: nothing to read */
        if ((rc = fluss_log_scanner_subscribe(c->scanner, p->buckets[i], from, err))) return rc;
    }
    return 0;
}

static void fl_perf_cons_close(fl_perf_cons_ctx_t *c) {
    fluss_log_scanner_destroy(c->scanner);
    fluss_table_close(c->table);
    fluss_client_destroy(c->client);
    free(c->end);
}

/* Unsubscribes buckets that reached their end; true when none is left. */
static bool fl_perf_cons_at_end(fl_perf_cons_ctx_t *c, const fl_perf_consumer_t *p) {
    bool left = false;
    for (int i = 0; i < p->bucket_count; i++) {
        int64_t pos = fluss_log_scanner_position(c->scanner, p->buckets[i]);
        if (pos == -1) continue; /* not subscribed (FLUSS_OFFSET_EARLIEST until the first answer) */
        if (c->end[i] >= 0 && pos >= 0 && pos >= c->end[i]) fluss_log_scanner_unsubscribe(c->scanner, p->buckets[i]);
        else left = true;
    }
    return !left;
}

static void fl_perf_cons_latency(const fl_perf_consumer_t *p, const fluss_record_batch_t *b) {
    int64_t now = fl_perf_now_us();
    char buf[64];
    for (size_t r = 0; r < fluss_record_batch_row_count(b); r++) {
        if (fluss_record_batch_is_null(b, r, 0)) continue;
        fluss_record_batch_value_text(b, r, 0, 0, buf, sizeof(buf));
        int64_t us = now - strtoll(buf, NULL, 10);
        fl_perf_hist_record(&p->st->lat_window, us);
        fl_perf_hist_record(&p->st->lat_total, us);
    }
}

/* The latency consumer ends when it has every acknowledged row, or a
 * grace period after the producers ended. */
static bool fl_perf_cons_latency_done(const fl_perf_consumer_t *p, double *target_since) {
    int64_t target = atomic_load(p->target);
    if (target < 0) return false;
    if (*target_since == 0) *target_since = fl_perf_now_s();
    return atomic_load(&p->st->records) >= target ||
           fl_perf_now_s() - *target_since > FL_PERF_LATENCY_GRACE_S;
}

static int fl_perf_cons_loop(fl_perf_cons_ctx_t *c, const fl_perf_consumer_t *p,
                             fluss_error_t *err) {
    const fl_perf_opts_t *o = p->o;
    double target_since = 0;
    for (;;) {
        if (fl_perf_cons_at_end(c, p)) return 0;
        if (p->measure_latency ? fl_perf_cons_latency_done(p, &target_since)
                               : atomic_load_explicit(&fl_perf_stop, memory_order_relaxed))
            return 0;
        if (o->records > 0 && !p->measure_latency && atomic_load(&p->st->records) >= o->records)
            return 0;
        fluss_record_batch_t *b = NULL;
        int rc = fluss_log_scanner_poll(c->scanner, FL_PERF_POLL_MS, &b, err);
        int64_t fetched = fluss_log_scanner_bytes_fetched(c->scanner);
        atomic_fetch_add_explicit(&p->st->bytes, fetched - c->bytes_seen, memory_order_relaxed);
        c->bytes_seen = fetched;
        if (rc) return rc;
        if (!b) continue;
        if (p->measure_latency) fl_perf_cons_latency(p, b);
        atomic_fetch_add_explicit(&p->st->records, (int64_t)fluss_record_batch_row_count(b),
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&p->st->requests, 1, memory_order_relaxed);
        fluss_record_batch_free(b);
    }
}

void *fl_perf_consume_run(void *arg) {
    fl_perf_consumer_t *p = arg;
    fl_perf_cons_ctx_t c;
    memset(&c, 0, sizeof(c));
    fluss_error_t err;
    memset(&err, 0, sizeof(err));
    int rc = fl_perf_cons_open(&c, p, &err);
    if (p->ready) atomic_store(p->ready, true);
    if (!rc) rc = fl_perf_cons_loop(&c, p, &err);
    if (rc) fl_perf_error(p->st, "consumer", &err);
    fl_perf_cons_close(&c);
    fl_perf_worker_done(p->st);
    return NULL;
}
