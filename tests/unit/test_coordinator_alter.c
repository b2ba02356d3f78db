/*
 * test_coordinator_alter.c — ALTER TABLE on the coordinator
 * (coordinator_alter.h, coordinator_schema_update.h) over a real embedded
 * metastore in a temporary directory: the 0.9.1 refusals with their codes
 * and words, properties set and reset, ADD COLUMN ids (nested ROW fields
 * included), DROP/RENAME COLUMN (fluss-c extensions) and the columns they
 * may not touch, and that every change is durable (the store reopened).
 */
#define _GNU_SOURCE
#include <ftw.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "coordinator_alter.h"
#include "coordinator_catalog.h"
#include "coordinator_schema_update.h"
#include "metastore.h"

typedef struct fixture {
    char dir[64];
    fl_metastore_t *ms;
    fl_catalog_t cat;
} fixture_t;

static const fl_table_defaults_t defaults = {
    .bucket_number = 1, .replication_factor = 1, .max_bucket_num = 100};
static const int32_t tablets[] = {0};

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void open_store(fixture_t *f) {
    fl_error_t err;
    assert_int_equal(fl_metastore_embedded_open(f->dir, &f->ms, &err), 0);
    assert_int_equal(fl_catalog_init(&f->cat, f->ms, &defaults, tablets, 1, &err), 0);
}

static void reopen_store(fixture_t *f) {
    f->ms->ops->close(f->ms);
    open_store(f);
}

