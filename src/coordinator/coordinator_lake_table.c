/*
 * coordinator_lake_table.c — a Fluss table's Iceberg table
 * (coordinator_lake_table.h).
 */
#include "coordinator_lake_table.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common_alloc.h"
#include "common_time.h"
#include "common_uuid.h"
#include "lake_iceberg_table.h"
#include "lake_parquet_meta.h"

#define FL_LAKE_SYSTEM_COLUMNS 3
#define FL_LAKE_PROPS_MAX 512

/* The Iceberg type of a Fluss column (NULL: none yet). buf holds a
 * decimal's text. */
static const char *fl_lake_type(const fl_datatype_t *t, char *buf, size_t cap) {
    switch (t->root) {
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING: return "string";
    case FL_TYPE_BOOLEAN: return "boolean";
    case FL_TYPE_BINARY:
    case FL_TYPE_BYTES: return "binary";
    case FL_TYPE_DECIMAL: snprintf(buf, cap, "decimal(%d, %d)", t->precision, t->scale); return buf;
    case FL_TYPE_TINYINT:
    case FL_TYPE_SMALLINT:
    case FL_TYPE_INTEGER: return "int";
    case FL_TYPE_BIGINT: return "long";
    case FL_TYPE_FLOAT: return "float";
    case FL_TYPE_DOUBLE: return "double";
    case FL_TYPE_DATE: return "date";
    case FL_TYPE_TIME: return "time";
    case FL_TYPE_TIMESTAMP: return "timestamp";
    case FL_TYPE_TIMESTAMP_LTZ: return "timestamptz";
    default: return NULL;
    }
}

/* iceberg.* keys the writer would have to honour but cannot. */
static int fl_lake_check_iceberg_props(const fl_kvlist_t *l, fl_error_t *err) {
    for (size_t i = 0; i < l->count; i++) {
        const char *k = l->items[i].key, *v = l->items[i].value;
        if (strcmp(k, "iceberg.format-version") == 0 && strcmp(v, "2") != 0)
            return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                              "'iceberg.format-version' = '%s' is not supported: flussd writes "
                              "Iceberg format version 2.",
                              v);
        if (strcmp(k, "iceberg.write.format.default") == 0 && strcasecmp(v, "parquet") != 0)
            return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                              "'iceberg.write.format.default' = '%s' is not supported: flussd "
                              "writes Parquet data files.",
                              v);
        if (strcmp(k, "iceberg.write.parquet.compression-codec") == 0 &&
            fl_pq_codec_of_name(v) < 0)
            return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                              "'iceberg.write.parquet.compression-codec' = '%s' is not "
                              "supported: flussd writes zstd, snappy, gzip or uncompressed "
                              "Parquet pages.",
                              v);
    }
    return 0;
}

static bool fl_lake_nested(const fl_datatype_t *t) {
    return t->root == FL_TYPE_ARRAY || t->root == FL_TYPE_MAP || t->root == FL_TYPE_ROW;
}

/* Whether every primitive in t's tree has an Iceberg type. */
static bool fl_lake_type_ok(const fl_datatype_t *t) {
    char buf[64];
    switch (t->root) {
    case FL_TYPE_ARRAY: return fl_lake_type_ok(t->element);
    case FL_TYPE_MAP: return fl_lake_type_ok(t->key) && fl_lake_type_ok(t->value);
    case FL_TYPE_ROW:
        for (size_t i = 0; i < t->field_count; i++)
            if (!fl_lake_type_ok(t->fields[i].type)) return false;
        return true;
    default: return fl_lake_type(t, buf, sizeof(buf)) != NULL;
    }
}

