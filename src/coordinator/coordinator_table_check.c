/*
 * coordinator_table_check.c — table descriptor normalization, defaults and
 * validation on the coordinator (see coordinator_table_check.h). The option
 * table below is the set of table.* keys Fluss 0.9 knows, with the kind of
 * value each takes.
 */
#include "common_duration.h"
#include "coordinator_lake_table.h"
#include "coordinator_table_check.h"
#include "types_aggfn.h"
#include "types_key.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common_alloc.h"

enum fl_opt_kind { FL_OPT_INT, FL_OPT_LONG, FL_OPT_BOOL, FL_OPT_STRING, FL_OPT_ENUM, FL_OPT_DURATION };

typedef struct fl_table_option {
    const char *key;
    enum fl_opt_kind kind;
    const char *enum_values; /* space separated, for FL_OPT_ENUM */
} fl_table_option_t;

static const fl_table_option_t fl_table_options[] = {
    {"table.replication.factor", FL_OPT_INT, NULL},
    {"table.log.format", FL_OPT_ENUM, "ARROW INDEXED COMPACTED"},
    {"table.log.arrow.compression.type", FL_OPT_ENUM, "NONE LZ4_FRAME ZSTD"},
    {"table.log.arrow.compression.zstd.level", FL_OPT_INT, NULL},
    {"table.kv.format", FL_OPT_ENUM, "COMPACTED INDEXED"},
    {"table.kv.format-version", FL_OPT_INT, NULL},
    {"table.auto-partition.enabled", FL_OPT_BOOL, NULL},
    {"table.auto-partition.key", FL_OPT_STRING, NULL},
    {"table.auto-partition.time-unit", FL_OPT_ENUM, "YEAR QUARTER MONTH DAY HOUR"},
    {"table.auto-partition.time-zone", FL_OPT_STRING, NULL},
    {"table.auto-partition.num-precreate", FL_OPT_INT, NULL},
    {"table.auto-partition.num-retention", FL_OPT_INT, NULL},
    {"table.log.ttl", FL_OPT_DURATION, NULL},
    {"table.log.tiered.local-segments", FL_OPT_INT, NULL},
    {"table.datalake.enabled", FL_OPT_BOOL, NULL},
    {"table.datalake.format", FL_OPT_ENUM, "PAIMON LANCE ICEBERG HUDI"},
    {"table.datalake.freshness", FL_OPT_DURATION, NULL},
    {"table.datalake.auto-compaction", FL_OPT_BOOL, NULL},
    {"table.datalake.auto-expire-snapshot", FL_OPT_BOOL, NULL},
    {"table.merge-engine", FL_OPT_ENUM, "FIRST_ROW VERSIONED AGGREGATION"},
    {"table.merge-engine.versioned.ver-column", FL_OPT_STRING, NULL},
    {"table.delete.behavior", FL_OPT_ENUM, "ALLOW IGNORE DISABLE"},
    {"table.auto-increment.cache-size", FL_OPT_LONG, NULL},
    {"table.changelog.image", FL_OPT_ENUM, "FULL WAL"},
    /* Fluss main (0.9.1 refuses it): per-batch column statistics, the
     * server's filter pushdown (record_filter.h) */
    {"table.statistics.columns", FL_OPT_STRING, NULL},
};

static const char *const fl_system_columns[] = {"__offset", "__timestamp", "__bucket",
                                                 "_change_type", "_log_offset",
                                                 "_commit_timestamp"};

static const fl_table_option_t *fl_table_option(const char *key) {
    for (size_t i = 0; i < sizeof(fl_table_options) / sizeof(fl_table_options[0]); i++)
        if (strcmp(fl_table_options[i].key, key) == 0) return &fl_table_options[i];
    return NULL;
}

static bool fl_parse_long(const char *s, long long *out) {
    while (isspace((unsigned char)*s)) s++;
    if (!*s) return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (errno || *end) return false;
    *out = v;
    return true;
}

