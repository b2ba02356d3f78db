/*
 * test_tier_pk_index.c — a primary-key bucket's lake index, its keys and
 * its position-delete files:
 *
 * - rounds of random puts and removes against a model: each sealed
 *   round's deletes are exactly the rows the model held for the keys it
 *   touched (a key put twice in one round deletes its own new row), a
 *   round not committed changes nothing, and after every commit the index
 *   equals the model;
 * - incremental == rebuilt: an index loaded from the lake the rounds made
 *   (every row written by a committed round, less every committed delete)
 *   equals the one the rounds kept;
 * - a round that rewrites the bucket whole (its KV image) deletes every
 *   live row: the rows of keys it put again and of keys it left out, and
 *   leaves exactly its puts live;
 * - a key live twice in a rebuild is refused; a seal naming fewer files
 *   than the puts used is refused;
 * - a row's key and the key read from the lake's Parquet values are the
 *   same bytes (BINARY(n) padded as the file holds it);
 * - a position-delete file written and read back: the set answers every
 *   (path, pos) and nothing else; an unsorted list is refused;
 * - equality deletes (Fluss's tiering job's): a delete of a key applies to
 *   the rows of data files of a lower sequence number only, and becomes
 *   their position deletes; delete files over other columns are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common_buf.h"
#include "tier_deletes.h"
#include "tier_eq_deletes.h"
#include "lake_parquet_writer.h"
#include "tier_pk_index.h"
#include "tier_pk_key.h"
#include "types_datatype.h"

#define KEYS 400
#define ROUNDS 40

/* ---- the model ---- */

typedef struct loc {
    int live;
    char path[32];
    int64_t pos;
} loc_t;

typedef struct lake_row {
    char path[32];
    int64_t pos;
    int key;
} lake_row_t;

typedef struct model {
    loc_t at[KEYS];
    lake_row_t *rows; /* committed rounds' rows, in file order */
    size_t n_rows;
    fl_pk_delete_t *dels; /* committed deletes (paths point into del_paths) */
    char (*del_paths)[32];
    size_t n_dels;
} model_t;

static void key_of(int k, uint8_t out[4]) {
    for (int i = 0; i < 4; i++) out[i] = (uint8_t)(k >> (8 * i));
}

