/*
 * common_tz.c — time zones from TZif files or fixed offsets (common_tz.h
 * has the file layout). The decoder checks every count against the bytes
 * present before it reads, and refuses rather than guesses. Thread rule:
 * none; a zone is immutable after it is made.
 */
#include "common_tz.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common_alloc.h"
#include "common_buf.h"
#include "common_fs.h"
#include "common_tz_rule.h"

#define FL_TZ_HEADER_BYTES 44
#define FL_TZ_TYPES_MAX 256 /* a type index is one byte */
#define FL_TZ_LEAPS_MAX 10000
#define FL_TZ_CHARS_MAX 65536

struct fl_tz {
    char name[FL_TZ_NAME_MAX];
    size_t count;      /* transitions */
    int64_t *times;    /* ascending, epoch seconds */
    int32_t *offsets;  /* offset from each transition on */
    int32_t initial;   /* offset before the first transition (time type 0) */
    bool has_rule;     /* the footer: after the last transition */
    fl_tz_rule_t rule;
};

typedef struct fl_tzif_header {
    uint8_t version;
    uint32_t isut, isstd, leap, time, type, chars;
} fl_tzif_header_t;

static fl_tz_t *fl_tz_alloc(const char *name) {
    fl_tz_t *tz = fl_calloc(1, sizeof(*tz));
    snprintf(tz->name, sizeof(tz->name), "%s", name ? name : "");
    return tz;
}

void fl_tz_free(fl_tz_t *tz) {
    if (!tz) return;
    fl_free(tz->times);
    fl_free(tz->offsets);
    fl_free(tz);
}

const char *fl_tz_name(const fl_tz_t *tz) { return tz->name; }

fl_tz_t *fl_tz_fixed(int32_t offset_s, const char *name) {
    fl_tz_t *tz = fl_tz_alloc(name);
    tz->initial = offset_s;
    return tz;
}

static int fl_tzif_header(const uint8_t *p, size_t avail, fl_tzif_header_t *h, fl_error_t *err) {
    if (avail < FL_TZ_HEADER_BYTES || memcmp(p, "TZif", 4) != 0)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "not a TZif file (no header)");
    h->version = p[4];
    if (h->version != 0 && (h->version < '2' || h->version > '4'))
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "TZif version 0x%02x unknown", h->version);
    h->isut = fl_get_be32(p + 20);
    h->isstd = fl_get_be32(p + 24);
    h->leap = fl_get_be32(p + 28);
    h->time = fl_get_be32(p + 32);
    h->type = fl_get_be32(p + 36);
    h->chars = fl_get_be32(p + 40);
    if (h->type < 1 || h->type > FL_TZ_TYPES_MAX || h->chars < 1 || h->chars > FL_TZ_CHARS_MAX ||
        h->time > FL_TZ_TRANSITIONS_MAX || h->leap > FL_TZ_LEAPS_MAX ||
        (h->isut != 0 && h->isut != h->type) || (h->isstd != 0 && h->isstd != h->type))
        return fl_err_set(err, FLUSS_ERR__CORRUPT,
                          "TZif counts out of range (time %u, type %u, chars %u, leap %u, "
                          "isstd %u, isut %u)",
                          h->time, h->type, h->chars, h->leap, h->isstd, h->isut);
    return 0;
}

/* Bytes of the data block after a header; counts are bounded above, so
 * this cannot overflow. */
static size_t fl_tzif_block_bytes(const fl_tzif_header_t *h, size_t time_size) {
    return (size_t)h->time * (time_size + 1) + (size_t)h->type * 6 + h->chars +
           (size_t)h->leap * (time_size + 4) + h->isstd + h->isut;
}

static int64_t fl_tzif_time(const uint8_t *p, size_t time_size) {
    if (time_size == 4) return (int32_t)fl_get_be32(p);
    return (int64_t)(((uint64_t)fl_get_be32(p) << 32) | fl_get_be32(p + 4));
}

