/*
 * record_builder.c — one LogRecordBatch with an ARROW body built from rows
 * (record_builder.h; protocol.md §4.1, §4.3). Thread rule: one user.
 *
 * Buffers per column (Fluss type → Arrow, protocol.md §4.3):
 *
 * | Fluss type                    | buffer 1 (after validity)                 | buffer 2 |
 * |-------------------------------|-------------------------------------------|----------|
 * | BOOLEAN                       | values, 1 bit per row                     | —        |
 * | TINYINT/SMALLINT/INT/BIGINT   | 1/2/4/8-byte LE values                    | —        |
 * | FLOAT/DOUBLE                  | IEEE 754 LE                               | —        |
 * | DECIMAL(p,s)                  | 16-byte LE two's complement unscaled      | —        |
 * | DATE                          | int32 days                                | —        |
 * | TIME(p)                       | p=0 int32 s, 1-3 int32 ms, 4-6 int64 us, 7-9 int64 ns | — |
 * | TIMESTAMP(_LTZ)(p)            | int64 s / ms / us / ns by the same bands  | —        |
 * | BINARY(n)                     | n bytes per row                           | —        |
 * | CHAR/STRING/BYTES             | int32 offsets (rows + 1)                  | bytes    |
 * | ARRAY/MAP/ROW                 | written as all-NULL columns only          |          |
 *
 * The V0 header (fl_batch_write_header): BaseOffset 0, Magic 0,
 * CommitTimestamp 0, SchemaId, Attributes (bit0 append-only), LastOffsetDelta
 * rows-1 (0 when empty), WriterId, BatchSequence, RecordCount; then, for a
 * changelog, RecordCount change-type bytes; then the Arrow message, unless
 * the batch has no rows (Fluss MemoryLogRecordsArrowBuilder#build).
 */
#include "record_builder.h"

#include <assert.h>
#include <string.h>

#include "common_alloc.h"
#include "record_batch.h"
#include "types_row_nested.h"

static bool fl_type_nested(fl_type_root_t r) {
    return r == FL_TYPE_ARRAY || r == FL_TYPE_MAP || r == FL_TYPE_ROW;
}

static bool fl_type_var(fl_type_root_t r) {
    return r == FL_TYPE_CHAR || r == FL_TYPE_STRING || r == FL_TYPE_BYTES;
}


static const fl_datatype_t *fl_record_type(const fl_record_builder_t *b, size_t col) {
    return b->schema->columns[col].type;
}

int fl_record_builder_check_schema(const fl_schema_t *schema, fl_error_t *err) {
    for (size_t i = 0; i < schema->column_count; i++) {
        uint32_t nodes, buffers;
        if (fl_arrow_column_shape(schema->columns[i].type, &nodes, &buffers))
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "column %s: unsupported type",
                              schema->columns[i].name);
    }
    return 0;
}

/* ---- columns ---- */

/* Empties a column (and its children) for a new batch; a var-width
 * column starts with offsets[0] = 0, a list or map too. */
static void fl_col_clear(fl_record_column_t *c, const fl_datatype_t *t) {
    c->validity.len = c->values.len = c->data.len = 0;
    c->null_count = 0;
    c->length = 0;
    if (fl_type_var(t->root) || (c->child_count && (t->root == FL_TYPE_ARRAY || t->root == FL_TYPE_MAP))) {
        uint8_t zero[4] = {0};
        fl_buf_append(&c->values, zero, 4); /* offsets[0] */
    }
    for (size_t k = 0; k < c->child_count; k++) {
        const fl_datatype_t *ct = t->root == FL_TYPE_ARRAY ? t->element
                                : t->root == FL_TYPE_ROW   ? t->fields[k].type
                                                           : t; /* MAP: the entries */
        if (t->root == FL_TYPE_MAP) {
            fl_record_column_t *e = &c->children[0];
            e->validity.len = e->values.len = e->data.len = 0;
            e->null_count = e->length = 0;
            fl_col_clear(&e->children[0], t->key);
            fl_col_clear(&e->children[1], t->value);
        } else {
            fl_col_clear(&c->children[k], ct);
        }
    }
}

