/*
 * kv_store.c — one bucket's RocksDB (kv_store.h), over RocksDB's C API.
 * The applied offset and the row count are written in every commit's
 * batch into the meta column family and read once at open. Stores made
 * before the meta column family kept the offset under the empty key of
 * the default one: read once, then deleted by the first commit.
 */
#include "kv_store.h"

#include <rocksdb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common_alloc.h"
#include "common_log.h"

struct fl_kv_store {
    rocksdb_t *db;
    rocksdb_column_family_handle_t *cf[2]; /* default (rows), meta */
    rocksdb_options_t *opts, *meta_opts;
    rocksdb_block_based_table_options_t *table_opts;
    rocksdb_readoptions_t *ropts;
    rocksdb_readoptions_t *ropts_cached; /* read_tier kBlockCacheTier: never does I/O */
    rocksdb_writeoptions_t *wopts;
    int64_t applied_offset;
    int64_t row_count;  /* FL_KV_ROW_COUNT_UNKNOWN: none stored */
    bool legacy_meta;   /* the empty key of the default family holds an offset */
    bool wal;           /* writes go to RocksDB's own WAL */
};

struct fl_kv_write {
    rocksdb_writebatch_t *wb;
};

static const char fl_kv_meta_key[] = "applied-offset";
static const char fl_kv_count_key[] = "row-count";
static const char fl_kv_legacy_key[1] = {0}; /* used with length 0 */

/* RocksDB counts every key comparison and block read in a thread-local
 * perf context by default (kEnableCount): from a shared library each
 * count is a __tls_get_addr call, a sixth of a memtable insert's time.
 * We read none of them: every thread that calls RocksDB turns them off
 * once. */
static __thread bool fl_kv_perf_off;

static inline void fl_kv_thread_setup(void) {
    if (!fl_kv_perf_off) {
        rocksdb_set_perf_level(rocksdb_disable);
        fl_kv_perf_off = true;
    }
}

static int fl_kv_fail(fl_error_t *err, const char *what, char *rerr) {
    int rc = fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION, "RocksDB %s failed: %s", what,
                        rerr ? rerr : "unknown error");
    rocksdb_free(rerr);
    return rc;
}

int fl_kv_compression_parse(const char *text, int *out, int *n, fl_error_t *err) {
    static const struct {
        const char *name;
        int type;
    } names[] = {{"NO", rocksdb_no_compression},
                 {"SNAPPY", rocksdb_snappy_compression},
                 {"LZ4", rocksdb_lz4_compression},
                 {"ZSTD", rocksdb_zstd_compression}};
    *n = 0;
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t') p++;
        size_t len = strcspn(p, ",");
        size_t end = len;
        while (end > 0 && (p[end - 1] == ' ' || p[end - 1] == '\t')) end--;
        int type = -1;
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            if (strlen(names[i].name) == end && strncasecmp(p, names[i].name, end) == 0)
                type = names[i].type;
        if (type < 0)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "kv.rocksdb.compression.per.level: '%.*s' is not one of NO, "
                              "SNAPPY, LZ4, ZSTD",
                              (int)(end > 64 ? 64 : end), p);
        if (*n == FL_KV_LEVELS_MAX)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "kv.rocksdb.compression.per.level: more than %d levels",
                              FL_KV_LEVELS_MAX);
        out[(*n)++] = type;
        if (p[len] != ',') break;
        p += len + 1;
    }
    return 0;
}

fl_kv_cache_t *fl_kv_cache_new(size_t capacity) {
    return rocksdb_cache_create_lru(capacity);
}

void fl_kv_cache_destroy(fl_kv_cache_t *c) {
    if (c) rocksdb_cache_destroy(c);
}

static int64_t fl_kv_get_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return (int64_t)v;
}

