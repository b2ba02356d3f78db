/*
 * server_main.c — flussd: parses the command line and server.yaml, opens
 * the metadata store, starts the coordinator and tablet-server listeners
 * of local mode on one libuv loop, and shuts down cleanly on SIGINT or
 * SIGTERM (stop accepting, close connections, close the store).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"
#include "metastore.h"
#include "proto_api.h"
#include "rpc_server.h"
#include "server_config.h"
#include "server_node.h"

#define FL_DEFAULT_COORDINATOR_LISTENER "FLUSS://127.0.0.1:9123"
#define FL_DEFAULT_TABLET_LISTENER "FLUSS://127.0.0.1:9124"

typedef struct fl_main_state {
    uv_loop_t *loop;
    fl_rpc_server_t *rpc;
    fl_server_t *server;
    uv_signal_t sigint, sigterm;
    uv_timer_t retention;
    int signals_closed;
} fl_main_state_t;

#define FL_RETENTION_CHECK_MS (5 * 60 * 1000)

static void fl_on_retention(uv_timer_t *t) {
    fl_main_state_t *st = t->data;
    fl_replica_manager_retention(&st->server->replicas, fl_time_wall_ms());
}

static void fl_usage(FILE *f) {
    fprintf(f,
            "usage: flussd [--config FILE] [--data-dir DIR] [-D key=value]... [--verbose]\n"
            "\n"
            "Starts a fluss-c server in local mode: a coordinator (id 0) and a tablet\n"
            "server (id 0) in one process, metadata in DIR (no ZooKeeper).\n"
            "\n"
            "  --config FILE     a Fluss-style server.yaml\n"
            "  --data-dir DIR    data directory (config key data.dir, default ./data)\n"
            "  -D key=value      override one configuration key\n"
            "  --verbose         debug logging\n"
            "\n"
            "Keys: bind.listeners (coordinator, default %s),\n"
            "      tablet-server.bind.listeners (default %s),\n"
            "      advertised.listeners, tablet-server.advertised.listeners, tablet-server.id,\n"
            "      default.bucket.number, default.replication.factor, max.bucket.num,\n"
            "      netty.server.max-request-size, netty.connection.max-idle-time\n",
            FL_DEFAULT_COORDINATOR_LISTENER, FL_DEFAULT_TABLET_LISTENER);
}

static void fl_on_signal_closed(uv_handle_t *h) {
    fl_main_state_t *st = h->data;
    st->signals_closed++;
}

static void fl_on_rpc_closed(fl_rpc_server_t *srv) {
    (void)srv;
    FL_INFO("all connections closed");
}

static void fl_on_signal(uv_signal_t *s, int signum) {
    fl_main_state_t *st = s->data;
    FL_INFO("received %s, shutting down", signum == SIGINT ? "SIGINT" : "SIGTERM");
    uv_signal_stop(&st->sigint);
    uv_signal_stop(&st->sigterm);
    uv_close((uv_handle_t *)&st->sigint, fl_on_signal_closed);
    uv_close((uv_handle_t *)&st->sigterm, fl_on_signal_closed);
    uv_timer_stop(&st->retention);
    uv_close((uv_handle_t *)&st->retention, NULL);
    fl_server_fetch_shutdown(st->server); /* answer parked fetches first */
    fl_rpc_server_close(st->rpc, fl_on_rpc_closed);
}

static int fl_endpoint_from(const fl_config_t *cfg, const char *bind_key, const char *adv_key,
                            const char *dflt, int32_t id, fl_endpoint_t *out,
                            fl_listener_addr_t *bind, fl_error_t *err) {
    int rc = fl_config_listener(cfg, bind_key, dflt, bind, err);
    if (rc) return rc;
    out->id = id;
    const char *adv = fl_config_string(cfg, adv_key, NULL);
    if (adv) {
        fl_listener_addr_t a;
        if ((rc = fl_config_listener(cfg, adv_key, adv, &a, err))) return rc;
        snprintf(out->host, sizeof(out->host), "%s", a.host);
        out->port = a.port;
    } else {
        snprintf(out->host, sizeof(out->host), "%s",
                 strcmp(bind->host, "0.0.0.0") == 0 ? "127.0.0.1" : bind->host);
        out->port = bind->port;
    }
    return 0;
}

