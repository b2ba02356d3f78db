/*
 * common_vfs_fault.h — a fault-injecting file-system seam table (a test
 * facility, in the spirit of SQLite's test VFS and RocksDB's
 * FaultInjectionTestFS): it wraps the POSIX table (common_vfs.h) and makes
 * a seeded fraction of the chosen calls fail with a chosen errno, only for
 * paths under a prefix when one is given. A failed write is half the time
 * a short write first (half the bytes land) and the error on the next call,
 * as a file system that runs out of space mid-write answers. Optionally it
 * also emulates a file system of a given size under the prefix: writes
 * that would grow the files beyond it fail with ENOSPC (a short write
 * first when part fits) and statvfs reports that size and what the files
 * under the prefix use — the disk-full test where mounting is not allowed.
 * With lose=1 an injected fsync failure also drops what the file gained
 * since its last good fsync (the file is cut back to its size when that
 * fsync started; a file not synced since it was first seen keeps its size
 * then): the page cache of a file system that threw the failed pages
 * away, the fsyncgate case, so that data acknowledged without a good
 * fsync is really gone after a restart.
 *
 * Every injection is logged (WARN, "vfs fault #N: ...", with the path and
 * the monotonic time in microseconds) and counted. The draw for the k-th
 * eligible call is a hash of (seed, k): a run is reproducible up to the
 * order in which threads reach the seam.
 *
 * flussd installs it only through the test hook FLUSS_TEST_IO_FAULTS
 * (server_main.c), before any thread starts; nothing else uses it.
 *
 * Thread rule: the installed table is safe from any thread (counters are
 * atomics; the fd → path table and the disk emulation take one mutex).
 */
#ifndef FL_COMMON_VFS_FAULT_H
#define FL_COMMON_VFS_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"
#include "common_vfs.h"

/* What can fail (bit i of fl_vfs_fault_config_t.ops is kind i). */
typedef enum fl_vfs_fault_kind {
    FL_VFS_FAULT_WRITE = 0,    /* pwrite */
    FL_VFS_FAULT_FSYNC,        /* fsync, fdatasync (directories too) */
    FL_VFS_FAULT_TRUNCATE,     /* ftruncate */
    FL_VFS_FAULT_RENAME,       /* rename (from-path decides the prefix) */
    FL_VFS_FAULT_CREATE,       /* open with O_CREAT */
    FL_VFS_FAULT_KINDS
} fl_vfs_fault_kind_t;

#define FL_VFS_FAULT_ERRNOS_MAX 4
#define FL_VFS_FAULT_PATH_MAX 4096

typedef struct fl_vfs_fault_config {
    double rate;               /* probability per eligible call, 0..1 */
    unsigned ops;              /* 1u << fl_vfs_fault_kind_t */
    int errnos[FL_VFS_FAULT_ERRNOS_MAX]; /* one is drawn per injection */
    size_t errno_count;
    uint64_t seed;
    char prefix[FL_VFS_FAULT_PATH_MAX]; /* "" = every path; else as the server names them */
    uint64_t disk_bytes;       /* emulated file system size under prefix (0: off) */
    bool lose;                 /* an injected fsync failure drops the unsynced tail */
} fl_vfs_fault_config_t;

typedef struct fl_vfs_fault_stats {
    uint64_t calls[FL_VFS_FAULT_KINDS];    /* every call of the kind */
    uint64_t injected[FL_VFS_FAULT_KINDS]; /* failed by the rate */
    uint64_t short_writes;                 /* injected writes that landed half first */
    uint64_t enospc;                       /* refused by the emulated disk size */
    uint64_t lost_bytes;                   /* dropped by lose=1 */
} fl_vfs_fault_stats_t;

typedef struct fl_vfs_fault fl_vfs_fault_t;

/* Parses "rate=0.01,ops=write+fsync,errno=EIO+ENOSPC,seed=7,path=/data,
 * disk=67108864,lose=1". Defaults: rate 0, ops write+fsync, errno EIO,
 * seed 1, every path, no disk emulation, lose 0. ops: write, fsync, truncate, rename,
 * create, all. errno: EIO, ENOSPC, EDQUOT, EROFS. disk: bytes (needs path). */
int fl_vfs_fault_parse(const char *spec, fl_vfs_fault_config_t *cfg, fl_error_t *err);

fl_vfs_fault_t *fl_vfs_fault_new(const fl_vfs_fault_config_t *cfg);
/* Uninstall first (fl_vfs_install(NULL, NULL)). */
void fl_vfs_fault_free(fl_vfs_fault_t *f);
/* The table to install with f as its ctx: fl_vfs_install(fl_vfs_fault_ops(), f). */
const fl_vfs_ops_t *fl_vfs_fault_ops(void);
void fl_vfs_fault_get_stats(fl_vfs_fault_t *f, fl_vfs_fault_stats_t *out);
/* One line: "write calls=N injected=N fsync ... short_writes=N enospc=N lost_bytes=N". */
void fl_vfs_fault_summary(fl_vfs_fault_t *f, char *out, size_t cap);

#endif
