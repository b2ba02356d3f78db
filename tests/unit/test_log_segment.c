/*
 * test_log_segment.c — segment files (log_segment.h): a new segment, appends
 * with batch views, finding the batch that holds an offset, reads bounded by
 * bytes and by an end offset, the sparse offset index giving the same answers
 * at every density, the time index, and recovery: a segment whose tail is
 * garbage, a torn batch or a CRC-bad batch reopens with exactly its valid
 * prefix, and the file is cut there when asked.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_tmpdir.h"

#include "batch_builder.h"
#include "common_buf.h"
#include "log_segment.h"


static char *subdir(const char *dir, const char *name) {
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    assert_int_equal(mkdir(p, 0755), 0);
    return p;
}

static int scanned; /* batches seen by the recovery callback */
static int64_t scanned_next;
static void count_batch(const fl_batch_view_t *b, void *ctx) {
    assert_ptr_equal(ctx, &scanned);
    scanned++;
    assert_true(b->base_offset >= scanned_next);
    scanned_next = fl_batch_next_offset(b);
}

static fl_log_segment_t *seg_open(const char *dir, int64_t base, uint64_t interval, bool truncate) {
    fl_log_segment_t *s = NULL;
    fl_error_t err;
    scanned = 0;
    scanned_next = base;
    if (fl_log_segment_open(dir, base, interval, truncate, count_batch, &scanned, &s, &err))
        fail_msg("open segment: %s", err.msg);
    return s;
}

/* Appends one batch with the next offset and the given timestamp; returns
 * its size. payload[0] = seed. */
static size_t seg_add(fl_log_segment_t *s, int32_t records, size_t payload, uint8_t seed,
                      int64_t ts) {
    bb_spec_t spec = bb_spec(-1, -1, records, payload, seed);
    spec.base_offset = s->next_offset;
    spec.commit_timestamp = ts;
    size_t n;
    uint8_t *p = bb_new(&spec, &n);
    fl_batch_view_t v;
    fl_error_t err;
    assert_int_equal(fl_batch_parse(p, n, &v, &err), 0);
    if (fl_log_segment_append(s, p, n, &v, 1, &err)) fail_msg("append: %s", err.msg);
    free(p);
    return n;
}

static uint64_t file_size(const char *path) {
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

static void append_raw(const char *path, const void *p, size_t n) {
    int fd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, p, n), (ssize_t)n);
    close(fd);
}

static uint64_t find_pos(const fl_log_segment_t *s, int64_t offset) {
    uint64_t pos = 999999;
    fl_error_t err;
    int rc = fl_log_segment_find(s, offset, &pos, &err);
    if (rc == 1) return UINT64_MAX;
    if (rc) fail_msg("find %" PRId64 ": %s", offset, err.msg);
    return pos;
}

/* Walks the batches of a read buffer; returns how many, checks the offsets
 * follow on. */
static int walk(const uint8_t *p, size_t len, int64_t first_base, int64_t *next) {
    int n = 0;
    size_t pos = 0;
    int64_t expect = first_base;
    while (pos < len) {
        size_t bsize;
        fl_error_t err;
        fl_batch_view_t v;
        assert_int_equal(fl_batch_peek_size(p + pos, len - pos, 1 << 30, &bsize, &err), 0);
        assert_true(pos + bsize <= len);
        assert_int_equal(fl_batch_parse(p + pos, bsize, &v, &err), 0);
        assert_int_equal(fl_batch_check_crc(&v, &err), 0);
        assert_int_equal(v.base_offset, expect);
        expect = fl_batch_next_offset(&v);
        pos += bsize;
        n++;
    }
    if (next) *next = expect;
    return n;
}

