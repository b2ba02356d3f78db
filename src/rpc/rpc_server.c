/*
 * rpc_server.c — listeners and connections for Fluss frames over several
 * loops (see rpc_server.h). Each loop has a shard: its connections, its
 * idle scan. Input is accumulated per connection and parsed in place;
 * responses produced while one read is handled are sent with one uv_write.
 *
 * A connection is freed when its handle has closed and no deferred
 * response holds it: the open handle counts as one reference.
 *
 * A TLS listener's connections (fl_rpc_server_tls) carry an fl_rpc_tls_t:
 * the socket reads into its raw buffer, the ciphertext goes through
 * SSL_read into `in`, and a flush encrypts `out` (flattened) with
 * SSL_write and writes the write BIO's bytes. Plaintext connections have
 * none and take the paths above unchanged.
 */
#include "rpc_server.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"

#define FL_RPC_LISTENERS_MAX 8
#define FL_RPC_IOV_MAX 512 /* pieces in one writev; more are flattened */
#define FL_RPC_READ_CHUNK 65536
#define FL_RPC_IDLE_SCAN_MS 1000

typedef struct fl_rpc_shard fl_rpc_shard_t;

typedef struct fl_rpc_listener {
    uv_tcp_t tcp;
    fl_rpc_server_t *srv;
    void *ctx;
    bool open;
    bool accepting; /* the loop accepts (uv_listen), not only the backlog */
    bool gated;     /* new connections start behind gate */
    fl_rpc_gate_t gate;
    fl_rpc_tls_ctx_fn tls_ctx_fn; /* a TLS listener (fl_rpc_server_tls) */
    void *tls_arg;
    bool tls_admit; /* the handshake lifts the gate */
} fl_rpc_listener_t;

/* A TLS connection's state (NULL for plaintext ones): the SSL object over
 * two memory BIOs, the socket's ciphertext read into raw. */
typedef struct fl_rpc_tls {
    SSL *ssl;
    BIO *rbio, *wbio; /* owned by ssl */
    bool handshaken;
    bool has_cn;
    char cn[256];
    uint8_t raw[FL_RPC_READ_CHUNK];
} fl_rpc_tls_t;

struct fl_rpc_conn {
    uv_tcp_t tcp;
    fl_rpc_shard_t *shard;
    fl_rpc_listener_t *listener;
    fl_rpc_conn_t *prev, *next;
    fl_buf_t in;        /* unparsed input */
    fl_rpc_out_t out;   /* responses not yet handed to uv_write */
    size_t in_flight;   /* bytes in the current uv_write, 0 if none */
    uv_write_t write_req;
    fl_rpc_out_t writing; /* what the current uv_write owns */
    uv_buf_t iov[FL_RPC_IOV_MAX];
    atomic_bool closing;
    bool reading;
    atomic_int refs;    /* the open handle + deferred responses */
    int64_t last_active_ms;
    atomic_uint flags;  /* fl_rpc_conn_set_flags */
    /* behind its listener's gate until fl_rpc_conn_admit: the gate's frame
     * limit, closed at deadline_ms (monotonic) */
    bool gated;
    size_t frame_max;
    int64_t deadline_ms;
    int64_t hold_until_ms; /* fl_rpc_conn_hold: nothing written before */
    bool close_after_write; /* FL_RPC_CLOSE_AFTER_REPLY */
    void *attachment;
    void (*attachment_free)(void *);
    char peer_ip[64]; /* the peer's address as text, "" for local ones */
    /* a local connection (fl_rpc_local_open): no socket, tcp unused */
    bool local;
    fl_rpc_local_deliver_fn deliver;
    fl_rpc_local_release_fn release;
    void *local_arg;
    fl_rpc_listener_t local_listener; /* carries the listener context */
    fl_rpc_tls_t *tls; /* a TLS listener's connection */
};

struct fl_rpc_shard {
    fl_rpc_server_t *srv;
    fl_rpc_loop_t *loop;
    fl_rpc_conn_t *conns;
    atomic_size_t conn_count;
    uv_timer_t idle_timer;
    uv_timer_t hold_timer; /* releases held answers (fl_rpc_conn_hold) */
    int64_t hold_due_ms;   /* when hold_timer fires, 0 if it is not armed */
    bool timer_started;
    bool closing;
    size_t pending_closes; /* handles of this shard still closing */
};

struct fl_rpc_server {
    fl_rpc_limits_t limits;
    fl_rpc_handler_fn handler;
    size_t shard_count;
    fl_rpc_shard_t shards[FL_RPC_LOOPS_MAX];
    atomic_size_t next_shard;
    size_t listener_count;
    fl_rpc_listener_t *listeners[FL_RPC_LISTENERS_MAX];
    pthread_mutex_t close_lock;
    pthread_cond_t close_cond;
    size_t shards_open; /* shards not yet fully closed */
    bool closed;
};

static void fl_rpc_conn_close(fl_rpc_conn_t *c);
static void fl_rpc_conn_flush(fl_rpc_conn_t *c);
static void fl_rpc_update_reading(fl_rpc_conn_t *c);
static void fl_rpc_shard_maybe_closed(fl_rpc_shard_t *sh);

/* ---- output with spliced buffers ---- */

void fl_rpc_out_init(fl_rpc_out_t *o) {
    memset(o, 0, sizeof(*o));
    fl_buf_init(&o->buf);
}

void fl_rpc_out_reset(fl_rpc_out_t *o) {
    for (size_t i = 0; i < o->ext_count; i++) fl_buf_free(&o->ext[i].data);
    o->ext_count = 0;
    o->ext_bytes = 0;
    fl_buf_reset(&o->buf);
}

void fl_rpc_out_free(fl_rpc_out_t *o) {
    fl_rpc_out_reset(o);
    fl_free(o->ext);
    fl_buf_free(&o->buf);
    memset(o, 0, sizeof(*o));
}

