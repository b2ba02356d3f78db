/*
 * server_node.h — the state of one flussd process and the request handlers
 * of its roles. In local mode one process hosts the coordinator (id 0) and
 * one tablet server (id 0) on two ports, as Fluss's local cluster does;
 * each listener carries its role so API_VERSIONS answers with that role's
 * server_type and API set.
 *
 * Thread rule: everything here runs on the single loop thread.
 */
#ifndef FL_SERVER_NODE_H
#define FL_SERVER_NODE_H

#include <protobuf-c/protobuf-c.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "coordinator_catalog.h"
#include "fluss_api.pb-c.h"
#include "proto_frame.h"
#include "replica_manager.h"
#include "rpc_server.h"

#define FL_SERVER_HOST_MAX 256

typedef struct fl_endpoint {
    int32_t id;
    char host[FL_SERVER_HOST_MAX];
    int port;
} fl_endpoint_t;

typedef struct fl_server fl_server_t;

typedef struct fl_server_role {
    fl_server_t *server;
    int role; /* FL_ROLE_CS or FL_ROLE_TS */
    const fl_endpoint_t *self;
} fl_server_role_t;

typedef struct fl_delayed_fetch fl_delayed_fetch_t;

struct fl_server {
    fl_catalog_t catalog;
    fl_endpoint_t coordinator;
    size_t tablet_count;
    fl_endpoint_t tablets[FL_CATALOG_TABLET_SERVERS_MAX];
    fl_server_role_t coordinator_role;
    fl_server_role_t tablet_roles[FL_CATALOG_TABLET_SERVERS_MAX];
    fl_replica_manager_t replicas; /* the local tablet server's buckets */
    uv_loop_t *loop;               /* NULL: no long-poll (tests) */
    /* Per call: the connection of the request being handled, and whether
     * the handler kept the decoded request (a parked fetch frees it). */
    fl_rpc_conn_t *conn;
    bool request_kept;
    fl_delayed_fetch_t *parked; /* long-poll fetches waiting for data */
};

/* Fails every parked fetch's wait and frees them (shutdown). */
void fl_server_fetch_shutdown(fl_server_t *srv);

/* The rpc handler (fl_rpc_handler_fn) for a listener whose ctx is a
 * fl_server_role_t. */
int fl_server_handle(void *role_ctx, fl_rpc_conn_t *conn, const fl_frame_request_t *req,
                     fl_buf_t *out);

/* A handler of one API: req is the decoded request. On success it appends a
 * response with fl_server_reply and returns 0; on failure it returns a
 * Fluss error code with err set, and the dispatcher sends ERROR_RESPONSE. */
typedef int (*fl_api_fn)(fl_server_role_t *role, const ProtobufCMessage *req,
                         int32_t request_id, fl_buf_t *out, fl_error_t *err);

void fl_server_reply(fl_buf_t *out, int32_t request_id, const ProtobufCMessage *msg);
/* The code a failure travels with: Fluss codes pass through, local ones
 * (FLUSS_ERR__*) never reach the wire (I/O → STORAGE_EXCEPTION, others →
 * UNKNOWN_SERVER_ERROR). For whole-request and per-bucket errors alike. */
int fl_server_wire_code(int rc);
void fl_server_reply_error(fl_buf_t *out, int32_t request_id, int code, const char *message);

/* Handlers, by file. server_admin.c: */
int fl_api_create_database(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
int fl_api_drop_database(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
int fl_api_list_databases(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
int fl_api_database_exists(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
int fl_api_get_database_info(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
int fl_api_create_table(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
int fl_api_drop_table(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
int fl_api_get_table_info(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
int fl_api_list_tables(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
int fl_api_table_exists(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
int fl_api_get_table_schema(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
int fl_api_create_partition(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
int fl_api_drop_partition(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
int fl_api_list_partition_infos(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
/* server_log.c: */
int fl_api_init_writer(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
int fl_api_produce_log(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
int fl_api_fetch_log(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
int fl_api_list_offsets(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
int fl_api_get_fs_token(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);
/* server_metadata.c: */
int fl_api_get_metadata(fl_server_role_t *, const ProtobufCMessage *, int32_t, fl_buf_t *, fl_error_t *);

#endif
