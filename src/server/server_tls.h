/*
 * server_tls.h — the TLS context of an SSL / SASL_SSL listener (ours:
 * Fluss 0.9.1 has no TLS, FIP-29 is open), from Kafka-like keys under
 * Fluss's security. prefix, each overridable per listener as
 * security.ssl.listener.name.<listener, lower case>.<key>:
 *   security.ssl.keystore.certificate    PEM certificate chain (required)
 *   security.ssl.keystore.key            PEM private key (required)
 *   security.ssl.truststore.certificates PEM CA certificates clients'
 *                                        certificates are verified with
 *   security.ssl.client.auth             none (default) | required
 *                                        (required needs a truststore)
 *   security.ssl.protocols               lowest version: TLSv1.2 (default)
 *                                        or TLSv1.3; nothing older
 *   security.ssl.reload.interval         (default 5 s) how often, at most,
 *                                        a new connection checks the files'
 *                                        mtimes; changed files are re-read
 *                                        and new connections use them
 * Renegotiation and compression are off, no session tickets.
 *
 * Thread rule: fl_server_tls_ctx is called from any loop thread (a lock
 * around the reload check); the SSL_CTX it returns is the caller's
 * reference, so a reload never pulls a context from under a connection.
 */
#ifndef FL_SERVER_TLS_H
#define FL_SERVER_TLS_H

#include <stdbool.h>

#include "common_error.h"
#include "server_config.h"

typedef struct fl_server_tls fl_server_tls_t;

/* Loads listener's keys and builds the first context (a bad file stops
 * flussd at start with the key and OpenSSL's reason). */
int fl_server_tls_load(const fl_config_t *cfg, const char *listener, fl_server_tls_t **out,
                       fl_error_t *err);
void fl_server_tls_free(fl_server_tls_t *t);
/* The context for a new connection (a reference: SSL_CTX_free it), after
 * re-reading changed files if the check is due; NULL if none. Signature
 * of fl_rpc_tls_ctx_fn. */
struct ssl_ctx_st *fl_server_tls_ctx(void *tls);
bool fl_server_tls_client_auth(const fl_server_tls_t *t);

#endif
