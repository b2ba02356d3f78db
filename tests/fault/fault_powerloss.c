/*
 * fault_powerloss.c — an LD_PRELOAD shim that models a disk which keeps only
 * what was synced, for simulated power-loss tests of flussd's durable modes
 * (dm-flakey is not available here). Not part of the server: a test tool.
 *
 * Configuration (environment; without ROOT and SHADOW the shim is inert):
 *   FL_POWERLOSS_ROOT=<dir>    the tree whose durability is modelled (flussd's
 *                              data dir); paths outside it are not looked at
 *   FL_POWERLOSS_SHADOW=<dir>  the "disk": an existing directory outside ROOT.
 *                              It starts as the caller made it (empty for a
 *                              fresh ROOT, a copy of ROOT otherwise)
 *   FL_POWERLOSS_STRICT=1      renames and removals reach the disk only when
 *                              a directory they touch is fsynced (see below)
 *   FL_POWERLOSS_STATS=<file>  one line of counters, rewritten after every event
 *   FL_POWERLOSS_VERBOSE=1     one stderr line per event
 *
 * The model. For every regular file under ROOT the shadow holds the file's
 * content as of its last fsync / fdatasync (sync_file_range with
 * SYNC_FILE_RANGE_WAIT_AFTER copies just that range); a file never synced is
 * absent from the shadow, and so is a name that a rename pointed at a never
 * synced file. ftruncate, O_TRUNC and plain writes change nothing until the
 * next sync of the file. sync() and syncfs() make the shadow an exact mirror.
 * Directory operations: mkdir is mirrored at once; rename, renameat,
 * renameat2 (RENAME_EXCHANGE too), unlink, unlinkat and rmdir are mirrored
 * at once by default, i.e. a directory entry is treated as durable as soon
 * as the call returns. With FL_POWERLOSS_STRICT=1 they are queued instead,
 * and an fsync of a directory commits the queue up to the last queued
 * operation that touches that directory (an ordered metadata journal, as
 * ext4 and XFS have): flussd's temp + fsync + rename + fsync(dir) pattern
 * then loses the rename if it dies before the directory fsync. A file
 * content sync whose name a queued operation removes first commits the
 * queue up to that operation. Power loss is then: SIGKILL the process,
 * replace ROOT by a copy of the shadow, start again without the shim.
 *
 * How. The path of a synced fd is read from /proc/self/fd at sync time, so
 * open, close, dup* and fcntl need no interception and renames of open files
 * are followed for free; the file is re-opened read-only through that link
 * (an fd opened O_WRONLY cannot be read) and compared with the shadow in
 * 64 KiB chunks: only differing chunks are written, in place. A process
 * killed inside that copy leaves the shadow as a disk is left by a power
 * loss during an fsync that had not returned: bytes synced by earlier,
 * completed syncs are never touched, only bytes dirtied since may be torn.
 * The shadow copy is taken before the real fsync is called, so it holds
 * what was written before the call (plus, under concurrency, what other
 * threads wrote meanwhile: a slight over-approximation of durability).
 * Not modelled: mmap writes, link/symlink, O_DIRECT/O_SYNC writes (not
 * synced until an explicit sync), files moved into ROOT from outside
 * (absent), syncs of an unlinked-but-open file (dropped).
 *
 * ASan: the shim is built without sanitizer flags. With an ASan flussd
 * (libasan linked dynamically) ASan must come first in LD_PRELOAD:
 *   LD_PRELOAD="/usr/lib/.../libasan.so.8 build-asan/libfl_powerloss.so"
 * (tests/interop/test_powerloss.py finds libasan through ldd).
 *
 * Threading: every event runs under one process-wide mutex, which also
 * orders the real directory operation with its mirror. The shim only calls
 * the real functions (never its own wrappers) while holding it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

#define PL_CHUNK (64u * 1024)
#define PL_PENDING_MAX 65536

typedef int (*pl_fd_fn)(int);
typedef int (*pl_rename_fn)(const char *, const char *);
typedef int (*pl_renameat_fn)(int, const char *, int, const char *);
typedef int (*pl_renameat2_fn)(int, const char *, int, const char *, unsigned int);
typedef int (*pl_path_fn)(const char *);
typedef int (*pl_unlinkat_fn)(int, const char *, int);
typedef int (*pl_mkdir_fn)(const char *, mode_t);
typedef int (*pl_mkdirat_fn)(int, const char *, mode_t);
typedef int (*pl_sfr_fn)(int, off64_t, off64_t, unsigned int);
typedef void (*pl_sync_fn)(void);

enum pl_op_kind { PL_OP_RENAME, PL_OP_EXCHANGE, PL_OP_UNLINK, PL_OP_RMDIR };

/* A queued directory operation (strict mode); paths relative to ROOT,
 * starting with '/'. */
