/*
 * server_lake_external.c — the coordinator's side of an external tiering
 * service (`lake.tiering.mode: external`, ours): Fluss 0.9.1's own Flink
 * tiering job (fluss-flink + fluss-lake-iceberg) tiers the lake tables
 * and flussd only schedules and records, through 0.9.1's messages:
 *
 *   LAKE_TIERING_HEARTBEAT (1042)    the job's reports of the tables it
 *       tiers, finished or failed, and its request for the next one
 *       (coordinator_lake_tiering.h keeps the schedule and the epochs);
 *   PREPARE_LAKE_TABLE_SNAPSHOT (1052) the offsets a round reached: merged
 *       over the lake head's (the job names only the buckets it moved),
 *       written as Fluss's TableBucketOffsets JSON into the lake table's
 *       metadata directory; the answer is its path, which the job puts
 *       into its Iceberg snapshot's `fluss-offsets` summary property, as
 *       flussd's own rounds do;
 *   COMMIT_LAKE_TABLE_SNAPSHOT (1030) after the job's Iceberg commit: the
 *       snapshot must be in the table with that `fluss-offsets` path, and
 *       the tablet servers hear its offsets (NOTIFY_LAKE_TABLE_OFFSET).
 *
 * The lake stays the only record of what is tiered: GET_LAKE_SNAPSHOT
 * reads the Iceberg head and its `fluss-offsets` file, whoever committed
 * it (server_lake.c), so there is no second copy to reconcile. In the
 * internal mode the three answer every table with -1 saying so, and the
 * heartbeat hands out no table.
 *
 * Thread rule: the heartbeat runs under the coordinator's catalog lock;
 * PREPARE and COMMIT under it on the coordinator's worker (file I/O).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common_alloc.h"
#include "common_duration.h"
#include "common_fs.h"
#include "common_time.h"
#include "common_uuid.h"
#include "coordinator_lake.h"
#include "coordinator_lake_table.h"
#include "coordinator_lake_tiering.h"
#include "server_coordinator.h"
#include "server_lake_commit.h"
#include "server_lake_tier.h"
#include "server_node.h"
#include "types_table.h"

#define FL_INTERNAL_MODE_MSG                                                                   \
    "lake.tiering.mode is internal: flussd tiers its lake tables itself (set "                \
    "lake.tiering.mode: external for a tiering job)"

static bool fl_external(const fl_coordinator_server_t *cs) {
    return fl_lake_config_on(&cs->cfg.defaults.lake) && cs->cfg.defaults.lake.external_tiering;
}

/* (lock) The lake tables of the catalog with their freshness. */
static size_t fl_lake_tables(fl_coordinator_server_t *cs, fl_lake_tiering_table_t **out) {
    size_t n = cs->ms->ops->table_count(cs->ms), k = 0;
    fl_lake_tiering_table_t *v = fl_calloc(n + 1, sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        const fl_ms_table_t *t = cs->ms->ops->table_at(cs->ms, i);
        if (!fl_lake_table_json_enabled(t->table_json)) continue;
        fl_table_desc_t d;
        fl_error_t err;
        int64_t ms = FL_LAKE_FRESHNESS_DEFAULT_MS;
        if (!fl_table_desc_from_bytes(t->table_json, strlen(t->table_json), &d, &err)) {
            const char *f = fl_kvlist_get(&d.properties, "table.datalake.freshness");
            if (f && fl_duration_parse_ms(f, &ms, &err)) ms = FL_LAKE_FRESHNESS_DEFAULT_MS;
            fl_table_desc_free(&d);
        }
        v[k++] = (fl_lake_tiering_table_t){t->table_id, ms};
    }
    *out = v;
    return k;
}

/* One answer entry: ok, or the code and its message. */
typedef struct fl_hb_entry {
    Fluss__PbHeartbeatRespForTable r;
    Fluss__ErrorResponse e;
    char msg[160];
} fl_hb_entry_t;

