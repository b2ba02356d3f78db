/*
 * crash_enum.c — crash-state enumeration of flussd's storage (F1 of the
 * storage-fault suite). Each workload runs the server's own storage code
 * (replica manager, log tablets with their segments, index files, writer
 * snapshots, leader-epoch checkpoints; the embedded metastore) through the
 * recording file-system seam (crash_model.h) — and a primary-key bucket
 * with KV snapshots (crash_kv.c); then every crash state of
 * the recorded operations — each prefix × {kept, dropped} × torn variants
 * of the last write — is written out and the real recovery code is run on
 * it in a child process, and the result is checked:
 *
 *   recovery_failures      the child crashed, or recovery refused a state a
 *                          crash can leave (the server must start)
 *   prefix_violations      recovered batches are not a contiguous run of
 *                          the written batches, byte for byte, ending in a
 *                          prefix of them
 *   crc_failures_served    a batch read back has a bad CRC
 *   fsynced_batches_lost   a batch a completed flush made durable (dropped
 *                          states), or whose write completed (kept states:
 *                          a process crash keeps the page cache), is gone
 *   index_inconsistencies  a read at an offset inside a recovered batch,
 *                          or a timestamp lookup, does not find that batch;
 *                          or the log end is not one past the last batch
 *   writer_state_violations after recovery a writer's last batch is not
 *                          recognised as a duplicate, or its next one not
 *                          accepted (idempotence state vs. the log)
 *   kv_state_violations    a primary-key bucket restored from its newest
 *                          snapshot and its log does not hold, for every
 *                          key, the value it had at the recovered log end
 *   metastore_violations   the metadata store does not open, or holds a
 *                          state that was never written, or lost a change
 *                          that was acknowledged before the crash
 *
 * Output: one JSON line with the figures and the number of states. Exit 1
 * when any figure is not 0 or fewer states than --min-states were checked.
 *
 *   crash_enum [--size ci|gate] [--min-states N] [--torn-max N] [--seed N]
 *              [--mutation nodirsync] [--unordered] [--no-kv] [--ledger FILE]
 *              [--verbose]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../unit/batch_builder.h"
#include "common_error.h"
#include "common_fs.h"
#include "common_log.h"
#include "crash_child.h"
#include "crash_model.h"
#include "crash_workload.h"
#include "metastore.h"
#include "record_batch.h"
#include "replica_manager.h"

/* A mutant build (CMake's crash_enum_mut_*) names its mutation. */
#if defined(FL_MUTATION_TRUST_TAIL)
#define FL_CRASH_MUTATION_NAME(nodirsync) "trust-tail"
#elif defined(FL_MUTATION_ACK_BEFORE_FSYNC)
#define FL_CRASH_MUTATION_NAME(nodirsync) "ack-before-fsync"
#else
#define FL_CRASH_MUTATION_NAME(nodirsync) ((nodirsync) ? "nodirsync" : "none")
#endif

/* ---- checks ---- */

typedef struct result {
    int refused, prefix, crc, lost, index, writer, meta, kv;
    char msg[200];
} result_t;

