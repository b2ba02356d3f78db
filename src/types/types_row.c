/*
 * types_row.c — rows of typed cells (types_row.h). Thread rule: a row
 * has one user at a time.
 */
#include "types_row.h"

#include <assert.h>
#include <string.h>

#include "common_alloc.h"

void fl_row_init(fl_row_t *r, size_t column_count) {
    r->column_count = column_count;
    r->cells = fl_calloc(column_count ? column_count : 1, sizeof(fl_cell_t));
    fl_buf_init(&r->arena);
    fl_row_clear(r);
}

void fl_row_free(fl_row_t *r) {
    fl_free(r->cells);
    r->cells = NULL;
    r->column_count = 0;
    fl_buf_free(&r->arena);
}

void fl_row_clear(fl_row_t *r) {
    for (size_t i = 0; i < r->column_count; i++) r->cells[i].is_null = true;
    r->arena.len = 0;
}

void fl_row_reset(fl_row_t *r, size_t column_count) {
    if (column_count != r->column_count || !r->cells) {
        fl_free(r->cells);
        r->cells = fl_calloc(column_count ? column_count : 1, sizeof(fl_cell_t));
        r->column_count = column_count;
    }
    memset(r->cells, 0, (column_count ? column_count : 1) * sizeof(fl_cell_t));
    for (size_t i = 0; i < column_count; i++) r->cells[i].is_null = true;
    r->arena.len = 0;
}

void fl_row_set_bytes(fl_row_t *r, size_t col, const void *p, size_t n) {
    assert(col < r->column_count);
    fl_cell_t *c = &r->cells[col];
    c->off = r->arena.len;
    c->len = n;
    fl_buf_append(&r->arena, p, n);
    c->is_null = false;
}
