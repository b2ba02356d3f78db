/*
 * test_tier_nested.c — nested columns through the lake tier and back:
 * rows with ARRAY, MAP and ROW values (NULL, empty, NULL elements, NULL
 * fields, lists of rows of lists) in ARROW, COMPACTED and INDEXED batches,
 * and rows one at a time as a PK bucket's KV image gives them (either kv
 * format), are tiered (tier_writer.h with tier_nested.h's shredding), the
 * Parquet file read back with our reader, each nested column assembled
 * (tier_assemble.h) and compared value for value with the ARROW batch's
 * own decoding; the levels' shape in the file (max levels, the layout's
 * node names and ids), the manifest metrics (no bounds inside lists and
 * maps), and the refusals: NULL where NOT NULL, a NULL map key, a file
 * whose levels do not fit the type.
 */
#define _GNU_SOURCE /* nftw (test_tmpdir.h) */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "arrow_decode.h"
#include "lake_parquet_reader.h"
#include "record_batch.h"
#include "record_builder.h"
#include "record_row_builder.h"
#include "record_rows.h"
#include "test_tmpdir.h"
#include "tier_assemble.h"
#include "tier_nested.h"
#include "tier_writer.h"
#include "types_row_format.h"
#include "types_row_nested.h"
#include "types_schema.h"

enum { C_ID, C_TAGS, C_M, C_R, C_NUMS, NCOL };
static const char *const NAMES[NCOL] = {"id", "tags", "m", "r", "nums"};
static const char *const TYPES[NCOL] = {
    "INT NOT NULL", "ARRAY<STRING>", "MAP<STRING, BIGINT>",
    "ROW<x INT, inner ARRAY<ROW<q BIGINT, w STRING>>, d DECIMAL(20, 3)>",
    "ARRAY<ARRAY<INT NOT NULL>>"};
#define ROWS 300

static void schema_of(fl_schema_t *s) {
    memset(s, 0, sizeof(*s));
    for (size_t k = 0; k < NCOL; k++) {
        const char *p = TYPES[k];
        fl_datatype_t *t;
        fl_error_t err;
        if (fl_datatype_parse(&p, &t, &err)) fail_msg("%s: %s", TYPES[k], err.msg);
        fl_schema_add_column(s, NAMES[k], t, NULL);
    }
    fl_schema_assign_ids(s);
}

/* Field ids in tier_nested.h's pre-order, numbered as they come, then
 * the system columns. */
static size_t ids_of(const fl_schema_t *s, int32_t *ids) {
    size_t n = fl_tier_field_id_count(s);
    for (size_t i = 0; i < n; i++) ids[i] = (int32_t)(i + 1);
    return n;
}

static void set_str(fl_row_t *row, size_t col, const char *s) {
    fl_row_set_bytes(row, col, s, strlen(s));
}

static void set_encoded(fl_row_t *row, size_t col, const fl_buf_t *b) {
    fl_row_set_bytes(row, col, b->data ? b->data : (const uint8_t *)"", b->len);
}

