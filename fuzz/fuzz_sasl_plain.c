/*
 * fuzz_sasl_plain.c — what a client or an operator hands the SASL layer
 * before anything is trusted: the input's first byte picks the JAAS
 * parser (a server.yaml value) or the PLAIN message check (an
 * AUTHENTICATE token from the network). A JAAS entry that parses has a
 * module, a known flag and named options; a PLAIN message is accepted
 * only for the one configured user with its exact password, and
 * otherwise answered with one of 0.9.1's messages.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth_jaas.h"
#include "auth_plain.h"
#include "fuzz_common.h"

static const char *const WORDS[] = {
    "Invalid SASL/PLAIN response: expected 3 tokens, got ",
    "Authentication failed: username not specified",
    "Authentication failed: password not specified",
    "Authentication failed: Invalid username or password",
    "Authentication failed: Client requested an authorization id that is different from username",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    uint8_t pick = data[0];
    data++, size--;
    if (pick & 1) {
        char *text = malloc(size + 1);
        memcpy(text, data, size);
        text[size] = '\0';
        fl_jaas_entry_t e;
        fl_error_t err;
        if (fl_jaas_parse(text, &e, &err) == 0) {
            FUZZ_CHECK(e.module && e.module[0] && e.flag);
            for (size_t i = 0; i < e.option_count; i++) {
                FUZZ_CHECK(e.options[i].name[0]);
                FUZZ_CHECK(strlen(e.options[i].value) <= FL_JAAS_VALUE_MAX);
                FUZZ_CHECK(fl_jaas_option(&e, e.options[i].name) == e.options[i].value);
            }
            fl_plain_users_free(fl_plain_users_from_jaas(&e));
        }
        fl_jaas_entry_free(&e);
        free(text);
        return 0;
    }
    static fl_plain_users_t *users;
    if (!users) {
        fl_jaas_entry_t e;
        fl_error_t err;
        FUZZ_CHECK(fl_jaas_parse("m required user_admin=\"admin-pass\";", &e, &err) == 0);
        users = fl_plain_users_from_jaas(&e);
        fl_jaas_entry_free(&e);
    }
    char user[FL_PRINCIPAL_MAX];
    fl_error_t err;
    int rc = fl_plain_authenticate(users, data, size, user, sizeof(user), &err);
    if (rc == 0) {
        FUZZ_CHECK(strcmp(user, "admin") == 0);
        static const char good[] = "\0admin\0admin-pass";
        static const char good_authz[] = "admin\0admin\0admin-pass";
        FUZZ_CHECK((size == sizeof(good) - 1 && memcmp(data, good, size) == 0) ||
                   (size == sizeof(good_authz) - 1 && memcmp(data, good_authz, size) == 0));
        return 0;
    }
    FUZZ_CHECK(rc == FLUSS_ERR_AUTHENTICATE_EXCEPTION);
    int known = 0;
    for (size_t i = 0; i < sizeof(WORDS) / sizeof(WORDS[0]); i++)
        known |= strncmp(err.msg, WORDS[i], strlen(WORDS[i])) == 0;
    FUZZ_CHECK(known);
    /* never a password in an answer */
    FUZZ_CHECK(strstr(err.msg, "admin-pass") == NULL);
    return 0;
}
