/*
 * test_kv_tablet.c — a bucket's primary-key state (kv_tablet.h) over a real
 * replica and RocksDB: upserts, deletes and partial updates read back by
 * lookup, the change types written to the log, the pre-write buffer's
 * bookkeeping, a checkpoint plus the log after it giving the same state as
 * the live tablet, the image a lake starts from (every live row once, as
 * of the log end), a full rebuild from the log alone, changelogs in the
 * COMPACTED and INDEXED row formats, snapshots uploaded, retained (pins
 * honoured, unreferenced shared files removed) and restored into a store
 * that replays the log after them, lookups racing puts and snapshots (run
 * under ThreadSanitizer by make test-tsan), auto-increment values (blocks,
 * refusals, restarts) and inserts of missing keys.
 */
#define _XOPEN_SOURCE 700
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <rocksdb/c.h>

#include "test_tmpdir.h"
#include "test_kv_util.h"

#include "common_fs.h"
#include "common_workq.h"
#include "kv_prewrite.h"
#include "kv_tablet.h"
#include "record_batch.h"
#include "record_kv.h"
#include "record_row_builder.h"
#include "replica_manager.h"
#include "replica_replication.h"
#include "types_row_compacted.h"

static void test_upsert_delete_lookup_changelog(void **state) {
    env_t *e = env_new(*state);
    op_t a[] = {{1, "a", 10, false}, {2, "b", 20, false}, {1, "a2", 11, false}};
    put_ok(e, a, 3);
    op_t d[] = {{2, NULL, 0, true}, {9, NULL, 0, true}};
    put_ok(e, d, 2);
    op_t none[] = {{9, NULL, 0, true}}; /* nothing to delete: an empty batch */
    put_ok(e, none, 1);
    char name[32];
    assert_int_equal(look(e, 1, name, sizeof(name)), 11);
    assert_string_equal(name, "a2");
    assert_int_equal(look(e, 2, NULL, 0), -1);
    char ct[64];
    change_types(e, ct, sizeof(ct));
    assert_string_equal(ct, "11234."); /* +I +I -U +U | -D | empty */
    assert_int_equal(fl_replica_log_end(e->r), 6);
    env_free(e);
}

static void test_partial_update_and_refusals(void **state) {
    env_t *e = env_new(*state);
    op_t a[] = {{1, "keep", 1, false}};
    put_ok(e, a, 1);
    int32_t targets[] = {0, 2};
    op_t p[] = {{1, NULL, 5, false}, {2, NULL, 7, false}};
    fl_kv_appended_t res;
    fl_error_t err;
    assert_int_equal(put_ops(e, p, 2, targets, 2, &res, &err), 0);
    char name[32];
    assert_int_equal(look(e, 1, name, sizeof(name)), 5);
    assert_string_equal(name, "keep");
    assert_int_equal(look(e, 2, name, sizeof(name)), 7);
    assert_string_equal(name, "NULL");
    int32_t no_pk[] = {2};
    assert_int_equal(put_ops(e, p, 1, no_pk, 1, &res, &err), FLUSS_ERR_INVALID_TARGET_COLUMN);
    assert_non_null(strstr(err.msg, "must contain the primary key"));
    /* a refused put leaves nothing behind */
    assert_int_equal(look(e, 1, NULL, 0), 5);
    e->t.delete_behavior = FL_KV_DELETE_DISABLE;
    op_t d[] = {{1, NULL, 0, true}};
    assert_int_equal(put_ops(e, d, 1, NULL, 0, &res, &err), FLUSS_ERR_DELETION_DISABLED_EXCEPTION);
    e->t.delete_behavior = FL_KV_DELETE_IGNORE;
    put_ok(e, d, 1);
    assert_int_equal(look(e, 1, NULL, 0), 5);
    env_free(e);
}

static void test_engines(void **state) {
    env_t *e = env_new(*state);
    e->t.engine = FL_KV_ENGINE_VERSIONED;
    e->t.version_col = 2;
    op_t v[] = {{1, "v5", 5, false}, {1, "v3", 3, false}, {1, "v5b", 5, false}};
    put_ok(e, v, 3);
    char name[32];
    assert_int_equal(look(e, 1, name, sizeof(name)), 5);
    assert_string_equal(name, "v5b");
    e->t.engine = FL_KV_ENGINE_FIRST_ROW;
    op_t f[] = {{2, "first", 1, false}, {2, "second", 2, false}};
    put_ok(e, f, 2);
    assert_int_equal(look(e, 2, name, sizeof(name)), 1);
    assert_string_equal(name, "first");
    char ct[64];
    change_types(e, ct, sizeof(ct));
    assert_string_equal(ct, "1231"); /* +I, (v3 dropped), -U +U, +I, (second dropped) */
    env_free(e);
}

static void test_prewrite_buffer(void **state) {
    (void)state;
    fl_kv_prewrite_t pw;
    fl_kv_prewrite_init(&pw);
    const uint8_t *v;
    size_t n;
    assert_int_equal(fl_kv_prewrite_get(&pw, (const uint8_t *)"k", 1, &v, &n), FL_KV_PW_MISS);
    char k[16];
    for (int i = 0; i < 500; i++) {
        snprintf(k, sizeof(k), "k%d", i % 100);
        fl_kv_prewrite_put(&pw, (const uint8_t *)k, strlen(k), (const uint8_t *)k, strlen(k), i,
                           i < 100);
    }
    fl_kv_prewrite_put(&pw, (const uint8_t *)"k7", 2, NULL, 0, 500, -1);
    assert_int_equal(pw.keys, 100);
    assert_int_equal(pw.entries, 501);
    /* the row count moves by the entries below an offset */
    assert_int_equal(fl_kv_prewrite_row_delta(&pw, 50), 50);
    assert_int_equal(fl_kv_prewrite_row_delta(&pw, 450), 100);
    assert_int_equal(fl_kv_prewrite_row_delta(&pw, 501), 99);
    assert_int_equal(fl_kv_prewrite_get(&pw, (const uint8_t *)"k7", 2, &v, &n), FL_KV_PW_DELETED);
    assert_int_equal(fl_kv_prewrite_get(&pw, (const uint8_t *)"k8", 2, &v, &n), FL_KV_PW_VALUE);
    /* released entries are RocksDB's now: a key whose newest entry went
     * is a miss, the others keep their newest */
    fl_kv_prewrite_release(&pw, 450);
    assert_int_equal(pw.entries, 51);
    assert_int_equal(fl_kv_prewrite_row_delta(&pw, 501), -1);
    assert_int_equal(fl_kv_prewrite_get(&pw, (const uint8_t *)"k58", 3, &v, &n), FL_KV_PW_VALUE);
    assert_int_equal(n, 3);
    assert_memory_equal(v, "k58", 3);
    assert_int_equal(fl_kv_prewrite_get(&pw, (const uint8_t *)"k8", 2, &v, &n), FL_KV_PW_MISS);
    assert_int_equal(fl_kv_prewrite_get(&pw, (const uint8_t *)"k7", 2, &v, &n), FL_KV_PW_DELETED);
    fl_kv_prewrite_release(&pw, 501);
    assert_int_equal(pw.entries, 0);
    assert_int_equal(pw.keys, 0);
    assert_int_equal(fl_kv_prewrite_get(&pw, (const uint8_t *)"k7", 2, &v, &n), FL_KV_PW_MISS);
    fl_kv_prewrite_free(&pw);
}

