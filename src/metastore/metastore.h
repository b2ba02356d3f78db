/*
 * metastore.h — the cluster metadata store: databases, tables with their
 * schemas and bucket assignment, and the durable id counters (table ids,
 * partition ids, writer ids, each table's auto-increment values), the
 * ACLs and the SCRAM credentials. One interface, several backends: the
 * embedded one (metastore_embedded.c, local mode) and later ZooKeeper.
 * Nothing above this header knows which backend runs.
 *
 * Thread rule: a metastore is used by one thread at a time (the
 * coordinator holds its lock around every call and every use of a view).
 * Getters return views owned by the store, valid until the next mutation.
 * Every mutation is durable when it returns 0.
 */
#ifndef FL_METASTORE_H
#define FL_METASTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"

#define FL_REPLICAS_MAX 16

typedef struct fl_ms_database {
    char *name;
    char *json; /* DatabaseDescriptor JSON */
    int64_t created_ms;
    int64_t modified_ms;
} fl_ms_database_t;

typedef struct fl_ms_bucket {
    int32_t leader;       /* -1: none (no live in-sync replica) */
    int32_t leader_epoch;
    int32_t replica_count;
    int32_t replicas[FL_REPLICAS_MAX];
    /* the committed ISR; isr_count 0 means every replica (a bucket never
     * changed since its assignment, or a store written before ISRs) */
    int32_t isr_count;
    int32_t isr[FL_REPLICAS_MAX];
    int32_t bucket_epoch; /* bumped by every leader or ISR change */
} fl_ms_bucket_t;

/* The bucket's ISR (its replicas while isr_count is 0). */
static inline const int32_t *fl_ms_bucket_isr(const fl_ms_bucket_t *b, int32_t *count) {
    *count = b->isr_count ? b->isr_count : b->replica_count;
    return b->isr_count ? b->isr : b->replicas;
}

typedef struct fl_ms_partition {
    int64_t partition_id;
    char *name;     /* values in partition-key order joined by '$' */
    char **values;  /* one per partition key */
    size_t value_count;
    int64_t created_ms;
    int32_t bucket_count;
    fl_ms_bucket_t *buckets;
} fl_ms_partition_t;

typedef struct fl_ms_table {
    char *database;
    char *name;
    int64_t table_id;
    int32_t schema_id;   /* latest schema id, first is 1 */
    char *table_json;    /* TableDescriptor JSON, defaults applied */
    size_t schema_count; /* schema_jsons[i] is schema id i + 1 */
    char **schema_jsons;
    int64_t created_ms;
    int64_t modified_ms;
    int32_t bucket_count; /* entries in buckets; 0 for partitioned tables */
    fl_ms_bucket_t *buckets;
    size_t partition_count;
    fl_ms_partition_t *partitions;
    /* the table's auto-increment counter (Fluss's ZK node per table and
     * column; a table has at most one such column): values up to here
     * are handed out or reserved */
    int64_t autoinc_next;
} fl_ms_table_t;

enum fl_ms_counter {
    FL_MS_COUNTER_TABLE_ID = 0,
    FL_MS_COUNTER_PARTITION_ID,
    FL_MS_COUNTER_WRITER_ID,
    FL_MS_COUNTER_COUNT
};

/* One resource's ACLs: the document the authorizer encodes (opaque here),
 * kept per resource like Fluss's /fluss-acls/<TYPE>/<name>. */
typedef struct fl_ms_acl_node {
    int32_t resource_type; /* 2 CLUSTER, 3 DATABASE, 4 TABLE (Fluss's codes) */
    char *resource_name;
    char *json;            /* the reference's document, as written */
} fl_ms_acl_node_t;

/* One user's SCRAM credential for one mechanism (fluss-c's own: Fluss has
 * no SCRAM). The credential is the authenticator's text (salt, iteration
 * count, stored and server keys; never a password), opaque here. */
typedef struct fl_ms_scram_node {
    char *user;       /* non-empty UTF-8, at most FL_MS_SCRAM_USER_MAX bytes */
    char *mechanism;  /* FL_MS_SCRAM_SHA_256 or FL_MS_SCRAM_SHA_512 */
    char *credential; /* at most FL_MS_SCRAM_CREDENTIAL_MAX bytes */
} fl_ms_scram_node_t;

