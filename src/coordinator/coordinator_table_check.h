/*
 * coordinator_table_check.h — what the coordinator does to a table
 * descriptor on CREATE_TABLE before storing it: normalize the distribution
 * (TableDescriptor#normalizeDistribution), apply the cluster's defaults
 * (CoordinatorService#applySystemDefaults) and validate it
 * (TableDescriptorValidation), with Fluss's error codes.
 */
#ifndef FL_COORDINATOR_TABLE_CHECK_H
#define FL_COORDINATOR_TABLE_CHECK_H

#include <stdint.h>

#include "common_error.h"
#include "coordinator_lake.h"
#include "types_table.h"

typedef struct fl_table_defaults {
    int32_t bucket_number;      /* default.bucket.number */
    int32_t replication_factor; /* default.replication.factor */
    int32_t max_bucket_num;     /* max.bucket.num (a table's buckets, partitions' together) */
    int32_t max_partition_num;  /* max.partition.num (per partitioned table) */
    fl_lake_config_t lake;      /* datalake.* (format "" = no lake) */
} fl_table_defaults_t;

#define FL_MAX_PARTITION_NUM_DEFAULT 1000
#define FL_MAX_BUCKET_NUM_DEFAULT 128000

/* Normalizes keys (step of the descriptor's own constructor). */
int fl_table_normalize(fl_table_desc_t *d, fl_error_t *err);
/* Fills in defaults the reference server adds. */
int fl_table_apply_defaults(fl_table_desc_t *d, const fl_table_defaults_t *defaults,
                            fl_error_t *err);
/* Validates properties, keys, types and options. */
int fl_table_validate(const fl_table_desc_t *d, const fl_table_defaults_t *defaults,
                      fl_error_t *err);

#endif
