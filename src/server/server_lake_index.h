/*
 * server_lake_index.h — a tablet server's lake indexes: one per
 * primary-key bucket it tiers as leader (tier_pk_index.h), kept in memory
 * between rounds so that a round reads the lake only when it must
 * (tier_pk_sync.h: after a restart, a leader change, an unknown commit).
 *
 * A round takes its bucket's index and gives it back; a second round of
 * the same bucket meanwhile (a retry of a call the coordinator gave up
 * on) finds it taken. An index taken under another leader epoch than the
 * one it was built under is emptied: another leader may have tiered the
 * bucket since. Indexes of a dropped table go with the table.
 *
 * Thread rule: take, give and drop from any thread (one mutex); the index
 * taken is the taker's alone until given back.
 */
#ifndef FL_SERVER_LAKE_INDEX_H
#define FL_SERVER_LAKE_INDEX_H

#include <stdint.h>

#include "tier_pk_index.h"

typedef struct fl_lake_indexes fl_lake_indexes_t;

fl_lake_indexes_t *fl_lake_indexes_new(void);
void fl_lake_indexes_destroy(fl_lake_indexes_t *s);
/* The index of the bucket (created empty), or NULL when a round has it. */
fl_pk_index_t *fl_lake_indexes_take(fl_lake_indexes_t *s, int64_t table_id, int64_t partition_id,
                                    int32_t bucket, int32_t leader_epoch);
void fl_lake_indexes_give(fl_lake_indexes_t *s, fl_pk_index_t *x);
/* Frees the indexes of a table, or of one of its partitions
 * (partition_id >= 0); those taken when given back. */
void fl_lake_indexes_drop(fl_lake_indexes_t *s, int64_t table_id, int64_t partition_id);
/* Indexes held (tests). */
size_t fl_lake_indexes_count(fl_lake_indexes_t *s);

#endif
