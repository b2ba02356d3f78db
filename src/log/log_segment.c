/*
 * log_segment.c — segment files (log_segment.h). Reads go through pread on
 * batch boundaries found from the sparse index; the scan used by recovery
 * and lookups reads headers in 64 KiB chunks.
 */
#include "log_segment.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common_alloc.h"
#include "log_stats_file.h"
#include "common_crc32c.h"
#include "common_fs.h"
#include "common_log.h"
#include "common_time.h"
#include "common_vfs.h"

#define FL_SEGMENT_SCAN_CHUNK (64u * 1024)
#define FL_SEGMENT_BATCH_MAX (1u << 30)

static int fl_pread_full(int fd, uint8_t *buf, size_t len, uint64_t pos, size_t *got) {
    return fl_vfs_pread_full(fd, buf, len, (off_t)pos, got);
}

static void fl_index_add(fl_log_segment_t *s, int64_t offset, uint64_t position) {
    if (s->index_count == s->index_cap) {
        s->index_cap = s->index_cap ? s->index_cap * 2 : 64;
        s->index = fl_realloc(s->index, s->index_cap * sizeof(*s->index));
    }
    s->index[s->index_count++] = (fl_index_entry_t){offset, position};
}

static void fl_time_add(fl_log_segment_t *s, int64_t ts, int64_t offset) {
    if (s->time_count == s->time_cap) {
        s->time_cap = s->time_cap ? s->time_cap * 2 : 64;
        s->time_index = fl_realloc(s->time_index, s->time_cap * sizeof(*s->time_index));
    }
    s->time_index[s->time_count++] = (fl_time_entry_t){ts, offset};
}

/* Index bookkeeping for one batch appended at position. */
static void fl_segment_track(fl_log_segment_t *s, const fl_batch_view_t *b, uint64_t position) {
    if (s->index_count == 0 || s->bytes_since_index >= s->index_interval) {
        fl_index_add(s, b->base_offset, position);
        s->bytes_since_index = 0;
    }
    s->bytes_since_index += b->size;
    if (b->commit_timestamp > s->max_timestamp) {
        s->max_timestamp = b->commit_timestamp;
        fl_time_add(s, b->commit_timestamp, b->base_offset);
    }
    s->next_offset = fl_batch_next_offset(b);
}

/* Recovery trusts no batch whose CRC it has not checked. (The storage
 * fault tests build a mutant with FL_MUTATION_TRUST_TAIL, which skips the
 * check, to show that they notice.) */
static bool fl_segment_crc_ok(const fl_batch_view_t *b) {
#ifdef FL_MUTATION_TRUST_TAIL
    (void)b;
    return true;
#else
    fl_error_t ignored;
    return fl_batch_check_crc(b, &ignored) == 0;
#endif
}

static void fl_segment_add_damage(fl_log_segment_t *s, int64_t start, int64_t end,
                                  uint64_t position, uint64_t size) {
    s->damaged = fl_realloc(s->damaged, (s->damaged_count + 1) * sizeof(*s->damaged));
    s->damaged[s->damaged_count++] = (fl_damaged_range_t){start, end, position, size};
}

/* The bad batch buf (bsize bytes at pos) is damage at rest when its
 * header still names the offsets expected here and the next batch in the
 * file is whole, CRC-clean and starts right after them; *after is then
 * that next batch's base offset. A crash leaves no whole batch behind a
 * torn one, so this never mistakes a torn tail for damage. */
