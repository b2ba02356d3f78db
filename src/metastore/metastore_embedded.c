/*
 * metastore_embedded.c — the embedded metadata store of local mode.
 *
 * The whole state lives in memory and in one file, <dir>/metadata.json,
 * replaced atomically on every mutation (common_fs: temp file, fsync,
 * rename, fsync dir). Metadata changes are rare (DDL, id blocks), so one
 * small file rewritten per change is simpler and safer than a log. File:
 *
 *   {"version":2,"counters":[next table id, next partition id, next writer id],
 *    "databases":[{"name","json","created","modified"}...],
 *    "tables":[{"database","name","id","schema_id","table_json","schemas":[..],
 *               "created","modified","buckets":[{"leader","epoch","replicas":[..]}],
 *               "autoinc_next" (only when not 0)}],
 *    "acls":[{"type","name","json"}] (only when there are ACLs),
 *    "scram":[{"user","mechanism","credential"}] (only when there are any)}
 *   followed by "\ncrc32c <8 hex digits of the CRC-32C of the document>\n".
 *
 * A file whose checksum is missing or does not match is refused with a
 * clear error (version 1 files, from before the checksum, have none and
 * are read as they are). "acls" holds one entry per resource with ACLs
 * (Fluss's /fluss-acls/<TYPE>/<name>: type is the ResourceType code, json
 * the authorizer's document, kept as text), ordered by type, then name;
 * a file without it has none. "scram" (fluss-c's own) holds one entry
 * per SCRAM credential, ordered by user, then mechanism: user non-empty
 * and at most FL_MS_SCRAM_USER_MAX bytes, mechanism SCRAM-SHA-256 or
 * SCRAM-SHA-512, credential the authenticator's text; a malformed or
 * repeated entry is refused at open, a file without it has none. A
 * failed write latches the store: memory is reloaded from the file and
 * every later mutation fails with STORAGE_EXCEPTION (no retry of a failed
 * fsync). Thread rule: one thread, see metastore.h.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common_alloc.h"
#include "common_crc32c.h"
#include "common_fs.h"
#include "common_log.h"
#include "metastore.h"

/* The file is the JSON document followed by one line with its CRC-32C:
 * "\ncrc32c 0123abcd\n", so damage at rest is found, not loaded. */
#define FL_MS_TRAILER_FMT "\ncrc32c %08x\n"
#define FL_MS_TRAILER_LEN 17

#define FL_MS_FILE "metadata.json"
#define FL_MS_FILE_MAX (256u * 1024 * 1024)

typedef struct fl_ms_embedded {
    fl_metastore_t base;
    char *path;
    bool failed;
    int64_t counters[FL_MS_COUNTER_COUNT];
    size_t db_count, db_cap;
    fl_ms_database_t *dbs;
    size_t table_count, table_cap;
    fl_ms_table_t *tables;
    size_t acl_count, acl_cap;
    fl_ms_acl_node_t *acls; /* ordered by (resource_type, resource_name) */
    size_t scram_count, scram_cap;
    fl_ms_scram_node_t *scrams; /* ordered by (user, mechanism) */
} fl_ms_embedded_t;

static void fl_mse_acl_clear(fl_ms_acl_node_t *a) {
    fl_free(a->resource_name);
    fl_free(a->json);
    memset(a, 0, sizeof(*a));
}

static void fl_mse_clear_state(fl_ms_embedded_t *m) {
    for (size_t i = 0; i < m->db_count; i++) fl_ms_database_clear(&m->dbs[i]);
    for (size_t i = 0; i < m->table_count; i++) fl_ms_table_clear(&m->tables[i]);
    for (size_t i = 0; i < m->acl_count; i++) fl_mse_acl_clear(&m->acls[i]);
    fl_ms_scram_free(m->scrams, m->scram_count);
    m->scrams = NULL;
    m->db_count = 0;
    m->table_count = 0;
    m->acl_count = 0;
    m->scram_count = m->scram_cap = 0;
    memset(m->counters, 0, sizeof(m->counters));
}

/* ---- serialization ---- */

static json_t *fl_mse_buckets_json(const fl_ms_bucket_t *buckets, int32_t count) {
    json_t *arr = json_array();
    for (int32_t b = 0; b < count; b++) {
        json_t *replicas = json_array();
        for (int32_t r = 0; r < buckets[b].replica_count; r++)
            json_array_append_new(replicas, json_integer(buckets[b].replicas[r]));
        json_t *bj = json_pack("{s:i,s:i,s:o}", "leader", buckets[b].leader, "epoch",
                               buckets[b].leader_epoch, "replicas", replicas);
        if (buckets[b].isr_count) {
            json_t *isr = json_array();
            for (int32_t r = 0; r < buckets[b].isr_count; r++)
                json_array_append_new(isr, json_integer(buckets[b].isr[r]));
            json_object_set_new(bj, "isr", isr);
            json_object_set_new(bj, "bucket_epoch", json_integer(buckets[b].bucket_epoch));
        }
        json_array_append_new(arr, bj);
    }
    return arr;
}

