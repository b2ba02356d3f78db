/*
 * log_tablet.c — a bucket's log (log_tablet.h).
 */
#include "log_tablet.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common_alloc.h"
#include "common_fs.h"
#include "common_vfs.h"
#include "common_log.h"
#include "common_strlist.h"

#define FL_BATCHES_PER_APPEND_MAX 4096

static int fl_offline(fl_log_tablet_t *t, fl_error_t *err) {
    return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION,
                      "the log in %s is offline after a failed write", t->dir);
}

static void fl_tablet_add_segment(fl_log_tablet_t *t, fl_log_segment_t *s) {
    if (t->segment_count == t->segment_cap) {
        t->segment_cap = t->segment_cap ? t->segment_cap * 2 : 8;
        t->segments = fl_realloc(t->segments, t->segment_cap * sizeof(*t->segments));
    }
    t->segments[t->segment_count++] = s;
}

static int fl_cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void fl_tablet_recover_batch(const fl_batch_view_t *b, void *ctx) {
    fl_log_tablet_t *t = ctx;
    if (b->writer_id != -1 && b->base_offset >= t->snapshot_offset)
        fl_writer_state_record(&t->writers, b->writer_id, b->batch_sequence, b->base_offset,
                               fl_batch_last_offset(b), b->commit_timestamp);
    if (b->commit_timestamp > t->last_commit_timestamp)
        t->last_commit_timestamp = b->commit_timestamp;
}

#define FL_SNAPSHOT_SUFFIX ".writer_snapshot"
#define FL_SNAPSHOTS_KEPT 2

/* Offsets of the snapshot files in dir, ascending. */
static size_t fl_list_snapshots(const char *dir, int64_t **out) {
    size_t n = 0, cap = 8;
    int64_t *v = fl_malloc(cap * sizeof(int64_t));
    fl_strlist_t names = {0};
    fl_error_t err;
    fl_fs_list(dir, true, &names, &err); /* unreadable: no snapshots */
    for (size_t i = 0; i < names.count; i++) {
        const char *name = names.items[i];
        size_t len = strlen(name);
        if (len != 20 + sizeof(FL_SNAPSHOT_SUFFIX) - 1 || strcmp(name + 20, FL_SNAPSHOT_SUFFIX))
            continue;
        char *end;
        long long off = strtoll(name, &end, 10);
        if (end != name + 20 || off < 0) continue;
        if (n == cap) v = fl_realloc(v, (cap *= 2) * sizeof(int64_t));
        v[n++] = off;
    }
    fl_strlist_free(&names);
    qsort(v, n, sizeof(int64_t), fl_cmp_i64);
    *out = v;
    return n;
}

static char *fl_snapshot_path(const char *dir, int64_t offset) {
    size_t n = strlen(dir) + 48;
    char *p = fl_malloc(n);
    snprintf(p, n, "%s/%020" PRId64 FL_SNAPSHOT_SUFFIX, dir, offset);
    return p;
}

/* Keeps only the newest FL_SNAPSHOTS_KEPT snapshots in dir. */
static void fl_tablet_prune_snapshots(const char *dir) {
    int64_t *offs;
    size_t n = fl_list_snapshots(dir, &offs);
    for (size_t i = 0; i + FL_SNAPSHOTS_KEPT < n; i++) {
        char *old = fl_snapshot_path(dir, offs[i]);
        fl_vfs_unlink(old);
        fl_free(old);
    }
    fl_free(offs);
}

/* Writes the writer state as of the log end offset and keeps only the
 * newest FL_SNAPSHOTS_KEPT snapshots. */
static int fl_tablet_write_snapshot(fl_log_tablet_t *t, fl_error_t *err) {
    fl_buf_t b;
    fl_buf_init(&b);
    fl_writer_state_encode(&t->writers, &b);
    char *path = fl_snapshot_path(t->dir, t->log_end_offset);
    fl_error_t e;
    int rc = fl_fs_write_atomic(path, b.data, b.len, &e);
    fl_free(path);
    fl_buf_free(&b);
    if (rc) return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "writer snapshot: %s", e.msg);
    fl_tablet_prune_snapshots(t->dir);
    return 0;
}

/* Loads the newest snapshot that decodes; returns its offset or -1. */
static int64_t fl_tablet_load_snapshot(fl_log_tablet_t *t) {
    int64_t *offs;
    size_t n = fl_list_snapshots(t->dir, &offs);
    int64_t loaded = -1;
    for (size_t i = n; i-- > 0 && loaded < 0;) {
        char *path = fl_snapshot_path(t->dir, offs[i]);
        fl_buf_t b;
        fl_buf_init(&b);
        fl_error_t e;
        if (fl_fs_read_all(path, 1u << 30, &b, NULL, &e) == 0 &&
            fl_writer_state_decode(&t->writers, b.data, b.len, &e) == 0)
            loaded = offs[i];
        else
            FL_WARN("log %s: ignoring writer snapshot %s: %s", t->dir, path, e.msg);
        fl_buf_free(&b);
        fl_free(path);
    }
    fl_free(offs);
    return loaded;
}

