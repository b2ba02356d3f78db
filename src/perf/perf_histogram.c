/*
 * perf_histogram.c — log-linear latency histogram (see perf_histogram.h).
 * Bucket i < 64 holds exactly the value i; above, each power of two
 * [2^e, 2^(e+1)) is cut into 64 equal sub-buckets.
 */
#include "perf_histogram.h"

#include <string.h>

static int fl_perf_hist_index(uint64_t v) {
    if (v < FL_PERF_HIST_SUB) return (int)v;
    int e = 63 - __builtin_clzll(v); /* >= FL_PERF_HIST_SUB_BITS */
    int shift = e - FL_PERF_HIST_SUB_BITS;
    int i = FL_PERF_HIST_SUB + shift * FL_PERF_HIST_SUB + (int)((v >> shift) & (FL_PERF_HIST_SUB - 1));
    return i < FL_PERF_HIST_BUCKETS ? i : FL_PERF_HIST_BUCKETS - 1;
}

/* Lowest value and width of bucket i. */
static void fl_perf_hist_range(int i, double *low, double *width) {
    if (i < FL_PERF_HIST_SUB) {
        *low = i;
        *width = 1;
        return;
    }
    int shift = (i - FL_PERF_HIST_SUB) / FL_PERF_HIST_SUB;
    int sub = (i - FL_PERF_HIST_SUB) % FL_PERF_HIST_SUB;
    *width = (double)((uint64_t)1 << shift);
    *low = (double)(FL_PERF_HIST_SUB + sub) * *width;
}

void fl_perf_hist_init(fl_perf_hist_t *h) {
    for (int i = 0; i < FL_PERF_HIST_BUCKETS; i++) atomic_init(&h->counts[i], 0);
    atomic_init(&h->n, 0);
    atomic_init(&h->sum_us, 0);
    atomic_init(&h->max_us, 0);
}

void fl_perf_hist_snap_init(fl_perf_hist_snap_t *s) { memset(s, 0, sizeof(*s)); }

void fl_perf_hist_record(fl_perf_hist_t *h, int64_t us) {
    if (us < 0) us = 0;
    atomic_fetch_add_explicit(&h->counts[fl_perf_hist_index((uint64_t)us)], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->n, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_us, us, memory_order_relaxed);
    int64_t m = atomic_load_explicit(&h->max_us, memory_order_relaxed);
    while (us > m &&
           !atomic_compare_exchange_weak_explicit(&h->max_us, &m, us, memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
}

void fl_perf_hist_drain(fl_perf_hist_t *h, fl_perf_hist_snap_t *into) {
    /* n is derived from the drained counts so a snapshot is always consistent */
    uint64_t n = 0;
    for (int i = 0; i < FL_PERF_HIST_BUCKETS; i++) {
        if (atomic_load_explicit(&h->counts[i], memory_order_relaxed) == 0) continue;
        uint64_t c = atomic_exchange_explicit(&h->counts[i], 0, memory_order_relaxed);
        into->counts[i] += c;
        n += c;
    }
    into->n += n;
    atomic_fetch_sub_explicit(&h->n, n, memory_order_relaxed);
    into->sum_us += atomic_exchange_explicit(&h->sum_us, 0, memory_order_relaxed);
    int64_t m = atomic_exchange_explicit(&h->max_us, 0, memory_order_relaxed);
    if (m > into->max_us) into->max_us = m;
}

void fl_perf_hist_merge(fl_perf_hist_snap_t *into, const fl_perf_hist_snap_t *from) {
    for (int i = 0; i < FL_PERF_HIST_BUCKETS; i++) into->counts[i] += from->counts[i];
    into->n += from->n;
    into->sum_us += from->sum_us;
    if (from->max_us > into->max_us) into->max_us = from->max_us;
}

double fl_perf_hist_quantile_us(const fl_perf_hist_snap_t *s, double q) {
    if (s->n == 0) return 0;
    if (q < 0) q = 0;
    if (q > 1) q = 1;
    /* rank of the quantile, 1-based: the smallest value with at least q·n values at or below */
    uint64_t rank = (uint64_t)(q * (double)s->n + 0.999999);
    if (rank == 0) rank = 1;
    uint64_t seen = 0;
    for (int i = 0; i < FL_PERF_HIST_BUCKETS; i++) {
        seen += s->counts[i];
        if (seen >= rank) {
            double low, width;
            fl_perf_hist_range(i, &low, &width);
            double v = width > 1 ? low + width / 2 : low;
            return v > (double)s->max_us ? (double)s->max_us : v;
        }
    }
    return (double)s->max_us;
}
