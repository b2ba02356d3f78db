/*
 * test_kv_agg.c — the aggregation merge engine (kv_agg.h, types_aggfn.h,
 * kv_agg_rbm.h): the function of each column from the schema JSON, the
 * CREATE TABLE and tablet refusals, every function over every type it
 * takes (NULLs, wrap-around, DECIMAL precision, Java comparisons), partial
 * updates and deletes, and the rbm32 / rbm64 byte formats (hand-derived
 * Roaring64Bitmap vectors, round trips, truncations).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kv_agg.h"
#include "kv_agg_rbm.h"
#include "types_aggfn.h"
#include "types_schema.h"

/* A table (k INT primary key, v <type> with agg function fn). */
typedef struct agg_table {
    fl_schema_t schema;
    fl_kv_agg_spec_t spec;
    const fl_datatype_t *types[8];
    fl_row_t old_row, new_row, out;
} agg_table_t;

static int schema_text(const char *text, fl_schema_t *s, fl_error_t *err) {
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    if (!j) fail_msg("bad test JSON %s: %s", text, jerr.text);
    fl_err_clear(err);
    int rc = fl_schema_from_json(j, s, err);
    json_decref(j);
    return rc;
}

/* agg is the JSON of the agg_function object or NULL. */
static char *two_col_schema(const char *type_json, const char *agg) {
    static char buf[2048];
    snprintf(buf, sizeof(buf),
             "{\"version\":1,\"columns\":[{\"name\":\"k\",\"data_type\":{\"type\":\"INTEGER\"}},"
             "{\"name\":\"v\",\"data_type\":%s%s%s}],\"primary_key\":[\"k\"]}",
             type_json, agg ? ",\"agg_function\":" : "", agg ? agg : "");
    return buf;
}

static void table_open(agg_table_t *t, const char *type_json, const char *agg) {
    fl_error_t err;
    memset(t, 0, sizeof(*t));
    assert_int_equal(schema_text(two_col_schema(type_json, agg), &t->schema, &err), 0);
    int rc = fl_kv_agg_spec_init(&t->spec, &t->schema, &err);
    if (rc) fail_msg("spec: %s", err.msg);
    for (size_t i = 0; i < t->schema.column_count; i++) t->types[i] = t->schema.columns[i].type;
    fl_row_init(&t->old_row, 2);
    fl_row_init(&t->new_row, 2);
    fl_row_init(&t->out, 2);
}

static void table_close(agg_table_t *t) {
    fl_row_free(&t->old_row);
    fl_row_free(&t->new_row);
    fl_row_free(&t->out);
    fl_kv_agg_spec_reset(&t->spec);
    fl_schema_free(&t->schema);
}

static void merge_ok(agg_table_t *t) {
    fl_error_t err;
    fl_err_clear(&err);
    t->old_row.cells[0] = (fl_cell_t){.i = 1};
    t->new_row.cells[0] = (fl_cell_t){.i = 1};
    int rc = fl_kv_agg_merge(&t->spec, t->types, 2, &t->old_row, &t->new_row, NULL, &t->out, &err);
    if (rc) fail_msg("merge: %s", err.msg);
    assert_false(t->out.cells[0].is_null);
    assert_int_equal(t->out.cells[0].i, 1);
}

static void set_null(fl_row_t *r, size_t c) { r->cells[c] = (fl_cell_t){.is_null = true}; }
static void set_i(fl_row_t *r, size_t c, int64_t v) { r->cells[c] = (fl_cell_t){.i = v}; }
static void set_d(fl_row_t *r, size_t c, double v) { r->cells[c] = (fl_cell_t){.d = v}; }
static void set_dec(fl_row_t *r, size_t c, __int128 v) { r->cells[c] = (fl_cell_t){.dec = v}; }
static void set_ts(fl_row_t *r, size_t c, int64_t ms, int32_t ns) {
    r->cells[c] = (fl_cell_t){.i = ms, .nanos = ns};
}
static void set_s(fl_row_t *r, size_t c, const char *s, size_t n) { fl_row_set_bytes(r, c, s, n); }

static void assert_out_bytes(agg_table_t *t, const char *s, size_t n) {
    const fl_cell_t *c = &t->out.cells[1];
    assert_false(c->is_null);
    assert_int_equal(c->len, n);
    if (n) assert_memory_equal(fl_row_cell_bytes(&t->out, c), s, n);
}

/* ---- the function of each column ---------------------------------------- */

