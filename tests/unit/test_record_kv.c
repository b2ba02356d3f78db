/*
 * test_record_kv.c — the record formats of primary-key tables:
 * KvRecordBatch (record_kv.h) byte for byte against a vector derived by
 * hand from protocol.md §5.1 (CRC-32C computed independently), builder →
 * parser → iterator round trips (deletes, long keys, empty batch, writer
 * state rewritten), every corrupt case refused with a message naming the
 * record; DefaultValueRecordBatch (record_value.h) likewise; changelog
 * ARROW batches from record_builder.h: header, attributes bit0 = 0, the
 * change-type vector, the Arrow rows after it, the server's validator and
 * projection keeping the vector, and the empty changelog batch byte for
 * byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "record_batch.h"
#include "record_builder.h"
#include "record_kv.h"
#include "record_project.h"
#include "record_validate.h"
#include "record_value.h"
#include "test_types_util.h"

#define CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION

/* ---- KvRecordBatch ---- */

/* schema 3, writer 7, sequence 2: put "k1" = AA BB, delete "k2" */
static const uint8_t kKvVector[44] = {
    0x28, 0x00, 0x00, 0x00,                         /* Length 40 */
    0x00,                                           /* Magic */
    0xd8, 0x44, 0xbc, 0x1d,                         /* CRC-32C of [9, 44) */
    0x03, 0x00,                                     /* SchemaId */
    0x00,                                           /* Attributes */
    0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* WriterId */
    0x02, 0x00, 0x00, 0x00,                         /* BatchSequence */
    0x02, 0x00, 0x00, 0x00,                         /* RecordCount */
    0x05, 0x00, 0x00, 0x00, 0x02, 'k', '1', 0xaa, 0xbb,
    0x03, 0x00, 0x00, 0x00, 0x02, 'k', '2',
};

static void build_vector(fl_buf_t *out) {
    fl_kv_batch_builder_t b;
    fl_kv_batch_builder_init(&b, 3, 7, 2);
    const uint8_t v[2] = {0xaa, 0xbb};
    fl_kv_batch_builder_add(&b, (const uint8_t *)"k1", 2, v, 2);
    fl_kv_batch_builder_add(&b, (const uint8_t *)"k2", 2, NULL, 0);
    assert_int_equal(fl_kv_batch_builder_count(&b), 2);
    assert_int_equal(fl_kv_batch_builder_size(&b), sizeof(kKvVector));
    fl_kv_batch_builder_finish(&b, out);
    assert_int_equal(fl_kv_batch_builder_count(&b), 0);
    fl_kv_batch_builder_free(&b);
}

static void test_kv_layout(void **state) {
    (void)state;
    fl_buf_t out;
    fl_buf_init(&out);
    build_vector(&out);
    assert_int_equal(out.len, sizeof(kKvVector));
    assert_memory_equal(out.data, kKvVector, sizeof(kKvVector));
    fl_kv_batch_view_t v;
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_kv_batch_parse(kKvVector, sizeof(kKvVector), &v, &err), 0);
    assert_int_equal(v.size, 44);
    assert_int_equal(v.magic, 0);
    assert_int_equal(v.schema_id, 3);
    assert_int_equal(v.attributes, 0);
    assert_int_equal(v.writer_id, 7);
    assert_int_equal(v.batch_sequence, 2);
    assert_int_equal(v.record_count, 2);
    assert_int_equal(v.crc, 0x1dbc44d8u);
    assert_ptr_equal(v.records, kKvVector + 28);
    assert_int_equal(v.records_len, 16);
    assert_true(fl_kv_batch_crc_ok(&v));
    fl_kv_batch_iter_t it;
    fl_kv_record_t r;
    fl_kv_batch_iter_init(&it, &v);
    assert_int_equal(fl_kv_batch_next(&it, &r, &err), FL_KV_NEXT_RECORD);
    assert_int_equal(r.key_len, 2);
    assert_memory_equal(r.key, "k1", 2);
    assert_int_equal(r.value_len, 2);
    assert_ptr_equal(r.value, kKvVector + 35); /* zero-copy */
    assert_false(r.is_delete);
    assert_int_equal(fl_kv_batch_next(&it, &r, &err), FL_KV_NEXT_RECORD);
    assert_memory_equal(r.key, "k2", 2);
    assert_true(r.is_delete);
    assert_null(r.value);
    assert_int_equal(r.value_len, 0);
    assert_int_equal(fl_kv_batch_next(&it, &r, &err), FL_KV_NEXT_END);
    assert_int_equal(fl_kv_batch_next(&it, &r, &err), FL_KV_NEXT_END);
    fl_buf_free(&out);
}

