/*
 * test_tier_convert.c — tier_convert's type map in the read direction
 * (fl_tier_arrow_column, libfluss's union read): every type's cell
 * written as its Parquet value (fl_tier_value_of), read back as an Arrow
 * column and that column read as cells (arrow_rows.h) equal to what went
 * in; the microsecond floor for times before 1970 and sub-microsecond
 * digits; NULLs; and the refusals of a file that does not fit the
 * column: another physical type, a NULL in a NOT NULL column, values out
 * of range, a BINARY(n) value of another length, rows past the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "arrow_rows.h"
#include "tier_convert.h"
#include "types_datatype.h"

static fl_datatype_t *type_of(const char *text) {
    const char *p = text;
    fl_datatype_t *t;
    fl_error_t err;
    if (fl_datatype_parse(&p, &t, &err)) fail_msg("%s: %s", text, err.msg);
    return t;
}

/* A one-row Parquet column of physical type `type` holding v. */
typedef struct one {
    fl_pq_values_t v;
    uint8_t valid;
    union {
        uint8_t b;
        int32_t i32;
        int64_t i64;
        float f;
        double d;
        uint8_t fixed[16];
    } val;
    uint64_t offsets[2];
} one_t;

static void one_of(one_t *o, int32_t type, const fl_tier_value_t *tv, bool null) {
    memset(o, 0, sizeof(*o));
    o->v.type = type;
    o->v.rows = 1;
    o->valid = null ? 0 : 1;
    o->v.valid = &o->valid;
    if (type == FL_PQ_BYTE_ARRAY) {
        o->offsets[1] = null ? 0 : tv->bytes.len;
        o->v.offsets = o->offsets;
        o->v.bytes = (uint8_t *)(null ? (const uint8_t *)"" : tv->bytes.p);
        return;
    }
    o->v.values = &o->val;
    o->v.width = type == FL_PQ_FLBA ? 16 : fl_pq_fixed_width(type);
    if (null) return;
    switch (type) {
    case FL_PQ_FLBA: memcpy(o->val.fixed, tv->fixed, 16); break;
    case FL_PQ_BOOLEAN: o->val.b = tv->b; break;
    case FL_PQ_INT32: o->val.i32 = tv->i32; break;
    case FL_PQ_INT64: o->val.i64 = tv->i64; break;
    case FL_PQ_FLOAT: o->val.f = tv->f; break;
    default: o->val.d = tv->d; break;
    }
}

/* Writes cell c of type text to Parquet and reads it back into *back. */
static void round_trip(const char *text, const fl_row_t *row, fl_row_t *back) {
    fl_datatype_t *t = type_of(text);
    fl_pq_column_spec_t spec;
    fl_error_t err;
    assert_int_equal(fl_tier_column_spec("c", t, 1, &spec, &err), 0);
    fl_tier_value_t tv;
    assert_int_equal(fl_tier_value_of(t, row, &row->cells[0], &tv, &err), 0);
    one_t o;
    one_of(&o, spec.type, &tv, false);
    fl_arrow_array_t a;
    if (fl_tier_arrow_column(t, "c", &o.v, 0, 1, &a, &err)) fail_msg("%s: %s", text, err.msg);
    assert_int_equal(a.length, 1);
    assert_int_equal(a.null_count, 0);
    const fl_datatype_t *types[1] = {t};
    assert_int_equal(fl_arrow_row_read(&a, 1, types, 0, back, &err), 0);
    assert_false(back->cells[0].is_null);
    fl_arrow_array_free(&a);
    fl_datatype_destroy(t);
}

