/*
 * bench_rtt.c — the raw loopback round trip, the floor under any request
 * latency on this machine: an echo thread and a client on one TCP
 * connection over 127.0.0.1 (TCP_NODELAY), N round trips of SIZE bytes
 * one at a time, as a 1-key lookup travels. Prints one JSON line with the
 * p50 / p99 / mean in microseconds.
 *
 *   bench_rtt [N=20000] [SIZE=64]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int g_listen;
static size_t g_size;

static int full_io(int fd, char *buf, size_t n, int rd) {
    for (size_t off = 0; off < n;) {
        ssize_t k = rd ? read(fd, buf + off, n - off) : write(fd, buf + off, n - off);
        if (k <= 0) return -1;
        off += (size_t)k;
    }
    return 0;
}

static void *echo(void *arg) {
    (void)arg;
    int fd = accept(g_listen, NULL, NULL);
    if (fd < 0) return NULL;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    char *buf = malloc(g_size);
    while (full_io(fd, buf, g_size, 1) == 0 && full_io(fd, buf, g_size, 0) == 0) {
    }
    free(buf);
    close(fd);
    return NULL;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 20000;
    g_size = argc > 2 ? (size_t)atol(argv[2]) : 64;
    if (n < 100 || g_size < 1 || g_size > (1u << 20)) {
        fprintf(stderr, "usage: bench_rtt [N >= 100] [SIZE 1..1048576]\n");
        return 2;
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    g_listen = socket(AF_INET, SOCK_STREAM, 0);
    if (g_listen < 0 || bind(g_listen, (struct sockaddr *)&a, sizeof(a)) ||
        listen(g_listen, 1) || getsockname(g_listen, (struct sockaddr *)&a, &al)) {
        perror("listen");
        return 1;
    }
    pthread_t th;
    pthread_create(&th, NULL, echo, NULL);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
        perror("connect");
        return 1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    char *buf = calloc(1, g_size);
    double *us = malloc(sizeof(double) * (size_t)n), sum = 0;
    for (long i = 0; i < n; i++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (full_io(fd, buf, g_size, 0) || full_io(fd, buf, g_size, 1)) {
            perror("io");
            return 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        us[i] = (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
        sum += us[i];
    }
    close(fd);
    pthread_join(th, NULL);
    close(g_listen);
    qsort(us, (size_t)n, sizeof(double), cmp);
    printf("{\"round_trips\":%ld,\"size\":%zu,\"p50_us\":%.2f,\"p99_us\":%.2f,\"mean_us\":%.2f}\n",
           n, g_size, us[n / 2], us[n * 99 / 100], sum / (double)n);
    free(us);
    free(buf);
    return 0;
}
