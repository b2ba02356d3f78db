/*
 * test_rpc_util.h — what the rpc layer's socket tests share: a one-loop
 * server they start their own way and stop alike, and a blocking dial to
 * it on loopback. Include after cmocka.h.
 */
#ifndef TEST_RPC_UTIL_H
#define TEST_RPC_UTIL_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "rpc_server.h"

typedef struct srv {
    fl_rpc_loop_t *loop;
    fl_rpc_server_t *srv;
    int port;
} srv_t;

static void srv_stop(srv_t *s) {
    fl_rpc_server_close(s->srv);
    fl_rpc_loop_destroy(s->loop);
    fl_rpc_server_destroy(s->srv);
}

/* A connected socket to 127.0.0.1:port. */
static int dial(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

#endif
