/*
 * client_partition.c — partitions in libfluss (client_partition.h): the
 * partition cache of a writer, scanner or lookuper (Fluss's
 * MetadataUpdater for partitions: GET_METADATA by partition name or id,
 * the Java writer's dynamic partition creation through CREATE_PARTITION),
 * and the partition admin calls of fluss.h (create, drop, list). Thread
 * rule: a cache has one user; the admin calls use the client's
 * coordinator connection like every admin call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client_partition.h"
#include "client_table.h"
#include "common_alloc.h"
#include "common_time.h"
#include "fluss_api.pb-c.h"
#include "proto_api.h"

/* After CREATE_PARTITION the partition's buckets get leaders a moment
 * later (the reference assigns them asynchronously): GET_METADATA is
 * asked again this often until the table's timeout. */
#define FL_PARTS_WAIT_STEP_MS 50

void fl_parts_init(fl_parts_t *p, const fluss_table_t *t) {
    memset(p, 0, sizeof(*p));
    p->t = t;
    p->conn.fd = -1;
    if (t->part_count > 0) return;
    p->cap = 1;
    p->items = fl_calloc(1, sizeof(fl_part_t));
    p->items[0].id = -1;
    p->items[0].leader = fl_malloc((size_t)t->bucket_count * sizeof(int32_t));
    memcpy(p->items[0].leader, t->leader_node, (size_t)t->bucket_count * sizeof(int32_t));
    p->count = 1;
}

void fl_parts_free(fl_parts_t *p) {
    for (size_t i = 0; i < p->count; i++) {
        fl_free(p->items[i].name);
        fl_free(p->items[i].leader);
    }
    fl_free(p->items);
    fl_client_conn_close(&p->conn);
    memset(p, 0, sizeof(*p));
    p->conn.fd = -1;
}

static void fl_parts_sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* GET_METADATA for one partition of the table, by name (name != NULL) or
 * id; *md is the answer. A connection broken on an earlier call is opened
 * again. */
static int fl_parts_ask(fl_parts_t *p, const char *name, int64_t id,
                        Fluss__MetadataResponse **md, fl_error_t *err) {
    const fluss_table_t *t = p->t;
    Fluss__PbTablePath path = FLUSS__PB_TABLE_PATH__INIT;
    path.database_name = t->database;
    path.table_name = t->name;
    Fluss__PbTablePath *paths[1] = {&path};
    Fluss__PbPhysicalTablePath pp = FLUSS__PB_PHYSICAL_TABLE_PATH__INIT;
    pp.database_name = t->database;
    pp.table_name = t->name;
    pp.partition_name = (char *)name;
    Fluss__PbPhysicalTablePath *pps[1] = {&pp};
    Fluss__MetadataRequest req = FLUSS__METADATA_REQUEST__INIT;
    req.n_table_path = 1;
    req.table_path = paths;
    if (name) {
        req.n_partitions_path = 1;
        req.partitions_path = pps;
    } else {
        req.n_partitions_id = 1;
        req.partitions_id = &id;
    }
    for (int attempt = 0;; attempt++) {
        int rc = 0;
        if (p->conn.fd < 0) rc = fl_table_connect_coordinator(t, &p->conn, err);
        if (!rc)
            rc = fl_client_conn_call(&p->conn, FL_API_GET_METADATA, &req.base,
                                     &fluss__metadata_response__descriptor,
                                     (ProtobufCMessage **)md, err);
        /* a connection closed as idle since the last call: once more on a new one */
        if (rc && p->conn.fd >= 0 && fl_client_retriable(rc)) fl_client_conn_close(&p->conn);
        if (!rc || attempt > 0 || !fl_client_retriable(rc)) return rc;
    }
}

/* Adds the partition of pm; its buckets' leaders mapped to the table's
 * nodes. *complete is false when a bucket has no known leader. */
