/*
 * test_record_batch.c — the LogRecordBatch header view (record_batch.h):
 * V0/V1/V2 headers parsed field by field from little-endian bytes laid out
 * per protocol.md §4.1, statistics and records start, every rejection
 * (CORRUPT_RECORD_EXCEPTION), fl_batch_peek_size, the CRC-32C coverage
 * (§4.2: every covered byte matters, the leader-rewritten fields do not),
 * the in-place setters touching exactly their bytes, and the writer
 * side: fl_batch_write_header (through batch_builder.h) lands every field
 * at the §4.1 offsets checked here byte by byte, and fl_batch_field_offset
 * names those offsets. This file is the layout's oracle: it alone spells
 * offsets out as numbers.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "batch_builder.h"
#include "common_crc32c.h"
#include "record_batch.h"

static bb_spec_t full_spec(int8_t magic, size_t stats) {
    bb_spec_t s = bb_spec(0x0102030405060708ll, 0x11223344, 7, 33, 0x40);
    s.magic = magic;
    s.base_offset = 0x0A0B0C0D0E0F1011ll;
    s.commit_timestamp = 0x2122232425262728ll;
    s.leader_epoch = 0x31323334;
    s.schema_id = 0x4142;
    s.attributes = 0x01;
    s.stats_bytes = stats;
    return s;
}

static void parse_ok(const uint8_t *p, size_t n, fl_batch_view_t *v) {
    fl_error_t err;
    memset(v, 0x5A, sizeof(*v));
    if (fl_batch_parse(p, n, v, &err)) fail_msg("parse: %s", err.msg);
}

static void parse_corrupt(const uint8_t *p, size_t n) {
    fl_error_t err;
    fl_batch_view_t v;
    err.code = 0;
    int rc = fl_batch_parse(p, n, &v, &err);
    assert_int_equal(rc, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_int_equal(err.code, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_true(err.msg[0] != '\0');
}

static void check_common(const fl_batch_view_t *v, const uint8_t *p, size_t n) {
    assert_ptr_equal(v->data, p);
    assert_int_equal(v->size, n);
    assert_int_equal(v->base_offset, 0x0A0B0C0D0E0F1011ll);
    assert_int_equal(v->commit_timestamp, 0x2122232425262728ll);
    assert_int_equal(v->schema_id, 0x4142);
    assert_int_equal(v->attributes, 0x01);
    assert_int_equal(v->last_offset_delta, 6);
    assert_int_equal(v->writer_id, 0x0102030405060708ll);
    assert_int_equal(v->batch_sequence, 0x11223344);
    assert_int_equal(v->record_count, 7);
    assert_int_equal(fl_batch_last_offset(v), 0x0A0B0C0D0E0F1011ll + 6);
    assert_int_equal(fl_batch_next_offset(v), 0x0A0B0C0D0E0F1011ll + 7);
}

static void test_parse_v0(void **state) {
    (void)state;
    bb_spec_t s = full_spec(0, 0);
    size_t n;
    uint8_t *p = bb_new(&s, &n);
    assert_int_equal(n, 48 + 33);
    /* the raw bytes, independent of the builder's helpers: LE at §4.1 offsets */
    assert_int_equal(p[0], 0x11);
    assert_int_equal(p[7], 0x0A);
    assert_int_equal(p[8], (uint8_t)(n - 12));
    assert_int_equal(p[12], 0);
    assert_int_equal(p[13], 0x28);
    assert_int_equal(p[25], 0x42);
    assert_int_equal(p[26], 0x41);
    assert_int_equal(p[28], 6);
    assert_int_equal(p[32], 0x08);
    assert_int_equal(p[39], 0x01);
    assert_int_equal(p[40], 0x44);
    assert_int_equal(p[44], 7);
    fl_batch_view_t v;
    parse_ok(p, n, &v);
    check_common(&v, p, n);
    assert_int_equal(v.magic, 0);
    assert_int_equal(v.leader_epoch, -1);
    assert_int_equal(v.header_size, 48);
    assert_int_equal(v.stats_size, 0);
    assert_int_equal(v.records_start, 48);
    assert_int_equal(v.crc, fl_crc32c(0, p + 25, n - 25));
    assert_int_equal(v.crc, (uint32_t)(p[21] | p[22] << 8 | p[23] << 16 | (uint32_t)p[24] << 24));
    assert_int_equal(p[v.records_start], 0x40);
    free(p);
}

