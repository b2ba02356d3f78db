/*
 * arrow_decode.h — the columns of a parsed Arrow RecordBatch message
 * (arrow_ipc.h fl_arrow_message_parse) decoded into arrays that own their
 * buffers (decompressed), and the values read out of them: Fluss's
 * ArrowLogRecordReader / ArrowReader. The Fluss type of each column comes
 * from the table schema (there is no Schema message, protocol.md §4.3).
 * Bytes come from a peer and are validated: buffer sizes against node
 * lengths, offsets ascending and inside their data or child, struct
 * children as long as their parent, nesting bounded by FL_TYPE_DEPTH_MAX.
 * Thread rule: none; arrays have one owner.
 *
 * Arrays per Fluss type (protocol.md §4.3; values little-endian):
 *
 * | kind                 | values                                   | data / children        |
 * |----------------------|------------------------------------------|------------------------|
 * | BOOLEAN              | 1 bit per row, LSB first                 | —                      |
 * | TINYINT..BIGINT      | 1/2/4/8-byte two's complement            | —                      |
 * | FLOAT, DOUBLE        | IEEE 754 binary32/64                     | —                      |
 * | DECIMAL(p,s)         | 16-byte two's complement unscaled        | —                      |
 * | DATE                 | int32 days                               | —                      |
 * | TIME(p)              | p<=3 int32 s|ms, p>3 int64 us|ns         | —                      |
 * | TIMESTAMP(_LTZ)(p)   | int64 s / ms / us / ns (p 0, 1-3, 4-6, 7-9) | —                   |
 * | BINARY(n)            | n bytes per row                          | —                      |
 * | CHAR, STRING, BYTES  | int32 offsets (length + 1)               | data: the bytes        |
 * | ARRAY                | int32 offsets into the child             | children[0] element    |
 * | MAP                  | int32 offsets into the entries           | children[0] ENTRIES    |
 * | ENTRIES (of a MAP)   | —                                        | children key, value    |
 * | ROW                  | —                                        | one child per field    |
 */
#ifndef FL_ARROW_DECODE_H
#define FL_ARROW_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arrow_ipc.h"

#define FL_ARROW_ARRAY_ENTRIES (-1) /* kind of a MAP's "entries" struct */

typedef struct fl_arrow_array {
    int kind;                  /* fl_type_root_t, or FL_ARROW_ARRAY_ENTRIES */
    const fl_datatype_t *type; /* borrowed from the caller; NULL for entries */
    int64_t length;
    int64_t null_count;
    fl_buf_t validity;         /* empty: all valid */
    fl_buf_t values;           /* fixed-width values, bits, or int32 offsets */
    fl_buf_t data;             /* CHAR/STRING/BYTES bytes */
    size_t child_count;
    struct fl_arrow_array *children;
} fl_arrow_array_t;

/* Walks the nodes and buffers of one parsed message, column by column. */
typedef struct fl_arrow_decoder {
    const fl_arrow_batch_view_t *view; /* borrowed */
    size_t next_node;
    size_t next_buffer;
    size_t buffer_bytes_max; /* a decompressed buffer may not exceed this */
} fl_arrow_decoder_t;

void fl_arrow_decoder_init(fl_arrow_decoder_t *d, const fl_arrow_batch_view_t *v,
                           size_t buffer_bytes_max);
/* Decodes the next top-level column, of Fluss type t (which must outlive
 * *out), into *out: every buffer copied (decompressed) and checked as in
 * the header comment, and the column at least as long as the batch.
 * FLUSS_ERR_CORRUPT_RECORD_EXCEPTION for bytes that do not fit t;
 * FLUSS_ERR__NO_MEMORY when a buffer cannot be held. On error *out is
 * empty (freed). */
int fl_arrow_decoder_next(fl_arrow_decoder_t *d, const fl_datatype_t *t, fl_arrow_array_t *out,
                          fl_error_t *err);
/* An empty array of kind (t's root, or FL_ARROW_ARRAY_ENTRIES with no
 * type) and type t: no length, buffers, or children yet. */
void fl_arrow_array_init(fl_arrow_array_t *a, const fl_datatype_t *t, int kind);
/* Frees an array and its children; it is empty afterwards. */
void fl_arrow_array_free(fl_arrow_array_t *a);

/* ---- values (i < a->length) ---- */

bool fl_arrow_array_is_null(const fl_arrow_array_t *a, int64_t i);
/* The accessors below read slot i of an array of the named kinds; a NULL
 * slot reads as whatever the writer left there (zeros for ours). */
bool fl_arrow_array_bool(const fl_arrow_array_t *a, int64_t i);
/* TINYINT, SMALLINT, INTEGER, BIGINT, DATE, TIME, TIMESTAMP(_LTZ): the
 * value sign-extended, in the column's unit. */
int64_t fl_arrow_array_int(const fl_arrow_array_t *a, int64_t i);
/* FLOAT (widened), DOUBLE. */
double fl_arrow_array_double(const fl_arrow_array_t *a, int64_t i);
/* DECIMAL: the unscaled value (scale in a->type). */
__int128 fl_arrow_array_decimal(const fl_arrow_array_t *a, int64_t i);
/* CHAR, STRING, BYTES, BINARY: the bytes of slot i (never NULL; valid
 * while the array is). */
const uint8_t *fl_arrow_array_bytes(const fl_arrow_array_t *a, int64_t i, size_t *len);
/* ARRAY, MAP: the child slots [*start, *end) of slot i. */
void fl_arrow_array_child_range(const fl_arrow_array_t *a, int64_t i, int64_t *start,
                                int64_t *end);

#endif
