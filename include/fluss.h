/*
 * fluss.h — libfluss, the C client of fluss-c (and of any Fluss server).
 *
 * Conventions:
 * - Handles are opaque. Objects returned through an out-pointer are owned
 *   by the caller and freed with the matching _free/_destroy function.
 * - Functions return 0 on success or an error code (fluss_errors.h:
 *   Fluss wire codes >= -1, local codes FLUSS_ERR__*) and fill *err when
 *   err is not NULL.
 * - Calls block until the server answers or the client's timeout passes.
 *   A client handle is not thread-safe: use one per thread.
 */
#ifndef FLUSS_H
#define FLUSS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fluss_errors.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fluss_error {
    int code;
    char message[2048];
} fluss_error_t;

typedef struct fluss_client fluss_client_t;

/* Connects to a bootstrap server ("host:port"), learns the cluster from
 * GET_METADATA and connects to the coordinator. timeout_ms bounds every
 * call (0 = 30 s). */
int fluss_client_new(const char *bootstrap, int timeout_ms, fluss_client_t **out,
                     fluss_error_t *err);

/* Settings of fluss_client_open (zero-initialise, then set what you need),
 * as the Java client's keys name them. */
typedef struct fluss_client_opts {
    int timeout_ms;                /* every call (0 = 30 s) */
    /* client.security.protocol: NULL or "PLAINTEXT", or "SASL"; ours
     * "SSL" (TLS) and "SASL_SSL" (TLS, then SASL) */
    const char *security_protocol;
    const char *sasl_mechanism;    /* client.security.sasl.mechanism: NULL = PLAIN */
    const char *sasl_username;     /* client.security.sasl.username */
    const char *sasl_password;     /* client.security.sasl.password */
    /* TLS (ours), PEM files read at every connection: the CAs the server's
     * certificate must chain to (required for SSL / SASL_SSL; its name or
     * IP address must match the host connected to), and optionally this
     * client's certificate chain and key */
    const char *ssl_ca_file;
    const char *ssl_cert_file;
    const char *ssl_key_file;
} fluss_client_opts_t;

/* As fluss_client_new, with opts (NULL: the defaults); every connection
 * the client and its tables open authenticates as opts says. */
int fluss_client_open(const char *bootstrap, const fluss_client_opts_t *opts,
                      fluss_client_t **out, fluss_error_t *err);
void fluss_client_destroy(fluss_client_t *client);

/* A NULL-terminated array of strings; free with fluss_strings_free. */
void fluss_strings_free(char **strings);

/* ---- ACLs (authorizer.enabled; Fluss 0.9.1's model) ---- */

/* Codes as Fluss numbers them. */
enum {
    FLUSS_ACL_RESOURCE_ANY = 1, FLUSS_ACL_RESOURCE_CLUSTER = 2,
    FLUSS_ACL_RESOURCE_DATABASE = 3, FLUSS_ACL_RESOURCE_TABLE = 4
};
enum {
    FLUSS_ACL_OP_ANY = 1, FLUSS_ACL_OP_ALL = 2, FLUSS_ACL_OP_READ = 3, FLUSS_ACL_OP_WRITE = 4,
    FLUSS_ACL_OP_CREATE = 5, FLUSS_ACL_OP_DROP = 6, FLUSS_ACL_OP_ALTER = 7,
    FLUSS_ACL_OP_DESCRIBE = 8
};
enum { FLUSS_ACL_PERMISSION_ANY = 1, FLUSS_ACL_PERMISSION_ALLOW = 2 };

/* One ACL (resource, principal, host, operation, permission), or a filter
 * of them: a NULL name, principal or host (and the ANY codes) match
 * anything. Resources: the cluster ("fluss-cluster"), a database ("db"), a
 * table ("db.t"), or "*" for every one of its type. Principals: type
 * "User" and a name, or "*"/"*" for everyone. */
typedef struct fluss_acl {
    int resource_type;
    char *resource_name;
    char *principal_type;
    char *principal_name;
    char *host;
    int operation;
    int permission;
} fluss_acl_t;

/* Adds acls (CREATE_ACLS); needs ALTER on each resource (a table's: on its
 * database). */
int fluss_acl_create(fluss_client_t *c, const fluss_acl_t *acls, size_t n, fluss_error_t *err);
/* The ACLs filter matches that the caller may see (LIST_ACLS). */
int fluss_acl_list(fluss_client_t *c, const fluss_acl_t *filter, fluss_acl_t **out, size_t *n,
                   fluss_error_t *err);
/* Removes the ACLs filter matches (DROP_ACLS); *out what went. */
int fluss_acl_drop(fluss_client_t *c, const fluss_acl_t *filter, fluss_acl_t **out, size_t *n,
                   fluss_error_t *err);
void fluss_acls_free(fluss_acl_t *acls, size_t n);
/* "READ" ... and back; 0 when unknown. */
const char *fluss_acl_operation_name(int op);
int fluss_acl_operation_parse(const char *name);
const char *fluss_acl_resource_type_name(int type);

/* ---- SCRAM users (ours; SASL mechanisms SCRAM-SHA-256/512) ---- */

typedef struct fluss_scram_user {
    char *user;
    char *mechanism;   /* "SCRAM-SHA-256" or "SCRAM-SHA-512" */
    int iterations;
} fluss_scram_user_t;

/* Sets user's credential for mechanism from password (the server salts
 * and hashes it; iterations 0 = 4096, at least 4096). Needs ALTER on the
 * cluster when authorization is on. */
int fluss_scram_user_set(fluss_client_t *c, const char *user, const char *mechanism,
                         const char *password, int iterations, fluss_error_t *err);
int fluss_scram_user_delete(fluss_client_t *c, const char *user, const char *mechanism,
                            fluss_error_t *err);
int fluss_scram_user_list(fluss_client_t *c, fluss_scram_user_t **out, size_t *n,
                          fluss_error_t *err);
void fluss_scram_users_free(fluss_scram_user_t *users, size_t n);

