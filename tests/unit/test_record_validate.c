/*
 * test_record_validate.c — the PRODUCE_LOG records check (record_validate.h,
 * arrow_validate.h): valid ARROW batches pass for every Fluss type (pyarrow's
 * all-types fixtures, uncompressed, LZ4_FRAME and ZSTD, magic 0/1/2, with a
 * change-type vector) and for our own writer (8- and 64-byte alignment,
 * compressed); valid INDEXED and COMPACTED row batches pass; and each kind
 * of corruption is refused with its code: SCHEMA_NOT_EXIST for an unknown
 * schema id, CORRUPT_RECORD_EXCEPTION for a bad CRC, a record count that
 * does not match, garbage or trailing bytes, a body of another schema, node
 * lengths, short validity/values/offsets buffers, offsets past the data,
 * overlapping buffers, nulls in a NOT NULL column, broken LZ4 and ZSTD
 * frames, and row records whose length prefixes do not add up.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "arrow_flatbuf.h"
#include "batch_builder.h"
#include "record_validate.h"
#include "types_row_compacted.h"
#include "types_row_indexed.h"
#include "test_arrow_util.h"

#define SCHEMA_ALL 1     /* the all-types fixture schema */
#define SCHEMA_ROWS 2    /* INT, STRING, DECIMAL(20, 2), BIGINT */
#define SCHEMA_NOTNULL 3 /* all types, column 0 TINYINT NOT NULL */
#define ROWS_COLUMNS 4

typedef struct fixture {
    fl_datatype_t *all[ARROW_ALL_TYPES_COUNT];
    fl_datatype_t *notnull[ARROW_ALL_TYPES_COUNT];
    fl_datatype_t *rows[ROWS_COLUMNS];
    fl_buf_t msg, batch;
} fixture_t;

static fl_datatype_t *parse_type(const char *text) {
    fl_datatype_t *t;
    fl_error_t err;
    if (fl_datatype_parse(&text, &t, &err)) fail_msg("%s", err.msg);
    return t;
}

static int setup(void **state) {
    fixture_t *f = calloc(1, sizeof(*f));
    arrow_all_types(f->all);
    arrow_all_types(f->notnull);
    f->notnull[0]->nullable = false;
    const char *rows[ROWS_COLUMNS] = {"INT", "STRING", "DECIMAL(20, 2)", "BIGINT"};
    for (int i = 0; i < ROWS_COLUMNS; i++) f->rows[i] = parse_type(rows[i]);
    fl_buf_init(&f->msg);
    fl_buf_init(&f->batch);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture_t *f = *state;
    arrow_types_free(f->all, ARROW_ALL_TYPES_COUNT);
    arrow_types_free(f->notnull, ARROW_ALL_TYPES_COUNT);
    arrow_types_free(f->rows, ROWS_COLUMNS);
    fl_buf_free(&f->msg);
    fl_buf_free(&f->batch);
    free(f);
    return 0;
}

static const fl_datatype_t *const *schema_types(void *ctx, int16_t id, size_t *n) {
    fixture_t *f = ctx;
    switch (id) {
    case SCHEMA_ALL: *n = ARROW_ALL_TYPES_COUNT; return (const fl_datatype_t *const *)f->all;
    case SCHEMA_NOTNULL:
        *n = ARROW_ALL_TYPES_COUNT;
        return (const fl_datatype_t *const *)f->notnull;
    case SCHEMA_ROWS: *n = ROWS_COLUMNS; return (const fl_datatype_t *const *)f->rows;
    default: return NULL;
    }
}

/* A batch (header from bb_write) whose records are vector[0, vn) + body[0, n). */
static void make_batch(fl_buf_t *out, int8_t magic, int16_t schema_id, int32_t count,
                       int8_t attributes, const uint8_t *vector, size_t vn, const uint8_t *body,
                       size_t n) {
    bb_spec_t s = bb_spec(-1, -1, count, vn + n, 0);
    s.magic = magic;
    s.schema_id = schema_id;
    s.attributes = attributes;
    s.stats_bytes = magic >= 1 ? 11 : 0;
    size_t size = bb_size(&s);
    fl_buf_reset(out);
    uint8_t *p = fl_buf_try_reserve(out, size);
    assert_non_null(p);
    bb_write(p, &s);
    size_t at = size - vn - n;
    if (vn) memcpy(p + at, vector, vn);
    if (n) memcpy(p + at + vn, body, n);
    bb_refresh_crc(p, size);
    out->len = size;
}

