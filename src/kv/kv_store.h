/*
 * kv_store.h — the RocksDB database of one primary-key bucket (Fluss's
 * RocksDBKv): the bucket's current rows, keyed by the encoded physical
 * primary key, valued by the stored value (int16 LE schema id ‖ row,
 * protocol.md §5.2).
 *
 * The bucket's changelog is its write-ahead log, so RocksDB's own WAL is
 * off: every write batch also stores the next changelog offset it covers
 * in a column family of its own (FL_KV_META_FAMILY), so that the default
 * column family holds rows only — a snapshot of it is what the Java client
 * opens and iterates. Flushes are atomic across both families and RocksDB
 * flushes memtables in order, so after a crash the database holds a prefix
 * of the writes and the "applied offset" read at open says where the
 * changelog replay starts. SST files use table format 5 with XXH64
 * checksums, partitioned index and filter blocks, LZ4 (ZSTD on the two
 * deepest levels, as Fluss): all of which the Java client's RocksDB (6.20)
 * reads.
 *
 * The bucket's row count (GET_TABLE_STATS) sits beside the applied offset
 * and is written in the same batch, so the pair always describes one
 * state: the rows the changelog holds up to that offset. It is absent in
 * stores written before it existed and for tables that do not keep it
 * (table.changelog.image WAL); the kv tablet then counts or refuses.
 *
 * | family  | key              | value                                      |
 * |---------|------------------|--------------------------------------------|
 * | default | pk bytes         | int16 LE schema id ‖ row bytes             |
 * | meta    | "applied-offset" | int64 LE next changelog offset not applied |
 * | meta    | "row-count"      | int64 LE rows up to the applied offset     |
 *
 * Memory: the block cache is the tablet server's, shared by every store it
 * opens (borrowed); the write buffers are per store (options below).
 *
 * Thread rule: RocksDB's — any number of readers and one writer at a time;
 * the kv tablet serialises writers. Never called on a network loop.
 */
#ifndef FL_KV_STORE_H
#define FL_KV_STORE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common_buf.h"
#include "common_error.h"

#define FL_KV_META_FAMILY "fluss-c.meta"
#define FL_KV_ROW_COUNT_UNKNOWN (-1) /* no row count stored / kept */

typedef struct fl_kv_store fl_kv_store_t;
typedef struct fl_kv_write fl_kv_write_t;
typedef struct rocksdb_cache_t fl_kv_cache_t; /* rocksdb_cache_t */

#define FL_KV_LEVELS_MAX 16

typedef struct fl_kv_store_options {
    fl_kv_cache_t *block_cache;   /* shared, borrowed; NULL = RocksDB's default per store */
    size_t write_buffer_bytes;    /* per memtable; 0 = 4 MiB */
    int write_buffer_count;       /* memtables kept; 0 = 2 */
    bool wal;                     /* keep RocksDB's own WAL (see kv_table.h has_nested) */
    /* kv.rocksdb.compression.per.level (fl_kv_compression_parse); 0 levels:
     * Fluss's default, LZ4 for levels 0-4 and ZSTD for 5-6 */
    int compression[FL_KV_LEVELS_MAX];
    int compression_levels;
} fl_kv_store_options_t;

/* Fluss's kv.rocksdb.compression.per.level: a comma list of NO, SNAPPY,
 * LZ4, ZSTD (any case, blanks around items ignored), the n-th for level
 * n-1, the last for every deeper level; into out (RocksDB's compression
 * types), *n items. INVALID_ARG naming the item otherwise. */
int fl_kv_compression_parse(const char *text, int *out, int *n, fl_error_t *err);

/* A block cache of capacity bytes to share between stores. */
fl_kv_cache_t *fl_kv_cache_new(size_t capacity);
void fl_kv_cache_destroy(fl_kv_cache_t *c);

/* Opens (creating) the database in dir. KV_STORAGE_EXCEPTION with
 * RocksDB's message on failure. */
int fl_kv_store_open(const char *dir, const fl_kv_store_options_t *o, fl_kv_store_t **out,
                     fl_error_t *err);
/* flush: persist the memtables first (a clean close needs no replay). */
void fl_kv_store_close(fl_kv_store_t *s, bool flush);
/* The next changelog offset not yet in the store (0 for a new one). */
int64_t fl_kv_store_applied_offset(const fl_kv_store_t *s);
/* The row count stored with the applied offset: 0 for a new store,
 * FL_KV_ROW_COUNT_UNKNOWN when the store has none. */
