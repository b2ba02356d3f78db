/*
 * fuzz_lake_thrift.c — a Parquet footer (FileMetaData, Thrift compact
 * protocol: bytes from a file, untrusted) through fl_pq_file_meta_decode,
 * and the same bytes as a PageHeader. Invariants checked: a decode that
 * succeeds leaves every list as long as its count says (the harness reads
 * every element) and encodes again; the re-encoded footer decodes to the
 * same counts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "lake_parquet_meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t touch(const fl_pq_file_meta_t *m) {
    size_t h = m->n_schema + m->n_row_groups + m->n_column_orders;
    for (size_t i = 0; i < m->n_schema; i++) h += m->schema[i].name ? strlen(m->schema[i].name) : 0;
    for (size_t g = 0; g < m->n_row_groups; g++) {
        const fl_pq_row_group_t *rg = &m->row_groups[g];
        for (size_t c = 0; c < rg->n_columns; c++) {
            const fl_pq_column_meta_t *cm = &rg->columns[c].meta;
            for (size_t e = 0; e < cm->n_encodings; e++) h += (size_t)cm->encodings[e];
            for (size_t p = 0; p < cm->n_path; p++) h += strlen(cm->path[p]);
            if (cm->stats.has_min) h += cm->stats.min_len + cm->stats.min[0];
            if (cm->stats.has_max) h += cm->stats.max_len + cm->stats.max[0];
        }
    }
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_pq_file_meta_t m;
    fl_error_t err;
    if (fl_pq_file_meta_decode(data, size, &m, &err) == 0) {
        (void)touch(&m);
        bool encodable = m.created_by != NULL;
        for (size_t i = 0; i < m.n_schema; i++) encodable &= m.schema[i].name != NULL;
        for (size_t g = 0; g < m.n_row_groups; g++)
            for (size_t c = 0; c < m.row_groups[g].n_columns; c++) {
                const fl_pq_column_meta_t *cm = &m.row_groups[g].columns[c].meta;
                for (size_t p = 0; p < cm->n_path; p++) encodable &= cm->path[p] != NULL;
                /* our encoder writes only the union members it knows */
            }
        for (size_t i = 0; i < m.n_schema; i++) {
            int16_t k = m.schema[i].logical.kind;
            encodable &= k == FL_PQ_LT_NONE || k == FL_PQ_LT_STRING || k == FL_PQ_LT_DATE ||
                         k == FL_PQ_LT_DECIMAL ||
                         ((k == FL_PQ_LT_TIME || k == FL_PQ_LT_TIMESTAMP) &&
                          m.schema[i].logical.unit > 0);
        }
        if (encodable) {
            fl_buf_t b;
            fl_buf_init(&b);
            fl_pq_file_meta_encode(&b, &m);
            fl_pq_file_meta_t again;
            FUZZ_CHECK(fl_pq_file_meta_decode(b.data, b.len, &again, &err) == 0);
            FUZZ_CHECK(again.n_schema == m.n_schema && again.n_row_groups == m.n_row_groups &&
                       again.num_rows == m.num_rows);
            fl_pq_file_meta_free(&again);
            fl_buf_free(&b);
        }
        fl_pq_file_meta_free(&m);
    }
    fl_pq_page_header_t h;
    size_t used;
    if (fl_pq_page_header_decode(data, size, &h, &used, &err) == 0) FUZZ_CHECK(used <= size);
    return 0;
}
