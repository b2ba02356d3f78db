/*
 * client_conn.c — blocking Fluss connection (client_conn.h). Responses are
 * read whole (4-byte length first) with a frame cap, and matched to the
 * request id; _call keeps one request in flight, _send/_recv pipeline.
 */
#include "client_conn.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "auth_scram.h"
#include "common_alloc.h"
#include "common_buf.h"
#include "common_time.h"
#include "fluss_api.pb-c.h"
#include "proto_api.h"
#include "proto_frame.h"

#define FL_CLIENT_FRAME_MAX (512u * 1024 * 1024)

int fl_client_parse_hostport(const char *s, char *host, size_t host_cap, int *port,
                             fl_error_t *err) {
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || (size_t)(colon - s) >= host_cap)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "expected host:port, got '%s'", s);
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || p <= 0 || p > 65535)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "bad port in '%s'", s);
    *port = (int)p;
    return 0;
}

static int fl_wait(int fd, short events, int64_t deadline, fl_error_t *err) {
    for (;;) {
        int64_t left = deadline - fl_time_mono_ms();
        if (left <= 0) return fl_err_set(err, FLUSS_ERR__TIMED_OUT, "timed out waiting for the server");
        struct pollfd p = {fd, events, 0};
        int rc = poll(&p, 1, (int)left);
        if (rc > 0) return 0;
        if (rc < 0 && errno != EINTR)
            return fl_err_set(err, FLUSS_ERR__TRANSPORT, "poll: %s", strerror(errno));
    }
}

/* One AUTHENTICATE: token out, the server's challenge (if any) back
 * (fl_malloc'd, NULL when none). */
static int fl_client_auth_step(fl_client_conn_t *c, const char *mechanism, const uint8_t *token,
                               size_t len, uint8_t **challenge, size_t *challenge_len,
                               fl_error_t *err) {
    Fluss__AuthenticateRequest req = FLUSS__AUTHENTICATE_REQUEST__INIT;
    req.protocol = (char *)mechanism;
    req.token.data = (uint8_t *)token;
    req.token.len = len;
    Fluss__AuthenticateResponse *resp = NULL;
    int rc = fl_client_conn_call(c, FL_API_AUTHENTICATE, &req.base,
                                 &fluss__authenticate_response__descriptor,
                                 (ProtobufCMessage **)&resp, err);
    *challenge = NULL;
    *challenge_len = 0;
    if (!rc && resp->has_challenge && resp->challenge.len) {
        *challenge = fl_malloc(resp->challenge.len);
        memcpy(*challenge, resp->challenge.data, resp->challenge.len);
        *challenge_len = resp->challenge.len;
    }
    if (resp) protobuf_c_message_free_unpacked(&resp->base, NULL);
    return rc;
}

/* SCRAM (ours): client-first, client-final, and the server's signature
 * checked. */
static int fl_client_scram(fl_client_conn_t *c, const fl_client_auth_t *a, int hash,
                           fl_error_t *err) {
    fl_scram_client_t *s = fl_scram_client_new(hash, a->username, a->password);
    uint8_t *msg = NULL, *challenge = NULL;
    size_t len = 0, clen = 0;
    const char *mech = fl_scram_mechanism_name(hash);
    int rc = fl_scram_client_first(s, &msg, &len, err);
    if (!rc) rc = fl_client_auth_step(c, mech, msg, len, &challenge, &clen, err);
    fl_free(msg);
    msg = NULL;
    if (!rc) rc = fl_scram_client_final(s, challenge, clen, &msg, &len, err);
    fl_free(challenge);
    challenge = NULL;
    if (!rc) rc = fl_client_auth_step(c, mech, msg, len, &challenge, &clen, err);
    if (!rc) rc = fl_scram_client_verify(s, challenge, clen, err);
    fl_free(msg);
    fl_free(challenge);
    fl_scram_client_free(s);
    return rc;
}

/* SASL/PLAIN's one message (RFC 4616): no authzid, user, password; or
 * SCRAM. */
