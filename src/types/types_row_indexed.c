/*
 * types_row_indexed.c — IndexedRow (types_row_indexed.h has the layout;
 * Fluss's IndexedRowWriter and IndexedRow). Thread rule: none.
 */
#include "types_row_indexed.h"

#include <assert.h>
#include <string.h>

#include "types_row_field.h"

#define FL_INDEXED_SLOT_BYTES 4

static bool fl_indexed_var(const fl_datatype_t *t) {
    switch (t->root) {
    case FL_TYPE_STRING:
    case FL_TYPE_BYTES:
    case FL_TYPE_ARRAY:
    case FL_TYPE_MAP:
    case FL_TYPE_ROW: return true;
    case FL_TYPE_DECIMAL: return !fl_row_decimal_compact(t);
    default: return false;
    }
}

/* Width of a fixed-length field (IndexedRow.getLength). */
static size_t fl_indexed_width(const fl_datatype_t *t) {
    switch (t->root) {
    case FL_TYPE_BOOLEAN:
    case FL_TYPE_TINYINT: return 1;
    case FL_TYPE_SMALLINT: return 2;
    case FL_TYPE_INTEGER:
    case FL_TYPE_FLOAT:
    case FL_TYPE_DATE:
    case FL_TYPE_TIME: return 4;
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ: return fl_row_timestamp_compact(t) ? 8 : 12;
    case FL_TYPE_CHAR:
    case FL_TYPE_BINARY: return t->length > 0 ? (size_t)t->length : 0;
    default: return 8; /* BIGINT DOUBLE DECIMAL(p <= 18) */
    }
}

static size_t fl_indexed_header_bytes(const fl_datatype_t *const *types, size_t n) {
    size_t h = fl_row_bitmap_bytes(n);
    for (size_t i = 0; i < n; i++)
        if (fl_indexed_var(types[i])) h += FL_INDEXED_SLOT_BYTES;
    return h;
}

static void fl_indexed_put_padded(fl_buf_t *out, const uint8_t *p, size_t len, size_t w) {
    uint8_t *d = fl_buf_reserve(out, w);
    if (len) memcpy(d, p, len); /* an empty arena has no data pointer */
    memset(d + len, 0, w - len);
    out->len += w;
}

/* One non-NULL field; *slot is where the next variable length goes. */
static void fl_indexed_put_field(fl_buf_t *out, size_t *slot, const fl_row_t *r,
                                 const fl_cell_t *c, const fl_datatype_t *t) {
    const uint8_t *var = NULL;
    size_t var_len = 0;
    uint8_t be[FL_DECIMAL_BYTES_MAX];
    switch (t->root) {
    case FL_TYPE_BOOLEAN: fl_buf_put_u8(out, c->i ? 1 : 0); break;
    case FL_TYPE_TINYINT: fl_buf_put_u8(out, (uint8_t)c->i); break;
    case FL_TYPE_SMALLINT: fl_row_put_le(out, (uint64_t)c->i, 2); break;
    case FL_TYPE_INTEGER:
    case FL_TYPE_DATE:
    case FL_TYPE_TIME: fl_row_put_le(out, (uint32_t)(int32_t)c->i, 4); break;
    case FL_TYPE_BIGINT: fl_row_put_le(out, (uint64_t)c->i, 8); break;
    case FL_TYPE_FLOAT: fl_row_put_le(out, fl_row_float_bits(c->d), 4); break;
    case FL_TYPE_DOUBLE: fl_row_put_le(out, fl_row_double_bits(c->d), 8); break;
    case FL_TYPE_DECIMAL:
        if (fl_row_decimal_compact(t)) {
            fl_row_put_le(out, (uint64_t)(int64_t)c->dec, 8);
        } else {
            var_len = fl_row_decimal_to_bytes(c->dec, be);
            var = be;
        }
        break;
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ:
        fl_row_put_le(out, (uint64_t)c->i, 8);
        if (!fl_row_timestamp_compact(t)) fl_row_put_le(out, (uint32_t)c->nanos, 4);
        break;
    case FL_TYPE_CHAR:
    case FL_TYPE_BINARY:
        fl_indexed_put_padded(out, fl_row_cell_bytes(r, c), c->len, fl_indexed_width(t));
        break;
    default: /* STRING BYTES ARRAY MAP ROW */
        var = fl_row_cell_bytes(r, c);
        var_len = c->len;
        break;
    }
    if (fl_indexed_var(t)) {
        /* the slot table precedes the fields: write the length back there */
        uint8_t *s = out->data + *slot;
        for (size_t k = 0; k < FL_INDEXED_SLOT_BYTES; k++) s[k] = (uint8_t)(var_len >> (8 * k));
        *slot += FL_INDEXED_SLOT_BYTES;
        fl_buf_append(out, var, var_len);
    }
}

static int fl_indexed_check(const fl_row_t *row, const fl_datatype_t *const *types, size_t n,
                            fl_error_t *err) {
    for (size_t i = 0; i < n; i++) {
        const fl_cell_t *c = &row->cells[i];
        const fl_datatype_t *t = types[i];
        if (c->is_null && !t->nullable)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "indexed row: column %zu is NOT NULL but its value is NULL", i);
        if (!c->is_null && (t->root == FL_TYPE_CHAR || t->root == FL_TYPE_BINARY) &&
            c->len > fl_indexed_width(t))
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "indexed row: column %zu holds %zu bytes, more than its %s(%zu)", i,
                              c->len, fl_type_root_json_name(t->root), fl_indexed_width(t));
        if (!c->is_null && fl_indexed_var(t) && c->len > INT32_MAX)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "indexed row: column %zu holds %zu bytes, past an int32 length", i,
                              c->len);
    }
    return 0;
}