/* Reads one data block (its size already checked) into tz. */
static int fl_tzif_block(const uint8_t *p, const fl_tzif_header_t *h, size_t time_size,
                         fl_tz_t *tz, fl_error_t *err) {
    const uint8_t *times = p, *idx = p + (size_t)h->time * time_size;
    const uint8_t *types = idx + h->time;
    int32_t offsets[FL_TZ_TYPES_MAX];
    for (uint32_t i = 0; i < h->type; i++) {
        const uint8_t *t = types + (size_t)i * 6;
        int32_t off = (int32_t)fl_get_be32(t);
        if (off < -FL_TZ_OFFSET_MAX_S || off > FL_TZ_OFFSET_MAX_S || t[4] > 1 || t[5] >= h->chars)
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "TZif time type %u invalid", i);
        offsets[i] = off;
    }
    tz->count = h->time;
    tz->times = fl_calloc(h->time ? h->time : 1, sizeof(int64_t));
    tz->offsets = fl_calloc(h->time ? h->time : 1, sizeof(int32_t));
    for (uint32_t i = 0; i < h->time; i++) {
        tz->times[i] = fl_tzif_time(times + (size_t)i * time_size, time_size);
        if (i > 0 && tz->times[i] <= tz->times[i - 1])
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "TZif transitions not ascending at %u", i);
        if (idx[i] >= h->type)
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "TZif transition %u has type %u of %u", i,
                              idx[i], h->type);
        tz->offsets[i] = offsets[idx[i]];
    }
    tz->initial = offsets[0];
    const uint8_t *flags = types + (size_t)h->type * 6 + h->chars +
                           (size_t)h->leap * (time_size + 4);
    for (uint32_t i = 0; i < h->isstd + h->isut; i++)
        if (flags[i] > 1) return fl_err_set(err, FLUSS_ERR__CORRUPT, "TZif indicator not 0/1");
    return 0;
}

/* The footer of a version 2+ file: '\n' rule '\n', ending the file. */
static int fl_tzif_footer(const uint8_t *p, size_t avail, fl_tz_t *tz, fl_error_t *err) {
    if (avail < 2 || p[0] != '\n' || p[avail - 1] != '\n')
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "TZif footer missing or not at the end");
    const char *text = (const char *)p + 1;
    size_t len = avail - 2;
    if (memchr(text, '\n', len))
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "TZif footer has more than one line");
    if (len == 0) return 0; /* no rule: the last transition holds forever */
    tz->has_rule = true;
    return fl_tz_rule_parse(text, len, &tz->rule, err);
}

int fl_tz_parse_tzif(const uint8_t *data, size_t len, const char *name, fl_tz_t **out,
                     fl_error_t *err) {
    *out = NULL;
    fl_tzif_header_t h;
    int rc = fl_tzif_header(data, len, &h, err);
    if (rc) return rc;
    size_t v1 = FL_TZ_HEADER_BYTES + fl_tzif_block_bytes(&h, 4);
    if (v1 > len) return fl_err_set(err, FLUSS_ERR__CORRUPT, "TZif data cut short");
    fl_tz_t *tz = fl_tz_alloc(name);
    if (h.version == 0) {
        /* version 1 only: 32-bit times, nothing may follow */
        rc = v1 == len ? fl_tzif_block(data + FL_TZ_HEADER_BYTES, &h, 4, tz, err)
                       : fl_err_set(err, FLUSS_ERR__CORRUPT, "bytes after a version 1 TZif");
    } else {
        fl_tzif_header_t h2;
        rc = fl_tzif_header(data + v1, len - v1, &h2, err);
        if (!rc && h2.version != h.version)
            rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "TZif headers disagree on the version");
        size_t v2 = FL_TZ_HEADER_BYTES + fl_tzif_block_bytes(&h2, 8);
        if (!rc && v2 > len - v1) rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "TZif data cut short");
        if (!rc) rc = fl_tzif_block(data + v1 + FL_TZ_HEADER_BYTES, &h2, 8, tz, err);
        if (!rc) rc = fl_tzif_footer(data + v1 + v2, len - v1 - v2, tz, err);
    }
    if (rc) {
        fl_tz_free(tz);
        return rc;
    }
    *out = tz;
    return 0;
}

