/*
 * types_row_compacted.h — Fluss's compacted encodings of row values
 * (protocol.md §5.4 CompactedRow field encodings, §5.6 CompactedKeyEncoder):
 * today the key encoding that primary keys and bucket keys use — the
 * fields of the key columns in key order, no null bitmap, NULL refused.
 * All integers little-endian; "uvarint" is unsigned LEB128 of the value's
 * two's complement (no zigzag).
 *
 * | type                                   | bytes                                          |
 * |----------------------------------------|------------------------------------------------|
 * | BOOLEAN, TINYINT                       | 1                                              |
 * | SMALLINT                               | 2 LE                                           |
 * | INTEGER, DATE (days), TIME (ms of day) | uvarint of the 32-bit value (negatives: 5 B)   |
 * | BIGINT                                 | uvarint of the 64-bit value (up to 10 B)       |
 * | FLOAT, DOUBLE                          | 4 / 8 IEEE 754 LE                              |
 * | CHAR, STRING, BINARY, BYTES            | uvarint length + bytes                         |
 * | DECIMAL(p <= 18)                       | unscaled value like BIGINT                     |
 * | DECIMAL(p > 18)                        | uvarint length + BigInteger.toByteArray (BE)   |
 * | TIMESTAMP(_LTZ)(p)                     | epoch ms like BIGINT; p > 3: + nanos like INT  |
 *
 * ARRAY, MAP and ROW keys are not supported (FLUSS_ERR__INVALID_ARG).
 * Thread rule: none; functions work on caller-owned values.
 */
#ifndef FL_TYPES_ROW_COMPACTED_H
#define FL_TYPES_ROW_COMPACTED_H

#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "types_row.h"
#include "types_schema.h"

/* Appends v as unsigned LEB128 (CompactedRow varints). */
void fl_compacted_put_uvarint(fl_buf_t *b, uint64_t v);

/* Appends the compacted key encoding of the columns cols[0..n) (each <
 * schema->column_count and < row->column_count) of row, typed by schema,
 * to out. A NULL key column or one of an unsupported type is
 * FLUSS_ERR__INVALID_ARG naming the column; out may then hold a part of
 * the key. */
int fl_compacted_key_encode(const fl_row_t *row, const fl_schema_t *schema, const int32_t *cols,
                            size_t n, fl_buf_t *out, fl_error_t *err);

#endif
