/*
 * replica_epoch.c — the leader-epoch cache, its checkpoint file and the
 * follower truncation step (replica_epoch.h). The entries are a sorted
 * array: a bucket has a handful of epochs, appended at the end.
 */
#include "replica_epoch.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "common_buf.h"
#include "common_fs.h"
#include "fluss_errors.h"

#define FL_EPOCH_FILE "leader-epoch-checkpoint"
#define FL_EPOCH_FILE_MAX (64u << 20)

void fl_epoch_cache_init(fl_epoch_cache_t *c) { memset(c, 0, sizeof(*c)); }

void fl_epoch_cache_free(fl_epoch_cache_t *c) {
    fl_free(c->entries);
    memset(c, 0, sizeof(*c));
}

int32_t fl_epoch_cache_latest(const fl_epoch_cache_t *c) {
    return c->count ? c->entries[c->count - 1].epoch : FL_EPOCH_UNDEFINED;
}

static void fl_epoch_push(fl_epoch_cache_t *c, int32_t epoch, int64_t start) {
    if (c->count == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 4;
        c->entries = fl_realloc(c->entries, c->cap * sizeof(*c->entries));
    }
    c->entries[c->count++] = (fl_epoch_entry_t){epoch, start};
}

bool fl_epoch_cache_assign(fl_epoch_cache_t *c, int32_t epoch, int64_t start_offset) {
    if (epoch < 0 || start_offset < 0) return false;
    if (c->count) {
        const fl_epoch_entry_t *last = &c->entries[c->count - 1];
        if (epoch < last->epoch) return false;
        if (epoch == last->epoch && start_offset == last->start_offset) return false;
    }
    /* what conflicts with the new entry: a later or equal epoch, or a
     * start at or after its start */
    while (c->count && (c->entries[c->count - 1].epoch >= epoch ||
                        c->entries[c->count - 1].start_offset >= start_offset))
        c->count--;
    fl_epoch_push(c, epoch, start_offset);
    return true;
}

void fl_epoch_cache_end_offset(const fl_epoch_cache_t *c, int32_t epoch, int64_t log_end,
                               int32_t *out_epoch, int64_t *out_offset) {
    *out_epoch = FL_EPOCH_UNDEFINED;
    *out_offset = FL_EPOCH_OFFSET_UNDEFINED;
    if (c->count == 0 || epoch < 0 || epoch > c->entries[c->count - 1].epoch) return;
    if (epoch == c->entries[c->count - 1].epoch) {
        *out_epoch = epoch;
        *out_offset = log_end;
        return;
    }
    /* the first entry above the epoch asked, and the one before it */
    size_t hi = 0;
    while (hi < c->count && c->entries[hi].epoch <= epoch) hi++;
    *out_offset = c->entries[hi].start_offset;
    *out_epoch = hi == 0 ? epoch : c->entries[hi - 1].epoch;
}

void fl_epoch_cache_truncate_end(fl_epoch_cache_t *c, int64_t end_offset) {
    while (c->count && c->entries[c->count - 1].start_offset >= end_offset) c->count--;
}

void fl_epoch_cache_truncate_start(fl_epoch_cache_t *c, int64_t start_offset) {
    size_t keep = 0; /* the entry start_offset falls in */
    while (keep + 1 < c->count && c->entries[keep + 1].start_offset <= start_offset) keep++;
    if (c->count == 0 || c->entries[keep].start_offset > start_offset) return;
    memmove(c->entries, c->entries + keep, (c->count - keep) * sizeof(*c->entries));
    c->count -= keep;
    c->entries[0].start_offset = start_offset;
}

char *fl_epoch_cache_format(const fl_epoch_cache_t *c, size_t *len) {
    fl_buf_t b;
    fl_buf_init(&b);
    char line[64];
    int n = snprintf(line, sizeof(line), "0\n%zu\n", c->count);
    fl_buf_append(&b, line, (size_t)n);
    for (size_t i = 0; i < c->count; i++) {
        n = snprintf(line, sizeof(line), "%" PRId32 " %" PRId64 "\n", c->entries[i].epoch,
                     c->entries[i].start_offset);
        fl_buf_append(&b, line, (size_t)n);
    }
    fl_buf_put_u8(&b, '\0');
    *len = b.len - 1;
    return (char *)b.data;
}

/* A non-negative decimal of at most 19 digits ending at sep; *p moves past
 * sep. */
static bool fl_epoch_number(const char **p, const char *end, char sep, int64_t max, int64_t *out) {
    const char *s = *p;
    int64_t v = 0;
    size_t digits = 0;
    while (s < end && *s >= '0' && *s <= '9') {
        if (++digits > 19) return false;
        int d = *s++ - '0';
        if (v > (max - d) / 10) return false;
        v = v * 10 + d;
    }
    if (digits == 0 || s >= end || *s != sep) return false;
    *p = s + 1;
    *out = v;
    return true;
}

