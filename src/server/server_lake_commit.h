/*
 * server_lake_commit.h — the commit of one lake tiering round: the data
 * files the buckets' leaders wrote become one new Iceberg snapshot of the
 * table (lakehouse design: the coordinator is the single committer, the
 * lake the single truth of what is tiered).
 *
 * In order, each file fsynced before what names it:
 *   metadata/<seq>-<uuid>.fluss-offsets.json  every bucket's offset after
 *       the round, Fluss's TableBucketOffsets JSON (version 1):
 *       {"version":1,"table_id":T,"bucket_offsets":[o0,o1,...]} or, for
 *       a partitioned table, "partition_offsets":[{"partition_id":P,
 *       "bucket_offsets":[...]}]; -1 for a bucket never tiered
 *   metadata/<uuid>-m0.avro                   a manifest of the new files
 *   metadata/snap-<id>-1-<uuid>.avro          the manifest list: the base
 *       snapshot's manifests and the new one; once that would be more
 *       than 16, the old data manifests' live entries are first rewritten
 *       into one, metadata/<uuid>-m1.avro, as EXISTING entries with their
 *       snapshot ids and sequence numbers made explicit
 *   v<N+1>.metadata.json                      the snapshot (operation
 *       append, commit-user __fluss_lake_tiering, fluss-offsets the path
 *       above, Appendix F's counts), committed by link(2)
 *
 * The offset of bucket b in the lake is the first offset its data files do
 * not hold: a round reads it from the head it builds on and nowhere else,
 * so a round whose commit lost (another version came first) or failed
 * tiers nothing twice: its files are deleted, and the next round starts
 * from the head again.
 *
 * Thread rule: none (the tiering thread).
 */
#ifndef FL_SERVER_LAKE_COMMIT_H
#define FL_SERVER_LAKE_COMMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"
#include "common_strlist.h"
#include "fluss_api.pb-c.h"
#include "lake_iceberg_table.h"

#define FL_LAKE_COMMIT_USER "__fluss_lake_tiering"

/* Offsets by (partition, bucket); partition -1 for a table without. */
typedef struct fl_lake_offset {
    int64_t partition_id;
    int32_t bucket;
    int64_t offset;
} fl_lake_offset_t;

typedef struct fl_lake_offsets {
    size_t count, cap;
    fl_lake_offset_t *items;
} fl_lake_offsets_t;


void fl_lake_offsets_free(fl_lake_offsets_t *o);
/* -1 when the bucket has none. */
int64_t fl_lake_offsets_get(const fl_lake_offsets_t *o, int64_t partition_id, int32_t bucket);
void fl_lake_offsets_set(fl_lake_offsets_t *o, int64_t partition_id, int32_t bucket,
                         int64_t offset);
/* The TableBucketOffsets JSON (version 1) of len bytes read from path
 * (named in messages) into *out: bucket_offsets, or partition_offsets of
 * {partition_id, bucket_offsets}; -1 is no offset. CORRUPT for anything
 * else, or the offsets of a table other than table_id. */
int fl_lake_offsets_decode(const char *path, const void *text, size_t len, int64_t table_id,
                           fl_lake_offsets_t *out, fl_error_t *err);
/* o as that JSON (malloc'd; free with free()); partitioned: the
 * partition_offsets form. */
char *fl_lake_offsets_encode(const fl_lake_offsets_t *o, int64_t table_id, bool partitioned);
/* The offsets the table's current lake snapshot holds (none without a
 * snapshot). CORRUPT for an offsets file that does not parse or names
 * another table. */
int fl_lake_head_offsets(const fl_ice_table_head_t *h, int64_t table_id, fl_lake_offsets_t *out,
                         fl_error_t *err);
/* The same for snapshot s of the table; *tiered false (nothing read) when
 * s was not committed by the tiering (no fluss-offsets). */
int fl_lake_snapshot_offsets(const fl_ice_snapshot_t *s, int64_t table_id,
                             fl_lake_offsets_t *out, bool *tiered, fl_error_t *err);

/* The value of summary key key of snapshot s, NULL when absent. */
const char *fl_lake_summary(const fl_ice_snapshot_t *s, const char *key);

/* A data file a leader wrote, or a position-delete file (deletes: a
 * primary-key bucket's), and where it belongs. */
typedef struct fl_lake_new_file {
    const Fluss__PbLakeDataFile *file;
    int32_t bucket;
    int64_t partition_id; /* -1: none */
    const char *const *partition_values; /* one per partition key */
    bool deletes;
} fl_lake_new_file_t;

typedef struct fl_lake_round_result {
    int32_t version; /* the committed version */
    int64_t snapshot_id;
    int64_t added_records;
} fl_lake_round_result_t;

/* Commits files (n of them, n may be 0 when only offsets moved) over
 * head as its next version, with offsets the table's offsets after the
 * round. FLUSS_ERR__CONFLICT when another version came first; any
 * failure deletes what the commit wrote (the data files are the
 * caller's). */
int fl_lake_commit_round(const char *dir, const fl_ice_table_head_t *head, int64_t table_id,
                         const fl_strlist_t *partition_keys, const fl_lake_new_file_t *files,
                         size_t n, const fl_lake_offsets_t *offsets,
                         fl_lake_round_result_t *result, fl_error_t *err);

/* Test hook (DESIGN.md "Fault tests"): with FLUSS_TEST_LAKE_KILL=<step>
 * in the environment the process kills itself (SIGKILL) at that step of a
 * round: "offsets", "manifest", "list" (once that file is written),
 * "linked" (the version committed, the tablets not told yet). Never set
 * in production. */
void fl_lake_kill_point(const char *step);

#endif
