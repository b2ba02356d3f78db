/*
 * metastore_zk_int.h — what the files of the ZooKeeper metastore share:
 * the session (metastore_zk_conn.c), the multi-op builder, and the store's
 * struct (metastore_zk.c; election, LeaderAndIsr, ACLs and SCRAM
 * credentials in their own files, both written through the one-znode
 * write of metastore_zk_node.c).
 * Not for callers: they use metastore_zk.h.
 */
#ifndef FL_METASTORE_ZK_INT_H
#define FL_METASTORE_ZK_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <zookeeper/zookeeper.h>

#include "common_buf.h"
#include "metastore_zk.h"

/* Fluss's znodes (ZkData), below the root prefix. */
#define FL_ZK_DATABASES "/metadata/databases"
#define FL_ZK_TABLE_SEQID "/metadata/table_seqid"
#define FL_ZK_PARTITION_SEQID "/metadata/partition_seqid"
#define FL_ZK_WRITER_ID "/metadata/writer_id"
#define FL_ZK_COORD_ACTIVE "/coordinators/active"
#define FL_ZK_COORD_EPOCH "/coordinators/epoch"
#define FL_ZK_SERVER_IDS "/tabletservers/ids"
#define FL_ZK_TABLE_IDS "/tabletservers/tables"
#define FL_ZK_PARTITION_IDS "/tabletservers/partitions"
#define FL_ZK_ACLS "/fluss-acls"
#define FL_ZK_ACL_CHANGES "/fluss-acl-changes"
#define FL_ZK_ACL_CHANGE_PREFIX FL_ZK_ACL_CHANGES "/acl_changes_"
/* fluss-c's own: /fluss-scram/<mechanism>/<user> */
#define FL_ZK_SCRAM "/fluss-scram"
/* The epoch znode holds INITIAL - 1 until a first coordinator becomes
 * active (Fluss main's CoordinatorContext.INITIAL_COORDINATOR_EPOCH = 0). */
#define FL_ZK_EPOCH_INITIAL 0

/* Ops of one zoo_multi. */
#define FL_ZK_TXN_OPS_MAX 100000

struct fl_zk_conn {
    zhandle_t *zh;
    char *root; /* "" or "/a/b" */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int state;          /* last session state seen by the watcher */
    bool expired;       /* the session is gone for good */
    uint64_t changes;   /* bumped by every watch event, for waiters */
};

