/*
 * test_rpc_client.c — the non-blocking RPC client (rpc_client.h) against a
 * real rpc_server on loopback: pipelined requests sent from two threads
 * matched to their answers, error frames passed through, timeouts, a
 * connection the server closes, a peer that is not there yet, and destroy
 * with requests in flight; the same over an in-process (local) connection
 * to the server, which also closes under the client. Every request gets
 * exactly one callback. Runs under ThreadSanitizer in `make test-tsan`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

#include <cmocka.h>

#include "common_time.h"
#include "fluss_errors.h"
#include "proto_frame.h"
#include "rpc_client.h"
#include "rpc_server.h"

enum { API_ECHO = 1, API_ERROR = 2, API_SILENT = 3, API_HANG_UP = 4 };

/* echo: the body back; error: an error frame with the body; silent: no
 * answer; hang up: the server closes the connection */
static int handler(void *ctx, fl_rpc_conn_t *conn, const fl_frame_request_t *req,
                   fl_rpc_out_t *out) {
    (void)ctx;
    (void)conn;
    switch (req->api_key) {
    case API_ECHO:
    case API_ERROR:
        fl_frame_put_response_header(&out->buf,
                                     req->api_key == API_ECHO ? FL_RESPONSE_SUCCESS
                                                              : FL_RESPONSE_ERROR,
                                     req->request_id, req->body_len);
        fl_buf_append(&out->buf, req->body, req->body_len);
        return 0;
    case API_SILENT: return 0;
    default: return -1;
    }
}

typedef struct peer {
    fl_rpc_loop_t *loop;
    fl_rpc_server_t *srv;
    int port;
} peer_t;

static void peer_start(peer_t *p, int port) {
    p->loop = fl_rpc_loop_new("t-srv");
    fl_rpc_limits_t lim = {.frame_max = 1 << 20, .out_pending_max = 64 << 20,
                           .idle_timeout_ms = 600000};
    p->srv = fl_rpc_server_new(&p->loop, 1, &lim, handler);
    fl_error_t err;
    assert_int_equal(fl_rpc_server_listen(p->srv, "127.0.0.1", port, NULL, &p->port, &err), 0);
    assert_int_equal(fl_rpc_loop_start(p->loop), 0);
}

static void peer_stop(peer_t *p) {
    fl_rpc_server_close(p->srv);
    fl_rpc_loop_destroy(p->loop);
    fl_rpc_server_destroy(p->srv);
}

/* One request's expectation and outcome. */
typedef struct call {
    char body[32];
    size_t len;
    atomic_int calls; /* callbacks seen: must end at exactly 1 */
    int status;
    uint8_t type;
    bool body_ok;
    int64_t answered_ms;
} call_t;

static atomic_int answered;

static void on_reply(void *arg, const fl_rpc_reply_t *r) {
    call_t *c = arg;
    c->status = r->status;
    c->type = r->type;
    c->body_ok = r->status == 0 && r->body_len == c->len && memcmp(r->body, c->body, c->len) == 0;
    c->answered_ms = fl_time_mono_ms();
    atomic_fetch_add(&c->calls, 1);
    atomic_fetch_add(&answered, 1);
}

static void send_call(fl_rpc_client_t *cl, int16_t api, call_t *c, int i) {
    c->len = (size_t)snprintf(c->body, sizeof(c->body), "request-%d", i);
    atomic_store(&c->calls, 0);
    fl_rpc_client_send(cl, api, 0, (const uint8_t *)c->body, c->len, on_reply, c);
}

static void wait_answered(int n, int64_t timeout_ms) {
    int64_t end = fl_time_mono_ms() + timeout_ms;
    while (atomic_load(&answered) < n && fl_time_mono_ms() < end) usleep(1000);
    assert_int_equal(atomic_load(&answered), n);
}

/* A client of p over TCP, or over a local connection (state: "local"). */
static fl_rpc_client_t *new_client(void **state, fl_rpc_loop_t *loop, peer_t *p,
                                   const fl_rpc_client_opts_t *o) {
    if (*state) return fl_rpc_client_new_local(loop, p->srv, NULL, o);
    return fl_rpc_client_new(loop, "localhost", p->port, o);
}

