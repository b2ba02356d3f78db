/*
 * common_vfs_fault.c — the fault-injecting seam table (common_vfs_fault.h).
 */
#include "common_vfs_fault.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"

/* Descriptors above this are not tracked (their path comes from /proc). */
#define FL_VFS_FAULT_FDS_MAX 65536
/* The emulated disk re-counts what its files use at most this often
 * (writes in between are added as they grow files). */
#define FL_VFS_FAULT_WALK_US 50000
#define FL_VFS_FAULT_WALK_DEPTH_MAX 32
#define FL_VFS_FAULT_BLOCK 4096

struct fl_vfs_fault {
    fl_vfs_fault_config_t cfg;
    size_t prefix_len;
    atomic_uint_fast64_t draws; /* eligible calls so far: the index of the next draw */
    atomic_uint_fast64_t calls[FL_VFS_FAULT_KINDS];
    atomic_uint_fast64_t injected[FL_VFS_FAULT_KINDS];
    atomic_uint_fast64_t short_writes, enospc, lost_bytes, serial;
    pthread_mutex_t lock;  /* everything below */
    char **paths;          /* by descriptor, as opened through the seam */
    int *fail_next;        /* errno for the next write on the fd (after a short one) */
    uint64_t used_walked;  /* bytes the files under the prefix used at the last walk */
    int64_t walked_us;     /* when (0: never) */
    uint64_t grown;        /* bytes writes added since */
    /* lose=1: every file seen, with its size when its last good fsync
     * started (few files in a test: a list) */
    size_t synced_count, synced_cap;
    struct fl_fault_synced {
        dev_t dev;
        ino_t ino;
        off_t size;
    } *synced;
};

static const char *const fl_fault_kind_names[FL_VFS_FAULT_KINDS] = {
    "write", "fsync", "truncate", "rename", "create"};

static const struct {
    const char *name;
    int value;
} fl_fault_errnos[] = {{"EIO", EIO}, {"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT}, {"EROFS", EROFS}};

static const char *fl_fault_errno_name(int e) {
    for (size_t i = 0; i < sizeof(fl_fault_errnos) / sizeof(fl_fault_errnos[0]); i++)
        if (fl_fault_errnos[i].value == e) return fl_fault_errnos[i].name;
    return "E?";
}

/* ---- the spec ---- */

/* Calls fn(ctx, item, len) for each '+'-separated item of [s, s+n). */
static int fl_fault_each(const char *s, size_t n, int (*fn)(void *, const char *, size_t),
                         void *ctx) {
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '+') continue;
        int rc = fn(ctx, s + start, i - start);
        if (rc) return rc;
        start = i + 1;
    }
    return 0;
}

static int fl_fault_add_op(void *ctx, const char *s, size_t n) {
    fl_vfs_fault_config_t *cfg = ctx;
    if (n == 3 && strncmp(s, "all", 3) == 0) {
        cfg->ops = (1u << FL_VFS_FAULT_KINDS) - 1;
        return 0;
    }
    for (int k = 0; k < FL_VFS_FAULT_KINDS; k++) {
        if (strlen(fl_fault_kind_names[k]) == n && strncmp(s, fl_fault_kind_names[k], n) == 0) {
            cfg->ops |= 1u << k;
            return 0;
        }
    }
    return -1;
}

static int fl_fault_add_errno(void *ctx, const char *s, size_t n) {
    fl_vfs_fault_config_t *cfg = ctx;
    if (cfg->errno_count == FL_VFS_FAULT_ERRNOS_MAX) return -1;
    for (size_t i = 0; i < sizeof(fl_fault_errnos) / sizeof(fl_fault_errnos[0]); i++) {
        if (strlen(fl_fault_errnos[i].name) == n && strncmp(s, fl_fault_errnos[i].name, n) == 0) {
            cfg->errnos[cfg->errno_count++] = fl_fault_errnos[i].value;
            return 0;
        }
    }
    return -1;
}

static int fl_fault_u64(const char *v, size_t n, uint64_t *out) {
    char buf[32];
    if (n == 0 || n >= sizeof(buf)) return -1;
    memcpy(buf, v, n);
    buf[n] = '\0';
    if (buf[0] < '0' || buf[0] > '9') return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(buf, &end, 10);
    if (errno || *end) return -1;
    *out = x;
    return 0;
}

