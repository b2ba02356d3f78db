/*
 * record_rows.h — the records of one log batch as rows of cells, whatever
 * the table's log format (Fluss's LogRecordBatch#records with its
 * LogRecordReadContext): for readers that want every row of a stored
 * batch with its change type and offset — the tiering writer, which turns
 * a bucket's log into lake files. It is the one walk over the three
 * bodies (record_validate.h has their table):
 *
 * | format              | change type of record i              | row                          |
 * |---------------------|--------------------------------------|------------------------------|
 * | ARROW, append-only  | +A                                   | row i of the decoded columns |
 * | ARROW, changelog    | byte i of the change-type vector     | (arrow_decode + arrow_rows)  |
 * | INDEXED, COMPACTED  | the record's attributes byte         | the record's row bytes       |
 *
 * The rows are decoded under the types the caller gives, which must be
 * those of the batch's own schema id; mapping them to another schema of
 * the table is the caller's (types_schema_map.h). The bytes are checked as
 * they are read (they may come from disk): an Arrow message whose row
 * count is not the header's, a change type outside 0..4, bytes left after
 * the last record are CORRUPT_RECORD_EXCEPTION. The header and CRC are the
 * caller's (record_batch.h).
 *
 * Thread rule: an iterator has one user; it borrows the batch's bytes and
 * the types, which must outlive it.
 */
#ifndef FL_RECORD_ROWS_H
#define FL_RECORD_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "arrow_decode.h"
#include "common_error.h"
#include "record_batch.h"
#include "record_validate.h"
#include "types_datatype.h"
#include "types_row.h"

/* A decompressed Arrow buffer may not exceed this (the bound the changelog
 * replay uses too). */
#define FL_BATCH_ROWS_BUFFER_MAX ((size_t)1 << 30)

typedef struct fl_batch_rows {
    const fl_batch_view_t *b;          /* borrowed */
    fl_log_format_t format;
    const fl_datatype_t *const *types; /* borrowed: the batch schema's columns */
    size_t n;
    int32_t index;                     /* the next record */
    size_t pos;                        /* INDEXED/COMPACTED: its byte position in b */
    const uint8_t *change_types;       /* ARROW changelog: the vector; NULL: all +A */
    fl_arrow_array_t *cols;            /* ARROW: n decoded columns */
} fl_batch_rows_t;

typedef enum fl_batch_rows_next {
    FL_BATCH_ROWS_ERROR = -1, /* err set */
    FL_BATCH_ROWS_END = 0,
    FL_BATCH_ROWS_ROW = 1,
} fl_batch_rows_next_t;

/* Prepares reading the records of b (parsed by fl_batch_parse) in format
 * under types[0..n). ARROW bodies are decoded here, column by column. On
 * error nothing is held. */
int fl_batch_rows_open(fl_batch_rows_t *it, const fl_batch_view_t *b, fl_log_format_t format,
                       const fl_datatype_t *const *types, size_t n, fl_error_t *err);
/* The next record: its change type and row (reset to n cells and filled);
 * its offset is b->base_offset + the record's index, it->index - 1 after
 * the call. */
fl_batch_rows_next_t fl_batch_rows_next(fl_batch_rows_t *it, fl_change_type_t *ct, fl_row_t *row,
                                        fl_error_t *err);
void fl_batch_rows_close(fl_batch_rows_t *it);

#endif
