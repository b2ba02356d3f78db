/*
 * test_arrow_project.c — FETCH_LOG projection pushdown on Arrow bodies
 * (fl_arrow_project, protocol.md §3.7): for every codec and a set of
 * projections over every Fluss type, our projected message has exactly the
 * nodes, buffers and body bytes of pyarrow's own message of the selected
 * columns, and pyarrow reads it back with the projected schema to the same
 * values; 64-byte-aligned bodies (arrow-rs) keep their alignment; bad
 * projections and batches that do not match the schema are refused and
 * leave the output untouched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_arrow_util.h"

typedef struct project_fixture {
    fl_datatype_t *types[ARROW_ALL_TYPES_COUNT];
    fl_buf_t in, out, want;
} project_fixture_t;

static int setup(void **state) {
    project_fixture_t *f = calloc(1, sizeof(*f));
    arrow_all_types(f->types);
    fl_buf_init(&f->in);
    fl_buf_init(&f->out);
    fl_buf_init(&f->want);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    project_fixture_t *f = *state;
    arrow_types_free(f->types, ARROW_ALL_TYPES_COUNT);
    fl_buf_free(&f->in);
    fl_buf_free(&f->out);
    fl_buf_free(&f->want);
    free(f);
    return 0;
}

static const fl_datatype_t *const *ctypes(project_fixture_t *f) {
    return (const fl_datatype_t *const *)f->types;
}

/* Same rows, nodes, buffers and body bytes. */
static void assert_same_batch(const fl_buf_t *got, const fl_buf_t *want, const char *what) {
    fl_arrow_batch_view_t g, w;
    fl_error_t err;
    if (fl_arrow_message_parse(got->data, got->len, &g, &err)) fail_msg("%s: %s", what, err.msg);
    assert_int_equal(fl_arrow_message_parse(want->data, want->len, &w, &err), 0);
    assert_int_equal(g.message_len, got->len);
    assert_int_equal(g.length, w.length);
    assert_int_equal(g.codec, w.codec);
    assert_int_equal(g.node_count, w.node_count);
    assert_int_equal(g.buffer_count, w.buffer_count);
    for (size_t i = 0; i < g.node_count; i++) {
        fl_arrow_node_t a = fl_arrow_batch_node(&g, i), b = fl_arrow_batch_node(&w, i);
        assert_int_equal(a.length, b.length);
        assert_int_equal(a.null_count, b.null_count);
    }
    for (size_t i = 0; i < g.buffer_count; i++) {
        fl_arrow_buffer_t a = fl_arrow_batch_buffer(&g, i), b = fl_arrow_batch_buffer(&w, i);
        if (a.offset != b.offset || a.length != b.length)
            fail_msg("%s: buffer %zu is [%lld,+%lld), pyarrow [%lld,+%lld)", what, i,
                     (long long)a.offset, (long long)a.length, (long long)b.offset,
                     (long long)b.length);
    }
    assert_int_equal(g.body_len, w.body_len);
    assert_memory_equal(g.body, w.body, g.body_len);
}

static void test_project_matches_pyarrow(void **state) {
    project_fixture_t *f = *state;
    int python_ok = 0;
    for (int c = 0; c < 3; c++) {
        char name[96], want_name[96];
        snprintf(name, sizeof(name), "all_types_%s.arrow", arrow_codec_names[c]);
        arrow_fixture(name, &f->in);
        for (int k = 0; k < ARROW_PROJECTION_COUNT; k++) {
            const int32_t *cols = &arrow_projections[k][1];
            size_t n = (size_t)arrow_projections[k][0];
            fl_error_t err;
            fl_buf_reset(&f->out);
            int rc = fl_arrow_project(f->in.data, f->in.len, ctypes(f), ARROW_ALL_TYPES_COUNT, cols,
                                      n, &f->out, &err);
            if (rc) fail_msg("%s projection %d: %s", name, k, err.msg);
            snprintf(want_name, sizeof(want_name), "all_types_%s_p%d.arrow", arrow_codec_names[c], k);
            arrow_fixture(want_name, &f->want);
            assert_same_batch(&f->out, &f->want, want_name);

            fl_buf_t spec;
            fl_buf_init(&spec);
            const char *head = "{\"fields\":";
            fl_buf_append(&spec, head, strlen(head));
            arrow_fields_json(cols, n, &spec);
            char tail[256];
            snprintf(tail, sizeof(tail), ",\"expected\":\"%s/%s\",\"select\":[", ARROW_DATA_DIR,
                     want_name);
            fl_buf_append(&spec, tail, strlen(tail));
            for (size_t i = 0; i < n; i++) {
                char num[16];
                snprintf(num, sizeof(num), "%s%d", i ? "," : "", cols[i]);
                fl_buf_append(&spec, num, strlen(num));
            }
            fl_buf_append(&spec, "]}", 3);
            rc = arrow_python_check((const char *)spec.data, f->out.data, f->out.len);
            fl_buf_free(&spec);
            if (rc) fail_msg("pyarrow rejects our projection %s", want_name);
            python_ok++;
        }
    }
    print_message("pyarrow read %d projections back\n", python_ok);
}

