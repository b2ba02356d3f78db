/*
 * auth_scram.c — SASL/SCRAM-SHA-256/512 exchanges and stored credentials
 * (auth_scram.h). Parsing goes peek → verify → use: a message is bounded
 * and NUL-free before it is split into attributes, every attribute is
 * checked against the exact list and order the RFC gives (no extensions),
 * and only then are values decoded. Base64 is our own strict decoder
 * (canonical padding and zero pad bits) so that a value has one spelling.
 */
#include "auth_scram.h"

#include <assert.h>
#include <ctype.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common_alloc.h"

#define FL_SCRAM_ATTRS_MAX 8
#define FL_SCRAM_NONCE_RANDOM 24 /* random bytes behind a generated nonce */
#define FL_SCRAM_CREDENTIAL_TEXT_MAX 512
#define FL_SCRAM_ERROR_TEXT_MAX 256 /* of a server's e= kept in our error */
#define FL_SCRAM_BAD_CREDENTIALS "Authentication failed: Invalid username or password"
#define FL_SCRAM_AUTHZID_DIFFERS                                                        \
    "Authentication failed: Client requested an authorization id that is different " \
    "from username"

/* ---- hashes ------------------------------------------------------------ */

static const EVP_MD *fl_scram_md(int hash) {
    return hash == FL_SCRAM_SHA256 ? EVP_sha256() : EVP_sha512();
}

static size_t fl_scram_key_len(int hash) { return hash == FL_SCRAM_SHA256 ? 32 : 64; }

static bool fl_scram_hash_known(int hash) {
    return hash == FL_SCRAM_SHA256 || hash == FL_SCRAM_SHA512;
}

static void fl_scram_fatal(const char *what) {
    fprintf(stderr, "fatal: SCRAM %s failed\n", what);
    abort();
}

static void fl_scram_hmac(int hash, const uint8_t *key, size_t key_len, const void *data,
                          size_t n, uint8_t *out) {
    unsigned len = 0;
    if (!HMAC(fl_scram_md(hash), key, (int)key_len, data, n, out, &len) ||
        len != fl_scram_key_len(hash))
        fl_scram_fatal("HMAC");
}

static void fl_scram_digest(int hash, const uint8_t *p, size_t n, uint8_t *out) {
    unsigned len = 0;
    if (!EVP_Digest(p, n, out, &len, fl_scram_md(hash), NULL) || len != fl_scram_key_len(hash))
        fl_scram_fatal("digest");
}

static void fl_scram_random(void *p, size_t n) {
    if (RAND_bytes(p, (int)n) != 1) fl_scram_fatal("RAND_bytes");
}

/* StoredKey and ServerKey from a password (RFC 5802 §3), and ClientKey
 * for a client that signs. */
static void fl_scram_keys(int hash, const char *password, size_t password_len,
                          const uint8_t *salt, size_t salt_len, int32_t iterations,
                          uint8_t *client_key, uint8_t *stored_key, uint8_t *server_key) {
    size_t kl = fl_scram_key_len(hash);
    uint8_t salted[FL_SCRAM_KEY_MAX];
    if (!PKCS5_PBKDF2_HMAC(password_len ? password : "", (int)password_len, salt, (int)salt_len,
                           iterations, fl_scram_md(hash), (int)kl, salted))
        fl_scram_fatal("PBKDF2");
    fl_scram_hmac(hash, salted, kl, "Client Key", 10, client_key);
    fl_scram_hmac(hash, salted, kl, "Server Key", 10, server_key);
    fl_scram_digest(hash, client_key, kl, stored_key);
    OPENSSL_cleanse(salted, sizeof(salted));
}

int fl_scram_mechanism(const char *name) {
    if (!name) return 0;
    if (strcasecmp(name, "SCRAM-SHA-256") == 0) return FL_SCRAM_SHA256;
    if (strcasecmp(name, "SCRAM-SHA-512") == 0) return FL_SCRAM_SHA512;
    return 0;
}

const char *fl_scram_mechanism_name(int hash) {
    if (hash == FL_SCRAM_SHA256) return "SCRAM-SHA-256";
    if (hash == FL_SCRAM_SHA512) return "SCRAM-SHA-512";
    return NULL;
}

/* ---- base64 (strict) --------------------------------------------------- */

static const char FL_SCRAM_B64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* a macro, not a function, so that buffers sized with it are not VLAs */
#define FL_SCRAM_B64_LEN(n) (((n) + 2) / 3 * 4)

/* Writes FL_SCRAM_B64_LEN(n) characters and a NUL. */
static void fl_scram_b64_encode(const uint8_t *p, size_t n, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n) v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n) v |= p[i + 2];
        out[o++] = FL_SCRAM_B64[(v >> 18) & 63];
        out[o++] = FL_SCRAM_B64[(v >> 12) & 63];
        out[o++] = i + 1 < n ? FL_SCRAM_B64[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? FL_SCRAM_B64[v & 63] : '=';
    }
    out[o] = '\0';
}

static int fl_scram_b64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Only the spelling fl_scram_b64_encode writes: length a multiple of 4,
 * '=' only as the last one or two characters, pad bits zero. False if
 * not, or if more than cap bytes. */