static void test_every_type(void **state) {
    (void)state;
    fl_row_t row, back;
    fl_row_init(&row, 1);
    fl_row_init(&back, 1);
    const struct {
        const char *type;
        int64_t i;
        double d;
    } ints[] = {{"BOOLEAN", 1, 0},     {"TINYINT", -128, 0},          {"SMALLINT", 32767, 0},
                {"INT", INT32_MIN, 0}, {"BIGINT", INT64_MIN + 1, 0}, {"DATE", -719162, 0},
                {"TIME(3)", 86399999, 0}, {"FLOAT", 0, -1.5},         {"DOUBLE", 0, 1e300}};
    for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++) {
        fl_row_reset(&row, 1);
        row.cells[0].is_null = false;
        row.cells[0].i = ints[k].i;
        row.cells[0].d = ints[k].d;
        round_trip(ints[k].type, &row, &back);
        assert_int_equal(back.cells[0].i, ints[k].i);
        assert_true(back.cells[0].d == ints[k].d);
    }
    /* decimals: the unscaled value */
    fl_row_reset(&row, 1);
    row.cells[0].is_null = false;
    row.cells[0].dec = -999999999;
    round_trip("DECIMAL(9, 2)", &row, &back);
    assert_true(back.cells[0].dec == -999999999);
    row.cells[0].dec = (__int128)999999999999999999LL;
    round_trip("DECIMAL(18, 4)", &row, &back);
    assert_true(back.cells[0].dec == (__int128)999999999999999999LL);
    /* past 64 bits: FIXED_LEN_BYTE_ARRAY(16), 38 nines either way */
    __int128 nines = (__int128)10000000000000000000ULL * 10000000000000000000ULL - 1;
    const __int128 extremes[2] = {-nines, nines};
    for (int k = 0; k < 2; k++) {
        row.cells[0].dec = extremes[k];
        fl_pq_column_spec_t spec;
        fl_datatype_t *t38 = type_of("DECIMAL(38, 10)");
        fl_error_t e;
        assert_int_equal(fl_tier_column_spec("c", t38, 1, &spec, &e), 0);
        assert_int_equal(spec.type, FL_PQ_FLBA);
        assert_int_equal(spec.type_length, 16);
        fl_datatype_destroy(t38);
        round_trip("DECIMAL(38, 10)", &row, &back);
        assert_true(back.cells[0].dec == extremes[k]);
    }
    /* DECIMAL(20) takes 9 bytes (Iceberg's length) */
    {
        fl_pq_column_spec_t spec;
        fl_datatype_t *t20 = type_of("DECIMAL(20, 0)");
        fl_error_t e;
        assert_int_equal(fl_tier_column_spec("c", t20, 1, &spec, &e), 0);
        assert_int_equal(spec.type_length, 9);
        fl_tier_value_t tv;
        row.cells[0].dec = -((__int128)1 << 66); /* 20 digits */
        assert_int_equal(fl_tier_value_of(t20, &row, &row.cells[0], &tv, &e), 0);
        static const uint8_t want[9] = {0xFC, 0, 0, 0, 0, 0, 0, 0, 0};
        assert_memory_equal(tv.fixed, want, 9);
        assert_true(fl_tier_decimal_of_be(tv.fixed, 9) == -((__int128)1 << 66));
        row.cells[0].dec = (__int128)10000000000000000000ULL * 10; /* 21 digits */
        assert_int_equal(fl_tier_value_of(t20, &row, &row.cells[0], &tv, &e),
                         FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
        fl_datatype_destroy(t20);
    }
    /* strings and bytes */
    fl_row_reset(&row, 1);
    fl_row_set_bytes(&row, 0, "h\xc3\xa9llo", 6);
    round_trip("STRING", &row, &back);
    assert_int_equal(back.cells[0].len, 6);
    assert_memory_equal(fl_row_cell_bytes(&back, &back.cells[0]), "h\xc3\xa9llo", 6);
    fl_row_reset(&row, 1);
    fl_row_set_bytes(&row, 0, "\x00\x01\x02", 3);
    round_trip("BINARY(3)", &row, &back);
    assert_memory_equal(fl_row_cell_bytes(&back, &back.cells[0]), "\x00\x01\x02", 3);
    fl_row_reset(&row, 1);
    fl_row_set_bytes(&row, 0, "", 0);
    round_trip("BYTES", &row, &back);
    assert_int_equal(back.cells[0].len, 0);
    fl_row_free(&row);
    fl_row_free(&back);
}

/* Timestamps keep microseconds: floor on the way in, exact on the way
 * back; before 1970 the floor goes down, never up. */
