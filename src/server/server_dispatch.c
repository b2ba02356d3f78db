/*
 * server_dispatch.c — from a request frame to a handler and back: checks
 * the API key, version and role, decodes the protobuf body, calls the
 * handler and frames the answer. Answers API_VERSIONS itself from the same
 * table, so what is advertised is exactly what is dispatched.
 *
 * Errors: an API we do not serve or a version out of range gets
 * ERROR_RESPONSE code 2 (UNSUPPORTED_VERSION); a body that does not decode
 * gets code 3 (CORRUPT_MESSAGE). Never SERVER_FAILURE (type 2).
 */
#include <stdio.h>
#include <string.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"
#include "proto_api.h"
#include "proto_produce.h"
#include "server_call.h"
#include "server_coordinator.h"
#include "server_filter.h"
#include "server_metadata_cache.h"
#include "server_node.h"
#include "server_security.h"
#include "server_tablet.h"

/* How an API runs: with the coordinator's catalog lock held (it reads or
 * writes metadata), and/or on the coordinator's worker (it may fsync). */
#define FL_API_CATALOG 1
#define FL_API_WORKER 2
#define FL_API_TS_POOL 4   /* on the tablet server's worker pool (RocksDB reads) */
#define FL_API_KV_WRITER 8 /* on the tablet server's kv writer thread (PUT_KV) */
#define FL_API_INTERNAL 16 /* inter-server: on the internal listener only */
#define FL_API_TS_CONTROL 32 /* on the tablet server's control thread, in order */
/* a tablet server passes it on to the coordinator (whose catalog and
 * counters answer it), as it came */
#define FL_API_FORWARD 64
/* the coordinator serves it on its internal side only (a tablet server's
 * forward), never to a client */
#define FL_API_CS_INTERNAL 128

typedef struct fl_api_entry {
    int16_t key;
    int roles;
    const ProtobufCMessageDescriptor *request;
    fl_api_fn fn;
    int how;
} fl_api_entry_t;

static FL_API_HANDLER(fl_api_versions);

/* What fluss-c implements, and for which roles. Versions come from
 * proto_api.h. */