/* One "key=value" of the spec. */
static int fl_fault_parse_one(fl_vfs_fault_config_t *cfg, const char *kv, size_t n,
                              fl_error_t *err) {
    const char *eq = memchr(kv, '=', n);
    if (!eq)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "I/O fault spec: '%.*s' is not key=value",
                          (int)n, kv);
    size_t kn = (size_t)(eq - kv), vn = n - kn - 1;
    const char *v = eq + 1;
    bool ok = true;
    if (kn == 4 && strncmp(kv, "rate", 4) == 0) {
        char buf[32];
        ok = vn > 0 && vn < sizeof(buf);
        if (ok) {
            memcpy(buf, v, vn);
            buf[vn] = '\0';
            char *end;
            cfg->rate = strtod(buf, &end);
            ok = *end == '\0' && cfg->rate >= 0 && cfg->rate <= 1;
        }
    } else if (kn == 3 && strncmp(kv, "ops", 3) == 0) {
        cfg->ops = 0;
        ok = vn > 0 && fl_fault_each(v, vn, fl_fault_add_op, cfg) == 0;
    } else if (kn == 5 && strncmp(kv, "errno", 5) == 0) {
        cfg->errno_count = 0;
        ok = vn > 0 && fl_fault_each(v, vn, fl_fault_add_errno, cfg) == 0;
    } else if (kn == 4 && strncmp(kv, "seed", 4) == 0) {
        ok = fl_fault_u64(v, vn, &cfg->seed) == 0;
    } else if (kn == 4 && strncmp(kv, "disk", 4) == 0) {
        ok = fl_fault_u64(v, vn, &cfg->disk_bytes) == 0;
    } else if (kn == 4 && strncmp(kv, "lose", 4) == 0) {
        ok = vn == 1 && (v[0] == '0' || v[0] == '1');
        if (ok) cfg->lose = v[0] == '1';
    } else if (kn == 4 && strncmp(kv, "path", 4) == 0) {
        ok = vn < sizeof(cfg->prefix);
        if (ok) {
            memcpy(cfg->prefix, v, vn);
            cfg->prefix[vn] = '\0';
            while (vn > 1 && cfg->prefix[vn - 1] == '/') cfg->prefix[--vn] = '\0';
        }
    } else {
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "I/O fault spec: unknown key '%.*s' (rate, ops, errno, seed, path, disk, lose)",
                          (int)kn, kv);
    }
    if (!ok)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "I/O fault spec: bad value in '%.*s'",
                          (int)n, kv);
    return 0;
}

int fl_vfs_fault_parse(const char *spec, fl_vfs_fault_config_t *cfg, fl_error_t *err) {
    memset(cfg, 0, sizeof(*cfg));
    cfg->ops = 1u << FL_VFS_FAULT_WRITE | 1u << FL_VFS_FAULT_FSYNC;
    cfg->errnos[0] = EIO;
    cfg->errno_count = 1;
    cfg->seed = 1;
    size_t start = 0, n = strlen(spec);
    for (size_t i = 0; i <= n; i++) {
        if (i < n && spec[i] != ',') continue;
        if (i > start) {
            int rc = fl_fault_parse_one(cfg, spec + start, i - start, err);
            if (rc) return rc;
        }
        start = i + 1;
    }
    if (cfg->disk_bytes && !cfg->prefix[0])
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "I/O fault spec: disk= emulates a file system under path=, which is missing");
    return 0;
}

/* ---- state ---- */

fl_vfs_fault_t *fl_vfs_fault_new(const fl_vfs_fault_config_t *cfg) {
    fl_vfs_fault_t *f = fl_calloc(1, sizeof(*f));
    f->cfg = *cfg;
    if (f->cfg.errno_count == 0) {
        f->cfg.errnos[0] = EIO;
        f->cfg.errno_count = 1;
    }
    f->prefix_len = strlen(f->cfg.prefix);
    f->paths = fl_calloc(FL_VFS_FAULT_FDS_MAX, sizeof(char *));
    f->fail_next = fl_calloc(FL_VFS_FAULT_FDS_MAX, sizeof(int));
    pthread_mutex_init(&f->lock, NULL);
    return f;
}

