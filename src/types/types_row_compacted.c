/*
 * types_row_compacted.c — CompactedRow and the compacted key encoding
 * (types_row_compacted.h has the byte table; Fluss's CompactedRowWriter,
 * CompactedRowReader, CompactedKeyWriter). Thread rule: none.
 */
#include "types_row_compacted.h"

#include <assert.h>
#include <string.h>

#include "types_row_field.h"


static void fl_compacted_put_bytes(fl_buf_t *b, const uint8_t *p, size_t n) {
    fl_buf_put_uvarint(b, n);
    fl_buf_append(b, p, n);
}

/* One non-NULL field. Nested cells hold their encoded value (header). */
static void fl_compacted_put_field(fl_buf_t *out, const fl_row_t *r, const fl_cell_t *c,
                                   const fl_datatype_t *t) {
    switch (t->root) {
    case FL_TYPE_BOOLEAN: fl_buf_put_u8(out, c->i ? 1 : 0); break;
    case FL_TYPE_TINYINT: fl_buf_put_u8(out, (uint8_t)c->i); break;
    case FL_TYPE_SMALLINT: fl_row_put_le(out, (uint64_t)c->i, 2); break;
    case FL_TYPE_INTEGER:
    case FL_TYPE_DATE:
    case FL_TYPE_TIME: fl_buf_put_uvarint(out, (uint32_t)(int32_t)c->i); break;
    case FL_TYPE_BIGINT: fl_buf_put_uvarint(out, (uint64_t)c->i); break;
    case FL_TYPE_FLOAT: fl_row_put_le(out, fl_row_float_bits(c->d), 4); break;
    case FL_TYPE_DOUBLE: fl_row_put_le(out, fl_row_double_bits(c->d), 8); break;
    case FL_TYPE_DECIMAL:
        if (fl_row_decimal_compact(t)) {
            fl_buf_put_uvarint(out, (uint64_t)(int64_t)c->dec);
        } else {
            uint8_t be[FL_DECIMAL_BYTES_MAX];
            size_t n = fl_row_decimal_to_bytes(c->dec, be);
            fl_compacted_put_bytes(out, be, n);
        }
        break;
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ:
        fl_buf_put_uvarint(out, (uint64_t)c->i);
        if (!fl_row_timestamp_compact(t)) fl_buf_put_uvarint(out, (uint32_t)c->nanos);
        break;
    default: /* CHAR STRING BINARY BYTES ARRAY MAP ROW */
        fl_compacted_put_bytes(out, fl_row_cell_bytes(r, c), c->len);
        break;
    }
}

int fl_compacted_key_encode(const fl_row_t *r, const fl_schema_t *schema, const int32_t *cols,
                            size_t n, fl_buf_t *out, fl_error_t *err) {
    for (size_t k = 0; k < n; k++) {
        size_t col = (size_t)cols[k];
        const fl_cell_t *c = &r->cells[col];
        const fl_datatype_t *t = schema->columns[col].type;
        if (c->is_null)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "bucket key column %s is NULL",
                              schema->columns[col].name);
        if (fl_row_type_nested(t->root))
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "bucket key column %s has an unsupported type",
                              schema->columns[col].name);
        fl_compacted_put_field(out, r, c, t);
    }
    return 0;
}

int fl_compacted_row_encode(const fl_row_t *row, const fl_datatype_t *const *types, size_t n,
                            fl_buf_t *out, fl_error_t *err) {
    assert(row->column_count >= n);
    for (size_t i = 0; i < n; i++)
        if (row->cells[i].is_null && !types[i]->nullable)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "compacted row: column %zu is NOT NULL but its value is NULL", i);
    size_t bitmap = fl_row_bitmap_bytes(n), start = out->len;
    memset(fl_buf_reserve(out, bitmap), 0, bitmap);
    out->len += bitmap;
    for (size_t i = 0; i < n; i++) {
        const fl_cell_t *c = &row->cells[i];
        if (c->is_null) out->data[start + (i >> 3)] |= (uint8_t)(1u << (i & 7));
        else fl_compacted_put_field(out, row, c, types[i]);
    }
    return 0;
}

/* ---- decoding ---- */

typedef struct fl_compacted_reader {
    const uint8_t *p;
    size_t len, pos;
} fl_compacted_reader_t;

/* Each reader returns NULL, or what is wrong with the bytes. */
static const char *fl_compacted_read_uvarint(fl_compacted_reader_t *rd, unsigned bits,
                                             uint64_t *v) {
    const unsigned max_bytes = (bits + 6) / 7;
    uint64_t x = 0;
    for (unsigned k = 0;; k++) {
        if (rd->pos >= rd->len) return "varint runs past the end";
        uint8_t b = rd->p[rd->pos++];
        if (k == max_bytes - 1 && (b >> (bits - 7 * k)) != 0)
            return "varint does not fit"; /* also a continuation bit on the last byte */
        x |= (uint64_t)(b & 0x7F) << (7 * k);
        if (!(b & 0x80)) {
            if (b == 0 && k > 0) return "varint is not minimal";
            *v = x;
            return NULL;
        }
    }
}

static const char *fl_compacted_read_fixed(fl_compacted_reader_t *rd, size_t n, uint64_t *v) {
    if (rd->len - rd->pos < n) return "field runs past the end";
    *v = fl_row_get_le(rd->p + rd->pos, n);
    rd->pos += n;
    return NULL;
}

