/*
 * types_datatype.c — Fluss data type trees, their JSON form and a SQL-style
 * text form (see types_datatype.h).
 */
#include "types_datatype.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common_alloc.h"
#include "types_json.h"

static const char *const fl_type_json_names[] = {
#define FL_TYPE_JSON_NAME_(e, json, sql) json,
    FL_TYPE_ROOTS(FL_TYPE_JSON_NAME_)
#undef FL_TYPE_JSON_NAME_
};

static const char *const fl_type_sql_names[] = {
#define FL_TYPE_SQL_NAME_(e, json, sql) sql,
    FL_TYPE_ROOTS(FL_TYPE_SQL_NAME_)
#undef FL_TYPE_SQL_NAME_
};

const char *fl_type_root_json_name(fl_type_root_t root) {
    return root < FL_TYPE_ROOT_COUNT ? fl_type_json_names[root] : "?";
}

fl_datatype_t *fl_datatype_new(fl_type_root_t root) {
    fl_datatype_t *t = fl_calloc(1, sizeof(*t));
    t->root = root;
    t->nullable = true;
    switch (root) {
    case FL_TYPE_CHAR:
    case FL_TYPE_BINARY:
        t->length = 1;
        break;
    case FL_TYPE_DECIMAL:
        t->precision = 10;
        break;
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ:
        t->precision = 6;
        break;
    default:
        break;
    }
    return t;
}

void fl_datatype_destroy(fl_datatype_t *t) {
    if (!t) return;
    fl_datatype_destroy(t->element);
    fl_datatype_destroy(t->key);
    fl_datatype_destroy(t->value);
    for (size_t i = 0; i < t->field_count; i++) {
        fl_free(t->fields[i].name);
        fl_free(t->fields[i].description);
        fl_datatype_destroy(t->fields[i].type);
    }
    fl_free(t->fields);
    fl_free(t);
}

fl_datatype_t *fl_datatype_clone(const fl_datatype_t *t) {
    if (!t) return NULL;
    fl_datatype_t *c = fl_malloc(sizeof(*c));
    *c = *t;
    c->element = fl_datatype_clone(t->element);
    c->key = fl_datatype_clone(t->key);
    c->value = fl_datatype_clone(t->value);
    if (t->field_count) {
        c->fields = fl_calloc(t->field_count, sizeof(*c->fields));
        for (size_t i = 0; i < t->field_count; i++) {
            c->fields[i].name = fl_strdup(t->fields[i].name);
            c->fields[i].description =
                t->fields[i].description ? fl_strdup(t->fields[i].description) : NULL;
            c->fields[i].field_id = t->fields[i].field_id;
            c->fields[i].type = fl_datatype_clone(t->fields[i].type);
        }
    } else {
        c->fields = NULL;
    }
    return c;
}

