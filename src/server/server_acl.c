/*
 * server_acl.c — ACLs as Fluss 0.9.1 manages them: CREATE_ACLS,
 * LIST_ACLS and DROP_ACLS (the Java Admin's createAcls, listAcls,
 * dropAcls), the coordinator's copy in the metadata store (one document
 * per resource, the reference's ZooKeeper node), and NOTIFY_ACLS, ours,
 * with which the coordinator gives every tablet server the whole set.
 *
 * A change is made on a copy of the published set: the changed resources
 * are written to the store, then the copy is published and pushed; a
 * failed write publishes nothing (what was written before it stays, and
 * is what a restart loads).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common_alloc.h"
#include "common_log.h"
#include "proto_api.h"
#include "server_authz.h"
#include "server_coordinator.h"
#include "server_node.h"
#include "server_push.h"
#include "server_tablet.h"
#include "server_tablet_catalog.h"

#define FL_ACL_DISABLED_MSG "No Authorizer is configured."

fl_authz_t *fl_req_authz(const fl_req_ctx_t *ctx) {
    if (ctx->role->role == FL_ROLE_CS) return ctx->cs ? ctx->cs->cfg.authz : NULL;
    return ctx->ts ? ctx->ts->cfg.authz : NULL;
}

/* ---- wire <-> model ---- */

static int fl_acl_check_codes(int32_t type, int32_t op, int32_t perm, bool filter, fl_error_t *err) {
    if (!fl_acl_resource_type_name(type) || (!filter && type == FL_ACL_RES_ANY))
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR, "Unknown resource type code %d",
                          type);
    if (!fl_acl_operation_name(op))
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR, "Unknown operation type code: %d",
                          op);
    if (!fl_acl_permission_name(perm))
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR, "Unknown permission type: %d",
                          perm);
    return 0;
}

/* A binding that points into pb (no copy). */
static int fl_acl_from_pb(const Fluss__PbAclInfo *pb, fl_acl_binding_t *b, fl_error_t *err) {
    int rc = fl_acl_check_codes(pb->resource_type, pb->operation_type, pb->permission_type,
                                false, err);
    if (rc) return rc;
    *b = (fl_acl_binding_t){.resource_type = pb->resource_type,
                            .resource_name = pb->resource_name,
                            .principal_type = pb->principal_type,
                            .principal_name = pb->principal_name,
                            .host = pb->host,
                            .operation = pb->operation_type,
                            .permission = pb->permission_type};
    /* optional strings absent, or too long to store: -1, as 0.9.1 fails
     * such a request */
    fl_error_t e;
    fl_err_clear(&e);
    if (fl_acl_binding_check(b, &e))
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR, "%s", e.msg);
    return 0;
}

static void fl_acl_to_pb(const fl_acl_binding_t *b, Fluss__PbAclInfo *pb) {
    fluss__pb_acl_info__init(pb);
    pb->resource_name = b->resource_name;
    pb->resource_type = b->resource_type;
    pb->principal_name = b->principal_name;
    pb->principal_type = b->principal_type;
    pb->host = b->host;
    pb->operation_type = b->operation;
    pb->permission_type = b->permission;
}

static int fl_acl_filter_from_pb(const Fluss__PbAclFilter *pb, fl_acl_filter_t *f,
                                 fl_error_t *err) {
    int rc = fl_acl_check_codes(pb->resource_type, pb->operation_type, pb->permission_type,
                                true, err);
    if (rc) return rc;
    bool principal = pb->principal_name && pb->principal_type;
    *f = (fl_acl_filter_t){.resource_type = pb->resource_type,
                           .resource_name = pb->resource_name,
                           .principal_type = principal ? pb->principal_type : NULL,
                           .principal_name = principal ? pb->principal_name : NULL,
                           .host = pb->host,
                           .operation = pb->operation_type,
                           .permission = pb->permission_type};
    return 0;
}

/* The resource whose ALTER a change of (type, name)'s ACLs needs: a
 * table's database. */
static void fl_acl_alter_resource(int32_t type, const char *name, int32_t *out_type, char *out,
                                  size_t cap) {
    *out_type = type;
    snprintf(out, cap, "%s", name);
    if (type != FL_ACL_RES_TABLE) return;
    char *dot = strchr(out, '.');
    if (dot) *dot = '\0';
    *out_type = FL_ACL_RES_DATABASE;
}