static const fl_api_entry_t fl_api_entries[] = {
    {FL_API_API_VERSIONS, FL_ROLE_CS | FL_ROLE_TS, &fluss__api_versions_request__descriptor, fl_api_versions, 0},
    /* answered by fl_server_handle itself (server_security.h) */
    {FL_API_AUTHENTICATE, FL_ROLE_CS | FL_ROLE_TS, &fluss__authenticate_request__descriptor, NULL, 0},
    {FL_API_CREATE_DATABASE, FL_ROLE_CS, &fluss__create_database_request__descriptor, fl_api_create_database, FL_API_CATALOG | FL_API_WORKER},
    {FL_API_DROP_DATABASE, FL_ROLE_CS, &fluss__drop_database_request__descriptor, fl_api_drop_database, FL_API_CATALOG | FL_API_WORKER},
    {FL_API_LIST_DATABASES, FL_ROLE_CS | FL_ROLE_TS, &fluss__list_databases_request__descriptor, fl_api_list_databases, FL_API_CATALOG | FL_API_FORWARD},
    {FL_API_DATABASE_EXISTS, FL_ROLE_CS | FL_ROLE_TS, &fluss__database_exists_request__descriptor, fl_api_database_exists, FL_API_CATALOG | FL_API_FORWARD},
    {FL_API_GET_DATABASE_INFO, FL_ROLE_CS | FL_ROLE_TS, &fluss__get_database_info_request__descriptor, fl_api_get_database_info, FL_API_CATALOG | FL_API_FORWARD},
    {FL_API_CREATE_TABLE, FL_ROLE_CS, &fluss__create_table_request__descriptor, fl_api_create_table, FL_API_CATALOG | FL_API_WORKER},
    {FL_API_DROP_TABLE, FL_ROLE_CS, &fluss__drop_table_request__descriptor, fl_api_drop_table, FL_API_CATALOG | FL_API_WORKER},
    {FL_API_ALTER_TABLE, FL_ROLE_CS, &fluss__alter_table_request__descriptor, fl_api_alter_table, FL_API_CATALOG | FL_API_WORKER},
    {FL_API_GET_TABLE_INFO, FL_ROLE_CS | FL_ROLE_TS, &fluss__get_table_info_request__descriptor, fl_api_get_table_info, FL_API_CATALOG | FL_API_FORWARD},
    {FL_API_LIST_TABLES, FL_ROLE_CS | FL_ROLE_TS, &fluss__list_tables_request__descriptor, fl_api_list_tables, FL_API_CATALOG | FL_API_FORWARD},
    {FL_API_TABLE_EXISTS, FL_ROLE_CS | FL_ROLE_TS, &fluss__table_exists_request__descriptor, fl_api_table_exists, FL_API_CATALOG | FL_API_FORWARD},
    {FL_API_GET_TABLE_SCHEMA, FL_ROLE_CS | FL_ROLE_TS, &fluss__get_table_schema_request__descriptor, fl_api_get_table_schema, FL_API_CATALOG | FL_API_FORWARD},
    {FL_API_LIST_PARTITION_INFOS, FL_ROLE_CS | FL_ROLE_TS, &fluss__list_partition_infos_request__descriptor, fl_api_list_partition_infos, FL_API_CATALOG | FL_API_FORWARD},
    {FL_API_CREATE_PARTITION, FL_ROLE_CS, &fluss__create_partition_request__descriptor, fl_api_create_partition, FL_API_CATALOG | FL_API_WORKER},
    {FL_API_DROP_PARTITION, FL_ROLE_CS, &fluss__drop_partition_request__descriptor, fl_api_drop_partition, FL_API_CATALOG | FL_API_WORKER},
    {FL_API_GET_METADATA, FL_ROLE_CS | FL_ROLE_TS, &fluss__metadata_request__descriptor, fl_api_get_metadata, FL_API_CATALOG | FL_API_FORWARD},
    {FL_API_GET_FILESYSTEM_SECURITY_TOKEN, FL_ROLE_CS | FL_ROLE_TS, &fluss__get_file_system_security_token_request__descriptor, fl_api_get_fs_token, 0},
    {FL_API_GET_LATEST_KV_SNAPSHOTS, FL_ROLE_CS | FL_ROLE_TS, &fluss__get_latest_kv_snapshots_request__descriptor, fl_api_get_latest_kv_snapshots, FL_API_CATALOG | FL_API_FORWARD},
    {FL_API_GET_KV_SNAPSHOT_METADATA, FL_ROLE_CS | FL_ROLE_TS, &fluss__get_kv_snapshot_metadata_request__descriptor, fl_api_get_kv_snapshot_metadata, FL_API_CATALOG | FL_API_FORWARD},
    {FL_API_ACQUIRE_KV_SNAPSHOT_LEASE, FL_ROLE_CS, &fluss__acquire_kv_snapshot_lease_request__descriptor, fl_api_acquire_kv_snapshot_lease, FL_API_CATALOG | FL_API_WORKER},
    {FL_API_RELEASE_KV_SNAPSHOT_LEASE, FL_ROLE_CS, &fluss__release_kv_snapshot_lease_request__descriptor, fl_api_release_kv_snapshot_lease, FL_API_CATALOG | FL_API_WORKER},
    {FL_API_DROP_KV_SNAPSHOT_LEASE, FL_ROLE_CS, &fluss__drop_kv_snapshot_lease_request__descriptor, fl_api_drop_kv_snapshot_lease, FL_API_WORKER},
    {FL_API_REGISTER_PRODUCER_OFFSETS, FL_ROLE_CS, &fluss__register_producer_offsets_request__descriptor, fl_api_register_producer_offsets, FL_API_WORKER},
    {FL_API_GET_PRODUCER_OFFSETS, FL_ROLE_CS, &fluss__get_producer_offsets_request__descriptor, fl_api_get_producer_offsets, 0},
    {FL_API_DELETE_PRODUCER_OFFSETS, FL_ROLE_CS, &fluss__delete_producer_offsets_request__descriptor, fl_api_delete_producer_offsets, FL_API_WORKER},
    {FL_API_INIT_WRITER, FL_ROLE_CS | FL_ROLE_TS, &fluss__init_writer_request__descriptor, fl_api_init_writer, FL_API_WORKER | FL_API_FORWARD | FL_API_CS_INTERNAL},
    {FL_API_LIST_LEASED_KV_SNAPSHOTS, FL_ROLE_CS, &fluss__list_leased_kv_snapshots_request__descriptor, fl_api_list_leased_kv_snapshots, FL_API_INTERNAL},
    {FL_API_ADJUST_ISR, FL_ROLE_CS, &fluss__adjust_isr_request__descriptor, fl_api_adjust_isr, FL_API_WORKER | FL_API_INTERNAL},
    {FL_API_COMMIT_KV_SNAPSHOT, FL_ROLE_CS, &fluss__commit_kv_snapshot_request__descriptor, fl_api_commit_kv_snapshot, FL_API_WORKER | FL_API_INTERNAL},
    {FL_API_COMMIT_REMOTE_LOG_MANIFEST, FL_ROLE_CS, &fluss__commit_remote_log_manifest_request__descriptor, fl_api_commit_remote_log_manifest, FL_API_WORKER | FL_API_INTERNAL},
    {FL_API_CONTROLLED_SHUTDOWN, FL_ROLE_CS, &fluss__controlled_shutdown_request__descriptor, fl_api_controlled_shutdown, FL_API_WORKER | FL_API_INTERNAL},
    {FL_API_RESERVE_AUTO_INCREMENT, FL_ROLE_CS, &fluss__reserve_auto_increment_request__descriptor, fl_api_reserve_auto_increment, FL_API_WORKER | FL_API_INTERNAL},
    {FL_API_PRODUCE_LOG, FL_ROLE_TS, &fluss__produce_log_request__descriptor, fl_api_produce_log, 0},
    {FL_API_FETCH_LOG, FL_ROLE_TS, &fluss__fetch_log_request__descriptor, fl_api_fetch_log, 0},
    {FL_API_LIST_OFFSETS, FL_ROLE_TS, &fluss__list_offsets_request__descriptor, fl_api_list_offsets, 0},
    {FL_API_PUT_KV, FL_ROLE_TS, &fluss__put_kv_request__descriptor, fl_api_put_kv, FL_API_KV_WRITER},
    {FL_API_LOOKUP, FL_ROLE_TS, &fluss__lookup_request__descriptor, fl_api_lookup, FL_API_TS_POOL},
    {FL_API_PREFIX_LOOKUP, FL_ROLE_TS, &fluss__prefix_lookup_request__descriptor, fl_api_prefix_lookup, FL_API_TS_POOL},
    {FL_API_LIMIT_SCAN, FL_ROLE_TS, &fluss__limit_scan_request__descriptor, fl_api_limit_scan, FL_API_TS_POOL},
    {FL_API_GET_TABLE_STATS, FL_ROLE_TS, &fluss__get_table_stats_request__descriptor, fl_api_get_table_stats, FL_API_TS_POOL},
    {FL_API_UPDATE_METADATA, FL_ROLE_TS, &fluss__update_metadata_request__descriptor, fl_api_update_metadata, FL_API_INTERNAL | FL_API_TS_CONTROL},
    {FL_API_NOTIFY_LEADER_AND_ISR, FL_ROLE_TS, &fluss__notify_leader_and_isr_request__descriptor, fl_api_notify_leader_and_isr, FL_API_INTERNAL | FL_API_TS_CONTROL},
    {FL_API_LIST_LEADER_EPOCHS, FL_ROLE_TS, &fluss__list_leader_epochs_request__descriptor, fl_api_list_leader_epochs, FL_API_INTERNAL},
    {FL_API_TIER_LAKE_BUCKET, FL_ROLE_TS, &fluss__tier_lake_bucket_request__descriptor, fl_api_tier_lake_bucket, FL_API_INTERNAL | FL_API_TS_POOL},
    {FL_API_NOTIFY_REMOTE_LOG_OFFSETS, FL_ROLE_TS, &fluss__notify_remote_log_offsets_request__descriptor, fl_api_notify_remote_log_offsets, FL_API_INTERNAL | FL_API_TS_CONTROL},
    {FL_API_LAKE_TIER_NOW, FL_ROLE_CS, &fluss__lake_tier_now_request__descriptor, fl_api_lake_tier_now, FL_API_CATALOG},
    {FL_API_NOTIFY_LAKE_TABLE_OFFSET, FL_ROLE_TS, &fluss__notify_lake_table_offset_request__descriptor, fl_api_notify_lake_table_offset, FL_API_INTERNAL | FL_API_TS_CONTROL},
    {FL_API_NOTIFY_KV_SNAPSHOT_OFFSET, FL_ROLE_TS, &fluss__notify_kv_snapshot_offset_request__descriptor, fl_api_notify_kv_snapshot_offset, FL_API_INTERNAL | FL_API_TS_CONTROL},
    {FL_API_STOP_REPLICA, FL_ROLE_TS, &fluss__stop_replica_request__descriptor, fl_api_stop_replica, FL_API_INTERNAL | FL_API_TS_CONTROL},
    {FL_API_GET_LAKE_SNAPSHOT, FL_ROLE_CS | FL_ROLE_TS, &fluss__get_lake_snapshot_request__descriptor, fl_api_get_lake_snapshot, FL_API_CATALOG | FL_API_WORKER | FL_API_FORWARD},
    {FL_API_LAKE_TIERING_HEARTBEAT, FL_ROLE_CS, &fluss__lake_tiering_heartbeat_request__descriptor, fl_api_lake_tiering_heartbeat, FL_API_CATALOG},
    {FL_API_PREPARE_LAKE_TABLE_SNAPSHOT, FL_ROLE_CS, &fluss__prepare_lake_table_snapshot_request__descriptor, fl_api_prepare_lake_table_snapshot, FL_API_CATALOG | FL_API_WORKER},
    {FL_API_COMMIT_LAKE_TABLE_SNAPSHOT, FL_ROLE_CS, &fluss__commit_lake_table_snapshot_request__descriptor, fl_api_commit_lake_table_snapshot, FL_API_CATALOG | FL_API_WORKER},
    {FL_API_CREATE_ACLS, FL_ROLE_CS, &fluss__create_acls_request__descriptor, fl_api_create_acls, FL_API_CATALOG | FL_API_WORKER},
    {FL_API_LIST_ACLS, FL_ROLE_CS | FL_ROLE_TS, &fluss__list_acls_request__descriptor, fl_api_list_acls, 0},
    {FL_API_DROP_ACLS, FL_ROLE_CS, &fluss__drop_acls_request__descriptor, fl_api_drop_acls, FL_API_CATALOG | FL_API_WORKER},
    {FL_API_NOTIFY_ACLS, FL_ROLE_TS, &fluss__notify_acls_request__descriptor, fl_api_notify_acls, FL_API_INTERNAL | FL_API_TS_CONTROL},
    {FL_API_ALTER_SCRAM_CREDENTIALS, FL_ROLE_CS, &fluss__alter_scram_credentials_request__descriptor, fl_api_alter_scram_credentials, FL_API_CATALOG | FL_API_WORKER},
    {FL_API_LIST_SCRAM_USERS, FL_ROLE_CS, &fluss__list_scram_users_request__descriptor, fl_api_list_scram_users, FL_API_CATALOG},
    {FL_API_NOTIFY_SCRAM_CREDENTIALS, FL_ROLE_TS, &fluss__notify_scram_credentials_request__descriptor, fl_api_notify_scram_credentials, FL_API_INTERNAL | FL_API_TS_CONTROL},
    /* a tablet server's forward of a client's request: fl_server_handle
     * unwraps it */
    {FL_API_FORWARDED, FL_ROLE_CS, &fluss__forwarded_request__descriptor, NULL, FL_API_INTERNAL},
};

