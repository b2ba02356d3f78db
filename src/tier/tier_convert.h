/*
 * tier_convert.h — a Fluss column as an Iceberg column in Parquet, and a
 * cell (types_row.h) as the Parquet value of that column and back: the type map of
 * the lake tier (lakehouse.md §2 "Type map", Fluss's IcebergSchemaUtils
 * and its FlussRecordAsIcebergRecord for the values).
 *
 * | Fluss type          | Parquet physical / logical       | value                            |
 * |---------------------|----------------------------------|----------------------------------|
 * | BOOLEAN             | BOOLEAN                          | 0 / 1                            |
 * | TINYINT..INT        | INT32                            | the integer                      |
 * | BIGINT              | INT64                            | the integer                      |
 * | FLOAT, DOUBLE       | FLOAT, DOUBLE                    | IEEE 754                         |
 * | DATE                | INT32 DATE                       | days since 1970-01-01            |
 * | TIME(p)             | INT64 TIME(µs, UTC=false)        | ms of day × 1000                 |
 * | TIMESTAMP(p)        | INT64 TIMESTAMP(µs, UTC=false)   | epoch µs, floor (sub-µs dropped) |
 * | TIMESTAMP_LTZ(p)    | INT64 TIMESTAMP(µs, UTC=true)    | epoch µs, floor (sub-µs dropped) |
 * | DECIMAL(P≤9, S)     | INT32 DECIMAL(P, S)              | unscaled                         |
 * | DECIMAL(P≤18, S)    | INT64 DECIMAL(P, S)              | unscaled                         |
 * | DECIMAL(P≤38, S)    | FIXED_LEN_BYTE_ARRAY(n) DECIMAL  | unscaled, big-endian, n bytes    |
 * | CHAR, STRING        | BYTE_ARRAY STRING                | the UTF-8 bytes                  |
 * | BINARY(n)           | BYTE_ARRAY                       | the n bytes (see below)          |
 * | BYTES               | BYTE_ARRAY                       | the bytes                        |
 *
 * (n: the least bytes of two's complement that hold P digits, as
 * Iceberg's writers choose it: 9 for P 19..21, 16 for P 36..38.)
 *
 * Nullable columns are OPTIONAL, NOT NULL ones REQUIRED. Refused with
 * FLUSS_ERR__INVALID_ARG: ARRAY, MAP and ROW (not one column: their
 * leaves are, tier_nested.h). Iceberg v2 has no nanosecond timestamps: TIMESTAMP(7..9) loses its
 * sub-microsecond digits, rounded toward minus infinity so that a value
 * before 1970 does not move up across a microsecond. A BINARY(n) value
 * has n bytes in Fluss, but an IndexedRow pads it with zeros its decoder
 * cannot tell from the value's own and drops: the tier pads it back
 * (fl_tier_pad_binary), so that all three log formats give the same file.
 *
 * Thread rule: none; values only.
 */
#ifndef FL_TIER_CONVERT_H
#define FL_TIER_CONVERT_H

#include <stdint.h>

#include "arrow_decode.h"
#include "common_error.h"
#include "lake_parquet_reader.h"
#include "lake_parquet_writer.h"
#include "types_datatype.h"
#include "types_row.h"

/* One value in its Parquet unit; the member follows the column's physical
 * type (b: BOOLEAN, i32: INT32, i64: INT64, f, d, bytes: BYTE_ARRAY,
 * fixed: FIXED_LEN_BYTE_ARRAY's first type_length bytes). A pointer to it
 * is a one-row fl_pq_column_data_t's values. */
typedef union fl_tier_value {
    uint8_t fixed[16];
    uint8_t b;
    int32_t i32;
    int64_t i64;
    float f;
    double d;
    fl_pq_bytes_t bytes; /* borrows the row's arena */
} fl_tier_value_t;

/* The Parquet column of a Fluss column of type t named name, with the
 * Iceberg field id. out->name borrows name. INVALID_ARG naming the
 * column for a type outside the map. */
int fl_tier_column_spec(const char *name, const fl_datatype_t *t, int32_t field_id,
                        fl_pq_column_spec_t *out, fl_error_t *err);

/* The non-NULL cell c of row, of type t (a type fl_tier_column_spec
 * takes), as its Parquet value. FLUSS_ERR_CORRUPT_RECORD_EXCEPTION for a
 * value its type cannot hold (a decimal of more digits than P, a time
 * whose microseconds overflow 64 bits, bytes over 4 GiB). */
int fl_tier_value_of(const fl_datatype_t *t, const fl_row_t *row, const fl_cell_t *c,
                     fl_tier_value_t *out, fl_error_t *err);

/* An unscaled decimal as n bytes of big-endian two's complement (the
 * low n bytes of v), and back (sign-extended; n 1..16). */
void fl_tier_decimal_be(__int128 v, uint8_t *out, size_t n);
__int128 fl_tier_decimal_of_be(const uint8_t *p, size_t n);

/* A non-NULL BINARY(n) cell col of row shorter than n bytes becomes its
 * bytes followed by zeros up to n (copied through scratch into the row's
 * arena); any other cell is left alone. Call before fl_tier_value_of
 * takes pointers into the arena. */
void fl_tier_pad_binary(fl_row_t *row, size_t col, const fl_datatype_t *t, fl_buf_t *scratch);

/* The read direction (libfluss's union read): rows [from, to) of a column
 * read back from a lake file (lake_parquet_reader.h) as the decoded Arrow
 * column of type t a fetched batch would give (arrow_decode.h: values in
 * the Arrow unit of t's precision; t is borrowed and must outlive *out);
 * name is for messages. The file is untrusted: a physical type other
 * than the map's, a NULL in a NOT NULL column, a value out of its type's
 * range (a TINYINT over 127, a TIME outside the day, a DECIMAL of more
 * digits than P, a BINARY(n) value of another length) is
 * CORRUPT_RECORD_EXCEPTION naming the column. Microseconds become the
 * column's unit by floor division (the inverse of the write, which
 * floors nanoseconds to microseconds). */
int fl_tier_arrow_column(const fl_datatype_t *t, const char *name, const fl_pq_values_t *v,
                         size_t from, size_t to, fl_arrow_array_t *out, fl_error_t *err);

/* Epoch milliseconds as microseconds (the commit timestamp of a batch,
 * __timestamp). CORRUPT_RECORD_EXCEPTION if they overflow. */
int fl_tier_micros_of_millis(int64_t ms, int64_t *us, fl_error_t *err);

#endif
