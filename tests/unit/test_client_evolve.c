/*
 * test_client_evolve.c — log batches of another schema of the table read
 * through a newer table handle (client_batch.c with a schema map,
 * client_take.c's NULL columns): after ADD COLUMN the old batch's rows
 * show NULL in the new columns (nested ones included, exported through
 * the Arrow C Data Interface), with the whole old schema in the message
 * or only the projected columns it has; after a DROP COLUMN (a fluss-c
 * extension) the remaining columns are found by id, not position; a
 * filter on a column the batch lacks sees NULLs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "../../src/client/client_filter.h"
#include "record_builder.h"
#include "test_client_util.h"
#include "types_schema_map.h"

/* A table whose columns have the given ids (the ids ALTER TABLE keeps). */
static fluss_table_t *table(const char *schema, const int32_t *ids) {
    fluss_table_t *t = test_table(schema, NULL, 1, NULL);
    assert_non_null(t);
    for (size_t i = 0; i < t->desc.schema.column_count; i++) t->desc.schema.columns[i].id = ids[i];
    return t;
}

/* A batch of 3 rows of t: every column set from texts[row][col]. */
static void build(fluss_table_t *t, const char *const texts[3][4], fl_buf_t *out) {
    fl_record_builder_options_t o = {t->schema_id, FL_ARROW_CODEC_NONE, 0};
    fl_record_builder_t b;
    fl_record_builder_init(&b, &t->desc.schema, &o);
    fl_record_builder_set_nested(&b, FL_ROW_COMPACTED);
    fluss_row_t *r = fluss_row_new(t);
    for (int row = 0; row < 3; row++) {
        fluss_row_clear(r);
        for (size_t c = 0; c < t->desc.schema.column_count; c++)
            assert_int_equal(fluss_row_set_text(r, c, texts[row][c], NULL), 0);
        fl_record_builder_append(&b, &r->row);
    }
    fluss_row_destroy(r);
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_record_builder_finish(&b, -1, -1, out, &err), 0);
    fl_record_builder_free(&b);
}

/* JSON text of every presented cell of b, rows joined by ';'. */
static void texts_of(fluss_record_batch_t *b, char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    for (size_t r = 0; r < fluss_record_batch_row_count(b); r++) {
        for (size_t c = 0; c < fluss_record_batch_column_count(b); c++) {
            char v[64];
            fluss_record_batch_value_text(b, r, c, FLUSS_TEXT_JSON, v, sizeof(v));
            n += (size_t)snprintf(out + n, cap - n, "%s%s", c ? "," : "", v);
        }
        n += (size_t)snprintf(out + n, cap - n, ";");
    }
}

static const char *const OLD_ROWS[3][4] = {{"1", "a"}, {"2", NULL}, {"3", "c"}};

