/*
 * types_key.c — key encodings and bucket hashes by lake format
 * (types_key.h).
 */
#include "types_key.h"

#include <string.h>
#include <strings.h>

#include "common_murmur.h"
#include "types_row_compacted.h"
#include "types_row_field.h"

fl_key_codec_t fl_key_codec_of_lake(const char *lake_format) {
    if (!lake_format || !*lake_format || strcasecmp(lake_format, "LANCE") == 0)
        return FL_KEY_COMPACTED;
    if (strcasecmp(lake_format, "ICEBERG") == 0) return FL_KEY_ICEBERG;
    return FL_KEY_UNSUPPORTED;
}

fl_key_codec_t fl_key_codec_of_primary(const char *lake_format, const char *kv_format_version,
                                       bool default_bucket_key) {
    bool v2 = kv_format_version && strcmp(kv_format_version, "2") == 0;
    if (v2 && !default_bucket_key) return FL_KEY_COMPACTED;
    return fl_key_codec_of_lake(lake_format);
}

bool fl_key_iceberg_type_ok(const fl_datatype_t *type) {
    switch (type->root) {
    case FL_TYPE_INTEGER:
    case FL_TYPE_DATE:
    case FL_TYPE_TIME:
    case FL_TYPE_BIGINT:
    case FL_TYPE_FLOAT:
    case FL_TYPE_DOUBLE:
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_DECIMAL:
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
    case FL_TYPE_BINARY:
    case FL_TYPE_BYTES: return true;
    default: return false;
    }
}

/* Microseconds of a TIMESTAMP cell (epoch ms and nanos of the ms),
 * wrapping as Java's long arithmetic does for milliseconds past
 * +-9.2e15. */
static int64_t fl_key_micros(const fl_cell_t *c) {
    return (int64_t)((uint64_t)c->i * 1000u + (uint64_t)(c->nanos / 1000));
}

static void fl_key_iceberg_put(fl_buf_t *out, const fl_row_t *r, const fl_cell_t *c,
                               const fl_datatype_t *t) {
    switch (t->root) {
    case FL_TYPE_INTEGER:
    case FL_TYPE_DATE: fl_row_put_le(out, (uint64_t)(int64_t)(int32_t)c->i, 8); break;
    case FL_TYPE_TIME: fl_row_put_le(out, (uint64_t)((int64_t)(int32_t)c->i * 1000), 8); break;
    case FL_TYPE_BIGINT: fl_row_put_le(out, (uint64_t)c->i, 8); break;
    case FL_TYPE_FLOAT: fl_row_put_le(out, fl_row_float_bits(c->d), 4); break;
    case FL_TYPE_DOUBLE: fl_row_put_le(out, fl_row_double_bits(c->d), 8); break;
    case FL_TYPE_TIMESTAMP: fl_row_put_le(out, (uint64_t)fl_key_micros(c), 8); break;
    case FL_TYPE_DECIMAL: {
        uint8_t be[FL_DECIMAL_BYTES_MAX];
        size_t n = fl_row_decimal_to_bytes(c->dec, be);
        fl_buf_append(out, be, n);
        break;
    }
    default: /* CHAR STRING BINARY BYTES */
        fl_buf_append(out, fl_row_cell_bytes(r, c), c->len);
        break;
    }
}

static int fl_key_iceberg_encode(const fl_row_t *r, const fl_schema_t *schema,
                                 const int32_t *cols, size_t n, fl_buf_t *out, fl_error_t *err) {
    if (n != 1)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "an Iceberg lake table's key must be exactly one column, not %zu", n);
    size_t col = (size_t)cols[0];
    const fl_cell_t *c = &r->cells[col];
    const fl_datatype_t *t = schema->columns[col].type;
    if (c->is_null)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "bucket key column %s is NULL",
                          schema->columns[col].name);
    if (!fl_key_iceberg_type_ok(t))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "key column %s has a type an Iceberg lake table cannot hash",
                          schema->columns[col].name);
    fl_key_iceberg_put(out, r, c, t);
    return 0;
}

int fl_key_encode(fl_key_codec_t codec, const fl_row_t *row, const fl_schema_t *schema,
                  const int32_t *cols, size_t n, fl_buf_t *out, fl_error_t *err) {
    switch (codec) {
    case FL_KEY_COMPACTED: return fl_compacted_key_encode(row, schema, cols, n, out, err);
    case FL_KEY_ICEBERG: return fl_key_iceberg_encode(row, schema, cols, n, out, err);
    default:
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "keys of this table's lake format (PAIMON, HUDI) are not supported");
    }
}

