/*
 * test_server_push.c — the coordinator and its tablet servers talk only in
 * messages (server_push.h, server_tablet_control.c, server_call.h), in an
 * in-process local cluster of one coordinator and two tablet servers:
 *
 * - DDL through the coordinator's dispatcher reaches each tablet server's
 *   table of tables: every schema by id after an ALTER, partitions, bucket
 *   leaders; led buckets are opened on their leader only; a dropped
 *   partition's and a dropped table's directories go from the server that
 *   led them. (The coordinator waits up to 1 s for its messages' answers
 *   before it answers; a sanitizer build on a slow machine can take longer,
 *   so each effect is waited for, up to 30 s, not assumed.)
 * - Inter-server APIs are refused on client listeners (UPDATE_METADATA on
 *   the tablet server's, INIT_WRITER and RESERVE_AUTO_INCREMENT on the
 *   coordinator's) and served on internal ones; a tablet server passes a
 *   client's INIT_WRITER and catalog reads on to the coordinator.
 * - An UPDATE_METADATA that does not hold a usable table is refused with
 *   CORRUPT_MESSAGE and changes nothing.
 * - Fencing: a tablet server refuses the coordinator's messages from an
 *   epoch older than the newest it has seen (INVALID_COORDINATOR) and a
 *   bucket's leadership in a leader epoch older than its replica's
 *   (FENCED_LEADER_EPOCH), changing nothing; the coordinator refuses a
 *   CONTROLLED_SHUTDOWN from a registration that is not the live one.
 * - A tablet server the coordinator could not reach for a while is told
 *   every table again, and the drops it missed, once it can be.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "common_alloc.h"
#include "proto_api.h"
#include "proto_frame.h"
#include "replica_manager.h"
#include "replica_replication.h"
#include "server_local.h"
#include "server_push.h"

#include "test_tmpdir.h"

typedef struct answer {
    uint8_t type;
    ProtobufCMessage *msg; /* the response, or the ErrorResponse */
} answer_t;

/* Sends msg as api_key to role (no connection: handled on this thread,
 * forwards waited for) and decodes the answer as resp_desc. */
static answer_t call(fl_server_role_t *role, int16_t api_key, const ProtobufCMessage *msg,
                     const ProtobufCMessageDescriptor *resp_desc) {
    static int32_t next_id = 1;
    size_t n = protobuf_c_message_get_packed_size(msg);
    uint8_t *body = fl_malloc(n ? n : 1);
    protobuf_c_message_pack(msg, body);
    fl_frame_request_t req = {api_key, 0, next_id++, body, n};
    fl_rpc_out_t rout;
    fl_rpc_out_init(&rout);
    assert_int_equal(fl_server_handle(role, NULL, &req, &rout), 0);
    fl_rpc_out_flatten(&rout);
    fl_frame_response_t r;
    assert_int_equal(fl_frame_parse_response(rout.buf.data, rout.buf.len, &r), FL_FRAME_OK);
    assert_int_equal(r.request_id, req.request_id);
    answer_t a = {r.type, NULL};
    a.msg = protobuf_c_message_unpack(r.type == FL_RESPONSE_SUCCESS ? resp_desc
                                                                    : &fluss__error_response__descriptor,
                                      NULL, r.body_len, r.body);
    assert_non_null(a.msg);
    fl_rpc_out_free(&rout);
    fl_free(body);
    return a;
}

static int error_code(const answer_t *a) {
    if (a->type == FL_RESPONSE_SUCCESS) return 0;
    return ((const Fluss__ErrorResponse *)a->msg)->error_code;
}

static void done(answer_t *a) { protobuf_c_message_free_unpacked(a->msg, NULL); }

static void expect_ok(fl_server_role_t *role, int16_t key, const ProtobufCMessage *m,
                      const ProtobufCMessageDescriptor *d) {
    answer_t a = call(role, key, m, d);
    if (a.type != FL_RESPONSE_SUCCESS)
        fail_msg("api %d: error %d %s", key, error_code(&a),
                 ((Fluss__ErrorResponse *)a.msg)->error_message);
    done(&a);
}

/* cond becomes true within 30 s (polled every 100 ms), or the test fails. */
#define EVENTUALLY(cond)                                                   \
    do {                                                                   \
        for (int tries_ = 0; tries_ < 300 && !(cond); tries_++) usleep(100 * 1000); \
        assert_true(cond);                                                 \
    } while (0)

