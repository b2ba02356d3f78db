/*
 * rpc_server.c — libuv listeners and connections for Fluss frames (see
 * rpc_server.h). Input is accumulated per connection and parsed in place;
 * responses produced while one read is handled are sent with one uv_write.
 */
#include "rpc_server.h"

#include <stdbool.h>
#include <string.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"

#define FL_RPC_LISTENERS_MAX 8
#define FL_RPC_READ_CHUNK 65536
#define FL_RPC_IDLE_SCAN_MS 1000

typedef struct fl_rpc_listener {
    uv_tcp_t tcp;
    fl_rpc_server_t *srv;
    void *ctx;
} fl_rpc_listener_t;

struct fl_rpc_conn {
    uv_tcp_t tcp;
    fl_rpc_server_t *srv;
    fl_rpc_listener_t *listener;
    fl_rpc_conn_t *prev, *next;
    fl_buf_t in;        /* unparsed input */
    fl_buf_t out;       /* responses not yet handed to uv_write */
    size_t in_flight;   /* bytes in the current uv_write, 0 if none */
    uv_write_t write_req;
    fl_buf_t writing;   /* buffer owned by the current uv_write */
    bool closing;
    bool reading;
    bool handle_closed;
    int refs; /* deferred responses holding this connection */
    int64_t last_active_ms;
};

struct fl_rpc_server {
    uv_loop_t *loop;
    fl_rpc_limits_t limits;
    fl_rpc_handler_fn handler;
    size_t listener_count;
    fl_rpc_listener_t *listeners[FL_RPC_LISTENERS_MAX];
    fl_rpc_conn_t *conns;
    size_t conn_count;
    uv_timer_t idle_timer;
    bool closing;
    size_t pending_closes;
    void (*close_cb)(fl_rpc_server_t *srv);
};

static void fl_rpc_conn_close(fl_rpc_conn_t *c);
static void fl_rpc_conn_flush(fl_rpc_conn_t *c);
static void fl_rpc_update_reading(fl_rpc_conn_t *c);

static void fl_rpc_maybe_closed(fl_rpc_server_t *srv) {
    if (srv->closing && srv->pending_closes == 0 && srv->close_cb) {
        void (*cb)(fl_rpc_server_t *) = srv->close_cb;
        srv->close_cb = NULL;
        cb(srv);
    }
}

static void fl_rpc_conn_free(fl_rpc_conn_t *c) {
    fl_buf_free(&c->in);
    fl_buf_free(&c->out);
    fl_buf_free(&c->writing);
    fl_free(c);
}

static void fl_rpc_on_conn_closed(uv_handle_t *h) {
    fl_rpc_conn_t *c = h->data;
    fl_rpc_server_t *srv = c->srv;
    c->handle_closed = true;
    if (c->refs == 0) fl_rpc_conn_free(c);
    srv->pending_closes--;
    fl_rpc_maybe_closed(srv);
}

void fl_rpc_conn_ref(fl_rpc_conn_t *c) { c->refs++; }

void fl_rpc_conn_unref(fl_rpc_conn_t *c) {
    if (--c->refs == 0 && c->handle_closed) fl_rpc_conn_free(c);
}

bool fl_rpc_conn_is_open(const fl_rpc_conn_t *c) { return !c->closing; }

void fl_rpc_conn_send(fl_rpc_conn_t *c, const uint8_t *frames, size_t len) {
    if (c->closing) return;
    fl_buf_append(&c->out, frames, len);
    c->last_active_ms = fl_time_mono_ms();
    fl_rpc_conn_flush(c);
    fl_rpc_update_reading(c);
}

static void fl_rpc_conn_close(fl_rpc_conn_t *c) {
    if (c->closing) return;
    c->closing = true;
    fl_rpc_server_t *srv = c->srv;
    if (c->prev) c->prev->next = c->next;
    else srv->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    srv->conn_count--;
    srv->pending_closes++;
    uv_close((uv_handle_t *)&c->tcp, fl_rpc_on_conn_closed);
}

static void fl_rpc_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    fl_rpc_conn_t *c = h->data;
    uint8_t *p = fl_buf_try_reserve(&c->in, FL_RPC_READ_CHUNK);
    buf->base = (char *)p;
    buf->len = p ? FL_RPC_READ_CHUNK : 0;
}

