/*
 * test_log_follower.c — a follower's log (log_tablet.h): batches copied
 * from a leader's log keep the leader's offsets, bytes and commit
 * timestamps across segment rolls, each CRC-checked and at the offset that
 * follows; the writer state learns the writers (a new leader deduplicates
 * a retry); refusals append nothing. Truncation cuts at a batch boundary
 * across segments (later segments and writer snapshots go, the writer
 * state forgets what was cut), survives a reopen, and the follower then
 * catches up byte for byte again; a cut below the start empties the log.
 * A follower left behind its leader's log start starts again there.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_tmpdir.h"

#include "batch_builder.h"
#include "common_buf.h"
#include "log_tablet.h"

static fl_log_config_t cfg_small(void) {
    fl_log_config_t c;
    memset(&c, 0, sizeof(c));
    c.segment_bytes = 1024; /* a roll every few batches */
    c.index_interval = 256;
    c.batch_bytes_max = 1u << 20;
    return c;
}

static fl_log_tablet_t *open_at(const char *dir) {
    fl_log_tablet_t *t = NULL;
    fl_error_t err;
    fl_log_config_t c = cfg_small();
    if (fl_log_tablet_open(dir, &c, &t, &err)) fail_msg("open %s: %s", dir, err.msg);
    return t;
}

/* The leader's log: batch i has i % 3 + 1 records, writer 7 (sequence i)
 * for even i, no writer for odd i. */
static void fill_leader(fl_log_tablet_t *l, int from, int batches) {
    for (int i = from; i < from + batches; i++) {
        bb_spec_t s = bb_spec(i % 2 ? -1 : 7, i % 2 ? -1 : i / 2, i % 3 + 1, 100, (uint8_t)i);
        size_t n;
        uint8_t *b = bb_new(&s, &n);
        fl_append_result_t r;
        fl_error_t err;
        if (fl_log_tablet_append(l, b, n, 1000 + i, &r, &err)) fail_msg("leader: %s", err.msg);
        free(b);
    }
}

/* Everything of t from offset to its end. */
static void read_from(fl_log_tablet_t *t, int64_t offset, fl_buf_t *out) {
    fl_buf_reset(out);
    while (offset < t->log_end_offset) {
        fl_buf_t part;
        fl_buf_init(&part);
        fl_error_t err;
        if (fl_log_tablet_read(t, offset, 300, t->log_end_offset, &part, &err))
            fail_msg("read at %lld: %s", (long long)offset, err.msg);
        assert_true(part.len > 0);
        /* the offset after the last batch read */
        size_t pos = 0;
        while (pos < part.len) {
            fl_batch_view_t v;
            size_t sz;
            assert_int_equal(fl_batch_peek_size(part.data + pos, part.len - pos, 1u << 20, &sz, &err), 0);
            assert_int_equal(fl_batch_parse(part.data + pos, sz, &v, &err), 0);
            offset = fl_batch_last_offset(&v) + 1;
            pos += sz;
        }
        fl_buf_append(out, part.data, part.len);
        fl_buf_free(&part);
    }
}

/* The follower fetches from the leader until it has all of it, at most
 * 300 bytes a fetch (whole batches), one append each. */
static void catch_up(fl_log_tablet_t *f, fl_log_tablet_t *l) {
    while (f->log_end_offset < l->log_end_offset) {
        fl_buf_t part;
        fl_buf_init(&part);
        fl_error_t err;
        if (fl_log_tablet_read(l, f->log_end_offset, 300, l->log_end_offset, &part, &err))
            fail_msg("leader read: %s", err.msg);
        fl_append_result_t r;
        if (fl_log_tablet_append_follower(f, part.data, part.len, &r, &err))
            fail_msg("follower: %s", err.msg);
        fl_buf_free(&part);
    }
    assert_int_equal(f->log_end_offset, l->log_end_offset);
}

static void assert_same_bytes(fl_log_tablet_t *a, fl_log_tablet_t *b, int64_t from) {
    fl_buf_t x, y;
    fl_buf_init(&x);
    fl_buf_init(&y);
    read_from(a, from, &x);
    read_from(b, from, &y);
    assert_int_equal(x.len, y.len);
    assert_memory_equal(x.data, y.data, x.len);
    fl_buf_free(&x);
    fl_buf_free(&y);
}

static void join(char *out, size_t cap, const char *dir, const char *name) {
    snprintf(out, cap, "%s/%s", dir, name);
}

