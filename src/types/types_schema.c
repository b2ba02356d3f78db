/*
 * types_schema.c — schema model, normalization and JSON (types_schema.h).
 */
#include "types_schema.h"

#include "types_aggfn.h"
#include "types_json.h"

#include <string.h>

#include "common_alloc.h"

void fl_schema_free(fl_schema_t *s) {
    for (size_t i = 0; i < s->column_count; i++) {
        fl_free(s->columns[i].name);
        fl_free(s->columns[i].comment);
        fl_datatype_destroy(s->columns[i].type);
        if (s->columns[i].agg_function) json_decref(s->columns[i].agg_function);
    }
    fl_free(s->columns);
    fl_strlist_free(&s->primary_key);
    fl_strlist_free(&s->auto_increment);
    memset(s, 0, sizeof(*s));
}

void fl_schema_copy(fl_schema_t *dst, const fl_schema_t *src) {
    memset(dst, 0, sizeof(*dst));
    dst->columns = fl_calloc(src->column_count ? src->column_count : 1, sizeof(fl_column_t));
    dst->column_count = src->column_count;
    for (size_t i = 0; i < src->column_count; i++) {
        const fl_column_t *c = &src->columns[i];
        dst->columns[i].name = fl_strdup(c->name);
        dst->columns[i].type = fl_datatype_clone(c->type);
        dst->columns[i].comment = c->comment ? fl_strdup(c->comment) : NULL;
        dst->columns[i].id = c->id;
        dst->columns[i].agg_function = c->agg_function ? json_deep_copy(c->agg_function) : NULL;
    }
    dst->has_primary_key = src->has_primary_key;
    fl_strlist_copy(&dst->primary_key, &src->primary_key);
    fl_strlist_copy(&dst->auto_increment, &src->auto_increment);
    dst->highest_field_id = src->highest_field_id;
}

int fl_schema_column_index(const fl_schema_t *s, const char *name) {
    for (size_t i = 0; i < s->column_count; i++)
        if (strcmp(s->columns[i].name, name) == 0) return (int)i;
    return -1;
}

void fl_schema_add_column(fl_schema_t *s, const char *name, fl_datatype_t *type,
                          const char *comment) {
    s->columns = fl_realloc(s->columns, (s->column_count + 1) * sizeof(fl_column_t));
    fl_column_t *c = &s->columns[s->column_count++];
    memset(c, 0, sizeof(*c));
    c->name = fl_strdup(name);
    c->type = type;
    c->comment = comment ? fl_strdup(comment) : NULL;
    c->id = -1;
}

typedef struct fl_id_scan {
    int32_t max;
    int32_t *ids;
    size_t count;
    size_t cap;
} fl_id_scan_t;

static void fl_id_collect(int32_t id, void *ctx) {
    fl_id_scan_t *scan = ctx;
    if (id > scan->max) scan->max = id;
    if (scan->count == scan->cap) {
        scan->cap = scan->cap ? scan->cap * 2 : 16;
        scan->ids = fl_realloc(scan->ids, scan->cap * sizeof(int32_t));
    }
    scan->ids[scan->count++] = id;
}

static void fl_schema_collect_ids(const fl_schema_t *s, fl_id_scan_t *scan) {
    for (size_t i = 0; i < s->column_count; i++) {
        fl_id_collect(s->columns[i].id, scan);
        fl_datatype_visit_field_ids(s->columns[i].type, fl_id_collect, scan);
    }
}

void fl_schema_assign_ids(fl_schema_t *s) {
    int32_t next = s->highest_field_id;
    for (size_t i = 0; i < s->column_count; i++) {
        if (s->columns[i].id >= 0) continue;
        s->columns[i].id = ++next;
        fl_datatype_reassign_field_ids(s->columns[i].type, &next);
    }
    fl_id_scan_t scan = {.max = -1};
    fl_schema_collect_ids(s, &scan);
    if (scan.max > s->highest_field_id) s->highest_field_id = scan.max;
    if (next > s->highest_field_id) s->highest_field_id = next;
    fl_free(scan.ids);
}

