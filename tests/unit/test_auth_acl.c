/*
 * test_auth_acl.c — the ACL model of Fluss 0.9.1 (auth_acl.h): names and
 * codes; the decision's implication rules (ALL, DESCRIBE from the
 * others), hierarchy (cluster > database > table, same-type wildcard
 * resources only), principal and host matching, ALLOW only, super users;
 * the set (idempotent add, stable order, copies, removal by every filter
 * field); the denial message byte for byte; the ZooKeeper document (exact
 * text and key order, round trip, refusals); and the pure decisions of
 * FlussAuthorizationITCase (acl_facts.md §8).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "auth_acl.h"
#include "common_alloc.h"

#define CL FL_ACL_RES_CLUSTER
#define DB FL_ACL_RES_DATABASE
#define TB FL_ACL_RES_TABLE
#define CLUSTER FL_ACL_CLUSTER_NAME

/* a binding over borrowed strings: only ever passed as const */
static fl_acl_binding_t bind(int32_t type, const char *res, const char *ptype, const char *pname,
                             const char *host, int32_t op, int32_t perm) {
    return (fl_acl_binding_t){
        .resource_type = type,
        .resource_name = (char *)res,
        .principal_type = (char *)ptype,
        .principal_name = (char *)pname,
        .host = (char *)host,
        .operation = op,
        .permission = perm,
    };
}

/* an ALLOW for User:user from any host */
static bool grant(fl_acl_set_t *s, int32_t type, const char *res, const char *user, int32_t op) {
    fl_acl_binding_t b = bind(type, res, "User", user, "*", op, FL_ACL_PERM_ALLOW);
    return fl_acl_set_add(s, &b);
}

/* may User:user from 10.0.0.1 do op on (type, res)? no super users */
static bool can(const fl_acl_set_t *s, const char *user, int32_t op, int32_t type,
                const char *res) {
    fl_acl_principal_t p = {.type = "User", .name = user};
    return fl_acl_authorized(s, NULL, &p, "10.0.0.1", op, type, res);
}

static void test_names(void **state) {
    (void)state;
    assert_string_equal(fl_acl_resource_type_name(FL_ACL_RES_ANY), "ANY");
    assert_string_equal(fl_acl_resource_type_name(TB), "TABLE");
    assert_null(fl_acl_resource_type_name(0));
    assert_null(fl_acl_resource_type_name(5));
    assert_string_equal(fl_acl_operation_name(FL_ACL_OP_ALL), "ALL");
    assert_string_equal(fl_acl_operation_name(FL_ACL_OP_DESCRIBE), "DESCRIBE");
    assert_null(fl_acl_operation_name(9));
    assert_null(fl_acl_operation_name(-1));
    assert_string_equal(fl_acl_permission_name(FL_ACL_PERM_ALLOW), "ALLOW");
    assert_null(fl_acl_permission_name(3));
    static const char *const ops[] = {"ANY", "ALL", "READ", "WRITE", "CREATE", "DROP", "ALTER",
                                      "DESCRIBE"};
    for (int32_t i = 0; i < 8; i++) {
        assert_string_equal(fl_acl_operation_name(i + 1), ops[i]);
        assert_int_equal(fl_acl_operation_from_name(ops[i]), i + 1);
    }
    assert_int_equal(fl_acl_operation_from_name("describe"), FL_ACL_OP_DESCRIBE);
    assert_int_equal(fl_acl_operation_from_name("DELETE"), 0); /* the docs' word; no such op */
    assert_int_equal(fl_acl_operation_from_name(""), 0);
    assert_int_equal(fl_acl_operation_from_name(NULL), 0);
    assert_int_equal(fl_acl_permission_from_name("Allow"), FL_ACL_PERM_ALLOW);
    assert_int_equal(fl_acl_permission_from_name("DENY"), 0);
    assert_int_equal(fl_acl_resource_type_from_name("database"), DB);
    assert_int_equal(fl_acl_resource_type_from_name("cluster"), CL);
    assert_int_equal(fl_acl_resource_type_from_name("TOPIC"), 0);
}

static void test_implication(void **state) {
    (void)state;
    fl_acl_set_t *s = fl_acl_set_new();
    /* ALL implies every operation, ALL included */
    grant(s, TB, "db.all", "u", FL_ACL_OP_ALL);
    for (int32_t op = FL_ACL_OP_ALL; op <= FL_ACL_OP_DESCRIBE; op++)
        assert_true(can(s, "u", op, TB, "db.all"));
    /* DESCRIBE follows from each of READ, WRITE, CREATE, DROP, ALTER */
    for (int32_t op = FL_ACL_OP_READ; op <= FL_ACL_OP_ALTER; op++) {
        char name[32];
        snprintf(name, sizeof(name), "db.t%d", op);
        grant(s, TB, name, "u", op);
        assert_true(can(s, "u", op, TB, name));
        assert_true(can(s, "u", FL_ACL_OP_DESCRIBE, TB, name));
        /* ... and gives nothing else, ALL least of all */
        for (int32_t other = FL_ACL_OP_ALL; other <= FL_ACL_OP_ALTER; other++)
            if (other != op) assert_false(can(s, "u", other, TB, name));
    }
    /* WRITE does not give READ; DESCRIBE gives nothing but DESCRIBE */
    assert_false(can(s, "u", FL_ACL_OP_READ, TB, "db.t4"));
    grant(s, TB, "db.d", "u", FL_ACL_OP_DESCRIBE);
    assert_true(can(s, "u", FL_ACL_OP_DESCRIBE, TB, "db.d"));
    for (int32_t op = FL_ACL_OP_ALL; op <= FL_ACL_OP_ALTER; op++)
        assert_false(can(s, "u", op, TB, "db.d"));
    /* no ACL means no access */
    assert_false(can(s, "u", FL_ACL_OP_DESCRIBE, TB, "db.none"));
    fl_acl_set_free(s);
}

static void test_hierarchy(void **state) {
    (void)state;
    fl_acl_set_t *s = fl_acl_set_new();
    /* a cluster grant covers every database and table */
    grant(s, CL, CLUSTER, "c", FL_ACL_OP_READ);
    assert_true(can(s, "c", FL_ACL_OP_READ, CL, CLUSTER));
    assert_true(can(s, "c", FL_ACL_OP_READ, DB, "any_db"));
    assert_true(can(s, "c", FL_ACL_OP_READ, TB, "any_db.any_table"));
    /* a database grant covers its tables, not the cluster or other databases */
    grant(s, DB, "db1", "d", FL_ACL_OP_WRITE);
    assert_true(can(s, "d", FL_ACL_OP_WRITE, DB, "db1"));
    assert_true(can(s, "d", FL_ACL_OP_WRITE, TB, "db1.t"));
    assert_false(can(s, "d", FL_ACL_OP_WRITE, TB, "db10.t"));
    assert_false(can(s, "d", FL_ACL_OP_WRITE, TB, "db.t"));
    assert_false(can(s, "d", FL_ACL_OP_WRITE, DB, "db2"));
    assert_false(can(s, "d", FL_ACL_OP_WRITE, CL, CLUSTER));
    /* the database of "db1.t.x" is "db1" (the first '.'); of "db1", "db1" */
    assert_true(can(s, "d", FL_ACL_OP_WRITE, TB, "db1.t.x"));
    assert_true(can(s, "d", FL_ACL_OP_WRITE, TB, "db1"));
    assert_false(can(s, "d", FL_ACL_OP_WRITE, TB, "xdb1.t"));
    /* a table grant covers the table only */
    grant(s, TB, "db1.t", "t", FL_ACL_OP_CREATE);
    assert_true(can(s, "t", FL_ACL_OP_CREATE, TB, "db1.t"));
    assert_false(can(s, "t", FL_ACL_OP_CREATE, TB, "db1.t2"));
    assert_false(can(s, "t", FL_ACL_OP_CREATE, DB, "db1"));
    /* TABLE "*" covers every table but no database */
    grant(s, TB, "*", "wt", FL_ACL_OP_DROP);
    assert_true(can(s, "wt", FL_ACL_OP_DROP, TB, "a.b"));
    assert_true(can(s, "wt", FL_ACL_OP_DROP, TB, "zzz.y"));
    assert_false(can(s, "wt", FL_ACL_OP_DROP, DB, "a"));
    assert_false(can(s, "wt", FL_ACL_OP_DROP, CL, CLUSTER));
    /* DATABASE "*" covers every database but NOT their tables */
    grant(s, DB, "*", "wd", FL_ACL_OP_ALTER);
    assert_true(can(s, "wd", FL_ACL_OP_ALTER, DB, "a"));
    assert_true(can(s, "wd", FL_ACL_OP_ALTER, DB, "b"));
    assert_false(can(s, "wd", FL_ACL_OP_ALTER, TB, "a.b"));
    assert_false(can(s, "wd", FL_ACL_OP_ALTER, CL, CLUSTER));
    /* CLUSTER "*" covers the cluster (and so, not being its parent, no db) */
    grant(s, CL, "*", "wc", FL_ACL_OP_ALTER);
    assert_true(can(s, "wc", FL_ACL_OP_ALTER, CL, CLUSTER));
    assert_false(can(s, "wc", FL_ACL_OP_ALTER, DB, "a"));
    /* a resource checked as ANY has no literal resources */
    assert_false(can(s, "c", FL_ACL_OP_READ, FL_ACL_RES_ANY, "any"));
    /* names are exact and case-sensitive */
    assert_false(can(s, "d", FL_ACL_OP_WRITE, DB, "DB1"));
    fl_acl_set_free(s);
}

