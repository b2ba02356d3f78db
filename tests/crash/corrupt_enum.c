/*
 * corrupt_enum.c — corruption at rest (F2 of the storage-fault suite).
 * The log and metastore workloads of crash_workload.h leave a data
 * directory after a clean shutdown; each case takes a fresh copy, damages
 * one file at random — bit flips anywhere (segments, not only their tail;
 * index files; writer snapshots; the leader-epoch checkpoint; the
 * metadata file), a cut to a random length, or a zeroed 512-byte sector —
 * and runs the server's recovery on it in a child process, then reads the
 * whole log back:
 *
 *   startup_crashes      the child died (signal, sanitizer, abort)
 *   corrupt_data_served  a batch served whose CRC fails or whose bytes are
 *                        not what was written; metadata loaded that was
 *                        never written
 *   log_refusals         the log did not open at all (it must: the rest
 *                        of a damaged log is still served)
 *   silent_losses        written offsets the log neither serves nor
 *                        reports as damaged, other than a cut tail
 * and, to show what happened: batches reported damaged, batches cut from
 * the tail, metastore files refused (a damaged metadata file is refused
 * with a clear error: the server cannot guess its content).
 *
 * One JSON line; exit 1 when a safety figure is not 0 or fewer cases than
 * asked ran.
 *
 *   corrupt_enum [--cases N] [--seed N] [--ledger FILE] [--verbose]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common_fs.h"
#include "common_log.h"
#include "crash_child.h"
#include "crash_workload.h"
#include "record_batch.h"

typedef struct outcome {
    int refused, corrupt, silent;
    int damaged, cut;
    int meta_refused;
    int ts_changed; /* served with a changed commit timestamp (outside the CRC) */
    char msg[200];
} outcome_t;

static void note(outcome_t *o, int *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(outcome_t *o, int *field, const char *fmt, ...) {
    if (o->msg[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(o->msg, sizeof(o->msg), fmt, ap);
        va_end(ap);
    }
    (*field)++;
}

/* Reads the whole log back; every written batch is served intact, or
 * reported damaged, or lost with the cut tail. */
static void check_log(const workload_t *wl, const cfg_t *c, const char *dir, outcome_t *o) {
    fl_replica_manager_t rm;
    fl_replica_t *r;
    fl_error_t err;
    if (cw_bucket_open(&rm, dir, wl, c, &r, &err)) {
        note(o, &o->refused, "log refused: %s", err.msg);
        return;
    }
    int64_t end = fl_replica_log_end(r);
    /* batches the clean run left: from the retention point to the end */
    int64_t start_written = fl_replica_log_start(r);
    size_t first = 0;
    while (first < wl->nw && wl->w[first].next <= start_written) first++;
    char *seen = calloc(wl->nw + 1, 1); /* 1 served, 2 reported damaged */
    int64_t off = fl_replica_log_start(r);
    while (off < end) {
        fl_buf_t out;
        fl_buf_init(&out);
        int rc = fl_replica_read(r, off, 1 << 20, &out, &err);
        if (rc == FLUSS_ERR_LOG_STORAGE_EXCEPTION) { /* reported: step to the next batch */
            long i = cw_find_written(wl, off);
            size_t k = i >= 0 ? (size_t)i : 0;
            while (k < wl->nw && wl->w[k].next <= off) k++;
            if (k < wl->nw) seen[k] = 2;
            off = k < wl->nw ? wl->w[k].next : end;
            fl_buf_free(&out);
            continue;
        }
        if (rc || out.len == 0) {
            note(o, &o->refused, "read at %" PRId64 ": %s", off, rc ? err.msg : "nothing");
            fl_buf_free(&out);
            break;
        }
        size_t pos = 0;
        fl_batch_view_t b;
        while (pos < out.len) {
            if (fl_batch_parse_next(out.data, out.len, &pos, &b, &err) != 0) {
                note(o, &o->corrupt, "unparsable batch served at %" PRId64, off);
                pos = out.len;
                off = end;
                break;
            }
            long i = cw_find_written(wl, b.base_offset);
            if (fl_batch_check_crc(&b, &err) != 0 || i < 0 || wl->w[i].len != b.size) {
                note(o, &o->corrupt, "batch at %" PRId64 " served damaged", b.base_offset);
                off = end;
                break;
            }
            if (memcmp(wl->w[i].bytes, b.data, b.size) != 0) {
                /* the commit timestamp (bytes 13..20) is the one field of
                 * the header neither the CRC nor the offset checks cover */
                bool ts_only = memcmp(wl->w[i].bytes, b.data, 13) == 0 &&
                               memcmp(wl->w[i].bytes + 21, b.data + 21, b.size - 21) == 0;
                if (ts_only) {
                    o->ts_changed++;
                } else {
                    note(o, &o->corrupt, "batch at %" PRId64 " served damaged", b.base_offset);
                    off = end;
                    break;
                }
            }
            seen[i] = 1;
            off = fl_batch_next_offset(&b);
        }
        fl_buf_free(&out);
    }
    /* every written batch below the end is accounted for; beyond it, cut */
    for (size_t i = first; i < wl->nw; i++) {
        if (seen[i] == 1) continue;
        if (seen[i] == 2) o->damaged++;
        else if (wl->w[i].base >= end) o->cut++;
        else note(o, &o->silent, "batch at %" PRId64 " neither served nor reported",
                  wl->w[i].base);
    }
    free(seen);
    fl_replica_unref(r);
    fl_replica_manager_close(&rm);
}

static void check_meta(const workload_t *wl, const char *dir, outcome_t *o) {
    fl_metastore_t *ms;
    fl_error_t err;
    if (fl_metastore_embedded_open(dir, &ms, &err)) { /* refused: the right answer */
        o->meta_refused++;
        return;
    }
    char *d = cw_meta_digest(ms);
    ms->ops->close(ms);
    if (!wl->meta_digests[wl->meta_done] || strcmp(d, wl->meta_digests[wl->meta_done]) != 0)
        note(o, &o->corrupt, "metastore loaded a state never written: %s", d);
    free(d);
}

/* ---- damage ---- */

typedef struct files {
    size_t n, cap;
    char **paths;
} files_t;

static void list_files(const char *dir, files_t *f) {
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[4096];
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            list_files(p, f);
        } else if (S_ISREG(st.st_mode) && st.st_size > 0) {
            if (f->n == f->cap) {
                f->cap = f->cap ? f->cap * 2 : 32;
                f->paths = realloc(f->paths, f->cap * sizeof(char *));
            }
            f->paths[f->n++] = strdup(p);
        }
    }
    if (d) closedir(d);
}

