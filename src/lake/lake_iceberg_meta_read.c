/*
 * lake_iceberg_meta_read.c — reading Iceberg v2 table metadata JSON
 * (lake_iceberg_table.h) from bytes of a file: untrusted. jansson parses
 * (duplicate keys refused, NULs in strings refused, its own depth bound);
 * then every key we keep is looked up, its JSON type checked, every list
 * bounded before its array is sized, and everything copied into the
 * result's arena; unknown keys are skipped. Nested types (struct, list,
 * map) recurse at most FL_ICE_TYPE_DEPTH_MAX deep, and a schema's fields
 * at all depths are counted against FL_ICE_SCHEMA_NODES_MAX as they are
 * read. The rules shared with the encoder run last
 * (lake_iceberg_meta_check.c), as CORRUPT. Messages name the key's path
 * ("snapshots[3].summary.operation", "schemas[0].fields[2].type.key-id").
 * Thread rule: none.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "common_uuid.h"
#include "lake_iceberg_meta_int.h"

typedef struct rd {
    fl_avro_arena_t *a;
    fl_error_t *err;
    size_t nodes; /* fields read in the schema being read, at every depth */
} rd_t;

/* A path too long for its buffer (keys are the file's: any length)
 * ends in "..." rather than silently. */
static const char *mark_cut(char *buf, size_t n, int written) {
    if (written >= 0 && (size_t)written >= n && n >= 4) memcpy(buf + n - 4, "...", 4);
    return buf;
}

/* "where.key" (or "key" at the top, "where" for no key) into buf. */
static const char *path(char *buf, size_t n, const char *where, const char *key) {
    return mark_cut(buf, n, snprintf(buf, n, "%s%s%s", where, *where && *key ? "." : "", key));
}

static int corrupt(rd_t *r, const char *where, const char *key, const char *what) {
    char p[160];
    return fl_err_set(r->err, FLUSS_ERR__CORRUPT, "metadata: %s %s", path(p, sizeof(p), where, key),
                      what);
}

static int no_memory(rd_t *r) {
    return fl_err_set(r->err, FLUSS_ERR__NO_MEMORY, "metadata: out of memory");
}

/* The key's value, NULL for an absent or null one (CORRUPT if required). */
static int get(rd_t *r, const json_t *o, const char *where, const char *key, bool required,
               json_t **out) {
    *out = json_object_get(o, key);
    if (json_is_null(*out)) *out = NULL;
    return !*out && required ? corrupt(r, where, key, "missing") : 0;
}

static int get_int(rd_t *r, const json_t *o, const char *where, const char *key, bool required,
                   int64_t min, int64_t max, int64_t none, int64_t *out) {
    json_t *v;
    *out = none;
    if (get(r, o, where, key, required, &v)) return FLUSS_ERR__CORRUPT;
    if (!v) return 0;
    if (!json_is_integer(v)) return corrupt(r, where, key, "is not an integer");
    json_int_t x = json_integer_value(v);
    if (x < min || x > max) {
        char p[160];
        return fl_err_set(r->err, FLUSS_ERR__CORRUPT,
                          "metadata: %s %lld out of range [%" PRId64 ", %" PRId64 "]",
                          path(p, sizeof(p), where, key), (long long)x, min, max);
    }
    *out = x;
    return 0;
}

static int get_i32(rd_t *r, const json_t *o, const char *where, const char *key, bool required,
                   int32_t min, int32_t none, int32_t *out) {
    int64_t v;
    int rc = get_int(r, o, where, key, required, min, INT32_MAX, none, &v);
    *out = (int32_t)v;
    return rc;
}

/* A string copied into the arena; NULL for an absent optional one. */
static int get_str(rd_t *r, const json_t *o, const char *where, const char *key, bool required,
                   const char **out) {
    json_t *v;
    *out = NULL;
    if (get(r, o, where, key, required, &v)) return FLUSS_ERR__CORRUPT;
    if (!v) return 0;
    if (!json_is_string(v)) return corrupt(r, where, key, "is not a string");
    *out = fl_ice_arena_strndup(r->a, json_string_value(v), json_string_length(v));
    return *out ? 0 : no_memory(r);
}