static void fl_kv_put_le64(uint8_t *p, int64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

/* One int64 LE of the meta family into *v; *found false when absent. */
static int fl_kv_get_meta(fl_kv_store_t *s, const char *dir, const char *key, int64_t *v,
                          bool *found, fl_error_t *err) {
    char *rerr = NULL;
    size_t vlen = 0;
    char *p = rocksdb_get_cf(s->db, s->ropts, s->cf[1], key, strlen(key), &vlen, &rerr);
    if (rerr) return fl_kv_fail(err, "read of the meta column family", rerr);
    *found = p != NULL;
    int rc = 0;
    if (p && vlen == 8) *v = fl_kv_get_le64((const uint8_t *)p);
    else if (p)
        rc = fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION,
                        "The kv store in %s has a bad %s (%zu bytes).", dir, key, vlen);
    rocksdb_free(p);
    return rc;
}

/* The applied offset (meta family, else a legacy store's empty key) and
 * the row count, at open. */
static int fl_kv_read_meta(fl_kv_store_t *s, const char *dir, bool *has_offset,
                           fl_error_t *err) {
    bool found = false;
    int rc = fl_kv_get_meta(s, dir, fl_kv_meta_key, &s->applied_offset, has_offset, err);
    if (!rc && !*has_offset) {
        char *rerr = NULL;
        size_t vlen = 0;
        char *v = rocksdb_get(s->db, s->ropts, fl_kv_legacy_key, 0, &vlen, &rerr);
        if (rerr) return fl_kv_fail(err, "read of the applied offset", rerr);
        s->legacy_meta = *has_offset = v != NULL;
        if (v && vlen == 8) s->applied_offset = fl_kv_get_le64((const uint8_t *)v);
        else if (v)
            rc = fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION,
                            "The kv store in %s has a bad applied offset (%zu bytes).", dir,
                            vlen);
        rocksdb_free(v);
    }
    s->row_count = FL_KV_ROW_COUNT_UNKNOWN;
    if (!rc) rc = fl_kv_get_meta(s, dir, fl_kv_count_key, &s->row_count, &found, err);
    if (!rc && found && s->row_count < 0)
        rc = fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION,
                        "The kv store in %s has a negative row count %lld.", dir,
                        (long long)s->row_count);
    return rc;
}