static void test_principal_and_host(void **state) {
    (void)state;
    fl_acl_set_t *s = fl_acl_set_new();
    fl_acl_binding_t b;
    /* ("*","*") is any principal */
    b = bind(DB, "any", "*", "*", "*", FL_ACL_OP_READ, FL_ACL_PERM_ALLOW);
    fl_acl_set_add(s, &b);
    assert_true(can(s, "guest", FL_ACL_OP_READ, DB, "any"));
    fl_acl_principal_t anon = {.type = "User", .name = "ANONYMOUS"};
    assert_true(fl_acl_authorized(s, NULL, &anon, "1.2.3.4", FL_ACL_OP_READ, DB, "any"));
    /* "User:*" and "*:guest" are no wildcards */
    b = bind(DB, "users", "User", "*", "*", FL_ACL_OP_READ, FL_ACL_PERM_ALLOW);
    fl_acl_set_add(s, &b);
    assert_false(can(s, "guest", FL_ACL_OP_READ, DB, "users"));
    assert_true(can(s, "*", FL_ACL_OP_READ, DB, "users")); /* a user named '*' */
    b = bind(DB, "typed", "*", "guest", "*", FL_ACL_OP_READ, FL_ACL_PERM_ALLOW);
    fl_acl_set_add(s, &b);
    assert_false(can(s, "guest", FL_ACL_OP_READ, DB, "typed"));
    /* principals are compared case-sensitively, type and name */
    grant(s, DB, "case", "Guest", FL_ACL_OP_READ);
    assert_false(can(s, "guest", FL_ACL_OP_READ, DB, "case"));
    fl_acl_principal_t other_type = {.type = "Role", .name = "Guest"};
    assert_false(fl_acl_authorized(s, NULL, &other_type, "*", FL_ACL_OP_READ, DB, "case"));
    /* host: "*" or the exact text, no patterns */
    b = bind(DB, "hosted", "User", "guest", "127.0.0.1", FL_ACL_OP_READ, FL_ACL_PERM_ALLOW);
    fl_acl_set_add(s, &b);
    fl_acl_principal_t guest = {.type = "User", .name = "guest"};
    assert_true(fl_acl_authorized(s, NULL, &guest, "127.0.0.1", FL_ACL_OP_READ, DB, "hosted"));
    assert_false(fl_acl_authorized(s, NULL, &guest, "127.0.0.2", FL_ACL_OP_READ, DB, "hosted"));
    assert_false(fl_acl_authorized(s, NULL, &guest, "127.0.0.10", FL_ACL_OP_READ, DB, "hosted"));
    assert_false(fl_acl_authorized(s, NULL, &guest, NULL, FL_ACL_OP_READ, DB, "hosted"));
    assert_false(fl_acl_authorized(s, NULL, &guest, "*", FL_ACL_OP_READ, DB, "hosted"));
    b = bind(DB, "pattern", "User", "guest", "127.0.0.*", FL_ACL_OP_READ, FL_ACL_PERM_ALLOW);
    fl_acl_set_add(s, &b);
    assert_false(fl_acl_authorized(s, NULL, &guest, "127.0.0.1", FL_ACL_OP_READ, DB, "pattern"));
    assert_true(fl_acl_authorized(s, NULL, &guest, NULL, FL_ACL_OP_READ, DB, "any"));
    /* PERM_ANY is stored, listed, and grants nothing */
    b = bind(DB, "perm_any", "User", "guest", "*", FL_ACL_OP_ALL, FL_ACL_PERM_ANY);
    assert_true(fl_acl_set_add(s, &b));
    assert_int_equal(fl_acl_set_resource_size(s, DB, "perm_any"), 1);
    for (int32_t op = FL_ACL_OP_ALL; op <= FL_ACL_OP_DESCRIBE; op++)
        assert_false(can(s, "guest", op, DB, "perm_any"));
    /* an op ANY binding is stored too and grants nothing real */
    b = bind(DB, "op_any", "User", "guest", "*", FL_ACL_OP_ANY, FL_ACL_PERM_ALLOW);
    assert_true(fl_acl_set_add(s, &b));
    for (int32_t op = FL_ACL_OP_ALL; op <= FL_ACL_OP_DESCRIBE; op++)
        assert_false(can(s, "guest", op, DB, "op_any"));
    fl_acl_set_free(s);
}

static void expect_bad_super_users(const char *text, const char *words) {
    fl_acl_super_users_t *u = (fl_acl_super_users_t *)1;
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_acl_super_users_parse(text, &u, &err), FLUSS_ERR__INVALID_ARG);
    assert_null(u);
    if (!strstr(err.msg, words)) fail_msg("'%s': error '%s' lacks '%s'", text, err.msg, words);
}