static bool fl_str_eq_opt(const char *a, const char *b) {
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

bool fl_datatype_equal(const fl_datatype_t *a, const fl_datatype_t *b) {
    if (!a || !b) return a == b;
    if (a->root != b->root || a->nullable != b->nullable || a->length != b->length ||
        a->precision != b->precision || a->scale != b->scale ||
        a->field_count != b->field_count)
        return false;
    if (!fl_datatype_equal(a->element, b->element) || !fl_datatype_equal(a->key, b->key) ||
        !fl_datatype_equal(a->value, b->value))
        return false;
    for (size_t i = 0; i < a->field_count; i++) {
        if (strcmp(a->fields[i].name, b->fields[i].name) != 0 ||
            !fl_str_eq_opt(a->fields[i].description, b->fields[i].description) ||
            a->fields[i].field_id != b->fields[i].field_id ||
            !fl_datatype_equal(a->fields[i].type, b->fields[i].type))
            return false;
    }
    return true;
}

/* ---- validation shared by JSON and text parsing ---- */

static int fl_datatype_check(const fl_datatype_t *t, fl_error_t *err) {
    const char *name = fl_type_sql_names[t->root];
    switch (t->root) {
    case FL_TYPE_CHAR:
    case FL_TYPE_BINARY:
        if (t->length < 1)
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "%s length must be between 1 and %d (both inclusive), got %d",
                              name, INT32_MAX, t->length);
        break;
    case FL_TYPE_DECIMAL:
        if (t->precision < 1 || t->precision > FL_DECIMAL_PRECISION_MAX)
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "Decimal precision must be between 1 and %d (both inclusive), got %d",
                              FL_DECIMAL_PRECISION_MAX, t->precision);
        if (t->scale < 0 || t->scale > t->precision)
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "Decimal scale must be between 0 and the precision %d (both inclusive), got %d",
                              t->precision, t->scale);
        break;
    case FL_TYPE_TIME:
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ:
        if (t->precision < 0 || t->precision > FL_TIME_PRECISION_MAX)
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "%s precision must be between 0 and %d (both inclusive), got %d",
                              name, FL_TIME_PRECISION_MAX, t->precision);
        break;
    case FL_TYPE_ROW:
        for (size_t i = 0; i < t->field_count; i++)
            for (size_t k = 0; k < i; k++)
                if (strcmp(t->fields[i].name, t->fields[k].name) == 0)
                    return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                                      "Field names must be unique, found duplicate '%s'",
                                      t->fields[i].name);
        break;
    default:
        break;
    }
    return 0;
}

/* ---- JSON ---- */

/* A required int member, read with JsonNode.asInt (types_json.h): any
 * value is an int; only its absence is refused. */
static int fl_json_int(const json_t *obj, const char *key, int32_t *out, fl_error_t *err) {
    const json_t *v = json_object_get(obj, key);
    if (!v)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION, "data type JSON needs '%s'",
                          key);
    *out = fl_json_as_int(v);
    return 0;
}

static int fl_datatype_from_json_depth(const json_t *j, int depth, fl_datatype_t **out,
                                       fl_error_t *err);

static int fl_datatype_child(const json_t *j, const char *key, int depth,
                             fl_datatype_t **out, fl_error_t *err) {
    const json_t *c = json_object_get(j, key);
    if (!c)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "data type JSON needs '%s'", key);
    return fl_datatype_from_json_depth(c, depth + 1, out, err);
}

static int fl_datatype_row_from_json(const json_t *j, int depth, fl_datatype_t *t,
                                     fl_error_t *err) {
    const json_t *fields = json_object_get(j, "fields");
    if (!json_is_array(fields))
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "ROW type JSON needs a 'fields' array");
    size_t n = json_array_size(fields);
    if (n > FL_ROW_FIELDS_MAX)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION, "ROW has too many fields");
    t->fields = fl_calloc(n ? n : 1, sizeof(*t->fields));
    for (size_t i = 0; i < n; i++) {
        const json_t *f = json_array_get(fields, i);
        const json_t *name = json_object_get(f, "name");
        if (!name)
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "ROW field %zu needs a 'name'", i);
        fl_row_field_t *rf = &t->fields[i];
        t->field_count = i + 1;
        rf->name = fl_json_text(name);
        rf->field_id = -1;
        /* ours: a null description is none (the reference keeps "null") */
        if (fl_json_has_non_null(f, "description"))
            rf->description = fl_json_text(json_object_get(f, "description"));
        if (json_object_get(f, "field_id")) rf->field_id = fl_json_as_int(json_object_get(f, "field_id"));
        int rc = fl_datatype_child(f, "field_type", depth, &rf->type, err);
        if (rc) return rc;
    }
    return 0;
}