size_t fl_rpc_out_len(const fl_rpc_out_t *o) { return o->buf.len + o->ext_bytes; }

void fl_rpc_out_attach(fl_rpc_out_t *o, fl_buf_t *data) {
    if (data->len == 0) {
        fl_buf_free(data);
        return;
    }
    if (o->ext_count == o->ext_cap) {
        o->ext_cap = o->ext_cap ? o->ext_cap * 2 : 8;
        o->ext = fl_realloc(o->ext, o->ext_cap * sizeof(*o->ext));
    }
    o->ext[o->ext_count].at = o->buf.len;
    o->ext[o->ext_count].data = *data;
    o->ext_count++;
    o->ext_bytes += data->len;
    fl_buf_init(data);
}

void fl_rpc_out_move(fl_rpc_out_t *dst, fl_rpc_out_t *src) {
    size_t base = dst->buf.len;
    for (size_t i = 0; i < src->ext_count; i++) {
        if (dst->ext_count == dst->ext_cap) {
            dst->ext_cap = dst->ext_cap ? dst->ext_cap * 2 : 8;
            dst->ext = fl_realloc(dst->ext, dst->ext_cap * sizeof(*dst->ext));
        }
        dst->ext[dst->ext_count] = src->ext[i];
        dst->ext[dst->ext_count].at += base;
        dst->ext_count++;
        dst->ext_bytes += src->ext[i].data.len;
    }
    src->ext_count = 0;
    src->ext_bytes = 0;
    fl_buf_append(&dst->buf, src->buf.data, src->buf.len);
    fl_buf_reset(&src->buf);
}

void fl_rpc_out_truncate(fl_rpc_out_t *o, size_t len, size_t ext_count) {
    while (o->ext_count > ext_count) {
        fl_rpc_ext_t *e = &o->ext[--o->ext_count];
        o->ext_bytes -= e->data.len;
        fl_buf_free(&e->data);
    }
    if (len < o->buf.len) o->buf.len = len;
}

void fl_rpc_out_flatten(fl_rpc_out_t *o) {
    if (o->ext_count == 0) return;
    fl_buf_t flat;
    fl_buf_init(&flat);
    size_t pos = 0;
    for (size_t i = 0; i < o->ext_count; i++) {
        fl_buf_append(&flat, o->buf.data + pos, o->ext[i].at - pos);
        fl_buf_append(&flat, o->ext[i].data.data, o->ext[i].data.len);
        pos = o->ext[i].at;
        fl_buf_free(&o->ext[i].data);
    }
    fl_buf_append(&flat, o->buf.data + pos, o->buf.len - pos);
    o->ext_count = 0;
    o->ext_bytes = 0;
    fl_buf_free(&o->buf);
    o->buf = flat;
}

static void fl_rpc_conn_free(fl_rpc_conn_t *c) {
    if (c->release) c->release(c->local_arg);
    if (c->attachment_free) c->attachment_free(c->attachment);
    fl_buf_free(&c->in);
    fl_rpc_out_free(&c->out);
    fl_rpc_out_free(&c->writing);
    if (c->tls) {
        SSL_free(c->tls->ssl);
        fl_free(c->tls);
    }
    fl_free(c);
}

void fl_rpc_conn_ref(fl_rpc_conn_t *c) { atomic_fetch_add(&c->refs, 1); }

void fl_rpc_conn_unref(fl_rpc_conn_t *c) {
    if (atomic_fetch_sub(&c->refs, 1) == 1) fl_rpc_conn_free(c);
}

bool fl_rpc_conn_is_open(const fl_rpc_conn_t *c) {
    return !atomic_load(&((fl_rpc_conn_t *)c)->closing);
}

fl_rpc_loop_t *fl_rpc_conn_loop(const fl_rpc_conn_t *c) { return c->shard->loop; }

void fl_rpc_conn_set_flags(fl_rpc_conn_t *c, uint32_t flags) { atomic_store(&c->flags, flags); }

uint32_t fl_rpc_conn_flags(const fl_rpc_conn_t *c) {
    return atomic_load(&((fl_rpc_conn_t *)c)->flags);
}

static void fl_rpc_on_conn_closed(uv_handle_t *h) {
    fl_rpc_conn_t *c = h->data;
    fl_rpc_shard_t *sh = c->shard;
    sh->pending_closes--;
    fl_rpc_conn_unref(c); /* the handle's reference */
    fl_rpc_shard_maybe_closed(sh);
}

/* On the connection's loop. */
static void fl_rpc_conn_send_here(fl_rpc_conn_t *c, const uint8_t *frames, size_t len) {
    if (atomic_load(&c->closing)) return;
    fl_buf_append(&c->out.buf, frames, len);
    c->last_active_ms = fl_time_mono_ms();
    fl_rpc_conn_flush(c);
    fl_rpc_update_reading(c);
}

typedef struct fl_rpc_send_task {
    fl_rpc_conn_t *conn;
    size_t len;
    uint8_t frames[];
} fl_rpc_send_task_t;

static void fl_rpc_send_task_run(void *arg) {
    fl_rpc_send_task_t *t = arg;
    /* after the loop stopped this runs on the caller's thread: only drop */
    if (fl_rpc_loop_on_thread(t->conn->shard->loop)) fl_rpc_conn_send_here(t->conn, t->frames, t->len);
    fl_rpc_conn_unref(t->conn);
    fl_free(t);
}

void fl_rpc_conn_send(fl_rpc_conn_t *c, const uint8_t *frames, size_t len) {
    if (atomic_load(&c->closing)) return;
    if (fl_rpc_loop_on_thread(c->shard->loop)) {
        fl_rpc_conn_send_here(c, frames, len);
        return;
    }
    fl_rpc_send_task_t *t = fl_malloc(sizeof(*t) + len);
    t->conn = c;
    t->len = len;
    memcpy(t->frames, frames, len);
    fl_rpc_conn_ref(c);
    fl_rpc_loop_post(c->shard->loop, fl_rpc_send_task_run, t);
}