static bool fl_tz_id_ok(const char *id) {
    size_t n = strlen(id);
    if (n == 0 || n >= FL_TZ_NAME_MAX || id[0] == '/' || id[n - 1] == '/') return false;
    for (const char *p = id; *p; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '/' || c == '_' || c == '+' || c == '-' || c == '.';
        if (!ok) return false;
        if (c == '/' && p[1] == '/') return false;
    }
    /* no "." or ".." component */
    for (const char *p = id; p && *p; p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL) {
        size_t len = strcspn(p, "/");
        if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) return false;
    }
    return true;
}

int fl_tz_load(const char *dir, const char *id, fl_tz_t **out, fl_error_t *err) {
    *out = NULL;
    if (!fl_tz_id_ok(id))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "'%.200s' is not a time zone id", id);
    char path[4096];
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, id) >= sizeof(path))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "time zone path too long");
    fl_buf_t buf;
    fl_buf_init(&buf);
    fl_error_t e;
    int rc = fl_fs_read_all(path, FL_TZ_FILE_BYTES_MAX, &buf, NULL, &e);
    if (rc) {
        fl_buf_free(&buf);
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "unknown time zone '%s' (%s)", id, e.msg);
    }
    rc = fl_tz_parse_tzif(buf.data, buf.len, id, out, err);
    fl_buf_free(&buf);
    return rc;
}

int32_t fl_tz_offset_at(const fl_tz_t *tz, int64_t utc_s) {
    if (tz->count == 0) return tz->has_rule ? fl_tz_rule_offset_at(&tz->rule, utc_s) : tz->initial;
    if (utc_s < tz->times[0]) return tz->initial;
    if (utc_s >= tz->times[tz->count - 1] && tz->has_rule)
        return fl_tz_rule_offset_at(&tz->rule, utc_s);
    size_t lo = 0, hi = tz->count; /* the last transition <= utc_s is in [lo, hi) */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (tz->times[mid] <= utc_s) lo = mid;
        else hi = mid;
    }
    return tz->offsets[lo];
}

int64_t fl_tz_local_to_utc(const fl_tz_t *tz, int64_t local_s, int32_t preferred_offset_s,
                           int32_t *offset_s) {
    /* Every instant that reads as local_s lies within the largest offset
     * of it; the offsets in force at both ends of that window, and at the
     * first guess in the middle, are the candidates. */
    const int64_t window = FL_TZ_OFFSET_MAX_S + 1;
    int32_t before = fl_tz_offset_at(tz, local_s - window);
    int32_t after = fl_tz_offset_at(tz, local_s + window);
    int32_t middle = fl_tz_offset_at(tz, local_s - fl_tz_offset_at(tz, local_s));
    int32_t cand[3] = {before, middle, after};
    bool found = false;
    int64_t best = 0;
    int32_t best_off = 0;
    for (int i = 0; i < 3; i++) {
        int64_t u = local_s - cand[i];
        if (fl_tz_offset_at(tz, u) != cand[i]) continue;
        if (cand[i] == preferred_offset_s) {
            *offset_s = cand[i];
            return u;
        }
        if (!found || u < best) {
            found = true;
            best = u;
            best_off = cand[i];
        }
    }
    if (found) {
        *offset_s = best_off;
        return best;
    }
    /* a gap: the reading moves forward by its length (after - before),
     * which puts it at local_s - before in UTC */
    *offset_s = fl_tz_offset_at(tz, local_s - before);
    return local_s - before;
}