static bool dir_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static const char *TABLE_JSON =
    "{\"version\":1,\"schema\":{\"version\":1,\"columns\":["
    "{\"name\":\"id\",\"data_type\":{\"type\":\"INTEGER\",\"nullable\":false}},"
    "{\"name\":\"dt\",\"data_type\":{\"type\":\"STRING\",\"nullable\":false}}],"
    "\"primary_key\":[\"id\",\"dt\"]},"
    "\"partition_key\":[\"dt\"],\"bucket_key\":[\"id\"],\"bucket_count\":2,"
    "\"properties\":{},\"custom_properties\":{}}";

static void create_table(fl_local_cluster_t *lc) {
    Fluss__PbTablePath path = FLUSS__PB_TABLE_PATH__INIT;
    path.database_name = "fluss";
    path.table_name = "t";
    Fluss__CreateTableRequest req = FLUSS__CREATE_TABLE_REQUEST__INIT;
    req.table_path = &path;
    req.table_json.data = (uint8_t *)TABLE_JSON;
    req.table_json.len = strlen(TABLE_JSON);
    expect_ok(&lc->cs->role, FL_API_CREATE_TABLE, &req.base,
              &fluss__create_table_response__descriptor);
}

static void partition_op(fl_local_cluster_t *lc, int16_t key, const char *value) {
    Fluss__PbTablePath path = FLUSS__PB_TABLE_PATH__INIT;
    path.database_name = "fluss";
    path.table_name = "t";
    Fluss__PbKeyValue kv = FLUSS__PB_KEY_VALUE__INIT;
    kv.key = "dt";
    kv.value = (char *)value;
    Fluss__PbKeyValue *kvs[1] = {&kv};
    Fluss__PbPartitionSpec spec = FLUSS__PB_PARTITION_SPEC__INIT;
    spec.n_partition_key_values = 1;
    spec.partition_key_values = kvs;
    if (key == FL_API_CREATE_PARTITION) {
        Fluss__CreatePartitionRequest req = FLUSS__CREATE_PARTITION_REQUEST__INIT;
        req.table_path = &path;
        req.partition_spec = &spec;
        expect_ok(&lc->cs->role, key, &req.base, &fluss__create_partition_response__descriptor);
    } else {
        Fluss__DropPartitionRequest req = FLUSS__DROP_PARTITION_REQUEST__INIT;
        req.table_path = &path;
        req.partition_spec = &spec;
        expect_ok(&lc->cs->role, key, &req.base, &fluss__drop_partition_response__descriptor);
    }
}

static void add_column(fl_local_cluster_t *lc) {
    Fluss__PbTablePath path = FLUSS__PB_TABLE_PATH__INIT;
    path.database_name = "fluss";
    path.table_name = "t";
    Fluss__PbAddColumn col = FLUSS__PB_ADD_COLUMN__INIT;
    col.column_name = "v";
    col.data_type_json.data = (uint8_t *)"{\"type\":\"BIGINT\"}";
    col.data_type_json.len = strlen((const char *)col.data_type_json.data);
    col.column_position_type = 0;
    Fluss__PbAddColumn *cols[1] = {&col};
    Fluss__AlterTableRequest req = FLUSS__ALTER_TABLE_REQUEST__INIT;
    req.table_path = &path;
    req.n_add_columns = 1;
    req.add_columns = cols;
    expect_ok(&lc->cs->role, FL_API_ALTER_TABLE, &req.base, &fluss__alter_table_response__descriptor);
}

/* ts holds table_id with this latest schema id and partition count (-1:
 * any). */
static bool table_is(fl_tablet_server_t *ts, int64_t table_id, int schema_id, int partitions) {
    fl_hosted_table_t *t = fl_tablet_catalog_table(ts->catalog, table_id);
    if (!t) return false;
    bool is = (schema_id < 0 || t->schema_id == schema_id) &&
              (partitions < 0 || (int)t->partition_count == partitions);
    fl_hosted_table_unref(t);
    return is;
}

