/*
 * record_filter.h — a scan filter (Fluss main's Predicate) decided against
 * a batch's column statistics: may any row of the batch match? The answer
 * errs only towards yes: a batch is skipped only when its statistics prove
 * no row can match (SQL semantics: a comparison with NULL is not true).
 * Whatever is not understood — a function, a type, a literal, statistics
 * that are missing or unreadable — counts as "may match".
 *
 * The tree is built by the caller (server_filter.c from the wire) with
 * column positions and types of the schema the filter names. Thread rule:
 * a built filter is read-only; evaluation is pure.
 */
#ifndef FL_RECORD_FILTER_H
#define FL_RECORD_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record_stats.h"
#include "types_datatype.h"

/* Fluss's leaf functions (PbLeafPredicate.function) and compounds. */
typedef enum fl_filter_fn {
    FL_FILTER_EQUAL = 0,
    FL_FILTER_NOT_EQUAL = 1,
    FL_FILTER_LESS_THAN = 2,
    FL_FILTER_LESS_OR_EQUAL = 3,
    FL_FILTER_GREATER_THAN = 4,
    FL_FILTER_GREATER_OR_EQUAL = 5,
    FL_FILTER_IS_NULL = 6,
    FL_FILTER_IS_NOT_NULL = 7,
    FL_FILTER_STARTS_WITH = 8,
    FL_FILTER_CONTAINS = 9,
    FL_FILTER_END_WITH = 10,
    FL_FILTER_IN = 11,
    FL_FILTER_NOT_IN = 12,
} fl_filter_fn_t;

typedef enum fl_filter_kind {
    FL_FILTER_NODE_ANY = 0, /* may match whatever the statistics say */
    FL_FILTER_NODE_LEAF,
    FL_FILTER_NODE_AND,
    FL_FILTER_NODE_OR,
} fl_filter_kind_t;

typedef struct fl_filter_node {
    fl_filter_kind_t kind;
    /* leaf */
    fl_filter_fn_t fn;
    int column;                    /* position in the schema */
    const fl_datatype_t *type;     /* the column's type (the schema's) */
    size_t literal_count;
    fl_stat_value_t *literals;     /* owned; bytes owned too */
    /* compound */
    size_t child_count;
    struct fl_filter_node *children; /* owned */
} fl_filter_node_t;

/* Frees what a node owns (not the node itself). */
void fl_filter_node_clear(fl_filter_node_t *n);

/* May a row of a batch of record_count rows with these statistics match? */
bool fl_filter_may_match(const fl_filter_node_t *n, const fl_batch_stats_t *stats,
                         int32_t record_count);

#endif
