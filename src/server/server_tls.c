/*
 * server_tls.c — TLS contexts of the server's listeners, reloaded when
 * their files change (server_tls.h).
 */
#include "server_tls.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"

#define FL_TLS_RELOAD_MS_DEFAULT (5 * 1000)

typedef enum fl_tls_client_auth {
    FL_TLS_AUTH_NONE = 0,
    FL_TLS_AUTH_REQUESTED, /* verified if presented */
    FL_TLS_AUTH_REQUIRED,
} fl_tls_client_auth_t;

struct fl_server_tls {
    char listener[64];
    char cert_file[1024], key_file[1024], ca_file[1024];
    fl_tls_client_auth_t client_auth;
    int min_version;
    int64_t reload_ms;
    pthread_mutex_t lock;
    SSL_CTX *ctx;              /* the current context (ours) */
    struct timespec cert_mtime, key_mtime, ca_mtime;
    int64_t next_check_ms;
};

/* security.ssl.listener.name.<listener>.<key>, else security.ssl.<key>. */
static const char *fl_tls_key(const fl_config_t *cfg, const char *listener, const char *key,
                              const char *dflt) {
    char lower[64], full[256];
    size_t i = 0;
    for (; listener[i] && i + 1 < sizeof(lower); i++)
        lower[i] = (char)tolower((unsigned char)listener[i]);
    lower[i] = '\0';
    snprintf(full, sizeof(full), "security.ssl.listener.name.%s.%s", lower, key);
    const char *v = fl_config_string(cfg, full, NULL);
    if (v && *v) return v;
    snprintf(full, sizeof(full), "security.ssl.%s", key);
    return fl_config_string(cfg, full, dflt);
}

static int fl_tls_openssl_err(fl_error_t *err, const char *what, const char *file) {
    unsigned long e = ERR_get_error();
    char msg[256] = "unknown error";
    if (e) ERR_error_string_n(e, msg, sizeof(msg));
    ERR_clear_error();
    return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "%s %s: %s", what, file, msg);
}

static SSL_CTX *fl_tls_ctx_build(const fl_server_tls_t *t, fl_error_t *err) {
    ERR_clear_error();
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) {
        fl_tls_openssl_err(err, "TLS context for listener", t->listener);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, t->min_version);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_NO_TICKET |
                                 SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(ctx, 0);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    if (SSL_CTX_use_certificate_chain_file(ctx, t->cert_file) != 1) {
        fl_tls_openssl_err(err, "security.ssl.keystore.certificate", t->cert_file);
        goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, t->key_file, SSL_FILETYPE_PEM) != 1) {
        fl_tls_openssl_err(err, "security.ssl.keystore.key", t->key_file);
        goto fail;
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
        fl_tls_openssl_err(err, "security.ssl.keystore.key does not match", t->cert_file);
        goto fail;
    }
    if (t->ca_file[0]) {
        if (SSL_CTX_load_verify_locations(ctx, t->ca_file, NULL) != 1) {
            fl_tls_openssl_err(err, "security.ssl.truststore.certificates", t->ca_file);
            goto fail;
        }
        STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(t->ca_file);
        if (names) SSL_CTX_set_client_CA_list(ctx, names);
    }
    int mode = SSL_VERIFY_NONE;
    if (t->client_auth == FL_TLS_AUTH_REQUESTED) mode = SSL_VERIFY_PEER;
    if (t->client_auth == FL_TLS_AUTH_REQUIRED)
        mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    SSL_CTX_set_verify(ctx, mode, NULL);
    return ctx;
fail:
    SSL_CTX_free(ctx);
    return NULL;
}

static void fl_tls_mtime(const char *file, struct timespec *out) {
    struct stat st;
    memset(out, 0, sizeof(*out));
    if (file[0] && stat(file, &st) == 0) *out = st.st_mtim;
}

