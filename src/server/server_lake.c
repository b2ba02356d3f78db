/*
 * server_lake.c — the lake APIs both server roles answer (Fluss's
 * RpcServiceBase.getLakeSnapshot): GET_LAKE_SNAPSHOT reads the table's
 * lake itself — the Iceberg table's current snapshot (readable = latest:
 * an Iceberg log table is readable as soon as it is committed), or the one
 * of snapshot_id — and answers its id and the per-bucket log offsets its
 * fluss-offsets file holds (the first offset each bucket's data files do
 * not have; buckets never tiered are left out, as the reference leaves
 * out buckets it has no offset for), with partition ids and names. The
 * lake is the only record of what is tiered (server_lake_commit.h), so
 * there is nothing else to keep in step.
 *
 * The checks come in 0.9.1's order: both snapshot_id and readable=true is
 * an illegal argument (UNKNOWN_SERVER_ERROR, as 0.9.1 maps it), an unknown
 * table TABLE_NOT_EXIST, no such snapshot LAKE_SNAPSHOT_NOT_EXIST (53)
 * with the reference's message (the Flink source probes it and reads on
 * from Fluss alone on 53).
 *
 * LAKE_TIER_NOW (fluss-c's 1904, `fluss lake tier TABLE --now`) asks the
 * tiering service for a round of the table now and answers when it ended.
 *
 * Thread rule: GET_LAKE_SNAPSHOT runs with the coordinator's catalog lock,
 * on its worker (it reads the lake's files); LAKE_TIER_NOW with the lock
 * on the loop, deferred (server_dispatch.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common_alloc.h"
#include "coordinator_lake_table.h"
#include "server_authz.h"
#include "server_coordinator.h"
#include "server_lake_commit.h"
#include "server_lake_tier.h"
#include "server_node.h"

static const char *fl_lake_partition_name(const fl_ms_table_t *t, int64_t partition_id) {
    for (size_t i = 0; i < t->partition_count; i++)
        if (t->partitions[i].partition_id == partition_id) return t->partitions[i].name;
    return NULL;
}

/* Answers the snapshot (0), or 1 when there is none to answer. */
static int fl_lake_answer(fl_req_ctx_t *ctx, fl_buf_t *out, const fl_ms_table_t *t,
                          bool by_id, int64_t snapshot_id, fl_error_t *err) {
    const fl_lake_config_t *lake = &ctx->cs->cfg.defaults.lake;
    char dir[4096 + 512];
    if (!fl_lake_config_on(lake) || !fl_lake_table_dir(lake, t->database, t->name, dir, sizeof(dir)))
        return 1;
    fl_ice_table_head_t h;
    fl_ice_table_head_init(&h);
    fl_lake_offsets_t offs = {0};
    int rc = fl_ice_table_load(dir, &h, err);
    if (rc == FLUSS_ERR_TABLE_NOT_EXIST || (!rc && !fl_lake_table_is_of(&h.meta.meta, t->table_id))) {
        rc = 1;
        goto done;
    }
    if (rc) goto done;
    const fl_ice_table_meta_t *m = &h.meta.meta;
    const fl_ice_snapshot_t *s = fl_ice_meta_snapshot(m, by_id ? snapshot_id : m->current_snapshot_id);
    bool tiered = false;
    if (!s || (rc = fl_lake_snapshot_offsets(s, t->table_id, &offs, &tiered, err)) || !tiered) {
        if (!rc) rc = 1;
        goto done;
    }
    size_t n = 0;
    for (size_t i = 0; i < offs.count; i++) n += offs.items[i].offset >= 0;
    Fluss__PbLakeSnapshotForBucket *bs = fl_calloc(n + 1, sizeof(*bs));
    Fluss__PbLakeSnapshotForBucket **ptrs = fl_calloc(n + 1, sizeof(*ptrs));
    size_t k = 0;
    for (size_t i = 0; i < offs.count; i++) {
        const fl_lake_offset_t *o = &offs.items[i];
        if (o->offset < 0) continue;
        fluss__pb_lake_snapshot_for_bucket__init(&bs[k]);
        bs[k].bucket_id = o->bucket;
        bs[k].has_log_offset = 1;
        bs[k].log_offset = o->offset;
        if (o->partition_id >= 0) {
            bs[k].has_partition_id = 1;
            bs[k].partition_id = o->partition_id;
            bs[k].partition_name = (char *)fl_lake_partition_name(t, o->partition_id);
        }
        ptrs[k] = &bs[k];
        k++;
    }
    Fluss__GetLakeSnapshotResponse resp = FLUSS__GET_LAKE_SNAPSHOT_RESPONSE__INIT;
    resp.table_id = t->table_id;
    resp.snapshotid = s->snapshot_id;
    resp.n_bucket_snapshots = k;
    resp.bucket_snapshots = ptrs;
    fl_server_reply(out, ctx->request_id, &resp.base);
    fl_free(ptrs);
    fl_free(bs);
done:
    fl_lake_offsets_free(&offs);
    fl_ice_table_head_reset(&h);
    return rc;
}