static void test_ddl_reaches_tablets(void **state) {
    const char *dir = *state;
    fl_coordinator_config_t cc;
    fl_tablet_config_t tc[2];
    fl_local_test_config(dir, 2, &cc, tc);
    cc.defaults.replication_factor = 1;
    fl_local_cluster_t lc;
    fl_error_t err;
    assert_int_equal(fl_local_cluster_new(&cc, tc, 2, &lc, &err), 0);
    assert_int_equal(fl_local_cluster_start(&lc, &err), 0);

    create_table(&lc);
    partition_op(&lc, FL_API_CREATE_PARTITION, "2024");
    partition_op(&lc, FL_API_CREATE_PARTITION, "2025");
    add_column(&lc);

    pthread_mutex_lock(&lc.cs->lock);
    const fl_ms_table_t *m = lc.cs->ms->ops->table_get(lc.cs->ms, "fluss", "t");
    assert_non_null(m);
    int64_t table_id = m->table_id;
    assert_int_equal(m->partition_count, 2);
    int64_t p2024 = m->partitions[0].partition_id;
    fl_ms_bucket_t b2024[2];
    memcpy(b2024, m->partitions[0].buckets, sizeof(b2024));
    pthread_mutex_unlock(&lc.cs->lock);

    /* both tablet servers have the table whole */
    for (size_t i = 0; i < 2; i++) {
        EVENTUALLY(table_is(lc.tablets[i], table_id, 2, 2));
        fl_hosted_table_t *t = fl_tablet_catalog_table(lc.tablets[i]->catalog, table_id);
        assert_non_null(t);
        assert_string_equal(t->database, "fluss");
        assert_string_equal(t->name, "t");
        assert_true(t->partitioned);
        assert_true(t->has_primary_key);
        assert_non_null(t->kv);
        assert_int_equal(t->schema_id, 2);
        size_t n1 = 0, n2 = 0;
        assert_non_null(fl_hosted_table_schema_types(t, 1, &n1));
        assert_non_null(fl_hosted_table_schema_types(t, 2, &n2));
        assert_int_equal(n1, 2);
        assert_int_equal(n2, 3);
        assert_non_null(fl_hosted_table_latest_map(t, 1));
        assert_int_equal(t->partition_count, 2);
        const fl_hosted_partition_t *p = fl_hosted_table_partition(t, p2024);
        assert_non_null(p);
        assert_string_equal(p->name, "2024");
        assert_int_equal(p->bucket_count, 2);
        for (int b = 0; b < 2; b++) assert_int_equal(p->buckets[b].leader, b2024[b].leader);
        fl_hosted_table_unref(t);
    }
    /* each bucket is open (log and kv) on its leader, and only there */
    char pdir[2][4400];
    for (int b = 0; b < 2; b++) {
        int32_t leader = b2024[b].leader;
        assert_true(leader == 0 || leader == 1);
        char bdir[4500];
        snprintf(pdir[leader], sizeof(pdir[leader]), "%s/tablet-server-%d/fluss/t-%lld/2024-p%lld",
                 dir, leader, (long long)table_id, (long long)p2024);
        snprintf(bdir, sizeof(bdir), "%s/log-%d", pdir[leader], b);
        EVENTUALLY(dir_exists(bdir));
        snprintf(bdir, sizeof(bdir), "%s/kv-%d", pdir[leader], b);
        EVENTUALLY(dir_exists(bdir));
        snprintf(bdir, sizeof(bdir), "%s/tablet-server-%d/fluss/t-%lld/2024-p%lld/log-%d", dir,
                 1 - leader, (long long)table_id, (long long)p2024, b);
        assert_false(dir_exists(bdir));
    }

    /* a dropped partition: gone from the table and from the disks */
    partition_op(&lc, FL_API_DROP_PARTITION, "2024");
    for (size_t i = 0; i < 2; i++) {
        EVENTUALLY(table_is(lc.tablets[i], table_id, 2, 1));
        fl_hosted_table_t *t = fl_tablet_catalog_table(lc.tablets[i]->catalog, table_id);
        assert_null(fl_hosted_table_partition(t, p2024));
        fl_hosted_table_unref(t);
    }
    for (int b = 0; b < 2; b++) EVENTUALLY(!dir_exists(pdir[b2024[b].leader]));

    /* a dropped table: forgotten, its directory gone */
    Fluss__PbTablePath path = FLUSS__PB_TABLE_PATH__INIT;
    path.database_name = "fluss";
    path.table_name = "t";
    Fluss__DropTableRequest drop = FLUSS__DROP_TABLE_REQUEST__INIT;
    drop.table_path = &path;
    expect_ok(&lc.cs->role, FL_API_DROP_TABLE, &drop.base, &fluss__drop_table_response__descriptor);
    for (size_t i = 0; i < 2; i++) {
        EVENTUALLY(!table_is(lc.tablets[i], table_id, -1, -1));
        char tdir[4400];
        snprintf(tdir, sizeof(tdir), "%s/tablet-server-%zu/fluss/t-%lld", dir, i,
                 (long long)table_id);
        EVENTUALLY(!dir_exists(tdir));
    }
    fl_local_cluster_destroy(&lc);
}

