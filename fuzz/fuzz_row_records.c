/*
 * fuzz_row_records.c — the records of an INDEXED/COMPACTED changelog batch
 * (record_row_builder.h) are walked and decoded when a primary-key bucket
 * replays its log: arbitrary bytes as a batch body, walked record by
 * record and each row decoded in both formats under a schema with a
 * nested column. Every accepted record lies inside the body, and every
 * accepted row re-encodes to the bytes it came from, except one with a
 * NULL in the NOT NULL column, which the decoders take and the encoders
 * refuse (as fuzz_row_decode).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record_row_builder.h"
#include "types_datatype.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static fl_datatype_t *types[4];
    if (!types[0]) {
        static const char *text[] = {"INT NOT NULL", "STRING", "BIGINT", "ARRAY<STRING>"};
        for (int i = 0; i < 4; i++) {
            fl_error_t err;
            const char *t = text[i];
            if (fl_datatype_parse(&t, &types[i], &err)) abort();
        }
    }
    size_t pos = 0;
    fl_row_t row;
    fl_row_init(&row, 4);
    fl_buf_t again;
    fl_buf_init(&again);
    for (int n = 0; n < 64 && pos < size; n++) {
        fl_change_type_t ct;
        const uint8_t *rb;
        size_t rl;
        fl_error_t err;
        size_t before = pos;
        if (fl_row_record_next(data, size, &pos, n, &ct, &rb, &rl, &err)) break;
        FUZZ_CHECK(pos > before && pos <= size && rb >= data && rb + rl <= data + size);
        FUZZ_CHECK(ct <= FL_CHANGE_TYPE_MAX);
        for (int f = 0; f < 2; f++) {
            fl_row_format_t fmt = f ? FL_ROW_INDEXED : FL_ROW_COMPACTED;
            if (fl_row_decode(fmt, rb, rl, (const fl_datatype_t *const *)types, 4, &row, &err))
                continue;
            fl_buf_reset(&again);
            int rc = fl_row_encode(fmt, &row, (const fl_datatype_t *const *)types, 4, &again, &err);
            if (row.cells[0].is_null) { /* column 0 is NOT NULL: decoded, never encoded */
                FUZZ_CHECK(rc == FLUSS_ERR__INVALID_ARG);
                continue;
            }
            FUZZ_CHECK(rc == 0);
            FUZZ_CHECK(again.len == rl && memcmp(again.data, rb, rl) == 0);
        }
    }
    fl_buf_free(&again);
    fl_row_free(&row);
    return 0;
}
