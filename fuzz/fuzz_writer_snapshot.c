/*
 * fuzz_writer_snapshot.c — .writer_snapshot files are read back from disk
 * on every log open: fl_writer_state_decode on arbitrary bytes; a decoded
 * state must encode to bytes that decode again to the same encoding.
 * Seeds: states of 0, 3 and 6 writers encoded by fl_writer_state_encode.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_writer_state.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_writer_state_t s;
    fl_writer_state_init(&s);
    fl_error_t err;
    if (fl_writer_state_decode(&s, data, size, &err) == 0) {
        fl_buf_t a, b;
        fl_buf_init(&a);
        fl_buf_init(&b);
        fl_writer_state_encode(&s, &a);
        fl_writer_state_t t;
        fl_writer_state_init(&t);
        FUZZ_CHECK(fl_writer_state_decode(&t, a.data, a.len, &err) == 0);
        fl_writer_state_encode(&t, &b);
        FUZZ_CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
        fl_writer_state_free(&t);
        fl_buf_free(&a);
        fl_buf_free(&b);
    }
    fl_writer_state_free(&s);
    return 0;
}
