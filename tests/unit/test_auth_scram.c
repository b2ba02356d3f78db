/*
 * test_auth_scram.c — SASL/SCRAM (auth_scram.h): RFC 7677's SCRAM-SHA-256
 * vector byte for byte on both sides, a SCRAM-SHA-512 vector computed
 * apart from us (Python's hashlib, below), round trips for both hashes,
 * the same words for a wrong password and an unknown user, and every
 * refusal of a malformed, tampered, oversized or replayed message on the
 * server and the client side with its words; stored credentials' text
 * form both ways and its refusals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "auth_scram.h"
#include "common_alloc.h"

#define BAD "Authentication failed: Invalid username or password"
#define FIRST "Invalid SCRAM client first message: "
#define FINAL "Invalid SCRAM client final message: "
#define SFIRST "Invalid SCRAM server first message: "
#define SFINAL "Invalid SCRAM server final message: "

/* RFC 7677 §3 */
#define V_CNONCE "rOprNGfwEbeRWgbNEkqO"
#define V_SNONCE "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
#define V_SALT "W22ZaJ0SNY7soEsUEjb6gQ=="
#define V_CLIENT_FIRST "n,,n=user,r=" V_CNONCE
#define V_SERVER_FIRST "r=" V_CNONCE V_SNONCE ",s=" V_SALT ",i=4096"
#define V_FINAL_BARE "c=biws,r=" V_CNONCE V_SNONCE
#define V256_CLIENT_FINAL V_FINAL_BARE ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
#define V256_SERVER_FINAL "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
#define V256_CREDENTIAL                                                          \
    "SCRAM-SHA-256:4096:" V_SALT ":WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=:" \
    "wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU="
/* The same exchange with SHA-512, computed with Python 3's hashlib:
 *   salt = base64.b64decode(V_SALT)
 *   sp = hashlib.pbkdf2_hmac("sha512", b"pencil", salt, 4096)
 *   ck = hmac.new(sp, b"Client Key", "sha512").digest()
 *   sk = hashlib.sha512(ck).digest()
 *   svk = hmac.new(sp, b"Server Key", "sha512").digest()
 *   am = b"n=user,r=" + CN + b"," + server_first + b"," + V_FINAL_BARE
 *   proof = ck XOR hmac.new(sk, am, "sha512").digest()
 *   v = hmac.new(svk, am, "sha512").digest() */
#define V512_CLIENT_FINAL                                                             \
    V_FINAL_BARE ",p=gMGXRcevScNtxZ6/8lQYpGtnsNAc3mGcmNomv+xnoOMw+3R2xNJdMNnzMlTN8PPC" \
                 "6wdp6dybEmDYXYTxwnYPJQ=="
#define V512_SERVER_FINAL                                                             \
    "v=ZQnYEgWQMFmmsM8aQMF0nDDCy/AgCzkwk8CmMZYcMg0vSVlKDanekLtifDSeVGT4+5ZxXnJq199RV" \
    "G2rR7N7Zw=="
#define V512_CREDENTIAL                                                                   \
    "SCRAM-SHA-512:4096:" V_SALT                                                          \
    ":6AAub3065EYRmyFpM2RNwqK+eGnrkYuEWbXn19LsEmBqzu8QaCXNc1FwpnX9NhH2hK/60dzj9DoO5DvVkOHb" \
    "vg==:jZHbYjC1aHh0/hKbxyBuGFjDrgjgKTT1esA7awWiKcRZ0o/0b1yWEebBeSVkkCFewf91nLDfKF24mvD5" \
    "nmE6rA=="

