/*
 * server_coordinator.c — the coordinator server object
 * (server_coordinator.h): lifecycle, tablet registry, pushes of metadata
 * changes to the tablet servers, writer-id blocks, the producer offsets
 * sweep.
 */
#include "server_coordinator.h"
#include "server_scram.h"
#include "server_security.h"

#include "coordinator_election.h"
#include "coordinator_lake_tiering.h"

#include <stdio.h>
#include <string.h>

#include "common_alloc.h"
#include "common_fs.h"
#include "common_log.h"
#include "common_time.h"
#include "kv_snapshot.h"
#include "log_remote_log.h"
#include "proto_api.h"
#include "server_lake_tier.h"

int fl_coordinator_server_new(const fl_coordinator_config_t *cfg, fl_coordinator_server_t **out,
                              fl_error_t *err) {
    fl_coordinator_server_t *cs = fl_calloc(1, sizeof(*cs));
    cs->cfg = *cfg;
    if (cs->cfg.writer_id_block < 1) cs->cfg.writer_id_block = FL_WRITER_ID_BLOCK_DEFAULT;
    if (cs->cfg.producer_offsets_ttl_ms == 0)
        cs->cfg.producer_offsets_ttl_ms = FL_PRODUCER_OFFSETS_TTL_MS_DEFAULT;
    if (cs->cfg.producer_offsets_cleanup_ms <= 0)
        cs->cfg.producer_offsets_cleanup_ms = FL_PRODUCER_OFFSETS_CLEANUP_MS_DEFAULT;
    pthread_mutex_init(&cs->lock, NULL);
    int rc = 0;
    if (cfg->metastore) cs->ms = cfg->metastore;
    else rc = fl_metastore_embedded_open(cfg->meta_dir, &cs->ms, err);
    if (!rc) rc = fl_fs_mkdirs(cfg->meta_dir, err); /* coordinator state files */
    if (!rc)
        rc = fl_catalog_init(&cs->catalog, cs->ms, &cfg->defaults, cfg->tablet_ids,
                             cfg->tablet_count, err);
    if (!rc) rc = fl_coordinator_acls_load(cs, err);
    if (!rc) rc = fl_coordinator_scram_load(cs, err);
    if (!rc && !cs->cfg.remote_dir[0])
        snprintf(cs->cfg.remote_dir, sizeof(cs->cfg.remote_dir), "%.4000s/../remote", cfg->meta_dir);
    if (!rc) {
        /* leases live beside the snapshots they hold ({remote}/lease) */
        char path[4200];
        snprintf(path, sizeof(path), "%s/lease", cs->cfg.remote_dir);
        rc = fl_fs_mkdirs(path, err);
        snprintf(path, sizeof(path), "%s/lease/kv-snapshot-leases.json", cs->cfg.remote_dir);
        if (!rc) rc = fl_kv_leases_open(path, &cs->leases, err);
    }
    if (!rc) {
        /* coordinator state beside the metadata (Fluss keeps it in ZooKeeper) */
        char path[4200];
        snprintf(path, sizeof(path), "%.4000s/producer-offsets", cfg->meta_dir);
        rc = fl_producer_offsets_open(path, &cs->producers, err);
    }
    if (rc) {
        fl_kv_leases_close(cs->leases);
        if (cs->ms) cs->ms->ops->close(cs->ms);
        pthread_mutex_destroy(&cs->lock);
        fl_free(cs);
        return rc;
    }
    cs->self = cfg->advertised;
    cs->self.id = 0;
    fl_auto_partitioner_config_t apc = {cfg->auto_partition_interval_ms,
                                        cs->cfg.auto_partition_clock_file, NULL,
                                        cs->cfg.default_time_zone};
    cs->auto_partitioner = fl_auto_partitioner_new(cs, &apc);
    cs->lake_tierer = fl_lake_tierer_new(cs);
    cs->lake_tiering = fl_lake_tiering_new();
    cs->loop = fl_rpc_loop_new("cs-net");
    cs->rpc = fl_rpc_server_new(&cs->loop, 1, &cfg->limits, fl_server_handle);
    cs->workers = fl_workq_new(1, "cs-work");
    cs->push = fl_push_new(&cs->self, cfg->coordinator_epoch, &cs->cfg.defaults.lake);
    cs->role = (fl_server_role_t){.role = FL_ROLE_CS, .cs = cs, .ts = NULL, .self = &cs->self,
                                     .security = cs->cfg.client_security};
    cs->internal_role = (fl_server_role_t){.role = FL_ROLE_CS, .cs = cs, .ts = NULL,
                                              .self = &cs->self, .internal = true};
    cs->internal_workers = fl_workq_new(1, "cs-internal");
    *out = cs;
    return 0;
}

