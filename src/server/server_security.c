/*
 * server_security.c — listener security from the configuration, SASL
 * sessions and the AUTHENTICATE exchange (server_security.h).
 */
#include "server_security.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common_alloc.h"
#include "common_log.h"
#include "proto_api.h"
#include "server_node.h"
#include "server_scram.h"

#define FL_SASL_AUTH_TIMEOUT_MS_DEFAULT (10 * 1000)
#define FL_SASL_FAILURE_DELAY_MS_DEFAULT 200
#define FL_SASL_PREAUTH_FRAME_DEFAULT (64 * 1024)

/* Trims spaces around [p, p + n) in place of a copy into out[cap]. */
static void fl_sec_trimmed(const char *p, size_t n, char *out, size_t cap) {
    while (n && isspace((unsigned char)*p)) p++, n--;
    while (n && isspace((unsigned char)p[n - 1])) n--;
    if (n >= cap) n = cap - 1;
    memcpy(out, p, n);
    out[n] = '\0';
}

int fl_security_protocol_of(const fl_config_t *cfg, const char *listener, fl_sec_protocol_t *out,
                            fl_error_t *err) {
    *out = FL_SEC_PLAINTEXT;
    const char *map = fl_config_string(cfg, "security.protocol.map", "");
    for (const char *p = map; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char item[256];
        fl_sec_trimmed(p, n, item, sizeof(item));
        p += n + (end ? 1 : 0);
        if (!item[0]) continue;
        char *colon = strchr(item, ':');
        if (!colon)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "security.protocol.map: '%s' is not LISTENER:PROTOCOL", item);
        *colon = '\0';
        char name[64], proto[64];
        fl_sec_trimmed(item, strlen(item), name, sizeof(name));
        fl_sec_trimmed(colon + 1, strlen(colon + 1), proto, sizeof(proto));
        fl_sec_protocol_t pr;
        if (strcasecmp(proto, "PLAINTEXT") == 0) pr = FL_SEC_PLAINTEXT;
        else if (strcasecmp(proto, "SASL") == 0) pr = FL_SEC_SASL;
        else if (strcasecmp(proto, "SSL") == 0) pr = FL_SEC_SSL;
        else if (strcasecmp(proto, "SASL_SSL") == 0) pr = FL_SEC_SASL_SSL;
        else
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "security.protocol.map: no authentication protocol '%s' "
                              "(PLAINTEXT, SASL, SSL, SASL_SSL)", proto);
        if (strcmp(name, listener) == 0) *out = pr;
    }
    return 0;
}

static int fl_sec_mechanisms(const fl_config_t *cfg, fl_listener_security_t *s, fl_error_t *err) {
    const char *list = fl_config_string(cfg, "security.sasl.enabled.mechanisms", "PLAIN");
    for (const char *p = list; *p;) {
        const char *end = p + strcspn(p, ",;");
        char m[32];
        fl_sec_trimmed(p, (size_t)(end - p), m, sizeof(m));
        p = *end ? end + 1 : end;
        if (!m[0]) continue;
        for (char *c = m; *c; c++) *c = (char)toupper((unsigned char)*c);
        if (strcmp(m, "PLAIN") != 0 && !fl_scram_mechanism(m))
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "security.sasl.enabled.mechanisms: mechanism '%s' is not "
                              "supported (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)", m);
        bool dup = false;
        for (size_t i = 0; i < s->mechanism_count; i++) dup |= strcmp(s->mechanisms[i], m) == 0;
        if (dup) continue;
        if (s->mechanism_count == FL_SASL_MECHANISMS_MAX)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "security.sasl.enabled.mechanisms: too many mechanisms");
        snprintf(s->mechanisms[s->mechanism_count++], sizeof(s->mechanisms[0]), "%s", m);
    }
    if (!s->mechanism_count)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "No SASL mechanisms are enabled");
    return 0;
}