/* Row r with nested values encoded in fmt. */
static void sample_row(int r, fl_row_format_t fmt, const fl_schema_t *s, fl_row_t *row) {
    fl_row_reset(row, NCOL);
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t err;
    int shape = r % 4; /* 0, 1: values; 2: empty; 3: NULL */
    row->cells[C_ID].is_null = false;
    row->cells[C_ID].i = r;
    const fl_datatype_t *tags = s->columns[C_TAGS].type, *m = s->columns[C_M].type,
                        *rt = s->columns[C_R].type, *nums = s->columns[C_NUMS].type;
    if (shape != 3) {
        /* tags: [t<r>, NULL, long] cut to 1 + r % 3, empty for shape 2 */
        fl_row_t e;
        fl_row_init(&e, 3);
        size_t n = shape == 2 ? 0 : 1 + (size_t)r % 3;
        char t0[32];
        snprintf(t0, sizeof(t0), "t%d", r);
        set_str(&e, 0, t0);
        set_str(&e, 2, "a string longer than seven bytes");
        fl_buf_reset(&b);
        fl_nested_array_encode(&e, n, tags->element, &b);
        set_encoded(row, C_TAGS, &b);
        /* m: {k<r>: r, "z": NULL} cut to 1 + r % 2 */
        fl_row_t keys, vals;
        fl_row_init(&keys, 2);
        fl_row_init(&vals, 2);
        set_str(&keys, 0, t0);
        set_str(&keys, 1, "z");
        vals.cells[0].is_null = false;
        vals.cells[0].i = r * 1000;
        fl_buf_reset(&b);
        fl_nested_map_encode(&keys, &vals, shape == 2 ? 0 : 1 + (size_t)r % 2, m, &b);
        set_encoded(row, C_M, &b);
        /* r: (x, inner [(q, w), NULL, (NULL, NULL)] cut, d) */
        const fl_datatype_t *inner = rt->fields[1].type, *qw = inner->element;
        const fl_datatype_t *qw_types[2] = {qw->fields[0].type, qw->fields[1].type};
        fl_row_t el, f;
        fl_row_init(&el, 3);
        fl_row_init(&f, 2);
        fl_buf_t rb;
        fl_buf_init(&rb);
        for (int k = 0; k < 3; k += 2) {
            fl_row_reset(&f, 2);
            if (k == 0) {
                f.cells[0].is_null = false;
                f.cells[0].i = -r;
                set_str(&f, 1, "w");
            }
            fl_buf_reset(&rb);
            assert_int_equal(fl_row_encode(fmt, &f, qw_types, 2, &rb, &err), 0);
            set_encoded(&el, (size_t)k, &rb);
        }
        fl_buf_reset(&b);
        fl_nested_array_encode(&el, shape == 2 ? 0 : 1 + (size_t)r % 3, inner->element, &b);
        fl_row_t rr;
        fl_row_init(&rr, 3);
        if (shape != 2) {
            rr.cells[0].is_null = false;
            rr.cells[0].i = r;
            rr.cells[2].is_null = false;
            rr.cells[2].dec = (__int128)r * 1000 + 125;
        }
        set_encoded(&rr, 1, &b);
        const fl_datatype_t *rtypes[3] = {rt->fields[0].type, rt->fields[1].type,
                                          rt->fields[2].type};
        fl_buf_reset(&rb);
        assert_int_equal(fl_row_encode(fmt, &rr, rtypes, 3, &rb, &err), 0);
        set_encoded(row, C_R, &rb);
        /* nums: [[r, r + 1], [], NULL-free inner] cut */
        fl_row_t in, out;
        fl_row_init(&in, 2);
        fl_row_init(&out, 3);
        in.cells[0].is_null = in.cells[1].is_null = false;
        in.cells[0].i = r;
        in.cells[1].i = r + 1;
        fl_buf_reset(&rb);
        fl_nested_array_encode(&in, 2, nums->element->element, &rb);
        set_encoded(&out, 0, &rb);
        fl_buf_reset(&rb);
        fl_nested_array_encode(&in, 0, nums->element->element, &rb);
        set_encoded(&out, 1, &rb);
        fl_buf_reset(&b);
        fl_nested_array_encode(&out, shape == 2 ? 0 : 1 + (size_t)r % 3, nums->element, &b);
        set_encoded(row, C_NUMS, &b);
        fl_buf_free(&rb);
        fl_row_free(&e);
        fl_row_free(&keys);
        fl_row_free(&vals);
        fl_row_free(&el);
        fl_row_free(&f);
        fl_row_free(&rr);
        fl_row_free(&in);
        fl_row_free(&out);
    }
    fl_buf_free(&b);
}

static void build_batch(fl_buf_t *out, fl_log_format_t fmt, const fl_schema_t *s, int r0, int n,
                        int64_t base) {
    fl_row_t row;
    fl_row_init(&row, NCOL);
    size_t at = out->len;
    fl_error_t err;
    if (fmt == FL_LOG_FORMAT_ARROW) {
        fl_record_builder_t b;
        fl_record_builder_options_t o = {.schema_id = 1, .codec = FL_ARROW_CODEC_NONE};
        fl_record_builder_init(&b, s, &o);
        fl_record_builder_set_nested(&b, FL_ROW_COMPACTED);
        for (int r = r0; r < r0 + n; r++) {
            sample_row(r, FL_ROW_COMPACTED, s, &row);
            fl_record_builder_append(&b, &row);
        }
        assert_int_equal(fl_record_builder_finish(&b, -1, -1, out, &err), 0);
        fl_record_builder_free(&b);
    } else {
        fl_row_format_t rf = fmt == FL_LOG_FORMAT_INDEXED ? FL_ROW_INDEXED : FL_ROW_COMPACTED;
        const fl_datatype_t *types[NCOL];
        for (size_t k = 0; k < NCOL; k++) types[k] = s->columns[k].type;
        fl_row_builder_t b;
        fl_row_builder_init(&b, rf, types, NCOL, 1, false);
        for (int r = r0; r < r0 + n; r++) {
            sample_row(r, rf, s, &row);
            if (fl_row_builder_append(&b, &row, FL_CHANGE_APPEND_ONLY, &err))
                fail_msg("%s", err.msg);
        }
        fl_row_builder_finish(&b, -1, -1, out);
        fl_row_builder_free(&b);
    }
    fl_batch_set_base_offset(out->data + at, base);
    fl_batch_set_commit_timestamp(out->data + at, 1700000000000);
    fl_row_free(&row);
}

