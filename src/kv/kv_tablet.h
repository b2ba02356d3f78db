/*
 * kv_tablet.h — the primary-key state of one bucket (Fluss's KvTablet):
 * RocksDB (kv_store.h) plus the pre-write buffer (kv_prewrite.h), written
 * through the bucket's log, which is its write-ahead log.
 *
 * A put (PUT_KV's KvRecordBatch for this bucket) reads each key's current
 * row (this batch's own earlier changes, then the pre-write buffer, then
 * RocksDB), merges (kv_merge.h), and writes the changelog records (+I, -U,
 * +U, -D; table.changelog.image) into one batch in the table's log format,
 * with the KV batch's writer id and sequence. The batch is appended to the
 * log — idempotence is the log's — and only then do the changes enter the
 * pre-write buffer; a refused or duplicate batch changes nothing. A batch
 * that changes nothing is still appended, empty, so the writer's sequence
 * moves on. Changes go to RocksDB once the high watermark passes their
 * offsets, with the next offset to replay: written by a committer thread
 * (commit_submit) while the next put runs, sorted by key; the buffer keeps
 * them readable until RocksDB has them.
 *
 * A new key of a table with an auto-increment column gets the bucket's
 * next value (Fluss's AutoIncrementManager): blocks of
 * table.auto-increment.cache-size values are reserved durably through
 * the table's autoinc_reserve before any is used, so a restart (kill -9
 * included) skips the rest of a block instead of handing a value out
 * twice; updates keep the stored value.
 *
 * Opening replays the changelog from RocksDB's applied offset to the log
 * end, so the state after a crash is RocksDB's prefix plus the log.
 *
 * The bucket's row count (Fluss's KvTablet rowCount, GET_TABLE_STATS) is
 * kept exact: each pre-write entry knows whether it adds or removes the
 * key's row (the put read the old row anyway), the count moves with the
 * entries that reach RocksDB and is committed with the applied offset. A
 * replay moves it by the changelog's change types (+I/+U add a row, -U/-D
 * take one away), which holds whatever RocksDB kept of the writes after
 * the committed pair. A store without a usable count (written before it
 * existed, after the log lost changes, or one the changelog would take
 * below zero) counts its keys once at open. Tables with
 * table.changelog.image WAL keep no count, as in Fluss (their changelog
 * does not tell an insert from an update).
 *
 * Thread rule: every function is safe from any thread: puts (and replay)
 * hold the write lock, reads the read lock, RocksDB writes commit_lock
 * (see below). Never on a network loop.
 */
#ifndef FL_KV_TABLET_H
#define FL_KV_TABLET_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "common_buf.h"
#include "common_error.h"
#include "kv_prewrite.h"
#include "kv_snapshot.h"
#include "kv_store.h"
#include "kv_log.h"
#include "kv_table.h"

struct fl_kv_tablet;
typedef struct fl_kv_tablet {
    pthread_rwlock_t lock;
    fl_kv_log_t log;        /* the bucket's log, as its owner (the replica) lends it */
    char *dir;
    fl_kv_store_t *store;   /* (lock) */
    fl_kv_prewrite_t pw;    /* (lock) */
    bool failed;            /* (lock) a RocksDB write failed: refuse everything */
    bool rows_kept;         /* the row count is kept (not a WAL changelog image) */
    /* (lock) the bucket's block of auto-increment values, durably
     * reserved: next..end; empty when next > end. Not kept across a close:
     * the rest of a block is skipped for good, never handed out twice. */
    int64_t autoinc_next, autoinc_end;
    int64_t recovered_records;
    int64_t recovery_ms;
    /* KV snapshots (kv_tablet_snapshot.c): one at a time, under snap_lock */
    pthread_mutex_t snap_lock;
    char *remote_dir;           /* the bucket's snapshot directory; NULL: none */
    int64_t snap_next_id;       /* (snap_lock) */
    int64_t snap_last_offset;   /* (snap_lock) log offset of the newest snapshot, 0: none */
    /* RocksDB writes (commits of the pre-write buffer below the high
     * watermark): one committer at a time, under commit_lock, which also
     * guards the store's applied offset and row count. A commit collects
     * its entries under the write lock, writes RocksDB without it (the
     * entries stay readable in the buffer meanwhile) and drops them under
     * the write lock again. Lock order: commit_lock, lock, commit_mu. */
    pthread_mutex_t commit_lock;
    pthread_mutex_t commit_mu;
    pthread_cond_t commit_cond; /* commit_queued or commit_running went down */
    bool commit_queued;         /* (commit_mu, set under lock) a commit job is pending */
    bool commit_moved;          /* (commit_mu) told the watermark moved while queued */
    int commit_running;         /* (commit_mu) commit jobs between their start and end */
    atomic_bool wal_kept;       /* the store writes RocksDB's WAL (kv_table.h has_nested) */
    int64_t rows_stored;        /* (lock) the store's row count as of the last commit */
    /* runs fl_kv_tablet_commit_job(kt) soon on another thread (the
     * server's kv committer); NULL: puts commit before they return */
    void (*commit_submit)(void *ctx, struct fl_kv_tablet *kt);
    void *commit_ctx;
    /* told when the tablet closes (the server's memory budget) */
    void (*on_close)(void *ctx, struct fl_kv_tablet *kt);
    void *on_close_ctx;
} fl_kv_tablet_t;

