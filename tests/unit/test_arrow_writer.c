/*
 * test_arrow_writer.c — writing RecordBatch messages (fl_arrow_writer_*,
 * fl_arrow_column_*): the simple column builder's bitmaps and offsets, and
 * messages of every builder kind with nulls and empty strings, for each
 * codec and for 8- and 64-byte alignment, read back by pyarrow to the same
 * values (and by our parser to the right nodes, aligned buffers and
 * decompressible bytes); zero-row and multi-block (LZ4 > 64 KB) batches
 * too. A deliberately wrong expectation shows the pyarrow check can fail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_arrow_util.h"

#define KINDS 9

static const fl_arrow_column_kind_t kinds[KINDS] = {
    FL_ARROW_COL_BOOL,  FL_ARROW_COL_INT8,   FL_ARROW_COL_INT16,
    FL_ARROW_COL_INT32, FL_ARROW_COL_INT64,  FL_ARROW_COL_FLOAT,
    FL_ARROW_COL_DOUBLE, FL_ARROW_COL_UTF8,  FL_ARROW_COL_BINARY,
};

static const char *const fields_json =
    "[[\"b\",\"bool\"],[\"i8\",\"int8\"],[\"i16\",\"int16\"],[\"i32\",\"int32\"],"
    "[\"i64\",\"int64\"],[\"f32\",\"float32\"],[\"f64\",\"float64\"],[\"s\",\"utf8\"],"
    "[\"bin\",\"binary\"]]";

/* 10 rows: a null every 3rd row starting at row 1; values by kind. */
static const char *const values_json =
    "{\"b\":[true,null,false,true,null,false,true,null,false,true],"
    "\"i8\":[0,null,-2,3,null,-5,6,null,-8,127],"
    "\"i16\":[0,null,-200,300,null,-500,600,null,-800,32767],"
    "\"i32\":[0,null,-20000,30000,null,-50000,60000,null,-80000,2147483647],"
    "\"i64\":[0,null,-2000000000000,3000000000000,null,-5000000000000,6000000000000,null,"
    "-8000000000000,9223372036854775807],"
    "\"f32\":[0.0,null,-1.0,1.5,null,-2.5,3.0,null,-4.25,100.0],"
    "\"f64\":[0.0,null,-1.0,1.5,null,-2.5,3.0,null,-4.25,1e300],"
    "\"s\":[\"\",null,\"ab\",\"abc\",null,\"\\u00e9t\\u00e9\",\"\",null,\"abcdefgh\",\"z\"],"
    "\"bin\":[\"\",null,\"ab\",\"abc\",null,\"xyz\",\"\",null,\"abcdefgh\",\"z\"]}";

static const int64_t ints[10] = {0, 0, -2, 3, 0, -5, 6, 0, -8, 127};
static const double dbls[10] = {0.0, 0, -1.0, 1.5, 0, -2.5, 3.0, 0, -4.25, 100.0};
static const char *const strs[10] = {"", NULL, "ab", "abc", NULL, "\xc3\xa9t\xc3\xa9", "", NULL,
                                     "abcdefgh", "z"};

static void fill(fl_arrow_column_t *c, fl_arrow_column_kind_t kind) {
    fl_error_t err;
    fl_arrow_column_init(c, kind);
    for (int r = 0; r < 10; r++) {
        if (r % 3 == 1) {
            fl_arrow_column_append_null(c);
            continue;
        }
        switch (kind) {
        case FL_ARROW_COL_BOOL: fl_arrow_column_append_bool(c, r % 3 == 0); break;
        case FL_ARROW_COL_INT8: fl_arrow_column_append_int(c, ints[r]); break;
        case FL_ARROW_COL_INT16: fl_arrow_column_append_int(c, r == 9 ? 32767 : ints[r] * 100); break;
        case FL_ARROW_COL_INT32:
            fl_arrow_column_append_int(c, r == 9 ? INT32_MAX : ints[r] * 10000);
            break;
        case FL_ARROW_COL_INT64:
            fl_arrow_column_append_int(c, r == 9 ? INT64_MAX : ints[r] * 1000000000000LL);
            break;
        case FL_ARROW_COL_FLOAT: fl_arrow_column_append_double(c, dbls[r]); break;
        case FL_ARROW_COL_DOUBLE: fl_arrow_column_append_double(c, r == 9 ? 1e300 : dbls[r]); break;
        case FL_ARROW_COL_UTF8:
            assert_int_equal(fl_arrow_column_append_bytes(c, strs[r], strlen(strs[r]), &err), 0);
            break;
        case FL_ARROW_COL_BINARY: {
            const char *s = r == 5 ? "xyz" : strs[r];
            assert_int_equal(fl_arrow_column_append_bytes(c, s, strlen(s), &err), 0);
            break;
        }
        }
    }
}

