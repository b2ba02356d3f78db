/*
 * lake_avro.h — Avro's binary encoding (Avro 1.11 specification, "Binary
 * Encoding"), the bytes inside Iceberg's manifests and manifest lists:
 * writers into an fl_buf_t and a bounds-checked reader over untrusted
 * bytes. No I/O; the reader allocates nothing and hands out views into
 * its bytes. Thread rule: none; each writer and reader belongs to its
 * caller. The schema model is lake_avro_schema.h, the value tree
 * lake_avro_value.h, the object container file lake_avro_file.h.
 *
 *   null           nothing
 *   boolean        one byte, 0 or 1 (anything else is refused)
 *   int, long      zigzag, then ULEB128: at most 5 bytes (int, which must
 *                  then fit 32 bits) or 10 (long, 64 bits)
 *   float, double  IEEE 754, 4 or 8 bytes little-endian
 *   bytes, string  long length (>= 0, within the bytes left), then the
 *                  bytes (a string's are UTF-8, not NUL-terminated)
 *   fixed          exactly the schema's size in bytes
 *   enum           int: the symbol's index
 *   union          long: the branch's index, then that branch's value
 *   array, map     blocks: long count n > 0, then n items (a map's item is
 *                  a string key, then the value); or a negative count -n,
 *                  then a long byte size of the block's items (so a reader
 *                  may skip it); a count of 0 ends the array or map
 */
#ifndef FL_LAKE_AVRO_H
#define FL_LAKE_AVRO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"

/* ---- writing ---- */

void fl_avro_put_boolean(fl_buf_t *b, bool v);
void fl_avro_put_int(fl_buf_t *b, int32_t v);
void fl_avro_put_long(fl_buf_t *b, int64_t v);
void fl_avro_put_float(fl_buf_t *b, float v);
void fl_avro_put_double(fl_buf_t *b, double v);
void fl_avro_put_bytes(fl_buf_t *b, const void *p, size_t n);
void fl_avro_put_string(fl_buf_t *b, const char *s);
/* A fixed's bytes: exactly the schema's size, no length. */
void fl_avro_put_fixed(fl_buf_t *b, const void *p, size_t n);
/* An enum symbol's or a union branch's index. */
void fl_avro_put_index(fl_buf_t *b, uint32_t index);
/* An array or map block header with a positive count; count 0 ends it. */
void fl_avro_put_block(fl_buf_t *b, int64_t count);
/* The other form: -count, then the byte size of the block's items. */
void fl_avro_put_block_sized(fl_buf_t *b, int64_t count, size_t bytes);

/* ---- reading ---- */

typedef struct fl_avro_reader {
    const uint8_t *p;
    size_t len;
    size_t pos;
} fl_avro_reader_t;

void fl_avro_reader_init(fl_avro_reader_t *r, const void *p, size_t len);
static inline size_t fl_avro_reader_left(const fl_avro_reader_t *r) { return r->len - r->pos; }

/* Every read returns 0 or FLUSS_ERR__CORRUPT (truncated, a varint over 10
 * bytes or 64 bits, an int over 5 bytes or 32 bits, a negative length, a
 * length past the end, a boolean byte other than 0 or 1, an index out of
 * range), the message naming the byte position. A failed read leaves the
 * reader's position undefined. */
int fl_avro_read_long(fl_avro_reader_t *r, int64_t *v, fl_error_t *err);
int fl_avro_read_int(fl_avro_reader_t *r, int32_t *v, fl_error_t *err);
int fl_avro_read_boolean(fl_avro_reader_t *r, bool *v, fl_error_t *err);
int fl_avro_read_float(fl_avro_reader_t *r, float *v, fl_error_t *err);
int fl_avro_read_double(fl_avro_reader_t *r, double *v, fl_error_t *err);
/* bytes and string: a view of *n bytes into the reader's bytes. */
int fl_avro_read_bytes(fl_avro_reader_t *r, const uint8_t **p, size_t *n, fl_error_t *err);
int fl_avro_read_fixed(fl_avro_reader_t *r, size_t size, const uint8_t **p, fl_error_t *err);
/* An enum's symbol index (an int) below n_symbols. */
int fl_avro_read_enum(fl_avro_reader_t *r, size_t n_symbols, uint32_t *index, fl_error_t *err);
/* A union's branch index (a long) below n_branches. */
int fl_avro_read_branch(fl_avro_reader_t *r, size_t n_branches, uint32_t *index,
                        fl_error_t *err);
/* An array or map block header, read before each block: *count items
 * follow, 0 ends the array or map. For a negative count on the wire,
 * *count is its absolute value and *bytes the block's declared byte size
 * (checked against the bytes left); otherwise *bytes is -1. The count is
 * not checked against the bytes left (items may take no bytes): the
 * caller bounds it by its items' least size. */
int fl_avro_read_block(fl_avro_reader_t *r, int64_t *count, int64_t *bytes, fl_error_t *err);

#endif