#define FL_API_ENTRY_COUNT (sizeof(fl_api_entries) / sizeof(fl_api_entries[0]))

/* Whether the listener of role serves e. */
static bool fl_api_served(const fl_api_entry_t *e, const fl_server_role_t *role) {
    if (!(e->roles & role->role)) return false;
    if ((e->how & FL_API_INTERNAL) && !role->internal) return false;
    if ((e->how & FL_API_CS_INTERNAL) && role->role == FL_ROLE_CS && !role->internal) return false;
    return true;
}

static const fl_api_entry_t *fl_api_entry(int key) {
    for (size_t i = 0; i < FL_API_ENTRY_COUNT; i++)
        if (fl_api_entries[i].key == key) return &fl_api_entries[i];
    return NULL;
}

void fl_server_reply(fl_buf_t *out, int32_t request_id, const ProtobufCMessage *msg) {
    size_t n = protobuf_c_message_get_packed_size(msg);
    fl_frame_put_response_header(out, FL_RESPONSE_SUCCESS, request_id, n);
    uint8_t *dst = fl_buf_reserve(out, n);
    protobuf_c_message_pack(msg, dst);
    out->len += n;
}

int fl_server_wire_code(int rc) {
    if (rc >= -1) return rc;
    return rc == FLUSS_ERR__IO ? FLUSS_ERR_STORAGE_EXCEPTION : FLUSS_ERR_UNKNOWN_SERVER_ERROR;
}