static int fl_sec_plain_users(const fl_config_t *cfg, fl_listener_security_t *s, fl_error_t *err) {
    char key[256], lower[64];
    size_t i = 0;
    for (; s->listener[i] && i + 1 < sizeof(lower); i++)
        lower[i] = (char)tolower((unsigned char)s->listener[i]);
    lower[i] = '\0';
    snprintf(key, sizeof(key), "security.sasl.listener.name.%s.plain.jaas.config", lower);
    const char *text = fl_config_string(cfg, key, NULL);
    if (!text || !*text) {
        snprintf(key, sizeof(key), "security.sasl.plain.jaas.config");
        text = fl_config_string(cfg, key, NULL);
    }
    if (!text || !*text)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "listener %s authenticates with SASL/PLAIN but has no users: set "
                          "security.sasl.plain.jaas.config or "
                          "security.sasl.listener.name.%s.plain.jaas.config",
                          s->listener, lower);
    fl_jaas_entry_t e;
    fl_error_t perr;
    fl_err_clear(&perr);
    int rc = fl_jaas_parse(text, &e, &perr);
    if (!rc) s->plain_users = fl_plain_users_from_jaas(&e);
    fl_jaas_entry_free(&e);
    if (rc) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "%s: %s", key, perr.msg);
    if (!fl_plain_users_count(s->plain_users))
        FL_WARN("security: %s lists no user_<name> option: no client can authenticate on "
                "listener %s", key, s->listener);
    return 0;
}

int fl_listener_security_load(const fl_config_t *cfg, const char *listener,
                              fl_listener_security_t **out, fl_error_t *err) {
    *out = NULL;
    fl_sec_protocol_t proto;
    int rc = fl_security_protocol_of(cfg, listener, &proto, err);
    if (rc || proto == FL_SEC_PLAINTEXT) return rc;
    fl_listener_security_t *s = fl_calloc(1, sizeof(*s));
    snprintf(s->listener, sizeof(s->listener), "%s", listener);
    s->protocol = proto;
    s->sasl = proto == FL_SEC_SASL || proto == FL_SEC_SASL_SSL;
    int64_t frame;
    bool plain = false;
    if ((proto == FL_SEC_SSL || proto == FL_SEC_SASL_SSL) &&
        (rc = fl_server_tls_load(cfg, listener, &s->tls, err))) {
        fl_listener_security_free(s);
        return rc;
    }
    if (s->sasl && !(rc = fl_sec_mechanisms(cfg, s, err)))
        for (size_t i = 0; i < s->mechanism_count; i++)
            plain |= strcmp(s->mechanisms[i], "PLAIN") == 0;
    if (rc || (plain && (rc = fl_sec_plain_users(cfg, s, err))) ||
        (rc = fl_config_duration_ms(cfg, "security.sasl.authentication.timeout",
                                    FL_SASL_AUTH_TIMEOUT_MS_DEFAULT, &s->auth_timeout_ms, err)) ||
        (rc = fl_config_duration_ms(cfg, "security.sasl.failure.delay",
                                    FL_SASL_FAILURE_DELAY_MS_DEFAULT, &s->failure_delay_ms, err)) ||
        (rc = fl_config_bytes(cfg, "security.sasl.max-request-size",
                              FL_SASL_PREAUTH_FRAME_DEFAULT, &frame, err))) {
        fl_listener_security_free(s);
        return rc;
    }
    if (frame < 1024) {
        fl_listener_security_free(s);
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "security.sasl.max-request-size must be at least 1 kb");
    }
    s->preauth_frame_max = (size_t)frame;
    if (s->sasl) FL_INFO("security: listener %s authenticates with SASL (%s), %zu PLAIN user(s)", listener,
            s->mechanisms[0], fl_plain_users_count(s->plain_users));
    *out = s;
    return 0;
}

void fl_listener_security_free(fl_listener_security_t *s) {
    if (!s) return;
    fl_plain_users_free(s->plain_users);
    fl_server_tls_free(s->tls);
    fl_free(s);
}

void fl_listener_security_gate(const fl_listener_security_t *sec, fl_rpc_server_t *srv,
                               void *listener_ctx) {
    if (!sec) return;
    fl_rpc_gate_t g = {.frame_max = sec->preauth_frame_max, .deadline_ms = sec->auth_timeout_ms};
    fl_rpc_server_gate(srv, listener_ctx, &g);
    /* the gate's deadline covers the TLS handshake; without SASL the
     * handshake is the whole authentication */
    if (sec->tls) fl_rpc_server_tls(srv, listener_ctx, fl_server_tls_ctx, sec->tls, !sec->sasl);
}

