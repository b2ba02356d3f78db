/*
 * test_client_schema.c — libfluss's table spec → TableDescriptor JSON
 * (fluss_table_spec_to_json in fluss.h): the CLI's column syntax with keys,
 * buckets and properties, read back with the server's own descriptor
 * parser; bad specs give an error code and a message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fluss.h"
#include "types_table.h"

static void spec_to_desc(const fluss_table_spec_t *spec, fl_table_desc_t *d) {
    fluss_error_t ferr = {0};
    char *json = fluss_table_spec_to_json(spec, &ferr);
    if (!json) fail_msg("spec rejected: %s", ferr.message);
    fl_error_t err;
    int rc = fl_table_desc_from_bytes(json, strlen(json), d, &err);
    if (rc) fail_msg("server parser rejects %s: %s", json, err.msg);
    free(json);
}

static void test_pk_table_spec(void **state) {
    (void)state;
    const char *props[] = {"table.log.format=ARROW", "table.replication.factor=1", NULL};
    const char *custom[] = {"k=v", "a=b=c", NULL};
    fluss_table_spec_t spec = {
        .schema = "id INT NOT NULL, name STRING COMMENT 'n', ts TIMESTAMP(3), "
                  "tags ARRAY<STRING>",
        .primary_key = "id",
        .bucket_count = 4,
        .comment = "a table",
        .properties = props,
        .custom_properties = custom,
    };
    fl_table_desc_t d;
    spec_to_desc(&spec, &d);
    const fl_schema_t *s = &d.schema;
    assert_int_equal(s->column_count, 4);
    const char *names[] = {"id", "name", "ts", "tags"};
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(s->columns[i].name, names[i]);
        assert_int_equal(s->columns[i].id, (int32_t)i);
    }
    assert_int_equal(s->highest_field_id, 3);
    assert_int_equal(s->columns[0].type->root, FL_TYPE_INTEGER);
    assert_false(s->columns[0].type->nullable);
    assert_int_equal(s->columns[1].type->root, FL_TYPE_STRING);
    assert_true(s->columns[1].type->nullable);
    assert_string_equal(s->columns[1].comment, "n");
    assert_null(s->columns[0].comment);
    assert_int_equal(s->columns[2].type->root, FL_TYPE_TIMESTAMP);
    assert_int_equal(s->columns[2].type->precision, 3);
    assert_int_equal(s->columns[3].type->root, FL_TYPE_ARRAY);
    assert_int_equal(s->columns[3].type->element->root, FL_TYPE_STRING);

    assert_true(s->has_primary_key);
    assert_int_equal(s->primary_key.count, 1);
    assert_string_equal(s->primary_key.items[0], "id");
    assert_true(d.has_bucket_count);
    assert_int_equal(d.bucket_count, 4);
    assert_int_equal(d.bucket_keys.count, 0); /* the server derives them from the key */
    assert_int_equal(d.partition_keys.count, 0);
    assert_string_equal(d.comment, "a table");
    assert_int_equal(d.properties.count, 2);
    assert_string_equal(d.properties.items[0].key, "table.log.format");
    assert_string_equal(d.properties.items[1].value, "1");
    assert_string_equal(fl_kvlist_get(&d.custom_properties, "k"), "v");
    assert_string_equal(fl_kvlist_get(&d.custom_properties, "a"), "b=c");
    fl_table_desc_free(&d);
}

