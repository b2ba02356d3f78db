/*
 * lake_iceberg_meta_check.c — the rules of Iceberg v2 table metadata
 * (lake_iceberg_table.h) in one place: primitive type strings, the ids a
 * schema, spec, sort order or snapshot must keep unique, the current ids
 * that must name something, sequence numbers under last-sequence-number,
 * the bounds on every list. The encoder runs them on a caller's
 * description (INVALID_ARG), the decoder on what it read (CORRUPT), the
 * edits on their result, so a file we write we read back, and the other
 * way round. Messages name the JSON path. Thread rule: none.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "common_uuid.h"
#include "lake_iceberg_meta_int.h"

/* ---- small helpers ---- */

void *fl_ice_arena_alloc(fl_avro_arena_t *a, size_t n) {
    return fl_avro_arena_try_alloc(a, n ? n : 1);
}

char *fl_ice_arena_strndup(fl_avro_arena_t *a, const char *s, size_t n) {
    char *p = fl_ice_arena_alloc(a, n + 1);
    if (p && n) memcpy(p, s, n);
    return p; /* zeroed: NUL-terminated */
}

const char *fl_ice_prop_get(const fl_ice_prop_t *p, size_t n, const char *key) {
    for (size_t i = 0; i < n; i++)
        if (p[i].key && !strcmp(p[i].key, key)) return p[i].value;
    return NULL;
}

/* ---- types ---- */

static const struct {
    const char *name;
    fl_ice_prim_t prim;
} PRIMS[] = {
    {"boolean", FL_ICE_T_BOOLEAN}, {"int", FL_ICE_T_INT},
    {"long", FL_ICE_T_LONG},       {"float", FL_ICE_T_FLOAT},
    {"double", FL_ICE_T_DOUBLE},   {"date", FL_ICE_T_DATE},
    {"time", FL_ICE_T_TIME},       {"timestamp", FL_ICE_T_TIMESTAMP},
    {"timestamptz", FL_ICE_T_TIMESTAMPTZ}, {"string", FL_ICE_T_STRING},
    {"binary", FL_ICE_T_BINARY},   {"uuid", FL_ICE_T_UUID},
};

static const char *skip_spaces(const char *s) {
    while (*s == ' ') s++;
    return s;
}

/* A decimal number of at most 9 digits (surrounding spaces skipped) at
 * *s; *s moves past it. */
static bool parse_small(const char **s, int32_t *out) {
    const char *p = skip_spaces(*s);
    int32_t v = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (++digits > 9) return false;
        v = v * 10 + (*p - '0');
    }
    if (!digits) return false;
    *s = skip_spaces(p);
    *out = v;
    return true;
}

bool fl_ice_type_parse(const char *s, fl_ice_type_info_t *out) {
    memset(out, 0, sizeof(*out));
    if (!s) return false;
    for (size_t i = 0; i < sizeof(PRIMS) / sizeof(PRIMS[0]); i++)
        if (!strcmp(s, PRIMS[i].name)) {
            out->prim = PRIMS[i].prim;
            return true;
        }
    const char *p;
    if (!strncmp(s, "decimal(", 8)) {
        p = s + 8;
        out->prim = FL_ICE_T_DECIMAL;
        if (!parse_small(&p, &out->precision) || *p++ != ',' ||
            !parse_small(&p, &out->scale) || strcmp(p, ")"))
            return false;
        return out->precision >= 1 && out->precision <= 38 && out->scale <= out->precision;
    }
    if (!strncmp(s, "fixed[", 6)) {
        p = s + 6;
        out->prim = FL_ICE_T_FIXED;
        return parse_small(&p, &out->length) && !strcmp(p, "]") && out->length >= 1;
    }
    return false;
}

void fl_ice_type_format(const fl_ice_type_info_t *t, char *buf, size_t size) {
    if (t->prim == FL_ICE_T_DECIMAL) {
        snprintf(buf, size, "decimal(%" PRId32 ",%" PRId32 ")", t->precision, t->scale);
        return;
    }
    if (t->prim == FL_ICE_T_FIXED) {
        snprintf(buf, size, "fixed[%" PRId32 "]", t->length);
        return;
    }
    for (size_t i = 0; i < sizeof(PRIMS) / sizeof(PRIMS[0]); i++)
        if (PRIMS[i].prim == t->prim) snprintf(buf, size, "%s", PRIMS[i].name);
}

