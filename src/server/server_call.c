/*
 * server_call.c — calls between server roles (server_call.h).
 */
#include "server_call.h"

#include <pthread.h>
#include <string.h>

#include "common_alloc.h"
#include "proto_api.h"
#include "proto_frame.h"

typedef struct fl_call_wait {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    int status;
    uint8_t type;
    uint8_t *body;
    size_t len;
} fl_call_wait_t;

static void fl_call_on_reply(void *arg, const fl_rpc_reply_t *r) {
    fl_call_wait_t *w = arg;
    pthread_mutex_lock(&w->mu);
    w->status = r->status;
    if (!r->status) {
        w->type = r->type;
        w->len = r->body_len;
        w->body = fl_malloc(r->body_len ? r->body_len : 1);
        if (r->body_len) memcpy(w->body, r->body, r->body_len);
    }
    w->done = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static void fl_call_send_client(void *ctx, int16_t api_key, const uint8_t *body, size_t len,
                                fl_rpc_reply_fn cb, void *arg) {
    fl_rpc_client_send(ctx, api_key, 0, body, len, cb, arg);
}

int fl_server_call(fl_rpc_client_t *c, int16_t api_key, const ProtobufCMessage *req,
                   const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
                   fl_error_t *err) {
    return fl_server_call_via(fl_call_send_client, c, api_key, req, resp_desc, resp, err);
}

/* Packs req and sends it through send(ctx, ...), w waiting for the answer. */
static void fl_call_begin(fl_call_wait_t *w, fl_server_send_fn send, void *ctx, int16_t api_key,
                          const ProtobufCMessage *req) {
    size_t n = protobuf_c_message_get_packed_size(req);
    uint8_t *b = fl_malloc(n ? n : 1);
    protobuf_c_message_pack(req, b);
    memset(w, 0, sizeof(*w));
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    send(ctx, api_key, b, n, fl_call_on_reply, w);
    fl_free(b);
}

/* Waits for w's answer and decodes it. */
static int fl_call_end(fl_call_wait_t *w, const ProtobufCMessageDescriptor *resp_desc,
                       ProtobufCMessage **resp, fl_error_t *err) {
    pthread_mutex_lock(&w->mu);
    while (!w->done) pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    int rc = 0;
    if (w->status) {
        rc = fl_err_set(err, FLUSS_ERR_NETWORK_EXCEPTION, "no answer from the peer: %s",
                        fl_err_name(w->status));
    } else if (w->type != FL_RESPONSE_SUCCESS) {
        Fluss__ErrorResponse *er = fluss__error_response__unpack(NULL, w->len, w->body);
        if (!er) rc = fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE, "an error answer that does not decode");
        else {
            int code = er->error_code ? er->error_code : FLUSS_ERR_UNKNOWN_SERVER_ERROR;
            rc = fl_err_set(err, code, "%s", er->error_message ? er->error_message : "");
            fluss__error_response__free_unpacked(er, NULL);
        }
    } else {
        *resp = protobuf_c_message_unpack(resp_desc, NULL, w->len, w->body);
        if (!*resp) rc = fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE, "an answer that does not decode");
    }
    fl_free(w->body);
    return rc;
}

int fl_server_call_via(fl_server_send_fn send, void *ctx, int16_t api_key,
                       const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp_desc,
                       ProtobufCMessage **resp, fl_error_t *err) {
    fl_call_wait_t w;
    fl_call_begin(&w, send, ctx, api_key, req);
    return fl_call_end(&w, resp_desc, resp, err);
}

void fl_server_call_all(fl_server_call_t *calls, size_t n) {
    fl_call_wait_t *w = fl_calloc(n ? n : 1, sizeof(*w));
    for (size_t i = 0; i < n; i++)
        fl_call_begin(&w[i], calls[i].send, calls[i].ctx, calls[i].api_key, calls[i].req);
    for (size_t i = 0; i < n; i++) {
        fl_err_clear(&calls[i].err);
        calls[i].resp = NULL;
        calls[i].rc = fl_call_end(&w[i], calls[i].resp_desc, &calls[i].resp, &calls[i].err);
    }
    fl_free(w);
}

static void fl_forward_on_reply(void *arg, const fl_rpc_reply_t *r) {
    fl_req_ctx_t *d = arg;
    if (r->status) {
        fl_req_answer_error(d, FLUSS_ERR_NETWORK_EXCEPTION, "The coordinator did not answer.");
    } else {
        fl_buf_t b;
        fl_buf_init(&b);
        fl_frame_put_response_header(&b, r->type, d->request_id, r->body_len);
        fl_buf_append(&b, r->body, r->body_len);
        fl_req_answer_frames(d, &b);
        fl_buf_free(&b);
    }
    fl_req_free(d);
}

void fl_server_forward(fl_rpc_client_t *c, fl_req_ctx_t *d, const uint8_t *body, size_t len) {
    if (d->who.trusted) {
        fl_rpc_client_send(c, d->api_key, d->api_version, body, len, fl_forward_on_reply, d);
        return;
    }
    /* a client's: passed on with who sent it (FORWARDED), so the
     * coordinator authorizes it as that client */
    Fluss__ForwardedRequest fr = FLUSS__FORWARDED_REQUEST__INIT;
    fr.api_key = d->api_key;
    fr.api_version = d->api_version;
    fr.request.data = (uint8_t *)body;
    fr.request.len = len;
    fr.principal_type = d->who.type;
    fr.principal_name = d->who.name;
    fr.host = d->who.host;
    size_t n = protobuf_c_message_get_packed_size(&fr.base);
    uint8_t *buf = fl_malloc(n ? n : 1);
    protobuf_c_message_pack(&fr.base, buf);
    fl_rpc_client_send(c, FL_API_FORWARDED, 0, buf, n, fl_forward_on_reply, d);
    fl_free(buf);
}

void fl_server_forward_wait(fl_rpc_client_t *c, const fl_frame_request_t *req, fl_buf_t *out) {
    fl_call_wait_t w = {0};
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    fl_rpc_client_send(c, req->api_key, req->api_version, req->body, req->body_len,
                       fl_call_on_reply, &w);
    pthread_mutex_lock(&w.mu);
    while (!w.done) pthread_cond_wait(&w.cv, &w.mu);
    pthread_mutex_unlock(&w.mu);
    pthread_mutex_destroy(&w.mu);
    pthread_cond_destroy(&w.cv);
    if (w.status) {
        fl_server_reply_error(out, req->request_id, FLUSS_ERR_NETWORK_EXCEPTION,
                              "The coordinator did not answer.");
    } else {
        fl_frame_put_response_header(out, w.type, req->request_id, w.len);
        fl_buf_append(out, w.body, w.len);
    }
    fl_free(w.body);
}