static bool fl_scram_b64_decode(const char *s, size_t n, uint8_t *out, size_t cap,
                                size_t *out_n) {
    if (n % 4) return false;
    size_t pad = 0;
    if (n && s[n - 1] == '=') pad = s[n - 2] == '=' ? 2 : 1;
    size_t len = n / 4 * 3 - pad;
    if (len > cap) return false;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        bool last = i + 4 == n;
        int v[4];
        for (size_t k = 0; k < 4; k++) {
            bool padded = last && k >= 4 - pad;
            v[k] = padded ? 0 : fl_scram_b64_value(s[i + k]);
            if (v[k] < 0) return false;
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | v[3];
        out[o++] = (uint8_t)(w >> 16);
        if (o < len) out[o++] = (uint8_t)(w >> 8);
        if (o < len) out[o++] = (uint8_t)w;
    }
    if (pad == 2 && (fl_scram_b64_value(s[n - 3]) & 0x0f)) return false;
    if (pad == 1 && (fl_scram_b64_value(s[n - 2]) & 0x03)) return false;
    *out_n = len;
    return true;
}

/* ---- text checks ------------------------------------------------------- */

/* Well-formed UTF-8 without NUL, overlongs, surrogates or > U+10FFFF. */
static bool fl_scram_utf8_ok(const uint8_t *p, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint8_t c = p[i];
        size_t more;
        uint32_t cp;
        if (c == 0) return false;
        if (c < 0x80) { i++; continue; }
        if ((c & 0xe0) == 0xc0) more = 1, cp = c & 0x1f;
        else if ((c & 0xf0) == 0xe0) more = 2, cp = c & 0x0f;
        else if ((c & 0xf8) == 0xf0) more = 3, cp = c & 0x07;
        else return false;
        if (n - i <= more) return false;
        for (size_t k = 1; k <= more; k++) {
            if ((p[i + k] & 0xc0) != 0x80) return false;
            cp = cp << 6 | (p[i + k] & 0x3f);
        }
        static const uint32_t min[4] = {0, 0x80, 0x800, 0x10000};
        if (cp < min[more] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
        i += more + 1;
    }
    return true;
}

/* RFC 5802 "printable": %x21-2B / %x2D-7E. */
static bool fl_scram_nonce_ok(const char *p, size_t n, size_t max) {
    if (n == 0 || n > max) return false;
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x21 || p[i] > 0x7e || p[i] == ',') return false;
    return true;
}

/* A saslname into out[FL_SCRAM_USER_MAX + 1]: "=2C" and "=3D" only. */
static int fl_scram_unescape(const char *p, size_t n, char *out, const char *what,
                             fl_error_t *err) {
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c == '=') {
            if (n - i >= 3 && p[i + 1] == '2' && p[i + 2] == 'C') c = ',';
            else if (n - i >= 3 && p[i + 1] == '3' && p[i + 2] == 'D') c = '=';
            else return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                                   "invalid escape in %s", what);
            i += 2;
        }
        if (o == FL_SCRAM_USER_MAX)
            return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                              "%s longer than %d bytes", what, FL_SCRAM_USER_MAX);
        out[o++] = c;
    }
    out[o] = '\0';
    if (o == 0) return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, "empty %s", what);
    if (!fl_scram_utf8_ok((const uint8_t *)out, o))
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, "%s is not UTF-8", what);
    return 0;
}

/* user with ',' and '=' escaped, fl_malloc'd. */
static char *fl_scram_escape(const char *user) {
    size_t n = strlen(user), o = 0;
    char *out = fl_malloc(3 * n + 1);
    for (size_t i = 0; i < n; i++) {
        if (user[i] == ',') memcpy(out + o, "=2C", 3), o += 3;
        else if (user[i] == '=') memcpy(out + o, "=3D", 3), o += 3;
        else out[o++] = user[i];
    }
    out[o] = '\0';
    return out;
}

/* Decimal digits without sign or leading zero, at most INT32_MAX; -1 if not. */
static int64_t fl_scram_parse_int(const char *p, size_t n) {
    if (n == 0 || n > 10 || (n > 1 && p[0] == '0')) return -1;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)p[i])) return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v <= INT32_MAX ? v : -1;
}

/* A message off the wire: bounded and without NUL (values become C strings). */
static int fl_scram_message_ok(const uint8_t *msg, size_t len, fl_error_t *err) {
    if (len > FL_SCRAM_MESSAGE_MAX)
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, "longer than %d bytes",
                          FL_SCRAM_MESSAGE_MAX);
    if (len == 0) return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, "empty message");
    if (memchr(msg, 0, len)) return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, "NUL byte");
    return 0;
}

/* ---- attributes -------------------------------------------------------- */

typedef struct fl_scram_attr {
    char name;
    const char *v;
    size_t n;
} fl_scram_attr_t;

static int fl_scram_attrs_split(const char *s, size_t n, fl_scram_attr_t *a, size_t *count,
                                fl_error_t *err) {
    size_t start = 0, k = 0;
    for (;;) {
        const char *comma = memchr(s + start, ',', n - start);
        size_t end = comma ? (size_t)(comma - s) : n;
        if (k == FL_SCRAM_ATTRS_MAX)
            return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, "too many attributes");
        if (end - start < 2 || !isalpha((unsigned char)s[start]) || s[start + 1] != '=')
            return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, "malformed attribute");
        a[k++] = (fl_scram_attr_t){.name = s[start], .v = s + start + 2, .n = end - start - 2};
        if (!comma) break;
        start = end + 1;
    }
    *count = k;
    return 0;
}