static void arrow_batch(fixture_t *f, int16_t schema_id, int32_t count) {
    make_batch(&f->batch, 0, schema_id, count, FL_BATCH_ATTR_APPEND_ONLY, NULL, 0, f->msg.data,
               f->msg.len);
}

static int run(fixture_t *f, const fl_buf_t *b, fl_log_format_t fmt, fl_error_t *err) {
    memset(err, 0, sizeof(*err));
    return fl_record_validate(b->data, b->len, fmt, schema_types, f, err);
}

static void expect_ok(fixture_t *f, const fl_buf_t *b, fl_log_format_t fmt, const char *what) {
    fl_error_t err;
    if (run(f, b, fmt, &err)) fail_msg("%s: refused: %s", what, err.msg);
}

static void expect_code(fixture_t *f, const fl_buf_t *b, fl_log_format_t fmt, int code,
                        const char *what) {
    fl_error_t err;
    int rc = run(f, b, fmt, &err);
    if (rc != code) fail_msg("%s: got %d (%s), want %d", what, rc, err.msg, code);
    assert_int_equal(err.code, code);
    assert_true(err.msg[0] != '\0');
    print_message("  %s -> %d %s\n", what, rc, err.msg);
}

static void expect_corrupt(fixture_t *f, const char *what) {
    arrow_batch(f, SCHEMA_ALL, 5);
    expect_code(f, &f->batch, FL_LOG_FORMAT_ARROW, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION, what);
}

/* Where node / buffer i of f->msg sits, to edit it in place. */
static uint8_t *node_at(fixture_t *f, size_t i) {
    fl_arrow_batch_view_t v;
    fl_error_t err;
    assert_int_equal(fl_arrow_message_parse(f->msg.data, f->msg.len, &v, &err), 0);
    assert_true(i < v.node_count);
    return f->msg.data + (v.nodes_raw - f->msg.data) + i * 16;
}
static uint8_t *buffer_at(fixture_t *f, size_t i) {
    fl_arrow_batch_view_t v;
    fl_error_t err;
    assert_int_equal(fl_arrow_message_parse(f->msg.data, f->msg.len, &v, &err), 0);
    assert_true(i < v.buffer_count);
    return f->msg.data + (v.buffers_raw - f->msg.data) + i * 16;
}
static uint8_t *body_at(fixture_t *f, size_t buffer) {
    fl_arrow_batch_view_t v;
    fl_error_t err;
    assert_int_equal(fl_arrow_message_parse(f->msg.data, f->msg.len, &v, &err), 0);
    return f->msg.data + (v.body - f->msg.data) + fl_arrow_batch_buffer(&v, buffer).offset;
}

/* ---- valid ARROW batches ---- */

static void test_arrow_fixtures_pass(void **state) {
    fixture_t *f = *state;
    for (int c = 0; c < 3; c++) {
        char name[64];
        snprintf(name, sizeof(name), "all_types_%s.arrow", arrow_codec_names[c]);
        arrow_fixture(name, &f->msg);
        for (int8_t magic = 0; magic <= 2; magic++) {
            make_batch(&f->batch, magic, SCHEMA_ALL, 5, FL_BATCH_ATTR_APPEND_ONLY, NULL, 0,
                       f->msg.data, f->msg.len);
            expect_ok(f, &f->batch, FL_LOG_FORMAT_ARROW, name);
        }
        /* a changelog batch: change-type vector before the message */
        const uint8_t vector[5] = {0, 1, 2, 3, 4};
        make_batch(&f->batch, 0, SCHEMA_ALL, 5, 0, vector, 5, f->msg.data, f->msg.len);
        expect_ok(f, &f->batch, FL_LOG_FORMAT_ARROW, "change-type vector");
    }
}

