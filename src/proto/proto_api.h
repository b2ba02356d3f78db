/*
 * proto_api.h — the Fluss API keys (org.apache.fluss.rpc.protocol.ApiKeys):
 * number, name, the version range the protocol defines, and which server
 * role serves it (CS = coordinator, TS = tablet server). Whether fluss-c
 * implements an API is the server's business, not this table's.
 */
#ifndef FL_PROTO_API_H
#define FL_PROTO_API_H

#include <stdint.h>

#define FL_ROLE_CS 1
#define FL_ROLE_TS 2

/* X(name, key, min_version, max_version, roles) */
#define FL_API_TABLE(X)                                                    \
    X(API_VERSIONS, 1000, 0, 0, FL_ROLE_CS | FL_ROLE_TS)                   \
    X(CREATE_DATABASE, 1001, 0, 0, FL_ROLE_CS)                             \
    X(DROP_DATABASE, 1002, 0, 0, FL_ROLE_CS)                               \
    X(LIST_DATABASES, 1003, 0, 0, FL_ROLE_CS | FL_ROLE_TS)                 \
    X(DATABASE_EXISTS, 1004, 0, 0, FL_ROLE_CS | FL_ROLE_TS)                \
    X(CREATE_TABLE, 1005, 0, 0, FL_ROLE_CS)                                \
    X(DROP_TABLE, 1006, 0, 0, FL_ROLE_CS)                                  \
    X(GET_TABLE_INFO, 1007, 0, 0, FL_ROLE_CS | FL_ROLE_TS)                 \
    X(LIST_TABLES, 1008, 0, 0, FL_ROLE_CS | FL_ROLE_TS)                    \
    X(LIST_PARTITION_INFOS, 1009, 0, 0, FL_ROLE_CS | FL_ROLE_TS)           \
    X(TABLE_EXISTS, 1010, 0, 0, FL_ROLE_CS | FL_ROLE_TS)                   \
    X(GET_TABLE_SCHEMA, 1011, 0, 0, FL_ROLE_CS | FL_ROLE_TS)               \
    X(GET_METADATA, 1012, 0, 0, FL_ROLE_CS | FL_ROLE_TS)                   \
    X(UPDATE_METADATA, 1013, 0, 0, FL_ROLE_TS)                             \
    X(PRODUCE_LOG, 1014, 0, 0, FL_ROLE_TS)                                 \
    X(FETCH_LOG, 1015, 0, 0, FL_ROLE_TS)                                   \
    X(PUT_KV, 1016, 0, 1, FL_ROLE_TS)                                      \
    X(LOOKUP, 1017, 0, 1, FL_ROLE_TS)                                      \
    X(NOTIFY_LEADER_AND_ISR, 1018, 0, 0, FL_ROLE_TS)                       \
    X(STOP_REPLICA, 1019, 0, 0, FL_ROLE_TS)                                \
    X(ADJUST_ISR, 1020, 0, 0, FL_ROLE_CS)                                  \
    X(LIST_OFFSETS, 1021, 0, 0, FL_ROLE_TS)                                \
    X(COMMIT_KV_SNAPSHOT, 1022, 0, 0, FL_ROLE_CS)                          \
    X(GET_LATEST_KV_SNAPSHOTS, 1023, 0, 0, FL_ROLE_CS | FL_ROLE_TS)        \
    X(GET_KV_SNAPSHOT_METADATA, 1024, 0, 0, FL_ROLE_CS | FL_ROLE_TS)       \
    X(GET_FILESYSTEM_SECURITY_TOKEN, 1025, 0, 0, FL_ROLE_CS | FL_ROLE_TS)  \
    X(INIT_WRITER, 1026, 0, 0, FL_ROLE_TS)                                 \
    X(COMMIT_REMOTE_LOG_MANIFEST, 1027, 0, 0, FL_ROLE_CS)                  \
    X(NOTIFY_REMOTE_LOG_OFFSETS, 1028, 0, 0, FL_ROLE_TS)                   \
    X(NOTIFY_KV_SNAPSHOT_OFFSET, 1029, 0, 0, FL_ROLE_TS)                   \
    X(COMMIT_LAKE_TABLE_SNAPSHOT, 1030, 0, 0, FL_ROLE_CS)                  \
    X(NOTIFY_LAKE_TABLE_OFFSET, 1031, 0, 0, FL_ROLE_TS)                    \
    X(GET_LAKE_SNAPSHOT, 1032, 0, 0, FL_ROLE_CS | FL_ROLE_TS)              \
    X(LIMIT_SCAN, 1033, 0, 0, FL_ROLE_TS)                                  \
    X(PREFIX_LOOKUP, 1034, 0, 1, FL_ROLE_TS)                               \
    X(GET_DATABASE_INFO, 1035, 0, 0, FL_ROLE_CS | FL_ROLE_TS)              \
    X(CREATE_PARTITION, 1036, 0, 0, FL_ROLE_CS)                            \
    X(DROP_PARTITION, 1037, 0, 0, FL_ROLE_CS)                              \
    X(AUTHENTICATE, 1038, 0, 0, FL_ROLE_CS | FL_ROLE_TS)                   \
    X(CREATE_ACLS, 1039, 0, 0, FL_ROLE_CS)                                 \
    X(LIST_ACLS, 1040, 0, 0, FL_ROLE_CS | FL_ROLE_TS)                      \
    X(DROP_ACLS, 1041, 0, 0, FL_ROLE_CS)                                   \
    X(LAKE_TIERING_HEARTBEAT, 1042, 0, 0, FL_ROLE_CS)                      \
    X(CONTROLLED_SHUTDOWN, 1043, 0, 0, FL_ROLE_CS)                         \
    X(ALTER_TABLE, 1044, 0, 0, FL_ROLE_CS)                                 \
    X(DESCRIBE_CLUSTER_CONFIGS, 1045, 0, 0, FL_ROLE_CS | FL_ROLE_TS)       \
    X(ALTER_CLUSTER_CONFIGS, 1046, 0, 0, FL_ROLE_CS)                       \
    X(ADD_SERVER_TAG, 1047, 0, 0, FL_ROLE_CS)                              \
    X(REMOVE_SERVER_TAG, 1048, 0, 0, FL_ROLE_CS)                           \
    X(REBALANCE, 1049, 0, 0, FL_ROLE_CS)                                   \
    X(LIST_REBALANCE_PROGRESS, 1050, 0, 0, FL_ROLE_CS)                     \
    X(CANCEL_REBALANCE, 1051, 0, 0, FL_ROLE_CS)                            \
    X(PREPARE_LAKE_TABLE_SNAPSHOT, 1052, 0, 0, FL_ROLE_CS)                 \
    X(REGISTER_PRODUCER_OFFSETS, 1053, 0, 0, FL_ROLE_CS)                   \
    X(GET_PRODUCER_OFFSETS, 1054, 0, 0, FL_ROLE_CS)                        \
    X(DELETE_PRODUCER_OFFSETS, 1055, 0, 0, FL_ROLE_CS)                     \
    X(ACQUIRE_KV_SNAPSHOT_LEASE, 1056, 0, 0, FL_ROLE_CS)                   \
    X(RELEASE_KV_SNAPSHOT_LEASE, 1057, 0, 0, FL_ROLE_CS)                   \
    X(DROP_KV_SNAPSHOT_LEASE, 1058, 0, 0, FL_ROLE_CS)                      \
    X(GET_TABLE_STATS, 1059, 0, 0, FL_ROLE_TS)                             \
    X(ALTER_DATABASE, 1060, 0, 0, FL_ROLE_CS)                              \
    X(SCAN_KV, 1061, 0, 0, FL_ROLE_TS)                                     \
    X(GET_CLUSTER_HEALTH, 1062, 0, 0, FL_ROLE_CS | FL_ROLE_TS)             \
    X(LIST_REMOTE_LOG_MANIFESTS, 1063, 0, 0, FL_ROLE_CS)                   \
    X(LIST_KV_SNAPSHOTS, 1064, 0, 0, FL_ROLE_CS)

