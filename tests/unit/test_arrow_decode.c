/*
 * test_arrow_decode.c — Arrow columns decoded into owned arrays
 * (arrow_decode.h): pyarrow's all-types fixtures (make_fixtures.py) under
 * every codec give back their values through the accessors (integers of
 * every width sign-extended, floats, strings, bytes, fixed binary,
 * decimal, date, time and timestamp units, lists, maps, structs, NULLs
 * and empties); the empty batch decodes to empty arrays; and corrupt
 * columns (offsets backwards or beyond the data, short values, too few
 * buffers or nodes, a column shorter than the batch, a struct child
 * shorter than its parent, a buffer over the size limit) are
 * CORRUPT_RECORD_EXCEPTION with nothing left allocated.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "arrow_decode.h"
#include "test_arrow_util.h"

typedef struct decoded {
    fl_datatype_t *types[ARROW_ALL_TYPES_COUNT];
    fl_arrow_array_t cols[ARROW_ALL_TYPES_COUNT];
    fl_buf_t msg;
    fl_arrow_batch_view_t view;
} decoded_t;

static void decode_fixture(const char *name, decoded_t *d) {
    memset(d, 0, sizeof(*d));
    arrow_all_types(d->types);
    fl_buf_init(&d->msg);
    arrow_fixture(name, &d->msg);
    fl_error_t err;
    assert_int_equal(fl_arrow_message_parse(d->msg.data, d->msg.len, &d->view, &err), 0);
    fl_arrow_decoder_t dec;
    fl_arrow_decoder_init(&dec, &d->view, 1 << 20);
    for (size_t i = 0; i < ARROW_ALL_TYPES_COUNT; i++)
        if (fl_arrow_decoder_next(&dec, d->types[i], &d->cols[i], &err))
            fail_msg("%s column %zu: %s", name, i, err.msg);
    assert_int_equal(dec.next_node, ARROW_ALL_TYPES_NODES);
    assert_int_equal(dec.next_buffer, ARROW_ALL_TYPES_BUFFERS);
}

static void decoded_free(decoded_t *d) {
    for (size_t i = 0; i < ARROW_ALL_TYPES_COUNT; i++) fl_arrow_array_free(&d->cols[i]);
    arrow_types_free(d->types, ARROW_ALL_TYPES_COUNT);
    fl_buf_free(&d->msg);
}

static void expect_bytes(const fl_arrow_array_t *a, int64_t i, const char *want, size_t n) {
    size_t len;
    const uint8_t *p = fl_arrow_array_bytes(a, i, &len);
    assert_non_null(p);
    assert_int_equal(len, n);
    if (n) assert_memory_equal(p, want, n);
}

static void check_values(const decoded_t *d) {
    const fl_arrow_array_t *c = d->cols;
    assert_int_equal(d->view.length, 5);
    for (size_t i = 0; i < ARROW_ALL_TYPES_COUNT; i++) assert_int_equal(c[i].length, 5);
    /* integers */
    assert_int_equal(fl_arrow_array_int(&c[0], 2), -128);
    assert_int_equal(fl_arrow_array_int(&c[0], 3), 127);
    assert_true(fl_arrow_array_is_null(&c[0], 1));
    assert_false(fl_arrow_array_is_null(&c[0], 0));
    assert_int_equal(fl_arrow_array_int(&c[1], 2), -32768);
    assert_int_equal(fl_arrow_array_int(&c[2], 1), -3);
    assert_int_equal(fl_arrow_array_int(&c[2], 4), INT32_MIN);
    assert_int_equal(fl_arrow_array_int(&c[3], 0), 1LL << 62);
    assert_int_equal(fl_arrow_array_int(&c[3], 2), -1);
    /* booleans, floats */
    assert_true(fl_arrow_array_bool(&c[4], 0));
    assert_false(fl_arrow_array_bool(&c[4], 1));
    assert_true(fl_arrow_array_is_null(&c[4], 2));
    assert_true(fl_arrow_array_double(&c[5], 0) == 1.5);
    assert_true(fl_arrow_array_double(&c[5], 4) == 3.25);
    assert_true(fl_arrow_array_double(&c[6], 1) == -1e300);
    assert_true(fl_arrow_array_double(&c[6], 4) == 1e-300);
    /* strings and bytes */
    expect_bytes(&c[7], 0, "hello", 5);
    expect_bytes(&c[7], 1, "", 0);
    assert_true(fl_arrow_array_is_null(&c[7], 2));
    expect_bytes(&c[7], 3, "h\xc3\xa9llo w\xc3\xb6rld", 13);
    expect_bytes(&c[8], 0, "\x00\x01", 2);
    expect_bytes(&c[8], 4, "abc", 3);
    expect_bytes(&c[9], 0, "abcd", 4);
    expect_bytes(&c[9], 4, "1234", 4);
    /* decimal, date, time */
    assert_true(fl_arrow_array_decimal(&c[10], 0) == 12345);
    assert_true(fl_arrow_array_decimal(&c[10], 2) == -1);
    assert_true(fl_arrow_array_decimal(&c[10], 3) == 9999999999LL);
    assert_int_equal(fl_arrow_array_int(&c[11], 0), 19723); /* 2024-01-01 */
    assert_int_equal(fl_arrow_array_int(&c[11], 3), -719162); /* 0001-01-01 */
    assert_int_equal(fl_arrow_array_int(&c[12], 0), 3723004); /* ms */
    assert_int_equal(fl_arrow_array_int(&c[13], 0), 3723000004LL); /* us */
    assert_int_equal(fl_arrow_array_int(&c[13], 3), 86399999999LL);
    /* timestamps in their units */
    assert_int_equal(fl_arrow_array_int(&c[14], 3), -1); /* s */
    assert_int_equal(fl_arrow_array_int(&c[15], 3), 2147483648000LL); /* ms */
    assert_int_equal(fl_arrow_array_int(&c[16], 2), 0);
    assert_int_equal(fl_arrow_array_int(&c[17], 0), 1700000000123456789LL); /* ns */
    assert_int_equal(fl_arrow_array_int(&c[17], 3), -1);
    /* list<utf8>: [["a","bc"], [], NULL, ["", NULL, "z"], ["only"]] */
    int64_t s, e;
    fl_arrow_array_child_range(&c[18], 0, &s, &e);
    assert_int_equal(e - s, 2);
    expect_bytes(&c[18].children[0], s + 1, "bc", 2);
    fl_arrow_array_child_range(&c[18], 1, &s, &e);
    assert_int_equal(e - s, 0);
    assert_true(fl_arrow_array_is_null(&c[18], 2));
    fl_arrow_array_child_range(&c[18], 3, &s, &e);
    assert_int_equal(e - s, 3);
    assert_true(fl_arrow_array_is_null(&c[18].children[0], s + 1));
    expect_bytes(&c[18].children[0], s + 2, "z", 1);
    /* map<utf8,int32>: entries struct of key, value */
    const fl_arrow_array_t *ent = &c[19].children[0];
    assert_int_equal(ent->kind, FL_ARROW_ARRAY_ENTRIES);
    assert_null(ent->type);
    assert_int_equal(ent->child_count, 2);
    fl_arrow_array_child_range(&c[19], 0, &s, &e);
    assert_int_equal(e - s, 2);
    expect_bytes(&ent->children[0], s + 1, "k2", 2);
    assert_true(fl_arrow_array_is_null(&ent->children[1], s + 1));
    fl_arrow_array_child_range(&c[19], 4, &s, &e);
    assert_int_equal(fl_arrow_array_int(&ent->children[1], s), -5);
    /* struct<a:int32,b:utf8> */
    assert_int_equal(c[20].child_count, 2);
    assert_true(fl_arrow_array_is_null(&c[20], 1));
    assert_true(fl_arrow_array_is_null(&c[20].children[0], 2));
    assert_int_equal(fl_arrow_array_int(&c[20].children[0], 3), -7);
    expect_bytes(&c[20].children[1], 0, "one", 3);
}