int fl_lake_table_check(const fl_table_desc_t *d, const fl_lake_config_t *c, fl_error_t *err) {
    const fl_schema_t *s = &d->schema;
    const char *f = fl_kvlist_get(&d->properties, "table.datalake.format");
    if (f && strcasecmp(f, c->format) != 0)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "The table's 'table.datalake.format' is '%s', but the Fluss cluster's "
                          "datalake format is '%s': its lake table could not be written.",
                          f, c->format);
    for (size_t i = 0; i < s->column_count; i++)
        if (!fl_lake_type_ok(s->columns[i].type))
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "Column '%s' has data type %s, which has no Iceberg type.",
                              s->columns[i].name, fl_type_root_json_name(s->columns[i].type->root));
    for (size_t i = 0; i < d->partition_keys.count; i++) {
        int idx = fl_schema_column_index(s, d->partition_keys.items[i]);
        if (idx >= 0 && s->columns[idx].type->root != FL_TYPE_STRING)
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "Partition key only support string type for iceberg currently. "
                              "Column `%s` is not string type.",
                              d->partition_keys.items[i]);
    }
    if (s->has_primary_key && d->bucket_keys.count == 0)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "Bucket key must be set for primary key Iceberg tables");
    int rc = fl_lake_check_iceberg_props(&d->properties, err);
    if (!rc) rc = fl_lake_check_iceberg_props(&d->custom_properties, err);
    return rc;
}

/* ---- the Iceberg table's description ---- */

typedef struct fl_lake_build {
    fl_ice_field_t *fields;
    /* nested types and the type strings of decimals */
    fl_avro_arena_t arena;
    int32_t *identifier;
    size_t n_identifier;
    fl_ice_partition_field_t spec_fields[FL_ICE_PARTITION_FIELDS_MAX + 1];
    char spec_names[FL_ICE_PARTITION_FIELDS_MAX + 1][256];
    size_t n_spec;
    fl_ice_prop_t props[FL_LAKE_PROPS_MAX];
    char *prop_keys[FL_LAKE_PROPS_MAX];
    size_t n_props;
} fl_lake_build_t;

static fl_lake_build_t *fl_lake_build_new(void) {
    fl_lake_build_t *b = fl_calloc(1, sizeof(*b));
    fl_avro_arena_init(&b->arena);
    return b;
}

static void fl_lake_build_destroy(fl_lake_build_t *b) {
    fl_free(b->fields);
    fl_free(b->identifier);
    for (size_t i = 0; i < b->n_props; i++) fl_free(b->prop_keys[i]);
    fl_avro_arena_reset(&b->arena);
    fl_free(b);
}

static int32_t fl_lake_field_id(const fl_schema_t *s, const char *name) {
    int idx = fl_schema_column_index(s, name);
    return idx < 0 ? -1 : (int32_t)idx + 1;
}

static int fl_lake_prop(fl_lake_build_t *b, const char *key, bool map, const char *value,
                        fl_error_t *err) {
    if (b->n_props == FL_LAKE_PROPS_MAX)
        return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                          "too many table properties for the lake table (at most %d)",
                          FL_LAKE_PROPS_MAX);
    const char *k = key;
    size_t n = strlen(key) + 8;
    char *owned = fl_malloc(n);
    if (map && strncmp(key, "iceberg.", 8) == 0) k = key + 8;
    snprintf(owned, n, "%s%s", map && k == key ? "fluss." : "", k);
    /* a later key of the same name wins, as in a Java map */
    for (size_t i = 0; i < b->n_props; i++)
        if (strcmp(b->prop_keys[i], owned) == 0) {
            fl_free(owned);
            b->props[i].value = value;
            return 0;
        }
    b->prop_keys[b->n_props] = owned;
    b->props[b->n_props] = (fl_ice_prop_t){owned, value};
    b->n_props++;
    return 0;
}

/* ---- Fluss types to Iceberg types, with Iceberg's ids ---- */

/* Memory for the description (n zeroed bytes), NULL when out of it. */
static void *fl_lake_alloc(fl_lake_build_t *b, size_t n) {
    return fl_avro_arena_try_alloc(&b->arena, n);
}

/* The field of base's nested type at this place — a list's element, a
 * map's "key" or "value", a struct's field by name — or NULL when base
 * has none (or is of another kind). */
