/*
 * lake_iceberg_manifest.h — Iceberg v2 manifests and manifest lists (the
 * Iceberg specification, "Manifests" and "Manifest Lists"): the files a
 * snapshot of a lake table is made of, written through our Avro container
 * module (lake_avro_file.h) and read back into the same C description for
 * merging and expiry (issue 21).
 *
 *   manifest      := Avro OCF of manifest_entry; header "schema" (the table
 *                    schema JSON), "schema-id", "partition-spec" (JSON array
 *                    of partition fields), "partition-spec-id",
 *                    "format-version" "2", "content" "data" | "deletes"
 *   manifest_entry:= 0 status, 1 snapshot_id?, 3 sequence_number?,
 *                    4 file_sequence_number?, 2 data_file r2
 *   data_file r2  := 134 content, 100 file_path, 101 file_format,
 *                    102 partition r102 {1000... one per spec field},
 *                    103 record_count, 104 file_size_in_bytes,
 *                    108 column_sizes <117,118>, 109 value_counts <119,120>,
 *                    110 null_value_counts <121,122>,
 *                    137 nan_value_counts <138,139>,
 *                    125 lower_bounds <126,127>, 128 upper_bounds <129,130>,
 *                    132 split_offsets [133], 135 equality_ids [136],
 *                    140 sort_order_id
 *                    (maps of int keys: arrays of records k<K>_v<V>{key,
 *                    value} with "logicalType":"map"; every field but the
 *                    first six optional)
 *   manifest list := Avro OCF of manifest_file; header "snapshot-id",
 *                    "parent-snapshot-id" ("null" for none, as Java writes
 *                    it), "sequence-number", "format-version" "2"
 *   manifest_file := 500 manifest_path, 501 manifest_length,
 *                    502 partition_spec_id, 517 content, 515 sequence_number,
 *                    516 min_sequence_number, 503 added_snapshot_id,
 *                    504/505/506 added/existing/deleted_files_count (int),
 *                    512/513/514 added/existing/deleted_rows_count (long),
 *                    507 partitions? [508 r508 {509 contains_null,
 *                    518 contains_nan?, 510 lower_bound?, 511 upper_bound?}],
 *                    519 key_metadata?
 *
 * Partition fields: identity or bucket[N] transforms whose values are int,
 * long, string or date (a bucket's value is an int); enough for
 * identity(__bucket) and Fluss's partition keys. Bounds (column stats and
 * partition summaries) are Iceberg's single-value bytes (Appendix D): int
 * and date 4 bytes little-endian, long 8, string its UTF-8 bytes.
 *
 * Readers find every field by its field id in the file's schema, so they
 * take Iceberg files of other writers too, as long as the Avro codec is
 * "null" (lake_avro_file.h). Everything read is copied into the result's
 * arena; the file's bytes are not kept.
 *
 * Thread rule: none; every object belongs to its caller.
 */
#ifndef FL_LAKE_ICEBERG_MANIFEST_H
#define FL_LAKE_ICEBERG_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "lake_avro_value.h"

/* An absent (null) snapshot id, sequence number or count: for an ADDED
 * entry's ids and sequence numbers, "inherit from the manifest list". */
#define FL_ICE_NONE INT64_C(-1)
/* An absent sort_order_id. */
#define FL_ICE_NO_ORDER (-1)
#define FL_ICE_PARTITION_FIELDS_MAX 64
#define FL_ICE_COLUMNS_MAX 4096 /* stats columns of a data file */
#define FL_ICE_LIST_MAX 65536 /* split offsets, equality ids of a data file */

typedef enum fl_ice_type {
    FL_ICE_INT,
    FL_ICE_LONG,
    FL_ICE_STRING,
    FL_ICE_DATE, /* days from 1970-01-01, an int */
} fl_ice_type_t;

typedef enum fl_ice_transform {
    FL_ICE_IDENTITY,
    FL_ICE_BUCKET, /* bucket[buckets]: an int value */
} fl_ice_transform_t;

typedef struct fl_ice_partition_field {
    const char *name;
    int32_t source_id; /* the table column's field id */
    int32_t field_id; /* 1000 and up */
    fl_ice_transform_t transform;
    int32_t buckets; /* bucket[N] only */
    fl_ice_type_t type; /* the partition value's type (FL_ICE_INT for a bucket) */
} fl_ice_partition_field_t;

