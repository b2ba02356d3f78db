/*
 * log_remote_manifest.h — the remote log manifest of one bucket (Fluss
 * RemoteLogManifest, RemoteLogManifestJsonSerde) and its commit record
 * (RemoteLogManifestHandle): which rolled segments of the bucket's log live
 * in remote storage. The bytes are the reference's JSON, field for field
 * and in its order (compact, as Jackson writes it):
 *
 *   {"version":1, "database":"db", "table":"t", ["partition_name":"p",]
 *    "table_id":N, ["partition_id":N,] "bucket_id":N,
 *    "remote_log_segments":[{"segment_id":"<uuid>", "start_offset":N,
 *      "end_offset":N, "max_timestamp":N, "size_in_bytes":N}, ...]}
 *
 * start_offset is the segment's base offset, end_offset the next segment's
 * base offset (exclusive), size_in_bytes the .log file's length (int32:
 * PbRemoteLogSegment cannot carry more). The handle, which the reference
 * keeps in ZooKeeper, is {"version":1, "remote_log_manifest_path":"...",
 * "remote_log_end_offset":N}.
 *
 * Decoding takes bytes from disk: everything is checked (types, ranges,
 * segment ids are canonical UUIDs — they become directory names —,
 * segments ascending and not overlapping, names that are plain path
 * components) and a refusal is FLUSS_ERR__CORRUPT; nothing is trusted
 * half-way. No I/O here. Thread rule: none (plain values).
 */
#ifndef FL_LOG_REMOTE_MANIFEST_H
#define FL_LOG_REMOTE_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "common_uuid.h"

#define FL_REMOTE_MANIFEST_BYTES_MAX (64u << 20) /* a larger file is refused */
#define FL_REMOTE_MANIFEST_SEGMENTS_MAX 1000000
#define FL_REMOTE_NAME_MAX 255                   /* database/table/partition name bytes */

typedef struct fl_remote_segment {
    char id[FL_UUID_TEXT_LEN + 1];
    int64_t start_offset;  /* base offset */
    int64_t end_offset;    /* exclusive */
    int64_t max_timestamp; /* largest commit timestamp, -1: none */
    int32_t size_bytes;
} fl_remote_segment_t;

/* Which bucket a manifest describes (borrowed strings). */
typedef struct fl_remote_bucket {
    const char *database, *table;
    const char *partition_name; /* NULL: not partitioned */
    int64_t table_id;
    int64_t partition_id;       /* -1: not partitioned */
    int32_t bucket;
} fl_remote_bucket_t;

typedef struct fl_remote_manifest {
    char *database, *table, *partition_name;
    int64_t table_id, partition_id;
    int32_t bucket;
    size_t count, cap;
    fl_remote_segment_t *segments; /* ascending, not overlapping */
} fl_remote_manifest_t;

/* An empty manifest of bucket b (strings copied). */
void fl_remote_manifest_init(fl_remote_manifest_t *m, const fl_remote_bucket_t *b);
void fl_remote_manifest_free(fl_remote_manifest_t *m);
void fl_remote_manifest_copy(fl_remote_manifest_t *dst, const fl_remote_manifest_t *src);
/* Whether m describes bucket b. */
bool fl_remote_manifest_is_for(const fl_remote_manifest_t *m, const fl_remote_bucket_t *b);

/* Appends a segment that starts at or after the last one's end. */
int fl_remote_manifest_append(fl_remote_manifest_t *m, const fl_remote_segment_t *s,
                              fl_error_t *err);
/* Drops the first n segments. */
void fl_remote_manifest_drop_front(fl_remote_manifest_t *m, size_t n);

/* First offset held remotely (INT64_MAX when empty), one past the last
 * (-1 when empty), and the bytes of all segments. */
int64_t fl_remote_manifest_start(const fl_remote_manifest_t *m);
int64_t fl_remote_manifest_end(const fl_remote_manifest_t *m);
int64_t fl_remote_manifest_bytes(const fl_remote_manifest_t *m);
/* The segments a read from offset needs (Fluss's relevantRemoteLogSegments):
 * from the one holding offset (or the first after it) to the last. Returns
 * the index of the first; count when none is relevant. */
size_t fl_remote_manifest_relevant(const fl_remote_manifest_t *m, int64_t offset);
/* The first segment whose max timestamp is >= ts, or count. */
size_t fl_remote_manifest_for_time(const fl_remote_manifest_t *m, int64_t ts);

void fl_remote_manifest_encode(const fl_remote_manifest_t *m, fl_buf_t *out);
/* Parses a manifest (m is initialised either way; free it). */
int fl_remote_manifest_decode(const uint8_t *data, size_t len, fl_remote_manifest_t *m,
                              fl_error_t *err);

/* The commit record: the manifest it names and the remote end offset. */
typedef struct fl_remote_handle {
    char *manifest_path;
    int64_t end_offset;
} fl_remote_handle_t;

void fl_remote_handle_encode(const char *manifest_path, int64_t end_offset, fl_buf_t *out);
int fl_remote_handle_decode(const uint8_t *data, size_t len, fl_remote_handle_t *h,
                            fl_error_t *err);
void fl_remote_handle_free(fl_remote_handle_t *h);

#endif
