/*
 * server_tablet.c — the tablet server object (server_tablet.h): lifecycle
 * (its parts built, started, stopped and freed in order), what a published
 * or forgotten table means for the replicas here, bucket → replica
 * resolution, and the watermark hook into the purgatory. The parts are
 * their own modules: server_tablet_catalog (hosted tables, peers, metadata
 * cache), server_tablet_kv (primary-key tablets), server_tablet_duties
 * (the periodic work).
 */
#include "server_tablet.h"
#include "server_security.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common_alloc.h"
#include "common_duration.h"
#include "common_fs.h"
#include "common_log.h"
#include "common_time.h"
#include "proto_api.h"
#include "server_call.h"
#include "server_fetcher.h"
#include "replica_replication.h"
#include "server_config.h"
#include "server_hosted_table.h"
#include "server_lake_index.h"
#include "server_tablet_duties.h"
#include "server_tiering.h"

#define FL_RETENTION_CHECK_MS_DEFAULT (5 * 60 * 1000)

/* ---- hosted tables ---- */

/* Auto-increment blocks come from the coordinator (the one durable
 * counter per table that every bucket draws from), asked with fluss-c's
 * RESERVE_AUTO_INCREMENT; on the kv writer, which may wait. */
static int fl_tablet_autoinc_reserve(void *ctx, int64_t table_id, int64_t count, int64_t *first,
                                     fl_error_t *err) {
    fl_tablet_server_t *ts = ctx;
    if (!ts->coordinator)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          "Failed to fetch auto-increment values: no coordinator.");
    Fluss__ReserveAutoIncrementRequest req = FLUSS__RESERVE_AUTO_INCREMENT_REQUEST__INIT;
    req.table_id = table_id;
    req.count = count;
    ProtobufCMessage *resp = NULL;
    int rc = fl_server_call(ts->coordinator, FL_API_RESERVE_AUTO_INCREMENT, &req.base,
                            &fluss__reserve_auto_increment_response__descriptor, &resp, err);
    if (rc) return rc;
    *first = ((Fluss__ReserveAutoIncrementResponse *)resp)->first;
    protobuf_c_message_free_unpacked(resp, NULL);
    return 0;
}

/* The replicas of t open here keep what its lake lacks, or no longer. */
static void fl_tablet_lake_guard(fl_tablet_server_t *ts, const fl_hosted_table_t *t) {
    size_t n;
    fl_replica_t **all = fl_replica_manager_list(&ts->replicas, &n);
    for (size_t i = 0; i < n; i++) {
        if (all[i]->table_id == t->table_id) atomic_store(&all[i]->lake_guard, t->lake_enabled);
        fl_replica_unref(all[i]);
    }
    fl_free(all);
}

void fl_tablet_server_publish_table(fl_tablet_server_t *ts, fl_hosted_table_t *t) {
    if (t->kv) { /* set before the table is published */
        t->kv->autoinc_reserve = fl_tablet_autoinc_reserve;
        t->kv->autoinc_ctx = ts;
    }
    fl_hosted_table_unref(fl_tablet_catalog_put(ts->catalog, t));
    fl_tablet_lake_guard(ts, t);
}

void fl_tablet_server_forget_table(fl_tablet_server_t *ts, const char *db, const char *name) {
    fl_hosted_table_t *old = fl_tablet_catalog_remove(ts->catalog, db, name);
    /* what is left of it here goes: the table directory (partitions
     * included), its tiered log and KV snapshots */
    if (old) fl_tablet_server_drop_table(ts, db, name, old->table_id);
    fl_hosted_table_unref(old);
}

void fl_tablet_server_drop_table(fl_tablet_server_t *ts, const char *db, const char *name,
                                 int64_t table_id) {
    fl_error_t e;
    fl_replica_manager_drop_table(&ts->replicas, db, name, table_id, &e);
    /* its tiered log too, as the reference's RemoteStorageCleaner does */
    fl_tablet_tiering_drop(ts, db, name, table_id, NULL, -1);
    /* the table's KV snapshots go with it */
    char remote[8400];
    snprintf(remote, sizeof(remote), "%s/kv/%s/%s-%lld", ts->cfg.remote_dir, db, name,
             (long long)table_id);
    if (fl_fs_remove_tree(remote, &e)) FL_WARN("dropping %s: %s", remote, e.msg);
}

void fl_tablet_server_drop_partition(fl_tablet_server_t *ts, const char *db, const char *name,
                                     int64_t table_id, const char *partition_name,
                                     int64_t partition_id) {
    fl_error_t e;
    fl_replica_manager_drop_partition(&ts->replicas, db, name, table_id, partition_name,
                                      partition_id, &e);
    fl_tablet_tiering_drop(ts, db, name, table_id, partition_name, partition_id);
}