/* Says what keeps attribute got (at index i) from being want[i]. */
static int fl_scram_attr_wrong(const char *want, size_t i, char got, fl_error_t *err) {
    size_t nw = strlen(want);
    if (memchr(want, got, i < nw ? i : nw))
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, "duplicate attribute '%c'", got);
    if (got == 'm')
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                          "mandatory extension 'm' is not supported");
    if (i < nw && strchr(want + i + 1, got))
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, "missing attribute '%c'",
                          want[i]);
    return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                      "unexpected attribute '%c' (extensions are not supported)", got);
}

/* s as exactly the attributes want, in that order: a[i] is want[i]. */
static int fl_scram_attrs(const char *s, size_t n, const char *want, fl_scram_attr_t *a,
                          fl_error_t *err) {
    size_t count = 0, nw = strlen(want);
    int rc = fl_scram_attrs_split(s, n, a, &count, err);
    if (rc) return rc;
    for (size_t i = 0; i < count; i++)
        if (i >= nw || a[i].name != want[i]) return fl_scram_attr_wrong(want, i, a[i].name, err);
    if (count < nw)
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, "missing attribute '%c'",
                          want[count]);
    return 0;
}

/* A fl_malloc'd, NUL-terminated message for the caller. */
static void fl_scram_give(const char *text, uint8_t **out, size_t *out_len) {
    size_t n = strlen(text);
    *out = (uint8_t *)fl_strndup(text, n);
    *out_len = n;
}

/* ---- credentials ------------------------------------------------------- */

bool fl_scram_credential_valid(const fl_scram_credential_t *c) {
    return c && fl_scram_hash_known(c->hash) && c->key_len == fl_scram_key_len(c->hash) &&
           c->salt_len >= 1 && c->salt_len <= FL_SCRAM_SALT_MAX &&
           c->iterations >= FL_SCRAM_ITERATIONS_MIN && c->iterations <= FL_SCRAM_ITERATIONS_MAX;
}

int fl_scram_credential_make(int hash, const char *password, size_t password_len,
                             const uint8_t *salt, size_t salt_len, int32_t iterations,
                             fl_scram_credential_t *out, fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    if (!fl_scram_hash_known(hash))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "SCRAM: unknown hash %d", hash);
    if (iterations < FL_SCRAM_ITERATIONS_MIN || iterations > FL_SCRAM_ITERATIONS_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "SCRAM: iterations %d outside [%d, %d]", (int)iterations,
                          FL_SCRAM_ITERATIONS_MIN, FL_SCRAM_ITERATIONS_MAX);
    if (salt && (salt_len == 0 || salt_len > FL_SCRAM_SALT_MAX))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "SCRAM: salt of %zu bytes (1..%d)",
                          salt_len, FL_SCRAM_SALT_MAX);
    if (password_len > INT_MAX || (!password && password_len))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "SCRAM: invalid password");
    out->hash = hash;
    out->iterations = iterations;
    out->key_len = fl_scram_key_len(hash);
    out->salt_len = salt ? salt_len : FL_SCRAM_SALT_DEFAULT;
    if (salt) memcpy(out->salt, salt, salt_len);
    else fl_scram_random(out->salt, out->salt_len);
    uint8_t client_key[FL_SCRAM_KEY_MAX];
    fl_scram_keys(hash, password, password_len, out->salt, out->salt_len, iterations, client_key,
                  out->stored_key, out->server_key);
    OPENSSL_cleanse(client_key, sizeof(client_key));
    return 0;
}

char *fl_scram_credential_encode(const fl_scram_credential_t *c) {
    if (!fl_scram_credential_valid(c)) return NULL;
    char salt[FL_SCRAM_B64_LEN(FL_SCRAM_SALT_MAX) + 1];
    char stored[FL_SCRAM_B64_LEN(FL_SCRAM_KEY_MAX) + 1];
    char server[FL_SCRAM_B64_LEN(FL_SCRAM_KEY_MAX) + 1];
    fl_scram_b64_encode(c->salt, c->salt_len, salt);
    fl_scram_b64_encode(c->stored_key, c->key_len, stored);
    fl_scram_b64_encode(c->server_key, c->key_len, server);
    char *out = fl_malloc(FL_SCRAM_CREDENTIAL_TEXT_MAX + 1);
    int n = snprintf(out, FL_SCRAM_CREDENTIAL_TEXT_MAX + 1, "%s:%d:%s:%s:%s",
                     fl_scram_mechanism_name(c->hash), (int)c->iterations, salt, stored, server);
    assert(n > 0 && n <= FL_SCRAM_CREDENTIAL_TEXT_MAX);
    return out;
}

/* One base64 part of a credential, exactly want bytes (or 1..want if !exact). */
static int fl_scram_credential_b64(const char *p, size_t n, uint8_t *out, size_t want,
                                   bool exact, size_t *got, const char *what, fl_error_t *err) {
    if (!fl_scram_b64_decode(p, n, out, want, got) || *got == 0 || (exact && *got != want))
        return fl_err_set(err, FLUSS_ERR__CORRUPT,
                          "Invalid SCRAM credential: %s is not base64 of %s%zu bytes", what,
                          exact ? "" : "1..", want);
    return 0;
}