static void test_internal_apis(void **state) {
    const char *dir = *state;
    fl_coordinator_config_t cc;
    fl_tablet_config_t tc[1];
    fl_local_test_config(dir, 1, &cc, tc);
    fl_local_cluster_t lc;
    fl_error_t err;
    assert_int_equal(fl_local_cluster_new(&cc, tc, 1, &lc, &err), 0);
    assert_int_equal(fl_local_cluster_start(&lc, &err), 0);
    fl_tablet_server_t *ts = lc.tablets[0];
    create_table(&lc);

    /* refused where clients connect, as an unknown API */
    Fluss__UpdateMetadataRequest um = FLUSS__UPDATE_METADATA_REQUEST__INIT;
    answer_t a = call(&ts->role, FL_API_UPDATE_METADATA, &um.base,
                      &fluss__update_metadata_response__descriptor);
    assert_int_equal(error_code(&a), FLUSS_ERR_UNSUPPORTED_VERSION);
    done(&a);
    Fluss__InitWriterRequest iw = FLUSS__INIT_WRITER_REQUEST__INIT;
    a = call(&lc.cs->role, FL_API_INIT_WRITER, &iw.base, &fluss__init_writer_response__descriptor);
    assert_int_equal(error_code(&a), FLUSS_ERR_UNSUPPORTED_VERSION);
    done(&a);
    Fluss__ReserveAutoIncrementRequest ra = FLUSS__RESERVE_AUTO_INCREMENT_REQUEST__INIT;
    ra.table_id = 1;
    ra.count = 10;
    a = call(&lc.cs->role, FL_API_RESERVE_AUTO_INCREMENT, &ra.base,
             &fluss__reserve_auto_increment_response__descriptor);
    assert_int_equal(error_code(&a), FLUSS_ERR_UNSUPPORTED_VERSION);
    done(&a);

    /* a tablet server passes INIT_WRITER on: ids from the coordinator */
    a = call(&ts->role, FL_API_INIT_WRITER, &iw.base, &fluss__init_writer_response__descriptor);
    assert_int_equal(error_code(&a), 0);
    int64_t w1 = ((Fluss__InitWriterResponse *)a.msg)->writer_id;
    done(&a);
    a = call(&ts->role, FL_API_INIT_WRITER, &iw.base, &fluss__init_writer_response__descriptor);
    assert_int_equal(((Fluss__InitWriterResponse *)a.msg)->writer_id, w1 + 1);
    done(&a);
    /* and a catalog read, answered by the coordinator's catalog */
    Fluss__ListTablesRequest lt = FLUSS__LIST_TABLES_REQUEST__INIT;
    lt.database_name = "fluss";
    a = call(&ts->role, FL_API_LIST_TABLES, &lt.base, &fluss__list_tables_response__descriptor);
    assert_int_equal(error_code(&a), 0);
    Fluss__ListTablesResponse *ltr = (Fluss__ListTablesResponse *)a.msg;
    assert_int_equal(ltr->n_table_name, 1);
    assert_string_equal(ltr->table_name[0], "t");
    done(&a);
    /* auto-increment blocks on the internal side: consecutive */
    pthread_mutex_lock(&lc.cs->lock);
    ra.table_id = lc.cs->ms->ops->table_get(lc.cs->ms, "fluss", "t")->table_id;
    pthread_mutex_unlock(&lc.cs->lock);
    a = call(&lc.cs->internal_role, FL_API_RESERVE_AUTO_INCREMENT, &ra.base,
             &fluss__reserve_auto_increment_response__descriptor);
    assert_int_equal(error_code(&a), 0);
    int64_t first = ((Fluss__ReserveAutoIncrementResponse *)a.msg)->first;
    done(&a);
    a = call(&lc.cs->internal_role, FL_API_RESERVE_AUTO_INCREMENT, &ra.base,
             &fluss__reserve_auto_increment_response__descriptor);
    assert_int_equal(((Fluss__ReserveAutoIncrementResponse *)a.msg)->first, first + 10);
    done(&a);

    /* a bucket's leader epochs (LIST_LEADER_EPOCHS): refused where
     * clients connect; on the internal side each bucket answered, in the
     * epoch the asker names */
    partition_op(&lc, FL_API_CREATE_PARTITION, "2024");
    pthread_mutex_lock(&lc.cs->lock);
    int64_t pid = lc.cs->ms->ops->table_get(lc.cs->ms, "fluss", "t")->partitions[0].partition_id;
    pthread_mutex_unlock(&lc.cs->lock);
    Fluss__PbListLeaderEpochsReqForBucket eb[3];
    Fluss__PbListLeaderEpochsReqForBucket *ebp[3] = {&eb[0], &eb[1], &eb[2]};
    for (int i = 0; i < 3; i++) {
        fluss__pb_list_leader_epochs_req_for_bucket__init(&eb[i]);
        eb[i].table_id = ra.table_id;
        eb[i].has_partition_id = 1;
        eb[i].partition_id = pid;
    }
    eb[1].leader_epoch = 5; /* newer than the leader knows */
    eb[2].bucket_id = 99;   /* no such bucket */
    Fluss__ListLeaderEpochsRequest le = FLUSS__LIST_LEADER_EPOCHS_REQUEST__INIT;
    le.follower_server_id = 7;
    le.n_buckets_req = 3;
    le.buckets_req = ebp;
    a = call(&ts->role, FL_API_LIST_LEADER_EPOCHS, &le.base,
             &fluss__list_leader_epochs_response__descriptor);
    assert_int_equal(error_code(&a), FLUSS_ERR_UNSUPPORTED_VERSION);
    done(&a);
    a = call(&ts->internal_role, FL_API_LIST_LEADER_EPOCHS, &le.base,
             &fluss__list_leader_epochs_response__descriptor);
    assert_int_equal(error_code(&a), 0);
    Fluss__ListLeaderEpochsResponse *ler = (Fluss__ListLeaderEpochsResponse *)a.msg;
    assert_int_equal(ler->n_buckets_resp, 3);
    if (ler->buckets_resp[0]->has_error_code)
        fail_msg("%d %s", ler->buckets_resp[0]->error_code, ler->buckets_resp[0]->error_message);
    assert_int_equal(ler->buckets_resp[0]->log_end_offset, 0);
    assert_int_equal(ler->buckets_resp[0]->n_epoch, 1);
    assert_int_equal(ler->buckets_resp[0]->epoch[0], 0);
    assert_int_equal(ler->buckets_resp[0]->start_offset[0], 0);
    assert_int_equal(ler->buckets_resp[1]->error_code, FLUSS_ERR_NOT_LEADER_OR_FOLLOWER);
    assert_int_equal(ler->buckets_resp[1]->n_epoch, 0);
    assert_int_equal(ler->buckets_resp[2]->error_code, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION);
    done(&a);

    /* a table entry whose buckets repeat an id: refused, nothing changed */
    fl_hosted_table_t *before = fl_tablet_catalog_table(ts->catalog, ra.table_id);
    assert_non_null(before);
    Fluss__PbTablePath path = FLUSS__PB_TABLE_PATH__INIT;
    path.database_name = "fluss";
    path.table_name = "t";
    Fluss__PbBucketMetadata b0 = FLUSS__PB_BUCKET_METADATA__INIT, b1 = FLUSS__PB_BUCKET_METADATA__INIT;
    b0.bucket_id = 0;
    b1.bucket_id = 0;
    Fluss__PbBucketMetadata *bs[2] = {&b0, &b1};
    Fluss__PbTableMetadata tm = FLUSS__PB_TABLE_METADATA__INIT;
    tm.table_path = &path;
    tm.table_id = ra.table_id;
    tm.schema_id = 1;
    tm.table_json.data = (uint8_t *)TABLE_JSON;
    tm.table_json.len = strlen(TABLE_JSON);
    tm.n_bucket_metadata = 2;
    tm.bucket_metadata = bs;
    Fluss__PbTableMetadata *tms[1] = {&tm};
    um.n_table_metadata = 1;
    um.table_metadata = tms;
    a = call(&ts->internal_role, FL_API_UPDATE_METADATA, &um.base,
             &fluss__update_metadata_response__descriptor);
    assert_int_equal(error_code(&a), FLUSS_ERR_CORRUPT_MESSAGE);
    done(&a);
    fl_hosted_table_t *after = fl_tablet_catalog_table(ts->catalog, ra.table_id);
    assert_ptr_equal(before, after);
    fl_hosted_table_unref(before);
    fl_hosted_table_unref(after);
    /* a descriptor that is not JSON: the same */
    b1.bucket_id = 1;
    tm.table_json.data = (uint8_t *)"{not json";
    tm.table_json.len = 9;
    a = call(&ts->internal_role, FL_API_UPDATE_METADATA, &um.base,
             &fluss__update_metadata_response__descriptor);
    assert_int_equal(error_code(&a), FLUSS_ERR_CORRUPT_MESSAGE);
    done(&a);
    fl_local_cluster_destroy(&lc);
}