bool fl_ice_partition_value_type(fl_ice_transform_t t, int32_t buckets,
                                 const fl_ice_type_info_t *src, fl_ice_type_t *out) {
    if (t == FL_ICE_BUCKET) {
        /* Appendix B hashes these; booleans and floats have no bucket */
        bool hashable = src->prim != FL_ICE_T_BOOLEAN && src->prim != FL_ICE_T_FLOAT &&
                        src->prim != FL_ICE_T_DOUBLE;
        *out = FL_ICE_INT;
        return hashable && buckets > 0;
    }
    if (t != FL_ICE_IDENTITY) return false;
    switch (src->prim) {
    case FL_ICE_T_INT: *out = FL_ICE_INT; return true;
    case FL_ICE_T_LONG: *out = FL_ICE_LONG; return true;
    case FL_ICE_T_STRING: *out = FL_ICE_STRING; return true;
    case FL_ICE_T_DATE: *out = FL_ICE_DATE; return true;
    default: return false;
    }
}

/* ---- lookups ---- */

const fl_ice_field_t *fl_ice_schema_field(const fl_ice_schema_t *s, int32_t id) {
    for (size_t i = 0; i < s->n_fields; i++)
        if (s->fields[i].id == id) return &s->fields[i];
    return NULL;
}

/* ---- nested fields ---- */

/* The fields directly inside f's type, in the order of the pre-order
 * walk; returns how many (at most 2 but for a struct's). */
static size_t children(const fl_ice_field_t *f, const fl_ice_field_t **first,
                       const fl_ice_field_t **second) {
    const fl_ice_nested_t *t = f->nested;
    *first = *second = NULL;
    if (!t) return 0;
    switch (t->kind) {
    case FL_ICE_STRUCT: *first = t->fields; return t->n_fields;
    case FL_ICE_LIST: *first = t->element; return 1;
    case FL_ICE_MAP: *first = t->key; *second = t->value; return 2;
    }
    return 0;
}

/* Child i of f (i below children()'s count). */
static const fl_ice_field_t *child(const fl_ice_field_t *f, size_t i) {
    const fl_ice_field_t *a, *b;
    children(f, &a, &b);
    if (f->nested->kind == FL_ICE_STRUCT) return &a[i];
    return i == 0 ? a : b;
}

static int walk(const fl_ice_field_t *f, int depth, fl_ice_field_fn fn, void *ctx) {
    int rc = fn(f, depth, ctx);
    const fl_ice_field_t *a, *b;
    size_t n = children(f, &a, &b);
    for (size_t i = 0; i < n && !rc; i++) rc = walk(child(f, i), depth + 1, fn, ctx);
    return rc;
}

int fl_ice_field_walk(const fl_ice_field_t *f, fl_ice_field_fn fn, void *ctx) {
    return walk(f, 0, fn, ctx);
}

typedef struct find {
    int32_t id;
    const fl_ice_field_t *found;
} find_t;

static int find_one(const fl_ice_field_t *f, int depth, void *ctx) {
    find_t *x = ctx;
    (void)depth;
    if (f->id != x->id) return 0;
    x->found = f;
    return 1;
}

const fl_ice_field_t *fl_ice_schema_find(const fl_ice_schema_t *s, int32_t id) {
    find_t x = {id, NULL};
    for (size_t i = 0; i < s->n_fields && !x.found; i++) fl_ice_field_walk(&s->fields[i], find_one, &x);
    return x.found;
}

static int max_one(const fl_ice_field_t *f, int depth, void *ctx) {
    int32_t *max = ctx;
    (void)depth;
    if (f->id > *max) *max = f->id;
    return 0;
}

int32_t fl_ice_field_max_id(const fl_ice_field_t *f) {
    int32_t max = f->id;
    fl_ice_field_walk(f, max_one, &max);
    return max;
}