/* ---- printing decoded Arrow values, the comparison's common form ---- */

static void print(fl_buf_t *o, const fl_arrow_array_t *a, const fl_datatype_t *t, int64_t i) {
    char tmp[96];
    if (fl_arrow_array_is_null(a, i)) {
        fl_buf_append(o, "null", 4);
        return;
    }
    int64_t s, e;
    switch (t->root) {
    case FL_TYPE_ARRAY:
        fl_arrow_array_child_range(a, i, &s, &e);
        fl_buf_put_u8(o, '[');
        for (int64_t k = s; k < e; k++) {
            print(o, &a->children[0], t->element, k);
            fl_buf_put_u8(o, ',');
        }
        fl_buf_put_u8(o, ']');
        return;
    case FL_TYPE_MAP:
        fl_arrow_array_child_range(a, i, &s, &e);
        fl_buf_put_u8(o, '{');
        for (int64_t k = s; k < e; k++) {
            print(o, &a->children[0].children[0], t->key, k);
            fl_buf_put_u8(o, ':');
            print(o, &a->children[0].children[1], t->value, k);
            fl_buf_put_u8(o, ',');
        }
        fl_buf_put_u8(o, '}');
        return;
    case FL_TYPE_ROW:
        fl_buf_put_u8(o, '(');
        for (size_t f = 0; f < t->field_count; f++) {
            print(o, &a->children[f], t->fields[f].type, i);
            fl_buf_put_u8(o, ',');
        }
        fl_buf_put_u8(o, ')');
        return;
    case FL_TYPE_STRING:
    case FL_TYPE_CHAR:
    case FL_TYPE_BYTES:
    case FL_TYPE_BINARY: {
        size_t len;
        const uint8_t *p = fl_arrow_array_bytes(a, i, &len);
        fl_buf_put_u8(o, '"');
        fl_buf_append(o, p, len);
        fl_buf_put_u8(o, '"');
        return;
    }
    case FL_TYPE_DECIMAL: {
        __int128 v = fl_arrow_array_decimal(a, i);
        snprintf(tmp, sizeof(tmp), "%lld:%llu", (long long)(v >> 64),
                 (unsigned long long)(uint64_t)v);
        break;
    }
    default: snprintf(tmp, sizeof(tmp), "%lld", (long long)fl_arrow_array_int(a, i)); break;
    }
    fl_buf_append(o, tmp, strlen(tmp));
}

/* Every row of column k, one per line. */
static void print_column(fl_buf_t *o, const fl_arrow_array_t *a, const fl_datatype_t *t,
                         int64_t rows) {
    for (int64_t i = 0; i < rows; i++) {
        print(o, a, t, i);
        fl_buf_put_u8(o, '\n');
    }
}

/* What the ARROW batch of all rows decodes to, per nested column. */
static void expected(const fl_schema_t *s, fl_buf_t *want) {
    fl_buf_t batch;
    fl_buf_init(&batch);
    build_batch(&batch, FL_LOG_FORMAT_ARROW, s, 0, ROWS, 0);
    fl_batch_view_t v;
    fl_error_t err;
    assert_int_equal(fl_batch_parse(batch.data, batch.len, &v, &err), 0);
    const fl_datatype_t *types[NCOL];
    for (size_t k = 0; k < NCOL; k++) types[k] = s->columns[k].type;
    fl_batch_rows_t it;
    assert_int_equal(fl_batch_rows_open(&it, &v, FL_LOG_FORMAT_ARROW, types, NCOL, &err), 0);
    for (size_t k = C_TAGS; k < NCOL; k++) print_column(&want[k], &it.cols[k], types[k], ROWS);
    fl_batch_rows_close(&it);
    fl_buf_free(&batch);
}