static int fl_client_authenticate(fl_client_conn_t *c, const fl_client_auth_t *a,
                                  fl_error_t *err) {
    int hash = fl_scram_mechanism(a->mechanism);
    if (hash) return fl_client_scram(c, a, hash, err);
    if (strcasecmp(a->mechanism, "PLAIN") != 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "SASL mechanism '%s' is not supported by this client (PLAIN, "
                          "SCRAM-SHA-256, SCRAM-SHA-512)",
                          a->mechanism);
    size_t nu = strlen(a->username), np = strlen(a->password);
    uint8_t msg[2 + sizeof(a->username) + sizeof(a->password)];
    msg[0] = 0;
    memcpy(msg + 1, a->username, nu);
    msg[1 + nu] = 0;
    memcpy(msg + 2 + nu, a->password, np);
    Fluss__AuthenticateRequest req = FLUSS__AUTHENTICATE_REQUEST__INIT;
    req.protocol = "PLAIN";
    req.token.data = msg;
    req.token.len = 2 + nu + np;
    ProtobufCMessage *resp = NULL;
    int rc = fl_client_conn_call(c, FL_API_AUTHENTICATE, &req.base,
                                 &fluss__authenticate_response__descriptor, &resp, err);
    memset(msg, 0, sizeof(msg));
    if (resp) protobuf_c_message_free_unpacked(resp, NULL);
    return rc;
}

static int fl_tls_err(fl_error_t *err, const char *what, const char *detail) {
    unsigned long e = ERR_get_error();
    char msg[256] = "";
    if (e) ERR_error_string_n(e, msg, sizeof(msg));
    ERR_clear_error();
    return fl_err_set(err, FLUSS_ERR__TRANSPORT, "TLS: %s%s%s%s%s", what, detail[0] ? " " : "",
                      detail, msg[0] ? ": " : "", msg);
}

typedef int (*fl_tls_op_fn)(struct ssl_st *ssl, void *p, int n);
static int fl_tls_op_handshake(SSL *ssl, void *p, int n);
static int fl_tls_run(fl_client_conn_t *c, fl_tls_op_fn op, void *p, int n, int64_t deadline,
                      size_t *done, fl_error_t *err);

/* The client context of one connection: the server verified against
 * ca_file, the client's certificate if given, TLS 1.2 at least. */
static SSL_CTX *fl_tls_client_ctx(const fl_client_auth_t *a, fl_error_t *err) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        fl_tls_err(err, "context", "");
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    if (SSL_CTX_load_verify_locations(ctx, a->ca_file, NULL) != 1) {
        fl_tls_err(err, "CA file", a->ca_file);
        goto fail;
    }
    if (a->cert_file[0]) {
        if (SSL_CTX_use_certificate_chain_file(ctx, a->cert_file) != 1) {
            fl_tls_err(err, "certificate file", a->cert_file);
            goto fail;
        }
        if (SSL_CTX_use_PrivateKey_file(ctx, a->key_file, SSL_FILETYPE_PEM) != 1 ||
            SSL_CTX_check_private_key(ctx) != 1) {
            fl_tls_err(err, "key file", a->key_file);
            goto fail;
        }
    }
    return ctx;
fail:
    SSL_CTX_free(ctx);
    return NULL;
}

/* TLS over the connected socket: the handshake (bounded by the
 * connection's timeout), the server's certificate checked against host
 * (an IP address or a DNS name). */
static int fl_tls_connect(fl_client_conn_t *c, const char *host, const fl_client_auth_t *a,
                          fl_error_t *err) {
    ERR_clear_error();
    SSL_CTX *ctx = fl_tls_client_ctx(a, err);
    if (!ctx) return FLUSS_ERR__TRANSPORT;
    c->ssl = SSL_new(ctx);
    SSL_CTX_free(ctx);
    if (!c->ssl) return fl_tls_err(err, "new connection", "");
    unsigned char ip[16];
    bool is_ip = inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1;
    X509_VERIFY_PARAM *vp = SSL_get0_param(c->ssl);
    if (is_ip ? X509_VERIFY_PARAM_set1_ip_asc(vp, host) != 1
              : (SSL_set_tlsext_host_name(c->ssl, host) != 1 || SSL_set1_host(c->ssl, host) != 1))
        return fl_tls_err(err, "server name", host);
    BIO *rb = BIO_new(BIO_s_mem()), *wb = BIO_new(BIO_s_mem());
    if (!rb || !wb) {
        BIO_free(rb);
        BIO_free(wb);
        return fl_tls_err(err, "no memory", "");
    }
    BIO_set_mem_eof_return(rb, -1);
    SSL_set_bio(c->ssl, rb, wb);
    SSL_set_connect_state(c->ssl);
    size_t none = 0;
    int rc = fl_tls_run(c, fl_tls_op_handshake, NULL, 0, fl_time_mono_ms() + c->timeout_ms, &none,
                        err) == 0 ? 1 : -1;
    if (rc != 1) {
        long vr = SSL_get_verify_result(c->ssl);
        if (vr != X509_V_OK)
            return fl_err_set(err, FLUSS_ERR__TRANSPORT,
                              "TLS: the server's certificate is not trusted: %s",
                              X509_verify_cert_error_string(vr));
        return err->code ? err->code : FLUSS_ERR__TRANSPORT;
    }
    return 0;
}