static const uint8_t SECRET[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                   17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t VSALT[16] = {0x5b, 0x6d, 0x99, 0x68, 0x9d, 0x12, 0x35, 0x8e,
                                  0xec, 0xa0, 0x4b, 0x14, 0x12, 0x36, 0xfa, 0x81};

/* ---- helpers ----------------------------------------------------------- */

/* The users a lookup knows: one per hash, made once. */
typedef struct users {
    const char *name;
    fl_scram_credential_t cred[3]; /* by hash */
} users_t;

static bool lookup(void *arg, const char *user, int hash, fl_scram_credential_t *out) {
    users_t *u = arg;
    if (strcmp(user, u->name) != 0) return false;
    *out = u->cred[hash];
    return true;
}

static users_t make_users(const char *name, const char *password) {
    users_t u = {.name = name};
    fl_error_t err;
    for (int h = FL_SCRAM_SHA256; h <= FL_SCRAM_SHA512; h++)
        assert_int_equal(fl_scram_credential_make(h, password, strlen(password), VSALT,
                                                  sizeof(VSALT), 4096, &u.cred[h], &err), 0);
    return u;
}

#define M(s) (const uint8_t *)(s), sizeof(s) - 1

static void expect_words(int rc, const fl_error_t *err, int code, const char *words) {
    if (rc == 0) fail_msg("accepted; wanted '%s'", words);
    assert_int_equal(rc, code);
    assert_int_equal(err->code, code);
    if (!strstr(err->msg, words)) fail_msg("error '%s' lacks '%s'", err->msg, words);
    assert_null(strstr(err->msg, "pencil"));
}

static void expect_str(const uint8_t *got, size_t n, const char *want) {
    assert_non_null(got);
    if (n != strlen(want) || memcmp(got, want, n) != 0)
        fail_msg("got '%.*s'\nwant '%s'", (int)n, (const char *)got, want);
    assert_int_equal(got[n], 0);
}

/* A server with the RFC's nonce, past a good client-first for user. */
static fl_scram_server_t *server_after(int hash, users_t *u, const char *client_first) {
    fl_scram_server_t *s = fl_scram_server_new(hash, SECRET);
    fl_scram_server_set_nonce(s, V_SNONCE);
    uint8_t *out = NULL;
    size_t n = 0;
    fl_error_t err;
    assert_int_equal(fl_scram_server_first(s, (const uint8_t *)client_first, strlen(client_first),
                                           lookup, u, &out, &n, &err), 0);
    fl_free(out);
    return s;
}

static void expect_final(int hash, users_t *u, const char *msg, const char *words) {
    fl_scram_server_t *s = server_after(hash, u, V_CLIENT_FIRST);
    uint8_t *out = NULL;
    size_t n = 0;
    fl_error_t err;
    fl_err_clear(&err);
    int rc = fl_scram_server_final(s, (const uint8_t *)msg, strlen(msg), &out, &n, &err);
    expect_words(rc, &err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, words);
    assert_null(out);
    assert_false(fl_scram_server_done(s));
    assert_null(fl_scram_server_user(s));
    /* the exchange is over: even the right message is refused now */
    rc = fl_scram_server_final(s, M(V256_CLIENT_FINAL), &out, &n, &err);
    expect_words(rc, &err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, FINAL "exchange already failed");
    fl_scram_server_free(s);
}

static void expect_first_n(users_t *u, const uint8_t *msg, size_t len, const char *words) {
    fl_scram_server_t *s = fl_scram_server_new(FL_SCRAM_SHA256, SECRET);
    uint8_t *out = NULL;
    size_t n = 0;
    fl_error_t err;
    fl_err_clear(&err);
    int rc = fl_scram_server_first(s, msg, len, lookup, u, &out, &n, &err);
    if (!words) {
        assert_int_equal(rc, 0);
        fl_free(out);
    } else {
        expect_words(rc, &err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, words);
        assert_null(out);
    }
    fl_scram_server_free(s);
}

static void expect_first(users_t *u, const char *msg, const char *words) {
    expect_first_n(u, (const uint8_t *)msg, strlen(msg), words);
}

/* A client past its first message with the RFC's nonce. */
static fl_scram_client_t *client_after_first(int hash, const char *password) {
    fl_scram_client_t *c = fl_scram_client_new(hash, "user", password);
    fl_scram_client_set_nonce(c, V_CNONCE);
    uint8_t *out = NULL;
    size_t n = 0;
    fl_error_t err;
    assert_int_equal(fl_scram_client_first(c, &out, &n, &err), 0);
    expect_str(out, n, V_CLIENT_FIRST);
    fl_free(out);
    return c;
}

static void expect_client_final(const char *server_first, const char *words) {
    fl_scram_client_t *c = client_after_first(FL_SCRAM_SHA256, "pencil");
    uint8_t *out = NULL;
    size_t n = 0;
    fl_error_t err;
    fl_err_clear(&err);
    int rc = fl_scram_client_final(c, (const uint8_t *)server_first, strlen(server_first), &out,
                                   &n, &err);
    expect_words(rc, &err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, words);
    assert_null(out);
    fl_scram_client_free(c);
}

/* A client past its final message of the RFC 7677 exchange. */
static fl_scram_client_t *client_after_final(void) {
    fl_scram_client_t *c = client_after_first(FL_SCRAM_SHA256, "pencil");
    uint8_t *out = NULL;
    size_t n = 0;
    fl_error_t err;
    assert_int_equal(fl_scram_client_final(c, M(V_SERVER_FIRST), &out, &n, &err), 0);
    fl_free(out);
    return c;
}

static void expect_verify(const char *server_final, const char *words) {
    fl_scram_client_t *c = client_after_final();
    fl_error_t err;
    fl_err_clear(&err);
    int rc = fl_scram_client_verify(c, (const uint8_t *)server_final, strlen(server_final), &err);
    expect_words(rc, &err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, words);
    fl_scram_client_free(c);
}

/* Both sides through the API; returns the server's error code. */
static int exchange(int hash, const char *user, const char *password, users_t *u,
                    fl_error_t *err) {
    fl_scram_client_t *c = fl_scram_client_new(hash, user, password);
    fl_scram_server_t *s = fl_scram_server_new(hash, SECRET);
    uint8_t *m1 = NULL, *m2 = NULL, *m3 = NULL, *m4 = NULL;
    size_t n1 = 0, n2 = 0, n3 = 0, n4 = 0;
    assert_int_equal(fl_scram_client_first(c, &m1, &n1, err), 0);
    assert_int_equal(fl_scram_server_first(s, m1, n1, lookup, u, &m2, &n2, err), 0);
    assert_int_equal(fl_scram_client_final(c, m2, n2, &m3, &n3, err), 0);
    int rc = fl_scram_server_final(s, m3, n3, &m4, &n4, err);
    if (rc == 0) {
        assert_true(fl_scram_server_done(s));
        assert_string_equal(fl_scram_server_user(s), user);
        assert_int_equal(fl_scram_client_verify(c, m4, n4, err), 0);
    } else {
        assert_false(fl_scram_server_done(s));
        assert_null(m4);
    }
    fl_free(m1), fl_free(m2), fl_free(m3), fl_free(m4);
    fl_scram_client_free(c);
    fl_scram_server_free(s);
    return rc;
}

/* A client-final signed here (OpenSSL directly, not auth_scram.c) for a
 * client-first with any gs2 header: the client API only writes "n,,". */
static char *sign_final(const char *password, const char *client_first_bare,
                        const char *server_first, const char *gs2) {
    uint8_t salted[32], ck[32], sk[32], sig[32];
    unsigned len = 0;
    assert_true(PKCS5_PBKDF2_HMAC(password, (int)strlen(password), VSALT, sizeof(VSALT), 4096,
                                  EVP_sha256(), 32, salted));
    HMAC(EVP_sha256(), salted, 32, (const uint8_t *)"Client Key", 10, ck, &len);
    EVP_Digest(ck, 32, sk, &len, EVP_sha256(), NULL);
    const char *nonce = server_first + 2;
    size_t nonce_n = strcspn(nonce, ",");
    char gs2_b64[128], bare[1024], am[4096], p[64];
    EVP_EncodeBlock((uint8_t *)gs2_b64, (const uint8_t *)gs2, (int)strlen(gs2));
    snprintf(bare, sizeof(bare), "c=%s,r=%.*s", gs2_b64, (int)nonce_n, nonce);
    snprintf(am, sizeof(am), "%s,%s,%s", client_first_bare, server_first, bare);
    HMAC(EVP_sha256(), sk, 32, (const uint8_t *)am, strlen(am), sig, &len);
    for (int i = 0; i < 32; i++) ck[i] ^= sig[i];
    EVP_EncodeBlock((uint8_t *)p, ck, 32);
    char *out = fl_malloc(strlen(bare) + 4 + strlen(p));
    sprintf(out, "%s,p=%s", bare, p);
    return out;
}

/* ---- tests ------------------------------------------------------------- */

static void test_mechanism(void **state) {
    (void)state;
    assert_int_equal(fl_scram_mechanism("SCRAM-SHA-256"), FL_SCRAM_SHA256);
    assert_int_equal(fl_scram_mechanism("scram-sha-512"), FL_SCRAM_SHA512);
    assert_int_equal(fl_scram_mechanism("Scram-Sha-256"), FL_SCRAM_SHA256);
    assert_int_equal(fl_scram_mechanism("SCRAM-SHA-1"), 0);
    assert_int_equal(fl_scram_mechanism("PLAIN"), 0);
    assert_int_equal(fl_scram_mechanism(NULL), 0);
    assert_string_equal(fl_scram_mechanism_name(FL_SCRAM_SHA256), "SCRAM-SHA-256");
    assert_string_equal(fl_scram_mechanism_name(FL_SCRAM_SHA512), "SCRAM-SHA-512");
    assert_null(fl_scram_mechanism_name(3));
    assert_null(fl_scram_server_new(3, SECRET));
    assert_null(fl_scram_client_new(0, "user", "pencil"));
}

/* One vector through both sides, every message byte for byte. */
static void run_vector(int hash, const char *client_final, const char *server_final,
                       const char *credential) {
    users_t u = make_users("user", "pencil");
    char *text = fl_scram_credential_encode(&u.cred[hash]);
    assert_string_equal(text, credential);
    fl_free(text);
    fl_scram_client_t *c = client_after_first(hash, "pencil");
    fl_scram_server_t *s = fl_scram_server_new(hash, SECRET);
    fl_scram_server_set_nonce(s, V_SNONCE);
    uint8_t *out = NULL;
    size_t n = 0;
    fl_error_t err;
    assert_int_equal(fl_scram_server_first(s, M(V_CLIENT_FIRST), lookup, &u, &out, &n, &err), 0);
    expect_str(out, n, V_SERVER_FIRST);
    fl_free(out);
    assert_int_equal(fl_scram_client_final(c, M(V_SERVER_FIRST), &out, &n, &err), 0);
    expect_str(out, n, client_final);
    fl_free(out);
    assert_int_equal(fl_scram_server_final(s, (const uint8_t *)client_final, strlen(client_final),
                                           &out, &n, &err), 0);
    expect_str(out, n, server_final);
    assert_true(fl_scram_server_done(s));
    assert_string_equal(fl_scram_server_user(s), "user");
    assert_int_equal(fl_scram_client_verify(c, out, n, &err), 0);
    fl_free(out);
    fl_scram_client_free(c);
    fl_scram_server_free(s);
}

static void test_rfc7677_sha256(void **state) {
    (void)state;
    run_vector(FL_SCRAM_SHA256, V256_CLIENT_FINAL, V256_SERVER_FINAL, V256_CREDENTIAL);
}

static void test_sha512_vector(void **state) {
    (void)state;
    run_vector(FL_SCRAM_SHA512, V512_CLIENT_FINAL, V512_SERVER_FINAL, V512_CREDENTIAL);
}

static void test_round_trips(void **state) {
    (void)state;
    fl_error_t err;
    for (int h = FL_SCRAM_SHA256; h <= FL_SCRAM_SHA512; h++) {
        users_t u = make_users("alice", "wonder land");
        assert_int_equal(exchange(h, "alice", "wonder land", &u, &err), 0);
        /* names with ',' and '=' travel escaped and come back whole */
        u = make_users("a,b=c,=", "pw");
        assert_int_equal(exchange(h, "a,b=c,=", "pw", &u, &err), 0);
        /* UTF-8 names; an empty password */
        u = make_users("J\xc3\xbcrgen \xe2\x82\xac", "");
        assert_int_equal(exchange(h, "J\xc3\xbcrgen \xe2\x82\xac", "", &u, &err), 0);
        /* a credential with its own random salt and more iterations */
        u = (users_t){.name = "bob"};
        int other = h == FL_SCRAM_SHA256 ? FL_SCRAM_SHA512 : FL_SCRAM_SHA256;
        assert_int_equal(fl_scram_credential_make(h, "builder", 7, NULL, 0, 8192, &u.cred[h],
                                                  &err), 0);
        assert_int_equal(fl_scram_credential_make(other, "builder", 7, NULL, 0, 8192,
                                                  &u.cred[other], &err), 0);
        assert_int_equal(exchange(h, "bob", "builder", &u, &err), 0);
        /* a credential for the other hash is no credential */
        u.cred[h] = u.cred[other];
        expect_words(exchange(h, "bob", "builder", &u, &err), &err,
                     FLUSS_ERR_AUTHENTICATE_EXCEPTION, BAD);
    }
}

static void test_wrong_password_and_unknown_user(void **state) {
    (void)state;
    users_t u = make_users("user", "pencil");
    for (int h = FL_SCRAM_SHA256; h <= FL_SCRAM_SHA512; h++) {
        fl_error_t wrong, unknown, none;
        fl_err_clear(&wrong), fl_err_clear(&unknown), fl_err_clear(&none);
        assert_int_equal(exchange(h, "user", "pencil!", &u, &wrong),
                         FLUSS_ERR_AUTHENTICATE_EXCEPTION);
        assert_int_equal(exchange(h, "mallory", "pencil", &u, &unknown),
                         FLUSS_ERR_AUTHENTICATE_EXCEPTION);
        assert_string_equal(wrong.msg, BAD);
        assert_string_equal(unknown.msg, BAD);
        /* no lookup at all: everyone is unknown */
        fl_scram_client_t *c = fl_scram_client_new(h, "user", "pencil");
        fl_scram_server_t *s = fl_scram_server_new(h, SECRET);
        uint8_t *m1, *m2, *m3, *m4;
        size_t n1, n2, n3, n4;
        assert_int_equal(fl_scram_client_first(c, &m1, &n1, &none), 0);
        assert_int_equal(fl_scram_server_first(s, m1, n1, NULL, NULL, &m2, &n2, &none), 0);
        assert_int_equal(fl_scram_client_final(c, m2, n2, &m3, &n3, &none), 0);
        expect_words(fl_scram_server_final(s, m3, n3, &m4, &n4, &none), &none,
                     FLUSS_ERR_AUTHENTICATE_EXCEPTION, BAD);
        fl_free(m1), fl_free(m2), fl_free(m3);
        fl_scram_client_free(c);
        fl_scram_server_free(s);
    }
    /* an unknown user's server-first looks like a known one's: a 32-byte
     * salt, 4096 iterations, and the same salt on every attempt */
    uint8_t *a, *b, *k;
    size_t na, nb, nk;
    fl_error_t err;
    fl_scram_server_t *s1 = fl_scram_server_new(FL_SCRAM_SHA256, SECRET);
    fl_scram_server_t *s2 = fl_scram_server_new(FL_SCRAM_SHA256, SECRET);
    fl_scram_server_t *s3 = fl_scram_server_new(FL_SCRAM_SHA256, SECRET);
    users_t known = {.name = "user"};
    assert_int_equal(fl_scram_credential_make(FL_SCRAM_SHA256, "pencil", 6, NULL, 0, 4096,
                                              &known.cred[FL_SCRAM_SHA256], &err), 0);
    fl_scram_server_set_nonce(s1, "S"), fl_scram_server_set_nonce(s2, "S");
    fl_scram_server_set_nonce(s3, "S");
    assert_int_equal(fl_scram_server_first(s1, M("n,,n=ghost,r=C"), lookup, &u, &a, &na, &err), 0);
    assert_int_equal(fl_scram_server_first(s2, M("n,,n=ghost,r=C"), lookup, &u, &b, &nb, &err), 0);
    assert_int_equal(fl_scram_server_first(s3, M("n,,n=user,r=C"), lookup, &known, &k, &nk, &err),
                     0);
    expect_str(a, na, (const char *)b);
    assert_int_equal(na, nk);
    assert_memory_equal(a, "r=CS,s=", 7);
    assert_memory_equal(a + na - 7, ",i=4096", 7);
    assert_memory_equal(k + nk - 7, ",i=4096", 7);
    fl_free(a), fl_free(b), fl_free(k);
    fl_scram_server_free(s1), fl_scram_server_free(s2), fl_scram_server_free(s3);
    /* another server secret, another made-up salt */
    uint8_t other[32] = {0};
    fl_scram_server_t *s4 = fl_scram_server_new(FL_SCRAM_SHA256, other);
    fl_scram_server_t *s5 = fl_scram_server_new(FL_SCRAM_SHA256, SECRET);
    fl_scram_server_set_nonce(s4, "S"), fl_scram_server_set_nonce(s5, "S");
    assert_int_equal(fl_scram_server_first(s4, M("n,,n=ghost,r=C"), NULL, NULL, &a, &na, &err), 0);
    assert_int_equal(fl_scram_server_first(s5, M("n,,n=ghost,r=C"), NULL, NULL, &b, &nb, &err), 0);
    assert_int_equal(na, nb);
    assert_memory_not_equal(a, b, na);
    fl_free(a), fl_free(b);
    fl_scram_server_free(s4), fl_scram_server_free(s5);
}

static void test_authzid(void **state) {
    (void)state;
    users_t u = make_users("user", "pencil");
    const char *first = "n,a=user,n=user,r=" V_CNONCE;
    fl_scram_server_t *s = server_after(FL_SCRAM_SHA256, &u, first);
    char *final = sign_final("pencil", "n=user,r=" V_CNONCE, V_SERVER_FIRST, "n,a=user,");
    uint8_t *out = NULL;
    size_t n = 0;
    fl_error_t err;
    assert_int_equal(fl_scram_server_final(s, (const uint8_t *)final, strlen(final), &out, &n,
                                           &err), 0);
    assert_string_equal(fl_scram_server_user(s), "user");
    fl_free(out);
    fl_scram_server_free(s);
    /* c= must carry the header the client-first had */
    expect_final(FL_SCRAM_SHA256, &u, final, FINAL "channel binding (c=) does not match");
    s = server_after(FL_SCRAM_SHA256, &u, first);
    expect_words(fl_scram_server_final(s, M(V256_CLIENT_FINAL), &out, &n, &err), &err,
                 FLUSS_ERR_AUTHENTICATE_EXCEPTION, FINAL "channel binding (c=) does not match");
    fl_scram_server_free(s);
    fl_free(final);
    /* our own signer agrees with the RFC on "n,," */
    final = sign_final("pencil", "n=user,r=" V_CNONCE, V_SERVER_FIRST, "n,,");
    assert_string_equal(final, V256_CLIENT_FINAL);
    fl_free(final);
    /* an escaped authzid equal to an escaped user */
    users_t odd = make_users("a,b", "pw");
    expect_first(&odd, "n,a=a=2Cb,n=a=2Cb,r=x", NULL);
    expect_first(&u, "n,a=bob,n=user,r=x",
                 "Authentication failed: Client requested an authorization id that is different "
                 "from username");
    expect_first(&u, "n,a=,n=user,r=x", FIRST "empty authzid");
    expect_first(&u, "n,a=us=er,n=user,r=x", FIRST "invalid escape in authzid");
    expect_first(&u, "n,a=user", FIRST "invalid gs2 header");
}

static void test_client_first_refusals(void **state) {
    (void)state;
    users_t u = make_users("user", "pencil");
    expect_first(&u, V_CLIENT_FIRST, NULL);
    expect_first(&u, "n,,n=us=2Cer=3D,r=abc", NULL);
    /* gs2 header */
    expect_first(&u, "y,,n=user,r=abc", FIRST "channel binding is not supported");
    expect_first(&u, "p=tls-unique,,n=user,r=abc", FIRST "channel binding is not supported");
    expect_first(&u, "x,,n=user,r=abc", FIRST "invalid gs2 header");
    expect_first(&u, "n,n=user,r=abc", FIRST "invalid gs2 header");
    expect_first(&u, "n,", FIRST "invalid gs2 header");
    expect_first(&u, "n", FIRST "invalid gs2 header");
    expect_first(&u, "", FIRST "empty message");
    /* escaping */
    expect_first(&u, "n,,n=us=2cer,r=abc", FIRST "invalid escape in user name");
    expect_first(&u, "n,,n=us=er,r=abc", FIRST "invalid escape in user name");
    expect_first(&u, "n,,n=user=,r=abc", FIRST "invalid escape in user name");
    expect_first(&u, "n,,n=user=2,r=abc", FIRST "invalid escape in user name");
    expect_first(&u, "n,,n=\xff\xfe,r=abc", FIRST "user name is not UTF-8");
    expect_first(&u, "n,,n=\xc0\xaf,r=abc", FIRST "user name is not UTF-8"); /* overlong '/' */
    expect_first(&u, "n,,n=\xed\xa0\x80,r=abc", FIRST "user name is not UTF-8"); /* surrogate */
    /* attributes */
    expect_first(&u, "n,,m=ext,n=user,r=abc", FIRST "mandatory extension 'm' is not supported");
    expect_first(&u, "n,,n=user,r=abc,x=1", FIRST "unexpected attribute 'x'");
    expect_first(&u, "n,,n=user,x=1,r=abc", FIRST "unexpected attribute 'x'");
    expect_first(&u, "n,,n=user", FIRST "missing attribute 'r'");
    expect_first(&u, "n,,r=abc", FIRST "missing attribute 'n'");
    expect_first(&u, "n,,r=abc,n=user", FIRST "missing attribute 'n'");
    expect_first(&u, "n,,n=user,n=user,r=abc", FIRST "duplicate attribute 'n'");
    expect_first(&u, "n,,n=user,r=abc,r=abc", FIRST "duplicate attribute 'r'");
    expect_first(&u, "n,,n=user,r=abc,", FIRST "malformed attribute");
    expect_first(&u, "n,,nuser,r=abc", FIRST "malformed attribute");
    expect_first(&u, "n,,n=user,,r=abc", FIRST "malformed attribute");
    expect_first(&u, "n,,1=user,r=abc", FIRST "malformed attribute");
    expect_first(&u, "n,,n=user,r=a,b=1,c=1,d=1,e=1,f=1,g=1,h=1", FIRST "too many attributes");
    expect_first(&u, "n,,n=,r=abc", FIRST "empty user name");
    expect_first(&u, "n,,n=user,r=", FIRST "nonce is not 1..256 printable characters");
    expect_first(&u, "n,,n=user,r=a b", FIRST "nonce is not 1..256 printable characters");
    expect_first(&u, "n,,n=user,r=a\x7f", FIRST "nonce is not 1..256 printable characters");
    expect_first_n(&u, M("n,,n=us\0er,r=abc"), FIRST "NUL byte");
    /* bounds: user 512 bytes (unescaped), nonce 256, message 4096 */
    char msg[5000], big[4000];
    memset(big, 'u', 512), big[512] = '\0';
    snprintf(msg, sizeof(msg), "n,,n=%s,r=abc", big);
    expect_first(&u, msg, NULL);
    snprintf(msg, sizeof(msg), "n,,n=%su,r=abc", big);
    expect_first(&u, msg, FIRST "user name longer than 512 bytes");
    big[0] = '\0';
    for (int i = 0; i < 512; i++) strcat(big, "=2C");
    snprintf(msg, sizeof(msg), "n,,n=%s,r=abc", big);
    expect_first(&u, msg, NULL);
    snprintf(msg, sizeof(msg), "n,,n=%s=3D,r=abc", big);
    expect_first(&u, msg, FIRST "user name longer than 512 bytes");
    memset(big, 'r', 256), big[256] = '\0';
    snprintf(msg, sizeof(msg), "n,,n=user,r=%s", big);
    expect_first(&u, msg, NULL);
    snprintf(msg, sizeof(msg), "n,,n=user,r=%sr", big);
    expect_first(&u, msg, FIRST "nonce is not 1..256 printable characters");
    memset(msg, 'x', 4097);
    memcpy(msg, "n,,n=user,r=", 12);
    expect_first_n(&u, (const uint8_t *)msg, 4097, FIRST "longer than 4096 bytes");
    /* one first message per exchange */
    fl_scram_server_t *s = server_after(FL_SCRAM_SHA256, &u, V_CLIENT_FIRST);
    uint8_t *out = NULL;
    size_t n = 0;
    fl_error_t err;
    expect_words(fl_scram_server_first(s, M(V_CLIENT_FIRST), lookup, &u, &out, &n, &err), &err,
                 FLUSS_ERR_AUTHENTICATE_EXCEPTION, FIRST "exchange already started");
    assert_null(out);
    fl_scram_server_free(s);
}

static void test_client_final_refusals(void **state) {
    (void)state;
    users_t u = make_users("user", "pencil");
    const int h = FL_SCRAM_SHA256;
    const char *nonce = V_CNONCE V_SNONCE;
    const char *proof = "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
    char msg[5000];
    /* the proof (the RFC's, one character off in each) */
#define FINAL_P(p) V_FINAL_BARE ",p=" p
    expect_final(h, &u, FINAL_P("eHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="), BAD);
    expect_final(h, &u, FINAL_P("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVR="), /* pad bits */
                 FINAL "proof is not base64 of 32 bytes");
    expect_final(h, &u, FINAL_P("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ"),
                 FINAL "proof is not base64 of 32 bytes");
    expect_final(h, &u, FINAL_P("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7And=="),
                 FINAL "proof is not base64 of 32 bytes");
    expect_final(h, &u, FINAL_P(""), FINAL "proof is not base64 of 32 bytes");
    expect_final(h, &u, FINAL_P("d=zbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="),
                 FINAL "proof is not base64 of 32 bytes");
    /* a SHA-512 proof to a SHA-256 exchange */
    expect_final(h, &u, V512_CLIENT_FINAL, FINAL "proof is not base64 of 32 bytes");
    /* the nonce */
    snprintf(msg, sizeof(msg), "c=biws,r=%.*s1,p=%s", (int)strlen(nonce) - 1, nonce, proof);
    expect_final(h, &u, msg, FINAL "nonce mismatch");
    snprintf(msg, sizeof(msg), "c=biws,r=%s,p=%s", V_CNONCE, proof);
    expect_final(h, &u, msg, FINAL "nonce mismatch");
    snprintf(msg, sizeof(msg), "c=biws,r=%sX,p=%s", nonce, proof);
    expect_final(h, &u, msg, FINAL "nonce mismatch");
    /* c= and the gs2 header */
    snprintf(msg, sizeof(msg), "c=eSws,r=%s,p=%s", nonce, proof); /* "y,," */
    expect_final(h, &u, msg, FINAL "channel binding (c=) does not match the gs2 header");
    snprintf(msg, sizeof(msg), "c=biws=,r=%s,p=%s", nonce, proof);
    expect_final(h, &u, msg, FINAL "channel binding (c=) does not match the gs2 header");
    snprintf(msg, sizeof(msg), "c=,r=%s,p=%s", nonce, proof);
    expect_final(h, &u, msg, FINAL "channel binding (c=) does not match the gs2 header");
    /* attributes */
    snprintf(msg, sizeof(msg), "c=biws,r=%s", nonce);
    expect_final(h, &u, msg, FINAL "missing attribute 'p'");
    snprintf(msg, sizeof(msg), "r=%s,p=%s", nonce, proof);
    expect_final(h, &u, msg, FINAL "missing attribute 'c'");
    snprintf(msg, sizeof(msg), "c=biws,p=%s", proof);
    expect_final(h, &u, msg, FINAL "missing attribute 'r'");
    snprintf(msg, sizeof(msg), "c=biws,r=%s,x=1,p=%s", nonce, proof);
    expect_final(h, &u, msg, FINAL "unexpected attribute 'x'");
    snprintf(msg, sizeof(msg), "c=biws,r=%s,p=%s,x=1", nonce, proof);
    expect_final(h, &u, msg, FINAL "unexpected attribute 'x'");
    snprintf(msg, sizeof(msg), "c=biws,r=%s,m=1,p=%s", nonce, proof);
    expect_final(h, &u, msg, FINAL "mandatory extension 'm' is not supported");
    snprintf(msg, sizeof(msg), "c=biws,c=biws,r=%s,p=%s", nonce, proof);
    expect_final(h, &u, msg, FINAL "duplicate attribute 'c'");
    snprintf(msg, sizeof(msg), "c=biws,r=%s,p=%s,p=%s", nonce, proof, proof);
    expect_final(h, &u, msg, FINAL "duplicate attribute 'p'");
    expect_final(h, &u, "", FINAL "empty message");
    expect_final(h, &u, "garbage", FINAL "malformed attribute");
    /* size */
    memset(msg, 'x', 4097), msg[4097] = '\0';
    expect_final(h, &u, msg, FINAL "longer than 4096 bytes");
}

static void test_server_replays(void **state) {
    (void)state;
    users_t u = make_users("user", "pencil");
    uint8_t *out = NULL;
    size_t n = 0;
    fl_error_t err;
    /* final before first */
    fl_scram_server_t *s = fl_scram_server_new(FL_SCRAM_SHA256, SECRET);
    expect_words(fl_scram_server_final(s, M(V256_CLIENT_FINAL), &out, &n, &err), &err,
                 FLUSS_ERR_AUTHENTICATE_EXCEPTION, FINAL "no client first message");
    fl_scram_server_free(s);
    /* after done: neither message again */
    s = server_after(FL_SCRAM_SHA256, &u, V_CLIENT_FIRST);
    assert_int_equal(fl_scram_server_final(s, M(V256_CLIENT_FINAL), &out, &n, &err), 0);
    fl_free(out);
    expect_words(fl_scram_server_final(s, M(V256_CLIENT_FINAL), &out, &n, &err), &err,
                 FLUSS_ERR_AUTHENTICATE_EXCEPTION, FINAL "exchange already complete");
    assert_null(out);
    expect_words(fl_scram_server_first(s, M(V_CLIENT_FIRST), lookup, &u, &out, &n, &err), &err,
                 FLUSS_ERR_AUTHENTICATE_EXCEPTION, FIRST "exchange already started");
    assert_false(fl_scram_server_done(s)); /* a replay ends the exchange */
    fl_scram_server_free(s);
    /* a recorded final does not authenticate another exchange (another nonce) */
    s = fl_scram_server_new(FL_SCRAM_SHA256, SECRET);
    assert_int_equal(fl_scram_server_first(s, M(V_CLIENT_FIRST), lookup, &u, &out, &n, &err), 0);
    fl_free(out);
    expect_words(fl_scram_server_final(s, M(V256_CLIENT_FINAL), &out, &n, &err), &err,
                 FLUSS_ERR_AUTHENTICATE_EXCEPTION, FINAL "nonce mismatch");
    fl_scram_server_free(s);
}

static void test_client_refusals(void **state) {
    (void)state;
    const char *r = "r=" V_CNONCE V_SNONCE;
    char msg[5000];
    /* iterations */
    snprintf(msg, sizeof(msg), "%s,s=%s,i=4095", r, V_SALT);
    expect_client_final(msg, SFIRST "iterations 4095 outside [4096, 16384]");
    snprintf(msg, sizeof(msg), "%s,s=%s,i=1", r, V_SALT);
    expect_client_final(msg, SFIRST "iterations 1 outside");
    snprintf(msg, sizeof(msg), "%s,s=%s,i=16385", r, V_SALT);
    expect_client_final(msg, SFIRST "iterations 16385 outside");
    snprintf(msg, sizeof(msg), "%s,s=%s,i=04096", r, V_SALT);
    expect_client_final(msg, SFIRST "invalid iterations");
    snprintf(msg, sizeof(msg), "%s,s=%s,i=-4096", r, V_SALT);
    expect_client_final(msg, SFIRST "invalid iterations");
    snprintf(msg, sizeof(msg), "%s,s=%s,i=99999999999", r, V_SALT);
    expect_client_final(msg, SFIRST "invalid iterations");
    snprintf(msg, sizeof(msg), "%s,s=%s,i=", r, V_SALT);
    expect_client_final(msg, SFIRST "invalid iterations");
    /* the nonce must extend ours */
    expect_client_final("r=XOprNGfwEbeRWgbNEkqO" V_SNONCE ",s=" V_SALT ",i=4096",
                        SFIRST "nonce does not extend the client nonce");
    expect_client_final("r=" V_CNONCE ",s=" V_SALT ",i=4096",
                        SFIRST "nonce does not extend the client nonce");
    expect_client_final("r=rOpr,s=" V_SALT ",i=4096",
                        SFIRST "nonce does not extend the client nonce");
    expect_client_final("r=" V_CNONCE "a b,s=" V_SALT ",i=4096",
                        SFIRST "nonce is not 1..512 printable characters");
    /* the salt */
    expect_client_final("r=" V_CNONCE "x,s=W22ZaJ0SNY7soEsUEjb6gQ=,i=4096",
                        SFIRST "salt is not base64 of 1..64 bytes");
    expect_client_final("r=" V_CNONCE "x,s=,i=4096", SFIRST "salt is not base64 of 1..64 bytes");
    expect_client_final("r=" V_CNONCE "x,s=W22ZaJ0SNY7soEsUEjb6gQ*=,i=4096",
                        SFIRST "salt is not base64 of 1..64 bytes");
    /* attributes and size */
    expect_client_final("r=" V_CNONCE "x,s=" V_SALT, SFIRST "missing attribute 'i'");
    expect_client_final("r=" V_CNONCE "x,i=4096", SFIRST "missing attribute 's'");
    expect_client_final("m=1,r=" V_CNONCE "x,s=" V_SALT ",i=4096",
                        SFIRST "mandatory extension 'm' is not supported");
    expect_client_final("r=" V_CNONCE "x,s=" V_SALT ",i=4096,x=1",
                        SFIRST "unexpected attribute 'x'");
    expect_client_final("r=" V_CNONCE "x,s=" V_SALT ",s=" V_SALT ",i=4096",
                        SFIRST "duplicate attribute 's'");
    expect_client_final("e=other-error", SFIRST "unexpected attribute 'e'");
    expect_client_final("", SFIRST "empty message");
    memset(msg, 'x', 4097), msg[4097] = '\0';
    expect_client_final(msg, SFIRST "longer than 4096 bytes");
    /* the server-final */
    expect_verify("e=invalid-proof", "SCRAM authentication failed: invalid-proof");
    expect_verify("e=other-error,x=1", "SCRAM authentication failed: other-error");
    expect_verify("e=\x01\x02", "SCRAM authentication failed: (unprintable)");
    expect_verify("v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
                  SFINAL "server signature mismatch");
    expect_verify("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4",
                  SFINAL "verifier is not base64 of 32 bytes");
    expect_verify("v=", SFINAL "verifier is not base64 of 32 bytes");
    expect_verify(V256_SERVER_FINAL ",x=1", SFINAL "unexpected attribute 'x'");
    expect_verify(V256_SERVER_FINAL "," V256_SERVER_FINAL, SFINAL "duplicate attribute 'v'");
    expect_verify("", SFINAL "empty message");
    /* each message once */
    fl_scram_client_t *c = client_after_final();
    uint8_t *out = NULL;
    size_t n = 0;
    fl_error_t err;
    expect_words(fl_scram_client_first(c, &out, &n, &err), &err, FLUSS_ERR__STATE,
                 "first message already made");
    expect_words(fl_scram_client_final(c, M(V_SERVER_FIRST), &out, &n, &err), &err,
                 FLUSS_ERR__STATE, "not waiting for server first");
    assert_int_equal(fl_scram_client_verify(c, M(V256_SERVER_FINAL), &err), 0);
    expect_words(fl_scram_client_verify(c, M(V256_SERVER_FINAL), &err), &err, FLUSS_ERR__STATE,
                 "not waiting for server final");
    fl_scram_client_free(c);
    /* user names the client will not send */
    c = fl_scram_client_new(FL_SCRAM_SHA256, "", "pw");
    expect_words(fl_scram_client_first(c, &out, &n, &err), &err, FLUSS_ERR__INVALID_ARG,
                 "user name must be 1..512 bytes of UTF-8");
    fl_scram_client_free(c);
    c = fl_scram_client_new(FL_SCRAM_SHA256, "\xff", "pw");
    expect_words(fl_scram_client_first(c, &out, &n, &err), &err, FLUSS_ERR__INVALID_ARG,
                 "user name must be");
    fl_scram_client_free(c);
    /* a random nonce: printable, 32 characters, fresh each time */
    uint8_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    fl_scram_client_t *c1 = fl_scram_client_new(FL_SCRAM_SHA256, "user", "pw");
    fl_scram_client_t *c2 = fl_scram_client_new(FL_SCRAM_SHA256, "user", "pw");
    assert_int_equal(fl_scram_client_first(c1, &a, &na, &err), 0);
    assert_int_equal(fl_scram_client_first(c2, &b, &nb, &err), 0);
    assert_int_equal(na, 12 + 32);
    assert_memory_equal(a, "n,,n=user,r=", 12);
    assert_memory_not_equal(a, b, na);
    fl_free(a), fl_free(b);
    fl_scram_client_free(c1), fl_scram_client_free(c2);
}

static void expect_decode(const char *text, const char *words) {
    fl_scram_credential_t c;
    fl_error_t err;
    fl_err_clear(&err);
    expect_words(fl_scram_credential_decode(text, strlen(text), &c, &err), &err,
                 FLUSS_ERR__CORRUPT, words);
}

static void test_credentials(void **state) {
    (void)state;
    fl_error_t err;
    fl_scram_credential_t a, b;
    for (int h = FL_SCRAM_SHA256; h <= FL_SCRAM_SHA512; h++) {
        assert_int_equal(fl_scram_credential_make(h, "pw", 2, NULL, 0, 4096, &a, &err), 0);
        assert_int_equal(a.hash, h);
        assert_int_equal(a.salt_len, 32);
        assert_int_equal(a.key_len, h == FL_SCRAM_SHA256 ? 32 : 64);
        assert_true(fl_scram_credential_valid(&a));
        char *text = fl_scram_credential_encode(&a);
        assert_int_equal(fl_scram_credential_decode(text, strlen(text), &b, &err), 0);
        assert_int_equal(b.hash, a.hash);
        assert_int_equal(b.iterations, a.iterations);
        assert_int_equal(b.salt_len, a.salt_len);
        assert_int_equal(b.key_len, a.key_len);
        assert_memory_equal(b.salt, a.salt, a.salt_len);
        assert_memory_equal(b.stored_key, a.stored_key, a.key_len);
        assert_memory_equal(b.server_key, a.server_key, a.key_len);
        char *again = fl_scram_credential_encode(&b);
        assert_string_equal(again, text);
        fl_free(text), fl_free(again);
        /* a fresh salt each time */
        assert_int_equal(fl_scram_credential_make(h, "pw", 2, NULL, 0, 4096, &b, &err), 0);
        assert_memory_not_equal(a.salt, b.salt, 32);
    }
    /* a 1-byte and a 64-byte salt, 16384 iterations */
    uint8_t salt[64] = {7};
    assert_int_equal(
        fl_scram_credential_make(FL_SCRAM_SHA512, "pw", 2, salt, 1, 16384, &a, &err), 0);
    char *text = fl_scram_credential_encode(&a);
    assert_memory_equal(text, "SCRAM-SHA-512:16384:Bw==:", 25);
    assert_int_equal(fl_scram_credential_decode(text, strlen(text), &b, &err), 0);
    fl_free(text);
    assert_int_equal(
        fl_scram_credential_make(FL_SCRAM_SHA256, "pw", 2, salt, 64, 4096, &a, &err), 0);
    text = fl_scram_credential_encode(&a);
    assert_int_equal(fl_scram_credential_decode(text, strlen(text), &b, &err), 0);
    fl_free(text);
    /* make's refusals */
    expect_words(fl_scram_credential_make(FL_SCRAM_SHA256, "pw", 2, NULL, 0, 4095, &a, &err),
                 &err, FLUSS_ERR__INVALID_ARG, "iterations 4095 outside [4096, 16384]");
    expect_words(fl_scram_credential_make(FL_SCRAM_SHA256, "pw", 2, NULL, 0, 16385, &a, &err),
                 &err, FLUSS_ERR__INVALID_ARG, "iterations 16385 outside");
    expect_words(fl_scram_credential_make(3, "pw", 2, NULL, 0, 4096, &a, &err), &err,
                 FLUSS_ERR__INVALID_ARG, "unknown hash 3");
    expect_words(fl_scram_credential_make(FL_SCRAM_SHA256, "pw", 2, salt, 0, 4096, &a, &err),
                 &err, FLUSS_ERR__INVALID_ARG, "salt of 0 bytes");
    expect_words(fl_scram_credential_make(FL_SCRAM_SHA256, "pw", 2, salt, 65, 4096, &a, &err),
                 &err, FLUSS_ERR__INVALID_ARG, "salt of 65 bytes");
    /* encode refuses what is not a credential */
    memset(&a, 0, sizeof(a));
    assert_null(fl_scram_credential_encode(&a));
    /* decode's refusals */
    assert_int_equal(
        fl_scram_credential_decode(V256_CREDENTIAL, strlen(V256_CREDENTIAL), &a, &err), 0);
    assert_int_equal(
        fl_scram_credential_decode(V512_CREDENTIAL, strlen(V512_CREDENTIAL), &a, &err), 0);
    const char *k32 = "WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=";
    char t[1024];
    expect_decode("", "expected 5 parts");
    expect_decode("SCRAM-SHA-256:4096:" V_SALT ":x", "expected 5 parts");
    snprintf(t, sizeof(t), "%s:", V256_CREDENTIAL);
    expect_decode(t, "expected 5 parts");
    snprintf(t, sizeof(t), "scram-sha-256:4096:%s:%s:%s", V_SALT, k32, k32);
    expect_decode(t, "unknown mechanism");
    snprintf(t, sizeof(t), "SCRAM-SHA-1:4096:%s:%s:%s", V_SALT, k32, k32);
    expect_decode(t, "unknown mechanism");
    snprintf(t, sizeof(t), "SCRAM-SHA-256:4095:%s:%s:%s", V_SALT, k32, k32);
    expect_decode(t, "iterations not in [4096, 16384]");
    snprintf(t, sizeof(t), "SCRAM-SHA-256:04096:%s:%s:%s", V_SALT, k32, k32);
    expect_decode(t, "iterations not in");
    snprintf(t, sizeof(t), "SCRAM-SHA-256:+4096:%s:%s:%s", V_SALT, k32, k32);
    expect_decode(t, "iterations not in");
    snprintf(t, sizeof(t), "SCRAM-SHA-256:16385:%s:%s:%s", V_SALT, k32, k32);
    expect_decode(t, "iterations not in");
    snprintf(t, sizeof(t), "SCRAM-SHA-256:4096::%s:%s", k32, k32);
    expect_decode(t, "salt is not base64 of 1..64 bytes");
    snprintf(t, sizeof(t), "SCRAM-SHA-256:4096:W22ZaJ0SNY7soEsUEjb6gQ=:%s:%s", k32, k32);
    expect_decode(t, "salt is not base64");
    snprintf(t, sizeof(t), "SCRAM-SHA-256:4096:W22ZaJ0SNY7soEsUEjb6gR==:%s:%s", k32, k32);
    expect_decode(t, "salt is not base64"); /* pad bits */
    snprintf(t, sizeof(t), "SCRAM-SHA-512:4096:%s:%s:%s", V_SALT, k32, k32);
    expect_decode(t, "stored key is not base64 of 64 bytes");
    snprintf(t, sizeof(t), "SCRAM-SHA-256:4096:%s:%s:%s=", V_SALT, k32, k32);
    expect_decode(t, "server key is not base64 of 32 bytes");
    snprintf(t, sizeof(t), "SCRAM-SHA-256:4096:%s:%s: %s", V_SALT, k32, k32);
    expect_decode(t, "server key is not base64");
    memset(t, 'A', 600), t[600] = '\0';
    expect_decode(t, "not text of at most 512 bytes");
    fl_scram_credential_t c;
    expect_words(fl_scram_credential_decode(V256_CREDENTIAL "\0", sizeof(V256_CREDENTIAL), &c,
                                            &err), &err, FLUSS_ERR__CORRUPT, "not text");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mechanism),
        cmocka_unit_test(test_rfc7677_sha256),
        cmocka_unit_test(test_sha512_vector),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_wrong_password_and_unknown_user),
        cmocka_unit_test(test_authzid),
        cmocka_unit_test(test_client_first_refusals),
        cmocka_unit_test(test_client_final_refusals),
        cmocka_unit_test(test_server_replays),
        cmocka_unit_test(test_client_refusals),
        cmocka_unit_test(test_credentials),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
