/*
 * test_lake_avro.c — Avro's binary encoding (lake_avro.h), schemas
 * (lake_avro_schema.h), values (lake_avro_value.h) and object container
 * files (lake_avro_file.h): zigzag vectors and exact bytes; round trips of
 * every type, nulls in unions; arrays and maps across several blocks,
 * negative block counts with byte sizes; the schema JSON with Iceberg's
 * field ids; a whole file with metadata in memory and on disk; and bad
 * input refused with a named error, never a crash: bad magic, bad sync,
 * overlong varints, lengths past the end, every truncation of a file.
 */
#define _GNU_SOURCE /* nftw (test_tmpdir.h) */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "lake_avro.h"
#include "lake_avro_file.h"
#include "lake_avro_schema.h"
#include "lake_avro_value.h"
#include "test_tmpdir.h"

#define assert_error(rc, e, code_, text)                                       \
    do {                                                                       \
        assert_int_equal((rc), (code_));                                       \
        assert_int_equal((e).code, (code_));                                   \
        if (!strstr((e).msg, (text))) fail_msg("message \"%s\" lacks \"%s\"", (e).msg, (text)); \
    } while (0)

static void assert_bytes(const fl_buf_t *b, const char *hex) {
    char got[256] = {0};
    for (size_t i = 0; i < b->len && 2 * i + 2 < sizeof(got); i++)
        snprintf(got + 2 * i, 3, "%02x", b->data[i]);
    assert_string_equal(got, hex);
}

/* ---- encoding ---- */

static void test_zigzag_vectors(void **state) {
    (void)state;
    static const struct {
        int64_t v;
        const char *hex;
    } longs[] = {
        {0, "00"},
        {-1, "01"},
        {1, "02"},
        {-2, "03"},
        {2, "04"},
        {63, "7e"},
        {-64, "7f"},
        {64, "8001"},
        {INT32_MAX, "feffffff0f"},
        {INT32_MIN, "ffffffff0f"},
        {INT64_MAX, "feffffffffffffffff01"},
        {INT64_MIN, "ffffffffffffffffff01"},
    };
    for (size_t i = 0; i < sizeof(longs) / sizeof(longs[0]); i++) {
        fl_buf_t b;
        fl_buf_init(&b);
        fl_avro_put_long(&b, longs[i].v);
        assert_bytes(&b, longs[i].hex);
        fl_avro_reader_t r;
        fl_avro_reader_init(&r, b.data, b.len);
        int64_t back;
        assert_int_equal(fl_avro_read_long(&r, &back, NULL), 0);
        assert_true(back == longs[i].v);
        assert_int_equal(r.pos, b.len);
        if (longs[i].v >= INT32_MIN && longs[i].v <= INT32_MAX) {
            fl_buf_reset(&b);
            fl_avro_put_int(&b, (int32_t)longs[i].v);
            assert_bytes(&b, longs[i].hex);
            fl_avro_reader_init(&r, b.data, b.len);
            int32_t i32;
            assert_int_equal(fl_avro_read_int(&r, &i32, NULL), 0);
            assert_int_equal(i32, longs[i].v);
        }
        fl_buf_free(&b);
    }
    assert_true(fl_zigzag64(INT64_MIN) == UINT64_MAX);
    assert_true(fl_unzigzag64(UINT64_MAX) == INT64_MIN);
}

static void test_primitive_round_trips(void **state) {
    (void)state;
    fl_buf_t b;
    fl_buf_init(&b);
    fl_avro_put_boolean(&b, true);
    fl_avro_put_boolean(&b, false);
    fl_avro_put_float(&b, 1.0f);
    fl_avro_put_double(&b, 1.0);
    assert_bytes(&b, "01000000803f000000000000f03f");
    fl_avro_put_float(&b, -0.0f);
    fl_avro_put_float(&b, NAN);
    fl_avro_put_double(&b, -1.5e300);
    fl_avro_put_bytes(&b, "", 0);
    fl_avro_put_bytes(&b, "\x00\xff", 2);
    fl_avro_put_string(&b, "\xc3\xa9t\xc3\xa9");
    fl_avro_put_fixed(&b, "abcd", 4);
    fl_avro_put_index(&b, 3);
    fl_avro_put_index(&b, 1);

    fl_avro_reader_t r;
    fl_avro_reader_init(&r, b.data, b.len);
    bool t, f;
    float f1, fz, fn;
    double d1, dbig;
    assert_int_equal(fl_avro_read_boolean(&r, &t, NULL), 0);
    assert_int_equal(fl_avro_read_boolean(&r, &f, NULL), 0);
    assert_true(t && !f);
    assert_int_equal(fl_avro_read_float(&r, &f1, NULL), 0);
    assert_int_equal(fl_avro_read_double(&r, &d1, NULL), 0);
    assert_true(f1 == 1.0f && d1 == 1.0);
    assert_int_equal(fl_avro_read_float(&r, &fz, NULL), 0);
    assert_true(fz == 0.0f && signbit(fz));
    assert_int_equal(fl_avro_read_float(&r, &fn, NULL), 0);
    assert_true(isnan(fn));
    assert_int_equal(fl_avro_read_double(&r, &dbig, NULL), 0);
    assert_true(dbig == -1.5e300);
    const uint8_t *p;
    size_t n;
    assert_int_equal(fl_avro_read_bytes(&r, &p, &n, NULL), 0);
    assert_int_equal(n, 0);
    assert_int_equal(fl_avro_read_bytes(&r, &p, &n, NULL), 0);
    assert_int_equal(n, 2);
    assert_memory_equal(p, "\x00\xff", 2);
    assert_int_equal(fl_avro_read_bytes(&r, &p, &n, NULL), 0);
    assert_int_equal(n, 5);
    assert_memory_equal(p, "\xc3\xa9t\xc3\xa9", 5);
    assert_int_equal(fl_avro_read_fixed(&r, 4, &p, NULL), 0);
    assert_memory_equal(p, "abcd", 4);
    uint32_t idx;
    assert_int_equal(fl_avro_read_enum(&r, 4, &idx, NULL), 0);
    assert_int_equal(idx, 3);
    assert_int_equal(fl_avro_read_branch(&r, 2, &idx, NULL), 0);
    assert_int_equal(idx, 1);
    assert_int_equal(fl_avro_reader_left(&r), 0);
    fl_buf_free(&b);
}

typedef int (*read_fn)(fl_avro_reader_t *r, fl_error_t *err);