static int fl_acl_require_alter(fl_authz_t *a, const fl_req_ctx_t *ctx, int32_t type,
                                const char *name, fl_error_t *err) {
    int32_t t;
    char n[1024];
    fl_acl_alter_resource(type, name, &t, n, sizeof(n));
    return fl_authz_require(a, ctx, FL_ACL_OP_ALTER, t, n, err);
}

/* ---- the coordinator's copy ---- */

/* Writes the resources of s that `changed` names (their documents, or
 * their removal) to the store. */
static int fl_acl_persist(fl_coordinator_server_t *cs, const fl_acl_set_t *s,
                          const fl_acl_binding_t *changed, size_t n, fl_error_t *err) {
    fl_metastore_t *ms = cs->ms;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = changed[j].resource_type == changed[i].resource_type &&
                   strcmp(changed[j].resource_name, changed[i].resource_name) == 0;
        if (seen) continue;
        char *json = fl_acl_resource_json(s, changed[i].resource_type, changed[i].resource_name);
        int rc = ms->ops->acl_put(ms, changed[i].resource_type, changed[i].resource_name, json,
                                  err);
        fl_free(json);
        if (rc) return rc;
    }
    return 0;
}

int fl_coordinator_acls_load(fl_coordinator_server_t *cs, fl_error_t *err) {
    fl_authz_t *a = cs->cfg.authz;
    if (!a) return 0;
    fl_metastore_t *ms = cs->ms;
    fl_acl_set_t *s = fl_acl_set_new();
    size_t n = ms->ops->acl_count(ms);
    for (size_t i = 0; i < n; i++) {
        const fl_ms_acl_node_t *node = ms->ops->acl_at(ms, i);
        fl_error_t e;
        fl_err_clear(&e);
        if (fl_acl_set_load_resource(s, node->resource_type, node->resource_name, node->json,
                                     strlen(node->json), &e)) {
            fl_acl_set_free(s);
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "the ACLs of %s %s in the metadata store: %s",
                              fl_acl_resource_type_name(node->resource_type) ?: "?",
                              node->resource_name, e.msg);
        }
    }
    FL_INFO("coordinator: authorization on, %zu ACL(s) on %zu resource(s)", fl_acl_set_count(s),
            fl_acl_set_resource_count(s));
    fl_authz_publish(a, s);
    return 0;
}

void fl_coordinator_acls_push(fl_coordinator_server_t *cs, int32_t tablet_id) {
    fl_authz_t *a = cs->cfg.authz;
    if (!a || !cs->push) return;
    fl_authz_view_t *v = fl_authz_acquire(a);
    const fl_acl_set_t *s = fl_authz_view_set(v);
    size_t n = fl_acl_set_count(s);
    Fluss__PbAclInfo *items = fl_calloc(n ? n : 1, sizeof(*items));
    Fluss__PbAclInfo **ptrs = fl_calloc(n ? n : 1, sizeof(*ptrs));
    for (size_t i = 0; i < n; i++) {
        fl_acl_to_pb(fl_acl_set_at(s, i), &items[i]);
        ptrs[i] = &items[i];
    }
    Fluss__NotifyAclsRequest req = FLUSS__NOTIFY_ACLS_REQUEST__INIT;
    req.n_acl = n;
    req.acl = ptrs;
    fl_push_message(cs->push, FL_API_NOTIFY_ACLS, &req.base, tablet_id);
    fl_free(ptrs);
    fl_free(items);
    fl_authz_release(v);
}

/* ---- CREATE_ACLS ---- */