static json_t *fl_mse_partitions_json(const fl_ms_table_t *t) {
    json_t *arr = json_array();
    for (size_t i = 0; i < t->partition_count; i++) {
        const fl_ms_partition_t *p = &t->partitions[i];
        json_t *values = json_array();
        for (size_t v = 0; v < p->value_count; v++)
            json_array_append_new(values, json_string(p->values[v]));
        json_array_append_new(
            arr, json_pack("{s:I,s:s,s:o,s:I,s:o}", "id", (json_int_t)p->partition_id, "name",
                           p->name, "values", values, "created", (json_int_t)p->created_ms,
                           "buckets", fl_mse_buckets_json(p->buckets, p->bucket_count)));
    }
    return arr;
}

static json_t *fl_mse_to_json(const fl_ms_embedded_t *m) {
    json_t *root = json_object();
    json_object_set_new(root, "version", json_integer(2));
    json_t *counters = json_array();
    for (int i = 0; i < FL_MS_COUNTER_COUNT; i++)
        json_array_append_new(counters, json_integer(m->counters[i]));
    json_object_set_new(root, "counters", counters);
    json_t *dbs = json_array();
    for (size_t i = 0; i < m->db_count; i++) {
        const fl_ms_database_t *d = &m->dbs[i];
        json_array_append_new(dbs, json_pack("{s:s,s:s,s:I,s:I}", "name", d->name, "json",
                                             d->json, "created", (json_int_t)d->created_ms,
                                             "modified", (json_int_t)d->modified_ms));
    }
    json_object_set_new(root, "databases", dbs);
    json_t *tables = json_array();
    for (size_t i = 0; i < m->table_count; i++) {
        const fl_ms_table_t *t = &m->tables[i];
        json_t *schemas = json_array();
        for (size_t s = 0; s < t->schema_count; s++)
            json_array_append_new(schemas, json_string(t->schema_jsons[s]));
        json_array_append_new(
            tables, json_pack("{s:s,s:s,s:I,s:i,s:s,s:o,s:I,s:I,s:o,s:o}", "database", t->database,
                              "name", t->name, "id", (json_int_t)t->table_id, "schema_id",
                              t->schema_id, "table_json", t->table_json, "schemas", schemas,
                              "created", (json_int_t)t->created_ms, "modified",
                              (json_int_t)t->modified_ms, "buckets",
                              fl_mse_buckets_json(t->buckets, t->bucket_count), "partitions",
                              fl_mse_partitions_json(t)));
        if (t->autoinc_next)
            json_object_set_new(json_array_get(tables, json_array_size(tables) - 1),
                                "autoinc_next", json_integer(t->autoinc_next));
    }
    json_object_set_new(root, "tables", tables);
    if (m->acl_count) { /* absent when empty: files from before ACLs stay as they were */
        json_t *acls = json_array();
        for (size_t i = 0; i < m->acl_count; i++)
            json_array_append_new(acls, json_pack("{s:i,s:s,s:s}", "type",
                                                  m->acls[i].resource_type, "name",
                                                  m->acls[i].resource_name, "json",
                                                  m->acls[i].json));
        json_object_set_new(root, "acls", acls);
    }
    if (m->scram_count) { /* absent when empty, as "acls" */
        json_t *scram = json_array();
        for (size_t i = 0; i < m->scram_count; i++)
            json_array_append_new(scram, json_pack("{s:s,s:s,s:s}", "user", m->scrams[i].user,
                                                   "mechanism", m->scrams[i].mechanism,
                                                   "credential", m->scrams[i].credential));
        json_object_set_new(root, "scram", scram);
    }
    return root;
}

static int fl_mse_bad(fl_error_t *err, const char *path, const char *what) {
    return fl_err_set(err, FLUSS_ERR__CORRUPT, "%s: invalid metadata file (%s)", path, what);
}

/* Loads a bucket array; returns its length or -1 when malformed. */
static int32_t fl_mse_load_buckets(const json_t *arr, fl_ms_bucket_t **out) {
    if (!json_is_array(arr) || json_array_size(arr) > 1u << 20) return -1;
    int32_t n = (int32_t)json_array_size(arr);
    *out = fl_calloc(n ? (size_t)n : 1, sizeof(fl_ms_bucket_t));
    for (int32_t b = 0; b < n; b++) {
        const json_t *bj = json_array_get(arr, (size_t)b);
        const json_t *reps = json_object_get(bj, "replicas");
        if (!json_is_array(reps) || json_array_size(reps) > FL_REPLICAS_MAX) return -1;
        (*out)[b].leader = (int32_t)json_integer_value(json_object_get(bj, "leader"));
        (*out)[b].leader_epoch = (int32_t)json_integer_value(json_object_get(bj, "epoch"));
        (*out)[b].replica_count = (int32_t)json_array_size(reps);
        for (size_t r = 0; r < json_array_size(reps); r++)
            (*out)[b].replicas[r] = (int32_t)json_integer_value(json_array_get(reps, r));
        const json_t *isr = json_object_get(bj, "isr");
        if (isr) {
            if (!json_is_array(isr) || json_array_size(isr) > FL_REPLICAS_MAX) return -1;
            (*out)[b].isr_count = (int32_t)json_array_size(isr);
            for (size_t r = 0; r < json_array_size(isr); r++)
                (*out)[b].isr[r] = (int32_t)json_integer_value(json_array_get(isr, r));
            (*out)[b].bucket_epoch =
                (int32_t)json_integer_value(json_object_get(bj, "bucket_epoch"));
        }
    }
    return n;
}