static int setup(void **state) {
    fixture_t *f = calloc(1, sizeof(*f));
    strcpy(f->dir, "/tmp/fl_alter_XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    open_store(f);
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

/* log table t: id INT, name STRING; pk table p: id INT (key), v STRING,
 * ver BIGINT (versioned); bucketed/partitioned table bp. */
static void create_tables(fixture_t *f) {
    fl_error_t err;
    const char *t = "{\"schema\":{\"columns\":[{\"name\":\"id\",\"data_type\":{\"type\":"
                    "\"INTEGER\"}},{\"name\":\"name\",\"data_type\":{\"type\":\"STRING\"}}]},"
                    "\"partition_key\":[],\"properties\":{},\"custom_properties\":{}}";
    assert_int_equal(fl_catalog_create_table(&f->cat, "fluss", "t", (const uint8_t *)t, strlen(t),
                                             false, &err), 0);
    const char *p = "{\"schema\":{\"columns\":[{\"name\":\"id\",\"data_type\":{\"type\":"
                    "\"INTEGER\"}},{\"name\":\"v\",\"data_type\":{\"type\":\"STRING\"}},"
                    "{\"name\":\"ver\",\"data_type\":{\"type\":\"BIGINT\"}},"
                    "{\"name\":\"n\",\"data_type\":{\"type\":\"BIGINT\"}}],"
                    "\"primary_key\":[\"id\"],\"auto_increment_column\":[\"n\"]},"
                    "\"partition_key\":[],\"properties\":{\"table.merge-engine\":\"versioned\","
                    "\"table.merge-engine.versioned.ver-column\":\"ver\"},"
                    "\"custom_properties\":{}}";
    assert_int_equal(fl_catalog_create_table(&f->cat, "fluss", "p", (const uint8_t *)p, strlen(p),
                                             false, &err), 0);
    const char *bp = "{\"schema\":{\"columns\":[{\"name\":\"a\",\"data_type\":{\"type\":"
                     "\"INTEGER\"}},{\"name\":\"day\",\"data_type\":{\"type\":\"STRING\"}},"
                     "{\"name\":\"x\",\"data_type\":{\"type\":\"STRING\"}}]},"
                     "\"partition_key\":[\"day\"],\"bucket_key\":[\"a\"],\"bucket_count\":2,"
                     "\"properties\":{},\"custom_properties\":{}}";
    assert_int_equal(fl_catalog_create_table(&f->cat, "fluss", "bp", (const uint8_t *)bp,
                                             strlen(bp), false, &err), 0);
}

static const fl_ms_table_t *table(fixture_t *f, const char *name) {
    const fl_ms_table_t *t = f->ms->ops->table_get(f->ms, "fluss", name);
    assert_non_null(t);
    return t;
}

/* The value of key in the stored descriptor's section (properties /
 * custom_properties), or NULL; copied into buf. */
static const char *prop(fixture_t *f, const char *name, const char *section, const char *key,
                        char *buf, size_t cap) {
    json_t *j = json_loads(table(f, name)->table_json, 0, NULL);
    assert_non_null(j);
    const char *v = json_string_value(json_object_get(json_object_get(j, section), key));
    if (v) snprintf(buf, cap, "%s", v);
    json_decref(j);
    return v ? buf : NULL;
}

static int alter(fixture_t *f, const char *name, const fl_alter_table_req_t *tmpl,
                 fl_alter_outcome_t *outcome, fl_error_t *err) {
    fl_alter_table_req_t r = *tmpl;
    r.database = "fluss";
    r.table = name;
    fl_err_clear(err);
    return fl_catalog_alter_table(&f->cat, &r, outcome, err);
}

#define CFG(k, v, op) ((fl_alter_config_t){k, v, op})

static int set1(fixture_t *f, const char *name, const char *k, const char *v, int op,
                fl_error_t *err) {
    fl_alter_config_t c = CFG(k, v, op);
    fl_alter_table_req_t r = {.configs = &c, .n_configs = 1};
    fl_alter_outcome_t o;
    return alter(f, name, &r, &o, err);
}

static void test_properties(void **state) {
    fixture_t *f = *state;
    create_tables(f);
    fl_error_t err;
    char buf[64];
    const fl_ms_table_t *t = table(f, "t");
    int64_t created = t->created_ms, modified = t->modified_ms;
    fl_alter_config_t set[] = {CFG("table.datalake.freshness", "1min", FL_ALTER_OP_SET),
                               CFG("table.log.tiered.local-segments", "3", FL_ALTER_OP_SET),
                               CFG("owner", "a", FL_ALTER_OP_SET),
                               CFG("note", "n", FL_ALTER_OP_SET)};
    fl_alter_table_req_t r = {.configs = set, .n_configs = 4};
    fl_alter_outcome_t o;
    assert_int_equal(alter(f, "t", &r, &o, &err), 0);
    assert_int_equal(o, FL_ALTER_PROPERTIES);
    assert_string_equal(prop(f, "t", "properties", "table.datalake.freshness", buf, 64), "1min");
    assert_string_equal(prop(f, "t", "custom_properties", "owner", buf, 64), "a");
    t = table(f, "t");
    assert_int_equal(t->schema_id, 1);
    assert_true(t->created_ms == created && t->modified_ms == modified);

    /* set and reset of one key: reset; an absent key reset: fine */
    fl_alter_config_t mix[] = {CFG("note", NULL, FL_ALTER_OP_DELETE),
                               CFG("note", "m", FL_ALTER_OP_SET),
                               CFG("table.datalake.freshness", NULL, FL_ALTER_OP_DELETE),
                               CFG("absent", NULL, FL_ALTER_OP_DELETE)};
    r = (fl_alter_table_req_t){.configs = mix, .n_configs = 4};
    assert_int_equal(alter(f, "t", &r, &o, &err), 0);
    assert_null(prop(f, "t", "custom_properties", "note", buf, 64));
    assert_null(prop(f, "t", "properties", "table.datalake.freshness", buf, 64));
    assert_string_equal(prop(f, "t", "properties", "table.log.tiered.local-segments", buf, 64),
                        "3");
    /* the same value again changes nothing */
    r = (fl_alter_table_req_t){.configs = &set[2], .n_configs = 1};
    assert_int_equal(alter(f, "t", &r, &o, &err), 0);
    assert_int_equal(o, FL_ALTER_NOTHING);

    reopen_store(f);
    assert_string_equal(prop(f, "t", "custom_properties", "owner", buf, 64), "a");
    assert_string_equal(prop(f, "t", "properties", "table.log.tiered.local-segments", buf, 64),
                        "3");
}

static void test_property_refusals(void **state) {
    fixture_t *f = *state;
    create_tables(f);
    fl_error_t err;
    char *before = strdup(table(f, "t")->table_json);
    assert_int_equal(set1(f, "t", "table.log.ttl", "1d", FL_ALTER_OP_SET, &err), 56);
    assert_string_equal(err.msg, "The option 'table.log.ttl' is not supported to alter yet.");
    assert_int_equal(set1(f, "t", "table.log.ttl", NULL, FL_ALTER_OP_DELETE, &err), 56);
    assert_int_equal(set1(f, "t", "table.datalake.enabled", "false", FL_ALTER_OP_SET, &err), 56);
    assert_non_null(strstr(err.msg, "created before the Fluss cluster enabled datalake"));
    assert_int_equal(set1(f, "t", "table.log.tiered.local-segments", "0", FL_ALTER_OP_SET, &err),
                     39);
    assert_string_equal(err.msg, "'table.log.tiered.local-segments' must be greater than 0.");
    assert_int_equal(set1(f, "t", "table.datalake.freshness", "x", FL_ALTER_OP_SET, &err), 39);
    assert_string_equal(err.msg, "Invalid value for config 'table.datalake.freshness'. Reason: "
                                 "Could not parse value 'x' for key 'table.datalake.freshness'.");
    assert_int_equal(set1(f, "t", "k", "v", FL_ALTER_OP_APPEND, &err), -1);
    assert_string_equal(err.msg,
                        "java.lang.IllegalArgumentException: Unsupported alter configs op type 2");
    assert_int_equal(set1(f, "t", "k", NULL, FL_ALTER_OP_SET, &err), -1);
    assert_int_equal(set1(f, "t.x", "k", "v", FL_ALTER_OP_SET, &err), 15);
    assert_int_equal(set1(f, "nope", "k", "v", FL_ALTER_OP_SET, &err), 7);
    assert_string_equal(err.msg, "Table 'fluss.nope' does not exist.");
    assert_string_equal(table(f, "t")->table_json, before);
    free(before);

    /* a table that names a lake format still cannot enable it here */
    const char *lt = "{\"schema\":{\"columns\":[{\"name\":\"a\",\"data_type\":{\"type\":"
                     "\"INTEGER\"}}]},\"partition_key\":[],\"properties\":{"
                     "\"table.datalake.format\":\"paimon\"},\"custom_properties\":{}}";
    assert_int_equal(fl_catalog_create_table(&f->cat, "fluss", "lake", (const uint8_t *)lt,
                                             strlen(lt), false, &err), 0);
    assert_int_equal(set1(f, "lake", "table.datalake.enabled", "true", FL_ALTER_OP_SET, &err),
                     56);
    assert_string_equal(err.msg, "Cannot alter table fluss.lake in data lake, because the Fluss "
                                 "cluster doesn't enable datalake tables.");
    assert_int_equal(set1(f, "lake", "table.datalake.enabled", "false", FL_ALTER_OP_SET, &err),
                     0);
}

static fl_alter_column_t add_col(const char *name, const char *type_json, int32_t position,
                                 const char *comment) {
    return (fl_alter_column_t){.name = name, .type_json = (const uint8_t *)type_json,
                               .type_json_len = strlen(type_json), .comment = comment,
                               .has_position = true, .position = position};
}

static json_t *schema_json(fixture_t *f, const char *name, int32_t id) {
    const fl_ms_table_t *t = table(f, name);
    assert_true(id >= 1 && (size_t)id <= t->schema_count);
    json_t *j = json_loads(t->schema_jsons[id - 1], 0, NULL);
    assert_non_null(j);
    return j;
}

static const char *col_name(json_t *s, size_t i) {
    return json_string_value(json_object_get(json_array_get(json_object_get(s, "columns"), i),
                                             "name"));
}

static int64_t col_id(json_t *s, size_t i) {
    return json_integer_value(
        json_object_get(json_array_get(json_object_get(s, "columns"), i), "id"));
}

static void test_add_column(void **state) {
    fixture_t *f = *state;
    create_tables(f);
    fl_error_t err;
    fl_alter_outcome_t o;
    fl_alter_column_t c = add_col("score", "{\"type\":\"BIGINT\"}", 0, "pts");
    fl_alter_table_req_t r = {.add = &c, .n_add = 1};
    assert_int_equal(alter(f, "t", &r, &o, &err), 0);
    assert_int_equal(o, FL_ALTER_SCHEMA);
    const fl_ms_table_t *t = table(f, "t");
    assert_int_equal(t->schema_id, 2);
    assert_int_equal(t->schema_count, 2);
    json_t *s2 = schema_json(f, "t", 2);
    assert_string_equal(col_name(s2, 2), "score");
    assert_int_equal(col_id(s2, 2), 2);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(s2, "columns"), 2), "comment")),
                        "pts");
    /* the descriptor carries the latest schema */
    json_t *tj = json_loads(table(f, "t")->table_json, 0, NULL);
    assert_true(json_equal(json_object_get(tj, "schema"), s2));
    json_decref(tj);
    json_decref(s2);
    json_t *s1 = schema_json(f, "t", 1);
    assert_int_equal(json_array_size(json_object_get(s1, "columns")), 2);
    json_decref(s1);

    /* a ROW column: its fields numbered right after it */
    fl_alter_column_t row = add_col(
        "pos", "{\"type\":\"ROW\",\"fields\":[{\"name\":\"x\",\"field_type\":{\"type\":"
               "\"INTEGER\"}},{\"name\":\"y\",\"field_type\":{\"type\":\"STRING\"}}]}", 0, NULL);
    fl_alter_column_t z = add_col("z", "{\"type\":\"DOUBLE\"}", 0, NULL);
    fl_alter_column_t two[] = {row, z};
    r = (fl_alter_table_req_t){.add = two, .n_add = 2};
    assert_int_equal(alter(f, "t", &r, &o, &err), 0);
    json_t *s3 = schema_json(f, "t", 3);
    assert_int_equal(col_id(s3, 3), 3);
    assert_int_equal(col_id(s3, 4), 6);
    assert_int_equal(json_integer_value(json_object_get(s3, "highest_field_id")), 6);
    json_decref(s3);

    /* refusals leave the schema alone */
    fl_alter_column_t bad[] = {add_col("name", "{\"type\":\"STRING\"}", 0, NULL),
                               add_col("nn", "{\"type\":\"INTEGER\",\"nullable\":false}", 0,
                                       NULL),
                               add_col("q", "{\"type\":\"INTEGER\"}", 1, NULL),
                               add_col("q", "{\"type\":\"NOPE\"}", 0, NULL),
                               add_col("q", "{\"type\":", 0, NULL)};
    const int codes[] = {56, -1, -1, -1, -1};
    const char *msgs[] = {"Column name already exists.",
                          "java.lang.IllegalArgumentException: Column nn must be nullable.",
                          "java.lang.IllegalArgumentException: Unsupported ColumnPositionType: 1",
                          "java.lang.IllegalArgumentException: ", "java.io.UncheckedIOException: "};
    for (size_t i = 0; i < 5; i++) {
        r = (fl_alter_table_req_t){.add = &bad[i], .n_add = 1};
        assert_int_equal(alter(f, "t", &r, &o, &err), codes[i]);
        assert_memory_equal(err.msg, msgs[i], strlen(msgs[i]));
    }
    /* properties and columns in one request */
    fl_alter_config_t cfg = CFG("k", "v", FL_ALTER_OP_SET);
    r = (fl_alter_table_req_t){.add = &z, .n_add = 1, .configs = &cfg, .n_configs = 1};
    assert_int_equal(alter(f, "t", &r, &o, &err), 56);
    assert_string_equal(err.msg, "Table alteration can only be applied to one of the following: "
                                 "table properties or table schema.");
    /* MODIFY is refused like the reference */
    fl_alter_column_t m = add_col("name", "{\"type\":\"STRING\"}", 0, NULL);
    m.has_position = false;
    r = (fl_alter_table_req_t){.modify = &m, .n_modify = 1};
    assert_int_equal(alter(f, "t", &r, &o, &err), -1);
    assert_string_equal(err.msg, "org.apache.fluss.exception.SchemaChangeException: Not support "
                                 "modify column now.");
    m.type_json = NULL;
    assert_int_equal(alter(f, "t", &r, &o, &err), -1);
    assert_int_equal(table(f, "t")->schema_id, 3);

    /* a missing table: refused, or ignored */
    r = (fl_alter_table_req_t){.add = &z, .n_add = 1};
    assert_int_equal(alter(f, "nope", &r, &o, &err), 7);
    r.ignore_if_not_exists = true;
    assert_int_equal(alter(f, "nope", &r, &o, &err), 0);
    assert_int_equal(o, FL_ALTER_NOTHING);

    reopen_store(f);
    t = table(f, "t");
    assert_int_equal(t->schema_id, 3);
    assert_int_equal(t->schema_count, 3);
    s2 = schema_json(f, "t", 2);
    assert_string_equal(col_name(s2, 2), "score");
    json_decref(s2);
    /* ids continue after a reopen */
    r = (fl_alter_table_req_t){.add = &c, .n_add = 1};
    c.name = "w";
    assert_int_equal(alter(f, "t", &r, &o, &err), 0);
    json_t *s4 = schema_json(f, "t", 4);
    assert_int_equal(col_id(s4, 5), 7);
    json_decref(s4);
}

