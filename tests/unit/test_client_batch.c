/*
 * test_client_batch.c — libfluss's batch reading without a server: a
 * batch built from fluss_row values (record_builder.h, tested in
 * test_record_builder.c) decodes back to the values as text (plain and
 * JSON), skips rows below an offset, projects and reorders, refuses
 * corruption; a changelog batch (change-type vector) hands out each row's
 * change type; the Arrow C Data Interface export describes it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "record_batch.h"
#include "record_builder.h"
#include "test_client_util.h"

#define SCHEMA                                                                          \
    "id INT NOT NULL, s STRING, v DOUBLE, d DECIMAL(10, 2), dt DATE, ts TIMESTAMP(3), " \
    "ltz TIMESTAMP_LTZ(6), b BYTES, fb BINARY(2), flag BOOLEAN, tm TIME(3), arr ARRAY<INT>"
#define ROWS 10

static fluss_table_t *table_with_codec(const char *codec) {
    char prop[128];
    snprintf(prop, sizeof(prop), "table.log.arrow.compression.type=%s", codec);
    const char *props[] = {prop, NULL};
    return test_table(SCHEMA, NULL, 1, props);
}

static void fill(fluss_table_t *t, fl_record_builder_t *b) {
    fluss_row_t *r = fluss_row_new(t);
    char text[64];
    for (int i = 0; i < ROWS; i++) {
        fluss_row_clear(r);
        fluss_row_set_int64(r, 0, i, NULL);
        if (i % 3 != 1) {
            snprintf(text, sizeof(text), "row \"%d\"", i);
            assert_int_equal(fluss_row_set_string(r, 1, text, NULL), 0);
            assert_int_equal(fluss_row_set_double(r, 2, i / 4.0, NULL), 0);
            snprintf(text, sizeof(text), "-%d.5", i);
            assert_int_equal(fluss_row_set_decimal(r, 3, text, NULL), 0);
            assert_int_equal(fluss_row_set_date(r, 4, i - 1, NULL), 0);
            assert_int_equal(fluss_row_set_timestamp(r, 5, 1000LL * i + 7, 0, NULL), 0);
            assert_int_equal(fluss_row_set_timestamp(r, 6, -1, 999000, NULL), 0);
            assert_int_equal(fluss_row_set_bytes(r, 7, "\x00\xff", 2, NULL), 0);
            assert_int_equal(fluss_row_set_bytes(r, 8, "\xab\xcd", 2, NULL), 0);
            assert_int_equal(fluss_row_set_bool(r, 9, i % 2, NULL), 0);
            assert_int_equal(fluss_row_set_time(r, 10, 3723004, NULL), 0);
        }
        fl_record_builder_append(b, &r->row);
    }
    fluss_row_destroy(r);
}

static void build(fluss_table_t *t, fl_buf_t *out) {
    fl_record_builder_options_t o = {t->schema_id, t->codec, t->zstd_level};
    fl_record_builder_t b;
    fl_record_builder_init(&b, &t->desc.schema, &o);
    fill(t, &b);
    assert_int_equal(fl_record_builder_rows(&b), ROWS);
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_record_builder_finish(&b, 7, 3, out, &err), 0);
    fl_record_builder_free(&b);
}

static void check_built(const char *codec, fl_arrow_codec_t want) {
    fluss_table_t *t = table_with_codec(codec);
    assert_non_null(t);
    fl_buf_t out;
    fl_buf_init(&out);
    build(t, &out);
    fl_batch_view_t v;
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_batch_parse(out.data, out.len, &v, &err), 0);
    assert_int_equal(v.magic, 0);
    assert_int_equal(v.base_offset, 0);
    assert_int_equal(v.record_count, ROWS);
    assert_int_equal(v.last_offset_delta, ROWS - 1);
    assert_int_equal(v.writer_id, 7);
    assert_int_equal(v.batch_sequence, 3);
    assert_int_equal(v.schema_id, 1);
    assert_int_equal(v.attributes, FL_BATCH_ATTR_APPEND_ONLY);
    assert_int_equal(fl_batch_check_crc(&v, &err), 0);
    fl_arrow_batch_view_t av;
    assert_int_equal(fl_arrow_message_parse(out.data + v.records_start, out.len - v.records_start,
                                            &av, &err), 0);
    assert_int_equal(av.length, ROWS);
    assert_int_equal(av.codec, want);
    assert_int_equal(av.message_len, out.len - v.records_start);
    /* the server rewrites offset and timestamp without touching the CRC */
    fl_batch_set_base_offset(out.data, 100);
    fl_batch_set_commit_timestamp(out.data, 1234);
    assert_int_equal(fl_batch_parse(out.data, out.len, &v, &err), 0);
    assert_int_equal(fl_batch_check_crc(&v, &err), 0);
    out.data[out.len - 1] ^= 1;
    assert_int_equal(fl_batch_check_crc(&v, &err), FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    fl_buf_free(&out);
    fluss_table_close(t);
}

