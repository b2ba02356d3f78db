/*
 * fuzz_client_filter.c — a fetched log batch (bytes from a server,
 * untrusted) through libfluss's row filter (client_filter.c) and the
 * column take it thins batches with (client_take.c). The table is
 * fuzz_arrow_decode's (so its seeds fit): a INT, s STRING, d DOUBLE,
 * arr ARRAY<BIGINT>, m MAP<STRING, INT>, r ROW<a INT, b BYTES>. For
 * each of a few filters the batch is decoded filtered and unfiltered:
 * both succeed or fail alike; the filtered batch holds exactly the rows
 * of the unfiltered one that match (evaluated on its columns), in
 * order, with their offsets and values (every cell's text equal), and
 * exports through the Arrow C Data Interface.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_filter.h"
#include "client_table.h"
#include "fuzz_common.h"

static fluss_table_t *g_table;

static void init_table(void) {
    if (g_table) return;
    fluss_table_spec_t spec = {0};
    spec.schema = "a INT, s STRING, d DOUBLE, arr ARRAY<BIGINT>, m MAP<STRING, INT>, "
                  "r ROW<a INT, b BYTES>";
    fluss_error_t e;
    char *json = fluss_table_spec_to_json(&spec, &e);
    FUZZ_CHECK(json != NULL);
    fl_table_desc_t d;
    fl_error_t err;
    FUZZ_CHECK(fl_table_desc_from_bytes(json, strlen(json), &d, &err) == 0);
    free(json);
    g_table = fl_table_new_local("db", "t", 1, 1, &d, &err);
    FUZZ_CHECK(g_table != NULL);
}

static const char *const filters[] = {
    "a > 0",
    "a >= -5 AND s IS NOT NULL",
    "s < 'm' AND d != 0.5",
    "d IS NULL",
    "a = 1 AND a = 2",
};

static void check_filter(const uint8_t *data, size_t size, const char *text) {
    fl_cfilter_t f;
    memset(&f, 0, sizeof(f));
    fl_error_t err;
    fl_err_clear(&err);
    FUZZ_CHECK(fl_cfilter_parse(g_table, text, &f, &err) == 0);
    int32_t all[6] = {0, 1, 2, 3, 4, 5};
    int32_t shown[3] = {3, 1, 5}; /* arr, s, r: the filter's a and d are fetched, not shown */
    fluss_record_batch_t *whole = NULL, *thin = NULL;
    fl_error_t e1, e2;
    fl_err_clear(&e1);
    fl_err_clear(&e2);
    int rc1 = fl_record_batch_decode(g_table, data, size, 0, all, 6, all, 6, 0, false, &whole, &e1);
    int rc2 = fl_record_batch_decode_filtered(g_table, data, size, 0, all, 6, shown, 3, 0, false,
                                              &f, NULL, &thin, &e2);
    FUZZ_CHECK((rc1 == 0) == (rc2 == 0));
    if (rc1 == 0 && whole) {
        /* the rows of the whole batch that match, by the same evaluator */
        const fl_arrow_array_t *by_pos[6];
        for (int c = 0; c < 6; c++) by_pos[c] = &whole->cols[c];
        size_t k = 0;
        char a[256], b[256];
        for (size_t r = 0; r < whole->rows; r++) {
            if (!fl_cfilter_match(&f, by_pos, (int64_t)(whole->skip + r))) continue;
            FUZZ_CHECK(thin != NULL && k < thin->rows);
            FUZZ_CHECK(fluss_record_batch_offset(thin, k) == fluss_record_batch_offset(whole, r));
            for (size_t c = 0; c < 3; c++) {
                fluss_record_batch_value_text(whole, r, (size_t)shown[c], FLUSS_TEXT_JSON, a, sizeof(a));
                fluss_record_batch_value_text(thin, k, c, FLUSS_TEXT_JSON, b, sizeof(b));
                FUZZ_CHECK(strcmp(a, b) == 0);
            }
            k++;
        }
        FUZZ_CHECK(thin ? k == thin->rows : k == 0);
        if (thin) {
            struct ArrowSchema s;
            struct ArrowArray arr;
            FUZZ_CHECK(fluss_record_batch_to_arrow(thin, &s, &arr, NULL) == 0);
            FUZZ_CHECK(arr.length == (int64_t)thin->rows);
            arr.release(&arr);
            s.release(&s);
        }
    } else if (rc1 == 0) {
        FUZZ_CHECK(thin == NULL);
    }
    fluss_record_batch_free(whole);
    fluss_record_batch_free(thin);
    fl_cfilter_free(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    init_table();
    for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
        check_filter(data, size, filters[i]);
    return 0;
}
