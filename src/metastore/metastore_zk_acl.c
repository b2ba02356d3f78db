/*
 * metastore_zk_acl.c — the ACLs of the ZooKeeper metastore, where Fluss
 * 0.9.1's authorizer keeps them (ZkData.ResourceAclNode): one znode per
 * resource, /fluss-acls/<TYPE>/<name> with TYPE CLUSTER, DATABASE or
 * TABLE and the resource name as it is (fluss-cluster, db, db.t, *),
 * holding the authorizer's JSON document, which this store does not read.
 *
 * Every change also creates the PERSISTENT_SEQUENTIAL
 * /fluss-acl-changes/acl_changes_<10 digits> holding "<TYPE>:<name>"
 * (ZkData.AclChangeNotificationNode): Fluss servers watching the same
 * ZooKeeper re-read that resource when they see it. The change and its
 * notification go in one fenced zoo_multi, so neither lands without the
 * other (Fluss writes them one after the other). The notifications are
 * purged by the servers that watch them (after
 * acl.notification.expiration-time), not here.
 *
 * The znode's version is read just before the write and the write is
 * conditional on it, as Fluss's create / setData().withVersion /
 * delete().withVersion are: a writer that raced us makes us read again.
 *
 * Thread rule: the store's (one thread at a time, metastore.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "metastore_zk_int.h"

/* Fluss's ResourceType codes of the types that have ACL znodes. */
#define FL_MSZ_ACL_TYPE_FIRST 2 /* CLUSTER */
#define FL_MSZ_ACL_TYPE_LAST 4  /* TABLE */
/* Longest resource name (a znode name; Fluss's names are far shorter). */
#define FL_MSZ_ACL_NAME_MAX 1024
/* Largest document: one zoo_multi must stay under ZooKeeper's default
 * jute.maxbuffer (1 MiB), or the server drops the connection. */
#define FL_MSZ_ACL_DOC_MAX (1000u * 1024)
/* Attempts of a write that raced another writer (Fluss's MAX_UPDATE_RETRIES). */
#define FL_MSZ_ACL_RETRIES 10

static const char *fl_msz_acl_type_name(int32_t type) {
    switch (type) {
    case 2: return "CLUSTER";
    case 3: return "DATABASE";
    case 4: return "TABLE";
    default: return NULL;
    }
}

/* A name Fluss would put in the path as it is, and ZooKeeper takes as one
 * znode name. */
static int fl_msz_acl_name_check(const char *name, fl_error_t *err) {
    if (!name || !name[0])
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "ACL resource name is empty");
    size_t n = strlen(name);
    if (n > FL_MSZ_ACL_NAME_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "ACL resource name of %zu bytes: at most %d fit a znode name", n,
                          FL_MSZ_ACL_NAME_MAX);
    if (strchr(name, '/'))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "ACL resource name \"%s\" contains '/': it cannot be one znode "
                          "name under /fluss-acls",
                          name);
    bool control = false;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        control |= *p < 0x20 || *p == 0x7f;
    if (control || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "ACL resource name \"%s\" cannot be a znode name", name);
    return 0;
}

static int fl_msz_acl_cmp(int32_t type, const char *name, const fl_ms_acl_node_t *a) {
    if (type != a->resource_type) return type < a->resource_type ? -1 : 1;
    return strcmp(name, a->resource_name);
}

void fl_msz_acls_free(fl_ms_acl_node_t *acls, size_t count) {
    for (size_t i = 0; i < count; i++) {
        fl_free(acls[i].resource_name);
        fl_free(acls[i].json);
    }
    fl_free(acls);
}

/* ---- loading ---- */

typedef struct fl_msz_acl_list {
    fl_ms_acl_node_t *items;
    size_t count, cap;
} fl_msz_acl_list_t;

