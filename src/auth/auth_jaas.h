/*
 * auth_jaas.h — the one JAAS form Fluss's SASL/PLAIN takes its users from
 * (security.sasl.plain.jaas.config):
 *
 *   org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required
 *       user_admin="admin-pass" user_bob="bob-pass";
 *
 * and the client's (username="..." password="..."). A login module class,
 * a control flag, then name=value options (values quoted, with \" and \\
 * escapes, or bare words), ending in ';'. One module entry only.
 *
 * Passwords are secrets: errors name the option, never its value.
 */
#ifndef FL_AUTH_JAAS_H
#define FL_AUTH_JAAS_H

#include <stddef.h>

#include "common_error.h"

#define FL_JAAS_OPTIONS_MAX 1024
#define FL_JAAS_VALUE_MAX 1024

typedef struct fl_jaas_option {
    char *name;
    char *value;
} fl_jaas_option_t;

typedef struct fl_jaas_entry {
    char *module;  /* the login module class */
    char *flag;    /* required, requisite, sufficient, optional */
    fl_jaas_option_t *options;
    size_t option_count;
} fl_jaas_entry_t;

/* Parses text into *out (free with fl_jaas_entry_free, also after an
 * error). */
int fl_jaas_parse(const char *text, fl_jaas_entry_t *out, fl_error_t *err);
void fl_jaas_entry_free(fl_jaas_entry_t *e);
/* The value of option name, or NULL. */
const char *fl_jaas_option(const fl_jaas_entry_t *e, const char *name);

#endif
