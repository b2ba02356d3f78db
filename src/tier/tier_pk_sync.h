/*
 * tier_pk_sync.h — bringing a primary-key bucket's lake index
 * (tier_pk_index.h) to the lake a tiering round builds on: the snapshot
 * the coordinator read as the table's lake head, at which the bucket's
 * lake offset is start.
 *
 * In this order:
 * 1. A sealed round that ended at start and began at the index's stamp is
 *    committed into the index when the snapshot holds its witness file
 *    (the manifests that snapshot added name it): the snapshot is that
 *    round's. A round without files changed nothing; its end is taken.
 * 2. An index whose stamp is start is the lake's already.
 * 3. Anything else (a restart, a leader change, a round whose commit
 *    failed or is unknown) rebuilds the index from the snapshot: the
 *    primary-key columns of the bucket's live data files, less the
 *    snapshot's position deletes of the bucket and the rows its equality
 *    deletes name (those of a higher data sequence number than the row's
 *    file, turned into position deletes as libfluss's reader does:
 *    Fluss's own tiering job writes them, so a lake it tiered can be
 *    handed to flussd), each key live once (CORRUPT otherwise), stamped
 *    start. No snapshot: empty at start.
 *
 * The bucket's files are the entries whose partition tuple is the
 * bucket's: every identity string field equal to the bucket's partition
 * values in order, the bucket field (identity(__bucket) or
 * bucket[N](key)) equal to the bucket.
 *
 * Thread rule: one user of the index at a time; file I/O (a worker).
 */
#ifndef FL_TIER_PK_SYNC_H
#define FL_TIER_PK_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"
#include "tier_pk_index.h"

typedef struct fl_tier_pk_bucket {
    const char *table_dir; /* the Iceberg table's directory */
    int64_t snapshot_id;   /* the round's base; FL_ICE_NONE: the lake has none */
    int64_t start;         /* the bucket's lake offset there */
    const char *const *partition_values; /* in partition-key order */
    size_t n_values;
    int32_t bucket;
    const int32_t *key_field_ids; /* the primary-key columns' Iceberg field ids, in key order */
    size_t n_keys;
    size_t max_file_bytes; /* a data or delete file is read whole */
} fl_tier_pk_bucket_t;

typedef enum fl_tier_pk_sync_how {
    FL_TIER_PK_KEPT = 0,
    FL_TIER_PK_COMMITTED = 1,
    FL_TIER_PK_REBUILT = 2,
} fl_tier_pk_sync_how_t;

int fl_tier_pk_sync(fl_pk_index_t *x, const fl_tier_pk_bucket_t *b, fl_tier_pk_sync_how_t *how,
                    fl_error_t *err);

/* The rebuild alone (step 3), whatever the index holds. */
int fl_tier_pk_rebuild(fl_pk_index_t *x, const fl_tier_pk_bucket_t *b, fl_error_t *err);

#endif
