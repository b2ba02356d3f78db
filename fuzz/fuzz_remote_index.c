/*
 * fuzz_remote_index.c — a tiered segment's .index and .timeindex files
 * are read back from remote storage on a fetch that starts inside a
 * remote segment and on a list-offsets by timestamp: both lookups of
 * log_remote_index.h over arbitrary bytes as the file. The first 32 bytes
 * pick the segment as a manifest may describe it (0 <= base < end,
 * size >= 0) and the target offset and timestamp. A position found lies
 * inside the segment; an offset found lies in [base, end).
 */
#include <stdint.h>
#include <string.h>

#include "log_remote_index.h"
#include "fuzz_common.h"

typedef struct {
    const uint8_t *p;
    size_t len;
} fuzz_file_t;

static int fuzz_read(void *ctx, uint64_t pos, size_t len, uint8_t *dst, size_t *got,
                     fl_error_t *err) {
    const fuzz_file_t *f = ctx;
    (void)err;
    *got = 0;
    if (pos >= f->len) return 0;
    size_t n = f->len - (size_t)pos < len ? f->len - (size_t)pos : len;
    memcpy(dst, f->p + pos, n);
    *got = n;
    return 0;
}

static uint64_t fuzz_u64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 32) return 0;
    int64_t base = (int64_t)(fuzz_u64(data) & (uint64_t)INT64_MAX);
    if (base == INT64_MAX) base--;
    int64_t end = base + 1 + (int64_t)(fuzz_u64(data + 8) % (uint64_t)(INT64_MAX - base));
    int64_t segment_bytes = (int64_t)(fuzz_u64(data + 16) & (uint64_t)INT64_MAX);
    int64_t target = (int64_t)fuzz_u64(data + 24);
    fuzz_file_t f = {data + 32, size - 32};
    fl_error_t err;

    uint64_t pos = 1;
    FUZZ_CHECK(fl_remote_index_position(fuzz_read, &f, f.len, base, end, segment_bytes, target,
                                        &pos, &err) == 0);
    FUZZ_CHECK(pos == 0 || pos < (uint64_t)segment_bytes);

    int64_t off = -1;
    FUZZ_CHECK(fl_remote_index_offset_for_time(fuzz_read, &f, f.len, base, end, target, &off,
                                               &err) == 0);
    FUZZ_CHECK(off >= base && off < end);
    return 0;
}
