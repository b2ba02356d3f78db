/*
 * coordinator_auto_partition.c — a pass of auto-partitioning over a table
 * (coordinator_auto_partition.h): expiry first, then pre-creation, through
 * the catalog's own DROP/CREATE PARTITION so the limits, ids and assignment
 * are those of manual partitions. Catalog views die at every mutation, so
 * the pass copies what it keeps and looks the table up again after each
 * change. Thread rule: the catalog lock is held by the caller.
 */
#include "coordinator_auto_partition.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common_alloc.h"
#include "common_log.h"

/* ---- options ---- */

static int fl_ap_int_option(const char *v, int32_t *out) {
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (errno || end == v || *end || n < INT32_MIN || n > INT32_MAX) return -1;
    *out = (int32_t)n;
    return 0;
}

void fl_auto_partition_strategy_clear(fl_auto_partition_strategy_t *s) {
    fl_free(s->key);
    fl_free(s->time_zone);
    memset(s, 0, sizeof(*s));
}

int fl_auto_partition_strategy_read(const char *table_json, fl_auto_partition_strategy_t *out,
                                    fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    out->unit = FL_PARTITION_TIME_DAY;
    out->num_precreate = 2;
    out->num_retention = 7;
    json_t *j = json_loads(table_json, 0, NULL);
    const json_t *props = j ? json_object_get(j, "properties") : NULL;
    if (!props || !json_is_object(props)) {
        if (j) json_decref(j);
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "stored table JSON has no properties");
    }
    const char *bad = NULL, *key;
    json_t *value;
    json_object_foreach((json_t *)props, key, value) {
        const char *v = json_string_value(value);
        if (strncmp(key, "table.auto-partition.", 21) != 0) continue;
        const char *opt = key + 21;
        if (!v) bad = key;
        else if (strcmp(opt, "enabled") == 0) out->enabled = strcasecmp(v, "true") == 0;
        else if (strcmp(opt, "key") == 0) out->key = fl_strdup(v);
        else if (strcmp(opt, "time-zone") == 0) out->time_zone = fl_strdup(v);
        else if (strcmp(opt, "time-unit") == 0 && !fl_partition_time_unit_parse(v, &out->unit))
            bad = key;
        else if (strcmp(opt, "num-precreate") == 0 && fl_ap_int_option(v, &out->num_precreate))
            bad = key;
        else if (strcmp(opt, "num-retention") == 0 && fl_ap_int_option(v, &out->num_retention))
            bad = key;
        if (bad) break;
    }
    int rc = 0;
    if (bad) {
        rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "stored table option '%s' cannot be read", bad);
        fl_auto_partition_strategy_clear(out);
    }
    json_decref(j);
    return rc;
}