void fl_rpc_conn_send_out(fl_rpc_conn_t *c, fl_rpc_out_t *o) {
    if (!atomic_load(&c->closing) && fl_rpc_loop_on_thread(c->shard->loop)) {
        fl_rpc_out_move(&c->out, o);
        c->last_active_ms = fl_time_mono_ms();
        fl_rpc_conn_flush(c);
        fl_rpc_update_reading(c);
        return;
    }
    fl_rpc_out_flatten(o);
    fl_rpc_conn_send(c, o->buf.data, o->buf.len);
    fl_rpc_out_reset(o);
}

static void fl_rpc_conn_close(fl_rpc_conn_t *c) {
    if (atomic_exchange(&c->closing, true)) return;
    fl_rpc_shard_t *sh = c->shard;
    if (c->prev) c->prev->next = c->next;
    else sh->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    atomic_fetch_sub(&sh->conn_count, 1);
    if (c->local) {
        c->deliver(c->local_arg, NULL, 0);
        fl_rpc_conn_unref(c); /* the open connection's reference */
        return;
    }
    sh->pending_closes++;
    uv_close((uv_handle_t *)&c->tcp, fl_rpc_on_conn_closed);
}

/* Reads land in c->in. Inside a large frame the read asks for exactly the
 * rest of it (up to FL_RPC_READ_BIG_MAX): fewer syscalls, and the read ends
 * on the frame boundary, so nothing is left to move to the front after the
 * frame is handled. Small frames are read FL_RPC_READ_CHUNK at a time. */
#define FL_RPC_READ_BIG_MAX (8u * 1024 * 1024)
static void fl_rpc_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    fl_rpc_conn_t *c = h->data;
    if (c->tls) {
        buf->base = (char *)c->tls->raw;
        buf->len = sizeof(c->tls->raw);
        return;
    }
    size_t want = FL_RPC_READ_CHUNK;
    size_t frame_max = c->frame_max;
    if (c->in.len >= FL_FRAME_LEN_BYTES) {
        uint32_t n = fl_get_be32(c->in.data);
        size_t total = (size_t)n + FL_FRAME_LEN_BYTES;
        /* an oversized length is refused by fl_frame_peek, not read */
        if (n <= frame_max && total > c->in.len) {
            size_t rest = total - c->in.len;
            if (rest > want) want = rest < FL_RPC_READ_BIG_MAX ? rest : FL_RPC_READ_BIG_MAX;
        }
    }
    uint8_t *p = fl_buf_try_reserve(&c->in, want);
    buf->base = (char *)p;
    buf->len = p ? (unsigned)want : 0;
}

static void fl_rpc_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

static void fl_rpc_update_reading(fl_rpc_conn_t *c) {
    if (c->local || atomic_load(&c->closing)) return;
    bool want = fl_rpc_out_len(&c->out) + c->in_flight <= c->shard->srv->limits.out_pending_max &&
                !c->hold_until_ms && !c->close_after_write;
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
    fl_rpc_out_reset(&c->writing);
    if (atomic_load(&c->closing)) return;
    if (status < 0) {
        FL_DEBUG("rpc: write failed: %s", uv_strerror(status));
        fl_rpc_conn_close(c);
        return;
    }
    fl_rpc_conn_flush(c);
    fl_rpc_update_reading(c);
}

static void fl_rpc_tls_flush(fl_rpc_conn_t *c);

static void fl_rpc_conn_flush(fl_rpc_conn_t *c) {
    if (c->tls) {
        fl_rpc_tls_flush(c);
        return;
    }
    if (atomic_load(&c->closing) || c->in_flight) return;
    if (c->hold_until_ms) return; /* fl_rpc_on_hold_timer writes it */
    if (fl_rpc_out_len(&c->out) == 0) {
        if (c->close_after_write) fl_rpc_conn_close(c);
        return;
    }
    if (c->local) {
        fl_rpc_out_flatten(&c->out);
        c->deliver(c->local_arg, c->out.buf.data, c->out.buf.len);
        fl_rpc_out_reset(&c->out);
        return;
    }
    /* swap: the write owns `writing`, new responses go to `out` */
    fl_rpc_out_t tmp = c->writing;
    c->writing = c->out;
    c->out = tmp;
    fl_rpc_out_reset(&c->out);
    fl_rpc_out_t *w = &c->writing;
    if (2 * w->ext_count + 1 > FL_RPC_IOV_MAX) fl_rpc_out_flatten(w);
    /* header pieces from buf, record data from the spliced buffers: one
     * writev, no copy of the data */
    unsigned n = 0;
    size_t pos = 0;
    for (size_t i = 0; i < w->ext_count; i++) {
        if (w->ext[i].at > pos)
            c->iov[n++] = uv_buf_init((char *)w->buf.data + pos, (unsigned)(w->ext[i].at - pos));
        c->iov[n++] = uv_buf_init((char *)w->ext[i].data.data, (unsigned)w->ext[i].data.len);
        pos = w->ext[i].at;
    }
    if (w->buf.len > pos)
        c->iov[n++] = uv_buf_init((char *)w->buf.data + pos, (unsigned)(w->buf.len - pos));
    c->in_flight = fl_rpc_out_len(w);
    c->write_req.data = c;
    int rc = uv_write(&c->write_req, (uv_stream_t *)&c->tcp, c->iov, n, fl_rpc_on_write);
    if (rc < 0) {
        c->in_flight = 0;
        fl_rpc_conn_close(c);
    }
}

