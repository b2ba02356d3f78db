/*
 * fuzz_proto_frame.c — fuzzes the Fluss RPC frame layer (proto_frame.h)
 * and the protobuf-c request and response decoders behind it. The input is
 * a byte stream as a peer would send it: it is cut into frames with
 * fl_frame_peek, each frame is parsed as a request and its body unpacked
 * with the request message of its API key (every key proto_api.h defines),
 * and parsed again as a response whose body is unpacked as ErrorResponse
 * (type 1) or as the response message of an API chosen by the request id
 * (type 0), since a response frame does not name its API.
 *
 * Invariants checked: peek never sizes a frame past the input or under the
 * length field; parsed header fields and body views stay inside the frame.
 */
#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fluss_api.pb-c.h"
#include "proto_api.h"
#include "proto_frame.h"

#define FUZZ_FRAME_MAX (1u << 20)

/* FUZZ_CHECK() is compiled out in release builds; the harness checks always. */
#define FUZZ_CHECK(c)                                                            \
    do {                                                                         \
        if (!(c)) {                                                              \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
            abort();                                                             \
        }                                                                        \
    } while (0)

typedef struct fuzz_api_messages {
    int key;
    const ProtobufCMessageDescriptor *request;
    const ProtobufCMessageDescriptor *response;
} fuzz_api_messages_t;