static void fl_col_free(fl_record_column_t *c) {
    fl_buf_free(&c->validity);
    fl_buf_free(&c->values);
    fl_buf_free(&c->data);
    for (size_t k = 0; k < c->child_count; k++) fl_col_free(&c->children[k]);
    fl_free(c->children);
    fl_free(c->field_types);
    fl_row_free(&c->scratch); /* zeroed for flat columns: frees nothing */
    memset(c, 0, sizeof(*c));
}

/* Gives a nested column its children (nested mode). */
static void fl_col_make_children(fl_record_column_t *c, const fl_datatype_t *t) {
    switch (t->root) {
    case FL_TYPE_ARRAY:
        c->child_count = 1;
        c->children = fl_calloc(1, sizeof(*c->children));
        fl_col_make_children(&c->children[0], t->element);
        fl_row_init(&c->scratch, 1);
        return;
    case FL_TYPE_MAP: {
        c->child_count = 1;
        c->children = fl_calloc(1, sizeof(*c->children));
        fl_record_column_t *e = &c->children[0]; /* entries: key, value */
        e->child_count = 2;
        e->children = fl_calloc(2, sizeof(*e->children));
        fl_col_make_children(&e->children[0], t->key);
        fl_col_make_children(&e->children[1], t->value);
        fl_row_init(&e->scratch, 1);
        fl_row_init(&c->scratch, 1);
        return;
    }
    case FL_TYPE_ROW:
        c->child_count = t->field_count;
        c->children = fl_calloc(t->field_count ? t->field_count : 1, sizeof(*c->children));
        c->field_types = fl_calloc(t->field_count ? t->field_count : 1, sizeof(*c->field_types));
        for (size_t k = 0; k < t->field_count; k++) {
            fl_col_make_children(&c->children[k], t->fields[k].type);
            c->field_types[k] = t->fields[k].type;
        }
        fl_row_init(&c->scratch, t->field_count);
        return;
    default: return;
    }
}

void fl_record_builder_set_changelog(fl_record_builder_t *b) { b->changelog = true; }

static void fl_bit_set(fl_buf_t *bits, int64_t i, bool v) {
    if (i % 8 == 0) fl_buf_put_u8(bits, 0);
    if (v) bits->data[i / 8] |= (uint8_t)(1u << (i % 8));
}

static void fl_put_fixed(fl_buf_t *b, uint64_t v, size_t w) {
    uint8_t *p = fl_buf_reserve(b, w);
    for (size_t k = 0; k < w; k++) p[k] = (uint8_t)(v >> (8 * k));
    b->len += w;
}

static int64_t fl_floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* The Arrow value of a TIME/TIMESTAMP cell in the column's unit. */
static int64_t fl_time_units(const fl_datatype_t *t, int64_t ms, int32_t nanos) {
    int p = t->precision;
    if (p == 0) return fl_floor_div(ms, 1000);
    if (p <= 3) return ms;
    if (p <= 6) return ms * 1000 + nanos / 1000;
    return ms * 1000000 + nanos;
}

static void fl_col_append(fl_record_builder_t *b, fl_record_column_t *c, const fl_datatype_t *t,
                          const fl_row_t *row, const fl_cell_t *cell);

/* The rows of a list/map child: appends the elements of array a to
 * child, using c's scratch row. */
static void fl_col_append_elements(fl_record_builder_t *b, fl_record_column_t *child,
                                   fl_row_t *scratch, const fl_nested_array_t *a) {
    fl_error_t err;
    for (int32_t i = 0; i < a->count; i++) {
        fl_row_clear(scratch);
        if (fl_nested_array_get(a, i, scratch, 0, &err)) scratch->cells[0].is_null = true;
        fl_col_append(b, child, a->elem, scratch, &scratch->cells[0]);
    }
}

