/*
 * rpc_client.c — one pipelined connection to a peer, on a network loop
 * (rpc_client.h).
 *
 * All state but the destroy handshake belongs to the loop thread: a send
 * posts its call there. Calls wait in `queued` until the connection is up,
 * then go out in one write per flush and wait in `inflight` for their
 * answer. A 100 ms tick (or the connect timeout, if shorter) expires calls
 * and connects, and starts a reconnect whose backoff has passed. The peers
 * are servers answering a few outstanding control requests at a time, so
 * the in-flight list is searched linearly.
 */
#include "rpc_client.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common_alloc.h"
#include "common_buf.h"
#include "common_log.h"
#include "common_time.h"
#include "fluss_errors.h"
#include "proto_frame.h"
#include "rpc_server.h"

#define FL_RPC_CLIENT_TICK_MS 100
#define FL_RPC_CLIENT_READ_CHUNK (64 * 1024)

typedef struct fl_rpc_call {
    struct fl_rpc_call *next;
    int32_t request_id;
    int64_t deadline_ms;
    fl_rpc_reply_fn cb;
    void *arg;
    fl_buf_t frame; /* the whole request; emptied once written */
} fl_rpc_call_t;

typedef struct fl_call_list {
    fl_rpc_call_t *head, *tail;
} fl_call_list_t;

enum fl_rpc_client_state {
    FL_CLIENT_IDLE,       /* no connection */
    FL_CLIENT_RESOLVING,  /* getaddrinfo on libuv's pool */
    FL_CLIENT_CONNECTING, /* uv_tcp_connect under way */
    FL_CLIENT_UP,
    FL_CLIENT_DOWN,       /* the socket is closing; IDLE when it has */
};

typedef struct fl_rpc_write {
    uv_write_t req;
    fl_buf_t data;
} fl_rpc_write_t;

/* The client end of a local connection. Answers come on the server's loop
 * and are posted to the client's; a peer is detached (client NULL) on the
 * client's loop when its connection goes, so answers still on their way
 * find no client. Freed when the client and the connection both let go. */
typedef struct fl_local_peer {
    atomic_int refs;
    fl_rpc_loop_t *loop;      /* the client's */
    fl_rpc_client_t *client;  /* client loop only; NULL once detached */
    /* set when the client lets go: the server's loop posts nothing to the
     * client's loop after that (it may be gone) */
    pthread_mutex_t mu;
    bool detached;
} fl_local_peer_t;

struct fl_rpc_client {
    fl_rpc_loop_t *loop;
    char host[256];
    int port;
    fl_rpc_client_opts_t opts;
    /* local transport (fl_rpc_client_new_local) */
    fl_rpc_server_t *local_srv;
    void *local_ctx;
    fl_rpc_conn_t *local_conn; /* while UP */
    fl_local_peer_t *peer;     /* while UP */

    /* loop thread only */
    enum fl_rpc_client_state state;
    bool started;  /* timer initialised */
    bool closing;  /* destroy under way: no new connection */
    uv_tcp_t tcp;
    uv_timer_t tick;
    uv_getaddrinfo_t gai;
    uv_connect_t connect_req;
    int64_t connect_deadline_ms;
    int64_t retry_at_ms;
    int64_t backoff_ms;
    int handles_open; /* tcp and tick, while the client closes */
    fl_call_list_t queued, inflight;
    fl_buf_t in;
    int32_t next_request_id;
    uint32_t target_gen;  /* bumped by fl_rpc_client_set_peer */
    uint32_t connect_gen; /* target_gen when the connection under way began */

    /* destroy handshake */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool closed;
};

static void fl_client_connect(fl_rpc_client_t *c);

void fl_rpc_client_opts_default(fl_rpc_client_opts_t *o) {
    o->frame_max = 100u << 20;
    o->connect_timeout_ms = 10000;
    o->request_timeout_ms = 30000;
    o->reconnect_backoff_ms = 50;
    o->reconnect_backoff_max_ms = 1000;
}

/* ---- call lists ---- */