static int fl_mse_load_partitions(fl_ms_embedded_t *m, const json_t *arr, fl_ms_table_t *t,
                                  fl_error_t *err) {
    if (!arr) return 0; /* stores written before partitions existed */
    if (!json_is_array(arr)) return fl_mse_bad(err, m->path, "partitions");
    size_t n = json_array_size(arr);
    t->partitions = fl_calloc(n ? n : 1, sizeof(fl_ms_partition_t));
    for (size_t i = 0; i < n; i++) {
        const json_t *pj = json_array_get(arr, i);
        fl_ms_partition_t *p = &t->partitions[i];
        t->partition_count = i + 1;
        const char *name = json_string_value(json_object_get(pj, "name"));
        const json_t *values = json_object_get(pj, "values");
        if (!name || !json_is_integer(json_object_get(pj, "id")) || !json_is_array(values))
            return fl_mse_bad(err, m->path, "partition record");
        p->partition_id = json_integer_value(json_object_get(pj, "id"));
        p->name = fl_strdup(name);
        p->created_ms = json_integer_value(json_object_get(pj, "created"));
        p->value_count = json_array_size(values);
        p->values = fl_calloc(p->value_count ? p->value_count : 1, sizeof(char *));
        for (size_t v = 0; v < p->value_count; v++) {
            const char *s = json_string_value(json_array_get(values, v));
            if (!s) return fl_mse_bad(err, m->path, "partition value");
            p->values[v] = fl_strdup(s);
        }
        p->bucket_count = fl_mse_load_buckets(json_object_get(pj, "buckets"), &p->buckets);
        if (p->bucket_count < 0) return fl_mse_bad(err, m->path, "partition bucket");
    }
    return 0;
}

static int fl_mse_load_table(fl_ms_embedded_t *m, const json_t *tj, fl_ms_table_t *t,
                             fl_error_t *err) {
    const char *db = json_string_value(json_object_get(tj, "database"));
    const char *name = json_string_value(json_object_get(tj, "name"));
    const char *tjson = json_string_value(json_object_get(tj, "table_json"));
    const json_t *schemas = json_object_get(tj, "schemas");
    const json_t *buckets = json_object_get(tj, "buckets");
    if (!db || !name || !tjson || !json_is_array(schemas) || !json_is_array(buckets) ||
        !json_is_integer(json_object_get(tj, "id")))
        return fl_mse_bad(err, m->path, "table record");
    t->database = fl_strdup(db);
    t->name = fl_strdup(name);
    t->table_json = fl_strdup(tjson);
    t->table_id = json_integer_value(json_object_get(tj, "id"));
    t->schema_id = (int32_t)json_integer_value(json_object_get(tj, "schema_id"));
    t->created_ms = json_integer_value(json_object_get(tj, "created"));
    t->modified_ms = json_integer_value(json_object_get(tj, "modified"));
    t->schema_count = json_array_size(schemas);
    t->schema_jsons = fl_calloc(t->schema_count ? t->schema_count : 1, sizeof(char *));
    for (size_t s = 0; s < t->schema_count; s++) {
        const char *sj = json_string_value(json_array_get(schemas, s));
        if (!sj) return fl_mse_bad(err, m->path, "schema");
        t->schema_jsons[s] = fl_strdup(sj);
    }
    if (t->schema_id < 1 || (size_t)t->schema_id != t->schema_count)
        return fl_mse_bad(err, m->path, "schema id");
    const json_t *ai = json_object_get(tj, "autoinc_next");
    if (ai && (!json_is_integer(ai) || json_integer_value(ai) < 0))
        return fl_mse_bad(err, m->path, "autoinc_next");
    t->autoinc_next = ai ? json_integer_value(ai) : 0;
    t->bucket_count = fl_mse_load_buckets(buckets, &t->buckets);
    if (t->bucket_count < 0) {
        t->bucket_count = 0;
        return fl_mse_bad(err, m->path, "bucket");
    }
    return fl_mse_load_partitions(m, json_object_get(tj, "partitions"), t, err);
}

static bool fl_mse_acl_type_ok(int64_t type) {
    return type >= 2 && type <= 4; /* CLUSTER, DATABASE, TABLE */
}

static int fl_mse_acl_cmp(const void *a, const void *b) {
    const fl_ms_acl_node_t *x = a, *y = b;
    if (x->resource_type != y->resource_type) return x->resource_type < y->resource_type ? -1 : 1;
    return strcmp(x->resource_name, y->resource_name);
}