static fl_alter_column_t named(const char *name, const char *new_name) {
    return (fl_alter_column_t){.name = name, .new_name = new_name};
}

static void test_drop_rename_columns(void **state) {
    fixture_t *f = *state;
    create_tables(f);
    fl_error_t err;
    fl_alter_outcome_t o;
    /* columns a key, partition, bucket, auto-increment or version depends on */
    struct {
        const char *table, *column, *why;
    } pinned[] = {{"p", "id", "the primary key"},
                  {"p", "n", "the auto-increment column"},
                  {"p", "ver", "table.merge-engine.versioned.ver-column"},
                  {"bp", "day", "the partition keys"},
                  {"bp", "a", "the bucket keys"}};
    for (size_t i = 0; i < sizeof(pinned) / sizeof(pinned[0]); i++) {
        fl_alter_column_t d = named(pinned[i].column, NULL);
        fl_alter_table_req_t r = {.drop = &d, .n_drop = 1};
        assert_int_equal(alter(f, pinned[i].table, &r, &o, &err), 56);
        assert_non_null(strstr(err.msg, pinned[i].why));
        fl_alter_column_t rn = named(pinned[i].column, "other");
        r = (fl_alter_table_req_t){.rename = &rn, .n_rename = 1};
        assert_int_equal(alter(f, pinned[i].table, &r, &o, &err), 56);
        assert_non_null(strstr(err.msg, "cannot be renamed"));
    }
    fl_alter_column_t d = named("nope", NULL);
    fl_alter_table_req_t r = {.drop = &d, .n_drop = 1};
    assert_int_equal(alter(f, "t", &r, &o, &err), 56);
    assert_string_equal(err.msg, "Column nope does not exist.");
    fl_alter_column_t rn = named("name", "id");
    r = (fl_alter_table_req_t){.rename = &rn, .n_rename = 1};
    assert_int_equal(alter(f, "t", &r, &o, &err), 56);
    assert_string_equal(err.msg, "Column id already exists.");
    rn = named("name", "name");
    assert_int_equal(alter(f, "t", &r, &o, &err), 0);
    assert_int_equal(o, FL_ALTER_NOTHING);

    /* drop name, then add name again: a new id; renames keep ids */
    d = named("name", NULL);
    r = (fl_alter_table_req_t){.drop = &d, .n_drop = 1};
    assert_int_equal(alter(f, "t", &r, &o, &err), 0);
    assert_int_equal(o, FL_ALTER_SCHEMA);
    fl_alter_column_t only = named("id", NULL);
    r = (fl_alter_table_req_t){.drop = &only, .n_drop = 1};
    assert_int_equal(alter(f, "t", &r, &o, &err), 56);
    assert_non_null(strstr(err.msg, "the only column"));
    fl_alter_column_t a = add_col("name", "{\"type\":\"STRING\"}", 0, NULL);
    rn = named("id", "key");
    r = (fl_alter_table_req_t){.add = &a, .n_add = 1, .rename = &rn, .n_rename = 1};
    assert_int_equal(alter(f, "t", &r, &o, &err), 0);
    json_t *s = schema_json(f, "t", 3);
    assert_string_equal(col_name(s, 0), "key");
    assert_int_equal(col_id(s, 0), 0);
    assert_string_equal(col_name(s, 1), "name");
    assert_int_equal(col_id(s, 1), 2);
    assert_int_equal(json_integer_value(json_object_get(s, "highest_field_id")), 2);
    json_decref(s);
    s = schema_json(f, "t", 2);
    assert_int_equal(json_array_size(json_object_get(s, "columns")), 1);
    json_decref(s);
    /* a failing change in a request leaves every other one undone */
    fl_alter_column_t a2 = add_col("w", "{\"type\":\"STRING\"}", 0, NULL);
    fl_alter_column_t d2 = named("nope", NULL);
    r = (fl_alter_table_req_t){.add = &a2, .n_add = 1, .drop = &d2, .n_drop = 1};
    assert_int_equal(alter(f, "t", &r, &o, &err), 56);
    assert_int_equal(table(f, "t")->schema_id, 3);
}