/* The buffer's hash under churn: random keys put (values, deletes) and
 * released in offset order, thousands of them, every key checked against
 * a model after each step: removals that move entries back along their
 * probe runs never lose one. */
static void test_prewrite_buffer_churn(void **state) {
    (void)state;
    enum { NKEYS = 3000, OPS = 40000 };
    static int64_t newest[NKEYS]; /* offset of the key's newest entry, -1: none */
    static int8_t kind[NKEYS];    /* 1 value, 2 deleted */
    for (int i = 0; i < NKEYS; i++) newest[i] = -1;
    fl_kv_prewrite_t pw;
    fl_kv_prewrite_init(&pw);
    unsigned seed = 11;
    int64_t released = 0;
    char k[16];
    for (int64_t off = 0; off < OPS; off++) {
        int id = (int)(rand_r(&seed) % NKEYS);
        bool del = rand_r(&seed) % 5 == 0;
        snprintf(k, sizeof(k), "key-%d", id);
        fl_kv_prewrite_put(&pw, (const uint8_t *)k, strlen(k), del ? NULL : (const uint8_t *)k,
                           strlen(k), off, del ? -1 : 0);
        newest[id] = off;
        kind[id] = del ? 2 : 1;
        if (rand_r(&seed) % 7 == 0) { /* a commit: everything up to a random point */
            released += (int64_t)(rand_r(&seed) % (unsigned)(off + 1 - released + 1));
            fl_kv_prewrite_release(&pw, released);
        }
        if (off % 997 != 0 && off != OPS - 1) continue;
        size_t keys = 0;
        for (int i = 0; i < NKEYS; i++) {
            snprintf(k, sizeof(k), "key-%d", i);
            const uint8_t *v;
            size_t n;
            fl_kv_pw_lookup_t l = fl_kv_prewrite_get(&pw, (const uint8_t *)k, strlen(k), &v, &n);
            fl_kv_pw_lookup_t want = newest[i] < released ? FL_KV_PW_MISS
                                     : kind[i] == 2       ? FL_KV_PW_DELETED
                                                          : FL_KV_PW_VALUE;
            if (l != want) fail_msg("offset %lld key %d: %d, want %d", (long long)off, i, l, want);
            if (l == FL_KV_PW_VALUE) assert_memory_equal(v, k, n);
            keys += want != FL_KV_PW_MISS;
        }
        assert_int_equal(pw.keys, keys);
    }
    fl_kv_prewrite_release(&pw, OPS);
    assert_int_equal(pw.keys, 0);
    assert_int_equal(pw.entries, 0);
    fl_kv_prewrite_free(&pw);
}

/* Random ops, a checkpoint, more ops; then the store replaced by the
 * checkpoint (replay from its offset) and no store at all (everything
 * from the log) both equal the model. */
static void checkpoint_then_rebuild(env_t *e, int64_t *model, unsigned seed, int batches) {
    random_ops(e, model, &seed, batches);
    char cp[700];
    snprintf(cp, sizeof(cp), "%s/checkpoint", e->dir);
    int64_t cp_offset = -1;
    fl_error_t err;
    int64_t cp_rows = -1;
    assert_int_equal(fl_kv_tablet_checkpoint(e->kt, cp, &cp_offset, &cp_rows, &err), 0);
    assert_int_equal(cp_offset, fl_replica_log_end(e->r));
    assert_int_equal(cp_rows, model_rows(model));
    random_ops(e, model, &seed, batches);
    assert_model(e, model);
    fl_kv_tablet_close(e->kt, false);
    assert_int_equal(fl_fs_remove_tree(e->kvdir, &err), 0);
    assert_int_equal(rename(cp, e->kvdir), 0);
    env_open_kv(e);
    assert_true(e->kt->recovered_records > 0);
    assert_model(e, model);
    fl_kv_tablet_close(e->kt, false);
    assert_int_equal(fl_fs_remove_tree(e->kvdir, &err), 0);
    env_open_kv(e);
    assert_model(e, model);
}

static void test_checkpoint_plus_log_is_state(void **state) {
    env_t *e = env_new(*state);
    int64_t model[KEYS];
    for (int i = 0; i < KEYS; i++) model[i] = -1;
    checkpoint_then_rebuild(e, model, 7, 40);
    env_free(e);
}

static bool count_rows(void *arg, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl) {
    (void)k, (void)kl, (void)v, (void)vl;
    (*(int *)arg)++;
    return true;
}

typedef struct image {
    int64_t model[KEYS];
    int64_t rows, stop_after;
} image_t;

static int image_row(void *arg, fl_row_t *row, fl_error_t *err) {
    image_t *im = arg;
    assert_int_equal(row->column_count, 3);
    int32_t id = (int32_t)row->cells[0].i;
    assert_true(id >= 0 && id < KEYS);
    assert_int_equal(im->model[id], -1); /* each key once */
    im->model[id] = row->cells[2].i;
    if (++im->rows == im->stop_after) return fl_err_set(err, FLUSS_ERR__STATE, "enough");
    return 0;
}

/* fl_kv_tablet_image: every live row once, in the latest layout, as of
 * the log end (the pre-write buffer written down first); the visitor's
 * error ends the visit and comes back. */
static void test_image_is_state(void **state) {
    env_t *e = env_new(*state);
    int64_t model[KEYS];
    for (int i = 0; i < KEYS; i++) model[i] = -1;
    unsigned seed = 7;
    random_ops(e, model, &seed, 30);
    image_t im = {.stop_after = -1};
    for (int i = 0; i < KEYS; i++) im.model[i] = -1;
    int64_t at = -1;
    fl_error_t err;
    assert_int_equal(fl_kv_tablet_image(e->kt, &e->t, image_row, &im, &at, &err), 0);
    assert_int_equal(at, fl_replica_log_end(e->r));
    assert_int_equal(im.rows, model_rows(model));
    assert_memory_equal(im.model, model, sizeof(model));
    /* puts after it change nothing it saw; a stopped visit reports why */
    random_ops(e, model, &seed, 5);
    image_t stop = {.stop_after = 3};
    for (int i = 0; i < KEYS; i++) stop.model[i] = -1;
    assert_int_equal(fl_kv_tablet_image(e->kt, &e->t, image_row, &stop, &at, &err),
                     FLUSS_ERR__STATE);
    assert_int_equal(stop.rows, 3);
    env_free(e);
}

/* A store written before the meta column family (applied offset under the
 * empty key of the default family) opens with that offset, never shows
 * the key as a row, and loses it at the first commit. */
/* kv.rocksdb.compression.per.level: Fluss's names, any case, blanks;
 * refusals name the item; a store opened with a list writes it into its
 * OPTIONS file (and without one, Fluss's default). */