/* "[a, b, c]" as Java prints a list; the error message buffer bounds it. */
static void fl_column_names_text(const fl_schema_t *s, char *out, size_t cap) {
    size_t n = (size_t)snprintf(out, cap, "[");
    for (size_t i = 0; i < s->column_count && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? ", " : "", s->columns[i].name);
    if (n < cap) snprintf(out + n, cap - n, "]");
}

static void fl_names_list_text(const fl_strlist_t *l, char *out, size_t cap) {
    size_t n = (size_t)snprintf(out, cap, "[");
    for (size_t i = 0; i < l->count && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? ", " : "", l->items[i]);
    if (n < cap) snprintf(out + n, cap - n, "]");
}

static int fl_schema_normalize(fl_schema_t *s, fl_error_t *err) {
    char cols[FL_ERROR_MSG_MAX], keys[FL_ERROR_MSG_MAX];
    for (size_t i = 0; i < s->column_count; i++)
        for (size_t k = 0; k < i; k++)
            if (strcmp(s->columns[i].name, s->columns[k].name) == 0) {
                fl_column_names_text(s, cols, sizeof(cols));
                return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                                  "Table column %s must not contain duplicate fields. Found: [%s]",
                                  cols, s->columns[i].name);
            }
    fl_id_scan_t scan = {.max = -1};
    fl_schema_collect_ids(s, &scan);
    int rc = 0;
    for (size_t i = 0; i < scan.count && !rc; i++)
        for (size_t k = 0; k < i; k++)
            if (scan.ids[i] == scan.ids[k] && scan.ids[i] >= 0) {
                rc = fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                                "All field IDs (including nested fields) must be unique, "
                                "found %d twice",
                                scan.ids[i]);
                break;
            }
    if (!rc && s->column_count && s->highest_field_id < scan.max)
        rc = fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                        "Highest field ID (%d) must be greater than or equal to the maximum "
                        "field ID (%d) including nested fields",
                        s->highest_field_id, scan.max);
    fl_free(scan.ids);
    if (rc) return rc;

    if (!s->has_primary_key) {
        if (s->auto_increment.count)
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "Auto increment column can only be used in primary-key table.");
        return 0;
    }
    if (s->primary_key.count == 0)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "Primary key constraint must be defined for at least a single column.");
    for (size_t i = 0; i < s->primary_key.count; i++) {
        const char *pk = s->primary_key.items[i];
        if (fl_strlist_index(&s->primary_key, pk) != (int)i)
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "Primary key constraint must not contain duplicate columns. "
                              "Found: [%s]",
                              pk);
        int idx = fl_schema_column_index(s, pk);
        if (idx < 0) {
            fl_column_names_text(s, cols, sizeof(cols));
            fl_names_list_text(&s->primary_key, keys, sizeof(keys));
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "Table column %s should include all primary key constraint %s",
                              cols, keys);
        }
        s->columns[idx].type->nullable = false;
    }
    for (size_t i = 0; i < s->auto_increment.count; i++) {
        int idx = fl_schema_column_index(s, s->auto_increment.items[i]);
        if (idx < 0) {
            fl_column_names_text(s, cols, sizeof(cols));
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "Auto increment column %s does not exist in table columns %s.",
                              s->auto_increment.items[i], cols);
        }
        if (fl_strlist_index(&s->primary_key, s->auto_increment.items[i]) >= 0)
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "Auto increment column can not be used as the primary key.");
    }
    for (size_t i = 0; i < s->column_count; i++)
        if (s->columns[i].agg_function &&
            fl_strlist_index(&s->primary_key, s->columns[i].name) >= 0)
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "Cannot set aggregation function for primary key column '%s'. "
                              "Primary key columns automatically use 'primary-key' aggregation.",
                              s->columns[i].name);
    /* after the aggregation check, as Schema.normalizeColumns orders them */
    for (size_t i = 0; i < s->auto_increment.count; i++) {
        fl_type_root_t r = s->columns[fl_schema_column_index(s, s->auto_increment.items[i])]
                               .type->root;
        if (r != FL_TYPE_INTEGER && r != FL_TYPE_BIGINT)
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "The data type of auto increment column must be INT or BIGINT.");
    }
    return 0;
}

