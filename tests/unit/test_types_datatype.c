/*
 * test_types_datatype.c — Fluss data types (types_datatype.h): the JSON
 * form byte for byte as DataTypeJsonSerde writes it, its rejections, the
 * SQL-style text form, and equal/clone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common_buf.h"
#include "types_datatype.h"

/* Every root, in the compact key order Fluss writes. */
static const char *const round_trip_json[] = {
    "{\"type\":\"BOOLEAN\"}",
    "{\"type\":\"TINYINT\"}",
    "{\"type\":\"SMALLINT\"}",
    "{\"type\":\"INTEGER\"}",
    "{\"type\":\"BIGINT\"}",
    "{\"type\":\"FLOAT\"}",
    "{\"type\":\"DOUBLE\"}",
    "{\"type\":\"DECIMAL\",\"precision\":10,\"scale\":2}",
    "{\"type\":\"DECIMAL\",\"precision\":38,\"scale\":38}",
    "{\"type\":\"CHAR\",\"length\":5}",
    "{\"type\":\"STRING\"}",
    "{\"type\":\"BINARY\",\"length\":4}",
    "{\"type\":\"BYTES\"}",
    "{\"type\":\"DATE\"}",
    "{\"type\":\"TIME_WITHOUT_TIME_ZONE\",\"precision\":3}",
    "{\"type\":\"TIME_WITHOUT_TIME_ZONE\",\"precision\":0}",
    "{\"type\":\"TIMESTAMP_WITHOUT_TIME_ZONE\",\"precision\":6}",
    "{\"type\":\"TIMESTAMP_WITH_LOCAL_TIME_ZONE\",\"precision\":9}",
    "{\"type\":\"ARRAY\",\"element_type\":{\"type\":\"STRING\"}}",
    "{\"type\":\"MAP\",\"key_type\":{\"type\":\"STRING\",\"nullable\":false},"
    "\"value_type\":{\"type\":\"INTEGER\"}}",
    "{\"type\":\"ROW\",\"fields\":[{\"name\":\"city\",\"field_type\":{\"type\":\"STRING\"},"
    "\"description\":\"the city\",\"field_id\":19},{\"name\":\"zip\",\"field_type\":"
    "{\"type\":\"INTEGER\"},\"field_id\":20}]}",
    "{\"type\":\"ARRAY\",\"element_type\":{\"type\":\"ROW\",\"fields\":[{\"name\":\"m\","
    "\"field_type\":{\"type\":\"MAP\",\"key_type\":{\"type\":\"INTEGER\"},\"value_type\":"
    "{\"type\":\"ARRAY\",\"element_type\":{\"type\":\"BYTES\",\"nullable\":false}}},"
    "\"field_id\":-1}]}}",
};

static fl_datatype_t *from_text_json(const char *text, int *rc, fl_error_t *err) {
    json_error_t jerr;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &jerr);
    if (!j) fail_msg("bad test JSON %s: %s", text, jerr.text);
    fl_datatype_t *t = (fl_datatype_t *)0x1;
    fl_err_clear(err);
    *rc = fl_datatype_from_json(j, &t, err);
    json_decref(j);
    return t;
}

static char *to_text_json(const fl_datatype_t *t) {
    json_t *j = fl_datatype_to_json(t);
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    return s;
}

static void check_round_trip(const char *text) {
    fl_error_t err;
    int rc;
    fl_datatype_t *t = from_text_json(text, &rc, &err);
    if (rc) fail_msg("%s rejected: %s", text, err.msg);
    char *back = to_text_json(t);
    assert_string_equal(back, text);
    free(back);
    fl_datatype_destroy(t);
}

/* `{"type":"X"...` with ,"nullable":false inserted after the type name. */
static char *not_null_variant(const char *text) {
    const char *q = strchr(text + strlen("{\"type\":\""), '"');
    assert_non_null(q);
    size_t head = (size_t)(q + 1 - text);
    const char *ins = ",\"nullable\":false";
    char *out = malloc(strlen(text) + strlen(ins) + 1);
    memcpy(out, text, head);
    strcpy(out + head, ins);
    strcat(out, text + head);
    return out;
}

