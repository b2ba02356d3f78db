/*
 * fuzz_server_dispatch.c — fuzzes the whole request path of a flussd
 * process: the input is a byte stream of request frames, as a client would
 * send it; every whole frame goes through fl_server_handle (API key, version
 * and role checks, protobuf decode, the admin and metadata handlers, the
 * catalog and the embedded metastore) once as the coordinator and once as
 * the tablet server.
 *
 * The server is built once per process the way server_main.c builds it: an
 * embedded metastore in a fresh mkdtemp dir under /dev/shm (else /tmp),
 * the catalog, one coordinator and one tablet endpoint. Creates and drops
 * are durable (fsync), so state carries over between inputs; every
 * FUZZ_RESET_EVERY inputs all tables and non-default databases are dropped
 * through the catalog so the store does not grow without bound. The dir is
 * removed at exit.
 *
 * Invariants checked: the handler returns 0 and appends exactly one
 * response frame, which parses, is SUCCESS or ERROR (never SERVER_FAILURE),
 * echoes the request id, and whose body decodes as the API's response
 * message or as an ErrorResponse with a wire error code (>= -1, not NONE).
 */
#define _GNU_SOURCE /* mkdtemp, nftw */
#include <ftw.h>
#include <protobuf-c/protobuf-c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common_buf.h"
#include "common_log.h"
#include "coordinator_catalog.h"
#include "fluss_api.pb-c.h"
#include "metastore.h"
#include "proto_api.h"
#include "proto_frame.h"
#include "server_node.h"

#define FUZZ_FRAME_MAX (1u << 20)
#define FUZZ_FRAMES_PER_INPUT_MAX 64
#define FUZZ_RESET_EVERY 32
#define FUZZ_DIR_MAX 256

/* assert() is compiled out in release builds; the harness checks always. */
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

/* The process-wide fixture; libFuzzer gives us no other place for it. */
static struct {
    int ready;
    char dir[FUZZ_DIR_MAX];
    fl_metastore_t *ms;
    fl_server_t server;
    unsigned long inputs;
    int verbose; /* FUZZ_VERBOSE=1: one line per response, to check seeds */
} fuzz;

static const ProtobufCMessageDescriptor *fuzz_response_descriptor(int key) {
    for (size_t i = 0; i < FUZZ_API_COUNT; i++)
        if (fuzz_api_messages[i].key == key) return fuzz_api_messages[i].response;
    return NULL;
}