static void test_super_users(void **state) {
    (void)state;
    fl_acl_super_users_t *u;
    fl_error_t err;
    assert_int_equal(fl_acl_super_users_parse(" User:root ;User:admin;\tRole:ops ;", &u, &err), 0);
    assert_int_equal(fl_acl_super_users_count(u), 3);
    fl_acl_principal_t root = {.type = "User", .name = "root"};
    fl_acl_principal_t admin = {.type = "User", .name = "admin"};
    fl_acl_principal_t ops = {.type = "Role", .name = "ops"};
    fl_acl_principal_t ops_user = {.type = "User", .name = "ops"};
    fl_acl_principal_t guest = {.type = "User", .name = "guest"};
    fl_acl_principal_t root_upper = {.type = "User", .name = "Root"};
    assert_true(fl_acl_is_super_user(u, &root));
    assert_true(fl_acl_is_super_user(u, &admin));
    assert_true(fl_acl_is_super_user(u, &ops));
    assert_false(fl_acl_is_super_user(u, &ops_user));
    assert_false(fl_acl_is_super_user(u, &guest));
    assert_false(fl_acl_is_super_user(u, &root_upper));
    assert_false(fl_acl_is_super_user(NULL, &root));
    /* super users pass every check, with no ACL at all */
    fl_acl_set_t *s = fl_acl_set_new();
    for (int32_t op = FL_ACL_OP_ALL; op <= FL_ACL_OP_DESCRIBE; op++) {
        assert_true(fl_acl_authorized(s, u, &root, "10.1.1.1", op, CL, CLUSTER));
        assert_true(fl_acl_authorized(s, u, &admin, NULL, op, TB, "db.t"));
        assert_false(fl_acl_authorized(s, u, &guest, "10.1.1.1", op, TB, "db.t"));
    }
    assert_true(fl_acl_authorized(NULL, u, &root, NULL, FL_ACL_OP_ALTER, DB, "x"));
    fl_acl_set_free(s);
    fl_acl_super_users_free(u);
    /* nothing configured */
    assert_int_equal(fl_acl_super_users_parse(NULL, &u, &err), 0);
    assert_int_equal(fl_acl_super_users_count(u), 0);
    assert_false(fl_acl_is_super_user(u, &root));
    fl_acl_super_users_free(u);
    assert_int_equal(fl_acl_super_users_parse("", &u, &err), 0);
    assert_int_equal(fl_acl_super_users_count(u), 0);
    fl_acl_super_users_free(u);
    assert_int_equal(fl_acl_super_users_parse(" ; ;", &u, &err), 0);
    assert_int_equal(fl_acl_super_users_count(u), 0);
    fl_acl_super_users_free(u);
    /* a type with a space inside stays (trim is per entry, not per side) */
    assert_int_equal(fl_acl_super_users_parse("User :root", &u, &err), 0);
    assert_false(fl_acl_is_super_user(u, &root));
    fl_acl_super_users_free(u);
    expect_bad_super_users("root", "'root' is not Type:name");
    expect_bad_super_users("User:root;admin", "'admin' is not Type:name");
    expect_bad_super_users("User:", "'User:' is not Type:name");
    expect_bad_super_users(":root", "is not Type:name");
    expect_bad_super_users("User:a:b", "'User:a:b' is not Type:name");
}

static void test_set_add_order_copy(void **state) {
    (void)state;
    fl_acl_set_t *s = fl_acl_set_new();
    assert_int_equal(fl_acl_set_count(s), 0);
    assert_int_equal(fl_acl_set_resource_count(s), 0);
    assert_true(grant(s, TB, "db.b", "u1", FL_ACL_OP_READ));
    assert_true(grant(s, CL, CLUSTER, "u2", FL_ACL_OP_ALL));
    assert_true(grant(s, TB, "db.a", "u3", FL_ACL_OP_WRITE));
    assert_true(grant(s, TB, "db.b", "u0", FL_ACL_OP_READ));
    assert_true(grant(s, DB, "db", "u4", FL_ACL_OP_CREATE));
    /* idempotent: the same entry on the same resource is there once */
    assert_false(grant(s, TB, "db.b", "u1", FL_ACL_OP_READ));
    assert_false(grant(s, CL, CLUSTER, "u2", FL_ACL_OP_ALL));
    /* a difference in any field is another binding */
    fl_acl_binding_t b = bind(TB, "db.b", "User", "u1", "1.1.1.1", FL_ACL_OP_READ,
                              FL_ACL_PERM_ALLOW);
    assert_true(fl_acl_set_add(s, &b));
    b = bind(TB, "db.b", "User", "u1", "*", FL_ACL_OP_READ, FL_ACL_PERM_ANY);
    assert_true(fl_acl_set_add(s, &b));
    b = bind(TB, "db.b", "Role", "u1", "*", FL_ACL_OP_READ, FL_ACL_PERM_ALLOW);
    assert_true(fl_acl_set_add(s, &b));
    assert_true(grant(s, DB, "db.b", "u1", FL_ACL_OP_READ)); /* another resource type */
    assert_int_equal(fl_acl_set_count(s), 9);
    /* by type, then name, then insertion */
    static const struct {
        int32_t type;
        const char *res, *user;
    } want[] = {
        {CL, CLUSTER, "u2"}, {DB, "db", "u4"},   {DB, "db.b", "u1"}, {TB, "db.a", "u3"},
        {TB, "db.b", "u1"},  {TB, "db.b", "u0"}, {TB, "db.b", "u1"}, {TB, "db.b", "u1"},
        {TB, "db.b", "u1"},
    };
    for (size_t i = 0; i < 9; i++) {
        const fl_acl_binding_t *x = fl_acl_set_at(s, i);
        assert_int_equal(x->resource_type, want[i].type);
        assert_string_equal(x->resource_name, want[i].res);
        assert_string_equal(x->principal_name, want[i].user);
    }
    assert_string_equal(fl_acl_set_at(s, 6)->host, "1.1.1.1");
    assert_int_equal(fl_acl_set_at(s, 7)->permission, FL_ACL_PERM_ANY);
    assert_string_equal(fl_acl_set_at(s, 8)->principal_type, "Role");
    assert_int_equal(fl_acl_set_resource_count(s), 5);
    int32_t type;
    const char *name;
    fl_acl_set_resource_at(s, 0, &type, &name);
    assert_int_equal(type, CL);
    assert_string_equal(name, CLUSTER);
    fl_acl_set_resource_at(s, 4, &type, &name);
    assert_int_equal(type, TB);
    assert_string_equal(name, "db.b");
    assert_int_equal(fl_acl_set_resource_size(s, TB, "db.b"), 5);
    assert_int_equal(fl_acl_set_resource_size(s, DB, "db.b"), 1);
    assert_int_equal(fl_acl_set_resource_size(s, TB, "db.c"), 0);
    /* a copy is deep and independent */
    fl_acl_set_t *c = fl_acl_set_copy(s);
    assert_int_equal(fl_acl_set_count(c), 9);
    for (size_t i = 0; i < 9; i++) {
        assert_true(fl_acl_binding_equal(fl_acl_set_at(c, i), fl_acl_set_at(s, i)));
        assert_ptr_not_equal(fl_acl_set_at(c, i)->host, fl_acl_set_at(s, i)->host);
    }
    fl_acl_filter_t all = {.resource_type = FL_ACL_RES_ANY, .operation = FL_ACL_OP_ANY,
                           .permission = FL_ACL_PERM_ANY};
    fl_acl_binding_t *gone = NULL;
    size_t n_gone = 0;
    assert_int_equal(fl_acl_set_remove(s, &all, &gone, &n_gone), 9);
    for (size_t i = 0; i < n_gone; i++) fl_acl_binding_clear(&gone[i]);
    fl_free(gone);
    assert_int_equal(fl_acl_set_count(s), 0);
    assert_int_equal(fl_acl_set_resource_count(s), 0);
    assert_int_equal(fl_acl_set_count(c), 9);
    assert_true(can(c, "u2", FL_ACL_OP_READ, TB, "x.y"));
    assert_false(can(s, "u2", FL_ACL_OP_READ, TB, "x.y"));
    fl_acl_set_free(c);
    fl_acl_set_t *e = fl_acl_set_copy(s); /* of an empty set */
    assert_int_equal(fl_acl_set_count(e), 0);
    fl_acl_set_free(e);
    fl_acl_set_free(s);
    /* binding copy, equality, clear */
    fl_acl_binding_t src = bind(TB, "d.t", "User", "x", "*", FL_ACL_OP_DROP, FL_ACL_PERM_ALLOW);
    fl_acl_binding_t dst;
    fl_acl_binding_copy(&dst, &src);
    assert_true(fl_acl_binding_equal(&dst, &src));
    src.resource_type = DB;
    assert_false(fl_acl_binding_equal(&dst, &src));
    fl_acl_binding_clear(&dst);
    assert_null(dst.resource_name);
    fl_acl_binding_clear(NULL);
}

static void expect_bad_binding(fl_acl_binding_t b, const char *words) {
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_acl_binding_check(&b, &err), FLUSS_ERR__INVALID_ARG);
    if (!strstr(err.msg, words)) fail_msg("error '%s' lacks '%s'", err.msg, words);
}