static const fuzz_api_messages_t fuzz_api_messages[] = {
    {FL_API_API_VERSIONS, &fluss__api_versions_request__descriptor,
     &fluss__api_versions_response__descriptor},
    {FL_API_CREATE_DATABASE, &fluss__create_database_request__descriptor,
     &fluss__create_database_response__descriptor},
    {FL_API_DROP_DATABASE, &fluss__drop_database_request__descriptor,
     &fluss__drop_database_response__descriptor},
    {FL_API_LIST_DATABASES, &fluss__list_databases_request__descriptor,
     &fluss__list_databases_response__descriptor},
    {FL_API_DATABASE_EXISTS, &fluss__database_exists_request__descriptor,
     &fluss__database_exists_response__descriptor},
    {FL_API_CREATE_TABLE, &fluss__create_table_request__descriptor,
     &fluss__create_table_response__descriptor},
    {FL_API_DROP_TABLE, &fluss__drop_table_request__descriptor,
     &fluss__drop_table_response__descriptor},
    {FL_API_GET_TABLE_INFO, &fluss__get_table_info_request__descriptor,
     &fluss__get_table_info_response__descriptor},
    {FL_API_LIST_TABLES, &fluss__list_tables_request__descriptor,
     &fluss__list_tables_response__descriptor},
    {FL_API_LIST_PARTITION_INFOS, &fluss__list_partition_infos_request__descriptor,
     &fluss__list_partition_infos_response__descriptor},
    {FL_API_TABLE_EXISTS, &fluss__table_exists_request__descriptor,
     &fluss__table_exists_response__descriptor},
    {FL_API_GET_TABLE_SCHEMA, &fluss__get_table_schema_request__descriptor,
     &fluss__get_table_schema_response__descriptor},
    {FL_API_GET_METADATA, &fluss__metadata_request__descriptor,
     &fluss__metadata_response__descriptor},
    {FL_API_UPDATE_METADATA, &fluss__update_metadata_request__descriptor,
     &fluss__update_metadata_response__descriptor},
    {FL_API_PRODUCE_LOG, &fluss__produce_log_request__descriptor,
     &fluss__produce_log_response__descriptor},
    {FL_API_FETCH_LOG, &fluss__fetch_log_request__descriptor,
     &fluss__fetch_log_response__descriptor},
    {FL_API_PUT_KV, &fluss__put_kv_request__descriptor,
     &fluss__put_kv_response__descriptor},
    {FL_API_LOOKUP, &fluss__lookup_request__descriptor,
     &fluss__lookup_response__descriptor},
    {FL_API_NOTIFY_LEADER_AND_ISR, &fluss__notify_leader_and_isr_request__descriptor,
     &fluss__notify_leader_and_isr_response__descriptor},
    {FL_API_STOP_REPLICA, &fluss__stop_replica_request__descriptor,
     &fluss__stop_replica_response__descriptor},
    {FL_API_ADJUST_ISR, &fluss__adjust_isr_request__descriptor,
     &fluss__adjust_isr_response__descriptor},
    {FL_API_LIST_OFFSETS, &fluss__list_offsets_request__descriptor,
     &fluss__list_offsets_response__descriptor},
    {FL_API_COMMIT_KV_SNAPSHOT, &fluss__commit_kv_snapshot_request__descriptor,
     &fluss__commit_kv_snapshot_response__descriptor},
    {FL_API_GET_LATEST_KV_SNAPSHOTS, &fluss__get_latest_kv_snapshots_request__descriptor,
     &fluss__get_latest_kv_snapshots_response__descriptor},
    {FL_API_GET_KV_SNAPSHOT_METADATA, &fluss__get_kv_snapshot_metadata_request__descriptor,
     &fluss__get_kv_snapshot_metadata_response__descriptor},
    {FL_API_GET_FILESYSTEM_SECURITY_TOKEN, &fluss__get_file_system_security_token_request__descriptor,
     &fluss__get_file_system_security_token_response__descriptor},
    {FL_API_INIT_WRITER, &fluss__init_writer_request__descriptor,
     &fluss__init_writer_response__descriptor},
    {FL_API_COMMIT_REMOTE_LOG_MANIFEST, &fluss__commit_remote_log_manifest_request__descriptor,
     &fluss__commit_remote_log_manifest_response__descriptor},
    {FL_API_NOTIFY_REMOTE_LOG_OFFSETS, &fluss__notify_remote_log_offsets_request__descriptor,
     &fluss__notify_remote_log_offsets_response__descriptor},
    {FL_API_NOTIFY_KV_SNAPSHOT_OFFSET, &fluss__notify_kv_snapshot_offset_request__descriptor,
     &fluss__notify_kv_snapshot_offset_response__descriptor},
    {FL_API_COMMIT_LAKE_TABLE_SNAPSHOT, &fluss__commit_lake_table_snapshot_request__descriptor,
     &fluss__commit_lake_table_snapshot_response__descriptor},
    {FL_API_NOTIFY_LAKE_TABLE_OFFSET, &fluss__notify_lake_table_offset_request__descriptor,
     &fluss__notify_lake_table_offset_response__descriptor},
    {FL_API_GET_LAKE_SNAPSHOT, &fluss__get_lake_snapshot_request__descriptor,
     &fluss__get_lake_snapshot_response__descriptor},
    {FL_API_LIMIT_SCAN, &fluss__limit_scan_request__descriptor,
     &fluss__limit_scan_response__descriptor},
    {FL_API_PREFIX_LOOKUP, &fluss__prefix_lookup_request__descriptor,
     &fluss__prefix_lookup_response__descriptor},
    {FL_API_GET_DATABASE_INFO, &fluss__get_database_info_request__descriptor,
     &fluss__get_database_info_response__descriptor},
    {FL_API_CREATE_PARTITION, &fluss__create_partition_request__descriptor,
     &fluss__create_partition_response__descriptor},
    {FL_API_DROP_PARTITION, &fluss__drop_partition_request__descriptor,
     &fluss__drop_partition_response__descriptor},
    {FL_API_AUTHENTICATE, &fluss__authenticate_request__descriptor,
     &fluss__authenticate_response__descriptor},
    {FL_API_CREATE_ACLS, &fluss__create_acls_request__descriptor,
     &fluss__create_acls_response__descriptor},
    {FL_API_LIST_ACLS, &fluss__list_acls_request__descriptor,
     &fluss__list_acls_response__descriptor},
    {FL_API_DROP_ACLS, &fluss__drop_acls_request__descriptor,
     &fluss__drop_acls_response__descriptor},
    {FL_API_LAKE_TIERING_HEARTBEAT, &fluss__lake_tiering_heartbeat_request__descriptor,
     &fluss__lake_tiering_heartbeat_response__descriptor},
    {FL_API_CONTROLLED_SHUTDOWN, &fluss__controlled_shutdown_request__descriptor,
     &fluss__controlled_shutdown_response__descriptor},
    {FL_API_ALTER_TABLE, &fluss__alter_table_request__descriptor,
     &fluss__alter_table_response__descriptor},
    {FL_API_DESCRIBE_CLUSTER_CONFIGS, &fluss__describe_cluster_configs_request__descriptor,
     &fluss__describe_cluster_configs_response__descriptor},
    {FL_API_ALTER_CLUSTER_CONFIGS, &fluss__alter_cluster_configs_request__descriptor,
     &fluss__alter_cluster_configs_response__descriptor},
    {FL_API_ADD_SERVER_TAG, &fluss__add_server_tag_request__descriptor,
     &fluss__add_server_tag_response__descriptor},
    {FL_API_REMOVE_SERVER_TAG, &fluss__remove_server_tag_request__descriptor,
     &fluss__remove_server_tag_response__descriptor},
    {FL_API_REBALANCE, &fluss__rebalance_request__descriptor,
     &fluss__rebalance_response__descriptor},
    {FL_API_LIST_REBALANCE_PROGRESS, &fluss__list_rebalance_progress_request__descriptor,
     &fluss__list_rebalance_progress_response__descriptor},
    {FL_API_CANCEL_REBALANCE, &fluss__cancel_rebalance_request__descriptor,
     &fluss__cancel_rebalance_response__descriptor},
    {FL_API_PREPARE_LAKE_TABLE_SNAPSHOT, &fluss__prepare_lake_table_snapshot_request__descriptor,
     &fluss__prepare_lake_table_snapshot_response__descriptor},
    {FL_API_REGISTER_PRODUCER_OFFSETS, &fluss__register_producer_offsets_request__descriptor,
     &fluss__register_producer_offsets_response__descriptor},
    {FL_API_GET_PRODUCER_OFFSETS, &fluss__get_producer_offsets_request__descriptor,
     &fluss__get_producer_offsets_response__descriptor},
    {FL_API_DELETE_PRODUCER_OFFSETS, &fluss__delete_producer_offsets_request__descriptor,
     &fluss__delete_producer_offsets_response__descriptor},
    {FL_API_ACQUIRE_KV_SNAPSHOT_LEASE, &fluss__acquire_kv_snapshot_lease_request__descriptor,
     &fluss__acquire_kv_snapshot_lease_response__descriptor},
    {FL_API_RELEASE_KV_SNAPSHOT_LEASE, &fluss__release_kv_snapshot_lease_request__descriptor,
     &fluss__release_kv_snapshot_lease_response__descriptor},
    {FL_API_DROP_KV_SNAPSHOT_LEASE, &fluss__drop_kv_snapshot_lease_request__descriptor,
     &fluss__drop_kv_snapshot_lease_response__descriptor},
    {FL_API_GET_TABLE_STATS, &fluss__get_table_stats_request__descriptor,
     &fluss__get_table_stats_response__descriptor},
    {FL_API_ALTER_DATABASE, &fluss__alter_database_request__descriptor,
     &fluss__alter_database_response__descriptor},
    {FL_API_SCAN_KV, &fluss__scan_kv_request__descriptor,
     &fluss__scan_kv_response__descriptor},
    {FL_API_GET_CLUSTER_HEALTH, &fluss__get_cluster_health_request__descriptor,
     &fluss__get_cluster_health_response__descriptor},
    {FL_API_LIST_REMOTE_LOG_MANIFESTS, &fluss__list_remote_log_manifests_request__descriptor,
     &fluss__list_remote_log_manifests_response__descriptor},
    {FL_API_LIST_KV_SNAPSHOTS, &fluss__list_kv_snapshots_request__descriptor,
     &fluss__list_kv_snapshots_response__descriptor},
};

