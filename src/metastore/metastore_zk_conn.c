/*
 * metastore_zk_conn.c — a ZooKeeper session for the metastore and the
 * cluster registrations (libzookeeper_mt's synchronous API), the path
 * prefix of a cluster's root, error mapping, reads with buffers that grow
 * to the znode's size, and the zoo_multi builder every write goes
 * through.
 *
 * Thread rule: calls from one thread at a time per connection (the
 * metastore's rule); the library's completion thread runs the watchers,
 * which only touch state/expired/changes under `lock`.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"
#include "metastore_zk_int.h"

/* Longest path we build (table and partition names are at most 200 bytes). */
#define FL_ZK_PATH_MAX 4096

/* The library's log lines, by the level its text names: its INFO lines
 * (every connect and close) are our debug ones. */
static void fl_zk_log(const char *message) {
    if (strstr(message, "ZOO_ERROR@") || strstr(message, "ZOO_WARN@"))
        FL_WARN("zookeeper: %s", message);
    else
        FL_DEBUG("zookeeper: %s", message);
}

static void fl_zk_session_watcher(zhandle_t *zh, int type, int state, const char *path,
                                  void *ctx) {
    (void)zh;
    (void)path;
    fl_zk_conn_t *c = ctx;
    pthread_mutex_lock(&c->lock);
    if (type == ZOO_SESSION_EVENT) {
        c->state = state;
        if (state == ZOO_EXPIRED_SESSION_STATE) c->expired = true;
    }
    c->changes++;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

void fl_zk_watch_wake(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
    fl_zk_session_watcher(zh, type, state, path, ctx);
}

uint64_t fl_zk_changes(fl_zk_conn_t *c) {
    pthread_mutex_lock(&c->lock);
    uint64_t n = c->changes;
    pthread_mutex_unlock(&c->lock);
    return n;
}

uint64_t fl_zk_wait_change(fl_zk_conn_t *c, uint64_t seen, int timeout_ms) {
    struct timespec until = fl_time_mono_deadline(timeout_ms);
    pthread_mutex_lock(&c->lock);
    while (c->changes == seen && !c->expired)
        if (pthread_cond_timedwait(&c->cond, &c->lock, &until) == ETIMEDOUT) break;
    uint64_t n = c->changes;
    pthread_mutex_unlock(&c->lock);
    return n;
}

bool fl_zk_conn_alive(fl_zk_conn_t *c) {
    pthread_mutex_lock(&c->lock);
    bool alive = !c->expired;
    pthread_mutex_unlock(&c->lock);
    return alive;
}

int fl_zk_err(fl_error_t *err, int zrc, const char *what, const char *path) {
    int code = FLUSS_ERR__IO;
    if (zrc == ZCONNECTIONLOSS || zrc == ZOPERATIONTIMEOUT || zrc == ZSESSIONEXPIRED ||
        zrc == ZSESSIONMOVED || zrc == ZCLOSING || zrc == ZINVALIDSTATE)
        code = FLUSS_ERR__TRANSPORT;
    else if (zrc == ZNONODE || zrc == ZNODEEXISTS || zrc == ZBADVERSION || zrc == ZNOTEMPTY)
        code = FLUSS_ERR__STATE;
    return fl_err_set(err, code, "ZooKeeper %s %s: %s", what, path ? path : "", zerror(zrc));
}

char *fl_zk_path(const fl_zk_conn_t *c, const char *fmt, ...) {
    char *p = fl_malloc(FL_ZK_PATH_MAX);
    size_t r = strlen(c->root);
    memcpy(p, c->root, r);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p + r, FL_ZK_PATH_MAX - r, fmt, ap);
    va_end(ap);
    assert(n > 0 && (size_t)n < FL_ZK_PATH_MAX - r);
    return p;
}

int fl_zk_get(fl_zk_conn_t *c, const char *path, fl_buf_t *out, struct Stat *st, bool *missing,
              fl_error_t *err) {
    if (missing) *missing = false;
    struct Stat local;
    if (!st) st = &local;
    int cap = 1024;
    for (;;) {
        fl_buf_reset(out);
        uint8_t *p = fl_buf_try_reserve(out, (size_t)cap);
        if (!p) return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "znode %s: %d bytes", path, cap);
        int len = cap;
        int zrc = zoo_get(c->zh, path, 0, (char *)p, &len, st);
        if (zrc == ZNONODE && missing) {
            *missing = true;
            return 0;
        }
        if (zrc != ZOK) return fl_zk_err(err, zrc, "get", path);
        if (st->dataLength <= cap) {
            out->len = len < 0 ? 0 : (size_t)len; /* -1: a NULL payload */
            return 0;
        }
        if ((uint32_t)st->dataLength > FL_ZK_PAYLOAD_MAX)
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "znode %s holds %d bytes", path,
                              st->dataLength);
        cap = st->dataLength; /* it grew between the calls, or was large: again */
    }
}

