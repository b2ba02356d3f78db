/*
 * proto_produce.c — the zero-copy ProduceLogRequest decoder
 * (proto_produce.h). Two passes over the protobuf fields: the first counts
 * the buckets and checks every length, the second fills one allocation
 * holding the message, the pointer array and the bucket structs.
 */
#include "proto_produce.h"

#include <stdbool.h>
#include <string.h>

#include "common_alloc.h"

enum { FL_WT_VARINT = 0, FL_WT_I64 = 1, FL_WT_LEN = 2, FL_WT_I32 = 5 };

typedef struct fl_pb_reader {
    const uint8_t *p, *end;
} fl_pb_reader_t;

/* A varint of at most 10 bytes (the 10th may only carry bit 63). */
static int fl_pb_varint(fl_pb_reader_t *r, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (r->p == r->end) return -1;
        uint8_t b = *r->p++;
        if (shift == 63 && b > 1) return -1;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* One field's key: at most 5 bytes (as protobuf-c reads keys), number >= 1. */
static int fl_pb_key(fl_pb_reader_t *r, uint32_t *field, int *wt) {
    uint64_t k;
    const uint8_t *start = r->p;
    if (fl_pb_varint(r, &k) || r->p - start > 5 || k > 0xFFFFFFFFu) return -1;
    *field = (uint32_t)(k >> 3);
    *wt = (int)(k & 7);
    return *field == 0 ? -1 : 0;
}

static int fl_pb_len(fl_pb_reader_t *r, const uint8_t **data, size_t *len) {
    uint64_t n;
    if (fl_pb_varint(r, &n) || n > (uint64_t)(r->end - r->p)) return -1;
    *data = r->p;
    *len = (size_t)n;
    r->p += n;
    return 0;
}

/* Skips an unknown field of wire type wt (groups are refused). */
static int fl_pb_skip(fl_pb_reader_t *r, int wt) {
    uint64_t v;
    const uint8_t *d;
    size_t n;
    switch (wt) {
    case FL_WT_VARINT: return fl_pb_varint(r, &v);
    case FL_WT_I64:
        if (r->end - r->p < 8) return -1;
        r->p += 8;
        return 0;
    case FL_WT_LEN: return fl_pb_len(r, &d, &n);
    case FL_WT_I32:
        if (r->end - r->p < 4) return -1;
        r->p += 4;
        return 0;
    default: return -1;
    }
}

/* One bucket message; b may be NULL (the counting pass). */
static int fl_pb_bucket(const uint8_t *data, size_t len, Fluss__PbProduceLogReqForBucket *b) {
    fl_pb_reader_t r = {data, data + len};
    bool has_bucket = false, has_records = false;
    while (r.p < r.end) {
        uint32_t f;
        int wt;
        uint64_t v;
        const uint8_t *d;
        size_t n;
        if (fl_pb_key(&r, &f, &wt)) return -1;
        if (f == 1 || f == 2) {
            if (wt != FL_WT_VARINT || fl_pb_varint(&r, &v)) return -1;
            if (f == 1 && b) {
                b->has_partition_id = 1;
                b->partition_id = (int64_t)v;
            } else if (f == 2) {
                has_bucket = true;
                if (b) b->bucket_id = (int32_t)(uint32_t)v;
            }
        } else if (f == 3) {
            if (wt != FL_WT_LEN || fl_pb_len(&r, &d, &n)) return -1;
            has_records = true;
            if (b) {
                b->records.data = (uint8_t *)d;
                b->records.len = n;
            }
        } else if (fl_pb_skip(&r, wt)) {
            return -1;
        }
    }
    return has_bucket && has_records ? 0 : -1;
}

/* The request; m may be NULL (counting pass: *buckets gets the count). */
static int fl_pb_request(const uint8_t *body, size_t len, Fluss__ProduceLogRequest *m,
                         Fluss__PbProduceLogReqForBucket *bs, size_t *buckets) {
    fl_pb_reader_t r = {body, body + len};
    bool has_acks = false, has_table = false, has_timeout = false;
    size_t nb = 0;
    while (r.p < r.end) {
        uint32_t f;
        int wt;
        uint64_t v;
        const uint8_t *d;
        size_t n;
        if (fl_pb_key(&r, &f, &wt)) return -1;
        if (f >= 1 && f <= 3) {
            if (wt != FL_WT_VARINT || fl_pb_varint(&r, &v)) return -1;
            if (f == 1) has_acks = true;
            if (f == 2) has_table = true;
            if (f == 3) has_timeout = true;
            if (m && f == 1) m->acks = (int32_t)(uint32_t)v;
            if (m && f == 2) m->table_id = (int64_t)v;
            if (m && f == 3) m->timeout_ms = (int32_t)(uint32_t)v;
        } else if (f == 4) {
            if (wt != FL_WT_LEN || fl_pb_len(&r, &d, &n)) return -1;
            if (nb == FL_PRODUCE_VIEW_BUCKETS_MAX) return -1;
            if (m) {
                Fluss__PbProduceLogReqForBucket init = FLUSS__PB_PRODUCE_LOG_REQ_FOR_BUCKET__INIT;
                bs[nb] = init;
            }
            if (fl_pb_bucket(d, n, m ? &bs[nb] : NULL)) return -1;
            nb++;
        } else if (fl_pb_skip(&r, wt)) {
            return -1;
        }
    }
    *buckets = nb;
    return has_acks && has_table && has_timeout ? 0 : -1;
}

int fl_proto_produce_view(const uint8_t *body, size_t len, Fluss__ProduceLogRequest **out) {
    size_t nb = 0;
    if (fl_pb_request(body, len, NULL, NULL, &nb)) return -1;
    size_t bytes = sizeof(Fluss__ProduceLogRequest) + nb * (sizeof(void *) +
                                                            sizeof(Fluss__PbProduceLogReqForBucket));
    uint8_t *mem = fl_calloc(1, bytes);
    Fluss__ProduceLogRequest *m = (Fluss__ProduceLogRequest *)mem;
    Fluss__ProduceLogRequest init = FLUSS__PRODUCE_LOG_REQUEST__INIT;
    *m = init;
    Fluss__PbProduceLogReqForBucket **ptrs = (Fluss__PbProduceLogReqForBucket **)(m + 1);
    Fluss__PbProduceLogReqForBucket *bs = (Fluss__PbProduceLogReqForBucket *)(ptrs + nb);
    size_t again = 0;
    if (fl_pb_request(body, len, m, bs, &again) || again != nb) {
        fl_free(mem);
        return -1;
    }
    for (size_t i = 0; i < nb; i++) ptrs[i] = &bs[i];
    m->n_buckets_req = nb;
    m->buckets_req = nb ? ptrs : NULL;
    *out = m;
    return 0;
}

void fl_proto_produce_view_free(Fluss__ProduceLogRequest *m) { fl_free(m); }