static int get_bool(rd_t *r, const json_t *o, const char *where, const char *key, bool *out) {
    json_t *v;
    if (get(r, o, where, key, true, &v)) return FLUSS_ERR__CORRUPT;
    if (!json_is_boolean(v)) return corrupt(r, where, key, "is not a boolean");
    *out = json_is_true(v);
    return 0;
}

/* An array of at most max items, and room for them (size bytes each) in
 * the arena; *a NULL and *n 0 for an absent optional one. */
static int get_array(rd_t *r, const json_t *o, const char *where, const char *key, bool required,
                     size_t max, size_t size, json_t **a, void **items, size_t *n) {
    *a = NULL;
    *items = NULL;
    *n = 0;
    if (get(r, o, where, key, required, a)) return FLUSS_ERR__CORRUPT;
    if (!*a) return 0;
    if (!json_is_array(*a)) return corrupt(r, where, key, "is not an array");
    *n = json_array_size(*a);
    if (*n > max) {
        char p[160];
        return fl_err_set(r->err, FLUSS_ERR__CORRUPT, "metadata: %s has %zu entries (at most %zu)",
                          path(p, sizeof(p), where, key), *n, max);
    }
    *items = fl_ice_arena_alloc(r->a, *n * size);
    return *items ? 0 : no_memory(r);
}

/* Item i of array a as an object, its path "where.key[i]" in buf. */
static int item(rd_t *r, json_t *a, size_t i, const char *where, const char *key, char *buf,
                size_t n, json_t **out) {
    char p[160];
    mark_cut(buf, n, snprintf(buf, n, "%s[%zu]", path(p, sizeof(p), where, key), i));
    *out = json_array_get(a, i);
    return json_is_object(*out) ? 0 : corrupt(r, buf, "", "is not an object");
}

/* A string-to-string map ("properties", a snapshot's "summary"). */
static int get_props(rd_t *r, const json_t *o, const char *where, const char *key, bool required,
                     const fl_ice_prop_t **out, size_t *n_out) {
    json_t *m;
    *out = NULL;
    *n_out = 0;
    if (get(r, o, where, key, required, &m)) return FLUSS_ERR__CORRUPT;
    if (!m) return 0;
    if (!json_is_object(m)) return corrupt(r, where, key, "is not an object");
    size_t n = json_object_size(m), i = 0;
    if (n > FL_ICE_PROPS_MAX) {
        char p[160];
        return fl_err_set(r->err, FLUSS_ERR__CORRUPT, "metadata: %s has %zu entries (at most %d)",
                          path(p, sizeof(p), where, key), n, FL_ICE_PROPS_MAX);
    }
    fl_ice_prop_t *p = fl_ice_arena_alloc(r->a, n * sizeof(*p));
    if (!p) return no_memory(r);
    const char *k;
    json_t *v;
    json_object_foreach(m, k, v) {
        char kp[160];
        if (!json_is_string(v)) return corrupt(r, path(kp, sizeof(kp), where, key), k, "is not a string");
        p[i].key = fl_ice_arena_strndup(r->a, k, strlen(k));
        p[i].value = fl_ice_arena_strndup(r->a, json_string_value(v), json_string_length(v));
        if (!p[i].key || !p[i].value) return no_memory(r);
        i++;
    }
    *out = p;
    *n_out = n;
    return 0;
}

/* ---- schemas ---- */

static int read_field(rd_t *r, const json_t *fo, const char *where, int depth,
                      fl_ice_field_t *f);
static int read_nested(rd_t *r, const json_t *t, const char *where, int depth,
                       fl_ice_field_t *f);

