/*
 * types_table.c — table and database descriptors and name rules
 * (types_table.h).
 */
#include "types_table.h"

#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "types_json.h"

void fl_table_desc_free(fl_table_desc_t *d) {
    fl_schema_free(&d->schema);
    fl_free(d->comment);
    fl_strlist_free(&d->partition_keys);
    fl_strlist_free(&d->bucket_keys);
    fl_kvlist_free(&d->properties);
    fl_kvlist_free(&d->custom_properties);
    memset(d, 0, sizeof(*d));
}

void fl_table_desc_copy(fl_table_desc_t *dst, const fl_table_desc_t *src) {
    memset(dst, 0, sizeof(*dst));
    fl_schema_copy(&dst->schema, &src->schema);
    dst->comment = src->comment ? fl_strdup(src->comment) : NULL;
    fl_strlist_copy(&dst->partition_keys, &src->partition_keys);
    dst->has_distribution = src->has_distribution;
    fl_strlist_copy(&dst->bucket_keys, &src->bucket_keys);
    dst->has_bucket_count = src->has_bucket_count;
    dst->bucket_count = src->bucket_count;
    fl_kvlist_copy(&dst->properties, &src->properties);
    fl_kvlist_copy(&dst->custom_properties, &src->custom_properties);
}

/* The descriptor parsers read as TableDescriptorJsonSerde and
 * DatabaseDescriptorJsonSerde do (types_json.h): a list of names is
 * fl_json_text_list's, a property map the text
 * of each member of an object (anything else: none), a comment any
 * value's text, a bucket count any value's int. A member the reference
 * dereferences unchecked ("schema", "partition_key", "properties",
 * "custom_properties", and "bucket_key" beside "bucket_count") is refused
 * when missing, where the reference fails with a NullPointerException.
 * Ours: a null comment is none (the reference keeps the text "null"). */
static void fl_json_props(const json_t *obj, fl_kvlist_t *out) {
    if (!json_is_object(obj)) return;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        char *t = fl_json_text(v);
        fl_kvlist_set(out, k, t);
        fl_free(t);
    }
}

static char *fl_json_comment(const json_t *obj) {
    return fl_json_has_non_null(obj, "comment") ? fl_json_text(json_object_get(obj, "comment"))
                                                : NULL;
}

int fl_table_desc_from_json(const json_t *j, fl_table_desc_t *out, fl_error_t *err) {
    const int code = FLUSS_ERR_INVALID_TABLE_EXCEPTION;
    memset(out, 0, sizeof(*out));
    int rc;
    if (!json_is_object(j)) {
        rc = fl_err_set(err, code, "table descriptor JSON must be an object");
        goto fail;
    }
    const json_t *schema = json_object_get(j, "schema");
    if (!schema) {
        rc = fl_err_set(err, code, "table descriptor JSON has no 'schema'");
        goto fail;
    }
    if ((rc = fl_schema_from_json(schema, &out->schema, err))) goto fail;
    static const char *const required[] = {"partition_key", "properties", "custom_properties"};
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
        if (!json_object_get(j, required[i])) {
            rc = fl_err_set(err, code, "table descriptor JSON has no '%s'", required[i]);
            goto fail;
        }
    out->comment = fl_json_comment(j);
    fl_json_text_list(json_object_get(j, "partition_key"), &out->partition_keys);
    const json_t *bk = json_object_get(j, "bucket_key");
    const json_t *bc = json_object_get(j, "bucket_count");
    if (bk || bc) {
        out->has_distribution = true;
        if (!bk) {
            rc = fl_err_set(err, code, "table descriptor JSON has 'bucket_count' but no 'bucket_key'");
            goto fail;
        }
        fl_json_text_list(bk, &out->bucket_keys);
        if (bc) {
            out->has_bucket_count = true;
            out->bucket_count = fl_json_as_int(bc);
        }
    }
    fl_json_props(json_object_get(j, "properties"), &out->properties);
    fl_json_props(json_object_get(j, "custom_properties"), &out->custom_properties);
    return 0;
fail:
    fl_table_desc_free(out);
    return rc;
}

int fl_table_desc_from_bytes(const void *data, size_t len, fl_table_desc_t *out,
                             fl_error_t *err) {
    json_error_t jerr;
    json_t *j = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!j) {
        memset(out, 0, sizeof(*out));
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "Failed to parse table descriptor: %s", jerr.text);
    }
    int rc = fl_table_desc_from_json(j, out, err);
    json_decref(j);
    return rc;
}

