/*
 * arrow_ipc.h — our own Apache Arrow IPC code for the ARROW log format
 * (protocol.md §4.3): the body of a Fluss log batch is exactly one
 * encapsulated Arrow IPC message of type RecordBatch, with no Schema message
 * (readers rebuild the schema from the table schema). This module parses
 * such a message into a borrowed view, projects it to a subset of columns
 * without decoding values (FETCH_LOG projection pushdown, protocol.md §3.7,
 * Fluss's FileLogProjection), writes new messages from column buffers
 * (client writer, server-generated changelogs) with optional buffer-level
 * LZ4_FRAME / ZSTD body compression, and decompresses single buffers.
 *
 * Encapsulated message (all integers little-endian):
 *
 * | off      | size        | field                                         |
 * |----------|-------------|-----------------------------------------------|
 * | 0        | 4           | continuation marker 0xFFFFFFFF                |
 * | 4        | 4           | int32 M: metadata length (we write 8 + M % 8 = 0) |
 * | 8        | M           | flatbuffer Message (+ zero padding)           |
 * | 8 + M    | bodyLength  | body: the buffers at the Buffer entries' offsets |
 *
 * A compressed buffer (BodyCompression{codec, method BUFFER}) is an int64
 * uncompressed length (−1: the bytes that follow are stored raw) followed by
 * the codec's bytes; an empty buffer stays empty.
 *
 * Thread rule: none; every function works on caller-owned values.
 */
#ifndef FL_ARROW_IPC_H
#define FL_ARROW_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "types_datatype.h"

/* Arrow MetadataVersion enum values (Schema.fbs). */
#define FL_ARROW_METADATA_V4 3
#define FL_ARROW_METADATA_V5 4
/* The largest buffer we decompress or write: Arrow's int32 offsets and
 * Fluss's int32 batch lengths make anything above this absurd. */
#define FL_ARROW_BUFFER_BYTES_MAX ((size_t)1 << 31)
/* Nodes/buffers one top-level column may flatten to (nesting is bounded by
 * FL_TYPE_DEPTH_MAX and ROW width by FL_ROW_FIELDS_MAX). */
#define FL_ARROW_SHAPE_MAX (1u << 20)

typedef enum fl_arrow_codec {
    FL_ARROW_CODEC_NONE = -1,
    FL_ARROW_CODEC_LZ4_FRAME = 0, /* values of Arrow's CompressionType */
    FL_ARROW_CODEC_ZSTD = 1,
} fl_arrow_codec_t;

/* FieldNode: one level of one column's flattened (pre-order) type tree. */
typedef struct fl_arrow_node {
    int64_t length;
    int64_t null_count;
} fl_arrow_node_t;

/* Buffer: a byte range of the body. */
typedef struct fl_arrow_buffer {
    int64_t offset;
    int64_t length;
} fl_arrow_buffer_t;

/* ---- column layout ---------------------------------------------------- */

/* The flattened pre-order field nodes and buffers of one top-level column of
 * Fluss type t (Fluss → Arrow mapping, protocol.md §4.3). Returns 0, or -1
 * for an unknown root or a tree deeper than FL_TYPE_DEPTH_MAX or wider than
 * FL_ARROW_SHAPE_MAX. */
int fl_arrow_column_shape(const fl_datatype_t *t, uint32_t *nodes, uint32_t *buffers);
/* Bytes per value in the values buffer of a fixed-width column of Fluss
 * type t (TIME(p>3) and timestamps 8, DECIMAL 16, BINARY(n) n); 0 for
 * BOOLEAN (bits), variable-width and nested types. */
size_t fl_arrow_value_width(const fl_datatype_t *t);

/* ---- parse -------------------------------------------------------------- */

/* A borrowed view of one RecordBatch message: every pointer points into the
 * parsed bytes and is valid while they are. Nodes and buffers stay in their
 * flatbuffer vectors; read them with fl_arrow_batch_node/_buffer. */