void fl_coordinator_server_add_tablet(fl_coordinator_server_t *cs, const fl_endpoint_t *ep,
                                      fl_rpc_client_t *client) {
    fl_push_add_tablet(cs->push, ep, NULL, client);
}

void fl_coordinator_server_drop_tablet(fl_coordinator_server_t *cs, int32_t id) {
    fl_push_remove_tablet(cs->push, id);
}

fl_rpc_loop_t *fl_coordinator_server_loop(fl_coordinator_server_t *cs) { return cs->loop; }

typedef enum { FL_ELECT_DOWN, FL_ELECT_UP, FL_ELECT_SHUTDOWN } fl_elect_why_t;

/* (cs->lock) Applies an election rule to every bucket server `id` holds a
 * replica of; the tables that changed are pushed whole (their leaders and
 * ISRs to every tablet server that hosts them). A controlled shutdown is
 * a departure announced by the server itself: its leaderships move to
 * another live in-sync replica where there is one (where there is none it
 * keeps them: *kept counts those) and it leaves the ISRs. */
static void fl_coordinator_elect(fl_coordinator_server_t *cs, int32_t id, fl_elect_why_t why,
                                 fl_bucket_key_t **kept, size_t *kept_count) {
    fl_catalog_t *cat = &cs->catalog;
    bool up = why == FL_ELECT_UP;
    for (size_t i = 0; i < cs->ms->ops->table_count(cs->ms); i++) {
        const fl_ms_table_t *t = cs->ms->ops->table_at(cs->ms, i);
        bool changed = false;
        for (size_t k = 0; k <= t->partition_count; k++) {
            const fl_ms_partition_t *mp = k ? &t->partitions[k - 1] : NULL;
            int32_t nb = mp ? mp->bucket_count : t->bucket_count;
            const fl_ms_bucket_t *bs = mp ? mp->buckets : t->buckets;
            int64_t pid = mp ? mp->partition_id : -1;
            for (int32_t b = 0; b < nb; b++) {
                fl_ms_bucket_t nbk;
                bool moved = up ? fl_election_server_up(&bs[b], id, &nbk)
                                : fl_election_server_down(&bs[b], id, cat->tablet_ids,
                                                          cat->tablet_count, &nbk);
                if (why == FL_ELECT_SHUTDOWN && bs[b].leader == id && nbk.leader < 0) {
                    /* no other replica in sync: it leads until it is gone
                     * (a bucket with one replica has nowhere to go: not
                     * counted as one to wait for) */
                    if (bs[b].replica_count > 1) {
                        *kept = fl_realloc(*kept, (*kept_count + 1) * sizeof(**kept));
                        (*kept)[(*kept_count)++] = (fl_bucket_key_t){t->table_id, pid, b};
                    }
                    continue;
                }
                if (!moved) continue;
                fl_error_t e;
                if (cs->ms->ops->bucket_leader_set(cs->ms, t->table_id, pid, b, &nbk, &e)) {
                    FL_WARN("coordinator: bucket %d of table %lld: leader %d, epoch %d not "
                            "stored: %s",
                            b, (long long)t->table_id, nbk.leader, nbk.leader_epoch, e.msg);
                    continue;
                }
                changed = true;
                FL_INFO("coordinator: bucket %d of table %lld%s: leader %d (epoch %d), %d in "
                        "sync, after server %d %s",
                        b, (long long)t->table_id, mp ? " partition" : "", nbk.leader,
                        nbk.leader_epoch, nbk.isr_count, id,
                        up ? "came back" : why == FL_ELECT_SHUTDOWN ? "asked to stop" : "went");
            }
        }
        /* table_at again: a store may have replaced the table's record */
        if (changed) fl_push_table(cs->push, cs->ms->ops->table_at(cs->ms, i));
    }
}