static void test_compression_per_level(void **state) {
    int lv[FL_KV_LEVELS_MAX], n = -1;
    fl_error_t err;
    assert_int_equal(fl_kv_compression_parse("NO, no,LZ4 , zstd,Snappy", lv, &n, &err), 0);
    assert_int_equal(n, 5);
    assert_int_equal(lv[0], rocksdb_no_compression);
    assert_int_equal(lv[1], rocksdb_no_compression);
    assert_int_equal(lv[2], rocksdb_lz4_compression);
    assert_int_equal(lv[3], rocksdb_zstd_compression);
    assert_int_equal(lv[4], rocksdb_snappy_compression);
    const char *bad[] = {"", "LZ4,", "LZ4,,ZSTD", "GZIP", "LZ4HC",
                         "NO,NO,NO,NO,NO,NO,NO,NO,NO,NO,NO,NO,NO,NO,NO,NO,NO"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (fl_kv_compression_parse(bad[i], lv, &n, &err) != FLUSS_ERR__INVALID_ARG)
            fail_msg("accepted '%s'", bad[i]);
        assert_non_null(strstr(err.msg, "kv.rocksdb.compression.per.level"));
    }
    assert_int_equal(fl_kv_compression_parse("GZIP", lv, &n, &err), FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(err.msg, "'GZIP'"));
    const char *want[2] = {"compression_per_level=kNoCompression:kNoCompression:kLZ4Compression",
                           "compression_per_level=kLZ4Compression:kLZ4Compression:"
                           "kLZ4Compression:kLZ4Compression:kLZ4Compression:kZSTD:kZSTD"};
    for (int k = 0; k < 2; k++) {
        char dir[600];
        snprintf(dir, sizeof(dir), "%s/comp%d", (const char *)*state, k);
        fl_kv_store_options_t o = {0};
        if (k == 0) assert_int_equal(fl_kv_compression_parse("NO,NO,LZ4", o.compression,
                                                             &o.compression_levels, &err), 0);
        fl_kv_store_t *st = NULL;
        assert_int_equal(fl_kv_store_open(dir, &o, &st, &err), 0);
        fl_kv_store_close(st, false);
        char cmd[800];
        snprintf(cmd, sizeof(cmd), "grep -h '%s' %s/OPTIONS-* >/dev/null", want[k], dir);
        if (system(cmd) != 0) fail_msg("%s: no '%s' in its OPTIONS", dir, want[k]);
    }
}

static void test_store_legacy_applied_offset(void **state) {
    char dir[600];
    snprintf(dir, sizeof(dir), "%s/legacy", (const char *)*state);
    rocksdb_options_t *o = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(o, 1);
    char *rerr = NULL;
    rocksdb_t *db = rocksdb_open(o, dir, &rerr);
    assert_null(rerr);
    rocksdb_writeoptions_t *wo = rocksdb_writeoptions_create();
    const char off[8] = {5, 0, 0, 0, 0, 0, 0, 0};
    rocksdb_put(db, wo, "", 0, off, 8, &rerr);
    rocksdb_put(db, wo, "k", 1, "\1\0v", 3, &rerr);
    assert_null(rerr);
    rocksdb_writeoptions_destroy(wo);
    rocksdb_close(db);
    rocksdb_options_destroy(o);

    fl_kv_store_t *st;
    fl_error_t err;
    assert_int_equal(fl_kv_store_open(dir, NULL, &st, &err), 0);
    assert_int_equal(fl_kv_store_applied_offset(st), 5);
    assert_int_equal(fl_kv_store_row_count(st), FL_KV_ROW_COUNT_UNKNOWN); /* none stored */
    int rows = 0;
    assert_int_equal(fl_kv_store_scan(st, NULL, 0, count_rows, &rows, &err), 0);
    assert_int_equal(rows, 1);
    fl_kv_write_t *w = fl_kv_write_new();
    assert_int_equal(fl_kv_store_commit(st, w, 7, 1, &err), 0);
    fl_kv_write_destroy(w);
    fl_kv_store_close(st, true);
    assert_int_equal(fl_kv_store_open(dir, NULL, &st, &err), 0);
    assert_int_equal(fl_kv_store_applied_offset(st), 7);
    assert_int_equal(fl_kv_store_row_count(st), 1);
    fl_buf_t v;
    fl_buf_init(&v);
    bool found = true;
    assert_int_equal(fl_kv_store_get(st, (const uint8_t *)"", 0, &v, &found, &err), 0);
    assert_false(found); /* the legacy key is gone */
    assert_int_equal(fl_kv_store_get(st, (const uint8_t *)"k", 1, &v, &found, &err), 0);
    assert_true(found);
    fl_buf_free(&v);
    fl_kv_store_close(st, false);
}

/* The loop-side lookup: answers from memory, says "would block" while a
 * writer holds the tablet or when the value is only on disk, and agrees
 * with the blocking lookup whenever it answers. */
static void test_lookup_nowait(void **state) {
    env_t *e = env_new(*state);
    op_t a[] = {{1, "a", 10, false}, {2, "b", 20, false}};
    put_ok(e, a, 2);
    op_t d[] = {{2, NULL, 0, true}};
    put_ok(e, d, 1);
    fl_buf_t key, row, val;
    fl_buf_init(&key);
    fl_buf_init(&row);
    fl_buf_init(&val);
    fl_error_t err;
    bool found, wb;
    for (int32_t id = 1; id <= 3; id++) {
        fl_buf_reset(&key);
        fl_buf_reset(&row);
        encode(e, id, NULL, 0, &key, &row);
        assert_int_equal(fl_kv_tablet_lookup_nowait(e->kt, key.data, key.len, &val, &found, &wb, &err), 0);
        assert_false(wb);
        assert_int_equal(found, id == 1); /* 2 deleted, 3 never written */
    }
    /* a writer holds the tablet: would block, answers nothing */
    fl_buf_reset(&key);
    fl_buf_reset(&row);
    encode(e, 1, NULL, 0, &key, &row);
    pthread_rwlock_wrlock(&e->kt->lock);
    assert_int_equal(fl_kv_tablet_lookup_nowait(e->kt, key.data, key.len, &val, &found, &wb, &err), 0);
    assert_true(wb);
    pthread_rwlock_unlock(&e->kt->lock);
    /* on disk only (flushed, reopened with a cold cache): would block, then
     * the blocking lookup warms the cache and the next answer is from memory */
    fl_kv_tablet_close(e->kt, false);
    env_open_kv(e);
    assert_int_equal(fl_kv_tablet_lookup_nowait(e->kt, key.data, key.len, &val, &found, &wb, &err), 0);
    assert_true(wb);
    assert_int_equal(look(e, 1, NULL, 0), 10);
    assert_int_equal(fl_kv_tablet_lookup_nowait(e->kt, key.data, key.len, &val, &found, &wb, &err), 0);
    assert_false(wb);
    assert_true(found);
    /* many keys at once (pre-write buffer, RocksDB, deleted, never written)
     * agree with the one-key lookup */
    op_t more[] = {{4, "d", 40, false}, {1, "a3", 12, false}};
    put_ok(e, more, 2);
    fl_buf_t ks[5], vs[5];
    const uint8_t *kp[5];
    size_t kl[5];
    bool fnd[5];
    for (int i = 0; i < 5; i++) {
        fl_buf_init(&ks[i]);
        fl_buf_init(&vs[i]);
        fl_buf_reset(&row);
        encode(e, i, NULL, 0, &ks[i], &row);
        kp[i] = ks[i].data;
        kl[i] = ks[i].len;
    }
    assert_int_equal(fl_kv_tablet_lookup_many(e->kt, 5, kp, kl, vs, fnd, &err), 0);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(fl_kv_tablet_lookup(e->kt, kp[i], kl[i], &val, &found, &err), 0);
        assert_int_equal(fnd[i], found);
        if (found) assert_memory_equal(vs[i].data, val.data, val.len);
        fl_buf_free(&ks[i]);
        fl_buf_free(&vs[i]);
    }
    assert_true(fnd[1] && fnd[4] && !fnd[0] && !fnd[2] && !fnd[3]);
    fl_buf_free(&key);
    fl_buf_free(&row);
    fl_buf_free(&val);
    env_free(e);
}

