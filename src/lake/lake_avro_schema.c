/*
 * lake_avro_schema.c — the Avro schema tree of lake_avro_schema.h: its
 * builders, its JSON (jansson) and the parser of a file's avro.schema.
 * Parsed sizes are bounded by the FL_AVRO_*_MAX limits before anything is
 * allocated for them.
 */
#include "lake_avro_schema.h"

#include <assert.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"

static const char *const TYPE_NAMES[] = {
    [FL_AVRO_NULL] = "null",     [FL_AVRO_BOOLEAN] = "boolean", [FL_AVRO_INT] = "int",
    [FL_AVRO_LONG] = "long",     [FL_AVRO_FLOAT] = "float",     [FL_AVRO_DOUBLE] = "double",
    [FL_AVRO_BYTES] = "bytes",   [FL_AVRO_STRING] = "string",   [FL_AVRO_RECORD] = "record",
    [FL_AVRO_ENUM] = "enum",     [FL_AVRO_ARRAY] = "array",     [FL_AVRO_MAP] = "map",
    [FL_AVRO_UNION] = "union",   [FL_AVRO_FIXED] = "fixed",
};

const char *fl_avro_type_name(fl_avro_type_t type) {
    return (unsigned)type <= FL_AVRO_FIXED ? TYPE_NAMES[type] : "?";
}

static size_t sat_add(size_t a, size_t b) { return a > SIZE_MAX / 2 - b ? SIZE_MAX / 2 : a + b; }

/* ---- building ---- */

static fl_avro_schema_t *node_new(fl_avro_type_t type) {
    fl_avro_schema_t *s = fl_calloc(1, sizeof(*s));
    s->type = type;
    s->precision = s->scale = FL_AVRO_NO_ID;
    s->element_id = s->key_id = s->value_id = FL_AVRO_NO_ID;
    return s;
}

fl_avro_schema_t *fl_avro_schema_new(fl_avro_type_t type) {
    static const size_t MIN_BYTES[] = {[FL_AVRO_NULL] = 0, [FL_AVRO_BOOLEAN] = 1,
                                       [FL_AVRO_INT] = 1,  [FL_AVRO_LONG] = 1,
                                       [FL_AVRO_FLOAT] = 4, [FL_AVRO_DOUBLE] = 8,
                                       [FL_AVRO_BYTES] = 1, [FL_AVRO_STRING] = 1};
    assert(type <= FL_AVRO_STRING);
    fl_avro_schema_t *s = node_new(type);
    s->min_bytes = MIN_BYTES[type];
    return s;
}

fl_avro_schema_t *fl_avro_schema_record_new(const char *name) {
    fl_avro_schema_t *s = node_new(FL_AVRO_RECORD);
    s->name = fl_strdup(name);
    return s;
}

fl_avro_field_t *fl_avro_schema_record_add(fl_avro_schema_t *record, const char *name,
                                           int32_t field_id, fl_avro_schema_t *type) {
    assert(record->type == FL_AVRO_RECORD && record->n_fields < FL_AVRO_FIELDS_MAX);
    record->fields = fl_realloc(record->fields, (record->n_fields + 1) * sizeof(*record->fields));
    fl_avro_field_t *f = &record->fields[record->n_fields++];
    memset(f, 0, sizeof(*f));
    f->name = fl_strdup(name);
    f->field_id = field_id;
    f->type = type;
    f->default_null = type->type == FL_AVRO_UNION && type->n_branches > 0 &&
                      type->branches[0]->type == FL_AVRO_NULL;
    record->min_bytes = sat_add(record->min_bytes, type->min_bytes);
    return f;
}

fl_avro_schema_t *fl_avro_schema_enum_new(const char *name, const char *const *symbols,
                                          size_t n) {
    assert(n > 0 && n <= FL_AVRO_FIELDS_MAX);
    fl_avro_schema_t *s = node_new(FL_AVRO_ENUM);
    s->name = fl_strdup(name);
    s->symbols = fl_calloc(n, sizeof(*s->symbols));
    for (size_t i = 0; i < n; i++) s->symbols[i] = fl_strdup(symbols[i]);
    s->n_symbols = n;
    s->min_bytes = 1;
    return s;
}