/* A primitive type string, canonical, into f->type. */
static int read_primitive(rd_t *r, const json_t *t, const char *where, const char *key,
                          fl_ice_field_t *f) {
    char p[160];
    fl_ice_type_info_t info;
    if (!fl_ice_type_parse(json_string_value(t), &info))
        return fl_err_set(r->err, FLUSS_ERR__INVALID_ARG,
                          "metadata: %s \"%s\" not supported (v2 primitive types only)",
                          path(p, sizeof(p), where, key), json_string_value(t));
    char canon[48];
    fl_ice_type_format(&info, canon, sizeof(canon));
    f->type = fl_ice_arena_strndup(r->a, canon, strlen(canon));
    return f->type ? 0 : no_memory(r);
}

/* One more field in this schema: at most FL_ICE_SCHEMA_NODES_MAX, so
 * that no file sizes the walks of its schemas. */
static int count_node(rd_t *r, const char *where) {
    if (++r->nodes <= FL_ICE_SCHEMA_NODES_MAX) return 0;
    return fl_err_set(r->err, FLUSS_ERR__CORRUPT,
                      "metadata: %s: more than %d fields at all depths in the schema", where,
                      FL_ICE_SCHEMA_NODES_MAX);
}

/* A list's element, a map's key or value: the field named `name`, its id
 * at "<name>-id", its type at "<name>", required by "<name>-required"
 * (a key: always). */
static int read_inner(rd_t *r, const json_t *to, const char *where, const char *name,
                      int depth, const fl_ice_field_t **out) {
    char k_id[16], k_req[24], w[224];
    snprintf(k_id, sizeof(k_id), "%s-id", name);
    snprintf(k_req, sizeof(k_req), "%s-required", name);
    fl_ice_field_t *f = fl_ice_arena_alloc(r->a, sizeof(*f));
    if (!f || !(f->name = fl_ice_arena_strndup(r->a, name, strlen(name)))) return no_memory(r);
    f->required = true;
    if (get_i32(r, to, where, k_id, true, 0, 0, &f->id) || count_node(r, where) ||
        (strcmp(name, "key") && get_bool(r, to, where, k_req, &f->required)))
        return r->err->code;
    json_t *t;
    if (get(r, to, where, name, true, &t)) return FLUSS_ERR__CORRUPT;
    path(w, sizeof(w), where, name);
    *out = f;
    if (json_is_string(t)) return read_primitive(r, t, where, name, f);
    return read_nested(r, t, w, depth, f);
}

/* A nested type object at `where` (a field's "type", an element's ...)
 * into f->nested; its fields are at depth + 1. */
static int read_nested(rd_t *r, const json_t *t, const char *where, int depth,
                       fl_ice_field_t *f) {
    const char *kind;
    if (!json_is_object(t)) return corrupt(r, where, "", "is not a string or an object");
    if (depth + 1 > FL_ICE_TYPE_DEPTH_MAX)
        return fl_err_set(r->err, FLUSS_ERR__CORRUPT, "metadata: %s nests deeper than %d", where,
                          FL_ICE_TYPE_DEPTH_MAX);
    if (get_str(r, t, where, "type", true, &kind)) return r->err->code;
    fl_ice_nested_t *n = fl_ice_arena_alloc(r->a, sizeof(*n));
    if (!n) return no_memory(r);
    f->nested = n;
    if (!strcmp(kind, "list")) {
        n->kind = FL_ICE_LIST;
        return read_inner(r, t, where, "element", depth + 1, &n->element);
    }
    if (!strcmp(kind, "map")) {
        n->kind = FL_ICE_MAP;
        if (read_inner(r, t, where, "key", depth + 1, &n->key)) return r->err->code;
        return read_inner(r, t, where, "value", depth + 1, &n->value);
    }
    if (strcmp(kind, "struct")) return corrupt(r, where, "type", "is not struct, list or map");
    n->kind = FL_ICE_STRUCT;
    json_t *a, *fo;
    void *items;
    char w[224];
    if (get_array(r, t, where, "fields", true, FL_ICE_SCHEMA_FIELDS_MAX, sizeof(fl_ice_field_t),
                  &a, &items, &n->n_fields))
        return r->err->code;
    fl_ice_field_t *fields = items;
    for (size_t i = 0; i < n->n_fields; i++)
        if (item(r, a, i, where, "fields", w, sizeof(w), &fo) ||
            read_field(r, fo, w, depth + 1, &fields[i]))
            return r->err->code;
    n->fields = fields;
    return 0;
}