int fl_client_conn_open(fl_client_conn_t *c, const char *host, int port, int timeout_ms,
                        const fl_client_auth_t *auth, fl_error_t *err) {
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    c->timeout_ms = timeout_ms > 0 ? timeout_ms : 30000;
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", port);
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    int gai = getaddrinfo(host, portstr, &hints, &res);
    if (gai != 0)
        return fl_err_set(err, FLUSS_ERR__TRANSPORT, "resolve %s: %s", host, gai_strerror(gai));
    int rc = FLUSS_ERR__TRANSPORT;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            c->fd = fd;
            rc = 0;
            break;
        }
        fl_err_set(err, FLUSS_ERR__TRANSPORT, "connect %s:%d: %s", host, port, strerror(errno));
        close(fd);
    }
    freeaddrinfo(res);
    if (rc) return rc;
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (auth) c->auth = *auth;
    if (auth && auth->tls && (rc = fl_tls_connect(c, host, auth, err))) {
        fl_client_conn_close(c);
        return rc;
    }

    Fluss__ApiVersionsRequest req = FLUSS__API_VERSIONS_REQUEST__INIT;
    req.client_software_name = "fluss-c";
    req.client_software_version = "0.1.0";
    ProtobufCMessage *resp = NULL;
    rc = fl_client_conn_call(c, FL_API_API_VERSIONS, &req.base,
                             &fluss__api_versions_response__descriptor, &resp, err);
    if (rc) {
        fl_client_conn_close(c);
        return rc;
    }
    Fluss__ApiVersionsResponse *av = (Fluss__ApiVersionsResponse *)resp;
    c->server_type = av->has_server_type ? av->server_type : 0;
    protobuf_c_message_free_unpacked(resp, NULL);
    if (auth && auth->mechanism[0]) {
        if ((rc = fl_client_authenticate(c, auth, err))) {
            fl_client_conn_close(c);
            return rc;
        }
    }
    return 0;
}

void fl_client_conn_close(fl_client_conn_t *c) {
    if (c->ssl) {
        SSL_free(c->ssl); /* no close_notify: the socket goes anyway */
        c->ssl = NULL;
    }
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
}

/* Plaintext bytes out, until the deadline (MSG_NOSIGNAL: a library must
 * not raise SIGPIPE in its caller). */
static int fl_sock_send_all(int fd, const uint8_t *p, size_t n, int64_t deadline, fl_error_t *err) {
    while (n > 0) {
        int rc = fl_wait(fd, POLLOUT, deadline, err);
        if (rc) return rc;
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return fl_err_set(err, FLUSS_ERR__TRANSPORT, "send: %s", strerror(errno));
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Some bytes in (*got > 0), after waiting until the deadline. */
static int fl_sock_recv_some(int fd, uint8_t *p, size_t n, int64_t deadline, size_t *got,
                             fl_error_t *err) {
    for (;;) {
        int rc = fl_wait(fd, POLLIN, deadline, err);
        if (rc) return rc;
        ssize_t r = recv(fd, p, n, 0);
        if (r == 0) return fl_err_set(err, FLUSS_ERR__TRANSPORT, "the server closed the connection");
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return fl_err_set(err, FLUSS_ERR__TRANSPORT, "recv: %s", strerror(errno));
        }
        *got = (size_t)r;
        return 0;
    }
}

/* TLS over memory BIOs: the SSL object never touches the socket, so the
 * socket I/O above (deadlines, no SIGPIPE) serves both. */
static int fl_tls_flush_out(fl_client_conn_t *c, int64_t deadline, fl_error_t *err) {
    BIO *w = SSL_get_wbio(c->ssl);
    uint8_t buf[16384];
    int n;
    while ((n = BIO_read(w, buf, sizeof(buf))) > 0) {
        int rc = fl_sock_send_all(c->fd, buf, (size_t)n, deadline, err);
        if (rc) return rc;
    }
    return 0;
}

static int fl_tls_fill_in(fl_client_conn_t *c, int64_t deadline, fl_error_t *err) {
    uint8_t buf[16384];
    size_t r = 0;
    int rc = fl_sock_recv_some(c->fd, buf, sizeof(buf), deadline, &r, err);
    if (rc) return rc;
    if (BIO_write(SSL_get_rbio(c->ssl), buf, (int)r) != (int)r)
        return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "TLS: no memory for input");
    return 0;
}

