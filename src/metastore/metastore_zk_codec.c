/*
 * metastore_zk_codec.c — the znode payloads of the ZooKeeper metastore
 * (layout table in metastore_zk_codec.h): Fluss's registration JSON, the
 * bucket assignments, LeaderAndIsr, server and coordinator addresses,
 * counters and the coordinator epoch. Pure functions over bytes; no
 * thread rule.
 *
 * Decoders read what 0.9.1's Jackson serdes write: members looked up by
 * name, unknown members ignored, missing required members refused. Numbers
 * must be JSON integers in range (0.9.1 never writes them otherwise).
 */
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "metastore_zk_codec.h"

#define FL_ZKC_DUMP_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER)

static int fl_zkc_bad(fl_error_t *err, const char *what, const char *why) {
    return fl_err_set(err, FLUSS_ERR__CORRUPT, "invalid %s znode payload: %s", what, why);
}

/* A JSON object from untrusted bytes, or NULL with err set. */
static json_t *fl_zkc_parse(const void *data, size_t len, const char *what, fl_error_t *err) {
    if (len > FL_ZK_PAYLOAD_MAX) {
        fl_zkc_bad(err, what, "too large");
        return NULL;
    }
    json_error_t jerr;
    json_t *j = json_loadb(data, len, 0, &jerr);
    if (!j) {
        fl_err_set(err, FLUSS_ERR__CORRUPT, "invalid %s znode payload: %s", what, jerr.text);
        return NULL;
    }
    if (!json_is_object(j)) {
        json_decref(j);
        fl_zkc_bad(err, what, "not a JSON object");
        return NULL;
    }
    return j;
}

static int fl_zkc_i64(const json_t *o, const char *key, int64_t *out, const char *what,
                      fl_error_t *err) {
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v)) {
        char why[96];
        snprintf(why, sizeof(why), "\"%s\" missing or not an integer", key);
        return fl_zkc_bad(err, what, why);
    }
    *out = json_integer_value(v);
    return 0;
}

static int fl_zkc_i32(const json_t *o, const char *key, int32_t *out, const char *what,
                      fl_error_t *err) {
    int64_t v;
    int rc = fl_zkc_i64(o, key, &v, what, err);
    if (rc) return rc;
    if (v < INT32_MIN || v > INT32_MAX) {
        char why[96];
        snprintf(why, sizeof(why), "\"%s\" out of range", key);
        return fl_zkc_bad(err, what, why);
    }
    *out = (int32_t)v;
    return 0;
}

static char *fl_zkc_dump(const json_t *j) {
    char *s = json_dumps(j, FL_ZKC_DUMP_FLAGS);
    if (!s) abort(); /* jansson fails only on allocation */
    return s;
}

/* An int32 array member into dst (at most max entries). */
static int fl_zkc_i32_array(const json_t *arr, int32_t *dst, int32_t max, int32_t *count,
                            const char *what, fl_error_t *err) {
    if (!json_is_array(arr)) return fl_zkc_bad(err, what, "replica list is not an array");
    if (json_array_size(arr) > (size_t)max) return fl_zkc_bad(err, what, "too many replicas");
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *v = json_array_get(arr, i);
        if (!json_is_integer(v) || json_integer_value(v) < INT32_MIN ||
            json_integer_value(v) > INT32_MAX)
            return fl_zkc_bad(err, what, "replica id is not an int32");
        dst[i] = (int32_t)json_integer_value(v);
    }
    *count = (int32_t)json_array_size(arr);
    return 0;
}

/* ---- registrations: descriptor members plus ZooKeeper-only ones ---- */

/* Copies the members of desc to reg, skipping `skip` (may be NULL). */
static void fl_zkc_copy_members(json_t *reg, const json_t *desc, const char *skip) {
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)desc, k, v) {
        if (skip && strcmp(k, skip) == 0) continue;
        json_object_set(reg, k, v);
    }
}

