/*
 * kv_prewrite.h — a bucket's pre-write buffer (Fluss's KvPreWriteBuffer):
 * the row changes the kv tablet has made and appended to the changelog but
 * not yet written to RocksDB, each tagged with the changelog offset that
 * carries it. Reads look here before RocksDB (read-your-writes); changes
 * go to RocksDB only once the high watermark has passed their offset, so
 * RocksDB never holds a change the log could still lose.
 *
 * Entries are kept in offset order (a list) and the newest per key in a
 * hash table (open addressing, linear probing, each slot holding the key's
 * hash so that a probe touches an entry only when the hashes match); an
 * older entry of a key stays in the list until drained.
 * Each entry also says how it changes the bucket's row count (+1: the key
 * gets a row, -1: it loses its row, 0: the row changes), so the count can
 * move with the entries that reach RocksDB.
 *
 * Thread rule: one user at a time (the kv tablet's lock).
 */
#ifndef FL_KV_PREWRITE_H
#define FL_KV_PREWRITE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kv_store.h"

typedef struct fl_kv_pw_entry {
    struct fl_kv_pw_entry *lnext; /* offset order */
    uint32_t hash;
    bool in_hash;
    bool deleted;                 /* a delete: the key has no row */
    int8_t row_delta;             /* -1, 0, +1: the change to the row count */
    int64_t offset;
    size_t klen, vlen;
    uint8_t data[];               /* key ‖ value */
} fl_kv_pw_entry_t;

typedef struct fl_kv_pw_slot {
    uint32_t hash;
    fl_kv_pw_entry_t *e;          /* NULL: empty */
} fl_kv_pw_slot_t;

typedef struct fl_kv_prewrite {
    fl_kv_pw_slot_t *slots;
    size_t slot_count;            /* power of two, at least twice keys */
    size_t keys;                  /* entries in the hash */
    fl_kv_pw_entry_t *head, *tail;
    size_t entries;
    size_t bytes;                 /* key + value bytes held */
} fl_kv_prewrite_t;

typedef enum fl_kv_pw_lookup {
    FL_KV_PW_MISS = 0, /* not here: ask RocksDB */
    FL_KV_PW_VALUE,    /* the key's newest value */
    FL_KV_PW_DELETED,  /* deleted here: RocksDB's row is stale */
} fl_kv_pw_lookup_t;

void fl_kv_prewrite_init(fl_kv_prewrite_t *pw);
void fl_kv_prewrite_free(fl_kv_prewrite_t *pw);
/* Drops every entry. */
void fl_kv_prewrite_clear(fl_kv_prewrite_t *pw);
/* The newest entry of key; *val / *vlen point into the buffer until it
 * changes. */
fl_kv_pw_lookup_t fl_kv_prewrite_get(const fl_kv_prewrite_t *pw, const uint8_t *key, size_t klen,
                                     const uint8_t **val, size_t *vlen);
/* A change of key at a changelog offset (not below the last one put);
 * val NULL = delete. row_delta: -1, 0 or +1 (see above). */
void fl_kv_prewrite_put(fl_kv_prewrite_t *pw, const uint8_t *key, size_t klen, const uint8_t *val,
                        size_t vlen, int64_t offset, int row_delta);
/* Moves every entry of src, in order, into dst; src is empty after. */
void fl_kv_prewrite_move(fl_kv_prewrite_t *dst, fl_kv_prewrite_t *src);
/* The entries with offset < upto, in offset order (an array to free with
 * fl_free; NULL when *n is 0), in one walk of the list; *row_delta (if not
 * NULL) the sum of their row deltas (fl_kv_prewrite_row_delta). The
 * entries stay valid until released, and their key, value, offset and kind
 * never change: a committer may stage them without the tablet's lock while
 * other entries are put. */
const fl_kv_pw_entry_t **fl_kv_prewrite_collect(const fl_kv_prewrite_t *pw, int64_t upto,
                                                size_t *n, int64_t *row_delta);
/* Adds collected entries to w (v is reordered): in key order, so that
 * RocksDB's memtable inserts move forward through its skiplist instead of
 * searching it from the top for each key, and of each key only the newest
 * (the one RocksDB would keep). */
void fl_kv_prewrite_stage_entries(const fl_kv_pw_entry_t **v, size_t n, fl_kv_write_t *w);
/* The sum of the row deltas of the entries with offset < upto: how the
 * row count moves when they reach RocksDB. */
int64_t fl_kv_prewrite_row_delta(const fl_kv_prewrite_t *pw, int64_t upto);
/* Drops the entries with offset < upto (after their commit). */
void fl_kv_prewrite_release(fl_kv_prewrite_t *pw, int64_t upto);
/* Visits the newest entry of every key whose key starts with prefix. */
typedef void (*fl_kv_pw_visit_fn)(void *arg, const fl_kv_pw_entry_t *e);
void fl_kv_prewrite_visit(const fl_kv_prewrite_t *pw, const uint8_t *prefix, size_t plen,
                          fl_kv_pw_visit_fn fn, void *arg);
#endif