static bool fl_segment_damage_at_rest(fl_log_segment_t *s, const uint8_t *buf, size_t bsize,
                                      uint64_t pos, uint64_t file_size, int64_t *after) {
    fl_batch_peek_t pk;
    fl_error_t ignored;
    int64_t expect = s->size == 0 ? s->base_offset : s->next_offset;
    if (bsize < FL_BATCH_HEADER_V0 || fl_batch_peek_header(buf, bsize, &pk, &ignored) != 0 ||
        pk.base_offset != expect || pk.last_offset_delta < 0 || pos + bsize >= file_size)
        return false;
    int64_t next = (int64_t)((uint64_t)pk.base_offset + (uint64_t)pk.last_offset_delta + 1);
    uint8_t head[FL_BATCH_LOG_OVERHEAD];
    size_t got, nsize;
    uint64_t npos = pos + bsize;
    if (fl_pread_full(s->fd, head, sizeof(head), npos, &got) != 0 || got < sizeof(head) ||
        fl_batch_peek_size(head, got, FL_SEGMENT_BATCH_MAX, &nsize, &ignored) != 0 ||
        npos + nsize > file_size)
        return false;
    uint8_t *nb = fl_try_malloc(nsize);
    if (!nb) return false;
    fl_batch_view_t v;
    bool ok = fl_pread_full(s->fd, nb, nsize, npos, &got) == 0 && got == nsize &&
              fl_batch_parse(nb, nsize, &v, &ignored) == 0 && fl_segment_crc_ok(&v) &&
              v.base_offset == next;
    fl_free(nb);
    if (ok) {
        *after = next;
        FL_ERROR("segment %s: the batch at position %llu (offsets %lld..%lld) fails its CRC "
                 "check; those offsets are damaged and will not be served",
                 s->path, (unsigned long long)pos, (long long)expect, (long long)(next - 1));
    }
    return ok;
}

/* Scans the file from 0; returns the length of the valid prefix. */
static int fl_segment_scan(fl_log_segment_t *s, uint64_t file_size, fl_segment_batch_fn fn,
                           void *ctx, uint64_t *valid, fl_error_t *err) {
    uint8_t *chunk = fl_malloc(FL_SEGMENT_SCAN_CHUNK);
    uint8_t *big = NULL;
    uint64_t pos = 0;
    int rc = 0;
    while (pos < file_size) {
        uint8_t head[FL_BATCH_LOG_OVERHEAD];
        size_t got;
        if (fl_pread_full(s->fd, head, sizeof(head), pos, &got) != 0) {
            rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "read %s: %s", s->path,
                            strerror(errno));
            break;
        }
        size_t bsize;
        fl_error_t ignored;
        if (got < sizeof(head) ||
            fl_batch_peek_size(head, got, FL_SEGMENT_BATCH_MAX, &bsize, &ignored) != 0 ||
            pos + bsize > file_size)
            break; /* torn tail */
        uint8_t *buf = chunk;
        if (bsize > FL_SEGMENT_SCAN_CHUNK) {
            uint8_t *bigger = fl_try_realloc(big, bsize);
            if (!bigger) { /* not a torn tail: never cut valid data for this */
                rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION,
                                "no memory to scan a %zu-byte batch in %s", bsize, s->path);
                break;
            }
            big = bigger;
            buf = big;
        }
        if (fl_pread_full(s->fd, buf, bsize, pos, &got) != 0) {
            rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "read %s: %s", s->path,
                            strerror(errno));
            break;
        }
        if (got != bsize) break; /* torn tail */
        fl_batch_view_t b;
        if (fl_batch_parse(buf, bsize, &b, &ignored) != 0 || !fl_segment_crc_ok(&b)) {
            /* corrupt: a torn tail ends the valid prefix here, damage at
             * rest in the middle is stepped over */
            int64_t after;
            if (!fl_segment_damage_at_rest(s, buf, bsize, pos, file_size, &after)) break;
            fl_segment_add_damage(s, s->size == 0 ? s->base_offset : s->next_offset, after, pos,
                                  bsize);
            s->next_offset = after;
            pos += bsize;
            s->size = pos;
            continue;
        }
        /* offsets start at the segment's base and only grow */
        if (s->size == 0 ? b.base_offset != s->base_offset : b.base_offset < s->next_offset) break;
        fl_segment_track(s, &b, pos);
        if (fn) fn(&b, ctx);
        pos += bsize;
        s->size = pos;
    }
    fl_free(chunk);
    fl_free(big);
    *valid = pos;
    return rc;
}

