/*
 * crash_model.h — the crash-state machinery of the storage-fault tests.
 *
 * A recorder (a common_vfs.h table) runs a workload on a real directory
 * and keeps every operation that changes what lies under it: creates,
 * truncating opens, writes (with their bytes), truncates, file and
 * directory fsyncs, renames, links, unlinks, mkdir and rmdir. Files are
 * followed by inode, so a write through a descriptor whose name was
 * renamed meanwhile lands on the right file.
 *
 * A crash state is then rebuilt from the log alone:
 *   - a prefix: the first k operations happened, the rest did not;
 *   - KEPT: everything of the prefix survives (a process crash: the page
 *     cache is kept), or DROPPED: only what was made durable survives (a
 *     power cut): a file keeps the content of its last fsync; a name
 *     change is durable once its directory was fsynced, and directory
 *     changes become durable in the order they were made (an ordered
 *     metadata journal: fsync of a directory commits every earlier
 *     pending name change up to the last one in that directory);
 *   - torn: in KEPT, when operation k-1 is a write, only its first bytes
 *     up to a 512-byte boundary of the file reached the disk — the rest
 *     absent, or zero-filled up to the write's end (what preallocation or
 *     delayed allocation leaves); in DROPPED, when operation k-1 is a file
 *     fsync, the crash came during it: the new content reached the disk up
 *     to a 512-byte boundary, the old content (or zeros) beyond.
 * crash_model_build writes the state as a real directory tree.
 *
 * Single-threaded workloads only (one recorder, no lock).
 */
#ifndef FL_CRASH_MODEL_H
#define FL_CRASH_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum crash_op_kind {
    CRASH_OP_CREATE,   /* new empty file at path (ino) */
    CRASH_OP_MKDIR,    /* new directory at path (ino) */
    CRASH_OP_TRUNC,    /* content of ino cut to len (open O_TRUNC, ftruncate) */
    CRASH_OP_WRITE,    /* bytes of ino at off */
    CRASH_OP_FSYNC,    /* content of file ino durable */
    CRASH_OP_DIRSYNC,  /* name changes in directory ino durable */
    CRASH_OP_RENAME,   /* path -> path2 */
    CRASH_OP_LINK,     /* path2 names ino too */
    CRASH_OP_UNLINK,   /* name path gone */
    CRASH_OP_RMDIR,
} crash_op_kind_t;

typedef struct crash_op {
    crash_op_kind_t kind;
    int ino;
    char *path, *path2;    /* relative to the recorded root */
    int parent, parent2;   /* inodes of the directories a name change touches */
    uint64_t off, len;
    uint8_t *data;
} crash_op_t;

typedef struct crash_log {
    char *root;
    size_t count, cap;
    crash_op_t *ops;
    int inodes; /* inode 0 is the root directory */
    bool drop_rename_syncs; /* mutation: the directory fsync right after a rename is lost */
    /* Stricter than ext4/XFS: a directory fsync makes durable only the
     * pending changes of that directory, not every earlier one. */
    bool unordered;
} crash_log_t;

typedef enum crash_mode { CRASH_KEPT, CRASH_DROPPED } crash_mode_t;

typedef struct crash_state {
    size_t prefix;     /* operations 0 .. prefix-1 happened */
    crash_mode_t mode;
    int64_t torn_at;   /* -1: not torn; else bytes (file offset, 512-aligned) that made it */
    bool zero_fill;    /* the torn rest reads as zeros instead of absent / old */
} crash_state_t;

/* Starts recording operations under root (an existing, empty directory). */
void crash_record_start(crash_log_t *log, const char *root);
/* Stops recording (the POSIX table is back). */
void crash_record_stop(void);
void crash_log_free(crash_log_t *log);

/* The 512-byte tear points of operation i (a WRITE in KEPT, an FSYNC in
 * DROPPED), at most max of them spread evenly: returns how many, in out. */
size_t crash_tear_points(const crash_log_t *log, const crash_state_t *st, int64_t *out,
                         size_t max);
/* Writes the crash state as a directory tree at dir (must not exist).
 * Returns 0, or -1 with errno. */
int crash_model_build(const crash_log_t *log, const crash_state_t *st, const char *dir);

#endif