static int read_type(rd_t *r, const json_t *fo, const char *where, int depth, fl_ice_field_t *f) {
    json_t *t;
    char w[224];
    if (get(r, fo, where, "type", true, &t)) return FLUSS_ERR__CORRUPT;
    if (json_is_string(t)) return read_primitive(r, t, where, "type", f);
    if (!json_is_object(t)) return corrupt(r, where, "type", "is not a string or an object");
    return read_nested(r, t, path(w, sizeof(w), where, "type"), depth, f);
}

static int read_field(rd_t *r, const json_t *fo, const char *where, int depth,
                      fl_ice_field_t *f) {
    if (get_i32(r, fo, where, "id", true, 0, 0, &f->id) || count_node(r, where) ||
        get_str(r, fo, where, "name", true, &f->name) ||
        get_bool(r, fo, where, "required", &f->required) || read_type(r, fo, where, depth, f) ||
        get_str(r, fo, where, "doc", false, &f->doc))
        return r->err->code;
    return 0;
}

static int read_schema(rd_t *r, const json_t *so, const char *where, fl_ice_schema_t *s) {
    json_t *a;
    void *items;
    const char *type;
    char w[192];
    r->nodes = 0;
    if (get_str(r, so, where, "type", true, &type)) return FLUSS_ERR__CORRUPT;
    if (strcmp(type, "struct")) return corrupt(r, where, "type", "is not \"struct\"");
    if (get_i32(r, so, where, "schema-id", true, 0, 0, &s->schema_id)) return FLUSS_ERR__CORRUPT;
    if (get_array(r, so, where, "identifier-field-ids", false, FL_ICE_SCHEMA_FIELDS_MAX,
                  sizeof(int32_t), &a, &items, &s->n_identifier_ids))
        return r->err->code;
    int32_t *ids = items;
    for (size_t i = 0; i < s->n_identifier_ids; i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > INT32_MAX)
            return corrupt(r, where, "identifier-field-ids", "holds a bad id");
        ids[i] = (int32_t)json_integer_value(v);
    }
    s->identifier_ids = ids;
    if (get_array(r, so, where, "fields", true, FL_ICE_SCHEMA_FIELDS_MAX, sizeof(fl_ice_field_t),
                  &a, &items, &s->n_fields))
        return r->err->code;
    fl_ice_field_t *fields = items;
    for (size_t i = 0; i < s->n_fields; i++) {
        json_t *fo;
        if (item(r, a, i, where, "fields", w, sizeof(w), &fo) ||
            read_field(r, fo, w, 0, &fields[i]))
            return r->err->code;
    }
    s->fields = fields;
    return 0;
}

static int read_schemas(rd_t *r, const json_t *root, fl_ice_table_meta_t *m) {
    json_t *a, *so;
    void *items;
    char w[64];
    if (get_array(r, root, "", "schemas", true, FL_ICE_SCHEMAS_MAX, sizeof(fl_ice_schema_t), &a,
                  &items, &m->n_schemas))
        return r->err->code;
    fl_ice_schema_t *s = items;
    for (size_t i = 0; i < m->n_schemas; i++)
        if (item(r, a, i, "", "schemas", w, sizeof(w), &so) || read_schema(r, so, w, &s[i]))
            return r->err->code;
    m->schemas = s;
    return 0;
}

/* ---- partition specs ---- */

