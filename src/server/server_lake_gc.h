/*
 * server_lake_gc.h — orphan files of a lake table: what a tiering round
 * wrote but never committed (it lost, failed, or its process died before
 * the link of its metadata version), removed once nothing can still
 * commit them.
 *
 * A file is removed when all of these hold:
 *   - it is one of ours by name: a .parquet file anywhere under data/,
 *     or under metadata/ an .avro, .fluss-offsets.json or .tmp file
 *     (anything else under the table, e.g. a file an engine put there,
 *     is left alone);
 *   - no snapshot of the table's newest metadata version references it
 *     (its manifest list, the manifests that lists, their data files, its
 *     fluss-offsets file). Without snapshot expiry the newest version
 *     references everything any version does; with it
 *     (server_lake_expire.h) the files of expired snapshots are
 *     referenced only by older versions, which no reader of the table's
 *     head reaches: the expiry deletes them itself, and this sweep is
 *     what removes them when a crash came between the expiry's commit
 *     and its deletions;
 *   - it is older than min_age_ms: a round in flight (of this coordinator
 *     or of a deposed one still finishing) may link a version naming it;
 *     a round is bounded far below the default age (one hour).
 * Nothing is removed when the newest version cannot be read.
 *
 * Thread rule: the tiering thread (never during the table's own round).
 */
#ifndef FL_SERVER_LAKE_GC_H
#define FL_SERVER_LAKE_GC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"
#include "common_strlist.h"
#include "lake_iceberg_table.h"

#define FL_LAKE_GC_MIN_AGE_MS_DEFAULT (60LL * 60 * 1000)

/* Removes the orphans of the lake table at dir; *removed counts them. */
int fl_lake_gc(const char *dir, int64_t min_age_ms, size_t *removed, fl_error_t *err);

/* Every file the n snapshots reference, as local paths appended to refs
 * (unsorted, repeats possible): each one's manifest list and fluss-offsets
 * file, the manifests the lists name (each read once) and their entries'
 * data files, whatever the entry's status. IO or CORRUPT when a list or
 * manifest cannot be read: then refs is incomplete and must not decide a
 * deletion. */
int fl_lake_snapshot_files(const fl_ice_snapshot_t *snaps, size_t n, fl_strlist_t *refs,
                           fl_error_t *err);
/* Sorts a path list for fl_lake_paths_have. */
void fl_lake_paths_sort(fl_strlist_t *l);
bool fl_lake_paths_have(const fl_strlist_t *sorted, const char *path);

#endif
