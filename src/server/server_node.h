/*
 * server_node.h — the two kinds of Fluss server fluss-c runs, as objects,
 * and what their request handlers receive.
 *
 * A coordinator server (server_coordinator.c) owns the metadata store, the
 * catalog, its listener and loop, and a worker that runs the APIs that
 * write metadata. A tablet server (server_tablet.c) owns its bucket
 * replicas, its own table of the buckets it hosts (pushed to it by the
 * coordinator: a direct call in one process, NOTIFY_LEADER_AND_ISR in
 * cluster mode later), its delayed operations, its network loops and its
 * worker pool. Each is made by a constructor from a configuration and torn
 * down by a destructor; nothing is process-wide, so one process can run a
 * coordinator and several tablet servers (local mode runs one of each).
 *
 * Handlers get a per-request context (fl_req_ctx_t). A handler answers at
 * once by appending a frame to `out`, or later: fl_req_defer gives it a
 * context of its own (holding the connection and the decoded request) to
 * answer from any thread with fl_req_answer*.
 *
 * Thread rule: handlers run on the network loop that read the request,
 * or, for APIs marked so in server_dispatch.c, on the coordinator's worker;
 * catalog APIs hold the coordinator's lock while they run.
 */
#ifndef FL_SERVER_NODE_H
#define FL_SERVER_NODE_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "coordinator_catalog.h"
#include "fluss_api.pb-c.h"
#include "proto_frame.h"
#include "rpc_server.h"

#define FL_SERVER_HOST_MAX 256
/* fl_rpc_conn_flags bits: the client announced (API_VERSIONS) that it
 * reads Fluss main's magic 1/2 batches with statistics (server_filter.h). */
#define FL_CONN_READS_STATISTICS 1u

typedef struct fl_endpoint {
    int32_t id;
    char host[FL_SERVER_HOST_MAX];
    int port;
} fl_endpoint_t;

typedef struct fl_coordinator_server fl_coordinator_server_t;
typedef struct fl_tablet_server fl_tablet_server_t;

/* What a listener serves: its role and the server objects behind it. */
typedef struct fl_server_role {
    int role; /* FL_ROLE_CS or FL_ROLE_TS */
    fl_coordinator_server_t *cs; /* always set: the metadata source */
    fl_tablet_server_t *ts;      /* the tablet server (FL_ROLE_TS) */
    const fl_endpoint_t *self;
    /* the internal listener (or the in-process connection between the
     * roles): inter-server APIs are served here and nowhere else */
    bool internal;
    /* how its connections authenticate (server_security.h); NULL for
     * PLAINTEXT */
    const struct fl_listener_security *security;
} fl_server_role_t;

/* Who sent a request (server_authz.h). */
typedef struct fl_req_who {
    bool trusted;     /* a server's own, on the internal side: never checked */
    char type[32];    /* "User" */
    char name[512];   /* the SASL user; ANONYMOUS on a PLAINTEXT listener */
    char host[64];    /* the client's address */
} fl_req_who_t;

typedef struct fl_req_ctx {
    fl_rpc_conn_t *conn;
    int32_t request_id;
    int16_t api_key;
    int16_t api_version;
    int64_t received_ms;    /* monotonic */
    fl_req_who_t who;
    const fl_server_role_t *role;
    fl_coordinator_server_t *cs;
    fl_tablet_server_t *ts;
    ProtobufCMessage *body; /* the decoded request */
    /* How body is freed: NULL = protobuf_c_message_free_unpacked. A view
     * (PRODUCE_LOG, proto_produce.h) points into the request frame: its
     * bytes are valid only while the handler runs, never after a defer. */
    void (*body_free)(ProtobufCMessage *body);
    bool deferred;          /* set by fl_req_defer */
    /* The connection's output when the handler runs on its loop (NULL on a
     * worker): `out` is its contiguous part; a handler may splice owned
     * buffers in with fl_rpc_out_attach (record data, no copy). */
    fl_rpc_out_t *rout;
} fl_req_ctx_t;