static int fl_log_tablet_open_once(const char *dir, const fl_log_config_t *cfg, bool use_snapshot,
                                   fl_log_tablet_t **out, fl_error_t *err);

int fl_log_tablet_open(const char *dir, const fl_log_config_t *cfg, fl_log_tablet_t **out,
                       fl_error_t *err) {
    int rc = fl_log_tablet_open_once(dir, cfg, true, out, err);
    if (rc == 1) { /* the snapshot is ahead of the recovered log: rebuild from the log */
        int64_t *offs;
        size_t n = fl_list_snapshots(dir, &offs);
        for (size_t i = 0; i < n; i++) {
            char *p = fl_snapshot_path(dir, offs[i]);
            fl_vfs_unlink(p);
            fl_free(p);
        }
        fl_free(offs);
        rc = fl_log_tablet_open_once(dir, cfg, false, out, err);
    }
    return rc;
}

/* After the scan: a segment must start where the previous one ends. When
 * one does not, and no later segment holds a whole batch, the log ended
 * there (a crash cut the tail before a roll's new segment got data): the
 * later files go. When a later segment does hold batches, the hole is
 * damage at rest: everything is kept, the missing offsets are recorded as
 * a damaged range (never served, reported), and the rest is served. The
 * last segment, the one appended to, loses its torn tail. */
static int fl_tablet_settle_segments(fl_log_tablet_t *t, fl_error_t *err) {
    size_t first_gap = 0;
    for (size_t i = 1; i < t->segment_count && !first_gap; i++)
        if (t->segments[i]->base_offset != t->segments[i - 1]->next_offset) first_gap = i;
    if (first_gap) {
        bool later_data = false;
        for (size_t i = first_gap; i < t->segment_count; i++)
            later_data |= t->segments[i]->size > 0;
        if (!later_data) {
            FL_WARN("log %s: segments from offset %lld on hold no batch after offset %lld; "
                    "removing them", t->dir, (long long)t->segments[first_gap]->base_offset,
                    (long long)t->segments[first_gap - 1]->next_offset);
            for (size_t i = first_gap; i < t->segment_count; i++) {
                fl_error_t e;
                if (fl_log_segment_delete(t->segments[i], &e) != 0)
                    FL_WARN("log %s: %s", t->dir, e.msg);
                fl_log_segment_close(t->segments[i]);
            }
            t->segment_count = first_gap;
        } else {
            for (size_t i = first_gap; i < t->segment_count; i++) {
                int64_t from = t->segments[i - 1]->next_offset, to = t->segments[i]->base_offset;
                if (from == to) continue;
                FL_ERROR("log %s: offsets %lld..%lld are missing (a damaged segment); they "
                         "will not be served, the log goes on at %lld", t->dir, (long long)from,
                         (long long)(to - 1), (long long)to);
            }
        }
    }
    return fl_log_segment_cut_tail(t->segments[t->segment_count - 1], err);
}

