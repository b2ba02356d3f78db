/*
 * fuzz_client_value_rows.c — libfluss reading a LIMIT_SCAN answer
 * (client_lookup.c fl_lookup_value_batch_rows): the DefaultValueRecordBatch
 * parsed and every stored value (schema id ‖ row) decoded as a row of a
 * table of every scalar type, in the table's kv format (first input byte:
 * even COMPACTED, odd INDEXED; the rest is the batch). Invariants: a
 * failure is a Fluss corruption code or a wrong schema id
 * (FLUSS_ERR__INVALID_ARG), with no rows handed out; a success hands out
 * one row per record, each with the table's columns, and in COMPACTED a
 * row re-encodes to exactly the record's row bytes (the decoder accepts
 * one encoding per row).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_client_table.h"
#include "record_value.h"

#define FUZZ_SCHEMA                                                                      \
    "id INT NOT NULL, b BOOLEAN, s STRING, v BIGINT, d DOUBLE, f FLOAT, dc DECIMAL(20, 2), " \
    "dc2 DECIMAL(9, 3), ts TIMESTAMP(6), ltz TIMESTAMP_LTZ(3), dt DATE, tm TIME, by BYTES"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static fluss_table_t *tables[2];
    if (!tables[0]) {
        tables[0] = fuzz_local_table(FUZZ_SCHEMA, "id", "COMPACTED");
        tables[1] = fuzz_local_table(FUZZ_SCHEMA, "id", "INDEXED");
    }
    if (size < 1) return 0;
    const fluss_table_t *t = tables[data[0] & 1];
    const uint8_t *p = data + 1;
    size_t len = size - 1;
    fluss_row_t **rows = (fluss_row_t **)&rows; /* must be reset */
    size_t count = 99;
    fl_error_t err;
    fl_err_clear(&err);
    if (fl_lookup_value_batch_rows(t, NULL, p, len, &rows, &count, &err) != 0) {
        FUZZ_CHECK(err.code == FLUSS_ERR_CORRUPT_RECORD_EXCEPTION ||
                   err.code == FLUSS_ERR__INVALID_ARG);
        FUZZ_CHECK(rows == NULL && count == 0);
        return 0;
    }
    FUZZ_CHECK(rows != NULL);
    fl_value_batch_view_t v;
    if (len == 0) {
        FUZZ_CHECK(count == 0);
    } else {
        FUZZ_CHECK(fl_value_batch_parse(p, len, &v, &err) == 0);
        FUZZ_CHECK(count == (size_t)v.record_count);
        fl_value_batch_iter_t it;
        fl_value_batch_iter_init(&it, &v);
        fl_value_record_t rec;
        fl_buf_t enc;
        fl_buf_init(&enc);
        for (size_t i = 0; i < count; i++) {
            FUZZ_CHECK(fl_value_batch_next(&it, &rec, &err) == FL_VALUE_NEXT_RECORD);
            FUZZ_CHECK(rows[i]->row.column_count == t->desc.schema.column_count);
            char text[512];
            for (size_t c = 0; c < t->desc.schema.column_count; c++)
                fluss_row_value_text(rows[i], c, FLUSS_TEXT_JSON, text, sizeof(text));
            if (t->kv_format != FL_ROW_COMPACTED) continue;
            enc.len = 0;
            FUZZ_CHECK(fl_row_encode(FL_ROW_COMPACTED, &rows[i]->row, t->types,
                                     t->desc.schema.column_count, &enc, &err) == 0 ||
                       err.code == FLUSS_ERR__INVALID_ARG); /* a NULL bit on a NOT NULL column */
            if (err.code == 0)
                FUZZ_CHECK(enc.len == rec.row_len && memcmp(enc.data, rec.row, enc.len) == 0);
            fl_err_clear(&err);
        }
        fl_buf_free(&enc);
    }
    fluss_rows_free(rows, count);
    return 0;
}
