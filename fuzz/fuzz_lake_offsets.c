/*
 * fuzz_lake_offsets.c — bytes from a lake table's metadata directory
 * (untrusted: any writer may put a file there) as a fluss-offsets file,
 * through fl_lake_offsets_decode (server_lake_commit.h), table id 7.
 * Invariants checked: what decodes has no negative offset and no bucket
 * twice; its JSON (fl_lake_offsets_encode, partitioned when a partition
 * has an offset: without one both forms decode to nothing) decodes again
 * to the same offsets; ASan sees every value read.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "server_lake_commit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_same(const fl_lake_offsets_t *a, const fl_lake_offsets_t *b) {
    FUZZ_CHECK(a->count == b->count);
    for (size_t i = 0; i < a->count; i++)
        FUZZ_CHECK(fl_lake_offsets_get(b, a->items[i].partition_id, a->items[i].bucket) ==
                   a->items[i].offset);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_lake_offsets_t o = {0}, again = {0};
    fl_error_t err;
    if (fl_lake_offsets_decode("fuzz", data, size, 7, &o, &err) == 0) {
        bool partitioned = false;
        for (size_t i = 0; i < o.count; i++) {
            FUZZ_CHECK(o.items[i].offset >= 0 && o.items[i].bucket >= 0);
            partitioned |= o.items[i].partition_id >= 0;
            for (size_t k = 0; k < i; k++)
                FUZZ_CHECK(o.items[k].partition_id != o.items[i].partition_id ||
                           o.items[k].bucket != o.items[i].bucket);
        }
        char *text = fl_lake_offsets_encode(&o, 7, partitioned);
        FUZZ_CHECK(text);
        FUZZ_CHECK(fl_lake_offsets_decode("again", text, strlen(text), 7, &again, &err) == 0);
        check_same(&o, &again);
        free(text);
    }
    fl_lake_offsets_free(&o);
    fl_lake_offsets_free(&again);
    return 0;
}
