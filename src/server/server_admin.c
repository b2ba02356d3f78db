/*
 * server_admin.c — the database and table admin APIs (CREATE/DROP/LIST/
 * EXISTS database and table, GET_DATABASE_INFO, GET_TABLE_INFO,
 * GET_TABLE_SCHEMA, LIST_PARTITION_INFOS): protobuf in, catalog call,
 * protobuf out. Mutating APIs are routed here only on the coordinator role
 * (server_dispatch.c).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "coordinator_lake.h"
#include "server_coordinator.h"
#include "server_lake_tier.h"
#include "server_authz.h"
#include "server_node.h"

#define FL_CATALOG(ctx) (&(ctx)->cs->catalog)
#define FL_MS(ctx) (FL_CATALOG(ctx)->ms)

static ProtobufCBinaryData fl_bytes_of(const char *s) {
    ProtobufCBinaryData b = {strlen(s), (uint8_t *)s};
    return b;
}

static int fl_require_path(const Fluss__PbTablePath *p, fl_error_t *err) {
    if (!p || !p->database_name || !p->table_name)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE, "the request has no table path");
    return 0;
}

FL_API_HANDLER(fl_api_create_database) {
    int32_t rid = ctx->request_id;
    const Fluss__CreateDatabaseRequest *req = (const Fluss__CreateDatabaseRequest *)m;
    int rc = fl_authz_require(FL_AUTHZ(ctx), ctx, FL_ACL_OP_CREATE, FL_ACL_RES_CLUSTER,
                              FL_ACL_CLUSTER_NAME, err);
    if (rc) return rc;
    rc = fl_catalog_create_database(FL_CATALOG(ctx), req->database_name,
                                        req->has_database_json ? req->database_json.data : NULL,
                                        req->has_database_json ? req->database_json.len : 0,
                                        req->ignore_if_exists, err);
    if (rc) return rc;
    Fluss__CreateDatabaseResponse resp = FLUSS__CREATE_DATABASE_RESPONSE__INIT;
    fl_server_reply(out, rid, &resp.base);
    return 0;
}

/* Tells the tablet servers a table is gone (they delete its bucket logs). */
static void fl_drop_table_data(fl_req_ctx_t *ctx, const char *db, const char *name,
                               int64_t table_id) {
    fl_coordinator_server_table_dropped(ctx->cs, db, name, table_id);
}

/* Pushes a created or changed table to the tablet servers. */
static void fl_table_changed(fl_req_ctx_t *ctx, const char *db, const char *name) {
    const fl_ms_table_t *t = FL_MS(ctx)->ops->table_get(FL_MS(ctx), db, name);
    if (t) fl_coordinator_server_table_changed(ctx->cs, t->table_id);
}

typedef struct fl_dropped {
    size_t count;
    int64_t *ids;
    char **names;
} fl_dropped_t;

FL_API_HANDLER(fl_api_drop_database) {
    int32_t rid = ctx->request_id;
    const Fluss__DropDatabaseRequest *req = (const Fluss__DropDatabaseRequest *)m;
    if (fl_authz_require(FL_AUTHZ(ctx), ctx, FL_ACL_OP_DROP, FL_ACL_RES_DATABASE,
                         req->database_name, err))
        return err->code;
    fl_metastore_t *ms = FL_MS(ctx);
    fl_dropped_t dropped = {0};
    size_t n = ms->ops->table_count(ms);
    dropped.ids = fl_calloc(n ? n : 1, sizeof(int64_t));
    dropped.names = fl_calloc(n ? n : 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        const fl_ms_table_t *t = ms->ops->table_at(ms, i);
        if (strcmp(t->database, req->database_name) != 0) continue;
        dropped.ids[dropped.count] = t->table_id;
        dropped.names[dropped.count++] = fl_strdup(t->name);
    }
    int rc = fl_catalog_drop_database(FL_CATALOG(ctx), req->database_name,
                                      req->ignore_if_not_exists, req->cascade, err);
    for (size_t i = 0; i < dropped.count; i++) {
        if (!rc) fl_drop_table_data(ctx, req->database_name, dropped.names[i], dropped.ids[i]);
        fl_free(dropped.names[i]);
    }
    fl_free(dropped.ids);
    fl_free(dropped.names);
    if (rc) return rc;
    Fluss__DropDatabaseResponse resp = FLUSS__DROP_DATABASE_RESPONSE__INIT;
    fl_server_reply(out, rid, &resp.base);
    return 0;
}