typedef struct {
    enum pl_op_kind kind;
    char *from; /* rename source, or the removed name */
    char *to;   /* rename target, NULL for removals */
} pl_op_t;

typedef struct {
    unsigned long file_syncs, dir_syncs, range_syncs, full_syncs, bytes_written;
    unsigned long renames, unlinks, mkdirs, rmdirs, commits;
} pl_stats_t;

static struct {
    pthread_mutex_t mu;
    int active;
    char root[PATH_MAX];   /* canonical once root_real */
    int root_real;
    char shadow[PATH_MAX];
    int strict, verbose, stats_fd;
    pl_op_t *pending;
    size_t pending_count, pending_cap;
    pl_stats_t st;
    pl_fd_fn fsync, fdatasync, syncfs;
    pl_sync_fn sync;
    pl_sfr_fn sync_file_range;
    pl_rename_fn rename;
    pl_renameat_fn renameat;
    pl_renameat2_fn renameat2;
    pl_path_fn unlink, rmdir;
    pl_unlinkat_fn unlinkat;
    pl_mkdir_fn mkdir;
    pl_mkdirat_fn mkdirat;
} pl = {.mu = PTHREAD_MUTEX_INITIALIZER, .stats_fd = -1};

/* out = a + b (+ c); -1 (out = "") when it does not fit in PATH_MAX.
 * memcpy, not snprintf: every join is checked in one place. */
static int pl_cat(char out[PATH_MAX], const char *a, const char *b, const char *c) {
    size_t la = strlen(a), lb = strlen(b), lc = c ? strlen(c) : 0;
    if (la + lb + lc >= PATH_MAX) {
        out[0] = '\0';
        return -1;
    }
    memmove(out, a, la); /* a may alias out */
    memcpy(out + la, b, lb);
    if (lc) memcpy(out + la + lb, c, lc);
    out[la + lb + lc] = '\0';
    return 0;
}

static void *pl_sym(const char *name) {
    void *p = dlsym(RTLD_NEXT, name);
    if (!p) {
        fprintf(stderr, "fl_powerloss: no next symbol %s\n", name);
        abort();
    }
    return p;
}

/* Resolves the real functions once (cheap to repeat; racing writers store
 * the same values). */
static void pl_syms(void) {
    if (pl.fsync) return;
    pl.fdatasync = (pl_fd_fn)pl_sym("fdatasync");
    pl.syncfs = (pl_fd_fn)pl_sym("syncfs");
    pl.sync = (pl_sync_fn)pl_sym("sync");
    pl.sync_file_range = (pl_sfr_fn)pl_sym("sync_file_range");
    pl.rename = (pl_rename_fn)pl_sym("rename");
    pl.renameat = (pl_renameat_fn)pl_sym("renameat");
    pl.renameat2 = (pl_renameat2_fn)pl_sym("renameat2");
    pl.unlink = (pl_path_fn)pl_sym("unlink");
    pl.rmdir = (pl_path_fn)pl_sym("rmdir");
    pl.unlinkat = (pl_unlinkat_fn)pl_sym("unlinkat");
    pl.mkdir = (pl_mkdir_fn)pl_sym("mkdir");
    pl.mkdirat = (pl_mkdirat_fn)pl_sym("mkdirat");
    __atomic_store_n(&pl.fsync, (pl_fd_fn)pl_sym("fsync"), __ATOMIC_RELEASE);
}

static void pl_log(const char *fmt, ...) {
    if (!pl.verbose) return;
    char line[2 * PATH_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n > sizeof(line) - 2) n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    ssize_t w = write(2, line, (size_t)n);
    (void)w;
}

