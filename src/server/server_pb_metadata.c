/*
 * server_pb_metadata.c — metadata entries for the wire (server_pb_metadata.h).
 */
#include "server_pb_metadata.h"

#include <string.h>

#include "common_alloc.h"

Fluss__PbBucketMetadata **fl_pb_buckets(const fl_ms_bucket_t *b, int32_t n,
                                        Fluss__PbBucketMetadata **blocks) {
    size_t c = n > 0 ? (size_t)n : 1;
    Fluss__PbBucketMetadata *bm = fl_calloc(c, sizeof(*bm));
    Fluss__PbBucketMetadata **ptrs = fl_calloc(c, sizeof(*ptrs));
    for (int32_t i = 0; i < n; i++) {
        fluss__pb_bucket_metadata__init(&bm[i]);
        bm[i].bucket_id = i;
        bm[i].has_leader_id = 1;
        bm[i].leader_id = b[i].leader;
        bm[i].n_replica_id = (size_t)b[i].replica_count;
        bm[i].replica_id = (int32_t *)b[i].replicas;
        bm[i].has_leader_epoch = 1;
        bm[i].leader_epoch = b[i].leader_epoch;
        ptrs[i] = &bm[i];
    }
    *blocks = bm;
    return ptrs;
}

void fl_pb_table_metadata(const fl_ms_table_t *t, Fluss__PbTablePath *path,
                          Fluss__PbTableMetadata *tm, Fluss__PbBucketMetadata **blocks) {
    fluss__pb_table_path__init(path);
    path->database_name = t->database;
    path->table_name = t->name;
    fluss__pb_table_metadata__init(tm);
    tm->table_path = path;
    tm->table_id = t->table_id;
    tm->schema_id = t->schema_id;
    tm->table_json.data = (uint8_t *)t->table_json;
    tm->table_json.len = strlen(t->table_json);
    tm->created_time = t->created_ms;
    tm->modified_time = t->modified_ms;
    tm->bucket_metadata = fl_pb_buckets(t->buckets, t->bucket_count, blocks);
    tm->n_bucket_metadata = (size_t)(t->bucket_count > 0 ? t->bucket_count : 0);
}

void fl_pb_partition_metadata(int64_t table_id, const fl_ms_partition_t *p,
                              Fluss__PbPartitionMetadata *pm, Fluss__PbBucketMetadata **blocks) {
    fluss__pb_partition_metadata__init(pm);
    pm->table_id = table_id;
    pm->partition_name = p->name;
    pm->partition_id = p->partition_id;
    pm->bucket_metadata = fl_pb_buckets(p->buckets, p->bucket_count, blocks);
    pm->n_bucket_metadata = (size_t)(p->bucket_count > 0 ? p->bucket_count : 0);
}