static const char *damage_names[] = {"bitflip", "bitflips", "cut", "zero-sector"};

/* Damages the file in place; returns the kind. */
static int damage(const char *path, unsigned *rnd, char *what, size_t cap) {
    struct stat st;
    if (stat(path, &st) != 0 || st.st_size == 0) return -1;
    size_t size = (size_t)st.st_size;
    int kind = rand_r(rnd) % 4;
    int fd = open(path, O_RDWR);
    if (fd < 0) return -1;
    if (kind <= 1) {
        int flips = kind == 0 ? 1 : 2 + rand_r(rnd) % 7;
        size_t at = 0;
        for (int i = 0; i < flips; i++) {
            at = (size_t)rand_r(rnd) % size;
            uint8_t c;
            if (pread(fd, &c, 1, (off_t)at) == 1) {
                c ^= (uint8_t)(1u << (rand_r(rnd) % 8));
                if (pwrite(fd, &c, 1, (off_t)at) != 1) break;
            }
        }
        snprintf(what, cap, "%s x%d (last at %zu of %zu)", damage_names[kind], flips, at, size);
    } else if (kind == 2) {
        size_t to = (size_t)rand_r(rnd) % size;
        if (ftruncate(fd, (off_t)to) != 0) to = size;
        snprintf(what, cap, "cut to %zu of %zu", to, size);
    } else {
        size_t sector = ((size_t)rand_r(rnd) % size) / 512 * 512;
        uint8_t zeros[512] = {0};
        size_t n = size - sector < 512 ? size - sector : 512;
        if (pwrite(fd, zeros, n, (off_t)sector) != (ssize_t)n) n = 0;
        snprintf(what, cap, "zeroed %zu bytes at %zu of %zu", n, sector, size);
    }
    close(fd);
    return kind;
}

typedef struct check {
    const workload_t *wl;
    const cfg_t *c;
    const char *dir;
    bool meta;
} check_t;

/* In the child: recovery of one damaged directory and the read-back. */
static void check_case(void *ctx, void *out) {
    const check_t *k = ctx;
    if (k->meta) check_meta(k->wl, k->dir, out);
    else check_log(k->wl, k->c, k->dir, out);
}

typedef struct totals {
    long cases, crashes, corrupt, refused, silent, damaged, cut, meta_refused, ts_changed;
} totals_t;

