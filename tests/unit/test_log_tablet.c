/*
 * test_log_tablet.c — a bucket's log (log_tablet.h): offsets and commit
 * timestamps assigned on append, all-or-nothing requests, idempotent
 * duplicates, reads by offset (containing batch, end, out of range),
 * segment rolling, close/reopen recovery (offsets, bytes, timestamps,
 * writer state, torn tail), retention by age, timestamp lookups, a failed
 * write taking the log offline, and a writer killed with SIGKILL while
 * appending: every acknowledged batch is there after reopen, once.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_tmpdir.h"

#include "batch_builder.h"
#include "common_buf.h"
#include "log_tablet.h"


static fl_log_config_t cfg_default(void) {
    fl_log_config_t c;
    memset(&c, 0, sizeof(c));
    c.segment_bytes = 1u << 30;
    c.index_interval = 4096;
    c.ttl_ms = 0;
    c.batch_bytes_max = 1u << 20;
    c.flush_every_append = false;
    return c;
}

static fl_log_tablet_t *tab_open(const char *dir, const fl_log_config_t *cfg) {
    fl_log_tablet_t *t = NULL;
    fl_error_t err;
    if (fl_log_tablet_open(dir, cfg, &t, &err)) fail_msg("open tablet %s: %s", dir, err.msg);
    return t;
}

/* A batch whose first four payload bytes are a tag (LE), to recognise it
 * when it is read back. */
static uint8_t *tagged_append(uint8_t *req, size_t *len, int64_t writer, int32_t seq,
                              int32_t records, size_t payload, uint32_t tag) {
    bb_spec_t s = bb_spec(writer, seq, records, payload < 4 ? 4 : payload, (uint8_t)tag);
    size_t at = *len;
    req = bb_append(req, len, &s);
    fl_put_le32(req + at + FL_BATCH_HEADER_V0, tag);
    bb_refresh_crc(req + at, *len - at);
    return req;
}

/* Appends a request of one tagged batch. */
static int append1(fl_log_tablet_t *t, int64_t writer, int32_t seq, int32_t records,
                   size_t payload, uint32_t tag, int64_t now, fl_append_result_t *res,
                   fl_error_t *err) {
    size_t len = 0;
    uint8_t *req = tagged_append(NULL, &len, writer, seq, records, payload, tag);
    int rc = fl_log_tablet_append(t, req, len, now, res, err);
    free(req);
    return rc;
}

static fl_append_result_t append1_ok(fl_log_tablet_t *t, int64_t writer, int32_t seq,
                                     int32_t records, size_t payload, uint32_t tag, int64_t now) {
    fl_append_result_t res;
    fl_error_t err;
    if (append1(t, writer, seq, records, payload, tag, now, &res, &err))
        fail_msg("append: %s", err.msg);
    return res;
}

typedef struct got_batch {
    int64_t base, next, ts, writer;
    int32_t seq, records;
    uint32_t tag;
} got_batch_t;

/* Parses the batches of a read; returns how many (at most max). */
static size_t parse_read(const fl_buf_t *b, got_batch_t *out, size_t max) {
    size_t n = 0, pos = 0;
    while (pos < b->len) {
        size_t bsize;
        fl_error_t err;
        fl_batch_view_t v;
        assert_int_equal(fl_batch_peek_size(b->data + pos, b->len - pos, 1u << 30, &bsize, &err),
                         0);
        assert_true(pos + bsize <= b->len);
        assert_int_equal(fl_batch_parse(b->data + pos, bsize, &v, &err), 0);
        assert_int_equal(fl_batch_check_crc(&v, &err), 0);
        assert_true(n < max);
        out[n].base = v.base_offset;
        out[n].next = fl_batch_next_offset(&v);
        out[n].ts = v.commit_timestamp;
        out[n].writer = v.writer_id;
        out[n].seq = v.batch_sequence;
        out[n].records = v.record_count;
        out[n].tag = (uint32_t)fl_get_le32(v.data + v.records_start);
        n++;
        pos += bsize;
    }
    return n;
}

/* Reads everything from offset (no byte or offset limit). */
static size_t read_from(fl_log_tablet_t *t, int64_t offset, got_batch_t *out, size_t max) {
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t err;
    if (fl_log_tablet_read(t, offset, SIZE_MAX / 2, INT64_MAX, &b, &err))
        fail_msg("read %" PRId64 ": %s", offset, err.msg);
    size_t n = parse_read(&b, out, max);
    fl_buf_free(&b);
    return n;
}

static int count_segment_files(const char *dir) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strlen(e->d_name) == 24 && strcmp(e->d_name + 20, ".log") == 0) n++;
    closedir(d);
    return n;
}

static uint64_t file_size(const char *path) {
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

static void test_open_empty(void **state) {
    char path[512];
    snprintf(path, sizeof(path), "%s/a/b/log-0", (const char *)*state);
    fl_log_config_t cfg = cfg_default();
    fl_log_tablet_t *t = tab_open(path, &cfg); /* creates the directories */
    assert_int_equal(t->log_start_offset, 0);
    assert_int_equal(t->log_end_offset, 0);
    assert_int_equal(t->segment_count, 1);
    assert_int_equal(count_segment_files(path), 1);
    fl_error_t err;
    assert_int_equal(fl_log_tablet_offset_for_time(t, 0, &err), 0);
    got_batch_t g[1];
    assert_int_equal(read_from(t, 0, g, 1), 0);
    fl_buf_t b;
    fl_buf_init(&b);
    assert_int_equal(fl_log_tablet_read(t, 1, 1000, INT64_MAX, &b, &err),
                     FLUSS_ERR_LOG_OFFSET_OUT_OF_RANGE_EXCEPTION);
    assert_int_equal(fl_log_tablet_read(t, -1, 1000, INT64_MAX, &b, &err),
                     FLUSS_ERR_LOG_OFFSET_OUT_OF_RANGE_EXCEPTION);
    fl_buf_free(&b);
    assert_int_equal(fl_log_tablet_sync(t, &err), 0);
    assert_int_equal(fl_log_tablet_delete(t, &err), 0);
    assert_int_equal(access(path, F_OK), -1);
}

static void test_offsets_consecutive(void **state) {
    const char *dir = *state;
    fl_log_config_t cfg = cfg_default();
    fl_log_tablet_t *t = tab_open(dir, &cfg);
    fl_append_result_t r = append1_ok(t, -1, -1, 3, 10, 1, 100);
    assert_int_equal(r.base_offset, 0);
    assert_int_equal(r.last_offset, 2);
    assert_false(r.duplicate);
    /* a request of three batches: 1 record, empty (one offset), 4 records */
    size_t len = 0;
    uint8_t *req = tagged_append(NULL, &len, -1, -1, 1, 8, 2);
    req = tagged_append(req, &len, -1, -1, 0, 8, 3);
    req = tagged_append(req, &len, -1, -1, 4, 8, 4);
    fl_error_t err;
    assert_int_equal(fl_log_tablet_append(t, req, len, 100, &r, &err), 0);
    free(req);
    assert_int_equal(r.base_offset, 3);
    assert_int_equal(r.last_offset, 8);
    r = append1_ok(t, -1, -1, 1, 10, 5, 100);
    assert_int_equal(r.base_offset, 9);
    assert_int_equal(r.last_offset, 9);
    assert_int_equal(t->log_end_offset, 10);
    got_batch_t g[8];
    assert_int_equal(read_from(t, 0, g, 8), 5);
    const int64_t bases[] = {0, 3, 4, 5, 9};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(g[i].base, bases[i]);
        assert_int_equal(g[i].tag, (uint32_t)i + 1);
        if (i < 4) assert_int_equal(g[i].next, g[i + 1].base);
    }
    assert_int_equal(g[2].records, 0);
    assert_int_equal(g[4].next, 10);
    fl_log_tablet_close(t);
}

