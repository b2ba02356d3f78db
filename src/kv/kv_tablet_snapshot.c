/*
 * kv_tablet_snapshot.c — periodic KV snapshots of a kv tablet (Fluss's
 * PeriodicSnapshotManager + KvTabletSnapshotTarget): a consistent RocksDB
 * checkpoint (kv_tablet.c) uploaded to the bucket's remote directory
 * (kv_snapshot.c), then retention. Snapshot ids count up from 0 per bucket
 * and continue after a restart from the newest one found.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "common_buf.h"
#include "common_fs.h"
#include "common_log.h"
#include "kv_tablet.h"

int fl_kv_tablet_set_remote(fl_kv_tablet_t *kt, const char *remote_dir, fl_error_t *err) {
    int64_t *ids = NULL;
    size_t n = 0;
    int rc = fl_kv_snapshot_list(remote_dir, &ids, &n, err);
    if (rc) return rc;
    pthread_mutex_lock(&kt->snap_lock);
    fl_free(kt->remote_dir);
    kt->remote_dir = fl_strdup(remote_dir);
    kt->snap_next_id = n ? ids[n - 1] + 1 : 0;
    kt->snap_last_offset = 0;
    if (n) {
        fl_kv_snapshot_t s;
        fl_error_t e;
        if (fl_kv_snapshot_read(remote_dir, ids[n - 1], &s, &e) == 0) {
            kt->snap_last_offset = s.log_offset;
            fl_kv_snapshot_free(&s);
        }
    }
    pthread_mutex_unlock(&kt->snap_lock);
    fl_free(ids);
    return 0;
}

/* The store's instance name for shared SST files: RocksDB's IDENTITY. */
static void fl_kv_instance(const fl_kv_tablet_t *kt, char *out, size_t cap) {
    char path[4300];
    snprintf(path, sizeof(path), "%s/IDENTITY", kt->dir);
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t e;
    size_t k = 0;
    if (fl_fs_read_all(path, 256, &b, NULL, &e) == 0)
        for (size_t i = 0; i < b.len && k + 1 < cap; i++) {
            char c = (char)b.data[i];
            if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
                out[k++] = c;
        }
    fl_buf_free(&b);
    if (k == 0) k = (size_t)snprintf(out, cap, "store");
    out[k] = 0;
}

int fl_kv_tablet_snapshot(fl_kv_tablet_t *kt, int64_t now_ms, size_t keep,
                          const fl_kv_snapshot_hooks_t *hooks, bool *taken, fl_error_t *err) {
    fl_kv_snapshot_hooks_t none = {NULL, NULL, NULL};
    if (!hooks) hooks = &none;
    *taken = false;
    pthread_mutex_lock(&kt->snap_lock);
    if (!kt->remote_dir) {
        pthread_mutex_unlock(&kt->snap_lock);
        return 0;
    }
    char tmp[4300];
    snprintf(tmp, sizeof(tmp), "%s.snapshot-tmp", kt->dir);
    fl_error_t e;
    fl_fs_remove_tree(tmp, &e);
    int64_t log_offset = 0, row_count = -1;
    int rc = 0;
    /* cheap test first: nothing new since the newest snapshot */
    if (kt->log.ops->high_watermark(kt->log.ctx) <= kt->snap_last_offset) goto done;
    rc = fl_kv_tablet_checkpoint(kt, tmp, &log_offset, &row_count, err);
    if (rc || log_offset <= kt->snap_last_offset) goto done;
    char instance[64];
    fl_kv_instance(kt, instance, sizeof(instance));
    rc = fl_kv_snapshot_upload(kt->remote_dir, tmp, instance, kt->snap_next_id, log_offset,
                               row_count, now_ms, hooks->commit, hooks->ctx, err);
    if (rc) {
        /* offered for commit (or not even that): the id is not used again */
        kt->snap_next_id++;
        goto done;
    }
    FL_INFO("kv %s: snapshot %lld at log offset %lld", kt->dir, (long long)kt->snap_next_id,
            (long long)log_offset);
    kt->snap_next_id++;
    kt->snap_last_offset = log_offset;
    *taken = true;
    if (fl_kv_snapshot_retain(kt->remote_dir, keep ? keep : 1, hooks->pinned, hooks->ctx, &e))
        FL_WARN("kv %s: snapshot retention: %s", kt->dir, e.msg);
done:
    fl_fs_remove_tree(tmp, &e);
    pthread_mutex_unlock(&kt->snap_lock);
    return rc;
}
