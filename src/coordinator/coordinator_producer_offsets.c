/*
 * coordinator_producer_offsets.c — the producer offsets store
 * (coordinator_producer_offsets.h): entries sorted by producer id in
 * memory, one file each on disk. A mutation, under the writer lock,
 * decides from the state (which only writers change), does its file I/O
 * with no other lock held, then applies the change under the state lock:
 * readers see the state before or after a change, never one whose file
 * write failed.
 */
#include "coordinator_producer_offsets.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common_alloc.h"
#include "common_fs.h"
#include "common_vfs.h"
#include "common_log.h"
#include "types_table.h"

#define FL_PRODUCER_FILE_SUFFIX ".json"
#define FL_PRODUCER_TMP_SUFFIX ".json.tmp"

/* A producer's place in the store: its entry, or why its file did not
 * load (then only e.producer_id is set). */
typedef struct fl_producer_slot {
    fl_producer_entry_t e;
    char *damage;
} fl_producer_slot_t;

struct fl_producer_offsets {
    pthread_mutex_t write_mu; /* one mutation at a time, held across its I/O */
    pthread_mutex_t mu;       /* the fields below: written under both locks */
    char *dir;                /* NULL: in memory only */
    bool failed;              /* a write failed: mutations refused */
    size_t n, cap;
    fl_producer_slot_t *v; /* sorted by producer id */
};

static bool fl_expired(const fl_producer_entry_t *e, int64_t now_ms) {
    return now_ms > e->expiration_ms;
}

static int fl_producer_id_check(const char *id, fl_error_t *err) {
    char why[FL_ERROR_MSG_MAX];
    if (!id) return fl_err_set(err, FLUSS_ERR_INVALID_PRODUCER_ID_EXCEPTION, "No producer ID");
    if (!fl_name_invalid(id, why, sizeof(why))) return 0;
    return fl_err_set(err, FLUSS_ERR_INVALID_PRODUCER_ID_EXCEPTION, "Invalid producer ID '%s': %s",
                      id, why);
}

/* Index of id, or where it would go (*found false). */
static size_t fl_producer_find(const fl_producer_offsets_t *p, const char *id, bool *found) {
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(p->v[mid].e.producer_id, id);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    *found = false;
    return lo;
}

static void fl_producer_slot_clear(fl_producer_slot_t *s) {
    fl_producer_entry_free(&s->e);
    fl_free(s->damage);
    s->damage = NULL;
}

/* Puts e (taken over) at index i, replacing the slot there when replace
 * (both locks held). */
static void fl_producer_put(fl_producer_offsets_t *p, size_t i, bool replace,
                            fl_producer_entry_t *e) {
    if (replace) {
        fl_producer_slot_clear(&p->v[i]);
    } else {
        if (p->n == p->cap) p->v = fl_realloc(p->v, (p->cap = p->cap ? p->cap * 2 : 8) * sizeof(*p->v));
        memmove(&p->v[i + 1], &p->v[i], (p->n - i) * sizeof(*p->v));
        p->n++;
    }
    p->v[i] = (fl_producer_slot_t){*e, NULL};
    memset(e, 0, sizeof(*e));
}

static void fl_producer_remove_at(fl_producer_offsets_t *p, size_t i) {
    fl_producer_slot_clear(&p->v[i]);
    memmove(&p->v[i], &p->v[i + 1], (p->n - i - 1) * sizeof(*p->v));
    p->n--;
}

static int fl_producer_refuse_damaged(const fl_producer_slot_t *s, fl_error_t *err) {
    return fl_err_set(err, FLUSS_ERR_STORAGE_EXCEPTION,
                      "The producer offsets of '%s' did not load at start (%s); "
                      "DELETE_PRODUCER_OFFSETS removes them",
                      s->e.producer_id, s->damage);
}

static char *fl_producer_path(const fl_producer_offsets_t *p, const char *id, const char *suffix) {
    size_t n = strlen(p->dir) + strlen(id) + strlen(suffix) + 2;
    char *path = fl_malloc(n);
    snprintf(path, n, "%s/%s%s", p->dir, id, suffix);
    return path;
}

/* ---- file I/O (writer lock held; state lock not) ---- */