static int fl_parts_add(fl_parts_t *p, const Fluss__PbPartitionMetadata *pm, size_t *index,
                        bool *complete, fl_error_t *err) {
    const fluss_table_t *t = p->t;
    if (p->count >= FL_PARTS_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "more than %d partitions in use",
                          FL_PARTS_MAX);
    if (p->count == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 8;
        p->items = fl_realloc(p->items, p->cap * sizeof(fl_part_t));
    }
    fl_part_t *it = &p->items[p->count];
    it->id = pm->partition_id;
    it->name = fl_strdup(pm->partition_name);
    it->leader = fl_malloc((size_t)t->bucket_count * sizeof(int32_t));
    for (int32_t b = 0; b < t->bucket_count; b++) it->leader[b] = -1;
    for (size_t j = 0; j < pm->n_bucket_metadata; j++) {
        const Fluss__PbBucketMetadata *bm = pm->bucket_metadata[j];
        if (bm->bucket_id < 0 || bm->bucket_id >= t->bucket_count || !bm->has_leader_id) continue;
        it->leader[bm->bucket_id] = fl_table_node_index(t, bm->leader_id);
    }
    *complete = true;
    for (int32_t b = 0; b < t->bucket_count; b++) *complete &= it->leader[b] >= 0;
    *index = p->count++;
    return 0;
}

/* Asks for one partition and adds it. With wait, a partition that does
 * not exist yet or has leaderless buckets is asked for again until the
 * table's timeout (it was just created). */
static int fl_parts_fetch(fl_parts_t *p, const char *name, int64_t id, bool wait,
                          size_t *index, fl_error_t *err) {
    int64_t deadline = fl_time_mono_ms() + p->t->timeout_ms;
    for (;;) {
        Fluss__MetadataResponse *md = NULL;
        int rc = fl_parts_ask(p, name, id, &md, err);
        const Fluss__PbPartitionMetadata *pm = NULL;
        for (size_t i = 0; !rc && i < md->n_partition_metadata; i++) {
            const Fluss__PbPartitionMetadata *m = md->partition_metadata[i];
            if (m->table_id == p->t->table_id &&
                (name ? strcmp(m->partition_name, name) == 0 : m->partition_id == id))
                pm = m;
        }
        if (!rc && !pm)
            rc = fl_err_set(err, FLUSS_ERR_PARTITION_NOT_EXISTS,
                            "GET_METADATA did not answer partition %s of %s.%s",
                            name ? name : "(by id)", p->t->database, p->t->name);
        bool complete = false;
        size_t before = p->count;
        if (!rc) rc = fl_parts_add(p, pm, index, &complete, err);
        if (md) protobuf_c_message_free_unpacked(&md->base, NULL);
        bool again = wait && fl_time_mono_ms() < deadline &&
                     ((rc == FLUSS_ERR_PARTITION_NOT_EXISTS) || (!rc && !complete));
        if (!again) return rc;
        if (!rc) { /* leaderless buckets: drop what was added and ask again */
            p->count = before;
            fl_free(p->items[before].name);
            fl_free(p->items[before].leader);
        }
        fl_err_clear(err);
        fl_parts_sleep_ms(FL_PARTS_WAIT_STEP_MS);
    }
}

/* A partition spec (keys and values) with its wire form. */
typedef struct fl_wire_spec {
    fl_kvlist_t spec;
    Fluss__PbKeyValue *kv;
    Fluss__PbKeyValue **kvp;
    Fluss__PbPartitionSpec pb; /* points into the above */
} fl_wire_spec_t;

/* Fills the wire form of w->spec. */
static void fl_wire_spec_build(fl_wire_spec_t *w) {
    size_t n = w->spec.count;
    w->kv = fl_calloc(n ? n : 1, sizeof(*w->kv));
    w->kvp = fl_calloc(n ? n : 1, sizeof(*w->kvp));
    fluss__pb_partition_spec__init(&w->pb);
    for (size_t i = 0; i < n; i++) {
        fluss__pb_key_value__init(&w->kv[i]);
        w->kv[i].key = w->spec.items[i].key;
        w->kv[i].value = w->spec.items[i].value;
        w->kvp[i] = &w->kv[i];
    }
    w->pb.n_partition_key_values = n;
    w->pb.partition_key_values = w->kvp;
}

/* ... of a spec text ("k1=v1,k2=v2"). */
static int fl_wire_spec_parse(const char *text, fl_wire_spec_t *w, fl_error_t *err) {
    memset(w, 0, sizeof(*w));
    if (fl_partition_spec_parse(text ? text : "", &w->spec, err)) return -1;
    fl_wire_spec_build(w);
    return 0;
}