int fl_tablet_server_replica(fl_tablet_server_t *ts, int64_t table_id, const fl_hosted_table_t *t,
                             bool has_partition, int64_t partition_id, int32_t bucket,
                             fl_replica_t **out, fl_error_t *err) {
    if (!t)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                          "Unknown table or bucket: TableBucket{tableId=%lld, bucket=%d}",
                          (long long)table_id, bucket);
    const fl_hosted_partition_t *part = NULL;
    if (has_partition) {
        for (size_t i = 0; i < t->partition_count && !part; i++)
            if (t->partitions[i].partition_id == partition_id) part = &t->partitions[i];
        if (!part)
            return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                              "Unknown table or bucket: TableBucket{tableId=%lld, "
                              "partitionId=%lld, bucket=%d}",
                              (long long)t->table_id, (long long)partition_id, bucket);
    } else if (t->partitioned) {
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                          "Table %lld is partitioned: a bucket needs a partition id.",
                          (long long)t->table_id);
    }
    int32_t count = part ? part->bucket_count : t->bucket_count;
    const fl_ms_bucket_t *buckets = part ? part->buckets : t->buckets;
    if (bucket < 0 || bucket >= count)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                          "Unknown table or bucket: TableBucket{tableId=%lld, bucket=%d}",
                          (long long)t->table_id, bucket);
    if (buckets[bucket].leader != ts->self.id)
        return fl_err_set(err, FLUSS_ERR_NOT_LEADER_OR_FOLLOWER,
                          "Leader of bucket %d of table %lld is server %d, not %d.", bucket,
                          (long long)t->table_id, buckets[bucket].leader, ts->self.id);
    return fl_tablet_server_open_replica(ts, t, has_partition, partition_id, bucket, out, err);
}

int fl_tablet_server_open_replica(fl_tablet_server_t *ts, const fl_hosted_table_t *t,
                                  bool has_partition, int64_t partition_id, int32_t bucket,
                                  fl_replica_t **out, fl_error_t *err) {
    const fl_hosted_partition_t *part = has_partition ? fl_hosted_table_partition(t, partition_id)
                                                      : NULL;
    if (has_partition && !part)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                          "Unknown partition %lld of table %lld", (long long)partition_id,
                          (long long)t->table_id);
    int64_t pid = part ? part->partition_id : -1;
    fl_replica_t *r = fl_replica_manager_find(&ts->replicas, t->table_id, pid, bucket);
    if (r) {
        *out = r;
        return 0;
    }
    /* A bucket with one replica has no other place to be led from: it
     * leads at once. One with several waits for NOTIFY_LEADER_AND_ISR
     * (FL_REPLICA_UNTOLD): the metadata that sent a request here may be
     * older than the leadership, and until told, the replica knows
     * neither its ISR nor its epoch. */
    int32_t count = part ? part->bucket_count : t->bucket_count;
    const fl_ms_bucket_t *buckets = part ? part->buckets : t->buckets;
    int role = bucket >= 0 && bucket < count && buckets[bucket].replica_count > 1
                   ? FL_REPLICA_UNTOLD
                   : FL_REPLICA_LEADER;
    /* a tiered log's TTL is for its remote segments (server_tiering.h) */
    int rc = fl_replica_manager_open_as(&ts->replicas, t->database, t->name, t->table_id, pid,
                                        part ? part->name : NULL, bucket,
                                        ts->remote_storage ? 0 : t->ttl_ms, role, out, err);
    /* before a retention pass can see it (retention runs on a worker) */
    if (!rc) atomic_store(&(*out)->lake_guard, t->lake_enabled);
    return rc;
}

/* ---- watermarks → delayed operations and the kv tablet ---- */

static void fl_tablet_on_watermark(void *ctx, fl_replica_t *r) {
    fl_tablet_server_t *ts = ctx;
    fl_bucket_key_t key = {r->table_id, r->partition_id, r->bucket};
    fl_purgatory_check(ts->purgatory, &key);
    fl_tablet_kv_committed(ts->kv, r); /* the replica tells its kv what is committed */
}

size_t fl_tablet_server_snapshot_now(fl_tablet_server_t *ts) {
    return fl_tablet_kv_snapshot_round(ts->kv, ts->coordinator, &ts->coordinator_epoch);
}

/* ---- lifecycle ---- */