#define FL_MS_SCRAM_SHA_256 "SCRAM-SHA-256"
#define FL_MS_SCRAM_SHA_512 "SCRAM-SHA-512"
/* Longest user name, in bytes (both backends refuse longer ones). */
#define FL_MS_SCRAM_USER_MAX 512
/* Largest credential text: a real one is a few hundred bytes; the limit
 * keeps a ZooKeeper znode far under jute.maxbuffer. */
#define FL_MS_SCRAM_CREDENTIAL_MAX (64u * 1024)

typedef struct fl_metastore fl_metastore_t;

struct fl_metastore_ops {
    void (*close)(fl_metastore_t *ms);
    size_t (*db_count)(fl_metastore_t *ms);
    const fl_ms_database_t *(*db_at)(fl_metastore_t *ms, size_t i);
    const fl_ms_database_t *(*db_get)(fl_metastore_t *ms, const char *name);
    int (*db_create)(fl_metastore_t *ms, const fl_ms_database_t *db, fl_error_t *err);
    /* Drops the database and every table in it. */
    int (*db_drop)(fl_metastore_t *ms, const char *name, fl_error_t *err);
    size_t (*table_count)(fl_metastore_t *ms);
    const fl_ms_table_t *(*table_at)(fl_metastore_t *ms, size_t i);
    const fl_ms_table_t *(*table_get)(fl_metastore_t *ms, const char *db, const char *name);
    const fl_ms_table_t *(*table_by_id)(fl_metastore_t *ms, int64_t table_id);
    /* Copies *t into the store. */
    int (*table_create)(fl_metastore_t *ms, const fl_ms_table_t *t, fl_error_t *err);
    int (*table_drop)(fl_metastore_t *ms, const char *db, const char *name, fl_error_t *err);
    /* Adds a partition (copied) to a table / removes it. */
    int (*partition_create)(fl_metastore_t *ms, int64_t table_id, const fl_ms_partition_t *p,
                            fl_error_t *err);
    int (*partition_drop)(fl_metastore_t *ms, int64_t table_id, int64_t partition_id,
                          fl_error_t *err);
    /* ALTER TABLE: replaces the table's descriptor JSON and, when
     * new_schema_json is not NULL, appends it as schema id schema_id + 1
     * (which becomes the latest); modified_ms is the new modification
     * time. One durable write; on failure nothing changes. */
    int (*table_alter)(fl_metastore_t *ms, int64_t table_id, const char *table_json,
                       const char *new_schema_json, int64_t modified_ms, fl_error_t *err);
    /* Returns the next value of a counter (first is 0) in *out. */
    int (*next_id)(fl_metastore_t *ms, enum fl_ms_counter c, int64_t *out, fl_error_t *err);
    /* Reserves count consecutive values with one durable write; the first
     * is in *first. Values reserved and never used are skipped for good. */
    int (*reserve_ids)(fl_metastore_t *ms, enum fl_ms_counter c, int64_t count, int64_t *first,
                       fl_error_t *err);
    /* The same for a table's auto-increment counter: *first is the counter
     * before the block, the block is first + 1 .. first + count.
     * TABLE_NOT_EXIST when the table is gone. */
    int (*reserve_table_ids)(fl_metastore_t *ms, int64_t table_id, int64_t count,
                             int64_t *first, fl_error_t *err);
    /* A bucket's new leader, leader epoch and ISR (from b; its replicas
     * are not changed), bucket_epoch bumped; partition_id -1 for a table's
     * bucket. One durable write. */
    int (*bucket_leader_set)(fl_metastore_t *ms, int64_t table_id, int64_t partition_id,
                             int32_t bucket, const fl_ms_bucket_t *b, fl_error_t *err);
    /* ACLs: one document per resource (Fluss's /fluss-acls/<TYPE>/<name>),
     * ordered by type, then name (strcmp). */
    size_t (*acl_count)(fl_metastore_t *ms);
    const fl_ms_acl_node_t *(*acl_at)(fl_metastore_t *ms, size_t i);
    /* Replaces resource (type, name)'s document; json NULL deletes it (no
     * error if it is not there). One durable write. */
    int (*acl_put)(fl_metastore_t *ms, int32_t type, const char *name, const char *json,
                   fl_error_t *err);
    /* SCRAM credentials (fluss-c's own): one per user and mechanism,
     * ordered by user, then mechanism (strcmp). */
    size_t (*scram_count)(fl_metastore_t *ms);
    const fl_ms_scram_node_t *(*scram_at)(fl_metastore_t *ms, size_t i);
    /* Sets (user, mechanism)'s credential; credential NULL deletes it (no
     * error if it is not there). One durable write. A user name or
     * mechanism the store cannot hold is __INVALID_ARG. */
    int (*scram_put)(fl_metastore_t *ms, const char *user, const char *mechanism,
                     const char *credential, fl_error_t *err);
};