static void fl_wire_spec_free(fl_wire_spec_t *w) {
    fl_free(w->kv);
    fl_free(w->kvp);
    fl_kvlist_free(&w->spec);
}

/* CREATE_PARTITION of the partition called name (values split on '$' in
 * partition-key order, ResolvedPartitionSpec#fromPartitionName), an
 * existing one ignored. */
static int fl_parts_create(fl_parts_t *p, const char *name, fl_error_t *err) {
    const fluss_table_t *t = p->t;
    const fl_strlist_t *keys = &t->desc.partition_keys;
    fl_wire_spec_t ws;
    memset(&ws, 0, sizeof(ws));
    char *copy = fl_strdup(name), *cur = copy;
    int rc = 0;
    for (size_t i = 0; i < keys->count; i++) {
        char *dollar = i + 1 < keys->count ? strchr(cur, '$') : NULL;
        if (i + 1 < keys->count && !dollar) {
            rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "partition name '%s' has too few values",
                            name);
            break;
        }
        if (dollar) *dollar = '\0';
        fl_kvlist_set(&ws.spec, keys->items[i], cur);
        if (dollar) cur = dollar + 1;
    }
    if (!rc) {
        fl_wire_spec_build(&ws);
        Fluss__PbTablePath path = FLUSS__PB_TABLE_PATH__INIT;
        path.database_name = t->database;
        path.table_name = t->name;
        Fluss__CreatePartitionRequest req = FLUSS__CREATE_PARTITION_REQUEST__INIT;
        req.table_path = &path;
        req.partition_spec = &ws.pb;
        req.ignore_if_not_exists = true; /* the field means "ignore if it exists" */
        fl_client_conn_t conn;
        rc = fl_table_connect_coordinator(t, &conn, err);
        ProtobufCMessage *resp = NULL;
        if (!rc) {
            rc = fl_client_conn_call(&conn, FL_API_CREATE_PARTITION, &req.base,
                                     &fluss__create_partition_response__descriptor, &resp, err);
            fl_client_conn_close(&conn);
        }
        if (resp) protobuf_c_message_free_unpacked(resp, NULL);
    }
    fl_free(copy);
    fl_wire_spec_free(&ws);
    return rc;
}

int fl_parts_by_name(fl_parts_t *p, const char *name, bool create, size_t *index,
                     fl_error_t *err) {
    if (p->last < p->count && p->items[p->last].name && strcmp(p->items[p->last].name, name) == 0) {
        *index = p->last;
        return 0;
    }
    for (size_t i = 0; i < p->count; i++)
        if (p->items[i].name && strcmp(p->items[i].name, name) == 0) {
            *index = p->last = i;
            return 0;
        }
    if (p->t->part_count == 0)
        return fl_err_set(err, FLUSS_ERR_TABLE_NOT_PARTITIONED_EXCEPTION,
                          "%s.%s is not partitioned", p->t->database, p->t->name);
    int rc = fl_parts_fetch(p, name, -1, false, index, err);
    if (rc == FLUSS_ERR_PARTITION_NOT_EXISTS && create) {
        fl_err_clear(err);
        rc = fl_parts_create(p, name, err);
        if (!rc) rc = fl_parts_fetch(p, name, -1, true, index, err);
    }
    if (!rc) p->last = *index;
    return rc;
}

int fl_parts_by_id(fl_parts_t *p, int64_t id, size_t *index, fl_error_t *err) {
    for (size_t i = 0; i < p->count; i++)
        if (p->items[i].id == id) {
            *index = i;
            return 0;
        }
    if (p->t->part_count == 0)
        return fl_err_set(err, FLUSS_ERR_TABLE_NOT_PARTITIONED_EXCEPTION,
                          "%s.%s is not partitioned", p->t->database, p->t->name);
    if (id < 0) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "partition id %lld", (long long)id);
    return fl_parts_fetch(p, NULL, id, false, index, err);
}

