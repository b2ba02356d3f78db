/*
 * test_metadata_cache.c — a tablet server's metadata cache
 * (server_metadata_cache.h): GET_METADATA answered from UPDATE_METADATA's
 * entries, decoded back as a client would; fluss-c's schemas field never
 * in an answer; a miss (unknown table or partition, no coordinator yet)
 * leaves the answer to the coordinator; a table's update replaces its
 * partitions, a deleted table goes with them, a table re-created under
 * its path replaces the old id; updates racing answers (under
 * ThreadSanitizer in make test-tsan) never give a torn one.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common_buf.h"
#include "proto_frame.h"
#include "server_metadata_cache.h"

typedef struct fixture {
    Fluss__PbServerNode coord, ts[2], *ts_ptrs[2];
    Fluss__PbTablePath path;
    Fluss__PbBucketMetadata bucket, *bucket_ptrs[1];
    int32_t replicas[2];
    Fluss__PbFlusscSchema schema, *schema_ptrs[1];
    Fluss__PbTableMetadata tm, *tm_ptrs[1];
    Fluss__PbPartitionMetadata pm[2], *pm_ptrs[2];
    Fluss__UpdateMetadataRequest req;
} fixture_t;

/* An UPDATE_METADATA with table db.t (id table_id, leader `leader`) and
 * its partitions p1 (id 11), p2 (id 12) when partitions is true. */
static void fixture_init(fixture_t *f, int64_t table_id, int32_t leader, bool partitions) {
    memset(f, 0, sizeof(*f));
    fluss__pb_server_node__init(&f->coord);
    f->coord.node_id = -1;
    f->coord.host = "127.0.0.1";
    f->coord.port = 9123;
    for (int i = 0; i < 2; i++) {
        fluss__pb_server_node__init(&f->ts[i]);
        f->ts[i].node_id = i;
        f->ts[i].host = "127.0.0.1";
        f->ts[i].port = 9124 + i;
        f->ts[i].listeners = "FLUSS://127.0.0.1:9124,INTERNAL://127.0.0.1:9200";
        f->ts_ptrs[i] = &f->ts[i];
    }
    fluss__pb_table_path__init(&f->path);
    f->path.database_name = "db";
    f->path.table_name = "t";
    fluss__pb_bucket_metadata__init(&f->bucket);
    f->bucket.bucket_id = 0;
    f->bucket.has_leader_id = 1;
    f->bucket.leader_id = leader;
    f->replicas[0] = 0;
    f->replicas[1] = 1;
    f->bucket.n_replica_id = 2;
    f->bucket.replica_id = f->replicas;
    f->bucket_ptrs[0] = &f->bucket;
    fluss__pb_flussc_schema__init(&f->schema);
    f->schema.schema_id = 1;
    f->schema.schema_json.data = (uint8_t *)"{}";
    f->schema.schema_json.len = 2;
    f->schema_ptrs[0] = &f->schema;
    fluss__pb_table_metadata__init(&f->tm);
    f->tm.table_path = &f->path;
    f->tm.table_id = table_id;
    f->tm.schema_id = 1;
    f->tm.table_json.data = (uint8_t *)"{\"version\":1}";
    f->tm.table_json.len = strlen("{\"version\":1}");
    f->tm.n_bucket_metadata = partitions ? 0 : 1;
    f->tm.bucket_metadata = f->bucket_ptrs;
    f->tm.n_flussc_schemas = 1;
    f->tm.flussc_schemas = f->schema_ptrs;
    f->tm_ptrs[0] = &f->tm;
    for (int i = 0; i < 2; i++) {
        fluss__pb_partition_metadata__init(&f->pm[i]);
        f->pm[i].table_id = table_id;
        f->pm[i].partition_name = i ? "p2" : "p1";
        f->pm[i].partition_id = 11 + i;
        f->pm[i].n_bucket_metadata = 1;
        f->pm[i].bucket_metadata = f->bucket_ptrs;
        f->pm_ptrs[i] = &f->pm[i];
    }
    fluss__update_metadata_request__init(&f->req);
    f->req.coordinator_server = &f->coord;
    f->req.n_tablet_servers = 2;
    f->req.tablet_servers = f->ts_ptrs;
    f->req.n_table_metadata = 1;
    f->req.table_metadata = f->tm_ptrs;
    f->req.n_partition_metadata = partitions ? 2 : 0;
    f->req.partition_metadata = f->pm_ptrs;
}