/* root + path, fl_malloc'd. */
char *fl_zk_path(const fl_zk_conn_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A ZooKeeper return code as an fl_error_t (local band), naming what and path. */
int fl_zk_err(fl_error_t *err, int zrc, const char *what, const char *path);
/* Reads a znode into out (replacing its content). *missing (may be NULL
 * only when a missing node is an error) says ZNONODE. */
int fl_zk_get(fl_zk_conn_t *c, const char *path, fl_buf_t *out, struct Stat *st, bool *missing,
              fl_error_t *err);
/* The names of a znode's children, sorted (strcmp); free with deallocate_String_vector. */
int fl_zk_children(fl_zk_conn_t *c, const char *path, struct String_vector *out, bool *missing,
                   fl_error_t *err);
/* Creates path and its missing ancestors as empty persistent znodes. */
int fl_zk_ensure(fl_zk_conn_t *c, const char *path, fl_error_t *err);
/* Waits until the watcher saw an event after `seen` or timeout. Returns the counter. */
uint64_t fl_zk_wait_change(fl_zk_conn_t *c, uint64_t seen, int timeout_ms);
uint64_t fl_zk_changes(fl_zk_conn_t *c);
/* The watcher of one-shot watches set by this module (wakes waiters). */
void fl_zk_watch_wake(zhandle_t *zh, int type, int state, const char *path, void *ctx);

/* ---- a zoo_multi under construction; owns its paths and payloads ---- */
typedef struct fl_zk_txn {
    size_t count, cap;
    zoo_op_t *ops;
    void **owned; /* 3 per op: path, data, the Stat a set op fills */
} fl_zk_txn_t;

void fl_zk_txn_init(fl_zk_txn_t *t);
void fl_zk_txn_free(fl_zk_txn_t *t);
/* Each takes ownership of path and data (fl_malloc'd or malloc'd). */
void fl_zk_txn_create(fl_zk_txn_t *t, char *path, char *data, size_t len);
/* A PERSISTENT_SEQUENTIAL create: ZooKeeper appends a 10-digit sequence. */
void fl_zk_txn_create_sequential(fl_zk_txn_t *t, char *path, char *data, size_t len);
void fl_zk_txn_delete(fl_zk_txn_t *t, char *path, int version);
void fl_zk_txn_set(fl_zk_txn_t *t, char *path, char *data, size_t len, int version);
void fl_zk_txn_check(fl_zk_txn_t *t, char *path, int version);
/* Deletes path and everything below it, deepest first (lists the
 * children now; a child added before the commit fails it with ZNOTEMPTY). */
int fl_zk_txn_delete_tree(fl_zk_txn_t *t, fl_zk_conn_t *c, const char *path, fl_error_t *err);
/* Runs it: returns the ZooKeeper code; when one op failed, its index is
 * in *failed (else SIZE_MAX: the request as a whole failed). */
/* The stat a set op (index i) filled after a successful run. */
const struct Stat *fl_zk_txn_stat(const fl_zk_txn_t *t, size_t i);
int fl_zk_txn_run(fl_zk_conn_t *c, fl_zk_txn_t *t, size_t *failed);

/* ---- the store ---- */
typedef struct fl_ms_zk {
    fl_metastore_t base;
    fl_zk_conn_t *conn;
    bool active;
    int32_t epoch;         /* the coordinator epoch we wrote */
    int32_t epoch_version; /* its znode version: the fence of every write */
    bool reload_needed;    /* a write's outcome is unknown */
    size_t db_count, db_cap;
    fl_ms_database_t *dbs;
    size_t table_count, table_cap;
    fl_ms_table_t *tables;
    size_t acl_count, acl_cap; /* metastore_zk_acl.c */
    fl_ms_acl_node_t *acls;    /* ordered by (resource_type, resource_name) */
    size_t scram_count, scram_cap; /* metastore_zk_scram.c */
    fl_ms_scram_node_t *scrams;    /* ordered by (user, mechanism) */
} fl_ms_zk_t;

#define FL_MSZ(ms) ((fl_ms_zk_t *)(ms))

/* Starts a write: refuses unless active, reloads a cache whose last
 * write's outcome is unknown, and puts the epoch check in t as op 0. */
int fl_msz_begin(fl_ms_zk_t *m, fl_zk_txn_t *t, fl_error_t *err);
/* Reloads the whole cache from ZooKeeper (all or nothing). */
int fl_msz_reload(fl_ms_zk_t *m, fl_error_t *err);
/* A fenced write: the epoch check first, then t's ops. 0, or the error
 * (fenced: INVALID_COORDINATOR_EXCEPTION; unknown outcome: __TRANSPORT).
 * When op i of t failed with a ZooKeeper code, returns
 * FL_ZK_TXN_OP_FAILED with *zrc and *failed set (indexes of t's ops). */
#define FL_ZK_TXN_OP_FAILED 1
int fl_msz_commit(fl_ms_zk_t *m, fl_zk_txn_t *t, int *zrc, size_t *failed, fl_error_t *err);
fl_ms_table_t *fl_msz_table_mut(fl_ms_zk_t *m, int64_t id);

/* ---- one znode of text, written conditionally (metastore_zk_node.c) ---- */
/* Attempts of a write that raced another writer (Fluss's MAX_UPDATE_RETRIES). */
#define FL_MSZ_NODE_RETRIES 10
/* Appends ops after the node's own, in the same multi (the ACL change
 * notification); may first create znodes they need, outside it. */
typedef int fl_msz_node_extra_fn(fl_ms_zk_t *m, fl_zk_txn_t *x, const void *ctx,
                                 fl_error_t *err);
/* Sets the znode at path (root included) to text, or deletes it when
 * text is NULL (a missing one: 0, nothing written), creating its parents
 * first; then extra (may be NULL) adds its ops. Conditional on the
 * version read just before, fenced by the epoch, read again when another
 * writer raced us, up to FL_MSZ_NODE_RETRIES times; still racing:
 * STATE, "Failed to update <what> after ..." (what_fmt and its
 * arguments name the record). */
int fl_msz_node_put(fl_ms_zk_t *m, const char *path, const char *text,
                    fl_msz_node_extra_fn *extra, const void *ctx, fl_error_t *err,
                    const char *what_fmt, ...) __attribute__((format(printf, 7, 8)));
/* Reads the znode at path as a NUL-terminated string (fl_malloc'd, into
 * *text; NULL when the znode is gone). A NUL inside is CORRUPT, naming
 * what (e.g. "ACL document"). buf is scratch. */
int fl_msz_node_text(fl_ms_zk_t *m, const char *path, const char *what, fl_buf_t *buf,
                     char **text, fl_error_t *err);
typedef int fl_msz_node_child_fn(fl_ms_zk_t *m, const char *child, void *ctx, fl_error_t *err);
/* Calls each for every child name of the znode at dir (root included),
 * in strcmp order, until one fails; a missing dir has none. */
int fl_msz_node_children(fl_ms_zk_t *m, const char *dir, fl_msz_node_child_fn *each, void *ctx,
                         fl_error_t *err);

/* ---- ACLs (metastore_zk_acl.c) ---- */
/* Reads every /fluss-acls/<TYPE>/<name> (all or nothing), in the
 * cache's order; free with fl_ms_acl_free. */
int fl_msz_acls_load(fl_ms_zk_t *m, fl_ms_acl_node_t **out, size_t *count, fl_error_t *err);
int fl_msz_acl_put(fl_metastore_t *ms, int32_t type, const char *name, const char *json,
                   fl_error_t *err);

/* ---- SCRAM credentials (metastore_zk_scram.c) ---- */
/* Reads every /fluss-scram/<mechanism>/<user> (all or nothing), in the
 * cache's order; free with fl_ms_scram_free. */
int fl_msz_scram_load(fl_ms_zk_t *m, fl_ms_scram_node_t **out, size_t *count, fl_error_t *err);
int fl_msz_scram_put(fl_metastore_t *ms, const char *user, const char *mechanism,
                     const char *credential, fl_error_t *err);

#endif