/* The files' rows, per nested column, assembled back. */
static void read_back(const fl_tier_writer_result_t *res, const fl_schema_t *s,
                      const int32_t *ids, fl_buf_t *got) {
    size_t at[NCOL];
    for (size_t k = 0; k < NCOL; k++) at[k] = fl_tier_field_id_index(s, k);
    fl_error_t err;
    for (size_t f = 0; f < res->n_files; f++) {
        fl_pq_reader_t *r;
        assert_int_equal(fl_pq_reader_open_file(res->files[f].path, 1 << 30, &r, &err), 0);
        for (size_t g = 0; g < fl_pq_reader_meta(r)->n_row_groups; g++) {
            size_t rows = (size_t)fl_pq_reader_meta(r)->row_groups[g].num_rows;
            for (size_t k = C_TAGS; k < NCOL; k++) {
                const fl_datatype_t *t = s->columns[k].type;
                int e = fl_pq_reader_element_of(r, ids[at[k]]);
                assert_true(e > 0);
                size_t first, n;
                fl_pq_reader_element_columns(r, (size_t)e, &first, &n);
                fl_tier_shape_t sh;
                fl_tier_nested_shape(t, &sh);
                assert_int_equal(n, sh.leaves);
                fl_pq_values_t *leaves = calloc(n, sizeof(*leaves));
                for (size_t i = 0; i < n; i++)
                    assert_int_equal(fl_pq_reader_read_column(r, g, first + i, &leaves[i], &err),
                                     0);
                fl_arrow_array_t a;
                if (fl_tier_assemble(t, NAMES[k], leaves, rows, &a, &err))
                    fail_msg("%s", err.msg);
                assert_int_equal(a.length, (int64_t)rows);
                print_column(&got[k], &a, t, (int64_t)rows);
                fl_arrow_array_free(&a);
                for (size_t i = 0; i < n; i++) fl_pq_values_free(&leaves[i]);
                free(leaves);
            }
        }
        fl_pq_reader_destroy(r);
    }
}

/* fmt's batches, or (add_rows) rows one at a time as a PK bucket's KV
 * image gives them, nested values in the kv format (kv_fmt). */
static void round_trip_as(const char *dir, fl_log_format_t fmt, bool row_path, bool add_rows,
                          fl_row_format_t kv_fmt) {
    fl_schema_t s;
    schema_of(&s);
    int32_t ids[64];
    ids_of(&s, ids);
    fl_tier_writer_options_t o;
    fl_tier_writer_options_init(&o);
    o.dir = dir;
    o.bucket = 0;
    o.schema = &s;
    o.schema_id = 1;
    o.field_ids = ids;
    o.log_format = fmt;
    o.row_path = row_path;
    o.row_group_bytes = 4096; /* several row groups */
    o.kv_format = kv_fmt;
    fl_tier_writer_t *w;
    fl_error_t err;
    if (fl_tier_writer_open(&o, &w, &err)) fail_msg("%s", err.msg);
    fl_buf_t batches;
    fl_buf_init(&batches);
    if (add_rows) {
        fl_row_t row;
        fl_row_init(&row, NCOL);
        for (int r = 0; r < ROWS; r++) {
            sample_row(r, kv_fmt, &s, &row);
            if (fl_tier_writer_add_row(w, r, 1700000000000, FL_CHANGE_INSERT, &row, &err))
                fail_msg("%s", err.msg);
        }
        fl_row_free(&row);
    } else {
        for (int r = 0; r < ROWS; r += 50) build_batch(&batches, fmt, &s, r, 50, r);
    }
    size_t pos = 0;
    while (pos < batches.len) {
        size_t start = pos;
        fl_batch_view_t v;
        assert_int_equal(fl_batch_parse_next(batches.data, batches.len, &pos, &v, &err), 0);
        if (fl_tier_writer_add_batch(w, batches.data + start, pos - start, &err))
            fail_msg("%s", err.msg);
    }
    const fl_tier_writer_result_t *res;
    assert_int_equal(fl_tier_writer_finish(w, &res, &err), 0);
    assert_int_equal(res->record_count, ROWS);
    fl_buf_t want[NCOL], got[NCOL];
    for (size_t k = 0; k < NCOL; k++) fl_buf_init(&want[k]), fl_buf_init(&got[k]);
    expected(&s, want);
    read_back(res, &s, ids, got);
    for (size_t k = C_TAGS; k < NCOL; k++) {
        assert_int_equal(got[k].len, want[k].len);
        assert_memory_equal(got[k].data, want[k].data, want[k].len);
    }
    /* metrics: leaves only; no bounds inside lists and maps, bounds for
     * the struct's x (pre-order: r = 7, x = 8, inner 9, element 10,
     * q 11, w 12, d 13) */
    const fl_ice_data_file_t *df = &res->files[0].file;
    size_t stats = 0;
    for (size_t c = 0; c < df->n_columns; c++) {
        const fl_ice_column_stats_t *st = &df->columns[c];
        int32_t id = st->field_id;
        stats++;
        bool inside_repeated = id == 3 || id == 5 || id == 6 || id == 11 || id == 12 ||
                               id == 16;
        if (inside_repeated) assert_null(st->lower.p);
        if (id == 8) assert_non_null(st->lower.p);
        assert_true(id != 2 && id != 4 && id != 7 && id != 9 && id != 10 && id != 14 &&
                    id != 15);
    }
    /* id, tags.element, m.key, m.value, r.x, q, w, d, nums' int, 3 system */
    assert_int_equal(stats, 12);
    for (size_t k = 0; k < NCOL; k++) fl_buf_free(&want[k]), fl_buf_free(&got[k]);
    fl_buf_free(&batches);
    fl_tier_writer_close(w);
    fl_schema_free(&s);
}