static void run_case(const workload_t *wl, const cfg_t *c, const crash_log_t *log,
                     const char *scratch, unsigned *rnd, bool meta, totals_t *t) {
    fl_error_t e;
    fl_fs_remove_tree(scratch, &e);
    crash_state_t final = {log->count, CRASH_KEPT, -1, false};
    if (crash_model_build(log, &final, scratch) != 0) {
        fprintf(stderr, "corrupt_enum: cannot build the data directory\n");
        t->crashes++;
        return;
    }
    files_t f = {0};
    list_files(scratch, &f);
    char what[160] = "";
    const char *victim = f.n ? f.paths[(size_t)rand_r(rnd) % f.n] : NULL;
    if (victim) damage(victim, rnd, what, sizeof(what));
    check_t chk = {wl, c, scratch, meta};
    outcome_t o;
    int status;
    bool finished = crash_child_run(check_case, &chk, NULL, &o, sizeof(o), &status);
    t->cases++;
    bool crashed = !finished;
    if (crashed) snprintf(o.msg, sizeof(o.msg), "recovery crashed (status %d)", status);
    t->crashes += crashed;
    t->corrupt += o.corrupt;
    t->refused += o.refused;
    t->silent += o.silent;
    t->damaged += o.damaged;
    t->cut += o.cut;
    t->meta_refused += o.meta_refused;
    t->ts_changed += o.ts_changed;
    if ((crashed || o.corrupt || o.refused || o.silent) && (c->verbose || t->cases < 1000000)) {
        const char *rel = victim ? victim + strlen(scratch) + 1 : "";
        fprintf(stderr, "corrupt_enum: %s %s: %s: %s\n", wl->name, rel, what, o.msg);
    } else if (c->verbose) {
        const char *rel = victim ? victim + strlen(scratch) + 1 : "";
        fprintf(stderr, "corrupt_enum: ok %s %s: %s (damaged %d, cut %d%s)\n", wl->name, rel,
                what, o.damaged, o.cut, o.meta_refused ? ", refused" : "");
    }
    for (size_t i = 0; i < f.n; i++) free(f.paths[i]);
    free(f.paths);
    if (getenv("CE_KEEP") && (crashed || o.corrupt || o.refused || o.silent)) {
        fprintf(stderr, "corrupt_enum: kept %s\n", scratch);
        exit(1);
    }
}

int main(int argc, char **argv) {
    cfg_t c = {.appends = 60, .segment_bytes = 3000, .flush_every = 5, .seed = 1};
    long cases = 300;
    const char *ledger = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cases") && i + 1 < argc) cases = atol(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) c.seed = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ledger") && i + 1 < argc) ledger = argv[++i];
        else if (!strcmp(argv[i], "--verbose")) c.verbose = true;
        else {
            fprintf(stderr, "usage: corrupt_enum [--cases N] [--seed N] [--ledger FILE] [--verbose]\n");
            return 2;
        }
    }
    char base[64];
    if (crash_scratch_dir("fl-corrupt", base, sizeof(base)) != 0) return 2;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fl_log_set_level((enum fl_log_level)(FL_LOG_ERROR + 1));
    totals_t t = {0};
    unsigned rnd = c.seed * 2654435761u;
    /* three workloads: the log in both durability modes, the metastore;
     * the log gets most cases (it has most files and most ways to fail) */
    workload_t wls[3] = {{.name = "log"}, {.name = "log-sync", .sync_mode = true}, {.name = "meta"}};
    long share[3] = {cases * 5 / 10, cases * 3 / 10, cases - cases * 5 / 10 - cases * 3 / 10};
    int rc = 0;
    for (int w = 0; w < 3 && !rc; w++) {
        char rec[128], scratch[128];
        snprintf(rec, sizeof(rec), "%s/%s-rec", base, wls[w].name);
        snprintf(scratch, sizeof(scratch), "%s/%s-case", base, wls[w].name);
        mkdir(rec, 0755);
        crash_log_t log;
        rc = w == 2 ? cw_meta_workload(&wls[w], &c, rec, &log)
                    : cw_log_workload(&wls[w], &c, rec, &log);
        for (long i = 0; i < share[w] && !rc; i++)
            run_case(&wls[w], &c, &log, scratch, &rnd, w == 2, &t);
        crash_log_free(&log);
    }
    for (int w = 0; w < 3; w++) wl_free(&wls[w]);
    fl_error_t e;
    fl_fs_remove_tree(base, &e);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    char line[768];
    snprintf(line, sizeof(line),
             "{\"test\":\"F2\",\"seed\":%u,\"cases\":%ld,\"startup_crashes\":%ld,"
             "\"corrupt_data_served\":%ld,\"log_refusals\":%ld,\"silent_losses\":%ld,"
             "\"batches_reported_damaged\":%ld,\"batches_cut_from_tail\":%ld,"
             "\"metastore_refused\":%ld,\"commit_timestamp_flips_served\":%ld,"
             "\"seconds\":%.1f}",
             c.seed, t.cases, t.crashes, t.corrupt, t.refused, t.silent, t.damaged, t.cut,
             t.meta_refused, t.ts_changed, secs);
    crash_report(line, ledger);
    bool ok = rc == 0 && t.cases >= cases && !t.crashes && !t.corrupt && !t.refused && !t.silent;
    return ok ? 0 : 1;
}
