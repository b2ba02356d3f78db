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
 * A row filter (client_filter.h) goes to the server as the request's
 * filter_predicate, which lets it skip whole batches (by their column
 * statistics), and is applied again to every row of every batch here;
 * the filtered columns are fetched with the projection and not shown.
 * A bucket's answer may say it looked up to filtered_end_offset without
 * sending the batches it skipped there: the position moves there once
 * the bucket's records of that answer are handed out.
 *
 * A partitioned table's buckets are addressed as (partition id, bucket):
 * the scanner resolves a partition's leaders with GET_METADATA when it is
 * first subscribed (client_partition.h) and names the partition in each
 * bucket of its FETCH_LOG requests.
 *
 * Thread rule: one user at a time; the scanner owns its connections.
 * Limits: FL_SCANNER_FETCH_BYTES_MAX per request, _BUCKET_BYTES_MAX per
 * bucket (a bigger first batch still comes whole).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client_filter.h"
#include "client_partition.h"
#include "client_schemas.h"
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
    int32_t part;   /* index in the scanner's partition cache */
    int32_t bucket;
    bool subscribed;
    int64_t offset; /* next offset to hand out; FLUSS_OFFSET_EARLIEST until known */
} fl_sbucket_t;

/* Records of one bucket from a fetch answer, not yet handed out. */
typedef struct fl_spending {
    int32_t slot;
    int64_t filtered_end; /* the server skipped to here, -1 none */
    const uint8_t *data;
    size_t len;
    size_t pos;
} fl_spending_t;

struct fluss_log_scanner {
    fluss_table_t *t;
    int32_t *present;   /* schema positions in the caller's order */
    size_t present_count;
    int32_t *sorted;    /* the same, ascending */
    int32_t *fetched;   /* sorted plus the filtered columns, ascending (what is pushed down) */
    size_t fetched_count;
    fl_cfilter_t filter;
    fl_cfilter_wire_t *wire; /* the filter's wire form, NULL without a filter */
    int32_t *all;       /* 0..columns-1 */
    bool projected;
    bool pushdown;
    fl_parts_t parts;
    fl_schemas_t schemas; /* schemas of batches written before or after the handle's */
    fl_sbucket_t *slots; /* slot = part * bucket_count + bucket */
    size_t slot_count;
    fl_client_conn_t *conns; /* per tablet server */
    ProtobufCMessage **answers; /* fetch answers the pending records point into */
    size_t answer_count;
    fl_spending_t *pending;
    size_t pending_count;
    size_t pending_next;
    int64_t bytes_fetched;
    int64_t batches_fetched;
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
    s->fetched = fl_malloc((cols ? cols : 1) * sizeof(int32_t));
    memcpy(s->fetched, s->sorted, s->present_count * sizeof(int32_t));
    s->fetched_count = s->present_count;
    for (size_t i = 1; i < s->present_count; i++)
        if (s->sorted[i] == s->sorted[i - 1]) {
            fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "column %s projected twice",
                       t->desc.schema.columns[s->sorted[i]].name);
            fluss_log_scanner_destroy(s);
            return fl_client_error_out(e, &err);
        }
    fl_parts_init(&s->parts, t);
    fl_schemas_init(&s->schemas, t);
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

int64_t fluss_log_scanner_batches_fetched(const fluss_log_scanner_t *s) {
    return s->batches_fetched;
}

/* fetched = the presented columns plus the filtered ones, ascending. */
static void fl_scanner_fetched_columns(fluss_log_scanner_t *s) {
    memcpy(s->fetched, s->sorted, s->present_count * sizeof(int32_t));
    s->fetched_count = s->present_count;
    for (size_t k = 0; k < s->filter.count; k++) {
        int32_t c = s->filter.preds[k].column;
        bool have = false;
        for (size_t i = 0; i < s->fetched_count; i++) have |= s->fetched[i] == c;
        if (!have) s->fetched[s->fetched_count++] = c;
    }
    qsort(s->fetched, s->fetched_count, sizeof(int32_t), fl_cmp_i32);
}

