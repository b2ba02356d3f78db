/*
 * test_auth_plain.c — the JAAS entry parser (the forms Fluss's docs and
 * Kafka's use, quoting, escapes, the errors, no secret in an error) and
 * SASL/PLAIN's check as 0.9.1's PlainSaslServer answers it: every
 * message shape, its exact words, the same words for an unknown user and a
 * wrong password, authzid rules, and passwords that share a prefix.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "auth_jaas.h"
#include "auth_plain.h"

#define MODULE "org.apache.fluss.security.auth.sasl.plain.PlainLoginModule"

static void test_jaas_forms(void **state) {
    (void)state;
    fl_jaas_entry_t e;
    fl_error_t err;
    assert_int_equal(fl_jaas_parse(MODULE " required user_admin=\"admin-pass\" "
                                          "user_bob=\"bob-pass\";", &e, &err), 0);
    assert_string_equal(e.module, MODULE);
    assert_string_equal(e.flag, "required");
    assert_int_equal(e.option_count, 2);
    assert_string_equal(fl_jaas_option(&e, "user_admin"), "admin-pass");
    assert_string_equal(fl_jaas_option(&e, "user_bob"), "bob-pass");
    assert_null(fl_jaas_option(&e, "user_carol"));
    fl_jaas_entry_free(&e);
    /* newlines, bare words, escapes, an empty value, trailing spaces */
    assert_int_equal(fl_jaas_parse("\n  " MODULE "\n  optional\n  username=admin\n"
                                   "  password=\"a \\\"q\\\" \\\\ b\"  user_x=\"\" ;  \n",
                                   &e, &err), 0);
    assert_string_equal(e.flag, "optional");
    assert_string_equal(fl_jaas_option(&e, "username"), "admin");
    assert_string_equal(fl_jaas_option(&e, "password"), "a \"q\" \\ b");
    assert_string_equal(fl_jaas_option(&e, "user_x"), "");
    fl_jaas_entry_free(&e);
}

static void expect_bad_jaas(const char *text, const char *words) {
    fl_jaas_entry_t e;
    fl_error_t err;
    fl_err_clear(&err);
    if (fl_jaas_parse(text, &e, &err) == 0) fail_msg("accepted: %s", text);
    fl_jaas_entry_free(&e);
    assert_int_equal(err.code, FLUSS_ERR__INVALID_ARG);
    if (!strstr(err.msg, words)) fail_msg("'%s': error '%s' lacks '%s'", text, err.msg, words);
    /* a password is never repeated in an error */
    assert_null(strstr(err.msg, "s3cret"));
}

static void test_jaas_errors(void **state) {
    (void)state;
    expect_bad_jaas("", "login module class");
    expect_bad_jaas(MODULE, "control flag");
    expect_bad_jaas(MODULE " always user_a=\"s3cret\";", "control flag");
    expect_bad_jaas(MODULE " required user_a=\"s3cret\"", "missing ';'");
    expect_bad_jaas(MODULE " required user_a=\"s3cret;", "no closing quote");
    expect_bad_jaas(MODULE " required user_a \"s3cret\";", "has no '='");
    expect_bad_jaas(MODULE " required user_a=;", "has no value");
    expect_bad_jaas(MODULE " required user_a=\"s3cret\" user_a=\"s3cret\";", "given twice");
    expect_bad_jaas(MODULE " required user_a=\"s3cret\"; " MODULE " required;", "more than one");
    expect_bad_jaas(MODULE " required =\"s3cret\";", "unexpected character");
}

static fl_plain_users_t *users(void) {
    fl_jaas_entry_t e;
    fl_error_t err;
    assert_int_equal(fl_jaas_parse(MODULE " required user_admin=\"admin-pass\" user_bob=\"bob\" "
                                          "username=\"ignored\" user_=\"nameless\";",
                                   &e, &err), 0);
    fl_plain_users_t *u = fl_plain_users_from_jaas(&e);
    fl_jaas_entry_free(&e);
    assert_int_equal(fl_plain_users_count(u), 2);
    return u;
}

