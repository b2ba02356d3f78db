/*
 * test_types_key.c — key encodings by lake format (types_key.h):
 *
 * - standard MurmurHash3 x86_32 and Iceberg's bucket transform against
 *   the Iceberg specification's vectors (Appendix B) for int, long,
 *   decimal, date, time, timestamp, string and binary, encoded from rows
 *   as Fluss's IcebergKeyEncoder does;
 * - the codec a table's keys take (no lake format, LANCE, ICEBERG,
 *   PAIMON; the primary key under kv format version 2 with a bucket key
 *   of its own);
 * - decoding an Iceberg key back into its column, and what is refused;
 * - decoding a whole key by codec (compacted, Iceberg).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common_murmur.h"
#include "types_key.h"

typedef struct one_col {
    fl_schema_t schema;
    fl_column_t col;
    fl_row_t row;
} one_col_t;

static void one_col_init(one_col_t *o, fl_type_root_t root) {
    memset(o, 0, sizeof(*o));
    o->col.name = "k";
    o->col.type = fl_datatype_new(root);
    o->schema.column_count = 1;
    o->schema.columns = &o->col;
    fl_row_init(&o->row, 1);
    o->row.cells[0].is_null = false;
}

static void one_col_free(one_col_t *o) {
    fl_datatype_destroy(o->col.type);
    fl_row_free(&o->row);
}

/* Iceberg's bucket hash (before & INT_MAX) of the encoded key of o. */
static int32_t iceberg_hash(one_col_t *o) {
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t err;
    int32_t col = 0;
    assert_int_equal(fl_key_encode(FL_KEY_ICEBERG, &o->row, &o->schema, &col, 1, &b, &err), 0);
    int32_t h = (int32_t)fl_murmur3_32(b.data, b.len, 0);
    /* and it decodes back to the same key */
    fl_row_t back;
    fl_row_init(&back, 1);
    assert_int_equal(fl_key_iceberg_decode(b.data, b.len, o->col.type, &back, 0, &err), 0);
    fl_buf_t again;
    fl_buf_init(&again);
    assert_int_equal(fl_key_encode(FL_KEY_ICEBERG, &back, &o->schema, &col, 1, &again, &err), 0);
    assert_int_equal(again.len, b.len);
    assert_memory_equal(again.data, b.data, b.len);
    fl_buf_free(&again);
    fl_row_free(&back);
    fl_buf_free(&b);
    return h;
}

static void test_murmur3_vectors(void **state) {
    (void)state;
    assert_int_equal(fl_murmur3_32("", 0, 0), 0);
    assert_int_equal(fl_murmur3_32("hello", 5, 0), 0x248bfa47u);
    const char *fox = "The quick brown fox jumps over the lazy dog";
    assert_int_equal(fl_murmur3_32(fox, strlen(fox), 0), 0x2e4ff723u);
    const uint8_t bin[] = {0x00, 0x01, 0x02, 0x03};
    assert_int_equal((int32_t)fl_murmur3_32(bin, 4, 0), -188683207);
    /* the bucket: the hash's low 31 bits, mod n */
    assert_int_equal(fl_iceberg_bucket_of(bin, 4, 16), (int32_t)((-188683207 & 0x7fffffff) % 16));
    assert_int_equal(fl_key_bucket(FL_KEY_ICEBERG, bin, 4, 16), fl_iceberg_bucket_of(bin, 4, 16));
    assert_int_equal(fl_key_bucket(FL_KEY_COMPACTED, bin, 4, 16), fl_bucket_of(bin, 4, 16));
}