static bool fl_zkc_reserved(const json_t *desc, const char *const *keys) {
    for (size_t i = 0; keys[i]; i++)
        if (json_object_get(desc, keys[i])) return true;
    return false;
}

char *fl_zk_db_reg_encode(const char *db_json, int64_t created_ms, int64_t modified_ms,
                          fl_error_t *err) {
    static const char *const reserved[] = {"created_time", "modified_time", NULL};
    json_t *desc = json_loads(db_json, 0, NULL);
    if (!json_is_object(desc) || fl_zkc_reserved(desc, reserved)) {
        json_decref(desc);
        fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                   "database descriptor cannot be stored as a DatabaseRegistration");
        return NULL;
    }
    json_t *reg = json_object();
    fl_zkc_copy_members(reg, desc, NULL);
    json_object_set_new(reg, "created_time", json_integer(created_ms));
    json_object_set_new(reg, "modified_time", json_integer(modified_ms));
    json_decref(desc);
    char *s = fl_zkc_dump(reg);
    json_decref(reg);
    return s;
}

int fl_zk_db_reg_decode(const void *data, size_t len, char **db_json, int64_t *created_ms,
                        int64_t *modified_ms, fl_error_t *err) {
    json_t *reg = fl_zkc_parse(data, len, "database", err);
    if (!reg) return err ? err->code : FLUSS_ERR__CORRUPT;
    int rc = fl_zkc_i64(reg, "created_time", created_ms, "database", err);
    if (!rc) rc = fl_zkc_i64(reg, "modified_time", modified_ms, "database", err);
    if (!rc && !json_is_object(json_object_get(reg, "custom_properties")))
        rc = fl_zkc_bad(err, "database", "\"custom_properties\" missing");
    if (!rc) {
        json_object_del(reg, "created_time");
        json_object_del(reg, "modified_time");
        *db_json = fl_zkc_dump(reg);
    }
    json_decref(reg);
    return rc;
}

char *fl_zk_table_reg_encode(const char *table_json, const char *schema_json, int64_t table_id,
                             int64_t created_ms, int64_t modified_ms, fl_error_t *err) {
    static const char *const reserved[] = {"table_id", "created_time", "modified_time", NULL};
    json_t *desc = json_loads(table_json, 0, NULL);
    char *reg_text = NULL, *back = NULL, *want = NULL;
    if (!json_is_object(desc) || fl_zkc_reserved(desc, reserved)) goto refuse;
    json_t *reg = json_object();
    json_t *version = json_object_get(desc, "version");
    if (version) json_object_set(reg, "version", version);
    json_object_set_new(reg, "table_id", json_integer(table_id));
    fl_zkc_copy_members(reg, desc, "schema");
    json_object_set_new(reg, "created_time", json_integer(created_ms));
    json_object_set_new(reg, "modified_time", json_integer(modified_ms));
    reg_text = fl_zkc_dump(reg);
    json_decref(reg);
    /* what a reload rebuilds must be this very descriptor, schema included */
    int64_t id, c, m;
    fl_error_t ignored;
    if (fl_zk_table_reg_decode(reg_text, strlen(reg_text), schema_json, &back, &id, &c, &m,
                               &ignored))
        goto refuse;
    want = fl_zkc_dump(desc);
    if (strcmp(back, want) != 0) goto refuse;
    free(back);
    free(want);
    json_decref(desc);
    return reg_text;
refuse:
    free(reg_text);
    free(back);
    free(want);
    json_decref(desc);
    fl_err_set(err, FLUSS_ERR__INVALID_ARG,
               "table descriptor cannot be stored as a TableRegistration and its latest "
               "schema (it must be a JSON object whose \"schema\" is that schema, without "
               "table_id, created_time or modified_time)");
    return NULL;
}