bool fl_ice_field_same(const fl_ice_field_t *a, const fl_ice_field_t *b) {
    if (a->id != b->id || a->required != b->required || !a->name != !b->name ||
        (a->name && strcmp(a->name, b->name)) || !a->nested != !b->nested)
        return false;
    if (!a->nested) {
        fl_ice_type_info_t x, y;
        return fl_ice_type_parse(a->type, &x) && fl_ice_type_parse(b->type, &y) &&
               !memcmp(&x, &y, sizeof(x));
    }
    const fl_ice_field_t *a1, *a2, *b1, *b2;
    size_t n = children(a, &a1, &a2);
    if (a->nested->kind != b->nested->kind || children(b, &b1, &b2) != n) return false;
    for (size_t i = 0; i < n; i++)
        if (!fl_ice_field_same(child(a, i), child(b, i))) return false;
    return true;
}

const fl_ice_schema_t *fl_ice_meta_schema(const fl_ice_table_meta_t *m, int32_t schema_id) {
    for (size_t i = 0; i < m->n_schemas; i++)
        if (m->schemas[i].schema_id == schema_id) return &m->schemas[i];
    return NULL;
}

const fl_ice_partition_spec_t *fl_ice_meta_spec(const fl_ice_table_meta_t *m, int32_t spec_id) {
    for (size_t i = 0; i < m->n_specs; i++)
        if (m->specs[i].spec_id == spec_id) return &m->specs[i];
    return NULL;
}

const fl_ice_snapshot_t *fl_ice_meta_snapshot(const fl_ice_table_meta_t *m, int64_t snapshot_id) {
    for (size_t i = m->n_snapshots; i-- > 0;) /* the newest are asked for most */
        if (m->snapshots[i].snapshot_id == snapshot_id) return &m->snapshots[i];
    return NULL;
}

const fl_ice_field_t *fl_ice_meta_column(const fl_ice_table_meta_t *m, int32_t id) {
    const fl_ice_schema_t *cur = fl_ice_meta_schema(m, m->current_schema_id);
    const fl_ice_field_t *f = cur ? fl_ice_schema_field(cur, id) : NULL;
    for (size_t i = m->n_schemas; !f && i-- > 0;) f = fl_ice_schema_field(&m->schemas[i], id);
    return f;
}

/* ---- the rules ---- */

typedef struct ck {
    int code;
    fl_error_t *err;
} ck_t;

#define BAD(c, ...) fl_err_set((c)->err, (c)->code, "metadata: " __VA_ARGS__)

/* A list's pointer and count: at most max, and a pointer when not empty. */
static int check_list(ck_t *c, const void *p, size_t n, size_t max, const char *where) {
    if (n > max) return BAD(c, "%s has %zu entries (at most %zu)", where, n, max);
    if (n && !p) return BAD(c, "%s has %zu entries but no array", where, n);
    return 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Keys present and unique, values present (sorted copy: summaries of a
 * million snapshots are checked on every encode). */
static int check_props(ck_t *c, const fl_ice_prop_t *p, size_t n, const char *where) {
    if (check_list(c, p, n, FL_ICE_PROPS_MAX, where)) return c->code;
    const char **keys = fl_malloc((n ? n : 1) * sizeof(*keys));
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (!p[i].key || !p[i].value) rc = BAD(c, "%s[%zu] has no key or value", where, i);
        keys[i] = p[i].key;
    }
    if (!rc) qsort(keys, n, sizeof(*keys), cmp_str);
    for (size_t i = 1; i < n && !rc; i++)
        if (!strcmp(keys[i - 1], keys[i])) rc = BAD(c, "%s has key \"%s\" twice", where, keys[i]);
    fl_free(keys);
    return rc;
}

/* A schema being checked: its path, and every id seen at any depth (an
 * open-addressing set: -1 is free, ids are >= 0 once checked). */
typedef struct sk {
    ck_t *c;
    int32_t last_column_id;
    int32_t *ids;
    size_t n_ids, cap; /* cap a power of two, at least twice n_ids */
    char path[512];
    size_t len;
} sk_t;

