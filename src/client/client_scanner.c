/*
 * client_scanner.c — libfluss's log scanner (fluss.h fluss_log_scanner_*):
 * Fluss's LogScanner + LogFetcher in one thread. Subscribed buckets are
 * fetched from their leaders with FETCH_LOG (long poll: min_bytes 1,
 * max_wait the rest of the poll's timeout), one request per tablet
 * server, sent to all before any answer is read; the answers' batches are
 * handed out one per _poll, records below the bucket's position skipped
 * (protocol.md §3.7: the server returns the whole batch containing the
 * fetch offset). A projection is pushed down as projected_fields sorted
 * ascending and reordered here (Fluss's LogFetcher "projection in order").
 *
 * Thread rule: one user at a time; the scanner owns its connections.
 * Limits: FL_SCANNER_FETCH_BYTES_MAX per request, _BUCKET_BYTES_MAX per
 * bucket (a bigger first batch still comes whole).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client_table.h"
#include "common_alloc.h"
#include "common_time.h"
#include "fluss_api.pb-c.h"
#include "proto_api.h"
#include "record_batch.h"

#define FL_SCANNER_FETCH_BYTES_MAX (16 * 1024 * 1024)
#define FL_SCANNER_BUCKET_BYTES_MAX (8 * 1024 * 1024)
#define FL_SCANNER_BATCH_BYTES_MAX ((size_t)1 << 30)

typedef struct fl_sbucket {
    bool subscribed;
    int64_t offset; /* next offset to hand out; FLUSS_OFFSET_EARLIEST until known */
} fl_sbucket_t;

/* Records of one bucket from a fetch answer, not yet handed out. */
typedef struct fl_spending {
    int32_t bucket;
    const uint8_t *data;
    size_t len;
    size_t pos;
} fl_spending_t;

struct fluss_log_scanner {
    fluss_table_t *t;
    int32_t *present;   /* schema positions in the caller's order */
    size_t present_count;
    int32_t *sorted;    /* the same, ascending (what is pushed down) */
    int32_t *all;       /* 0..columns-1 */
    bool projected;
    bool pushdown;
    fl_sbucket_t *buckets;
    fl_client_conn_t *conns; /* per tablet server */
    ProtobufCMessage **answers; /* fetch answers the pending records point into */
    size_t answer_count;
    fl_spending_t *pending;
    size_t pending_count;
    size_t pending_next;
    int64_t bytes_fetched;
};

static int fl_cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int fluss_log_scanner_new(fluss_table_t *t, const int32_t *projection, size_t n,
                          fluss_log_scanner_t **out, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    size_t cols = t->desc.schema.column_count;
    if (projection && n == 0) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "an empty projection");
        return fl_client_error_out(e, &err);
    }
    fluss_log_scanner_t *s = fl_calloc(1, sizeof(*s));
    s->t = t;
    s->projected = projection != NULL;
    s->pushdown = true;
    s->present_count = projection ? n : cols;
    s->present = fl_malloc((s->present_count ? s->present_count : 1) * sizeof(int32_t));
    s->sorted = fl_malloc((s->present_count ? s->present_count : 1) * sizeof(int32_t));
    s->all = fl_malloc((cols ? cols : 1) * sizeof(int32_t));
    for (size_t i = 0; i < cols; i++) s->all[i] = (int32_t)i;
    for (size_t i = 0; i < s->present_count; i++) {
        int32_t c = projection ? projection[i] : (int32_t)i;
        if (c < 0 || (size_t)c >= cols) {
            fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "projected column %d out of range (%zu columns)", c, cols);
            fluss_log_scanner_destroy(s);
            return fl_client_error_out(e, &err);
        }
        s->present[i] = s->sorted[i] = c;
    }
    qsort(s->sorted, s->present_count, sizeof(int32_t), fl_cmp_i32);
    for (size_t i = 1; i < s->present_count; i++)
        if (s->sorted[i] == s->sorted[i - 1]) {
            fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "column %s projected twice",
                       t->desc.schema.columns[s->sorted[i]].name);
            fluss_log_scanner_destroy(s);
            return fl_client_error_out(e, &err);
        }
    s->buckets = fl_calloc((size_t)t->bucket_count, sizeof(fl_sbucket_t));
    s->conns = fl_calloc(t->node_count ? t->node_count : 1, sizeof(fl_client_conn_t));
    for (size_t i = 0; i < t->node_count; i++) s->conns[i].fd = -1;
    *out = s;
    return 0;
}

