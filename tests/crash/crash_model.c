/*
 * crash_model.c — recorder and crash-state builder (crash_model.h).
 */
#define _GNU_SOURCE
#include "crash_model.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common_vfs.h"

#define CRASH_FDS 65536
#define CRASH_SECTOR 512

/* ---- a namespace: relative path -> inode ---- */

typedef struct ns_entry {
    char *path;
    int ino;
} ns_entry_t;

typedef struct ns {
    size_t n, cap;
    ns_entry_t *e;
} ns_t;

static int ns_find(const ns_t *ns, const char *path) {
    for (size_t i = 0; i < ns->n; i++)
        if (strcmp(ns->e[i].path, path) == 0) return ns->e[i].ino;
    return -1;
}

static void ns_del(ns_t *ns, const char *path) {
    for (size_t i = 0; i < ns->n; i++)
        if (strcmp(ns->e[i].path, path) == 0) {
            free(ns->e[i].path);
            ns->e[i] = ns->e[--ns->n];
            return;
        }
}

static void ns_put(ns_t *ns, const char *path, int ino) {
    ns_del(ns, path);
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? ns->cap * 2 : 64;
        ns->e = realloc(ns->e, ns->cap * sizeof(*ns->e));
    }
    ns->e[ns->n++] = (ns_entry_t){strdup(path), ino};
}

/* rename: the entry and, for a directory, everything below it */
static void ns_move(ns_t *ns, const char *from, const char *to) {
    size_t fl = strlen(from);
    int ino = ns_find(ns, from);
    if (ino >= 0) {
        ns_del(ns, to);
        /* a directory replaced by the rename loses what was below it */
        size_t tl = strlen(to);
        for (size_t i = 0; i < ns->n;) {
            if (strncmp(ns->e[i].path, to, tl) == 0 && ns->e[i].path[tl] == '/') {
                free(ns->e[i].path);
                ns->e[i] = ns->e[--ns->n];
            } else {
                i++;
            }
        }
    }
    for (size_t i = 0; i < ns->n; i++) {
        char *p = ns->e[i].path;
        if (strcmp(p, from) == 0 || (strncmp(p, from, fl) == 0 && p[fl] == '/')) {
            size_t n = strlen(to) + strlen(p + fl) + 1;
            char *q = malloc(n);
            snprintf(q, n, "%s%s", to, p + fl);
            free(p);
            ns->e[i].path = q;
        }
    }
}

static void ns_free(ns_t *ns) {
    for (size_t i = 0; i < ns->n; i++) free(ns->e[i].path);
    free(ns->e);
    memset(ns, 0, sizeof(*ns));
}

/* ---- the recorder ---- */

static struct {
    crash_log_t *log;
    size_t rootlen;
    ns_t ns;              /* current names, as the recorder saw them made */
    int fd_ino[CRASH_FDS]; /* -1: not ours */
    bool dirs[1 << 16];   /* inode is a directory (recorder view) */
} rec;

static crash_op_t *rec_add(crash_op_kind_t kind) {
    crash_log_t *l = rec.log;
    if (l->count == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 1024;
        l->ops = realloc(l->ops, l->cap * sizeof(*l->ops));
    }
    crash_op_t *op = &l->ops[l->count++];
    memset(op, 0, sizeof(*op));
    op->kind = kind;
    op->ino = op->parent = op->parent2 = -1;
    return op;
}

/* The path relative to the root, or NULL when it is not below it. */
static const char *rec_rel(const char *path) {
    if (!rec.log || strncmp(path, rec.log->root, rec.rootlen) != 0) return NULL;
    if (path[rec.rootlen] == '\0') return "";
    if (path[rec.rootlen] != '/') return NULL;
    return path + rec.rootlen + 1;
}

static int rec_parent(const char *rel) {
    const char *slash = strrchr(rel, '/');
    if (!slash) return 0;
    char *p = strndup(rel, (size_t)(slash - rel));
    int ino = ns_find(&rec.ns, p);
    free(p);
    return ino;
}

static int rec_new_ino(bool dir) {
    int ino = ++rec.log->inodes;
    if (ino < (int)(sizeof(rec.dirs) / sizeof(rec.dirs[0]))) rec.dirs[ino] = dir;
    return ino;
}

/* A new file or directory at rel: a fresh inode, the op, the name. */
static int rec_create(crash_op_kind_t kind, const char *rel) {
    int ino = rec_new_ino(kind == CRASH_OP_MKDIR);
    crash_op_t *op = rec_add(kind);
    op->ino = ino;
    op->path = strdup(rel);
    op->parent = rec_parent(rel);
    ns_put(&rec.ns, rel, ino);
    return ino;
}

