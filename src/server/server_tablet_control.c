/*
 * server_tablet_control.c — the coordinator's messages to a tablet server,
 * served on its internal listener only, one at a time on its control
 * thread, in the order they came:
 *
 *   UPDATE_METADATA        tables (whole: entry, schemas, partitions) into
 *                          the server's table of tables; DELETED_TABLE_ID
 *                          (-2) with a path forgets that table
 *   NOTIFY_LEADER_AND_ISR  the buckets this server leads are opened
 *                          (recovered), with their kv tablets; a demoted
 *                          leader's kv tablet is retired (closed once
 *                          no operation uses it, its directory removed)
 *   STOP_REPLICA           delete: the replicas of the named table or
 *                          partition go from this server (with
 *                          deleteRemote, its tiered log and KV snapshots)
 *
 * A message that does not hold what it must is refused with
 * CORRUPT_MESSAGE and changes nothing; per-bucket failures are answered
 * per bucket. Each is fenced by the coordinator epoch it carries: one
 * older than the newest seen here is refused whole with
 * INVALID_COORDINATOR and changes nothing (as Fluss's
 * validateAndApplyCoordinatorEpoch); a bucket's leadership named in a
 * leader epoch older than the replica's is refused with
 * FENCED_LEADER_EPOCH.
 */
#include <string.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"
#include "replica_replication.h"
#include "server_fetcher.h"
#include "server_hosted_table.h"
#include "server_metadata_cache.h"
#include "server_node.h"
#include "server_lake_index.h"
#include "server_tablet.h"

/* The message's coordinator epoch against the newest seen (the control
 * thread's alone: messages are taken one at a time); a newer one is
 * remembered. */
static int fl_control_epoch(fl_tablet_server_t *ts, int32_t epoch, const char *what,
                            fl_error_t *err) {
    int32_t newest = atomic_load(&ts->coordinator_epoch);
    if (epoch < newest)
        return fl_err_set(err, FLUSS_ERR_INVALID_COORDINATOR_EXCEPTION,
                          "%s from coordinator epoch %d: the coordinator's epoch is %d now.", what,
                          epoch, newest);
    atomic_store(&ts->coordinator_epoch, epoch);
    return 0;
}

FL_API_HANDLER(fl_api_update_metadata) {
    const Fluss__UpdateMetadataRequest *req = (const Fluss__UpdateMetadataRequest *)m;
    fl_tablet_server_t *ts = ctx->ts;
    /* optional in the message: a coordinator that sends none is not fenced */
    int rc = req->has_coordinator_epoch
                 ? fl_control_epoch(ts, req->coordinator_epoch, "UPDATE_METADATA", err)
                 : 0;
    if (rc) return rc;
    size_t n = req->n_table_metadata;
    fl_hosted_table_t **built = fl_calloc(n ? n : 1, sizeof(*built));
    /* every entry is checked before any is applied */
    for (size_t i = 0; i < n && !rc; i++) {
        const Fluss__PbTableMetadata *tm = req->table_metadata[i];
        if (tm->table_id == FL_DELETED_ID) {
            if (!tm->table_path || !tm->table_path->database_name || !tm->table_path->table_name)
                rc = fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE, "a deleted table without a path");
            continue;
        }
        built[i] = fl_hosted_table_from_pb(tm, req->partition_metadata, req->n_partition_metadata,
                                           err);
        if (!built[i]) rc = err->code;
    }
    for (size_t i = 0; i < n; i++) {
        const Fluss__PbTableMetadata *tm = req->table_metadata[i];
        if (rc) fl_hosted_table_unref(built[i]);
        else if (tm->table_id == FL_DELETED_ID)
            fl_tablet_server_forget_table(ts, tm->table_path->database_name,
                                          tm->table_path->table_name);
        else fl_tablet_server_publish_table(ts, built[i]);
    }
    fl_free(built);
    if (rc) return rc;
    if (req->n_tablet_servers)
        fl_tablet_catalog_set_peers(ts->catalog, req->tablet_servers, req->n_tablet_servers);
    fl_metadata_cache_update(fl_tablet_catalog_mdcache(ts->catalog), req);
    Fluss__UpdateMetadataResponse resp = FLUSS__UPDATE_METADATA_RESPONSE__INIT;
    fl_server_reply(out, ctx->request_id, &resp.base);
    return 0;
}

/* A new leader opens (recovers) its kv now rather than at the first
 * request. A follower keeps no primary-key state (a demotion retires the
 * store: fl_tablet_kv_retire), so this opens a fresh one from the
 * newest snapshot and the log. While the store of an earlier leadership
 * here is still closing, the first request opens it instead. */
