/*
 * batch_builder.h — test helper: writes valid Fluss LogRecordBatches
 * (magic 0, 1 and 2) through record_batch.h's header writer (the layout is
 * coded there only; test_record_batch.c checks it byte by byte against
 * protocol.md §4.1). The "records" are opaque payload bytes
 * payload[i] = seed + i, enough for the log layer, which never looks inside.
 * Header-only; every function is static inline.
 */
#ifndef FL_TEST_BATCH_BUILDER_H
#define FL_TEST_BATCH_BUILDER_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record_batch.h"

typedef struct bb_spec {
    int8_t magic;          /* 0, 1 or 2 */
    int64_t base_offset;   /* what the client writes: 0 */
    int64_t commit_timestamp;
    int32_t leader_epoch;  /* magic 2 only; clients write -1 */
    int16_t schema_id;
    int8_t attributes;
    int64_t writer_id;     /* -1 = none */
    int32_t sequence;      /* -1 = none */
    int32_t record_count;  /* LastOffsetDelta = count - 1, or 0 */
    size_t stats_bytes;    /* magic 1 and 2: StatisticsLength */
    size_t payload_bytes;  /* bytes after header and statistics */
    uint8_t seed;
} bb_spec_t;

/* A magic-0 spec with the usual client values. */
static inline bb_spec_t bb_spec(int64_t writer_id, int32_t sequence, int32_t record_count,
                                size_t payload_bytes, uint8_t seed) {
    bb_spec_t s;
    memset(&s, 0, sizeof(s));
    s.magic = 0;
    s.leader_epoch = -1;
    s.schema_id = 1;
    s.attributes = FL_BATCH_ATTR_APPEND_ONLY;
    s.writer_id = writer_id;
    s.sequence = sequence;
    s.record_count = record_count;
    s.payload_bytes = payload_bytes;
    s.seed = seed;
    return s;
}

static inline size_t bb_header_size(int8_t magic) { return fl_batch_header_size(magic); }

static inline size_t bb_size(const bb_spec_t *s) {
    return bb_header_size(s->magic) + (s->magic >= 1 ? s->stats_bytes : 0) + s->payload_bytes;
}

/* Writes the batch into p (bb_size bytes) and returns its size. */
static inline size_t bb_write(uint8_t *p, const bb_spec_t *s) {
    size_t n = bb_size(s);
    memset(p, 0, n);
    size_t hs = bb_header_size(s->magic), stats = s->magic >= 1 ? s->stats_bytes : 0;
    for (size_t i = 0; i < stats; i++) p[hs + i] = (uint8_t)(0xA0 + i);
    for (size_t i = 0; i < s->payload_bytes; i++) p[hs + stats + i] = (uint8_t)(s->seed + i);
    fl_batch_header_t h = {
        .magic = s->magic,
        .base_offset = s->base_offset,
        .commit_timestamp = s->commit_timestamp,
        .leader_epoch = s->leader_epoch,
        .schema_id = s->schema_id,
        .attributes = s->attributes,
        .last_offset_delta = s->record_count > 0 ? s->record_count - 1 : 0,
        .writer_id = s->writer_id,
        .batch_sequence = s->sequence,
        .record_count = s->record_count,
        .stats_size = (uint32_t)stats,
    };
    fl_batch_write_header(p, n, &h);
    return n;
}

/* Recomputes the stored CRC of a batch after a test edited it. */
static inline void bb_refresh_crc(uint8_t *p, size_t n) { fl_batch_refresh_crc(p, n); }

/* A malloc'd batch; *len set to its size. */
static inline uint8_t *bb_new(const bb_spec_t *s, size_t *len) {
    uint8_t *p = malloc(bb_size(s));
    *len = bb_write(p, s);
    return p;
}

/* Appends a batch to a growing request buffer (realloc'd). */
static inline uint8_t *bb_append(uint8_t *req, size_t *len, const bb_spec_t *s) {
    size_t n = bb_size(s);
    req = realloc(req, *len + n);
    bb_write(req + *len, s);
    *len += n;
    return req;
}

#endif