static void fl_hb_set(fl_hb_entry_t *x, int64_t table_id, int code, int64_t epoch,
                      int32_t coordinator_epoch) {
    fluss__pb_heartbeat_resp_for_table__init(&x->r);
    x->r.table_id = table_id;
    if (!code) return;
    fluss__error_response__init(&x->e);
    x->e.error_code = code;
    switch (code) {
    case FL_LAKE_TIERING_UNKNOWN_TABLE:
        snprintf(x->msg, sizeof(x->msg), "The table %" PRId64 " is not a lake table being tiered.",
                 table_id);
        break;
    case FL_LAKE_TIERING_FENCED:
        snprintf(x->msg, sizeof(x->msg),
                 "The tiering epoch %" PRId64 " of table %" PRId64 " is not the current one.",
                 epoch, table_id);
        break;
    case FLUSS_ERR_INVALID_COORDINATOR_EXCEPTION:
        snprintf(x->msg, sizeof(x->msg), "The coordinator epoch is %d.", coordinator_epoch);
        break;
    case FL_LAKE_TIERING_BAD_STATE:
        snprintf(x->msg, sizeof(x->msg), "The table %" PRId64 " is not being tiered.", table_id);
        break;
    default:
        snprintf(x->msg, sizeof(x->msg), "%s", FL_INTERNAL_MODE_MSG);
        break;
    }
    x->e.error_message = x->msg;
    x->r.error = &x->e;
}

typedef enum { FL_HB_TIERING, FL_HB_FINISHED, FL_HB_FAILED } fl_hb_kind_t;

static void fl_hb_entries(fl_coordinator_server_t *cs, Fluss__PbHeartbeatReqForTable **in, size_t n,
                          fl_hb_kind_t kind, const Fluss__LakeTieringHeartbeatRequest *req,
                          int64_t now, fl_hb_entry_t *x, Fluss__PbHeartbeatRespForTable **ptrs) {
    int32_t epoch = cs->cfg.coordinator_epoch;
    for (size_t i = 0; i < n; i++) {
        const Fluss__PbHeartbeatReqForTable *q = in[i];
        int code;
        if (!fl_external(cs)) {
            code = FLUSS_ERR_UNKNOWN_SERVER_ERROR;
        } else if (q->coordinator_epoch != epoch) {
            code = FLUSS_ERR_INVALID_COORDINATOR_EXCEPTION;
        } else if (kind == FL_HB_TIERING) {
            code = fl_lake_tiering_renew(cs->lake_tiering, q->table_id, q->tiering_epoch, now);
        } else if (kind == FL_HB_FAILED) {
            code = fl_lake_tiering_failed(cs->lake_tiering, q->table_id, q->tiering_epoch, now);
        } else {
            bool force = false;
            for (size_t k = 0; k < req->n_force_finished_tables && !force; k++)
                force = req->force_finished_tables[k] == q->table_id;
            code = fl_lake_tiering_finished(cs->lake_tiering, q->table_id, q->tiering_epoch, force,
                                            now);
        }
        fl_hb_set(&x[i], q->table_id, code, q->tiering_epoch, epoch);
        ptrs[i] = &x[i].r;
    }
}

