/*
 * auth_jaas.c — a parser of one JAAS login-module entry (auth_jaas.h).
 */
#include "auth_jaas.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "common_alloc.h"

static const char *fl_jaas_skip_space(const char *p) {
    while (*p && isspace((unsigned char)*p)) p++;
    return p;
}

static bool fl_jaas_word_char(char c) {
    return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '$' || c == '-';
}

/* A bare word at *pp into a new string, or NULL if there is none. */
static char *fl_jaas_word(const char **pp) {
    const char *p = *pp, *start = p;
    while (*p && fl_jaas_word_char(*p)) p++;
    if (p == start) return NULL;
    *pp = p;
    return fl_strndup(start, (size_t)(p - start));
}

/* A quoted value ("..." with \" and \\) or a bare word. */
static int fl_jaas_value(const char **pp, char **out, const char *name, fl_error_t *err) {
    const char *p = *pp;
    if (*p != '"') {
        *out = fl_jaas_word(pp);
        if (!*out) return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                                     "JAAS config: option '%s' has no value", name);
        if (strlen(*out) > FL_JAAS_VALUE_MAX) {
            fl_free(*out);
            *out = NULL;
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "JAAS config: the value of option '%s' is longer than %d bytes",
                              name, FL_JAAS_VALUE_MAX);
        }
        return 0;
    }
    p++;
    char *buf = fl_malloc(FL_JAAS_VALUE_MAX + 1);
    size_t n = 0;
    for (;;) {
        char c = *p++;
        if (c == '\0') {
            fl_free(buf);
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "JAAS config: the value of option '%s' has no closing quote", name);
        }
        if (c == '"') break;
        if (c == '\\' && (*p == '"' || *p == '\\')) c = *p++;
        if (n == FL_JAAS_VALUE_MAX) {
            fl_free(buf);
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "JAAS config: the value of option '%s' is longer than %d bytes",
                              name, FL_JAAS_VALUE_MAX);
        }
        buf[n++] = c;
    }
    buf[n] = '\0';
    *pp = p;
    *out = buf;
    return 0;
}

int fl_jaas_parse(const char *text, fl_jaas_entry_t *out, fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    const char *p = fl_jaas_skip_space(text ? text : "");
    out->module = fl_jaas_word(&p);
    if (!out->module)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "JAAS config: expected a login module class name");
    p = fl_jaas_skip_space(p);
    out->flag = fl_jaas_word(&p);
    static const char *const flags[] = {"required", "requisite", "sufficient", "optional"};
    bool known = false;
    for (size_t i = 0; out->flag && i < sizeof(flags) / sizeof(flags[0]); i++)
        if (strcmp(out->flag, flags[i]) == 0) known = true;
    if (!known)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "JAAS config: expected a control flag (required, requisite, "
                          "sufficient, optional) after '%s'", out->module);
    size_t cap = 0;
    for (;;) {
        p = fl_jaas_skip_space(p);
        if (*p == ';') break;
        if (*p == '\0')
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "JAAS config: missing ';' at the end");
        char *name = fl_jaas_word(&p);
        if (!name)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "JAAS config: unexpected character '%c' where an option name "
                              "should be", *p);
        p = fl_jaas_skip_space(p);
        if (*p != '=') {
            int rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                                "JAAS config: option '%s' has no '='", name);
            fl_free(name);
            return rc;
        }
        p = fl_jaas_skip_space(p + 1);
        char *value = NULL;
        if (fl_jaas_value(&p, &value, name, err)) {
            fl_free(name);
            return err->code;
        }
        if (out->option_count == FL_JAAS_OPTIONS_MAX || fl_jaas_option(out, name)) {
            int rc = out->option_count == FL_JAAS_OPTIONS_MAX
                         ? fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                                      "JAAS config: more than %d options", FL_JAAS_OPTIONS_MAX)
                         : fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                                      "JAAS config: option '%s' given twice", name);
            fl_free(name);
            fl_free(value);
            return rc;
        }
        if (out->option_count == cap) {
            cap = cap ? cap * 2 : 8;
            out->options = fl_realloc(out->options, cap * sizeof(*out->options));
        }
        out->options[out->option_count++] = (fl_jaas_option_t){name, value};
    }
    p = fl_jaas_skip_space(p + 1);
    if (*p)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "JAAS config: more than one login module entry (only one is read)");
    return 0;
}

void fl_jaas_entry_free(fl_jaas_entry_t *e) {
    fl_free(e->module);
    fl_free(e->flag);
    for (size_t i = 0; i < e->option_count; i++) {
        size_t n = strlen(e->options[i].value);
        /* a password should not linger in freed memory */
        volatile char *v = e->options[i].value;
        for (size_t j = 0; j < n; j++) v[j] = 0;
        fl_free(e->options[i].name);
        fl_free(e->options[i].value);
    }
    fl_free(e->options);
    memset(e, 0, sizeof(*e));
}

const char *fl_jaas_option(const fl_jaas_entry_t *e, const char *name) {
    for (size_t i = 0; i < e->option_count; i++)
        if (strcmp(e->options[i].name, name) == 0) return e->options[i].value;
    return NULL;
}
