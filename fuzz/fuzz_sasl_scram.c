/*
 * fuzz_sasl_scram.c — the bytes SCRAM parses before anyone is trusted
 * (auth_scram.h). The input's first byte (mod 6) picks:
 *   0  the server reading a client-first (known user "user", "pencil"),
 *   1  the server reading a client-final after RFC 7677's client-first,
 *   2  the same for an unknown user,
 *   3  the client reading a server-first,
 *   4  the client reading a server-final after the RFC's exchange,
 *   5  a stored credential's text form.
 * Nothing may crash; every refusal is FLUSS_ERR_AUTHENTICATE_EXCEPTION with
 * one of the module's prefixes and never shows the password; an exchange
 * authenticates only on the one right client-final (and never for an
 * unknown user); the client accepts only the one right server-final; a
 * credential text that decodes encodes back to itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth_scram.h"
#include "common_alloc.h"
#include "fuzz_common.h"

#define CNONCE "rOprNGfwEbeRWgbNEkqO"
#define SNONCE "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
#define CLIENT_FIRST "n,,n=user,r=" CNONCE
#define SERVER_FIRST "r=" CNONCE SNONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
#define CLIENT_FINAL "c=biws,r=" CNONCE SNONCE ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
#define SERVER_FINAL "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
#define CREDENTIAL                                                                        \
    "SCRAM-SHA-256:4096:W22ZaJ0SNY7soEsUEjb6gQ==:WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=:" \
    "wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU="

static const uint8_t SECRET[32] = {42};

static const char *const PREFIXES[] = {
    "Invalid SCRAM client first message: ",
    "Invalid SCRAM client final message: ",
    "Invalid SCRAM server first message: ",
    "Invalid SCRAM server final message: ",
    "Authentication failed: Invalid username or password",
    "Authentication failed: Client requested an authorization id that is different from username",
    "SCRAM authentication failed: ",
};

static bool lookup(void *arg, const char *user, int hash, fl_scram_credential_t *out) {
    (void)arg;
    if (strcmp(user, "user") != 0 || hash != FL_SCRAM_SHA256) return false;
    fl_error_t err;
    FUZZ_CHECK(fl_scram_credential_decode(CREDENTIAL, strlen(CREDENTIAL), out, &err) == 0);
    return true;
}

static bool contains(const uint8_t *data, size_t size, const char *word) {
    size_t n = strlen(word);
    for (size_t i = 0; i + n <= size; i++)
        if (memcmp(data + i, word, n) == 0) return true;
    return false;
}

/* A refusal of input data: one of our prefixes, and the password only if
 * the peer wrote it itself (a server's e= text is shown as it came). */
static void check_refusal(int rc, const fl_error_t *err, const uint8_t *data, size_t size) {
    FUZZ_CHECK(rc == FLUSS_ERR_AUTHENTICATE_EXCEPTION && err->code == rc);
    bool known = false;
    for (size_t i = 0; i < sizeof(PREFIXES) / sizeof(PREFIXES[0]); i++)
        known |= strncmp(err->msg, PREFIXES[i], strlen(PREFIXES[i])) == 0;
    FUZZ_CHECK(known);
    FUZZ_CHECK(contains(data, size, "pencil") || strstr(err->msg, "pencil") == NULL);
}

static bool equals(const uint8_t *data, size_t size, const char *text) {
    return size == strlen(text) && memcmp(data, text, size) == 0;
}

static void server_first(const uint8_t *data, size_t size) {
    fl_scram_server_t *s = fl_scram_server_new(FL_SCRAM_SHA256, SECRET);
    uint8_t *out = NULL;
    size_t n = 0;
    fl_error_t err;
    int rc = fl_scram_server_first(s, data, size, lookup, NULL, &out, &n, &err);
    if (rc == 0) {
        FUZZ_CHECK(out && n > 2 && memcmp(out, "r=", 2) == 0 && out[n] == 0);
        FUZZ_CHECK(n <= FL_SCRAM_MESSAGE_MAX);
    } else {
        check_refusal(rc, &err, data, size);
        FUZZ_CHECK(out == NULL);
    }
    FUZZ_CHECK(!fl_scram_server_done(s) && fl_scram_server_user(s) == NULL);
    fl_free(out);
    fl_scram_server_free(s);
}