/* Parses and handles every whole frame in c->in. */
static void fl_rpc_process(fl_rpc_conn_t *c) {
    size_t pos = 0;
    fl_rpc_server_t *srv = c->shard->srv;
    while (!atomic_load(&c->closing)) {
        size_t frame_bytes = 0;
        enum fl_frame_status st =
            fl_frame_peek(c->in.data + pos, c->in.len - pos, c->frame_max, &frame_bytes);
        if (st == FL_FRAME_NEED_MORE) break;
        if (st != FL_FRAME_OK) {
            FL_WARN("rpc: closing connection: frame length over %zu bytes%s", c->frame_max,
                    c->gated ? " before authentication" : "");
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
        int hrc = srv->handler(c->listener->ctx, c, &req, &c->out);
        if (hrc == FL_RPC_CLOSE_AFTER_REPLY) {
            /* the answer goes out, nothing after it is read */
            c->close_after_write = true;
            pos = c->in.len;
            break;
        }
        if (hrc != 0) {
            fl_rpc_conn_close(c);
            return;
        }
        pos += frame_bytes;
        /* an answer held back (fl_rpc_conn_hold): what follows waits */
        if (c->hold_until_ms) break;
    }
    fl_buf_consume(&c->in, pos);
}

static int fl_rpc_tls_on_read(fl_rpc_conn_t *c, size_t nread);

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
    if (c->tls) {
        if (fl_rpc_tls_on_read(c, (size_t)nread)) return;
    } else {
        c->in.len += (size_t)nread;
    }
    c->last_active_ms = fl_time_mono_ms();
    fl_rpc_process(c);
    if (atomic_load(&c->closing)) return;
    fl_rpc_conn_flush(c);
    fl_rpc_update_reading(c);
}

/* Registers an accepted (or opened) handle with its shard. */
static void fl_rpc_shard_adopt(fl_rpc_shard_t *sh, fl_rpc_conn_t *c) {
    uv_tcp_nodelay(&c->tcp, 1);
    struct sockaddr_storage peer;
    int plen = sizeof(peer);
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&peer, &plen) == 0) {
        if (peer.ss_family == AF_INET6)
            uv_ip6_name((struct sockaddr_in6 *)&peer, c->peer_ip, sizeof(c->peer_ip));
        else
            uv_ip4_name((struct sockaddr_in *)&peer, c->peer_ip, sizeof(c->peer_ip));
    }
    c->next = sh->conns;
    if (sh->conns) sh->conns->prev = c;
    sh->conns = c;
    atomic_fetch_add(&sh->conn_count, 1);
    c->last_active_ms = fl_time_mono_ms();
    if (c->tls && !c->tls->ssl) {
        fl_rpc_conn_close(c); /* no TLS context to serve it with */
        return;
    }
    fl_rpc_update_reading(c);
}

/* ---- TLS connections ---- */

static void fl_rpc_tls_new(fl_rpc_conn_t *c, fl_rpc_listener_t *l) {
    fl_rpc_tls_t *t = fl_calloc(1, sizeof(*t));
    c->tls = t;
    SSL_CTX *ctx = l->tls_ctx_fn(l->tls_arg);
    if (!ctx) return;
    t->ssl = SSL_new(ctx);
    SSL_CTX_free(ctx); /* the SSL holds its own reference */
    if (!t->ssl) return;
    t->rbio = BIO_new(BIO_s_mem());
    t->wbio = BIO_new(BIO_s_mem());
    if (!t->rbio || !t->wbio) {
        BIO_free(t->rbio);
        BIO_free(t->wbio);
        SSL_free(t->ssl);
        t->ssl = NULL;
        return;
    }
    BIO_set_mem_eof_return(t->rbio, -1);
    SSL_set_bio(t->ssl, t->rbio, t->wbio);
    SSL_set_accept_state(t->ssl);
}

/* The verified peer certificate's common name, once the handshake is done. */
static void fl_rpc_tls_peer(fl_rpc_tls_t *t) {
    X509 *peer = SSL_get0_peer_certificate(t->ssl);
    if (!peer || SSL_get_verify_result(t->ssl) != X509_V_OK) return;
    int n = X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, t->cn,
                                      (int)sizeof(t->cn));
    t->has_cn = n > 0 && (size_t)n < sizeof(t->cn) && strlen(t->cn) == (size_t)n;
}

static void fl_rpc_tls_log_error(const char *what) {
    unsigned long e = ERR_get_error();
    char msg[256] = "";
    if (e) ERR_error_string_n(e, msg, sizeof(msg));
    ERR_clear_error();
    FL_INFO("rpc: closing a TLS connection: %s%s%s", what, msg[0] ? ": " : "", msg);
}

/* nread bytes of ciphertext in t->raw: through the SSL object, plaintext
 * appended to c->in. Non-zero when the connection was closed. */
static int fl_rpc_tls_on_read(fl_rpc_conn_t *c, size_t nread) {
    fl_rpc_tls_t *t = c->tls;
    if (BIO_write(t->rbio, t->raw, (int)nread) != (int)nread) {
        fl_rpc_conn_close(c);
        return 1;
    }
    if (!t->handshaken) {
        ERR_clear_error();
        int rc = SSL_do_handshake(t->ssl);
        if (rc != 1) {
            int e = SSL_get_error(t->ssl, rc);
            fl_rpc_tls_flush(c); /* the alert, if any */
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return 0;
            fl_rpc_tls_log_error("handshake failed");
            c->close_after_write = true;
            fl_rpc_tls_flush(c);
            if (!atomic_load(&c->closing) && !c->in_flight) fl_rpc_conn_close(c);
            return 1;
        }
        t->handshaken = true;
        fl_rpc_tls_peer(t);
        if (c->listener->tls_admit) fl_rpc_conn_admit(c);
    }
    for (;;) {
        uint8_t *p = fl_buf_try_reserve(&c->in, FL_RPC_READ_CHUNK);
        if (!p) {
            FL_WARN("rpc: closing connection: no memory for input");
            fl_rpc_conn_close(c);
            return 1;
        }
        ERR_clear_error();
        int r = SSL_read(t->ssl, p, FL_RPC_READ_CHUNK);
        if (r > 0) {
            c->in.len += (size_t)r;
            continue;
        }
        int e = SSL_get_error(t->ssl, r);
        if (e == SSL_ERROR_WANT_READ) break;
        if (e != SSL_ERROR_ZERO_RETURN) fl_rpc_tls_log_error("read failed");
        fl_rpc_tls_flush(c);
        fl_rpc_conn_close(c);
        return 1;
    }
    return 0;
}