/* table.log.format COMPACTED / INDEXED: the changelog records are rows in
 * that format (record_row_builder.h) with their change types, decoded
 * back to the values written; the store rebuilt from that log alone and
 * after a checkpoint equals the live state. */
static void row_changelog(void **state, fl_row_format_t f) {
    env_t *e = env_new(*state);
    e->t.log_rows = true;
    e->t.log_format = f;
    op_t a[] = {{1, "a", 10, false}, {2, "b", 20, false}, {1, "a2", 11, false}};
    put_ok(e, a, 3);
    op_t d[] = {{2, NULL, 0, true}};
    put_ok(e, d, 1);
    fl_buf_t buf;
    fl_buf_init(&buf);
    fl_error_t err;
    assert_int_equal(fl_replica_read(e->r, 0, 1 << 20, &buf, &err), 0);
    size_t pos = 0;
    fl_batch_view_t b;
    char got[256] = "";
    fl_row_t row;
    fl_row_init(&row, 3);
    while (fl_batch_parse_next(buf.data, buf.len, &pos, &b, &err) == 0) {
        assert_int_equal(fl_batch_check_crc(&b, &err), 0);
        assert_false(b.attributes & FL_BATCH_ATTR_APPEND_ONLY);
        size_t rp = b.records_start;
        for (int32_t i = 0; i < b.record_count; i++) {
            fl_change_type_t ct;
            const uint8_t *rb;
            size_t rl;
            assert_int_equal(fl_row_record_next(b.data, b.size, &rp, i, &ct, &rb, &rl, &err), 0);
            assert_int_equal(fl_row_decode(f, rb, rl, e->types, 3, &row, &err), 0);
            char one[64];
            snprintf(one, sizeof(one), "%d:%d:%.*s:%lld ", (int)ct, (int)row.cells[0].i,
                     (int)row.cells[1].len, (const char *)fl_row_cell_bytes(&row, &row.cells[1]),
                     (long long)row.cells[2].i);
            strncat(got, one, sizeof(got) - strlen(got) - 1);
        }
        assert_int_equal(rp, b.size);
    }
    assert_string_equal(got, "1:1:a:10 1:2:b:20 2:1:a:10 3:1:a2:11 4:2:b:20 ");
    fl_row_free(&row);
    fl_buf_free(&buf);
    int64_t model[KEYS];
    for (int i = 0; i < KEYS; i++) model[i] = -1;
    model[1] = 11;
    checkpoint_then_rebuild(e, model, 5, 30);
    env_free(e);
}

static void test_compacted_changelog(void **state) { row_changelog(state, FL_ROW_COMPACTED); }
static void test_indexed_changelog(void **state) { row_changelog(state, FL_ROW_INDEXED); }

static bool pin_id(void *ctx, int64_t id) {
    return id == *(const int64_t *)ctx;
}

static size_t count_files(const char *dir) {
    char cmd[800];
    snprintf(cmd, sizeof(cmd), "ls -1 %s 2>/dev/null | wc -l", dir);
    FILE *f = popen(cmd, "r");
    size_t n = 0;
    if (f) {
        if (fscanf(f, "%zu", &n) != 1) n = 0;
        pclose(f);
    }
    return n;
}

