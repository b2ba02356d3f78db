/*
 * server_push.c — the coordinator's messages to its tablet servers
 * (server_push.h): encoding from the store's tables, the queue, the sends
 * and the wait for their answers.
 */
#include "server_push.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"
#include "fluss_api.pb-c.h"
#include "proto_api.h"
#include "server_pb_metadata.h"

#define FL_PUSH_TABLETS_MAX 64
/* How long a flush waits for its answers. A tablet server that stopped
 * answering (paused, or on its way out) must not hold the coordinator:
 * the next event may be that server's own session expiring, whose
 * election has to go out at once. What is unanswered then is answered
 * (or fails) later on its own. */
#define FL_PUSH_WAIT_MS 1000

/* What was last sent of a table: where its buckets are. */
typedef struct fl_push_part {
    int64_t partition_id; /* -1: the table's own buckets */
    char *name;           /* partition name, NULL for -1 */
    int32_t bucket_count;
    fl_ms_bucket_t *buckets;
} fl_push_part_t;

typedef struct fl_push_assign {
    int64_t table_id;
    char *db, *name;
    size_t part_count;    /* [0] is the table's own buckets */
    fl_push_part_t *parts;
} fl_push_assign_t;

typedef struct fl_push_item {
    struct fl_push_item *next;
    fl_push_t *push;
    uint64_t seq;
    int32_t tablet;       /* its tablet server's id */
    int16_t api_key;
    uint8_t *body;
    size_t len;
    bool done;
    /* STOP_REPLICA, or the UPDATE_METADATA of a dropped table: final
     * (table and partition ids are never used again), so one that went
     * unanswered is kept and sent again as it was */
    bool final;
} fl_push_item_t;

typedef struct fl_push_tablet {
    fl_endpoint_t ep;
    char listeners[512];
    fl_rpc_client_t *client;
    bool behind;          /* (mu) a message to it went unanswered */
} fl_push_tablet_t;

struct fl_push {
    int32_t epoch;           /* the coordinator epoch every message carries */
    int32_t only;            /* (mu) while encoding: the one tablet server to tell, -1 all */
    bool update_final;       /* (mu) while encoding a dropped table's UPDATE_METADATA */
    pthread_mutex_t mu;      /* everything below but the clients' use */
    pthread_cond_t cv;
    pthread_mutex_t send_mu; /* one flusher sends at a time: the queue's order */
    fl_endpoint_t coordinator;
    const fl_lake_config_t *lake; /* may be NULL */
    size_t tablet_count;
    fl_push_tablet_t tablets[FL_PUSH_TABLETS_MAX];
    fl_push_item_t *queue_head, *queue_tail;     /* not sent yet */
    fl_push_item_t *flight_head, *flight_tail;   /* sent, in seq order */
    fl_push_item_t *redo;    /* final items that went unanswered, to send again */
    uint64_t next_seq;       /* seq of the next queued item (first is 1) */
    uint64_t done_seq;       /* every item up to it answered */
    size_t assign_count, assign_cap;
    fl_push_assign_t *assigns;
};

fl_push_t *fl_push_new(const fl_endpoint_t *coordinator, int32_t epoch,
                       const fl_lake_config_t *lake) {
    fl_push_t *p = fl_calloc(1, sizeof(*p));
    p->epoch = epoch;
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&p->send_mu, NULL);
    p->coordinator = *coordinator;
    p->next_seq = 1;
    p->only = -1;
    return p;
}

void fl_push_add_tablet(fl_push_t *p, const fl_endpoint_t *ep, const char *listeners,
                        fl_rpc_client_t *client) {
    fl_push_remove_tablet(p, ep->id); /* a server registered again: its new address */
    pthread_mutex_lock(&p->mu);
    if (p->tablet_count < FL_PUSH_TABLETS_MAX) {
        p->tablets[p->tablet_count].ep = *ep;
        p->tablets[p->tablet_count].behind = false;
        snprintf(p->tablets[p->tablet_count].listeners,
                 sizeof(p->tablets[p->tablet_count].listeners), "%s", listeners ? listeners : "");
        p->tablets[p->tablet_count++].client = client;
        client = NULL;
    }
    pthread_mutex_unlock(&p->mu);
    if (client) {
        FL_WARN("coordinator: more than %d tablet servers; %d is not served", FL_PUSH_TABLETS_MAX,
                ep->id);
        fl_rpc_client_destroy(client);
    }
}

