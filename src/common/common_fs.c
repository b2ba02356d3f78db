/*
 * common_fs.c — durable file helpers (see common_fs.h).
 */
#include "common_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common_alloc.h"
#include "common_vfs.h"

/* Creates directory p (a missing one); a new directory's name is made
 * durable by an fsync of its parent, so files fsynced inside it later
 * cannot vanish with it after a power cut. */
static int fl_fs_mkdir_durable(char *p) {
    if (fl_vfs_mkdir(p, 0755) != 0) return errno == EEXIST ? 0 : -1;
    char *slash = strrchr(p, '/');
    if (!slash) return fl_vfs_fsync_dir(".");
    if (slash == p) return fl_vfs_fsync_dir("/");
    *slash = '\0';
    int rc = fl_vfs_fsync_dir(p);
    *slash = '/';
    return rc;
}

int fl_fs_mkdirs(const char *path, fl_error_t *err) {
    char *p = fl_strdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        if (fl_fs_mkdir_durable(p) != 0) goto fail;
        *s = '/';
    }
    if (fl_fs_mkdir_durable(p) != 0) goto fail;
    fl_free(p);
    return 0;
fail:
    fl_err_set(err, FLUSS_ERR__IO, "mkdir %s: %s", p, strerror(errno));
    fl_free(p);
    return FLUSS_ERR__IO;
}

int fl_fs_fsync_dir(const char *dir, fl_error_t *err) {
    if (fl_vfs_fsync_dir(dir) != 0)
        return fl_err_set(err, FLUSS_ERR__IO, "fsync %s: %s", dir, strerror(errno));
    return 0;
}

int fl_fs_write_atomic(const char *path, const void *data, size_t len,
                       fl_error_t *err) {
    size_t plen = strlen(path);
    char *tmp = fl_malloc(plen + 5);
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp", 5);
    char *dir = fl_strdup(path);
    char *slash = strrchr(dir, '/');
    if (slash == dir) slash[1] = '\0';
    else if (slash) *slash = '\0';
    else strcpy(dir, ".");

    int rc = FLUSS_ERR__IO;
    int fd = fl_vfs_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fl_err_set(err, rc, "open %s: %s", tmp, strerror(errno));
        goto done;
    }
    if (fl_vfs_pwrite_full(fd, data, len, 0) != 0) {
        fl_err_set(err, rc, "write %s: %s", tmp, strerror(errno));
        fl_vfs_close(fd);
        goto done;
    }
    if (fl_vfs_fsync(fd) != 0) {
        fl_err_set(err, rc, "fsync %s: %s", tmp, strerror(errno));
        fl_vfs_close(fd);
        goto done;
    }
    fl_vfs_close(fd);
    if (fl_vfs_rename(tmp, path) != 0) {
        fl_err_set(err, rc, "rename %s: %s", tmp, strerror(errno));
        goto done;
    }
    rc = fl_fs_fsync_dir(dir, err);
done:
    fl_free(tmp);
    fl_free(dir);
    return rc;
}

int fl_fs_read_all(const char *path, size_t max_bytes, fl_buf_t *out,
                   int *missing, fl_error_t *err) {
    if (missing) *missing = 0;
    int fd = fl_vfs_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        if (errno == ENOENT && missing) *missing = 1;
        return fl_err_set(err, FLUSS_ERR__IO, "open %s: %s", path, strerror(errno));
    }
    size_t total = 0;
    for (;;) {
        uint8_t *dst = fl_buf_reserve(out, 65536);
        ssize_t n = fl_vfs_pread(fd, dst, 65536, (off_t)total);
        if (n < 0) {
            int e = errno;
            fl_vfs_close(fd);
            return fl_err_set(err, FLUSS_ERR__IO, "read %s: %s", path, strerror(e));
        }
        if (n == 0) break;
        out->len += (size_t)n;
        total += (size_t)n;
        if (total > max_bytes) {
            fl_vfs_close(fd);
            return fl_err_set(err, FLUSS_ERR__IO, "%s is larger than %zu bytes", path,
                              max_bytes);
        }
    }
    fl_vfs_close(fd);
    return 0;
}

int fl_fs_list(const char *dir, bool missing_ok, fl_strlist_t *out, fl_error_t *err) {
    DIR *d = opendir(dir);
    if (!d) {
        int e = errno;
        if (e == ENOENT && missing_ok) return 0;
        fl_err_set(err, FLUSS_ERR__IO, "opendir %s: %s", dir, strerror(e));
        errno = e;
        return FLUSS_ERR__IO;
    }
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            fl_strlist_add(out, de->d_name);
    closedir(d);
    return 0;
}

int fl_fs_remove_tree(const char *path, fl_error_t *err) {
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return 0;
        return fl_err_set(err, FLUSS_ERR__IO, "stat %s: %s", path, strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) {
        fl_strlist_t names = {0};
        int rc = fl_fs_list(path, false, &names, err);
        for (size_t i = 0; i < names.count && !rc; i++) {
            size_t n = strlen(path) + strlen(names.items[i]) + 2;
            char *child = fl_malloc(n);
            snprintf(child, n, "%s/%s", path, names.items[i]);
            rc = fl_fs_remove_tree(child, err);
            fl_free(child);
        }
        fl_strlist_free(&names);
        if (rc) return rc;
        if (fl_vfs_rmdir(path) != 0)
            return fl_err_set(err, FLUSS_ERR__IO, "rmdir %s: %s", path, strerror(errno));
        return 0;
    }
    if (fl_vfs_unlink(path) != 0)
        return fl_err_set(err, FLUSS_ERR__IO, "unlink %s: %s", path, strerror(errno));
    return 0;
}

int fl_fs_copy(const char *src, const char *dst, fl_error_t *err) {
    int in = fl_vfs_open(src, O_RDONLY | O_CLOEXEC, 0);
    if (in < 0) return fl_err_set(err, FLUSS_ERR__IO, "open %s: %s", src, strerror(errno));
    int out = fl_vfs_open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        int e = errno;
        fl_vfs_close(in);
        return fl_err_set(err, FLUSS_ERR__IO, "create %s: %s", dst, strerror(e));
    }
    static const size_t chunk = 1u << 20;
    uint8_t *buf = fl_malloc(chunk);
    int rc = 0;
    off_t pos = 0;
    for (;;) {
        ssize_t n = fl_vfs_pread(in, buf, chunk, pos);
        if (n < 0) {
            rc = fl_err_set(err, FLUSS_ERR__IO, "read %s: %s", src, strerror(errno));
            break;
        }
        if (n == 0) break;
        if (fl_vfs_pwrite_full(out, buf, (size_t)n, pos) != 0) {
            rc = fl_err_set(err, FLUSS_ERR__IO, "write %s: %s", dst, strerror(errno));
            break;
        }
        pos += n;
    }
    fl_free(buf);
    if (!rc && fl_vfs_fsync(out) != 0)
        rc = fl_err_set(err, FLUSS_ERR__IO, "fsync %s: %s", dst, strerror(errno));
    fl_vfs_close(in);
    if (fl_vfs_close(out) != 0 && !rc)
        rc = fl_err_set(err, FLUSS_ERR__IO, "close %s: %s", dst, strerror(errno));
    if (rc) fl_vfs_unlink(dst);
    return rc;
}