static size_t id_slot(const int32_t *ids, size_t cap, int32_t id) {
    size_t i = ((uint32_t)id * 2654435761u) & (cap - 1);
    while (ids[i] != -1 && ids[i] != id) i = (i + 1) & (cap - 1);
    return i;
}

/* Adds id; false if it was there. */
static bool id_add(sk_t *k, int32_t id) {
    if (2 * (k->n_ids + 1) > k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 64;
        int32_t *ids = fl_malloc(cap * sizeof(*ids));
        memset(ids, 0xff, cap * sizeof(*ids));
        for (size_t i = 0; i < k->cap; i++)
            if (k->ids[i] != -1) ids[id_slot(ids, cap, k->ids[i])] = k->ids[i];
        fl_free(k->ids);
        k->ids = ids;
        k->cap = cap;
    }
    size_t i = id_slot(k->ids, k->cap, id);
    if (k->ids[i] == id) return false;
    k->ids[i] = id;
    k->n_ids++;
    return true;
}

/* Appends ".step" or ".step[i]" (i != SIZE_MAX) to the path; returns the
 * length to restore. A path too long for its buffer ends in "...". */
static size_t sk_push(sk_t *k, const char *step, size_t i) {
    size_t keep = k->len;
    if (k->len >= sizeof(k->path) - 1) return keep;
    size_t room = sizeof(k->path) - k->len;
    int w = i == SIZE_MAX ? snprintf(k->path + k->len, room, ".%s", step)
                          : snprintf(k->path + k->len, room, ".%s[%zu]", step, i);
    if (w >= 0 && (size_t)w >= room) {
        memcpy(k->path + sizeof(k->path) - 4, "...", 4);
        k->len = sizeof(k->path) - 1;
    } else if (w > 0) {
        k->len += (size_t)w;
    }
    return keep;
}

static void sk_pop(sk_t *k, size_t keep) {
    k->len = keep;
    k->path[keep] = 0;
}

typedef enum role { R_FIELD, R_ELEMENT, R_KEY, R_VALUE } role_t;

static const char *const ROLE_NAMES[] = {NULL, "element", "key", "value"};

static int check_node(sk_t *k, const fl_ice_field_t *f, role_t role, int depth);

static int check_struct(sk_t *k, const fl_ice_nested_t *t, int depth) {
    ck_t *c = k->c;
    if (check_list(c, t->fields, t->n_fields, FL_ICE_SCHEMA_FIELDS_MAX, k->path)) return c->code;
    if (t->element || t->key || t->value)
        return BAD(c, "%s: a struct has fields and nothing else", k->path);
    int rc = 0;
    for (size_t i = 0; i < t->n_fields && !rc; i++) {
        size_t at = sk_push(k, "fields", i);
        rc = check_node(k, &t->fields[i], R_FIELD, depth);
        /* quadratic, but a struct's bound is 4096 */
        for (size_t j = 0; j < i && !rc; j++)
            if (!strcmp(t->fields[j].name, t->fields[i].name))
                rc = BAD(c, "%s repeats the name \"%s\"", k->path, t->fields[i].name);
        sk_pop(k, at);
    }
    return rc;
}

/* f's nested type; its fields are at depth + 1. */
static int check_nested(sk_t *k, const fl_ice_field_t *f, int depth) {
    ck_t *c = k->c;
    const fl_ice_nested_t *t = f->nested;
    if (f->type) return BAD(c, "%s has a type \"%s\" and a nested type", k->path, f->type);
    if (depth + 1 > FL_ICE_TYPE_DEPTH_MAX)
        return BAD(c, "%s nests deeper than %d", k->path, FL_ICE_TYPE_DEPTH_MAX);
    size_t keep = sk_push(k, "type", SIZE_MAX);
    int rc = 0;
    switch (t->kind) {
    case FL_ICE_STRUCT: rc = check_struct(k, t, depth + 1); break;
    case FL_ICE_LIST:
        if (!t->element || t->key || t->value || t->n_fields || t->fields)
            rc = BAD(c, "%s: a list has an element and nothing else", k->path);
        else
            rc = check_node(k, t->element, R_ELEMENT, depth + 1);
        break;
    case FL_ICE_MAP:
        if (!t->key || !t->value || t->element || t->n_fields || t->fields)
            rc = BAD(c, "%s: a map has a key and a value and nothing else", k->path);
        else if (!(rc = check_node(k, t->key, R_KEY, depth + 1)))
            rc = check_node(k, t->value, R_VALUE, depth + 1);
        break;
    default: rc = BAD(c, "%s kind %d not struct, list or map", k->path, (int)t->kind);
    }
    sk_pop(k, keep);
    return rc;
}