#define FUZZ_API_COUNT (sizeof(fuzz_api_messages) / sizeof(fuzz_api_messages[0]))

static const fuzz_api_messages_t *fuzz_api_find(int key) {
    for (size_t i = 0; i < FUZZ_API_COUNT; i++)
        if (fuzz_api_messages[i].key == key) return &fuzz_api_messages[i];
    return NULL;
}

static void fuzz_unpack(const ProtobufCMessageDescriptor *d, const uint8_t *body, size_t len) {
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, len, body);
    if (!m) return;
    /* A decoded message is valid and packs again to its computed size. */
    FUZZ_CHECK(protobuf_c_message_check(m));
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *out = malloc(n ? n : 1);
    FUZZ_CHECK(out != NULL);
    FUZZ_CHECK(protobuf_c_message_pack(m, out) == n);
    free(out);
    protobuf_c_message_free_unpacked(m, NULL);
}

static void fuzz_request(const uint8_t *frame, size_t len) {
    fl_frame_request_t req;
    if (fl_frame_parse_request(frame, len, &req) != FL_FRAME_OK) {
        FUZZ_CHECK(len < FL_FRAME_LEN_BYTES + FL_FRAME_REQUEST_HEADER_BYTES);
        return;
    }
    FUZZ_CHECK(req.body == frame + FL_FRAME_LEN_BYTES + FL_FRAME_REQUEST_HEADER_BYTES);
    FUZZ_CHECK(req.body + req.body_len == frame + len);
    const fl_api_info_t *info = fl_api_info(req.api_key);
    const fuzz_api_messages_t *api = fuzz_api_find(req.api_key);
    /* Every key the API table defines has its messages here, and no other. */
    FUZZ_CHECK((info == NULL) == (api == NULL));
    if (info) FUZZ_CHECK(info->key == req.api_key && info->min_version <= info->max_version);
    if (api) fuzz_unpack(api->request, req.body, req.body_len);
}

