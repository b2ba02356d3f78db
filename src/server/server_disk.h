/*
 * server_disk.h — a tablet server's data-disk write protection (Fluss
 * main's DiskUsageMonitor and LocalDiskManager#ensureWritable): the usage
 * of the file system under data.dir is sampled every
 * server.data-disk.check-interval (statvfs on a worker, never on the data
 * path); once it reaches server.data-disk.write-limit-ratio client writes
 * (PRODUCE_LOG, PUT_KV, the inserts of LOOKUP insert_if_not_exists) are
 * refused until it is back at or below server.data-disk.write-recover-ratio
 * (hysteresis). A limit of 1.0 turns the protection off. Usage is Java's
 * (total - usable) / total, usable being what an unprivileged writer may
 * still use (f_bavail), so a file system's root reserve counts as used.
 *
 * The refusal is a per-bucket STORAGE_EXCEPTION (26) with main's words;
 * main answers the whole request with DISK_WRITE_LOCKED (70), which 0.9.1
 * clients do not know (tests/interop/KNOWN_DIFFERENCES.md). Both are
 * retriable: clients retry until space is freed. Internal writes (flushes,
 * segment finalisation, snapshots) are never refused: they make acknowledged
 * data durable.
 *
 * Thread rule: fl_disk_guard_sample and _update from one thread at a time
 * (the tablet server's sampling job); fl_disk_guard_refuse from any thread,
 * one atomic load.
 */
#ifndef FL_SERVER_DISK_H
#define FL_SERVER_DISK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common_error.h"

#define FL_DISK_LIMIT_RATIO_DEFAULT 0.85
#define FL_DISK_RECOVER_RATIO_DEFAULT 0.80
#define FL_DISK_CHECK_INTERVAL_MS_DEFAULT (30 * 1000)

typedef struct fl_disk_guard {
    int32_t server_id;
    char path[4096];            /* the data dir (its nearest existing ancestor is sampled) */
    double limit_ratio;         /* >= 1.0: protection off, samples only */
    double recover_ratio;
    atomic_bool locked;         /* writes refused */
    atomic_uint_fast64_t usage_ppm; /* the last sample, parts per million */
    bool sampled;               /* (sampler) at least one sample succeeded */
} fl_disk_guard_t;

/* main's DiskWriteLimitConfigValidator: 0 < recover < limit <= 1. */
int fl_disk_guard_check_config(double limit_ratio, double recover_ratio, fl_error_t *err);
void fl_disk_guard_init(fl_disk_guard_t *g, int32_t server_id, const char *path, double limit_ratio,
                        double recover_ratio);
/* One statvfs (through the file-system seam) and the state change it
 * implies; a failed statvfs keeps the previous state. Returns the usage,
 * or -1. */
double fl_disk_guard_sample(fl_disk_guard_t *g);
/* The state machine alone, for a usage in [0, 1]. */
void fl_disk_guard_update(fl_disk_guard_t *g, double usage);

static inline bool fl_disk_guard_locked(const fl_disk_guard_t *g) {
    return atomic_load_explicit(&((fl_disk_guard_t *)g)->locked, memory_order_relaxed);
}
/* 0, or STORAGE_EXCEPTION with main's message when writes are refused. */
int fl_disk_guard_refuse(const fl_disk_guard_t *g, fl_error_t *err);

#endif