static void pl_write_stats(void) {
    if (pl.stats_fd < 0) return;
    char line[512];
    int n = snprintf(line, sizeof(line),
                     "file_syncs=%lu dir_syncs=%lu range_syncs=%lu full_syncs=%lu "
                     "bytes_written=%lu renames=%lu unlinks=%lu mkdirs=%lu rmdirs=%lu "
                     "commits=%lu pending=%zu\n",
                     pl.st.file_syncs, pl.st.dir_syncs, pl.st.range_syncs, pl.st.full_syncs,
                     pl.st.bytes_written, pl.st.renames, pl.st.unlinks, pl.st.mkdirs,
                     pl.st.rmdirs, pl.st.commits, pl.pending_count);
    if (n <= 0) return;
    if (pwrite(pl.stats_fd, line, (size_t)n, 0) == n && ftruncate(pl.stats_fd, n) == 0) return;
}

/* Takes the lock; returns 1 when the shim is active (then the caller must
 * pl_unlock), 0 when inert (lock not held). Configuration is read at the
 * first event that finds it set, so a program may setenv before that. */
static int pl_lock(void) {
    pl_syms();
    pthread_mutex_lock(&pl.mu);
    if (!pl.active) {
        const char *root = getenv("FL_POWERLOSS_ROOT"), *shadow = getenv("FL_POWERLOSS_SHADOW");
        if (!root || !*root || !shadow || !*shadow || strlen(root) >= PATH_MAX ||
            !realpath(shadow, pl.shadow)) {
            pthread_mutex_unlock(&pl.mu);
            return 0;
        }
        pl_cat(pl.root, root, "", NULL);
        const char *s = getenv("FL_POWERLOSS_STRICT");
        pl.strict = s && *s && strcmp(s, "0") != 0;
        s = getenv("FL_POWERLOSS_VERBOSE");
        pl.verbose = s && *s && strcmp(s, "0") != 0;
        s = getenv("FL_POWERLOSS_STATS");
        if (s && *s) pl.stats_fd = open(s, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        pl.active = 1;
        pl_log("fl_powerloss: root %s shadow %s%s", pl.root, pl.shadow,
               pl.strict ? " (strict)" : "");
        pl_write_stats();
    }
    if (!pl.root_real) {
        char canon[PATH_MAX];
        if (realpath(pl.root, canon)) {
            memcpy(pl.root, canon, sizeof(canon));
            pl.root_real = 1;
        }
    }
    return 1;
}

static void pl_unlock(void) {
    pl_write_stats();
    pthread_mutex_unlock(&pl.mu);
}

/* ---------------------------------------------------------------------------
 * paths
 * ------------------------------------------------------------------------- */

/* If abs (canonical) is ROOT or below it, copies the part after ROOT ("" or
 * "/a/b") to rel and returns 1. */
static int pl_rel_of(const char *abs, char rel[PATH_MAX]) {
    size_t n = strlen(pl.root);
    if (strncmp(abs, pl.root, n) != 0 || (abs[n] != '\0' && abs[n] != '/')) return 0;
    pl_cat(rel, abs + n, "", NULL);
    return 1;
}

static int pl_fd_path(int fd, char out[PATH_MAX]) {
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, out, PATH_MAX - 1);
    if (n < 0) return -1;
    out[n] = '\0';
    return 0;
}

/* The ROOT-relative name that (dirfd, path) denotes, without following a
 * symlink in the last component; 1 when under ROOT, 0 otherwise. The parent
 * directory must exist (true before and after every call we mirror). */
static int pl_resolve(int dirfd, const char *path, char rel[PATH_MAX]) {
    if (!path || !*path) return 0;
    char full[PATH_MAX];
    if (path[0] == '/') {
        if (pl_cat(full, path, "", NULL)) return 0;
    } else {
        char base[PATH_MAX];
        if (dirfd == AT_FDCWD) {
            if (!getcwd(base, sizeof(base))) return 0;
        } else if (pl_fd_path(dirfd, base) != 0) {
            return 0;
        }
        if (pl_cat(full, base, "/", path)) return 0;
    }
    size_t len = strlen(full);
    while (len > 1 && full[len - 1] == '/') full[--len] = '\0';
    char *slash = strrchr(full, '/');
    const char *last = slash + 1;
    char parent[PATH_MAX], canon[PATH_MAX];
    if (strcmp(last, ".") == 0 || strcmp(last, "..") == 0) {
        if (!realpath(full, canon)) return 0;
    } else {
        if (slash == full) {
            parent[0] = '\0';
        } else {
            *slash = '\0';
            if (!realpath(full, parent)) return 0;
            if (strcmp(parent, "/") == 0) parent[0] = '\0';
        }
        if (pl_cat(canon, parent, "/", last)) return 0;
    }
    return pl_rel_of(canon, rel);
}

