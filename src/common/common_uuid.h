/*
 * common_uuid.h — random (version 4) UUIDs in their canonical text form,
 * the ids Fluss gives remote log segments and manifests (java.util.UUID's
 * toString: 36 lower-case characters, dashes at 8, 13, 18 and 23).
 * Thread rule: safe from any thread.
 */
#ifndef FL_COMMON_UUID_H
#define FL_COMMON_UUID_H

#include <stdbool.h>
#include <stddef.h>

#define FL_UUID_TEXT_LEN 36

/* Fills out with n random bytes (getrandom(2); the clock and a counter if it
 * fails): unique, not secret. Avro's sync markers. */
void fl_uuid_random_bytes(void *out, size_t n);
/* Writes a new random UUID and its terminating NUL into out. */
void fl_uuid_random(char out[FL_UUID_TEXT_LEN + 1]);
/* Whether s (len bytes) is a UUID in canonical form: 36 characters, hex
 * digits (either case, as java.util.UUID parses them) and four dashes in
 * place — nothing that could be a path component other than a plain name. */
bool fl_uuid_text_ok(const char *s, size_t len);

#endif
