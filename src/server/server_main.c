/*
 * server_main.c — flussd: parses the command line and server.yaml, builds
 * the servers of local mode — a coordinator and one or more tablet servers
 * (--tablet-servers), each an object with its own loops and state — starts
 * them, and shuts down cleanly on SIGINT or SIGTERM (stop accepting, answer
 * parked requests, close connections, close the logs and the store).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"
#include "common_vfs.h"
#include "common_vfs_fault.h"
#include "metastore.h"
#include "proto_api.h"
#include "server_cluster.h"
#include "server_config.h"
#include "server_disk.h"
#include "server_local.h"
#include "server_authz.h"
#include "server_scram.h"
#include "server_security.h"
#include "server_node.h"
#include "server_tablet.h"

#define FL_DEFAULT_COORDINATOR_LISTENER "FLUSS://127.0.0.1:9123"
#define FL_DEFAULT_TABLET_LISTENER "FLUSS://127.0.0.1:9124"

static void fl_usage(FILE *f) {
    fprintf(f,
            "usage: flussd [--config FILE] [--data-dir DIR] [-D key=value]... [--tablet-servers N]\n"
            "              [--verbose]\n"
            "       flussd coordinator [options]   one coordinator of a cluster\n"
            "       flussd tablet [options]        one tablet server of a cluster\n"
            "\n"
            "Without a subcommand: local mode, a coordinator (id 0) and a tablet\n"
            "server (id 0) in one process, metadata in DIR (no ZooKeeper).\n"
            "In a cluster every server is its own process on ZooKeeper:\n"
            "zookeeper.address (required), zookeeper.path.root (/fluss),\n"
            "zookeeper.client.session-timeout (60 s),\n"
            "zookeeper.client.connection-timeout (15 s), bind.listeners and\n"
            "advertised.listeners (lists: NAME://host:port,...), internal.listener.name\n"
            "(FLUSS: the listener servers use among themselves), tablet-server.id\n"
            "(required for a tablet server), tablet-server.rack, data.dir, remote.data.dir\n"
            "(shared by every server).\n"
            "\n"
            "  --config FILE     a Fluss-style server.yaml\n"
            "  --data-dir DIR    data directory (config key data.dir, default ./data)\n"
            "  -D key=value      override one configuration key\n"
            "  --tablet-servers N  run N tablet servers (ids tablet-server.id + i, ports\n"
            "                    tablet-server port + i) beside the coordinator (default 1)\n"
            "  --verbose         debug logging\n"
            "\n"
            "Keys: bind.listeners (coordinator, default %s),\n"
            "      tablet-server.bind.listeners (default %s),\n"
            "      advertised.listeners, tablet-server.advertised.listeners, tablet-server.id,\n"
            "      default.bucket.number, default.replication.factor, max.bucket.num,\n"
            "      netty.server.max-request-size, netty.connection.max-idle-time,\n"
            "      netty.server.num-network-threads (default: cores, at most 4),\n"
            "      netty.server.num-worker-threads (default 2),\n"
            "      log.segment.file-size, log.index.interval-size, log.flush.interval-messages,\n"
            "      log.flush.interval-ms, log.flush.mode (async | sync; fluss-c keys),\n"
            "      log.retention.check-interval (default 5 min: table.log.ttl expiry),\n"
            "      server.writer-id.expiration-time (default 7 d),\n"
            "      server.writer-id.expiration-check-interval (default 10 min),\n"
            "      server.data-disk.write-limit-ratio (default 0.85: client writes are refused\n"
            "      from this disk usage on; 1.0 = off), server.data-disk.write-recover-ratio\n"
            "      (default 0.80: ...until usage is back at or below it),\n"
            "      server.data-disk.check-interval (default 30 s),\n"
            "      kv.rocksdb.shared-block-cache.size (default 64mb, fluss-c key: one cache\n"
            "      for every kv tablet), kv.rocksdb.writebuffer.size (default 64mb per\n"
            "      tablet), kv.rocksdb.writebuffer.count (default 2),\n"
            "      kv.rocksdb.compression.per.level (default LZ4,LZ4,LZ4,LZ4,LZ4,ZSTD,ZSTD;\n"
            "      NO, SNAPPY, LZ4 or ZSTD per level, the last for deeper levels),\n"
            "      remote.data.dir (default <data.dir>/remote: KV snapshots, leases),\n"
            "      kv.snapshot.interval (default 10 min), kv.snapshot.num-retained (default 2),\n"
            "      kv.rocksdb.write-buffer-budget (default 256mb, fluss-c key: all memtables\n"
            "      of a tablet server together; 0 = no budget),\n"
            "      coordinator.producer-offsets.ttl (default 24 h),\n"
            "      coordinator.producer-offsets.cleanup-interval (default 1 h),\n"
            "      max.partition.num (default 1000 per table), auto-partition.check.interval\n"
            "      (default 10 min), auto-partition.test.clock-file (fluss-c test facility:\n"
            "      auto-partitioning's \"now\" is the epoch ms in that file; off by default)\n",
            FL_DEFAULT_COORDINATOR_LISTENER, FL_DEFAULT_TABLET_LISTENER);
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


#define FL_TABLET_SERVERS_LOCAL_MAX FL_LOCAL_TABLETS_MAX

/* The client and internal listeners of a cluster process: bind.listeners
 * (the one named internal.listener.name is the internal one; the first
 * other one is for clients, or the internal one when it is the only one)
 * and advertised.listeners (by the same names; the bound address when
 * absent). *text is what the process registers: every advertised
 * listener, "NAME://host:port,...". */
