/*
 * fuzz_client_nested.c — an ARRAY, MAP or ROW value inside a row a
 * server sent (a lookup's value, protocol.md §5.8; bytes untrusted)
 * through types_row_nested.h's checker and libfluss's printer
 * (client_nested_text.c). Input: byte 0 picks the column of a fixed
 * table (low 3 bits) and the row format of nested rows (bit 3:
 * INDEXED), the rest is the value. Invariants: the checker and the
 * printer agree on whether the value decodes (corruption codes only);
 * a value that decodes prints text that, when it parses back, gives a
 * value printing the same text; and it must parse back unless it holds
 * what text cannot carry or the column's type cannot hold (a NUL
 * character; dates outside years 0000-9999; decimals wider than the
 * declared precision, which the binary form does not bound).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_client_table.h"
#include "types_row_nested.h"

#define FUZZ_SCHEMA                                                                           \
    "a ARRAY<INT>, s ARRAY<STRING>, m MAP<STRING, BIGINT>, r ROW<x INT, s STRING, d DATE>, " \
    "aa ARRAY<ARRAY<SMALLINT>>, ar ARRAY<ROW<q BIGINT, w STRING>>, "                        \
    "dec ARRAY<DECIMAL(20, 3)>, ts ARRAY<TIMESTAMP(6)>"
#define FUZZ_COLUMNS 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static fluss_table_t *tables[2];
    if (!tables[0]) {
        tables[0] = fuzz_local_table(FUZZ_SCHEMA, NULL, "COMPACTED");
        tables[1] = fuzz_local_table(FUZZ_SCHEMA, NULL, "INDEXED");
    }
    if (size < 1) return 0;
    const fluss_table_t *t = tables[(data[0] >> 3) & 1];
    size_t col = (size_t)(data[0] & 7) % FUZZ_COLUMNS;
    const fl_datatype_t *type = t->types[col];
    const uint8_t *p = data + 1;
    size_t len = size - 1;
    fl_error_t err1, err2;
    fl_err_clear(&err1);
    fl_err_clear(&err2);
    int checked = fl_nested_check(type, t->kv_format, p, len, 0, &err1);
    fl_buf_t text;
    fl_buf_init(&text);
    int printed = fl_nested_text(type, t->kv_format, p, len, &text, &err2);
    FUZZ_CHECK((checked == 0) == (printed == 0));
    if (checked) {
        FUZZ_CHECK(err1.code == FLUSS_ERR_CORRUPT_RECORD_EXCEPTION ||
                   err1.code == FLUSS_ERR__CORRUPT);
        fl_buf_free(&text);
        return 0;
    }
    fl_buf_put_u8(&text, '\0');
    bool exact = !strstr((const char *)text.data, "\\u0000") && col != 3 && col != 6 && col != 7;
    fluss_row_t *row = fluss_row_new(t);
    fluss_error_t e;
    int parsed = fluss_row_set_text(row, col, (const char *)text.data, &e);
    FUZZ_CHECK(parsed == 0 || !exact);
    if (parsed == 0) {
        char *again = malloc(text.len + 1);
        size_t n = fluss_row_value_text(row, col, 0, again, text.len + 1);
        FUZZ_CHECK(n + 1 == text.len && memcmp(again, text.data, n) == 0);
        free(again);
    }
    fluss_row_destroy(row);
    fl_buf_free(&text);
    return 0;
}