static void test_spec_defaults_and_parameters(void **state) {
    (void)state;
    fl_schema_t s;
    fl_kv_agg_spec_t spec;
    fl_error_t err;
    assert_int_equal(
        schema_text("{\"version\":1,\"columns\":["
                    "{\"name\":\"k\",\"data_type\":{\"type\":\"INTEGER\"}},"
                    "{\"name\":\"a\",\"data_type\":{\"type\":\"BIGINT\"}},"
                    "{\"name\":\"b\",\"data_type\":{\"type\":\"STRING\"},\"agg_function\":{\"type\":\"listagg\"}},"
                    "{\"name\":\"c\",\"data_type\":{\"type\":\"STRING\"},\"agg_function\":"
                    "{\"type\":\"STRING-AGG\",\"parameters\":{\"delimiter\":\"; \"}}},"
                    "{\"name\":\"d\",\"data_type\":{\"type\":\"BIGINT\"},\"agg_function\":{\"type\":\" Sum \",\"parameters\":{}}},"
                    "{\"name\":\"e\",\"data_type\":{\"type\":\"BIGINT\"},\"agg_function\":{\"type\":\"median\"}}"
                    "],\"primary_key\":[\"k\"]}",
                    &s, &err),
        0);
    /* the parser leaves agg_function as Fluss's round trip would */
    assert_null(s.columns[5].agg_function); /* unknown function dropped */
    char *d = json_dumps(s.columns[4].agg_function, JSON_COMPACT);
    assert_string_equal(d, "{\"type\":\"sum\"}");
    free(d);
    d = json_dumps(s.columns[3].agg_function, JSON_COMPACT);
    assert_string_equal(d, "{\"type\":\"string_agg\",\"parameters\":{\"delimiter\":\"; \"}}");
    free(d);
    assert_int_equal(fl_kv_agg_spec_init(&spec, &s, &err), 0);
    assert_int_equal(spec.column_count, 6);
    assert_true(spec.columns[0].is_primary_key);
    assert_int_equal(spec.columns[0].fn, FL_AGGFN_LAST_VALUE);
    assert_int_equal(spec.columns[1].fn, FL_AGGFN_LAST_VALUE_IGNORE_NULLS);
    assert_int_equal(spec.columns[2].fn, FL_AGGFN_LISTAGG);
    assert_string_equal(spec.columns[2].delimiter, ",");
    assert_int_equal(spec.columns[3].fn, FL_AGGFN_STRING_AGG);
    assert_string_equal(spec.columns[3].delimiter, "; ");
    assert_int_equal(spec.columns[4].fn, FL_AGGFN_SUM);
    assert_int_equal(spec.columns[5].fn, FL_AGGFN_LAST_VALUE_IGNORE_NULLS);
    assert_false(fl_kv_agg_supports_retract(&spec));
    fl_kv_agg_spec_reset(&spec);
    fl_schema_free(&s);

    /* a function on a key column: Schema.Builder's refusal */
    assert_int_equal(schema_text(two_col_schema("{\"type\":\"INTEGER\"}", NULL), &s, &err), 0);
    fl_schema_free(&s);
    assert_int_equal(
        schema_text("{\"version\":1,\"columns\":[{\"name\":\"k\",\"data_type\":{\"type\":\"INTEGER\"},"
                    "\"agg_function\":{\"type\":\"sum\"}}],\"primary_key\":[\"k\"]}",
                    &s, &err),
        FLUSS_ERR_INVALID_TABLE_EXCEPTION);
    assert_string_equal(err.msg, "Cannot set aggregation function for primary key column 'k'. "
                                 "Primary key columns automatically use 'primary-key' aggregation.");
}

static void test_aggfn_names(void **state) {
    (void)state;
    assert_int_equal(fl_aggfn_from_string("last-value-ignore-nulls"), FL_AGGFN_LAST_VALUE_IGNORE_NULLS);
    assert_int_equal(fl_aggfn_from_string("RBM64"), FL_AGGFN_RBM64);
    assert_int_equal(fl_aggfn_from_string(""), FL_AGGFN_NONE);
    assert_int_equal(fl_aggfn_from_string("sum_"), FL_AGGFN_NONE);
    assert_string_equal(fl_aggfn_name(FL_AGGFN_FIRST_VALUE_IGNORE_NULLS), "first_value_ignore_nulls");
}

/* CREATE TABLE check (coordinator) and the tablet's refusals. */
static int validate(const char *type_json, const char *agg, fl_error_t *err) {
    fl_schema_t s;
    assert_int_equal(schema_text(two_col_schema(type_json, agg), &s, err), 0);
    int rc = fl_aggfn_validate_schema(&s, err);
    fl_schema_free(&s);
    return rc;
}

static int spec_of(const char *type_json, const char *agg, fl_error_t *err) {
    fl_schema_t s;
    fl_kv_agg_spec_t spec;
    assert_int_equal(schema_text(two_col_schema(type_json, agg), &s, err), 0);
    int rc = fl_kv_agg_spec_init(&spec, &s, err);
    if (!rc) fl_kv_agg_spec_reset(&spec);
    fl_schema_free(&s);
    return rc;
}

static void test_refused_combinations(void **state) {
    (void)state;
    fl_error_t err;
    assert_int_equal(validate("{\"type\":\"STRING\"}", "{\"type\":\"sum\"}", &err),
                     FLUSS_ERR_INVALID_CONFIG_EXCEPTION);
    assert_string_equal(err.msg, "Invalid aggregation function for column 'v': Data type for sum "
                                 "column must be part of [TINYINT, SMALLINT, INTEGER, BIGINT, "
                                 "FLOAT, DOUBLE, DECIMAL] but was 'STRING'.");
    assert_int_equal(validate("{\"type\":\"INTEGER\",\"nullable\":false}", "{\"type\":\"bool_or\"}", &err),
                     FLUSS_ERR_INVALID_CONFIG_EXCEPTION);
    assert_string_equal(err.msg, "Invalid aggregation function for column 'v': Data type for "
                                 "bool_or column must be part of [BOOLEAN] but was 'INT NOT NULL'.");
    assert_int_equal(validate("{\"type\":\"BYTES\"}", "{\"type\":\"max\"}", &err),
                     FLUSS_ERR_INVALID_CONFIG_EXCEPTION);
    assert_int_equal(validate("{\"type\":\"STRING\"}", "{\"type\":\"rbm32\"}", &err),
                     FLUSS_ERR_INVALID_CONFIG_EXCEPTION);
    assert_int_equal(validate("{\"type\":\"STRING\"}",
                              "{\"type\":\"listagg\",\"parameters\":{\"sep\":\"x\"}}", &err),
                     FLUSS_ERR_INVALID_CONFIG_EXCEPTION);
    assert_string_equal(err.msg, "Invalid aggregation function for column 'v': Parameter 'sep' is "
                                 "not supported for aggregation function 'listagg'. Supported "
                                 "parameters: [delimiter]");
    assert_int_equal(validate("{\"type\":\"BIGINT\"}",
                              "{\"type\":\"sum\",\"parameters\":{\"delimiter\":\",\"}}", &err),
                     FLUSS_ERR_INVALID_CONFIG_EXCEPTION);
    assert_non_null(strstr(err.msg, "Supported parameters: none"));
    assert_int_equal(validate("{\"type\":\"STRING\"}",
                              "{\"type\":\"string_agg\",\"parameters\":{\"delimiter\":\"\"}}", &err),
                     FLUSS_ERR_INVALID_CONFIG_EXCEPTION);
    assert_string_equal(err.msg, "Invalid aggregation function for column 'v': Parameter "
                                 "'delimiter' for aggregation function 'string_agg' must be a "
                                 "non-empty string");
    /* accepted at CREATE TABLE */
    assert_int_equal(validate("{\"type\":\"CHAR\",\"length\":3}", "{\"type\":\"listagg\"}", &err), 0);
    assert_int_equal(validate("{\"type\":\"ARRAY\",\"element_type\":{\"type\":\"INTEGER\"}}",
                              "{\"type\":\"last_value\"}", &err), 0);
    assert_int_equal(validate("{\"type\":\"TIMESTAMP_WITH_LOCAL_TIME_ZONE\",\"precision\":6}",
                              "{\"type\":\"min\"}", &err), 0);
    assert_int_equal(validate("{\"type\":\"BIGINT\"}", "{\"type\":\"nonsense\"}", &err), 0);

    /* the tablet: Fluss's factories */
    assert_int_equal(spec_of("{\"type\":\"CHAR\",\"length\":3}", "{\"type\":\"listagg\"}", &err),
                     FLUSS_ERR_UNKNOWN_SERVER_ERROR);
    assert_non_null(strstr(err.msg, "Data type for listagg column must be 'StringType' but was 'CHAR(3)'"));
    assert_int_equal(spec_of("{\"type\":\"DATE\"}", "{\"type\":\"sum\"}", &err),
                     FLUSS_ERR_UNKNOWN_SERVER_ERROR);
    assert_int_equal(spec_of("{\"type\":\"BOOLEAN\"}", "{\"type\":\"max\"}", &err),
                     FLUSS_ERR_UNKNOWN_SERVER_ERROR);
    assert_int_equal(spec_of("{\"type\":\"BINARY\",\"length\":4}", "{\"type\":\"rbm64\"}", &err),
                     FLUSS_ERR_UNKNOWN_SERVER_ERROR);
    assert_int_equal(spec_of("{\"type\":\"BYTES\"}", "{\"type\":\"max\"}", &err), 0);
}

