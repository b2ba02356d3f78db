/*
 * cli_merge.c — a PK table's union read merged by key (cli_merge.h): the
 * changes are appended as they come; printing sorts them by key and
 * arrival, keeps each key's last, and sorts the survivors by where they
 * were found.
 */
#include "cli_merge.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct merge_item {
    char *key;
    size_t key_len;
    char *line; /* NULL: gone */
    size_t line_len;
    size_t seq;
    int64_t partition, offset;
    int32_t bucket;
} merge_item_t;

struct fl_cli_merge {
    merge_item_t *items;
    size_t n, cap;
};

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) abort();
    return p;
}

fl_cli_merge_t *fl_cli_merge_new(void) {
    fl_cli_merge_t *m = calloc(1, sizeof(*m));
    if (!m) abort();
    return m;
}

void fl_cli_merge_free(fl_cli_merge_t *m) {
    if (!m) return;
    for (size_t i = 0; i < m->n; i++) {
        free(m->items[i].key);
        free(m->items[i].line);
    }
    free(m->items);
    free(m);
}

void fl_cli_merge_put(fl_cli_merge_t *m, const char *key, size_t key_len, const char *line,
                      size_t line_len, int64_t partition, int32_t bucket, int64_t offset) {
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 1024;
        m->items = realloc(m->items, m->cap * sizeof(*m->items));
        if (!m->items) abort();
    }
    merge_item_t *it = &m->items[m->n];
    it->key = xmalloc(key_len);
    memcpy(it->key, key, key_len);
    it->key_len = key_len;
    it->line = NULL;
    it->line_len = 0;
    if (line) {
        it->line = xmalloc(line_len);
        memcpy(it->line, line, line_len);
        it->line_len = line_len;
    }
    it->seq = m->n++;
    it->partition = partition;
    it->bucket = bucket;
    it->offset = offset;
}

static int by_key(const void *a, const void *b) {
    const merge_item_t *x = a, *y = b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int c = memcmp(x->key, y->key, n);
    if (c) return c;
    if (x->key_len != y->key_len) return x->key_len < y->key_len ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int by_place(const void *a, const void *b) {
    const merge_item_t *x = *(merge_item_t *const *)a, *y = *(merge_item_t *const *)b;
    if (x->partition != y->partition) return x->partition < y->partition ? -1 : 1;
    if (x->bucket != y->bucket) return x->bucket < y->bucket ? -1 : 1;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

size_t fl_cli_merge_print(fl_cli_merge_t *m, FILE *out, long long limit) {
    if (m->n) qsort(m->items, m->n, sizeof(*m->items), by_key);
    merge_item_t **live = xmalloc((m->n + 1) * sizeof(*live));
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++) {
        bool last = i + 1 == m->n || m->items[i + 1].key_len != m->items[i].key_len ||
                    memcmp(m->items[i + 1].key, m->items[i].key, m->items[i].key_len) != 0;
        if (last && m->items[i].line) live[k++] = &m->items[i];
    }
    if (k) qsort(live, k, sizeof(*live), by_place);
    if (limit >= 0 && (unsigned long long)limit < k) k = (size_t)limit;
    for (size_t i = 0; i < k; i++) fwrite(live[i]->line, 1, live[i]->line_len, out);
    free(live);
    return k;
}
