/*
 * client_take.c — the rows idx[0..n) of a decoded Arrow column copied
 * into a new column (Arrow's "take"), for batches a row filter thinned
 * (client_scanner.c): what the batch accessors and the Arrow C export
 * read afterwards is an ordinary contiguous column. Lists and maps take
 * their elements' ranges, structs their children's same rows. The source
 * was checked by arrow_decode.c (offsets inside their children), so the
 * copies are bounded by it. Thread rule: none.
 */
#include <string.h>

#include "client_table.h"
#include "common_alloc.h"

static int32_t fl_take_offset(const fl_arrow_array_t *a, int64_t i) {
    const uint8_t *p = a->values.data + 4 * i;
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24);
}

static void fl_take_put_offset(fl_buf_t *b, int64_t v) {
    uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    fl_buf_append(b, le, 4);
}

static void fl_take_bits(const fl_buf_t *src, const int64_t *idx, size_t n, fl_buf_t *dst) {
    size_t bytes = (n + 7) / 8;
    uint8_t *p = fl_buf_reserve(dst, bytes ? bytes : 1);
    memset(p, 0, bytes ? bytes : 1);
    for (size_t k = 0; k < n; k++)
        if (src->data[idx[k] / 8] >> (idx[k] % 8) & 1) p[k / 8] |= (uint8_t)(1u << (k % 8));
    dst->len = bytes;
}

void fl_arrow_take(const fl_arrow_array_t *src, const int64_t *idx, size_t n,
                   fl_arrow_array_t *dst) {
    memset(dst, 0, sizeof(*dst));
    dst->kind = src->kind;
    dst->type = src->type;
    dst->length = (int64_t)n;
    fl_buf_init(&dst->validity);
    fl_buf_init(&dst->values);
    fl_buf_init(&dst->data);
    if (src->validity.len > 0) {
        fl_take_bits(&src->validity, idx, n, &dst->validity);
        for (size_t k = 0; k < n; k++) dst->null_count += fl_arrow_array_is_null(src, idx[k]);
    }
    switch (src->kind) {
    case FL_TYPE_BOOLEAN: fl_take_bits(&src->values, idx, n, &dst->values); return;
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
    case FL_TYPE_BYTES: {
        fl_take_put_offset(&dst->values, 0);
        for (size_t k = 0; k < n; k++) {
            size_t len;
            const uint8_t *p = fl_arrow_array_bytes(src, idx[k], &len);
            fl_buf_append(&dst->data, p, len);
            fl_take_put_offset(&dst->values, (int64_t)dst->data.len);
        }
        return;
    }
    case FL_TYPE_ARRAY:
    case FL_TYPE_MAP: {
        size_t total = 0;
        for (size_t k = 0; k < n; k++)
            total += (size_t)(fl_take_offset(src, idx[k] + 1) - fl_take_offset(src, idx[k]));
        int64_t *cidx = fl_malloc((total ? total : 1) * sizeof(int64_t));
        size_t m = 0;
        fl_take_put_offset(&dst->values, 0);
        for (size_t k = 0; k < n; k++) {
            for (int32_t j = fl_take_offset(src, idx[k]); j < fl_take_offset(src, idx[k] + 1); j++)
                cidx[m++] = j;
            fl_take_put_offset(&dst->values, (int64_t)m);
        }
        dst->child_count = 1;
        dst->children = fl_calloc(1, sizeof(fl_arrow_array_t));
        fl_arrow_take(&src->children[0], cidx, m, &dst->children[0]);
        fl_free(cidx);
        return;
    }
    case FL_ARROW_ARRAY_ENTRIES:
    case FL_TYPE_ROW:
        dst->child_count = src->child_count;
        dst->children = fl_calloc(src->child_count ? src->child_count : 1, sizeof(fl_arrow_array_t));
        for (size_t c = 0; c < src->child_count; c++)
            fl_arrow_take(&src->children[c], idx, n, &dst->children[c]);
        return;
    default: {
        size_t w = fl_arrow_value_width(src->type);
        size_t bytes = n * w;
        uint8_t *p = fl_buf_reserve(&dst->values, bytes > 0 ? bytes : 1);
        for (size_t k = 0; k < n; k++) memcpy(p + k * w, src->values.data + (size_t)idx[k] * w, w);
        dst->values.len = n * w;
        return;
    }
    }
}

void fl_arrow_null_array(const fl_datatype_t *t, int kind, int64_t length, fl_arrow_array_t *out) {
    fl_arrow_array_init(out, t, kind);
    out->length = length;
    size_t bits = (size_t)(length + 7) / 8;
    if (kind != FL_ARROW_ARRAY_ENTRIES && length > 0) {
        memset(fl_buf_reserve(&out->validity, bits), 0, bits);
        out->validity.len = bits;
        out->null_count = length;
    }
    size_t n = 0;
    switch (kind) {
    case FL_TYPE_BOOLEAN: n = bits; break;
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
    case FL_TYPE_BYTES:
    case FL_TYPE_ARRAY:
    case FL_TYPE_MAP: n = (size_t)(length + 1) * 4; break;
    case FL_ARROW_ARRAY_ENTRIES:
    case FL_TYPE_ROW: n = 0; break;
    default: n = (size_t)length * fl_arrow_value_width(t); break;
    }
    if (n) {
        memset(fl_buf_reserve(&out->values, n), 0, n);
        out->values.len = n;
    }
    switch (kind) {
    case FL_TYPE_ARRAY:
        out->child_count = 1;
        out->children = fl_calloc(1, sizeof(fl_arrow_array_t));
        fl_arrow_null_array(t->element, (int)t->element->root, 0, &out->children[0]);
        return;
    case FL_TYPE_MAP:
        out->child_count = 1;
        out->children = fl_calloc(1, sizeof(fl_arrow_array_t));
        fl_arrow_null_array(t, FL_ARROW_ARRAY_ENTRIES, 0, &out->children[0]);
        return;
    case FL_ARROW_ARRAY_ENTRIES:
        out->child_count = 2;
        out->children = fl_calloc(2, sizeof(fl_arrow_array_t));
        fl_arrow_null_array(t->key, (int)t->key->root, 0, &out->children[0]);
        fl_arrow_null_array(t->value, (int)t->value->root, 0, &out->children[1]);
        return;
    case FL_TYPE_ROW:
        out->child_count = t->field_count;
        out->children = fl_calloc(t->field_count ? t->field_count : 1, sizeof(fl_arrow_array_t));
        for (size_t k = 0; k < t->field_count; k++)
            fl_arrow_null_array(t->fields[k].type, (int)t->fields[k].type->root, length,
                                &out->children[k]);
        return;
    default: return;
    }
}