static bool rec_is_dir(int ino) {
    return ino == 0 || (ino < (int)(sizeof(rec.dirs) / sizeof(rec.dirs[0])) && rec.dirs[ino]);
}

static int rec_open(void *ctx, const char *path, int flags, mode_t mode) {
    const char *rel = rec_rel(path);
    int existed = rel ? (rel[0] == '\0' ? 0 : ns_find(&rec.ns, rel)) : -1;
    int fd = fl_vfs_posix()->open(ctx, path, flags, mode);
    if (fd < 0 || !rel || fd >= CRASH_FDS) return fd;
    int ino = existed;
    if (ino < 0) {
        if (!(flags & O_CREAT)) { /* made before recording: not modelled */
            rec.fd_ino[fd] = -1;
            return fd;
        }
        ino = rec_create(CRASH_OP_CREATE, rel);
    } else if ((flags & O_TRUNC) && !rec_is_dir(ino)) {
        crash_op_t *op = rec_add(CRASH_OP_TRUNC);
        op->ino = ino;
        op->len = 0;
    }
    rec.fd_ino[fd] = ino;
    return fd;
}

static int rec_close(void *ctx, int fd) {
    if (fd >= 0 && fd < CRASH_FDS) rec.fd_ino[fd] = -1;
    return fl_vfs_posix()->close(ctx, fd);
}

static int rec_dup(void *ctx, int fd) {
    int nfd = fl_vfs_posix()->dup(ctx, fd);
    if (nfd >= 0 && nfd < CRASH_FDS) rec.fd_ino[nfd] = fd < CRASH_FDS ? rec.fd_ino[fd] : -1;
    return nfd;
}

static ssize_t rec_pread(void *ctx, int fd, void *buf, size_t len, off_t pos) {
    return fl_vfs_posix()->pread(ctx, fd, buf, len, pos);
}

static ssize_t rec_pwrite(void *ctx, int fd, const void *buf, size_t len, off_t pos) {
    ssize_t n = fl_vfs_posix()->pwrite(ctx, fd, buf, len, pos);
    if (n > 0 && fd < CRASH_FDS && rec.fd_ino[fd] >= 0) {
        crash_op_t *op = rec_add(CRASH_OP_WRITE);
        op->ino = rec.fd_ino[fd];
        op->off = (uint64_t)pos;
        op->len = (uint64_t)n;
        op->data = malloc((size_t)n);
        memcpy(op->data, buf, (size_t)n);
    }
    return n;
}

static int rec_fsync(void *ctx, int fd, bool data_only) {
    int rc = fl_vfs_posix()->fsync(ctx, fd, data_only);
    if (rc == 0 && fd < CRASH_FDS && rec.fd_ino[fd] >= 0) {
        int ino = rec.fd_ino[fd];
        if (rec_is_dir(ino)) {
            crash_log_t *l = rec.log;
            bool after_rename = l->count > 0 && l->ops[l->count - 1].kind == CRASH_OP_RENAME;
            if (!(l->drop_rename_syncs && after_rename)) rec_add(CRASH_OP_DIRSYNC)->ino = ino;
        } else {
            rec_add(CRASH_OP_FSYNC)->ino = ino;
        }
    }
    return rc;
}

static int rec_ftruncate(void *ctx, int fd, off_t len) {
    int rc = fl_vfs_posix()->ftruncate(ctx, fd, len);
    if (rc == 0 && fd < CRASH_FDS && rec.fd_ino[fd] >= 0) {
        crash_op_t *op = rec_add(CRASH_OP_TRUNC);
        op->ino = rec.fd_ino[fd];
        op->len = (uint64_t)len;
    }
    return rc;
}

static int rec_rename(void *ctx, const char *from, const char *to) {
    int rc = fl_vfs_posix()->rename(ctx, from, to);
    const char *rf = rec_rel(from), *rt = rec_rel(to);
    if (rc == 0 && rf && rt && ns_find(&rec.ns, rf) >= 0) {
        crash_op_t *op = rec_add(CRASH_OP_RENAME);
        op->ino = ns_find(&rec.ns, rf);
        op->path = strdup(rf);
        op->path2 = strdup(rt);
        op->parent = rec_parent(rf);
        op->parent2 = rec_parent(rt);
        ns_move(&rec.ns, rf, rt);
    }
    return rc;
}