/* (lock) */
static void fl_coordinator_forget_incarnation(fl_coordinator_server_t *cs, int32_t id) {
    for (size_t i = 0; i < cs->incarnation_count; i++)
        if (cs->incarnations[i].id == id) {
            cs->incarnations[i] = cs->incarnations[--cs->incarnation_count];
            return;
        }
}

/* (lock) Whether epoch is not the live registration's of server id (the
 * low 32 bits: the wire's int32). No registration known (local mode):
 * nothing to compare. */
static bool fl_coordinator_stale_incarnation(fl_coordinator_server_t *cs, int32_t id,
                                             int32_t epoch) {
    for (size_t i = 0; i < cs->incarnation_count; i++)
        if (cs->incarnations[i].id == id) return (int32_t)cs->incarnations[i].incarnation != epoch;
    return false;
}

void fl_coordinator_server_tablet_up(fl_coordinator_server_t *cs, const fl_endpoint_t *client_ep,
                                     const char *listeners, const char *rack,
                                     const char *internal_host, int internal_port,
                                     int64_t incarnation) {
    fl_rpc_client_t *c = fl_rpc_client_new(cs->loop, internal_host, internal_port, NULL);
    fl_push_add_tablet(cs->push, client_ep, listeners, c);
    pthread_mutex_lock(&cs->lock);
    fl_coordinator_forget_incarnation(cs, client_ep->id);
    if (cs->incarnation_count < FL_CATALOG_TABLET_SERVERS_MAX)
        cs->incarnations[cs->incarnation_count++] =
            (struct fl_tablet_incarnation){client_ep->id, incarnation};
    fl_catalog_tablet_up(&cs->catalog, client_ep->id, rack);
    fl_push_servers(cs->push); /* the others learn where it is */
    /* buckets left without a leader that it can lead get it back (pushed
     * to every server that hosts them), then it learns every table */
    fl_coordinator_elect(cs, client_ep->id, FL_ELECT_UP, NULL, NULL);
    for (size_t i = 0; i < cs->ms->ops->table_count(cs->ms); i++)
        fl_push_table_to(cs->push, cs->ms->ops->table_at(cs->ms, i), client_ep->id);
    fl_coordinator_acls_push(cs, client_ep->id);
    fl_coordinator_scram_push(cs, client_ep->id);
    pthread_mutex_unlock(&cs->lock);
    fl_push_flush(cs->push);
    FL_INFO("coordinator: tablet server %d is up (%s:%d, internal %s:%d, rack %s)",
            client_ep->id, client_ep->host, client_ep->port, internal_host, internal_port,
            rack ? rack : "none");
}

void fl_coordinator_server_tablet_down(fl_coordinator_server_t *cs, int32_t id) {
    /* no message goes to it any more (what was in flight fails) */
    fl_push_remove_tablet(cs->push, id);
    pthread_mutex_lock(&cs->lock);
    fl_coordinator_forget_incarnation(cs, id);
    fl_catalog_tablet_down(&cs->catalog, id);
    /* its buckets get new leaders and ISRs */
    fl_coordinator_elect(cs, id, FL_ELECT_DOWN, NULL, NULL);
    pthread_mutex_unlock(&cs->lock);
    fl_push_servers(cs->push); /* the others forget its internal listener */
    fl_push_flush(cs->push);
    FL_INFO("coordinator: tablet server %d is gone", id);
}

/* ---- the producer offsets sweep (timer on the loop, work on the worker) ---- */

static void fl_producer_sweep_job(void *arg) {
    fl_coordinator_server_t *cs = arg;
    fl_producer_offsets_expire(cs->producers, fl_time_wall_ms());
    atomic_store(&cs->producer_sweep_queued, false);
}

static void fl_on_producer_sweep_timer(uv_timer_t *t) {
    fl_coordinator_server_t *cs = t->data;
    if (!atomic_exchange(&cs->producer_sweep_queued, true))
        fl_workq_submit(cs->workers, fl_producer_sweep_job, cs);
}

static void fl_producer_sweep_start(void *arg) {
    fl_coordinator_server_t *cs = arg;
    uv_timer_init(fl_rpc_loop_uv(cs->loop), &cs->producer_sweep_timer);
    cs->producer_sweep_timer.data = cs;
    uint64_t every = (uint64_t)cs->cfg.producer_offsets_cleanup_ms;
    uv_timer_start(&cs->producer_sweep_timer, fl_on_producer_sweep_timer, every, every);
}