static int fl_notify_kv_leader(fl_tablet_server_t *ts, const fl_hosted_table_t *t, fl_replica_t *r,
                               fl_error_t *err) {
    fl_kv_tablet_t *kt;
    int rc = fl_tablet_kv_acquire(ts->kv, t, r, &kt, err);
    if (rc == FLUSS_ERR_LEADER_NOT_AVAILABLE_EXCEPTION) {
        FL_INFO("tablet server %d: %s (opened with the first request)", ts->self.id, err->msg);
        return 0;
    }
    if (!rc) fl_tablet_kv_release(ts->kv, r, kt);
    return rc;
}

/* One bucket of NOTIFY_LEADER_AND_ISR: this server leads it (its log and
 * kv opened, its followers' progress tracked), follows it (its log opened,
 * fetched from the leader), or neither. */
static int fl_notify_bucket(fl_tablet_server_t *ts, const Fluss__PbNotifyLeaderAndIsrReqForBucket *b,
                            fl_error_t *err) {
    const Fluss__PbTableBucket *tb = b->table_bucket;
    int32_t self = ts->self.id;
    bool replica = b->leader == self;
    for (size_t i = 0; i < b->n_replicas && !replica; i++) replica = b->replicas[i] == self;
    /* a leadership older than the one the replica has changes nothing
     * (a replica not open here has none to fence with) */
    fl_replica_t *held = fl_replica_manager_find(&ts->replicas, tb->table_id,
                                                 tb->has_partition_id ? tb->partition_id : -1,
                                                 tb->bucket_id);
    int fenced = held ? fl_replica_check_leader_epoch(held, b->leader_epoch, err) : 0;
    if (held) fl_replica_unref(held);
    if (fenced) return fenced;
    /* it fetches from the new leader only, if from anyone */
    fl_fetchers_remove(ts->fetchers, tb->table_id, tb->has_partition_id ? tb->partition_id : -1,
                       tb->bucket_id);
    if (!replica) return 0;
    fl_hosted_table_t *t = fl_tablet_catalog_table(ts->catalog, tb->table_id);
    if (!t)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                          "Table %lld is not known here yet.", (long long)tb->table_id);
    fl_replica_t *r = NULL;
    int rc = fl_tablet_server_open_replica(ts, t, tb->has_partition_id, tb->partition_id,
                                           tb->bucket_id, &r, err);
    if (!rc && b->leader == self) {
        fl_replica_leadership_t l = {
            .self = self, .leader_epoch = b->leader_epoch, .replicas = b->replicas,
            .replica_count = b->n_replicas, .isr = b->isr, .isr_count = b->n_isr,
            .bucket_epoch = b->bucket_epoch,
            .min_isr = ts->cfg.replica_min_isr, .max_lag_ms = ts->cfg.replica_max_lag_ms};
        fl_replica_become_leader(r, &l, fl_time_mono_ms());
        if (t->kv) rc = fl_notify_kv_leader(ts, t, r, err);
    } else if (!rc) {
        fl_replica_become_follower(r, b->leader, b->leader_epoch);
        /* after the role: an open racing this demotion sees the follower
         * or fails to publish (replica_kv.h) */
        if (t->kv) fl_tablet_kv_retire(ts->kv, r);
        if (b->leader >= 0) fl_fetchers_add(ts->fetchers, b->leader, r);
    }
    if (r) fl_replica_unref(r);
    fl_hosted_table_unref(t);
    return rc;
}