void fl_server_reply_error(fl_buf_t *out, int32_t request_id, int code, const char *message) {
    Fluss__ErrorResponse er = FLUSS__ERROR_RESPONSE__INIT;
    er.error_code = code;
    char truncated[2049];
    if (message && *message) {
        snprintf(truncated, sizeof(truncated), "%s", message);
        er.error_message = truncated;
    }
    size_t n = protobuf_c_message_get_packed_size(&er.base);
    fl_frame_put_response_header(out, FL_RESPONSE_ERROR, request_id, n);
    uint8_t *dst = fl_buf_reserve(out, n);
    protobuf_c_message_pack(&er.base, dst);
    out->len += n;
}

static FL_API_HANDLER(fl_api_versions) {
    (void)err;
    const Fluss__ApiVersionsRequest *vreq = (const Fluss__ApiVersionsRequest *)m;
    if (ctx->conn && fl_client_reads_statistics(vreq->client_software_name,
                                                vreq->client_software_version))
        fl_rpc_conn_set_flags(ctx->conn, fl_rpc_conn_flags(ctx->conn) | FL_CONN_READS_STATISTICS);
    const fl_server_role_t *role = ctx->role;
    int32_t request_id = ctx->request_id;
    Fluss__PbApiVersion items[FL_API_ENTRY_COUNT];
    Fluss__PbApiVersion *ptrs[FL_API_ENTRY_COUNT];
    size_t n = 0;
    for (size_t i = 0; i < FL_API_ENTRY_COUNT; i++) {
        const fl_api_entry_t *e = &fl_api_entries[i];
        if (!fl_api_served(e, role)) continue;
        const fl_api_info_t *info = fl_api_info(e->key);
        Fluss__PbApiVersion v = FLUSS__PB_API_VERSION__INIT;
        v.api_key = e->key;
        v.min_version = info->min_version;
        v.max_version = info->max_version;
        items[n] = v;
        ptrs[n] = &items[n];
        n++;
    }
    Fluss__ApiVersionsResponse resp = FLUSS__API_VERSIONS_RESPONSE__INIT;
    resp.n_api_versions = n;
    resp.api_versions = ptrs;
    resp.has_server_type = 1;
    resp.server_type = role->role == FL_ROLE_CS ? 1 : 2;
    fl_server_reply(out, request_id, &resp.base);
    return 0;
}