/* The "acls" array (absent in files from before ACLs). */
static int fl_mse_load_acls(fl_ms_embedded_t *m, const json_t *arr, fl_error_t *err) {
    if (!arr) return 0;
    if (!json_is_array(arr)) return fl_mse_bad(err, m->path, "acls is not an array");
    m->acl_cap = json_array_size(arr);
    fl_free(m->acls);
    m->acls = fl_calloc(m->acl_cap ? m->acl_cap : 1, sizeof(*m->acls));
    for (size_t i = 0; i < m->acl_cap; i++) {
        const json_t *aj = json_array_get(arr, i);
        const json_t *type = json_object_get(aj, "type");
        const char *name = json_string_value(json_object_get(aj, "name"));
        const char *doc = json_string_value(json_object_get(aj, "json"));
        char what[96];
        if (!json_is_integer(type) || !fl_mse_acl_type_ok(json_integer_value(type)) || !name ||
            !name[0] || !doc) {
            snprintf(what, sizeof(what), "acl entry %zu: needs type 2..4, a name and json", i);
            return fl_mse_bad(err, m->path, what);
        }
        m->acls[i].resource_type = (int32_t)json_integer_value(type);
        m->acls[i].resource_name = fl_strdup(name);
        m->acls[i].json = fl_strdup(doc);
        m->acl_count = i + 1;
    }
    /* we write them in order; a hand-edited file may not be */
    qsort(m->acls, m->acl_count, sizeof(*m->acls), fl_mse_acl_cmp);
    for (size_t i = 1; i < m->acl_count; i++) {
        if (fl_mse_acl_cmp(&m->acls[i - 1], &m->acls[i]) != 0) continue;
        char what[160];
        snprintf(what, sizeof(what), "two acl entries for resource %d/%.100s",
                 m->acls[i].resource_type, m->acls[i].resource_name);
        return fl_mse_bad(err, m->path, what);
    }
    return 0;
}

/* The "scram" array (absent in files from before it). jansson has
 * already refused strings that are not UTF-8 or hold a NUL. */
static int fl_mse_load_scram(fl_ms_embedded_t *m, const json_t *arr, fl_error_t *err) {
    if (!arr) return 0;
    if (!json_is_array(arr)) return fl_mse_bad(err, m->path, "scram is not an array");
    size_t n = json_array_size(arr);
    fl_ms_scram_node_t *nodes = fl_calloc(n ? n : 1, sizeof(*nodes));
    size_t count = 0;
    char what[256];
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const json_t *sj = json_array_get(arr, i);
        const json_t *user = json_object_get(sj, "user");
        const json_t *mech = json_object_get(sj, "mechanism");
        const json_t *cred = json_object_get(sj, "credential");
        if (!json_is_string(user) || json_string_length(user) == 0 ||
            json_string_length(user) > FL_MS_SCRAM_USER_MAX || !json_is_string(mech) ||
            !fl_ms_scram_mechanism_ok(json_string_value(mech)) || !json_is_string(cred) ||
            json_string_length(cred) > FL_MS_SCRAM_CREDENTIAL_MAX) {
            snprintf(what, sizeof(what),
                     "scram entry %zu: needs a user of 1..%d bytes, mechanism %s or %s and a "
                     "credential text of at most %u bytes",
                     i, FL_MS_SCRAM_USER_MAX, FL_MS_SCRAM_SHA_256, FL_MS_SCRAM_SHA_512,
                     FL_MS_SCRAM_CREDENTIAL_MAX);
            rc = fl_mse_bad(err, m->path, what);
            break;
        }
        nodes[count++] = (fl_ms_scram_node_t){.user = fl_strdup(json_string_value(user)),
                                              .mechanism = fl_strdup(json_string_value(mech)),
                                              .credential = fl_strdup(json_string_value(cred))};
    }
    size_t dup;
    /* we write them in order; a hand-edited file may not be */
    if (!rc && !fl_ms_scram_sort(nodes, count, &dup)) {
        snprintf(what, sizeof(what), "two scram entries for user %.100s, %s", nodes[dup].user,
                 nodes[dup].mechanism);
        rc = fl_mse_bad(err, m->path, what);
    }
    if (rc) {
        fl_ms_scram_free(nodes, count);
        return rc;
    }
    fl_ms_scram_free(m->scrams, m->scram_count);
    m->scrams = nodes;
    m->scram_count = count;
    m->scram_cap = n ? n : 1;
    return 0;
}

