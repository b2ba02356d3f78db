/*
 * types_schema_map.h — how the columns of one schema of a table sit in
 * another schema of the same table, matched by column id (what Fluss's
 * SchemaUtil#getIndexMapping computes): for every column of the target
 * schema, its position in the source schema, or -1 when the source has
 * no such column (it was added later). Data written under any schema id
 * is read under the latest one through such a map: a row's cells are
 * moved (kv values, changelog replay), a projection's positions are
 * translated (FETCH_LOG projection pushdown, whose positions are the
 * latest schema's).
 *
 * ADD COLUMN alone keeps every column at its position, so the map of an
 * older schema is the identity plus absent columns at the end; DROP
 * COLUMN (a fluss-c extension) shifts positions, which is why nothing
 * may map by position alone.
 *
 * Thread rule: a map is immutable once built; share freely.
 */
#ifndef FL_TYPES_SCHEMA_MAP_H
#define FL_TYPES_SCHEMA_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"
#include "types_row.h"
#include "types_schema.h"

typedef struct fl_schema_map {
    size_t count;        /* columns of the target schema */
    size_t from_count;   /* columns of the source schema */
    int32_t *source;     /* count entries: position in the source, or -1 */
    /* the target's first from_count columns are the source's, in order:
     * a row needs NULLs appended at most */
    bool prefix;
} fl_schema_map_t;

/* The map of `from`'s columns into `to`'s, by column id. Columns whose
 * types differ between the two are not matched (-1): their values cannot
 * be read as the other type (no MODIFY COLUMN exists to make them). */
void fl_schema_map_init(fl_schema_map_t *m, const fl_schema_t *from, const fl_schema_t *to);
void fl_schema_map_free(fl_schema_map_t *m);

/* Rearranges row's cells (one per source column; a row with fewer cells
 * has NULLs for the rest) into the target's layout: m->count cells, the
 * unmatched ones NULL. The arena is kept as it is (cells only move). */
void fl_schema_map_row(const fl_schema_map_t *m, fl_row_t *row);

/* Translates positions of the target's columns into positions of the
 * source's (out has n entries). INVALID_COLUMN_PROJECTION, in 0.9.1's
 * words, when a column is not in the source schema. */
int fl_schema_map_positions(const fl_schema_map_t *m, const int32_t *fields, size_t n,
                            int32_t *out, fl_error_t *err);

#endif