static void test_kv_round_trip(void **state) {
    (void)state;
    /* keys of 0, 127, 128 (two-byte varint), 300 and 20000 (three) bytes */
    static uint8_t big[20000];
    for (size_t i = 0; i < sizeof(big); i++) big[i] = (uint8_t)(i * 7 + 1);
    const size_t klens[] = {0, 127, 128, 300, 20000};
    const size_t vlens[] = {5, 0, 1, 1000, 3};
    fl_kv_batch_builder_t b;
    fl_kv_batch_builder_init(&b, -1, -1, -1);
    fl_buf_t out;
    fl_buf_init(&out);
    fl_buf_append(&out, "zz", 2); /* finish appends */
    for (size_t i = 0; i < 5; i++)
        fl_kv_batch_builder_add(&b, big, klens[i], vlens[i] ? big + 11 : NULL, vlens[i]);
    fl_kv_batch_builder_finish(&b, &out);
    fl_kv_batch_view_t v;
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_kv_batch_parse(out.data + 2, out.len - 2, &v, &err), 0);
    assert_int_equal(v.schema_id, -1);
    assert_int_equal(v.writer_id, -1);
    assert_int_equal(v.batch_sequence, -1);
    assert_int_equal(v.record_count, 5);
    assert_true(fl_kv_batch_crc_ok(&v));
    /* the 128-byte key's varint is 80 01 */
    size_t pos = 28 + 4 + 1 + 0 + 5 + 4 + 1 + 127 + 4;
    assert_int_equal(v.data[pos], 0x80);
    assert_int_equal(v.data[pos + 1], 0x01);
    fl_kv_batch_iter_t it;
    fl_kv_record_t r;
    fl_kv_batch_iter_init(&it, &v);
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(fl_kv_batch_next(&it, &r, &err), FL_KV_NEXT_RECORD);
        assert_int_equal(r.key_len, klens[i]);
        if (klens[i]) assert_memory_equal(r.key, big, klens[i]);
        assert_int_equal(r.value_len, vlens[i]);
        assert_int_equal(r.is_delete, vlens[i] == 0);
        if (vlens[i]) assert_memory_equal(r.value, big + 11, vlens[i]);
    }
    assert_int_equal(fl_kv_batch_next(&it, &r, &err), FL_KV_NEXT_END);

    /* writer state set after building: same bytes as built with it */
    fl_kv_batch_set_writer_state(out.data + 2, out.len - 2, 42, 9);
    fl_kv_batch_builder_t b2;
    fl_kv_batch_builder_init(&b2, -1, 42, 9);
    for (size_t i = 0; i < 5; i++)
        fl_kv_batch_builder_add(&b2, big, klens[i], vlens[i] ? big + 11 : NULL, vlens[i]);
    fl_buf_t out2;
    fl_buf_init(&out2);
    fl_kv_batch_builder_finish(&b2, &out2);
    assert_int_equal(out2.len, out.len - 2);
    assert_memory_equal(out2.data, out.data + 2, out2.len);

    /* the builder is reusable; an empty batch is the header alone */
    fl_buf_t empty;
    fl_buf_init(&empty);
    fl_kv_batch_builder_finish(&b, &empty);
    assert_int_equal(empty.len, FL_KV_BATCH_HEADER);
    assert_int_equal(fl_kv_batch_parse(empty.data, empty.len, &v, &err), 0);
    assert_int_equal(v.record_count, 0);
    assert_true(fl_kv_batch_crc_ok(&v));
    fl_kv_batch_iter_init(&it, &v);
    assert_int_equal(fl_kv_batch_next(&it, &r, &err), FL_KV_NEXT_END);
    fl_kv_batch_builder_free(&b);
    fl_kv_batch_builder_free(&b2);
    fl_buf_free(&out);
    fl_buf_free(&out2);
    fl_buf_free(&empty);
}