int fl_kv_store_open(const char *dir, const fl_kv_store_options_t *o, fl_kv_store_t **out,
                     fl_error_t *err) {
    fl_kv_store_t *s = fl_calloc(1, sizeof(*s));
    s->opts = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(s->opts, 1);
    rocksdb_options_set_write_buffer_size(s->opts, o && o->write_buffer_bytes
                                                       ? o->write_buffer_bytes
                                                       : 4u << 20);
    /* arena blocks of an eighth of the memtable, so that a smaller memtable
     * set later (the server's budget) never starts out "full" */
    size_t wb = o && o->write_buffer_bytes ? o->write_buffer_bytes : 4u << 20;
    rocksdb_options_set_arena_block_size(s->opts, wb / 8 < 4096 ? 4096 : wb / 8);
    rocksdb_options_set_max_write_buffer_number(s->opts,
                                                o && o->write_buffer_count ? o->write_buffer_count
                                                                           : 2);
    /* a bloom filter over each memtable's keys: the read of a key's
     * current row before every upsert skips the skiplist search when the
     * key is new (most inserts) */
    rocksdb_options_set_memtable_prefix_bloom_size_ratio(s->opts, 0.05);
    rocksdb_options_set_memtable_whole_key_filtering(s->opts, 1);
    /* background work shares the machine with the network loops */
    rocksdb_options_set_max_background_jobs(s->opts, 2);
    rocksdb_options_set_max_open_files(s->opts, 256);
    rocksdb_options_set_info_log_level(s->opts, 3 /* ERROR */);
    rocksdb_options_set_keep_log_file_num(s->opts, 2);
    /* kv.rocksdb.compression.per.level; Fluss's default: LZ4 for levels
     * 0-4, ZSTD for 5-6 */
    int levels[7] = {rocksdb_lz4_compression, rocksdb_lz4_compression, rocksdb_lz4_compression,
                     rocksdb_lz4_compression, rocksdb_lz4_compression, rocksdb_zstd_compression,
                     rocksdb_zstd_compression};
    if (o && o->compression_levels > 0)
        rocksdb_options_set_compression_per_level(s->opts, o->compression,
                                                  (size_t)o->compression_levels);
    else
        rocksdb_options_set_compression_per_level(s->opts, levels, 7);
    s->table_opts = rocksdb_block_based_options_create();
    if (o && o->block_cache) rocksdb_block_based_options_set_block_cache(s->table_opts, o->block_cache);
    /* index and filter blocks live in the shared cache (memory stays
     * bounded), partitioned so that only their small top levels (pinned)
     * and the partitions in use take room there; level 0's are pinned
     * while their files live, since every read consults each of them */
    rocksdb_block_based_options_set_cache_index_and_filter_blocks(s->table_opts, 1);
    rocksdb_block_based_options_set_cache_index_and_filter_blocks_with_high_priority(
        s->table_opts, 1);
    rocksdb_block_based_options_set_index_type(
        s->table_opts, rocksdb_block_based_table_index_type_two_level_index_search);
    rocksdb_block_based_options_set_partition_filters(s->table_opts, 1);
    rocksdb_block_based_options_set_metadata_block_size(s->table_opts, 4096);
    rocksdb_block_based_options_set_pin_top_level_index_and_filter(s->table_opts, 1);
    rocksdb_block_based_options_set_pin_l0_filter_and_index_blocks_in_cache(s->table_opts, 1);
    rocksdb_block_based_options_set_filter_policy(s->table_opts,
                                                  rocksdb_filterpolicy_create_bloom_full(10));
    /* Readable by the Java client's RocksDB 6.20 (snapshots): table format
     * 5 with XXH64 block checksums (7.8's default XXH3 is unknown there;
     * CRC-32C is, but Debian's portable build computes it from tables, at
     * a sixth of XXH64's speed, for every block written or read) */
    rocksdb_block_based_options_set_format_version(s->table_opts, 5);
    rocksdb_block_based_options_set_checksum(s->table_opts, 3 /* kxxHash64 */);
    rocksdb_options_set_block_based_table_factory(s->opts, s->table_opts);
    /* the rows and the applied offset reach the SST files together: with
     * RocksDB's WAL off, only an atomic flush keeps the offset from ever
     * running ahead of the rows it claims */
    rocksdb_options_set_create_missing_column_families(s->opts, 1);
    rocksdb_options_set_atomic_flush(s->opts, 1);
    s->meta_opts = rocksdb_options_create_copy(s->opts);
    rocksdb_options_set_arena_block_size(s->meta_opts, 4096);
    s->ropts = rocksdb_readoptions_create();
    s->ropts_cached = rocksdb_readoptions_create();
    rocksdb_readoptions_set_read_tier(s->ropts_cached, 1 /* kBlockCacheTier */);
    s->wopts = rocksdb_writeoptions_create();
    rocksdb_writeoptions_disable_WAL(s->wopts, o && o->wal ? 0 : 1);
    s->wal = o && o->wal;
    char *rerr = NULL;
    const char *names[2] = {"default", FL_KV_META_FAMILY};
    const rocksdb_options_t *cfo[2] = {s->opts, s->meta_opts};
    s->db = rocksdb_open_column_families(s->opts, dir, 2, names, cfo, s->cf, &rerr);
    if (!s->db) {
        int rc = fl_kv_fail(err, "open", rerr);
        fl_kv_store_close(s, false);
        return rc;
    }
    bool has_offset = false;
    int rc = fl_kv_read_meta(s, dir, &has_offset, err);
    if (rc) {
        fl_kv_store_close(s, false);
        return rc;
    }
    /* a store that never committed is empty; one that did without a count
     * predates the count (or does not keep one) */
    if (!has_offset) s->row_count = 0;
    *out = s;
    return 0;
}