static int fl_datatype_from_json_depth(const json_t *j, int depth, fl_datatype_t **out,
                                       fl_error_t *err) {
    *out = NULL;
    if (depth > FL_TYPE_DEPTH_MAX)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION, "data type nested too deeply");
    const json_t *type_v = json_object_get(j, "type");
    if (!json_is_object(j) || !type_v)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "data type JSON must be an object with a 'type'");
    char *name = fl_json_text(type_v); /* DataTypeRoot.valueOf(asText()) */
    int root = -1;
    for (int r = 0; r < FL_TYPE_ROOT_COUNT; r++)
        if (strcmp(name, fl_type_json_names[r]) == 0) root = r;
    if (root < 0) {
        int rc = fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                            "unknown data type '%s' (not a DataTypeRoot name)", name);
        fl_free(name);
        return rc;
    }
    fl_free(name);

    fl_datatype_t *t = fl_datatype_new((fl_type_root_t)root);
    int rc = 0;
    const json_t *nullable = json_object_get(j, "nullable");
    if (nullable) t->nullable = fl_json_as_bool(nullable); /* JsonNode.asBoolean */
    switch (t->root) {
    case FL_TYPE_CHAR:
    case FL_TYPE_BINARY:
        rc = fl_json_int(j, "length", &t->length, err);
        break;
    case FL_TYPE_DECIMAL:
        rc = fl_json_int(j, "precision", &t->precision, err);
        if (!rc) rc = fl_json_int(j, "scale", &t->scale, err);
        break;
    case FL_TYPE_TIME:
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ:
        rc = fl_json_int(j, "precision", &t->precision, err);
        break;
    case FL_TYPE_ARRAY:
        rc = fl_datatype_child(j, "element_type", depth, &t->element, err);
        break;
    case FL_TYPE_MAP:
        rc = fl_datatype_child(j, "key_type", depth, &t->key, err);
        if (!rc) rc = fl_datatype_child(j, "value_type", depth, &t->value, err);
        break;
    case FL_TYPE_ROW:
        rc = fl_datatype_row_from_json(j, depth, t, err);
        break;
    default:
        break;
    }
    if (!rc) rc = fl_datatype_check(t, err);
    if (rc) {
        fl_datatype_destroy(t);
        return rc;
    }
    *out = t;
    return 0;
}

int fl_datatype_from_json(const json_t *j, fl_datatype_t **out, fl_error_t *err) {
    return fl_datatype_from_json_depth(j, 0, out, err);
}

json_t *fl_datatype_to_json(const fl_datatype_t *t) {
    json_t *j = json_object();
    json_object_set_new(j, "type", json_string(fl_type_json_names[t->root]));
    if (!t->nullable) json_object_set_new(j, "nullable", json_false());
    switch (t->root) {
    case FL_TYPE_CHAR:
    case FL_TYPE_BINARY:
        json_object_set_new(j, "length", json_integer(t->length));
        break;
    case FL_TYPE_DECIMAL:
        json_object_set_new(j, "precision", json_integer(t->precision));
        json_object_set_new(j, "scale", json_integer(t->scale));
        break;
    case FL_TYPE_TIME:
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ:
        json_object_set_new(j, "precision", json_integer(t->precision));
        break;
    case FL_TYPE_ARRAY:
        json_object_set_new(j, "element_type", fl_datatype_to_json(t->element));
        break;
    case FL_TYPE_MAP:
        json_object_set_new(j, "key_type", fl_datatype_to_json(t->key));
        json_object_set_new(j, "value_type", fl_datatype_to_json(t->value));
        break;
    case FL_TYPE_ROW: {
        json_t *arr = json_array();
        for (size_t i = 0; i < t->field_count; i++) {
            json_t *f = json_object();
            json_object_set_new(f, "name", json_string(t->fields[i].name));
            json_object_set_new(f, "field_type", fl_datatype_to_json(t->fields[i].type));
            if (t->fields[i].description)
                json_object_set_new(f, "description", json_string(t->fields[i].description));
            json_object_set_new(f, "field_id", json_integer(t->fields[i].field_id));
            json_array_append_new(arr, f);
        }
        json_object_set_new(j, "fields", arr);
        break;
    }
    default:
        break;
    }
    return j;
}

/* ---- SQL-style text ---- */

static void fl_skip_ws(const char **p) {
    while (isspace((unsigned char)**p)) (*p)++;
}

