/*
 * fuzz_kv_batch.c — the KvRecordBatch of PUT_KV (record_kv.h) as a client
 * sends it: parse, CRC check, iterate every record. Invariants: a parsed
 * view and every record stay inside the input; the iterator hands out
 * exactly RecordCount records that tile the records area and never fails
 * after a successful parse; a batch that parses is canonical, so the
 * builder fed its records (with its schema id and writer state) rebuilds
 * the same bytes, except Attributes and the CRC, which the builder writes
 * as 0 and correct.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_buf.h"
#include "record_kv.h"
#include "fuzz_common.h"

static void inside(const uint8_t *p, size_t n, const uint8_t *lo, size_t len) {
    FUZZ_CHECK(n == 0 || (p >= lo && (size_t)(p - lo) <= len && n <= len - (size_t)(p - lo)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_kv_batch_view_t v;
    fl_error_t err;
    if (fl_kv_batch_parse(data, size, &v, &err) != 0) {
        FUZZ_CHECK(err.code == FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
        return 0;
    }
    FUZZ_CHECK(v.size == size && v.records_len == size - FL_KV_BATCH_HEADER);
    FUZZ_CHECK(v.magic == 0 && v.record_count >= 0);
    bool crc_ok = fl_kv_batch_crc_ok(&v);
    fl_kv_batch_builder_t b;
    fl_kv_batch_builder_init(&b, v.schema_id, v.writer_id, v.batch_sequence);
    fl_kv_batch_iter_t it;
    fl_kv_record_t r;
    fl_kv_batch_iter_init(&it, &v);
    int32_t n = 0;
    fl_kv_next_t got;
    while ((got = fl_kv_batch_next(&it, &r, &err)) == FL_KV_NEXT_RECORD) {
        inside(r.key, r.key_len, v.records, v.records_len);
        inside(r.value, r.value_len, v.records, v.records_len);
        FUZZ_CHECK(r.is_delete == (r.value_len == 0) && (r.value == NULL) == r.is_delete);
        fl_kv_batch_builder_add(&b, r.key, r.key_len, r.value, r.value_len);
        n++;
    }
    FUZZ_CHECK(got == FL_KV_NEXT_END && n == v.record_count && it.pos == v.records_len);
    fl_buf_t out;
    fl_buf_init(&out);
    fl_kv_batch_builder_finish(&b, &out);
    FUZZ_CHECK(out.len == size);
    FUZZ_CHECK(memcmp(out.data, data, 5) == 0);                  /* Length, Magic */
    FUZZ_CHECK(memcmp(out.data + 12, data + 12, size - 12) == 0); /* from WriterId on */
    FUZZ_CHECK(out.data[9] == data[9] && out.data[10] == data[10]);
    if (crc_ok && v.attributes == 0) FUZZ_CHECK(memcmp(out.data, data, size) == 0);
    fl_buf_free(&out);
    fl_kv_batch_builder_free(&b);
    return 0;
}
