/*
 * server_fetcher.c — a follower's fetch threads (server_fetcher.h).
 */
#define _GNU_SOURCE
#include "server_fetcher.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"
#include "proto_api.h"
#include "replica_replication.h"
#include "server_call.h"
#include "server_leader_epochs.h"
#include "server_tablet.h"

#define FL_FETCHERS_MAX 64
#define FL_FOLLOWER_FETCH_WAIT_MS 500
#define FL_FOLLOWER_FETCH_BYTES (16 << 20)
#define FL_FOLLOWER_BUCKET_BYTES (4 << 20)

typedef struct fl_fetcher {
    fl_fetchers_t *owner;
    int32_t leader;
    pthread_t thread;
    bool started;
    bool stopping;            /* (owner->mu) */
    size_t count, cap;        /* (owner->mu) */
    fl_replica_t **replicas;  /* (owner->mu) referenced */
    fl_rpc_client_t *client;  /* the thread's */
    bool local;               /* client is an in-process connection */
    char host[FL_SERVER_HOST_MAX];
    int port;
} fl_fetcher_t;

struct fl_fetchers {
    fl_tablet_server_t *ts;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t count;
    fl_fetcher_t *fetchers[FL_FETCHERS_MAX];
    bool shut; /* fl_fetchers_shutdown: nothing is added any more */
};

static bool fl_same_bucket(const fl_replica_t *r, int64_t table_id, int64_t partition_id,
                           int32_t bucket) {
    return r->table_id == table_id && r->partition_id == partition_id && r->bucket == bucket;
}

/* (mu) the buckets this fetcher follows now, referenced. */
static fl_replica_t **fl_fetcher_snapshot(fl_fetcher_t *f, size_t *n) {
    fl_replica_t **v = fl_calloc(f->count ? f->count : 1, sizeof(*v));
    for (size_t i = 0; i < f->count; i++) {
        v[i] = f->replicas[i];
        fl_replica_ref(v[i]);
    }
    *n = f->count;
    return v;
}

/* Notes a bucket's answer from its leader (code 0: no error): the first
 * error of a kind goes to the log as a warning (a follower that cannot
 * fetch falls behind in silence otherwise), the end of one as news. */
static void fl_fetch_outcome(fl_fetcher_t *f, fl_replica_t *r, int32_t code, const char *what,
                             const char *msg) {
    int32_t was = atomic_exchange(&r->fetch_error, code);
    if (was == code) return;
    int32_t self = f->owner->ts->self.id;
    if (code == FLUSS_ERR_NOT_LEADER_OR_FOLLOWER) /* a leadership moving: news, not trouble */
        FL_INFO("tablet server %d: %s bucket %d of table %lld from leader %d: %d %s", self, what,
                r->bucket, (long long)r->table_id, f->leader, code, msg ? msg : "");
    else if (code)
        FL_WARN("tablet server %d: %s bucket %d of table %lld from leader %d: %d %s", self, what,
                r->bucket, (long long)r->table_id, f->leader, code, msg ? msg : "");
    else
        FL_INFO("tablet server %d: bucket %d of table %lld fetches from leader %d again", self,
                r->bucket, (long long)r->table_id, f->leader);
}

/* One LIST_LEADER_EPOCHS for the buckets that follow a new leader (or
 * epoch) and have not cut their logs against it yet; each answer cuts
 * one (replica_replication.h). A bucket whose leader does not know the
 * epoch yet is asked again next round. */