int fl_epoch_cache_parse(const char *text, size_t len, fl_epoch_cache_t *out, fl_error_t *err) {
    fl_epoch_cache_init(out);
    const char *p = text, *end = text + len;
    int64_t version, count;
    if (!fl_epoch_number(&p, end, '\n', INT32_MAX, &version) || version != 0)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "leader epoch checkpoint: not version 0");
    if (!fl_epoch_number(&p, end, '\n', FL_EPOCH_ENTRIES_MAX, &count))
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "leader epoch checkpoint: bad entry count");
    for (int64_t i = 0; i < count; i++) {
        int64_t epoch, start;
        if (!fl_epoch_number(&p, end, ' ', INT32_MAX, &epoch) ||
            !fl_epoch_number(&p, end, '\n', INT64_MAX, &start)) {
            fl_epoch_cache_free(out);
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "leader epoch checkpoint: bad entry %" PRId64,
                              i);
        }
        if (out->count && (epoch <= out->entries[out->count - 1].epoch ||
                           start <= out->entries[out->count - 1].start_offset)) {
            fl_epoch_cache_free(out);
            return fl_err_set(err, FLUSS_ERR__CORRUPT,
                              "leader epoch checkpoint: entry %" PRId64 " does not increase", i);
        }
        fl_epoch_push(out, (int32_t)epoch, start);
    }
    if (p != end) {
        fl_epoch_cache_free(out);
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "leader epoch checkpoint: bytes after the entries");
    }
    return 0;
}

static char *fl_epoch_path(const char *dir) {
    size_t n = strlen(dir) + sizeof("/" FL_EPOCH_FILE);
    char *path = fl_malloc(n);
    snprintf(path, n, "%s/" FL_EPOCH_FILE, dir);
    return path;
}

int fl_epoch_cache_load(const char *dir, fl_epoch_cache_t *out, fl_error_t *err) {
    fl_epoch_cache_init(out);
    char *path = fl_epoch_path(dir);
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t e;
    int missing = 0;
    int rc = fl_fs_read_all(path, FL_EPOCH_FILE_MAX, &b, &missing, &e);
    if (rc == 0)
        rc = fl_epoch_cache_parse((const char *)b.data, b.len, out, err);
    else if (missing)
        rc = 0; /* no checkpoint yet: no epoch */
    else
        rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "%s: %s", path, e.msg);
    fl_buf_free(&b);
    fl_free(path);
    return rc;
}

int fl_epoch_cache_store(const char *dir, const fl_epoch_cache_t *c, fl_error_t *err) {
    char *path = fl_epoch_path(dir);
    size_t len;
    char *text = fl_epoch_cache_format(c, &len);
    fl_error_t e;
    int rc = 0;
    if (fl_fs_write_atomic(path, text, len, &e))
        rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "leader epoch checkpoint: %s", e.msg);
    fl_free(text);
    fl_free(path);
    return rc;
}

void fl_epoch_truncation_step(const fl_epoch_cache_t *follower, int64_t follower_end,
                              int32_t leader_epoch, int64_t leader_end, int64_t *truncate_to,
                              int32_t *next_epoch, bool *done) {
    *truncate_to = FL_EPOCH_OFFSET_UNDEFINED;
    *next_epoch = FL_EPOCH_UNDEFINED;
    *done = false;
    if (leader_epoch < 0 || leader_end < 0) return; /* nothing known: ask again later */
    int32_t fe;
    int64_t fend;
    fl_epoch_cache_end_offset(follower, leader_epoch, follower_end, &fe, &fend);
    if (fe == FL_EPOCH_UNDEFINED) { /* no epoch here at all */
        *truncate_to = leader_end < follower_end ? leader_end : follower_end;
        *done = true;
        return;
    }
    if (fend > follower_end) fend = follower_end;
    if (fe != leader_epoch) {
        /* the leader never had leader_epoch's successors from this
         * replica: cut where this replica's own earlier epoch ended */
        *truncate_to = fend;
        *next_epoch = fe;
        return;
    }
    *truncate_to = leader_end < fend ? leader_end : fend;
    *done = true;
}

/* The follower's questions, one epoch at a time, answered from the
 * leader's cache: its latest epoch's end there, then, for an epoch the
 * leader never had, the epoch before it. */
int64_t fl_epoch_divergence(const fl_epoch_cache_t *mine, int64_t my_end,
                            const fl_epoch_cache_t *leader, int64_t leader_end) {
    int32_t asked = fl_epoch_cache_latest(mine);
    if (asked == FL_EPOCH_UNDEFINED) return leader_end < my_end ? leader_end : my_end;
    int64_t end = my_end;
    for (size_t round = 0; round <= mine->count; round++) {
        int32_t le, next;
        int64_t lend, to;
        bool done;
        fl_epoch_cache_end_offset(leader, asked, leader_end, &le, &lend);
        if (le == FL_EPOCH_UNDEFINED) return FL_EPOCH_OFFSET_UNDEFINED;
        fl_epoch_truncation_step(mine, end, le, lend, &to, &next, &done);
        if (to != FL_EPOCH_OFFSET_UNDEFINED && to < end) end = to;
        if (done) return end;
        if (next == FL_EPOCH_UNDEFINED || next >= asked) return FL_EPOCH_OFFSET_UNDEFINED;
        asked = next;
    }
    return FL_EPOCH_OFFSET_UNDEFINED;
}

bool fl_epoch_entries_valid(const fl_epoch_entry_t *e, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (e[i].epoch < 0 || e[i].start_offset < 0) return false;
        if (i && (e[i].epoch <= e[i - 1].epoch || e[i].start_offset <= e[i - 1].start_offset))
            return false;
    }
    return true;
}