static void test_snapshots_upload_retain_restore(void **state) {
    env_t *e = env_new(*state);
    char remote[700], shared[760];
    snprintf(remote, sizeof(remote), "%s/remote/kv/db/t-1/0", e->dir);
    snprintf(shared, sizeof(shared), "%s/shared", remote);
    fl_error_t err;
    assert_int_equal(fl_kv_tablet_set_remote(e->kt, remote, &err), 0);
    int64_t model[KEYS];
    for (int i = 0; i < KEYS; i++) model[i] = -1;
    unsigned seed = 11;
    bool taken = false;
    /* nothing written: no snapshot */
    assert_int_equal(fl_kv_tablet_snapshot(e->kt, 1000, 1, NULL, &taken, &err), 0);
    assert_false(taken);
    random_ops(e, model, &seed, 40);
    assert_int_equal(fl_kv_tablet_snapshot(e->kt, 1000, 1, NULL, &taken, &err), 0);
    assert_true(taken);
    /* unchanged since: none */
    assert_int_equal(fl_kv_tablet_snapshot(e->kt, 1001, 1, NULL, &taken, &err), 0);
    assert_false(taken);
    fl_kv_snapshot_t s;
    assert_int_equal(fl_kv_snapshot_read(remote, 0, &s, &err), 0);
    assert_int_equal(s.id, 0);
    assert_int_equal(s.log_offset, fl_replica_log_end(e->r));
    assert_int_equal(s.created_ms, 1000);
    bool current = false, manifest = false, sst = false;
    for (size_t i = 0; i < s.file_count; i++) {
        struct stat st;
        assert_int_equal(stat(s.files[i].path, &st), 0);
        assert_int_equal(st.st_size, s.files[i].size);
        current |= strcmp(s.files[i].local, "CURRENT") == 0;
        manifest |= strncmp(s.files[i].local, "MANIFEST-", 9) == 0;
        sst |= strstr(s.files[i].path, "/shared/") != NULL;
    }
    assert_true(current && manifest && sst);
    fl_kv_snapshot_free(&s);
    assert_int_equal(fl_kv_snapshot_read(remote, 7, &s, &err), FLUSS_ERR_KV_SNAPSHOT_NOT_EXIST);

    /* a second snapshot with snapshot 0 pinned: both kept */
    int64_t model0[KEYS];
    memcpy(model0, model, sizeof(model));
    random_ops(e, model, &seed, 40);
    int64_t pinned = 0;
    assert_int_equal(fl_kv_tablet_snapshot(e->kt, 2000, 1, &(fl_kv_snapshot_hooks_t){pin_id, NULL, &pinned}, &taken, &err), 0);
    assert_true(taken);
    int64_t *ids = NULL;
    size_t n = 0;
    assert_int_equal(fl_kv_snapshot_list(remote, &ids, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(ids[0], 0);
    assert_int_equal(ids[1], 1);
    free(ids);
    size_t shared_before = count_files(shared);
    /* names that are not snapshots are left alone */
    char junk[800], other[800];
    snprintf(other, sizeof(other), "%s/snap-00", remote);
    assert_int_equal(fl_fs_mkdirs(other, &err), 0);
    /* unpinned: snapshot 0 and its own SSTs go */
    assert_int_equal(fl_kv_snapshot_retain(remote, 1, NULL, NULL, &err), 0);
    assert_int_equal(fl_kv_snapshot_list(remote, &ids, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(ids[0], 1);
    free(ids);
    /* an incomplete older snapshot directory (a crash mid-upload) goes too */
    snprintf(junk, sizeof(junk), "%s/snap-0", remote);
    assert_int_equal(fl_fs_mkdirs(junk, &err), 0);
    assert_int_equal(fl_kv_snapshot_retain(remote, 1, NULL, NULL, &err), 0);
    assert_int_not_equal(access(junk, F_OK), 0);
    assert_int_equal(access(other, F_OK), 0);
    assert_int_equal(fl_kv_snapshot_read(remote, 1, &s, &err), 0);
    size_t shared_now = count_files(shared), named = 0;
    for (size_t i = 0; i < s.file_count; i++) named += strstr(s.files[i].path, "/shared/") != NULL;
    assert_int_equal(shared_now, named); /* exactly the files snapshot 1 names */
    assert_true(shared_now <= shared_before);
    int64_t snap1_offset = s.log_offset;
    fl_kv_snapshot_free(&s);

    /* more writes, then the store lost: restore snapshot 1, replay the rest */
    random_ops(e, model, &seed, 30);
    fl_kv_tablet_close(e->kt, false);
    assert_int_equal(fl_fs_remove_tree(e->kvdir, &err), 0);
    assert_int_equal(fl_kv_snapshot_restore(remote, 1, e->kvdir, &err), 0);
    env_open_kv(e);
    assert_true(e->kt->recovered_records > 0);
    assert_true(e->kt->recovered_records < fl_replica_log_end(e->r));
    assert_true(snap1_offset < fl_replica_log_end(e->r));
    assert_model(e, model);
    /* ids continue after a reopen */
    assert_int_equal(fl_kv_tablet_set_remote(e->kt, remote, &err), 0);
    assert_int_equal(e->kt->snap_next_id, 2);
    assert_int_equal(e->kt->snap_last_offset, snap1_offset);
    assert_int_equal(fl_kv_tablet_snapshot(e->kt, 3000, 2, NULL, &taken, &err), 0);
    assert_true(taken);
    assert_int_equal(fl_kv_snapshot_restore(remote, 2, e->kvdir, &err) != 0, 1); /* exists */
    (void)model0;
    env_free(e);
}

/* A stand-in coordinator for the snapshot commit. */
typedef struct snap_committer {
    const char *bucket_dir;
    bool write;    /* commits */
    int answer;    /* then answers this (0: success) */
    int calls;
    int64_t last_id;
} snap_committer_t;

static int snap_commit(void *ctx, int64_t id, const char *meta, size_t len, fl_error_t *err) {
    snap_committer_t *c = ctx;
    c->calls++;
    c->last_id = id;
    if (c->write && fl_kv_snapshot_commit_meta(c->bucket_dir, id, meta, len, NULL, err)) return err->code;
    return c->answer ? fl_err_set(err, c->answer, "the committer says %d", c->answer) : 0;
}

static void test_snapshot_commit_elsewhere(void **state) {
    env_t *e = env_new(*state);
    char remote[700];
    snprintf(remote, sizeof(remote), "%s/remote/kv/db/t-1/0", e->dir);
    fl_error_t err;
    assert_int_equal(fl_kv_tablet_set_remote(e->kt, remote, &err), 0);
    int64_t model[KEYS];
    for (int i = 0; i < KEYS; i++) model[i] = -1;
    unsigned seed = 5;
    random_ops(e, model, &seed, 30);
    snap_committer_t c = {remote, false, FLUSS_ERR_FENCED_LEADER_EPOCH_EXCEPTION, 0, -1};
    fl_kv_snapshot_hooks_t hooks = {NULL, snap_commit, &c};
    bool taken = true;
    /* refused: no snapshot, its id used up */
    assert_int_equal(fl_kv_tablet_snapshot(e->kt, 1000, 2, &hooks, &taken, &err),
                     FLUSS_ERR_FENCED_LEADER_EPOCH_EXCEPTION);
    assert_false(taken);
    assert_int_equal(c.last_id, 0);
    int64_t *ids = NULL;
    size_t n = 0;
    assert_int_equal(fl_kv_snapshot_list(remote, &ids, &n, &err), 0);
    assert_int_equal(n, 0);
    /* committed but not answered: the snapshot is there, the next one
     * takes a new id and does not touch it */
    c.write = true;
    c.answer = FLUSS_ERR_NETWORK_EXCEPTION;
    assert_int_equal(fl_kv_tablet_snapshot(e->kt, 1001, 2, &hooks, &taken, &err),
                     FLUSS_ERR_NETWORK_EXCEPTION);
    assert_int_equal(c.last_id, 1);
    c.answer = 0;
    assert_int_equal(fl_kv_tablet_snapshot(e->kt, 1002, 2, &hooks, &taken, &err), 0);
    assert_true(taken);
    assert_int_equal(c.last_id, 2);
    assert_int_equal(fl_kv_snapshot_list(remote, &ids, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(ids[0], 1);
    assert_int_equal(ids[1], 2);
    free(ids);
    fl_kv_snapshot_t s;
    assert_int_equal(fl_kv_snapshot_read(remote, 2, &s, &err), 0);
    assert_true(s.file_count > 0);
    fl_kv_snapshot_free(&s);
    /* the commit point checks the files: a record naming one that is not
     * there (or has another size) is not written */
    const char *bad = "{\"version\":1,\"snapshot_id\":9,\"log_offset\":1,"
                      "\"files\":[{\"path\":\"shared/nope.sst\",\"local\":\"nope.sst\",\"size\":1}]}";
    assert_int_equal(fl_kv_snapshot_commit_meta(remote, 9, bad, strlen(bad), NULL, &err),
                     FLUSS_ERR_KV_STORAGE_EXCEPTION);
    assert_int_equal(fl_kv_snapshot_commit_meta(remote, 8, bad, strlen(bad), NULL, &err),
                     FLUSS_ERR_KV_STORAGE_EXCEPTION); /* not snapshot 8's record */
    assert_int_equal(fl_kv_snapshot_read(remote, 9, &s, &err) == 0 ? 1 : 0, 0);
    fl_kv_snapshot_free(&s);
    env_free(e);
}

static void test_snapshot_metadata_refusals(void **state) {
    (void)state;
    fl_kv_snapshot_t s;
    fl_error_t err;
    static const char *bad[] = {
        "",
        "{}",
        "[1]",
        "{\"version\":2,\"snapshot_id\":1,\"log_offset\":0,\"files\":[]}",
        "{\"version\":1,\"snapshot_id\":2,\"log_offset\":0,\"files\":[]}", /* id mismatch */
        "{\"version\":1,\"snapshot_id\":1,\"log_offset\":-1,\"files\":[]}",
        "{\"version\":1,\"snapshot_id\":1,\"log_offset\":0,\"files\":{}}",
        "{\"version\":1,\"snapshot_id\":1,\"log_offset\":0,\"files\":[{\"path\":\"../x\",\"local\":\"x\",\"size\":1}]}",
        "{\"version\":1,\"snapshot_id\":1,\"log_offset\":0,\"files\":[{\"path\":\"/etc/passwd\",\"local\":\"x\",\"size\":1}]}",
        "{\"version\":1,\"snapshot_id\":1,\"log_offset\":0,\"files\":[{\"path\":\"a//b\",\"local\":\"x\",\"size\":1}]}",
        "{\"version\":1,\"snapshot_id\":1,\"log_offset\":0,\"files\":[{\"path\":\"a/./b\",\"local\":\"x\",\"size\":1}]}",
        "{\"version\":1,\"snapshot_id\":1,\"log_offset\":0,\"files\":[{\"path\":\"a/\",\"local\":\"x\",\"size\":1}]}",
        "{\"version\":1,\"snapshot_id\":1,\"log_offset\":0,\"files\":[{\"path\":\"a\",\"local\":\"../x\",\"size\":1}]}",
        "{\"version\":1,\"snapshot_id\":1,\"log_offset\":0,\"files\":[{\"path\":\"a\",\"local\":\"..\",\"size\":1}]}",
        "{\"version\":1,\"snapshot_id\":1,\"log_offset\":0,\"files\":[{\"path\":\"a\",\"local\":\"x\",\"size\":-3}]}",
        "{\"version\":1,\"snapshot_id\":1,\"log_offset\":0,\"files\":[{\"path\":\"a\",\"local\":\"x\"}]}",
        "{\"version\":1,\"version\":1,\"snapshot_id\":1,\"log_offset\":0,\"files\":[]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = fl_kv_snapshot_parse(bad[i], strlen(bad[i]), "/r", 1, &s, &err);
        if (rc != FLUSS_ERR_KV_SNAPSHOT_NOT_EXIST) fail_msg("accepted #%zu: %s", i, bad[i]);
    }
    const char *good = "{\"version\":1,\"snapshot_id\":1,\"log_offset\":9,\"files\":"
                       "[{\"path\":\"shared/a-000001.sst\",\"local\":\"000001.sst\",\"size\":5}]}";
    assert_int_equal(fl_kv_snapshot_parse(good, strlen(good), "/r", 1, &s, &err), 0);
    assert_int_equal(s.file_count, 1);
    assert_string_equal(s.files[0].path, "/r/shared/a-000001.sst");
    assert_string_equal(s.files[0].local, "000001.sst");
    assert_int_equal(s.log_offset, 9);
    fl_kv_snapshot_free(&s);
}

typedef struct race {
    env_t *e;
    atomic_bool stop;
    atomic_int bad;
} race_t;

/* Scores only grow per key: a reader never sees one go back (a deleted
 * key has none for a while). */
static void *reader(void *arg) {
    race_t *r = arg;
    int64_t seen[KEYS];
    for (int i = 0; i < KEYS; i++) seen[i] = -1;
    while (!atomic_load(&r->stop)) {
        for (int32_t id = 0; id < KEYS; id++) {
            int64_t s = look(r->e, id, NULL, 0);
            if (s >= 0 && s < seen[id]) atomic_fetch_add(&r->bad, 1);
            if (s >= 0) seen[id] = s;
        }
    }
    return NULL;
}

/* Snapshots taken while puts run (the server's snapshot job on a worker). */
static void *snapshotter(void *arg) {
    race_t *r = arg;
    int64_t now = 1;
    while (!atomic_load(&r->stop)) {
        bool taken;
        fl_error_t err;
        if (fl_kv_tablet_snapshot(r->e->kt, now++, 2, NULL, &taken, &err))
            atomic_fetch_add(&r->bad, 1);
    }
    return NULL;
}

static void test_lookups_race_puts(void **state) {
    env_t *e = env_new(*state);
    race_t r = {.e = e};
    char remote[700];
    snprintf(remote, sizeof(remote), "%s/remote/0", e->dir);
    fl_error_t err;
    assert_int_equal(fl_kv_tablet_set_remote(e->kt, remote, &err), 0);
    pthread_t th[3];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, reader, &r);
    pthread_create(&th[2], NULL, snapshotter, &r);
    for (int64_t round = 0; round < 60; round++) {
        op_t ops[KEYS];
        for (int32_t id = 0; id < KEYS; id++) ops[id] = (op_t){id, "x", round, false};
        put_ok(e, ops, KEYS);
    }
    atomic_store(&r.stop, true);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&r.bad), 0);
    for (int32_t id = 0; id < KEYS; id++) assert_int_equal(look(e, id, NULL, 0), 59);
    /* the newest snapshot restores to a prefix the log completes */
    int64_t *ids = NULL;
    size_t n = 0;
    assert_int_equal(fl_kv_snapshot_list(remote, &ids, &n, &err), 0);
    assert_true(n >= 1 && n <= 2);
    int64_t newest = ids[n - 1];
    free(ids);
    fl_kv_tablet_close(e->kt, false);
    assert_int_equal(fl_fs_remove_tree(e->kvdir, &err), 0);
    assert_int_equal(fl_kv_snapshot_restore(remote, newest, e->kvdir, &err), 0);
    env_open_kv(e);
    for (int32_t id = 0; id < KEYS; id++) assert_int_equal(look(e, id, NULL, 0), 59);
    env_free(e);
}

typedef struct imaged {
    bool seen[KEYS];
    int64_t score; /* every row of one image: one round's */
    bool bad;
} imaged_t;

static int imaged_row(void *arg, fl_row_t *row, fl_error_t *err) {
    (void)err;
    imaged_t *im = arg;
    int32_t id = (int32_t)row->cells[0].i;
    if (id < 0 || id >= KEYS || im->seen[id] || (im->score >= 0 && row->cells[2].i != im->score))
        im->bad = true;
    else im->seen[id] = true;
    im->score = row->cells[2].i;
    return 0;
}

/* Images taken while puts and commits run: each is one batch boundary's
 * state (every key at most once, all of one round), at an offset that
 * never goes back. */
static void *imager(void *arg) {
    race_t *r = arg;
    int64_t last = 0;
    while (!atomic_load(&r->stop)) {
        imaged_t im = {.score = -1};
        int64_t at = -1;
        fl_error_t err;
        if (fl_kv_tablet_image(r->e->kt, &r->e->t, imaged_row, &im, &at, &err) || im.bad ||
            at < last)
            atomic_fetch_add(&r->bad, 1);
        last = at;
    }
    return NULL;
}

/* Row counts read while puts and commits run: between 0 and KEYS. */
static void *counter(void *arg) {
    race_t *r = arg;
    while (!atomic_load(&r->stop)) {
        int64_t rows = -1;
        fl_error_t err;
        if (fl_kv_tablet_row_count(r->e->kt, &rows, &err) || rows < 0 || rows > KEYS)
            atomic_fetch_add(&r->bad, 1);
    }
    return NULL;
}

/* The store's applied offset, read as the committer guards it. */
static int64_t applied(fl_kv_tablet_t *kt) {
    pthread_mutex_lock(&kt->commit_lock);
    int64_t v = fl_kv_store_applied_offset(kt->store);
    pthread_mutex_unlock(&kt->commit_lock);
    return v;
}

/* RocksDB written by a committer thread while puts, reads, row counts,
 * snapshots and images run: reads never go back, the count stays in range and ends
 * exact, the store catches up with the log, and a reopen (the store alone,
 * nothing to replay) has every change. */
static void test_committer_races_puts(void **state) {
    env_t *e = env_new(*state);
    fl_kv_tablet_close(e->kt, false);
    e->committer = fl_workq_new(1, "t-kvc");
    env_open_kv(e);
    race_t r = {.e = e};
    char remote[700];
    snprintf(remote, sizeof(remote), "%s/remote/0", e->dir);
    fl_error_t err;
    assert_int_equal(fl_kv_tablet_set_remote(e->kt, remote, &err), 0);
    pthread_t th[5];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, reader, &r);
    pthread_create(&th[2], NULL, snapshotter, &r);
    pthread_create(&th[3], NULL, counter, &r);
    pthread_create(&th[4], NULL, imager, &r);
    for (int64_t round = 0; round <= 80; round++) {
        op_t ops[KEYS];
        /* every fifth round deletes the odd keys, the next puts them back */
        for (int32_t id = 0; id < KEYS; id++)
            ops[id] = (op_t){id, "x", round, round % 5 == 4 && id % 2 == 1};
        put_ok(e, ops, KEYS);
    }
    atomic_store(&r.stop, true);
    for (int i = 0; i < 5; i++) pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&r.bad), 0);
    int64_t rows = -1;
    assert_int_equal(fl_kv_tablet_row_count(e->kt, &rows, &err), 0);
    assert_int_equal(rows, KEYS);
    for (int32_t id = 0; id < KEYS; id++) assert_int_equal(look(e, id, NULL, 0), 80);
    /* the committer drains the buffer into RocksDB by itself */
    for (int i = 0; i < 500 && applied(e->kt) < fl_replica_high_watermark(e->r); i++)
        nanosleep(&(struct timespec){0, 2000000}, NULL);
    assert_int_equal(applied(e->kt), fl_replica_high_watermark(e->r));
    /* close waits for a queued commit: puts, then close at once */
    op_t last[KEYS];
    for (int32_t id = 0; id < KEYS; id++) last[id] = (op_t){id, "y", 100 + id, false};
    put_ok(e, last, KEYS);
    fl_kv_tablet_close(e->kt, false);
    env_open_kv(e);
    assert_int_equal(e->kt->recovered_records, 0); /* nothing left to replay */
    for (int32_t id = 0; id < KEYS; id++) assert_int_equal(look(e, id, NULL, 0), 100 + id);
    env_free(e);
}

