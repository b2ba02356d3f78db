/*
 * rpc_client.h — the calling side of Fluss RPC for server code: one
 * connection to one peer (host:port) living on a network loop (rpc_loop.h),
 * with pipelined requests matched to their answers by request id and
 * answered by callback. What Fluss's inter-server NettyClient does for a
 * tablet server talking to the coordinator or to a leader; libfluss's
 * blocking connection is for applications, never for server code.
 *
 * Two transports behind one client: a TCP connection, or in local mode an
 * in-process connection to a server of the same process
 * (fl_rpc_client_new_local), so the roles of one flussd talk through the
 * same messages and handlers as the processes of a cluster.
 *
 * Nothing waits. The connection is made at the first request (host names
 * resolved on libuv's pool), requests queued meanwhile are written when it
 * is up, in the order they were sent. A connection that fails or closes
 * fails every request written on it or queued for it with
 * FLUSS_ERR__TRANSPORT; the next request connects again, no sooner than a
 * backoff after the failure (reconnect_backoff_ms, doubling up to
 * reconnect_backoff_max_ms, reset by a connection that came up). A request
 * not answered within request_timeout_ms of its send fails with
 * FLUSS_ERR__TIMED_OUT (its answer, if it comes later, is dropped); a
 * connect that takes longer than connect_timeout_ms fails like a broken
 * connection. An answer frame over frame_max, or one that does not parse,
 * closes the connection (no request id in it can be trusted).
 *
 * Every request gets exactly one callback. Thread rule: fl_rpc_client_send
 * is safe from any thread; callbacks run on the client's loop thread, or,
 * once that loop has stopped, on the thread of the call that found it
 * stopped. Destroy the client from a thread other than its loop's, before
 * the loop is destroyed.
 */
#ifndef FL_RPC_CLIENT_H
#define FL_RPC_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "rpc_loop.h"

typedef struct fl_rpc_client fl_rpc_client_t;

/* An answer, or why there is none. */
typedef struct fl_rpc_reply {
    int status;          /* 0, or FLUSS_ERR__TRANSPORT / FLUSS_ERR__TIMED_OUT */
    uint8_t type;        /* with status 0: FL_RESPONSE_SUCCESS or _ERROR */
    const uint8_t *body; /* with status 0: the response body, valid during the callback */
    size_t body_len;
} fl_rpc_reply_t;

typedef void (*fl_rpc_reply_fn)(void *arg, const fl_rpc_reply_t *reply);

typedef struct fl_rpc_client_opts {
    size_t frame_max;                 /* largest answer frame taken */
    int64_t connect_timeout_ms;
    int64_t request_timeout_ms;
    int64_t reconnect_backoff_ms;     /* first wait after a failure */
    int64_t reconnect_backoff_max_ms;
} fl_rpc_client_opts_t;

/* Defaults: 100 MiB frames, 10 s connect, 30 s requests, 50 ms backoff up
 * to 1 s. */
void fl_rpc_client_opts_default(fl_rpc_client_opts_t *o);

/* A client of host:port on loop (not owned; it outlives the client). No
 * connection is made yet. opts NULL: the defaults. */
fl_rpc_client_t *fl_rpc_client_new(fl_rpc_loop_t *loop, const char *host, int port,
                                   const fl_rpc_client_opts_t *opts);

/* A client of srv (a server in this process) over a local connection
 * (rpc_server.h: fl_rpc_local_open, as if it came in on the listener whose
 * context is listener_ctx): the same requests, answers, timeouts and
 * failures as over a socket, without one. srv must outlive the client. */
typedef struct fl_rpc_server fl_rpc_server_t;
fl_rpc_client_t *fl_rpc_client_new_local(fl_rpc_loop_t *loop, fl_rpc_server_t *srv,
                                         void *listener_ctx, const fl_rpc_client_opts_t *opts);

/* Points a TCP client at another peer (the active coordinator moved): a
 * connection up is closed (what is on it fails with FLUSS_ERR__TRANSPORT),
 * one under way is dropped when it comes up, and the next request
 * connects to host:port at once. Any thread; the same peer: nothing. */
void fl_rpc_client_set_peer(fl_rpc_client_t *c, const char *host, int port);

/* Sends a request of api_key/api_version with the protobuf body[0, len)
 * (copied); cb(arg, reply) is called once with its answer or failure. */
void fl_rpc_client_send(fl_rpc_client_t *c, int16_t api_key, int16_t api_version,
                        const uint8_t *body, size_t len, fl_rpc_reply_fn cb, void *arg);

/* Closes the connection, fails what is pending with FLUSS_ERR__TRANSPORT
 * (their callbacks run before this returns) and frees the client. */
void fl_rpc_client_destroy(fl_rpc_client_t *c);

#endif
