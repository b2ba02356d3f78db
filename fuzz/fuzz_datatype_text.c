/*
 * fuzz_datatype_text.c — fuzzes the SQL-style data type text form
 * (fl_datatype_parse in types_datatype.h: "DECIMAL(10, 2)",
 * "MAP<STRING, ROW<a INT>> NOT NULL"), which the CLI reads from users.
 *
 * Invariants checked: the parser stays inside the NUL-terminated input; a
 * type that parses formats to text that parses again, whole, to an equal
 * type (fl_datatype_equal), and that text formats to itself.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_buf.h"
#include "common_error.h"
#include "types_datatype.h"
#include "fuzz_common.h"

/* Formats t into b as a NUL-terminated string. */
static void fuzz_format(const fl_datatype_t *t, fl_buf_t *b) {
    fl_buf_reset(b);
    fl_datatype_format(t, b);
    fl_buf_put_u8(b, '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    FUZZ_CHECK(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    const size_t text_len = strlen(text);

    const char *p = text;
    fl_datatype_t *t = NULL;
    fl_error_t err;
    fl_err_clear(&err);
    if (fl_datatype_parse(&p, &t, &err)) {
        FUZZ_CHECK(t == NULL);
        free(text);
        return 0;
    }
    FUZZ_CHECK(t != NULL);
    FUZZ_CHECK(p >= text && p <= text + text_len);

    fl_buf_t b1, b2;
    fl_buf_init(&b1);
    fl_buf_init(&b2);
    fuzz_format(t, &b1);
    const char *q = (const char *)b1.data;
    fl_datatype_t *t2 = NULL;
    fl_err_clear(&err);
    if (fl_datatype_parse(&q, &t2, &err)) {
        fprintf(stderr, "formatted type does not parse again: %s\n  text: %s\n", err.msg,
                (const char *)b1.data);
        abort();
    }
    if (*q != '\0') {
        fprintf(stderr, "formatted type parses only in part: '%s' left of '%s'\n", q,
                (const char *)b1.data);
        abort();
    }
    if (!fl_datatype_equal(t, t2)) {
        fprintf(stderr, "formatted type parses to a different type: %s\n",
                (const char *)b1.data);
        abort();
    }
    fuzz_format(t2, &b2);
    if (strcmp((const char *)b1.data, (const char *)b2.data) != 0) {
        fprintf(stderr, "format is not stable: '%s' then '%s'\n", (const char *)b1.data,
                (const char *)b2.data);
        abort();
    }
    fl_datatype_destroy(t);
    fl_datatype_destroy(t2);
    fl_buf_free(&b1);
    fl_buf_free(&b2);
    free(text);
    return 0;
}
