/*
 * server_scram.c — SCRAM users on a server role (server_scram.h) and
 * their APIs: ALTER_SCRAM_CREDENTIALS and LIST_SCRAM_USERS on the
 * coordinator, NOTIFY_SCRAM_CREDENTIALS on a tablet server.
 */
#include "server_scram.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "common_log.h"
#include "proto_api.h"
#include "server_authz.h"
#include "server_coordinator.h"
#include "server_node.h"
#include "server_push.h"
#include "server_tablet.h"

#define FL_SCRAM_USER_MAX 512

typedef struct fl_scram_entry {
    char *user;
    fl_scram_credential_t cred;
} fl_scram_entry_t;

struct fl_scram_users {
    pthread_mutex_t mu;
    fl_scram_entry_t *entries;
    size_t count;
    uint8_t secret[32];
};

fl_scram_users_t *fl_scram_users_new(void) {
    fl_scram_users_t *u = fl_calloc(1, sizeof(*u));
    pthread_mutex_init(&u->mu, NULL);
    if (RAND_bytes(u->secret, sizeof(u->secret)) != 1) {
        fprintf(stderr, "fatal: no random bytes for the SCRAM secret\n");
        abort();
    }
    return u;
}

static void fl_scram_entries_free(fl_scram_entry_t *e, size_t n) {
    for (size_t i = 0; i < n; i++) {
        fl_free(e[i].user);
        OPENSSL_cleanse(&e[i].cred, sizeof(e[i].cred));
    }
    fl_free(e);
}

void fl_scram_users_free(fl_scram_users_t *u) {
    if (!u) return;
    fl_scram_entries_free(u->entries, u->count);
    OPENSSL_cleanse(u->secret, sizeof(u->secret));
    pthread_mutex_destroy(&u->mu);
    fl_free(u);
}

void fl_scram_users_publish(fl_scram_users_t *u, const fl_ms_scram_node_t *const *nodes, size_t n) {
    if (!u) return;
    fl_scram_entry_t *e = fl_calloc(n ? n : 1, sizeof(*e));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        fl_error_t err;
        fl_err_clear(&err);
        if (fl_scram_credential_decode(nodes[i]->credential, strlen(nodes[i]->credential),
                                       &e[k].cred, &err)) {
            FL_WARN("security: the SCRAM credential of user %s (%s) does not decode: %s",
                    nodes[i]->user, nodes[i]->mechanism, err.msg);
            continue;
        }
        e[k++].user = fl_strdup(nodes[i]->user);
    }
    pthread_mutex_lock(&u->mu);
    fl_scram_entry_t *old = u->entries;
    size_t old_n = u->count;
    u->entries = e;
    u->count = k;
    pthread_mutex_unlock(&u->mu);
    fl_scram_entries_free(old, old_n);
}

size_t fl_scram_users_count(fl_scram_users_t *u) {
    pthread_mutex_lock(&u->mu);
    size_t n = u->count;
    pthread_mutex_unlock(&u->mu);
    return n;
}

bool fl_scram_users_lookup(void *arg, const char *user, int hash, fl_scram_credential_t *out) {
    fl_scram_users_t *u = arg;
    if (!u) return false;
    bool found = false;
    pthread_mutex_lock(&u->mu);
    for (size_t i = 0; i < u->count && !found; i++)
        if (u->entries[i].cred.hash == hash && strcmp(u->entries[i].user, user) == 0) {
            *out = u->entries[i].cred;
            found = true;
        }
    pthread_mutex_unlock(&u->mu);
    return found;
}

const uint8_t *fl_scram_users_secret(const fl_scram_users_t *u) { return u->secret; }

/* ---- the coordinator's copy ---- */

static void fl_scram_publish_from_store(fl_coordinator_server_t *cs) {
    fl_metastore_t *ms = cs->ms;
    size_t n = ms->ops->scram_count(ms);
    const fl_ms_scram_node_t **nodes = fl_calloc(n ? n : 1, sizeof(*nodes));
    for (size_t i = 0; i < n; i++) nodes[i] = ms->ops->scram_at(ms, i);
    fl_scram_users_publish(cs->cfg.scram, nodes, n);
    fl_free(nodes);
}

int fl_coordinator_scram_load(fl_coordinator_server_t *cs, fl_error_t *err) {
    (void)err;
    if (!cs->cfg.scram) return 0;
    fl_scram_publish_from_store(cs);
    size_t n = fl_scram_users_count(cs->cfg.scram);
    if (n) FL_INFO("coordinator: %zu SCRAM credential(s)", n);
    return 0;
}

