/*
 * metastore_record.c — ownership helpers for metastore records, shared by
 * every backend, and the ordered ACL and SCRAM credential arrays both
 * backends' caches keep.
 */
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "metastore.h"

void fl_ms_database_clear(fl_ms_database_t *db) {
    fl_free(db->name);
    fl_free(db->json);
    memset(db, 0, sizeof(*db));
}

void fl_ms_partition_clear(fl_ms_partition_t *p) {
    fl_free(p->name);
    for (size_t i = 0; i < p->value_count; i++) fl_free(p->values[i]);
    fl_free(p->values);
    fl_free(p->buckets);
    memset(p, 0, sizeof(*p));
}

void fl_ms_partition_copy(fl_ms_partition_t *dst, const fl_ms_partition_t *src) {
    *dst = *src;
    dst->name = fl_strdup(src->name);
    dst->values = fl_calloc(src->value_count ? src->value_count : 1, sizeof(char *));
    for (size_t i = 0; i < src->value_count; i++) dst->values[i] = fl_strdup(src->values[i]);
    dst->buckets = fl_calloc(src->bucket_count > 0 ? (size_t)src->bucket_count : 1,
                             sizeof(fl_ms_bucket_t));
    if (src->bucket_count > 0)
        memcpy(dst->buckets, src->buckets, (size_t)src->bucket_count * sizeof(fl_ms_bucket_t));
}

const fl_ms_partition_t *fl_ms_table_partition(const fl_ms_table_t *t, int64_t id,
                                               const char *name) {
    for (size_t i = 0; i < t->partition_count; i++) {
        const fl_ms_partition_t *p = &t->partitions[i];
        if (name ? strcmp(p->name, name) == 0 : p->partition_id == id) return p;
    }
    return NULL;
}

void fl_ms_table_clear(fl_ms_table_t *t) {
    for (size_t i = 0; i < t->partition_count; i++) fl_ms_partition_clear(&t->partitions[i]);
    fl_free(t->partitions);
    fl_free(t->database);
    fl_free(t->name);
    fl_free(t->table_json);
    for (size_t i = 0; i < t->schema_count; i++) fl_free(t->schema_jsons[i]);
    fl_free(t->schema_jsons);
    fl_free(t->buckets);
    memset(t, 0, sizeof(*t));
}

void fl_ms_table_copy(fl_ms_table_t *dst, const fl_ms_table_t *src) {
    *dst = *src;
    dst->database = fl_strdup(src->database);
    dst->name = fl_strdup(src->name);
    dst->table_json = fl_strdup(src->table_json);
    dst->schema_jsons = fl_calloc(src->schema_count ? src->schema_count : 1, sizeof(char *));
    for (size_t i = 0; i < src->schema_count; i++)
        dst->schema_jsons[i] = fl_strdup(src->schema_jsons[i]);
    dst->buckets = fl_calloc(src->bucket_count > 0 ? (size_t)src->bucket_count : 1,
                             sizeof(fl_ms_bucket_t));
    if (src->bucket_count > 0)
        memcpy(dst->buckets, src->buckets, (size_t)src->bucket_count * sizeof(fl_ms_bucket_t));
    dst->partitions = fl_calloc(src->partition_count ? src->partition_count : 1,
                                sizeof(fl_ms_partition_t));
    for (size_t i = 0; i < src->partition_count; i++)
        fl_ms_partition_copy(&dst->partitions[i], &src->partitions[i]);
}

fl_ms_database_t *fl_ms_find_db(fl_ms_database_t *dbs, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(dbs[i].name, name) == 0) return &dbs[i];
    return NULL;
}

fl_ms_table_t *fl_ms_find_table(fl_ms_table_t *tables, size_t n, const char *db,
                                const char *name) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(tables[i].database, db) == 0 && strcmp(tables[i].name, name) == 0)
            return &tables[i];
    return NULL;
}

fl_ms_table_t *fl_ms_find_table_id(fl_ms_table_t *tables, size_t n, int64_t table_id) {
    for (size_t i = 0; i < n; i++)
        if (tables[i].table_id == table_id) return &tables[i];
    return NULL;
}

fl_ms_bucket_t *fl_ms_bucket_mut(fl_ms_table_t *t, int64_t partition_id, int32_t bucket) {
    if (!t || bucket < 0) return NULL;
    if (partition_id < 0) return bucket < t->bucket_count ? &t->buckets[bucket] : NULL;
    for (size_t i = 0; i < t->partition_count; i++) {
        fl_ms_partition_t *p = &t->partitions[i];
        if (p->partition_id == partition_id)
            return bucket < p->bucket_count ? &p->buckets[bucket] : NULL;
    }
    return NULL;
}

