/*
 * test_arrow_message.c — parsing the encapsulated Arrow RecordBatch message
 * of an ARROW log batch (arrow_ipc.h): pyarrow's messages for every Fluss
 * type and codec parse to the right rows, nodes, buffers and codec; column
 * shapes add up to what pyarrow writes; every truncation and many single-
 * byte corruptions of valid messages give an error or a still-valid view
 * (never a crash or a read outside the input, which ASan would catch).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common_alloc.h"
#include "test_arrow_util.h"

static const char *const fixture_names[] = {
    "all_types_none.arrow",       "all_types_lz4.arrow",       "all_types_zstd.arrow",
    "all_types_empty_none.arrow", "all_types_empty_lz4.arrow", "all_types_empty_zstd.arrow",
    "all_types_zstd_p3.arrow",
};

static void test_shapes(void **state) {
    (void)state;
    fl_datatype_t *types[ARROW_ALL_TYPES_COUNT];
    arrow_all_types(types);
    static const uint32_t want_nodes[ARROW_ALL_TYPES_COUNT] = {
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 3};
    static const uint32_t want_bufs[ARROW_ALL_TYPES_COUNT] = {
        2, 2, 2, 2, 2, 2, 2, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 5, 8, 6};
    uint32_t tn = 0, tb = 0;
    for (size_t i = 0; i < ARROW_ALL_TYPES_COUNT; i++) {
        uint32_t n = 0, b = 0;
        assert_int_equal(fl_arrow_column_shape(types[i], &n, &b), 0);
        assert_int_equal(n, want_nodes[i]);
        assert_int_equal(b, want_bufs[i]);
        tn += n;
        tb += b;
    }
    assert_int_equal(tn, ARROW_ALL_TYPES_NODES);
    assert_int_equal(tb, ARROW_ALL_TYPES_BUFFERS);
    arrow_types_free(types, ARROW_ALL_TYPES_COUNT);

    /* CHAR is Utf8; nested containers add up */
    const char *texts[] = {"CHAR(3)", "ARRAY<ARRAY<INT>>", "MAP<INT, ROW<x BYTES, y ARRAY<DOUBLE>>>",
                           "ROW<a ROW<b ROW<c BOOLEAN>>>"};
    const uint32_t n_want[] = {1, 3, 1 + 1 + 1 + (1 + 1 + 2), 4};
    const uint32_t b_want[] = {3, 6, 2 + 1 + 2 + (1 + 3 + 4), 1 + 1 + 1 + 2};
    for (size_t i = 0; i < 4; i++) {
        fl_datatype_t *t;
        fl_error_t err;
        const char *p = texts[i];
        assert_int_equal(fl_datatype_parse(&p, &t, &err), 0);
        uint32_t n, b;
        assert_int_equal(fl_arrow_column_shape(t, &n, &b), 0);
        assert_int_equal(n, n_want[i]);
        assert_int_equal(b, b_want[i]);
        fl_datatype_destroy(t);
    }
    uint32_t n, b;
    assert_int_equal(fl_arrow_column_shape(NULL, &n, &b), -1);
}

static void test_shape_too_deep(void **state) {
    (void)state;
    fl_datatype_t *t = fl_datatype_new(FL_TYPE_INTEGER);
    for (int i = 0; i < FL_TYPE_DEPTH_MAX + 2; i++) {
        fl_datatype_t *a = fl_datatype_new(FL_TYPE_ARRAY);
        a->element = t;
        t = a;
    }
    uint32_t n, b;
    assert_int_equal(fl_arrow_column_shape(t, &n, &b), -1);
    fl_datatype_destroy(t);
}