static void test_project_empty_batches(void **state) {
    project_fixture_t *f = *state;
    for (int c = 0; c < 3; c++) {
        char name[96];
        snprintf(name, sizeof(name), "all_types_empty_%s.arrow", arrow_codec_names[c]);
        arrow_fixture(name, &f->in);
        const int32_t cols[] = {7, 18, 19, 20};
        fl_error_t err;
        fl_buf_reset(&f->out);
        assert_int_equal(fl_arrow_project(f->in.data, f->in.len, ctypes(f), ARROW_ALL_TYPES_COUNT,
                                          cols, 4, &f->out, &err),
                         0);
        fl_arrow_batch_view_t v;
        assert_int_equal(fl_arrow_message_parse(f->out.data, f->out.len, &v, &err), 0);
        assert_int_equal(v.length, 0);
        assert_int_equal(v.node_count, 1 + 2 + 4 + 3);
        assert_int_equal(v.buffer_count, 3 + 5 + 8 + 6);
        fl_buf_t spec;
        fl_buf_init(&spec);
        fl_buf_append(&spec, "{\"fields\":", 10);
        arrow_fields_json(cols, 4, &spec);
        const char *tail = ",\"values\":{\"s\":[],\"l\":[],\"m\":[],\"st\":[]}}";
        fl_buf_append(&spec, tail, strlen(tail) + 1);
        int rc = arrow_python_check((const char *)spec.data, f->out.data, f->out.len);
        fl_buf_free(&spec);
        assert_true(rc <= 0);
    }
}

static void test_project_bad_projection(void **state) {
    project_fixture_t *f = *state;
    arrow_fixture("all_types_none.arrow", &f->in);
    fl_buf_reset(&f->out);
    fl_buf_append(&f->out, "keep", 4);
    fl_error_t err;
    const int32_t dup[] = {1, 1}, desc[] = {3, 2}, neg[] = {-1}, big[] = {21};
    assert_int_equal(fl_arrow_project(f->in.data, f->in.len, ctypes(f), ARROW_ALL_TYPES_COUNT, dup,
                                      2, &f->out, &err),
                     FLUSS_ERR_INVALID_COLUMN_PROJECTION);
    assert_int_equal(fl_arrow_project(f->in.data, f->in.len, ctypes(f), ARROW_ALL_TYPES_COUNT, desc,
                                      2, &f->out, &err),
                     FLUSS_ERR_INVALID_COLUMN_PROJECTION);
    assert_int_equal(fl_arrow_project(f->in.data, f->in.len, ctypes(f), ARROW_ALL_TYPES_COUNT, neg,
                                      1, &f->out, &err),
                     FLUSS_ERR_INVALID_COLUMN_PROJECTION);
    assert_int_equal(fl_arrow_project(f->in.data, f->in.len, ctypes(f), ARROW_ALL_TYPES_COUNT, big,
                                      1, &f->out, &err),
                     FLUSS_ERR_INVALID_COLUMN_PROJECTION);
    assert_int_equal(fl_arrow_project(f->in.data, f->in.len, ctypes(f), ARROW_ALL_TYPES_COUNT, dup,
                                      0, &f->out, &err),
                     FLUSS_ERR_INVALID_COLUMN_PROJECTION);
    assert_int_equal(f->out.len, 4);
}