fl_avro_schema_t *fl_avro_schema_array_new(fl_avro_schema_t *items, int32_t element_id) {
    fl_avro_schema_t *s = node_new(FL_AVRO_ARRAY);
    s->items = items;
    s->element_id = element_id;
    s->min_bytes = 1;
    return s;
}

fl_avro_schema_t *fl_avro_schema_map_new(fl_avro_schema_t *values, int32_t key_id,
                                         int32_t value_id) {
    fl_avro_schema_t *s = node_new(FL_AVRO_MAP);
    s->items = values;
    s->key_id = key_id;
    s->value_id = value_id;
    s->min_bytes = 1;
    return s;
}

fl_avro_schema_t *fl_avro_schema_fixed_new(const char *name, size_t size) {
    assert(size <= FL_AVRO_FIXED_MAX);
    fl_avro_schema_t *s = node_new(FL_AVRO_FIXED);
    s->name = fl_strdup(name);
    s->size = size;
    s->min_bytes = size;
    return s;
}

fl_avro_schema_t *fl_avro_schema_union_new(void) {
    fl_avro_schema_t *s = node_new(FL_AVRO_UNION);
    s->min_bytes = 1;
    return s;
}

void fl_avro_schema_union_add(fl_avro_schema_t *u, fl_avro_schema_t *branch) {
    assert(u->type == FL_AVRO_UNION && u->n_branches < FL_AVRO_BRANCHES_MAX);
    assert(branch->type != FL_AVRO_UNION); /* the specification forbids it */
    u->branches = fl_realloc(u->branches, (u->n_branches + 1) * sizeof(*u->branches));
    u->branches[u->n_branches++] = branch;
    size_t least = SIZE_MAX;
    for (size_t i = 0; i < u->n_branches; i++)
        if (u->branches[i]->min_bytes < least) least = u->branches[i]->min_bytes;
    u->min_bytes = sat_add(1, least);
}

fl_avro_schema_t *fl_avro_schema_optional(fl_avro_schema_t *type) {
    fl_avro_schema_t *u = fl_avro_schema_union_new();
    fl_avro_schema_union_add(u, fl_avro_schema_new(FL_AVRO_NULL));
    fl_avro_schema_union_add(u, type);
    return u;
}

fl_avro_schema_t *fl_avro_schema_set_logical(fl_avro_schema_t *s, const char *logical_type) {
    fl_free(s->logical_type);
    s->logical_type = logical_type ? fl_strdup(logical_type) : NULL;
    return s;
}

void fl_avro_schema_destroy(fl_avro_schema_t *s) {
    if (!s) return;
    for (size_t i = 0; i < s->n_fields; i++) {
        fl_free(s->fields[i].name);
        fl_free(s->fields[i].doc);
        fl_avro_schema_destroy(s->fields[i].type);
    }
    fl_free(s->fields);
    for (size_t i = 0; i < s->n_symbols; i++) fl_free(s->symbols[i]);
    fl_free(s->symbols);
    for (size_t i = 0; i < s->n_branches; i++) fl_avro_schema_destroy(s->branches[i]);
    fl_free(s->branches);
    fl_avro_schema_destroy(s->items);
    fl_free(s->name);
    fl_free(s->logical_type);
    fl_free(s);
}

int fl_avro_schema_field_index(const fl_avro_schema_t *record, const char *name) {
    for (size_t i = 0; i < record->n_fields; i++)
        if (strcmp(record->fields[i].name, name) == 0) return (int)i;
    return -1;
}

int fl_avro_schema_field_index_by_id(const fl_avro_schema_t *record, int32_t field_id) {
    for (size_t i = 0; i < record->n_fields; i++)
        if (record->fields[i].field_id == field_id) return (int)i;
    return -1;
}

/* ---- JSON out ---- */

static void set_new(json_t *o, const char *key, json_t *v) {
    assert(v); /* jansson refuses only invalid UTF-8: our own names */
    json_object_set_new(o, key, v);
}

