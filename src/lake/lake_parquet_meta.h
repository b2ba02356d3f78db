/*
 * lake_parquet_meta.h — the Parquet footer and page headers as C structs
 * (parquet-format parquet.thrift), encoded with the Thrift compact protocol
 * (lake_thrift.h). Only the fields of our writer's subset are kept; decode
 * skips every other field, as readers must. Decoded structs own their
 * strings and arrays (free with the matching _free).
 *
 *   FileMetaData   1 version, 2 schema, 3 num_rows, 4 row_groups,
 *                  6 created_by, 7 column_orders (ColumnOrder{1 TYPE_ORDER{}})
 *   SchemaElement  1 type, 2 type_length, 3 repetition_type, 4 name,
 *                  5 num_children, 6 converted_type, 7 scale, 8 precision,
 *                  9 field_id, 10 logicalType
 *   LogicalType    union: 1 STRING{}, 2 MAP{}, 3 LIST{}, 5 DECIMAL{1 scale,
 *                  2 precision}, 6 DATE{}, 7 TIME{1 utc, 2 unit},
 *                  8 TIMESTAMP{1 utc, 2 unit}
 *                  TimeUnit union: 1 MILLIS{}, 2 MICROS{}, 3 NANOS{}
 *   RowGroup       1 columns, 2 total_byte_size, 3 num_rows, 5 file_offset,
 *                  6 total_compressed_size, 7 ordinal
 *   ColumnChunk    1 file_path (read: outside the subset), 2 file_offset,
 *                  3 meta_data
 *   ColumnMetaData 1 type, 2 encodings, 3 path_in_schema, 4 codec,
 *                  5 num_values, 6 total_uncompressed_size,
 *                  7 total_compressed_size, 9 data_page_offset,
 *                  11 dictionary_page_offset, 12 statistics
 *   Statistics     3 null_count, 5 max_value, 6 min_value
 *   PageHeader     1 type, 2 uncompressed_page_size, 3 compressed_page_size,
 *                  5 data_page_header, 7 dictionary_page_header
 *   DataPageHeader 1 num_values, 2 encoding, 3 definition_level_encoding,
 *                  4 repetition_level_encoding
 *   DictionaryPageHeader 1 num_values, 2 encoding
 *
 * The schema list is a tree flattened in pre-order (element 0 the root,
 * each group followed by its num_children subtrees); fl_pq_schema_tree_build
 * checks that shape and gives each element its parent and levels and each
 * leaf (a column) its element, for the writer and the reader alike.
 *
 * Thread rule: none.
 */
#ifndef FL_LAKE_PARQUET_META_H
#define FL_LAKE_PARQUET_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"

/* parquet.thrift enums (the numbers are the format's) */
enum { FL_PQ_BOOLEAN = 0, FL_PQ_INT32 = 1, FL_PQ_INT64 = 2, FL_PQ_INT96 = 3, FL_PQ_FLOAT = 4,
       FL_PQ_DOUBLE = 5, FL_PQ_BYTE_ARRAY = 6, FL_PQ_FLBA = 7 };
/* The bytes a value of a fixed-width physical type takes in memory (a
 * BOOLEAN: one); 0 for the others (BYTE_ARRAY, INT96, FLBA). */
static inline size_t fl_pq_fixed_width(int32_t type) {
    switch (type) {
    case FL_PQ_BOOLEAN: return 1;
    case FL_PQ_INT32:
    case FL_PQ_FLOAT: return 4;
    case FL_PQ_INT64:
    case FL_PQ_DOUBLE: return 8;
    default: return 0;
    }
}
/* The longest FIXED_LEN_BYTE_ARRAY our writer and reader take: a
 * DECIMAL(38)'s 16 bytes. */
#define FL_PQ_FLBA_BYTES_MAX 16
/* The least bytes of two's complement that hold every unscaled value of
 * `precision` decimal digits (Iceberg's and Parquet's FLBA length). */
