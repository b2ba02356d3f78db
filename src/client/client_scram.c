/*
 * client_scram.c — libfluss's SCRAM user calls (fluss.h; fluss-c's own
 * ALTER_SCRAM_CREDENTIALS and LIST_SCRAM_USERS to the coordinator).
 */
#include <string.h>

#include "client_table.h"
#include "common_alloc.h"
#include "fluss.h"
#include "fluss_api.pb-c.h"
#include "proto_api.h"

static int fl_scram_alter(fluss_client_t *c, Fluss__AlterScramCredentialsRequest *req,
                          fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    int timeout;
    fl_client_conn_t *conn = fl_client_coordinator(c, &timeout);
    Fluss__AlterScramCredentialsResponse *resp = NULL;
    int rc = fl_client_conn_call(conn, FL_API_ALTER_SCRAM_CREDENTIALS, &req->base,
                                 &fluss__alter_scram_credentials_response__descriptor,
                                 (ProtobufCMessage **)&resp, &err);
    for (size_t i = 0; !rc && i < resp->n_result; i++) {
        const Fluss__PbScramResult *r = resp->result[i];
        if (r->has_error_code && r->error_code != 0)
            rc = fl_err_set(&err, r->error_code, "%s",
                            r->error_message ? r->error_message : "the change was refused");
    }
    if (resp) protobuf_c_message_free_unpacked(&resp->base, NULL);
    if (rc) fl_client_error_out(e, &err);
    return rc;
}

int fluss_scram_user_set(fluss_client_t *c, const char *user, const char *mechanism,
                         const char *password, int iterations, fluss_error_t *e) {
    Fluss__PbScramUpsertion u = FLUSS__PB_SCRAM_UPSERTION__INIT;
    u.user = (char *)user;
    u.mechanism = (char *)(mechanism ? mechanism : "SCRAM-SHA-256");
    if (iterations > 0) {
        u.has_iterations = 1;
        u.iterations = iterations;
    }
    u.password.data = (uint8_t *)password;
    u.password.len = password ? strlen(password) : 0;
    Fluss__PbScramUpsertion *up = &u;
    Fluss__AlterScramCredentialsRequest req = FLUSS__ALTER_SCRAM_CREDENTIALS_REQUEST__INIT;
    req.n_upsertion = 1;
    req.upsertion = &up;
    return fl_scram_alter(c, &req, e);
}

int fluss_scram_user_delete(fluss_client_t *c, const char *user, const char *mechanism,
                            fluss_error_t *e) {
    Fluss__PbScramDeletion d = FLUSS__PB_SCRAM_DELETION__INIT;
    d.user = (char *)user;
    d.mechanism = (char *)(mechanism ? mechanism : "SCRAM-SHA-256");
    Fluss__PbScramDeletion *dp = &d;
    Fluss__AlterScramCredentialsRequest req = FLUSS__ALTER_SCRAM_CREDENTIALS_REQUEST__INIT;
    req.n_deletion = 1;
    req.deletion = &dp;
    return fl_scram_alter(c, &req, e);
}

int fluss_scram_user_list(fluss_client_t *c, fluss_scram_user_t **out, size_t *n,
                          fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    int timeout;
    fl_client_conn_t *conn = fl_client_coordinator(c, &timeout);
    Fluss__ListScramUsersRequest req = FLUSS__LIST_SCRAM_USERS_REQUEST__INIT;
    Fluss__ListScramUsersResponse *resp = NULL;
    int rc = fl_client_conn_call(conn, FL_API_LIST_SCRAM_USERS, &req.base,
                                 &fluss__list_scram_users_response__descriptor,
                                 (ProtobufCMessage **)&resp, &err);
    if (rc) {
        fl_client_error_out(e, &err);
        return rc;
    }
    *n = resp->n_user;
    *out = fl_calloc(*n ? *n : 1, sizeof(**out));
    for (size_t i = 0; i < *n; i++) {
        (*out)[i].user = fl_strdup(resp->user[i]->user);
        (*out)[i].mechanism = fl_strdup(resp->user[i]->mechanism);
        (*out)[i].iterations = resp->user[i]->iterations;
    }
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return 0;
}

void fluss_scram_users_free(fluss_scram_user_t *users, size_t n) {
    for (size_t i = 0; users && i < n; i++) {
        fl_free(users[i].user);
        fl_free(users[i].mechanism);
    }
    fl_free(users);
}