static int rec_link(void *ctx, const char *from, const char *to) {
    int rc = fl_vfs_posix()->link(ctx, from, to);
    const char *rf = rec_rel(from), *rt = rec_rel(to);
    if (rc == 0 && rt) {
        int ino = rf ? ns_find(&rec.ns, rf) : -1;
        if (ino < 0) {
            /* a file made outside the seam (RocksDB's checkpoint): a new
             * file with its bytes, durable as its maker synced them */
            ino = rec_create(CRASH_OP_CREATE, rt);
            FILE *f = fopen(to, "rb");
            if (f) {
                uint8_t chunk[65536];
                size_t n, off = 0;
                while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
                    crash_op_t *w = rec_add(CRASH_OP_WRITE);
                    w->ino = ino;
                    w->off = off;
                    w->len = n;
                    w->data = malloc(n);
                    memcpy(w->data, chunk, n);
                    off += n;
                }
                fclose(f);
            }
            rec_add(CRASH_OP_FSYNC)->ino = ino;
            return rc;
        }
        crash_op_t *op = rec_add(CRASH_OP_LINK);
        op->ino = ino;
        op->path2 = strdup(rt);
        op->parent2 = rec_parent(rt);
        ns_put(&rec.ns, rt, ino);
    }
    return rc;
}

static int rec_unlink_like(crash_op_kind_t kind, const char *path, int rc) {
    const char *rel = rec_rel(path);
    if (rc == 0 && rel && ns_find(&rec.ns, rel) >= 0) {
        crash_op_t *op = rec_add(kind);
        op->path = strdup(rel);
        op->parent = rec_parent(rel);
        ns_del(&rec.ns, rel);
    }
    return rc;
}

static int rec_unlink(void *ctx, const char *path) {
    return rec_unlink_like(CRASH_OP_UNLINK, path, fl_vfs_posix()->unlink(ctx, path));
}

static int rec_rmdir(void *ctx, const char *path) {
    return rec_unlink_like(CRASH_OP_RMDIR, path, fl_vfs_posix()->rmdir(ctx, path));
}

static int rec_mkdir(void *ctx, const char *path, mode_t mode) {
    int rc = fl_vfs_posix()->mkdir(ctx, path, mode);
    const char *rel = rec_rel(path);
    if (rc == 0 && rel && rel[0]) rec_create(CRASH_OP_MKDIR, rel);
    return rc;
}

static const fl_vfs_ops_t rec_ops = {
    .open = rec_open,
    .close = rec_close,
    .dup = rec_dup,
    .pread = rec_pread,
    .pwrite = rec_pwrite,
    .fsync = rec_fsync,
    .ftruncate = rec_ftruncate,
    .rename = rec_rename,
    .link = rec_link,
    .unlink = rec_unlink,
    .mkdir = rec_mkdir,
    .rmdir = rec_rmdir,
};

void crash_record_start(crash_log_t *log, const char *root) {
    memset(log, 0, sizeof(*log));
    log->root = strdup(root);
    rec.log = log;
    rec.rootlen = strlen(root);
    ns_free(&rec.ns);
    for (int i = 0; i < CRASH_FDS; i++) rec.fd_ino[i] = -1;
    memset(rec.dirs, 0, sizeof(rec.dirs));
    fl_vfs_install(&rec_ops, NULL);
}

void crash_record_stop(void) {
    fl_vfs_install(NULL, NULL);
    rec.log = NULL;
    ns_free(&rec.ns);
}

void crash_log_free(crash_log_t *log) {
    for (size_t i = 0; i < log->count; i++) {
        free(log->ops[i].path);
        free(log->ops[i].path2);
        free(log->ops[i].data);
    }
    free(log->ops);
    free(log->root);
    memset(log, 0, sizeof(*log));
}

/* ---- replay into a model ---- */

typedef struct blob {
    uint8_t *p;
    size_t len, cap;
} blob_t;

typedef struct model {
    int inodes;
    blob_t *cur, *dur;  /* per inode */
    bool *dir;
    ns_t names, durable; /* current and durable namespaces */
    size_t *pending;     /* queued name changes (op indices), oldest first */
    size_t npending;
} model_t;

/* memcpy that allows empty copies from or to NULL */
static void copy_bytes(void *dst, const void *src, size_t n) {
    if (n) memcpy(dst, src, n);
}

static void blob_set_len(blob_t *b, size_t len) {
    if (len > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < len) cap *= 2;
        b->p = realloc(b->p, cap);
        b->cap = cap;
    }
    if (len > b->len) memset(b->p + b->len, 0, len - b->len);
    b->len = len;
}

static void blob_copy(blob_t *dst, const blob_t *src) {
    blob_set_len(dst, src->len);
    if (src->len) memcpy(dst->p, src->p, src->len);
}