static int fl_log_tablet_open_once(const char *dir, const fl_log_config_t *cfg, bool use_snapshot,
                                   fl_log_tablet_t **out, fl_error_t *err) {

    fl_error_t mk;
    int rc = fl_fs_mkdirs(dir, &mk);
    if (rc) return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "%s", mk.msg);
    fl_log_tablet_t *t = fl_calloc(1, sizeof(*t));
    t->dir = fl_strdup(dir);
    t->cfg = *cfg;
    t->last_commit_timestamp = -1;
    fl_writer_state_init(&t->writers);
    t->pending_snapshot_offset = -1;
    t->snapshot_offset = use_snapshot ? fl_tablet_load_snapshot(t) : -1;
    if (t->snapshot_offset < 0) t->snapshot_offset = 0;

    fl_strlist_t names = {0};
    if (fl_fs_list(dir, false, &names, &mk) != 0) {
        fl_log_tablet_close(t);
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "%s", mk.msg);
    }
    size_t n = 0, cap = 16;
    int64_t *bases = fl_malloc(cap * sizeof(int64_t));
    for (size_t i = 0; i < names.count; i++) {
        const char *name = names.items[i];
        if (strlen(name) != 24 || strcmp(name + 20, ".log") != 0) continue;
        char *end;
        long long base = strtoll(name, &end, 10);
        if (end != name + 20 || base < 0) continue;
        if (n == cap) bases = fl_realloc(bases, (cap *= 2) * sizeof(int64_t));
        bases[n++] = base;
    }
    fl_strlist_free(&names);
    qsort(bases, n, sizeof(int64_t), fl_cmp_i64);
    if (n == 0) bases[n++] = 0;

    for (size_t i = 0; i < n; i++) {
        fl_log_segment_t *s = NULL;
        /* a rolled segment with a valid index file is not scanned, unless
         * the writer state needs its batches (they follow the snapshot) */
        if (i + 1 < n && fl_log_segment_open_indexed(dir, bases[i], cfg->index_interval, &s, err) == 0) {
            if (s->next_offset > t->snapshot_offset) {
                fl_log_segment_close(s);
                s = NULL;
            } else if (s->max_timestamp > t->last_commit_timestamp) {
                t->last_commit_timestamp = s->max_timestamp;
            }
        } else {
            s = NULL;
        }
        /* otherwise scanned; a torn or corrupt tail is cut off below, once
         * it is known which segment is the last */
        if (!s) {
            rc = fl_log_segment_open(dir, bases[i], cfg->index_interval, false,
                                     fl_tablet_recover_batch, t, &s, err);
            if (rc) break;
        }
        fl_tablet_add_segment(t, s);
    }
    if (!rc) rc = fl_tablet_settle_segments(t, err);
    fl_free(bases);
    if (rc) {
        fl_log_tablet_close(t);
        return rc;
    }
    t->log_start_offset = t->segments[0]->base_offset;
    t->log_end_offset = t->segments[t->segment_count - 1]->next_offset;
    if (t->log_end_offset < t->snapshot_offset) {
        FL_WARN("log %s: writer snapshot at %lld is past the log end %lld; rebuilding", dir,
                (long long)t->snapshot_offset, (long long)t->log_end_offset);
        t->offline = true; /* close without writing a snapshot */
        fl_log_tablet_close(t);
        return 1;
    }
    if (cfg->defer_sync) {
        /* what a crashed process left in the page cache becomes durable
         * before anything is served from it */
        rc = fl_log_segment_sync(t->segments[t->segment_count - 1], err);
        if (rc) {
            t->offline = true;
            fl_log_tablet_close(t);
            return rc;
        }
    }
    *out = t;
    return 0;
}

void fl_log_tablet_close(fl_log_tablet_t *t) {
    if (!t) return;
    if (!t->offline && t->segment_count) {
        fl_error_t e;
        for (size_t i = 0; i + 1 < t->segment_count; i++) {
            fl_log_segment_t *s = t->segments[i];
            if (s->synced_size < s->size && fl_log_segment_sync(s, &e) != 0) continue;
            if (s->needs_index && fl_log_segment_write_index(s, &e) != 0)
                FL_WARN("log %s: %s", t->dir, e.msg);
        }
        if (fl_log_segment_sync(t->segments[t->segment_count - 1], &e) == 0 &&
            fl_tablet_write_snapshot(t, &e) != 0)
            FL_WARN("log %s: %s", t->dir, e.msg);
    }
    for (size_t i = 0; i < t->segment_count; i++) fl_log_segment_close(t->segments[i]);
    fl_free(t->segments);
    fl_writer_state_free(&t->writers);
    fl_buf_free(&t->pending_snapshot);
    fl_free(t->dir);
    fl_free(t);
}

int fl_log_tablet_delete(fl_log_tablet_t *t, fl_error_t *err) {
    int rc = 0;
    for (size_t i = 0; i < t->segment_count; i++)
        if (fl_log_segment_delete(t->segments[i], err)) rc = err->code;
    char *dir = fl_strdup(t->dir);
    t->offline = true; /* nothing to sync */
    fl_log_tablet_close(t);
    fl_error_t e; /* snapshots and checkpoints go with the segments */
    if (fl_fs_remove_tree(dir, &e) != 0 && !rc)
        rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "%s", e.msg);
    fl_free(dir);
    return rc;
}

static int fl_tablet_roll(fl_log_tablet_t *t, fl_error_t *err) {
    fl_log_segment_t *active = t->segments[t->segment_count - 1];
    int rc = 0;
    if (t->cfg.defer_sync) {
        active->needs_index = true;
        fl_buf_reset(&t->pending_snapshot);
        fl_writer_state_encode(&t->writers, &t->pending_snapshot);
        t->pending_snapshot_offset = t->log_end_offset;
    } else {
        rc = fl_log_segment_sync(active, err);
        if (!rc) rc = fl_log_segment_write_index(active, err);
        if (!rc) rc = fl_tablet_write_snapshot(t, err);
        if (rc) return rc;
    }
    fl_log_segment_t *s;
    rc = fl_log_segment_open(t->dir, t->log_end_offset, t->cfg.index_interval, true, NULL, NULL,
                             &s, err);
    if (rc) return rc;
    fl_tablet_add_segment(t, s);
    if (t->cfg.defer_sync) {
        t->dir_dirty = true;
        return 0;
    }
    fl_error_t e;
    if (fl_fs_fsync_dir(t->dir, &e))
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "%s", e.msg);
    return 0;
}

