/*
 * coordinator_alter.c — ALTER TABLE (coordinator_alter.h). The stages
 * follow the reference's: names; the config changes' op types; the column
 * changes' data types and positions; "properties or schema, not both";
 * then the table, and the change itself. Refusals the reference makes
 * with an unmapped Java exception travel as UNKNOWN_SERVER_ERROR with the
 * first line of its stack trace (exception class and message).
 */
#include "coordinator_alter.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common_alloc.h"
#include "coordinator_lake_table.h"
#include "coordinator_schema_update.h"
#include "types_table.h"

#define FL_IAE "java.lang.IllegalArgumentException: "

/* FlussConfigUtils.ALTERABLE_TABLE_OPTIONS (0.9.1) */
static const char *const fl_alterable_options[] = {
    "table.datalake.enabled",
    "table.datalake.freshness",
    "table.log.tiered.local-segments",
};

static bool fl_is_table_option(const char *key) { return strncmp(key, "table.", 6) == 0; }

static bool fl_is_alterable(const char *key) {
    for (size_t i = 0; i < sizeof(fl_alterable_options) / sizeof(fl_alterable_options[0]); i++)
        if (strcmp(fl_alterable_options[i], key) == 0) return true;
    return false;
}

/* ---- request stages ---- */

static int fl_alter_check_ops(const fl_alter_table_req_t *req, fl_error_t *err) {
    for (size_t i = 0; i < req->n_configs; i++) {
        int32_t op = req->configs[i].op;
        if (op != FL_ALTER_OP_SET && op != FL_ALTER_OP_DELETE)
            return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                              FL_IAE "Unsupported alter configs op type %d", op);
        if (!req->configs[i].key)
            return fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE, "A config change has no key.");
        if (op == FL_ALTER_OP_SET && !req->configs[i].value) /* the generated getter's check */
            return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                              "java.lang.IllegalStateException: Field 'config_value' is not set");
    }
    return 0;
}

static int fl_alter_position(int32_t position, fl_error_t *err) {
    if (position != FL_ALTER_POSITION_LAST)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          FL_IAE "Unsupported ColumnPositionType: %d", position);
    return 0;
}

static int fl_alter_type(const fl_alter_column_t *c, fl_datatype_t **out, fl_error_t *err) {
    json_error_t je;
    json_t *j = json_loadb((const char *)c->type_json, c->type_json_len, 0, &je);
    if (!j)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          "java.io.UncheckedIOException: the data type JSON of column %s does "
                          "not parse: %s",
                          c->name, je.text);
    fl_error_t e;
    int rc = fl_datatype_from_json(j, out, &e);
    json_decref(j);
    if (rc)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          FL_IAE "The data type of column %s is not valid: %s", c->name, e.msg);
    return 0;
}

/* The column changes in the reference's order (adds, drops, renames,
 * modifies), their data types parsed (types[i] owned by the caller). */
static int fl_alter_column_changes(const fl_alter_table_req_t *req, fl_column_change_t *changes,
                                   fl_datatype_t **types, fl_error_t *err) {
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; i < req->n_add && !rc; i++, n++) {
        const fl_alter_column_t *c = &req->add[i];
        changes[n] = (fl_column_change_t){FL_COLUMN_ADD, c->name, NULL, NULL, c->comment};
        rc = fl_alter_type(c, &types[n], err);
        if (!rc)
            rc = fl_alter_position(c->has_position ? c->position : FL_ALTER_POSITION_LAST, err);
        changes[n].type = types[n];
    }
    for (size_t i = 0; i < req->n_drop && !rc; i++, n++)
        changes[n] = (fl_column_change_t){FL_COLUMN_DROP, req->drop[i].name, NULL, NULL, NULL};
    for (size_t i = 0; i < req->n_rename && !rc; i++, n++) {
        const fl_alter_column_t *c = &req->rename[i];
        if (!c->new_name)
            return fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE, "A rename has no new name.");
        changes[n] = (fl_column_change_t){FL_COLUMN_RENAME, c->name, c->new_name, NULL, NULL};
    }
    for (size_t i = 0; i < req->n_modify && !rc; i++, n++) {
        const fl_alter_column_t *c = &req->modify[i];
        changes[n] = (fl_column_change_t){FL_COLUMN_MODIFY, c->name, NULL, NULL, c->comment};
        if (!c->type_json) /* Jackson's words for the absent data_type_json */
            rc = fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                            FL_IAE "argument \"content\" is null");
        if (!rc) rc = fl_alter_type(c, &types[n], err);
        if (!rc && c->has_position) rc = fl_alter_position(c->position, err);
    }
    return rc;
}