static void test_partitioned_spec_with_keys(void **state) {
    (void)state;
    fluss_table_spec_t spec = {
        .schema = "id BIGINT, dt STRING, `odd name` DECIMAL(10, 2) NOT NULL COMMENT 'price',"
                  " r ROW<a INT, b MAP<STRING, INT>>, last DATE",
        .primary_key = " id , dt ",
        .partition_keys = "dt",
        .bucket_keys = "id",
        .bucket_count = 2,
    };
    fl_table_desc_t d;
    spec_to_desc(&spec, &d);
    const fl_schema_t *s = &d.schema;
    assert_int_equal(s->column_count, 5);
    assert_string_equal(s->columns[2].name, "odd name");
    assert_int_equal(s->columns[2].type->precision, 10);
    assert_int_equal(s->columns[2].type->scale, 2);
    assert_false(s->columns[2].type->nullable);
    assert_string_equal(s->columns[2].comment, "price");
    /* primary-key columns come back NOT NULL */
    assert_false(s->columns[0].type->nullable);
    assert_false(s->columns[1].type->nullable);
    assert_int_equal(s->primary_key.count, 2);
    assert_string_equal(s->primary_key.items[0], "id");
    assert_string_equal(s->primary_key.items[1], "dt");
    assert_int_equal(d.partition_keys.count, 1);
    assert_string_equal(d.partition_keys.items[0], "dt");
    assert_int_equal(d.bucket_keys.count, 1);
    assert_string_equal(d.bucket_keys.items[0], "id");
    assert_int_equal(d.bucket_count, 2);
    assert_int_equal(d.properties.count, 0);
    assert_null(d.comment);

    /* column ids in order; a ROW's fields get ids right after its column,
     * like Fluss's schema builder (golden log table: c_row 18, fields 19, 20) */
    const fl_datatype_t *r = s->columns[3].type;
    assert_int_equal(r->root, FL_TYPE_ROW);
    assert_int_equal(r->field_count, 2);
    assert_int_equal(s->columns[0].id, 0);
    assert_int_equal(s->columns[1].id, 1);
    assert_int_equal(s->columns[2].id, 2);
    assert_int_equal(s->columns[3].id, 3);
    assert_int_equal(r->fields[0].field_id, 4);
    assert_int_equal(r->fields[1].field_id, 5);
    assert_int_equal(r->fields[1].type->root, FL_TYPE_MAP);
    assert_int_equal(s->columns[4].id, 6);
    assert_int_equal(s->highest_field_id, 6);
    fl_table_desc_free(&d);
}

static void test_log_table_defaults_left_to_server(void **state) {
    (void)state;
    fluss_table_spec_t spec = {.schema = "a INT"};
    fluss_error_t ferr;
    char *json = fluss_table_spec_to_json(&spec, &ferr);
    assert_non_null(json);
    /* no distribution, no properties: the coordinator fills them in */
    assert_string_equal(json,
                        "{\"version\":1,\"schema\":{\"version\":1,\"columns\":[{\"name\":\"a\","
                        "\"data_type\":{\"type\":\"INTEGER\"},\"id\":0}],\"highest_field_id\":0},"
                        "\"partition_key\":[],\"properties\":{},\"custom_properties\":{}}");
    free(json);
}

static void expect_bad_spec(const fluss_table_spec_t *spec, const char *needle) {
    fluss_error_t ferr;
    memset(&ferr, 0, sizeof(ferr));
    char *json = fluss_table_spec_to_json(spec, &ferr);
    if (json) fail_msg("'%s' accepted: %s", spec ? spec->schema : "(null)", json);
    assert_int_not_equal(ferr.code, 0);
    assert_true(strlen(ferr.message) > 0);
    if (needle && !strstr(ferr.message, needle))
        fail_msg("'%s': message '%s' lacks '%s'", spec ? spec->schema : "(null)", ferr.message,
                 needle);
    /* a NULL error pointer is allowed */
    assert_null(fluss_table_spec_to_json(spec, NULL));
}

static void test_bad_specs(void **state) {
    (void)state;
    expect_bad_spec(NULL, NULL);
    fluss_table_spec_t spec = {0};
    expect_bad_spec(&spec, NULL);
    const struct {
        const char *schema;
        const char *needle;
    } bad[] = {
        {"", "no columns"},
        {"   ", "no columns"},
        {"id", "id"},
        {"id BLOB", "id"},
        {"id INT,, x INT", NULL},
        {"id INT, name", "name"},
        {"id INT COMMENT 'x", "comment"},
        {"id INT COMMENT x", "COMMENT"},
        {"id INT garbage", "garbage"},
        {"id DECIMAL(50, 2)", "id"},
        {"id ARRAY<INT", "id"},
        {"`id INT", NULL},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        spec.schema = bad[i].schema;
        expect_bad_spec(&spec, bad[i].needle);
    }
    const char *props[] = {"novalue", NULL};
    fluss_table_spec_t p = {.schema = "a INT", .properties = props};
    expect_bad_spec(&p, "novalue");
    const char *custom[] = {"ok=1", "=v", NULL};
    fluss_table_spec_t c = {.schema = "a INT", .custom_properties = custom};
    expect_bad_spec(&c, "=v");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pk_table_spec),
        cmocka_unit_test(test_partitioned_spec_with_keys),
        cmocka_unit_test(test_log_table_defaults_left_to_server),
        cmocka_unit_test(test_bad_specs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