int fl_auto_partition_day_delay_minutes(uint64_t seed, int64_t table_id) {
    /* splitmix64: a well-spread value per (coordinator, table) */
    uint64_t z = seed ^ ((uint64_t)table_id * 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (int)(z % FL_AUTO_PARTITION_DAY_DELAY_MINUTES);
}

/* ---- one pass ---- */

/* What a pass works with, copied out of the catalog's views. */
typedef struct fl_ap_table {
    int64_t id;
    char *db, *name;
    fl_strlist_t keys;
    int time_key;                       /* index of the time value in a partition's values */
    fl_auto_partition_strategy_t strategy;
    fl_tz_t *own_tz;                    /* the table's zone when it names one */
    const fl_tz_t *tz;
} fl_ap_table_t;

static void fl_ap_table_clear(fl_ap_table_t *t) {
    fl_free(t->db);
    fl_free(t->name);
    fl_strlist_free(&t->keys);
    fl_auto_partition_strategy_clear(&t->strategy);
    fl_tz_free(t->own_tz);
}

/* false when there is nothing to do for the table. */
static bool fl_ap_table_load(const fl_auto_partition_env_t *env, int64_t table_id, bool force,
                             fl_ap_table_t *out) {
    memset(out, 0, sizeof(*out));
    const fl_ms_table_t *t = env->cat->ms->ops->table_by_id(env->cat->ms, table_id);
    if (!t) return false;
    fl_error_t err;
    if (fl_auto_partition_strategy_read(t->table_json, &out->strategy, &err)) {
        FL_WARN("auto partitioning: skipping table [%s.%s]: %s", t->database, t->name, err.msg);
        return false;
    }
    if (!out->strategy.enabled || fl_catalog_partition_keys(t, &out->keys, &err) ||
        out->keys.count == 0) {
        fl_ap_table_clear(out);
        return false;
    }
    out->id = table_id;
    out->db = fl_strdup(t->database);
    out->name = fl_strdup(t->name);
    out->time_key = 0;
    if (out->keys.count > 1) {
        out->time_key = out->strategy.key ? fl_strlist_index(&out->keys, out->strategy.key) : -1;
        if (out->time_key < 0) {
            FL_WARN("auto partitioning: skipping table [%s.%s]: its auto partition key is not "
                    "one of its partition keys", out->db, out->name);
            fl_ap_table_clear(out);
            return false;
        }
    }
    out->tz = env->default_tz;
    if (out->strategy.time_zone) {
        bool known;
        out->own_tz = fl_partition_time_zone(env->zoneinfo_dir, out->strategy.time_zone, &known);
        out->tz = out->own_tz;
        if (!known)
            fl_log(force ? FL_LOG_WARN : FL_LOG_DEBUG,
                   "auto partitioning: table [%s.%s]: time zone '%s' is unknown, using GMT (as "
                   "Java's TimeZone does)", out->db, out->name, out->strategy.time_zone);
    }
    return true;
}

/* A partition marked for expiry: its name and values, copied. */
typedef struct fl_ap_victim {
    char *name;
    fl_strlist_t values;
} fl_ap_victim_t;

static void fl_ap_expire(const fl_auto_partition_env_t *env, fl_ap_table_t *at, int64_t instant_ms,
                         fl_auto_partition_stats_t *stats) {
    const fl_auto_partition_strategy_t *s = &at->strategy;
    char cutoff[FL_PARTITION_TIME_VALUE_MAX];
    if (s->num_retention < 0) return; /* keep everything */
    if (!fl_partition_time_value(at->tz, instant_ms, -(int64_t)s->num_retention, s->unit, cutoff))
        return; /* before year 1: nothing is older */
    const fl_ms_table_t *t = env->cat->ms->ops->table_by_id(env->cat->ms, at->id);
    if (!t) return;
    size_t n = 0;
    fl_ap_victim_t *victims = fl_calloc(t->partition_count ? t->partition_count : 1,
                                        sizeof(*victims));
    for (size_t i = 0; i < t->partition_count; i++) {
        const fl_ms_partition_t *p = &t->partitions[i];
        if ((size_t)at->time_key >= p->value_count || p->value_count != at->keys.count) continue;
        if (strcmp(p->values[at->time_key], cutoff) >= 0) continue;
        victims[n].name = fl_strdup(p->name);
        for (size_t k = 0; k < p->value_count; k++) fl_strlist_add(&victims[n].values, p->values[k]);
        n++;
    }
    if (n && env->hooks.may_drop && !env->hooks.may_drop(env->hooks.arg, at->id)) {
        stats->waiting += n;
        for (size_t i = 0; i < n; i++) {
            fl_free(victims[i].name);
            fl_strlist_free(&victims[i].values);
        }
        n = 0;
    }
    for (size_t i = 0; i < n; i++) {
        fl_error_t err;
        int64_t dropped = -1;
        int rc = fl_catalog_drop_partition(env->cat, at->db, at->name,
                                           (const char *const *)at->keys.items,
                                           (const char *const *)victims[i].values.items,
                                           victims[i].values.count, false, &dropped, &err);
        if (rc == 0 && dropped >= 0) {
            stats->dropped++;
            FL_INFO("auto partitioning: dropped partition %s of table [%s.%s] (older than %s)",
                    victims[i].name, at->db, at->name, cutoff);
            if (env->hooks.dropped)
                env->hooks.dropped(env->hooks.arg, at->db, at->name, at->id, victims[i].name,
                                   dropped);
        } else if (rc == FLUSS_ERR_PARTITION_NOT_EXISTS) {
            FL_INFO("auto partitioning: partition %s of table [%s.%s] is already gone",
                    victims[i].name, at->db, at->name);
        } else if (rc) {
            stats->refused++;
            FL_WARN("auto partitioning: cannot drop partition %s of table [%s.%s]: %s",
                    victims[i].name, at->db, at->name, err.msg);
        }
        fl_free(victims[i].name);
        fl_strlist_free(&victims[i].values);
    }
    fl_free(victims);
}

static void fl_ap_precreate(const fl_auto_partition_env_t *env, fl_ap_table_t *at,
                            int64_t instant_ms, fl_auto_partition_stats_t *stats) {
    const fl_auto_partition_strategy_t *s = &at->strategy;
    /* with several partition keys the other values are unknown: nothing
     * can be pre-created (validation keeps num-precreate at 0 there) */
    if (at->keys.count != 1 || s->num_precreate <= 0) return;
    size_t created = 0;
    for (int32_t i = 0; i < s->num_precreate; i++) {
        char value[FL_PARTITION_TIME_VALUE_MAX];
        if (!fl_partition_time_value(at->tz, instant_ms, i, s->unit, value)) break;
        const fl_ms_table_t *t = env->cat->ms->ops->table_by_id(env->cat->ms, at->id);
        if (!t) break;
        if (fl_ms_table_partition(t, 0, value)) continue;
        const char *keys[1] = {at->keys.items[0]}, *values[1] = {value};
        fl_error_t err;
        int rc = fl_catalog_create_partition(env->cat, at->db, at->name, keys, values, 1, false,
                                             &err);
        if (rc == 0) {
            created++;
            FL_INFO("auto partitioning: created partition %s=%s of table [%s.%s]", keys[0], value,
                    at->db, at->name);
            continue;
        }
        /* the limits refuse every later partition too, and anything else
         * (a latched store) would fail again: stop here, retry next pass */
        stats->refused++;
        if (rc == FLUSS_ERR_PARTITION_MAX_NUM_EXCEPTION || rc == FLUSS_ERR_BUCKET_MAX_NUM_EXCEPTION)
            FL_WARN("auto partitioning: skipping partition %s=%s of table [%s.%s] and later "
                    "ones: %s", keys[0], value, at->db, at->name, err.msg);
        else
            FL_ERROR("auto partitioning: cannot create partition %s=%s of table [%s.%s]: %s",
                     keys[0], value, at->db, at->name, err.msg);
        break;
    }
    stats->created += created;
    if (created && env->hooks.created) env->hooks.created(env->hooks.arg, at->id);
}

void fl_auto_partition_table(const fl_auto_partition_env_t *env, int64_t table_id, int64_t now_ms,
                             bool force, fl_auto_partition_stats_t *stats) {
    fl_ap_table_t at;
    if (!fl_ap_table_load(env, table_id, force, &at)) return;
    int64_t instant_ms = now_ms;
    if (!force && at.strategy.unit == FL_PARTITION_TIME_DAY)
        instant_ms -= (int64_t)fl_auto_partition_day_delay_minutes(env->day_delay_seed, table_id) *
                      60000;
    fl_ap_expire(env, &at, instant_ms, stats);
    fl_ap_precreate(env, &at, instant_ms, stats);
    fl_ap_table_clear(&at);
}

void fl_auto_partition_all(const fl_auto_partition_env_t *env, int64_t now_ms,
                           fl_auto_partition_stats_t *stats) {
    /* the ids first: every change below invalidates the store's views */
    fl_metastore_t *ms = env->cat->ms;
    size_t n = ms->ops->table_count(ms);
    int64_t *ids = fl_calloc(n ? n : 1, sizeof(*ids));
    for (size_t i = 0; i < n; i++) ids[i] = ms->ops->table_at(ms, i)->table_id;
    for (size_t i = 0; i < n; i++) fl_auto_partition_table(env, ids[i], now_ms, false, stats);
    fl_free(ids);
}