/* fluss-c's own APIs, on keys Fluss does not use (written down in
 * KNOWN_DIFFERENCES.md): inter-server ones, served on internal listeners
 * only, and LAKE_TIER_NOW, an admin call of the CLI. */
#define FL_API_OWN_TABLE(X)                                                \
    X(RESERVE_AUTO_INCREMENT, 1900, 0, 0, FL_ROLE_CS)                     \
    X(LIST_LEASED_KV_SNAPSHOTS, 1901, 0, 0, FL_ROLE_CS)                   \
    X(LIST_LEADER_EPOCHS, 1902, 0, 0, FL_ROLE_TS)                         \
    X(TIER_LAKE_BUCKET, 1903, 0, 0, FL_ROLE_TS)                           \
    X(LAKE_TIER_NOW, 1904, 0, 0, FL_ROLE_CS)                              \
    X(NOTIFY_ACLS, 1905, 0, 0, FL_ROLE_TS)                                \
    X(FORWARDED, 1906, 0, 0, FL_ROLE_CS)                                  \
    X(ALTER_SCRAM_CREDENTIALS, 1907, 0, 0, FL_ROLE_CS)                    \
    X(LIST_SCRAM_USERS, 1908, 0, 0, FL_ROLE_CS)                           \
    X(NOTIFY_SCRAM_CREDENTIALS, 1909, 0, 0, FL_ROLE_TS)

enum fl_api_key {
#define FL_API_ENUM_(name, key, lo, hi, roles) FL_API_##name = (key),
    FL_API_TABLE(FL_API_ENUM_)
    FL_API_OWN_TABLE(FL_API_ENUM_)
#undef FL_API_ENUM_
};

#define FL_API_OWN_KEY_MIN 1900 /* fluss-c's own keys start here */
#define FL_API_KEY_MIN 1000
#define FL_API_KEY_MAX 1064

typedef struct fl_api_info {
    int16_t key;
    int16_t min_version;
    int16_t max_version;
    int roles;
    const char *name;
} fl_api_info_t;

/* NULL for a key Fluss does not define. */
const fl_api_info_t *fl_api_info(int key);

#endif