FL_API_HANDLER(fl_api_get_lake_snapshot) {
    const Fluss__GetLakeSnapshotRequest *req = (const Fluss__GetLakeSnapshotRequest *)m;
    const Fluss__PbTablePath *p = req->table_path;
    if (!p || !p->database_name || !p->table_name)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE, "the request has no table path");
    if (fl_authz_require_table(FL_AUTHZ(ctx), ctx, FL_ACL_OP_DESCRIBE, p->database_name,
                               p->table_name, err))
        return err->code;
    bool readable = req->has_readable && req->readable;
    if (readable && req->has_snapshot_id)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          "GetLakeSnapshotRequest cannot set both snapshot_id and readable=true; "
                          "use one or the other to specify either a snapshot by id or the "
                          "latest readable snapshot.");
    const fl_ms_table_t *t =
        fl_catalog_get_table(&ctx->cs->catalog, p->database_name, p->table_name, err);
    if (!t) return err->code;
    int rc = fl_lake_answer(ctx, out, t, !readable && req->has_snapshot_id, req->snapshot_id, err);
    if (rc != 1) return rc;
    char id[40] = "";
    if (!readable && req->has_snapshot_id)
        snprintf(id, sizeof(id), ", snapshot id: %" PRId64, req->snapshot_id);
    return fl_err_set(err, FLUSS_ERR_LAKE_SNAPSHOT_NOT_EXIST,
                      "Lake table %s doesn't exist for table: %s.%s, table id: %" PRId64 "%s",
                      readable ? "readable snapshot" : "snapshot", t->database, t->name,
                      t->table_id, id);
}

/* ---- LAKE_TIER_NOW (fluss-c's 1904) ---- */

typedef struct fl_tier_now {
    fl_req_ctx_t *d;
    int64_t table_id;
} fl_tier_now_t;

static void fl_lake_tier_now_done(void *arg, int rc, const fl_error_t *err, int64_t snapshot_id,
                                  int64_t added) {
    fl_tier_now_t *w = arg;
    if (rc) {
        fl_req_answer_error(w->d, fl_server_wire_code(rc), err->msg);
    } else {
        Fluss__LakeTierNowResponse resp = FLUSS__LAKE_TIER_NOW_RESPONSE__INIT;
        resp.table_id = w->table_id;
        resp.has_snapshot_id = snapshot_id != FL_ICE_NONE;
        resp.snapshot_id = snapshot_id;
        resp.has_added_records = 1;
        resp.added_records = added;
        fl_req_answer(w->d, &resp.base);
    }
    fl_req_free(w->d);
    fl_free(w);
}

/* Answered from the tiering thread once the round ended; the request
 * holds no thread meanwhile. */
FL_API_HANDLER(fl_api_lake_tier_now) {
    const Fluss__LakeTierNowRequest *req = (const Fluss__LakeTierNowRequest *)m;
    const Fluss__PbTablePath *p = req->table_path;
    if (!p || !p->database_name || !p->table_name)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE, "the request has no table path");
    /* ours: a tiering round is a write of the table's lake copy */
    if (fl_authz_require_table(FL_AUTHZ(ctx), ctx, FL_ACL_OP_WRITE, p->database_name,
                               p->table_name, err))
        return err->code;
    const fl_ms_table_t *t =
        fl_catalog_get_table(&ctx->cs->catalog, p->database_name, p->table_name, err);
    if (!t) return err->code;
    fl_tier_now_t *w = fl_calloc(1, sizeof(*w));
    w->table_id = t->table_id;
    w->d = fl_req_defer(ctx);
    fl_lake_tierer_ask(ctx->cs->lake_tierer, t->table_id, fl_lake_tier_now_done, w);
    return 0;
}