int fl_log_segment_open(const char *dir, int64_t base_offset, uint64_t index_interval,
                        bool truncate_tail, fl_segment_batch_fn fn, void *ctx,
                        fl_log_segment_t **out, fl_error_t *err) {
    fl_log_segment_t *s = fl_calloc(1, sizeof(*s));
    s->base_offset = s->next_offset = base_offset;
    s->max_timestamp = -1;
    s->index_interval = index_interval ? index_interval : 4096;
    size_t n = strlen(dir) + 32;
    s->path = fl_malloc(n);
    snprintf(s->path, n, "%s/%020" PRId64 ".log", dir, base_offset);
    s->fd = fl_vfs_open(s->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (s->fd < 0) {
        int rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "open %s: %s", s->path,
                            strerror(errno));
        fl_log_segment_close(s);
        return rc;
    }
    struct stat st;
    fstat(s->fd, &st);
    uint64_t valid = 0;
    int rc = fl_segment_scan(s, (uint64_t)st.st_size, fn, ctx, &valid, err);
    if (!rc && valid < (uint64_t)st.st_size && truncate_tail) {
        if (fl_vfs_ftruncate(s->fd, (off_t)valid) != 0 || fl_vfs_fsync(s->fd) != 0)
            rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "truncate %s: %s", s->path,
                            strerror(errno));
    }
    if (rc) {
        fl_log_segment_close(s);
        return rc;
    }
    s->size = valid;
    s->synced_size = valid;
    *out = s;
    return 0;
}

int fl_log_segment_cut_tail(fl_log_segment_t *s, fl_error_t *err) {
    struct stat st;
    if (fstat(s->fd, &st) != 0)
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "stat %s: %s", s->path,
                          strerror(errno));
    if ((uint64_t)st.st_size <= s->size) return 0;
    if (fl_vfs_ftruncate(s->fd, (off_t)s->size) != 0 || fl_vfs_fsync(s->fd) != 0)
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "truncate %s: %s", s->path,
                          strerror(errno));
    return 0;
}

void fl_log_segment_close(fl_log_segment_t *s) {
    if (!s) return;
    fl_stats_file_close(s->stats);
    if (s->fd >= 0) fl_vfs_close(s->fd);
    fl_free(s->path);
    fl_free(s->index);
    fl_free(s->time_index);
    fl_free(s->damaged);
    fl_free(s);
}

int fl_log_segment_append(fl_log_segment_t *s, const uint8_t *data, size_t len,
                          const fl_batch_view_t *batches, size_t batch_count, fl_error_t *err) {
    if (fl_vfs_pwrite_full(s->fd, data, len, (off_t)s->size) != 0) {
        /* a failed write is not retried: cut back to the last whole batch */
        int e = errno;
        if (fl_vfs_ftruncate(s->fd, (off_t)s->size) != 0) { /* nothing more to do */
        }
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "write %s: %s", s->path,
                          strerror(e));
    }
    uint64_t pos = s->size;
    for (size_t i = 0; i < batch_count; i++) {
        fl_segment_track(s, &batches[i], pos);
        pos += batches[i].size;
    }
    s->size += len;
    return 0;
}

/* Largest index entry with offset <= target. */
static uint64_t fl_index_lookup(const fl_log_segment_t *s, int64_t target) {
    size_t lo = 0, hi = s->index_count;
    uint64_t pos = 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->index[mid].offset <= target) {
            pos = s->index[mid].position;
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return pos;
}

/* The header fields of the batch at pos (read from the file). */
static int fl_segment_peek(const fl_log_segment_t *s, uint64_t pos, fl_batch_peek_t *pk,
                           fl_error_t *err) {
    uint8_t head[FL_BATCH_HEADER_V0];
    size_t got;
    if (fl_pread_full(s->fd, head, sizeof(head), pos, &got) != 0 || got < sizeof(head))
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "read %s failed", s->path);
    fl_error_t pe;
    if (fl_batch_peek_header(head, sizeof(head), pk, &pe) != 0)
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "%s at position %llu: %s",
                          s->path, (unsigned long long)pos, pe.msg);
    return 0;
}

int fl_log_segment_find(const fl_log_segment_t *s, int64_t offset, uint64_t *position,
                        fl_error_t *err) {
    if (offset >= s->next_offset) return 1;
    uint64_t pos = fl_index_lookup(s, offset);
    while (pos < s->size) {
        fl_batch_peek_t pk;
        int rc = fl_segment_peek(s, pos, &pk, err);
        if (rc) return rc;
        int64_t base = pk.base_offset;
        int32_t length = pk.length;
        int32_t delta = pk.last_offset_delta;
        if (length < FL_BATCH_HEADER_V0 - FL_BATCH_LOG_OVERHEAD || delta < 0)
            return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION,
                              "%s is corrupt at position %llu", s->path, (unsigned long long)pos);
        if ((int64_t)((uint64_t)base + (uint64_t)delta) >= offset) {
            *position = pos;
            return 0;
        }
        pos += (uint64_t)length + FL_BATCH_LOG_OVERHEAD;
    }
    return 1;
}

