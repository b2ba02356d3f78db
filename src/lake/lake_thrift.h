/*
 * lake_thrift.h — the Thrift compact protocol (apache/thrift
 * doc/specs/thrift-compact-protocol.md), the encoding of every Parquet
 * footer and page header: a writer into an fl_buf_t and a bounds-checked
 * reader over untrusted bytes. No I/O, no allocation in the reader.
 * Thread rule: none; each writer/reader belongs to its caller.
 *
 *   field header   (delta << 4) | type            delta = id - last id, 1..15
 *                  type, zigzag varint i16 id      otherwise (long form)
 *   bool field     type nibble 1 = true, 2 = false, no value byte
 *   i16/i32/i64    zigzag ULEB128
 *   binary         ULEB128 length, bytes
 *   list           (n << 4) | elem                 n < 15
 *                  0xF0 | elem, ULEB128 n          otherwise
 *   map            ULEB128 n, then (key << 4) | value if n > 0
 *   struct         fields, then stop (0x00); the last field id restarts at
 *                  0 in each nested struct and comes back after it (a stack)
 */
#ifndef FL_LAKE_THRIFT_H
#define FL_LAKE_THRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"

enum {
    FL_TC_STOP = 0,
    FL_TC_TRUE = 1, /* bool fields: the value is in the type nibble */
    FL_TC_FALSE = 2,
    FL_TC_BYTE = 3,
    FL_TC_I16 = 4,
    FL_TC_I32 = 5,
    FL_TC_I64 = 6,
    FL_TC_DOUBLE = 7,
    FL_TC_BINARY = 8,
    FL_TC_LIST = 9,
    FL_TC_SET = 10,
    FL_TC_MAP = 11,
    FL_TC_STRUCT = 12,
};

/* Nesting of structs and containers either side accepts. Parquet's deepest
 * is 5 (FileMetaData > RowGroup > ColumnChunk > ColumnMetaData > Statistics). */
#define FL_TC_DEPTH_MAX 32

typedef struct fl_tc_writer {
    fl_buf_t *out;
    int depth; /* open structs */
    int16_t last; /* last field id in the innermost struct */
    int16_t stack[FL_TC_DEPTH_MAX];
} fl_tc_writer_t;

void fl_tc_writer_init(fl_tc_writer_t *w, fl_buf_t *out);
/* A struct's fields follow begin; end writes its stop byte. The outermost
 * struct (FileMetaData, PageHeader) is begun like any other. */
void fl_tc_struct_begin(fl_tc_writer_t *w);
void fl_tc_struct_end(fl_tc_writer_t *w);
void fl_tc_field_header(fl_tc_writer_t *w, int16_t id, uint8_t type);
void fl_tc_field_bool(fl_tc_writer_t *w, int16_t id, bool v);
void fl_tc_field_i32(fl_tc_writer_t *w, int16_t id, int32_t v);
void fl_tc_field_i64(fl_tc_writer_t *w, int16_t id, int64_t v);
void fl_tc_field_binary(fl_tc_writer_t *w, int16_t id, const void *p, size_t n);
void fl_tc_field_string(fl_tc_writer_t *w, int16_t id, const char *s);
/* Field header of type struct, then struct_begin. */
void fl_tc_field_struct_begin(fl_tc_writer_t *w, int16_t id);
/* Field header of type list, then the list header. */
void fl_tc_field_list_begin(fl_tc_writer_t *w, int16_t id, uint8_t elem, uint32_t n);
/* Bare values (list elements). */
void fl_tc_list_header(fl_tc_writer_t *w, uint8_t elem, uint32_t n);
void fl_tc_i32(fl_tc_writer_t *w, int32_t v);
void fl_tc_i64(fl_tc_writer_t *w, int64_t v);
void fl_tc_binary(fl_tc_writer_t *w, const void *p, size_t n);

/* Varints (ULEB128): fl_buf_put_uvarint (common_buf.h), shared with the
 * RLE hybrid. */
static inline uint64_t fl_tc_zigzag64(int64_t v) { return fl_zigzag64(v); }
static inline int64_t fl_tc_unzigzag64(uint64_t v) { return fl_unzigzag64(v); }

typedef struct fl_tc_reader {
    const uint8_t *p;
    size_t len;
    size_t pos;
    int depth;
    int16_t last;
    int16_t stack[FL_TC_DEPTH_MAX];
} fl_tc_reader_t;

void fl_tc_reader_init(fl_tc_reader_t *r, const uint8_t *p, size_t len);
/* Every read returns 0 or FLUSS_ERR__CORRUPT (truncated, over-long
 * varint, value out of range, nesting past FL_TC_DEPTH_MAX). */
int fl_tc_read_struct_begin(fl_tc_reader_t *r, fl_error_t *err);
/* After the stop field was read. */
void fl_tc_read_struct_end(fl_tc_reader_t *r);
/* *type FL_TC_STOP (id 0) ends the struct. */
int fl_tc_read_field(fl_tc_reader_t *r, int16_t *id, uint8_t *type, fl_error_t *err);
int fl_tc_read_uvarint(fl_tc_reader_t *r, uint64_t *v, fl_error_t *err);
int fl_tc_read_i32(fl_tc_reader_t *r, int32_t *v, fl_error_t *err);
int fl_tc_read_i64(fl_tc_reader_t *r, int64_t *v, fl_error_t *err);
/* A view into the reader's bytes. */
int fl_tc_read_binary(fl_tc_reader_t *r, const uint8_t **p, uint32_t *n, fl_error_t *err);
/* *n is at most the bytes left (every element takes at least one), so a
 * caller may allocate n elements without trusting it further. */
int fl_tc_read_list_header(fl_tc_reader_t *r, uint8_t *elem, uint32_t *n, fl_error_t *err);
/* The value of a bool field from its type nibble; CORRUPT if not a bool. */
int fl_tc_field_bool_value(uint8_t type, bool *v, fl_error_t *err);
/* Skips the value of a field of this type (in_field: a bool field has no
 * value byte; a bool list element has one). */
int fl_tc_skip(fl_tc_reader_t *r, uint8_t type, bool in_field, fl_error_t *err);

#endif
