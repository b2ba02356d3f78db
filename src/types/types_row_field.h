/*
 * types_row_field.h — the field-level pieces both binary row formats
 * share (types_row_compacted.h, types_row_indexed.h; Fluss's
 * CompactedRowWriter and IndexedRowWriter write these the same way):
 * little-endian fixed-width integers, FLOAT bits, the big-endian
 * two's-complement bytes of a DECIMAL(p > 18) unscaled value (Java's
 * BigInteger.toByteArray). Internal to the row codecs. Thread rule: none; values only.
 */
#ifndef FL_TYPES_ROW_FIELD_H
#define FL_TYPES_ROW_FIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common_buf.h"
#include "types_datatype.h"
#include "types_row.h"

/* The largest DECIMAL held in a long (Decimal.MAX_COMPACT_PRECISION) and
 * the largest TIMESTAMP precision held in millis alone (isCompact). */
#define FL_DECIMAL_COMPACT_PRECISION_MAX 18
#define FL_TIMESTAMP_COMPACT_PRECISION_MAX 3
#define FL_NANOS_OF_MILLI_MAX 999999
/* BigInteger bytes of any DECIMAL(38): |v| < 10^38 < 2^127. */
#define FL_DECIMAL_BYTES_MAX 16

static inline bool fl_row_type_nested(fl_type_root_t r) {
    return r == FL_TYPE_ARRAY || r == FL_TYPE_MAP || r == FL_TYPE_ROW;
}

static inline bool fl_row_decimal_compact(const fl_datatype_t *t) {
    return t->precision <= FL_DECIMAL_COMPACT_PRECISION_MAX;
}

static inline bool fl_row_timestamp_compact(const fl_datatype_t *t) {
    return t->precision <= FL_TIMESTAMP_COMPACT_PRECISION_MAX;
}

/* Null bitmap bytes of n fields (CompactedRow / IndexedRow
 * calculateBitSetWidthInBytes). */
static inline size_t fl_row_bitmap_bytes(size_t n) { return (n + 7) / 8; }

static inline bool fl_row_bit_get(const uint8_t *bits, size_t i) {
    return (bits[i >> 3] >> (i & 7)) & 1;
}

void fl_row_put_le(fl_buf_t *b, uint64_t v, size_t n);
uint64_t fl_row_get_le(const uint8_t *p, size_t n);

/* FLOAT cells hold a double. These convert between it and the 32-bit
 * pattern without the FPU for NaNs, so a signalling NaN's pattern comes
 * back as it went in (a hardware conversion would quieten it). */
uint32_t fl_row_float_bits(double d);
double fl_row_float_from_bits(uint32_t u);
/* DOUBLE cells: the 64-bit pattern as is. */
static inline uint64_t fl_row_double_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* Writes v as minimal big-endian two's complement into be and returns its
 * length (1..16). */
size_t fl_row_decimal_to_bytes(__int128 v, uint8_t be[FL_DECIMAL_BYTES_MAX]);
/* Reads n bytes of minimal big-endian two's complement. False for n = 0,
 * n > 16 or a redundant leading byte (BigInteger.toByteArray never writes
 * one; refusing it keeps decode ∘ encode the identity). */
bool fl_row_decimal_from_bytes(const uint8_t *p, size_t n, __int128 *v);

#endif