static void test_binding_check(void **state) {
    (void)state;
    fl_error_t err;
    fl_acl_binding_t ok = bind(TB, "db.t", "User", "u", "*", FL_ACL_OP_READ, FL_ACL_PERM_ALLOW);
    assert_int_equal(fl_acl_binding_check(&ok, &err), 0);
    /* what 0.9.1 stores without a word: odd names, PERM_ANY, op ANY, type ANY */
    fl_acl_binding_t odd = bind(FL_ACL_RES_ANY, "", "", "", "", FL_ACL_OP_ANY, FL_ACL_PERM_ANY);
    assert_int_equal(fl_acl_binding_check(&odd, &err), 0);
    fl_acl_binding_t b = ok;
    b.resource_type = 0;
    expect_bad_binding(b, "Unknown resource type code 0");
    b = ok;
    b.operation = 9;
    expect_bad_binding(b, "Unknown operation type code: 9");
    b = ok;
    b.permission = 3;
    expect_bad_binding(b, "Unknown permission type: 3");
    b = ok;
    b.host = NULL;
    expect_bad_binding(b, "has no host");
    b = ok;
    b.principal_type = NULL;
    expect_bad_binding(b, "has no principal type");
    /* a string the stored document could not hold */
    char *big = malloc(FL_ACL_STRING_MAX + 2);
    memset(big, 'x', FL_ACL_STRING_MAX + 1);
    big[FL_ACL_STRING_MAX + 1] = '\0';
    b = ok;
    b.principal_name = big;
    expect_bad_binding(b, "principal name is 65537 bytes, over 65536");
    /* counted as written: each byte that is not UTF-8 becomes U+FFFD's 3 */
    memset(big, 0xff, 30000);
    big[30000] = '\0';
    expect_bad_binding(b, "principal name is 90000 bytes, over 65536");
    memset(big, 'x', FL_ACL_STRING_MAX);
    big[FL_ACL_STRING_MAX] = '\0';
    assert_int_equal(fl_acl_binding_check(&b, &err), 0);
    /* at the bound, the document round-trips */
    fl_acl_set_t *s = fl_acl_set_new();
    assert_true(fl_acl_set_add(s, &b));
    char *text = fl_acl_resource_json(s, TB, "db.t");
    assert_int_equal(fl_acl_set_load_resource(s, TB, "db.t", text, strlen(text), &err), 0);
    assert_int_equal(fl_acl_set_count(s), 1);
    fl_free(text);
    fl_acl_set_free(s);
    free(big);
}

/* the standard population for the filter tests: 8 bindings */
static fl_acl_set_t *population(void) {
    fl_acl_set_t *s = fl_acl_set_new();
    const fl_acl_binding_t all[] = {
        bind(CL, CLUSTER, "User", "a", "*", FL_ACL_OP_ALL, FL_ACL_PERM_ALLOW),
        bind(CL, CLUSTER, "User", "b", "10.0.0.1", FL_ACL_OP_READ, FL_ACL_PERM_ALLOW),
        bind(DB, "db", "User", "a", "*", FL_ACL_OP_READ, FL_ACL_PERM_ALLOW),
        bind(DB, "*", "*", "*", "*", FL_ACL_OP_DESCRIBE, FL_ACL_PERM_ALLOW),
        bind(TB, "db.t", "User", "a", "*", FL_ACL_OP_WRITE, FL_ACL_PERM_ANY),
        bind(TB, "db.t", "Role", "a", "10.0.0.2", FL_ACL_OP_READ, FL_ACL_PERM_ALLOW),
        bind(TB, "*", "User", "b", "*", FL_ACL_OP_ALL, FL_ACL_PERM_ALLOW),
        bind(TB, "db", "User", "c", "*", FL_ACL_OP_DROP, FL_ACL_PERM_ALLOW),
    };
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        assert_true(fl_acl_set_add(s, &all[i]));
    return s;
}

/* removes f's matches from a fresh population: want of them, each one a
 * match, and none of what is left */
static void expect_remove(const fl_acl_filter_t *f, size_t want) {
    fl_acl_set_t *s = population();
    size_t before = fl_acl_set_count(s);
    fl_acl_binding_t *gone = NULL;
    size_t n_gone = 0;
    assert_int_equal(fl_acl_set_remove(s, f, &gone, &n_gone), want);
    assert_int_equal(n_gone, want);
    assert_int_equal(fl_acl_set_count(s), before - want);
    for (size_t i = 0; i < n_gone; i++) {
        assert_true(fl_acl_filter_matches(f, &gone[i]));
        fl_acl_binding_clear(&gone[i]);
    }
    for (size_t i = 0; i < fl_acl_set_count(s); i++)
        assert_false(fl_acl_filter_matches(f, fl_acl_set_at(s, i)));
    fl_free(gone);
    fl_acl_set_free(s);
}

/* a filter literal whose unset operation and permission mean ANY */
static const fl_acl_filter_t *any_rest(fl_acl_filter_t *f) {
    if (!f->operation) f->operation = FL_ACL_OP_ANY;
    if (!f->permission) f->permission = FL_ACL_PERM_ANY;
    return f;
}
#define F(...) any_rest(&(fl_acl_filter_t){__VA_ARGS__})

static void test_remove_filters(void **state) {
    (void)state;
    /* ResourceFilter.ANY, and ANY with a name: the name is ignored */
    expect_remove(F(.resource_type = FL_ACL_RES_ANY), 8);
    expect_remove(F(.resource_type = FL_ACL_RES_ANY, .resource_name = "nothing"), 8);
    /* a type alone; a type and an exact name */
    expect_remove(F(.resource_type = CL), 2);
    expect_remove(F(.resource_type = TB), 4);
    expect_remove(F(.resource_type = TB, .resource_name = "db.t"), 2);
    expect_remove(F(.resource_type = TB, .resource_name = "db"), 1);
    expect_remove(F(.resource_type = DB, .resource_name = "db.t"), 0);
    /* "*" names only the wildcard resource itself, no pattern */
    expect_remove(F(.resource_type = TB, .resource_name = "*"), 1);
    expect_remove(F(.resource_type = DB, .resource_name = "*"), 1);
    /* principal: both fields, exact; ("*","*") only matches itself */
    expect_remove(F(.resource_type = FL_ACL_RES_ANY, .principal_type = "User",
                    .principal_name = "a"), 3);
    expect_remove(F(.resource_type = FL_ACL_RES_ANY, .principal_type = "Role",
                    .principal_name = "a"), 1);
    expect_remove(F(.resource_type = FL_ACL_RES_ANY, .principal_type = "*",
                    .principal_name = "*"), 1);
    /* one principal field alone is "any principal", as the wire builds it */
    expect_remove(F(.resource_type = FL_ACL_RES_ANY, .principal_name = "zz"), 8);
    expect_remove(F(.resource_type = FL_ACL_RES_ANY, .principal_type = "zz"), 8);
    /* host: exact; "*" matches only bindings stored with "*" */
    expect_remove(F(.resource_type = FL_ACL_RES_ANY, .host = "*"), 6);
    expect_remove(F(.resource_type = FL_ACL_RES_ANY, .host = "10.0.0.1"), 1);
    expect_remove(F(.resource_type = FL_ACL_RES_ANY, .host = "10.0.0"), 0);
    /* operation: exact; READ does not match an ALL binding */
    expect_remove(F(.resource_type = FL_ACL_RES_ANY, .operation = FL_ACL_OP_READ), 3);
    expect_remove(F(.resource_type = FL_ACL_RES_ANY, .operation = FL_ACL_OP_ALL), 2);
    expect_remove(F(.resource_type = FL_ACL_RES_ANY, .operation = FL_ACL_OP_DESCRIBE), 1);
    expect_remove(F(.resource_type = FL_ACL_RES_ANY, .operation = FL_ACL_OP_ALTER), 0);
    /* permission: exact */
    expect_remove(F(.resource_type = FL_ACL_RES_ANY, .permission = FL_ACL_PERM_ALLOW), 7);
    expect_remove(F(.resource_type = FL_ACL_RES_ANY, .permission = FL_ACL_PERM_ANY), 8);
    /* all fields together */
    expect_remove(F(.resource_type = TB, .resource_name = "db.t", .principal_type = "Role",
                    .principal_name = "a", .host = "10.0.0.2", .operation = FL_ACL_OP_READ,
                    .permission = FL_ACL_PERM_ALLOW), 1);
    expect_remove(F(.resource_type = TB, .resource_name = "db.t", .principal_type = "Role",
                    .principal_name = "a", .host = "10.0.0.2", .operation = FL_ACL_OP_READ,
                    .permission = FL_ACL_PERM_ANY), 1);
    expect_remove(F(.resource_type = TB, .resource_name = "db.t", .principal_type = "Role",
                    .principal_name = "a", .host = "*", .operation = FL_ACL_OP_READ), 0);
}