static const fl_ice_field_t *fl_lake_base_field(const fl_ice_field_t *base,
                                                fl_ice_nested_kind_t kind, const char *name) {
    if (!base || !base->nested || base->nested->kind != kind) return NULL;
    const fl_ice_nested_t *n = base->nested;
    if (kind == FL_ICE_LIST) return n->element;
    if (kind == FL_ICE_MAP) return !strcmp(name, "key") ? n->key : n->value;
    for (size_t i = 0; i < n->n_fields; i++)
        if (!strcmp(n->fields[i].name, name)) return &n->fields[i];
    return NULL;
}

/* The id of a field inside a type: base's (the same field in the lake
 * table's current schema) or the next free one. */
static int32_t fl_lake_next_id(const fl_ice_field_t *base, int32_t *last) {
    return base ? base->id : ++*last;
}

static int fl_lake_fill(fl_lake_build_t *b, const fl_datatype_t *t, const fl_ice_field_t *base,
                        int32_t *last, int depth, fl_ice_field_t *f);

/* A list's element, a map's key or value: named, its id given, its type
 * not yet filled. */
static fl_ice_field_t *fl_lake_inner(fl_lake_build_t *b, const char *name, const fl_datatype_t *t,
                                     const fl_ice_field_t *base, int32_t *last) {
    fl_ice_field_t *f = fl_lake_alloc(b, sizeof(*f));
    if (!f) return NULL;
    f->id = fl_lake_next_id(base, last);
    f->name = name;
    f->required = strcmp(name, "key") == 0 || !t->nullable; /* Iceberg's keys are required */
    return f;
}

/* Fills f's type (f->id, name and required set) from Fluss type t, the
 * ids inside numbered as Iceberg's TypeUtil.assignFreshIds numbers them
 * (the reference's catalog create, and its SchemaUpdate#addColumn): a
 * struct numbers all its fields, then descends into each in order; a
 * list numbers its element, then descends; a map numbers its key, then
 * its value, then descends into the key, then the value. A field that
 * base (the same place in the lake table's current schema; NULL: none)
 * has keeps its id. -1 when out of memory or too deep. */
static int fl_lake_fill(fl_lake_build_t *b, const fl_datatype_t *t, const fl_ice_field_t *base,
                        int32_t *last, int depth, fl_ice_field_t *f) {
    if (!fl_lake_nested(t)) {
        char buf[64];
        const char *type = fl_lake_type(t, buf, sizeof(buf));
        if (!type) return -1; /* fl_lake_table_check refused it first */
        char *copy = fl_lake_alloc(b, strlen(type) + 1);
        if (!copy) return -1;
        memcpy(copy, type, strlen(type));
        f->type = copy;
        return 0;
    }
    if (depth >= FL_ICE_TYPE_DEPTH_MAX) return -1;
    fl_ice_nested_t *n = fl_lake_alloc(b, sizeof(*n));
    if (!n) return -1;
    f->nested = n;
    if (t->root == FL_TYPE_ARRAY) {
        const fl_ice_field_t *be = fl_lake_base_field(base, FL_ICE_LIST, "element");
        fl_ice_field_t *e = fl_lake_inner(b, "element", t->element, be, last);
        n->kind = FL_ICE_LIST;
        n->element = e;
        return e ? fl_lake_fill(b, t->element, be, last, depth + 1, e) : -1;
    }
    if (t->root == FL_TYPE_MAP) {
        const fl_ice_field_t *bk = fl_lake_base_field(base, FL_ICE_MAP, "key"),
                             *bv = fl_lake_base_field(base, FL_ICE_MAP, "value");
        fl_ice_field_t *k = fl_lake_inner(b, "key", t->key, bk, last);
        fl_ice_field_t *v = k ? fl_lake_inner(b, "value", t->value, bv, last) : NULL;
        n->kind = FL_ICE_MAP;
        n->key = k;
        n->value = v;
        if (!v || fl_lake_fill(b, t->key, bk, last, depth + 1, k)) return -1;
        return fl_lake_fill(b, t->value, bv, last, depth + 1, v);
    }
    fl_ice_field_t *fields = fl_lake_alloc(b, (t->field_count + 1) * sizeof(*fields));
    if (!fields) return -1;
    n->kind = FL_ICE_STRUCT;
    n->fields = fields;
    n->n_fields = t->field_count;
    for (size_t i = 0; i < t->field_count; i++) {
        const fl_row_field_t *rf = &t->fields[i];
        const fl_ice_field_t *bf = fl_lake_base_field(base, FL_ICE_STRUCT, rf->name);
        fields[i] = (fl_ice_field_t){fl_lake_next_id(bf, last), rf->name, !rf->type->nullable,
                                     NULL, rf->description, NULL};
    }
    for (size_t i = 0; i < t->field_count; i++)
        if (fl_lake_fill(b, t->fields[i].type,
                         fl_lake_base_field(base, FL_ICE_STRUCT, t->fields[i].name), last,
                         depth + 1, &fields[i]))
            return -1;
    return 0;
}

