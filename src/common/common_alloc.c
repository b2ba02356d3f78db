/*
 * common_alloc.c — allocation funnel (see common_alloc.h).
 */
#include "common_alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *fl_oom(size_t n) {
    fprintf(stderr, "fluss: out of memory allocating %zu bytes\n", n);
    abort();
}

void *fl_malloc(size_t n) {
    void *p = malloc(n ? n : 1);
    return p ? p : fl_oom(n);
}

void *fl_calloc(size_t count, size_t n) {
    void *p = calloc(count ? count : 1, n ? n : 1);
    return p ? p : fl_oom(count * n);
}

void *fl_realloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    return q ? q : fl_oom(n);
}

char *fl_strdup(const char *s) {
    size_t n = strlen(s);
    char *d = fl_malloc(n + 1);
    memcpy(d, s, n + 1);
    return d;
}

char *fl_strndup(const char *s, size_t n) {
    char *d = fl_malloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void *fl_try_malloc(size_t n) { return malloc(n ? n : 1); }

void *fl_try_realloc(void *p, size_t n) { return realloc(p, n ? n : 1); }

void fl_free(void *p) { free(p); }