static void test_open_new(void **state) {
    const char *dir = *state;
    fl_log_segment_t *s = seg_open(dir, 100, 0, true);
    assert_int_equal(s->base_offset, 100);
    assert_int_equal(s->next_offset, 100);
    assert_int_equal(s->size, 0);
    assert_int_equal(s->max_timestamp, -1);
    assert_int_equal(s->index_count, 0);
    assert_int_equal(scanned, 0);
    char want[512];
    snprintf(want, sizeof(want), "%s/00000000000000000100.log", dir);
    assert_string_equal(s->path, want);
    assert_int_equal(file_size(want), 0);
    assert_int_equal(find_pos(s, 100), UINT64_MAX);
    assert_int_equal(find_pos(s, 0), UINT64_MAX);
    fl_error_t err;
    assert_int_equal(fl_log_segment_offset_for_time(s, 0, &err), -1);
    fl_buf_t out;
    fl_buf_init(&out);
    size_t got = 7;
    assert_int_equal(fl_log_segment_read(s, 0, 1000, INT64_MAX, true, &out, &got, &err), 0);
    assert_int_equal(got, 0);
    assert_int_equal(out.len, 0);
    fl_buf_free(&out);
    assert_int_equal(fl_log_segment_sync(s, &err), 0);
    assert_int_equal(fl_log_segment_delete(s, &err), 0);
    assert_int_equal(access(want, F_OK), -1);
    assert_int_equal(fl_log_segment_delete(s, &err), 0); /* already gone is fine */
    fl_log_segment_close(s);
}

/* Batches of 1, 5, 1, 3, 0 (an empty batch still takes one offset) and 4
 * records from offset 100. */
static const int32_t shape[] = {1, 5, 1, 3, 0, 4};
#define SHAPE_N (sizeof(shape) / sizeof(shape[0]))

static void fill(fl_log_segment_t *s, uint64_t pos[SHAPE_N + 1], int64_t base[SHAPE_N + 1]) {
    pos[0] = 0;
    base[0] = s->next_offset;
    for (size_t i = 0; i < SHAPE_N; i++) {
        size_t n = seg_add(s, shape[i], 10 + 7 * i, (uint8_t)i, 1000 + 10 * (int64_t)i);
        pos[i + 1] = pos[i] + n;
        base[i + 1] = s->next_offset;
    }
}

static void test_append_and_find(void **state) {
    const char *dir = *state;
    fl_log_segment_t *s = seg_open(dir, 100, 0, true);
    uint64_t pos[SHAPE_N + 1];
    int64_t base[SHAPE_N + 1];
    fill(s, pos, base);
    assert_int_equal(base[SHAPE_N], 100 + 1 + 5 + 1 + 3 + 1 + 4);
    assert_int_equal(s->next_offset, base[SHAPE_N]);
    assert_int_equal(s->size, pos[SHAPE_N]);
    assert_int_equal(file_size(s->path), pos[SHAPE_N]);
    assert_int_equal(s->max_timestamp, 1000 + 10 * (SHAPE_N - 1));
    for (size_t i = 0; i < SHAPE_N; i++)
        for (int64_t o = base[i]; o < base[i + 1]; o++) assert_int_equal(find_pos(s, o), pos[i]);
    assert_int_equal(find_pos(s, base[SHAPE_N]), UINT64_MAX);
    assert_int_equal(find_pos(s, base[SHAPE_N] + 100), UINT64_MAX);
    assert_int_equal(find_pos(s, 0), 0); /* below the base: the first batch */
    /* the bytes on disk are the batches as given */
    fl_buf_t out;
    fl_buf_init(&out);
    size_t got;
    fl_error_t err;
    assert_int_equal(fl_log_segment_read(s, 0, 1 << 20, INT64_MAX, true, &out, &got, &err), 0);
    assert_int_equal(got, pos[SHAPE_N]);
    int64_t next;
    assert_int_equal(walk(out.data, out.len, 100, &next), (int)SHAPE_N);
    assert_int_equal(next, base[SHAPE_N]);
    fl_buf_free(&out);
    fl_log_segment_close(s);
}

static void test_append_many_batches_one_call(void **state) {
    const char *dir = *state;
    fl_log_segment_t *s = seg_open(dir, 0, 1, true);
    uint8_t *req = NULL;
    size_t len = 0;
    fl_batch_view_t v[4];
    int64_t next = 0;
    size_t starts[4];
    for (int i = 0; i < 4; i++) {
        bb_spec_t spec = bb_spec(-1, -1, i + 1, 20, (uint8_t)i);
        spec.base_offset = next;
        spec.commit_timestamp = 50;
        starts[i] = len;
        req = bb_append(req, &len, &spec);
        next += i + 1;
    }
    fl_error_t err;
    for (int i = 0; i < 4; i++) {
        size_t end = i < 3 ? starts[i + 1] : len;
        assert_int_equal(fl_batch_parse(req + starts[i], end - starts[i], &v[i], &err), 0);
    }
    assert_int_equal(fl_log_segment_append(s, req, len, v, 4, &err), 0);
    assert_int_equal(s->next_offset, 10);
    assert_int_equal(s->size, len);
    assert_int_equal(s->index_count, 4); /* interval 1: every batch */
    for (int i = 0; i < 4; i++) {
        assert_int_equal(s->index[i].offset, v[i].base_offset);
        assert_int_equal(s->index[i].position, starts[i]);
    }
    assert_int_equal(find_pos(s, 9), starts[3]);
    assert_int_equal(find_pos(s, 3), starts[2]);
    free(req);
    fl_log_segment_close(s);
}

