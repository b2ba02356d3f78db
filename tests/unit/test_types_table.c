/*
 * test_types_table.c — schemas, table and database descriptors and name
 * rules (types_schema.h, types_table.h). The table descriptor JSON must come
 * back byte for byte as the reference server wrote it: the fixtures are the
 * table_json texts recorded from GET_TABLE_INFO in tests/golden/admin/pyfluss.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "types_schema.h"
#include "types_table.h"

static int schema_from_text(const char *text, fl_schema_t *s, fl_error_t *err) {
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    if (!j) fail_msg("bad test JSON %s: %s", text, jerr.text);
    fl_err_clear(err);
    int rc = fl_schema_from_json(j, s, err);
    json_decref(j);
    return rc;
}

#define COL(name, type) "{\"name\":\"" name "\",\"data_type\":{\"type\":\"" type "\"}}"
#define COL_ID(name, type, id) \
    "{\"name\":\"" name "\",\"data_type\":{\"type\":\"" type "\"},\"id\":" #id "}"

static void test_schema_ids_by_position(void **state) {
    (void)state;
    fl_schema_t s;
    fl_error_t err;
    int rc = schema_from_text("{\"version\":1,\"columns\":[" COL("a", "INTEGER") "," COL("b", "STRING") ","
                              COL("c", "BIGINT") "]}", &s, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(s.column_count, 3);
    for (size_t i = 0; i < 3; i++) assert_int_equal(s.columns[i].id, (int32_t)i);
    assert_int_equal(s.highest_field_id, 2);
    assert_false(s.has_primary_key);
    assert_true(s.columns[0].type->nullable);
    assert_int_equal(fl_schema_column_index(&s, "c"), 2);
    assert_int_equal(fl_schema_column_index(&s, "zz"), -1);
    fl_schema_free(&s);

    /* given ids are kept; the highest field id covers nested ROW fields */
    rc = schema_from_text("{\"columns\":[" COL_ID("a", "INTEGER", 5) ",{\"name\":\"r\",\"data_type\":"
                          "{\"type\":\"ROW\",\"fields\":[{\"name\":\"x\",\"field_type\":{\"type\":"
                          "\"INTEGER\"},\"field_id\":9}]},\"id\":2}]}", &s, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(s.columns[0].id, 5);
    assert_int_equal(s.columns[1].id, 2);
    assert_int_equal(s.highest_field_id, 9);
    fl_schema_free(&s);

    /* an explicit highest_field_id above the ids is kept ... */
    rc = schema_from_text("{\"columns\":[" COL_ID("a", "INTEGER", 0) "],\"highest_field_id\":7}",
                          &s, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(s.highest_field_id, 7);
    fl_schema_free(&s);
    /* ... one below them is an error */
    rc = schema_from_text("{\"columns\":[" COL_ID("a", "INTEGER", 0) "," COL_ID("b", "INTEGER", 3)
                          "],\"highest_field_id\":2}", &s, &err);
    assert_int_equal(rc, FLUSS_ERR_INVALID_TABLE_EXCEPTION);
}

static void test_schema_rejections(void **state) {
    (void)state;
    fl_schema_t s;
    fl_error_t err;
    int rc = schema_from_text("{\"columns\":[" COL_ID("a", "INTEGER", 0) "," COL("b", "STRING") "]}",
                              &s, &err);
    assert_int_equal(rc, FLUSS_ERR_INVALID_TABLE_EXCEPTION);
    assert_string_equal(err.msg,
                        "All columns must have columnId or none of them must have columnId.");

    rc = schema_from_text("{\"columns\":[" COL("a", "INTEGER") "," COL("a", "STRING") "]}", &s, &err);
    assert_int_equal(rc, FLUSS_ERR_INVALID_TABLE_EXCEPTION);
    assert_string_equal(err.msg,
                        "Table column [a, a] must not contain duplicate fields. Found: [a]");

    rc = schema_from_text("{\"columns\":[" COL("a", "INTEGER") "," COL("b", "STRING")
                          "],\"primary_key\":[\"zz\"]}", &s, &err);
    assert_int_equal(rc, FLUSS_ERR_INVALID_TABLE_EXCEPTION);
    assert_string_equal(err.msg, "Table column [a, b] should include all primary key constraint [zz]");

    rc = schema_from_text("{\"columns\":[" COL_ID("a", "INTEGER", 1) "," COL_ID("b", "STRING", 1) "]}",
                          &s, &err);
    assert_int_equal(rc, FLUSS_ERR_INVALID_TABLE_EXCEPTION);

    const char *bad[] = {
        "[]",
        "{}",
        "{\"columns\":[{\"data_type\":{\"type\":\"INTEGER\"}}]}",
        "{\"columns\":[{\"name\":\"a\"}]}",
        "{\"columns\":[{\"name\":\"a\",\"data_type\":{\"type\":\"NOPE\"}}]}",
        "{\"columns\":[" COL("a", "INTEGER") "],\"primary_key\":[]}",
        "{\"columns\":[" COL("a", "INTEGER") "],\"primary_key\":\"a\"}",
        "{\"columns\":[" COL("a", "INTEGER") "],\"primary_key\":[\"a\",\"a\"]}",
        "{\"columns\":[" COL("a", "INTEGER") "],\"primary_key\":null}",
        "{\"columns\":[5]}",
        "{\"columns\":[null]}",
        "{\"columns\":[{\"name\":\"a\",\"data_type\":null}]}",
        "{\"columns\":[{\"name\":\"a\",\"data_type\":{\"type\":\"INTEGER\"},\"agg_function\":{}}]}",
        "{\"columns\":[{\"name\":\"a\",\"data_type\":{\"type\":\"INTEGER\"},\"id\":-2}]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        rc = schema_from_text(bad[i], &s, &err);
        if (rc != FLUSS_ERR_INVALID_TABLE_EXCEPTION) fail_msg("%s: rc %d", bad[i], rc);
    }
}

static void test_schema_primary_key_not_null(void **state) {
    (void)state;
    fl_schema_t s;
    fl_error_t err;
    int rc = schema_from_text("{\"columns\":[" COL("id", "INTEGER") "," COL("v", "STRING") ","
                              COL("r", "STRING") "],\"primary_key\":[\"r\",\"id\"]}", &s, &err);
    assert_int_equal(rc, 0);
    assert_true(s.has_primary_key);
    assert_int_equal(s.primary_key.count, 2);
    assert_string_equal(s.primary_key.items[0], "r");
    assert_false(s.columns[0].type->nullable);
    assert_true(s.columns[1].type->nullable);
    assert_false(s.columns[2].type->nullable);
    json_t *j = fl_schema_to_json(&s);
    char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(text,
                        "{\"version\":1,\"columns\":[{\"name\":\"id\",\"data_type\":{\"type\":"
                        "\"INTEGER\",\"nullable\":false},\"id\":0},{\"name\":\"v\",\"data_type\":"
                        "{\"type\":\"STRING\"},\"id\":1},{\"name\":\"r\",\"data_type\":{\"type\":"
                        "\"STRING\",\"nullable\":false},\"id\":2}],\"primary_key\":[\"r\",\"id\"],"
                        "\"highest_field_id\":2}");
    free(text);
    json_decref(j);

    fl_schema_t c;
    fl_schema_copy(&c, &s);
    fl_schema_free(&s);
    assert_int_equal(c.column_count, 3);
    assert_string_equal(c.columns[2].name, "r");
    assert_false(c.columns[2].type->nullable);
    assert_string_equal(c.primary_key.items[1], "id");
    fl_schema_free(&c);
}

/* The one-line verbatim table_json of a golden GET_TABLE_INFO dump. */
static char *golden_table_json(const char *name) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/tests/golden/admin/pyfluss/%s", FLUSS_SOURCE_DIR, name);
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot open %s", path);
    char *line = NULL, *out = NULL;
    size_t cap = 0;
    bool next = false;
    while (getline(&line, &cap, f) > 0) {
        if (next) {
            char *p = line;
            while (*p == ' ') p++;
            p[strcspn(p, "\n")] = '\0';
            out = strdup(p);
            break;
        }
        if (strstr(line, "table_json") && strstr(line, "verbatim:")) next = true;
    }
    free(line);
    fclose(f);
    if (!out) fail_msg("no table_json in %s", path);
    return out;
}