static void set_id(json_t *o, const char *key, int32_t id) {
    if (id != FL_AVRO_NO_ID) set_new(o, key, json_integer(id));
}

static json_t *to_json(const fl_avro_schema_t *s);

static json_t *fields_json(const fl_avro_schema_t *s) {
    json_t *a = json_array();
    for (size_t i = 0; i < s->n_fields; i++) {
        const fl_avro_field_t *f = &s->fields[i];
        json_t *o = json_object();
        set_new(o, "name", json_string(f->name));
        set_new(o, "type", to_json(f->type));
        if (f->doc) set_new(o, "doc", json_string(f->doc));
        if (f->default_null) set_new(o, "default", json_null());
        set_id(o, "field-id", f->field_id);
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *to_json(const fl_avro_schema_t *s) {
    bool plain = s->type <= FL_AVRO_STRING && !s->logical_type &&
                 s->precision == FL_AVRO_NO_ID && s->scale == FL_AVRO_NO_ID;
    if (plain) return json_string(TYPE_NAMES[s->type]);
    if (s->type == FL_AVRO_UNION) {
        json_t *a = json_array();
        for (size_t i = 0; i < s->n_branches; i++) json_array_append_new(a, to_json(s->branches[i]));
        return a;
    }
    json_t *o = json_object();
    set_new(o, "type", json_string(TYPE_NAMES[s->type]));
    if (s->name) set_new(o, "name", json_string(s->name));
    switch (s->type) {
    case FL_AVRO_RECORD: set_new(o, "fields", fields_json(s)); break;
    case FL_AVRO_ENUM: {
        json_t *a = json_array();
        for (size_t i = 0; i < s->n_symbols; i++) json_array_append_new(a, json_string(s->symbols[i]));
        set_new(o, "symbols", a);
        break;
    }
    case FL_AVRO_ARRAY:
        set_new(o, "items", to_json(s->items));
        set_id(o, "element-id", s->element_id);
        break;
    case FL_AVRO_MAP:
        set_new(o, "values", to_json(s->items));
        set_id(o, "key-id", s->key_id);
        set_id(o, "value-id", s->value_id);
        break;
    case FL_AVRO_FIXED: set_new(o, "size", json_integer((json_int_t)s->size)); break;
    default: break;
    }
    if (s->logical_type) set_new(o, "logicalType", json_string(s->logical_type));
    set_id(o, "precision", s->precision);
    set_id(o, "scale", s->scale);
    return o;
}

void fl_avro_schema_write_json(const fl_avro_schema_t *s, fl_buf_t *out) {
    json_t *j = to_json(s);
    char *text = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    assert(text);
    fl_buf_append(out, text, strlen(text));
    free(text);
    json_decref(j);
}

/* ---- parsing ---- */

static int parse_node(const json_t *j, int depth, fl_avro_schema_t **out, fl_error_t *err);

static int corrupt(fl_error_t *err, const char *what) {
    return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro schema: %s", what);
}

/* An optional non-negative int32 attribute ("field-id", "size", ...). */
static int get_id(const json_t *o, const char *key, int64_t max, int32_t *v, fl_error_t *err) {
    const json_t *x = json_object_get(o, key);
    *v = FL_AVRO_NO_ID;
    if (!x) return 0;
    if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > max)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro schema: \"%s\" is not an integer in 0..%lld",
                          key, (long long)max);
    *v = (int32_t)json_integer_value(x);
    return 0;
}

static int get_name(const json_t *o, fl_avro_schema_t *s, fl_error_t *err) {
    const char *name = json_string_value(json_object_get(o, "name"));
    if (!name || !*name)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro schema: %s without a name",
                          TYPE_NAMES[s->type]);
    s->name = fl_strdup(name);
    return 0;
}

