/*
 * kv_lease.c — KV snapshot leases (kv_lease.h): a small list under one
 * mutex, written whole to its file after every change.
 */
#include "kv_lease.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "common_fs.h"
#include "common_log.h"

#define FL_LEASE_ID_MAX 1024

typedef struct fl_lease {
    char *id;
    int64_t expires_ms;
    size_t n, cap;
    fl_kv_lease_bucket_t *b;
} fl_lease_t;

struct fl_kv_leases {
    pthread_mutex_t mu;
    char *path;
    size_t n, cap;
    fl_lease_t *v;
};

static void fl_lease_clear(fl_lease_t *x) {
    fl_free(x->id);
    fl_free(x->b);
    memset(x, 0, sizeof(*x));
}

static void fl_leases_clear(fl_kv_leases_t *l) {
    for (size_t i = 0; i < l->n; i++) fl_lease_clear(&l->v[i]);
    l->n = 0;
}

static fl_lease_t *fl_lease_find(fl_kv_leases_t *l, const char *id) {
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].id, id) == 0) return &l->v[i];
    return NULL;
}

static fl_lease_t *fl_lease_add(fl_kv_leases_t *l, const char *id) {
    if (l->n == l->cap) l->v = fl_realloc(l->v, (l->cap = l->cap ? l->cap * 2 : 8) * sizeof(*l->v));
    fl_lease_t *x = &l->v[l->n++];
    memset(x, 0, sizeof(*x));
    x->id = fl_strdup(id);
    return x;
}

static void fl_lease_remove(fl_kv_leases_t *l, fl_lease_t *x) {
    fl_lease_clear(x);
    *x = l->v[--l->n];
}

static bool fl_lease_same_bucket(const fl_kv_lease_bucket_t *a, const fl_kv_lease_bucket_t *b) {
    return a->table_id == b->table_id && a->partition_id == b->partition_id &&
           a->bucket == b->bucket;
}

void fl_kv_leases_dump(fl_kv_leases_t *l, fl_buf_t *out) {
    json_t *arr = json_array();
    for (size_t i = 0; i < l->n; i++) {
        json_t *bs = json_array();
        for (size_t k = 0; k < l->v[i].n; k++) {
            const fl_kv_lease_bucket_t *b = &l->v[i].b[k];
            json_array_append_new(bs, json_pack("[I,I,i,I]", (json_int_t)b->table_id,
                                                (json_int_t)b->partition_id, (int)b->bucket,
                                                (json_int_t)b->snapshot_id));
        }
        json_array_append_new(arr, json_pack("{s:s, s:I, s:o}", "id", l->v[i].id, "expires_ms",
                                             (json_int_t)l->v[i].expires_ms, "buckets", bs));
    }
    json_t *root = json_pack("{s:i, s:o}", "version", 1, "leases", arr);
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    fl_buf_append(out, text, strlen(text));
    free(text);
}

/* Writes the file (mu held). On failure the change stays in memory and
 * the error is returned: the caller answers STORAGE_EXCEPTION. */
static int fl_leases_save(fl_kv_leases_t *l, fl_error_t *err) {
    if (!l->path) return 0;
    fl_buf_t b;
    fl_buf_init(&b);
    fl_kv_leases_dump(l, &b);
    int rc = fl_fs_write_atomic(l->path, b.data, b.len, err);
    fl_buf_free(&b);
    return rc;
}

