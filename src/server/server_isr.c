/*
 * server_isr.c — a tablet server's ISR round (server_tablet.h): every
 * bucket it leads with followers checks for followers that fell behind,
 * then the ISR changes its replicas proposed (a follower caught up, one
 * out of sync) go to the coordinator in one ADJUST_ISR, and its answers
 * are applied. Runs on a worker, one round at a time.
 */
#include <string.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"
#include "proto_api.h"
#include "replica_replication.h"
#include "server_call.h"
#include "server_tablet.h"

typedef struct fl_isr_item {
    fl_replica_t *r;
    fl_isr_proposal_t p;
} fl_isr_item_t;

static void fl_isr_send(fl_tablet_server_t *ts, fl_isr_item_t *items, size_t n) {
    Fluss__PbAdjustIsrReqForTable *tables = fl_calloc(n, sizeof(*tables));
    Fluss__PbAdjustIsrReqForTable **tptrs = fl_calloc(n, sizeof(*tptrs));
    Fluss__PbAdjustIsrReqForBucket *bs = fl_calloc(n, sizeof(*bs));
    Fluss__PbAdjustIsrReqForBucket ***tb = fl_calloc(n, sizeof(*tb));
    size_t nt = 0;
    for (size_t i = 0; i < n; i++) {
        fl_replica_t *r = items[i].r;
        fluss__pb_adjust_isr_req_for_bucket__init(&bs[i]);
        bs[i].has_partition_id = r->partition_id >= 0;
        bs[i].partition_id = r->partition_id;
        bs[i].bucket_id = r->bucket;
        bs[i].leader_epoch = items[i].p.leader_epoch;
        bs[i].bucket_epoch = items[i].p.bucket_epoch;
        bs[i].n_new_isr = items[i].p.count;
        bs[i].new_isr = items[i].p.isr;
        size_t t = 0;
        while (t < nt && tables[t].table_id != r->table_id) t++;
        if (t == nt) {
            fluss__pb_adjust_isr_req_for_table__init(&tables[t]);
            tables[t].table_id = r->table_id;
            tb[t] = fl_calloc(n, sizeof(**tb));
            tables[t].buckets_req = tb[t];
            tptrs[t] = &tables[t];
            nt++;
        }
        tb[t][tables[t].n_buckets_req++] = &bs[i];
    }
    Fluss__AdjustIsrRequest req = FLUSS__ADJUST_ISR_REQUEST__INIT;
    req.serverid = ts->self.id;
    req.n_tables_req = nt;
    req.tables_req = tptrs;
    ProtobufCMessage *m = NULL;
    fl_error_t err;
    int rc = fl_server_call(ts->coordinator, FL_API_ADJUST_ISR, &req.base,
                            &fluss__adjust_isr_response__descriptor, &m, &err);
    bool *answered = fl_calloc(n, sizeof(bool));
    if (!rc) {
        const Fluss__AdjustIsrResponse *resp = (const Fluss__AdjustIsrResponse *)m;
        for (size_t t = 0; t < resp->n_tables_resp; t++) {
            const Fluss__PbAdjustIsrRespForTable *rt = resp->tables_resp[t];
            for (size_t k = 0; k < rt->n_buckets_resp; k++) {
                const Fluss__PbAdjustIsrRespForBucket *b = rt->buckets_resp[k];
                int64_t pid = b->has_partition_id ? b->partition_id : -1;
                for (size_t i = 0; i < n; i++) {
                    fl_replica_t *r = items[i].r;
                    if (answered[i] || r->table_id != rt->table_id || r->partition_id != pid ||
                        r->bucket != b->bucket_id)
                        continue;
                    answered[i] = true;
                    if (b->has_error_code && b->error_code) {
                        FL_INFO("tablet server %d: bucket %d of table %lld: ISR change refused: "
                                "%d %s",
                                ts->self.id, r->bucket, (long long)r->table_id, b->error_code,
                                b->error_message ? b->error_message : "");
                        fl_replica_isr_answer(r, items[i].p.leader_epoch, NULL, 0, 0);
                    } else {
                        fl_replica_isr_answer(r, b->leader_epoch, b->isr, b->n_isr,
                                              b->bucket_epoch);
                    }
                }
            }
        }
        protobuf_c_message_free_unpacked(m, NULL);
    } else {
        FL_WARN("tablet server %d: ADJUST_ISR for %zu bucket(s): %s", ts->self.id, n, err.msg);
    }
    /* no answer: the proposal is dropped and made again while it holds */
    for (size_t i = 0; i < n; i++)
        if (!answered[i]) fl_replica_isr_answer(items[i].r, items[i].p.leader_epoch, NULL, 0, 0);
    fl_free(answered);
    for (size_t t = 0; t < nt; t++) fl_free(tb[t]);
    fl_free(tb);
    fl_free(bs);
    fl_free(tptrs);
    fl_free(tables);
}

void fl_tablet_isr_round(fl_tablet_server_t *ts) {
    size_t n;
    fl_replica_t **rs = fl_replica_manager_list(&ts->replicas, &n);
    int64_t now = fl_time_mono_ms();
    fl_isr_item_t *items = fl_calloc(n ? n : 1, sizeof(*items));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        fl_replica_isr_check(rs[i], now);
        if (fl_replica_isr_proposal(rs[i], &items[k].p)) items[k++].r = rs[i];
    }
    if (k && ts->coordinator) fl_isr_send(ts, items, k);
    else
        for (size_t i = 0; i < k; i++)
            fl_replica_isr_answer(items[i].r, items[i].p.leader_epoch, NULL, 0, 0);
    fl_free(items);
    for (size_t i = 0; i < n; i++) fl_replica_unref(rs[i]);
    fl_free(rs);
}
