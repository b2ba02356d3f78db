/*
 * client_acl.c — libfluss's ACL calls (fluss.h): CREATE_ACLS, LIST_ACLS
 * and DROP_ACLS to the coordinator, as the Java Admin sends them.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "client_table.h"
#include "common_alloc.h"
#include "fluss.h"
#include "fluss_api.pb-c.h"
#include "proto_api.h"

static const char *const FL_ACL_OPS[] = {NULL,     "ANY",  "ALL",  "READ",    "WRITE",
                                         "CREATE", "DROP", "ALTER", "DESCRIBE"};
static const char *const FL_ACL_TYPES[] = {NULL, "ANY", "CLUSTER", "DATABASE", "TABLE"};

const char *fluss_acl_operation_name(int op) {
    return op >= 1 && op <= 8 ? FL_ACL_OPS[op] : NULL;
}

int fluss_acl_operation_parse(const char *name) {
    for (int i = 1; i <= 8; i++)
        if (name && strcasecmp(name, FL_ACL_OPS[i]) == 0) return i;
    return 0;
}

const char *fluss_acl_resource_type_name(int type) {
    return type >= 1 && type <= 4 ? FL_ACL_TYPES[type] : NULL;
}

static void fl_acl_to_pb(const fluss_acl_t *a, Fluss__PbAclInfo *pb) {
    fluss__pb_acl_info__init(pb);
    pb->resource_type = a->resource_type;
    pb->resource_name = a->resource_name;
    pb->principal_type = a->principal_type;
    pb->principal_name = a->principal_name;
    pb->host = a->host ? a->host : "*";
    pb->operation_type = a->operation;
    pb->permission_type = a->permission ? a->permission : FLUSS_ACL_PERMISSION_ALLOW;
}

static void fl_filter_to_pb(const fluss_acl_t *f, Fluss__PbAclFilter *pb) {
    fluss__pb_acl_filter__init(pb);
    pb->resource_type = f && f->resource_type ? f->resource_type : FLUSS_ACL_RESOURCE_ANY;
    pb->resource_name = f ? f->resource_name : NULL;
    if (f && f->principal_type && f->principal_name) {
        pb->principal_type = f->principal_type;
        pb->principal_name = f->principal_name;
    }
    pb->host = f ? f->host : NULL;
    pb->operation_type = f && f->operation ? f->operation : FLUSS_ACL_OP_ANY;
    pb->permission_type = f && f->permission ? f->permission : FLUSS_ACL_PERMISSION_ANY;
}

static void fl_acl_from_pb(const Fluss__PbAclInfo *pb, fluss_acl_t *a) {
    a->resource_type = pb->resource_type;
    a->resource_name = fl_strdup(pb->resource_name ? pb->resource_name : "");
    a->principal_type = fl_strdup(pb->principal_type ? pb->principal_type : "");
    a->principal_name = fl_strdup(pb->principal_name ? pb->principal_name : "");
    a->host = fl_strdup(pb->host ? pb->host : "");
    a->operation = pb->operation_type;
    a->permission = pb->permission_type;
}

void fluss_acls_free(fluss_acl_t *acls, size_t n) {
    for (size_t i = 0; acls && i < n; i++) {
        fl_free(acls[i].resource_name);
        fl_free(acls[i].principal_type);
        fl_free(acls[i].principal_name);
        fl_free(acls[i].host);
    }
    fl_free(acls);
}

static int fl_acl_fail(fluss_error_t *e, const fl_error_t *err, int rc) {
    fl_client_error_out(e, err);
    return rc;
}

int fluss_acl_create(fluss_client_t *c, const fluss_acl_t *acls, size_t n, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    int timeout;
    fl_client_conn_t *conn = fl_client_coordinator(c, &timeout);
    Fluss__PbAclInfo *items = fl_calloc(n ? n : 1, sizeof(*items));
    Fluss__PbAclInfo **ptrs = fl_calloc(n ? n : 1, sizeof(*ptrs));
    for (size_t i = 0; i < n; i++) {
        fl_acl_to_pb(&acls[i], &items[i]);
        ptrs[i] = &items[i];
    }
    Fluss__CreateAclsRequest req = FLUSS__CREATE_ACLS_REQUEST__INIT;
    req.n_acl = n;
    req.acl = ptrs;
    Fluss__CreateAclsResponse *resp = NULL;
    int rc = fl_client_conn_call(conn, FL_API_CREATE_ACLS, &req.base,
                                 &fluss__create_acls_response__descriptor,
                                 (ProtobufCMessage **)&resp, &err);
    fl_free(ptrs);
    fl_free(items);
    for (size_t i = 0; !rc && i < resp->n_aclres; i++) {
        const Fluss__PbCreateAclRespInfo *r = resp->aclres[i];
        if (r->has_error_code && r->error_code != 0)
            rc = fl_err_set(&err, r->error_code, "%s",
                            r->error_message ? r->error_message : "an ACL was not created");
    }
    if (resp) protobuf_c_message_free_unpacked(&resp->base, NULL);
    return rc ? fl_acl_fail(e, &err, rc) : 0;
}

int fluss_acl_list(fluss_client_t *c, const fluss_acl_t *filter, fluss_acl_t **out, size_t *n,
                   fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    int timeout;
    fl_client_conn_t *conn = fl_client_coordinator(c, &timeout);
    Fluss__PbAclFilter f;
    fl_filter_to_pb(filter, &f);
    Fluss__ListAclsRequest req = FLUSS__LIST_ACLS_REQUEST__INIT;
    req.acl_filter = &f;
    Fluss__ListAclsResponse *resp = NULL;
    int rc = fl_client_conn_call(conn, FL_API_LIST_ACLS, &req.base,
                                 &fluss__list_acls_response__descriptor,
                                 (ProtobufCMessage **)&resp, &err);
    if (rc) return fl_acl_fail(e, &err, rc);
    *n = resp->n_acl;
    *out = fl_calloc(*n ? *n : 1, sizeof(**out));
    for (size_t i = 0; i < *n; i++) fl_acl_from_pb(resp->acl[i], &(*out)[i]);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return 0;
}

int fluss_acl_drop(fluss_client_t *c, const fluss_acl_t *filter, fluss_acl_t **out, size_t *n,
                   fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    int timeout;
    fl_client_conn_t *conn = fl_client_coordinator(c, &timeout);
    Fluss__PbAclFilter f;
    fl_filter_to_pb(filter, &f);
    Fluss__PbAclFilter *fp = &f;
    Fluss__DropAclsRequest req = FLUSS__DROP_ACLS_REQUEST__INIT;
    req.n_acl_filter = 1;
    req.acl_filter = &fp;
    Fluss__DropAclsResponse *resp = NULL;
    int rc = fl_client_conn_call(conn, FL_API_DROP_ACLS, &req.base,
                                 &fluss__drop_acls_response__descriptor,
                                 (ProtobufCMessage **)&resp, &err);
    if (rc) return fl_acl_fail(e, &err, rc);
    size_t total = 0;
    for (size_t i = 0; i < resp->n_filter_results; i++)
        total += resp->filter_results[i]->n_matching_acls;
    *out = fl_calloc(total ? total : 1, sizeof(**out));
    *n = 0;
    for (size_t i = 0; i < resp->n_filter_results; i++) {
        const Fluss__PbDropAclsFilterResult *r = resp->filter_results[i];
        if (r->has_error_code && r->error_code != 0 && !rc)
            rc = fl_err_set(&err, r->error_code, "%s",
                            r->error_message ? r->error_message : "ACLs were not dropped");
        for (size_t k = 0; k < r->n_matching_acls; k++)
            fl_acl_from_pb(r->matching_acls[k]->acl, &(*out)[(*n)++]);
    }
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    if (rc) {
        fluss_acls_free(*out, *n);
        *out = NULL;
        *n = 0;
        return fl_acl_fail(e, &err, rc);
    }
    return 0;
}
