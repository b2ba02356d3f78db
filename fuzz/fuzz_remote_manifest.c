/*
 * fuzz_remote_manifest.c — a bucket's remote log manifest and its commit
 * handle (log_remote_manifest.h) are read from remote storage when a
 * replica opens: arbitrary bytes as either file. Either they are refused
 * as corrupt, or every segment id is a canonical UUID (it becomes a
 * directory name), segments ascend without overlapping, names are plain
 * path components, and the manifest encodes back to bytes that decode to
 * the same segments. The first input byte picks the decoder.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "fuzz_common.h"
#include "log_remote_manifest.h"

static void check_name(const char *s) {
    FUZZ_CHECK(s && *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, ".."));
}

static void fuzz_manifest(const uint8_t *data, size_t size) {
    fl_remote_manifest_t m;
    fl_error_t err;
    int rc = fl_remote_manifest_decode(data, size, &m, &err);
    if (rc) {
        FUZZ_CHECK(rc == FLUSS_ERR__CORRUPT && m.count == 0);
        return;
    }
    check_name(m.database);
    check_name(m.table);
    if (m.partition_name) check_name(m.partition_name);
    FUZZ_CHECK((m.partition_name != NULL) == (m.partition_id >= 0));
    FUZZ_CHECK(m.table_id >= 0 && m.bucket >= 0);
    for (size_t i = 0; i < m.count; i++) {
        const fl_remote_segment_t *s = &m.segments[i];
        FUZZ_CHECK(fl_uuid_text_ok(s->id, strlen(s->id)));
        FUZZ_CHECK(s->start_offset >= 0 && s->end_offset > s->start_offset && s->size_bytes >= 0);
        if (i) FUZZ_CHECK(s->start_offset >= m.segments[i - 1].end_offset);
    }
    fl_buf_t b;
    fl_buf_init(&b);
    fl_remote_manifest_encode(&m, &b);
    fl_remote_manifest_t back;
    FUZZ_CHECK(fl_remote_manifest_decode(b.data, b.len, &back, &err) == 0);
    FUZZ_CHECK(back.count == m.count);
    for (size_t i = 0; i < m.count; i++)
        FUZZ_CHECK(memcmp(&back.segments[i], &m.segments[i], sizeof(m.segments[i])) == 0);
    fl_remote_manifest_free(&back);
    fl_buf_free(&b);
    fl_remote_manifest_free(&m);
}

static void fuzz_handle(const uint8_t *data, size_t size) {
    fl_remote_handle_t h;
    fl_error_t err;
    if (fl_remote_handle_decode(data, size, &h, &err)) return;
    FUZZ_CHECK(h.manifest_path && *h.manifest_path && h.end_offset >= -1);
    fl_remote_handle_free(&h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    if (data[0] == 'H') fuzz_handle(data + 1, size - 1);
    else fuzz_manifest(data + 1, size - 1);
    return 0;
}
