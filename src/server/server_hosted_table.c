/*
 * server_hosted_table.c — a tablet server's view of one table, built from
 * the coordinator's UPDATE_METADATA entry (server_hosted_table.h).
 */
#include "server_hosted_table.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common_alloc.h"
#include "common_duration.h"

static void fl_hosted_table_free(fl_hosted_table_t *t) {
    for (size_t i = 0; i < t->schema_count; i++) {
        if (t->schema_ok[i]) fl_schema_free(&t->schemas[i]);
        fl_free(t->schema_types[i]);
        if (t->latest_maps) fl_schema_map_free(&t->latest_maps[i]);
    }
    fl_free(t->latest_maps);
    fl_free(t->schemas);
    fl_free(t->schema_ok);
    fl_free(t->schema_types);
    fl_free(t->buckets);
    for (size_t i = 0; i < t->partition_count; i++) {
        fl_free(t->partitions[i].name);
        fl_free(t->partitions[i].buckets);
    }
    fl_free(t->partitions);
    fl_free(t->database);
    fl_free(t->name);
    fl_free(t->log_format);
    fl_free(t->stats_columns);
    fl_hosted_kv_table_free(t->kv);
    fl_free(t);
}

void fl_hosted_table_unref(fl_hosted_table_t *t) {
    if (t && atomic_fetch_sub(&t->refs, 1) == 1) fl_hosted_table_free(t);
}

/* table.log.ttl in Fluss's duration syntax; the default when unset or
 * unreadable (CREATE_TABLE validated it). */
static int64_t fl_parse_ttl_ms(const char *v, int64_t dflt) {
    int64_t ms;
    fl_error_t e;
    if (!v || fl_duration_parse_ms(v, &ms, &e) != 0) return dflt;
    return ms;
}

/* The buckets of an entry, dense by id: 0 or an error when the ids are not
 * 0..n-1 each once. */
static int fl_buckets_from_pb(Fluss__PbBucketMetadata *const *bm, size_t n, fl_ms_bucket_t **out,
                              fl_error_t *err) {
    if (n > FL_HOSTED_BUCKETS_MAX)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE, "%zu buckets: more than %d", n,
                          FL_HOSTED_BUCKETS_MAX);
    fl_ms_bucket_t *b = fl_calloc(n ? n : 1, sizeof(*b));
    bool *seen = fl_calloc(n ? n : 1, sizeof(bool));
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const Fluss__PbBucketMetadata *m = bm[i];
        if (m->bucket_id < 0 || (size_t)m->bucket_id >= n || seen[m->bucket_id]) {
            rc = fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE,
                            "bucket id %d of %zu buckets is out of range or repeated",
                            m->bucket_id, n);
            break;
        }
        seen[m->bucket_id] = true;
        fl_ms_bucket_t *d = &b[m->bucket_id];
        d->leader = m->has_leader_id ? m->leader_id : -1;
        d->leader_epoch = m->has_leader_epoch ? m->leader_epoch : 0;
        size_t nr = m->n_replica_id < FL_REPLICAS_MAX ? m->n_replica_id : FL_REPLICAS_MAX;
        d->replica_count = (int32_t)nr;
        for (size_t r = 0; r < nr; r++) d->replicas[r] = m->replica_id[r];
    }
    fl_free(seen);
    if (rc) {
        fl_free(b);
        return rc;
    }
    *out = b;
    return 0;
}

/* Parses every schema: those the coordinator sent by id, the latest from
 * the descriptor when it sent none for it. */
static void fl_hosted_schemas(fl_hosted_table_t *t, const Fluss__PbTableMetadata *tm,
                              const json_t *j) {
    size_t n = t->schema_count ? t->schema_count : 1;
    t->schemas = fl_calloc(n, sizeof(*t->schemas));
    t->schema_ok = fl_calloc(n, sizeof(bool));
    t->schema_types = fl_calloc(n, sizeof(*t->schema_types));
    for (size_t k = 0; k < tm->n_flussc_schemas; k++) {
        const Fluss__PbFlusscSchema *ps = tm->flussc_schemas[k];
        if (ps->schema_id < 1 || (size_t)ps->schema_id > t->schema_count) continue;
        size_t i = (size_t)ps->schema_id - 1;
        if (t->schema_ok[i]) continue;
        json_t *sj = json_loadb((const char *)ps->schema_json.data, ps->schema_json.len, 0, NULL);
        fl_error_t e;
        if (sj && fl_schema_from_json(sj, &t->schemas[i], &e) == 0) t->schema_ok[i] = true;
        if (sj) json_decref(sj);
    }
    size_t last = t->schema_count - 1;
    if (t->schema_count && !t->schema_ok[last]) {
        fl_error_t e;
        json_t *sj = json_object_get(j, "schema");
        if (sj && fl_schema_from_json(sj, &t->schemas[last], &e) == 0) t->schema_ok[last] = true;
    }
    for (size_t i = 0; i < t->schema_count; i++) {
        if (!t->schema_ok[i]) continue;
        fl_schema_t *s = &t->schemas[i];
        t->schema_types[i] = fl_calloc(s->column_count ? s->column_count : 1,
                                       sizeof(fl_datatype_t *));
        for (size_t c = 0; c < s->column_count; c++) t->schema_types[i][c] = s->columns[c].type;
        if (i == last) t->has_primary_key |= s->has_primary_key;
    }
    /* every schema's columns in the latest one; a schema that does not
     * parse (or an unparsed latest) gets no map */
    t->latest_maps = fl_calloc(n, sizeof(*t->latest_maps));
    bool latest_ok = t->schema_count > 0 && t->schema_ok[last];
    for (size_t i = 0; latest_ok && i < t->schema_count; i++)
        if (t->schema_ok[i])
            fl_schema_map_init(&t->latest_maps[i], &t->schemas[i], &t->schemas[last]);
}

