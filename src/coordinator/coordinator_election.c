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

int fl_election_adjust_isr(const fl_ms_bucket_t *b, int32_t leader, int32_t leader_epoch,
                           int32_t bucket_epoch, const int32_t *isr, size_t count,
                           const int32_t *live, size_t live_count, fl_ms_bucket_t *out,
                           fl_error_t *err) {
    fl_election_start(b, out);
    if (b->leader != leader || b->leader_epoch != leader_epoch)
        return fl_err_set(err, FLUSS_ERR_FENCED_LEADER_EPOCH_EXCEPTION,
                          "Server %d in leader epoch %d is not the leader: the leader is %d in "
                          "epoch %d.",
                          leader, leader_epoch, b->leader, b->leader_epoch);
    if (b->bucket_epoch != bucket_epoch)
        return fl_err_set(err, FLUSS_ERR_INVALID_UPDATE_VERSION_EXCEPTION,
                          "The bucket epoch is %d, not %d.", b->bucket_epoch, bucket_epoch);
    if (count == 0 || count > FL_REPLICAS_MAX || !fl_has(isr, (int32_t)count, leader))
        return fl_err_set(err, FLUSS_ERR_INVALID_UPDATE_VERSION_EXCEPTION,
                          "An ISR of %zu replica(s) without the leader %d.", count, leader);
    for (size_t i = 0; i < count; i++) {
        if (!fl_has(b->replicas, b->replica_count, isr[i]) || fl_has(isr, (int32_t)i, isr[i]))
            return fl_err_set(err, FLUSS_ERR_INVALID_UPDATE_VERSION_EXCEPTION,
                              "Replica %d is not a replica of the bucket, or named twice.",
                              isr[i]);
        if (!fl_has(out->isr, out->isr_count, isr[i]) && !fl_live(live, live_count, isr[i]))
            return fl_err_set(err, FLUSS_ERR_INELIGIBLE_REPLICA_EXCEPTION,
                              "Replica %d cannot join the ISR: its server is not live.", isr[i]);
    }
    memcpy(out->isr, isr, count * sizeof(int32_t));
    out->isr_count = (int32_t)count;
    return 0;
}