/* A nested value (nested mode): its elements or fields into the
 * children, its offset into values. A NULL (or unreadable) value adds no
 * elements; a NULL struct still adds a (NULL) row to every child. */
static void fl_col_append_nested(fl_record_builder_t *b, fl_record_column_t *c,
                                 const fl_datatype_t *t, const fl_row_t *row, bool null,
                                 const fl_cell_t *cell) {
    const uint8_t *p = null ? NULL : fl_row_cell_bytes(row, cell);
    size_t len = null ? 0 : cell->len;
    if (t->root == FL_TYPE_ROW) {
        fl_error_t err;
        fl_row_clear(&c->scratch);
        const fl_datatype_t *const *types = c->field_types;
        size_t n = t->field_count;
        if (!null && fl_row_decode(b->nested_format, p, len, types, n, &c->scratch, &err))
            fl_row_clear(&c->scratch);
        for (size_t k = 0; k < n; k++)
            fl_col_append(b, &c->children[k], types[k], &c->scratch, &c->scratch.cells[k]);
        return;
    }
    fl_record_column_t *child = &c->children[0];
    if (!null && t->root == FL_TYPE_ARRAY) {
        fl_nested_array_t a;
        fl_error_t err;
        if (!fl_nested_array_view(p, len, t->element, &a, &err))
            fl_col_append_elements(b, child, &c->scratch, &a);
    } else if (!null) {
        fl_nested_map_t m;
        fl_error_t err;
        if (!fl_nested_map_view(p, len, t, &m, &err)) {
            fl_col_append_elements(b, &child->children[0], &c->scratch, &m.keys);
            fl_col_append_elements(b, &child->children[1], &child->scratch, &m.values);
            child->length += m.keys.count;
        }
    }
    fl_put_fixed(&c->values, (uint32_t)child->length, 4); /* the list's end offset */
}

/* Appends one value of type t (cell of row) to column c. */
static void fl_col_append(fl_record_builder_t *b, fl_record_column_t *c, const fl_datatype_t *t,
                          const fl_row_t *row, const fl_cell_t *cell) {
    bool null = cell->is_null;
    if (!null && b->nested && fl_type_nested(t->root)) {
        fl_error_t err;
        null = fl_nested_check(t, b->nested_format, fl_row_cell_bytes(row, cell), cell->len, 0,
                               &err) != 0;
    }
    fl_bit_set(&c->validity, c->length, !null);
    if (null) c->null_count++;
        switch (t->root) {
        case FL_TYPE_BOOLEAN: fl_bit_set(&c->values, c->length, !null && cell->i); break;
        case FL_TYPE_TINYINT:
        case FL_TYPE_SMALLINT:
        case FL_TYPE_INTEGER:
        case FL_TYPE_BIGINT:
        case FL_TYPE_DATE: fl_put_fixed(&c->values, null ? 0 : (uint64_t)cell->i, fl_arrow_value_width(t)); break;
        case FL_TYPE_FLOAT: {
            float f = null ? 0.0f : (float)cell->d;
            uint32_t u;
            memcpy(&u, &f, 4);
            fl_put_fixed(&c->values, u, 4);
            break;
        }
        case FL_TYPE_DOUBLE: {
            uint64_t u = 0;
            if (!null) memcpy(&u, &cell->d, 8);
            fl_put_fixed(&c->values, u, 8);
            break;
        }
        case FL_TYPE_DECIMAL: {
            unsigned __int128 u = null ? 0 : (unsigned __int128)cell->dec;
            fl_put_fixed(&c->values, (uint64_t)u, 8);
            fl_put_fixed(&c->values, (uint64_t)(u >> 64), 8);
            break;
        }
        case FL_TYPE_TIME:
        case FL_TYPE_TIMESTAMP:
        case FL_TYPE_TIMESTAMP_LTZ:
            fl_put_fixed(&c->values, null ? 0 : (uint64_t)fl_time_units(t, cell->i, cell->nanos),
                         fl_arrow_value_width(t));
            break;
        case FL_TYPE_BINARY: {
            size_t w = fl_arrow_value_width(t);
            uint8_t *p = fl_buf_reserve(&c->values, w);
            if (null) memset(p, 0, w);
            else memcpy(p, fl_row_cell_bytes(row, cell), w);
            c->values.len += w;
            break;
        }
        case FL_TYPE_CHAR:
        case FL_TYPE_STRING:
        case FL_TYPE_BYTES: {
            if (!null) fl_buf_append(&c->data, fl_row_cell_bytes(row, cell), cell->len);
            fl_put_fixed(&c->values, (uint32_t)c->data.len, 4);
            break;
        }
        default: /* nested: all NULL, emitted at finish, unless in nested mode */
            if (b->nested) fl_col_append_nested(b, c, t, row, null, cell);
            break;
        }
    c->length++;
}

