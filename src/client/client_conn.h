/*
 * client_conn.h — one blocking connection of libfluss to a Fluss server:
 * connect, API_VERSIONS handshake, then request/response with timeouts.
 * Not thread-safe (one owner).
 */
#ifndef FL_CLIENT_CONN_H
#define FL_CLIENT_CONN_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stdint.h>

#include "common_error.h"

/* How a connection authenticates (client.security.protocol SASL): an
 * empty mechanism is PLAINTEXT. With tls (SSL, SASL_SSL: ours) the
 * connection speaks TLS first, verifying the server with ca_file. */
typedef struct fl_client_auth {
    char mechanism[32];
    char username[256];
    char password[256];
    bool tls;
    char ca_file[1024];
    char cert_file[1024]; /* "" for none */
    char key_file[1024];
} fl_client_auth_t;

struct ssl_st;
typedef struct fl_client_conn {
    int fd;
    struct ssl_st *ssl; /* a TLS connection's, else NULL */
    fl_client_auth_t auth; /* what it authenticated with, for sibling connections */
    int32_t next_request_id;
    int timeout_ms;
    int server_type; /* 1 coordinator, 2 tablet server, 0 unknown */
} fl_client_conn_t;

/* Connects, says API_VERSIONS and, with auth (NULL or an empty mechanism:
 * none), authenticates (AUTHENTICATE, SASL/PLAIN). */
int fl_client_conn_open(fl_client_conn_t *c, const char *host, int port, int timeout_ms,
                        const fl_client_auth_t *auth, fl_error_t *err);
void fl_client_conn_close(fl_client_conn_t *c);
/* Sends req as api_key v0 and decodes the answer with resp_desc into
 * *resp (free with protobuf_c_message_free_unpacked). An ERROR_RESPONSE
 * returns its code with the server's message in err. */
int fl_client_conn_call(fl_client_conn_t *c, int16_t api_key, const ProtobufCMessage *req,
                        const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
                        fl_error_t *err);
/* Pipelined use (several requests in flight on one connection): _send
 * writes one request and returns its id in *request_id; _recv reads the
 * next response frame (waiting until deadline_ms on the monotonic clock)
 * and returns the id it answers in *request_id with the decoded body in
 * *resp, or that request's ERROR_RESPONSE code with *resp NULL. A
 * transport failure closes the connection (fd < 0): every request still
 * in flight on it is lost. Do not mix with _call while requests are in
 * flight. */
int fl_client_conn_send(fl_client_conn_t *c, int16_t api_key, const ProtobufCMessage *req,
                        int32_t *request_id, fl_error_t *err);
int fl_client_conn_recv(fl_client_conn_t *c, int64_t deadline_ms,
                        const ProtobufCMessageDescriptor *resp_desc, int32_t *request_id,
                        ProtobufCMessage **resp, fl_error_t *err);
/* 1 when TLS holds bytes already read from the socket (a poll of the fd
 * would not show them), else 0. */
int fl_client_conn_buffered(const fl_client_conn_t *c);
/* 1 when a response (or EOF) can be read without blocking, else 0. */
int fl_client_conn_readable(const fl_client_conn_t *c);
/* Splits "host:port". */
int fl_client_parse_hostport(const char *s, char *host, size_t host_cap, int *port,
                             fl_error_t *err);

#endif