/* ---- databases ---- */

typedef struct fluss_database_info {
    char *name;
    char *comment;                 /* NULL when none */
    char **custom_properties;      /* NULL-terminated "key=value" strings */
    int64_t created_time_ms;
    int64_t modified_time_ms;
} fluss_database_info_t;

/* comment may be NULL; custom_properties is NULL or a NULL-terminated
 * array of "key=value" strings. */
int fluss_database_create(fluss_client_t *c, const char *name, const char *comment,
                          const char *const *custom_properties, bool ignore_if_exists,
                          fluss_error_t *err);
int fluss_database_drop(fluss_client_t *c, const char *name, bool ignore_if_not_exists,
                        bool cascade, fluss_error_t *err);
int fluss_database_list(fluss_client_t *c, char ***names, fluss_error_t *err);
int fluss_database_exists(fluss_client_t *c, const char *name, bool *exists, fluss_error_t *err);
int fluss_database_info(fluss_client_t *c, const char *name, fluss_database_info_t **out,
                        fluss_error_t *err);
void fluss_database_info_free(fluss_database_info_t *info);

/* ---- tables ---- */

typedef struct fluss_table_spec {
    /* Flink-SQL-style column list: "id INT NOT NULL, name STRING, ts TIMESTAMP(3)" */
    const char *schema;
    const char *primary_key;    /* "id" or "a,b"; NULL for a log table */
    const char *partition_keys; /* comma list or NULL */
    const char *bucket_keys;    /* comma list or NULL (server default) */
    int32_t bucket_count;       /* 0 = server default */
    const char *comment;        /* NULL when none */
    const char *const *properties;        /* NULL-terminated "key=value" or NULL */
    const char *const *custom_properties; /* NULL-terminated "key=value" or NULL */
} fluss_table_spec_t;

typedef struct fluss_table_info {
    char *database;
    char *name;
    int64_t table_id;
    int32_t schema_id;
    int32_t bucket_count;
    char *schema;          /* column list in the spec's syntax */
    char **primary_key;    /* NULL-terminated, empty for log tables */
    char **bucket_keys;    /* NULL-terminated */
    char **partition_keys; /* NULL-terminated */
    char *comment;         /* NULL when none */
    char **properties;     /* NULL-terminated "key=value" */
    char **custom_properties;
    char *descriptor_json; /* the table descriptor as the server stores it */
    int64_t created_time_ms;
    int64_t modified_time_ms;
} fluss_table_info_t;

int fluss_table_create(fluss_client_t *c, const char *database, const char *table,
                       const fluss_table_spec_t *spec, bool ignore_if_exists, fluss_error_t *err);
int fluss_table_drop(fluss_client_t *c, const char *database, const char *table,
                     bool ignore_if_not_exists, fluss_error_t *err);
int fluss_table_list(fluss_client_t *c, const char *database, char ***names, fluss_error_t *err);
int fluss_table_exists(fluss_client_t *c, const char *database, const char *table, bool *exists,
                       fluss_error_t *err);
int fluss_table_info(fluss_client_t *c, const char *database, const char *table,
                     fluss_table_info_t **out, fluss_error_t *err);
void fluss_table_info_free(fluss_table_info_t *info);

/* One change of fluss_table_alter. */
typedef enum fluss_table_change_kind {
    FLUSS_TABLE_SET_OPTION = 0,   /* key = value */
    FLUSS_TABLE_RESET_OPTION = 1, /* key back to its default */
    FLUSS_TABLE_ADD_COLUMN = 2    /* column = "name TYPE [COMMENT 'text']", added last */
} fluss_table_change_kind_t;

typedef struct fluss_table_change {
    fluss_table_change_kind_t kind;
    const char *key;
    const char *value;
    const char *column;
} fluss_table_change_t;

/* ALTER_TABLE with n changes, applied together by the server (which
 * decides which options may change: 0.9.1 allows e.g.
 * table.datalake.freshness; added columns must be nullable). */
int fluss_table_alter(fluss_client_t *c, const char *database, const char *table,
                      const fluss_table_change_t *changes, size_t n, bool ignore_if_not_exists,
                      fluss_error_t *err);

/* ---- partitions ----
 *
 * A partition spec is text "k1=v1,k2=v2" naming partition-key values;
 * a partition's name is its values in partition-key order joined by '$'
 * ("v1$v2", Fluss's partition name). */

typedef struct fluss_partition_info {
    int64_t partition_id;
    char *name; /* "v1$v2" */
    char *spec; /* "k1=v1,k2=v2" in partition-key order */
} fluss_partition_info_t;

/* CREATE_PARTITION: spec names every partition key. */
int fluss_partition_create(fluss_client_t *c, const char *database, const char *table,
                           const char *spec, bool ignore_if_exists, fluss_error_t *err);
int fluss_partition_drop(fluss_client_t *c, const char *database, const char *table,
                         const char *spec, bool ignore_if_not_exists, fluss_error_t *err);
/* LIST_PARTITION_INFOS, all partitions or (partial_spec not NULL or
 * empty) those matching some partition keys' values. *out is an array
 * of *count infos (free with fluss_partition_infos_free). */
int fluss_partition_list(fluss_client_t *c, const char *database, const char *table,
                         const char *partial_spec, fluss_partition_info_t **out, size_t *count,
                         fluss_error_t *err);
void fluss_partition_infos_free(fluss_partition_info_t *infos, size_t count);

/* ---- the lake tier ---- */

/* One bucket's lake offset: the first offset its lake data files lack. */
typedef struct fluss_lake_bucket {
    int64_t partition_id;  /* -1: the table is not partitioned */
    char *partition_name;  /* NULL when not partitioned (or not told) */
    int32_t bucket;
    int64_t offset;
} fluss_lake_bucket_t;

typedef struct fluss_lake_snapshot {
    int64_t table_id;
    int64_t snapshot_id;   /* the Iceberg snapshot */
    size_t bucket_count;   /* the buckets tiered so far */
    fluss_lake_bucket_t *buckets;
} fluss_lake_snapshot_t;