static void test_arrow_set_of_batches_pass(void **state) {
    fixture_t *f = *state;
    fl_buf_t set;
    fl_buf_init(&set);
    for (int c = 0; c < 3; c++) {
        char name[64];
        snprintf(name, sizeof(name), "all_types_%s.arrow", arrow_codec_names[c]);
        arrow_fixture(name, &f->msg);
        arrow_batch(f, SCHEMA_ALL, 5);
        fl_buf_append(&set, f->batch.data, f->batch.len);
    }
    make_batch(&f->batch, 0, SCHEMA_ALL, 0, FL_BATCH_ATTR_APPEND_ONLY, NULL, 0, NULL, 0);
    fl_buf_append(&set, f->batch.data, f->batch.len); /* an empty batch */
    expect_ok(f, &set, FL_LOG_FORMAT_ARROW, "four batches");
    fl_buf_t none = {0};
    expect_ok(f, &none, FL_LOG_FORMAT_ARROW, "no batch");
    fl_buf_free(&set);
}

/* Our writer (what libfluss sends): INT + STRING columns. */
static void write_message(fl_buf_t *out, fl_arrow_codec_t codec, size_t alignment, int rows) {
    fl_arrow_write_options_t o = {codec, 0, alignment};
    fl_arrow_writer_t w;
    fl_arrow_writer_init(&w, &o);
    fl_arrow_column_t a, s;
    fl_arrow_column_init(&a, FL_ARROW_COL_INT32);
    fl_arrow_column_init(&s, FL_ARROW_COL_UTF8);
    fl_error_t err;
    for (int i = 0; i < rows; i++) {
        if (i % 3 == 2) {
            fl_arrow_column_append_null(&a);
            fl_arrow_column_append_null(&s);
            continue;
        }
        fl_arrow_column_append_int(&a, i * 7);
        char text[32];
        snprintf(text, sizeof(text), "value number %d", i % 5);
        assert_int_equal(fl_arrow_column_append_bytes(&s, text, strlen(text), &err), 0);
    }
    assert_int_equal(fl_arrow_column_write(&a, &w, &err), 0);
    assert_int_equal(fl_arrow_column_write(&s, &w, &err), 0);
    fl_buf_reset(out);
    assert_int_equal(fl_arrow_writer_finish(&w, rows, out, &err), 0);
    fl_arrow_column_reset(&a);
    fl_arrow_column_reset(&s);
    fl_arrow_writer_reset(&w);
}

static const fl_datatype_t *g_two[2];
static const fl_datatype_t *const *two_types(void *ctx, int16_t id, size_t *n) {
    (void)ctx;
    if (id != 1) return NULL;
    *n = 2;
    return g_two;
}

