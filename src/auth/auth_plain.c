/*
 * auth_plain.c — SASL/PLAIN users and message check (auth_plain.h).
 */
#include "auth_plain.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"

#define FL_PLAIN_DIGEST 32
#define FL_PLAIN_USER_PREFIX "user_"

typedef struct fl_plain_user {
    char *name;
    uint8_t digest[FL_PLAIN_DIGEST];
} fl_plain_user_t;

struct fl_plain_users {
    fl_plain_user_t *users;
    size_t count;
};

static void fl_plain_digest(const uint8_t *p, size_t n, uint8_t out[FL_PLAIN_DIGEST]) {
    unsigned len = 0;
    if (!EVP_Digest(p, n, out, &len, EVP_sha256(), NULL) || len != FL_PLAIN_DIGEST)
    {
        fprintf(stderr, "fatal: SHA-256 failed\n");
        abort();
    }
}

fl_plain_users_t *fl_plain_users_from_jaas(const fl_jaas_entry_t *e) {
    fl_plain_users_t *u = fl_calloc(1, sizeof(*u));
    size_t plen = strlen(FL_PLAIN_USER_PREFIX);
    for (size_t i = 0; i < e->option_count; i++) {
        const fl_jaas_option_t *o = &e->options[i];
        if (strncmp(o->name, FL_PLAIN_USER_PREFIX, plen) != 0 || !o->name[plen]) continue;
        if (strlen(o->name + plen) >= FL_PRINCIPAL_MAX) continue; /* no client can name it */
        u->users = fl_realloc(u->users, (u->count + 1) * sizeof(*u->users));
        fl_plain_user_t *x = &u->users[u->count++];
        x->name = fl_strdup(o->name + plen);
        fl_plain_digest((const uint8_t *)o->value, strlen(o->value), x->digest);
    }
    return u;
}

void fl_plain_users_free(fl_plain_users_t *u) {
    if (!u) return;
    for (size_t i = 0; i < u->count; i++) {
        OPENSSL_cleanse(u->users[i].digest, FL_PLAIN_DIGEST);
        fl_free(u->users[i].name);
    }
    fl_free(u->users);
    fl_free(u);
}

size_t fl_plain_users_count(const fl_plain_users_t *u) { return u ? u->count : 0; }

/* A part of msg: [start, end) up to the next NUL. */
typedef struct fl_plain_part {
    const uint8_t *p;
    size_t n;
} fl_plain_part_t;

int fl_plain_authenticate(const fl_plain_users_t *u, const uint8_t *msg, size_t len, char *user,
                          size_t cap, fl_error_t *err) {
    /* as 0.9.1 splits it: at most four parts, the last one is the rest */
    fl_plain_part_t parts[4];
    size_t count = 0, start = 0;
    while (count < 4) {
        const uint8_t *nul = start < len ? memchr(msg + start, 0, len - start) : NULL;
        if (!nul) {
            parts[count++] = (fl_plain_part_t){msg + start, len - start};
            break;
        }
        size_t end = (size_t)(nul - msg);
        parts[count++] = (fl_plain_part_t){msg + start, end - start};
        start = end + 1;
    }
    if (count != 3)
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                          "Invalid SASL/PLAIN response: expected 3 tokens, got %zu", count);
    const fl_plain_part_t *authz = &parts[0], *name = &parts[1], *pass = &parts[2];
    if (name->n == 0)
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                          "Authentication failed: username not specified");
    if (pass->n == 0)
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                          "Authentication failed: password not specified");
    uint8_t got[FL_PLAIN_DIGEST], want[FL_PLAIN_DIGEST];
    fl_plain_digest(pass->p, pass->n, got);
    /* an unknown user is compared against a digest no password has */
    memset(want, 0xa5, sizeof(want));
    const fl_plain_user_t *found = NULL;
    for (size_t i = 0; u && i < u->count; i++) {
        const char *n = u->users[i].name;
        if (strlen(n) == name->n && memcmp(n, name->p, name->n) == 0) found = &u->users[i];
    }
    if (found) memcpy(want, found->digest, sizeof(want));
    int differs = CRYPTO_memcmp(got, want, sizeof(got));
    OPENSSL_cleanse(got, sizeof(got));
    if (!found || differs || name->n >= cap)
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                          "Authentication failed: Invalid username or password");
    if (authz->n && (authz->n != name->n || memcmp(authz->p, name->p, name->n) != 0))
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                          "Authentication failed: Client requested an authorization id that is "
                          "different from username");
    memcpy(user, name->p, name->n);
    user[name->n] = '\0';
    return 0;
}

size_t fl_plain_message(const char *user, const char *password, uint8_t *out, size_t cap) {
    size_t nu = strlen(user), np = strlen(password), need = 2 + nu + np;
    if (need > cap) return 0;
    out[0] = 0;
    memcpy(out + 1, user, nu);
    out[1 + nu] = 0;
    memcpy(out + 2 + nu, password, np);
    return need;
}