static void check_golden(const char *file, fl_table_desc_t *d) {
    char *want = golden_table_json(file);
    fl_error_t err;
    int rc = fl_table_desc_from_bytes(want, strlen(want), d, &err);
    if (rc) fail_msg("%s rejected: %s", file, err.msg);
    char *got = fl_table_desc_dumps(d);
    assert_string_equal(got, want);
    /* a copy dumps the same text */
    fl_table_desc_t c;
    fl_table_desc_copy(&c, d);
    char *again = fl_table_desc_dumps(&c);
    assert_string_equal(again, want);
    free(again);
    fl_table_desc_free(&c);
    free(got);
    free(want);
}

static void test_golden_log_table(void **state) {
    (void)state;
    fl_table_desc_t d;
    check_golden("0024_GET_TABLE_INFO.txt", &d);
    assert_int_equal(d.schema.column_count, 20);
    assert_int_equal(d.schema.highest_field_id, 21);
    assert_false(d.schema.has_primary_key);
    assert_string_equal(d.comment, "golden log table");
    assert_true(d.has_bucket_count);
    assert_int_equal(d.bucket_count, 2);
    assert_int_equal(d.bucket_keys.count, 0);
    assert_string_equal(fl_kvlist_get(&d.properties, "table.replication.factor"), "1");
    assert_string_equal(fl_kvlist_get(&d.custom_properties, "origin"), "golden");
    const fl_column_t *row = &d.schema.columns[18];
    assert_string_equal(row->name, "c_row");
    assert_int_equal(row->type->fields[1].field_id, 20);
    assert_false(d.schema.columns[19].type->nullable);
    fl_table_desc_free(&d);
}

