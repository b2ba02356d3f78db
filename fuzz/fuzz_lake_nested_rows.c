/*
 * fuzz_lake_nested_rows.c — a lake data file image with nested columns
 * (untrusted: any writer may have put it in the warehouse) through
 * libfluss's lake scanner: the Parquet leaves of Iceberg list, map and
 * struct columns read with their levels and assembled into the Arrow
 * columns of ARRAY, MAP and ROW (tier_assemble.h), then into record
 * batches. Top-level field ids are positional (1..6, the system columns
 * 7..9), as Iceberg numbers a table's columns before their insides, so
 * the files test_lake_nested.py's log table tiers are seeds.
 * Invariants checked: every batch has the table's columns, rows, an
 * offset and a timestamp per row, and every value prints.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_client_table.h"

#define FUZZ_NESTED_SCHEMA                                                                    \
    "id INT NOT NULL, tags ARRAY<STRING>, r ROW<x INT, s STRING, d DATE>, "                   \
    "m MAP<STRING, BIGINT>, nums ARRAY<ARRAY<BIGINT>>, dec ARRAY<DECIMAL(20, 3)>"
#define FUZZ_NESTED_COLUMNS 6

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static fluss_table_t *t;
    if (!t) t = fuzz_local_table(FUZZ_NESTED_SCHEMA, NULL, "COMPACTED");
    fluss_lake_scanner_t *s;
    fl_error_t err;
    FUZZ_CHECK(fl_lake_scanner_of_image(t, data, size, &s, &err) == 0);
    char text[512];
    uint64_t h = 0;
    for (int i = 0; i < 64; i++) {
        fluss_record_batch_t *b = NULL;
        fluss_error_t e;
        if (fluss_lake_scanner_next(s, &b, &e) || !b) break;
        FUZZ_CHECK(fluss_record_batch_column_count(b) == FUZZ_NESTED_COLUMNS);
        size_t rows = fluss_record_batch_row_count(b);
        FUZZ_CHECK(rows > 0);
        for (size_t r = 0; r < rows; r++) {
            h += (uint64_t)fluss_record_batch_offset(b, r) + (uint64_t)fluss_record_batch_timestamp(b, r);
            for (size_t c = 0; c < FUZZ_NESTED_COLUMNS; c++)
                h += fluss_record_batch_value_text(b, r, c, 0, text, sizeof(text));
        }
        fluss_record_batch_free(b);
    }
    fluss_lake_scanner_destroy(s);
    return (int)(h & 0);
}