/* ---- folds -------------------------------------------------------------- */

static void test_sum_integers_wrap(void **state) {
    (void)state;
    struct {
        const char *type;
        int64_t a, b, sum, product;
    } cases[] = {
        {"TINYINT", 127, 1, -128, 127},
        {"TINYINT", -100, -100, 56, 16},
        {"SMALLINT", 32767, 2, -32767, -2},
        {"INTEGER", 2147483647, 1, INT32_MIN, 2147483647},
        {"INTEGER", 65536, 65536, 131072, 0},
        {"BIGINT", INT64_MAX, 1, INT64_MIN, INT64_MAX},
        {"BIGINT", 3, -4, -1, -12},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        char ty[64];
        snprintf(ty, sizeof(ty), "{\"type\":\"%s\"}", cases[k].type);
        for (int prod = 0; prod < 2; prod++) {
            agg_table_t t;
            table_open(&t, ty, prod ? "{\"type\":\"product\"}" : "{\"type\":\"sum\"}");
            set_i(&t.old_row, 1, cases[k].a);
            set_i(&t.new_row, 1, cases[k].b);
            merge_ok(&t);
            assert_false(t.out.cells[1].is_null);
            assert_int_equal(t.out.cells[1].i, prod ? cases[k].product : cases[k].sum);
            /* a NULL side yields the other side */
            set_null(&t.new_row, 1);
            merge_ok(&t);
            assert_int_equal(t.out.cells[1].i, cases[k].a);
            set_null(&t.old_row, 1);
            merge_ok(&t);
            assert_true(t.out.cells[1].is_null);
            set_i(&t.new_row, 1, cases[k].b);
            merge_ok(&t);
            assert_int_equal(t.out.cells[1].i, cases[k].b);
            table_close(&t);
        }
    }
}

static void test_sum_product_floating(void **state) {
    (void)state;
    agg_table_t t;
    table_open(&t, "{\"type\":\"FLOAT\"}", "{\"type\":\"sum\"}");
    set_d(&t.old_row, 1, 16777216.0);
    set_d(&t.new_row, 1, 1.0);
    merge_ok(&t);
    assert_true(t.out.cells[1].d == 16777216.0); /* single precision: +1 is lost */
    set_d(&t.old_row, 1, 0.1f);
    set_d(&t.new_row, 1, 0.2f);
    merge_ok(&t);
    assert_true(t.out.cells[1].d == (double)(0.1f + 0.2f));
    table_close(&t);
    table_open(&t, "{\"type\":\"DOUBLE\"}", "{\"type\":\"product\"}");
    set_d(&t.old_row, 1, 1e300);
    set_d(&t.new_row, 1, 1e10);
    merge_ok(&t);
    assert_true(t.out.cells[1].d > 1e308); /* +Infinity, as in Java */
    set_d(&t.old_row, 1, 0.5);
    set_d(&t.new_row, 1, -3);
    merge_ok(&t);
    assert_true(t.out.cells[1].d == -1.5);
    table_close(&t);
}

static __int128 pow10_i128(int n) {
    __int128 p = 1;
    while (n-- > 0) p *= 10;
    return p;
}