static void model_init(model_t *m, const crash_log_t *log) {
    memset(m, 0, sizeof(*m));
    m->inodes = log->inodes + 1;
    m->cur = calloc((size_t)m->inodes, sizeof(blob_t));
    m->dur = calloc((size_t)m->inodes, sizeof(blob_t));
    m->dir = calloc((size_t)m->inodes, sizeof(bool));
    m->dir[0] = true;
    m->pending = calloc(log->count + 1, sizeof(size_t));
}

static void model_free(model_t *m) {
    for (int i = 0; i < m->inodes; i++) {
        free(m->cur[i].p);
        free(m->dur[i].p);
    }
    free(m->cur);
    free(m->dur);
    free(m->dir);
    free(m->pending);
    ns_free(&m->names);
    ns_free(&m->durable);
}

static void model_name_change(ns_t *ns, const crash_op_t *op) {
    switch (op->kind) {
    case CRASH_OP_CREATE:
    case CRASH_OP_MKDIR: ns_put(ns, op->path, op->ino); break;
    case CRASH_OP_RENAME: ns_move(ns, op->path, op->path2); break;
    case CRASH_OP_LINK: ns_put(ns, op->path2, op->ino); break;
    case CRASH_OP_UNLINK:
    case CRASH_OP_RMDIR: ns_del(ns, op->path); break;
    default: break;
    }
}

static void model_apply(model_t *m, const crash_log_t *log, size_t i) {
    const crash_op_t *op = &log->ops[i];
    switch (op->kind) {
    case CRASH_OP_MKDIR: m->dir[op->ino] = true; /* fall through */
    case CRASH_OP_CREATE:
    case CRASH_OP_RENAME:
    case CRASH_OP_LINK:
    case CRASH_OP_UNLINK:
    case CRASH_OP_RMDIR:
        model_name_change(&m->names, op);
        m->pending[m->npending++] = i;
        break;
    case CRASH_OP_TRUNC: blob_set_len(&m->cur[op->ino], (size_t)op->len); break;
    case CRASH_OP_WRITE: {
        blob_t *b = &m->cur[op->ino];
        if (b->len < op->off + op->len) blob_set_len(b, (size_t)(op->off + op->len));
        copy_bytes(b->p + op->off, op->data, (size_t)op->len);
        break;
    }
    case CRASH_OP_FSYNC: blob_copy(&m->dur[op->ino], &m->cur[op->ino]); break;
    case CRASH_OP_DIRSYNC: {
        if (log->unordered) { /* only this directory's own changes */
            size_t keep = 0;
            for (size_t k = 0; k < m->npending; k++) {
                const crash_op_t *p = &log->ops[m->pending[k]];
                if (p->parent == op->ino || p->parent2 == op->ino)
                    model_name_change(&m->durable, p);
                else
                    m->pending[keep++] = m->pending[k];
            }
            m->npending = keep;
            break;
        }
        size_t last = SIZE_MAX;
        for (size_t k = 0; k < m->npending; k++) {
            const crash_op_t *p = &log->ops[m->pending[k]];
            if (p->parent == op->ino || p->parent2 == op->ino) last = k;
        }
        if (last == SIZE_MAX) break;
        for (size_t k = 0; k <= last; k++) model_name_change(&m->durable, &log->ops[m->pending[k]]);
        memmove(m->pending, m->pending + last + 1, (m->npending - last - 1) * sizeof(size_t));
        m->npending -= last + 1;
        break;
    }
    }
}

static void model_replay(model_t *m, const crash_log_t *log, size_t upto) {
    model_init(m, log);
    for (size_t i = 0; i < upto; i++) model_apply(m, log, i);
}

size_t crash_tear_points(const crash_log_t *log, const crash_state_t *st, int64_t *out,
                         size_t max) {
    if (st->prefix == 0 || max == 0) return 0;
    const crash_op_t *op = &log->ops[st->prefix - 1];
    uint64_t lo, hi;
    if (st->mode == CRASH_KEPT && op->kind == CRASH_OP_WRITE) {
        lo = op->off;
        hi = op->off + op->len;
    } else if (st->mode == CRASH_DROPPED && op->kind == CRASH_OP_FSYNC) {
        model_t m;
        model_replay(&m, log, st->prefix - 1);
        const blob_t *o = &m.dur[op->ino], *n = &m.cur[op->ino];
        size_t common = 0, shorter = o->len < n->len ? o->len : n->len;
        while (common < shorter && o->p[common] == n->p[common]) common++;
        lo = common;
        hi = o->len > n->len ? o->len : n->len;
        bool same = o->len == n->len && common == n->len;
        model_free(&m);
        if (same) return 0;
    } else {
        return 0;
    }
    /* every 512-byte boundary strictly inside [lo, hi), and lo itself */
    uint64_t first = lo / CRASH_SECTOR * CRASH_SECTOR;
    size_t total = 0;
    for (uint64_t b = first; b < hi; b += CRASH_SECTOR) total++;
    size_t n = 0;
    for (size_t k = 0; k < total && n < max; k++) {
        size_t pick = total <= max ? k : k * total / max;
        if (n > 0 && out[n - 1] == (int64_t)(first + pick * CRASH_SECTOR)) continue;
        out[n++] = (int64_t)(first + pick * CRASH_SECTOR);
    }
    return n;
}