static inline size_t fl_pq_decimal_bytes(int32_t precision) {
    __int128 limit = 1; /* 10^precision, at most 10^38 */
    for (int32_t i = 0; i < precision && i < 38; i++) limit *= 10;
    size_t n = 1;
    /* n bytes hold -2^(8n-1) .. 2^(8n-1)-1 */
    while (n < 16 && ((__int128)1 << (8 * n - 1)) < limit) n++;
    return n;
}
enum { FL_PQ_REQUIRED = 0, FL_PQ_OPTIONAL = 1, FL_PQ_REPEATED = 2 };
enum { FL_PQ_CT_UTF8 = 0, FL_PQ_CT_MAP = 1, FL_PQ_CT_MAP_KEY_VALUE = 2, FL_PQ_CT_LIST = 3,
       FL_PQ_CT_DECIMAL = 5, FL_PQ_CT_DATE = 6, FL_PQ_CT_TIME_MICROS = 8,
       FL_PQ_CT_TIMESTAMP_MICROS = 10 };
enum { FL_PQ_ENC_PLAIN = 0, FL_PQ_ENC_PLAIN_DICTIONARY = 2, FL_PQ_ENC_RLE = 3,
       FL_PQ_ENC_RLE_DICTIONARY = 8 };
enum { FL_PQ_CODEC_UNCOMPRESSED = 0, FL_PQ_CODEC_SNAPPY = 1, FL_PQ_CODEC_GZIP = 2,
       FL_PQ_CODEC_ZSTD = 6 };
/* The codec of an Iceberg `write.parquet.compression-codec` value
 * (uncompressed, snappy, gzip, zstd; any case), -1 for one our writer
 * does not make (lz4, brotli, ...). */
int32_t fl_pq_codec_of_name(const char *name);
enum { FL_PQ_PAGE_DATA = 0, FL_PQ_PAGE_INDEX = 1, FL_PQ_PAGE_DICTIONARY = 2, FL_PQ_PAGE_DATA_V2 = 3 };
enum { FL_PQ_UNIT_MILLIS = 1, FL_PQ_UNIT_MICROS = 2, FL_PQ_UNIT_NANOS = 3 };

/* Limits both sides keep: rows of a row group, level entries (values
 * and nulls) of a column chunk, bytes of a page body. A reader refuses
 * larger (a run-length page can claim any count). */
#define FL_PQ_GROUP_ROWS_MAX (16u << 20)
#define FL_PQ_CHUNK_LEVELS_MAX (16u << 20)
#define FL_PQ_PAGE_BYTES_MAX (256u << 20)
/* Bound on a column's max definition and repetition level and on the
 * depth of a schema tree (levels are stored as uint8_t). */
#define FL_PQ_LEVEL_MAX 64

/* A LogicalType: its union member id (0: none) and that member's fields. */
enum { FL_PQ_LT_NONE = 0, FL_PQ_LT_STRING = 1, FL_PQ_LT_MAP = 2, FL_PQ_LT_LIST = 3,
       FL_PQ_LT_DECIMAL = 5, FL_PQ_LT_DATE = 6,
       FL_PQ_LT_TIME = 7, FL_PQ_LT_TIMESTAMP = 8 };
typedef struct fl_pq_logical {
    int16_t kind; /* FL_PQ_LT_*, or another member id decode met */
    int32_t scale, precision; /* DECIMAL */
    bool utc; /* TIME, TIMESTAMP: isAdjustedToUTC */
    int16_t unit; /* TIME, TIMESTAMP: FL_PQ_UNIT_* */
} fl_pq_logical_t;

typedef struct fl_pq_schema_element {
    char *name;
    int32_t type; /* -1: a group (no type) */
    int32_t type_length;
    int32_t repetition; /* -1: absent */
    int32_t num_children;
    int32_t converted_type; /* -1: absent */
    int32_t scale, precision;
    bool has_field_id;
    int32_t field_id;
    fl_pq_logical_t logical;
} fl_pq_schema_element_t;

typedef struct fl_pq_stats {
    bool has_null_count;
    int64_t null_count;
    bool has_min, has_max;
    uint8_t *min, *max;
    uint32_t min_len, max_len;
} fl_pq_stats_t;