static void test_decimal_sum_product(void **state) {
    (void)state;
    agg_table_t t;
    /* precision <= 18: exact long sums, not held to the precision */
    table_open(&t, "{\"type\":\"DECIMAL\",\"precision\":5,\"scale\":2}", "{\"type\":\"sum\"}");
    set_dec(&t.old_row, 1, 99999);
    set_dec(&t.new_row, 1, 99999);
    merge_ok(&t);
    assert_false(t.out.cells[1].is_null);
    assert_true(t.out.cells[1].dec == 199998);
    set_dec(&t.old_row, 1, INT64_MAX);
    set_dec(&t.new_row, 1, 1);
    merge_ok(&t);
    assert_true(t.out.cells[1].is_null); /* long overflow: BigDecimal path, past precision */
    table_close(&t);
    /* precision > 18: NULL past the precision */
    table_open(&t, "{\"type\":\"DECIMAL\",\"precision\":20,\"scale\":0}", "{\"type\":\"sum\"}");
    set_dec(&t.old_row, 1, pow10_i128(20) - 1);
    set_dec(&t.new_row, 1, -1);
    merge_ok(&t);
    assert_true(t.out.cells[1].dec == pow10_i128(20) - 2);
    set_dec(&t.new_row, 1, 1);
    merge_ok(&t);
    assert_true(t.out.cells[1].is_null);
    table_close(&t);
    table_open(&t, "{\"type\":\"DECIMAL\",\"precision\":38,\"scale\":0}", "{\"type\":\"sum\"}");
    set_dec(&t.old_row, 1, pow10_i128(38) - 1);
    set_dec(&t.new_row, 1, pow10_i128(38) - 1);
    merge_ok(&t);
    assert_true(t.out.cells[1].is_null); /* past even __int128 */
    table_close(&t);

    /* product: scale 2s rounded HALF_UP to s */
    table_open(&t, "{\"type\":\"DECIMAL\",\"precision\":10,\"scale\":2}", "{\"type\":\"product\"}");
    struct {
        __int128 a, b, r;
    } pc[] = {{125, 101, 126}, {125, 105, 131}, {5, 10, 1}, {-5, 10, -1}, {-4, 10, 0},
              {-150, -200, 300}, {0, -7, 0}};
    for (size_t k = 0; k < sizeof(pc) / sizeof(pc[0]); k++) {
        set_dec(&t.old_row, 1, pc[k].a);
        set_dec(&t.new_row, 1, pc[k].b);
        merge_ok(&t);
        assert_false(t.out.cells[1].is_null);
        assert_true(t.out.cells[1].dec == pc[k].r);
    }
    set_dec(&t.old_row, 1, 9999999999LL); /* 99999999.99 */
    set_dec(&t.new_row, 1, 200);          /* 2.00 */
    merge_ok(&t);
    assert_true(t.out.cells[1].is_null);
    table_close(&t);
    table_open(&t, "{\"type\":\"DECIMAL\",\"precision\":38,\"scale\":10}", "{\"type\":\"product\"}");
    set_dec(&t.old_row, 1, pow10_i128(27) + 5);  /* 10^17 + 5e-10 */
    set_dec(&t.new_row, 1, pow10_i128(10) * 3);  /* 3 */
    merge_ok(&t);
    assert_true(t.out.cells[1].dec == (pow10_i128(27) + 5) * 3);
    set_dec(&t.new_row, 1, pow10_i128(22)); /* 10^12: product 10^29, 39 digits at scale 10 */
    merge_ok(&t);
    assert_true(t.out.cells[1].is_null);
    table_close(&t);
}

static void test_max_min(void **state) {
    (void)state;
    const char *ints[] = {"{\"type\":\"TINYINT\"}", "{\"type\":\"SMALLINT\"}", "{\"type\":\"INTEGER\"}",
                          "{\"type\":\"BIGINT\"}", "{\"type\":\"DATE\"}",
                          "{\"type\":\"TIME_WITHOUT_TIME_ZONE\",\"precision\":3}"};
    for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++) {
        for (int mx = 0; mx < 2; mx++) {
            agg_table_t t;
            table_open(&t, ints[k], mx ? "{\"type\":\"max\"}" : "{\"type\":\"min\"}");
            set_i(&t.old_row, 1, -5);
            set_i(&t.new_row, 1, 7);
            merge_ok(&t);
            assert_int_equal(t.out.cells[1].i, mx ? 7 : -5);
            set_null(&t.old_row, 1);
            merge_ok(&t);
            assert_int_equal(t.out.cells[1].i, 7);
            table_close(&t);
        }
    }
    agg_table_t t;
    /* Java Float.compare: -0.0 < 0.0, NaN above +Infinity */
    table_open(&t, "{\"type\":\"FLOAT\"}", "{\"type\":\"max\"}");
    set_d(&t.old_row, 1, -0.0);
    set_d(&t.new_row, 1, 0.0);
    merge_ok(&t);
    assert_false(__builtin_signbit(t.out.cells[1].d));
    set_d(&t.old_row, 1, __builtin_nan(""));
    set_d(&t.new_row, 1, __builtin_inf());
    merge_ok(&t);
    assert_true(t.out.cells[1].d != t.out.cells[1].d);
    table_close(&t);
    table_open(&t, "{\"type\":\"DOUBLE\"}", "{\"type\":\"min\"}");
    set_d(&t.old_row, 1, 0.0);
    set_d(&t.new_row, 1, -0.0);
    merge_ok(&t);
    assert_true(__builtin_signbit(t.out.cells[1].d));
    set_d(&t.old_row, 1, __builtin_nan(""));
    set_d(&t.new_row, 1, -1e300);
    merge_ok(&t);
    assert_true(t.out.cells[1].d == -1e300);
    table_close(&t);
    table_open(&t, "{\"type\":\"DECIMAL\",\"precision\":30,\"scale\":2}", "{\"type\":\"max\"}");
    set_dec(&t.old_row, 1, -pow10_i128(25));
    set_dec(&t.new_row, 1, -3);
    merge_ok(&t);
    assert_true(t.out.cells[1].dec == -3);
    table_close(&t);
    /* timestamps: milliseconds then nanos of the millisecond */
    const char *ts[] = {"{\"type\":\"TIMESTAMP_WITHOUT_TIME_ZONE\",\"precision\":9}",
                        "{\"type\":\"TIMESTAMP_WITH_LOCAL_TIME_ZONE\",\"precision\":9}"};
    for (int k = 0; k < 2; k++) {
        table_open(&t, ts[k], "{\"type\":\"max\"}");
        set_ts(&t.old_row, 1, 1000, 999999);
        set_ts(&t.new_row, 1, 1001, 0);
        merge_ok(&t);
        assert_int_equal(t.out.cells[1].i, 1001);
        assert_int_equal(t.out.cells[1].nanos, 0);
        set_ts(&t.new_row, 1, 1000, 5);
        merge_ok(&t);
        assert_int_equal(t.out.cells[1].nanos, 999999);
        table_close(&t);
        table_open(&t, ts[k], "{\"type\":\"min\"}");
        set_ts(&t.old_row, 1, -1, 7);
        set_ts(&t.new_row, 1, -1, 6);
        merge_ok(&t);
        assert_int_equal(t.out.cells[1].nanos, 6);
        table_close(&t);
    }
    /* strings and bytes: unsigned bytes, then the shorter first */
    const char *bt[] = {"{\"type\":\"STRING\"}", "{\"type\":\"CHAR\",\"length\":4}", "{\"type\":\"BYTES\"}",
                        "{\"type\":\"BINARY\",\"length\":4}"};
    for (int k = 0; k < 4; k++) {
        table_open(&t, bt[k], "{\"type\":\"max\"}");
        set_s(&t.old_row, 1, "zz", 2);
        set_s(&t.new_row, 1, "\xc3\xa9", 2); /* é: byte 0xc3 > 'z' */
        merge_ok(&t);
        assert_out_bytes(&t, "\xc3\xa9", 2);
        set_s(&t.old_row, 1, "ab", 2);
        set_s(&t.new_row, 1, "abc", 3);
        merge_ok(&t);
        assert_out_bytes(&t, "abc", 3);
        table_close(&t);
        table_open(&t, bt[k], "{\"type\":\"min\"}");
        set_s(&t.old_row, 1, "ab", 2);
        set_s(&t.new_row, 1, "abc", 3);
        merge_ok(&t);
        assert_out_bytes(&t, "ab", 2);
        set_s(&t.old_row, 1, "", 0);
        merge_ok(&t);
        assert_out_bytes(&t, "", 0);
        table_close(&t);
    }
}

