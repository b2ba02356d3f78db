/*
 * record_validate.h — what a leader checks of PRODUCE_LOG records beyond the
 * batch header and CRC before it stores them (Fluss LogTablet#append does
 * only the CRC; fluss-c is stricter): every batch's schema id exists, and its
 * records match its header and that schema in structure, for the three log
 * formats (table.log.format, Fluss LogFormat). The rule it keeps: a batch we
 * accepted never makes a bucket unreadable, unprojected or projected. Arrow
 * values are not decoded; INDEXED and COMPACTED rows are, strictly, so rows
 * of the other row format do not pass. A refusal of records that are whole
 * and valid in another format says so ("records are not Arrow IPC; this
 * table's log format is ARROW (they are INDEXED rows ...)"): the reference
 * stores such a batch and its readers then fail on the bucket. Thread rule:
 * none; works on caller-owned bytes.
 *
 * Records after a batch's header (+ statistics), protocol.md §4.3-4.4:
 *
 * | format    | RecordCount = 0 | RecordCount = n > 0                                        |
 * |-----------|-----------------|------------------------------------------------------------|
 * | ARROW     | nothing         | [n change-type bytes unless append-only] + one Arrow IPC   |
 * |           |                 | RecordBatch message of n rows, exactly to the batch end    |
 * | INDEXED   | nothing         | n × (int32 LE length L ≥ 1, ChangeType byte, L − 1 row     |
 * | COMPACTED |                 | bytes), exactly to the batch end                           |
 *
 * ChangeType bytes are 0..4 (+A, +I, -U, +U, -D). A row is exactly one
 * IndexedRow / CompactedRow of the batch's schema (types_row_indexed.h,
 * types_row_compacted.h).
 */
#ifndef FL_RECORD_VALIDATE_H
#define FL_RECORD_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "common_error.h"
#include "record_project.h"

/* Fluss LogFormat (table.log.format). */
typedef enum fl_log_format {
    FL_LOG_FORMAT_ARROW = 0,
    FL_LOG_FORMAT_INDEXED = 1,
    FL_LOG_FORMAT_COMPACTED = 2,
} fl_log_format_t;

/* The format named by a table.log.format value (any case); NULL is the
 * default ARROW. Returns -1 for an unknown name. */
int fl_log_format_from_name(const char *name);

/* Checks every whole batch of a PRODUCE_LOG bucket's records[0, len) (the
 * batch set): header (fl_batch_parse), CRC, schema id (schema_types(ctx, id)
 * non-NULL, else FLUSS_ERR_SCHEMA_NOT_EXIST), then the records per the
 * table above and, for ARROW, fl_arrow_validate (arrow_validate.h). Any
 * failure refuses the whole set (FLUSS_ERR_CORRUPT_RECORD_EXCEPTION for
 * records that do not match their header or schema, or that end inside a
 * batch); the message names the batch by its byte position. An empty set
 * passes (the log refuses it). Batch sizes are not capped here. */
int fl_record_validate(const uint8_t *records, size_t len, fl_log_format_t log_format,
                       fl_schema_types_fn schema_types, void *ctx, fl_error_t *err);

#endif
