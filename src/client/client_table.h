/*
 * client_table.h — implementer header of libfluss's log-table files
 * (client_table.c, client_row.c, client_writer.c, client_batch.c,
 * client_value_text.c, client_arrow_c.c, client_scanner.c): the table
 * handle, rows and the decoded record batch (batches are built by
 * record_builder.h). Thread rule: see fluss.h (a table is
 * immutable after it is opened; everything else has one user at a time).
 */
#ifndef FL_CLIENT_TABLE_H
#define FL_CLIENT_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "arrow_decode.h"
#include "arrow_ipc.h"
#include "client_conn.h"
#include "common_buf.h"
#include "common_error.h"
#include "fluss.h"
#include "types_row.h"
#include "types_key.h"
#include "types_row_format.h"
#include "types_table.h"

#define FL_HOST_MAX 256

typedef struct fl_node {
    int32_t id;
    char host[FL_HOST_MAX];
    int port;
} fl_node_t;

struct fluss_table {
    char *database;
    char *name;
    int64_t table_id;
    int32_t schema_id;
    int32_t bucket_count;
    fl_table_desc_t desc;
    char **type_text;          /* per column */
    int32_t *bucket_key;       /* column indexes of the bucket key */
    size_t bucket_key_count;
    int32_t *leader_node;      /* per bucket: index into nodes, -1 none (partitioned: all -1) */
    fl_node_t *nodes;          /* tablet servers */
    size_t node_count;
    fl_node_t coordinator;     /* for partition metadata and DDL; port 0 when unknown */
    int32_t *part_cols;        /* column indexes of the partition keys, in key order */
    size_t part_count;         /* 0: not partitioned */
    int timeout_ms;
    fl_client_auth_t auth;     /* how its connections authenticate (the client's) */
    bool arrow_format;         /* table.log.format is ARROW */
    fl_arrow_codec_t codec;    /* table.log.arrow.compression.type */
    int zstd_level;
    const fl_datatype_t **types; /* per column, borrowed from desc */
    int32_t *pk;               /* column indexes of the primary key (pk_count 0: log table) */
    size_t pk_count;
    int32_t *kpk;              /* the physical primary key: pk minus partition keys (the key
                                * a KvRecord, LOOKUP and the storage use) */
    size_t kpk_count;
    fl_row_format_t kv_format; /* table.kv.format (PK tables) */
    /* by table.datalake.format (types_key.h): how the bucket key is
     * encoded and hashed, and how the physical primary key is encoded */
    fl_key_codec_t bucket_codec;
    fl_key_codec_t pk_codec;
    bool default_bucket_key;   /* the bucket key is the physical primary key, in order */
};

/* client_schema.c: parses a column list ("name TYPE [NOT NULL] [COMMENT
 * 'text'], ...") into s's columns. */
int fl_client_parse_columns(const char *text, fl_schema_t *s, fl_error_t *err);
/* Converts an internal error into the public one; returns its code. */
int fl_client_error_out(fluss_error_t *out, const fl_error_t *in);
/* client_admin.c: the client's coordinator connection, borrowed. */
fl_client_conn_t *fl_client_coordinator(fluss_client_t *c, int *timeout_ms);

/* A table built from a descriptor without a server (unit tests, and
 * fluss_table_open after GET_TABLE_INFO): takes *desc over (zeroes it).
 * No nodes; every bucket leaderless. */
fluss_table_t *fl_table_new_local(const char *db, const char *name, int64_t table_id,
                                  int32_t schema_id, fl_table_desc_t *desc, fl_error_t *err);
static inline const fl_datatype_t *fl_table_type(const fluss_table_t *t, size_t col) {
    return t->desc.schema.columns[col].type;
}
/* Opens a connection to the leader of bucket (its node index in *node). */
int fl_table_connect_leader(const fluss_table_t *t, int32_t bucket, fl_client_conn_t *conn,
                            int *node, fl_error_t *err);
int fl_table_connect_node(const fluss_table_t *t, int node, fl_client_conn_t *conn,
                          fl_error_t *err);
/* LIST_OFFSETS of buckets[0..n) (all when NULL) of partition_id (-1: the
 * table's own buckets), leaders given per bucket; one request per leader. */
int fl_table_list_offsets(const fluss_table_t *t, int64_t partition_id, const int32_t *leader,
                          const int32_t *buckets, size_t n, fluss_offset_spec_t spec,
                          int64_t timestamp_ms, int64_t *offsets, fl_error_t *err);
/* Opens a connection to the cluster's coordinator. */
int fl_table_connect_coordinator(const fluss_table_t *t, fl_client_conn_t *conn, fl_error_t *err);
/* The table's tablet server index of node id, -1 when unknown. */
int32_t fl_table_node_index(const fluss_table_t *t, int32_t node_id);