static void test_project_schema_mismatch(void **state) {
    project_fixture_t *f = *state;
    arrow_fixture("all_types_zstd.arrow", &f->in);
    fl_buf_reset(&f->out);
    fl_buf_append(&f->out, "keep", 4);
    fl_error_t err;
    const int32_t cols[] = {0};
    /* one column short: buffers left over */
    assert_int_equal(fl_arrow_project(f->in.data, f->in.len, ctypes(f), ARROW_ALL_TYPES_COUNT - 1,
                                      cols, 1, &f->out, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_non_null(strstr(err.msg, "need"));
    /* STRING where the batch has INT: one buffer too many overall */
    fl_datatype_t *saved = f->types[2];
    f->types[2] = fl_datatype_new(FL_TYPE_STRING);
    assert_int_equal(fl_arrow_project(f->in.data, f->in.len, ctypes(f), ARROW_ALL_TYPES_COUNT, cols,
                                      1, &f->out, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    fl_datatype_destroy(f->types[2]);
    /* ARRAY<STRING> in place of BIGINT: nodes shift, a top-level length
     * then disagrees with the batch */
    f->types[2] = saved;
    saved = f->types[3];
    f->types[3] = fl_datatype_new(FL_TYPE_ARRAY);
    f->types[3]->element = fl_datatype_new(FL_TYPE_INTEGER);
    assert_int_equal(fl_arrow_project(f->in.data, f->in.len, ctypes(f), ARROW_ALL_TYPES_COUNT, cols,
                                      1, &f->out, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    fl_datatype_destroy(f->types[3]);
    f->types[3] = saved;
    /* one column too many: nodes run out */
    fl_datatype_t *more[ARROW_ALL_TYPES_COUNT + 1];
    memcpy(more, f->types, sizeof(f->types));
    more[ARROW_ALL_TYPES_COUNT] = f->types[0];
    assert_int_equal(fl_arrow_project(f->in.data, f->in.len, (const fl_datatype_t *const *)more,
                                      ARROW_ALL_TYPES_COUNT + 1, cols, 1, &f->out, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_non_null(strstr(err.msg, "run out"));
    assert_int_equal(f->out.len, 4);
}

/* Buffers out of body order have no padded length: refused. */
static void test_project_unordered_buffers(void **state) {
    project_fixture_t *f = *state;
    arrow_fixture("all_types_none.arrow", &f->in);
    fl_arrow_batch_view_t v;
    fl_error_t err;
    assert_int_equal(fl_arrow_message_parse(f->in.data, f->in.len, &v, &err), 0);
    /* swap buffers 2 and 3 (i16 validity and values) in place */
    uint8_t *raw = f->in.data + (v.buffers_raw - f->in.data);
    uint8_t tmp[16];
    memcpy(tmp, raw + 2 * 16, 16);
    memcpy(raw + 2 * 16, raw + 3 * 16, 16);
    memcpy(raw + 3 * 16, tmp, 16);
    assert_int_equal(fl_arrow_message_parse(f->in.data, f->in.len, &v, &err), 0);
    const int32_t cols[] = {1};
    fl_buf_reset(&f->out);
    assert_int_equal(fl_arrow_project(f->in.data, f->in.len, ctypes(f), ARROW_ALL_TYPES_COUNT, cols,
                                      1, &f->out, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_non_null(strstr(err.msg, "overlaps"));
    assert_int_equal(f->out.len, 0);
}

/* arrow-rs aligns buffers to 64: the projection keeps each buffer's padded
 * length, so 64-byte offsets stay 64-byte offsets. */
static void test_project_keeps_64_byte_alignment(void **state) {
    project_fixture_t *f = *state;
    fl_arrow_write_options_t opts = {FL_ARROW_CODEC_NONE, 0, 64};
    fl_arrow_writer_t w;
    fl_arrow_writer_init(&w, &opts);
    fl_arrow_column_t a, s, d;
    fl_arrow_column_init(&a, FL_ARROW_COL_INT32);
    fl_arrow_column_init(&s, FL_ARROW_COL_UTF8);
    fl_arrow_column_init(&d, FL_ARROW_COL_DOUBLE);
    fl_error_t err;
    for (int i = 0; i < 3; i++) {
        fl_arrow_column_append_int(&a, i * 10);
        assert_int_equal(fl_arrow_column_append_bytes(&s, "abc", (size_t)i, &err), 0);
        if (i == 1)
            fl_arrow_column_append_null(&d);
        else
            fl_arrow_column_append_double(&d, i + 0.5);
    }
    assert_int_equal(fl_arrow_column_write(&a, &w, &err), 0);
    assert_int_equal(fl_arrow_column_write(&s, &w, &err), 0);
    assert_int_equal(fl_arrow_column_write(&d, &w, &err), 0);
    fl_buf_reset(&f->in);
    assert_int_equal(fl_arrow_writer_finish(&w, 3, &f->in, &err), 0);

    fl_datatype_t *types[3] = {fl_datatype_new(FL_TYPE_INTEGER), fl_datatype_new(FL_TYPE_STRING),
                               fl_datatype_new(FL_TYPE_DOUBLE)};
    const int32_t cols[] = {1, 2};
    fl_buf_reset(&f->out);
    assert_int_equal(fl_arrow_project(f->in.data, f->in.len, (const fl_datatype_t *const *)types, 3,
                                      cols, 2, &f->out, &err),
                     0);
    fl_arrow_batch_view_t v;
    assert_int_equal(fl_arrow_message_parse(f->out.data, f->out.len, &v, &err), 0);
    assert_int_equal(v.buffer_count, 5);
    for (size_t i = 0; i < v.buffer_count; i++)
        assert_int_equal(fl_arrow_batch_buffer(&v, i).offset % 64, 0);
    const char *spec = "{\"fields\":[[\"s\",\"utf8\"],[\"d\",\"float64\"]],"
                       "\"values\":{\"s\":[\"\",\"a\",\"ab\"],\"d\":[0.5,null,2.5]}}";
    int rc = arrow_python_check(spec, f->out.data, f->out.len);
    assert_true(rc <= 0);
    arrow_types_free(types, 3);
    fl_arrow_column_reset(&a);
    fl_arrow_column_reset(&s);
    fl_arrow_column_reset(&d);
    fl_arrow_writer_reset(&w);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_project_matches_pyarrow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_project_empty_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_project_bad_projection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_project_schema_mismatch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_project_unordered_buffers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_project_keeps_64_byte_alignment, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
