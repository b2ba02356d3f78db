/*
 * log_remote_log.c — a bucket's remote log (log_remote_log.h): load and
 * orphan cleanup, segment upload, manifest commit, fetch and timestamp
 * lookups.
 */
#include "log_remote_log.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common_alloc.h"
#include "common_log.h"
#include "log_remote_index.h"

#define FL_RL_METADATA "metadata"
#define FL_RL_HANDLE "manifest-handle"
#define FL_RL_MANIFEST_SUFFIX ".manifest"
#define FL_RL_HANDLE_BYTES_MAX (64u * 1024)

void fl_remote_log_tablet_dir(char *out, size_t cap, const fl_remote_bucket_t *b) {
    if (b->partition_name)
        snprintf(out, cap, "log/%s/%s-%" PRId64 "/%s-p%" PRId64 "/%d", b->database, b->table,
                 b->table_id, b->partition_name, b->partition_id, b->bucket);
    else
        snprintf(out, cap, "log/%s/%s-%" PRId64 "/%d", b->database, b->table, b->table_id,
                 b->bucket);
}

/* "<uuid>.manifest": the manifest file names we write (and accept). */
static bool fl_rl_is_manifest_name(const char *name) {
    size_t n = strlen(name), sl = strlen(FL_RL_MANIFEST_SUFFIX);
    return n == FL_UUID_TEXT_LEN + sl && strcmp(name + FL_UUID_TEXT_LEN, FL_RL_MANIFEST_SUFFIX) == 0 &&
           fl_uuid_text_ok(name, FL_UUID_TEXT_LEN);
}

static bool fl_rl_ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Reads the handle and the manifest it names. A missing handle is an empty
 * log; anything unreadable is an error (nothing may be cleaned then). */
static int fl_rl_load(fl_remote_log_t *rl, const fl_remote_bucket_t *b, fl_error_t *err) {
    char rel[FL_REMOTE_PATH_MAX];
    snprintf(rel, sizeof(rel), "%s/" FL_RL_METADATA "/" FL_RL_HANDLE, rl->dir);
    fl_buf_t buf;
    fl_buf_init(&buf);
    int missing = 0;
    fl_error_t e;
    int rc = rl->storage->ops->read(rl->storage, rel, FL_RL_HANDLE_BYTES_MAX, &buf, &missing, &e);
    if (rc) {
        fl_buf_free(&buf);
        if (missing) return 0;
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "remote log %s: %s", rl->dir, e.msg);
    }
    fl_remote_handle_t h;
    rc = fl_remote_handle_decode(buf.data, buf.len, &h, &e);
    fl_buf_free(&buf);
    if (rc) return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "remote log %s: %s", rl->dir, e.msg);
    /* only the file name counts: the root may have moved since */
    const char *slash = strrchr(h.manifest_path, '/');
    const char *name = slash ? slash + 1 : h.manifest_path;
    if (!fl_rl_is_manifest_name(name)) {
        rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION,
                        "remote log %s: the handle names '%s', not a manifest", rl->dir, name);
        fl_remote_handle_free(&h);
        return rc;
    }
    snprintf(rel, sizeof(rel), "%s/" FL_RL_METADATA "/%s", rl->dir, name);
    fl_buf_init(&buf);
    rc = rl->storage->ops->read(rl->storage, rel, FL_REMOTE_MANIFEST_BYTES_MAX, &buf, NULL, &e);
    fl_remote_manifest_t m;
    if (!rc) rc = fl_remote_manifest_decode(buf.data, buf.len, &m, &e);
    fl_buf_free(&buf);
    if (rc) {
        fl_remote_handle_free(&h);
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "remote log %s: %s", rl->dir, e.msg);
    }
    if (!fl_remote_manifest_is_for(&m, b) || fl_remote_manifest_end(&m) != h.end_offset) {
        rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION,
                        "remote log %s: manifest %s does not match its bucket or handle", rl->dir,
                        name);
        fl_remote_manifest_free(&m);
        fl_remote_handle_free(&h);
        return rc;
    }
    fl_remote_manifest_free(&rl->manifest);
    rl->manifest = m;
    rl->manifest_file = fl_strdup(name);
    fl_remote_handle_free(&h);
    return 0;
}

static bool fl_rl_names_segment(const fl_remote_manifest_t *m, const char *name) {
    for (size_t i = 0; i < m->count; i++)
        if (strcmp(m->segments[i].id, name) == 0) return true;
    return false;
}

