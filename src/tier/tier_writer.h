/*
 * tier_writer.h — the tiering writer: the log record batches of one
 * bucket, in offset order, into Iceberg data files in Parquet with the
 * description their manifest entries need (Fluss's IcebergLakeWriter with
 * its RecordWriter for log tables; lakehouse.md §1 "Design", step 3: the
 * bucket leader writes and replies with file descriptors).
 *
 * Each data file's columns are the table's current schema's columns, then
 * the three required system columns Fluss's IcebergSchemaUtils appends:
 *
 * | column        | Iceberg type | field id (default) | value                            |
 * |---------------|--------------|--------------------|----------------------------------|
 * | user column k | tier_convert | k + 1              | the record's, by column id       |
 * | __bucket      | int          | N + 1              | the bucket                       |
 * | __offset      | long         | N + 2              | base offset + record index       |
 * | __timestamp   | timestamptz  | N + 3              | the batch's commit timestamp, µs |
 *
 * After ADD COLUMN the lake table's ids are not positional (the new
 * column gets last-column-id + 1, after the system columns): the caller
 * then passes the ids its Iceberg schema gives (field_ids). An ARRAY, MAP
 * or ROW column is a list, map or struct of several Parquet leaves
 * (tier_nested.h), its values shredded into levels; its ids are never
 * positional (Iceberg numbers a nested column's inside after the system
 * columns), so a schema with one needs field_ids.
 *
 * Batches: whole stored batches (magic 0, 1 or 2, record_batch.h) of the
 * table's log format; their CRC is checked again (the bytes come back from
 * local or remote segments, and a lake file outlives them). Each batch
 * must start at the offset after the previous one. A batch written under
 * an older schema id is read under that schema (schema_of) and its
 * columns are matched to the current schema by column id
 * (types_schema_map.h): columns added since read as NULL.
 *
 * Change types: with no change hook, records +A and +I are written and a
 * batch holding -U, +U or -D is refused (FLUSS_ERR__INVALID_ARG naming
 * the record): a log table's rows all go to the lake, a primary-key
 * table's changelog needs deletes, which are for later. With a hook, every
 * record is shown to it (offset, change type, the row in the current
 * schema's layout and the place it would take) and it decides whether the
 * row is written: the seam for position deletes.
 *
 * Files: <dir>/<prefix>-<bucket>-<seq>-<uuid>.parquet (without a prefix,
 * <bucket>-<seq>-<uuid>.parquet as lakehouse.md names them), seq counting
 * from 0 in this writer, a random UUID making names unique across rounds
 * and leaders. A file is closed after the batch that brings its size
 * estimate (bytes written + bytes buffered, before compression) to
 * target_file_bytes, and the next rows go to a new one; a file is opened
 * only for a row, so no file is empty. Each file is fsynced when closed;
 * fl_tier_writer_finish fsyncs the directory once for all of them. A file
 * is written in place under its final name: until the coordinator commits
 * a snapshot naming it, it is an orphan whatever its state.
 *
 * Paths: an ARROW batch without a change hook whose records are all +A
 * or +I goes column by column (tier_columns.h: its columns decoded once,
 * each converted and counted in one loop, one Parquet append of all its
 * rows); every other batch row by row. Both give the same values, the
 * same metrics and the same files, except that a row group may end after
 * the batch that fills it rather than at the row that does.
 *
 * Errors latch: after any failed call only close and abort work (a file
 * may hold part of a batch). The caller aborts the round.
 *
 * Thread rule: a writer has one user; it may run on any thread (a worker:
 * it does file I/O and CPU work). Memory: one row group of the open file
 * is buffered (row_group_bytes).
 */
#ifndef FL_TIER_WRITER_H
#define FL_TIER_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"
#include "lake_iceberg_manifest.h"
#include "record_batch.h"
#include "record_validate.h"
#include "types_row.h"
#include "types_row_format.h"
#include "types_schema.h"

/* Iceberg's write.target-file-size-bytes default. */
#define FL_TIER_TARGET_FILE_BYTES ((uint64_t)512 << 20)
/* Iceberg's default sort order of a Fluss lake table: __offset ascending. */
#define FL_TIER_SORT_ORDER_ID 1
#define FL_TIER_SYSTEM_COLUMNS 3

/* A schema of the table by id, or NULL when unknown; it must stay valid
 * while the writer lives. */
typedef const fl_schema_t *(*fl_tier_schema_fn)(void *ctx, int16_t schema_id);

typedef enum fl_tier_row_action {
    FL_TIER_ROW_WRITE = 0,
    FL_TIER_ROW_SKIP = 1,
} fl_tier_row_action_t;

/* One record as the hook sees it. row has the current schema's columns
 * (borrowed for the call). file and position say where the row goes if
 * written: the index of its file in the result and its row number there. */
typedef struct fl_tier_record {
    int64_t offset;
    fl_change_type_t change_type;
    const fl_row_t *row;
    size_t file;
    int64_t position;
} fl_tier_record_t;

/* Decides whether the record is written. A non-zero return (err set)
 * fails the batch. */
