/*
 * server_local.h — a coordinator and its tablet servers built together in
 * one process (local mode, tests, and the in-process cluster that cluster
 * mode grows from): one call builds and links them, one starts them, one
 * tears them down in the right order.
 *
 * Thread rule: call from one thread (main or a test).
 */
#ifndef FL_SERVER_LOCAL_H
#define FL_SERVER_LOCAL_H

#include "server_coordinator.h"
#include "server_tablet.h"

#define FL_LOCAL_TABLETS_MAX 16

typedef struct fl_local_cluster {
    fl_coordinator_server_t *cs;
    size_t tablet_count;
    fl_tablet_server_t *tablets[FL_LOCAL_TABLETS_MAX];
} fl_local_cluster_t;

/* Builds (does not start) a coordinator and n tablet servers; the
 * coordinator's catalog assigns buckets over the tablets' ids. */
int fl_local_cluster_new(const fl_coordinator_config_t *ccfg, const fl_tablet_config_t *tcfgs,
                         size_t n, fl_local_cluster_t *out, fl_error_t *err);
/* A configuration with the defaults for tests: loopback, port 0, small
 * limits, data under dir. */
void fl_local_test_config(const char *dir, size_t tablets, fl_coordinator_config_t *ccfg,
                          fl_tablet_config_t *tcfgs);
int fl_local_cluster_start(fl_local_cluster_t *lc, fl_error_t *err);
/* Stops (answering parked requests) and frees everything. */
void fl_local_cluster_destroy(fl_local_cluster_t *lc);

#endif
