/*
 * batch_builder.h — test helper: writes valid Fluss LogRecordBatches
 * (magic 0, 1 and 2) byte by byte from the layout tables of protocol.md
 * §4.1 (not from record_batch.c's parser), with a correct CRC-32C from
 * fl_batch_compute_crc. The "records" are opaque payload bytes
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

static inline size_t bb_header_size(int8_t magic) {
    return magic == 0 ? FL_BATCH_HEADER_V0 : magic == 1 ? FL_BATCH_HEADER_V1 : FL_BATCH_HEADER_V2;
}

static inline size_t bb_size(const bb_spec_t *s) {
    return bb_header_size(s->magic) + (s->magic >= 1 ? s->stats_bytes : 0) + s->payload_bytes;
}

static inline void bb_le16(uint8_t *p, int16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)((uint16_t)v >> 8);
}
static inline void bb_le32(uint8_t *p, int32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)((uint32_t)v >> (8 * i));
}
static inline void bb_le64(uint8_t *p, int64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

/* Writes the batch into p (bb_size bytes) and returns its size. */
static inline size_t bb_write(uint8_t *p, const bb_spec_t *s) {
    size_t n = bb_size(s);
    memset(p, 0, n);
    int32_t delta = s->record_count > 0 ? s->record_count - 1 : 0;
    bb_le64(p + 0, s->base_offset);
    bb_le32(p + 8, (int32_t)(n - 12));
    p[12] = (uint8_t)s->magic;
    bb_le64(p + 13, s->commit_timestamp);
    size_t h; /* SchemaId position */
    if (s->magic == 2) {
        bb_le32(p + 21, s->leader_epoch);
        h = 29;
    } else {
        h = 25;
    }
    bb_le16(p + h, s->schema_id);
    p[h + 2] = (uint8_t)s->attributes;
    bb_le32(p + h + 3, delta);
    bb_le64(p + h + 7, s->writer_id);
    bb_le32(p + h + 15, s->sequence);
    bb_le32(p + h + 19, s->record_count);
    size_t hs = bb_header_size(s->magic), stats = 0;
    if (s->magic >= 1) {
        stats = s->stats_bytes;
        bb_le32(p + hs - 4, (int32_t)stats);
        for (size_t i = 0; i < stats; i++) p[hs + i] = (uint8_t)(0xA0 + i);
    }
    for (size_t i = 0; i < s->payload_bytes; i++) p[hs + stats + i] = (uint8_t)(s->seed + i);
    uint32_t crc = fl_batch_compute_crc(p, n, s->magic);
    bb_le32(p + (s->magic == 2 ? 25 : 21), (int32_t)crc);
    return n;
}

/* Recomputes the stored CRC of a batch after a test edited it. */
static inline void bb_refresh_crc(uint8_t *p, size_t n) {
    int8_t magic = (int8_t)p[12];
    bb_le32(p + (magic == 2 ? 25 : 21), (int32_t)fl_batch_compute_crc(p, n, magic));
}

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
