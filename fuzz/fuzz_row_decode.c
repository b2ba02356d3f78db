/*
 * fuzz_row_decode.c — a KV value row (bytes from a client or from disk,
 * untrusted) through both row decoders, CompactedRow and IndexedRow
 * (types_row_format.h). The first byte picks a schema from a fixed table
 * that covers every type (and both bitmap widths); the rest is decoded
 * in both formats. A failed decode must leave the row all NULL; a
 * successful one must re-encode to exactly the input bytes, since both
 * decoders accept only the one encoding Fluss's writers produce (the
 * headers say how; FLOAT NaN bit patterns included) — except where the
 * row has a NULL in a NOT NULL column, which the encoders refuse.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "types_row_format.h"

#define FUZZ_SCHEMA_COLS_MAX 24

static const char *const kSchemas[][FUZZ_SCHEMA_COLS_MAX] = {
    {"INT", "STRING", "BIGINT"},
    {"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL(10, 2)",
     "DECIMAL(38, 10)", "DATE", "TIME(3)", "TIMESTAMP(3)", "TIMESTAMP(9)", "TIMESTAMP_LTZ(3)",
     "TIMESTAMP_LTZ(6)", "CHAR(5)", "STRING", "BINARY(4)", "BYTES", "ARRAY<INT>",
     "MAP<STRING, INT>", "ROW<a INT>", "DECIMAL(19, 0)", "TIME(9)"},
    {"BOOLEAN NOT NULL", "TINYINT", "SMALLINT", "FLOAT", "DOUBLE"},
    {"DECIMAL(10, 2)", "DECIMAL(38, 10)", "DECIMAL(19, 0)", "DECIMAL(18, 18) NOT NULL"},
    {"TIMESTAMP(3)", "TIMESTAMP(9)", "TIMESTAMP_LTZ(0)", "TIMESTAMP_LTZ(6)", "DATE", "TIME(3)"},
    {"CHAR(3)", "BINARY(2)", "BYTES", "STRING NOT NULL"},
    {"ARRAY<INT>", "MAP<STRING, INT>", "ROW<a INT, b STRING>", "INT"},
    {"INT", "INT", "INT", "INT", "INT", "INT", "INT", "INT", "INT"},
    {"STRING", "STRING", "BYTES", "DECIMAL(20, 0)", "ROW<x BIGINT>", "ARRAY<STRING>"},
};
#define FUZZ_SCHEMAS (sizeof(kSchemas) / sizeof(kSchemas[0]))

typedef struct fuzz_schema {
    size_t n;
    fl_datatype_t *types[FUZZ_SCHEMA_COLS_MAX];
} fuzz_schema_t;

static fuzz_schema_t g_schemas[FUZZ_SCHEMAS];
static int g_ready;

static void init_schemas(void) {
    if (g_ready) return;
    for (size_t s = 0; s < FUZZ_SCHEMAS; s++)
        for (size_t i = 0; i < FUZZ_SCHEMA_COLS_MAX && kSchemas[s][i]; i++) {
            const char *p = kSchemas[s][i];
            fl_error_t err;
            if (fl_datatype_parse(&p, &g_schemas[s].types[i], &err)) abort();
            g_schemas[s].n++;
        }
    g_ready = 1;
}

static void check_format(fl_row_format_t f, const fuzz_schema_t *s, const uint8_t *data,
                         size_t size, fl_row_t *row, fl_buf_t *out) {
    const fl_datatype_t *const *types = (const fl_datatype_t *const *)s->types;
    fl_error_t err;
    int rc = fl_row_decode(f, data, size, types, s->n, row, &err);
    FUZZ_CHECK(row->column_count == s->n);
    if (rc) {
        FUZZ_CHECK(rc == FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
        for (size_t i = 0; i < s->n; i++) FUZZ_CHECK(row->cells[i].is_null);
        return;
    }
    bool null_in_not_null = false;
    for (size_t i = 0; i < s->n; i++) {
        const fl_cell_t *c = &row->cells[i];
        if (c->is_null && !s->types[i]->nullable) null_in_not_null = true;
        if (!c->is_null) FUZZ_CHECK(c->off + c->len <= row->arena.len);
    }
    out->len = 0;
    rc = fl_row_encode(f, row, types, s->n, out, &err);
    if (null_in_not_null) {
        FUZZ_CHECK(rc == FLUSS_ERR__INVALID_ARG && out->len == 0);
        return;
    }
    FUZZ_CHECK(rc == 0);
    FUZZ_CHECK(out->len == size);
    FUZZ_CHECK(size == 0 || memcmp(out->data, data, size) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    init_schemas();
    if (size < 1) return 0;
    const fuzz_schema_t *s = &g_schemas[data[0] % FUZZ_SCHEMAS];
    fl_row_t row;
    fl_row_init(&row, 1);
    fl_buf_t out;
    fl_buf_init(&out);
    check_format(FL_ROW_COMPACTED, s, data + 1, size - 1, &row, &out);
    check_format(FL_ROW_INDEXED, s, data + 1, size - 1, &row, &out);
    fl_buf_free(&out);
    fl_row_free(&row);
    return 0;
}