/* Runs before the listener's close on the same loop: once that close is
 * done, no sweep is submitted any more (the loop closes the handle). */
static void fl_producer_sweep_stop(void *arg) {
    fl_coordinator_server_t *cs = arg;
    uv_timer_stop(&cs->producer_sweep_timer);
}

/* ---- tablet servers that missed a message (timer on the loop, work on
 * the worker) ---- */

#define FL_RESYNC_EVERY_MS 1000

/* Each tablet server a message went unanswered to (still registered: one
 * that left is told everything when it comes back) gets the drops it
 * missed and every table again, as one that joins. */
static void fl_resync_job(void *arg) {
    fl_coordinator_server_t *cs = arg;
    int32_t ids[FL_CATALOG_TABLET_SERVERS_MAX];
    size_t n = fl_push_take_behind(cs->push, ids, FL_CATALOG_TABLET_SERVERS_MAX);
    for (size_t k = 0; k < n; k++) {
        FL_INFO("coordinator: a message to tablet server %d went unanswered; telling it every "
                "table again",
                ids[k]);
        pthread_mutex_lock(&cs->lock);
        fl_push_resend_to(cs->push, ids[k]);
        for (size_t i = 0; i < cs->ms->ops->table_count(cs->ms); i++)
            fl_push_table_to(cs->push, cs->ms->ops->table_at(cs->ms, i), ids[k]);
        fl_coordinator_acls_push(cs, ids[k]);
        fl_coordinator_scram_push(cs, ids[k]);
        pthread_mutex_unlock(&cs->lock);
    }
    if (n) fl_push_flush(cs->push);
    atomic_store(&cs->resync_queued, false);
}

static void fl_on_resync_timer(uv_timer_t *t) {
    fl_coordinator_server_t *cs = t->data;
    if (!atomic_exchange(&cs->resync_queued, true)) fl_workq_submit(cs->workers, fl_resync_job, cs);
}

static void fl_resync_start(void *arg) {
    fl_coordinator_server_t *cs = arg;
    uv_timer_init(fl_rpc_loop_uv(cs->loop), &cs->resync_timer);
    cs->resync_timer.data = cs;
    uv_timer_start(&cs->resync_timer, fl_on_resync_timer, FL_RESYNC_EVERY_MS, FL_RESYNC_EVERY_MS);
}

static void fl_resync_stop(void *arg) {
    fl_coordinator_server_t *cs = arg;
    uv_timer_stop(&cs->resync_timer);
}

int fl_coordinator_server_start(fl_coordinator_server_t *cs, fl_error_t *err) {
    /* the listeners take their ports now and accept once every tablet
     * server knows every table (the same bind-then-accept as theirs) */
    int port = 0;
    int rc = fl_rpc_server_bind(cs->rpc, cs->cfg.bind_host, cs->cfg.bind_port,
                                cs->cfg.client_listener_internal ? &cs->internal_role : &cs->role,
                                &port, err);
    if (!rc && cs->cfg.internal_port >= 0 && cs->cfg.internal_host[0])
        rc = fl_rpc_server_bind(cs->rpc, cs->cfg.internal_host, cs->cfg.internal_port,
                                &cs->internal_role, NULL, err);
    if (rc) return rc;
    fl_listener_security_gate(cs->cfg.client_security, cs->rpc, &cs->role);
    if (cs->self.port == 0) {
        cs->self.port = port;
        fl_push_set_coordinator(cs->push, &cs->self);
    }
    fl_rpc_loop_post(cs->loop, fl_producer_sweep_start, cs);
    fl_rpc_loop_post(cs->loop, fl_resync_start, cs);
    if (fl_rpc_loop_start(cs->loop))
        return fl_err_set(err, FLUSS_ERR__STATE, "cannot start the coordinator's network thread");
    cs->started = true;
    pthread_mutex_lock(&cs->lock);
    for (size_t i = 0; i < cs->ms->ops->table_count(cs->ms); i++)
        fl_push_table(cs->push, cs->ms->ops->table_at(cs->ms, i));
    fl_coordinator_acls_push(cs, -1);
    fl_coordinator_scram_push(cs, -1);
    pthread_mutex_unlock(&cs->lock);
    fl_push_flush(cs->push);
    if ((rc = fl_rpc_server_accept(cs->rpc, err))) return rc;
    fl_auto_partitioner_start(cs->auto_partitioner);
    fl_lake_tierer_start(cs->lake_tierer);
    return 0;
}