static void test_json_round_trip_every_type(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof(round_trip_json) / sizeof(round_trip_json[0]); i++) {
        check_round_trip(round_trip_json[i]);
        char *nn = not_null_variant(round_trip_json[i]);
        check_round_trip(nn);
        fl_error_t err;
        int rc;
        fl_datatype_t *t = from_text_json(nn, &rc, &err);
        assert_int_equal(rc, 0);
        assert_false(t->nullable);
        fl_datatype_destroy(t);
        free(nn);
    }
}

static void test_json_values_read_back(void **state) {
    (void)state;
    fl_error_t err;
    int rc;
    fl_datatype_t *t = from_text_json(round_trip_json[7], &rc, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(t->root, FL_TYPE_DECIMAL);
    assert_true(t->nullable);
    assert_int_equal(t->precision, 10);
    assert_int_equal(t->scale, 2);
    fl_datatype_destroy(t);

    t = from_text_json(round_trip_json[20], &rc, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(t->root, FL_TYPE_ROW);
    assert_int_equal(t->field_count, 2);
    assert_string_equal(t->fields[0].name, "city");
    assert_string_equal(t->fields[0].description, "the city");
    assert_int_equal(t->fields[0].field_id, 19);
    assert_int_equal(t->fields[0].type->root, FL_TYPE_STRING);
    assert_null(t->fields[1].description);
    assert_int_equal(t->fields[1].field_id, 20);
    assert_int_equal(t->fields[1].type->root, FL_TYPE_INTEGER);
    fl_datatype_destroy(t);

    t = from_text_json(round_trip_json[19], &rc, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(t->root, FL_TYPE_MAP);
    assert_false(t->key->nullable);
    assert_true(t->value->nullable);
    assert_int_equal(t->value->root, FL_TYPE_INTEGER);
    fl_datatype_destroy(t);

    /* "nullable":true is the default and is not written back */
    t = from_text_json("{\"nullable\":true,\"type\":\"CHAR\",\"length\":7}", &rc, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(t->length, 7);
    char *back = to_text_json(t);
    assert_string_equal(back, "{\"type\":\"CHAR\",\"length\":7}");
    free(back);
    fl_datatype_destroy(t);
    assert_string_equal(fl_type_root_json_name(FL_TYPE_TIMESTAMP_LTZ),
                        "TIMESTAMP_WITH_LOCAL_TIME_ZONE");
}

static void expect_json_rejected(const char *text) {
    fl_error_t err;
    int rc;
    fl_datatype_t *t = from_text_json(text, &rc, &err);
    if (rc != FLUSS_ERR_INVALID_TABLE_EXCEPTION)
        fail_msg("%s: rc %d, want INVALID_TABLE_EXCEPTION", text, rc);
    assert_int_equal(err.code, FLUSS_ERR_INVALID_TABLE_EXCEPTION);
    assert_true(strlen(err.msg) > 0);
    assert_null(t);
}

static void test_json_rejections(void **state) {
    (void)state;
    expect_json_rejected("{\"type\":\"VARCHAR\"}");
    expect_json_rejected("{\"type\":\"integer\"}");
    expect_json_rejected("{\"type\":\"DECIMAL\",\"precision\":0,\"scale\":0}");
    expect_json_rejected("{\"type\":\"DECIMAL\",\"precision\":39,\"scale\":0}");
    expect_json_rejected("{\"type\":\"DECIMAL\",\"precision\":5,\"scale\":6}");
    expect_json_rejected("{\"type\":\"DECIMAL\",\"precision\":5,\"scale\":-1}");
    expect_json_rejected("{\"type\":\"TIME_WITHOUT_TIME_ZONE\",\"precision\":10}");
    expect_json_rejected("{\"type\":\"TIMESTAMP_WITHOUT_TIME_ZONE\",\"precision\":-1}");
    expect_json_rejected("{\"type\":\"TIMESTAMP_WITH_LOCAL_TIME_ZONE\",\"precision\":10}");
    expect_json_rejected("{\"type\":\"CHAR\",\"length\":0}");
    expect_json_rejected("{\"type\":\"BINARY\",\"length\":-3}");
    expect_json_rejected("{\"type\":\"CHAR\",\"length\":null}"); /* asInt: 0 */
    /* missing keys */
    expect_json_rejected("{\"nullable\":false}");
    expect_json_rejected("{\"type\":\"CHAR\"}");
    expect_json_rejected("{\"type\":\"DECIMAL\",\"precision\":5}");
    expect_json_rejected("{\"type\":\"TIMESTAMP_WITHOUT_TIME_ZONE\"}");
    expect_json_rejected("{\"type\":\"ARRAY\"}");
    expect_json_rejected("{\"type\":\"MAP\",\"key_type\":{\"type\":\"INTEGER\"}}");
    expect_json_rejected("{\"type\":\"ROW\"}");
    expect_json_rejected("{\"type\":\"ROW\",\"fields\":[{\"field_type\":{\"type\":\"INTEGER\"}}]}");
    expect_json_rejected("{\"type\":\"ROW\",\"fields\":[{\"name\":\"a\"}]}");
    /* values no Jackson accessor makes a type of */
    expect_json_rejected("{\"type\":5}");
    expect_json_rejected("{\"type\":null}");
    expect_json_rejected("{\"type\":\"ARRAY\",\"element_type\":\"STRING\"}");
    expect_json_rejected("{\"type\":\"ARRAY\",\"element_type\":null}");
    expect_json_rejected("{\"type\":\"ROW\",\"fields\":null}");
    expect_json_rejected("{\"type\":\"ROW\",\"fields\":{}}");
    expect_json_rejected("{\"type\":\"ROW\",\"fields\":[5]}");
    /* bad children and duplicate ROW field names */
    expect_json_rejected("{\"type\":\"ARRAY\",\"element_type\":{\"type\":\"DECIMAL\","
                         "\"precision\":99,\"scale\":0}}");
    expect_json_rejected("{\"type\":\"ROW\",\"fields\":[{\"name\":\"a\",\"field_type\":"
                         "{\"type\":\"INTEGER\"}},{\"name\":\"a\",\"field_type\":{\"type\":"
                         "\"STRING\"}}]}");
    /* not an object */
    expect_json_rejected("[]");
    expect_json_rejected("\"INTEGER\"");
    expect_json_rejected("5");
    expect_json_rejected("null");
}

static fl_datatype_t *accepted(const char *text) {
    fl_error_t err;
    int rc;
    fl_datatype_t *t = from_text_json(text, &rc, &err);
    if (rc) fail_msg("%s: refused (%s)", text, err.msg);
    return t;
}

/* Each member read as DataTypeJsonSerde reads it, with JsonNode's
 * accessors: any value is an int or a boolean; a name is any value's
 * text. */
static void test_json_read_as_jackson(void **state) {
    (void)state;
    struct {
        const char *json;
        int32_t length;
        bool nullable;
    } chars[] = {
        {"{\"type\":\"CHAR\",\"length\":\"5\"}", 5, true},
        {"{\"type\":\"CHAR\",\"length\":\" +6 \"}", 6, true},
        {"{\"type\":\"CHAR\",\"length\":\"7.9\"}", 7, true},
        {"{\"type\":\"CHAR\",\"length\":8.7}", 8, true},
        {"{\"type\":\"CHAR\",\"length\":true}", 1, true},
        {"{\"type\":\"CHAR\",\"length\":4294967297}", 1, true}, /* (int) of a long */
        {"{\"type\":\"CHAR\",\"length\":3,\"nullable\":\"false\"}", 3, false},
        {"{\"type\":\"CHAR\",\"length\":3,\"nullable\":\" true\"}", 3, true},
        {"{\"type\":\"CHAR\",\"length\":3,\"nullable\":null}", 3, false},
        {"{\"type\":\"CHAR\",\"length\":3,\"nullable\":1}", 3, true},
        {"{\"type\":\"CHAR\",\"length\":3,\"nullable\":0}", 3, false},
        {"{\"type\":\"CHAR\",\"length\":3,\"nullable\":{}}", 3, false},
        {"{\"type\":\"CHAR\",\"length\":3,\"extra\":[1,2]}", 3, true},
    };
    for (size_t i = 0; i < sizeof(chars) / sizeof(chars[0]); i++) {
        fl_datatype_t *t = accepted(chars[i].json);
        if (t->length != chars[i].length || t->nullable != chars[i].nullable)
            fail_msg("%s: length %d nullable %d", chars[i].json, t->length, t->nullable);
        fl_datatype_destroy(t);
    }
    /* "99999999999" overflows an int: NumberInput.parseAsInt gives 0 */
    expect_json_rejected("{\"type\":\"CHAR\",\"length\":\"99999999999\"}");
    expect_json_rejected("{\"type\":\"CHAR\",\"length\":\"five\"}");

    fl_datatype_t *t = accepted("{\"type\":\"ROW\",\"fields\":[{\"name\":5,\"field_type\":"
                                "{\"type\":\"INTEGER\"},\"field_id\":\"x\",\"description\":null},"
                                "{\"name\":null,\"field_type\":{\"type\":\"INTEGER\"},"
                                "\"description\":7,\"field_id\":null}]}");
    assert_string_equal(t->fields[0].name, "5");
    assert_int_equal(t->fields[0].field_id, 0); /* asInt("x") */
    assert_null(t->fields[0].description);     /* ours: null is none */
    assert_string_equal(t->fields[1].name, "null");
    assert_string_equal(t->fields[1].description, "7");
    assert_int_equal(t->fields[1].field_id, 0);
    fl_datatype_destroy(t);
}

/* depth wrappers: ARRAY<ARRAY<...<INTEGER>...>> */
static char *nested_arrays(int depth) {
    const char *open = "{\"type\":\"ARRAY\",\"element_type\":";
    size_t n = (size_t)depth * (strlen(open) + 1) + 32;
    char *s = calloc(1, n);
    for (int i = 0; i < depth; i++) strcat(s, open);
    strcat(s, "{\"type\":\"INTEGER\"}");
    for (int i = 0; i < depth; i++) strcat(s, "}");
    return s;
}

static void test_json_nesting_limit(void **state) {
    (void)state;
    char *ok = nested_arrays(FL_TYPE_DEPTH_MAX);
    check_round_trip(ok);
    free(ok);
    char *deep = nested_arrays(FL_TYPE_DEPTH_MAX + 1);
    expect_json_rejected(deep);
    free(deep);
    char *very = nested_arrays(1000);
    expect_json_rejected(very);
    free(very);
}

static char *parse_format(const char *text) {
    const char *p = text;
    fl_datatype_t *t = NULL;
    fl_error_t err;
    int rc = fl_datatype_parse(&p, &t, &err);
    if (rc) fail_msg("'%s' rejected: %s", text, err.msg);
    assert_int_equal(*p, '\0');
    fl_buf_t b;
    fl_buf_init(&b);
    fl_datatype_format(t, &b);
    char *s = calloc(1, b.len + 1);
    memcpy(s, b.data, b.len);
    fl_buf_free(&b);
    /* the formatted text parses back into an equal tree */
    const char *q = s;
    fl_datatype_t *again = NULL;
    assert_int_equal(fl_datatype_parse(&q, &again, &err), 0);
    assert_true(fl_datatype_equal(t, again));
    fl_datatype_destroy(again);
    fl_datatype_destroy(t);
    return s;
}

static void expect_format(const char *text, const char *want) {
    char *got = parse_format(text);
    assert_string_equal(got, want);
    free(got);
}

static void test_text_parse_and_format(void **state) {
    (void)state;
    expect_format("INT NOT NULL", "INT NOT NULL");
    expect_format("int", "INT");
    expect_format("INTEGER NULL", "INT");
    expect_format("DECIMAL(10, 2)", "DECIMAL(10, 2)");
    expect_format("decimal(10,2)", "DECIMAL(10, 2)");
    expect_format("DECIMAL", "DECIMAL(10, 0)");
    expect_format("DECIMAL(7)", "DECIMAL(7, 0)");
    expect_format("ARRAY<STRING>", "ARRAY<STRING>");
    expect_format("MAP<STRING, INT>", "MAP<STRING, INT>");
    expect_format("MAP<STRING NOT NULL,ARRAY<BIGINT>> NOT NULL",
                  "MAP<STRING NOT NULL, ARRAY<BIGINT>> NOT NULL");
    expect_format("ROW<a INT, b STRING>", "ROW<a INT, b STRING>");
    expect_format("ROW(a INT NOT NULL, b ROW<c DATE>)", "ROW<a INT NOT NULL, b ROW<c DATE>>");
    expect_format("TIMESTAMP(3)", "TIMESTAMP(3)");
    expect_format("TIMESTAMP", "TIMESTAMP(6)");
    expect_format("TIMESTAMP(6) WITH LOCAL TIME ZONE", "TIMESTAMP_LTZ(6)");
    expect_format("TIMESTAMP_LTZ(3) NOT NULL", "TIMESTAMP_LTZ(3) NOT NULL");
    expect_format("TIME(3)", "TIME(3)");
    expect_format("VARCHAR(10)", "STRING");
    expect_format("VARBINARY(10)", "BYTES");
    expect_format("CHAR(3)", "CHAR(3)");
    expect_format("BINARY(16)", "BINARY(16)");
    expect_format("  BOOLEAN  ", "BOOLEAN");
    expect_format("TINYINT", "TINYINT");
    expect_format("SMALLINT", "SMALLINT");
    expect_format("BIGINT", "BIGINT");
    expect_format("FLOAT", "FLOAT");
    expect_format("DOUBLE", "DOUBLE");
    expect_format("DATE", "DATE");
    expect_format("BYTES", "BYTES");
}

static void test_text_parse_values_and_advance(void **state) {
    (void)state;
    const char *p = "TIMESTAMP(6) WITH LOCAL TIME ZONE NOT NULL, b STRING";
    fl_datatype_t *t = NULL;
    fl_error_t err;
    assert_int_equal(fl_datatype_parse(&p, &t, &err), 0);
    assert_int_equal(t->root, FL_TYPE_TIMESTAMP_LTZ);
    assert_int_equal(t->precision, 6);
    assert_false(t->nullable);
    assert_string_equal(p, ", b STRING");
    fl_datatype_destroy(t);

    p = "ROW<a INT, b STRING> COMMENT 'x'";
    assert_int_equal(fl_datatype_parse(&p, &t, &err), 0);
    assert_int_equal(t->field_count, 2);
    assert_string_equal(t->fields[1].name, "b");
    assert_int_equal(t->fields[0].field_id, -1);
    assert_int_equal(t->fields[1].type->root, FL_TYPE_STRING);
    while (*p == ' ') p++; /* whitespace after the type may or may not be eaten */
    assert_string_equal(p, "COMMENT 'x'");
    fl_datatype_destroy(t);
}

static void expect_parse_error(const char *text) {
    const char *p = text;
    fl_datatype_t *t = (fl_datatype_t *)0x1;
    fl_error_t err;
    fl_err_clear(&err);
    int rc = fl_datatype_parse(&p, &t, &err);
    if (rc == 0) fail_msg("'%s' accepted", text);
    assert_int_equal(err.code, rc);
    assert_true(strlen(err.msg) > 0);
    assert_null(t);
}

static void test_text_parse_errors(void **state) {
    (void)state;
    const char *bad[] = {
        "",           "FOO",          "INTEGRAL",        "DECIMAL(10",    "DECIMAL(x)",
        "DECIMAL(39, 0)", "DECIMAL(5, 6)", "DECIMAL(0)", "CHAR(0)",  "TIME(10)",
        "TIMESTAMP(10)", "ARRAY",     "ARRAY<INT",       "ARRAY<>",       "MAP<INT>",
        "MAP<INT, >", "ROW<>",        "ROW<a>",          "ROW<a INT, a STRING>",
        "INT NOT",    "TIMESTAMP(3) WITH TIME ZONE", "CHAR(99999999999)",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) expect_parse_error(bad[i]);

    /* nesting past the limit is an error, not a stack overflow */
    size_t n = 200;
    char *s = calloc(1, n * 7 + 8);
    for (size_t i = 0; i < n; i++) strcat(s, "ARRAY<");
    strcat(s, "INT");
    for (size_t i = 0; i < n; i++) strcat(s, ">");
    expect_parse_error(s);
    free(s);
}

static void test_equal_and_clone(void **state) {
    (void)state;
    fl_error_t err;
    int rc;
    fl_datatype_t *t = from_text_json(round_trip_json[21], &rc, &err);
    assert_int_equal(rc, 0);
    fl_datatype_t *c = fl_datatype_clone(t);
    assert_ptr_not_equal(c, t);
    assert_true(fl_datatype_equal(t, c));
    assert_ptr_not_equal(c->element, t->element);
    assert_ptr_not_equal(c->element->fields, t->element->fields);
    assert_ptr_not_equal(c->element->fields[0].name, t->element->fields[0].name);
    char *a = to_text_json(t), *b = to_text_json(c);
    assert_string_equal(a, b);
    free(a);
    free(b);

    /* each difference is seen, however deep */
    c->element->fields[0].type->value->element->nullable = true;
    assert_false(fl_datatype_equal(t, c));
    c->element->fields[0].type->value->element->nullable = false;
    assert_true(fl_datatype_equal(t, c));
    c->element->fields[0].field_id = 3;
    assert_false(fl_datatype_equal(t, c));
    c->element->fields[0].field_id = -1;
    c->element->fields[0].description = strdup("d");
    assert_false(fl_datatype_equal(t, c));
    fl_datatype_destroy(c);

    fl_datatype_t *d1 = fl_datatype_new(FL_TYPE_DECIMAL), *d2 = fl_datatype_new(FL_TYPE_DECIMAL);
    assert_true(fl_datatype_equal(d1, d2));
    d2->scale = 1;
    assert_false(fl_datatype_equal(d1, d2));
    d2->scale = 0;
    d2->root = FL_TYPE_TIMESTAMP;
    assert_false(fl_datatype_equal(d1, d2));
    assert_true(fl_datatype_equal(NULL, NULL));
    assert_false(fl_datatype_equal(d1, NULL));
    assert_false(fl_datatype_equal(NULL, d1));
    assert_null(fl_datatype_clone(NULL));
    fl_datatype_destroy(d1);
    fl_datatype_destroy(d2);
    fl_datatype_destroy(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_round_trip_every_type),
        cmocka_unit_test(test_json_values_read_back),
        cmocka_unit_test(test_json_rejections),
        cmocka_unit_test(test_json_read_as_jackson),
        cmocka_unit_test(test_json_nesting_limit),
        cmocka_unit_test(test_text_parse_and_format),
        cmocka_unit_test(test_text_parse_values_and_advance),
        cmocka_unit_test(test_text_parse_errors),
        cmocka_unit_test(test_equal_and_clone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
