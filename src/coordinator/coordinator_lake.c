/*
 * coordinator_lake.c — the cluster's lake settings (coordinator_lake.h).
 */
#include "coordinator_lake.h"

#include "common_duration.h"
#include "types_table.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define FL_LAKE_PREFIX "datalake."

static const char *const fl_lake_formats[] = {"paimon", "lance", "iceberg"};

static int fl_lake_format_of(const char *v, char *out, size_t cap, fl_error_t *err) {
    for (size_t i = 0; i < sizeof(fl_lake_formats) / sizeof(fl_lake_formats[0]); i++)
        if (strcasecmp(v, fl_lake_formats[i]) == 0) {
            snprintf(out, cap, "%s", fl_lake_formats[i]);
            return 0;
        }
    return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                      "Could not parse value '%s' for key 'datalake.format' (one of paimon, "
                      "lance, iceberg).",
                      v);
}

/* Takes every datalake.<format>.* key, checking the others as the
 * reference's LakeCatalogDynamicLoader#validate does. */
static int fl_lake_collect(const fl_kvlist_t *kv, fl_lake_config_t *c, fl_error_t *err) {
    char prefix[64];
    int pn = snprintf(prefix, sizeof(prefix), FL_LAKE_PREFIX "%s.", c->format);
    for (size_t i = 0; i < kv->count; i++) {
        const char *k = kv->items[i].key, *v = kv->items[i].value;
        if (strncmp(k, FL_LAKE_PREFIX, strlen(FL_LAKE_PREFIX)) != 0 ||
            strcmp(k, "datalake.format") == 0)
            continue;
        if (strncmp(k, prefix, (size_t)pn) != 0)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "Invalid configuration '%s' for '%s' datalake format", k, c->format);
        const char *rest = k + pn;
        if (!*rest) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "'%s' names no option", k);
        if (c->n_options == FL_LAKE_OPTIONS_MAX)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "more than %d %s* options",
                              FL_LAKE_OPTIONS_MAX, prefix);
        if (strlen(rest) >= FL_LAKE_KEY_MAX || strlen(v) >= FL_LAKE_VALUE_MAX)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "'%s' or its value is too long", k);
        fl_lake_option_t *o = &c->options[c->n_options++];
        snprintf(o->key, sizeof(o->key), "%s", rest);
        snprintf(o->value, sizeof(o->value), "%s", v);
    }
    return 0;
}

static const char *fl_lake_option(const fl_lake_config_t *c, const char *key) {
    for (size_t i = 0; i < c->n_options; i++)
        if (strcmp(c->options[i].key, key) == 0) return c->options[i].value;
    return NULL;
}

static int fl_lake_warehouse(const char *w, const char *cwd, fl_lake_config_t *c,
                             fl_error_t *err) {
    if (strncmp(w, "file://", 7) == 0) w += 7;
    else if (strncmp(w, "file:", 5) == 0) w += 5;
    else if (strstr(w, "://"))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "datalake.iceberg.warehouse '%s': only local paths (file://) are "
                          "supported",
                          w);
    if (!*w) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "datalake.iceberg.warehouse is empty");
    int n = w[0] == '/' ? snprintf(c->warehouse, sizeof(c->warehouse), "%s", w)
                        : snprintf(c->warehouse, sizeof(c->warehouse), "%s/%s", cwd, w);
    if (n < 0 || (size_t)n >= sizeof(c->warehouse))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "datalake.iceberg.warehouse is too long");
    while (n > 1 && c->warehouse[n - 1] == '/') c->warehouse[--n] = 0;
    return 0;
}

