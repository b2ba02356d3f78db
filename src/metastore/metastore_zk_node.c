/*
 * metastore_zk_node.c — one znode of opaque text written the way Fluss's
 * ZooKeeperClient writes an ACL node (create / setData().withVersion /
 * delete().withVersion, up to MAX_UPDATE_RETRIES): the version is read
 * just before the write, and the write is conditional on it, in one
 * zoo_multi fenced by the coordinator epoch, so a writer that raced us
 * makes us read again. The ACLs (metastore_zk_acl.c, which adds its change
 * notification to the multi) and the SCRAM credentials
 * (metastore_zk_scram.c) are written through it, and read back with
 * fl_msz_node_children and fl_msz_node_text.
 *
 * Thread rule: the store's (one thread at a time, metastore.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common_alloc.h"
#include "metastore_zk_int.h"

/* One attempt: read the znode's version, then one fenced multi with the
 * conditional write and the extra ops. 0 when written (or nothing to
 * delete); *raced when the znode changed between our read and write
 * (then the error is only a note). */
static int fl_msz_node_try(fl_ms_zk_t *m, const char *path, const char *text,
                           fl_msz_node_extra_fn *extra, const void *ctx, bool *raced,
                           fl_error_t *err) {
    *raced = false;
    fl_zk_txn_t x;
    int rc = fl_msz_begin(m, &x, err);
    if (rc) return rc;
    struct Stat st;
    int zrc = zoo_exists(m->conn->zh, path, 0, &st);
    if ((zrc != ZOK && zrc != ZNONODE) || (!text && zrc == ZNONODE)) {
        fl_zk_txn_free(&x);
        /* a missing znode to delete: nothing changed, nothing to write */
        return zrc == ZNONODE ? 0 : fl_zk_err(err, zrc, "exists", path);
    }
    if (text && zrc == ZNONODE) {
        /* parents first, outside the multi (empty znodes, as open makes its
         * base ones): Fluss's creatingParentsIfNeeded */
        char *dir = fl_strdup(path);
        *strrchr(dir, '/') = '\0';
        rc = fl_zk_ensure(m->conn, dir, err);
        fl_free(dir);
    }
    if (!rc) {
        size_t len = text ? strlen(text) : 0;
        if (!text) fl_zk_txn_delete(&x, fl_strdup(path), st.version);
        else if (zrc == ZOK) fl_zk_txn_set(&x, fl_strdup(path), fl_strdup(text), len, st.version);
        else fl_zk_txn_create(&x, fl_strdup(path), fl_strdup(text), len);
        if (extra) rc = extra(m, &x, ctx, err);
    }
    if (rc) {
        fl_zk_txn_free(&x);
        return rc;
    }
    size_t failed;
    rc = fl_msz_commit(m, &x, &zrc, &failed, err);
    fl_zk_txn_free(&x);
    if (rc != FL_ZK_TXN_OP_FAILED) return rc;
    /* the node, or a parent someone removed meanwhile: read again */
    *raced = zrc == ZBADVERSION || zrc == ZNODEEXISTS || zrc == ZNONODE;
    return fl_zk_err(NULL, zrc, "write", path); /* err names the op that failed */
}

int fl_msz_node_put(fl_ms_zk_t *m, const char *path, const char *text,
                    fl_msz_node_extra_fn *extra, const void *ctx, fl_error_t *err,
                    const char *what_fmt, ...) {
    int rc = 0;
    bool raced = true;
    for (int attempt = 0; attempt < FL_MSZ_NODE_RETRIES && raced; attempt++)
        rc = fl_msz_node_try(m, path, text, extra, ctx, &raced, err);
    if (!rc || !raced) return rc;
    va_list ap;
    va_start(ap, what_fmt);
    int n = vsnprintf(NULL, 0, what_fmt, ap);
    va_end(ap);
    char *what = fl_malloc((size_t)(n > 0 ? n : 0) + 1);
    va_start(ap, what_fmt);
    vsnprintf(what, (size_t)(n > 0 ? n : 0) + 1, what_fmt, ap);
    va_end(ap);
    rc = fl_err_set(err, FLUSS_ERR__STATE,
                    "Failed to update %s after %d tries: other writers changed %s meanwhile",
                    what, FL_MSZ_NODE_RETRIES, path);
    fl_free(what);
    return rc;
}

int fl_msz_node_text(fl_ms_zk_t *m, const char *path, const char *what, fl_buf_t *buf,
                     char **text, fl_error_t *err) {
    *text = NULL;
    bool gone;
    int rc = fl_zk_get(m->conn, path, buf, NULL, &gone, err);
    if (rc || gone) return rc;
    if (memchr(buf->data, 0, buf->len))
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "%s: the %s holds a NUL byte", path, what);
    *text = fl_malloc(buf->len + 1);
    memcpy(*text, buf->data, buf->len);
    (*text)[buf->len] = '\0';
    return 0;
}

int fl_msz_node_children(fl_ms_zk_t *m, const char *dir, fl_msz_node_child_fn *each, void *ctx,
                         fl_error_t *err) {
    struct String_vector kids;
    bool missing;
    int rc = fl_zk_children(m->conn, dir, &kids, &missing, err);
    if (rc || missing) return rc;
    for (int32_t i = 0; i < kids.count && !rc; i++) rc = each(m, kids.data[i], ctx, err);
    deallocate_String_vector(&kids);
    return rc;
}