static void test_read_bounds(void **state) {
    const char *dir = *state;
    fl_log_segment_t *s = seg_open(dir, 100, 0, true);
    uint64_t pos[SHAPE_N + 1];
    int64_t base[SHAPE_N + 1];
    fill(s, pos, base);
    fl_buf_t out;
    fl_buf_init(&out);
    fl_buf_append(&out, "xyz", 3); /* reads append */
    size_t got;
    fl_error_t err;
    /* exactly two batches fit */
    assert_int_equal(fl_log_segment_read(s, 0, pos[2], INT64_MAX, true, &out, &got, &err), 0);
    assert_int_equal(got, pos[2]);
    assert_int_equal(out.len, 3 + pos[2]);
    assert_memory_equal(out.data, "xyz", 3);
    assert_int_equal(walk(out.data + 3, got, 100, NULL), 2);
    /* one byte short of two: one */
    fl_buf_reset(&out);
    assert_int_equal(fl_log_segment_read(s, 0, pos[2] - 1, INT64_MAX, true, &out, &got, &err), 0);
    assert_int_equal(got, pos[1]);
    /* smaller than the first batch: still one batch with at_least_one */
    fl_buf_reset(&out);
    assert_int_equal(fl_log_segment_read(s, pos[1], 1, INT64_MAX, true, &out, &got, &err), 0);
    assert_int_equal(got, pos[2] - pos[1]);
    assert_int_equal(walk(out.data, got, base[1], NULL), 1);
    fl_buf_reset(&out);
    assert_int_equal(fl_log_segment_read(s, pos[1], 0, INT64_MAX, true, &out, &got, &err), 0);
    assert_int_equal(got, pos[2] - pos[1]);
    /* ... and none without it */
    fl_buf_reset(&out);
    assert_int_equal(fl_log_segment_read(s, pos[1], 1, INT64_MAX, false, &out, &got, &err), 0);
    assert_int_equal(got, 0);
    assert_int_equal(out.len, 0);
    /* end offset: batches that start at or after it are not read */
    for (size_t k = 1; k <= SHAPE_N; k++) {
        fl_buf_reset(&out);
        assert_int_equal(fl_log_segment_read(s, 0, 1 << 20, base[k], true, &out, &got, &err), 0);
        assert_int_equal(got, pos[k]);
        /* an end inside batch k-1 still returns that whole batch */
        if (base[k] - base[k - 1] > 1) {
            fl_buf_reset(&out);
            assert_int_equal(
                fl_log_segment_read(s, 0, 1 << 20, base[k] - 1, true, &out, &got, &err), 0);
            assert_int_equal(got, pos[k]);
        }
    }
    fl_buf_reset(&out);
    assert_int_equal(fl_log_segment_read(s, 0, 1 << 20, 100, true, &out, &got, &err), 0);
    assert_int_equal(got, 0); /* the end offset wins over at_least_one */
    /* from the middle to the end */
    fl_buf_reset(&out);
    assert_int_equal(fl_log_segment_read(s, pos[3], 1 << 20, INT64_MAX, true, &out, &got, &err), 0);
    assert_int_equal(got, pos[SHAPE_N] - pos[3]);
    assert_int_equal(walk(out.data, got, base[3], NULL), (int)SHAPE_N - 3);
    /* at the end: nothing */
    assert_int_equal(
        fl_log_segment_read(s, pos[SHAPE_N], 1 << 20, INT64_MAX, true, &out, &got, &err), 0);
    assert_int_equal(got, 0);
    fl_buf_free(&out);
    fl_log_segment_close(s);
}

