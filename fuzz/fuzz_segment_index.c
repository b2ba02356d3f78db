/*
 * fuzz_segment_index.c — <base>.index files are read from disk when a log
 * opens: arbitrary bytes as the index of segment 0, with a segment file of
 * the size the index claims (when small), then fl_log_segment_open_indexed.
 * A loaded segment must have its lookups stay inside the file.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log_segment.h"

static char g_dir[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_dir[0]) {
        snprintf(g_dir, sizeof(g_dir), "%s/fluss-fuzz-ix-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(g_dir)) abort();
    }
    char ix[128], seg[128];
    snprintf(ix, sizeof(ix), "%s/%020d.index", g_dir, 0);
    snprintf(seg, sizeof(seg), "%s/%020d.log", g_dir, 0);
    FILE *f = fopen(ix, "wb");
    if (!f) abort();
    fwrite(data, 1, size, f);
    fclose(f);
    uint64_t seg_size = 0;
    if (size >= 16) memcpy(&seg_size, data + 8, 8); /* little-endian host */
    int fd = open(seg, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) abort();
    if (seg_size <= (1u << 16) && ftruncate(fd, (off_t)seg_size) != 0) abort();
    close(fd);
    fl_log_segment_t *s = NULL;
    fl_error_t err;
    if (fl_log_segment_open_indexed(g_dir, 0, 4096, &s, &err) == 0) {
        uint64_t pos;
        for (int64_t off = 0; off < 64; off++)
            if (fl_log_segment_find(s, off, &pos, &err) == 0 && pos >= s->size) abort();
        (void)fl_log_segment_offset_for_time(s, 1000, &err);
        fl_log_segment_close(s);
    }
    unlink(ix);
    unlink(seg);
    return 0;
}
