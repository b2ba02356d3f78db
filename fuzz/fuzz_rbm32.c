/*
 * fuzz_rbm32.c — fuzzes the rbm32 value decoder (the portable
 * RoaringBitmap serialization an rbm32 aggregate column stores,
 * kv_agg_rbm.h).
 *
 * Invariant checked: a value that decodes re-encodes to bytes that our
 * decoder and CRoaring's own safe decoder both read as the same set.
 */
#include <stdint.h>

#include "kv_agg_rbm.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_error_t err;
    roaring_bitmap_t *b = fl_kv_rbm32_decode(data, size, &err);
    if (!b) return 0;
    fl_buf_t e;
    fl_buf_init(&e);
    fl_kv_rbm32_encode(b, &e);
    roaring_bitmap_t *c = fl_kv_rbm32_decode(e.data, e.len, &err);
    FUZZ_CHECK(c && roaring_bitmap_equals(b, c));
    roaring_bitmap_t *lib = roaring_bitmap_portable_deserialize_safe((const char *)e.data, e.len);
    FUZZ_CHECK(lib && roaring_bitmap_equals(b, lib));
    roaring_bitmap_free(lib);
    roaring_bitmap_free(c);
    roaring_bitmap_free(b);
    fl_buf_free(&e);
    return 0;
}
