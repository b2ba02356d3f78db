/*
 * tier_columns.h — the tiering writer's column path: one decoded Arrow
 * column of a log batch (arrow_decode.h) converted in one loop into the
 * Parquet values of its lake column (tier_convert.h's map) and counted
 * into the file's metrics (tier_metrics.h), so that an ARROW batch is one
 * fl_pq_writer_append of all its rows instead of one per row.
 *
 * The values are those the row path gives (record_rows, then
 * fl_tier_value_of), value for value: the same floor division for
 * timestamps (fl_arrow_time_cell, then fl_tier_value_of), FLOAT widened to
 * double and back, DECIMAL checked against its precision. A column the
 * path cannot convert exactly — a NULL in a NOT NULL column, a value that
 * overflows, a BINARY(n) slot of another width — is refused with
 * FL_TIER_COLUMN_ROW_PATH and no error: the row path then writes the batch
 * and names the record, as it always did. The metrics may have counted
 * part of the column by then; the caller's batch fails either way.
 *
 * Thread rule: none; the caller's buffers.
 */
#ifndef FL_TIER_COLUMNS_H
#define FL_TIER_COLUMNS_H

#include <stdbool.h>
#include <stdint.h>

#include "arrow_decode.h"
#include "common_buf.h"
#include "lake_parquet_writer.h"
#include "tier_metrics.h"
#include "types_datatype.h"

typedef enum fl_tier_column_outcome {
    FL_TIER_COLUMN_DONE = 0,
    FL_TIER_COLUMN_ROW_PATH = 1, /* a value only the row path can report */
} fl_tier_column_outcome_t;

/* Buffers one column's values between batches (reused). */
typedef struct fl_tier_column_buf {
    fl_buf_t values; /* rows values of the spec's physical type */
    fl_buf_t valid;  /* rows bytes, 0 for a NULL */
} fl_tier_column_buf_t;

void fl_tier_column_buf_init(fl_tier_column_buf_t *b);
void fl_tier_column_buf_free(fl_tier_column_buf_t *b);

/* Rows [0, rows) of a (NULL: a column added since the batch's schema, all
 * NULL), an array of the lake column's type t written as spec, into b and
 * *out (which points into b and into a: valid until either changes), and
 * into m. */
fl_tier_column_outcome_t fl_tier_column_convert(const fl_arrow_array_t *a,
                                                const fl_datatype_t *t,
                                                const fl_pq_column_spec_t *spec, int64_t rows,
                                                fl_tier_metrics_t *m, fl_tier_column_buf_t *b,
                                                fl_pq_column_data_t *out);

/* A system column of rows values first, first + step, ... (step 0: one
 * value), into b, *out and m. spec INT32 or INT64. */
void fl_tier_column_sequence(int64_t first, int64_t step, const fl_pq_column_spec_t *spec,
                             int64_t rows, fl_tier_metrics_t *m, fl_tier_column_buf_t *b,
                             fl_pq_column_data_t *out);

#endif
