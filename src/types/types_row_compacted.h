/*
 * types_row_compacted.h — Fluss's CompactedRow (protocol.md §5.4; the
 * default KV value format and the COMPACTED log format) and the key
 * encoding built from its fields (§5.6 CompactedKeyEncoder: the fields of
 * the key columns in key order, no null bitmap, NULL refused). All
 * integers little-endian; "uvarint" is unsigned LEB128 of the value's
 * two's complement (no zigzag).
 *
 * Row = null bitmap of (n + 7) / 8 bytes (field i NULL <=> bit i & 7 of
 * byte i >> 3), then each non-NULL field in column order:
 *
 * | type                                   | bytes                                          |
 * |----------------------------------------|------------------------------------------------|
 * | BOOLEAN, TINYINT                       | 1                                              |
 * | SMALLINT                               | 2 LE                                           |
 * | INTEGER, DATE (days), TIME (ms of day) | uvarint of the 32-bit value (negatives: 5 B)   |
 * | BIGINT                                 | uvarint of the 64-bit value (up to 10 B)       |
 * | FLOAT, DOUBLE                          | 4 / 8 IEEE 754 LE                              |
 * | CHAR, STRING, BINARY, BYTES            | uvarint length + bytes (no CHAR/BINARY padding)|
 * | DECIMAL(p <= 18)                       | unscaled value like BIGINT                     |
 * | DECIMAL(p > 18)                        | uvarint length + BigInteger.toByteArray (BE)   |
 * | TIMESTAMP(_LTZ)(p)                     | epoch ms like BIGINT; p > 3: + nanos like INT  |
 * | ARRAY, MAP, ROW                        | uvarint length + BinaryArray / BinaryMap /     |
 * |                                        | nested CompactedRow (§5.8)                     |
 *
 * ARRAY, MAP and ROW values are not interpreted here: a decoded cell holds
 * the nested value's encoded bytes (off/len in the arena) and the encoder
 * writes them back verbatim, so encode(decode(x)) == x.
 *
 * The decoder is stricter than Fluss's CompactedRowReader in ways no Fluss
 * writer can notice, so that every row it accepts has exactly one encoding
 * (re-encoding gives the input back; fuzz_row_decode checks it): padding
 * bits of the bitmap clear; varints minimal, a 5-byte INT varint's last
 * byte <= 0x0F and a 10-byte one's <= 0x01 (Java drops the extra bits);
 * BOOLEAN bytes 0 or 1 (Java reads any non-zero as true); DECIMAL(p > 18)
 * bytes 1..16 long and minimal; nanos of the millisecond 0..999999 (Java
 * throws); no bytes after the last field (Java ignores them). It does not
 * enforce NOT NULL: a NULL bit on a NOT NULL column reads as NULL (Java's
 * reader skips the bit for NOT NULL columns; its writers never set it),
 * and it does not check a DECIMAL's digits against its precision.
 * Thread rule: none; functions work on caller-owned values.
 */
#ifndef FL_TYPES_ROW_COMPACTED_H
#define FL_TYPES_ROW_COMPACTED_H

#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "types_datatype.h"
#include "types_row.h"
#include "types_schema.h"

/* Appends the compacted key encoding of the columns cols[0..n) (each <
 * schema->column_count and < row->column_count) of row, typed by schema,
 * to out. A NULL key column or one of an unsupported type is
 * FLUSS_ERR__INVALID_ARG naming the column; out may then hold a part of
 * the key. */
int fl_compacted_key_encode(const fl_row_t *row, const fl_schema_t *schema, const int32_t *cols,
                            size_t n, fl_buf_t *out, fl_error_t *err);

/* Appends the CompactedRow of row (row->column_count >= n; cells typed by
 * types[0..n)) to out. FLUSS_ERR__INVALID_ARG naming the column for a NULL
 * in a NOT NULL column (Fluss would misread it); out is then as it was. */
int fl_compacted_row_encode(const fl_row_t *row, const fl_datatype_t *const *types, size_t n,
                            fl_buf_t *out, fl_error_t *err);

/* Decodes the CompactedRow p[0, len) of types[0..n) into *row, which must
 * be initialised (fl_row_init, any count) and becomes n cells (their
 * bytes in its arena). Bytes that are not exactly one such row are
 * FLUSS_ERR_CORRUPT_RECORD_EXCEPTION naming the column; *row is then all
 * NULL. */
int fl_compacted_row_decode(const uint8_t *p, size_t len, const fl_datatype_t *const *types,
                            size_t n, fl_row_t *row, fl_error_t *err);

#endif
