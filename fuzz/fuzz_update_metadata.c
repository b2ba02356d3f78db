/*
 * fuzz_update_metadata.c — fuzzes what a tablet server builds from the
 * coordinator's UPDATE_METADATA (server_hosted_table.h): the protobuf
 * decode, then every table entry with the partitions of the message.
 *
 * Invariants checked: a table that builds has buckets and partitions as
 * the entry named them (ids dense, each once), a partition for each entry
 * of its table id, schema types only for ids 1..schema_id, and a latest
 * map for every parsed schema when the latest parsed.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"
#include "server_hosted_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Fluss__UpdateMetadataRequest *req = fluss__update_metadata_request__unpack(NULL, size, data);
    if (!req) return 0;
    for (size_t i = 0; i < req->n_table_metadata; i++) {
        const Fluss__PbTableMetadata *tm = req->table_metadata[i];
        fl_error_t err;
        fl_hosted_table_t *t =
            fl_hosted_table_from_pb(tm, req->partition_metadata, req->n_partition_metadata, &err);
        if (!t) {
            FUZZ_CHECK(err.code == FLUSS_ERR_CORRUPT_MESSAGE);
            continue;
        }
        FUZZ_CHECK(t->table_id == tm->table_id);
        FUZZ_CHECK((size_t)t->bucket_count == tm->n_bucket_metadata);
        for (size_t b = 0; b < tm->n_bucket_metadata; b++) {
            const Fluss__PbBucketMetadata *bm = tm->bucket_metadata[b];
            FUZZ_CHECK(t->buckets[bm->bucket_id].leader == (bm->has_leader_id ? bm->leader_id : -1));
        }
        size_t np = 0;
        for (size_t k = 0; k < req->n_partition_metadata; k++)
            np += req->partition_metadata[k]->table_id == tm->table_id;
        FUZZ_CHECK(t->partition_count == np);
        for (size_t k = 0; k < t->partition_count; k++)
            FUZZ_CHECK(fl_hosted_table_partition(t, t->partitions[k].partition_id) != NULL);
        size_t count;
        FUZZ_CHECK(fl_hosted_table_schema_types(t, 0, &count) == NULL);
        FUZZ_CHECK(fl_hosted_table_schema_types(t, (int16_t)(t->schema_id + 1), &count) == NULL ||
                   t->schema_id == INT16_MAX);
        bool latest = t->schema_id > 0 && t->schema_ok[t->schema_id - 1];
        for (int32_t s = 1; s <= t->schema_id; s++) {
            bool ok = fl_hosted_table_schema_types(t, (int16_t)s, &count) != NULL;
            FUZZ_CHECK(ok == t->schema_ok[s - 1]);
            if (ok && latest) FUZZ_CHECK(fl_hosted_table_latest_map(t, (int16_t)s) != NULL);
        }
        fl_hosted_table_unref(t);
    }
    fluss__update_metadata_request__free_unpacked(req, NULL);
    return 0;
}