/* A uvarint length and that many bytes: *at is where they start. */
static const char *fl_compacted_read_span(fl_compacted_reader_t *rd, size_t *at, size_t *n) {
    uint64_t l;
    const char *bad = fl_compacted_read_uvarint(rd, 32, &l);
    if (bad) return bad;
    if (l > rd->len - rd->pos) return "length runs past the end";
    *at = rd->pos;
    *n = (size_t)l;
    rd->pos += (size_t)l;
    return NULL;
}

static const char *fl_compacted_read_int(fl_compacted_reader_t *rd, fl_cell_t *c) {
    uint64_t u;
    const char *bad = fl_compacted_read_uvarint(rd, 32, &u);
    if (!bad) c->i = (int32_t)(uint32_t)u;
    return bad;
}

static const char *fl_compacted_read_timestamp(fl_compacted_reader_t *rd,
                                               const fl_datatype_t *t, fl_cell_t *c) {
    uint64_t u;
    const char *bad = fl_compacted_read_uvarint(rd, 64, &u);
    if (bad) return bad;
    c->i = (int64_t)u;
    if (fl_row_timestamp_compact(t)) return NULL;
    if ((bad = fl_compacted_read_uvarint(rd, 32, &u))) return bad;
    if ((int32_t)(uint32_t)u < 0 || (int32_t)(uint32_t)u > FL_NANOS_OF_MILLI_MAX)
        return "nanos of the millisecond out of 0..999999";
    c->nanos = (int32_t)(uint32_t)u;
    return NULL;
}

static const char *fl_compacted_read_decimal(fl_compacted_reader_t *rd,
                                             const fl_datatype_t *t, fl_cell_t *c) {
    uint64_t u;
    if (fl_row_decimal_compact(t)) {
        const char *bad = fl_compacted_read_uvarint(rd, 64, &u);
        if (!bad) c->dec = (int64_t)u;
        return bad;
    }
    size_t at, n;
    const char *bad = fl_compacted_read_span(rd, &at, &n);
    if (bad) return bad;
    if (!fl_row_decimal_from_bytes(rd->p + at, n, &c->dec))
        return "decimal bytes are not a minimal 1..16-byte two's complement";
    return NULL;
}

static const char *fl_compacted_read_field(fl_compacted_reader_t *rd, const fl_datatype_t *t,
                                           fl_row_t *row, size_t col) {
    fl_cell_t *c = &row->cells[col];
    const char *bad;
    uint64_t u;
    switch (t->root) {
    case FL_TYPE_BOOLEAN:
        if ((bad = fl_compacted_read_fixed(rd, 1, &u))) return bad;
        if (u > 1) return "boolean byte is not 0 or 1";
        c->i = (int64_t)u;
        break;
    case FL_TYPE_TINYINT:
        if ((bad = fl_compacted_read_fixed(rd, 1, &u))) return bad;
        c->i = (int8_t)(uint8_t)u;
        break;
    case FL_TYPE_SMALLINT:
        if ((bad = fl_compacted_read_fixed(rd, 2, &u))) return bad;
        c->i = (int16_t)(uint16_t)u;
        break;
    case FL_TYPE_INTEGER:
    case FL_TYPE_DATE:
    case FL_TYPE_TIME:
        if ((bad = fl_compacted_read_int(rd, c))) return bad;
        break;
    case FL_TYPE_BIGINT:
        if ((bad = fl_compacted_read_uvarint(rd, 64, &u))) return bad;
        c->i = (int64_t)u;
        break;
    case FL_TYPE_FLOAT:
        if ((bad = fl_compacted_read_fixed(rd, 4, &u))) return bad;
        c->d = fl_row_float_from_bits((uint32_t)u);
        break;
    case FL_TYPE_DOUBLE:
        if ((bad = fl_compacted_read_fixed(rd, 8, &u))) return bad;
        memcpy(&c->d, &u, 8);
        break;
    case FL_TYPE_DECIMAL:
        if ((bad = fl_compacted_read_decimal(rd, t, c))) return bad;
        break;
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ:
        if ((bad = fl_compacted_read_timestamp(rd, t, c))) return bad;
        break;
    default: { /* CHAR STRING BINARY BYTES ARRAY MAP ROW */
        size_t at, n;
        if ((bad = fl_compacted_read_span(rd, &at, &n))) return bad;
        fl_row_set_bytes(row, col, rd->p + at, n);
        break;
    }
    }
    c->is_null = false;
    return NULL;
}

int fl_compacted_row_decode(const uint8_t *p, size_t len, const fl_datatype_t *const *types,
                            size_t n, fl_row_t *row, fl_error_t *err) {
    fl_row_reset(row, n);
    size_t bitmap = fl_row_bitmap_bytes(n);
    if (len < bitmap)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                          "compacted row: %zu bytes, shorter than its %zu-byte null bitmap", len,
                          bitmap);
    if ((n & 7) && (p[bitmap - 1] >> (n & 7)))
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                          "compacted row: null bits set past the last of %zu columns", n);
    fl_compacted_reader_t rd = {p, len, bitmap};
    for (size_t i = 0; i < n; i++) {
        if (fl_row_bit_get(p, i)) continue;
        size_t at = rd.pos;
        const char *bad = fl_compacted_read_field(&rd, types[i], row, i);
        if (bad) {
            fl_row_reset(row, n);
            return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                              "compacted row: column %zu (%s) at byte %zu: %s", i,
                              fl_type_root_json_name(types[i]->root), at, bad);
        }
    }
    if (rd.pos != len) {
        fl_row_reset(row, n);
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                          "compacted row: %zu bytes after the last of %zu columns", len - rd.pos,
                          n);
    }
    return 0;
}
