/*
 * rpc_server.h — the network side of a Fluss server: listeners and
 * connections that read Fluss frames (proto_frame.h), hand each whole
 * request to a handler on the connection's loop, and write responses back,
 * batched into one write per read. Connections are accepted on the first
 * loop and spread round robin over all of the server's loops
 * (netty.server.num-network-threads); a connection lives on one loop for
 * its whole life.
 *
 * Limits: a frame longer than frame_max closes the connection (no request
 * id can be trusted); a connection stops reading while more than
 * out_pending_max response bytes wait to be written; a connection idle for
 * idle_timeout_ms is closed.
 *
 * Thread rule: the handler runs on the connection's loop thread.
 * fl_rpc_conn_send, _ref, _unref and _is_open are safe from any thread;
 * listen before the loops start, close from any thread but a loop's.
 */
#ifndef FL_RPC_SERVER_H
#define FL_RPC_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "common_buf.h"
#include "common_error.h"
#include "proto_frame.h"
#include "rpc_loop.h"

typedef struct fl_rpc_server fl_rpc_server_t;
typedef struct fl_rpc_conn fl_rpc_conn_t;

#define FL_RPC_LOOPS_MAX 64

/* Response bytes waiting to be written: a contiguous buffer, plus owned
 * buffers spliced in at given points without copying (record data read
 * from a log: the send path hands them to writev as they are). */
typedef struct fl_rpc_ext {
    size_t at;     /* goes after buf[0, at) */
    fl_buf_t data; /* owned */
} fl_rpc_ext_t;

typedef struct fl_rpc_out {
    fl_buf_t buf;
    size_t ext_count, ext_cap;
    fl_rpc_ext_t *ext;
    size_t ext_bytes;
} fl_rpc_out_t;

void fl_rpc_out_init(fl_rpc_out_t *o);
void fl_rpc_out_free(fl_rpc_out_t *o);
/* Empties o, keeping buf's memory. */
void fl_rpc_out_reset(fl_rpc_out_t *o);
/* All bytes: buf and the spliced buffers. */
size_t fl_rpc_out_len(const fl_rpc_out_t *o);
/* Splices *data in after what buf holds now; takes its memory (*data is
 * left empty). */
void fl_rpc_out_attach(fl_rpc_out_t *o, fl_buf_t *data);
/* Moves everything of src to the end of dst (src is left empty). */
void fl_rpc_out_move(fl_rpc_out_t *dst, fl_rpc_out_t *src);
/* Drops everything after buf[0, len) and the first ext_count splices
 * (taking back an answer that was not sent). */
void fl_rpc_out_truncate(fl_rpc_out_t *o, size_t len, size_t ext_count);
/* Copies the spliced buffers into buf, in order (tests, fallbacks). */
void fl_rpc_out_flatten(fl_rpc_out_t *o);

/* Handles one request. Appends whole response frames to out (or nothing,
 * to close the connection: return non-zero). listener_ctx is the context of
 * the listener the connection came in on. */
typedef int (*fl_rpc_handler_fn)(void *listener_ctx, fl_rpc_conn_t *conn,
                                 const fl_frame_request_t *req, fl_rpc_out_t *out);

/* A handler's answer to say: send what out holds, then close the
 * connection (nothing after this request is read). */
#define FL_RPC_CLOSE_AFTER_REPLY 2

typedef struct fl_rpc_limits {
    size_t frame_max;         /* netty.server.max-request-size */
    size_t out_pending_max;   /* stop reading above this many unsent bytes */
    int64_t idle_timeout_ms;  /* netty.connection.max-idle-time */
} fl_rpc_limits_t;

/* A server over loops (not owned; they outlive it). */
fl_rpc_server_t *fl_rpc_server_new(fl_rpc_loop_t *const *loops, size_t loop_count,
                                   const fl_rpc_limits_t *limits, fl_rpc_handler_fn handler);
/* Binds host:port (port 0 picks one) and starts accepting on the first
 * loop. Returns the bound port in *bound_port. Call before the loops run. */
int fl_rpc_server_listen(fl_rpc_server_t *srv, const char *host, int port, void *listener_ctx,
                         int *bound_port, fl_error_t *err);
/* As fl_rpc_server_listen, but nothing is accepted yet: the port is taken
 * and known, and connections wait in the backlog (their requests
 * unanswered) until fl_rpc_server_accept. */
int fl_rpc_server_bind(fl_rpc_server_t *srv, const char *host, int port, void *listener_ctx,
                       int *bound_port, fl_error_t *err);
/* Starts accepting on every listener fl_rpc_server_bind opened, and
 * returns once it has. The loops must be running; not from a loop thread. */
int fl_rpc_server_accept(fl_rpc_server_t *srv, fl_error_t *err);
/* Stops accepting and closes every connection, and waits until all handles
 * are closed. The loops must be running. */
void fl_rpc_server_close(fl_rpc_server_t *srv);
void fl_rpc_server_destroy(fl_rpc_server_t *srv);

size_t fl_rpc_server_connection_count(const fl_rpc_server_t *srv);

/* Deferred responses (parked fetches, acks waits, work done on a worker):
 * a handler that answers later takes a reference on its connection and
 * sends whole response frames with fl_rpc_conn_send when ready, from any
 * thread (the frames are copied). Sending on a connection that has closed
 * in the meantime does nothing. Every ref needs an unref. */