int fl_scram_credential_decode(const char *text, size_t len, fl_scram_credential_t *out,
                               fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    if (len > FL_SCRAM_CREDENTIAL_TEXT_MAX || memchr(text, 0, len))
        return fl_err_set(err, FLUSS_ERR__CORRUPT,
                          "Invalid SCRAM credential: not text of at most %d bytes",
                          FL_SCRAM_CREDENTIAL_TEXT_MAX);
    const char *part[5];
    size_t plen[5], k = 0, start = 0;
    for (;;) {
        const char *colon = memchr(text + start, ':', len - start);
        size_t end = colon ? (size_t)(colon - text) : len;
        if (k == 5) break;
        part[k] = text + start, plen[k] = end - start, k++;
        if (!colon) break;
        start = end + 1;
    }
    if (k != 5 || part[4] + plen[4] != text + len)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "Invalid SCRAM credential: expected 5 parts");
    /* the exact spelling encode writes, so text that decodes encodes back */
    if (plen[0] == 13 && memcmp(part[0], "SCRAM-SHA-256", 13) == 0) out->hash = FL_SCRAM_SHA256;
    else if (plen[0] == 13 && memcmp(part[0], "SCRAM-SHA-512", 13) == 0)
        out->hash = FL_SCRAM_SHA512;
    else return fl_err_set(err, FLUSS_ERR__CORRUPT, "Invalid SCRAM credential: unknown mechanism");
    int64_t it = fl_scram_parse_int(part[1], plen[1]);
    if (it < FL_SCRAM_ITERATIONS_MIN || it > FL_SCRAM_ITERATIONS_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT,
                          "Invalid SCRAM credential: iterations not in [%d, %d]",
                          FL_SCRAM_ITERATIONS_MIN, FL_SCRAM_ITERATIONS_MAX);
    out->iterations = (int32_t)it;
    out->key_len = fl_scram_key_len(out->hash);
    size_t got;
    if (fl_scram_credential_b64(part[2], plen[2], out->salt, FL_SCRAM_SALT_MAX, false,
                                &out->salt_len, "salt", err) ||
        fl_scram_credential_b64(part[3], plen[3], out->stored_key, out->key_len, true, &got,
                                "stored key", err) ||
        fl_scram_credential_b64(part[4], plen[4], out->server_key, out->key_len, true, &got,
                                "server key", err)) {
        memset(out, 0, sizeof(*out));
        return FLUSS_ERR__CORRUPT;
    }
    return 0;
}

/* ---- server ------------------------------------------------------------ */

typedef enum fl_scram_server_state {
    FL_SCRAM_SERVER_START,
    FL_SCRAM_SERVER_FIRST_DONE,
    FL_SCRAM_SERVER_AUTHENTICATED,
    FL_SCRAM_SERVER_FAILED,
} fl_scram_server_state_t;

struct fl_scram_server {
    int hash;
    fl_scram_server_state_t state;
    uint8_t secret[FL_SCRAM_SECRET_LEN];
    char snonce[FL_SCRAM_NONCE_MAX + 1]; /* empty: a random one at the first message */
    char user[FL_SCRAM_USER_MAX + 1];
    char *gs2_b64;           /* what c= must be */
    char *client_first_bare; /* for the AuthMessage */
    char *server_first;
    size_t nonce_len; /* the nonce is server_first + 2 */
    fl_scram_credential_t cred;
    bool known;
};

fl_scram_server_t *fl_scram_server_new(int hash, const uint8_t secret[FL_SCRAM_SECRET_LEN]) {
    if (!fl_scram_hash_known(hash) || !secret) return NULL;
    fl_scram_server_t *s = fl_calloc(1, sizeof(*s));
    s->hash = hash;
    memcpy(s->secret, secret, FL_SCRAM_SECRET_LEN);
    return s;
}

void fl_scram_server_free(fl_scram_server_t *s) {
    if (!s) return;
    fl_free(s->gs2_b64);
    fl_free(s->client_first_bare);
    fl_free(s->server_first);
    OPENSSL_cleanse(s, sizeof(*s));
    fl_free(s);
}

void fl_scram_server_set_nonce(fl_scram_server_t *s, const char *nonce) {
    size_t n = strlen(nonce);
    assert(fl_scram_nonce_ok(nonce, n, FL_SCRAM_NONCE_MAX));
    memcpy(s->snonce, nonce, n + 1);
}

bool fl_scram_server_done(const fl_scram_server_t *s) {
    return s && s->state == FL_SCRAM_SERVER_AUTHENTICATED;
}

const char *fl_scram_server_user(const fl_scram_server_t *s) {
    return fl_scram_server_done(s) ? s->user : NULL;
}

/* HMAC(secret, label NUL user) with the given hash: an unknown user's
 * stand-in values, the same on every attempt against this server. */
static void fl_scram_fake(const fl_scram_server_t *s, int hash, const char *label,
                          const char *user, uint8_t *out) {
    char buf[32 + FL_SCRAM_USER_MAX + 1];
    size_t nl = strlen(label), nu = strlen(user);
    assert(nl < 32 && nu <= FL_SCRAM_USER_MAX);
    memcpy(buf, label, nl + 1);
    memcpy(buf + nl + 1, user, nu);
    fl_scram_hmac(hash, s->secret, sizeof(s->secret), buf, nl + 1 + nu, out);
}

