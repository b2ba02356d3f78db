/*
 * fuzz_epoch_checkpoint.c — fuzzes the leader-epoch checkpoint parser
 * (replica_epoch.h: a bucket's `leader-epoch-checkpoint`, read from disk at
 * every open).
 *
 * Invariants checked: what parses has epochs and start offsets strictly
 * increasing, formats to text that parses to the same entries, and that
 * text is the input itself when the input was canonical.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "fuzz_common.h"
#include "replica_epoch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_epoch_cache_t c, back;
    fl_error_t err;
    if (fl_epoch_cache_parse((const char *)data, size, &c, &err)) {
        FUZZ_CHECK(c.count == 0);
        return 0;
    }
    for (size_t i = 1; i < c.count; i++) {
        FUZZ_CHECK(c.entries[i].epoch > c.entries[i - 1].epoch);
        FUZZ_CHECK(c.entries[i].start_offset > c.entries[i - 1].start_offset);
    }
    size_t len;
    char *text = fl_epoch_cache_format(&c, &len);
    FUZZ_CHECK(fl_epoch_cache_parse(text, len, &back, &err) == 0);
    FUZZ_CHECK(back.count == c.count);
    for (size_t i = 0; i < c.count; i++) {
        FUZZ_CHECK(back.entries[i].epoch == c.entries[i].epoch);
        FUZZ_CHECK(back.entries[i].start_offset == c.entries[i].start_offset);
    }
    /* the only leniency would be leading zeros, which the format drops */
    if (len == size && memcmp(text, data, size) != 0) abort();
    fl_free(text);
    fl_epoch_cache_free(&c);
    fl_epoch_cache_free(&back);
    return 0;
}