static void test_remove_bookkeeping(void **state) {
    (void)state;
    fl_acl_set_t *s = population();
    fl_acl_binding_t *gone = NULL;
    size_t n_gone = 0;
    /* the filters of one DROP_ACLS in order: the first takes what it
     * matches, a later one only what is left; results accumulate */
    assert_int_equal(fl_acl_set_remove(s, F(.resource_type = TB), &gone, &n_gone), 4);
    assert_int_equal(fl_acl_set_remove(s, F(.resource_type = TB), &gone, &n_gone), 0);
    const fl_acl_filter_t *user_a = F(.resource_type = FL_ACL_RES_ANY, .principal_type = "User",
                                      .principal_name = "a");
    assert_int_equal(fl_acl_set_remove(s, user_a, &gone, &n_gone), 2);
    assert_int_equal(n_gone, 6);
    /* the removed bindings come back whole, resource included */
    assert_int_equal(gone[0].resource_type, TB);
    assert_int_equal(gone[4].resource_type, CL);
    assert_string_equal(gone[4].resource_name, CLUSTER);
    assert_string_equal(gone[4].principal_name, "a");
    /* emptied resources are gone, the rest keep their order and counts */
    assert_int_equal(fl_acl_set_resource_count(s), 2);
    assert_int_equal(fl_acl_set_resource_size(s, TB, "db.t"), 0);
    assert_int_equal(fl_acl_set_resource_size(s, DB, "db"), 0);
    assert_null(fl_acl_resource_json(s, DB, "db"));
    assert_int_equal(fl_acl_set_count(s), 2);
    assert_string_equal(fl_acl_set_at(s, 0)->principal_name, "b");
    assert_string_equal(fl_acl_set_at(s, 1)->resource_name, "*");
    /* a later add lands in order again */
    grant(s, CL, CLUSTER, "z", FL_ACL_OP_READ);
    grant(s, DB, "a", "z", FL_ACL_OP_READ);
    assert_string_equal(fl_acl_set_at(s, 1)->principal_name, "z");
    assert_string_equal(fl_acl_set_at(s, 2)->resource_name, "*");
    assert_string_equal(fl_acl_set_at(s, 3)->resource_name, "a");
    for (size_t i = 0; i < n_gone; i++) fl_acl_binding_clear(&gone[i]);
    fl_free(gone);
    fl_acl_set_free(s);
}

static void test_denial_message(void **state) {
    (void)state;
    char buf[512];
    fl_acl_principal_t guest = {.type = "User", .name = "guest"};
    fl_acl_denial_message(buf, sizeof(buf), &guest, FL_ACL_OP_CREATE, CL, CLUSTER);
    assert_string_equal(buf, "Principal FlussPrincipal{name='guest', type='User'} have no "
                             "authorization to operate CREATE on resource "
                             "Resource{type=CLUSTER, name='fluss-cluster'} ");
    fl_acl_denial_message(buf, sizeof(buf), &guest, FL_ACL_OP_WRITE, TB,
                          "test_db_1.no_write_acl_table_1");
    assert_string_equal(buf, "Principal FlussPrincipal{name='guest', type='User'} have no "
                             "authorization to operate WRITE on resource "
                             "Resource{type=TABLE, name='test_db_1.no_write_acl_table_1'} ");
    fl_acl_denial_message(buf, sizeof(buf), &guest, FL_ACL_OP_DESCRIBE, DB, "test_db_1");
    assert_string_equal(buf, "Principal FlussPrincipal{name='guest', type='User'} have no "
                             "authorization to operate DESCRIBE on resource "
                             "Resource{type=DATABASE, name='test_db_1'} ");
    /* cut to the buffer, always terminated */
    fl_acl_denial_message(buf, 10, &guest, FL_ACL_OP_READ, TB, "a.b");
    assert_string_equal(buf, "Principal");
}

#define GUEST_READ "{\"principal_type\":\"User\",\"principal_name\":\"guest\"," \
                   "\"permission_type\":\"ALLOW\",\"host\":\"*\",\"operation\":\"READ\"}"

static void test_json_round_trip(void **state) {
    (void)state;
    fl_acl_set_t *s = fl_acl_set_new();
    grant(s, TB, "db.t", "guest", FL_ACL_OP_READ);
    fl_acl_binding_t b = bind(TB, "db.t", "*", "*", "10.0.0.1", FL_ACL_OP_ALL, FL_ACL_PERM_ANY);
    fl_acl_set_add(s, &b);
    b = bind(TB, "db.t", "User", "q\"\\/\n\x01\xc3\xa9", "*", FL_ACL_OP_DESCRIBE,
             FL_ACL_PERM_ALLOW);
    fl_acl_set_add(s, &b);
    char *text = fl_acl_resource_json(s, TB, "db.t");
    /* ResourceAclJsonSerde's text: compact, keys in its order, enum names */
    assert_string_equal(text, "{\"version\":1,\"acls\":[" GUEST_READ ","
                              "{\"principal_type\":\"*\",\"principal_name\":\"*\","
                              "\"permission_type\":\"ANY\",\"host\":\"10.0.0.1\","
                              "\"operation\":\"ALL\"},"
                              "{\"principal_type\":\"User\",\"principal_name\":"
                              "\"q\\\"\\\\/\\n\\u0001\xc3\xa9\",\"permission_type\":\"ALLOW\","
                              "\"host\":\"*\",\"operation\":\"DESCRIBE\"}]}");
    assert_null(fl_acl_resource_json(s, TB, "db.u"));
    assert_null(fl_acl_resource_json(s, DB, "db.t"));
    /* loaded under another name it reads back the same bindings, in order */
    fl_error_t err;
    assert_int_equal(fl_acl_set_load_resource(s, DB, "copy", text, strlen(text), &err), 0);
    assert_int_equal(fl_acl_set_resource_size(s, DB, "copy"), 3);
    for (size_t i = 0; i < 3; i++) {
        fl_acl_binding_t want;
        fl_acl_binding_copy(&want, fl_acl_set_at(s, 3 + i));
        assert_int_equal(want.resource_type, TB);
        fl_free(want.resource_name);
        want.resource_type = DB;
        want.resource_name = fl_strdup("copy");
        assert_true(fl_acl_binding_equal(fl_acl_set_at(s, i), &want));
        fl_acl_binding_clear(&want);
    }
    char *again = fl_acl_resource_json(s, DB, "copy");
    assert_string_equal(again, text);
    fl_free(again);
    fl_free(text);
    /* loading replaces (not merges); duplicates collapse; order kept */
    const char *doc = "{\"version\":1,\"acls\":[" GUEST_READ "," GUEST_READ "]}";
    assert_int_equal(fl_acl_set_load_resource(s, TB, "db.t", doc, strlen(doc), &err), 0);
    assert_int_equal(fl_acl_set_resource_size(s, TB, "db.t"), 1);
    text = fl_acl_resource_json(s, TB, "db.t");
    assert_string_equal(text, "{\"version\":1,\"acls\":[" GUEST_READ "]}");
    fl_free(text);
    assert_int_equal(fl_acl_set_count(s), 4);
    assert_true(can(s, "guest", FL_ACL_OP_READ, TB, "db.t"));
    /* whitespace and key order of the input do not matter */
    doc = " { \"acls\" : [ {\"operation\":\"WRITE\",\"host\":\"1.2.3.4\",\"permission_type\":"
          "\"ALLOW\",\"principal_name\":\"w\",\"principal_type\":\"User\"} ] ,\n\"version\":1 }\n";
    assert_int_equal(fl_acl_set_load_resource(s, CL, CLUSTER, doc, strlen(doc), &err), 0);
    assert_int_equal(fl_acl_set_at(s, 0)->operation, FL_ACL_OP_WRITE);
    assert_string_equal(fl_acl_set_at(s, 0)->host, "1.2.3.4");
    assert_int_equal(fl_acl_set_count(s), 5);
    /* an empty list removes the resource */
    doc = "{\"version\":1,\"acls\":[]}";
    assert_int_equal(fl_acl_set_load_resource(s, TB, "db.t", doc, strlen(doc), &err), 0);
    assert_int_equal(fl_acl_set_resource_size(s, TB, "db.t"), 0);
    assert_int_equal(fl_acl_set_count(s), 4);
    assert_int_equal(fl_acl_set_load_resource(s, TB, "never", doc, strlen(doc), &err), 0);
    assert_int_equal(fl_acl_set_resource_count(s), 2);
    fl_acl_set_free(s);
    /* a string that is not UTF-8 is written with U+FFFD, and reads back */
    s = fl_acl_set_new();
    b = bind(DB, "d", "User", "a\xff" "b\xc3", "*", FL_ACL_OP_READ, FL_ACL_PERM_ALLOW);
    fl_acl_set_add(s, &b);
    text = fl_acl_resource_json(s, DB, "d");
    assert_non_null(strstr(text, "\"principal_name\":\"a\xef\xbf\xbd" "b\xef\xbf\xbd\""));
    assert_int_equal(fl_acl_set_load_resource(s, DB, "d", text, strlen(text), &err), 0);
    assert_string_equal(fl_acl_set_at(s, 0)->principal_name, "a\xef\xbf\xbd" "b\xef\xbf\xbd");
    fl_free(text);
    fl_acl_set_free(s);
}

