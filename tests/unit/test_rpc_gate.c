/*
 * test_rpc_gate.c — what rpc_server.h gives a listener that authenticates
 * (server_security.h), against a real server on loopback over raw
 * sockets: the gate's frame limit (a longer length closes the connection
 * unanswered, before the frame is read) and deadline, lifted by
 * fl_rpc_conn_admit; an answer held back by fl_rpc_conn_hold (in order:
 * what was pipelined behind it waits too); FL_RPC_CLOSE_AFTER_REPLY (the
 * answer goes out, nothing after it is answered); attachments freed with
 * the connection. Runs under ThreadSanitizer in `make test-tsan`.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "common_alloc.h"
#include "common_time.h"
#include "proto_frame.h"
#include "rpc_server.h"
#include "test_rpc_util.h"

enum { API_ECHO = 1, API_ADMIT = 2, API_HOLD = 3, API_LAST = 4 };

static atomic_int attachments_freed;

static void attachment_free(void *p) {
    fl_free(p);
    atomic_fetch_add(&attachments_freed, 1);
}

static int handler(void *ctx, fl_rpc_conn_t *conn, const fl_frame_request_t *req,
                   fl_rpc_out_t *out) {
    (void)ctx;
    fl_frame_put_response_header(&out->buf, FL_RESPONSE_SUCCESS, req->request_id, req->body_len);
    fl_buf_append(&out->buf, req->body, req->body_len);
    if (!fl_rpc_conn_attachment(conn)) fl_rpc_conn_attach(conn, fl_malloc(16), attachment_free);
    switch (req->api_key) {
    case API_ADMIT: fl_rpc_conn_admit(conn); return 0;
    case API_HOLD: fl_rpc_conn_hold(conn, 300); return 0;
    case API_LAST: return FL_RPC_CLOSE_AFTER_REPLY;
    default: return 0;
    }
}

static int ctx_gated;

static void srv_start(srv_t *s) {
    s->loop = fl_rpc_loop_new("t-gate");
    fl_rpc_limits_t lim = {.frame_max = 1 << 20, .out_pending_max = 64 << 20,
                           .idle_timeout_ms = 600000};
    s->srv = fl_rpc_server_new(&s->loop, 1, &lim, handler);
    fl_error_t err;
    assert_int_equal(fl_rpc_server_listen(s->srv, "127.0.0.1", 0, &ctx_gated, &s->port, &err), 0);
    fl_rpc_gate_t g = {.frame_max = 1024, .deadline_ms = 500};
    assert_int_equal(fl_rpc_server_gate(s->srv, &ctx_gated, &g), 1);
    assert_int_equal(fl_rpc_server_gate(s->srv, &attachments_freed, &g), 0);
    assert_int_equal(fl_rpc_loop_start(s->loop), 0);
}

static void put_request(fl_buf_t *b, int16_t api, int32_t id, size_t body_len) {
    uint8_t *body = fl_malloc(body_len ? body_len : 1);
    memset(body, 'x', body_len);
    fl_frame_put_request_header(b, api, 0, id, body_len);
    fl_buf_append(b, body, body_len);
    fl_free(body);
}

static void send_buf(int fd, const fl_buf_t *b) {
    assert_int_equal(send(fd, b->data, b->len, MSG_NOSIGNAL), (ssize_t)b->len);
}

/* Reads one response frame: its request id, or -1 at EOF (or -2 when
 * nothing came within timeout_ms). */
static int32_t read_answer(int fd, int timeout_ms, size_t *body_len) {
    uint8_t head[9];
    size_t got = 0;
    while (got < sizeof(head)) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, timeout_ms) <= 0) return -2;
        ssize_t r = recv(fd, head + got, sizeof(head) - got, 0);
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    uint32_t len = fl_get_be32(head);
    size_t rest = len - 5;
    uint8_t *body = fl_malloc(rest + 1);
    for (size_t n = 0; n < rest;) {
        ssize_t r = recv(fd, body + n, rest - n, 0);
        if (r <= 0) {
            fl_free(body);
            return -1;
        }
        n += (size_t)r;
    }
    fl_free(body);
    if (body_len) *body_len = rest;
    return (int32_t)fl_get_be32(head + 5);
}

