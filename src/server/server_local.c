/*
 * server_local.c — building, starting and tearing down a coordinator with
 * its tablet servers in one process (server_local.h).
 */
#include "server_local.h"

#include <stdio.h>
#include <string.h>

int fl_local_cluster_new(const fl_coordinator_config_t *ccfg, const fl_tablet_config_t *tcfgs,
                         size_t n, fl_local_cluster_t *out, fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    if (n < 1 || n > FL_LOCAL_TABLETS_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "1..%d tablet servers", FL_LOCAL_TABLETS_MAX);
    fl_coordinator_config_t cc = *ccfg;
    cc.tablet_count = n;
    for (size_t i = 0; i < n; i++) cc.tablet_ids[i] = tcfgs[i].id;
    int rc = fl_coordinator_server_new(&cc, &out->cs, err);
    for (size_t i = 0; !rc && i < n; i++) {
        rc = fl_tablet_server_new(&tcfgs[i], &out->tablets[i], err);
        if (rc) break;
        out->tablet_count++;
    }
    if (rc) fl_local_cluster_destroy(out);
    return rc;
}

void fl_local_test_config(const char *dir, size_t tablets, fl_coordinator_config_t *ccfg,
                          fl_tablet_config_t *tcfgs) {
    static char meta_dir[4096]; /* the caller's config points at it */
    memset(ccfg, 0, sizeof(*ccfg));
    snprintf(meta_dir, sizeof(meta_dir), "%s/coordinator", dir);
    ccfg->meta_dir = meta_dir;
    ccfg->defaults = (fl_table_defaults_t){.bucket_number = 1,
                                           .replication_factor = 1,
                                           .max_bucket_num = FL_MAX_BUCKET_NUM_DEFAULT,
                                           .max_partition_num = FL_MAX_PARTITION_NUM_DEFAULT};
    snprintf(ccfg->bind_host, sizeof(ccfg->bind_host), "127.0.0.1");
    ccfg->advertised = (fl_endpoint_t){.id = 0, .host = "127.0.0.1", .port = 0};
    ccfg->limits = (fl_rpc_limits_t){100u * 1024 * 1024, 64u * 1024 * 1024, 600000};
    ccfg->writer_id_block = FL_WRITER_ID_BLOCK_DEFAULT;
    snprintf(ccfg->remote_dir, sizeof(ccfg->remote_dir), "%.4000s/remote", dir);
    for (size_t i = 0; i < tablets; i++) {
        fl_tablet_config_t *t = &tcfgs[i];
        memset(t, 0, sizeof(*t));
        t->id = (int32_t)i;
        snprintf(t->data_dir, sizeof(t->data_dir), "%s/tablet-server-%zu", dir, i);
        snprintf(t->bind_host, sizeof(t->bind_host), "127.0.0.1");
        t->advertised = (fl_endpoint_t){.id = (int32_t)i, .host = "127.0.0.1", .port = 0};
        t->limits = ccfg->limits;
        t->network_threads = 1;
        t->worker_threads = 1;
        t->log = (fl_log_config_t){1024ull * 1024 * 1024, 4096, 7LL * 24 * 3600 * 1000,
                                   100u * 1024 * 1024, false, true, false};
        t->durability = (fl_durability_t){INT64_MAX, 0, false};
        snprintf(t->remote_dir, sizeof(t->remote_dir), "%.4000s/remote", dir);
    }
}

/* A follower's connection to its leader: in-process, to that tablet
 * server's internal side. */
static fl_rpc_client_t *fl_local_peer_client(void *ctx, int32_t id, fl_rpc_loop_t *loop) {
    fl_local_cluster_t *lc = ctx;
    for (size_t i = 0; i < lc->tablet_count; i++)
        if (lc->tablets[i]->self.id == id)
            return fl_rpc_client_new_local(loop, lc->tablets[i]->rpc,
                                           &lc->tablets[i]->internal_role, NULL);
    return NULL;
}

int fl_local_cluster_start(fl_local_cluster_t *lc, fl_error_t *err) {
    for (size_t i = 0; i < lc->tablet_count; i++) {
        lc->tablets[i]->peer_client = fl_local_peer_client;
        lc->tablets[i]->peer_client_ctx = lc;
    }
    for (size_t i = 0; i < lc->tablet_count; i++) {
        fl_tablet_server_t *ts = lc->tablets[i];
        int rc = fl_tablet_server_start(ts, err);
        if (rc) return rc;
        /* the coordinator reaches the tablet server's internal side over
         * an in-process connection: the messages of a cluster, no socket */
        fl_rpc_client_t *c = fl_rpc_client_new_local(fl_coordinator_server_loop(lc->cs), ts->rpc,
                                                     &ts->internal_role, NULL);
        fl_coordinator_server_add_tablet(lc->cs, &ts->self, c);
        /* and the tablet server the coordinator's, the same way */
        ts->coordinator = fl_rpc_client_new_local(ts->client_loop, lc->cs->rpc,
                                                  &lc->cs->internal_role, NULL);
    }
    /* the coordinator's start sends every tablet server its tables and
     * waits for the answers: only then do clients get in */
    int rc = fl_coordinator_server_start(lc->cs, err);
    for (size_t i = 0; !rc && i < lc->tablet_count; i++)
        rc = fl_tablet_server_accept(lc->tablets[i], err);
    return rc;
}

void fl_local_cluster_destroy(fl_local_cluster_t *lc) {
    /* tablet listeners first (their INIT_WRITER runs on the coordinator's
     * worker), then the coordinator, whose queued DDL still pushes to the
     * tablet servers; only then is anything freed. The coordinator's loop
     * runs until its own destroy: its clients of the tablet servers go
     * before those servers do (a client reconnects on its timer, and a
     * local connection opens on the server's loops). */
    for (size_t i = 0; i < lc->tablet_count; i++) fl_tablet_server_stop(lc->tablets[i]);
    if (lc->cs) {
        fl_coordinator_server_stop(lc->cs);
        for (size_t i = 0; i < lc->tablet_count; i++)
            if (lc->tablets[i]) fl_coordinator_server_drop_tablet(lc->cs, lc->tablets[i]->self.id);
    }
    for (size_t i = 0; i < lc->tablet_count; i++) fl_tablet_server_destroy(lc->tablets[i]);
    fl_coordinator_server_destroy(lc->cs);
    memset(lc, 0, sizeof(*lc));
}
