/*
 * server_scram.h — the SCRAM users a server role authenticates (ours:
 * Fluss has no SCRAM): credentials (salt, iterations, stored and server
 * keys; never a password) kept by the coordinator in the metadata store,
 * changed with ALTER_SCRAM_CREDENTIALS, listed with LIST_SCRAM_USERS, and
 * pushed whole to every tablet server (NOTIFY_SCRAM_CREDENTIALS), each
 * role holding its own copy.
 *
 * Thread rule: any thread; lookups copy the credential out under the
 * set's lock (a leaf lock).
 */
#ifndef FL_SERVER_SCRAM_H
#define FL_SERVER_SCRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth_scram.h"
#include "metastore.h"

typedef struct fl_scram_users fl_scram_users_t;

/* An empty set with a random secret (the made-up credentials of unknown
 * users derive from it). */
fl_scram_users_t *fl_scram_users_new(void);
void fl_scram_users_free(fl_scram_users_t *u);
/* Replaces the credentials with those of the store's nodes (a node that
 * does not decode is skipped and logged, never its text). */
void fl_scram_users_publish(fl_scram_users_t *u, const fl_ms_scram_node_t *const *nodes, size_t n);
size_t fl_scram_users_count(fl_scram_users_t *u);
/* fl_scram_lookup_fn over u (arg). */
bool fl_scram_users_lookup(void *arg, const char *user, int hash, fl_scram_credential_t *out);
const uint8_t *fl_scram_users_secret(const fl_scram_users_t *u);

struct fl_coordinator_server;
/* The coordinator's: loaded from its store at start, and pushed to one
 * tablet server (tablet_id >= 0) or all. Under the coordinator's lock. */
int fl_coordinator_scram_load(struct fl_coordinator_server *cs, fl_error_t *err);
void fl_coordinator_scram_push(struct fl_coordinator_server *cs, int32_t tablet_id);

#endif