/* (mu) The kept messages of tablet server id, taken off the redo list
 * in their order. */
static fl_push_item_t *fl_push_take_redo(fl_push_t *p, int32_t id) {
    fl_push_item_t *mine = NULL, **tail = &mine;
    for (fl_push_item_t **pp = &p->redo; *pp;) {
        fl_push_item_t *it = *pp;
        if (it->tablet != id) {
            pp = &it->next;
            continue;
        }
        *pp = it->next;
        it->next = NULL;
        *tail = it;
        tail = &it->next;
    }
    return mine;
}

void fl_push_remove_tablet(fl_push_t *p, int32_t id) {
    fl_rpc_client_t *gone = NULL;
    pthread_mutex_lock(&p->send_mu); /* no flusher holds the client now */
    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < p->tablet_count && !gone; i++)
        if (p->tablets[i].ep.id == id) {
            gone = p->tablets[i].client;
            p->tablets[i] = p->tablets[--p->tablet_count];
        }
    pthread_mutex_unlock(&p->mu);
    /* what was sent on it fails (its answers mark the items done) */
    if (gone) fl_rpc_client_destroy(gone);
    pthread_mutex_unlock(&p->send_mu);
    pthread_mutex_lock(&p->mu);
    for (fl_push_item_t *it = fl_push_take_redo(p, id), *next; it; it = next) {
        next = it->next;
        fl_free(it->body);
        fl_free(it);
    }
    pthread_mutex_unlock(&p->mu);
}

size_t fl_push_take_behind(fl_push_t *p, int32_t *ids, size_t cap) {
    size_t n = 0;
    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < p->tablet_count && n < cap; i++)
        if (p->tablets[i].behind) {
            p->tablets[i].behind = false;
            ids[n++] = p->tablets[i].ep.id;
        }
    pthread_mutex_unlock(&p->mu);
    return n;
}

size_t fl_push_tablets(fl_push_t *p, fl_endpoint_t *out, size_t cap) {
    pthread_mutex_lock(&p->mu);
    size_t n = p->tablet_count < cap ? p->tablet_count : cap;
    for (size_t i = 0; i < n; i++) out[i] = p->tablets[i].ep;
    pthread_mutex_unlock(&p->mu);
    return n;
}

/* ---- the queue (mu held) ---- */

static void fl_push_enqueue_item(fl_push_t *p, fl_push_item_t *it) {
    it->push = p;
    it->seq = p->next_seq++;
    it->next = NULL;
    it->done = false;
    if (p->queue_tail) p->queue_tail->next = it;
    else p->queue_head = it;
    p->queue_tail = it;
}

static fl_push_item_t *fl_push_enqueue(fl_push_t *p, int32_t tablet, int16_t key,
                                       const ProtobufCMessage *m) {
    fl_push_item_t *it = fl_calloc(1, sizeof(*it));
    it->tablet = tablet;
    it->api_key = key;
    it->len = protobuf_c_message_get_packed_size(m);
    it->body = fl_malloc(it->len ? it->len : 1);
    protobuf_c_message_pack(m, it->body);
    it->final = key == FL_API_STOP_REPLICA;
    fl_push_enqueue_item(p, it);
    return it;
}

static void fl_push_node(const fl_endpoint_t *e, Fluss__PbServerNode *n) {
    fluss__pb_server_node__init(n);
    n->node_id = e->id;
    n->host = (char *)e->host;
    n->port = e->port;
}

/* ---- the assignments last sent ---- */

static void fl_push_assign_free(fl_push_assign_t *a) {
    for (size_t i = 0; i < a->part_count; i++) {
        fl_free(a->parts[i].name);
        fl_free(a->parts[i].buckets);
    }
    fl_free(a->parts);
    fl_free(a->db);
    fl_free(a->name);
}

static fl_push_assign_t *fl_push_assign_find(fl_push_t *p, int64_t table_id) {
    for (size_t i = 0; i < p->assign_count; i++)
        if (p->assigns[i].table_id == table_id) return &p->assigns[i];
    return NULL;
}