static void test_fixtures(void **state) {
    (void)state;
    for (int k = 0; k < 3; k++) {
        char name[64];
        snprintf(name, sizeof(name), "all_types_%s.arrow", arrow_codec_names[k]);
        decoded_t d;
        decode_fixture(name, &d);
        check_values(&d);
        decoded_free(&d);
        snprintf(name, sizeof(name), "all_types_empty_%s.arrow", arrow_codec_names[k]);
        decode_fixture(name, &d);
        for (size_t i = 0; i < ARROW_ALL_TYPES_COUNT; i++) assert_int_equal(d.cols[i].length, 0);
        decoded_free(&d);
    }
}

/* ---- corruption: messages written by fl_arrow_writer with bad buffers ---- */

static fl_datatype_t *type_of(const char *text) {
    fl_datatype_t *t;
    fl_error_t err;
    assert_int_equal(fl_datatype_parse(&text, &t, &err), 0);
    return t;
}

static void le32s(fl_buf_t *b, const int32_t *v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint8_t x[4] = {(uint8_t)v[i], (uint8_t)(v[i] >> 8), (uint8_t)(v[i] >> 16),
                        (uint8_t)((uint32_t)v[i] >> 24)};
        fl_buf_append(b, x, 4);
    }
}

/* One column of `type` from the given nodes and buffers, as a message of
 * `rows` rows; returns the decoder's result (the array is freed). */