/* ---- deferred answers ---- */

fl_req_ctx_t *fl_req_defer(fl_req_ctx_t *ctx) {
    fl_req_ctx_t *d = fl_malloc(sizeof(*d));
    *d = *ctx;
    d->deferred = true;
    d->rout = NULL; /* the read's output is gone by the time it answers */
    fl_rpc_conn_ref(d->conn);
    ctx->deferred = true; /* the dispatcher no longer owns the body */
    return d;
}

void fl_req_answer_frames(fl_req_ctx_t *d, const fl_buf_t *frames) {
    if (frames->len) fl_rpc_conn_send(d->conn, frames->data, frames->len);
}

void fl_req_answer(fl_req_ctx_t *d, const ProtobufCMessage *resp) {
    fl_buf_t b;
    fl_buf_init(&b);
    fl_server_reply(&b, d->request_id, resp);
    fl_req_answer_frames(d, &b);
    fl_buf_free(&b);
}

void fl_req_answer_error(fl_req_ctx_t *d, int code, const char *message) {
    fl_buf_t b;
    fl_buf_init(&b);
    fl_server_reply_error(&b, d->request_id, code, message);
    fl_req_answer_frames(d, &b);
    fl_buf_free(&b);
}

static void fl_req_body_free(fl_req_ctx_t *c) {
    if (!c->body) return;
    if (c->body_free) c->body_free(c->body);
    else protobuf_c_message_free_unpacked(c->body, NULL);
}

