/*
 * test_log_writer_state.c — idempotent writer state (log_writer_state.h),
 * the rules of protocol.md §4.7: an unknown writer starts at sequence 0,
 * then lastSeq + 1 (wrapping from INT32_MAX to 0); a sequence among the
 * last five is a duplicate answered with its original first offset; any
 * other is OUT_OF_ORDER_SEQUENCE_EXCEPTION (31). Many writers keep their
 * state while the table grows.
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

#include "common_crc32c.h"
#include "log_writer_state.h"
#include "record_batch.h"

static int64_t dup_last; /* the last offset of the duplicate check() saw */

static int check(const fl_writer_state_t *s, int64_t writer, int32_t seq, int64_t *dup) {
    fl_error_t err;
    err.code = 0;
    fl_writer_batch_t b = {0, -12345, -12345};
    int rc = fl_writer_state_check(s, writer, seq, &b, &err);
    *dup = b.first_offset;
    dup_last = b.last_offset;
    if (rc == FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION) {
        assert_int_equal(err.code, FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
        assert_true(strstr(err.msg, "Out of order") != NULL);
        assert_int_equal(*dup, -12345);
    }
    return rc;
}

static void test_unknown_writer_starts_at_zero(void **state) {
    (void)state;
    fl_writer_state_t s;
    fl_writer_state_init(&s);
    int64_t dup;
    assert_int_equal(FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION, 31);
    assert_int_equal(check(&s, 7, 0, &dup), FL_WRITER_NEW_BATCH);
    assert_int_equal(check(&s, 7, 1, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_int_equal(check(&s, 7, 5, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_int_equal(check(&s, 7, INT32_MAX, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_int_equal(check(&s, 7, -5, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    /* a check does not record */
    assert_int_equal(check(&s, 7, 0, &dup), FL_WRITER_NEW_BATCH);
    assert_int_equal(s.used, 0);
    fl_writer_state_free(&s);
}

static void test_consecutive_and_duplicates(void **state) {
    (void)state;
    fl_writer_state_t s;
    fl_writer_state_init(&s);
    int64_t dup;
    int64_t offset = 100;
    for (int32_t seq = 0; seq < 20; seq++) {
        assert_int_equal(check(&s, 42, seq, &dup), FL_WRITER_NEW_BATCH);
        /* batches of 3 records */
        fl_writer_state_record(&s, 42, seq, offset, offset + 2, 1000);
        offset += 3;
        /* each of the last five (or fewer) is a duplicate with its first offset */
        for (int32_t back = 0; back < FL_WRITER_BATCHES_KEPT && back <= seq; back++) {
            assert_int_equal(check(&s, 42, seq - back, &dup), FL_WRITER_DUPLICATE);
            assert_int_equal(dup, 100 + 3 * (seq - back));
            assert_int_equal(dup_last, 100 + 3 * (seq - back) + 2);
        }
        /* sixth back and older: out of order */
        for (int32_t old = seq - FL_WRITER_BATCHES_KEPT; old >= 0; old--)
            assert_int_equal(check(&s, 42, old, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
        /* skipping ahead: out of order */
        assert_int_equal(check(&s, 42, seq + 2, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
        assert_int_equal(check(&s, 42, -1, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
        /* only the next one is new */
        assert_int_equal(check(&s, 42, seq + 1, &dup), FL_WRITER_NEW_BATCH);
    }
    assert_int_equal(s.used, 1);
    fl_writer_state_free(&s);
}

static void test_sequence_wrap(void **state) {
    (void)state;
    fl_writer_state_t s;
    fl_writer_state_init(&s);
    int64_t dup;
    /* recovery may record a writer whose sequence is already high */
    fl_writer_state_record(&s, 9, INT32_MAX - 2, 0, 0, 1000);
    fl_writer_state_record(&s, 9, INT32_MAX - 1, 1, 1, 1000);
    assert_int_equal(check(&s, 9, INT32_MAX, &dup), FL_WRITER_NEW_BATCH);
    fl_writer_state_record(&s, 9, INT32_MAX, 2, 2, 1000);
    assert_int_equal(check(&s, 9, INT32_MIN, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_int_equal(check(&s, 9, 1, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_int_equal(check(&s, 9, 0, &dup), FL_WRITER_NEW_BATCH);
    fl_writer_state_record(&s, 9, 0, 3, 3, 1000);
    assert_int_equal(check(&s, 9, 1, &dup), FL_WRITER_NEW_BATCH);
    /* duplicates across the wrap */
    assert_int_equal(check(&s, 9, INT32_MAX, &dup), FL_WRITER_DUPLICATE);
    assert_int_equal(dup, 2);
    assert_int_equal(check(&s, 9, INT32_MAX - 2, &dup), FL_WRITER_DUPLICATE);
    assert_int_equal(dup, 0);
    assert_int_equal(check(&s, 9, 0, &dup), FL_WRITER_DUPLICATE);
    assert_int_equal(dup, 3);
    fl_writer_state_free(&s);
}

static void test_writers_independent(void **state) {
    (void)state;
    fl_writer_state_t s;
    fl_writer_state_init(&s);
    int64_t dup;
    fl_writer_state_record(&s, 1, 0, 0, 0, 1000);
    fl_writer_state_record(&s, 2, 0, 1, 1, 1000);
    fl_writer_state_record(&s, 1, 1, 2, 2, 1000);
    assert_int_equal(check(&s, 2, 1, &dup), FL_WRITER_NEW_BATCH);
    assert_int_equal(check(&s, 2, 2, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_int_equal(check(&s, 1, 2, &dup), FL_WRITER_NEW_BATCH);
    assert_int_equal(check(&s, 2, 0, &dup), FL_WRITER_DUPLICATE);
    assert_int_equal(dup, 1);
    /* writer ids at the edges of int64 (not -1, the empty-slot marker) */
    fl_writer_state_record(&s, INT64_MAX, 0, 10, 10, 1000);
    fl_writer_state_record(&s, INT64_MIN, 0, 11, 11, 1000);
    fl_writer_state_record(&s, 0, 0, 12, 12, 1000);
    assert_int_equal(check(&s, INT64_MAX, 0, &dup), FL_WRITER_DUPLICATE);
    assert_int_equal(dup, 10);
    assert_int_equal(check(&s, INT64_MIN, 0, &dup), FL_WRITER_DUPLICATE);
    assert_int_equal(dup, 11);
    assert_int_equal(check(&s, 0, 0, &dup), FL_WRITER_DUPLICATE);
    assert_int_equal(dup, 12);
    assert_int_equal(check(&s, -2, 0, &dup), FL_WRITER_NEW_BATCH);
    assert_int_equal(check(&s, -2, 1, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_int_equal(s.used, 5);
    fl_writer_state_free(&s);
}

static void test_many_writers_survive_growth(void **state) {
    (void)state;
    fl_writer_state_t s;
    fl_writer_state_init(&s);
    size_t cap0 = s.cap;
    int64_t dup;
    const int writers = 5000;
    /* ids chosen to collide in the low bits too */
    for (int round = 0; round < 3; round++)
        for (int w = 0; w < writers; w++) {
            int64_t id = (int64_t)w << 20 | 5;
            int64_t off = (int64_t)round * writers + w;
            assert_int_equal(check(&s, id, round, &dup), FL_WRITER_NEW_BATCH);
            fl_writer_state_record(&s, id, round, off, off, 1000);
        }
    assert_int_equal(s.used, (size_t)writers);
    assert_true(s.cap >= 16 * cap0); /* several resizes happened */
    assert_true(s.used * 4 <= s.cap * 3);
    for (int w = 0; w < writers; w++) {
        int64_t id = (int64_t)w << 20 | 5;
        for (int round = 0; round < 3; round++) {
            assert_int_equal(check(&s, id, round, &dup), FL_WRITER_DUPLICATE);
            assert_int_equal(dup, (int64_t)round * writers + w);
        }
        assert_int_equal(check(&s, id, 3, &dup), FL_WRITER_NEW_BATCH);
        assert_int_equal(check(&s, id, 4, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    }
    /* unknown ids are still unknown */
    assert_int_equal(check(&s, 6, 1, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_int_equal(check(&s, 6, 0, &dup), FL_WRITER_NEW_BATCH);
    fl_writer_state_free(&s);
}

static void test_idle_writers_expire(void **state) {
    (void)state;
    fl_writer_state_t s;
    fl_writer_state_init(&s);
    int64_t dup;
    /* 40 writers: even ones last wrote at t=1000, odd ones at t=5000 */
    for (int64_t w = 0; w < 40; w++) {
        fl_writer_state_record(&s, w, 0, w, w, 1000);
        if (w % 2) fl_writer_state_record(&s, w, 1, 100 + w, 100 + w, 5000);
    }
    /* at t=6000 with a 4000 ms expiration: idle 5000 ms > 4000 expires */
    assert_int_equal(fl_writer_state_expire(&s, 6000, 4000), 20);
    assert_int_equal(s.used, 20);
    for (int64_t w = 0; w < 40; w++) {
        if (w % 2) {
            /* kept: duplicates still found, the next sequence follows */
            assert_int_equal(check(&s, w, 1, &dup), FL_WRITER_DUPLICATE);
            assert_int_equal(dup, 100 + w);
            assert_int_equal(check(&s, w, 2, &dup), FL_WRITER_NEW_BATCH);
        } else {
            /* forgotten: its next batch is out of order, a restart at 0 new */
            assert_int_equal(check(&s, w, 1, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
            assert_int_equal(check(&s, w, 0, &dup), FL_WRITER_NEW_BATCH);
        }
    }
    /* exactly at the limit is not expired (idle must exceed it) */
    assert_int_equal(fl_writer_state_expire(&s, 9000, 4000), 0);
    assert_int_equal(fl_writer_state_expire(&s, 9001, 4000), 20);
    assert_int_equal(s.used, 0);
    fl_writer_state_free(&s);
}

static void test_snapshot_keeps_timestamps_and_reads_version_1(void **state) {
    (void)state;
    fl_writer_state_t s, back;
    fl_writer_state_init(&s);
    fl_writer_state_init(&back);
    fl_writer_state_record(&s, 7, 0, 0, 3, 1000);
    fl_writer_state_record(&s, 8, 0, 4, 4, 9000);
    fl_buf_t b;
    fl_buf_init(&b);
    fl_writer_state_encode(&s, &b);
    fl_error_t err;
    assert_int_equal(fl_writer_state_decode(&back, b.data, b.len, &err), 0);
    assert_int_equal(fl_writer_state_expire(&back, 10000, 5000), 1); /* writer 7 */
    int64_t dup;
    assert_int_equal(check(&back, 8, 0, &dup), FL_WRITER_DUPLICATE);
    assert_int_equal(check(&back, 7, 1, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);

    /* a version 1 file (no timestamps): the writers are stamped at the
     * first expiry check and expire an expiration later */
    fl_buf_t v1;
    fl_buf_init(&v1);
    uint8_t w[8];
    fl_buf_append(&v1, "FLWS", 4);
    fl_put_le32(w, 1);
    fl_buf_append(&v1, w, 4);
    fl_put_le32(w, 1);
    fl_buf_append(&v1, w, 4);
    fl_put_le64(w, 42);
    fl_buf_append(&v1, w, 8);
    fl_put_le32(w, 1);
    fl_buf_append(&v1, w, 4);
    fl_put_le32(w, 0);
    fl_buf_append(&v1, w, 4);
    fl_put_le64(w, 10);
    fl_buf_append(&v1, w, 8);
    fl_put_le64(w, 12);
    fl_buf_append(&v1, w, 8);
    fl_put_le32(w, fl_crc32c(0, v1.data, v1.len));
    fl_buf_append(&v1, w, 4);
    assert_int_equal(fl_writer_state_decode(&back, v1.data, v1.len, &err), 0);
    assert_int_equal(check(&back, 42, 0, &dup), FL_WRITER_DUPLICATE);
    assert_int_equal(dup, 10);
    assert_int_equal(fl_writer_state_expire(&back, 50000, 1000), 0);
    assert_int_equal(fl_writer_state_expire(&back, 51000, 1000), 0);
    assert_int_equal(fl_writer_state_expire(&back, 51001, 1000), 1);
    /* a truncated version 2 file is refused */
    assert_int_equal(fl_writer_state_decode(&back, b.data, b.len - 9, &err), FLUSS_ERR__CORRUPT);
    fl_buf_free(&v1);
    fl_buf_free(&b);
    fl_writer_state_free(&back);
    fl_writer_state_free(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_writer_starts_at_zero),
        cmocka_unit_test(test_consecutive_and_duplicates),
        cmocka_unit_test(test_sequence_wrap),
        cmocka_unit_test(test_writers_independent),
        cmocka_unit_test(test_many_writers_survive_growth),
        cmocka_unit_test(test_idle_writers_expire),
        cmocka_unit_test(test_snapshot_keeps_timestamps_and_reads_version_1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
