/*
 * types_aggfn.c — aggregate function names, accepted types, parameters and
 * their JSON form (see types_aggfn.h).
 */
#include "types_aggfn.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "common_alloc.h"
#include "common_buf.h"
#include "types_schema.h"
#include "types_json.h"

static const char *const fl_aggfn_names[FL_AGGFN_COUNT] = {
#define FL_AGGFN_NAME_(e, name) name,
    FL_AGGFN_TYPES(FL_AGGFN_NAME_)
#undef FL_AGGFN_NAME_
};

const char *fl_aggfn_name(fl_aggfn_type_t t) {
    return t >= 0 && t < FL_AGGFN_COUNT ? fl_aggfn_names[t] : "unknown";
}

fl_aggfn_type_t fl_aggfn_from_string(const char *s) {
    if (!s) return FL_AGGFN_NONE;
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) n--;
    if (n == 0 || n > 64) return FL_AGGFN_NONE;
    char norm[65];
    for (size_t i = 0; i < n; i++) norm[i] = s[i] == '-' ? '_' : (char)tolower((unsigned char)s[i]);
    norm[n] = '\0';
    for (int t = 0; t < FL_AGGFN_COUNT; t++)
        if (strcmp(norm, fl_aggfn_names[t]) == 0) return (fl_aggfn_type_t)t;
    return FL_AGGFN_NONE;
}

/* The roots of AggFunctionType.getSupportedDataTypeRoots, in its order
 * (the order matters: the refusal message lists them). */
static const fl_type_root_t fl_aggfn_numeric_roots[] = {
    FL_TYPE_TINYINT, FL_TYPE_SMALLINT, FL_TYPE_INTEGER, FL_TYPE_BIGINT,
    FL_TYPE_FLOAT,   FL_TYPE_DOUBLE,   FL_TYPE_DECIMAL};
static const fl_type_root_t fl_aggfn_maxmin_roots[] = {
    FL_TYPE_CHAR,   FL_TYPE_STRING,  FL_TYPE_TINYINT, FL_TYPE_SMALLINT, FL_TYPE_INTEGER,
    FL_TYPE_BIGINT, FL_TYPE_FLOAT,   FL_TYPE_DOUBLE,  FL_TYPE_DECIMAL,  FL_TYPE_DATE,
    FL_TYPE_TIME,   FL_TYPE_TIMESTAMP, FL_TYPE_TIMESTAMP_LTZ};
static const fl_type_root_t fl_aggfn_bool_roots[] = {FL_TYPE_BOOLEAN};
static const fl_type_root_t fl_aggfn_bytes_roots[] = {FL_TYPE_BYTES};
static const fl_type_root_t fl_aggfn_string_roots[] = {FL_TYPE_STRING, FL_TYPE_CHAR};

#define FL_N_(a) (sizeof(a) / sizeof((a)[0]))

/* NULL with *n = 0 means every root. */
static const fl_type_root_t *fl_aggfn_roots(fl_aggfn_type_t t, size_t *n) {
    switch (t) {
    case FL_AGGFN_SUM:
    case FL_AGGFN_PRODUCT: *n = FL_N_(fl_aggfn_numeric_roots); return fl_aggfn_numeric_roots;
    case FL_AGGFN_MAX:
    case FL_AGGFN_MIN: *n = FL_N_(fl_aggfn_maxmin_roots); return fl_aggfn_maxmin_roots;
    case FL_AGGFN_BOOL_AND:
    case FL_AGGFN_BOOL_OR: *n = FL_N_(fl_aggfn_bool_roots); return fl_aggfn_bool_roots;
    case FL_AGGFN_RBM32:
    case FL_AGGFN_RBM64: *n = FL_N_(fl_aggfn_bytes_roots); return fl_aggfn_bytes_roots;
    case FL_AGGFN_LISTAGG:
    case FL_AGGFN_STRING_AGG: *n = FL_N_(fl_aggfn_string_roots); return fl_aggfn_string_roots;
    default: *n = 0; return NULL;
    }
}

bool fl_aggfn_accepts_root(fl_aggfn_type_t t, fl_type_root_t root) {
    size_t n;
    const fl_type_root_t *roots = fl_aggfn_roots(t, &n);
    if (!roots) return true;
    for (size_t i = 0; i < n; i++)
        if (roots[i] == root) return true;
    return false;
}