FL_API_HANDLER(fl_api_lake_tiering_heartbeat) {
    const Fluss__LakeTieringHeartbeatRequest *req = (const Fluss__LakeTieringHeartbeatRequest *)m;
    fl_coordinator_server_t *cs = ctx->cs;
    (void)err;
    int64_t now = fl_time_mono_ms();
    if (fl_external(cs)) {
        fl_lake_tiering_table_t *tables = NULL;
        size_t n = fl_lake_tables(cs, &tables);
        fl_lake_tiering_sync(cs->lake_tiering, tables, n, now);
        fl_free(tables);
    }
    /* failed, tiering, finished, then the request for a table: 0.9.1's order */
    size_t nf = req->n_failed_tables, nt = req->n_tiering_tables, nd = req->n_finished_tables;
    fl_hb_entry_t *x = fl_calloc(nf + nt + nd + 1, sizeof(*x));
    Fluss__PbHeartbeatRespForTable **ptrs = fl_calloc(nf + nt + nd + 1, sizeof(*ptrs));
    fl_hb_entries(cs, req->failed_tables, nf, FL_HB_FAILED, req, now, x, ptrs);
    fl_hb_entries(cs, req->tiering_tables, nt, FL_HB_TIERING, req, now, x + nf, ptrs + nf);
    fl_hb_entries(cs, req->finished_tables, nd, FL_HB_FINISHED, req, now, x + nf + nt,
                  ptrs + nf + nt);
    Fluss__LakeTieringHeartbeatResponse resp = FLUSS__LAKE_TIERING_HEARTBEAT_RESPONSE__INIT;
    resp.coordinator_epoch = cs->cfg.coordinator_epoch;
    resp.n_failed_table_resp = nf;
    resp.failed_table_resp = ptrs;
    resp.n_tiering_table_resp = nt;
    resp.tiering_table_resp = ptrs + nf;
    resp.n_finished_table_resp = nd;
    resp.finished_table_resp = ptrs + nf + nt;
    Fluss__PbLakeTieringTableInfo info = FLUSS__PB_LAKE_TIERING_TABLE_INFO__INIT;
    Fluss__PbTablePath path = FLUSS__PB_TABLE_PATH__INIT;
    int64_t table_id, epoch;
    if (req->has_request_table && req->request_table && fl_external(cs) &&
        fl_lake_tiering_take(cs->lake_tiering, now, &table_id, &epoch)) {
        const fl_ms_table_t *t = cs->ms->ops->table_by_id(cs->ms, table_id);
        if (t) { /* the sync above saw it: it is in the catalog */
            path.database_name = (char *)t->database;
            path.table_name = (char *)t->name;
            info.table_id = table_id;
            info.table_path = &path;
            info.tiering_epoch = epoch;
            resp.tiering_table = &info;
        }
    }
    fl_server_reply(out, ctx->request_id, &resp.base);
    fl_free(ptrs);
    fl_free(x);
    return 0;
}

/* ---- PREPARE_LAKE_TABLE_SNAPSHOT ---- */

/* The lake table of table_id: its directory; NULL and the code when none. */
static const fl_ms_table_t *fl_lake_table_of(fl_coordinator_server_t *cs, int64_t table_id,
                                             char *dir, size_t cap, fl_error_t *err) {
    const fl_ms_table_t *t = cs->ms->ops->table_by_id(cs->ms, table_id);
    if (!t) {
        fl_err_set(err, FLUSS_ERR_TABLE_NOT_EXIST, "Table %" PRId64 " does not exist.", table_id);
        return NULL;
    }
    if (!fl_external(cs)) {
        fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR, FL_INTERNAL_MODE_MSG);
        return NULL;
    }
    if (!fl_lake_table_json_enabled(t->table_json) ||
        !fl_lake_table_dir(&cs->cfg.defaults.lake, t->database, t->name, dir, cap)) {
        fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                   "Table %s.%s is not a lake table ('table.datalake.enabled' is not true).",
                   t->database, t->name);
        return NULL;
    }
    return t;
}