/* NOTIFY_LEADER_AND_ISR in coordinator epoch epoch for bucket 0 of the
 * partition: leader in leader_epoch, replicas {0, 7}. The answer's
 * top-level error, or the bucket's. */
static int notify(fl_tablet_server_t *ts, int32_t epoch, int64_t table_id, int64_t pid,
                  int32_t leader, int32_t leader_epoch) {
    Fluss__PbPhysicalTablePath pp = FLUSS__PB_PHYSICAL_TABLE_PATH__INIT;
    pp.database_name = "fluss";
    pp.table_name = "t";
    pp.partition_name = "2024";
    Fluss__PbTableBucket tb = FLUSS__PB_TABLE_BUCKET__INIT;
    tb.table_id = table_id;
    tb.has_partition_id = 1;
    tb.partition_id = pid;
    tb.bucket_id = 0;
    int32_t replicas[2] = {0, 7};
    Fluss__PbNotifyLeaderAndIsrReqForBucket b = FLUSS__PB_NOTIFY_LEADER_AND_ISR_REQ_FOR_BUCKET__INIT;
    b.physical_table_path = &pp;
    b.table_bucket = &tb;
    b.leader = leader;
    b.leader_epoch = leader_epoch;
    b.n_replicas = 2;
    b.replicas = replicas;
    b.n_isr = 2;
    b.isr = replicas;
    b.bucket_epoch = 0;
    Fluss__PbNotifyLeaderAndIsrReqForBucket *bp[1] = {&b};
    Fluss__NotifyLeaderAndIsrRequest req = FLUSS__NOTIFY_LEADER_AND_ISR_REQUEST__INIT;
    req.coordinator_epoch = epoch;
    req.n_notify_buckets_leader_req = 1;
    req.notify_buckets_leader_req = bp;
    answer_t a = call(&ts->internal_role, FL_API_NOTIFY_LEADER_AND_ISR, &req.base,
                      &fluss__notify_leader_and_isr_response__descriptor);
    int code = error_code(&a);
    if (!code) {
        Fluss__NotifyLeaderAndIsrResponse *r = (Fluss__NotifyLeaderAndIsrResponse *)a.msg;
        assert_int_equal(r->n_notify_buckets_leader_resp, 1);
        code = r->notify_buckets_leader_resp[0]->error_code;
    }
    done(&a);
    return code;
}