static void test_value_selection(void **state) {
    (void)state;
    struct {
        const char *fn;
        bool old_null, new_null;
        int expect; /* 0 NULL, 1 old, 2 new */
    } cases[] = {
        {"last_value", false, false, 2},
        {"last_value", false, true, 0},
        {"last_value", true, false, 2},
        {"last_value_ignore_nulls", false, true, 1},
        {"last_value_ignore_nulls", false, false, 2},
        {"last_value_ignore_nulls", true, true, 0},
        {"first_value", false, false, 1},
        {"first_value", false, true, 1},
        {"first_value", true, false, 2}, /* 0.9.1: a NULL first value does not stick */
        {"first_value_ignore_nulls", true, false, 2},
        {"first_value_ignore_nulls", false, false, 1},
        {"first_value_ignore_nulls", true, true, 0},
    };
    const char *types[] = {"{\"type\":\"BIGINT\"}", "{\"type\":\"STRING\"}", "{\"type\":\"BOOLEAN\"}",
                           "{\"type\":\"ARRAY\",\"element_type\":{\"type\":\"INTEGER\"}}"};
    for (size_t ty = 0; ty < 3; ty++) {
        for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
            char agg[64];
            snprintf(agg, sizeof(agg), "{\"type\":\"%s\"}", cases[k].fn);
            agg_table_t t;
            table_open(&t, types[ty], agg);
            bool str = ty == 1;
            if (cases[k].old_null) set_null(&t.old_row, 1);
            else if (str) set_s(&t.old_row, 1, "old", 3);
            else set_i(&t.old_row, 1, 0);
            if (cases[k].new_null) set_null(&t.new_row, 1);
            else if (str) set_s(&t.new_row, 1, "new!", 4);
            else set_i(&t.new_row, 1, 1);
            merge_ok(&t);
            if (cases[k].expect == 0) assert_true(t.out.cells[1].is_null);
            else if (str) assert_out_bytes(&t, cases[k].expect == 1 ? "old" : "new!", cases[k].expect == 1 ? 3 : 4);
            else assert_int_equal(t.out.cells[1].i, cases[k].expect == 1 ? 0 : 1);
            table_close(&t);
        }
    }
    agg_table_t t; /* an ARRAY column takes last_value too (the tablet copies the cell) */
    table_open(&t, types[3], "{\"type\":\"last_value\"}");
    table_close(&t);
}

static void test_listagg_and_bool(void **state) {
    (void)state;
    agg_table_t t;
    table_open(&t, "{\"type\":\"STRING\"}", "{\"type\":\"listagg\"}");
    set_s(&t.old_row, 1, "a", 1);
    set_s(&t.new_row, 1, "b", 1);
    merge_ok(&t);
    assert_out_bytes(&t, "a,b", 3);
    set_s(&t.new_row, 1, "", 0); /* an empty string is a value */
    merge_ok(&t);
    assert_out_bytes(&t, "a,", 2);
    set_null(&t.new_row, 1);
    merge_ok(&t);
    assert_out_bytes(&t, "a", 1);
    set_null(&t.old_row, 1);
    set_s(&t.new_row, 1, "x", 1);
    merge_ok(&t);
    assert_out_bytes(&t, "x", 1);
    table_close(&t);
    table_open(&t, "{\"type\":\"STRING\"}",
               "{\"type\":\"string_agg\",\"parameters\":{\"delimiter\":\" | \"}}");
    set_s(&t.old_row, 1, "a,b", 3);
    set_s(&t.new_row, 1, "c", 1);
    merge_ok(&t);
    assert_out_bytes(&t, "a,b | c", 7);
    table_close(&t);

    for (int and = 0; and < 2; and++) {
        table_open(&t, "{\"type\":\"BOOLEAN\"}", and ? "{\"type\":\"bool_and\"}" : "{\"type\":\"bool_or\"}");
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) {
                set_i(&t.old_row, 1, a);
                set_i(&t.new_row, 1, b);
                merge_ok(&t);
                assert_int_equal(t.out.cells[1].i, and ? (a && b) : (a || b));
            }
        set_null(&t.old_row, 1);
        set_i(&t.new_row, 1, 0);
        merge_ok(&t);
        assert_false(t.out.cells[1].is_null);
        assert_int_equal(t.out.cells[1].i, 0);
        set_null(&t.new_row, 1);
        merge_ok(&t);
        assert_true(t.out.cells[1].is_null);
        table_close(&t);
    }
}

/* ---- rows: first write, partial updates, deletes -------------------------- */

