/*
 * server_pb_metadata.h — a table's metadata entries as the wire carries
 * them (PbTableMetadata, PbPartitionMetadata, PbBucketMetadata), from the
 * metadata store's views: what GET_METADATA answers clients and what the
 * coordinator's UPDATE_METADATA tells tablet servers. The entries point
 * into the views (valid while they are); the arrays they own are returned
 * for the caller to free (fl_free of *blocks and of the entry's
 * bucket_metadata).
 */
#ifndef FL_SERVER_PB_METADATA_H
#define FL_SERVER_PB_METADATA_H

#include "fluss_api.pb-c.h"
#include "metastore.h"

/* The entries of n buckets (bucket i at index i). */
Fluss__PbBucketMetadata **fl_pb_buckets(const fl_ms_bucket_t *b, int32_t n,
                                        Fluss__PbBucketMetadata **blocks);
/* A table's entry (path, id, schema id, descriptor, times, buckets). */
void fl_pb_table_metadata(const fl_ms_table_t *t, Fluss__PbTablePath *path,
                          Fluss__PbTableMetadata *tm, Fluss__PbBucketMetadata **blocks);
/* A partition's entry. */
void fl_pb_partition_metadata(int64_t table_id, const fl_ms_partition_t *p,
                              Fluss__PbPartitionMetadata *pm, Fluss__PbBucketMetadata **blocks);

#endif
