/*
 * types_row_nested.c — BinaryArray and BinaryMap values (layout in
 * types_row_nested.h; Fluss's BinaryArrayWriter, AbstractBinaryWriter,
 * BinaryArray, BinaryMap#valueOf). Thread rule: none.
 */
#include "types_row_nested.h"

#include <math.h>
#include <string.h>

#include "common_alloc.h"
#include "types_row_field.h"

#define FL_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION
#define FL_NESTED_INLINE_MAX 7
#define FL_NESTED_INLINE_MARK ((uint64_t)0x80 << 56)

size_t fl_nested_slot_width(const fl_datatype_t *elem) {
    switch (elem->root) {
    case FL_TYPE_BOOLEAN:
    case FL_TYPE_TINYINT: return 1;
    case FL_TYPE_SMALLINT: return 2;
    case FL_TYPE_INTEGER:
    case FL_TYPE_FLOAT:
    case FL_TYPE_DATE:
    case FL_TYPE_TIME: return 4;
    default: return 8;
    }
}

static size_t fl_round8(size_t n) { return (n + 7) & ~(size_t)7; }

static size_t fl_nested_header(size_t n) { return 4 + (n + 31) / 32 * 4; }

/* ---- reading ---- */

int fl_nested_array_view(const uint8_t *p, size_t len, const fl_datatype_t *elem,
                         fl_nested_array_t *out, fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    if (len < 4) return fl_err_set(err, FL_CORRUPT, "an array value of %zu bytes", len);
    int32_t n = (int32_t)fl_row_get_le(p, 4);
    if (n < 0 || n > FL_NESTED_ELEMENTS_MAX)
        return fl_err_set(err, FL_CORRUPT, "an array value of %d elements", n);
    size_t header = fl_nested_header((size_t)n), width = fl_nested_slot_width(elem);
    if (header + (size_t)n * width > len)
        return fl_err_set(err, FL_CORRUPT, "an array of %d elements in %zu bytes", n, len);
    out->p = p;
    out->len = len;
    out->count = n;
    out->elem = elem;
    out->header = header;
    out->width = width;
    return 0;
}

bool fl_nested_array_is_null(const fl_nested_array_t *a, int32_t i) {
    return fl_row_bit_get(a->p + 4, (size_t)i);
}

/* The (offset, length) of a variable part slot, checked against the array. */
static int fl_nested_var(const fl_nested_array_t *a, uint64_t v, size_t *off, size_t *len,
                         fl_error_t *err) {
    *off = (size_t)(v >> 32);
    *len = (size_t)(uint32_t)v;
    if (*off > a->len || *len > a->len - *off)
        return fl_err_set(err, FL_CORRUPT, "an array element at %zu+%zu outside %zu bytes", *off,
                          *len, a->len);
    return 0;
}

/* Bytes of a CHAR/STRING/BINARY/BYTES slot (inline or variable). */
static int fl_nested_bytes(const fl_nested_array_t *a, const uint8_t *slot, const uint8_t **p,
                           size_t *len, fl_error_t *err) {
    uint64_t v = fl_row_get_le(slot, 8);
    if (v & FL_NESTED_INLINE_MARK) {
        *len = (size_t)(v >> 56 & 0x7f);
        if (*len > FL_NESTED_INLINE_MAX)
            return fl_err_set(err, FL_CORRUPT, "an inline array element of %zu bytes", *len);
        *p = slot;
        return 0;
    }
    size_t off = 0;
    int rc = fl_nested_var(a, v, &off, len, err);
    *p = a->p + off;
    return rc;
}