/* The column of the lake table's current schema with this name, or NULL. */
static const fl_ice_field_t *fl_lake_column(const fl_ice_schema_t *cur, const char *name) {
    for (size_t i = 0; cur && i < cur->n_fields; i++)
        if (strcmp(cur->fields[i].name, name) == 0) return &cur->fields[i];
    return NULL;
}

static const char *const FL_LAKE_SYS_NAMES[] = {"__bucket", "__offset", "__timestamp"};
static const char *const FL_LAKE_SYS_TYPES[] = {"int", "long", "timestamptz"};

/* The fields of a new lake table for schema s, numbered as the Hadoop
 * catalog's create renumbers the reference's schema (assignFreshIds over
 * the root struct): the columns and then the system columns take 1..n,
 * then the inside of each column's type in column order. */
static int fl_lake_build_new_schema(fl_lake_build_t *b, const fl_schema_t *s, int32_t *last) {
    size_t n = s->column_count + FL_LAKE_SYSTEM_COLUMNS;
    for (size_t i = 0; i < s->column_count; i++) {
        const fl_column_t *col = &s->columns[i];
        b->fields[i] = (fl_ice_field_t){(int32_t)i + 1, col->name, !col->type->nullable, NULL,
                                        col->comment, NULL};
    }
    for (size_t k = 0; k < FL_LAKE_SYSTEM_COLUMNS; k++)
        b->fields[s->column_count + k] = (fl_ice_field_t){
            (int32_t)(s->column_count + k) + 1, FL_LAKE_SYS_NAMES[k], true, FL_LAKE_SYS_TYPES[k],
            NULL, NULL};
    *last = (int32_t)n;
    for (size_t i = 0; i < s->column_count; i++)
        if (fl_lake_fill(b, s->columns[i].type, NULL, last, 0, &b->fields[i])) return -1;
    return 0;
}

/* cur's fields evolved by the columns s added, as the reference's ALTER
 * (SchemaUpdate#addColumn, then moveBefore __bucket): a kept column keeps
 * its ids (inside too); a new one takes last-column-id + 1 and its inside
 * the ids after it, one column after the other; the system columns stay
 * last. */
static int fl_lake_build_evolved_schema(fl_lake_build_t *b, const fl_schema_t *s,
                                        const fl_ice_schema_t *cur, int32_t *last) {
    for (size_t i = 0; i < s->column_count; i++) {
        const fl_column_t *col = &s->columns[i];
        const fl_ice_field_t *base = fl_lake_column(cur, col->name);
        b->fields[i] = (fl_ice_field_t){fl_lake_next_id(base, last), col->name,
                                        !col->type->nullable, NULL, col->comment, NULL};
        if (fl_lake_fill(b, col->type, base, last, 0, &b->fields[i])) return -1;
    }
    for (size_t k = 0; k < FL_LAKE_SYSTEM_COLUMNS; k++)
        b->fields[s->column_count + k] =
            (fl_ice_field_t){fl_lake_next_id(fl_lake_column(cur, FL_LAKE_SYS_NAMES[k]), last),
                             FL_LAKE_SYS_NAMES[k], true, FL_LAKE_SYS_TYPES[k], NULL, NULL};
    return 0;
}