static void pl_shadow_path(const char *rel, char out[PATH_MAX]) {
    pl_cat(out, pl.shadow, rel, NULL);
}

/* a == b or a is below b */
static int pl_under(const char *a, const char *b) {
    size_t n = strlen(b);
    return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

static void pl_parent(const char *rel, char out[PATH_MAX]) {
    pl_cat(out, rel, "", NULL);
    char *s = strrchr(out, '/');
    if (s) *s = '\0';
}

/* mkdir -p of a shadow directory */
static void pl_shadow_mkdirs(const char *spath) {
    char p[PATH_MAX];
    pl_cat(p, spath, "", NULL);
    for (char *s = p + strlen(pl.shadow) + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        pl.mkdir(p, 0755);
        *s = '/';
    }
    pl.mkdir(p, 0755);
}

static void pl_shadow_remove_tree(const char *spath) {
    struct stat st;
    if (lstat(spath, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(spath);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char child[PATH_MAX];
            if (pl_cat(child, spath, "/", e->d_name)) continue;
            pl_shadow_remove_tree(child);
        }
        if (d) closedir(d);
        pl.rmdir(spath);
    } else {
        pl.unlink(spath);
    }
}

/* ---------------------------------------------------------------------------
 * the directory-operation queue (strict mode) and its mirror
 * ------------------------------------------------------------------------- */

static void pl_apply(const pl_op_t *op) {
    char a[PATH_MAX], b[PATH_MAX];
    pl_shadow_path(op->from, a);
    struct stat sa, sb;
    switch (op->kind) {
    case PL_OP_UNLINK:
        pl.unlink(a);
        break;
    case PL_OP_RMDIR: /* the real directory was empty; leftovers are stale */
        pl_shadow_remove_tree(a);
        break;
    case PL_OP_RENAME:
        pl_shadow_path(op->to, b);
        if (lstat(a, &sa) != 0) { /* the new name points at never-synced data */
            pl_shadow_remove_tree(b);
            break;
        }
        if (S_ISDIR(sa.st_mode) && lstat(b, &sb) == 0) pl_shadow_remove_tree(b);
        if (pl.rename(a, b) != 0) {
            pl_shadow_remove_tree(b);
            pl.rename(a, b);
        }
        break;
    case PL_OP_EXCHANGE: {
        pl_shadow_path(op->to, b);
        int ha = lstat(a, &sa) == 0, hb = lstat(b, &sb) == 0;
        if (ha && hb) pl.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
        else if (ha) pl.rename(a, b);
        else if (hb) pl.rename(b, a);
        break;
    }
    }
    pl_log("fl_powerloss: applied %s %s%s%s",
           op->kind == PL_OP_UNLINK   ? "unlink"
           : op->kind == PL_OP_RMDIR  ? "rmdir"
           : op->kind == PL_OP_RENAME ? "rename"
                                      : "exchange",
           op->from, op->to ? " -> " : "", op->to ? op->to : "");
}

/* Applies and drops the first n queued operations. */
static void pl_commit(size_t n) {
    for (size_t i = 0; i < n; i++) {
        pl_apply(&pl.pending[i]);
        free(pl.pending[i].from);
        free(pl.pending[i].to);
    }
    memmove(pl.pending, pl.pending + n, (pl.pending_count - n) * sizeof(*pl.pending));
    pl.pending_count -= n;
    if (n) pl.st.commits++;
}

/* Mirrors op at once (default) or queues it (strict). Takes the strings. */
static void pl_dirop(enum pl_op_kind kind, const char *from, const char *to) {
    pl_op_t op = {kind, strdup(from), to ? strdup(to) : NULL};
    if (!op.from || (to && !op.to)) abort();
    if (!pl.strict || pl.pending_count >= PL_PENDING_MAX) {
        if (pl.pending_count) pl_commit(pl.pending_count);
        pl_apply(&op);
        free(op.from);
        free(op.to);
        return;
    }
    if (pl.pending_count == pl.pending_cap) {
        pl.pending_cap = pl.pending_cap ? pl.pending_cap * 2 : 64;
        pl.pending = realloc(pl.pending, pl.pending_cap * sizeof(*pl.pending));
        if (!pl.pending) abort();
    }
    pl.pending[pl.pending_count++] = op;
}

/* The shadow name of the real name rel: queued renames undone newest first.
 * If a queued operation removed the name rel now has (so rel names a newer
 * file), the queue is committed up to it first. */
static void pl_shadow_name(const char *rel, char out[PATH_MAX]) {
    for (;;) {
        char cur[PATH_MAX];
        pl_cat(cur, rel, "", NULL);
        size_t conflict = 0;
        for (size_t i = pl.pending_count; i-- > 0 && !conflict;) {
            const pl_op_t *op = &pl.pending[i];
            char next[PATH_MAX];
            if (op->kind != PL_OP_UNLINK && op->kind != PL_OP_RMDIR && pl_under(cur, op->to)) {
                pl_cat(next, op->from, cur + strlen(op->to), NULL);
                pl_cat(cur, next, "", NULL);
            } else if (op->kind == PL_OP_EXCHANGE && pl_under(cur, op->from)) {
                pl_cat(next, op->to, cur + strlen(op->from), NULL);
                pl_cat(cur, next, "", NULL);
            } else if (pl_under(cur, op->from)) {
                conflict = i + 1;
            }
        }
        if (!conflict) {
            pl_shadow_path(cur, out);
            return;
        }
        pl_commit(conflict);
    }
}

/* fsync of the directory rel: commit up to its last queued operation */
static void pl_dir_synced(const char *rel) {
    size_t upto = 0;
    for (size_t i = 0; i < pl.pending_count; i++) {
        char p[PATH_MAX];
        pl_parent(pl.pending[i].from, p);
        int touches = strcmp(p, rel) == 0;
        if (pl.pending[i].to) {
            pl_parent(pl.pending[i].to, p);
            touches |= strcmp(p, rel) == 0;
        }
        if (touches) upto = i + 1;
    }
    pl_commit(upto);
}

/* ---------------------------------------------------------------------------
 * content copy
 * ------------------------------------------------------------------------- */

#define PL_TO_END_TRUNCATE ((off_t)-1) /* fsync: up to the end, same size */
#define PL_TO_END ((off_t)-2)          /* a range to the end: no truncation */

/* Makes [from, to) of the shadow file equal to the real file. */
static void pl_copy(int rfd, const char *rel, off_t from, off_t to, mode_t mode) {
    char spath[PATH_MAX], sdir[PATH_MAX];
    pl_shadow_name(rel, spath);
    pl_parent(spath, sdir);
    pl_shadow_mkdirs(sdir);
    int sfd = open(spath, O_RDWR | O_CREAT | O_CLOEXEC, (mode & 07777) | 0600);
    if (sfd < 0) {
        fprintf(stderr, "fl_powerloss: cannot open shadow %s: %s\n", spath, strerror(errno));
        return;
    }
    struct stat st;
    off_t end = fstat(rfd, &st) == 0 ? st.st_size : 0;
    int whole = to == PL_TO_END_TRUNCATE;
    if (to >= 0 && to < end) end = to;
    static char a[PL_CHUNK], b[PL_CHUNK]; /* under pl.mu */
    for (off_t pos = from; pos < end;) {
        size_t want = (size_t)(end - pos) < PL_CHUNK ? (size_t)(end - pos) : PL_CHUNK;
        ssize_t n = pread(rfd, a, want, pos);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        ssize_t m = pread(sfd, b, (size_t)n, pos);
        if (m != n || memcmp(a, b, (size_t)n) != 0) {
            if (pwrite(sfd, a, (size_t)n, pos) != n) {
                fprintf(stderr, "fl_powerloss: write %s: %s\n", spath, strerror(errno));
                break;
            }
            pl.st.bytes_written += (unsigned long)n;
        }
        pos += n;
    }
    struct stat ss;
    if (whole && fstat(sfd, &ss) == 0 && ss.st_size != end && ftruncate(sfd, end) != 0)
        fprintf(stderr, "fl_powerloss: truncate %s: %s\n", spath, strerror(errno));
    close(sfd);
}

/* fsync/fdatasync/sync_file_range of fd: copy what it names, if under ROOT */
static void pl_synced_fd(int fd, off_t from, off_t to) {
    char abs[PATH_MAX], rel[PATH_MAX];
    struct stat st;
    if (fstat(fd, &st) != 0 || pl_fd_path(fd, abs) != 0 || !pl_rel_of(abs, rel)) return;
    if (S_ISDIR(st.st_mode)) {
        pl.st.dir_syncs++;
        pl_dir_synced(rel);
        pl_log("fl_powerloss: fsync dir %s", rel[0] ? rel : "/");
        return;
    }
    if (!S_ISREG(st.st_mode) || st.st_nlink == 0) return; /* unlinked: no name to keep */
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    int rfd = open(link, O_RDONLY | O_CLOEXEC);
    pl_copy(rfd >= 0 ? rfd : fd, rel, from, to, st.st_mode);
    if (rfd >= 0) close(rfd);
    if (to == PL_TO_END_TRUNCATE) pl.st.file_syncs++;
    else pl.st.range_syncs++;
    pl_log("fl_powerloss: sync %s [%lld, %lld)", rel, (long long)from, (long long)to);
}

/* sync()/syncfs(): the shadow becomes a mirror of ROOT */
static void pl_mirror(const char *rel) {
    char real[PATH_MAX], spath[PATH_MAX];
    if (pl_cat(real, pl.root, rel, NULL)) return;
    pl_shadow_path(rel, spath);
    DIR *d = opendir(real);
    if (!d) return;
    pl_shadow_mkdirs(spath);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char crel[PATH_MAX], creal[PATH_MAX];
        if (pl_cat(crel, rel, "/", e->d_name) || pl_cat(creal, pl.root, crel, NULL)) continue;
        struct stat st;
        if (lstat(creal, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            pl_mirror(crel);
        } else if (S_ISREG(st.st_mode)) {
            int fd = open(creal, O_RDONLY | O_CLOEXEC);
            if (fd >= 0) {
                pl_copy(fd, crel, 0, PL_TO_END_TRUNCATE, st.st_mode);
                close(fd);
            }
        }
    }
    closedir(d);
    /* names in the shadow that ROOT no longer has */
    d = opendir(spath);
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char creal[PATH_MAX], cshadow[PATH_MAX];
        struct stat st;
        if (pl_cat(creal, real, "/", e->d_name) || pl_cat(cshadow, spath, "/", e->d_name))
            continue;
        if (lstat(creal, &st) != 0) pl_shadow_remove_tree(cshadow);
    }
    if (d) closedir(d);
}

