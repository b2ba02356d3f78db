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

#include "log_writer_state.h"

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
        fl_writer_state_record(&s, 42, seq, offset, offset + 2);
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
    fl_writer_state_record(&s, 9, INT32_MAX - 2, 0, 0);
    fl_writer_state_record(&s, 9, INT32_MAX - 1, 1, 1);
    assert_int_equal(check(&s, 9, INT32_MAX, &dup), FL_WRITER_NEW_BATCH);
    fl_writer_state_record(&s, 9, INT32_MAX, 2, 2);
    assert_int_equal(check(&s, 9, INT32_MIN, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_int_equal(check(&s, 9, 1, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_int_equal(check(&s, 9, 0, &dup), FL_WRITER_NEW_BATCH);
    fl_writer_state_record(&s, 9, 0, 3, 3);
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
    fl_writer_state_record(&s, 1, 0, 0, 0);
    fl_writer_state_record(&s, 2, 0, 1, 1);
    fl_writer_state_record(&s, 1, 1, 2, 2);
    assert_int_equal(check(&s, 2, 1, &dup), FL_WRITER_NEW_BATCH);
    assert_int_equal(check(&s, 2, 2, &dup), FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_int_equal(check(&s, 1, 2, &dup), FL_WRITER_NEW_BATCH);
    assert_int_equal(check(&s, 2, 0, &dup), FL_WRITER_DUPLICATE);
    assert_int_equal(dup, 1);
    /* writer ids at the edges of int64 (not -1, the empty-slot marker) */
    fl_writer_state_record(&s, INT64_MAX, 0, 10, 10);
    fl_writer_state_record(&s, INT64_MIN, 0, 11, 11);
    fl_writer_state_record(&s, 0, 0, 12, 12);
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
            fl_writer_state_record(&s, id, round, off, off);
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_writer_starts_at_zero),
        cmocka_unit_test(test_consecutive_and_duplicates),
        cmocka_unit_test(test_sequence_wrap),
        cmocka_unit_test(test_writers_independent),
        cmocka_unit_test(test_many_writers_survive_growth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