static void test_golden_pk_table(void **state) {
    (void)state;
    fl_table_desc_t d;
    check_golden("0027_GET_TABLE_INFO.txt", &d);
    assert_true(d.schema.has_primary_key);
    assert_int_equal(d.schema.primary_key.count, 2);
    assert_string_equal(d.bucket_keys.items[0], "id");
    assert_int_equal(d.bucket_count, 3);
    assert_int_equal(d.properties.count, 3);
    assert_string_equal(d.properties.items[2].key, "table.kv.format-version");
    assert_int_equal(d.schema.columns[3].type->precision, 12);
    assert_int_equal(d.schema.columns[3].type->scale, 3);
    fl_table_desc_free(&d);
}

static void test_golden_partitioned_table(void **state) {
    (void)state;
    fl_table_desc_t d;
    check_golden("0029_GET_TABLE_INFO.txt", &d);
    assert_null(d.comment);
    assert_int_equal(d.partition_keys.count, 1);
    assert_string_equal(d.partition_keys.items[0], "dt");
    assert_int_equal(d.custom_properties.count, 0);
    fl_table_desc_free(&d);
}

static int desc_rc(const char *text) {
    fl_table_desc_t d;
    fl_error_t err;
    fl_err_clear(&err);
    int rc = fl_table_desc_from_bytes(text, strlen(text), &d, &err);
    if (rc == 0) fl_table_desc_free(&d);
    else assert_int_equal(err.code, rc);
    return rc;
}

#define SCHEMA1 "\"schema\":{\"columns\":[" COL("a", "INTEGER") "]}"

static void test_table_desc_rejections(void **state) {
    (void)state;
    assert_int_equal(desc_rc("{" SCHEMA1 ",\"partition_key\":[],\"properties\":{},"
                             "\"custom_properties\":{}}"), 0);
    assert_int_equal(desc_rc("not json"), FLUSS_ERR_INVALID_TABLE_EXCEPTION);
    assert_int_equal(desc_rc("[]"), FLUSS_ERR_INVALID_TABLE_EXCEPTION);
    assert_int_equal(desc_rc("null"), FLUSS_ERR_INVALID_TABLE_EXCEPTION);
    assert_int_equal(desc_rc("{\"partition_key\":[],\"properties\":{},\"custom_properties\":{}}"),
                     FLUSS_ERR_INVALID_TABLE_EXCEPTION);
    assert_int_equal(desc_rc("{\"schema\":null,\"partition_key\":[]}"),
                     FLUSS_ERR_INVALID_TABLE_EXCEPTION);
    assert_int_equal(desc_rc("{\"schema\":[],\"partition_key\":[]}"),
                     FLUSS_ERR_INVALID_TABLE_EXCEPTION);
    /* duplicate keys are not silently merged */
    assert_int_equal(desc_rc("{" SCHEMA1 "," SCHEMA1 ",\"partition_key\":[],\"properties\":{},"
                             "\"custom_properties\":{}}"),
                     FLUSS_ERR_INVALID_TABLE_EXCEPTION);
}

