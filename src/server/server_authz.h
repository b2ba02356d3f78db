/*
 * server_authz.h — authorization as Fluss 0.9.1 decides it
 * (authorizer.enabled, super.users, the ACLs of auth_acl.h), for one
 * server role: the coordinator keeps the ACLs in the metadata store and
 * publishes each new set here; a tablet server gets them pushed
 * (NOTIFY_ACLS) and publishes them the same way.
 *
 * Who asks comes from the request's context (server_node.h fl_req_ctx_t
 * who): a trusted request (a server's own, on the internal side) is never
 * checked; a client's carries its principal (the SASL user, or
 * User:ANONYMOUS on a PLAINTEXT listener) and its address.
 *
 * Thread rule: any thread. A published set is immutable; a check holds a
 * reference to the set it reads, so a publish never waits for checks.
 */
#ifndef FL_SERVER_AUTHZ_H
#define FL_SERVER_AUTHZ_H

#include <stdbool.h>
#include <stdint.h>

#include "auth_acl.h"
#include "common_error.h"
#include "server_config.h"

typedef struct fl_authz fl_authz_t;
struct fl_req_ctx;

/* From authorizer.enabled and super.users: *out NULL when disabled. */
int fl_authz_new(const fl_config_t *cfg, fl_authz_t **out, fl_error_t *err);
void fl_authz_free(fl_authz_t *a);
/* Decides with set from now on (taken). */
void fl_authz_publish(fl_authz_t *a, fl_acl_set_t *set);

/* The authorizer of the role that serves ctx (server_acl.c), or NULL. */
fl_authz_t *fl_req_authz(const struct fl_req_ctx *ctx);
#define FL_AUTHZ(ctx) fl_req_authz(ctx)

/* The current set, held until fl_authz_release (for answers that list
 * ACLs or filter many names with one set). */
typedef struct fl_authz_view fl_authz_view_t;
fl_authz_view_t *fl_authz_acquire(fl_authz_t *a);
const fl_acl_set_t *fl_authz_view_set(const fl_authz_view_t *v);
void fl_authz_release(fl_authz_view_t *v);

/* Whether ctx may do op on the resource (true when a is NULL, i.e. the
 * authorizer is disabled, or ctx is trusted). */
bool fl_authz_allowed(fl_authz_t *a, const struct fl_req_ctx *ctx, int32_t op, int32_t type,
                      const char *name);
bool fl_authz_allowed_in(fl_authz_t *a, const fl_authz_view_t *v, const struct fl_req_ctx *ctx,
                         int32_t op, int32_t type, const char *name);
/* The same, as a request's failure: 0, or AUTHORIZATION_EXCEPTION (48)
 * with the reference's message in err. */
int fl_authz_require(fl_authz_t *a, const struct fl_req_ctx *ctx, int32_t op, int32_t type,
                     const char *name, fl_error_t *err);
/* For a table db.t. */
int fl_authz_require_table(fl_authz_t *a, const struct fl_req_ctx *ctx, int32_t op,
                           const char *db, const char *table, fl_error_t *err);
bool fl_authz_allowed_table(fl_authz_t *a, const struct fl_req_ctx *ctx, int32_t op,
                            const char *db, const char *table);

#endif