void fluss_log_scanner_set_projection_pushdown(fluss_log_scanner_t *s, bool enabled) {
    s->pushdown = enabled;
}

static void fl_scanner_drop_pending(fluss_log_scanner_t *s) {
    for (size_t i = 0; i < s->answer_count; i++) protobuf_c_message_free_unpacked(s->answers[i], NULL);
    fl_free(s->answers);
    fl_free(s->pending);
    s->answers = NULL;
    s->pending = NULL;
    s->answer_count = s->pending_count = s->pending_next = 0;
}

int64_t fluss_log_scanner_bytes_fetched(const fluss_log_scanner_t *s) {
    return s->bytes_fetched;
}

void fluss_log_scanner_destroy(fluss_log_scanner_t *s) {
    if (!s) return;
    fl_scanner_drop_pending(s);
    for (size_t i = 0; s->conns && i < s->t->node_count; i++) fl_client_conn_close(&s->conns[i]);
    fl_free(s->conns);
    fl_free(s->buckets);
    fl_free(s->present);
    fl_free(s->sorted);
    fl_free(s->all);
    fl_free(s);
}

int fluss_log_scanner_subscribe(fluss_log_scanner_t *s, int32_t bucket, int64_t offset,
                                fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    if (bucket < 0 || bucket >= s->t->bucket_count) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "bucket %d out of range [0, %d)", bucket,
                   s->t->bucket_count);
        return fl_client_error_out(e, &err);
    }
    if (offset == FLUSS_OFFSET_LATEST) {
        int rc = fluss_table_list_offsets(s->t, &bucket, 1, FLUSS_OFFSETS_LATEST, 0, &offset, e);
        if (rc) return rc;
    } else if (offset < 0 && offset != FLUSS_OFFSET_EARLIEST) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "bad offset %lld", (long long)offset);
        return fl_client_error_out(e, &err);
    }
    /* records already fetched for this bucket are from the old position */
    for (size_t i = s->pending_next; i < s->pending_count; i++)
        if (s->pending[i].bucket == bucket) s->pending[i].pos = s->pending[i].len;
    s->buckets[bucket].subscribed = true;
    s->buckets[bucket].offset = offset;
    return 0;
}

void fluss_log_scanner_unsubscribe(fluss_log_scanner_t *s, int32_t bucket) {
    if (bucket < 0 || bucket >= s->t->bucket_count) return;
    s->buckets[bucket].subscribed = false;
}

int64_t fluss_log_scanner_position(const fluss_log_scanner_t *s, int32_t bucket) {
    if (bucket < 0 || bucket >= s->t->bucket_count || !s->buckets[bucket].subscribed) return -1;
    return s->buckets[bucket].offset;
}