/* The fields of the lake table for schema s: a new table's (cur NULL) or
 * cur's evolved; the primary key as identifier ids. -1: a type with no
 * lake type, too deep, or out of memory. */
static int fl_lake_build_schema(fl_lake_build_t *b, const fl_schema_t *s,
                                const fl_ice_schema_t *cur, int32_t *last) {
    b->fields = fl_calloc(s->column_count + FL_LAKE_SYSTEM_COLUMNS, sizeof(*b->fields));
    if (cur ? fl_lake_build_evolved_schema(b, s, cur, last) : fl_lake_build_new_schema(b, s, last))
        return -1;
    if (s->has_primary_key) {
        b->identifier = fl_calloc(s->primary_key.count + 1, sizeof(int32_t));
        for (size_t i = 0; i < s->primary_key.count; i++) {
            int idx = fl_schema_column_index(s, s->primary_key.items[i]);
            if (idx >= 0) b->identifier[b->n_identifier++] = b->fields[idx].id;
        }
    }
    return 0;
}

static void fl_lake_spec_field(fl_lake_build_t *b, int32_t source, const char *name,
                               fl_ice_transform_t tr, int32_t buckets, fl_ice_type_t type) {
    size_t i = b->n_spec++;
    snprintf(b->spec_names[i], sizeof(b->spec_names[i]), "%s", name);
    b->spec_fields[i] = (fl_ice_partition_field_t){b->spec_names[i], source, 1000 + (int32_t)i, tr,
                                                   buckets, type};
}

static int fl_lake_build_spec(fl_lake_build_t *b, const fl_table_desc_t *d, fl_error_t *err) {
    const fl_schema_t *s = &d->schema;
    if (d->partition_keys.count + 1 > FL_ICE_PARTITION_FIELDS_MAX)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "too many partition keys for a lake table");
    for (size_t i = 0; i < d->partition_keys.count; i++)
        fl_lake_spec_field(b, fl_lake_field_id(s, d->partition_keys.items[i]),
                           d->partition_keys.items[i], FL_ICE_IDENTITY, 0, FL_ICE_STRING);
    if (d->bucket_keys.count > 0) {
        char name[256];
        snprintf(name, sizeof(name), "%s_bucket", d->bucket_keys.items[0]);
        fl_lake_spec_field(b, fl_lake_field_id(s, d->bucket_keys.items[0]), name, FL_ICE_BUCKET,
                           d->bucket_count, FL_ICE_INT);
    } else {
        fl_lake_spec_field(b, (int32_t)s->column_count + 1, "__bucket", FL_ICE_IDENTITY, 0,
                           FL_ICE_INT);
    }
    return 0;
}

static int fl_lake_build_props(fl_lake_build_t *b, const fl_table_desc_t *d, int64_t table_id,
                               char *id_text, size_t id_cap, fl_error_t *err) {
    int rc = fl_lake_prop(b, "write.parquet.compression-codec", false, "zstd", err);
    if (d->schema.has_primary_key) {
        static const char *const modes[] = {"write.delete.mode", "write.update.mode",
                                            "write.merge.mode"};
        for (size_t i = 0; i < 3 && !rc; i++) rc = fl_lake_prop(b, modes[i], false, "merge-on-read", err);
    }
    const fl_kvlist_t *lists[] = {&d->properties, &d->custom_properties};
    for (size_t l = 0; l < 2 && !rc; l++)
        for (size_t i = 0; i < lists[l]->count && !rc; i++) {
            const char *k = lists[l]->items[i].key;
            /* Iceberg keeps these out of properties (its reserved keys) */
            if (strcmp(k, "iceberg.format-version") == 0) continue;
            rc = fl_lake_prop(b, k, true, lists[l]->items[i].value, err);
        }
    snprintf(id_text, id_cap, "%" PRId64, table_id);
    if (!rc) rc = fl_lake_prop(b, "fluss.table-id", false, id_text, err);
    return rc;
}