static int fl_cluster_listeners(const fl_config_t *cfg, const char *dflt, const char *internal_name,
                                fl_listener_addr_t *client, fl_listener_addr_t *internal,
                                fl_endpoint_t *client_adv, char *text, size_t cap,
                                fl_error_t *err) {
    fl_listener_addr_t bind[FL_LISTENERS_MAX], adv[FL_LISTENERS_MAX];
    size_t nb, na = 0;
    int rc = fl_config_listeners(cfg, "bind.listeners", dflt, bind, FL_LISTENERS_MAX, &nb, err);
    if (rc) return rc;
    if (fl_config_string(cfg, "advertised.listeners", NULL) &&
        (rc = fl_config_listeners(cfg, "advertised.listeners", NULL, adv, FL_LISTENERS_MAX, &na,
                                  err)))
        return rc;
    const fl_listener_addr_t *in = fl_listener_find(bind, nb, internal_name);
    if (!in)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "bind.listeners has no listener named '%s' (internal.listener.name)",
                          internal_name);
    *internal = *in;
    *client = *in;
    for (size_t i = 0; i < nb; i++)
        if (strcmp(bind[i].name, internal_name) != 0) {
            *client = bind[i];
            break;
        }
    size_t n = 0;
    text[0] = 0;
    for (size_t i = 0; i < nb; i++) {
        if (bind[i].port == 0)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "bind.listeners: a cluster process needs fixed ports (%s has 0)",
                              bind[i].name);
        const fl_listener_addr_t *a = fl_listener_find(adv, na, bind[i].name);
        const char *host = a ? a->host : strcmp(bind[i].host, "0.0.0.0") == 0 ? "127.0.0.1"
                                                                                : bind[i].host;
        int port = a ? a->port : bind[i].port;
        n += (size_t)snprintf(text + n, cap > n ? cap - n : 0, "%s%s://%s:%d", i ? "," : "",
                              bind[i].name, host, port);
        if (strcmp(bind[i].name, client->name) == 0) {
            snprintf(client_adv->host, sizeof(client_adv->host), "%s", host);
            client_adv->port = port;
        }
    }
    if (n >= cap) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "listeners too long");
    return 0;
}

/* `flussd coordinator` / `flussd tablet`: the role's configuration from
 * the local one's, then server_cluster.h runs it. */
