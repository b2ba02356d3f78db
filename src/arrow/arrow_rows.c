/*
 * arrow_rows.c — a row of decoded Arrow columns as Fluss cells
 * (arrow_rows.h has the unit table). Thread rule: none.
 */
#include "arrow_rows.h"

#include <assert.h>

/* Floor division and its non-negative remainder (b > 0): epoch values
 * before 1970 keep nanos in 0..b-1, as the builder's ms * b + rest. */
static int64_t fl_arrow_floor_div(int64_t a, int64_t b, int64_t *rem) {
    int64_t q = a / b, r = a % b;
    if (r < 0) {
        q--;
        r += b;
    }
    *rem = r;
    return q;
}

bool fl_arrow_time_cell(const fl_datatype_t *t, int64_t v, fl_cell_t *c) {
    int64_t rem = 0;
    int p = t->precision;
    if (p == 0) {
        if (__builtin_mul_overflow(v, (int64_t)1000, &c->i)) return false;
    } else if (p <= 3) {
        c->i = v;
    } else if (p <= 6) {
        c->i = fl_arrow_floor_div(v, 1000, &rem);
        rem *= 1000;
    } else {
        c->i = fl_arrow_floor_div(v, 1000000, &rem);
    }
    c->nanos = t->root == FL_TYPE_TIME ? 0 : (int32_t)rem;
    return true;
}

static int fl_arrow_cell_read(const fl_arrow_array_t *a, const fl_datatype_t *t, int64_t i,
                              fl_row_t *row, size_t col, fl_error_t *err) {
    fl_cell_t *c = &row->cells[col];
    const uint8_t *p;
    size_t len;
    switch (t->root) {
    case FL_TYPE_BOOLEAN: c->i = fl_arrow_array_bool(a, i); break;
    case FL_TYPE_TINYINT:
    case FL_TYPE_SMALLINT:
    case FL_TYPE_INTEGER:
    case FL_TYPE_BIGINT:
    case FL_TYPE_DATE: c->i = fl_arrow_array_int(a, i); break;
    case FL_TYPE_TIME:
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ:
        if (!fl_arrow_time_cell(t, fl_arrow_array_int(a, i), c))
            return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                              "arrow column %zu (%s) row %lld: seconds overflow as millis", col,
                              fl_type_root_json_name(t->root), (long long)i);
        break;
    case FL_TYPE_FLOAT:
    case FL_TYPE_DOUBLE: c->d = fl_arrow_array_double(a, i); break;
    case FL_TYPE_DECIMAL: c->dec = fl_arrow_array_decimal(a, i); break;
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
    case FL_TYPE_BYTES:
    case FL_TYPE_BINARY:
        p = fl_arrow_array_bytes(a, i, &len);
        fl_row_set_bytes(row, col, p, len);
        break;
    default: return 0; /* ARRAY MAP ROW: left NULL (header) */
    }
    c->is_null = false;
    return 0;
}

int fl_arrow_row_read(const fl_arrow_array_t *cols, size_t n, const fl_datatype_t *const *types,
                      int64_t i, fl_row_t *row, fl_error_t *err) {
    fl_row_reset(row, n);
    for (size_t k = 0; k < n; k++) {
        const fl_arrow_array_t *a = &cols[k];
        assert(a->kind == (int)types[k]->root && i >= 0 && i < a->length);
        if (fl_arrow_array_is_null(a, i)) continue;
        int rc = fl_arrow_cell_read(a, types[k], i, row, k, err);
        if (rc) {
            fl_row_reset(row, n);
            return rc;
        }
    }
    return 0;
}
