/*
 * lake_iceberg_meta_json.c — writing Iceberg v2 table metadata JSON
 * (lake_iceberg_table.h; the specification's Appendix C): the rules are
 * checked first (lake_iceberg_meta_check.c), then a jansson tree is built
 * in the key order Java writes and dumped compact into the caller's
 * buffer. Thread rule: none.
 */
#include <jansson.h>
#include <string.h>

#include "lake_iceberg_meta_int.h"

/* A tree being built. jansson refuses strings that are not UTF-8
 * (json_string gives NULL): the first such key is remembered and the
 * whole encode refused, rather than a file no reader parses. */
typedef struct jb {
    const char *bad_key;
} jb_t;

static void put(jb_t *b, json_t *o, const char *key, json_t *v) {
    if (!v && !b->bad_key) b->bad_key = key;
    json_object_set_new(o, key, v); /* a NULL v is refused, nothing leaks */
}

static void put_str(jb_t *b, json_t *o, const char *key, const char *s) {
    put(b, o, key, json_string(s));
}

static void put_int(jb_t *b, json_t *o, const char *key, int64_t v) {
    put(b, o, key, json_integer((json_int_t)v));
}

static json_t *props_json(jb_t *b, const fl_ice_prop_t *p, size_t n, const char *what) {
    json_t *o = json_object();
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_string(p[i].value);
        if (!v && !b->bad_key) b->bad_key = what;
        /* a key that is not UTF-8 makes set_new fail and free v */
        if (json_object_set_new(o, p[i].key, v) && !b->bad_key) b->bad_key = what;
    }
    return o;
}

static json_t *field_json(jb_t *b, const fl_ice_field_t *f);

/* A field's type: its canonical primitive spelling, or a nested object in
 * the key order Java writes. */
static json_t *type_json(jb_t *b, const fl_ice_field_t *f) {
    if (!f->nested) {
        fl_ice_type_info_t t;
        char type[48];
        fl_ice_type_parse(f->type, &t); /* checked */
        fl_ice_type_format(&t, type, sizeof(type));
        return json_string(type);
    }
    const fl_ice_nested_t *n = f->nested;
    json_t *o = json_object();
    switch (n->kind) {
    case FL_ICE_STRUCT: {
        json_t *fields = json_array();
        put_str(b, o, "type", "struct");
        for (size_t i = 0; i < n->n_fields; i++)
            json_array_append_new(fields, field_json(b, &n->fields[i]));
        put(b, o, "fields", fields);
        break;
    }
    case FL_ICE_LIST:
        put_str(b, o, "type", "list");
        put_int(b, o, "element-id", n->element->id);
        put(b, o, "element", type_json(b, n->element));
        put(b, o, "element-required", json_boolean(n->element->required));
        break;
    case FL_ICE_MAP:
        put_str(b, o, "type", "map");
        put_int(b, o, "key-id", n->key->id);
        put(b, o, "key", type_json(b, n->key));
        put_int(b, o, "value-id", n->value->id);
        put(b, o, "value", type_json(b, n->value));
        put(b, o, "value-required", json_boolean(n->value->required));
        break;
    }
    return o;
}

static json_t *field_json(jb_t *b, const fl_ice_field_t *f) {
    json_t *o = json_object();
    put_int(b, o, "id", f->id);
    put_str(b, o, "name", f->name);
    put(b, o, "required", json_boolean(f->required));
    put(b, o, "type", type_json(b, f));
    if (f->doc) put_str(b, o, "doc", f->doc);
    return o;
}

static json_t *schema_json(jb_t *b, const fl_ice_schema_t *s) {
    json_t *o = json_object(), *ids = json_array(), *fields = json_array();
    put_str(b, o, "type", "struct");
    put_int(b, o, "schema-id", s->schema_id);
    for (size_t i = 0; i < s->n_identifier_ids; i++)
        json_array_append_new(ids, json_integer(s->identifier_ids[i]));
    put(b, o, "identifier-field-ids", ids);
    for (size_t i = 0; i < s->n_fields; i++) json_array_append_new(fields, field_json(b, &s->fields[i]));
    put(b, o, "fields", fields);
    return o;
}

static json_t *spec_json(jb_t *b, const fl_ice_partition_spec_t *s) {
    json_t *o = json_object(), *fields = json_array();
    put_int(b, o, "spec-id", s->spec_id);
    for (size_t i = 0; i < s->n_fields; i++) {
        const fl_ice_partition_field_t *f = &s->fields[i];
        char transform[32];
        if (f->transform == FL_ICE_BUCKET)
            snprintf(transform, sizeof(transform), "bucket[%d]", (int)f->buckets);
        else
            strcpy(transform, "identity");
        json_t *fo = json_object();
        put_str(b, fo, "name", f->name);
        put_str(b, fo, "transform", transform);
        put_int(b, fo, "source-id", f->source_id);
        put_int(b, fo, "field-id", f->field_id);
        json_array_append_new(fields, fo);
    }
    put(b, o, "fields", fields);
    return o;
}

static json_t *sort_order_json(jb_t *b, const fl_ice_sort_order_t *s) {
    json_t *o = json_object(), *fields = json_array();
    put_int(b, o, "order-id", s->order_id);
    for (size_t i = 0; i < s->n_fields; i++) {
        const fl_ice_sort_field_t *f = &s->fields[i];
        json_t *fo = json_object();
        put_str(b, fo, "transform", "identity");
        put_int(b, fo, "source-id", f->source_id);
        put_str(b, fo, "direction", f->descending ? "desc" : "asc");
        put_str(b, fo, "null-order", f->nulls_last ? "nulls-last" : "nulls-first");
        json_array_append_new(fields, fo);
    }
    put(b, o, "fields", fields);
    return o;
}