/* "bucket[N]", N > 0, nothing after. */
static bool parse_bucket(const char *t, int32_t *n) {
    if (strncmp(t, "bucket[", 7)) return false;
    int64_t v = 0;
    const char *p = t + 7;
    for (; *p >= '0' && *p <= '9' && v <= INT32_MAX; p++) v = v * 10 + (*p - '0');
    if (p == t + 7 || strcmp(p, "]") || v <= 0 || v > INT32_MAX) return false;
    *n = (int32_t)v;
    return true;
}

/* The partition value's type, from the source column (schemas read). */
static int spec_field_type(rd_t *r, const fl_ice_table_meta_t *m, const char *where,
                           fl_ice_partition_field_t *f) {
    const fl_ice_field_t *col = fl_ice_meta_column(m, f->source_id);
    fl_ice_type_info_t src;
    if (!col) return corrupt(r, where, "source-id", "names no column");
    if (col->nested) return corrupt(r, where, "source-id", "names a nested column");
    fl_ice_type_parse(col->type, &src);
    if (!fl_ice_partition_value_type(f->transform, f->buckets, &src, &f->type))
        return fl_err_set(r->err, FLUSS_ERR__INVALID_ARG,
                          "metadata: %s: %s over a %s column not supported", where,
                          f->transform == FL_ICE_BUCKET ? "bucket" : "identity", col->type);
    return 0;
}

static int read_spec_field(rd_t *r, const fl_ice_table_meta_t *m, const json_t *fo,
                           const char *where, fl_ice_partition_field_t *f) {
    const char *transform;
    if (get_str(r, fo, where, "name", true, &f->name) ||
        get_str(r, fo, where, "transform", true, &transform) ||
        get_i32(r, fo, where, "source-id", true, 0, 0, &f->source_id) ||
        get_i32(r, fo, where, "field-id", true, 0, 0, &f->field_id))
        return r->err->code;
    if (!strcmp(transform, "identity")) {
        f->transform = FL_ICE_IDENTITY;
    } else if (parse_bucket(transform, &f->buckets)) {
        f->transform = FL_ICE_BUCKET;
    } else {
        return fl_err_set(r->err, FLUSS_ERR__INVALID_ARG,
                          "metadata: %s.transform \"%s\" not supported (identity, bucket[N])",
                          where, transform);
    }
    return spec_field_type(r, m, where, f);
}

static int read_spec(rd_t *r, const fl_ice_table_meta_t *m, const json_t *so, const char *where,
                     fl_ice_partition_spec_t *s) {
    json_t *a, *fo;
    void *items;
    char w[192];
    if (get_i32(r, so, where, "spec-id", true, 0, 0, &s->spec_id) ||
        get_array(r, so, where, "fields", true, FL_ICE_PARTITION_FIELDS_MAX,
                  sizeof(fl_ice_partition_field_t), &a, &items, &s->n_fields))
        return r->err->code;
    fl_ice_partition_field_t *f = items;
    for (size_t i = 0; i < s->n_fields; i++)
        if (item(r, a, i, where, "fields", w, sizeof(w), &fo) ||
            read_spec_field(r, m, fo, w, &f[i]))
            return r->err->code;
    s->fields = f;
    return 0;
}

static int read_specs(rd_t *r, const json_t *root, fl_ice_table_meta_t *m) {
    json_t *a, *so;
    void *items;
    char w[64];
    if (get_array(r, root, "", "partition-specs", true, FL_ICE_SPECS_MAX,
                  sizeof(fl_ice_partition_spec_t), &a, &items, &m->n_specs))
        return r->err->code;
    fl_ice_partition_spec_t *s = items;
    m->specs = s; /* fl_ice_meta_column needs no specs; set early for symmetry */
    for (size_t i = 0; i < m->n_specs; i++)
        if (item(r, a, i, "", "partition-specs", w, sizeof(w), &so) ||
            read_spec(r, m, so, w, &s[i]))
            return r->err->code;
    return 0;
}

/* ---- sort orders ---- */

