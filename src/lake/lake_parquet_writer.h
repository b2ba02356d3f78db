/*
 * lake_parquet_writer.h — our Parquet writer (the data files of the
 * Iceberg lake tier, issue 21): a schema tree of groups (plain structs,
 * LIST and MAP annotated groups, REQUIRED, OPTIONAL or REPEATED) whose
 * leaves are columns of BOOLEAN, INT32, INT64, FLOAT, DOUBLE, BYTE_ARRAY
 * and FIXED_LEN_BYTE_ARRAY (1..16 bytes), each node with its Iceberg field
 * id and each leaf with its logical type; a flat schema (every column a
 * leaf of the root) is the common case. Rows appended column-wise, nested
 * columns as definition and repetition levels (Dremel striping: Parquet's
 * "Nested Encoding"); Data Page v1; PLAIN, or RLE_DICTIONARY (a PLAIN
 * dictionary page first) for a column chunk whose dictionary stays under
 * dictionary_bytes_max; pages UNCOMPRESSED, ZSTD, SNAPPY or GZIP; chunk
 * statistics (min, max, null count).
 *
 *   file   := "PAR1" row-group* FileMetaData u32-LE(len FileMetaData) "PAR1"
 *   chunk  := [dictionary page] data page+      (a column's values of a group)
 *   page   := PageHeader (thrift compact) body  (body compressed as a whole)
 *   body   := [u32-LE len, RLE(rep levels, width of max_rep)]   max_rep > 0
 *             [u32-LE len, RLE(def levels, width of max_def)]   max_def > 0
 *             PLAIN values of the entries at max_def
 *           | u8 bit width, RLE(dictionary indices)
 *
 * A page holds whole rows (its first entry has repetition level 0), so
 * page_rows_max counts rows. A flat OPTIONAL column has max_def 1 (level
 * width 1), a flat REQUIRED one no levels at all.
 *
 * Thread rule: a writer belongs to one thread. Memory: one row group of
 * values is buffered (row_group_bytes_max), then written out.
 */
#ifndef FL_LAKE_PARQUET_WRITER_H
#define FL_LAKE_PARQUET_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "lake_parquet_meta.h"

/* "fluss-c version <FL_LAKE_VERSION> (build <sha>)" in every footer; the
 * version libfluss announces (client_conn.c's client_software_version). */
#define FL_LAKE_VERSION "0.1.0"

typedef struct fl_pq_column_spec {
    const char *name;
    int32_t field_id; /* the Iceberg field id: mandatory */
    int32_t type; /* FL_PQ_BOOLEAN, _INT32, _INT64, _FLOAT, _DOUBLE, _BYTE_ARRAY, _FLBA */
    bool optional;
    /* FL_PQ_LT_NONE; STRING (BYTE_ARRAY); DATE (INT32); TIME, TIMESTAMP
     * (INT64, unit MICROS); DECIMAL (INT32 precision <= 9, INT64 <= 18,
     * FLBA <= 38 in at least the bytes the precision needs: big-endian
     * two's complement, ordered as signed numbers in the statistics) */
    fl_pq_logical_t logical;
    int32_t type_length; /* FL_PQ_FLBA: bytes of each value, 1..16 */
} fl_pq_column_spec_t;

typedef struct fl_pq_writer_options {
    int32_t codec; /* FL_PQ_CODEC_UNCOMPRESSED, _ZSTD, _SNAPPY or _GZIP */
    int zstd_level;
    size_t page_bytes_max; /* values of a page (before compression) */
    size_t page_rows_max;
    size_t row_group_bytes_max; /* buffered values that close a row group */
    size_t dictionary_bytes_max; /* PLAIN size of a chunk's dictionary; 0: never */
} fl_pq_writer_options_t;

/* Iceberg's defaults, capped: ZSTD level 3, pages of 1 MiB or 20,000
 * rows, row groups of 64 MiB, dictionaries up to 1 MiB. */
void fl_pq_writer_options_init(fl_pq_writer_options_t *o);

typedef struct fl_pq_bytes {
    const uint8_t *p;
    uint32_t len;
} fl_pq_bytes_t;

/* One column of an append: valid[i] 0 is a null (NULL: none is); values[i]
 * (ignored for nulls) is a uint8_t (BOOLEAN, 0/1), int32_t, int64_t, float,
 * double, fl_pq_bytes_t, or type_length bytes (FLBA). */
typedef struct fl_pq_column_data {
    const uint8_t *valid;
    const void *values;
    /* A column with max_rep > 0 or max_def > 1 (inside a group or a
     * repeated field) is given as levels instead of valid: `levels`
     * entries of def[i] (0..max_def) and rep[i] (0..max_rep; rep may be
     * NULL when max_rep == 0), values[i] one slot per level entry (read
     * only where def[i] == max_def). A row starts at each rep[i] == 0;
     * the number of rows must equal the append's `rows` for every column.
     * For a flat column (max_def <= 1, max_rep == 0) def may be given
     * instead of valid too (def[i] == max_def: present; a REQUIRED flat
     * column has max_def 0). Levels are used whenever def is not NULL. */
    const uint8_t *def;
    const uint8_t *rep;
    size_t levels;
} fl_pq_column_data_t;

