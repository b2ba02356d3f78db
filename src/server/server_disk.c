/*
 * server_disk.c — data-disk write protection (server_disk.h).
 */
#include "server_disk.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

#include "common_log.h"
#include "common_vfs.h"

int fl_disk_guard_check_config(double limit_ratio, double recover_ratio, fl_error_t *err) {
    if (recover_ratio > 0.0 && recover_ratio < limit_ratio && limit_ratio <= 1.0) return 0;
    return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                      "Invalid disk write-limit configuration: server.data-disk.write-recover-ratio "
                      "must be within (0.0, server.data-disk.write-limit-ratio), and "
                      "server.data-disk.write-limit-ratio must be no greater than 1.0; "
                      "server.data-disk.write-limit-ratio=%g, "
                      "server.data-disk.write-recover-ratio=%g",
                      limit_ratio, recover_ratio);
}

void fl_disk_guard_init(fl_disk_guard_t *g, int32_t server_id, const char *path, double limit_ratio,
                        double recover_ratio) {
    memset(g, 0, sizeof(*g));
    g->server_id = server_id;
    snprintf(g->path, sizeof(g->path), "%s", path);
    g->limit_ratio = limit_ratio;
    g->recover_ratio = recover_ratio;
    atomic_init(&g->locked, false);
    atomic_init(&g->usage_ppm, 0);
}

void fl_disk_guard_update(fl_disk_guard_t *g, double usage) {
    atomic_store(&g->usage_ppm, (uint_fast64_t)(usage * 1e6 + 0.5));
    if (g->limit_ratio >= 1.0) { /* off: sample only */
        atomic_store(&g->locked, false);
        return;
    }
    bool locked = atomic_load(&g->locked);
    if (!locked && usage >= g->limit_ratio) {
        atomic_store(&g->locked, true);
        FL_WARN("TabletServer %d disk usage reached %.2f%% (limit %.2f%%); rejecting writes until "
                "usage reaches or drops below %.2f%%.",
                g->server_id, usage * 100, g->limit_ratio * 100, g->recover_ratio * 100);
    } else if (locked && usage <= g->recover_ratio) {
        atomic_store(&g->locked, false);
        FL_INFO("TabletServer %d disk usage dropped to %.2f%% (recover threshold %.2f%%); resuming "
                "writes.",
                g->server_id, usage * 100, g->recover_ratio * 100);
    }
}

double fl_disk_guard_sample(fl_disk_guard_t *g) {
    /* the data dir may not exist yet: its nearest existing ancestor is on
     * the same file system until it is created */
    char path[sizeof(g->path)];
    snprintf(path, sizeof(path), "%s", g->path);
    struct statvfs sv;
    int rc;
    for (;;) {
        rc = fl_vfs_statvfs(path, &sv);
        if (rc == 0 || errno != ENOENT) break;
        char *slash = strrchr(path, '/');
        if (!slash || slash == path) {
            snprintf(path, sizeof(path), "%s", slash ? "/" : ".");
            rc = fl_vfs_statvfs(path, &sv);
            break;
        }
        *slash = '\0';
    }
    if (rc != 0 || sv.f_blocks == 0) {
        FL_WARN("TabletServer %d: cannot sample the disk usage of %s (%s); keeping the write-lock "
                "state %s",
                g->server_id, g->path, rc ? strerror(errno) : "no blocks",
                fl_disk_guard_locked(g) ? "locked" : "unlocked");
        return -1;
    }
    double total = (double)sv.f_blocks * (double)sv.f_frsize;
    double usable = (double)sv.f_bavail * (double)sv.f_frsize;
    double usage = usable >= total ? 0.0 : (total - usable) / total;
    g->sampled = true;
    fl_disk_guard_update(g, usage);
    return usage;
}

int fl_disk_guard_refuse(const fl_disk_guard_t *g, fl_error_t *err) {
    if (!fl_disk_guard_locked(g)) return 0;
    double usage = (double)atomic_load(&((fl_disk_guard_t *)g)->usage_ppm) / 1e6;
    return fl_err_set(err, FLUSS_ERR_STORAGE_EXCEPTION,
                      "TabletServer %d has rejected writes because the data disk usage reached "
                      "%.2f%% (limit: %.2f%%). Free up space or scale the cluster.",
                      g->server_id, usage * 100, g->limit_ratio * 100);
}