static int read_sort_field(rd_t *r, const json_t *fo, const char *where, fl_ice_sort_field_t *f) {
    const char *transform, *dir, *nulls;
    if (get_str(r, fo, where, "transform", true, &transform) ||
        get_i32(r, fo, where, "source-id", true, 0, 0, &f->source_id) ||
        get_str(r, fo, where, "direction", true, &dir) ||
        get_str(r, fo, where, "null-order", true, &nulls))
        return r->err->code;
    if (strcmp(transform, "identity"))
        return fl_err_set(r->err, FLUSS_ERR__INVALID_ARG,
                          "metadata: %s.transform \"%s\" not supported (identity)", where, transform);
    if (strcmp(dir, "asc") && strcmp(dir, "desc"))
        return corrupt(r, where, "direction", "is not asc or desc");
    if (strcmp(nulls, "nulls-first") && strcmp(nulls, "nulls-last"))
        return corrupt(r, where, "null-order", "is not nulls-first or nulls-last");
    f->descending = !strcmp(dir, "desc");
    f->nulls_last = !strcmp(nulls, "nulls-last");
    return 0;
}

static int read_sort_order(rd_t *r, const json_t *so, const char *where, fl_ice_sort_order_t *o) {
    json_t *a, *fo;
    void *items;
    char w[192];
    if (get_i32(r, so, where, "order-id", true, 0, 0, &o->order_id) ||
        get_array(r, so, where, "fields", true, FL_ICE_SORT_FIELDS_MAX,
                  sizeof(fl_ice_sort_field_t), &a, &items, &o->n_fields))
        return r->err->code;
    fl_ice_sort_field_t *f = items;
    for (size_t i = 0; i < o->n_fields; i++)
        if (item(r, a, i, where, "fields", w, sizeof(w), &fo) || read_sort_field(r, fo, w, &f[i]))
            return r->err->code;
    o->fields = f;
    return 0;
}

static int read_sort_orders(rd_t *r, const json_t *root, fl_ice_table_meta_t *m) {
    json_t *a, *so;
    void *items;
    char w[64];
    if (get_array(r, root, "", "sort-orders", true, FL_ICE_SORT_ORDERS_MAX,
                  sizeof(fl_ice_sort_order_t), &a, &items, &m->n_sort_orders))
        return r->err->code;
    fl_ice_sort_order_t *o = items;
    for (size_t i = 0; i < m->n_sort_orders; i++)
        if (item(r, a, i, "", "sort-orders", w, sizeof(w), &so) ||
            read_sort_order(r, so, w, &o[i]))
            return r->err->code;
    m->sort_orders = o;
    return 0;
}

/* ---- snapshots, refs, logs ---- */

static int read_snapshot(rd_t *r, const json_t *so, const char *where, fl_ice_snapshot_t *s) {
    if (json_object_get(so, "manifests") && !json_object_get(so, "manifest-list"))
        return fl_err_set(r->err, FLUSS_ERR__INVALID_ARG,
                          "metadata: %s: a v1 \"manifests\" list not supported", where);
    /* a snapshot of a table upgraded from v1 may lack its sequence number:
     * 0, as the specification has v1 data read */
    if (get_int(r, so, where, "snapshot-id", true, 0, INT64_MAX, 0, &s->snapshot_id) ||
        get_int(r, so, where, "parent-snapshot-id", false, 0, INT64_MAX, FL_ICE_NONE,
                &s->parent_snapshot_id) ||
        get_int(r, so, where, "sequence-number", false, 0, INT64_MAX, 0, &s->sequence_number) ||
        get_int(r, so, where, "timestamp-ms", true, INT64_MIN, INT64_MAX, 0, &s->timestamp_ms) ||
        get_str(r, so, where, "manifest-list", true, &s->manifest_list) ||
        get_i32(r, so, where, "schema-id", false, 0, FL_ICE_NO_SCHEMA, &s->schema_id) ||
        get_props(r, so, where, "summary", true, &s->summary, &s->n_summary))
        return r->err->code;
    return 0;
}