void fl_rpc_conn_ref(fl_rpc_conn_t *conn);
void fl_rpc_conn_unref(fl_rpc_conn_t *conn);
bool fl_rpc_conn_is_open(const fl_rpc_conn_t *conn);
void fl_rpc_conn_send(fl_rpc_conn_t *conn, const uint8_t *frames, size_t len);
/* Sends (moves) whole frames of out, spliced buffers included; on the
 * connection's loop without a copy, elsewhere flattened and copied. */
void fl_rpc_conn_send_out(fl_rpc_conn_t *conn, fl_rpc_out_t *out);
/* In-process connections: how roles in one process (local mode) call each
 * other through the same handlers as over a socket. A local connection is
 * an accepted connection without a socket: what is written to it is cut
 * into frames and handled on its loop exactly as a socket's input (the
 * same handler, deferred answers alike), and its responses go to
 * deliver(arg, frames, len) on its loop instead of a socket.
 * deliver(arg, NULL, 0) says it closed (the server closing, a handler
 * closing the stream, or fl_rpc_local_close); after that nothing more is
 * delivered, and release(arg) runs when the connection is freed. If the
 * server's loop has stopped, deliver and release may run on the thread
 * that found it stopped. */
typedef void (*fl_rpc_local_deliver_fn)(void *arg, const uint8_t *frames, size_t len);
typedef void (*fl_rpc_local_release_fn)(void *arg);
/* Opens a local connection on one of srv's loops (round robin), as if it
 * came in on a listener whose context is listener_ctx. The caller holds a
 * reference, given back by fl_rpc_local_close. Any thread. */
fl_rpc_conn_t *fl_rpc_local_open(fl_rpc_server_t *srv, void *listener_ctx,
                                 fl_rpc_local_deliver_fn deliver, fl_rpc_local_release_fn release,
                                 void *arg);
/* Hands whole request frames (copied) to the connection; any thread, in
 * order. */
void fl_rpc_local_write(fl_rpc_conn_t *conn, const uint8_t *frames, size_t len);
/* Closes the connection and drops the caller's reference; any thread. */
void fl_rpc_local_close(fl_rpc_conn_t *conn);

/* The loop the connection lives on. */
fl_rpc_loop_t *fl_rpc_conn_loop(const fl_rpc_conn_t *conn);
/* What the server learned about the peer (e.g. from API_VERSIONS): bits
 * the server layer defines, 0 for a new connection; any thread. */
void fl_rpc_conn_set_flags(fl_rpc_conn_t *conn, uint32_t flags);
uint32_t fl_rpc_conn_flags(const fl_rpc_conn_t *conn);

/* Connections that must prove who they are first (a SASL listener): until
 * the server layer admits one (fl_rpc_conn_admit), its frames are at most
 * frame_max bytes (a longer length closes it before anything is
 * allocated for the frame) and it is closed deadline_ms (0: never) after
 * it was accepted. Applies to connections the listener whose context is
 * listener_ctx accepts from now on; returns how many listeners matched. */
typedef struct fl_rpc_gate {
    size_t frame_max;
    int64_t deadline_ms;
} fl_rpc_gate_t;
int fl_rpc_server_gate(fl_rpc_server_t *srv, void *listener_ctx, const fl_rpc_gate_t *gate);
/* Lifts the gate (the server's frame limit, no deadline); on the
 * connection's loop, e.g. from its handler. */
void fl_rpc_conn_admit(fl_rpc_conn_t *conn);
bool fl_rpc_conn_gated(const fl_rpc_conn_t *conn);
/* Holds back what the connection's handlers answered so far, and reads
 * nothing more, for delay_ms (a failed authentication's answer: a timer,
 * the loop goes on). From its handler, on its loop; local connections are
 * never held. */
void fl_rpc_conn_hold(fl_rpc_conn_t *conn, int64_t delay_ms);
/* What the server layer keeps per connection (its session): freed with
 * free_fn when the connection is freed; set on its loop. */
void fl_rpc_conn_attach(fl_rpc_conn_t *conn, void *data, void (*free_fn)(void *));
void *fl_rpc_conn_attachment(const fl_rpc_conn_t *conn);
/* The peer's IP address as text ("127.0.0.1", "::1"); "" for a local
 * connection. Fixed at accept. */
const char *fl_rpc_conn_peer_ip(const fl_rpc_conn_t *conn);

/* TLS listeners (ours): the connections of the listener whose context is
 * listener_ctx speak TLS. ctx_fn(arg) gives each new connection an
 * SSL_CTX with a reference the connection owns (SSL_CTX_up_ref), or NULL
 * to refuse it; a certificate reload lives behind it. Bytes are pumped
 * through memory BIOs: what is read goes through SSL_read into the input
 * (frames parsed as for plaintext), answers are flattened and go through
 * SSL_write. The handshake comes first, under the listener's gate (its
 * deadline); a failed one closes the connection. admit_on_handshake lifts
 * the gate once the handshake is done (TLS without SASL). Returns how
 * many listeners matched; before the loops accept. */
struct ssl_ctx_st;
typedef struct ssl_ctx_st *(*fl_rpc_tls_ctx_fn)(void *arg);
int fl_rpc_server_tls(fl_rpc_server_t *srv, void *listener_ctx, fl_rpc_tls_ctx_fn ctx_fn, void *arg,
                      bool admit_on_handshake);
/* Whether conn speaks TLS, and the common name of the certificate its
 * peer presented (verified in the handshake), NULL if none. On its loop. */
bool fl_rpc_conn_tls(const fl_rpc_conn_t *conn);
const char *fl_rpc_conn_tls_peer_cn(const fl_rpc_conn_t *conn);

#endif