int fl_kv_leases_parse(fl_kv_leases_t *l, const char *text, size_t len, fl_error_t *err) {
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return fl_err_set(err, FLUSS_ERR_STORAGE_EXCEPTION, "The lease file does not parse: %s",
                          je.text);
    const char *why = NULL;
    json_t *ver = json_object_get(root, "version"), *arr = json_object_get(root, "leases");
    if (!json_is_integer(ver) || json_integer_value(ver) != 1) why = "unknown version";
    else if (!json_is_array(arr)) why = "no lease list";
    pthread_mutex_lock(&l->mu);
    fl_leases_clear(l);
    for (size_t i = 0; !why && i < json_array_size(arr); i++) {
        json_t *e = json_array_get(arr, i);
        const char *id = json_string_value(json_object_get(e, "id"));
        json_t *exp = json_object_get(e, "expires_ms"), *bs = json_object_get(e, "buckets");
        if (!id || !*id || strlen(id) > FL_LEASE_ID_MAX || fl_lease_find(l, id)) {
            why = "bad or repeated lease id";
            break;
        }
        if (!json_is_integer(exp) || !json_is_array(bs)) {
            why = "bad lease";
            break;
        }
        fl_lease_t *x = fl_lease_add(l, id);
        x->expires_ms = json_integer_value(exp);
        for (size_t k = 0; k < json_array_size(bs); k++) {
            json_t *t = json_array_get(bs, k);
            json_t *a = json_array_get(t, 0), *p = json_array_get(t, 1), *b = json_array_get(t, 2),
                   *s = json_array_get(t, 3);
            if (json_array_size(t) != 4 || !json_is_integer(a) || !json_is_integer(p) ||
                !json_is_integer(b) || !json_is_integer(s) || json_integer_value(b) < 0 ||
                json_integer_value(b) > INT32_MAX || json_integer_value(p) < -1) {
                why = "bad leased bucket";
                break;
            }
            if (x->n == x->cap)
                x->b = fl_realloc(x->b, (x->cap = x->cap ? x->cap * 2 : 4) * sizeof(*x->b));
            x->b[x->n++] = (fl_kv_lease_bucket_t){json_integer_value(a), json_integer_value(p),
                                                  (int32_t)json_integer_value(b),
                                                  json_integer_value(s)};
        }
    }
    if (why) fl_leases_clear(l);
    pthread_mutex_unlock(&l->mu);
    json_decref(root);
    if (why) return fl_err_set(err, FLUSS_ERR_STORAGE_EXCEPTION, "The lease file is damaged: %s", why);
    return 0;
}

int fl_kv_leases_open(const char *path, fl_kv_leases_t **out, fl_error_t *err) {
    fl_kv_leases_t *l = fl_calloc(1, sizeof(*l));
    pthread_mutex_init(&l->mu, NULL);
    if (path) {
        l->path = fl_strdup(path);
        fl_buf_t b;
        fl_buf_init(&b);
        int missing = 0;
        fl_error_t e;
        int rc = fl_fs_read_all(path, FL_KV_LEASES_FILE_MAX, &b, &missing, &e);
        if (rc && !missing) {
            fl_buf_free(&b);
            fl_kv_leases_close(l);
            return fl_err_set(err, FLUSS_ERR_STORAGE_EXCEPTION, "%s", e.msg);
        }
        if (!rc) rc = fl_kv_leases_parse(l, (const char *)b.data, b.len, err);
        else rc = 0;
        fl_buf_free(&b);
        if (rc) {
            fl_kv_leases_close(l);
            return rc;
        }
    }
    *out = l;
    return 0;
}

void fl_kv_leases_close(fl_kv_leases_t *l) {
    if (!l) return;
    fl_leases_clear(l);
    fl_free(l->v);
    fl_free(l->path);
    pthread_mutex_destroy(&l->mu);
    fl_free(l);
}

/* Drops the leases expired at now_ms (mu held); returns how many. */
static size_t fl_leases_purge(fl_kv_leases_t *l, int64_t now_ms) {
    size_t dropped = 0;
    for (size_t i = 0; i < l->n;) {
        if (l->v[i].expires_ms <= now_ms) {
            fl_lease_remove(l, &l->v[i]);
            dropped++;
        } else i++;
    }
    return dropped;
}

int fl_kv_leases_acquire(fl_kv_leases_t *l, const char *lease_id, int64_t duration_ms,
                         int64_t now_ms, const fl_kv_lease_bucket_t *b, size_t n, fl_error_t *err) {
    if (!lease_id || !*lease_id || strlen(lease_id) > FL_LEASE_ID_MAX)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          "A kv snapshot lease needs an id of 1 to %d characters.",
                          FL_LEASE_ID_MAX);
    if (duration_ms <= 0)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          "The lease duration must be positive, got %lld ms.",
                          (long long)duration_ms);
    pthread_mutex_lock(&l->mu);
    fl_leases_purge(l, now_ms); /* the file is rewritten anyway: expired ones go */
    fl_lease_t *x = fl_lease_find(l, lease_id);
    if (!x) x = fl_lease_add(l, lease_id);
    x->expires_ms = now_ms > INT64_MAX - duration_ms ? INT64_MAX : now_ms + duration_ms;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < x->n && !fl_lease_same_bucket(&x->b[k], &b[i])) k++;
        if (k == x->n) {
            if (x->n == x->cap)
                x->b = fl_realloc(x->b, (x->cap = x->cap ? x->cap * 2 : 4) * sizeof(*x->b));
            x->n++;
        }
        x->b[k] = b[i];
    }
    int rc = fl_leases_save(l, err);
    pthread_mutex_unlock(&l->mu);
    return rc;
}