void fl_coordinator_server_stop(fl_coordinator_server_t *cs) {
    if (!cs->started) return;
    cs->started = false;
    /* a round under way ends first: it asks the tablet servers and commits */
    fl_lake_tierer_stop(cs->lake_tierer);
    fl_rpc_loop_post(cs->loop, fl_producer_sweep_stop, cs);
    fl_rpc_loop_post(cs->loop, fl_resync_stop, cs);
    fl_rpc_server_close(cs->rpc);
    /* a pass under way finishes (its drops reach the tablet servers) */
    fl_auto_partitioner_stop(cs->auto_partitioner);
    /* no request comes in now: finish the DDL jobs queued, whose pushes
     * still reach the tablet servers, before those are torn down */
    fl_workq_destroy(cs->workers);
    cs->workers = NULL;
    fl_workq_destroy(cs->internal_workers);
    cs->internal_workers = NULL;
}

void fl_coordinator_server_destroy(fl_coordinator_server_t *cs) {
    if (!cs) return;
    fl_coordinator_server_stop(cs);
    fl_push_destroy(cs->push); /* its clients live on the loop */
    fl_rpc_loop_destroy(cs->loop);
    fl_rpc_server_destroy(cs->rpc);
    if (cs->workers) fl_workq_destroy(cs->workers);
    if (cs->internal_workers) fl_workq_destroy(cs->internal_workers);
    fl_auto_partitioner_destroy(cs->auto_partitioner);
    fl_lake_tierer_destroy(cs->lake_tierer);
    fl_lake_tiering_destroy(cs->lake_tiering);
    cs->ms->ops->close(cs->ms);
    fl_kv_leases_close(cs->leases);
    fl_producer_offsets_close(cs->producers);
    fl_remote_storage_destroy(cs->remote_storage);
    pthread_mutex_destroy(&cs->lock);
    fl_free(cs);
}

int fl_coordinator_server_writer_id(fl_coordinator_server_t *cs, int64_t *out, fl_error_t *err) {
    pthread_mutex_lock(&cs->lock);
    int rc = 0;
    if (cs->writer_next >= cs->writer_limit) {
        int64_t first;
        rc = cs->ms->ops->reserve_ids(cs->ms, FL_MS_COUNTER_WRITER_ID, cs->cfg.writer_id_block,
                                      &first, err);
        if (!rc) {
            cs->writer_next = first;
            cs->writer_limit = first + cs->cfg.writer_id_block;
        }
    }
    if (!rc) *out = cs->writer_next++;
    pthread_mutex_unlock(&cs->lock);
    return rc;
}

int fl_coordinator_server_autoinc_reserve(fl_coordinator_server_t *cs, int64_t table_id,
                                          int64_t count, int64_t *first, fl_error_t *err) {
    pthread_mutex_lock(&cs->lock);
    int rc = cs->ms->ops->reserve_table_ids(cs->ms, table_id, count, first, err);
    pthread_mutex_unlock(&cs->lock);
    return rc;
}