int64_t fl_kv_store_row_count(const fl_kv_store_t *s);

/* The stored value of key into *val (replaced), *found false when absent. */
int fl_kv_store_get(fl_kv_store_t *s, const uint8_t *key, size_t klen, fl_buf_t *val, bool *found,
                    fl_error_t *err);

/* The stored values of n keys at once (RocksDB's batched MultiGet), left
 * where RocksDB has them (pinned cached blocks; memtable values copied
 * once) instead of copied out again: for lookups and for a put that reads
 * a batch's old rows ahead. */
typedef struct fl_kv_pinned fl_kv_pinned_t;
int fl_kv_store_multi_get_pinned(fl_kv_store_t *s, size_t n, const uint8_t *const *keys,
                                 const size_t *klens, fl_kv_pinned_t **out, fl_error_t *err);
/* The i-th key's value (valid until fl_kv_pinned_free); false: no row. */
bool fl_kv_pinned_get(const fl_kv_pinned_t *p, size_t i, const uint8_t **v, size_t *vlen);
void fl_kv_pinned_free(fl_kv_pinned_t *p);


/* The same as fl_kv_store_get, from memory only (memtables and block cache): *incomplete is
 * set, and nothing else, when the answer needs a read from disk. Never
 * blocks on I/O. */
int fl_kv_store_get_cached(fl_kv_store_t *s, const uint8_t *key, size_t klen, fl_buf_t *val,
                           bool *found, bool *incomplete, fl_error_t *err);

/* Visits the rows whose key starts with prefix[0, plen) (plen 0: every
 * row) in key order until fn returns false. */
typedef bool (*fl_kv_visit_fn)(void *arg, const uint8_t *key, size_t klen, const uint8_t *val,
                               size_t vlen);
int fl_kv_store_scan(fl_kv_store_t *s, const uint8_t *prefix, size_t plen, fl_kv_visit_fn fn,
                     void *arg, fl_error_t *err);

/* A point-in-time view of the rows (a RocksDB snapshot): what the store
 * held when it was taken, whatever is written after. Free it before the
 * store closes. */
typedef struct fl_kv_view fl_kv_view_t;
fl_kv_view_t *fl_kv_store_view(fl_kv_store_t *s);
/* Visits every row of the view in key order until fn returns false. */
int fl_kv_view_scan(fl_kv_view_t *v, fl_kv_visit_fn fn, void *arg, fl_error_t *err);
void fl_kv_view_free(fl_kv_view_t *v);

/* A write batch: puts and deletes applied atomically by _commit. */
fl_kv_write_t *fl_kv_write_new(void);
void fl_kv_write_destroy(fl_kv_write_t *w);
void fl_kv_write_put(fl_kv_write_t *w, const uint8_t *key, size_t klen, const uint8_t *val,
                     size_t vlen);
void fl_kv_write_delete(fl_kv_write_t *w, const uint8_t *key, size_t klen);
/* Applies w and records applied_offset (the next changelog offset not
 * covered) with row_count, the rows of the store once w is applied
 * (FL_KV_ROW_COUNT_UNKNOWN: not kept; a stored count is removed); w is
 * emptied. */
int fl_kv_store_commit(fl_kv_store_t *s, fl_kv_write_t *w, int64_t applied_offset,
                       int64_t row_count, fl_error_t *err);

/* Writes the memtables to SST files (blocks). */
int fl_kv_store_flush(fl_kv_store_t *s, fl_error_t *err);
/* A RocksDB checkpoint (hard-linked SSTs) in dir, which must not exist. */
int fl_kv_store_checkpoint(fl_kv_store_t *s, const char *dir, fl_error_t *err);
/* From now on writes go to RocksDB's WAL too (a table that gained a
 * column the changelog cannot carry, kv_table.h has_nested); the
 * memtables are flushed first. Once on, it stays on until the store
 * closes. Called under the tablet's write lock (no write in between). */
int fl_kv_store_keep_wal(fl_kv_store_t *s, fl_error_t *err);
/* Changes the memtable size of an open store (RocksDB's dynamic option);
 * later memtables take it. */
int fl_kv_store_set_write_buffer(fl_kv_store_t *s, size_t bytes, fl_error_t *err);

#endif