static bool fl_take_word(const char **p, const char *word) {
    fl_skip_ws(p);
    size_t n = strlen(word);
    if (strncasecmp(*p, word, n) == 0 && !isalnum((unsigned char)(*p)[n]) && (*p)[n] != '_') {
        *p += n;
        return true;
    }
    return false;
}

static bool fl_take_char(const char **p, char c) {
    fl_skip_ws(p);
    if (**p == c) {
        (*p)++;
        return true;
    }
    return false;
}

static int fl_take_int(const char **p, int32_t *out, fl_error_t *err) {
    fl_skip_ws(p);
    if (!isdigit((unsigned char)**p))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "expected a number at '%.20s'", *p);
    long v = 0;
    while (isdigit((unsigned char)**p)) {
        v = v * 10 + (**p - '0');
        if (v > INT32_MAX) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "number too large");
        (*p)++;
    }
    *out = (int32_t)v;
    return 0;
}

/* Optional "(n)" or "(p, s)" after a type name. */
static int fl_take_params(const char **p, int32_t *a, int32_t *b, int want, fl_error_t *err) {
    if (!fl_take_char(p, '(')) return 0;
    int rc = fl_take_int(p, a, err);
    if (rc) return rc;
    if (want == 2 && fl_take_char(p, ',')) {
        rc = fl_take_int(p, b, err);
        if (rc) return rc;
    }
    if (!fl_take_char(p, ')'))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "expected ')' at '%.20s'", *p);
    return 0;
}

static int fl_take_ident(const char **p, char **out, fl_error_t *err) {
    fl_skip_ws(p);
    const char *s = *p;
    if (*s == '`') {
        const char *e = strchr(s + 1, '`');
        if (!e) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "unterminated `name`");
        *out = fl_strndup(s + 1, (size_t)(e - s - 1));
        *p = e + 1;
        return 0;
    }
    while (isalnum((unsigned char)**p) || **p == '_' || **p == '-') (*p)++;
    if (*p == s) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "expected a name at '%.20s'", s);
    *out = fl_strndup(s, (size_t)(*p - s));
    return 0;
}

static int fl_datatype_parse_depth(const char **p, int depth, fl_datatype_t **out,
                                   fl_error_t *err);

static int fl_datatype_parse_row(const char **p, int depth, fl_datatype_t *t, fl_error_t *err) {
    char close = fl_take_char(p, '<') ? '>' : (fl_take_char(p, '(') ? ')' : 0);
    if (!close) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "ROW needs <fields>");
    size_t cap = 0;
    do {
        if (t->field_count == cap) {
            cap = cap ? cap * 2 : 4;
            t->fields = fl_realloc(t->fields, cap * sizeof(*t->fields));
        }
        fl_row_field_t *f = &t->fields[t->field_count];
        memset(f, 0, sizeof(*f));
        f->field_id = -1;
        int rc = fl_take_ident(p, &f->name, err);
        if (rc) return rc;
        t->field_count++;
        rc = fl_datatype_parse_depth(p, depth + 1, &f->type, err);
        if (rc) return rc;
    } while (fl_take_char(p, ','));
    if (!fl_take_char(p, close))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "expected '%c' at '%.20s'", close, *p);
    return 0;
}