/* One element of "columns" (ColumnJsonSerde): an object with a "name"
 * (any value, read as text) and a "data_type"; "comment" and
 * "agg_function" when not null, "id" as an int when present. */
static int fl_column_from_json(const json_t *c, size_t i, fl_schema_t *out, size_t *with_id,
                               fl_error_t *err) {
    const json_t *name_v = json_object_get(c, "name");
    if (!json_is_object(c) || !name_v)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "column %zu has no 'name' (a column is an object with a name and a "
                          "data_type)",
                          i);
    char *name = fl_json_text(name_v);
    fl_datatype_t *type = NULL;
    int rc = fl_datatype_from_json(json_object_get(c, "data_type"), &type, err);
    if (rc) {
        fl_free(name);
        return rc;
    }
    char *comment = fl_json_has_non_null(c, "comment")
                        ? fl_json_text(json_object_get(c, "comment"))
                        : NULL;
    fl_schema_add_column(out, name, type, comment);
    fl_free(comment);
    fl_free(name);
    fl_column_t *col = &out->columns[out->column_count - 1];
    const json_t *id = json_object_get(c, "id");
    if (id) {
        /* ours: a negative id other than -1 ("not set") is refused; the
         * reference would take it as set */
        col->id = fl_json_as_int(id);
        if (col->id < -1)
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "column '%s' has id %d; ids are -1 (not set) or at least 0",
                              col->name, col->id);
        if (col->id >= 0) (*with_id)++;
    }
    if (fl_json_has_non_null(c, "agg_function")) {
        const json_t *agg = json_object_get(c, "agg_function");
        if (!json_object_get(agg, "type"))
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "column '%s' has an 'agg_function' without a 'type'", col->name);
        /* as Fluss's parse + re-serialize leaves it: an unknown function
         * (any type that is not a function's name) is dropped, names and
         * parameter values canonical */
        col->agg_function = fl_aggfn_json_normalize(agg);
    }
    return 0;
}

int fl_schema_from_json(const json_t *j, fl_schema_t *out, fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    out->highest_field_id = -1;
    int rc = 0;
    const json_t *cols = json_object_get(j, "columns");
    if (!json_is_object(j) || !cols) {
        rc = fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                        "schema JSON must be an object with 'columns'");
        goto fail;
    }
    size_t with_id = 0, n = 0;
    fl_json_iter_t it = fl_json_iter(cols);
    for (const json_t *c; (c = fl_json_next(&it)); n++) {
        if (n == FL_SCHEMA_COLUMNS_MAX) {
            rc = fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                            "too many columns: more than %d", FL_SCHEMA_COLUMNS_MAX);
            goto fail;
        }
        if ((rc = fl_column_from_json(c, n, out, &with_id, err))) goto fail;
    }
    if (with_id != 0 && with_id != n) {
        rc = fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                        "All columns must have columnId or none of them must have columnId.");
        goto fail;
    }
    const json_t *pk = json_object_get(j, "primary_key");
    if (pk) {
        out->has_primary_key = true;
        fl_json_text_list(pk, &out->primary_key);
    }
    const json_t *ai = json_object_get(j, "auto_increment_column");
    if (ai) fl_json_text_list(ai, &out->auto_increment);
    if (out->auto_increment.count > 1) { /* Schema.Builder.enableAutoIncrement's own check */
        rc = fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                        "Multiple auto increment columns are not supported yet.");
        goto fail;
    }
    if (with_id == 0) {
        /* an old-style schema: ids are positions, nested ids stay as given */
        for (size_t i = 0; i < n; i++) out->columns[i].id = (int32_t)i;
        out->highest_field_id = (int32_t)n - 1;
    } else {
        fl_id_scan_t scan = {.max = -1};
        fl_schema_collect_ids(out, &scan);
        out->highest_field_id = scan.max;
        fl_free(scan.ids);
    }
    const json_t *hi = json_object_get(j, "highest_field_id");
    if (hi) {
        out->highest_field_id = fl_json_as_int(hi);
        if (out->highest_field_id < -1) {
            rc = fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                            "'highest_field_id' is %d; it is at least -1",
                            out->highest_field_id);
            goto fail;
        }
    }
    if ((rc = fl_schema_normalize(out, err))) goto fail;
    return 0;
