/*
 * server_lake_expire.c — snapshot expiry of a lake table
 * (server_lake_expire.h).
 */
#include "server_lake_expire.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_strlist.h"
#include "common_vfs.h"
#include "lake_iceberg_table.h"
#include "server_lake_commit.h"
#include "server_lake_gc.h"

/* The expired snapshots of m (ids, n of them, in m's order as
 * fl_ice_meta_expired gives them) as shallow copies: their strings stay
 * in m's arena. One pass: a first expiry may take most of a long
 * history. */
static fl_ice_snapshot_t *fl_expire_snapshots_of(const fl_ice_table_meta_t *m,
                                                 const int64_t *ids, size_t n) {
    fl_ice_snapshot_t *out = fl_calloc(n + 1, sizeof(*out));
    size_t k = 0;
    for (size_t i = 0; i < m->n_snapshots && k < n; i++)
        if (m->snapshots[i].snapshot_id == ids[k]) out[k++] = m->snapshots[i];
    assert(k == n); /* fl_ice_meta_expired picked them from m, in order */
    return out;
}

/* Deletes what the expired snapshots reference and the kept ones do not
 * (step 3); *deleted counts the files unlinked. */
static int fl_expire_delete(const fl_ice_snapshot_t *gone, size_t n_gone,
                            const fl_ice_table_meta_t *kept, size_t *deleted, fl_error_t *err) {
    fl_strlist_t keep = {0}, drop = {0};
    int rc = fl_lake_snapshot_files(kept->snapshots, kept->n_snapshots, &keep, err);
    if (!rc) rc = fl_lake_snapshot_files(gone, n_gone, &drop, err);
    if (!rc) {
        fl_lake_paths_sort(&keep);
        fl_lake_paths_sort(&drop);
        for (size_t i = 0; i < drop.count; i++) {
            const char *p = drop.items[i];
            if ((i && strcmp(p, drop.items[i - 1]) == 0) || fl_lake_paths_have(&keep, p))
                continue;
            if (fl_vfs_unlink(p) == 0)
                (*deleted)++;
            else if (errno != ENOENT) /* left for the orphan sweep */
                FL_WARN("lake expiry: cannot delete %s: %s", p, strerror(errno));
        }
    }
    fl_strlist_free(&drop);
    fl_strlist_free(&keep);
    return rc;
}

int fl_lake_expire(const char *dir, int64_t now_ms, fl_lake_expire_result_t *res,
                   fl_error_t *err) {
    memset(res, 0, sizeof(*res));
    fl_ice_table_head_t h;
    fl_ice_table_head_init(&h);
    fl_ice_meta_read_t next;
    fl_ice_meta_read_init(&next);
    int64_t *ids = NULL;
    fl_ice_snapshot_t *gone = NULL;
    int rc = fl_ice_table_load(dir, &h, err);
    if (rc) goto done;
    const fl_ice_table_meta_t *m = &h.meta.meta;
    fl_ice_expire_policy_t policy;
    fl_ice_expire_policy_of(m, &policy);
    ids = fl_calloc(m->n_snapshots + 1, sizeof(*ids));
    size_t n = fl_ice_meta_expired(m, &policy, now_ms, ids);
    if (n == 0) goto done;
    gone = fl_expire_snapshots_of(m, ids, n);
    if ((rc = fl_ice_meta_without_snapshots(m, h.metadata_location, ids, n, &next, err))) goto done;
    fl_ice_commit_info_t info = {0};
    /* a failure, even one after the link (visible, not known durable),
     * deletes nothing: only a committed version lets files go */
    if ((rc = fl_ice_table_commit_info(dir, h.version, &next.meta, &info, err))) goto done;
    res->expired = n;
    res->version = info.version;
    fl_lake_kill_point("expired");
    rc = fl_expire_delete(gone, n, &next.meta, &res->deleted, err);
done:
    fl_free(gone);
    fl_free(ids);
    fl_ice_meta_read_reset(&next);
    fl_ice_table_head_reset(&h);
    return rc;
}
