/*
 * client_schemas.c — the other schemas of a table a reader meets (Fluss's
 * client-side SchemaGetter): log batches and kv values keep the schema
 * id they were written with, so after ALTER TABLE a scanner or lookuper
 * meets ids other than the table handle's. Each is fetched once with
 * GET_TABLE_SCHEMA and kept with its map into the handle's schema by
 * column id (types_schema_map.h: columns the handle's schema has and the
 * other lacks read as NULL; columns only the other has are dropped).
 * Thread rule: a cache belongs to one scanner or lookuper.
 */
#include <jansson.h>
#include <string.h>

#include "client_schemas.h"
#include "common_alloc.h"
#include "fluss_api.pb-c.h"
#include "proto_api.h"

void fl_schemas_init(fl_schemas_t *s, const fluss_table_t *t) {
    memset(s, 0, sizeof(*s));
    s->t = t;
    s->conn.fd = -1;
}

void fl_schemas_free(fl_schemas_t *s) {
    for (size_t i = 0; i < s->count; i++) {
        fl_schema_free(&s->items[i].schema);
        fl_schema_map_free(&s->items[i].map);
    }
    fl_free(s->items);
    fl_client_conn_close(&s->conn);
    memset(s, 0, sizeof(*s));
    s->conn.fd = -1;
}

/* GET_TABLE_SCHEMA of id, parsed into *out. */
static int fl_schemas_fetch(fl_schemas_t *s, int32_t id, fl_schema_t *out, fl_error_t *err) {
    const fluss_table_t *t = s->t;
    Fluss__PbTablePath path = FLUSS__PB_TABLE_PATH__INIT;
    path.database_name = t->database;
    path.table_name = t->name;
    Fluss__GetTableSchemaRequest req = FLUSS__GET_TABLE_SCHEMA_REQUEST__INIT;
    req.table_path = &path;
    req.has_schema_id = 1;
    req.schema_id = id;
    Fluss__GetTableSchemaResponse *resp = NULL;
    int rc = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        rc = s->conn.fd < 0 ? fl_table_connect_coordinator(t, &s->conn, err) : 0;
        if (!rc)
            rc = fl_client_conn_call(&s->conn, FL_API_GET_TABLE_SCHEMA, &req.base,
                                     &fluss__get_table_schema_response__descriptor,
                                     (ProtobufCMessage **)&resp, err);
        if (!rc || !fl_client_retriable(rc)) break;
        fl_client_conn_close(&s->conn); /* closed as idle: once more on a new one */
    }
    if (rc) return rc;
    json_error_t je;
    json_t *j = json_loadb((const char *)resp->schema_json.data, resp->schema_json.len, 0, &je);
    if (!j) rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "schema %d of %s.%s: %s", id, t->database,
                            t->name, je.text);
    else rc = fl_schema_from_json(j, out, err);
    json_decref(j);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return rc;
}

int fl_schemas_get(fl_schemas_t *s, int32_t id, const fl_schema_t **schema,
                   const fl_schema_map_t **map, fl_error_t *err) {
    for (size_t i = 0; i < s->count; i++)
        if (s->items[i].id == id) {
            *schema = &s->items[i].schema;
            *map = &s->items[i].map;
            return 0;
        }
    if (s->count >= FL_SCHEMAS_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "more than %d schemas of %s.%s in use",
                          FL_SCHEMAS_MAX, s->t->database, s->t->name);
    fl_schema_t got;
    memset(&got, 0, sizeof(got));
    int rc = fl_schemas_fetch(s, id, &got, err);
    if (rc) return rc;
    s->items = fl_realloc(s->items, (s->count + 1) * sizeof(*s->items));
    s->items[s->count].id = id;
    s->items[s->count].schema = got;
    fl_schema_map_init(&s->items[s->count].map, &s->items[s->count].schema, &s->t->desc.schema);
    *schema = &s->items[s->count].schema;
    *map = &s->items[s->count].map;
    s->count++;
    return 0;
}