static void test_parse_v1(void **state) {
    (void)state;
    for (size_t stats = 0; stats <= 12; stats += 12) {
        bb_spec_t s = full_spec(1, stats);
        size_t n;
        uint8_t *p = bb_new(&s, &n);
        assert_int_equal(n, 52 + stats + 33);
        assert_int_equal(p[48], stats);
        fl_batch_view_t v;
        parse_ok(p, n, &v);
        check_common(&v, p, n);
        assert_int_equal(v.magic, 1);
        assert_int_equal(v.leader_epoch, -1);
        assert_int_equal(v.header_size, 52);
        assert_int_equal(v.stats_size, stats);
        assert_int_equal(v.records_start, 52 + stats);
        assert_int_equal(p[v.records_start], 0x40);
        assert_int_equal(v.crc, fl_crc32c(0, p + 25, n - 25));
        free(p);
    }
}

static void test_parse_v2(void **state) {
    (void)state;
    bb_spec_t s = full_spec(2, 5);
    size_t n;
    uint8_t *p = bb_new(&s, &n);
    assert_int_equal(n, 56 + 5 + 33);
    assert_int_equal(p[21], 0x34); /* leader epoch LE at 21 */
    assert_int_equal(p[29], 0x42); /* schema id at 29 */
    assert_int_equal(p[32], 6);    /* last offset delta at 32 */
    assert_int_equal(p[36], 0x08); /* writer id at 36 */
    assert_int_equal(p[44], 0x44); /* sequence at 44 */
    assert_int_equal(p[48], 7);    /* record count at 48 */
    assert_int_equal(p[52], 5);    /* statistics length at 52 */
    fl_batch_view_t v;
    parse_ok(p, n, &v);
    check_common(&v, p, n);
    assert_int_equal(v.magic, 2);
    assert_int_equal(v.leader_epoch, 0x31323334);
    assert_int_equal(v.header_size, 56);
    assert_int_equal(v.stats_size, 5);
    assert_int_equal(v.records_start, 61);
    assert_int_equal(p[61], 0x40);
    assert_int_equal(v.crc, fl_crc32c(0, p + 29, n - 29));
    free(p);
}

static void test_parse_edge_values(void **state) {
    (void)state;
    /* empty batch: 0 records, delta 0; no writer (-1/-1); header only */
    bb_spec_t s = bb_spec(-1, -1, 0, 0, 0);
    uint8_t buf[128];
    size_t n = bb_write(buf, &s);
    fl_batch_view_t v;
    parse_ok(buf, n, &v);
    assert_int_equal(n, 48);
    assert_int_equal(v.record_count, 0);
    assert_int_equal(v.last_offset_delta, 0);
    assert_int_equal(fl_batch_next_offset(&v), 1);
    assert_int_equal(v.writer_id, -1);
    assert_int_equal(v.batch_sequence, -1);
    /* negative timestamps and base offsets are carried as is (sign of LE) */
    s.commit_timestamp = -2;
    s.base_offset = -5;
    n = bb_write(buf, &s);
    parse_ok(buf, n, &v);
    assert_int_equal(v.commit_timestamp, -2);
    assert_int_equal(v.base_offset, -5);
    /* V1/V2 with statistics taking every byte after the header */
    for (int8_t m = 1; m <= 2; m++) {
        s = bb_spec(-1, -1, 1, 0, 0);
        s.magic = m;
        s.stats_bytes = 20;
        n = bb_write(buf, &s);
        parse_ok(buf, n, &v);
        assert_int_equal(v.stats_size, 20);
        assert_int_equal(v.records_start, n);
    }
}