int fluss_log_scanner_set_filter(fluss_log_scanner_t *s, const char *expr, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    fl_cfilter_t f;
    if (fl_cfilter_parse_opt(s->t, expr, &f, &err)) return fl_client_error_out(e, &err);
    fl_cfilter_free(&s->filter);
    if (s->wire) fl_cfilter_wire_free(s->wire);
    fl_free(s->wire);
    s->wire = NULL;
    s->filter = f;
    if (f.count > 0) {
        s->wire = fl_malloc(sizeof(*s->wire));
        fl_cfilter_to_wire(&s->filter, s->t, s->wire);
    }
    fl_scanner_fetched_columns(s);
    return 0;
}

void fluss_log_scanner_destroy(fluss_log_scanner_t *s) {
    if (!s) return;
    fl_scanner_drop_pending(s);
    for (size_t i = 0; s->conns && i < s->t->node_count; i++) fl_client_conn_close(&s->conns[i]);
    fl_free(s->conns);
    fl_free(s->slots);
    fl_parts_free(&s->parts);
    fl_schemas_free(&s->schemas);
    fl_free(s->present);
    fl_free(s->sorted);
    fl_free(s->fetched);
    fl_cfilter_free(&s->filter);
    if (s->wire) fl_cfilter_wire_free(s->wire);
    fl_free(s->wire);
    fl_free(s->all);
    fl_free(s);
}

/* The slot of (partition index, bucket), made if new. */
static fl_sbucket_t *fl_scanner_slot(fluss_log_scanner_t *s, size_t part, int32_t bucket) {
    size_t nb = (size_t)s->t->bucket_count;
    size_t need = (part + 1) * nb;
    if (need > s->slot_count) {
        s->slots = fl_realloc(s->slots, need * sizeof(*s->slots));
        for (size_t i = s->slot_count; i < need; i++) {
            memset(&s->slots[i], 0, sizeof(s->slots[i]));
            s->slots[i].part = (int32_t)(i / nb);
            s->slots[i].bucket = (int32_t)(i % nb);
        }
        s->slot_count = need;
    }
    return &s->slots[part * nb + (size_t)bucket];
}

/* The slot index of (partition id, bucket) if the scanner has one, else -1. */
static int64_t fl_scanner_find(const fluss_log_scanner_t *s, int64_t partition_id, int32_t bucket) {
    if (bucket < 0 || bucket >= s->t->bucket_count) return -1;
    for (size_t p = 0; p < s->parts.count; p++) {
        if (s->parts.items[p].id != partition_id) continue;
        size_t slot = p * (size_t)s->t->bucket_count + (size_t)bucket;
        return slot < s->slot_count ? (int64_t)slot : -1;
    }
    return -1;
}

int fluss_log_scanner_subscribe_partition(fluss_log_scanner_t *s, int64_t partition_id,
                                          int32_t bucket, int64_t offset, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    const fluss_table_t *t = s->t;
    if (bucket < 0 || bucket >= t->bucket_count) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "bucket %d out of range [0, %d)", bucket,
                   t->bucket_count);
        return fl_client_error_out(e, &err);
    }
    if ((partition_id < 0) != (t->part_count == 0)) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "%s.%s %s", t->database, t->name,
                   t->part_count ? "is partitioned: subscribe to buckets of a partition"
                                 : "has no partitions");
        return fl_client_error_out(e, &err);
    }
    size_t part = 0;
    if (partition_id >= 0 && fl_parts_by_id(&s->parts, partition_id, &part, &err))
        return fl_client_error_out(e, &err);
    if (offset == FLUSS_OFFSET_LATEST) {
        if (fl_table_list_offsets(t, s->parts.items[part].id, s->parts.items[part].leader, &bucket,
                                  1, FLUSS_OFFSETS_LATEST, 0, &offset, &err))
            return fl_client_error_out(e, &err);
    } else if (offset < 0 && offset != FLUSS_OFFSET_EARLIEST) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "bad offset %lld", (long long)offset);
        return fl_client_error_out(e, &err);
    }
    fl_sbucket_t *sb = fl_scanner_slot(s, part, bucket);
    int32_t slot = (int32_t)(sb - s->slots);
    /* records already fetched for this bucket are from the old position */
    for (size_t i = s->pending_next; i < s->pending_count; i++)
        if (s->pending[i].slot == slot) {
            s->pending[i].pos = s->pending[i].len;
            s->pending[i].filtered_end = -1;
        }
    sb->subscribed = true;
    sb->offset = offset;
    return 0;
}

