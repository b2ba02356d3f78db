/*
 * common_strlist.h — small owned lists: strings, and ordered key/value
 * string pairs (table properties keep the order they were given in).
 */
#ifndef FL_COMMON_STRLIST_H
#define FL_COMMON_STRLIST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct fl_strlist {
    size_t count;
    size_t cap;
    char **items;
} fl_strlist_t;

typedef struct fl_kv {
    char *key;
    char *value;
} fl_kv_t;

typedef struct fl_kvlist {
    size_t count;
    size_t cap;
    fl_kv_t *items;
} fl_kvlist_t;

void fl_strlist_add(fl_strlist_t *l, const char *s);
void fl_strlist_free(fl_strlist_t *l);
void fl_strlist_copy(fl_strlist_t *dst, const fl_strlist_t *src);
/* Index of s, or -1. */
int fl_strlist_index(const fl_strlist_t *l, const char *s);
bool fl_strlist_equal(const fl_strlist_t *a, const fl_strlist_t *b);

/* Replaces the value of an existing key, else appends. */
void fl_kvlist_set(fl_kvlist_t *l, const char *key, const char *value);
const char *fl_kvlist_get(const fl_kvlist_t *l, const char *key);
void fl_kvlist_free(fl_kvlist_t *l);
void fl_kvlist_copy(fl_kvlist_t *dst, const fl_kvlist_t *src);

#endif