static int fl_zk_strcmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int fl_zk_children(fl_zk_conn_t *c, const char *path, struct String_vector *out, bool *missing,
                   fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    if (missing) *missing = false;
    int zrc = zoo_get_children(c->zh, path, 0, out);
    if (zrc == ZNONODE && missing) {
        *missing = true;
        return 0;
    }
    if (zrc != ZOK) return fl_zk_err(err, zrc, "list", path);
    if (out->count > 0) qsort(out->data, (size_t)out->count, sizeof(char *), fl_zk_strcmp);
    return 0;
}

int fl_zk_ensure(fl_zk_conn_t *c, const char *path, fl_error_t *err) {
    char buf[FL_ZK_PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof(buf)) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "path too long");
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char keep = buf[i];
        buf[i] = '\0';
        int zrc = zoo_create(c->zh, buf, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
        buf[i] = keep;
        if (zrc != ZOK && zrc != ZNODEEXISTS) return fl_zk_err(err, zrc, "create", path);
    }
    return 0;
}

static int fl_zk_root_check(const char *root, fl_error_t *err) {
    size_t n = strlen(root);
    if (n == 0) return 0;
    if (root[0] != '/' || root[n - 1] == '/' || strstr(root, "//") || n > 1024)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "ZooKeeper root \"%s\": must be empty or like /a/b", root);
    return 0;
}

int fl_zk_conn_open(const char *connect_string, const char *root, int session_timeout_ms,
                    int connect_timeout_ms, fl_zk_conn_t **out, fl_error_t *err) {
    if (!root) root = "";
    int rc = fl_zk_root_check(root, err);
    if (rc) return rc;
    if (session_timeout_ms <= 0) session_timeout_ms = 18000;
    if (connect_timeout_ms <= 0) connect_timeout_ms = session_timeout_ms;
    fl_zk_conn_t *c = fl_calloc(1, sizeof(*c));
    c->root = fl_strdup(root);
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cond, &ca);
    pthread_condattr_destroy(&ca);
    c->state = ZOO_CONNECTING_STATE;
    c->zh = zookeeper_init2(connect_string, fl_zk_session_watcher, session_timeout_ms, NULL, c, 0,
                            fl_zk_log);
    if (!c->zh) {
        rc = fl_err_set(err, FLUSS_ERR__TRANSPORT, "ZooKeeper %s: %s", connect_string,
                        strerror(errno));
        goto fail;
    }
    /* the session is up when the watcher sees CONNECTED */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&c->lock);
        int state = c->state;
        seen = c->changes;
        pthread_mutex_unlock(&c->lock);
        if (state == ZOO_CONNECTED_STATE) break;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long waited_ms = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
        if (waited_ms >= connect_timeout_ms || state == ZOO_EXPIRED_SESSION_STATE ||
            state == ZOO_AUTH_FAILED_STATE) {
            rc = fl_err_set(err, FLUSS_ERR__TIMED_OUT,
                            "ZooKeeper %s: no session within %d ms "
                            "(zookeeper.client.connection-timeout)",
                            connect_string, connect_timeout_ms);
            goto fail;
        }
        fl_zk_wait_change(c, seen, (int)(connect_timeout_ms - waited_ms));
    }
    if (root[0] && (rc = fl_zk_ensure(c, root, err))) goto fail;
    *out = c;
    return 0;
fail:
    fl_zk_conn_close(c);
    return rc;
}

void fl_zk_conn_close(fl_zk_conn_t *c) {
    if (!c) return;
    if (c->zh) zookeeper_close(c->zh); /* joins the library's threads */
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->lock);
    fl_free(c->root);
    fl_free(c);
}

/* ---- multi ---- */

void fl_zk_txn_init(fl_zk_txn_t *t) { memset(t, 0, sizeof(*t)); }