void fl_remote_log_clean_orphans(fl_remote_log_t *rl) {
    fl_strlist_t names = {0};
    fl_error_t e;
    char rel[FL_REMOTE_PATH_MAX + 512];
    if (rl->storage->ops->list(rl->storage, rl->dir, &names, &e) == 0) {
        for (size_t i = 0; i < names.count; i++) {
            const char *n = names.items[i];
            bool orphan = (fl_uuid_text_ok(n, strlen(n)) && !fl_rl_names_segment(&rl->manifest, n)) ||
                          fl_rl_ends_with(n, ".tmp");
            if (!orphan) continue;
            snprintf(rel, sizeof(rel), "%s/%s", rl->dir, n);
            FL_INFO("remote log %s: removing %s, which no committed manifest names", rl->dir, n);
            if (rl->storage->ops->remove(rl->storage, rel, &e)) FL_WARN("%s", e.msg);
        }
    }
    fl_strlist_free(&names);
    char dir[FL_REMOTE_PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/" FL_RL_METADATA, rl->dir);
    if (rl->storage->ops->list(rl->storage, dir, &names, &e) == 0) {
        for (size_t i = 0; i < names.count; i++) {
            const char *n = names.items[i];
            bool current = rl->manifest_file && strcmp(n, rl->manifest_file) == 0;
            if (current || strcmp(n, FL_RL_HANDLE) == 0) continue;
            if (!fl_rl_is_manifest_name(n) && !fl_rl_ends_with(n, ".tmp")) continue;
            snprintf(rel, sizeof(rel), "%s/%s", dir, n);
            if (rl->storage->ops->remove(rl->storage, rel, &e)) FL_WARN("%s", e.msg);
        }
    }
    fl_strlist_free(&names);
}

int fl_remote_log_open(fl_remote_storage_t *storage, const fl_remote_bucket_t *b,
                       fl_remote_log_t **out, fl_error_t *err) {
    fl_remote_log_t *rl = fl_calloc(1, sizeof(*rl));
    rl->storage = storage;
    char dir[FL_REMOTE_PATH_MAX];
    fl_remote_log_tablet_dir(dir, sizeof(dir), b);
    rl->dir = fl_strdup(dir);
    pthread_mutex_init(&rl->lock, NULL);
    fl_remote_manifest_init(&rl->manifest, b);
    int rc = fl_rl_load(rl, b, err);
    if (rc) {
        fl_remote_log_close(rl, false);
        return rc;
    }
    *out = rl;
    return 0;
}

int fl_remote_log_refresh(fl_remote_log_t *rl, fl_error_t *err) {
    fl_remote_log_t fresh = {.storage = rl->storage, .dir = rl->dir};
    pthread_mutex_lock(&rl->lock);
    fl_remote_bucket_t b = {rl->manifest.database, rl->manifest.table,
                            rl->manifest.partition_name, rl->manifest.table_id,
                            rl->manifest.partition_id, rl->manifest.bucket};
    fl_remote_manifest_init(&fresh.manifest, &b);
    pthread_mutex_unlock(&rl->lock);
    int rc = fl_rl_load(&fresh, &b, err);
    if (rc || !fresh.manifest_file) { /* unreadable, or nothing committed yet */
        fl_remote_manifest_free(&fresh.manifest);
        return rc;
    }
    pthread_mutex_lock(&rl->lock);
    bool same = rl->manifest_file && strcmp(rl->manifest_file, fresh.manifest_file) == 0;
    if (!same) {
        fl_remote_manifest_t old = rl->manifest;
        rl->manifest = fresh.manifest;
        fresh.manifest = old;
        char *f = rl->manifest_file;
        rl->manifest_file = fresh.manifest_file;
        fresh.manifest_file = f;
    }
    pthread_mutex_unlock(&rl->lock);
    fl_remote_manifest_free(&fresh.manifest);
    fl_free(fresh.manifest_file);
    return 0;
}

void fl_remote_log_close(fl_remote_log_t *rl, bool deleted) {
    if (!rl) return;
    if (deleted) {
        fl_error_t e;
        if (rl->storage->ops->remove(rl->storage, rl->dir, &e))
            FL_WARN("dropping remote log %s: %s", rl->dir, e.msg);
    }
    fl_remote_manifest_free(&rl->manifest);
    fl_free(rl->manifest_file);
    pthread_mutex_destroy(&rl->lock);
    fl_free(rl->dir);
    fl_free(rl);
}

void fl_remote_log_bounds(fl_remote_log_t *rl, int64_t *start, int64_t *end) {
    pthread_mutex_lock(&rl->lock);
    *start = fl_remote_manifest_start(&rl->manifest);
    *end = fl_remote_manifest_end(&rl->manifest);
    pthread_mutex_unlock(&rl->lock);
}

void fl_remote_log_manifest(fl_remote_log_t *rl, fl_remote_manifest_t *out) {
    pthread_mutex_lock(&rl->lock);
    fl_remote_manifest_copy(out, &rl->manifest);
    pthread_mutex_unlock(&rl->lock);
}

int fl_remote_log_read_records(fl_remote_log_t *rl, const fl_remote_segment_t *s, uint64_t pos,
                               size_t len, fl_buf_t *out, size_t *got, fl_error_t *err) {
    char rel[FL_REMOTE_PATH_MAX + 128];
    snprintf(rel, sizeof(rel), "%s/%s/%020" PRId64 ".log", rl->dir, s->id, s->start_offset);
    fl_buf_reserve(out, len);
    *got = 0;
    int rc = rl->storage->ops->read_range(rl->storage, rel, pos, len, out->data + out->len, got,
                                          err);
    if (!rc) out->len += *got;
    return rc;
}

/* ---- upload ---- */

static int fl_rl_put_index(fl_remote_log_t *rl, const char *seg_dir, int64_t base,
                           const char *suffix, const fl_buf_t *b, fl_error_t *err) {
    char rel[FL_REMOTE_PATH_MAX + 128];
    snprintf(rel, sizeof(rel), "%s/%020" PRId64 "%s", seg_dir, base, suffix);
    return rl->storage->ops->put_bytes(rl->storage, rel, b->data, b->len, err);
}

int fl_remote_log_upload(fl_remote_log_t *rl, const fl_log_segment_t *s, const char *local_dir,
                         int64_t end_offset, fl_remote_segment_t *out, fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    fl_uuid_random(out->id);
    out->start_offset = s->base_offset;
    out->end_offset = end_offset;
    out->max_timestamp = s->max_timestamp;
    out->size_bytes = (int32_t)s->size;
    char seg_dir[FL_REMOTE_PATH_MAX], rel[FL_REMOTE_PATH_MAX + 64];
    snprintf(seg_dir, sizeof(seg_dir), "%s/%s", rl->dir, out->id);
    fl_error_t e;
    snprintf(rel, sizeof(rel), "%s/%020" PRId64 ".log", seg_dir, s->base_offset);
    int rc = rl->storage->ops->put_file(rl->storage, s->path, rel, &e);
    fl_buf_t b;
    fl_buf_init(&b);
    if (!rc) {
        fl_remote_index_encode_offsets(s, &b);
        rc = fl_rl_put_index(rl, seg_dir, s->base_offset, ".index", &b, &e);
    }
    if (!rc) {
        fl_buf_reset(&b);
        fl_remote_index_encode_times(s, &b);
        rc = fl_rl_put_index(rl, seg_dir, s->base_offset, ".timeindex", &b, &e);
    }
    fl_buf_free(&b);
    if (!rc) {
        /* the writer state at the segment's end, when the local log still
         * keeps that snapshot (it keeps its newest two) */
        char snap[FL_REMOTE_PATH_MAX + 64];
        snprintf(snap, sizeof(snap), "%s/%020" PRId64 ".writer_snapshot", local_dir, end_offset);
        if (access(snap, F_OK) == 0) {
            snprintf(rel, sizeof(rel), "%s/%020" PRId64 ".writer_snapshot", seg_dir, end_offset);
            rc = rl->storage->ops->put_file(rl->storage, snap, rel, &e);
        }
    }
    if (rc) {
        fl_remote_log_discard(rl, out);
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "uploading %s: %s", s->path, e.msg);
    }
    return 0;
}

