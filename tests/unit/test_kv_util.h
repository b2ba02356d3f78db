/*
 * test_kv_util.h — for kv tablet tests: a bucket (replica manager, replica,
 * kv tablet) in a test directory over a table (id INT, name STRING, score
 * BIGINT, primary key id), KV batches of upserts and deletes put through
 * the tablet, lookups, the change types in the log, and a model of the
 * table driven by pseudo-random ops. Uses cmocka's asserts; the includer
 * defines _XOPEN_SOURCE (rand_r) and includes cmocka first.
 */
#ifndef TEST_KV_UTIL_H
#define TEST_KV_UTIL_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_workq.h"
#include "kv_table_fixture.h"
#include "kv_tablet.h"
#include "record_batch.h"
#include "record_kv.h"
#include "replica_kv_log.h"
#include "replica_manager.h"
#include "types_row_compacted.h"

#define KEYS 64

typedef struct env {
    char dir[512], kvdir[600];
    fl_workq_t *workers;
    fl_workq_t *committer; /* NULL: puts commit inline; else the kv committer thread */
    fl_replica_manager_t rm;
    fl_replica_t *r;
    fl_schema_t schema;
    const fl_datatype_t *types[3];
    fl_kv_table_t t;
    fl_kv_tablet_t *kt;
    int64_t writer_seq;
    /* the table's durable auto-increment counter (the metastore's) */
    int64_t seq;
    int seq_reserves;
    bool seq_fail;
} env_t;

static inline const fl_datatype_t *const *env_types(const void *ctx, int16_t id, size_t *n) {
    const env_t *e = ctx;
    if (id != 1) return NULL;
    *n = 3;
    return e->types;
}

static inline void env_commit_run(void *arg) {
    fl_kv_tablet_commit_job(arg);
}

/* the server's kv committer: RocksDB writes on a thread of their own */
static inline void env_commit_submit(void *ctx, fl_kv_tablet_t *kt) {
    env_t *e = ctx;
    fl_workq_submit(e->committer, env_commit_run, kt);
}

static inline void env_open_kv(env_t *e) {
    fl_error_t err;
    fl_kv_store_options_t o = {.write_buffer_bytes = 256 * 1024, .write_buffer_count = 2};
    int rc = fl_kv_tablet_open(e->kvdir, fl_replica_kv_log(e->r), &e->t, &o, &e->kt, &err);
    if (rc) fail_msg("open: %s", err.msg);
    if (e->committer) {
        e->kt->commit_submit = env_commit_submit;
        e->kt->commit_ctx = e;
    }
}

/* sync: log.flush.mode sync, the high watermark following fsyncs on the
 * worker (a put's changes then wait in the pre-write buffer). */
static inline env_t *env_new_with(const char *dir, bool sync) {
    env_t *e = calloc(1, sizeof(*e));
    snprintf(e->dir, sizeof(e->dir), "%s", dir);
    snprintf(e->kvdir, sizeof(e->kvdir), "%s/kv-0", dir);
    e->workers = fl_workq_new(1, "t-work");
    fl_log_config_t lc = {1 << 20, 4096, 0, 1 << 20, false, false, false};
    fl_durability_t d = {INT64_MAX, 0, sync};
    fl_replica_manager_init(&e->rm, dir, &lc, &d, e->workers);
    fl_error_t err;
    assert_int_equal(fl_replica_manager_open(&e->rm, "db", "t", 1, -1, NULL, 0, 0, &e->r, &err), 0);
    assert_int_equal(kv_fixture_table(&e->schema, &e->t, env_types, e), 0);
    for (int i = 0; i < 3; i++) e->types[i] = e->schema.columns[i].type;
    env_open_kv(e);
    return e;
}

static inline env_t *env_new(const char *dir) {
    return env_new_with(dir, false);
}

static inline void env_free(env_t *e) {
    fl_kv_tablet_close(e->kt, false);
    if (e->committer) fl_workq_destroy(e->committer);
    fl_replica_unref(e->r);
    fl_replica_manager_close(&e->rm);
    fl_workq_destroy(e->workers);
    fl_schema_free(&e->schema);
    free(e);
}

/* The key and compacted value row of (id, name, score); name NULL allowed. */
static inline void encode(env_t *e, int32_t id, const char *name, int64_t score,
                          fl_buf_t *key, fl_buf_t *row) {
    fl_row_t r;
    fl_row_init(&r, 3);
    r.cells[0].is_null = false;
    r.cells[0].i = id;
    if (name) fl_row_set_bytes(&r, 1, name, strlen(name));
    r.cells[2].is_null = false;
    r.cells[2].i = score;
    fl_error_t err;
    int32_t pk = 0;
    fl_buf_reset(key);
    fl_buf_reset(row);
    assert_int_equal(fl_compacted_key_encode(&r, &e->schema, &pk, 1, key, &err), 0);
    assert_int_equal(fl_compacted_row_encode(&r, e->types, 3, row, &err), 0);
    fl_row_free(&r);
}