int main(int argc, char **argv) {
    fl_config_t cfg;
    fl_config_init(&cfg);
    fl_error_t err;
    fl_err_clear(&err);
    const char *config_path = NULL;
    fl_config_t overrides;
    fl_config_init(&overrides);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fl_usage(stdout);
            return 0;
        } else if (strcmp(a, "--config") == 0 && i + 1 < argc) {
            config_path = argv[++i];
        } else if (strcmp(a, "--data-dir") == 0 && i + 1 < argc) {
            fl_config_set(&overrides, "data.dir", argv[++i]);
        } else if (strcmp(a, "-D") == 0 && i + 1 < argc) {
            if (fl_config_set_arg(&overrides, argv[++i], &err)) goto usage_error;
        } else if (strncmp(a, "-D", 2) == 0 && a[2]) {
            if (fl_config_set_arg(&overrides, a + 2, &err)) goto usage_error;
        } else if (strcmp(a, "--verbose") == 0) {
            fl_log_set_level(FL_LOG_DEBUG);
        } else {
            fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "unknown argument '%s'", a);
            goto usage_error;
        }
    }
    if (config_path && fl_config_load_yaml(&cfg, config_path, &err)) goto fatal;
    for (size_t i = 0; i < overrides.values.count; i++)
        fl_config_set(&cfg, overrides.values.items[i].key, overrides.values.items[i].value);
    fl_config_free(&overrides);

    int64_t t0 = fl_time_mono_ms();
    int64_t bucket_number, replication_factor, max_bucket, frame_max, idle_ms, tablet_id;
    int64_t segment_bytes, index_interval, flush_messages;
    if (fl_config_int(&cfg, "default.bucket.number", 1, &bucket_number, &err) ||
        fl_config_int(&cfg, "default.replication.factor", 1, &replication_factor, &err) ||
        fl_config_int(&cfg, "max.bucket.num", 128000, &max_bucket, &err) ||
        fl_config_int(&cfg, "tablet-server.id", 0, &tablet_id, &err) ||
        fl_config_bytes(&cfg, "netty.server.max-request-size", 100LL * 1024 * 1024, &frame_max,
                        &err) ||
        fl_config_duration_ms(&cfg, "netty.connection.max-idle-time", 10LL * 60 * 1000, &idle_ms,
                              &err) ||
        fl_config_bytes(&cfg, "log.segment.file-size", 1024LL * 1024 * 1024, &segment_bytes,
                        &err) ||
        fl_config_bytes(&cfg, "log.index.interval-size", 4096, &index_interval, &err) ||
        fl_config_int(&cfg, "log.flush.interval-messages", INT64_MAX, &flush_messages, &err))
        goto fatal;
    if (bucket_number < 1 || replication_factor < 1 || max_bucket < 1 || frame_max < 16) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "bucket, replication and size settings must be positive");
        goto fatal;
    }

    static fl_server_t server;
    fl_listener_addr_t cs_bind, ts_bind;
    if (fl_endpoint_from(&cfg, "bind.listeners", "advertised.listeners",
                         FL_DEFAULT_COORDINATOR_LISTENER, 0, &server.coordinator, &cs_bind, &err) ||
        fl_endpoint_from(&cfg, "tablet-server.bind.listeners",
                         "tablet-server.advertised.listeners", FL_DEFAULT_TABLET_LISTENER,
                         (int32_t)tablet_id, &server.tablets[0], &ts_bind, &err))
        goto fatal;
    server.tablet_count = 1;

    const char *data_dir = fl_config_string(&cfg, "data.dir", "./data");
    char meta_dir[4096];
    snprintf(meta_dir, sizeof(meta_dir), "%s/coordinator", data_dir);
    fl_metastore_t *ms = NULL;
    if (fl_metastore_embedded_open(meta_dir, &ms, &err)) goto fatal;
    fl_table_defaults_t defaults = {(int32_t)bucket_number, (int32_t)replication_factor,
                                    (int32_t)max_bucket};
    int32_t tablet_ids[1] = {(int32_t)tablet_id};
    if (fl_catalog_init(&server.catalog, ms, &defaults, tablet_ids, 1, &err)) goto fatal;

    fl_log_config_t log_cfg = {(uint64_t)segment_bytes, (uint64_t)index_interval,
                               7LL * 24 * 3600 * 1000, (size_t)frame_max, flush_messages == 1};
    char tablet_dir[4096];
    snprintf(tablet_dir, sizeof(tablet_dir), "%s/tablet-server-%lld", data_dir, (long long)tablet_id);
    fl_replica_manager_init(&server.replicas, tablet_dir, &log_cfg);

    fl_main_state_t st;
    memset(&st, 0, sizeof(st));
    st.loop = uv_default_loop();
    st.server = &server;
    server.loop = st.loop;
    fl_rpc_limits_t limits = {(size_t)frame_max, 64u * 1024 * 1024, idle_ms};
    st.rpc = fl_rpc_server_new(st.loop, &limits, fl_server_handle);
    server.coordinator_role = (fl_server_role_t){&server, FL_ROLE_CS, &server.coordinator};
    server.tablet_roles[0] = (fl_server_role_t){&server, FL_ROLE_TS, &server.tablets[0]};
    int port = 0;
    if (fl_rpc_server_listen(st.rpc, cs_bind.host, cs_bind.port, &server.coordinator_role, &port,
                             &err))
        goto fatal;
    if (cs_bind.port == 0 && !fl_config_string(&cfg, "advertised.listeners", NULL))
        server.coordinator.port = port;
    if (fl_rpc_server_listen(st.rpc, ts_bind.host, ts_bind.port, &server.tablet_roles[0], &port,
                             &err))
        goto fatal;
    if (ts_bind.port == 0 && !fl_config_string(&cfg, "tablet-server.advertised.listeners", NULL))
        server.tablets[0].port = port;

    uv_signal_init(st.loop, &st.sigint);
    uv_signal_init(st.loop, &st.sigterm);
    st.sigint.data = st.sigterm.data = &st;
    uv_signal_start(&st.sigint, fl_on_signal, SIGINT);
    uv_signal_start(&st.sigterm, fl_on_signal, SIGTERM);
    signal(SIGPIPE, SIG_IGN);
    uv_timer_init(st.loop, &st.retention);
    st.retention.data = &st;
    uv_timer_start(&st.retention, fl_on_retention, FL_RETENTION_CHECK_MS, FL_RETENTION_CHECK_MS);
    uv_unref((uv_handle_t *)&st.retention);

    FL_INFO("fluss-c local mode: coordinator 0 on %s:%d, tablet server %d on %s:%d, data in %s "
            "(started in %lld ms)",
            server.coordinator.host, server.coordinator.port, server.tablets[0].id,
            server.tablets[0].host, server.tablets[0].port, data_dir,
            (long long)(fl_time_mono_ms() - t0));
    uv_run(st.loop, UV_RUN_DEFAULT);
    fl_rpc_server_destroy(st.rpc);
    fl_replica_manager_close(&server.replicas);
    ms->ops->close(ms);
    uv_loop_close(st.loop);
    fl_config_free(&cfg);
    FL_INFO("stopped");
    return 0;

usage_error:
    fprintf(stderr, "flussd: %s\n\n", err.msg);
    fl_usage(stderr);
    return 2;
fatal:
    FL_ERROR("flussd: %s", err.msg);
    return 1;
}
