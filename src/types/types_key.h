/*
 * types_key.h — how a table's keys are encoded and hashed to buckets,
 * which depends on its lake format (0.9.1's KeyEncoder and
 * BucketingFunction):
 *
 * - no `table.datalake.format`, or LANCE: the compacted key
 *   (types_row_compacted.h) and Fluss's murmur hash (common_murmur.h);
 * - ICEBERG: Iceberg's single-value encoding of the one key column, and
 *   Iceberg's bucket transform (murmur3_32 seed 0, & INT_MAX, % n), so
 *   a lake table's `bucket[n]` partition value is its Fluss bucket.
 *   INT and DATE as 8-byte little-endian longs, TIME as microseconds,
 *   BIGINT 8 bytes, FLOAT/DOUBLE IEEE 754 little-endian, TIMESTAMP (NTZ)
 *   as microseconds, DECIMAL as its minimal big-endian unscaled bytes,
 *   CHAR/STRING as UTF-8 and BINARY/BYTES as they are, none with a
 *   length; other types cannot be an Iceberg key;
 * - PAIMON and HUDI: not encoded here (FL_KEY_UNSUPPORTED).
 *
 * The bucket key always uses the lake's encoding. The primary key
 * (KeyEncoder.ofPrimaryKeyEncoder) uses it too, except under
 * `table.kv.format-version` 2 with a bucket key other than the physical
 * primary key, where it is compacted (prefix lookups need the bucket key
 * to be a byte prefix of it). Clients encode keys; the server stores them
 * as sent and encodes them the same way when it rebuilds a bucket's state
 * from its changelog.
 */
#ifndef FL_TYPES_KEY_H
#define FL_TYPES_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "types_row.h"
#include "types_schema.h"

typedef enum fl_key_codec {
    FL_KEY_COMPACTED = 0,
    FL_KEY_ICEBERG,
    FL_KEY_UNSUPPORTED, /* a lake format whose keys are not encoded here */
} fl_key_codec_t;

/* The bucket key's codec for a `table.datalake.format` value (NULL: none;
 * case-insensitive). */
fl_key_codec_t fl_key_codec_of_lake(const char *lake_format);
/* The primary key's codec: lake_format as above, kv_format_version the
 * `table.kv.format-version` value (NULL: absent, a table from before it),
 * default_bucket_key: the bucket key is the physical primary key. */
fl_key_codec_t fl_key_codec_of_primary(const char *lake_format, const char *kv_format_version,
                                       bool default_bucket_key);

/* Appends the encoding of columns cols[0..n) of row (typed by schema) to
 * out. A NULL column, a type the codec cannot encode, or (ICEBERG) more or
 * fewer than one column is FLUSS_ERR__INVALID_ARG naming it. */
int fl_key_encode(fl_key_codec_t codec, const fl_row_t *row, const fl_schema_t *schema,
                  const int32_t *cols, size_t n, fl_buf_t *out, fl_error_t *err);
/* The bucket among n of an encoded bucket key. */
int32_t fl_key_bucket(fl_key_codec_t codec, const void *key, size_t len, int32_t n);

/* Decodes a key of n columns of the given types (fl_key_encode's output)
 * into keyrow, reset to n cells; scratch is working memory. Bytes that
 * are not exactly such a key are FLUSS_ERR__INVALID_ARG or the row
 * decoder's error. */
int fl_key_decode(fl_key_codec_t codec, const uint8_t *key, size_t len,
                  const fl_datatype_t *const *types, size_t n, fl_buf_t *scratch,
                  fl_row_t *keyrow, fl_error_t *err);

/* Whether type can be an ICEBERG key column. */
bool fl_key_iceberg_type_ok(const fl_datatype_t *type);
/* Decodes an ICEBERG key of type into cell col of row (the inverse of
 * fl_key_encode for one column). Bytes that are not such a key are
 * FLUSS_ERR__INVALID_ARG. */
int fl_key_iceberg_decode(const uint8_t *key, size_t len, const fl_datatype_t *type,
                          fl_row_t *row, size_t col, fl_error_t *err);

#endif