fail:
    fl_schema_free(out);
    return rc;
}

static json_t *fl_strlist_to_json(const fl_strlist_t *l) {
    json_t *a = json_array();
    for (size_t i = 0; i < l->count; i++) json_array_append_new(a, json_string(l->items[i]));
    return a;
}

json_t *fl_schema_to_json(const fl_schema_t *s) {
    json_t *j = json_object();
    json_object_set_new(j, "version", json_integer(1));
    json_t *cols = json_array();
    for (size_t i = 0; i < s->column_count; i++) {
        const fl_column_t *c = &s->columns[i];
        json_t *cj = json_object();
        json_object_set_new(cj, "name", json_string(c->name));
        json_object_set_new(cj, "data_type", fl_datatype_to_json(c->type));
        if (c->comment) json_object_set_new(cj, "comment", json_string(c->comment));
        if (c->agg_function) json_object_set(cj, "agg_function", c->agg_function);
        json_object_set_new(cj, "id", json_integer(c->id));
        json_array_append_new(cols, cj);
    }
    json_object_set_new(j, "columns", cols);
    if (s->has_primary_key) json_object_set_new(j, "primary_key", fl_strlist_to_json(&s->primary_key));
    if (s->auto_increment.count)
        json_object_set_new(j, "auto_increment_column", fl_strlist_to_json(&s->auto_increment));
    json_object_set_new(j, "highest_field_id", json_integer(s->highest_field_id));
    return j;
}

int fl_schema_statistics_columns(const fl_schema_t *s, const char *spec, int *out, size_t cap,
                                 size_t *count, fl_error_t *err) {
    *count = 0;
    const char *p = spec;
    while (*p == ' ' || *p == '\t') p++;
    size_t tl = strlen(p);
    while (tl && (p[tl - 1] == ' ' || p[tl - 1] == '\t')) tl--;
    bool all = tl == 1 && p[0] == '*';
    bool *chosen = fl_calloc(s->column_count ? s->column_count : 1, sizeof(bool));
    size_t named = 0;
    int rc = 0;
    for (; !all && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len && (*p == ' ' || *p == '\t')) p++, len--;
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t')) len--;
        if (len) {
            char name[256];
            if (len >= sizeof(name)) len = sizeof(name) - 1;
            memcpy(name, p, len);
            name[len] = 0;
            int idx = fl_schema_column_index(s, name);
            if (idx >= 0 && fl_datatype_has_statistics(s->columns[idx].type))
                chosen[idx] = true;
            else if (!rc && idx < 0)
                rc = fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                                "Column '%s' specified in statistics collection does not exist "
                                "in table schema",
                                name);
            else if (!rc)
                rc = fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                                "Column '%s' of type '%s' is not supported for statistics "
                                "collection. Supported types are: BOOLEAN, TINYINT, SMALLINT, "
                                "INTEGER, BIGINT, FLOAT, DOUBLE, STRING, CHAR, DECIMAL, DATE, "
                                "TIME, TIMESTAMP, and TIMESTAMP_LTZ.",
                                name, fl_type_root_json_name(s->columns[idx].type->root));
            named++;
        }
        if (!end) break;
        p = end + 1;
    }
    if (!rc && !all && !named)
        rc = fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                        "Statistics columns configuration cannot be empty. Use '*' to collect "
                        "statistics for all supported columns, or remove the property to "
                        "disable statistics collection.");
    for (size_t i = 0; i < s->column_count; i++) {
        if (!(all ? fl_datatype_has_statistics(s->columns[i].type) : chosen[i])) continue;
        if (out && *count < cap) out[*count] = (int)i;
        (*count)++;
    }
    fl_free(chosen);
    return rc;
}
