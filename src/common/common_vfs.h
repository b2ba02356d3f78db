/*
 * common_vfs.h — the file-system seam. Every disk operation of the server
 * (open, close, dup, pread, pwrite, fsync, ftruncate, rename, link, unlink,
 * mkdir, rmdir; a directory fsync is open + fsync + close of the
 * directory) goes through these calls, so a test can record, reorder or
 * fail them without touching the code it tests, as SQLite's VFS allows.
 * Production uses the plain POSIX calls (fl_vfs_posix). Listing a
 * directory and stat-ing a path stay plain calls: they change nothing.
 * statvfs goes through the seam so that a test can make a file system
 * look full (the disk-usage watermark reads it); a table without it
 * (NULL) answers with the real statvfs.
 *
 * The calls answer like their POSIX namesakes (-1 with errno set); pread
 * and pwrite retry EINTR themselves.
 *
 * Threads: install before any thread does I/O (tests do it at start-up);
 * the installed table is then read without a lock.
 */
#ifndef FL_COMMON_VFS_H
#define FL_COMMON_VFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/statvfs.h>
#include <sys/types.h>

typedef struct fl_vfs_ops {
    int (*open)(void *ctx, const char *path, int flags, mode_t mode);
    int (*close)(void *ctx, int fd);
    int (*dup)(void *ctx, int fd);
    ssize_t (*pread)(void *ctx, int fd, void *buf, size_t len, off_t pos);
    ssize_t (*pwrite)(void *ctx, int fd, const void *buf, size_t len, off_t pos);
    /* data_only: fdatasync */
    int (*fsync)(void *ctx, int fd, bool data_only);
    int (*ftruncate)(void *ctx, int fd, off_t len);
    int (*rename)(void *ctx, const char *from, const char *to);
    int (*link)(void *ctx, const char *from, const char *to);
    int (*unlink)(void *ctx, const char *path);
    int (*mkdir)(void *ctx, const char *path, mode_t mode);
    int (*rmdir)(void *ctx, const char *path);
    int (*statvfs)(void *ctx, const char *path, struct statvfs *out); /* may be NULL */
} fl_vfs_ops_t;

/* The plain POSIX table (ctx unused). */
const fl_vfs_ops_t *fl_vfs_posix(void);
/* Routes every later call through ops (NULL: back to POSIX). */
void fl_vfs_install(const fl_vfs_ops_t *ops, void *ctx);

int fl_vfs_open(const char *path, int flags, mode_t mode);
int fl_vfs_close(int fd);
int fl_vfs_dup(int fd);
ssize_t fl_vfs_pread(int fd, void *buf, size_t len, off_t pos);
ssize_t fl_vfs_pwrite(int fd, const void *buf, size_t len, off_t pos);
int fl_vfs_fsync(int fd);
int fl_vfs_fdatasync(int fd);
int fl_vfs_ftruncate(int fd, off_t len);
int fl_vfs_rename(const char *from, const char *to);
int fl_vfs_link(const char *from, const char *to);
int fl_vfs_unlink(const char *path);
int fl_vfs_mkdir(const char *path, mode_t mode);
int fl_vfs_rmdir(const char *path);
int fl_vfs_statvfs(const char *path, struct statvfs *out);

/* Whole-buffer helpers: loop until len bytes moved. pread_full stops at
 * end of file (*got < len); both return -1 with errno on an error. */
int fl_vfs_pread_full(int fd, void *buf, size_t len, off_t pos, size_t *got);
int fl_vfs_pwrite_full(int fd, const void *buf, size_t len, off_t pos);
/* fsync of a directory (what makes a create, rename or unlink in it
 * durable). */
int fl_vfs_fsync_dir(const char *dir);

#endif