static void test_iceberg_spec_vectors(void **state) {
    (void)state;
    one_col_t o;
    one_col_init(&o, FL_TYPE_INTEGER); /* hashed as a long */
    o.row.cells[0].i = 34;
    assert_int_equal(iceberg_hash(&o), 2017239379);
    one_col_free(&o);

    one_col_init(&o, FL_TYPE_BIGINT);
    o.row.cells[0].i = 34;
    assert_int_equal(iceberg_hash(&o), 2017239379);
    one_col_free(&o);

    one_col_init(&o, FL_TYPE_DECIMAL);
    o.col.type->precision = 4;
    o.col.type->scale = 2;
    o.row.cells[0].dec = 1420; /* 14.20 */
    assert_int_equal(iceberg_hash(&o), -500754589);
    one_col_free(&o);

    one_col_init(&o, FL_TYPE_DATE);
    o.row.cells[0].i = 17486; /* 2017-11-16 */
    assert_int_equal(iceberg_hash(&o), -653330422);
    one_col_free(&o);

    one_col_init(&o, FL_TYPE_TIME);
    o.row.cells[0].i = (22 * 3600 + 31 * 60 + 8) * 1000; /* 22:31:08, ms */
    assert_int_equal(iceberg_hash(&o), -662762989);
    one_col_free(&o);

    one_col_init(&o, FL_TYPE_TIMESTAMP);
    o.col.type->precision = 6;
    o.row.cells[0].i = 1510871468000; /* 2017-11-16T22:31:08 */
    assert_int_equal(iceberg_hash(&o), -2047944441);
    o.row.cells[0].nanos = 1000; /* .000001 */
    assert_int_equal(iceberg_hash(&o), -1207196810);
    one_col_free(&o);

    one_col_init(&o, FL_TYPE_STRING);
    fl_row_set_bytes(&o.row, 0, "iceberg", 7);
    assert_int_equal(iceberg_hash(&o), 1210000089);
    one_col_free(&o);

    one_col_init(&o, FL_TYPE_BYTES);
    fl_row_set_bytes(&o.row, 0, "\x00\x01\x02\x03", 4);
    assert_int_equal(iceberg_hash(&o), -188683207);
    one_col_free(&o);

    /* before the epoch: floor division keeps the key */
    one_col_init(&o, FL_TYPE_TIMESTAMP);
    o.row.cells[0].i = -1;
    o.row.cells[0].nanos = 999000;
    iceberg_hash(&o);
    one_col_free(&o);
    one_col_init(&o, FL_TYPE_DOUBLE);
    o.row.cells[0].d = -2.5;
    iceberg_hash(&o);
    one_col_free(&o);
    one_col_init(&o, FL_TYPE_FLOAT);
    o.row.cells[0].d = 1.5;
    iceberg_hash(&o);
    one_col_free(&o);
}

static void test_codec_choice(void **state) {
    (void)state;
    assert_int_equal(fl_key_codec_of_lake(NULL), FL_KEY_COMPACTED);
    assert_int_equal(fl_key_codec_of_lake("lance"), FL_KEY_COMPACTED);
    assert_int_equal(fl_key_codec_of_lake("iceberg"), FL_KEY_ICEBERG);
    assert_int_equal(fl_key_codec_of_lake("ICEBERG"), FL_KEY_ICEBERG);
    assert_int_equal(fl_key_codec_of_lake("paimon"), FL_KEY_UNSUPPORTED);
    /* the primary key: the lake's, unless version 2 and a bucket key of
     * its own */
    assert_int_equal(fl_key_codec_of_primary("iceberg", "2", true), FL_KEY_ICEBERG);
    assert_int_equal(fl_key_codec_of_primary("iceberg", "2", false), FL_KEY_COMPACTED);
    assert_int_equal(fl_key_codec_of_primary("iceberg", NULL, false), FL_KEY_ICEBERG);
    assert_int_equal(fl_key_codec_of_primary(NULL, "2", true), FL_KEY_COMPACTED);
}