static void fl_scram_server_credential(fl_scram_server_t *s, fl_scram_lookup_fn lookup,
                                       void *arg) {
    fl_scram_credential_t *c = &s->cred;
    memset(c, 0, sizeof(*c));
    s->known = lookup && lookup(arg, s->user, s->hash, c) && fl_scram_credential_valid(c) &&
               c->hash == s->hash;
    if (s->known) return;
    memset(c, 0, sizeof(*c));
    c->hash = s->hash;
    c->iterations = FL_SCRAM_ITERATIONS_MIN;
    c->key_len = fl_scram_key_len(s->hash);
    c->salt_len = FL_SCRAM_SALT_DEFAULT;
    fl_scram_fake(s, FL_SCRAM_SHA256, "fluss-scram-salt", s->user, c->salt);
    fl_scram_fake(s, s->hash, "fluss-scram-stored-key", s->user, c->stored_key);
    fl_scram_fake(s, s->hash, "fluss-scram-server-key", s->user, c->server_key);
}

/* The gs2 header: "n,," or "n,a=<authzid>,". Its length in *hdr_len and
 * the unescaped authzid (or "") in authz. */
static int fl_scram_gs2(const char *m, size_t n, size_t *hdr_len, char *authz, fl_error_t *err) {
    if (n >= 2 && ((m[0] == 'y' && m[1] == ',') || (m[0] == 'p' && m[1] == '=')))
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                          "channel binding is not supported");
    if (n < 3 || m[0] != 'n' || m[1] != ',')
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, "invalid gs2 header");
    authz[0] = '\0';
    if (m[2] == ',') {
        *hdr_len = 3;
        return 0;
    }
    const char *comma = n > 4 ? memchr(m + 4, ',', n - 4) : NULL;
    if (m[2] != 'a' || n < 4 || m[3] != '=' || !comma)
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, "invalid gs2 header");
    *hdr_len = (size_t)(comma - m) + 1;
    return fl_scram_unescape(m + 4, (size_t)(comma - m) - 4, authz, "authzid", err);
}

/* Parses client-first into s: user, client_first_bare, gs2_b64; the client
 * nonce in cnonce and cnonce_n (pointing into msg). */
static int fl_scram_server_parse_first(fl_scram_server_t *s, const char *m, size_t n,
                                       char *authz, const char **cnonce, size_t *cnonce_n,
                                       fl_error_t *err) {
    size_t hdr = 0;
    if (fl_scram_gs2(m, n, &hdr, authz, err)) return FLUSS_ERR_AUTHENTICATE_EXCEPTION;
    fl_scram_attr_t a[FL_SCRAM_ATTRS_MAX];
    if (fl_scram_attrs(m + hdr, n - hdr, "nr", a, err)) return FLUSS_ERR_AUTHENTICATE_EXCEPTION;
    if (fl_scram_unescape(a[0].v, a[0].n, s->user, "user name", err))
        return FLUSS_ERR_AUTHENTICATE_EXCEPTION;
    if (!fl_scram_nonce_ok(a[1].v, a[1].n, FL_SCRAM_NONCE_MAX))
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                          "nonce is not 1..%d printable characters", FL_SCRAM_NONCE_MAX);
    *cnonce = a[1].v, *cnonce_n = a[1].n;
    s->client_first_bare = fl_strndup(m + hdr, n - hdr);
    s->gs2_b64 = fl_malloc(FL_SCRAM_B64_LEN(hdr) + 1);
    fl_scram_b64_encode((const uint8_t *)m, hdr, s->gs2_b64);
    return 0;
}

static void fl_scram_server_make_first(fl_scram_server_t *s, const char *cnonce,
                                       size_t cnonce_n) {
    if (!s->snonce[0]) {
        uint8_t r[FL_SCRAM_NONCE_RANDOM];
        fl_scram_random(r, sizeof(r));
        fl_scram_b64_encode(r, sizeof(r), s->snonce); /* 24 bytes: no '=' */
    }
    char salt[FL_SCRAM_B64_LEN(FL_SCRAM_SALT_MAX) + 1];
    fl_scram_b64_encode(s->cred.salt, s->cred.salt_len, salt);
    size_t cap = 2 + cnonce_n + strlen(s->snonce) + 3 + strlen(salt) + 3 + 11 + 1;
    s->server_first = fl_malloc(cap);
    snprintf(s->server_first, cap, "r=%.*s%s,s=%s,i=%d", (int)cnonce_n, cnonce, s->snonce, salt,
             (int)s->cred.iterations);
    s->nonce_len = cnonce_n + strlen(s->snonce);
}

static int fl_scram_server_first_do(fl_scram_server_t *s, const uint8_t *msg, size_t len,
                                    fl_scram_lookup_fn lookup, void *arg, fl_error_t *err) {
    if (s->state != FL_SCRAM_SERVER_START)
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                          "Invalid SCRAM client first message: exchange already started");
    char authz[FL_SCRAM_USER_MAX + 1];
    const char *cnonce = NULL;
    size_t cnonce_n = 0;
    if (fl_scram_message_ok(msg, len, err) ||
        fl_scram_server_parse_first(s, (const char *)msg, len, authz, &cnonce, &cnonce_n, err)) {
        fl_err_prefix(err, "Invalid SCRAM client first message: ");
        return FLUSS_ERR_AUTHENTICATE_EXCEPTION;
    }
    if (authz[0] && strcmp(authz, s->user) != 0)
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, FL_SCRAM_AUTHZID_DIFFERS);
    fl_scram_server_credential(s, lookup, arg);
    fl_scram_server_make_first(s, cnonce, cnonce_n);
    return 0;
}