int fl_zk_table_reg_decode(const void *data, size_t len, const char *schema_json,
                           char **table_json, int64_t *table_id, int64_t *created_ms,
                           int64_t *modified_ms, fl_error_t *err) {
    json_t *reg = fl_zkc_parse(data, len, "table", err);
    if (!reg) return err ? err->code : FLUSS_ERR__CORRUPT;
    json_t *schema = NULL;
    int rc = fl_zkc_i64(reg, "table_id", table_id, "table", err);
    if (!rc) rc = fl_zkc_i64(reg, "created_time", created_ms, "table", err);
    if (!rc) rc = fl_zkc_i64(reg, "modified_time", modified_ms, "table", err);
    if (!rc && !json_is_integer(json_object_get(reg, "bucket_count")))
        rc = fl_zkc_bad(err, "table", "\"bucket_count\" missing");
    if (!rc && schema_json && !(schema = json_loads(schema_json, 0, NULL)))
        rc = fl_zkc_bad(err, "schema", "not JSON");
    if (rc) goto done;
    /* the descriptor: "version" first when the registration has it, then
     * "schema", then the rest without the ZooKeeper-only members */
    json_t *desc = json_object();
    json_t *version = json_object_get(reg, "version");
    if (version) json_object_set(desc, "version", version);
    if (schema) json_object_set(desc, "schema", schema);
    const char *k;
    json_t *v;
    json_object_foreach(reg, k, v) {
        if (strcmp(k, "version") == 0 || strcmp(k, "table_id") == 0 ||
            strcmp(k, "created_time") == 0 || strcmp(k, "modified_time") == 0 ||
            (schema && strcmp(k, "schema") == 0))
            continue;
        json_object_set(desc, k, v);
    }
    *table_json = fl_zkc_dump(desc);
    json_decref(desc);
done:
    json_decref(schema);
    json_decref(reg);
    return rc;
}

int32_t fl_zk_schema_autoinc_column(const char *schema_json) {
    json_t *s = json_loads(schema_json, 0, NULL);
    int32_t id = -1;
    const char *name = json_string_value(json_array_get(json_object_get(s, "auto_increment_column"), 0));
    const json_t *cols = json_object_get(s, "columns");
    for (size_t i = 0; name && i < json_array_size(cols); i++) {
        const json_t *c = json_array_get(cols, i);
        const char *cn = json_string_value(json_object_get(c, "name"));
        const json_t *cid = json_object_get(c, "id");
        if (cn && strcmp(cn, name) == 0 && json_is_integer(cid) && json_integer_value(cid) >= 0 &&
            json_integer_value(cid) <= INT32_MAX)
            id = (int32_t)json_integer_value(cid);
    }
    json_decref(s);
    return id;
}

/* ---- partitions ---- */

char *fl_zk_partition_encode(int64_t table_id, const fl_ms_partition_t *p, fl_error_t *err) {
    (void)err;
    json_t *values = json_array();
    for (size_t i = 0; i < p->value_count; i++)
        json_array_append_new(values, json_string(p->values[i]));
    json_t *j = json_pack("{s:i,s:I,s:I,s:o,s:I}", "version", 1, "table_id", (json_int_t)table_id,
                          "partition_id", (json_int_t)p->partition_id, "partition_values",
                          values, "created_time", (json_int_t)p->created_ms);
    if (!j) { /* a value that is not UTF-8 */
        fl_err_set(err, FLUSS_ERR__INVALID_ARG, "partition values are not UTF-8");
        return NULL;
    }
    char *s = fl_zkc_dump(j);
    json_decref(j);
    return s;
}