void fl_zk_txn_free(fl_zk_txn_t *t) {
    for (size_t i = 0; i < 3 * t->count; i++) free(t->owned[i]);
    fl_free(t->owned);
    fl_free(t->ops);
    memset(t, 0, sizeof(*t));
}

static zoo_op_t *fl_zk_txn_add(fl_zk_txn_t *t, char *path, char *data, void *extra) {
    if (t->count == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->ops = fl_realloc(t->ops, t->cap * sizeof(*t->ops));
        t->owned = fl_realloc(t->owned, 3 * t->cap * sizeof(void *));
    }
    t->owned[3 * t->count] = path;
    t->owned[3 * t->count + 1] = data;
    t->owned[3 * t->count + 2] = extra;
    return &t->ops[t->count++];
}

void fl_zk_txn_create(fl_zk_txn_t *t, char *path, char *data, size_t len) {
    zoo_op_t *op = fl_zk_txn_add(t, path, data, NULL);
    zoo_create_op_init(op, path, data, data ? (int)len : -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT,
                       NULL, 0);
}

void fl_zk_txn_create_sequential(fl_zk_txn_t *t, char *path, char *data, size_t len) {
    zoo_op_t *op = fl_zk_txn_add(t, path, data, NULL);
    zoo_create_op_init(op, path, data, data ? (int)len : -1, &ZOO_OPEN_ACL_UNSAFE,
                       ZOO_PERSISTENT_SEQUENTIAL, NULL, 0);
}

void fl_zk_txn_delete(fl_zk_txn_t *t, char *path, int version) {
    zoo_delete_op_init(fl_zk_txn_add(t, path, NULL, NULL), path, version);
}

void fl_zk_txn_set(fl_zk_txn_t *t, char *path, char *data, size_t len, int version) {
    /* the library writes the new stat through this pointer */
    struct Stat *st = fl_calloc(1, sizeof(*st));
    zoo_op_t *op = fl_zk_txn_add(t, path, data, st);
    zoo_set_op_init(op, path, data, (int)len, version, st);
}

void fl_zk_txn_check(fl_zk_txn_t *t, char *path, int version) {
    zoo_check_op_init(fl_zk_txn_add(t, path, NULL, NULL), path, version);
}

int fl_zk_txn_delete_tree(fl_zk_txn_t *t, fl_zk_conn_t *c, const char *path, fl_error_t *err) {
    struct String_vector kids;
    bool missing;
    int rc = fl_zk_children(c, path, &kids, &missing, err);
    if (rc) return rc;
    if (missing) return 0; /* already gone */
    for (int32_t i = 0; i < kids.count && !rc; i++) {
        size_t n = strlen(path) + strlen(kids.data[i]) + 2;
        char *kid = fl_malloc(n);
        snprintf(kid, n, "%s/%s", path, kids.data[i]);
        rc = fl_zk_txn_delete_tree(t, c, kid, err);
        fl_free(kid);
    }
    deallocate_String_vector(&kids);
    if (rc) return rc;
    if (t->count >= FL_ZK_TXN_OPS_MAX)
        return fl_err_set(err, FLUSS_ERR__STATE, "ZooKeeper: more than %d znodes in one delete",
                          FL_ZK_TXN_OPS_MAX);
    fl_zk_txn_delete(t, fl_strdup(path), -1);
    return 0;
}

int fl_zk_txn_run(fl_zk_conn_t *c, fl_zk_txn_t *t, size_t *failed) {
    *failed = SIZE_MAX;
    if (t->count == 0) return ZOK;
    zoo_op_result_t *res = fl_calloc(t->count, sizeof(*res));
    int zrc = zoo_multi(c->zh, (int)t->count, t->ops, res);
    if (zrc != ZOK) {
        /* the op that failed carries its own code; the others say ZOK or
         * ZRUNTIMEINCONSISTENCY (rolled back / not run) */
        for (size_t i = 0; i < t->count; i++) {
            if (res[i].err != ZOK && res[i].err != ZRUNTIMEINCONSISTENCY) {
                *failed = i;
                zrc = res[i].err;
                break;
            }
        }
    }
    fl_free(res);
    return zrc;
}

const struct Stat *fl_zk_txn_stat(const fl_zk_txn_t *t, size_t i) {
    assert(i < t->count);
    return t->owned[3 * i + 2];
}