/* GET_LAKE_SNAPSHOT: the table's latest lake snapshot (free with
 * fluss_lake_snapshot_free); LAKE_SNAPSHOT_NOT_EXIST before the first. */
int fluss_lake_snapshot_get(fluss_client_t *c, const char *database, const char *table,
                            fluss_lake_snapshot_t **out, fluss_error_t *err);
void fluss_lake_snapshot_free(fluss_lake_snapshot_t *s);
/* fluss-c's LAKE_TIER_NOW: a tiering round of the table now, returning
 * once it ended: *snapshot_id the lake snapshot after it (-1: none yet),
 * *added the rows it tiered. INVALID_TABLE_EXCEPTION for a table whose
 * lake is off. */
int fluss_lake_tier_now(fluss_client_t *c, const char *database, const char *table,
                        int64_t *snapshot_id, int64_t *added, fluss_error_t *err);

/* Builds the TableDescriptor JSON for a spec without talking to a server.
 * Returns a malloc'd string (free with free()) or NULL with err set. */
char *fluss_table_spec_to_json(const fluss_table_spec_t *spec, fluss_error_t *err);

/* The name of an error code ("TABLE_NOT_EXIST"). */
const char *fluss_error_name(int code);

/* ======================================================================
 * ---- log tables: table handle, rows, append writer, log scanner ----
 *
 * Thread rules for this section: a fluss_table_t is immutable after
 * fluss_table_open and may be read from several threads at once (the
 * writers and scanners made from it own their own connections). One
 * writer, scanner, row or record batch is used by one thread at a time.
 * A table must outlive the writers and scanners made from it; a record
 * batch owns its data and may outlive its scanner and table.
 * ====================================================================== */

typedef struct fluss_table fluss_table_t;

/* Opens a table: GET_TABLE_INFO (schema, buckets, properties) and
 * GET_METADATA (bucket leaders, tablet server and coordinator addresses)
 * through the client's coordinator connection. Blocks. The client must
 * outlive the call only (the table keeps copies of everything it needs;
 * connections to tablet servers are opened by writers and scanners, and
 * partition metadata is asked for by them when they meet a partition). */
int fluss_table_open(fluss_client_t *client, const char *database, const char *table,
                     fluss_table_t **out, fluss_error_t *err);
void fluss_table_close(fluss_table_t *table);

/* Borrowed views valid while the table is open. */
int64_t fluss_table_id(const fluss_table_t *t);
int32_t fluss_table_bucket_count(const fluss_table_t *t);
/* The value of one of the table's properties as the server gave them
 * ("table.datalake.enabled", ...), NULL when it has none. Borrowed from
 * the table. */
const char *fluss_table_property(const fluss_table_t *t, const char *key);
size_t fluss_table_column_count(const fluss_table_t *t);
const char *fluss_table_column_name(const fluss_table_t *t, size_t col);
/* The column's SQL type text ("DECIMAL(10, 2) NOT NULL"), owned by the table. */
const char *fluss_table_column_type(const fluss_table_t *t, size_t col);
/* Index of the named column, or -1. */
int fluss_table_column_index(const fluss_table_t *t, const char *name);
/* The primary key's column indexes (borrowed, *cols valid while the
 * table is open); returns their count, 0 for a log table. */
size_t fluss_table_primary_key(const fluss_table_t *t, const int32_t **cols);
/* The partition keys' column indexes (borrowed, like _primary_key);
 * returns their count, 0 for a table without partitions. */
size_t fluss_table_partition_keys(const fluss_table_t *t, const int32_t **cols);
/* The id of a partition given by spec ("k=v,...", every partition key) or
 * by name ("v1$v2"), through GET_METADATA (blocks);
 * FLUSS_ERR_PARTITION_NOT_EXISTS when there is none. */
int fluss_table_partition_id(const fluss_table_t *t, const char *spec, int64_t *id,
                             fluss_error_t *err);

#define FLUSS_OFFSET_EARLIEST ((int64_t)-2)
#define FLUSS_OFFSET_LATEST ((int64_t)-3)

typedef enum fluss_offset_spec {
    FLUSS_OFFSETS_EARLIEST = 0,
    FLUSS_OFFSETS_LATEST = 1,   /* the high watermark: the next offset written */
    FLUSS_OFFSETS_TIMESTAMP = 2 /* first offset committed at or after timestamp_ms */
} fluss_offset_spec_t;

/* LIST_OFFSETS for n buckets (all buckets when buckets is NULL, then
 * n must be fluss_table_bucket_count). offsets[i] receives bucket
 * buckets[i]'s offset. Opens a short-lived connection per leader. Blocks.
 * A partitioned table's buckets belong to its partitions: use
 * _list_partition_offsets. */
int fluss_table_list_offsets(const fluss_table_t *t, const int32_t *buckets, size_t n,
                             fluss_offset_spec_t spec, int64_t timestamp_ms, int64_t *offsets,
                             fluss_error_t *err);
/* The same for the buckets of one partition (its leaders resolved with
 * GET_METADATA first); partition_id -1 is the table's own buckets. */
int fluss_table_list_partition_offsets(const fluss_table_t *t, int64_t partition_id,
                                       const int32_t *buckets, size_t n, fluss_offset_spec_t spec,
                                       int64_t timestamp_ms, int64_t *offsets, fluss_error_t *err);

/* ---- rows ---- */

/* A row of the table's schema being built for a writer. Every column
 * starts NULL. Setters copy what they are given; the row owns its data.
 * Setters fail with FLUSS_ERR__INVALID_ARG for a column index out of range
 * or a value that does not fit the column's type (the row keeps its old
 * value in that column). */
typedef struct fluss_row fluss_row_t;

fluss_row_t *fluss_row_new(const fluss_table_t *t);
void fluss_row_destroy(fluss_row_t *row);
/* Sets every column back to NULL; keeps memory for reuse. */
void fluss_row_clear(fluss_row_t *row);