static int decode_one(const char *type, int64_t rows, const fl_arrow_node_t *nodes, size_t nn,
                      fl_buf_t *bufs, size_t nb, size_t max_bytes, fl_error_t *err) {
    fl_arrow_writer_t w;
    fl_arrow_writer_init(&w, NULL);
    for (size_t i = 0; i < nn; i++) fl_arrow_writer_add_node(&w, nodes[i].length, nodes[i].null_count);
    for (size_t i = 0; i < nb; i++)
        assert_int_equal(fl_arrow_writer_add_buffer(&w, bufs[i].data, bufs[i].len, err), 0);
    fl_buf_t msg;
    fl_buf_init(&msg);
    assert_int_equal(fl_arrow_writer_finish(&w, rows, &msg, err), 0);
    fl_arrow_writer_reset(&w);
    fl_arrow_batch_view_t v;
    assert_int_equal(fl_arrow_message_parse(msg.data, msg.len, &v, err), 0);
    fl_datatype_t *t = type_of(type);
    fl_arrow_decoder_t d;
    fl_arrow_decoder_init(&d, &v, max_bytes);
    fl_arrow_array_t a;
    int rc = fl_arrow_decoder_next(&d, t, &a, err);
    if (rc) {
        assert_null(a.children);
        assert_null(a.values.data);
        assert_null(a.data.data);
    }
    fl_arrow_array_free(&a);
    fl_datatype_destroy(t);
    fl_buf_free(&msg);
    return rc;
}

static void test_corrupt_columns(void **state) {
    (void)state;
    fl_error_t err;
    fl_buf_t b[6];
    for (int i = 0; i < 6; i++) fl_buf_init(&b[i]);
    const int C = FLUSS_ERR_CORRUPT_RECORD_EXCEPTION;
    fl_arrow_node_t n3 = {3, 0}, n2 = {2, 0};
    /* a good STRING column first */
    int32_t good[] = {0, 1, 1, 3};
    le32s(&b[1], good, 4);
    fl_buf_append(&b[2], "abc", 3);
    assert_int_equal(decode_one("STRING", 3, &n3, 1, b, 3, 1 << 20, &err), 0);
    /* offsets backwards, beyond the data, negative, too few */
    int32_t back[] = {0, 2, 1, 3}, beyond[] = {0, 1, 1, 4}, neg[] = {-1, 1, 1, 3};
    fl_buf_reset(&b[1]);
    le32s(&b[1], back, 4);
    assert_int_equal(decode_one("STRING", 3, &n3, 1, b, 3, 1 << 20, &err), C);
    assert_non_null(strstr(err.msg, "backwards"));
    fl_buf_reset(&b[1]);
    le32s(&b[1], beyond, 4);
    assert_int_equal(decode_one("STRING", 3, &n3, 1, b, 3, 1 << 20, &err), C);
    fl_buf_reset(&b[1]);
    le32s(&b[1], neg, 4);
    assert_int_equal(decode_one("STRING", 3, &n3, 1, b, 3, 1 << 20, &err), C);
    fl_buf_reset(&b[1]);
    le32s(&b[1], good, 3);
    assert_int_equal(decode_one("STRING", 3, &n3, 1, b, 3, 1 << 20, &err), C);
    /* too few buffers, too few nodes */
    le32s(&b[1], good + 3, 1);
    assert_int_equal(decode_one("STRING", 3, &n3, 1, b, 2, 1 << 20, &err), C);
    assert_int_equal(decode_one("STRING", 3, &n3, 0, b, 3, 1 << 20, &err), C);
    /* a buffer over the size limit */
    assert_int_equal(decode_one("STRING", 3, &n3, 1, b, 3, 2, &err), C);
    /* short fixed-width values; a validity bitmap too short for its nulls */
    fl_buf_reset(&b[1]);
    le32s(&b[1], good, 2);
    assert_int_equal(decode_one("INT", 3, &n3, 1, b, 2, 1 << 20, &err), C);
    fl_arrow_node_t n3null = {3, 1};
    le32s(&b[1], good, 1);
    assert_int_equal(decode_one("INT", 3, &n3null, 1, b, 2, 1 << 20, &err), 0 + C);
    fl_buf_put_u8(&b[0], 0x05);
    assert_int_equal(decode_one("INT", 3, &n3null, 1, b, 2, 1 << 20, &err), 0);
    fl_buf_reset(&b[0]);
    /* a column shorter than the batch */
    assert_int_equal(decode_one("INT", 4, &n3, 1, b, 2, 1 << 20, &err), C);
    assert_non_null(strstr(err.msg, "shorter than the batch"));
    /* a struct child shorter than its parent */
    fl_arrow_node_t row[] = {{3, 0}, {2, 0}};
    fl_buf_reset(&b[1]);
    fl_buf_reset(&b[2]);
    le32s(&b[2], good, 2);
    assert_int_equal(decode_one("ROW<a INT>", 3, row, 2, b, 3, 1 << 20, &err), C);
    /* list offsets beyond the child */
    fl_arrow_node_t list[] = {{2, 0}, {2, 0}};
    int32_t loffs[] = {0, 1, 3};
    fl_buf_reset(&b[1]);
    le32s(&b[1], loffs, 3);
    fl_buf_reset(&b[3]);
    le32s(&b[3], good, 2);
    fl_buf_t lb[4] = {b[0], b[1], b[0], b[3]};
    assert_int_equal(decode_one("ARRAY<INT>", 2, list, 2, lb, 4, 1 << 20, &err), C);
    (void)n2;
    for (int i = 0; i < 6; i++) fl_buf_free(&b[i]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_corrupt_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
