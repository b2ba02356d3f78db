/*
 * common_strlist.c — owned string lists and key/value lists.
 */
#include "common_strlist.h"

#include <string.h>

#include "common_alloc.h"

void fl_strlist_add(fl_strlist_t *l, const char *s) {
    if (l->count == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->items = fl_realloc(l->items, l->cap * sizeof(*l->items));
    }
    l->items[l->count++] = fl_strdup(s);
}

void fl_strlist_free(fl_strlist_t *l) {
    for (size_t i = 0; i < l->count; i++) fl_free(l->items[i]);
    fl_free(l->items);
    memset(l, 0, sizeof(*l));
}

void fl_strlist_copy(fl_strlist_t *dst, const fl_strlist_t *src) {
    memset(dst, 0, sizeof(*dst));
    for (size_t i = 0; i < src->count; i++) fl_strlist_add(dst, src->items[i]);
}

int fl_strlist_index(const fl_strlist_t *l, const char *s) {
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->items[i], s) == 0) return (int)i;
    return -1;
}

bool fl_strlist_equal(const fl_strlist_t *a, const fl_strlist_t *b) {
    if (a->count != b->count) return false;
    for (size_t i = 0; i < a->count; i++)
        if (strcmp(a->items[i], b->items[i]) != 0) return false;
    return true;
}

void fl_kvlist_set(fl_kvlist_t *l, const char *key, const char *value) {
    for (size_t i = 0; i < l->count; i++) {
        if (strcmp(l->items[i].key, key) == 0) {
            fl_free(l->items[i].value);
            l->items[i].value = fl_strdup(value);
            return;
        }
    }
    if (l->count == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->items = fl_realloc(l->items, l->cap * sizeof(*l->items));
    }
    l->items[l->count].key = fl_strdup(key);
    l->items[l->count].value = fl_strdup(value);
    l->count++;
}

const char *fl_kvlist_get(const fl_kvlist_t *l, const char *key) {
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->items[i].key, key) == 0) return l->items[i].value;
    return NULL;
}

void fl_kvlist_free(fl_kvlist_t *l) {
    for (size_t i = 0; i < l->count; i++) {
        fl_free(l->items[i].key);
        fl_free(l->items[i].value);
    }
    fl_free(l->items);
    memset(l, 0, sizeof(*l));
}

void fl_kvlist_copy(fl_kvlist_t *dst, const fl_kvlist_t *src) {
    memset(dst, 0, sizeof(*dst));
    for (size_t i = 0; i < src->count; i++)
        fl_kvlist_set(dst, src->items[i].key, src->items[i].value);
}
