/*
 * test_rpc_tls.c — a TLS listener of rpc_server.h (fl_rpc_server_tls)
 * against a real server on loopback, with a self-signed certificate made
 * in memory: frames echo through TLS whole (pipelined, and one answer of
 * several TLS records), the handshake admits the connection
 * (admit_on_handshake), a held answer waits and keeps the order, a
 * plaintext peer is closed unanswered, and a connection that never
 * finishes its handshake is closed at the gate's deadline.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "common_alloc.h"
#include "common_time.h"
#include "proto_frame.h"
#include "rpc_server.h"
#include "test_rpc_util.h"

enum { API_ECHO = 1, API_HOLD = 3, API_GATED = 5 };

static int handler(void *ctx, fl_rpc_conn_t *conn, const fl_frame_request_t *req,
                   fl_rpc_out_t *out) {
    (void)ctx;
    if (req->api_key == API_GATED) {
        /* answers 1 when the handshake lifted the gate */
        uint8_t v = fl_rpc_conn_gated(conn) ? 0 : 1;
        fl_frame_put_response_header(&out->buf, FL_RESPONSE_SUCCESS, req->request_id, 1);
        fl_buf_append(&out->buf, &v, 1);
        return 0;
    }
    fl_frame_put_response_header(&out->buf, FL_RESPONSE_SUCCESS, req->request_id, req->body_len);
    fl_buf_append(&out->buf, req->body, req->body_len);
    if (req->api_key == API_HOLD) fl_rpc_conn_hold(conn, 200);
    return 0;
}

static SSL_CTX *server_ctx;
static int ctx_tls;

static SSL_CTX *ctx_fn(void *arg) {
    (void)arg;
    SSL_CTX_up_ref(server_ctx);
    return server_ctx;
}

static void make_server_ctx(void) {
    EVP_PKEY *key = EVP_RSA_gen(2048);
    assert_non_null(key);
    X509 *x = X509_new();
    ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
    X509_gmtime_adj(X509_getm_notBefore(x), 0);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_set_pubkey(x, key);
    X509_NAME *n = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)"t", -1, -1, 0);
    X509_set_issuer_name(x, n);
    assert_true(X509_sign(x, key, EVP_sha256()) > 0);
    server_ctx = SSL_CTX_new(TLS_server_method());
    SSL_CTX_set_min_proto_version(server_ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(server_ctx, SSL_OP_NO_RENEGOTIATION);
    assert_int_equal(SSL_CTX_use_certificate(server_ctx, x), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey(server_ctx, key), 1);
    X509_free(x);
    EVP_PKEY_free(key);
}

static void srv_start(srv_t *s) {
    s->loop = fl_rpc_loop_new("t-tls");
    fl_rpc_limits_t lim = {.frame_max = 8 << 20, .out_pending_max = 64 << 20,
                           .idle_timeout_ms = 600000};
    s->srv = fl_rpc_server_new(&s->loop, 1, &lim, handler);
    fl_error_t err;
    assert_int_equal(fl_rpc_server_listen(s->srv, "127.0.0.1", 0, &ctx_tls, &s->port, &err), 0);
    fl_rpc_gate_t g = {.frame_max = 1024, .deadline_ms = 400};
    assert_int_equal(fl_rpc_server_gate(s->srv, &ctx_tls, &g), 1);
    assert_int_equal(fl_rpc_server_tls(s->srv, &ctx_tls, ctx_fn, NULL, true), 1);
    assert_int_equal(fl_rpc_loop_start(s->loop), 0);
}

static SSL *tls_dial(int port, SSL_CTX *cctx, int *fd) {
    *fd = dial(port);
    SSL *ssl = SSL_new(cctx);
    SSL_set_fd(ssl, *fd);
    assert_int_equal(SSL_connect(ssl), 1);
    return ssl;
}

static void tls_send_request(SSL *ssl, int16_t api, int32_t id, size_t body_len) {
    fl_buf_t b;
    fl_buf_init(&b);
    fl_frame_put_request_header(&b, api, 0, id, body_len);
    uint8_t *p = fl_buf_reserve(&b, body_len + 1);
    for (size_t i = 0; i < body_len; i++) p[i] = (uint8_t)(i * 31 + (size_t)id);
    b.len += body_len;
    assert_int_equal(SSL_write(ssl, b.data, (int)b.len), (int)b.len);
    fl_buf_free(&b);
}

