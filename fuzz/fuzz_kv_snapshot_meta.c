/*
 * fuzz_kv_snapshot_meta.c — a KV snapshot's _METADATA (kv_snapshot.h) is
 * read from remote storage whenever a client asks for a snapshot and when
 * a lost store is restored: arbitrary bytes as that file. Either it is
 * refused with KV_SNAPSHOT_NOT_EXIST, or every file it names stays inside
 * the bucket directory under a plain local name.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kv_snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char dir[] = "/remote/kv/db/t-1/0";
    fl_kv_snapshot_t s;
    fl_error_t err;
    int rc = fl_kv_snapshot_parse((const char *)data, size, dir, -1, &s, &err);
    if (rc) {
        if (rc != FLUSS_ERR_KV_SNAPSHOT_NOT_EXIST) abort();
        return 0;
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
    return 0;
}