int fl_zk_partition_decode(const void *data, size_t len, int64_t *table_id,
                           int64_t *partition_id, char ***values, size_t *value_count,
                           int64_t *created_ms, int *has_created, fl_error_t *err) {
    json_t *j = fl_zkc_parse(data, len, "partition", err);
    if (!j) return err ? err->code : FLUSS_ERR__CORRUPT;
    *values = NULL;
    *value_count = 0;
    *has_created = 0;
    int rc = fl_zkc_i64(j, "table_id", table_id, "partition", err);
    if (!rc) rc = fl_zkc_i64(j, "partition_id", partition_id, "partition", err);
    const json_t *vals = json_object_get(j, "partition_values");
    if (!rc && vals) {
        if (!json_is_array(vals) || json_array_size(vals) > 1024) {
            rc = fl_zkc_bad(err, "partition", "\"partition_values\" is not a short array");
        } else {
            for (size_t i = 0; i < json_array_size(vals); i++)
                if (!json_is_string(json_array_get(vals, i)))
                    rc = fl_zkc_bad(err, "partition", "a partition value is not a string");
        }
        if (!rc) {
            *value_count = json_array_size(vals);
            *values = fl_calloc(*value_count ? *value_count : 1, sizeof(char *));
            for (size_t i = 0; i < *value_count; i++)
                (*values)[i] = fl_strdup(json_string_value(json_array_get(vals, i)));
        }
    }
    if (!rc && json_object_get(j, "created_time")) {
        rc = fl_zkc_i64(j, "created_time", created_ms, "partition", err);
        *has_created = rc == 0;
    }
    if (rc && *values) {
        for (size_t i = 0; i < *value_count; i++) fl_free((*values)[i]);
        fl_free(*values);
        *values = NULL;
        *value_count = 0;
    }
    json_decref(j);
    return rc;
}

/* ---- assignments ---- */

char *fl_zk_assignment_encode(int64_t table_id, const fl_ms_bucket_t *buckets, int32_t count) {
    json_t *j = json_object();
    json_object_set_new(j, "version", json_integer(1));
    if (table_id >= 0) json_object_set_new(j, "table_id", json_integer(table_id));
    json_t *bj = json_object();
    for (int32_t b = 0; b < count; b++) {
        json_t *reps = json_array();
        for (int32_t r = 0; r < buckets[b].replica_count; r++)
            json_array_append_new(reps, json_integer(buckets[b].replicas[r]));
        char key[16];
        snprintf(key, sizeof(key), "%" PRId32, b);
        json_object_set_new(bj, key, reps);
    }
    json_object_set_new(j, "buckets", bj);
    char *s = fl_zkc_dump(j);
    json_decref(j);
    return s;
}

/* A bucket key: a decimal int in [0, max), no sign, no leading zeros. */
static int32_t fl_zkc_bucket_key(const char *k, int32_t max) {
    size_t n = strlen(k);
    if (n == 0 || n > 6 || (n > 1 && k[0] == '0')) return -1;
    int32_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (k[i] < '0' || k[i] > '9') return -1;
        v = v * 10 + (k[i] - '0');
    }
    return v < max ? v : -1;
}

int fl_zk_assignment_decode(const void *data, size_t len, int64_t *table_id,
                            fl_ms_bucket_t **buckets, int32_t *count, fl_error_t *err) {
    json_t *j = fl_zkc_parse(data, len, "assignment", err);
    if (!j) return err ? err->code : FLUSS_ERR__CORRUPT;
    int rc = 0;
    *table_id = -1;
    *buckets = NULL;
    *count = 0;
    if (json_object_get(j, "table_id")) rc = fl_zkc_i64(j, "table_id", table_id, "assignment", err);
    const json_t *bj = json_object_get(j, "buckets");
    if (!rc && (!json_is_object(bj) || json_object_size(bj) > FL_ZK_BUCKETS_MAX))
        rc = fl_zkc_bad(err, "assignment", "\"buckets\" missing or too large");
    if (rc) goto done;
    int32_t n = (int32_t)json_object_size(bj);
    fl_ms_bucket_t *out = fl_calloc(n ? (size_t)n : 1, sizeof(*out));
    for (int32_t b = 0; b < n; b++) out[b].replica_count = -1;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)bj, k, v) {
        int32_t b = fl_zkc_bucket_key(k, n);
        /* keys must be exactly 0..n-1: a key out of range or twice leaves a hole */
        if (b < 0 || out[b].replica_count >= 0) {
            rc = fl_zkc_bad(err, "assignment", "bucket ids are not 0..n-1");
            break;
        }
        if ((rc = fl_zkc_i32_array(v, out[b].replicas, FL_REPLICAS_MAX, &out[b].replica_count,
                                   "assignment", err)))
            break;
        out[b].leader = -1;
    }
    if (rc) {
        fl_free(out);
        goto done;
    }
    *buckets = out;
    *count = n;
