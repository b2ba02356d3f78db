/*
 * types_schema.h — a Fluss table schema (org.apache.fluss.metadata.Schema):
 * columns with ids, the primary key, auto-increment columns and the highest
 * field id, and its JSON form (SchemaJsonSerde / ColumnJsonSerde).
 */
#ifndef FL_TYPES_SCHEMA_H
#define FL_TYPES_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>

#include "common_error.h"
#include "common_strlist.h"
#include "types_datatype.h"

#define FL_SCHEMA_COLUMNS_MAX 4096

typedef struct fl_column {
    char *name;
    fl_datatype_t *type;
    char *comment;       /* NULL when absent */
    int32_t id;          /* column id; -1 before assignment */
    json_t *agg_function; /* kept as given, NULL when absent */
} fl_column_t;

typedef struct fl_schema {
    size_t column_count;
    fl_column_t *columns;
    bool has_primary_key;
    fl_strlist_t primary_key;
    fl_strlist_t auto_increment;
    int32_t highest_field_id;
} fl_schema_t;

void fl_schema_free(fl_schema_t *s);
void fl_schema_copy(fl_schema_t *dst, const fl_schema_t *src);
/* Index of the named column, or -1. */
int fl_schema_column_index(const fl_schema_t *s, const char *name);
/* The columns `table.statistics.columns` (spec) selects in s, as Fluss
 * main reads it: "*" every column of a type statistics cover
 * (fl_datatype_has_statistics), else a comma list of names. Their
 * positions go to out[0..*count) in ascending order (out may be NULL: a
 * check only; at most cap are stored). INVALID_CONFIG_EXCEPTION with main's
 * words for the first unknown name or type statistics do not cover, or a
 * list naming none; the columns that do qualify are given all the same. */
int fl_schema_statistics_columns(const fl_schema_t *s, const char *spec, int *out, size_t cap,
                                 size_t *count, fl_error_t *err);
/* Appends a column without an id (the caller then calls _assign_ids). */
void fl_schema_add_column(fl_schema_t *s, const char *name, fl_datatype_t *type,
                          const char *comment);

/* Parses and normalizes like Fluss's Schema.Builder: ids all set or all
 * unset (then assigned by position), unique ids, duplicate names rejected,
 * primary-key columns exist and are forced NOT NULL. Errors are
 * FLUSS_ERR_INVALID_TABLE_EXCEPTION. */
int fl_schema_from_json(const json_t *j, fl_schema_t *out, fl_error_t *err);
json_t *fl_schema_to_json(const fl_schema_t *s);
/* Gives columns whose id is -1 the next ids in order (nested ROW fields
 * numbered right after their column, as Fluss's Schema.Builder does) and
 * fixes the highest field id. Used by builders (CLI). */
void fl_schema_assign_ids(fl_schema_t *s);

#endif