static int rd_long(fl_avro_reader_t *r, fl_error_t *err) {
    int64_t v;
    return fl_avro_read_long(r, &v, err);
}
static int rd_int(fl_avro_reader_t *r, fl_error_t *err) {
    int32_t v;
    return fl_avro_read_int(r, &v, err);
}
static int rd_bytes(fl_avro_reader_t *r, fl_error_t *err) {
    const uint8_t *p;
    size_t n;
    return fl_avro_read_bytes(r, &p, &n, err);
}
static int rd_bool(fl_avro_reader_t *r, fl_error_t *err) {
    bool v;
    return fl_avro_read_boolean(r, &v, err);
}
static int rd_double(fl_avro_reader_t *r, fl_error_t *err) {
    double v;
    return fl_avro_read_double(r, &v, err);
}
static int rd_enum3(fl_avro_reader_t *r, fl_error_t *err) {
    uint32_t v;
    return fl_avro_read_enum(r, 3, &v, err);
}
static int rd_branch2(fl_avro_reader_t *r, fl_error_t *err) {
    uint32_t v;
    return fl_avro_read_branch(r, 2, &v, err);
}
static int rd_block(fl_avro_reader_t *r, fl_error_t *err) {
    int64_t c, b;
    return fl_avro_read_block(r, &c, &b, err);
}

