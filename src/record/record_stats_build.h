/*
 * record_stats_build.h — computes the column statistics of an ARROW log
 * batch on the server (fluss-c's, beyond Fluss): for writers that send
 * plain magic 0 batches (the Java client 0.9.1) the server derives what a
 * writer of Fluss main's magic 1 would have embedded — null count, minimum
 * and maximum of the listed columns — in the same byte layout
 * (record_stats.h), so one filter path serves both. The values are decoded
 * (arrow_decode.h), never trusted from the writer. Thread rule: none.
 */
#ifndef FL_RECORD_STATS_BUILD_H
#define FL_RECORD_STATS_BUILD_H

#include <stddef.h>

#include "common_buf.h"
#include "common_error.h"
#include "record_batch.h"
#include "types_datatype.h"

/* Appends to out the statistics of the columns at positions cols[0..ncols)
 * (ascending) of batch b, an ARROW batch whose schema has types[0..n).
 * Columns whose values cannot be summarised (NaN, a DECIMAL wider than 18
 * digits, a string over 1 KiB) are left out of the list. Returns 0 with
 * nothing appended when no column is left; CORRUPT_RECORD_EXCEPTION when
 * the batch does not decode. */
int fl_stats_build(const fl_batch_view_t *b, const fl_datatype_t *const *types, size_t n,
                   const int *cols, size_t ncols, fl_buf_t *out, fl_error_t *err);

#endif
