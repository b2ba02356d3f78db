/*
 * auth_scram.h — SASL/SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677)
 * as Kafka's SCRAM login module speaks it, for Fluss's AUTHENTICATE
 * exchange: the server side (flussd), the client side (libfluss) and the
 * stored credential (salt, iterations, StoredKey, ServerKey; never the
 * password) with its text form for the metadata store.
 *
 * No channel binding: the gs2 header is "n,," or "n,a=<authzid>,", and
 * "y"/"p=" are refused, as are extensions ("m=" and unknown attributes).
 * Every message is bounded (FL_SCRAM_MESSAGE_MAX) and so is every field
 * in it; nothing is trusted before the proof is checked. Passwords are
 * used as their raw bytes (no SASLprep), as Kafka does.
 *
 *   client-first  n,[a=<authzid>],n=<user>,r=<cnonce>
 *   server-first  r=<cnonce><snonce>,s=<base64 salt>,i=<iterations>
 *   client-final  c=<base64 gs2 header>,r=<cnonce><snonce>,p=<base64 proof>
 *   server-final  v=<base64 server signature> | e=<error>
 *
 * User names travel escaped ("=2C" for ',', "=3D" for '='); the API takes
 * and gives them unescaped. Output messages are fl_malloc'd, NUL-terminated
 * for convenience (the NUL is not counted in *out_len); the caller frees
 * them with fl_free.
 *
 * An unknown user gets a made-up credential (salt and keys from
 * HMAC(server secret, user)) so that its server-first looks like a known
 * user's and it fails at the proof with the same words as a wrong password.
 *
 * Thread rule: none inside; one exchange (server or client object) belongs
 * to one thread at a time. Nothing here logs.
 */
#ifndef FL_AUTH_SCRAM_H
#define FL_AUTH_SCRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"

enum { FL_SCRAM_SHA256 = 1, FL_SCRAM_SHA512 = 2 };

#define FL_SCRAM_ITERATIONS_MIN 4096
/* Kafka's ScramMechanism maximum; also what a client agrees to spend on a
 * server's word. */
#define FL_SCRAM_ITERATIONS_MAX 16384
#define FL_SCRAM_USER_MAX 512      /* bytes, unescaped */
#define FL_SCRAM_NONCE_MAX 256     /* each side's part of the nonce */
#define FL_SCRAM_MESSAGE_MAX 4096  /* any one message, either direction */
#define FL_SCRAM_SALT_MAX 64
#define FL_SCRAM_SALT_DEFAULT 32
#define FL_SCRAM_KEY_MAX 64
#define FL_SCRAM_SECRET_LEN 32

/* "SCRAM-SHA-256"/"SCRAM-SHA-512" (any case) -> FL_SCRAM_SHA256/512, else 0. */
int fl_scram_mechanism(const char *name);
/* The canonical name of hash, or NULL for an unknown one. */
const char *fl_scram_mechanism_name(int hash);

/* What a server stores for a user: never the password. */
typedef struct fl_scram_credential {
    int hash;
    int32_t iterations;
    uint8_t salt[FL_SCRAM_SALT_MAX];
    size_t salt_len;
    uint8_t stored_key[FL_SCRAM_KEY_MAX];
    uint8_t server_key[FL_SCRAM_KEY_MAX];
    size_t key_len; /* 32 or 64: the hash's digest length */
} fl_scram_credential_t;

/* From a password: a random 32-byte salt when salt is NULL (else 1..64
 * bytes); iterations in [FL_SCRAM_ITERATIONS_MIN, FL_SCRAM_ITERATIONS_MAX]. */
int fl_scram_credential_make(int hash, const char *password, size_t password_len,
                             const uint8_t *salt, size_t salt_len, int32_t iterations,
                             fl_scram_credential_t *out, fl_error_t *err);
/* "<mechanism>:<iterations>:<salt b64>:<stored_key b64>:<server_key b64>",
 * fl_malloc'd; NULL if c is not a valid credential. */
char *fl_scram_credential_encode(const fl_scram_credential_t *c);
/* The inverse; accepts only the canonical form encode writes (so text that
 * decodes encodes back to itself) and checks every part. Errors are
 * FLUSS_ERR__CORRUPT "Invalid SCRAM credential: <why>". */