/* Encrypts what the handlers answered (flattened: the zero-copy writev is
 * plaintext's) and writes the ciphertext the SSL object has for the peer
 * (handshake messages, alerts, records) with one uv_write. */
static void fl_rpc_tls_flush(fl_rpc_conn_t *c) {
    fl_rpc_tls_t *t = c->tls;
    if (atomic_load(&c->closing) || !t->ssl) return;
    if (!c->hold_until_ms && fl_rpc_out_len(&c->out) && t->handshaken) {
        fl_rpc_out_flatten(&c->out);
        size_t pos = 0;
        while (pos < c->out.buf.len) {
            size_t n = c->out.buf.len - pos;
            if (n > (1u << 24)) n = 1u << 24;
            ERR_clear_error();
            int w = SSL_write(t->ssl, c->out.buf.data + pos, (int)n);
            if (w <= 0) {
                fl_rpc_tls_log_error("write failed");
                fl_rpc_conn_close(c);
                return;
            }
            pos += (size_t)w;
        }
        fl_rpc_out_reset(&c->out);
    }
    if (c->in_flight) return;
    size_t pending = BIO_ctrl_pending(t->wbio);
    if (pending == 0) {
        if (c->close_after_write && fl_rpc_out_len(&c->out) == 0) fl_rpc_conn_close(c);
        return;
    }
    fl_rpc_out_reset(&c->writing);
    uint8_t *p = fl_buf_try_reserve(&c->writing.buf, pending);
    if (!p) {
        fl_rpc_conn_close(c);
        return;
    }
    int got = BIO_read(t->wbio, p, (int)pending);
    if (got <= 0) {
        fl_rpc_conn_close(c);
        return;
    }
    c->writing.buf.len = (size_t)got;
    c->iov[0] = uv_buf_init((char *)c->writing.buf.data, (unsigned)got);
    c->in_flight = (size_t)got;
    c->write_req.data = c;
    if (uv_write(&c->write_req, (uv_stream_t *)&c->tcp, c->iov, 1, fl_rpc_on_write) < 0) {
        c->in_flight = 0;
        fl_rpc_conn_close(c);
    }
}

int fl_rpc_server_tls(fl_rpc_server_t *srv, void *listener_ctx, fl_rpc_tls_ctx_fn ctx_fn, void *arg,
                      bool admit_on_handshake) {
    int n = 0;
    for (size_t i = 0; i < srv->listener_count; i++) {
        fl_rpc_listener_t *l = srv->listeners[i];
        if (l->ctx != listener_ctx) continue;
        l->tls_ctx_fn = ctx_fn;
        l->tls_arg = arg;
        l->tls_admit = admit_on_handshake;
        n++;
    }
    return n;
}

bool fl_rpc_conn_tls(const fl_rpc_conn_t *c) { return c->tls != NULL; }

const char *fl_rpc_conn_tls_peer_cn(const fl_rpc_conn_t *c) {
    return c->tls && c->tls->has_cn ? c->tls->cn : NULL;
}

static fl_rpc_conn_t *fl_rpc_conn_new(fl_rpc_shard_t *sh, fl_rpc_listener_t *l) {
    fl_rpc_conn_t *c = fl_calloc(1, sizeof(*c));
    fl_rpc_out_init(&c->out);
    fl_rpc_out_init(&c->writing);
    c->shard = sh;
    c->listener = l;
    c->frame_max = sh->srv->limits.frame_max;
    if (l->gated) {
        c->gated = true;
        if (l->gate.frame_max < c->frame_max) c->frame_max = l->gate.frame_max;
        if (l->gate.deadline_ms > 0) c->deadline_ms = fl_time_mono_ms() + l->gate.deadline_ms;
    }
    if (l->tls_ctx_fn) fl_rpc_tls_new(c, l);
    atomic_init(&c->refs, 1);
    uv_tcp_init(fl_rpc_loop_uv(sh->loop), &c->tcp);
    c->tcp.data = c;
    return c;
}

typedef struct fl_rpc_handoff {
    fl_rpc_shard_t *shard;
    fl_rpc_listener_t *listener;
    uv_os_sock_t fd;
} fl_rpc_handoff_t;

static void fl_rpc_handoff_run(void *arg) {
    fl_rpc_handoff_t *h = arg;
    fl_rpc_shard_t *sh = h->shard;
    if (!fl_rpc_loop_on_thread(sh->loop) || sh->closing) {
        close(h->fd);
        fl_free(h);
        return;
    }
    fl_rpc_conn_t *c = fl_rpc_conn_new(sh, h->listener);
    if (uv_tcp_open(&c->tcp, h->fd) != 0) {
        close(h->fd);
        atomic_store(&c->closing, true);
        sh->pending_closes++;
        uv_close((uv_handle_t *)&c->tcp, fl_rpc_on_conn_closed);
    } else {
        fl_rpc_shard_adopt(sh, c);
    }
    fl_free(h);
}

static void fl_rpc_on_temp_closed(uv_handle_t *h) { fl_free(h); }