static int check_node(sk_t *k, const fl_ice_field_t *f, role_t role, int depth) {
    ck_t *c = k->c;
    size_t keep = role == R_FIELD ? k->len : sk_push(k, ROLE_NAMES[role], SIZE_MAX);
    int rc = 0;
    fl_ice_type_info_t t;
    if (f->id < 0 || f->id > FL_ICE_FIELD_ID_MAX)
        rc = BAD(c, "%s.id %" PRId32 " out of range", k->path, f->id);
    else if (f->id > k->last_column_id)
        rc = BAD(c, "%s.id %" PRId32 " above last-column-id %" PRId32, k->path, f->id,
                 k->last_column_id);
    else if (!f->name || !*f->name)
        rc = BAD(c, "%s.name missing", k->path);
    else if (role != R_FIELD && (strcmp(f->name, ROLE_NAMES[role]) || f->doc))
        rc = BAD(c, "%s is named \"%s\" or has a doc (a %s has neither)", k->path, f->name,
                 ROLE_NAMES[role]);
    else if (role == R_KEY && !f->required)
        rc = BAD(c, "%s is optional (a map's key is required)", k->path);
    else if (k->n_ids >= FL_ICE_SCHEMA_NODES_MAX)
        rc = BAD(c, "%s: more than %d fields at all depths", k->path, FL_ICE_SCHEMA_NODES_MAX);
    else if (!id_add(k, f->id))
        rc = BAD(c, "%s repeats the id %" PRId32, k->path, f->id);
    else if (f->nested)
        rc = check_nested(k, f, depth);
    else if (!fl_ice_type_parse(f->type, &t))
        rc = BAD(c, "%s.type \"%s\" not a v2 primitive type", k->path,
                 f->type ? f->type : "(null)");
    sk_pop(k, keep);
    return rc;
}

static int check_identifiers(ck_t *c, const fl_ice_schema_t *s, const char *where) {
    if (check_list(c, s->identifier_ids, s->n_identifier_ids, FL_ICE_SCHEMA_FIELDS_MAX, where))
        return c->code;
    for (size_t i = 0; i < s->n_identifier_ids; i++) {
        int32_t id = s->identifier_ids[i];
        const fl_ice_field_t *f = fl_ice_schema_field(s, id);
        fl_ice_type_info_t t;
        if (!f) return BAD(c, "%s.identifier-field-ids: %" PRId32 " names no column", where, id);
        /* the specification: no nulls and no floats in a row's identity;
         * ours: top-level primitive columns only (a primary key's) */
        if (f->nested) return BAD(c, "%s.identifier-field-ids: %s is nested", where, f->name);
        fl_ice_type_parse(f->type, &t);
        if (!f->required || t.prim == FL_ICE_T_FLOAT || t.prim == FL_ICE_T_DOUBLE)
            return BAD(c, "%s.identifier-field-ids: %s is optional or a float", where, f->name);
        for (size_t j = 0; j < i; j++)
            if (s->identifier_ids[j] == id)
                return BAD(c, "%s.identifier-field-ids has %" PRId32 " twice", where, id);
    }
    return 0;
}