int fl_indexed_row_encode(const fl_row_t *row, const fl_datatype_t *const *types, size_t n,
                          fl_buf_t *out, fl_error_t *err) {
    assert(row->column_count >= n);
    int rc = fl_indexed_check(row, types, n, err);
    if (rc) return rc;
    size_t start = out->len, header = fl_indexed_header_bytes(types, n);
    memset(fl_buf_reserve(out, header), 0, header);
    out->len += header;
    size_t slot = start + fl_row_bitmap_bytes(n);
    for (size_t i = 0; i < n; i++) {
        const fl_cell_t *c = &row->cells[i];
        if (c->is_null) out->data[start + (i >> 3)] |= (uint8_t)(1u << (i & 7));
        else fl_indexed_put_field(out, &slot, row, c, types[i]);
    }
    return 0;
}

/* ---- decoding ---- */

/* The bytes p[0, w) of field col (w its width or slot length) into the
 * cell; NULL, or what is wrong with them. */
static const char *fl_indexed_read_field(const uint8_t *p, size_t w, const fl_datatype_t *t,
                                         fl_row_t *row, size_t col) {
    fl_cell_t *c = &row->cells[col];
    switch (t->root) {
    case FL_TYPE_BOOLEAN:
        if (p[0] > 1) return "boolean byte is not 0 or 1";
        c->i = p[0];
        break;
    case FL_TYPE_TINYINT: c->i = (int8_t)p[0]; break;
    case FL_TYPE_SMALLINT: c->i = (int16_t)(uint16_t)fl_row_get_le(p, 2); break;
    case FL_TYPE_INTEGER:
    case FL_TYPE_DATE:
    case FL_TYPE_TIME: c->i = (int32_t)(uint32_t)fl_row_get_le(p, 4); break;
    case FL_TYPE_BIGINT: c->i = (int64_t)fl_row_get_le(p, 8); break;
    case FL_TYPE_FLOAT: c->d = fl_row_float_from_bits((uint32_t)fl_row_get_le(p, 4)); break;
    case FL_TYPE_DOUBLE: {
        uint64_t u = fl_row_get_le(p, 8);
        memcpy(&c->d, &u, 8);
        break;
    }
    case FL_TYPE_DECIMAL:
        if (fl_row_decimal_compact(t)) c->dec = (int64_t)fl_row_get_le(p, 8);
        else if (!fl_row_decimal_from_bytes(p, w, &c->dec))
            return "decimal bytes are not a minimal 1..16-byte two's complement";
        break;
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ:
        c->i = (int64_t)fl_row_get_le(p, 8);
        if (!fl_row_timestamp_compact(t)) {
            int32_t nanos = (int32_t)(uint32_t)fl_row_get_le(p + 8, 4);
            if (nanos < 0 || nanos > FL_NANOS_OF_MILLI_MAX)
                return "nanos of the millisecond out of 0..999999";
            c->nanos = nanos;
        }
        break;
    case FL_TYPE_CHAR:
    case FL_TYPE_BINARY:
        while (w > 0 && p[w - 1] == 0) w--; /* the writer's zero padding */
        fl_row_set_bytes(row, col, p, w);
        break;
    default: /* STRING BYTES ARRAY MAP ROW */
        fl_row_set_bytes(row, col, p, w);
        break;
    }
    c->is_null = false;
    return NULL;
}

static int fl_indexed_corrupt(fl_row_t *row, size_t n, fl_error_t *err, size_t col,
                              const fl_datatype_t *t, const char *what) {
    fl_row_reset(row, n);
    return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION, "indexed row: column %zu (%s): %s",
                      col, fl_type_root_json_name(t->root), what);
}

int fl_indexed_row_decode(const uint8_t *p, size_t len, const fl_datatype_t *const *types,
                          size_t n, fl_row_t *row, fl_error_t *err) {
    fl_row_reset(row, n);
    size_t bitmap = fl_row_bitmap_bytes(n), header = fl_indexed_header_bytes(types, n);
    if (len < header)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                          "indexed row: %zu bytes, shorter than its %zu-byte header", len, header);
    if ((n & 7) && (p[bitmap - 1] >> (n & 7)))
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                          "indexed row: null bits set past the last of %zu columns", n);
    size_t slot = bitmap, pos = header;
    for (size_t i = 0; i < n; i++) {
        const fl_datatype_t *t = types[i];
        if (fl_row_bit_get(p, i)) continue;
        size_t w = fl_indexed_width(t);
        if (fl_indexed_var(t)) {
            int32_t l = (int32_t)(uint32_t)fl_row_get_le(p + slot, FL_INDEXED_SLOT_BYTES);
            slot += FL_INDEXED_SLOT_BYTES;
            if (l < 0) return fl_indexed_corrupt(row, n, err, i, t, "negative length");
            w = (size_t)l;
        }
        if (w > len - pos) return fl_indexed_corrupt(row, n, err, i, t, "runs past the end");
        const char *bad = fl_indexed_read_field(p + pos, w, t, row, i);
        if (bad) return fl_indexed_corrupt(row, n, err, i, t, bad);
        pos += w;
    }
    for (; slot < header; slot++)
        if (p[slot]) {
            fl_row_reset(row, n);
            return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                              "indexed row: unused length slot at byte %zu is not zero", slot);
        }
    if (pos != len) {
        fl_row_reset(row, n);
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                          "indexed row: %zu bytes after the last of %zu columns", len - pos, n);
    }
    return 0;
}