static void desc_ok(const char *text, fl_table_desc_t *d) {
    fl_error_t err;
    fl_err_clear(&err);
    if (fl_table_desc_from_bytes(text, strlen(text), d, &err))
        fail_msg("%s: refused (%s)", text, err.msg);
}

/* Every member of a table descriptor as TableDescriptorJsonSerde reads it:
 * null arrays and maps are empty (the independent Go client sends
 * "partition_key": null and "bucket_key": null for empty lists), values
 * of any kind are read as text or ints, unknown members are ignored. */
static void test_table_desc_lenient(void **state) {
    (void)state;
    fl_table_desc_t d;
    desc_ok("{\"version\":1," SCHEMA1 ",\"comment\":null,\"partition_key\":null,"
            "\"bucket_key\":null,\"bucket_count\":3,\"properties\":null,"
            "\"custom_properties\":null,\"unknown\":{\"x\":[1]}}", &d);
    assert_null(d.comment);
    assert_int_equal(d.partition_keys.count, 0);
    assert_true(d.has_distribution);
    assert_int_equal(d.bucket_keys.count, 0);
    assert_true(d.has_bucket_count);
    assert_int_equal(d.bucket_count, 3);
    assert_int_equal(d.properties.count, 0);
    assert_int_equal(d.custom_properties.count, 0);
    fl_table_desc_free(&d);

    /* members the reference dereferences unchecked are required; a null
     * count is asInt's 0 (refused later by the bucket check) */
    const char *missing[] = {
        "{\"partition_key\":[],\"properties\":{},\"custom_properties\":{}}",
        "{" SCHEMA1 ",\"properties\":{},\"custom_properties\":{}}",
        "{" SCHEMA1 ",\"partition_key\":[],\"custom_properties\":{}}",
        "{" SCHEMA1 ",\"partition_key\":[],\"properties\":{}}",
        "{" SCHEMA1 ",\"partition_key\":[],\"bucket_count\":2,\"properties\":{},"
        "\"custom_properties\":{}}",
    };
    for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++)
        assert_int_equal(desc_rc(missing[i]), FLUSS_ERR_INVALID_TABLE_EXCEPTION);
    desc_ok("{" SCHEMA1 ",\"partition_key\":[],\"bucket_key\":[\"a\"],\"bucket_count\":null,"
            "\"properties\":{},\"custom_properties\":{}}", &d);
    assert_true(d.has_bucket_count);
    assert_int_equal(d.bucket_count, 0);
    fl_table_desc_free(&d);
    desc_ok("{" SCHEMA1 ",\"partition_key\":[],\"properties\":{},\"custom_properties\":{}}", &d);
    assert_false(d.has_distribution);
    fl_table_desc_free(&d);

    /* values of other kinds: JsonNode.asText / asInt / elements */
    desc_ok("{" SCHEMA1 ",\"comment\":12,\"partition_key\":\"a\",\"bucket_key\":{\"k\":\"a\"},"
            "\"bucket_count\":\"4\",\"properties\":{\"s\":\"v\",\"i\":5,\"d\":1.5,\"b\":true,"
            "\"n\":null,\"o\":{\"x\":1},\"a\":[1]},\"custom_properties\":[\"x\"]}", &d);
    assert_string_equal(d.comment, "12");
    assert_int_equal(d.partition_keys.count, 0); /* a string has no elements */
    assert_int_equal(d.bucket_keys.count, 1);    /* an object's are its values */
    assert_string_equal(d.bucket_keys.items[0], "a");
    assert_int_equal(d.bucket_count, 4);
    const char *want[][2] = {{"s", "v"}, {"i", "5"}, {"d", "1.5"}, {"b", "true"},
                             {"n", "null"}, {"o", ""}, {"a", ""}};
    assert_int_equal(d.properties.count, 7);
    for (size_t i = 0; i < 7; i++)
        assert_string_equal(fl_kvlist_get(&d.properties, want[i][0]), want[i][1]);
    assert_int_equal(d.custom_properties.count, 0);
    fl_table_desc_free(&d);

    desc_ok("{" SCHEMA1 ",\"partition_key\":[\"a\",7,null],\"properties\":{},"
            "\"custom_properties\":{}}", &d);
    assert_int_equal(d.partition_keys.count, 3);
    assert_string_equal(d.partition_keys.items[1], "7");
    assert_string_equal(d.partition_keys.items[2], "null");
    fl_table_desc_free(&d);
}