int fl_scram_server_first(fl_scram_server_t *s, const uint8_t *msg, size_t len,
                          fl_scram_lookup_fn lookup, void *arg, uint8_t **out, size_t *out_len,
                          fl_error_t *err) {
    *out = NULL, *out_len = 0;
    int rc = fl_scram_server_first_do(s, msg, len, lookup, arg, err);
    if (rc) {
        s->state = FL_SCRAM_SERVER_FAILED;
        return rc;
    }
    s->state = FL_SCRAM_SERVER_FIRST_DONE;
    fl_scram_give(s->server_first, out, out_len);
    return 0;
}

/* Checks client-final's shape, c= and r=; the decoded proof in proof
 * and the length of client-final-without-proof in *bare_n. */
static int fl_scram_server_parse_final(const fl_scram_server_t *s, const char *m, size_t n,
                                       uint8_t *proof, size_t *bare_n, fl_error_t *err) {
    fl_scram_attr_t a[FL_SCRAM_ATTRS_MAX];
    if (fl_scram_attrs(m, n, "crp", a, err)) return FLUSS_ERR_AUTHENTICATE_EXCEPTION;
    if (a[0].n != strlen(s->gs2_b64) || memcmp(a[0].v, s->gs2_b64, a[0].n) != 0)
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                          "channel binding (c=) does not match the gs2 header");
    if (a[1].n != s->nonce_len || memcmp(a[1].v, s->server_first + 2, a[1].n) != 0)
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, "nonce mismatch");
    size_t got = 0;
    if (!fl_scram_b64_decode(a[2].v, a[2].n, proof, FL_SCRAM_KEY_MAX, &got) ||
        got != s->cred.key_len)
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                          "proof is not base64 of %zu bytes", s->cred.key_len);
    *bare_n = (size_t)(a[2].v - m) - 3; /* up to ",p=" */
    return 0;
}

/* client-first-bare "," server-first "," client-final-without-proof */
static char *fl_scram_auth_message(const char *first_bare, const char *server_first,
                                   const char *final_bare, size_t final_bare_n, size_t *n) {
    size_t a = strlen(first_bare), b = strlen(server_first);
    *n = a + 1 + b + 1 + final_bare_n;
    char *am = fl_malloc(*n + 1);
    memcpy(am, first_bare, a);
    am[a] = ',';
    memcpy(am + a + 1, server_first, b);
    am[a + 1 + b] = ',';
    memcpy(am + a + 2 + b, final_bare, final_bare_n);
    am[*n] = '\0';
    return am;
}

/* H(proof XOR HMAC(StoredKey, am)) == StoredKey, in constant time; the
 * server signature into sig. */
static bool fl_scram_server_verify(const fl_scram_server_t *s, const uint8_t *proof,
                                   const char *am, size_t am_n, uint8_t *sig) {
    const fl_scram_credential_t *c = &s->cred;
    uint8_t client_sig[FL_SCRAM_KEY_MAX], client_key[FL_SCRAM_KEY_MAX], stored[FL_SCRAM_KEY_MAX];
    fl_scram_hmac(s->hash, c->stored_key, c->key_len, am, am_n, client_sig);
    for (size_t i = 0; i < c->key_len; i++) client_key[i] = proof[i] ^ client_sig[i];
    fl_scram_digest(s->hash, client_key, c->key_len, stored);
    int differs = CRYPTO_memcmp(stored, c->stored_key, c->key_len);
    fl_scram_hmac(s->hash, c->server_key, c->key_len, am, am_n, sig);
    OPENSSL_cleanse(client_key, sizeof(client_key));
    /* an unknown user fails even if a proof happened to fit its made-up key */
    return (differs == 0) & s->known;
}

static int fl_scram_server_final_do(fl_scram_server_t *s, const uint8_t *msg, size_t len,
                                    char *reply, fl_error_t *err) {
    if (s->state != FL_SCRAM_SERVER_FIRST_DONE)
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                          "Invalid SCRAM client final message: %s",
                          s->state == FL_SCRAM_SERVER_START ? "no client first message"
                          : s->state == FL_SCRAM_SERVER_AUTHENTICATED
                              ? "exchange already complete"
                              : "exchange already failed");
    uint8_t proof[FL_SCRAM_KEY_MAX];
    size_t bare_n = 0;
    if (fl_scram_message_ok(msg, len, err) ||
        fl_scram_server_parse_final(s, (const char *)msg, len, proof, &bare_n, err)) {
        fl_err_prefix(err, "Invalid SCRAM client final message: ");
        return FLUSS_ERR_AUTHENTICATE_EXCEPTION;
    }
    size_t am_n = 0;
    char *am = fl_scram_auth_message(s->client_first_bare, s->server_first, (const char *)msg,
                                     bare_n, &am_n);
    uint8_t sig[FL_SCRAM_KEY_MAX];
    bool ok = fl_scram_server_verify(s, proof, am, am_n, sig);
    fl_free(am);
    if (!ok) return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, FL_SCRAM_BAD_CREDENTIALS);
    memcpy(reply, "v=", 2);
    fl_scram_b64_encode(sig, s->cred.key_len, reply + 2);
    return 0;
}

int fl_scram_server_final(fl_scram_server_t *s, const uint8_t *msg, size_t len, uint8_t **out,
                          size_t *out_len, fl_error_t *err) {
    *out = NULL, *out_len = 0;
    char reply[2 + FL_SCRAM_B64_LEN(FL_SCRAM_KEY_MAX) + 1];
    int rc = fl_scram_server_final_do(s, msg, len, reply, err);
    if (rc) {
        s->state = FL_SCRAM_SERVER_FAILED;
        return rc;
    }
    s->state = FL_SCRAM_SERVER_AUTHENTICATED;
    fl_scram_give(reply, out, out_len);
    return 0;
}