static void test_column_builder_layout(void **state) {
    (void)state;
    fl_arrow_column_t c;
    fill(&c, FL_ARROW_COL_BOOL);
    assert_int_equal(c.length, 10);
    assert_int_equal(c.null_count, 3);
    /* valid rows 0,2,3,5,6,8,9: LSB first */
    assert_int_equal(c.validity.len, 2);
    assert_int_equal(c.validity.data[0], 0x6D);
    assert_int_equal(c.validity.data[1], 0x03);
    /* true at rows 0,3,6,9 */
    assert_int_equal(c.values.data[0], 0x49);
    assert_int_equal(c.values.data[1], 0x02);
    fl_arrow_column_reset(&c);

    fill(&c, FL_ARROW_COL_UTF8);
    assert_int_equal(c.values.len, 11 * 4);
    const int32_t offsets[11] = {0, 0, 0, 2, 5, 5, 10, 10, 10, 18, 19};
    for (int i = 0; i < 11; i++) {
        int32_t o;
        memcpy(&o, c.values.data + 4 * i, 4);
        assert_int_equal(o, offsets[i]);
    }
    assert_int_equal(c.data.len, 19);
    fl_arrow_column_reset(&c);

    fill(&c, FL_ARROW_COL_INT16);
    assert_int_equal(c.values.len, 20);
    int16_t v;
    memcpy(&v, c.values.data + 2 * 2, 2);
    assert_int_equal(v, -200);
    fl_arrow_column_reset(&c);
}

static void write_all_kinds(const fl_arrow_write_options_t *opts, int rows_wanted, fl_buf_t *out) {
    fl_arrow_writer_t w;
    fl_arrow_writer_init(&w, opts);
    fl_error_t err;
    for (int k = 0; k < KINDS; k++) {
        fl_arrow_column_t c;
        if (rows_wanted)
            fill(&c, kinds[k]);
        else
            fl_arrow_column_init(&c, kinds[k]);
        assert_int_equal(fl_arrow_column_write(&c, &w, &err), 0);
        fl_arrow_column_reset(&c);
    }
    fl_buf_reset(out);
    assert_int_equal(fl_arrow_writer_finish(&w, rows_wanted ? 10 : 0, out, &err), 0);
    fl_arrow_writer_reset(&w);
}

static void test_writer_read_by_pyarrow(void **state) {
    (void)state;
    const fl_arrow_codec_t codecs[3] = {FL_ARROW_CODEC_NONE, FL_ARROW_CODEC_LZ4_FRAME,
                                        FL_ARROW_CODEC_ZSTD};
    const size_t aligns[2] = {8, 64};
    fl_buf_t msg, spec, bytes;
    fl_buf_init(&msg);
    fl_buf_init(&spec);
    fl_buf_init(&bytes);
    int checked = 0;
    for (int ci = 0; ci < 3; ci++) {
        for (int ai = 0; ai < 2; ai++) {
            fl_arrow_write_options_t opts = {codecs[ci], 1, aligns[ai]};
            write_all_kinds(&opts, 1, &msg);
            fl_arrow_batch_view_t v;
            fl_error_t err;
            assert_int_equal(fl_arrow_message_parse(msg.data, msg.len, &v, &err), 0);
            assert_int_equal(v.message_len, msg.len);
            assert_int_equal(v.length, 10);
            assert_int_equal(v.codec, codecs[ci]);
            assert_int_equal(v.node_count, KINDS);
            assert_int_equal(v.buffer_count, 2 * KINDS + 2);
            assert_int_equal(msg.len % 8, 0);
            for (size_t i = 0; i < v.buffer_count; i++) {
                assert_int_equal(fl_arrow_batch_buffer(&v, i).offset % (int64_t)aligns[ai], 0);
                fl_buf_reset(&bytes);
                assert_int_equal(fl_arrow_buffer_get(&v, i, 1 << 20, &bytes, &err), 0);
            }
            /* the last buffer (binary data) decompresses to its bytes */
            assert_int_equal(bytes.len, 19 - 5 + 3);
            for (size_t i = 0; i < v.node_count; i++) {
                assert_int_equal(fl_arrow_batch_node(&v, i).length, 10);
                assert_int_equal(fl_arrow_batch_node(&v, i).null_count, 3);
            }
            fl_buf_reset(&spec);
            fl_buf_append(&spec, "{\"fields\":", 10);
            fl_buf_append(&spec, fields_json, strlen(fields_json));
            fl_buf_append(&spec, ",\"values\":", 10);
            fl_buf_append(&spec, values_json, strlen(values_json));
            fl_buf_append(&spec, "}", 2);
            int rc = arrow_python_check((const char *)spec.data, msg.data, msg.len);
            assert_int_equal(rc, 0);
            if (rc == 0) checked++;
        }
    }
    print_message("pyarrow read %d writer messages back\n", checked);
    fl_buf_free(&msg);
    fl_buf_free(&spec);
    fl_buf_free(&bytes);
}

