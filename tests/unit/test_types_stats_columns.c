/*
 * test_types_stats_columns.c — which columns `table.statistics.columns`
 * selects (fl_schema_statistics_columns): "*" takes every column of a type
 * statistics cover, a list its names in schema order, main's errors for an
 * unknown name, an uncovered type or an empty list — and the qualifying
 * columns are still given (a name a later schema renamed costs only its own
 * statistics).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "types_schema.h"

static void make(fl_schema_t *s) {
    static const struct { const char *name; fl_type_root_t root; } cols[] = {
        {"id", FL_TYPE_BIGINT}, {"tags", FL_TYPE_ARRAY}, {"name", FL_TYPE_STRING},
        {"score", FL_TYPE_DOUBLE}, {"raw", FL_TYPE_BYTES}};
    memset(s, 0, sizeof(*s));
    for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
        fl_datatype_t *t = fl_datatype_new(cols[i].root);
        if (cols[i].root == FL_TYPE_ARRAY) t->element = fl_datatype_new(FL_TYPE_INTEGER);
        fl_schema_add_column(s, cols[i].name, t, NULL);
    }
}

static int pick(const fl_schema_t *s, const char *spec, int *out, size_t *n, fl_error_t *err) {
    return fl_schema_statistics_columns(s, spec, out, 8, n, err);
}

static void test_selection(void **state) {
    (void)state;
    fl_schema_t s;
    make(&s);
    int out[8];
    size_t n;
    fl_error_t err;
    assert_int_equal(pick(&s, " * ", out, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 2);
    assert_int_equal(out[2], 3);
    /* listed out of order: schema order back */
    assert_int_equal(pick(&s, "score , id", out, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 3);
    /* unknown and uncovered names: main's errors, the rest still given */
    assert_int_equal(pick(&s, "id,gone,name", out, &n, &err), FLUSS_ERR_INVALID_CONFIG_EXCEPTION);
    assert_non_null(strstr(err.msg, "'gone'"));
    assert_int_equal(n, 2);
    assert_int_equal(out[1], 2);
    assert_int_equal(pick(&s, "tags", out, &n, &err), FLUSS_ERR_INVALID_CONFIG_EXCEPTION);
    assert_non_null(strstr(err.msg, "not supported for statistics"));
    assert_int_equal(n, 0);
    assert_int_equal(pick(&s, " , ", out, &n, &err), FLUSS_ERR_INVALID_CONFIG_EXCEPTION);
    assert_non_null(strstr(err.msg, "cannot be empty"));
    /* a check only */
    assert_int_equal(fl_schema_statistics_columns(&s, "name", NULL, 0, &n, &err), 0);
    assert_int_equal(n, 1);
    fl_schema_free(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_selection)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
