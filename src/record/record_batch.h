/*
 * record_batch.h — the Fluss LogRecordBatch header (LogRecordBatchFormat):
 * a view over a batch's bytes, its validation, and the two fields a leader
 * assigns. All integers little-endian.
 *
 *   magic 0 (48-byte header) and 1 (52):        magic 2 (56):
 *   0  int64  BaseOffset                         0  int64 BaseOffset
 *   8  int32  Length (= batch bytes - 12)        8  int32 Length
 *   12 int8   Magic                              12 int8  Magic
 *   13 int64  CommitTimestamp                    13 int64 CommitTimestamp
 *   21 uint32 CRC-32C of [25, end)               21 int32 LeaderEpoch
 *   25 int16  SchemaId                           25 uint32 CRC of [29, end)
 *   27 int8   Attributes (bit0 append-only)      29 int16 SchemaId
 *   28 int32  LastOffsetDelta                    31 int8  Attributes
 *   32 int64  WriterId (-1 none)                 32 int32 LastOffsetDelta
 *   40 int32  BatchSequence (-1 none)            36 int64 WriterId
 *   44 int32  RecordCount                        44 int32 BatchSequence
 *   48 (v1)   int32 StatisticsLength + stats     48 int32 RecordCount
 *                                                52 int32 StatisticsLength + stats
 * The CRC does not cover the fields the leader rewrites (BaseOffset,
 * Length, Magic, CommitTimestamp, LeaderEpoch).
 */
#ifndef FL_RECORD_BATCH_H
#define FL_RECORD_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"

#define FL_BATCH_LOG_OVERHEAD 12
#define FL_BATCH_HEADER_V0 48
#define FL_BATCH_HEADER_V1 52
#define FL_BATCH_HEADER_V2 56
#define FL_BATCH_MAGIC_MAX 2
#define FL_BATCH_ATTR_APPEND_ONLY 0x01

/* Fluss ChangeType bytes (protocol.md §4.5): an ARROW changelog batch's
 * change-type vector, an INDEXED/COMPACTED record's attributes byte. */
typedef enum fl_change_type {
    FL_CHANGE_APPEND_ONLY = 0,   /* +A */
    FL_CHANGE_INSERT = 1,        /* +I */
    FL_CHANGE_UPDATE_BEFORE = 2, /* -U */
    FL_CHANGE_UPDATE_AFTER = 3,  /* +U */
    FL_CHANGE_DELETE = 4,        /* -D */
} fl_change_type_t;
#define FL_CHANGE_TYPE_MAX FL_CHANGE_DELETE

typedef struct fl_batch_view {
    const uint8_t *data; /* the whole batch */
    size_t size;         /* Length + 12 */
    int8_t magic;
    int64_t base_offset;
    int64_t commit_timestamp;
    int32_t leader_epoch; /* -1 below magic 2 */
    uint32_t crc;
    int16_t schema_id;
    int8_t attributes;
    int32_t last_offset_delta;
    int64_t writer_id;
    int32_t batch_sequence;
    int32_t record_count;
    size_t header_size;   /* fixed header */
    size_t stats_size;    /* statistics bytes after the header (v1, v2) */
    size_t records_start; /* offset of the records (after statistics) */
} fl_batch_view_t;

/* The base offset of a batch from a peer is unchecked (a leader rewrites
 * it): these wrap instead of overflowing; readers compare against offsets
 * they expect before trusting them. */
static inline int64_t fl_batch_last_offset(const fl_batch_view_t *b) {
    return (int64_t)((uint64_t)b->base_offset + (uint64_t)(int64_t)b->last_offset_delta);
}
static inline int64_t fl_batch_next_offset(const fl_batch_view_t *b) {
    return (int64_t)((uint64_t)b->base_offset + (uint64_t)(int64_t)b->last_offset_delta + 1u);
}

/* Parses the batch at p[*pos, len) of a buffer of whole batches (a log
 * read) and moves *pos past it. Returns 0 with *out set, 1 at the end of
 * the buffer (or before a trailing partial batch), or a Fluss error. */
int fl_batch_parse_next(const uint8_t *p, size_t len, size_t *pos, fl_batch_view_t *out,
                        fl_error_t *err);

/* How many bytes the batch starting at p takes, once 12 bytes are there.
 * Returns 0 and sets *size, 1 when more bytes are needed, or a Fluss error
 * (CORRUPT_RECORD_EXCEPTION) for a length that cannot be right. */
int fl_batch_peek_size(const uint8_t *p, size_t len, size_t size_max, size_t *size,
                       fl_error_t *err);
/* The fields a scan over stored batches needs, read from the first
 * FL_BATCH_HEADER_V0 bytes of a batch (enough for every magic), for
 * walking headers without reading whole batches. */
typedef struct fl_batch_peek {
    int64_t base_offset;
    int32_t length;            /* Length as stored (batch bytes - 12), unchecked */
    int8_t magic;
    int32_t last_offset_delta; /* unchecked */
} fl_batch_peek_t;