int fl_lake_table_create(const fl_lake_config_t *c, const char *db, const char *name,
                         int64_t table_id, const fl_table_desc_t *d, fl_error_t *err) {
    char dir[4096 + 512];
    if (!fl_lake_table_dir(c, db, name, dir, sizeof(dir)))
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION, "the lake table's path is too long");
    int rc = fl_lake_table_check(d, c, err);
    if (rc) return rc;
    fl_lake_build_t *b = fl_lake_build_new();
    char id_text[32];
    int32_t last_column_id = 0;
    if (fl_lake_build_schema(b, &d->schema, NULL, &last_column_id)) {
        rc = fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                        "a column type has no lake type, nests too deep, or memory ran out");
        goto done;
    }
    if ((rc = fl_lake_build_spec(b, d, err))) goto done;
    if ((rc = fl_lake_build_props(b, d, table_id, id_text, sizeof(id_text), err))) goto done;

    fl_ice_schema_t schema = {0, b->fields, d->schema.column_count + FL_LAKE_SYSTEM_COLUMNS,
                              b->identifier, b->n_identifier};
    fl_ice_partition_spec_t spec = {0, b->spec_fields, b->n_spec};
    fl_ice_sort_field_t by_offset = {(int32_t)d->schema.column_count + 2, false, false};
    fl_ice_sort_order_t order = {1, &by_offset, 1};
    char location[sizeof(dir) + 16];
    snprintf(location, sizeof(location), "file://%s", dir);
    fl_ice_table_meta_t m;
    memset(&m, 0, sizeof(m));
    fl_uuid_random(m.table_uuid);
    m.location = location;
    m.last_sequence_number = 0;
    m.last_updated_ms = fl_time_wall_ms();
    m.last_column_id = last_column_id;
    m.schemas = &schema;
    m.n_schemas = 1;
    m.current_schema_id = 0;
    m.specs = &spec;
    m.n_specs = 1;
    m.default_spec_id = 0;
    m.last_partition_id = 999 + (int32_t)b->n_spec;
    m.sort_orders = &order;
    m.n_sort_orders = 1;
    m.default_sort_order_id = 1;
    m.properties = b->props;
    m.n_properties = b->n_props;
    m.current_snapshot_id = FL_ICE_NONE;
    rc = fl_ice_table_create(dir, &m, err);
    if (rc == FLUSS_ERR__CONFLICT)
        rc = fl_err_set(err, FLUSS_ERR_LAKE_TABLE_ALREADY_EXIST, "Table %s.%s already exists.", db,
                        name);
done:
    fl_lake_build_destroy(b);
    return rc;
}

int fl_lake_table_open_or_create(const fl_lake_config_t *c, const char *db, const char *name,
                                 int64_t table_id, const fl_table_desc_t *d, fl_error_t *err) {
    int rc = fl_lake_table_create(c, db, name, table_id, d, err);
    if (rc != FLUSS_ERR_LAKE_TABLE_ALREADY_EXIST) return rc;
    char dir[4096 + 512];
    fl_ice_table_head_t h;
    fl_ice_table_head_init(&h);
    fl_error_t e;
    fl_err_clear(&e);
    bool ours = fl_lake_table_dir(c, db, name, dir, sizeof(dir)) &&
                fl_ice_table_load(dir, &h, &e) == 0 && fl_lake_table_is_of(&h.meta.meta, table_id);
    fl_ice_table_head_reset(&h);
    if (!ours) return rc;
    fl_err_clear(err);
    return 0;
}

/* ---- ALTER TABLE ---- */

static bool fl_lake_props_equal(const fl_ice_prop_t *a, size_t na, const fl_ice_prop_t *b,
                                size_t nb) {
    if (na != nb) return false;
    for (size_t i = 0; i < na; i++) {
        bool found = false;
        for (size_t k = 0; k < nb && !found; k++)
            found = strcmp(a[i].key, b[k].key) == 0 && strcmp(a[i].value, b[k].value) == 0;
        if (!found) return false;
    }
    return true;
}