FL_API_HANDLER(fl_api_list_databases) {
    int32_t rid = ctx->request_id;
    (void)err;
    const Fluss__ListDatabasesRequest *req = (const Fluss__ListDatabasesRequest *)m;
    fl_metastore_t *ms = FL_MS(ctx);
    size_t n = ms->ops->db_count(ms);
    Fluss__ListDatabasesResponse resp = FLUSS__LIST_DATABASES_RESPONSE__INIT;
    char **names = fl_calloc(n ? n : 1, sizeof(char *));
    Fluss__PbDatabaseSummary *sums = fl_calloc(n ? n : 1, sizeof(*sums));
    Fluss__PbDatabaseSummary **sum_ptrs = fl_calloc(n ? n : 1, sizeof(*sum_ptrs));
    bool summary = req->has_include_summary && req->include_summary;
    fl_authz_view_t *view = fl_authz_acquire(FL_AUTHZ(ctx));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const fl_ms_database_t *db = ms->ops->db_at(ms, i);
        /* only the databases the caller may DESCRIBE, silently */
        if (!fl_authz_allowed_in(FL_AUTHZ(ctx), view, ctx, FL_ACL_OP_DESCRIBE,
                                 FL_ACL_RES_DATABASE, db->name))
            continue;
        if (summary) {
            Fluss__PbDatabaseSummary s = FLUSS__PB_DATABASE_SUMMARY__INIT;
            s.database_name = db->name;
            s.created_time = db->created_ms;
            s.table_count = (int32_t)fl_catalog_table_count(FL_CATALOG(ctx), db->name);
            sums[k] = s;
            sum_ptrs[k] = &sums[k];
        } else {
            names[k] = db->name;
        }
        k++;
    }
    if (summary) {
        resp.n_database_summary = k;
        resp.database_summary = sum_ptrs;
    } else {
        resp.n_database_name = k;
        resp.database_name = names;
    }
    fl_server_reply(out, rid, &resp.base);
    fl_authz_release(view);
    fl_free(names);
    fl_free(sums);
    fl_free(sum_ptrs);
    return 0;
}

FL_API_HANDLER(fl_api_database_exists) {
    int32_t rid = ctx->request_id;
    (void)err;
    const Fluss__DatabaseExistsRequest *req = (const Fluss__DatabaseExistsRequest *)m;
    Fluss__DatabaseExistsResponse resp = FLUSS__DATABASE_EXISTS_RESPONSE__INIT;
    resp.exists = FL_MS(ctx)->ops->db_get(FL_MS(ctx), req->database_name) != NULL;
    fl_server_reply(out, rid, &resp.base);
    return 0;
}

FL_API_HANDLER(fl_api_get_database_info) {
    int32_t rid = ctx->request_id;
    const Fluss__GetDatabaseInfoRequest *req = (const Fluss__GetDatabaseInfoRequest *)m;
    if (fl_authz_require(FL_AUTHZ(ctx), ctx, FL_ACL_OP_DESCRIBE, FL_ACL_RES_DATABASE,
                         req->database_name, err))
        return err->code;
    const fl_ms_database_t *db = FL_MS(ctx)->ops->db_get(FL_MS(ctx), req->database_name);
    if (!db)
        return fl_err_set(err, FLUSS_ERR_DATABASE_NOT_EXIST, "Database '%s' does not exist.",
                          req->database_name);
    Fluss__GetDatabaseInfoResponse resp = FLUSS__GET_DATABASE_INFO_RESPONSE__INIT;
    resp.database_json = fl_bytes_of(db->json);
    resp.created_time = db->created_ms;
    resp.modified_time = db->modified_ms;
    fl_server_reply(out, rid, &resp.base);
    return 0;
}

