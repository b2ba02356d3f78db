/*
 * fluss_errors.h — the one table of error codes.
 *
 * Codes >= -1 are Fluss's wire error codes (frozen numbers, see
 * org.apache.fluss.rpc.protocol.Errors); they pass through servers and
 * clients unchanged. Codes <= -1000 are local errors of this library that
 * never travel on the wire. Everything that needs a name or a default
 * message for a code expands FLUSS_ERROR_TABLE.
 */
#ifndef FLUSS_ERRORS_H
#define FLUSS_ERRORS_H

/* X(name, code, default message) */
#define FLUSS_ERROR_TABLE(X)                                                   \
    X(UNKNOWN_SERVER_ERROR, -1, "The server experienced an unexpected error")  \
    X(NONE, 0, "Success")                                                      \
    X(NETWORK_EXCEPTION, 1, "The server disconnected or the network failed")  \
    X(UNSUPPORTED_VERSION, 2, "The version of the API is not supported")       \
    X(CORRUPT_MESSAGE, 3, "The message could not be decoded")                  \
    X(DATABASE_NOT_EXIST, 4, "The database does not exist")                    \
    X(DATABASE_NOT_EMPTY, 5, "The database is not empty")                      \
    X(DATABASE_ALREADY_EXIST, 6, "The database already exists")                \
    X(TABLE_NOT_EXIST, 7, "The table does not exist")                          \
    X(TABLE_ALREADY_EXIST, 8, "The table already exists")                      \
    X(SCHEMA_NOT_EXIST, 9, "The schema does not exist")                        \
    X(LOG_STORAGE_EXCEPTION, 10, "The log storage failed")                     \
    X(KV_STORAGE_EXCEPTION, 11, "The kv storage failed")                       \
    X(NOT_LEADER_OR_FOLLOWER, 12, "Not leader or follower")                    \
    X(RECORD_TOO_LARGE_EXCEPTION, 13, "The record is too large")               \
    X(CORRUPT_RECORD_EXCEPTION, 14, "The record is corrupt")                   \
    X(INVALID_TABLE_EXCEPTION, 15, "The table is invalid")                     \
    X(INVALID_DATABASE_EXCEPTION, 16, "The database is invalid")               \
    X(INVALID_REPLICATION_FACTOR, 17, "The replication factor is invalid")     \
    X(INVALID_REQUIRED_ACKS, 18, "The required acks are invalid")              \
    X(LOG_OFFSET_OUT_OF_RANGE_EXCEPTION, 19, "The log offset is out of range") \
    X(NON_PRIMARY_KEY_TABLE_EXCEPTION, 20, "The table has no primary key")     \
    X(UNKNOWN_TABLE_OR_BUCKET_EXCEPTION, 21, "Unknown table or bucket")        \
    X(INVALID_UPDATE_VERSION_EXCEPTION, 22, "The update version is invalid")   \
    X(INVALID_COORDINATOR_EXCEPTION, 23, "The coordinator is invalid")         \
    X(FENCED_LEADER_EPOCH_EXCEPTION, 24, "The leader epoch is fenced")         \
    X(REQUEST_TIME_OUT, 25, "The request timed out")                           \
    X(STORAGE_EXCEPTION, 26, "The storage failed")                             \
    X(OPERATION_NOT_ATTEMPTED_EXCEPTION, 27, "The operation was not attempted")\
    X(NOT_ENOUGH_REPLICAS_AFTER_APPEND_EXCEPTION, 28,                          \
      "Not enough replicas after append")                                      \
    X(NOT_ENOUGH_REPLICAS_EXCEPTION, 29, "Not enough replicas")                \
    X(SECURITY_TOKEN_EXCEPTION, 30, "The security token failed")               \
    X(OUT_OF_ORDER_SEQUENCE_EXCEPTION, 31, "The batch sequence is out of order")\
    X(DUPLICATE_SEQUENCE_EXCEPTION, 32, "The batch sequence is a duplicate")   \
    X(UNKNOWN_WRITER_ID_EXCEPTION, 33, "The writer id is unknown")             \
    X(INVALID_COLUMN_PROJECTION, 34, "The column projection is invalid")       \
    X(INVALID_TARGET_COLUMN, 35, "The target column is invalid")               \
    X(PARTITION_NOT_EXISTS, 36, "The partition does not exist")                \
    X(TABLE_NOT_PARTITIONED_EXCEPTION, 37, "The table is not partitioned")     \
    X(INVALID_TIMESTAMP_EXCEPTION, 38, "The timestamp is invalid")             \
    X(INVALID_CONFIG_EXCEPTION, 39, "The config is invalid")                   \
    X(LAKE_STORAGE_NOT_CONFIGURED_EXCEPTION, 40,                               \
      "The lake storage is not configured")                                    \
    X(KV_SNAPSHOT_NOT_EXIST, 41, "The kv snapshot does not exist")             \
    X(PARTITION_ALREADY_EXISTS, 42, "The partition already exists")            \
    X(PARTITION_SPEC_INVALID_EXCEPTION, 43, "The partition spec is invalid")   \
    X(LEADER_NOT_AVAILABLE_EXCEPTION, 44, "No leader is available")            \
    X(PARTITION_MAX_NUM_EXCEPTION, 45, "Too many partitions")                  \
    X(AUTHENTICATE_EXCEPTION, 46, "Authentication failed")                     \
    X(SECURITY_DISABLED_EXCEPTION, 47, "Security is disabled")                 \
    X(AUTHORIZATION_EXCEPTION, 48, "Authorization failed")                     \
    X(BUCKET_MAX_NUM_EXCEPTION, 49, "Too many buckets")                        \
    X(FENCED_TIERING_EPOCH_EXCEPTION, 50, "The tiering epoch is fenced")       \
    X(RETRIABLE_AUTHENTICATE_EXCEPTION, 51, "Authentication failed, retry")    \
    X(INVALID_SERVER_RACK_INFO_EXCEPTION, 52, "The server rack is invalid")    \
    X(LAKE_SNAPSHOT_NOT_EXIST, 53, "The lake snapshot does not exist")         \
    X(LAKE_TABLE_ALREADY_EXIST, 54, "The lake table already exists")           \
    X(INELIGIBLE_REPLICA_EXCEPTION, 55, "The replica is ineligible")           \
    X(INVALID_ALTER_TABLE_EXCEPTION, 56, "The table change is invalid")        \
    X(DELETION_DISABLED_EXCEPTION, 57, "Deletion is disabled")                 \
    X(SERVER_NOT_EXIST_EXCEPTION, 58, "The server does not exist")             \
    X(SEVER_TAG_ALREADY_EXIST_EXCEPTION, 59, "The server tag already exists")  \
    X(SEVER_TAG_NOT_EXIST_EXCEPTION, 60, "The server tag does not exist")      \
    X(REBALANCE_FAILURE_EXCEPTION, 61, "The rebalance failed")                 \
    X(NO_REBALANCE_IN_PROGRESS_EXCEPTION, 62, "No rebalance is in progress")   \
    X(INVALID_PRODUCER_ID_EXCEPTION, 63, "The producer id is invalid")         \
    X(CONFIG_EXCEPTION, 64, "The configuration is wrong")                      \
    X(NOT_COORDINATOR_LEADER_EXCEPTION, 65, "Not the coordinator leader")      \
    X(SCANNER_EXPIRED, 66, "The scanner expired")                              \
    X(UNKNOWN_SCANNER_ID, 67, "The scanner id is unknown")                     \
    X(INVALID_SCAN_REQUEST, 68, "The scan request is invalid")                 \
    X(TOO_MANY_SCANNERS, 69, "Too many scanners")                              \
    X(DISK_WRITE_LOCKED, 70, "Disk writes are locked")                         \
    X(INSUFFICIENT_KV_LEADER_REPLICA_CAPACITY, 71,                             \
      "Insufficient kv leader replica capacity")                               \
    X(STORAGE_BACKPRESSURE_EXCEPTION, 72, "The storage applies backpressure")  \
    X(HISTORICAL_PARTITION_THROTTLED, 73, "The historical partition is throttled")\
    /* local band: never on the wire */                                        \
    X(_TRANSPORT, -1001, "Transport failure")                                  \
    X(_TIMED_OUT, -1002, "Timed out")                                          \
    X(_CORRUPT, -1003, "Corrupt data")                                         \
    X(_INVALID_ARG, -1004, "Invalid argument")                                 \
    X(_IO, -1005, "I/O error")                                                 \
    X(_NO_MEMORY, -1006, "Out of memory")                                      \
    X(_STATE, -1007, "Illegal state")                                          \
    X(_CONFLICT, -1008, "Concurrent commit")

typedef enum fluss_err {
#define FLUSS_ERR_ENUM_(name, code, msg) FLUSS_ERR_##name = (code),
    FLUSS_ERROR_TABLE(FLUSS_ERR_ENUM_)
#undef FLUSS_ERR_ENUM_
} fluss_err_t;

#endif
