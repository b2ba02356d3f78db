/*
 * client_table_read.c — a table read whole once (fluss.h, "table read"):
 * a union scanner over every bucket of every partition, stopped at each
 * bucket's log end offset as the read began; a primary-key table's
 * changes merged by key.
 *
 * The merge keeps the batches, not copies of rows: each row read becomes
 * an item (its key's bytes, where it is, the order it came in, whether it
 * leaves the key without a row); at the end the items are sorted by key
 * and arrival, each key's last one decides, and the rows that survive are
 * listed per batch. A key's bytes are its partition and the text of each
 * key column, length-prefixed (the batch accessors' text is the same for
 * equal values of one type, whatever batch or format they came from).
 *
 * Thread rule: one user at a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client_table.h"
#include "common_alloc.h"
#include "common_buf.h"

#define FL_READ_POLL_MS 500
#define FL_READ_KEY_TEXT_MAX 4096

struct fluss_table_read {
    fluss_record_batch_t **batches;
    size_t **rows; /* per batch: the rows given, ascending */
    size_t *n_rows;
    size_t count, cap;
    size_t total;
};

/* One bucket to read, up to stop. */
typedef struct fl_read_target {
    int64_t partition_id;
    int32_t bucket;
    int64_t stop;
} fl_read_target_t;

/* One row of a primary-key table as the merge sees it. */
typedef struct fl_read_item {
    size_t key_at, key_len; /* in the key arena */
    const uint8_t *key;     /* there, once the arena no longer moves */
    size_t batch, row;
    size_t seq;
    bool gone;
} fl_read_item_t;

typedef struct fl_read_ctx {
    fluss_table_read_t *r;
    fl_read_target_t *targets;
    size_t n_targets;
    /* primary-key tables */
    bool pk;
    size_t *key_cols, n_key_cols; /* positions in the presented columns */
    fl_buf_t keys;
    fl_read_item_t *items;
    size_t n_items, cap_items;
    char *text;
} fl_read_ctx_t;

static void fl_read_add_target(fl_read_ctx_t *x, int64_t pid, int32_t bucket, int64_t stop) {
    x->targets = fl_realloc(x->targets, (x->n_targets + 1) * sizeof(*x->targets));
    x->targets[x->n_targets++] = (fl_read_target_t){pid, bucket, stop};
}

/* Every bucket of the table (every partition's), with its log end now. */
static int fl_read_targets(fl_read_ctx_t *x, fluss_client_t *c, fluss_table_t *t,
                           fluss_error_t *err) {
    int32_t nb = fluss_table_bucket_count(t);
    int64_t *end = fl_calloc((size_t)nb + 1, sizeof(int64_t));
    const int32_t *pkeys;
    int rc = 0;
    if (fluss_table_partition_keys(t, &pkeys) == 0) {
        rc = fluss_table_list_partition_offsets(t, -1, NULL, (size_t)nb, FLUSS_OFFSETS_LATEST, 0,
                                                end, err);
        for (int32_t b = 0; !rc && b < nb; b++) fl_read_add_target(x, -1, b, end[b]);
    } else {
        fluss_partition_info_t *infos = NULL;
        size_t n = 0;
        rc = fluss_partition_list(c, t->database, t->name, NULL, &infos, &n, err);
        for (size_t i = 0; !rc && i < n; i++) {
            rc = fluss_table_list_partition_offsets(t, infos[i].partition_id, NULL, (size_t)nb,
                                                    FLUSS_OFFSETS_LATEST, 0, end, err);
            for (int32_t b = 0; !rc && b < nb; b++)
                fl_read_add_target(x, infos[i].partition_id, b, end[b]);
        }
        fluss_partition_infos_free(infos, n);
    }
    fl_free(end);
    return rc;
}

static fl_read_target_t *fl_read_find(fl_read_ctx_t *x, int64_t pid, int32_t bucket) {
    for (size_t i = 0; i < x->n_targets; i++)
        if (x->targets[i].partition_id == pid && x->targets[i].bucket == bucket)
            return &x->targets[i];
    return NULL;
}

/* The presented positions of the primary key's columns; INVALID_ARG when
 * the projection leaves one out. */
