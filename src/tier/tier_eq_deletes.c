/*
 * tier_eq_deletes.c — equality deletes into position deletes
 * (tier_eq_deletes.h). The set is a sorted array of (key, sequence
 * number), sorted once sealed (no state outside the set: readers on
 * several threads each have their own); a data row's key is looked up by
 * binary search, and the highest sequence number among equal keys
 * decides.
 */
#include "tier_eq_deletes.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "lake_parquet_reader.h"
#include "tier_pk_key.h"

#define EQ_CORRUPT FLUSS_ERR__CORRUPT

typedef struct fl_tier_eq_item eq_item_t;

void fl_tier_eq_deletes_init(fl_tier_eq_deletes_t *s) {
    memset(s, 0, sizeof(*s));
    fl_buf_init(&s->keys);
}

void fl_tier_eq_deletes_free(fl_tier_eq_deletes_t *s) {
    fl_free(s->ids);
    fl_buf_free(&s->keys);
    fl_free(s->items);
    memset(s, 0, sizeof(*s));
}

size_t fl_tier_eq_deletes_count(const fl_tier_eq_deletes_t *s) { return s->n_items; }

/* Columns of the open file r holding ids[0..n) into cols; CORRUPT when
 * one is missing. */
static int key_columns(fl_pq_reader_t *r, const int32_t *ids, size_t n, int *cols,
                       const char *path, fl_error_t *err) {
    for (size_t k = 0; k < n; k++) {
        cols[k] = fl_pq_reader_column_of(r, ids[k]);
        if (cols[k] < 0)
            return fl_err_set(err, EQ_CORRUPT, "%s: no column of field id %d (an equality key)",
                              path, ids[k]);
    }
    return 0;
}

/* Calls fn for the key of every row of the file at path. */
typedef int (*eq_row_fn)(void *ctx, int64_t row, const uint8_t *key, size_t len, fl_error_t *err);

static int each_key_of(fl_pq_reader_t *r, const char *path, const int32_t *ids, size_t n,
                       eq_row_fn fn, void *ctx, fl_error_t *err) {
    int rc;
    int *cols = fl_calloc(n, sizeof(int));
    fl_pq_values_t *vals = fl_calloc(n, sizeof(*vals));
    fl_buf_t key;
    fl_buf_init(&key);
    rc = key_columns(r, ids, n, cols, path, err);
    const fl_pq_file_meta_t *m = fl_pq_reader_meta(r);
    int64_t row0 = 0;
    for (size_t g = 0; !rc && g < m->n_row_groups; g++) {
        for (size_t k = 0; !rc && k < n; k++)
            rc = fl_pq_reader_read_column(r, g, (size_t)cols[k], &vals[k], err);
        size_t rows = rc ? 0 : vals[0].rows;
        for (size_t i = 0; !rc && i < rows; i++) {
            fl_buf_reset(&key);
            for (size_t k = 0; !rc && k < n; k++) rc = fl_tier_pk_key_append(&vals[k], i, &key, err);
            if (!rc) rc = fn(ctx, row0 + (int64_t)i, key.data, key.len, err);
        }
        row0 += (int64_t)rows;
        for (size_t k = 0; k < n; k++) fl_pq_values_free(&vals[k]);
    }
    fl_buf_free(&key);
    fl_free(vals);
    fl_free(cols);
    if (rc) fl_err_prefix(err, "%s: ", path);
    return rc;
}

/* The same for the file at path (read whole, at most max_bytes), or for
 * the image file[0..len) when path is NULL. */
static int each_key(const char *path, const uint8_t *file, size_t len, const int32_t *ids,
                    size_t n, size_t max_bytes, eq_row_fn fn, void *ctx, fl_error_t *err) {
    fl_pq_reader_t *r = NULL;
    int rc = path ? fl_pq_reader_open_file(path, max_bytes, &r, err)
                  : fl_pq_reader_open(file, len, &r, err);
    if (rc) return rc == FLUSS_ERR__INVALID_ARG ? rc : EQ_CORRUPT;
    rc = each_key_of(r, path ? path : "(image)", ids, n, fn, ctx, err);
    fl_pq_reader_destroy(r);
    return rc;
}

typedef struct eq_add {
    fl_tier_eq_deletes_t *s;
    int64_t seq;
} eq_add_t;

