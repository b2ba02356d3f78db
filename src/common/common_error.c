/*
 * common_error.c — names and default messages of error codes, from the one
 * X-macro table in fluss_errors.h.
 */
#include "common_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Asserts are always on (STYLE.md); CMakeLists.txt strips CMake's NDEBUG.
 * Compiled here once because every library gets the same flags. */
#ifdef NDEBUG
#error "fluss-c is built with its asserts on: do not define NDEBUG"
#endif

int fl_err_set(fl_error_t *err, int code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
    }
    return code;
}

void fl_err_clear(fl_error_t *err) {
    if (err) {
        err->code = 0;
        err->msg[0] = '\0';
    }
}

void fl_err_prefix(fl_error_t *err, const char *fmt, ...) {
    if (!err) return;
    char head[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(head, sizeof(head), fmt, ap);
    va_end(ap);
    size_t hn = n > 0 ? ((size_t)n < sizeof(head) ? (size_t)n : sizeof(head) - 1) : 0;
    size_t keep = strnlen(err->msg, sizeof(err->msg) - 1);
    if (keep > sizeof(err->msg) - 1 - hn) keep = sizeof(err->msg) - 1 - hn;
    memmove(err->msg + hn, err->msg, keep);
    memcpy(err->msg, head, hn);
    err->msg[hn + keep] = '\0';
}

const char *fl_err_name(int code) {
    switch (code) {
#define FL_ERR_NAME_(name, c, msg) \
    case c:                        \
        return #name;
        FLUSS_ERROR_TABLE(FL_ERR_NAME_)
#undef FL_ERR_NAME_
    default:
        return "UNKNOWN_ERROR_CODE";
    }
}

const char *fl_err_default_message(int code) {
    switch (code) {
#define FL_ERR_MSG_(name, c, msg) \
    case c:                       \
        return msg;
        FLUSS_ERROR_TABLE(FL_ERR_MSG_)
#undef FL_ERR_MSG_
    default:
        return "Unknown error code";
    }
}