static void fl_rpc_on_connection(uv_stream_t *server, int status) {
    fl_rpc_listener_t *l = server->data;
    fl_rpc_server_t *srv = l->srv;
    fl_rpc_shard_t *home = &srv->shards[0];
    if (status < 0 || home->closing) return;
    size_t pick = atomic_fetch_add(&srv->next_shard, 1) % srv->shard_count;
    if (pick == 0) {
        fl_rpc_conn_t *c = fl_rpc_conn_new(home, l);
        if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
            atomic_store(&c->closing, true);
            home->pending_closes++;
            uv_close((uv_handle_t *)&c->tcp, fl_rpc_on_conn_closed);
            return;
        }
        fl_rpc_shard_adopt(home, c);
        return;
    }
    /* accept here, hand the socket to the other loop */
    uv_tcp_t *tmp = fl_malloc(sizeof(*tmp));
    uv_tcp_init(fl_rpc_loop_uv(home->loop), tmp);
    if (uv_accept(server, (uv_stream_t *)tmp) != 0) {
        uv_close((uv_handle_t *)tmp, fl_rpc_on_temp_closed);
        return;
    }
    uv_os_fd_t fd;
    int dup_fd = -1;
    if (uv_fileno((uv_handle_t *)tmp, &fd) == 0) dup_fd = dup(fd);
    uv_close((uv_handle_t *)tmp, fl_rpc_on_temp_closed);
    if (dup_fd < 0) return;
    fl_rpc_handoff_t *h = fl_malloc(sizeof(*h));
    h->shard = &srv->shards[pick];
    h->listener = l;
    h->fd = dup_fd;
    fl_rpc_loop_post(h->shard->loop, fl_rpc_handoff_run, h);
}

static void fl_rpc_on_idle_scan(uv_timer_t *t) {
    fl_rpc_shard_t *sh = t->data;
    int64_t now = fl_time_mono_ms();
    for (fl_rpc_conn_t *c = sh->conns, *next; c; c = next) {
        next = c->next;
        if (c->local) continue; /* a role's channel to another, not a client */
        if (c->gated && c->deadline_ms && now >= c->deadline_ms) {
            FL_INFO("rpc: closing a connection that did not authenticate in time");
            fl_rpc_conn_close(c);
        } else if (now - c->last_active_ms > sh->srv->limits.idle_timeout_ms &&
                   c->in_flight == 0) {
            FL_DEBUG("rpc: closing idle connection");
            fl_rpc_conn_close(c);
        }
    }
}

static void fl_rpc_shard_start(void *arg) {
    fl_rpc_shard_t *sh = arg;
    if (sh->closing || sh->timer_started) return;
    uv_timer_init(fl_rpc_loop_uv(sh->loop), &sh->idle_timer);
    sh->idle_timer.data = sh;
    uv_timer_start(&sh->idle_timer, fl_rpc_on_idle_scan, FL_RPC_IDLE_SCAN_MS, FL_RPC_IDLE_SCAN_MS);
    uv_unref((uv_handle_t *)&sh->idle_timer);
    uv_timer_init(fl_rpc_loop_uv(sh->loop), &sh->hold_timer);
    sh->hold_timer.data = sh;
    uv_unref((uv_handle_t *)&sh->hold_timer);
    sh->timer_started = true;
}

fl_rpc_server_t *fl_rpc_server_new(fl_rpc_loop_t *const *loops, size_t loop_count,
                                   const fl_rpc_limits_t *limits, fl_rpc_handler_fn handler) {
    fl_rpc_server_t *srv = fl_calloc(1, sizeof(*srv));
    srv->limits = *limits;
    srv->handler = handler;
    if (loop_count > FL_RPC_LOOPS_MAX) loop_count = FL_RPC_LOOPS_MAX;
    srv->shard_count = loop_count;
    for (size_t i = 0; i < loop_count; i++) {
        srv->shards[i].srv = srv;
        srv->shards[i].loop = loops[i];
        fl_rpc_loop_post(loops[i], fl_rpc_shard_start, &srv->shards[i]);
    }
    srv->shards_open = loop_count;
    pthread_mutex_init(&srv->close_lock, NULL);
    pthread_cond_init(&srv->close_cond, NULL);
    return srv;
}

static int fl_rpc_listener_add(fl_rpc_server_t *srv, const char *host, int port,
                               void *listener_ctx, bool accept, int *bound_port,
                               fl_error_t *err) {
    if (srv->listener_count == FL_RPC_LISTENERS_MAX)
        return fl_err_set(err, FLUSS_ERR__STATE, "too many listeners");
    struct sockaddr_storage addr;
    int rc = uv_ip4_addr(host, port, (struct sockaddr_in *)&addr);
    if (rc) rc = uv_ip6_addr(host, port, (struct sockaddr_in6 *)&addr);
    if (rc) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "bad listen address '%s'", host);
    fl_rpc_listener_t *l = fl_calloc(1, sizeof(*l));
    l->srv = srv;
    l->ctx = listener_ctx;
    uv_tcp_init(fl_rpc_loop_uv(srv->shards[0].loop), &l->tcp);
    l->tcp.data = l;
    l->open = true;
    srv->listeners[srv->listener_count++] = l;
    rc = uv_tcp_bind(&l->tcp, (const struct sockaddr *)&addr, 0);
    if (rc)
        return fl_err_set(err, FLUSS_ERR__IO, "listen on %s:%d: %s", host, port, uv_strerror(rc));
    struct sockaddr_storage bound;
    int len = sizeof(bound);
    memset(&bound, 0, sizeof(bound));
    uv_tcp_getsockname(&l->tcp, (struct sockaddr *)&bound, &len);
    int got = bound.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
                                          : ntohs(((struct sockaddr_in *)&bound)->sin_port);
    /* libuv keeps a bind's EADDRINUSE for uv_listen: the socket is left
     * unbound, which shows here */
    if (got == 0 || (port != 0 && got != port))
        return fl_err_set(err, FLUSS_ERR__IO, "listen on %s:%d: %s", host, port,
                          uv_strerror(UV_EADDRINUSE));
    if (accept) {
        rc = uv_listen((uv_stream_t *)&l->tcp, 1024, fl_rpc_on_connection);
        l->accepting = rc == 0;
    } else {
        /* listen(2) without the loop watching: the port is ours alone and
         * connections wait in the backlog until fl_rpc_server_accept */
        uv_os_fd_t fd;
        rc = uv_fileno((uv_handle_t *)&l->tcp, &fd);
        if (!rc && listen(fd, 1024) != 0) rc = uv_translate_sys_error(errno);
    }
    if (rc)
        return fl_err_set(err, FLUSS_ERR__IO, "listen on %s:%d: %s", host, port, uv_strerror(rc));
    if (bound_port) *bound_port = got;
    return 0;
}

