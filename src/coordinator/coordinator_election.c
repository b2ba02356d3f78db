/*
 * coordinator_election.c — leader election and ISR on tablet server
 * changes (coordinator_election.h).
 */
#include "coordinator_election.h"

#include <string.h>

static bool fl_has(const int32_t *v, int32_t n, int32_t id) {
    for (int32_t i = 0; i < n; i++)
        if (v[i] == id) return true;
    return false;
}

static bool fl_live(const int32_t *live, size_t n, int32_t id) {
    for (size_t i = 0; i < n; i++)
        if (live[i] == id) return true;
    return false;
}

/* out = b with its ISR written out (never the "every replica" shorthand). */
static void fl_election_start(const fl_ms_bucket_t *b, fl_ms_bucket_t *out) {
    *out = *b;
    int32_t n;
    const int32_t *isr = fl_ms_bucket_isr(b, &n);
    if (n > FL_REPLICAS_MAX) n = FL_REPLICAS_MAX;
    memmove(out->isr, isr, (size_t)n * sizeof(int32_t));
    out->isr_count = n;
}

bool fl_election_server_down(const fl_ms_bucket_t *b, int32_t gone, const int32_t *live,
                             size_t live_count, fl_ms_bucket_t *out) {
    fl_election_start(b, out);
    if (!fl_has(b->replicas, b->replica_count, gone)) return false;
    bool changed = false;
    if (out->isr_count > 1 && fl_has(out->isr, out->isr_count, gone)) {
        int32_t k = 0;
        for (int32_t i = 0; i < out->isr_count; i++)
            if (out->isr[i] != gone) out->isr[k++] = out->isr[i];
        out->isr_count = k;
        changed = true;
    }
    if (b->leader == gone) {
        out->leader = -1;
        for (int32_t i = 0; i < b->replica_count && out->leader < 0; i++) {
            int32_t r = b->replicas[i];
            if (r != gone && fl_has(out->isr, out->isr_count, r) && fl_live(live, live_count, r))
                out->leader = r;
        }
        out->leader_epoch = b->leader_epoch + 1;
        changed = true;
    }
    return changed;
}

bool fl_election_server_up(const fl_ms_bucket_t *b, int32_t up, fl_ms_bucket_t *out) {
    fl_election_start(b, out);
    if (b->leader >= 0 || !fl_has(out->isr, out->isr_count, up)) return false;
    out->leader = up;
    out->leader_epoch = b->leader_epoch + 1;
    return true;
}