void fl_vfs_fault_free(fl_vfs_fault_t *f) {
    if (!f) return;
    for (size_t i = 0; i < FL_VFS_FAULT_FDS_MAX; i++) fl_free(f->paths[i]);
    fl_free(f->paths);
    fl_free(f->fail_next);
    fl_free(f->synced);
    pthread_mutex_destroy(&f->lock);
    fl_free(f);
}

void fl_vfs_fault_get_stats(fl_vfs_fault_t *f, fl_vfs_fault_stats_t *out) {
    memset(out, 0, sizeof(*out));
    for (int k = 0; k < FL_VFS_FAULT_KINDS; k++) {
        out->calls[k] = atomic_load(&f->calls[k]);
        out->injected[k] = atomic_load(&f->injected[k]);
    }
    out->short_writes = atomic_load(&f->short_writes);
    out->enospc = atomic_load(&f->enospc);
    out->lost_bytes = atomic_load(&f->lost_bytes);
}

void fl_vfs_fault_summary(fl_vfs_fault_t *f, char *out, size_t cap) {
    fl_vfs_fault_stats_t s;
    fl_vfs_fault_get_stats(f, &s);
    size_t n = 0;
    out[0] = '\0';
    for (int k = 0; k < FL_VFS_FAULT_KINDS && n < cap; k++)
        n += (size_t)snprintf(out + n, cap - n, "%s calls=%llu injected=%llu ",
                              fl_fault_kind_names[k], (unsigned long long)s.calls[k],
                              (unsigned long long)s.injected[k]);
    if (n < cap)
        snprintf(out + n, cap - n, "short_writes=%llu enospc=%llu lost_bytes=%llu",
                 (unsigned long long)s.short_writes, (unsigned long long)s.enospc,
                 (unsigned long long)s.lost_bytes);
}

static bool fl_fault_under(const fl_vfs_fault_t *f, const char *path) {
    if (!f->prefix_len) return true;
    if (!path || strncmp(path, f->cfg.prefix, f->prefix_len) != 0) return false;
    return path[f->prefix_len] == '/' || path[f->prefix_len] == '\0';
}

/* Whether fd's path is under the prefix; copies the path (or "?") to out.
 * A descriptor opened before the table was installed (or outside the
 * seam) is looked up in /proc each time: its number may be reused by
 * opens the table does not see, so that answer is not kept. */
static bool fl_fault_fd_path(fl_vfs_fault_t *f, int fd, char *out, size_t cap) {
    bool known = false;
    snprintf(out, cap, "?");
    if (fd >= 0 && fd < FL_VFS_FAULT_FDS_MAX) {
        pthread_mutex_lock(&f->lock);
        if (f->paths[fd]) {
            snprintf(out, cap, "%s", f->paths[fd]);
            known = true;
        }
        pthread_mutex_unlock(&f->lock);
    }
    if (!known && fd >= 0) {
        char link[64];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, out, cap - 1);
        if (n > 0) {
            out[n] = '\0';
            known = true;
        } else {
            snprintf(out, cap, "?");
        }
    }
    return known ? fl_fault_under(f, out) : !f->prefix_len;
}

static void fl_fault_track(fl_vfs_fault_t *f, int fd, const char *path) {
    if (fd < 0 || fd >= FL_VFS_FAULT_FDS_MAX) return;
    char *copy = path ? fl_strdup(path) : NULL;
    pthread_mutex_lock(&f->lock);
    fl_free(f->paths[fd]);
    f->paths[fd] = copy;
    f->fail_next[fd] = 0;
    pthread_mutex_unlock(&f->lock);
}