/* Runs op (a handshake, read or write step) until it is done, moving
 * bytes between the BIOs and the socket; *done what SSL_read/_write gave
 * (0 for a handshake). */
static int fl_tls_op_handshake(SSL *ssl, void *p, int n) {
    (void)p, (void)n;
    int rc = SSL_do_handshake(ssl);
    return rc == 1 ? 0 : rc;
}
static int fl_tls_op_read(SSL *ssl, void *p, int n) { return SSL_read(ssl, p, n); }
static int fl_tls_op_write(SSL *ssl, void *p, int n) { return SSL_write(ssl, p, n); }

static int fl_tls_run(fl_client_conn_t *c, fl_tls_op_fn op, void *p, int n, int64_t deadline,
                      size_t *done, fl_error_t *err) {
    for (;;) {
        ERR_clear_error();
        int r = op(c->ssl, p, n);
        int rc = fl_tls_flush_out(c, deadline, err);
        if (rc) return rc;
        if (r > 0 || (r == 0 && op == fl_tls_op_handshake)) {
            *done = (size_t)r;
            return 0;
        }
        int e = SSL_get_error(c->ssl, r);
        if (e == SSL_ERROR_WANT_READ) {
            if ((rc = fl_tls_fill_in(c, deadline, err))) return rc;
            continue;
        }
        if (e == SSL_ERROR_WANT_WRITE) continue;
        if (e == SSL_ERROR_ZERO_RETURN)
            return fl_err_set(err, FLUSS_ERR__TRANSPORT, "the server closed the connection");
        return fl_tls_err(err, op == fl_tls_op_handshake ? "handshake" : "I/O", "");
    }
}

static int fl_send_all(fl_client_conn_t *c, const uint8_t *p, size_t n, int64_t deadline,
                       fl_error_t *err) {
    if (!c->ssl) return fl_sock_send_all(c->fd, p, n, deadline, err);
    while (n > 0) {
        int chunk = n > (1u << 30) ? (1 << 30) : (int)n;
        size_t w = 0;
        int rc = fl_tls_run(c, fl_tls_op_write, (void *)p, chunk, deadline, &w, err);
        if (rc) return rc;
        p += w;
        n -= w;
    }
    return 0;
}

static int fl_recv_all(fl_client_conn_t *c, uint8_t *p, size_t n, int64_t deadline,
                       fl_error_t *err) {
    while (n > 0) {
        size_t r = 0;
        int chunk = n > (1u << 30) ? (1 << 30) : (int)n;
        int rc = c->ssl ? fl_tls_run(c, fl_tls_op_read, p, chunk, deadline, &r, err)
                        : fl_sock_recv_some(c->fd, p, n, deadline, &r, err);
        if (rc) return rc;
        p += r;
        n -= r;
    }
    return 0;
}

int fl_client_conn_send(fl_client_conn_t *c, int16_t api_key, const ProtobufCMessage *req,
                        int32_t *request_id, fl_error_t *err) {
    if (c->fd < 0) return fl_err_set(err, FLUSS_ERR__TRANSPORT, "not connected");
    int64_t deadline = fl_time_mono_ms() + c->timeout_ms;
    int32_t rid = c->next_request_id;
    c->next_request_id = (c->next_request_id + 1) & 0x7FFFFFFF;
    size_t n = protobuf_c_message_get_packed_size(req);
    fl_buf_t frame;
    fl_buf_init(&frame);
    fl_frame_put_request_header(&frame, api_key, 0, rid, n);
    protobuf_c_message_pack(req, fl_buf_reserve(&frame, n));
    frame.len += n;
    int rc = fl_send_all(c, frame.data, frame.len, deadline, err);
    fl_buf_free(&frame);
    if (rc) {
        fl_client_conn_close(c);
        return rc;
    }
    *request_id = rid;
    return 0;
}

