/*
 * log_remote_storage_fs.c — remote storage on the local file system
 * (log_remote_storage.h). Durability: a file is written under a temporary
 * name, fsynced, renamed into place and its directory fsynced; every
 * directory this creates is fsynced into its parent, so a file that was
 * put survives a power loss together with the path to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common_alloc.h"
#include "common_fs.h"
#include "common_vfs.h"
#include "log_remote_storage.h"

#define FL_RS_PATH_MAX 8192

typedef struct fl_fs_storage {
    fl_remote_storage_t base; /* first */
    char *dir;
} fl_fs_storage_t;

static int fl_rs_path(const fl_fs_storage_t *s, const char *rel, char *out, fl_error_t *err) {
    int n = snprintf(out, FL_RS_PATH_MAX, "%s/%s", s->dir, rel);
    if (n < 0 || n >= FL_RS_PATH_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "remote path too long: %s", rel);
    return 0;
}

/* Creates the directories of rel's parent under the root, each fsynced
 * into its parent when it is new. */
static int fl_rs_mkdirs(const fl_fs_storage_t *s, const char *rel, fl_error_t *err) {
    char path[FL_RS_PATH_MAX];
    int rc = fl_rs_path(s, rel, path, err);
    if (rc) return rc;
    size_t root = strlen(s->dir);
    char *last = strrchr(path, '/');
    if (!last || (size_t)(last - path) <= root) return 0;
    *last = '\0';
    for (char *p = path + root + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char saved = *p;
        *p = '\0';
        if (fl_vfs_mkdir(path, 0755) == 0) {
            char *slash = strrchr(path, '/');
            *slash = '\0';
            rc = fl_fs_fsync_dir(path, err);
            *slash = '/';
            if (rc) return rc;
        } else if (errno != EEXIST) {
            return fl_err_set(err, FLUSS_ERR__IO, "mkdir %s: %s", path, strerror(errno));
        }
        *p = saved;
        if (!saved) break;
    }
    return 0;
}

static int fl_rs_fsync_parent(const char *path, fl_error_t *err) {
    char dir[FL_RS_PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) return 0;
    *slash = '\0';
    return fl_fs_fsync_dir(dir[0] ? dir : "/", err);
}

static int fl_rs_fsync_file(const char *path, fl_error_t *err) {
    int fd = fl_vfs_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return fl_err_set(err, FLUSS_ERR__IO, "open %s: %s", path, strerror(errno));
    int rc = fl_vfs_fsync(fd) == 0 ? 0
                                    : fl_err_set(err, FLUSS_ERR__IO, "fsync %s: %s", path, strerror(errno));
    fl_vfs_close(fd);
    return rc;
}

static int fl_rs_put_file(fl_remote_storage_t *base, const char *src, const char *rel,
                          fl_error_t *err) {
    fl_fs_storage_t *s = (fl_fs_storage_t *)base;
    char dst[FL_RS_PATH_MAX], tmp[FL_RS_PATH_MAX + 8];
    int rc = fl_rs_path(s, rel, dst, err);
    if (!rc) rc = fl_rs_mkdirs(s, rel, err);
    if (rc) return rc;
    snprintf(tmp, sizeof(tmp), "%s.tmp", dst);
    fl_vfs_unlink(tmp);
    /* a tiered file never changes again: share its inode when we can (the
     * source was fsynced before it was offered; the fsync below is then
     * cheap), else copy */
    if (fl_vfs_link(src, tmp) == 0) rc = fl_rs_fsync_file(tmp, err);
    else rc = fl_fs_copy(src, tmp, err);
    if (!rc && fl_vfs_rename(tmp, dst) != 0)
        rc = fl_err_set(err, FLUSS_ERR__IO, "rename %s: %s", tmp, strerror(errno));
    if (!rc) rc = fl_rs_fsync_parent(dst, err);
    if (rc) fl_vfs_unlink(tmp);
    return rc;
}

static int fl_rs_put_bytes(fl_remote_storage_t *base, const char *rel, const void *data,
                           size_t len, fl_error_t *err) {
    fl_fs_storage_t *s = (fl_fs_storage_t *)base;
    char dst[FL_RS_PATH_MAX];
    int rc = fl_rs_path(s, rel, dst, err);
    if (!rc) rc = fl_rs_mkdirs(s, rel, err);
    if (!rc) rc = fl_fs_write_atomic(dst, data, len, err);
    return rc;
}

