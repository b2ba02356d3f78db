/*
 * types_row_nested.h — ARRAY and MAP values as binary rows hold them
 * (Fluss's BinaryArray / BinaryMap, the Flink layout: what a CompactedRow
 * or IndexedRow field of such a type carries; protocol.md §5.8). A ROW
 * value is a row of the enclosing row's format (types_row_format.h), so
 * it needs nothing here. Element values travel as the cells of a
 * types_row.h row (nested ones as their encoded bytes). Bytes come from a
 * peer and are checked: every slot and offset inside the value. Thread
 * rule: none; values only.
 *
 * BinaryArray (all little-endian; offsets relative to the array's start):
 *
 * | bytes                      | what                                         |
 * |----------------------------|----------------------------------------------|
 * | 0..4                       | int32 element count n                        |
 * | 4..4+((n+31)/32)*4         | null bits, element i = bit i%8 of byte i/8   |
 * | then n × width             | slots; width 1 BOOLEAN TINYINT, 2 SMALLINT,  |
 * |                            | 4 INT FLOAT DATE TIME, 8 the rest            |
 * | padded to 8                |                                              |
 * | variable part              | each value padded to 8 bytes                 |
 *
 * An 8-byte slot of CHAR/STRING/BINARY/BYTES holds up to 7 bytes inline
 * (byte 7 = 0x80 | length, data in bytes 0..6) or (offset << 32) |
 * length; ARRAY/MAP/ROW always (offset << 32) | length; DECIMAL(p <= 18)
 * the unscaled long, else (offset << 32) | length of its big-endian
 * two's-complement bytes (16 reserved); TIMESTAMP(p <= 3) epoch millis,
 * else (offset << 32) | nanos-of-milli with the millis at offset.
 *
 * BinaryMap: int32 byte size of the key array, the key BinaryArray, the
 * value BinaryArray (as many elements).
 */
#ifndef FL_TYPES_ROW_NESTED_H
#define FL_TYPES_ROW_NESTED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "types_datatype.h"
#include "types_row.h"
#include "types_row_format.h"

/* Fields of a nested ROW at most (the schema's column limit). */
#define FL_NESTED_FIELDS_MAX 4096
/* Elements of one array at most (a row holds at most 2 GiB anyway). */
#define FL_NESTED_ELEMENTS_MAX (64 * 1024 * 1024)

typedef struct fl_nested_array {
    const uint8_t *p; /* the whole array, borrowed */
    size_t len;
    int32_t count;
    const fl_datatype_t *elem;
    size_t header; /* count + null bits */
    size_t width;  /* slot bytes */
} fl_nested_array_t;

typedef struct fl_nested_map {
    fl_nested_array_t keys, values;
} fl_nested_map_t;

/* The slot width of an element type (BinaryArray#calculateFixLengthPartSize). */
size_t fl_nested_slot_width(const fl_datatype_t *elem);

/* Checks the header of an array of elem values in p[0, len).
 * FLUSS_ERR_CORRUPT_RECORD_EXCEPTION when it does not fit. */
int fl_nested_array_view(const uint8_t *p, size_t len, const fl_datatype_t *elem,
                         fl_nested_array_t *out, fl_error_t *err);
bool fl_nested_array_is_null(const fl_nested_array_t *a, int32_t i);
/* Element i (0 <= i < count) into cell col of row: NULL, or its value
 * (bytes and nested values copied into the row's arena).
 * FLUSS_ERR_CORRUPT_RECORD_EXCEPTION when its slot points outside the
 * array. */
int fl_nested_array_get(const fl_nested_array_t *a, int32_t i, fl_row_t *row, size_t col,
                        fl_error_t *err);
/* A map of type map (MAP<K, V>) in p[0, len): its key and value arrays,
 * as many of each. */
int fl_nested_map_view(const uint8_t *p, size_t len, const fl_datatype_t *map,
                       fl_nested_map_t *out, fl_error_t *err);

/* Appends the BinaryArray of cells[0..n) of src (each of type elem,
 * NULL where is_null) to out. */
void fl_nested_array_encode(const fl_row_t *src, size_t n, const fl_datatype_t *elem,
                            fl_buf_t *out);
/* Appends the BinaryMap of n keys (cells of keys) and values (cells of
 * values) of a MAP type to out. */
void fl_nested_map_encode(const fl_row_t *keys, const fl_row_t *values, size_t n,
                          const fl_datatype_t *map, fl_buf_t *out);

/* Checks a whole ARRAY/MAP/ROW value of type t in p[0, len) (nested rows
 * in format fmt), every element down to the leaves, depth levels deep
 * already. 0 for any other type. FLUSS_ERR_CORRUPT_RECORD_EXCEPTION (or
 * a row decoder's error) when it does not decode. */
int fl_nested_check(const fl_datatype_t *t, fl_row_format_t fmt, const uint8_t *p, size_t len,
                    int depth, fl_error_t *err);

#endif