static void test_added_columns(void **state) {
    (void)state;
    const int32_t old_ids[] = {0, 1}, new_ids[] = {0, 1, 2, 3};
    fluss_table_t *old = table("id INT, v STRING", old_ids);
    fluss_table_t *now = table("id INT, v STRING, x BIGINT, t ARRAY<STRING>", new_ids);
    fl_buf_t bytes;
    fl_buf_init(&bytes);
    build(old, OLD_ROWS, &bytes);
    fl_schema_map_t map;
    fl_schema_map_init(&map, &old->desc.schema, &now->desc.schema);
    fl_batch_schema_t evo = {&old->desc.schema, &map, true};
    int32_t all[4] = {0, 1, 2, 3}, shown[3] = {3, 2, 0};
    fluss_record_batch_t *b = NULL;
    fl_error_t err;
    fl_err_clear(&err);
    /* the whole old schema in the message */
    assert_int_equal(fl_record_batch_decode_filtered(now, bytes.data, bytes.len, 0, all, 4, shown, 3,
                                                     0, true, NULL, &evo, &b, &err),
                     0);
    char text[256];
    texts_of(b, text, sizeof(text));
    assert_string_equal(text, "null,null,1;null,null,2;null,null,3;");
    struct ArrowSchema s;
    struct ArrowArray a;
    assert_int_equal(fluss_record_batch_to_arrow(b, &s, &a, NULL), 0);
    assert_int_equal(a.children[0]->null_count, 3);
    a.release(&a);
    s.release(&s);
    fluss_record_batch_free(b);
    /* projection pushed down: the message holds the projected columns it has */
    int32_t fetched[3] = {0, 2, 3};
    evo.whole = false;
    fl_buf_t proj;
    fl_buf_init(&proj);
    /* what a server sends for projection [0] of the old batch: rebuild it with id alone */
    const int32_t id_only[] = {0};
    fluss_table_t *old_id = table("id INT", id_only);
    const char *const id_rows[3][4] = {{"1"}, {"2"}, {"3"}};
    build(old_id, id_rows, &proj);
    assert_int_equal(fl_record_batch_decode_filtered(now, proj.data, proj.len, 0, fetched, 3, shown,
                                                     3, 0, false, NULL, &evo, &b, &err),
                     0);
    texts_of(b, text, sizeof(text));
    assert_string_equal(text, "null,null,1;null,null,2;null,null,3;");
    fluss_record_batch_free(b);
    /* a filter on a column the batch lacks sees NULL */
    fl_cfilter_t f;
    memset(&f, 0, sizeof(f));
    assert_int_equal(fl_cfilter_parse(now, "x IS NULL AND v IS NOT NULL", &f, &err), 0);
    evo.whole = true;
    assert_int_equal(fl_record_batch_decode_filtered(now, bytes.data, bytes.len, 0, all, 4, all, 4,
                                                     0, true, &f, &evo, &b, &err),
                     0);
    texts_of(b, text, sizeof(text));
    assert_string_equal(text, "1,\"a\",null,null;3,\"c\",null,null;");
    fluss_record_batch_free(b);
    fl_cfilter_free(&f);
    fl_cfilter_t g;
    memset(&g, 0, sizeof(g));
    assert_int_equal(fl_cfilter_parse(now, "x > 0", &g, &err), 0);
    assert_int_equal(fl_record_batch_decode_filtered(now, bytes.data, bytes.len, 0, all, 4, all, 4,
                                                     0, true, &g, &evo, &b, &err),
                     0);
    assert_null(b);
    fl_cfilter_free(&g);
    fl_schema_map_free(&map);
    fl_buf_free(&bytes);
    fl_buf_free(&proj);
    fluss_table_close(old);
    fluss_table_close(old_id);
    fluss_table_close(now);
}

static void test_dropped_column(void **state) {
    (void)state;
    /* the batch has a, b, c (ids 0, 1, 2); the table now a, c, d (ids 0, 2, 3) */
    const int32_t old_ids[] = {0, 1, 2}, new_ids[] = {0, 2, 3};
    fluss_table_t *old = table("a INT, b STRING, c STRING", old_ids);
    fluss_table_t *now = table("a INT, c STRING, d INT", new_ids);
    const char *const rows[3][4] = {{"1", "b1", "c1"}, {"2", "b2", NULL}, {"3", NULL, "c3"}};
    fl_buf_t bytes;
    fl_buf_init(&bytes);
    build(old, rows, &bytes);
    fl_schema_map_t map;
    fl_schema_map_init(&map, &old->desc.schema, &now->desc.schema);
    fl_batch_schema_t evo = {&old->desc.schema, &map, true};
    int32_t all[3] = {0, 1, 2};
    fluss_record_batch_t *b = NULL;
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_record_batch_decode_filtered(now, bytes.data, bytes.len, 0, all, 3, all, 3,
                                                     0, true, NULL, &evo, &b, &err),
                     0);
    char text[256];
    texts_of(b, text, sizeof(text));
    assert_string_equal(text, "1,\"c1\",null;2,null,null;3,\"c3\",null;");
    fluss_record_batch_free(b);
    fl_schema_map_free(&map);
    fl_buf_free(&bytes);
    fluss_table_close(old);
    fluss_table_close(now);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_added_columns),
        cmocka_unit_test(test_dropped_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