/* Parses p[0, len) expecting CORRUPT with `what` in the message. */
static void kv_refused(const uint8_t *p, size_t len, const char *what) {
    fl_kv_batch_view_t v;
    fl_error_t err;
    fl_err_clear(&err);
    int rc = fl_kv_batch_parse(p, len, &v, &err);
    if (rc != CORRUPT || !strstr(err.msg, what)) {
        fprintf(stderr, "expected \"%s\", got %d \"%s\"\n", what, rc, err.msg);
        fail();
    }
}

/* A copy of the vector with records replaced by rec[0, n) and the Length
 * and RecordCount given. */
static size_t kv_with(uint8_t *buf, const uint8_t *rec, size_t n, int32_t count) {
    memcpy(buf, kKvVector, FL_KV_BATCH_HEADER);
    memcpy(buf + FL_KV_BATCH_HEADER, rec, n);
    fl_put_le32(buf, (uint32_t)(FL_KV_BATCH_HEADER + n - 4));
    fl_put_le32(buf + 24, (uint32_t)count);
    return FL_KV_BATCH_HEADER + n;
}

static void test_kv_corrupt(void **state) {
    (void)state;
    uint8_t b[128];
    memcpy(b, kKvVector, sizeof(kKvVector));
    kv_refused(b, 27, "shorter than its 28-byte header");
    kv_refused(b, 0, "shorter than its 28-byte header");
    kv_refused(b, 43, "length 40 does not match its 43 bytes");
    memcpy(b + 44, "xx", 2); /* a second batch or garbage after it */
    kv_refused(b, 46, "length 40 does not match its 46 bytes");
    fl_put_le32(b, 23);
    kv_refused(b, 27, "shorter");
    kv_refused(b, 44, "length 23 does not match");
    fl_put_le32(b, (uint32_t)-1);
    kv_refused(b, 44, "length -1 does not match");
    memcpy(b, kKvVector, sizeof(kKvVector));
    b[4] = 1;
    kv_refused(b, 44, "unsupported kv record batch magic 1");
    b[4] = 0xff;
    kv_refused(b, 44, "magic -1");
    memcpy(b, kKvVector, sizeof(kKvVector));
    fl_put_le32(b + 24, (uint32_t)-1);
    kv_refused(b, 44, "negative record count -1");
    fl_put_le32(b + 24, 3);
    kv_refused(b, 44, "declares 3 records but holds 2");
    fl_put_le32(b + 24, 1);
    kv_refused(b, 44, "declares 1 records but 7 bytes follow them");
    fl_put_le32(b + 24, 0);
    kv_refused(b, 44, "declares 0 records but 16 bytes follow them");
    {   /* count above what the bytes hold, records parsed fine */
        size_t n = kv_with(b, kKvVector + 28, 9, 2);
        kv_refused(b, n, "declares 2 records but holds 1");
        uint8_t partial[11];
        memcpy(partial, kKvVector + 28, 9);
        partial[9] = 1;
        partial[10] = 0;
        n = kv_with(b, partial, 11, 2);
        kv_refused(b, n, "kv record 1: its length field is cut off (2 bytes left)");
    }
    {
        const uint8_t r[] = {0, 0, 0, 0};
        kv_refused(b, kv_with(b, r, sizeof(r), 1), "kv record 0: length 0 is below");
    }
    {
        const uint8_t r[] = {0xff, 0xff, 0xff, 0xff, 0x00};
        kv_refused(b, kv_with(b, r, sizeof(r), 1), "kv record 0: length -1 is below");
    }
    {
        const uint8_t r[] = {0x06, 0, 0, 0, 0x01, 'a', 'b', 'c', 'd'};
        kv_refused(b, kv_with(b, r, sizeof(r), 1),
                   "kv record 0: length 6 runs past the batch (5 bytes left)");
    }
    {
        const uint8_t r[] = {0x00, 0, 0, 0x80, 0x01};
        kv_refused(b, kv_with(b, r, sizeof(r), 1), "length -2147483648 is below");
    }
    {
        const uint8_t r[] = {0x01, 0, 0, 0, 0x80};
        kv_refused(b, kv_with(b, r, sizeof(r), 1),
                   "kv record 0: the key-length varint is cut off by the record's end");
    }
    {
        const uint8_t r[] = {0x06, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
        kv_refused(b, kv_with(b, r, sizeof(r), 1), "key-length varint runs past 5 bytes");
    }
    {
        const uint8_t r[] = {0x03, 0, 0, 0, 0x81, 0x00, 'a'};
        kv_refused(b, kv_with(b, r, sizeof(r), 1), "key-length varint is not minimally encoded");
    }
    {
        const uint8_t r[] = {0x05, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f};
        kv_refused(b, kv_with(b, r, sizeof(r), 1), "key-length varint is above 2^31 - 1");
    }
    {
        const uint8_t r[] = {0x05, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x08}; /* 2^31 */
        kv_refused(b, kv_with(b, r, sizeof(r), 1), "kv record 0: the key-length varint is above");
    }
    {
        const uint8_t r[] = {0x05, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x07};
        kv_refused(b, kv_with(b, r, sizeof(r), 1),
                   "kv record 0: key length 2147483647 runs past the record's 0 bytes");
    }
    {   /* the second record is the bad one */
        uint8_t r[9 + 5];
        memcpy(r, kKvVector + 28, 9);
        const uint8_t bad[] = {0x01, 0, 0, 0, 0x05};
        memcpy(r + 9, bad, 5);
        kv_refused(b, kv_with(b, r, sizeof(r), 2),
                   "kv record 1: key length 5 runs past the record's 0 bytes");
    }
    /* a parsed view whose bytes were not checked is still refused */
    fl_kv_batch_view_t v;
    fl_error_t err;
    assert_int_equal(fl_kv_batch_parse(kKvVector, sizeof(kKvVector), &v, &err), 0);
    v.records_len = 10;
    fl_kv_batch_iter_t it;
    fl_kv_record_t r;
    fl_kv_batch_iter_init(&it, &v);
    assert_int_equal(fl_kv_batch_next(&it, &r, &err), FL_KV_NEXT_RECORD);
    assert_int_equal(fl_kv_batch_next(&it, &r, &err), FL_KV_NEXT_ERROR);
    assert_int_equal(err.code, CORRUPT);
    assert_non_null(strstr(err.msg, "kv record 1"));
}

static void test_kv_crc(void **state) {
    (void)state;
    uint8_t b[44];
    for (size_t i = 0; i < sizeof(b); i++) {
        memcpy(b, kKvVector, sizeof(b));
        b[i] ^= 0x10;
        fl_kv_batch_view_t v;
        fl_error_t err;
        if (fl_kv_batch_parse(b, sizeof(b), &v, &err)) {
            assert_true(i < 9 || i >= 24); /* Length, Magic, counts, records */
            continue;
        }
        /* Length and Magic are outside the CRC; a flipped CRC byte fails */
        assert_true(i >= 5);
        assert_false(fl_kv_batch_crc_ok(&v));
    }
}

/* ---- DefaultValueRecordBatch ---- */

static const uint8_t kValueVector[] = {
    0x15, 0x00, 0x00, 0x00, /* Length 21 */
    0x00,                   /* Magic */
    0x02, 0x00, 0x00, 0x00, /* RecordCount */
    0x05, 0x00, 0x00, 0x00, 0x01, 0x00, 0xa1, 0xa2, 0xa3, /* schema 1, row a1 a2 a3 */
    0x03, 0x00, 0x00, 0x00, 0x02, 0x01, 0xb1,             /* schema 258, row b1 */
};

static void test_value_round_trip(void **state) {
    (void)state;
    fl_buf_t out;
    fl_buf_init(&out);
    fl_buf_append(&out, "q", 1);
    fl_value_batch_writer_t w;
    fl_value_batch_begin(&w, &out);
    const uint8_t row[3] = {0xa1, 0xa2, 0xa3};
    fl_value_batch_add(&w, 1, row, 3);
    const uint8_t stored[3] = {0x02, 0x01, 0xb1};
    fl_value_batch_add_value(&w, stored, 3);
    fl_value_batch_end(&w);
    assert_int_equal(out.len, 1 + sizeof(kValueVector));
    assert_memory_equal(out.data + 1, kValueVector, sizeof(kValueVector));

    fl_value_batch_view_t v;
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_value_batch_parse(kValueVector, sizeof(kValueVector), &v, &err), 0);
    assert_int_equal(v.magic, 0);
    assert_int_equal(v.record_count, 2);
    assert_int_equal(v.records_len, sizeof(kValueVector) - 9);
    fl_value_batch_iter_t it;
    fl_value_record_t r;
    fl_value_batch_iter_init(&it, &v);
    assert_int_equal(fl_value_batch_next(&it, &r, &err), FL_VALUE_NEXT_RECORD);
    assert_int_equal(r.schema_id, 1);
    assert_int_equal(r.row_len, 3);
    assert_memory_equal(r.row, row, 3);
    assert_ptr_equal(r.value, kValueVector + 13);
    assert_int_equal(r.value_len, 5);
    assert_int_equal(fl_value_batch_next(&it, &r, &err), FL_VALUE_NEXT_RECORD);
    assert_int_equal(r.schema_id, 258);
    assert_int_equal(r.row_len, 1);
    assert_int_equal(r.row[0], 0xb1);
    assert_int_equal(fl_value_batch_next(&it, &r, &err), FL_VALUE_NEXT_END);

    /* an empty batch: 05 00 00 00 | 00 | 00 00 00 00 */
    fl_buf_t e;
    fl_buf_init(&e);
    fl_value_batch_begin(&w, &e);
    fl_value_batch_end(&w);
    const uint8_t want[9] = {5, 0, 0, 0, 0, 0, 0, 0, 0};
    assert_int_equal(e.len, 9);
    assert_memory_equal(e.data, want, 9);
    assert_int_equal(fl_value_batch_parse(e.data, e.len, &v, &err), 0);
    assert_int_equal(v.record_count, 0);
    fl_value_batch_iter_init(&it, &v);
    assert_int_equal(fl_value_batch_next(&it, &r, &err), FL_VALUE_NEXT_END);
    /* an empty row is a record of 2 bytes */
    e.len = 0;
    fl_value_batch_begin(&w, &e);
    fl_value_batch_add(&w, 0, NULL, 0);
    fl_value_batch_end(&w);
    assert_int_equal(fl_value_batch_parse(e.data, e.len, &v, &err), 0);
    fl_value_batch_iter_init(&it, &v);
    assert_int_equal(fl_value_batch_next(&it, &r, &err), FL_VALUE_NEXT_RECORD);
    assert_int_equal(r.row_len, 0);
    fl_buf_free(&e);
    fl_buf_free(&out);
}