/* Appends /fluss-acls/<TYPE>/<name> (gone meanwhile: skipped). */
static int fl_msz_acl_load_one(fl_ms_zk_t *m, int32_t type, const char *name,
                               fl_msz_acl_list_t *l, fl_buf_t *buf, fl_error_t *err) {
    const char *tname = fl_msz_acl_type_name(type);
    /* a znode someone else made: never silently drop an ACL */
    if (strlen(name) > FL_MSZ_ACL_NAME_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "%s" FL_ZK_ACLS "/%s/%.64s...: name too long",
                          m->conn->root, tname, name);
    char *path = fl_zk_path(m->conn, FL_ZK_ACLS "/%s/%s", tname, name);
    bool gone;
    int rc = fl_zk_get(m->conn, path, buf, NULL, &gone, err);
    if (!rc && !gone && memchr(buf->data, 0, buf->len))
        rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "%s: the ACL document holds a NUL byte", path);
    fl_free(path);
    if (rc || gone) return rc;
    if (l->count == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->items = fl_realloc(l->items, l->cap * sizeof(*l->items));
    }
    char *doc = fl_malloc(buf->len + 1);
    memcpy(doc, buf->data, buf->len);
    doc[buf->len] = '\0';
    l->items[l->count++] = (fl_ms_acl_node_t){
        .resource_type = type, .resource_name = fl_strdup(name), .json = doc};
    return 0;
}

int fl_msz_acls_load(fl_ms_zk_t *m, fl_ms_acl_node_t **out, size_t *count, fl_error_t *err) {
    fl_msz_acl_list_t l = {0};
    fl_buf_t buf;
    fl_buf_init(&buf);
    int rc = 0;
    /* types in code order, names sorted: the order the cache keeps */
    for (int32_t type = FL_MSZ_ACL_TYPE_FIRST; type <= FL_MSZ_ACL_TYPE_LAST && !rc; type++) {
        char *dir = fl_zk_path(m->conn, FL_ZK_ACLS "/%s", fl_msz_acl_type_name(type));
        struct String_vector kids;
        bool missing;
        rc = fl_zk_children(m->conn, dir, &kids, &missing, err);
        fl_free(dir);
        if (rc || missing) continue;
        for (int32_t i = 0; i < kids.count && !rc; i++)
            rc = fl_msz_acl_load_one(m, type, kids.data[i], &l, &buf, err);
        deallocate_String_vector(&kids);
    }
    fl_buf_free(&buf);
    if (rc) {
        fl_msz_acls_free(l.items, l.count);
        return rc;
    }
    *out = l.items;
    *count = l.count;
    return 0;
}

/* ---- the cache ---- */

size_t fl_msz_acl_count(fl_metastore_t *ms) { return FL_MSZ(ms)->acl_count; }

const fl_ms_acl_node_t *fl_msz_acl_at(fl_metastore_t *ms, size_t i) {
    return i < FL_MSZ(ms)->acl_count ? &FL_MSZ(ms)->acls[i] : NULL;
}

/* What ZooKeeper now holds for (type, name): json, or nothing when NULL. */
static void fl_msz_acl_cache_set(fl_ms_zk_t *m, int32_t type, const char *name,
                                 const char *json) {
    size_t at = 0;
    while (at < m->acl_count && fl_msz_acl_cmp(type, name, &m->acls[at]) > 0) at++;
    bool found = at < m->acl_count && fl_msz_acl_cmp(type, name, &m->acls[at]) == 0;
    if (!json) {
        if (!found) return;
        fl_free(m->acls[at].resource_name);
        fl_free(m->acls[at].json);
        memmove(&m->acls[at], &m->acls[at + 1], (m->acl_count - at - 1) * sizeof(*m->acls));
        m->acl_count--;
    } else if (found) {
        fl_free(m->acls[at].json);
        m->acls[at].json = fl_strdup(json);
    } else {
        if (m->acl_count == m->acl_cap) {
            m->acl_cap = m->acl_cap ? m->acl_cap * 2 : 8;
            m->acls = fl_realloc(m->acls, m->acl_cap * sizeof(*m->acls));
        }
        memmove(&m->acls[at + 1], &m->acls[at], (m->acl_count - at) * sizeof(*m->acls));
        m->acls[at] = (fl_ms_acl_node_t){
            .resource_type = type, .resource_name = fl_strdup(name), .json = fl_strdup(json)};
        m->acl_count++;
    }
}

/* ---- writing ---- */