static void fl_produce_view_free_body(ProtobufCMessage *m) {
    fl_proto_produce_view_free((Fluss__ProduceLogRequest *)m);
}

void fl_req_free(fl_req_ctx_t *d) {
    if (!d) return;
    fl_req_body_free(d);
    fl_rpc_conn_unref(d->conn);
    fl_free(d);
}

/* Runs the handler of e for ctx, answering into out (or deferring). */
static void fl_dispatch_run(const fl_api_entry_t *e, fl_req_ctx_t *ctx, fl_buf_t *out) {
    fl_error_t err;
    fl_err_clear(&err);
    bool locked = (e->how & FL_API_CATALOG) && ctx->cs;
    if (locked) pthread_mutex_lock(&ctx->cs->lock);
    int rc = e->fn(ctx, ctx->body, out, &err);
    if (locked) pthread_mutex_unlock(&ctx->cs->lock);
    /* what the change sends to the tablet servers, answered before the
     * client is (on the worker only: a loop never waits) */
    if ((e->how & FL_API_WORKER) && ctx->cs && ctx->role->role == FL_ROLE_CS &&
        !ctx->role->internal)
        fl_coordinator_server_push_flush(ctx->cs);
    if (rc) {
        const fl_api_info_t *info = fl_api_info(e->key);
        FL_DEBUG("rpc: %s failed: %s (%d) %s", info->name, fl_err_name(rc), rc, err.msg);
        int wire = fl_server_wire_code(rc);
        fl_server_reply_error(out, ctx->request_id, wire,
                              err.msg[0] ? err.msg : fl_err_default_message(wire));
    }
}

typedef struct fl_dispatch_job {
    const fl_api_entry_t *entry;
    fl_req_ctx_t *ctx; /* deferred */
} fl_dispatch_job_t;

static void fl_dispatch_job_run(void *arg) {
    fl_dispatch_job_t *j = arg;
    fl_req_ctx_t *d = j->ctx;
    fl_req_ctx_t run = *d;
    run.deferred = false;
    run.rout = NULL;
    fl_buf_t out;
    fl_buf_init(&out);
    fl_dispatch_run(j->entry, &run, &out);
    fl_req_answer_frames(d, &out);
    fl_buf_free(&out);
    if (run.deferred) d->body = NULL; /* the handler deferred again: it owns the body */
    fl_req_free(d);
    fl_free(j);
}

/* GET_METADATA answered from ts's metadata cache: true, the answer in
 * out. A request that does not decode goes on to the coordinator, which
 * answers it as any other. */
static bool fl_tablet_metadata_from_cache(fl_tablet_server_t *ts, const fl_frame_request_t *req,
                                          fl_buf_t *out) {
    Fluss__MetadataRequest *mr = fluss__metadata_request__unpack(NULL, req->body_len, req->body);
    if (!mr) return false;
    bool hit = fl_metadata_cache_answer(fl_tablet_catalog_mdcache(ts->catalog), mr,
                                        req->request_id, out);
    fluss__metadata_request__free_unpacked(mr, NULL);
    return hit;
}

/* Who sent a request that came on conn of role: a server (the internal
 * side) or a client (its SASL user, or ANONYMOUS). */
static void fl_req_who_of(const fl_server_role_t *role, fl_rpc_conn_t *conn, const char *principal,
                          fl_req_who_t *who) {
    memset(who, 0, sizeof(*who));
    if (role->internal) {
        who->trusted = true;
        return;
    }
    snprintf(who->type, sizeof(who->type), "User");
    snprintf(who->name, sizeof(who->name), "%s", principal ? principal : "ANONYMOUS");
    if (conn) snprintf(who->host, sizeof(who->host), "%s", fl_rpc_conn_peer_ip(conn));
}

static int fl_server_handle_as(fl_server_role_t *role, fl_rpc_conn_t *conn,
                               const fl_frame_request_t *req, fl_rpc_out_t *rout,
                               const fl_req_who_t *as);