/* Opens the store in dir and replays the bucket's log after its applied
 * offset, with the table as it is now. */
int fl_kv_tablet_open(const char *dir, fl_kv_log_t log, const fl_kv_table_t *t,
                      const fl_kv_store_options_t *o, fl_kv_tablet_t **out, fl_error_t *err);
/* deleted: the table is gone (no flush). */
void fl_kv_tablet_close(fl_kv_tablet_t *kt, bool deleted);

typedef struct fl_kv_put {
    const uint8_t *records;  /* one KvRecordBatch */
    size_t len;
    const int32_t *targets;  /* partial update columns, n_targets = 0: all */
    size_t n_targets;
    bool overwrite;          /* agg_mode OVERWRITE: bypass the merge engine */
    int64_t now_ms;
} fl_kv_put_t;

int fl_kv_tablet_put(fl_kv_tablet_t *kt, const fl_kv_table_t *t, const fl_kv_put_t *p,
                     fl_kv_appended_t *res, fl_error_t *err);

/* An encoded primary key of the bucket. */
typedef struct fl_kv_key {
    const uint8_t *data;
    size_t len;
} fl_kv_key_t;

/* LOOKUP with insert_if_not_exists (Fluss's KeyRecordBatch put): each key
 * without a row gets one holding only the key — a partial update of the
 * primary-key columns, with its checks — and, if the table has one, the
 * next auto-increment value; changelog +I. Keys that have a row by now
 * are left alone. base: NULL, or a row of the latest schema's width with
 * the bucket's partition columns set (all else is ignored). One changelog
 * batch without writer id; *res as for a put. A key that does not decode
 * as the table's primary key is CORRUPT_RECORD_EXCEPTION. */
int fl_kv_tablet_insert_keys(fl_kv_tablet_t *kt, const fl_kv_table_t *t, const fl_kv_key_t *keys,
                             size_t n, const fl_row_t *base, int64_t now_ms,
                             fl_kv_appended_t *res, fl_error_t *err);

/* The stored value (schema id ‖ row) of key into *val; *found false when
 * the key has no row. */
int fl_kv_tablet_lookup(fl_kv_tablet_t *kt, const uint8_t *key, size_t klen, fl_buf_t *val,
                        bool *found, fl_error_t *err);

/* The values of n keys (vals[i] replaced, found[i]), one read lock and
 * one batched RocksDB MultiGet for the keys the pre-write buffer lacks. */
int fl_kv_tablet_lookup_many(fl_kv_tablet_t *kt, size_t n, const uint8_t *const *keys,
                             const size_t *klens, fl_buf_t *vals, bool *found, fl_error_t *err);

/* The same as fl_kv_tablet_lookup without waiting: *would_block is set (and nothing else) when
 * a writer holds the tablet or the value is not in memory (pre-write
 * buffer, memtables, block cache). Never does I/O; for network loops. */
int fl_kv_tablet_lookup_nowait(fl_kv_tablet_t *kt, const uint8_t *key, size_t klen, fl_buf_t *val,
                               bool *found, bool *would_block, fl_error_t *err);

/* The stored values of every key starting with prefix (in key order),
 * each appended to vals with its length in lens. */
typedef struct fl_kv_values {
    fl_buf_t bytes;
    size_t count, cap;
    size_t *off, *len;
} fl_kv_values_t;
void fl_kv_values_init(fl_kv_values_t *v);
void fl_kv_values_free(fl_kv_values_t *v);
int fl_kv_tablet_prefix_lookup(fl_kv_tablet_t *kt, const uint8_t *prefix, size_t plen,
                               size_t limit, fl_kv_values_t *out, fl_error_t *err);