void fl_kv_store_close(fl_kv_store_t *s, bool flush) {
    if (!s) return;
    if (s->db) {
        if (flush) {
            fl_error_t e;
            if (fl_kv_store_flush(s, &e)) FL_WARN("kv store close: %s", e.msg);
        }
        for (int i = 0; i < 2; i++)
            if (s->cf[i]) rocksdb_column_family_handle_destroy(s->cf[i]);
        rocksdb_close(s->db);
    }
    if (s->ropts) rocksdb_readoptions_destroy(s->ropts);
    if (s->ropts_cached) rocksdb_readoptions_destroy(s->ropts_cached);
    if (s->wopts) rocksdb_writeoptions_destroy(s->wopts);
    if (s->opts) rocksdb_options_destroy(s->opts);
    if (s->meta_opts) rocksdb_options_destroy(s->meta_opts);
    if (s->table_opts) rocksdb_block_based_options_destroy(s->table_opts);
    fl_free(s);
}

int64_t fl_kv_store_applied_offset(const fl_kv_store_t *s) {
    return s->applied_offset;
}

int64_t fl_kv_store_row_count(const fl_kv_store_t *s) {
    return s->row_count;
}

int fl_kv_store_get(fl_kv_store_t *s, const uint8_t *key, size_t klen, fl_buf_t *val, bool *found,
                    fl_error_t *err) {
    fl_kv_thread_setup();
    char *rerr = NULL;
    size_t vlen = 0;
    char *v = rocksdb_get(s->db, s->ropts, (const char *)key, klen, &vlen, &rerr);
    if (rerr) return fl_kv_fail(err, "get", rerr);
    *found = v != NULL;
    fl_buf_reset(val);
    if (v) fl_buf_append(val, v, vlen);
    rocksdb_free(v);
    return 0;
}

int fl_kv_store_get_cached(fl_kv_store_t *s, const uint8_t *key, size_t klen, fl_buf_t *val,
                           bool *found, bool *incomplete, fl_error_t *err) {
    fl_kv_thread_setup();
    char *rerr = NULL;
    size_t vlen = 0;
    *incomplete = false;
    char *v = rocksdb_get(s->db, s->ropts_cached, (const char *)key, klen, &vlen, &rerr);
    if (rerr) {
        /* Status::Incomplete: the answer is on disk, not in memory */
        if (strncmp(rerr, "Result incomplete", 17) == 0) {
            rocksdb_free(rerr);
            *incomplete = true;
            return 0;
        }
        return fl_kv_fail(err, "get", rerr);
    }
    *found = v != NULL;
    fl_buf_reset(val);
    if (v) fl_buf_append(val, v, vlen);
    rocksdb_free(v);
    return 0;
}

struct fl_kv_pinned {
    size_t n;
    rocksdb_pinnableslice_t **v;
};

int fl_kv_store_multi_get_pinned(fl_kv_store_t *s, size_t n, const uint8_t *const *keys,
                                 const size_t *klens, fl_kv_pinned_t **out, fl_error_t *err) {
    fl_kv_thread_setup();
    fl_kv_pinned_t *p = fl_calloc(1, sizeof(*p));
    p->n = n;
    p->v = fl_calloc(n ? n : 1, sizeof(*p->v));
    char **errs = fl_calloc(n ? n : 1, sizeof(*errs));
    if (n)
        rocksdb_batched_multi_get_cf(s->db, s->ropts, s->cf[0], n, (const char *const *)keys,
                                     klens, p->v, errs, false);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (!errs[i]) continue;
        if (!rc) rc = fl_kv_fail(err, "multi-get", errs[i]);
        else rocksdb_free(errs[i]);
    }
    fl_free(errs);
    if (rc) {
        fl_kv_pinned_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

bool fl_kv_pinned_get(const fl_kv_pinned_t *p, size_t i, const uint8_t **v, size_t *vlen) {
    if (i >= p->n || !p->v[i]) return false;
    const char *d = rocksdb_pinnableslice_value(p->v[i], vlen);
    *v = (const uint8_t *)d;
    return d != NULL;
}

void fl_kv_pinned_free(fl_kv_pinned_t *p) {
    if (!p) return;
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i]) rocksdb_pinnableslice_destroy(p->v[i]);
    fl_free(p->v);
    fl_free(p);
}

