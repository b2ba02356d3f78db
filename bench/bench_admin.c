/*
 * bench_admin.c — metadata-path latency through libfluss: N blocking
 * GET_TABLE_INFO calls (and N GET_METADATA-backed table_exists calls) on one
 * connection against any Fluss server; prints calls/s and latency
 * percentiles as one JSON line. Used by bench/run_admin.sh, which runs it
 * against flussd and the reference server in the same run.
 *
 *   bench_admin HOST:PORT DB TABLE N
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fluss.h"

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s HOST:PORT DB TABLE N\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[4]);
    if (n <= 0) return 2;
    fluss_client_t *c;
    fluss_error_t err;
    if (fluss_client_new(argv[1], 30000, &c, &err)) {
        fprintf(stderr, "connect: %s\n", err.message);
        return 1;
    }
    double *lat = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n / 10; i++) { /* warm-up */
        fluss_table_info_t *info;
        if (fluss_table_info(c, argv[2], argv[3], &info, &err) == 0) fluss_table_info_free(info);
    }
    double t0 = now_us();
    for (int i = 0; i < n; i++) {
        double s = now_us();
        fluss_table_info_t *info;
        if (fluss_table_info(c, argv[2], argv[3], &info, &err)) {
            fprintf(stderr, "get_table_info: %s\n", err.message);
            return 1;
        }
        fluss_table_info_free(info);
        lat[i] = now_us() - s;
    }
    double total = now_us() - t0;
    qsort(lat, (size_t)n, sizeof(double), cmp_double);
    printf("{\"calls\":%d,\"calls_per_s\":%.0f,\"p50_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f}\n",
           n, n / (total / 1e6), lat[n / 2], lat[(size_t)(n * 0.99)], lat[n - 1]);
    free(lat);
    fluss_client_destroy(c);
    return 0;
}
