/*
 * server_call.h — what one server role asks of another, over rpc_client
 * (an in-process connection in local mode, the internal listener in a
 * cluster): a request answered by a decoded response, waited for; and a
 * client's request passed on whole, its answer relayed as it came.
 *
 * Thread rule: fl_server_call waits, so never from a network loop (nor
 * from the client's own loop); fl_server_forward from any thread.
 */
#ifndef FL_SERVER_CALL_H
#define FL_SERVER_CALL_H

#include <protobuf-c/protobuf-c.h>

#include "rpc_client.h"
#include "server_node.h"

/* Sends req as api_key (version 0) and waits: 0 with *resp (free with
 * protobuf_c_message_free_unpacked), or the error the peer answered (its
 * code and message in err), NETWORK_EXCEPTION when no answer came, or
 * CORRUPT_MESSAGE when the answer does not decode. */
int fl_server_call(fl_rpc_client_t *c, int16_t api_key, const ProtobufCMessage *req,
                   const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
                   fl_error_t *err);

/* A way to send a request (fl_rpc_client_send's shape); one that finds no
 * peer calls cb itself with status FLUSS_ERR__TRANSPORT. */
typedef void (*fl_server_send_fn)(void *ctx, int16_t api_key, const uint8_t *body, size_t len,
                                  fl_rpc_reply_fn cb, void *arg);
/* fl_server_call through send(ctx, ...). */
int fl_server_call_via(fl_server_send_fn send, void *ctx, int16_t api_key,
                       const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp_desc,
                       ProtobufCMessage **resp, fl_error_t *err);

/* One call of fl_server_call_all: what to send (send, ctx, api_key, req,
 * resp_desc), and what came back (rc, err, resp as fl_server_call's). */
typedef struct fl_server_call {
    fl_server_send_fn send;
    void *ctx;
    int16_t api_key;
    const ProtobufCMessage *req;
    const ProtobufCMessageDescriptor *resp_desc;
    int rc;
    fl_error_t err;
    ProtobufCMessage *resp;
} fl_server_call_t;
/* Sends every call's request at once, then waits for every answer: the
 * peers work on them side by side. */
void fl_server_call_all(fl_server_call_t *calls, size_t n);

/* Passes the request body[0, len) of the deferred request d on to c, with
 * d's api key and version, and answers d with what comes back: the
 * response or error frame as it is, NETWORK_EXCEPTION when none came.
 * Takes d (freed once answered). */
/* A client's request (d->who not trusted) goes as FORWARDED, with who
 * sent it; a server's own as it came. */
void fl_server_forward(fl_rpc_client_t *c, fl_req_ctx_t *d, const uint8_t *body, size_t len);

/* The same for a request read with no connection (fuzzing, replays):
 * waits, and appends the answer frame to out. */
void fl_server_forward_wait(fl_rpc_client_t *c, const fl_frame_request_t *req, fl_buf_t *out);

#endif