static const char *wide_schema =
    "{\"version\":1,\"columns\":["
    "{\"name\":\"k\",\"data_type\":{\"type\":\"INTEGER\"}},"
    "{\"name\":\"s\",\"data_type\":{\"type\":\"BIGINT\"},\"agg_function\":{\"type\":\"sum\"}},"
    "{\"name\":\"t\",\"data_type\":{\"type\":\"STRING\"},\"agg_function\":{\"type\":\"listagg\"}},"
    "{\"name\":\"u\",\"data_type\":{\"type\":\"STRING\"}}],\"primary_key\":[\"k\"]}";

static void test_rows_partial_and_delete(void **state) {
    (void)state;
    fl_schema_t s;
    fl_kv_agg_spec_t spec;
    fl_error_t err;
    assert_int_equal(schema_text(wide_schema, &s, &err), 0);
    assert_int_equal(fl_kv_agg_spec_init(&spec, &s, &err), 0);
    const fl_datatype_t *types[4];
    for (int i = 0; i < 4; i++) types[i] = s.columns[i].type;
    fl_row_t o, n, out;
    fl_row_init(&o, 4);
    fl_row_init(&n, 4);
    fl_row_init(&out, 4);
    set_i(&n, 0, 9);
    set_i(&n, 1, 5);
    set_s(&n, 2, "x", 1);
    set_null(&n, 3);
    /* first write: the new row as it is, whatever the target */
    bool tgt[4] = {true, true, false, false};
    assert_int_equal(fl_kv_agg_merge(&spec, types, 4, NULL, &n, tgt, &out, &err), 0);
    assert_int_equal(out.cells[1].i, 5);
    assert_int_equal(out.cells[2].len, 1);
    assert_true(out.cells[3].is_null);
    /* stored row */
    set_i(&o, 0, 9);
    set_i(&o, 1, 10);
    set_s(&o, 2, "a", 1);
    set_s(&o, 3, "keep", 4);
    set_s(&n, 3, "new", 3);
    assert_int_equal(fl_kv_agg_merge(&spec, types, 4, &o, &n, tgt, &out, &err), 0);
    assert_int_equal(out.cells[0].i, 9);
    assert_int_equal(out.cells[1].i, 15);
    assert_memory_equal(fl_row_cell_bytes(&out, &out.cells[2]), "a", 1); /* not a target */
    assert_memory_equal(fl_row_cell_bytes(&out, &out.cells[3]), "keep", 4);
    assert_int_equal(fl_kv_agg_merge(&spec, types, 4, &o, &n, NULL, &out, &err), 0);
    assert_int_equal(out.cells[2].len, 3);
    assert_memory_equal(fl_row_cell_bytes(&out, &out.cells[2]), "a,x", 3);
    assert_memory_equal(fl_row_cell_bytes(&out, &out.cells[3]), "new", 3);

    /* target checks */
    assert_int_equal(fl_kv_agg_check_target(&spec, tgt, &err), 0);
    bool no_key[4] = {false, true, true, true};
    assert_int_equal(fl_kv_agg_check_target(&spec, no_key, &err), FLUSS_ERR_INVALID_TARGET_COLUMN);
    assert_string_equal(err.msg, "The target write columns must contain the primary key columns [k].");

    /* delete: whole row; partial clears targets unless nothing else is left */
    assert_int_equal(fl_kv_agg_delete(&spec, &o, NULL, &out), FL_KV_AGG_DELETE_ROW);
    assert_int_equal(fl_kv_agg_delete(&spec, &o, tgt, &out), FL_KV_AGG_DELETE_UPDATE);
    assert_int_equal(out.cells[0].i, 9);
    assert_true(out.cells[1].is_null);
    assert_memory_equal(fl_row_cell_bytes(&out, &out.cells[3]), "keep", 4);
    set_null(&o, 2);
    set_null(&o, 3);
    assert_int_equal(fl_kv_agg_delete(&spec, &o, tgt, &out), FL_KV_AGG_DELETE_ROW);
    fl_row_free(&o);
    fl_row_free(&n);
    fl_row_free(&out);
    fl_kv_agg_spec_reset(&spec);
    fl_schema_free(&s);

    /* a NOT NULL value column forbids partial aggregation */
    assert_int_equal(schema_text("{\"version\":1,\"columns\":[{\"name\":\"k\",\"data_type\":{\"type\":\"INTEGER\"}},"
                                 "{\"name\":\"v\",\"data_type\":{\"type\":\"BIGINT\",\"nullable\":false}}],"
                                 "\"primary_key\":[\"k\"]}",
                                 &s, &err),
                     0);
    assert_int_equal(fl_kv_agg_spec_init(&spec, &s, &err), 0);
    bool t2[2] = {true, true};
    assert_int_equal(fl_kv_agg_check_target(&spec, t2, &err), FLUSS_ERR_INVALID_TARGET_COLUMN);
    assert_string_equal(err.msg, "Partial aggregate requires all columns except primary key to be "
                                 "nullable, but column v is NOT NULL.");
    fl_kv_agg_spec_reset(&spec);
    fl_schema_free(&s);
}

/* ---- roaring bitmaps ----------------------------------------------------- */