/* ---- client ------------------------------------------------------------ */

typedef enum fl_scram_client_state {
    FL_SCRAM_CLIENT_START,
    FL_SCRAM_CLIENT_FIRST_SENT,
    FL_SCRAM_CLIENT_FINAL_SENT,
    FL_SCRAM_CLIENT_VERIFIED,
    FL_SCRAM_CLIENT_FAILED,
} fl_scram_client_state_t;

struct fl_scram_client {
    int hash;
    fl_scram_client_state_t state;
    char *user;
    char *password;
    char cnonce[FL_SCRAM_NONCE_MAX + 1]; /* empty: a random one at the first message */
    char *client_first_bare;
    uint8_t server_signature[FL_SCRAM_KEY_MAX]; /* what v= must be */
};

fl_scram_client_t *fl_scram_client_new(int hash, const char *user, const char *password) {
    if (!fl_scram_hash_known(hash) || !user || !password) return NULL;
    fl_scram_client_t *c = fl_calloc(1, sizeof(*c));
    c->hash = hash;
    c->user = fl_strdup(user);
    c->password = fl_strdup(password);
    return c;
}

void fl_scram_client_free(fl_scram_client_t *c) {
    if (!c) return;
    fl_free(c->user);
    OPENSSL_cleanse(c->password, strlen(c->password));
    fl_free(c->password);
    fl_free(c->client_first_bare);
    OPENSSL_cleanse(c, sizeof(*c));
    fl_free(c);
}

void fl_scram_client_set_nonce(fl_scram_client_t *c, const char *nonce) {
    size_t n = strlen(nonce);
    assert(fl_scram_nonce_ok(nonce, n, FL_SCRAM_NONCE_MAX));
    memcpy(c->cnonce, nonce, n + 1);
}

int fl_scram_client_first(fl_scram_client_t *c, uint8_t **out, size_t *out_len, fl_error_t *err) {
    *out = NULL, *out_len = 0;
    if (c->state != FL_SCRAM_CLIENT_START)
        return fl_err_set(err, FLUSS_ERR__STATE, "SCRAM client: first message already made");
    size_t nu = strlen(c->user);
    if (nu == 0 || nu > FL_SCRAM_USER_MAX || !fl_scram_utf8_ok((const uint8_t *)c->user, nu))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "SCRAM client: the user name must be 1..%d bytes of UTF-8",
                          FL_SCRAM_USER_MAX);
    if (!c->cnonce[0]) {
        uint8_t r[FL_SCRAM_NONCE_RANDOM];
        fl_scram_random(r, sizeof(r));
        fl_scram_b64_encode(r, sizeof(r), c->cnonce);
    }
    char *esc = fl_scram_escape(c->user);
    size_t cap = 2 + strlen(esc) + 3 + strlen(c->cnonce) + 1;
    c->client_first_bare = fl_malloc(cap);
    snprintf(c->client_first_bare, cap, "n=%s,r=%s", esc, c->cnonce);
    fl_free(esc);
    size_t n = 3 + strlen(c->client_first_bare);
    *out = fl_malloc(n + 1);
    memcpy(*out, "n,,", 3);
    memcpy(*out + 3, c->client_first_bare, n - 3 + 1);
    *out_len = n;
    c->state = FL_SCRAM_CLIENT_FIRST_SENT;
    return 0;
}

/* The server-first's nonce, salt and iterations, checked. */
static int fl_scram_client_parse_first(const fl_scram_client_t *c, const char *m, size_t n,
                                       fl_scram_attr_t *nonce, uint8_t *salt, size_t *salt_len,
                                       int32_t *iterations, fl_error_t *err) {
    fl_scram_attr_t a[FL_SCRAM_ATTRS_MAX];
    if (fl_scram_attrs(m, n, "rsi", a, err)) return FLUSS_ERR_AUTHENTICATE_EXCEPTION;
    size_t own = strlen(c->cnonce);
    if (!fl_scram_nonce_ok(a[0].v, a[0].n, 2 * FL_SCRAM_NONCE_MAX))
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                          "nonce is not 1..%d printable characters", 2 * FL_SCRAM_NONCE_MAX);
    if (a[0].n <= own || memcmp(a[0].v, c->cnonce, own) != 0)
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                          "nonce does not extend the client nonce");
    if (!fl_scram_b64_decode(a[1].v, a[1].n, salt, FL_SCRAM_SALT_MAX, salt_len) || !*salt_len)
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                          "salt is not base64 of 1..%d bytes", FL_SCRAM_SALT_MAX);
    int64_t it = fl_scram_parse_int(a[2].v, a[2].n);
    if (it < 0) return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, "invalid iterations");
    if (it < FL_SCRAM_ITERATIONS_MIN || it > FL_SCRAM_ITERATIONS_MAX)
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                          "iterations %d outside [%d, %d]", (int)it, FL_SCRAM_ITERATIONS_MIN,
                          FL_SCRAM_ITERATIONS_MAX);
    *nonce = a[0];
    *iterations = (int32_t)it;
    return 0;
}