done:
    json_decref(j);
    return rc;
}

/* ---- LeaderAndIsr ---- */

char *fl_zk_leader_isr_encode(const fl_zk_leader_isr_t *l) {
    json_t *isr = json_array();
    for (int32_t i = 0; i < l->isr_count; i++) json_array_append_new(isr, json_integer(l->isr[i]));
    json_t *j = json_pack("{s:i,s:i,s:i,s:o,s:i,s:i}", "version", 1, "leader", l->leader,
                          "leader_epoch", l->leader_epoch, "isr", isr, "coordinator_epoch",
                          l->coordinator_epoch, "bucket_epoch", l->bucket_epoch);
    char *s = fl_zkc_dump(j);
    json_decref(j);
    return s;
}

int fl_zk_leader_isr_decode(const void *data, size_t len, fl_zk_leader_isr_t *out,
                            fl_error_t *err) {
    json_t *j = fl_zkc_parse(data, len, "leader_isr", err);
    if (!j) return err ? err->code : FLUSS_ERR__CORRUPT;
    memset(out, 0, sizeof(*out));
    int rc = fl_zkc_i32(j, "leader", &out->leader, "leader_isr", err);
    if (!rc) rc = fl_zkc_i32(j, "leader_epoch", &out->leader_epoch, "leader_isr", err);
    if (!rc) rc = fl_zkc_i32(j, "coordinator_epoch", &out->coordinator_epoch, "leader_isr", err);
    if (!rc) rc = fl_zkc_i32(j, "bucket_epoch", &out->bucket_epoch, "leader_isr", err);
    if (!rc)
        rc = fl_zkc_i32_array(json_object_get(j, "isr"), out->isr, FL_REPLICAS_MAX,
                              &out->isr_count, "leader_isr", err);
    json_decref(j);
    return rc;
}

/* ---- tablet servers and the coordinator ---- */

char *fl_zk_tablet_server_encode(const fl_zk_tablet_server_t *ts) {
    json_t *j = json_pack("{s:i,s:s,s:I}", "version", 3, "listeners", ts->listeners,
                          "register_timestamp", (json_int_t)ts->register_ms);
    if (!j) abort(); /* listeners are ours, ASCII */
    if (ts->rack) json_object_set_new(j, "rack", json_string(ts->rack));
    char *s = fl_zkc_dump(j);
    json_decref(j);
    return s;
}

/* "CLIENT://host:port" for a version 1 payload (host and port members). */
static int fl_zkc_v1_listener(const json_t *j, char **out, const char *what, fl_error_t *err) {
    const char *host = json_string_value(json_object_get(j, "host"));
    int32_t port;
    if (!host) return fl_zkc_bad(err, what, "\"host\" missing");
    int rc = fl_zkc_i32(j, "port", &port, what, err);
    if (rc) return rc;
    size_t n = strlen(host) + 32;
    *out = fl_malloc(n);
    snprintf(*out, n, "CLIENT://%s:%" PRId32, host, port);
    return 0;
}