/* FORWARDED: the request inside, answered as its client's. */
static int fl_server_unwrap(fl_server_role_t *role, fl_rpc_conn_t *conn,
                            const fl_frame_request_t *req, fl_rpc_out_t *rout) {
    Fluss__ForwardedRequest *fr =
        fluss__forwarded_request__unpack(NULL, req->body_len, req->body);
    if (!fr || fr->api_key == FL_API_FORWARDED) {
        fl_server_reply_error(&rout->buf, req->request_id, FLUSS_ERR_CORRUPT_MESSAGE,
                              "Failed to decode the FORWARDED request body");
        if (fr) fluss__forwarded_request__free_unpacked(fr, NULL);
        return 0;
    }
    fl_req_who_t who = {.trusted = true};
    if (fr->principal_name) {
        who.trusted = false;
        snprintf(who.type, sizeof(who.type), "%s", fr->principal_type ? fr->principal_type : "User");
        snprintf(who.name, sizeof(who.name), "%s", fr->principal_name);
        snprintf(who.host, sizeof(who.host), "%s", fr->host ? fr->host : "");
    }
    fl_frame_request_t inner = {.api_key = (int16_t)fr->api_key,
                                .api_version = (int16_t)fr->api_version,
                                .request_id = req->request_id,
                                .body = fr->request.data,
                                .body_len = fr->request.len};
    int rc = fl_server_handle_as(role, conn, &inner, rout, &who);
    fluss__forwarded_request__free_unpacked(fr, NULL);
    return rc;
}

int fl_server_handle(void *role_ctx, fl_rpc_conn_t *conn, const fl_frame_request_t *req,
                     fl_rpc_out_t *rout) {
    return fl_server_handle_as(role_ctx, conn, req, rout, NULL);
}

