/*
 * fuzz_arrow_decode.c — a fetched log batch (bytes from a server,
 * untrusted) through the Arrow column decoder: arrow_decode.h directly
 * (header, change-type vector, message, every column decoded and every
 * value read through the accessors), then what libfluss does with it:
 * fl_record_batch_decode with and without a projection, every cell
 * rendered as text and JSON, and the Arrow C Data export released. The
 * table schema is fixed: the same six columns as the record_batch target,
 * so its seeds fit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/client/client_table.h"
#include "arrow_decode.h"
#include "fuzz_common.h"
#include "record_batch.h"

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

/* Reads slot i of a (and what it points to) through the accessors. */
static uint64_t touch(const fl_arrow_array_t *a, int64_t i) {
    FUZZ_CHECK(i >= 0 && i < a->length);
    if (fl_arrow_array_is_null(a, i)) return 1;
    uint64_t h = 0;
    size_t n;
    int64_t s, e;
    switch (a->kind) {
    case FL_TYPE_INTEGER:
    case FL_TYPE_BIGINT: return (uint64_t)fl_arrow_array_int(a, i);
    case FL_TYPE_DOUBLE: return (uint64_t)(fl_arrow_array_double(a, i) != 0.0);
    case FL_TYPE_STRING:
    case FL_TYPE_BYTES: {
        const uint8_t *p = fl_arrow_array_bytes(a, i, &n);
        for (size_t k = 0; k < n; k++) h += p[k];
        return h;
    }
    case FL_TYPE_ARRAY:
    case FL_TYPE_MAP:
        fl_arrow_array_child_range(a, i, &s, &e);
        FUZZ_CHECK(s >= 0 && s <= e && e <= a->children[0].length);
        for (int64_t k = s; k < e; k++) h += touch(&a->children[0], k);
        return h;
    case FL_ARROW_ARRAY_ENTRIES:
    case FL_TYPE_ROW:
        for (size_t k = 0; k < a->child_count; k++) h += touch(&a->children[k], i);
        return h;
    default: FUZZ_CHECK(!"unexpected kind"); return 0;
    }
}

static void decode_columns(const uint8_t *data, size_t size) {
    fl_batch_view_t bv;
    fl_error_t err;
    if (fl_batch_parse(data, size, &bv, &err)) return;
    size_t pos = bv.records_start;
    if (!(bv.attributes & FL_BATCH_ATTR_APPEND_ONLY)) {
        if (bv.record_count < 0 || size - pos < (size_t)bv.record_count) return;
        pos += (size_t)bv.record_count;
    }
    fl_arrow_batch_view_t av;
    if (fl_arrow_message_parse(data + pos, size - pos, &av, &err)) return;
    fl_arrow_decoder_t d;
    fl_arrow_decoder_init(&d, &av, (size_t)16 << 20);
    volatile uint64_t sink = 0;
    for (size_t c = 0; c < 6; c++) {
        fl_arrow_array_t a;
        if (fl_arrow_decoder_next(&d, fl_table_type(g_table, c), &a, &err)) {
            FUZZ_CHECK(a.children == NULL && a.values.data == NULL);
            return;
        }
        FUZZ_CHECK(a.length >= av.length);
        for (int64_t r = 0; r < av.length; r++) sink += touch(&a, r);
        fl_arrow_array_free(&a);
    }
    (void)sink;
}

static void render(fluss_record_batch_t *b) {
    fl_buf_t text;
    fl_buf_init(&text);
    for (size_t c = 0; c < b->column_count; c++)
        for (size_t r = 0; r < b->rows; r++) {
            fl_buf_reset(&text);
            fl_client_value_text(&b->cols[c], (int64_t)(b->skip + r), 0, &text);
            fl_buf_reset(&text);
            fl_client_value_text(&b->cols[c], (int64_t)(b->skip + r), FLUSS_TEXT_JSON, &text);
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
    decode_columns(data, size);
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
