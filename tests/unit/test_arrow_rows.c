/*
 * test_arrow_rows.c — rows read back out of decoded Arrow columns
 * (arrow_rows.h) are the rows the batch builder (record_builder.h) was
 * given: every scalar type at every TIME/TIMESTAMP precision band
 * (seconds, millis, micros, nanos; epoch values before 1970 with nanos),
 * DECIMAL 64- and 128-bit, BINARY(n), empty strings and NULLs, under no
 * compression and ZSTD; nested columns read as NULL; a seconds value whose
 * millis overflow is CORRUPT_RECORD_EXCEPTION naming the column.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "arrow_rows.h"
#include "record_batch.h"
#include "record_builder.h"
#include "test_row_util.h"
#include "test_types_util.h"

static const char *const kTypes[] = {
    "BOOLEAN",          "TINYINT",          "SMALLINT",         "INT",
    "BIGINT",           "FLOAT",            "DOUBLE",           "DECIMAL(10, 2)",
    "DECIMAL(38, 10)",  "DATE",             "TIME(0)",          "TIME(3)",
    "TIME(6)",          "TIME(9)",          "TIMESTAMP(0)",     "TIMESTAMP(3)",
    "TIMESTAMP(6)",     "TIMESTAMP(9)",     "TIMESTAMP_LTZ(0)", "TIMESTAMP_LTZ(2)",
    "TIMESTAMP_LTZ(5)", "TIMESTAMP_LTZ(9)", "CHAR(3)",          "STRING",
    "BINARY(3)",        "BYTES",            "ARRAY<INT>",       "MAP<STRING, INT>",
    "ROW<a INT, b STRING>", "INT NOT NULL",
};
#define NCOL (sizeof(kTypes) / sizeof(kTypes[0]))
#define ROWS 13

/* Cell values for row r (negative half way), NULL on a diagonal; values
 * only as fine as the column's unit, since that is what Arrow holds. */
static void fill(fl_row_t *row, const fl_schema_t *s, int r) {
    fl_row_clear(row);
    int64_t sign = r % 2 ? -1 : 1, k = (int64_t)r * 7919;
    for (size_t c = 0; c < NCOL; c++) {
        const fl_datatype_t *t = s->columns[c].type;
        if (t->nullable && (c + (size_t)r) % 5 == 0) continue;
        int p = t->precision;
        int32_t nanos = (int32_t)((k * 104729) % 1000000);
        switch (t->root) {
        case FL_TYPE_BOOLEAN: test_cell_i(row, c, r % 3 == 0); break;
        case FL_TYPE_TINYINT: test_cell_i(row, c, r == 1 ? INT8_MIN : sign * (r * 9)); break;
        case FL_TYPE_SMALLINT: test_cell_i(row, c, r == 1 ? INT16_MIN : sign * (k % 32768)); break;
        case FL_TYPE_INTEGER: test_cell_i(row, c, r == 1 ? INT32_MIN : sign * k * 31); break;
        case FL_TYPE_BIGINT: test_cell_i(row, c, r == 1 ? INT64_MIN : sign * k * k * k); break;
        case FL_TYPE_FLOAT: test_cell_d(row, c, (double)(float)(sign * k / 8.0)); break;
        case FL_TYPE_DOUBLE: test_cell_d(row, c, sign * k / 3.0); break;
        case FL_TYPE_DECIMAL:
            test_cell_dec(row, c, p > 18 ? (__int128)sign * k * k * INT64_MAX : sign * k * 100);
            break;
        case FL_TYPE_DATE: test_cell_i(row, c, sign * k); break;
        case FL_TYPE_TIME: {
            int64_t ms = (k * 1009) % 86400000;
            test_cell_i(row, c, p == 0 ? ms / 1000 * 1000 : ms);
            break;
        }
        case FL_TYPE_TIMESTAMP:
        case FL_TYPE_TIMESTAMP_LTZ: {
            int64_t ms = sign * k * 1000003;
            if (p == 0) test_cell_ts(row, c, ms / 1000 * 1000, 0);
            else if (p <= 3) test_cell_ts(row, c, ms, 0);
            else if (p <= 6) test_cell_ts(row, c, ms, nanos / 1000 * 1000);
            else test_cell_ts(row, c, ms, nanos);
            break;
        }
        case FL_TYPE_CHAR:
        case FL_TYPE_STRING:
        case FL_TYPE_BYTES: {
            char text[32];
            int n = snprintf(text, sizeof(text), "v%d", r);
            fl_row_set_bytes(row, c, text, r % 4 == 2 ? 0 : (size_t)n); /* some empty */
            break;
        }
        case FL_TYPE_BINARY: {
            uint8_t b[3] = {(uint8_t)r, 0, (uint8_t)(255 - r)};
            fl_row_set_bytes(row, c, b, 3);
            break;
        }
        default: break; /* nested: the builder writes NULL */
        }
    }
}