static void test_timestamps(void **state) {
    (void)state;
    fl_row_t row, back;
    fl_row_init(&row, 1);
    fl_row_init(&back, 1);
    const struct {
        int64_t ms;
        int32_t nanos;
        int64_t back_ms;
        int32_t back_nanos;
    } cases[] = {
        {1700000000123, 456789, 1700000000123, 456000}, /* sub-µs dropped */
        {-1, 999999, -1, 999000},                       /* 1969-12-31T23:59:59.999999999 */
        {-1, 0, -1, 0},
        {0, 1, 0, 0},
        {-5000000000000, 0, -5000000000000, 0},         /* 1811: nanoseconds still fit */
    };
    const char *types[] = {"TIMESTAMP(9)", "TIMESTAMP_LTZ(6)"};
    for (size_t t = 0; t < 2; t++)
        for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
            fl_row_reset(&row, 1);
            row.cells[0].is_null = false;
            row.cells[0].i = cases[k].ms;
            row.cells[0].nanos = cases[k].nanos;
            round_trip(types[t], &row, &back);
            assert_int_equal(back.cells[0].i, cases[k].back_ms);
            assert_int_equal(back.cells[0].nanos, cases[k].back_nanos);
        }
    fl_row_free(&row);
    fl_row_free(&back);
}

/* What a file may not hold for a column. */
static void refused(const char *text, int32_t type, const fl_tier_value_t *tv, bool null,
                    const char *why) {
    fl_datatype_t *t = type_of(text);
    one_t o;
    one_of(&o, type, tv, null);
    fl_arrow_array_t a;
    fl_error_t err;
    assert_int_equal(fl_tier_arrow_column(t, "c", &o.v, 0, 1, &a, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    if (!strstr(err.msg, why)) fail_msg("%s: '%s' lacks '%s'", text, err.msg, why);
    assert_int_equal(a.length, 0); /* nothing left to free */
    /* and rows past the column's end */
    one_of(&o, type, tv, false);
    assert_int_equal(fl_tier_arrow_column(t, "c", &o.v, 1, 2, &a, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    fl_datatype_destroy(t);
}

static void test_refusals(void **state) {
    (void)state;
    fl_tier_value_t v;
    memset(&v, 0, sizeof(v));
    v.i32 = 128;
    refused("TINYINT", FL_PQ_INT32, &v, false, "does not fit");
    v.i32 = -32769;
    refused("SMALLINT", FL_PQ_INT32, &v, false, "does not fit");
    v.i64 = 86400000LL * 1000;
    refused("TIME(3)", FL_PQ_INT64, &v, false, "does not fit");
    v.i64 = -1;
    refused("TIME(3)", FL_PQ_INT64, &v, false, "does not fit");
    v.i32 = 1000000000;
    refused("DECIMAL(9, 2)", FL_PQ_INT32, &v, false, "does not fit");
    /* 10^20 in 16 bytes does not fit DECIMAL(20) */
    fl_tier_decimal_be((__int128)10000000000000000000ULL * 10, v.fixed, 16);
    refused("DECIMAL(20, 0)", FL_PQ_FLBA, &v, false, "does not fit");
    memset(&v, 0, sizeof(v));
    v.bytes.p = (const uint8_t *)"ab";
    v.bytes.len = 2;
    refused("BINARY(3)", FL_PQ_BYTE_ARRAY, &v, false, "does not fit");
    v.i64 = -62135596800000000LL; /* 0001-01-01 in µs: no int64 nanoseconds */
    refused("TIMESTAMP(9)", FL_PQ_INT64, &v, false, "does not fit");
    v.i64 = 5;
    refused("INT", FL_PQ_INT64, &v, false, "Parquet type");
    refused("STRING", FL_PQ_INT64, &v, false, "Parquet type");
    refused("INT NOT NULL", FL_PQ_INT32, &v, true, "NOT NULL");
    /* a NULL in a nullable column is a NULL slot */
    fl_datatype_t *t = type_of("INT");
    one_t o;
    one_of(&o, FL_PQ_INT32, &v, true);
    fl_arrow_array_t a;
    fl_error_t err;
    assert_int_equal(fl_tier_arrow_column(t, "c", &o.v, 0, 1, &a, &err), 0);
    assert_int_equal(a.null_count, 1);
    assert_true(fl_arrow_array_is_null(&a, 0));
    fl_arrow_array_free(&a);
    fl_datatype_destroy(t);
    /* nested columns are not read */
    t = type_of("ARRAY<INT>");
    assert_int_equal(fl_tier_arrow_column(t, "c", &o.v, 0, 1, &a, &err), FLUSS_ERR__INVALID_ARG);
    fl_datatype_destroy(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_type),
        cmocka_unit_test(test_timestamps),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