void fl_coordinator_scram_push(fl_coordinator_server_t *cs, int32_t tablet_id) {
    if (!cs->cfg.scram || !cs->push) return;
    fl_metastore_t *ms = cs->ms;
    size_t n = ms->ops->scram_count(ms);
    Fluss__PbScramCredential *items = fl_calloc(n ? n : 1, sizeof(*items));
    Fluss__PbScramCredential **ptrs = fl_calloc(n ? n : 1, sizeof(*ptrs));
    for (size_t i = 0; i < n; i++) {
        const fl_ms_scram_node_t *node = ms->ops->scram_at(ms, i);
        fluss__pb_scram_credential__init(&items[i]);
        items[i].user = node->user;
        items[i].mechanism = node->mechanism;
        items[i].credential = node->credential;
        ptrs[i] = &items[i];
    }
    Fluss__NotifyScramCredentialsRequest req = FLUSS__NOTIFY_SCRAM_CREDENTIALS_REQUEST__INIT;
    req.n_credential = n;
    req.credential = ptrs;
    fl_push_message(cs->push, FL_API_NOTIFY_SCRAM_CREDENTIALS, &req.base, tablet_id);
    fl_free(ptrs);
    fl_free(items);
}

/* ---- ALTER_SCRAM_CREDENTIALS ---- */

static int fl_scram_check_user(const char *user, fl_error_t *err) {
    size_t n = user ? strlen(user) : 0;
    if (n == 0 || n > FL_SCRAM_USER_MAX)
        return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                          "A SCRAM user name must have 1 to %d bytes.", FL_SCRAM_USER_MAX);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)user[i] < 0x20 || user[i] == '/' || user[i] == 0x7f)
            return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                              "A SCRAM user name may not hold '/' or control characters.");
    return 0;
}

static int fl_scram_upsert(fl_coordinator_server_t *cs, const Fluss__PbScramUpsertion *u,
                           fl_error_t *err) {
    int rc = fl_scram_check_user(u->user, err);
    if (rc) return rc;
    int hash = fl_scram_mechanism(u->mechanism);
    if (!hash)
        return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                          "Unknown SCRAM mechanism '%s' (SCRAM-SHA-256, SCRAM-SHA-512).",
                          u->mechanism);
    int32_t iterations = u->has_iterations ? u->iterations : FL_SCRAM_ITERATIONS_MIN;
    if (iterations < FL_SCRAM_ITERATIONS_MIN || iterations > FL_SCRAM_ITERATIONS_MAX)
        return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                          "SCRAM iterations must be between %d and %d, not %d.",
                          FL_SCRAM_ITERATIONS_MIN, FL_SCRAM_ITERATIONS_MAX, iterations);
    if (u->password.len == 0)
        return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION, "An empty password.");
    fl_scram_credential_t c;
    rc = fl_scram_credential_make(hash, (const char *)u->password.data, u->password.len, NULL, 0,
                                  iterations, &c, err);
    if (rc) return rc;
    char *text = fl_scram_credential_encode(&c);
    OPENSSL_cleanse(&c, sizeof(c));
    rc = cs->ms->ops->scram_put(cs->ms, u->user, fl_scram_mechanism_name(hash), text, err);
    fl_free(text);
    return rc;
}