static void fl_push_part_set(fl_push_part_t *d, int64_t pid, const char *name, int32_t n,
                             const fl_ms_bucket_t *b) {
    d->partition_id = pid;
    d->name = name ? fl_strdup(name) : NULL;
    d->bucket_count = n;
    d->buckets = fl_calloc(n > 0 ? (size_t)n : 1, sizeof(*b));
    if (n > 0) memcpy(d->buckets, b, (size_t)n * sizeof(*b));
}

static fl_push_assign_t fl_push_assign_of(const fl_ms_table_t *t) {
    fl_push_assign_t a = {.table_id = t->table_id};
    a.db = fl_strdup(t->database);
    a.name = fl_strdup(t->name);
    a.part_count = 1 + t->partition_count;
    a.parts = fl_calloc(a.part_count, sizeof(*a.parts));
    fl_push_part_set(&a.parts[0], -1, NULL, t->bucket_count, t->buckets);
    for (size_t i = 0; i < t->partition_count; i++) {
        const fl_ms_partition_t *mp = &t->partitions[i];
        fl_push_part_set(&a.parts[1 + i], mp->partition_id, mp->name, mp->bucket_count,
                         mp->buckets);
    }
    return a;
}

static bool fl_push_hosts(const fl_ms_bucket_t *b, int32_t id) {
    for (int32_t r = 0; r < b->replica_count; r++)
        if (b->replicas[r] == id) return true;
    return b->leader == id;
}

/* STOP_REPLICA (delete, deleteRemote) for the buckets of the given parts
 * of a, to each tablet server holding one of them. */
static void fl_push_stop(fl_push_t *p, const fl_push_assign_t *a, const fl_push_part_t *const *parts,
                         size_t nparts) {
    for (size_t ti = 0; ti < p->tablet_count; ti++) {
        int32_t id = p->tablets[ti].ep.id;
        if (p->only >= 0 && id != p->only) continue;
        size_t cap = 0;
        for (size_t k = 0; k < nparts; k++) cap += (size_t)parts[k]->bucket_count;
        Fluss__PbStopReplicaReqForBucket *reqs = fl_calloc(cap ? cap : 1, sizeof(*reqs));
        Fluss__PbStopReplicaReqForBucket **ptrs = fl_calloc(cap ? cap : 1, sizeof(*ptrs));
        Fluss__PbTableBucket *tbs = fl_calloc(cap ? cap : 1, sizeof(*tbs));
        size_t n = 0;
        for (size_t k = 0; k < nparts; k++) {
            const fl_push_part_t *pt = parts[k];
            for (int32_t b = 0; b < pt->bucket_count; b++) {
                if (!fl_push_hosts(&pt->buckets[b], id)) continue;
                fluss__pb_table_bucket__init(&tbs[n]);
                tbs[n].table_id = a->table_id;
                tbs[n].has_partition_id = pt->partition_id >= 0;
                tbs[n].partition_id = pt->partition_id;
                tbs[n].bucket_id = b;
                fluss__pb_stop_replica_req_for_bucket__init(&reqs[n]);
                reqs[n].table_bucket = &tbs[n];
                reqs[n].leader_epoch = pt->buckets[b].leader_epoch;
                reqs[n].delete_ = 1;
                reqs[n].has_deleteremote = 1;
                reqs[n].deleteremote = 1;
                ptrs[n] = &reqs[n];
                n++;
            }
        }
        if (n) {
            Fluss__StopReplicaRequest req = FLUSS__STOP_REPLICA_REQUEST__INIT;
            req.coordinator_epoch = p->epoch;
            req.n_stop_replicas_req = n;
            req.stop_replicas_req = ptrs;
            fl_push_enqueue(p, id, FL_API_STOP_REPLICA, &req.base);
        }
        fl_free(reqs);
        fl_free(ptrs);
        fl_free(tbs);
    }
}

/* UPDATE_METADATA with these table and partition entries, to every
 * tablet server (p->only >= 0: to that one). */