static void test_rbm32(void **state) {
    (void)state;
    /* hand-made portable bytes: no-run cookie, one array container {1, 2, 70000 is not here} */
    static const uint8_t hand[] = {0x3a, 0x30, 0, 0, 1, 0, 0, 0, /* cookie 12346, size 1 */
                                   0, 0, 2, 0,                   /* key 0, card 3 */
                                   16, 0, 0, 0,                  /* offset */
                                   1, 0, 2, 0, 9, 0};
    fl_error_t err;
    roaring_bitmap_t *h = fl_kv_rbm32_decode(hand, sizeof(hand), &err);
    assert_non_null(h);
    assert_int_equal(roaring_bitmap_get_cardinality(h), 3);
    assert_true(roaring_bitmap_contains(h, 9));
    /* every truncation is refused */
    for (size_t n = 0; n < sizeof(hand); n++) assert_null(fl_kv_rbm32_decode(hand, n, &err));

    roaring_bitmap_t *b = roaring_bitmap_create();
    roaring_bitmap_add_range_closed(b, 100000, 200000); /* runs */
    roaring_bitmap_add(b, 9);
    roaring_bitmap_add(b, 4000000000u);
    roaring_bitmap_run_optimize(b);
    size_t n = roaring_bitmap_portable_size_in_bytes(b);
    char *bytes = malloc(n);
    roaring_bitmap_portable_serialize(b, bytes);
    fl_buf_t u;
    fl_buf_init(&u);
    assert_int_equal(fl_kv_rbm32_union(hand, sizeof(hand), (const uint8_t *)bytes, n, &u, &err), 0);
    roaring_bitmap_t *r = fl_kv_rbm32_decode(u.data, u.len, &err);
    assert_non_null(r);
    assert_int_equal(roaring_bitmap_get_cardinality(r), 100001 + 1 + 1 + 2);
    assert_true(roaring_bitmap_contains(r, 1) && roaring_bitmap_contains(r, 150000) &&
                roaring_bitmap_contains(r, 4000000000u));
    roaring_bitmap_t *lib = roaring_bitmap_portable_deserialize_safe((const char *)u.data, u.len);
    assert_non_null(lib);
    assert_true(roaring_bitmap_equals(lib, r));
    /* bad cookie, run past 65535 */
    static const uint8_t bad[] = {0x3b, 0x30, 0, 0, 1, 0, 0, 0, 1, 0, 0xff, 0xff, 2, 0};
    assert_null(fl_kv_rbm32_decode(bad, sizeof(bad), &err));
    assert_int_equal(err.code, FLUSS_ERR__CORRUPT);
    assert_null(fl_kv_rbm32_decode((const uint8_t *)"\1\2\3\4\5\6\7\10", 8, &err));

    /* through the merge: corrupt stored value -> error */
    agg_table_t t;
    table_open(&t, "{\"type\":\"BYTES\"}", "{\"type\":\"rbm32\"}");
    set_s(&t.old_row, 1, (const char *)hand, sizeof(hand));
    set_s(&t.new_row, 1, bytes, n);
    merge_ok(&t);
    roaring_bitmap_t *m = fl_kv_rbm32_decode(fl_row_cell_bytes(&t.out, &t.out.cells[1]), t.out.cells[1].len, &err);
    assert_true(roaring_bitmap_equals(m, r));
    set_s(&t.new_row, 1, "junk", 4);
    t.old_row.cells[0] = (fl_cell_t){.i = 1};
    t.new_row.cells[0] = (fl_cell_t){.i = 1};
    assert_int_equal(fl_kv_agg_merge(&t.spec, t.types, 2, &t.old_row, &t.new_row, NULL, &t.out, &err),
                     FLUSS_ERR_UNKNOWN_SERVER_ERROR);
    assert_non_null(strstr(err.msg, "Unable to se/deserialize roaring bitmap"));
    table_close(&t);
    roaring_bitmap_free(m);
    roaring_bitmap_free(lib);
    roaring_bitmap_free(r);
    roaring_bitmap_free(b);
    roaring_bitmap_free(h);
    fl_buf_free(&u);
    free(bytes);
}

/* Roaring64Bitmap {1, 5}, derived by hand from RoaringBitmap 1.3.0's
 * HighLowContainer/Art/Containers serialize: one key, so the root is a leaf. */
static const uint8_t rbm64_one_key[] = {
    1,                            /* not empty */
    1, 0, 0, 0, 0, 0, 0, 0,       /* key count 1 */
    4, 0, 0, 0,                   /* LEAF, count 0, prefix 0 */
    0, 0, 0, 0, 0, 0,             /* key: high 48 bits of 1 and 5 */
    0, 0, 0, 0, 0, 0, 0, 0,       /* container 0:0 */
    1, 0, 0, 0,                   /* one first level */
    0xfe, 1, 0, 0, 0,             /* not trimmed, one slot */
    1, 2, 2, 0, 0, 0, 1, 0, 5, 0, /* array {1, 5} */
    1, 0, 0, 0, 0, 0, 0, 0,       /* container count */
    0, 0, 0, 0, 0, 0, 0, 0,       /* last indexes 0, 0 */
};

/* {1, 65539} added in the order 65539, 1: a NODE4 with a 5-byte prefix,
 * and container slots in insertion order (slot 0 holds key 1's container). */
static const uint8_t rbm64_two_keys_java_order[] = {
    1, 2, 0, 0, 0, 0, 0, 0, 0,
    0, 2, 0, 5, 0, 0, 0, 0, 0,    /* NODE4, 2 children, prefix 00 x 5 */
    0, 0, 1, 0,                   /* keys 0x00, 0x01 as LE int 0x00010000 */
    4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, /* leaf key 0 -> slot 1 */
    4, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, /* leaf key 1 -> slot 0 */
    1, 0, 0, 0, 0xfe, 2, 0, 0, 0,
    1, 2, 1, 0, 0, 0, 3, 0,       /* {3} (65539 & 0xffff) */
    1, 2, 1, 0, 0, 0, 1, 0,       /* {1} */
    2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
};

static bool rbm64_contains(const fl_kv_rbm64_t *b, uint64_t v) {
    for (size_t i = 0; i < b->count; i++)
        if (b->entries[i].hi == (uint32_t)(v >> 32))
            return roaring_bitmap_contains(b->entries[i].bm, (uint32_t)v);
    return false;
}

