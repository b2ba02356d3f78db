/*
 * lake_parquet_reader.h — a Parquet reader for our writer's subset
 * (lake_parquet_writer.h): schema trees of groups (any repetition, LIST or
 * MAP annotated or not: Iceberg's, parquet-mr's and pyarrow's layouts
 * alike) over leaves of BOOLEAN, INT32, INT64, FLOAT, DOUBLE, BYTE_ARRAY
 * and FIXED_LEN_BYTE_ARRAY (1..16 bytes), REQUIRED, OPTIONAL or REPEATED;
 * Data Page v1 with RLE levels and PLAIN or dictionary (RLE_DICTIONARY /
 * PLAIN_DICTIONARY) values; pages UNCOMPRESSED, ZSTD, SNAPPY or GZIP (what
 * Iceberg's Java writer makes when asked; Fluss's own tiering job does).
 * For libfluss's union read and the index rebuild.
 * Anything else (v2 pages, other codecs or encodings, chunks in other
 * files) is refused with FLUSS_ERR__INVALID_ARG; malformed bytes give
 * FLUSS_ERR__CORRUPT (a malformed schema tree, a level over its max, page
 * level counts that disagree with the chunk's num_values, the rows the
 * levels start disagreeing with the row group's). The file image is
 * untrusted: every offset and size is checked against it before use.
 *
 * Columns are the schema's leaves in pre-order; a column with max_rep > 0
 * or max_def > 1 reads back as levels (Dremel striping) that the caller
 * assembles with the schema tree (fl_pq_reader_parent and friends).
 *
 * Thread rule: one thread uses a reader at a time (it is read-only after
 * open, but no test proves concurrent reads yet).
 */
#ifndef FL_LAKE_PARQUET_READER_H
#define FL_LAKE_PARQUET_READER_H

#include <stddef.h>
#include <stdint.h>

#include "common_error.h"
#include "lake_parquet_meta.h"

typedef struct fl_pq_reader fl_pq_reader_t;

/* One column of one row group, a slot per row (flat) or per level entry. */
typedef struct fl_pq_values {
    int32_t type;
    size_t rows;
    uint8_t *valid; /* 1 present, 0 null */
    /* uint8_t (BOOLEAN), int32_t, int64_t, float or double per row, or
     * FLBA's `width` bytes (0 for nulls); NULL for BYTE_ARRAY */
    void *values;
    /* BYTE_ARRAY: row i is bytes[offsets[i] .. offsets[i+1]) */
    uint64_t *offsets;
    uint8_t *bytes;
    size_t width; /* bytes of each row in values; 0 for BYTE_ARRAY */
    /* A column with max_rep > 0 or max_def > 1: `levels` entries; def
     * and rep (rep NULL when max_rep == 0) one per entry, and
     * valid/values/offsets/bytes have one slot per level entry
     * (valid[i] = def[i] == max_def) instead of one per row. rows is the
     * row group's row count either way. For flat columns levels == rows,
     * def/rep NULL. */
    size_t levels;
    uint8_t *def;
    uint8_t *rep;
    int max_def, max_rep;
} fl_pq_values_t;

/* Borrows file[0..len): it must outlive the reader. */
int fl_pq_reader_open(const uint8_t *file, size_t len, fl_pq_reader_t **out, fl_error_t *err);
/* Reads the file (at most max_bytes) into memory the reader owns. */
int fl_pq_reader_open_file(const char *path, size_t max_bytes, fl_pq_reader_t **out,
                           fl_error_t *err);
const fl_pq_file_meta_t *fl_pq_reader_meta(const fl_pq_reader_t *r);
size_t fl_pq_reader_columns(const fl_pq_reader_t *r);
/* The leaf SchemaElement of column i. */
const fl_pq_schema_element_t *fl_pq_reader_column(const fl_pq_reader_t *r, size_t i);
/* The column (a leaf at any depth) whose Iceberg field id is field_id, -1 when none. */
int fl_pq_reader_column_of(const fl_pq_reader_t *r, int32_t field_id);
/* Levels of column i (its leaf): the max definition and repetition level. */
void fl_pq_reader_column_levels(const fl_pq_reader_t *r, size_t i, int *max_def, int *max_rep);
/* The index in fl_pq_reader_meta(r)->schema of the schema element of
 * column i's leaf; and the parent of schema element `element`: 0 (the
 * root) for the root's children, and for the root itself. The column's
 * path is the names from the leaf up to (not including) element 0. */
size_t fl_pq_reader_column_element(const fl_pq_reader_t *r, size_t i);
size_t fl_pq_reader_parent(const fl_pq_reader_t *r, size_t element);
/* The schema element (index into meta->schema) whose field id is
 * field_id (groups and leaves), -1 when none; and the leaf columns below
 * element e: [*first, *first + *n) (a leaf: itself; the root: all). */
int fl_pq_reader_element_of(const fl_pq_reader_t *r, int32_t field_id);
void fl_pq_reader_element_columns(const fl_pq_reader_t *r, size_t e, size_t *first, size_t *n);
int fl_pq_reader_read_column(const fl_pq_reader_t *r, size_t row_group, size_t column,
                             fl_pq_values_t *out, fl_error_t *err);
void fl_pq_values_free(fl_pq_values_t *v);
void fl_pq_reader_destroy(fl_pq_reader_t *r);

#endif