static void fl_rpc_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

static void fl_rpc_update_reading(fl_rpc_conn_t *c) {
    if (c->closing) return;
    bool want = c->out.len + c->in_flight <= c->srv->limits.out_pending_max;
    if (want && !c->reading) {
        if (uv_read_start((uv_stream_t *)&c->tcp, fl_rpc_alloc, fl_rpc_on_read) == 0)
            c->reading = true;
    } else if (!want && c->reading) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading = false;
    }
}

static void fl_rpc_on_write(uv_write_t *req, int status) {
    fl_rpc_conn_t *c = req->data;
    c->in_flight = 0;
    fl_buf_reset(&c->writing);
    if (c->closing) return;
    if (status < 0) {
        FL_DEBUG("rpc: write failed: %s", uv_strerror(status));
        fl_rpc_conn_close(c);
        return;
    }
    fl_rpc_conn_flush(c);
    fl_rpc_update_reading(c);
}

static void fl_rpc_conn_flush(fl_rpc_conn_t *c) {
    if (c->closing || c->in_flight || c->out.len == 0) return;
    /* swap buffers: the write owns `writing`, new responses go to `out` */
    fl_buf_t tmp = c->writing;
    c->writing = c->out;
    c->out = tmp;
    fl_buf_reset(&c->out);
    c->in_flight = c->writing.len;
    uv_buf_t b = uv_buf_init((char *)c->writing.data, (unsigned)c->writing.len);
    c->write_req.data = c;
    int rc = uv_write(&c->write_req, (uv_stream_t *)&c->tcp, &b, 1, fl_rpc_on_write);
    if (rc < 0) {
        c->in_flight = 0;
        fl_rpc_conn_close(c);
    }
}

/* Parses and handles every whole frame in c->in. */
static void fl_rpc_process(fl_rpc_conn_t *c) {
    size_t pos = 0;
    while (!c->closing) {
        size_t frame_bytes = 0;
        enum fl_frame_status st =
            fl_frame_peek(c->in.data + pos, c->in.len - pos, c->srv->limits.frame_max, &frame_bytes);
        if (st == FL_FRAME_NEED_MORE) break;
        if (st != FL_FRAME_OK) {
            FL_WARN("rpc: closing connection: frame length over %zu bytes",
                    c->srv->limits.frame_max);
            fl_rpc_conn_close(c);
            return;
        }
        fl_frame_request_t req;
        if (fl_frame_parse_request(c->in.data + pos, frame_bytes, &req) != FL_FRAME_OK) {
            FL_WARN("rpc: closing connection: frame of %zu bytes has no request header",
                    frame_bytes);
            fl_rpc_conn_close(c);
            return;
        }
        if (c->srv->handler(c->listener->ctx, c, &req, &c->out) != 0) {
            fl_rpc_conn_close(c);
            return;
        }
        pos += frame_bytes;
    }
    fl_buf_consume(&c->in, pos);
}

static void fl_rpc_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    (void)buf;
    fl_rpc_conn_t *c = s->data;
    if (nread == UV_ENOBUFS) {
        FL_WARN("rpc: closing connection: no memory for input");
        fl_rpc_conn_close(c);
        return;
    }
    if (nread < 0) {
        fl_rpc_conn_close(c);
        return;
    }
    if (nread == 0) return;
    c->in.len += (size_t)nread;
    c->last_active_ms = fl_time_mono_ms();
    fl_rpc_process(c);
    if (c->closing) return;
    fl_rpc_conn_flush(c);
    fl_rpc_update_reading(c);
}

static void fl_rpc_on_connection(uv_stream_t *server, int status) {
    fl_rpc_listener_t *l = server->data;
    fl_rpc_server_t *srv = l->srv;
    if (status < 0 || srv->closing) return;
    fl_rpc_conn_t *c = fl_calloc(1, sizeof(*c));
    c->srv = srv;
    c->listener = l;
    uv_tcp_init(srv->loop, &c->tcp);
    c->tcp.data = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
        srv->pending_closes++;
        c->closing = true;
        uv_close((uv_handle_t *)&c->tcp, fl_rpc_on_conn_closed);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    c->next = srv->conns;
    if (srv->conns) srv->conns->prev = c;
    srv->conns = c;
    srv->conn_count++;
    c->last_active_ms = fl_time_mono_ms();
    fl_rpc_update_reading(c);
}

