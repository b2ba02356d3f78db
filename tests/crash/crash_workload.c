/*
 * crash_workload.c — the storage-fault workloads (crash_workload.h).
 */
#define _GNU_SOURCE
#include "crash_workload.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/batch_builder.h"
#include "common_error.h"
#include "record_batch.h"

/* ---- what the workload wrote and when ---- */




void wl_mark(workload_t *wl, const crash_log_t *log, int64_t written, int64_t durable,
                    int64_t log_start) {
    if (wl->nm == wl->capm) {
        wl->capm = wl->capm ? wl->capm * 2 : 256;
        wl->marks = realloc(wl->marks, wl->capm * sizeof(mark_t));
    }
    wl->marks[wl->nm++] = (mark_t){log->count, written, durable, log_start, wl->meta_done};
}

/* What is owed at a prefix: the last mark at or before it. */
mark_t wl_owed(const workload_t *wl, size_t prefix) {
    mark_t m = {0, 0, 0, 0, 0};
    for (size_t i = 0; i < wl->nm && wl->marks[i].ops <= prefix; i++) m = wl->marks[i];
    return m;
}

void wl_free(workload_t *wl) {
    for (size_t i = 0; i < wl->nw; i++) free(wl->w[i].bytes);
    free(wl->w);
    free(wl->marks);
    for (int i = 0; i < wl->meta_cap; i++) free(wl->meta_digests[i]);
    free(wl->meta_digests);
    free(wl->kv_models);
    free(wl->kv_ends);
}

/* ---- the log workload ---- */



static void cw_log_config(const workload_t *wl, const cfg_t *c, fl_log_config_t *lc,
                          fl_durability_t *d) {
    memset(lc, 0, sizeof(*lc));
    lc->segment_bytes = c->segment_bytes;
    lc->index_interval = 256;
    lc->batch_bytes_max = 1 << 20;
    memset(d, 0, sizeof(*d));
    /* sync mode flushes for every append by itself */
    d->flush_interval_messages = wl->sync_mode ? INT64_MAX : c->flush_every;
    d->sync = wl->sync_mode;
}

void cw_rm_open(fl_replica_manager_t *rm, const char *dir, const workload_t *wl,
                       const cfg_t *c) {
    fl_log_config_t lc;
    fl_durability_t d;
    cw_log_config(wl, c, &lc, &d);
    fl_replica_manager_init(rm, dir, &lc, &d, NULL);
    rm->log_defaults.defer_sync = true; /* as flussd runs it: flushes do the fsyncs */
}

int cw_bucket_open(fl_replica_manager_t *rm, const char *dir, const workload_t *wl,
                   const cfg_t *c, fl_replica_t **r, fl_error_t *err) {
    cw_rm_open(rm, dir, wl, c);
    int rc = fl_replica_manager_open(rm, CE_DB, CE_TABLE, CE_TABLE_ID, -1, NULL, 0, 0, r, err);
    if (rc) fl_replica_manager_close(rm);
    return rc;
}

long cw_find_written(const workload_t *wl, int64_t base) {
    for (size_t i = 0; i < wl->nw; i++)
        if (wl->w[i].base == base) return (long)i;
    return -1;
}

/* One request: 1-3 batches; some of idempotent writers 1..3. */
static size_t cw_build_request(unsigned *rnd, int32_t *seqs, uint8_t *buf, size_t cap,
                               bb_spec_t *specs, size_t *nspec) {
    size_t n = 1 + (size_t)(rand_r(rnd) % 3), pos = 0;
    int64_t writer = (int64_t)(rand_r(rnd) % 4); /* 0: not idempotent */
    for (size_t i = 0; i < n; i++) {
        bb_spec_t s = bb_spec(writer ? writer : -1, writer ? seqs[writer]++ : -1,
                              1 + rand_r(rnd) % 5, 40 + (size_t)(rand_r(rnd) % 700),
                              (uint8_t)rand_r(rnd));
        if (pos + bb_size(&s) > cap) break;
        pos += bb_write(buf + pos, &s);
        specs[i] = s;
    }
    *nspec = n;
    return pos;
}