static int write_file(const char *path, const uint8_t *p, size_t len) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, p + done, len - done);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    return close(fd);
}

static int cmp_depth(const void *a, const void *b) {
    const ns_entry_t *x = a, *y = b;
    size_t dx = 0, dy = 0;
    for (const char *p = x->path; *p; p++) dx += *p == '/';
    for (const char *p = y->path; *p; p++) dy += *p == '/';
    return dx < dy ? -1 : dx > dy;
}

int crash_model_build(const crash_log_t *log, const crash_state_t *st, const char *dir) {
    model_t m;
    model_replay(&m, log, st->prefix);
    blob_t torn = {0};
    int torn_ino = -1;
    if (st->torn_at >= 0 && st->prefix > 0) {
        const crash_op_t *op = &log->ops[st->prefix - 1];
        torn_ino = op->ino;
        if (st->mode == CRASH_KEPT) {
            /* the content before the write, with the write's head */
            model_t before;
            model_replay(&before, log, st->prefix - 1);
            blob_copy(&torn, &before.cur[op->ino]);
            model_free(&before);
            uint64_t cut = (uint64_t)st->torn_at < op->off ? op->off : (uint64_t)st->torn_at;
            uint64_t end = op->off + op->len;
            if (st->zero_fill) {
                if (torn.len < end) blob_set_len(&torn, (size_t)end);
                copy_bytes(torn.p + op->off, op->data, (size_t)(cut - op->off));
                if (end > cut) memset(torn.p + cut, 0, (size_t)(end - cut));
            } else {
                if (torn.len < cut) blob_set_len(&torn, (size_t)cut);
                copy_bytes(torn.p + op->off, op->data, (size_t)(cut - op->off));
            }
        } else {
            /* durable: the old synced content overwritten up to the tear */
            model_t before;
            model_replay(&before, log, st->prefix - 1);
            const blob_t *o = &before.dur[op->ino], *n = &m.cur[op->ino];
            /* new bytes up to the tear; beyond it the old synced bytes
             * where there were some, then nothing (or zeros up to the new
             * length: blocks allocated, data not written) */
            size_t cut = (size_t)st->torn_at < n->len ? (size_t)st->torn_at : n->len;
            size_t len = o->len > cut ? o->len : cut;
            if (st->zero_fill && n->len > len) len = n->len;
            blob_set_len(&torn, len); /* zero-extends */
            copy_bytes(torn.p, n->p, cut);
            if (o->len > cut) copy_bytes(torn.p + cut, o->p + cut, o->len - cut);
            model_free(&before);
        }
    }
    const ns_t *names = st->mode == CRASH_KEPT ? &m.names : &m.durable;
    ns_entry_t *order = malloc((names->n + 1) * sizeof(*order));
    if (names->n) {
        memcpy(order, names->e, names->n * sizeof(*order));
        qsort(order, names->n, sizeof(*order), cmp_depth);
    }
    int rc = mkdir(dir, 0755);
    size_t dl = strlen(dir);
    for (size_t i = 0; i < names->n && rc == 0; i++) {
        const ns_entry_t *e = &order[i];
        size_t n = dl + strlen(e->path) + 2;
        char *p = malloc(n);
        snprintf(p, n, "%s/%s", dir, e->path);
        /* an entry whose directory did not survive is unreachable */
        char *slash = strrchr(p, '/');
        *slash = '\0';
        struct stat sb;
        bool reachable = stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
        *slash = '/';
        if (reachable) {
            if (m.dir[e->ino]) {
                rc = mkdir(p, 0755);
            } else {
                const blob_t *b = e->ino == torn_ino ? &torn
                                  : st->mode == CRASH_KEPT ? &m.cur[e->ino]
                                                           : &m.dur[e->ino];
                rc = write_file(p, b->p, b->len);
            }
        }
        free(p);
    }
    free(order);
    free(torn.p);
    model_free(&m);
    return rc;
}