int fl_lake_config_parse(const fl_kvlist_t *kv, const char *cwd, fl_lake_config_t *out,
                         fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    out->orphan_min_age_ms = 60LL * 60 * 1000;
    const char *age = fl_kvlist_get(kv, "lake.orphan-file.min-age");
    if (age && fl_duration_parse_ms(age, &out->orphan_min_age_ms, err))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "lake.orphan-file.min-age: '%s' is not a duration", age);
    const char *ax = fl_kvlist_get(kv, "lake.tiering.auto-expire-snapshot");
    if (ax && strcasecmp(ax, "true") != 0 && strcasecmp(ax, "false") != 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "lake.tiering.auto-expire-snapshot: '%s' is not true or false", ax);
    out->auto_expire_snapshot = ax && strcasecmp(ax, "true") == 0;
    const char *mode = fl_kvlist_get(kv, "lake.tiering.mode");
    if (mode && strcasecmp(mode, "internal") != 0 && strcasecmp(mode, "external") != 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "lake.tiering.mode: '%s' is not internal or external", mode);
    out->external_tiering = mode && strcasecmp(mode, "external") == 0;
    const char *f = fl_kvlist_get(kv, "datalake.format");
    if (!f) {
        for (size_t i = 0; i < kv->count; i++)
            if (strncmp(kv->items[i].key, FL_LAKE_PREFIX, strlen(FL_LAKE_PREFIX)) == 0)
                return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                                  "Invalid configuration '%s' for 'null' datalake format",
                                  kv->items[i].key);
        return 0;
    }
    int rc = fl_lake_format_of(f, out->format, sizeof(out->format), err);
    if (!rc) rc = fl_lake_collect(kv, out, err);
    if (rc) return rc;
    if (strcmp(out->format, "iceberg") != 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "datalake.format '%s' is not supported by flussd, which tiers tables "
                          "into Apache Iceberg itself (datalake.format: iceberg)",
                          out->format);
    const char *type = fl_lake_option(out, "type");
    if (!type || strcasecmp(type, "hadoop") != 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "datalake.iceberg.type '%s' is not supported: flussd keeps Iceberg "
                          "tables in the Hadoop layout (datalake.iceberg.type: hadoop)",
                          type ? type : "");
    const char *w = fl_lake_option(out, "warehouse");
    if (!w)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "datalake.iceberg.warehouse must be set with datalake.format: iceberg");
    return fl_lake_warehouse(w, cwd, out, err);
}

bool fl_lake_config_on(const fl_lake_config_t *c) { return c->format[0] != 0; }

bool fl_lake_table_enabled(const fl_kvlist_t *properties) {
    const char *v = fl_kvlist_get(properties, "table.datalake.enabled");
    return v && strcasecmp(v, "true") == 0;
}

bool fl_lake_table_json_enabled(const char *table_json) {
    if (!strstr(table_json, "table.datalake.enabled")) return false; /* most tables */
    fl_table_desc_t d;
    fl_error_t err;
    if (fl_table_desc_from_bytes(table_json, strlen(table_json), &d, &err)) return false;
    bool on = fl_lake_table_enabled(&d.properties);
    fl_table_desc_free(&d);
    return on;
}

char *fl_lake_present_table_json(const fl_lake_config_t *c, const char *table_json) {
    /* a cheap test first: METADATA answers every table */
    if (!fl_lake_config_on(c) || !strstr(table_json, "table.datalake.enabled")) return NULL;
    json_t *root = json_loads(table_json, 0, NULL);
    json_t *props = json_object_get(root, "properties");
    const char *en = json_string_value(json_object_get(props, "table.datalake.enabled"));
    char *out = NULL;
    if (en && strcasecmp(en, "true") == 0) {
        for (size_t i = 0; i < c->n_options; i++) {
            char key[FL_LAKE_KEY_MAX + 64];
            snprintf(key, sizeof(key), "table.datalake.%s.%s", c->format, c->options[i].key);
            /* the warehouse as the server resolved it (absolute, no
             * file://): readers elsewhere find the same directory */
            bool w = strcmp(c->options[i].key, "warehouse") == 0;
            json_object_set_new(props, key, json_string(w ? c->warehouse : c->options[i].value));
        }
        out = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    }
    json_decref(root);
    return out;
}

bool fl_lake_table_dir(const fl_lake_config_t *c, const char *db, const char *table, char *out,
                       size_t cap) {
    int n = snprintf(out, cap, "%s/%s/%s", c->warehouse, db, table);
    return n > 0 && (size_t)n < cap;
}