int fl_kv_leases_release(fl_kv_leases_t *l, const char *lease_id, const fl_kv_lease_bucket_t *b,
                         size_t n, fl_error_t *err) {
    pthread_mutex_lock(&l->mu);
    int rc = 0;
    fl_lease_t *x = lease_id ? fl_lease_find(l, lease_id) : NULL;
    if (x) {
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < x->n; k++)
                if (fl_lease_same_bucket(&x->b[k], &b[i])) {
                    x->b[k] = x->b[--x->n];
                    break;
                }
        if (x->n == 0) fl_lease_remove(l, x);
        rc = fl_leases_save(l, err);
    }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

int fl_kv_leases_drop(fl_kv_leases_t *l, const char *lease_id, fl_error_t *err) {
    pthread_mutex_lock(&l->mu);
    int rc = 0;
    fl_lease_t *x = lease_id ? fl_lease_find(l, lease_id) : NULL;
    if (x) {
        fl_lease_remove(l, x);
        rc = fl_leases_save(l, err);
    }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

size_t fl_kv_leases_tables(fl_kv_leases_t *l, const char *lease_id, int64_t **table_ids) {
    size_t n = 0;
    *table_ids = NULL;
    pthread_mutex_lock(&l->mu);
    fl_lease_t *x = lease_id ? fl_lease_find(l, lease_id) : NULL;
    if (x) {
        *table_ids = fl_calloc(x->n ? x->n : 1, sizeof(**table_ids));
        for (size_t k = 0; k < x->n; k++) {
            bool seen = false;
            for (size_t j = 0; j < n && !seen; j++) seen = (*table_ids)[j] == x->b[k].table_id;
            if (!seen) (*table_ids)[n++] = x->b[k].table_id;
        }
    }
    pthread_mutex_unlock(&l->mu);
    return n;
}

bool fl_kv_leases_pinned(fl_kv_leases_t *l, int64_t table_id, int64_t partition_id,
                         int32_t bucket, int64_t snapshot_id, int64_t now_ms) {
    fl_kv_lease_bucket_t want = {table_id, partition_id, bucket, snapshot_id};
    bool pinned = false;
    pthread_mutex_lock(&l->mu);
    for (size_t i = 0; i < l->n && !pinned; i++) {
        if (l->v[i].expires_ms <= now_ms) continue;
        for (size_t k = 0; k < l->v[i].n && !pinned; k++)
            pinned = fl_lease_same_bucket(&l->v[i].b[k], &want) &&
                     l->v[i].b[k].snapshot_id == snapshot_id;
    }
    pthread_mutex_unlock(&l->mu);
    return pinned;
}

size_t fl_kv_leases_pinned_ids(fl_kv_leases_t *l, int64_t table_id, int64_t partition_id,
                               int32_t bucket, int64_t now_ms, int64_t **ids) {
    fl_kv_lease_bucket_t want = {table_id, partition_id, bucket, 0};
    size_t n = 0, cap = 0;
    int64_t *v = NULL;
    pthread_mutex_lock(&l->mu);
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i].expires_ms <= now_ms) continue;
        for (size_t k = 0; k < l->v[i].n; k++) {
            if (!fl_lease_same_bucket(&l->v[i].b[k], &want)) continue;
            if (n == cap) v = fl_realloc(v, (cap = cap ? cap * 2 : 8) * sizeof(*v));
            v[n++] = l->v[i].b[k].snapshot_id;
        }
    }
    pthread_mutex_unlock(&l->mu);
    *ids = v;
    return n;
}

size_t fl_kv_leases_expire(fl_kv_leases_t *l, int64_t now_ms) {
    pthread_mutex_lock(&l->mu);
    size_t dropped = fl_leases_purge(l, now_ms);
    if (dropped) {
        fl_error_t e;
        if (fl_leases_save(l, &e)) FL_WARN("kv snapshot leases: %s", e.msg);
    }
    pthread_mutex_unlock(&l->mu);
    return dropped;
}

size_t fl_kv_leases_count(fl_kv_leases_t *l) {
    pthread_mutex_lock(&l->mu);
    size_t n = l->n;
    pthread_mutex_unlock(&l->mu);
    return n;
}
