/*
 * test_client_util.h — a libfluss table without a server for the
 * client unit tests: the CLI's column syntax → descriptor JSON → the
 * table handle the writer and readers use.
 */
#ifndef TEST_CLIENT_UTIL_H
#define TEST_CLIENT_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "../../src/client/client_table.h"

static inline fluss_table_t *test_table(const char *schema, const char *bucket_keys,
                                        int32_t buckets, const char *const *props) {
    fluss_table_spec_t spec = {0};
    spec.schema = schema;
    spec.bucket_keys = bucket_keys;
    spec.bucket_count = buckets;
    spec.properties = props;
    fluss_error_t e;
    char *json = fluss_table_spec_to_json(&spec, &e);
    if (!json) return NULL;
    fl_table_desc_t d;
    fl_error_t err;
    fl_err_clear(&err);
    int rc = fl_table_desc_from_bytes(json, strlen(json), &d, &err);
    free(json);
    if (rc) return NULL;
    fluss_table_t *t = fl_table_new_local("db", "t", 42, 1, &d, &err);
    if (!t) fl_table_desc_free(&d);
    return t;
}

#endif
