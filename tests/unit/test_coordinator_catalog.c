/*
 * test_coordinator_catalog.c — database and table DDL on the coordinator
 * (coordinator_catalog.h, coordinator_table_check.h) over a real embedded
 * metastore in a temporary directory: defaults the reference adds, table
 * ids, Fluss's error codes for every validation, cascade drops.
 */
#define _GNU_SOURCE
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "coordinator_catalog.h"
#include "metastore.h"

typedef struct fixture {
    char dir[64];
    fl_metastore_t *ms;
    fl_catalog_t cat;
} fixture_t;

static const fl_table_defaults_t defaults = {
    .bucket_number = 4, .replication_factor = 1, .max_bucket_num = 100,
    .max_partition_num = FL_MAX_PARTITION_NUM_DEFAULT};
static const int32_t tablets[] = {7};

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int setup(void **state) {
    fixture_t *f = calloc(1, sizeof(*f));
    strcpy(f->dir, "/tmp/fl_catalog_XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    fl_error_t err;
    if (fl_metastore_embedded_open(f->dir, &f->ms, &err)) return -1;
    if (fl_catalog_init(&f->cat, f->ms, &defaults, tablets, 1, &err)) return -1;
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture_t *f = *state;
    f->ms->ops->close(f->ms);
    nftw(f->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

#define COLS(...) "\"schema\":{\"columns\":[" __VA_ARGS__ "]"
#define C(name, type) "{\"name\":\"" name "\",\"data_type\":{\"type\":\"" type "\"}}"

static int create(fixture_t *f, const char *db, const char *name, const char *json, bool ignore,
                  fl_error_t *err) {
    fl_err_clear(err);
    return fl_catalog_create_table(&f->cat, db, name, (const uint8_t *)json, strlen(json), ignore,
                                   err);
}

/* A table with given schema tail (after columns) and descriptor tail. */
static char *table_json(const char *schema, const char *rest) {
    char *s = NULL;
    if (asprintf(&s, "{%s},%s}", schema, rest) < 0) abort();
    return s;
}

static const char *LOG_REST = "\"partition_key\":[],\"properties\":{},\"custom_properties\":{}";

static void test_init_creates_default_database(void **state) {
    fixture_t *f = *state;
    assert_int_equal(f->ms->ops->db_count(f->ms), 1);
    const fl_ms_database_t *d = f->ms->ops->db_get(f->ms, "fluss");
    assert_non_null(d);
    assert_string_equal(d->json, "{\"version\":1,\"custom_properties\":{}}");
    assert_true(d->created_ms > 0);
    /* a second init on a store that has databases adds nothing */
    fl_error_t err;
    assert_int_equal(fl_catalog_drop_database(&f->cat, "fluss", false, false, &err), 0);
    assert_int_equal(fl_catalog_create_database(&f->cat, "other", NULL, 0, false, &err), 0);
    assert_int_equal(fl_catalog_init(&f->cat, f->ms, &defaults, tablets, 1, &err), 0);
    assert_int_equal(f->ms->ops->db_count(f->ms), 1);
    assert_null(f->ms->ops->db_get(f->ms, "fluss"));
}

static void test_database_create_drop_codes(void **state) {
    fixture_t *f = *state;
    fl_error_t err;
    const char *dj = "{\"comment\":\"c\",\"custom_properties\":{\"k\":\"v\"}}";
    assert_int_equal(fl_catalog_create_database(&f->cat, "d1", (const uint8_t *)dj, strlen(dj),
                                                false, &err), 0);
    const fl_ms_database_t *d = f->ms->ops->db_get(f->ms, "d1");
    assert_non_null(d);
    assert_string_equal(d->json, "{\"version\":1,\"comment\":\"c\",\"custom_properties\":{\"k\":\"v\"}}");
    assert_int_equal(fl_catalog_create_database(&f->cat, "d1", NULL, 0, false, &err),
                     FLUSS_ERR_DATABASE_ALREADY_EXIST);
    assert_int_equal(err.code, 6);
    assert_int_equal(fl_catalog_create_database(&f->cat, "d1", NULL, 0, true, &err), 0);
    assert_string_equal(f->ms->ops->db_get(f->ms, "d1")->json, d->json);
    assert_int_equal(fl_catalog_create_database(&f->cat, "a.b", NULL, 0, true, &err), 16);
    assert_int_equal(fl_catalog_create_database(&f->cat, "__sys", NULL, 0, false, &err), 16);
    assert_int_equal(fl_catalog_create_database(&f->cat, "d2", (const uint8_t *)"{", 1, false, &err),
                     16);
    assert_null(f->ms->ops->db_get(f->ms, "d2"));

    assert_int_equal(fl_catalog_drop_database(&f->cat, "nope", false, false, &err), 4);
    assert_int_equal(fl_catalog_drop_database(&f->cat, "nope", true, false, &err), 0);

    char *t = table_json(COLS(C("a", "INTEGER")), LOG_REST);
    assert_int_equal(create(f, "d1", "t1", t, false, &err), 0);
    assert_int_equal(create(f, "d1", "t2", t, false, &err), 0);
    assert_int_equal(create(f, "fluss", "t1", t, false, &err), 0);
    free(t);
    assert_int_equal(fl_catalog_table_count(&f->cat, "d1"), 2);
    assert_int_equal(fl_catalog_drop_database(&f->cat, "d1", false, false, &err), 5);
    assert_non_null(f->ms->ops->table_get(f->ms, "d1", "t1"));
    assert_int_equal(fl_catalog_drop_database(&f->cat, "d1", false, true, &err), 0);
    assert_null(f->ms->ops->db_get(f->ms, "d1"));
    assert_null(f->ms->ops->table_get(f->ms, "d1", "t1"));
    assert_null(f->ms->ops->table_get(f->ms, "d1", "t2"));
    assert_int_equal(fl_catalog_table_count(&f->cat, "d1"), 0);
    assert_int_equal(f->ms->ops->table_count(f->ms), 1);
    assert_non_null(f->ms->ops->table_get(f->ms, "fluss", "t1"));
    /* a dropped database can be created again, empty */
    assert_int_equal(fl_catalog_create_database(&f->cat, "d1", NULL, 0, false, &err), 0);
    assert_int_equal(fl_catalog_table_count(&f->cat, "d1"), 0);
}

static void test_create_table_ids_and_defaults(void **state) {
    fixture_t *f = *state;
    fl_error_t err;
    char *t = table_json(COLS(C("a", "INTEGER") "," C("b", "STRING")),
                         "\"comment\":\"hi\",\"partition_key\":[],\"properties\":"
                         "{\"table.log.format\":\"ARROW\"},\"custom_properties\":{\"x\":\"y\"}");
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "t%d", i);
        assert_int_equal(create(f, "fluss", name, t, false, &err), 0);
        const fl_ms_table_t *mt = fl_catalog_get_table(&f->cat, "fluss", name, &err);
        assert_non_null(mt);
        assert_int_equal(mt->table_id, i);
        assert_int_equal(mt->schema_id, 1);
        assert_int_equal(mt->schema_count, 1);
    }
    /* an existing table: 8, or nothing with the ignore flag (no id spent) */
    assert_int_equal(create(f, "fluss", "t0", t, false, &err), FLUSS_ERR_TABLE_ALREADY_EXIST);
    assert_int_equal(create(f, "fluss", "t0", t, true, &err), 0);
    assert_int_equal(create(f, "nodb", "t0", t, false, &err), FLUSS_ERR_DATABASE_NOT_EXIST);
    assert_int_equal(create(f, "fluss", "t3", t, false, &err), 0);
    assert_int_equal(fl_catalog_get_table(&f->cat, "fluss", "t3", &err)->table_id, 3);
    free(t);

    const fl_ms_table_t *mt = fl_catalog_get_table(&f->cat, "fluss", "t0", &err);
    const char *schema = "{\"version\":1,\"columns\":[{\"name\":\"a\",\"data_type\":{\"type\":"
                         "\"INTEGER\"},\"id\":0},{\"name\":\"b\",\"data_type\":{\"type\":"
                         "\"STRING\"},\"id\":1}],\"highest_field_id\":1}";
    char *want = NULL;
    assert_true(asprintf(&want,
                         "{\"version\":1,\"schema\":%s,\"comment\":\"hi\",\"partition_key\":[],"
                         "\"bucket_key\":[],\"bucket_count\":4,\"properties\":{"
                         "\"table.replication.factor\":\"1\",\"table.log.format\":\"ARROW\"},"
                         "\"custom_properties\":{\"x\":\"y\"}}",
                         schema) > 0);
    assert_string_equal(mt->table_json, want);
    free(want);
    assert_string_equal(mt->schema_jsons[0], schema);
    assert_int_equal(mt->bucket_count, 4);
    for (int b = 0; b < 4; b++) {
        assert_int_equal(mt->buckets[b].replica_count, 1);
        assert_int_equal(mt->buckets[b].replicas[0], 7);
        assert_int_equal(mt->buckets[b].leader, 7);
    }
    assert_true(mt->created_ms > 0);
    assert_int_equal(mt->created_ms, mt->modified_ms);

    assert_null(fl_catalog_get_table(&f->cat, "fluss", "nope", &err));
    assert_int_equal(err.code, FLUSS_ERR_TABLE_NOT_EXIST);
}

static void test_create_pk_table_defaults(void **state) {
    fixture_t *f = *state;
    fl_error_t err;
    char *t = table_json(COLS(C("id", "INTEGER") "," C("dt", "STRING") "," C("v", "STRING"))
                         ",\"primary_key\":[\"id\",\"dt\"]",
                         "\"partition_key\":[\"dt\"],\"bucket_key\":[],\"bucket_count\":2,"
                         "\"properties\":{},\"custom_properties\":{}");
    assert_int_equal(create(f, "fluss", "pk", t, false, &err), 0);
    free(t);
    const fl_ms_table_t *mt = fl_catalog_get_table(&f->cat, "fluss", "pk", &err);
    fl_table_desc_t d;
    assert_int_equal(fl_table_desc_from_bytes(mt->table_json, strlen(mt->table_json), &d, &err), 0);
    assert_int_equal(d.bucket_keys.count, 1);
    assert_string_equal(d.bucket_keys.items[0], "id");
    assert_int_equal(d.bucket_count, 2);
    assert_int_equal(d.properties.count, 2);
    assert_string_equal(d.properties.items[0].key, "table.replication.factor");
    assert_string_equal(d.properties.items[0].value, "1");
    assert_string_equal(d.properties.items[1].key, "table.kv.format-version");
    assert_string_equal(d.properties.items[1].value, "2");
    assert_false(d.schema.columns[0].type->nullable);
    assert_false(d.schema.columns[1].type->nullable);
    assert_true(d.schema.columns[2].type->nullable);
    fl_table_desc_free(&d);
    assert_int_equal(mt->bucket_count, 0); /* partitioned: buckets come with partitions */
    assert_true(strstr(mt->table_json, "\"partition_key\":[\"dt\"],\"bucket_key\":[\"id\"]"));
}

static void expect_create_fails(fixture_t *f, const char *schema, const char *rest, int code) {
    fl_error_t err;
    char *t = table_json(schema, rest);
    int rc = create(f, "fluss", "bad", t, false, &err);
    if (rc != code) fail_msg("%s: rc %d (%s), want %d", t, rc, err.msg, code);
    assert_int_equal(err.code, code);
    assert_true(strlen(err.msg) > 0);
    assert_null(f->ms->ops->table_get(f->ms, "fluss", "bad"));
    free(t);
}

static void test_validation_codes(void **state) {
    fixture_t *f = *state;
    const char *s1 = COLS(C("a", "INTEGER") "," C("b", "STRING"));
    const char *pk = COLS(C("a", "INTEGER") "," C("b", "STRING")) ",\"primary_key\":[\"a\"]";
    expect_create_fails(f, s1, "\"partition_key\":[],\"properties\":{\"table.replication.factor\":"
                               "\"2\"},\"custom_properties\":{}", 17);
    expect_create_fails(f, s1, "\"partition_key\":[],\"properties\":{\"table.nope\":\"1\"},"
                               "\"custom_properties\":{}", 39);
    expect_create_fails(f, s1, "\"partition_key\":[],\"properties\":{\"nope\":\"1\"},"
                               "\"custom_properties\":{}", 39);
    expect_create_fails(f, s1, "\"partition_key\":[],\"properties\":{\"table.log.format\":\"CSV\"},"
                               "\"custom_properties\":{}", 39);
    expect_create_fails(f, s1, "\"partition_key\":[],\"bucket_key\":[],\"bucket_count\":0,"
                               "\"properties\":{},\"custom_properties\":{}", 15);
    expect_create_fails(f, s1, "\"partition_key\":[],\"bucket_key\":[],\"bucket_count\":101,"
                               "\"properties\":{},\"custom_properties\":{}", 49);
    expect_create_fails(f, pk, "\"partition_key\":[\"b\"],\"properties\":{},"
                               "\"custom_properties\":{}", 15);
    expect_create_fails(f, COLS("{\"name\":\"a\",\"data_type\":{\"type\":\"ARRAY\",\"element_type\":"
                                "{\"type\":\"INTEGER\"}}}") ",\"primary_key\":[\"a\"]",
                        LOG_REST, 15);
    expect_create_fails(f, COLS(C("a", "INTEGER") "," C("__offset", "BIGINT")), LOG_REST, 15);
    expect_create_fails(f, s1, "\"partition_key\":[],\"properties\":{\"table.merge-engine\":"
                               "\"FIRST_ROW\"},\"custom_properties\":{}", 39);
    expect_create_fails(f, s1, "\"partition_key\":[\"zz\"],\"properties\":{},"
                               "\"custom_properties\":{}", 15);
    expect_create_fails(f, s1, "\"partition_key\":[],\"bucket_key\":[\"zz\"],\"properties\":{},"
                               "\"custom_properties\":{}", 15);
    /* names are checked too */
    fl_error_t err;
    char *t = table_json(s1, LOG_REST);
    assert_int_equal(create(f, "fluss", "a b", t, false, &err), 15);
    assert_int_equal(create(f, "__db", "t", t, false, &err), 16);
    /* the boundaries themselves are fine */
    free(t);
    t = table_json(s1, "\"partition_key\":[],\"bucket_key\":[],\"bucket_count\":100,"
                       "\"properties\":{\"table.replication.factor\":\"1\"},\"custom_properties\":{}");
    assert_int_equal(create(f, "fluss", "max", t, false, &err), 0);
    assert_int_equal(fl_catalog_get_table(&f->cat, "fluss", "max", &err)->bucket_count, 100);
    free(t);
    t = table_json(pk, "\"partition_key\":[],\"properties\":{\"table.merge-engine\":\"first_row\"},"
                       "\"custom_properties\":{}");
    assert_int_equal(create(f, "fluss", "fr", t, false, &err), 0);
    free(t);
}

static void test_drop_and_recreate_table(void **state) {
    fixture_t *f = *state;
    fl_error_t err;
    char *t = table_json(COLS(C("a", "INTEGER")), LOG_REST);
    assert_int_equal(create(f, "fluss", "t", t, false, &err), 0);
    assert_int_equal(create(f, "fluss", "u", t, false, &err), 0);
    int64_t first = fl_catalog_get_table(&f->cat, "fluss", "t", &err)->table_id;
    assert_int_equal(fl_catalog_drop_table(&f->cat, "fluss", "t", false, &err), 0);
    assert_null(f->ms->ops->table_get(f->ms, "fluss", "t"));
    assert_int_equal(fl_catalog_drop_table(&f->cat, "fluss", "t", false, &err),
                     FLUSS_ERR_TABLE_NOT_EXIST);
    assert_int_equal(fl_catalog_drop_table(&f->cat, "fluss", "t", true, &err), 0);
    assert_int_equal(create(f, "fluss", "t", t, false, &err), 0);
    const fl_ms_table_t *mt = fl_catalog_get_table(&f->cat, "fluss", "t", &err);
    assert_true(mt->table_id > first);
    assert_int_equal(mt->table_id, 2);
    assert_ptr_equal(f->ms->ops->table_by_id(f->ms, 2), mt);
    assert_null(f->ms->ops->table_by_id(f->ms, first));
    free(t);
}

static int add_partition(fixture_t *f, const char *table, const char *dt, fl_error_t *err) {
    const char *keys[] = {"dt"}, *values[] = {dt};
    fl_err_clear(err);
    return fl_catalog_create_partition(&f->cat, "fluss", table, keys, values, 1, false, err);
}

/* max.partition.num and max.bucket.num (MetadataManager#createPartition):
 * the partition count with the new one, then the buckets of all of them;
 * errors name partitions as the reference does ("dt=..."). */
static void test_partition_limits(void **state) {
    fixture_t *f = *state;
    fl_error_t err;
    f->cat.defaults.max_partition_num = 3;
    f->cat.defaults.max_bucket_num = 100;
    char *t = table_json(COLS(C("id", "INTEGER") "," C("dt", "STRING")),
                         "\"partition_key\":[\"dt\"],\"bucket_key\":[],\"bucket_count\":30,"
                         "\"properties\":{},\"custom_properties\":{}");
    assert_int_equal(create(f, "fluss", "p", t, false, &err), 0);
    assert_int_equal(create(f, "fluss", "q", t, false, &err), 0);
    free(t);
    assert_int_equal(add_partition(f, "p", "a", &err), 0);
    assert_int_equal(add_partition(f, "p", "a", &err), FLUSS_ERR_PARTITION_ALREADY_EXISTS);
    assert_string_equal(err.msg, "Partition 'dt=a' already exists for table fluss.p");
    assert_int_equal(add_partition(f, "p", "b", &err), 0);
    assert_int_equal(add_partition(f, "p", "c", &err), 0);
    assert_int_equal(add_partition(f, "p", "d", &err), FLUSS_ERR_PARTITION_MAX_NUM_EXCEPTION);
    assert_string_equal(err.msg, "Exceed the maximum number of partitions for table fluss.p, "
                                 "only allow 3 partitions.");
    /* 3 x 30 buckets fit in 100, a fourth partition would not */
    f->cat.defaults.max_partition_num = 10;
    assert_int_equal(add_partition(f, "p", "d", &err), FLUSS_ERR_BUCKET_MAX_NUM_EXCEPTION);
    assert_string_equal(err.msg, "Adding partition 'd' would result in 120 total buckets for "
                                 "table fluss.p, exceeding the maximum of 100 buckets.");
    /* the limits are per table */
    assert_int_equal(add_partition(f, "q", "d", &err), 0);
    const fl_ms_table_t *p = fl_catalog_get_table(&f->cat, "fluss", "p", &err);
    assert_int_equal(p->partition_count, 3);
    /* a dropped partition makes room again */
    const char *keys[] = {"dt"}, *values[] = {"a"};
    int64_t dropped;
    assert_int_equal(fl_catalog_drop_partition(&f->cat, "fluss", "p", keys, values, 1, false,
                                               &dropped, &err), 0);
    assert_true(dropped >= 0);
    assert_int_equal(fl_catalog_drop_partition(&f->cat, "fluss", "p", keys, values, 1, false,
                                               &dropped, &err), FLUSS_ERR_PARTITION_NOT_EXISTS);
    assert_string_equal(err.msg, "Partition 'dt=a' does not exist for table fluss.p");
    assert_int_equal(add_partition(f, "p", "d", &err), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_init_creates_default_database, setup, teardown),
        cmocka_unit_test_setup_teardown(test_database_create_drop_codes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_table_ids_and_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_pk_table_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_validation_codes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drop_and_recreate_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partition_limits, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