static void fl_push_update(fl_push_t *p, Fluss__PbTableMetadata *tm, Fluss__PbPartitionMetadata **pms,
                           size_t npm) {
    Fluss__PbServerNode coord, nodes[FL_PUSH_TABLETS_MAX], *node_ptrs[FL_PUSH_TABLETS_MAX];
    fl_push_node(&p->coordinator, &coord);
    for (size_t i = 0; i < p->tablet_count; i++) {
        fl_push_node(&p->tablets[i].ep, &nodes[i]);
        if (p->tablets[i].listeners[0]) nodes[i].listeners = p->tablets[i].listeners;
        node_ptrs[i] = &nodes[i];
    }
    Fluss__UpdateMetadataRequest req = FLUSS__UPDATE_METADATA_REQUEST__INIT;
    req.coordinator_server = &coord;
    req.n_tablet_servers = p->tablet_count;
    req.tablet_servers = node_ptrs;
    req.n_table_metadata = tm ? 1 : 0;
    req.table_metadata = tm ? &tm : NULL;
    req.n_partition_metadata = npm;
    req.partition_metadata = pms;
    req.has_coordinator_epoch = 1;
    req.coordinator_epoch = p->epoch;
    for (size_t i = 0; i < p->tablet_count; i++)
        if (p->only < 0 || p->tablets[i].ep.id == p->only)
            fl_push_enqueue(p, p->tablets[i].ep.id, FL_API_UPDATE_METADATA, &req.base)->final =
                p->update_final;
}

/* The same, its items final (a dropped table's). */
static void fl_push_update_final(fl_push_t *p, Fluss__PbTableMetadata *tm, bool final) {
    p->update_final = final;
    fl_push_update(p, tm, NULL, 0);
    p->update_final = false;
}

void fl_push_resend_to(fl_push_t *p, int32_t id) {
    pthread_mutex_lock(&p->mu);
    for (fl_push_item_t *it = fl_push_take_redo(p, id), *next; it; it = next) {
        next = it->next;
        fl_push_enqueue_item(p, it);
    }
    p->only = id;
    fl_push_update(p, NULL, NULL, 0);
    p->only = -1;
    pthread_mutex_unlock(&p->mu);
}

void fl_push_servers(fl_push_t *p) {
    pthread_mutex_lock(&p->mu);
    fl_push_update(p, NULL, NULL, 0);
    pthread_mutex_unlock(&p->mu);
}

void fl_push_set_coordinator(fl_push_t *p, const fl_endpoint_t *coordinator) {
    pthread_mutex_lock(&p->mu);
    p->coordinator = *coordinator;
    fl_push_update(p, NULL, NULL, 0);
    pthread_mutex_unlock(&p->mu);
}

/* NOTIFY_LEADER_AND_ISR for every bucket of t, to each tablet server
 * holding one (the ISR is the replica set: every replica is in sync when
 * the coordinator assigns it). */
