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
 *     fluss-offsets file). fluss-c expires no snapshot and keeps every
 *     metadata version, so the newest one references everything any
 *     version does;
 *   - it is older than min_age_ms: a round in flight (of this coordinator
 *     or of a deposed one still finishing) may link a version naming it;
 *     a round is bounded far below the default age (one hour).
 * Nothing is removed when the newest version cannot be read.
 *
 * Thread rule: the tiering thread (never during the table's own round).
 */
#ifndef FL_SERVER_LAKE_GC_H
#define FL_SERVER_LAKE_GC_H

#include <stddef.h>
#include <stdint.h>

#include "common_error.h"

#define FL_LAKE_GC_MIN_AGE_MS_DEFAULT (60LL * 60 * 1000)

/* Removes the orphans of the lake table at dir; *removed counts them. */
int fl_lake_gc(const char *dir, int64_t min_age_ms, size_t *removed, fl_error_t *err);

#endif