/* ---- sessions ---- */

static void fl_sasl_session_free(void *p) {
    fl_sasl_session_t *s = p;
    fl_scram_server_free(s->scram);
    fl_free(s);
}

fl_sasl_session_t *fl_sasl_session_of(fl_rpc_conn_t *conn) {
    fl_sasl_session_t *s = fl_rpc_conn_attachment(conn);
    if (!s) {
        s = fl_calloc(1, sizeof(*s));
        fl_rpc_conn_attach(conn, s, fl_sasl_session_free);
    }
    return s;
}

const char *fl_sasl_principal(const fl_rpc_conn_t *conn) {
    if (!conn) return NULL;
    const fl_sasl_session_t *s = fl_rpc_conn_attachment(conn);
    if (s && s->authenticated) return s->principal;
    /* SSL: the handshake admitted it; the certificate's CN, if any (on a
     * SASL_SSL listener only SASL admits) */
    if (fl_rpc_conn_tls(conn) && !fl_rpc_conn_gated(conn)) return fl_rpc_conn_tls_peer_cn(conn);
    return NULL;
}

/* ---- AUTHENTICATE ---- */

static void fl_sec_mechanism_list(const fl_listener_security_t *sec, char *out, size_t cap) {
    size_t n = (size_t)snprintf(out, cap, "[");
    for (size_t i = 0; i < sec->mechanism_count && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? ", " : "", sec->mechanisms[i]);
    if (n < cap) snprintf(out + n, cap - n, "]");
}

/* One step of a SCRAM exchange (ours): the first message gets the
 * server-first as its challenge, the final one the server-final; a
 * failure ends the exchange (the client may start again). */
static void fl_security_scram(const fl_listener_security_t *sec, fl_scram_users_t *users,
                              fl_rpc_conn_t *conn, fl_sasl_session_t *s, int hash,
                              const char *proto, const Fluss__AuthenticateRequest *ar,
                              int32_t request_id, fl_buf_t *out) {
    fl_error_t err;
    fl_err_clear(&err);
    uint8_t *reply = NULL;
    size_t reply_len = 0;
    int rc;
    bool final = false;
    if (s->scram && strcasecmp(s->mechanism, proto) != 0) {
        fl_scram_server_free(s->scram);
        s->scram = NULL;
    }
    if (!s->scram) {
        s->scram = fl_scram_server_new(hash, fl_scram_users_secret(users));
        snprintf(s->mechanism, sizeof(s->mechanism), "%s", fl_scram_mechanism_name(hash));
        rc = fl_scram_server_first(s->scram, ar->token.data, ar->token.len, fl_scram_users_lookup,
                                   users, &reply, &reply_len, &err);
    } else {
        final = true;
        rc = fl_scram_server_final(s->scram, ar->token.data, ar->token.len, &reply, &reply_len,
                                   &err);
    }
    if (rc) {
        fl_scram_server_free(s->scram);
        s->scram = NULL;
        fl_free(reply);
        FL_INFO("security: a %s authentication on listener %s failed", s->mechanism,
                sec->listener);
        fl_server_reply_error(out, request_id, FLUSS_ERR_AUTHENTICATE_EXCEPTION, err.msg);
        fl_rpc_conn_hold(conn, sec->failure_delay_ms);
        return;
    }
    if (final) {
        snprintf(s->principal, sizeof(s->principal), "%s", fl_scram_server_user(s->scram));
        s->authenticated = true;
        fl_scram_server_free(s->scram);
        s->scram = NULL;
        fl_rpc_conn_admit(conn);
        FL_DEBUG("security: User:%s authenticated (%s) on listener %s", s->principal,
                 s->mechanism, sec->listener);
    }
    Fluss__AuthenticateResponse resp = FLUSS__AUTHENTICATE_RESPONSE__INIT;
    resp.has_challenge = 1;
    resp.challenge.data = reply;
    resp.challenge.len = reply_len;
    fl_server_reply(out, request_id, &resp.base);
    fl_free(reply);
}