static int fl_mse_load(fl_ms_embedded_t *m, fl_error_t *err) {
    fl_buf_t buf;
    fl_buf_init(&buf);
    int missing = 0;
    int rc = fl_fs_read_all(m->path, FL_MS_FILE_MAX, &buf, &missing, err);
    if (rc) {
        fl_buf_free(&buf);
        if (missing) {
            fl_err_clear(err);
            return 0; /* a new store */
        }
        return rc;
    }
    json_error_t jerr;
    json_t *root = json_loadb((const char *)buf.data, buf.len, JSON_DISABLE_EOF_CHECK, &jerr);
    if (!root) {
        fl_buf_free(&buf);
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "%s: %s", m->path, jerr.text);
    }
    /* after the document: nothing (a file from before checksums), or the
     * checksum line over it; anything else is damage */
    size_t body = (size_t)jerr.position;
    int64_t version = json_integer_value(json_object_get(root, "version"));
    bool intact = version == 1 && body == buf.len;
    if (version == 2 && buf.len - body == FL_MS_TRAILER_LEN) {
        char want[FL_MS_TRAILER_LEN + 1];
        snprintf(want, sizeof(want), FL_MS_TRAILER_FMT, fl_crc32c(0, buf.data, body));
        intact = memcmp(buf.data + body, want, FL_MS_TRAILER_LEN) == 0;
    }
    fl_buf_free(&buf);
    if (!intact) {
        json_decref(root);
        return fl_err_set(err, FLUSS_ERR__CORRUPT,
                          "%s is damaged: its checksum does not match its content; the server "
                          "will not start on it (restore the file from a backup)",
                          m->path);
    }
    rc = 0;
    const json_t *counters = json_object_get(root, "counters");
    const json_t *dbs = json_object_get(root, "databases");
    const json_t *tables = json_object_get(root, "tables");
    if (version != 1 && version != 2) {
        rc = fl_mse_bad(err, m->path, "version");
        goto done;
    }
    if (!json_is_array(counters) ||
        json_array_size(counters) != FL_MS_COUNTER_COUNT || !json_is_array(dbs) ||
        !json_is_array(tables)) {
        rc = fl_mse_bad(err, m->path, "top level");
        goto done;
    }
    for (int i = 0; i < FL_MS_COUNTER_COUNT; i++)
        m->counters[i] = json_integer_value(json_array_get(counters, (size_t)i));
    m->db_cap = m->db_count = json_array_size(dbs);
    fl_free(m->dbs);
    m->dbs = fl_calloc(m->db_cap ? m->db_cap : 1, sizeof(*m->dbs));
    for (size_t i = 0; i < m->db_count; i++) {
        const json_t *dj = json_array_get(dbs, i);
        const char *name = json_string_value(json_object_get(dj, "name"));
        const char *dj_json = json_string_value(json_object_get(dj, "json"));
        if (!name || !dj_json) {
            m->db_count = i;
            rc = fl_mse_bad(err, m->path, "database record");
            goto done;
        }
        m->dbs[i].name = fl_strdup(name);
        m->dbs[i].json = fl_strdup(dj_json);
        m->dbs[i].created_ms = json_integer_value(json_object_get(dj, "created"));
        m->dbs[i].modified_ms = json_integer_value(json_object_get(dj, "modified"));
    }
    m->table_cap = json_array_size(tables);
    fl_free(m->tables);
    m->tables = fl_calloc(m->table_cap ? m->table_cap : 1, sizeof(*m->tables));
    for (size_t i = 0; i < m->table_cap; i++) {
        m->table_count = i + 1;
        if ((rc = fl_mse_load_table(m, json_array_get(tables, i), &m->tables[i], err))) goto done;
    }
    rc = fl_mse_load_acls(m, json_object_get(root, "acls"), err);
    if (!rc) rc = fl_mse_load_scram(m, json_object_get(root, "scram"), err);
done:
    json_decref(root);
    if (rc) fl_mse_clear_state(m);
    return rc;
}

static int fl_mse_persist(fl_ms_embedded_t *m, fl_error_t *err) {
    json_t *root = fl_mse_to_json(m);
    char *text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    size_t len = strlen(text);
    char *file = fl_malloc(len + FL_MS_TRAILER_LEN + 1);
    memcpy(file, text, len);
    snprintf(file + len, FL_MS_TRAILER_LEN + 1, FL_MS_TRAILER_FMT,
             fl_crc32c(0, (const uint8_t *)text, len));
    free(text);
    int rc = fl_fs_write_atomic(m->path, file, len + FL_MS_TRAILER_LEN, err);
    fl_free(file);
    if (rc) {
        char cause[FL_ERROR_MSG_MAX];
        snprintf(cause, sizeof(cause), "%s", err ? err->msg : "");
        FL_ERROR("metastore: write failed, store is now read-only: %s", cause);
        m->failed = true;
        fl_mse_clear_state(m);
        fl_error_t ignored;
        if (fl_mse_load(m, &ignored)) FL_ERROR("metastore: reload failed: %s", ignored.msg);
        return fl_err_set(err, FLUSS_ERR_STORAGE_EXCEPTION, "metadata store write failed: %s",
                          cause);
    }
    return 0;
}

static int fl_mse_check_writable(fl_ms_embedded_t *m, fl_error_t *err) {
    if (m->failed)
        return fl_err_set(err, FLUSS_ERR_STORAGE_EXCEPTION,
                          "metadata store is read-only after a failed write");
    return 0;
}

/* ---- operations ---- */

#define FL_MSE(ms) ((fl_ms_embedded_t *)(ms))

static void fl_mse_close(fl_metastore_t *ms) {
    fl_ms_embedded_t *m = FL_MSE(ms);
    fl_mse_clear_state(m);
    fl_free(m->dbs);
    fl_free(m->tables);
    fl_free(m->acls);
    fl_free(m->path);
    fl_free(m);
}

static size_t fl_mse_db_count(fl_metastore_t *ms) { return FL_MSE(ms)->db_count; }

static const fl_ms_database_t *fl_mse_db_at(fl_metastore_t *ms, size_t i) {
    return i < FL_MSE(ms)->db_count ? &FL_MSE(ms)->dbs[i] : NULL;
}

static const fl_ms_database_t *fl_mse_db_get(fl_metastore_t *ms, const char *name) {
    return fl_ms_find_db(FL_MSE(ms)->dbs, FL_MSE(ms)->db_count, name);
}

static int fl_mse_db_create(fl_metastore_t *ms, const fl_ms_database_t *db, fl_error_t *err) {
    fl_ms_embedded_t *m = FL_MSE(ms);
    int rc = fl_mse_check_writable(m, err);
    if (rc) return rc;
    if (fl_mse_db_get(ms, db->name))
        return fl_err_set(err, FLUSS_ERR_DATABASE_ALREADY_EXIST, "Database %s already exists.",
                          db->name);
    if (m->db_count == m->db_cap) {
        m->db_cap = m->db_cap ? m->db_cap * 2 : 8;
        m->dbs = fl_realloc(m->dbs, m->db_cap * sizeof(*m->dbs));
    }
    fl_ms_database_t *d = &m->dbs[m->db_count++];
    d->name = fl_strdup(db->name);
    d->json = fl_strdup(db->json);
    d->created_ms = db->created_ms;
    d->modified_ms = db->modified_ms;
    return fl_mse_persist(m, err);
}

