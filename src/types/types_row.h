/*
 * types_row.h — a row of typed values in memory (what Fluss's InternalRow
 * is to its row encoders): one cell per column of a schema, the bytes of
 * CHAR/STRING/BINARY/BYTES values in the row's own arena. The cells are
 * typed by the schema the caller holds: this header checks nothing
 * against types (libfluss's fluss_row_set_* do that). Rows feed the row
 * and key encodings (types_row_compacted.h) and the log batch builder
 * (record_builder.h); the row decoders (types_row_format.h) and the Arrow
 * row reader (arrow_rows.h) fill them. ARRAY/MAP/ROW cells, where a
 * decoder fills them, hold the nested value's encoded bytes in off/len.
 * Thread rule: a row has one user at a time.
 */
#ifndef FL_TYPES_ROW_H
#define FL_TYPES_ROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"

/* One value; which field holds it depends on the column's type root. */
typedef struct fl_cell {
    bool is_null;
    int32_t nanos;    /* TIMESTAMP(_LTZ): nanos of the millisecond, 0..999999 */
    int64_t i;        /* BOOLEAN, integers, DATE (days), TIME (ms of day), TIMESTAMP (epoch ms) */
    double d;         /* FLOAT, DOUBLE */
    __int128 dec;     /* DECIMAL unscaled (GCC/clang extension; both we build with) */
    size_t off, len;  /* CHAR/STRING/BINARY/BYTES (and nested, encoded): bytes in the arena */
} fl_cell_t;

typedef struct fl_row {
    size_t column_count;
    fl_cell_t *cells;
    fl_buf_t arena;
} fl_row_t;

/* A row of column_count cells, all NULL. */
void fl_row_init(fl_row_t *r, size_t column_count);
void fl_row_free(fl_row_t *r);
/* Every cell NULL again; the arena keeps its memory. */
void fl_row_clear(fl_row_t *r);
/* r (initialised, any column count) becomes a row of column_count cells,
 * each NULL with every field zero, and an empty arena; memory is kept
 * where the count allows. What the row decoders start from. */
void fl_row_reset(fl_row_t *r, size_t column_count);
/* Copies p[0, n) into the arena as the value of cell col (col <
 * column_count), which becomes non-NULL. */
void fl_row_set_bytes(fl_row_t *r, size_t col, const void *p, size_t n);

/* The bytes of a CHAR/STRING/BINARY/BYTES cell of r, valid until the
 * arena grows or the row is cleared. Never NULL: an arena that only ever
 * got empty values has no memory, and NULL + 0 is undefined (clang's
 * UBSan, fuzz_server_dispatch: a PUT_KV row of empty strings). */
static inline const uint8_t *fl_row_cell_bytes(const fl_row_t *r, const fl_cell_t *c) {
    return r->arena.data ? r->arena.data + c->off : (const uint8_t *)"";
}

#endif