/* The schema's members as SchemaJsonSerde and ColumnJsonSerde read them. */
static void test_schema_lenient(void **state) {
    (void)state;
    fl_schema_t s;
    fl_error_t err;
    int rc = schema_from_text("{\"columns\":[{\"name\":\"a\",\"data_type\":{\"type\":\"INTEGER\"},"
                              "\"comment\":null,\"agg_function\":null,\"extra\":1},"
                              "{\"name\":7,\"data_type\":{\"type\":\"STRING\"},\"comment\":3}],"
                              "\"primary_key\":[\"a\"],\"auto_increment_column\":null,"
                              "\"highest_field_id\":\"1\",\"unknown\":[]}",
                              &s, &err);
    if (rc) fail_msg("refused: %s", err.msg);
    assert_int_equal(s.column_count, 2);
    assert_null(s.columns[0].comment);
    assert_null(s.columns[0].agg_function);
    assert_string_equal(s.columns[1].name, "7");
    assert_string_equal(s.columns[1].comment, "3");
    assert_int_equal(s.auto_increment.count, 0);
    assert_int_equal(s.highest_field_id, 1);
    fl_schema_free(&s);

    /* an id of another kind is asInt's: "x" is 0; an object of columns
     * is its values; a type that names no function drops the function */
    rc = schema_from_text("{\"columns\":{\"c1\":" COL_ID("a", "INTEGER", "x") ",\"c2\":"
                          "{\"name\":\"b\",\"data_type\":{\"type\":\"BIGINT\"},\"id\":\"1\","
                          "\"agg_function\":{\"type\":null}}}}",
                          &s, &err);
    if (rc) fail_msg("refused: %s", err.msg);
    assert_int_equal(s.column_count, 2);
    assert_int_equal(s.columns[0].id, 0);
    assert_int_equal(s.columns[1].id, 1);
    assert_null(s.columns[1].agg_function);
    fl_schema_free(&s);

    /* an empty list of columns parses (the CREATE TABLE check refuses it) */
    rc = schema_from_text("{\"columns\":{}}", &s, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(s.column_count, 0);
    fl_schema_free(&s);

    rc = schema_from_text("{\"columns\":[" COL("a", "INTEGER") "],\"primary_key\":null}", &s,
                          &err);
    assert_int_equal(rc, FLUSS_ERR_INVALID_TABLE_EXCEPTION);
    assert_string_equal(err.msg,
                        "Primary key constraint must be defined for at least a single column.");
}

static char *db_round_trip(const char *in, int *rc) {
    fl_database_desc_t d;
    fl_error_t err;
    *rc = fl_database_desc_from_bytes(in, strlen(in), &d, &err);
    if (*rc) return NULL;
    char *s = fl_database_desc_dumps(&d);
    fl_database_desc_free(&d);
    return s;
}

static void test_database_desc(void **state) {
    (void)state;
    int rc;
    const char *full = "{\"version\":1,\"comment\":\"c\",\"custom_properties\":{\"k\":\"v\"}}";
    char *s = db_round_trip(full, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(s, full);
    free(s);

    fl_database_desc_t d;
    fl_error_t err;
    assert_int_equal(fl_database_desc_from_bytes(full, strlen(full), &d, &err), 0);
    assert_string_equal(d.comment, "c");
    assert_int_equal(d.custom_properties.count, 1);
    assert_string_equal(fl_kvlist_get(&d.custom_properties, "k"), "v");
    fl_database_desc_free(&d);

    s = db_round_trip("", &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(s, "{\"version\":1,\"custom_properties\":{}}");
    free(s);
    assert_int_equal(fl_database_desc_from_bytes(NULL, 0, &d, &err), 0);
    assert_null(d.comment);
    fl_database_desc_free(&d);

    s = db_round_trip("{\"custom_properties\":{\"b\":\"2\",\"a\":\"1\"}}", &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(s, "{\"version\":1,\"custom_properties\":{\"b\":\"2\",\"a\":\"1\"}}");
    free(s);

    assert_null(db_round_trip("{", &rc));
    assert_int_equal(rc, FLUSS_ERR_INVALID_DATABASE_EXCEPTION);
    assert_null(db_round_trip("[1]", &rc));
    assert_int_equal(rc, FLUSS_ERR_INVALID_DATABASE_EXCEPTION);
    /* as DatabaseDescriptorJsonSerde reads them: a map that is not an
     * object is empty, a comment any value's text (null: none, ours) */
    s = db_round_trip("{\"custom_properties\":[],\"comment\":null,\"x\":1}", &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(s, "{\"version\":1,\"custom_properties\":{}}");
    free(s);
    s = db_round_trip("{\"custom_properties\":{\"n\":null,\"i\":2},\"comment\":false}", &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(s, "{\"version\":1,\"comment\":\"false\",\"custom_properties\":"
                           "{\"n\":\"null\",\"i\":\"2\"}}");
    free(s);
    assert_null(db_round_trip("null", &rc));
    assert_int_equal(rc, FLUSS_ERR_INVALID_DATABASE_EXCEPTION);
}

static void expect_name(const char *name, const char *what, int code, const char *msg) {
    fl_error_t err;
    fl_err_clear(&err);
    int rc = fl_name_check(name, what, code, &err);
    if (!msg) {
        if (rc) fail_msg("'%s' rejected: %s", name, err.msg);
        return;
    }
    assert_int_equal(rc, code);
    assert_int_equal(err.code, code);
    assert_string_equal(err.msg, msg);
}

static void test_name_check(void **state) {
    (void)state;
    const int db = FLUSS_ERR_INVALID_DATABASE_EXCEPTION, tb = FLUSS_ERR_INVALID_TABLE_EXCEPTION;
    expect_name("a.b", "Database", db,
                "Database name a.b is invalid: 'a.b' contains one or more characters other "
                "than ASCII alphanumerics, '_' and '-'");
    expect_name("bad name!", "Database", db,
                "Database name bad name! is invalid: 'bad name!' contains one or more "
                "characters other than ASCII alphanumerics, '_' and '-'");
    expect_name("__x", "Table", tb,
                "Table name __x is invalid: '__' is not allowed as prefix, since it is reserved "
                "for internal databases/internal tables/internal partitions in Fluss server");
    expect_name("", "Table", tb, "Table name  is invalid: the empty string is not allowed");
    expect_name(".", "Database", db, "Database name . is invalid: '.' is not allowed");
    expect_name("..", "Table", tb, "Table name .. is invalid: '..' is not allowed");
    expect_name("h\xc3\xa9", "Table", tb,
                "Table name h\xc3\xa9 is invalid: 'h\xc3\xa9' contains one or more characters "
                "other than ASCII alphanumerics, '_' and '-'");
    expect_name("ok_Name-9", "Table", tb, NULL);
    expect_name("_x", "Table", tb, NULL);
    expect_name("x__", "Table", tb, NULL);

    char n[202];
    memset(n, 'a', 200);
    n[200] = '\0';
    expect_name(n, "Table", tb, NULL);
    n[200] = 'a';
    n[201] = '\0';
    char want[600];
    snprintf(want, sizeof(want),
             "Table name %s is invalid: the length of '%s' is longer than the max allowed "
             "length 200",
             n, n);
    expect_name(n, "Table", tb, want);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_ids_by_position),
        cmocka_unit_test(test_schema_rejections),
        cmocka_unit_test(test_schema_primary_key_not_null),
        cmocka_unit_test(test_golden_log_table),
        cmocka_unit_test(test_golden_pk_table),
        cmocka_unit_test(test_golden_partitioned_table),
        cmocka_unit_test(test_table_desc_rejections),
        cmocka_unit_test(test_table_desc_lenient),
        cmocka_unit_test(test_schema_lenient),
        cmocka_unit_test(test_database_desc),
        cmocka_unit_test(test_name_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