/* A tablet closed (and freed) right after a put, again and again, while
 * its commit job may still be finishing on the committer thread: close
 * waits for the job's very end (ThreadSanitizer sees a freed lock
 * otherwise), and nothing is lost. */
static void test_close_races_committer(void **state) {
    env_t *e = env_new(*state);
    fl_kv_tablet_close(e->kt, false);
    e->committer = fl_workq_new(1, "t-kvc");
    for (int round = 0; round < 150; round++) {
        env_open_kv(e);
        op_t ops[4];
        for (int32_t i = 0; i < 4; i++) ops[i] = (op_t){(round * 4 + i) % KEYS, "c", round, false};
        put_ok(e, ops, 4);
        fl_kv_tablet_close(e->kt, round % 2 == 1);
    }
    env_open_kv(e);
    for (int32_t i = 0; i < 4; i++) assert_int_equal(look(e, (149 * 4 + i) % KEYS, NULL, 0), 149);
    env_free(e);
}

/* The replica's watermark hook, as the tablet server's: the tablet hears
 * what is committed. */
static void tell_kv(void *ctx, fl_replica_t *r) {
    (void)r;
    env_t *e = ctx;
    fl_kv_tablet_committed(e->kt);
}

/* Waits until no commit job of kt is queued or running. */
static void idle_committer(fl_kv_tablet_t *kt) {
    pthread_mutex_lock(&kt->commit_mu);
    while (kt->commit_queued || kt->commit_running) pthread_cond_wait(&kt->commit_cond, &kt->commit_mu);
    pthread_mutex_unlock(&kt->commit_mu);
}