static void rbm64_roundtrip(fl_kv_rbm64_t *b) {
    fl_buf_t e;
    fl_buf_init(&e);
    fl_kv_rbm64_encode(b, &e);
    fl_kv_rbm64_t d;
    fl_kv_rbm64_init(&d);
    fl_error_t err;
    if (fl_kv_rbm64_decode(e.data, e.len, &d, &err)) fail_msg("decode: %s", err.msg);
    assert_int_equal(fl_kv_rbm64_cardinality(&d), fl_kv_rbm64_cardinality(b));
    assert_int_equal(d.count, b->count);
    for (size_t i = 0; i < b->count; i++) {
        assert_int_equal(d.entries[i].hi, b->entries[i].hi);
        assert_true(roaring_bitmap_equals(d.entries[i].bm, b->entries[i].bm));
    }
    for (size_t n = 0; n < e.len; n++) { /* every truncation is refused */
        fl_kv_rbm64_t x;
        fl_kv_rbm64_init(&x);
        assert_int_not_equal(fl_kv_rbm64_decode(e.data, n, &x, &err), 0);
    }
    fl_kv_rbm64_free(&d);
    fl_buf_free(&e);
}

static void test_rbm64(void **state) {
    (void)state;
    fl_error_t err;
    fl_kv_rbm64_t b;
    fl_kv_rbm64_init(&b);
    assert_int_equal(fl_kv_rbm64_decode(rbm64_one_key, sizeof(rbm64_one_key), &b, &err), 0);
    assert_int_equal(fl_kv_rbm64_cardinality(&b), 2);
    assert_true(rbm64_contains(&b, 1) && rbm64_contains(&b, 5));
    fl_buf_t e;
    fl_buf_init(&e);
    fl_kv_rbm64_encode(&b, &e); /* our encoder writes Java's bytes here */
    assert_int_equal(e.len, sizeof(rbm64_one_key));
    assert_memory_equal(e.data, rbm64_one_key, sizeof(rbm64_one_key));
    fl_kv_rbm64_free(&b);

    fl_kv_rbm64_init(&b);
    assert_int_equal(fl_kv_rbm64_decode(rbm64_two_keys_java_order, sizeof(rbm64_two_keys_java_order), &b, &err), 0);
    assert_int_equal(fl_kv_rbm64_cardinality(&b), 2);
    assert_true(rbm64_contains(&b, 1) && rbm64_contains(&b, 65539) && !rbm64_contains(&b, 3));
    rbm64_roundtrip(&b);

    /* union through the merge */
    fl_buf_reset(&e);
    agg_table_t t;
    table_open(&t, "{\"type\":\"BYTES\"}", "{\"type\":\"rbm64\"}");
    set_s(&t.old_row, 1, (const char *)rbm64_one_key, sizeof(rbm64_one_key));
    set_s(&t.new_row, 1, (const char *)rbm64_two_keys_java_order, sizeof(rbm64_two_keys_java_order));
    merge_ok(&t);
    fl_kv_rbm64_t m;
    fl_kv_rbm64_init(&m);
    assert_int_equal(fl_kv_rbm64_decode(fl_row_cell_bytes(&t.out, &t.out.cells[1]), t.out.cells[1].len, &m, &err), 0);
    assert_int_equal(fl_kv_rbm64_cardinality(&m), 3);
    assert_true(rbm64_contains(&m, 1) && rbm64_contains(&m, 5) && rbm64_contains(&m, 65539));
    fl_kv_rbm64_free(&m);
    set_s(&t.new_row, 1, "\0", 1); /* the empty bitmap */
    merge_ok(&t);
    assert_out_bytes(&t, (const char *)rbm64_one_key, sizeof(rbm64_one_key));
    set_s(&t.new_row, 1, "\1\1", 2);
    t.old_row.cells[0] = t.new_row.cells[0] = (fl_cell_t){.i = 1};
    assert_int_equal(fl_kv_agg_merge(&t.spec, t.types, 2, &t.old_row, &t.new_row, NULL, &t.out, &err),
                     FLUSS_ERR_UNKNOWN_SERVER_ERROR);
    table_close(&t);
    fl_kv_rbm64_free(&b);

    /* every node type (children per node 3, 10, 40, 200), all container kinds,
     * values across the whole 64-bit range */
    size_t fan[] = {3, 10, 40, 200};
    for (size_t f = 0; f < 4; f++) {
        fl_kv_rbm64_init(&b);
        for (uint64_t i = 0; i < fan[f]; i++) {
            fl_kv_rbm64_add(&b, (i << 16) | 7);                        /* mid byte fan-out */
            fl_kv_rbm64_add(&b, 0xFFFFFFFF00000000ull | (i << 40) | i); /* high bytes */
        }
        for (uint32_t v = 0; v < 70000; v += 2) fl_kv_rbm64_add(&b, (5ull << 32) | v); /* bitmap */
        for (uint32_t v = 0; v < 30000; v++) fl_kv_rbm64_add(&b, (6ull << 32) | v);    /* run */
        rbm64_roundtrip(&b);
        fl_kv_rbm64_free(&b);
    }
    /* hostile: a leaf naming a missing container, node type 9, bad slot mark */
    uint8_t bad[sizeof(rbm64_one_key)];
    memcpy(bad, rbm64_one_key, sizeof(bad));
    bad[19] = 1;
    fl_kv_rbm64_init(&b);
    assert_int_equal(fl_kv_rbm64_decode(bad, sizeof(bad), &b, &err), FLUSS_ERR__CORRUPT);
    memcpy(bad, rbm64_one_key, sizeof(bad));
    bad[9] = 9;
    assert_int_equal(fl_kv_rbm64_decode(bad, sizeof(bad), &b, &err), FLUSS_ERR__CORRUPT);
    memcpy(bad, rbm64_one_key, sizeof(bad));
    bad[36] = 7;
    assert_int_equal(fl_kv_rbm64_decode(bad, sizeof(bad), &b, &err), FLUSS_ERR__CORRUPT);
    fl_buf_free(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_defaults_and_parameters),
        cmocka_unit_test(test_aggfn_names),
        cmocka_unit_test(test_refused_combinations),
        cmocka_unit_test(test_sum_integers_wrap),
        cmocka_unit_test(test_sum_product_floating),
        cmocka_unit_test(test_decimal_sum_product),
        cmocka_unit_test(test_max_min),
        cmocka_unit_test(test_value_selection),
        cmocka_unit_test(test_listagg_and_bool),
        cmocka_unit_test(test_rows_partial_and_delete),
        cmocka_unit_test(test_rbm32),
        cmocka_unit_test(test_rbm64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
