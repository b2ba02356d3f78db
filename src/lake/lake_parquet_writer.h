/*
 * lake_parquet_writer.h — our Parquet writer for flat schemas (the data
 * files of the Iceberg lake tier, issue 21): columns of BOOLEAN, INT32,
 * INT64, FLOAT, DOUBLE, BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY (1..16 bytes),
 * REQUIRED or OPTIONAL, each with its
 * Iceberg field id and logical type; rows appended column-wise; Data Page
 * v1; PLAIN, or RLE_DICTIONARY (a PLAIN dictionary page first) for a column
 * chunk whose dictionary stays under dictionary_bytes_max; pages
 * UNCOMPRESSED, ZSTD, SNAPPY or GZIP; chunk statistics (min, max, null count).
 *
 *   file   := "PAR1" row-group* FileMetaData u32-LE(len FileMetaData) "PAR1"
 *   chunk  := [dictionary page] data page+      (a column's values of a group)
 *   page   := PageHeader (thrift compact) body  (body compressed as a whole)
 *   body   := [u32-LE len, RLE(def levels, width 1)]   OPTIONAL columns only
 *             PLAIN values of the non-null slots
 *           | u8 bit width, RLE(dictionary indices)
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
} fl_pq_column_data_t;

typedef struct fl_pq_writer fl_pq_writer_t;

/* Creates (truncates) the file at path, or writes into memory if path is
 * NULL (fl_pq_writer_bytes). Copies specs and options. INVALID_ARG for a
 * spec outside the subset, IO for the file. */
int fl_pq_writer_open(const char *path, const fl_pq_column_spec_t *cols, size_t n_cols,
                      const fl_pq_writer_options_t *opts, fl_pq_writer_t **out, fl_error_t *err);
/* Appends `rows` rows, one fl_pq_column_data_t per column. All or nothing
 * for bad input (a null in a REQUIRED column: INVALID_ARG); an I/O error
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