static void test_reader_rejects(void **state) {
    (void)state;
    static const struct {
        read_fn fn;
        const char *bytes;
        size_t len;
        const char *msg;
    } cases[] = {
        {rd_long, "", 0, "truncated"},
        {rd_long, "\x80\x80", 2, "truncated"},
        {rd_long, "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 11, "varint over 10 bytes"},
        {rd_long, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10, "varint over 10 bytes"},
        {rd_int, "\x80\x80\x80\x80\x80\x00", 6, "varint over 5 bytes"},
        {rd_int, "\x80\x80\x80\x80\x10", 5, "int over 32 bits"},
        {rd_bytes, "\x01", 1, "negative length -1"},
        {rd_bytes, "\x0a\x41\x42", 3, "length 5 at byte 0 past the end (2 bytes left)"},
        {rd_bytes, "\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10, "past the end"},
        {rd_bool, "\x02", 1, "boolean byte 0x02"},
        {rd_bool, "", 0, "truncated"},
        {rd_double, "\x00\x00\x00\x00\x00\x00\xf0", 7, "8 bytes needed"},
        {rd_enum3, "\x06", 1, "enum index 3"},
        {rd_enum3, "\x01", 1, "enum index -1"},
        {rd_branch2, "\x04", 1, "union branch index 2"},
        {rd_block, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10, "block count"},
        {rd_block, "\x03\x0a\x00", 3, "block byte size 5"},
        {rd_block, "\x03\x01", 2, "block byte size -1"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fl_avro_reader_t r;
        fl_avro_reader_init(&r, cases[i].bytes, cases[i].len);
        fl_error_t e;
        fl_err_clear(&e);
        int rc = cases[i].fn(&r, &e);
        if (rc != FLUSS_ERR__CORRUPT || !strstr(e.msg, cases[i].msg))
            fail_msg("case %zu: rc %d, \"%s\" lacks \"%s\"", i, rc, e.msg, cases[i].msg);
    }
    /* a block with a negative count and its byte size */
    fl_avro_reader_t r;
    fl_avro_reader_init(&r, "\x03\x04\x00\x00", 4);
    int64_t count, bytes;
    assert_int_equal(fl_avro_read_block(&r, &count, &bytes, NULL), 0);
    assert_true(count == 2 && bytes == 2);
}

/* ---- schemas ---- */

/* An Iceberg manifest_entry, cut down: status, optional snapshot id,
 * data_file{file_path, file_format, partition{p_bucket?}, record_count,
 * column_sizes (int-keyed map: array of k117_v118 records, logicalType
 * map), split_offsets (array, element-id)}. */
static fl_avro_schema_t *manifest_schema(void) {
    fl_avro_schema_t *part = fl_avro_schema_record_new("r102");
    fl_avro_schema_record_add(part, "p_bucket", 1000,
                              fl_avro_schema_optional(fl_avro_schema_new(FL_AVRO_INT)));
    fl_avro_schema_t *kv = fl_avro_schema_record_new("k117_v118");
    fl_avro_schema_record_add(kv, "key", 117, fl_avro_schema_new(FL_AVRO_INT));
    fl_avro_schema_record_add(kv, "value", 118, fl_avro_schema_new(FL_AVRO_LONG));
    fl_avro_schema_t *sizes = fl_avro_schema_array_new(kv, FL_AVRO_NO_ID);
    fl_avro_schema_set_logical(sizes, "map");
    fl_avro_schema_t *df = fl_avro_schema_record_new("r2");
    fl_avro_field_t *fp =
        fl_avro_schema_record_add(df, "file_path", 100, fl_avro_schema_new(FL_AVRO_STRING));
    fp->doc = strdup("Location URI with FS scheme");
    fl_avro_schema_record_add(df, "file_format", 101, fl_avro_schema_new(FL_AVRO_STRING));
    fl_avro_schema_record_add(df, "partition", 102, part);
    fl_avro_schema_record_add(df, "record_count", 103, fl_avro_schema_new(FL_AVRO_LONG));
    fl_avro_schema_record_add(df, "column_sizes", 108, fl_avro_schema_optional(sizes));
    fl_avro_schema_record_add(
        df, "split_offsets", 132,
        fl_avro_schema_optional(fl_avro_schema_array_new(fl_avro_schema_new(FL_AVRO_LONG), 133)));
    fl_avro_schema_t *e = fl_avro_schema_record_new("manifest_entry");
    fl_avro_schema_record_add(e, "status", 0, fl_avro_schema_new(FL_AVRO_INT));
    fl_avro_schema_record_add(e, "snapshot_id", 1,
                              fl_avro_schema_optional(fl_avro_schema_new(FL_AVRO_LONG)));
    fl_avro_schema_record_add(e, "data_file", 2, df);
    return e;
}

static char *json_of(const fl_avro_schema_t *s) {
    fl_buf_t b;
    fl_buf_init(&b);
    fl_avro_schema_write_json(s, &b);
    fl_buf_put_u8(&b, 0);
    return (char *)b.data;
}

static void test_schema_json(void **state) {
    (void)state;
    fl_avro_schema_t *s = manifest_schema();
    char *j = json_of(s);
    static const char *const want[] = {
        "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":[",
        "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0}",
        "{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":1}",
        "{\"name\":\"file_path\",\"type\":\"string\",\"doc\":\"Location URI with FS "
        "scheme\",\"field-id\":100}",
        "{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102\",\"fields\":[{"
        "\"name\":\"p_bucket\",\"type\":[\"null\",\"int\"],\"default\":null,\"field-id\":1000}]},"
        "\"field-id\":102}",
        "{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k117_v118\",\"fields\":[{"
        "\"name\":\"key\",\"type\":\"int\",\"field-id\":117},{\"name\":\"value\",\"type\":"
        "\"long\",\"field-id\":118}]},\"logicalType\":\"map\"}",
        "{\"type\":\"array\",\"items\":\"long\",\"element-id\":133}",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (!strstr(j, want[i])) fail_msg("%s\nlacks\n%s", j, want[i]);

    /* parse gives the same tree back */
    fl_avro_schema_t *p;
    fl_error_t e;
    assert_int_equal(fl_avro_schema_parse(j, strlen(j), &p, &e), 0);
    char *j2 = json_of(p);
    assert_string_equal(j, j2);
    const fl_avro_schema_t *df = p->fields[fl_avro_schema_field_index_by_id(p, 2)].type;
    assert_string_equal(df->name, "r2");
    assert_int_equal(fl_avro_schema_field_index(df, "split_offsets"), 5);
    const fl_avro_schema_t *so = df->fields[5].type;
    assert_int_equal(so->type, FL_AVRO_UNION);
    assert_int_equal(so->branches[1]->element_id, 133);
    assert_string_equal(df->fields[4].type->branches[1]->logical_type, "map");
    assert_true(p->fields[1].default_null);
    assert_int_equal(fl_avro_schema_field_index_by_id(p, 77), -1);
    /* status int + snapshot branch + path + format + partition branch +
     * count + 2 branches */
    assert_int_equal(p->min_bytes, 8);
    free(j2);
    fl_avro_schema_destroy(p);

    /* map, enum, fixed with logical attributes, primitive with attributes */
    const char *other = "{\"type\":\"record\",\"name\":\"o\",\"fields\":["
                        "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"string\","
                        "\"key-id\":7,\"value-id\":8}},"
                        "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\","
                        "\"symbols\":[\"A\",\"B\"]}},"
                        "{\"name\":\"d\",\"type\":{\"type\":\"fixed\",\"name\":\"dec\",\"size\":"
                        "5,\"logicalType\":\"decimal\",\"precision\":10,\"scale\":2}},"
                        "{\"name\":\"t\",\"type\":{\"type\":\"long\",\"logicalType\":"
                        "\"timestamp-micros\"}}]}";
    assert_int_equal(fl_avro_schema_parse(other, strlen(other), &p, &e), 0);
    j2 = json_of(p);
    assert_string_equal(j2, other);
    assert_int_equal(p->fields[0].type->key_id, 7);
    assert_int_equal(p->fields[0].type->value_id, 8);
    assert_int_equal(p->fields[2].type->precision, 10);
    assert_int_equal(p->fields[2].type->scale, 2);
    assert_int_equal(p->fields[2].type->size, 5);
    free(j2);
    fl_avro_schema_destroy(p);
    free(j);
    fl_avro_schema_destroy(s);
}

static void test_schema_parse_errors(void **state) {
    (void)state;
    static const struct {
        const char *json;
        int code;
        const char *msg;
    } cases[] = {
        {"{\"type\":", FLUSS_ERR__CORRUPT, "JSON"},
        {"\"Foo\"", FLUSS_ERR__INVALID_ARG, "named type reference \"Foo\""},
        {"{\"type\":\"record\",\"name\":\"a\",\"fields\":[{\"name\":\"x\",\"type\":\"a\"}]}",
         FLUSS_ERR__INVALID_ARG, "field x: avro schema: named type reference"},
        {"[\"null\",[\"int\"]]", FLUSS_ERR__CORRUPT, "union directly inside a union"},
        {"[]", FLUSS_ERR__CORRUPT, "empty union"},
        {"{\"type\":\"record\",\"name\":\"a\"}", FLUSS_ERR__CORRUPT, "without fields"},
        {"{\"type\":\"record\",\"fields\":[]}", FLUSS_ERR__CORRUPT, "record without a name"},
        {"{\"type\":\"record\",\"name\":\"a\",\"fields\":[{\"name\":\"x\",\"type\":\"int\"},"
         "{\"name\":\"x\",\"type\":\"int\"}]}",
         FLUSS_ERR__CORRUPT, "field x twice"},
        {"{\"type\":\"record\",\"name\":\"a\",\"fields\":[{\"name\":\"x\",\"type\":\"int\","
         "\"field-id\":-3}]}",
         FLUSS_ERR__CORRUPT, "\"field-id\" is not an integer"},
        {"{\"type\":\"fixed\",\"name\":\"f\"}", FLUSS_ERR__CORRUPT, "fixed without a size"},
        {"{\"type\":\"fixed\",\"name\":\"f\",\"size\":99999999}", FLUSS_ERR__CORRUPT, "\"size\""},
        {"{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"A\"]}", FLUSS_ERR__CORRUPT,
         "symbol twice"},
        {"{\"type\":\"array\"}", FLUSS_ERR__CORRUPT, "array without items"},
        {"{\"type\":7}", FLUSS_ERR__CORRUPT, "\"type\" is not a string"},
        {"12", FLUSS_ERR__CORRUPT, "neither a string"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fl_avro_schema_t *s;
        fl_error_t e;
        int rc = fl_avro_schema_parse(cases[i].json, strlen(cases[i].json), &s, &e);
        if (rc != cases[i].code || !strstr(e.msg, cases[i].msg))
            fail_msg("case %zu: rc %d, \"%s\" lacks \"%s\"", i, rc, e.msg, cases[i].msg);
        assert_null(s);
    }
    /* nesting past FL_AVRO_DEPTH_MAX */
    char deep[1024] = "";
    for (int i = 0; i < FL_AVRO_DEPTH_MAX + 1; i++) strcat(deep, "{\"type\":\"array\",\"items\":");
    strcat(deep, "\"int\"");
    for (int i = 0; i < FL_AVRO_DEPTH_MAX + 1; i++) strcat(deep, "}");
    fl_avro_schema_t *s;
    fl_error_t e;
    assert_error(fl_avro_schema_parse(deep, strlen(deep), &s, &e), e, FLUSS_ERR__INVALID_ARG,
                 "nested deeper than 32");
}

/* ---- values ---- */

/* Every type: the fields of all_schema, in order. */
static fl_avro_schema_t *all_schema(void) {
    fl_avro_schema_t *inner = fl_avro_schema_record_new("inner");
    fl_avro_schema_record_add(inner, "x", 20, fl_avro_schema_new(FL_AVRO_INT));
    fl_avro_schema_t *s = fl_avro_schema_record_new("all");
    const char *const syms[] = {"DATA", "DELETES"};
    fl_avro_schema_record_add(s, "n", 1, fl_avro_schema_new(FL_AVRO_NULL));
    fl_avro_schema_record_add(s, "b", 2, fl_avro_schema_new(FL_AVRO_BOOLEAN));
    fl_avro_schema_record_add(s, "i", 3, fl_avro_schema_new(FL_AVRO_INT));
    fl_avro_schema_record_add(s, "l", 4, fl_avro_schema_new(FL_AVRO_LONG));
    fl_avro_schema_record_add(s, "f", 5, fl_avro_schema_new(FL_AVRO_FLOAT));
    fl_avro_schema_record_add(s, "d", 6, fl_avro_schema_new(FL_AVRO_DOUBLE));
    fl_avro_schema_record_add(s, "y", 7, fl_avro_schema_new(FL_AVRO_BYTES));
    fl_avro_schema_record_add(s, "s", 8, fl_avro_schema_new(FL_AVRO_STRING));
    fl_avro_schema_record_add(s, "e", 9, fl_avro_schema_enum_new("content", syms, 2));
    fl_avro_schema_record_add(s, "x", 10, fl_avro_schema_fixed_new("uuid", 16));
    fl_avro_schema_record_add(s, "a", 11,
                              fl_avro_schema_array_new(fl_avro_schema_new(FL_AVRO_LONG), 12));
    fl_avro_schema_record_add(s, "m", 13,
                              fl_avro_schema_map_new(fl_avro_schema_new(FL_AVRO_STRING), 14, 15));
    fl_avro_schema_record_add(s, "o1", 16, fl_avro_schema_optional(fl_avro_schema_new(FL_AVRO_STRING)));
    fl_avro_schema_record_add(s, "o2", 17, fl_avro_schema_optional(fl_avro_schema_new(FL_AVRO_STRING)));
    fl_avro_schema_record_add(s, "r", 18, inner);
    return s;
}

static const uint8_t UUID[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static void all_value(fl_avro_value_t *v, fl_avro_arena_t *a, int64_t k) {
    fl_avro_value_t *f = fl_avro_value_set_record(v, a, 15);
    fl_avro_value_set_null(&f[0]);
    fl_avro_value_set_boolean(&f[1], k % 2);
    fl_avro_value_set_int(&f[2], (int32_t)(k * 7 - 1000));
    fl_avro_value_set_long(&f[3], k * 1000000007LL - (1LL << 40));
    fl_avro_value_set_float(&f[4], (float)k / 4.0f);
    fl_avro_value_set_double(&f[5], (double)k / 8.0 - 3.5);
    fl_avro_value_set_bytes(&f[6], "\x00\xff\x10", (size_t)(k % 4));
    fl_avro_value_set_string(&f[7], k % 3 ? "\xc3\xa9t\xc3\xa9" : "");
    fl_avro_value_set_enum(&f[8], (uint32_t)(k % 2));
    fl_avro_value_set_fixed(&f[9], UUID, 16);
    fl_avro_value_t *items = fl_avro_value_set_array(&f[10], a, (size_t)(k % 5));
    for (int64_t i = 0; i < k % 5; i++) fl_avro_value_set_long(&items[i], i - k);
    fl_avro_value_t *vals = fl_avro_value_set_map(&f[11], a, 2);
    f[11].u.list.keys[0] = fl_avro_str("format-version");
    f[11].u.list.keys[1] = fl_avro_str("k");
    fl_avro_value_set_string(&vals[0], "2");
    fl_avro_value_set_string(&vals[1], "v");
    fl_avro_value_set_null(fl_avro_value_set_branch(&f[12], a, 0));
    fl_avro_value_set_string(fl_avro_value_set_branch(&f[13], a, 1), "present");
    fl_avro_value_set_int(fl_avro_value_set_record(&f[14], a, 1), (int32_t)k);
}

static void assert_all_value(const fl_avro_schema_t *s, const fl_avro_value_t *v, int64_t k) {
    assert_int_equal(v->type, FL_AVRO_RECORD);
    assert_int_equal(v->u.list.n, 15);
    const fl_avro_value_t *f = v->u.list.items;
    assert_int_equal(f[0].type, FL_AVRO_NULL);
    assert_int_equal(f[1].u.boolean, k % 2);
    assert_int_equal(f[2].u.i, k * 7 - 1000);
    assert_true(f[3].u.l == k * 1000000007LL - (1LL << 40));
    assert_true(f[4].u.f == (float)k / 4.0f);
    assert_true(f[5].u.d == (double)k / 8.0 - 3.5);
    assert_int_equal(f[6].u.bytes.len, k % 4);
    assert_memory_equal(f[6].u.bytes.p, "\x00\xff\x10", (size_t)(k % 4));
    assert_int_equal(f[7].u.bytes.len, k % 3 ? 5 : 0);
    assert_int_equal(f[8].type, FL_AVRO_ENUM);
    assert_int_equal(f[8].u.i, k % 2);
    assert_int_equal(f[9].u.bytes.len, 16);
    assert_memory_equal(f[9].u.bytes.p, UUID, 16);
    assert_int_equal(f[10].u.list.n, k % 5);
    for (int64_t i = 0; i < k % 5; i++) assert_true(f[10].u.list.items[i].u.l == i - k);
    assert_int_equal(f[11].u.list.n, 2);
    assert_memory_equal(f[11].u.list.keys[0].p, "format-version", 14);
    assert_memory_equal(f[11].u.list.items[1].u.bytes.p, "v", 1);
    assert_int_equal(f[12].type, FL_AVRO_UNION);
    assert_int_equal(f[12].u.branch.index, 0);
    assert_int_equal(fl_avro_value_unwrap(&f[12])->type, FL_AVRO_NULL);
    assert_int_equal(f[13].u.branch.index, 1);
    assert_memory_equal(fl_avro_value_unwrap(&f[13])->u.bytes.p, "present", 7);
    const fl_avro_value_t *r = fl_avro_value_field(s, v, "r");
    assert_non_null(r);
    assert_int_equal(r->u.list.items[0].u.i, k);
    assert_null(fl_avro_value_field(s, v, "nope"));
}

static void test_value_round_trips(void **state) {
    (void)state;
    fl_avro_schema_t *s = all_schema();
    fl_avro_arena_t a;
    fl_avro_arena_init(&a);
    fl_buf_t b;
    fl_buf_init(&b);
    for (int64_t k = 0; k < 40; k++) {
        fl_avro_value_t v;
        all_value(&v, &a, k);
        assert_int_equal(fl_avro_value_encode(s, &v, &b, NULL), 0);
    }
    fl_avro_reader_t r;
    fl_avro_reader_init(&r, b.data, b.len);
    for (int64_t k = 0; k < 40; k++) {
        fl_avro_value_t v;
        fl_error_t e;
        assert_int_equal(fl_avro_value_decode(s, &r, &a, &v, &e), 0);
        assert_all_value(s, &v, k);
    }
    assert_int_equal(fl_avro_reader_left(&r), 0);
    fl_avro_arena_reset(&a);
    fl_buf_free(&b);
    fl_avro_schema_destroy(s);
}

static void test_encode_mismatch(void **state) {
    (void)state;
    fl_avro_schema_t *s = manifest_schema();
    fl_avro_arena_t a;
    fl_avro_arena_init(&a);
    fl_avro_value_t v;
    fl_avro_value_t *f = fl_avro_value_set_record(&v, &a, 3);
    fl_avro_value_set_int(&f[0], 1);
    fl_avro_value_set_null(fl_avro_value_set_branch(&f[1], &a, 0));
    fl_avro_value_t *df = fl_avro_value_set_record(&f[2], &a, 6);
    fl_avro_value_set_long(&df[0], 5); /* file_path is a string */
    fl_buf_t b;
    fl_buf_init(&b);
    fl_buf_append(&b, "xy", 2);
    fl_error_t e;
    assert_error(fl_avro_value_encode(s, &v, &b, &e), e, FLUSS_ERR__INVALID_ARG,
                 "data_file: file_path: avro: long given for string");
    assert_int_equal(b.len, 2); /* unchanged */
    fl_avro_value_set_string(&df[0], "file:///x");
    fl_avro_value_set_string(&df[1], "PARQUET");
    fl_avro_value_set_record(&df[2], &a, 1)[0].type = FL_AVRO_UNION; /* no branch value */
    assert_error(fl_avro_value_encode(s, &v, &b, &e), e, FLUSS_ERR__INVALID_ARG,
                 "partition: p_bucket: avro: union has no branch 0");
    fl_avro_value_set_int(fl_avro_value_set_branch(&df[2].u.list.items[0], &a, 1), 3);
    fl_avro_value_set_long(&df[3], 10);
    fl_avro_value_set_null(fl_avro_value_set_branch(&df[4], &a, 0));
    fl_avro_value_set_branch(&df[5], &a, 2);
    assert_error(fl_avro_value_encode(s, &v, &b, &e), e, FLUSS_ERR__INVALID_ARG,
                 "split_offsets: avro: union has no branch 2");
    fl_avro_value_set_long(fl_avro_value_set_array(fl_avro_value_set_branch(&df[5], &a, 1), &a, 1),
                           4);
    assert_int_equal(fl_avro_value_encode(s, &v, &b, &e), 0);
    v.u.list.n = 2;
    assert_error(fl_avro_value_encode(s, &v, &b, &e), e, FLUSS_ERR__INVALID_ARG,
                 "2 values for 3 fields");
    fl_avro_arena_reset(&a);
    fl_buf_free(&b);
    fl_avro_schema_destroy(s);
}

/* array<long>: [1, 2] in a positive block, [3, 4] in a negative one with
 * its byte size, [5] in another positive one, then the end. */
static void test_blocks(void **state) {
    (void)state;
    fl_avro_schema_t *s = fl_avro_schema_array_new(fl_avro_schema_new(FL_AVRO_LONG), 1);
    fl_buf_t b;
    fl_buf_init(&b);
    fl_avro_put_block(&b, 2);
    fl_avro_put_long(&b, 1);
    fl_avro_put_long(&b, 2);
    fl_avro_put_block_sized(&b, 2, 2);
    fl_avro_put_long(&b, 3);
    fl_avro_put_long(&b, 4);
    fl_avro_put_block(&b, 1);
    fl_avro_put_long(&b, 5);
    fl_avro_put_block(&b, 0);
    assert_bytes(&b, "04020403040608020a00");
    fl_avro_arena_t a;
    fl_avro_arena_init(&a);
    fl_avro_reader_t r;
    fl_avro_reader_init(&r, b.data, b.len);
    fl_avro_value_t v;
    fl_error_t e;
    assert_int_equal(fl_avro_value_decode(s, &r, &a, &v, &e), 0);
    assert_int_equal(v.u.list.n, 5);
    for (int i = 0; i < 5; i++) assert_int_equal(v.u.list.items[i].u.l, i + 1);
    assert_int_equal(fl_avro_reader_left(&r), 0);

    /* a declared byte size that the items do not fill */
    b.data[4] = 0x06; /* size 3 */
    fl_avro_reader_init(&r, b.data, b.len);
    assert_error(fl_avro_value_decode(s, &r, &a, &v, &e), e, FLUSS_ERR__CORRUPT,
                 "block declared 3 bytes");
    /* more items than the bytes left can hold */
    fl_avro_reader_init(&r, "\x14\x02\x04\x00", 4);
    assert_error(fl_avro_value_decode(s, &r, &a, &v, &e), e, FLUSS_ERR__CORRUPT,
                 "block of 10 items of at least 1 bytes in 3 bytes");
    /* no end block */
    fl_avro_reader_init(&r, "\x02\x02", 2);
    assert_error(fl_avro_value_decode(s, &r, &a, &v, &e), e, FLUSS_ERR__CORRUPT, "truncated");
    fl_avro_schema_destroy(s);

    /* map<int> over two blocks, the second negative */
    s = fl_avro_schema_map_new(fl_avro_schema_new(FL_AVRO_INT), FL_AVRO_NO_ID, FL_AVRO_NO_ID);
    fl_buf_reset(&b);
    fl_avro_put_block(&b, 1);
    fl_avro_put_string(&b, "a");
    fl_avro_put_int(&b, -1);
    fl_avro_put_block_sized(&b, 2, 7);
    fl_avro_put_string(&b, "bb");
    fl_avro_put_int(&b, 100); /* 2 bytes */
    fl_avro_put_string(&b, "");
    fl_avro_put_int(&b, 0);
    fl_avro_put_block(&b, 0);
    fl_avro_reader_init(&r, b.data, b.len);
    assert_int_equal(fl_avro_value_decode(s, &r, &a, &v, &e), 0);
    assert_int_equal(v.u.list.n, 3);
    assert_memory_equal(v.u.list.keys[1].p, "bb", 2);
    assert_int_equal(v.u.list.items[0].u.i, -1);
    assert_int_equal(v.u.list.items[1].u.i, 100);
    assert_int_equal(v.u.list.keys[2].len, 0);
    fl_avro_schema_destroy(s);

    /* array<null>: items of no bytes are bounded by FL_AVRO_VALUES_MAX */
    s = fl_avro_schema_array_new(fl_avro_schema_new(FL_AVRO_NULL), FL_AVRO_NO_ID);
    fl_buf_reset(&b);
    fl_avro_put_block(&b, 1000);
    fl_avro_put_block(&b, 0);
    fl_avro_reader_init(&r, b.data, b.len);
    assert_int_equal(fl_avro_value_decode(s, &r, &a, &v, &e), 0);
    assert_int_equal(v.u.list.n, 1000);
    fl_buf_reset(&b);
    fl_avro_put_block(&b, (int64_t)FL_AVRO_VALUES_MAX);
    fl_avro_put_block(&b, 0);
    fl_avro_reader_init(&r, b.data, b.len);
    assert_error(fl_avro_value_decode(s, &r, &a, &v, &e), e, FLUSS_ERR__CORRUPT, "over 1048576 values");
    /* many one-item blocks grow the list geometrically */
    fl_buf_reset(&b);
    for (int i = 0; i < 5000; i++) fl_avro_put_block(&b, 1);
    fl_avro_put_block(&b, 0);
    fl_avro_reader_init(&r, b.data, b.len);
    assert_int_equal(fl_avro_value_decode(s, &r, &a, &v, &e), 0);
    assert_int_equal(v.u.list.n, 5000);
    fl_avro_schema_destroy(s);
    fl_avro_arena_reset(&a);
    fl_buf_free(&b);
}

/* ---- object container files ---- */

static const uint8_t SYNC[16] = "0123456789abcdef";

static void manifest_value(fl_avro_value_t *v, fl_avro_arena_t *a, int k, char *path, size_t cap) {
    fl_avro_value_t *f = fl_avro_value_set_record(v, a, 3);
    fl_avro_value_set_int(&f[0], 1);
    if (k % 3 == 0)
        fl_avro_value_set_null(fl_avro_value_set_branch(&f[1], a, 0));
    else
        fl_avro_value_set_long(fl_avro_value_set_branch(&f[1], a, 1), 1000 + k);
    fl_avro_value_t *df = fl_avro_value_set_record(&f[2], a, 6);
    snprintf(path, cap, "file:///wh/db/t/data/%d.parquet", k);
    fl_avro_value_set_string(&df[0], path);
    fl_avro_value_set_string(&df[1], "PARQUET");
    fl_avro_value_set_int(fl_avro_value_set_branch(fl_avro_value_set_record(&df[2], a, 1), a, 1), k % 4);
    fl_avro_value_set_long(&df[3], 100 * k);
    fl_avro_value_t *cs = fl_avro_value_set_array(fl_avro_value_set_branch(&df[4], a, 1), a, 2);
    for (int c = 0; c < 2; c++) {
        fl_avro_value_t *kv = fl_avro_value_set_record(&cs[c], a, 2);
        fl_avro_value_set_int(&kv[0], c + 1);
        fl_avro_value_set_long(&kv[1], 10 * k + c);
    }
    fl_avro_value_set_null(fl_avro_value_set_branch(&df[5], a, 0));
}

static void assert_manifest_value(const fl_avro_schema_t *s, const fl_avro_value_t *v, int k) {
    assert_int_equal(v->u.list.items[0].u.i, 1);
    const fl_avro_value_t *snap = fl_avro_value_unwrap(&v->u.list.items[1]);
    if (k % 3 == 0)
        assert_int_equal(snap->type, FL_AVRO_NULL);
    else
        assert_int_equal(snap->u.l, 1000 + k);
    const fl_avro_value_t *df = fl_avro_value_field(s, v, "data_file");
    const fl_avro_schema_t *dfs = s->fields[2].type;
    char path[64];
    int n = snprintf(path, sizeof(path), "file:///wh/db/t/data/%d.parquet", k);
    const fl_avro_value_t *fp = fl_avro_value_field(dfs, df, "file_path");
    assert_int_equal(fp->u.bytes.len, n);
    assert_memory_equal(fp->u.bytes.p, path, (size_t)n);
    assert_int_equal(fl_avro_value_unwrap(&df->u.list.items[2].u.list.items[0])->u.i, k % 4);
    assert_int_equal(df->u.list.items[3].u.l, 100 * k);
    const fl_avro_value_t *cs = fl_avro_value_unwrap(&df->u.list.items[4]);
    assert_int_equal(cs->u.list.n, 2);
    assert_int_equal(cs->u.list.items[1].u.list.items[1].u.l, 10 * k + 1);
}

#define RECORDS 50

/* A manifest-like file of RECORDS records in blocks of 7. */
static void write_manifest(const char *path, fl_buf_t *copy, size_t *header_len) {
    fl_avro_schema_t *s = manifest_schema();
    fl_avro_file_options_t o;
    fl_avro_file_options_init(&o);
    o.block_records_max = 7;
    o.sync = SYNC;
    const fl_avro_meta_t meta[] = {
        fl_avro_meta_str("schema", "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[]}"),
        fl_avro_meta_str("partition-spec", "[{\"name\":\"p_bucket\",\"field-id\":1000}]"),
        fl_avro_meta_str("partition-spec-id", "0"),
        fl_avro_meta_str("format-version", "2"),
        fl_avro_meta_str("content", "data"),
    };
    fl_avro_file_writer_t *w;
    fl_error_t e;
    assert_int_equal(fl_avro_file_writer_open(path, s, meta, 5, &o, &w, &e), 0);
    *header_len = (size_t)fl_avro_file_writer_position(w);
    fl_avro_arena_t a;
    fl_avro_arena_init(&a);
    for (int k = 0; k < RECORDS; k++) {
        char buf[64];
        fl_avro_value_t v;
        manifest_value(&v, &a, k, buf, sizeof(buf));
        assert_int_equal(fl_avro_file_writer_append(w, &v, &e), 0);
        fl_avro_arena_reset(&a);
    }
    assert_int_equal(fl_avro_file_writer_finish(w, &e), 0);
    assert_int_equal(fl_avro_file_writer_append(w, &(fl_avro_value_t){0}, &e), FLUSS_ERR__STATE);
    if (copy) {
        const fl_buf_t *bytes = fl_avro_file_writer_bytes(w);
        assert_int_equal(bytes->len, fl_avro_file_writer_position(w));
        fl_buf_append(copy, bytes->data, bytes->len);
    }
    fl_avro_file_writer_destroy(w);
    fl_avro_schema_destroy(s);
}

/* Reads every record; the count read, or -1 with *e set. */
static int read_all(fl_avro_file_reader_t *r, fl_error_t *e) {
    int n = 0;
    for (;;) {
        const fl_avro_value_t *v;
        if (fl_avro_file_reader_next(r, &v, e)) return -1;
        if (!v) return n;
        assert_manifest_value(fl_avro_file_reader_schema(r), v, n);
        n++;
    }
}

static void assert_meta(const fl_avro_file_reader_t *r, const char *key, const char *value) {
    const fl_avro_meta_t *m = fl_avro_file_reader_meta(r, key);
    assert_non_null(m);
    assert_int_equal(m->len, strlen(value));
    assert_memory_equal(m->value, value, m->len);
}

static void test_ocf_round_trip(void **state) {
    fl_buf_t b;
    fl_buf_init(&b);
    size_t header_len;
    write_manifest(NULL, &b, &header_len);
    assert_memory_equal(b.data, "Obj\x01", 4);
    assert_memory_equal(b.data + header_len - 16, SYNC, 16);
    assert_memory_equal(b.data + b.len - 16, SYNC, 16);

    fl_avro_file_reader_t *r;
    fl_error_t e;
    assert_int_equal(fl_avro_file_reader_open_bytes(b.data, b.len, &r, &e), 0);
    assert_int_equal(fl_avro_file_reader_meta_count(r), 7);
    assert_string_equal(fl_avro_file_reader_meta_at(r, 0)->key, "avro.schema");
    assert_meta(r, "avro.codec", "null");
    assert_meta(r, "format-version", "2");
    assert_meta(r, "content", "data");
    assert_meta(r, "partition-spec-id", "0");
    assert_null(fl_avro_file_reader_meta(r, "nope"));
    const fl_avro_schema_t *s = fl_avro_file_reader_schema(r);
    assert_string_equal(s->name, "manifest_entry");
    assert_int_equal(s->fields[2].field_id, 2);
    assert_int_equal(s->fields[2].type->fields[5].type->branches[1]->element_id, 133);
    assert_int_equal(read_all(r, &e), RECORDS);
    fl_avro_file_reader_destroy(r);

    /* the same through a file */
    char path[512];
    snprintf(path, sizeof(path), "%s/m.avro", (char *)*state);
    write_manifest(path, NULL, &header_len);
    assert_int_equal(fl_avro_file_reader_open(path, &r, &e), 0);
    assert_int_equal(read_all(r, &e), RECORDS);
    fl_avro_file_reader_destroy(r);
    fl_buf_free(&b);
}

static void test_ocf_writer_checks(void **state) {
    (void)state;
    fl_avro_schema_t *s = fl_avro_schema_new(FL_AVRO_LONG);
    fl_avro_file_options_t o;
    fl_avro_file_options_init(&o);
    fl_avro_file_writer_t *w;
    fl_error_t e;
    fl_avro_meta_t m[2] = {fl_avro_meta_str("avro.codec", "deflate"), fl_avro_meta_str("k", "v")};
    assert_error(fl_avro_file_writer_open(NULL, s, m, 1, &o, &w, &e), e, FLUSS_ERR__INVALID_ARG,
                 "\"avro.codec\" is reserved");
    m[0] = fl_avro_meta_str("k", "w");
    assert_error(fl_avro_file_writer_open(NULL, s, m, 2, &o, &w, &e), e, FLUSS_ERR__INVALID_ARG,
                 "metadata key k twice");
    assert_error(fl_avro_file_writer_open("/nonexistent/dir/x.avro", s, m, 1, &o, &w, &e), e,
                 FLUSS_ERR__IO, "avro: create");
    /* a record of the wrong type leaves the block as it was */
    assert_int_equal(fl_avro_file_writer_open(NULL, s, m, 1, &o, &w, &e), 0);
    fl_avro_value_t v;
    fl_avro_value_set_int(&v, 3);
    assert_error(fl_avro_file_writer_append(w, &v, &e), e, FLUSS_ERR__INVALID_ARG,
                 "int given for long");
    fl_avro_value_set_long(&v, 3);
    assert_int_equal(fl_avro_file_writer_append(w, &v, &e), 0);
    assert_int_equal(fl_avro_file_writer_finish(w, &e), 0);
    fl_avro_file_reader_t *r;
    const fl_buf_t *bytes = fl_avro_file_writer_bytes(w);
    assert_int_equal(fl_avro_file_reader_open_bytes(bytes->data, bytes->len, &r, &e), 0);
    const fl_avro_value_t *got;
    assert_int_equal(fl_avro_file_reader_next(r, &got, &e), 0);
    assert_int_equal(got->u.l, 3);
    assert_int_equal(fl_avro_file_reader_next(r, &got, &e), 0);
    assert_null(got);
    fl_avro_file_reader_destroy(r);
    fl_avro_file_writer_destroy(w);
    fl_avro_schema_destroy(s);
}

/* A header by hand: magic, the given metadata (key/value text pairs), sync. */
static void hand_header(fl_buf_t *b, const char *const *kv, size_t n) {
    fl_buf_append(b, "Obj\x01", 4);
    fl_avro_put_block(b, (int64_t)n);
    for (size_t i = 0; i < n; i++) {
        fl_avro_put_string(b, kv[2 * i]);
        fl_avro_put_string(b, kv[2 * i + 1]);
    }
    fl_avro_put_block(b, 0);
    fl_buf_append(b, SYNC, 16);
}

static int open_error(const fl_buf_t *b, fl_error_t *e) {
    fl_avro_file_reader_t *r;
    int rc = fl_avro_file_reader_open_bytes(b->data, b->len, &r, e);
    if (rc) return rc;
    const fl_avro_value_t *v;
    do {
        rc = fl_avro_file_reader_next(r, &v, e);
    } while (!rc && v);
    fl_avro_file_reader_destroy(r);
    return rc;
}

/* A file of longs 0..n-1 in one deflate block (raw RFC 1951, as Avro's
 * Java DeflateCodec writes it); cut: the compressed bytes shortened by
 * that many, flip: one of them changed. */
static void deflate_file(fl_buf_t *b, int n, size_t cut, bool flip) {
    const char *kv[] = {"avro.schema", "\"long\"", "avro.codec", "deflate"};
    fl_buf_reset(b);
    hand_header(b, kv, 2);
    fl_buf_t raw;
    fl_buf_init(&raw);
    for (int i = 0; i < n; i++) fl_avro_put_long(&raw, i);
    z_stream z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
    uint8_t *out = malloc(raw.len + 1024);
    z.next_in = raw.data;
    z.avail_in = (uInt)raw.len;
    z.next_out = out;
    z.avail_out = (uInt)(raw.len + 1024);
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t clen = z.total_out - cut;
    deflateEnd(&z);
    if (flip) out[clen / 2] ^= 0x5a;
    fl_avro_put_long(b, n);
    fl_avro_put_long(b, (int64_t)clen);
    fl_buf_append(b, out, clen);
    fl_buf_append(b, SYNC, 16);
    free(out);
    fl_buf_free(&raw);
}

static void test_ocf_deflate(void **state) {
    (void)state;
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t e;
    deflate_file(&b, 5000, 0, false);
    fl_avro_file_reader_t *r;
    assert_int_equal(fl_avro_file_reader_open_bytes(b.data, b.len, &r, &e), 0);
    int64_t want = 0;
    for (;;) {
        const fl_avro_value_t *v;
        assert_int_equal(fl_avro_file_reader_next(r, &v, &e), 0);
        if (!v) break;
        assert_int_equal(v->u.l, want);
        want++;
    }
    assert_int_equal(want, 5000);
    fl_avro_file_reader_destroy(r);
    /* cut short, corrupted, a count the inflated bytes cannot hold */
    deflate_file(&b, 5000, 3, false);
    assert_int_equal(open_error(&b, &e), FLUSS_ERR__CORRUPT);
    deflate_file(&b, 5000, 0, true);
    assert_int_equal(open_error(&b, &e), FLUSS_ERR__CORRUPT);
    fl_buf_free(&b);
}

static void test_ocf_rejects(void **state) {
    (void)state;
    fl_buf_t good;
    fl_buf_init(&good);
    size_t header_len;
    write_manifest(NULL, &good, &header_len);
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t e;

    fl_buf_append(&b, good.data, good.len);
    b.data[3] = 2;
    assert_error(open_error(&b, &e), e, FLUSS_ERR__CORRUPT, "bad magic");
    /* the second block's sync marker */
    b.data[3] = 1;
    fl_avro_reader_t rd;
    fl_avro_reader_init(&rd, b.data + header_len, b.len - header_len);
    int64_t count, size;
    assert_int_equal(fl_avro_read_long(&rd, &count, NULL), 0);
    assert_int_equal(count, 7);
    assert_int_equal(fl_avro_read_long(&rd, &size, NULL), 0);
    size_t sync_at = header_len + rd.pos + (size_t)size;
    assert_memory_equal(b.data + sync_at, SYNC, 16);
    b.data[sync_at + 5] ^= 1;
    assert_error(open_error(&b, &e), e, FLUSS_ERR__CORRUPT, "sync marker differs");
    b.data[sync_at + 5] ^= 1;
    /* a record count the block's bytes cannot hold */
    b.data[header_len] = 0x7e; /* 63 records */
    assert_error(open_error(&b, &e), e, FLUSS_ERR__CORRUPT, "63 records cannot fit");
    /* fewer records than the block holds */
    b.data[header_len] = 0x0c; /* 6 */
    assert_error(open_error(&b, &e), e, FLUSS_ERR__CORRUPT, "bytes in a block after its records");
    /* more: the block ends inside the seventh */
    b.data[header_len] = 0x10; /* 8 */
    assert_error(open_error(&b, &e), e, FLUSS_ERR__CORRUPT, "truncated");

    /* every truncation: an error, or (cut at a block's end) fewer records */
    for (size_t cut = 0; cut < good.len; cut++) {
        fl_avro_file_reader_t *r;
        int rc = fl_avro_file_reader_open_bytes(good.data, cut, &r, &e);
        if (rc) {
            assert_int_equal(rc, FLUSS_ERR__CORRUPT);
            assert_true(cut < header_len);
            continue;
        }
        assert_true(cut >= header_len);
        int n = read_all(r, &e);
        if (n < 0)
            assert_int_equal(e.code, FLUSS_ERR__CORRUPT);
        else
            assert_true(n % 7 == 0 && n < RECORDS);
        fl_avro_file_reader_destroy(r);
    }

    /* codecs, missing schema, bad schema, metadata keys */
    const char *snappy[] = {"avro.schema", "\"long\"", "avro.codec", "snappy"};
    fl_buf_reset(&b);
    hand_header(&b, snappy, 2);
    assert_error(open_error(&b, &e), e, FLUSS_ERR__INVALID_ARG, "codec \"snappy\"");
    const char *none[] = {"k", "v"};
    fl_buf_reset(&b);
    hand_header(&b, none, 1);
    assert_error(open_error(&b, &e), e, FLUSS_ERR__CORRUPT, "no avro.schema");
    const char *bad[] = {"avro.schema", "{\"type\":\"record\""};
    fl_buf_reset(&b);
    hand_header(&b, bad, 1);
    assert_error(open_error(&b, &e), e, FLUSS_ERR__CORRUPT, "avro schema: JSON");
    const char *twice[] = {"avro.schema", "\"long\"", "avro.schema", "\"int\""};
    fl_buf_reset(&b);
    hand_header(&b, twice, 2);
    assert_error(open_error(&b, &e), e, FLUSS_ERR__CORRUPT, "metadata key avro.schema twice");
    /* a metadata value past the end */
    const char *one[] = {"avro.schema", "\"long\""};
    fl_buf_reset(&b);
    hand_header(&b, one, 1);
    b.data[4 + 1 + 12] = 0x7e; /* the value's length: 63 */
    assert_error(open_error(&b, &e), e, FLUSS_ERR__CORRUPT, "metadata: [0]: avro: length 63");
    /* an overlong varint as a block count */
    fl_buf_reset(&b);
    hand_header(&b, one, 1);
    fl_buf_append(&b, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
    assert_error(open_error(&b, &e), e, FLUSS_ERR__CORRUPT, "varint over 10 bytes");
    /* a block's size past the end; a negative record count */
    fl_buf_reset(&b);
    hand_header(&b, one, 1);
    fl_buf_append(&b, "\x02\x7e\x02", 3);
    assert_error(open_error(&b, &e), e, FLUSS_ERR__CORRUPT, "1 records in 63 bytes, 1 bytes left");
    fl_buf_reset(&b);
    hand_header(&b, one, 1);
    fl_buf_append(&b, "\x01\x02\x02", 3);
    fl_buf_append(&b, SYNC, 16);
    assert_error(open_error(&b, &e), e, FLUSS_ERR__CORRUPT, "-1 records");
    /* a file with no blocks is empty; a record after an error is refused */
    fl_buf_reset(&b);
    hand_header(&b, one, 1);
    fl_avro_file_reader_t *r;
    assert_int_equal(fl_avro_file_reader_open_bytes(b.data, b.len, &r, &e), 0);
    const fl_avro_value_t *v;
    assert_int_equal(fl_avro_file_reader_next(r, &v, &e), 0);
    assert_null(v);
    fl_avro_file_reader_destroy(r);
    fl_buf_append(&b, "\x02\x02\x03", 3); /* one long (-2), no sync */
    assert_int_equal(fl_avro_file_reader_open_bytes(b.data, b.len, &r, &e), 0);
    assert_error(fl_avro_file_reader_next(r, &v, &e), e, FLUSS_ERR__CORRUPT, "bytes left");
    assert_error(fl_avro_file_reader_next(r, &v, &e), e, FLUSS_ERR__STATE, "failed earlier");
    fl_avro_file_reader_destroy(r);
    /* records of no bytes: bounded per block */
    const char *nul[] = {"avro.schema", "\"null\""};
    fl_buf_reset(&b);
    hand_header(&b, nul, 1);
    fl_avro_put_long(&b, FL_AVRO_BLOCK_EMPTY_RECORDS_MAX + 1);
    fl_avro_put_long(&b, 0);
    fl_buf_append(&b, SYNC, 16);
    assert_error(open_error(&b, &e), e, FLUSS_ERR__CORRUPT, "cannot fit in 0 bytes");

    fl_buf_free(&b);
    fl_buf_free(&good);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zigzag_vectors),
        cmocka_unit_test(test_primitive_round_trips),
        cmocka_unit_test(test_reader_rejects),
        cmocka_unit_test(test_schema_json),
        cmocka_unit_test(test_schema_parse_errors),
        cmocka_unit_test(test_value_round_trips),
        cmocka_unit_test(test_encode_mismatch),
        cmocka_unit_test(test_blocks),
        cmocka_unit_test_setup_teardown(test_ocf_round_trip, setup, teardown),
        cmocka_unit_test(test_ocf_writer_checks),
        cmocka_unit_test(test_ocf_rejects),
        cmocka_unit_test(test_ocf_deflate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