static int fl_datatype_parse_depth(const char **p, int depth, fl_datatype_t **out,
                                   fl_error_t *err) {
    *out = NULL;
    if (depth > FL_TYPE_DEPTH_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "type nested too deeply");
    static const struct {
        const char *word;
        fl_type_root_t root;
    } words[] = {
        {"BOOLEAN", FL_TYPE_BOOLEAN}, {"TINYINT", FL_TYPE_TINYINT},
        {"SMALLINT", FL_TYPE_SMALLINT}, {"INTEGER", FL_TYPE_INTEGER},
        {"INT", FL_TYPE_INTEGER},     {"BIGINT", FL_TYPE_BIGINT},
        {"FLOAT", FL_TYPE_FLOAT},     {"DOUBLE", FL_TYPE_DOUBLE},
        {"DECIMAL", FL_TYPE_DECIMAL}, {"CHAR", FL_TYPE_CHAR},
        {"STRING", FL_TYPE_STRING},   {"VARCHAR", FL_TYPE_STRING},
        {"BINARY", FL_TYPE_BINARY},   {"BYTES", FL_TYPE_BYTES},
        {"VARBINARY", FL_TYPE_BYTES}, {"DATE", FL_TYPE_DATE},
        {"TIME", FL_TYPE_TIME},       {"TIMESTAMP_LTZ", FL_TYPE_TIMESTAMP_LTZ},
        {"TIMESTAMP", FL_TYPE_TIMESTAMP}, {"ARRAY", FL_TYPE_ARRAY},
        {"MAP", FL_TYPE_MAP},         {"ROW", FL_TYPE_ROW},
    };
    int root = -1;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (fl_take_word(p, words[i].word)) {
            root = (int)words[i].root;
            break;
        }
    if (root < 0) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "unknown type at '%.20s'", *p);
    fl_datatype_t *t = fl_datatype_new((fl_type_root_t)root);
    int rc = 0;
    int32_t ignored = 0;
    switch (t->root) {
    case FL_TYPE_CHAR:
    case FL_TYPE_BINARY:
        rc = fl_take_params(p, &t->length, &ignored, 1, err);
        break;
    case FL_TYPE_STRING:
    case FL_TYPE_BYTES: /* VARCHAR(n) / VARBINARY(n) are unbounded here */
        rc = fl_take_params(p, &ignored, &ignored, 1, err);
        break;
    case FL_TYPE_DECIMAL:
        t->scale = 0;
        rc = fl_take_params(p, &t->precision, &t->scale, 2, err);
        break;
    case FL_TYPE_TIME:
    case FL_TYPE_TIMESTAMP:
        rc = fl_take_params(p, &t->precision, &ignored, 1, err);
        if (!rc && t->root == FL_TYPE_TIMESTAMP && fl_take_word(p, "WITH")) {
            if (!fl_take_word(p, "LOCAL") || !fl_take_word(p, "TIME") || !fl_take_word(p, "ZONE"))
                rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "expected WITH LOCAL TIME ZONE");
            t->root = FL_TYPE_TIMESTAMP_LTZ;
        }
        break;
    case FL_TYPE_TIMESTAMP_LTZ:
        rc = fl_take_params(p, &t->precision, &ignored, 1, err);
        break;
    case FL_TYPE_ARRAY:
        if (!fl_take_char(p, '<')) {
            rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "ARRAY needs <element type>");
            break;
        }
        rc = fl_datatype_parse_depth(p, depth + 1, &t->element, err);
        if (!rc && !fl_take_char(p, '>'))
            rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "expected '>' at '%.20s'", *p);
        break;
    case FL_TYPE_MAP:
        if (!fl_take_char(p, '<')) {
            rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "MAP needs <key type, value type>");
            break;
        }
        rc = fl_datatype_parse_depth(p, depth + 1, &t->key, err);
        if (!rc && !fl_take_char(p, ','))
            rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "expected ',' at '%.20s'", *p);
        if (!rc) rc = fl_datatype_parse_depth(p, depth + 1, &t->value, err);
        if (!rc && !fl_take_char(p, '>'))
            rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "expected '>' at '%.20s'", *p);
        break;
    case FL_TYPE_ROW:
        rc = fl_datatype_parse_row(p, depth, t, err);
        break;
    default:
        break;
    }
    if (!rc) {
        if (fl_take_word(p, "NOT")) {
            if (!fl_take_word(p, "NULL"))
                rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "expected NULL after NOT");
            t->nullable = false;
        } else {
            (void)fl_take_word(p, "NULL");
        }
    }
    if (!rc) rc = fl_datatype_check(t, err);
    if (rc) {
        fl_datatype_destroy(t);
        return rc;
    }
    *out = t;
    return 0;
}

int fl_datatype_parse(const char **text, fl_datatype_t **out, fl_error_t *err) {
    return fl_datatype_parse_depth(text, 0, out, err);
}