bool fl_log_tablet_flush_begin(fl_log_tablet_t *t, fl_log_flush_t *f) {
    memset(f, 0, sizeof(*f));
    f->snapshot_offset = -1;
    if (t->offline) return false;
    f->end_offset = t->log_end_offset;
    for (size_t i = 0; i < t->segment_count && f->count < FL_LOG_FLUSH_SEGMENTS_MAX; i++) {
        fl_log_segment_t *s = t->segments[i];
        if (s->synced_size >= s->size && !s->needs_index) continue;
        int fd = fl_vfs_dup(s->fd);
        if (fd < 0) {
            /* no descriptor left: sync on the original under the lock; a
             * failure latches like any failed fsync (never retried) */
            fl_error_t e;
            if (fl_log_segment_sync(s, &e) == 0) continue;
            FL_ERROR("log %s: %s; taking the log offline", t->dir, e.msg);
            t->offline = true;
            for (size_t k = 0; k < f->count; k++) fl_vfs_close(f->fds[k]);
            f->count = 0;
            return false;
        }
        f->segments[f->count] = s;
        f->fds[f->count] = fd;
        f->sizes[f->count] = s->size;
        f->index[f->count] = s->needs_index;
        f->count++;
    }
    if (t->pending_snapshot_offset >= 0) {
        f->snapshot = t->pending_snapshot;
        f->snapshot_offset = t->pending_snapshot_offset;
        fl_buf_init(&t->pending_snapshot);
        t->pending_snapshot_offset = -1;
    }
    f->sync_dir = t->dir_dirty;
    t->dir_dirty = false;
    if (f->count == 0 && f->snapshot_offset < 0 && !f->sync_dir) return false;
    f->dir = fl_strdup(t->dir);
    return true;
}

int fl_log_tablet_flush_run(fl_log_flush_t *f) {
    fl_error_t *err = &f->err;
    int rc = 0;
    for (size_t i = 0; i < f->count && !rc; i++) {
        if (f->segments[i]->synced_size < f->sizes[i] && fl_vfs_fdatasync(f->fds[i]) != 0)
            rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "fsync %s: %s",
                            f->segments[i]->path, strerror(errno));
        /* a rolled segment's index arrays no longer change */
        if (!rc && f->index[i]) rc = fl_log_segment_write_index(f->segments[i], err);
    }
    if (!rc && f->snapshot_offset >= 0) {
        char *path = fl_snapshot_path(f->dir, f->snapshot_offset);
        fl_error_t e;
        if (fl_fs_write_atomic(path, f->snapshot.data, f->snapshot.len, &e))
            rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "writer snapshot: %s", e.msg);
        fl_free(path);
        if (!rc) fl_tablet_prune_snapshots(f->dir);
    }
    if (!rc && f->sync_dir) {
        fl_error_t e;
        if (fl_fs_fsync_dir(f->dir, &e))
            rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "%s", e.msg);
    }
    f->rc = rc;
    return rc;
}

void fl_log_tablet_flush_end(fl_log_tablet_t *t, fl_log_flush_t *f) {
    for (size_t i = 0; i < f->count; i++) {
        fl_vfs_close(f->fds[i]);
        if (f->rc) continue;
        fl_log_segment_t *s = f->segments[i];
        if (s->synced_size < f->sizes[i]) s->synced_size = f->sizes[i];
        if (f->index[i]) s->needs_index = false;
    }
    if (f->rc) {
        FL_ERROR("log %s: flush failed, taking the log offline: %s", t->dir, f->err.msg);
        t->offline = true;
    }
    fl_buf_free(&f->snapshot);
    fl_free(f->dir);
    f->dir = NULL;
}

/* The batches of records[0, len), each whole and parsed (its CRC checked
 * with check_crc), at most max of them (0: any): into views (cap entries)
 * or, past that, an allocation in *out the caller frees (*out != views). */
static int fl_tablet_parse_batches(const fl_log_tablet_t *t, uint8_t *records, size_t len,
                                   bool check_crc, size_t max, fl_batch_view_t *views,
                                   size_t cap, fl_batch_view_t **out, size_t *count,
                                   fl_error_t *err) {
    fl_batch_view_t *batches = views;
    size_t n = 0;
    int rc = 0;
    for (size_t pos = 0; pos < len && !rc;) {
        size_t bsize;
        rc = fl_batch_peek_size(records + pos, len - pos, t->cfg.batch_bytes_max, &bsize, err);
        if (rc == 1 || (rc == 0 && pos + bsize > len))
            rc = fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                            "records end inside a batch (%zu bytes left)", len - pos);
        if (rc) break;
        if (max && n == max) {
            rc = fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION, "too many batches in one request");
            break;
        }
        if (n == cap) {
            fl_batch_view_t *bigger = fl_malloc(cap * 2 * sizeof(*bigger));
            memcpy(bigger, batches, n * sizeof(*bigger));
            if (batches != views) fl_free(batches);
            batches = bigger;
            cap *= 2;
        }
        rc = fl_batch_parse(records + pos, bsize, &batches[n], err);
        if (!rc && check_crc) rc = fl_batch_check_crc(&batches[n], err);
        if (!rc) n++;
        pos += bsize;
    }
    *out = batches;
    *count = n;
    return rc;
}