/* GET_METADATA for db.<table> (NULL: none) and partition ids; the
 * decoded answer or NULL on a miss. */
static Fluss__MetadataResponse *ask(fl_metadata_cache_t *c, const char *table, int64_t *ids,
                                    size_t nids, const char *partition) {
    Fluss__PbTablePath p = FLUSS__PB_TABLE_PATH__INIT, *pp = &p;
    p.database_name = "db";
    p.table_name = (char *)table;
    Fluss__PbPhysicalTablePath pq = FLUSS__PB_PHYSICAL_TABLE_PATH__INIT, *pqp = &pq;
    pq.database_name = "db";
    pq.table_name = "t";
    pq.partition_name = (char *)partition;
    Fluss__MetadataRequest req = FLUSS__METADATA_REQUEST__INIT;
    req.n_table_path = table ? 1 : 0;
    req.table_path = &pp;
    req.n_partitions_id = nids;
    req.partitions_id = ids;
    req.n_partitions_path = partition ? 1 : 0;
    req.partitions_path = &pqp;
    fl_buf_t out;
    fl_buf_init(&out);
    Fluss__MetadataResponse *resp = NULL;
    if (fl_metadata_cache_answer(c, &req, 42, &out)) {
        fl_frame_response_t fr;
        assert_int_equal(fl_frame_parse_response(out.data, out.len, &fr), FL_FRAME_OK);
        assert_int_equal(fr.type, FL_RESPONSE_SUCCESS);
        assert_int_equal(fr.request_id, 42);
        resp = fluss__metadata_response__unpack(NULL, fr.body_len, fr.body);
        assert_non_null(resp);
    } else {
        assert_int_equal(out.len, 0);
    }
    fl_buf_free(&out);
    return resp;
}

static void test_answers_what_was_pushed(void **state) {
    (void)state;
    fl_metadata_cache_t *c = fl_metadata_cache_new();
    assert_null(ask(c, "t", NULL, 0, NULL)); /* nothing yet: the coordinator answers */
    fixture_t f;
    fixture_init(&f, 5, 1, false);
    fl_metadata_cache_update(c, &f.req);
    Fluss__MetadataResponse *r = ask(c, "t", NULL, 0, NULL);
    assert_non_null(r);
    assert_int_equal(r->coordinator_server->port, 9123);
    assert_int_equal(r->n_tablet_servers, 2);
    assert_null(r->tablet_servers[0]->listeners); /* a client's view */
    assert_int_equal(r->tablet_servers[1]->port, 9125);
    assert_int_equal(r->n_table_metadata, 1);
    Fluss__PbTableMetadata *tm = r->table_metadata[0];
    assert_int_equal(tm->table_id, 5);
    assert_string_equal(tm->table_path->table_name, "t");
    assert_int_equal(tm->table_json.len, strlen("{\"version\":1}"));
    assert_int_equal(tm->n_flussc_schemas, 0);
    assert_int_equal(tm->n_bucket_metadata, 1);
    assert_int_equal(tm->bucket_metadata[0]->leader_id, 1);
    assert_int_equal(tm->bucket_metadata[0]->n_replica_id, 2);
    fluss__metadata_response__free_unpacked(r, NULL);
    /* servers alone (no table named): answered */
    r = ask(c, NULL, NULL, 0, NULL);
    assert_non_null(r);
    assert_int_equal(r->n_table_metadata, 0);
    fluss__metadata_response__free_unpacked(r, NULL);
    assert_null(ask(c, "other", NULL, 0, NULL));
    /* a leader change: the new entry replaces the old */
    fixture_init(&f, 5, 0, false);
    fl_metadata_cache_update(c, &f.req);
    r = ask(c, "t", NULL, 0, NULL);
    assert_int_equal(r->table_metadata[0]->bucket_metadata[0]->leader_id, 0);
    fluss__metadata_response__free_unpacked(r, NULL);
    fl_metadata_cache_free(c);
}