static void test_reject_short_and_length(void **state) {
    (void)state;
    bb_spec_t s = bb_spec(-1, -1, 2, 10, 1);
    uint8_t buf[256];
    size_t n = bb_write(buf, &s);
    for (size_t len = 0; len < 48; len++) parse_corrupt(buf, len);
    /* Length says one thing, the buffer another */
    parse_corrupt(buf, n - 1);
    uint8_t big[256];
    memcpy(big, buf, n);
    big[n] = 0;
    parse_corrupt(big, n + 1);
    fl_put_le32(big + 8, (uint32_t)(n - 12 + 1));
    parse_corrupt(big, n);
    fl_put_le32(big + 8, (uint32_t)-1);
    parse_corrupt(big, n);
    /* V1/V2: long enough for V0 but shorter than their own header */
    for (int8_t m = 1; m <= 2; m++) {
        uint8_t h[56];
        memset(h, 0, sizeof(h));
        size_t len = (size_t)(m == 1 ? 51 : 55);
        fl_put_le32(h + 8, (uint32_t)(len - 12));
        h[12] = (uint8_t)m;
        parse_corrupt(h, len);
    }
}

static void test_reject_magic(void **state) {
    (void)state;
    bb_spec_t s = bb_spec(-1, -1, 1, 10, 1);
    uint8_t buf[128];
    size_t n = bb_write(buf, &s);
    int bad[] = {3, 4, 0x7F, -1, -128};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        buf[12] = (uint8_t)bad[i];
        parse_corrupt(buf, n);
    }
}

static void test_reject_counts(void **state) {
    (void)state;
    for (int8_t m = 0; m <= 2; m++) {
        bb_spec_t s = bb_spec(-1, -1, 5, 10, 1);
        s.magic = m;
        uint8_t buf[128];
        size_t n = bb_write(buf, &s);
        size_t h = m == 2 ? 29 : 25; /* SchemaId position */
        uint8_t *delta = buf + h + 3, *count = buf + h + 19;
        fl_batch_view_t v;
        parse_ok(buf, n, &v);
        fl_put_le32(count, (uint32_t)-1); /* negative count, delta 4 */
        parse_corrupt(buf, n);
        fl_put_le32(delta, 0); /* negative count, delta 0 */
        parse_corrupt(buf, n);
        fl_put_le32(count, (uint32_t)INT32_MIN);
        parse_corrupt(buf, n);
        fl_put_le32(count, 5); /* 5 records, delta 3 */
        fl_put_le32(delta, 3);
        parse_corrupt(buf, n);
        fl_put_le32(delta, 5); /* delta = count */
        parse_corrupt(buf, n);
        fl_put_le32(delta, (uint32_t)-1);
        parse_corrupt(buf, n);
        fl_put_le32(count, 0); /* empty batch must have delta 0 */
        fl_put_le32(delta, 1);
        parse_corrupt(buf, n);
        fl_put_le32(delta, (uint32_t)-1);
        parse_corrupt(buf, n);
        fl_put_le32(delta, 0);
        parse_ok(buf, n, &v);
    }
}

static void test_reject_stats_bounds(void **state) {
    (void)state;
    for (int8_t m = 1; m <= 2; m++) {
        bb_spec_t s = bb_spec(-1, -1, 1, 10, 1);
        s.magic = m;
        s.stats_bytes = 4;
        uint8_t buf[128];
        size_t n = bb_write(buf, &s);
        size_t hs = m == 1 ? 52 : 56;
        fl_batch_view_t v;
        fl_put_le32(buf + hs - 4, (uint32_t)(n - hs)); /* exactly to the end: ok */
        parse_ok(buf, n, &v);
        assert_int_equal(v.records_start, n);
        fl_put_le32(buf + hs - 4, (uint32_t)(n - hs + 1));
        parse_corrupt(buf, n);
        fl_put_le32(buf + hs - 4, 0x7FFFFFFF);
        parse_corrupt(buf, n);
        fl_put_le32(buf + hs - 4, (uint32_t)-1);
        parse_corrupt(buf, n);
        fl_put_le32(buf + hs - 4, (uint32_t)INT32_MIN);
        parse_corrupt(buf, n);
    }
}