static void test_commit_timestamps(void **state) {
    const char *dir = *state;
    fl_log_config_t cfg = cfg_default();
    fl_log_tablet_t *t = tab_open(dir, &cfg);
    const int64_t now[] = {1000, 1000, 500, 2000, 1999, -5, 3000};
    const int64_t want[] = {1000, 1000, 1000, 2000, 2000, 2000, 3000};
    for (int i = 0; i < 7; i++) {
        size_t len = 0;
        uint8_t *req = tagged_append(NULL, &len, -1, -1, 2, 8, (uint32_t)(2 * i));
        req = tagged_append(req, &len, -1, -1, 1, 8, (uint32_t)(2 * i + 1));
        /* the client's timestamp is overwritten */
        fl_batch_set_commit_timestamp(req, 777777);
        fl_append_result_t r;
        fl_error_t err;
        assert_int_equal(fl_log_tablet_append(t, req, len, now[i], &r, &err), 0);
        free(req);
        assert_int_equal(t->last_commit_timestamp, want[i]);
    }
    got_batch_t g[16];
    assert_int_equal(read_from(t, 0, g, 16), 14);
    for (int i = 0; i < 14; i++) {
        assert_int_equal(g[i].ts, want[i / 2]); /* one timestamp per request */
        assert_int_equal(g[i].tag, (uint32_t)i);
    }
    fl_log_tablet_close(t);
    /* the timestamp floor survives a reopen */
    t = tab_open(dir, &cfg);
    assert_int_equal(t->last_commit_timestamp, 3000);
    append1_ok(t, -1, -1, 1, 8, 99, 10);
    assert_int_equal(read_from(t, 21, g, 16), 1);
    assert_int_equal(g[0].ts, 3000);
    fl_log_tablet_close(t);
}