int fluss_row_set_null(fluss_row_t *row, size_t col, fluss_error_t *err);
int fluss_row_set_bool(fluss_row_t *row, size_t col, bool v, fluss_error_t *err);
/* TINYINT, SMALLINT, INT, BIGINT (range checked); FLOAT, DOUBLE. */
int fluss_row_set_int64(fluss_row_t *row, size_t col, int64_t v, fluss_error_t *err);
/* FLOAT, DOUBLE. */
int fluss_row_set_double(fluss_row_t *row, size_t col, double v, fluss_error_t *err);
/* STRING, CHAR (UTF-8 bytes), BYTES, BINARY(n) (exactly n bytes). */
int fluss_row_set_bytes(fluss_row_t *row, size_t col, const void *p, size_t n,
                        fluss_error_t *err);
int fluss_row_set_string(fluss_row_t *row, size_t col, const char *s, fluss_error_t *err);
/* DECIMAL(p, s) from text "-123.45" (rounded half-up to s digits; more
 * than p digits is an error). */
int fluss_row_set_decimal(fluss_row_t *row, size_t col, const char *text, fluss_error_t *err);
/* DATE: days since 1970-01-01. */
int fluss_row_set_date(fluss_row_t *row, size_t col, int32_t epoch_days, fluss_error_t *err);
/* TIME(p): milliseconds of the day (Fluss keeps TIME at millisecond
 * precision). */
int fluss_row_set_time(fluss_row_t *row, size_t col, int32_t millis_of_day, fluss_error_t *err);
/* TIMESTAMP(p), TIMESTAMP_LTZ(p): milliseconds since the epoch (UTC) plus
 * nanoseconds of that millisecond (0..999999); truncated to p digits. */
int fluss_row_set_timestamp(fluss_row_t *row, size_t col, int64_t epoch_millis,
                            int32_t nanos_of_milli, fluss_error_t *err);
/* Parses text per the column's type: true/false; integers; floats;
 * decimals; STRING/CHAR as is; BYTES/BINARY as hex ("0x" optional);
 * DATE YYYY-MM-DD; TIME HH:MM[:SS[.fff]]; TIMESTAMP "YYYY-MM-DD[ T]HH:MM[:SS[.f…]]"
 * (TIMESTAMP_LTZ also with a Z or ±HH:MM suffix) or epoch milliseconds.
 * text NULL sets NULL. ARRAY/MAP/ROW: the JSON form scans print —
 * [1, null, 3], {"key": 1} (keys as text: {"1": "a"} for MAP<INT, ...>),
 * {"field": 1, ...} or [1, ...] by position for a ROW — elements read
 * like their types above (quoted or bare), null for NULL; the value is
 * encoded as Fluss keeps it in rows (BinaryArray / BinaryMap / a nested
 * row in the table's kv format). */
int fluss_row_set_text(fluss_row_t *row, size_t col, const char *text, fluss_error_t *err);

/* The name ("v1$v2") of the partition a row of a partitioned table goes
 * to, from its partition-key values as Fluss names partitions (strings
 * as they are, integers in decimal, DATE yyyy-MM-dd, TIME HH-mm-ss_SSS,
 * TIMESTAMP yyyy-MM-dd-HH-mm-ss_fraction, FLOAT/DOUBLE with '_' for '.',
 * bytes as hex), NUL-terminated into buf. FLUSS_ERR__INVALID_ARG for a
 * NULL partition value or a name longer than cap - 1. */
int fluss_row_partition_name(const fluss_row_t *row, char *buf, size_t cap, fluss_error_t *err);

/* ---- append writer ---- */

typedef struct fluss_append_writer_options {
    size_t batch_bytes;        /* 0 = 1 MiB: a bucket's batch is closed at this size */
    int linger_ms;             /* < 0 = 100: an open batch older than this is sent */
    size_t buffer_memory_max;  /* 0 = 64 MiB: rows buffered + requests in flight */
    int max_inflight;          /* 0 = 5: PRODUCE_LOG requests in flight per server */
    int acks;                  /* 0 = -1 (all); else 1 or -1 */
    int idempotent;            /* < 0 or 1 = on (INIT_WRITER, batch sequences), 0 = off */
    int request_timeout_ms;    /* 0 = 30 s */
    /* Partitioned tables: >= 0 (default) creates the partition a row
     * names when it does not exist (CREATE_PARTITION, as the Java writer's
     * client.writer.dynamic-create-partition.enabled, default true);
     * < 0 fails the row with PARTITION_NOT_EXISTS instead. */
    int dynamic_partitions;
} fluss_append_writer_options_t;

typedef struct fluss_append_writer fluss_append_writer_t;

/* Creates a writer for a log table; opts may be NULL (all defaults).
 * Supports the ARROW log format with the table's compression
 * (table.log.arrow.compression.type / .zstd.level). With idempotence on
 * it calls INIT_WRITER (blocks). The writer has no background thread: it
 * builds, sends and collects acknowledgements inside _append and _flush. */
int fluss_append_writer_new(fluss_table_t *t, const fluss_append_writer_options_t *opts,
                            fluss_append_writer_t **out, fluss_error_t *err);
/* Adds a copy of row (the caller keeps row). Of a partitioned table, the
 * row goes to the partition its partition-key values name (resolved with
 * GET_METADATA when first met, created if missing unless
 * dynamic_partitions < 0; blocks then). Picks the bucket: the bucket
 * key's compacted encoding hashed like the Java client, or a sticky
 * bucket (one per partition) that moves round robin when its batch
 * closes. May block to send
 * batches and wait for acknowledgements when buffer_memory_max or
 * max_inflight is reached. Returns the first error of an earlier batch
 * if one failed (the writer is then failed: every later call returns it). */
int fluss_append_writer_append(fluss_append_writer_t *w, const fluss_row_t *row,
                               fluss_error_t *err);
/* Sends every buffered row and waits until all are acknowledged (or
 * failed). Returns the first error. Blocks. */