static void fl_push_leaders(fl_push_t *p, const fl_ms_table_t *t) {
    size_t cap = (size_t)(t->bucket_count > 0 ? t->bucket_count : 0);
    for (size_t i = 0; i < t->partition_count; i++)
        cap += (size_t)(t->partitions[i].bucket_count > 0 ? t->partitions[i].bucket_count : 0);
    if (!cap) return;
    Fluss__PbNotifyLeaderAndIsrReqForBucket *reqs = fl_calloc(cap, sizeof(*reqs));
    Fluss__PbNotifyLeaderAndIsrReqForBucket **ptrs = fl_calloc(cap, sizeof(*ptrs));
    Fluss__PbTableBucket *tbs = fl_calloc(cap, sizeof(*tbs));
    Fluss__PbPhysicalTablePath *paths = fl_calloc(1 + t->partition_count, sizeof(*paths));
    for (size_t ti = 0; ti < p->tablet_count; ti++) {
        int32_t id = p->tablets[ti].ep.id;
        if (p->only >= 0 && id != p->only) continue;
        size_t n = 0;
        for (size_t k = 0; k <= t->partition_count; k++) {
            const fl_ms_partition_t *mp = k ? &t->partitions[k - 1] : NULL;
            int32_t nb = mp ? mp->bucket_count : t->bucket_count;
            const fl_ms_bucket_t *bs = mp ? mp->buckets : t->buckets;
            fluss__pb_physical_table_path__init(&paths[k]);
            paths[k].database_name = t->database;
            paths[k].table_name = t->name;
            paths[k].partition_name = mp ? mp->name : NULL;
            for (int32_t b = 0; b < nb; b++) {
                if (!fl_push_hosts(&bs[b], id)) continue;
                fluss__pb_table_bucket__init(&tbs[n]);
                tbs[n].table_id = t->table_id;
                tbs[n].has_partition_id = mp != NULL;
                tbs[n].partition_id = mp ? mp->partition_id : 0;
                tbs[n].bucket_id = b;
                fluss__pb_notify_leader_and_isr_req_for_bucket__init(&reqs[n]);
                reqs[n].physical_table_path = &paths[k];
                reqs[n].table_bucket = &tbs[n];
                reqs[n].leader = bs[b].leader;
                reqs[n].leader_epoch = bs[b].leader_epoch;
                reqs[n].n_replicas = (size_t)bs[b].replica_count;
                reqs[n].replicas = (int32_t *)bs[b].replicas;
                int32_t ni;
                reqs[n].isr = (int32_t *)fl_ms_bucket_isr(&bs[b], &ni);
                reqs[n].n_isr = (size_t)ni;
                reqs[n].bucket_epoch = bs[b].bucket_epoch;
                ptrs[n] = &reqs[n];
                n++;
            }
        }
        if (n) {
            Fluss__NotifyLeaderAndIsrRequest req = FLUSS__NOTIFY_LEADER_AND_ISR_REQUEST__INIT;
            req.coordinator_epoch = p->epoch;
            req.n_notify_buckets_leader_req = n;
            req.notify_buckets_leader_req = ptrs;
            fl_push_enqueue(p, id, FL_API_NOTIFY_LEADER_AND_ISR, &req.base);
        }
    }
    fl_free(reqs);
    fl_free(ptrs);
    fl_free(tbs);
    fl_free(paths);
}

void fl_push_table(fl_push_t *p, const fl_ms_table_t *t) { fl_push_table_to(p, t, -1); }

/* m to every follower of b the push knows (under p->mu). */
static void fl_push_to_followers(fl_push_t *p, const fl_ms_bucket_t *b, int16_t key,
                                 const ProtobufCMessage *m) {
    for (int32_t i = 0; i < b->replica_count; i++) {
        int32_t id = b->replicas[i];
        bool known = false;
        for (size_t k = 0; k < p->tablet_count && !known; k++) known = p->tablets[k].ep.id == id;
        if (id != b->leader && known) fl_push_enqueue(p, id, key, m);
    }
}

void fl_push_kv_snapshot_offset(fl_push_t *p, const fl_ms_bucket_t *b, int64_t table_id,
                                int64_t partition_id, int32_t bucket, int64_t offset) {
    Fluss__NotifyKvSnapshotOffsetRequest req = FLUSS__NOTIFY_KV_SNAPSHOT_OFFSET_REQUEST__INIT;
    req.table_id = table_id;
    req.has_partition_id = partition_id >= 0;
    req.partition_id = partition_id;
    req.bucket_id = bucket;
    req.min_retain_offset = offset;
    pthread_mutex_lock(&p->mu);
    req.coordinator_epoch = p->epoch;
    fl_push_to_followers(p, b, FL_API_NOTIFY_KV_SNAPSHOT_OFFSET, &req.base);
    pthread_mutex_unlock(&p->mu);
}

void fl_push_remote_log_offsets(fl_push_t *p, const fl_ms_bucket_t *b, int64_t table_id,
                                int64_t partition_id, int32_t bucket, int64_t start,
                                int64_t end) {
    Fluss__NotifyRemoteLogOffsetsRequest req = FLUSS__NOTIFY_REMOTE_LOG_OFFSETS_REQUEST__INIT;
    req.table_id = table_id;
    req.has_partition_id = partition_id >= 0;
    req.partition_id = partition_id;
    req.bucket_id = bucket;
    req.remote_start_offset = start;
    req.remote_end_offset = end;
    pthread_mutex_lock(&p->mu);
    req.coordinator_epoch = p->epoch;
    fl_push_to_followers(p, b, FL_API_NOTIFY_REMOTE_LOG_OFFSETS, &req.base);
    pthread_mutex_unlock(&p->mu);
}