void fl_record_builder_init(fl_record_builder_t *b, const fl_schema_t *schema,
                            const fl_record_builder_options_t *opts) {
    memset(b, 0, sizeof(*b));
    b->schema = schema;
    b->opts = *opts;
    size_t n = schema->column_count;
    b->cols = fl_calloc(n ? n : 1, sizeof(fl_record_column_t));
    fl_record_builder_clear(b);
}

void fl_record_builder_set_nested(fl_record_builder_t *b, fl_row_format_t fmt) {
    assert(b->rows == 0);
    if (b->nested) return;
    b->nested = true;
    b->nested_format = fmt;
    for (size_t i = 0; i < b->schema->column_count; i++)
        fl_col_make_children(&b->cols[i], fl_record_type(b, i));
    fl_record_builder_clear(b);
}

void fl_record_builder_free(fl_record_builder_t *b) {
    for (size_t i = 0; i < b->schema->column_count; i++) fl_col_free(&b->cols[i]);
    fl_free(b->cols);
    b->cols = NULL;
    fl_buf_free(&b->change_types);
}

void fl_record_builder_clear(fl_record_builder_t *b) {
    for (size_t i = 0; i < b->schema->column_count; i++)
        fl_col_clear(&b->cols[i], fl_record_type(b, i));
    b->rows = 0;
    b->bytes = 0;
    b->change_types.len = 0;
    b->changelog = false;
}

/* Bytes of a column and its children (the batch-size estimate). */
static size_t fl_col_bytes(const fl_record_column_t *c) {
    size_t n = c->values.len + c->data.len;
    for (size_t k = 0; k < c->child_count; k++) n += fl_col_bytes(&c->children[k]);
    return n;
}

void fl_record_builder_append(fl_record_builder_t *b, const fl_row_t *row) {
    size_t before = 0, after = 0;
    for (size_t i = 0; i < b->schema->column_count; i++) {
        fl_record_column_t *c = &b->cols[i];
        before += fl_col_bytes(c);
        fl_col_append(b, c, fl_record_type(b, i), row, &row->cells[i]);
        after += fl_col_bytes(c);
    }
    fl_buf_put_u8(&b->change_types, FL_CHANGE_APPEND_ONLY);
    b->rows++;
    b->bytes += after - before + (b->rows % 8 == 1 ? b->schema->column_count : 0);
}

void fl_record_builder_append_change(fl_record_builder_t *b, const fl_row_t *row,
                                     fl_change_type_t ct) {
    assert(ct >= FL_CHANGE_APPEND_ONLY && ct <= FL_CHANGE_TYPE_MAX);
    fl_record_builder_append(b, row);
    b->change_types.data[b->change_types.len - 1] = (uint8_t)ct;
    b->changelog = true;
}

