/*
 * fuzz_common.h — shared by the fuzz harnesses: a check that names the
 * harness's expectation (asserts are on in every build, but assert() is
 * for the code under test) and the request/response message of every
 * Fluss API key, for decoding frames.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#include "fluss_api.pb-c.h"
#include "proto_api.h"

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

static inline const fuzz_api_messages_t *fuzz_api_find(int key) {
    for (size_t i = 0; i < FUZZ_API_COUNT; i++)
        if (fuzz_api_messages[i].key == key) return &fuzz_api_messages[i];
    return NULL;
}

#endif
