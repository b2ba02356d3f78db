/*
 * fuzz_lake_iceberg_meta.c — bytes from a file (untrusted) as Iceberg
 * table metadata JSON, through fl_ice_meta_decode (lake_iceberg_table.h).
 * Invariants checked: what the decoder accepts the encoder writes (the
 * same rules run on both sides), the bytes written decode again and
 * encode to the same bytes; a snapshot appended on top of what was read
 * (the next tiering round) is accepted unless a bound or an id space is
 * exhausted, and its result encodes; ASan sees every value read.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "lake_iceberg_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void append_round(const fl_ice_table_meta_t *m) {
    int64_t id = 0; /* a new id: above every one (-1 when none is left) */
    for (size_t i = 0; i < m->n_snapshots && id >= 0; i++)
        if (m->snapshots[i].snapshot_id >= id)
            id = m->snapshots[i].snapshot_id == INT64_MAX ? -1 : m->snapshots[i].snapshot_id + 1;
    static const fl_ice_prop_t summary[] = {{"operation", "append"}};
    fl_ice_snapshot_t s = {id, m->current_snapshot_id, FL_ICE_NONE, 1, "file:///fuzz/snap.avro",
                           FL_ICE_NO_SCHEMA, summary, 1};
    fl_ice_meta_read_t next;
    fl_ice_meta_read_init(&next);
    fl_error_t err;
    int rc = fl_ice_meta_with_snapshot(m, "file:///fuzz/v1.metadata.json", &s, &next, &err);
    bool exhausted = id < 0 || m->last_sequence_number == INT64_MAX ||
                     m->n_snapshots >= FL_ICE_SNAPSHOTS_MAX ||
                     m->n_snapshot_log >= FL_ICE_SNAPSHOTS_MAX;
    FUZZ_CHECK(rc == 0 || (rc == FLUSS_ERR__INVALID_ARG && exhausted));
    if (rc == 0) {
        FUZZ_CHECK(next.meta.current_snapshot_id == id);
        FUZZ_CHECK(next.meta.last_sequence_number == m->last_sequence_number + 1);
        fl_buf_t b;
        fl_buf_init(&b);
        FUZZ_CHECK(fl_ice_meta_encode(&next.meta, &b, &err) == 0);
        fl_buf_free(&b);
    }
    fl_ice_meta_read_reset(&next);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_ice_meta_read_t r1, r2;
    fl_ice_meta_read_init(&r1);
    fl_ice_meta_read_init(&r2);
    fl_error_t err;
    int rc = fl_ice_meta_decode(data, size, &r1, &err);
    FUZZ_CHECK(rc == 0 || rc == FLUSS_ERR__CORRUPT || rc == FLUSS_ERR__INVALID_ARG ||
               rc == FLUSS_ERR__NO_MEMORY);
    if (rc == 0) {
        fl_buf_t b1, b2;
        fl_buf_init(&b1);
        fl_buf_init(&b2);
        FUZZ_CHECK(fl_ice_meta_encode(&r1.meta, &b1, &err) == 0);
        FUZZ_CHECK(fl_ice_meta_decode(b1.data, b1.len, &r2, &err) == 0);
        FUZZ_CHECK(fl_ice_meta_encode(&r2.meta, &b2, &err) == 0);
        FUZZ_CHECK(b1.len == b2.len && memcmp(b1.data, b2.data, b1.len) == 0);
        append_round(&r1.meta);
        fl_buf_free(&b1);
        fl_buf_free(&b2);
    }
    fl_ice_meta_read_reset(&r1);
    fl_ice_meta_read_reset(&r2);
    return 0;
}