static void fl_rpc_on_idle_scan(uv_timer_t *t) {
    fl_rpc_server_t *srv = t->data;
    int64_t now = fl_time_mono_ms();
    for (fl_rpc_conn_t *c = srv->conns, *next; c; c = next) {
        next = c->next;
        if (now - c->last_active_ms > srv->limits.idle_timeout_ms && c->in_flight == 0) {
            FL_DEBUG("rpc: closing idle connection");
            fl_rpc_conn_close(c);
        }
    }
}

fl_rpc_server_t *fl_rpc_server_new(uv_loop_t *loop, const fl_rpc_limits_t *limits,
                                   fl_rpc_handler_fn handler) {
    fl_rpc_server_t *srv = fl_calloc(1, sizeof(*srv));
    srv->loop = loop;
    srv->limits = *limits;
    srv->handler = handler;
    uv_timer_init(loop, &srv->idle_timer);
    srv->idle_timer.data = srv;
    uv_timer_start(&srv->idle_timer, fl_rpc_on_idle_scan, FL_RPC_IDLE_SCAN_MS,
                   FL_RPC_IDLE_SCAN_MS);
    uv_unref((uv_handle_t *)&srv->idle_timer);
    return srv;
}

int fl_rpc_server_listen(fl_rpc_server_t *srv, const char *host, int port, void *listener_ctx,
                         int *bound_port, fl_error_t *err) {
    if (srv->listener_count == FL_RPC_LISTENERS_MAX)
        return fl_err_set(err, FLUSS_ERR__STATE, "too many listeners");
    struct sockaddr_storage addr;
    int rc = uv_ip4_addr(host, port, (struct sockaddr_in *)&addr);
    if (rc) rc = uv_ip6_addr(host, port, (struct sockaddr_in6 *)&addr);
    if (rc) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "bad listen address '%s'", host);
    fl_rpc_listener_t *l = fl_calloc(1, sizeof(*l));
    l->srv = srv;
    l->ctx = listener_ctx;
    uv_tcp_init(srv->loop, &l->tcp);
    l->tcp.data = l;
    srv->listeners[srv->listener_count++] = l;
    rc = uv_tcp_bind(&l->tcp, (const struct sockaddr *)&addr, 0);
    if (!rc) rc = uv_listen((uv_stream_t *)&l->tcp, 1024, fl_rpc_on_connection);
    if (rc)
        return fl_err_set(err, FLUSS_ERR__IO, "listen on %s:%d: %s", host, port, uv_strerror(rc));
    struct sockaddr_storage bound;
    int len = sizeof(bound);
    uv_tcp_getsockname(&l->tcp, (struct sockaddr *)&bound, &len);
    if (bound_port)
        *bound_port = bound.ss_family == AF_INET6
                          ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
                          : ntohs(((struct sockaddr_in *)&bound)->sin_port);
    return 0;
}

static void fl_rpc_on_aux_closed(uv_handle_t *h) {
    fl_rpc_server_t *srv = h->data;
    if ((void *)h != (void *)&srv->idle_timer) {
        /* a listener: h->data was switched to the server before closing */
    }
    srv->pending_closes--;
    fl_rpc_maybe_closed(srv);
}

void fl_rpc_server_close(fl_rpc_server_t *srv, void (*cb)(fl_rpc_server_t *srv)) {
    if (srv->closing) return;
    srv->closing = true;
    srv->close_cb = cb;
    for (size_t i = 0; i < srv->listener_count; i++) {
        srv->pending_closes++;
        srv->listeners[i]->tcp.data = srv;
        uv_close((uv_handle_t *)&srv->listeners[i]->tcp, fl_rpc_on_aux_closed);
    }
    srv->pending_closes++;
    uv_close((uv_handle_t *)&srv->idle_timer, fl_rpc_on_aux_closed);
    while (srv->conns) fl_rpc_conn_close(srv->conns);
    fl_rpc_maybe_closed(srv);
}

void fl_rpc_server_destroy(fl_rpc_server_t *srv) {
    for (size_t i = 0; i < srv->listener_count; i++) fl_free(srv->listeners[i]);
    fl_free(srv);
}

size_t fl_rpc_server_connection_count(const fl_rpc_server_t *srv) { return srv->conn_count; }