/* The kv tablets' part of the configuration (its defaults applied there). */
static void fl_tablet_kv_config_from(const fl_tablet_config_t *cfg, fl_tablet_kv_config_t *out) {
    *out = (fl_tablet_kv_config_t){
        .server_id = cfg->id,
        .block_cache_bytes = cfg->kv_block_cache_bytes,
        .write_buffer_bytes = cfg->kv_write_buffer_bytes,
        .write_buffer_count = cfg->kv_write_buffer_count,
        .write_buffer_budget = cfg->kv_write_buffer_budget,
        .compression_levels = cfg->kv_compression_levels,
        .snapshot_retained = cfg->kv_snapshot_retained,
    };
    memcpy(out->compression, cfg->kv_compression, sizeof(out->compression));
    _Static_assert(sizeof(out->remote_dir) == sizeof(cfg->remote_dir), "remote_dir");
    memcpy(out->remote_dir, cfg->remote_dir, sizeof(out->remote_dir));
}

int fl_tablet_server_new(const fl_tablet_config_t *cfg, fl_tablet_server_t **out, fl_error_t *err) {
    fl_tablet_server_t *ts = fl_calloc(1, sizeof(*ts));
    ts->cfg = *cfg;
    ts->catalog = fl_tablet_catalog_new(ts->cfg.internal_listener_name);
    if (ts->cfg.network_threads < 1) ts->cfg.network_threads = 1;
    if (ts->cfg.network_threads > FL_TABLET_LOOPS_MAX) ts->cfg.network_threads = FL_TABLET_LOOPS_MAX;
    if (ts->cfg.worker_threads < 1) ts->cfg.worker_threads = 1;
    if (ts->cfg.retention_check_ms <= 0) ts->cfg.retention_check_ms = FL_RETENTION_CHECK_MS_DEFAULT;
    if (ts->cfg.writer_expiration_ms <= 0) ts->cfg.writer_expiration_ms = 7LL * 24 * 3600 * 1000;
    if (ts->cfg.writer_expiration_check_ms <= 0)
        ts->cfg.writer_expiration_check_ms = 10LL * 60 * 1000;
    if (ts->cfg.kv_snapshot_interval_ms <= 0) ts->cfg.kv_snapshot_interval_ms = 10LL * 60 * 1000;
    if (ts->cfg.disk_limit_ratio <= 0 || ts->cfg.disk_limit_ratio > 1.0) ts->cfg.disk_limit_ratio = 1.0;
    if (ts->cfg.disk_check_interval_ms <= 0)
        ts->cfg.disk_check_interval_ms = FL_DISK_CHECK_INTERVAL_MS_DEFAULT;
    if (!ts->cfg.remote_dir[0])
        snprintf(ts->cfg.remote_dir, sizeof(ts->cfg.remote_dir), "%.4000s/../remote", cfg->data_dir);
    ts->self = cfg->advertised;
    ts->self.id = cfg->id;
    fl_disk_guard_init(&ts->disk, cfg->id, cfg->data_dir, ts->cfg.disk_limit_ratio,
                       ts->cfg.disk_recover_ratio);
    char name[48]; /* thread names are cut to 15 bytes where they are set */
    snprintf(name, sizeof(name), "ts%d-work", cfg->id);
    ts->workers = fl_workq_new(ts->cfg.worker_threads, name);
    fl_tablet_kv_config_t kvc;
    fl_tablet_kv_config_from(&ts->cfg, &kvc);
    ts->kv = fl_tablet_kv_new(&kvc, ts->workers);
    ts->lake_indexes = fl_lake_indexes_new();
    snprintf(name, sizeof(name), "ts%d-delay", cfg->id);
    ts->purgatory = fl_purgatory_new(name);
    /* produce validates (CRC included) before it appends: the log need
     * not compute the CRC a second time */
    fl_log_config_t log = cfg->log;
    log.crc_checked = true;
    fl_replica_manager_init(&ts->replicas, cfg->data_dir, &log, &cfg->durability, ts->workers);
    fl_replica_manager_set_watermark_hook(&ts->replicas, fl_tablet_on_watermark, ts);
    if (fl_tablet_tiering_init(ts, err)) {
        FL_WARN("tablet server %d: tiered log storage is off: %s", cfg->id, err->msg);
        fl_err_clear(err);
    }
    ts->loop_count = ts->cfg.network_threads;
    for (size_t i = 0; i < ts->loop_count; i++) {
        snprintf(name, sizeof(name), "ts%d-net%zu", cfg->id, i);
        ts->loops[i] = fl_rpc_loop_new(name);
    }
    snprintf(name, sizeof(name), "ts%d-cli", cfg->id);
    ts->client_loop = fl_rpc_loop_new(name);
    ts->rpc = fl_rpc_server_new(ts->loops, ts->loop_count, &cfg->limits, fl_server_handle);
    ts->role = (fl_server_role_t){.role = FL_ROLE_TS, .cs = NULL, .ts = ts, .self = &ts->self,
                                     .security = ts->cfg.client_security};
    ts->internal_role = (fl_server_role_t){.role = FL_ROLE_TS, .cs = NULL, .ts = ts,
                                              .self = &ts->self, .internal = true};
    snprintf(name, sizeof(name), "ts%d-ctl", cfg->id);
    ts->control = fl_workq_new(1, name);
    ts->fetchers = fl_fetchers_new(ts);
    ts->duties = fl_tablet_duties_new(ts);
    if (ts->cfg.replica_max_lag_ms <= 0) ts->cfg.replica_max_lag_ms = 30 * 1000;
    if (ts->cfg.replica_min_isr <= 0) ts->cfg.replica_min_isr = 1;
    (void)err;
    *out = ts;
    return 0;
}