void fl_push_table_to(fl_push_t *p, const fl_ms_table_t *t, int32_t only) {
    pthread_mutex_lock(&p->mu);
    p->only = only;
    fl_push_assign_t now = fl_push_assign_of(t);
    fl_push_assign_t *old = fl_push_assign_find(p, t->table_id);
    if (old) {
        /* partitions sent before and gone now */
        const fl_push_part_t **gone = fl_calloc(old->part_count, sizeof(*gone));
        size_t ng = 0;
        for (size_t i = 1; i < old->part_count; i++) {
            bool kept = false;
            for (size_t k = 1; k < now.part_count && !kept; k++)
                kept = now.parts[k].partition_id == old->parts[i].partition_id;
            if (!kept) gone[ng++] = &old->parts[i];
        }
        if (ng) fl_push_stop(p, old, gone, ng);
        fl_free(gone);
        fl_push_assign_free(old);
        *old = now;
    } else {
        if (p->assign_count == p->assign_cap) {
            p->assign_cap = p->assign_cap ? p->assign_cap * 2 : 16;
            p->assigns = fl_realloc(p->assigns, p->assign_cap * sizeof(*p->assigns));
        }
        p->assigns[p->assign_count++] = now;
    }

    Fluss__PbTablePath path;
    Fluss__PbTableMetadata tm;
    Fluss__PbBucketMetadata *blocks;
    fl_pb_table_metadata(t, &path, &tm, &blocks);
    char *shown = p->lake ? fl_lake_present_table_json(p->lake, t->table_json) : NULL;
    if (shown) {
        tm.table_json.data = (uint8_t *)shown;
        tm.table_json.len = strlen(shown);
    }
    size_t ns = t->schema_count;
    Fluss__PbFlusscSchema *schemas = fl_calloc(ns ? ns : 1, sizeof(*schemas));
    Fluss__PbFlusscSchema **schema_ptrs = fl_calloc(ns ? ns : 1, sizeof(*schema_ptrs));
    for (size_t i = 0; i < ns; i++) {
        fluss__pb_flussc_schema__init(&schemas[i]);
        schemas[i].schema_id = (int32_t)i + 1;
        schemas[i].schema_json.data = (uint8_t *)t->schema_jsons[i];
        schemas[i].schema_json.len = strlen(t->schema_jsons[i]);
        schema_ptrs[i] = &schemas[i];
    }
    tm.n_flussc_schemas = ns;
    tm.flussc_schemas = schema_ptrs;
    size_t np = t->partition_count;
    Fluss__PbPartitionMetadata *pms = fl_calloc(np ? np : 1, sizeof(*pms));
    Fluss__PbPartitionMetadata **pm_ptrs = fl_calloc(np ? np : 1, sizeof(*pm_ptrs));
    Fluss__PbBucketMetadata **pblocks = fl_calloc(np ? np : 1, sizeof(*pblocks));
    for (size_t i = 0; i < np; i++) {
        fl_pb_partition_metadata(t->table_id, &t->partitions[i], &pms[i], &pblocks[i]);
        pm_ptrs[i] = &pms[i];
    }
    fl_push_update(p, &tm, pm_ptrs, np);
    fl_push_leaders(p, t);
    p->only = -1;
    pthread_mutex_unlock(&p->mu);
    for (size_t i = 0; i < np; i++) {
        fl_free(pblocks[i]);
        fl_free(pms[i].bucket_metadata);
    }
    fl_free(pblocks);
    fl_free(pms);
    fl_free(pm_ptrs);
    fl_free(schemas);
    fl_free(schema_ptrs);
    fl_free(blocks);
    fl_free(tm.bucket_metadata);
    free(shown);
}

void fl_push_send(void *ctx, int16_t api_key, const uint8_t *body, size_t len, fl_rpc_reply_fn cb,
                  void *arg) {
    const fl_push_send_ctx_t *c = ctx;
    fl_push_t *p = c->push;
    pthread_mutex_lock(&p->mu);
    fl_push_tablet_t *t = NULL;
    for (size_t i = 0; i < p->tablet_count && !t; i++)
        if (p->tablets[i].ep.id == c->tablet_id) t = &p->tablets[i];
    /* sent under mu: a removal destroys the client after, failing it */
    if (t) fl_rpc_client_send(t->client, api_key, 0, body, len, cb, arg);
    pthread_mutex_unlock(&p->mu);
    if (!t) cb(arg, &(fl_rpc_reply_t){.status = FLUSS_ERR__TRANSPORT});
}

