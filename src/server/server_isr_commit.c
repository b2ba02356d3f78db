/*
 * server_isr_commit.c — the coordinator's ADJUST_ISR, on its internal
 * side: each bucket's proposed ISR checked against the leader and epochs
 * the coordinator holds, and stored (coordinator_election.h). Each bucket
 * is answered on its own: the committed leader epoch, ISR and bucket
 * epoch, or the error that refused it. And CONTROLLED_SHUTDOWN, the
 * other leader and ISR change a tablet server asks for, and
 * COMMIT_REMOTE_LOG_MANIFEST and COMMIT_KV_SNAPSHOT, a leader's tiering
 * and snapshot commits, fenced by its leader epoch.
 */
#include "common_alloc.h"
#include "kv_snapshot.h"
#include "server_coordinator.h"
#include "server_node.h"

FL_API_HANDLER(fl_api_adjust_isr) {
    (void)err;
    const Fluss__AdjustIsrRequest *req = (const Fluss__AdjustIsrRequest *)m;
    size_t nt = req->n_tables_req;
    Fluss__PbAdjustIsrRespForTable *tables = fl_calloc(nt ? nt : 1, sizeof(*tables));
    Fluss__PbAdjustIsrRespForTable **tptrs = fl_calloc(nt ? nt : 1, sizeof(*tptrs));
    size_t total = 0;
    for (size_t t = 0; t < nt; t++) total += req->tables_req[t]->n_buckets_req;
    Fluss__PbAdjustIsrRespForBucket *bs = fl_calloc(total ? total : 1, sizeof(*bs));
    Fluss__PbAdjustIsrRespForBucket **bptrs = fl_calloc(total ? total : 1, sizeof(*bptrs));
    fl_ms_bucket_t *stored = fl_calloc(total ? total : 1, sizeof(*stored));
    char **msgs = fl_calloc(total ? total : 1, sizeof(char *));
    size_t k = 0;
    for (size_t t = 0; t < nt; t++) {
        const Fluss__PbAdjustIsrReqForTable *tr = req->tables_req[t];
        fluss__pb_adjust_isr_resp_for_table__init(&tables[t]);
        tables[t].table_id = tr->table_id;
        tables[t].buckets_resp = &bptrs[k];
        tables[t].n_buckets_resp = tr->n_buckets_req;
        tptrs[t] = &tables[t];
        for (size_t i = 0; i < tr->n_buckets_req; i++, k++) {
            const Fluss__PbAdjustIsrReqForBucket *br = tr->buckets_req[i];
            Fluss__PbAdjustIsrRespForBucket *b = &bs[k];
            fluss__pb_adjust_isr_resp_for_bucket__init(b);
            b->has_partition_id = br->has_partition_id;
            b->partition_id = br->partition_id;
            b->bucket_id = br->bucket_id;
            bptrs[k] = b;
            fl_error_t e;
            int rc = fl_coordinator_server_adjust_isr(
                ctx->cs, req->serverid, tr->table_id,
                br->has_partition_id ? br->partition_id : -1, br->bucket_id, br->leader_epoch,
                br->bucket_epoch, br->new_isr, br->n_new_isr, &stored[k], &e);
            if (rc) {
                b->has_error_code = 1;
                b->error_code = fl_server_wire_code(rc);
                msgs[k] = fl_strdup(e.msg);
                b->error_message = msgs[k];
                continue;
            }
            int32_t n;
            b->has_leader_id = 1;
            b->leader_id = stored[k].leader;
            b->has_leader_epoch = 1;
            b->leader_epoch = stored[k].leader_epoch;
            b->isr = (int32_t *)fl_ms_bucket_isr(&stored[k], &n);
            b->n_isr = (size_t)n;
            b->has_bucket_epoch = 1;
            b->bucket_epoch = stored[k].bucket_epoch;
        }
    }
    Fluss__AdjustIsrResponse resp = FLUSS__ADJUST_ISR_RESPONSE__INIT;
    resp.n_tables_resp = nt;
    resp.tables_resp = tptrs;
    fl_server_reply(out, ctx->request_id, &resp.base);
    for (size_t i = 0; i < total; i++) fl_free(msgs[i]);
    fl_free(msgs);
    fl_free(stored);
    fl_free(bptrs);
    fl_free(bs);
    fl_free(tptrs);
    fl_free(tables);
    return 0;
}

