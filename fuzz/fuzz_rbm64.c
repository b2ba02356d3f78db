/*
 * fuzz_rbm64.c — fuzzes the rbm64 value decoder (the Roaring64Bitmap
 * serialization an rbm64 aggregate column stores, kv_agg_rbm.h).
 *
 * Invariant checked: a value that decodes re-encodes to bytes that decode
 * to the same set, and that encoding is stable (encode ∘ decode ∘ encode
 * = encode).
 */
#include <stdint.h>
#include <string.h>

#include "kv_agg_rbm.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_kv_rbm64_t b, c;
    fl_error_t err;
    fl_kv_rbm64_init(&b);
    if (fl_kv_rbm64_decode(data, size, &b, &err)) return 0;
    fl_buf_t e1, e2;
    fl_buf_init(&e1);
    fl_buf_init(&e2);
    fl_kv_rbm64_encode(&b, &e1);
    fl_kv_rbm64_init(&c);
    FUZZ_CHECK(fl_kv_rbm64_decode(e1.data, e1.len, &c, &err) == 0);
    FUZZ_CHECK(fl_kv_rbm64_cardinality(&c) == fl_kv_rbm64_cardinality(&b));
    fl_kv_rbm64_encode(&c, &e2);
    FUZZ_CHECK(e1.len == e2.len && memcmp(e1.data, e2.data, e1.len) == 0);
    fl_kv_rbm64_free(&b);
    fl_kv_rbm64_free(&c);
    fl_buf_free(&e1);
    fl_buf_free(&e2);
    return 0;
}