int fl_tablet_server_start(fl_tablet_server_t *ts, fl_error_t *err) {
    /* a disk already past the limit refuses the first write too */
    if (ts->disk.limit_ratio < 1.0) fl_disk_guard_sample(&ts->disk);
    int port = 0;
    /* the client listener takes its port now and accepts once the
     * coordinator has told this server its tables (fl_tablet_server_accept):
     * a client never meets a table it hosts as unknown after a restart;
     * its connection waits in the backlog meanwhile */
    int rc = fl_rpc_server_bind(ts->rpc, ts->cfg.bind_host, ts->cfg.bind_port,
                                ts->cfg.client_listener_internal ? &ts->internal_role : &ts->role,
                                &port, err);
    if (rc) return rc;
    fl_listener_security_gate(ts->cfg.client_security, ts->rpc, &ts->role);
    if (ts->self.port == 0) ts->self.port = port;
    if (ts->cfg.internal_host[0]) {
        rc = fl_rpc_server_listen(ts->rpc, ts->cfg.internal_host, ts->cfg.internal_port,
                                  &ts->internal_role, &ts->internal_bound_port, err);
        if (rc) return rc;
    }
    fl_rpc_loop_post(ts->loops[0], fl_tablet_duties_start, ts->duties);
    if (fl_rpc_loop_start(ts->client_loop))
        return fl_err_set(err, FLUSS_ERR__STATE, "cannot start the client thread");
    for (size_t i = 0; i < ts->loop_count; i++)
        if (fl_rpc_loop_start(ts->loops[i]))
            return fl_err_set(err, FLUSS_ERR__STATE, "cannot start network thread %zu", i);
    ts->started = true;
    return 0;
}

int fl_tablet_server_accept(fl_tablet_server_t *ts, fl_error_t *err) {
    return fl_rpc_server_accept(ts->rpc, err);
}

void fl_tablet_server_stop(fl_tablet_server_t *ts) {
    if (!ts->started) return;
    ts->started = false;
    /* parked operations answer first: their answers are posted to the
     * loops ahead of the connection close below (each loop runs its tasks
     * in order); anything parked after this completes at once */
    fl_purgatory_shutdown(ts->purgatory);
    fl_rpc_server_close(ts->rpc);
    /* a follower's connections end here, before any tablet server of the
     * process (local mode: its leaders) is freed */
    fl_fetchers_shutdown(ts->fetchers);
}

void fl_tablet_server_destroy(fl_tablet_server_t *ts) {
    if (!ts) return;
    fl_tablet_server_stop(ts);
    for (size_t i = 0; i < ts->loop_count; i++) fl_rpc_loop_destroy(ts->loops[i]);
    fl_rpc_server_destroy(ts->rpc);
    /* no loop runs now: nothing appends; the coordinator's messages,
     * puts and flushes in the queues finish first */
    fl_workq_destroy(ts->control);
    fl_tablet_kv_stop(ts->kv); /* the puts, then the commits they queued */
    fl_workq_destroy(ts->workers);
    ts->replicas.workers = NULL;
    fl_fetchers_destroy(ts->fetchers); /* their clients live on client_loop */
    /* nothing calls the coordinator any more: its client, then its loop */
    fl_rpc_client_destroy(ts->coordinator);
    fl_rpc_loop_destroy(ts->client_loop);
    fl_replica_manager_close(&ts->replicas);
    fl_tablet_tiering_destroy(ts); /* after the replicas' remote logs closed */
    fl_purgatory_destroy(ts->purgatory); /* last: flushes above still reported moves */
    fl_tablet_kv_destroy(ts->kv); /* after every store closed with its replica */
    fl_lake_indexes_destroy(ts->lake_indexes);
    fl_tablet_catalog_destroy(ts->catalog);
    fl_tablet_duties_destroy(ts->duties); /* its timers closed with loop 0, its jobs ran */
    fl_free(ts);
}