static void test_parse_fixtures(void **state) {
    (void)state;
    fl_buf_t buf;
    fl_buf_init(&buf);
    for (int c = 0; c < 3; c++) {
        for (int empty = 0; empty < 2; empty++) {
            char name[64];
            snprintf(name, sizeof(name), "all_types_%s%s.arrow", empty ? "empty_" : "",
                     arrow_codec_names[c]);
            arrow_fixture(name, &buf);
            fl_arrow_batch_view_t v;
            fl_error_t err;
            int rc = fl_arrow_message_parse(buf.data, buf.len, &v, &err);
            if (rc) fail_msg("%s: %s", name, err.msg);
            assert_int_equal(v.version, FL_ARROW_METADATA_V5);
            assert_int_equal(v.length, empty ? 0 : 5);
            assert_int_equal(v.node_count, ARROW_ALL_TYPES_NODES);
            assert_int_equal(v.buffer_count, ARROW_ALL_TYPES_BUFFERS);
            assert_int_equal(v.codec, c == 0 ? FL_ARROW_CODEC_NONE
                                      : c == 1 ? FL_ARROW_CODEC_LZ4_FRAME
                                               : FL_ARROW_CODEC_ZSTD);
            assert_int_equal(v.message_len, buf.len);
            assert_int_equal((8 + v.metadata_len) % 8, 0);
            /* top-level i8 column: 5 rows, one null */
            fl_arrow_node_t n0 = fl_arrow_batch_node(&v, 0);
            assert_int_equal(n0.length, empty ? 0 : 5);
            assert_int_equal(n0.null_count, empty ? 0 : 1);
            /* list<utf8> (node 18): 5 lists with one null, then 6 strings with one null */
            fl_arrow_node_t l = fl_arrow_batch_node(&v, 18), e = fl_arrow_batch_node(&v, 19);
            assert_int_equal(l.length, empty ? 0 : 5);
            assert_int_equal(l.null_count, empty ? 0 : 1);
            assert_int_equal(e.length, empty ? 0 : 6);
            assert_int_equal(e.null_count, empty ? 0 : 1);
            for (size_t i = 0; i < v.buffer_count; i++) {
                fl_arrow_buffer_t b = fl_arrow_batch_buffer(&v, i);
                assert_true(b.offset >= 0 && b.length >= 0);
                assert_true((uint64_t)(b.offset + b.length) <= v.body_len);
                assert_int_equal(b.offset % 8, 0);
            }
            /* trailing bytes after the message are not part of it */
            fl_buf_append(&buf, "junk", 4);
            assert_int_equal(fl_arrow_message_parse(buf.data, buf.len, &v, &err), 0);
            assert_int_equal(v.message_len, buf.len - 4);
        }
    }
    fl_buf_free(&buf);
}

/* Every prefix of a valid message is rejected (the body or metadata is cut)
 * — never read past. Each prefix is copied into its own exact-size heap
 * block so ASan sees any overread. */