/* Reads them from p[0, len); len >= FL_BATCH_HEADER_V0. An unknown magic
 * is CORRUPT_RECORD_EXCEPTION (the other fields are the caller's to
 * check). */
int fl_batch_peek_header(const uint8_t *p, size_t len, fl_batch_peek_t *out, fl_error_t *err);
/* Parses and checks the header of one whole batch of exactly len bytes
 * (magic, lengths, counts); does not check the CRC. */
int fl_batch_parse(const uint8_t *p, size_t len, fl_batch_view_t *out, fl_error_t *err);
/* Checks the CRC-32C over the covered bytes. */
int fl_batch_check_crc(const fl_batch_view_t *b, fl_error_t *err);
/* The CRC a batch should carry (writers). */
uint32_t fl_batch_compute_crc(const uint8_t *p, size_t len, int8_t magic);

/* Header fields, for callers that read or patch one field of raw bytes
 * (a recovery scan, tests that corrupt a header) without a view. */
typedef enum fl_batch_field {
    FL_BATCH_FIELD_BASE_OFFSET,
    FL_BATCH_FIELD_LENGTH,
    FL_BATCH_FIELD_MAGIC,
    FL_BATCH_FIELD_COMMIT_TIMESTAMP,
    FL_BATCH_FIELD_LEADER_EPOCH, /* magic 2 only */
    FL_BATCH_FIELD_CRC,
    FL_BATCH_FIELD_SCHEMA_ID,
    FL_BATCH_FIELD_ATTRIBUTES,
    FL_BATCH_FIELD_LAST_OFFSET_DELTA,
    FL_BATCH_FIELD_WRITER_ID,
    FL_BATCH_FIELD_BATCH_SEQUENCE,
    FL_BATCH_FIELD_RECORD_COUNT,
    FL_BATCH_FIELD_STATISTICS_LENGTH, /* magic 1 and 2 */
} fl_batch_field_t;

/* Byte position of field f in a header of the given magic (0..2; the
 * first four fields sit at the same place in every magic, so magic may
 * be read at FL_BATCH_FIELD_MAGIC first). */
size_t fl_batch_field_offset(int8_t magic, fl_batch_field_t f);

/* The header fields a writer chooses; Length and the CRC follow from the
 * batch's bytes. */
typedef struct fl_batch_header {
    int8_t magic;              /* 0, 1 or 2 */
    int64_t base_offset;       /* clients write 0 */
    int64_t commit_timestamp;  /* clients write 0 */
    int32_t leader_epoch;      /* magic 2 only; clients write -1 */
    int16_t schema_id;
    int8_t attributes;         /* FL_BATCH_ATTR_* */
    int32_t last_offset_delta; /* record_count - 1, or 0 for an empty batch */
    int64_t writer_id;         /* -1 none */
    int32_t batch_sequence;    /* -1 none */
    int32_t record_count;
    uint32_t stats_size;       /* magic 1 and 2: StatisticsLength */
} fl_batch_header_t;

/* Bytes of the fixed header of a magic (0 for an unknown magic). */
size_t fl_batch_header_size(int8_t magic);
/* Writes header h into the first fl_batch_header_size(h->magic) bytes of
 * the batch p[0, len) — its statistics and records already in place
 * after the header — with Length from len, then the CRC over the covered
 * bytes. len must hold the header and h->stats_size. */
void fl_batch_write_header(uint8_t *p, size_t len, const fl_batch_header_t *h);
/* Recomputes and stores the CRC of the batch p[0, len) (magic from its
 * header), after covered bytes changed. */
void fl_batch_refresh_crc(uint8_t *p, size_t len);

/* Appends batch b to out as magic 0 — the layout every client reads —
 * without its statistics (magic 1 and 2 of Fluss main are not what a 0.9.1
 * reader takes magic 1 for): the V0 header from b's fields, the records
 * bytes unchanged, a new CRC. A magic 0 batch is appended as it is. */
void fl_batch_append_v0(const fl_batch_view_t *b, fl_buf_t *out);

/* Leader-assigned fields, written in place. */
void fl_batch_set_base_offset(uint8_t *p, int64_t base_offset);
void fl_batch_set_commit_timestamp(uint8_t *p, int64_t ts);
/* Writes Length (the batch is len bytes). */
void fl_batch_set_length(uint8_t *p, size_t len);

static inline int32_t fl_get_le32(const uint8_t *p) {
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24);
}
static inline int64_t fl_get_le64(const uint8_t *p) {
    return (int64_t)((uint64_t)(uint32_t)fl_get_le32(p) |
                     (uint64_t)(uint32_t)fl_get_le32(p + 4) << 32);
}
static inline void fl_put_le32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline void fl_put_le64(uint8_t *p, uint64_t v) {
    fl_put_le32(p, (uint32_t)v);
    fl_put_le32(p + 4, (uint32_t)(v >> 32));
}

#endif
