/*
 * server_kv_snapshot.c — the KV snapshot APIs: GET_LATEST_KV_SNAPSHOTS and
 * GET_KV_SNAPSHOT_METADATA (both roles, from the catalog and the remote
 * directory, kv_snapshot.h), and the coordinator's snapshot leases
 * (ACQUIRE/RELEASE/DROP_KV_SNAPSHOT_LEASE, kv_lease.h).
 *
 * Errors as the reference answers them: a log table 20
 * (NON_PRIMARY_KEY_TABLE), a partition name for a table without
 * partitions 37, none for a partitioned table (or an unknown one) 36, an
 * unknown snapshot 41 (KV_SNAPSHOT_NOT_EXIST). Beyond the reference, an
 * acquire reports the snapshots that do not exist as unavailable instead
 * of leasing them.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "common_alloc.h"
#include "common_time.h"
#include "kv_lease.h"
#include "kv_snapshot.h"
#include "server_authz.h"
#include "server_coordinator.h"
#include "server_node.h"

#define FL_SNAP_DIR_MAX 4700

/* Whether the table has a primary key (from its descriptor). */
static bool fl_table_has_pk(const fl_ms_table_t *t) {
    json_t *root = json_loads(t->table_json, 0, NULL);
    json_t *pk = json_object_get(json_object_get(root, "schema"), "primary_key");
    bool has = json_is_array(pk) && json_array_size(pk) > 0;
    json_decref(root);
    return has;
}

static bool fl_table_is_partitioned(const fl_ms_table_t *t) {
    fl_strlist_t keys;
    fl_error_t e;
    bool has = fl_catalog_partition_keys(t, &keys, &e) == 0 && keys.count > 0;
    fl_strlist_free(&keys);
    return has;
}

static const fl_ms_partition_t *fl_partition_by_id(const fl_ms_table_t *t, int64_t id) {
    for (size_t i = 0; i < t->partition_count; i++)
        if (t->partitions[i].partition_id == id) return &t->partitions[i];
    return NULL;
}

static void fl_bucket_dir(const fl_coordinator_server_t *cs, const fl_ms_table_t *t,
                          const fl_ms_partition_t *p, int32_t bucket, char *out, size_t cap) {
    fl_kv_snapshot_bucket_dir(out, cap, cs->cfg.remote_dir, t->database, t->name, t->table_id,
                              p ? p->name : NULL, p ? p->partition_id : -1, bucket);
}

