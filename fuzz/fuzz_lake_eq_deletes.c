/*
 * fuzz_lake_eq_deletes.c — an Iceberg equality-delete file image
 * (untrusted: Fluss's tiering job or any writer may have put it in the
 * warehouse) through the reader libfluss's lake scanner uses
 * (tier_eq_deletes.h), keyed by field id 1, then by ids 1 and 2.
 * Invariants checked: a file that reads is a set whose every key is found
 * after the seal for a lower sequence number and not for its own.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_common.h"
#include "tier_eq_deletes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const int32_t ids[2] = {1, 2};
    for (size_t n = 1; n <= 2; n++) {
        fl_tier_eq_deletes_t s;
        fl_tier_eq_deletes_init(&s);
        fl_error_t err;
        int rc = fl_tier_eq_deletes_read_image(&s, data, size, ids, n, 7, &err);
        fl_tier_eq_deletes_seal(&s);
        if (!rc) {
            FUZZ_CHECK(fl_tier_eq_deletes_count(&s) == s.n_items);
            for (size_t i = 0; i < s.n_items && i < 256; i++) {
                const uint8_t *k = s.items[i].key;
                FUZZ_CHECK(fl_tier_eq_deletes_has(&s, k, s.items[i].len, 6));
                FUZZ_CHECK(!fl_tier_eq_deletes_has(&s, k, s.items[i].len, 7));
            }
        }
        fl_tier_eq_deletes_free(&s);
    }
    return 0;
}