static int fl_rs_read(fl_remote_storage_t *base, const char *rel, size_t max_bytes, fl_buf_t *out,
                      int *missing, fl_error_t *err) {
    fl_fs_storage_t *s = (fl_fs_storage_t *)base;
    char path[FL_RS_PATH_MAX];
    if (missing) *missing = 0;
    int rc = fl_rs_path(s, rel, path, err);
    return rc ? rc : fl_fs_read_all(path, max_bytes, out, missing, err);
}

static int fl_rs_read_range(fl_remote_storage_t *base, const char *rel, uint64_t pos, size_t len,
                            uint8_t *dst, size_t *got, fl_error_t *err) {
    fl_fs_storage_t *s = (fl_fs_storage_t *)base;
    char path[FL_RS_PATH_MAX];
    *got = 0;
    int rc = fl_rs_path(s, rel, path, err);
    if (rc) return rc;
    int fd = fl_vfs_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return fl_err_set(err, FLUSS_ERR__IO, "open %s: %s", path, strerror(errno));
    if (fl_vfs_pread_full(fd, dst, len, (off_t)pos, got) != 0)
        rc = fl_err_set(err, FLUSS_ERR__IO, "read %s: %s", path, strerror(errno));
    fl_vfs_close(fd);
    return rc;
}

static int fl_rs_size(fl_remote_storage_t *base, const char *rel, uint64_t *bytes,
                      fl_error_t *err) {
    fl_fs_storage_t *s = (fl_fs_storage_t *)base;
    char path[FL_RS_PATH_MAX];
    int rc = fl_rs_path(s, rel, path, err);
    if (rc) return rc;
    struct stat st;
    if (stat(path, &st) != 0)
        return fl_err_set(err, FLUSS_ERR__IO, "stat %s: %s", path, strerror(errno));
    *bytes = (uint64_t)st.st_size;
    return 0;
}

static int fl_rs_list(fl_remote_storage_t *base, const char *rel, fl_strlist_t *names,
                      fl_error_t *err) {
    fl_fs_storage_t *s = (fl_fs_storage_t *)base;
    char path[FL_RS_PATH_MAX];
    int rc = fl_rs_path(s, rel, path, err);
    if (rc) return rc;
    return fl_fs_list(path, true, names, err);
}

static int fl_rs_remove(fl_remote_storage_t *base, const char *rel, fl_error_t *err) {
    fl_fs_storage_t *s = (fl_fs_storage_t *)base;
    char path[FL_RS_PATH_MAX];
    int rc = fl_rs_path(s, rel, path, err);
    return rc ? rc : fl_fs_remove_tree(path, err);
}

static void fl_rs_destroy(fl_remote_storage_t *base) {
    fl_fs_storage_t *s = (fl_fs_storage_t *)base;
    fl_free(s->dir);
    fl_free(s->base.root);
    fl_free(s);
}

static const fl_remote_storage_ops_t fl_fs_storage_ops = {
    fl_rs_put_file, fl_rs_put_bytes, fl_rs_read,   fl_rs_read_range,
    fl_rs_size,     fl_rs_list,      fl_rs_remove, fl_rs_destroy};

int fl_remote_storage_fs_new(const char *root_dir, fl_remote_storage_t **out, fl_error_t *err) {
    if (!root_dir || root_dir[0] != '/' || strlen(root_dir) > FL_RS_PATH_MAX / 2)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "remote storage needs an absolute directory, not '%s'",
                          root_dir ? root_dir : "");
    int rc = fl_fs_mkdirs(root_dir, err);
    if (rc) return rc;
    /* what clients are told: the canonical path (no "..", no "./") */
    char canon[PATH_MAX];
    if (!realpath(root_dir, canon))
        return fl_err_set(err, FLUSS_ERR__IO, "resolve %s: %s", root_dir, strerror(errno));
    fl_fs_storage_t *s = fl_calloc(1, sizeof(*s));
    s->base.ops = &fl_fs_storage_ops;
    s->dir = fl_strdup(canon);
    s->base.root = fl_strdup(canon);
    *out = &s->base;
    return 0;
}

void fl_remote_storage_url(const fl_remote_storage_t *s, const char *rel, char *out, size_t cap) {
    snprintf(out, cap, "%s/%s", s->root, rel);
}