/* Hands out the next batch of the pending records, or NULL when none. */
static int fl_scanner_next_pending(fluss_log_scanner_t *s, fluss_record_batch_t **out,
                                   fl_error_t *err) {
    *out = NULL;
    bool push = s->projected && s->pushdown;
    while (s->pending_next < s->pending_count) {
        fl_spending_t *p = &s->pending[s->pending_next];
        fl_sbucket_t *sb = &s->buckets[p->bucket];
        if (!sb->subscribed || p->pos >= p->len) {
            s->pending_next++;
            continue;
        }
        size_t size;
        int rc = fl_batch_peek_size(p->data + p->pos, p->len - p->pos, FL_SCANNER_BATCH_BYTES_MAX,
                                    &size, err);
        if (rc == 1 || (rc == 0 && size > p->len - p->pos)) { /* a cut trailing batch */
            p->pos = p->len;
            continue;
        }
        if (rc) return rc;
        const uint8_t *bytes = p->data + p->pos;
        p->pos += size;
        fl_batch_view_t bv;
        if ((rc = fl_batch_parse(bytes, size, &bv, err))) return rc;
        int64_t min = sb->offset;
        if (fl_batch_next_offset(&bv) <= min) continue; /* all below the position */
        rc = fl_record_batch_decode(s->t, bytes, size, p->bucket, push ? s->sorted : s->all,
                                    push ? s->present_count : s->t->desc.schema.column_count,
                                    s->present, s->present_count, min, !push, out, err);
        if (rc) {
            char why[FL_ERROR_MSG_MAX];
            snprintf(why, sizeof(why), "%s", err->msg);
            return fl_err_set(err, rc, "bucket %d at offset %lld: %.1900s", p->bucket,
                              (long long)bv.base_offset, why);
        }
        sb->offset = fl_batch_next_offset(&bv);
        if (*out) return 0;
    }
    fl_scanner_drop_pending(s);
    return 0;
}

/* One FETCH_LOG round to every leader of a subscribed bucket, waiting at
 * most max_wait_ms on the server side. */