static void test_parse_every_prefix(void **state) {
    (void)state;
    fl_buf_t buf;
    fl_buf_init(&buf);
    for (size_t f = 0; f < sizeof(fixture_names) / sizeof(fixture_names[0]); f++) {
        arrow_fixture(fixture_names[f], &buf);
        for (size_t len = 0; len < buf.len; len++) {
            uint8_t *copy = fl_malloc(len ? len : 1);
            memcpy(copy, buf.data, len);
            fl_arrow_batch_view_t v;
            fl_error_t err;
            fl_err_clear(&err);
            int rc = fl_arrow_message_parse(copy, len, &v, &err);
            if (rc == 0) fail_msg("%s: prefix %zu of %zu parsed", fixture_names[f], len, buf.len);
            assert_int_equal(rc, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
            assert_true(err.msg[0] != '\0');
            fl_free(copy);
        }
    }
    fl_buf_free(&buf);
}

/* Checks a view the parser accepted against its own promises. */
static void check_view(const fl_arrow_batch_view_t *v, const uint8_t *p, size_t len) {
    assert_true(v->message_len <= len);
    assert_true(v->body >= p && v->body + v->body_len <= p + len);
    for (size_t i = 0; i < v->node_count; i++) {
        fl_arrow_node_t n = fl_arrow_batch_node(v, i);
        assert_true(n.length >= 0 && n.null_count >= 0 && n.null_count <= n.length);
    }
    for (size_t i = 0; i < v->buffer_count; i++) {
        fl_arrow_buffer_t b = fl_arrow_batch_buffer(v, i);
        assert_true(b.offset >= 0 && b.length >= 0);
        assert_true((uint64_t)b.offset + (uint64_t)b.length <= v->body_len);
    }
}

/* Single-byte corruptions of every metadata byte (and a sample of body
 * bytes) with several values: error or a consistent view; decompression
 * and projection of whatever parses stay within bounds. */
static void test_parse_single_byte_corruptions(void **state) {
    (void)state;
    fl_datatype_t *types[ARROW_ALL_TYPES_COUNT];
    arrow_all_types(types);
    const fl_datatype_t *const *ctypes = (const fl_datatype_t *const *)types;
    static const uint8_t values[] = {0x00, 0x01, 0x07, 0x80, 0xFF, 0x7F, 0x10};
    fl_buf_t buf, out, proj;
    fl_buf_init(&buf);
    fl_buf_init(&out);
    fl_buf_init(&proj);
    size_t accepted = 0, rejected = 0;
    for (size_t f = 0; f < sizeof(fixture_names) / sizeof(fixture_names[0]); f++) {
        arrow_fixture(fixture_names[f], &buf);
        uint8_t *copy = fl_malloc(buf.len);
        for (size_t pos = 0; pos < buf.len; pos++) {
            /* body bytes only matter to decompression: sample them */
            fl_arrow_batch_view_t v0;
            fl_error_t err;
            assert_int_equal(fl_arrow_message_parse(buf.data, buf.len, &v0, &err), 0);
            if ((size_t)(v0.body - buf.data) <= pos && pos % 7 != 0) continue;
            for (size_t k = 0; k < sizeof(values); k++) {
                memcpy(copy, buf.data, buf.len);
                if (copy[pos] == values[k]) continue;
                copy[pos] = values[k];
                fl_arrow_batch_view_t v;
                if (fl_arrow_message_parse(copy, buf.len, &v, &err) != 0) {
                    assert_int_equal(err.code, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
                    rejected++;
                    continue;
                }
                accepted++;
                check_view(&v, copy, buf.len);
                for (size_t i = 0; i < v.buffer_count; i++) {
                    fl_buf_reset(&out);
                    (void)fl_arrow_buffer_get(&v, i, 1 << 20, &out, &err);
                }
                fl_buf_reset(&proj);
                const int32_t cols[] = {0, 7, 18, 19, 20};
                if (fl_arrow_project(copy, buf.len, ctypes, ARROW_ALL_TYPES_COUNT, cols, 5, &proj,
                                     &err) == 0) {
                    fl_arrow_batch_view_t pv;
                    assert_int_equal(fl_arrow_message_parse(proj.data, proj.len, &pv, &err), 0);
                    assert_int_equal(pv.node_count, 1 + 1 + 2 + 4 + 3);
                    assert_int_equal(pv.buffer_count, 2 + 3 + 5 + 8 + 6);
                }
            }
        }
        fl_free(copy);
    }
    print_message("single-byte corruptions: %zu rejected, %zu accepted\n", rejected, accepted);
    assert_true(rejected > 1000);
    fl_buf_free(&buf);
    fl_buf_free(&out);
    fl_buf_free(&proj);
    arrow_types_free(types, ARROW_ALL_TYPES_COUNT);
}

/* Hand-made bad prefixes and headers, each with its precise complaint. */
static void test_parse_rejections(void **state) {
    (void)state;
    fl_arrow_batch_view_t v;
    fl_error_t err;
    const uint8_t not_continuation[16] = {0x10, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF};
    assert_int_equal(fl_arrow_message_parse(not_continuation, 16, &v, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_non_null(strstr(err.msg, "continuation"));
    const uint8_t eos[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
    assert_int_equal(fl_arrow_message_parse(eos, 8, &v, &err), FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_non_null(strstr(err.msg, "end-of-stream"));
    const uint8_t negative[16] = {0xFF, 0xFF, 0xFF, 0xFF, 0xF0, 0xFF, 0xFF, 0xFF};
    assert_int_equal(fl_arrow_message_parse(negative, 16, &v, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_non_null(strstr(err.msg, "metadata length"));

    /* a pyarrow Schema message is not a RecordBatch */
    fl_buf_t buf;
    fl_buf_init(&buf);
    fl_arrow_writer_t w;
    fl_arrow_writer_init(&w, NULL);
    assert_int_equal(fl_arrow_writer_finish(&w, 0, &buf, &err), 0);
    assert_int_equal(fl_arrow_message_parse(buf.data, buf.len, &v, &err), 0);
    assert_int_equal(v.node_count, 0);
    /* header_type byte: find it by flipping until the parser names it */
    int saw_header_type = 0;
    for (size_t i = 8; i < buf.len; i++) {
        if (buf.data[i] != 3) continue;
        buf.data[i] = 1;
        if (fl_arrow_message_parse(buf.data, buf.len, &v, &err) != 0 &&
            strstr(err.msg, "not RecordBatch"))
            saw_header_type = 1;
        buf.data[i] = 3;
    }
    assert_true(saw_header_type);
    fl_arrow_writer_reset(&w);
    fl_buf_free(&buf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_shape_too_deep),
        cmocka_unit_test(test_parse_fixtures),
        cmocka_unit_test(test_parse_every_prefix),
        cmocka_unit_test(test_parse_single_byte_corruptions),
        cmocka_unit_test(test_parse_rejections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