FL_API_HANDLER(fl_api_get_latest_kv_snapshots) {
    const Fluss__GetLatestKvSnapshotsRequest *req = (const Fluss__GetLatestKvSnapshotsRequest *)m;
    if (!req->table_path || !req->table_path->database_name || !req->table_path->table_name)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION, "A table path is required.");
    const char *db = req->table_path->database_name, *name = req->table_path->table_name;
    if (fl_authz_require_table(FL_AUTHZ(ctx), ctx, FL_ACL_OP_DESCRIBE, db, name, err))
        return err->code;
    const fl_ms_table_t *t = fl_catalog_get_table(&ctx->cs->catalog, db, name, err);
    if (!t) return err->code;
    if (!fl_table_has_pk(t))
        return fl_err_set(err, FLUSS_ERR_NON_PRIMARY_KEY_TABLE_EXCEPTION,
                          "Table '%s.%s' is not a primary key table, so it doesn't have any kv "
                          "snapshots.",
                          db, name);
    bool partitioned = fl_table_is_partitioned(t);
    if (req->partition_name && !partitioned)
        return fl_err_set(err, FLUSS_ERR_TABLE_NOT_PARTITIONED_EXCEPTION,
                          "Table '%s.%s' is not a partitioned table.", db, name);
    if (!req->partition_name && partitioned)
        return fl_err_set(err, FLUSS_ERR_PARTITION_NOT_EXISTS,
                          "Table '%s.%s' is a partitioned table, but partition name is not "
                          "provided.",
                          db, name);
    const fl_ms_partition_t *p = NULL;
    int32_t buckets = t->bucket_count;
    if (partitioned) {
        for (size_t i = 0; i < t->partition_count && !p; i++)
            if (strcmp(t->partitions[i].name, req->partition_name) == 0) p = &t->partitions[i];
        if (!p)
            return fl_err_set(err, FLUSS_ERR_PARTITION_NOT_EXISTS,
                              "The partition '%s' of table '%s.%s' does not exist.",
                              req->partition_name, db, name);
        buckets = p->bucket_count;
    }
    Fluss__GetLatestKvSnapshotsResponse resp = FLUSS__GET_LATEST_KV_SNAPSHOTS_RESPONSE__INIT;
    resp.table_id = t->table_id;
    if (p) {
        resp.has_partition_id = 1;
        resp.partition_id = p->partition_id;
    }
    Fluss__PbKvSnapshot *snaps = fl_calloc(buckets > 0 ? (size_t)buckets : 1, sizeof(*snaps));
    Fluss__PbKvSnapshot **ptrs = fl_calloc(buckets > 0 ? (size_t)buckets : 1, sizeof(*ptrs));
    for (int32_t b = 0; b < buckets; b++) {
        fluss__pb_kv_snapshot__init(&snaps[b]);
        snaps[b].bucket_id = b;
        ptrs[b] = &snaps[b];
        char dir[FL_SNAP_DIR_MAX];
        fl_bucket_dir(ctx->cs, t, p, b, dir, sizeof(dir));
        int64_t *ids = NULL;
        size_t n = 0;
        fl_error_t e;
        if (fl_kv_snapshot_list(dir, &ids, &n, &e) == 0) {
            /* the newest that reads whole (retention may race us) */
            for (size_t k = n; k-- > 0;) {
                fl_kv_snapshot_t s;
                if (fl_kv_snapshot_read(dir, ids[k], &s, &e) != 0) continue;
                snaps[b].has_snapshot_id = snaps[b].has_log_offset = 1;
                snaps[b].snapshot_id = s.id;
                snaps[b].log_offset = s.log_offset;
                fl_kv_snapshot_free(&s);
                break;
            }
        }
        fl_free(ids);
    }
    resp.n_latest_snapshots = (size_t)(buckets > 0 ? buckets : 0);
    resp.latest_snapshots = ptrs;
    fl_server_reply(out, ctx->request_id, &resp.base);
    fl_free(ptrs);
    fl_free(snaps);
    return 0;
}

FL_API_HANDLER(fl_api_get_kv_snapshot_metadata) {
    const Fluss__GetKvSnapshotMetadataRequest *req =
        (const Fluss__GetKvSnapshotMetadataRequest *)m;
    fl_metastore_t *ms = ctx->cs->catalog.ms;
    if (fl_cs_authorize_table_id(ctx, FL_ACL_OP_DESCRIBE, req->table_id, true, err))
        return err->code;
    const fl_ms_table_t *t = ms->ops->table_by_id(ms, req->table_id);
    const fl_ms_partition_t *p = t && req->has_partition_id
                                     ? fl_partition_by_id(t, req->partition_id)
                                     : NULL;
    int32_t buckets = p ? p->bucket_count : t ? t->bucket_count : 0;
    if (!t || (req->has_partition_id && !p) || req->bucket_id < 0 || req->bucket_id >= buckets)
        return fl_err_set(err, FLUSS_ERR_KV_SNAPSHOT_NOT_EXIST,
                          "Failed to get kv snapshot metadata for table bucket "
                          "TableBucket{tableId=%lld, partitionId=%s, bucket=%d} and snapshot id "
                          "%lld. Error: the bucket does not exist",
                          (long long)req->table_id, req->has_partition_id ? "set" : "null",
                          req->bucket_id, (long long)req->snapshot_id);
    char dir[FL_SNAP_DIR_MAX];
    fl_bucket_dir(ctx->cs, t, p, req->bucket_id, dir, sizeof(dir));
    fl_kv_snapshot_t s;
    fl_error_t e;
    char part[48] = "";
    if (req->has_partition_id)
        snprintf(part, sizeof(part), "partitionId=%lld", (long long)req->partition_id);
    if (fl_kv_snapshot_read(dir, req->snapshot_id, &s, &e))
        return fl_err_set(err, FLUSS_ERR_KV_SNAPSHOT_NOT_EXIST,
                          "Failed to get kv snapshot metadata for table bucket "
                          "TableBucket{tableId=%lld, %s%sbucket=%d} and snapshot id %lld. "
                          "Error: Kv snapshot not found",
                          (long long)req->table_id, part, part[0] ? ", " : "", req->bucket_id,
                          (long long)req->snapshot_id);
    Fluss__GetKvSnapshotMetadataResponse resp = FLUSS__GET_KV_SNAPSHOT_METADATA_RESPONSE__INIT;
    resp.log_offset = s.log_offset;
    size_t n = s.file_count;
    Fluss__PbRemotePathAndLocalFile *files = fl_calloc(n ? n : 1, sizeof(*files));
    Fluss__PbRemotePathAndLocalFile **ptrs = fl_calloc(n ? n : 1, sizeof(*ptrs));
    for (size_t i = 0; i < n; i++) {
        fluss__pb_remote_path_and_local_file__init(&files[i]);
        files[i].remote_path = s.files[i].path;
        files[i].local_file_name = s.files[i].local;
        ptrs[i] = &files[i];
    }
    resp.n_snapshot_files = n;
    resp.snapshot_files = ptrs;
    fl_server_reply(out, ctx->request_id, &resp.base);
    fl_free(ptrs);
    fl_free(files);
    fl_kv_snapshot_free(&s);
    return 0;
}

