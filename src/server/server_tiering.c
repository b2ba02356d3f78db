/*
 * server_tiering.c — tiered log storage on a tablet server
 * (server_tiering.h).
 */
#include "server_tiering.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"
#include "kv_tablet.h"
#include "proto_api.h"
#include "replica_tiering.h"
#include "server_call.h"
#include "server_tablet.h"

int fl_tablet_tiering_init(fl_tablet_server_t *ts, fl_error_t *err) {
    if (ts->cfg.remote_log_interval_ms <= 0) return 0;
    int rc = fl_remote_storage_fs_new(ts->cfg.remote_dir, &ts->remote_storage, err);
    if (rc) return rc;
    ts->replicas.remote_storage = ts->remote_storage;
    return 0;
}

void fl_tablet_tiering_destroy(fl_tablet_server_t *ts) {
    fl_remote_storage_destroy(ts->remote_storage);
    ts->remote_storage = NULL;
}

/* The commit point of a leader's round: the coordinator writes the
 * handle if `epoch` is still the bucket's leader epoch. An answer that
 * cannot be read leaves the outcome as unknown as none. */
static int fl_tier_commit_remote(void *ctx, fl_replica_t *r, int32_t epoch,
                                 const char *manifest_path, int64_t start, int64_t end,
                                 fl_error_t *err) {
    fl_tablet_server_t *ts = ctx;
    Fluss__CommitRemoteLogManifestRequest req = FLUSS__COMMIT_REMOTE_LOG_MANIFEST_REQUEST__INIT;
    req.table_id = r->table_id;
    req.has_partition_id = r->partition_id >= 0;
    req.partition_id = r->partition_id;
    req.bucket_id = r->bucket;
    req.remote_log_manifest_path = (char *)manifest_path;
    req.remote_log_start_offset = start;
    req.remote_log_end_offset = end;
    req.coordinator_epoch = atomic_load(&ts->coordinator_epoch);
    req.bucket_leader_epoch = epoch;
    ProtobufCMessage *m = NULL;
    int rc = fl_server_call(ts->coordinator, FL_API_COMMIT_REMOTE_LOG_MANIFEST, &req.base,
                            &fluss__commit_remote_log_manifest_response__descriptor, &m, err);
    if (rc == FLUSS_ERR_CORRUPT_MESSAGE) err->code = rc = FLUSS_ERR_NETWORK_EXCEPTION;
    if (!rc && !((Fluss__CommitRemoteLogManifestResponse *)m)->commitsuccess)
        rc = fl_err_set(err, FLUSS_ERR_FENCED_LEADER_EPOCH_EXCEPTION,
                        "the coordinator did not commit the manifest");
    if (m) protobuf_c_message_free_unpacked(m, NULL);
    return rc;
}

/* The round's parameters for r: its table's, now. false: not a bucket to
 * tier (its table is gone). */
static bool fl_tier_params_for(fl_tablet_server_t *ts, fl_replica_t *r, fl_tier_params_t *p) {
    fl_hosted_table_t *t = fl_tablet_catalog_table(ts->catalog, r->table_id);
    if (!t) return false;
    p->local_segments = t->tiered_local_segments > 0 ? (size_t)t->tiered_local_segments : 2;
    p->ttl_ms = t->ttl_ms;
    p->retain_offset = INT64_MAX;
    p->commit = ts->coordinator ? fl_tier_commit_remote : NULL;
    p->commit_ctx = ts;
    if (t->has_primary_key) {
        /* the changelog after the newest KV snapshot rebuilds the state:
         * nothing of it goes before a snapshot covers it */
        fl_kv_tablet_t *kt = fl_replica_kv_acquire(&r->kv);
        /* a follower has no tablet: its leader's, as the coordinator told */
        p->retain_offset = atomic_load(&r->kv_snapshot_offset);
        if (kt) {
            pthread_mutex_lock(&kt->snap_lock);
            p->retain_offset = kt->snap_last_offset;
            pthread_mutex_unlock(&kt->snap_lock);
        }
        fl_tablet_kv_release(ts->kv, r, kt);
    }
    /* a lake table's segments stay until the lake has them */
    int64_t lake = fl_replica_retain_from(r);
    if (lake < p->retain_offset) p->retain_offset = lake;
    fl_hosted_table_unref(t);
    return true;
}