/* ---- properties ---- */

static void fl_alter_props_remove(fl_kvlist_t *l, const char *key) {
    for (size_t i = 0; i < l->count; i++) {
        if (strcmp(l->items[i].key, key) != 0) continue;
        fl_free(l->items[i].key);
        fl_free(l->items[i].value);
        memmove(&l->items[i], &l->items[i + 1], (l->count - i - 1) * sizeof(*l->items));
        l->count--;
        return;
    }
}

static bool fl_alter_props_same(const fl_kvlist_t *a, const fl_kvlist_t *b) {
    if (a->count != b->count) return false;
    for (size_t i = 0; i < a->count; i++) {
        const char *v = fl_kvlist_get(b, a->items[i].key);
        if (!v || strcmp(v, a->items[i].value) != 0) return false;
    }
    return true;
}

/* TableDescriptorValidation#validateAlterTableProperties */
static int fl_alter_check_keys(const fl_table_desc_t *d, const fl_alter_table_req_t *req,
                               fl_error_t *err) {
    for (size_t i = 0; i < req->n_configs; i++) {
        const char *k = req->configs[i].key;
        if (!fl_is_table_option(k)) continue;
        if (!fl_is_alterable(k))
            return fl_err_set(err, FLUSS_ERR_INVALID_ALTER_TABLE_EXCEPTION,
                              "The option '%s' is not supported to alter yet.", k);
        if (strcmp(k, "table.datalake.enabled") == 0 &&
            !fl_kvlist_get(&d->properties, "table.datalake.format"))
            return fl_err_set(err, FLUSS_ERR_INVALID_ALTER_TABLE_EXCEPTION,
                              "The option 'table.datalake.enabled' cannot be altered for tables "
                              "that were created before the Fluss cluster enabled datalake.");
    }
    return 0;
}

/* Sets first, then resets (a key both set and reset ends up reset). */
static void fl_alter_apply_props(const fl_alter_table_req_t *req, fl_table_desc_t *d) {
    for (size_t i = 0; i < req->n_configs; i++) {
        const fl_alter_config_t *c = &req->configs[i];
        if (c->op != FL_ALTER_OP_SET) continue;
        fl_kvlist_set(fl_is_table_option(c->key) ? &d->properties : &d->custom_properties, c->key,
                      c->value);
    }
    for (size_t i = 0; i < req->n_configs; i++) {
        const fl_alter_config_t *c = &req->configs[i];
        if (c->op != FL_ALTER_OP_DELETE) continue;
        fl_alter_props_remove(fl_is_table_option(c->key) ? &d->properties
                                                         : &d->custom_properties,
                              c->key);
    }
}

static int fl_alter_properties(fl_catalog_t *cat, const fl_alter_table_req_t *req,
                               const fl_ms_table_t *t, fl_alter_outcome_t *outcome,
                               fl_error_t *err) {
    fl_table_desc_t d, nd;
    int rc = fl_table_desc_from_bytes(t->table_json, strlen(t->table_json), &d, err);
    if (rc) return rc;
    if ((rc = fl_alter_check_keys(&d, req, err))) {
        fl_table_desc_free(&d);
        return rc;
    }
    fl_table_desc_copy(&nd, &d);
    fl_alter_apply_props(req, &nd);
    char *json = NULL;
    if (fl_alter_props_same(&nd.properties, &d.properties) &&
        fl_alter_props_same(&nd.custom_properties, &d.custom_properties))
        goto done; /* nothing to write */
    if ((rc = fl_table_validate(&nd, &cat->defaults, err))) goto done;
    if (fl_lake_table_enabled(&nd.properties) && !fl_lake_config_on(&cat->defaults.lake)) {
        rc = fl_err_set(err, FLUSS_ERR_INVALID_ALTER_TABLE_EXCEPTION,
                        "Cannot alter table %s.%s in data lake, because the Fluss cluster "
                        "doesn't enable datalake tables.",
                        t->database, t->name);
        goto done;
    }
    /* turning the lake on makes the lake table first (MetadataManager#
     * preAlterTableProperties); one this table made before is taken back */
    if (fl_lake_table_enabled(&nd.properties) && !fl_lake_table_enabled(&d.properties) &&
        (rc = fl_lake_table_open_or_create(&cat->defaults.lake, t->database, t->name,
                                           t->table_id, &nd, err)))
        goto done;
    /* the lake table follows the properties even while the lake is off
     * (so that turning it on again finds it current) */
    if ((rc = fl_lake_table_sync(&cat->defaults.lake, t->database, t->name, t->table_id, &nd,
                                 fl_lake_table_enabled(&nd.properties), err)))
        goto done;
    json = fl_table_desc_dumps(&nd);
    /* 0.9.1 answers the same modified_time after a property change (seen
     * on the wire): keep it */
    rc = cat->ms->ops->table_alter(cat->ms, t->table_id, json, NULL, t->modified_ms, err);
    if (!rc) *outcome = FL_ALTER_PROPERTIES;
done:
    free(json);
    fl_table_desc_free(&d);
    fl_table_desc_free(&nd);
    return rc;
}

