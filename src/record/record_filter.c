/*
 * record_filter.c — scan filters against batch statistics (record_filter.h).
 */
#include "record_filter.h"

#include <math.h>
#include <string.h>

#include "common_alloc.h"

void fl_filter_node_clear(fl_filter_node_t *n) {
    for (size_t i = 0; i < n->literal_count; i++) fl_free((void *)n->literals[i].bytes);
    fl_free(n->literals);
    for (size_t i = 0; i < n->child_count; i++) fl_filter_node_clear(&n->children[i]);
    fl_free(n->children);
    memset(n, 0, sizeof(*n));
}

/* Three-way comparison of two values of one kind; false when they cannot
 * be ordered (other kinds, NaN). */
static bool fl_cmp(const fl_stat_value_t *a, const fl_stat_value_t *b, int *out) {
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case FL_STAT_INT:
        *out = a->i < b->i ? -1 : a->i > b->i;
        return true;
    case FL_STAT_TIMESTAMP:
        if (a->i != b->i) *out = a->i < b->i ? -1 : 1;
        else *out = a->nanos < b->nanos ? -1 : a->nanos > b->nanos;
        return true;
    case FL_STAT_DOUBLE:
        if (isnan(a->d) || isnan(b->d)) return false;
        *out = a->d < b->d ? -1 : a->d > b->d;
        return true;
    case FL_STAT_BYTES: {
        size_t n = a->len < b->len ? a->len : b->len;
        int c = n ? memcmp(a->bytes, b->bytes, n) : 0;
        *out = c ? (c < 0 ? -1 : 1) : (a->len < b->len ? -1 : a->len > b->len);
        return true;
    }
    default:
        return false;
    }
}

/* v truncated to the first `len` bytes (strings) for prefix bounds. */
static fl_stat_value_t fl_prefix(const fl_stat_value_t *v, size_t len) {
    fl_stat_value_t t = *v;
    if (t.len > len) t.len = len;
    return t;
}

/* Can some value in [min, max] satisfy `fn lit`? -1 when undecided. */
static int fl_range_may(fl_filter_fn_t fn, const fl_stat_value_t *min, const fl_stat_value_t *max,
                        const fl_stat_value_t *lit) {
    int lo, hi;
    if (!fl_cmp(min, lit, &lo) || !fl_cmp(max, lit, &hi)) return -1;
    switch (fn) {
    case FL_FILTER_EQUAL: return lo <= 0 && hi >= 0;
    case FL_FILTER_NOT_EQUAL: return !(lo == 0 && hi == 0);
    case FL_FILTER_LESS_THAN: return lo < 0;
    case FL_FILTER_LESS_OR_EQUAL: return lo <= 0;
    case FL_FILTER_GREATER_THAN: return hi > 0;
    case FL_FILTER_GREATER_OR_EQUAL: return hi >= 0;
    default: return -1;
    }
}

static bool fl_leaf_may_match(const fl_filter_node_t *n, const fl_batch_stats_t *stats,
                              int32_t rows) {
    int k = fl_batch_stats_find(stats, n->column);
    if (k < 0) return true;
    int32_t nulls = fl_batch_stats_null_count(stats, k);
    if (nulls < 0 || nulls > rows) return true; /* not believable */
    if (n->fn == FL_FILTER_IS_NULL) return nulls > 0;
    if (n->fn == FL_FILTER_IS_NOT_NULL) return nulls < rows;
    if (rows > 0 && nulls == rows) {
        /* only NULLs: no comparison is true (and nothing else is known) */
        switch (n->fn) {
        case FL_FILTER_EQUAL: case FL_FILTER_NOT_EQUAL: case FL_FILTER_LESS_THAN:
        case FL_FILTER_LESS_OR_EQUAL: case FL_FILTER_GREATER_THAN:
        case FL_FILTER_GREATER_OR_EQUAL: case FL_FILTER_STARTS_WITH: case FL_FILTER_IN:
        case FL_FILTER_NOT_IN:
            return false;
        default:
            return true;
        }
    }
    fl_stat_value_t min = fl_batch_stats_value(stats, false, k, n->type);
    fl_stat_value_t max = fl_batch_stats_value(stats, true, k, n->type);
    if (min.kind == FL_STAT_UNKNOWN || min.kind == FL_STAT_NULL || max.kind != min.kind)
        return true;
    switch (n->fn) {
    case FL_FILTER_EQUAL: case FL_FILTER_NOT_EQUAL: case FL_FILTER_LESS_THAN:
    case FL_FILTER_LESS_OR_EQUAL: case FL_FILTER_GREATER_THAN: case FL_FILTER_GREATER_OR_EQUAL: {
        if (n->literal_count != 1) return true;
        int r = fl_range_may(n->fn, &min, &max, &n->literals[0]);
        return r != 0;
    }
    case FL_FILTER_IN:
        for (size_t i = 0; i < n->literal_count; i++)
            if (fl_range_may(FL_FILTER_EQUAL, &min, &max, &n->literals[i]) != 0) return true;
        return n->literal_count == 0; /* an empty IN matches nothing, but stay safe */
    case FL_FILTER_NOT_IN: {
        int same;
        if (!fl_cmp(&min, &max, &same) || same != 0) return true;
        for (size_t i = 0; i < n->literal_count; i++) {
            int c;
            if (fl_cmp(&min, &n->literals[i], &c) && c == 0) return false;
        }
        return true;
    }
    case FL_FILTER_STARTS_WITH: {
        if (n->literal_count != 1 || min.kind != FL_STAT_BYTES) return true;
        const fl_stat_value_t *p = &n->literals[0];
        if (p->kind != FL_STAT_BYTES) return true;
        /* every s with prefix p has min <= s <= max, so min cut to |p| is
         * <= p and max cut to |p| is >= p */
        fl_stat_value_t lo = fl_prefix(&min, p->len), hi = fl_prefix(&max, p->len);
        int a, b;
        if (!fl_cmp(&lo, p, &a) || !fl_cmp(&hi, p, &b)) return true;
        return a <= 0 && b >= 0;
    }
    default:
        return true;
    }
}

bool fl_filter_may_match(const fl_filter_node_t *n, const fl_batch_stats_t *stats,
                         int32_t record_count) {
    switch (n->kind) {
    case FL_FILTER_NODE_LEAF:
        return fl_leaf_may_match(n, stats, record_count);
    case FL_FILTER_NODE_AND:
        for (size_t i = 0; i < n->child_count; i++)
            if (!fl_filter_may_match(&n->children[i], stats, record_count)) return false;
        return true;
    case FL_FILTER_NODE_OR:
        if (n->child_count == 0) return true;
        for (size_t i = 0; i < n->child_count; i++)
            if (fl_filter_may_match(&n->children[i], stats, record_count)) return true;
        return false;
    default:
        return true;
    }
}
