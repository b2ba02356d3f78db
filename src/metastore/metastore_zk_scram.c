/*
 * metastore_zk_scram.c — the SCRAM credentials of the ZooKeeper metastore
 * (fluss-c's own: Fluss has no SCRAM, so the layout is ours): one znode per
 * user and mechanism,
 *
 *   /fluss-scram/<mechanism>/<user>   the credential text, as given
 *
 * with mechanism SCRAM-SHA-256 or SCRAM-SHA-512 and the user name as it
 * is. Loaded with the rest of the store (fl_msz_reload); no change
 * notification, since only the active coordinator reads them.
 *
 * A user name must be one znode name ZooKeeper takes: besides '/', "."
 * and "..", its server refuses (PathUtils.validatePath) NUL, C0 and C1
 * controls, U+D800..U+F8FF, U+FFF0..U+FFFF and, since it checks UTF-16
 * units, anything above U+FFFF; those are refused here with a clear error
 * instead of ZooKeeper's "bad arguments".
 *
 * A write reads the znode's version just before and is conditional on it,
 * in one zoo_multi fenced by the coordinator epoch (as the ACLs'): a
 * writer that raced us makes us read again.
 *
 * Thread rule: the store's (one thread at a time, metastore.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "metastore_zk_int.h"

/* Attempts of a write that raced another writer. */
#define FL_MSZ_SCRAM_RETRIES 10

static const char *const fl_msz_scram_mechanisms[] = {FL_MS_SCRAM_SHA_256, FL_MS_SCRAM_SHA_512};
#define FL_MSZ_SCRAM_MECHANISM_COUNT \
    (sizeof(fl_msz_scram_mechanisms) / sizeof(fl_msz_scram_mechanisms[0]))

/* Decodes one UTF-8 sequence at s (NUL-terminated); returns its length
 * and the code point in *cp, or 0 when it is not valid UTF-8 (overlong,
 * surrogate, past U+10FFFF, cut short). */
static size_t fl_msz_utf8_next(const unsigned char *s, uint32_t *cp) {
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    size_t n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
    if (n == 0 || s[0] > 0xf4) return 0;
    uint32_t v = s[0] & (0x7f >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0; /* also stops at the NUL */
        v = v << 6 | (s[i] & 0x3f);
    }
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    *cp = v;
    return n;
}

/* What ZooKeeper's server refuses in a znode name (PathUtils.validatePath
 * on UTF-16 units). */
static bool fl_msz_zk_refuses(uint32_t cp) {
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0xd800 && cp <= 0xf8ff) ||
           cp >= 0xfff0;
}

/* 0 when user is a name this store keeps; else what is wrong, with `code`
 * (INVALID_ARG for a put, CORRUPT for a znode found at load). */
static int fl_msz_scram_user_check(const char *user, int code, fl_error_t *err) {
    if (!user || !user[0]) return fl_err_set(err, code, "SCRAM user name is empty");
    size_t n = strlen(user);
    if (n > FL_MS_SCRAM_USER_MAX)
        return fl_err_set(err, code, "SCRAM user name of %zu bytes: at most %d", n,
                          FL_MS_SCRAM_USER_MAX);
    if (strchr(user, '/'))
        return fl_err_set(err, code,
                          "SCRAM user name \"%.100s\" contains '/': it cannot be one znode name "
                          "under " FL_ZK_SCRAM,
                          user);
    if (strcmp(user, ".") == 0 || strcmp(user, "..") == 0)
        return fl_err_set(err, code, "SCRAM user name \"%s\" cannot be a znode name", user);
    for (const unsigned char *p = (const unsigned char *)user; *p;) {
        uint32_t cp;
        size_t len = fl_msz_utf8_next(p, &cp);
        if (len == 0)
            return fl_err_set(err, code, "SCRAM user name is not UTF-8 (byte %zu)",
                              (size_t)(p - (const unsigned char *)user));
        if (fl_msz_zk_refuses(cp))
            return fl_err_set(err, code,
                              "SCRAM user name holds U+%04X at byte %zu: a control character "
                              "or one ZooKeeper does not take in a znode name",
                              (unsigned)cp, (size_t)(p - (const unsigned char *)user));
        p += len;
    }
    return 0;
}