fl_hosted_table_t *fl_hosted_table_from_pb(const Fluss__PbTableMetadata *tm,
                                           Fluss__PbPartitionMetadata *const *parts,
                                           size_t nparts, fl_error_t *err) {
    if (!tm->table_path || !tm->table_path->database_name || !tm->table_path->table_name) {
        fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE, "table %lld has no path",
                   (long long)tm->table_id);
        return NULL;
    }
    if (tm->schema_id < 0 || tm->schema_id > INT16_MAX) {
        fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE, "table %lld: schema id %d out of range",
                   (long long)tm->table_id, tm->schema_id);
        return NULL;
    }
    json_t *j = json_loadb((const char *)tm->table_json.data, tm->table_json.len, 0, NULL);
    if (!json_is_object(j)) {
        if (j) json_decref(j);
        fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE, "table %lld: the descriptor is not a JSON object",
                   (long long)tm->table_id);
        return NULL;
    }
    fl_hosted_table_t *t = fl_calloc(1, sizeof(*t));
    atomic_init(&t->refs, 1);
    t->table_id = tm->table_id;
    t->database = fl_strdup(tm->table_path->database_name);
    t->name = fl_strdup(tm->table_path->table_name);
    t->schema_id = tm->schema_id;
    json_t *props = json_object_get(j, "properties");
    t->ttl_ms = fl_parse_ttl_ms(json_string_value(json_object_get(props, "table.log.ttl")),
                                7LL * 24 * 3600 * 1000);
    /* validated at CREATE TABLE (> 0) */
    const char *ls = json_string_value(json_object_get(props, "table.log.tiered.local-segments"));
    t->tiered_local_segments = ls ? (int32_t)strtol(ls, NULL, 10) : 2;
    if (t->tiered_local_segments < 1) t->tiered_local_segments = 2;
    const char *lake = json_string_value(json_object_get(props, "table.datalake.enabled"));
    t->lake_enabled = lake && strcasecmp(lake, "true") == 0;
    const char *fmt = json_string_value(json_object_get(props, "table.log.format"));
    t->log_format = fl_strdup(fmt ? fmt : "ARROW");
    const char *sc = json_string_value(json_object_get(props, "table.statistics.columns"));
    t->stats_columns = sc ? fl_strdup(sc) : NULL;
    json_t *pk = json_object_get(json_object_get(j, "schema"), "primary_key");
    t->has_primary_key = json_array_size(pk) > 0;
    t->schema_count = (size_t)tm->schema_id;
    fl_hosted_schemas(t, tm, j);
    if (fl_buckets_from_pb(tm->bucket_metadata, tm->n_bucket_metadata, &t->buckets, err))
        goto fail;
    t->bucket_count = (int32_t)tm->n_bucket_metadata;
    t->partitioned = json_array_size(json_object_get(j, "partition_key")) > 0 ||
                     t->bucket_count == 0;
    size_t np = 0;
    for (size_t i = 0; i < nparts; i++) np += parts[i]->table_id == tm->table_id;
    t->partitions = fl_calloc(np ? np : 1, sizeof(*t->partitions));
    for (size_t i = 0; i < nparts; i++) {
        const Fluss__PbPartitionMetadata *p = parts[i];
        if (p->table_id != tm->table_id) continue;
        if (!p->partition_name) {
            fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE, "partition %lld of table %lld has no name",
                       (long long)p->partition_id, (long long)tm->table_id);
            goto fail;
        }
        fl_hosted_partition_t *hp = &t->partitions[t->partition_count];
        if (fl_buckets_from_pb(p->bucket_metadata, p->n_bucket_metadata, &hp->buckets, err))
            goto fail;
        hp->partition_id = p->partition_id;
        hp->name = fl_strdup(p->partition_name);
        hp->bucket_count = (int32_t)p->n_bucket_metadata;
        t->partition_count++;
    }
    if (t->has_primary_key) t->kv = fl_hosted_kv_table_new(t, j);
    json_decref(j);
    return t;
fail:
    json_decref(j);
    fl_hosted_table_free(t);
    return NULL;
}

const fl_datatype_t *const *fl_hosted_table_schema_types(const fl_hosted_table_t *t,
                                                         int16_t schema_id, size_t *count) {
    if (schema_id < 1 || (size_t)schema_id > t->schema_count || !t->schema_ok[schema_id - 1])
        return NULL;
    *count = t->schemas[schema_id - 1].column_count;
    return t->schema_types[schema_id - 1];
}

const fl_schema_map_t *fl_hosted_table_latest_map(const fl_hosted_table_t *t, int16_t schema_id) {
    if (schema_id < 1 || (size_t)schema_id > t->schema_count ||
        !t->latest_maps[schema_id - 1].source)
        return NULL;
    return &t->latest_maps[schema_id - 1];
}

const fl_hosted_partition_t *fl_hosted_table_partition(const fl_hosted_table_t *t,
                                                       int64_t partition_id) {
    for (size_t i = 0; i < t->partition_count; i++)
        if (t->partitions[i].partition_id == partition_id) return &t->partitions[i];
    return NULL;
}