static void ce_note(result_t *res, int *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void ce_note(result_t *res, int *field, const char *fmt, ...) {
    if (*field == 0 && res->msg[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(res->msg, sizeof(res->msg), fmt, ap);
        va_end(ap);
    }
    (*field)++;
}

static void ce_check_log(const workload_t *wl, const cfg_t *c, const char *dir, mark_t owed,
                         crash_mode_t mode, result_t *res) {
    fl_replica_manager_t rm;
    fl_replica_t *r;
    fl_error_t err;
    if (cw_bucket_open(&rm, dir, wl, c, &r, &err)) {
        ce_note(res, &res->refused, "recovery refused: %s", err.msg);
        return;
    }
    /* read everything back */
    int64_t start = fl_replica_log_start(r), end = fl_replica_log_end(r);
    int64_t off = start;
    size_t first_idx = SIZE_MAX, expect_idx = 0, got = 0;
    int64_t last_ts = -1;
    int32_t last_seq[4] = {-1, -1, -1, -1};
    int64_t last_base[4] = {-1, -1, -1, -1};
    while (off < end) {
        fl_buf_t out;
        fl_buf_init(&out);
        if (fl_replica_read(r, off, 1 << 20, &out, &err) || out.len == 0) {
            ce_note(res, &res->index, "read at %" PRId64 " (log %" PRId64 "..%" PRId64 "): %s",
                    off, start, end, out.len ? err.msg : "nothing");
            fl_buf_free(&out);
            break;
        }
        size_t pos = 0;
        fl_batch_view_t b;
        bool stop = false;
        while (pos < out.len && !stop) {
            if (fl_batch_parse_next(out.data, out.len, &pos, &b, &err) != 0) {
                ce_note(res, &res->crc, "unparsable batch served at %" PRId64 ": %s", off, err.msg);
                stop = true;
                break;
            }
            if (fl_batch_check_crc(&b, &err) != 0) {
                ce_note(res, &res->crc, "bad CRC served at %" PRId64, b.base_offset);
                stop = true;
                break;
            }
            long found = cw_find_written(wl, b.base_offset);
            size_t idx = found < 0 ? 0 : (size_t)found;
            const written_t *w = found < 0 ? NULL : &wl->w[idx];
            if (!w || w->len != b.size || memcmp(w->bytes, b.data, b.size) != 0) {
                ce_note(res, &res->prefix, "batch at %" PRId64 " was never written so",
                        b.base_offset);
                stop = true;
                break;
            }
            if (first_idx == SIZE_MAX) {
                first_idx = expect_idx = idx;
            } else if (idx != expect_idx) {
                ce_note(res, &res->prefix, "batch %zu follows %zu", idx, expect_idx - 1);
                stop = true;
                break;
            }
            expect_idx = idx + 1;
            got++;
            if (w->writer_id > 0 && w->writer_id < 4) {
                last_seq[w->writer_id] = w->sequence;
                last_base[w->writer_id] = w->base;
            }
            /* the index: a read inside the batch and a time lookup find it */
            int64_t mid = w->base + (w->next - w->base) / 2;
            fl_buf_t one;
            fl_buf_init(&one);
            fl_batch_view_t ob;
            size_t op = 0;
            if (fl_replica_read(r, mid, 1, &one, &err) != 0 ||
                fl_batch_parse_next(one.data, one.len, &op, &ob, &err) != 0 ||
                ob.base_offset != w->base)
                ce_note(res, &res->index, "read at %" PRId64 " does not start with batch %" PRId64,
                        mid, w->base);
            fl_buf_free(&one);
            if (w->timestamp > last_ts) {
                int64_t t = fl_replica_offset_for_time(r, w->timestamp, &err);
                if (t != w->base)
                    ce_note(res, &res->index, "time %" PRId64 " -> %" PRId64 ", not %" PRId64,
                            w->timestamp, t, w->base);
                last_ts = w->timestamp;
            }
            off = w->next;
        }
        fl_buf_free(&out);
        if (stop) break;
    }
    if (!res->prefix && !res->crc && off != end)
        ce_note(res, &res->index, "read stopped at %" PRId64 ", log end %" PRId64, off, end);
    /* nothing owed is missing; nothing before the retention point lost */
    /* kept: every completed write; dropped: what a flush made durable, and
     * in sync mode everything acknowledged (acks wait for the fsync) */
    int64_t owed_end = mode == CRASH_KEPT || wl->sync_mode ? owed.written : owed.durable;
    int64_t have_end = got ? wl->w[expect_idx - 1].next : end;
    if (have_end < owed_end)
        ce_note(res, &res->lost, "log ends at %" PRId64 ", %" PRId64 " was owed (%s)", have_end,
                owed_end, mode == CRASH_KEPT ? "written" : "fsynced");
    int64_t have_start = got ? wl->w[first_idx].base : start;
    if (have_start > owed.log_start && have_start < have_end)
        ce_note(res, &res->lost, "log starts at %" PRId64 ", retention only reached %" PRId64,
                have_start, owed.log_start);
    /* idempotence: each writer's last batch is a duplicate, its next is new */
    for (int wid = 1; wid < 4 && !res->prefix && !res->crc; wid++) {
        if (last_seq[wid] < 0) continue;
        uint8_t buf[2048];
        bb_spec_t s = bb_spec(wid, last_seq[wid], 1, 32, 1);
        size_t n = bb_write(buf, &s);
        fl_replica_append_t ar;
        if (fl_replica_append(r, buf, n, 1, &ar, &err) != 0 || !ar.duplicate ||
            ar.base_offset != last_base[wid]) {
            ce_note(res, &res->writer, "writer %d seq %d not a duplicate of %" PRId64, wid,
                    last_seq[wid], last_base[wid]);
            continue;
        }
        s = bb_spec(wid, last_seq[wid] + 1, 1, 32, 2);
        n = bb_write(buf, &s);
        if (fl_replica_append(r, buf, n, 1, &ar, &err) != 0 || ar.duplicate)
            ce_note(res, &res->writer, "writer %d seq %d refused after recovery: %s", wid,
                    last_seq[wid] + 1, err.msg);
    }
    fl_replica_unref(r);
    fl_replica_manager_close(&rm);
}

static void ce_check_meta(const workload_t *wl, const char *dir, mark_t owed, result_t *res) {
    fl_metastore_t *ms;
    fl_error_t err;
    if (fl_metastore_embedded_open(dir, &ms, &err)) {
        ce_note(res, &res->refused, "metastore refused: %s", err.msg);
        return;
    }
    char *d = cw_meta_digest(ms);
    ms->ops->close(ms);
    /* the state after mutation `owed.meta` or a later one (one in flight) */
    int match = -1;
    for (int i = 0; i <= wl->meta_done; i++)
        if (wl->meta_digests[i] && strcmp(wl->meta_digests[i], d) == 0) match = i;
    if (match < 0) ce_note(res, &res->meta, "metastore holds a state never written: %s", d);
    else if (match < owed.meta)
        ce_note(res, &res->meta, "metastore lost mutation %d (has %d)", owed.meta, match);
    else if (match > owed.meta + 1)
        ce_note(res, &res->meta, "metastore is ahead: %d of %d", match, owed.meta);
    free(d);
}

/* ---- enumeration ---- */

typedef struct totals {
    long states, failures, refused, prefix, crc, lost, index, writer, meta, kv;
} totals_t;

static int ce_rmrf(const char *path) {
    fl_error_t e;
    return fl_fs_remove_tree(path, &e);
}

typedef struct ce_check {
    const workload_t *wl;
    const cfg_t *c;
    const char *dir;
    mark_t owed;
    crash_mode_t mode;
} ce_check_t;

/* In the child: the check of one state (the kv ones run in a fresh exec). */
static void ce_check_state(void *ctx, void *out) {
    const ce_check_t *k = ctx;
    result_t *res = out;
    if (k->wl->meta_digests) ce_check_meta(k->wl, k->dir, k->owed, res);
    else ce_check_log(k->wl, k->c, k->dir, k->owed, k->mode, res);
}

static void ce_run_state(const workload_t *wl, const cfg_t *c, const crash_log_t *log,
                         const crash_state_t *st, const char *scratch, totals_t *t) {
    ce_rmrf(scratch);
    if (crash_model_build(log, st, scratch) != 0) {
        fprintf(stderr, "crash_enum: cannot build state: %s\n", strerror(errno));
        t->failures++;
        return;
    }
    /* a torn last operation did not complete: nothing it promised is owed */
    mark_t owed = wl_owed(wl, st->torn_at >= 0 ? st->prefix - 1 : st->prefix);
    char args[6][32];
    snprintf(args[0], 32, "%d", wl->sync_mode);
    snprintf(args[1], 32, "%d", (int)st->mode);
    snprintf(args[2], 32, "%" PRId64, owed.written);
    snprintf(args[3], 32, "%" PRId64, owed.durable);
    snprintf(args[4], 32, "%" PRIu64, c->segment_bytes);
    snprintf(args[5], 32, "%d", c->flush_every);
    char *kv_argv[] = {"crash_enum", "--kv-check", (char *)scratch, (char *)wl->kv_expect,
                       args[0], args[1], args[2], args[3], args[4], args[5], NULL};
    ce_check_t chk = {wl, c, scratch, owed, st->mode};
    result_t res;
    int status;
    bool finished = crash_child_run(ce_check_state, &chk, wl->kv_models ? kv_argv : NULL, &res,
                                    sizeof(res), &status);
    t->states++;
    bool crashed = !finished;
    if (crashed) {
        t->failures++;
        snprintf(res.msg, sizeof(res.msg), "recovery crashed (status %d)", status);
    }
    t->refused += res.refused;
    t->failures += res.refused;
    t->prefix += res.prefix;
    t->crc += res.crc;
    t->lost += res.lost;
    t->index += res.index;
    t->writer += res.writer;
    t->meta += res.meta;
    t->kv += res.kv;
    bool bad = crashed || res.refused || res.prefix || res.crc || res.lost || res.index ||
               res.writer || res.meta || res.kv;
    if (bad && (c->verbose || t->failures + t->prefix + t->crc + t->lost + t->index + t->writer +
                                      t->meta + t->kv <= 5)) {
        const crash_op_t *op = st->prefix ? &log->ops[st->prefix - 1] : NULL;
        fprintf(stderr,
                "crash_enum: %s prefix %zu/%zu (last op %d %s) %s torn %" PRId64 "%s: %s\n",
                wl->name, st->prefix, log->count, op ? (int)op->kind : -1,
                op && op->path ? op->path : "", st->mode == CRASH_KEPT ? "kept" : "dropped",
                st->torn_at, st->zero_fill ? " zero-filled" : "", res.msg);
    }
}

static void ce_enumerate(const workload_t *wl, const cfg_t *c, const crash_log_t *log,
                         const char *scratch, totals_t *t) {
    int64_t *tears = malloc(sizeof(int64_t) * (size_t)(c->torn_max > 0 ? c->torn_max : 1));
    for (size_t k = 0; k <= log->count; k++) {
        for (int mode = CRASH_KEPT; mode <= CRASH_DROPPED; mode++) {
            crash_state_t st = {k, (crash_mode_t)mode, -1, false};
            ce_run_state(wl, c, log, &st, scratch, t);
            size_t n = crash_tear_points(log, &st, tears, (size_t)c->torn_max);
            for (size_t i = 0; i < n; i++)
                for (int z = 0; z < 2; z++) {
                    crash_state_t ts = {k, (crash_mode_t)mode, tears[i], z == 1};
                    ce_run_state(wl, c, log, &ts, scratch, t);
                }
        }
    }
    free(tears);
}

enum { CE_LOG, CE_META, CE_KV };

static int ce_workload(workload_t *wl, const cfg_t *c, const char *base, totals_t *t, int kind) {
    char rec[4096], scratch[4096];
    snprintf(rec, sizeof(rec), "%s/%s-rec", base, wl->name);
    snprintf(scratch, sizeof(scratch), "%s/%s-state", base, wl->name);
    if (mkdir(rec, 0755) != 0) return -1;
    crash_log_t log;
    /* the kv workload is slower per state (a RocksDB restore and open):
     * a third of the puts */
    cfg_t kc = *c;
    kc.appends = c->appends / 3;
    int rc = kind == CE_META ? cw_meta_workload(wl, c, rec, &log)
             : kind == CE_KV ? cw_kv_workload(wl, &kc, rec, &log)
                             : cw_log_workload(wl, c, rec, &log);
    if (rc == 0 && kind == CE_KV) {
        snprintf(wl->kv_expect, sizeof(wl->kv_expect), "%s/%s.expect", base, wl->name);
        rc = cw_kv_save(wl, wl->kv_expect);
    }
    if (rc == 0) {
        if (c->verbose) fprintf(stderr, "crash_enum: %s: %zu operations\n", wl->name, log.count);
        ce_enumerate(wl, kind == CE_KV ? &kc : c, &log, scratch, t);
    }
    crash_log_free(&log);
    ce_rmrf(rec);
    ce_rmrf(scratch);
    return rc;
}

/* crash_enum --kv-check DIR EXPECT SYNC MODE WRITTEN DURABLE SEGMENT_BYTES
 * FLUSH_EVERY: checks one kv crash state, the result_t on stdout. */
static int ce_kv_check_main(char **argv) {
    workload_t wl = {.name = "kv", .sync_mode = atoi(argv[4]) != 0};
    cfg_t c = {.segment_bytes = strtoull(argv[8], NULL, 10), .flush_every = atoi(argv[9])};
    mark_t owed = {0, strtoll(argv[6], NULL, 10), strtoll(argv[7], NULL, 10), 0, 0};
    result_t res;
    memset(&res, 0, sizeof(res));
    fl_log_set_level((enum fl_log_level)(FL_LOG_ERROR + 1));
    if (cw_kv_load(&wl, argv[3]) != 0) return 5;
    ce_check_kv(&wl, &c, argv[2], owed, (crash_mode_t)atoi(argv[5]), &res.refused, &res.lost,
                &res.kv, res.msg, sizeof(res.msg));
    wl_free(&wl);
    return write(STDOUT_FILENO, &res, sizeof(res)) == (ssize_t)sizeof(res) ? 0 : 3;
}

int main(int argc, char **argv) {
    if (argc == 10 && !strcmp(argv[1], "--kv-check")) return ce_kv_check_main(argv);
    cfg_t c = {.appends = 40, .segment_bytes = 3000, .flush_every = 5, .torn_max = 3,
               .min_states = 500, .seed = 1};
    const char *ledger = NULL, *size = "ci";
    bool no_kv = false; /* the kv workloads are the slow ones */
    int appends = 0;    /* overrides the size's */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc) size = argv[++i];
        else if (!strcmp(argv[i], "--min-states") && i + 1 < argc) c.min_states = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--torn-max") && i + 1 < argc) c.torn_max = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) c.seed = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ledger") && i + 1 < argc) ledger = argv[++i];
        else if (!strcmp(argv[i], "--mutation") && i + 1 < argc) {
            const char *m = argv[++i];
            if (!strcmp(m, "nodirsync")) c.mut_nodirsync = true;
            else {
                fprintf(stderr, "crash_enum: unknown mutation %s\n", m);
                return 2;
            }
        } else if (!strcmp(argv[i], "--unordered")) c.unordered = true;
        else if (!strcmp(argv[i], "--no-kv")) no_kv = true;
        else if (!strcmp(argv[i], "--appends") && i + 1 < argc) appends = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--verbose")) c.verbose = true;
        else {
            fprintf(stderr, "usage: crash_enum [--size ci|gate] [--min-states N] [--torn-max N] "
                            "[--seed N] [--mutation nodirsync] [--unordered] [--no-kv] [--appends N] [--ledger FILE] "
                            "[--verbose]\n");
            return 2;
        }
    }
    if (!strcmp(size, "gate")) {
        c.appends = 200;
        c.torn_max = 16;
        if (c.min_states < 10000) c.min_states = 10000;
    }
    if (appends > 0) c.appends = appends;
    char base[64];
    if (crash_scratch_dir("fl-crash", base, sizeof(base)) != 0) return 2;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fl_log_set_level((enum fl_log_level)(FL_LOG_ERROR + 1));
    totals_t t = {0};
    workload_t wls[5] = {{.name = "log"}, {.name = "log-sync", .sync_mode = true}, {.name = "meta"},
                         {.name = "kv"}, {.name = "kv-sync", .sync_mode = true}};
    int kinds[5] = {CE_LOG, CE_LOG, CE_META, CE_KV, CE_KV};
    int rc = 0;
    for (int i = 0; i < (no_kv ? 3 : 5) && !rc; i++) rc = ce_workload(&wls[i], &c, base, &t, kinds[i]);
    for (int i = 0; i < 5; i++) wl_free(&wls[i]);
    ce_rmrf(base);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    char line[1024];
    snprintf(line, sizeof(line),
             "{\"test\":\"F1\",\"size\":\"%s\",\"seed\":%u,\"mutation\":\"%s\","
             "\"dir_model\":\"%s\",\"states\":%ld,"
             "\"recovery_failures\":%ld,\"recovery_refusals\":%ld,\"prefix_violations\":%ld,"
             "\"crc_failures_served\":%ld,\"fsynced_batches_lost\":%ld,"
             "\"index_inconsistencies\":%ld,\"writer_state_violations\":%ld,"
             "\"metastore_violations\":%ld,\"kv_state_violations\":%ld,\"seconds\":%.1f}",
             size, c.seed, FL_CRASH_MUTATION_NAME(c.mut_nodirsync),
             c.unordered ? "unordered" : "ordered-journal", t.states, t.failures,
             t.refused, t.prefix, t.crc, t.lost, t.index, t.writer, t.meta, t.kv, secs);
    crash_report(line, ledger);
    bool ok = rc == 0 && t.states >= c.min_states && !t.failures && !t.prefix && !t.crc &&
              !t.lost && !t.index && !t.writer && !t.meta && !t.kv;
    return ok ? 0 : 1;
}