FL_API_HANDLER(fl_api_create_acls) {
    const Fluss__CreateAclsRequest *req = (const Fluss__CreateAclsRequest *)m;
    fl_authz_t *a = fl_req_authz(ctx);
    if (!a) return fl_err_set(err, FLUSS_ERR_SECURITY_DISABLED_EXCEPTION, FL_ACL_DISABLED_MSG);
    size_t n = req->n_acl;
    fl_acl_binding_t *bs = fl_calloc(n ? n : 1, sizeof(*bs));
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) rc = fl_acl_from_pb(req->acl[i], &bs[i], err);
    /* the same binding twice in one request: 0.9.1 fails it whole */
    for (size_t i = 0; i < n && !rc; i++)
        for (size_t j = 0; j < i && !rc; j++)
            if (fl_acl_binding_equal(&bs[i], &bs[j]))
                rc = fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                                "Duplicate key: the request lists an ACL twice");
    for (size_t i = 0; i < n && !rc; i++)
        rc = fl_acl_require_alter(a, ctx, bs[i].resource_type, bs[i].resource_name, err);
    fl_authz_view_t *v = NULL;
    fl_acl_set_t *next = NULL;
    if (!rc && n) {
        v = fl_authz_acquire(a);
        next = fl_acl_set_copy(fl_authz_view_set(v));
        bool changed = false;
        for (size_t i = 0; i < n; i++) changed |= fl_acl_set_add(next, &bs[i]);
        if (changed) rc = fl_acl_persist(ctx->cs, next, bs, n, err);
        if (!rc && changed) {
            fl_authz_publish(a, next);
            next = NULL;
            fl_coordinator_acls_push(ctx->cs, -1);
            FL_INFO("coordinator: %zu ACL(s) added by %s:%s", n, ctx->who.type, ctx->who.name);
        }
    }
    if (!rc) {
        Fluss__PbCreateAclRespInfo *items = fl_calloc(n ? n : 1, sizeof(*items));
        Fluss__PbCreateAclRespInfo **ptrs = fl_calloc(n ? n : 1, sizeof(*ptrs));
        Fluss__PbAclInfo *infos = fl_calloc(n ? n : 1, sizeof(*infos));
        for (size_t i = 0; i < n; i++) {
            fluss__pb_create_acl_resp_info__init(&items[i]);
            fl_acl_to_pb(&bs[i], &infos[i]);
            items[i].acl = &infos[i];
            items[i].has_error_code = 1;
            items[i].error_code = 0;
            ptrs[i] = &items[i];
        }
        Fluss__CreateAclsResponse resp = FLUSS__CREATE_ACLS_RESPONSE__INIT;
        resp.n_aclres = n;
        resp.aclres = ptrs;
        fl_server_reply(out, ctx->request_id, &resp.base);
        fl_free(infos);
        fl_free(ptrs);
        fl_free(items);
    }
    fl_acl_set_free(next);
    fl_authz_release(v);
    fl_free(bs);
    return rc;
}

/* ---- LIST_ACLS ---- */

FL_API_HANDLER(fl_api_list_acls) {
    const Fluss__ListAclsRequest *req = (const Fluss__ListAclsRequest *)m;
    fl_authz_t *a = fl_req_authz(ctx);
    if (!a) return fl_err_set(err, FLUSS_ERR_SECURITY_DISABLED_EXCEPTION, FL_ACL_DISABLED_MSG);
    fl_acl_filter_t f;
    int rc = fl_acl_filter_from_pb(req->acl_filter, &f, err);
    if (rc) return rc;
    fl_authz_view_t *v = fl_authz_acquire(a);
    const fl_acl_set_t *s = fl_authz_view_set(v);
    size_t n = fl_acl_set_count(s), k = 0;
    Fluss__PbAclInfo *items = fl_calloc(n ? n : 1, sizeof(*items));
    Fluss__PbAclInfo **ptrs = fl_calloc(n ? n : 1, sizeof(*ptrs));
    for (size_t i = 0; i < n; i++) {
        const fl_acl_binding_t *b = fl_acl_set_at(s, i);
        if (!fl_acl_filter_matches(&f, b)) continue;
        /* only what the caller may DESCRIBE, silently */
        if (!fl_authz_allowed_in(a, v, ctx, FL_ACL_OP_DESCRIBE, b->resource_type,
                                 b->resource_name))
            continue;
        fl_acl_to_pb(b, &items[k]);
        ptrs[k] = &items[k];
        k++;
    }
    Fluss__ListAclsResponse resp = FLUSS__LIST_ACLS_RESPONSE__INIT;
    resp.n_acl = k;
    resp.acl = ptrs;
    fl_server_reply(out, ctx->request_id, &resp.base);
    fl_free(ptrs);
    fl_free(items);
    fl_authz_release(v);
    return 0;
}

/* ---- DROP_ACLS ---- */

