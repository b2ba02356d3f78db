/*
 * crash_kv.c — the primary-key workload of the storage-fault tools
 * (crash_workload.h): a bucket's KV tablet over its log, upserts and
 * deletes of 64 keys, a snapshot every few puts uploaded to a remote
 * directory inside the recorded tree (copies, links, the metadata file,
 * retention of old snapshots), a clean close. RocksDB writes its own files
 * (not through the seam), so every crash state lacks the local store: the
 * check restores the newest snapshot that restores, as flussd does for a
 * bucket whose local state is gone, opens the tablet (which replays the
 * log after the snapshot) and compares every key with the model of the
 * table at the recovered log end.
 */
#define _GNU_SOURCE
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/kv_table_fixture.h"
#include "crash_workload.h"
#include "kv_tablet.h"
#include "record_kv.h"
#include "replica_kv_log.h"
#include "types_row_compacted.h"

typedef struct kv_env {
    fl_schema_t schema;
    const fl_datatype_t *types[3];
    fl_kv_table_t t;
} kv_env_t;

static const fl_datatype_t *const *kv_types(const void *ctx, int16_t id, size_t *n) {
    const kv_env_t *e = ctx;
    if (id != 1) return NULL;
    *n = 3;
    return e->types;
}

static int kv_env_init(kv_env_t *e) {
    memset(e, 0, sizeof(*e));
    if (kv_fixture_table(&e->schema, &e->t, kv_types, e)) return -1;
    for (int i = 0; i < 3; i++) e->types[i] = e->schema.columns[i].type;
    return 0;
}

static int kv_encode(kv_env_t *e, int32_t id, int64_t score, fl_buf_t *key, fl_buf_t *row) {
    fl_row_t r;
    fl_row_init(&r, 3);
    r.cells[0].is_null = false;
    r.cells[0].i = id;
    fl_row_set_bytes(&r, 1, "n", 1);
    r.cells[2].is_null = false;
    r.cells[2].i = score;
    fl_error_t err;
    int32_t pk = 0;
    fl_buf_reset(key);
    fl_buf_reset(row);
    int rc = fl_compacted_key_encode(&r, &e->schema, &pk, 1, key, &err) ||
             fl_compacted_row_encode(&r, e->types, 3, row, &err);
    fl_row_free(&r);
    return rc;
}

static void kv_paths(const char *dir, char *kvdir, char *remote, size_t cap) {
    snprintf(kvdir, cap, "%s/" CE_DB "/" CE_TABLE "-%d/kv-0", dir, CE_TABLE_ID);
    snprintf(remote, cap, "%s/remote/kv-0", dir);
}

static void kv_models_push(workload_t *wl, const int64_t *model, int64_t end) {
    wl->kv_models = realloc(wl->kv_models, (wl->kv_count + 1) * sizeof(*wl->kv_models));
    wl->kv_ends = realloc(wl->kv_ends, (wl->kv_count + 1) * sizeof(int64_t));
    memcpy(wl->kv_models[wl->kv_count], model, sizeof(*wl->kv_models));
    wl->kv_ends[wl->kv_count++] = end;
}