static void fuzz_response(const uint8_t *frame, size_t len) {
    fl_frame_response_t resp;
    if (fl_frame_parse_response(frame, len, &resp) != FL_FRAME_OK) return;
    FUZZ_CHECK(resp.body >= frame && resp.body + resp.body_len == frame + len);
    if (resp.type == FL_RESPONSE_ERROR || resp.type == FL_RESPONSE_SERVER_FAILURE) {
        fuzz_unpack(&fluss__error_response__descriptor, resp.body, resp.body_len);
    } else if (resp.type == FL_RESPONSE_SUCCESS) {
        size_t i = (uint32_t)resp.request_id % FUZZ_API_COUNT;
        fuzz_unpack(fuzz_api_messages[i].response, resp.body, resp.body_len);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t pos = 0;
    while (pos < size) {
        size_t frame_bytes = 0;
        enum fl_frame_status st = fl_frame_peek(data + pos, size - pos, FUZZ_FRAME_MAX,
                                                &frame_bytes);
        if (st != FL_FRAME_OK) {
            FUZZ_CHECK(st == FL_FRAME_NEED_MORE || st == FL_FRAME_TOO_LARGE);
            break;
        }
        FUZZ_CHECK(frame_bytes >= FL_FRAME_LEN_BYTES && frame_bytes <= size - pos);
        FUZZ_CHECK(frame_bytes <= FUZZ_FRAME_MAX + FL_FRAME_LEN_BYTES);
        fuzz_request(data + pos, frame_bytes);
        fuzz_response(data + pos, frame_bytes);
        pos += frame_bytes;
    }
    return 0;
}
