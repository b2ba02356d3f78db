/*
 * fuzz_stats_sidecar.c — a segment's statistics sidecar is read back from
 * disk at the first filtered fetch of the segment: fl_stats_file_parse on
 * arbitrary bytes stops at the first record that does not check, never
 * reads past the input, and every record it yields lies inside it.
 */
#include <stdint.h>
#include <string.h>

#include "log_stats_file.h"
#include "fuzz_common.h"

typedef struct {
    const uint8_t *p;
    size_t len;
    size_t seen;
} fuzz_ctx_t;

static void fuzz_record(int64_t base, uint32_t crc, const uint8_t *stats, size_t len, void *ctx) {
    fuzz_ctx_t *c = ctx;
    (void)base;
    (void)crc;
    FUZZ_CHECK(stats >= c->p && stats + len <= c->p + c->len);
    c->seen++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_ctx_t c = {data, size, 0};
    size_t valid = fl_stats_file_parse(data, size, fuzz_record, &c);
    FUZZ_CHECK(valid <= size);
    FUZZ_CHECK(c.seen == 0 || valid >= 20);
    return 0;
}
