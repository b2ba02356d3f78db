/*
 * fuzz_key_iceberg.c — a LOOKUP key of an Iceberg-format primary-key
 * table (bytes from a client, untrusted) through the Iceberg key decoder
 * (types_key.h), which the server runs on keys it inserts
 * (insert_if_not_exists). The first byte picks the key column's type;
 * the rest is the key. A decoded key must encode back to exactly the
 * input bytes: the decoder takes only what Fluss's IcebergKeyEncoder
 * writes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "types_key.h"

static const char *const kTypes[] = {
    "INT", "DATE", "TIME(3)", "BIGINT", "FLOAT", "DOUBLE", "TIMESTAMP(6)", "TIMESTAMP(9)",
    "DECIMAL(10, 2)", "DECIMAL(38, 10)", "CHAR(4)", "STRING", "BINARY(3)", "BYTES", "BOOLEAN",
};
#define FUZZ_TYPES (sizeof(kTypes) / sizeof(kTypes[0]))

static fl_datatype_t *g_types[FUZZ_TYPES];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_types[0])
        for (size_t i = 0; i < FUZZ_TYPES; i++) {
            const char *p = kTypes[i];
            fl_error_t err;
            if (fl_datatype_parse(&p, &g_types[i], &err)) abort();
        }
    if (size < 1) return 0;
    fl_datatype_t *type = g_types[data[0] % FUZZ_TYPES];
    const uint8_t *key = data + 1;
    size_t len = size - 1;
    fl_row_t row;
    fl_row_init(&row, 1);
    fl_error_t err;
    if (fl_key_iceberg_decode(key, len, type, &row, 0, &err) == 0) {
        FUZZ_CHECK(!row.cells[0].is_null);
        fl_column_t col = {.name = "k", .type = type};
        fl_schema_t schema = {.column_count = 1, .columns = &col};
        int32_t c = 0;
        fl_buf_t out;
        fl_buf_init(&out);
        FUZZ_CHECK(fl_key_encode(FL_KEY_ICEBERG, &row, &schema, &c, 1, &out, &err) == 0);
        FUZZ_CHECK(out.len == len && (len == 0 || memcmp(out.data, key, len) == 0));
        fl_buf_free(&out);
    }
    fl_row_free(&row);
    return 0;
}