static int parse_field(const json_t *o, int depth, fl_avro_schema_t *rec, fl_error_t *err) {
    const char *name = json_string_value(json_object_get(o, "name"));
    if (!json_is_object(o) || !name || !*name) return corrupt(err, "a field without a name");
    if (fl_avro_schema_field_index(rec, name) >= 0)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro schema: record %s: field %s twice",
                          rec->name, name);
    int32_t id;
    if (get_id(o, "field-id", INT32_MAX, &id, err)) return FLUSS_ERR__CORRUPT;
    const json_t *t = json_object_get(o, "type");
    if (!t) return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro schema: field %s without a type", name);
    fl_avro_schema_t *type;
    int rc = parse_node(t, depth + 1, &type, err);
    if (rc) {
        fl_avro_schema_destroy(type);
        fl_err_prefix(err, "field %s: ", name);
        return rc;
    }
    fl_avro_field_t *f = fl_avro_schema_record_add(rec, name, id, type);
    const json_t *def = json_object_get(o, "default");
    /* other defaults matter only to schema resolution, which we do not do */
    f->default_null = def && json_is_null(def);
    const char *doc = json_string_value(json_object_get(o, "doc"));
    if (doc) f->doc = fl_strdup(doc);
    return 0;
}

static int parse_record(const json_t *o, int depth, fl_avro_schema_t *s, fl_error_t *err) {
    const json_t *fields = json_object_get(o, "fields");
    if (!json_is_array(fields)) return corrupt(err, "a record without fields");
    if (json_array_size(fields) > FL_AVRO_FIELDS_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "avro schema: record of %zu fields (max %d)",
                          json_array_size(fields), FL_AVRO_FIELDS_MAX);
    for (size_t i = 0; i < json_array_size(fields); i++) {
        int rc = parse_field(json_array_get(fields, i), depth, s, err);
        if (rc) return rc;
    }
    return 0;
}

static int parse_enum(const json_t *o, fl_avro_schema_t *s, fl_error_t *err) {
    const json_t *sym = json_object_get(o, "symbols");
    size_t n = json_array_size(sym);
    if (!json_is_array(sym) || n == 0) return corrupt(err, "an enum without symbols");
    if (n > FL_AVRO_FIELDS_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "avro schema: enum of %zu symbols (max %d)",
                          n, FL_AVRO_FIELDS_MAX);
    s->symbols = fl_calloc(n, sizeof(*s->symbols));
    for (size_t i = 0; i < n; i++) {
        const char *v = json_string_value(json_array_get(sym, i));
        if (!v) return corrupt(err, "an enum symbol that is not a string");
        for (size_t k = 0; k < i; k++)
            if (strcmp(s->symbols[k], v) == 0) return corrupt(err, "an enum symbol twice");
        s->symbols[i] = fl_strdup(v);
        s->n_symbols++;
    }
    s->min_bytes = 1;
    return 0;
}

static int parse_items(const json_t *o, const char *key, int depth, fl_avro_schema_t *s,
                       fl_error_t *err) {
    const json_t *t = json_object_get(o, key);
    if (!t)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro schema: %s without %s",
                          TYPE_NAMES[s->type], key);
    s->min_bytes = 1;
    return parse_node(t, depth + 1, &s->items, err);
}

static int parse_fixed(const json_t *o, fl_avro_schema_t *s, fl_error_t *err) {
    int32_t size;
    if (get_id(o, "size", FL_AVRO_FIXED_MAX, &size, err)) return FLUSS_ERR__CORRUPT;
    if (size == FL_AVRO_NO_ID) return corrupt(err, "a fixed without a size");
    s->size = (size_t)size;
    s->min_bytes = s->size;
    return 0;
}

static int type_by_name(const char *name, fl_avro_type_t *t) {
    for (int i = 0; i <= FL_AVRO_FIXED; i++)
        if (i != FL_AVRO_UNION && strcmp(name, TYPE_NAMES[i]) == 0) {
            *t = (fl_avro_type_t)i;
            return 0;
        }
    return -1;
}

