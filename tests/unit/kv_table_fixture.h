/*
 * kv_table_fixture.h — the primary-key table the kv tests use (id INT,
 * name STRING, score BIGINT, primary key id; last row wins, deletes
 * allowed, compacted rows): its schema and its fl_kv_table_t. Shared by
 * the unit tests (test_kv_util.h) and the storage-fault tools
 * (tests/crash/crash_kv.c). Header-only; no test framework.
 */
#ifndef FL_TEST_KV_TABLE_FIXTURE_H
#define FL_TEST_KV_TABLE_FIXTURE_H

#include <jansson.h>

#include "kv_table.h"
#include "types_schema.h"

/* Parses the schema into *schema and fills *t over it; types/ctx give the
 * table its schema lookup. Returns 0, or -1 (nothing to free). */
static inline int kv_fixture_table(fl_schema_t *schema, fl_kv_table_t *t, fl_kv_types_fn types,
                                   const void *ctx) {
    json_error_t je;
    json_t *j = json_loads("{\"version\":1,\"columns\":["
                           "{\"name\":\"id\",\"data_type\":{\"type\":\"INTEGER\"}},"
                           "{\"name\":\"name\",\"data_type\":{\"type\":\"STRING\"}},"
                           "{\"name\":\"score\",\"data_type\":{\"type\":\"BIGINT\"}}],"
                           "\"primary_key\":[\"id\"]}",
                           0, &je);
    fl_error_t err;
    int rc = j ? fl_schema_from_json(j, schema, &err) : -1;
    json_decref(j);
    if (rc) return -1;
    *t = (fl_kv_table_t){.kv_format = FL_ROW_COMPACTED, .engine = FL_KV_ENGINE_LAST_ROW,
                         .delete_behavior = FL_KV_DELETE_ALLOW, .version_col = -1,
                         .latest_schema_id = 1, .latest = schema, .types = types,
                         .types_ctx = ctx, .pk_count = 1, .pk_cols = {0}, .phys_pk_count = 1,
                         .phys_pk_cols = {0}, .codec = FL_ARROW_CODEC_NONE};
    return 0;
}

#endif