/* Writes the parsed batches of records at the log end, rolling a full
 * active segment first; a failed write takes the tablet offline. */
static int fl_tablet_write(fl_log_tablet_t *t, const uint8_t *records, size_t len,
                           const fl_batch_view_t *batches, size_t count, fl_error_t *err) {
    fl_log_segment_t *active = t->segments[t->segment_count - 1];
    int rc = 0;
    if (active->size > 0 && active->size + len > t->cfg.segment_bytes) {
        rc = fl_tablet_roll(t, err);
        active = t->segments[t->segment_count - 1];
    }
    if (!rc) rc = fl_log_segment_append(active, records, len, batches, count, err);
    if (!rc && t->cfg.flush_every_append) rc = fl_log_segment_sync(active, err);
    if (rc) t->offline = true;
    return rc;
}

int fl_log_tablet_append(fl_log_tablet_t *t, uint8_t *records, size_t len, int64_t now_ms,
                         fl_append_result_t *res, fl_error_t *err) {
    if (t->offline) return fl_offline(t, err);
    memset(res, 0, sizeof(*res));
    fl_batch_view_t views[64];
    fl_batch_view_t *batches = views;
    size_t count = 0;
    /* 1. validate every batch before touching the log */
    int rc = fl_tablet_parse_batches(t, records, len, !t->cfg.crc_checked,
                                     FL_BATCHES_PER_APPEND_MAX, views, 64, &batches, &count, err);
    if (rc) goto done;
    if (count == 0) {
        rc = fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION, "no record batch in the request");
        goto done;
    }
    /* 2. idempotence, batch by batch in order as the reference checks it: a
     * batch the writer state holds answers the whole request as that
     * duplicate (nothing appended, also when new batches follow it);
     * otherwise it must follow the writer's previous batch (in this request
     * or in the state). */
    for (size_t i = 0; i < count; i++) {
        if (batches[i].writer_id == -1) continue;
        fl_writer_batch_t dup;
        rc = fl_writer_state_check(&t->writers, batches[i].writer_id, batches[i].batch_sequence,
                                   &dup, err);
        if (rc == FL_WRITER_DUPLICATE) {
            res->duplicate = true;
            /* the original's offsets: a resent batch need not be the same
             * bytes (a PK changelog is rebuilt from the state at resend) */
            res->base_offset = dup.first_offset;
            res->last_offset = dup.last_offset;
            rc = 0;
            goto done;
        }
        size_t prev = i;
        for (size_t k = 0; k < i; k++)
            if (batches[k].writer_id == batches[i].writer_id) prev = k;
        if (prev == i) {
            if (rc) goto done;
            continue;
        }
        fl_err_clear(err);
        int32_t want = batches[prev].batch_sequence == INT32_MAX
                           ? 0
                           : batches[prev].batch_sequence + 1;
        if (batches[i].batch_sequence != want) {
            rc = fl_err_set(err, FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION,
                            "Out of order batch sequence for writer %lld: %d (incoming batch "
                            "sequence), %d (previous batch of the request)",
                            (long long)batches[i].writer_id, batches[i].batch_sequence,
                            batches[prev].batch_sequence);
            goto done;
        }
        rc = 0;
    }
    /* 3. assign offsets and the commit timestamp (one for the request) */
    int64_t ts = now_ms > t->last_commit_timestamp ? now_ms : t->last_commit_timestamp;
    int64_t next = t->log_end_offset;
    for (size_t i = 0; i < count; i++) {
        uint8_t *p = (uint8_t *)batches[i].data;
        fl_batch_set_base_offset(p, next);
        fl_batch_set_commit_timestamp(p, ts);
        batches[i].base_offset = next;
        batches[i].commit_timestamp = ts;
        next += batches[i].last_offset_delta + 1;
    }
    /* 4. roll if the active segment is full, then write */
    if ((rc = fl_tablet_write(t, records, len, batches, count, err))) goto done;
    for (size_t i = 0; i < count; i++)
        if (batches[i].writer_id != -1)
            fl_writer_state_record(&t->writers, batches[i].writer_id, batches[i].batch_sequence,
                                   batches[i].base_offset, fl_batch_last_offset(&batches[i]), ts);
    res->base_offset = t->log_end_offset;
    res->last_offset = next - 1;
    t->log_end_offset = next;
    t->last_commit_timestamp = ts;
done:
    if (batches != views) fl_free(batches);
    return rc;
}