static void fl_mse_remove_table_at(fl_ms_embedded_t *m, size_t i) {
    fl_ms_table_clear(&m->tables[i]);
    memmove(&m->tables[i], &m->tables[i + 1], (m->table_count - i - 1) * sizeof(*m->tables));
    m->table_count--;
}

static int fl_mse_db_drop(fl_metastore_t *ms, const char *name, fl_error_t *err) {
    fl_ms_embedded_t *m = FL_MSE(ms);
    int rc = fl_mse_check_writable(m, err);
    if (rc) return rc;
    size_t at = m->db_count;
    for (size_t i = 0; i < m->db_count; i++)
        if (strcmp(m->dbs[i].name, name) == 0) at = i;
    if (at == m->db_count)
        return fl_err_set(err, FLUSS_ERR_DATABASE_NOT_EXIST, "Database %s does not exist.", name);
    for (size_t i = m->table_count; i-- > 0;)
        if (strcmp(m->tables[i].database, name) == 0) fl_mse_remove_table_at(m, i);
    fl_ms_database_clear(&m->dbs[at]);
    memmove(&m->dbs[at], &m->dbs[at + 1], (m->db_count - at - 1) * sizeof(*m->dbs));
    m->db_count--;
    return fl_mse_persist(m, err);
}

static size_t fl_mse_table_count(fl_metastore_t *ms) { return FL_MSE(ms)->table_count; }

static const fl_ms_table_t *fl_mse_table_at(fl_metastore_t *ms, size_t i) {
    return i < FL_MSE(ms)->table_count ? &FL_MSE(ms)->tables[i] : NULL;
}

static const fl_ms_table_t *fl_mse_table_get(fl_metastore_t *ms, const char *db,
                                             const char *name) {
    return fl_ms_find_table(FL_MSE(ms)->tables, FL_MSE(ms)->table_count, db, name);
}

static const fl_ms_table_t *fl_mse_table_by_id(fl_metastore_t *ms, int64_t id) {
    return fl_ms_find_table_id(FL_MSE(ms)->tables, FL_MSE(ms)->table_count, id);
}

static int fl_mse_table_create(fl_metastore_t *ms, const fl_ms_table_t *t, fl_error_t *err) {
    fl_ms_embedded_t *m = FL_MSE(ms);
    int rc = fl_mse_check_writable(m, err);
    if (rc) return rc;
    if (!fl_mse_db_get(ms, t->database))
        return fl_err_set(err, FLUSS_ERR_DATABASE_NOT_EXIST, "Database %s does not exist.",
                          t->database);
    if (fl_mse_table_get(ms, t->database, t->name))
        return fl_err_set(err, FLUSS_ERR_TABLE_ALREADY_EXIST, "Table %s.%s already exists.",
                          t->database, t->name);
    if (m->table_count == m->table_cap) {
        m->table_cap = m->table_cap ? m->table_cap * 2 : 8;
        m->tables = fl_realloc(m->tables, m->table_cap * sizeof(*m->tables));
    }
    fl_ms_table_copy(&m->tables[m->table_count++], t);
    return fl_mse_persist(m, err);
}

static int fl_mse_table_drop(fl_metastore_t *ms, const char *db, const char *name,
                             fl_error_t *err) {
    fl_ms_embedded_t *m = FL_MSE(ms);
    int rc = fl_mse_check_writable(m, err);
    if (rc) return rc;
    for (size_t i = 0; i < m->table_count; i++) {
        if (strcmp(m->tables[i].database, db) == 0 && strcmp(m->tables[i].name, name) == 0) {
            fl_mse_remove_table_at(m, i);
            return fl_mse_persist(m, err);
        }
    }
    return fl_err_set(err, FLUSS_ERR_TABLE_NOT_EXIST, "Table %s.%s does not exist.", db, name);
}

static fl_ms_table_t *fl_mse_table_mut(fl_ms_embedded_t *m, int64_t id) {
    return fl_ms_find_table_id(m->tables, m->table_count, id);
}

static int fl_mse_partition_create(fl_metastore_t *ms, int64_t table_id,
                                   const fl_ms_partition_t *p, fl_error_t *err) {
    fl_ms_embedded_t *m = FL_MSE(ms);
    int rc = fl_mse_check_writable(m, err);
    if (rc) return rc;
    fl_ms_table_t *t = fl_mse_table_mut(m, table_id);
    if (!t) return fl_err_set(err, FLUSS_ERR_TABLE_NOT_EXIST, "Table %lld does not exist.",
                              (long long)table_id);
    if (fl_ms_table_partition(t, 0, p->name))
        return fl_err_set(err, FLUSS_ERR_PARTITION_ALREADY_EXISTS,
                          "Partition '%s' already exists.", p->name);
    t->partitions = fl_realloc(t->partitions, (t->partition_count + 1) * sizeof(*t->partitions));
    fl_ms_partition_copy(&t->partitions[t->partition_count++], p);
    return fl_mse_persist(m, err);
}

