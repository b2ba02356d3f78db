/*
 * lake_avro_schema.h — the Avro schemas of Iceberg's manifests and
 * manifest lists (Avro 1.11 specification, "Schema Declaration"; Iceberg
 * format/spec.md, "Manifests" and "Manifest Lists"): a tree built with the
 * functions below or parsed from a file's avro.schema, and its JSON with
 * the attributes Iceberg reads by id.
 *
 *   record   {"type":"record","name":N,"fields":[{"name","type","doc"?,
 *             "default":null?,"field-id"?}...]}
 *   enum     {"type":"enum","name":N,"symbols":[...]}
 *   array    {"type":"array","items":T,"element-id"?,"logicalType"?}
 *            (Iceberg's map with non-string keys: an array of records of
 *            key and value with "logicalType":"map")
 *   map      {"type":"map","values":T,"key-id"?,"value-id"?} (string keys)
 *   fixed    {"type":"fixed","name":N,"size":S}
 *   union    [T1, T2, ...]; an optional field is ["null", T] with
 *            "default": null
 *   others   "null" "boolean" "int" "long" "float" "double" "bytes"
 *            "string", or {"type":P, "logicalType":L, "precision"?,
 *            "scale"?} — logical types are plain attributes
 *
 * Not supported (INVALID_ARG from parse): references to named types (every
 * record, enum and fixed is declared where it is used, as Iceberg writes
 * them), so no recursive schemas; defaults other than null; namespaces and
 * aliases are ignored. Other attributes are dropped.
 *
 * Thread rule: a schema is built by one thread, then read-only (any
 * thread). Ownership: a node owns its children; the builders take the
 * children they are given.
 */
#ifndef FL_LAKE_AVRO_SCHEMA_H
#define FL_LAKE_AVRO_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"

typedef enum fl_avro_type {
    FL_AVRO_NULL,
    FL_AVRO_BOOLEAN,
    FL_AVRO_INT,
    FL_AVRO_LONG,
    FL_AVRO_FLOAT,
    FL_AVRO_DOUBLE,
    FL_AVRO_BYTES,
    FL_AVRO_STRING,
    FL_AVRO_RECORD,
    FL_AVRO_ENUM,
    FL_AVRO_ARRAY,
    FL_AVRO_MAP,
    FL_AVRO_UNION,
    FL_AVRO_FIXED,
} fl_avro_type_t;

/* An absent "field-id", "element-id", "key-id" or "value-id" (Iceberg's
 * ids are never negative), or an absent "precision" or "scale". */
#define FL_AVRO_NO_ID (-1)
/* Limits on a parsed schema (a built one is asserted against them). */
#define FL_AVRO_DEPTH_MAX 32 /* nested types */
#define FL_AVRO_FIELDS_MAX 4096 /* fields of a record, symbols of an enum */
#define FL_AVRO_BRANCHES_MAX 64 /* branches of a union */
#define FL_AVRO_FIXED_MAX (1u << 20) /* bytes of a fixed */

typedef struct fl_avro_schema fl_avro_schema_t;

typedef struct fl_avro_field {
    char *name;
    int32_t field_id; /* "field-id" or FL_AVRO_NO_ID */
    char *doc; /* "doc" or NULL */
    bool default_null; /* "default": null */
    fl_avro_schema_t *type;
} fl_avro_field_t;

/* Read-only to callers; the builders and parse fill it. */
struct fl_avro_schema {
    fl_avro_type_t type;
    char *name; /* record, enum, fixed */
    char *logical_type; /* "logicalType" or NULL */
    int32_t precision, scale; /* "precision", "scale" or FL_AVRO_NO_ID */
    int32_t element_id; /* array: "element-id" */
    int32_t key_id, value_id; /* map: "key-id", "value-id" */
    size_t size; /* fixed */
    fl_avro_field_t *fields; /* record */
    size_t n_fields;
    char **symbols; /* enum */
    size_t n_symbols;
    fl_avro_schema_t **branches; /* union */
    size_t n_branches;
    fl_avro_schema_t *items; /* array items, map values */
    /* A lower bound of the bytes a value takes (0 for null, an empty
     * record, a fixed of size 0): sizes the allocation of a decoded block
     * count. Kept up to date by the builders as children are added. */
    size_t min_bytes;
};

/* A primitive: FL_AVRO_NULL .. FL_AVRO_STRING. */
fl_avro_schema_t *fl_avro_schema_new(fl_avro_type_t type);
fl_avro_schema_t *fl_avro_schema_record_new(const char *name);
/* Adds a field (takes type) and returns it, for doc. An optional type
 * (a union whose first branch is null) gets "default": null, as Iceberg
 * writes it. field_id may be FL_AVRO_NO_ID. */
fl_avro_field_t *fl_avro_schema_record_add(fl_avro_schema_t *record, const char *name,
                                           int32_t field_id, fl_avro_schema_t *type);
fl_avro_schema_t *fl_avro_schema_enum_new(const char *name, const char *const *symbols, size_t n);
fl_avro_schema_t *fl_avro_schema_array_new(fl_avro_schema_t *items, int32_t element_id);
fl_avro_schema_t *fl_avro_schema_map_new(fl_avro_schema_t *values, int32_t key_id,
                                         int32_t value_id);
fl_avro_schema_t *fl_avro_schema_fixed_new(const char *name, size_t size);
/* An empty union; branches added in order. */
fl_avro_schema_t *fl_avro_schema_union_new(void);
void fl_avro_schema_union_add(fl_avro_schema_t *u, fl_avro_schema_t *branch);
/* ["null", type]: an optional value. */
fl_avro_schema_t *fl_avro_schema_optional(fl_avro_schema_t *type);
/* Sets "logicalType" (copied); returns s. */
fl_avro_schema_t *fl_avro_schema_set_logical(fl_avro_schema_t *s, const char *logical_type);
void fl_avro_schema_destroy(fl_avro_schema_t *s);

/* Parses schema JSON (a file's avro.schema). CORRUPT for text that is not
 * a schema, INVALID_ARG for the unsupported forms above. */
int fl_avro_schema_parse(const char *json, size_t len, fl_avro_schema_t **out, fl_error_t *err);
/* Appends the schema's JSON (compact, attributes as listed above, no NUL). */
void fl_avro_schema_write_json(const fl_avro_schema_t *s, fl_buf_t *out);

/* A record's field by name or by "field-id": its index, or -1. */
int fl_avro_schema_field_index(const fl_avro_schema_t *record, const char *name);
int fl_avro_schema_field_index_by_id(const fl_avro_schema_t *record, int32_t field_id);
/* "int", "record", ...: the type's name in the specification. */
const char *fl_avro_type_name(fl_avro_type_t type);

#endif