static int leader_role(fl_tablet_server_t *ts, int64_t table_id, int64_t pid) {
    fl_replica_t *r = fl_replica_manager_find(&ts->replicas, table_id, pid, 0);
    assert_non_null(r);
    int role = fl_replica_role(r);
    fl_replica_unref(r);
    return role;
}

static void test_stale_epochs_refused(void **state) {
    const char *dir = *state;
    fl_coordinator_config_t cc;
    fl_tablet_config_t tc[1];
    fl_local_test_config(dir, 1, &cc, tc);
    fl_local_cluster_t lc;
    fl_error_t err;
    assert_int_equal(fl_local_cluster_new(&cc, tc, 1, &lc, &err), 0);
    assert_int_equal(fl_local_cluster_start(&lc, &err), 0);
    fl_tablet_server_t *ts = lc.tablets[0];
    create_table(&lc);
    partition_op(&lc, FL_API_CREATE_PARTITION, "2024");
    pthread_mutex_lock(&lc.cs->lock);
    const fl_ms_table_t *t = lc.cs->ms->ops->table_get(lc.cs->ms, "fluss", "t");
    int64_t table_id = t->table_id, pid = t->partitions[0].partition_id;
    pthread_mutex_unlock(&lc.cs->lock);
    assert_int_equal(leader_role(ts, table_id, pid), FL_REPLICA_LEADER);

    /* a coordinator of epoch 3 speaks: its epoch is the newest */
    Fluss__UpdateMetadataRequest um = FLUSS__UPDATE_METADATA_REQUEST__INIT;
    um.has_coordinator_epoch = 1;
    um.coordinator_epoch = 3;
    expect_ok(&ts->internal_role, FL_API_UPDATE_METADATA, &um.base,
              &fluss__update_metadata_response__descriptor);
    /* epoch 2's messages are refused whole and change nothing: the bucket
     * is still led here, the table still hosted */
    um.coordinator_epoch = 2;
    answer_t a = call(&ts->internal_role, FL_API_UPDATE_METADATA, &um.base,
                      &fluss__update_metadata_response__descriptor);
    assert_int_equal(error_code(&a), FLUSS_ERR_INVALID_COORDINATOR_EXCEPTION);
    done(&a);
    assert_int_equal(notify(ts, 2, table_id, pid, 7, 5), FLUSS_ERR_INVALID_COORDINATOR_EXCEPTION);
    assert_int_equal(leader_role(ts, table_id, pid), FL_REPLICA_LEADER);
    Fluss__PbTableBucket tb = FLUSS__PB_TABLE_BUCKET__INIT;
    tb.table_id = table_id;
    tb.has_partition_id = 1;
    tb.partition_id = pid;
    Fluss__PbStopReplicaReqForBucket sb = FLUSS__PB_STOP_REPLICA_REQ_FOR_BUCKET__INIT;
    sb.table_bucket = &tb;
    sb.delete_ = 1;
    Fluss__PbStopReplicaReqForBucket *sbp[1] = {&sb};
    Fluss__StopReplicaRequest sr = FLUSS__STOP_REPLICA_REQUEST__INIT;
    sr.coordinator_epoch = 2;
    sr.n_stop_replicas_req = 1;
    sr.stop_replicas_req = sbp;
    a = call(&ts->internal_role, FL_API_STOP_REPLICA, &sr.base,
             &fluss__stop_replica_response__descriptor);
    assert_int_equal(error_code(&a), FLUSS_ERR_INVALID_COORDINATOR_EXCEPTION);
    done(&a);
    fl_hosted_table_t *still = fl_tablet_catalog_table(ts->catalog, table_id);
    assert_non_null(still);
    fl_hosted_table_unref(still);
    assert_int_equal(leader_role(ts, table_id, pid), FL_REPLICA_LEADER);

    /* in the current coordinator epoch: leader epoch 4 taken, then a
     * leadership in epoch 3 refused (the replica stays follower of 7) */
    assert_int_equal(notify(ts, 3, table_id, pid, 7, 4), 0);
    assert_int_equal(leader_role(ts, table_id, pid), FL_REPLICA_FOLLOWER);
    assert_int_equal(notify(ts, 3, table_id, pid, 0, 3), FLUSS_ERR_FENCED_LEADER_EPOCH_EXCEPTION);
    assert_int_equal(leader_role(ts, table_id, pid), FL_REPLICA_FOLLOWER);
    assert_int_equal(notify(ts, 3, table_id, pid, 0, 5), 0);
    assert_int_equal(leader_role(ts, table_id, pid), FL_REPLICA_LEADER);

    /* CONTROLLED_SHUTDOWN of a registration that is not the live one */
    pthread_mutex_lock(&lc.cs->lock);
    lc.cs->incarnations[0] = (struct fl_tablet_incarnation){0, 0x100000042LL};
    lc.cs->incarnation_count = 1;
    pthread_mutex_unlock(&lc.cs->lock);
    Fluss__ControlledShutdownRequest cs = FLUSS__CONTROLLED_SHUTDOWN_REQUEST__INIT;
    cs.tablet_server_id = 0;
    cs.tablet_server_epoch = 0x41;
    a = call(&lc.cs->internal_role, FL_API_CONTROLLED_SHUTDOWN, &cs.base,
             &fluss__controlled_shutdown_response__descriptor);
    assert_int_equal(error_code(&a), FLUSS_ERR_SERVER_NOT_EXIST_EXCEPTION);
    done(&a);
    cs.tablet_server_epoch = 0x42;
    a = call(&lc.cs->internal_role, FL_API_CONTROLLED_SHUTDOWN, &cs.base,
             &fluss__controlled_shutdown_response__descriptor);
    assert_int_equal(error_code(&a), 0);
    done(&a);
    fl_local_cluster_destroy(&lc);
}