int cw_kv_workload(workload_t *wl, const cfg_t *c, const char *dir, crash_log_t *log) {
    kv_env_t env;
    if (kv_env_init(&env)) return -1;
    crash_record_start(log, dir);
    log->drop_rename_syncs = c->mut_nodirsync;
    log->unordered = c->unordered;
    fl_replica_manager_t rm;
    cw_rm_open(&rm, dir, wl, c);
    fl_replica_t *r;
    fl_error_t err;
    fl_kv_tablet_t *kt = NULL;
    char kvdir[4096], remote[4096];
    kv_paths(dir, kvdir, remote, sizeof(kvdir));
    int rc = fl_replica_manager_open(&rm, CE_DB, CE_TABLE, CE_TABLE_ID, -1, NULL, 0, 0, &r, &err);
    fl_kv_store_options_t o = {.write_buffer_bytes = 256 * 1024, .write_buffer_count = 2};
    if (!rc) rc = fl_kv_tablet_open(kvdir, fl_replica_kv_log(r), &env.t, &o, &kt, &err);
    if (!rc) rc = fl_kv_tablet_set_remote(kt, remote, &err);
    if (rc) {
        fprintf(stderr, "crash_enum: kv open: %s\n", err.msg);
        crash_record_stop();
        return -1;
    }
    int64_t model[CW_KV_KEYS];
    for (int i = 0; i < CW_KV_KEYS; i++) model[i] = -1;
    kv_models_push(wl, model, 0);
    unsigned rnd = c->seed;
    fl_buf_t key, row, batch;
    fl_buf_init(&key);
    fl_buf_init(&row);
    fl_buf_init(&batch);
    for (int p = 0; p < c->appends && !rc; p++) {
        fl_kv_batch_builder_t b;
        fl_kv_batch_builder_init(&b, 1, -1, -1);
        for (int i = 0; i < 8; i++) {
            int32_t id = (int32_t)(rand_r(&rnd) % CW_KV_KEYS);
            bool del = rand_r(&rnd) % 4 == 0;
            int64_t score = rand_r(&rnd) % 100000;
            kv_encode(&env, id, score, &key, &row);
            fl_kv_batch_builder_add(&b, key.data, key.len, del ? NULL : row.data, del ? 0 : row.len);
            model[id] = del ? -1 : score;
        }
        fl_buf_reset(&batch);
        fl_kv_batch_builder_finish(&b, &batch);
        fl_kv_batch_builder_free(&b);
        fl_kv_put_t put = {batch.data, batch.len, NULL, 0, false, 1000 + p};
        fl_kv_appended_t res;
        rc = fl_kv_tablet_put(kt, &env.t, &put, &res, &err);
        if (rc) {
            fprintf(stderr, "crash_enum: kv put: %s\n", err.msg);
            break;
        }
        kv_models_push(wl, model, fl_replica_log_end(r));
        int64_t owed = wl->sync_mode ? fl_replica_high_watermark(r) : fl_replica_log_end(r);
        wl_mark(wl, log, owed, fl_replica_flushed(r), 0);
        if (p % 6 == 5) { /* a snapshot, keeping the newest two */
            bool taken;
            if (fl_kv_tablet_snapshot(kt, 5000 + p, 2, NULL, &taken, &err))
                fprintf(stderr, "crash_enum: kv snapshot: %s\n", err.msg);
            wl_mark(wl, log, owed, fl_replica_flushed(r), 0);
        }
    }
    fl_buf_free(&key);
    fl_buf_free(&row);
    fl_buf_free(&batch);
    fl_kv_tablet_close(kt, false);
    fl_replica_unref(r);
    fl_replica_manager_close(&rm);
    int64_t end = wl->kv_ends[wl->kv_count - 1];
    wl_mark(wl, log, end, end, 0);
    crash_record_stop();
    fl_schema_free(&env.schema);
    return rc;
}

