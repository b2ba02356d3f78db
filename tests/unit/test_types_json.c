/*
 * test_types_json.c — JSON values read as Jackson's JsonNode accessors
 * read them (types_json.h): the texts, ints and booleans the reference's
 * descriptor parsers make of every kind of value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common_alloc.h"
#include "types_json.h"

static json_t *load(const char *text) {
    json_error_t jerr;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &jerr);
    if (!j) fail_msg("bad test JSON %s: %s", text, jerr.text);
    return j;
}

static void test_text(void **state) {
    (void)state;
    const char *cases[][2] = {
        {"\"abc\"", "abc"}, {"-12", "-12"},      {"true", "true"},   {"false", "false"},
        {"null", "null"},   {"{\"a\":1}", ""},   {"[1,2]", ""},      {"1.5", "1.5"},
        {"100.0", "100.0"}, {"1e7", "1.0E7"},    {"0.001", "0.001"}, {"1e-4", "1.0E-4"},
        {"-2.5e10", "-2.5E10"}, {"123456.789", "123456.789"}, {"0.0", "0.0"},
        {"9999999.0", "9999999.0"}, {"0.1", "0.1"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *j = load(cases[i][0]);
        char *t = fl_json_text(j);
        if (strcmp(t, cases[i][1]) != 0)
            fail_msg("asText(%s) = \"%s\", want \"%s\"", cases[i][0], t, cases[i][1]);
        fl_free(t);
        json_decref(j);
    }
}

static void test_as_int(void **state) {
    (void)state;
    struct {
        const char *json;
        int32_t want;
    } cases[] = {
        {"7", 7},          {"-7", -7},          {"4294967297", 1},    {"2147483648", INT32_MIN},
        {"7.9", 7},        {"-7.9", -7},        {"1e12", INT32_MAX},  {"true", 1},
        {"false", 0},      {"null", 0},         {"{}", 0},            {"[3]", 0},
        {"\"12\"", 12},    {"\" 12 \"", 12},    {"\"+12\"", 12},      {"\"-12\"", -12},
        {"\"1.9\"", 1},    {"\"1e3\"", 1000},   {"\"abc\"", 0},       {"\"\"", 0},
        {"\"-\"", 0},      {"\"99999999999\"", 0}, {"\"2147483647\"", INT32_MAX},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *j = load(cases[i].json);
        int32_t got = fl_json_as_int(j);
        if (got != cases[i].want) fail_msg("asInt(%s) = %d, want %d", cases[i].json, got, cases[i].want);
        json_decref(j);
    }
}

static void test_as_bool(void **state) {
    (void)state;
    struct {
        const char *json;
        bool want;
    } cases[] = {
        {"true", true},  {"false", false},      {"1", true},          {"0", false},
        {"-3", true},    {"1.0", false},        {"\"true\"", true},   {"\" true \"", true},
        {"\"TRUE\"", false}, {"\"yes\"", false}, {"null", false},     {"{}", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *j = load(cases[i].json);
        if (fl_json_as_bool(j) != cases[i].want) fail_msg("asBoolean(%s)", cases[i].json);
        json_decref(j);
    }
}

static size_t count_elements(const char *text, const char *first) {
    json_t *j = load(text);
    fl_json_iter_t it = fl_json_iter(j);
    size_t n = 0;
    for (const json_t *e; (e = fl_json_next(&it)); n++)
        if (n == 0 && first) {
            char *t = fl_json_text(e);
            assert_string_equal(t, first);
            fl_free(t);
        }
    json_decref(j);
    return n;
}

static void test_elements(void **state) {
    (void)state;
    assert_int_equal(count_elements("[\"a\",2,3]", "a"), 3);
    assert_int_equal(count_elements("{\"x\":\"b\",\"y\":1}", "b"), 2);
    assert_int_equal(count_elements("null", NULL), 0);
    assert_int_equal(count_elements("\"abc\"", NULL), 0);
    assert_int_equal(count_elements("5", NULL), 0);
    assert_int_equal(count_elements("[]", NULL), 0);
    fl_json_iter_t none = fl_json_iter(NULL);
    assert_null(fl_json_next(&none));

    json_t *o = load("{\"a\":null,\"b\":0}");
    assert_false(fl_json_has_non_null(o, "a"));
    assert_true(fl_json_has_non_null(o, "b"));
    assert_false(fl_json_has_non_null(o, "c"));
    json_decref(o);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_as_int),
        cmocka_unit_test(test_as_bool),
        cmocka_unit_test(test_elements),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