static void test_writer_wrong_expectation_fails(void **state) {
    (void)state;
    fl_buf_t msg;
    fl_buf_init(&msg);
    write_all_kinds(NULL, 1, &msg);
    const char *spec = "{\"fields\":[[\"b\",\"bool\"]],\"values\":{\"b\":[true,true,false,true,null,"
                       "false,true,null,false,true]}}";
    int rc = arrow_python_check(spec, msg.data, msg.len);
    assert_true(rc != 0);
    fl_buf_free(&msg);
}

static void test_writer_zero_rows(void **state) {
    (void)state;
    fl_buf_t msg, spec;
    fl_buf_init(&msg);
    fl_buf_init(&spec);
    fl_arrow_write_options_t opts = {FL_ARROW_CODEC_ZSTD, 0, 8};
    write_all_kinds(&opts, 0, &msg);
    fl_arrow_batch_view_t v;
    fl_error_t err;
    assert_int_equal(fl_arrow_message_parse(msg.data, msg.len, &v, &err), 0);
    assert_int_equal(v.length, 0);
    fl_buf_append(&spec, "{\"fields\":", 10);
    fl_buf_append(&spec, fields_json, strlen(fields_json));
    const char *tail = ",\"values\":{\"b\":[],\"i8\":[],\"i16\":[],\"i32\":[],\"i64\":[],"
                       "\"f32\":[],\"f64\":[],\"s\":[],\"bin\":[]}}";
    fl_buf_append(&spec, tail, strlen(tail) + 1);
    assert_int_equal(arrow_python_check((const char *)spec.data, msg.data, msg.len), 0);
    fl_buf_free(&msg);
    fl_buf_free(&spec);
}

/* 50,000 int64 rows (400 KB: several 64 KB LZ4 blocks) and a string column. */
static void test_writer_multi_block(void **state) {
    (void)state;
    const int64_t n = 50000;
    const fl_arrow_codec_t codecs[2] = {FL_ARROW_CODEC_LZ4_FRAME, FL_ARROW_CODEC_ZSTD};
    for (int ci = 0; ci < 2; ci++) {
        fl_arrow_write_options_t opts = {codecs[ci], 3, 8};
        fl_arrow_writer_t w;
        fl_arrow_writer_init(&w, &opts);
        fl_arrow_column_t a, s;
        fl_arrow_column_init(&a, FL_ARROW_COL_INT64);
        fl_arrow_column_init(&s, FL_ARROW_COL_UTF8);
        fl_error_t err;
        for (int64_t i = 0; i < n; i++) {
            fl_arrow_column_append_int(&a, i);
            assert_int_equal(fl_arrow_column_append_bytes(&s, "row", 3, &err), 0);
        }
        assert_int_equal(fl_arrow_column_write(&a, &w, &err), 0);
        assert_int_equal(fl_arrow_column_write(&s, &w, &err), 0);
        fl_buf_t msg;
        fl_buf_init(&msg);
        assert_int_equal(fl_arrow_writer_finish(&w, n, &msg, &err), 0);
        fl_arrow_batch_view_t v;
        assert_int_equal(fl_arrow_message_parse(msg.data, msg.len, &v, &err), 0);
        /* the int64 values were compressed, not stored raw */
        assert_true(fl_arrow_batch_buffer(&v, 1).length < 8 * n);
        fl_buf_t values;
        fl_buf_init(&values);
        assert_int_equal(fl_arrow_buffer_get(&v, 1, 1 << 20, &values, &err), 0);
        assert_int_equal(values.len, 8 * n);
        int64_t last;
        memcpy(&last, values.data + 8 * (n - 1), 8);
        assert_int_equal(last, n - 1);
        const char *spec = "{\"fields\":[[\"a\",\"int64\"],[\"s\",\"utf8\"]],"
                           "\"ranges\":{\"a\":[0,50000]}}";
        assert_int_equal(arrow_python_check(spec, msg.data, msg.len), 0);
        fl_buf_free(&values);
        fl_buf_free(&msg);
        fl_arrow_column_reset(&a);
        fl_arrow_column_reset(&s);
        fl_arrow_writer_reset(&w);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_column_builder_layout),
        cmocka_unit_test(test_writer_read_by_pyarrow),
        cmocka_unit_test(test_writer_wrong_expectation_fails),
        cmocka_unit_test(test_writer_zero_rows),
        cmocka_unit_test(test_writer_multi_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