static void test_build_none(void **s) { (void)s; check_built("NONE", FL_ARROW_CODEC_NONE); }
static void test_build_lz4(void **s) { (void)s; check_built("LZ4_FRAME", FL_ARROW_CODEC_LZ4_FRAME); }
static void test_build_zstd(void **s) { (void)s; check_built("ZSTD", FL_ARROW_CODEC_ZSTD); }

static const char *text(const fluss_record_batch_t *b, size_t row, size_t col, int flags) {
    static char buf[256];
    size_t n = fluss_record_batch_value_text(b, row, col, flags, buf, sizeof(buf));
    assert_true(n < sizeof(buf));
    return buf;
}

static fluss_record_batch_t *decode(fluss_table_t *t, fl_buf_t *bytes, const int32_t *present,
                                    size_t n, int64_t min_offset) {
    int32_t all[12];
    for (int i = 0; i < 12; i++) all[i] = i;
    fluss_record_batch_t *b = NULL;
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_record_batch_decode(t, bytes->data, bytes->len, 3, all, 12, present, n,
                                            min_offset, true, &b, &err), 0);
    return b;
}

static void test_decode_values(void **state) {
    (void)state;
    fluss_table_t *t = table_with_codec("ZSTD");
    fl_buf_t out;
    fl_buf_init(&out);
    build(t, &out);
    fl_batch_set_base_offset(out.data, 100);
    fl_batch_set_commit_timestamp(out.data, 1234);
    int32_t all[12];
    for (int i = 0; i < 12; i++) all[i] = i;
    fluss_record_batch_t *b = decode(t, &out, all, 12, FLUSS_OFFSET_EARLIEST);
    assert_non_null(b);
    assert_int_equal(fluss_record_batch_bucket(b), 3);
    assert_int_equal(fluss_record_batch_row_count(b), ROWS);
    assert_int_equal(fluss_record_batch_base_offset(b), 100);
    assert_int_equal(fluss_record_batch_offset(b, 4), 104);
    assert_int_equal(fluss_record_batch_timestamp(b, 4), 1234);
    assert_int_equal(fluss_record_batch_change_type(b, 0), FLUSS_CHANGE_APPEND_ONLY);
    assert_string_equal(fluss_record_batch_column_name(b, 1), "s");
    assert_string_equal(text(b, 2, 0, 0), "2");
    assert_string_equal(text(b, 2, 1, 0), "row \"2\"");
    assert_string_equal(text(b, 2, 1, FLUSS_TEXT_JSON), "\"row \\\"2\\\"\"");
    assert_string_equal(text(b, 2, 2, 0), "0.5");
    assert_string_equal(text(b, 0, 2, 0), "0.0");
    assert_string_equal(text(b, 2, 3, 0), "-2.50");
    assert_string_equal(text(b, 0, 4, 0), "1969-12-31");
    assert_string_equal(text(b, 2, 4, FLUSS_TEXT_JSON), "\"1970-01-02\"");
    assert_string_equal(text(b, 2, 5, 0), "1970-01-01T00:00:02.007");
    assert_string_equal(text(b, 2, 6, 0), "1969-12-31T23:59:59.999999Z");
    assert_string_equal(text(b, 2, 7, 0), "00ff");
    assert_string_equal(text(b, 2, 8, FLUSS_TEXT_JSON), "\"abcd\"");
    assert_string_equal(text(b, 2, 9, 0), "false");
    assert_string_equal(text(b, 3, 9, 0), "true");
    assert_string_equal(text(b, 2, 10, 0), "01:02:03.004");
    /* NULLs: row 1 has only the id; the ARRAY column is always NULL */
    assert_true(fluss_record_batch_is_null(b, 1, 1));
    assert_false(fluss_record_batch_is_null(b, 1, 0));
    assert_string_equal(text(b, 1, 3, 0), "");
    assert_string_equal(text(b, 1, 3, FLUSS_TEXT_JSON), "null");
    assert_true(fluss_record_batch_is_null(b, 5, 11));
    /* snprintf-style truncation */
    char small[4];
    assert_int_equal(fluss_record_batch_value_text(b, 2, 1, 0, small, sizeof(small)), 7);
    assert_string_equal(small, "row");
    fluss_record_batch_free(b);

    /* skipped rows, projection in another order */
    int32_t proj[] = {5, 0};
    b = decode(t, &out, proj, 2, 107);
    assert_int_equal(fluss_record_batch_row_count(b), 3);
    assert_int_equal(fluss_record_batch_base_offset(b), 107);
    assert_string_equal(fluss_record_batch_column_name(b, 0), "ts");
    assert_string_equal(text(b, 0, 1, 0), "7");
    assert_true(fluss_record_batch_is_null(b, 0, 0));
    assert_string_equal(text(b, 1, 0, 0), "1970-01-01T00:00:08.007");
    fluss_record_batch_free(b);
    /* a batch wholly below the position decodes to nothing */
    b = decode(t, &out, proj, 2, 110);
    assert_null(b);
    fl_buf_free(&out);
    fluss_table_close(t);
}