static int fl_scanner_fetch(fluss_log_scanner_t *s, int max_wait_ms, fl_error_t *err) {
    const fluss_table_t *t = s->t;
    bool push = s->projected && s->pushdown;
    int32_t *rids = fl_malloc((t->node_count ? t->node_count : 1) * sizeof(int32_t));
    int rc = 0;
    for (size_t node = 0; node < t->node_count; node++) {
        rids[node] = -1;
        size_t nb = 0;
        for (int32_t b = 0; b < t->bucket_count; b++)
            if (s->buckets[b].subscribed && t->leader_node[b] == (int32_t)node) nb++;
        if (nb == 0) continue;
        Fluss__PbFetchLogReqForBucket *br = fl_calloc(nb, sizeof(*br));
        Fluss__PbFetchLogReqForBucket **bp = fl_calloc(nb, sizeof(*bp));
        size_t k = 0;
        for (int32_t b = 0; b < t->bucket_count; b++) {
            if (!s->buckets[b].subscribed || t->leader_node[b] != (int32_t)node) continue;
            fluss__pb_fetch_log_req_for_bucket__init(&br[k]);
            br[k].bucket_id = b;
            br[k].fetch_offset = s->buckets[b].offset;
            br[k].max_fetch_bytes = FL_SCANNER_BUCKET_BYTES_MAX;
            bp[k] = &br[k];
            k++;
        }
        Fluss__PbFetchLogReqForTable tr = FLUSS__PB_FETCH_LOG_REQ_FOR_TABLE__INIT;
        tr.table_id = t->table_id;
        tr.projection_pushdown_enabled = push;
        if (push) {
            tr.n_projected_fields = s->present_count;
            tr.projected_fields = s->sorted;
        }
        tr.n_buckets_req = nb;
        tr.buckets_req = bp;
        Fluss__PbFetchLogReqForTable *tp[1] = {&tr};
        Fluss__FetchLogRequest req = FLUSS__FETCH_LOG_REQUEST__INIT;
        req.follower_server_id = -1;
        req.max_bytes = FL_SCANNER_FETCH_BYTES_MAX;
        req.n_tables_req = 1;
        req.tables_req = tp;
        req.has_max_wait_ms = 1;
        req.max_wait_ms = max_wait_ms;
        req.has_min_bytes = 1;
        req.min_bytes = 1;
        if (s->conns[node].fd < 0) rc = fl_table_connect_node(t, (int)node, &s->conns[node], err);
        if (!rc) rc = fl_client_conn_send(&s->conns[node], FL_API_FETCH_LOG, &req.base, &rids[node], err);
        fl_free(br);
        fl_free(bp);
        if (rc) break;
    }
    /* read every answer (even after an error, to keep the streams in sync) */
    int64_t deadline = fl_time_mono_ms() + max_wait_ms + t->timeout_ms;
    for (size_t node = 0; node < t->node_count; node++) {
        if (rids[node] < 0) continue;
        fl_error_t e2;
        fl_err_clear(&e2);
        ProtobufCMessage *m = NULL;
        int32_t got;
        int rc2 = fl_client_conn_recv(&s->conns[node], deadline, &fluss__fetch_log_response__descriptor,
                                      &got, &m, &e2);
        if (!rc2 && got != rids[node])
            rc2 = fl_err_set(&e2, FLUSS_ERR__CORRUPT, "FETCH_LOG answer to the wrong request");
        if (rc2) {
            fl_client_conn_close(&s->conns[node]);
            if (m) protobuf_c_message_free_unpacked(m, NULL);
            if (!rc) {
                rc = rc2;
                *err = e2;
            }
            continue;
        }
        Fluss__FetchLogResponse *resp = (Fluss__FetchLogResponse *)m;
        s->answers = fl_realloc(s->answers, (s->answer_count + 1) * sizeof(*s->answers));
        s->answers[s->answer_count++] = m;
        for (size_t i = 0; i < resp->n_tables_resp; i++) {
            const Fluss__PbFetchLogRespForTable *tr = resp->tables_resp[i];
            if (tr->table_id != t->table_id) continue;
            for (size_t j = 0; j < tr->n_buckets_resp; j++) {
                const Fluss__PbFetchLogRespForBucket *b = tr->buckets_resp[j];
                if (b->bucket_id < 0 || b->bucket_id >= t->bucket_count) continue;
                if (b->has_error_code && b->error_code != 0) {
                    if (!rc) {
                        const char *msg = b->error_message ? b->error_message
                                                           : fl_err_default_message(b->error_code);
                        if (b->error_code == FLUSS_ERR_INVALID_COLUMN_PROJECTION && push)
                            rc = fl_err_set(err, b->error_code,
                                            "bucket %d: the server refused the projection pushdown: %s",
                                            b->bucket_id, msg);
                        else
                            rc = fl_err_set(err, b->error_code, "bucket %d: %s", b->bucket_id, msg);
                    }
                    continue;
                }
                if (!b->has_records || b->records.len == 0) continue;
                s->pending = fl_realloc(s->pending, (s->pending_count + 1) * sizeof(*s->pending));
                fl_spending_t *p = &s->pending[s->pending_count++];
                s->bytes_fetched += (int64_t)b->records.len;
                p->bucket = b->bucket_id;
                p->data = b->records.data;
                p->len = b->records.len;
                p->pos = 0;
            }
        }
    }
    fl_free(rids);
    return rc;
}

int fluss_log_scanner_poll(fluss_log_scanner_t *s, int timeout_ms, fluss_record_batch_t **out,
                           fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    *out = NULL;
    int64_t deadline = fl_time_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    bool fetched = false;
    for (;;) {
        int rc = fl_scanner_next_pending(s, out, &err);
        if (rc) return fl_client_error_out(e, &err);
        if (*out) return 0;
        int64_t left = deadline - fl_time_mono_ms();
        if (fetched && left <= 0) return 0;
        bool any = false;
        for (int32_t b = 0; b < s->t->bucket_count; b++) any |= s->buckets[b].subscribed;
        if (!any) {
            struct timespec ts = {(time_t)(left / 1000), (long)(left % 1000) * 1000000L};
            if (left > 0) nanosleep(&ts, NULL);
            return 0;
        }
        if ((rc = fl_scanner_fetch(s, left > 0 ? (int)left : 0, &err))) {
            fl_scanner_drop_pending(s);
            return fl_client_error_out(e, &err);
        }
        fetched = true;
    }
}