static void test_sparse_index_same_answers(void **state) {
    const char *dir = *state;
    const uint64_t intervals[] = {1, 100, 250, 4096, (uint64_t)1 << 40};
    enum { NI = sizeof(intervals) / sizeof(intervals[0]), NB = 200 };
    fl_log_segment_t *segs[NI];
    uint64_t pos[NB + 1];
    int64_t base[NB + 1];
    for (size_t k = 0; k < NI; k++) {
        char name[32];
        snprintf(name, sizeof(name), "i%zu", k);
        char *d = subdir(dir, name);
        segs[k] = seg_open(d, 1000, intervals[k], true);
        free(d);
        pos[0] = 0;
        base[0] = 1000;
        for (int i = 0; i < NB; i++) {
            size_t n = seg_add(segs[k], 1 + i % 7, (size_t)(i * 13) % 90, (uint8_t)i, 5000 + i / 3);
            pos[i + 1] = pos[i] + n;
            base[i + 1] = segs[k]->next_offset;
        }
    }
    assert_int_equal(segs[0]->index_count, NB);
    assert_int_equal(segs[NI - 1]->index_count, 1);
    assert_true(segs[1]->index_count > segs[2]->index_count);
    assert_true(segs[2]->index_count > 1);
    for (int round = 0; round < 2; round++) {
        int b = 0;
        for (int64_t o = 990; o <= base[NB] + 3; o++) {
            while (b < NB && o >= base[b + 1]) b++;
            uint64_t want = o < 1000 ? 0 : o >= base[NB] ? UINT64_MAX : pos[b];
            for (size_t k = 0; k < NI; k++) assert_int_equal(find_pos(segs[k], o), want);
        }
        fl_error_t err;
        for (int64_t ts = 4990; ts <= 5000 + NB / 3 + 1; ts++) {
            int64_t want = fl_log_segment_offset_for_time(segs[0], ts, &err);
            for (size_t k = 1; k < NI; k++)
                assert_int_equal(fl_log_segment_offset_for_time(segs[k], ts, &err), want);
        }
        /* the index rebuilt by the scan on reopen answers the same */
        for (size_t k = 0; k < NI && round == 0; k++) {
            char *path = strdup(segs[k]->path);
            *strrchr(path, '/') = '\0';
            size_t count = segs[k]->index_count;
            fl_log_segment_close(segs[k]);
            segs[k] = seg_open(path, 1000, intervals[k], true);
            assert_int_equal(scanned, NB);
            assert_int_equal(segs[k]->index_count, count);
            assert_int_equal(segs[k]->next_offset, base[NB]);
            free(path);
        }
    }
    for (size_t k = 0; k < NI; k++) fl_log_segment_close(segs[k]);
}

static void test_offset_for_time(void **state) {
    const char *dir = *state;
    fl_log_segment_t *s = seg_open(dir, 0, 0, true);
    /* timestamps 100, 100, 200, 300, 300 on batches of 2 records */
    const int64_t ts[] = {100, 100, 200, 300, 300};
    for (int i = 0; i < 5; i++) seg_add(s, 2, 8, 0, ts[i]);
    fl_error_t err;
    assert_int_equal(fl_log_segment_offset_for_time(s, INT64_MIN, &err), 0);
    assert_int_equal(fl_log_segment_offset_for_time(s, 0, &err), 0);
    assert_int_equal(fl_log_segment_offset_for_time(s, 100, &err), 0);
    assert_int_equal(fl_log_segment_offset_for_time(s, 101, &err), 4);
    assert_int_equal(fl_log_segment_offset_for_time(s, 200, &err), 4);
    assert_int_equal(fl_log_segment_offset_for_time(s, 250, &err), 6);
    assert_int_equal(fl_log_segment_offset_for_time(s, 300, &err), 6);
    assert_int_equal(fl_log_segment_offset_for_time(s, 301, &err), -1);
    assert_int_equal(fl_log_segment_offset_for_time(s, INT64_MAX, &err), -1);
    assert_int_equal(s->max_timestamp, 300);
    fl_log_segment_close(s);
    /* the same after the scan */
    s = seg_open(dir, 0, 0, true);
    assert_int_equal(s->max_timestamp, 300);
    assert_int_equal(fl_log_segment_offset_for_time(s, 101, &err), 4);
    assert_int_equal(fl_log_segment_offset_for_time(s, 300, &err), 6);
    assert_int_equal(fl_log_segment_offset_for_time(s, 301, &err), -1);
    fl_log_segment_close(s);
}