static uint64_t fl_fault_mix(uint64_t x) { /* splitmix64's finaliser */
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The errno to fail this call with, or 0. *bits: more of the draw (for
 * choices like a short write). */
static int fl_fault_draw(fl_vfs_fault_t *f, fl_vfs_fault_kind_t kind, bool under,
                         const char *path, uint64_t *bits) {
    atomic_fetch_add(&f->calls[kind], 1);
    if (!(f->cfg.ops & (1u << kind)) || f->cfg.rate <= 0 || !under) return 0;
    uint64_t i = atomic_fetch_add(&f->draws, 1);
    uint64_t x = fl_fault_mix(f->cfg.seed ^ fl_fault_mix(i));
    double u = (double)(x >> 11) * 0x1.0p-53;
    if (u >= f->cfg.rate) return 0;
    int e = f->cfg.errnos[(x & 0xff) % f->cfg.errno_count];
    atomic_fetch_add(&f->injected[kind], 1);
    if (bits) *bits = x;
    FL_WARN("vfs fault #%llu (test hook FLUSS_TEST_IO_FAULTS): %s on %s of %s, mono_us=%lld",
            (unsigned long long)atomic_fetch_add(&f->serial, 1) + 1, fl_fault_errno_name(e),
            fl_fault_kind_names[kind], path, (long long)fl_time_mono_us());
    return e;
}

/* ---- the emulated disk ---- */

/* Bytes the files under dir use (allocated blocks), walking at most
 * depth levels. */
static uint64_t fl_fault_walk(const char *dir, int depth) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    uint64_t sum = 0;
    struct dirent *e;
    char path[FL_VFS_FAULT_PATH_MAX];
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
            continue;
        struct stat st;
        if (lstat(path, &st) != 0) continue;
        sum += (uint64_t)st.st_blocks * 512;
        if (S_ISDIR(st.st_mode) && depth > 0) sum += fl_fault_walk(path, depth - 1);
    }
    closedir(d);
    return sum;
}

/* Under the lock: what the emulated disk holds now. */
static uint64_t fl_fault_used_locked(fl_vfs_fault_t *f, bool fresh) {
    int64_t now = fl_time_mono_us();
    if (fresh || f->walked_us == 0 || now - f->walked_us >= FL_VFS_FAULT_WALK_US) {
        f->used_walked = fl_fault_walk(f->cfg.prefix, FL_VFS_FAULT_WALK_DEPTH_MAX);
        f->walked_us = now;
        f->grown = 0;
    }
    return f->used_walked + f->grown;
}

/* How many of len bytes at pos fit on the emulated disk (len when the
 * write grows nothing or there is no emulation). */
static size_t fl_fault_room(fl_vfs_fault_t *f, int fd, size_t len, off_t pos) {
    struct stat st;
    if (fstat(fd, &st) != 0) return len;
    uint64_t end = (uint64_t)pos + len, size = (uint64_t)st.st_size;
    if (end <= size) return len;
    uint64_t grow = end - size;
    pthread_mutex_lock(&f->lock);
    uint64_t used = fl_fault_used_locked(f, false);
    uint64_t room = f->cfg.disk_bytes > used ? f->cfg.disk_bytes - used : 0;
    uint64_t take = grow < room ? grow : room;
    f->grown += take;
    pthread_mutex_unlock(&f->lock);
    return take == grow ? len : len - (size_t)(grow - take);
}

/* ---- lose=1: what the last good fsync covered ---- */

/* Under the lock: the entry of fd's file, added with its current size when
 * first seen (it came from before: as durable as anything is). */
static struct fl_fault_synced *fl_fault_synced_locked(fl_vfs_fault_t *f, const struct stat *st) {
    for (size_t i = 0; i < f->synced_count; i++)
        if (f->synced[i].dev == st->st_dev && f->synced[i].ino == st->st_ino) return &f->synced[i];
    if (f->synced_count == f->synced_cap) {
        f->synced_cap = f->synced_cap ? f->synced_cap * 2 : 64;
        f->synced = fl_realloc(f->synced, f->synced_cap * sizeof(*f->synced));
    }
    f->synced[f->synced_count] = (struct fl_fault_synced){st->st_dev, st->st_ino, st->st_size};
    return &f->synced[f->synced_count++];
}