static void value_refused(const uint8_t *p, size_t len, const char *what) {
    fl_value_batch_view_t v;
    fl_error_t err;
    fl_err_clear(&err);
    int rc = fl_value_batch_parse(p, len, &v, &err);
    if (rc != CORRUPT || !strstr(err.msg, what)) {
        fprintf(stderr, "expected \"%s\", got %d \"%s\"\n", what, rc, err.msg);
        fail();
    }
}

static size_t value_with(uint8_t *buf, const uint8_t *rec, size_t n, int32_t count) {
    fl_put_le32(buf, (uint32_t)(9 + n - 4));
    buf[4] = 0;
    fl_put_le32(buf + 5, (uint32_t)count);
    memcpy(buf + 9, rec, n);
    return 9 + n;
}

static void test_value_corrupt(void **state) {
    (void)state;
    uint8_t b[64];
    const size_t n = sizeof(kValueVector);
    memcpy(b, kValueVector, n);
    value_refused(b, 8, "shorter than its 9-byte header");
    value_refused(b, n - 1, "length 21 does not match its 24 bytes");
    value_refused(b, n + 1, "length 21 does not match its 26 bytes");
    fl_put_le32(b, 4);
    value_refused(b, 8, "shorter");
    value_refused(b, n, "length 4 does not match");
    memcpy(b, kValueVector, n);
    b[4] = 1;
    value_refused(b, n, "unsupported value record batch magic 1");
    memcpy(b, kValueVector, n);
    fl_put_le32(b + 5, (uint32_t)-5);
    value_refused(b, n, "negative record count -5");
    fl_put_le32(b + 5, 3);
    value_refused(b, n, "declares 3 records but holds 2");
    fl_put_le32(b + 5, 1);
    value_refused(b, n, "declares 1 records but 7 bytes follow them");
    {
        const uint8_t r[] = {0x01, 0, 0, 0, 0x01};
        value_refused(b, value_with(b, r, sizeof(r), 1),
                      "value record 0: length 1 is below the 2 bytes of its schema id");
    }
    {
        const uint8_t r[] = {0x00, 0, 0, 0x80};
        value_refused(b, value_with(b, r, sizeof(r), 1), "length -2147483648 is below");
    }
    {
        const uint8_t r[] = {0x04, 0, 0, 0, 0x01, 0x00, 0xaa};
        value_refused(b, value_with(b, r, sizeof(r), 1),
                      "value record 0: length 4 runs past the batch (3 bytes left)");
    }
    {
        const uint8_t r[] = {0x02, 0, 0, 0, 0x01, 0x00, 0x02, 0x00};
        value_refused(b, value_with(b, r, sizeof(r), 2),
                      "value record 1: its length field is cut off (2 bytes left)");
    }
}