/* Index of the segment that holds offset (the last with base <= offset). */
static size_t fl_tablet_segment_for(const fl_log_tablet_t *t, int64_t offset) {
    size_t lo = 0, hi = t->segment_count;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (t->segments[mid]->base_offset <= offset) lo = mid;
        else hi = mid;
    }
    return lo;
}

int fl_log_tablet_read(fl_log_tablet_t *t, int64_t offset, size_t max_bytes,
                       int64_t upper_offset, fl_buf_t *out, fl_error_t *err) {
    /* an offline log is still read: below upper_offset (the caller's high
     * watermark) lies only what was acknowledged before the failure */
    if (offset < t->log_start_offset || offset > t->log_end_offset)
        return fl_err_set(err, FLUSS_ERR_LOG_OFFSET_OUT_OF_RANGE_EXCEPTION,
                          "Received request for offset %lld for table bucket, but we only have "
                          "log segments in the range %lld to %lld.",
                          (long long)offset, (long long)t->log_start_offset,
                          (long long)t->log_end_offset);
    if (offset >= upper_offset) return 0;
    size_t total = 0;
    for (size_t i = fl_tablet_segment_for(t, offset); i < t->segment_count; i++) {
        fl_log_segment_t *s = t->segments[i];
        if (offset < s->base_offset) { /* a hole the recovery found */
            if (total > 0) break;
            return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION,
                              "offsets %lld..%lld of this bucket are damaged on disk and cannot "
                              "be served; the log goes on at %lld",
                              (long long)t->segments[i - 1]->next_offset,
                              (long long)s->base_offset - 1, (long long)s->base_offset);
        }
        uint64_t pos;
        int rc = fl_log_segment_find(s, offset, &pos, err);
        if (rc == 1) continue;
        if (rc) return rc;
        size_t got = 0, had = out->len;
        rc = fl_log_segment_read(s, pos, max_bytes - (total < max_bytes ? total : max_bytes),
                                 upper_offset, total == 0, out, &got, err);
        if (rc != 0 && rc != FL_LOG_SEGMENT_CUT) { /* damaged: answer what came before it */
            if (total > 0) break;
            return rc;
        }
        /* the first batch must hold the offset asked for (its header's
         * offsets are outside the CRC) */
        if (got > 0) {
            fl_batch_peek_t pk;
            fl_error_t pe;
            if (fl_batch_peek_header(out->data + had, got, &pk, &pe) != 0 ||
                pk.base_offset > offset ||
                (int64_t)((uint64_t)pk.base_offset + (uint64_t)pk.last_offset_delta) < offset) {
                out->len = had;
                if (total > 0) break;
                return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION,
                                  "the batch holding offset %lld is damaged on disk (%s)",
                                  (long long)offset, s->path);
            }
        }
        total += got;
        if (rc == FL_LOG_SEGMENT_CUT) break; /* stopped in front of a damaged batch */
        if (total >= max_bytes || got == 0) break;
        offset = s->next_offset;
    }
    return 0;
}

int64_t fl_log_tablet_offset_for_time(fl_log_tablet_t *t, int64_t ts, fl_error_t *err) {
    for (size_t i = 0; i < t->segment_count; i++) {
        int64_t off = fl_log_segment_offset_for_time(t->segments[i], ts, err);
        if (off >= 0) return off < t->log_start_offset ? t->log_start_offset : off;
    }
    return t->log_end_offset;
}

int fl_log_tablet_drop_oldest(fl_log_tablet_t *t, size_t count, fl_error_t *err) {
    if (t->offline) return fl_offline(t, err);
    if (count >= t->segment_count) count = t->segment_count - 1; /* never the active one */
    size_t done = 0;
    int rc = 0;
    while (done < count) {
        fl_log_segment_t *s = t->segments[done];
        rc = fl_log_segment_delete(s, err);
        fl_log_segment_close(s);
        done++;
        if (rc) break;
    }
    if (done) {
        memmove(t->segments, t->segments + done, (t->segment_count - done) * sizeof(*t->segments));
        t->segment_count -= done;
        t->log_start_offset = t->segments[0]->base_offset;
    }
    return rc;
}

int fl_log_tablet_apply_retention(fl_log_tablet_t *t, int64_t now_ms, int64_t keep_from,
                                  fl_error_t *err) {
    if (t->cfg.ttl_ms <= 0 || t->offline) return 0;
    size_t drop = 0;
    while (drop + 1 < t->segment_count) {
        const fl_log_segment_t *s = t->segments[drop];
        if (s->max_timestamp < 0 || now_ms - s->max_timestamp <= t->cfg.ttl_ms) break;
        if (t->segments[drop + 1]->base_offset > keep_from) break; /* holds offsets kept */
        drop++;
    }
    return drop ? fl_log_tablet_drop_oldest(t, drop, err) : 0;
}