int fluss_append_writer_flush(fluss_append_writer_t *w, fluss_error_t *err);
/* Lets a writer make progress between appends (a rate-limited or idle
 * producer): closes batches older than linger_ms (see below), sends
 * ready batches and handles the answers that arrived, for up to
 * timeout_ms (0 = only what can be done without waiting), and
 * returns the writer's first error like _append. A batch
 * past linger_ms whose server already has max_inflight requests in
 * flight stays open and keeps filling (linger_ms 0 = send as soon as a
 * slot is free). Blocks up to timeout_ms. */
int fluss_append_writer_poll(fluss_append_writer_t *w, int timeout_ms, fluss_error_t *err);

/* One batch's outcome, reported to the ack callback. */
typedef struct fluss_append_ack {
    int32_t bucket;
    int64_t partition_id; /* -1 for a table without partitions */
    int64_t base_offset; /* offset of the batch's first row; -1 if failed or not answered */
    int64_t rows;
    int64_t bytes;       /* uncompressed Arrow bytes of its rows (as _stats counts) */
    int64_t wire_bytes;  /* the batch as sent (header + compressed Arrow) */
    int64_t request_us;  /* its PRODUCE_LOG request's last send -> answer (monotonic) */
    int64_t batch_us;    /* its first row appended -> answer: linger + queue + request */
    int error_code;      /* 0 = acknowledged; else the error that failed it for good */
} fluss_append_ack_t;

typedef void (*fluss_append_ack_cb)(void *opaque, const fluss_append_ack_t *ack);

/* Sets the callback called once per batch when it is acknowledged or
 * fails for good (retries are not reported); cb NULL removes it. It runs
 * on the writer's caller thread inside _append, _poll or _flush, must
 * not call the writer, and may read *ack only during the call. Batches
 * dropped by _destroy are not reported. */
void fluss_append_writer_set_ack_callback(fluss_append_writer_t *w, fluss_append_ack_cb cb,
                                          void *opaque);
/* Rows and bytes (uncompressed Arrow) acknowledged so far. */
void fluss_append_writer_stats(const fluss_append_writer_t *w, int64_t *rows_acked,
                               int64_t *bytes_acked);
/* Drops whatever is not flushed and closes the writer's connections. */
void fluss_append_writer_destroy(fluss_append_writer_t *w);

/* ======================================================================
 * ---- primary-key tables: upsert writer, lookuper, limit scan ----
 *
 * Same thread rules as the log-table section. Keys are given as rows
 * (fluss_row_t of the table) with the primary-key columns set; the other
 * columns are ignored (of a partitioned table the partition-key columns
 * name the key's partition). Values are stored in the table's kv format
 * (table.kv.format: COMPACTED, or INDEXED). Keys are the physical primary
 * key (the primary key without partition keys), as in Fluss.
 * ====================================================================== */

typedef struct fluss_upsert_writer_options {
    fluss_append_writer_options_t base; /* batching, in-flight, acks, idempotence: as above */
    /* Partial update: the column indexes to write (must include the
     * primary key; the others keep their values). NULL/0 = all columns. */
    const int32_t *target_columns;
    size_t target_column_count;
} fluss_upsert_writer_options_t;

typedef struct fluss_upsert_writer fluss_upsert_writer_t;

/* Creates an upsert writer for a primary-key table (PUT_KV; the append
 * writer's batching, pipelining and idempotence). opts may be NULL. The
 * bucket of a key is chosen like the Java client: the compacted encoding
 * of the bucket key (default: the primary key) hashed with Fluss's
 * murmur bucketing. With idempotence on it calls INIT_WRITER (blocks). */
int fluss_upsert_writer_new(fluss_table_t *t, const fluss_upsert_writer_options_t *opts,
                            fluss_upsert_writer_t **out, fluss_error_t *err);
/* Inserts or updates row (the caller keeps row). With target columns
 * only those are written. May block like fluss_append_writer_append. */
int fluss_upsert_writer_upsert(fluss_upsert_writer_t *w, const fluss_row_t *row,
                               fluss_error_t *err);
/* Deletes the key held by row's primary-key columns. */
int fluss_upsert_writer_delete(fluss_upsert_writer_t *w, const fluss_row_t *key,
                               fluss_error_t *err);
/* As fluss_append_writer_flush / _poll / _set_ack_callback / _stats (an
 * acknowledgement's base_offset is -1: PUT_KV answers no offsets; bytes
 * are KvRecordBatch bytes). */
int fluss_upsert_writer_flush(fluss_upsert_writer_t *w, fluss_error_t *err);
int fluss_upsert_writer_poll(fluss_upsert_writer_t *w, int timeout_ms, fluss_error_t *err);
void fluss_upsert_writer_set_ack_callback(fluss_upsert_writer_t *w, fluss_append_ack_cb cb,
                                          void *opaque);
void fluss_upsert_writer_stats(const fluss_upsert_writer_t *w, int64_t *rows_acked,
                               int64_t *bytes_acked);
void fluss_upsert_writer_destroy(fluss_upsert_writer_t *w);

/* A lookuper reads rows of a primary-key table by key. It keeps one
 * connection per tablet server (opened on first use). */
typedef struct fluss_lookuper fluss_lookuper_t;

int fluss_lookuper_new(fluss_table_t *t, fluss_lookuper_t **out, fluss_error_t *err);
void fluss_lookuper_destroy(fluss_lookuper_t *l);
/* Looks up n keys at once: one LOOKUP request per tablet server leading
 * any of their buckets, sent together. rows[i] receives key i's row
 * (caller frees with fluss_row_destroy) or NULL when not found (also when
 * a partitioned table has no partition the key names). On
 * error every rows[i] is NULL. A call that fails retriably (a connection
 * the server closed as idle, a leader moving) is sent again, on a new
 * connection, up to 5 times; so are _prefix_lookup and _limit_scan.
 * Rows of a schema id other than the table's are refused. Blocks. */
int fluss_lookuper_lookup(fluss_lookuper_t *l, const fluss_row_t *const *keys, size_t n,
                          fluss_row_t **rows, fluss_error_t *err);