/* ---- changelog ARROW batches ---- */

static const char *const kCols[] = {"INT NOT NULL", "STRING"};

static void one_row(fl_row_t *r, int i, const char *s) {
    fl_row_clear(r);
    r->cells[0].is_null = false;
    r->cells[0].i = i;
    if (s) fl_row_set_bytes(r, 1, s, strlen(s));
}

static const fl_datatype_t *const *g_types;

static const fl_datatype_t *const *types_of(void *ctx, int16_t schema_id, size_t *n) {
    (void)ctx;
    if (schema_id != 1 && schema_id != 4) return NULL;
    *n = 2;
    return g_types;
}

static void test_changelog_batch(void **state) {
    (void)state;
    fl_schema_t s;
    test_schema_of(&s, kCols, 2);
    fl_record_builder_options_t o = {4, FL_ARROW_CODEC_NONE, 0};
    fl_record_builder_t b;
    fl_record_builder_init(&b, &s, &o);
    fl_row_t r;
    fl_row_init(&r, 2);
    one_row(&r, 1, "a");
    fl_record_builder_append_change(&b, &r, FL_CHANGE_INSERT);
    one_row(&r, 2, "old");
    fl_record_builder_append_change(&b, &r, FL_CHANGE_UPDATE_BEFORE);
    one_row(&r, 2, "new");
    fl_record_builder_append_change(&b, &r, FL_CHANGE_UPDATE_AFTER);
    one_row(&r, 3, NULL);
    fl_record_builder_append_change(&b, &r, FL_CHANGE_DELETE);
    one_row(&r, 4, "plain");
    fl_record_builder_append(&b, &r); /* +A in a changelog */
    fl_buf_t out;
    fl_buf_init(&out);
    fl_error_t err;
    fl_err_clear(&err);
    assert_int_equal(fl_record_builder_finish(&b, 11, 6, &out, &err), 0);

    fl_batch_view_t v;
    assert_int_equal(fl_batch_parse(out.data, out.len, &v, &err), 0);
    assert_int_equal(fl_batch_check_crc(&v, &err), 0);
    assert_int_equal(v.magic, 0);
    assert_int_equal(v.attributes, 0); /* not append-only */
    assert_int_equal(v.record_count, 5);
    assert_int_equal(v.last_offset_delta, 4);
    assert_int_equal(v.writer_id, 11);
    assert_int_equal(v.batch_sequence, 6);
    assert_int_equal(v.schema_id, 4);
    assert_int_equal(v.records_start, 48);
    const uint8_t vec[5] = {1, 2, 3, 4, 0};
    assert_memory_equal(out.data + 48, vec, 5);
    fl_arrow_batch_view_t av;
    assert_int_equal(fl_arrow_message_parse(out.data + 53, out.len - 53, &av, &err), 0);
    assert_int_equal(av.length, 5);
    assert_int_equal(av.message_len, out.len - 53); /* the message ends the batch */
    fl_buf_t buf;
    fl_buf_init(&buf);
    assert_int_equal(fl_arrow_buffer_get(&av, 1, 1 << 20, &buf, &err), 0); /* c0 values */
    assert_int_equal(buf.len, 20);
    const int32_t want[5] = {1, 2, 2, 3, 4};
    for (int i = 0; i < 5; i++) assert_int_equal(fl_get_le32(buf.data + 4 * i), want[i]);
    buf.len = 0;
    assert_int_equal(fl_arrow_buffer_get(&av, 2, 1 << 20, &buf, &err), 0); /* c1 validity */
    assert_int_equal(buf.data[0] & 0x1f, 0x17); /* row 3 NULL */
    buf.len = 0;
    assert_int_equal(fl_arrow_buffer_get(&av, 4, 1 << 20, &buf, &err), 0); /* c1 bytes */
    assert_int_equal(buf.len, 1 + 3 + 3 + 5);
    assert_memory_equal(buf.data, "aoldnewplain", 12);

    /* the server's validator accepts it; projection keeps the vector */
    g_types = (const fl_datatype_t *const[]){s.columns[0].type, s.columns[1].type};
    assert_int_equal(fl_record_validate(out.data, out.len, FL_LOG_FORMAT_ARROW, types_of, NULL,
                                        &err), 0);
    const int32_t f1[] = {1};
    fl_projection_t p = {.fields = f1, .field_count = 1};
    fl_buf_t proj;
    fl_buf_init(&proj);
    assert_int_equal(fl_record_project(out.data, out.len, &p, types_of, NULL, &proj, &err), 0);
    fl_batch_view_t pv;
    assert_int_equal(fl_batch_parse(proj.data, proj.len, &pv, &err), 0);
    assert_int_equal(pv.attributes, 0);
    assert_memory_equal(proj.data + 48, vec, 5);
    assert_int_equal(fl_arrow_message_parse(proj.data + 53, proj.len - 53, &av, &err), 0);
    assert_int_equal(av.length, 5);

    /* a bad change type byte is refused by the validator */
    out.data[50] = 5;
    fl_batch_refresh_crc(out.data, out.len);
    assert_int_equal(fl_record_validate(out.data, out.len, FL_LOG_FORMAT_ARROW, types_of, NULL,
                                        &err), CORRUPT);
    assert_non_null(strstr(err.msg, "record 2 has change type byte 5"));

    /* _clear makes it append-only again */
    fl_record_builder_clear(&b);
    one_row(&r, 9, "x");
    fl_record_builder_append(&b, &r);
    out.len = 0;
    assert_int_equal(fl_record_builder_finish(&b, -1, -1, &out, &err), 0);
    assert_int_equal(fl_batch_parse(out.data, out.len, &v, &err), 0);
    assert_int_equal(v.attributes, FL_BATCH_ATTR_APPEND_ONLY);
    assert_int_equal(fl_arrow_message_parse(out.data + 48, out.len - 48, &av, &err), 0);
    assert_int_equal(av.length, 1);
    assert_int_equal(fl_record_validate(out.data, out.len, FL_LOG_FORMAT_ARROW, types_of, NULL,
                                        &err), 0);

    fl_row_free(&r);
    fl_buf_free(&buf);
    fl_buf_free(&proj);
    fl_buf_free(&out);
    fl_record_builder_free(&b);
    fl_schema_free(&s);
}