typedef struct fl_arrow_batch_view {
    int16_t version;         /* Message.version: V4 or V5 */
    int64_t length;          /* RecordBatch.length: rows */
    size_t node_count;
    size_t buffer_count;
    size_t variadic_count;   /* RecordBatch.variadicBufferCounts (view types) */
    const uint8_t *nodes_raw;   /* node_count 16-byte FieldNode structs */
    const uint8_t *buffers_raw; /* buffer_count 16-byte Buffer structs */
    fl_arrow_codec_t codec;  /* NONE when there is no BodyCompression */
    const uint8_t *metadata; /* the flatbuffer, metadata_len bytes w/ padding */
    size_t metadata_len;
    const uint8_t *body;     /* bodyLength bytes */
    size_t body_len;
    size_t message_len;      /* 8 + metadata_len + body_len: bytes consumed */
} fl_arrow_batch_view_t;

/* Parses and validates the encapsulated message at p[0, len): continuation
 * marker, metadata length, every flatbuffer offset and vtable, the version,
 * the header type (RecordBatch), the compression descriptor, and that every
 * node is sane (0 <= null_count <= length) and every buffer lies within
 * bodyLength, itself within len. Bytes after message_len are ignored.
 * Allocates nothing. Errors: FLUSS_ERR_CORRUPT_RECORD_EXCEPTION. */
int fl_arrow_message_parse(const uint8_t *p, size_t len, fl_arrow_batch_view_t *out,
                           fl_error_t *err);

/* Entry i (< node_count / buffer_count) of a parsed view. */
fl_arrow_node_t fl_arrow_batch_node(const fl_arrow_batch_view_t *v, size_t i);
fl_arrow_buffer_t fl_arrow_batch_buffer(const fl_arrow_batch_view_t *v, size_t i);

/* Appends buffer i's bytes to out, decompressed if the batch is compressed.
 * A compressed buffer whose declared uncompressed length exceeds
 * min(max_bytes, FL_ARROW_BUFFER_BYTES_MAX), or that does not decompress to
 * exactly that length, is corrupt (FLUSS_ERR_CORRUPT_RECORD_EXCEPTION).
 * FLUSS_ERR__NO_MEMORY when out cannot grow. */
int fl_arrow_buffer_get(const fl_arrow_batch_view_t *v, size_t i, size_t max_bytes,
                        fl_buf_t *out, fl_error_t *err);

/* ---- compression (one buffer) ------------------------------------------- */

/* Appends the compressed form of p[0, n) to out: nothing for n = 0, else the
 * int64 uncompressed length + codec bytes, or −1 + the raw bytes when the
 * codec does not shrink them. LZ4_FRAME frames have 64 KB independent
 * blocks and no checksums (what Fluss's Java reader expects); level is the
 * ZSTD level (0 = zstd's default). codec must not be NONE. */
int fl_arrow_compress(fl_arrow_codec_t codec, int level, const uint8_t *p, size_t n,
                      fl_buf_t *out, fl_error_t *err);

/* Appends the uncompressed bytes of the compressed buffer p[0, n) (as above)
 * to out; limits as in fl_arrow_buffer_get. */
int fl_arrow_decompress(fl_arrow_codec_t codec, const uint8_t *p, size_t n,
                        size_t max_bytes, fl_buf_t *out, fl_error_t *err);

/* ---- projection --------------------------------------------------------- */

/* Appends to out a new encapsulated RecordBatch message holding only the
 * columns at positions projected[0..projected_count) (strictly ascending,
 * each < column_count) of msg, whose columns have types column_types. The
 * selected FieldNodes and Buffers keep their values, buffer offsets are
 * recomputed contiguously with each buffer keeping its original padded
 * length (next buffer's offset − its offset; the last one up to
 * bodyLength), the compression descriptor is kept and body bytes are copied
 * verbatim. A message whose node/buffer counts do not match the column
 * shapes, whose buffers are not in ascending order, or whose columns do not
 * have the batch's length is FLUSS_ERR_CORRUPT_RECORD_EXCEPTION; a bad
 * projection is FLUSS_ERR_INVALID_COLUMN_PROJECTION. On error out is left
 * as it was. */
int fl_arrow_project(const uint8_t *msg, size_t len, const fl_datatype_t *const *column_types,
                     size_t column_count, const int32_t *projected, size_t projected_count,
                     fl_buf_t *out, fl_error_t *err);