static void expect_plain(const fl_plain_users_t *u, const char *msg, size_t len, const char *words) {
    char user[FL_PRINCIPAL_MAX];
    fl_error_t err;
    fl_err_clear(&err);
    int rc = fl_plain_authenticate(u, (const uint8_t *)msg, len, user, sizeof(user), &err);
    if (!words) {
        if (rc) fail_msg("refused: %s", err.msg);
        return;
    }
    assert_int_equal(rc, FLUSS_ERR_AUTHENTICATE_EXCEPTION);
    assert_string_equal(err.msg, words);
}

#define M(lit) lit, sizeof(lit) - 1
#define BAD "Authentication failed: Invalid username or password"

static void test_plain(void **state) {
    (void)state;
    fl_plain_users_t *u = users();
    char user[FL_PRINCIPAL_MAX];
    fl_error_t err;
    assert_int_equal(fl_plain_authenticate(u, (const uint8_t *)"\0admin\0admin-pass", 17, user,
                                           sizeof(user), &err), 0);
    assert_string_equal(user, "admin");
    assert_int_equal(fl_plain_authenticate(u, (const uint8_t *)"bob\0bob\0bob", 11, user,
                                           sizeof(user), &err), 0);
    assert_string_equal(user, "bob");
    /* wrong password, unknown user, prefixes, case: the same words */
    expect_plain(u, M("\0admin\0admin-pas"), BAD);
    expect_plain(u, M("\0admin\0admin-pass "), BAD);
    expect_plain(u, M("\0Admin\0admin-pass"), BAD);
    expect_plain(u, M("\0carol\0admin-pass"), BAD);
    expect_plain(u, M("\0\0admin-pass"), "Authentication failed: username not specified");
    expect_plain(u, M("\0admin\0"), "Authentication failed: password not specified");
    expect_plain(u, M("\0\0"), "Authentication failed: username not specified");
    /* user_ with no name is no user */
    expect_plain(u, M("\0\0nameless"), "Authentication failed: username not specified");
    expect_plain(u, M("\0username\0ignored"), BAD);
    /* the shapes 0.9.1 counts: at most four parts */
    expect_plain(u, M(""), "Invalid SASL/PLAIN response: expected 3 tokens, got 1");
    expect_plain(u, M("admin"), "Invalid SASL/PLAIN response: expected 3 tokens, got 1");
    expect_plain(u, M("admin\0admin-pass"), "Invalid SASL/PLAIN response: expected 3 tokens, got 2");
    expect_plain(u, M("\0admin\0admin-pass\0"), "Invalid SASL/PLAIN response: expected 3 tokens, got 4");
    expect_plain(u, M("a\0b\0c\0d\0e\0f"), "Invalid SASL/PLAIN response: expected 3 tokens, got 4");
    /* authzid: empty or the user itself, checked after the password */
    expect_plain(u, M("admin\0admin\0admin-pass"), NULL);
    expect_plain(u, M("bob\0admin\0admin-pass"),
                 "Authentication failed: Client requested an authorization id that is different "
                 "from username");
    expect_plain(u, M("bob\0admin\0wrong"), BAD);
    /* no users: everything fails the same way */
    expect_plain(NULL, M("\0admin\0admin-pass"), BAD);
    fl_plain_users_free(u);
}

static void test_plain_message(void **state) {
    (void)state;
    uint8_t buf[64];
    size_t n = fl_plain_message("admin", "pw", buf, sizeof(buf));
    assert_int_equal(n, 9);
    assert_memory_equal(buf, "\0admin\0pw", 9);
    assert_int_equal(fl_plain_message("admin", "pw", buf, 8), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jaas_forms),
        cmocka_unit_test(test_jaas_errors),
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_plain_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
