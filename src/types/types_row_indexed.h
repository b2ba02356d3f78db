/*
 * types_row_indexed.h — Fluss's IndexedRow (protocol.md §5.5; the INDEXED
 * KV and log formats): fixed-width fields and a table of the lengths of
 * the variable-length ones, so a reader finds any field without parsing
 * the fields before it. Little-endian throughout.
 *
 * | part              | bytes                                                         |
 * |-------------------|---------------------------------------------------------------|
 * | null bitmap       | (n + 7) / 8; field i NULL <=> bit i & 7 of byte i >> 3        |
 * | length slots      | int32 per variable-length column of the schema; the non-NULL  |
 * |                   | variable-length values' lengths in column order, then zeros   |
 * | fields            | each non-NULL field in column order, widths below             |
 *
 * Variable-length (IndexedRow.isFixedLength false in 0.9.1): STRING,
 * BYTES, ARRAY, MAP, ROW, DECIMAL(p > 18). Fixed widths: BOOLEAN, TINYINT
 * 1; SMALLINT 2; INTEGER, FLOAT, DATE, TIME 4; BIGINT, DOUBLE,
 * DECIMAL(p <= 18) unscaled 8; TIMESTAMP(_LTZ) ms 8, p > 3 + int32 nanos
 * (12); CHAR(n), BINARY(n) exactly n bytes, zero padded (a reader drops
 * trailing zero bytes, as IndexedRow.getChar/getBinary do). DECIMAL(p >
 * 18) is BigInteger.toByteArray (big-endian). ARRAY, MAP and ROW values
 * (BinaryArray, BinaryMap, nested IndexedRow) are not interpreted: a
 * decoded cell holds their bytes (off/len in the arena) and the encoder
 * writes them back verbatim, so encode(decode(x)) == x.
 *
 * As for CompactedRow (types_row_compacted.h) the decoder accepts exactly
 * one encoding per row, which Fluss's writer produces: padding null bits
 * clear, unused length slots zero, lengths >= 0, BOOLEAN 0/1, nanos
 * 0..999999, DECIMAL bytes 1..16 and minimal, nothing after the last
 * field. NOT NULL is not enforced on decode.
 * Thread rule: none; functions work on caller-owned values.
 */
#ifndef FL_TYPES_ROW_INDEXED_H
#define FL_TYPES_ROW_INDEXED_H

#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "types_datatype.h"
#include "types_row.h"

/* Appends the IndexedRow of row (row->column_count >= n; cells typed by
 * types[0..n)) to out. FLUSS_ERR__INVALID_ARG naming the column for a NULL
 * in a NOT NULL column, or a CHAR(n)/BINARY(n) value longer than n bytes;
 * out is then as it was. */
int fl_indexed_row_encode(const fl_row_t *row, const fl_datatype_t *const *types, size_t n,
                          fl_buf_t *out, fl_error_t *err);

/* Decodes the IndexedRow p[0, len) of types[0..n) into *row (initialised,
 * any count; becomes n cells). Bytes that are not exactly one such row are
 * FLUSS_ERR_CORRUPT_RECORD_EXCEPTION naming the column; *row is then all
 * NULL. */
int fl_indexed_row_decode(const uint8_t *p, size_t len, const fl_datatype_t *const *types,
                          size_t n, fl_row_t *row, fl_error_t *err);

#endif