static int tls_read_full(SSL *ssl, uint8_t *p, size_t n) {
    for (size_t got = 0; got < n;) {
        int r = SSL_read(ssl, p + got, (int)(n - got));
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

/* One answer: its request id (its body checked as the echo of id's). */
static int32_t tls_read_answer(SSL *ssl, size_t *body_len, uint8_t *first) {
    uint8_t head[9];
    if (tls_read_full(ssl, head, sizeof(head))) return -1;
    uint32_t len = fl_get_be32(head);
    int32_t id = (int32_t)fl_get_be32(head + 5);
    size_t rest = len - 5;
    uint8_t *body = fl_malloc(rest + 1);
    assert_int_equal(tls_read_full(ssl, body, rest), 0);
    if (first) *first = rest ? body[0] : 0;
    for (size_t i = 0; first == NULL && i < rest; i++)
        assert_int_equal(body[i], (uint8_t)(i * 31 + (size_t)id));
    fl_free(body);
    *body_len = rest;
    return id;
}

static SSL_CTX *client_ctx(void) {
    SSL_CTX *c = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(c, SSL_VERIFY_NONE, NULL); /* self-signed; the CLI tests verify */
    return c;
}

static void test_echo_and_admit(void **state) {
    (void)state;
    srv_t s;
    srv_start(&s);
    SSL_CTX *cctx = client_ctx();
    int fd;
    SSL *ssl = tls_dial(s.port, cctx, &fd);
    size_t n;
    uint8_t v;
    tls_send_request(ssl, API_GATED, 1, 0);
    assert_int_equal(tls_read_answer(ssl, &n, &v), 1);
    assert_int_equal(v, 1); /* the handshake admitted it: no frame limit of 1024 now */
    /* pipelined, one of them 3 MB (many TLS records each way) */
    tls_send_request(ssl, API_ECHO, 2, 100);
    tls_send_request(ssl, API_ECHO, 3, 3 << 20);
    tls_send_request(ssl, API_HOLD, 4, 10);
    tls_send_request(ssl, API_ECHO, 5, 10);
    int64_t t0 = fl_time_mono_ms();
    assert_int_equal(tls_read_answer(ssl, &n, NULL), 2);
    assert_int_equal(n, 100);
    assert_int_equal(tls_read_answer(ssl, &n, NULL), 3);
    assert_int_equal(n, 3 << 20);
    assert_int_equal(tls_read_answer(ssl, &n, NULL), 4);
    assert_int_equal(tls_read_answer(ssl, &n, NULL), 5);
    assert_true(fl_time_mono_ms() - t0 >= 150); /* the held answer waited */
    SSL_free(ssl);
    close(fd);
    SSL_CTX_free(cctx);
    srv_stop(&s);
}

static void test_plaintext_and_stalled_peers_closed(void **state) {
    (void)state;
    srv_t s;
    srv_start(&s);
    /* a plaintext frame: no answer, closed */
    int fd = dial(s.port);
    fl_buf_t b;
    fl_buf_init(&b);
    fl_frame_put_request_header(&b, API_ECHO, 0, 1, 4);
    fl_buf_append(&b, "abcd", 4);
    assert_int_equal(send(fd, b.data, b.len, MSG_NOSIGNAL), (ssize_t)b.len);
    fl_buf_free(&b);
    uint8_t buf[256];
    struct pollfd p = {fd, POLLIN, 0};
    assert_int_equal(poll(&p, 1, 3000), 1);
    ssize_t r = recv(fd, buf, sizeof(buf), 0);
    assert_true(r <= 0 || buf[0] == 0x15); /* EOF, or a TLS alert record */
    close(fd);
    /* the start of a ClientHello, then nothing: closed at the deadline */
    fd = dial(s.port);
    assert_int_equal(send(fd, "\x16\x03\x01", 3, MSG_NOSIGNAL), 3);
    int64_t t0 = fl_time_mono_ms();
    p.fd = fd;
    assert_int_equal(poll(&p, 1, 5000), 1);
    assert_true(recv(fd, buf, sizeof(buf), 0) <= 0);
    int64_t waited = fl_time_mono_ms() - t0;
    assert_true(waited >= 300 && waited < 4000);
    close(fd);
    /* the server goes on */
    SSL_CTX *cctx = client_ctx();
    SSL *ssl = tls_dial(s.port, cctx, &fd);
    size_t n;
    tls_send_request(ssl, API_ECHO, 9, 5);
    assert_int_equal(tls_read_answer(ssl, &n, NULL), 9);
    SSL_free(ssl);
    close(fd);
    SSL_CTX_free(cctx);
    srv_stop(&s);
}

int main(void) {
    make_server_ctx();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_echo_and_admit),
        cmocka_unit_test(test_plaintext_and_stalled_peers_closed),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    SSL_CTX_free(server_ctx);
    return rc;
}