int fl_rpc_server_listen(fl_rpc_server_t *srv, const char *host, int port, void *listener_ctx,
                         int *bound_port, fl_error_t *err) {
    return fl_rpc_listener_add(srv, host, port, listener_ctx, true, bound_port, err);
}

int fl_rpc_server_bind(fl_rpc_server_t *srv, const char *host, int port, void *listener_ctx,
                       int *bound_port, fl_error_t *err) {
    return fl_rpc_listener_add(srv, host, port, listener_ctx, false, bound_port, err);
}

typedef struct fl_rpc_accept_task {
    fl_rpc_server_t *srv;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    int rc;
} fl_rpc_accept_task_t;

static void fl_rpc_accept_run(void *arg) {
    fl_rpc_accept_task_t *t = arg;
    fl_rpc_server_t *srv = t->srv;
    int rc = srv->shards[0].closing ? UV_ECANCELED : 0;
    for (size_t i = 0; i < srv->listener_count && !rc; i++) {
        fl_rpc_listener_t *l = srv->listeners[i];
        if (!l->open || l->accepting) continue;
        rc = uv_listen((uv_stream_t *)&l->tcp, 1024, fl_rpc_on_connection);
        l->accepting = rc == 0;
    }
    pthread_mutex_lock(&t->mu);
    t->rc = rc;
    t->done = true;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

int fl_rpc_server_accept(fl_rpc_server_t *srv, fl_error_t *err) {
    fl_rpc_accept_task_t t = {.srv = srv};
    pthread_mutex_init(&t.mu, NULL);
    pthread_cond_init(&t.cv, NULL);
    fl_rpc_loop_post(srv->shards[0].loop, fl_rpc_accept_run, &t);
    pthread_mutex_lock(&t.mu);
    while (!t.done) pthread_cond_wait(&t.cv, &t.mu);
    pthread_mutex_unlock(&t.mu);
    pthread_mutex_destroy(&t.mu);
    pthread_cond_destroy(&t.cv);
    if (t.rc) return fl_err_set(err, FLUSS_ERR__IO, "start accepting: %s", uv_strerror(t.rc));
    return 0;
}

static void fl_rpc_shard_maybe_closed(fl_rpc_shard_t *sh) {
    if (!sh->closing || sh->pending_closes > 0) return;
    fl_rpc_server_t *srv = sh->srv;
    pthread_mutex_lock(&srv->close_lock);
    sh->pending_closes = SIZE_MAX / 2; /* report once */
    srv->shards_open--;
    pthread_cond_broadcast(&srv->close_cond);
    pthread_mutex_unlock(&srv->close_lock);
}

static void fl_rpc_on_aux_closed(uv_handle_t *h) {
    fl_rpc_shard_t *sh = h->data;
    sh->pending_closes--;
    fl_rpc_shard_maybe_closed(sh);
}

static void fl_rpc_shard_close(void *arg) {
    fl_rpc_shard_t *sh = arg;
    if (sh->closing) return;
    sh->closing = true;
    fl_rpc_server_t *srv = sh->srv;
    sh->pending_closes++; /* held until everything below is started */
    if (sh == &srv->shards[0]) {
        for (size_t i = 0; i < srv->listener_count; i++) {
            fl_rpc_listener_t *l = srv->listeners[i];
            if (!l->open) continue;
            l->open = false;
            sh->pending_closes++;
            l->tcp.data = sh;
            uv_close((uv_handle_t *)&l->tcp, fl_rpc_on_aux_closed);
        }
    }
    if (sh->timer_started) {
        sh->pending_closes++;
        sh->idle_timer.data = sh;
        uv_close((uv_handle_t *)&sh->idle_timer, fl_rpc_on_aux_closed);
        sh->pending_closes++;
        sh->hold_timer.data = sh;
        uv_close((uv_handle_t *)&sh->hold_timer, fl_rpc_on_aux_closed);
    }
    while (sh->conns) fl_rpc_conn_close(sh->conns);
    sh->pending_closes--;
    fl_rpc_shard_maybe_closed(sh);
}

void fl_rpc_server_close(fl_rpc_server_t *srv) {
    pthread_mutex_lock(&srv->close_lock);
    if (srv->closed) {
        pthread_mutex_unlock(&srv->close_lock);
        return;
    }
    srv->closed = true;
    pthread_mutex_unlock(&srv->close_lock);
    for (size_t i = 0; i < srv->shard_count; i++)
        fl_rpc_loop_post(srv->shards[i].loop, fl_rpc_shard_close, &srv->shards[i]);
    pthread_mutex_lock(&srv->close_lock);
    while (srv->shards_open > 0) pthread_cond_wait(&srv->close_cond, &srv->close_lock);
    pthread_mutex_unlock(&srv->close_lock);
}

void fl_rpc_server_destroy(fl_rpc_server_t *srv) {
    if (!srv) return;
    for (size_t i = 0; i < srv->listener_count; i++) fl_free(srv->listeners[i]);
    pthread_cond_destroy(&srv->close_cond);
    pthread_mutex_destroy(&srv->close_lock);
    fl_free(srv);
}

/* ---- local connections ---- */

static void fl_rpc_local_adopt(void *arg) {
    fl_rpc_conn_t *c = arg;
    fl_rpc_shard_t *sh = c->shard;
    if (!fl_rpc_loop_on_thread(sh->loop) || sh->closing) {
        atomic_store(&c->closing, true);
        c->deliver(c->local_arg, NULL, 0);
        fl_rpc_conn_unref(c); /* the open connection's reference */
        return;
    }
    c->next = sh->conns;
    if (sh->conns) sh->conns->prev = c;
    sh->conns = c;
    atomic_fetch_add(&sh->conn_count, 1);
    c->last_active_ms = fl_time_mono_ms();
}

fl_rpc_conn_t *fl_rpc_local_open(fl_rpc_server_t *srv, void *listener_ctx,
                                 fl_rpc_local_deliver_fn deliver, fl_rpc_local_release_fn release,
                                 void *arg) {
    size_t pick = atomic_fetch_add(&srv->next_shard, 1) % srv->shard_count;
    fl_rpc_conn_t *c = fl_calloc(1, sizeof(*c));
    fl_rpc_out_init(&c->out);
    fl_rpc_out_init(&c->writing);
    c->shard = &srv->shards[pick];
    c->local = true;
    c->deliver = deliver;
    c->release = release;
    c->local_arg = arg;
    c->local_listener.srv = srv;
    c->local_listener.ctx = listener_ctx;
    c->listener = &c->local_listener;
    c->frame_max = srv->limits.frame_max;
    atomic_init(&c->refs, 2); /* open + the caller's */
    fl_rpc_loop_post(c->shard->loop, fl_rpc_local_adopt, c);
    return c;
}

static void fl_rpc_local_write_run(void *arg) {
    fl_rpc_send_task_t *t = arg;
    fl_rpc_conn_t *c = t->conn;
    if (fl_rpc_loop_on_thread(c->shard->loop) && !atomic_load(&c->closing)) {
        fl_buf_append(&c->in, t->frames, t->len);
        c->last_active_ms = fl_time_mono_ms();
        fl_rpc_process(c);
        fl_rpc_conn_flush(c);
    }
    fl_rpc_conn_unref(c);
    fl_free(t);
}

void fl_rpc_local_write(fl_rpc_conn_t *c, const uint8_t *frames, size_t len) {
    fl_rpc_send_task_t *t = fl_malloc(sizeof(*t) + len);
    t->conn = c;
    t->len = len;
    if (len) memcpy(t->frames, frames, len);
    fl_rpc_conn_ref(c);
    fl_rpc_loop_post(c->shard->loop, fl_rpc_local_write_run, t);
}

static void fl_rpc_local_close_run(void *arg) {
    fl_rpc_conn_t *c = arg;
    if (fl_rpc_loop_on_thread(c->shard->loop)) fl_rpc_conn_close(c);
    fl_rpc_conn_unref(c); /* the caller's reference */
}

void fl_rpc_local_close(fl_rpc_conn_t *c) { fl_rpc_loop_post(c->shard->loop, fl_rpc_local_close_run, c); }

size_t fl_rpc_server_connection_count(const fl_rpc_server_t *srv) {
    size_t n = 0;
    for (size_t i = 0; i < srv->shard_count; i++)
        n += atomic_load(&((fl_rpc_server_t *)srv)->shards[i].conn_count);
    return n;
}

/* ---- the gate before authentication, held answers ---- */

int fl_rpc_server_gate(fl_rpc_server_t *srv, void *listener_ctx, const fl_rpc_gate_t *gate) {
    int n = 0;
    for (size_t i = 0; i < srv->listener_count; i++) {
        fl_rpc_listener_t *l = srv->listeners[i];
        if (l->ctx != listener_ctx) continue;
        l->gate = *gate;
        l->gated = true;
        n++;
    }
    return n;
}

void fl_rpc_conn_admit(fl_rpc_conn_t *c) {
    c->gated = false;
    c->deadline_ms = 0;
    c->frame_max = c->shard->srv->limits.frame_max;
}

bool fl_rpc_conn_gated(const fl_rpc_conn_t *c) { return c->gated; }

static void fl_rpc_on_hold_timer(uv_timer_t *t) {
    fl_rpc_shard_t *sh = t->data;
    sh->hold_due_ms = 0;
    int64_t now = fl_time_mono_ms(), next = 0;
    for (fl_rpc_conn_t *c = sh->conns, *nx; c; c = nx) {
        nx = c->next;
        if (!c->hold_until_ms) continue;
        if (c->hold_until_ms > now) {
            if (!next || c->hold_until_ms < next) next = c->hold_until_ms;
            continue;
        }
        c->hold_until_ms = 0;
        fl_rpc_conn_ref(c);
        fl_rpc_conn_flush(c);
        fl_rpc_update_reading(c);
        /* requests that came in behind the held answer */
        if (!atomic_load(&c->closing) && c->in.len && !c->close_after_write) {
            fl_rpc_process(c);
            if (!atomic_load(&c->closing)) {
                fl_rpc_conn_flush(c);
                fl_rpc_update_reading(c);
            }
        }
        nx = c->next; /* c may have left the list; its successor did not change */
        fl_rpc_conn_unref(c);
    }
    if (next) {
        sh->hold_due_ms = next;
        uv_timer_start(&sh->hold_timer, fl_rpc_on_hold_timer, (uint64_t)(next - now), 0);
    }
}

void fl_rpc_conn_hold(fl_rpc_conn_t *c, int64_t delay_ms) {
    fl_rpc_shard_t *sh = c->shard;
    if (c->local || delay_ms <= 0 || sh->closing || !sh->timer_started) return;
    int64_t now = fl_time_mono_ms();
    c->hold_until_ms = now + delay_ms;
    if (!sh->hold_due_ms || c->hold_until_ms < sh->hold_due_ms) {
        sh->hold_due_ms = c->hold_until_ms;
        uv_timer_start(&sh->hold_timer, fl_rpc_on_hold_timer, (uint64_t)delay_ms, 0);
    }
}

void fl_rpc_conn_attach(fl_rpc_conn_t *c, void *data, void (*free_fn)(void *)) {
    if (c->attachment_free) c->attachment_free(c->attachment);
    c->attachment = data;
    c->attachment_free = free_fn;
}

void *fl_rpc_conn_attachment(const fl_rpc_conn_t *c) { return c->attachment; }

const char *fl_rpc_conn_peer_ip(const fl_rpc_conn_t *c) { return c->peer_ip; }