static void round_trip(const char *dir, fl_log_format_t fmt, bool row_path) {
    round_trip_as(dir, fmt, row_path, false, FL_ROW_COMPACTED);
}

static void test_arrow_columns(void **state) { round_trip(*state, FL_LOG_FORMAT_ARROW, false); }
static void test_image_rows_compacted(void **state) {
    round_trip_as(*state, FL_LOG_FORMAT_ARROW, false, true, FL_ROW_COMPACTED);
}
static void test_image_rows_indexed(void **state) {
    round_trip_as(*state, FL_LOG_FORMAT_ARROW, false, true, FL_ROW_INDEXED);
}
static void test_arrow_rows(void **state) { round_trip(*state, FL_LOG_FORMAT_ARROW, true); }
static void test_compacted(void **state) { round_trip(*state, FL_LOG_FORMAT_COMPACTED, false); }
static void test_indexed(void **state) { round_trip(*state, FL_LOG_FORMAT_INDEXED, false); }

/* The Parquet layout: names, ids, repetition, levels. */
static void test_layout(void **state) {
    (void)state;
    const char *p = "MAP<STRING, ARRAY<ROW<a INT NOT NULL, b STRING>>>";
    fl_datatype_t *t;
    fl_error_t err;
    assert_int_equal(fl_datatype_parse(&p, &t, &err), 0);
    assert_int_equal(fl_tier_nested_ids(t), 6);
    fl_tier_shape_t sh;
    fl_tier_nested_shape(t, &sh);
    assert_int_equal(sh.nodes, 6);
    assert_int_equal(sh.repeated, 2);
    assert_int_equal(sh.leaves, 3);
    assert_int_equal(sh.depth, 3);
    const int32_t ids[6] = {4, 10, 11, 12, 13, 14};
    fl_tier_nested_t *n;
    assert_int_equal(fl_tier_nested_open("m", t, ids, &n, &err), 0);
    size_t count;
    const fl_pq_node_t *nodes = fl_tier_nested_nodes(n, &count);
    static const char *const names[] = {"m", "key_value", "key", "value", "list", "element",
                                        "a", "b"};
    static const int32_t want_ids[] = {4, -1, 10, 11, -1, 12, 13, 14};
    static const int32_t reps[] = {FL_PQ_OPTIONAL, FL_PQ_REPEATED, FL_PQ_REQUIRED,
                                   FL_PQ_OPTIONAL, FL_PQ_REPEATED, FL_PQ_OPTIONAL,
                                   FL_PQ_REQUIRED, FL_PQ_OPTIONAL};
    assert_int_equal(count, 8);
    for (size_t i = 0; i < count; i++) {
        assert_string_equal(nodes[i].name, names[i]);
        assert_int_equal(nodes[i].field_id, want_ids[i]);
        assert_int_equal(nodes[i].repetition, reps[i]);
    }
    assert_int_equal(nodes[0].group, FL_PQ_GROUP_MAP);
    assert_int_equal(nodes[3].group, FL_PQ_GROUP_LIST);
    assert_int_equal(fl_tier_nested_leaves(n), 3);
    bool bounds;
    assert_string_equal(fl_tier_nested_leaf(n, 0, &bounds)->name, "key");
    assert_false(bounds);
    fl_tier_nested_destroy(n);
    fl_datatype_destroy(t);
}