void fl_datatype_format(const fl_datatype_t *t, fl_buf_t *out) {
    char tmp[64];
    const char *name = fl_type_sql_names[t->root];
    fl_buf_append(out, name, strlen(name));
    switch (t->root) {
    case FL_TYPE_CHAR:
    case FL_TYPE_BINARY:
        snprintf(tmp, sizeof(tmp), "(%d)", t->length);
        fl_buf_append(out, tmp, strlen(tmp));
        break;
    case FL_TYPE_DECIMAL:
        snprintf(tmp, sizeof(tmp), "(%d, %d)", t->precision, t->scale);
        fl_buf_append(out, tmp, strlen(tmp));
        break;
    case FL_TYPE_TIME:
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ:
        snprintf(tmp, sizeof(tmp), "(%d)", t->precision);
        fl_buf_append(out, tmp, strlen(tmp));
        break;
    case FL_TYPE_ARRAY:
        fl_buf_put_u8(out, '<');
        fl_datatype_format(t->element, out);
        fl_buf_put_u8(out, '>');
        break;
    case FL_TYPE_MAP:
        fl_buf_put_u8(out, '<');
        fl_datatype_format(t->key, out);
        fl_buf_append(out, ", ", 2);
        fl_datatype_format(t->value, out);
        fl_buf_put_u8(out, '>');
        break;
    case FL_TYPE_ROW:
        fl_buf_put_u8(out, '<');
        for (size_t i = 0; i < t->field_count; i++) {
            if (i) fl_buf_append(out, ", ", 2);
            const char *fname = t->fields[i].name;
            bool plain = *fname != '\0';
            for (const char *c = fname; *c; c++)
                if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-') plain = false;
            if (!plain) fl_buf_put_u8(out, '`');
            fl_buf_append(out, fname, strlen(fname));
            if (!plain) fl_buf_put_u8(out, '`');
            fl_buf_put_u8(out, ' ');
            fl_datatype_format(t->fields[i].type, out);
        }
        fl_buf_put_u8(out, '>');
        break;
    default:
        break;
    }
    if (!t->nullable) fl_buf_append(out, " NOT NULL", 9);
}

void fl_datatype_visit_field_ids(const fl_datatype_t *t,
                                 void (*fn)(int32_t id, void *ctx), void *ctx) {
    if (!t) return;
    fl_datatype_visit_field_ids(t->element, fn, ctx);
    fl_datatype_visit_field_ids(t->key, fn, ctx);
    fl_datatype_visit_field_ids(t->value, fn, ctx);
    for (size_t i = 0; i < t->field_count; i++) {
        fn(t->fields[i].field_id, ctx);
        fl_datatype_visit_field_ids(t->fields[i].type, fn, ctx);
    }
}

void fl_datatype_reassign_field_ids(fl_datatype_t *t, int32_t *highest) {
    if (!t) return;
    fl_datatype_reassign_field_ids(t->element, highest);
    fl_datatype_reassign_field_ids(t->key, highest);
    fl_datatype_reassign_field_ids(t->value, highest);
    for (size_t i = 0; i < t->field_count; i++) {
        t->fields[i].field_id = ++*highest;
        fl_datatype_reassign_field_ids(t->fields[i].type, highest);
    }
}

bool fl_datatype_has_statistics(const fl_datatype_t *t) {
    switch (t->root) {
    case FL_TYPE_BOOLEAN: case FL_TYPE_TINYINT: case FL_TYPE_SMALLINT: case FL_TYPE_INTEGER:
    case FL_TYPE_BIGINT: case FL_TYPE_FLOAT: case FL_TYPE_DOUBLE: case FL_TYPE_STRING:
    case FL_TYPE_CHAR: case FL_TYPE_DECIMAL: case FL_TYPE_DATE: case FL_TYPE_TIME:
    case FL_TYPE_TIMESTAMP: case FL_TYPE_TIMESTAMP_LTZ:
        return true;
    default:
        return false;
    }
}
