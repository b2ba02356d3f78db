/*
 * fuzz_acl_json.c — the per-resource ACL document as read back from
 * ZooKeeper or disk (auth_acl.h, ResourceAclJsonSerde's format). Arbitrary
 * bytes are loaded as TABLE "db.t"'s document into a set that already
 * holds that resource and another one. A refusal is FLUSS_ERR__CORRUPT
 * with the document named, and leaves the set as it was. An acceptance
 * replaces only that resource, with valid, distinct bindings; writing it
 * back and loading that gives the same bindings and the same text (a
 * fixed point); each ALLOW binding grants its own principal its own
 * operation; and a filter naming one binding exactly removes that one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth_acl.h"
#include "common_alloc.h"
#include "fuzz_common.h"

#define RES "db.t"
#define PREFIX "ACL document of TABLE 'db.t': "

static fl_acl_set_t *fuzz_acl_base(void) {
    fl_acl_set_t *s = fl_acl_set_new();
    const fl_acl_binding_t seed[] = {
        {.resource_type = FL_ACL_RES_TABLE, .resource_name = RES, .principal_type = "User",
         .principal_name = "old", .host = "*", .operation = FL_ACL_OP_READ,
         .permission = FL_ACL_PERM_ALLOW},
        {.resource_type = FL_ACL_RES_DATABASE, .resource_name = "db", .principal_type = "User",
         .principal_name = "other", .host = "*", .operation = FL_ACL_OP_ALL,
         .permission = FL_ACL_PERM_ALLOW},
    };
    for (size_t i = 0; i < 2; i++) FUZZ_CHECK(fl_acl_set_add(s, &seed[i]));
    return s;
}

static void fuzz_acl_check_bindings(const fl_acl_set_t *s) {
    size_t n = fl_acl_set_resource_size(s, FL_ACL_RES_TABLE, RES);
    /* the other resource is untouched; "db.t" sorts after DATABASE "db" */
    FUZZ_CHECK(fl_acl_set_resource_size(s, FL_ACL_RES_DATABASE, "db") == 1);
    FUZZ_CHECK(fl_acl_set_count(s) == n + 1);
    for (size_t i = 1; i <= n; i++) {
        const fl_acl_binding_t *b = fl_acl_set_at(s, i);
        FUZZ_CHECK(b->resource_type == FL_ACL_RES_TABLE && strcmp(b->resource_name, RES) == 0);
        fl_error_t err;
        FUZZ_CHECK(fl_acl_binding_check(b, &err) == 0); /* what CREATE_ACLS would accept */
        for (size_t j = 1; j < i; j++) FUZZ_CHECK(!fl_acl_binding_equal(b, fl_acl_set_at(s, j)));
    }
}

/* write back, load again: the same bindings and the same text */
static void fuzz_acl_fixed_point(const fl_acl_set_t *s) {
    size_t n = fl_acl_set_resource_size(s, FL_ACL_RES_TABLE, RES);
    char *text = fl_acl_resource_json(s, FL_ACL_RES_TABLE, RES);
    FUZZ_CHECK((text == NULL) == (n == 0));
    if (!text) return;
    fl_acl_set_t *again = fl_acl_set_new();
    fl_error_t err;
    FUZZ_CHECK(fl_acl_set_load_resource(again, FL_ACL_RES_TABLE, RES, text, strlen(text), &err) ==
               0);
    FUZZ_CHECK(fl_acl_set_count(again) == n);
    for (size_t i = 0; i < n; i++)
        FUZZ_CHECK(fl_acl_binding_equal(fl_acl_set_at(again, i), fl_acl_set_at(s, i + 1)));
    char *text2 = fl_acl_resource_json(again, FL_ACL_RES_TABLE, RES);
    FUZZ_CHECK(text2 && strcmp(text, text2) == 0);
    fl_free(text2);
    fl_free(text);
    fl_acl_set_free(again);
}

/* each ALLOW binding grants what it says; its exact filter removes it alone */
static void fuzz_acl_semantics(fl_acl_set_t *s) {
    size_t n = fl_acl_set_resource_size(s, FL_ACL_RES_TABLE, RES);
    for (size_t i = 1; i <= n; i++) {
        const fl_acl_binding_t *b = fl_acl_set_at(s, i);
        if (b->permission != FL_ACL_PERM_ALLOW || b->operation == FL_ACL_OP_ANY) continue;
        fl_acl_principal_t p = {.type = b->principal_type, .name = b->principal_name};
        const char *host = strcmp(b->host, FL_ACL_WILDCARD) == 0 ? "10.9.8.7" : b->host;
        int32_t op = b->operation == FL_ACL_OP_ALL ? FL_ACL_OP_DROP : b->operation;
        FUZZ_CHECK(fl_acl_authorized(s, NULL, &p, host, op, FL_ACL_RES_TABLE, RES));
        FUZZ_CHECK(fl_acl_authorized(s, NULL, &p, host, FL_ACL_OP_DESCRIBE, FL_ACL_RES_TABLE, RES));
    }
    if (n == 0) return;
    fl_acl_binding_t first;
    fl_acl_binding_copy(&first, fl_acl_set_at(s, 1));
    fl_acl_filter_t f = {.resource_type = FL_ACL_RES_TABLE, .resource_name = RES,
                         .principal_type = first.principal_type,
                         .principal_name = first.principal_name, .host = first.host,
                         .operation = first.operation, .permission = first.permission};
    fl_acl_binding_t *gone = NULL;
    size_t n_gone = 0;
    FUZZ_CHECK(fl_acl_set_remove(s, &f, &gone, &n_gone) == 1 && n_gone == 1);
    FUZZ_CHECK(fl_acl_binding_equal(&gone[0], &first));
    FUZZ_CHECK(fl_acl_set_resource_size(s, FL_ACL_RES_TABLE, RES) == n - 1);
    fl_acl_binding_clear(&gone[0]);
    fl_free(gone);
    fl_acl_binding_clear(&first);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_acl_set_t *s = fuzz_acl_base();
    char *before = fl_acl_resource_json(s, FL_ACL_RES_TABLE, RES);
    fl_error_t err;
    fl_err_clear(&err);
    int rc = fl_acl_set_load_resource(s, FL_ACL_RES_TABLE, RES, (const char *)data, size, &err);
    if (rc != 0) {
        FUZZ_CHECK(rc == FLUSS_ERR__CORRUPT && err.code == rc);
        FUZZ_CHECK(strncmp(err.msg, PREFIX, strlen(PREFIX)) == 0 && err.msg[strlen(PREFIX)]);
        char *after = fl_acl_resource_json(s, FL_ACL_RES_TABLE, RES);
        FUZZ_CHECK(after && strcmp(before, after) == 0 && fl_acl_set_count(s) == 2);
        fl_free(after);
    } else {
        fuzz_acl_check_bindings(s);
        fuzz_acl_fixed_point(s);
        fuzz_acl_semantics(s);
    }
    fl_free(before);
    fl_acl_set_free(s);
    return 0;
}