void ce_check_kv(const workload_t *wl, const cfg_t *c, const char *dir, mark_t owed,
                 crash_mode_t mode, int *refused, int *lost, int *state_bad, char *msg,
                 size_t cap) {
    kv_env_t env;
    if (kv_env_init(&env)) {
        (*refused)++;
        return;
    }
    fl_replica_manager_t rm;
    fl_replica_t *r;
    fl_error_t err;
    if (cw_bucket_open(&rm, dir, wl, c, &r, &err)) {
        snprintf(msg, cap, "log refused: %s", err.msg);
        (*refused)++;
        fl_schema_free(&env.schema);
        return;
    }
    char kvdir[4096], remote[4096];
    kv_paths(dir, kvdir, remote, sizeof(kvdir));
    /* the local store is gone: the newest snapshot that restores */
    int64_t *ids = NULL;
    size_t n = 0;
    if (fl_kv_snapshot_list(remote, &ids, &n, &err) == 0)
        for (size_t k = n; k-- > 0;)
            if (fl_kv_snapshot_restore(remote, ids[k], kvdir, &err) == 0) break;
    free(ids);
    fl_kv_tablet_t *kt;
    fl_kv_store_options_t o = {.write_buffer_bytes = 256 * 1024, .write_buffer_count = 2};
    if (fl_kv_tablet_open(kvdir, fl_replica_kv_log(r), &env.t, &o, &kt, &err)) {
        snprintf(msg, cap, "kv refused: %s", err.msg);
        (*refused)++;
        fl_replica_unref(r);
        fl_replica_manager_close(&rm);
        fl_schema_free(&env.schema);
        return;
    }
    int64_t end = fl_replica_log_end(r);
    int64_t owed_end = mode == CRASH_KEPT || wl->sync_mode ? owed.written : owed.durable;
    if (end < owed_end) {
        snprintf(msg, cap, "kv log ends at %lld, %lld was owed", (long long)end,
                 (long long)owed_end);
        (*lost)++;
    }
    size_t p = 0;
    while (p < wl->kv_count && wl->kv_ends[p] != end) p++;
    if (p == wl->kv_count) {
        snprintf(msg, cap, "kv log ends at %lld, not after a put", (long long)end);
        (*state_bad)++;
    } else {
        fl_buf_t key, row, val;
        fl_buf_init(&key);
        fl_buf_init(&row);
        fl_buf_init(&val);
        for (int32_t id = 0; id < CW_KV_KEYS; id++) {
            kv_encode(&env, id, 0, &key, &row);
            bool found = false;
            int64_t score = -1;
            if (fl_kv_tablet_lookup(kt, key.data, key.len, &val, &found, &err) == 0 && found) {
                fl_row_t rr;
                fl_row_init(&rr, 3);
                if (val.len > 2 &&
                    fl_compacted_row_decode(val.data + 2, val.len - 2, env.types, 3, &rr, &err) == 0)
                    score = rr.cells[2].i;
                else
                    score = -3;
                fl_row_free(&rr);
            }
            if (score != wl->kv_models[p][id]) {
                snprintf(msg, cap, "kv key %d is %lld after put %zu, not %lld", id,
                         (long long)score, p, (long long)wl->kv_models[p][id]);
                (*state_bad)++;
                break;
            }
        }
        fl_buf_free(&key);
        fl_buf_free(&row);
        fl_buf_free(&val);
    }
    fl_kv_tablet_close(kt, false);
    fl_replica_unref(r);
    fl_replica_manager_close(&rm);
    fl_schema_free(&env.schema);
}

int cw_kv_save(const workload_t *wl, const char *path) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    bool ok = fwrite(&wl->kv_count, sizeof(wl->kv_count), 1, f) == 1 &&
              fwrite(wl->kv_models, sizeof(*wl->kv_models), wl->kv_count, f) == wl->kv_count &&
              fwrite(wl->kv_ends, sizeof(int64_t), wl->kv_count, f) == wl->kv_count;
    return fclose(f) == 0 && ok ? 0 : -1;
}

int cw_kv_load(workload_t *wl, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t n = 0;
    bool ok = fread(&n, sizeof(n), 1, f) == 1 && n > 0 && n < (1u << 20);
    if (ok) {
        wl->kv_count = n;
        wl->kv_models = calloc(n, sizeof(*wl->kv_models));
        wl->kv_ends = calloc(n, sizeof(int64_t));
        ok = fread(wl->kv_models, sizeof(*wl->kv_models), n, f) == n &&
             fread(wl->kv_ends, sizeof(int64_t), n, f) == n;
    }
    fclose(f);
    return ok ? 0 : -1;
}