static void expect_bad_json(const char *doc, size_t len, const char *words) {
    fl_acl_set_t *s = fl_acl_set_new();
    grant(s, TB, "db.t", "keep", FL_ACL_OP_READ);
    char *before = fl_acl_resource_json(s, TB, "db.t");
    fl_error_t err;
    fl_err_clear(&err);
    if (fl_acl_set_load_resource(s, TB, "db.t", doc, len, &err) == 0)
        fail_msg("accepted: %.200s", doc ? doc : "(null)");
    assert_int_equal(err.code, FLUSS_ERR__CORRUPT);
    assert_non_null(strstr(err.msg, "ACL document of TABLE 'db.t': "));
    if (!strstr(err.msg, words)) fail_msg("'%.200s': error '%s' lacks '%s'", doc, err.msg, words);
    /* s is unchanged */
    char *after = fl_acl_resource_json(s, TB, "db.t");
    assert_string_equal(after, before);
    assert_int_equal(fl_acl_set_count(s), 1);
    fl_free(before);
    fl_free(after);
    fl_acl_set_free(s);
}

#define BAD(doc, words) expect_bad_json((doc), strlen(doc), (words))
#define ENTRY(pt, pn, perm, host, op) \
    "{\"version\":1,\"acls\":[{\"principal_type\":" pt ",\"principal_name\":" pn \
    ",\"permission_type\":" perm ",\"host\":" host ",\"operation\":" op "}]}"

static void test_json_refusals(void **state) {
    (void)state;
    /* not JSON at all, or not whole */
    BAD("", "not JSON");
    expect_bad_json(NULL, 0, "not JSON");
    BAD("{", "not JSON");
    BAD("{\"version\":1,\"acls\":[]} x", "not JSON");
    BAD("{\"version\":1,\"acls\":[]}{}", "not JSON");
    static const char nul_tail[] = "{\"version\":1,\"acls\":[]}\0";
    expect_bad_json(nul_tail, sizeof(nul_tail) - 1, "not JSON");
    BAD("{\"version\":1,\"acls\":[\"\xff\"]}", "not JSON"); /* not UTF-8 */
    BAD(ENTRY("\"User\"", "\"a\\u0000b\"", "\"ALLOW\"", "\"*\"", "\"READ\""), "not JSON");
    /* the document's shape */
    BAD("[]", "not a JSON object");
    BAD("{\"acls\":[]}", "no \"version\"");
    BAD("{\"version\":2,\"acls\":[]}", "\"version\" is not 1");
    BAD("{\"version\":\"1\",\"acls\":[]}", "\"version\" is not 1");
    BAD("{\"version\":1.0,\"acls\":[]}", "\"version\" is not 1");
    BAD("{\"version\":1}", "no \"acls\"");
    BAD("{\"version\":1,\"acls\":{}}", "\"acls\" is not a list");
    BAD("{\"version\":1,\"acls\":null}", "\"acls\" is not a list");
    BAD("{\"version\":1,\"acls\":[],\"extra\":0}", "unknown key \"extra\"");
    BAD("{\"version\":1,\"version\":1,\"acls\":[]}", "duplicate");
    /* an entry's shape */
    BAD("{\"version\":1,\"acls\":[1]}", "acls[0] is not an object");
    BAD("{\"version\":1,\"acls\":[" GUEST_READ ",[]]}", "acls[1] is not an object");
    BAD("{\"version\":1,\"acls\":[{\"principal_type\":\"User\",\"principal_name\":\"g\","
        "\"permission_type\":\"ALLOW\",\"operation\":\"READ\"}]}", "acls[0] has no \"host\"");
    BAD(ENTRY("null", "\"g\"", "\"ALLOW\"", "\"*\"", "\"READ\""),
        "acls[0].principal_type is not a string");
    BAD(ENTRY("\"User\"", "7", "\"ALLOW\"", "\"*\"", "\"READ\""),
        "acls[0].principal_name is not a string");
    BAD(ENTRY("\"User\"", "\"g\"", "2", "\"*\"", "\"READ\""),
        "acls[0].permission_type is not a string");
    BAD(ENTRY("\"User\"", "\"g\"", "\"ALLOW\"", "[]", "\"READ\""), "acls[0].host is not a string");
    BAD(ENTRY("\"User\"", "\"g\"", "\"ALLOW\"", "\"*\"", "3"), "acls[0].operation is not a string");
    BAD("{\"version\":1,\"acls\":[{\"principal_type\":\"User\",\"principal_name\":\"g\","
        "\"permission_type\":\"ALLOW\",\"host\":\"*\",\"operation\":\"READ\",\"x\":1}]}",
        "acls[0] has an unknown key \"x\"");
    /* names: the exact enum names only (Enum.valueOf) */
    BAD(ENTRY("\"User\"", "\"g\"", "\"DENY\"", "\"*\"", "\"READ\""),
        "acls[0].permission_type \"DENY\" is not a permission type");
    BAD(ENTRY("\"User\"", "\"g\"", "\"allow\"", "\"*\"", "\"READ\""),
        "acls[0].permission_type \"allow\"");
    BAD(ENTRY("\"User\"", "\"g\"", "\"ALLOW\"", "\"*\"", "\"DELETE\""),
        "acls[0].operation \"DELETE\" is not an operation type");
    BAD(ENTRY("\"User\"", "\"g\"", "\"ALLOW\"", "\"*\"", "\"read\""), "acls[0].operation \"read\"");
    BAD(ENTRY("\"User\"", "\"g\"", "\"ALLOW\"", "\"*\"", "\"\""), "acls[0].operation \"\"");
    /* bounds: one string, and the whole text */
    size_t big = FL_ACL_STRING_MAX + 1;
    char *doc = malloc(big + 256);
    char *p = doc + sprintf(doc, "{\"version\":1,\"acls\":[{\"principal_type\":\"User\","
                                 "\"principal_name\":\"");
    memset(p, 'n', big);
    p += big;
    sprintf(p, "\",\"permission_type\":\"ALLOW\",\"host\":\"*\",\"operation\":\"READ\"}]}");
    BAD(doc, "acls[0].principal_name is 65537 bytes, over 65536");
    /* exactly at the bound is fine */
    memmove(doc + (p - doc) - 1, p, strlen(p) + 1);
    fl_acl_set_t *s = fl_acl_set_new();
    fl_error_t err;
    assert_int_equal(fl_acl_set_load_resource(s, TB, "db.t", doc, strlen(doc), &err), 0);
    assert_int_equal(strlen(fl_acl_set_at(s, 0)->principal_name), FL_ACL_STRING_MAX);
    fl_acl_set_free(s);
    free(doc);
    expect_bad_json("{}", (size_t)FL_ACL_JSON_BYTES_MAX + 1, "bytes, over");
    /* deep nesting is refused by the parser, not a stack overflow */
    size_t depth = 100000;
    doc = malloc(2 * depth + 64);
    p = doc + sprintf(doc, "{\"version\":1,\"acls\":[");
    memset(p, '[', depth);
    p += depth;
    memset(p, ']', depth);
    p += depth;
    sprintf(p, "]}");
    BAD(doc, "not JSON");
    free(doc);
}