int cw_log_workload(workload_t *wl, const cfg_t *c, const char *dir, crash_log_t *log) {
    fl_replica_manager_t rm;
    crash_record_start(log, dir);
    log->drop_rename_syncs = c->mut_nodirsync;
    log->unordered = c->unordered;
    cw_rm_open(&rm, dir, wl, c);
    fl_replica_t *r;
    fl_error_t err;
    if (fl_replica_manager_open(&rm, CE_DB, CE_TABLE, CE_TABLE_ID, -1, NULL, 0, 0, &r, &err)) {
        fprintf(stderr, "crash_enum: open: %s\n", err.msg);
        crash_record_stop();
        return -1;
    }
    unsigned rnd = c->seed;
    int32_t seqs[4] = {0, 0, 0, 0};
    uint8_t buf[8192];
    int64_t log_start = 0;
    for (int i = 0; i < c->appends; i++) {
        bb_spec_t specs[3];
        size_t nspec;
        size_t len = cw_build_request(&rnd, seqs, buf, sizeof(buf), specs, &nspec);
        fl_replica_append_t res;
        int64_t now = 1000 + i * 10;
        if (fl_replica_append(r, buf, len, now, &res, &err)) {
            fprintf(stderr, "crash_enum: append: %s\n", err.msg);
            break;
        }
        /* the stored bytes: offsets and timestamps assigned in place */
        size_t pos = 0;
        fl_batch_view_t b;
        while (pos < len && fl_batch_parse_next(buf, len, &pos, &b, &err) == 0) {
            if (wl->nw == wl->capw) {
                wl->capw = wl->capw ? wl->capw * 2 : 256;
                wl->w = realloc(wl->w, wl->capw * sizeof(written_t));
            }
            written_t *w = &wl->w[wl->nw++];
            w->base = b.base_offset;
            w->next = fl_batch_next_offset(&b);
            w->timestamp = b.commit_timestamp;
            w->writer_id = b.writer_id;
            w->sequence = b.batch_sequence;
            w->len = b.size;
            w->bytes = malloc(b.size);
            memcpy(w->bytes, b.data, b.size);
        }
        /* in sync mode an append is owed once its flush returned (the high
         * watermark moves then); otherwise once its write returned */
        int64_t owed = wl->sync_mode ? fl_replica_high_watermark(r) : fl_replica_log_end(r);
        wl_mark(wl, log, owed, fl_replica_flushed(r), log_start);
        if (i == c->appends / 2) { /* retention drops the oldest segment */
            pthread_mutex_lock(&r->lock);
            if (fl_log_tablet_drop_oldest(r->log, 1, &err) == 0)
                log_start = r->log->log_start_offset;
            pthread_mutex_unlock(&r->lock);
            wl_mark(wl, log, owed, fl_replica_flushed(r), log_start);
        }
    }
    fl_replica_unref(r);
    fl_replica_manager_close(&rm); /* clean shutdown: final fsync, snapshot */
    int64_t end = wl->nw ? wl->w[wl->nw - 1].next : 0;
    wl_mark(wl, log, end, end, log_start);
    crash_record_stop();
    return 0;
}

/* ---- the metastore workload ---- */

char *cw_meta_digest(fl_metastore_t *ms) {
    size_t cap = 4096, len = 0;
    char *d = malloc(cap);
    d[0] = '\0';
    for (size_t i = 0; i < ms->ops->db_count(ms); i++)
        len += (size_t)snprintf(d + len, cap - len, "db:%s;", ms->ops->db_at(ms, i)->name);
    for (size_t i = 0; i < ms->ops->table_count(ms) && len < cap - 100; i++) {
        const fl_ms_table_t *t = ms->ops->table_at(ms, i);
        len += (size_t)snprintf(d + len, cap - len, "t:%s.%s/%" PRId64 "/%zu;", t->database,
                                t->name, t->table_id, t->partition_count);
    }
    return d;
}

int cw_meta_workload(workload_t *wl, const cfg_t *c, const char *dir, crash_log_t *log) {
    crash_record_start(log, dir);
    log->drop_rename_syncs = c->mut_nodirsync;
    log->unordered = c->unordered;
    fl_metastore_t *ms;
    fl_error_t err;
    wl->meta_cap = 64;
    wl->meta_digests = calloc((size_t)wl->meta_cap, sizeof(char *));
    if (fl_metastore_embedded_open(dir, &ms, &err)) {
        fprintf(stderr, "crash_enum: metastore: %s\n", err.msg);
        crash_record_stop();
        return -1;
    }
    wl->meta_digests[0] = cw_meta_digest(ms);
    wl_mark(wl, log, 0, 0, 0);
    int steps = c->appends / 6 < 4 ? 4 : c->appends / 6;
    if (steps > wl->meta_cap - 2) steps = wl->meta_cap - 2;
    for (int i = 0; i < steps; i++) {
        int rc;
        char name[32];
        if (i == 0) {
            fl_ms_database_t db = {.name = "db", .json = "{}", .created_ms = 1, .modified_ms = 1};
            rc = ms->ops->db_create(ms, &db, &err);
        } else if (i % 3 == 0) {
            snprintf(name, sizeof(name), "t%d", i - 2);
            rc = ms->ops->table_drop(ms, "db", name, &err);
        } else {
            snprintf(name, sizeof(name), "t%d", i);
            fl_ms_bucket_t buckets[2] = {{.replica_count = 1}, {.replica_count = 1}};
            fl_ms_table_t t = {.database = "db", .name = name, .table_id = 100 + i,
                               .schema_id = 1, .table_json = "{\"x\":1}", .created_ms = i,
                               .modified_ms = i, .bucket_count = 2, .buckets = buckets};
            char *schemas[1] = {"{\"columns\":[]}"};
            t.schema_count = 1;
            t.schema_jsons = schemas;
            rc = ms->ops->table_create(ms, &t, &err);
        }
        if (rc) {
            fprintf(stderr, "crash_enum: metastore step %d: %s\n", i, err.msg);
            break;
        }
        wl->meta_done++;
        wl->meta_digests[wl->meta_done] = cw_meta_digest(ms);
        wl_mark(wl, log, 0, 0, 0);
    }
    ms->ops->close(ms);
    crash_record_stop();
    return 0;
}