void fl_remote_log_discard(fl_remote_log_t *rl, const fl_remote_segment_t *s) {
    char rel[FL_REMOTE_PATH_MAX];
    snprintf(rel, sizeof(rel), "%s/%s", rl->dir, s->id);
    fl_error_t e;
    if (rl->storage->ops->remove(rl->storage, rel, &e)) FL_WARN("remote log: %s", e.msg);
}

/* ---- commit ---- */

int fl_remote_log_commit_handle(fl_remote_storage_t *storage, const fl_remote_bucket_t *b,
                                const char *manifest_path, int64_t end_offset, fl_error_t *err) {
    char dir[FL_REMOTE_PATH_MAX], rel[FL_REMOTE_PATH_MAX * 2];
    fl_remote_log_tablet_dir(dir, sizeof(dir), b);
    /* only the file name counts, as when the handle is read */
    const char *slash = strrchr(manifest_path, '/');
    const char *name = slash ? slash + 1 : manifest_path;
    if (!fl_rl_is_manifest_name(name))
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION,
                          "remote log %s: '%s' is not a manifest", dir, name);
    snprintf(rel, sizeof(rel), "%s/" FL_RL_METADATA "/%s", dir, name);
    fl_buf_t buf;
    fl_buf_init(&buf);
    fl_error_t e;
    fl_remote_manifest_t m;
    int rc = storage->ops->read(storage, rel, FL_REMOTE_MANIFEST_BYTES_MAX, &buf, NULL, &e);
    if (!rc) {
        rc = fl_remote_manifest_decode(buf.data, buf.len, &m, &e);
        bool ours = !rc && fl_remote_manifest_is_for(&m, b) &&
                    fl_remote_manifest_end(&m) == end_offset;
        if (!rc) fl_remote_manifest_free(&m);
        if (!rc && !ours) {
            fl_buf_free(&buf);
            return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION,
                              "remote log %s: manifest %s is not the bucket's or does not end at "
                              "%" PRId64,
                              dir, name, end_offset);
        }
    }
    fl_buf_free(&buf);
    if (rc)
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "remote log %s: manifest %s: %s",
                          dir, name, e.msg);
    char url[FL_REMOTE_PATH_MAX * 2];
    fl_remote_storage_url(storage, rel, url, sizeof(url));
    fl_remote_handle_encode(url, end_offset, &buf);
    snprintf(rel, sizeof(rel), "%s/" FL_RL_METADATA "/" FL_RL_HANDLE, dir);
    rc = storage->ops->put_bytes(storage, rel, buf.data, buf.len, &e);
    fl_buf_free(&buf);
    if (rc)
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "committing remote log %s: %s",
                          dir, e.msg);
    return 0;
}