static int add_key(void *ctx, int64_t row, const uint8_t *key, size_t len, fl_error_t *err) {
    (void)row;
    (void)err;
    eq_add_t *a = ctx;
    fl_tier_eq_deletes_t *s = a->s;
    if (s->n_items == s->cap_items) {
        s->cap_items = s->cap_items ? s->cap_items * 2 : 256;
        s->items = fl_realloc(s->items, s->cap_items * sizeof(*s->items));
    }
    s->items[s->n_items++] = (eq_item_t){s->keys.len, len, NULL, a->seq};
    fl_buf_append(&s->keys, key, len);
    return 0;
}

/* fl_tier_eq_deletes_read of the file at path, or of file[0..len). */
static int read_keys(fl_tier_eq_deletes_t *s, const char *path, const uint8_t *file, size_t len,
                     const int32_t *ids, size_t n_ids, int64_t seq, size_t max_bytes,
                     fl_error_t *err) {
    if (!n_ids) return fl_err_set(err, EQ_CORRUPT, "%s: an equality-delete file without ids", path);
    if (!s->ids) {
        s->ids = fl_malloc(n_ids * sizeof(int32_t));
        memcpy(s->ids, ids, n_ids * sizeof(int32_t));
        s->n_ids = n_ids;
    } else if (s->n_ids != n_ids || memcmp(s->ids, ids, n_ids * sizeof(int32_t)) != 0) {
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "%s: equality deletes over other columns than the table's other "
                          "delete files",
                          path);
    }
    eq_add_t a = {s, seq};
    return each_key(path, file, len, ids, n_ids, max_bytes, add_key, &a, err);
}

int fl_tier_eq_deletes_read(fl_tier_eq_deletes_t *s, const char *path, const int32_t *ids,
                            size_t n_ids, int64_t seq, size_t max_bytes, fl_error_t *err) {
    return read_keys(s, path, NULL, 0, ids, n_ids, seq, max_bytes, err);
}

int fl_tier_eq_deletes_read_image(fl_tier_eq_deletes_t *s, const uint8_t *file, size_t len,
                                  const int32_t *ids, size_t n_ids, int64_t seq,
                                  fl_error_t *err) {
    return read_keys(s, NULL, file, len, ids, n_ids, seq, 0, err);
}

static int key_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    int c = an && bn ? memcmp(a, b, an < bn ? an : bn) : 0;
    return c ? c : (an > bn) - (an < bn);
}

static int item_cmp(const void *x, const void *y) {
    const eq_item_t *a = x, *b = y;
    int c = key_cmp(a->key, a->len, b->key, b->len);
    return c ? c : (a->seq < b->seq) - (a->seq > b->seq); /* highest first */
}

void fl_tier_eq_deletes_seal(fl_tier_eq_deletes_t *s) {
    /* keys is complete: items point into it, and sort by what they point at */
    for (size_t i = 0; i < s->n_items; i++) /* all keys empty: keys has no data */
        s->items[i].key = s->keys.data ? s->keys.data + s->items[i].at : (const uint8_t *)"";
    if (s->n_items > 1) qsort(s->items, s->n_items, sizeof(*s->items), item_cmp);
}

bool fl_tier_eq_deletes_has(const fl_tier_eq_deletes_t *s, const uint8_t *key, size_t len,
                            int64_t seq) {
    size_t lo = 0, hi = s->n_items;
    while (lo < hi) { /* the first item not below key: its highest sequence number */
        size_t mid = lo + (hi - lo) / 2;
        if (key_cmp(s->items[mid].key, s->items[mid].len, key, len) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < s->n_items && key_cmp(s->items[lo].key, s->items[lo].len, key, len) == 0 &&
           s->items[lo].seq > seq;
}

typedef struct eq_apply {
    const fl_tier_eq_deletes_t *s;
    const char *uri;
    int64_t seq;
    fl_tier_deletes_t *pos;
} eq_apply_t;

static int apply_key(void *ctx, int64_t row, const uint8_t *key, size_t len, fl_error_t *err) {
    (void)err;
    eq_apply_t *a = ctx;
    if (fl_tier_eq_deletes_has(a->s, key, len, a->seq)) fl_tier_deletes_add(a->pos, a->uri, row);
    return 0;
}

int fl_tier_eq_deletes_apply(const fl_tier_eq_deletes_t *s, const char *path, const char *uri,
                             int64_t seq, size_t max_bytes, fl_tier_deletes_t *pos,
                             fl_error_t *err) {
    if (!s->n_items) return 0;
    eq_apply_t a = {s, uri, seq, pos};
    return each_key(path, NULL, 0, s->ids, s->n_ids, max_bytes, apply_key, &a, err);
}