static int fl_producer_file_write(fl_producer_offsets_t *p, const fl_producer_entry_t *e,
                                  fl_error_t *err) {
    if (!p->dir) return 0;
    fl_buf_t b;
    fl_buf_init(&b);
    fl_producer_entry_encode(e, &b);
    char *path = fl_producer_path(p, e->producer_id, FL_PRODUCER_FILE_SUFFIX);
    int rc = fl_fs_write_atomic(path, b.data, b.len, err);
    fl_free(path);
    fl_buf_free(&b);
    return rc;
}

static int fl_producer_file_remove(fl_producer_offsets_t *p, const char *id, fl_error_t *err) {
    if (!p->dir) return 0;
    char *path = fl_producer_path(p, id, FL_PRODUCER_FILE_SUFFIX);
    int rc = 0;
    if (fl_vfs_unlink(path) != 0 && errno != ENOENT)
        rc = fl_err_set(err, FLUSS_ERR__IO, "unlink %s: %s", path, strerror(errno));
    fl_free(path);
    return rc;
}

/* After a failed write: latch, and say so in the error the caller gets. */
static int fl_producer_latch(fl_producer_offsets_t *p, fl_error_t *err) {
    pthread_mutex_lock(&p->mu);
    p->failed = true;
    pthread_mutex_unlock(&p->mu);
    char cause[FL_ERROR_MSG_MAX];
    snprintf(cause, sizeof(cause), "%s", err->msg);
    FL_ERROR("producer offsets: %s; no more changes until a restart", cause);
    return fl_err_set(err, FLUSS_ERR_STORAGE_EXCEPTION, "Failed to store producer offsets: %s",
                      cause);
}

static int fl_producer_refuse_latched(fl_error_t *err) {
    return fl_err_set(err, FLUSS_ERR_STORAGE_EXCEPTION,
                      "The producer offsets store is read-only after a failed write");
}

/* ---- mutations ---- */

static int64_t fl_add_saturating(int64_t a, int64_t b) {
    if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b) return INT64_MIN;
    return a + b;
}

/* Whether entry e can be stored: not when a table's buckets mix
 * partitioned and unpartitioned ones (the reference's offsets file cannot
 * hold that and fails the register), nor with too many buckets. */
static int fl_producer_entry_check(const fl_producer_entry_t *e, fl_error_t *err) {
    for (size_t i = 1; i < e->n; i++)
        if (e->b[i].table_id == e->b[i - 1].table_id &&
            e->b[i].has_partition != e->b[i - 1].has_partition)
            return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                              "Failed to register producer offsets for producer %s: table %lld "
                              "has buckets with and without a partition id",
                              e->producer_id, (long long)e->b[i].table_id);
    if (e->n > FL_PRODUCER_BUCKETS_MAX)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          "Failed to register producer offsets for producer %s: %zu buckets, "
                          "more than the %u fluss-c keeps per producer",
                          e->producer_id, e->n, FL_PRODUCER_BUCKETS_MAX);
    return 0;
}

int fl_producer_offsets_register(fl_producer_offsets_t *p, const char *producer_id,
                                 const fl_producer_bucket_offset_t *b, size_t n, int64_t ttl_ms,
                                 int64_t now_ms, fl_producer_register_t *result, fl_error_t *err) {
    int rc = fl_producer_id_check(producer_id, err);
    if (rc) return rc;
    fl_producer_entry_t e = {fl_strdup(producer_id), fl_add_saturating(now_ms, ttl_ms), n,
                             fl_malloc((n ? n : 1) * sizeof(*b))};
    if (n) memcpy(e.b, b, n * sizeof(*b));
    fl_producer_buckets_normalize(e.b, &e.n);
    /* checked before the entry is looked at, as the reference does */
    rc = fl_producer_entry_check(&e, err);
    if (rc) {
        fl_producer_entry_free(&e);
        return rc;
    }
    pthread_mutex_lock(&p->write_mu);
    bool found;
    size_t i = fl_producer_find(p, producer_id, &found);
    if (found && p->v[i].damage) {
        rc = fl_producer_refuse_damaged(&p->v[i], err); /* never a "first start" */
    } else if (found && !fl_expired(&p->v[i].e, now_ms)) {
        *result = FL_PRODUCER_REGISTER_EXISTS;
    } else if (p->failed) {
        rc = fl_producer_refuse_latched(err);
    } else if (fl_producer_file_write(p, &e, err)) {
        rc = fl_producer_latch(p, err);
    } else {
        pthread_mutex_lock(&p->mu);
        fl_producer_put(p, i, found, &e); /* found: it had expired */
        pthread_mutex_unlock(&p->mu);
        *result = FL_PRODUCER_REGISTER_CREATED;
    }
    pthread_mutex_unlock(&p->write_mu);
    fl_producer_entry_free(&e);
    return rc;
}