/* A consistent RocksDB checkpoint of the bucket in dir (must not exist):
 * the pre-write buffer is written down to the high watermark first, and
 * *log_offset is the changelog offset the checkpoint covers up to
 * (exclusive) — where a reader of the snapshot follows the log on —
 * *row_count its rows (FL_KV_ROW_COUNT_UNKNOWN when not kept; the
 * checkpoint holds it too, beside the offset). Blocks writers while
 * RocksDB links the files. */
int fl_kv_tablet_checkpoint(fl_kv_tablet_t *kt, const char *dir, int64_t *log_offset,
                            int64_t *row_count, fl_error_t *err);

/* The bucket's rows as of one changelog offset, for a reader that cannot
 * replay the changelog below it (a lake bootstrapped after the changelog
 * expired): the pre-write buffer is written down to the high watermark,
 * *log_offset is set to the offset the image covers up to (exclusive)
 * (before fn's first call) and a point-in-time view of RocksDB taken,
 * all under commit_lock; then,
 * with no lock held (puts and commits go on), fn sees every row in the
 * latest schema's layout (borrowed for the call; it may change its
 * cells), in key order. fn's non-zero return (err set) ends the visit and
 * is returned. KV_STORAGE_EXCEPTION for a stored value that does not
 * decode. The caller holds a use of the tablet throughout. */
typedef int (*fl_kv_row_fn)(void *arg, fl_row_t *row, fl_error_t *err);
int fl_kv_tablet_image(fl_kv_tablet_t *kt, const fl_kv_table_t *t, fl_kv_row_fn fn, void *arg,
                       int64_t *log_offset, fl_error_t *err);

/* The bucket's rows up to the high watermark: RocksDB's count plus the
 * pre-write buffer's changes below the high watermark (not yet flushed
 * in the durable flush mode). INVALID_TABLE_EXCEPTION when the table keeps
 * no count (table.changelog.image WAL). */
int fl_kv_tablet_row_count(fl_kv_tablet_t *kt, int64_t *out, fl_error_t *err);

/* Where the tablet's snapshots live (kv_snapshot.h); reads the snapshots
 * already there to continue their ids. */
int fl_kv_tablet_set_remote(fl_kv_tablet_t *kt, const char *remote_dir, fl_error_t *err);

/* Takes a snapshot when the changelog moved past the newest one: a
 * checkpoint beside the store, uploaded as the next snapshot id, then
 * retention (keep the newest `keep` and the pinned ones). *taken says
 * whether one was taken. Not on a network loop (file copies). */
typedef struct fl_kv_snapshot_hooks {
    fl_kv_snapshot_pinned_fn pinned; /* leased snapshots retention keeps; NULL: none */
    fl_kv_snapshot_commit_fn commit; /* the commit point; NULL: _METADATA written here */
    void *ctx;                       /* both's */
} fl_kv_snapshot_hooks_t;

/* hooks NULL: none. A commit that fails (refused, or not answered) uses
 * up its snapshot id: the next one never writes into a directory whose
 * commit may still land. */
int fl_kv_tablet_snapshot(fl_kv_tablet_t *kt, int64_t now_ms, size_t keep,
                          const fl_kv_snapshot_hooks_t *hooks, bool *taken, fl_error_t *err);

/* The memtable size of the tablet's store from now on. */
int fl_kv_tablet_set_write_buffer(fl_kv_tablet_t *kt, size_t bytes, fl_error_t *err);

/* Writes the pre-write buffer's changes below the high watermark to
 * RocksDB and drops them from the buffer; waits for a commit running on
 * another thread first. The put path starts one itself (on commit_submit's
 * thread, or before it returns); for watermark moves and tests. */
int fl_kv_tablet_flush_hw(fl_kv_tablet_t *kt, fl_error_t *err);

/* What commit_submit's thread runs: fl_kv_tablet_flush_hw until nothing
 * below the high watermark is left, then the job is done (a later put,
 * or fl_kv_tablet_committed, submits the next). Errors leave the tablet
 * failed, with one WARN. */
void fl_kv_tablet_commit_job(fl_kv_tablet_t *kt);

/* The log's owner says what is committed moved (the high watermark, or
 * the flushed offset where answers wait for fsyncs): changes the buffer
 * holds below it go to RocksDB on commit_submit's thread, not at the
 * next put. A replicated bucket's changes wait for its followers, so a
 * put's own commit job finds nothing; this is what brings them in. Cheap
 * (no job when one is queued or nothing waits); never waits for the
 * tablet's lock. Without commit_submit: nothing (puts commit inline). */
void fl_kv_tablet_committed(fl_kv_tablet_t *kt);
#endif
