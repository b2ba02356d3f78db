/*
 * fuzz_table_json.c — fuzzes the JSON descriptors a client sends in
 * CREATE_TABLE and CREATE_DATABASE (TableDescriptorJsonSerde and
 * DatabaseDescriptorJsonSerde, types_table.h), the schema and data-type
 * JSON under them included.
 *
 * Invariants checked: a descriptor that parses dumps to JSON that parses
 * again, and that second parse dumps to the same text (dump ∘ parse is
 * idempotent), for tables and databases alike.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_error.h"
#include "types_table.h"
#include "fuzz_common.h"

static void fuzz_check_same(const char *what, const char *a, const char *b) {
    if (strcmp(a, b) == 0) return;
    fprintf(stderr, "%s dump is not stable:\n first: %s\nsecond: %s\n", what, a, b);
    abort();
}

static void fuzz_table(const uint8_t *data, size_t size) {
    fl_table_desc_t d;
    fl_error_t err;
    fl_err_clear(&err);
    if (fl_table_desc_from_bytes(data, size, &d, &err)) return;
    char *text = fl_table_desc_dumps(&d);
    FUZZ_CHECK(text != NULL);
    fl_table_desc_free(&d);

    fl_table_desc_t d2;
    fl_err_clear(&err);
    if (fl_table_desc_from_bytes(text, strlen(text), &d2, &err)) {
        fprintf(stderr, "table dump does not parse again: %s\n  dump: %s\n", err.msg, text);
        abort();
    }
    char *text2 = fl_table_desc_dumps(&d2);
    FUZZ_CHECK(text2 != NULL);
    fuzz_check_same("table", text, text2);
    fl_table_desc_free(&d2);
    free(text);
    free(text2);
}

static void fuzz_database(const uint8_t *data, size_t size) {
    fl_database_desc_t d;
    fl_error_t err;
    fl_err_clear(&err);
    if (fl_database_desc_from_bytes(data, size, &d, &err)) return;
    char *text = fl_database_desc_dumps(&d);
    FUZZ_CHECK(text != NULL);
    fl_database_desc_free(&d);

    fl_database_desc_t d2;
    fl_err_clear(&err);
    if (fl_database_desc_from_bytes(text, strlen(text), &d2, &err)) {
        fprintf(stderr, "database dump does not parse again: %s\n  dump: %s\n", err.msg, text);
        abort();
    }
    char *text2 = fl_database_desc_dumps(&d2);
    FUZZ_CHECK(text2 != NULL);
    fuzz_check_same("database", text, text2);
    fl_database_desc_free(&d2);
    free(text);
    free(text2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_table(data, size);
    fuzz_database(data, size);
    return 0;
}