/* The server log line for a read that met a damaged batch: a reader
 * retrying the same offset must not flood the log, so at most one line a
 * second for the whole process (the client's answer names the batch every
 * time). */
static void fl_segment_damage_log(const fl_log_segment_t *s, uint64_t pos, const char *what) {
    static _Atomic int64_t last_ms = INT64_MIN / 2;
    int64_t now = fl_time_mono_ms(), prev = atomic_load(&last_ms);
    if (now - prev < 1000 || !atomic_compare_exchange_strong(&last_ms, &prev, now)) return;
    FL_ERROR("segment %s: a read met the batch at position %llu: %s; it is not served",
             s->path, (unsigned long long)pos, what);
}

int fl_log_segment_read(const fl_log_segment_t *s, uint64_t position, size_t max_bytes,
                        int64_t end_offset, bool at_least_one, fl_buf_t *out, size_t *read_bytes,
                        fl_error_t *err) {
    /* Walk headers to find how many whole batches fit, then read them in
     * one pread. */
    uint64_t pos = position;
    size_t total = 0;
    bool cut = false;
    int64_t walk_expect = -1;
    while (pos < s->size) {
        fl_batch_peek_t pk;
        fl_error_t pe;
        int rc = fl_segment_peek(s, pos, &pk, &pe);
        int64_t base = pk.base_offset;
        int32_t length = pk.length;
        /* a header that cannot be right here (offsets and length are
         * outside the CRC): the batches before it are answered */
        bool sane = rc == 0 && length >= FL_BATCH_HEADER_V0 - FL_BATCH_LOG_OVERHEAD &&
                    pos + (uint64_t)length + FL_BATCH_LOG_OVERHEAD <= s->size &&
                    pk.last_offset_delta >= 0 && base >= s->base_offset &&
                    base < s->next_offset &&
                    (int64_t)((uint64_t)base + (uint64_t)pk.last_offset_delta) < s->next_offset &&
                    (walk_expect < 0 || base == walk_expect);
        if (!sane) {
            if (total > 0) {
                cut = true;
                break;
            }
            fl_segment_damage_log(s, pos, "its header cannot be right");
            return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION,
                              "%s is damaged at position %llu (a batch header that cannot be "
                              "right)", s->path, (unsigned long long)pos);
        }
        size_t bsize = (size_t)length + FL_BATCH_LOG_OVERHEAD;
        if (base >= end_offset) break;
        if (total + bsize > max_bytes && !(at_least_one && total == 0)) break;
        total += bsize;
        pos += bsize;
        walk_expect = (int64_t)((uint64_t)base + (uint64_t)pk.last_offset_delta + 1);
    }
    *read_bytes = total;
    if (total == 0) return 0;
    uint8_t *dst = fl_buf_try_reserve(out, total);
    if (!dst)
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "no memory for a %zu-byte read",
                          total);
    size_t got;
    if (fl_pread_full(s->fd, dst, total, position, &got) != 0 || got != total)
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "read %s failed", s->path);
    /* never serve a batch that changed on disk since it was written: the
     * walk above checked the offsets and lengths (outside the CRC), here
     * each batch's CRC must hold */
    size_t good = 0;
    while (good < total) {
        fl_batch_view_t b;
        size_t at = good;
        fl_error_t pe;
        if (fl_batch_parse_next(dst, total, &at, &b, &pe) == 0 && fl_segment_crc_ok(&b)) {
            good = at;
            continue;
        }
        if (good > 0) {
            cut = true;
            break;
        }
        fl_batch_peek_t pk;
        bool named = fl_batch_peek_header(dst, total, &pk, &pe) == 0;
        fl_segment_damage_log(s, position, "it fails its CRC check");
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION,
                          "the batch at offset %lld is damaged on disk (%s, position %llu "
                          "fails its CRC check)",
                          named ? (long long)pk.base_offset : -1LL, s->path,
                          (unsigned long long)position);
    }
    *read_bytes = good;
    out->len += good;
    return cut ? FL_LOG_SEGMENT_CUT : 0;
}