static void test_decode_changelog(void **state) {
    (void)state;
    fluss_table_t *t = table_with_codec("LZ4_FRAME");
    fl_record_builder_options_t o = {t->schema_id, t->codec, t->zstd_level};
    fl_record_builder_t rb;
    fl_record_builder_init(&rb, &t->desc.schema, &o);
    fluss_row_t *r = fluss_row_new(t);
    const fl_change_type_t cts[] = {FL_CHANGE_INSERT, FL_CHANGE_UPDATE_BEFORE,
                                    FL_CHANGE_UPDATE_AFTER, FL_CHANGE_DELETE};
    for (int i = 0; i < 4; i++) {
        fluss_row_clear(r);
        fluss_row_set_int64(r, 0, 10 + i, NULL);
        fl_record_builder_append_change(&rb, &r->row, cts[i]);
    }
    fluss_row_destroy(r);
    fl_buf_t out;
    fl_buf_init(&out);
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_record_builder_finish(&rb, 5, 0, &out, &err), 0);
    fl_record_builder_free(&rb);
    fl_batch_set_base_offset(out.data, 20);
    int32_t all[12];
    for (int i = 0; i < 12; i++) all[i] = i;
    fluss_record_batch_t *b = decode(t, &out, all, 12, FLUSS_OFFSET_EARLIEST);
    assert_int_equal(fluss_record_batch_row_count(b), 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(fluss_record_batch_change_type(b, (size_t)i), (int)cts[i]);
        char want[8];
        snprintf(want, sizeof(want), "%d", 10 + i);
        assert_string_equal(text(b, (size_t)i, 0, 0), want);
    }
    fluss_record_batch_free(b);
    /* rows below the position skipped: the change types follow */
    b = decode(t, &out, all, 12, 22);
    assert_int_equal(fluss_record_batch_row_count(b), 2);
    assert_int_equal(fluss_record_batch_change_type(b, 0), FLUSS_CHANGE_UPDATE_AFTER);
    assert_int_equal(fluss_record_batch_change_type(b, 1), FLUSS_CHANGE_DELETE);
    assert_string_equal(text(b, 1, 0, 0), "13");
    fluss_record_batch_free(b);
    /* an empty changelog batch decodes to nothing */
    out.len = 0;
    fl_record_builder_write_empty_changelog(&out, (int16_t)t->schema_id, 5, 1);
    b = decode(t, &out, all, 12, FLUSS_OFFSET_EARLIEST);
    assert_null(b);
    fl_buf_free(&out);
    fluss_table_close(t);
}