static void test_peek_size(void **state) {
    (void)state;
    uint8_t h[16];
    memset(h, 0, sizeof(h));
    size_t size = 12345;
    fl_error_t err;
    for (size_t len = 0; len < 12; len++) {
        assert_int_equal(fl_batch_peek_size(h, len, 1 << 20, &size, &err), 1);
        assert_int_equal(size, 12345);
    }
    fl_put_le32(h + 8, 36); /* the smallest batch: a bare V0 header */
    assert_int_equal(fl_batch_peek_size(h, 12, 1 << 20, &size, &err), 0);
    assert_int_equal(size, 48);
    fl_put_le32(h + 8, 35);
    assert_int_equal(fl_batch_peek_size(h, 12, 1 << 20, &size, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    fl_put_le32(h + 8, 0);
    assert_int_equal(fl_batch_peek_size(h, 16, 1 << 20, &size, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    fl_put_le32(h + 8, (uint32_t)-1);
    assert_int_equal(fl_batch_peek_size(h, 16, 1 << 20, &size, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    fl_put_le32(h + 8, (uint32_t)INT32_MIN);
    assert_int_equal(fl_batch_peek_size(h, 16, 1 << 20, &size, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    /* the limit is on the whole batch (Length + 12), inclusive */
    fl_put_le32(h + 8, 1000 - 12);
    assert_int_equal(fl_batch_peek_size(h, 12, 1000, &size, &err), 0);
    assert_int_equal(size, 1000);
    assert_int_equal(fl_batch_peek_size(h, 12, 999, &size, &err),
                     FLUSS_ERR_RECORD_TOO_LARGE_EXCEPTION);
    assert_int_equal(err.code, FLUSS_ERR_RECORD_TOO_LARGE_EXCEPTION);
    fl_put_le32(h + 8, 0x7FFFFFFF);
    assert_int_equal(fl_batch_peek_size(h, 12, 1 << 30, &size, &err),
                     FLUSS_ERR_RECORD_TOO_LARGE_EXCEPTION);
    /* only the first 12 bytes are needed, the rest may be absent */
    bb_spec_t s = bb_spec(3, 4, 2, 100, 9);
    uint8_t buf[256];
    size_t n = bb_write(buf, &s);
    assert_int_equal(fl_batch_peek_size(buf, 12, 1 << 20, &size, &err), 0);
    assert_int_equal(size, n);
}

static void check_crc_coverage(int8_t magic) {
    bb_spec_t s = full_spec(magic, magic ? 6 : 0);
    size_t n;
    uint8_t *p = bb_new(&s, &n);
    fl_batch_view_t v;
    fl_error_t err;
    parse_ok(p, n, &v);
    assert_int_equal(fl_batch_check_crc(&v, &err), 0);
    assert_int_equal(fl_batch_compute_crc(p, n, magic), v.crc);
    size_t crc_at = magic == 2 ? 25 : 21, from = crc_at + 4;
    /* every covered byte, every bit position over the bytes */
    for (size_t i = from; i < n; i++) {
        uint8_t mask = (uint8_t)(1u << (i % 8));
        p[i] ^= mask;
        fl_batch_view_t w;
        fl_error_t e2;
        /* some flips (delta, count, stats length) fail the parse itself;
         * the others must fail the CRC */
        if (fl_batch_parse(p, n, &w, &e2) == 0) {
            assert_int_equal(fl_batch_check_crc(&w, &e2), FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
            assert_int_equal(e2.code, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
        } else {
            assert_int_equal(e2.code, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
            /* the CRC still covers the byte */
            assert_int_not_equal(fl_batch_compute_crc(p, n, magic), v.crc);
        }
        p[i] ^= mask;
    }
    /* the stored CRC itself */
    for (size_t i = crc_at; i < from; i++) {
        p[i] ^= 0x80;
        fl_batch_view_t w;
        parse_ok(p, n, &w);
        assert_int_equal(fl_batch_check_crc(&w, &err), FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
        p[i] ^= 0x80;
    }
    /* the fields a leader rewrites are not covered */
    fl_batch_set_base_offset(p, 987654321);
    fl_batch_set_commit_timestamp(p, 1700000000123ll);
    if (magic == 2) fl_put_le32(p + 21, 77);
    parse_ok(p, n, &v);
    assert_int_equal(v.base_offset, 987654321);
    assert_int_equal(v.commit_timestamp, 1700000000123ll);
    if (magic == 2) assert_int_equal(v.leader_epoch, 77);
    assert_int_equal(fl_batch_check_crc(&v, &err), 0);
    /* arbitrary bytes in those fields */
    for (size_t i = 0; i < 8; i++) p[i] = (uint8_t)(0xF0 + i);
    for (size_t i = 13; i < (magic == 2 ? 25u : 21u); i++) p[i] = (uint8_t)(0x0F * i);
    parse_ok(p, n, &v);
    assert_int_equal(fl_batch_check_crc(&v, &err), 0);
    free(p);
}

static void test_crc_v0(void **state) {
    (void)state;
    check_crc_coverage(0);
}
static void test_crc_v1(void **state) {
    (void)state;
    check_crc_coverage(1);
}
static void test_crc_v2(void **state) {
    (void)state;
    check_crc_coverage(2);
}

static void test_compute_crc_short(void **state) {
    (void)state;
    uint8_t b[30];
    memset(b, 7, sizeof(b));
    assert_int_equal(fl_batch_compute_crc(b, 24, 0), 0u); /* nothing covered exists */
    assert_int_equal(fl_batch_compute_crc(b, 25, 0), 0u); /* empty coverage */
    assert_int_equal(fl_batch_compute_crc(b, 26, 0), fl_crc32c(0, b + 25, 1));
    assert_int_equal(fl_batch_compute_crc(b, 29, 2), 0u);
    assert_int_equal(fl_batch_compute_crc(b, 30, 2), fl_crc32c(0, b + 29, 1));
}

static void test_setters_touch_only_their_bytes(void **state) {
    (void)state;
    for (int8_t m = 0; m <= 2; m++) {
        bb_spec_t s = full_spec(m, m ? 3 : 0);
        size_t n;
        uint8_t *p = bb_new(&s, &n);
        uint8_t *orig = malloc(n);
        memcpy(orig, p, n);
        fl_batch_set_base_offset(p, 0x7172737475767778ll);
        static const uint8_t want_off[8] = {0x78, 0x77, 0x76, 0x75, 0x74, 0x73, 0x72, 0x71};
        assert_memory_equal(p, want_off, 8);
        assert_memory_equal(p + 8, orig + 8, n - 8);
        memcpy(p, orig, n);
        fl_batch_set_commit_timestamp(p, -2); /* FE FF .. FF */
        assert_memory_equal(p, orig, 13);
        for (int i = 0; i < 8; i++) assert_int_equal(p[13 + i], i == 0 ? 0xFE : 0xFF);
        assert_memory_equal(p + 21, orig + 21, n - 21);
        memcpy(p, orig, n);
        fl_batch_set_length(p, 300);
        assert_memory_equal(p, orig, 8);
        assert_int_equal(p[8], (300 - 12) & 0xFF);
        assert_int_equal(p[9], (300 - 12) >> 8);
        assert_int_equal(p[10], 0);
        assert_int_equal(p[11], 0);
        assert_memory_equal(p + 12, orig + 12, n - 12);
        free(orig);
        free(p);
    }
}

static void test_field_offsets(void **state) {
    (void)state;
    /* protocol.md §4.1: magic 0/1 and magic 2 side by side */
    static const size_t v01[] = {0, 8, 12, 13, 0, 21, 25, 27, 28, 32, 40, 44};
    static const size_t v2[] = {0, 8, 12, 13, 21, 25, 29, 31, 32, 36, 44, 48};
    for (int f = FL_BATCH_FIELD_BASE_OFFSET; f <= FL_BATCH_FIELD_RECORD_COUNT; f++) {
        if (f != FL_BATCH_FIELD_LEADER_EPOCH) {
            assert_int_equal(fl_batch_field_offset(0, (fl_batch_field_t)f), v01[f]);
            assert_int_equal(fl_batch_field_offset(1, (fl_batch_field_t)f), v01[f]);
        }
        assert_int_equal(fl_batch_field_offset(2, (fl_batch_field_t)f), v2[f]);
    }
    assert_int_equal(fl_batch_field_offset(1, FL_BATCH_FIELD_STATISTICS_LENGTH), 48);
    assert_int_equal(fl_batch_field_offset(2, FL_BATCH_FIELD_STATISTICS_LENGTH), 52);
    assert_int_equal(fl_batch_header_size(0), 48);
    assert_int_equal(fl_batch_header_size(1), 52);
    assert_int_equal(fl_batch_header_size(2), 56);
    assert_int_equal(fl_batch_header_size(3), 0);
    assert_int_equal(fl_batch_header_size(-1), 0);
}

static void test_peek_header(void **state) {
    (void)state;
    for (int8_t m = 0; m <= 2; m++) {
        bb_spec_t s = full_spec(m, 0);
        size_t n;
        uint8_t *p = bb_new(&s, &n);
        fl_batch_peek_t pk;
        fl_error_t err;
        assert_int_equal(fl_batch_peek_header(p, FL_BATCH_HEADER_V0, &pk, &err), 0);
        assert_int_equal(pk.base_offset, 0x0A0B0C0D0E0F1011ll);
        assert_int_equal(pk.length, (int32_t)(n - 12));
        assert_int_equal(pk.magic, m);
        assert_int_equal(pk.last_offset_delta, 6);
        p[12] = 3;
        assert_int_equal(fl_batch_peek_header(p, FL_BATCH_HEADER_V0, &pk, &err),
                         FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
        p[12] = 0xFF;
        assert_int_equal(fl_batch_peek_header(p, FL_BATCH_HEADER_V0, &pk, &err),
                         FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
        free(p);
    }
}

static void test_refresh_crc(void **state) {
    (void)state;
    for (int8_t m = 0; m <= 2; m++) {
        bb_spec_t s = full_spec(m, m ? 4 : 0);
        size_t n;
        uint8_t *p = bb_new(&s, &n);
        p[n - 1] ^= 0x5A;
        fl_batch_view_t v;
        parse_ok(p, n, &v);
        fl_error_t err;
        assert_int_equal(fl_batch_check_crc(&v, &err), FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
        fl_batch_refresh_crc(p, n);
        parse_ok(p, n, &v);
        assert_int_equal(fl_batch_check_crc(&v, &err), 0);
        free(p);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_v0),
        cmocka_unit_test(test_parse_v1),
        cmocka_unit_test(test_parse_v2),
        cmocka_unit_test(test_parse_edge_values),
        cmocka_unit_test(test_reject_short_and_length),
        cmocka_unit_test(test_reject_magic),
        cmocka_unit_test(test_reject_counts),
        cmocka_unit_test(test_reject_stats_bounds),
        cmocka_unit_test(test_peek_size),
        cmocka_unit_test(test_crc_v0),
        cmocka_unit_test(test_crc_v1),
        cmocka_unit_test(test_crc_v2),
        cmocka_unit_test(test_compute_crc_short),
        cmocka_unit_test(test_setters_touch_only_their_bytes),
        cmocka_unit_test(test_field_offsets),
        cmocka_unit_test(test_refresh_crc),
        cmocka_unit_test(test_peek_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
