/*
 * tier_assemble.h — the read direction of tier_nested.h: the Parquet
 * leaves of an Iceberg list, map or struct column, read back with their
 * definition and repetition levels (lake_parquet_reader.h), assembled
 * into the decoded Arrow column of the Fluss ARRAY, MAP or ROW type a
 * fetched batch gives (arrow_decode.h): offsets into a child for ARRAY
 * and MAP (a MAP's child the entries struct of key and value), a child
 * per field for ROW, validity everywhere but the entries. libfluss's lake
 * scanner presents nested lake columns with it.
 *
 * The levels are read against the layout the Fluss type implies (each
 * node optional when nullable, a map key required, one repeated level per
 * ARRAY or MAP): a leaf whose maximum levels differ, levels that end
 * early or run past the row group, a NULL where the type says NOT NULL,
 * a NULL map key — CORRUPT_RECORD_EXCEPTION naming the column. Leaf
 * values go through fl_tier_arrow_column, with its checks. A NULL ROW's
 * fields still take a slot each (Arrow's rule: children as long as their
 * parent); a NOT NULL field there holds a zero value.
 *
 * Thread rule: none.
 */
#ifndef FL_TIER_ASSEMBLE_H
#define FL_TIER_ASSEMBLE_H

#include <stddef.h>

#include "arrow_decode.h"
#include "common_error.h"
#include "lake_parquet_reader.h"
#include "types_datatype.h"

/* The column (name for messages) of nested type t (borrowed: it must
 * outlive *out) over the rows of one row group from its leaf columns
 * leaves[0 .. fl_tier_nested_shape(t).leaves), in schema order. */
int fl_tier_assemble(const fl_datatype_t *t, const char *name, const fl_pq_values_t *leaves,
                     size_t rows, fl_arrow_array_t *out, fl_error_t *err);

#endif