typedef struct op {
    int32_t id;
    const char *name; /* NULL with del */
    int64_t score;
    bool del;
} op_t;

static inline int put_ops(env_t *e, const op_t *ops, size_t n, const int32_t *targets,
                          size_t nt, fl_kv_appended_t *res, fl_error_t *err) {
    fl_kv_batch_builder_t b;
    fl_kv_batch_builder_init(&b, 1, -1, -1);
    fl_buf_t key, row, batch;
    fl_buf_init(&key);
    fl_buf_init(&row);
    fl_buf_init(&batch);
    for (size_t i = 0; i < n; i++) {
        encode(e, ops[i].id, ops[i].name, ops[i].score, &key, &row);
        fl_kv_batch_builder_add(&b, key.data, key.len, ops[i].del ? NULL : row.data,
                                ops[i].del ? 0 : row.len);
    }
    fl_kv_batch_builder_finish(&b, &batch);
    fl_kv_put_t p = {batch.data, batch.len, targets, nt, false, 1000};
    int rc = fl_kv_tablet_put(e->kt, &e->t, &p, res, err);
    fl_buf_free(&key);
    fl_buf_free(&row);
    fl_buf_free(&batch);
    fl_kv_batch_builder_free(&b);
    return rc;
}

static inline void put_ok(env_t *e, const op_t *ops, size_t n) {
    fl_kv_appended_t res;
    fl_error_t err;
    int rc = put_ops(e, ops, n, NULL, 0, &res, &err);
    if (rc) fail_msg("put: %s", err.msg);
}

/* Looks id up: -1 absent, -2 score NULL, else its score; *name gets the
 * name ("NULL" for NULL). */
static inline int64_t look(env_t *e, int32_t id, char *name, size_t cap) {
    fl_buf_t key, row, val;
    fl_buf_init(&key);
    fl_buf_init(&row);
    fl_buf_init(&val);
    encode(e, id, NULL, 0, &key, &row);
    bool found = false;
    fl_error_t err;
    assert_int_equal(fl_kv_tablet_lookup(e->kt, key.data, key.len, &val, &found, &err), 0);
    int64_t score = -1;
    if (found) {
        assert_true(val.len > 2);
        assert_int_equal(val.data[0] | val.data[1] << 8, 1);
        fl_row_t r;
        fl_row_init(&r, 3);
        assert_int_equal(fl_compacted_row_decode(val.data + 2, val.len - 2, e->types, 3, &r, &err), 0);
        assert_int_equal(r.cells[0].i, id);
        score = r.cells[2].is_null ? -2 : r.cells[2].i;
        if (name) {
            if (r.cells[1].is_null) snprintf(name, cap, "NULL");
            else snprintf(name, cap, "%.*s", (int)r.cells[1].len, fl_row_cell_bytes(&r, &r.cells[1]));
        }
        fl_row_free(&r);
    }
    fl_buf_free(&key);
    fl_buf_free(&row);
    fl_buf_free(&val);
    return score;
}

/* The change types of every record in the log, as a string of digits. */
static inline void change_types(env_t *e, char *out, size_t cap) {
    fl_buf_t buf;
    fl_buf_init(&buf);
    fl_error_t err;
    assert_int_equal(fl_replica_read(e->r, 0, 1 << 20, &buf, &err), 0);
    size_t pos = 0, o = 0;
    fl_batch_view_t b;
    while (fl_batch_parse_next(buf.data, buf.len, &pos, &b, &err) == 0) {
        assert_false(b.attributes & FL_BATCH_ATTR_APPEND_ONLY);
        if (b.record_count == 0 && o + 1 < cap) out[o++] = '.';
        for (int32_t i = 0; i < b.record_count && o + 1 < cap; i++)
            out[o++] = (char)('0' + b.data[b.records_start + (size_t)i]);
    }
    out[o] = 0;
    fl_buf_free(&buf);
}

/* A model of the table driven by pseudo-random ops. */
static inline void random_ops(env_t *e, int64_t *model, unsigned *seed, int batches) {
    for (int b = 0; b < batches; b++) {
        op_t ops[16];
        for (int i = 0; i < 16; i++) {
            int32_t id = (int32_t)(rand_r(seed) % KEYS);
            bool del = rand_r(seed) % 4 == 0;
            int64_t score = rand_r(seed) % 100000;
            ops[i] = (op_t){id, del ? NULL : "n", score, del};
            model[id] = del ? -1 : score;
        }
        put_ok(e, ops, 16);
    }
}

static inline void assert_model(env_t *e, const int64_t *model) {
    for (int32_t id = 0; id < KEYS; id++) assert_int_equal(look(e, id, NULL, 0), model[id]);
}

/* The rows of the model (keys with a row). */
static inline int64_t model_rows(const int64_t *model) {
    int64_t n = 0;
    for (int i = 0; i < KEYS; i++) n += model[i] != -1;
    return n;
}

#endif