/* Takes over the request: the returned context owns the decoded body and a
 * reference on the connection; the handler returns 0 without answering. */
fl_req_ctx_t *fl_req_defer(fl_req_ctx_t *ctx);
/* Answer a deferred request (any thread), then free it with fl_req_free. */
void fl_req_answer(fl_req_ctx_t *d, const ProtobufCMessage *resp);
void fl_req_answer_error(fl_req_ctx_t *d, int code, const char *message);
void fl_req_answer_frames(fl_req_ctx_t *d, const fl_buf_t *frames);
void fl_req_free(fl_req_ctx_t *d);

/* The rpc handler (fl_rpc_handler_fn) for a listener whose ctx is a
 * fl_server_role_t. */
int fl_server_handle(void *role_ctx, fl_rpc_conn_t *conn, const fl_frame_request_t *req,
                     fl_rpc_out_t *out);

/* A handler of one API: req is the decoded request (ctx->body). On success
 * it appends a response with fl_server_reply (or defers) and returns 0; on
 * failure it returns a Fluss error code with err set, and the dispatcher
 * sends ERROR_RESPONSE. */
typedef int (*fl_api_fn)(fl_req_ctx_t *ctx, const ProtobufCMessage *req, fl_buf_t *out,
                         fl_error_t *err);

void fl_server_reply(fl_buf_t *out, int32_t request_id, const ProtobufCMessage *msg);
/* The code a failure travels with: Fluss codes pass through, local ones
 * (FLUSS_ERR__*) never reach the wire (I/O → STORAGE_EXCEPTION, others →
 * UNKNOWN_SERVER_ERROR). For whole-request and per-bucket errors alike. */
int fl_server_wire_code(int rc);
void fl_server_reply_error(fl_buf_t *out, int32_t request_id, int code, const char *message);

#define FL_API_HANDLER(name) \
    int name(fl_req_ctx_t *ctx, const ProtobufCMessage *m, fl_buf_t *out, fl_error_t *err)

/* Handlers, by file. server_admin.c: */
FL_API_HANDLER(fl_api_create_database);
FL_API_HANDLER(fl_api_drop_database);
FL_API_HANDLER(fl_api_list_databases);
FL_API_HANDLER(fl_api_database_exists);
FL_API_HANDLER(fl_api_get_database_info);
FL_API_HANDLER(fl_api_create_table);
FL_API_HANDLER(fl_api_drop_table);
FL_API_HANDLER(fl_api_get_table_info);
FL_API_HANDLER(fl_api_list_tables);
FL_API_HANDLER(fl_api_table_exists);
FL_API_HANDLER(fl_api_get_table_schema);
FL_API_HANDLER(fl_api_create_partition);
FL_API_HANDLER(fl_api_drop_partition);
FL_API_HANDLER(fl_api_list_partition_infos);
/* server_alter.c: */
FL_API_HANDLER(fl_api_alter_table);
/* server_counters.c (the coordinator's, on its internal side): */
FL_API_HANDLER(fl_api_init_writer);
FL_API_HANDLER(fl_api_reserve_auto_increment);
FL_API_HANDLER(fl_api_list_leased_kv_snapshots);
/* server_isr_commit.c (the coordinator's, on its internal side): */
FL_API_HANDLER(fl_api_adjust_isr);
FL_API_HANDLER(fl_api_controlled_shutdown);
FL_API_HANDLER(fl_api_commit_remote_log_manifest);
FL_API_HANDLER(fl_api_commit_kv_snapshot);
/* server_leader_epochs.c (a leader's, on its internal side): */
FL_API_HANDLER(fl_api_list_leader_epochs);
FL_API_HANDLER(fl_api_tier_lake_bucket);
FL_API_HANDLER(fl_api_lake_tier_now);
FL_API_HANDLER(fl_api_notify_lake_table_offset);
/* server_log.c: */
FL_API_HANDLER(fl_api_produce_log);
FL_API_HANDLER(fl_api_fetch_log);
FL_API_HANDLER(fl_api_list_offsets);
FL_API_HANDLER(fl_api_get_fs_token);
/* server_log_follower.c: a leader's answer to a follower's FETCH_LOG. */
int fl_fetch_log_follower(fl_req_ctx_t *ctx, const Fluss__FetchLogRequest *req, fl_buf_t *out);
/* server_kv_snapshot.c: */
FL_API_HANDLER(fl_api_get_latest_kv_snapshots);
FL_API_HANDLER(fl_api_get_kv_snapshot_metadata);
FL_API_HANDLER(fl_api_acquire_kv_snapshot_lease);
FL_API_HANDLER(fl_api_release_kv_snapshot_lease);
FL_API_HANDLER(fl_api_drop_kv_snapshot_lease);
/* server_producer.c: */
FL_API_HANDLER(fl_api_register_producer_offsets);
FL_API_HANDLER(fl_api_get_producer_offsets);
FL_API_HANDLER(fl_api_delete_producer_offsets);
/* server_kv.c: */
/* LOOKUP answered on the calling loop when that needs no I/O (see
 * server_kv.c); false: not answered, queue it as usual. */