/* schema 1, writer 9, sequence 4, no rows (CRC-32C computed apart) */
static const uint8_t kEmptyChangelog[48] = {
    0, 0, 0, 0, 0, 0, 0, 0, /* BaseOffset */
    0x24, 0, 0, 0,          /* Length 36 */
    0,                      /* Magic */
    0, 0, 0, 0, 0, 0, 0, 0, /* CommitTimestamp */
    0x69, 0xe9, 0x24, 0x68, /* CRC of [25, 48) */
    0x01, 0x00,             /* SchemaId */
    0x00,                   /* Attributes: not append-only */
    0, 0, 0, 0,             /* LastOffsetDelta 0 */
    0x09, 0, 0, 0, 0, 0, 0, 0, /* WriterId */
    0x04, 0, 0, 0,          /* BatchSequence */
    0, 0, 0, 0,             /* RecordCount 0 */
};

static void test_empty_changelog(void **state) {
    (void)state;
    fl_buf_t out;
    fl_buf_init(&out);
    fl_buf_append(&out, "p", 1);
    fl_record_builder_write_empty_changelog(&out, 1, 9, 4);
    assert_int_equal(out.len, 49);
    assert_memory_equal(out.data + 1, kEmptyChangelog, 48);

    /* a changelog builder finished without rows writes the same */
    fl_schema_t s;
    test_schema_of(&s, kCols, 2);
    fl_record_builder_options_t o = {1, FL_ARROW_CODEC_ZSTD, 0};
    fl_record_builder_t b;
    fl_record_builder_init(&b, &s, &o);
    fl_record_builder_set_changelog(&b);
    fl_buf_t built;
    fl_buf_init(&built);
    fl_error_t err;
    assert_int_equal(fl_record_builder_finish(&b, 9, 4, &built, &err), 0);
    assert_int_equal(built.len, 48);
    assert_memory_equal(built.data, kEmptyChangelog, 48);
    /* an append-only builder without rows: the header alone too */
    fl_record_builder_clear(&b);
    built.len = 0;
    assert_int_equal(fl_record_builder_finish(&b, 9, 4, &built, &err), 0);
    assert_int_equal(built.len, 48);
    assert_int_equal(built.data[27], FL_BATCH_ATTR_APPEND_ONLY);
    fl_batch_view_t v;
    assert_int_equal(fl_batch_parse(built.data, built.len, &v, &err), 0);
    assert_int_equal(fl_batch_check_crc(&v, &err), 0);
    assert_int_equal(fl_batch_parse(kEmptyChangelog, 48, &v, &err), 0);
    assert_int_equal(fl_batch_check_crc(&v, &err), 0);
    assert_int_equal(fl_batch_next_offset(&v), 1); /* takes one offset */
    g_types = (const fl_datatype_t *const[]){s.columns[0].type, s.columns[1].type};
    assert_int_equal(fl_record_validate(out.data + 1, 48, FL_LOG_FORMAT_ARROW, types_of, NULL,
                                        &err), 0);
    fl_buf_free(&built);
    fl_buf_free(&out);
    fl_record_builder_free(&b);
    fl_schema_free(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kv_layout),
        cmocka_unit_test(test_kv_round_trip),
        cmocka_unit_test(test_kv_corrupt),
        cmocka_unit_test(test_kv_crc),
        cmocka_unit_test(test_value_round_trip),
        cmocka_unit_test(test_value_corrupt),
        cmocka_unit_test(test_changelog_batch),
        cmocka_unit_test(test_empty_changelog),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