/* PREFIX_LOOKUP: the rows whose primary key starts with prefix's bucket
 * key columns (the table's bucket key must be a proper prefix of its
 * primary key). *rows is a malloc'd array of *count rows (free with
 * fluss_rows_free). Blocks. */
int fluss_lookuper_prefix_lookup(fluss_lookuper_t *l, const fluss_row_t *prefix,
                                 fluss_row_t ***rows, size_t *count, fluss_error_t *err);
/* LIMIT_SCAN of one bucket of a primary-key table: up to limit rows of
 * its current state. Same output as _prefix_lookup. Blocks. */
int fluss_lookuper_limit_scan(fluss_lookuper_t *l, int32_t bucket, int32_t limit,
                              fluss_row_t ***rows, size_t *count, fluss_error_t *err);
/* The same for a bucket of a partition (partition_id -1: _limit_scan). */
int fluss_lookuper_limit_scan_partition(fluss_lookuper_t *l, int64_t partition_id,
                                        int32_t bucket, int32_t limit, fluss_row_t ***rows,
                                        size_t *count, fluss_error_t *err);
void fluss_rows_free(fluss_row_t **rows, size_t count);

/* ---- reading rows (rows from a lookuper) ---- */

bool fluss_row_is_null(const fluss_row_t *row, size_t col);
/* BOOLEAN (0/1), TINYINT..BIGINT, DATE (days), TIME (ms of day),
 * TIMESTAMP(_LTZ) (epoch ms), DECIMAL with p <= 18 (unscaled). */
int64_t fluss_row_get_int64(const fluss_row_t *row, size_t col);
double fluss_row_get_double(const fluss_row_t *row, size_t col);
/* Nanoseconds of the millisecond of a TIMESTAMP(_LTZ). */
int32_t fluss_row_get_nanos(const fluss_row_t *row, size_t col);
/* STRING, CHAR, BYTES, BINARY: borrowed bytes valid until the row changes. */
const void *fluss_row_get_bytes(const fluss_row_t *row, size_t col, size_t *len);
/* Text of a value like fluss_record_batch_value_text (same forms and
 * flags; ARRAY/MAP/ROW as JSON, which fluss_row_set_text reads back). */
size_t fluss_row_value_text(const fluss_row_t *row, size_t col, int flags, char *buf,
                            size_t cap);

/* ---- log scanner ---- */

typedef struct fluss_log_scanner fluss_log_scanner_t;
typedef struct fluss_record_batch fluss_record_batch_t;

/* A scanner over a log table's buckets. projection: NULL for all
 * columns, or n column indexes in the order batches should present them.
 * The projection is pushed down to the server (projected_fields sorted
 * ascending, reordered here); a server that cannot project answers
 * INVALID_COLUMN_PROJECTION (34) from _poll. */
int fluss_log_scanner_new(fluss_table_t *t, const int32_t *projection, size_t n,
                          fluss_log_scanner_t **out, fluss_error_t *err);
/* With pushdown off the scanner fetches whole batches and projects them
 * itself (for servers that answer 34). Default on. */
void fluss_log_scanner_set_projection_pushdown(fluss_log_scanner_t *s, bool enabled);
/* Starts (or moves) reading bucket at offset: an offset, or
 * FLUSS_OFFSET_EARLIEST, or FLUSS_OFFSET_LATEST (resolved now with
 * LIST_OFFSETS; blocks). Of a table without partitions. */
int fluss_log_scanner_subscribe(fluss_log_scanner_t *s, int32_t bucket, int64_t offset,
                                fluss_error_t *err);
/* The same for a bucket of a partition of a partitioned table (partition
 * ids from fluss_partition_list or fluss_table_partition_id); the
 * partition's leaders are resolved with GET_METADATA when it is first
 * subscribed (blocks). partition_id -1 is _subscribe. */
int fluss_log_scanner_subscribe_partition(fluss_log_scanner_t *s, int64_t partition_id,
                                          int32_t bucket, int64_t offset, fluss_error_t *err);
void fluss_log_scanner_unsubscribe(fluss_log_scanner_t *s, int32_t bucket);
void fluss_log_scanner_unsubscribe_partition(fluss_log_scanner_t *s, int64_t partition_id,
                                             int32_t bucket);
/* The next offset the scanner will return for bucket, or -1 when not
 * subscribed (FLUSS_OFFSET_EARLIEST until the first fetch answers). */
int64_t fluss_log_scanner_position(const fluss_log_scanner_t *s, int32_t bucket);
int64_t fluss_log_scanner_partition_position(const fluss_log_scanner_t *s, int64_t partition_id,
                                             int32_t bucket);
/* Waits up to timeout_ms for records (FETCH_LOG long poll, min_bytes 1).
 * Returns 0 with *out a batch (caller frees with fluss_record_batch_free)
 * or *out NULL on timeout; or an error (a per-bucket server error names
 * the bucket in err). Rows below the subscribed offset are skipped. */
int fluss_log_scanner_poll(fluss_log_scanner_t *s, int timeout_ms, fluss_record_batch_t **out,
                           fluss_error_t *err);
/* Bytes of log records (Arrow batches as the server sent them, after
 * projection) received so far; a load generator's MB/s. */
int64_t fluss_log_scanner_bytes_fetched(const fluss_log_scanner_t *s);
/* Log record batches received so far (a filter pushed down makes the
 * server skip some). */
int64_t fluss_log_scanner_batches_fetched(const fluss_log_scanner_t *s);
/* Sets (or with NULL/"" clears) a row filter: predicates on one column
 * each, joined by AND —
 *     amount >= 10 AND kind = 'buy' AND note IS NULL
 * with = (==) != (<>) < <= > >= against a literal ('text' with '' for a
 * quote, numbers, true/false; read like fluss_row_set_text reads the
 * column's type), and IS [NOT] NULL. Batches hand out only matching rows
 * (their offsets keep their gaps). The filter is also sent with every
 * FETCH_LOG (Fluss main's filter_predicate with the table's schema id
 * and column ids), so a server that keeps batch statistics
 * (table.statistics.columns) skips batches that cannot match; others
 * ignore it. ARRAY/MAP/ROW columns cannot be filtered.
 * FLUSS_ERR__INVALID_ARG names what did not parse. */