#define PER_THREAD 500

typedef struct sender {
    fl_rpc_client_t *cl;
    call_t *calls;
    int base;
} sender_t;

static void *send_many(void *arg) {
    sender_t *s = arg;
    for (int i = 0; i < PER_THREAD; i++) send_call(s->cl, API_ECHO, &s->calls[i], s->base + i);
    return NULL;
}

static void test_pipelined_from_two_threads(void **state) {
    peer_t p;
    peer_start(&p, 0);
    fl_rpc_loop_t *loop = fl_rpc_loop_new("t-cli");
    assert_int_equal(fl_rpc_loop_start(loop), 0);
    fl_rpc_client_t *cl = new_client(state, loop, &p, NULL);
    atomic_store(&answered, 0);
    static call_t calls[2 * PER_THREAD];
    sender_t s[2] = {{cl, calls, 0}, {cl, calls + PER_THREAD, PER_THREAD}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, send_many, &s[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    wait_answered(2 * PER_THREAD, 10000);
    for (int i = 0; i < 2 * PER_THREAD; i++) {
        assert_int_equal(atomic_load(&calls[i].calls), 1);
        assert_int_equal(calls[i].status, 0);
        assert_int_equal(calls[i].type, FL_RESPONSE_SUCCESS);
        assert_true(calls[i].body_ok);
    }
    /* an error frame is an answer: its type and body pass through */
    call_t e;
    send_call(cl, API_ERROR, &e, 7);
    wait_answered(2 * PER_THREAD + 1, 5000);
    assert_int_equal(e.status, 0);
    assert_int_equal(e.type, FL_RESPONSE_ERROR);
    assert_true(e.body_ok);
    fl_rpc_client_destroy(cl);
    fl_rpc_loop_destroy(loop);
    peer_stop(&p);
}

static void test_timeout_and_hang_up(void **state) {
    peer_t p;
    peer_start(&p, 0);
    fl_rpc_loop_t *loop = fl_rpc_loop_new("t-cli");
    assert_int_equal(fl_rpc_loop_start(loop), 0);
    fl_rpc_client_opts_t o;
    fl_rpc_client_opts_default(&o);
    o.request_timeout_ms = 300;
    fl_rpc_client_t *cl = new_client(state, loop, &p, &o);
    atomic_store(&answered, 0);

    /* no answer: timed out after the request timeout, not before */
    call_t silent;
    int64_t t0 = fl_time_mono_ms();
    send_call(cl, API_SILENT, &silent, 1);
    wait_answered(1, 5000);
    assert_int_equal(silent.status, FLUSS_ERR__TIMED_OUT);
    assert_true(silent.answered_ms - t0 >= 300);
    assert_true(silent.answered_ms - t0 < 3000);

    /* the server closes the connection: what is in flight fails */
    call_t quiet, hang;
    send_call(cl, API_SILENT, &quiet, 2);
    send_call(cl, API_HANG_UP, &hang, 3);
    wait_answered(3, 5000);
    assert_int_equal(quiet.status, FLUSS_ERR__TRANSPORT);
    assert_int_equal(hang.status, FLUSS_ERR__TRANSPORT);
    assert_int_equal(atomic_load(&quiet.calls), 1);

    /* and the next request connects again */
    call_t again;
    send_call(cl, API_ECHO, &again, 4);
    wait_answered(4, 5000);
    assert_int_equal(again.status, 0);
    assert_true(again.body_ok);

    /* destroy with a request in flight: its callback runs before destroy returns */
    call_t pending;
    send_call(cl, API_SILENT, &pending, 5);
    usleep(50 * 1000);
    fl_rpc_client_destroy(cl);
    assert_int_equal(atomic_load(&pending.calls), 1);
    assert_int_equal(pending.status, FLUSS_ERR__TRANSPORT);
    fl_rpc_loop_destroy(loop);
    peer_stop(&p);
}

/* A peer that is not listening yet: requests fail with a transport error,
 * and once it listens the client reaches it. */
static void test_peer_comes_up_later(void **state) {
    (void)state;
    peer_t p;
    peer_start(&p, 0); /* find a free port, then give it back */
    int port = p.port;
    peer_stop(&p);
    fl_rpc_loop_t *loop = fl_rpc_loop_new("t-cli");
    assert_int_equal(fl_rpc_loop_start(loop), 0);
    fl_rpc_client_t *cl = fl_rpc_client_new(loop, "127.0.0.1", port, NULL);
    atomic_store(&answered, 0);
    call_t refused;
    send_call(cl, API_ECHO, &refused, 1);
    wait_answered(1, 5000);
    assert_int_equal(refused.status, FLUSS_ERR__TRANSPORT);

    peer_start(&p, port);
    int n = 1;
    call_t later;
    for (int tries = 0; tries < 50; tries++) { /* backoff: a few refusals at most */
        send_call(cl, API_ECHO, &later, 2);
        wait_answered(++n, 5000);
        if (later.status == 0) break;
        assert_int_equal(later.status, FLUSS_ERR__TRANSPORT);
        usleep(20 * 1000);
    }
    assert_int_equal(later.status, 0);
    assert_true(later.body_ok);
    fl_rpc_client_destroy(cl);
    fl_rpc_loop_destroy(loop);
    peer_stop(&p);
}

/* The peer moves (another coordinator became active): the connection to
 * the old one closes, the next request goes to the new one at once. */
static void test_set_peer(void **state) {
    (void)state;
    peer_t a, b;
    peer_start(&a, 0);
    peer_start(&b, 0);
    fl_rpc_loop_t *loop = fl_rpc_loop_new("t-cli");
    assert_int_equal(fl_rpc_loop_start(loop), 0);
    fl_rpc_client_t *cl = fl_rpc_client_new(loop, "127.0.0.1", a.port, NULL);
    atomic_store(&answered, 0);
    call_t first;
    send_call(cl, API_ECHO, &first, 1);
    wait_answered(1, 5000);
    assert_int_equal(first.status, 0);
    /* the same peer again: nothing changes, the connection stays */
    fl_rpc_client_set_peer(cl, "127.0.0.1", a.port);
    call_t same;
    send_call(cl, API_ECHO, &same, 2);
    wait_answered(2, 5000);
    assert_int_equal(same.status, 0);
    /* a is gone: only b can answer now */
    peer_stop(&a);
    fl_rpc_client_set_peer(cl, "127.0.0.1", b.port);
    int n = 2;
    call_t moved;
    for (int tries = 0; tries < 3; tries++) { /* a request racing a's close may fail once */
        send_call(cl, API_ECHO, &moved, 3);
        wait_answered(++n, 5000);
        if (moved.status == 0) break;
    }
    assert_int_equal(moved.status, 0);
    assert_true(moved.body_ok);
    assert_int_equal(atomic_load(&moved.calls), 1);
    fl_rpc_client_destroy(cl);
    fl_rpc_loop_destroy(loop);
    peer_stop(&b);
}

/* Destroying a client that never sent, and one whose connect is under way. */
static void test_destroy_states(void **state) {
    (void)state;
    fl_rpc_loop_t *loop = fl_rpc_loop_new("t-cli");
    assert_int_equal(fl_rpc_loop_start(loop), 0);
    fl_rpc_client_destroy(fl_rpc_client_new(loop, "127.0.0.1", 1, NULL));
    for (int i = 0; i < 20; i++) {
        fl_rpc_client_t *cl = fl_rpc_client_new(loop, "localhost", 1, NULL);
        atomic_store(&answered, 0);
        call_t c;
        send_call(cl, API_ECHO, &c, i);
        if (i % 2) usleep(200);
        fl_rpc_client_destroy(cl);
        assert_int_equal(atomic_load(&c.calls), 1);
        assert_int_equal(c.status, FLUSS_ERR__TRANSPORT);
    }
    fl_rpc_loop_destroy(loop);
}

/* Local: the server closes while requests are in flight; they fail, and
 * so does a request sent after (the server is gone). */
static void test_local_server_closes(void **state) {
    (void)state;
    peer_t p;
    peer_start(&p, 0);
    fl_rpc_loop_t *loop = fl_rpc_loop_new("t-cli");
    assert_int_equal(fl_rpc_loop_start(loop), 0);
    fl_rpc_client_t *cl = fl_rpc_client_new_local(loop, p.srv, NULL, NULL);
    atomic_store(&answered, 0);
    call_t ok, quiet;
    send_call(cl, API_ECHO, &ok, 1);
    wait_answered(1, 5000);
    assert_int_equal(ok.status, 0);
    assert_true(ok.body_ok);
    send_call(cl, API_SILENT, &quiet, 2);
    usleep(20 * 1000);
    fl_rpc_server_close(p.srv);
    wait_answered(2, 5000);
    assert_int_equal(quiet.status, FLUSS_ERR__TRANSPORT);
    fl_rpc_client_destroy(cl);
    fl_rpc_loop_destroy(loop);
    fl_rpc_loop_destroy(p.loop);
    fl_rpc_server_destroy(p.srv);
}

/* A listener opened with fl_rpc_server_bind holds its port: another
 * server cannot take it. A request sent to it waits unanswered until
 * fl_rpc_server_accept, and is answered then. */
static void test_bind_then_accept(void **state) {
    (void)state;
    peer_t p;
    p.loop = fl_rpc_loop_new("t-srv");
    fl_rpc_limits_t lim = {.frame_max = 1 << 20, .out_pending_max = 64 << 20,
                           .idle_timeout_ms = 600000};
    p.srv = fl_rpc_server_new(&p.loop, 1, &lim, handler);
    fl_error_t err;
    assert_int_equal(fl_rpc_server_bind(p.srv, "127.0.0.1", 0, NULL, &p.port, &err), 0);
    assert_true(p.port > 0);
    assert_int_equal(fl_rpc_loop_start(p.loop), 0);
    peer_t q;
    q.loop = fl_rpc_loop_new("t-srv2");
    q.srv = fl_rpc_server_new(&q.loop, 1, &lim, handler);
    assert_int_not_equal(fl_rpc_server_bind(q.srv, "127.0.0.1", p.port, NULL, NULL, &err), 0);
    assert_int_not_equal(fl_rpc_server_listen(q.srv, "127.0.0.1", p.port, NULL, NULL, &err), 0);
    assert_int_equal(fl_rpc_loop_start(q.loop), 0);
    peer_stop(&q);

    fl_rpc_loop_t *loop = fl_rpc_loop_new("t-cli");
    assert_int_equal(fl_rpc_loop_start(loop), 0);
    fl_rpc_client_t *cl = fl_rpc_client_new(loop, "127.0.0.1", p.port, NULL);
    atomic_store(&answered, 0);
    call_t c;
    send_call(cl, API_ECHO, &c, 7);
    usleep(200 * 1000);
    assert_int_equal(atomic_load(&c.calls), 0);
    assert_int_equal(fl_rpc_server_accept(p.srv, &err), 0);
    wait_answered(1, 5000);
    assert_int_equal(c.status, 0);
    assert_true(c.body_ok);
    fl_rpc_client_destroy(cl);
    fl_rpc_loop_destroy(loop);
    peer_stop(&p);
}

static int local(void **state) {
    *state = (void *)"local";
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipelined_from_two_threads),
        cmocka_unit_test(test_timeout_and_hang_up),
        cmocka_unit_test_setup(test_pipelined_from_two_threads, local),
        cmocka_unit_test_setup(test_timeout_and_hang_up, local),
        cmocka_unit_test(test_local_server_closes),
        cmocka_unit_test(test_peer_comes_up_later),
        cmocka_unit_test(test_set_peer),
        cmocka_unit_test(test_destroy_states),
        cmocka_unit_test(test_bind_then_accept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