int fluss_log_scanner_subscribe(fluss_log_scanner_t *s, int32_t bucket, int64_t offset,
                                fluss_error_t *e) {
    return fluss_log_scanner_subscribe_partition(s, -1, bucket, offset, e);
}

void fluss_log_scanner_unsubscribe_partition(fluss_log_scanner_t *s, int64_t partition_id,
                                             int32_t bucket) {
    int64_t slot = fl_scanner_find(s, partition_id, bucket);
    if (slot >= 0) s->slots[slot].subscribed = false;
}

void fluss_log_scanner_unsubscribe(fluss_log_scanner_t *s, int32_t bucket) {
    fluss_log_scanner_unsubscribe_partition(s, -1, bucket);
}

int64_t fluss_log_scanner_partition_position(const fluss_log_scanner_t *s, int64_t partition_id,
                                             int32_t bucket) {
    int64_t slot = fl_scanner_find(s, partition_id, bucket);
    if (slot < 0 || !s->slots[slot].subscribed) return -1;
    return s->slots[slot].offset;
}

int64_t fluss_log_scanner_position(const fluss_log_scanner_t *s, int32_t bucket) {
    return fluss_log_scanner_partition_position(s, -1, bucket);
}

/* Hands out the next batch of the pending records, or NULL when none. */
static int fl_scanner_next_pending(fluss_log_scanner_t *s, fluss_record_batch_t **out,
                                   fl_error_t *err) {
    *out = NULL;
    bool push = s->projected && s->pushdown;
    while (s->pending_next < s->pending_count) {
        fl_spending_t *p = &s->pending[s->pending_next];
        fl_sbucket_t *sb = &s->slots[p->slot];
        if (!sb->subscribed || p->pos >= p->len) {
            if (sb->subscribed && p->filtered_end > sb->offset)
                sb->offset = p->filtered_end;
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
        s->batches_fetched++;
        int64_t min = sb->offset;
        if (fl_batch_next_offset(&bv) <= min) continue; /* all below the position */
        /* a batch of another schema: read with it, placed by column id */
        fl_batch_schema_t evo = {NULL, NULL, !push};
        if (bv.schema_id != s->t->schema_id && bv.record_count > 0)
            rc = fl_schemas_get(&s->schemas, bv.schema_id, &evo.schema, &evo.map, err);
        if (!rc)
            rc = fl_record_batch_decode_filtered(
                s->t, bytes, size, sb->bucket, push ? s->fetched : s->all,
                push ? s->fetched_count : s->t->desc.schema.column_count, s->present,
                s->present_count, min, !push, &s->filter, evo.schema ? &evo : NULL, out, err);
        if (rc) {
            char why[FL_ERROR_MSG_MAX];
            snprintf(why, sizeof(why), "%s", err->msg);
            return fl_err_set(err, rc, "bucket %d at offset %lld: %.1900s", sb->bucket,
                              (long long)bv.base_offset, why);
        }
        sb->offset = fl_batch_next_offset(&bv);
        if (*out) (*out)->partition_id = s->parts.items[sb->part].id;
        if (*out) return 0;
    }
    fl_scanner_drop_pending(s);
    return 0;
}

static int32_t fl_scanner_leader(const fluss_log_scanner_t *s, size_t slot) {
    return fl_parts_leader(&s->parts, (size_t)s->slots[slot].part, s->slots[slot].bucket);
}

/* One FETCH_LOG round to every leader of a subscribed bucket, waiting at
 * most max_wait_ms on the server side. */
/* Sends node's FETCH_LOG for the subscribed buckets it leads (*rid -1
 * when it leads none). */
static int fl_scanner_send_node(fluss_log_scanner_t *s, size_t node, int max_wait_ms,
                                int32_t *rid, fl_error_t *err) {
    const fluss_table_t *t = s->t;
    bool push = s->projected && s->pushdown;
    *rid = -1;
    size_t nb = 0;
    for (size_t i = 0; i < s->slot_count; i++)
        if (s->slots[i].subscribed && fl_scanner_leader(s, i) == (int32_t)node) nb++;
    if (nb == 0) return 0;
    Fluss__PbFetchLogReqForBucket *br = fl_calloc(nb, sizeof(*br));
    Fluss__PbFetchLogReqForBucket **bp = fl_calloc(nb, sizeof(*bp));
    size_t k = 0;
    for (size_t i = 0; i < s->slot_count; i++) {
        const fl_sbucket_t *sb = &s->slots[i];
        if (!sb->subscribed || fl_scanner_leader(s, i) != (int32_t)node) continue;
        fluss__pb_fetch_log_req_for_bucket__init(&br[k]);
        int64_t pid = s->parts.items[sb->part].id;
        br[k].has_partition_id = pid >= 0;
        br[k].partition_id = pid;
        br[k].bucket_id = sb->bucket;
        br[k].fetch_offset = sb->offset;
        br[k].max_fetch_bytes = FL_SCANNER_BUCKET_BYTES_MAX;
        bp[k] = &br[k];
        k++;
    }
    Fluss__PbFetchLogReqForTable tr = FLUSS__PB_FETCH_LOG_REQ_FOR_TABLE__INIT;
    tr.table_id = t->table_id;
    tr.projection_pushdown_enabled = push;
    if (push) {
        tr.n_projected_fields = s->fetched_count;
        tr.projected_fields = s->fetched;
    }
    if (s->wire) {
        tr.filter_predicate = &s->wire->root;
        tr.has_filter_schema_id = 1;
        tr.filter_schema_id = t->schema_id;
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
    int rc = 0;
    if (s->conns[node].fd < 0) rc = fl_table_connect_node(t, (int)node, &s->conns[node], err);
    if (!rc) rc = fl_client_conn_send(&s->conns[node], FL_API_FETCH_LOG, &req.base, rid, err);
    fl_free(br);
    fl_free(bp);
    return rc;
}

/* Queues the records of one bucket's answer (or its error into rc/err
 * when rc is still 0). */
static void fl_scanner_take_bucket(fluss_log_scanner_t *s, const Fluss__PbFetchLogRespForBucket *b,
                                   int *rc, fl_error_t *err) {
    bool push = s->projected && s->pushdown;
    int64_t slot = fl_scanner_find(s, b->has_partition_id ? b->partition_id : -1, b->bucket_id);
    if (slot < 0) return;
    if (b->has_error_code && b->error_code != 0) {
        if (*rc) return;
        const char *msg = b->error_message ? b->error_message : fl_err_default_message(b->error_code);
        if (b->error_code == FLUSS_ERR_INVALID_COLUMN_PROJECTION && push)
            *rc = fl_err_set(err, b->error_code,
                             "bucket %d: the server refused the projection pushdown: %s",
                             b->bucket_id, msg);
        else
            *rc = fl_err_set(err, b->error_code, "bucket %d: %s", b->bucket_id, msg);
        return;
    }
    bool skipped = b->has_filtered_end_offset && b->filtered_end_offset >= 0;
    if ((!b->has_records || b->records.len == 0) && !skipped) return;
    s->pending = fl_realloc(s->pending, (s->pending_count + 1) * sizeof(*s->pending));
    fl_spending_t *p = &s->pending[s->pending_count++];
    s->bytes_fetched += b->has_records ? (int64_t)b->records.len : 0;
    p->slot = (int32_t)slot;
    p->filtered_end = skipped ? b->filtered_end_offset : -1;
    p->data = b->has_records ? b->records.data : NULL;
    p->len = b->has_records ? b->records.len : 0;
    p->pos = 0;
}

static int fl_scanner_fetch(fluss_log_scanner_t *s, int max_wait_ms, fl_error_t *err) {
    const fluss_table_t *t = s->t;
    int32_t *rids = fl_malloc((t->node_count ? t->node_count : 1) * sizeof(int32_t));
    for (size_t node = 0; node < t->node_count; node++) rids[node] = -1;
    int rc = 0;
    for (size_t node = 0; node < t->node_count && !rc; node++)
        rc = fl_scanner_send_node(s, node, max_wait_ms, &rids[node], err);
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
            for (size_t j = 0; j < tr->n_buckets_resp; j++)
                fl_scanner_take_bucket(s, tr->buckets_resp[j], &rc, err);
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
        for (size_t i = 0; i < s->slot_count; i++) any |= s->slots[i].subscribed;
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