/* A replicated bucket: a put's changes wait in the pre-write buffer for
 * the follower (its commit job finds nothing below the high watermark)
 * and reach RocksDB when the follower's fetch moves the watermark and the
 * replica tells the tablet (fl_kv_tablet_committed), with no later put;
 * one such move at a time, while the committer may be between reading the
 * watermark and going idle. */
static void test_commits_follow_the_high_watermark(void **state) {
    env_t *e = env_new(*state);
    fl_kv_tablet_close(e->kt, false);
    e->committer = fl_workq_new(1, "t-kvc");
    static const int32_t replicas[2] = {0, 1};
    fl_replica_leadership_t l = {.self = 0, .leader_epoch = 1, .replicas = replicas,
                                 .replica_count = 2, .isr = replicas, .isr_count = 2,
                                 .bucket_epoch = 0, .min_isr = 1, .max_lag_ms = 60000};
    fl_replica_become_leader(e->r, &l, 0);
    env_open_kv(e);
    fl_replica_manager_set_watermark_hook(&e->rm, tell_kv, e);
    for (int32_t round = 0; round < 40; round++) {
        op_t ops[8];
        for (int32_t i = 0; i < 8; i++) ops[i] = (op_t){(round * 8 + i) % KEYS, "w", round, false};
        int64_t before = fl_replica_high_watermark(e->r);
        put_ok(e, ops, 8);
        int64_t end = fl_replica_log_end(e->r);
        assert_int_equal(fl_replica_high_watermark(e->r), before); /* the follower lacks it */
        assert_true(applied(e->kt) <= before);
        /* every other round: the put's own commit job has gone idle first */
        if (round % 2 == 0) idle_committer(e->kt);
        /* and in rounds 4k+1 and 4k+2 the follower takes it in two fetches */
        if (round % 4 == 1 || round % 4 == 2) fl_replica_follower_fetched(e->r, 1, end - 3, round);
        fl_replica_follower_fetched(e->r, 1, end, round);
        assert_int_equal(fl_replica_high_watermark(e->r), end);
        for (int i = 0; i < 1000 && applied(e->kt) < end; i++)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        assert_int_equal(applied(e->kt), end);
        for (int32_t i = 0; i < 8; i++) assert_int_equal(look(e, ops[i].id, NULL, 0), round);
    }
    fl_replica_manager_set_watermark_hook(&e->rm, NULL, NULL);
    env_free(e);
}

/* ---- auto-increment ---- */

static int env_reserve(void *ctx, int64_t table_id, int64_t count, int64_t *first,
                       fl_error_t *err) {
    env_t *e = ctx;
    assert_int_equal(table_id, 7);
    if (e->seq_fail) return fl_err_set(err, FLUSS_ERR_STORAGE_EXCEPTION, "counter offline");
    *first = e->seq;
    e->seq += count;
    e->seq_reserves++;
    return 0;
}

/* score becomes the auto-increment column, blocks of 3 */
static void env_autoinc(env_t *e) {
    e->t.has_autoinc = true;
    e->t.autoinc_col = 2;
    e->t.autoinc_cache = 3;
    e->t.table_id = 7;
    e->t.autoinc_reserve = env_reserve;
    e->t.autoinc_ctx = e;
}

static const int32_t id_name[] = {0, 1};

static void put_names(env_t *e, const op_t *ops, size_t n) {
    fl_kv_appended_t res;
    fl_error_t err;
    int rc = put_ops(e, ops, n, id_name, 2, &res, &err);
    if (rc) fail_msg("put: %s", err.msg);
}