static void fl_calls_push(fl_call_list_t *l, fl_rpc_call_t *call) {
    call->next = NULL;
    if (l->tail) l->tail->next = call;
    else l->head = call;
    l->tail = call;
}

static fl_rpc_call_t *fl_calls_take_all(fl_call_list_t *l) {
    fl_rpc_call_t *h = l->head;
    l->head = l->tail = NULL;
    return h;
}

/* Unlinks and returns the call with request id id, or NULL. */
static fl_rpc_call_t *fl_calls_take_id(fl_call_list_t *l, int32_t id) {
    fl_rpc_call_t *prev = NULL;
    for (fl_rpc_call_t *x = l->head; x; prev = x, x = x->next) {
        if (x->request_id != id) continue;
        if (prev) prev->next = x->next;
        else l->head = x->next;
        if (l->tail == x) l->tail = prev;
        return x;
    }
    return NULL;
}

static void fl_call_finish(fl_rpc_call_t *call, const fl_rpc_reply_t *reply) {
    call->cb(call->arg, reply);
    fl_buf_free(&call->frame);
    fl_free(call);
}

static void fl_call_fail(fl_rpc_call_t *call, int status) {
    fl_rpc_reply_t r = {.status = status};
    fl_call_finish(call, &r);
}

static void fl_calls_fail(fl_rpc_call_t *head, int status) {
    while (head) {
        fl_rpc_call_t *next = head->next;
        fl_call_fail(head, status);
        head = next;
    }
}

/* Fails the calls of l whose deadline has passed. */
static void fl_calls_expire(fl_call_list_t *l, int64_t now) {
    fl_call_list_t keep = {0};
    fl_rpc_call_t *x = fl_calls_take_all(l);
    while (x) {
        fl_rpc_call_t *next = x->next;
        if (x->deadline_ms <= now) fl_call_fail(x, FLUSS_ERR__TIMED_OUT);
        else fl_calls_push(&keep, x);
        x = next;
    }
    *l = keep;
}

/* ---- the connection ---- */

static void fl_client_release(fl_rpc_client_t *c);

static void fl_client_tcp_closed(uv_handle_t *h) {
    fl_rpc_client_t *c = h->data;
    if (c->closing) {
        fl_client_release(c);
        return;
    }
    c->state = FL_CLIENT_IDLE;
    if (c->queued.head && fl_time_mono_ms() >= c->retry_at_ms) fl_client_connect(c);
}

/* The connection failed or closed: everything on it fails, the socket
 * closes, and the next connect waits for the backoff. */
static void fl_local_detach(fl_rpc_client_t *c);

static void fl_client_down(fl_rpc_client_t *c, const char *why) {
    if (c->closing || c->state == FL_CLIENT_DOWN || c->state == FL_CLIENT_IDLE) return;
    FL_DEBUG("rpc client %s:%d: %s", c->host, c->port, why);
    bool had_socket = c->state != FL_CLIENT_RESOLVING && !c->local_srv;
    fl_local_detach(c);
    c->state = had_socket ? FL_CLIENT_DOWN : FL_CLIENT_IDLE;
    c->retry_at_ms = fl_time_mono_ms() + c->backoff_ms;
    c->backoff_ms *= 2;
    if (c->backoff_ms > c->opts.reconnect_backoff_max_ms)
        c->backoff_ms = c->opts.reconnect_backoff_max_ms;
    fl_buf_reset(&c->in);
    if (had_socket) uv_close((uv_handle_t *)&c->tcp, fl_client_tcp_closed);
    fl_calls_fail(fl_calls_take_all(&c->inflight), FLUSS_ERR__TRANSPORT);
    fl_calls_fail(fl_calls_take_all(&c->queued), FLUSS_ERR__TRANSPORT);
}

static void fl_client_written(uv_write_t *req, int status) {
    fl_rpc_write_t *w = (fl_rpc_write_t *)req;
    fl_rpc_client_t *c = req->data;
    fl_buf_free(&w->data);
    fl_free(w);
    if (status < 0 && c->state == FL_CLIENT_UP) fl_client_down(c, uv_strerror(status));
}