int fl_client_conn_buffered(const fl_client_conn_t *c) {
    return c->fd >= 0 && c->ssl &&
           (SSL_pending(c->ssl) > 0 || BIO_ctrl_pending(SSL_get_rbio(c->ssl)) > 0);
}

int fl_client_conn_readable(const fl_client_conn_t *c) {
    if (c->fd < 0) return 0;
    if (fl_client_conn_buffered(c)) return 1;
    struct pollfd p = {c->fd, POLLIN, 0};
    return poll(&p, 1, 0) > 0;
}

int fl_client_conn_recv(fl_client_conn_t *c, int64_t deadline,
                        const ProtobufCMessageDescriptor *resp_desc, int32_t *request_id,
                        ProtobufCMessage **resp, fl_error_t *err) {
    *resp = NULL;
    *request_id = -1;
    if (c->fd < 0) return fl_err_set(err, FLUSS_ERR__TRANSPORT, "not connected");
    uint8_t lenbuf[4];
    int rc = fl_recv_all(c, lenbuf, 4, deadline, err);
    if (rc) {
        /* a timeout before any byte leaves the stream in sync */
        if (rc == FLUSS_ERR__TIMED_OUT) return rc;
        goto broken;
    }
    uint32_t flen = fl_get_be32(lenbuf);
    if (flen > FL_CLIENT_FRAME_MAX || flen < 1) {
        rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "bad response frame length %u", flen);
        goto broken;
    }
    uint8_t *body = fl_try_malloc(flen + 4);
    if (!body) {
        rc = fl_err_set(err, FLUSS_ERR__NO_MEMORY, "no memory for a %u-byte response", flen);
        goto broken;
    }
    memcpy(body, lenbuf, 4);
    /* the rest of a started frame gets the connection's whole timeout */
    int64_t rest = fl_time_mono_ms() + c->timeout_ms;
    if ((rc = fl_recv_all(c, body + 4, flen, rest > deadline ? rest : deadline, err))) {
        fl_free(body);
        goto broken;
    }
    fl_frame_response_t fr;
    if (fl_frame_parse_response(body, flen + 4, &fr) != FL_FRAME_OK) {
        fl_free(body);
        rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "unexpected response frame");
        goto broken;
    }
    *request_id = fr.request_id;
    if (fr.type != FL_RESPONSE_SUCCESS) {
        Fluss__ErrorResponse *er = fluss__error_response__unpack(NULL, fr.body_len, fr.body);
        if (!er) {
            fl_free(body);
            rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "undecodable error response");
            goto broken;
        }
        rc = fl_err_set(err, er->error_code, "%s",
                        er->error_message ? er->error_message : fl_err_default_message(er->error_code));
        fluss__error_response__free_unpacked(er, NULL);
        fl_free(body);
        if (fr.type == FL_RESPONSE_SERVER_FAILURE) fl_client_conn_close(c);
        return rc;
    }
    *resp = protobuf_c_message_unpack(resp_desc, NULL, fr.body_len, fr.body);
    fl_free(body);
    if (!*resp) return fl_err_set(err, FLUSS_ERR__CORRUPT, "undecodable response");
    return 0;
broken:
    fl_client_conn_close(c);
    return rc;
}

int fl_client_conn_call(fl_client_conn_t *c, int16_t api_key, const ProtobufCMessage *req,
                        const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
                        fl_error_t *err) {
    *resp = NULL;
    int32_t rid, got;
    int rc = fl_client_conn_send(c, api_key, req, &rid, err);
    if (rc) return rc;
    rc = fl_client_conn_recv(c, fl_time_mono_ms() + c->timeout_ms, resp_desc, &got, resp, err);
    if (rc == FLUSS_ERR__TIMED_OUT) {
        fl_client_conn_close(c); /* the late answer would desynchronize the stream */
        return rc;
    }
    if (got != rid && c->fd >= 0) {
        if (*resp) protobuf_c_message_free_unpacked(*resp, NULL);
        *resp = NULL;
        fl_client_conn_close(c);
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "unexpected response frame");
    }
    return rc;
}