/* ---- loading ---- */

typedef struct fl_msz_scram_list {
    fl_ms_scram_node_t *items;
    size_t count, cap;
} fl_msz_scram_list_t;

/* Appends /fluss-scram/<mechanism>/<user> (gone meanwhile: skipped). */
static int fl_msz_scram_load_one(fl_ms_zk_t *m, const char *mechanism, const char *user,
                                 fl_msz_scram_list_t *l, fl_buf_t *buf, fl_error_t *err) {
    /* a znode someone else made: refuse, never silently drop a credential */
    int rc = fl_msz_scram_user_check(user, FLUSS_ERR__CORRUPT, err);
    if (rc) {
        fl_err_prefix(err, "%s" FL_ZK_SCRAM "/%s: ", m->conn->root, mechanism);
        return rc;
    }
    char *path = fl_zk_path(m->conn, FL_ZK_SCRAM "/%s/%s", mechanism, user);
    bool gone;
    rc = fl_zk_get(m->conn, path, buf, NULL, &gone, err);
    if (!rc && !gone && memchr(buf->data, 0, buf->len))
        rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "%s: the SCRAM credential holds a NUL byte",
                        path);
    if (!rc && !gone && buf->len > FL_MS_SCRAM_CREDENTIAL_MAX)
        rc = fl_err_set(err, FLUSS_ERR__CORRUPT,
                        "%s: SCRAM credential of %zu bytes, at most %u", path, buf->len,
                        FL_MS_SCRAM_CREDENTIAL_MAX);
    fl_free(path);
    if (rc || gone) return rc;
    if (l->count == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->items = fl_realloc(l->items, l->cap * sizeof(*l->items));
    }
    char *cred = fl_malloc(buf->len + 1);
    memcpy(cred, buf->data, buf->len);
    cred[buf->len] = '\0';
    l->items[l->count++] = (fl_ms_scram_node_t){
        .user = fl_strdup(user), .mechanism = fl_strdup(mechanism), .credential = cred};
    return 0;
}

int fl_msz_scram_load(fl_ms_zk_t *m, fl_ms_scram_node_t **out, size_t *count,
                      fl_error_t *err) {
    fl_msz_scram_list_t l = {0};
    fl_buf_t buf;
    fl_buf_init(&buf);
    int rc = 0;
    /* other children of /fluss-scram (no such mechanism) are not ours to read */
    for (size_t k = 0; k < FL_MSZ_SCRAM_MECHANISM_COUNT && !rc; k++) {
        char *dir = fl_zk_path(m->conn, FL_ZK_SCRAM "/%s", fl_msz_scram_mechanisms[k]);
        struct String_vector kids;
        bool missing;
        rc = fl_zk_children(m->conn, dir, &kids, &missing, err);
        fl_free(dir);
        if (rc || missing) continue;
        for (int32_t i = 0; i < kids.count && !rc; i++)
            rc = fl_msz_scram_load_one(m, fl_msz_scram_mechanisms[k], kids.data[i], &l, &buf,
                                       err);
        deallocate_String_vector(&kids);
    }
    fl_buf_free(&buf);
    size_t dup; /* one znode per (mechanism, user): never two */
    if (!rc && !fl_ms_scram_sort(l.items, l.count, &dup))
        rc = fl_err_set(err, FLUSS_ERR__STATE, "SCRAM user %.100s listed twice", l.items[dup].user);
    if (rc) {
        fl_ms_scram_free(l.items, l.count);
        return rc;
    }
    *out = l.items;
    *count = l.count;
    return 0;
}

/* ---- the cache ---- */

size_t fl_msz_scram_count(fl_metastore_t *ms) { return FL_MSZ(ms)->scram_count; }

