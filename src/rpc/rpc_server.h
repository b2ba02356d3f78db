/*
 * rpc_server.h — the network side of a Fluss server: libuv listeners,
 * connections that read Fluss frames (proto_frame.h) and hand each whole
 * request to a handler, and write responses back in request order, batched
 * into one write per loop turn.
 *
 * Limits: a frame longer than frame_max closes the connection (no request
 * id can be trusted); a connection stops reading while more than
 * out_pending_max response bytes wait to be written; a connection idle for
 * idle_timeout_ms is closed.
 *
 * Thread rule: a server and all its connections live on one uv loop; every
 * function here runs on that loop's thread.
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

typedef struct fl_rpc_server fl_rpc_server_t;
typedef struct fl_rpc_conn fl_rpc_conn_t;

/* Handles one request. Appends whole response frames to out (or nothing,
 * to close the connection: return non-zero). listener_ctx is the context of
 * the listener the connection came in on. */
typedef int (*fl_rpc_handler_fn)(void *listener_ctx, fl_rpc_conn_t *conn,
                                 const fl_frame_request_t *req, fl_buf_t *out);

typedef struct fl_rpc_limits {
    size_t frame_max;         /* netty.server.max-request-size */
    size_t out_pending_max;   /* stop reading above this many unsent bytes */
    int64_t idle_timeout_ms;  /* netty.connection.max-idle-time */
} fl_rpc_limits_t;

fl_rpc_server_t *fl_rpc_server_new(uv_loop_t *loop, const fl_rpc_limits_t *limits,
                                   fl_rpc_handler_fn handler);
/* Binds host:port (port 0 picks one) and starts accepting. Returns the bound
 * port in *bound_port. */
int fl_rpc_server_listen(fl_rpc_server_t *srv, const char *host, int port, void *listener_ctx,
                         int *bound_port, fl_error_t *err);
/* Stops accepting and closes every connection; cb runs when all handles
 * are closed. */
void fl_rpc_server_close(fl_rpc_server_t *srv, void (*cb)(fl_rpc_server_t *srv));
void fl_rpc_server_destroy(fl_rpc_server_t *srv);

size_t fl_rpc_server_connection_count(const fl_rpc_server_t *srv);

/* Deferred responses (long-poll fetches): a handler that answers later
 * takes a reference on its connection, and sends whole response frames
 * with fl_rpc_conn_send when ready. Sending on a connection that has closed
 * in the meantime does nothing. Every ref needs an unref. */
void fl_rpc_conn_ref(fl_rpc_conn_t *conn);
void fl_rpc_conn_unref(fl_rpc_conn_t *conn);
bool fl_rpc_conn_is_open(const fl_rpc_conn_t *conn);
void fl_rpc_conn_send(fl_rpc_conn_t *conn, const uint8_t *frames, size_t len);

#endif