int64_t fl_log_segment_offset_for_time(const fl_log_segment_t *s, int64_t ts, fl_error_t *err) {
    (void)err;
    if (s->max_timestamp < ts) return -1;
    /* time entries are increasing in timestamp; the first entry >= ts */
    size_t lo = 0, hi = s->time_count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->time_index[mid].timestamp < ts) lo = mid + 1;
        else hi = mid;
    }
    return lo < s->time_count ? s->time_index[lo].offset : -1;
}

int fl_log_segment_sync(fl_log_segment_t *s, fl_error_t *err) {
    if (fl_vfs_fsync(s->fd) != 0)
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "fsync %s: %s", s->path,
                          strerror(errno));
    s->synced_size = s->size;
    return 0;
}

static char *fl_index_path(const char *dir, int64_t base_offset) {
    size_t n = strlen(dir) + 32;
    char *p = fl_malloc(n);
    snprintf(p, n, "%s/%020" PRId64 ".index", dir, base_offset);
    return p;
}

/* The index path of a segment from its .log path. */
/* The path of a file beside the segment: its ".log" replaced by ext. */
static char *fl_segment_sibling_path(const fl_log_segment_t *s, const char *ext) {
    size_t n = strlen(s->path), e = strlen(ext);
    char *p = fl_malloc(n - 4 + e + 1);
    memcpy(p, s->path, n - 4); /* drop ".log" */
    memcpy(p + n - 4, ext, e + 1);
    return p;
}

static char *fl_segment_index_path(const fl_log_segment_t *s) {
    return fl_segment_sibling_path(s, ".index");
}

static char *fl_segment_stats_path(const fl_log_segment_t *s) {
    return fl_segment_sibling_path(s, ".stats");
}

int fl_log_segment_put_stats(fl_log_segment_t *s, int64_t base_offset, uint32_t crc,
                             const uint8_t *stats, size_t len, fl_error_t *err) {
    if (!s->stats) {
        char *sp = fl_segment_stats_path(s);
        s->stats = fl_stats_file_open(sp, true);
        fl_free(sp);
        if (!s->stats) return fl_err_set(err, FLUSS_ERR__IO, "cannot open a statistics sidecar");
        s->stats_missing = false;
    }
    return fl_stats_file_put(s->stats, base_offset, crc, stats, len, err);
}

bool fl_log_segment_get_stats(fl_log_segment_t *s, int64_t base_offset, uint32_t crc,
                              fl_buf_t *out) {
    if (!s->stats && !s->stats_missing) {
        char *sp = fl_segment_stats_path(s);
        s->stats = fl_stats_file_open(sp, false);
        fl_free(sp);
        s->stats_missing = s->stats == NULL;
    }
    return s->stats && fl_stats_file_get(s->stats, base_offset, crc, out);
}

int fl_log_segment_delete(fl_log_segment_t *s, fl_error_t *err) {
    char *ip = fl_segment_index_path(s);
    fl_vfs_unlink(ip);
    fl_free(ip);
    ip = fl_segment_stats_path(s);
    fl_vfs_unlink(ip);
    fl_free(ip);
    if (fl_vfs_unlink(s->path) != 0 && errno != ENOENT)
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "unlink %s: %s", s->path,
                          strerror(errno));
    return 0;
}

#define FL_IX_MAGIC "FLIX"
#define FL_IX_HEADER 40
#define FL_IX_ENTRIES_MAX (1u << 24)

int fl_log_segment_write_index(const fl_log_segment_t *s, fl_error_t *err) {
    fl_buf_t b;
    fl_buf_init(&b);
    uint8_t *h = fl_buf_reserve(&b, FL_IX_HEADER);
    memcpy(h, FL_IX_MAGIC, 4);
    fl_put_le32(h + 4, 1);
    fl_put_le64(h + 8, s->size);
    fl_put_le64(h + 16, (uint64_t)s->next_offset);
    fl_put_le64(h + 24, (uint64_t)s->max_timestamp);
    fl_put_le32(h + 32, (uint32_t)s->index_count);
    fl_put_le32(h + 36, (uint32_t)s->time_count);
    b.len = FL_IX_HEADER;
    for (size_t i = 0; i < s->index_count; i++) {
        uint8_t *e = fl_buf_reserve(&b, 16);
        fl_put_le64(e, (uint64_t)s->index[i].offset);
        fl_put_le64(e + 8, s->index[i].position);
        b.len += 16;
    }
    for (size_t i = 0; i < s->time_count; i++) {
        uint8_t *e = fl_buf_reserve(&b, 16);
        fl_put_le64(e, (uint64_t)s->time_index[i].timestamp);
        fl_put_le64(e + 8, (uint64_t)s->time_index[i].offset);
        b.len += 16;
    }
    uint8_t crc[4];
    fl_put_le32(crc, fl_crc32c(0, b.data, b.len));
    fl_buf_append(&b, crc, 4);
    char *path = fl_segment_index_path(s);
    fl_error_t e;
    int rc = fl_fs_write_atomic(path, b.data, b.len, &e);
    fl_free(path);
    fl_buf_free(&b);
    if (rc) return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "segment index: %s", e.msg);
    return 0;
}

