/*
 * lake_iceberg_meta_int.h — shared by the files of Iceberg table metadata
 * (lake_iceberg_table.h): the rule check that the encoder, the decoder
 * and the edits all run (one owner of the rules, each caller choosing the
 * error code: INVALID_ARG for a caller's description, CORRUPT for bytes
 * read), the partition value type a transform of a column gives, and
 * arena helpers. Thread rule: none.
 */
#ifndef FL_LAKE_ICEBERG_META_INT_H
#define FL_LAKE_ICEBERG_META_INT_H

#include "lake_iceberg_table.h"

/* Every rule of lake_iceberg_table.h over m; the first broken one is
 * reported with `code` and a message naming its JSON path. */
int fl_ice_meta_check(const fl_ice_table_meta_t *m, int code, fl_error_t *err);
/* One schema's rules (where: its JSON path, e.g. "schemas[2]"); ids must
 * not exceed last_column_id. */
int fl_ice_schema_check(const fl_ice_schema_t *s, int32_t last_column_id, const char *where,
                        int code, fl_error_t *err);

/* The type of a partition value that transform t of a column of type
 * src gives, if lake_iceberg_manifest.h can hold it. */
bool fl_ice_partition_value_type(fl_ice_transform_t t, int32_t buckets,
                                 const fl_ice_type_info_t *src, fl_ice_type_t *out);
/* The canonical spelling of a parsed type into buf (at least 32 bytes). */
void fl_ice_type_format(const fl_ice_type_info_t *t, char *buf, size_t size);
/* The column with this id in the newest schema that has it (the current
 * schema first, then the others from the last), or NULL. */
const fl_ice_field_t *fl_ice_meta_column(const fl_ice_table_meta_t *m, int32_t id);

/* The property's value, or NULL. */
const char *fl_ice_prop_get(const fl_ice_prop_t *p, size_t n, const char *key);
/* "write.metadata.previous-versions-max" of m as Java reads it (1 and
 * up, at most FL_ICE_METADATA_LOG_MAX; anything else: the default). */
size_t fl_ice_meta_previous_versions_max(const fl_ice_table_meta_t *m);

/* NULL when memory runs out (sizes from outside: the try funnel). */
void *fl_ice_arena_alloc(fl_avro_arena_t *a, size_t n);
char *fl_ice_arena_strndup(fl_avro_arena_t *a, const char *s, size_t n);

#endif