/* FlussAuthorizationITCase's decisions (acl_facts.md §8): root is the
 * super user, guest holds what each test grants */
typedef struct itcase {
    fl_acl_set_t *s;
    fl_acl_super_users_t *su;
    fl_acl_principal_t guest, root;
} itcase_t;

static void itcase_init(itcase_t *t) {
    fl_error_t err;
    t->s = fl_acl_set_new();
    assert_int_equal(fl_acl_super_users_parse("User:root", &t->su, &err), 0);
    t->guest = (fl_acl_principal_t){.type = "User", .name = "guest"};
    t->root = (fl_acl_principal_t){.type = "User", .name = "root"};
}

static void itcase_reset(itcase_t *t) {
    fl_acl_set_free(t->s);
    fl_acl_super_users_free(t->su);
    itcase_init(t);
}

static bool guest_can(const itcase_t *t, int32_t op, int32_t type, const char *res) {
    return fl_acl_authorized(t->s, t->su, &t->guest, "127.0.0.1", op, type, res);
}

/* guest's denial, as the test expects it */
static void expect_denied(const itcase_t *t, int32_t op, int32_t type, const char *res,
                          const char *msg) {
    assert_false(guest_can(t, op, type, res));
    char buf[512];
    fl_acl_denial_message(buf, sizeof(buf), &t->guest, op, type, res);
    assert_string_equal(buf, msg);
}

#define DENIAL \
    "Principal FlussPrincipal{name='guest', type='User'} have no authorization to operate "
#define PK "test_db_1.test_pk_table_1"

static void test_itcase_databases_and_tables(void **state) {
    (void)state;
    itcase_t t;
    itcase_init(&t);
    /* testListDatabases: nothing; DATABASE fluss DESCRIBE; cluster ALL */
    assert_false(guest_can(&t, FL_ACL_OP_DESCRIBE, DB, "fluss"));
    assert_false(guest_can(&t, FL_ACL_OP_DESCRIBE, DB, "test_db_1"));
    assert_true(fl_acl_authorized(t.s, t.su, &t.root, "127.0.0.1", FL_ACL_OP_DESCRIBE, DB,
                                  "test_db_1"));
    grant(t.s, DB, "fluss", "guest", FL_ACL_OP_DESCRIBE);
    assert_true(guest_can(&t, FL_ACL_OP_DESCRIBE, DB, "fluss"));
    assert_false(guest_can(&t, FL_ACL_OP_DESCRIBE, DB, "test_db_1"));
    grant(t.s, CL, CLUSTER, "guest", FL_ACL_OP_ALL);
    assert_true(guest_can(&t, FL_ACL_OP_DESCRIBE, DB, "fluss"));
    assert_true(guest_can(&t, FL_ACL_OP_DESCRIBE, DB, "test_db_1"));
    itcase_reset(&t);
    /* testAlterDatabase: createDatabase needs CREATE on the cluster */
    expect_denied(&t, FL_ACL_OP_CREATE, CL, CLUSTER,
                  DENIAL "CREATE on resource Resource{type=CLUSTER, name='fluss-cluster'} ");
    grant(t.s, CL, CLUSTER, "guest", FL_ACL_OP_CREATE);
    assert_true(guest_can(&t, FL_ACL_OP_CREATE, CL, CLUSTER));
    itcase_reset(&t);
    /* testAlterTable: createTable needs CREATE on its database */
    expect_denied(&t, FL_ACL_OP_CREATE, DB, "test_db_1",
                  DENIAL "CREATE on resource Resource{type=DATABASE, name='test_db_1'} ");
    grant(t.s, DB, "test_db_1", "guest", FL_ACL_OP_CREATE);
    assert_true(guest_can(&t, FL_ACL_OP_CREATE, DB, "test_db_1"));
    itcase_reset(&t);
    /* testDescribeTableOperation / testGetKvSnapshotMetadata: DESCRIBE on
     * the table, granted through its database */
    assert_false(guest_can(&t, FL_ACL_OP_DESCRIBE, TB, PK));
    expect_denied(&t, FL_ACL_OP_DESCRIBE, TB, PK,
                  DENIAL "DESCRIBE on resource Resource{type=TABLE, name='" PK "'} ");
    grant(t.s, DB, "test_db_1", "guest", FL_ACL_OP_DESCRIBE);
    assert_true(guest_can(&t, FL_ACL_OP_DESCRIBE, TB, PK));
    assert_false(guest_can(&t, FL_ACL_OP_READ, TB, PK));
    itcase_reset(&t);
    /* testGetMetaInfo: TABLE DESCRIBE on the one table */
    assert_false(guest_can(&t, FL_ACL_OP_DESCRIBE, TB, PK));
    grant(t.s, TB, PK, "guest", FL_ACL_OP_DESCRIBE);
    assert_true(guest_can(&t, FL_ACL_OP_DESCRIBE, TB, PK));
    assert_false(guest_can(&t, FL_ACL_OP_DESCRIBE, TB, "test_db_1.test_non_pk_table_1"));
    fl_acl_set_free(t.s);
    fl_acl_super_users_free(t.su);
}