static bool fl_lake_fields_equal(const fl_ice_schema_t *cur, const fl_ice_field_t *f, size_t n) {
    if (cur->n_fields != n) return false;
    for (size_t i = 0; i < n; i++)
        if (!fl_ice_field_same(&cur->fields[i], &f[i])) return false;
    return true;
}

bool fl_lake_table_is_of(const fl_ice_table_meta_t *m, int64_t table_id) {
    char want[32];
    snprintf(want, sizeof(want), "%" PRId64, table_id);
    for (size_t i = 0; i < m->n_properties; i++)
        if (strcmp(m->properties[i].key, "fluss.table-id") == 0)
            return strcmp(m->properties[i].value, want) == 0;
    return false;
}

/* One attempt: 0 done (or nothing to do), CONFLICT to retry. */
static int fl_lake_sync_once(const char *dir, const char *db, const char *name, int64_t table_id,
                             const fl_table_desc_t *d, bool must_exist, fl_error_t *err) {
    fl_ice_table_head_t h;
    fl_ice_table_head_init(&h);
    fl_ice_meta_read_t evolved;
    fl_ice_meta_read_init(&evolved);
    fl_lake_build_t *b = fl_lake_build_new();
    fl_ice_metadata_log_t *log = NULL;
    int rc = fl_ice_table_load(dir, &h, err);
    if (rc == FLUSS_ERR_TABLE_NOT_EXIST || (!rc && !fl_lake_table_is_of(&h.meta.meta, table_id))) {
        rc = !must_exist ? 0
                         : fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                                      "Lake table doesn't exist for lake-enabled table %s.%s, "
                                      "which shouldn't be happened. Please check if the lake "
                                      "table was deleted manually.",
                                      db, name);
        goto done;
    }
    if (rc) goto done;
    const fl_ice_table_meta_t *base = &h.meta.meta;
    const fl_ice_schema_t *cur = fl_ice_meta_schema(base, base->current_schema_id);
    int32_t last = base->last_column_id;
    char id_text[32];
    if (!cur || fl_lake_build_schema(b, &d->schema, cur, &last)) {
        rc = fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                        "the lake table of %s.%s has no current schema, or a column no lake type",
                        db, name);
        goto done;
    }
    if ((rc = fl_lake_build_props(b, d, table_id, id_text, sizeof(id_text), err))) goto done;
    size_t nf = d->schema.column_count + FL_LAKE_SYSTEM_COLUMNS;
    bool same_schema = fl_lake_fields_equal(cur, b->fields, nf);
    if (same_schema && fl_lake_props_equal(base->properties, base->n_properties, b->props,
                                           b->n_props))
        goto done;
    fl_ice_table_meta_t next = *base;
    if (!same_schema) {
        fl_ice_schema_t schema = {FL_ICE_NO_SCHEMA, b->fields, nf, b->identifier,
                                  b->n_identifier};
        if ((rc = fl_ice_meta_with_schema(base, h.metadata_location, &schema, &evolved, err)))
            goto done;
        next = evolved.meta;
    } else {
        /* a properties-only version: the metadata-log names the base */
        size_t keep = base->n_metadata_log < FL_ICE_METADATA_LOG_DEFAULT
                          ? base->n_metadata_log
                          : FL_ICE_METADATA_LOG_DEFAULT - 1;
        log = fl_calloc(keep + 1, sizeof(*log));
        memcpy(log, base->metadata_log + (base->n_metadata_log - keep), keep * sizeof(*log));
        log[keep] = (fl_ice_metadata_log_t){base->last_updated_ms, h.metadata_location};
        next.metadata_log = log;
        next.n_metadata_log = keep + 1;
        int64_t now = fl_time_wall_ms();
        next.last_updated_ms = now > base->last_updated_ms ? now : base->last_updated_ms;
    }
    next.properties = b->props;
    next.n_properties = b->n_props;
    rc = fl_ice_table_commit(dir, h.version, &next, err);