int fluss_log_scanner_set_filter(fluss_log_scanner_t *s, const char *expr, fluss_error_t *err);
void fluss_log_scanner_destroy(fluss_log_scanner_t *s);

/* ---- union read: the lake, then the log after it ---- */

/* A lake scanner reads one lake snapshot of a table (the one
 * fluss_lake_snapshot_get returned) straight from its Apache Iceberg
 * files: the Hadoop layout under the table's
 * `table.datalake.iceberg.warehouse`, which must be a path this process
 * can read (local, or a shared file system). Its batches are those a log
 * scanner would have fetched for the same rows: each has its bucket and
 * partition, and each row its log offset and commit timestamp (the lake
 * keeps them in __offset and __timestamp). Within a bucket rows come in
 * offset order; buckets one after another.
 *
 * A primary-key table's lake holds its rows as of the lake offsets: the
 * snapshot's position-delete files are applied (a deleted row is never
 * returned), and each row is the key's value at its offset; the log after
 * the lake offset is the table's changelog, whose changes a batch reader
 * applies by key (the CLI's `fluss scan` does).
 *
 * Union read: the snapshot holds every bucket's rows below its lake
 * offset (fluss_lake_bucket_t.offset); a log scanner subscribed at that
 * offset continues with the rest, so the lake rows and the log rows are
 * the table from its first tiered row on, no row twice, none missing —
 * also after the log below the lake offset has expired. A bucket absent
 * from the snapshot has nothing in the lake: read its log from the start.
 * Files of a partition the table no longer has are left out (their rows
 * have no partition id); they stay in the Iceberg table for its readers.
 *
 * projection as fluss_log_scanner_new. Errors: INVALID_ARG (no warehouse
 * in the table's properties; a lake table of another table id; equality
 * delete files, which flussd never writes), LAKE_SNAPSHOT_NOT_EXIST
 * (the snapshot was expired from the Iceberg table), TABLE_NOT_EXIST (no
 * Iceberg table there), CORRUPT_RECORD_EXCEPTION and FLUSS_ERR__CORRUPT
 * for files that do not decode. Thread rule: one user at a time; the
 * table outlives the scanner. */
typedef struct fluss_lake_scanner fluss_lake_scanner_t;
int fluss_lake_scanner_new(fluss_table_t *t, const fluss_lake_snapshot_t *snap,
                           const int32_t *projection, size_t n, fluss_lake_scanner_t **out,
                           fluss_error_t *err);
/* Only rows matching expr (fluss_log_scanner_set_filter's syntax). */
int fluss_lake_scanner_set_filter(fluss_lake_scanner_t *s, const char *expr, fluss_error_t *err);
/* The data files the snapshot has. */
size_t fluss_lake_scanner_file_count(const fluss_lake_scanner_t *s);
/* The next batch of lake rows, or 0 with *out NULL when every file has
 * been read. */
int fluss_lake_scanner_next(fluss_lake_scanner_t *s, fluss_record_batch_t **out,
                            fluss_error_t *err);
void fluss_lake_scanner_destroy(fluss_lake_scanner_t *s);

/* A union scanner is the union read for readers that follow a table: for
 * each bucket subscribed at FLUSS_OFFSET_LAKE, first the rows the table's
 * lake snapshot holds of it (a lake scanner's batches), then its log from
 * the bucket's lake offset on (a log scanner's), no row twice and none
 * missing, also after the log below the lake offset expired; polled on,
 * it follows the log as a log scanner does. The snapshot is the newest at
 * the first poll after such a subscription, so a bucket subscribed later
 * (of a partition created since, say) is read from the snapshot newest
 * then. A bucket the snapshot does not hold, and every bucket of a table
 * whose lake is off or has no snapshot yet, is read from its log's
 * earliest offset. While lake rows are read (fluss_union_scanner_in_lake)
 * polls return lake batches only, without waiting; the poll that finds
 * the lake read returns no batch and subscribes the logs. A primary-key
 * table's lake rows are its rows as of the lake offsets, each
 * FLUSS_CHANGE_INSERT, and its log after them its changelog.
 * Subscribed at any other offset (fluss_log_scanner_subscribe's), a
 * bucket is read from its log alone. The client and the table outlive
 * the scanner; one user at a time. */
#define FLUSS_OFFSET_LAKE ((int64_t)-4)
typedef struct fluss_union_scanner fluss_union_scanner_t;
/* projection as fluss_log_scanner_new. */
int fluss_union_scanner_new(fluss_client_t *c, fluss_table_t *t, const int32_t *projection,
                            size_t n, fluss_union_scanner_t **out, fluss_error_t *err);
/* Only rows matching expr (fluss_log_scanner_set_filter's syntax), lake
 * and log alike. */
int fluss_union_scanner_set_filter(fluss_union_scanner_t *s, const char *expr, fluss_error_t *err);
void fluss_union_scanner_set_projection_pushdown(fluss_union_scanner_t *s, bool enabled);
/* partition_id -1 for a table without partitions; offset FLUSS_OFFSET_LAKE
 * or one fluss_log_scanner_subscribe takes. */
int fluss_union_scanner_subscribe(fluss_union_scanner_t *s, int64_t partition_id, int32_t bucket,
                                  int64_t offset, fluss_error_t *err);
void fluss_union_scanner_unsubscribe(fluss_union_scanner_t *s, int64_t partition_id,
                                     int32_t bucket);
/* -1 when not subscribed; FLUSS_OFFSET_LAKE while the bucket's lake rows
 * are to come; then its log position (fluss_log_scanner_position's). */
int64_t fluss_union_scanner_position(const fluss_union_scanner_t *s, int64_t partition_id,
                                     int32_t bucket);
