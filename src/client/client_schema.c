/*
 * client_schema.c — turns a fluss_table_spec_t (a Flink-SQL-style column
 * list and key lists) into the TableDescriptor JSON a Fluss coordinator
 * accepts, with the types module as the single source of type syntax.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stdio.h>

#include "client_table.h"
#include "common_alloc.h"
#include "fluss.h"
#include "types_table.h"

static void fl_copy_err(fluss_error_t *out, const fl_error_t *in) {
    if (!out) return;
    out->code = in->code;
    snprintf(out->message, sizeof(out->message), "%s", in->msg);
}

/* Splits a comma list, trimming spaces. */
static void fl_split_names(const char *text, fl_strlist_t *out) {
    if (!text) return;
    const char *p = text;
    while (*p) {
        while (*p == ',' || isspace((unsigned char)*p)) p++;
        const char *s = p;
        while (*p && *p != ',') p++;
        const char *e = p;
        while (e > s && isspace((unsigned char)e[-1])) e--;
        if (e > s) {
            char *name = fl_strndup(s, (size_t)(e - s));
            fl_strlist_add(out, name);
            fl_free(name);
        }
    }
}

static int fl_kv_args(const char *const *kvs, fl_kvlist_t *out, fl_error_t *err) {
    for (size_t i = 0; kvs && kvs[i]; i++) {
        const char *eq = strchr(kvs[i], '=');
        if (!eq || eq == kvs[i])
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "expected key=value, got '%s'", kvs[i]);
        char *k = fl_strndup(kvs[i], (size_t)(eq - kvs[i]));
        fl_kvlist_set(out, k, eq + 1);
        fl_free(k);
    }
    return 0;
}

/* "name TYPE [NOT NULL] [COMMENT 'text']" separated by top-level commas. */
int fl_client_parse_columns(const char *text, fl_schema_t *s, fl_error_t *err) {
    const char *p = text;
    for (;;) {
        while (isspace((unsigned char)*p)) p++;
        if (!*p) break;
        const char *ns = p;
        char *name;
        if (*p == '`') {
            const char *e = strchr(p + 1, '`');
            if (!e) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "unterminated `name`");
            name = fl_strndup(p + 1, (size_t)(e - p - 1));
            p = e + 1;
        } else {
            while (*p && !isspace((unsigned char)*p) && *p != ',') p++;
            if (p == ns) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "expected a column name");
            name = fl_strndup(ns, (size_t)(p - ns));
        }
        fl_datatype_t *type = NULL;
        int rc = fl_datatype_parse(&p, &type, err);
        if (rc) {
            char msg[FL_ERROR_MSG_MAX];
            snprintf(msg, sizeof(msg), "%s", err->msg);
            fl_err_set(err, rc, "column '%s': %s", name, msg);
            fl_free(name);
            return rc;
        }
        char *comment = NULL;
        while (isspace((unsigned char)*p)) p++;
        if (strncasecmp(p, "COMMENT", 7) == 0) {
            p += 7;
            while (isspace((unsigned char)*p)) p++;
            if (*p != '\'') {
                fl_free(name);
                fl_datatype_destroy(type);
                return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "COMMENT needs a 'quoted' text");
            }
            const char *e = strchr(p + 1, '\'');
            if (!e) {
                fl_free(name);
                fl_datatype_destroy(type);
                return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "unterminated comment");
            }
            comment = fl_strndup(p + 1, (size_t)(e - p - 1));
            p = e + 1;
        }
        fl_schema_add_column(s, name, type, comment);
        fl_free(name);
        fl_free(comment);
        while (isspace((unsigned char)*p)) p++;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "unexpected text at '%.20s'", p);
    }
    if (s->column_count == 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "the schema has no columns");
    return 0;
}

char *fluss_table_spec_to_json(const fluss_table_spec_t *spec, fluss_error_t *out_err) {
    fl_error_t err;
    fl_err_clear(&err);
    fl_table_desc_t d;
    memset(&d, 0, sizeof(d));
    d.schema.highest_field_id = -1;
    char *json = NULL;
    if (!spec || !spec->schema) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "a table needs a schema");
        goto done;
    }
    if (fl_client_parse_columns(spec->schema, &d.schema, &err)) goto done;
    fl_schema_assign_ids(&d.schema);
    if (spec->primary_key) {
        d.schema.has_primary_key = true;
        fl_split_names(spec->primary_key, &d.schema.primary_key);
    }
    fl_split_names(spec->partition_keys, &d.partition_keys);
    if (spec->bucket_keys || spec->bucket_count > 0) {
        d.has_distribution = true;
        fl_split_names(spec->bucket_keys, &d.bucket_keys);
        if (spec->bucket_count > 0) {
            d.has_bucket_count = true;
            d.bucket_count = spec->bucket_count;
        }
    }
    if (spec->comment) d.comment = fl_strdup(spec->comment);
    if (fl_kv_args(spec->properties, &d.properties, &err)) goto done;
    if (fl_kv_args(spec->custom_properties, &d.custom_properties, &err)) goto done;
    json = fl_table_desc_dumps(&d);
done:
    if (!json) fl_copy_err(out_err, &err);
    fl_table_desc_free(&d);
    return json;
}