int fl_ice_schema_check(const fl_ice_schema_t *s, int32_t last_column_id, const char *where,
                        int code, fl_error_t *err) {
    ck_t c = {code, err};
    if (s->schema_id < 0) return BAD(&c, "%s.schema-id %" PRId32 " negative", where, s->schema_id);
    if (check_list(&c, s->fields, s->n_fields, FL_ICE_SCHEMA_FIELDS_MAX, where)) return code;
    sk_t *k = fl_calloc(1, sizeof(*k));
    k->c = &c;
    k->last_column_id = last_column_id;
    snprintf(k->path, sizeof(k->path), "%s", where);
    k->len = strlen(k->path);
    int rc = 0;
    for (size_t i = 0; i < s->n_fields && !rc; i++) {
        size_t at = sk_push(k, "fields", i);
        rc = check_node(k, &s->fields[i], R_FIELD, 0);
        /* quadratic, but a schema is small and its bound 4096 */
        for (size_t j = 0; j < i && !rc; j++)
            if (!strcmp(s->fields[j].name, s->fields[i].name))
                rc = BAD(&c, "%s repeats the name \"%s\"", k->path, s->fields[i].name);
        sk_pop(k, at);
    }
    if (!rc) rc = check_identifiers(&c, s, where);
    fl_free(k->ids);
    fl_free(k);
    return rc;
}

static int check_schemas(ck_t *c, const fl_ice_table_meta_t *m) {
    char where[48];
    if (!m->n_schemas) return BAD(c, "schemas is empty");
    if (check_list(c, m->schemas, m->n_schemas, FL_ICE_SCHEMAS_MAX, "schemas")) return c->code;
    for (size_t i = 0; i < m->n_schemas; i++) {
        snprintf(where, sizeof(where), "schemas[%zu]", i);
        if (fl_ice_schema_check(&m->schemas[i], m->last_column_id, where, c->code, c->err))
            return c->code;
        for (size_t j = 0; j < i; j++)
            if (m->schemas[j].schema_id == m->schemas[i].schema_id)
                return BAD(c, "%s.schema-id %" PRId32 " not unique", where, m->schemas[i].schema_id);
    }
    if (!fl_ice_meta_schema(m, m->current_schema_id))
        return BAD(c, "current-schema-id %" PRId32 " names no schema", m->current_schema_id);
    return 0;
}

static const char *value_type_name(fl_ice_type_t t) {
    switch (t) {
    case FL_ICE_INT: return "int";
    case FL_ICE_LONG: return "long";
    case FL_ICE_STRING: return "string";
    case FL_ICE_DATE: return "date";
    default: return "unknown";
    }
}

static int check_spec_field(ck_t *c, const fl_ice_table_meta_t *m,
                            const fl_ice_partition_spec_t *s, size_t si, size_t i) {
    const fl_ice_partition_field_t *f = &s->fields[i];
    fl_ice_type_info_t src;
    fl_ice_type_t want;
    if (!f->name || !*f->name) return BAD(c, "partition-specs[%zu].fields[%zu].name missing", si, i);
    if (f->field_id < 0 || f->field_id > m->last_partition_id)
        return BAD(c, "partition-specs[%zu].fields[%zu].field-id %" PRId32
                      " negative or above last-partition-id %" PRId32,
                   si, i, f->field_id, m->last_partition_id);
    const fl_ice_field_t *col = fl_ice_meta_column(m, f->source_id);
    if (!col || col->nested)
        return BAD(c, "partition-specs[%zu].fields[%zu].source-id %" PRId32
                      " names no primitive top-level column",
                   si, i, f->source_id);
    fl_ice_type_parse(col->type, &src);
    if ((f->transform != FL_ICE_IDENTITY && f->transform != FL_ICE_BUCKET) ||
        !fl_ice_partition_value_type(f->transform, f->buckets, &src, &want))
        return BAD(c, "partition-specs[%zu].fields[%zu] (\"%s\"): transform not supported on %s",
                   si, i, f->name, col->type);
    if (f->type != want)
        return BAD(c, "partition-specs[%zu].fields[%zu] (\"%s\"): value type %s, the column gives %s",
                   si, i, f->name, value_type_name(f->type), value_type_name(want));
    for (size_t j = 0; j < i; j++)
        if (s->fields[j].field_id == f->field_id || !strcmp(s->fields[j].name, f->name))
            return BAD(c, "partition-specs[%zu].fields[%zu] repeats the field-id or name \"%s\"",
                       si, i, f->name);
    return 0;
}