static int fl_cluster_process(bool coordinator, const fl_config_t *cfg,
                              fl_coordinator_config_t *ccfg, fl_tablet_config_t *tcfg,
                              const char *data_dir, const sigset_t *sigs, fl_error_t *err) {
    static char listeners[2048];
    fl_cluster_opts_t o = {0};
    o.zk_address = fl_config_string(cfg, "zookeeper.address", NULL);
    if (!o.zk_address)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "zookeeper.address is required in %s mode",
                          coordinator ? "coordinator" : "tablet");
    o.zk_root = fl_config_string(cfg, "zookeeper.path.root", "/fluss");
    int64_t session_ms;
    int rc = fl_config_duration_ms(cfg, "zookeeper.client.session-timeout", 60 * 1000,
                                   &session_ms, err);
    if (rc) return rc;
    o.zk_session_timeout_ms = (int)session_ms;
    int64_t connect_ms;
    rc = fl_config_duration_ms(cfg, "zookeeper.client.connection-timeout", 15 * 1000, &connect_ms,
                               err);
    if (rc) return rc;
    o.zk_connect_timeout_ms = (int)connect_ms;
    o.internal_name = fl_config_string(cfg, "internal.listener.name", "FLUSS");
    o.rack = fl_config_string(cfg, "tablet-server.rack", NULL);
    o.listeners = listeners;
    fl_listener_addr_t client, internal;
    fl_endpoint_t adv = {0};
    rc = fl_cluster_listeners(cfg, coordinator ? FL_DEFAULT_COORDINATOR_LISTENER
                                               : FL_DEFAULT_TABLET_LISTENER,
                              o.internal_name, &client, &internal, &adv, listeners,
                              sizeof(listeners), err);
    if (rc) return rc;
    bool shared = strcmp(client.name, internal.name) == 0;
    /* SASL between the servers themselves is not built: the internal
     * listener stays PLAINTEXT (on loopback or a private network) */
    fl_sec_protocol_t internal_proto;
    rc = fl_security_protocol_of(cfg, internal.name, &internal_proto, err);
    if (rc) return rc;
    if (internal_proto != FL_SEC_PLAINTEXT)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "security.protocol.map: the internal listener %s must be PLAINTEXT "
                          "(servers do not authenticate to each other yet); give clients a "
                          "listener of their own", internal.name);
    static fl_listener_security_t *security;
    rc = fl_listener_security_load(cfg, client.name, &security, err);
    if (rc) return rc;
    if (coordinator) ccfg->client_security = security;
    else tcfg->client_security = security;
    if (coordinator) {
        static char meta_dir[4096];
        snprintf(meta_dir, sizeof(meta_dir), "%.4000s/coordinator", data_dir);
        ccfg->meta_dir = meta_dir;
        snprintf(ccfg->bind_host, sizeof(ccfg->bind_host), "%s", client.host);
        ccfg->bind_port = client.port;
        ccfg->advertised = adv;
        ccfg->client_listener_internal = shared;
        if (!shared) {
            snprintf(ccfg->internal_host, sizeof(ccfg->internal_host), "%s", internal.host);
            ccfg->internal_port = internal.port;
        }
        return fl_cluster_coordinator_main(ccfg, &o, sigs, err);
    }
    if (!fl_config_string(cfg, "tablet-server.id", NULL))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "tablet-server.id is required in tablet mode");
    snprintf(tcfg->data_dir, sizeof(tcfg->data_dir), "%s", data_dir);
    snprintf(tcfg->bind_host, sizeof(tcfg->bind_host), "%s", client.host);
    tcfg->bind_port = client.port;
    tcfg->advertised = adv;
    tcfg->advertised.id = tcfg->id;
    tcfg->client_listener_internal = shared;
    /* where its followers find the other tablet servers (their registered
     * listener lists) */
    snprintf(tcfg->internal_listener_name, sizeof(tcfg->internal_listener_name), "%s",
             o.internal_name);
    if (!shared) {
        snprintf(tcfg->internal_host, sizeof(tcfg->internal_host), "%s", internal.host);
        tcfg->internal_port = internal.port;
    }
    return fl_cluster_tablet_main(tcfg, &o, sigs, err);
}

/* Test hook (DESIGN.md, "Fault tests"): FLUSS_TEST_IO_FAULTS=<spec>
 * (common_vfs_fault.h) routes every disk operation of the process through
 * the fault-injecting seam table. Read once, before any thread starts;
 * never set in production. *out stays NULL without the variable. */
static int fl_test_io_faults(fl_vfs_fault_t **out, fl_error_t *err) {
    *out = NULL;
    const char *spec = getenv("FLUSS_TEST_IO_FAULTS");
    if (!spec || !*spec) return 0;
    fl_vfs_fault_config_t fc;
    int rc = fl_vfs_fault_parse(spec, &fc, err);
    if (rc) return rc;
    *out = fl_vfs_fault_new(&fc);
    fl_vfs_install(fl_vfs_fault_ops(), *out);
    FL_WARN("test hook FLUSS_TEST_IO_FAULTS is on: disk operations fail on purpose (%s)", spec);
    return 0;
}