int fl_kv_store_scan(fl_kv_store_t *s, const uint8_t *prefix, size_t plen, fl_kv_visit_fn fn,
                     void *arg, fl_error_t *err) {
    fl_kv_thread_setup();
    rocksdb_iterator_t *it = rocksdb_create_iterator(s->db, s->ropts);
    if (plen) rocksdb_iter_seek(it, (const char *)prefix, plen);
    else rocksdb_iter_seek_to_first(it);
    for (; rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
        size_t klen, vlen;
        const char *k = rocksdb_iter_key(it, &klen);
        if (klen == 0) continue; /* a legacy store's applied offset */
        if (plen && (klen < plen || memcmp(k, prefix, plen) != 0)) break;
        const char *v = rocksdb_iter_value(it, &vlen);
        if (!fn(arg, (const uint8_t *)k, klen, (const uint8_t *)v, vlen)) break;
    }
    char *rerr = NULL;
    rocksdb_iter_get_error(it, &rerr);
    rocksdb_iter_destroy(it);
    if (rerr) return fl_kv_fail(err, "scan", rerr);
    return 0;
}

struct fl_kv_view {
    fl_kv_store_t *store;
    const rocksdb_snapshot_t *snap;
    rocksdb_readoptions_t *ropts;
};

fl_kv_view_t *fl_kv_store_view(fl_kv_store_t *s) {
    fl_kv_thread_setup();
    fl_kv_view_t *v = fl_calloc(1, sizeof(*v));
    v->store = s;
    v->snap = rocksdb_create_snapshot(s->db);
    v->ropts = rocksdb_readoptions_create();
    rocksdb_readoptions_set_snapshot(v->ropts, v->snap);
    /* one pass over everything: keep the block cache for the readers */
    rocksdb_readoptions_set_fill_cache(v->ropts, 0);
    return v;
}

int fl_kv_view_scan(fl_kv_view_t *v, fl_kv_visit_fn fn, void *arg, fl_error_t *err) {
    fl_kv_thread_setup();
    rocksdb_iterator_t *it = rocksdb_create_iterator(v->store->db, v->ropts);
    for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
        size_t klen, vlen;
        const char *k = rocksdb_iter_key(it, &klen);
        if (klen == 0) continue; /* a legacy store's applied offset */
        const char *val = rocksdb_iter_value(it, &vlen);
        if (!fn(arg, (const uint8_t *)k, klen, (const uint8_t *)val, vlen)) break;
    }
    char *rerr = NULL;
    rocksdb_iter_get_error(it, &rerr);
    rocksdb_iter_destroy(it);
    if (rerr) return fl_kv_fail(err, "scan", rerr);
    return 0;
}

void fl_kv_view_free(fl_kv_view_t *v) {
    if (!v) return;
    rocksdb_readoptions_destroy(v->ropts);
    rocksdb_release_snapshot(v->store->db, v->snap);
    fl_free(v);
}

fl_kv_write_t *fl_kv_write_new(void) {
    fl_kv_write_t *w = fl_calloc(1, sizeof(*w));
    w->wb = rocksdb_writebatch_create();
    return w;
}

void fl_kv_write_destroy(fl_kv_write_t *w) {
    if (!w) return;
    rocksdb_writebatch_destroy(w->wb);
    fl_free(w);
}

void fl_kv_write_put(fl_kv_write_t *w, const uint8_t *key, size_t klen, const uint8_t *val,
                     size_t vlen) {
    rocksdb_writebatch_put(w->wb, (const char *)key, klen, (const char *)val, vlen);
}

void fl_kv_write_delete(fl_kv_write_t *w, const uint8_t *key, size_t klen) {
    rocksdb_writebatch_delete(w->wb, (const char *)key, klen);
}

