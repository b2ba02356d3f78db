/*
 * common_error.h — fl_error_t, the caller-owned error of every fallible
 * internal function: a code from fluss_errors.h and a fixed message buffer
 * (no allocation on the error path). Thread rule: none; each caller owns its
 * own fl_error_t.
 */
#ifndef FL_COMMON_ERROR_H
#define FL_COMMON_ERROR_H

#include <stddef.h>

#include "fluss_errors.h"

#define FL_ERROR_MSG_MAX 2048

typedef struct fl_error {
    int code;
    char msg[FL_ERROR_MSG_MAX];
} fl_error_t;

/* Sets code and message and returns code, so `return fl_err_set(...)` reads
 * as one line. err may be NULL. */
int fl_err_set(fl_error_t *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void fl_err_clear(fl_error_t *err);
/* Puts the formatted text before err's message (cut to the buffer), code
 * unchanged. err may be NULL. */
void fl_err_prefix(fl_error_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "TABLE_NOT_EXIST" or "UNKNOWN(123)"-style name; never NULL. */
const char *fl_err_name(int code);
/* The default message of a code ("The table does not exist"). */
const char *fl_err_default_message(int code);

#endif
