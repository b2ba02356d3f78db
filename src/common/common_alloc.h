/*
 * common_alloc.h — the one allocation funnel. The plain variants abort on
 * out-of-memory (our own bounded sizes); the try variant returns NULL and is
 * used wherever a peer decides the size (frame length, batch size).
 */
#ifndef FL_COMMON_ALLOC_H
#define FL_COMMON_ALLOC_H

#include <stddef.h>

void *fl_malloc(size_t n);
void *fl_calloc(size_t count, size_t n);
void *fl_realloc(void *p, size_t n);
char *fl_strdup(const char *s);
char *fl_strndup(const char *s, size_t n);
void *fl_try_malloc(size_t n);
void *fl_try_realloc(void *p, size_t n);
void fl_free(void *p);

#endif