int fl_nested_array_get(const fl_nested_array_t *a, int32_t i, fl_row_t *row, size_t col,
                        fl_error_t *err) {
    fl_cell_t *c = &row->cells[col];
    if (fl_nested_array_is_null(a, i)) {
        memset(c, 0, sizeof(*c));
        c->is_null = true;
        return 0;
    }
    const fl_datatype_t *t = a->elem;
    const uint8_t *slot = a->p + a->header + (size_t)i * a->width;
    uint64_t v = fl_row_get_le(slot, a->width);
    c->is_null = false;
    c->nanos = 0;
    switch (t->root) {
    case FL_TYPE_BOOLEAN: c->i = v != 0; return 0;
    case FL_TYPE_TINYINT: c->i = (int8_t)v; return 0;
    case FL_TYPE_SMALLINT: c->i = (int16_t)v; return 0;
    case FL_TYPE_INTEGER:
    case FL_TYPE_DATE:
    case FL_TYPE_TIME: c->i = (int32_t)v; return 0;
    case FL_TYPE_BIGINT: c->i = (int64_t)v; return 0;
    case FL_TYPE_FLOAT: c->d = fl_row_float_from_bits((uint32_t)v); return 0;
    case FL_TYPE_DOUBLE: memcpy(&c->d, &v, 8); return 0;
    case FL_TYPE_DECIMAL: {
        if (fl_row_decimal_compact(t)) {
            c->dec = (int64_t)v;
            return 0;
        }
        size_t off = 0, len = 0;
        int rc = fl_nested_var(a, v, &off, &len, err);
        if (!rc && !fl_row_decimal_from_bytes(a->p + off, len, &c->dec))
            rc = fl_err_set(err, FL_CORRUPT, "an array decimal of %zu bytes", len);
        return rc;
    }
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ: {
        if (fl_row_timestamp_compact(t)) {
            c->i = (int64_t)v;
            return 0;
        }
        size_t off = (size_t)(v >> 32);
        int32_t nanos = (int32_t)(uint32_t)v;
        if (off > a->len || a->len - off < 8 || nanos < 0 || nanos > FL_NANOS_OF_MILLI_MAX)
            return fl_err_set(err, FL_CORRUPT, "an array timestamp at %zu (nanos %d)", off, nanos);
        c->i = (int64_t)fl_row_get_le(a->p + off, 8);
        c->nanos = nanos;
        return 0;
    }
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
    case FL_TYPE_BINARY:
    case FL_TYPE_BYTES: {
        const uint8_t *p = NULL;
        size_t len = 0;
        int rc = fl_nested_bytes(a, slot, &p, &len, err);
        if (!rc) fl_row_set_bytes(row, col, p, len);
        return rc;
    }
    case FL_TYPE_ARRAY:
    case FL_TYPE_MAP:
    case FL_TYPE_ROW: {
        size_t off = 0, len = 0;
        int rc = fl_nested_var(a, v, &off, &len, err);
        if (!rc) fl_row_set_bytes(row, col, a->p + off, len);
        return rc;
    }
    default: return fl_err_set(err, FL_CORRUPT, "an array of an unknown element type");
    }
}

int fl_nested_map_view(const uint8_t *p, size_t len, const fl_datatype_t *map,
                       fl_nested_map_t *out, fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    if (len < 4) return fl_err_set(err, FL_CORRUPT, "a map value of %zu bytes", len);
    int32_t kbytes = (int32_t)fl_row_get_le(p, 4);
    if (kbytes < 0 || (size_t)kbytes > len - 4)
        return fl_err_set(err, FL_CORRUPT, "a map whose keys take %d of %zu bytes", kbytes, len);
    int rc = fl_nested_array_view(p + 4, (size_t)kbytes, map->key, &out->keys, err);
    if (!rc)
        rc = fl_nested_array_view(p + 4 + kbytes, len - 4 - (size_t)kbytes, map->value,
                                  &out->values, err);
    if (!rc && out->keys.count != out->values.count)
        rc = fl_err_set(err, FL_CORRUPT, "a map of %d keys and %d values", out->keys.count,
                        out->values.count);
    return rc;
}

/* ---- writing ---- */

static void fl_put_le_at(fl_buf_t *b, size_t at, uint64_t v, size_t n) {
    for (size_t k = 0; k < n; k++) b->data[at + k] = (uint8_t)(v >> (8 * k));
}

/* Appends p[0, n) to the variable part, padded to 8; returns its offset
 * from the array's start. */
static size_t fl_nested_put_var(fl_buf_t *out, size_t start, const void *p, size_t n) {
    size_t off = out->len - start, padded = fl_round8(n);
    uint8_t *dst = fl_buf_reserve(out, padded ? padded : 1);
    memset(dst, 0, padded);
    if (n) memcpy(dst, p, n);
    out->len += padded;
    return off;
}

/* The 8-byte slot of one non-NULL variable-length element. */
static uint64_t fl_nested_var_slot(const fl_datatype_t *t, const fl_row_t *src,
                                   const fl_cell_t *c, fl_buf_t *out, size_t start) {
    const uint8_t *bytes = fl_row_cell_bytes(src, c);
    switch (t->root) {
    case FL_TYPE_DECIMAL: {
        if (fl_row_decimal_compact(t)) return (uint64_t)(int64_t)c->dec;
        uint8_t be[FL_DECIMAL_BYTES_MAX], room[16] = {0};
        size_t n = fl_row_decimal_to_bytes(c->dec, be);
        memcpy(room, be, n);
        return (uint64_t)fl_nested_put_var(out, start, room, 16) << 32 | n;
    }
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ: {
        if (fl_row_timestamp_compact(t)) return (uint64_t)c->i;
        uint8_t ms[8];
        for (size_t k = 0; k < 8; k++) ms[k] = (uint8_t)((uint64_t)c->i >> (8 * k));
        return (uint64_t)fl_nested_put_var(out, start, ms, 8) << 32 | (uint32_t)c->nanos;
    }
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
    case FL_TYPE_BINARY:
    case FL_TYPE_BYTES:
        if (c->len <= FL_NESTED_INLINE_MAX) {
            uint64_t v = (uint64_t)(0x80 | c->len) << 56;
            for (size_t k = 0; k < c->len; k++) v |= (uint64_t)bytes[k] << (8 * k);
            return v;
        }
        return (uint64_t)fl_nested_put_var(out, start, bytes, c->len) << 32 | c->len;
    default: /* ARRAY MAP ROW */
        return (uint64_t)fl_nested_put_var(out, start, bytes, c->len) << 32 | c->len;
    }
}