/* One attempt: read the znode's version, then one fenced multi with the
 * conditional write and the change notification. 0 when written (or
 * nothing to delete); *raced when the znode changed between our read and
 * write (then the error is only a note). */
static int fl_msz_acl_try(fl_ms_zk_t *m, const char *tname, const char *name, const char *path,
                          const char *json, bool *raced, fl_error_t *err) {
    *raced = false;
    fl_zk_txn_t x;
    int rc = fl_msz_begin(m, &x, err);
    if (rc) return rc;
    struct Stat st;
    int zrc = zoo_exists(m->conn->zh, path, 0, &st);
    if ((zrc != ZOK && zrc != ZNONODE) || (!json && zrc == ZNONODE)) {
        fl_zk_txn_free(&x);
        /* a missing znode to delete: nothing changed, nothing to write */
        return zrc == ZNONODE ? 0 : fl_zk_err(err, zrc, "exists", path);
    }
    /* parents first, outside the multi (empty znodes, as open makes its
     * base ones): Fluss's creatingParentsIfNeeded */
    char *dir = fl_zk_path(m->conn, FL_ZK_ACLS "/%s", tname);
    char *changes = fl_zk_path(m->conn, FL_ZK_ACL_CHANGES);
    rc = json && zrc == ZNONODE ? fl_zk_ensure(m->conn, dir, err) : 0;
    if (!rc) rc = fl_zk_ensure(m->conn, changes, err);
    fl_free(dir);
    fl_free(changes);
    if (rc) {
        fl_zk_txn_free(&x);
        return rc;
    }
    size_t len = json ? strlen(json) : 0;
    if (!json) fl_zk_txn_delete(&x, fl_strdup(path), st.version);
    else if (zrc == ZOK) fl_zk_txn_set(&x, fl_strdup(path), fl_strdup(json), len, st.version);
    else fl_zk_txn_create(&x, fl_strdup(path), fl_strdup(json), len);
    size_t note_len = strlen(tname) + 1 + strlen(name);
    char *note = fl_malloc(note_len + 1);
    snprintf(note, note_len + 1, "%s:%s", tname, name);
    fl_zk_txn_create_sequential(&x, fl_zk_path(m->conn, FL_ZK_ACL_CHANGE_PREFIX), note,
                                note_len);
    size_t failed;
    rc = fl_msz_commit(m, &x, &zrc, &failed, err);
    fl_zk_txn_free(&x);
    if (rc != FL_ZK_TXN_OP_FAILED) return rc;
    /* the node, or a parent someone removed meanwhile: read again */
    *raced = zrc == ZBADVERSION || zrc == ZNODEEXISTS || zrc == ZNONODE;
    return fl_zk_err(NULL, zrc, "write", path); /* err names the op that failed */
}

int fl_msz_acl_put(fl_metastore_t *ms, int32_t type, const char *name, const char *json,
                   fl_error_t *err) {
    fl_ms_zk_t *m = FL_MSZ(ms);
    const char *tname = fl_msz_acl_type_name(type);
    if (!tname)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "ACL resource type %d has no znode (2 CLUSTER, 3 DATABASE, 4 TABLE)",
                          (int)type);
    int rc = fl_msz_acl_name_check(name, err);
    if (rc) return rc;
    if (json && strlen(json) > FL_MSZ_ACL_DOC_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "ACL document of %s %s is %zu bytes; ZooKeeper takes at most %u",
                          tname, name, strlen(json), FL_MSZ_ACL_DOC_MAX);
    char *path = fl_zk_path(m->conn, FL_ZK_ACLS "/%s/%s", tname, name);
    bool raced = true;
    for (int attempt = 0; attempt < FL_MSZ_ACL_RETRIES && raced; attempt++)
        rc = fl_msz_acl_try(m, tname, name, path, json, &raced, err);
    if (!rc) fl_msz_acl_cache_set(m, type, name, json);
    else if (raced)
        rc = fl_err_set(err, FLUSS_ERR__STATE,
                        "Failed to update ACLs for %s:%s after %d tries: other writers "
                        "changed %s meanwhile",
                        tname, name, FL_MSZ_ACL_RETRIES, path);
    fl_free(path);
    return rc;
}