static void fl_fault_note_file(fl_vfs_fault_t *f, int fd) {
    struct stat st;
    if (!f->cfg.lose || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
    pthread_mutex_lock(&f->lock);
    fl_fault_synced_locked(f, &st);
    pthread_mutex_unlock(&f->lock);
}

/* An injected fsync failure: the file keeps what its last good fsync
 * covered. */
static void fl_fault_lose(fl_vfs_fault_t *f, int fd) {
    struct stat st;
    if (!f->cfg.lose || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
    pthread_mutex_lock(&f->lock);
    off_t keep = fl_fault_synced_locked(f, &st)->size;
    pthread_mutex_unlock(&f->lock);
    if (st.st_size > keep && ftruncate(fd, keep) == 0)
        atomic_fetch_add(&f->lost_bytes, (uint64_t)(st.st_size - keep));
}

/* Before a real fsync: what it will cover at least. */
static off_t fl_fault_size_before_sync(fl_vfs_fault_t *f, int fd, struct stat *st) {
    if (!f->cfg.lose || fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) return -1;
    return st->st_size;
}

static void fl_fault_synced_to(fl_vfs_fault_t *f, const struct stat *st, off_t size) {
    pthread_mutex_lock(&f->lock);
    fl_fault_synced_locked(f, st)->size = size;
    pthread_mutex_unlock(&f->lock);
}

/* ---- the table ---- */

static int fault_open(void *ctx, const char *path, int flags, mode_t mode) {
    fl_vfs_fault_t *f = ctx;
    if (flags & O_CREAT) {
        int e = fl_fault_draw(f, FL_VFS_FAULT_CREATE, fl_fault_under(f, path), path, NULL);
        if (e) {
            errno = e;
            return -1;
        }
    }
    int fd = open(path, flags, mode);
    if (fd >= 0) {
        fl_fault_track(f, fd, path);
        fl_fault_note_file(f, fd);
    }
    return fd;
}

static int fault_close(void *ctx, int fd) {
    fl_fault_track(ctx, fd, NULL);
    return close(fd);
}

static int fault_dup(void *ctx, int fd) {
    fl_vfs_fault_t *f = ctx;
    int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (nfd >= 0 && fd < FL_VFS_FAULT_FDS_MAX) {
        char path[FL_VFS_FAULT_PATH_MAX];
        fl_fault_fd_path(f, fd, path, sizeof(path));
        fl_fault_track(f, nfd, strcmp(path, "?") ? path : NULL);
    }
    if (nfd >= 0) fl_fault_note_file(f, nfd);
    return nfd;
}

static ssize_t fault_pread(void *ctx, int fd, void *buf, size_t len, off_t pos) {
    (void)ctx;
    return pread(fd, buf, len, pos);
}

static ssize_t fault_pwrite(void *ctx, int fd, const void *buf, size_t len, off_t pos) {
    fl_vfs_fault_t *f = ctx;
    char path[FL_VFS_FAULT_PATH_MAX];
    bool under = fl_fault_fd_path(f, fd, path, sizeof(path));
    if (fd >= 0 && fd < FL_VFS_FAULT_FDS_MAX) { /* the second half of a short write */
        pthread_mutex_lock(&f->lock);
        int e = f->fail_next[fd];
        f->fail_next[fd] = 0;
        pthread_mutex_unlock(&f->lock);
        if (e) { /* a call of its own, answered without a draw */
            atomic_fetch_add(&f->calls[FL_VFS_FAULT_WRITE], 1);
            errno = e;
            return -1;
        }
    }
    uint64_t bits = 0;
    int e = fl_fault_draw(f, FL_VFS_FAULT_WRITE, under, path, &bits);
    if (!e && under && f->cfg.disk_bytes) {
        size_t fit = fl_fault_room(f, fd, len, pos);
        if (fit == 0) {
            atomic_fetch_add(&f->enospc, 1);
            errno = ENOSPC;
            return -1;
        }
        if (fit < len) { /* what fits lands, the rest fails on the next call */
            ssize_t n = pwrite(fd, buf, fit, pos);
            if (n > 0 && fd < FL_VFS_FAULT_FDS_MAX) {
                pthread_mutex_lock(&f->lock);
                f->fail_next[fd] = ENOSPC;
                pthread_mutex_unlock(&f->lock);
                atomic_fetch_add(&f->enospc, 1);
            }
            return n;
        }
    }
    if (!e) return pwrite(fd, buf, len, pos);
    if (len >= 2 && (bits & 0x100) && fd < FL_VFS_FAULT_FDS_MAX) {
        ssize_t n = pwrite(fd, buf, len / 2, pos);
        if (n > 0) {
            atomic_fetch_add(&f->short_writes, 1);
            pthread_mutex_lock(&f->lock);
            f->fail_next[fd] = e;
            pthread_mutex_unlock(&f->lock);
            return n;
        }
    }
    errno = e;
    return -1;
}

static int fault_fsync(void *ctx, int fd, bool data_only) {
    fl_vfs_fault_t *f = ctx;
    char path[FL_VFS_FAULT_PATH_MAX];
    bool under = fl_fault_fd_path(f, fd, path, sizeof(path));
    int e = fl_fault_draw(f, FL_VFS_FAULT_FSYNC, under, path, NULL);
    if (e) {
        fl_fault_lose(f, fd); /* lose=1; else the page cache keeps it all */
        errno = e;
        return -1;
    }
    struct stat st;
    off_t covered = fl_fault_size_before_sync(f, fd, &st);
    int rc = data_only ? fdatasync(fd) : fsync(fd);
    if (rc == 0 && covered >= 0) fl_fault_synced_to(f, &st, covered);
    return rc;
}

static int fault_ftruncate(void *ctx, int fd, off_t len) {
    fl_vfs_fault_t *f = ctx;
    char path[FL_VFS_FAULT_PATH_MAX];
    bool under = fl_fault_fd_path(f, fd, path, sizeof(path));
    int e = fl_fault_draw(f, FL_VFS_FAULT_TRUNCATE, under, path, NULL);
    if (e) {
        errno = e;
        return -1;
    }
    return ftruncate(fd, len);
}

static int fault_rename(void *ctx, const char *from, const char *to) {
    fl_vfs_fault_t *f = ctx;
    int e = fl_fault_draw(f, FL_VFS_FAULT_RENAME, fl_fault_under(f, from), from, NULL);
    if (e) {
        errno = e;
        return -1;
    }
    return rename(from, to);
}

static int fault_link(void *ctx, const char *from, const char *to) {
    (void)ctx;
    return link(from, to);
}

static int fault_unlink(void *ctx, const char *path) {
    (void)ctx;
    return unlink(path);
}

static int fault_mkdir(void *ctx, const char *path, mode_t mode) {
    (void)ctx;
    return mkdir(path, mode);
}

static int fault_rmdir(void *ctx, const char *path) {
    (void)ctx;
    return rmdir(path);
}

static int fault_statvfs(void *ctx, const char *path, struct statvfs *out) {
    fl_vfs_fault_t *f = ctx;
    if (statvfs(path, out) != 0) return -1;
    if (!f->cfg.disk_bytes || !fl_fault_under(f, path)) return 0;
    pthread_mutex_lock(&f->lock);
    uint64_t used = fl_fault_used_locked(f, true);
    pthread_mutex_unlock(&f->lock);
    uint64_t free_bytes = f->cfg.disk_bytes > used ? f->cfg.disk_bytes - used : 0;
    out->f_bsize = out->f_frsize = FL_VFS_FAULT_BLOCK;
    out->f_blocks = f->cfg.disk_bytes / FL_VFS_FAULT_BLOCK;
    out->f_bfree = out->f_bavail = free_bytes / FL_VFS_FAULT_BLOCK;
    return 0;
}

static const fl_vfs_ops_t fl_fault_ops = {
    .open = fault_open,
    .close = fault_close,
    .dup = fault_dup,
    .pread = fault_pread,
    .pwrite = fault_pwrite,
    .fsync = fault_fsync,
    .ftruncate = fault_ftruncate,
    .rename = fault_rename,
    .link = fault_link,
    .unlink = fault_unlink,
    .mkdir = fault_mkdir,
    .rmdir = fault_rmdir,
    .statvfs = fault_statvfs,
};

const fl_vfs_ops_t *fl_vfs_fault_ops(void) { return &fl_fault_ops; }