FL_API_HANDLER(fl_api_create_table) {
    int32_t rid = ctx->request_id;
    const Fluss__CreateTableRequest *req = (const Fluss__CreateTableRequest *)m;
    int rc = fl_require_path(req->table_path, err);
    if (rc) return rc;
    const char *db = req->table_path->database_name, *name = req->table_path->table_name;
    if ((rc = fl_authz_require(FL_AUTHZ(ctx), ctx, FL_ACL_OP_CREATE, FL_ACL_RES_DATABASE, db,
                               err)))
        return rc;
    bool existed = FL_MS(ctx)->ops->table_get(FL_MS(ctx), db, name) != NULL;
    rc = fl_catalog_create_table(FL_CATALOG(ctx), db, name, req->table_json.data,
                                 req->table_json.len, req->ignore_if_exists, err);
    if (rc) return rc;
    fl_table_changed(ctx, db, name);
    /* an auto-partitioned table gets its first partitions before the
     * answer (the reference schedules that pass at once, asynchronously) */
    const fl_ms_table_t *t = FL_MS(ctx)->ops->table_get(FL_MS(ctx), db, name);
    if (!existed && t) fl_auto_partitioner_table_created(ctx->cs->auto_partitioner, t->table_id);
    Fluss__CreateTableResponse resp = FLUSS__CREATE_TABLE_RESPONSE__INIT;
    fl_server_reply(out, rid, &resp.base);
    return 0;
}

FL_API_HANDLER(fl_api_drop_table) {
    int32_t rid = ctx->request_id;
    const Fluss__DropTableRequest *req = (const Fluss__DropTableRequest *)m;
    int rc = fl_require_path(req->table_path, err);
    if (rc) return rc;
    if ((rc = fl_authz_require_table(FL_AUTHZ(ctx), ctx, FL_ACL_OP_DROP,
                                     req->table_path->database_name,
                                     req->table_path->table_name, err)))
        return rc;
    const fl_ms_table_t *t = FL_MS(ctx)->ops->table_get(FL_MS(ctx), req->table_path->database_name,
                                                         req->table_path->table_name);
    int64_t table_id = t ? t->table_id : -1;
    rc = fl_catalog_drop_table(FL_CATALOG(ctx), req->table_path->database_name,
                               req->table_path->table_name, req->ignore_if_not_exists, err);
    if (rc) return rc;
    if (table_id >= 0)
        fl_drop_table_data(ctx, req->table_path->database_name, req->table_path->table_name,
                           table_id);
    Fluss__DropTableResponse resp = FLUSS__DROP_TABLE_RESPONSE__INIT;
    fl_server_reply(out, rid, &resp.base);
    return 0;
}

FL_API_HANDLER(fl_api_get_table_info) {
    int32_t rid = ctx->request_id;
    const Fluss__GetTableInfoRequest *req = (const Fluss__GetTableInfoRequest *)m;
    int rc = fl_require_path(req->table_path, err);
    if (rc) return rc;
    if ((rc = fl_authz_require_table(FL_AUTHZ(ctx), ctx, FL_ACL_OP_DESCRIBE,
                                     req->table_path->database_name,
                                     req->table_path->table_name, err)))
        return rc;
    const fl_ms_table_t *t = fl_catalog_get_table(FL_CATALOG(ctx), req->table_path->database_name,
                                                  req->table_path->table_name, err);
    if (!t) return err->code;
    Fluss__GetTableInfoResponse resp = FLUSS__GET_TABLE_INFO_RESPONSE__INIT;
    resp.table_id = t->table_id;
    resp.schema_id = t->schema_id;
    char *shown = fl_lake_present_table_json(&FL_CATALOG(ctx)->defaults.lake, t->table_json);
    resp.table_json = fl_bytes_of(shown ? shown : t->table_json);
    resp.created_time = t->created_ms;
    resp.modified_time = t->modified_ms;
    fl_server_reply(out, rid, &resp.base);
    free(shown);
    return 0;
}