static bool fl_enum_has(const char *values, const char *v) {
    size_t n = strlen(v);
    for (const char *p = values; *p;) {
        const char *sp = strchr(p, ' ');
        size_t len = sp ? (size_t)(sp - p) : strlen(p);
        if (len == n && strncasecmp(p, v, n) == 0) return true;
        if (!sp) break;
        p = sp + 1;
    }
    return false;
}

static bool fl_duration_ok(const char *v) {
    int64_t ms;
    fl_error_t e;
    return fl_duration_parse_ms(v, &ms, &e) == 0;
}

/* Every kind of option fails the same way in the reference: Configuration
 * cannot convert the text, and the validation wraps that message. */
static int fl_check_option_value(const fl_table_option_t *o, const char *v, fl_error_t *err) {
    long long n;
    bool ok = true;
    switch (o->kind) {
    case FL_OPT_INT: ok = fl_parse_long(v, &n) && n >= INT32_MIN && n <= INT32_MAX; break;
    case FL_OPT_LONG: ok = fl_parse_long(v, &n); break;
    case FL_OPT_BOOL: ok = strcasecmp(v, "true") == 0 || strcasecmp(v, "false") == 0; break;
    case FL_OPT_ENUM: ok = fl_enum_has(o->enum_values, v); break;
    case FL_OPT_DURATION: ok = fl_duration_ok(v); break;
    case FL_OPT_STRING: break;
    }
    if (ok) return 0;
    return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                      "Invalid value for config '%s'. Reason: Could not parse value '%s' for key "
                      "'%s'.",
                      o->key, v, o->key);
}

static void fl_names_text(const fl_strlist_t *l, char *out, size_t cap) {
    size_t n = 0;
    n += (size_t)snprintf(out + n, cap - n, "[");
    for (size_t i = 0; i < l->count && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? ", " : "", l->items[i]);
    if (n < cap) snprintf(out + n, cap - n, "]");
}

int fl_table_normalize(fl_table_desc_t *d, fl_error_t *err) {
    const int code = FLUSS_ERR_INVALID_TABLE_EXCEPTION;
    char a[512], b[512], c[512];
    const fl_schema_t *s = &d->schema;
    if (d->has_distribution) {
        for (size_t i = 0; i < d->bucket_keys.count; i++)
            if (fl_strlist_index(&d->partition_keys, d->bucket_keys.items[i]) >= 0) {
                fl_names_text(&d->bucket_keys, a, sizeof(a));
                fl_names_text(&d->partition_keys, b, sizeof(b));
                return fl_err_set(err, code,
                                  "Bucket key %s shouldn't include any column in partition keys %s.",
                                  a, b);
            }
    }
    if (s->has_primary_key) {
        if (!d->has_distribution || d->bucket_keys.count == 0) {
            fl_strlist_free(&d->bucket_keys);
            for (size_t i = 0; i < s->primary_key.count; i++)
                if (fl_strlist_index(&d->partition_keys, s->primary_key.items[i]) < 0)
                    fl_strlist_add(&d->bucket_keys, s->primary_key.items[i]);
            if (d->bucket_keys.count == 0) {
                fl_names_text(&s->primary_key, a, sizeof(a));
                fl_names_text(&d->partition_keys, b, sizeof(b));
                return fl_err_set(err, code,
                                  "Primary Key constraint %s should not be same with partition "
                                  "fields %s.",
                                  a, b);
            }
            d->has_distribution = true;
        } else {
            for (size_t i = 0; i < d->bucket_keys.count; i++)
                if (fl_strlist_index(&s->primary_key, d->bucket_keys.items[i]) < 0) {
                    fl_names_text(&s->primary_key, a, sizeof(a));
                    fl_names_text(&d->partition_keys, b, sizeof(b));
                    fl_names_text(&d->bucket_keys, c, sizeof(c));
                    return fl_err_set(err, code,
                                      "Bucket keys must be a subset of primary keys excluding "
                                      "partition keys for primary-key tables. The primary keys "
                                      "are %s, the partition keys are %s, but the user-defined "
                                      "bucket keys are %s.",
                                      a, b, c);
                }
        }
        for (size_t i = 0; i < d->partition_keys.count; i++)
            if (fl_strlist_index(&s->primary_key, d->partition_keys.items[i]) < 0) {
                fl_names_text(&d->partition_keys, a, sizeof(a));
                fl_names_text(&s->primary_key, b, sizeof(b));
                return fl_err_set(err, code,
                                  "Partitioned Primary Key Table requires partition key %s is a "
                                  "subset of the primary key %s.",
                                  a, b);
            }
    } else {
        for (size_t i = 0; i < d->partition_keys.count; i++)
            if (fl_schema_column_index(s, d->partition_keys.items[i]) < 0)
                return fl_err_set(err, code, "Partition key '%s' does not exist in the schema.",
                                  d->partition_keys.items[i]);
    }
    for (size_t i = 0; i < d->bucket_keys.count; i++)
        if (fl_schema_column_index(s, d->bucket_keys.items[i]) < 0)
            return fl_err_set(err, code, "Bucket key '%s' does not exist in the schema.",
                              d->bucket_keys.items[i]);
    return 0;
}