int fl_producer_offsets_delete(fl_producer_offsets_t *p, const char *producer_id,
                               fl_error_t *err) {
    int rc = fl_producer_id_check(producer_id, err);
    if (rc) return rc;
    pthread_mutex_lock(&p->write_mu);
    bool found;
    size_t i = fl_producer_find(p, producer_id, &found);
    if (found && p->failed) {
        rc = fl_producer_refuse_latched(err);
    } else if (found) {
        /* gone from disk first: a crash after this answers "none" anyway */
        if (fl_producer_file_remove(p, producer_id, err) ||
            (p->dir && fl_fs_fsync_dir(p->dir, err))) {
            rc = fl_producer_latch(p, err);
        } else {
            pthread_mutex_lock(&p->mu);
            fl_producer_remove_at(p, i);
            pthread_mutex_unlock(&p->mu);
        }
    }
    pthread_mutex_unlock(&p->write_mu);
    return rc;
}

size_t fl_producer_offsets_expire(fl_producer_offsets_t *p, int64_t now_ms) {
    pthread_mutex_lock(&p->write_mu);
    size_t removed = 0;
    fl_error_t err;
    bool io_failed = false;
    for (size_t i = 0; i < p->n && !p->failed && !io_failed;) {
        if (p->v[i].damage || !fl_expired(&p->v[i].e, now_ms)) {
            i++;
            continue;
        }
        if (fl_producer_file_remove(p, p->v[i].e.producer_id, &err)) {
            io_failed = true;
            break;
        }
        pthread_mutex_lock(&p->mu);
        fl_producer_remove_at(p, i);
        pthread_mutex_unlock(&p->mu);
        removed++;
    }
    /* one directory fsync covers every unlink; an entry already gone from
     * memory whose unlink is not yet durable may come back after a crash,
     * still expired, and goes at the next sweep */
    if (!io_failed && removed && p->dir && fl_fs_fsync_dir(p->dir, &err)) io_failed = true;
    if (io_failed) fl_producer_latch(p, &err);
    pthread_mutex_unlock(&p->write_mu);
    if (removed) FL_INFO("producer offsets: removed %zu expired", removed);
    return removed;
}

/* ---- reads ---- */