/* The handle written here: a remote log with no coordinator to ask. */
static int fl_rl_commit_here(fl_remote_log_t *rl, const fl_remote_manifest_t *m,
                             const char *url, fl_error_t *err) {
    fl_remote_bucket_t b = {m->database, m->table, m->partition_name, m->table_id,
                            m->partition_id, m->bucket};
    return fl_remote_log_commit_handle(rl->storage, &b, url, fl_remote_manifest_end(m), err);
}

int fl_remote_log_commit(fl_remote_log_t *rl, size_t expired, const fl_remote_segment_t *added,
                         size_t n_added, fl_remote_commit_fn commit, void *commit_ctx,
                         fl_error_t *err) {
    fl_remote_manifest_t next;
    fl_remote_log_manifest(rl, &next); /* the writer is us: no change under our feet */
    fl_remote_manifest_drop_front(&next, expired);
    int rc = 0;
    for (size_t i = 0; i < n_added && !rc; i++) rc = fl_remote_manifest_append(&next, &added[i], err);
    if (rc) {
        fl_remote_manifest_free(&next);
        return rc;
    }
    char id[FL_UUID_TEXT_LEN + 1], name[FL_UUID_TEXT_LEN + 16], rel[FL_REMOTE_PATH_MAX];
    fl_uuid_random(id);
    snprintf(name, sizeof(name), "%s" FL_RL_MANIFEST_SUFFIX, id);
    fl_buf_t b;
    fl_buf_init(&b);
    fl_remote_manifest_encode(&next, &b);
    snprintf(rel, sizeof(rel), "%s/" FL_RL_METADATA "/%s", rl->dir, name);
    fl_error_t e;
    rc = rl->storage->ops->put_bytes(rl->storage, rel, b.data, b.len, &e);
    fl_buf_free(&b);
    if (rc) {
        fl_remote_manifest_free(&next);
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "committing remote log %s: %s",
                          rl->dir, e.msg);
    }
    /* the commit point: the handle names the new manifest */
    char url[FL_REMOTE_PATH_MAX * 2];
    fl_remote_storage_url(rl->storage, rel, url, sizeof(url));
    int64_t start = next.count ? next.segments[0].start_offset : -1;
    rc = commit ? commit(commit_ctx, url, start, fl_remote_manifest_end(&next), err)
                : fl_rl_commit_here(rl, &next, url, err);
    if (rc) {
        if (rc != FLUSS_ERR_NETWORK_EXCEPTION)
            rl->storage->ops->remove(rl->storage, rel, &(fl_error_t){0});
        fl_remote_manifest_free(&next);
        return rc;
    }
    /* committed: publish, then remove what it no longer names */
    fl_remote_manifest_t old;
    pthread_mutex_lock(&rl->lock);
    old = rl->manifest;
    rl->manifest = next;
    char *old_file = rl->manifest_file;
    rl->manifest_file = fl_strdup(name);
    pthread_mutex_unlock(&rl->lock);
    if (old_file) {
        snprintf(rel, sizeof(rel), "%s/" FL_RL_METADATA "/%s", rl->dir, old_file);
        if (rl->storage->ops->remove(rl->storage, rel, &e)) FL_WARN("remote log: %s", e.msg);
    }
    for (size_t i = 0; i < expired && i < old.count; i++) fl_remote_log_discard(rl, &old.segments[i]);
    fl_free(old_file);
    fl_remote_manifest_free(&old);
    return 0;
}

