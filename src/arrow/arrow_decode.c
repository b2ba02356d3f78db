/*
 * arrow_decode.c — Arrow columns decoded into owned arrays, and their
 * values (arrow_decode.h has the layout table). Thread rule: none.
 */
#include "arrow_decode.h"

#include <assert.h>
#include <string.h>

#include "common_alloc.h"

#define FL_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION

static uint64_t fl_arrow_le(const uint8_t *p, size_t w) {
    uint64_t v = 0;
    for (size_t k = 0; k < w; k++) v |= (uint64_t)p[k] << (8 * k);
    return v;
}

static int64_t fl_arrow_sle(const uint8_t *p, size_t w) {
    uint64_t v = fl_arrow_le(p, w);
    if (w < 8 && (v >> (8 * w - 1) & 1)) v |= ~(uint64_t)0 << (8 * w);
    return (int64_t)v;
}

static int32_t fl_arrow_offset(const fl_arrow_array_t *a, int64_t i) {
    return (int32_t)fl_arrow_le(a->values.data + 4 * i, 4);
}

void fl_arrow_array_free(fl_arrow_array_t *a) {
    fl_buf_free(&a->validity);
    fl_buf_free(&a->values);
    fl_buf_free(&a->data);
    for (size_t i = 0; i < a->child_count; i++) fl_arrow_array_free(&a->children[i]);
    fl_free(a->children);
    memset(a, 0, sizeof(*a));
}

bool fl_arrow_array_is_null(const fl_arrow_array_t *a, int64_t i) {
    if (a->validity.len == 0) return false;
    return !(a->validity.data[i / 8] >> (i % 8) & 1);
}

void fl_arrow_decoder_init(fl_arrow_decoder_t *d, const fl_arrow_batch_view_t *v,
                           size_t buffer_bytes_max) {
    d->view = v;
    d->next_node = 0;
    d->next_buffer = 0;
    d->buffer_bytes_max = buffer_bytes_max;
}

static int fl_arrow_next_buffer(fl_arrow_decoder_t *d, fl_buf_t *out, fl_error_t *err) {
    if (d->next_buffer >= d->view->buffer_count)
        return fl_err_set(err, FL_CORRUPT, "arrow batch has too few buffers");
    return fl_arrow_buffer_get(d->view, d->next_buffer++, d->buffer_bytes_max, out, err);
}

/* Offsets (length + 1 int32) ascending from >= 0 up to at most limit. */
static int fl_arrow_check_offsets(const fl_arrow_array_t *a, int64_t limit, fl_error_t *err) {
    if (a->values.len < (size_t)(a->length + 1) * 4) {
        if (a->length == 0 && a->values.len == 0) return 0; /* empty: no offsets written */
        return fl_err_set(err, FL_CORRUPT, "arrow offsets buffer too short");
    }
    int32_t prev = fl_arrow_offset(a, 0);
    if (prev < 0) return fl_err_set(err, FL_CORRUPT, "negative arrow offset");
    for (int64_t i = 1; i <= a->length; i++) {
        int32_t o = fl_arrow_offset(a, i);
        if (o < prev) return fl_err_set(err, FL_CORRUPT, "arrow offsets go backwards");
        prev = o;
    }
    if (prev > limit) return fl_err_set(err, FL_CORRUPT, "arrow offsets beyond the data");
    return 0;
}

void fl_arrow_array_init(fl_arrow_array_t *a, const fl_datatype_t *t, int kind) {
    memset(a, 0, sizeof(*a));
    a->kind = kind;
    a->type = kind == FL_ARROW_ARRAY_ENTRIES ? NULL : t;
    fl_buf_init(&a->validity);
    fl_buf_init(&a->values);
    fl_buf_init(&a->data);
}