enum tail_kind {
    TAIL_GARBAGE,
    TAIL_ZEROS,
    TAIL_SHORT_HEAD,
    TAIL_TORN_BATCH,
    TAIL_CRC_BAD,
    TAIL_BAD_MAGIC,
    TAIL_HUGE_LENGTH,
    TAIL_OFFSET_BACKWARDS,
    TAIL_KIND_N
};

/* The bytes of a bad tail after a segment whose next offset is next. */
static uint8_t *make_tail(enum tail_kind kind, int64_t next, size_t *len) {
    bb_spec_t spec = bb_spec(-1, -1, 3, 40, 0x77);
    spec.base_offset = next;
    spec.commit_timestamp = 9999;
    uint8_t *p = bb_new(&spec, len);
    switch (kind) {
    case TAIL_GARBAGE:
        for (size_t i = 0; i < *len; i++) p[i] = (uint8_t)(i * 37 + 11);
        break;
    case TAIL_ZEROS: /* e.g. a file extended but never written */
        memset(p, 0, *len);
        break;
    case TAIL_SHORT_HEAD:
        *len = 7;
        break;
    case TAIL_TORN_BATCH:
        *len -= 5;
        break;
    case TAIL_CRC_BAD:
        p[*len - 1] ^= 0x01;
        break;
    case TAIL_BAD_MAGIC:
        p[fl_batch_field_offset(0, FL_BATCH_FIELD_MAGIC)] = 3;
        break;
    case TAIL_HUGE_LENGTH:
        fl_put_le32(p + fl_batch_field_offset(0, FL_BATCH_FIELD_LENGTH), 0x7FFFFFF0);
        break;
    case TAIL_OFFSET_BACKWARDS: /* a whole valid batch, but offsets go back */
        fl_batch_set_base_offset(p, next - 2);
        break;
    default:
        break;
    }
    return p;
}

static void test_recovery_truncates_bad_tail(void **state) {
    const char *dir = *state;
    for (int kind = 0; kind < TAIL_KIND_N; kind++) {
        for (int trunc = 0; trunc <= 1; trunc++) {
            char name[32];
            snprintf(name, sizeof(name), "k%d_%d", kind, trunc);
            char *d = subdir(dir, name);
            fl_log_segment_t *s = seg_open(d, 50, 64, true);
            int nb = 3 + kind;
            for (int i = 0; i < nb; i++) seg_add(s, 1 + i % 3, 30 + (size_t)i, (uint8_t)i, 10 + i);
            uint64_t valid = s->size;
            int64_t next = s->next_offset;
            size_t index_count = s->index_count;
            char *path = strdup(s->path);
            fl_log_segment_close(s);
            size_t tl;
            uint8_t *tail = make_tail((enum tail_kind)kind, next, &tl);
            append_raw(path, tail, tl);
            free(tail);
            assert_int_equal(file_size(path), valid + tl);

            s = seg_open(d, 50, 64, trunc);
            assert_int_equal(scanned, nb); /* every valid batch, nothing after */
            assert_int_equal(s->size, valid);
            assert_int_equal(s->next_offset, next);
            assert_int_equal(s->max_timestamp, 10 + nb - 1);
            assert_int_equal(s->index_count, index_count);
            assert_int_equal(file_size(path), trunc ? valid : valid + tl);
            assert_int_equal(find_pos(s, next), UINT64_MAX);
            fl_buf_t out;
            fl_buf_init(&out);
            size_t got;
            fl_error_t err;
            assert_int_equal(fl_log_segment_read(s, 0, 1 << 20, INT64_MAX, true, &out, &got, &err),
                             0);
            assert_int_equal(got, valid);
            assert_int_equal(walk(out.data, out.len, 50, NULL), nb);
            fl_buf_free(&out);
            /* appending continues at the end of the valid prefix */
            size_t n = seg_add(s, 2, 10, 0xEE, 500);
            fl_log_segment_close(s);
            s = seg_open(d, 50, 64, true);
            assert_int_equal(scanned, nb + 1);
            assert_int_equal(s->size, valid + n);
            assert_int_equal(s->next_offset, next + 2);
            /* without truncation the new batch overwrote only part of the
             * old tail; the reopen cuts what is left of it */
            assert_int_equal(file_size(path), valid + n);
            fl_log_segment_close(s);
            free(path);
            free(d);
        }
    }
}

