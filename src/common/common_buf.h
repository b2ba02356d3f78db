/*
 * common_buf.h — a growable byte buffer and big-endian helpers for the RPC
 * framing. fl_buf_t owns its bytes; _reset keeps the capacity for reuse.
 */
#ifndef FL_COMMON_BUF_H
#define FL_COMMON_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct fl_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
} fl_buf_t;

void fl_buf_init(fl_buf_t *b);
void fl_buf_reset(fl_buf_t *b);
void fl_buf_free(fl_buf_t *b);
/* Ensures room for n more bytes and returns a pointer to them. */
uint8_t *fl_buf_reserve(fl_buf_t *b, size_t n);
/* Same, but returns NULL instead of aborting when the allocation fails. */
uint8_t *fl_buf_try_reserve(fl_buf_t *b, size_t n);
void fl_buf_append(fl_buf_t *b, const void *p, size_t n);
void fl_buf_put_u8(fl_buf_t *b, uint8_t v);
void fl_buf_put_be16(fl_buf_t *b, uint16_t v);
void fl_buf_put_be32(fl_buf_t *b, uint32_t v);
/* Appends v as an unsigned LEB128 varint (seven bits a byte, lowest first,
 * the high bit set on all but the last): the varints of protobuf,
 * CompactedRow, KvRecordBatch and Thrift's compact protocol. */
void fl_buf_put_uvarint(fl_buf_t *b, uint64_t v);
/* How many bytes fl_buf_put_uvarint writes for v (1..10). */
static inline size_t fl_uvarint_len(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}
/* Reads an unsigned LEB128 varint of at most 64 bits (10 bytes, the tenth
 * carrying one bit) from p[0..len): the reader of fl_buf_put_uvarint's
 * bytes. Non-minimal encodings are accepted (callers that require minimal
 * ones check *used against fl_uvarint_len). */
typedef enum fl_uvarint_outcome {
    FL_UVARINT_OK,
    FL_UVARINT_TRUNCATED, /* the bytes end inside the varint */
    FL_UVARINT_OVERLONG, /* more than 64 bits */
} fl_uvarint_outcome_t;
fl_uvarint_outcome_t fl_uvarint_get(const uint8_t *p, size_t len, uint64_t *v, size_t *used);
/* Zigzag: 0, -1, 1, -2, ... as 0, 1, 2, 3, ... (protobuf sint64, Thrift
 * compact and Avro ints and longs). */
static inline uint64_t fl_zigzag64(int64_t v) {
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t fl_unzigzag64(uint64_t v) {
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}
/* Drops the first n bytes. */
void fl_buf_consume(fl_buf_t *b, size_t n);

static inline uint16_t fl_get_be16(const uint8_t *p) {
    return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}
static inline uint32_t fl_get_be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           (uint32_t)p[3];
}
static inline void fl_put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

#endif