int fl_log_segment_open_indexed(const char *dir, int64_t base_offset, uint64_t index_interval,
                                fl_log_segment_t **out, fl_error_t *err) {
    char *ip = fl_index_path(dir, base_offset);
    fl_buf_t b;
    fl_buf_init(&b);
    int missing = 0;
    fl_error_t e;
    int rc = fl_fs_read_all(ip, FL_IX_HEADER + 32ull * FL_IX_ENTRIES_MAX, &b, &missing, &e);
    fl_free(ip);
    if (rc || b.len < FL_IX_HEADER + 4 || memcmp(b.data, FL_IX_MAGIC, 4) != 0 ||
        fl_get_le32(b.data + 4) != 1 ||
        (uint32_t)fl_get_le32(b.data + b.len - 4) != fl_crc32c(0, b.data, b.len - 4)) {
        fl_buf_free(&b);
        return 1;
    }
    uint64_t size = (uint64_t)fl_get_le64(b.data + 8);
    int64_t next = fl_get_le64(b.data + 16), max_ts = fl_get_le64(b.data + 24);
    uint32_t n = (uint32_t)fl_get_le32(b.data + 32), m = (uint32_t)fl_get_le32(b.data + 36);
    if (n > FL_IX_ENTRIES_MAX || m > FL_IX_ENTRIES_MAX ||
        b.len != FL_IX_HEADER + 16ull * (n + m) + 4 || next < base_offset) {
        fl_buf_free(&b);
        return 1;
    }
    /* open the segment file without scanning, and check its size */
    fl_log_segment_t *s = fl_calloc(1, sizeof(*s));
    s->base_offset = base_offset;
    s->index_interval = index_interval ? index_interval : 4096;
    size_t plen = strlen(dir) + 32;
    s->path = fl_malloc(plen);
    snprintf(s->path, plen, "%s/%020" PRId64 ".log", dir, base_offset);
    s->fd = fl_vfs_open(s->path, O_RDWR | O_CLOEXEC, 0);
    struct stat st;
    if (s->fd < 0 || fstat(s->fd, &st) != 0 || (uint64_t)st.st_size != size) {
        fl_log_segment_close(s);
        fl_buf_free(&b);
        return 1;
    }
    s->size = size;
    s->synced_size = size;
    s->next_offset = next;
    s->max_timestamp = max_ts;
    const uint8_t *p = b.data + FL_IX_HEADER;
    for (uint32_t i = 0; i < n; i++, p += 16) {
        int64_t off = fl_get_le64(p);
        uint64_t pos = (uint64_t)fl_get_le64(p + 8);
        if (pos >= size || off < base_offset || off >= next ||
            (s->index_count && (off <= s->index[s->index_count - 1].offset ||
                                pos <= s->index[s->index_count - 1].position)))
            goto bad;
        fl_index_add(s, off, pos);
    }
    for (uint32_t i = 0; i < m; i++, p += 16) {
        int64_t ts = fl_get_le64(p), off = fl_get_le64(p + 8);
        if (off < base_offset || off >= next ||
            (s->time_count && ts <= s->time_index[s->time_count - 1].timestamp))
            goto bad;
        fl_time_add(s, ts, off);
    }
    if (size > 0 && (s->index_count == 0 || s->index[0].position != 0)) goto bad;
    fl_buf_free(&b);
    *out = s;
    (void)err;
    return 0;
bad:
    fl_log_segment_close(s);
    fl_buf_free(&b);
    return 1;
}