FL_API_HANDLER(fl_api_drop_acls) {
    const Fluss__DropAclsRequest *req = (const Fluss__DropAclsRequest *)m;
    fl_authz_t *a = fl_req_authz(ctx);
    if (!a) return fl_err_set(err, FLUSS_ERR_SECURITY_DISABLED_EXCEPTION, FL_ACL_DISABLED_MSG);
    size_t nf = req->n_acl_filter;
    fl_acl_filter_t *fs = fl_calloc(nf ? nf : 1, sizeof(*fs));
    int rc = 0;
    for (size_t i = 0; i < nf && !rc; i++) rc = fl_acl_filter_from_pb(req->acl_filter[i], &fs[i], err);
    if (rc) {
        fl_free(fs);
        return rc;
    }
    fl_authz_view_t *v = fl_authz_acquire(a);
    const fl_acl_set_t *cur = fl_authz_view_set(v);
    /* ALTER on every resource a filter matches (only existing ones) */
    for (size_t i = 0; i < fl_acl_set_count(cur) && !rc; i++) {
        const fl_acl_binding_t *b = fl_acl_set_at(cur, i);
        bool hit = false;
        for (size_t j = 0; j < nf && !hit; j++) hit = fl_acl_filter_matches(&fs[j], b);
        if (hit) rc = fl_acl_require_alter(a, ctx, b->resource_type, b->resource_name, err);
    }
    fl_acl_set_t *next = NULL;
    fl_acl_binding_t **removed = fl_calloc(nf ? nf : 1, sizeof(*removed));
    size_t *counts = fl_calloc(nf ? nf : 1, sizeof(*counts));
    size_t total = 0;
    if (!rc) {
        /* each removed binding is the first matching filter's */
        next = fl_acl_set_copy(cur);
        for (size_t j = 0; j < nf; j++)
            total += fl_acl_set_remove(next, &fs[j], &removed[j], &counts[j]);
        if (total) {
            fl_acl_binding_t *all = fl_calloc(total, sizeof(*all));
            size_t k = 0;
            for (size_t j = 0; j < nf; j++)
                for (size_t r = 0; r < counts[j]; r++) all[k++] = removed[j][r];
            rc = fl_acl_persist(ctx->cs, next, all, total, err);
            fl_free(all);
            if (!rc) {
                fl_authz_publish(a, next);
                next = NULL;
                fl_coordinator_acls_push(ctx->cs, -1);
                FL_INFO("coordinator: %zu ACL(s) dropped by %s:%s", total, ctx->who.type,
                        ctx->who.name);
            }
        }
    }
    if (!rc) {
        Fluss__PbDropAclsFilterResult *results = fl_calloc(nf ? nf : 1, sizeof(*results));
        Fluss__PbDropAclsFilterResult **rptrs = fl_calloc(nf ? nf : 1, sizeof(*rptrs));
        Fluss__PbDropAclsMatchingAcl *match = fl_calloc(total ? total : 1, sizeof(*match));
        Fluss__PbDropAclsMatchingAcl **mptrs = fl_calloc(total ? total : 1, sizeof(*mptrs));
        Fluss__PbAclInfo *infos = fl_calloc(total ? total : 1, sizeof(*infos));
        size_t k = 0;
        for (size_t j = 0; j < nf; j++) {
            fluss__pb_drop_acls_filter_result__init(&results[j]);
            results[j].matching_acls = &mptrs[k];
            results[j].n_matching_acls = counts[j];
            for (size_t r = 0; r < counts[j]; r++, k++) {
                fluss__pb_drop_acls_matching_acl__init(&match[k]);
                fl_acl_to_pb(&removed[j][r], &infos[k]);
                match[k].acl = &infos[k];
                mptrs[k] = &match[k];
            }
            rptrs[j] = &results[j];
        }
        Fluss__DropAclsResponse resp = FLUSS__DROP_ACLS_RESPONSE__INIT;
        resp.n_filter_results = nf;
        resp.filter_results = rptrs;
        fl_server_reply(out, ctx->request_id, &resp.base);
        fl_free(infos);
        fl_free(mptrs);
        fl_free(match);
        fl_free(rptrs);
        fl_free(results);
    }
    for (size_t j = 0; j < nf; j++) {
        for (size_t r = 0; r < counts[j]; r++) fl_acl_binding_clear(&removed[j][r]);
        fl_free(removed[j]);
    }
    fl_free(removed);
    fl_free(counts);
    fl_acl_set_free(next);
    fl_authz_release(v);
    fl_free(fs);
    return rc;
}

/* ---- NOTIFY_ACLS (a tablet server's copy) ---- */

FL_API_HANDLER(fl_api_notify_acls) {
    const Fluss__NotifyAclsRequest *req = (const Fluss__NotifyAclsRequest *)m;
    fl_authz_t *a = fl_req_authz(ctx);
    if (a) {
        fl_acl_set_t *s = fl_acl_set_new();
        for (size_t i = 0; i < req->n_acl; i++) {
            fl_acl_binding_t b;
            fl_error_t e;
            fl_err_clear(&e);
            if (fl_acl_from_pb(req->acl[i], &b, &e) == 0) fl_acl_set_add(s, &b);
            else FL_WARN("tablet server: NOTIFY_ACLS entry %zu refused: %s", i, e.msg);
        }
        FL_DEBUG("tablet server: %zu ACL(s) from the coordinator", fl_acl_set_count(s));
        fl_authz_publish(a, s);
    }
    (void)err;
    Fluss__NotifyAclsResponse resp = FLUSS__NOTIFY_ACLS_RESPONSE__INIT;
    fl_server_reply(out, ctx->request_id, &resp.base);
    return 0;
}