void fl_security_authenticate(const fl_listener_security_t *sec, fl_scram_users_t *users,
                              fl_rpc_conn_t *conn, const fl_frame_request_t *req, fl_buf_t *out) {
    Fluss__AuthenticateRequest *ar =
        fluss__authenticate_request__unpack(NULL, req->body_len, req->body);
    char msg[FL_ERROR_MSG_MAX];
    if (!ar) {
        snprintf(msg, sizeof(msg), "Failed to decode the AUTHENTICATE request body (%zu bytes)",
                 req->body_len);
        fl_server_reply_error(out, req->request_id, FLUSS_ERR_CORRUPT_MESSAGE, msg);
        return;
    }
    const char *proto = ar->protocol ? ar->protocol : "";
    Fluss__AuthenticateResponse resp = FLUSS__AUTHENTICATE_RESPONSE__INIT;
    if (!sec || !sec->sasl) {
        /* PLAINTEXT (SSL, ours): complete from the start; only its own name
         * matches */
        const char *own = sec ? "SSL" : "PLAINTEXT";
        if (strcasecmp(proto, own) == 0) {
            fl_server_reply(out, req->request_id, &resp.base);
        } else {
            snprintf(msg, sizeof(msg),
                     "Authenticate protocol not match: protocol of server is '%s' while "
                     "protocol of client is '%.200s'", own, proto);
            fl_server_reply_error(out, req->request_id, FLUSS_ERR_AUTHENTICATE_EXCEPTION, msg);
        }
        fluss__authenticate_request__free_unpacked(ar, NULL);
        return;
    }
    bool enabled = false;
    for (size_t i = 0; i < sec->mechanism_count; i++)
        enabled |= strcasecmp(sec->mechanisms[i], proto) == 0;
    if (!enabled) {
        char list[160];
        fl_sec_mechanism_list(sec, list, sizeof(list));
        snprintf(msg, sizeof(msg), "SASL server enables %s while protocol of client is '%.200s'",
                 list, proto);
        fl_server_reply_error(out, req->request_id, FLUSS_ERR_AUTHENTICATE_EXCEPTION, msg);
        fluss__authenticate_request__free_unpacked(ar, NULL);
        return;
    }
    fl_sasl_session_t *s = fl_sasl_session_of(conn);
    if (s->authenticated) {
        /* as 0.9.1: a finished exchange answers again with no challenge */
        fl_server_reply(out, req->request_id, &resp.base);
        fluss__authenticate_request__free_unpacked(ar, NULL);
        return;
    }
    int hash = fl_scram_mechanism(proto);
    if (hash) {
        if (!users) {
            fl_server_reply_error(out, req->request_id, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                                  "SCRAM is not available on this server.");
        } else {
            fl_security_scram(sec, users, conn, s, hash, proto, ar, req->request_id, out);
        }
        fluss__authenticate_request__free_unpacked(ar, NULL);
        return;
    }
    fl_error_t err;
    fl_err_clear(&err);
    char user[FL_PRINCIPAL_MAX];
    int rc = fl_plain_authenticate(sec->plain_users, ar->token.data, ar->token.len, user,
                                   sizeof(user), &err);
    fluss__authenticate_request__free_unpacked(ar, NULL);
    if (rc) {
        FL_INFO("security: a SASL/PLAIN authentication on listener %s failed", sec->listener);
        fl_server_reply_error(out, req->request_id, FLUSS_ERR_AUTHENTICATE_EXCEPTION, err.msg);
        fl_rpc_conn_hold(conn, sec->failure_delay_ms);
        return;
    }
    snprintf(s->mechanism, sizeof(s->mechanism), "PLAIN");
    snprintf(s->principal, sizeof(s->principal), "%s", user);
    s->authenticated = true;
    fl_rpc_conn_admit(conn);
    FL_DEBUG("security: User:%s authenticated on listener %s", user, sec->listener);
    /* as 0.9.1: the exchange's last answer carries an empty challenge */
    resp.has_challenge = 1;
    resp.challenge.data = NULL;
    resp.challenge.len = 0;
    fl_server_reply(out, req->request_id, &resp.base);
}