/* ---- rows (client_row.c) ---- */

/* A libfluss row: the typed cells of types_row.h for the table's
 * columns. */
struct fluss_row {
    const fluss_table_t *t;
    fl_row_t row;
};

/* Where a text value goes (fluss_row_set_text, and the elements and
 * fields of nested values): cell col of row, of type type; name and
 * type_text for messages; nested values encoded with rows in
 * nested_format (the table's kv format). */
typedef struct fl_cell_target {
    fl_row_t *row;
    size_t col;
    const fl_datatype_t *type;
    const char *name;
    const char *type_text;
    fl_row_format_t nested_format;
} fl_cell_target_t;

/* Parses text for the target's type (fluss_row_set_text's forms; NULL
 * text sets NULL). */
int fl_cell_set_text(const fl_cell_target_t *tg, const char *text, fl_error_t *err);
/* client_nested_text.c: an ARRAY/MAP/ROW value from its text (the JSON
 * form scans print: [1, 2], {"k": 1}, {"f": 1}) encoded into the target
 * cell (types_row_nested.h). */
int fl_nested_set_text(const fl_cell_target_t *tg, const char *text, fl_error_t *err);
/* The text of an encoded nested value of type t, as
 * fl_client_value_text prints Arrow values (JSON); FLUSS_ERR_CORRUPT_RECORD_EXCEPTION
 * (out partly written) when the bytes do not decode. */
int fl_nested_text(const fl_datatype_t *t, fl_row_format_t fmt, const uint8_t *p, size_t len,
                   fl_buf_t *out, fl_error_t *err);

/* The bucket of a row of a table with a bucket key (Java client's
 * choice): the compacted key encoding (types_row_compacted.h) of the
 * bucket-key columns, hashed; scratch holds the encoded key afterwards. */
int fl_row_bucket(const fluss_row_t *row, fl_buf_t *scratch, int32_t *bucket, fl_error_t *err);

/* Parses DECIMAL text into an unscaled value of scale s with at most p
 * digits. */
int fl_decimal_parse(const char *text, int32_t p, int32_t s, __int128 *out, fl_error_t *err);
/* Days since 1970-01-01 of a proleptic Gregorian date, and back. */
int64_t fl_days_from_civil(int64_t y, unsigned m, unsigned d);
void fl_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);

/* ---- the writer engine (client_writer.c), shared by the upsert writer ---- */

/* Opens a writer: a log table's append writer, or with kv a PK table's
 * PUT_KV writer sending targets[0..n_targets) as its target columns. */
int fl_writer_open(fluss_table_t *t, const fluss_append_writer_options_t *opts, bool kv,
                   const int32_t *targets, size_t n_targets, fluss_append_writer_t **out,
                   fl_error_t *err);
/* Whether a failed request may succeed when sent again (a transport
 * failure or timeout, a leader moving, back-pressure). */
bool fl_client_retriable(int code);
/* The writer's partition index of a row (0 for a table without
 * partitions): its partition name resolved (or created, per the
 * writer's dynamic_partitions) through the writer's partition cache. */
int fl_writer_route(fluss_append_writer_t *w, const fl_row_t *row, size_t *part,
                    fl_error_t *err);
/* kv mode: adds one KvRecord (value NULL/0 = delete) to the batch of
 * (partition index part, bucket). */
int fl_writer_put_kv(fluss_append_writer_t *w, size_t part, int32_t bucket, const uint8_t *key,
                     size_t key_len, const uint8_t *value, size_t value_len, fl_error_t *err);

/* The rows of a LIMIT_SCAN's DefaultValueRecordBatch p[0, len) (empty
 * bytes: no rows), each value decoded as a row of t, values of other
 * schema ids through schemas (NULL: refused) (client_lookup.c; fuzzed by
 * fuzz_client_value_rows). */
struct fl_schemas;
int fl_lookup_value_batch_rows(const fluss_table_t *t, struct fl_schemas *schemas,
                               const uint8_t *p, size_t len, fluss_row_t ***rows, size_t *count,
                               fl_error_t *err);

/* Text of a row's cell (fluss_row_value_text; client_value_text.c). */
void fl_client_cell_text(const fl_datatype_t *t, fl_row_format_t fmt, const fl_row_t *row,
                         size_t col, int flags, fl_buf_t *out);

/* A batch of rows [0, rows) of decoded columns, one per schema position
 * of t (cols and types: what is presented is moved out, the caller frees
 * the rest), presenting present[0..present_count) and only the rows that
 * match filter (NULL or empty: all); NULL when none does. Offsets count
 * from 0 (per presented row when the filter thinned it). The lake
 * scanner's batches (client_lake_read.c). */