int32_t fl_key_bucket(fl_key_codec_t codec, const void *key, size_t len, int32_t n) {
    return codec == FL_KEY_ICEBERG ? fl_iceberg_bucket_of(key, len, n) : fl_bucket_of(key, len, n);
}

static int64_t fl_key_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return (int64_t)v;
}

static int64_t fl_key_floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int fl_key_iceberg_decode(const uint8_t *key, size_t len, const fl_datatype_t *type,
                          fl_row_t *row, size_t col, fl_error_t *err) {
    fl_cell_t *c = &row->cells[col];
    size_t want = 0;
    switch (type->root) {
    case FL_TYPE_FLOAT: want = 4; break;
    case FL_TYPE_INTEGER:
    case FL_TYPE_DATE:
    case FL_TYPE_TIME:
    case FL_TYPE_BIGINT:
    case FL_TYPE_DOUBLE:
    case FL_TYPE_TIMESTAMP: want = 8; break;
    default: break;
    }
    if (want && len != want)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "an Iceberg key of this type is %zu bytes, "
                          "not %zu", want, len);
    int64_t v = want == 8 ? fl_key_le64(key) : 0;
    switch (type->root) {
    case FL_TYPE_INTEGER:
    case FL_TYPE_DATE:
        if (v < INT32_MIN || v > INT32_MAX)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "an Iceberg key %lld is not an int",
                              (long long)v);
        c->i = v;
        break;
    case FL_TYPE_TIME: /* written from milliseconds */
        if (v % 1000 != 0 || v / 1000 < INT32_MIN || v / 1000 > INT32_MAX)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "an Iceberg key %lld is not a TIME of milliseconds", (long long)v);
        c->i = v / 1000;
        break;
    case FL_TYPE_BIGINT: c->i = v; break;
    case FL_TYPE_FLOAT:
        c->d = fl_row_float_from_bits((uint32_t)key[0] | (uint32_t)key[1] << 8 |
                                      (uint32_t)key[2] << 16 | (uint32_t)key[3] << 24);
        break;
    case FL_TYPE_DOUBLE: {
        uint64_t u = (uint64_t)v;
        memcpy(&c->d, &u, 8);
        break;
    }
    case FL_TYPE_TIMESTAMP: {
        int64_t ms = fl_key_floor_div(v, 1000), ms_us;
        if (__builtin_mul_overflow(ms, 1000, &ms_us)) /* no (ms, nanos) writes it */
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "an Iceberg key %lld is not a TIMESTAMP", (long long)v);
        c->i = ms;
        c->nanos = (int32_t)(v - ms_us) * 1000;
        break;
    }
    case FL_TYPE_DECIMAL:
        if (!fl_row_decimal_from_bytes(key, len, &c->dec))
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "an Iceberg key of %zu bytes is not a decimal", len);
        break;
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
    case FL_TYPE_BINARY:
    case FL_TYPE_BYTES: fl_row_set_bytes(row, col, key, len); break;
    default:
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "a type an Iceberg lake table cannot hash");
    }
    c->is_null = false;
    return 0;
}

int fl_key_decode(fl_key_codec_t codec, const uint8_t *key, size_t len,
                  const fl_datatype_t *const *types, size_t n, fl_buf_t *scratch,
                  fl_row_t *keyrow, fl_error_t *err) {
    if (codec == FL_KEY_ICEBERG) {
        fl_row_reset(keyrow, 1);
        if (n != 1)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "an Iceberg lake table's key must be exactly one column, not %zu",
                              n);
        return fl_key_iceberg_decode(key, len, types[0], keyrow, 0, err);
    }
    if (codec != FL_KEY_COMPACTED)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "keys of this table's lake format (PAIMON, HUDI) are not supported");
    /* a compacted key is a CompactedRow of the key columns without its
     * null bitmap (no key column is NULL): a zero bitmap in front makes it
     * one, and the row decoder's checks (exactly one encoding, no bytes
     * left over) apply */
    size_t bitmap = fl_row_bitmap_bytes(n);
    fl_buf_reset(scratch);
    memset(fl_buf_reserve(scratch, bitmap), 0, bitmap);
    scratch->len = bitmap;
    fl_buf_append(scratch, key, len);
    return fl_compacted_row_decode(scratch->data, scratch->len, types, n, keyrow, err);
}
