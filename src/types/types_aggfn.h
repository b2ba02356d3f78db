/*
 * types_aggfn.h — the aggregate functions a column of an `aggregation`
 * merge-engine table can name (org.apache.fluss.metadata.AggFunctionType /
 * AggFunction): their names, which type roots each accepts, their
 * parameters, and the JSON form ColumnJsonSerde writes under a column's
 * "agg_function" ({"type": "listagg", "parameters": {"delimiter": ";"}}).
 * It sits in types because the schema parser and the coordinator's CREATE
 * TABLE check need it and must not depend on the KV layer (kv_agg.h does
 * the merging). No thread rules: values only.
 */
#ifndef FL_TYPES_AGGFN_H
#define FL_TYPES_AGGFN_H

#include <jansson.h>
#include <stdbool.h>

#include "common_error.h"
#include "types_datatype.h"

/* X(enum suffix, canonical name as Fluss writes it) — Fluss's enum order */
#define FL_AGGFN_TYPES(X)                                  \
    X(SUM, "sum")                                          \
    X(PRODUCT, "product")                                  \
    X(MAX, "max")                                          \
    X(MIN, "min")                                          \
    X(LAST_VALUE, "last_value")                            \
    X(LAST_VALUE_IGNORE_NULLS, "last_value_ignore_nulls")  \
    X(FIRST_VALUE, "first_value")                          \
    X(FIRST_VALUE_IGNORE_NULLS, "first_value_ignore_nulls") \
    X(LISTAGG, "listagg")                                  \
    X(STRING_AGG, "string_agg")                            \
    X(BOOL_AND, "bool_and")                                \
    X(BOOL_OR, "bool_or")                                  \
    X(RBM32, "rbm32")                                      \
    X(RBM64, "rbm64")

typedef enum fl_aggfn_type {
#define FL_AGGFN_ENUM_(e, name) FL_AGGFN_##e,
    FL_AGGFN_TYPES(FL_AGGFN_ENUM_)
#undef FL_AGGFN_ENUM_
    FL_AGGFN_COUNT,
    FL_AGGFN_NONE = -1
} fl_aggfn_type_t;

#define FL_AGGFN_PARAM_DELIMITER "delimiter"
#define FL_AGGFN_DEFAULT_DELIMITER ","

/* "sum", "last_value_ignore_nulls", ... */
const char *fl_aggfn_name(fl_aggfn_type_t t);
/* Like AggFunctionType.fromString: case-insensitive, '-' read as '_',
 * surrounding blanks ignored. FL_AGGFN_NONE when unknown or NULL. */
fl_aggfn_type_t fl_aggfn_from_string(const char *s);
/* Whether the function accepts a column whose type has this root
 * (AggFunctionType.getSupportedDataTypeRoots). */
bool fl_aggfn_accepts_root(fl_aggfn_type_t t, fl_type_root_t root);

/* The type of an "agg_function" JSON object, FL_AGGFN_NONE when it names
 * no known function. */
fl_aggfn_type_t fl_aggfn_json_type(const json_t *agg);
/* The string value of parameter key, NULL when absent. */
const char *fl_aggfn_json_param(const json_t *agg, const char *key);

/* Rewrites an "agg_function" object the way Fluss's deserialize+serialize
 * round trip leaves it: NULL (the column has no function) when the type is
 * unknown, else {"type": canonical name[, "parameters": {k: text}]} with
 * parameter values as text and an empty parameter map dropped. The result
 * is a new reference. agg must be an object with a "type" member. */
json_t *fl_aggfn_json_normalize(const json_t *agg);

/* The CREATE TABLE check of a column's function (AggFunction
 * validateParameters then validateDataType): unknown parameters, an empty
 * delimiter, and a type root the function does not accept are refused with
 * FLUSS_ERR_INVALID_CONFIG_EXCEPTION, "Invalid aggregation function for
 * column '<name>': <reason>". */
int fl_aggfn_validate_column(const char *column, const fl_datatype_t *type, const json_t *agg,
                             fl_error_t *err);

/* TableDescriptorValidation's check for an `aggregation` table: every
 * non-primary-key column that names a function passes
 * fl_aggfn_validate_column (columns without one default to
 * last_value_ignore_nulls, which takes every type). */
struct fl_schema;
int fl_aggfn_validate_schema(const struct fl_schema *schema, fl_error_t *err);

#endif
