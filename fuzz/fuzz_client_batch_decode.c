/*
 * fuzz_client_batch_decode.c — what libfluss does with a fetched log batch
 * (bytes from a server, untrusted): fl_record_batch_decode with and
 * without a projection, then every cell rendered as text and JSON, and the
 * Arrow C Data export released. The table schema is fixed: the same six
 * columns as the record_batch target, so its seeds fit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/client/client_table.h"

static fluss_table_t *g_table;

static void init_table(void) {
    if (g_table) return;
    fluss_table_spec_t spec = {0};
    spec.schema = "a INT, s STRING, d DOUBLE, arr ARRAY<BIGINT>, m MAP<STRING, INT>, "
                  "r ROW<a INT, b BYTES>";
    fluss_error_t e;
    char *json = fluss_table_spec_to_json(&spec, &e);
    if (!json) abort();
    fl_table_desc_t d;
    fl_error_t err;
    if (fl_table_desc_from_bytes(json, strlen(json), &d, &err)) abort();
    free(json);
    g_table = fl_table_new_local("db", "t", 1, 1, &d, &err);
    if (!g_table) abort();
}

static void render(fluss_record_batch_t *b) {
    fl_buf_t text;
    fl_buf_init(&text);
    for (size_t c = 0; c < b->column_count; c++)
        for (size_t r = 0; r < b->rows; r++) {
            fl_buf_reset(&text);
            fl_rcol_text(&b->cols[c], (int64_t)(b->skip + r), 0, &text);
            fl_buf_reset(&text);
            fl_rcol_text(&b->cols[c], (int64_t)(b->skip + r), FLUSS_TEXT_JSON, &text);
        }
    fl_buf_free(&text);
    struct ArrowSchema schema;
    struct ArrowArray array;
    fluss_error_t e;
    if (fluss_record_batch_to_arrow(b, &schema, &array, &e) == 0) {
        if (array.release) array.release(&array);
        if (schema.release) schema.release(&schema);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    init_table();
    if (size < 1) return 0;
    uint8_t choice = data[0];
    data++;
    size--;
    static const int32_t all[6] = {0, 1, 2, 3, 4, 5};
    int32_t msg[6], present[6];
    size_t n = 0;
    for (int i = 0; i < 6; i++)
        if (choice & (1u << i)) msg[n++] = i;
    for (size_t i = 0; i < n; i++) present[i] = msg[n - 1 - i]; /* reordered */
    for (int pass = 0; pass < 2; pass++) {
        fluss_record_batch_t *b = NULL;
        fl_error_t err;
        int rc = pass == 0 || n == 0
                     ? fl_record_batch_decode(g_table, data, size, 0, all, 6, all, 6,
                                              choice & 0x40 ? 3 : 0, false, &b, &err)
                     : fl_record_batch_decode(g_table, data, size, 0, msg, n, present, n, 0,
                                              (choice & 0x80) != 0, &b, &err);
        if (rc == 0 && b) {
            render(b);
            fluss_record_batch_free(b);
        }
    }
    return 0;
}
