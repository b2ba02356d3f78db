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
 * in one zoo_multi fenced by the coordinator epoch (fl_msz_node_put, as
 * the ACLs'): a writer that raced us makes us read again.
 *
 * Thread rule: the store's (one thread at a time, metastore.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "metastore_zk_int.h"

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

/* What a load gathers, one mechanism at a time. */
typedef struct fl_msz_scram_load {
    fl_ms_scram_node_t *items;
    size_t count, cap;
    fl_buf_t buf;
    const char *mechanism;
} fl_msz_scram_load_t;

/* Appends /fluss-scram/<mechanism>/<user> (gone meanwhile: skipped). */
static int fl_msz_scram_load_one(fl_ms_zk_t *m, const char *user, void *ctx, fl_error_t *err) {
    fl_msz_scram_load_t *l = ctx;
    /* a znode someone else made: refuse, never silently drop a credential */
    int rc = fl_msz_scram_user_check(user, FLUSS_ERR__CORRUPT, err);
    if (rc) {
        fl_err_prefix(err, "%s" FL_ZK_SCRAM "/%s: ", m->conn->root, l->mechanism);
        return rc;
    }
    char *path = fl_zk_path(m->conn, FL_ZK_SCRAM "/%s/%s", l->mechanism, user);
    char *cred;
    rc = fl_msz_node_text(m, path, "SCRAM credential", &l->buf, &cred, err);
    if (!rc && cred && l->buf.len > FL_MS_SCRAM_CREDENTIAL_MAX) {
        rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "%s: SCRAM credential of %zu bytes, at most %u",
                        path, l->buf.len, FL_MS_SCRAM_CREDENTIAL_MAX);
        fl_free(cred);
    }
    fl_free(path);
    if (rc) return rc;
    if (!cred) return 0;
    if (l->count == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->items = fl_realloc(l->items, l->cap * sizeof(*l->items));
    }
    l->items[l->count++] = (fl_ms_scram_node_t){
        .user = fl_strdup(user), .mechanism = fl_strdup(l->mechanism), .credential = cred};
    return 0;
}

int fl_msz_scram_load(fl_ms_zk_t *m, fl_ms_scram_node_t **out, size_t *count,
                      fl_error_t *err) {
    fl_msz_scram_load_t l = {0};
    fl_buf_init(&l.buf);
    int rc = 0;
    /* other children of /fluss-scram (no such mechanism) are not ours to read */
    for (size_t k = 0; k < FL_MSZ_SCRAM_MECHANISM_COUNT && !rc; k++) {
        l.mechanism = fl_msz_scram_mechanisms[k];
        char *dir = fl_zk_path(m->conn, FL_ZK_SCRAM "/%s", l.mechanism);
        rc = fl_msz_node_children(m, dir, fl_msz_scram_load_one, &l, err);
        fl_free(dir);
    }
    fl_buf_free(&l.buf);
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

/* ---- writing ---- */

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
    rc = fl_msz_node_put(m, path, credential, NULL, NULL, err, "the %s credential of %s",
                         mechanism, user);
    if (!rc)
        fl_ms_scram_set(&m->scrams, &m->scram_count, &m->scram_cap, user, mechanism, credential);
    fl_free(path);
    return rc;
}