static void test_itcase_data(void **state) {
    (void)state;
    itcase_t t;
    itcase_init(&t);
    /* testInitWriter / testProduceWithNoWriteAuthorization */
    grant(t.s, TB, "test_db_1.write_acl_table_1", "guest", FL_ACL_OP_WRITE);
    grant(t.s, TB, "test_db_1.no_write_acl_table_1", "guest", FL_ACL_OP_READ);
    assert_true(guest_can(&t, FL_ACL_OP_WRITE, TB, "test_db_1.write_acl_table_1"));
    expect_denied(&t, FL_ACL_OP_WRITE, TB, "test_db_1.no_write_acl_table_1",
                  DENIAL "WRITE on resource Resource{type=TABLE, "
                         "name='test_db_1.no_write_acl_table_1'} ");
    assert_false(guest_can(&t, FL_ACL_OP_WRITE, TB, "test_db_1.no_write_acl_table"));
    itcase_reset(&t);
    /* testProduceAndConsumer: WRITE, then a scan needs READ */
    const char *log = "test_db_1.test_non_pk_table_1";
    grant(t.s, TB, log, "guest", FL_ACL_OP_WRITE);
    assert_true(guest_can(&t, FL_ACL_OP_WRITE, TB, log));
    expect_denied(&t, FL_ACL_OP_READ, TB, log,
                  DENIAL "READ on resource Resource{type=TABLE, "
                         "name='test_db_1.test_non_pk_table_1'} ");
    grant(t.s, TB, log, "guest", FL_ACL_OP_READ);
    assert_true(guest_can(&t, FL_ACL_OP_READ, TB, log));
    itcase_reset(&t);
    /* leases need READ, producer offsets WRITE, on the table */
    expect_denied(&t, FL_ACL_OP_READ, TB, PK,
                  DENIAL "READ on resource Resource{type=TABLE, name='" PK "'} ");
    expect_denied(&t, FL_ACL_OP_WRITE, TB, PK,
                  DENIAL "WRITE on resource Resource{type=TABLE, name='" PK "'} ");
    grant(t.s, TB, PK, "guest", FL_ACL_OP_READ);
    assert_true(guest_can(&t, FL_ACL_OP_READ, TB, PK));
    assert_false(guest_can(&t, FL_ACL_OP_WRITE, TB, PK));
    /* root dropAcls(ANY), then the READ is gone */
    fl_acl_binding_t *gone = NULL;
    size_t n_gone = 0;
    fl_acl_set_remove(t.s, F(.resource_type = FL_ACL_RES_ANY), &gone, &n_gone);
    assert_int_equal(n_gone, 1);
    fl_acl_binding_clear(&gone[0]);
    fl_free(gone);
    assert_false(guest_can(&t, FL_ACL_OP_READ, TB, PK));
    fl_acl_set_free(t.s);
    fl_acl_super_users_free(t.su);
}

static void test_itcase_cluster(void **state) {
    (void)state;
    itcase_t t;
    itcase_init(&t);
    /* testDynamicConfigs: describe needs DESCRIBE, alter ALTER (cluster) */
    expect_denied(&t, FL_ACL_OP_DESCRIBE, CL, CLUSTER,
                  DENIAL "DESCRIBE on resource Resource{type=CLUSTER, name='fluss-cluster'} ");
    grant(t.s, CL, CLUSTER, "guest", FL_ACL_OP_DESCRIBE);
    assert_true(guest_can(&t, FL_ACL_OP_DESCRIBE, CL, CLUSTER));
    expect_denied(&t, FL_ACL_OP_ALTER, CL, CLUSTER,
                  DENIAL "ALTER on resource Resource{type=CLUSTER, name='fluss-cluster'} ");
    grant(t.s, CL, CLUSTER, "guest", FL_ACL_OP_ALTER);
    assert_true(guest_can(&t, FL_ACL_OP_ALTER, CL, CLUSTER));
    itcase_reset(&t);
    /* testRebalance / testCancelRebalance: WRITE on the cluster */
    expect_denied(&t, FL_ACL_OP_WRITE, CL, CLUSTER,
                  DENIAL "WRITE on resource Resource{type=CLUSTER, name='fluss-cluster'} ");
    grant(t.s, CL, CLUSTER, "guest", FL_ACL_OP_WRITE);
    assert_true(guest_can(&t, FL_ACL_OP_WRITE, CL, CLUSTER));
    /* testListRebalanceProgress: DESCRIBE, implied by the WRITE */
    assert_true(guest_can(&t, FL_ACL_OP_DESCRIBE, CL, CLUSTER));
    fl_acl_set_free(t.s);
    fl_acl_super_users_free(t.su);
}

static void test_itcase_acl_operation(void **state) {
    (void)state;
    itcase_t t;
    itcase_init(&t);
    /* guest lists what it may DESCRIBE: nothing yet */
    grant(t.s, CL, CLUSTER, "guest", FL_ACL_OP_DESCRIBE);
    assert_true(guest_can(&t, FL_ACL_OP_DESCRIBE, CL, CLUSTER));
    /* createAcls checks ALTER on each resource (a table's database) */
    const fl_acl_binding_t three[] = {
        bind(TB, "test_db.test_table", "User", "user1", "*", FL_ACL_OP_CREATE, FL_ACL_PERM_ALLOW),
        bind(DB, "test_db2", "test_role", "ROLE", "127.0.0.1", FL_ACL_OP_DROP, FL_ACL_PERM_ANY),
        bind(CL, CLUSTER, "test_role", "ROLE", "127.0.0.1", FL_ACL_OP_DROP, FL_ACL_PERM_ALLOW),
    };
    assert_false(guest_can(&t, FL_ACL_OP_ALTER, DB, "test_db"));
    assert_false(guest_can(&t, FL_ACL_OP_ALTER, CL, CLUSTER));
    /* root grants cluster ALTER to ("*","*") */
    fl_acl_binding_t any_alter = bind(CL, CLUSTER, "*", "*", "*", FL_ACL_OP_ALTER,
                                      FL_ACL_PERM_ALLOW);
    assert_true(fl_acl_set_add(t.s, &any_alter));
    assert_true(guest_can(&t, FL_ACL_OP_ALTER, DB, "test_db"));
    assert_true(guest_can(&t, FL_ACL_OP_ALTER, DB, "test_db2"));
    assert_true(guest_can(&t, FL_ACL_OP_ALTER, CL, CLUSTER));
    for (size_t i = 0; i < 3; i++) assert_true(fl_acl_set_add(t.s, &three[i]));
    assert_int_equal(fl_acl_set_count(t.s), 5);
    /* listAcls(ResourceFilter.ANY, (user1, host any, op ANY, ALLOW)) */
    const fl_acl_filter_t *user1 = F(.resource_type = FL_ACL_RES_ANY, .principal_type = "User",
                                     .principal_name = "user1", .permission = FL_ACL_PERM_ALLOW);
    size_t hits = 0;
    for (size_t i = 0; i < fl_acl_set_count(t.s); i++) {
        const fl_acl_binding_t *b = fl_acl_set_at(t.s, i);
        if (guest_can(&t, FL_ACL_OP_DESCRIBE, b->resource_type, b->resource_name) &&
            fl_acl_filter_matches(user1, b)) {
            assert_true(fl_acl_binding_equal(b, &three[0]));
            hits++;
        }
    }
    assert_int_equal(hits, 1);
    /* guest dropAcls([ANY]) takes all five */
    fl_acl_binding_t *gone = NULL;
    size_t n_gone = 0;
    assert_int_equal(fl_acl_set_remove(t.s, F(.resource_type = FL_ACL_RES_ANY), &gone, &n_gone),
                     5);
    assert_int_equal(fl_acl_set_count(t.s), 0);
    for (size_t i = 0; i < n_gone; i++) fl_acl_binding_clear(&gone[i]);
    fl_free(gone);
    fl_acl_set_free(t.s);
    fl_acl_super_users_free(t.su);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_implication),
        cmocka_unit_test(test_hierarchy),
        cmocka_unit_test(test_principal_and_host),
        cmocka_unit_test(test_super_users),
        cmocka_unit_test(test_set_add_order_copy),
        cmocka_unit_test(test_binding_check),
        cmocka_unit_test(test_remove_filters),
        cmocka_unit_test(test_remove_bookkeeping),
        cmocka_unit_test(test_denial_message),
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_json_refusals),
        cmocka_unit_test(test_itcase_databases_and_tables),
        cmocka_unit_test(test_itcase_data),
        cmocka_unit_test(test_itcase_cluster),
        cmocka_unit_test(test_itcase_acl_operation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