int64_t fl_record_builder_rows(const fl_record_builder_t *b) { return b->rows; }

size_t fl_record_builder_size(const fl_record_builder_t *b) { return b->bytes; }

/* Emits an all-NULL column of type t and `length` rows (nested columns,
 * which the writer cannot fill yet). Children of lists and maps are empty. */
static int fl_emit_nulls(const fl_datatype_t *t, int64_t length, bool top, fl_arrow_writer_t *w,
                         fl_buf_t *zeros, fl_error_t *err) {
    size_t need = (size_t)length * 16 + 8;
    if (zeros->len < need) {
        memset(fl_buf_reserve(zeros, need - zeros->len), 0, need - zeros->len);
        zeros->len = need;
    }
    fl_arrow_writer_add_node(w, length, top ? length : 0);
    int rc = fl_arrow_writer_add_buffer(w, zeros->data, top ? (size_t)(length + 7) / 8 : 0, err);
    if (rc) return rc;
    switch (t->root) {
    case FL_TYPE_ARRAY:
        if ((rc = fl_arrow_writer_add_buffer(w, zeros->data, (size_t)(length + 1) * 4, err))) return rc;
        return fl_emit_nulls(t->element, 0, false, w, zeros, err);
    case FL_TYPE_MAP:
        if ((rc = fl_arrow_writer_add_buffer(w, zeros->data, (size_t)(length + 1) * 4, err))) return rc;
        fl_arrow_writer_add_node(w, 0, 0); /* entries */
        if ((rc = fl_arrow_writer_add_buffer(w, zeros->data, 0, err))) return rc;
        if ((rc = fl_emit_nulls(t->key, 0, false, w, zeros, err))) return rc;
        return fl_emit_nulls(t->value, 0, false, w, zeros, err);
    case FL_TYPE_ROW:
        for (size_t i = 0; i < t->field_count; i++)
            if ((rc = fl_emit_nulls(t->fields[i].type, length, false, w, zeros, err))) return rc;
        return 0;
    case FL_TYPE_BOOLEAN: return fl_arrow_writer_add_buffer(w, zeros->data, (size_t)(length + 7) / 8, err);
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
    case FL_TYPE_BYTES:
        if ((rc = fl_arrow_writer_add_buffer(w, zeros->data, (size_t)(length + 1) * 4, err))) return rc;
        return fl_arrow_writer_add_buffer(w, zeros->data, 0, err);
    default: {
        size_t width = fl_arrow_value_width(t);
        if ((size_t)length * width > zeros->len) {
            size_t more = (size_t)length * width - zeros->len;
            memset(fl_buf_reserve(zeros, more), 0, more);
            zeros->len += more;
        }
        return fl_arrow_writer_add_buffer(w, zeros->data, (size_t)length * width, err);
    }
    }
}

/* Writes a column of type t (nested mode for nested types) into w: its
 * node and buffers, then its children's, depth first (Arrow IPC order). */
static int fl_col_emit(const fl_record_column_t *c, const fl_datatype_t *t, fl_arrow_writer_t *w,
                       fl_error_t *err) {
    fl_arrow_writer_add_node(w, c->length, c->null_count);
    int rc = fl_arrow_writer_add_buffer(w, c->validity.data, c->validity.len, err);
    if (rc) return rc;
    switch (t->root) {
    case FL_TYPE_ARRAY:
        if ((rc = fl_arrow_writer_add_buffer(w, c->values.data, c->values.len, err))) return rc;
        return fl_col_emit(&c->children[0], t->element, w, err);
    case FL_TYPE_MAP: {
        if ((rc = fl_arrow_writer_add_buffer(w, c->values.data, c->values.len, err))) return rc;
        const fl_record_column_t *e = &c->children[0];
        fl_arrow_writer_add_node(w, e->children[0].length, 0); /* entries, never NULL */
        if ((rc = fl_arrow_writer_add_buffer(w, NULL, 0, err))) return rc;
        if ((rc = fl_col_emit(&e->children[0], t->key, w, err))) return rc;
        return fl_col_emit(&e->children[1], t->value, w, err);
    }
    case FL_TYPE_ROW:
        for (size_t k = 0; k < t->field_count && !rc; k++)
            rc = fl_col_emit(&c->children[k], t->fields[k].type, w, err);
        return rc;
    default:
        rc = fl_arrow_writer_add_buffer(w, c->values.data, c->values.len, err);
        if (!rc && fl_type_var(t->root)) rc = fl_arrow_writer_add_buffer(w, c->data.data, c->data.len, err);
        return rc;
    }
}

