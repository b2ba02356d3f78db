/*
 * fuzz_batch_stats.c — the column statistics of stored batches are read on
 * every filtered fetch: fl_batch_stats_parse on arbitrary bytes, then every
 * value of every column read as each comparable type and a filter of every
 * leaf function decided against them (no read past the bytes, no crash).
 * Seeds: statistics pyfluss 1.0.0 wrote.
 */
#include <stdint.h>
#include <string.h>

#include "record_filter.h"
#include "record_stats.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_batch_stats_t s;
    fl_error_t err;
    if (fl_batch_stats_parse(data, size, &s, &err) != 0) return 0;
    static const fl_type_root_t roots[] = {
        FL_TYPE_BOOLEAN, FL_TYPE_TINYINT, FL_TYPE_SMALLINT, FL_TYPE_INTEGER, FL_TYPE_BIGINT,
        FL_TYPE_FLOAT,   FL_TYPE_DOUBLE,  FL_TYPE_STRING,   FL_TYPE_CHAR,    FL_TYPE_DATE,
        FL_TYPE_TIME,    FL_TYPE_TIMESTAMP, FL_TYPE_TIMESTAMP_LTZ, FL_TYPE_DECIMAL};
    for (size_t r = 0; r < sizeof(roots) / sizeof(roots[0]); r++) {
        fl_datatype_t t = {.root = roots[r], .precision = r % 2 ? 9 : 3};
        for (int k = 0; k < s.count && k < 64; k++) {
            fl_stat_value_t lo = fl_batch_stats_value(&s, false, k, &t);
            fl_stat_value_t hi = fl_batch_stats_value(&s, true, k, &t);
            if (lo.kind == FL_STAT_BYTES) FUZZ_CHECK(lo.bytes >= data && lo.bytes + lo.len <= data + size);
            if (hi.kind == FL_STAT_BYTES) FUZZ_CHECK(hi.bytes >= data && hi.bytes + hi.len <= data + size);
            int column = (int16_t)((uint16_t)s.columns[2 * k] | (uint16_t)s.columns[2 * k + 1] << 8);
            for (int fn = FL_FILTER_EQUAL; fn <= FL_FILTER_NOT_IN; fn++) {
                fl_filter_node_t leaf = {.kind = FL_FILTER_NODE_LEAF, .fn = (fl_filter_fn_t)fn,
                                         .column = column, .type = &t,
                                         .literal_count = 1, .literals = &lo};
                (void)fl_filter_may_match(&leaf, &s, (int32_t)(size % 100));
            }
        }
    }
    return 0;
}