/* Whether lake rows are being read: a batch a poll returned while this is
 * true came from the lake. */
bool fluss_union_scanner_in_lake(const fluss_union_scanner_t *s);
int fluss_union_scanner_poll(fluss_union_scanner_t *s, int timeout_ms, fluss_record_batch_t **out,
                             fluss_error_t *err);
/* The last lake snapshot read (-1: none), its data files, the lake rows
 * returned in all. */
int64_t fluss_union_scanner_lake_snapshot(const fluss_union_scanner_t *s);
size_t fluss_union_scanner_lake_files(const fluss_union_scanner_t *s);
int64_t fluss_union_scanner_lake_rows(const fluss_union_scanner_t *s);
/* The log scanner within (its statistics); borrowed. */
const fluss_log_scanner_t *fluss_union_scanner_log(const fluss_union_scanner_t *s);
void fluss_union_scanner_destroy(fluss_union_scanner_t *s);

/* A table read whole once, as a batch query reads it: the union read of
 * every bucket of every partition up to its log end offset when the read
 * began, or to its lake offset when a tiering round that committed
 * meanwhile took the lake further (the lake snapshot's rows, then the
 * log after the lake offset; a
 * table whose lake is off, or a bucket without lake rows, from its log's
 * earliest offset). A log table gives every record once. A primary-key
 * table gives its rows as of those offsets, merged by key: each key's
 * last change wins (+I and +U: that row; -U and -D: no row), so every
 * live key once, also after the log below the lake offset expired.
 * fluss_table_read_new reads it all (memory holds each batch that has a
 * row to give); then batch i (i < fluss_table_read_batch_count) with the
 * rows of it that belong to the result, ascending (*n of them, at least
 * one). The batches keep their offsets and change types (a PK row's is
 * +I or +U, a lake row's +I). projection as fluss_log_scanner_new; a
 * primary-key table's must hold the key (INVALID_ARG otherwise). The
 * client and table outlive the read. */
typedef struct fluss_table_read fluss_table_read_t;
int fluss_table_read_new(fluss_client_t *c, fluss_table_t *t, const int32_t *projection,
                         size_t n, fluss_table_read_t **out, fluss_error_t *err);
size_t fluss_table_read_batch_count(const fluss_table_read_t *r);
const fluss_record_batch_t *fluss_table_read_batch(const fluss_table_read_t *r, size_t i,
                                                   const size_t **rows, size_t *n);
/* Rows in all. */
size_t fluss_table_read_row_count(const fluss_table_read_t *r);
void fluss_table_read_destroy(fluss_table_read_t *r);

/* ---- record batches ---- */

typedef enum fluss_change_type {
    FLUSS_CHANGE_APPEND_ONLY = 0,
    FLUSS_CHANGE_INSERT = 1,
    FLUSS_CHANGE_UPDATE_BEFORE = 2,
    FLUSS_CHANGE_UPDATE_AFTER = 3,
    FLUSS_CHANGE_DELETE = 4
} fluss_change_type_t;

void fluss_record_batch_free(fluss_record_batch_t *b);
int32_t fluss_record_batch_bucket(const fluss_record_batch_t *b);
/* The partition of the batch's bucket, -1 for a table without partitions. */
int64_t fluss_record_batch_partition_id(const fluss_record_batch_t *b);
/* Offset of the batch's first row (after skipped rows). */
int64_t fluss_record_batch_base_offset(const fluss_record_batch_t *b);
size_t fluss_record_batch_row_count(const fluss_record_batch_t *b);
size_t fluss_record_batch_column_count(const fluss_record_batch_t *b);
/* Borrowed; the projected column's name. */
const char *fluss_record_batch_column_name(const fluss_record_batch_t *b, size_t col);
/* Offset of row row (ascending; with a scanner filter rows may have gaps
 * between them). */
int64_t fluss_record_batch_offset(const fluss_record_batch_t *b, size_t row);
/* Commit timestamp (ms) of the row (of its batch in the log). */
int64_t fluss_record_batch_timestamp(const fluss_record_batch_t *b, size_t row);
fluss_change_type_t fluss_record_batch_change_type(const fluss_record_batch_t *b, size_t row);
bool fluss_record_batch_is_null(const fluss_record_batch_t *b, size_t row, size_t col);

/* Text of one value, snprintf style: writes at most cap bytes (NUL
 * terminated when cap > 0) and returns the full length. Plain text:
 * integers, floats (shortest round-trip form), decimals, strings as is,
 * bytes as lowercase hex, DATE YYYY-MM-DD, TIME HH:MM:SS[.fff],
 * TIMESTAMP ISO-8601 (TIMESTAMP_LTZ with a Z), ARRAY/MAP/ROW as JSON;
 * NULL as "". With FLUSS_TEXT_JSON the text is a JSON value: strings,
 * bytes, dates and times quoted and escaped, NULL as null. */
#define FLUSS_TEXT_JSON 1
size_t fluss_record_batch_value_text(const fluss_record_batch_t *b, size_t row, size_t col,
                                     int flags, char *buf, size_t cap);

/* ---- Arrow C Data Interface (https://arrow.apache.org/docs/format/CDataInterface.html) ---- */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  // Array type description
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;

  // Release callback
  void (*release)(struct ArrowSchema*);
  // Opaque producer-specific data
  void* private_data;
};

struct ArrowArray {
  // Array data description
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;

  // Release callback
  void (*release)(struct ArrowArray*);
  // Opaque producer-specific data
  void* private_data;
};

#endif  // ARROW_C_DATA_INTERFACE

/* Exports the batch as a struct array (one child per column, in the
 * scanner's projection order) and its schema. Both are independent of
 * the batch (their buffers are copies freed by the release callbacks);
 * the caller owns them and must call their release callbacks. On error
 * neither is set. */
int fluss_record_batch_to_arrow(const fluss_record_batch_t *b, struct ArrowSchema *schema,
                                struct ArrowArray *array, fluss_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
