/*
 * test_client_env.h — an in-process cluster (a coordinator and two tablet
 * servers, server_local.h) in a directory of its own, with a libfluss
 * client connected to it and a database "db", for the client tests that
 * need a server. A test tunes the configuration between
 * client_env_config and client_env_start.
 */
#ifndef TEST_CLIENT_ENV_H
#define TEST_CLIENT_ENV_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fluss.h"
#include "server_local.h"

#define CLIENT_ENV_SERVERS 2

typedef struct client_env {
    char dir[64];
    fl_local_cluster_t lc;
    fluss_client_t *client;
    fl_coordinator_config_t cc;
    fl_tablet_config_t tc[CLIENT_ENV_SERVERS];
} client_env_t;

/* A new environment whose directory is made from tmpl ("/tmp/x_XXXXXX")
 * and whose configuration is the local test one; NULL on failure. */
static inline client_env_t *client_env_config(const char *tmpl) {
    client_env_t *e = calloc(1, sizeof(*e));
    snprintf(e->dir, sizeof(e->dir), "%s", tmpl);
    if (!mkdtemp(e->dir)) {
        free(e);
        return NULL;
    }
    fl_local_test_config(e->dir, CLIENT_ENV_SERVERS, &e->cc, e->tc);
    return e;
}

/* Starts the cluster, connects the client, creates "db". 0 or -1. */
static inline int client_env_start(client_env_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    if (fl_local_cluster_new(&e->cc, e->tc, CLIENT_ENV_SERVERS, &e->lc, &err)) return -1;
    if (fl_local_cluster_start(&e->lc, &err)) return -1;
    char bootstrap[64];
    snprintf(bootstrap, sizeof(bootstrap), "127.0.0.1:%d", e->lc.cs->self.port);
    fluss_error_t fe;
    if (fluss_client_new(bootstrap, 30000, &e->client, &fe)) return -1;
    if (fluss_database_create(e->client, "db", NULL, NULL, true, &fe)) return -1;
    return 0;
}

/* Stops everything and removes the directory. 0 or -1. */
static inline int client_env_stop(client_env_t *e) {
    fluss_client_destroy(e->client);
    fl_local_cluster_destroy(&e->lc);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", e->dir);
    int rc = system(cmd) == 0 ? 0 : -1;
    free(e);
    return rc;
}

/* Creates db.name as spec says and opens it; NULL (after printing the
 * error) on failure. */
static inline fluss_table_t *client_env_table(client_env_t *e, const char *name,
                                              const fluss_table_spec_t *spec) {
    fluss_error_t fe;
    fluss_table_t *t = NULL;
    if (fluss_table_create(e->client, "db", name, spec, false, &fe) ||
        fluss_table_open(e->client, "db", name, &t, &fe)) {
        fprintf(stderr, "table %s: %s\n", name, fe.message);
        return NULL;
    }
    return t;
}

#endif
