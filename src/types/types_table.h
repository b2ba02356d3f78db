/*
 * types_table.h — a Fluss table descriptor (org.apache.fluss.metadata.
 * TableDescriptor) and its JSON form (TableDescriptorJsonSerde), the
 * database descriptor (DatabaseDescriptorJsonSerde), and the name rules of
 * TablePath.
 */
#ifndef FL_TYPES_TABLE_H
#define FL_TYPES_TABLE_H

#include <jansson.h>
#include <stdbool.h>

#include "common_error.h"
#include "common_strlist.h"
#include "types_schema.h"

#define FL_NAME_LEN_MAX 200

typedef struct fl_table_desc {
    fl_schema_t schema;
    char *comment; /* NULL when absent */
    fl_strlist_t partition_keys;
    bool has_distribution;
    fl_strlist_t bucket_keys;
    bool has_bucket_count;
    int32_t bucket_count;
    fl_kvlist_t properties;
    fl_kvlist_t custom_properties;
} fl_table_desc_t;

typedef struct fl_database_desc {
    char *comment; /* NULL when absent */
    fl_kvlist_t custom_properties;
} fl_database_desc_t;

void fl_table_desc_free(fl_table_desc_t *d);
void fl_table_desc_copy(fl_table_desc_t *dst, const fl_table_desc_t *src);
int fl_table_desc_from_json(const json_t *j, fl_table_desc_t *out, fl_error_t *err);
int fl_table_desc_from_bytes(const void *data, size_t len, fl_table_desc_t *out,
                             fl_error_t *err);
json_t *fl_table_desc_to_json(const fl_table_desc_t *d);
/* Compact JSON text; caller frees with free(). */
char *fl_table_desc_dumps(const fl_table_desc_t *d);

void fl_database_desc_free(fl_database_desc_t *d);
/* An empty or absent JSON gives an empty descriptor. Errors are
 * FLUSS_ERR_INVALID_DATABASE_EXCEPTION. */
int fl_database_desc_from_bytes(const void *data, size_t len, fl_database_desc_t *out,
                                fl_error_t *err);
char *fl_database_desc_dumps(const fl_database_desc_t *d);

/* TablePath's character rules (Fluss's detectInvalidName: non-empty, at
 * most 200 chars of [A-Za-z0-9_-], not "." or ".."): true when name breaks
 * one, with the reference's reason in why. */
bool fl_name_invalid(const char *name, char *why, size_t why_len);
/* TablePath rules: non-empty, at most 200 chars, [A-Za-z0-9_-], not "." or
 * "..", no "__" prefix. what is "Database" or "Table"; code the error.
 * Messages are the reference's ("Table name x is invalid: ..."). */
int fl_name_check(const char *name, const char *what, int code, fl_error_t *err);

#endif
