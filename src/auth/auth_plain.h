/*
 * auth_plain.h — SASL/PLAIN on the server side, as Fluss 0.9.1 answers it
 * (RFC 4616): the users a JAAS entry lists as user_<name>="<password>",
 * and the check of a client's one message, authzid NUL user NUL password.
 *
 * Passwords are kept as SHA-256 digests and compared in constant time
 * against a digest of what the client sent (an unknown user is compared
 * against a digest too, and both fail with the same words). Nothing here
 * logs.
 */
#ifndef FL_AUTH_PLAIN_H
#define FL_AUTH_PLAIN_H

#include <stddef.h>
#include <stdint.h>

#include "auth_jaas.h"
#include "common_error.h"

#define FL_PRINCIPAL_MAX 512

typedef struct fl_plain_users fl_plain_users_t;

/* The users of e's user_<name> options (none is allowed: every attempt
 * then fails). */
fl_plain_users_t *fl_plain_users_from_jaas(const fl_jaas_entry_t *e);
void fl_plain_users_free(fl_plain_users_t *u);
size_t fl_plain_users_count(const fl_plain_users_t *u);

/* Checks a PLAIN message. 0 with the user's name in user[cap]; else
 * FLUSS_ERR_AUTHENTICATE_EXCEPTION and 0.9.1's message in err. */
int fl_plain_authenticate(const fl_plain_users_t *u, const uint8_t *msg, size_t len, char *user,
                          size_t cap, fl_error_t *err);

/* The client's message for user and password (authzid empty). */
size_t fl_plain_message(const char *user, const char *password, uint8_t *out, size_t cap);

#endif