static void test_recovery_corrupt_middle_keeps_prefix(void **state) {
    const char *dir = *state;
    fl_log_segment_t *s = seg_open(dir, 0, 1, true);
    uint64_t pos[7];
    pos[0] = 0;
    for (int i = 0; i < 6; i++) pos[i + 1] = pos[i] + seg_add(s, 2, 25, (uint8_t)i, 1 + i);
    char *path = strdup(s->path);
    fl_log_segment_close(s);
    /* flip one payload byte of batch 3 */
    int fd = open(path, O_RDWR);
    uint8_t c;
    assert_int_equal(pread(fd, &c, 1, (off_t)pos[3] + 60), 1);
    c ^= 0x40;
    assert_int_equal(pwrite(fd, &c, 1, (off_t)pos[3] + 60), 1);
    close(fd);
    /* whole batches follow it: damage at rest, not a torn tail. It stays
     * in the file as a damaged range, the batches after it are kept */
    s = seg_open(dir, 0, 1, true);
    assert_int_equal(scanned, 5);
    assert_int_equal(s->next_offset, 12);
    assert_int_equal(s->size, pos[6]);
    assert_int_equal(file_size(path), pos[6]);
    assert_int_equal(s->max_timestamp, 6);
    assert_int_equal(s->damaged_count, 1);
    assert_int_equal(s->damaged[0].start_offset, 6);
    assert_int_equal(s->damaged[0].end_offset, 8);
    assert_int_equal(s->damaged[0].position, pos[3]);
    /* a read from before it stops in front of it; a read of it fails */
    uint64_t at;
    fl_error_t err;
    fl_buf_t out;
    fl_buf_init(&out);
    size_t got;
    assert_int_equal(fl_log_segment_find(s, 0, &at, &err), 0);
    assert_int_equal(fl_log_segment_read(s, at, 1 << 20, INT64_MAX, true, &out, &got, &err),
                     FL_LOG_SEGMENT_CUT);
    assert_int_equal(got, pos[3]);
    assert_int_equal(fl_log_segment_find(s, 7, &at, &err), 0);
    assert_int_equal(at, pos[3]);
    assert_int_equal(fl_log_segment_read(s, at, 1 << 20, INT64_MAX, true, &out, &got, &err),
                     FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    assert_int_equal(fl_log_segment_find(s, 8, &at, &err), 0);
    assert_int_equal(at, pos[4]);
    fl_buf_free(&out);
    fl_log_segment_close(s);
    free(path);
}

static void test_big_batches(void **state) {
    /* batches larger than the 64 KiB scan chunk */
    const char *dir = *state;
    fl_log_segment_t *s = seg_open(dir, 0, 0, true);
    size_t a = seg_add(s, 3, 200000, 1, 1);
    size_t b = seg_add(s, 1, 70000, 2, 2);
    seg_add(s, 1, 10, 3, 3);
    fl_log_segment_close(s);
    s = seg_open(dir, 0, 0, true);
    assert_int_equal(scanned, 3);
    assert_int_equal(s->next_offset, 5);
    assert_int_equal(find_pos(s, 2), 0);
    assert_int_equal(find_pos(s, 3), a);
    assert_int_equal(find_pos(s, 4), a + b);
    fl_buf_t out;
    fl_buf_init(&out);
    size_t got;
    fl_error_t err;
    assert_int_equal(fl_log_segment_read(s, 0, 100, INT64_MAX, true, &out, &got, &err), 0);
    assert_int_equal(got, a);
    assert_int_equal(out.data[48], 1);
    assert_int_equal(out.data[48 + 199999], (uint8_t)(1 + 199999));
    fl_buf_free(&out);
    fl_log_segment_close(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_open_new, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append_and_find, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append_many_batches_one_call, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_bounds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sparse_index_same_answers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_offset_for_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recovery_truncates_bad_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recovery_corrupt_middle_keeps_prefix, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_big_batches, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