done:
    fl_free(log);
    fl_lake_build_destroy(b);
    fl_ice_meta_read_reset(&evolved);
    fl_ice_table_head_reset(&h);
    return rc;
}

int fl_lake_table_sync(const fl_lake_config_t *c, const char *db, const char *name,
                       int64_t table_id, const fl_table_desc_t *d, bool must_exist,
                       fl_error_t *err) {
    char dir[4096 + 512];
    if (!fl_lake_config_on(c)) return 0;
    if (!fl_lake_table_dir(c, db, name, dir, sizeof(dir)))
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION, "the lake table's path is too long");
    if (must_exist) {
        int rc = fl_lake_table_check(d, c, err);
        if (rc) return rc;
    }
    /* a tiering commit may take the version we built on: build again */
    int rc = FLUSS_ERR__CONFLICT;
    for (int attempt = 0; attempt < 8 && rc == FLUSS_ERR__CONFLICT; attempt++)
        rc = fl_lake_sync_once(dir, db, name, table_id, d, must_exist, err);
    return rc;
}

/* ---- the ids of a column's tree, for the tiering ---- */

static int fl_lake_ids_of(const fl_datatype_t *t, const fl_ice_field_t *f, const char *column,
                          int depth, int32_t *out, size_t cap, size_t *n, fl_error_t *err) {
    static const fl_ice_nested_kind_t KIND[] = {[FL_TYPE_ARRAY] = FL_ICE_LIST,
                                                [FL_TYPE_MAP] = FL_ICE_MAP,
                                                [FL_TYPE_ROW] = FL_ICE_STRUCT};
    if (*n >= cap)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "lake column %s: more than %zu fields in its type", column, cap);
    if (depth > FL_ICE_TYPE_DEPTH_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "lake column %s nests too deep", column);
    out[(*n)++] = f->id;
    if (!fl_lake_nested(t)) {
        char buf[64];
        fl_ice_type_info_t want, have;
        const char *type = fl_lake_type(t, buf, sizeof(buf));
        if (f->nested || !type || !fl_ice_type_parse(type, &want) ||
            !fl_ice_type_parse(f->type, &have) || memcmp(&want, &have, sizeof(want)) != 0)
            return fl_err_set(err, FLUSS_ERR__STATE,
                              "lake column %s: field %" PRId32 " is not the %s of the Fluss "
                              "column's type (a type changed under the lake)",
                              column, f->id, type ? type : fl_type_root_json_name(t->root));
        return 0;
    }
    const fl_ice_nested_t *nt = f->nested;
    bool same = nt && nt->kind == KIND[t->root];
    if (same && t->root == FL_TYPE_ROW) {
        same = nt->n_fields == t->field_count;
        for (size_t i = 0; same && i < t->field_count; i++)
            same = strcmp(nt->fields[i].name, t->fields[i].name) == 0;
    }
    if (!same)
        return fl_err_set(err, FLUSS_ERR__STATE,
                          "lake column %s: field %" PRId32 " does not have the shape of the "
                          "Fluss column's %s (a type changed under the lake)",
                          column, f->id, fl_type_root_json_name(t->root));
    int rc = 0;
    if (t->root == FL_TYPE_ARRAY)
        return fl_lake_ids_of(t->element, nt->element, column, depth + 1, out, cap, n, err);
    if (t->root == FL_TYPE_MAP) {
        rc = fl_lake_ids_of(t->key, nt->key, column, depth + 1, out, cap, n, err);
        return rc ? rc : fl_lake_ids_of(t->value, nt->value, column, depth + 1, out, cap, n, err);
    }
    for (size_t i = 0; i < t->field_count && !rc; i++)
        rc = fl_lake_ids_of(t->fields[i].type, &nt->fields[i], column, depth + 1, out, cap, n, err);
    return rc;
}

int fl_lake_column_ids(const fl_datatype_t *t, const fl_ice_field_t *f, int32_t *out, size_t cap,
                       size_t *n, fl_error_t *err) {
    return fl_lake_ids_of(t, f, f->name ? f->name : "?", 0, out, cap, n, err);
}