/* CONTROLLED_SHUTDOWN: a tablet server about to stop hands its
 * leaderships over (server_coordinator.h); the answer lists the buckets
 * it still leads. tablet_server_epoch must be its live registration's:
 * a former incarnation of it moves nothing. */
FL_API_HANDLER(fl_api_controlled_shutdown) {
    const Fluss__ControlledShutdownRequest *req = (const Fluss__ControlledShutdownRequest *)m;
    fl_bucket_key_t *kept;
    size_t n;
    int rc = fl_coordinator_server_controlled_shutdown(ctx->cs, req->tablet_server_id,
                                                       req->tablet_server_epoch, &kept, &n, err);
    if (rc) return rc;
    Fluss__PbTableBucket *bs = fl_calloc(n ? n : 1, sizeof(*bs));
    Fluss__PbTableBucket **bp = fl_calloc(n ? n : 1, sizeof(*bp));
    for (size_t i = 0; i < n; i++) {
        fluss__pb_table_bucket__init(&bs[i]);
        bs[i].table_id = kept[i].table_id;
        bs[i].has_partition_id = kept[i].partition_id >= 0;
        bs[i].partition_id = kept[i].partition_id;
        bs[i].bucket_id = kept[i].bucket;
        bp[i] = &bs[i];
    }
    Fluss__ControlledShutdownResponse resp = FLUSS__CONTROLLED_SHUTDOWN_RESPONSE__INIT;
    resp.n_remaining_leader_buckets = n;
    resp.remaining_leader_buckets = bp;
    fl_server_reply(out, ctx->request_id, &resp.base);
    fl_free(bs);
    fl_free(bp);
    fl_free(kept);
    return 0;
}

/* COMMIT_REMOTE_LOG_MANIFEST: a refusal is an error answer with its
 * reason (FENCED_LEADER_EPOCH_EXCEPTION for a deposed leader). */
FL_API_HANDLER(fl_api_commit_remote_log_manifest) {
    const Fluss__CommitRemoteLogManifestRequest *req =
        (const Fluss__CommitRemoteLogManifestRequest *)m;
    int rc = fl_coordinator_server_commit_remote_log(
        ctx->cs, req->table_id, req->has_partition_id ? req->partition_id : -1, req->bucket_id,
        req->bucket_leader_epoch, req->coordinator_epoch, req->remote_log_manifest_path,
        req->remote_log_start_offset, req->remote_log_end_offset, err);
    if (rc) return rc;
    Fluss__CommitRemoteLogManifestResponse resp = FLUSS__COMMIT_REMOTE_LOG_MANIFEST_RESPONSE__INIT;
    resp.commitsuccess = 1;
    fl_server_reply(out, ctx->request_id, &resp.base);
    return 0;
}

/* COMMIT_KV_SNAPSHOT: completed_snapshot is our record
 * (fl_kv_snapshot_commit_t), not the reference's CompletedSnapshot. */
FL_API_HANDLER(fl_api_commit_kv_snapshot) {
    const Fluss__CommitKvSnapshotRequest *req = (const Fluss__CommitKvSnapshotRequest *)m;
    fl_kv_snapshot_commit_t c;
    int rc = fl_kv_snapshot_commit_decode(req->completed_snapshot.data,
                                          req->completed_snapshot.len, &c, err);
    if (!rc)
        rc = fl_coordinator_server_commit_kv_snapshot(
            ctx->cs, c.table_id, c.partition_id, c.bucket, req->bucket_leader_epoch,
            req->coordinator_epoch, c.snapshot_id, c.meta, c.meta_len, err);
    fl_kv_snapshot_commit_free(&c);
    if (rc) return rc;
    Fluss__CommitKvSnapshotResponse resp = FLUSS__COMMIT_KV_SNAPSHOT_RESPONSE__INIT;
    fl_server_reply(out, ctx->request_id, &resp.base);
    return 0;
}