static void test_frame_limit_until_admitted(void **state) {
    (void)state;
    srv_t s;
    srv_start(&s);
    fl_buf_t b;
    fl_buf_init(&b);
    /* the gate's limit: 1 KiB frames pass, a longer length closes the
     * connection with no answer */
    int fd = dial(s.port);
    put_request(&b, API_ECHO, 1, 1000);
    send_buf(fd, &b);
    size_t n = 0;
    assert_int_equal(read_answer(fd, 5000, &n), 1);
    assert_int_equal(n, 1000);
    fl_buf_reset(&b);
    put_request(&b, API_ECHO, 2, 4096);
    send_buf(fd, &b);
    assert_int_equal(read_answer(fd, 5000, NULL), -1);
    close(fd);
    /* admitted: the server's own limit */
    fd = dial(s.port);
    fl_buf_reset(&b);
    put_request(&b, API_ADMIT, 3, 8);
    put_request(&b, API_ECHO, 4, 100000);
    send_buf(fd, &b);
    assert_int_equal(read_answer(fd, 5000, NULL), 3);
    assert_int_equal(read_answer(fd, 5000, &n), 4);
    assert_int_equal(n, 100000);
    close(fd);
    fl_buf_free(&b);
    srv_stop(&s);
}

static void test_deadline(void **state) {
    (void)state;
    srv_t s;
    srv_start(&s);
    int quiet = dial(s.port), admitted = dial(s.port);
    fl_buf_t b;
    fl_buf_init(&b);
    put_request(&b, API_ADMIT, 1, 0);
    send_buf(admitted, &b);
    assert_int_equal(read_answer(admitted, 5000, NULL), 1);
    /* 500 ms deadline, checked by the once-a-second scan */
    int64_t t0 = fl_time_mono_ms();
    assert_int_equal(read_answer(quiet, 4000, NULL), -1);
    int64_t took = fl_time_mono_ms() - t0;
    assert_true(took >= 400 && took < 3000);
    /* the admitted one stays */
    fl_buf_reset(&b);
    put_request(&b, API_ECHO, 2, 10);
    send_buf(admitted, &b);
    assert_int_equal(read_answer(admitted, 5000, NULL), 2);
    close(quiet);
    close(admitted);
    fl_buf_free(&b);
    srv_stop(&s);
}

static void test_hold_keeps_order(void **state) {
    (void)state;
    srv_t s;
    srv_start(&s);
    int fd = dial(s.port);
    fl_buf_t b;
    fl_buf_init(&b);
    put_request(&b, API_ECHO, 1, 4);
    put_request(&b, API_HOLD, 2, 4);
    put_request(&b, API_ECHO, 3, 4);
    int64_t t0 = fl_time_mono_ms();
    send_buf(fd, &b);
    assert_int_equal(read_answer(fd, 5000, NULL), 1);
    assert_int_equal(read_answer(fd, 5000, NULL), 2);
    assert_true(fl_time_mono_ms() - t0 >= 290);
    assert_int_equal(read_answer(fd, 5000, NULL), 3);
    /* a second hold on the same connection, and one on another at once */
    int fd2 = dial(s.port);
    fl_buf_reset(&b);
    put_request(&b, API_HOLD, 4, 1);
    t0 = fl_time_mono_ms();
    send_buf(fd, &b);
    send_buf(fd2, &b);
    assert_int_equal(read_answer(fd, 5000, NULL), 4);
    assert_int_equal(read_answer(fd2, 5000, NULL), 4);
    assert_true(fl_time_mono_ms() - t0 >= 290);
    close(fd);
    close(fd2);
    fl_buf_free(&b);
    srv_stop(&s);
}

static void test_close_after_reply(void **state) {
    (void)state;
    srv_t s;
    srv_start(&s);
    atomic_store(&attachments_freed, 0);
    int fd = dial(s.port);
    fl_buf_t b;
    fl_buf_init(&b);
    put_request(&b, API_ECHO, 1, 4);
    put_request(&b, API_LAST, 2, 4);
    put_request(&b, API_ECHO, 3, 4);
    send_buf(fd, &b);
    assert_int_equal(read_answer(fd, 5000, NULL), 1);
    assert_int_equal(read_answer(fd, 5000, NULL), 2);
    assert_int_equal(read_answer(fd, 5000, NULL), -1);
    close(fd);
    for (int i = 0; i < 100 && atomic_load(&attachments_freed) < 1; i++) usleep(10000);
    assert_int_equal(atomic_load(&attachments_freed), 1);
    fl_buf_free(&b);
    srv_stop(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_limit_until_admitted),
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_hold_keeps_order),
        cmocka_unit_test(test_close_after_reply),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
