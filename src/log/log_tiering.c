/*
 * log_tiering.c — tiering decisions (log_tiering.h).
 */
#include "log_tiering.h"

size_t fl_tiering_to_copy(const fl_tier_segment_t *segs, size_t n, int64_t high_watermark,
                          int64_t remote_end, size_t *first) {
    size_t i = 0;
    /* what the remote log already holds (or what local data starts after,
     * when tiering began late: the remote log then starts later too) */
    while (i < n && segs[i].base_offset < remote_end) i++;
    *first = i;
    size_t count = 0;
    for (; i + 1 < n; i++) {
        const fl_tier_segment_t *s = &segs[i];
        if (s->next_offset > high_watermark || !s->durable || s->size == 0 ||
            s->size > FL_TIER_SEGMENT_BYTES_MAX || s->next_offset != segs[i + 1].base_offset)
            break;
        count++;
    }
    return count;
}

size_t fl_tiering_local_deletable(const fl_tier_segment_t *segs, size_t n, int64_t remote_end,
                                  int64_t retain_offset, size_t keep) {
    if (keep < 1) keep = 1; /* the active segment always stays */
    int64_t bound = remote_end < retain_offset ? remote_end : retain_offset;
    size_t k = 0;
    while (k + keep < n && segs[k].next_offset <= bound) k++;
    return k;
}

size_t fl_tiering_remote_expired(const fl_remote_manifest_t *m, int64_t now_ms, int64_t ttl_ms) {
    if (ttl_ms <= 0) return 0;
    size_t k = 0;
    /* in offset order, which is commit-time order: stop at the first kept */
    while (k < m->count && m->segments[k].max_timestamp >= 0 &&
           now_ms - m->segments[k].max_timestamp > ttl_ms)
        k++;
    return k;
}