/* The merged offsets of one table written to a new file: *uri its path. */
static int fl_prepare_table(fl_coordinator_server_t *cs, const Fluss__PbTableOffsets *to,
                            bool fresh, char **uri, fl_error_t *err) {
    char dir[4096 + 512];
    const fl_ms_table_t *t = fl_lake_table_of(cs, to->table_id, dir, sizeof(dir), err);
    if (!t) return err->code;
    fl_ice_table_head_t h;
    fl_ice_table_head_init(&h);
    fl_lake_offsets_t offs = {0};
    int rc = 0;
    if (!fresh) { /* over the lake head's offsets: the job names only the buckets it moved */
        rc = fl_ice_table_load(dir, &h, err);
        if (!rc) rc = fl_lake_head_offsets(&h, t->table_id, &offs, err);
    }
    for (size_t i = 0; !rc && i < to->n_bucket_offsets; i++) {
        const Fluss__PbBucketOffset *b = to->bucket_offsets[i];
        if (!b->has_log_end_offset) continue;
        fl_lake_offsets_set(&offs, b->has_partition_id ? b->partition_id : -1, b->bucket_id,
                            b->log_end_offset);
    }
    if (!rc) {
        fl_table_desc_t d;
        bool partitioned = false;
        if (!fl_table_desc_from_bytes(t->table_json, strlen(t->table_json), &d, err)) {
            partitioned = d.partition_keys.count > 0;
            fl_table_desc_free(&d);
        }
        char *json = fl_lake_offsets_encode(&offs, t->table_id, partitioned);
        char uuid[FL_UUID_TEXT_LEN + 1], path[4096 + 640];
        fl_uuid_random(uuid);
        snprintf(path, sizeof(path), "%s/metadata/prepared-%s.fluss-offsets.json", dir, uuid);
        rc = fl_fs_write_atomic(path, json, strlen(json), err);
        free(json);
        if (!rc) {
            size_t n = strlen(path) + 8;
            *uri = fl_malloc(n);
            snprintf(*uri, n, "file://%s", path);
        }
    }
    fl_lake_offsets_free(&offs);
    fl_ice_table_head_reset(&h);
    return rc;
}

FL_API_HANDLER(fl_api_prepare_lake_table_snapshot) {
    const Fluss__PrepareLakeTableSnapshotRequest *req =
        (const Fluss__PrepareLakeTableSnapshotRequest *)m;
    (void)err;
    size_t n = req->n_bucket_offsets;
    Fluss__PbPrepareLakeTableRespForTable *rs = fl_calloc(n + 1, sizeof(*rs));
    Fluss__PbPrepareLakeTableRespForTable **ptrs = fl_calloc(n + 1, sizeof(*ptrs));
    char **uris = fl_calloc(n + 1, sizeof(char *));
    fl_error_t *errs = fl_calloc(n + 1, sizeof(*errs));
    bool fresh = req->has_ignore_previous_table_offsets && req->ignore_previous_table_offsets;
    for (size_t i = 0; i < n; i++) {
        fluss__pb_prepare_lake_table_resp_for_table__init(&rs[i]);
        rs[i].has_table_id = 1;
        rs[i].table_id = req->bucket_offsets[i]->table_id;
        fl_err_clear(&errs[i]);
        if (fl_prepare_table(ctx->cs, req->bucket_offsets[i], fresh, &uris[i], &errs[i])) {
            rs[i].has_error_code = 1;
            rs[i].error_code = fl_server_wire_code(errs[i].code);
            rs[i].error_message = errs[i].msg;
        } else {
            rs[i].lake_table_offsets_path = uris[i];
        }
        ptrs[i] = &rs[i];
    }
    Fluss__PrepareLakeTableSnapshotResponse resp = FLUSS__PREPARE_LAKE_TABLE_SNAPSHOT_RESPONSE__INIT;
    resp.n_prepare_lake_table_resp = n;
    resp.prepare_lake_table_resp = ptrs;
    fl_server_reply(out, ctx->request_id, &resp.base);
    for (size_t i = 0; i < n; i++) fl_free(uris[i]);
    fl_free(uris);
    fl_free(errs);
    fl_free(ptrs);
    fl_free(rs);
    return 0;
}

/* ---- COMMIT_LAKE_TABLE_SNAPSHOT ---- */