static bool fl_tls_ts_eq(const struct timespec *a, const struct timespec *b) {
    return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

int fl_server_tls_load(const fl_config_t *cfg, const char *listener, fl_server_tls_t **out,
                       fl_error_t *err) {
    *out = NULL;
    fl_server_tls_t *t = fl_calloc(1, sizeof(*t));
    pthread_mutex_init(&t->lock, NULL);
    snprintf(t->listener, sizeof(t->listener), "%s", listener);
    snprintf(t->cert_file, sizeof(t->cert_file), "%s",
             fl_tls_key(cfg, listener, "keystore.certificate", ""));
    snprintf(t->key_file, sizeof(t->key_file), "%s", fl_tls_key(cfg, listener, "keystore.key", ""));
    snprintf(t->ca_file, sizeof(t->ca_file), "%s",
             fl_tls_key(cfg, listener, "truststore.certificates", ""));
    const char *auth = fl_tls_key(cfg, listener, "client.auth", "none");
    const char *proto = fl_tls_key(cfg, listener, "protocols", "TLSv1.2");
    int rc = 0;
    if (!t->cert_file[0] || !t->key_file[0]) {
        rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                        "listener %s uses TLS but has no certificate: set "
                        "security.ssl.keystore.certificate and security.ssl.keystore.key",
                        listener);
        goto fail;
    }
    if (strcasecmp(auth, "none") == 0) t->client_auth = FL_TLS_AUTH_NONE;
    else if (strcasecmp(auth, "requested") == 0) t->client_auth = FL_TLS_AUTH_REQUESTED;
    else if (strcasecmp(auth, "required") == 0) t->client_auth = FL_TLS_AUTH_REQUIRED;
    else {
        rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                        "security.ssl.client.auth: '%s' is not none, requested or required", auth);
        goto fail;
    }
    if (t->client_auth != FL_TLS_AUTH_NONE && !t->ca_file[0]) {
        rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                        "security.ssl.client.auth %s needs security.ssl.truststore.certificates",
                        auth);
        goto fail;
    }
    /* a list ("TLSv1.2,TLSv1.3") names its lowest first */
    if (strncasecmp(proto, "TLSv1.2", 7) == 0) t->min_version = TLS1_2_VERSION;
    else if (strncasecmp(proto, "TLSv1.3", 7) == 0) t->min_version = TLS1_3_VERSION;
    else {
        rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                        "security.ssl.protocols: '%s' is not TLSv1.2 or TLSv1.3", proto);
        goto fail;
    }
    if ((rc = fl_config_duration_ms(cfg, "security.ssl.reload.interval", FL_TLS_RELOAD_MS_DEFAULT,
                                    &t->reload_ms, err)))
        goto fail;
    fl_tls_mtime(t->cert_file, &t->cert_mtime);
    fl_tls_mtime(t->key_file, &t->key_mtime);
    fl_tls_mtime(t->ca_file, &t->ca_mtime);
    t->ctx = fl_tls_ctx_build(t, err);
    if (!t->ctx) {
        rc = err->code ? err->code : FLUSS_ERR__INVALID_ARG;
        goto fail;
    }
    t->next_check_ms = fl_time_mono_ms() + t->reload_ms;
    FL_INFO("security: listener %s speaks TLS (at least %s, client certificates %s)", listener,
            t->min_version == TLS1_3_VERSION ? "TLSv1.3" : "TLSv1.2", auth);
    *out = t;
    return 0;
fail:
    fl_server_tls_free(t);
    return rc;
}

void fl_server_tls_free(fl_server_tls_t *t) {
    if (!t) return;
    SSL_CTX_free(t->ctx);
    pthread_mutex_destroy(&t->lock);
    fl_free(t);
}

bool fl_server_tls_client_auth(const fl_server_tls_t *t) {
    return t->client_auth != FL_TLS_AUTH_NONE;
}

/* Under t->lock: a new context if a file changed (the old one stays with
 * the connections that hold it); a file that does not load keeps the old. */
static void fl_tls_maybe_reload(fl_server_tls_t *t) {
    int64_t now = fl_time_mono_ms();
    if (now < t->next_check_ms) return;
    t->next_check_ms = now + t->reload_ms;
    struct timespec cm, km, am;
    fl_tls_mtime(t->cert_file, &cm);
    fl_tls_mtime(t->key_file, &km);
    fl_tls_mtime(t->ca_file, &am);
    if (fl_tls_ts_eq(&cm, &t->cert_mtime) && fl_tls_ts_eq(&km, &t->key_mtime) &&
        fl_tls_ts_eq(&am, &t->ca_mtime))
        return;
    fl_error_t err;
    fl_err_clear(&err);
    SSL_CTX *ctx = fl_tls_ctx_build(t, &err);
    if (!ctx) {
        /* a half-written pair: try again at the next check */
        FL_WARN("security: listener %s: TLS files changed but do not load, keeping the old "
                "ones: %s", t->listener, err.msg);
        return;
    }
    t->cert_mtime = cm;
    t->key_mtime = km;
    t->ca_mtime = am;
    SSL_CTX_free(t->ctx);
    t->ctx = ctx;
    FL_INFO("security: listener %s: TLS certificate reloaded", t->listener);
}

struct ssl_ctx_st *fl_server_tls_ctx(void *arg) {
    fl_server_tls_t *t = arg;
    pthread_mutex_lock(&t->lock);
    fl_tls_maybe_reload(t);
    SSL_CTX *ctx = t->ctx;
    if (ctx) SSL_CTX_up_ref(ctx);
    pthread_mutex_unlock(&t->lock);
    return ctx;
}
