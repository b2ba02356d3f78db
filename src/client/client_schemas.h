/*
 * client_schemas.h — a reader's cache of a table's other schemas
 * (client_schemas.c): schema ids met in log batches and kv values that
 * differ from the table handle's, each with its map into the handle's
 * schema by column id. Thread rule: one user per cache.
 */
#ifndef FL_CLIENT_SCHEMAS_H
#define FL_CLIENT_SCHEMAS_H

#include <stdint.h>

#include "client_table.h"
#include "types_schema_map.h"

/* Schemas one cache keeps at most (schema ids grow by one per ALTER). */
#define FL_SCHEMAS_MAX 4096

typedef struct fl_schemas {
    const fluss_table_t *t;
    struct {
        int32_t id;
        fl_schema_t schema;
        fl_schema_map_t map; /* schema -> the table handle's schema */
    } *items;
    size_t count;
    fl_client_conn_t conn; /* to the coordinator, opened on first need */
} fl_schemas_t;

void fl_schemas_init(fl_schemas_t *s, const fluss_table_t *t);
void fl_schemas_free(fl_schemas_t *s);
/* Schema id of the table and its map into the handle's schema
 * (GET_TABLE_SCHEMA on a miss; blocks). Both borrowed until the next
 * call. */
int fl_schemas_get(fl_schemas_t *s, int32_t id, const fl_schema_t **schema,
                   const fl_schema_map_t **map, fl_error_t *err);

#endif
