/*
 * test_row_util.h — for row tests: a type list from SQL type texts, cell
 * setters, and an exact comparison of two rows' cells by type (the fields
 * a type uses; FLOAT/DOUBLE by bit pattern). Uses cmocka's asserts.
 */
#ifndef TEST_ROW_UTIL_H
#define TEST_ROW_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "types_datatype.h"
#include "types_row.h"

static inline void test_types_of(fl_datatype_t **out, const char *const *texts, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const char *p = texts[i];
        fl_error_t err;
        if (fl_datatype_parse(&p, &out[i], &err)) abort();
    }
}

static inline void test_types_free(fl_datatype_t **t, size_t n) {
    for (size_t i = 0; i < n; i++) fl_datatype_destroy(t[i]);
}

static inline void test_cell_i(fl_row_t *r, size_t col, int64_t v) {
    r->cells[col].is_null = false;
    r->cells[col].i = v;
}

static inline void test_cell_ts(fl_row_t *r, size_t col, int64_t ms, int32_t nanos) {
    test_cell_i(r, col, ms);
    r->cells[col].nanos = nanos;
}

static inline void test_cell_d(fl_row_t *r, size_t col, double v) {
    r->cells[col].is_null = false;
    r->cells[col].d = v;
}

static inline void test_cell_dec(fl_row_t *r, size_t col, __int128 v) {
    r->cells[col].is_null = false;
    r->cells[col].dec = v;
}

static inline void test_cell_s(fl_row_t *r, size_t col, const char *s) {
    fl_row_set_bytes(r, col, s, strlen(s));
}

static inline void test_rows_equal(const fl_row_t *a, const fl_row_t *b,
                                   fl_datatype_t *const *types, size_t n) {
    for (size_t k = 0; k < n; k++) {
        const fl_cell_t *x = &a->cells[k], *y = &b->cells[k];
        if (x->is_null != y->is_null) fail_msg("column %zu: NULL %d vs %d", k, x->is_null, y->is_null);
        if (x->is_null) continue;
        switch (types[k]->root) {
        case FL_TYPE_FLOAT:
        case FL_TYPE_DOUBLE:
            if (memcmp(&x->d, &y->d, sizeof(double)))
                fail_msg("column %zu: %g vs %g", k, x->d, y->d);
            break;
        case FL_TYPE_DECIMAL:
            if (x->dec != y->dec) fail_msg("column %zu: decimals differ", k);
            break;
        case FL_TYPE_TIMESTAMP:
        case FL_TYPE_TIMESTAMP_LTZ:
            if (x->nanos != y->nanos) fail_msg("column %zu: nanos %d vs %d", k, x->nanos, y->nanos);
            /* fall through */
        case FL_TYPE_BOOLEAN:
        case FL_TYPE_TINYINT:
        case FL_TYPE_SMALLINT:
        case FL_TYPE_INTEGER:
        case FL_TYPE_BIGINT:
        case FL_TYPE_DATE:
        case FL_TYPE_TIME:
            if (x->i != y->i) fail_msg("column %zu: %lld vs %lld", k, (long long)x->i, (long long)y->i);
            break;
        default:
            if (x->len != y->len) fail_msg("column %zu: %zu vs %zu bytes", k, x->len, y->len);
            if (x->len && memcmp(fl_row_cell_bytes(a, x), fl_row_cell_bytes(b, y), x->len))
                fail_msg("column %zu: bytes differ", k);
            break;
        }
    }
}

#endif