/* NULL where NOT NULL and a NULL map key are refused, naming the column;
 * the failed row leaves nothing behind. */
static void test_refusals(void **state) {
    (void)state;
    const char *p = "ARRAY<INT NOT NULL>";
    fl_datatype_t *t;
    fl_error_t err;
    assert_int_equal(fl_datatype_parse(&p, &t, &err), 0);
    const int32_t ids[2] = {1, 2};
    fl_tier_nested_t *n;
    assert_int_equal(fl_tier_nested_open("xs", t, ids, &n, &err), 0);
    fl_row_t e;
    fl_row_init(&e, 2);
    e.cells[0].is_null = false;
    e.cells[0].i = 7; /* element 1 NULL */
    fl_buf_t b;
    fl_buf_init(&b);
    fl_nested_array_encode(&e, 2, t->element, &b);
    assert_int_equal(fl_tier_nested_add_encoded(n, FL_ROW_COMPACTED, b.data, b.len, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_non_null(strstr(err.msg, "xs"));
    fl_buf_reset(&b);
    fl_nested_array_encode(&e, 1, t->element, &b);
    assert_int_equal(fl_tier_nested_add_encoded(n, FL_ROW_COMPACTED, b.data, b.len, &err), 0);
    fl_pq_column_data_t d;
    fl_tier_nested_columns(n, &d);
    assert_int_equal(d.levels, 1); /* the refused row left no entry */
    fl_tier_nested_destroy(n);
    fl_datatype_destroy(t);

    p = "MAP<STRING, INT>";
    assert_int_equal(fl_datatype_parse(&p, &t, &err), 0);
    const int32_t mids[3] = {1, 2, 3};
    assert_int_equal(fl_tier_nested_open("m", t, mids, &n, &err), 0);
    fl_row_t keys, vals;
    fl_row_init(&keys, 1);
    fl_row_init(&vals, 1);
    fl_buf_reset(&b);
    fl_nested_map_encode(&keys, &vals, 1, t, &b); /* a NULL key */
    assert_int_equal(fl_tier_nested_add_encoded(n, FL_ROW_COMPACTED, b.data, b.len, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    fl_tier_nested_destroy(n);
    fl_datatype_destroy(t);
    fl_row_free(&keys);
    fl_row_free(&vals);
    fl_row_free(&e);
    fl_buf_free(&b);
}

/* Levels that do not fit the type are refused by the assembly. */
static void test_assemble_refusals(void **state) {
    (void)state;
    const char *p = "ARRAY<INT>";
    fl_datatype_t *t;
    fl_error_t err;
    assert_int_equal(fl_datatype_parse(&p, &t, &err), 0);
    uint8_t def[3] = {3, 3, 1}, rep[3] = {0, 1, 0}, valid[3] = {1, 1, 0};
    int32_t vals[3] = {1, 2, 0};
    fl_pq_values_t v;
    memset(&v, 0, sizeof(v));
    v.type = FL_PQ_INT32;
    v.width = 4;
    v.valid = valid;
    v.values = vals;
    v.def = def;
    v.rep = rep;
    v.levels = 3;
    v.max_def = 3;
    v.max_rep = 1;
    v.rows = 2;
    fl_arrow_array_t a;
    assert_int_equal(fl_tier_assemble(t, "xs", &v, 2, &a, &err), 0);
    assert_int_equal(a.length, 2);
    assert_false(fl_arrow_array_is_null(&a, 0));
    assert_false(fl_arrow_array_is_null(&a, 1)); /* def 1: present and empty */
    int64_t s, e;
    fl_arrow_array_child_range(&a, 0, &s, &e);
    assert_int_equal(e - s, 2);
    fl_arrow_array_child_range(&a, 1, &s, &e);
    assert_int_equal(e - s, 0);
    fl_arrow_array_free(&a);
    /* one row too many for the levels */
    assert_int_equal(fl_tier_assemble(t, "xs", &v, 3, &a, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    /* levels past the rows */
    assert_int_equal(fl_tier_assemble(t, "xs", &v, 1, &a, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    /* the file's levels are not the type's */
    v.max_def = 2;
    assert_int_equal(fl_tier_assemble(t, "xs", &v, 2, &a, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_non_null(strstr(err.msg, "levels"));
    fl_datatype_destroy(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_arrow_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_arrow_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compacted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_indexed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_image_rows_compacted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_image_rows_indexed, setup, teardown),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_assemble_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
