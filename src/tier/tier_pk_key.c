/*
 * tier_pk_key.c — the lake index's key of a primary-key row
 * (tier_pk_key.h).
 */
#include "tier_pk_key.h"

#include <string.h>

#include "tier_convert.h"

#define PK_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION

static void put_le(fl_buf_t *out, uint64_t v, size_t n) {
    uint8_t b[8];
    for (size_t i = 0; i < n; i++) b[i] = (uint8_t)(v >> (8 * i));
    fl_buf_append(out, b, n);
}

static void put_bytes(fl_buf_t *out, const uint8_t *p, size_t len, size_t pad_to) {
    size_t n = len < pad_to ? pad_to : len;
    put_le(out, n, 4);
    if (len) fl_buf_append(out, p, len);
    if (n > len) {
        memset(fl_buf_reserve(out, n - len), 0, n - len);
        out->len += n - len;
    }
}

int fl_tier_pk_key_of_row(const fl_schema_t *s, const fl_row_t *row, fl_buf_t *out,
                          fl_error_t *err) {
    fl_buf_reset(out);
    if (!s->has_primary_key || s->primary_key.count == 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "the table has no primary key");
    for (size_t k = 0; k < s->primary_key.count; k++) {
        int col = fl_schema_column_index(s, s->primary_key.items[k]);
        if (col < 0 || (size_t)col >= row->column_count)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "primary-key column %s is not in the row",
                              s->primary_key.items[k]);
        const fl_datatype_t *t = s->columns[col].type;
        const fl_cell_t *c = &row->cells[col];
        if (c->is_null)
            return fl_err_set(err, PK_CORRUPT, "primary-key column %s is NULL", s->columns[col].name);
        fl_pq_column_spec_t spec;
        fl_tier_value_t v;
        int rc = fl_tier_column_spec(s->columns[col].name, t, 1, &spec, err);
        if (!rc) rc = fl_tier_value_of(t, row, c, &v, err);
        if (rc) return rc;
        switch (spec.type) {
        case FL_PQ_BOOLEAN: put_le(out, v.b, 1); break;
        case FL_PQ_INT32: put_le(out, (uint32_t)v.i32, 4); break;
        case FL_PQ_INT64: put_le(out, (uint64_t)v.i64, 8); break;
        case FL_PQ_FLOAT: {
            uint32_t bits;
            memcpy(&bits, &v.f, 4);
            put_le(out, bits, 4);
            break;
        }
        case FL_PQ_DOUBLE: {
            uint64_t bits;
            memcpy(&bits, &v.d, 8);
            put_le(out, bits, 8);
            break;
        }
        case FL_PQ_FLBA: fl_buf_append(out, v.fixed, (size_t)spec.type_length); break;
        case FL_PQ_BYTE_ARRAY: {
            size_t pad = t->root == FL_TYPE_BINARY && t->length > 0 ? (size_t)t->length : 0;
            put_bytes(out, v.bytes.p, v.bytes.len, pad);
            break;
        }
        default:
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "primary-key column %s: no lake key",
                              s->columns[col].name);
        }
    }
    return 0;
}

int fl_tier_pk_key_append(const fl_pq_values_t *v, size_t i, fl_buf_t *out, fl_error_t *err) {
    if (i >= v->rows || !v->valid[i])
        return fl_err_set(err, PK_CORRUPT, "lake file: a primary-key value is NULL or missing");
    switch (v->type) {
    case FL_PQ_BOOLEAN: put_le(out, ((const uint8_t *)v->values)[i], 1); break;
    case FL_PQ_INT32: put_le(out, (uint32_t)((const int32_t *)v->values)[i], 4); break;
    case FL_PQ_INT64: put_le(out, (uint64_t)((const int64_t *)v->values)[i], 8); break;
    case FL_PQ_FLOAT: {
        uint32_t bits;
        memcpy(&bits, (const float *)v->values + i, 4);
        put_le(out, bits, 4);
        break;
    }
    case FL_PQ_DOUBLE: {
        uint64_t bits;
        memcpy(&bits, (const double *)v->values + i, 8);
        put_le(out, bits, 8);
        break;
    }
    case FL_PQ_FLBA: fl_buf_append(out, (const uint8_t *)v->values + i * v->width, v->width); break;
    case FL_PQ_BYTE_ARRAY: {
        uint64_t a = v->offsets[i], b = v->offsets[i + 1];
        if (b < a || b - a > UINT32_MAX)
            return fl_err_set(err, PK_CORRUPT, "lake file: a primary-key value's bytes are corrupt");
        put_bytes(out, v->bytes + a, (size_t)(b - a), 0);
        break;
    }
    default:
        return fl_err_set(err, PK_CORRUPT, "lake file: a primary-key column of physical type %d",
                          v->type);
    }
    return 0;
}