/* The job's Iceberg commit of table m->table_id checked and announced. */
static int fl_commit_table(fl_coordinator_server_t *cs, const Fluss__PbLakeTableSnapshotMetadata *md,
                           fl_error_t *err) {
    char dir[4096 + 512];
    const fl_ms_table_t *t = fl_lake_table_of(cs, md->table_id, dir, sizeof(dir), err);
    if (!t) return err->code;
    fl_ice_table_head_t h;
    fl_ice_table_head_init(&h);
    fl_lake_offsets_t offs = {0};
    int rc = fl_ice_table_load(dir, &h, err);
    const fl_ice_snapshot_t *s = rc ? NULL : fl_ice_meta_snapshot(&h.meta.meta, md->snapshot_id);
    if (!rc && !s)
        rc = fl_err_set(err, FLUSS_ERR_LAKE_SNAPSHOT_NOT_EXIST,
                        "Lake snapshot %" PRId64 " is not in the Iceberg table of %s.%s.",
                        md->snapshot_id, t->database, t->name);
    const char *named = s ? fl_lake_summary(s, "fluss-offsets") : NULL;
    if (!rc && (!named || !md->tiered_bucket_offsets_file_path ||
                strcmp(named, md->tiered_bucket_offsets_file_path) != 0))
        rc = fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                        "Lake snapshot %" PRId64 " of %s.%s names the offsets file %s, not %s.",
                        md->snapshot_id, t->database, t->name, named ? named : "(none)",
                        md->tiered_bucket_offsets_file_path ? md->tiered_bucket_offsets_file_path
                                                            : "(none)");
    bool tiered = false;
    if (!rc) rc = fl_lake_snapshot_offsets(s, t->table_id, &offs, &tiered, err);
    if (!rc) fl_lake_notify_offsets(cs, t->table_id, md->snapshot_id, &offs);
    fl_lake_offsets_free(&offs);
    fl_ice_table_head_reset(&h);
    return rc;
}

FL_API_HANDLER(fl_api_commit_lake_table_snapshot) {
    const Fluss__CommitLakeTableSnapshotRequest *req =
        (const Fluss__CommitLakeTableSnapshotRequest *)m;
    (void)err;
    size_t nm = req->n_lake_table_snapshot_metadata, nt = req->n_tables_req;
    Fluss__PbCommitLakeTableSnapshotRespForTable *rs = fl_calloc(nm + nt + 1, sizeof(*rs));
    Fluss__PbCommitLakeTableSnapshotRespForTable **ptrs = fl_calloc(nm + nt + 1, sizeof(*ptrs));
    fl_error_t *errs = fl_calloc(nm + nt + 1, sizeof(*errs));
    size_t n = 0;
    for (size_t i = 0; i < nm; i++, n++) {
        const Fluss__PbLakeTableSnapshotMetadata *md = req->lake_table_snapshot_metadata[i];
        fluss__pb_commit_lake_table_snapshot_resp_for_table__init(&rs[n]);
        rs[n].table_id = md->table_id;
        fl_err_clear(&errs[n]);
        if (fl_commit_table(ctx->cs, md, &errs[n])) {
            rs[n].has_error_code = 1;
            rs[n].error_code = fl_server_wire_code(errs[n].code);
            rs[n].error_message = errs[n].msg;
        }
        ptrs[n] = &rs[n];
    }
    /* 0.9.1's v1 commit (offsets inline, no metadata) of a table the
     * metadata above does not cover: its offsets would be nowhere in the
     * lake, which is our only record */
    for (size_t i = 0; i < nt; i++) {
        const Fluss__PbLakeTableSnapshotInfo *ti = req->tables_req[i];
        bool covered = false;
        for (size_t k = 0; k < nm && !covered; k++)
            covered = req->lake_table_snapshot_metadata[k]->table_id == ti->table_id;
        if (covered) continue;
        fluss__pb_commit_lake_table_snapshot_resp_for_table__init(&rs[n]);
        rs[n].table_id = ti->table_id;
        rs[n].has_error_code = 1;
        rs[n].error_code = FLUSS_ERR_UNKNOWN_SERVER_ERROR;
        rs[n].error_message = "a lake snapshot commit needs its offsets file "
                              "(lake_table_snapshot_metadata): inline offsets are not kept";
        ptrs[n] = &rs[n];
        n++;
    }
    Fluss__CommitLakeTableSnapshotResponse resp = FLUSS__COMMIT_LAKE_TABLE_SNAPSHOT_RESPONSE__INIT;
    resp.n_table_resp = n;
    resp.table_resp = ptrs;
    fl_server_reply(out, ctx->request_id, &resp.base);
    fl_free(errs);
    fl_free(ptrs);
    fl_free(rs);
    return 0;
}