/* fl_schema_update on its own: changes apply in order, *changed. */
static void test_schema_update_order(void **state) {
    (void)state;
    fl_table_desc_t d;
    fl_error_t err;
    const char *j = "{\"schema\":{\"columns\":[{\"name\":\"a\",\"data_type\":{\"type\":\"INTEGER\"}"
                    ",\"id\":0},{\"name\":\"b\",\"data_type\":{\"type\":\"STRING\"},\"id\":5}],"
                    "\"highest_field_id\":7},\"partition_key\":[],\"bucket_key\":[],"
                    "\"bucket_count\":1,\"properties\":{},\"custom_properties\":{}}";
    assert_int_equal(fl_table_desc_from_bytes(j, strlen(j), &d, &err), 0);
    fl_datatype_t *ty = fl_datatype_new(FL_TYPE_BIGINT);
    ty->nullable = true;
    fl_column_change_t ch[] = {
        {.kind = FL_COLUMN_ADD, .name = "c", .type = ty},
        {.kind = FL_COLUMN_RENAME, .name = "c", .new_name = "d"},
        {.kind = FL_COLUMN_DROP, .name = "b"},
    };
    fl_schema_t out;
    bool changed;
    assert_int_equal(fl_schema_update(&d, ch, 3, &out, &changed, &err), 0);
    assert_true(changed);
    assert_int_equal(out.column_count, 2);
    assert_string_equal(out.columns[1].name, "d");
    assert_int_equal(out.columns[1].id, 8); /* after the highest id, not the largest present */
    assert_int_equal(out.highest_field_id, 8);
    fl_schema_free(&out);
    assert_int_equal(fl_schema_update(&d, ch, 0, &out, &changed, &err), 0);
    assert_false(changed);
    fl_schema_free(&out);
    ty->nullable = false;
    assert_int_equal(fl_schema_update(&d, ch, 1, &out, &changed, &err), -1);
    assert_int_equal(out.column_count, 0);
    fl_datatype_destroy(ty);
    fl_table_desc_free(&d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_properties, setup, teardown),
        cmocka_unit_test_setup_teardown(test_property_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_column, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drop_rename_columns, setup, teardown),
        cmocka_unit_test(test_schema_update_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
