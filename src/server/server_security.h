/*
 * server_security.h — how a listener authenticates its connections, from
 * Fluss's keys, and the per-connection session of a SASL listener.
 *
 * Keys (Fluss 0.9.1 unless marked ours):
 *   security.protocol.map           "NAME:PROTOCOL,..." (PLAINTEXT, SASL;
 *                                   ours SSL: TLS, SASL_SSL: TLS then
 *                                   SASL); a listener not named is
 *                                   PLAINTEXT. TLS keys: server_tls.h
 *   security.sasl.enabled.mechanisms  list, default PLAIN; ours also
 *                                   SCRAM-SHA-256, SCRAM-SHA-512
 *   security.sasl.listener.name.<listener>.plain.jaas.config, then
 *   security.sasl.plain.jaas.config   the PLAIN users (auth_jaas.h)
 *   security.sasl.authentication.timeout  (ours, default 10 s) a
 *                                   connection that has not authenticated
 *                                   by then is closed
 *   security.sasl.failure.delay     (ours, default 200 ms) how long a
 *                                   failed authentication's answer waits
 *   security.sasl.max-request-size  (ours, default 64 kb) the largest
 *                                   frame read before authentication
 *
 * The connection states are 0.9.1's (NettyServerHandler): until it
 * authenticates, a connection of a SASL listener is answered only
 * API_VERSIONS and AUTHENTICATE; anything else gets
 * AUTHENTICATE_EXCEPTION, and (ours) the connection is closed after that
 * answer.
 */
#ifndef FL_SERVER_SECURITY_H
#define FL_SERVER_SECURITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth_plain.h"
#include "auth_scram.h"
#include "common_error.h"
#include "rpc_server.h"
#include "server_config.h"
#include "server_tls.h"

typedef enum fl_sec_protocol {
    FL_SEC_PLAINTEXT = 0,
    FL_SEC_SASL = 1,
    FL_SEC_SSL = 2,      /* ours: TLS; the principal is the client certificate's CN */
    FL_SEC_SASL_SSL = 3, /* ours: TLS, then SASL as FL_SEC_SASL */
} fl_sec_protocol_t;

#define FL_SASL_MECHANISMS_MAX 4

typedef struct fl_listener_security {
    char listener[64];
    fl_sec_protocol_t protocol;
    /* enabled mechanisms, upper case, in the configured order */
    char mechanisms[FL_SASL_MECHANISMS_MAX][32];
    size_t mechanism_count;
    fl_plain_users_t *plain_users;
    int64_t auth_timeout_ms;
    int64_t failure_delay_ms;
    size_t preauth_frame_max;
    bool sasl;            /* SASL or SASL_SSL */
    fl_server_tls_t *tls; /* SSL or SASL_SSL */
} fl_listener_security_t;

/* The protocol security.protocol.map gives listener (PLAINTEXT if it is
 * not named). */
int fl_security_protocol_of(const fl_config_t *cfg, const char *listener, fl_sec_protocol_t *out,
                            fl_error_t *err);
/* How listener authenticates: *out NULL for PLAINTEXT, else a new object
 * (free with fl_listener_security_free). Refuses what cannot work: a
 * mechanism we do not implement, a SASL listener without users' JAAS. */
int fl_listener_security_load(const fl_config_t *cfg, const char *listener,
                              fl_listener_security_t **out, fl_error_t *err);
void fl_listener_security_free(fl_listener_security_t *s);
/* Gates the connections of srv's listener whose context is listener_ctx
 * as sec says (rpc_server.h). */
void fl_listener_security_gate(const fl_listener_security_t *sec, fl_rpc_server_t *srv,
                               void *listener_ctx);

/* What a connection of a SASL listener has proven: its principal once
 * authenticated. Lives as the connection's attachment. */
typedef struct fl_sasl_session {
    bool authenticated;
    char mechanism[32];
    char principal[FL_PRINCIPAL_MAX];
    fl_scram_server_t *scram; /* a SCRAM exchange under way */
} fl_sasl_session_t;

/* The session of conn, made on first use (on conn's loop). */
fl_sasl_session_t *fl_sasl_session_of(fl_rpc_conn_t *conn);
/* The authenticated principal of conn, or NULL: the SASL user, or on an
 * SSL listener the verified client certificate's common name. */
const char *fl_sasl_principal(const fl_rpc_conn_t *conn);

struct fl_scram_users;
/* AUTHENTICATE as 0.9.1 answers it, for a listener that authenticates
 * with sec (NULL: PLAINTEXT); SCRAM (ours) in two steps against users.
 * Appends the answer frame to out; on a failure also holds it back by
 * sec's delay. */
void fl_security_authenticate(const fl_listener_security_t *sec, struct fl_scram_users *users,
                              fl_rpc_conn_t *conn, const fl_frame_request_t *req, fl_buf_t *out);

#endif
