/*
 * fuzz_metastore_file.c — the embedded metadata store's file
 * (data.dir/coordinator/metadata.json) is read from disk at every start:
 * arbitrary bytes as that file, then open. Either the open fails cleanly or
 * every database and table it reports can be read back, and the store
 * closes without leaks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metastore.h"

static char g_dir[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_dir[0]) {
        snprintf(g_dir, sizeof(g_dir), "%s/fluss-fuzz-ms-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(g_dir)) abort();
    }
    char path[128];
    snprintf(path, sizeof(path), "%s/metadata.json", g_dir);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    fwrite(data, 1, size, f);
    fclose(f);
    fl_metastore_t *ms = NULL;
    fl_error_t err;
    if (fl_metastore_embedded_open(g_dir, &ms, &err) == 0) {
        for (size_t i = 0; i < ms->ops->db_count(ms); i++) {
            const fl_ms_database_t *db = ms->ops->db_at(ms, i);
            if (!db || !db->name || !db->json) abort();
            if (ms->ops->db_get(ms, db->name) == NULL) abort();
        }
        for (size_t i = 0; i < ms->ops->table_count(ms); i++) {
            const fl_ms_table_t *t = ms->ops->table_at(ms, i);
            if (!t || !t->table_json || t->schema_count < 1) abort();
            for (int32_t b = 0; b < t->bucket_count; b++)
                if (t->buckets[b].replica_count > FL_REPLICAS_MAX) abort();
        }
        ms->ops->close(ms);
    }
    unlink(path);
    return 0;
}
