/*
 * fuzz_client_table.h — a libfluss table of a given schema built locally
 * (no server), for the client fuzz targets that decode server bytes as a
 * table's rows.
 */
#ifndef FUZZ_CLIENT_TABLE_H
#define FUZZ_CLIENT_TABLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_table.h"
#include "fuzz_common.h"

/* db.t with `schema` (SQL text), primary key pk (NULL: none), one bucket
 * and table.kv.format = kv_format. */
static inline fluss_table_t *fuzz_local_table(const char *schema, const char *pk,
                                              const char *kv_format) {
    char prop[64];
    snprintf(prop, sizeof(prop), "table.kv.format=%s", kv_format);
    const char *props[] = {prop, NULL};
    fluss_table_spec_t spec = {0};
    spec.schema = schema;
    spec.primary_key = pk;
    spec.bucket_count = 1;
    spec.properties = props;
    fluss_error_t e;
    char *json = fluss_table_spec_to_json(&spec, &e);
    FUZZ_CHECK(json != NULL);
    fl_table_desc_t d;
    fl_error_t err;
    FUZZ_CHECK(fl_table_desc_from_bytes(json, strlen(json), &d, &err) == 0);
    free(json);
    fluss_table_t *t = fl_table_new_local("db", "t", 1, 1, &d, &err);
    FUZZ_CHECK(t != NULL);
    return t;
}

#endif