static int read_snapshots(rd_t *r, const json_t *root, fl_ice_table_meta_t *m) {
    json_t *a, *so;
    void *items;
    char w[64];
    if (get_array(r, root, "", "snapshots", false, FL_ICE_SNAPSHOTS_MAX, sizeof(fl_ice_snapshot_t),
                  &a, &items, &m->n_snapshots))
        return r->err->code;
    fl_ice_snapshot_t *s = items;
    for (size_t i = 0; i < m->n_snapshots; i++)
        if (item(r, a, i, "", "snapshots", w, sizeof(w), &so) || read_snapshot(r, so, w, &s[i]))
            return r->err->code;
    m->snapshots = s;
    return 0;
}

/* current-snapshot-id (absent, null or -1: none) and refs.main, which
 * must agree; other refs are not kept. */
static int read_current(rd_t *r, const json_t *root, fl_ice_table_meta_t *m) {
    json_t *refs, *main;
    int64_t ref_id;
    const char *type;
    if (get_int(r, root, "", "current-snapshot-id", false, -1, INT64_MAX, FL_ICE_NONE,
                &m->current_snapshot_id) ||
        get(r, root, "", "refs", false, &refs))
        return FLUSS_ERR__CORRUPT;
    if (!refs) return 0;
    if (!json_is_object(refs)) return corrupt(r, "", "refs", "is not an object");
    if (get(r, refs, "refs", "main", false, &main)) return FLUSS_ERR__CORRUPT;
    if (!main) return 0;
    if (!json_is_object(main)) return corrupt(r, "refs", "main", "is not an object");
    if (get_int(r, main, "refs.main", "snapshot-id", true, 0, INT64_MAX, 0, &ref_id) ||
        get_str(r, main, "refs.main", "type", true, &type))
        return FLUSS_ERR__CORRUPT;
    if (strcmp(type, "branch")) return corrupt(r, "refs.main", "type", "is not \"branch\"");
    bool stated = json_is_integer(json_object_get(root, "current-snapshot-id"));
    if (!stated) m->current_snapshot_id = ref_id; /* absent or null: refs says it */
    if (ref_id != m->current_snapshot_id)
        return corrupt(r, "refs.main", "snapshot-id", "is not current-snapshot-id");
    return 0;
}

static int read_snapshot_log(rd_t *r, const json_t *root, fl_ice_table_meta_t *m) {
    json_t *a, *o;
    void *items;
    char w[64];
    if (get_array(r, root, "", "snapshot-log", false, FL_ICE_SNAPSHOTS_MAX,
                  sizeof(fl_ice_snapshot_log_t), &a, &items, &m->n_snapshot_log))
        return r->err->code;
    fl_ice_snapshot_log_t *l = items;
    for (size_t i = 0; i < m->n_snapshot_log; i++)
        if (item(r, a, i, "", "snapshot-log", w, sizeof(w), &o) ||
            get_int(r, o, w, "timestamp-ms", true, INT64_MIN, INT64_MAX, 0, &l[i].timestamp_ms) ||
            get_int(r, o, w, "snapshot-id", true, 0, INT64_MAX, 0, &l[i].snapshot_id))
            return r->err->code;
    m->snapshot_log = l;
    return 0;
}

static int read_metadata_log(rd_t *r, const json_t *root, fl_ice_table_meta_t *m) {
    json_t *a, *o;
    void *items;
    char w[64];
    if (get_array(r, root, "", "metadata-log", false, FL_ICE_METADATA_LOG_MAX,
                  sizeof(fl_ice_metadata_log_t), &a, &items, &m->n_metadata_log))
        return r->err->code;
    fl_ice_metadata_log_t *l = items;
    for (size_t i = 0; i < m->n_metadata_log; i++)
        if (item(r, a, i, "", "metadata-log", w, sizeof(w), &o) ||
            get_int(r, o, w, "timestamp-ms", true, INT64_MIN, INT64_MAX, 0, &l[i].timestamp_ms) ||
            get_str(r, o, w, "metadata-file", true, &l[i].metadata_file))
            return r->err->code;
    m->metadata_log = l;
    return 0;
}

