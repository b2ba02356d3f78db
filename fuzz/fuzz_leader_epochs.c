/*
 * fuzz_leader_epochs.c — fuzzes what a follower does with a leader's
 * LIST_LEADER_EPOCHS answer (server_fetcher.c): the protobuf decode of
 * ListLeaderEpochsResponse, each bucket read into entries the way the
 * fetcher reads it (fl_leader_epochs_entries), and the cut computed
 * against a few follower caches (fl_epoch_divergence).
 *
 * Invariants checked: entries a follower takes are strictly increasing
 * and non-negative; a cut is never past the follower's log end and, when
 * the follower holds no epoch, never past the leader's either; the same
 * question asked twice gets the same answer.
 */
#include <stdint.h>
#include <stdlib.h>

#include "common_alloc.h"
#include "fluss_api.pb-c.h"
#include "fuzz_common.h"
#include "replica_epoch.h"
#include "server_leader_epochs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const fl_epoch_entry_t MINE_A[] = {{0, 0}, {2, 50}};
static const fl_epoch_entry_t MINE_B[] = {{0, 0}, {1, 40}, {3, 60}, {7, 1000}};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Fluss__ListLeaderEpochsResponse *r =
        fluss__list_leader_epochs_response__unpack(NULL, size, data);
    if (!r) return 0;
    for (size_t k = 0; k < r->n_buckets_resp; k++) {
        const Fluss__PbListLeaderEpochsRespForBucket *b = r->buckets_resp[k];
        fl_epoch_entry_t *e;
        size_t n;
        if (fl_leader_epochs_entries(b, &e, &n)) {
            FUZZ_CHECK(e == NULL && n == 0);
            continue;
        }
        FUZZ_CHECK(n == b->n_epoch && b->log_end_offset >= 0);
        for (size_t i = 0; i < n; i++) {
            FUZZ_CHECK(e[i].epoch >= 0 && e[i].start_offset >= 0);
            if (i) {
                FUZZ_CHECK(e[i].epoch > e[i - 1].epoch);
                FUZZ_CHECK(e[i].start_offset > e[i - 1].start_offset);
            }
        }
        fl_epoch_cache_t leader = {e, n, n};
        fl_epoch_cache_t mines[3] = {{NULL, 0, 0},
                                     {(fl_epoch_entry_t *)MINE_A, 2, 2},
                                     {(fl_epoch_entry_t *)MINE_B, 4, 4}};
        const int64_t ends[3] = {0, 80, 2000};
        for (int m = 0; m < 3; m++) {
            int64_t cut = fl_epoch_divergence(&mines[m], ends[m], &leader, b->log_end_offset);
            FUZZ_CHECK(cut == fl_epoch_divergence(&mines[m], ends[m], &leader, b->log_end_offset));
            if (cut == FL_EPOCH_OFFSET_UNDEFINED) continue;
            FUZZ_CHECK(cut >= 0 && cut <= ends[m]);
            if (mines[m].count == 0) FUZZ_CHECK(cut <= b->log_end_offset);
        }
        fl_free(e);
    }
    fluss__list_leader_epochs_response__free_unpacked(r, NULL);
    return 0;
}
