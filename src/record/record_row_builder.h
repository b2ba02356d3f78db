/*
 * record_row_builder.h — builds one LogRecordBatch with an INDEXED or
 * COMPACTED body from rows (Fluss's MemoryLogRecordsRowBuilder with
 * IndexedLogRecord / CompactedLogRecord; protocol.md §4.4): each record is
 * int32 LE length of the rest, the ChangeType byte, then the row in that
 * format (types_row_format.h) under the builder's column types. Used by
 * the server for the changelog of primary-key tables whose
 * table.log.format is COMPACTED (or INDEXED with an INDEXED kv format),
 * as 0.9.1's KvTablet writes it. Nested values (ARRAY/MAP/ROW), which
 * cells hold encoded, pass through whole.
 *
 * The V0 header as record_builder.h writes it: attributes bit0 set only
 * for an append-only batch. Thread rule: one user per builder.
 */
#ifndef FL_RECORD_ROW_BUILDER_H
#define FL_RECORD_ROW_BUILDER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common_buf.h"
#include "common_error.h"
#include "record_batch.h"
#include "types_row_format.h"

typedef struct fl_row_builder {
    fl_row_format_t format;
    const fl_datatype_t *const *types; /* borrowed */
    size_t type_count;
    int16_t schema_id;
    bool changelog;
    int32_t rows;
    fl_buf_t body;
} fl_row_builder_t;

void fl_row_builder_init(fl_row_builder_t *b, fl_row_format_t format,
                         const fl_datatype_t *const *types, size_t n, int16_t schema_id,
                         bool changelog);
void fl_row_builder_free(fl_row_builder_t *b);
/* Appends row with change type ct; an encoding error leaves the batch as
 * it was. */
int fl_row_builder_append(fl_row_builder_t *b, const fl_row_t *row, fl_change_type_t ct,
                          fl_error_t *err);
/* Appends the whole V0 batch to out (base offset and commit timestamp 0,
 * writer id and sequence as given, CRC-32C). No rows: the header alone. */
void fl_row_builder_finish(fl_row_builder_t *b, int64_t writer_id, int32_t sequence,
                           fl_buf_t *out);

/* Record number `index` of an INDEXED/COMPACTED body: walks p[*pos, len).
 * Returns 0 with the change type and row bytes, or CORRUPT_RECORD_EXCEPTION
 * naming the record when it does not fit or its change type is unknown.
 * The one walk over this framing (PRODUCE_LOG validation, changelog
 * replay). */
int fl_row_record_next(const uint8_t *p, size_t len, size_t *pos, int32_t index,
                       fl_change_type_t *ct, const uint8_t **row, size_t *row_len,
                       fl_error_t *err);
#endif