typedef int (*fl_tier_change_fn)(void *ctx, const fl_tier_record_t *rec,
                                 fl_tier_row_action_t *action, fl_error_t *err);

typedef struct fl_tier_writer_options {
    const char *dir;    /* absolute path of an existing directory */
    const char *prefix; /* file name prefix; NULL or "" for none */
    int32_t bucket;
    const fl_schema_t *schema; /* the current schema (borrowed): the files' columns */
    int16_t schema_id;
    fl_tier_schema_fn schema_of; /* older schemas; NULL: only schema_id */
    void *schema_ctx;
    /* fl_tier_field_id_count(schema) Iceberg field ids: each column's
     * (for an ARRAY, MAP or ROW column, every node of its type in
     * tier_nested.h's pre-order), then __bucket, __offset, __timestamp;
     * NULL: 1 .. N + 3 (a schema without nested columns). Copied. */
    const int32_t *field_ids;
    fl_log_format_t log_format;
    /* the format of nested values in rows given to fl_tier_writer_add_row
     * (the table's kv format) */
    fl_row_format_t kv_format;
    int32_t codec;              /* FL_PQ_CODEC_ZSTD, _SNAPPY, _GZIP or _UNCOMPRESSED */
    uint64_t target_file_bytes; /* 0: FL_TIER_TARGET_FILE_BYTES */
    size_t row_group_bytes;     /* 0: the Parquet writer's 64 MiB */
    fl_tier_change_fn on_change; /* NULL: +A and +I only */
    void *change_ctx;
    /* Every batch row by row, never column by column (tests and the
     * benchmark compare the two paths; the files are the same). */
    bool row_path;
} fl_tier_writer_options_t;

/* Zeroes o, with ZSTD, ARROW and no prefix. */
void fl_tier_writer_options_init(fl_tier_writer_options_t *o);

/* One data file written. file is its manifest description: content data,
 * "file://" + path, "PARQUET", counts, exact size, a stats entry per
 * column by ascending field id (system columns too), split offsets,
 * sort order FL_TIER_SORT_ORDER_ID; its partition is NULL: the caller
 * points it at its spec's values (for identity(__bucket), at the
 * result's bucket_value). */
typedef struct fl_tier_file {
    fl_ice_data_file_t file;
    const char *path;     /* the local path */
    int64_t first_offset; /* of the rows in it */
    int64_t last_offset;
} fl_tier_file_t;

typedef struct fl_tier_writer_result {
    int32_t bucket;
    fl_ice_value_t bucket_value; /* the bucket as an int partition value */
    const fl_tier_file_t *files;
    size_t n_files;
    int64_t record_count;  /* rows written */
    int64_t first_offset;  /* the first batch's base offset; -1 without batches */
    int64_t next_offset;   /* after the last batch: the bucket's new lake offset; -1 */
} fl_tier_writer_result_t;

typedef struct fl_tier_writer fl_tier_writer_t;

/* The field ids a schema's files need (options' field_ids), and where
 * column col's first one is among them. */
size_t fl_tier_field_id_count(const fl_schema_t *s);
size_t fl_tier_field_id_index(const fl_schema_t *s, size_t col);

/* Checks the options and the schema (every column of a type tier_convert
 * maps, no column named like a system column, field ids positive and
 * distinct); creates no file yet. INVALID_ARG naming the problem. */
int fl_tier_writer_open(const fl_tier_writer_options_t *o, fl_tier_writer_t **out,
                        fl_error_t *err);
/* Writes the records of one whole batch p[0, len). CORRUPT_RECORD for a
 * batch that does not parse, check or decode, SCHEMA_NOT_EXIST for an
 * unknown schema id, INVALID_ARG for one out of order or a change type
 * without a hook, CORRUPT_RECORD for a NULL in a NOT NULL column, IO. */
int fl_tier_writer_add_batch(fl_tier_writer_t *w, const uint8_t *p, size_t len, fl_error_t *err);
/* Writes one row that no batch holds (a primary-key bucket's image, when
 * the lake starts from its KV state: kv_tablet.h fl_kv_tablet_image):
 * row has the current schema's columns (the caller's; a BINARY(n) cell
 * may be padded in place), offset and ts_ms its __offset and __timestamp,
 * ct its change type for the hook. It moves no offset: the result's
 * first/next offsets are the batches' alone. Errors as add_batch. */
int fl_tier_writer_add_row(fl_tier_writer_t *w, int64_t offset, int64_t ts_ms,
                           fl_change_type_t ct, fl_row_t *row, fl_error_t *err);
/* Closes the open file, fsyncs the directory, and describes what was
 * written; *out and everything it points to belong to the writer until
 * close. No more batches after it. */
int fl_tier_writer_finish(fl_tier_writer_t *w, const fl_tier_writer_result_t **out, fl_error_t *err);
/* Frees the writer; its files stay (a finished round's; without finish,
 * the open file stays unfinished: abort a round that did not finish). */
void fl_tier_writer_close(fl_tier_writer_t *w);
/* Deletes every file the writer created, finished or not, and frees it. */
void fl_tier_writer_abort(fl_tier_writer_t *w);

#endif