static void pl_full_sync(void) {
    pl_commit(pl.pending_count);
    pl_mirror("");
    pl.st.full_syncs++;
    pl_log("fl_powerloss: full sync");
}

/* ---------------------------------------------------------------------------
 * the intercepted calls
 * ------------------------------------------------------------------------- */

int fsync(int fd) {
    if (!pl_lock()) return pl.fsync(fd);
    pl_synced_fd(fd, 0, PL_TO_END_TRUNCATE);
    int rc = pl.fsync(fd);
    int e = errno;
    pl_unlock();
    errno = e;
    return rc;
}

int fdatasync(int fd) {
    if (!pl_lock()) return pl.fdatasync(fd);
    pl_synced_fd(fd, 0, PL_TO_END_TRUNCATE);
    int rc = pl.fdatasync(fd);
    int e = errno;
    pl_unlock();
    errno = e;
    return rc;
}

int sync_file_range(int fd, off64_t offset, off64_t nbytes, unsigned int flags) {
    if (!pl_lock()) return pl.sync_file_range(fd, offset, nbytes, flags);
    if (flags & SYNC_FILE_RANGE_WAIT_AFTER)
        pl_synced_fd(fd, (off_t)offset, nbytes == 0 ? PL_TO_END : (off_t)(offset + nbytes));
    int rc = pl.sync_file_range(fd, offset, nbytes, flags);
    int e = errno;
    pl_unlock();
    errno = e;
    return rc;
}