int fl_partition_name_of_text(const fluss_table_t *t, const char *text, fl_buf_t *out,
                              fl_error_t *err) {
    if (!strchr(text, '=')) {
        out->len = 0;
        fl_buf_append(out, text, strlen(text));
        fl_buf_put_u8(out, '\0');
        out->len--;
        return 0;
    }
    fl_kvlist_t spec;
    int rc = fl_partition_spec_parse(text, &spec, err);
    if (!rc) rc = fl_partition_name_of_spec(&spec, &t->desc.partition_keys, out, err);
    fl_kvlist_free(&spec);
    return rc;
}

/* ---- public: partitions of a table handle ---- */

size_t fluss_table_partition_keys(const fluss_table_t *t, const int32_t **cols) {
    *cols = t->part_cols;
    return t->part_count;
}

int fluss_table_partition_id(const fluss_table_t *t, const char *spec, int64_t *id,
                             fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    fl_buf_t name;
    fl_buf_init(&name);
    fl_parts_t parts;
    fl_parts_init(&parts, t);
    size_t idx = 0;
    int rc = fl_partition_name_of_text(t, spec, &name, &err);
    if (!rc) rc = fl_parts_by_name(&parts, (const char *)name.data, false, &idx, &err);
    if (!rc) *id = parts.items[idx].id;
    fl_parts_free(&parts);
    fl_buf_free(&name);
    return rc ? fl_client_error_out(e, &err) : 0;
}

int fluss_table_list_partition_offsets(const fluss_table_t *t, int64_t partition_id,
                                       const int32_t *buckets, size_t n, fluss_offset_spec_t spec,
                                       int64_t timestamp_ms, int64_t *offsets, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    fl_parts_t parts;
    fl_parts_init(&parts, t);
    size_t idx = 0;
    int rc = partition_id < 0 && t->part_count == 0 ? 0
                                                    : fl_parts_by_id(&parts, partition_id, &idx, &err);
    if (!rc)
        rc = fl_table_list_offsets(t, parts.items[idx].id, parts.items[idx].leader, buckets, n,
                                   spec, timestamp_ms, offsets, &err);
    fl_parts_free(&parts);
    return rc ? fl_client_error_out(e, &err) : 0;
}

int fluss_row_partition_name(const fluss_row_t *row, char *buf, size_t cap, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    const fluss_table_t *t = row->t;
    if (t->part_count == 0) {
        fl_err_set(&err, FLUSS_ERR_TABLE_NOT_PARTITIONED_EXCEPTION, "%s.%s is not partitioned",
                   t->database, t->name);
        return fl_client_error_out(e, &err);
    }
    fl_buf_t name;
    fl_buf_init(&name);
    int rc = fl_partition_name_of_row(t->types, &row->row, t->part_cols, t->part_count, &name,
                                      &err);
    if (!rc && name.len + 1 > cap)
        rc = fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "the partition name has %zu bytes", name.len);
    if (!rc) memcpy(buf, name.data, name.len + 1);
    fl_buf_free(&name);
    return rc ? fl_client_error_out(e, &err) : 0;
}

/* ---- public: partition admin ---- */

/* CREATE_PARTITION / DROP_PARTITION of a spec text. */
static int fl_partition_ddl(fluss_client_t *c, const char *db, const char *table,
                            const char *spec_text, bool ignore, bool create, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    fl_wire_spec_t ws;
    if (fl_wire_spec_parse(spec_text, &ws, &err)) return fl_client_error_out(e, &err);
    Fluss__PbTablePath path = FLUSS__PB_TABLE_PATH__INIT;
    path.database_name = (char *)db;
    path.table_name = (char *)table;
    int timeout_ms;
    fl_client_conn_t *coord = fl_client_coordinator(c, &timeout_ms);
    ProtobufCMessage *resp = NULL;
    int rc;
    if (create) {
        Fluss__CreatePartitionRequest req = FLUSS__CREATE_PARTITION_REQUEST__INIT;
        req.table_path = &path;
        req.partition_spec = &ws.pb;
        req.ignore_if_not_exists = ignore; /* means "ignore if it exists" (protocol.md §3.14) */
        rc = fl_client_conn_call(coord, FL_API_CREATE_PARTITION, &req.base,
                                 &fluss__create_partition_response__descriptor, &resp, &err);
    } else {
        Fluss__DropPartitionRequest req = FLUSS__DROP_PARTITION_REQUEST__INIT;
        req.table_path = &path;
        req.partition_spec = &ws.pb;
        req.ignore_if_not_exists = ignore;
        rc = fl_client_conn_call(coord, FL_API_DROP_PARTITION, &req.base,
                                 &fluss__drop_partition_response__descriptor, &resp, &err);
    }
    if (resp) protobuf_c_message_free_unpacked(resp, NULL);
    fl_wire_spec_free(&ws);
    return rc ? fl_client_error_out(e, &err) : 0;
}

