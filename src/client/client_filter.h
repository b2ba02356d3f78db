/*
 * client_filter.h — a log scanner's row filter (fluss.h
 * fluss_log_scanner_set_filter): a conjunction of simple predicates on
 * one column each, parsed from text such as
 *
 *     amount >= 10 AND kind = 'buy' AND note IS NULL
 *
 * sent to the server as FETCH_LOG's filter_predicate (Fluss main's
 * PbPredicate; the server can only skip whole batches by their column
 * statistics) and applied again to every row here.
 *
 * Grammar (keywords case-insensitive):
 *   filter    := predicate ( AND predicate )*
 *   predicate := column op literal | column IS [NOT] NULL
 *   op        := = | == | != | <> | < | <= | > | >=
 *   column    := name | `name`
 *   literal   := 'text' ('' for a quote) | number | true | false
 * A literal is read as its column's type would be by fluss_row_set_text
 * ('2024-01-31' for a DATE, '2024-01-31 10:00:00' for a TIMESTAMP, hex
 * for BYTES). ARRAY, MAP and ROW columns cannot be filtered.
 *
 * Semantics (SQL, as Fluss's predicates): a comparison with a NULL value
 * is false; strings and bytes compare byte by byte (unsigned); floats by
 * Java's compareTo (-0.0 < 0.0, NaN above everything and equal to
 * itself); TIMESTAMPs by (millisecond, nanosecond).
 *
 * Thread rule: a parsed filter is read-only; evaluation is pure.
 */
#ifndef FL_CLIENT_FILTER_H
#define FL_CLIENT_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arrow_decode.h"
#include "common_error.h"
#include "fluss.h"
#include "fluss_api.pb-c.h"
#include "record_filter.h"
#include "types_row.h"

#define FL_FILTER_PREDICATES_MAX 64
#define FL_FILTER_TEXT_MAX 65536

typedef struct fl_cpred {
    fl_filter_fn_t fn; /* EQUAL .. IS_NOT_NULL */
    int32_t column;    /* schema position */
    fluss_row_t *lit;  /* the literal in cell `column` (NULL for IS [NOT] NULL) */
} fl_cpred_t;

typedef struct fl_cfilter {
    size_t count;
    fl_cpred_t preds[FL_FILTER_PREDICATES_MAX];
} fl_cfilter_t;

/* Parses text against table t's schema. FLUSS_ERR__INVALID_ARG with the
 * position of the trouble in err. *out must be freed with
 * fl_cfilter_free on success (and is empty on failure). */
int fl_cfilter_parse(const fluss_table_t *t, const char *text, fl_cfilter_t *out,
                     fl_error_t *err);
void fl_cfilter_free(fl_cfilter_t *f);
/* The same for a scanner's optional filter: NULL or "" is the empty
 * filter (every row), *out set either way on success. */
int fl_cfilter_parse_opt(const fluss_table_t *t, const char *text, fl_cfilter_t *out,
                         fl_error_t *err);

/* The wire form (Fluss main's PbPredicate: a leaf, or an AND compound of
 * leaves; field ids are the schema's column ids). Everything lives in
 * *w; free with fl_cfilter_wire_free. */
typedef struct fl_cfilter_wire {
    Fluss__PbPredicate root;
    Fluss__PbCompoundPredicate and_node;
    Fluss__PbPredicate *children[FL_FILTER_PREDICATES_MAX];
    Fluss__PbPredicate nodes[FL_FILTER_PREDICATES_MAX];
    Fluss__PbLeafPredicate leaves[FL_FILTER_PREDICATES_MAX];
    Fluss__PbLiteralValue literals[FL_FILTER_PREDICATES_MAX];
    Fluss__PbLiteralValue *literal_ptrs[FL_FILTER_PREDICATES_MAX];
    uint8_t decimal_bytes[FL_FILTER_PREDICATES_MAX][16];
    char *strings[FL_FILTER_PREDICATES_MAX]; /* owned NUL-terminated copies */
} fl_cfilter_wire_t;

void fl_cfilter_to_wire(const fl_cfilter_t *f, const fluss_table_t *t, fl_cfilter_wire_t *w);
void fl_cfilter_wire_free(fl_cfilter_wire_t *w);

/* Whether row i of a decoded batch matches; cols_by_pos[schema position]
 * is the decoded column of that position (every filtered column must
 * have one). */
bool fl_cfilter_match(const fl_cfilter_t *f, const fl_arrow_array_t *const *cols_by_pos,
                      int64_t i);

#endif
