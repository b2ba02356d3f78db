/*
 * perf_histogram.h — fluss-perf's latency histogram: log-linear buckets
 * over microseconds (64 sub-buckets per power of two, so a reported
 * percentile is within ~1.6 % of the true value), exact count, sum and
 * maximum.
 *
 * Thread rule: fl_perf_hist_record may be called from any number of
 * threads at once (relaxed atomics); fl_perf_hist_drain moves a
 * histogram's contents into a plain snapshot and is meant for one
 * reporting thread. Snapshots are single-threaded values.
 */
#ifndef FL_PERF_HISTOGRAM_H
#define FL_PERF_HISTOGRAM_H

#include <stdatomic.h>
#include <stdint.h>

#define FL_PERF_HIST_SUB_BITS 6
#define FL_PERF_HIST_SUB (1 << FL_PERF_HIST_SUB_BITS)
/* values up to 2^40 µs (12 days); bigger ones land in the last bucket */
#define FL_PERF_HIST_BUCKETS (FL_PERF_HIST_SUB + (40 - FL_PERF_HIST_SUB_BITS) * FL_PERF_HIST_SUB)

typedef struct fl_perf_hist {
    _Atomic uint64_t counts[FL_PERF_HIST_BUCKETS];
    _Atomic uint64_t n;
    _Atomic int64_t sum_us;
    _Atomic int64_t max_us;
} fl_perf_hist_t;

typedef struct fl_perf_hist_snap {
    uint64_t counts[FL_PERF_HIST_BUCKETS];
    uint64_t n;
    int64_t sum_us;
    int64_t max_us;
} fl_perf_hist_snap_t;

/* Zero-filled memory is an empty histogram; these are for clarity. */
void fl_perf_hist_init(fl_perf_hist_t *h);
void fl_perf_hist_snap_init(fl_perf_hist_snap_t *s);

/* Records one value (negative values count as 0). */
void fl_perf_hist_record(fl_perf_hist_t *h, int64_t us);

/* Adds h's contents to *into and empties h (values recorded meanwhile
 * land in either the snapshot or the emptied histogram, never lost). */
void fl_perf_hist_drain(fl_perf_hist_t *h, fl_perf_hist_snap_t *into);

/* Adds a snapshot to another. */
void fl_perf_hist_merge(fl_perf_hist_snap_t *into, const fl_perf_hist_snap_t *from);

/* The q-quantile (0 <= q <= 1) in µs: the midpoint of the bucket that
 * holds it, capped at the maximum; 0 for an empty snapshot. */
double fl_perf_hist_quantile_us(const fl_perf_hist_snap_t *s, double q);

#endif
