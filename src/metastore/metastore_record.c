/*
 * metastore_record.c — ownership helpers for metastore records, shared by
 * every backend.
 */
#include <string.h>

#include "common_alloc.h"
#include "metastore.h"

void fl_ms_database_clear(fl_ms_database_t *db) {
    fl_free(db->name);
    fl_free(db->json);
    memset(db, 0, sizeof(*db));
}

void fl_ms_table_clear(fl_ms_table_t *t) {
    fl_free(t->database);
    fl_free(t->name);
    fl_free(t->table_json);
    for (size_t i = 0; i < t->schema_count; i++) fl_free(t->schema_jsons[i]);
    fl_free(t->schema_jsons);
    fl_free(t->buckets);
    memset(t, 0, sizeof(*t));
}

void fl_ms_table_copy(fl_ms_table_t *dst, const fl_ms_table_t *src) {
    *dst = *src;
    dst->database = fl_strdup(src->database);
    dst->name = fl_strdup(src->name);
    dst->table_json = fl_strdup(src->table_json);
    dst->schema_jsons = fl_calloc(src->schema_count ? src->schema_count : 1, sizeof(char *));
    for (size_t i = 0; i < src->schema_count; i++)
        dst->schema_jsons[i] = fl_strdup(src->schema_jsons[i]);
    dst->buckets = fl_calloc(src->bucket_count > 0 ? (size_t)src->bucket_count : 1,
                             sizeof(fl_ms_bucket_t));
    if (src->bucket_count > 0)
        memcpy(dst->buckets, src->buckets, (size_t)src->bucket_count * sizeof(fl_ms_bucket_t));
}