size_t fl_tablet_server_tier_now(fl_tablet_server_t *ts) {
    if (!ts->remote_storage) return 0;
    size_t n, copied = 0;
    fl_replica_t **all = fl_replica_manager_list(&ts->replicas, &n);
    int64_t now = fl_time_wall_ms();
    for (size_t i = 0; i < n; i++) {
        fl_replica_t *r = all[i];
        fl_tier_params_t p;
        if (r->remote && fl_tier_params_for(ts, r, &p)) {
            fl_tier_result_t res;
            fl_error_t e;
            if (fl_replica_tier(r, &p, now, &res, &e))
                FL_WARN("tablet server %d: tiering bucket %d of table %lld: %s", ts->self.id,
                        r->bucket, (long long)r->table_id, e.msg);
            if (res.copied || res.expired || res.deleted)
                FL_INFO("tablet server %d: bucket %d of table %lld: %zu segment(s) to remote "
                        "storage, %zu expired there, %zu local one(s) deleted",
                        ts->self.id, r->bucket, (long long)r->table_id, res.copied, res.expired,
                        res.deleted);
            copied += res.copied;
        }
        fl_replica_unref(r);
    }
    fl_free(all);
    return copied;
}

fl_remote_fetch_pb_t *fl_tablet_remote_fetch(fl_replica_t *r, int64_t offset) {
    if (!r->remote) return NULL;
    int64_t start = atomic_load(&r->remote_start_offset), end = atomic_load(&r->remote_end_offset);
    if (offset < start || offset >= end) return NULL;
    fl_remote_fetch_pb_t *p = fl_calloc(1, sizeof(*p));
    fl_error_t e;
    if (fl_remote_log_fetch(r->remote, offset, &p->fetch, &e) != 0) {
        fl_free(p);
        return NULL;
    }
    Fluss__PbRemoteLogFetchInfo info = FLUSS__PB_REMOTE_LOG_FETCH_INFO__INIT;
    p->info = info;
    p->info.remote_log_tablet_dir = p->fetch.tablet_url;
    p->info.partition_name = (char *)p->fetch.partition_name;
    size_t n = p->fetch.count;
    p->segments = fl_calloc(n, sizeof(*p->segments));
    p->ptrs = fl_calloc(n, sizeof(*p->ptrs));
    for (size_t i = 0; i < n; i++) {
        const fl_remote_segment_t *s = &p->fetch.segments[i];
        Fluss__PbRemoteLogSegment pb = FLUSS__PB_REMOTE_LOG_SEGMENT__INIT;
        pb.remote_log_segment_id = (char *)s->id;
        pb.remote_log_start_offset = s->start_offset;
        pb.remote_log_end_offset = s->end_offset;
        pb.segment_size_in_bytes = s->size_bytes;
        pb.has_max_timestamp = 1;
        pb.max_timestamp = s->max_timestamp;
        p->segments[i] = pb;
        p->ptrs[i] = &p->segments[i];
    }
    p->info.n_remote_log_segments = n;
    p->info.remote_log_segments = p->ptrs;
    p->info.has_first_start_pos = 1;
    p->info.first_start_pos = p->fetch.first_start_pos;
    return p;
}

void fl_remote_fetch_pb_free(fl_remote_fetch_pb_t *p) {
    if (!p) return;
    fl_remote_fetch_free(&p->fetch);
    fl_free(p->segments);
    fl_free(p->ptrs);
    fl_free(p);
}

void fl_tablet_tiering_drop(fl_tablet_server_t *ts, const char *db, const char *table,
                            int64_t table_id, const char *partition_name, int64_t partition_id) {
    /* each opened bucket removes its own directory when its replica goes
     * (a round in flight finishes first); this takes the rest */
    if (!ts->remote_storage) return;
    char rel[FL_REMOTE_PATH_MAX];
    if (partition_name)
        snprintf(rel, sizeof(rel), "log/%s/%s-%" PRId64 "/%s-p%" PRId64, db, table, table_id,
                 partition_name, partition_id);
    else
        snprintf(rel, sizeof(rel), "log/%s/%s-%" PRId64, db, table, table_id);
    fl_error_t e;
    if (ts->remote_storage->ops->remove(ts->remote_storage, rel, &e))
        FL_WARN("tablet server %d: dropping remote log %s: %s", ts->self.id, rel, e.msg);
}