/* A loopback port nothing listens on (bound, read, closed). */
static int free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    socklen_t len = sizeof(a);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static int64_t partition_id_of(fl_local_cluster_t *lc, const char *name) {
    pthread_mutex_lock(&lc->cs->lock);
    const fl_ms_table_t *m = lc->cs->ms->ops->table_get(lc->cs->ms, "fluss", "t");
    int64_t id = -1;
    for (size_t i = 0; m && i < m->partition_count; i++)
        if (strcmp(m->partitions[i].name, name) == 0) id = m->partitions[i].partition_id;
    pthread_mutex_unlock(&lc->cs->lock);
    return id;
}

static bool knows_partition(fl_tablet_server_t *ts, int64_t table_id, int64_t pid) {
    fl_hosted_table_t *t = fl_tablet_catalog_table(ts->catalog, table_id);
    if (!t) return false;
    bool known = fl_hosted_table_partition(t, pid) != NULL;
    fl_hosted_table_unref(t);
    return known;
}

/* Messages a tablet server did not get (its connection refused) are made
 * good once it can be reached: it is told every table again, and the
 * drops it missed (STOP_REPLICA) are sent again as they were. */
static void test_missed_messages_resent(void **state) {
    const char *dir = *state;
    fl_coordinator_config_t cc;
    fl_tablet_config_t tc[2];
    fl_local_test_config(dir, 2, &cc, tc);
    cc.defaults.replication_factor = 1;
    int internal = free_port();
    snprintf(tc[1].internal_host, sizeof(tc[1].internal_host), "127.0.0.1");
    tc[1].internal_port = internal;
    fl_local_cluster_t lc;
    fl_error_t err;
    assert_int_equal(fl_local_cluster_new(&cc, tc, 2, &lc, &err), 0);
    assert_int_equal(fl_local_cluster_start(&lc, &err), 0);
    create_table(&lc);
    partition_op(&lc, FL_API_CREATE_PARTITION, "2024");
    int64_t table_id = -1;
    pthread_mutex_lock(&lc.cs->lock);
    table_id = lc.cs->ms->ops->table_get(lc.cs->ms, "fluss", "t")->table_id;
    pthread_mutex_unlock(&lc.cs->lock);
    int64_t p2024 = partition_id_of(&lc, "2024");
    assert_true(knows_partition(lc.tablets[1], table_id, p2024));
    char p2024_dir[4400];
    snprintf(p2024_dir, sizeof(p2024_dir), "%s/tablet-server-1/fluss/t-%lld/2024-p%lld", dir,
             (long long)table_id, (long long)p2024);
    assert_true(dir_exists(p2024_dir)); /* two buckets over two servers: one each */

    /* the coordinator reaches tablet server 1 on a port nobody listens on */
    fl_rpc_client_t *c =
        fl_rpc_client_new(fl_coordinator_server_loop(lc.cs), "127.0.0.1", free_port(), NULL);
    fl_push_add_tablet(lc.cs->push, &lc.tablets[1]->self, NULL, c);
    partition_op(&lc, FL_API_CREATE_PARTITION, "2025");
    partition_op(&lc, FL_API_DROP_PARTITION, "2024");
    int64_t p2025 = partition_id_of(&lc, "2025");
    assert_true(p2025 >= 0);
    EVENTUALLY(knows_partition(lc.tablets[0], table_id, p2025));
    EVENTUALLY(!knows_partition(lc.tablets[0], table_id, p2024));
    /* missed: 1 still has 2024 and not 2025 (retries fail meanwhile) */
    usleep(1500 * 1000);
    assert_false(knows_partition(lc.tablets[1], table_id, p2025));
    assert_true(knows_partition(lc.tablets[1], table_id, p2024));

    /* reachable again (its internal listener): told within a few seconds */
    fl_rpc_client_set_peer(c, "127.0.0.1", internal);
    EVENTUALLY(knows_partition(lc.tablets[1], table_id, p2025) &&
               !knows_partition(lc.tablets[1], table_id, p2024));
    EVENTUALLY(!dir_exists(p2024_dir)); /* its STOP_REPLICA arrived too */
    fl_local_cluster_destroy(&lc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ddl_reaches_tablets, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_internal_apis, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stale_epochs_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_missed_messages_resent, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