static size_t fl_tablet_segment_for(const fl_log_tablet_t *t, int64_t offset);

int fl_log_tablet_put_stats(fl_log_tablet_t *t, int64_t base_offset, uint32_t crc,
                            const uint8_t *stats, size_t len, fl_error_t *err) {
    if (t->offline || base_offset < t->log_start_offset || base_offset >= t->log_end_offset)
        return 0;
    return fl_log_segment_put_stats(t->segments[fl_tablet_segment_for(t, base_offset)],
                                    base_offset, crc, stats, len, err);
}

bool fl_log_tablet_get_stats(fl_log_tablet_t *t, int64_t base_offset, uint32_t crc,
                             fl_buf_t *out) {
    if (t->offline || base_offset < t->log_start_offset || base_offset >= t->log_end_offset)
        return false;
    return fl_log_segment_get_stats(t->segments[fl_tablet_segment_for(t, base_offset)],
                                    base_offset, crc, out);
}

size_t fl_log_tablet_expire_writers(fl_log_tablet_t *t, int64_t now_ms, int64_t expiration_ms) {
    return fl_writer_state_expire(&t->writers, now_ms, expiration_ms);
}

int fl_log_tablet_sync(fl_log_tablet_t *t, fl_error_t *err) {
    if (t->offline) return fl_offline(t, err);
    int rc = fl_log_segment_sync(t->segments[t->segment_count - 1], err);
    if (rc) t->offline = true;
    return rc;
}

/* ---- a follower's log ---- */

int fl_log_tablet_append_follower(fl_log_tablet_t *t, uint8_t *records, size_t len,
                                  fl_append_result_t *res, fl_error_t *err) {
    if (t->offline) return fl_offline(t, err);
    memset(res, 0, sizeof(*res));
    fl_batch_view_t views[64];
    fl_batch_view_t *batches = views;
    size_t count = 0;
    int64_t next = t->log_end_offset;
    /* every batch whole, CRC-checked, at the offset that follows ours */
    int rc = fl_tablet_parse_batches(t, records, len, true, 0, views, 64, &batches, &count, err);
    for (size_t i = 0; !rc && i < count; i++) {
        const fl_batch_view_t *b = &batches[i];
        if (b->base_offset != next || b->last_offset_delta < 0)
            rc = fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                            "a replicated batch at offset %lld where the log needs %lld",
                            (long long)b->base_offset, (long long)next);
        else next = fl_batch_last_offset(b) + 1;
    }
    if (rc || count == 0) goto done; /* an error, or nothing new */
    if ((rc = fl_tablet_write(t, records, len, batches, count, err))) goto done;
    for (size_t i = 0; i < count; i++) {
        if (batches[i].writer_id != -1)
            fl_writer_state_record(&t->writers, batches[i].writer_id, batches[i].batch_sequence,
                                   batches[i].base_offset, fl_batch_last_offset(&batches[i]),
                                   batches[i].commit_timestamp);
        if (batches[i].commit_timestamp > t->last_commit_timestamp)
            t->last_commit_timestamp = batches[i].commit_timestamp;
    }
    res->base_offset = t->log_end_offset;
    res->last_offset = next - 1;
    t->log_end_offset = next;
done:
    if (batches != views) fl_free(batches);
    return rc;
}

static int fl_tablet_name_cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of segments (and their indexes, stats, writer snapshots:
 * every name of 20 digits and a suffix) in dir, by base offset. */
static int fl_tablet_offset_files(const char *dir, fl_strlist_t *out, fl_error_t *err) {
    fl_strlist_t names = {0};
    fl_error_t le;
    if (fl_fs_list(dir, false, &names, &le) != 0)
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "%s", le.msg);
    for (size_t i = 0; i < names.count; i++) {
        const char *name = names.items[i];
        char *endp;
        long long base = strtoll(name, &endp, 10);
        if (strlen(name) > 20 && endp == name + 20 && base >= 0) fl_strlist_add(out, name);
    }
    fl_strlist_free(&names);
    /* zero-padded: by name is by offset */
    qsort(out->items, out->count, sizeof(*out->items), fl_tablet_name_cmp);
    return 0;
}