static void fl_test_io_faults_end(fl_vfs_fault_t *f) {
    if (!f) return;
    char line[512];
    fl_vfs_fault_summary(f, line, sizeof(line));
    FL_WARN("vfs fault summary: %s", line);
    fl_vfs_install(NULL, NULL);
    fl_vfs_fault_free(f);
}

int main(int argc, char **argv) {
    fl_config_t cfg;
    fl_config_init(&cfg);
    fl_error_t err;
    fl_err_clear(&err);
    const char *config_path = NULL;
    long tablet_servers = 1;
    fl_config_t overrides;
    fl_config_init(&overrides);
    /* flussd [coordinator | tablet] [options]: one role of a cluster, or
     * local mode (both roles in one process) without a subcommand */
    enum { FL_MODE_LOCAL, FL_MODE_COORDINATOR, FL_MODE_TABLET } mode = FL_MODE_LOCAL;
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "coordinator") == 0) mode = FL_MODE_COORDINATOR, first = 2;
    else if (argc > 1 && strcmp(argv[1], "tablet") == 0) mode = FL_MODE_TABLET, first = 2;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fl_usage(stdout);
            return 0;
        } else if (strcmp(a, "--config") == 0 && i + 1 < argc) {
            config_path = argv[++i];
        } else if (strcmp(a, "--data-dir") == 0 && i + 1 < argc) {
            fl_config_set(&overrides, "data.dir", argv[++i]);
        } else if (strcmp(a, "--tablet-servers") == 0 && i + 1 < argc) {
            char *end;
            tablet_servers = strtol(argv[++i], &end, 10);
            if (*end || tablet_servers < 1 || tablet_servers > FL_TABLET_SERVERS_LOCAL_MAX) {
                fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "--tablet-servers takes 1..%d",
                           FL_TABLET_SERVERS_LOCAL_MAX);
                goto usage_error;
            }
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
    fl_vfs_fault_t *io_faults = NULL;
    if (fl_test_io_faults(&io_faults, &err)) goto usage_error;
    for (size_t i = 0; i < overrides.values.count; i++)
        fl_config_set(&cfg, overrides.values.items[i].key, overrides.values.items[i].value);
    fl_config_free(&overrides);

    int64_t t0 = fl_time_mono_ms();
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int64_t net_default = cores < 1 ? 1 : cores > 4 ? 4 : cores;
    int64_t bucket_number, replication_factor, max_bucket, max_partition, frame_max, idle_ms,
        tablet_id;
    int64_t segment_bytes, index_interval, flush_messages, flush_ms, net_threads, worker_threads;
    int64_t kv_cache_bytes, kv_wb_bytes, kv_wb_count, kv_wb_budget, snap_interval, snap_retained;
    int64_t retention_check_ms, writer_expiration_ms, writer_check_ms, tiering_ms;
    int64_t replica_lag_ms, min_isr;
    int64_t producer_ttl, producer_cleanup;
    int64_t auto_partition_ms, disk_check_ms;
    double disk_limit, disk_recover;
    if (fl_config_int(&cfg, "default.bucket.number", 1, &bucket_number, &err) ||
        fl_config_int(&cfg, "default.replication.factor", 1, &replication_factor, &err) ||
        fl_config_int(&cfg, "max.bucket.num", FL_MAX_BUCKET_NUM_DEFAULT, &max_bucket, &err) ||
        fl_config_int(&cfg, "max.partition.num", FL_MAX_PARTITION_NUM_DEFAULT, &max_partition,
                      &err) ||
        fl_config_int(&cfg, "tablet-server.id", 0, &tablet_id, &err) ||
        fl_config_bytes(&cfg, "netty.server.max-request-size", 100LL * 1024 * 1024, &frame_max,
                        &err) ||
        fl_config_duration_ms(&cfg, "netty.connection.max-idle-time", 10LL * 60 * 1000, &idle_ms,
                              &err) ||
        fl_config_int(&cfg, "netty.server.num-network-threads", net_default, &net_threads, &err) ||
        fl_config_int(&cfg, "netty.server.num-worker-threads", 2, &worker_threads, &err) ||
        fl_config_bytes(&cfg, "log.segment.file-size", 1024LL * 1024 * 1024, &segment_bytes,
                        &err) ||
        fl_config_bytes(&cfg, "log.index.interval-size", 4096, &index_interval, &err) ||
        fl_config_int(&cfg, "log.flush.interval-messages", INT64_MAX, &flush_messages, &err) ||
        fl_config_duration_ms(&cfg, "log.flush.interval-ms", 0, &flush_ms, &err) ||
        fl_config_bytes(&cfg, "kv.rocksdb.shared-block-cache.size", 64LL << 20, &kv_cache_bytes,
                        &err) ||
        fl_config_bytes(&cfg, "kv.rocksdb.writebuffer.size", 64LL << 20, &kv_wb_bytes, &err) ||
        fl_config_int(&cfg, "kv.rocksdb.writebuffer.count", 2, &kv_wb_count, &err) ||
        fl_config_bytes(&cfg, "kv.rocksdb.write-buffer-budget", 256LL << 20, &kv_wb_budget,
                        &err) ||
        fl_config_duration_ms(&cfg, "kv.snapshot.interval", 10LL * 60 * 1000, &snap_interval,
                              &err) ||
        fl_config_int(&cfg, "kv.snapshot.num-retained", 2, &snap_retained, &err) ||
        fl_config_duration_ms(&cfg, "log.retention.check-interval", 5LL * 60 * 1000,
                              &retention_check_ms, &err) ||
        fl_config_duration_ms(&cfg, "remote.log.task-interval-duration", 60LL * 1000,
                              &tiering_ms, &err) ||
        fl_config_duration_ms(&cfg, "server.writer-id.expiration-time", 7LL * 24 * 3600 * 1000,
                              &writer_expiration_ms, &err) ||
        fl_config_duration_ms(&cfg, "server.writer-id.expiration-check-interval",
                              10LL * 60 * 1000, &writer_check_ms, &err) ||
        fl_config_duration_ms(&cfg, "log.replica.max-lag-time", 30LL * 1000, &replica_lag_ms,
                              &err) ||
        fl_config_int(&cfg, "log.replica.min-in-sync-replicas-number", 1, &min_isr, &err) ||
        fl_config_duration_ms(&cfg, "coordinator.producer-offsets.ttl",
                              FL_PRODUCER_OFFSETS_TTL_MS_DEFAULT, &producer_ttl, &err) ||
        fl_config_duration_ms(&cfg, "coordinator.producer-offsets.cleanup-interval",
                              FL_PRODUCER_OFFSETS_CLEANUP_MS_DEFAULT, &producer_cleanup, &err) ||
        fl_config_duration_ms(&cfg, "auto-partition.check.interval",
                              FL_AUTO_PARTITION_INTERVAL_MS_DEFAULT, &auto_partition_ms, &err) ||
        fl_config_double(&cfg, "server.data-disk.write-limit-ratio", FL_DISK_LIMIT_RATIO_DEFAULT,
                         &disk_limit, &err) ||
        fl_config_double(&cfg, "server.data-disk.write-recover-ratio",
                         FL_DISK_RECOVER_RATIO_DEFAULT, &disk_recover, &err) ||
        fl_config_duration_ms(&cfg, "server.data-disk.check-interval",
                              FL_DISK_CHECK_INTERVAL_MS_DEFAULT, &disk_check_ms, &err) ||
        fl_disk_guard_check_config(disk_limit, disk_recover, &err))
        goto fatal;
    if (disk_check_ms < 1) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG,
                   "server.data-disk.check-interval must be a positive duration, but was %lld ms",
                   (long long)disk_check_ms);
        goto fatal;
    }
    if (replica_lag_ms < 1 || min_isr < 1 || min_isr > 16) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG,
                   "log.replica.max-lag-time must be positive and "
                   "log.replica.min-in-sync-replicas-number 1..16");
        goto fatal;
    }
    if (auto_partition_ms < 1) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "auto-partition.check.interval must be positive");
        goto fatal;
    }
    if (retention_check_ms < 1 || writer_expiration_ms < 1 || writer_check_ms < 1) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG,
                   "log.retention.check-interval, server.writer-id.expiration-time and "
                   "server.writer-id.expiration-check-interval must be greater than 0");
        goto fatal;
    }
    if (tiering_ms < 0) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG,
                   "remote.log.task-interval-duration must not be negative (0 turns tiering off)");
        goto fatal;
    }
    if (producer_ttl < 1 || producer_cleanup < 1) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG,
                   "coordinator.producer-offsets.ttl and .cleanup-interval must be positive");
        goto fatal;
    }
    if (snap_interval < 1 || snap_retained < 1 || snap_retained > 1000) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG,
                   "kv.snapshot.interval must be positive and kv.snapshot.num-retained 1..1000");
        goto fatal;
    }
    int kv_compression[FL_KV_LEVELS_MAX] = {0}, kv_compression_levels = 0;
    const char *kv_compression_text =
        fl_config_string(&cfg, "kv.rocksdb.compression.per.level", NULL);
    if (kv_compression_text &&
        fl_kv_compression_parse(kv_compression_text, kv_compression, &kv_compression_levels, &err))
        goto fatal;
    if (kv_wb_budget < 0 || kv_cache_bytes < 1 || kv_wb_bytes < 64 * 1024 || kv_wb_count < 1 || kv_wb_count > 64) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG,
                   "kv.rocksdb.shared-block-cache.size must be positive, "
                   "kv.rocksdb.writebuffer.size at least 64kb and "
                   "kv.rocksdb.writebuffer.count 1..64");
        goto fatal;
    }
    if (bucket_number < 1 || replication_factor < 1 || max_bucket < 1 || frame_max < 16 ||
        flush_messages < 1 || max_bucket > INT32_MAX || max_partition < 0 ||
        max_partition > INT32_MAX) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG,
                   "bucket, replication, size and flush settings must be positive "
                   "(max.partition.num: 0..2147483647)");
        goto fatal;
    }
    if (net_threads < 1 || net_threads > FL_TABLET_LOOPS_MAX || worker_threads < 1 ||
        worker_threads > FL_WORKQ_THREADS_MAX) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG,
                   "netty.server.num-network-threads takes 1..%d and "
                   "netty.server.num-worker-threads 1..%d",
                   FL_TABLET_LOOPS_MAX, FL_WORKQ_THREADS_MAX);
        goto fatal;
    }
    const char *flush_mode = fl_config_string(&cfg, "log.flush.mode", "async");
    if (strcmp(flush_mode, "async") != 0 && strcmp(flush_mode, "sync") != 0) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "log.flush.mode is async or sync, not '%s'",
                   flush_mode);
        goto fatal;
    }

    const char *data_dir = fl_config_string(&cfg, "data.dir", "./data");
    /* remote.data.dir: KV snapshots (and their leases), tiered log
     * segments; a folder of the data dir unless set. Absolute: clients
     * open these paths themselves. */
    static char remote_dir[4096];
    const char *remote = fl_config_string(&cfg, "remote.data.dir", NULL);
    char cwd[2048] = "";
    if (!getcwd(cwd, sizeof(cwd))) cwd[0] = 0;
    if (remote) {
        if (strncmp(remote, "file://", 7) == 0) remote += 7;
        else if (strncmp(remote, "file:", 5) == 0) remote += 5;
        if (remote[0] == '/') snprintf(remote_dir, sizeof(remote_dir), "%s", remote);
        else snprintf(remote_dir, sizeof(remote_dir), "%s/%.2000s", cwd, remote);
    } else if (data_dir[0] == '/') {
        snprintf(remote_dir, sizeof(remote_dir), "%.4000s/remote", data_dir);
    } else {
        snprintf(remote_dir, sizeof(remote_dir), "%s/%.1900s/remote", cwd, data_dir);
    }
    fl_rpc_limits_t limits = {(size_t)frame_max, 64u * 1024 * 1024, idle_ms};

    static fl_coordinator_config_t ccfg;
    fl_listener_addr_t cs_bind, ts_bind;
    fl_endpoint_t cs_ep, ts_ep;
    if (fl_endpoint_from(&cfg, "bind.listeners", "advertised.listeners",
                         FL_DEFAULT_COORDINATOR_LISTENER, 0, &cs_ep, &cs_bind, &err) ||
        fl_endpoint_from(&cfg, "tablet-server.bind.listeners",
                         "tablet-server.advertised.listeners", FL_DEFAULT_TABLET_LISTENER,
                         (int32_t)tablet_id, &ts_ep, &ts_bind, &err))
        goto fatal;
    char meta_dir[4096];
    snprintf(meta_dir, sizeof(meta_dir), "%s/coordinator", data_dir);
    ccfg.meta_dir = meta_dir;
    ccfg.defaults = (fl_table_defaults_t){.bucket_number = (int32_t)bucket_number,
                                          .replication_factor = (int32_t)replication_factor,
                                          .max_bucket_num = (int32_t)max_bucket,
                                          .max_partition_num = (int32_t)max_partition};
    if (fl_lake_config_parse(&cfg.values, cwd, &ccfg.defaults.lake, &err)) goto fatal;
    ccfg.tablet_count = (size_t)tablet_servers;
    for (long i = 0; i < tablet_servers; i++) ccfg.tablet_ids[i] = (int32_t)(tablet_id + i);
    snprintf(ccfg.bind_host, sizeof(ccfg.bind_host), "%s", cs_bind.host);
    ccfg.bind_port = cs_bind.port;
    ccfg.advertised = cs_ep;
    if (cs_bind.port == 0 && !fl_config_string(&cfg, "advertised.listeners", NULL))
        ccfg.advertised.port = 0;
    ccfg.limits = limits;
    ccfg.writer_id_block = FL_WRITER_ID_BLOCK_DEFAULT;
    snprintf(ccfg.remote_dir, sizeof(ccfg.remote_dir), "%s", remote_dir);
    ccfg.producer_offsets_ttl_ms = producer_ttl;
    ccfg.producer_offsets_cleanup_ms = producer_cleanup;
    ccfg.auto_partition_interval_ms = auto_partition_ms;
    const char *clock_file = fl_config_string(&cfg, "auto-partition.test.clock-file", "");
    if (strlen(clock_file) >= sizeof(ccfg.auto_partition_clock_file)) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "auto-partition.test.clock-file is too long");
        goto fatal;
    }
    snprintf(ccfg.auto_partition_clock_file, sizeof(ccfg.auto_partition_clock_file), "%s",
             clock_file);

    /* signals go to sigwait below, never to a server thread */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    static fl_tablet_config_t tcfgs[FL_TABLET_SERVERS_LOCAL_MAX];
    for (long i = 0; i < tablet_servers; i++) {
        fl_tablet_config_t tcfg;
        memset(&tcfg, 0, sizeof(tcfg));
        tcfg.id = (int32_t)(tablet_id + i);
        snprintf(tcfg.data_dir, sizeof(tcfg.data_dir), "%s/tablet-server-%d", data_dir, tcfg.id);
        snprintf(tcfg.bind_host, sizeof(tcfg.bind_host), "%s", ts_bind.host);
        tcfg.bind_port = ts_bind.port == 0 ? 0 : ts_bind.port + (int)i;
        tcfg.advertised = ts_ep;
        tcfg.advertised.id = tcfg.id;
        if (ts_bind.port == 0 && !fl_config_string(&cfg, "tablet-server.advertised.listeners", NULL))
            tcfg.advertised.port = 0;
        else
            tcfg.advertised.port = ts_ep.port + (int)i;
        tcfg.limits = limits;
        tcfg.network_threads = (size_t)net_threads;
        tcfg.worker_threads = (size_t)worker_threads;
        tcfg.log = (fl_log_config_t){(uint64_t)segment_bytes, (uint64_t)index_interval,
                                     7LL * 24 * 3600 * 1000, (size_t)frame_max, false, true, false};
        tcfg.durability = (fl_durability_t){flush_messages, flush_ms, strcmp(flush_mode, "sync") == 0};
        tcfg.kv_block_cache_bytes = (size_t)kv_cache_bytes;
        tcfg.kv_write_buffer_bytes = (size_t)kv_wb_bytes;
        tcfg.kv_write_buffer_count = (int)kv_wb_count;
        tcfg.kv_write_buffer_budget = (size_t)kv_wb_budget;
        memcpy(tcfg.kv_compression, kv_compression, sizeof(kv_compression));
        tcfg.kv_compression_levels = kv_compression_levels;
        snprintf(tcfg.remote_dir, sizeof(tcfg.remote_dir), "%s", remote_dir);
        tcfg.kv_snapshot_interval_ms = snap_interval;
        tcfg.kv_snapshot_retained = (int)snap_retained;
        tcfg.retention_check_ms = retention_check_ms;
        tcfg.remote_log_interval_ms = tiering_ms;
        tcfg.writer_expiration_ms = writer_expiration_ms;
        tcfg.writer_expiration_check_ms = writer_check_ms;
        tcfg.replica_max_lag_ms = replica_lag_ms;
        tcfg.replica_min_isr = (int32_t)min_isr;
        tcfg.disk_limit_ratio = disk_limit;
        tcfg.disk_recover_ratio = disk_recover;
        tcfg.disk_check_interval_ms = disk_check_ms;
        tcfgs[i] = tcfg;
    }
    /* client listeners that authenticate (security.protocol.map) */
    static fl_listener_security_t *cs_security, *ts_security;
    if (mode == FL_MODE_LOCAL &&
        (fl_listener_security_load(&cfg, cs_bind.name, &cs_security, &err) ||
         fl_listener_security_load(&cfg, ts_bind.name, &ts_security, &err)))
        goto fatal;
    ccfg.client_security = cs_security;
    for (long i = 0; i < tablet_servers; i++) tcfgs[i].client_security = ts_security;
    /* authorization (authorizer.enabled): each role decides on its own */
    static fl_authz_t *authz[1 + FL_TABLET_SERVERS_LOCAL_MAX];
    for (long i = 0; i <= tablet_servers; i++)
        if (fl_authz_new(&cfg, &authz[i], &err)) goto fatal;
    ccfg.authz = authz[0];
    for (long i = 0; i < tablet_servers; i++) tcfgs[i].authz = authz[1 + i];
    /* SCRAM users: each role its own copy */
    static fl_scram_users_t *scram[1 + FL_TABLET_SERVERS_LOCAL_MAX];
    for (long i = 0; i <= tablet_servers; i++) scram[i] = fl_scram_users_new();
    ccfg.scram = scram[0];
    for (long i = 0; i < tablet_servers; i++) tcfgs[i].scram = scram[1 + i];
    if (mode != FL_MODE_LOCAL) {
        int rc = fl_cluster_process(mode == FL_MODE_COORDINATOR, &cfg, &ccfg, &tcfgs[0], data_dir,
                                    &sigs, &err);
        fl_config_free(&cfg);
        fl_test_io_faults_end(io_faults);
        if (rc) goto fatal;
        FL_INFO("stopped");
        return 0;
    }
    static fl_local_cluster_t lc;
    if (fl_local_cluster_new(&ccfg, tcfgs, (size_t)tablet_servers, &lc, &err) ||
        fl_local_cluster_start(&lc, &err))
        goto fatal;
    fl_coordinator_server_t *cs = lc.cs;
    fl_tablet_server_t **tablets = lc.tablets;

    FL_INFO("fluss-c local mode: coordinator 0 on %s:%d, %ld tablet server(s) from id %d on "
            "%s:%d, %zu network and %zu worker threads each, log.flush.mode %s, data in %s "
            "(started in %lld ms)",
            cs->self.host, cs->self.port, tablet_servers, tablets[0]->self.id,
            tablets[0]->self.host, tablets[0]->self.port, tablets[0]->loop_count,
            (size_t)worker_threads, flush_mode, data_dir, (long long)(fl_time_mono_ms() - t0));
    int signum = 0;
    sigwait(&sigs, &signum);
    FL_INFO("received %s, shutting down", signum == SIGINT ? "SIGINT" : "SIGTERM");
    /* stop accepting and answer parked requests first, then close */
    fl_local_cluster_destroy(&lc);
    fl_listener_security_free(cs_security);
    fl_listener_security_free(ts_security);
    for (long i = 0; i <= tablet_servers; i++) fl_authz_free(authz[i]);
    for (long i = 0; i <= tablet_servers; i++) fl_scram_users_free(scram[i]);
    fl_config_free(&cfg);
    fl_test_io_faults_end(io_faults);
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