static void check_codec(fl_arrow_codec_t codec) {
    fl_schema_t s;
    test_schema_of(&s, kTypes, NCOL);
    const fl_datatype_t *types[NCOL];
    for (size_t c = 0; c < NCOL; c++) types[c] = s.columns[c].type;
    fl_record_builder_options_t o = {1, codec, 0};
    fl_record_builder_t b;
    fl_record_builder_init(&b, &s, &o);
    fl_row_t rows[ROWS];
    for (int r = 0; r < ROWS; r++) {
        fl_row_init(&rows[r], NCOL);
        fill(&rows[r], &s, r);
        fl_record_builder_append(&b, &rows[r]);
    }
    fl_buf_t batch;
    fl_buf_init(&batch);
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_record_builder_finish(&b, -1, -1, &batch, &err), 0);
    fl_batch_view_t v;
    assert_int_equal(fl_batch_parse(batch.data, batch.len, &v, &err), 0);
    fl_arrow_batch_view_t av;
    assert_int_equal(fl_arrow_message_parse(batch.data + v.records_start,
                                            batch.len - v.records_start, &av, &err), 0);
    assert_int_equal(av.length, ROWS);
    fl_arrow_decoder_t d;
    fl_arrow_decoder_init(&d, &av, 1 << 20);
    fl_arrow_array_t cols[NCOL];
    for (size_t c = 0; c < NCOL; c++)
        if (fl_arrow_decoder_next(&d, types[c], &cols[c], &err)) fail_msg("column %zu: %s", c, err.msg);
    fl_row_t back;
    fl_row_init(&back, 1);
    for (int r = 0; r < ROWS; r++) {
        if (fl_arrow_row_read(cols, NCOL, types, r, &back, &err)) fail_msg("row %d: %s", r, err.msg);
        assert_int_equal(back.column_count, NCOL);
        test_rows_equal(&rows[r], &back, (fl_datatype_t *const *)types, NCOL);
        for (size_t c = 26; c <= 28; c++) assert_true(back.cells[c].is_null);
    }
    fl_row_free(&back);
    for (size_t c = 0; c < NCOL; c++) fl_arrow_array_free(&cols[c]);
    for (int r = 0; r < ROWS; r++) fl_row_free(&rows[r]);
    fl_buf_free(&batch);
    fl_record_builder_free(&b);
    fl_schema_free(&s);
}

static void test_inverse_none(void **state) { (void)state; check_codec(FL_ARROW_CODEC_NONE); }
static void test_inverse_zstd(void **state) { (void)state; check_codec(FL_ARROW_CODEC_ZSTD); }

static void test_seconds_overflow(void **state) {
    (void)state;
    static const char *const t[] = {"INT", "TIMESTAMP(0)"};
    fl_schema_t s;
    test_schema_of(&s, t, 2);
    const fl_datatype_t *types[2] = {s.columns[0].type, s.columns[1].type};
    fl_arrow_array_t cols[2];
    memset(cols, 0, sizeof(cols));
    for (size_t c = 0; c < 2; c++) {
        cols[c].kind = (int)types[c]->root;
        cols[c].type = types[c];
        cols[c].length = 1;
        fl_buf_init(&cols[c].validity);
        fl_buf_init(&cols[c].values);
        fl_buf_init(&cols[c].data);
    }
    uint8_t i32[4] = {5, 0, 0, 0}, big[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
    fl_buf_append(&cols[0].values, i32, 4);
    fl_buf_append(&cols[1].values, big, 8);
    fl_row_t r;
    fl_row_init(&r, 2);
    fl_error_t err;
    assert_int_equal(fl_arrow_row_read(cols, 2, types, 0, &r, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_non_null(strstr(err.msg, "column 1"));
    assert_true(r.cells[0].is_null);
    big[6] = big[7] = 0; /* fits now */
    cols[1].values.len = 0;
    fl_buf_append(&cols[1].values, big, 8);
    assert_int_equal(fl_arrow_row_read(cols, 2, types, 0, &r, &err), 0);
    assert_int_equal(r.cells[0].i, 5);
    assert_int_equal(r.cells[1].i, 0xffffffffffffLL * 1000);
    fl_row_free(&r);
    for (size_t c = 0; c < 2; c++) fl_arrow_array_free(&cols[c]);
    fl_schema_free(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inverse_none),
        cmocka_unit_test(test_inverse_zstd),
        cmocka_unit_test(test_seconds_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
