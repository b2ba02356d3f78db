/*
 * types_row_format.h — which binary row format a table's rows use
 * (Fluss's KvFormat / LogFormat: table.kv.format, and table.log.format when
 * it is not ARROW) and the encode/decode of that format: CompactedRow
 * (types_row_compacted.h) or IndexedRow (types_row_indexed.h). Thread
 * rule: none; values only.
 */
#ifndef FL_TYPES_ROW_FORMAT_H
#define FL_TYPES_ROW_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <strings.h>

#include "common_buf.h"
#include "common_error.h"
#include "types_datatype.h"
#include "types_row.h"
#include "types_row_compacted.h"
#include "types_row_indexed.h"

typedef enum fl_row_format {
    FL_ROW_COMPACTED,
    FL_ROW_INDEXED,
} fl_row_format_t;

/* "COMPACTED" / "INDEXED", any case (Fluss upper-cases the option). Any
 * other text, ARROW included, is FLUSS_ERR_INVALID_CONFIG_EXCEPTION. */
static inline int fl_row_format_parse(const char *text, fl_row_format_t *out, fl_error_t *err) {
    if (text && strcasecmp(text, "COMPACTED") == 0) *out = FL_ROW_COMPACTED;
    else if (text && strcasecmp(text, "INDEXED") == 0) *out = FL_ROW_INDEXED;
    else
        return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                          "'%s' is not a row format (COMPACTED or INDEXED)", text ? text : "");
    return 0;
}

static inline const char *fl_row_format_name(fl_row_format_t f) {
    return f == FL_ROW_INDEXED ? "INDEXED" : "COMPACTED";
}

/* fl_compacted_row_encode / fl_indexed_row_encode by f. */
static inline int fl_row_encode(fl_row_format_t f, const fl_row_t *row,
                                const fl_datatype_t *const *types, size_t n, fl_buf_t *out,
                                fl_error_t *err) {
    return f == FL_ROW_INDEXED ? fl_indexed_row_encode(row, types, n, out, err)
                               : fl_compacted_row_encode(row, types, n, out, err);
}

/* fl_compacted_row_decode / fl_indexed_row_decode by f. */
static inline int fl_row_decode(fl_row_format_t f, const uint8_t *p, size_t len,
                                const fl_datatype_t *const *types, size_t n, fl_row_t *row,
                                fl_error_t *err) {
    return f == FL_ROW_INDEXED ? fl_indexed_row_decode(p, len, types, n, row, err)
                               : fl_compacted_row_decode(p, len, types, n, row, err);
}

#endif
