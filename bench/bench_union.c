/*
 * bench_union.c — reads a whole lake table one way and prints one JSON
 * line: rows, wall seconds, this process's CPU seconds. Used by
 * bench/run_union.sh, which interleaves the ways in one run.
 *
 *   bench_union HOST:PORT DB TABLE lake|log|union
 *
 * lake   the table's lake snapshot through libfluss's lake scanner (the
 *        Iceberg table's Parquet files, read here)
 * log    every bucket's log from the earliest offset to the latest at
 *        start through the log scanner (FETCH_LOG from the server)
 * union  the lake snapshot, then each bucket's log from its lake offset
 *        to the latest at start (what `fluss scan` does)
 *
 * Every row's offset is summed (the batches are decoded either way); the
 * checksum of offsets lets the runner see that each way read the same rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "fluss.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void die(const char *what, const fluss_error_t *e) {
    fprintf(stderr, "bench_union: %s: %s (%d)\n", what, e->message, e->code);
    exit(1);
}

static void count(const fluss_record_batch_t *b, long long *rows, unsigned long long *sum) {
    size_t n = fluss_record_batch_row_count(b);
    for (size_t r = 0; r < n; r++) *sum += (unsigned long long)fluss_record_batch_offset(b, r);
    *rows += (long long)n;
}

static void read_lake(fluss_table_t *t, const fluss_lake_snapshot_t *snap, long long *rows,
                      unsigned long long *sum) {
    fluss_lake_scanner_t *ls;
    fluss_error_t e;
    if (fluss_lake_scanner_new(t, snap, NULL, 0, &ls, &e)) die("lake scanner", &e);
    for (;;) {
        fluss_record_batch_t *b;
        if (fluss_lake_scanner_next(ls, &b, &e)) die("lake read", &e);
        if (!b) break;
        count(b, rows, sum);
        fluss_record_batch_free(b);
    }
    fluss_lake_scanner_destroy(ls);
}

/* Buckets from start[b] up to the latest offsets at start. */
static void read_log(fluss_table_t *t, const int64_t *start, long long *rows,
                     unsigned long long *sum) {
    int32_t nb = fluss_table_bucket_count(t);
    int64_t *stop = calloc((size_t)nb, sizeof(int64_t));
    fluss_error_t e;
    if (fluss_table_list_offsets(t, NULL, (size_t)nb, FLUSS_OFFSETS_LATEST, 0, stop, &e))
        die("list offsets", &e);
    fluss_log_scanner_t *s;
    if (fluss_log_scanner_new(t, NULL, 0, &s, &e)) die("log scanner", &e);
    int left = 0;
    for (int32_t b = 0; b < nb; b++) {
        int64_t from = start ? start[b] : FLUSS_OFFSET_EARLIEST;
        if (from >= 0 && from >= stop[b]) continue;
        if (stop[b] == 0) continue;
        if (fluss_log_scanner_subscribe(s, b, from, &e)) die("subscribe", &e);
        left++;
    }
    while (left > 0) {
        fluss_record_batch_t *batch;
        if (fluss_log_scanner_poll(s, 1000, &batch, &e)) die("poll", &e);
        if (!batch) continue;
        int32_t b = fluss_record_batch_bucket(batch);
        size_t n = fluss_record_batch_row_count(batch);
        for (size_t r = 0; r < n; r++) {
            int64_t off = fluss_record_batch_offset(batch, r);
            if (off >= stop[b]) break;
            *sum += (unsigned long long)off;
            (*rows)++;
        }
        fluss_record_batch_free(batch);
        if (fluss_log_scanner_position(s, b) >= stop[b]) {
            fluss_log_scanner_unsubscribe(s, b);
            left--;
        }
    }
    fluss_log_scanner_destroy(s);
    free(stop);
}

int main(int argc, char **argv) {
    if (argc != 5 || (strcmp(argv[4], "lake") && strcmp(argv[4], "log") && strcmp(argv[4], "union"))) {
        fprintf(stderr, "usage: %s HOST:PORT DB TABLE lake|log|union\n", argv[0]);
        return 2;
    }
    const char *mode = argv[4];
    fluss_client_t *c;
    fluss_table_t *t;
    fluss_error_t e;
    if (fluss_client_new(argv[1], 30000, &c, &e)) die("connect", &e);
    if (fluss_table_open(c, argv[2], argv[3], &t, &e)) die("open", &e);
    fluss_lake_snapshot_t *snap = NULL;
    long long rows = 0;
    unsigned long long sum = 0;
    double t0 = now_s(), c0 = cpu_s();
    if (strcmp(mode, "log") != 0 && fluss_lake_snapshot_get(c, argv[2], argv[3], &snap, &e))
        die("lake snapshot", &e);
    if (snap) read_lake(t, snap, &rows, &sum);
    if (strcmp(mode, "lake") != 0) {
        int32_t nb = fluss_table_bucket_count(t);
        int64_t *start = NULL;
        if (snap) {
            start = calloc((size_t)nb, sizeof(int64_t));
            for (int32_t b = 0; b < nb; b++) start[b] = FLUSS_OFFSET_EARLIEST;
            for (size_t i = 0; i < snap->bucket_count; i++)
                if (snap->buckets[i].bucket < nb) start[snap->buckets[i].bucket] = snap->buckets[i].offset;
        }
        read_log(t, start, &rows, &sum);
        free(start);
    }
    double secs = now_s() - t0, cpu = cpu_s() - c0;
    printf("{\"mode\":\"%s\",\"rows\":%lld,\"offset_sum\":%llu,\"seconds\":%.4f,\"cpu_s\":%.4f}\n",
           mode, rows, sum, secs, cpu);
    fluss_lake_snapshot_free(snap);
    fluss_table_close(t);
    fluss_client_destroy(c);
    return 0;
}