int fl_table_apply_defaults(fl_table_desc_t *d, const fl_table_defaults_t *defaults,
                            fl_error_t *err) {
    char num[32];
    if (!d->has_distribution || !d->has_bucket_count) {
        d->has_distribution = true;
        d->has_bucket_count = true;
        d->bucket_count = defaults->bucket_number;
    }
    if (!fl_kvlist_get(&d->properties, "table.replication.factor")) {
        /* the reference writes it first */
        fl_kvlist_t props = {0};
        snprintf(num, sizeof(num), "%d", defaults->replication_factor);
        fl_kvlist_set(&props, "table.replication.factor", num);
        for (size_t i = 0; i < d->properties.count; i++)
            fl_kvlist_set(&props, d->properties.items[i].key, d->properties.items[i].value);
        fl_kvlist_free(&d->properties);
        d->properties = props;
    }
    const char *ap = fl_kvlist_get(&d->properties, "table.auto-partition.enabled");
    if (d->partition_keys.count > 1 && ap && strcmp(ap, "true") == 0 &&
        !fl_kvlist_get(&d->properties, "table.auto-partition.num-precreate"))
        fl_kvlist_set(&d->properties, "table.auto-partition.num-precreate", "0");
    /* every new table of a lake cluster takes its format: clients bucket
     * and encode keys by it (types_key.h) */
    if (fl_lake_config_on(&defaults->lake) &&
        !fl_kvlist_get(&d->properties, "table.datalake.format"))
        fl_kvlist_set(&d->properties, "table.datalake.format", defaults->lake.format);
    if (fl_lake_table_enabled(&d->properties) && !fl_lake_config_on(&defaults->lake))
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "'table.datalake.enabled' is enabled for the table, but the Fluss "
                          "cluster doesn't enable datalake tables.");
    const char *me = fl_kvlist_get(&d->properties, "table.merge-engine");
    if (me && d->schema.has_primary_key && !fl_kvlist_get(&d->properties, "table.delete.behavior") &&
        (strcasecmp(me, "first_row") == 0 || strcasecmp(me, "versioned") == 0 ||
         strcasecmp(me, "aggregation") == 0))
        fl_kvlist_set(&d->properties, "table.delete.behavior", "IGNORE");
    if (d->schema.has_primary_key) {
        const char *fv = fl_kvlist_get(&d->properties, "table.kv.format-version");
        long long v;
        if (!fv) {
            fl_kvlist_set(&d->properties, "table.kv.format-version", "2");
        } else if (fl_parse_long(fv, &v) && v > 2) {
            return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                              "Unsupported kv format version %lld. The maximum supported "
                              "version is 2.",
                              v);
        }
    }
    return 0;
}

static bool fl_is_key_unsupported(const fl_datatype_t *t) {
    return t->root == FL_TYPE_ARRAY || t->root == FL_TYPE_MAP || t->root == FL_TYPE_ROW;
}

