/*
 * fuzz_kv_leases.c — the KV snapshot lease file ({remote}/lease/
 * kv-snapshot-leases.json, kv_lease.h) is read at every coordinator start:
 * arbitrary bytes as that file. Either it is refused, or what was read
 * writes back out as a file that reads in to the same leases.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kv_lease.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_kv_leases_t *l = NULL, *again = NULL;
    fl_error_t err;
    if (fl_kv_leases_open(NULL, &l, &err)) abort();
    if (fl_kv_leases_parse(l, (const char *)data, size, &err) == 0) {
        fl_buf_t a, b;
        fl_buf_init(&a);
        fl_buf_init(&b);
        fl_kv_leases_dump(l, &a);
        if (fl_kv_leases_open(NULL, &again, &err)) abort();
        if (fl_kv_leases_parse(again, (const char *)a.data, a.len, &err)) abort();
        fl_kv_leases_dump(again, &b);
        if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) abort();
        if (fl_kv_leases_count(l) != fl_kv_leases_count(again)) abort();
        (void)fl_kv_leases_pinned(l, 1, -1, 0, 0, 0);
        fl_kv_leases_expire(again, INT64_MAX);
        if (fl_kv_leases_count(again) != 0) abort();
        fl_buf_free(&a);
        fl_buf_free(&b);
        fl_kv_leases_close(again);
    } else if (fl_kv_leases_count(l) != 0) {
        abort(); /* a refused file leaves nothing behind */
    }
    fl_kv_leases_close(l);
    return 0;
}
