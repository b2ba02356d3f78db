/*
 * fuzz_segment_recover.c — a bucket's <base>.log segment files are scanned
 * from disk when a log opens (recovery): arbitrary bytes as segment 0,
 * then fl_log_segment_open with tail truncation. The scan keeps a prefix
 * of whole batches — the good ones it reports, whose offsets start at the
 * base and ascend, and CRC-bad ones with good batches after them (damaged
 * ranges) — and truncates the file to it. Afterwards every good batch is
 * found at its position and reads back whole (alone: a read may stop in
 * front of the batch after it), a damaged one never reads.
 * Seeds: fuzz/seedgen_segment_recover.py.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log_segment.h"
#include "fuzz_common.h"

#define FUZZ_BATCHES_MAX 256

typedef struct {
    size_t n;
    int64_t base[FUZZ_BATCHES_MAX], next[FUZZ_BATCHES_MAX];
    uint64_t at[FUZZ_BATCHES_MAX];
    size_t size[FUZZ_BATCHES_MAX];
} fuzz_scan_t;

static void fuzz_batch(const fl_batch_view_t *b, void *ctx) {
    fuzz_scan_t *c = ctx;
    if (c->n < FUZZ_BATCHES_MAX) {
        c->base[c->n] = b->base_offset;
        c->next[c->n] = fl_batch_next_offset(b);
        c->size[c->n] = b->size;
        c->n++;
    }
}

static char g_dir[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_dir[0]) {
        snprintf(g_dir, sizeof(g_dir), "%s/fluss-fuzz-seg-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(g_dir)) abort();
    }
    char path[128];
    snprintf(path, sizeof(path), "%s/%020d.log", g_dir, 0);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);

    fuzz_scan_t scan;
    memset(&scan, 0, sizeof(scan));
    fl_log_segment_t *s = NULL;
    fl_error_t err;
    /* a small index interval: several index entries from a few batches */
    if (fl_log_segment_open(g_dir, 0, 64, true, fuzz_batch, &scan, &s, &err) == 0) {
        struct stat st;
        FUZZ_CHECK(stat(path, &st) == 0 && (uint64_t)st.st_size == s->size);
        FUZZ_CHECK(s->size <= size);
        /* the kept prefix is the good batches and the damaged ranges in
         * file order, offsets from the base on, ascending */
        uint64_t at = 0;
        int64_t next = 0;
        size_t d = 0;
        for (size_t i = 0; i <= scan.n && scan.n < FUZZ_BATCHES_MAX; i++) {
            for (; d < s->damaged_count && s->damaged[d].position == at; d++) {
                FUZZ_CHECK(s->damaged[d].start_offset == next);
                FUZZ_CHECK(s->damaged[d].end_offset > next);
                next = s->damaged[d].end_offset;
                at += s->damaged[d].size;
            }
            if (i == scan.n) break;
            FUZZ_CHECK(i == 0 && d == 0 ? scan.base[i] == 0 : scan.base[i] >= next);
            scan.at[i] = at;
            at += scan.size[i];
            next = scan.next[i];
        }
        if (scan.n < FUZZ_BATCHES_MAX) FUZZ_CHECK(d == s->damaged_count && at == s->size);
        for (size_t i = 0; i < scan.n && scan.n < FUZZ_BATCHES_MAX; i++) {
            uint64_t pos = UINT64_MAX;
            int rc = fl_log_segment_find(s, scan.base[i], &pos, &err);
            FUZZ_CHECK(rc == 0 && pos == scan.at[i]);
            fl_buf_t out;
            fl_buf_init(&out);
            size_t got = 0;
            /* 2: cut short in front of the next batch (damaged, or not
             * following this one's offsets), this one still whole */
            rc = fl_log_segment_read(s, pos, 1, INT64_MAX, true, &out, &got, &err);
            FUZZ_CHECK(rc == 0 || rc == FL_LOG_SEGMENT_CUT);
            FUZZ_CHECK(got == scan.size[i] && out.len == got &&
                       memcmp(out.data, data + pos, got) == 0);
            fl_buf_free(&out);
        }
        for (size_t k = 0; k < s->damaged_count; k++) {
            fl_buf_t out;
            fl_buf_init(&out);
            size_t got = 0;
            FUZZ_CHECK(fl_log_segment_read(s, s->damaged[k].position, 1, INT64_MAX, true, &out,
                                           &got, &err) == FLUSS_ERR_LOG_STORAGE_EXCEPTION);
            fl_buf_free(&out);
        }
        uint64_t pos;
        FUZZ_CHECK(fl_log_segment_find(s, s->next_offset, &pos, &err) == 1);
        if (s->time_count)
            (void)fl_log_segment_offset_for_time(s, s->time_index[s->time_count / 2].timestamp,
                                                 &err);
        fl_log_segment_close(s);
    }
    unlink(path);
    return 0;
}