FL_API_HANDLER(fl_api_list_tables) {
    int32_t rid = ctx->request_id;
    const Fluss__ListTablesRequest *req = (const Fluss__ListTablesRequest *)m;
    fl_metastore_t *ms = FL_MS(ctx);
    if (!ms->ops->db_get(ms, req->database_name))
        return fl_err_set(err, FLUSS_ERR_DATABASE_NOT_EXIST, "Database %s does not exist.",
                          req->database_name);
    size_t total = ms->ops->table_count(ms), n = 0;
    char **names = fl_calloc(total ? total : 1, sizeof(char *));
    for (size_t i = 0; i < total; i++) {
        const fl_ms_table_t *t = ms->ops->table_at(ms, i);
        /* only the tables the caller may DESCRIBE, silently */
        if (strcmp(t->database, req->database_name) == 0 &&
            fl_authz_allowed_table(FL_AUTHZ(ctx), ctx, FL_ACL_OP_DESCRIBE, t->database, t->name))
            names[n++] = t->name;
    }
    Fluss__ListTablesResponse resp = FLUSS__LIST_TABLES_RESPONSE__INIT;
    resp.n_table_name = n;
    resp.table_name = names;
    fl_server_reply(out, rid, &resp.base);
    fl_free(names);
    return 0;
}

FL_API_HANDLER(fl_api_table_exists) {
    int32_t rid = ctx->request_id;
    const Fluss__TableExistsRequest *req = (const Fluss__TableExistsRequest *)m;
    int rc = fl_require_path(req->table_path, err);
    if (rc) return rc;
    Fluss__TableExistsResponse resp = FLUSS__TABLE_EXISTS_RESPONSE__INIT;
    resp.exists = FL_MS(ctx)->ops->table_get(FL_MS(ctx), req->table_path->database_name,
                                              req->table_path->table_name) != NULL;
    fl_server_reply(out, rid, &resp.base);
    return 0;
}

FL_API_HANDLER(fl_api_get_table_schema) {
    int32_t rid = ctx->request_id;
    const Fluss__GetTableSchemaRequest *req = (const Fluss__GetTableSchemaRequest *)m;
    int rc = fl_require_path(req->table_path, err);
    if (rc) return rc;
    if ((rc = fl_authz_require_table(FL_AUTHZ(ctx), ctx, FL_ACL_OP_DESCRIBE,
                                     req->table_path->database_name,
                                     req->table_path->table_name, err)))
        return rc;
    const fl_ms_table_t *t = fl_catalog_get_table(FL_CATALOG(ctx), req->table_path->database_name,
                                                  req->table_path->table_name, err);
    if (!t) return err->code;
    int32_t id = req->has_schema_id ? req->schema_id : t->schema_id;
    if (id < 1 || (size_t)id > t->schema_count)
        return fl_err_set(err, FLUSS_ERR_SCHEMA_NOT_EXIST,
                          "Schema for table %s.%s with schema id %d does not exist.", t->database,
                          t->name, id);
    Fluss__GetTableSchemaResponse resp = FLUSS__GET_TABLE_SCHEMA_RESPONSE__INIT;
    resp.schema_id = id;
    resp.schema_json = fl_bytes_of(t->schema_jsons[id - 1]);
    fl_server_reply(out, rid, &resp.base);
    return 0;
}

/* The key/value pairs of a partition spec as two arrays (views). */
static size_t fl_spec_arrays(const Fluss__PbPartitionSpec *spec, const char ***keys,
                             const char ***values) {
    size_t n = spec ? spec->n_partition_key_values : 0;
    *keys = fl_calloc(n ? n : 1, sizeof(char *));
    *values = fl_calloc(n ? n : 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        (*keys)[i] = spec->partition_key_values[i]->key;
        (*values)[i] = spec->partition_key_values[i]->value;
    }
    return n;
}