bool fl_lookup_inline(fl_req_ctx_t *ctx, const ProtobufCMessage *m, fl_buf_t *out);
FL_API_HANDLER(fl_api_put_kv);
FL_API_HANDLER(fl_api_lookup);
FL_API_HANDLER(fl_api_prefix_lookup);
FL_API_HANDLER(fl_api_limit_scan);
FL_API_HANDLER(fl_api_get_table_stats);
/* server_lake.c: */
FL_API_HANDLER(fl_api_get_lake_snapshot);
FL_API_HANDLER(fl_api_lake_tiering_heartbeat);
FL_API_HANDLER(fl_api_prepare_lake_table_snapshot);
FL_API_HANDLER(fl_api_commit_lake_table_snapshot);
/* server_metadata.c: */
FL_API_HANDLER(fl_api_get_metadata);
/* server_scram.c: */
FL_API_HANDLER(fl_api_alter_scram_credentials);
FL_API_HANDLER(fl_api_list_scram_users);
FL_API_HANDLER(fl_api_notify_scram_credentials);
/* server_acl.c: */
FL_API_HANDLER(fl_api_create_acls);
FL_API_HANDLER(fl_api_list_acls);
FL_API_HANDLER(fl_api_drop_acls);
FL_API_HANDLER(fl_api_notify_acls);
/* The coordinator's ACLs: loaded from the metadata store at start, and
 * pushed (NOTIFY_ACLS) to one tablet server (tablet_id >= 0) or all. Under
 * the coordinator's lock. */
int fl_coordinator_acls_load(fl_coordinator_server_t *cs, fl_error_t *err);
void fl_coordinator_acls_push(fl_coordinator_server_t *cs, int32_t tablet_id);
/* Checks by table id: the coordinator's (locked: the caller holds its
 * lock) and a tablet server's (its catalog names the table); 21 when the
 * table is unknown, 48 when denied. fl_ts_authorize_bucket's denial has
 * 0.9.1's per-bucket words. */
int fl_cs_authorize_table_id(fl_req_ctx_t *ctx, int32_t op, int64_t table_id, bool locked,
                             fl_error_t *err);
int fl_ts_authorize_table_id(fl_req_ctx_t *ctx, int32_t op, int64_t table_id, fl_error_t *err);
int fl_ts_authorize_bucket(fl_req_ctx_t *ctx, int32_t op, int64_t table_id, fl_error_t *err);
int fl_cs_authorize_init_writer(fl_req_ctx_t *ctx, const Fluss__InitWriterRequest *req,
                                fl_error_t *err);
/* server_tablet_control.c (the coordinator's messages to a tablet server): */
FL_API_HANDLER(fl_api_update_metadata);
FL_API_HANDLER(fl_api_notify_leader_and_isr);
FL_API_HANDLER(fl_api_stop_replica);
FL_API_HANDLER(fl_api_notify_kv_snapshot_offset);
FL_API_HANDLER(fl_api_notify_remote_log_offsets);

#endif
