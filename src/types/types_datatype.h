/*
 * types_datatype.h — Fluss data types (org.apache.fluss.types): the tree of
 * a column's type, its JSON form as Fluss stores it in table descriptors
 * (DataTypeJsonSerde), and a SQL-style text form for people ("INT NOT NULL",
 * "DECIMAL(10, 2)", "ARRAY<STRING>", "MAP<STRING, INT>", "ROW<a INT, b STRING>").
 * A type tree owns all its children. No thread rules: values only.
 */
#ifndef FL_TYPES_DATATYPE_H
#define FL_TYPES_DATATYPE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"

/* X(enum suffix, JSON/Fluss root name, SQL name) */
#define FL_TYPE_ROOTS(X)                                                  \
    X(CHAR, "CHAR", "CHAR")                                               \
    X(STRING, "STRING", "STRING")                                         \
    X(BOOLEAN, "BOOLEAN", "BOOLEAN")                                      \
    X(BINARY, "BINARY", "BINARY")                                         \
    X(BYTES, "BYTES", "BYTES")                                            \
    X(DECIMAL, "DECIMAL", "DECIMAL")                                      \
    X(TINYINT, "TINYINT", "TINYINT")                                      \
    X(SMALLINT, "SMALLINT", "SMALLINT")                                   \
    X(INTEGER, "INTEGER", "INT")                                          \
    X(BIGINT, "BIGINT", "BIGINT")                                         \
    X(FLOAT, "FLOAT", "FLOAT")                                            \
    X(DOUBLE, "DOUBLE", "DOUBLE")                                         \
    X(DATE, "DATE", "DATE")                                               \
    X(TIME, "TIME_WITHOUT_TIME_ZONE", "TIME")                             \
    X(TIMESTAMP, "TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP")              \
    X(TIMESTAMP_LTZ, "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "TIMESTAMP_LTZ")   \
    X(ARRAY, "ARRAY", "ARRAY")                                            \
    X(MAP, "MAP", "MAP")                                                  \
    X(ROW, "ROW", "ROW")

typedef enum fl_type_root {
#define FL_TYPE_ROOT_ENUM_(e, json, sql) FL_TYPE_##e,
    FL_TYPE_ROOTS(FL_TYPE_ROOT_ENUM_)
#undef FL_TYPE_ROOT_ENUM_
    FL_TYPE_ROOT_COUNT
} fl_type_root_t;

#define FL_DECIMAL_PRECISION_MAX 38
#define FL_TIME_PRECISION_MAX 9
#define FL_TYPE_DEPTH_MAX 32      /* nesting limit for untrusted input */
#define FL_ROW_FIELDS_MAX 4096

typedef struct fl_datatype fl_datatype_t;

typedef struct fl_row_field {
    char *name;
    char *description; /* NULL when absent */
    int32_t field_id;  /* -1 when unknown */
    fl_datatype_t *type;
} fl_row_field_t;

struct fl_datatype {
    fl_type_root_t root;
    bool nullable;
    int32_t length;    /* CHAR, BINARY */
    int32_t precision; /* DECIMAL, TIME, TIMESTAMP, TIMESTAMP_LTZ */
    int32_t scale;     /* DECIMAL */
    fl_datatype_t *element;           /* ARRAY */
    fl_datatype_t *key, *value;       /* MAP */
    size_t field_count;               /* ROW */
    fl_row_field_t *fields;           /* ROW */
};

fl_datatype_t *fl_datatype_new(fl_type_root_t root);
void fl_datatype_destroy(fl_datatype_t *t);
fl_datatype_t *fl_datatype_clone(const fl_datatype_t *t);
bool fl_datatype_equal(const fl_datatype_t *a, const fl_datatype_t *b);

const char *fl_type_root_json_name(fl_type_root_t root);
/* Whether per-batch column statistics cover the type (Fluss main's list:
 * BOOLEAN … DOUBLE, STRING, CHAR, DECIMAL, DATE, TIME, TIMESTAMP(_LTZ)). */
bool fl_datatype_has_statistics(const fl_datatype_t *t);

/* JSON (DataTypeJsonSerde). from_json validates ranges and nesting and
 * returns FLUSS_ERR_INVALID_TABLE_EXCEPTION with a message on bad input. */
int fl_datatype_from_json(const json_t *j, fl_datatype_t **out, fl_error_t *err);
json_t *fl_datatype_to_json(const fl_datatype_t *t);

/* SQL-style text. Parses one type from *text and advances it past the type
 * (and a trailing NOT NULL / NULL). */
int fl_datatype_parse(const char **text, fl_datatype_t **out, fl_error_t *err);
void fl_datatype_format(const fl_datatype_t *t, fl_buf_t *out);

/* Gives every ROW field in the tree a new id ++*highest, depth first, like
 * Fluss's ReassignFieldId (used when a schema builder adds a column). */
void fl_datatype_reassign_field_ids(fl_datatype_t *t, int32_t *highest);

/* Calls fn for every ROW field id in the tree, depth first. */
void fl_datatype_visit_field_ids(const fl_datatype_t *t,
                                 void (*fn)(int32_t id, void *ctx), void *ctx);

#endif