typedef struct fl_ice_partition_spec {
    int32_t spec_id;
    const fl_ice_partition_field_t *fields;
    size_t n_fields; /* at most FL_ICE_PARTITION_FIELDS_MAX */
} fl_ice_partition_spec_t;

/* A partition value: i for int, long and date, s for a string. */
typedef struct fl_ice_value {
    bool null;
    int64_t i;
    fl_avro_bytes_t s;
} fl_ice_value_t;

/* One column's stats by field id; FL_ICE_NONE or a NULL bound pointer for
 * an absent one (an empty bound has a non-NULL pointer and length 0). */
typedef struct fl_ice_column_stats {
    int32_t field_id;
    int64_t column_size;
    int64_t value_count;
    int64_t null_count;
    int64_t nan_count;
    fl_avro_bytes_t lower, upper;
} fl_ice_column_stats_t;

typedef enum fl_ice_file_content {
    FL_ICE_DATA = 0,
    FL_ICE_POSITION_DELETES = 1,
    FL_ICE_EQUALITY_DELETES = 2,
} fl_ice_file_content_t;

typedef struct fl_ice_data_file {
    fl_ice_file_content_t content;
    const char *file_path; /* file:///abs/... */
    const char *file_format; /* "PARQUET" */
    const fl_ice_value_t *partition; /* one per field of the manifest's spec */
    int64_t record_count;
    int64_t file_size_bytes; /* exact: readers find the footer with it */
    const fl_ice_column_stats_t *columns; /* ascending field ids */
    size_t n_columns;
    const int64_t *split_offsets; /* ascending; none: a null list */
    size_t n_split_offsets;
    const int32_t *equality_ids; /* equality deletes only (required there) */
    size_t n_equality_ids;
    int32_t sort_order_id; /* or FL_ICE_NO_ORDER */
} fl_ice_data_file_t;

typedef enum fl_ice_status {
    FL_ICE_EXISTING = 0,
    FL_ICE_ADDED = 1,
    FL_ICE_DELETED = 2,
} fl_ice_status_t;

/* ADDED entries may leave the ids and sequence numbers FL_ICE_NONE (they
 * inherit them from the manifest list); EXISTING and DELETED entries carry
 * both sequence numbers (the specification requires them). */
typedef struct fl_ice_manifest_entry {
    fl_ice_status_t status;
    int64_t snapshot_id;
    int64_t sequence_number;
    int64_t file_sequence_number;
    fl_ice_data_file_t file;
} fl_ice_manifest_entry_t;

typedef enum fl_ice_manifest_content {
    FL_ICE_MANIFEST_DATA = 0,
    FL_ICE_MANIFEST_DELETES = 1, /* position and equality deletes */
} fl_ice_manifest_content_t;

typedef struct fl_ice_manifest {
    fl_ice_manifest_content_t content;
    const char *schema_json; /* the table schema, verbatim into "schema" */
    int32_t schema_id;
    fl_ice_partition_spec_t spec;
    /* The snapshot adding this manifest: its manifest-list entry's
     * added_snapshot_id (not stored in the manifest; FL_ICE_NONE when read). */
    int64_t snapshot_id;
    const fl_ice_manifest_entry_t *entries;
    size_t n_entries;
} fl_ice_manifest_t;

/* One partition field over a manifest's entries. */
typedef struct fl_ice_field_summary {
    bool contains_null;
    int8_t contains_nan; /* -1: null (unknown), 0, 1 */
    fl_avro_bytes_t lower, upper; /* NULL pointer: null (no non-null value) */
} fl_ice_field_summary_t;

/* A manifest list's entry. sequence_number and min_sequence_number may be
 * FL_ICE_NONE for a manifest new in the list's snapshot: the list writer
 * puts the list's sequence number there (as Java does). */
typedef struct fl_ice_manifest_file {
    const char *manifest_path;
    int64_t manifest_length;
    int32_t partition_spec_id;
    fl_ice_manifest_content_t content;
    int64_t sequence_number;
    int64_t min_sequence_number;
    int64_t added_snapshot_id;
    int32_t added_files_count, existing_files_count, deleted_files_count;
    int64_t added_rows_count, existing_rows_count, deleted_rows_count;
    const fl_ice_field_summary_t *partitions; /* NULL: a null list */
    size_t n_partitions;
    fl_avro_bytes_t key_metadata; /* NULL pointer: null */
} fl_ice_manifest_file_t;

typedef struct fl_ice_manifest_list {
    int64_t snapshot_id;
    int64_t parent_snapshot_id; /* or FL_ICE_NONE */
    int64_t sequence_number;
    const fl_ice_manifest_file_t *manifests;
    size_t n_manifests;
} fl_ice_manifest_list_t;