int fl_log_tablet_reset_at(fl_log_tablet_t **tp, int64_t offset, fl_error_t *err) {
    fl_log_tablet_t *t = *tp;
    if (t->offline) return fl_offline(t, err);
    char *dir = fl_strdup(t->dir);
    fl_log_config_t cfg = t->cfg;
    t->offline = true; /* closing writes no snapshot of the old end */
    fl_log_tablet_close(t);
    *tp = NULL;
    fl_strlist_t names = {0};
    int rc = fl_tablet_offset_files(dir, &names, err);
    char path[4400];
    for (size_t i = 0; !rc && i < names.count; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names.items[i]);
        if (fl_vfs_unlink(path) != 0 && errno != ENOENT)
            rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "unlink %s: %s", path,
                            strerror(errno));
    }
    fl_strlist_free(&names);
    if (!rc) {
        /* the new first segment, empty: the log starts and ends at offset */
        snprintf(path, sizeof(path), "%s/%020" PRId64 ".log", dir, offset);
        int fd = fl_vfs_open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || fl_vfs_fsync(fd) != 0 || fl_vfs_fsync_dir(dir) != 0)
            rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "creating %s: %s", path,
                            strerror(errno));
        if (fd >= 0) fl_vfs_close(fd);
    }
    fl_error_t oe;
    int orc = fl_log_tablet_open(dir, &cfg, tp, &oe);
    if (orc && !rc) rc = fl_err_set(err, oe.code ? oe.code : FLUSS_ERR_LOG_STORAGE_EXCEPTION,
                                    "reopening at %lld: %s", (long long)offset, oe.msg);
    fl_free(dir);
    return rc;
}

int fl_log_tablet_truncate(fl_log_tablet_t **tp, int64_t end_offset, fl_error_t *err) {
    fl_log_tablet_t *t = *tp;
    if (end_offset >= t->log_end_offset) return 0;
    if (t->offline) return fl_offline(t, err);
    if (end_offset < t->log_start_offset) end_offset = t->log_start_offset;
    char *dir = fl_strdup(t->dir);
    fl_log_config_t cfg = t->cfg;
    /* where the batch at end_offset begins, in the segment that holds it
     * (a cut inside a batch keeps none of it) */
    size_t si = fl_tablet_segment_for(t, end_offset);
    fl_log_segment_t *s = t->segments[si];
    uint64_t position = s->size;
    int rc = 0;
    if (end_offset < s->next_offset) {
        rc = fl_log_segment_find(s, end_offset, &position, err);
        if (rc == 1) rc = 0, position = s->size;
    }
    int64_t cut_base = s->base_offset;
    /* the files change under a closed tablet; recovery reopens it. From
     * the end: a crash meanwhile leaves a shorter log, never a hole. */
    t->offline = true; /* closing writes no snapshot of the old end */
    fl_log_tablet_close(t);
    *tp = NULL;
    if (rc) goto reopen;
    int64_t *bases = NULL;
    size_t n = 0, capb = 0;
    fl_strlist_t names = {0};
    fl_error_t lerr;
    fl_fs_list(dir, true, &names, &lerr); /* unreadable: nothing to remove */
    for (size_t i = 0; i < names.count; i++) {
        const char *name = names.items[i];
        size_t len = strlen(name);
        if (len < 21) continue;
        char *endp;
        long long base = strtoll(name, &endp, 10);
        if (endp != name + 20 || base < 0) continue;
        bool later_segment = base > cut_base && strcmp(name + 20, ".writer_snapshot") != 0;
        bool later_snapshot = strcmp(name + 20, ".writer_snapshot") == 0 && base > end_offset;
        if (!later_segment && !later_snapshot) continue;
        if (n == capb) bases = fl_realloc(bases, (capb = capb ? capb * 2 : 16) * sizeof(int64_t));
        bases[n++] = base;
        char path[4400];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (fl_vfs_unlink(path) != 0 && errno != ENOENT) {
            rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "unlink %s: %s", path,
                            strerror(errno));
            break;
        }
    }
    fl_strlist_free(&names);
    fl_free(bases);
    if (!rc) {
        /* the segment that holds the cut: its log file ends before it; its
         * index and time index are rebuilt by the recovery scan */
        char path[4400];
        snprintf(path, sizeof(path), "%s/%020" PRId64 ".log", dir, cut_base);
        int fd = fl_vfs_open(path, O_RDWR, 0);
        if (fd < 0 || fl_vfs_ftruncate(fd, (off_t)position) != 0 || fl_vfs_fsync(fd) != 0)
            rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "truncate %s: %s", path,
                            strerror(errno));
        if (fd >= 0) fl_vfs_close(fd);
        /* its index: the recovery scan of the (now last) segment rebuilds it */
        snprintf(path, sizeof(path), "%s/%020" PRId64 ".index", dir, cut_base);
        if (!rc && fl_vfs_unlink(path) != 0 && errno != ENOENT)
            rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "unlink %s: %s", path,
                            strerror(errno));
        if (!rc && fl_vfs_fsync_dir(dir) != 0)
            rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "fsync %s: %s", dir,
                            strerror(errno));
    }
reopen:;
    fl_error_t oe;
    int orc = fl_log_tablet_open(dir, &cfg, tp, &oe);
    if (orc && !rc) rc = fl_err_set(err, oe.code ? oe.code : FLUSS_ERR_LOG_STORAGE_EXCEPTION,
                                    "reopening after truncation: %s", oe.msg);
    fl_free(dir);
    return rc;
}