static int fl_epochs_round(fl_fetcher_t *f, fl_replica_t **rs, size_t n, fl_error_t *err) {
    fl_tablet_server_t *ts = f->owner->ts;
    Fluss__PbListLeaderEpochsReqForBucket *bs = fl_calloc(n, sizeof(*bs));
    Fluss__PbListLeaderEpochsReqForBucket **bp = fl_calloc(n, sizeof(*bp));
    int32_t *epochs = fl_calloc(n, sizeof(*epochs));
    for (size_t i = 0; i < n; i++) {
        fl_replica_truncation_pending(rs[i], &epochs[i]);
        fluss__pb_list_leader_epochs_req_for_bucket__init(&bs[i]);
        bs[i].table_id = rs[i]->table_id;
        bs[i].has_partition_id = rs[i]->partition_id >= 0;
        bs[i].partition_id = rs[i]->partition_id;
        bs[i].bucket_id = rs[i]->bucket;
        bs[i].leader_epoch = epochs[i];
        bp[i] = &bs[i];
    }
    Fluss__ListLeaderEpochsRequest req = FLUSS__LIST_LEADER_EPOCHS_REQUEST__INIT;
    req.follower_server_id = ts->self.id;
    req.n_buckets_req = n;
    req.buckets_req = bp;
    ProtobufCMessage *m = NULL;
    int rc = fl_server_call(f->client, FL_API_LIST_LEADER_EPOCHS, &req.base,
                            &fluss__list_leader_epochs_response__descriptor, &m, err);
    fl_free(bs);
    fl_free(bp);
    if (rc) {
        fl_free(epochs);
        return rc;
    }
    const Fluss__ListLeaderEpochsResponse *resp = (const Fluss__ListLeaderEpochsResponse *)m;
    for (size_t k = 0; k < resp->n_buckets_resp; k++) {
        const Fluss__PbListLeaderEpochsRespForBucket *b = resp->buckets_resp[k];
        int64_t pid = b->has_partition_id ? b->partition_id : -1;
        size_t i = 0;
        while (i < n && !fl_same_bucket(rs[i], b->table_id, pid, b->bucket_id)) i++;
        if (i == n) continue;
        fl_epoch_entry_t *entries;
        size_t ne;
        fl_error_t e;
        if (fl_leader_epochs_entries(b, &entries, &ne)) {
            /* asked again next round (a leader that has not heard of the
             * epoch yet answers NOT_LEADER_OR_FOLLOWER) */
            if (b->has_error_code && b->error_code)
                fl_fetch_outcome(f, rs[i], b->error_code, "asking the epochs of",
                                 b->error_message);
            else
                FL_WARN("tablet server %d: bucket %d of table %lld: leader %d's epochs are "
                        "not a leader-epoch cache; asked again",
                        ts->self.id, b->bucket_id, (long long)b->table_id, f->leader);
        } else if (fl_replica_follower_truncate(rs[i], f->leader, epochs[i], entries, ne,
                                              b->log_end_offset, &e))
            FL_WARN("tablet server %d: cutting bucket %d of table %lld: %s", ts->self.id,
                    b->bucket_id, (long long)b->table_id, e.msg);
        fl_free(entries);
    }
    protobuf_c_message_free_unpacked(m, NULL);
    fl_free(epochs);
    return 0;
}

/* The buckets of rs[0, n) still to cut first to the front; how many. */
static size_t fl_pending_first(fl_replica_t **rs, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (fl_replica_truncation_pending(rs[i], NULL)) {
            fl_replica_t *t = rs[k];
            rs[k++] = rs[i];
            rs[i] = t;
        }
    }
    return k;
}

