/*
 * server_authz.c — published ACL sets and the checks (server_authz.h).
 */
#include "server_authz.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "common_alloc.h"
#include "common_log.h"
#include "server_node.h"

struct fl_authz_view {
    atomic_int refs;
    fl_acl_set_t *set;
};

struct fl_authz {
    fl_acl_super_users_t *super_users;
    pthread_mutex_t mu; /* guards cur (the pointer, not the set) */
    fl_authz_view_t *cur;
};

static fl_authz_view_t *fl_authz_view_new(fl_acl_set_t *set) {
    fl_authz_view_t *v = fl_calloc(1, sizeof(*v));
    atomic_init(&v->refs, 1);
    v->set = set;
    return v;
}

int fl_authz_new(const fl_config_t *cfg, fl_authz_t **out, fl_error_t *err) {
    *out = NULL;
    const char *enabled = fl_config_string(cfg, "authorizer.enabled", "false");
    if (strcmp(enabled, "true") != 0) {
        if (strcmp(enabled, "false") != 0)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "authorizer.enabled must be true or false, not '%s'", enabled);
        return 0;
    }
    const char *type = fl_config_string(cfg, "authorizer.type", "default");
    if (strcmp(type, "default") != 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "authorizer.type '%s': only the default authorizer exists", type);
    fl_authz_t *a = fl_calloc(1, sizeof(*a));
    fl_error_t perr;
    fl_err_clear(&perr);
    if (fl_acl_super_users_parse(fl_config_string(cfg, "super.users", ""), &a->super_users,
                                 &perr)) {
        fl_free(a);
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "super.users: %s", perr.msg);
    }
    pthread_mutex_init(&a->mu, NULL);
    a->cur = fl_authz_view_new(fl_acl_set_new());
    *out = a;
    return 0;
}

void fl_authz_release(fl_authz_view_t *v) {
    if (v && atomic_fetch_sub(&v->refs, 1) == 1) {
        fl_acl_set_free(v->set);
        fl_free(v);
    }
}

void fl_authz_free(fl_authz_t *a) {
    if (!a) return;
    fl_authz_release(a->cur);
    fl_acl_super_users_free(a->super_users);
    pthread_mutex_destroy(&a->mu);
    fl_free(a);
}

void fl_authz_publish(fl_authz_t *a, fl_acl_set_t *set) {
    if (!a) {
        fl_acl_set_free(set);
        return;
    }
    fl_authz_view_t *v = fl_authz_view_new(set), *old;
    pthread_mutex_lock(&a->mu);
    old = a->cur;
    a->cur = v;
    pthread_mutex_unlock(&a->mu);
    fl_authz_release(old);
}

fl_authz_view_t *fl_authz_acquire(fl_authz_t *a) {
    if (!a) return NULL;
    pthread_mutex_lock(&a->mu);
    fl_authz_view_t *v = a->cur;
    atomic_fetch_add(&v->refs, 1);
    pthread_mutex_unlock(&a->mu);
    return v;
}

const fl_acl_set_t *fl_authz_view_set(const fl_authz_view_t *v) { return v ? v->set : NULL; }

bool fl_authz_allowed_in(fl_authz_t *a, const fl_authz_view_t *v, const fl_req_ctx_t *ctx,
                         int32_t op, int32_t type, const char *name) {
    if (!a || ctx->who.trusted) return true;
    fl_acl_principal_t p = {.type = ctx->who.type, .name = ctx->who.name};
    return fl_acl_authorized(v->set, a->super_users, &p, ctx->who.host, op, type, name);
}

bool fl_authz_allowed(fl_authz_t *a, const fl_req_ctx_t *ctx, int32_t op, int32_t type,
                      const char *name) {
    if (!a || ctx->who.trusted) return true;
    fl_authz_view_t *v = fl_authz_acquire(a);
    bool ok = fl_authz_allowed_in(a, v, ctx, op, type, name);
    fl_authz_release(v);
    return ok;
}

int fl_authz_require(fl_authz_t *a, const fl_req_ctx_t *ctx, int32_t op, int32_t type,
                     const char *name, fl_error_t *err) {
    if (fl_authz_allowed(a, ctx, op, type, name)) return 0;
    fl_acl_principal_t p = {.type = ctx->who.type, .name = ctx->who.name};
    char msg[FL_ERROR_MSG_MAX];
    fl_acl_denial_message(msg, sizeof(msg), &p, op, type, name);
    FL_DEBUG("authz: %s", msg);
    return fl_err_set(err, FLUSS_ERR_AUTHORIZATION_EXCEPTION, "%s", msg);
}

static void fl_authz_table_name(char *buf, size_t cap, const char *db, const char *table) {
    snprintf(buf, cap, "%s.%s", db, table);
}

int fl_authz_require_table(fl_authz_t *a, const fl_req_ctx_t *ctx, int32_t op, const char *db,
                           const char *table, fl_error_t *err) {
    if (!a || ctx->who.trusted) return 0;
    char name[1024];
    fl_authz_table_name(name, sizeof(name), db, table);
    return fl_authz_require(a, ctx, op, FL_ACL_RES_TABLE, name, err);
}

bool fl_authz_allowed_table(fl_authz_t *a, const fl_req_ctx_t *ctx, int32_t op, const char *db,
                            const char *table) {
    if (!a || ctx->who.trusted) return true;
    char name[1024];
    fl_authz_table_name(name, sizeof(name), db, table);
    return fl_authz_allowed(a, ctx, op, FL_ACL_RES_TABLE, name);
}