static bool fl_is_partition_type(const fl_datatype_t *t) {
    switch (t->root) {
    case FL_TYPE_CHAR: case FL_TYPE_STRING: case FL_TYPE_BOOLEAN: case FL_TYPE_BINARY:
    case FL_TYPE_BYTES: case FL_TYPE_TINYINT: case FL_TYPE_SMALLINT: case FL_TYPE_INTEGER:
    case FL_TYPE_DATE: case FL_TYPE_TIME: case FL_TYPE_BIGINT: case FL_TYPE_FLOAT:
    case FL_TYPE_DOUBLE: case FL_TYPE_TIMESTAMP: case FL_TYPE_TIMESTAMP_LTZ:
        return true;
    default:
        return false;
    }
}

/* table.statistics.columns as Fluss main checks it: log tables only; "*"
 * or a comma list of existing columns of the types statistics cover. */
static int fl_check_statistics_columns(const fl_table_desc_t *d, fl_error_t *err) {
    const char *v = fl_kvlist_get(&d->properties, "table.statistics.columns");
    if (!v) return 0;
    if (d->schema.has_primary_key)
        return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                          "Statistics columns are not supported for primary key tables. "
                          "Please remove the 'table.statistics.columns' property.");
    size_t n;
    return fl_schema_statistics_columns(&d->schema, v, NULL, 0, &n, err);
}

static const char *fl_prop(const fl_table_desc_t *d, const char *key, const char *dflt) {
    const char *v = fl_kvlist_get(&d->properties, key);
    return v ? v : dflt;
}

static int fl_validate_options(const fl_table_desc_t *d, fl_error_t *err) {
    for (size_t i = 0; i < d->properties.count; i++) {
        const char *k = d->properties.items[i].key;
        const fl_table_option_t *o = fl_table_option(k);
        if (!o) {
            if (strncmp(k, "table.", 6) == 0)
                return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                                  "'%s' is not a recognized Fluss table property in the current "
                                  "cluster version. You may be using an older Fluss cluster that "
                                  "does not support this property.",
                                  k);
            return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                              "'%s' is not a Fluss table property. Please use "
                              "'.customProperty(..)' to set custom properties.",
                              k);
        }
        int rc = fl_check_option_value(o, d->properties.items[i].value, err);
        if (rc) return rc;
    }
    return 0;
}

/* Keys a lake format's encoding can take (types_key.h): an ICEBERG table
 * hashes exactly one bucket-key column of a type Iceberg can bucket (the
 * clients refuse to write any other); a primary-key table of a lake
 * format whose keys fluss-c does not encode (PAIMON, HUDI) is refused,
 * since its state could not be rebuilt from its changelog with the keys
 * its clients send. */
static int fl_check_lake_keys(const fl_table_desc_t *d, fl_error_t *err) {
    const fl_schema_t *s = &d->schema;
    const char *lake = fl_kvlist_get(&d->properties, "table.datalake.format");
    fl_key_codec_t codec = fl_key_codec_of_lake(lake);
    if (codec == FL_KEY_UNSUPPORTED && s->has_primary_key)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "Primary-key tables with 'table.datalake.format' = '%s' are not "
                          "supported by this server (their keys are encoded the %s way).",
                          lake, lake);
    if (codec != FL_KEY_ICEBERG || d->bucket_keys.count == 0) return 0;
    if (d->bucket_keys.count != 1)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "A table with 'table.datalake.format' = 'iceberg' must have exactly "
                          "one bucket key column, but has %zu.",
                          d->bucket_keys.count);
    int idx = fl_schema_column_index(s, d->bucket_keys.items[0]);
    if (idx >= 0 && !fl_key_iceberg_type_ok(s->columns[idx].type))
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "Bucket key column '%s' has data type %s, which an Iceberg lake table "
                          "cannot bucket.",
                          d->bucket_keys.items[0],
                          fl_type_root_json_name(s->columns[idx].type->root));
    return 0;
}