int fl_scram_credential_decode(const char *text, size_t len, fl_scram_credential_t *out,
                               fl_error_t *err);
/* True if c is well-formed (known hash, key_len of the hash, salt and
 * iterations in bounds). */
bool fl_scram_credential_valid(const fl_scram_credential_t *c);

/* ---- server side ------------------------------------------------------ */

/* Fills *out with user's credential for hash and returns true, or returns
 * false for an unknown user. A credential that is not valid for hash is
 * treated as an unknown user. */
typedef bool (*fl_scram_lookup_fn)(void *arg, const char *user, int hash,
                                   fl_scram_credential_t *out);

typedef struct fl_scram_server fl_scram_server_t;

/* One exchange. secret: FL_SCRAM_SECRET_LEN bytes fixed per server (so an
 * unknown user's made-up salt is the same on every attempt). NULL for an
 * unknown hash. */
fl_scram_server_t *fl_scram_server_new(int hash, const uint8_t secret[FL_SCRAM_SECRET_LEN]);
void fl_scram_server_free(fl_scram_server_t *s);
/* client-first -> server-first. Errors: FLUSS_ERR_AUTHENTICATE_EXCEPTION,
 * "Invalid SCRAM client first message: <why>" (or, for an authzid other
 * than the user, Kafka's "Authentication failed: Client requested an
 * authorization id that is different from username"). lookup may be NULL
 * (every user unknown). */
int fl_scram_server_first(fl_scram_server_t *s, const uint8_t *msg, size_t len,
                          fl_scram_lookup_fn lookup, void *arg, uint8_t **out, size_t *out_len,
                          fl_error_t *err);
/* client-final -> server-final. A wrong proof or an unknown user:
 * "Authentication failed: Invalid username or password" (the same words);
 * malformed: "Invalid SCRAM client final message: <why>"; another nonce:
 * "Invalid SCRAM client final message: nonce mismatch". Any error ends the
 * exchange: later calls are refused. */
int fl_scram_server_final(fl_scram_server_t *s, const uint8_t *msg, size_t len, uint8_t **out,
                          size_t *out_len, fl_error_t *err);
/* True once the client's proof was checked and the server-final made. */
bool fl_scram_server_done(const fl_scram_server_t *s);
/* The authenticated user (unescaped), or NULL before done. Borrowed: valid
 * until fl_scram_server_free. */
const char *fl_scram_server_user(const fl_scram_server_t *s);
/* For tests: a fixed server nonce (printable, no ',', 1..256 bytes)
 * instead of a random one. */
void fl_scram_server_set_nonce(fl_scram_server_t *s, const char *nonce);

/* ---- client side (libfluss) ------------------------------------------- */

typedef struct fl_scram_client fl_scram_client_t;

/* NULL for an unknown hash. user and password are copied. */
fl_scram_client_t *fl_scram_client_new(int hash, const char *user, const char *password);
void fl_scram_client_free(fl_scram_client_t *c);
/* The client-first message. Errors: FLUSS_ERR__INVALID_ARG for a user
 * name that is empty, too long or not UTF-8. */
int fl_scram_client_first(fl_scram_client_t *c, uint8_t **out, size_t *out_len, fl_error_t *err);
/* server-first -> client-final. Refuses iterations outside
 * [FL_SCRAM_ITERATIONS_MIN, FL_SCRAM_ITERATIONS_MAX] and a nonce that does
 * not extend its own: FLUSS_ERR_AUTHENTICATE_EXCEPTION, "Invalid SCRAM
 * server first message: <why>". */
int fl_scram_client_final(fl_scram_client_t *c, const uint8_t *server_first, size_t len,
                          uint8_t **out, size_t *out_len, fl_error_t *err);
/* Checks the server-final's v= in constant time ("Invalid SCRAM server
 * final message: <why>"); e= -> "SCRAM authentication failed: <its text>". */
int fl_scram_client_verify(fl_scram_client_t *c, const uint8_t *server_final, size_t len,
                           fl_error_t *err);
/* For tests: a fixed client nonce (printable, no ',', 1..256 bytes). */
void fl_scram_client_set_nonce(fl_scram_client_t *c, const char *nonce);

#endif