/* One FETCH_LOG for every bucket, from each one's log end. */
static int fl_fetch_round(fl_fetcher_t *f, fl_replica_t **rs, size_t n, fl_error_t *err) {
    fl_tablet_server_t *ts = f->owner->ts;
    Fluss__FetchLogRequest req = FLUSS__FETCH_LOG_REQUEST__INIT;
    req.follower_server_id = ts->self.id;
    req.max_bytes = FL_FOLLOWER_FETCH_BYTES;
    req.has_max_wait_ms = 1;
    req.max_wait_ms = FL_FOLLOWER_FETCH_WAIT_MS;
    req.has_min_bytes = 1;
    req.min_bytes = 1;
    Fluss__PbFetchLogReqForTable *tables = fl_calloc(n, sizeof(*tables));
    Fluss__PbFetchLogReqForTable **tptrs = fl_calloc(n, sizeof(*tptrs));
    Fluss__PbFetchLogReqForBucket *buckets = fl_calloc(n, sizeof(*buckets));
    Fluss__PbFetchLogReqForBucket **bptrs = fl_calloc(n, sizeof(*bptrs));
    size_t nt = 0;
    for (size_t i = 0; i < n; i++) {
        fl_replica_t *r = rs[i];
        fluss__pb_fetch_log_req_for_bucket__init(&buckets[i]);
        buckets[i].has_partition_id = r->partition_id >= 0;
        buckets[i].partition_id = r->partition_id;
        buckets[i].bucket_id = r->bucket;
        buckets[i].fetch_offset = fl_replica_log_end(r);
        buckets[i].max_fetch_bytes = FL_FOLLOWER_BUCKET_BYTES;
        bptrs[i] = &buckets[i];
    }
    /* one entry per table, pointing at its buckets */
    Fluss__PbFetchLogReqForBucket ***tb = fl_calloc(n, sizeof(*tb));
    for (size_t i = 0; i < n; i++) {
        size_t t = 0;
        while (t < nt && tables[t].table_id != rs[i]->table_id) t++;
        if (t == nt) {
            fluss__pb_fetch_log_req_for_table__init(&tables[t]);
            tables[t].table_id = rs[i]->table_id;
            tb[t] = fl_calloc(n, sizeof(**tb));
            tptrs[t] = &tables[t];
            nt++;
        }
        tb[t][tables[t].n_buckets_req++] = bptrs[i];
    }
    for (size_t t = 0; t < nt; t++) tables[t].buckets_req = tb[t];
    req.n_tables_req = nt;
    req.tables_req = tptrs;
    ProtobufCMessage *resp = NULL;
    int rc = fl_server_call(f->client, FL_API_FETCH_LOG, &req.base,
                            &fluss__fetch_log_response__descriptor, &resp, err);
    for (size_t t = 0; t < nt; t++) fl_free(tb[t]);
    fl_free(tb);
    fl_free(tables);
    fl_free(tptrs);
    fl_free(buckets);
    fl_free(bptrs);
    if (rc) return rc;
    const Fluss__FetchLogResponse *fr = (const Fluss__FetchLogResponse *)resp;
    for (size_t t = 0; t < fr->n_tables_resp; t++) {
        const Fluss__PbFetchLogRespForTable *tr = fr->tables_resp[t];
        for (size_t k = 0; k < tr->n_buckets_resp; k++) {
            const Fluss__PbFetchLogRespForBucket *b = tr->buckets_resp[k];
            int64_t pid = b->has_partition_id ? b->partition_id : -1;
            fl_replica_t *r = NULL;
            for (size_t i = 0; i < n && !r; i++)
                if (fl_same_bucket(rs[i], tr->table_id, pid, b->bucket_id)) r = rs[i];
            if (!r) continue;
            if (b->has_error_code && b->error_code == FLUSS_ERR_LOG_OFFSET_OUT_OF_RANGE_EXCEPTION &&
                b->has_log_start_offset && b->log_start_offset > fl_replica_log_end(r)) {
                /* the leader's log now begins past this one's end (what
                 * lies between is in remote storage): start again there */
                fl_error_t e;
                if (fl_replica_follower_reset(r, f->leader, b->log_start_offset, &e))
                    fl_fetch_outcome(f, r, fl_server_wire_code(e.code), "starting again",
                                     e.msg);
                continue;
            }
            if (b->has_error_code && b->error_code) {
                fl_fetch_outcome(f, r, b->error_code, "fetching", b->error_message);
                continue;
            }
            fl_error_t e;
            if (fl_replica_follower_append(r, f->leader, b->has_records ? b->records.data : NULL,
                                           b->has_records ? b->records.len : 0,
                                           b->has_high_watermark ? b->high_watermark : 0, &e))
                fl_fetch_outcome(f, r, fl_server_wire_code(e.code), "appending", e.msg);
            else fl_fetch_outcome(f, r, 0, NULL, NULL);
        }
    }
    protobuf_c_message_free_unpacked(resp, NULL);
    return 0;
}

/* A round with the leader: the cuts still pending, then one FETCH_LOG
 * for the buckets that may fetch. */
static int fl_leader_round(fl_fetcher_t *f, fl_replica_t **rs, size_t n, fl_error_t *err) {
    size_t pending = fl_pending_first(rs, n);
    if (pending) {
        int rc = fl_epochs_round(f, rs, pending, err);
        if (rc) return rc;
        pending = fl_pending_first(rs, n);
    }
    if (pending == n) {
        usleep(50 * 1000); /* the leader does not know its epoch yet */
        return 0;
    }
    return fl_fetch_round(f, rs + pending, n - pending, err);
}

static void *fl_fetcher_main(void *arg) {
    fl_fetcher_t *f = arg;
    fl_fetchers_t *o = f->owner;
    fl_tablet_server_t *ts = o->ts;
    char name[16];
    snprintf(name, sizeof(name), "ts%d-fetch%d", ts->self.id, f->leader);
    pthread_setname_np(pthread_self(), name);
    for (;;) {
        pthread_mutex_lock(&o->mu);
        while (!f->stopping && f->count == 0) pthread_cond_wait(&o->cv, &o->mu);
        if (f->stopping) {
            pthread_mutex_unlock(&o->mu);
            break;
        }
        size_t n;
        fl_replica_t **rs = fl_fetcher_snapshot(f, &n);
        pthread_mutex_unlock(&o->mu);
        int rc = -1;
        fl_error_t err;
        if (!f->client && ts->peer_client) {
            /* local mode: the leader's internal side in this process */
            f->client = ts->peer_client(ts->peer_client_ctx, f->leader, ts->client_loop);
            f->local = f->client != NULL;
        }
        bool ready = f->local;
        char host[FL_SERVER_HOST_MAX];
        int port;
        /* a cluster: the leader's internal listener, as UPDATE_METADATA
         * last named it (not known yet: no round) */
        if (!f->local &&
            fl_tablet_catalog_peer(ts->catalog, f->leader, host, sizeof(host), &port) == 0) {
            if (!f->client) {
                f->client = fl_rpc_client_new(ts->client_loop, host, port, NULL);
                FL_INFO("tablet server %d: fetching from leader %d at %s:%d", ts->self.id,
                        f->leader, host, port);
            } else if (strcmp(host, f->host) != 0 || port != f->port) {
                fl_rpc_client_set_peer(f->client, host, port);
                FL_INFO("tablet server %d: fetching from leader %d at %s:%d now", ts->self.id,
                        f->leader, host, port);
            }
            snprintf(f->host, sizeof(f->host), "%s", host);
            f->port = port;
            ready = true;
        }
        if (ready) {
            rc = fl_leader_round(f, rs, n, &err);
            if (rc) FL_DEBUG("tablet server %d: fetch from %d: %s", ts->self.id, f->leader, err.msg);
        }
        for (size_t i = 0; i < n; i++) fl_replica_unref(rs[i]);
        fl_free(rs);
        if (rc) usleep(100 * 1000); /* the leader is unknown or unreachable: a moment */
    }
    return NULL;
}

