/*
 * server_lake_expire.h — snapshot expiry of a lake table, after a tiering
 * round committed, for tables with table.datalake.auto-expire-snapshot
 * (Fluss's key; its 0.9.1 Iceberg committer ignores it, its Paimon
 * committer lets Paimon expire at commit — see DESIGN.md "Lake tier" and
 * tests/interop/KNOWN_DIFFERENCES.md). What Iceberg's Java
 * ExpireSnapshots does by default, on our Hadoop layout:
 *
 *   1. load the head; pick the expired snapshots from the table's own
 *      retention properties (fl_ice_meta_expired: history.expire.
 *      max-snapshot-age-ms, min-snapshots-to-keep; gc.enabled=false
 *      expires nothing). The current snapshot — the one GET_LAKE_SNAPSHOT
 *      answers and every round builds on — is never among them.
 *   2. commit the head without them as the next version
 *      (fl_ice_meta_without_snapshots, the link(2) commit of
 *      lake_iceberg_table.h). A lost commit (_CONFLICT) or a failure
 *      deletes nothing; the next round tries again.
 *   3. only once that version is committed and durable: delete the files
 *      the expired snapshots reference and no kept one does — their
 *      manifest lists and fluss-offsets files, manifests no kept list
 *      names, data files no kept manifest names (for log tables only
 *      merged-away manifests; their data files live on as EXISTING
 *      entries). When any list or manifest cannot be read, nothing is
 *      deleted (what is kept would be unknown).
 *
 * Crash after 2, before or during 3: the files stay, named only by older
 * versions; the orphan sweep (server_lake_gc.h) removes them, as it
 * removes anything the head does not reference. The deletions are not
 * fsynced for the same reason: a file that comes back is an orphan.
 *
 * Readers: a reader of the head is never affected. A reader holding an
 * older version or an expired snapshot id (a scan planned before, a
 * GET_LAKE_SNAPSHOT by id) may find the snapshot gone or its files
 * missing: Iceberg's own behaviour after expiry.
 *
 * Thread rule: the tiering thread, after the table's round.
 */
#ifndef FL_SERVER_LAKE_EXPIRE_H
#define FL_SERVER_LAKE_EXPIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"

#define FL_LAKE_AUTO_EXPIRE_KEY "table.datalake.auto-expire-snapshot"

typedef struct fl_lake_expire_result {
    size_t expired;  /* snapshots the committed version removed */
    int32_t version; /* that version; 0: none committed */
    size_t deleted;  /* files deleted after it */
} fl_lake_expire_result_t;

/* Expires what the retention of the lake table at dir lets go at now_ms
 * (wall clock), steps 1–3 above. 0 also when nothing expires. An error
 * after res->version is set means the version is committed but files
 * were left for the orphan sweep. */
int fl_lake_expire(const char *dir, int64_t now_ms, fl_lake_expire_result_t *res,
                   fl_error_t *err);

#endif
