/*
 * test_record_builder.c — LogRecordBatches built from rows without
 * libfluss: a valid V0 batch (fl_batch_parse, CRC, writer id / sequence /
 * counts / schema id) whose body is one Arrow RecordBatch message with the
 * right rows under every codec and the expected buffers (validity bits,
 * values, offsets, all-NULL nested columns); an empty batch; clearing
 * reuses the builder; a failed finish leaves the output as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "record_batch.h"
#include "record_builder.h"
#include "test_types_util.h"

static const char *const kTypes[] = {"INT NOT NULL", "STRING", "DOUBLE", "DECIMAL(10, 2)",
                                     "TIMESTAMP(6)", "BOOLEAN", "ARRAY<INT>"};
#define NCOL 7
#define ROWS 10

static void fill(fl_record_builder_t *b, int rows) {
    fl_row_t r;
    fl_row_init(&r, NCOL);
    for (int i = 0; i < rows; i++) {
        fl_row_clear(&r);
        r.cells[0].is_null = false;
        r.cells[0].i = i;
        if (i % 3 != 1) {
            char text[32];
            int n = snprintf(text, sizeof(text), "row %d", i);
            fl_row_set_bytes(&r, 1, text, (size_t)n);
            r.cells[2] = (fl_cell_t){.d = i / 4.0};
            r.cells[3] = (fl_cell_t){.dec = -100 * i - 50};
            r.cells[4] = (fl_cell_t){.i = 1000 * i + 7, .nanos = 1000};
            r.cells[5] = (fl_cell_t){.i = i % 2};
        }
        fl_record_builder_append(b, &r);
    }
    fl_row_free(&r);
}

static void build(fl_schema_t *s, fl_arrow_codec_t codec, int rows, fl_buf_t *out) {
    fl_record_builder_options_t o = {5, codec, 0};
    fl_record_builder_t b;
    fl_record_builder_init(&b, s, &o);
    fill(&b, rows);
    assert_int_equal(fl_record_builder_rows(&b), rows);
    if (rows) assert_true(fl_record_builder_size(&b) > 0);
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_record_builder_finish(&b, 7, 3, out, &err), 0);
    fl_record_builder_free(&b);
}

static void check_built(fl_arrow_codec_t codec) {
    fl_schema_t s;
    test_schema_of(&s, kTypes, NCOL);
    assert_int_equal(fl_record_builder_check_schema(&s, NULL), 0);
    fl_buf_t out;
    fl_buf_init(&out);
    build(&s, codec, ROWS, &out);
    fl_batch_view_t v;
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_batch_parse(out.data, out.len, &v, &err), 0);
    assert_int_equal(v.magic, 0);
    assert_int_equal(v.base_offset, 0);
    assert_int_equal(v.commit_timestamp, 0);
    assert_int_equal(v.record_count, ROWS);
    assert_int_equal(v.last_offset_delta, ROWS - 1);
    assert_int_equal(v.writer_id, 7);
    assert_int_equal(v.batch_sequence, 3);
    assert_int_equal(v.schema_id, 5);
    assert_int_equal(v.attributes, FL_BATCH_ATTR_APPEND_ONLY);
    assert_int_equal(fl_batch_check_crc(&v, &err), 0);
    fl_arrow_batch_view_t av;
    assert_int_equal(fl_arrow_message_parse(out.data + v.records_start, out.len - v.records_start,
                                            &av, &err), 0);
    assert_int_equal(av.length, ROWS);
    assert_int_equal(av.codec, codec);
    assert_int_equal(av.message_len, out.len - v.records_start);
    /* 6 flat columns + ARRAY (list node + element node) */
    assert_int_equal(av.node_count, NCOL + 1);
    fl_arrow_node_t n1 = fl_arrow_batch_node(&av, 1);
    assert_int_equal(n1.length, ROWS);
    assert_int_equal(n1.null_count, 3); /* rows 1, 4, 7 */
    fl_arrow_node_t arr = fl_arrow_batch_node(&av, 6);
    assert_int_equal(arr.null_count, ROWS);
    /* INT values and the STRING column's validity and offsets */
    fl_buf_t buf;
    fl_buf_init(&buf);
    assert_int_equal(fl_arrow_buffer_get(&av, 1, 1 << 20, &buf, &err), 0);
    assert_int_equal(buf.len, 4 * ROWS);
    assert_int_equal(fl_get_le32(buf.data + 4 * 9), 9);
    buf.len = 0;
    assert_int_equal(fl_arrow_buffer_get(&av, 2, 1 << 20, &buf, &err), 0);
    assert_int_equal(buf.data[0], 0x6D); /* rows 1, 4, 7 NULL: bits LSB first 01101101 */
    buf.len = 0;
    assert_int_equal(fl_arrow_buffer_get(&av, 3, 1 << 20, &buf, &err), 0);
    assert_int_equal(buf.len, 4 * (ROWS + 1));
    assert_int_equal(fl_get_le32(buf.data + 4), 5); /* "row 0" */
    assert_int_equal(fl_get_le32(buf.data + 8), 5); /* row 1 NULL */
    fl_buf_free(&buf);
    fl_buf_free(&out);
    fl_schema_free(&s);
}

static void test_build_none(void **s) { (void)s; check_built(FL_ARROW_CODEC_NONE); }
static void test_build_lz4(void **s) { (void)s; check_built(FL_ARROW_CODEC_LZ4_FRAME); }
static void test_build_zstd(void **s) { (void)s; check_built(FL_ARROW_CODEC_ZSTD); }

static void test_empty_and_reuse(void **state) {
    (void)state;
    fl_schema_t s;
    test_schema_of(&s, kTypes, NCOL);
    fl_buf_t out;
    fl_buf_init(&out);
    build(&s, FL_ARROW_CODEC_NONE, 0, &out);
    fl_batch_view_t v;
    fl_error_t err;
    assert_int_equal(fl_batch_parse(out.data, out.len, &v, &err), 0);
    assert_int_equal(v.record_count, 0);
    assert_int_equal(v.last_offset_delta, 0);
    assert_int_equal(fl_batch_check_crc(&v, &err), 0);
    /* a cleared builder builds the same bytes again, appended after */
    fl_record_builder_options_t o = {5, FL_ARROW_CODEC_NONE, 0};
    fl_record_builder_t b;
    fl_record_builder_init(&b, &s, &o);
    fl_buf_t a1, a2;
    fl_buf_init(&a1);
    fl_buf_init(&a2);
    fill(&b, 4);
    assert_int_equal(fl_record_builder_finish(&b, -1, -1, &a1, &err), 0);
    fl_record_builder_clear(&b);
    assert_int_equal(fl_record_builder_rows(&b), 0);
    assert_int_equal(fl_record_builder_size(&b), 0);
    fill(&b, 4);
    fl_buf_append(&a2, "xy", 2);
    assert_int_equal(fl_record_builder_finish(&b, -1, -1, &a2, &err), 0);
    assert_int_equal(a2.len, a1.len + 2);
    assert_memory_equal(a2.data + 2, a1.data, a1.len);
    assert_int_equal(fl_batch_parse(a1.data, a1.len, &v, &err), 0);
    assert_int_equal(v.writer_id, -1);
    assert_int_equal(v.batch_sequence, -1);
    fl_record_builder_free(&b);
    fl_buf_free(&a1);
    fl_buf_free(&a2);
    fl_buf_free(&out);
    fl_schema_free(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_none),
        cmocka_unit_test(test_build_lz4),
        cmocka_unit_test(test_build_zstd),
        cmocka_unit_test(test_empty_and_reuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