int fl_zk_tablet_server_decode(const void *data, size_t len, fl_zk_tablet_server_t *out,
                               fl_error_t *err) {
    json_t *j = fl_zkc_parse(data, len, "tablet server", err);
    if (!j) return err ? err->code : FLUSS_ERR__CORRUPT;
    out->listeners = NULL;
    out->rack = NULL;
    int32_t version;
    int rc = fl_zkc_i32(j, "version", &version, "tablet server", err);
    if (!rc) rc = fl_zkc_i64(j, "register_timestamp", &out->register_ms, "tablet server", err);
    if (!rc && version == 1) {
        rc = fl_zkc_v1_listener(j, &out->listeners, "tablet server", err);
    } else if (!rc) {
        const char *l = json_string_value(json_object_get(j, "listeners"));
        if (!l) rc = fl_zkc_bad(err, "tablet server", "\"listeners\" missing");
        else out->listeners = fl_strdup(l);
        const char *rack = json_string_value(json_object_get(j, "rack"));
        if (!rc && version >= 3 && rack) out->rack = fl_strdup(rack);
    }
    json_decref(j);
    if (rc) fl_zk_tablet_server_clear(out);
    return rc;
}

void fl_zk_tablet_server_clear(fl_zk_tablet_server_t *ts) {
    fl_free(ts->listeners);
    fl_free(ts->rack);
    ts->listeners = NULL;
    ts->rack = NULL;
}

char *fl_zk_coordinator_encode(const char *id, const char *listeners) {
    json_t *j = json_pack("{s:i,s:s,s:s}", "version", 2, "id", id, "listeners", listeners);
    if (!j) abort(); /* ours, ASCII */
    char *s = fl_zkc_dump(j);
    json_decref(j);
    return s;
}

int fl_zk_coordinator_decode(const void *data, size_t len, char **id, char **listeners,
                             fl_error_t *err) {
    json_t *j = fl_zkc_parse(data, len, "coordinator", err);
    if (!j) return err ? err->code : FLUSS_ERR__CORRUPT;
    *id = *listeners = NULL;
    int32_t version;
    int rc = fl_zkc_i32(j, "version", &version, "coordinator", err);
    const char *sid = json_string_value(json_object_get(j, "id"));
    if (!rc && !sid) rc = fl_zkc_bad(err, "coordinator", "\"id\" missing");
    if (!rc && version == 1) {
        rc = fl_zkc_v1_listener(j, listeners, "coordinator", err);
    } else if (!rc) {
        const char *l = json_string_value(json_object_get(j, "listeners"));
        if (!l) rc = fl_zkc_bad(err, "coordinator", "\"listeners\" missing");
        else *listeners = fl_strdup(l);
    }
    if (!rc) *id = fl_strdup(sid);
    json_decref(j);
    return rc;
}

/* ---- counters and the epoch ---- */

void fl_zk_counter_encode(int64_t v, uint8_t out[8]) {
    uint64_t u = (uint64_t)v;
    for (int i = 7; i >= 0; i--, u >>= 8) out[i] = (uint8_t)u;
}

int fl_zk_counter_decode(const void *data, size_t len, int64_t *v, fl_error_t *err) {
    if (len != 8) return fl_zkc_bad(err, "counter", "not 8 bytes");
    const uint8_t *p = data;
    uint64_t u = 0;
    for (int i = 0; i < 8; i++) u = u << 8 | p[i];
    *v = (int64_t)u;
    return 0;
}

void fl_zk_epoch_encode(int32_t epoch, char out[12]) { snprintf(out, 12, "%" PRId32, epoch); }

int fl_zk_epoch_decode(const void *data, size_t len, int32_t *epoch, fl_error_t *err) {
    const char *p = data;
    if (len == 0 || len > 11) return fl_zkc_bad(err, "epoch", "not a decimal int32");
    size_t i = p[0] == '-' ? 1 : 0;
    if (i == len) return fl_zkc_bad(err, "epoch", "not a decimal int32");
    int64_t v = 0;
    for (; i < len; i++) {
        if (p[i] < '0' || p[i] > '9') return fl_zkc_bad(err, "epoch", "not a decimal int32");
        v = v * 10 + (p[i] - '0');
    }
    if (p[0] == '-') v = -v;
    if (v < INT32_MIN || v > INT32_MAX) return fl_zkc_bad(err, "epoch", "out of range");
    *epoch = (int32_t)v;
    return 0;
}