int syncfs(int fd) {
    if (!pl_lock()) return pl.syncfs(fd);
    pl_full_sync();
    int rc = pl.syncfs(fd);
    int e = errno;
    pl_unlock();
    errno = e;
    return rc;
}

void sync(void) {
    if (!pl_lock()) {
        pl.sync();
        return;
    }
    pl_full_sync();
    pl.sync();
    pl_unlock();
}

/* rename family: resolve both names before the call (the source is gone
 * after it), mirror after it succeeded */
static int pl_do_rename(int odir, const char *from, int ndir, const char *to, unsigned flags,
                        int how) {
    if (!pl_lock()) {
        if (how == 0) return pl.rename(from, to);
        if (how == 1) return pl.renameat(odir, from, ndir, to);
        return pl.renameat2(odir, from, ndir, to, flags);
    }
    char a[PATH_MAX], b[PATH_MAX];
    int ina = pl_resolve(odir, from, a), inb = pl_resolve(ndir, to, b);
    int rc = how == 0   ? pl.rename(from, to)
             : how == 1 ? pl.renameat(odir, from, ndir, to)
                        : pl.renameat2(odir, from, ndir, to, flags);
    int e = errno;
    if (rc == 0 && (ina || inb)) {
        pl.st.renames++;
        if (ina && inb) {
            pl_dirop((flags & RENAME_EXCHANGE) ? PL_OP_EXCHANGE : PL_OP_RENAME, a, b);
        } else if (ina) { /* moved out of ROOT: gone */
            pl_dirop(PL_OP_UNLINK, a, NULL);
        } else { /* moved in from outside: its data was never synced here */
            pl_dirop(PL_OP_UNLINK, b, NULL);
        }
        pl_log("fl_powerloss: rename %s -> %s", ina ? a : from, inb ? b : to);
    }
    pl_unlock();
    errno = e;
    return rc;
}

