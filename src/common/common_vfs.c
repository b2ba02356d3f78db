/*
 * common_vfs.c — the file-system seam (common_vfs.h) and its POSIX table.
 */
#include "common_vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static int posix_open(void *ctx, const char *path, int flags, mode_t mode) {
    (void)ctx;
    return open(path, flags, mode);
}
static int posix_close(void *ctx, int fd) {
    (void)ctx;
    return close(fd);
}
static int posix_dup(void *ctx, int fd) {
    (void)ctx;
    return fcntl(fd, F_DUPFD_CLOEXEC, 0);
}
static ssize_t posix_pread(void *ctx, int fd, void *buf, size_t len, off_t pos) {
    (void)ctx;
    return pread(fd, buf, len, pos);
}
static ssize_t posix_pwrite(void *ctx, int fd, const void *buf, size_t len, off_t pos) {
    (void)ctx;
    return pwrite(fd, buf, len, pos);
}
static int posix_fsync(void *ctx, int fd, bool data_only) {
    (void)ctx;
    return data_only ? fdatasync(fd) : fsync(fd);
}
static int posix_ftruncate(void *ctx, int fd, off_t len) {
    (void)ctx;
    return ftruncate(fd, len);
}
static int posix_rename(void *ctx, const char *from, const char *to) {
    (void)ctx;
    return rename(from, to);
}
static int posix_link(void *ctx, const char *from, const char *to) {
    (void)ctx;
    return link(from, to);
}
static int posix_unlink(void *ctx, const char *path) {
    (void)ctx;
    return unlink(path);
}
static int posix_mkdir(void *ctx, const char *path, mode_t mode) {
    (void)ctx;
    return mkdir(path, mode);
}
static int posix_rmdir(void *ctx, const char *path) {
    (void)ctx;
    return rmdir(path);
}

static int posix_statvfs(void *ctx, const char *path, struct statvfs *out) {
    (void)ctx;
    return statvfs(path, out);
}

static const fl_vfs_ops_t fl_posix_ops = {
    .open = posix_open,
    .close = posix_close,
    .dup = posix_dup,
    .pread = posix_pread,
    .pwrite = posix_pwrite,
    .fsync = posix_fsync,
    .ftruncate = posix_ftruncate,
    .rename = posix_rename,
    .link = posix_link,
    .unlink = posix_unlink,
    .mkdir = posix_mkdir,
    .rmdir = posix_rmdir,
    .statvfs = posix_statvfs,
};

static const fl_vfs_ops_t *fl_vfs_ops = &fl_posix_ops;
static void *fl_vfs_ctx;

const fl_vfs_ops_t *fl_vfs_posix(void) { return &fl_posix_ops; }

void fl_vfs_install(const fl_vfs_ops_t *ops, void *ctx) {
    fl_vfs_ops = ops ? ops : &fl_posix_ops;
    fl_vfs_ctx = ops ? ctx : NULL;
}

int fl_vfs_open(const char *path, int flags, mode_t mode) {
    return fl_vfs_ops->open(fl_vfs_ctx, path, flags, mode);
}
int fl_vfs_close(int fd) { return fl_vfs_ops->close(fl_vfs_ctx, fd); }
int fl_vfs_dup(int fd) { return fl_vfs_ops->dup(fl_vfs_ctx, fd); }

ssize_t fl_vfs_pread(int fd, void *buf, size_t len, off_t pos) {
    ssize_t n;
    do n = fl_vfs_ops->pread(fl_vfs_ctx, fd, buf, len, pos);
    while (n < 0 && errno == EINTR);
    return n;
}

ssize_t fl_vfs_pwrite(int fd, const void *buf, size_t len, off_t pos) {
    ssize_t n;
    do n = fl_vfs_ops->pwrite(fl_vfs_ctx, fd, buf, len, pos);
    while (n < 0 && errno == EINTR);
    return n;
}

int fl_vfs_fsync(int fd) { return fl_vfs_ops->fsync(fl_vfs_ctx, fd, false); }
int fl_vfs_fdatasync(int fd) { return fl_vfs_ops->fsync(fl_vfs_ctx, fd, true); }
int fl_vfs_ftruncate(int fd, off_t len) { return fl_vfs_ops->ftruncate(fl_vfs_ctx, fd, len); }
int fl_vfs_rename(const char *from, const char *to) {
    return fl_vfs_ops->rename(fl_vfs_ctx, from, to);
}
int fl_vfs_link(const char *from, const char *to) { return fl_vfs_ops->link(fl_vfs_ctx, from, to); }
int fl_vfs_unlink(const char *path) { return fl_vfs_ops->unlink(fl_vfs_ctx, path); }
int fl_vfs_mkdir(const char *path, mode_t mode) { return fl_vfs_ops->mkdir(fl_vfs_ctx, path, mode); }
int fl_vfs_rmdir(const char *path) { return fl_vfs_ops->rmdir(fl_vfs_ctx, path); }
int fl_vfs_statvfs(const char *path, struct statvfs *out) {
    if (!fl_vfs_ops->statvfs) return statvfs(path, out);
    return fl_vfs_ops->statvfs(fl_vfs_ctx, path, out);
}

int fl_vfs_pread_full(int fd, void *buf, size_t len, off_t pos, size_t *got) {
    size_t n = 0;
    while (n < len) {
        ssize_t r = fl_vfs_pread(fd, (char *)buf + n, len - n, pos + (off_t)n);
        if (r < 0) return -1;
        if (r == 0) break;
        n += (size_t)r;
    }
    *got = n;
    return 0;
}

int fl_vfs_pwrite_full(int fd, const void *buf, size_t len, off_t pos) {
    size_t n = 0;
    while (n < len) {
        ssize_t w = fl_vfs_pwrite(fd, (const char *)buf + n, len - n, pos + (off_t)n);
        if (w < 0) return -1;
        if (w == 0) {
            errno = ENOSPC;
            return -1;
        }
        n += (size_t)w;
    }
    return 0;
}

int fl_vfs_fsync_dir(const char *dir) {
    int fd = fl_vfs_open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0) return -1;
    int rc = fl_vfs_fsync(fd);
    int e = errno;
    fl_vfs_close(fd);
    errno = e;
    return rc;
}
