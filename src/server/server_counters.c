/*
 * server_counters.c — the coordinator's counters that tablet servers draw
 * from, served on its internal side: INIT_WRITER (a client asks a tablet
 * server, which passes the request on) and fluss-c's
 * RESERVE_AUTO_INCREMENT (a tablet server's kv asks for a block of a
 * table's auto-increment values). Both run on the coordinator's internal
 * worker: they may write the metadata store. And fluss-c's
 * LIST_LEASED_KV_SNAPSHOTS: the snapshots of a bucket that leases hold,
 * which the tablet server's snapshot retention keeps.
 */
#include "common_alloc.h"
#include "common_time.h"
#include "kv_lease.h"
#include "server_authz.h"
#include "server_coordinator.h"
#include "server_node.h"

FL_API_HANDLER(fl_api_init_writer) {
    int rc = fl_cs_authorize_init_writer(ctx, (const Fluss__InitWriterRequest *)m, err);
    if (rc) return rc;
    Fluss__InitWriterResponse resp = FLUSS__INIT_WRITER_RESPONSE__INIT;
    rc = fl_coordinator_server_writer_id(ctx->cs, &resp.writer_id, err);
    if (rc) return rc;
    fl_server_reply(out, ctx->request_id, &resp.base);
    return 0;
}

FL_API_HANDLER(fl_api_reserve_auto_increment) {
    const Fluss__ReserveAutoIncrementRequest *req = (const Fluss__ReserveAutoIncrementRequest *)m;
    if (req->count < 1)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE,
                          "An auto-increment block of %lld values.", (long long)req->count);
    Fluss__ReserveAutoIncrementResponse resp = FLUSS__RESERVE_AUTO_INCREMENT_RESPONSE__INIT;
    int rc = fl_coordinator_server_autoinc_reserve(ctx->cs, req->table_id, req->count, &resp.first,
                                                   err);
    if (rc) return rc;
    fl_server_reply(out, ctx->request_id, &resp.base);
    return 0;
}

FL_API_HANDLER(fl_api_list_leased_kv_snapshots) {
    (void)err;
    const Fluss__ListLeasedKvSnapshotsRequest *req = (const Fluss__ListLeasedKvSnapshotsRequest *)m;
    int64_t *ids = NULL;
    size_t n = fl_kv_leases_pinned_ids(ctx->cs->leases, req->table_id,
                                       req->has_partition_id ? req->partition_id : -1,
                                       req->bucket_id, fl_time_wall_ms(), &ids);
    Fluss__ListLeasedKvSnapshotsResponse resp = FLUSS__LIST_LEASED_KV_SNAPSHOTS_RESPONSE__INIT;
    resp.n_snapshot_id = n;
    resp.snapshot_id = ids;
    fl_server_reply(out, ctx->request_id, &resp.base);
    fl_free(ids);
    return 0;
}