/* "c=biws,r=<nonce>,p=<proof>", keeping the server signature to expect. */
static char *fl_scram_client_sign(fl_scram_client_t *c, const char *server_first,
                                  const fl_scram_attr_t *nonce, const uint8_t *salt,
                                  size_t salt_len, int32_t iterations, size_t *out_len) {
    size_t kl = fl_scram_key_len(c->hash);
    uint8_t client_key[FL_SCRAM_KEY_MAX], stored[FL_SCRAM_KEY_MAX], server_key[FL_SCRAM_KEY_MAX];
    uint8_t sig[FL_SCRAM_KEY_MAX];
    fl_scram_keys(c->hash, c->password, strlen(c->password), salt, salt_len, iterations,
                  client_key, stored, server_key);
    size_t cap = 9 + nonce->n + 3 + FL_SCRAM_B64_LEN(kl) + 1, am_n = 0;
    char *final = fl_malloc(cap);
    int bare_n = snprintf(final, cap, "c=biws,r=%.*s", (int)nonce->n, nonce->v);
    char *am = fl_scram_auth_message(c->client_first_bare, server_first, final, (size_t)bare_n,
                                     &am_n);
    fl_scram_hmac(c->hash, stored, kl, am, am_n, sig);
    for (size_t i = 0; i < kl; i++) client_key[i] ^= sig[i]; /* now the proof */
    memcpy(final + bare_n, ",p=", 3);
    fl_scram_b64_encode(client_key, kl, final + bare_n + 3);
    fl_scram_hmac(c->hash, server_key, kl, am, am_n, c->server_signature);
    fl_free(am);
    OPENSSL_cleanse(client_key, sizeof(client_key));
    OPENSSL_cleanse(server_key, sizeof(server_key));
    *out_len = strlen(final);
    return final;
}

int fl_scram_client_final(fl_scram_client_t *c, const uint8_t *server_first, size_t len,
                          uint8_t **out, size_t *out_len, fl_error_t *err) {
    *out = NULL, *out_len = 0;
    if (c->state != FL_SCRAM_CLIENT_FIRST_SENT)
        return fl_err_set(err, FLUSS_ERR__STATE, "SCRAM client: not waiting for server first");
    fl_scram_attr_t nonce = {0};
    uint8_t salt[FL_SCRAM_SALT_MAX];
    size_t salt_len = 0;
    int32_t iterations = 0;
    if (fl_scram_message_ok(server_first, len, err) ||
        fl_scram_client_parse_first(c, (const char *)server_first, len, &nonce, salt, &salt_len,
                                    &iterations, err)) {
        c->state = FL_SCRAM_CLIENT_FAILED;
        fl_err_prefix(err, "Invalid SCRAM server first message: ");
        return FLUSS_ERR_AUTHENTICATE_EXCEPTION;
    }
    char *first = fl_strndup((const char *)server_first, len);
    *out = (uint8_t *)fl_scram_client_sign(c, first, &nonce, salt, salt_len, iterations,
                                           out_len);
    fl_free(first);
    c->state = FL_SCRAM_CLIENT_FINAL_SENT;
    return 0;
}

static bool fl_scram_printable(const char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20 || p[i] > 0x7e) return false;
    return true;
}

static int fl_scram_client_verify_do(fl_scram_client_t *c, const char *m, size_t len,
                                     fl_error_t *err) {
    /* e= first: the server's own words, shown whatever follows them */
    if (len >= 2 && m[0] == 'e' && m[1] == '=') {
        const char *end = memchr(m, ',', len);
        size_t n = (end ? (size_t)(end - m) : len) - 2;
        if (!fl_scram_printable(m + 2, n)) m = "e=(unprintable)", n = 13;
        return fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                          "SCRAM authentication failed: %.*s",
                          (int)(n > FL_SCRAM_ERROR_TEXT_MAX ? FL_SCRAM_ERROR_TEXT_MAX : n),
                          m + 2);
    }
    fl_scram_attr_t a[FL_SCRAM_ATTRS_MAX];
    uint8_t sig[FL_SCRAM_KEY_MAX];
    size_t kl = fl_scram_key_len(c->hash), got = 0;
    if (fl_scram_attrs(m, len, "v", a, err)) goto bad;
    if (!fl_scram_b64_decode(a[0].v, a[0].n, sig, sizeof(sig), &got) || got != kl) {
        fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, "verifier is not base64 of %zu bytes",
                   kl);
        goto bad;
    }
    if (CRYPTO_memcmp(sig, c->server_signature, kl) != 0) {
        fl_err_set(err, FLUSS_ERR_AUTHENTICATE_EXCEPTION, "server signature mismatch");
        goto bad;
    }
    return 0;
bad:
    fl_err_prefix(err, "Invalid SCRAM server final message: ");
    return FLUSS_ERR_AUTHENTICATE_EXCEPTION;
}

int fl_scram_client_verify(fl_scram_client_t *c, const uint8_t *server_final, size_t len,
                           fl_error_t *err) {
    if (c->state != FL_SCRAM_CLIENT_FINAL_SENT)
        return fl_err_set(err, FLUSS_ERR__STATE, "SCRAM client: not waiting for server final");
    int rc = fl_scram_message_ok(server_final, len, err);
    if (rc) fl_err_prefix(err, "Invalid SCRAM server final message: ");
    else rc = fl_scram_client_verify_do(c, (const char *)server_final, len, err);
    c->state = rc ? FL_SCRAM_CLIENT_FAILED : FL_SCRAM_CLIENT_VERIFIED;
    return rc;
}