fl_aggfn_type_t fl_aggfn_json_type(const json_t *agg) {
    return fl_aggfn_from_string(json_string_value(json_object_get(agg, "type")));
}

const char *fl_aggfn_json_param(const json_t *agg, const char *key) {
    return json_string_value(json_object_get(json_object_get(agg, "parameters"), key));
}

/* a parameter value as the reference keeps it: JsonNode.asText */
static json_t *fl_aggfn_as_text(const json_t *v) {
    char *t = fl_json_text(v);
    json_t *s = json_string(t);
    fl_free(t);
    return s;
}

json_t *fl_aggfn_json_normalize(const json_t *agg) {
    fl_aggfn_type_t t = fl_aggfn_json_type(agg);
    if (t == FL_AGGFN_NONE) return NULL;
    json_t *out = json_object();
    json_object_set_new(out, "type", json_string(fl_aggfn_name(t)));
    const json_t *params = json_object_get(agg, "parameters");
    if (json_is_object(params) && json_object_size(params) > 0) {
        json_t *p = json_object();
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)params, k, v) json_object_set_new(p, k, fl_aggfn_as_text(v));
        json_object_set_new(out, "parameters", p);
    }
    return out;
}

static int fl_aggfn_check_params(const char *column, fl_aggfn_type_t t, const json_t *agg,
                                 fl_error_t *err) {
    const json_t *params = json_object_get(agg, "parameters");
    if (!json_is_object(params)) return 0;
    bool has_delim = t == FL_AGGFN_LISTAGG || t == FL_AGGFN_STRING_AGG;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)params, k, v) {
        if (!has_delim || strcmp(k, FL_AGGFN_PARAM_DELIMITER) != 0)
            return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                              "Invalid aggregation function for column '%s': Parameter '%s' is "
                              "not supported for aggregation function '%s'. Supported "
                              "parameters: %s",
                              column, k, fl_aggfn_name(t), has_delim ? "[delimiter]" : "none");
        const char *d = json_string_value(v);
        if (d && d[0] == '\0')
            return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                              "Invalid aggregation function for column '%s': Parameter '%s' for "
                              "aggregation function '%s' must be a non-empty string",
                              column, k, fl_aggfn_name(t));
    }
    return 0;
}

int fl_aggfn_validate_column(const char *column, const fl_datatype_t *type, const json_t *agg,
                             fl_error_t *err) {
    fl_aggfn_type_t t = fl_aggfn_json_type(agg);
    if (t == FL_AGGFN_NONE) return 0; /* Fluss drops an unknown function on parse */
    int rc = fl_aggfn_check_params(column, t, agg, err);
    if (rc) return rc;
    if (fl_aggfn_accepts_root(t, type->root)) return 0;
    size_t n;
    const fl_type_root_t *roots = fl_aggfn_roots(t, &n);
    fl_buf_t list, ty;
    fl_buf_init(&list);
    fl_buf_init(&ty);
    fl_buf_put_u8(&list, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) fl_buf_append(&list, ", ", 2);
        const char *r = fl_type_root_json_name(roots[i]);
        fl_buf_append(&list, r, strlen(r));
    }
    fl_buf_append(&list, "]", 2);
    fl_datatype_format(type, &ty);
    fl_buf_put_u8(&ty, '\0');
    rc = fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                    "Invalid aggregation function for column '%s': Data type for %s column must "
                    "be part of %s but was '%s'.",
                    column, fl_aggfn_name(t), (const char *)list.data, (const char *)ty.data);
    fl_buf_free(&list);
    fl_buf_free(&ty);
    return rc;
}

int fl_aggfn_validate_schema(const struct fl_schema *schema, fl_error_t *err) {
    for (size_t i = 0; i < schema->column_count; i++) {
        const fl_column_t *c = &schema->columns[i];
        if (!c->agg_function || fl_strlist_index(&schema->primary_key, c->name) >= 0) continue;
        int rc = fl_aggfn_validate_column(c->name, c->type, c->agg_function, err);
        if (rc) return rc;
    }
    return 0;
}