/* Writes the columns' buffers into w. */
static int fl_record_builder_columns(fl_record_builder_t *b, fl_arrow_writer_t *w,
                                     fl_error_t *err) {
    fl_buf_t zeros;
    fl_buf_init(&zeros);
    int rc = 0;
    for (size_t i = 0; i < b->schema->column_count && !rc; i++) {
        const fl_record_column_t *c = &b->cols[i];
        const fl_datatype_t *ty = fl_record_type(b, i);
        if (fl_type_nested(ty->root) && !b->nested) {
            rc = fl_emit_nulls(ty, b->rows, true, w, &zeros, err);
            continue;
        }
        rc = fl_col_emit(c, ty, w, err);
    }
    fl_buf_free(&zeros);
    return rc;
}

static void fl_record_write_header(fl_buf_t *out, size_t start, int16_t schema_id,
                                   bool changelog, int32_t rows, int64_t writer_id,
                                   int32_t sequence) {
    fl_batch_header_t h = {
        .magic = 0,
        .base_offset = 0,
        .commit_timestamp = 0,
        .leader_epoch = -1,
        .schema_id = schema_id,
        .attributes = changelog ? 0 : FL_BATCH_ATTR_APPEND_ONLY,
        .last_offset_delta = rows > 0 ? rows - 1 : 0,
        .writer_id = writer_id,
        .batch_sequence = sequence,
        .record_count = rows,
        .stats_size = 0,
    };
    fl_batch_write_header(out->data + start, out->len - start, &h);
}

int fl_record_builder_finish(fl_record_builder_t *b, int64_t writer_id, int32_t sequence,
                             fl_buf_t *out, fl_error_t *err) {
    assert(b->rows <= INT32_MAX && (size_t)b->rows == b->change_types.len);
    size_t start = out->len;
    memset(fl_buf_reserve(out, FL_BATCH_HEADER_V0), 0, FL_BATCH_HEADER_V0);
    out->len += FL_BATCH_HEADER_V0;
    if (b->rows > 0) {
        if (b->changelog) fl_buf_append(out, b->change_types.data, b->change_types.len);
        fl_arrow_write_options_t o = {b->opts.codec, b->opts.zstd_level, 8};
        fl_arrow_writer_t w;
        fl_arrow_writer_init(&w, &o);
        int rc = fl_record_builder_columns(b, &w, err);
        if (!rc) rc = fl_arrow_writer_finish(&w, b->rows, out, err);
        fl_arrow_writer_reset(&w);
        if (rc) {
            out->len = start;
            return rc;
        }
    }
    fl_record_write_header(out, start, (int16_t)b->opts.schema_id, b->changelog,
                           (int32_t)b->rows, writer_id, sequence);
    return 0;
}

void fl_record_builder_write_empty_changelog(fl_buf_t *out, int16_t schema_id, int64_t writer_id,
                                             int32_t sequence) {
    size_t start = out->len;
    memset(fl_buf_reserve(out, FL_BATCH_HEADER_V0), 0, FL_BATCH_HEADER_V0);
    out->len += FL_BATCH_HEADER_V0;
    fl_record_write_header(out, start, schema_id, true, 0, writer_id, sequence);
}