static void test_decode_rejects_corruption(void **state) {
    (void)state;
    fluss_table_t *t = table_with_codec("NONE");
    fl_buf_t out;
    fl_buf_init(&out);
    build(t, &out);
    int32_t all[12];
    for (int i = 0; i < 12; i++) all[i] = i;
    fluss_record_batch_t *b = NULL;
    fl_error_t err;
    fl_err_clear(&err);
    /* a changed byte in the body: CRC */
    out.data[out.len - 8] ^= 0x40;
    assert_int_equal(fl_record_batch_decode(t, out.data, out.len, 0, all, 12, all, 12, -2, true,
                                            &b, &err), FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_null(b);
    /* more columns than the message has */
    out.data[out.len - 8] ^= 0x40;
    fluss_table_t *wide = test_table(SCHEMA ", extra BIGINT", NULL, 1, NULL);
    int32_t all13[13];
    for (int i = 0; i < 13; i++) all13[i] = i;
    assert_int_equal(fl_record_batch_decode(wide, out.data, out.len, 0, all13, 13, all13, 13, -2,
                                            true, &b, &err), FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_null(b);
    fluss_table_close(wide);
    fl_buf_free(&out);
    fluss_table_close(t);
}

static void test_arrow_c_export(void **state) {
    (void)state;
    fluss_table_t *t = table_with_codec("LZ4_FRAME");
    fl_buf_t out;
    fl_buf_init(&out);
    build(t, &out);
    int32_t all[12];
    for (int i = 0; i < 12; i++) all[i] = i;
    fluss_record_batch_t *b = decode(t, &out, all, 12, 2);
    struct ArrowSchema schema;
    struct ArrowArray array;
    assert_int_equal(fluss_record_batch_to_arrow(b, &schema, &array, NULL), 0);
    fluss_record_batch_free(b); /* the export is independent of the batch */
    assert_string_equal(schema.format, "+s");
    assert_int_equal(schema.n_children, 12);
    const char *formats[] = {"i", "u", "g", "d:10,2", "tdD", "tsm:", "tsu:", "z", "w:2", "b", "ttm", "+l"};
    for (int i = 0; i < 12; i++) assert_string_equal(schema.children[i]->format, formats[i]);
    assert_string_equal(schema.children[1]->name, "s");
    assert_int_equal(schema.children[0]->flags & ARROW_FLAG_NULLABLE, 0);
    assert_int_equal(schema.children[1]->flags & ARROW_FLAG_NULLABLE, ARROW_FLAG_NULLABLE);
    assert_int_equal(schema.children[11]->n_children, 1);
    assert_string_equal(schema.children[11]->children[0]->name, "element");
    assert_int_equal(array.length, ROWS - 2);
    assert_int_equal(array.n_children, 12);
    struct ArrowArray *id = array.children[0];
    assert_int_equal(id->offset, 2);
    assert_int_equal(id->length, ROWS - 2);
    assert_int_equal(id->null_count, 0);
    assert_int_equal(id->n_buffers, 2);
    assert_null(id->buffers[0]);
    assert_int_equal(((const int32_t *)id->buffers[1])[id->offset + 1], 3);
    struct ArrowArray *s = array.children[1];
    assert_int_equal(s->n_buffers, 3);
    assert_int_equal(s->null_count, 2); /* rows 4 and 7 of 2..9 */
    const int32_t *offs = s->buffers[1];
    const char *data = s->buffers[2];
    assert_memory_equal(data + offs[2], "row \"2\"", 7);
    struct ArrowArray *arr = array.children[11];
    assert_int_equal(arr->null_count, ROWS - 2);
    assert_int_equal(arr->n_children, 1);
    schema.release(&schema);
    array.release(&array);
    assert_null(schema.release);
    assert_null(array.release);
    fl_buf_free(&out);
    fluss_table_close(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_none),
        cmocka_unit_test(test_build_lz4),
        cmocka_unit_test(test_build_zstd),
        cmocka_unit_test(test_decode_values),
        cmocka_unit_test(test_decode_changelog),
        cmocka_unit_test(test_decode_rejects_corruption),
        cmocka_unit_test(test_arrow_c_export),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
