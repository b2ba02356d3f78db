/*
 * tier_nested.h — a Fluss ARRAY, MAP or ROW column as the Parquet columns
 * of an Iceberg list, map or struct (the lake tier's nested columns), and
 * its values shredded into definition and repetition levels per leaf.
 *
 * Layout (Iceberg's Parquet writer, TypeToMessageType):
 *
 *   ARRAY<E> c   group c (LIST) { repeated group list { E element } }
 *   MAP<K, V> c  group c (MAP) { repeated group key_value { required K key; V value } }
 *   ROW<f...> c  group c { f... }
 *
 * each node OPTIONAL when its Fluss type is nullable (a map's key always
 * REQUIRED), with its Iceberg field id; "list" and "key_value" have none.
 * The leaves are primitive columns as tier_convert.h maps them.
 *
 * Ids come in the pre-order of the Fluss type tree (fl_tier_nested_ids
 * of them): the column, then an ARRAY's element subtree, a MAP's key
 * subtree then its value subtree, a ROW's fields' subtrees in order.
 *
 * Levels (the Dremel encoding): a leaf's definition level counts the
 * OPTIONAL and repeated nodes above it that are present; its repetition
 * level says at which list or map a new element starts (0: a new row).
 * An empty list or map is defined up to the list itself, a NULL one up to
 * its parent. Values come either from a decoded Arrow column (an ARROW
 * batch) or from a value encoded in a binary row (COMPACTED or INDEXED:
 * types_row_nested.h, nested rows in the same format); each leaf value
 * goes through the row path's conversion (fl_tier_value_of), so both
 * give the same file. A NULL where the type says NOT NULL, or a NULL map
 * key, is FLUSS_ERR_CORRUPT_RECORD_EXCEPTION naming the column.
 *
 * Metrics: value and null counts per leaf (every level entry; a null is
 * an entry below the leaf's full definition), bounds only for leaves with
 * no list or map above them (Iceberg keeps none inside repeated fields).
 *
 * Thread rule: one user.
 */
#ifndef FL_TIER_NESTED_H
#define FL_TIER_NESTED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arrow_decode.h"
#include "common_error.h"
#include "lake_parquet_writer.h"
#include "tier_metrics.h"
#include "types_datatype.h"
#include "types_row_format.h"

typedef struct fl_tier_nested fl_tier_nested_t;

/* The shape of type t's tree: its nodes (the ids it takes, 1 for a
 * primitive type), its lists and maps (each adds a repeated Parquet group
 * to the nodes), its leaves (the Parquet columns), and how deep it nests
 * (0: primitive). */
typedef struct fl_tier_shape {
    size_t nodes, repeated, leaves;
    int depth;
} fl_tier_shape_t;
void fl_tier_nested_shape(const fl_datatype_t *t, fl_tier_shape_t *out);

/* Nodes of t's tree in the id pre-order (fl_tier_nested_shape's nodes). */
size_t fl_tier_nested_ids(const fl_datatype_t *t);

/* The column name of nested type t (ARRAY, MAP or ROW) with ids[0 ..
 * fl_tier_nested_ids(t)). Copies what it keeps (t is borrowed and must
 * outlive it). INVALID_ARG naming the column for a leaf type the lake
 * does not map, too deep a type, or an id that is not positive. */
int fl_tier_nested_open(const char *name, const fl_datatype_t *t, const int32_t *ids,
                        fl_tier_nested_t **out, fl_error_t *err);
void fl_tier_nested_destroy(fl_tier_nested_t *n);

/* Its Parquet nodes in pre-order (the column's group first). */
const fl_pq_node_t *fl_tier_nested_nodes(const fl_tier_nested_t *n, size_t *count);
/* Its leaves (the Parquet columns it makes), and leaf i's spec (name,
 * field id, type) and whether Iceberg keeps bounds for it. */
size_t fl_tier_nested_leaves(const fl_tier_nested_t *n);
const fl_pq_column_spec_t *fl_tier_nested_leaf(const fl_tier_nested_t *n, size_t i,
                                               bool *bounds);

/* Drops the rows added so far (after they were appended). */
void fl_tier_nested_reset(fl_tier_nested_t *n);
/* Adds one row: slot i of a (NULL: a NULL value, a column the batch's
 * schema lacks), of the column's type. */
int fl_tier_nested_add_arrow(fl_tier_nested_t *n, const fl_arrow_array_t *a, int64_t i,
                             fl_error_t *err);
/* Adds one row: the value encoded in p[0, len) in format fmt (p NULL: a
 * NULL value). */
int fl_tier_nested_add_encoded(fl_tier_nested_t *n, fl_row_format_t fmt, const uint8_t *p,
                               size_t len, fl_error_t *err);
/* The leaves' column data for the rows added since the reset (out[0 ..
 * leaves), valid until the next add or reset). */
void fl_tier_nested_columns(fl_tier_nested_t *n, fl_pq_column_data_t *out);
/* Counts leaf i's entries (after fl_tier_nested_columns) into m. */
void fl_tier_nested_count(const fl_tier_nested_t *n, size_t i, fl_tier_metrics_t *m);

#endif
