/*
 * test_types_util.h — schemas for unit tests below libfluss: columns c0,
 * c1, ... of SQL type texts ("INT NOT NULL", "ARRAY<STRING>").
 */
#ifndef TEST_TYPES_UTIL_H
#define TEST_TYPES_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types_schema.h"

static inline void test_schema_of(fl_schema_t *s, const char *const *types, size_t n) {
    memset(s, 0, sizeof(*s));
    for (size_t i = 0; i < n; i++) {
        const char *p = types[i];
        fl_datatype_t *t;
        fl_error_t err;
        if (fl_datatype_parse(&p, &t, &err)) abort();
        char name[32];
        snprintf(name, sizeof(name), "c%zu", i);
        fl_schema_add_column(s, name, t, NULL);
    }
}

#endif
