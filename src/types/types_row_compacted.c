/*
 * types_row_compacted.c — compacted field and key encodings
 * (types_row_compacted.h has the byte table; Fluss's CompactedRowWriter /
 * CompactedKeyWriter). Thread rule: none.
 */
#include "types_row_compacted.h"

#include <string.h>

void fl_compacted_put_uvarint(fl_buf_t *b, uint64_t v) {
    uint8_t tmp[10];
    size_t n = 0;
    while (v >= 0x80) {
        tmp[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    tmp[n++] = (uint8_t)v;
    fl_buf_append(b, tmp, n);
}

static void fl_compacted_put_le(fl_buf_t *b, uint64_t v, size_t n) {
    uint8_t tmp[8];
    for (size_t i = 0; i < n; i++) tmp[i] = (uint8_t)(v >> (8 * i));
    fl_buf_append(b, tmp, n);
}

/* Java's BigInteger.toByteArray: minimal big-endian two's complement. */
static void fl_compacted_put_bigint(fl_buf_t *b, __int128 v) {
    uint8_t be[16];
    unsigned __int128 u = (unsigned __int128)v;
    for (int i = 15; i >= 0; i--) {
        be[i] = (uint8_t)u;
        u >>= 8;
    }
    int start = 0;
    while (start < 15 && ((be[start] == 0x00 && !(be[start + 1] & 0x80)) ||
                          (be[start] == 0xFF && (be[start + 1] & 0x80))))
        start++;
    fl_compacted_put_uvarint(b, (uint64_t)(16 - start));
    fl_buf_append(b, be + start, (size_t)(16 - start));
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
        switch (t->root) {
        case FL_TYPE_BOOLEAN:
        case FL_TYPE_TINYINT: fl_buf_put_u8(out, (uint8_t)c->i); break;
        case FL_TYPE_SMALLINT: fl_compacted_put_le(out, (uint64_t)c->i, 2); break;
        case FL_TYPE_INTEGER:
        case FL_TYPE_DATE:
        case FL_TYPE_TIME: fl_compacted_put_uvarint(out, (uint32_t)(int32_t)c->i); break;
        case FL_TYPE_BIGINT: fl_compacted_put_uvarint(out, (uint64_t)c->i); break;
        case FL_TYPE_FLOAT: {
            float f = (float)c->d;
            uint32_t u;
            memcpy(&u, &f, 4);
            fl_compacted_put_le(out, u, 4);
            break;
        }
        case FL_TYPE_DOUBLE: {
            uint64_t u;
            memcpy(&u, &c->d, 8);
            fl_compacted_put_le(out, u, 8);
            break;
        }
        case FL_TYPE_CHAR:
        case FL_TYPE_STRING:
        case FL_TYPE_BINARY:
        case FL_TYPE_BYTES:
            fl_compacted_put_uvarint(out, c->len);
            fl_buf_append(out, fl_row_cell_bytes(r, c), c->len);
            break;
        case FL_TYPE_DECIMAL:
            if (t->precision <= 18) fl_compacted_put_uvarint(out, (uint64_t)(int64_t)c->dec);
            else fl_compacted_put_bigint(out, c->dec);
            break;
        case FL_TYPE_TIMESTAMP:
        case FL_TYPE_TIMESTAMP_LTZ:
            fl_compacted_put_uvarint(out, (uint64_t)c->i);
            if (t->precision > 3) fl_compacted_put_uvarint(out, (uint32_t)c->nanos);
            break;
        default:
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "bucket key column %s has an unsupported type",
                              schema->columns[col].name);
        }
    }
    return 0;
}