static int fl_read_key_columns(fl_read_ctx_t *x, const fluss_table_t *t,
                               const int32_t *projection, size_t n, fluss_error_t *err) {
    const int32_t *pk;
    size_t npk = fluss_table_primary_key(t, &pk);
    x->pk = npk > 0;
    x->key_cols = fl_calloc(npk + 1, sizeof(size_t));
    for (size_t k = 0; k < npk; k++) {
        size_t at = projection ? n : (size_t)pk[k];
        for (size_t i = 0; projection && i < n; i++)
            if (projection[i] == pk[k]) at = i;
        if (at == n && projection) {
            err->code = FLUSS_ERR__INVALID_ARG;
            snprintf(err->message, sizeof(err->message),
                     "a read of primary-key table %s.%s merges rows by key: the projection "
                     "must hold the primary key (%s)",
                     t->database, t->name, fluss_table_column_name(t, (size_t)pk[k]));
            return err->code;
        }
        x->key_cols[x->n_key_cols++] = at;
    }
    return 0;
}

/* Row r of batch b (kept at index bi) as a merge item. */
static void fl_read_item(fl_read_ctx_t *x, const fluss_record_batch_t *b, size_t bi, size_t r) {
    size_t at = x->keys.len;
    char head[32];
    int hn = snprintf(head, sizeof(head), "%lld;", (long long)b->partition_id);
    fl_buf_append(&x->keys, head, (size_t)hn);
    for (size_t k = 0; k < x->n_key_cols; k++) {
        size_t len = fluss_record_batch_value_text(b, r, x->key_cols[k], 0, x->text,
                                                   FL_READ_KEY_TEXT_MAX);
        if (len >= FL_READ_KEY_TEXT_MAX) len = FL_READ_KEY_TEXT_MAX - 1;
        hn = snprintf(head, sizeof(head), "%zu:", len);
        fl_buf_append(&x->keys, head, (size_t)hn);
        fl_buf_append(&x->keys, x->text, len);
    }
    if (x->n_items == x->cap_items) {
        x->cap_items = x->cap_items ? x->cap_items * 2 : 1024;
        x->items = fl_realloc(x->items, x->cap_items * sizeof(*x->items));
    }
    fluss_change_type_t ct = fluss_record_batch_change_type(b, r);
    x->items[x->n_items] = (fl_read_item_t){at, x->keys.len - at, NULL, bi, r, x->n_items,
                                            ct == FLUSS_CHANGE_UPDATE_BEFORE ||
                                                ct == FLUSS_CHANGE_DELETE};
    x->n_items++;
}

static void fl_read_keep(fluss_table_read_t *r, fluss_record_batch_t *b) {
    if (r->count == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->batches = fl_realloc(r->batches, r->cap * sizeof(*r->batches));
        r->rows = fl_realloc(r->rows, r->cap * sizeof(*r->rows));
        r->n_rows = fl_realloc(r->n_rows, r->cap * sizeof(*r->n_rows));
    }
    r->batches[r->count] = b;
    r->rows[r->count] = NULL;
    r->n_rows[r->count] = 0;
    r->count++;
}

static void fl_read_give(fluss_table_read_t *r, size_t bi, size_t row) {
    size_t n = r->n_rows[bi];
    if ((n & (n - 1)) == 0) /* 0, 1, 2, 4, ...: grow at powers of two */
        r->rows[bi] = fl_realloc(r->rows[bi], (n ? n * 2 : 1) * sizeof(size_t));
    r->rows[bi][n] = row;
    r->n_rows[bi] = n + 1;
    r->total++;
}

/* Takes batch b: its rows below its bucket's stop are given (a log
 * table) or become merge items (a primary-key table). */
static void fl_read_take(fl_read_ctx_t *x, fluss_record_batch_t *b, bool lake) {
    const fl_read_target_t *g = fl_read_find(x, b->partition_id, b->bucket);
    size_t n = 0;
    while (g && n < b->rows && (lake || fluss_record_batch_offset(b, n) < g->stop)) n++;
    if (!n) {
        fluss_record_batch_free(b);
        return;
    }
    fluss_table_read_t *r = x->r;
    size_t bi = r->count;
    fl_read_keep(r, b);
    for (size_t i = 0; i < n; i++) {
        if (x->pk) fl_read_item(x, b, bi, i);
        else fl_read_give(r, bi, i);
    }
}

static bool fl_read_same_key(const fl_read_item_t *a, const fl_read_item_t *b) {
    return a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0;
}

