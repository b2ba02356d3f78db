/*
 * arrow_column.c — a simple builder for one flat Arrow column (Bool, Int,
 * FloatingPoint, Utf8, Binary) with nulls, feeding fl_arrow_writer_t: for
 * tests and for libfluss's log writer. Thread rule: none.
 *
 * Buffers it produces (Arrow columnar format):
 *
 * | kind            | buffer 0                 | buffer 1                        | buffer 2 |
 * |-----------------|--------------------------|---------------------------------|----------|
 * | BOOL            | validity, LSB first      | values, 1 bit per row, LSB first| —        |
 * | INT8..INT64     | validity                 | values, 1/2/4/8 bytes LE        | —        |
 * | FLOAT, DOUBLE   | validity                 | IEEE 754 binary32/64 LE         | —        |
 * | UTF8, BINARY    | validity                 | int32 LE offsets, length + 1    | bytes    |
 *
 * Validity bit 1 = valid. Null slots hold zeros (an empty range for
 * UTF8/BINARY). The validity buffer is always written, even without nulls.
 */
#include <assert.h>
#include <string.h>

#include "arrow_flatbuf.h"
#include "arrow_int.h"

static size_t fl_arrow_column_width(fl_arrow_column_kind_t k) {
    switch (k) {
    case FL_ARROW_COL_INT8: return 1;
    case FL_ARROW_COL_INT16: return 2;
    case FL_ARROW_COL_INT32:
    case FL_ARROW_COL_FLOAT:
    case FL_ARROW_COL_UTF8:
    case FL_ARROW_COL_BINARY: return 4;
    case FL_ARROW_COL_INT64:
    case FL_ARROW_COL_DOUBLE: return 8;
    case FL_ARROW_COL_BOOL: return 0;
    }
    return 0;
}

static bool fl_arrow_column_is_var(const fl_arrow_column_t *c) {
    return c->kind == FL_ARROW_COL_UTF8 || c->kind == FL_ARROW_COL_BINARY;
}

static void fl_arrow_bit_push(fl_buf_t *bits, int64_t index, bool v) {
    if (index % 8 == 0) fl_buf_put_u8(bits, 0);
    if (v) bits->data[index / 8] |= (uint8_t)(1u << (index % 8));
}

void fl_arrow_column_init(fl_arrow_column_t *c, fl_arrow_column_kind_t kind) {
    memset(c, 0, sizeof(*c));
    c->kind = kind;
    fl_buf_init(&c->validity);
    fl_buf_init(&c->values);
    fl_buf_init(&c->data);
    if (fl_arrow_column_is_var(c)) {
        uint8_t zero[4] = {0};
        fl_buf_append(&c->values, zero, 4); /* offsets[0] */
    }
}

void fl_arrow_column_reset(fl_arrow_column_t *c) {
    fl_buf_free(&c->validity);
    fl_buf_free(&c->values);
    fl_buf_free(&c->data);
    c->length = c->null_count = 0;
}

/* Appends one fixed-width slot of the column's width holding v's low bytes. */
static void fl_arrow_column_put_fixed(fl_arrow_column_t *c, uint64_t v) {
    uint8_t b[8];
    fl_arrow_put_le64(b, v);
    fl_buf_append(&c->values, b, fl_arrow_column_width(c->kind));
}

static void fl_arrow_column_push(fl_arrow_column_t *c, bool valid) {
    fl_arrow_bit_push(&c->validity, c->length, valid);
    if (!valid) c->null_count++;
}

void fl_arrow_column_append_null(fl_arrow_column_t *c) {
    if (c->kind == FL_ARROW_COL_BOOL) {
        fl_arrow_bit_push(&c->values, c->length, false);
    } else if (fl_arrow_column_is_var(c)) {
        uint8_t b[4];
        fl_arrow_put_le32(b, (uint32_t)c->data.len);
        fl_buf_append(&c->values, b, 4);
    } else {
        fl_arrow_column_put_fixed(c, 0);
    }
    fl_arrow_column_push(c, false);
    c->length++;
}

void fl_arrow_column_append_int(fl_arrow_column_t *c, int64_t v) {
    if (c->kind == FL_ARROW_COL_FLOAT || c->kind == FL_ARROW_COL_DOUBLE) {
        fl_arrow_column_append_double(c, (double)v);
        return;
    }
    if (c->kind == FL_ARROW_COL_BOOL) {
        fl_arrow_column_append_bool(c, v != 0);
        return;
    }
    assert(!fl_arrow_column_is_var(c));
    fl_arrow_column_put_fixed(c, (uint64_t)v);
    fl_arrow_column_push(c, true);
    c->length++;
}

void fl_arrow_column_append_double(fl_arrow_column_t *c, double v) {
    if (c->kind == FL_ARROW_COL_FLOAT) {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        fl_arrow_column_put_fixed(c, u);
    } else {
        assert(c->kind == FL_ARROW_COL_DOUBLE);
        uint64_t u;
        memcpy(&u, &v, 8);
        fl_arrow_column_put_fixed(c, u);
    }
    fl_arrow_column_push(c, true);
    c->length++;
}

void fl_arrow_column_append_bool(fl_arrow_column_t *c, bool v) {
    assert(c->kind == FL_ARROW_COL_BOOL);
    fl_arrow_bit_push(&c->values, c->length, v);
    fl_arrow_column_push(c, true);
    c->length++;
}

int fl_arrow_column_append_bytes(fl_arrow_column_t *c, const void *p, size_t n,
                                 fl_error_t *err) {
    assert(fl_arrow_column_is_var(c));
    if (n > (size_t)INT32_MAX - c->data.len)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "arrow: %zu more bytes overflow the column's int32 offsets", n);
    fl_buf_append(&c->data, p, n);
    uint8_t b[4];
    fl_arrow_put_le32(b, (uint32_t)c->data.len);
    fl_buf_append(&c->values, b, 4);
    fl_arrow_column_push(c, true);
    c->length++;
    return 0;
}

int fl_arrow_column_write(const fl_arrow_column_t *c, fl_arrow_writer_t *w, fl_error_t *err) {
    fl_arrow_writer_add_node(w, c->length, c->null_count);
    int rc = fl_arrow_writer_add_buffer(w, c->validity.data, c->validity.len, err);
    if (!rc) rc = fl_arrow_writer_add_buffer(w, c->values.data, c->values.len, err);
    if (!rc && fl_arrow_column_is_var(c))
        rc = fl_arrow_writer_add_buffer(w, c->data.data, c->data.len, err);
    return rc;
}