/* The table of a lease request, checked as the reference checks it. */
static const fl_ms_table_t *fl_lease_table(fl_req_ctx_t *ctx, int64_t table_id,
                                           fl_error_t *err) {
    fl_metastore_t *ms = ctx->cs->catalog.ms;
    const fl_ms_table_t *t = ms->ops->table_by_id(ms, table_id);
    if (!t) {
        fl_err_set(err, FLUSS_ERR_TABLE_NOT_EXIST, "Table with id %lld does not exist.",
                   (long long)table_id);
        return NULL;
    }
    if (!fl_table_has_pk(t)) {
        fl_err_set(err, FLUSS_ERR_NON_PRIMARY_KEY_TABLE_EXCEPTION,
                   "Table '%s.%s' is not a primary key table", t->database, t->name);
        return NULL;
    }
    return t;
}

FL_API_HANDLER(fl_api_acquire_kv_snapshot_lease) {
    const Fluss__AcquireKvSnapshotLeaseRequest *req =
        (const Fluss__AcquireKvSnapshotLeaseRequest *)m;
    size_t total = 0, nt = req->n_snapshots_to_lease;
    for (size_t i = 0; i < nt; i++)
        if (fl_cs_authorize_table_id(ctx, FL_ACL_OP_READ, req->snapshots_to_lease[i]->table_id,
                                     true, err))
            return err->code;
    const fl_ms_table_t **tables = fl_calloc(nt ? nt : 1, sizeof(*tables));
    for (size_t i = 0; i < nt; i++) {
        tables[i] = fl_lease_table(ctx, req->snapshots_to_lease[i]->table_id, err);
        if (!tables[i]) {
            fl_free(tables);
            return err->code;
        }
        total += req->snapshots_to_lease[i]->n_bucket_snapshots;
    }
    fl_kv_lease_bucket_t *lease = fl_calloc(total ? total : 1, sizeof(*lease));
    size_t nl = 0;
    /* unavailable ones, grouped per table as they came */
    Fluss__PbKvSnapshotLeaseForTable *ut =
        fl_calloc(req->n_snapshots_to_lease ? req->n_snapshots_to_lease : 1, sizeof(*ut));
    Fluss__PbKvSnapshotLeaseForTable **utp =
        fl_calloc(req->n_snapshots_to_lease ? req->n_snapshots_to_lease : 1, sizeof(*utp));
    Fluss__PbKvSnapshotLeaseForBucket **ub = fl_calloc(total ? total : 1, sizeof(*ub));
    size_t nut = 0, nub = 0;
    for (size_t i = 0; i < req->n_snapshots_to_lease; i++) {
        const Fluss__PbKvSnapshotLeaseForTable *lt = req->snapshots_to_lease[i];
        const fl_ms_table_t *t = tables[i];
        size_t first = nub;
        for (size_t k = 0; k < lt->n_bucket_snapshots; k++) {
            Fluss__PbKvSnapshotLeaseForBucket *b = lt->bucket_snapshots[k];
            const fl_ms_partition_t *p = b->has_partition_id
                                             ? fl_partition_by_id(t, b->partition_id)
                                             : NULL;
            bool ok = !b->has_partition_id || p;
            if (ok) {
                char dir[FL_SNAP_DIR_MAX];
                fl_bucket_dir(ctx->cs, t, p, b->bucket_id, dir, sizeof(dir));
                fl_kv_snapshot_t s;
                fl_error_t e;
                ok = fl_kv_snapshot_read(dir, b->snapshot_id, &s, &e) == 0;
                if (ok) fl_kv_snapshot_free(&s);
            }
            if (ok)
                lease[nl++] = (fl_kv_lease_bucket_t){lt->table_id,
                                                     b->has_partition_id ? b->partition_id : -1,
                                                     b->bucket_id, b->snapshot_id};
            else ub[nub++] = b;
        }
        if (nub > first) {
            fluss__pb_kv_snapshot_lease_for_table__init(&ut[nut]);
            ut[nut].table_id = lt->table_id;
            ut[nut].n_bucket_snapshots = nub - first;
            ut[nut].bucket_snapshots = &ub[first];
            utp[nut] = &ut[nut];
            nut++;
        }
    }
    int rc = fl_kv_leases_acquire(ctx->cs->leases, req->lease_id, req->lease_duration_ms,
                                  fl_time_wall_ms(), lease, nl, err);
    if (!rc) {
        Fluss__AcquireKvSnapshotLeaseResponse resp = FLUSS__ACQUIRE_KV_SNAPSHOT_LEASE_RESPONSE__INIT;
        resp.n_unavailable_snapshots = nut;
        resp.unavailable_snapshots = utp;
        fl_server_reply(out, ctx->request_id, &resp.base);
    }
    fl_free(tables);
    fl_free(lease);
    fl_free(ut);
    fl_free(utp);
    fl_free(ub);
    return rc;
}

