/*
 * crash_workload.h — the workloads the storage-fault tools run through the
 * recording seam (crash_model.h): a bucket's log through the server's
 * replica manager (appends of 1-3 batches, some of idempotent writers,
 * segment rolls, flushes, one retention drop, a clean close), in the
 * default or the sync durability mode; and the embedded metastore (DDL).
 * Each records what it wrote and, after each step, what is owed from then
 * on (marks), for the checkers of crash_enum.c and corrupt_enum.c.
 */
#ifndef FL_CRASH_WORKLOAD_H
#define FL_CRASH_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crash_model.h"
#include "metastore.h"
#include "replica_manager.h"

#define CW_KV_KEYS 64

typedef struct written {
    int64_t base, next;  /* offsets */
    int64_t timestamp;
    int64_t writer_id;
    int32_t sequence;
    size_t len;
    uint8_t *bytes;      /* as stored (offsets and timestamp assigned) */
} written_t;

/* After operation `ops`, batches below `offset` are owed: `written` (the
 * write returned) and `durable` (a flush returned). log_start: the first
 * offset retention had removed up to by then. Metastore: `meta` mutations
 * had returned. */
typedef struct mark {
    size_t ops;
    int64_t written, durable, log_start;
    int meta;
} mark_t;

typedef struct workload {
    const char *name;
    bool sync_mode; /* log.flush.mode: sync */
    size_t nw, capw;
    written_t *w;
    size_t nm, capm;
    mark_t *marks;
    int meta_done;
    char **meta_digests; /* digest after mutation i (0: empty store) */
    int meta_cap;
    /* kv: the table after put i (score per key, -1: no row) and the log
     * end then; entry 0 is the empty table */
    size_t kv_count;
    int64_t (*kv_models)[CW_KV_KEYS];
    int64_t *kv_ends;
    /* RocksDB's threads do not survive fork(): each kv state is checked by
     * a fresh exec of the tool, which reads the models from this file */
    char kv_expect[256];
} workload_t;

typedef struct cfg {
    int appends;
    uint64_t segment_bytes;
    int flush_every;
    int torn_max;
    int min_states;
    unsigned seed;
    bool verbose;
    bool mut_nodirsync;
    bool unordered;
} cfg_t;

#define CE_DB "db"
#define CE_TABLE "t"
#define CE_TABLE_ID 7

void wl_mark(workload_t *wl, const crash_log_t *log, int64_t written, int64_t durable,
             int64_t log_start);
/* What is owed at a prefix: the last mark at or before it. */
mark_t wl_owed(const workload_t *wl, size_t prefix);
void wl_free(workload_t *wl);
/* A replica manager over dir configured as the log workload ran it. */
void cw_rm_open(fl_replica_manager_t *rm, const char *dir, const workload_t *wl, const cfg_t *c);
/* ... and the workload's bucket in it (recovered): 0, or the error with
 * the manager closed again. */
int cw_bucket_open(fl_replica_manager_t *rm, const char *dir, const workload_t *wl,
                   const cfg_t *c, fl_replica_t **r, fl_error_t *err);
/* The index of the written batch with that base offset, or -1. */
long cw_find_written(const workload_t *wl, int64_t base);
/* Run a workload on dir (an existing empty directory), recording into log. */
int cw_log_workload(workload_t *wl, const cfg_t *c, const char *dir, crash_log_t *log);
int cw_meta_workload(workload_t *wl, const cfg_t *c, const char *dir, crash_log_t *log);
/* The metastore's databases and tables as one comparable string. */
char *cw_meta_digest(fl_metastore_t *ms);
/* The primary-key workload (crash_kv.c) and its check of a crash state:
 * counts a refused recovery, an owed change lost, a key whose value is
 * not the table's at the recovered log end. */
int cw_kv_workload(workload_t *wl, const cfg_t *c, const char *dir, crash_log_t *log);
/* The models to a file and back (the exec'd checker's copy). */
int cw_kv_save(const workload_t *wl, const char *path);
int cw_kv_load(workload_t *wl, const char *path);
void ce_check_kv(const workload_t *wl, const cfg_t *c, const char *dir, mark_t owed,
                 crash_mode_t mode, int *refused, int *lost, int *state_bad, char *msg,
                 size_t cap);

#endif