static int del_cmp(const void *a, const void *b) {
    const fl_pk_delete_t *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

static void check_equal(const fl_pk_index_t *x, const model_t *m) {
    size_t live = 0;
    for (int k = 0; k < KEYS; k++) {
        uint8_t key[4];
        key_of(k, key);
        const char *path;
        int64_t pos;
        bool got = fl_pk_index_get(x, key, 4, &path, &pos);
        assert_int_equal(got, m->at[k].live);
        if (!got) continue;
        live++;
        assert_string_equal(path, m->at[k].path);
        assert_int_equal(pos, m->at[k].pos);
    }
    assert_int_equal(fl_pk_index_live(x), live);
}

static void test_rounds_against_model(void **state) {
    (void)state;
    srand(21);
    model_t m;
    memset(&m, 0, sizeof(m));
    m.rows = calloc(ROUNDS * 200, sizeof(*m.rows));
    m.dels = calloc(ROUNDS * 200, sizeof(*m.dels));
    m.del_paths = calloc(ROUNDS * 200, sizeof(*m.del_paths));
    fl_pk_index_t *x = fl_pk_index_new();
    fl_pk_index_set_stamp(x, 0);
    int64_t offset = 0;
    for (int round = 0; round < ROUNDS; round++) {
        fl_pk_index_round_begin(x);
        assert_int_equal(fl_pk_index_round_start(x), offset);
        loc_t at[KEYS];
        memcpy(at, m.at, sizeof(at));
        fl_pk_delete_t want[400];
        char want_paths[400][32];
        lake_row_t rows[200];
        size_t n_want = 0, n_rows = 0;
        size_t file = 0;
        int64_t pos = 0;
        int ops = 1 + rand() % 150;
        for (int op = 0; op < ops; op++) {
            int k = rand() % KEYS;
            uint8_t key[4];
            key_of(k, key);
            if (at[k].live) {
                snprintf(want_paths[n_want], 32, "%s", at[k].path);
                want[n_want].path = want_paths[n_want];
                want[n_want++].pos = at[k].pos;
            }
            if (rand() % 3 == 0) {
                fl_pk_index_round_remove(x, key, 4);
                at[k].live = 0;
            } else {
                if (pos == 30) { /* the writer rolls a file */
                    file++;
                    pos = 0;
                }
                fl_pk_index_round_put(x, key, 4, file, pos);
                at[k].live = 1;
                snprintf(at[k].path, 32, "r%d-f%zu", round, file);
                at[k].pos = pos;
                rows[n_rows] = (lake_row_t){"", pos, k};
                snprintf(rows[n_rows++].path, 32, "r%d-f%zu", round, file);
                pos++;
            }
        }
        size_t n_files = n_rows ? file + 1 : 0;
        char names[8][32];
        const char *paths[8];
        for (size_t f = 0; f < n_files; f++) {
            snprintf(names[f], 32, "r%d-f%zu", round, f);
            paths[f] = names[f];
        }
        const fl_pk_delete_t *dels;
        size_t n_dels;
        fl_error_t err;
        assert_int_equal(fl_pk_index_round_seal(x, paths, n_files, offset + ops,
                                                n_files ? paths[0] : NULL, &dels, &n_dels, &err),
                         0);
        qsort(want, n_want, sizeof(*want), del_cmp);
        assert_int_equal(n_dels, n_want);
        for (size_t i = 0; i < n_dels; i++) {
            assert_string_equal(dels[i].path, want[i].path);
            assert_int_equal(dels[i].pos, want[i].pos);
        }
        if (rand() % 5 == 0) {
            /* the commit failed: the next round starts over from the old state */
            check_equal(x, &m);
            continue;
        }
        for (size_t i = 0; i < n_dels; i++) {
            snprintf(m.del_paths[m.n_dels], 32, "%s", dels[i].path);
            m.dels[m.n_dels] = (fl_pk_delete_t){m.del_paths[m.n_dels], dels[i].pos};
            m.n_dels++;
        }
        fl_pk_index_round_commit(x);
        offset += ops;
        assert_int_equal(fl_pk_index_stamp(x), offset);
        memcpy(m.at, at, sizeof(at));
        memcpy(m.rows + m.n_rows, rows, n_rows * sizeof(*rows));
        m.n_rows += n_rows;
        check_equal(x, &m);
    }

    /* incremental == rebuilt from the lake's rows less its deletes */
    fl_pk_index_t *y = fl_pk_index_new();
    for (size_t i = 0; i < m.n_rows; i++) {
        bool deleted = false;
        for (size_t d = 0; d < m.n_dels && !deleted; d++)
            deleted = strcmp(m.dels[d].path, m.rows[i].path) == 0 && m.dels[d].pos == m.rows[i].pos;
        if (deleted) continue;
        uint8_t key[4];
        key_of(m.rows[i].key, key);
        fl_error_t err;
        assert_int_equal(fl_pk_index_load(y, key, 4, fl_pk_index_file_id(y, m.rows[i].path),
                                          m.rows[i].pos, &err),
                         0);
    }
    check_equal(y, &m);
    fl_pk_index_destroy(y);
    fl_pk_index_destroy(x);
    free(m.rows);
    free(m.dels);
    free(m.del_paths);
}

static void test_refusals(void **state) {
    (void)state;
    fl_pk_index_t *x = fl_pk_index_new();
    fl_error_t err;
    int32_t f = fl_pk_index_file_id(x, "a");
    assert_int_equal(fl_pk_index_file_id(x, "a"), f);
    assert_int_equal(fl_pk_index_load(x, "k", 1, f, 0, &err), 0);
    assert_int_equal(fl_pk_index_load(x, "k", 1, f, 1, &err), FLUSS_ERR__CORRUPT);
    assert_non_null(strstr(err.msg, "live twice"));
    fl_pk_index_round_begin(x);
    fl_pk_index_round_put(x, "j", 1, 2, 0); /* the round's third file */
    const char *paths[2] = {"p0", "p1"};
    const fl_pk_delete_t *dels;
    size_t n;
    assert_int_equal(fl_pk_index_round_seal(x, paths, 2, 5, "p0", &dels, &n, &err),
                     FLUSS_ERR__INVALID_ARG);
    /* clear forgets everything: the state is unknown again */
    fl_pk_index_clear(x);
    assert_int_equal(fl_pk_index_stamp(x), -1);
    assert_int_equal(fl_pk_index_live(x), 0);
    /* a removal of a key that is not live deletes nothing */
    fl_pk_index_set_stamp(x, 0);
    fl_pk_index_round_begin(x);
    fl_pk_index_round_remove(x, "z", 1);
    assert_int_equal(fl_pk_index_round_seal(x, NULL, 0, 1, NULL, &dels, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_null(fl_pk_index_round_witness(x));
    fl_pk_index_round_commit(x);
    assert_int_equal(fl_pk_index_stamp(x), 1);
    fl_pk_index_destroy(x);
}

static void test_round_rewrites_the_bucket(void **state) {
    (void)state;
    fl_pk_index_t *x = fl_pk_index_new();
    fl_error_t err;
    int32_t f = fl_pk_index_file_id(x, "old");
    for (int k = 0; k < 100; k++) {
        uint8_t key[4];
        key_of(k, key);
        assert_int_equal(fl_pk_index_load(x, key, 4, f, k, &err), 0);
    }
    fl_pk_index_set_stamp(x, 500);
    fl_pk_index_round_begin(x);
    /* the image: even keys of the old ones, and 50 new keys */
    int64_t pos = 0;
    for (int k = 0; k < 150; k++) {
        if (k < 100 && k % 2) continue;
        uint8_t key[4];
        key_of(k, key);
        fl_pk_index_round_put(x, key, 4, 0, pos++);
    }
    uint8_t gone[4];
    key_of(7, gone);
    fl_pk_index_round_remove(x, gone, 4); /* a key the round removed itself */
    assert_int_equal(fl_pk_index_round_remove_rest(x), 49); /* odd keys but 7 */
    const char *paths[1] = {"image"};
    const fl_pk_delete_t *dels;
    size_t n;
    assert_int_equal(fl_pk_index_round_seal(x, paths, 1, 900, "image", &dels, &n, &err), 0);
    assert_int_equal(n, 100); /* every old row, each once */
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(dels[i].path, "old");
        assert_int_equal(dels[i].pos, (int64_t)i);
    }
    fl_pk_index_round_commit(x);
    assert_int_equal(fl_pk_index_stamp(x), 900);
    assert_int_equal(fl_pk_index_live(x), 100);
    for (int k = 0; k < 150; k++) {
        uint8_t key[4];
        key_of(k, key);
        const char *path;
        int64_t at;
        bool live = fl_pk_index_get(x, key, 4, &path, &at);
        assert_int_equal(live, k >= 100 || k % 2 == 0);
        if (live) assert_string_equal(path, "image");
    }
    fl_pk_index_destroy(x);
}

/* ---- keys ---- */

static fl_datatype_t *type_of(const char *text) {
    const char *p = text;
    fl_datatype_t *t;
    fl_error_t err;
    if (fl_datatype_parse(&p, &t, &err)) fail_msg("%s: %s", text, err.msg);
    return t;
}

static void test_row_key_equals_file_key(void **state) {
    (void)state;
    fl_column_t cols[4] = {{.name = "a", .type = type_of("INT NOT NULL")},
                           {.name = "v", .type = type_of("STRING")},
                           {.name = "b", .type = type_of("BINARY(4) NOT NULL")},
                           {.name = "c", .type = type_of("STRING NOT NULL")}};
    fl_schema_t s = {.column_count = 4, .columns = cols, .has_primary_key = true};
    fl_strlist_add(&s.primary_key, "c");
    fl_strlist_add(&s.primary_key, "a");
    fl_strlist_add(&s.primary_key, "b");
    fl_row_t row;
    fl_row_init(&row, 4);
    row.cells[0].is_null = false;
    row.cells[0].i = -7;
    fl_row_set_bytes(&row, 2, "\x01\x02", 2); /* an IndexedRow's BINARY(4) without its padding */
    fl_row_set_bytes(&row, 3, "key", 3);
    fl_buf_t k1, k2;
    fl_buf_init(&k1);
    fl_buf_init(&k2);
    fl_error_t err;
    assert_int_equal(fl_tier_pk_key_of_row(&s, &row, &k1, &err), 0);
    /* the same key from one-row Parquet columns, in key order c, a, b */
    uint8_t valid = 1;
    uint64_t offs_c[2] = {0, 3}, offs_b[2] = {0, 4};
    int32_t a = -7;
    fl_pq_values_t vc = {.type = FL_PQ_BYTE_ARRAY, .rows = 1, .valid = &valid, .offsets = offs_c,
                         .bytes = (uint8_t *)"key"};
    fl_pq_values_t va = {.type = FL_PQ_INT32, .rows = 1, .valid = &valid, .values = &a,
                         .width = 4};
    fl_pq_values_t vb = {.type = FL_PQ_BYTE_ARRAY, .rows = 1, .valid = &valid, .offsets = offs_b,
                         .bytes = (uint8_t *)"\x01\x02\0\0"};
    assert_int_equal(fl_tier_pk_key_append(&vc, 0, &k2, &err), 0);
    assert_int_equal(fl_tier_pk_key_append(&va, 0, &k2, &err), 0);
    assert_int_equal(fl_tier_pk_key_append(&vb, 0, &k2, &err), 0);
    assert_int_equal(k1.len, k2.len);
    assert_memory_equal(k1.data, k2.data, k1.len);
    /* a NULL key value, a row past the end */
    valid = 0;
    assert_int_equal(fl_tier_pk_key_append(&va, 0, &k2, &err), FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_int_equal(fl_tier_pk_key_append(&vc, 1, &k2, &err), FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    row.cells[3].is_null = true;
    assert_int_equal(fl_tier_pk_key_of_row(&s, &row, &k1, &err), FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    fl_buf_free(&k1);
    fl_buf_free(&k2);
    fl_row_free(&row);
    fl_strlist_free(&s.primary_key);
    for (int i = 0; i < 4; i++) fl_datatype_destroy(cols[i].type);
}

/* ---- position-delete files ---- */

static void test_delete_file_round_trip(void **state) {
    (void)state;
    char dir[] = "/tmp/test_tier_deletes.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof(path), "%s/d.parquet", dir);
    enum { N = 5000 };
    fl_pk_delete_t *d = calloc(N, sizeof(*d));
    const char *files[3] = {"file:///w/a.parquet", "file:///w/b.parquet", "file:///w/c.parquet"};
    for (int i = 0; i < N; i++) d[i] = (fl_pk_delete_t){files[i * 3 / N], 2 * (int64_t)i};
    fl_tier_delete_file_t df;
    fl_error_t err;
    assert_int_equal(fl_tier_deletes_write(path, d, N, FL_PQ_CODEC_ZSTD, &df, &err), 0);
    assert_int_equal(df.file.content, FL_ICE_POSITION_DELETES);
    assert_int_equal(df.file.record_count, N);
    assert_int_equal(df.file.n_columns, 2);
    assert_int_equal(df.file.columns[0].field_id, FL_ICE_DELETE_POS_ID);
    assert_int_equal(df.file.columns[1].field_id, FL_ICE_DELETE_FILE_PATH_ID);
    assert_memory_equal(df.file.columns[1].lower.p, files[0], strlen(files[0]));
    assert_memory_equal(df.file.columns[1].upper.p, files[2], strlen(files[2]));
    fl_tier_deletes_t s;
    fl_tier_deletes_init(&s);
    assert_int_equal(fl_tier_deletes_read(&s, path, 1 << 24, &err), 0);
    assert_int_equal(fl_tier_deletes_read(&s, path, 1 << 24, &err), 0); /* twice: no harm */
    fl_tier_deletes_seal(&s);
    for (int i = 0; i < N; i++) {
        assert_true(fl_tier_deletes_has(&s, d[i].path, d[i].pos));
        assert_false(fl_tier_deletes_has(&s, d[i].path, d[i].pos + 1));
    }
    assert_false(fl_tier_deletes_has(&s, "file:///w/z.parquet", 0));
    assert_int_equal(fl_tier_deletes_count(&s, files[1]) % 2, 0);
    fl_tier_deletes_free(&s);
    fl_tier_delete_file_free(&df);
    /* unsorted, empty */
    fl_pk_delete_t bad[2] = {{files[1], 0}, {files[0], 0}};
    assert_int_equal(fl_tier_deletes_write(path, bad, 2, FL_PQ_CODEC_ZSTD, &df, &err),
                     FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fl_tier_deletes_write(path, bad, 0, FL_PQ_CODEC_ZSTD, &df, &err),
                     FLUSS_ERR__INVALID_ARG);
    /* a data file is not a delete file */
    fl_tier_deletes_init(&s);
    FILE *f = fopen(path, "wb");
    fputs("PAR1 not really", f);
    fclose(f);
    assert_int_not_equal(fl_tier_deletes_read(&s, path, 1 << 24, &err), 0);
    fl_tier_deletes_free(&s);
    unlink(path);
    rmdir(dir);
    free(d);
}

/* A Parquet file of n rows: an INT32 key (field id 1) k0, k0 + step, ...
 * and, when with_name, a string column (field id 2). */
static void write_keys(const char *path, int32_t k0, int32_t step, size_t n, bool with_name) {
    fl_pq_column_spec_t cols[2] = {{"id", 1, FL_PQ_INT32, false, {0}, 0},
                                   {"name", 2, FL_PQ_BYTE_ARRAY, true, {FL_PQ_LT_STRING, 0, 0, false, 0}, 0}};
    int32_t *ids = calloc(n, sizeof(int32_t));
    fl_pq_bytes_t *names = calloc(n, sizeof(*names));
    for (size_t i = 0; i < n; i++) {
        ids[i] = k0 + step * (int32_t)i;
        names[i] = (fl_pq_bytes_t){(const uint8_t *)"x", 1};
    }
    fl_pq_writer_options_t o;
    fl_pq_writer_options_init(&o);
    o.page_rows_max = 64; /* several pages, and row groups below */
    o.row_group_bytes_max = 2048;
    fl_pq_writer_t *w;
    fl_error_t err;
    if (fl_pq_writer_open(path, cols, with_name ? 2 : 1, &o, &w, &err)) fail_msg("%s", err.msg);
    fl_pq_column_data_t cd[2] = {{.values = ids}, {.values = names}};
    assert_int_equal(fl_pq_writer_append(w, cd, n, &err), 0);
    assert_int_equal(fl_pq_writer_finish(w, &err), 0);
    fl_pq_writer_destroy(w);
    free(ids);
    free(names);
}

static void test_equality_deletes(void **state) {
    (void)state;
    char dir[] = "/tmp/test_tier_eq.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char data1[256], data3[256], del2[256], del3[256], other[256];
    snprintf(data1, sizeof(data1), "%s/data1.parquet", dir);
    snprintf(data3, sizeof(data3), "%s/data3.parquet", dir);
    snprintf(del2, sizeof(del2), "%s/del2.parquet", dir);
    snprintf(del3, sizeof(del3), "%s/del3.parquet", dir);
    snprintf(other, sizeof(other), "%s/other.parquet", dir);
    write_keys(data1, 0, 1, 1000, true);   /* keys 0..999, sequence 1 */
    write_keys(data3, 5, 100, 10, true);   /* keys 5, 105, .., 905 again, sequence 3 */
    write_keys(del2, 0, 3, 200, false);    /* deletes 0, 3, .., 597 at sequence 2 */
    write_keys(del3, 5, 100, 10, false);   /* deletes 5, 105, .., 905 at sequence 3 */
    fl_tier_eq_deletes_t eq;
    fl_tier_eq_deletes_init(&eq);
    fl_error_t err;
    const int32_t key[1] = {1};
    assert_int_equal(fl_tier_eq_deletes_read(&eq, del2, key, 1, 2, 1 << 24, &err), 0);
    assert_int_equal(fl_tier_eq_deletes_read(&eq, del3, key, 1, 3, 1 << 24, &err), 0);
    const int32_t both[2] = {1, 2};
    assert_int_equal(fl_tier_eq_deletes_read(&eq, del2, both, 2, 2, 1 << 24, &err),
                     FLUSS_ERR__INVALID_ARG);
    fl_tier_eq_deletes_seal(&eq);
    assert_int_equal(fl_tier_eq_deletes_count(&eq), 210);
    fl_tier_deletes_t pos;
    fl_tier_deletes_init(&pos);
    assert_int_equal(fl_tier_eq_deletes_apply(&eq, data1, "u1", 1, 1 << 24, &pos, &err), 0);
    assert_int_equal(fl_tier_eq_deletes_apply(&eq, data3, "u3", 3, 1 << 24, &pos, &err), 0);
    fl_tier_deletes_seal(&pos);
    for (int64_t k = 0; k < 1000; k++) /* data1 row k holds key k */
        assert_int_equal(fl_tier_deletes_has(&pos, "u1", k),
                         (k % 3 == 0 && k <= 597) || k % 100 == 5);
    /* sequence 3: the sequence-2 deletes and its own sequence's are older or equal */
    assert_int_equal(fl_tier_deletes_count(&pos, "u3"), 0);
    fl_tier_deletes_free(&pos);
    fl_tier_eq_deletes_free(&eq);
    /* a delete file without the key column */
    fl_tier_eq_deletes_init(&eq);
    const int32_t missing[1] = {7};
    assert_int_equal(fl_tier_eq_deletes_read(&eq, del2, missing, 1, 2, 1 << 24, &err),
                     FLUSS_ERR__CORRUPT);
    fl_tier_eq_deletes_free(&eq);
    const char *all[5] = {data1, data3, del2, del3, other};
    for (int i = 0; i < 5; i++) unlink(all[i]);
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rounds_against_model),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_round_rewrites_the_bucket),
        cmocka_unit_test(test_row_key_equals_file_key),
        cmocka_unit_test(test_delete_file_round_trip),
        cmocka_unit_test(test_equality_deletes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
