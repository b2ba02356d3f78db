/*
 * coordinator_catalog.c — database and table DDL on the coordinator (see
 * coordinator_catalog.h). Order of checks follows the reference: names,
 * descriptor parse, defaults, validation, then existence.
 */
#include "coordinator_catalog.h"
#include "coordinator_lake_table.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "common_buf.h"
#include "common_time.h"
#include "types_table.h"

int fl_catalog_init(fl_catalog_t *cat, fl_metastore_t *ms, const fl_table_defaults_t *defaults,
                    const int32_t *tablet_ids, size_t tablet_count, fl_error_t *err) {
    memset(cat, 0, sizeof(*cat));
    cat->ms = ms;
    cat->defaults = *defaults;
    if (tablet_count > FL_CATALOG_TABLET_SERVERS_MAX) tablet_count = FL_CATALOG_TABLET_SERVERS_MAX;
    cat->tablet_count = tablet_count;
    memcpy(cat->tablet_ids, tablet_ids, tablet_count * sizeof(int32_t));
    /* racks come with the registrations (fl_catalog_tablet_up); none yet */
    if (ms->ops->db_count(ms) == 0)
        return fl_catalog_create_database(cat, FL_CATALOG_DEFAULT_DATABASE, NULL, 0, true, err);
    return 0;
}

int fl_catalog_create_database(fl_catalog_t *cat, const char *name, const uint8_t *json,
                               size_t json_len, bool ignore_if_exists, fl_error_t *err) {
    int rc = fl_name_check(name, "Database", FLUSS_ERR_INVALID_DATABASE_EXCEPTION, err);
    if (rc) return rc;
    fl_database_desc_t desc;
    if ((rc = fl_database_desc_from_bytes(json, json_len, &desc, err))) return rc;
    if (cat->ms->ops->db_get(cat->ms, name)) {
        fl_database_desc_free(&desc);
        if (ignore_if_exists) return 0;
        return fl_err_set(err, FLUSS_ERR_DATABASE_ALREADY_EXIST, "Database %s already exists.",
                          name);
    }
    char *text = fl_database_desc_dumps(&desc);
    fl_database_desc_free(&desc);
    int64_t now = fl_time_wall_ms();
    fl_ms_database_t db = {.name = (char *)name, .json = text, .created_ms = now,
                           .modified_ms = now};
    rc = cat->ms->ops->db_create(cat->ms, &db, err);
    free(text);
    return rc;
}

size_t fl_catalog_table_count(fl_catalog_t *cat, const char *db) {
    size_t n = 0;
    for (size_t i = 0; i < cat->ms->ops->table_count(cat->ms); i++)
        if (strcmp(cat->ms->ops->table_at(cat->ms, i)->database, db) == 0) n++;
    return n;
}

int fl_catalog_drop_database(fl_catalog_t *cat, const char *name, bool ignore_if_not_exists,
                             bool cascade, fl_error_t *err) {
    if (!cat->ms->ops->db_get(cat->ms, name)) {
        if (ignore_if_not_exists) return 0;
        return fl_err_set(err, FLUSS_ERR_DATABASE_NOT_EXIST, "Database %s does not exist.", name);
    }
    if (!cascade && fl_catalog_table_count(cat, name) > 0)
        return fl_err_set(err, FLUSS_ERR_DATABASE_NOT_EMPTY, "Database %s is not empty.", name);
    return cat->ms->ops->db_drop(cat->ms, name, err);
}

void fl_catalog_tablet_up(fl_catalog_t *cat, int32_t id, const char *rack) {
    size_t i = 0;
    while (i < cat->tablet_count && cat->tablet_ids[i] != id) i++;
    if (i == cat->tablet_count) {
        if (cat->tablet_count == FL_CATALOG_TABLET_SERVERS_MAX) return;
        cat->tablet_ids[cat->tablet_count++] = id;
    }
    /* a restart may have changed its rack: the registration is the truth */
    fl_assignment_rack_set(&cat->tablet_racks[i], rack);
}