/* ---- schema ---- */

static int fl_alter_schema(fl_catalog_t *cat, const fl_ms_table_t *t,
                           const fl_column_change_t *changes, size_t n,
                           fl_alter_outcome_t *outcome, fl_error_t *err) {
    fl_table_desc_t d;
    int rc = fl_table_desc_from_bytes(t->table_json, strlen(t->table_json), &d, err);
    if (rc) return rc;
    fl_schema_t ns;
    bool changed = false;
    if ((rc = fl_schema_update(&d, changes, n, &ns, &changed, err))) goto done;
    if (!changed) {
        fl_schema_free(&ns);
        goto done;
    }
    fl_schema_free(&d.schema);
    d.schema = ns;
    /* lake first, as the reference (syncSchemaChangesToLake); 0.9.1's
     * Iceberg catalog refuses every column change, fluss-c adds the
     * columns to the lake table's schema */
    if (fl_lake_table_enabled(&d.properties)) {
        if (!fl_lake_config_on(&cat->defaults.lake)) {
            rc = fl_err_set(err, FLUSS_ERR_INVALID_ALTER_TABLE_EXCEPTION,
                            "Cannot alter schema for datalake enabled table %s.%s, because the "
                            "Fluss cluster doesn't enable datalake tables.",
                            t->database, t->name);
            goto done;
        }
        if ((rc = fl_lake_table_sync(&cat->defaults.lake, t->database, t->name, t->table_id, &d,
                                     true, err)))
            goto done;
    }
    char *table_json = fl_table_desc_dumps(&d);
    json_t *sj = fl_schema_to_json(&d.schema);
    char *schema_json = json_dumps(sj, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(sj);
    /* the reference registers a schema node; the table's modification
     * time stays */
    rc = cat->ms->ops->table_alter(cat->ms, t->table_id, table_json, schema_json, t->modified_ms,
                                   err);
    if (!rc) *outcome = FL_ALTER_SCHEMA;
    free(table_json);
    free(schema_json);
done:
    fl_table_desc_free(&d);
    return rc;
}

int fl_catalog_alter_table(fl_catalog_t *cat, const fl_alter_table_req_t *req,
                           fl_alter_outcome_t *outcome, fl_error_t *err) {
    *outcome = FL_ALTER_NOTHING;
    int rc = fl_name_check(req->database, "Database", FLUSS_ERR_INVALID_DATABASE_EXCEPTION, err);
    if (!rc) rc = fl_name_check(req->table, "Table", FLUSS_ERR_INVALID_TABLE_EXCEPTION, err);
    if (!rc) rc = fl_alter_check_ops(req, err);
    if (rc) return rc;
    size_t n = req->n_add + req->n_drop + req->n_rename + req->n_modify;
    fl_column_change_t *changes = fl_calloc(n ? n : 1, sizeof(*changes));
    fl_datatype_t **types = fl_calloc(n ? n : 1, sizeof(*types));
    rc = fl_alter_column_changes(req, changes, types, err);
    if (!rc && n > 0 && req->n_configs > 0)
        rc = fl_err_set(err, FLUSS_ERR_INVALID_ALTER_TABLE_EXCEPTION,
                        "Table alteration can only be applied to one of the following: table "
                        "properties or table schema.");
    if (rc || (n == 0 && req->n_configs == 0)) goto done;
    const fl_ms_table_t *t = cat->ms->ops->table_get(cat->ms, req->database, req->table);
    if (!t) {
        if (!req->ignore_if_not_exists)
            rc = fl_err_set(err, FLUSS_ERR_TABLE_NOT_EXIST, "Table '%s.%s' does not exist.",
                            req->database, req->table);
        goto done;
    }
    rc = n > 0 ? fl_alter_schema(cat, t, changes, n, outcome, err)
               : fl_alter_properties(cat, req, t, outcome, err);
done:
    for (size_t i = 0; i < n; i++) fl_datatype_destroy(types[i]);
    fl_free(types);
    fl_free(changes);
    return rc;
}
