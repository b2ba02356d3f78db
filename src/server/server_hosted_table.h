/*
 * server_hosted_table.h — what a tablet server knows of one table: its
 * descriptor's properties the data path needs, every schema by id, the
 * bucket → leader/replicas assignment of the table or of each partition,
 * and the kv view of a primary-key table. Built only from the coordinator's
 * UPDATE_METADATA entry for the table (fl_hosted_table_from_pb): the tablet
 * server never reads the coordinator's catalog.
 *
 * Immutable once built; a change builds a new one, and readers hold a
 * reference (fl_hosted_table_unref). Thread rule: any thread.
 */
#ifndef FL_SERVER_HOSTED_TABLE_H
#define FL_SERVER_HOSTED_TABLE_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "common_error.h"
#include "fluss_api.pb-c.h"
#include "kv_table.h"
#include "metastore.h"
#include "types_schema.h"
#include "types_schema_map.h"

/* Buckets of one table or partition an UPDATE_METADATA may name. */
#define FL_HOSTED_BUCKETS_MAX (1 << 20)
/* The DELETED_TABLE_ID / DELETED_PARTITION_ID of 0.9.1's UPDATE_METADATA. */
#define FL_DELETED_ID (-2)

typedef struct fl_hosted_partition {
    int64_t partition_id;
    char *name;
    int32_t bucket_count;
    fl_ms_bucket_t *buckets;
} fl_hosted_partition_t;

typedef struct fl_hosted_table {
    atomic_int refs;
    int64_t table_id;
    char *database, *name;
    int64_t ttl_ms;             /* table.log.ttl */
    int32_t tiered_local_segments; /* table.log.tiered.local-segments (2) */
    char *log_format;           /* table.log.format: ARROW, INDEXED, COMPACTED */
    char *stats_columns;        /* table.statistics.columns, NULL when unset */
    bool has_primary_key;
    bool partitioned;
    bool lake_enabled;          /* table.datalake.enabled: its replicas keep what the lake lacks */
    int32_t schema_id;          /* latest */
    size_t schema_count;        /* schemas[i] is schema id i + 1 (parsed ones) */
    fl_schema_t *schemas;
    bool *schema_ok;
    const fl_datatype_t ***schema_types;
    fl_schema_map_t *latest_maps; /* [i]: schema id i + 1's columns in the latest */
    int32_t bucket_count;
    fl_ms_bucket_t *buckets;
    size_t partition_count;
    fl_hosted_partition_t *partitions;
    fl_kv_table_t *kv;          /* primary-key tables: merge engine, formats, key */
} fl_hosted_table_t;

/* The table of an UPDATE_METADATA entry, with the partitions among parts
 * whose table id is its own (the coordinator sends a table whole: its
 * entry and every partition it has). NULL with err (CORRUPT_MESSAGE) when
 * the entry is not a usable table: no path, a descriptor that is not JSON,
 * bucket ids that are not 0..n-1 each once, a partition without a name. */
fl_hosted_table_t *fl_hosted_table_from_pb(const Fluss__PbTableMetadata *tm,
                                           Fluss__PbPartitionMetadata *const *parts,
                                           size_t nparts, fl_error_t *err);
void fl_hosted_table_unref(fl_hosted_table_t *t);

/* Column types of a schema id of the table, or NULL (unknown id). */
const fl_datatype_t *const *fl_hosted_table_schema_types(const fl_hosted_table_t *t,
                                                         int16_t schema_id, size_t *count);
/* How the columns of a schema id of the table sit in its latest schema
 * (by column id), or NULL (unknown id). */
const fl_schema_map_t *fl_hosted_table_latest_map(const fl_hosted_table_t *t, int16_t schema_id);
/* The partition of that id, or NULL. */
const fl_hosted_partition_t *fl_hosted_table_partition(const fl_hosted_table_t *t,
                                                       int64_t partition_id);

/* server_kv.c: the kv view of a table descriptor (NULL for log tables). */
fl_kv_table_t *fl_hosted_kv_table_new(const fl_hosted_table_t *t, const json_t *table_json);
void fl_hosted_kv_table_free(fl_kv_table_t *kv);

#endif
