/*
 * record_builder.h — builds one LogRecordBatch with an ARROW body from
 * rows (Fluss's MemoryLogRecordsArrowBuilder + ArrowWriter): rows are
 * appended column by column into Arrow buffers, then closed into a V0
 * batch (record_batch.h writes the header and CRC). Used by libfluss's
 * append writer and by the server for the changelog of PK tables.
 *
 * Append-only batches (log tables) carry Attributes bit0 = 1 and no
 * change types. A changelog batch (PUT_KV's output, protocol.md §3.10,
 * §4.3) carries bit0 = 0 and, between the header and the Arrow message, a
 * change-type vector of one ChangeType byte per row (Fluss
 * ChangeTypeVectorWriter). A batch of no rows is the header alone, no Arrow
 * message (Fluss ArrowWriter#serializeToOutputView writes nothing then).
 * The row values are typed by the schema the builder was made for
 * (types_row.h). ARRAY, MAP and ROW columns are written as all-NULL
 * columns unless fl_record_builder_set_nested says in which row format
 * the cells' nested values are encoded (types_row_nested.h); then they
 * are decoded into Arrow list, map and struct children. Thread rule: one
 * user per builder.
 */
#ifndef FL_RECORD_BUILDER_H
#define FL_RECORD_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arrow_ipc.h"
#include "record_batch.h"
#include "common_buf.h"
#include "common_error.h"
#include "types_row.h"
#include "types_row_format.h"
#include "types_schema.h"

typedef struct fl_record_builder_options {
    int32_t schema_id;      /* written as the header's int16 SchemaId */
    fl_arrow_codec_t codec; /* table.log.arrow.compression.type */
    int zstd_level;         /* 0 = zstd's default */
} fl_record_builder_options_t;

/* One column's Arrow buffers while rows come in; a nested column's
 * children (ARRAY: the element; MAP: the entries struct, whose children
 * are key and value; ROW: one per field) have lengths of their own. */
typedef struct fl_record_column {
    fl_buf_t validity;
    fl_buf_t values;
    fl_buf_t data;
    int64_t null_count;
    int64_t length;
    struct fl_record_column *children; /* nested mode only */
    size_t child_count;
    fl_row_t scratch; /* a nested value's elements or fields while they are appended */
    const fl_datatype_t **field_types; /* ROW: its fields' types (borrowed from the schema) */
} fl_record_column_t;

/* Embeddable; callers use the functions below, not the fields. */
typedef struct fl_record_builder {
    const fl_schema_t *schema; /* borrowed: outlives the builder */
    fl_record_builder_options_t opts;
    int64_t rows;
    fl_record_column_t *cols;
    size_t bytes; /* uncompressed Arrow bytes so far */
    fl_buf_t change_types; /* one byte per row, +A for fl_record_builder_append */
    bool changelog;        /* finish writes bit0 = 0 and the vector */
    bool nested;           /* nested cells hold values in nested_format */
    fl_row_format_t nested_format;
} fl_record_builder_t;

/* FLUSS_ERR__INVALID_ARG naming the column when a column type cannot be
 * laid out in Arrow. */
int fl_record_builder_check_schema(const fl_schema_t *schema, fl_error_t *err);
void fl_record_builder_init(fl_record_builder_t *b, const fl_schema_t *schema,
                            const fl_record_builder_options_t *opts);
void fl_record_builder_free(fl_record_builder_t *b);
/* Writes ARRAY/MAP/ROW cells as values from now on (the builder must be
 * empty): their bytes are BinaryArray / BinaryMap / a row in format fmt,
 * checked with fl_nested_check when appended (a value that is not
 * becomes NULL; libfluss's encoder never makes one). */
void fl_record_builder_set_nested(fl_record_builder_t *b, fl_row_format_t fmt);
/* Empties the builder (an append-only one again) and keeps its memory. */
void fl_record_builder_clear(fl_record_builder_t *b);
/* Makes the batch a changelog batch before any row is appended with a
 * change type (so that finishing it without rows gives the empty
 * changelog batch of a PUT_KV that changed nothing); until _clear. */
void fl_record_builder_set_changelog(fl_record_builder_t *b);
/* Appends row (row->column_count = the schema's, values of the column
 * types, non-NULL where a column is NOT NULL: the caller checked). */
void fl_record_builder_append(fl_record_builder_t *b, const fl_row_t *row);
/* Appends row with change type ct (FL_CHANGE_*, record_batch.h) and makes
 * the batch a changelog batch; rows appended with fl_record_builder_append
 * before or after are +A in its vector. */
void fl_record_builder_append_change(fl_record_builder_t *b, const fl_row_t *row,
                                     fl_change_type_t ct);
int64_t fl_record_builder_rows(const fl_record_builder_t *b);
/* Uncompressed Arrow bytes appended so far (a batch-size estimate). */
size_t fl_record_builder_size(const fl_record_builder_t *b);
/* Appends a whole V0 LogRecordBatch (protocol.md §4.1) of the rows to
 * out: base offset and commit timestamp 0, append-only unless a changelog
 * (then the change-type vector before the Arrow message), the options'
 * schema id and compression, writer id and batch sequence as given (-1
 * for none), CRC-32C over [25, end). No rows: the header alone. On error
 * out is as it was. The builder keeps its rows; _clear it to reuse. */
int fl_record_builder_finish(fl_record_builder_t *b, int64_t writer_id, int32_t sequence,
                             fl_buf_t *out, fl_error_t *err);
/* Appends an empty V0 changelog batch to out without a builder: the
 * header alone, RecordCount 0, LastOffsetDelta 0, Attributes 0, the given
 * schema id, writer id and sequence (what a PUT_KV that changed nothing
 * appends, KvTablet#putAsLeader). */
void fl_record_builder_write_empty_changelog(fl_buf_t *out, int16_t schema_id, int64_t writer_id,
                                             int32_t sequence);

#endif