FL_API_HANDLER(fl_api_notify_leader_and_isr) {
    const Fluss__NotifyLeaderAndIsrRequest *req = (const Fluss__NotifyLeaderAndIsrRequest *)m;
    fl_tablet_server_t *ts = ctx->ts;
    int rc = fl_control_epoch(ts, req->coordinator_epoch, "NOTIFY_LEADER_AND_ISR", err);
    if (rc) return rc;
    size_t n = req->n_notify_buckets_leader_req;
    Fluss__PbNotifyLeaderAndIsrRespForBucket *rs = fl_calloc(n ? n : 1, sizeof(*rs));
    Fluss__PbNotifyLeaderAndIsrRespForBucket **ptrs = fl_calloc(n ? n : 1, sizeof(*ptrs));
    char **msgs = fl_calloc(n ? n : 1, sizeof(*msgs));
    for (size_t i = 0; i < n; i++) {
        const Fluss__PbNotifyLeaderAndIsrReqForBucket *b = req->notify_buckets_leader_req[i];
        fluss__pb_notify_leader_and_isr_resp_for_bucket__init(&rs[i]);
        rs[i].table_bucket = b->table_bucket;
        ptrs[i] = &rs[i];
        fl_error_t e;
        fl_err_clear(&e);
        rc = fl_notify_bucket(ts, b, &e);
        if (rc) {
            FL_WARN("tablet server %d: bucket %d of table %lld (leader %d): %s", ts->self.id,
                    b->table_bucket->bucket_id, (long long)b->table_bucket->table_id, b->leader,
                    e.msg);
            rs[i].has_error_code = 1;
            rs[i].error_code = fl_server_wire_code(rc);
            msgs[i] = fl_strdup(e.msg);
            rs[i].error_message = msgs[i];
        }
    }
    Fluss__NotifyLeaderAndIsrResponse resp = FLUSS__NOTIFY_LEADER_AND_ISR_RESPONSE__INIT;
    resp.n_notify_buckets_leader_resp = n;
    resp.notify_buckets_leader_resp = ptrs;
    fl_server_reply(out, ctx->request_id, &resp.base);
    for (size_t i = 0; i < n; i++) fl_free(msgs[i]);
    fl_free(msgs);
    fl_free(rs);
    fl_free(ptrs);
    return 0;
}

/* The replicas of a table (partition_id < 0) or of one partition go. */
static void fl_stop_group(fl_tablet_server_t *ts, int64_t table_id, int64_t partition_id,
                          bool remote) {
    fl_hosted_table_t *t = fl_tablet_catalog_table(ts->catalog, table_id);
    if (!t) return; /* never published here: nothing of it on this server */
    if (partition_id < 0) {
        fl_tablet_server_drop_table(ts, t->database, t->name, table_id);
    } else {
        const fl_hosted_partition_t *p = fl_hosted_table_partition(t, partition_id);
        if (p)
            fl_tablet_server_drop_partition(ts, t->database, t->name, table_id, p->name,
                                            partition_id);
    }
    (void)remote; /* the drops above remove remote data too */
    fl_lake_indexes_drop(ts->lake_indexes, table_id, partition_id);
    fl_hosted_table_unref(t);
}

FL_API_HANDLER(fl_api_stop_replica) {
    const Fluss__StopReplicaRequest *req = (const Fluss__StopReplicaRequest *)m;
    fl_tablet_server_t *ts = ctx->ts;
    int rc = fl_control_epoch(ts, req->coordinator_epoch, "STOP_REPLICA", err);
    if (rc) return rc;
    size_t n = req->n_stop_replicas_req;
    Fluss__PbStopReplicaRespForBucket *rs = fl_calloc(n ? n : 1, sizeof(*rs));
    Fluss__PbStopReplicaRespForBucket **ptrs = fl_calloc(n ? n : 1, sizeof(*ptrs));
    for (size_t i = 0; i < n; i++) {
        const Fluss__PbStopReplicaReqForBucket *b = req->stop_replicas_req[i];
        fluss__pb_stop_replica_resp_for_bucket__init(&rs[i]);
        rs[i].table_bucket = b->table_bucket;
        ptrs[i] = &rs[i];
        fl_fetchers_remove(ts->fetchers, b->table_bucket->table_id,
                           b->table_bucket->has_partition_id ? b->table_bucket->partition_id : -1,
                           b->table_bucket->bucket_id);
        if (!b->delete_) continue; /* a stop without delete: no fetching is all it asks */
        int64_t tid = b->table_bucket->table_id;
        int64_t pid = b->table_bucket->has_partition_id ? b->table_bucket->partition_id : -1;
        /* once per table or partition: the coordinator names all its buckets */
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++) {
            const Fluss__PbTableBucket *o = req->stop_replicas_req[k]->table_bucket;
            seen = req->stop_replicas_req[k]->delete_ && o->table_id == tid &&
                   (o->has_partition_id ? o->partition_id : -1) == pid;
        }
        if (!seen) fl_stop_group(ts, tid, pid, b->has_deleteremote && b->deleteremote);
    }
    Fluss__StopReplicaResponse resp = FLUSS__STOP_REPLICA_RESPONSE__INIT;
    resp.n_stop_replicas_resp = n;
    resp.stop_replicas_resp = ptrs;
    fl_server_reply(out, ctx->request_id, &resp.base);
    fl_free(rs);
    fl_free(ptrs);
    return 0;
}