void fl_push_message(fl_push_t *p, int16_t api_key, const ProtobufCMessage *m, int32_t tablet_id) {
    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < p->tablet_count; i++)
        if (tablet_id < 0 || p->tablets[i].ep.id == tablet_id)
            fl_push_enqueue(p, p->tablets[i].ep.id, api_key, m);
    pthread_mutex_unlock(&p->mu);
}

void fl_push_table_dropped(fl_push_t *p, const char *db, const char *name, int64_t table_id) {
    pthread_mutex_lock(&p->mu);
    fl_push_assign_t *a = fl_push_assign_find(p, table_id);
    if (a) {
        const fl_push_part_t **all = fl_calloc(a->part_count, sizeof(*all));
        for (size_t i = 0; i < a->part_count; i++) all[i] = &a->parts[i];
        fl_push_stop(p, a, all, a->part_count);
        fl_free(all);
        fl_push_assign_free(a);
        *a = p->assigns[--p->assign_count];
    }
    Fluss__PbTablePath path = FLUSS__PB_TABLE_PATH__INIT;
    path.database_name = (char *)db;
    path.table_name = (char *)name;
    Fluss__PbTableMetadata tm = FLUSS__PB_TABLE_METADATA__INIT;
    tm.table_path = &path;
    tm.table_id = -2; /* 0.9.1's DELETED_TABLE_ID */
    tm.table_json.data = (uint8_t *)"{}";
    tm.table_json.len = 2;
    fl_push_update_final(p, &tm, true);
    pthread_mutex_unlock(&p->mu);
}

/* ---- sends and answers ---- */

/* A NOTIFY_LEADER_AND_ISR answer's refusals, bucket by bucket, for the
 * log: a replica that did not take its leadership is not fetched or led
 * until the bucket's next change. */
static void fl_push_bucket_errors(int32_t tablet, const fl_rpc_reply_t *r) {
    Fluss__NotifyLeaderAndIsrResponse *nr =
        fluss__notify_leader_and_isr_response__unpack(NULL, r->body_len, r->body);
    if (!nr) return;
    for (size_t i = 0; i < nr->n_notify_buckets_leader_resp; i++) {
        const Fluss__PbNotifyLeaderAndIsrRespForBucket *b = nr->notify_buckets_leader_resp[i];
        if (!b->has_error_code || !b->error_code || !b->table_bucket) continue;
        FL_WARN("coordinator: tablet server %d refused its part of bucket %d of table %lld: "
                "%d %s",
                tablet, b->table_bucket->bucket_id, (long long)b->table_bucket->table_id,
                b->error_code, b->error_message ? b->error_message : "");
    }
    fluss__notify_leader_and_isr_response__free_unpacked(nr, NULL);
}