int fl_kv_store_commit(fl_kv_store_t *s, fl_kv_write_t *w, int64_t applied_offset,
                       int64_t row_count, fl_error_t *err) {
    fl_kv_thread_setup();
    uint8_t off[8], count[8];
    fl_kv_put_le64(off, applied_offset);
    rocksdb_writebatch_put_cf(w->wb, s->cf[1], fl_kv_meta_key, sizeof(fl_kv_meta_key) - 1,
                              (const char *)off, sizeof(off));
    if (row_count >= 0) {
        fl_kv_put_le64(count, row_count);
        rocksdb_writebatch_put_cf(w->wb, s->cf[1], fl_kv_count_key, sizeof(fl_kv_count_key) - 1,
                                  (const char *)count, sizeof(count));
    } else if (s->row_count >= 0) { /* no longer kept: no stale count left behind */
        rocksdb_writebatch_delete_cf(w->wb, s->cf[1], fl_kv_count_key,
                                     sizeof(fl_kv_count_key) - 1);
    }
    if (s->legacy_meta) rocksdb_writebatch_delete(w->wb, fl_kv_legacy_key, 0);
    char *rerr = NULL;
    rocksdb_write(s->db, s->wopts, w->wb, &rerr);
    rocksdb_writebatch_clear(w->wb);
    if (rerr) return fl_kv_fail(err, "write", rerr);
    s->applied_offset = applied_offset;
    s->row_count = row_count < 0 ? FL_KV_ROW_COUNT_UNKNOWN : row_count;
    s->legacy_meta = false;
    return 0;
}

int fl_kv_store_flush(fl_kv_store_t *s, fl_error_t *err) {
    rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
    rocksdb_flushoptions_set_wait(fo, 1);
    char *rerr = NULL;
    /* rows first: a flushed offset never runs ahead of its rows (an older
     * offset only replays changes again, which is harmless) */
    rocksdb_flush_cf(s->db, fo, s->cf[0], &rerr);
    if (!rerr) rocksdb_flush_cf(s->db, fo, s->cf[1], &rerr);
    rocksdb_flushoptions_destroy(fo);
    if (rerr) return fl_kv_fail(err, "flush", rerr);
    return 0;
}

int fl_kv_store_checkpoint(fl_kv_store_t *s, const char *dir, fl_error_t *err) {
    char *rerr = NULL;
    rocksdb_checkpoint_t *cp = rocksdb_checkpoint_object_create(s->db, &rerr);
    if (!cp) return fl_kv_fail(err, "checkpoint", rerr);
    rocksdb_checkpoint_create(cp, dir, 0, &rerr);
    rocksdb_checkpoint_object_destroy(cp);
    if (rerr) return fl_kv_fail(err, "checkpoint", rerr);
    return 0;
}

int fl_kv_store_keep_wal(fl_kv_store_t *s, fl_error_t *err) {
    if (s->wal) return 0;
    /* what the memtables hold without a WAL goes to SST files first: a
     * crash must not replay later, logged writes (and their applied
     * offset) over earlier, lost ones */
    int rc = fl_kv_store_flush(s, err);
    if (rc) return rc;
    rocksdb_writeoptions_disable_WAL(s->wopts, 0);
    s->wal = true;
    return 0;
}

int fl_kv_store_set_write_buffer(fl_kv_store_t *s, size_t bytes, fl_error_t *err) {
    char v[32], a[32];
    snprintf(v, sizeof(v), "%zu", bytes);
    snprintf(a, sizeof(a), "%zu", bytes / 8 < 4096 ? (size_t)4096 : bytes / 8);
    const char *keys[2] = {"write_buffer_size", "arena_block_size"}, *vals[2] = {v, a};
    char *rerr = NULL;
    rocksdb_set_options(s->db, 2, keys, vals, &rerr);
    if (rerr) return fl_kv_fail(err, "set_options", rerr);
    return 0;
}

