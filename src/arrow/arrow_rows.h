/*
 * arrow_rows.h — one row of decoded Arrow columns (arrow_decode.h) as a
 * row of Fluss cells (types_row.h): what Fluss's ArrowReader hands out as
 * an InternalRow, and the inverse of the batch builder (record_builder.h)
 * for every scalar type. Values go back from Arrow units to cell units:
 *
 * | Fluss type            | Arrow value           | cell                                   |
 * |-----------------------|-----------------------|----------------------------------------|
 * | BOOLEAN, TINYINT..BIGINT, DATE | bit / int     | i                                      |
 * | TIME(p)               | s / ms / us / ns      | i = ms of day (sub-ms dropped)         |
 * | TIMESTAMP(_LTZ)(p)    | s / ms / us / ns      | i = epoch ms (floor), nanos = the rest  |
 * | FLOAT, DOUBLE         | IEEE 754              | d                                      |
 * | DECIMAL(p,s)          | 128-bit unscaled      | dec                                    |
 * | CHAR, STRING, BYTES   | offsets + data        | bytes in the row's arena               |
 * | BINARY(n)             | n bytes               | the n bytes                            |
 * | ARRAY, MAP, ROW       | —                     | NULL: the builder writes them all-NULL |
 *
 * TIME(0) and TIMESTAMP(0) hold whole seconds, so a cell the builder got
 * with sub-second millis comes back truncated to the second; every other
 * cell comes back as it went in. Thread rule: none.
 */
#ifndef FL_ARROW_ROWS_H
#define FL_ARROW_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arrow_decode.h"
#include "common_error.h"
#include "types_datatype.h"
#include "types_row.h"

/* The ms (and nanos of the ms, 0 for TIME) of a TIME/TIMESTAMP(_LTZ)
 * value v in the unit of its column of type t into c->i and c->nanos;
 * false if seconds overflow as millis. The one reading of these units:
 * the tiering writer's column path converts with it too. */
bool fl_arrow_time_cell(const fl_datatype_t *t, int64_t v, fl_cell_t *c);

/* Fills *row (initialised, any count; becomes n cells) with row i of the
 * columns cols[0..n), decoded for types[0..n) (i < every column's length).
 * A seconds TIME/TIMESTAMP value whose millis do not fit in 64 bits is
 * FLUSS_ERR_CORRUPT_RECORD_EXCEPTION naming the column; *row is then all
 * NULL. */
int fl_arrow_row_read(const fl_arrow_array_t *cols, size_t n, const fl_datatype_t *const *types,
                      int64_t i, fl_row_t *row, fl_error_t *err);

#endif