void fl_nested_array_encode(const fl_row_t *src, size_t n, const fl_datatype_t *elem,
                            fl_buf_t *out) {
    size_t start = out->len, header = fl_nested_header(n), width = fl_nested_slot_width(elem);
    size_t fixed = fl_round8(header + n * width);
    memset(fl_buf_reserve(out, fixed), 0, fixed);
    out->len += fixed;
    fl_put_le_at(out, start, (uint32_t)n, 4);
    for (size_t i = 0; i < n; i++) {
        const fl_cell_t *c = &src->cells[i];
        size_t slot = start + header + i * width;
        if (c->is_null) {
            out->data[start + 4 + i / 8] |= (uint8_t)(1u << (i % 8));
            continue;
        }
        uint64_t v;
        switch (elem->root) {
        case FL_TYPE_BOOLEAN: v = c->i != 0; break;
        case FL_TYPE_FLOAT: v = isnan(c->d) ? 0x7fc00000u : fl_row_float_bits(c->d); break;
        case FL_TYPE_DOUBLE:
            v = isnan(c->d) ? UINT64_C(0x7ff8000000000000) : fl_row_double_bits(c->d);
            break;
        case FL_TYPE_TINYINT:
        case FL_TYPE_SMALLINT:
        case FL_TYPE_INTEGER:
        case FL_TYPE_DATE:
        case FL_TYPE_TIME:
        case FL_TYPE_BIGINT: v = (uint64_t)c->i; break;
        default: v = fl_nested_var_slot(elem, src, c, out, start); break;
        }
        fl_put_le_at(out, slot, v, width);
    }
}

void fl_nested_map_encode(const fl_row_t *keys, const fl_row_t *values, size_t n,
                          const fl_datatype_t *map, fl_buf_t *out) {
    size_t start = out->len;
    memset(fl_buf_reserve(out, 4), 0, 4);
    out->len += 4;
    fl_nested_array_encode(keys, n, map->key, out);
    fl_put_le_at(out, start, (uint32_t)(out->len - start - 4), 4);
    fl_nested_array_encode(values, n, map->value, out);
}

/* ---- checking a whole value ---- */

int fl_nested_check(const fl_datatype_t *t, fl_row_format_t fmt, const uint8_t *p, size_t len,
                    int depth, fl_error_t *err) {
    if (depth > FL_TYPE_DEPTH_MAX) return fl_err_set(err, FL_CORRUPT, "a value nested too deep");
    fl_row_t scratch;
    int rc = 0;
    if (t->root == FL_TYPE_ROW) {
        if (t->field_count > FL_NESTED_FIELDS_MAX)
            return fl_err_set(err, FL_CORRUPT, "a row of %zu fields", t->field_count);
        const fl_datatype_t **types = fl_calloc(t->field_count ? t->field_count : 1, sizeof(*types));
        for (size_t k = 0; k < t->field_count; k++) types[k] = t->fields[k].type;
        fl_row_init(&scratch, t->field_count);
        rc = fl_row_decode(fmt, p, len, types, t->field_count, &scratch, err);
        for (size_t k = 0; !rc && k < t->field_count; k++) {
            const fl_cell_t *c = &scratch.cells[k];
            if (!c->is_null && fl_row_type_nested(types[k]->root))
                rc = fl_nested_check(types[k], fmt, fl_row_cell_bytes(&scratch, c), c->len,
                                     depth + 1, err);
        }
        fl_row_free(&scratch);
        fl_free(types);
        return rc;
    }
    fl_nested_array_t arrays[2];
    size_t na = 1;
    if (t->root == FL_TYPE_ARRAY) {
        rc = fl_nested_array_view(p, len, t->element, &arrays[0], err);
    } else if (t->root == FL_TYPE_MAP) {
        fl_nested_map_t m;
        rc = fl_nested_map_view(p, len, t, &m, err);
        arrays[0] = m.keys;
        arrays[1] = m.values;
        na = 2;
    } else {
        return 0;
    }
    fl_row_init(&scratch, 1);
    for (size_t a = 0; !rc && a < na; a++) {
        const fl_datatype_t *elem = arrays[a].elem;
        for (int32_t i = 0; !rc && i < arrays[a].count; i++) {
            fl_row_clear(&scratch);
            rc = fl_nested_array_get(&arrays[a], i, &scratch, 0, err);
            const fl_cell_t *c = &scratch.cells[0];
            if (!rc && !c->is_null && fl_row_type_nested(elem->root))
                rc = fl_nested_check(elem, fmt, fl_row_cell_bytes(&scratch, c), c->len, depth + 1,
                                     err);
        }
    }
    fl_row_free(&scratch);
    return rc;
}