static void test_follow_and_truncate(void **state) {
    char ld[4200], fd[4200];
    join(ld, sizeof(ld), *state, "leader");
    join(fd, sizeof(fd), *state, "follower");
    fl_log_tablet_t *l = open_at(ld), *f = open_at(fd);
    fill_leader(l, 0, 30);
    assert_true(l->segment_count > 3);
    catch_up(f, l);
    assert_true(f->segment_count > 3);
    assert_same_bytes(l, f, 0);
    assert_int_equal(f->last_commit_timestamp, l->last_commit_timestamp);
    /* the writer's last batch is a duplicate on the follower too */
    fl_writer_batch_t dup;
    fl_error_t err;
    assert_int_equal(fl_writer_state_check(&f->writers, 7, 14, &dup, &err), FL_WRITER_DUPLICATE);

    /* refusals: nothing appended */
    fill_leader(l, 30, 2);
    fl_buf_t b;
    fl_buf_init(&b);
    read_from(l, f->log_end_offset, &b);
    int64_t end = f->log_end_offset;
    fl_append_result_t r;
    b.data[b.len - 1] ^= 0x5a; /* the last batch's CRC no longer holds */
    assert_int_equal(fl_log_tablet_append_follower(f, b.data, b.len, &r, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_int_equal(f->log_end_offset, end);
    b.data[b.len - 1] ^= 0x5a;
    fl_buf_t later;
    fl_buf_init(&later);
    read_from(l, f->log_end_offset + 1, &later); /* starts past our end */
    if (later.len) {
        fl_batch_view_t v;
        size_t sz;
        assert_int_equal(fl_batch_peek_size(later.data, later.len, 1u << 20, &sz, &err), 0);
        assert_int_equal(fl_batch_parse(later.data, sz, &v, &err), 0);
        if (v.base_offset != end) {
            assert_int_equal(fl_log_tablet_append_follower(f, later.data, later.len, &r, &err),
                             FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
            assert_int_equal(f->log_end_offset, end);
        }
    }
    fl_buf_free(&later);
    assert_int_equal(fl_log_tablet_append_follower(f, b.data, b.len, &r, &err), 0);
    fl_buf_free(&b);
    assert_same_bytes(l, f, 0);

    /* a cut at a batch boundary two segments back */
    int64_t cut = f->segments[f->segment_count - 3]->base_offset + 1;
    {
        uint64_t pos;
        fl_log_segment_t *s = f->segments[f->segment_count - 3];
        assert_int_equal(fl_log_segment_find(s, cut, &pos, &err), 0);
    }
    /* the batch boundary at or before cut: what truncation keeps */
    fl_buf_t all;
    fl_buf_init(&all);
    read_from(f, 0, &all);
    int64_t boundary = 0;
    for (size_t pos = 0; pos < all.len;) {
        fl_batch_view_t v;
        size_t sz;
        assert_int_equal(fl_batch_peek_size(all.data + pos, all.len - pos, 1u << 20, &sz, &err), 0);
        assert_int_equal(fl_batch_parse(all.data + pos, sz, &v, &err), 0);
        if (fl_batch_last_offset(&v) >= cut) break;
        boundary = fl_batch_last_offset(&v) + 1;
        pos += sz;
    }
    fl_buf_free(&all);
    assert_int_equal(fl_log_tablet_truncate(&f, boundary, &err), 0);
    assert_non_null(f);
    assert_int_equal(f->log_end_offset, boundary);
    /* the later writer snapshots went with the segments */
    assert_true(f->snapshot_offset <= boundary);
    catch_up(f, l);
    assert_same_bytes(l, f, 0);
    fl_log_tablet_close(f);
    fl_log_tablet_close(l);
}

static void test_follower_prefix_and_reopen(void **state) {
    char ld[4200], fd[4200];
    join(ld, sizeof(ld), *state, "leader");
    join(fd, sizeof(fd), *state, "follower");
    fl_log_tablet_t *l = open_at(ld), *f = open_at(fd);
    fill_leader(l, 0, 24);
    catch_up(f, l);
    int64_t full = f->log_end_offset;
    /* a cut in the middle: batch 10 of the leader starts here */
    fl_buf_t all;
    fl_buf_init(&all);
    read_from(l, 0, &all);
    int64_t starts[64];
    size_t n = 0;
    fl_error_t err;
    for (size_t pos = 0; pos < all.len;) {
        fl_batch_view_t v;
        size_t sz;
        assert_int_equal(fl_batch_peek_size(all.data + pos, all.len - pos, 1u << 20, &sz, &err), 0);
        assert_int_equal(fl_batch_parse(all.data + pos, sz, &v, &err), 0);
        starts[n++] = v.base_offset;
        pos += sz;
    }
    fl_buf_free(&all);
    assert_int_equal(n, 24);
    int64_t cut = starts[10];
    size_t segs_before = f->segment_count;
    assert_int_equal(fl_log_tablet_truncate(&f, cut, &err), 0);
    assert_int_equal(f->log_end_offset, cut);
    assert_true(f->segment_count < segs_before);
    /* what stays is the leader's prefix, byte for byte */
    fl_buf_t a, b;
    fl_buf_init(&a);
    fl_buf_init(&b);
    read_from(f, 0, &a);
    while (b.len < a.len) { /* the leader's bytes up to the cut */
        fl_buf_t part;
        fl_buf_init(&part);
        assert_int_equal(fl_log_tablet_read(l, 0, a.len, cut, &part, &err), 0);
        fl_buf_append(&b, part.data, part.len);
        fl_buf_free(&part);
        break;
    }
    assert_true(b.len >= a.len);
    assert_memory_equal(a.data, b.data, a.len);
    fl_buf_free(&a);
    fl_buf_free(&b);
    /* the writer forgot what was cut: batch 10 (writer 7, sequence 5) is
     * new again, batch 8 (sequence 4) still a duplicate */
    fl_writer_batch_t dup;
    assert_int_equal(fl_writer_state_check(&f->writers, 7, 4, &dup, &err), FL_WRITER_DUPLICATE);
    assert_int_not_equal(fl_writer_state_check(&f->writers, 7, 5, &dup, &err), FL_WRITER_DUPLICATE);
    /* it survives a close and open */
    fl_log_tablet_close(f);
    f = open_at(fd);
    assert_int_equal(f->log_end_offset, cut);
    /* and catches up again, byte for byte */
    catch_up(f, l);
    assert_int_equal(f->log_end_offset, full);
    assert_same_bytes(l, f, 0);
    assert_int_equal(fl_writer_state_check(&f->writers, 7, 11, &dup, &err), FL_WRITER_DUPLICATE);
    /* a cut at the start empties it; it then fetches everything */
    assert_int_equal(fl_log_tablet_truncate(&f, 0, &err), 0);
    assert_int_equal(f->log_end_offset, 0);
    assert_int_equal(f->segment_count, 1);
    catch_up(f, l);
    assert_same_bytes(l, f, 0);
    /* a cut at or past the end: nothing */
    fl_log_tablet_t *same = f;
    assert_int_equal(fl_log_tablet_truncate(&f, full + 5, &err), 0);
    assert_ptr_equal(f, same);
    fl_log_tablet_close(f);
    fl_log_tablet_close(l);
}

/* A follower left behind the leader's log start (the leader tiered and
 * deleted what it had not fetched yet) starts again there: its old files
 * go, the log begins and ends at the leader's start, it then catches up
 * byte for byte, and all of it holds across a reopen. */
static void test_follower_starts_again_at_the_leaders_start(void **state) {
    char ld[4200], fd[4200];
    join(ld, sizeof(ld), *state, "leader");
    join(fd, sizeof(fd), *state, "follower");
    fl_log_tablet_t *l = open_at(ld), *f = open_at(fd);
    fill_leader(l, 0, 30);
    fl_error_t err;
    /* the follower has the first fetch only */
    fl_buf_t part;
    fl_buf_init(&part);
    assert_int_equal(fl_log_tablet_read(l, 0, 300, l->log_end_offset, &part, &err), 0);
    fl_append_result_t r;
    assert_int_equal(fl_log_tablet_append_follower(f, part.data, part.len, &r, &err), 0);
    fl_buf_free(&part);
    int64_t had = f->log_end_offset;
    assert_true(had > 0);
    /* the leader's oldest segments go (tiered): its log begins past it */
    assert_int_equal(fl_log_tablet_drop_oldest(l, 3, &err), 0);
    int64_t start = l->log_start_offset;
    assert_true(start > had);
    assert_int_equal(fl_log_tablet_read(l, had, 300, l->log_end_offset, &part, &err),
                     FLUSS_ERR_LOG_OFFSET_OUT_OF_RANGE_EXCEPTION);
    fl_buf_free(&part);
    assert_int_equal(fl_log_tablet_reset_at(&f, start, &err), 0);
    assert_non_null(f);
    assert_int_equal(f->log_start_offset, start);
    assert_int_equal(f->log_end_offset, start);
    assert_int_equal(f->segment_count, 1);
    catch_up(f, l);
    assert_same_bytes(l, f, start);
    /* the same after a close and open, and nothing of the old log left */
    fl_log_tablet_close(f);
    f = open_at(fd);
    assert_int_equal(f->log_start_offset, start);
    assert_int_equal(f->log_end_offset, l->log_end_offset);
    assert_same_bytes(l, f, start);
    char first[4300];
    snprintf(first, sizeof(first), "%s/%020d.log", fd, 0);
    assert_int_not_equal(access(first, F_OK), 0);
    fl_log_tablet_close(f);
    fl_log_tablet_close(l);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_follow_and_truncate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_follower_prefix_and_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_follower_starts_again_at_the_leaders_start, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