static void test_all_or_nothing(void **state) {
    const char *dir = *state;
    fl_log_config_t cfg = cfg_default();
    cfg.batch_bytes_max = 1000;
    fl_log_tablet_t *t = tab_open(dir, &cfg);
    append1_ok(t, -1, -1, 2, 10, 1, 100);
    uint64_t size0 = t->segments[0]->size;
    fl_append_result_t r;
    fl_error_t err;
    size_t len;
    uint8_t *req;

    /* second batch with a bad CRC */
    len = 0;
    req = tagged_append(NULL, &len, -1, -1, 1, 10, 2);
    size_t first = len;
    req = tagged_append(req, &len, -1, -1, 1, 10, 3);
    req[len - 1] ^= 0x10;
    assert_int_equal(fl_log_tablet_append(t, req, len, 200, &r, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    /* records end inside the second batch */
    req[len - 1] ^= 0x10;
    assert_int_equal(fl_log_tablet_append(t, req, len - 1, 200, &r, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_int_equal(fl_log_tablet_append(t, req, first + 11, 200, &r, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_int_equal(fl_log_tablet_append(t, req, first + 5, 200, &r, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    /* second batch with a bad magic / a bad count */
    size_t magic_at = fl_batch_field_offset(0, FL_BATCH_FIELD_MAGIC);
    req[first + magic_at] = 3;
    assert_int_equal(fl_log_tablet_append(t, req, len, 200, &r, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    req[first + magic_at] = 0;
    fl_put_le32(req + first + fl_batch_field_offset(0, FL_BATCH_FIELD_RECORD_COUNT), 7);
    assert_int_equal(fl_log_tablet_append(t, req, len, 200, &r, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    free(req);
    /* second batch larger than batch_bytes_max */
    len = 0;
    req = tagged_append(NULL, &len, -1, -1, 1, 10, 2);
    req = tagged_append(req, &len, -1, -1, 1, 1000, 3);
    assert_int_equal(fl_log_tablet_append(t, req, len, 200, &r, &err),
                     FLUSS_ERR_RECORD_TOO_LARGE_EXCEPTION);
    free(req);
    /* no batch at all */
    uint8_t dummy[1] = {0};
    assert_int_equal(fl_log_tablet_append(t, dummy, 0, 200, &r, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    /* second batch out of sequence for a new writer */
    len = 0;
    req = tagged_append(NULL, &len, 77, 0, 1, 10, 2);
    req = tagged_append(req, &len, 78, 1, 1, 10, 3);
    assert_int_equal(fl_log_tablet_append(t, req, len, 200, &r, &err),
                     FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    free(req);

    assert_int_equal(t->log_end_offset, 2);
    assert_int_equal(t->segments[0]->size, size0);
    assert_int_equal(file_size(t->segments[0]->path), size0);
    assert_int_equal(t->last_commit_timestamp, 100);
    assert_false(t->offline);
    got_batch_t g[4];
    assert_int_equal(read_from(t, 0, g, 4), 1);
    /* writer 77 was not recorded: seq 0 is new, not a duplicate */
    fl_append_result_t d = append1_ok(t, 77, 0, 1, 10, 4, 300);
    assert_false(d.duplicate);
    assert_int_equal(d.base_offset, 2);
    fl_log_tablet_close(t);
}

static void test_many_batches_per_request(void **state) {
    const char *dir = *state;
    fl_log_config_t cfg = cfg_default();
    fl_log_tablet_t *t = tab_open(dir, &cfg);
    /* more batches than the on-stack view array holds */
    size_t len = 0;
    uint8_t *req = NULL;
    for (int i = 0; i < 300; i++) req = tagged_append(req, &len, -1, -1, 1 + i % 3, 4, (uint32_t)i);
    fl_append_result_t r;
    fl_error_t err;
    assert_int_equal(fl_log_tablet_append(t, req, len, 10, &r, &err), 0);
    free(req);
    assert_int_equal(r.base_offset, 0);
    assert_int_equal(r.last_offset, 100 * (1 + 2 + 3) - 1);
    got_batch_t *g = malloc(300 * sizeof(*g));
    assert_int_equal(read_from(t, 0, g, 300), 300);
    for (int i = 0; i < 300; i++) assert_int_equal(g[i].tag, (uint32_t)i);
    /* above the per-request limit: refused, nothing appended */
    len = 0;
    req = NULL;
    for (int i = 0; i < 4097; i++) req = tagged_append(req, &len, -1, -1, 1, 4, (uint32_t)i);
    assert_int_equal(fl_log_tablet_append(t, req, len, 10, &r, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    free(req);
    assert_int_equal(t->log_end_offset, 600);
    free(g);
    fl_log_tablet_close(t);
}

static void test_duplicates(void **state) {
    const char *dir = *state;
    fl_log_config_t cfg = cfg_default();
    fl_log_tablet_t *t = tab_open(dir, &cfg);
    fl_append_result_t r, a[6];
    fl_error_t err;
    for (int32_t seq = 0; seq < 6; seq++) {
        a[seq] = append1_ok(t, 5, seq, 3, 10, (uint32_t)seq, 100);
        append1_ok(t, -1, -1, 1, 10, 100, 100); /* someone else in between */
    }
    int64_t end = t->log_end_offset;
    uint64_t size = t->segments[0]->size;
    for (int32_t seq = 1; seq < 6; seq++) {
        assert_int_equal(append1(t, 5, seq, 3, 10, (uint32_t)seq, 200, &r, &err), 0);
        assert_true(r.duplicate);
        assert_int_equal(r.base_offset, a[seq].base_offset);
        assert_int_equal(r.last_offset, a[seq].last_offset);
    }
    assert_int_equal(append1(t, 5, 0, 3, 10, 0, 200, &r, &err),
                     FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_int_equal(append1(t, 5, 7, 3, 10, 0, 200, &r, &err),
                     FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_int_equal(append1(t, 6, 1, 3, 10, 0, 200, &r, &err),
                     FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_int_equal(t->log_end_offset, end);
    assert_int_equal(t->segments[0]->size, size);
    assert_int_equal(t->last_commit_timestamp, 100);
    /* a duplicate inside a multi-batch request answers the whole request
     * as that duplicate and appends nothing, new batches before or after
     * it included (the reference's analyzeAndValidateWriterState) */
    size_t len = 0;
    uint8_t *req = tagged_append(NULL, &len, 9, 0, 1, 10, 50);
    req = tagged_append(req, &len, 5, 5, 3, 10, 5);
    assert_int_equal(fl_log_tablet_append(t, req, len, 300, &r, &err), 0);
    assert_true(r.duplicate);
    assert_int_equal(r.base_offset, a[5].base_offset);
    assert_int_equal(r.last_offset, a[5].last_offset);
    free(req);
    len = 0;
    req = tagged_append(NULL, &len, 5, 4, 3, 10, 4);
    req = tagged_append(req, &len, 5, 6, 3, 10, 6);
    assert_int_equal(fl_log_tablet_append(t, req, len, 300, &r, &err), 0);
    assert_true(r.duplicate);
    assert_int_equal(r.base_offset, a[4].base_offset);
    free(req);
    assert_int_equal(t->log_end_offset, end);
    assert_int_equal(t->segments[0]->size, size);
    /* the next sequence is accepted */
    r = append1_ok(t, 5, 6, 1, 10, 6, 300);
    assert_false(r.duplicate);
    assert_int_equal(r.base_offset, end);
    got_batch_t g[32];
    assert_int_equal(read_from(t, 0, g, 32), 13);
    fl_log_tablet_close(t);
}

static void test_read_ranges(void **state) {
    const char *dir = *state;
    fl_log_config_t cfg = cfg_default();
    fl_log_tablet_t *t = tab_open(dir, &cfg);
    /* batches [0,4) [4,5) [5,10) [10,12) */
    append1_ok(t, -1, -1, 4, 30, 0, 1);
    append1_ok(t, -1, -1, 1, 30, 1, 1);
    append1_ok(t, -1, -1, 5, 30, 2, 1);
    append1_ok(t, -1, -1, 2, 30, 3, 1);
    const int64_t starts[] = {0, 0, 0, 0, 4, 5, 5, 5, 5, 5, 10, 10};
    got_batch_t g[8];
    for (int64_t o = 0; o < 12; o++) {
        size_t n = read_from(t, o, g, 8);
        assert_true(n >= 1);
        assert_int_equal(g[0].base, starts[o]); /* the batch containing o */
        assert_int_equal(g[n - 1].next, 12);
    }
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t err;
    assert_int_equal(fl_log_tablet_read(t, 12, 1 << 20, INT64_MAX, &b, &err), 0);
    assert_int_equal(b.len, 0);
    assert_int_equal(fl_log_tablet_read(t, 13, 1 << 20, INT64_MAX, &b, &err),
                     FLUSS_ERR_LOG_OFFSET_OUT_OF_RANGE_EXCEPTION);
    assert_int_equal(err.code, 19);
    assert_int_equal(fl_log_tablet_read(t, INT64_MAX, 1 << 20, INT64_MAX, &b, &err),
                     FLUSS_ERR_LOG_OFFSET_OUT_OF_RANGE_EXCEPTION);
    assert_int_equal(fl_log_tablet_read(t, -1, 1 << 20, INT64_MAX, &b, &err),
                     FLUSS_ERR_LOG_OFFSET_OUT_OF_RANGE_EXCEPTION);
    assert_int_equal(b.len, 0);
    /* upper offset (high watermark): batches starting at or past it stay */
    assert_int_equal(fl_log_tablet_read(t, 0, 1 << 20, 5, &b, &err), 0);
    assert_int_equal(parse_read(&b, g, 8), 2);
    fl_buf_reset(&b);
    assert_int_equal(fl_log_tablet_read(t, 5, 1 << 20, 5, &b, &err), 0);
    assert_int_equal(b.len, 0);
    /* byte limit: at least one batch, then whole batches only */
    assert_int_equal(fl_log_tablet_read(t, 5, 1, INT64_MAX, &b, &err), 0);
    assert_int_equal(parse_read(&b, g, 8), 1);
    assert_int_equal(g[0].base, 5);
    size_t one = b.len;
    fl_buf_reset(&b);
    assert_int_equal(fl_log_tablet_read(t, 0, 2 * one, INT64_MAX, &b, &err), 0);
    assert_true(b.len <= 2 * one);
    assert_int_equal(parse_read(&b, g, 8), 2);
    fl_buf_free(&b);
    fl_log_tablet_close(t);
}

/* Appends n one-batch requests of records_each records with now = ts0 +
 * i * step; returns the base offsets in bases (n + 1 entries: the last one
 * is the log end). */
static void append_series(fl_log_tablet_t *t, int n, int32_t records_each, int64_t ts0,
                          int64_t step, int64_t *bases) {
    for (int i = 0; i < n; i++) {
        fl_append_result_t r = append1_ok(t, -1, -1, records_each, 40 + (size_t)(i % 5),
                                          (uint32_t)(1000 + i), ts0 + i * step);
        bases[i] = r.base_offset;
    }
    bases[n] = t->log_end_offset;
}

static void test_rolling_segments(void **state) {
    const char *dir = *state;
    fl_log_config_t cfg = cfg_default();
    cfg.segment_bytes = 300; /* about three batches of ~90 bytes */
    cfg.index_interval = 100;
    fl_log_tablet_t *t = tab_open(dir, &cfg);
    enum { N = 60 };
    int64_t bases[N + 1];
    append_series(t, N, 3, 1000, 1, bases);
    assert_int_equal(t->log_end_offset, 3 * N);
    assert_true(t->segment_count >= N / 4);
    assert_int_equal(count_segment_files(dir), (int)t->segment_count);
    for (size_t i = 0; i < t->segment_count; i++) {
        assert_true(t->segments[i]->size <= cfg.segment_bytes);
        if (i > 0) assert_int_equal(t->segments[i]->base_offset, t->segments[i - 1]->next_offset);
    }
    got_batch_t g[N];
    for (int64_t o = 0; o < 3 * N; o++) {
        size_t n = read_from(t, o, g, N);
        assert_int_equal(n, N - o / 3); /* every batch from the one holding o, across segments */
        for (size_t k = 0; k < n; k++) {
            assert_int_equal(g[k].base, o / 3 * 3 + 3 * (int64_t)k);
            assert_int_equal(g[k].tag, 1000 + (uint32_t)(o / 3) + (uint32_t)k);
        }
    }
    /* a byte limit spanning segments still gives whole batches in order */
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t err;
    assert_int_equal(fl_log_tablet_read(t, 0, 1000, INT64_MAX, &b, &err), 0);
    assert_true(b.len <= 1000 && b.len > 600);
    size_t n = parse_read(&b, g, N);
    for (size_t k = 0; k < n; k++) assert_int_equal(g[k].base, 3 * (int64_t)k);
    fl_buf_reset(&b);
    /* with an upper offset in a later segment */
    assert_int_equal(fl_log_tablet_read(t, 0, 1 << 20, 30, &b, &err), 0);
    assert_int_equal(parse_read(&b, g, N), 10);
    fl_buf_free(&b);
    fl_log_tablet_close(t);
}

static void read_all_bytes(fl_log_tablet_t *t, fl_buf_t *b) {
    fl_error_t err;
    fl_buf_reset(b);
    if (fl_log_tablet_read(t, t->log_start_offset, SIZE_MAX / 2, INT64_MAX, b, &err))
        fail_msg("read: %s", err.msg);
}

static void test_reopen_recovers(void **state) {
    const char *dir = *state;
    fl_log_config_t cfg = cfg_default();
    cfg.segment_bytes = 500;
    fl_log_tablet_t *t = tab_open(dir, &cfg);
    fl_append_result_t acked[40];
    for (int32_t i = 0; i < 40; i++) {
        acked[i] = append1_ok(t, 11 + i % 3, i / 3, 1 + i % 4, 30, (uint32_t)i, 5000 + i);
        append1_ok(t, -1, -1, 1, 10, 500 + (uint32_t)i, 5000 + i);
    }
    int64_t end = t->log_end_offset;
    size_t segs = t->segment_count;
    assert_true(segs > 5);
    fl_buf_t before, after;
    fl_buf_init(&before);
    fl_buf_init(&after);
    read_all_bytes(t, &before);
    fl_log_tablet_close(t);

    t = tab_open(dir, &cfg);
    assert_int_equal(t->log_start_offset, 0);
    assert_int_equal(t->log_end_offset, end);
    assert_int_equal(t->segment_count, segs);
    assert_int_equal(t->last_commit_timestamp, 5039);
    read_all_bytes(t, &after);
    assert_int_equal(after.len, before.len);
    assert_memory_equal(after.data, before.data, before.len);
    /* writer state: each writer's last five batches are duplicates */
    fl_append_result_t r;
    fl_error_t err;
    for (int32_t i = 39; i >= 25; i--) {
        assert_int_equal(append1(t, 11 + i % 3, i / 3, 1 + i % 4, 30, (uint32_t)i, 9000, &r, &err),
                         0);
        assert_true(r.duplicate);
        assert_int_equal(r.base_offset, acked[i].base_offset);
        assert_int_equal(r.last_offset, acked[i].last_offset);
    }
    /* writer 11 had sequences 0..13; 8 is six back */
    assert_int_equal(append1(t, 11, 8, 1, 30, 0, 9000, &r, &err),
                     FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_int_equal(append1(t, 11, 15, 1, 30, 0, 9000, &r, &err),
                     FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_int_equal(t->log_end_offset, end);
    r = append1_ok(t, 11, 14, 1, 30, 77, 10);
    assert_false(r.duplicate);
    assert_int_equal(r.base_offset, end);
    got_batch_t g[2];
    assert_int_equal(read_from(t, end, g, 2), 1);
    assert_int_equal(g[0].ts, 5039); /* now went back: the floor holds */
    fl_buf_free(&before);
    fl_buf_free(&after);
    fl_log_tablet_close(t);
}

static void test_torn_tail_truncated(void **state) {
    const char *dir = *state;
    fl_log_config_t cfg = cfg_default();
    cfg.segment_bytes = 400;
    for (int kind = 0; kind < 3; kind++) {
        char sub[512];
        snprintf(sub, sizeof(sub), "%s/k%d", dir, kind);
        fl_log_tablet_t *t = tab_open(sub, &cfg);
        for (int32_t i = 0; i < 12; i++) append1_ok(t, 3, i, 2, 40, (uint32_t)i, 100 + i);
        int64_t end = t->log_end_offset;
        fl_log_segment_t *active = t->segments[t->segment_count - 1];
        uint64_t valid = active->size;
        char *path = strdup(active->path);
        size_t segs = t->segment_count;
        fl_log_tablet_close(t);
        /* the next batch, torn (kind 0), CRC-bad (1), or garbage (2) */
        bb_spec_t s = bb_spec(3, 12, 2, 40, 9);
        s.base_offset = end;
        size_t n;
        uint8_t *p = bb_new(&s, &n);
        size_t tail = n;
        if (kind == 0) tail = n / 2;
        if (kind == 1) p[n - 3] ^= 0xFF;
        if (kind == 2) memset(p, 0xC3, n);
        int fd = open(path, O_WRONLY | O_APPEND);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, p, tail), (ssize_t)tail);
        close(fd);
        free(p);

        t = tab_open(sub, &cfg);
        assert_int_equal(t->log_end_offset, end);
        assert_int_equal(t->segment_count, segs);
        assert_int_equal(file_size(path), valid);
        got_batch_t g[16];
        assert_int_equal(read_from(t, 0, g, 16), 12);
        /* the torn batch was never acknowledged: seq 12 is new, 11 a duplicate */
        fl_append_result_t r;
        fl_error_t err;
        assert_int_equal(append1(t, 3, 11, 2, 40, 11, 500, &r, &err), 0);
        assert_true(r.duplicate);
        assert_int_equal(r.base_offset, end - 2);
        r = append1_ok(t, 3, 12, 2, 40, 12, 500);
        assert_false(r.duplicate);
        assert_int_equal(r.base_offset, end);
        fl_log_tablet_close(t);
        t = tab_open(sub, &cfg);
        assert_int_equal(t->log_end_offset, end + 2);
        assert_int_equal(read_from(t, 0, g, 16), 13);
        assert_int_equal(g[12].tag, 12);
        fl_log_tablet_close(t);
        free(path);
    }
}

static void test_retention(void **state) {
    const char *dir = *state;
    fl_log_config_t cfg = cfg_default();
    cfg.segment_bytes = 1; /* every request rolls: one request per segment */
    cfg.ttl_ms = 2500;
    fl_log_tablet_t *t = tab_open(dir, &cfg);
    enum { N = 10 };
    int64_t bases[N + 1];
    append_series(t, N, 2, 1000, 1000, bases); /* request i at now = 1000 (i + 1) */
    assert_int_equal(t->segment_count, N);
    assert_int_equal(count_segment_files(dir), N);
    fl_error_t err;
    /* nothing is old enough yet */
    assert_int_equal(fl_log_tablet_apply_retention(t, 3500, INT64_MAX, &err), 0);
    assert_int_equal(t->segment_count, N);
    /* a bound keeps every segment holding an offset at or above it (a
     * lake table's lake offset), however old */
    assert_int_equal(fl_log_tablet_apply_retention(t, 10000, bases[5], &err), 0);
    assert_int_equal(t->segment_count, N - 5);
    assert_int_equal(t->log_start_offset, bases[5]);
    assert_int_equal(fl_log_tablet_apply_retention(t, 10000, bases[5] + 1, &err), 0);
    assert_int_equal(t->segment_count, N - 5);
    /* at 10000 the segments with max timestamp < 7500 go: 1000..7000 */
    assert_int_equal(fl_log_tablet_apply_retention(t, 10000, INT64_MAX, &err), 0);
    assert_int_equal(t->segment_count, 3);
    assert_int_equal(count_segment_files(dir), 3);
    assert_int_equal(t->log_start_offset, bases[7]);
    assert_int_equal(t->segments[0]->base_offset, bases[7]);
    assert_int_equal(t->log_end_offset, bases[N]);
    fl_buf_t b;
    fl_buf_init(&b);
    assert_int_equal(fl_log_tablet_read(t, bases[7] - 1, 1 << 20, INT64_MAX, &b, &err),
                     FLUSS_ERR_LOG_OFFSET_OUT_OF_RANGE_EXCEPTION);
    assert_int_equal(fl_log_tablet_read(t, 0, 1 << 20, INT64_MAX, &b, &err),
                     FLUSS_ERR_LOG_OFFSET_OUT_OF_RANGE_EXCEPTION);
    fl_buf_free(&b);
    got_batch_t g[N];
    assert_int_equal(read_from(t, bases[7], g, N), 3);
    assert_int_equal(g[0].tag, 1007);
    /* a timestamp before the start answers the start */
    assert_int_equal(fl_log_tablet_offset_for_time(t, 0, &err), bases[7]);
    /* however old, the active segment stays */
    assert_int_equal(fl_log_tablet_apply_retention(t, INT64_MAX / 2, INT64_MAX, &err), 0);
    assert_int_equal(t->segment_count, 1);
    assert_int_equal(count_segment_files(dir), 1);
    assert_int_equal(t->log_start_offset, bases[N - 1]);
    assert_int_equal(read_from(t, bases[N - 1], g, N), 1);
    assert_int_equal(g[0].tag, 1000 + N - 1);
    /* appends continue; the start survives a reopen */
    append1_ok(t, -1, -1, 1, 10, 5, 20000);
    fl_log_tablet_close(t);
    t = tab_open(dir, &cfg);
    assert_int_equal(t->log_start_offset, bases[N - 1]);
    assert_int_equal(t->log_end_offset, bases[N] + 1);
    assert_int_equal(read_from(t, bases[N - 1], g, N), 2);
    fl_log_tablet_close(t);
    /* ttl <= 0 keeps everything */
    char sub[512];
    snprintf(sub, sizeof(sub), "%s/keep", dir);
    cfg.ttl_ms = 0;
    t = tab_open(sub, &cfg);
    append_series(t, 4, 1, 1, 1, bases);
    assert_int_equal(fl_log_tablet_apply_retention(t, INT64_MAX / 2, INT64_MAX, &err), 0);
    assert_int_equal(t->segment_count, 4);
    fl_log_tablet_close(t);
}

static void test_offset_for_time_across_segments(void **state) {
    const char *dir = *state;
    fl_log_config_t cfg = cfg_default();
    cfg.segment_bytes = 250;
    fl_log_tablet_t *t = tab_open(dir, &cfg);
    enum { N = 30 };
    int64_t bases[N + 1];
    append_series(t, N, 2, 100, 10, bases); /* request i at 100 + 10 i */
    assert_true(t->segment_count > 5);
    fl_error_t err;
    for (int i = 0; i < N; i++) {
        assert_int_equal(fl_log_tablet_offset_for_time(t, 100 + 10 * i, &err), bases[i]);
        assert_int_equal(fl_log_tablet_offset_for_time(t, 100 + 10 * i - 9, &err), bases[i]);
    }
    assert_int_equal(fl_log_tablet_offset_for_time(t, INT64_MIN, &err), 0);
    assert_int_equal(fl_log_tablet_offset_for_time(t, 100 + 10 * (N - 1) + 1, &err), bases[N]);
    /* equal timestamps (now going back): the first batch with that time */
    fl_append_result_t r1 = append1_ok(t, -1, -1, 1, 10, 1, 50);
    append1_ok(t, -1, -1, 1, 10, 2, 60);
    assert_int_equal(fl_log_tablet_offset_for_time(t, 100 + 10 * (N - 1), &err), bases[N - 1]);
    assert_int_equal(fl_log_tablet_offset_for_time(t, 100 + 10 * (N - 1) + 1, &err),
                     t->log_end_offset);
    (void)r1;
    fl_log_tablet_close(t);
    /* after a reopen the same answers */
    t = tab_open(dir, &cfg);
    for (int i = 0; i < N; i++)
        assert_int_equal(fl_log_tablet_offset_for_time(t, 100 + 10 * i - 3, &err), bases[i]);
    fl_log_tablet_close(t);
}

static void test_failed_write_takes_offline(void **state) {
    const char *dir = *state;
    fl_log_config_t cfg = cfg_default();
    fl_log_tablet_t *t = tab_open(dir, &cfg);
    for (int32_t i = 0; i < 3; i++) append1_ok(t, 4, i, 1, 20, (uint32_t)i, 100);
    fl_log_segment_t *active = t->segments[t->segment_count - 1];
    char *path = strdup(active->path);
    uint64_t size = active->size;
    int saved = dup(active->fd);
    int full = open("/dev/full", O_RDWR);
    assert_true(full >= 0 && saved >= 0);
    assert_true(dup2(full, active->fd) == active->fd);
    close(full);
    fl_append_result_t r;
    fl_error_t err;
    assert_int_equal(append1(t, 4, 3, 1, 20, 3, 200, &r, &err), FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    assert_int_equal(err.code, 10);
    assert_true(t->offline);
    assert_int_equal(t->log_end_offset, 3);
    /* the file again (a device that failed one write may still read) */
    assert_true(dup2(saved, active->fd) == active->fd);
    close(saved);
    /* every later write fails, nothing is retried */
    assert_int_equal(append1(t, 4, 3, 1, 20, 3, 200, &r, &err), FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    assert_int_equal(append1(t, -1, -1, 1, 20, 3, 200, &r, &err), FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    assert_int_equal(fl_log_tablet_sync(t, &err), FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    fl_log_flush_t f;
    assert_false(fl_log_tablet_flush_begin(t, &f));
    /* what was acknowledged before the failure is still read */
    fl_buf_t b;
    fl_buf_init(&b);
    assert_int_equal(fl_log_tablet_read(t, 0, 1 << 20, t->log_end_offset, &b, &err), 0);
    assert_int_equal(b.len, size);
    fl_buf_free(&b);
    fl_log_tablet_close(t);
    /* the file was not touched; a reopen serves what was acknowledged */
    assert_int_equal(file_size(path), size);
    t = tab_open(dir, &cfg);
    assert_false(t->offline);
    assert_int_equal(t->log_end_offset, 3);
    r = append1_ok(t, 4, 3, 1, 20, 3, 300);
    assert_int_equal(r.base_offset, 3);
    fl_log_tablet_close(t);
    free(path);
}

static void test_failed_sync_takes_offline(void **state) {
    /* flush_every_append: the write succeeds but the fsync fails (EINVAL
     * on /dev/null put in place of the segment file) */
    const char *dir = *state;
    fl_log_config_t cfg = cfg_default();
    cfg.flush_every_append = true;
    fl_log_tablet_t *t = tab_open(dir, &cfg);
    append1_ok(t, -1, -1, 1, 20, 0, 100);
    int null = open("/dev/null", O_RDWR);
    assert_true(null >= 0);
    fl_log_segment_t *active = t->segments[0];
    assert_true(dup2(null, active->fd) == active->fd);
    close(null);
    fl_append_result_t r;
    fl_error_t err;
    assert_int_equal(append1(t, -1, -1, 1, 20, 1, 200, &r, &err), FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    assert_true(strstr(err.msg, "fsync") != NULL);
    assert_true(t->offline);
    assert_int_equal(t->log_end_offset, 1);
    assert_int_equal(append1(t, -1, -1, 1, 20, 1, 200, &r, &err), FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    assert_int_equal(fl_log_tablet_sync(t, &err), FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    fl_log_tablet_close(t);
    t = tab_open(dir, &cfg);
    assert_int_equal(t->log_end_offset, 1);
    fl_log_tablet_close(t);
}

/* --- SIGKILL while appending --------------------------------------- */

typedef struct ack {
    int64_t base;
    int32_t seq;
    uint32_t tag;
} ack_t;

static void child_append_forever(const char *dir, const fl_log_config_t *cfg, int64_t writer,
                                 uint32_t round, int fd) {
    fl_log_tablet_t *t;
    fl_error_t err;
    if (fl_log_tablet_open(dir, cfg, &t, &err)) _exit(2);
    for (int32_t seq = 0;; seq++) {
        size_t len = 0;
        uint8_t *req = tagged_append(NULL, &len, writer, seq, 1 + seq % 4, 8 + (size_t)(seq % 61),
                                     round << 24 | (uint32_t)seq);
        fl_append_result_t r;
        if (fl_log_tablet_append(t, req, len, 1000 + seq, &r, &err)) _exit(3);
        free(req);
        ack_t a = {r.base_offset, seq, round << 24 | (uint32_t)seq};
        if (write(fd, &a, sizeof(a)) != (ssize_t)sizeof(a)) _exit(4);
    }
}

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_sigkill_while_appending(void **state) {
    const char *dir = *state;
    fl_log_config_t cfg = cfg_default();
    cfg.segment_bytes = 16 * 1024; /* rolls happen during the run too */
    cfg.index_interval = 512;
    srand(12345);
    int64_t prev_end = 0;
    for (uint32_t round = 1; round <= 5; round++) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(p[0]);
            child_append_forever(dir, &cfg, 100 + round, round, p[1]);
        }
        close(p[1]);
        size_t cap = 1024, n = 0;
        ack_t *acks = malloc(cap * sizeof(*acks));
        int64_t deadline = mono_ms() + 50 + rand() % 151;
        bool killed = false;
        for (;;) {
            if (!killed && mono_ms() >= deadline) {
                kill(pid, SIGKILL);
                killed = true;
            }
            struct pollfd pf = {p[0], POLLIN, 0};
            poll(&pf, 1, killed ? -1 : 5);
            if (!(pf.revents & (POLLIN | POLLHUP))) continue;
            if (n == cap) acks = realloc(acks, (cap *= 2) * sizeof(*acks));
            ssize_t r = read(p[0], &acks[n], sizeof(ack_t));
            if (r == 0) break;
            assert_int_equal(r, sizeof(ack_t)); /* 16-byte pipe writes are atomic */
            n++;
        }
        close(p[0]);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        assert_true(n > 0);

        fl_log_tablet_t *t = tab_open(dir, &cfg);
        const ack_t *last = &acks[n - 1];
        assert_true(t->log_end_offset >= last->base + 1);
        assert_true(t->log_end_offset >= prev_end);
        fl_buf_t b;
        fl_buf_init(&b);
        fl_error_t err;
        assert_int_equal(fl_log_tablet_read(t, prev_end, SIZE_MAX / 2, INT64_MAX, &b, &err), 0);
        size_t max = n + 2;
        got_batch_t *g = malloc(max * sizeof(*g));
        size_t got = parse_read(&b, g, max);
        fl_buf_free(&b);
        /* this round's batches: offsets follow on, tags in order, each once;
         * at most one batch appended but not acknowledged */
        assert_true(got == n || got == n + 1);
        for (size_t k = 0; k < got; k++) {
            assert_int_equal(g[k].base, k ? g[k - 1].next : prev_end);
            assert_int_equal(g[k].tag, round << 24 | (uint32_t)k);
            assert_int_equal(g[k].writer, 100 + round);
            assert_int_equal(g[k].seq, (int32_t)k);
            if (k < n) {
                assert_int_equal(g[k].base, acks[k].base);
                assert_int_equal(acks[k].tag, g[k].tag);
                assert_int_equal(acks[k].seq, (int32_t)k);
            }
        }
        assert_int_equal(g[got - 1].next, t->log_end_offset);
        /* the last acknowledged batch is still known to be a duplicate */
        fl_append_result_t r;
        size_t len = 0;
        uint8_t *req = tagged_append(NULL, &len, 100 + round, last->seq, 1 + last->seq % 4,
                                     8 + (size_t)(last->seq % 61), last->tag);
        assert_int_equal(fl_log_tablet_append(t, req, len, 0, &r, &err), 0);
        free(req);
        assert_true(r.duplicate);
        assert_int_equal(r.base_offset, last->base);
        prev_end = t->log_end_offset;
        fl_log_tablet_close(t);
        free(g);
        free(acks);
    }
}

/* Regression: two batches of one writer in one request (seq n, n+1). */
static void test_one_writer_two_batches_in_a_request(void **state) {
    fl_log_config_t cfg = cfg_default();
    fl_log_tablet_t *t = tab_open(*state, &cfg);
    fl_append_result_t r;
    fl_error_t err;
    size_t len = 0;
    uint8_t *req = tagged_append(NULL, &len, 7, 0, 1, 10, 1);
    req = tagged_append(req, &len, 7, 1, 1, 10, 2);
    assert_int_equal(fl_log_tablet_append(t, req, len, 100, &r, &err), 0);
    assert_int_equal(r.base_offset, 0);
    assert_int_equal(t->log_end_offset, 2);
    free(req);
    /* a known writer continues with two more */
    len = 0;
    req = tagged_append(NULL, &len, 7, 2, 1, 10, 3);
    req = tagged_append(req, &len, 7, 3, 1, 10, 4);
    assert_int_equal(fl_log_tablet_append(t, req, len, 100, &r, &err), 0);
    assert_int_equal(t->log_end_offset, 4);
    free(req);
    /* a gap inside the request is refused, nothing appended */
    len = 0;
    req = tagged_append(NULL, &len, 7, 4, 1, 10, 5);
    req = tagged_append(req, &len, 7, 6, 1, 10, 6);
    assert_int_equal(fl_log_tablet_append(t, req, len, 100, &r, &err),
                     FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_int_equal(t->log_end_offset, 4);
    free(req);
    fl_log_tablet_close(t);
}

/* A segment cut short with later segments holding batches is damage at
 * rest, not a crash: the later segments are kept and served, the missing
 * offsets are reported and never served, and the writer state follows
 * the batches that are there. */
static void test_hole_between_segments_is_kept_and_reported(void **state) {
    fl_log_config_t cfg = cfg_default();
    cfg.segment_bytes = 1; /* one request per segment */
    fl_log_tablet_t *t = tab_open(*state, &cfg);
    for (int32_t seq = 0; seq < 4; seq++) append1_ok(t, 9, seq, 1, 10, (uint32_t)seq, 1000 + seq);
    fl_log_tablet_close(t);
    char path[512];
    snprintf(path, sizeof(path), "%s/%020d.log", (char *)*state, 1);
    assert_int_equal(truncate(path, 20), 0); /* segment 1 damaged */
    snprintf(path, sizeof(path), "%s/%020d.index", (char *)*state, 1);
    unlink(path);
    t = tab_open(*state, &cfg);
    assert_int_equal(t->log_end_offset, 4);
    assert_int_equal(t->last_commit_timestamp, 1003);
    got_batch_t g[8];
    assert_int_equal(read_from(t, 0, g, 8), 1); /* stops before the hole */
    assert_int_equal(g[0].tag, 0);
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t err;
    assert_int_equal(fl_log_tablet_read(t, 1, 1 << 20, INT64_MAX, &b, &err),
                     FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    assert_non_null(strstr(err.msg, "offsets 1..1"));
    fl_buf_free(&b);
    assert_int_equal(read_from(t, 2, g, 8), 2);
    assert_int_equal(g[0].tag, 2);
    /* seq 3 is a duplicate; seq 4 follows */
    fl_append_result_t r;
    assert_int_equal(append1(t, 9, 3, 1, 10, 33, 2000, &r, &err), 0);
    assert_true(r.duplicate);
    assert_int_equal(append1(t, 9, 4, 1, 10, 44, 2000, &r, &err), 0);
    assert_false(r.duplicate);
    assert_int_equal(r.base_offset, 4);
    fl_log_tablet_close(t);
    /* and after one more restart the same */
    t = tab_open(*state, &cfg);
    assert_int_equal(t->log_end_offset, 5);
    fl_log_tablet_close(t);
}

/* A segment whose file ends early while the later ones are empty is a
 * crash's cut tail: the empty later segments go, the log ends there. */
static void test_empty_segments_after_cut_tail_removed(void **state) {
    fl_log_config_t cfg = cfg_default();
    cfg.segment_bytes = 1;
    fl_log_tablet_t *t = tab_open(*state, &cfg);
    for (int32_t seq = 0; seq < 3; seq++) append1_ok(t, 9, seq, 1, 10, (uint32_t)seq, 1000 + seq);
    fl_log_tablet_close(t);
    char path[512];
    for (int base = 1; base <= 2; base++) {
        snprintf(path, sizeof(path), "%s/%020d.log", (char *)*state, base);
        assert_int_equal(truncate(path, base == 1 ? 20 : 0), 0);
        snprintf(path, sizeof(path), "%s/%020d.index", (char *)*state, base);
        unlink(path);
    }
    t = tab_open(*state, &cfg);
    assert_int_equal(t->log_end_offset, 1);
    assert_int_equal(count_segment_files(*state), 2);
    fl_error_t err;
    fl_append_result_t r;
    assert_int_equal(append1(t, 9, 1, 1, 10, 11, 2000, &r, &err), 0);
    assert_int_equal(r.base_offset, 1);
    fl_log_tablet_close(t);
}

/* A writer whose batches retention deleted stays known after a restart
 * (the writer snapshot), so its next sequence is accepted, not 31. */
static void test_writer_snapshot_survives_retention(void **state) {
    fl_log_config_t cfg = cfg_default();
    cfg.segment_bytes = 1; /* one request per segment */
    cfg.ttl_ms = 1000;
    fl_log_tablet_t *t = tab_open(*state, &cfg);
    for (int32_t seq = 0; seq < 3; seq++) append1_ok(t, 5, seq, 1, 10, (uint32_t)seq, 1000);
    append1_ok(t, -1, -1, 1, 10, 99, 100000); /* a later segment without writer 5 */
    append1_ok(t, -1, -1, 1, 10, 98, 100000);
    fl_error_t err;
    assert_int_equal(fl_log_tablet_apply_retention(t, 100000, INT64_MAX, &err), 0);
    assert_true(t->log_start_offset >= 3); /* writer 5's batches are gone */
    fl_log_tablet_close(t);
    t = tab_open(*state, &cfg);
    fl_append_result_t r;
    assert_int_equal(append1(t, 5, 3, 1, 10, 3, 100001, &r, &err), 0);
    assert_false(r.duplicate);
    fl_log_tablet_close(t);
}

/* A snapshot ahead of the log (the log lost its tail after the snapshot
 * was written) is discarded and the state rebuilt from the log. */
static void test_writer_snapshot_ahead_of_log(void **state) {
    fl_log_config_t cfg = cfg_default();
    fl_log_tablet_t *t = tab_open(*state, &cfg);
    append1_ok(t, 6, 0, 1, 10, 0, 1000);
    fl_append_result_t second = append1_ok(t, 6, 1, 1, 10, 1, 1000);
    fl_log_tablet_close(t); /* snapshot at offset 2 */
    char path[512];
    snprintf(path, sizeof(path), "%s/%020d.log", (char *)*state, 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(truncate(path, st.st_size - 5), 0); /* second batch torn */
    t = tab_open(*state, &cfg);
    assert_int_equal(t->log_end_offset, second.base_offset);
    fl_append_result_t r;
    fl_error_t err;
    /* seq 1 was lost with the tail: it is new again, not a duplicate */
    assert_int_equal(append1(t, 6, 1, 1, 10, 1, 2000, &r, &err), 0);
    assert_false(r.duplicate);
    assert_int_equal(r.base_offset, second.base_offset);
    fl_log_tablet_close(t);
}

/* Rolled segments are reopened from their index files (no scan); without a
 * usable index file they are scanned; reads and lookups agree either way. */
static void test_index_files(void **state) {
    const char *dir = *state;
    fl_log_config_t cfg = cfg_default();
    cfg.segment_bytes = 1; /* one request per segment */
    fl_log_tablet_t *t = tab_open(dir, &cfg);
    enum { N = 6 };
    int64_t bases[N + 1];
    append_series(t, N, 3, 1000, 1000, bases);
    int64_t end = t->log_end_offset;
    fl_log_tablet_close(t);
    char path[512];
    snprintf(path, sizeof(path), "%s/%020lld.index", dir, (long long)bases[1]);
    struct stat st;
    assert_int_equal(stat(path, &st), 0); /* written at the roll */

    /* proof that the index is trusted: a flipped byte inside rolled segment 1
     * (same size) would make a scan cut the log there; from the index the
     * log stays whole */
    char seg[512];
    snprintf(seg, sizeof(seg), "%s/%020lld.log", dir, (long long)bases[1]);
    FILE *f = fopen(seg, "r+b");
    assert_non_null(f);
    fseek(f, 60, SEEK_SET);
    int c = fgetc(f);
    fseek(f, 60, SEEK_SET);
    fputc(c ^ 0xFF, f);
    fclose(f);
    t = tab_open(dir, &cfg);
    assert_int_equal(t->log_end_offset, end);
    fl_error_t err;
    assert_int_equal(fl_log_tablet_offset_for_time(t, 3500, &err), bases[3]);
    got_batch_t g[N];
    assert_int_equal(read_from(t, bases[4], g, N), 2);
    assert_int_equal(g[0].tag, 1004);
    /* ... but its batches' CRCs are checked when read: the damaged one is
     * never served */
    fl_buf_t b;
    fl_buf_init(&b);
    assert_int_equal(fl_log_tablet_read(t, bases[1], 1 << 20, INT64_MAX, &b, &err),
                     FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    assert_non_null(strstr(err.msg, "damaged"));
    assert_int_equal(read_from(t, bases[0], g, N), 1); /* stops before it */
    fl_buf_free(&b);
    fl_log_tablet_close(t);

    /* without the index file the damaged segment is scanned: its offsets
     * are a reported hole, the later segments stay */
    assert_int_equal(unlink(path), 0);
    t = tab_open(dir, &cfg);
    assert_int_equal(t->log_end_offset, end);
    fl_buf_init(&b);
    assert_int_equal(fl_log_tablet_read(t, bases[1], 1 << 20, INT64_MAX, &b, &err),
                     FLUSS_ERR_LOG_STORAGE_EXCEPTION);
    fl_buf_free(&b);
    assert_true(read_from(t, bases[2], g, N) >= 2);
    assert_int_equal(g[0].tag, 1002);
    fl_log_tablet_close(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_open_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_offsets_consecutive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_timestamps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_all_or_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_batches_per_request, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_ranges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rolling_segments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopen_recovers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_tail_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retention, setup, teardown),
        cmocka_unit_test_setup_teardown(test_offset_for_time_across_segments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_write_takes_offline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_sync_takes_offline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sigkill_while_appending, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_writer_two_batches_in_a_request, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hole_between_segments_is_kept_and_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_segments_after_cut_tail_removed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writer_snapshot_survives_retention, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writer_snapshot_ahead_of_log, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_files, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