static void test_partitions_and_deletes(void **state) {
    (void)state;
    fl_metadata_cache_t *c = fl_metadata_cache_new();
    fixture_t f;
    fixture_init(&f, 7, 1, true);
    fl_metadata_cache_update(c, &f.req);
    int64_t ids[] = {12, 11};
    Fluss__MetadataResponse *r = ask(c, "t", ids, 2, "p1");
    assert_non_null(r);
    assert_int_equal(r->n_partition_metadata, 3); /* by path first, then by id */
    assert_string_equal(r->partition_metadata[0]->partition_name, "p1");
    assert_int_equal(r->partition_metadata[1]->partition_id, 12);
    assert_int_equal(r->partition_metadata[2]->partition_id, 11);
    fluss__metadata_response__free_unpacked(r, NULL);
    int64_t unknown = 13;
    assert_null(ask(c, NULL, &unknown, 1, NULL));
    assert_null(ask(c, NULL, NULL, 0, "p3"));
    /* the table again without p2 (dropped): p2 is gone from the cache */
    f.req.n_partition_metadata = 1;
    fl_metadata_cache_update(c, &f.req);
    int64_t p2 = 12;
    assert_null(ask(c, NULL, &p2, 1, NULL));
    /* re-created under its path with another id: the old id's entries go */
    fixture_init(&f, 8, 1, true);
    fl_metadata_cache_update(c, &f.req);
    r = ask(c, "t", NULL, 0, NULL);
    assert_int_equal(r->table_metadata[0]->table_id, 8);
    fluss__metadata_response__free_unpacked(r, NULL);
    /* deleted (id -2, by path): the table and its partitions */
    fixture_init(&f, -2, 1, false);
    f.req.coordinator_server = NULL; /* an update without servers keeps them */
    fl_metadata_cache_update(c, &f.req);
    assert_null(ask(c, "t", NULL, 0, NULL));
    int64_t p1 = 11;
    assert_null(ask(c, NULL, &p1, 1, NULL));
    r = ask(c, NULL, NULL, 0, NULL);
    assert_non_null(r);
    assert_int_equal(r->n_tablet_servers, 2);
    fluss__metadata_response__free_unpacked(r, NULL);
    fl_metadata_cache_free(c);
}

typedef struct race {
    fl_metadata_cache_t *c;
    int answers;
} race_t;

static void *race_reader(void *arg) {
    race_t *r = arg;
    for (int i = 0; i < 2000; i++) {
        Fluss__MetadataResponse *resp = ask(r->c, "t", NULL, 0, NULL);
        if (!resp) continue; /* between a delete and the next update */
        assert_int_equal(resp->n_table_metadata, 1);
        int32_t leader = resp->table_metadata[0]->bucket_metadata[0]->leader_id;
        assert_true(leader == 0 || leader == 1);
        assert_int_equal(resp->n_tablet_servers, 2);
        fluss__metadata_response__free_unpacked(resp, NULL);
        r->answers++;
    }
    return NULL;
}

/* One thread (a tablet server's control thread) applies updates while
 * two (its network loops) answer from the cache. */
static void test_updates_race_answers(void **state) {
    (void)state;
    race_t r[2] = {{fl_metadata_cache_new(), 0}, {NULL, 0}};
    r[1].c = r[0].c;
    fixture_t f;
    fixture_init(&f, 5, 0, false);
    fl_metadata_cache_update(r[0].c, &f.req);
    pthread_t th[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, race_reader, &r[i]), 0);
    /* a delete now and then; the last update leaves the table there, so
     * readers that start only after the updates still get answers */
    for (int i = 0; i < 2000; i++) {
        fixture_init(&f, i % 100 == 50 ? -2 : 5, i % 2, false);
        fl_metadata_cache_update(r[0].c, &f.req);
    }
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    assert_true(r[0].answers + r[1].answers > 0);
    fl_metadata_cache_free(r[0].c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_answers_what_was_pushed),
        cmocka_unit_test(test_partitions_and_deletes),
        cmocka_unit_test(test_updates_race_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
