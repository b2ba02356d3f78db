/*
 * fuzz_lake_iceberg_manifest.c — bytes from a file (untrusted) as an
 * Iceberg manifest and as a manifest list, through the readers of
 * lake_iceberg_manifest.h. Invariants checked: whatever a reader accepts
 * its writer writes again (a manifest may be refused only with
 * INVALID_ARG, for partition names Java would have escaped), the bytes
 * written read back, and writing what was read back gives a file of the
 * same length with the same summary (the files differ only in their
 * random sync markers); ASan sees every value read.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "lake_iceberg_manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_summary(const fl_ice_manifest_file_t *a, const fl_ice_manifest_file_t *b) {
    FUZZ_CHECK(a->manifest_length == b->manifest_length);
    FUZZ_CHECK(a->added_files_count == b->added_files_count);
    FUZZ_CHECK(a->existing_files_count == b->existing_files_count);
    FUZZ_CHECK(a->deleted_files_count == b->deleted_files_count);
    FUZZ_CHECK(a->added_rows_count == b->added_rows_count);
    FUZZ_CHECK(a->min_sequence_number == b->min_sequence_number);
    FUZZ_CHECK(a->n_partitions == b->n_partitions);
    for (size_t i = 0; i < a->n_partitions; i++) {
        const fl_ice_field_summary_t *x = &a->partitions[i], *y = &b->partitions[i];
        FUZZ_CHECK(x->contains_null == y->contains_null);
        FUZZ_CHECK((x->lower.p == NULL) == (y->lower.p == NULL) && x->lower.len == y->lower.len);
        FUZZ_CHECK(!x->lower.len || memcmp(x->lower.p, y->lower.p, x->lower.len) == 0);
        FUZZ_CHECK((x->upper.p == NULL) == (y->upper.p == NULL) && x->upper.len == y->upper.len);
        FUZZ_CHECK(!x->upper.len || memcmp(x->upper.p, y->upper.p, x->upper.len) == 0);
    }
}

static void fuzz_manifest(const uint8_t *data, size_t size) {
    fl_ice_manifest_read_t r1, r2;
    fl_ice_manifest_read_init(&r1);
    fl_ice_manifest_read_init(&r2);
    fl_error_t err;
    if (fl_ice_manifest_decode(data, size, &r1, &err) == 0) {
        fl_ice_manifest_summary_t s1, s2;
        fl_ice_manifest_summary_init(&s1);
        fl_ice_manifest_summary_init(&s2);
        fl_buf_t b1, b2;
        fl_buf_init(&b1);
        fl_buf_init(&b2);
        int rc = fl_ice_manifest_encode(&r1.manifest, &b1, &s1, &err);
        FUZZ_CHECK(rc == 0 || rc == FLUSS_ERR__INVALID_ARG);
        if (rc == 0) {
            FUZZ_CHECK(fl_ice_manifest_decode(b1.data, b1.len, &r2, &err) == 0);
            FUZZ_CHECK(r2.manifest.n_entries == r1.manifest.n_entries);
            FUZZ_CHECK(fl_ice_manifest_encode(&r2.manifest, &b2, &s2, &err) == 0);
            FUZZ_CHECK(b1.len == b2.len);
            same_summary(&s1.file, &s2.file);
        }
        fl_buf_free(&b1);
        fl_buf_free(&b2);
        fl_ice_manifest_summary_reset(&s1);
        fl_ice_manifest_summary_reset(&s2);
    }
    fl_ice_manifest_read_reset(&r1);
    fl_ice_manifest_read_reset(&r2);
}

static void fuzz_list(const uint8_t *data, size_t size) {
    fl_ice_manifest_list_read_t r1, r2;
    fl_ice_manifest_list_read_init(&r1);
    fl_ice_manifest_list_read_init(&r2);
    fl_error_t err;
    if (fl_ice_manifest_list_decode(data, size, &r1, &err) == 0) {
        fl_buf_t b1, b2;
        fl_buf_init(&b1);
        fl_buf_init(&b2);
        FUZZ_CHECK(fl_ice_manifest_list_encode(&r1.list, &b1, &err) == 0);
        FUZZ_CHECK(fl_ice_manifest_list_decode(b1.data, b1.len, &r2, &err) == 0);
        FUZZ_CHECK(r2.list.n_manifests == r1.list.n_manifests);
        FUZZ_CHECK(r2.list.parent_snapshot_id == r1.list.parent_snapshot_id);
        FUZZ_CHECK(fl_ice_manifest_list_encode(&r2.list, &b2, &err) == 0);
        FUZZ_CHECK(b1.len == b2.len);
        fl_buf_free(&b1);
        fl_buf_free(&b2);
    }
    fl_ice_manifest_list_read_reset(&r1);
    fl_ice_manifest_list_read_reset(&r2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_manifest(data, size);
    fuzz_list(data, size);
    return 0;
}
