/*
 * bench_connect.c — connection set-up through libfluss's connection
 * code: N times connect, API_VERSIONS and (unless MODE is plaintext)
 * AUTHENTICATE with SASL/PLAIN or SCRAM, then close; one at a time.
 * Prints connections/s and set-up latency percentiles as one JSON line.
 * Used by bench/run_auth.py, which runs it against flussd and the
 * reference in interleaved rounds and takes the servers' CPU from /proc.
 *
 *   bench_connect HOST:PORT plaintext|PLAIN|SCRAM-SHA-256|SCRAM-SHA-512 N [USER PASSWORD]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client_conn.h"

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
    if (argc != 4 && argc != 6) {
        fprintf(stderr, "usage: %s HOST:PORT plaintext|PLAIN|SCRAM-SHA-256|SCRAM-SHA-512 N "
                        "[USER PASSWORD]\n", argv[0]);
        return 2;
    }
    char host[256];
    int port;
    fl_error_t err;
    if (fl_client_parse_hostport(argv[1], host, sizeof(host), &port, &err)) return 2;
    int n = atoi(argv[3]);
    if (n <= 0) return 2;
    fl_client_auth_t auth;
    memset(&auth, 0, sizeof(auth));
    if (strcmp(argv[2], "plaintext") != 0) {
        if (argc != 6) return 2;
        snprintf(auth.mechanism, sizeof(auth.mechanism), "%s", argv[2]);
        snprintf(auth.username, sizeof(auth.username), "%s", argv[4]);
        snprintf(auth.password, sizeof(auth.password), "%s", argv[5]);
    }
    double *lat = malloc(sizeof(double) * (size_t)n);
    int warm = n / 10 + 1;
    double t0 = 0;
    for (int i = -warm; i < n; i++) {
        if (i == 0) t0 = now_us();
        double s = now_us();
        fl_client_conn_t c;
        if (fl_client_conn_open(&c, host, port, 10000, &auth, &err)) {
            fprintf(stderr, "connect %d: %s\n", i, err.msg);
            return 1;
        }
        fl_client_conn_close(&c);
        if (i >= 0) lat[i] = now_us() - s;
    }
    double secs = (now_us() - t0) / 1e6;
    qsort(lat, (size_t)n, sizeof(double), cmp_double);
    printf("{\"mode\":\"%s\",\"n\":%d,\"seconds\":%.3f,\"conns_per_s\":%.0f,"
           "\"p50_us\":%.0f,\"p99_us\":%.0f}\n",
           argv[2], n, secs, n / secs, lat[n / 2], lat[(size_t)n * 99 / 100]);
    free(lat);
    return 0;
}
