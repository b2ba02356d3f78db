/*
 * tier_pk_key.h — the lake index's key of a primary-key row: the bytes
 * that identify the row's key among a bucket's lake rows, computed the
 * same way from a changelog row (the tiering) and from the primary-key
 * columns of a lake data file (the index rebuild, lakehouse.md §1 "PK
 * tables").
 *
 * The key is each primary-key column's Parquet value (tier_convert.h) in
 * primary-key order, by physical type: BOOLEAN one byte, INT32 and FLOAT
 * four bytes little-endian, INT64 and DOUBLE eight, BYTE_ARRAY a u32
 * little-endian length and the bytes (a BINARY(n) value padded to n
 * bytes, as the file stores it). It is the lake's value, not the
 * changelog's: TIMESTAMP(7..9) keys that differ in their nanoseconds
 * alone are one key in the lake (their rows are one row there), which is
 * the lake's own limit (KNOWN_DIFFERENCES).
 *
 * Thread rule: none; values only.
 */
#ifndef FL_TIER_PK_KEY_H
#define FL_TIER_PK_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "lake_parquet_reader.h"
#include "types_row.h"
#include "types_schema.h"

/* The key of row (the schema's columns) into out (reset first).
 * CORRUPT_RECORD for a NULL in a key column or a value the lake cannot
 * hold; INVALID_ARG for a schema without a primary key. */
int fl_tier_pk_key_of_row(const fl_schema_t *s, const fl_row_t *row, fl_buf_t *out,
                          fl_error_t *err);

/* Appends the key part of row i of one column read from a lake file
 * (untrusted: CORRUPT for a NULL or a row out of range). */
int fl_tier_pk_key_append(const fl_pq_values_t *v, size_t i, fl_buf_t *out, fl_error_t *err);

#endif