static int check_specs(ck_t *c, const fl_ice_table_meta_t *m) {
    if (!m->n_specs) return BAD(c, "partition-specs is empty");
    if (check_list(c, m->specs, m->n_specs, FL_ICE_SPECS_MAX, "partition-specs")) return c->code;
    for (size_t i = 0; i < m->n_specs; i++) {
        const fl_ice_partition_spec_t *s = &m->specs[i];
        char where[48];
        snprintf(where, sizeof(where), "partition-specs[%zu].fields", i);
        if (s->spec_id < 0) return BAD(c, "partition-specs[%zu].spec-id negative", i);
        if (check_list(c, s->fields, s->n_fields, FL_ICE_PARTITION_FIELDS_MAX, where))
            return c->code;
        for (size_t f = 0; f < s->n_fields; f++)
            if (check_spec_field(c, m, s, i, f)) return c->code;
        for (size_t j = 0; j < i; j++)
            if (m->specs[j].spec_id == s->spec_id)
                return BAD(c, "partition-specs[%zu].spec-id %" PRId32 " not unique", i, s->spec_id);
    }
    if (!fl_ice_meta_spec(m, m->default_spec_id))
        return BAD(c, "default-spec-id %" PRId32 " names no spec", m->default_spec_id);
    return 0;
}

static int check_sort_order(ck_t *c, const fl_ice_table_meta_t *m, size_t i) {
    const fl_ice_sort_order_t *o = &m->sort_orders[i];
    char where[48];
    snprintf(where, sizeof(where), "sort-orders[%zu].fields", i);
    if (o->order_id < 0) return BAD(c, "sort-orders[%zu].order-id negative", i);
    if (check_list(c, o->fields, o->n_fields, FL_ICE_SORT_FIELDS_MAX, where)) return c->code;
    /* order 0 is "unsorted" and only that (the specification reserves it) */
    if ((o->order_id == 0) != (o->n_fields == 0))
        return BAD(c, "sort-orders[%zu]: order-id %" PRId32 " with %zu fields", i, o->order_id,
                   o->n_fields);
    for (size_t f = 0; f < o->n_fields; f++) {
        const fl_ice_field_t *col = fl_ice_meta_column(m, o->fields[f].source_id);
        if (!col || col->nested)
            return BAD(c, "%s[%zu].source-id %" PRId32 " names no primitive top-level column",
                       where, f, o->fields[f].source_id);
    }
    for (size_t j = 0; j < i; j++)
        if (m->sort_orders[j].order_id == o->order_id)
            return BAD(c, "sort-orders[%zu].order-id %" PRId32 " not unique", i, o->order_id);
    return 0;
}

static int check_sort_orders(ck_t *c, const fl_ice_table_meta_t *m) {
    if (check_list(c, m->sort_orders, m->n_sort_orders, FL_ICE_SORT_ORDERS_MAX, "sort-orders"))
        return c->code;
    bool found = m->default_sort_order_id == 0; /* unsorted needs no entry (pyiceberg) */
    for (size_t i = 0; i < m->n_sort_orders; i++) {
        if (check_sort_order(c, m, i)) return c->code;
        found |= m->sort_orders[i].order_id == m->default_sort_order_id;
    }
    if (!found)
        return BAD(c, "default-sort-order-id %" PRId32 " names no sort order",
                   m->default_sort_order_id);
    return 0;
}

static bool known_operation(const char *op) {
    return op && (!strcmp(op, "append") || !strcmp(op, "replace") || !strcmp(op, "overwrite") ||
                  !strcmp(op, "delete"));
}

static int check_snapshot(ck_t *c, const fl_ice_table_meta_t *m, size_t i) {
    const fl_ice_snapshot_t *s = &m->snapshots[i];
    char where[64];
    snprintf(where, sizeof(where), "snapshots[%zu].summary", i);
    if (s->snapshot_id < 0) return BAD(c, "snapshots[%zu].snapshot-id negative", i);
    if (s->parent_snapshot_id < FL_ICE_NONE)
        return BAD(c, "snapshots[%zu].parent-snapshot-id negative", i);
    if (s->sequence_number < 0 || s->sequence_number > m->last_sequence_number)
        return BAD(c, "snapshots[%zu].sequence-number %" PRId64
                      " negative or above last-sequence-number %" PRId64,
                   i, s->sequence_number, m->last_sequence_number);
    if (!s->manifest_list || !*s->manifest_list)
        return BAD(c, "snapshots[%zu].manifest-list missing", i);
    if (s->schema_id < FL_ICE_NO_SCHEMA) return BAD(c, "snapshots[%zu].schema-id negative", i);
    if (check_props(c, s->summary, s->n_summary, where)) return c->code;
    const char *op = fl_ice_prop_get(s->summary, s->n_summary, "operation");
    if (!known_operation(op))
        return BAD(c, "%s.operation \"%s\" not append, replace, overwrite or delete", where,
                   op ? op : "(missing)");
    return 0;
}