/* Writes every queued call in one write; they then wait in inflight. */
static void fl_client_flush(fl_rpc_client_t *c) {
    if (c->state != FL_CLIENT_UP || !c->queued.head) return;
    fl_rpc_write_t *w = fl_calloc(1, sizeof(*w));
    fl_buf_init(&w->data);
    fl_rpc_call_t *x = fl_calls_take_all(&c->queued);
    while (x) {
        fl_rpc_call_t *next = x->next;
        fl_buf_append(&w->data, x->frame.data, x->frame.len);
        fl_buf_free(&x->frame);
        fl_calls_push(&c->inflight, x);
        x = next;
    }
    if (c->local_srv) {
        fl_rpc_local_write(c->local_conn, w->data.data, w->data.len);
        fl_buf_free(&w->data);
        fl_free(w);
        return;
    }
    uv_buf_t b = uv_buf_init((char *)w->data.data, (unsigned)w->data.len);
    w->req.data = c;
    int rc = uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, fl_client_written);
    if (rc < 0) {
        fl_buf_free(&w->data);
        fl_free(w);
        fl_client_down(c, uv_strerror(rc));
    }
}

static void fl_client_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
    (void)hint;
    fl_rpc_client_t *c = h->data;
    uint8_t *p = fl_buf_try_reserve(&c->in, FL_RPC_CLIENT_READ_CHUNK);
    *buf = uv_buf_init((char *)p, p ? FL_RPC_CLIENT_READ_CHUNK : 0);
}

/* Answers every whole frame in c->in. */
static void fl_client_answer(fl_rpc_client_t *c) {
    size_t pos = 0;
    while (c->state == FL_CLIENT_UP) {
        size_t frame_bytes;
        enum fl_frame_status st =
            fl_frame_peek(c->in.data + pos, c->in.len - pos, c->opts.frame_max, &frame_bytes);
        if (st == FL_FRAME_NEED_MORE) break;
        fl_frame_response_t resp;
        if (st != FL_FRAME_OK ||
            fl_frame_parse_response(c->in.data + pos, frame_bytes, &resp) != FL_FRAME_OK ||
            resp.type == FL_RESPONSE_SERVER_FAILURE) {
            fl_client_down(c, "an answer frame that cannot be read");
            return;
        }
        pos += frame_bytes;
        fl_rpc_call_t *call = fl_calls_take_id(&c->inflight, resp.request_id);
        if (!call) continue; /* timed out before its answer came */
        fl_rpc_reply_t r = {.status = 0, .type = resp.type, .body = resp.body,
                            .body_len = resp.body_len};
        fl_call_finish(call, &r);
    }
    if (c->state == FL_CLIENT_UP) fl_buf_consume(&c->in, pos);
}

static void fl_client_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
    (void)buf;
    fl_rpc_client_t *c = s->data;
    if (n < 0) {
        fl_client_down(c, n == UV_EOF ? "closed by the peer" : uv_strerror((int)n));
        return;
    }
    if (n == 0) return;
    c->in.len += (size_t)n;
    fl_client_answer(c);
}

static void fl_client_connected(uv_connect_t *req, int status) {
    fl_rpc_client_t *c = req->data;
    if (c->closing || c->state != FL_CLIENT_CONNECTING) return; /* closed meanwhile */
    if (status < 0) {
        fl_client_down(c, uv_strerror(status));
        return;
    }
    c->state = FL_CLIENT_UP;
    if (c->connect_gen != c->target_gen) { /* the peer moved while we connected */
        fl_client_down(c, "the peer moved");
        return;
    }
    c->backoff_ms = c->opts.reconnect_backoff_ms;
    uv_tcp_nodelay(&c->tcp, 1);
    int rc = uv_read_start((uv_stream_t *)&c->tcp, fl_client_alloc, fl_client_read);
    if (rc < 0) {
        fl_client_down(c, uv_strerror(rc));
        return;
    }
    fl_client_flush(c);
}