static int fl_server_handle_as(fl_server_role_t *role, fl_rpc_conn_t *conn,
                               const fl_frame_request_t *req, fl_rpc_out_t *rout,
                               const fl_req_who_t *as) {
    fl_buf_t *out = &rout->buf;
    const fl_api_info_t *info = fl_api_info(req->api_key);
    const fl_api_entry_t *e = fl_api_entry(req->api_key);
    char msg[256];
    if (!info || !e || !fl_api_served(e, role)) {
        snprintf(msg, sizeof(msg), "The %s does not support API key %d%s%s",
                 role->role == FL_ROLE_CS ? "coordinator server" : "tablet server", req->api_key,
                 info ? " " : "", info ? info->name : "");
        FL_DEBUG("rpc: %s", msg);
        fl_server_reply_error(out, req->request_id, FLUSS_ERR_UNSUPPORTED_VERSION, msg);
        return 0;
    }
    /* a SASL listener: nothing but API_VERSIONS and AUTHENTICATE before the
     * connection authenticated; ours closes it after refusing anything else */
    const char *principal = NULL;
    if (role->security && conn) {
        principal = fl_sasl_principal(conn);
        if (role->security->sasl && !principal && e->key != FL_API_API_VERSIONS && e->key != FL_API_AUTHENTICATE) {
            FL_DEBUG("rpc: %s before authentication: refused, closing", info->name);
            fl_server_reply_error(out, req->request_id, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                                  "The connection has not completed authentication yet. This "
                                  "may be caused by a missing or incorrect configuration of "
                                  "'client.security.protocol' on the client side.");
            return FL_RPC_CLOSE_AFTER_REPLY;
        }
    }
    if (req->api_version < info->min_version || req->api_version > info->max_version) {
        snprintf(msg, sizeof(msg), "Unsupported version %d of API %s (supported %d..%d)",
                 req->api_version, info->name, info->min_version, info->max_version);
        fl_server_reply_error(out, req->request_id, FLUSS_ERR_UNSUPPORTED_VERSION, msg);
        return 0;
    }
    fl_req_who_t who;
    if (as) who = *as;
    else fl_req_who_of(role, conn, principal, &who);
    if (e->key == FL_API_FORWARDED) return fl_server_unwrap(role, conn, req, rout);
    if (e->key == FL_API_AUTHENTICATE) {
        if (conn) {
            struct fl_scram_users *users = role->role == FL_ROLE_CS
                                               ? (role->cs ? role->cs->cfg.scram : NULL)
                                               : (role->ts ? role->ts->cfg.scram : NULL);
            fl_security_authenticate(role->security, users, conn, req, out);
        }
        else fl_server_reply_error(out, req->request_id, FLUSS_ERR_AUTHENTICATE_EXCEPTION,
                                   "AUTHENTICATE needs a connection");
        return 0;
    }
    /* GET_METADATA: from the tablet server's own cache when it holds
     * everything asked for (else passed on, below) */
    if (e->key == FL_API_GET_METADATA && role->role == FL_ROLE_TS && role->ts &&
        (who.trusted || !role->ts->cfg.authz) &&
        fl_tablet_metadata_from_cache(role->ts, req, out))
        return 0;
    /* what the coordinator answers: passed on, undecoded */
    if ((e->how & FL_API_FORWARD) && role->role == FL_ROLE_TS) {
        fl_rpc_client_t *cc = role->ts ? role->ts->coordinator : NULL;
        if (!cc) {
            fl_server_reply_error(out, req->request_id, FLUSS_ERR_NETWORK_EXCEPTION,
                                  "This tablet server has no coordinator yet.");
        } else if (conn) {
            fl_req_ctx_t ctx = {.conn = conn, .request_id = req->request_id,
                                .api_key = req->api_key, .api_version = req->api_version,
                                .received_ms = fl_time_mono_ms(), .who = who, .role = role,
                                .ts = role->ts};
            fl_server_forward(cc, fl_req_defer(&ctx), req->body, req->body_len);
        } else {
            fl_server_forward_wait(cc, req, out);
        }
        return 0;
    }
    /* PRODUCE_LOG's records are most of its bytes: decode a view that
     * points into the frame (no copy); protobuf-c decides what the view
     * does not take */
    ProtobufCMessage *body = NULL;
    void (*body_free)(ProtobufCMessage *) = NULL;
    Fluss__ProduceLogRequest *view;
    if (e->key == FL_API_PRODUCE_LOG && fl_proto_produce_view(req->body, req->body_len, &view) == 0) {
        body = &view->base;
        body_free = fl_produce_view_free_body;
    } else {
        body = protobuf_c_message_unpack(e->request, NULL, req->body_len, req->body);
    }
    if (!body) {
        snprintf(msg, sizeof(msg), "Failed to decode the %s request body (%zu bytes)", info->name,
                 req->body_len);
        fl_server_reply_error(out, req->request_id, FLUSS_ERR_CORRUPT_MESSAGE, msg);
        return 0;
    }
    fl_req_ctx_t ctx = {
        .conn = conn,
        .request_id = req->request_id,
        .api_key = req->api_key,
        .api_version = req->api_version,
        .received_ms = fl_time_mono_ms(),
        .who = who,
        .role = role,
        .cs = role->cs,
        .ts = role->ts,
        .body = body,
        .body_free = body_free,
        .rout = rout,
    };
    /* APIs that must not run on a network loop go to their queue */
    fl_workq_t *queue = NULL;
    if ((e->how & FL_API_WORKER) && ctx.cs)
        queue = role->internal ? ctx.cs->internal_workers : ctx.cs->workers;
    else if ((e->how & FL_API_KV_WRITER) && ctx.ts) queue = fl_tablet_kv_writer(ctx.ts->kv);
    else if ((e->how & FL_API_TS_CONTROL) && ctx.ts) queue = ctx.ts->control;
    else if ((e->how & FL_API_TS_POOL) && ctx.ts) queue = ctx.ts->workers;
    if (queue && conn && e->key == FL_API_LOOKUP && fl_lookup_inline(&ctx, body, out)) {
        fl_req_body_free(&ctx);
        return 0;
    }
    if (queue && conn) {
        fl_dispatch_job_t *j = fl_malloc(sizeof(*j));
        j->entry = e;
        j->ctx = fl_req_defer(&ctx);
        fl_workq_submit(queue, fl_dispatch_job_run, j);
        return 0;
    }
    fl_dispatch_run(e, &ctx, out);
    if (!ctx.deferred) fl_req_body_free(&ctx);
    return 0;
}
