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
 * delete().withVersion are: a writer that raced us makes us read again
 * (fl_msz_node_put, shared with the SCRAM credentials).
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

/* ---- loading ---- */

/* What a load gathers, one type at a time. */
typedef struct fl_msz_acl_load {
    fl_ms_acl_node_t *items;
    size_t count, cap;
    fl_buf_t buf;
    int32_t type;
} fl_msz_acl_load_t;

/* Appends /fluss-acls/<TYPE>/<name> (gone meanwhile: skipped). */
static int fl_msz_acl_load_one(fl_ms_zk_t *m, const char *name, void *ctx, fl_error_t *err) {
    fl_msz_acl_load_t *l = ctx;
    const char *tname = fl_msz_acl_type_name(l->type);
    /* a znode someone else made: never silently drop an ACL */
    if (strlen(name) > FL_MSZ_ACL_NAME_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "%s" FL_ZK_ACLS "/%s/%.64s...: name too long",
                          m->conn->root, tname, name);
    char *path = fl_zk_path(m->conn, FL_ZK_ACLS "/%s/%s", tname, name);
    char *doc;
    int rc = fl_msz_node_text(m, path, "ACL document", &l->buf, &doc, err);
    fl_free(path);
    if (rc || !doc) return rc;
    if (l->count == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->items = fl_realloc(l->items, l->cap * sizeof(*l->items));
    }
    l->items[l->count++] = (fl_ms_acl_node_t){
        .resource_type = l->type, .resource_name = fl_strdup(name), .json = doc};
    return 0;
}

int fl_msz_acls_load(fl_ms_zk_t *m, fl_ms_acl_node_t **out, size_t *count, fl_error_t *err) {
    fl_msz_acl_load_t l = {0};
    fl_buf_init(&l.buf);
    int rc = 0;
    /* types in code order, names sorted: the order the cache keeps */
    for (l.type = FL_MSZ_ACL_TYPE_FIRST; l.type <= FL_MSZ_ACL_TYPE_LAST && !rc; l.type++) {
        char *dir = fl_zk_path(m->conn, FL_ZK_ACLS "/%s", fl_msz_acl_type_name(l.type));
        rc = fl_msz_node_children(m, dir, fl_msz_acl_load_one, &l, err);
        fl_free(dir);
    }
    fl_buf_free(&l.buf);
    if (rc) {
        fl_ms_acl_free(l.items, l.count);
        return rc;
    }
    *out = l.items;
    *count = l.count;
    return 0;
}

/* ---- writing ---- */

/* The change notification "<TYPE>:<name>", in the write's multi. */
typedef struct fl_msz_acl_note {
    const char *tname, *name;
} fl_msz_acl_note_t;

static int fl_msz_acl_notify(fl_ms_zk_t *m, fl_zk_txn_t *x, const void *ctx, fl_error_t *err) {
    const fl_msz_acl_note_t *n = ctx;
    char *changes = fl_zk_path(m->conn, FL_ZK_ACL_CHANGES);
    int rc = fl_zk_ensure(m->conn, changes, err);
    fl_free(changes);
    if (rc) return rc;
    size_t note_len = strlen(n->tname) + 1 + strlen(n->name);
    char *note = fl_malloc(note_len + 1);
    snprintf(note, note_len + 1, "%s:%s", n->tname, n->name);
    fl_zk_txn_create_sequential(x, fl_zk_path(m->conn, FL_ZK_ACL_CHANGE_PREFIX), note, note_len);
    return 0;
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
    fl_msz_acl_note_t note = {.tname = tname, .name = name};
    rc = fl_msz_node_put(m, path, json, fl_msz_acl_notify, &note, err, "ACLs for %s:%s", tname,
                         name);
    if (!rc) fl_ms_acl_set(&m->acls, &m->acl_count, &m->acl_cap, type, name, json);
    fl_free(path);
    return rc;
}