static int fl_mse_partition_drop(fl_metastore_t *ms, int64_t table_id, int64_t partition_id,
                                 fl_error_t *err) {
    fl_ms_embedded_t *m = FL_MSE(ms);
    int rc = fl_mse_check_writable(m, err);
    if (rc) return rc;
    fl_ms_table_t *t = fl_mse_table_mut(m, table_id);
    for (size_t i = 0; t && i < t->partition_count; i++) {
        if (t->partitions[i].partition_id != partition_id) continue;
        fl_ms_partition_clear(&t->partitions[i]);
        memmove(&t->partitions[i], &t->partitions[i + 1],
                (t->partition_count - i - 1) * sizeof(*t->partitions));
        t->partition_count--;
        return fl_mse_persist(m, err);
    }
    return fl_err_set(err, FLUSS_ERR_PARTITION_NOT_EXISTS, "Partition %lld does not exist.",
                      (long long)partition_id);
}

static int fl_mse_table_alter(fl_metastore_t *ms, int64_t table_id, const char *table_json,
                              const char *new_schema_json, int64_t modified_ms,
                              fl_error_t *err) {
    fl_ms_embedded_t *m = FL_MSE(ms);
    int rc = fl_mse_check_writable(m, err);
    if (rc) return rc;
    fl_ms_table_t *t = fl_mse_table_mut(m, table_id);
    if (!t)
        return fl_err_set(err, FLUSS_ERR_TABLE_NOT_EXIST, "Table %lld does not exist.",
                          (long long)table_id);
    if (new_schema_json && t->schema_id >= INT16_MAX)
        return fl_err_set(err, FLUSS_ERR_INVALID_ALTER_TABLE_EXCEPTION,
                          "Table %s.%s has %d schemas, the most a batch header can name.",
                          t->database, t->name, t->schema_id);
    fl_free(t->table_json);
    t->table_json = fl_strdup(table_json);
    t->modified_ms = modified_ms;
    if (new_schema_json) {
        t->schema_jsons = fl_realloc(t->schema_jsons, (t->schema_count + 1) * sizeof(char *));
        t->schema_jsons[t->schema_count++] = fl_strdup(new_schema_json);
        t->schema_id++;
    }
    /* a failed write reloads the last durable state (and latches) */
    return fl_mse_persist(m, err);
}

static int fl_mse_reserve_ids(fl_metastore_t *ms, enum fl_ms_counter c, int64_t count,
                              int64_t *first, fl_error_t *err) {
    fl_ms_embedded_t *m = FL_MSE(ms);
    int rc = fl_mse_check_writable(m, err);
    if (rc) return rc;
    if (count < 1) count = 1;
    int64_t v = m->counters[c];
    m->counters[c] = v + count;
    rc = fl_mse_persist(m, err);
    if (rc) {
        m->counters[c] = v;
        return rc;
    }
    *first = v;
    return 0;
}

static int fl_mse_reserve_table_ids(fl_metastore_t *ms, int64_t table_id, int64_t count,
                                    int64_t *first, fl_error_t *err) {
    fl_ms_embedded_t *m = FL_MSE(ms);
    int rc = fl_mse_check_writable(m, err);
    if (rc) return rc;
    fl_ms_table_t *t = fl_mse_table_mut(m, table_id);
    if (!t)
        return fl_err_set(err, FLUSS_ERR_TABLE_NOT_EXIST, "Table %lld does not exist.",
                          (long long)table_id);
    if (count < 1) count = 1;
    int64_t v = t->autoinc_next;
    if (count > INT64_MAX - v)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          "The auto-increment counter of table %lld is exhausted.",
                          (long long)table_id);
    t->autoinc_next = v + count;
    rc = fl_mse_persist(m, err);
    if (rc) {
        t->autoinc_next = v;
        return rc;
    }
    *first = v;
    return 0;
}

static int fl_mse_next_id(fl_metastore_t *ms, enum fl_ms_counter c, int64_t *out,
                          fl_error_t *err) {
    return fl_mse_reserve_ids(ms, c, 1, out, err);
}

static int fl_mse_bucket_leader_set(fl_metastore_t *ms, int64_t table_id, int64_t partition_id,
                                    int32_t bucket, const fl_ms_bucket_t *b, fl_error_t *err) {
    fl_ms_embedded_t *m = FL_MSE(ms);
    int rc = fl_mse_check_writable(m, err);
    if (rc) return rc;
    fl_ms_bucket_t *cb = fl_ms_bucket_mut(fl_mse_table_mut(m, table_id), partition_id, bucket);
    if (!cb)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                          "Bucket %d of table %lld (partition %lld) does not exist.", bucket,
                          (long long)table_id, (long long)partition_id);
    fl_ms_bucket_set_leader(cb, b);
    return fl_mse_persist(m, err);
}

static size_t fl_mse_acl_count(fl_metastore_t *ms) { return FL_MSE(ms)->acl_count; }

static const fl_ms_acl_node_t *fl_mse_acl_at(fl_metastore_t *ms, size_t i) {
    return i < FL_MSE(ms)->acl_count ? &FL_MSE(ms)->acls[i] : NULL;
}

