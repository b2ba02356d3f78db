/*
 * fuzz_lake_rows.c — a lake data file image (untrusted: any writer may
 * have put it in the warehouse) through libfluss's lake scanner, the
 * union read's path: Parquet columns matched by field id and turned
 * into the Arrow columns of a table of every type a lake table takes,
 * assembled into record batches as the log scanner's are.
 * Invariants checked: every batch has the table's columns, rows, an
 * offset and a timestamp per row, and every value prints.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_client_table.h"

#define FUZZ_LAKE_SCHEMA                                                                      \
    "id INT NOT NULL, b BOOLEAN, ti TINYINT, si SMALLINT, bi BIGINT, f FLOAT, d DOUBLE, "      \
    "dec DECIMAL(10,2), dec2 DECIMAL(18,4), dt DATE, tm TIME(3), ts TIMESTAMP(3), "            \
    "ts6 TIMESTAMP(6), ltz TIMESTAMP_LTZ(3), ltz6 TIMESTAMP_LTZ(6), s STRING, c CHAR(3), "     \
    "by BYTES, bin BINARY(4)"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static fluss_table_t *t;
    if (!t) t = fuzz_local_table(FUZZ_LAKE_SCHEMA, NULL, "COMPACTED");
    fluss_lake_scanner_t *s;
    fl_error_t err;
    FUZZ_CHECK(fl_lake_scanner_of_image(t, data, size, &s, &err) == 0);
    char text[256];
    uint64_t h = 0;
    for (int i = 0; i < 64; i++) {
        fluss_record_batch_t *b = NULL;
        fluss_error_t e;
        if (fluss_lake_scanner_next(s, &b, &e) || !b) break;
        FUZZ_CHECK(fluss_record_batch_column_count(b) == 19);
        size_t rows = fluss_record_batch_row_count(b);
        FUZZ_CHECK(rows > 0);
        for (size_t r = 0; r < rows; r++) {
            h += (uint64_t)fluss_record_batch_offset(b, r) + (uint64_t)fluss_record_batch_timestamp(b, r);
            for (size_t c = 0; c < 19; c++)
                h += fluss_record_batch_value_text(b, r, c, 0, text, sizeof(text));
        }
        fluss_record_batch_free(b);
    }
    fluss_lake_scanner_destroy(s);
    return (int)(h & 0);
}