FL_API_HANDLER(fl_api_create_partition) {
    int32_t rid = ctx->request_id;
    const Fluss__CreatePartitionRequest *req = (const Fluss__CreatePartitionRequest *)m;
    int rc = fl_require_path(req->table_path, err);
    if (rc) return rc;
    if ((rc = fl_authz_require_table(FL_AUTHZ(ctx), ctx, FL_ACL_OP_WRITE,
                                     req->table_path->database_name,
                                     req->table_path->table_name, err)))
        return rc;
    const char **keys, **values;
    size_t n = fl_spec_arrays(req->partition_spec, &keys, &values);
    /* field 3 is named ignore_if_not_exists but means "ignore if it exists" */
    rc = fl_catalog_create_partition(FL_CATALOG(ctx), req->table_path->database_name,
                                     req->table_path->table_name, keys, values, n,
                                     req->ignore_if_not_exists, err);
    fl_free(keys);
    fl_free(values);
    if (rc) return rc;
    fl_table_changed(ctx, req->table_path->database_name, req->table_path->table_name);
    Fluss__CreatePartitionResponse resp = FLUSS__CREATE_PARTITION_RESPONSE__INIT;
    fl_server_reply(out, rid, &resp.base);
    return 0;
}

/* The name of the partition of t a spec names (its values in key
 * order joined by '$'), NUL-terminated in *out (initialized). */
static void fl_spec_partition_name(const fl_ms_table_t *t, const char **keys, const char **values,
                                   size_t n, fl_buf_t *out) {
    fl_strlist_t pkeys;
    fl_error_t ignored;
    if (t && fl_catalog_partition_keys(t, &pkeys, &ignored) == 0) {
        for (size_t k = 0; k < pkeys.count; k++)
            for (size_t i = 0; i < n; i++)
                if (strcmp(keys[i], pkeys.items[k]) == 0) {
                    if (k) fl_buf_put_u8(out, '$');
                    fl_buf_append(out, values[i], strlen(values[i]));
                }
        fl_strlist_free(&pkeys);
    }
    fl_buf_put_u8(out, '\0');
}

/* Drops the partition of db.name the spec names (cs->lock held): its
 * catalog entry, then its replicas on the tablet servers. */
static int fl_drop_partition_now(fl_coordinator_server_t *cs, const char *db, const char *name,
                                 const char **keys, const char **values, size_t n, bool ignore,
                                 fl_error_t *err) {
    const fl_ms_table_t *t = cs->catalog.ms->ops->table_get(cs->catalog.ms, db, name);
    int64_t table_id = t ? t->table_id : -1;
    /* the partition name, for its directory, before the store forgets it */
    fl_buf_t pname;
    fl_buf_init(&pname);
    fl_spec_partition_name(t, keys, values, n, &pname);
    int64_t dropped = -1;
    int rc = fl_catalog_drop_partition(&cs->catalog, db, name, keys, values, n, ignore, &dropped,
                                       err);
    if (!rc && dropped >= 0)
        fl_coordinator_server_partition_dropped(cs, db, name, table_id, (const char *)pname.data,
                                                dropped);
    fl_buf_free(&pname);
    return rc;
}

/* Whether DROP_PARTITION of this spec must wait for a tiering round: the
 * cluster has a lake it tiers itself (with an external tiering job the
 * drop is at once, as in 0.9.1), the table is lake-enabled and the
 * partition exists (a missing one is the drop's own error). */
static bool fl_drop_tiers_first(fl_coordinator_server_t *cs, const fl_ms_table_t *t,
                                const char **keys, const char **values, size_t n) {
    if (!t || !cs->lake_tierer || !fl_lake_config_on(&cs->cfg.defaults.lake) ||
        cs->cfg.defaults.lake.external_tiering || !fl_lake_table_json_enabled(t->table_json))
        return false;
    fl_buf_t pname;
    fl_buf_init(&pname);
    fl_spec_partition_name(t, keys, values, n, &pname);
    bool found = false;
    for (size_t p = 0; p < t->partition_count && !found; p++)
        found = n == t->partitions[p].value_count &&
                strcmp(t->partitions[p].name, (const char *)pname.data) == 0;
    fl_buf_free(&pname);
    return found;
}

/* A DROP_PARTITION of a lake table, waiting for its tiering round. */
typedef struct fl_drop_wait {
    fl_req_ctx_t *d;
    fl_coordinator_server_t *cs;
    char *db, *name;
    size_t n;
    char **keys, **values;
    bool ignore;
} fl_drop_wait_t;