static void test_refused(void **state) {
    (void)state;
    fl_error_t err;
    fl_buf_t b;
    fl_buf_init(&b);
    one_col_t o;
    one_col_init(&o, FL_TYPE_BOOLEAN);
    int32_t col = 0;
    assert_int_equal(fl_key_encode(FL_KEY_ICEBERG, &o.row, &o.schema, &col, 1, &b, &err),
                     FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(err.msg, "cannot hash"));
    one_col_free(&o);
    one_col_init(&o, FL_TYPE_INTEGER);
    o.row.cells[0].is_null = true;
    assert_int_equal(fl_key_encode(FL_KEY_ICEBERG, &o.row, &o.schema, &col, 1, &b, &err),
                     FLUSS_ERR__INVALID_ARG);
    int32_t two[2] = {0, 0};
    o.row.cells[0].is_null = false;
    assert_int_equal(fl_key_encode(FL_KEY_ICEBERG, &o.row, &o.schema, two, 2, &b, &err),
                     FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(err.msg, "exactly one column"));
    assert_int_equal(fl_key_encode(FL_KEY_UNSUPPORTED, &o.row, &o.schema, &col, 1, &b, &err),
                     FLUSS_ERR__INVALID_ARG);
    /* keys that are no key of the type */
    fl_row_t back;
    fl_row_init(&back, 1);
    assert_int_equal(fl_key_iceberg_decode((const uint8_t *)"abc", 3, o.col.type, &back, 0, &err),
                     FLUSS_ERR__INVALID_ARG);
    const uint8_t big[8] = {0, 0, 0, 0, 1, 0, 0, 0}; /* 2^32: not an INT */
    assert_int_equal(fl_key_iceberg_decode(big, 8, o.col.type, &back, 0, &err),
                     FLUSS_ERR__INVALID_ARG);
    one_col_free(&o);
    one_col_init(&o, FL_TYPE_DECIMAL);
    o.col.type->precision = 10;
    const uint8_t redundant[2] = {0x00, 0x01};
    assert_int_equal(fl_key_iceberg_decode(redundant, 2, o.col.type, &back, 0, &err),
                     FLUSS_ERR__INVALID_ARG);
    one_col_free(&o);
    fl_row_free(&back);
    fl_buf_free(&b);
}

/* fl_key_decode takes back what fl_key_encode wrote, by codec: the
 * primary key a LOOKUP's insert_if_not_exists turns into a row. */
static void test_key_decode(void **state) {
    (void)state;
    fl_column_t cols[2] = {{.name = "id", .type = fl_datatype_new(FL_TYPE_INTEGER)},
                           {.name = "s", .type = fl_datatype_new(FL_TYPE_STRING)}};
    fl_schema_t schema = {.column_count = 2, .columns = cols};
    const fl_datatype_t *types[2] = {cols[0].type, cols[1].type};
    fl_row_t row, back;
    fl_row_init(&row, 2);
    fl_row_init(&back, 2);
    row.cells[0].is_null = false;
    row.cells[0].i = -7;
    fl_row_set_bytes(&row, 1, "key", 3);
    fl_buf_t key, scratch;
    fl_buf_init(&key);
    fl_buf_init(&scratch);
    fl_error_t err;
    int32_t both[2] = {0, 1};
    assert_int_equal(fl_key_encode(FL_KEY_COMPACTED, &row, &schema, both, 2, &key, &err), 0);
    assert_int_equal(
        fl_key_decode(FL_KEY_COMPACTED, key.data, key.len, types, 2, &scratch, &back, &err), 0);
    assert_int_equal(back.cells[0].i, -7);
    assert_int_equal(back.cells[1].len, 3);
    assert_memory_equal(fl_row_cell_bytes(&back, &back.cells[1]), "key", 3);
    /* a byte more is no key */
    fl_buf_put_u8(&key, 0);
    assert_int_not_equal(
        fl_key_decode(FL_KEY_COMPACTED, key.data, key.len, types, 2, &scratch, &back, &err), 0);

    key.len = 0;
    assert_int_equal(fl_key_encode(FL_KEY_ICEBERG, &row, &schema, both, 1, &key, &err), 0);
    assert_int_equal(key.len, 8);
    assert_int_equal(
        fl_key_decode(FL_KEY_ICEBERG, key.data, key.len, types, 1, &scratch, &back, &err), 0);
    assert_int_equal(back.column_count, 1);
    assert_int_equal(back.cells[0].i, -7);
    assert_int_equal(
        fl_key_decode(FL_KEY_ICEBERG, key.data, key.len, types, 2, &scratch, &back, &err),
        FLUSS_ERR__INVALID_ARG);
    assert_int_equal(
        fl_key_decode(FL_KEY_UNSUPPORTED, key.data, key.len, types, 1, &scratch, &back, &err),
        FLUSS_ERR__INVALID_ARG);
    fl_buf_free(&key);
    fl_buf_free(&scratch);
    fl_row_free(&row);
    fl_row_free(&back);
    fl_datatype_destroy(cols[0].type);
    fl_datatype_destroy(cols[1].type);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_murmur3_vectors),
        cmocka_unit_test(test_iceberg_spec_vectors),
        cmocka_unit_test(test_codec_choice),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_key_decode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