static json_t *fl_names_json(const fl_strlist_t *l) {
    json_t *a = json_array();
    for (size_t i = 0; i < l->count; i++) json_array_append_new(a, json_string(l->items[i]));
    return a;
}

static json_t *fl_props_json(const fl_kvlist_t *l) {
    json_t *o = json_object();
    for (size_t i = 0; i < l->count; i++)
        json_object_set_new(o, l->items[i].key, json_string(l->items[i].value));
    return o;
}

json_t *fl_table_desc_to_json(const fl_table_desc_t *d) {
    json_t *j = json_object();
    json_object_set_new(j, "version", json_integer(1));
    json_object_set_new(j, "schema", fl_schema_to_json(&d->schema));
    if (d->comment) json_object_set_new(j, "comment", json_string(d->comment));
    json_object_set_new(j, "partition_key", fl_names_json(&d->partition_keys));
    if (d->has_distribution) {
        json_object_set_new(j, "bucket_key", fl_names_json(&d->bucket_keys));
        if (d->has_bucket_count)
            json_object_set_new(j, "bucket_count", json_integer(d->bucket_count));
    }
    json_object_set_new(j, "properties", fl_props_json(&d->properties));
    json_object_set_new(j, "custom_properties", fl_props_json(&d->custom_properties));
    return j;
}

char *fl_table_desc_dumps(const fl_table_desc_t *d) {
    json_t *j = fl_table_desc_to_json(d);
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    return s;
}

void fl_database_desc_free(fl_database_desc_t *d) {
    fl_free(d->comment);
    fl_kvlist_free(&d->custom_properties);
    memset(d, 0, sizeof(*d));
}

int fl_database_desc_from_bytes(const void *data, size_t len, fl_database_desc_t *out,
                                fl_error_t *err) {
    const int code = FLUSS_ERR_INVALID_DATABASE_EXCEPTION;
    memset(out, 0, sizeof(*out));
    if (len == 0) return 0;
    json_error_t jerr;
    json_t *j = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!j) return fl_err_set(err, code, "Failed to parse database descriptor: %s", jerr.text);
    int rc = 0;
    if (!json_is_object(j)) {
        rc = fl_err_set(err, code, "database descriptor JSON must be an object");
        goto done;
    }
    out->comment = fl_json_comment(j);
    fl_json_props(json_object_get(j, "custom_properties"), &out->custom_properties);
done:
    json_decref(j);
    if (rc) fl_database_desc_free(out);
    return rc;
}

char *fl_database_desc_dumps(const fl_database_desc_t *d) {
    json_t *j = json_object();
    json_object_set_new(j, "version", json_integer(1));
    if (d->comment) json_object_set_new(j, "comment", json_string(d->comment));
    json_object_set_new(j, "custom_properties", fl_props_json(&d->custom_properties));
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    return s;
}

bool fl_name_invalid(const char *name, char *why, size_t why_len) {
    size_t n = strlen(name), chars = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)name[i] & 0xC0) != 0x80) chars++;
    if (n == 0) {
        snprintf(why, why_len, "the empty string is not allowed");
    } else if (strcmp(name, ".") == 0) {
        snprintf(why, why_len, "'.' is not allowed");
    } else if (strcmp(name, "..") == 0) {
        snprintf(why, why_len, "'..' is not allowed");
    } else if (chars > FL_NAME_LEN_MAX) {
        snprintf(why, why_len, "the length of '%s' is longer than the max allowed length %d",
                 name, FL_NAME_LEN_MAX);
    } else {
        for (size_t i = 0; i < n; i++) {
            char c = name[i];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-')) {
                snprintf(why, why_len,
                         "'%s' contains one or more characters other than ASCII alphanumerics, "
                         "'_' and '-'",
                         name);
                return true;
            }
        }
        return false;
    }
    return true;
}

int fl_name_check(const char *name, const char *what, int code, fl_error_t *err) {
    char why[FL_ERROR_MSG_MAX];
    if (!fl_name_invalid(name, why, sizeof(why))) {
        if (!(name[0] == '_' && name[1] == '_')) return 0;
        snprintf(why, sizeof(why),
                 "'__' is not allowed as prefix, since it is reserved for internal "
                 "databases/internal tables/internal partitions in Fluss server");
    }
    return fl_err_set(err, code, "%s name %s is invalid: %s", what, name, why);
}