/* Text the file can hold: jansson refuses strings that are not UTF-8, and
 * a record it refused would silently be missing from the file. */
static bool fl_mse_utf8(const char *s) {
    json_t *j = json_string(s);
    json_decref(j);
    return j != NULL;
}

static int fl_mse_acl_put(fl_metastore_t *ms, int32_t type, const char *name, const char *json,
                          fl_error_t *err) {
    fl_ms_embedded_t *m = FL_MSE(ms);
    int rc = fl_mse_check_writable(m, err);
    if (rc) return rc;
    if (!fl_mse_acl_type_ok(type))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "ACL resource type %d is not 2..4",
                          (int)type);
    if (!name || !name[0] || !fl_mse_utf8(name) || (json && !fl_mse_utf8(json)))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "ACL resource name or document is empty or not UTF-8");
    size_t at = 0;
    while (at < m->acl_count && fl_ms_acl_cmp(type, name, &m->acls[at]) > 0) at++;
    bool found = at < m->acl_count && fl_ms_acl_cmp(type, name, &m->acls[at]) == 0;
    if (!json && !found) return 0; /* nothing to delete: no write */
    fl_ms_acl_set(&m->acls, &m->acl_count, &m->acl_cap, type, name, json);
    /* a failed write reloads the last durable state (and latches) */
    return fl_mse_persist(m, err);
}

static size_t fl_mse_scram_count(fl_metastore_t *ms) { return FL_MSE(ms)->scram_count; }

static const fl_ms_scram_node_t *fl_mse_scram_at(fl_metastore_t *ms, size_t i) {
    return i < FL_MSE(ms)->scram_count ? &FL_MSE(ms)->scrams[i] : NULL;
}

static int fl_mse_scram_put(fl_metastore_t *ms, const char *user, const char *mechanism,
                            const char *credential, fl_error_t *err) {
    fl_ms_embedded_t *m = FL_MSE(ms);
    int rc = fl_mse_check_writable(m, err);
    if (rc) return rc;
    if (!fl_ms_scram_mechanism_ok(mechanism))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "SCRAM mechanism \"%.64s\" is neither %s nor %s",
                          mechanism ? mechanism : "", FL_MS_SCRAM_SHA_256, FL_MS_SCRAM_SHA_512);
    if (!user || !user[0] || strlen(user) > FL_MS_SCRAM_USER_MAX || !fl_mse_utf8(user))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "SCRAM user name is empty, longer than %d bytes or not UTF-8",
                          FL_MS_SCRAM_USER_MAX);
    if (credential &&
        (strlen(credential) > FL_MS_SCRAM_CREDENTIAL_MAX || !fl_mse_utf8(credential)))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "SCRAM credential of %s for %s is longer than %u bytes or not UTF-8",
                          mechanism, user, FL_MS_SCRAM_CREDENTIAL_MAX);
    size_t at = 0;
    while (at < m->scram_count && fl_ms_scram_cmp(user, mechanism, &m->scrams[at]) > 0) at++;
    bool found = at < m->scram_count && fl_ms_scram_cmp(user, mechanism, &m->scrams[at]) == 0;
    if (!credential && !found) return 0; /* nothing to delete: no write */
    fl_ms_scram_set(&m->scrams, &m->scram_count, &m->scram_cap, user, mechanism, credential);
    /* a failed write reloads the last durable state (and latches) */
    return fl_mse_persist(m, err);
}

static const struct fl_metastore_ops fl_mse_ops = {
    .close = fl_mse_close,
    .db_count = fl_mse_db_count,
    .db_at = fl_mse_db_at,
    .db_get = fl_mse_db_get,
    .db_create = fl_mse_db_create,
    .db_drop = fl_mse_db_drop,
    .table_count = fl_mse_table_count,
    .table_at = fl_mse_table_at,
    .table_get = fl_mse_table_get,
    .table_by_id = fl_mse_table_by_id,
    .table_create = fl_mse_table_create,
    .table_drop = fl_mse_table_drop,
    .partition_create = fl_mse_partition_create,
    .partition_drop = fl_mse_partition_drop,
    .table_alter = fl_mse_table_alter,
    .next_id = fl_mse_next_id,
    .reserve_ids = fl_mse_reserve_ids,
    .reserve_table_ids = fl_mse_reserve_table_ids,
    .bucket_leader_set = fl_mse_bucket_leader_set,
    .acl_count = fl_mse_acl_count,
    .acl_at = fl_mse_acl_at,
    .acl_put = fl_mse_acl_put,
    .scram_count = fl_mse_scram_count,
    .scram_at = fl_mse_scram_at,
    .scram_put = fl_mse_scram_put,
};

int fl_metastore_embedded_open(const char *dir, fl_metastore_t **out, fl_error_t *err) {
    int rc = fl_fs_mkdirs(dir, err);
    if (rc) return rc;
    fl_ms_embedded_t *m = fl_calloc(1, sizeof(*m));
    m->base.ops = &fl_mse_ops;
    size_t n = strlen(dir) + sizeof(FL_MS_FILE) + 2;
    m->path = fl_malloc(n);
    snprintf(m->path, n, "%s/%s", dir, FL_MS_FILE);
    if ((rc = fl_mse_load(m, err))) {
        fl_mse_close(&m->base);
        return rc;
    }
    *out = &m->base;
    return 0;
}