static int check_snapshots(ck_t *c, const fl_ice_table_meta_t *m) {
    if (check_list(c, m->snapshots, m->n_snapshots, FL_ICE_SNAPSHOTS_MAX, "snapshots"))
        return c->code;
    int64_t *ids = fl_malloc((m->n_snapshots ? m->n_snapshots : 1) * sizeof(*ids));
    int rc = 0;
    for (size_t i = 0; i < m->n_snapshots && !rc; i++) {
        rc = check_snapshot(c, m, i);
        ids[i] = m->snapshots[i].snapshot_id;
    }
    if (!rc) qsort(ids, m->n_snapshots, sizeof(*ids), cmp_i64);
    for (size_t i = 1; i < m->n_snapshots && !rc; i++)
        if (ids[i - 1] == ids[i]) rc = BAD(c, "snapshots: snapshot-id %" PRId64 " twice", ids[i]);
    bool found = m->current_snapshot_id == FL_ICE_NONE ||
                 (m->n_snapshots && bsearch(&m->current_snapshot_id, ids, m->n_snapshots,
                                            sizeof(*ids), cmp_i64));
    fl_free(ids);
    if (!rc && !found)
        rc = BAD(c, "current-snapshot-id %" PRId64 " names no snapshot", m->current_snapshot_id);
    return rc;
}

static int check_logs(ck_t *c, const fl_ice_table_meta_t *m) {
    if (check_list(c, m->snapshot_log, m->n_snapshot_log, FL_ICE_SNAPSHOTS_MAX, "snapshot-log") ||
        check_list(c, m->metadata_log, m->n_metadata_log, FL_ICE_METADATA_LOG_MAX, "metadata-log"))
        return c->code;
    for (size_t i = 0; i < m->n_snapshot_log; i++)
        if (m->snapshot_log[i].snapshot_id < 0)
            return BAD(c, "snapshot-log[%zu].snapshot-id negative", i);
    for (size_t i = 0; i < m->n_metadata_log; i++)
        if (!m->metadata_log[i].metadata_file || !*m->metadata_log[i].metadata_file)
            return BAD(c, "metadata-log[%zu].metadata-file missing", i);
    return 0;
}

static int check_top(ck_t *c, const fl_ice_table_meta_t *m) {
    size_t n = strnlen(m->table_uuid, sizeof(m->table_uuid));
    if (n != FL_ICE_TABLE_UUID_LEN || !fl_uuid_text_ok(m->table_uuid, n))
        return BAD(c, "table-uuid \"%.*s\" not a UUID", (int)n, m->table_uuid);
    if (!m->location || !*m->location) return BAD(c, "location missing");
    if (m->last_sequence_number < 0) return BAD(c, "last-sequence-number negative");
    if (m->last_column_id < 0 || m->last_column_id > FL_ICE_FIELD_ID_MAX)
        return BAD(c, "last-column-id %" PRId32 " out of range", m->last_column_id);
    if (m->last_partition_id < 0) return BAD(c, "last-partition-id negative");
    if (m->current_snapshot_id < FL_ICE_NONE) return BAD(c, "current-snapshot-id negative");
    return check_props(c, m->properties, m->n_properties, "properties");
}

int fl_ice_meta_check(const fl_ice_table_meta_t *m, int code, fl_error_t *err) {
    ck_t c = {code, err};
    if (check_top(&c, m) || check_schemas(&c, m) || check_specs(&c, m) ||
        check_sort_orders(&c, m) || check_snapshots(&c, m) || check_logs(&c, m))
        return code;
    return 0;
}