int fl_coordinator_server_adjust_isr(fl_coordinator_server_t *cs, int32_t server,
                                     int64_t table_id, int64_t partition_id, int32_t bucket,
                                     int32_t leader_epoch, int32_t bucket_epoch,
                                     const int32_t *isr, size_t count, fl_ms_bucket_t *out,
                                     fl_error_t *err) {
    pthread_mutex_lock(&cs->lock);
    fl_ms_bucket_t *b = fl_ms_bucket_mut((fl_ms_table_t *)cs->ms->ops->table_by_id(cs->ms, table_id),
                                         partition_id, bucket);
    int rc = 0;
    fl_ms_bucket_t nb;
    if (!b)
        rc = fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                        "Unknown bucket %d of table %lld (partition %lld).", bucket,
                        (long long)table_id, (long long)partition_id);
    if (!rc)
        rc = fl_election_adjust_isr(b, server, leader_epoch, bucket_epoch, isr, count,
                                    cs->catalog.tablet_ids, cs->catalog.tablet_count, &nb, err);
    if (!rc) rc = cs->ms->ops->bucket_leader_set(cs->ms, table_id, partition_id, bucket, &nb, err);
    if (!rc) {
        /* the stored state (a store may have replaced the record) */
        b = fl_ms_bucket_mut((fl_ms_table_t *)cs->ms->ops->table_by_id(cs->ms, table_id),
                             partition_id, bucket);
        if (b) *out = *b;
        FL_INFO("coordinator: bucket %d of table %lld: ISR of %d replica(s) from leader %d "
                "(bucket epoch %d)",
                bucket, (long long)table_id, out->isr_count, server, out->bucket_epoch);
    }
    pthread_mutex_unlock(&cs->lock);
    return rc;
}

/* Whether a leader's commit for the bucket may go on (under cs->lock):
 * the bucket exists, leader_epoch is its current leader epoch, and
 * coordinator_epoch is not newer than ours. *t and *part: the table and
 * partition (NULL: not partitioned). */
static int fl_coordinator_commit_check(fl_coordinator_server_t *cs, int64_t table_id,
                                       int64_t partition_id, int32_t bucket,
                                       int32_t leader_epoch, int32_t coordinator_epoch,
                                       const fl_ms_table_t **t, const fl_ms_partition_t **part,
                                       fl_error_t *err) {
    *t = cs->ms->ops->table_by_id(cs->ms, table_id);
    *part = NULL;
    for (size_t i = 0; *t && partition_id >= 0 && i < (*t)->partition_count && !*part; i++)
        if ((*t)->partitions[i].partition_id == partition_id) *part = &(*t)->partitions[i];
    const fl_ms_bucket_t *b = *t ? fl_ms_bucket_mut((fl_ms_table_t *)*t, partition_id, bucket) : NULL;
    if (coordinator_epoch > cs->cfg.coordinator_epoch)
        return fl_err_set(err, FLUSS_ERR_INVALID_COORDINATOR_EXCEPTION,
                          "The coordinator's epoch is %d, the request's %d: this coordinator is "
                          "not the active one.",
                          cs->cfg.coordinator_epoch, coordinator_epoch);
    if (!b || (partition_id >= 0 && !*part))
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                          "Unknown bucket %d of table %lld (partition %lld).", bucket,
                          (long long)table_id, (long long)partition_id);
    if (b->leader_epoch != leader_epoch)
        return fl_err_set(err, FLUSS_ERR_FENCED_LEADER_EPOCH_EXCEPTION,
                          "Bucket %d of table %lld is in leader epoch %d, the commit's is %d.",
                          bucket, (long long)table_id, b->leader_epoch, leader_epoch);
    return 0;
}

int fl_coordinator_server_commit_remote_log(fl_coordinator_server_t *cs, int64_t table_id,
                                            int64_t partition_id, int32_t bucket,
                                            int32_t leader_epoch, int32_t coordinator_epoch,
                                            const char *manifest_path, int64_t start_offset,
                                            int64_t end_offset, fl_error_t *err) {
    pthread_mutex_lock(&cs->lock);
    const fl_ms_table_t *t;
    const fl_ms_partition_t *part;
    int rc = fl_coordinator_commit_check(cs, table_id, partition_id, bucket, leader_epoch,
                                         coordinator_epoch, &t, &part, err);
    if (!rc && !cs->remote_storage)
        rc = fl_remote_storage_fs_new(cs->cfg.remote_dir, &cs->remote_storage, err);
    if (!rc) {
        fl_remote_bucket_t rb = {t->database, t->name, part ? part->name : NULL,
                                 table_id, partition_id, bucket};
        rc = fl_remote_log_commit_handle(cs->remote_storage, &rb, manifest_path, end_offset, err);
    }
    if (!rc) {
        /* the followers' local segments it covers may go now */
        const fl_ms_bucket_t *b = fl_ms_bucket_mut((fl_ms_table_t *)t, partition_id, bucket);
        fl_push_remote_log_offsets(cs->push, b, table_id, partition_id, bucket, start_offset,
                                   end_offset);
    }
    pthread_mutex_unlock(&cs->lock);
    if (!rc) fl_push_flush(cs->push);
    return rc;
}