/* ---- writing ---- */

/* What a written manifest contributes to a manifest list: file holds the
 * path, exact length, spec id, content, added_snapshot_id (the manifest's
 * snapshot_id), counts of files and rows by status, the partition
 * summaries, and min_sequence_number (the least explicit sequence number
 * of a live entry, FL_ICE_NONE if every live entry inherits), with
 * sequence_number FL_ICE_NONE. Its memory is the summary's. */
typedef struct fl_ice_manifest_summary {
    fl_ice_manifest_file_t file;
    fl_avro_arena_t arena;
} fl_ice_manifest_summary_t;

void fl_ice_manifest_summary_init(fl_ice_manifest_summary_t *s);
void fl_ice_manifest_summary_reset(fl_ice_manifest_summary_t *s);

/* Writes the manifest to path (created or truncated, fsynced and closed;
 * the directory entry is the caller's to make durable), then fills
 * *summary. INVALID_ARG for a manifest that breaks the rules above (the
 * message names the entry and field), IO for the file. */
int fl_ice_manifest_write(const char *path, const fl_ice_manifest_t *m,
                          fl_ice_manifest_summary_t *summary, fl_error_t *err);
/* The same into memory: the file's bytes are appended to out, and the
 * summary's manifest_path is "". */
int fl_ice_manifest_encode(const fl_ice_manifest_t *m, fl_buf_t *out,
                           fl_ice_manifest_summary_t *summary, fl_error_t *err);

/* Writes the manifest list to path (fsynced and closed) and its length in
 * *length (may be NULL). INVALID_ARG for bad entries. */
int fl_ice_manifest_list_write(const char *path, const fl_ice_manifest_list_t *l,
                               uint64_t *length, fl_error_t *err);
int fl_ice_manifest_list_encode(const fl_ice_manifest_list_t *l, fl_buf_t *out, fl_error_t *err);

/* The 4 or 8 bytes of an int/date or long in Appendix D's encoding. */
size_t fl_ice_bound_int(int32_t v, uint8_t out[4]);
size_t fl_ice_bound_long(int64_t v, uint8_t out[8]);
/* float and double: their IEEE 754 bits, little-endian. */
size_t fl_ice_bound_float(float v, uint8_t out[4]);
size_t fl_ice_bound_double(double v, uint8_t out[8]);
/* A decimal: its unscaled value in two's complement, big-endian, in the
 * fewest bytes that keep the sign (Java's BigInteger#toByteArray, which
 * Iceberg's Conversions use): 0 -> 00, 127 -> 7F, 128 -> 00 80,
 * -1 -> FF, -129 -> FF 7F. */
size_t fl_ice_bound_decimal(__int128 unscaled, uint8_t out[16]);

/* ---- reading ---- */

/* A manifest read back; everything lives in the arena. */
typedef struct fl_ice_manifest_read {
    fl_ice_manifest_t manifest;
    fl_avro_arena_t arena;
} fl_ice_manifest_read_t;

typedef struct fl_ice_manifest_list_read {
    fl_ice_manifest_list_t list;
    fl_avro_arena_t arena;
} fl_ice_manifest_list_read_t;

void fl_ice_manifest_read_init(fl_ice_manifest_read_t *r);
void fl_ice_manifest_read_reset(fl_ice_manifest_read_t *r);
void fl_ice_manifest_list_read_init(fl_ice_manifest_list_read_t *r);
void fl_ice_manifest_list_read_reset(fl_ice_manifest_list_read_t *r);

/* Reads a manifest (a file, or len bytes at p) into *r, which must have
 * been initialized (it is reset first, and again on failure).
 * CORRUPT for malformed bytes, a missing or mistyped field or header key,
 * or values against the rules above; INVALID_ARG for what we do not read
 * (a codec other than null, a transform other than identity or bucket,
 * format-version other than 2); NO_MEMORY. */
int fl_ice_manifest_read(const char *path, fl_ice_manifest_read_t *r, fl_error_t *err);
int fl_ice_manifest_decode(const void *p, size_t len, fl_ice_manifest_read_t *r, fl_error_t *err);
int fl_ice_manifest_list_read(const char *path, fl_ice_manifest_list_read_t *r, fl_error_t *err);
int fl_ice_manifest_list_decode(const void *p, size_t len, fl_ice_manifest_list_read_t *r,
                                fl_error_t *err);

#endif