struct fl_cfilter;
fluss_record_batch_t *fl_record_batch_of_columns(const fluss_table_t *t, fl_arrow_array_t *cols,
                                                fl_datatype_t **types, int64_t rows,
                                                const int32_t *present, size_t present_count,
                                                const struct fl_cfilter *filter);

/* ---- the lake scanner (client_lake_read.c) ---- */

/* A lake scanner of t over one data file image file[0..len) (borrowed:
 * it outlives the scanner) instead of a snapshot's files, with t's
 * columns at Iceberg field ids 1..n and __bucket, __offset, __timestamp
 * at n+1..n+3 (the ids a lake table made for t gets): what the fuzz
 * target drives. */
int fl_lake_scanner_of_image(fluss_table_t *t, const uint8_t *file, size_t len,
                             fluss_lake_scanner_t **out, fl_error_t *err);

/* ---- decoded record batches (client_batch.c) ---- */

struct fluss_record_batch {
    int32_t bucket;
    int64_t partition_id; /* -1: none */
    int64_t base_offset;  /* of the first presented row */
    int64_t commit_timestamp;
    size_t skip;          /* rows of the Arrow batch before the first presented one */
    size_t rows;          /* presented rows */
    size_t column_count;
    fl_arrow_array_t *cols; /* arrow_decode.h */
    char **names;
    fl_datatype_t **types; /* owned clones the columns point into */
    uint8_t *change_types; /* per Arrow row, NULL when append-only */
    int64_t *offsets;      /* per presented row when a filter thinned the batch, else NULL
                            * (then row r is at base_offset + r) */
    int64_t *timestamps;   /* per presented row (a lake batch's __timestamp), else NULL
                            * (then every row has commit_timestamp) */
};

/* Decodes one fetched batch. msg_cols[0..msg_count) are the schema
 * positions of the columns in the Arrow message (all columns, or the
 * pushed-down projection sorted ascending); present[0..present_count)
 * the schema positions to present, in order (each in msg_cols). Rows with
 * offsets below min_offset are skipped. *out is NULL for a batch with no
 * row at or above min_offset. */
int fl_record_batch_decode(const fluss_table_t *t, const uint8_t *batch, size_t len,
                           int32_t bucket, const int32_t *msg_cols, size_t msg_count,
                           const int32_t *present, size_t present_count, int64_t min_offset,
                           bool check_crc, fluss_record_batch_t **out, fl_error_t *err);
/* A batch written under another schema of the table than the handle's:
 * that schema and its map into the handle's (client_schemas.h); whole:
 * the Arrow message holds every column of that schema (no projection was
 * pushed down), else those of msg_cols it has, in its column order. */
struct fl_schema_map;
typedef struct fl_batch_schema {
    const fl_schema_t *schema;
    const struct fl_schema_map *map;
    bool whole;
} fl_batch_schema_t;

/* The same with a row filter (client_filter.h; NULL or empty: none):
 * only matching rows are presented, their columns taken into new arrays
 * (client_take.c); *out is NULL when no row matches. Every filtered
 * column must be among msg_cols. With evo, the batch is of another
 * schema: its columns are read as that schema types them and placed by
 * column id, the handle's columns it lacks are NULL. */
struct fl_cfilter;
int fl_record_batch_decode_filtered(const fluss_table_t *t, const uint8_t *batch, size_t len,
                                    int32_t bucket, const int32_t *msg_cols, size_t msg_count,
                                    const int32_t *present, size_t present_count,
                                    int64_t min_offset, bool check_crc,
                                    const struct fl_cfilter *filter,
                                    const fl_batch_schema_t *evo, fluss_record_batch_t **out,
                                    fl_error_t *err);
/* client_take.c: a column of length NULLs of type t (kind: t's root, or
 * FL_ARROW_ARRAY_ENTRIES for a map's entries), laid out as a decoded one
 * (what a batch of an older schema reads for a column added later). */
void fl_arrow_null_array(const fl_datatype_t *t, int kind, int64_t length, fl_arrow_array_t *out);
/* client_take.c: rows idx[0..n) of src (checked by arrow_decode) copied
 * into dst, which borrows src's type. */
void fl_arrow_take(const fl_arrow_array_t *src, const int64_t *idx, size_t n,
                   fl_arrow_array_t *dst);
/* Text of element i of a decoded column (fluss.h
 * fluss_record_batch_value_text). */
void fl_client_value_text(const fl_arrow_array_t *a, int64_t i, int flags, fl_buf_t *out);

#endif