static int fl_read_item_cmp(const void *pa, const void *pb) {
    const fl_read_item_t *a = pa, *b = pb;
    size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
    int c = memcmp(a->key, b->key, n);
    if (c) return c;
    if (a->key_len != b->key_len) return a->key_len < b->key_len ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int fl_read_row_cmp(const void *pa, const void *pb) {
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    return a < b ? -1 : a > b;
}

/* Each key's last item decides; its row is given unless it is gone. */
static void fl_read_merge(fl_read_ctx_t *x) {
    fluss_table_read_t *r = x->r;
    for (size_t i = 0; i < x->n_items; i++) x->items[i].key = x->keys.data + x->items[i].key_at;
    qsort(x->items, x->n_items, sizeof(*x->items), fl_read_item_cmp);
    for (size_t i = 0; i < x->n_items; i++) {
        const fl_read_item_t *it = &x->items[i];
        bool last = i + 1 == x->n_items || !fl_read_same_key(it, &x->items[i + 1]);
        if (last && !it->gone) fl_read_give(r, it->batch, it->row);
    }
    /* batches with no row given go; the others list theirs ascending */
    size_t kept = 0;
    for (size_t i = 0; i < r->count; i++) {
        if (!r->n_rows[i]) {
            fluss_record_batch_free(r->batches[i]);
            fl_free(r->rows[i]);
            continue;
        }
        qsort(r->rows[i], r->n_rows[i], sizeof(size_t), fl_read_row_cmp);
        r->batches[kept] = r->batches[i];
        r->rows[kept] = r->rows[i];
        r->n_rows[kept] = r->n_rows[i];
        kept++;
    }
    r->count = kept;
}

/* Polls until every target is read to its stop. */
static int fl_read_poll(fl_read_ctx_t *x, fluss_union_scanner_t *u, fluss_error_t *err) {
    for (;;) {
        bool left = false;
        for (size_t i = 0; i < x->n_targets; i++) {
            const fl_read_target_t *g = &x->targets[i];
            int64_t pos = fluss_union_scanner_position(u, g->partition_id, g->bucket);
            if (pos == -1) continue;
            if (pos >= 0 && pos >= g->stop) fluss_union_scanner_unsubscribe(u, g->partition_id, g->bucket);
            else left = true;
        }
        if (!left) return 0;
        fluss_record_batch_t *b = NULL;
        if (fluss_union_scanner_poll(u, FL_READ_POLL_MS, &b, err)) return err->code;
        bool lake = fluss_union_scanner_in_lake(u);
        if (b) fl_read_take(x, b, lake);
    }
}

int fluss_table_read_new(fluss_client_t *c, fluss_table_t *t, const int32_t *projection,
                         size_t n, fluss_table_read_t **out, fluss_error_t *err) {
    *out = NULL;
    fl_read_ctx_t x;
    memset(&x, 0, sizeof(x));
    x.r = fl_calloc(1, sizeof(*x.r));
    fl_buf_init(&x.keys);
    x.text = fl_malloc(FL_READ_KEY_TEXT_MAX);
    fluss_union_scanner_t *u = NULL;
    const char *en = fluss_table_property(t, "table.datalake.enabled");
    bool lake = en && strcasecmp(en, "true") == 0;
    int rc = fl_read_key_columns(&x, t, projection, n, err);
    if (!rc) rc = fl_read_targets(&x, c, t, err);
    if (!rc) rc = fluss_union_scanner_new(c, t, projection, n, &u, err);
    for (size_t i = 0; !rc && i < x.n_targets; i++) {
        const fl_read_target_t *g = &x.targets[i];
        if (g->stop <= 0) continue; /* an empty log: nothing in the lake either */
        rc = fluss_union_scanner_subscribe(u, g->partition_id, g->bucket,
                                           lake ? FLUSS_OFFSET_LAKE : FLUSS_OFFSET_EARLIEST, err);
    }
    if (!rc) rc = fl_read_poll(&x, u, err);
    if (!rc && x.pk) fl_read_merge(&x);
    fluss_union_scanner_destroy(u);
    fl_free(x.targets);
    fl_free(x.key_cols);
    fl_free(x.items);
    fl_free(x.text);
    fl_buf_free(&x.keys);
    if (rc) {
        fluss_table_read_destroy(x.r);
        return rc;
    }
    *out = x.r;
    return 0;
}

size_t fluss_table_read_batch_count(const fluss_table_read_t *r) { return r->count; }

const fluss_record_batch_t *fluss_table_read_batch(const fluss_table_read_t *r, size_t i,
                                                   const size_t **rows, size_t *n) {
    if (i >= r->count) {
        *rows = NULL;
        *n = 0;
        return NULL;
    }
    *rows = r->rows[i];
    *n = r->n_rows[i];
    return r->batches[i];
}

size_t fluss_table_read_row_count(const fluss_table_read_t *r) { return r->total; }

void fluss_table_read_destroy(fluss_table_read_t *r) {
    if (!r) return;
    for (size_t i = 0; i < r->count; i++) {
        fluss_record_batch_free(r->batches[i]);
        fl_free(r->rows[i]);
    }
    fl_free(r->batches);
    fl_free(r->rows);
    fl_free(r->n_rows);
    fl_free(r);
}