/* ---- reads ---- */

typedef struct fl_rl_index_ctx {
    fl_remote_storage_t *storage;
    const char *rel;
} fl_rl_index_ctx_t;

static int fl_rl_index_read(void *ctx, uint64_t pos, size_t len, uint8_t *dst, size_t *got,
                            fl_error_t *err) {
    fl_rl_index_ctx_t *c = ctx;
    return c->storage->ops->read_range(c->storage, c->rel, pos, len, dst, got, err);
}

int fl_remote_log_fetch(fl_remote_log_t *rl, int64_t offset, fl_remote_fetch_t *out,
                        fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&rl->lock);
    const fl_remote_manifest_t *m = &rl->manifest;
    size_t first = fl_remote_manifest_relevant(m, offset);
    if (first < m->count) {
        out->count = m->count - first;
        out->segments = fl_malloc(out->count * sizeof(*out->segments));
        memcpy(out->segments, m->segments + first, out->count * sizeof(*out->segments));
        if (m->partition_name) {
            snprintf(out->name_buf, sizeof(out->name_buf), "%s", m->partition_name);
            out->partition_name = out->name_buf;
        }
    }
    pthread_mutex_unlock(&rl->lock);
    if (!out->count) return 1;
    fl_remote_storage_url(rl->storage, rl->dir, out->tablet_url, sizeof(out->tablet_url));
    /* where the first segment's batch holding offset starts (or a batch
     * before it: the clients skip records below their offset) */
    const fl_remote_segment_t *s = &out->segments[0];
    char rel[FL_REMOTE_PATH_MAX + 64];
    snprintf(rel, sizeof(rel), "%s/%s/%020" PRId64 ".index", rl->dir, s->id, s->start_offset);
    uint64_t bytes = 0, pos = 0;
    fl_error_t e;
    fl_rl_index_ctx_t ctx = {rl->storage, rel};
    if (offset > s->start_offset && rl->storage->ops->size(rl->storage, rel, &bytes, &e) == 0 &&
        fl_remote_index_position(fl_rl_index_read, &ctx, bytes, s->start_offset, s->end_offset,
                                 s->size_bytes, offset, &pos, &e) != 0)
        pos = 0;
    (void)err;
    out->first_start_pos = (int32_t)pos;
    return 0;
}

void fl_remote_fetch_free(fl_remote_fetch_t *f) {
    if (!f) return;
    fl_free(f->segments);
    f->segments = NULL;
    f->count = 0;
}

int fl_remote_log_offset_for_time(fl_remote_log_t *rl, int64_t ts, int64_t *offset,
                                  fl_error_t *err) {
    pthread_mutex_lock(&rl->lock);
    size_t i = fl_remote_manifest_for_time(&rl->manifest, ts);
    bool found = i < rl->manifest.count;
    fl_remote_segment_t s;
    if (found) s = rl->manifest.segments[i];
    pthread_mutex_unlock(&rl->lock);
    if (!found) return 1;
    char rel[FL_REMOTE_PATH_MAX + 64];
    snprintf(rel, sizeof(rel), "%s/%s/%020" PRId64 ".timeindex", rl->dir, s.id, s.start_offset);
    uint64_t bytes = 0;
    fl_error_t e;
    fl_rl_index_ctx_t ctx = {rl->storage, rel};
    *offset = s.start_offset;
    if (rl->storage->ops->size(rl->storage, rel, &bytes, &e) == 0 &&
        fl_remote_index_offset_for_time(fl_rl_index_read, &ctx, bytes, s.start_offset,
                                        s.end_offset, ts, offset, &e) != 0)
        *offset = s.start_offset;
    (void)err;
    return 0;
}
