/*
 * fuzz_kv_snapshot_meta.c — a KV snapshot's _METADATA (kv_snapshot.h) is
 * read from remote storage whenever a client asks for a snapshot and when
 * a lost store is restored: arbitrary bytes as that file. Either it is
 * refused with KV_SNAPSHOT_NOT_EXIST, or every file it names stays inside
 * the bucket directory under a plain local name. The same bytes as
 * COMMIT_KV_SNAPSHOT's completed_snapshot (fl_kv_snapshot_commit_decode,
 * what the coordinator reads from a leader): refused with
 * KV_STORAGE_EXCEPTION or every field in range, and its metadata parsed
 * as above.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kv_snapshot.h"

static void check_meta(const char *text, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    check_meta((const char *)data, size);
    fl_kv_snapshot_commit_t c;
    fl_error_t err;
    int rc = fl_kv_snapshot_commit_decode(data, size, &c, &err);
    if (rc) {
        if (rc != FLUSS_ERR_KV_STORAGE_EXCEPTION || c.meta) abort();
        return 0;
    }
    if (c.table_id < 0 || c.partition_id < -1 || c.bucket < 0 || c.snapshot_id < 0) abort();
    if (!c.meta || strlen(c.meta) > c.meta_len) abort();
    check_meta(c.meta, c.meta_len);
    fl_kv_snapshot_commit_free(&c);
    return 0;
}

static void check_meta(const char *text, size_t size) {
    static const char dir[] = "/remote/kv/db/t-1/0";
    fl_kv_snapshot_t s;
    fl_error_t err;
    int rc = fl_kv_snapshot_parse(text, size, dir, -1, &s, &err);
    if (rc) {
        if (rc != FLUSS_ERR_KV_SNAPSHOT_NOT_EXIST) abort();
        return;
    }
    if (s.id < 0 || s.log_offset < 0) abort();
    for (size_t i = 0; i < s.file_count; i++) {
        const char *p = s.files[i].path, *l = s.files[i].local;
        if (strncmp(p, dir, sizeof(dir) - 1) != 0 || p[sizeof(dir) - 1] != '/') abort();
        if (strstr(p, "/../") || strstr(p, "/./") || strstr(p, "//")) abort();
        if (!*l || strchr(l, '/') || strcmp(l, "..") == 0 || strcmp(l, ".") == 0) abort();
        if (s.files[i].size < 0) abort();
    }
    fl_kv_snapshot_free(&s);
}
