/*
 * server_lake.c — the lake APIs both server roles answer (Fluss's
 * RpcServiceBase.getLakeSnapshot). fluss-c has no lake tier yet, so no
 * table ever has a lake snapshot: GET_LAKE_SNAPSHOT answers exactly what
 * 0.9.1 answers for a table without one — LAKE_SNAPSHOT_NOT_EXIST (53),
 * after the same checks in the same order (both snapshot_id and
 * readable=true: an illegal argument, which 0.9.1 maps to
 * UNKNOWN_SERVER_ERROR; an unknown table: TABLE_NOT_EXIST). The Flink
 * source probes it for datalake-enabled tables and reads on from Fluss
 * alone on 53.
 *
 * Thread rule: runs with the coordinator's catalog lock (server_dispatch.c).
 */
#include <inttypes.h>
#include <stdio.h>

#include "server_coordinator.h"
#include "server_node.h"

FL_API_HANDLER(fl_api_get_lake_snapshot) {
    (void)out;
    const Fluss__GetLakeSnapshotRequest *req = (const Fluss__GetLakeSnapshotRequest *)m;
    const Fluss__PbTablePath *p = req->table_path;
    if (!p || !p->database_name || !p->table_name)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE, "the request has no table path");
    bool readable = req->has_readable && req->readable;
    if (readable && req->has_snapshot_id)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          "GetLakeSnapshotRequest cannot set both snapshot_id and readable=true; "
                          "use one or the other to specify either a snapshot by id or the "
                          "latest readable snapshot.");
    const fl_ms_table_t *t =
        fl_catalog_get_table(&ctx->cs->catalog, p->database_name, p->table_name, err);
    if (!t) return err->code;
    char id[40] = "";
    if (!readable && req->has_snapshot_id)
        snprintf(id, sizeof(id), ", snapshot id: %" PRId64, req->snapshot_id);
    return fl_err_set(err, FLUSS_ERR_LAKE_SNAPSHOT_NOT_EXIST,
                      "Lake table %s doesn't exist for table: %s.%s, table id: %" PRId64 "%s",
                      readable ? "readable snapshot" : "snapshot", t->database, t->name,
                      t->table_id, id);
}