/* ---- the whole ---- */

static int read_version(rd_t *r, const json_t *root) {
    int64_t v;
    if (get_int(r, root, "", "format-version", true, INT64_MIN, INT64_MAX, 0, &v))
        return FLUSS_ERR__CORRUPT;
    if (v != 2)
        return fl_err_set(r->err, FLUSS_ERR__INVALID_ARG,
                          "metadata: format-version %" PRId64 " not supported (only 2)", v);
    return 0;
}

static int read_top(rd_t *r, const json_t *root, fl_ice_table_meta_t *m) {
    const char *uuid;
    if (get_str(r, root, "", "table-uuid", true, &uuid) ||
        get_str(r, root, "", "location", true, &m->location) ||
        get_int(r, root, "", "last-sequence-number", true, 0, INT64_MAX, 0,
                &m->last_sequence_number) ||
        get_int(r, root, "", "last-updated-ms", true, INT64_MIN, INT64_MAX, 0,
                &m->last_updated_ms) ||
        get_i32(r, root, "", "last-column-id", true, 0, 0, &m->last_column_id) ||
        get_i32(r, root, "", "current-schema-id", true, 0, 0, &m->current_schema_id) ||
        get_i32(r, root, "", "default-spec-id", true, 0, 0, &m->default_spec_id) ||
        get_i32(r, root, "", "last-partition-id", true, 0, 0, &m->last_partition_id) ||
        get_i32(r, root, "", "default-sort-order-id", true, 0, 0, &m->default_sort_order_id))
        return r->err->code;
    if (strlen(uuid) != FL_ICE_TABLE_UUID_LEN || !fl_uuid_text_ok(uuid, FL_ICE_TABLE_UUID_LEN))
        return corrupt(r, "", "table-uuid", "is not a UUID");
    memcpy(m->table_uuid, uuid, FL_ICE_TABLE_UUID_LEN + 1);
    return 0;
}

static int read_meta(rd_t *r, const json_t *root, fl_ice_table_meta_t *m) {
    if (!json_is_object(root))
        return fl_err_set(r->err, FLUSS_ERR__CORRUPT, "metadata: not a JSON object");
    if (read_version(r, root) || read_top(r, root, m) || read_schemas(r, root, m) ||
        read_specs(r, root, m) || read_sort_orders(r, root, m) ||
        get_props(r, root, "", "properties", false, &m->properties, &m->n_properties) ||
        read_snapshots(r, root, m) || read_current(r, root, m) ||
        read_snapshot_log(r, root, m) || read_metadata_log(r, root, m))
        return r->err->code;
    return fl_ice_meta_check(m, FLUSS_ERR__CORRUPT, r->err);
}

void fl_ice_meta_read_init(fl_ice_meta_read_t *r) {
    memset(r, 0, sizeof(*r));
    fl_avro_arena_init(&r->arena);
    r->meta.current_snapshot_id = FL_ICE_NONE;
}

void fl_ice_meta_read_reset(fl_ice_meta_read_t *r) {
    fl_avro_arena_reset(&r->arena);
    fl_ice_meta_read_init(r);
}

int fl_ice_meta_decode(const uint8_t *json, size_t len, fl_ice_meta_read_t *out, fl_error_t *err) {
    fl_ice_meta_read_reset(out);
    if (len > FL_ICE_META_BYTES_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "metadata: %zu bytes (at most %u)", len,
                          FL_ICE_META_BYTES_MAX);
    json_error_t jerr;
    json_t *root = json_loadb((const char *)json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "metadata: not JSON: %s (line %d, column %d)",
                          jerr.text, jerr.line, jerr.column);
    rd_t r = {&out->arena, err, 0};
    int rc = read_meta(&r, root, &out->meta);
    json_decref(root);
    if (rc) fl_ice_meta_read_reset(out);
    return rc;
}