void fl_ms_bucket_set_leader(fl_ms_bucket_t *dst, const fl_ms_bucket_t *b) {
    dst->leader = b->leader;
    dst->leader_epoch = b->leader_epoch;
    int32_t n;
    const int32_t *isr = fl_ms_bucket_isr(b, &n);
    if (n > FL_REPLICAS_MAX) n = FL_REPLICAS_MAX;
    memmove(dst->isr, isr, (size_t)n * sizeof(int32_t));
    dst->isr_count = n;
    dst->bucket_epoch++;
}

/* ---- SCRAM credentials ---- */

int fl_ms_acl_cmp(int32_t type, const char *name, const fl_ms_acl_node_t *n) {
    if (type != n->resource_type) return type < n->resource_type ? -1 : 1;
    return strcmp(name, n->resource_name);
}

void fl_ms_acl_free(fl_ms_acl_node_t *nodes, size_t count) {
    for (size_t i = 0; i < count; i++) {
        fl_free(nodes[i].resource_name);
        fl_free(nodes[i].json);
    }
    fl_free(nodes);
}

void fl_ms_acl_set(fl_ms_acl_node_t **nodes, size_t *count, size_t *cap, int32_t type,
                   const char *name, const char *json) {
    fl_ms_acl_node_t *a = *nodes;
    size_t at = 0;
    while (at < *count && fl_ms_acl_cmp(type, name, &a[at]) > 0) at++;
    bool found = at < *count && fl_ms_acl_cmp(type, name, &a[at]) == 0;
    if (!json) {
        if (!found) return;
        fl_free(a[at].resource_name);
        fl_free(a[at].json);
        memmove(&a[at], &a[at + 1], (*count - at - 1) * sizeof(*a));
        (*count)--;
    } else if (found) {
        fl_free(a[at].json);
        a[at].json = fl_strdup(json);
    } else {
        if (*count == *cap) {
            *cap = *cap ? *cap * 2 : 8;
            *nodes = a = fl_realloc(a, *cap * sizeof(*a));
        }
        memmove(&a[at + 1], &a[at], (*count - at) * sizeof(*a));
        a[at] = (fl_ms_acl_node_t){
            .resource_type = type, .resource_name = fl_strdup(name), .json = fl_strdup(json)};
        (*count)++;
    }
}

bool fl_ms_scram_mechanism_ok(const char *mechanism) {
    return mechanism && (strcmp(mechanism, FL_MS_SCRAM_SHA_256) == 0 ||
                         strcmp(mechanism, FL_MS_SCRAM_SHA_512) == 0);
}

int fl_ms_scram_cmp(const char *user, const char *mechanism, const fl_ms_scram_node_t *n) {
    int c = strcmp(user, n->user);
    return c ? c : strcmp(mechanism, n->mechanism);
}

void fl_ms_scram_free(fl_ms_scram_node_t *nodes, size_t count) {
    for (size_t i = 0; i < count; i++) {
        fl_free(nodes[i].user);
        fl_free(nodes[i].mechanism);
        fl_free(nodes[i].credential);
    }
    fl_free(nodes);
}

void fl_ms_scram_set(fl_ms_scram_node_t **nodes, size_t *count, size_t *cap, const char *user,
                     const char *mechanism, const char *credential) {
    fl_ms_scram_node_t *a = *nodes;
    size_t at = 0;
    while (at < *count && fl_ms_scram_cmp(user, mechanism, &a[at]) > 0) at++;
    bool found = at < *count && fl_ms_scram_cmp(user, mechanism, &a[at]) == 0;
    if (!credential) {
        if (!found) return;
        fl_free(a[at].user);
        fl_free(a[at].mechanism);
        fl_free(a[at].credential);
        memmove(&a[at], &a[at + 1], (*count - at - 1) * sizeof(*a));
        (*count)--;
        return;
    }
    if (found) {
        fl_free(a[at].credential);
        a[at].credential = fl_strdup(credential);
        return;
    }
    if (*count == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        *nodes = a = fl_realloc(a, *cap * sizeof(*a));
    }
    memmove(&a[at + 1], &a[at], (*count - at) * sizeof(*a));
    a[at] = (fl_ms_scram_node_t){.user = fl_strdup(user),
                                 .mechanism = fl_strdup(mechanism),
                                 .credential = fl_strdup(credential)};
    (*count)++;
}

static int fl_ms_scram_qcmp(const void *x, const void *y) {
    const fl_ms_scram_node_t *a = x;
    return fl_ms_scram_cmp(a->user, a->mechanism, y);
}

bool fl_ms_scram_sort(fl_ms_scram_node_t *nodes, size_t count, size_t *dup) {
    if (count > 1) qsort(nodes, count, sizeof(*nodes), fl_ms_scram_qcmp);
    for (size_t i = 1; i < count; i++) {
        if (fl_ms_scram_qcmp(&nodes[i - 1], &nodes[i]) != 0) continue;
        *dup = i - 1;
        return false;
    }
    return true;
}