static json_t *snapshot_json(jb_t *b, const fl_ice_snapshot_t *s) {
    json_t *o = json_object();
    put_int(b, o, "snapshot-id", s->snapshot_id);
    if (s->parent_snapshot_id != FL_ICE_NONE) put_int(b, o, "parent-snapshot-id", s->parent_snapshot_id);
    put_int(b, o, "sequence-number", s->sequence_number);
    put_int(b, o, "timestamp-ms", s->timestamp_ms);
    put_str(b, o, "manifest-list", s->manifest_list);
    put(b, o, "summary", props_json(b, s->summary, s->n_summary, "summary"));
    if (s->schema_id != FL_ICE_NO_SCHEMA) put_int(b, o, "schema-id", s->schema_id);
    return o;
}

static json_t *refs_json(jb_t *b, const fl_ice_table_meta_t *m) {
    json_t *refs = json_object();
    if (m->current_snapshot_id == FL_ICE_NONE) return refs;
    json_t *main = json_object();
    put_int(b, main, "snapshot-id", m->current_snapshot_id);
    put_str(b, main, "type", "branch");
    put(b, refs, "main", main);
    return refs;
}

static json_t *logs_json(jb_t *b, const fl_ice_table_meta_t *m, bool metadata) {
    json_t *a = json_array();
    size_t n = metadata ? m->n_metadata_log : m->n_snapshot_log;
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        if (metadata) {
            put_str(b, o, "metadata-file", m->metadata_log[i].metadata_file);
            put_int(b, o, "timestamp-ms", m->metadata_log[i].timestamp_ms);
        } else {
            put_int(b, o, "snapshot-id", m->snapshot_log[i].snapshot_id);
            put_int(b, o, "timestamp-ms", m->snapshot_log[i].timestamp_ms);
        }
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *list_json(jb_t *b, size_t n, json_t *(*one)(jb_t *, const void *), const void *arr,
                         size_t size) {
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(a, one(b, (const char *)arr + i * size));
    return a;
}

static json_t *one_schema(jb_t *b, const void *p) { return schema_json(b, p); }
static json_t *one_spec(jb_t *b, const void *p) { return spec_json(b, p); }
static json_t *one_order(jb_t *b, const void *p) { return sort_order_json(b, p); }
static json_t *one_snapshot(jb_t *b, const void *p) { return snapshot_json(b, p); }

static json_t *meta_json(jb_t *b, const fl_ice_table_meta_t *m) {
    json_t *o = json_object();
    put_int(b, o, "format-version", 2);
    put_str(b, o, "table-uuid", m->table_uuid);
    put_str(b, o, "location", m->location);
    put_int(b, o, "last-sequence-number", m->last_sequence_number);
    put_int(b, o, "last-updated-ms", m->last_updated_ms);
    put_int(b, o, "last-column-id", m->last_column_id);
    put_int(b, o, "current-schema-id", m->current_schema_id);
    put(b, o, "schemas", list_json(b, m->n_schemas, one_schema, m->schemas, sizeof(*m->schemas)));
    put_int(b, o, "default-spec-id", m->default_spec_id);
    put(b, o, "partition-specs", list_json(b, m->n_specs, one_spec, m->specs, sizeof(*m->specs)));
    put_int(b, o, "last-partition-id", m->last_partition_id);
    put_int(b, o, "default-sort-order-id", m->default_sort_order_id);
    put(b, o, "sort-orders",
        list_json(b, m->n_sort_orders, one_order, m->sort_orders, sizeof(*m->sort_orders)));
    put(b, o, "properties", props_json(b, m->properties, m->n_properties, "properties"));
    /* -1 for none: what Java writes for v2 (Appendix F); every reader takes it */
    put_int(b, o, "current-snapshot-id", m->current_snapshot_id);
    put(b, o, "refs", refs_json(b, m));
    put(b, o, "snapshots",
        list_json(b, m->n_snapshots, one_snapshot, m->snapshots, sizeof(*m->snapshots)));
    put(b, o, "snapshot-log", logs_json(b, m, false));
    put(b, o, "metadata-log", logs_json(b, m, true));
    return o;
}

static int dump_cb(const char *p, size_t n, void *data) {
    fl_buf_append(data, p, n);
    return 0;
}

/* Dumps a built tree into out, or refuses it whole. */
static int finish(json_t *root, const jb_t *b, fl_buf_t *out, fl_error_t *err) {
    int rc = 0;
    size_t start = out->len;
    if (b->bad_key)
        rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "metadata: a string in \"%s\" is not UTF-8",
                        b->bad_key);
    else if (json_dump_callback(root, dump_cb, out, JSON_COMPACT) != 0)
        rc = fl_err_set(err, FLUSS_ERR__NO_MEMORY, "metadata: JSON output failed");
    if (rc) out->len = start;
    json_decref(root);
    return rc;
}

int fl_ice_meta_encode(const fl_ice_table_meta_t *m, fl_buf_t *out, fl_error_t *err) {
    if (fl_ice_meta_check(m, FLUSS_ERR__INVALID_ARG, err)) return FLUSS_ERR__INVALID_ARG;
    jb_t b = {0};
    return finish(meta_json(&b, m), &b, out, err);
}

int fl_ice_schema_encode(const fl_ice_schema_t *s, fl_buf_t *out, fl_error_t *err) {
    if (fl_ice_schema_check(s, FL_ICE_FIELD_ID_MAX, "schema", FLUSS_ERR__INVALID_ARG, err))
        return FLUSS_ERR__INVALID_ARG;
    jb_t b = {0};
    return finish(schema_json(&b, s), &b, out, err);
}
