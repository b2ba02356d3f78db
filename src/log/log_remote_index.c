/*
 * log_remote_index.c — tiered segments' index files (log_remote_index.h).
 */
#include "log_remote_index.h"

static void fl_put_be64(uint8_t *p, uint64_t v) {
    fl_put_be32(p, (uint32_t)(v >> 32));
    fl_put_be32(p + 4, (uint32_t)v);
}

static uint64_t fl_get_be64(const uint8_t *p) {
    return (uint64_t)fl_get_be32(p) << 32 | fl_get_be32(p + 4);
}

void fl_remote_index_encode_offsets(const fl_log_segment_t *s, fl_buf_t *out) {
    for (size_t i = 0; i < s->index_count; i++) {
        int64_t rel = s->index[i].offset - s->base_offset;
        /* a relative offset or position past int32 cannot be written:
         * the entries before it still index the segment's start */
        if (rel < 0 || rel > INT32_MAX || s->index[i].position > INT32_MAX) break;
        uint8_t *e = fl_buf_reserve(out, FL_REMOTE_OFFSET_ENTRY);
        fl_put_be32(e, (uint32_t)rel);
        fl_put_be32(e + 4, (uint32_t)s->index[i].position);
        out->len += FL_REMOTE_OFFSET_ENTRY;
    }
}

void fl_remote_index_encode_times(const fl_log_segment_t *s, fl_buf_t *out) {
    for (size_t i = 0; i < s->time_count; i++) {
        int64_t rel = s->time_index[i].offset - s->base_offset;
        if (rel < 0 || rel > INT32_MAX) break;
        uint8_t *e = fl_buf_reserve(out, FL_REMOTE_TIME_ENTRY);
        fl_put_be64(e, (uint64_t)s->time_index[i].timestamp);
        fl_put_be32(e + 8, (uint32_t)rel);
        out->len += FL_REMOTE_TIME_ENTRY;
    }
}

/* Entry i of an index of entry_size-byte entries. 1: not readable whole. */
static int fl_index_entry(fl_remote_index_read_fn read, void *ctx, size_t entry_size, uint64_t i,
                          uint8_t *e, fl_error_t *err) {
    size_t got = 0;
    int rc = read(ctx, i * entry_size, entry_size, e, &got, err);
    if (rc) return rc;
    return got == entry_size ? 0 : 1;
}

int fl_remote_index_position(fl_remote_index_read_fn read, void *ctx, uint64_t file_bytes,
                             int64_t base, int64_t end, int64_t segment_bytes, int64_t target,
                             uint64_t *position, fl_error_t *err) {
    *position = 0;
    uint64_t n = file_bytes / FL_REMOTE_OFFSET_ENTRY;
    if (n == 0 || target <= base) return 0;
    /* Offsets are compared relative to base: a manifest may put base
     * anywhere below INT64_MAX, where base + an entry overflows. Both
     * target - base and end - base are in range (0 <= base < target, end). */
    /* the last entry whose offset <= target */
    uint64_t lo = 0, hi = n;
    uint8_t e[FL_REMOTE_OFFSET_ENTRY];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int rc = fl_index_entry(read, ctx, sizeof(e), mid, e, err);
        if (rc == 1) return 0;
        if (rc) return rc;
        int64_t rel = (int32_t)fl_get_be32(e);
        if (rel <= target - base) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return 0;
    int rc = fl_index_entry(read, ctx, sizeof(e), lo - 1, e, err);
    if (rc == 1) return 0;
    if (rc) return rc;
    int32_t rel = (int32_t)fl_get_be32(e), pos = (int32_t)fl_get_be32(e + 4);
    if (rel < 0 || rel >= end - base || rel > target - base || pos < 0 || pos >= segment_bytes)
        return 0;
    *position = (uint64_t)pos;
    return 0;
}

int fl_remote_index_offset_for_time(fl_remote_index_read_fn read, void *ctx, uint64_t file_bytes,
                                    int64_t base, int64_t end, int64_t ts, int64_t *offset,
                                    fl_error_t *err) {
    *offset = base;
    uint64_t n = file_bytes / FL_REMOTE_TIME_ENTRY;
    uint64_t lo = 0, hi = n;
    uint8_t e[FL_REMOTE_TIME_ENTRY];
    /* the first entry whose timestamp >= ts */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int rc = fl_index_entry(read, ctx, sizeof(e), mid, e, err);
        if (rc == 1) return 0;
        if (rc) return rc;
        if ((int64_t)fl_get_be64(e) < ts) lo = mid + 1;
        else hi = mid;
    }
    if (lo >= n) return 0;
    int rc = fl_index_entry(read, ctx, sizeof(e), lo, e, err);
    if (rc == 1) return 0;
    if (rc) return rc;
    int32_t rel = (int32_t)fl_get_be32(e + 8);
    if (rel >= 0 && rel < end - base) *offset = base + rel; /* end > base >= 0 */
    return 0;
}