static void fl_drop_wait_free(fl_drop_wait_t *w) {
    for (size_t i = 0; i < w->n; i++) fl_free(w->keys[i]), fl_free(w->values[i]);
    fl_free(w->keys);
    fl_free(w->values);
    fl_free(w->db);
    fl_free(w->name);
    fl_req_free(w->d);
    fl_free(w);
}

/* The round ended (on the tiering thread, no lock held; or at once on
 * the handler's, cs->lock held, when the service does not run: then
 * FLUSS_ERR__STATE and nothing is locked here). The partition goes only
 * once its log up to the high watermark is in the lake. */
static void fl_drop_after_tier(void *arg, int rc, const fl_error_t *terr, int64_t snapshot_id,
                               int64_t added) {
    (void)snapshot_id;
    (void)added;
    fl_drop_wait_t *w = arg;
    fl_error_t err;
    fl_err_clear(&err);
    if (rc == FLUSS_ERR__STATE) {
        fl_req_answer_error(w->d, fl_server_wire_code(rc), terr->msg);
    } else if (rc && rc != FLUSS_ERR_INVALID_TABLE_EXCEPTION) { /* that one: the lake went off */
        fl_err_set(&err, rc,
                   "Partition of lake table %s.%s was not dropped: tiering its rows into the "
                   "lake first failed: %s",
                   w->db, w->name, terr->msg);
        fl_req_answer_error(w->d, fl_server_wire_code(rc), err.msg);
    } else {
        pthread_mutex_lock(&w->cs->lock);
        rc = fl_drop_partition_now(w->cs, w->db, w->name, (const char **)w->keys,
                                   (const char **)w->values, w->n, w->ignore, &err);
        pthread_mutex_unlock(&w->cs->lock);
        if (rc) {
            fl_req_answer_error(w->d, fl_server_wire_code(rc), err.msg);
        } else {
            Fluss__DropPartitionResponse resp = FLUSS__DROP_PARTITION_RESPONSE__INIT;
            fl_req_answer(w->d, &resp.base);
        }
    }
    fl_drop_wait_free(w);
}

/* A partition of a lake table is tiered before it goes: the request
 * waits (deferred, no thread held) for a tiering round of the table, then
 * drops; its rows stay in the lake table. */
FL_API_HANDLER(fl_api_drop_partition) {
    int32_t rid = ctx->request_id;
    const Fluss__DropPartitionRequest *req = (const Fluss__DropPartitionRequest *)m;
    int rc = fl_require_path(req->table_path, err);
    if (rc) return rc;
    if ((rc = fl_authz_require_table(FL_AUTHZ(ctx), ctx, FL_ACL_OP_WRITE,
                                     req->table_path->database_name,
                                     req->table_path->table_name, err)))
        return rc;
    const char *db = req->table_path->database_name, *name = req->table_path->table_name;
    const fl_ms_table_t *t = FL_MS(ctx)->ops->table_get(FL_MS(ctx), db, name);
    const char **keys, **values;
    size_t n = fl_spec_arrays(req->partition_spec, &keys, &values);
    if (fl_drop_tiers_first(ctx->cs, t, keys, values, n)) {
        fl_drop_wait_t *w = fl_calloc(1, sizeof(*w));
        w->cs = ctx->cs;
        w->db = fl_strdup(db);
        w->name = fl_strdup(name);
        w->n = n;
        w->keys = fl_calloc(n ? n : 1, sizeof(char *));
        w->values = fl_calloc(n ? n : 1, sizeof(char *));
        for (size_t i = 0; i < n; i++) w->keys[i] = fl_strdup(keys[i]), w->values[i] = fl_strdup(values[i]);
        w->ignore = req->ignore_if_not_exists;
        w->d = fl_req_defer(ctx);
        int64_t table_id = t->table_id;
        fl_free(keys);
        fl_free(values);
        fl_lake_tierer_ask(ctx->cs->lake_tierer, table_id, fl_drop_after_tier, w);
        return 0;
    }
    rc = fl_drop_partition_now(ctx->cs, db, name, keys, values, n, req->ignore_if_not_exists,
                               err);
    fl_free(keys);
    fl_free(values);
    if (rc) return rc;
    Fluss__DropPartitionResponse resp = FLUSS__DROP_PARTITION_RESPONSE__INIT;
    fl_server_reply(out, rid, &resp.base);
    return 0;
}