/* NOTIFY_KV_SNAPSHOT_OFFSET: the bucket's leader committed a KV snapshot
 * up to min_retain_offset; this follower's changelog below it may be
 * tiered away (server_tiering.c). An offset never goes back; a bucket
 * not open here is answered as done (nothing to keep). */
FL_API_HANDLER(fl_api_notify_kv_snapshot_offset) {
    const Fluss__NotifyKvSnapshotOffsetRequest *req =
        (const Fluss__NotifyKvSnapshotOffsetRequest *)m;
    fl_tablet_server_t *ts = ctx->ts;
    int rc = fl_control_epoch(ts, req->coordinator_epoch, "NOTIFY_KV_SNAPSHOT_OFFSET", err);
    if (rc) return rc;
    fl_replica_t *r = fl_replica_manager_find(
        &ts->replicas, req->table_id, req->has_partition_id ? req->partition_id : -1,
        req->bucket_id);
    if (r) {
        int64_t now = atomic_load(&r->kv_snapshot_offset);
        while (req->min_retain_offset > now &&
               !atomic_compare_exchange_weak(&r->kv_snapshot_offset, &now, req->min_retain_offset))
            ;
        fl_replica_unref(r);
    }
    Fluss__NotifyKvSnapshotOffsetResponse resp = FLUSS__NOTIFY_KV_SNAPSHOT_OFFSET_RESPONSE__INIT;
    fl_server_reply(out, ctx->request_id, &resp.base);
    return 0;
}

/* NOTIFY_REMOTE_LOG_OFFSETS: the bucket's leader committed its remote log
 * as [remote_start_offset, remote_end_offset); this follower's next
 * tiering round reads it and deletes the local segments it covers
 * (replica_tiering.c). A bucket not open here is answered as done. */
FL_API_HANDLER(fl_api_notify_remote_log_offsets) {
    const Fluss__NotifyRemoteLogOffsetsRequest *req =
        (const Fluss__NotifyRemoteLogOffsetsRequest *)m;
    fl_tablet_server_t *ts = ctx->ts;
    int rc = fl_control_epoch(ts, req->coordinator_epoch, "NOTIFY_REMOTE_LOG_OFFSETS", err);
    if (rc) return rc;
    fl_replica_t *r = fl_replica_manager_find(
        &ts->replicas, req->table_id, req->has_partition_id ? req->partition_id : -1,
        req->bucket_id);
    if (r) {
        /* the end first: a round between the two stores sees a start it
         * has not published and reads the remote log, which is harmless */
        atomic_store(&r->remote_told_end, req->remote_end_offset);
        atomic_store(&r->remote_told_start, req->remote_start_offset);
        fl_replica_unref(r);
    }
    Fluss__NotifyRemoteLogOffsetsResponse resp = FLUSS__NOTIFY_REMOTE_LOG_OFFSETS_RESPONSE__INIT;
    fl_server_reply(out, ctx->request_id, &resp.base);
    return 0;
}

/* NOTIFY_LAKE_TABLE_OFFSET (0.9.1's 1031): the lake offsets of a lake
 * table's buckets after a committed tiering round (log_end_offset: the
 * first offset the lake does not have). Each replica here keeps its
 * segments from the greatest offset told on (fl_replica_retain_from);
 * buckets not here are skipped. */
FL_API_HANDLER(fl_api_notify_lake_table_offset) {
    const Fluss__NotifyLakeTableOffsetRequest *req =
        (const Fluss__NotifyLakeTableOffsetRequest *)m;
    fl_tablet_server_t *ts = ctx->ts;
    int rc = fl_control_epoch(ts, req->coordinator_epoch, "NOTIFY_LAKE_TABLE_OFFSET", err);
    if (rc) return rc;
    for (size_t i = 0; i < req->n_notify_buckets_req; i++) {
        const Fluss__PbNotifyLakeTableOffsetReqForBucket *b = req->notify_buckets_req[i];
        if (!b->has_log_end_offset) continue;
        fl_replica_t *r = fl_replica_manager_find(
            &ts->replicas, b->table_id, b->has_partition_id ? b->partition_id : -1, b->bucket_id);
        if (!r) continue;
        int_fast64_t now = atomic_load(&r->lake_offset);
        while (b->log_end_offset > now &&
               !atomic_compare_exchange_weak(&r->lake_offset, &now, b->log_end_offset)) {
        }
        fl_replica_unref(r);
    }
    Fluss__NotifyLakeTableOffsetResponse resp = FLUSS__NOTIFY_LAKE_TABLE_OFFSET_RESPONSE__INIT;
    fl_server_reply(out, ctx->request_id, &resp.base);
    return 0;
}
