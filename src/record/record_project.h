/*
 * record_project.h — server-side projection pushdown over ARROW log
 * batches (Fluss FileLogProjection): rewrites whole LogRecordBatches so
 * their Arrow body holds only the requested columns, in schema order.
 * Per batch: the header is copied with Length updated and, for magic >= 1,
 * StatisticsLength set to 0 and the statistics dropped; the CRC is left
 * as it was (clients skip the CRC check of projected batches); the
 * change-type vector is copied; the Arrow RecordBatch message is rebuilt by
 * fl_arrow_project (buffers copied verbatim, never decoded). Empty batches
 * pass through unchanged.
 */
#ifndef FL_RECORD_PROJECT_H
#define FL_RECORD_PROJECT_H

#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "types_datatype.h"

/* Positions of the latest schema's columns as positions in schema
 * schema_id's (out has n entries); an error when a column is not there.
 * Batches keep the schema they were written with, and a dropped column
 * shifts the ones after it. */
typedef int (*fl_schema_positions_fn)(void *ctx, int16_t schema_id, const int32_t *fields,
                                      size_t n, int32_t *out, fl_error_t *err);

/* The projection requested for one table: positions strictly ascending.
 * With `positions` they are the latest schema's, translated per batch;
 * without, every batch is projected at them as they are. */
typedef struct fl_projection {
    const int32_t *fields;
    size_t field_count;
    fl_schema_positions_fn positions; /* NULL: as they are */
} fl_projection_t;

/* Checks a requested projection against a schema of column_count columns:
 * non-empty, strictly ascending, in range. INVALID_COLUMN_PROJECTION. */
int fl_projection_check(const int32_t *fields, size_t n, size_t column_count, fl_error_t *err);

/* Schema lookup for a batch's schema id: the column types of that schema,
 * or NULL when unknown. */
typedef const fl_datatype_t *const *(*fl_schema_types_fn)(void *ctx, int16_t schema_id,
                                                          size_t *column_count);

/* Appends to out the projection of every whole batch in records. */
int fl_record_project(const uint8_t *records, size_t len, const fl_projection_t *p,
                      fl_schema_types_fn schema_types, void *ctx, fl_buf_t *out,
                      fl_error_t *err);

#endif
