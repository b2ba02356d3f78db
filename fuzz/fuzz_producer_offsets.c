/*
 * fuzz_producer_offsets.c — a producer offsets file
 * (<data.dir>/coordinator/producer-offsets/<id>.json,
 * coordinator_producer_codec.h) is read at every coordinator start:
 * arbitrary bytes as that file. Either it is refused and nothing is left
 * behind, or what was read is in entry order with a valid id, and writes
 * back out as bytes that read in to the same entry and write out the same.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator_producer_codec.h"
#include "fuzz_common.h"
#include "types_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_producer_entry_t e, again;
    fl_error_t err;
    if (fl_producer_entry_decode((const char *)data, size, &e, &err) != 0) {
        FUZZ_CHECK(e.producer_id == NULL && e.b == NULL && e.n == 0);
        return 0;
    }
    char why[FL_ERROR_MSG_MAX];
    FUZZ_CHECK(!fl_name_invalid(e.producer_id, why, sizeof(why)));
    FUZZ_CHECK(e.n <= FL_PRODUCER_BUCKETS_MAX);
    for (size_t i = 1; i < e.n; i++) FUZZ_CHECK(fl_producer_bucket_cmp(&e.b[i - 1], &e.b[i]) < 0);
    fl_buf_t a, b;
    fl_buf_init(&a);
    fl_buf_init(&b);
    fl_producer_entry_encode(&e, &a);
    FUZZ_CHECK(a.len <= FL_PRODUCER_FILE_MAX);
    FUZZ_CHECK(fl_producer_entry_decode((const char *)a.data, a.len, &again, &err) == 0);
    FUZZ_CHECK(strcmp(e.producer_id, again.producer_id) == 0);
    FUZZ_CHECK(e.expiration_ms == again.expiration_ms && e.n == again.n);
    for (size_t i = 0; i < e.n; i++) {
        FUZZ_CHECK(fl_producer_bucket_cmp(&e.b[i], &again.b[i]) == 0);
        FUZZ_CHECK(e.b[i].offset == again.b[i].offset);
    }
    fl_producer_entry_encode(&again, &b);
    FUZZ_CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    /* normalizing what is already in order changes nothing */
    size_t n = again.n;
    fl_producer_buckets_normalize(again.b, &n);
    FUZZ_CHECK(n == e.n);
    fl_buf_free(&a);
    fl_buf_free(&b);
    fl_producer_entry_free(&again);
    fl_producer_entry_free(&e);
    return 0;
}