static void server_final(const uint8_t *data, size_t size, bool known) {
    fl_scram_server_t *s = fl_scram_server_new(FL_SCRAM_SHA256, SECRET);
    fl_scram_server_set_nonce(s, SNONCE);
    uint8_t *out = NULL;
    size_t n = 0;
    fl_error_t err;
    const char *first = known ? CLIENT_FIRST : "n,,n=ghost,r=" CNONCE;
    FUZZ_CHECK(fl_scram_server_first(s, (const uint8_t *)first, strlen(first), lookup, NULL, &out,
                                     &n, &err) == 0);
    fl_free(out);
    int rc = fl_scram_server_final(s, data, size, &out, &n, &err);
    if (rc == 0) {
        /* only the right proof, only for the known user */
        FUZZ_CHECK(known && equals(data, size, CLIENT_FINAL));
        FUZZ_CHECK(fl_scram_server_done(s) && strcmp(fl_scram_server_user(s), "user") == 0);
        FUZZ_CHECK(n == strlen(SERVER_FINAL) && memcmp(out, SERVER_FINAL, n) == 0);
    } else {
        check_refusal(rc, &err, data, size);
        FUZZ_CHECK(!fl_scram_server_done(s) && out == NULL);
    }
    fl_free(out);
    fl_scram_server_free(s);
}

static fl_scram_client_t *client_started(void) {
    fl_scram_client_t *c = fl_scram_client_new(FL_SCRAM_SHA256, "user", "pencil");
    fl_scram_client_set_nonce(c, CNONCE);
    uint8_t *out = NULL;
    size_t n = 0;
    fl_error_t err;
    FUZZ_CHECK(fl_scram_client_first(c, &out, &n, &err) == 0);
    fl_free(out);
    return c;
}

static void client_final(const uint8_t *data, size_t size) {
    fl_scram_client_t *c = client_started();
    uint8_t *out = NULL;
    size_t n = 0;
    fl_error_t err;
    int rc = fl_scram_client_final(c, data, size, &out, &n, &err);
    if (rc == 0) {
        FUZZ_CHECK(out && n > 9 && memcmp(out, "c=biws,r=" CNONCE, 9 + strlen(CNONCE)) == 0);
        /* the password never travels (the server's nonce does, as it came) */
        FUZZ_CHECK(out[n] == 0);
        FUZZ_CHECK(contains(data, size, "pencil") || !contains(out, n, "pencil"));
    } else {
        check_refusal(rc, &err, data, size);
        FUZZ_CHECK(out == NULL);
    }
    fl_free(out);
    fl_scram_client_free(c);
}

static void client_verify(const uint8_t *data, size_t size) {
    fl_scram_client_t *c = client_started();
    uint8_t *out = NULL;
    size_t n = 0;
    fl_error_t err;
    FUZZ_CHECK(fl_scram_client_final(c, (const uint8_t *)SERVER_FIRST, strlen(SERVER_FIRST), &out,
                                     &n, &err) == 0);
    FUZZ_CHECK(n == strlen(CLIENT_FINAL) && memcmp(out, CLIENT_FINAL, n) == 0);
    fl_free(out);
    int rc = fl_scram_client_verify(c, data, size, &err);
    if (rc == 0) FUZZ_CHECK(equals(data, size, SERVER_FINAL));
    else check_refusal(rc, &err, data, size);
    fl_scram_client_free(c);
}

static void credential(const uint8_t *data, size_t size) {
    fl_scram_credential_t c;
    fl_error_t err;
    int rc = fl_scram_credential_decode((const char *)data, size, &c, &err);
    if (rc != 0) {
        FUZZ_CHECK(rc == FLUSS_ERR__CORRUPT &&
                   strncmp(err.msg, "Invalid SCRAM credential: ", 26) == 0);
        return;
    }
    FUZZ_CHECK(fl_scram_credential_valid(&c));
    char *text = fl_scram_credential_encode(&c);
    FUZZ_CHECK(text && equals(data, size, text));
    fl_free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    uint8_t pick = data[0] % 6;
    data++, size--;
    switch (pick) {
    case 0: server_first(data, size); break;
    case 1: server_final(data, size, true); break;
    case 2: server_final(data, size, false); break;
    case 3: client_final(data, size); break;
    case 4: client_verify(data, size); break;
    default: credential(data, size); break;
    }
    return 0;
}