int fluss_partition_create(fluss_client_t *c, const char *database, const char *table,
                           const char *spec, bool ignore_if_exists, fluss_error_t *e) {
    return fl_partition_ddl(c, database, table, spec, ignore_if_exists, true, e);
}

int fluss_partition_drop(fluss_client_t *c, const char *database, const char *table,
                         const char *spec, bool ignore_if_not_exists, fluss_error_t *e) {
    return fl_partition_ddl(c, database, table, spec, ignore_if_not_exists, false, e);
}

/* name ("v1$v2") and spec ("k1=v1,k2=v2") texts of a PbPartitionSpec. */
static void fl_partition_texts(const Fluss__PbPartitionSpec *s, char **name, char **spec) {
    fl_buf_t n, t;
    fl_buf_init(&n);
    fl_buf_init(&t);
    for (size_t i = 0; s && i < s->n_partition_key_values; i++) {
        const Fluss__PbKeyValue *kv = s->partition_key_values[i];
        if (i) {
            fl_buf_put_u8(&n, '$');
            fl_buf_put_u8(&t, ',');
        }
        fl_buf_append(&n, kv->value, strlen(kv->value));
        fl_buf_append(&t, kv->key, strlen(kv->key));
        fl_buf_put_u8(&t, '=');
        fl_buf_append(&t, kv->value, strlen(kv->value));
    }
    fl_buf_put_u8(&n, '\0');
    fl_buf_put_u8(&t, '\0');
    *name = (char *)n.data;
    *spec = (char *)t.data;
}

int fluss_partition_list(fluss_client_t *c, const char *database, const char *table,
                         const char *partial_spec, fluss_partition_info_t **out, size_t *count,
                         fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    *out = NULL;
    *count = 0;
    fl_wire_spec_t ws;
    if (fl_wire_spec_parse(partial_spec, &ws, &err)) return fl_client_error_out(e, &err);
    Fluss__PbTablePath path = FLUSS__PB_TABLE_PATH__INIT;
    path.database_name = (char *)database;
    path.table_name = (char *)table;
    Fluss__ListPartitionInfosRequest req = FLUSS__LIST_PARTITION_INFOS_REQUEST__INIT;
    req.table_path = &path;
    if (ws.spec.count) req.partial_partition_spec = &ws.pb;
    int timeout_ms;
    fl_client_conn_t *coord = fl_client_coordinator(c, &timeout_ms);
    Fluss__ListPartitionInfosResponse *resp = NULL;
    int rc = fl_client_conn_call(coord, FL_API_LIST_PARTITION_INFOS, &req.base,
                                 &fluss__list_partition_infos_response__descriptor,
                                 (ProtobufCMessage **)&resp, &err);
    fl_wire_spec_free(&ws);
    if (rc) return fl_client_error_out(e, &err);
    size_t n = resp->n_partitions_info;
    fluss_partition_info_t *infos = fl_calloc(n ? n : 1, sizeof(*infos));
    for (size_t i = 0; i < n; i++) {
        infos[i].partition_id = resp->partitions_info[i]->partition_id;
        fl_partition_texts(resp->partitions_info[i]->partition_spec, &infos[i].name,
                           &infos[i].spec);
    }
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    *out = infos;
    *count = n;
    return 0;
}

void fluss_partition_infos_free(fluss_partition_info_t *infos, size_t count) {
    if (!infos) return;
    for (size_t i = 0; i < count; i++) {
        fl_free(infos[i].name);
        fl_free(infos[i].spec);
    }
    fl_free(infos);
}