FL_API_HANDLER(fl_api_release_kv_snapshot_lease) {
    const Fluss__ReleaseKvSnapshotLeaseRequest *req =
        (const Fluss__ReleaseKvSnapshotLeaseRequest *)m;
    size_t n = req->n_buckets_to_release;
    for (size_t i = 0; i < n; i++)
        if (fl_cs_authorize_table_id(ctx, FL_ACL_OP_READ, req->buckets_to_release[i]->table_id,
                                     true, err))
            return err->code;
    for (size_t i = 0; i < n; i++)
        if (!fl_lease_table(ctx, req->buckets_to_release[i]->table_id, err)) return err->code;
    fl_kv_lease_bucket_t *b = fl_calloc(n ? n : 1, sizeof(*b));
    for (size_t i = 0; i < n; i++) {
        const Fluss__PbTableBucket *x = req->buckets_to_release[i];
        b[i] = (fl_kv_lease_bucket_t){x->table_id, x->has_partition_id ? x->partition_id : -1,
                                      x->bucket_id, -1};
    }
    int rc = fl_kv_leases_release(ctx->cs->leases, req->lease_id, b, n, err);
    fl_free(b);
    if (rc) return rc;
    Fluss__ReleaseKvSnapshotLeaseResponse resp = FLUSS__RELEASE_KV_SNAPSHOT_LEASE_RESPONSE__INIT;
    fl_server_reply(out, ctx->request_id, &resp.base);
    return 0;
}

FL_API_HANDLER(fl_api_drop_kv_snapshot_lease) {
    const Fluss__DropKvSnapshotLeaseRequest *req = (const Fluss__DropKvSnapshotLeaseRequest *)m;
    /* READ on every table the lease holds (no such lease: no check) */
    if (FL_AUTHZ(ctx) && !ctx->who.trusted) {
        int64_t *ids = NULL;
        size_t n = fl_kv_leases_tables(ctx->cs->leases, req->lease_id, &ids);
        int arc = 0;
        for (size_t i = 0; i < n && !arc; i++)
            arc = fl_cs_authorize_table_id(ctx, FL_ACL_OP_READ, ids[i], false, err);
        fl_free(ids);
        if (arc) return arc;
    }
    int rc = fl_kv_leases_drop(ctx->cs->leases, req->lease_id, err);
    if (rc) return rc;
    Fluss__DropKvSnapshotLeaseResponse resp = FLUSS__DROP_KV_SNAPSHOT_LEASE_RESPONSE__INIT;
    fl_server_reply(out, ctx->request_id, &resp.base);
    return 0;
}