struct fl_metastore {
    const struct fl_metastore_ops *ops;
};

/* Opens (creating if needed) the embedded store in dir. A store file that
 * cannot be read whole and valid is an error: nothing half-written loads. */
int fl_metastore_embedded_open(const char *dir, fl_metastore_t **out, fl_error_t *err);

/* Frees the owned fields of a record (not the record itself). */
void fl_ms_database_clear(fl_ms_database_t *db);
void fl_ms_table_clear(fl_ms_table_t *t);
void fl_ms_table_copy(fl_ms_table_t *dst, const fl_ms_table_t *src);
void fl_ms_partition_clear(fl_ms_partition_t *p);
void fl_ms_partition_copy(fl_ms_partition_t *dst, const fl_ms_partition_t *src);
/* Lookups in the record arrays every backend keeps (their views point
 * into them), or NULL. */
fl_ms_database_t *fl_ms_find_db(fl_ms_database_t *dbs, size_t n, const char *name);
fl_ms_table_t *fl_ms_find_table(fl_ms_table_t *tables, size_t n, const char *db,
                                const char *name);
fl_ms_table_t *fl_ms_find_table_id(fl_ms_table_t *tables, size_t n, int64_t table_id);
/* A bucket of t (partition_id -1: the table's own), or NULL. */
fl_ms_bucket_t *fl_ms_bucket_mut(fl_ms_table_t *t, int64_t partition_id, int32_t bucket);
/* Copies b's leader, leader epoch and ISR into dst and bumps its
 * bucket_epoch. */
void fl_ms_bucket_set_leader(fl_ms_bucket_t *dst, const fl_ms_bucket_t *b);

/* ACL records, shared by the backends' caches. */
/* Orders (type, name) against a node: by type, then name. */
int fl_ms_acl_cmp(int32_t type, const char *name, const fl_ms_acl_node_t *n);
void fl_ms_acl_free(fl_ms_acl_node_t *nodes, size_t count);
/* Sets (json NULL: removes) (type, name) in an array kept in that order;
 * grows it as needed. */
void fl_ms_acl_set(fl_ms_acl_node_t **nodes, size_t *count, size_t *cap, int32_t type,
                   const char *name, const char *json);

/* SCRAM records, shared by the backends' caches. */
bool fl_ms_scram_mechanism_ok(const char *mechanism);
/* Orders (user, mechanism) against a node: by user, then mechanism. */
int fl_ms_scram_cmp(const char *user, const char *mechanism, const fl_ms_scram_node_t *n);
void fl_ms_scram_free(fl_ms_scram_node_t *nodes, size_t count);
/* Sets (credential NULL: removes) (user, mechanism) in an array kept in
 * that order; grows it as needed. */
void fl_ms_scram_set(fl_ms_scram_node_t **nodes, size_t *count, size_t *cap, const char *user,
                     const char *mechanism, const char *credential);
/* Sorts an array in that order; false when two nodes share a user and
 * mechanism (*dup is the first of them). */
bool fl_ms_scram_sort(fl_ms_scram_node_t *nodes, size_t count, size_t *dup);

/* A table's partition by id or by name, or NULL. */
const fl_ms_partition_t *fl_ms_table_partition(const fl_ms_table_t *t, int64_t id,
                                               const char *name);

#endif