static void test_arrow_our_writer_passes(void **state) {
    fixture_t *f = *state;
    fl_datatype_t *i = parse_type("INT"), *s = parse_type("STRING");
    g_two[0] = i;
    g_two[1] = s;
    const fl_arrow_codec_t codecs[3] = {FL_ARROW_CODEC_NONE, FL_ARROW_CODEC_LZ4_FRAME,
                                        FL_ARROW_CODEC_ZSTD};
    for (int c = 0; c < 3; c++)
        for (int al = 8; al <= 64; al += 56)
            for (int rows = 1; rows <= 20000; rows *= 40) {
                write_message(&f->msg, codecs[c], (size_t)al, rows);
                arrow_batch(f, 1, rows);
                fl_error_t err;
                if (fl_record_validate(f->batch.data, f->batch.len, FL_LOG_FORMAT_ARROW,
                                       two_types, NULL, &err))
                    fail_msg("codec %d alignment %d rows %d: %s", c, al, rows, err.msg);
                /* the same body in a batch of one record more is refused */
                arrow_batch(f, 1, rows + 1);
                assert_int_equal(fl_record_validate(f->batch.data, f->batch.len,
                                                    FL_LOG_FORMAT_ARROW, two_types, NULL, &err),
                                 FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
            }
    fl_datatype_destroy(i);
    fl_datatype_destroy(s);
}

/* ---- refused ARROW batches ---- */

static void test_unknown_schema_id(void **state) {
    fixture_t *f = *state;
    arrow_fixture("all_types_none.arrow", &f->msg);
    arrow_batch(f, 7, 5);
    expect_code(f, &f->batch, FL_LOG_FORMAT_ARROW, FLUSS_ERR_SCHEMA_NOT_EXIST, "schema id 7");
    make_batch(&f->batch, 0, 9, 0, FL_BATCH_ATTR_APPEND_ONLY, NULL, 0, NULL, 0);
    expect_code(f, &f->batch, FL_LOG_FORMAT_ARROW, FLUSS_ERR_SCHEMA_NOT_EXIST,
                "empty batch, schema id 9");
    make_batch(&f->batch, 0, 7, 1, FL_BATCH_ATTR_APPEND_ONLY, NULL, 0,
               (const uint8_t *)"\x06\x00\x00\x00\x00\x01\x02\x03\x04\x05", 10);
    expect_code(f, &f->batch, FL_LOG_FORMAT_INDEXED, FLUSS_ERR_SCHEMA_NOT_EXIST,
                "INDEXED schema id 7");
}

static void test_bad_crc_and_truncation(void **state) {
    fixture_t *f = *state;
    arrow_fixture("all_types_none.arrow", &f->msg);
    arrow_batch(f, SCHEMA_ALL, 5);
    f->batch.data[f->batch.len - 3] ^= 0x40; /* not refreshed */
    expect_code(f, &f->batch, FL_LOG_FORMAT_ARROW, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION, "crc");
    fl_error_t err;
    run(f, &f->batch, FL_LOG_FORMAT_ARROW, &err);
    assert_non_null(strstr(err.msg, "crc"));
    arrow_batch(f, SCHEMA_ALL, 5);
    f->batch.len -= 7;
    expect_code(f, &f->batch, FL_LOG_FORMAT_ARROW, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                "cut batch");
}

static void test_record_count_mismatch(void **state) {
    fixture_t *f = *state;
    for (int c = 0; c < 3; c++) {
        char name[64];
        snprintf(name, sizeof(name), "all_types_%s.arrow", arrow_codec_names[c]);
        arrow_fixture(name, &f->msg);
        for (int32_t count = 1; count <= 9; count += 2) {
            if (count == 5) continue;
            arrow_batch(f, SCHEMA_ALL, count);
            expect_code(f, &f->batch, FL_LOG_FORMAT_ARROW, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                        "record count");
        }
    }
    /* a zero-row message in an empty batch: empty batches carry nothing */
    arrow_fixture("all_types_empty_none.arrow", &f->msg);
    arrow_batch(f, SCHEMA_ALL, 0);
    expect_code(f, &f->batch, FL_LOG_FORMAT_ARROW, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                "empty batch with a message");
}

static void test_garbage_and_trailing_bytes(void **state) {
    fixture_t *f = *state;
    uint8_t garbage[200];
    for (size_t i = 0; i < sizeof(garbage); i++) garbage[i] = (uint8_t)(i * 37 + 11);
    fl_buf_reset(&f->msg);
    fl_buf_append(&f->msg, garbage, sizeof(garbage));
    expect_corrupt(f, "garbage body");
    /* a continuation marker and a plausible length, then garbage */
    fl_arrow_put_le32(f->msg.data, 0xFFFFFFFFu);
    fl_arrow_put_le32(f->msg.data + 4, 120);
    expect_corrupt(f, "garbage flatbuffer");
    arrow_fixture("all_types_none.arrow", &f->msg);
    fl_buf_append(&f->msg, "\xff\xff\xff\xff\0\0\0\0", 8); /* an end-of-stream marker */
    expect_corrupt(f, "trailing bytes");
    /* the body of another schema */
    arrow_fixture("all_types_none.arrow", &f->msg);
    arrow_batch(f, SCHEMA_ROWS, 5);
    expect_code(f, &f->batch, FL_LOG_FORMAT_ARROW, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                "other schema");
    /* a bad change-type byte, and a vector longer than the records */
    const uint8_t vector[5] = {0, 1, 9, 3, 4};
    make_batch(&f->batch, 0, SCHEMA_ALL, 5, 0, vector, 5, f->msg.data, f->msg.len);
    expect_code(f, &f->batch, FL_LOG_FORMAT_ARROW, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                "change type 9");
    make_batch(&f->batch, 0, SCHEMA_ALL, 5, 0, vector, 3, NULL, 0);
    expect_code(f, &f->batch, FL_LOG_FORMAT_ARROW, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                "cut vector");
}

/* Buffer indexes in the all-types layout: columns 0..6 take 2 each,
 * STRING (column 7) is 14 validity, 15 offsets, 16 data. */
#define BUF_I8_VALIDITY 0
#define BUF_I32_VALUES 5
#define BUF_S_OFFSETS 15
#define BUF_S_DATA 16
#define NODE_LIST 18 /* column 18 ARRAY<STRING>: node 18, child 19 */

static void test_arrow_structure_refused(void **state) {
    fixture_t *f = *state;
    arrow_fixture("all_types_none.arrow", &f->msg);
    fl_arrow_put_le64(node_at(f, 2), 4); /* INT column of 4 rows */
    expect_corrupt(f, "top node length");

    arrow_fixture("all_types_none.arrow", &f->msg);
    fl_arrow_put_le64(node_at(f, NODE_LIST + 1), 2); /* list child shorter than its offsets */
    expect_corrupt(f, "list child length");

    arrow_fixture("all_types_none.arrow", &f->msg);
    fl_arrow_put_le64(buffer_at(f, BUF_I32_VALUES) + 8, 16); /* 5 INTs need 20 */
    expect_corrupt(f, "short values");

    arrow_fixture("all_types_none.arrow", &f->msg);
    fl_arrow_put_le64(buffer_at(f, BUF_I8_VALIDITY) + 8, 0); /* column 0 has a null */
    expect_corrupt(f, "missing validity");

    arrow_fixture("all_types_none.arrow", &f->msg);
    fl_arrow_put_le64(buffer_at(f, BUF_S_OFFSETS) + 8, 20); /* 5 rows need 24 */
    expect_corrupt(f, "short offsets");

    arrow_fixture("all_types_none.arrow", &f->msg);
    fl_arrow_put_le32(body_at(f, BUF_S_OFFSETS) + 5 * 4, 100000); /* past the data */
    expect_corrupt(f, "last offset");

    arrow_fixture("all_types_none.arrow", &f->msg);
    fl_arrow_put_le32(body_at(f, BUF_S_OFFSETS), 0x80000000u); /* negative first */
    expect_corrupt(f, "negative offset");

    arrow_fixture("all_types_none.arrow", &f->msg);
    uint8_t *b1 = buffer_at(f, 1);
    fl_arrow_put_le64(b1, fl_arrow_le64(buffer_at(f, 0))); /* buffer 1 over buffer 0 */
    expect_corrupt(f, "overlapping buffers");

    arrow_fixture("all_types_none.arrow", &f->msg);
    arrow_batch(f, SCHEMA_NOTNULL, 5);
    expect_code(f, &f->batch, FL_LOG_FORMAT_ARROW, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                "nulls in NOT NULL");
}

/* The first buffer of f->msg with compressed bytes (prefix > 0). */
static size_t first_compressed(fixture_t *f) {
    fl_arrow_batch_view_t v;
    fl_error_t err;
    assert_int_equal(fl_arrow_message_parse(f->msg.data, f->msg.len, &v, &err), 0);
    for (size_t i = 0; i < v.buffer_count; i++) {
        fl_arrow_buffer_t b = fl_arrow_batch_buffer(&v, i);
        if (b.length > 12 && (int64_t)fl_arrow_le64(v.body + b.offset) > 0) return i;
    }
    fail_msg("no compressed buffer");
    return 0;
}

static void test_compressed_refused(void **state) {
    fixture_t *f = *state;
    for (int c = 1; c < 3; c++) {
        char name[64];
        snprintf(name, sizeof(name), "all_types_%s.arrow", arrow_codec_names[c]);

        arrow_fixture(name, &f->msg);
        size_t k = first_compressed(f);
        body_at(f, k)[8] ^= 0xFF; /* frame magic */
        expect_corrupt(f, c == 1 ? "lz4 magic" : "zstd magic");

        arrow_fixture(name, &f->msg);
        k = first_compressed(f);
        fl_arrow_put_le64(buffer_at(f, k) + 8, fl_arrow_le64(buffer_at(f, k) + 8) - 3);
        expect_corrupt(f, c == 1 ? "lz4 cut" : "zstd cut");

        arrow_fixture(name, &f->msg);
        k = first_compressed(f);
        fl_arrow_put_le64(body_at(f, k), (uint64_t)1 << 40);
        expect_corrupt(f, "huge uncompressed length");

        arrow_fixture(name, &f->msg);
        k = first_compressed(f);
        fl_arrow_put_le64(buffer_at(f, k) + 8, 5);
        expect_corrupt(f, "no length prefix");
    }
    /* our LZ4 frames have no content size: the block bound still applies */
    write_message(&f->msg, FL_ARROW_CODEC_LZ4_FRAME, 8, 20000);
    size_t k = first_compressed(f);
    fl_arrow_put_le64(body_at(f, k), (uint64_t)1 << 30);
    fl_datatype_t *i = parse_type("INT"), *s = parse_type("STRING");
    g_two[0] = i;
    g_two[1] = s;
    arrow_batch(f, 1, 20000);
    fl_error_t err;
    assert_int_equal(fl_record_validate(f->batch.data, f->batch.len, FL_LOG_FORMAT_ARROW,
                                        two_types, NULL, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    print_message("  lz4 block bound -> %s\n", err.msg);
    fl_datatype_destroy(i);
    fl_datatype_destroy(s);
}

static void test_one_bad_batch_refuses_the_set(void **state) {
    fixture_t *f = *state;
    fl_buf_t set;
    fl_buf_init(&set);
    arrow_fixture("all_types_zstd.arrow", &f->msg);
    arrow_batch(f, SCHEMA_ALL, 5);
    fl_buf_append(&set, f->batch.data, f->batch.len);
    size_t second = set.len;
    arrow_batch(f, SCHEMA_ALL, 4);
    fl_buf_append(&set, f->batch.data, f->batch.len);
    fl_error_t err;
    assert_int_equal(run(f, &set, FL_LOG_FORMAT_ARROW, &err), FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    char where[64];
    snprintf(where, sizeof(where), "at byte %zu", second);
    if (!strstr(err.msg, where)) fail_msg("message does not name the batch: %s", err.msg);
    fl_buf_free(&set);
}

/* ---- INDEXED and COMPACTED ---- */

/* Records of `rows` rows of the given row sizes (attribute byte 0). */
/* Raw records: n rows of row_sizes[i] bytes of noise each, framed as
 * INDEXED / COMPACTED log records (length, change type, row). */
static void row_records(fl_buf_t *out, const size_t *row_sizes, size_t n, uint8_t change) {
    fl_buf_reset(out);
    for (size_t i = 0; i < n; i++) {
        uint8_t len[4];
        fl_arrow_put_le32(len, (uint32_t)(row_sizes[i] + 1));
        fl_buf_append(out, len, 4);
        fl_buf_append(out, &change, 1);
        for (size_t k = 0; k < row_sizes[i]; k++) {
            uint8_t b = (uint8_t)(k * 13);
            fl_buf_append(out, &b, 1);
        }
    }
}

/* n real rows of the ROWS schema (INT, STRING, DECIMAL(20, 2), BIGINT)
 * encoded in fmt's row encoding and framed as log records. */
static void encoded_records(fixture_t *f, fl_log_format_t fmt, size_t n, uint8_t change) {
    fl_buf_reset(&f->msg);
    fl_buf_t enc;
    fl_buf_init(&enc);
    fl_row_t r;
    fl_row_init(&r, ROWS_COLUMNS);
    for (size_t i = 0; i < n; i++) {
        fl_row_clear(&r);
        r.cells[0].is_null = false;
        r.cells[0].i = (int64_t)i * 7;
        char text[32];
        int tn = snprintf(text, sizeof(text), "value-%zu", i * 1000);
        fl_row_set_bytes(&r, 1, text, (size_t)tn);
        if (i % 2 == 0) {
            r.cells[2].is_null = false;
            r.cells[2].dec = (__int128)i * 123456789012345LL + 5;
        }
        r.cells[3].is_null = false;
        r.cells[3].i = -(int64_t)i * 1000003;
        fl_buf_reset(&enc);
        fl_error_t err;
        int rc = fmt == FL_LOG_FORMAT_INDEXED
                     ? fl_indexed_row_encode(&r, (const fl_datatype_t *const *)f->rows,
                                             ROWS_COLUMNS, &enc, &err)
                     : fl_compacted_row_encode(&r, (const fl_datatype_t *const *)f->rows,
                                               ROWS_COLUMNS, &enc, &err);
        assert_int_equal(rc, 0);
        uint8_t len[4];
        fl_arrow_put_le32(len, (uint32_t)(enc.len + 1));
        fl_buf_append(&f->msg, len, 4);
        fl_buf_append(&f->msg, &change, 1);
        fl_buf_append(&f->msg, enc.data, enc.len);
    }
    fl_row_free(&r);
    fl_buf_free(&enc);
}

static void rows_batch(fixture_t *f, int32_t count) {
    make_batch(&f->batch, 0, SCHEMA_ROWS, count, FL_BATCH_ATTR_APPEND_ONLY, NULL, 0, f->msg.data,
               f->msg.len);
}

static void expect_message(fixture_t *f, fl_log_format_t fmt, const char *want,
                           const char *what) {
    fl_error_t err;
    int rc = run(f, &f->batch, fmt, &err);
    assert_int_equal(rc, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    if (!strstr(err.msg, want)) fail_msg("%s: message \"%s\" lacks \"%s\"", what, err.msg, want);
    print_message("  %s -> %s\n", what, err.msg);
}

static void test_row_formats(void **state) {
    fixture_t *f = *state;
    const fl_log_format_t fmts[2] = {FL_LOG_FORMAT_INDEXED, FL_LOG_FORMAT_COMPACTED};
    for (int k = 0; k < 2; k++) {
        fl_log_format_t fmt = fmts[k];
        const int bad = FLUSS_ERR_CORRUPT_RECORD_EXCEPTION;
        encoded_records(f, fmt, 3, 3);
        rows_batch(f, 3);
        expect_ok(f, &f->batch, fmt, "three rows");
        for (int8_t magic = 1; magic <= 2; magic++) {
            make_batch(&f->batch, magic, SCHEMA_ROWS, 3, 0, NULL, 0, f->msg.data, f->msg.len);
            expect_ok(f, &f->batch, fmt, "magic 1/2");
        }
        make_batch(&f->batch, 0, SCHEMA_ROWS, 0, FL_BATCH_ATTR_APPEND_ONLY, NULL, 0, NULL, 0);
        expect_ok(f, &f->batch, fmt, "empty");

        rows_batch(f, 2);
        expect_code(f, &f->batch, fmt, bad, "count 2 of 3 rows");
        rows_batch(f, 4);
        expect_code(f, &f->batch, fmt, bad, "count 4 of 3 rows");
        fl_arrow_put_le32(f->msg.data, 2000); /* first length runs past */
        rows_batch(f, 3);
        expect_code(f, &f->batch, fmt, bad, "length past the end");
        fl_arrow_put_le32(f->msg.data, 0);
        rows_batch(f, 3);
        expect_code(f, &f->batch, fmt, bad, "length 0");
        fl_arrow_put_le32(f->msg.data, 0xFFFFFFF0u);
        rows_batch(f, 3);
        expect_code(f, &f->batch, fmt, bad, "negative length");
        encoded_records(f, fmt, 3, 5);
        rows_batch(f, 3);
        expect_code(f, &f->batch, fmt, bad, "change type 5");
        encoded_records(f, fmt, 3, 0);
        fl_buf_append(&f->msg, "\0\0", 2);
        rows_batch(f, 3);
        expect_code(f, &f->batch, fmt, bad, "trailing bytes");
        const size_t empty_row[1] = {0}; /* not even a null bitmap */
        row_records(&f->msg, empty_row, 1, 0);
        rows_batch(f, 1);
        expect_code(f, &f->batch, fmt, bad, "row without header");
        const size_t noise[3] = {24, 9, 40}; /* framed, but no row of the schema */
        row_records(&f->msg, noise, 3, 0);
        rows_batch(f, 3);
        expect_code(f, &f->batch, fmt, bad, "rows of noise");
        /* one row cut short inside its value */
        encoded_records(f, fmt, 1, 0);
        fl_arrow_put_le32(f->msg.data, (uint32_t)(f->msg.len - 4 - 3));
        f->msg.len -= 2;
        rows_batch(f, 1);
        expect_code(f, &f->batch, fmt, bad, "row cut short");
    }

    /* every format mismatch is named: what the table takes, what came */
    encoded_records(f, FL_LOG_FORMAT_INDEXED, 3, 0);
    rows_batch(f, 3);
    expect_message(f, FL_LOG_FORMAT_COMPACTED,
                   "records are not COMPACTED rows; this table's log format is COMPACTED (they "
                   "are INDEXED rows",
                   "indexed rows to a compacted table");
    expect_message(f, FL_LOG_FORMAT_ARROW,
                   "records are not Arrow IPC; this table's log format is ARROW (they are "
                   "INDEXED rows",
                   "indexed rows to an arrow table");
    encoded_records(f, FL_LOG_FORMAT_COMPACTED, 3, 0);
    rows_batch(f, 3);
    expect_message(f, FL_LOG_FORMAT_INDEXED,
                   "records are not INDEXED rows; this table's log format is INDEXED (they are "
                   "COMPACTED rows",
                   "compacted rows to an indexed table");
    expect_message(f, FL_LOG_FORMAT_ARROW,
                   "records are not Arrow IPC; this table's log format is ARROW (they are "
                   "COMPACTED rows",
                   "compacted rows to an arrow table");
    arrow_fixture("all_types_none.arrow", &f->msg);
    arrow_batch(f, SCHEMA_ALL, 5);
    expect_message(f, FL_LOG_FORMAT_INDEXED,
                   "records are not INDEXED rows; this table's log format is INDEXED (they are "
                   "an Arrow IPC message",
                   "arrow to an indexed table");
    expect_message(f, FL_LOG_FORMAT_COMPACTED,
                   "records are not COMPACTED rows; this table's log format is COMPACTED (they "
                   "are an Arrow IPC message",
                   "arrow to a compacted table");
    /* a changelog's Arrow body, after its change-type vector, is found too */
    const uint8_t vector[5] = {0, 1, 2, 3, 4};
    make_batch(&f->batch, 0, SCHEMA_ALL, 5, 0, vector, 5, f->msg.data, f->msg.len);
    expect_message(f, FL_LOG_FORMAT_INDEXED, "(they are an Arrow IPC message",
                   "arrow changelog to an indexed table");
    /* noise is refused with what is wrong with it, no format named */
    const size_t noise[3] = {24, 9, 40};
    row_records(&f->msg, noise, 3, 0);
    rows_batch(f, 3);
    fl_error_t err;
    assert_int_equal(run(f, &f->batch, FL_LOG_FORMAT_ARROW, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_null(strstr(err.msg, "this table's log format"));
}

static void test_log_format_names(void **state) {
    (void)state;
    assert_int_equal(fl_log_format_from_name(NULL), FL_LOG_FORMAT_ARROW);
    assert_int_equal(fl_log_format_from_name("arrow"), FL_LOG_FORMAT_ARROW);
    assert_int_equal(fl_log_format_from_name("INDEXED"), FL_LOG_FORMAT_INDEXED);
    assert_int_equal(fl_log_format_from_name("Compacted"), FL_LOG_FORMAT_COMPACTED);
    assert_int_equal(fl_log_format_from_name("json"), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_arrow_fixtures_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(test_arrow_set_of_batches_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(test_arrow_our_writer_passes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_schema_id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_crc_and_truncation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_count_mismatch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_garbage_and_trailing_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_arrow_structure_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compressed_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_bad_batch_refuses_the_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_row_formats, setup, teardown),
        cmocka_unit_test(test_log_format_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