FL_API_HANDLER(fl_api_alter_scram_credentials) {
    const Fluss__AlterScramCredentialsRequest *req =
        (const Fluss__AlterScramCredentialsRequest *)m;
    fl_coordinator_server_t *cs = ctx->cs;
    if (!cs->cfg.scram)
        return fl_err_set(err, FLUSS_ERR_SECURITY_DISABLED_EXCEPTION, "SCRAM is not available.");
    int rc = fl_authz_require(FL_AUTHZ(ctx), ctx, FL_ACL_OP_ALTER, FL_ACL_RES_CLUSTER,
                              FL_ACL_CLUSTER_NAME, err);
    if (rc) return rc;
    size_t nu = req->n_upsertion, nd = req->n_deletion, n = nu + nd;
    Fluss__PbScramResult *res = fl_calloc(n ? n : 1, sizeof(*res));
    Fluss__PbScramResult **ptrs = fl_calloc(n ? n : 1, sizeof(*ptrs));
    char **msgs = fl_calloc(n ? n : 1, sizeof(*msgs));
    bool changed = false;
    for (size_t i = 0; i < n; i++) {
        fl_error_t e;
        fl_err_clear(&e);
        int r;
        fluss__pb_scram_result__init(&res[i]);
        if (i < nu) {
            res[i].user = req->upsertion[i]->user;
            r = fl_scram_upsert(cs, req->upsertion[i], &e);
        } else {
            const Fluss__PbScramDeletion *d = req->deletion[i - nu];
            res[i].user = d->user;
            int hash = fl_scram_mechanism(d->mechanism);
            r = !hash ? fl_err_set(&e, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                                   "Unknown SCRAM mechanism '%s'.", d->mechanism)
                      : cs->ms->ops->scram_put(cs->ms, d->user, fl_scram_mechanism_name(hash),
                                               NULL, &e);
        }
        res[i].has_error_code = 1;
        res[i].error_code = fl_server_wire_code(r);
        if (r) res[i].error_message = msgs[i] = fl_strdup(e.msg);
        else changed = true;
        ptrs[i] = &res[i];
    }
    if (changed) {
        fl_scram_publish_from_store(cs);
        fl_coordinator_scram_push(cs, -1);
        FL_INFO("coordinator: SCRAM credentials changed by %s:%s", ctx->who.type, ctx->who.name);
    }
    Fluss__AlterScramCredentialsResponse resp = FLUSS__ALTER_SCRAM_CREDENTIALS_RESPONSE__INIT;
    resp.n_result = n;
    resp.result = ptrs;
    fl_server_reply(out, ctx->request_id, &resp.base);
    for (size_t i = 0; i < n; i++) fl_free(msgs[i]);
    fl_free(msgs);
    fl_free(ptrs);
    fl_free(res);
    return 0;
}

/* ---- LIST_SCRAM_USERS ---- */

FL_API_HANDLER(fl_api_list_scram_users) {
    (void)m;
    fl_coordinator_server_t *cs = ctx->cs;
    int rc = fl_authz_require(FL_AUTHZ(ctx), ctx, FL_ACL_OP_DESCRIBE, FL_ACL_RES_CLUSTER,
                              FL_ACL_CLUSTER_NAME, err);
    if (rc) return rc;
    fl_metastore_t *ms = cs->ms;
    size_t n = ms->ops->scram_count(ms), k = 0;
    Fluss__PbScramUserInfo *items = fl_calloc(n ? n : 1, sizeof(*items));
    Fluss__PbScramUserInfo **ptrs = fl_calloc(n ? n : 1, sizeof(*ptrs));
    for (size_t i = 0; i < n; i++) {
        const fl_ms_scram_node_t *node = ms->ops->scram_at(ms, i);
        fl_scram_credential_t c;
        fl_error_t e;
        if (fl_scram_credential_decode(node->credential, strlen(node->credential), &c, &e))
            continue;
        fluss__pb_scram_user_info__init(&items[k]);
        items[k].user = node->user;
        items[k].mechanism = node->mechanism;
        items[k].iterations = c.iterations;
        ptrs[k] = &items[k];
        k++;
        OPENSSL_cleanse(&c, sizeof(c));
    }
    Fluss__ListScramUsersResponse resp = FLUSS__LIST_SCRAM_USERS_RESPONSE__INIT;
    resp.n_user = k;
    resp.user = ptrs;
    fl_server_reply(out, ctx->request_id, &resp.base);
    fl_free(ptrs);
    fl_free(items);
    return 0;
}

/* ---- NOTIFY_SCRAM_CREDENTIALS (a tablet server's copy) ---- */

FL_API_HANDLER(fl_api_notify_scram_credentials) {
    (void)err;
    const Fluss__NotifyScramCredentialsRequest *req =
        (const Fluss__NotifyScramCredentialsRequest *)m;
    size_t n = req->n_credential;
    fl_ms_scram_node_t *nodes = fl_calloc(n ? n : 1, sizeof(*nodes));
    const fl_ms_scram_node_t **ptrs = fl_calloc(n ? n : 1, sizeof(*ptrs));
    for (size_t i = 0; i < n; i++) {
        nodes[i] = (fl_ms_scram_node_t){.user = req->credential[i]->user,
                                        .mechanism = req->credential[i]->mechanism,
                                        .credential = req->credential[i]->credential};
        ptrs[i] = &nodes[i];
    }
    if (ctx->ts) fl_scram_users_publish(ctx->ts->cfg.scram, ptrs, n);
    fl_free(ptrs);
    fl_free(nodes);
    Fluss__NotifyScramCredentialsResponse resp = FLUSS__NOTIFY_SCRAM_CREDENTIALS_RESPONSE__INIT;
    fl_server_reply(out, ctx->request_id, &resp.base);
    return 0;
}
