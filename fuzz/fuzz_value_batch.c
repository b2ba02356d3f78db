/*
 * fuzz_value_batch.c — the DefaultValueRecordBatch a PK table's LIMIT_SCAN
 * answer carries (record_value.h), as libfluss reads it from a server:
 * parse and iterate every record. Invariants: views stay inside the input;
 * exactly RecordCount records tile the records area and the iterator never
 * fails after a successful parse; each record's value is its schema id
 * followed by its row; the writer fed the records' stored values rebuilds
 * the input byte for byte.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_buf.h"
#include "record_value.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_value_batch_view_t v;
    fl_error_t err;
    if (fl_value_batch_parse(data, size, &v, &err) != 0) {
        FUZZ_CHECK(err.code == FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
        return 0;
    }
    FUZZ_CHECK(v.size == size && v.records_len == size - FL_VALUE_BATCH_HEADER);
    fl_buf_t out;
    fl_buf_init(&out);
    fl_value_batch_writer_t w;
    fl_value_batch_begin(&w, &out);
    fl_value_batch_iter_t it;
    fl_value_record_t r;
    fl_value_batch_iter_init(&it, &v);
    int32_t n = 0;
    fl_value_next_t got;
    while ((got = fl_value_batch_next(&it, &r, &err)) == FL_VALUE_NEXT_RECORD) {
        FUZZ_CHECK(r.value >= v.records && r.value_len >= 2);
        FUZZ_CHECK((size_t)(r.value - v.records) + r.value_len <= v.records_len);
        FUZZ_CHECK(r.row == r.value + 2 && r.row_len == r.value_len - 2);
        FUZZ_CHECK(r.schema_id == (int16_t)(r.value[0] | r.value[1] << 8));
        fl_value_batch_add_value(&w, r.value, r.value_len);
        n++;
    }
    FUZZ_CHECK(got == FL_VALUE_NEXT_END && n == v.record_count && it.pos == v.records_len);
    fl_value_batch_end(&w);
    FUZZ_CHECK(out.len == size && memcmp(out.data, data, size) == 0);
    fl_buf_free(&out);
    return 0;
}