typedef struct fl_pq_column_meta {
    int32_t type;
    int32_t *encodings;
    size_t n_encodings;
    char **path;
    size_t n_path;
    int32_t codec;
    int64_t num_values;
    int64_t total_uncompressed_size;
    int64_t total_compressed_size;
    int64_t data_page_offset;
    bool has_dictionary_page_offset;
    int64_t dictionary_page_offset;
    bool has_stats;
    fl_pq_stats_t stats;
} fl_pq_column_meta_t;

typedef struct fl_pq_column_chunk {
    bool has_file_path; /* data in another file: outside our subset */
    int64_t file_offset;
    bool has_meta;
    fl_pq_column_meta_t meta;
} fl_pq_column_chunk_t;

typedef struct fl_pq_row_group {
    fl_pq_column_chunk_t *columns;
    size_t n_columns;
    int64_t total_byte_size;
    int64_t num_rows;
    int64_t file_offset;
    int64_t total_compressed_size;
    int32_t ordinal;
} fl_pq_row_group_t;

typedef struct fl_pq_file_meta {
    int32_t version;
    fl_pq_schema_element_t *schema; /* [0] the root group */
    size_t n_schema;
    int64_t num_rows;
    fl_pq_row_group_t *row_groups;
    size_t n_row_groups;
    char *created_by;
    size_t n_column_orders; /* written: one TYPE_ORDER per leaf */
} fl_pq_file_meta_t;

typedef struct fl_pq_page_header {
    int32_t type;
    int32_t uncompressed_page_size;
    int32_t compressed_page_size;
    bool has_data;
    int32_t data_num_values, data_encoding, def_encoding, rep_encoding;
    bool has_dictionary;
    int32_t dict_num_values, dict_encoding;
} fl_pq_page_header_t;

/* The shape of a schema list (fl_pq_file_meta_t.schema). Element 0 is
 * the root; an element without a type is a group with at least one child,
 * one with a type a leaf (a column, in pre-order). Levels: an OPTIONAL
 * element adds one definition level, a REPEATED one a definition and a
 * repetition level; the root adds none. */
typedef struct fl_pq_schema_tree {
    size_t n_elements;
    int32_t *parent; /* per element; -1 for the root */
    uint8_t *def, *rep; /* per element: the levels reached at it */
    size_t *first_leaf, *n_leaves; /* per element: the columns below it (a leaf: itself) */
    size_t *leaves; /* per column: its element */
    size_t n_columns;
} fl_pq_schema_tree_t;

/* Checks the shape of s[0..n) and fills t (freed on error). FLUSS_ERR__CORRUPT
 * for a malformed list: no root group, children past the end or elements
 * after the root's last, a group without children or a leaf with some, a
 * repetition outside REQUIRED/OPTIONAL/REPEATED below the root, more than
 * FL_PQ_LEVEL_MAX levels or groups deep; FLUSS_ERR__NO_MEMORY. */
int fl_pq_schema_tree_build(const fl_pq_schema_element_t *s, size_t n, fl_pq_schema_tree_t *t,
                            fl_error_t *err);
void fl_pq_schema_tree_free(fl_pq_schema_tree_t *t);

void fl_pq_file_meta_encode(fl_buf_t *out, const fl_pq_file_meta_t *m);
void fl_pq_page_header_encode(fl_buf_t *out, const fl_pq_page_header_t *h);

/* Decode from p[0..len); *used gets the bytes the struct took. On error
 * *m holds nothing (freed). FLUSS_ERR__CORRUPT for malformed bytes,
 * FLUSS_ERR__NO_MEMORY if an allocation a length asked for fails. */
int fl_pq_file_meta_decode(const uint8_t *p, size_t len, fl_pq_file_meta_t *m, fl_error_t *err);
int fl_pq_page_header_decode(const uint8_t *p, size_t len, fl_pq_page_header_t *h, size_t *used,
                             fl_error_t *err);
void fl_pq_file_meta_free(fl_pq_file_meta_t *m);

#endif