static int parse_complex(const json_t *o, int depth, fl_avro_schema_t **out, fl_error_t *err) {
    const char *tname = json_string_value(json_object_get(o, "type"));
    if (!tname) return corrupt(err, "an object whose \"type\" is not a string");
    fl_avro_type_t t;
    if (type_by_name(tname, &t))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "avro schema: named type reference \"%.64s\" not supported", tname);
    fl_avro_schema_t *s = t <= FL_AVRO_STRING ? fl_avro_schema_new(t) : node_new(t);
    *out = s;
    int rc = 0;
    if (t == FL_AVRO_RECORD || t == FL_AVRO_ENUM || t == FL_AVRO_FIXED) rc = get_name(o, s, err);
    if (!rc) {
        switch (t) {
        case FL_AVRO_RECORD: rc = parse_record(o, depth, s, err); break;
        case FL_AVRO_ENUM: rc = parse_enum(o, s, err); break;
        case FL_AVRO_ARRAY: rc = parse_items(o, "items", depth, s, err); break;
        case FL_AVRO_MAP: rc = parse_items(o, "values", depth, s, err); break;
        case FL_AVRO_FIXED: rc = parse_fixed(o, s, err); break;
        default: break;
        }
    }
    if (!rc) rc = get_id(o, "element-id", INT32_MAX, &s->element_id, err);
    if (!rc) rc = get_id(o, "key-id", INT32_MAX, &s->key_id, err);
    if (!rc) rc = get_id(o, "value-id", INT32_MAX, &s->value_id, err);
    if (!rc) rc = get_id(o, "precision", INT32_MAX, &s->precision, err);
    if (!rc) rc = get_id(o, "scale", INT32_MAX, &s->scale, err);
    const char *lt = json_string_value(json_object_get(o, "logicalType"));
    if (!rc && lt) s->logical_type = fl_strdup(lt);
    return rc;
}

static int parse_union(const json_t *a, int depth, fl_avro_schema_t **out, fl_error_t *err) {
    size_t n = json_array_size(a);
    if (n == 0) return corrupt(err, "an empty union");
    if (n > FL_AVRO_BRANCHES_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "avro schema: union of %zu branches (max %d)",
                          n, FL_AVRO_BRANCHES_MAX);
    fl_avro_schema_t *u = fl_avro_schema_union_new();
    *out = u;
    for (size_t i = 0; i < n; i++) {
        fl_avro_schema_t *b;
        int rc = parse_node(json_array_get(a, i), depth + 1, &b, err);
        if (rc) {
            fl_avro_schema_destroy(b);
            return rc;
        }
        if (b->type == FL_AVRO_UNION) {
            fl_avro_schema_destroy(b);
            return corrupt(err, "a union directly inside a union");
        }
        fl_avro_schema_union_add(u, b);
    }
    return 0;
}

/* *out is set (possibly partly built) whenever it is not NULL; the caller
 * destroys it on error. */
static int parse_node(const json_t *j, int depth, fl_avro_schema_t **out, fl_error_t *err) {
    *out = NULL;
    if (depth > FL_AVRO_DEPTH_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "avro schema: nested deeper than %d",
                          FL_AVRO_DEPTH_MAX);
    if (json_is_string(j)) {
        fl_avro_type_t t;
        if (type_by_name(json_string_value(j), &t) == 0 && t <= FL_AVRO_STRING) {
            *out = fl_avro_schema_new(t);
            return 0;
        }
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "avro schema: named type reference \"%.64s\" not supported",
                          json_string_value(j));
    }
    if (json_is_array(j)) return parse_union(j, depth, out, err);
    if (json_is_object(j)) return parse_complex(j, depth, out, err);
    return corrupt(err, "a type that is neither a string, an array nor an object");
}

int fl_avro_schema_parse(const char *json, size_t len, fl_avro_schema_t **out, fl_error_t *err) {
    *out = NULL;
    json_error_t jerr;
    json_t *j = json_loadb(json, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!j)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro schema: JSON: %s (line %d)", jerr.text,
                          jerr.line);
    fl_avro_schema_t *s;
    int rc = parse_node(j, 1, &s, err);
    json_decref(j);
    if (rc) {
        fl_avro_schema_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}