int fl_coordinator_server_commit_kv_snapshot(fl_coordinator_server_t *cs, int64_t table_id,
                                             int64_t partition_id, int32_t bucket,
                                             int32_t leader_epoch, int32_t coordinator_epoch,
                                             int64_t snapshot_id, const char *meta, size_t len,
                                             fl_error_t *err) {
    pthread_mutex_lock(&cs->lock);
    const fl_ms_table_t *t;
    const fl_ms_partition_t *part;
    int rc = fl_coordinator_commit_check(cs, table_id, partition_id, bucket, leader_epoch,
                                         coordinator_epoch, &t, &part, err);
    int64_t offset = 0;
    if (!rc) {
        char dir[4700];
        fl_kv_snapshot_bucket_dir(dir, sizeof(dir), cs->cfg.remote_dir, t->database, t->name,
                                  table_id, part ? part->name : NULL, partition_id, bucket);
        rc = fl_kv_snapshot_commit_meta(dir, snapshot_id, meta, len, &offset, err);
    }
    if (!rc) {
        /* the followers' changelog below it may go now */
        const fl_ms_bucket_t *b = fl_ms_bucket_mut((fl_ms_table_t *)t, partition_id, bucket);
        fl_push_kv_snapshot_offset(cs->push, b, table_id, partition_id, bucket, offset);
    }
    pthread_mutex_unlock(&cs->lock);
    if (!rc) {
        fl_push_flush(cs->push);
        FL_INFO("coordinator: bucket %d of table %lld: kv snapshot %lld committed at offset %lld",
                bucket, (long long)table_id, (long long)snapshot_id, (long long)offset);
    }
    return rc;
}

int fl_coordinator_server_controlled_shutdown(fl_coordinator_server_t *cs, int32_t id,
                                              int32_t epoch, fl_bucket_key_t **kept,
                                              size_t *kept_count, fl_error_t *err) {
    *kept = NULL;
    *kept_count = 0;
    pthread_mutex_lock(&cs->lock);
    fl_catalog_t *cat = &cs->catalog;
    bool live = false;
    for (size_t i = 0; i < cat->tablet_count && !live; i++) live = cat->tablet_ids[i] == id;
    if (!live) {
        pthread_mutex_unlock(&cs->lock);
        return fl_err_set(err, FLUSS_ERR_SERVER_NOT_EXIST_EXCEPTION,
                          "Tablet server %d is not registered.", id);
    }
    if (fl_coordinator_stale_incarnation(cs, id, epoch)) {
        pthread_mutex_unlock(&cs->lock);
        return fl_err_set(err, FLUSS_ERR_SERVER_NOT_EXIST_EXCEPTION,
                          "Tablet server %d in epoch %d is not the registered one.", id, epoch);
    }
    fl_coordinator_elect(cs, id, FL_ELECT_SHUTDOWN, kept, kept_count);
    pthread_mutex_unlock(&cs->lock);
    fl_push_flush(cs->push);
    FL_INFO("coordinator: controlled shutdown of tablet server %d: %zu bucket(s) still led by it",
            id, *kept_count);
    return 0;
}

void fl_coordinator_server_table_changed(fl_coordinator_server_t *cs, int64_t table_id) {
    const fl_ms_table_t *t = cs->ms->ops->table_by_id(cs->ms, table_id);
    if (t) fl_push_table(cs->push, t);
}

void fl_coordinator_server_table_dropped(fl_coordinator_server_t *cs, const char *db,
                                         const char *name, int64_t table_id) {
    fl_push_table_dropped(cs->push, db, name, table_id);
}

/* The table as it is now: the push stops the partition that is gone. */
void fl_coordinator_server_partition_dropped(fl_coordinator_server_t *cs, const char *db,
                                             const char *name, int64_t table_id,
                                             const char *partition_name, int64_t partition_id) {
    (void)db;
    (void)name;
    (void)partition_name;
    (void)partition_id;
    fl_coordinator_server_table_changed(cs, table_id);
}

void fl_coordinator_server_push_flush(fl_coordinator_server_t *cs) { fl_push_flush(cs->push); }