void fl_catalog_tablet_down(fl_catalog_t *cat, int32_t id) {
    for (size_t i = 0; i < cat->tablet_count; i++)
        if (cat->tablet_ids[i] == id) {
            size_t after = cat->tablet_count - i - 1;
            memmove(&cat->tablet_ids[i], &cat->tablet_ids[i + 1], after * sizeof(int32_t));
            memmove(&cat->tablet_racks[i], &cat->tablet_racks[i + 1],
                    after * sizeof(fl_assignment_rack_t));
            cat->tablet_count--;
            return;
        }
}

static int fl_catalog_check_replication(fl_catalog_t *cat, const fl_table_desc_t *d,
                                        fl_error_t *err) {
    if (d->partition_keys.count > 0) return 0; /* partitions get buckets when created */
    const char *v = fl_kvlist_get(&d->properties, "table.replication.factor");
    long rf = v ? strtol(v, NULL, 10) : 1;
    if (rf > FL_REPLICAS_MAX)
        return fl_err_set(err, FLUSS_ERR_INVALID_REPLICATION_FACTOR,
                          "Replication factor: %ld larger than available tablet servers: %zu.",
                          rf, cat->tablet_count);
    return fl_assignment_check(cat->tablet_racks, cat->tablet_count, rf, err);
}

/* count buckets of rf replicas each over the live servers (seed: the
 * table or partition id); *out is the caller's to free */
static int fl_catalog_buckets_new(fl_catalog_t *cat, int32_t count, long rf, int64_t seed,
                                  fl_ms_bucket_t **out, fl_error_t *err) {
    int32_t *replicas = fl_calloc((size_t)count * (size_t)rf, sizeof(int32_t));
    int rc = fl_assignment_generate(cat->tablet_ids, cat->tablet_racks, cat->tablet_count,
                                    (int32_t)rf, count, (uint64_t)seed, replicas, err);
    if (rc) {
        fl_free(replicas);
        return rc;
    }
    fl_ms_bucket_t *bs = fl_calloc((size_t)count, sizeof(fl_ms_bucket_t));
    for (int32_t b = 0; b < count; b++) {
        bs[b].replica_count = (int32_t)rf;
        memcpy(bs[b].replicas, &replicas[(size_t)b * (size_t)rf], (size_t)rf * sizeof(int32_t));
        bs[b].leader = bs[b].replicas[0];
        bs[b].leader_epoch = 0;
    }
    fl_free(replicas);
    *out = bs;
    return 0;
}

static int fl_catalog_assign(fl_catalog_t *cat, const fl_table_desc_t *d, int64_t table_id,
                             fl_ms_table_t *t, fl_error_t *err) {
    if (d->partition_keys.count > 0) return 0; /* partitions get buckets when created */
    long rf = strtol(fl_kvlist_get(&d->properties, "table.replication.factor"), NULL, 10);
    if (rf < 1) rf = 1;
    int rc = fl_catalog_buckets_new(cat, d->bucket_count, rf, table_id, &t->buckets, err);
    if (!rc) t->bucket_count = d->bucket_count;
    return rc;
}