int fl_producer_offsets_get(fl_producer_offsets_t *p, const char *producer_id, int64_t now_ms,
                            fl_producer_entry_t *out, bool *found, fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    *found = false;
    int rc = fl_producer_id_check(producer_id, err);
    if (rc) return rc;
    pthread_mutex_lock(&p->mu);
    bool there;
    size_t i = fl_producer_find(p, producer_id, &there);
    if (there && p->v[i].damage) {
        rc = fl_producer_refuse_damaged(&p->v[i], err);
    } else if (there && !fl_expired(&p->v[i].e, now_ms)) {
        const fl_producer_entry_t *e = &p->v[i].e;
        *out = (fl_producer_entry_t){fl_strdup(e->producer_id), e->expiration_ms, e->n,
                                     fl_malloc((e->n ? e->n : 1) * sizeof(*e->b))};
        if (e->n) memcpy(out->b, e->b, e->n * sizeof(*e->b));
        *found = true;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

size_t fl_producer_offsets_count(fl_producer_offsets_t *p) {
    pthread_mutex_lock(&p->mu);
    size_t n = p->n;
    pthread_mutex_unlock(&p->mu);
    return n;
}

/* ---- open / close ---- */

static bool fl_ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

/* Loads one "<id>.json" (before the store is shared: no locks). A file
 * that does not read or decode whole fences its producer (a slot with
 * the reason) instead of stopping the coordinator; one whose name is no
 * producer id is left alone, no request can name it. */
static void fl_producer_load_file(fl_producer_offsets_t *p, const char *name) {
    char *id = fl_strndup(name, strlen(name) - strlen(FL_PRODUCER_FILE_SUFFIX));
    char *path = fl_producer_path(p, id, FL_PRODUCER_FILE_SUFFIX);
    char why[FL_ERROR_MSG_MAX];
    fl_buf_t b;
    fl_buf_init(&b);
    fl_producer_entry_t e = {0};
    fl_error_t err;
    fl_err_clear(&err);
    bool found;
    if (fl_name_invalid(id, why, sizeof(why))) {
        FL_WARN("producer offsets: ignoring %s: not a producer id (%s)", path, why);
    } else if (fl_fs_read_all(path, FL_PRODUCER_FILE_MAX, &b, NULL, &err) == 0 &&
               fl_producer_entry_decode((const char *)b.data, b.len, &e, &err) == 0 &&
               strcmp(e.producer_id, id) == 0) {
        fl_producer_put(p, fl_producer_find(p, id, &found), false, &e); /* names are unique */
    } else {
        if (e.producer_id)
            fl_err_set(&err, FLUSS_ERR_STORAGE_EXCEPTION, "%s holds producer '%s'", path,
                       e.producer_id);
        fl_producer_entry_free(&e);
        FL_ERROR("producer offsets: %s did not load: %s; requests for '%s' fail until it is "
                 "deleted",
                 path, err.msg, id);
        fl_producer_entry_t fenced = {fl_strdup(id), 0, 0, NULL};
        size_t i = fl_producer_find(p, id, &found);
        fl_producer_put(p, i, false, &fenced);
        p->v[i].damage = fl_strdup(err.msg);
    }
    fl_buf_free(&b);
    fl_free(path);
    fl_free(id);
}

/* Makes dir and its entry in the parent durable: the first file written
 * into a new dir must not vanish with it. */
static int fl_producer_make_dir(const char *dir, fl_error_t *err) {
    int rc = fl_fs_mkdirs(dir, err);
    char *parent = fl_strdup(dir);
    char *slash = strrchr(parent, '/');
    if (!rc && slash && slash != parent) {
        *slash = '\0';
        rc = fl_fs_fsync_dir(parent, err);
    }
    fl_free(parent);
    return rc;
}

static int fl_producer_load_dir(fl_producer_offsets_t *p, fl_error_t *err) {
    int rc = fl_producer_make_dir(p->dir, err);
    if (rc) return rc;
    fl_strlist_t names = {0};
    rc = fl_fs_list(p->dir, false, &names, err);
    for (size_t i = 0; i < names.count; i++) {
        const char *name = names.items[i];
        if (fl_ends_with(name, FL_PRODUCER_TMP_SUFFIX)) {
            /* an interrupted write: never renamed, so never acknowledged */
            char *path = fl_producer_path(p, name, "");
            if (fl_vfs_unlink(path) != 0) FL_WARN("producer offsets: unlink %s: %s", path, strerror(errno));
            fl_free(path);
        } else if (fl_ends_with(name, FL_PRODUCER_FILE_SUFFIX)) {
            fl_producer_load_file(p, name);
        } else if (name[0] != '.') {
            FL_WARN("producer offsets: ignoring %s/%s", p->dir, name);
        }
    }
    fl_strlist_free(&names);
    return rc;
}

int fl_producer_offsets_open(const char *dir, fl_producer_offsets_t **out, fl_error_t *err) {
    fl_producer_offsets_t *p = fl_calloc(1, sizeof(*p));
    pthread_mutex_init(&p->write_mu, NULL);
    pthread_mutex_init(&p->mu, NULL);
    if (dir) {
        p->dir = fl_strdup(dir);
        int rc = fl_producer_load_dir(p, err);
        if (rc) {
            fl_producer_offsets_close(p);
            return rc;
        }
    }
    *out = p;
    return 0;
}

void fl_producer_offsets_close(fl_producer_offsets_t *p) {
    if (!p) return;
    for (size_t i = 0; i < p->n; i++) fl_producer_slot_clear(&p->v[i]);
    fl_free(p->v);
    fl_free(p->dir);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->write_mu);
    fl_free(p);
}