fl_fetchers_t *fl_fetchers_new(fl_tablet_server_t *ts) {
    fl_fetchers_t *o = fl_calloc(1, sizeof(*o));
    o->ts = ts;
    pthread_mutex_init(&o->mu, NULL);
    pthread_cond_init(&o->cv, NULL);
    return o;
}

/* (mu) removes the bucket from every fetcher; its reference dropped. */
static void fl_fetchers_drop_locked(fl_fetchers_t *o, int64_t table_id, int64_t partition_id,
                                    int32_t bucket) {
    for (size_t k = 0; k < o->count; k++) {
        fl_fetcher_t *f = o->fetchers[k];
        for (size_t i = 0; i < f->count; i++)
            if (fl_same_bucket(f->replicas[i], table_id, partition_id, bucket)) {
                fl_replica_unref(f->replicas[i]);
                f->replicas[i] = f->replicas[--f->count];
                break;
            }
    }
}

void fl_fetchers_add(fl_fetchers_t *o, int32_t leader, fl_replica_t *r) {
    pthread_mutex_lock(&o->mu);
    if (o->shut) {
        pthread_mutex_unlock(&o->mu);
        return;
    }
    fl_fetchers_drop_locked(o, r->table_id, r->partition_id, r->bucket);
    fl_fetcher_t *f = NULL;
    for (size_t k = 0; k < o->count && !f; k++)
        if (o->fetchers[k]->leader == leader) f = o->fetchers[k];
    if (!f && o->count < FL_FETCHERS_MAX) {
        f = fl_calloc(1, sizeof(*f));
        f->owner = o;
        f->leader = leader;
        o->fetchers[o->count++] = f;
        f->started = pthread_create(&f->thread, NULL, fl_fetcher_main, f) == 0;
    }
    if (f) {
        if (f->count == f->cap) {
            f->cap = f->cap ? f->cap * 2 : 16;
            f->replicas = fl_realloc(f->replicas, f->cap * sizeof(*f->replicas));
        }
        fl_replica_ref(r);
        f->replicas[f->count++] = r;
        pthread_cond_broadcast(&o->cv);
    }
    pthread_mutex_unlock(&o->mu);
}

void fl_fetchers_remove(fl_fetchers_t *o, int64_t table_id, int64_t partition_id, int32_t bucket) {
    pthread_mutex_lock(&o->mu);
    fl_fetchers_drop_locked(o, table_id, partition_id, bucket);
    pthread_mutex_unlock(&o->mu);
}

void fl_fetchers_shutdown(fl_fetchers_t *o) {
    if (!o) return;
    pthread_mutex_lock(&o->mu);
    o->shut = true;
    for (size_t k = 0; k < o->count; k++) o->fetchers[k]->stopping = true;
    pthread_cond_broadcast(&o->cv);
    size_t n = o->count;
    fl_fetcher_t *all[FL_FETCHERS_MAX];
    memcpy(all, o->fetchers, n * sizeof(*all));
    o->count = 0;
    pthread_mutex_unlock(&o->mu);
    for (size_t k = 0; k < n; k++) {
        fl_fetcher_t *f = all[k];
        if (f->started) pthread_join(f->thread, NULL);
        fl_rpc_client_destroy(f->client);
        for (size_t i = 0; i < f->count; i++) fl_replica_unref(f->replicas[i]);
        fl_free(f->replicas);
        fl_free(f);
    }
}

void fl_fetchers_destroy(fl_fetchers_t *o) {
    if (!o) return;
    fl_fetchers_shutdown(o);
    pthread_mutex_destroy(&o->mu);
    pthread_cond_destroy(&o->cv);
    fl_free(o);
}