static void test_autoinc_values(void **state) {
    env_t *e = env_new(*state);
    env_autoinc(e);
    /* the client's score is ignored: the column is not among the targets */
    op_t a[] = {{1, "a", 99, false}, {2, "b", 99, false}};
    put_names(e, a, 2);
    char name[32];
    assert_int_equal(look(e, 1, name, sizeof(name)), 1);
    assert_string_equal(name, "a");
    assert_int_equal(look(e, 2, NULL, 0), 2);
    /* an update keeps the value; new keys go on, into a second block */
    op_t b[] = {{1, "a2", 99, false}, {3, "c", 99, false}, {4, "d", 99, false},
                {5, "e", 99, false}};
    put_names(e, b, 4);
    assert_int_equal(look(e, 1, name, sizeof(name)), 1);
    assert_string_equal(name, "a2");
    assert_int_equal(look(e, 3, NULL, 0), 3);
    assert_int_equal(look(e, 4, NULL, 0), 4);
    assert_int_equal(look(e, 5, NULL, 0), 5);
    assert_int_equal(e->seq_reserves, 2);
    assert_int_equal(e->seq, 6);
    char ct[64];
    change_types(e, ct, sizeof(ct));
    assert_string_equal(ct, "11" "23111"); /* +I +I | -U +U +I +I +I */

    /* writes that would set the column are refused, whole */
    fl_kv_appended_t res;
    fl_error_t err;
    op_t c[] = {{6, "f", 1, false}};
    assert_int_equal(put_ops(e, c, 1, NULL, 0, &res, &err), FLUSS_ERR_INVALID_TARGET_COLUMN);
    assert_non_null(strstr(err.msg, "auto-increment column [score], but update target columns "
                                    "are not explicitly specified"));
    int32_t with_score[] = {0, 2};
    assert_int_equal(put_ops(e, c, 1, with_score, 2, &res, &err),
                     FLUSS_ERR_INVALID_TARGET_COLUMN);
    assert_non_null(strstr(err.msg, "Auto-increment column [score] at index 2 must not be "
                                    "included in target columns."));
    put_names(e, c, 1);
    assert_int_equal(look(e, 6, NULL, 0), 6);
    /* the block is used up and the counter cannot reserve: the put fails,
     * nothing is written */
    e->seq_fail = true;
    op_t g[] = {{7, "g", 0, false}};
    assert_int_equal(put_ops(e, g, 1, id_name, 2, &res, &err), FLUSS_ERR_STORAGE_EXCEPTION);
    assert_int_equal(look(e, 7, NULL, 0), -1);
    e->seq_fail = false;
    put_names(e, g, 1);
    assert_int_equal(look(e, 7, NULL, 0), 7);

    /* a restart (the tablet reopened, replaying the log): the rest of the
     * block is gone for good, old rows keep their values */
    fl_kv_tablet_close(e->kt, false);
    env_open_kv(e);
    op_t h[] = {{8, "h", 0, false}};
    put_names(e, h, 1);
    assert_int_equal(look(e, 8, NULL, 0), 10); /* 8 and 9 were the old block's */
    fl_kv_tablet_close(e->kt, true); /* a crash: RocksDB rebuilt from the log */
    fl_error_t ferr;
    assert_int_equal(fl_fs_remove_tree(e->kvdir, &ferr), 0);
    env_open_kv(e);
    for (int32_t id = 1; id <= 7; id++) assert_int_equal(look(e, id, NULL, 0), id);
    assert_int_equal(look(e, 8, NULL, 0), 10);
    op_t i9[] = {{9, "i", 0, false}};
    put_names(e, i9, 1);
    assert_int_equal(look(e, 9, NULL, 0), 13);
    assert_int_equal(e->seq, 15);
    env_free(e);
}

static void insert_keys(env_t *e, const int32_t *ids, size_t n, int want_rc, fl_error_t *err) {
    fl_buf_t keys[8];
    fl_kv_key_t kk[8];
    assert_true(n <= 8);
    fl_row_t row;
    fl_row_init(&row, 3);
    for (size_t i = 0; i < n; i++) {
        fl_buf_init(&keys[i]);
        row.cells[0].is_null = false;
        row.cells[0].i = ids[i];
        int32_t pk = 0;
        assert_int_equal(fl_compacted_key_encode(&row, &e->schema, &pk, 1, &keys[i], err), 0);
        kk[i] = (fl_kv_key_t){keys[i].data, keys[i].len};
    }
    fl_kv_appended_t res;
    int rc = fl_kv_tablet_insert_keys(e->kt, &e->t, kk, n, NULL, 1000, &res, err);
    if (rc != want_rc) fail_msg("insert_keys: %d %s", rc, rc ? err->msg : "");
    for (size_t i = 0; i < n; i++) fl_buf_free(&keys[i]);
    fl_row_free(&row);
}

static void test_insert_keys(void **state) {
    env_t *e = env_new(*state);
    fl_error_t err;
    /* no auto-increment: a row of the key alone */
    op_t a[] = {{1, "a", 5, false}};
    put_ok(e, a, 1);
    int32_t ids[] = {1, 2, 3, 2};
    insert_keys(e, ids, 4, 0, &err);
    char name[32];
    assert_int_equal(look(e, 1, name, sizeof(name)), 5); /* left alone */
    assert_string_equal(name, "a");
    assert_int_equal(look(e, 2, name, sizeof(name)), -2);
    assert_string_equal(name, "NULL");
    assert_int_equal(look(e, 3, NULL, 0), -2);
    char ct[64];
    change_types(e, ct, sizeof(ct));
    assert_string_equal(ct, "1" "11"); /* +I | +I +I: key 2 once */
    /* with the auto-increment column: the next values */
    env_autoinc(e);
    int32_t more[] = {4, 3, 5};
    insert_keys(e, more, 3, 0, &err);
    assert_int_equal(look(e, 3, NULL, 0), -2);
    assert_int_equal(look(e, 4, NULL, 0), 1);
    assert_int_equal(look(e, 5, NULL, 0), 2);
    /* all present: an empty batch */
    insert_keys(e, more, 3, 0, &err);
    change_types(e, ct, sizeof(ct));
    assert_string_equal(ct, "1" "11" "11" ".");
    /* a key that is not this table's: refused, nothing written */
    fl_kv_key_t bad = {(const uint8_t *)"\xff\xff\xff\xff\xff\xff", 6};
    fl_kv_appended_t res;
    assert_int_equal(fl_kv_tablet_insert_keys(e->kt, &e->t, &bad, 1, NULL, 1000, &res, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    /* a NOT NULL column the key cannot fill: partial update's refusal */
    e->schema.columns[1].type->nullable = false;
    int32_t six[] = {6};
    insert_keys(e, six, 1, FLUSS_ERR_INVALID_TARGET_COLUMN, &err);
    assert_non_null(strstr(err.msg, "column name is NOT NULL"));
    e->schema.columns[1].type->nullable = true;
    assert_int_equal(look(e, 6, NULL, 0), -1);
    env_free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_upsert_delete_lookup_changelog, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partial_update_and_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_engines, setup, teardown),
        cmocka_unit_test(test_prewrite_buffer),
        cmocka_unit_test(test_prewrite_buffer_churn),
        cmocka_unit_test_setup_teardown(test_checkpoint_plus_log_is_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_image_is_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compression_per_level, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_legacy_applied_offset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lookup_nowait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compacted_changelog, setup, teardown),
        cmocka_unit_test_setup_teardown(test_indexed_changelog, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshots_upload_retain_restore, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_commit_elsewhere, setup, teardown),
        cmocka_unit_test(test_snapshot_metadata_refusals),
        cmocka_unit_test_setup_teardown(test_lookups_race_puts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_committer_races_puts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_races_committer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commits_follow_the_high_watermark, setup, teardown),
        cmocka_unit_test_setup_teardown(test_autoinc_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_insert_keys, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
