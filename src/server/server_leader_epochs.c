/*
 * server_leader_epochs.c — a leader's answer to LIST_LEADER_EPOCHS
 * (fluss-c's api key 1902, internal side only): for each bucket a
 * follower asks about, the leader-epoch entries and log end its
 * truncation by epoch needs (replica_replication.h,
 * fl_replica_follower_truncate). A bucket not led here, or asked about
 * in another leader epoch, gets its error and the others their answer.
 * And how a follower reads one bucket of that answer
 * (server_leader_epochs.h).
 */
#include <string.h>

#include "server_leader_epochs.h"

#include "common_alloc.h"
#include "replica_replication.h"
#include "server_node.h"
#include "server_tablet.h"

static void fl_epochs_bucket(fl_tablet_server_t *ts, const Fluss__PbListLeaderEpochsReqForBucket *br,
                             Fluss__PbListLeaderEpochsRespForBucket *b) {
    b->table_id = br->table_id;
    b->has_partition_id = br->has_partition_id;
    b->partition_id = br->partition_id;
    b->bucket_id = br->bucket_id;
    fl_error_t e;
    fl_err_clear(&e);
    fl_hosted_table_t *table = fl_tablet_catalog_table(ts->catalog, br->table_id);
    fl_replica_t *r = NULL;
    int rc = fl_tablet_server_replica(ts, br->table_id, table, br->has_partition_id,
                                      br->partition_id, br->bucket_id, &r, &e);
    fl_hosted_table_unref(table);
    fl_epoch_entry_t *entries = NULL;
    size_t n = 0;
    int64_t end = 0;
    if (!rc) rc = fl_replica_leader_epochs(r, br->leader_epoch, &entries, &n, &end, &e);
    if (r) fl_replica_unref(r);
    if (rc) {
        b->has_error_code = 1;
        b->error_code = fl_server_wire_code(rc);
        b->error_message = fl_strdup(e.msg);
        return;
    }
    b->has_log_end_offset = 1;
    b->log_end_offset = end;
    b->n_epoch = b->n_start_offset = n;
    b->epoch = fl_calloc(n ? n : 1, sizeof(*b->epoch));
    b->start_offset = fl_calloc(n ? n : 1, sizeof(*b->start_offset));
    for (size_t i = 0; i < n; i++) {
        b->epoch[i] = entries[i].epoch;
        b->start_offset[i] = entries[i].start_offset;
    }
    fl_free(entries);
}

FL_API_HANDLER(fl_api_list_leader_epochs) {
    (void)err;
    const Fluss__ListLeaderEpochsRequest *req = (const Fluss__ListLeaderEpochsRequest *)m;
    Fluss__ListLeaderEpochsResponse resp = FLUSS__LIST_LEADER_EPOCHS_RESPONSE__INIT;
    size_t n = req->n_buckets_req;
    Fluss__PbListLeaderEpochsRespForBucket *bs = fl_calloc(n ? n : 1, sizeof(*bs));
    Fluss__PbListLeaderEpochsRespForBucket **bp = fl_calloc(n ? n : 1, sizeof(*bp));
    for (size_t i = 0; i < n; i++) {
        fluss__pb_list_leader_epochs_resp_for_bucket__init(&bs[i]);
        fl_epochs_bucket(ctx->ts, req->buckets_req[i], &bs[i]);
        bp[i] = &bs[i];
    }
    resp.n_buckets_resp = n;
    resp.buckets_resp = bp;
    fl_server_reply(out, ctx->request_id, &resp.base);
    for (size_t i = 0; i < n; i++) {
        fl_free(bs[i].error_message);
        fl_free(bs[i].epoch);
        fl_free(bs[i].start_offset);
    }
    fl_free(bs);
    fl_free(bp);
    return 0;
}

int fl_leader_epochs_entries(const Fluss__PbListLeaderEpochsRespForBucket *b,
                             fl_epoch_entry_t **out, size_t *count) {
    *out = NULL;
    *count = 0;
    if ((b->has_error_code && b->error_code) || !b->has_log_end_offset ||
        b->log_end_offset < 0 || b->n_epoch != b->n_start_offset)
        return -1;
    fl_epoch_entry_t *e = fl_calloc(b->n_epoch ? b->n_epoch : 1, sizeof(*e));
    for (size_t i = 0; i < b->n_epoch; i++) e[i] = (fl_epoch_entry_t){b->epoch[i], b->start_offset[i]};
    if (!fl_epoch_entries_valid(e, b->n_epoch)) {
        fl_free(e);
        return -1;
    }
    *out = e;
    *count = b->n_epoch;
    return 0;
}
