/*
 * lake_parquet_reader.h — a Parquet reader for exactly our writer's subset
 * (lake_parquet_writer.h): flat schemas of BOOLEAN, INT32, INT64, FLOAT,
 * DOUBLE, BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY (1..16 bytes) columns, REQUIRED or OPTIONAL; Data Page v1 with
 * PLAIN or dictionary (RLE_DICTIONARY / PLAIN_DICTIONARY) values; pages
 * UNCOMPRESSED, ZSTD, SNAPPY or GZIP (what Iceberg's Java writer makes when asked;
 * Fluss's own tiering job does). For libfluss's union read and the index
 * rebuild.
 * Anything else (nested columns, v2 pages, other codecs or encodings,
 * chunks in other files) is refused with FLUSS_ERR__INVALID_ARG; malformed
 * bytes give FLUSS_ERR__CORRUPT. The file image is untrusted: every offset
 * and size is checked against it before use.
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

/* One column of one row group, a slot per row. */
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
/* The column whose Iceberg field id is field_id, -1 when none. */
int fl_pq_reader_column_of(const fl_pq_reader_t *r, int32_t field_id);
int fl_pq_reader_read_column(const fl_pq_reader_t *r, size_t row_group, size_t column,
                             fl_pq_values_t *out, fl_error_t *err);
void fl_pq_values_free(fl_pq_values_t *v);
void fl_pq_reader_destroy(fl_pq_reader_t *r);

#endif