static void fl_client_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res) {
    fl_rpc_client_t *c = req->data;
    if (c->closing) { /* destroy counted this resolve */
        uv_freeaddrinfo(res);
        fl_client_release(c);
        return;
    }
    if (status < 0 || !res) {
        uv_freeaddrinfo(res);
        fl_client_down(c, status < 0 ? uv_strerror(status) : "no address");
        return;
    }
    uv_tcp_init(fl_rpc_loop_uv(c->loop), &c->tcp);
    c->tcp.data = c;
    c->connect_req.data = c;
    c->state = FL_CLIENT_CONNECTING;
    int rc = uv_tcp_connect(&c->connect_req, &c->tcp, res->ai_addr, fl_client_connected);
    uv_freeaddrinfo(res);
    if (rc < 0) fl_client_down(c, uv_strerror(rc));
}

static void fl_local_connect(fl_rpc_client_t *c);

static void fl_client_connect(fl_rpc_client_t *c) {
    if (c->state != FL_CLIENT_IDLE || c->closing) return;
    c->connect_gen = c->target_gen;
    if (c->local_srv) {
        fl_local_connect(c);
        return;
    }
    c->state = FL_CLIENT_RESOLVING;
    c->connect_deadline_ms = fl_time_mono_ms() + c->opts.connect_timeout_ms;
    char port[16];
    snprintf(port, sizeof(port), "%d", c->port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    c->gai.data = c;
    int rc = uv_getaddrinfo(fl_rpc_loop_uv(c->loop), &c->gai, fl_client_resolved, c->host, port,
                            &hints);
    if (rc < 0) fl_client_down(c, uv_strerror(rc));
}

static void fl_client_tick(uv_timer_t *t) {
    fl_rpc_client_t *c = t->data;
    int64_t now = fl_time_mono_ms();
    fl_calls_expire(&c->inflight, now);
    fl_calls_expire(&c->queued, now);
    /* a resolve is not cut short (the pool's getaddrinfo cannot be
     * stopped, and c->gai is the one request); a connect is */
    if (c->state == FL_CLIENT_CONNECTING && now >= c->connect_deadline_ms)
        fl_client_down(c, "connect timed out");
    if (c->state == FL_CLIENT_IDLE && c->queued.head && now >= c->retry_at_ms)
        fl_client_connect(c);
}

static void fl_client_start(fl_rpc_client_t *c) {
    if (c->started) return;
    c->started = true;
    uv_timer_init(fl_rpc_loop_uv(c->loop), &c->tick);
    c->tick.data = c;
    uint64_t every = FL_RPC_CLIENT_TICK_MS;
    if (c->opts.connect_timeout_ms > 0 && (uint64_t)c->opts.connect_timeout_ms < every)
        every = (uint64_t)c->opts.connect_timeout_ms;
    if (c->opts.request_timeout_ms > 0 && (uint64_t)c->opts.request_timeout_ms < every)
        every = (uint64_t)c->opts.request_timeout_ms;
    uv_timer_start(&c->tick, fl_client_tick, every, every);
}

/* ---- the local transport ---- */

static void fl_local_peer_unref(fl_local_peer_t *p) {
    if (atomic_fetch_sub(&p->refs, 1) == 1) {
        pthread_mutex_destroy(&p->mu);
        fl_free(p);
    }
}

typedef struct fl_local_answer {
    fl_local_peer_t *peer;
    bool closed;
    size_t len;
    uint8_t frames[];
} fl_local_answer_t;

static void fl_local_answer_run(void *arg) {
    fl_local_answer_t *a = arg;
    fl_rpc_client_t *c = a->peer->client;
    if (fl_rpc_loop_on_thread(a->peer->loop) && c) {
        if (a->closed) {
            fl_client_down(c, "the local connection closed");
        } else {
            fl_buf_append(&c->in, a->frames, a->len);
            fl_client_answer(c);
        }
    }
    fl_local_peer_unref(a->peer);
    fl_free(a);
}

/* On the server's loop: answers (or the close) go to the client's loop. */
static void fl_local_deliver(void *arg, const uint8_t *frames, size_t len) {
    fl_local_peer_t *p = arg;
    pthread_mutex_lock(&p->mu);
    if (!p->detached) {
        fl_local_answer_t *a = fl_malloc(sizeof(*a) + len);
        a->peer = p;
        a->closed = frames == NULL;
        a->len = len;
        if (len) memcpy(a->frames, frames, len);
        atomic_fetch_add(&p->refs, 1);
        fl_rpc_loop_post(p->loop, fl_local_answer_run, a);
    }
    pthread_mutex_unlock(&p->mu);
}

static void fl_local_release(void *arg) { fl_local_peer_unref(arg); }

static void fl_local_connect(fl_rpc_client_t *c) {
    fl_local_peer_t *p = fl_calloc(1, sizeof(*p));
    atomic_init(&p->refs, 2); /* the client's and the connection's */
    pthread_mutex_init(&p->mu, NULL);
    p->loop = c->loop;
    p->client = c;
    c->peer = p;
    c->local_conn = fl_rpc_local_open(c->local_srv, c->local_ctx, fl_local_deliver,
                                      fl_local_release, p);
    c->state = FL_CLIENT_UP;
    c->backoff_ms = c->opts.reconnect_backoff_ms;
    fl_client_flush(c);
}

/* The client lets go of its local connection (client loop). */
static void fl_local_detach(fl_rpc_client_t *c) {
    if (!c->peer) return;
    c->peer->client = NULL;
    pthread_mutex_lock(&c->peer->mu);
    c->peer->detached = true;
    pthread_mutex_unlock(&c->peer->mu);
    fl_local_peer_unref(c->peer);
    c->peer = NULL;
    fl_rpc_local_close(c->local_conn);
    c->local_conn = NULL;
}

/* ---- sending ---- */

typedef struct fl_send_task {
    fl_rpc_client_t *client;
    fl_rpc_call_t *call;
} fl_send_task_t;

static void fl_client_enqueue(void *arg) {
    fl_send_task_t *t = arg;
    fl_rpc_client_t *c = t->client;
    fl_rpc_call_t *call = t->call;
    fl_free(t);
    if (!fl_rpc_loop_on_thread(c->loop) || c->closing) { /* the loop has stopped */
        fl_call_fail(call, FLUSS_ERR__TRANSPORT);
        return;
    }
    fl_client_start(c);
    call->request_id = c->next_request_id;
    c->next_request_id = c->next_request_id == INT32_MAX ? 0 : c->next_request_id + 1;
    fl_put_be32(call->frame.data + FL_FRAME_LEN_BYTES + 4, (uint32_t)call->request_id);
    fl_calls_push(&c->queued, call);
    if (c->state == FL_CLIENT_IDLE && fl_time_mono_ms() >= c->retry_at_ms) fl_client_connect(c);
    else fl_client_flush(c);
}

void fl_rpc_client_send(fl_rpc_client_t *c, int16_t api_key, int16_t api_version,
                        const uint8_t *body, size_t len, fl_rpc_reply_fn cb, void *arg) {
    fl_rpc_call_t *call = fl_calloc(1, sizeof(*call));
    call->cb = cb;
    call->arg = arg;
    call->deadline_ms = fl_time_mono_ms() + c->opts.request_timeout_ms;
    fl_buf_init(&call->frame);
    fl_frame_put_request_header(&call->frame, api_key, api_version, 0, len);
    if (len) fl_buf_append(&call->frame, body, len);
    fl_send_task_t *t = fl_malloc(sizeof(*t));
    t->client = c;
    t->call = call;
    fl_rpc_loop_post(c->loop, fl_client_enqueue, t);
}

/* ---- lifecycle ---- */

fl_rpc_client_t *fl_rpc_client_new(fl_rpc_loop_t *loop, const char *host, int port,
                                   const fl_rpc_client_opts_t *opts) {
    fl_rpc_client_t *c = fl_calloc(1, sizeof(*c));
    c->loop = loop;
    snprintf(c->host, sizeof(c->host), "%s", host);
    c->port = port;
    if (opts) c->opts = *opts;
    else fl_rpc_client_opts_default(&c->opts);
    c->backoff_ms = c->opts.reconnect_backoff_ms;
    c->state = FL_CLIENT_IDLE;
    fl_buf_init(&c->in);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    return c;
}

typedef struct fl_set_peer_task {
    fl_rpc_client_t *client;
    char host[256];
    int port;
} fl_set_peer_task_t;

static void fl_client_set_peer_run(void *arg) {
    fl_set_peer_task_t *t = arg;
    fl_rpc_client_t *c = t->client;
    if (strcmp(c->host, t->host) != 0 || c->port != t->port) {
        snprintf(c->host, sizeof(c->host), "%s", t->host);
        c->port = t->port;
        c->target_gen++;
        c->backoff_ms = c->opts.reconnect_backoff_ms;
        if (c->state == FL_CLIENT_UP) fl_client_down(c, "the peer moved");
        c->retry_at_ms = 0; /* the new peer at once */
    }
    fl_free(t);
}

void fl_rpc_client_set_peer(fl_rpc_client_t *c, const char *host, int port) {
    fl_set_peer_task_t *t = fl_malloc(sizeof(*t));
    t->client = c;
    snprintf(t->host, sizeof(t->host), "%s", host);
    t->port = port;
    fl_rpc_loop_post(c->loop, fl_client_set_peer_run, t);
}

fl_rpc_client_t *fl_rpc_client_new_local(fl_rpc_loop_t *loop, fl_rpc_server_t *srv,
                                         void *listener_ctx, const fl_rpc_client_opts_t *opts) {
    fl_rpc_client_t *c = fl_rpc_client_new(loop, "local", 0, opts);
    c->local_srv = srv;
    c->local_ctx = listener_ctx;
    return c;
}

static void fl_client_signal_closed(fl_rpc_client_t *c) {
    pthread_mutex_lock(&c->lock);
    c->closed = true;
    pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

/* One of the things the closing client waits for (its timer, its socket,
 * a resolve under way) is done; the last one lets destroy go on. */
static void fl_client_release(fl_rpc_client_t *c) {
    if (--c->handles_open == 0) fl_client_signal_closed(c);
}

static void fl_client_closed_handle(uv_handle_t *h) { fl_client_release(h->data); }

static void fl_client_close_task(void *arg) {
    fl_rpc_client_t *c = arg;
    c->closing = true;
    fl_calls_fail(fl_calls_take_all(&c->inflight), FLUSS_ERR__TRANSPORT);
    fl_calls_fail(fl_calls_take_all(&c->queued), FLUSS_ERR__TRANSPORT);
    if (!fl_rpc_loop_on_thread(c->loop)) { /* the loop stopped: its walk closed our handles */
        fl_client_signal_closed(c);
        return;
    }
    fl_local_detach(c);
    bool tcp = !c->local_srv && (c->state == FL_CLIENT_CONNECTING || c->state == FL_CLIENT_UP);
    bool tcp_closing = c->state == FL_CLIENT_DOWN; /* reports through fl_client_tcp_closed */
    bool resolving = c->state == FL_CLIENT_RESOLVING;
    c->handles_open = (c->started ? 1 : 0) + (tcp || tcp_closing ? 1 : 0) + (resolving ? 1 : 0);
    if (c->handles_open == 0) {
        fl_client_signal_closed(c);
        return;
    }
    if (resolving) uv_cancel((uv_req_t *)&c->gai); /* its callback comes either way */
    if (c->started) uv_close((uv_handle_t *)&c->tick, fl_client_closed_handle);
    if (tcp) uv_close((uv_handle_t *)&c->tcp, fl_client_closed_handle);
}

void fl_rpc_client_destroy(fl_rpc_client_t *c) {
    if (!c) return;
    assert(!fl_rpc_loop_on_thread(c->loop));
    fl_rpc_loop_post(c->loop, fl_client_close_task, c);
    pthread_mutex_lock(&c->lock);
    while (!c->closed) pthread_cond_wait(&c->cond, &c->lock);
    pthread_mutex_unlock(&c->lock);
    fl_buf_free(&c->in);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->cond);
    fl_free(c);
}