/* An answer's error, for the log: the whole request's or NULL. */
static void fl_push_on_reply(void *arg, const fl_rpc_reply_t *r) {
    fl_push_item_t *it = arg;
    fl_push_t *p = it->push;
    const fl_api_info_t *info = fl_api_info(it->api_key);
    if (r->status)
        FL_WARN("coordinator: %s to tablet server %d failed: %s", info ? info->name : "?",
                it->tablet, fl_err_name(r->status));
    else if (r->type != FL_RESPONSE_SUCCESS) {
        Fluss__ErrorResponse *er = fluss__error_response__unpack(NULL, r->body_len, r->body);
        FL_WARN("coordinator: tablet server %d refused %s: %d %s", it->tablet,
                info ? info->name : "?", er ? er->error_code : -1,
                er && er->error_message ? er->error_message : "");
        if (er) fluss__error_response__free_unpacked(er, NULL);
    } else if (it->api_key == FL_API_NOTIFY_LEADER_AND_ISR) {
        fl_push_bucket_errors(it->tablet, r);
    }
    pthread_mutex_lock(&p->mu);
    /* unanswered (the connection failed, or the answer did not come in
     * time): the server may have missed it, and only the next change of
     * the same table would tell it again. A refusal is an answer. */
    bool registered = false;
    for (size_t i = 0; r->status && i < p->tablet_count; i++)
        if (p->tablets[i].ep.id == it->tablet) p->tablets[i].behind = registered = true;
    if (registered && it->final) {
        fl_push_item_t *again = fl_calloc(1, sizeof(*again));
        again->tablet = it->tablet;
        again->api_key = it->api_key;
        again->final = true;
        again->len = it->len;
        again->body = fl_malloc(it->len ? it->len : 1);
        memcpy(again->body, it->body, it->len);
        fl_push_item_t **end = &p->redo;
        while (*end) end = &(*end)->next;
        *end = again; /* in the order they were sent */
    }
    it->done = true;
    while (p->flight_head && p->flight_head->done) {
        fl_push_item_t *h = p->flight_head;
        p->flight_head = h->next;
        if (!p->flight_head) p->flight_tail = NULL;
        p->done_seq = h->seq;
        fl_free(h->body);
        fl_free(h);
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void fl_push_flush(fl_push_t *p) {
    pthread_mutex_lock(&p->send_mu);
    pthread_mutex_lock(&p->mu);
    uint64_t upto = p->next_seq - 1;
    fl_push_item_t *batch = p->queue_head;
    p->queue_head = p->queue_tail = NULL;
    /* into the flight list first: an answer may come before the next send */
    for (fl_push_item_t *it = batch; it;) {
        fl_push_item_t *next = it->next;
        it->next = NULL;
        if (p->flight_tail) p->flight_tail->next = it;
        else p->flight_head = it;
        p->flight_tail = it;
        it = next;
    }
    fl_push_item_t **send = NULL;
    size_t ns = 0;
    for (fl_push_item_t *it = batch; it && it->seq <= upto; it = it->next) ns++;
    send = fl_calloc(ns ? ns : 1, sizeof(*send));
    size_t k = 0;
    for (fl_push_item_t *it = batch; k < ns; it = it->next) send[k++] = it;
    /* each item's client, found before the send (an answer frees the
     * item); a tablet server removed meanwhile has none */
    fl_rpc_client_t **client = fl_calloc(ns ? ns : 1, sizeof(*client));
    for (size_t i = 0; i < ns; i++)
        for (size_t t = 0; t < p->tablet_count && !client[i]; t++)
            if (p->tablets[t].ep.id == send[i]->tablet) client[i] = p->tablets[t].client;
    pthread_mutex_unlock(&p->mu);
    static const fl_rpc_reply_t gone = {.status = FLUSS_ERR__TRANSPORT};
    for (size_t i = 0; i < ns; i++) {
        if (client[i])
            fl_rpc_client_send(client[i], send[i]->api_key, 0, send[i]->body, send[i]->len,
                               fl_push_on_reply, send[i]);
        else fl_push_on_reply(send[i], &gone);
    }
    fl_free(client);
    fl_free(send);
    pthread_mutex_unlock(&p->send_mu);
    struct timespec until = fl_time_mono_deadline(FL_PUSH_WAIT_MS);
    pthread_mutex_lock(&p->mu);
    int w = 0;
    while (p->done_seq < upto && w != ETIMEDOUT) w = pthread_cond_timedwait(&p->cv, &p->mu, &until);
    if (p->done_seq < upto)
        FL_WARN("coordinator: not every message to the tablet servers answered within %d ms; "
                "going on",
                FL_PUSH_WAIT_MS);
    pthread_mutex_unlock(&p->mu);
}

void fl_push_destroy(fl_push_t *p) {
    if (!p) return;
    for (size_t i = 0; i < p->tablet_count; i++) fl_rpc_client_destroy(p->tablets[i].client);
    for (fl_push_item_t *it = p->queue_head; it;) {
        fl_push_item_t *n = it->next;
        fl_free(it->body);
        fl_free(it);
        it = n;
    }
    for (fl_push_item_t *it = p->flight_head; it;) { /* none once the clients are gone */
        fl_push_item_t *n = it->next;
        fl_free(it->body);
        fl_free(it);
        it = n;
    }
    for (fl_push_item_t *it = p->redo; it;) {
        fl_push_item_t *n = it->next;
        fl_free(it->body);
        fl_free(it);
        it = n;
    }
    for (size_t i = 0; i < p->assign_count; i++) fl_push_assign_free(&p->assigns[i]);
    fl_free(p->assigns);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->send_mu);
    fl_free(p);
}