const fl_ms_scram_node_t *fl_msz_scram_at(fl_metastore_t *ms, size_t i) {
    return i < FL_MSZ(ms)->scram_count ? &FL_MSZ(ms)->scrams[i] : NULL;
}

/* ---- writing ---- */

/* One attempt: read the znode's version, then one fenced multi with the
 * conditional write. 0 when written (or nothing to delete); *raced when
 * the znode changed between our read and write (then the error is only
 * a note). */
static int fl_msz_scram_try(fl_ms_zk_t *m, const char *mechanism, const char *path,
                            const char *credential, bool *raced, fl_error_t *err) {
    *raced = false;
    fl_zk_txn_t x;
    int rc = fl_msz_begin(m, &x, err);
    if (rc) return rc;
    struct Stat st;
    int zrc = zoo_exists(m->conn->zh, path, 0, &st);
    if ((zrc != ZOK && zrc != ZNONODE) || (!credential && zrc == ZNONODE)) {
        fl_zk_txn_free(&x);
        /* a missing znode to delete: nothing changed, nothing to write */
        return zrc == ZNONODE ? 0 : fl_zk_err(err, zrc, "exists", path);
    }
    if (credential && zrc == ZNONODE) { /* parents first, outside the multi, empty */
        char *dir = fl_zk_path(m->conn, FL_ZK_SCRAM "/%s", mechanism);
        rc = fl_zk_ensure(m->conn, dir, err);
        fl_free(dir);
        if (rc) {
            fl_zk_txn_free(&x);
            return rc;
        }
    }
    size_t len = credential ? strlen(credential) : 0;
    if (!credential) fl_zk_txn_delete(&x, fl_strdup(path), st.version);
    else if (zrc == ZOK)
        fl_zk_txn_set(&x, fl_strdup(path), fl_strdup(credential), len, st.version);
    else fl_zk_txn_create(&x, fl_strdup(path), fl_strdup(credential), len);
    size_t failed;
    rc = fl_msz_commit(m, &x, &zrc, &failed, err);
    fl_zk_txn_free(&x);
    if (rc != FL_ZK_TXN_OP_FAILED) return rc;
    /* the node, or its parent someone removed meanwhile: read again */
    *raced = zrc == ZBADVERSION || zrc == ZNODEEXISTS || zrc == ZNONODE;
    return fl_zk_err(NULL, zrc, "write", path); /* err names the op that failed */
}

int fl_msz_scram_put(fl_metastore_t *ms, const char *user, const char *mechanism,
                     const char *credential, fl_error_t *err) {
    fl_ms_zk_t *m = FL_MSZ(ms);
    if (!fl_ms_scram_mechanism_ok(mechanism))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "SCRAM mechanism \"%.64s\" is neither %s nor %s",
                          mechanism ? mechanism : "", FL_MS_SCRAM_SHA_256, FL_MS_SCRAM_SHA_512);
    int rc = fl_msz_scram_user_check(user, FLUSS_ERR__INVALID_ARG, err);
    if (rc) return rc;
    if (credential && strlen(credential) > FL_MS_SCRAM_CREDENTIAL_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "SCRAM credential of %s for %s is %zu bytes; at most %u", mechanism,
                          user, strlen(credential), FL_MS_SCRAM_CREDENTIAL_MAX);
    char *path = fl_zk_path(m->conn, FL_ZK_SCRAM "/%s/%s", mechanism, user);
    bool raced = true;
    for (int attempt = 0; attempt < FL_MSZ_SCRAM_RETRIES && raced; attempt++)
        rc = fl_msz_scram_try(m, mechanism, path, credential, &raced, err);
    if (!rc)
        fl_ms_scram_set(&m->scrams, &m->scram_count, &m->scram_cap, user, mechanism, credential);
    else if (raced)
        rc = fl_err_set(err, FLUSS_ERR__STATE,
                        "Failed to update the %s credential of %s after %d tries: other "
                        "writers changed %s meanwhile",
                        mechanism, user, FL_MSZ_SCRAM_RETRIES, path);
    fl_free(path);
    return rc;
}