int fl_catalog_create_table(fl_catalog_t *cat, const char *db, const char *name,
                            const uint8_t *json, size_t json_len, bool ignore_if_exists,
                            fl_error_t *err) {
    int rc = fl_name_check(db, "Database", FLUSS_ERR_INVALID_DATABASE_EXCEPTION, err);
    if (!rc) rc = fl_name_check(name, "Table", FLUSS_ERR_INVALID_TABLE_EXCEPTION, err);
    if (rc) return rc;
    fl_table_desc_t d;
    if ((rc = fl_table_desc_from_bytes(json, json_len, &d, err))) return rc;
    fl_ms_table_t t;
    memset(&t, 0, sizeof(t));
    char *table_json = NULL, *schema_json = NULL;
    if ((rc = fl_table_normalize(&d, err))) goto done;
    if ((rc = fl_table_apply_defaults(&d, &cat->defaults, err))) goto done;
    /* like the reference: the assignment (replication factor) is checked
     * before the descriptor is validated and before any id is taken */
    if ((rc = fl_catalog_check_replication(cat, &d, err))) goto done;
    if ((rc = fl_table_validate(&d, &cat->defaults, err))) goto done;
    if (!cat->ms->ops->db_get(cat->ms, db)) {
        rc = fl_err_set(err, FLUSS_ERR_DATABASE_NOT_EXIST, "Database %s does not exist.", db);
        goto done;
    }
    if (cat->ms->ops->table_get(cat->ms, db, name)) {
        if (!ignore_if_exists)
            rc = fl_err_set(err, FLUSS_ERR_TABLE_ALREADY_EXIST, "Table %s.%s already exists.", db,
                            name);
        goto done;
    }
    if ((rc = cat->ms->ops->next_id(cat->ms, FL_MS_COUNTER_TABLE_ID, &t.table_id, err))) goto done;
    if ((rc = fl_catalog_assign(cat, &d, t.table_id, &t, err))) goto done;
    /* the lake table first, as the reference does: a table whose lake
     * table cannot be made is not created */
    if (fl_lake_table_enabled(&d.properties) &&
        (rc = fl_lake_table_create(&cat->defaults.lake, db, name, t.table_id, &d, err)))
        goto done;
    table_json = fl_table_desc_dumps(&d);
    json_t *sj = fl_schema_to_json(&d.schema);
    schema_json = json_dumps(sj, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(sj);
    t.database = (char *)db;
    t.name = (char *)name;
    t.schema_id = 1;
    t.table_json = table_json;
    t.schema_count = 1;
    t.schema_jsons = &schema_json;
    t.created_ms = t.modified_ms = fl_time_wall_ms();
    rc = cat->ms->ops->table_create(cat->ms, &t, err);
done:
    fl_free(t.buckets);
    free(table_json);
    free(schema_json);
    fl_table_desc_free(&d);
    return rc;
}

int fl_catalog_drop_table(fl_catalog_t *cat, const char *db, const char *name,
                          bool ignore_if_not_exists, fl_error_t *err) {
    if (!cat->ms->ops->table_get(cat->ms, db, name)) {
        if (ignore_if_not_exists) return 0;
        return fl_err_set(err, FLUSS_ERR_TABLE_NOT_EXIST, "Table %s.%s does not exist.", db, name);
    }
    return cat->ms->ops->table_drop(cat->ms, db, name, err);
}

const fl_ms_table_t *fl_catalog_get_table(fl_catalog_t *cat, const char *db, const char *name,
                                          fl_error_t *err) {
    const fl_ms_table_t *t = cat->ms->ops->table_get(cat->ms, db, name);
    if (!t) fl_err_set(err, FLUSS_ERR_TABLE_NOT_EXIST, "Table '%s.%s' does not exist.", db, name);
    return t;
}

int fl_catalog_partition_keys(const fl_ms_table_t *t, fl_strlist_t *keys, fl_error_t *err) {
    memset(keys, 0, sizeof(*keys));
    json_t *j = json_loads(t->table_json, 0, NULL);
    const json_t *pk = j ? json_object_get(j, "partition_key") : NULL;
    for (size_t i = 0; pk && i < json_array_size(pk); i++)
        if (json_string_value(json_array_get(pk, i)))
            fl_strlist_add(keys, json_string_value(json_array_get(pk, i)));
    if (j) json_decref(j);
    if (!pk) return fl_err_set(err, FLUSS_ERR__CORRUPT, "stored table JSON has no partition_key");
    return 0;
}

/* Resolves a spec to values in partition-key order and the partition name. */
static int fl_catalog_resolve_spec(const fl_ms_table_t *t, const fl_strlist_t *keys,
                                   const char *const *spec_keys, const char *const *spec_values,
                                   size_t spec_count, bool is_create, fl_strlist_t *values,
                                   char **name, fl_error_t *err) {
    const int code = FLUSS_ERR_PARTITION_SPEC_INVALID_EXCEPTION;
    memset(values, 0, sizeof(*values));
    if (spec_count != keys->count)
        return fl_err_set(err, code,
                          "PartitionSpec size is not equal to partition keys size for "
                          "partitioned table %s.%s.",
                          t->database, t->name);
    size_t len = 0;
    for (size_t k = 0; k < keys->count; k++) {
        const char *v = NULL;
        for (size_t i = 0; i < spec_count; i++)
            if (strcmp(spec_keys[i], keys->items[k]) == 0) v = spec_values[i];
        if (!v) {
            fl_strlist_free(values);
            return fl_err_set(err, code,
                              "PartitionSpec does not contain partition key '%s' for partitioned "
                              "table %s.%s.",
                              keys->items[k], t->database, t->name);
        }
        fl_error_t e;
        if (fl_name_check(v, "Partition", code, &e) != 0) {
            /* "__" prefixes are refused only on create, as the reference does */
            bool prefix_only = strncmp(v, "__", 2) == 0 && strlen(v) <= FL_NAME_LEN_MAX &&
                               strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789_-") == strlen(v);
            if (is_create || !prefix_only) {
                fl_strlist_free(values);
                const char *why = strstr(e.msg, "is invalid: ");
                return fl_err_set(err, code, "The partition value %s is invalid: %s", v,
                                  why ? why + 12 : e.msg);
            }
        }
        fl_strlist_add(values, v);
        len += strlen(v) + 1;
    }
    *name = fl_malloc(len + 1);
    (*name)[0] = '\0';
    for (size_t k = 0; k < values->count; k++) {
        if (k) strcat(*name, "$");
        strcat(*name, values->items[k]);
    }
    return 0;
}

static const fl_ms_table_t *fl_catalog_partitioned_table(fl_catalog_t *cat, const char *db,
                                                         const char *table, fl_strlist_t *keys,
                                                         fl_error_t *err) {
    const fl_ms_table_t *t = cat->ms->ops->table_get(cat->ms, db, table);
    if (!t) {
        fl_err_set(err, FLUSS_ERR_TABLE_NOT_EXIST, "Table '%s.%s' does not exist.", db, table);
        return NULL;
    }
    if (fl_catalog_partition_keys(t, keys, err)) return NULL;
    if (keys->count == 0) {
        fl_strlist_free(keys);
        fl_err_set(err, FLUSS_ERR_TABLE_NOT_PARTITIONED_EXCEPTION,
                   "Only partitioned table support create partition.");
        return NULL;
    }
    return t;
}

/* "k1=v1/k2=v2", the form the reference names a partition in its errors
 * (ResolvedPartitionSpec#getPartitionQualifiedName). */
static char *fl_catalog_qualified_name(const fl_strlist_t *keys, const fl_strlist_t *values) {
    fl_buf_t b;
    fl_buf_init(&b);
    for (size_t i = 0; i < keys->count && i < values->count; i++) {
        if (i) fl_buf_put_u8(&b, '/');
        fl_buf_append(&b, keys->items[i], strlen(keys->items[i]));
        fl_buf_put_u8(&b, '=');
        fl_buf_append(&b, values->items[i], strlen(values->items[i]));
    }
    fl_buf_put_u8(&b, '\0');
    return (char *)b.data;
}

/* The bucket count and replication factor every partition of t gets; the
 * reference's assignment check (TableAssignmentUtils), before any other. */
static int fl_catalog_partition_layout(fl_catalog_t *cat, const fl_ms_table_t *t,
                                       int32_t *buckets, long *rf, fl_error_t *err) {
    json_t *j = json_loads(t->table_json, 0, NULL);
    *buckets = j ? (int32_t)json_integer_value(json_object_get(j, "bucket_count")) : 0;
    const char *rfs = j ? json_string_value(json_object_get(json_object_get(j, "properties"),
                                                           "table.replication.factor"))
                        : NULL;
    *rf = rfs ? strtol(rfs, NULL, 10) : 1;
    if (j) json_decref(j);
    if (*rf > FL_REPLICAS_MAX || *rf < 1 || *buckets < 1)
        return fl_err_set(err, FLUSS_ERR_INVALID_REPLICATION_FACTOR,
                          "Replication factor: %ld larger than available tablet servers: %zu.",
                          *rf, cat->tablet_count);
    return fl_assignment_check(cat->tablet_racks, cat->tablet_count, *rf, err);
}

/* MetadataManager#createPartition's limits: max.partition.num partitions
 * per table, max.bucket.num buckets over all of them. */
static int fl_catalog_partition_limits(fl_catalog_t *cat, const fl_ms_table_t *t,
                                       const char *name, int32_t buckets, fl_error_t *err) {
    int64_t count = (int64_t)t->partition_count;
    if (count + 1 > cat->defaults.max_partition_num)
        return fl_err_set(err, FLUSS_ERR_PARTITION_MAX_NUM_EXCEPTION,
                          "Exceed the maximum number of partitions for table %s.%s, only allow %d "
                          "partitions.",
                          t->database, t->name, cat->defaults.max_partition_num);
    int64_t total = (int64_t)buckets * (count + 1);
    if (total > cat->defaults.max_bucket_num)
        return fl_err_set(err, FLUSS_ERR_BUCKET_MAX_NUM_EXCEPTION,
                          "Adding partition '%s' would result in %lld total buckets for table "
                          "%s.%s, exceeding the maximum of %d buckets.",
                          name, (long long)total, t->database, t->name,
                          cat->defaults.max_bucket_num);
    return 0;
}

int fl_catalog_create_partition(fl_catalog_t *cat, const char *db, const char *table,
                                const char *const *spec_keys, const char *const *spec_values,
                                size_t spec_count, bool ignore_if_exists, fl_error_t *err) {
    fl_strlist_t keys, values;
    const fl_ms_table_t *t = fl_catalog_partitioned_table(cat, db, table, &keys, err);
    if (!t) return err->code;
    char *name = NULL, *qualified = NULL;
    int rc = fl_catalog_resolve_spec(t, &keys, spec_keys, spec_values, spec_count, true, &values,
                                     &name, err);
    if (rc) {
        fl_strlist_free(&keys);
        return rc;
    }
    qualified = fl_catalog_qualified_name(&keys, &values);
    fl_strlist_free(&keys);
    fl_ms_partition_t p;
    memset(&p, 0, sizeof(p));
    int64_t table_id = t->table_id;
    int32_t buckets;
    long rf;
    if ((rc = fl_catalog_partition_layout(cat, t, &buckets, &rf, err))) goto done;
    if (fl_ms_table_partition(t, 0, name)) {
        if (!ignore_if_exists)
            rc = fl_err_set(err, FLUSS_ERR_PARTITION_ALREADY_EXISTS,
                            "Partition '%s' already exists for table %s.%s", qualified, db, table);
        goto done;
    }
    if ((rc = fl_catalog_partition_limits(cat, t, name, buckets, err))) goto done;
    if ((rc = cat->ms->ops->next_id(cat->ms, FL_MS_COUNTER_PARTITION_ID, &p.partition_id, err)))
        goto done;
    p.name = name;
    p.values = values.items;
    p.value_count = values.count;
    p.created_ms = fl_time_wall_ms();
    p.bucket_count = buckets;
    if ((rc = fl_catalog_buckets_new(cat, buckets, rf, p.partition_id, &p.buckets, err)))
        goto done;
    rc = cat->ms->ops->partition_create(cat->ms, table_id, &p, err);
    fl_free(p.buckets);
done:
    fl_free(name);
    fl_free(qualified);
    fl_strlist_free(&values);
    return rc;
}

int fl_catalog_drop_partition(fl_catalog_t *cat, const char *db, const char *table,
                              const char *const *spec_keys, const char *const *spec_values,
                              size_t spec_count, bool ignore_if_not_exists,
                              int64_t *dropped_id, fl_error_t *err) {
    *dropped_id = -1;
    fl_strlist_t keys, values;
    const fl_ms_table_t *t = fl_catalog_partitioned_table(cat, db, table, &keys, err);
    if (!t) return err->code;
    char *name = NULL;
    int rc = fl_catalog_resolve_spec(t, &keys, spec_keys, spec_values, spec_count, false, &values,
                                     &name, err);
    if (rc) {
        fl_strlist_free(&keys);
        return rc;
    }
    const fl_ms_partition_t *p = fl_ms_table_partition(t, 0, name);
    if (!p) {
        if (!ignore_if_not_exists) {
            char *qualified = fl_catalog_qualified_name(&keys, &values);
            rc = fl_err_set(err, FLUSS_ERR_PARTITION_NOT_EXISTS,
                            "Partition '%s' does not exist for table %s.%s", qualified, db, table);
            fl_free(qualified);
        }
    } else {
        int64_t id = p->partition_id;
        rc = cat->ms->ops->partition_drop(cat->ms, t->table_id, id, err);
        if (!rc) *dropped_id = id;
    }
    fl_strlist_free(&keys);
    fl_strlist_free(&values);
    fl_free(name);
    return rc;
}