int rename(const char *from, const char *to) {
    return pl_do_rename(AT_FDCWD, from, AT_FDCWD, to, 0, 0);
}

int renameat(int odir, const char *from, int ndir, const char *to) {
    return pl_do_rename(odir, from, ndir, to, 0, 1);
}

int renameat2(int odir, const char *from, int ndir, const char *to, unsigned int flags) {
    return pl_do_rename(odir, from, ndir, to, flags, 2);
}

static int pl_do_remove(int dirfd, const char *path, int is_dir, int how) {
    if (!pl_lock()) {
        if (how == 0) return is_dir ? pl.rmdir(path) : pl.unlink(path);
        return pl.unlinkat(dirfd, path, is_dir ? AT_REMOVEDIR : 0);
    }
    char rel[PATH_MAX];
    int in = pl_resolve(dirfd, path, rel);
    int rc = how == 0 ? (is_dir ? pl.rmdir(path) : pl.unlink(path))
                      : pl.unlinkat(dirfd, path, is_dir ? AT_REMOVEDIR : 0);
    int e = errno;
    if (rc == 0 && in && rel[0]) {
        if (is_dir) pl.st.rmdirs++;
        else pl.st.unlinks++;
        pl_dirop(is_dir ? PL_OP_RMDIR : PL_OP_UNLINK, rel, NULL);
        pl_log("fl_powerloss: %s %s", is_dir ? "rmdir" : "unlink", rel);
    }
    pl_unlock();
    errno = e;
    return rc;
}

int unlink(const char *path) { return pl_do_remove(AT_FDCWD, path, 0, 0); }

int rmdir(const char *path) { return pl_do_remove(AT_FDCWD, path, 1, 0); }

int unlinkat(int dirfd, const char *path, int flags) {
    return pl_do_remove(dirfd, path, (flags & AT_REMOVEDIR) != 0, 1);
}

static int pl_do_mkdir(int dirfd, const char *path, mode_t mode, int how) {
    if (!pl_lock()) return how == 0 ? pl.mkdir(path, mode) : pl.mkdirat(dirfd, path, mode);
    int rc = how == 0 ? pl.mkdir(path, mode) : pl.mkdirat(dirfd, path, mode);
    int e = errno;
    char rel[PATH_MAX];
    if (rc == 0 && pl_resolve(dirfd, path, rel) && rel[0]) {
        char spath[PATH_MAX];
        pl_shadow_name(rel, spath);
        pl_shadow_mkdirs(spath);
        pl.st.mkdirs++;
        pl_log("fl_powerloss: mkdir %s", rel);
    }
    pl_unlock();
    errno = e;
    return rc;
}

int mkdir(const char *path, mode_t mode) { return pl_do_mkdir(AT_FDCWD, path, mode, 0); }

int mkdirat(int dirfd, const char *path, mode_t mode) {
    return pl_do_mkdir(dirfd, path, mode, 1);
}
