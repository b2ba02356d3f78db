/*
 * fuzz_lake_parquet.c — a Parquet file image (untrusted: a lake file
 * another writer may have touched) through our subset reader
 * (lake_parquet_reader.h): open, then every column of every row group
 * read and every value touched; the schema tree walked (parents, the
 * columns below each element). Invariants checked: a column read back
 * has the row group's row count; a nested column's levels stay within
 * their max, its rows (rep 0) are the group's rows and valid is def ==
 * max_def; BYTE_ARRAY offsets never decrease and stay inside the bytes;
 * nulls are 0/1.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_common.h"
#include "lake_parquet_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_pq_reader_t *r;
    fl_error_t err;
    if (fl_pq_reader_open(data, size, &r, &err)) return 0;
    const fl_pq_file_meta_t *m = fl_pq_reader_meta(r);
    uint64_t h = 0;
    size_t cols = fl_pq_reader_columns(r);
    for (size_t e = 0; e < m->n_schema; e++) {
        size_t first, n;
        fl_pq_reader_element_columns(r, e, &first, &n);
        FUZZ_CHECK(first <= cols && n <= cols - first);
        FUZZ_CHECK(e == 0 || fl_pq_reader_parent(r, e) < e);
    }
    for (size_t c = 0; c < cols; c++) {
        int max_def, max_rep;
        fl_pq_reader_column_levels(r, c, &max_def, &max_rep);
        FUZZ_CHECK(max_rep <= max_def && max_def <= FL_PQ_LEVEL_MAX);
        FUZZ_CHECK(fl_pq_reader_column(r, c)->type >= 0);
    }
    for (size_t g = 0; g < m->n_row_groups; g++) {
        for (size_t c = 0; c < fl_pq_reader_columns(r); c++) {
            fl_pq_values_t v;
            if (fl_pq_reader_read_column(r, g, c, &v, &err)) continue;
            FUZZ_CHECK((int64_t)v.rows == m->row_groups[g].num_rows);
            bool nested = v.max_rep > 0 || v.max_def > 1;
            FUZZ_CHECK(nested ? v.def != NULL : (v.def == NULL && v.levels == v.rows));
            FUZZ_CHECK((v.rep != NULL) == (nested && v.max_rep > 0));
            size_t rows = 0;
            for (size_t k = 0; v.def && k < v.levels; k++) {
                FUZZ_CHECK(v.def[k] <= v.max_def);
                FUZZ_CHECK(v.valid[k] == (v.def[k] == v.max_def));
                if (v.rep) FUZZ_CHECK(v.rep[k] <= v.max_rep);
                rows += !v.rep || v.rep[k] == 0;
            }
            FUZZ_CHECK(!v.def || rows == v.rows);
            for (size_t k = 0; k < v.levels; k++) {
                FUZZ_CHECK(v.valid[k] <= 1);
                if (v.offsets) {
                    FUZZ_CHECK(v.offsets[k] <= v.offsets[k + 1]);
                    if (v.offsets[k + 1] > v.offsets[k]) h += v.bytes[v.offsets[k + 1] - 1];
                } else if (v.valid[k]) {
                    /* the last byte of the slot: a width past the buffer shows */
                    FUZZ_CHECK(v.width >= 1 && v.width <= 16);
                    h += ((const uint8_t *)v.values)[k * v.width + v.width - 1];
                }
            }
            fl_pq_values_free(&v);
        }
    }
    fl_pq_reader_destroy(r);
    return (int)(h & 0);
}