/* ---- writer ------------------------------------------------------------- */

typedef struct fl_arrow_write_options {
    fl_arrow_codec_t codec; /* NONE, LZ4_FRAME or ZSTD */
    int level;              /* ZSTD level; 0 = zstd's default (3) */
    size_t alignment;       /* body buffer alignment: 8 (0 = 8) or 64 */
} fl_arrow_write_options_t;

/* Builds one encapsulated RecordBatch message: add the nodes and buffers of
 * every column in flattened pre-order, then finish. The writer owns copies
 * of everything added. */
typedef struct fl_arrow_writer {
    fl_arrow_write_options_t opts;
    fl_arrow_node_t *nodes;
    size_t node_count, node_cap;
    fl_arrow_buffer_t *buffers;
    size_t buffer_count, buffer_cap;
    fl_buf_t body;
} fl_arrow_writer_t;

/* opts may be NULL (uncompressed, 8-byte alignment). */
void fl_arrow_writer_init(fl_arrow_writer_t *w, const fl_arrow_write_options_t *opts);
/* Frees everything; the writer may be _init'ed again. */
void fl_arrow_writer_reset(fl_arrow_writer_t *w);
void fl_arrow_writer_add_node(fl_arrow_writer_t *w, int64_t length, int64_t null_count);
/* Copies p[0, n) into the body (compressed per the options) and pads it to
 * the alignment. Errors: FLUSS_ERR__INVALID_ARG for n > FL_ARROW_BUFFER_BYTES_MAX,
 * compression library failures. */
int fl_arrow_writer_add_buffer(fl_arrow_writer_t *w, const void *p, size_t n,
                               fl_error_t *err);
/* Appends the message (Message V5, RecordBatch of `rows` rows) to out. The
 * writer keeps its contents; _reset it to reuse. */
int fl_arrow_writer_finish(fl_arrow_writer_t *w, int64_t rows, fl_buf_t *out,
                           fl_error_t *err);

/* ---- simple column builder ---------------------------------------------- */

typedef enum fl_arrow_column_kind {
    FL_ARROW_COL_BOOL,
    FL_ARROW_COL_INT8,
    FL_ARROW_COL_INT16,
    FL_ARROW_COL_INT32,
    FL_ARROW_COL_INT64,
    FL_ARROW_COL_FLOAT,
    FL_ARROW_COL_DOUBLE,
    FL_ARROW_COL_UTF8,
    FL_ARROW_COL_BINARY,
} fl_arrow_column_kind_t;

/* One flat column: a validity bitmap (LSB first, 1 = valid), values (fixed
 * width, a bit per row for BOOL, int32 offsets for UTF8/BINARY) and data
 * (UTF8/BINARY bytes). Null slots hold zeros. */
typedef struct fl_arrow_column {
    fl_arrow_column_kind_t kind;
    int64_t length;
    int64_t null_count;
    fl_buf_t validity;
    fl_buf_t values;
    fl_buf_t data;
} fl_arrow_column_t;

void fl_arrow_column_init(fl_arrow_column_t *c, fl_arrow_column_kind_t kind);
void fl_arrow_column_reset(fl_arrow_column_t *c); /* frees */
void fl_arrow_column_append_null(fl_arrow_column_t *c);
/* INT8..INT64 (truncated to the width), FLOAT/DOUBLE, BOOL. */
void fl_arrow_column_append_int(fl_arrow_column_t *c, int64_t v);
void fl_arrow_column_append_double(fl_arrow_column_t *c, double v);
void fl_arrow_column_append_bool(fl_arrow_column_t *c, bool v);
/* UTF8/BINARY; FLUSS_ERR__INVALID_ARG when the data outgrows int32 offsets. */
int fl_arrow_column_append_bytes(fl_arrow_column_t *c, const void *p, size_t n,
                                 fl_error_t *err);
/* Adds the column's node and its 2 (fixed width) or 3 (UTF8/BINARY)
 * buffers to w. */
int fl_arrow_column_write(const fl_arrow_column_t *c, fl_arrow_writer_t *w, fl_error_t *err);

#endif