static int fuzz_rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void fuzz_teardown(void) {
    if (!fuzz.ready) return;
    fuzz.ms->ops->close(fuzz.ms);
    nftw(fuzz.dir, fuzz_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    fuzz.ready = 0;
}

static void fuzz_setup(void) {
    struct stat st;
    const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
                               access("/dev/shm", W_OK) == 0
                           ? "/dev/shm"
                           : "/tmp";
    snprintf(fuzz.dir, sizeof(fuzz.dir), "%s/fluss-fuzz-dispatch-XXXXXX", base);
    FUZZ_CHECK(mkdtemp(fuzz.dir) != NULL);
    fl_log_set_level(FL_LOG_ERROR);
    fuzz.verbose = getenv("FUZZ_VERBOSE") != NULL;
    fl_error_t err;
    fl_err_clear(&err);
    FUZZ_CHECK(fl_metastore_embedded_open(fuzz.dir, &fuzz.ms, &err) == 0);
    fl_server_t *s = &fuzz.server;
    s->coordinator = (fl_endpoint_t){.id = 0, .host = "127.0.0.1", .port = 9123};
    s->tablets[0] = (fl_endpoint_t){.id = 0, .host = "127.0.0.1", .port = 9124};
    s->tablet_count = 1;
    fl_table_defaults_t defaults = {1, 1, 128000};
    int32_t tablet_ids[1] = {0};
    FUZZ_CHECK(fl_catalog_init(&s->catalog, fuzz.ms, &defaults, tablet_ids, 1, &err) == 0);
    s->coordinator_role = (fl_server_role_t){s, FL_ROLE_CS, &s->coordinator};
    s->tablet_roles[0] = (fl_server_role_t){s, FL_ROLE_TS, &s->tablets[0]};
    fuzz.ready = 1;
    atexit(fuzz_teardown);
}

/* Back to the initial state: only the default database, no tables. Names
 * are copied first, since store views die with the next mutation. */
static void fuzz_reset_store(void) {
    fl_catalog_t *cat = &fuzz.server.catalog;
    fl_metastore_t *ms = fuzz.ms;
    fl_error_t err;
    char name[FL_NAME_LEN_MAX + 1], db[FL_NAME_LEN_MAX + 1];
    while (ms->ops->table_count(ms) > 0) {
        const fl_ms_table_t *t = ms->ops->table_at(ms, 0);
        snprintf(db, sizeof(db), "%s", t->database);
        snprintf(name, sizeof(name), "%s", t->name);
        fl_err_clear(&err);
        if (fl_catalog_drop_table(cat, db, name, false, &err)) return; /* latched store */
    }
    for (size_t i = 0; i < ms->ops->db_count(ms);) {
        const fl_ms_database_t *d = ms->ops->db_at(ms, i);
        if (strcmp(d->name, FL_CATALOG_DEFAULT_DATABASE) == 0) {
            i++;
            continue;
        }
        snprintf(name, sizeof(name), "%s", d->name);
        fl_err_clear(&err);
        if (fl_catalog_drop_database(cat, name, false, true, &err)) return;
    }
    fl_err_clear(&err);
    (void)fl_catalog_create_database(cat, FL_CATALOG_DEFAULT_DATABASE, NULL, 0, true, &err);
}

static void fuzz_check_body(const ProtobufCMessageDescriptor *d, const fl_frame_response_t *r,
                            int is_error, const fl_server_role_t *role, int api_key) {
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, r->body_len, r->body);
    FUZZ_CHECK(m != NULL);
    const Fluss__ErrorResponse *e = is_error ? (const Fluss__ErrorResponse *)m : NULL;
    if (e) FUZZ_CHECK(e->error_code >= -1 && e->error_code != 0);
    if (fuzz.verbose)
        fprintf(stderr, "%s api %d id %d: %s %d %s\n", role->role == FL_ROLE_CS ? "CS" : "TS",
                api_key, r->request_id, e ? "error" : "ok", e ? e->error_code : 0,
                e && e->error_message ? e->error_message : "");
    protobuf_c_message_free_unpacked(m, NULL);
}

static void fuzz_handle(fl_server_role_t *role, const fl_frame_request_t *req) {
    fl_buf_t out;
    fl_buf_init(&out);
    FUZZ_CHECK(fl_server_handle(role, NULL, req, &out) == 0);
    size_t frame_bytes = 0;
    FUZZ_CHECK(fl_frame_peek(out.data, out.len, SIZE_MAX, &frame_bytes) == FL_FRAME_OK);
    FUZZ_CHECK(frame_bytes == out.len); /* exactly one response per request */
    fl_frame_response_t r;
    FUZZ_CHECK(fl_frame_parse_response(out.data, out.len, &r) == FL_FRAME_OK);
    FUZZ_CHECK(r.type == FL_RESPONSE_SUCCESS || r.type == FL_RESPONSE_ERROR);
    FUZZ_CHECK(r.request_id == req->request_id);
    if (r.type == FL_RESPONSE_ERROR) {
        fuzz_check_body(&fluss__error_response__descriptor, &r, 1, role, req->api_key);
    } else {
        const ProtobufCMessageDescriptor *d = fuzz_response_descriptor(req->api_key);
        FUZZ_CHECK(d != NULL); /* success only for an API Fluss defines */
        fuzz_check_body(d, &r, 0, role, req->api_key);
    }
    fl_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!fuzz.ready) fuzz_setup();
    if (++fuzz.inputs % FUZZ_RESET_EVERY == 0) fuzz_reset_store();
    size_t pos = 0;
    for (int n = 0; n < FUZZ_FRAMES_PER_INPUT_MAX && pos < size; n++) {
        size_t frame_bytes = 0;
        if (fl_frame_peek(data + pos, size - pos, FUZZ_FRAME_MAX, &frame_bytes) != FL_FRAME_OK)
            break;
        fl_frame_request_t req;
        /* The rpc layer closes the connection here, as it does on a bad peek. */
        if (fl_frame_parse_request(data + pos, frame_bytes, &req) != FL_FRAME_OK) break;
        fuzz_handle(&fuzz.server.coordinator_role, &req);
        fuzz_handle(&fuzz.server.tablet_roles[0], &req);
        pos += frame_bytes;
    }
    return 0;
}