FL_API_HANDLER(fl_api_list_partition_infos) {
    int32_t rid = ctx->request_id;
    const Fluss__ListPartitionInfosRequest *req = (const Fluss__ListPartitionInfosRequest *)m;
    int rc = fl_require_path(req->table_path, err);
    if (rc) return rc;
    if ((rc = fl_authz_require_table(FL_AUTHZ(ctx), ctx, FL_ACL_OP_DESCRIBE,
                                     req->table_path->database_name,
                                     req->table_path->table_name, err)))
        return rc;
    const fl_ms_table_t *t = fl_catalog_get_table(FL_CATALOG(ctx), req->table_path->database_name,
                                                  req->table_path->table_name, err);
    if (!t) return err->code;
    fl_strlist_t keys;
    if ((rc = fl_catalog_partition_keys(t, &keys, err))) return rc;
    if (keys.count == 0) {
        fl_strlist_free(&keys);
        return fl_err_set(err, FLUSS_ERR_TABLE_NOT_PARTITIONED_EXCEPTION,
                          "Table '%s.%s' is not a partitioned table.", t->database, t->name);
    }
    const Fluss__PbPartitionSpec *filter = req->partial_partition_spec;
    size_t np = t->partition_count, shown = 0;
    Fluss__PbPartitionInfo *infos = fl_calloc(np ? np : 1, sizeof(*infos));
    Fluss__PbPartitionInfo **info_ptrs = fl_calloc(np ? np : 1, sizeof(*info_ptrs));
    Fluss__PbPartitionSpec *specs = fl_calloc(np ? np : 1, sizeof(*specs));
    Fluss__PbKeyValue *kvs = fl_calloc(np * keys.count + 1, sizeof(*kvs));
    Fluss__PbKeyValue **kv_ptrs = fl_calloc(np * keys.count + 1, sizeof(*kv_ptrs));
    for (size_t i = 0; i < np; i++) {
        const fl_ms_partition_t *p = &t->partitions[i];
        bool match = true;
        for (size_t f = 0; filter && f < filter->n_partition_key_values && match; f++) {
            int k = fl_strlist_index(&keys, filter->partition_key_values[f]->key);
            match = k >= 0 && (size_t)k < p->value_count &&
                    strcmp(p->values[k], filter->partition_key_values[f]->value) == 0;
        }
        if (!match) continue;
        Fluss__PbPartitionSpec spec = FLUSS__PB_PARTITION_SPEC__INIT;
        size_t base = shown * keys.count;
        for (size_t k = 0; k < keys.count && k < p->value_count; k++) {
            Fluss__PbKeyValue kv = FLUSS__PB_KEY_VALUE__INIT;
            kv.key = keys.items[k];
            kv.value = p->values[k];
            kvs[base + k] = kv;
            kv_ptrs[base + k] = &kvs[base + k];
        }
        spec.n_partition_key_values = keys.count < p->value_count ? keys.count : p->value_count;
        spec.partition_key_values = &kv_ptrs[base];
        specs[shown] = spec;
        Fluss__PbPartitionInfo info = FLUSS__PB_PARTITION_INFO__INIT;
        info.partition_id = p->partition_id;
        info.partition_spec = &specs[shown];
        infos[shown] = info;
        info_ptrs[shown] = &infos[shown];
        shown++;
    }
    Fluss__ListPartitionInfosResponse resp = FLUSS__LIST_PARTITION_INFOS_RESPONSE__INIT;
    resp.n_partitions_info = shown;
    resp.partitions_info = info_ptrs;
    fl_server_reply(out, rid, &resp.base);
    fl_free(infos);
    fl_free(info_ptrs);
    fl_free(specs);
    fl_free(kvs);
    fl_free(kv_ptrs);
    fl_strlist_free(&keys);
    return 0;
}