/* ---- checks by table id ---- */

int fl_cs_authorize_table_id(fl_req_ctx_t *ctx, int32_t op, int64_t table_id, bool locked,
                             fl_error_t *err) {
    fl_authz_t *a = fl_req_authz(ctx);
    if (!a || ctx->who.trusted) return 0;
    fl_coordinator_server_t *cs = ctx->cs;
    if (!locked) pthread_mutex_lock(&cs->lock);
    const fl_ms_table_t *t = cs->ms->ops->table_by_id(cs->ms, table_id);
    char db[512] = "", name[512] = "";
    if (t) {
        snprintf(db, sizeof(db), "%s", t->database);
        snprintf(name, sizeof(name), "%s", t->name);
    }
    if (!locked) pthread_mutex_unlock(&cs->lock);
    if (!t)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                          "This server coordinator does not know this table ID %lld. This may "
                          "happen when the table metadata cache in the server is not updated "
                          "yet.",
                          (long long)table_id);
    return fl_authz_require_table(a, ctx, op, db, name, err);
}

int fl_ts_authorize_table_id(fl_req_ctx_t *ctx, int32_t op, int64_t table_id, fl_error_t *err) {
    fl_authz_t *a = fl_req_authz(ctx);
    if (!a || ctx->who.trusted) return 0;
    fl_hosted_table_t *t = fl_tablet_catalog_table(ctx->ts->catalog, table_id);
    if (!t)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                          "This server server-%d does not know this table ID %lld. This may "
                          "happen when the table metadata cache in the server is not updated "
                          "yet.",
                          ctx->ts->self.id, (long long)table_id);
    int rc = fl_authz_require_table(a, ctx, op, t->database, t->name, err);
    fl_hosted_table_unref(t);
    return rc;
}

int fl_ts_authorize_bucket(fl_req_ctx_t *ctx, int32_t op, int64_t table_id, fl_error_t *err) {
    fl_authz_t *a = fl_req_authz(ctx);
    if (!a || ctx->who.trusted) return 0;
    fl_hosted_table_t *t = fl_tablet_catalog_table(ctx->ts->catalog, table_id);
    if (!t)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                          "This server server-%d does not know this table ID %lld. This may "
                          "happen when the table metadata cache in the server is not updated "
                          "yet.",
                          ctx->ts->self.id, (long long)table_id);
    int rc = 0;
    if (!fl_authz_allowed_table(a, ctx, op, t->database, t->name))
        rc = fl_err_set(err, FLUSS_ERR_AUTHORIZATION_EXCEPTION,
                        "No permission to %s table %s in database %s",
                        fl_acl_operation_name(op), t->name, t->database);
    fl_hosted_table_unref(t);
    return rc;
}

/* INIT_WRITER: WRITE on any one of the tables named (0.9.1's rule). */
int fl_cs_authorize_init_writer(fl_req_ctx_t *ctx, const Fluss__InitWriterRequest *req,
                                fl_error_t *err) {
    fl_authz_t *a = fl_req_authz(ctx);
    if (!a || ctx->who.trusted) return 0;
    if (req->n_table_path == 0)
        return fl_err_set(err, FLUSS_ERR_AUTHORIZATION_EXCEPTION,
                          "The request of InitWriter requires non empty table paths for "
                          "authorization.");
    char list[FL_ERROR_MSG_MAX - 128];
    size_t n = (size_t)snprintf(list, sizeof(list), "[");
    for (size_t i = 0; i < req->n_table_path; i++) {
        const Fluss__PbTablePath *p = req->table_path[i];
        if (!p->database_name || !p->table_name) continue;
        if (fl_authz_allowed_table(a, ctx, FL_ACL_OP_WRITE, p->database_name, p->table_name))
            return 0;
        if (n < sizeof(list))
            n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s.%s", i ? ", " : "",
                                  p->database_name, p->table_name);
    }
    if (n < sizeof(list)) snprintf(list + n, sizeof(list) - n, "]");
    return fl_err_set(err, FLUSS_ERR_AUTHORIZATION_EXCEPTION,
                      "No WRITE permission among all the tables: %s", list);
}
