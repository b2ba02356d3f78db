/*
 * log_stats_file.c — a segment's statistics sidecar (log_stats_file.h):
 * the records in memory as an open-addressing table by base offset, the
 * file appended with pwrite.
 */
#include "log_stats_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common_alloc.h"
#include "common_vfs.h"
#include "common_crc32c.h"
#include "record_batch.h"

#define FL_STATS_RECORD_HEAD 16
#define FL_STATS_RECORD_MAX (1u << 20)

typedef struct fl_stats_entry {
    int64_t base_offset; /* INT64_MIN = empty */
    uint32_t crc;
    uint8_t *stats;
    size_t len;
} fl_stats_entry_t;

struct fl_stats_file {
    int fd;
    uint64_t size;
    size_t cap, used;
    fl_stats_entry_t *slots;
};

static size_t fl_stats_hash(int64_t k, size_t cap) {
    return (size_t)(((uint64_t)k * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

static void fl_stats_insert(fl_stats_file_t *f, int64_t base, uint32_t crc, const uint8_t *p,
                            size_t len);

static void fl_stats_grow(fl_stats_file_t *f) {
    size_t old_cap = f->cap;
    fl_stats_entry_t *old = f->slots;
    f->cap = old_cap ? old_cap * 2 : 64;
    f->used = 0;
    f->slots = fl_malloc(f->cap * sizeof(*f->slots));
    for (size_t i = 0; i < f->cap; i++) f->slots[i].base_offset = INT64_MIN;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].base_offset == INT64_MIN) continue;
        size_t k = fl_stats_hash(old[i].base_offset, f->cap);
        while (f->slots[k].base_offset != INT64_MIN) k = (k + 1) & (f->cap - 1);
        f->slots[k] = old[i];
        f->used++;
    }
    fl_free(old);
}

/* The newest record for an offset wins (a rewrite after truncation). */
static void fl_stats_insert(fl_stats_file_t *f, int64_t base, uint32_t crc, const uint8_t *p,
                            size_t len) {
    if ((f->used + 1) * 4 > f->cap * 3) fl_stats_grow(f);
    size_t k = fl_stats_hash(base, f->cap);
    while (f->slots[k].base_offset != INT64_MIN && f->slots[k].base_offset != base)
        k = (k + 1) & (f->cap - 1);
    fl_stats_entry_t *e = &f->slots[k];
    if (e->base_offset == INT64_MIN) f->used++;
    else fl_free(e->stats);
    e->base_offset = base;
    e->crc = crc;
    e->len = len;
    e->stats = fl_malloc(len ? len : 1);
    memcpy(e->stats, p, len);
}

size_t fl_stats_file_parse(const uint8_t *p, size_t len, fl_stats_record_fn fn, void *ctx) {
    size_t pos = 0;
    while (len - pos >= FL_STATS_RECORD_HEAD + 4) {
        int32_t n = fl_get_le32(p + pos + 12);
        if (n < 0 || (uint32_t)n > FL_STATS_RECORD_MAX ||
            (size_t)n > len - pos - FL_STATS_RECORD_HEAD - 4)
            break;
        size_t body = FL_STATS_RECORD_HEAD + (size_t)n;
        if ((uint32_t)fl_get_le32(p + pos + body) != fl_crc32c(0, p + pos, body)) break;
        fn(fl_get_le64(p + pos), (uint32_t)fl_get_le32(p + pos + 8), p + pos + FL_STATS_RECORD_HEAD,
           (size_t)n, ctx);
        pos += body + 4;
    }
    return pos;
}

static void fl_stats_load_one(int64_t base, uint32_t crc, const uint8_t *stats, size_t len,
                              void *ctx) {
    fl_stats_insert(ctx, base, crc, stats, len);
}

fl_stats_file_t *fl_stats_file_open(const char *path, bool create) {
    int fd = fl_vfs_open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0644);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        fl_vfs_close(fd);
        return NULL;
    }
    fl_stats_file_t *f = fl_calloc(1, sizeof(*f));
    f->fd = fd;
    fl_stats_grow(f);
    if (st.st_size > 0) {
        uint8_t *buf = fl_malloc((size_t)st.st_size);
        size_t got = 0;
        if (fl_vfs_pread_full(fd, buf, (size_t)st.st_size, 0, &got) != 0) got = 0;
        size_t valid = got > 0 ? fl_stats_file_parse(buf, got, fl_stats_load_one, f) : 0;
        fl_free(buf);
        /* appends go after the valid records (a torn tail is overwritten) */
        f->size = valid;
        if (valid < (uint64_t)st.st_size && fl_vfs_ftruncate(fd, (off_t)valid) != 0) f->size = valid;
    }
    return f;
}

void fl_stats_file_close(fl_stats_file_t *f) {
    if (!f) return;
    for (size_t i = 0; i < f->cap; i++)
        if (f->slots[i].base_offset != INT64_MIN) fl_free(f->slots[i].stats);
    fl_free(f->slots);
    fl_vfs_close(f->fd);
    fl_free(f);
}

int fl_stats_file_put(fl_stats_file_t *f, int64_t base_offset, uint32_t crc, const uint8_t *stats,
                      size_t len, fl_error_t *err) {
    if (len > FL_STATS_RECORD_MAX) return 0;
    size_t body = FL_STATS_RECORD_HEAD + len;
    uint8_t *rec = fl_malloc(body + 4);
    fl_put_le64(rec, (uint64_t)base_offset);
    fl_put_le32(rec + 8, crc);
    fl_put_le32(rec + 12, (uint32_t)len);
    memcpy(rec + FL_STATS_RECORD_HEAD, stats, len);
    fl_put_le32(rec + body, fl_crc32c(0, rec, body));
    int w = fl_vfs_pwrite_full(f->fd, rec, body + 4, (off_t)f->size);
    int e = errno;
    fl_free(rec);
    if (w != 0) return fl_err_set(err, FLUSS_ERR__IO, "statistics sidecar write: %s", strerror(e));
    f->size += body + 4;
    fl_stats_insert(f, base_offset, crc, stats, len);
    return 0;
}

bool fl_stats_file_get(const fl_stats_file_t *f, int64_t base_offset, uint32_t crc, fl_buf_t *out) {
    for (size_t k = fl_stats_hash(base_offset, f->cap), n = 0; n < f->cap;
         k = (k + 1) & (f->cap - 1), n++) {
        const fl_stats_entry_t *e = &f->slots[k];
        if (e->base_offset == INT64_MIN) return false;
        if (e->base_offset == base_offset) {
            if (e->crc != crc) return false;
            fl_buf_append(out, e->stats, e->len);
            return true;
        }
    }
    return false;
}