static int fl_arrow_decode(fl_arrow_decoder_t *d, const fl_datatype_t *t, int kind, int depth,
                           fl_arrow_array_t *a, fl_error_t *err) {
    fl_arrow_array_init(a, t, kind);
    if (depth > FL_TYPE_DEPTH_MAX) return fl_err_set(err, FL_CORRUPT, "type too deep");
    if (d->next_node >= d->view->node_count)
        return fl_err_set(err, FL_CORRUPT, "arrow batch has too few nodes");
    fl_arrow_node_t node = fl_arrow_batch_node(d->view, d->next_node++);
    a->length = node.length;
    a->null_count = node.null_count;
    if (a->length < 0 || a->length > INT32_MAX)
        return fl_err_set(err, FL_CORRUPT, "bad arrow node length");
    int rc = fl_arrow_next_buffer(d, &a->validity, err);
    if (rc) return rc;
    if (a->validity.len < (size_t)(a->length + 7) / 8) {
        if (a->null_count > 0) return fl_err_set(err, FL_CORRUPT, "arrow validity buffer too short");
        a->validity.len = 0;
    }
    switch (kind) {
    case FL_TYPE_BOOLEAN:
        if ((rc = fl_arrow_next_buffer(d, &a->values, err))) return rc;
        if (a->values.len < (size_t)(a->length + 7) / 8)
            return fl_err_set(err, FL_CORRUPT, "arrow boolean buffer too short");
        return 0;
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
    case FL_TYPE_BYTES:
        if ((rc = fl_arrow_next_buffer(d, &a->values, err))) return rc;
        if ((rc = fl_arrow_next_buffer(d, &a->data, err))) return rc;
        return fl_arrow_check_offsets(a, (int64_t)a->data.len, err);
    case FL_TYPE_ARRAY:
    case FL_TYPE_MAP:
        if ((rc = fl_arrow_next_buffer(d, &a->values, err))) return rc;
        a->child_count = 1;
        a->children = fl_calloc(1, sizeof(fl_arrow_array_t));
        rc = kind == FL_TYPE_ARRAY
                 ? fl_arrow_decode(d, t->element, (int)t->element->root, depth + 1, a->children, err)
                 : fl_arrow_decode(d, t, FL_ARROW_ARRAY_ENTRIES, depth + 1, a->children, err);
        if (rc) return rc;
        return fl_arrow_check_offsets(a, a->children[0].length, err);
    case FL_ARROW_ARRAY_ENTRIES:
    case FL_TYPE_ROW: {
        size_t n = kind == FL_ARROW_ARRAY_ENTRIES ? 2 : t->field_count;
        a->child_count = n;
        a->children = fl_calloc(n ? n : 1, sizeof(fl_arrow_array_t));
        for (size_t i = 0; i < n; i++) {
            const fl_datatype_t *ct = kind == FL_ARROW_ARRAY_ENTRIES ? (i ? t->value : t->key)
                                                                     : t->fields[i].type;
            if ((rc = fl_arrow_decode(d, ct, (int)ct->root, depth + 1, &a->children[i], err)))
                return rc;
            if (a->children[i].length < a->length)
                return fl_err_set(err, FL_CORRUPT, "arrow struct child shorter than its parent");
        }
        return 0;
    }
    default: {
        size_t w = fl_arrow_value_width(t);
        if (w == 0) return fl_err_set(err, FL_CORRUPT, "unsupported column type");
        if ((rc = fl_arrow_next_buffer(d, &a->values, err))) return rc;
        if (a->values.len < (size_t)a->length * w)
            return fl_err_set(err, FL_CORRUPT, "arrow values buffer too short");
        return 0;
    }
    }
}

int fl_arrow_decoder_next(fl_arrow_decoder_t *d, const fl_datatype_t *t, fl_arrow_array_t *out,
                          fl_error_t *err) {
    int rc = fl_arrow_decode(d, t, (int)t->root, 0, out, err);
    if (!rc && out->length < d->view->length)
        rc = fl_err_set(err, FL_CORRUPT, "arrow column shorter than the batch");
    if (rc) fl_arrow_array_free(out);
    return rc;
}

/* ---- values ---- */

bool fl_arrow_array_bool(const fl_arrow_array_t *a, int64_t i) {
    assert(a->kind == FL_TYPE_BOOLEAN && i < a->length);
    return a->values.data[i / 8] >> (i % 8) & 1;
}

int64_t fl_arrow_array_int(const fl_arrow_array_t *a, int64_t i) {
    size_t w = fl_arrow_value_width(a->type);
    assert(w >= 1 && w <= 8 && i < a->length);
    return fl_arrow_sle(a->values.data + w * (size_t)i, w);
}

double fl_arrow_array_double(const fl_arrow_array_t *a, int64_t i) {
    assert(i < a->length);
    if (a->kind == FL_TYPE_FLOAT) {
        uint32_t u = (uint32_t)fl_arrow_le(a->values.data + 4 * i, 4);
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    assert(a->kind == FL_TYPE_DOUBLE);
    uint64_t u = fl_arrow_le(a->values.data + 8 * i, 8);
    double v;
    memcpy(&v, &u, 8);
    return v;
}

__int128 fl_arrow_array_decimal(const fl_arrow_array_t *a, int64_t i) {
    assert(a->kind == FL_TYPE_DECIMAL && i < a->length);
    const uint8_t *v = a->values.data + 16 * i;
    return (__int128)((unsigned __int128)fl_arrow_le(v + 8, 8) << 64 | fl_arrow_le(v, 8));
}

const uint8_t *fl_arrow_array_bytes(const fl_arrow_array_t *a, int64_t i, size_t *len) {
    assert(i < a->length);
    if (a->kind == FL_TYPE_BINARY) {
        size_t w = fl_arrow_value_width(a->type);
        *len = w;
        return a->values.data + (size_t)i * w;
    }
    assert(a->kind == FL_TYPE_CHAR || a->kind == FL_TYPE_STRING || a->kind == FL_TYPE_BYTES);
    int32_t s = fl_arrow_offset(a, i), e = fl_arrow_offset(a, i + 1);
    *len = (size_t)(e - s);
    /* an all-empty column has no data buffer at all */
    return e > s ? a->data.data + s : (const uint8_t *)"";
}

void fl_arrow_array_child_range(const fl_arrow_array_t *a, int64_t i, int64_t *start,
                                int64_t *end) {
    assert((a->kind == FL_TYPE_ARRAY || a->kind == FL_TYPE_MAP) && i < a->length);
    *start = fl_arrow_offset(a, i);
    *end = fl_arrow_offset(a, i + 1);
}
