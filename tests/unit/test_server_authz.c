/*
 * test_server_authz.c — the published ACL sets of server_authz.h under
 * load: reader threads decide (fl_authz_allowed, and held views over many
 * checks) while a writer publishes new sets, each of which either grants
 * READ on one table to the principal or not; a reader must see one whole
 * set (never a freed or half-made one) and, once the last set is
 * published, its answer. Also the decision's inputs: trusted requests,
 * super users, the disabled authorizer. Runs under ThreadSanitizer in
 * `make test-tsan`.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "server_authz.h"
#include "server_config.h"
#include "server_node.h"

static fl_authz_t *new_authz(const char *super_users) {
    fl_config_t cfg;
    fl_config_init(&cfg);
    fl_config_set(&cfg, "authorizer.enabled", "true");
    if (super_users) fl_config_set(&cfg, "super.users", super_users);
    fl_authz_t *a = NULL;
    fl_error_t err;
    assert_int_equal(fl_authz_new(&cfg, &a, &err), 0);
    assert_non_null(a);
    fl_config_free(&cfg);
    return a;
}

static fl_req_ctx_t ctx_of(const char *name) {
    fl_req_ctx_t c;
    memset(&c, 0, sizeof(c));
    snprintf(c.who.type, sizeof(c.who.type), "User");
    snprintf(c.who.name, sizeof(c.who.name), "%s", name);
    snprintf(c.who.host, sizeof(c.who.host), "127.0.0.1");
    return c;
}

/* A set granting READ on db.t<i> to guest for i < n (and some noise). */
static fl_acl_set_t *set_of(int n) {
    fl_acl_set_t *s = fl_acl_set_new();
    for (int i = 0; i < n; i++) {
        char table[32];
        snprintf(table, sizeof(table), "db.t%d", i);
        fl_acl_binding_t b = {.resource_type = FL_ACL_RES_TABLE, .resource_name = table,
                              .principal_type = "User", .principal_name = "guest",
                              .host = "*", .operation = FL_ACL_OP_READ,
                              .permission = FL_ACL_PERM_ALLOW};
        fl_acl_set_add(s, &b);
        b.principal_name = "other";
        fl_acl_set_add(s, &b);
    }
    return s;
}

typedef struct reader {
    fl_authz_t *a;
    atomic_bool *stop;
    atomic_long checks;
    bool broken;
} reader_t;

static void *read_loop(void *arg) {
    reader_t *r = arg;
    fl_req_ctx_t c = ctx_of("guest");
    while (!atomic_load(r->stop)) {
        /* sets are published growing: t<k> allowed implies t<j> for j < k
         * within one view */
        fl_authz_view_t *v = fl_authz_acquire(r->a);
        bool later = fl_authz_allowed_in(r->a, v, &c, FL_ACL_OP_READ, FL_ACL_RES_TABLE, "db.t7");
        bool earlier = fl_authz_allowed_in(r->a, v, &c, FL_ACL_OP_READ, FL_ACL_RES_TABLE, "db.t3");
        if (later && !earlier) r->broken = true;
        fl_authz_release(v);
        (void)fl_authz_allowed(r->a, &c, FL_ACL_OP_DESCRIBE, FL_ACL_RES_TABLE, "db.t5");
        atomic_fetch_add(&r->checks, 1);
    }
    return NULL;
}

static void test_publish_while_checking(void **state) {
    (void)state;
    fl_authz_t *a = new_authz(NULL);
    atomic_bool stop;
    atomic_init(&stop, false);
    reader_t rs[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        rs[i] = (reader_t){.a = a, .stop = &stop};
        atomic_init(&rs[i].checks, 0);
        pthread_create(&th[i], NULL, read_loop, &rs[i]);
    }
    /* publish until every reader has decided many times meanwhile */
    for (int round = 0;; round++) {
        fl_authz_publish(a, set_of(round % 12));
        bool enough = round >= 200;
        for (int i = 0; i < 3; i++) enough = enough && atomic_load(&rs[i].checks) >= 200;
        if (enough) break;
    }
    fl_authz_publish(a, set_of(10));
    atomic_store(&stop, true);
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        assert_false(rs[i].broken);
        assert_true(atomic_load(&rs[i].checks) >= 200);
    }
    fl_req_ctx_t guest = ctx_of("guest"), other = ctx_of("nobody");
    assert_true(fl_authz_allowed(a, &guest, FL_ACL_OP_READ, FL_ACL_RES_TABLE, "db.t9"));
    assert_false(fl_authz_allowed(a, &guest, FL_ACL_OP_READ, FL_ACL_RES_TABLE, "db.t10"));
    assert_false(fl_authz_allowed(a, &other, FL_ACL_OP_READ, FL_ACL_RES_TABLE, "db.t1"));
    fl_authz_free(a);
}

static void test_inputs(void **state) {
    (void)state;
    fl_authz_t *a = new_authz("User:root; User:ops");
    fl_req_ctx_t root = ctx_of("root"), guest = ctx_of("guest"), trusted = ctx_of("guest");
    trusted.who.trusted = true;
    assert_true(fl_authz_allowed(a, &root, FL_ACL_OP_ALL, FL_ACL_RES_CLUSTER, "fluss-cluster"));
    assert_true(fl_authz_allowed(a, &trusted, FL_ACL_OP_DROP, FL_ACL_RES_TABLE, "db.t"));
    fl_error_t err;
    assert_int_equal(fl_authz_require_table(a, &guest, FL_ACL_OP_DROP, "db", "t", &err),
                     FLUSS_ERR_AUTHORIZATION_EXCEPTION);
    assert_string_equal(err.msg, "Principal FlussPrincipal{name='guest', type='User'} have no "
                                 "authorization to operate DROP on resource "
                                 "Resource{type=TABLE, name='db.t'} ");
    /* the host of an ACL is the client's address, or "*" */
    fl_acl_set_t *s = fl_acl_set_new();
    fl_acl_binding_t b = {.resource_type = FL_ACL_RES_DATABASE, .resource_name = "db",
                          .principal_type = "User", .principal_name = "guest",
                          .host = "10.0.0.1", .operation = FL_ACL_OP_ALL,
                          .permission = FL_ACL_PERM_ALLOW};
    fl_acl_set_add(s, &b);
    fl_authz_publish(a, s);
    assert_false(fl_authz_allowed_table(a, &guest, FL_ACL_OP_READ, "db", "t"));
    snprintf(guest.who.host, sizeof(guest.who.host), "10.0.0.1");
    assert_true(fl_authz_allowed_table(a, &guest, FL_ACL_OP_READ, "db", "t"));
    fl_authz_free(a);
    /* disabled: no object, everything passes */
    fl_config_t cfg;
    fl_config_init(&cfg);
    fl_authz_t *none = (fl_authz_t *)&cfg;
    assert_int_equal(fl_authz_new(&cfg, &none, &err), 0);
    assert_null(none);
    assert_true(fl_authz_allowed(NULL, &guest, FL_ACL_OP_ALL, FL_ACL_RES_CLUSTER, "fluss-cluster"));
    fl_config_free(&cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_publish_while_checking),
        cmocka_unit_test(test_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