/* Group annotations of a nested schema node. */
enum { FL_PQ_GROUP_PLAIN = 0, FL_PQ_GROUP_LIST = 1, FL_PQ_GROUP_MAP = 2 };

/* One node of a schema tree, listed in pre-order (a group is followed by
 * its n_children subtrees); the root "schema" element is implicit (not in
 * the list) and its children are the nodes at depth 0. A leaf
 * (n_children == 0) is a column: its type/logical/type_length as in
 * fl_pq_column_spec_t. The columns of the file are the leaves in that order.
 * Iceberg's layouts (what its Java writer makes):
 *   list: OPTIONAL|REQUIRED group name (LIST) id { REPEATED group list -1 {
 *           OPTIONAL|REQUIRED element id } }
 *   map:  OPTIONAL|REQUIRED group name (MAP) id { REPEATED group key_value -1 {
 *           REQUIRED key id; OPTIONAL|REQUIRED value id } }
 * (the writer does not insist on them: any tree of the subset is written). */
typedef struct fl_pq_node {
    const char *name;
    int32_t field_id; /* the Iceberg field id; -1: none (the LIST's "list" and the MAP's "key_value" groups have none) */
    int32_t repetition; /* FL_PQ_REQUIRED, FL_PQ_OPTIONAL, FL_PQ_REPEATED */
    int32_t n_children; /* 0: a leaf */
    int32_t group; /* groups: FL_PQ_GROUP_PLAIN, _LIST (converted type LIST, logicalType LIST), _MAP (converted type MAP, logicalType MAP) */
    int32_t type; /* leaves: as fl_pq_column_spec_t */
    fl_pq_logical_t logical;
    int32_t type_length;
} fl_pq_node_t;

typedef struct fl_pq_writer fl_pq_writer_t;

/* Creates (truncates) the file at path, or writes into memory if path is
 * NULL (fl_pq_writer_bytes). Copies specs and options. INVALID_ARG for a
 * spec outside the subset, IO for the file. */
int fl_pq_writer_open(const char *path, const fl_pq_column_spec_t *cols, size_t n_cols,
                      const fl_pq_writer_options_t *opts, fl_pq_writer_t **out, fl_error_t *err);
/* As fl_pq_writer_open, for a schema tree. fl_pq_writer_open(specs) is
 * the tree of its columns as leaves of the root (same output as before,
 * byte for byte). INVALID_ARG for a tree that is malformed (children count
 * past the end, a group with no child, a leaf of a bad spec, a repetition
 * outside the three, more than FL_PQ_LEVEL_MAX levels or groups deep). A
 * node's field id is written when it is >= 0. */
int fl_pq_writer_open_tree(const char *path, const fl_pq_node_t *nodes, size_t n_nodes,
                           const fl_pq_writer_options_t *opts, fl_pq_writer_t **out, fl_error_t *err);
/* The definition and repetition levels a column's values reach (column =
 * leaf index); at most FL_PQ_LEVEL_MAX (64, lake_parquet_meta.h). */
void fl_pq_writer_levels(const fl_pq_writer_t *w, size_t column, int *max_def, int *max_rep);
/* Appends `rows` rows, one fl_pq_column_data_t per column (leaf). All or
 * nothing for bad input, INVALID_ARG naming the column: a null in a
 * REQUIRED flat column, a nested column without levels, def above
 * max_def, rep above max_rep (or missing when max_rep > 0), a first rep of
 * the batch other than 0, a rep of r > 0 whose def does not reach the r-th
 * repeated ancestor (no element to continue), a row count other than
 * rows, a value over 64 MiB. A REQUIRED leaf inside an optional group is
 * fine (def < max_def means some ancestor is null or empty). An I/O error
 * while a full row group goes out latches the writer. */
int fl_pq_writer_append(fl_pq_writer_t *w, const fl_pq_column_data_t *cols, size_t rows,
                        fl_error_t *err);
/* Ends the current row group here (none if it is empty). */
int fl_pq_writer_flush_row_group(fl_pq_writer_t *w, fl_error_t *err);
/* Writes the last row group and the footer, then fsyncs and closes the
 * file (its directory entry is the caller's to make durable). */
int fl_pq_writer_finish(fl_pq_writer_t *w, fl_error_t *err);
/* The file's bytes so far (in-memory writers). */
const fl_buf_t *fl_pq_writer_bytes(const fl_pq_writer_t *w);
/* Bytes written so far (the file size after finish). */
uint64_t fl_pq_writer_position(const fl_pq_writer_t *w);
/* Bytes of levels and values buffered for the open row group, before
 * encoding and compression: with the position, an upper estimate of the
 * file's size (for rolling files at a target size). */
size_t fl_pq_writer_buffered_bytes(const fl_pq_writer_t *w);
/* The row groups written so far as the footer describes them (each
 * chunk's offsets, sizes and statistics), *n of them: for an Iceberg data
 * file's column_sizes and split_offsets. Valid until the next append,
 * flush or destroy. */
const fl_pq_row_group_t *fl_pq_writer_row_groups(const fl_pq_writer_t *w, size_t *n);
void fl_pq_writer_destroy(fl_pq_writer_t *w);

#endif