int fl_table_validate(const fl_table_desc_t *d, const fl_table_defaults_t *defaults,
                      fl_error_t *err) {
    const fl_schema_t *s = &d->schema;
    int rc = fl_validate_options(d, err);
    if (rc) return rc;
    if ((rc = fl_check_statistics_columns(d, err))) return rc;
    if (s->column_count == 0)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "The schema must have at least one column.");
    /* distribution */
    if (!d->has_distribution || !d->has_bucket_count)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION, "Bucket number must be set.");
    if (d->bucket_count <= 0)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "Number of buckets must be larger than 0, but is %d.", d->bucket_count);
    if (d->bucket_count > defaults->max_bucket_num)
        return fl_err_set(err, FLUSS_ERR_BUCKET_MAX_NUM_EXCEPTION,
                          "Bucket count %d exceeds the maximum limit %d.", d->bucket_count,
                          defaults->max_bucket_num);
    for (size_t i = 0; i < d->bucket_keys.count; i++) {
        int idx = fl_schema_column_index(s, d->bucket_keys.items[i]);
        if (idx >= 0 && fl_is_key_unsupported(s->columns[idx].type))
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "Bucket key column '%s' has unsupported data type %s. Currently, "
                              "bucket key column does not support types: [ARRAY, MAP, ROW].",
                              d->bucket_keys.items[i],
                              fl_type_root_json_name(s->columns[idx].type->root));
    }
    if ((rc = fl_check_lake_keys(d, err))) return rc;
    if (fl_lake_table_enabled(&d->properties) && fl_lake_config_on(&defaults->lake) &&
        (rc = fl_lake_table_check(d, &defaults->lake, err)))
        return rc;
    /* primary key */
    for (size_t i = 0; i < s->primary_key.count; i++) {
        int idx = fl_schema_column_index(s, s->primary_key.items[i]);
        if (idx >= 0 && fl_is_key_unsupported(s->columns[idx].type))
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "Primary key column '%s' has unsupported data type %s. Currently, "
                              "primary key column does not support types: [ARRAY, MAP, ROW].",
                              s->primary_key.items[i],
                              fl_type_root_json_name(s->columns[idx].type->root));
    }
    /* replication factor */
    long long rf = 0;
    if (!fl_parse_long(fl_prop(d, "table.replication.factor", ""), &rf))
        return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                          "Missing required table property 'table.replication.factor'.");
    if (rf <= 0)
        return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                          "'table.replication.factor' must be greater than 0.");
    /* log format */
    const char *kv_format = fl_prop(d, "table.kv.format", "COMPACTED");
    const char *log_format = fl_prop(d, "table.log.format", "ARROW");
    if (s->has_primary_key && strcasecmp(kv_format, "COMPACTED") == 0 &&
        strcasecmp(log_format, "ARROW") != 0 && strcasecmp(log_format, "COMPACTED") != 0)
        return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                          "Currently, Primary Key Table supports ARROW or COMPACTED log format "
                          "when kv format is COMPACTED.");
    /* arrow compression */
    long long level;
    const char *lv = fl_kvlist_get(&d->properties, "table.log.arrow.compression.zstd.level");
    if (lv && fl_parse_long(lv, &level) && (level < 1 || level > 22))
        return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                          "Invalid ZSTD compression level: %lld. Expected a value between 1 and 22.",
                          level);
    /* merge engine */
    const char *me = fl_kvlist_get(&d->properties, "table.merge-engine");
    if (me) {
        if (!s->has_primary_key)
            return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                              "Merge engine is only supported in primary key table.");
        if (strcasecmp(me, "versioned") == 0) {
            const char *vc = fl_kvlist_get(&d->properties, "table.merge-engine.versioned.ver-column");
            if (!vc)
                return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                                  "'table.merge-engine.versioned.ver-column' must be set for "
                                  "versioned merge engine.");
            int idx = fl_schema_column_index(s, vc);
            if (idx < 0)
                return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                                  "The version column '%s' for versioned merge engine doesn't "
                                  "exist in schema.",
                                  vc);
            fl_type_root_t r = s->columns[idx].type->root;
            if (r != FL_TYPE_INTEGER && r != FL_TYPE_BIGINT && r != FL_TYPE_TIMESTAMP &&
                r != FL_TYPE_TIMESTAMP_LTZ)
                return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                                  "The version column '%s' for versioned merge engine must be "
                                  "one type of [INT, BIGINT, TIMESTAMP, TIMESTAMP_LTZ], but got %s.",
                                  vc, fl_type_root_json_name(r));
        } else if (strcasecmp(me, "aggregation") == 0) {
            if (strcasecmp(fl_prop(d, "table.changelog.image", "FULL"), "WAL") == 0)
                return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                                  "Table with 'AGGREGATION' merge engine does not support 'WAL' "
                                  "changelog image mode.");
            int arc = fl_aggfn_validate_schema(s, err);
            if (arc) return arc;
        }
    }
    /* delete behavior */
    const char *db = fl_kvlist_get(&d->properties, "table.delete.behavior");
    if (db && !s->has_primary_key)
        return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                          "The 'table.delete.behavior' configuration is only supported for "
                          "primary key tables.");
    if (db && me && strcasecmp(db, "allow") == 0 &&
        (strcasecmp(me, "first_row") == 0 || strcasecmp(me, "versioned") == 0))
        return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                          "Table with '%s' merge engine does not support delete operations. The "
                          "'table.delete.behavior' config must be set to 'ignore' or 'disable', "
                          "but got 'allow'.",
                          me);
    /* tiered log */
    long long segs;
    const char *ls = fl_kvlist_get(&d->properties, "table.log.tiered.local-segments");
    if (ls && fl_parse_long(ls, &segs) && segs <= 0)
        return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                          "'table.log.tiered.local-segments' must be greater than 0.");
    /* partitions */
    bool auto_part = strcasecmp(fl_prop(d, "table.auto-partition.enabled", "false"), "true") == 0;
    if (d->partition_keys.count == 0 && auto_part)
        return fl_err_set(err, FLUSS_ERR_INVALID_CONFIG_EXCEPTION,
                          "Currently, auto partition is only supported for partitioned table, "
                          "please set table property 'table.auto-partition.enabled' to false.");
    for (size_t i = 0; i < d->partition_keys.count; i++) {
        int idx = fl_schema_column_index(s, d->partition_keys.items[i]);
        if (idx >= 0 && !fl_is_partition_type(s->columns[idx].type))
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "Currently, partitioned table supported partition key type are "
                              "[CHAR, STRING, BOOLEAN, BINARY, BYTES, TINYINT, SMALLINT, INTEGER, "
                              "DATE, TIME_WITHOUT_TIME_ZONE, BIGINT, FLOAT, DOUBLE, "
                              "TIMESTAMP_WITHOUT_TIME_ZONE, TIMESTAMP_WITH_LOCAL_TIME_ZONE], but "
                              "got partition key '%s' with data type %s.",
                              d->partition_keys.items[i],
                              fl_type_root_json_name(s->columns[idx].type->root));
    }
    if (auto_part && d->partition_keys.count > 1) {
        const char *key = fl_kvlist_get(&d->properties, "table.auto-partition.key");
        if (!key || !*key)
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "Currently, auto partitioned table must set one auto partition key "
                              "when it has multiple partition keys. Please set table property "
                              "'table.auto-partition.key'.");
        if (fl_strlist_index(&d->partition_keys, key) < 0)
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "The specified key for auto partitioned table is not a partition "
                              "key. Your key '%s' is not in key list",
                              key);
        long long pre = 0;
        if (fl_parse_long(fl_prop(d, "table.auto-partition.num-precreate", "2"), &pre) && pre > 0)
            return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                              "For a partitioned table with multiple partition keys, auto "
                              "pre-create is unsupported and this value must be set to 0, but is %lld",
                              pre);
    }
    /* system columns */
    for (size_t i = 0; i < s->column_count; i++)
        for (size_t k = 0; k < sizeof(fl_system_columns) / sizeof(fl_system_columns[0]); k++)
            if (strcmp(s->columns[i].name, fl_system_columns[k]) == 0)
                return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                                  "%s cannot be used as column names, because they are reserved "
                                  "system columns in Fluss. Please use other names for these "
                                  "columns. The reserved system columns are: __offset, "
                                  "__timestamp, __bucket, _change_type, _log_offset, "
                                  "_commit_timestamp",
                                  s->columns[i].name);
    return 0;
}
