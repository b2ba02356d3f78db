/*
 * client_table.c — libfluss's table handle for log tables (fluss.h
 * fluss_table_open): the table's schema and properties from
 * GET_TABLE_INFO, its bucket leaders and tablet servers from GET_METADATA
 * (Fluss's client-side Cluster / TableInfo), and LIST_OFFSETS against
 * the bucket leaders. Thread rule: a table is immutable once opened;
 * every call that talks to a server opens its own connection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client_partition.h"
#include "client_table.h"
#include "common_alloc.h"
#include "fluss_api.pb-c.h"
#include "proto_api.h"

int fl_client_error_out(fluss_error_t *out, const fl_error_t *in) {
    if (out) {
        out->code = in->code;
        snprintf(out->message, sizeof(out->message), "%s",
                 in->msg[0] ? in->msg : fl_err_default_message(in->code));
    }
    return in->code;
}

static char *fl_type_text(const fl_datatype_t *t) {
    fl_buf_t b;
    fl_buf_init(&b);
    fl_datatype_format(t, &b);
    fl_buf_put_u8(&b, '\0');
    return (char *)b.data;
}

/* The partition keys' column indexes (each of a type Fluss can name a
 * partition by). */
static int fl_table_init_partitions(fluss_table_t *t, fl_error_t *err) {
    const fl_strlist_t *keys = &t->desc.partition_keys;
    t->part_cols = fl_calloc(keys->count ? keys->count : 1, sizeof(int32_t));
    for (size_t i = 0; i < keys->count; i++) {
        int idx = fl_schema_column_index(&t->desc.schema, keys->items[i]);
        if (idx < 0)
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "partition key '%s' is not a column",
                              keys->items[i]);
        if (!fl_partition_type_ok(t->desc.schema.columns[idx].type))
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "partition key '%s' has a type partitions cannot be named by",
                              keys->items[i]);
        t->part_cols[t->part_count++] = idx;
    }
    return 0;
}

/* The primary key's column indexes, its physical part (without partition
 * keys: what keys encode, Fluss's TableInfo#getPhysicalPrimaryKeys), the
 * kv format, and the default bucket key of a PK table (its physical
 * primary key, as Fluss's TableDescriptor does when none is given). */
static int fl_table_init_pk(fluss_table_t *t, fl_error_t *err) {
    const fl_schema_t *s = &t->desc.schema;
    size_t n = s->has_primary_key ? s->primary_key.count : 0;
    t->pk = fl_calloc(n ? n : 1, sizeof(int32_t));
    t->kpk = fl_calloc(n ? n : 1, sizeof(int32_t));
    for (size_t i = 0; i < n; i++) {
        int idx = fl_schema_column_index(s, s->primary_key.items[i]);
        if (idx < 0)
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "primary key '%s' is not a column",
                              s->primary_key.items[i]);
        t->pk[t->pk_count++] = idx;
        if (fl_strlist_index(&t->desc.partition_keys, s->primary_key.items[i]) < 0)
            t->kpk[t->kpk_count++] = idx;
    }
    if (n > 0 && t->kpk_count == 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "the primary key has only partition keys; nothing to encode");
    const char *f = fl_kvlist_get(&t->desc.properties, "table.kv.format");
    if (f && fl_row_format_parse(f, &t->kv_format, err)) return err->code;
    if (t->pk_count > 0 && t->bucket_key_count == 0) {
        fl_free(t->bucket_key);
        t->bucket_key = fl_malloc(t->kpk_count * sizeof(int32_t));
        memcpy(t->bucket_key, t->kpk, t->kpk_count * sizeof(int32_t));
        t->bucket_key_count = t->kpk_count;
    }
    const char *lake = fl_kvlist_get(&t->desc.properties, "table.datalake.format");
    t->default_bucket_key = t->bucket_key_count == t->kpk_count &&
                            memcmp(t->bucket_key, t->kpk, t->kpk_count * sizeof(int32_t)) == 0;
    t->bucket_codec = fl_key_codec_of_lake(lake);
    t->pk_codec = fl_key_codec_of_primary(
        lake, fl_kvlist_get(&t->desc.properties, "table.kv.format-version"),
        t->default_bucket_key);
    return 0;
}

fluss_table_t *fl_table_new_local(const char *db, const char *name, int64_t table_id,
                                  int32_t schema_id, fl_table_desc_t *desc, fl_error_t *err) {
    const char *format = fl_kvlist_get(&desc->properties, "table.log.format");
    const char *comp = fl_kvlist_get(&desc->properties, "table.log.arrow.compression.type");
    const char *level = fl_kvlist_get(&desc->properties, "table.log.arrow.compression.zstd.level");
    fl_arrow_codec_t codec = FL_ARROW_CODEC_ZSTD; /* Fluss's default: ZSTD level 3 */
    if (comp && strcasecmp(comp, "NONE") == 0) codec = FL_ARROW_CODEC_NONE;
    else if (comp && strcasecmp(comp, "LZ4_FRAME") == 0) codec = FL_ARROW_CODEC_LZ4_FRAME;
    else if (comp && strcasecmp(comp, "ZSTD") != 0) {
        fl_err_set(err, FLUSS_ERR__INVALID_ARG, "unknown table.log.arrow.compression.type '%s'",
                   comp);
        return NULL;
    }
    fluss_table_t *t = fl_calloc(1, sizeof(*t));
    t->database = fl_strdup(db);
    t->name = fl_strdup(name);
    t->table_id = table_id;
    t->schema_id = schema_id;
    t->desc = *desc;
    memset(desc, 0, sizeof(*desc));
    t->bucket_count = t->desc.bucket_count > 0 ? t->desc.bucket_count : 1;
    t->codec = codec;
    t->zstd_level = level ? atoi(level) : 3;
    t->arrow_format = !format || strcasecmp(format, "ARROW") == 0;
    t->timeout_ms = 30000;
    size_t n = t->desc.schema.column_count;
    t->type_text = fl_calloc(n ? n : 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) t->type_text[i] = fl_type_text(t->desc.schema.columns[i].type);
    t->bucket_key_count = t->desc.bucket_keys.count;
    t->bucket_key = fl_calloc(t->bucket_key_count ? t->bucket_key_count : 1, sizeof(int32_t));
    for (size_t i = 0; i < t->bucket_key_count; i++) {
        int idx = fl_schema_column_index(&t->desc.schema, t->desc.bucket_keys.items[i]);
        if (idx < 0) {
            fl_err_set(err, FLUSS_ERR__CORRUPT, "bucket key '%s' is not a column",
                       t->desc.bucket_keys.items[i]);
            fluss_table_close(t);
            return NULL;
        }
        t->bucket_key[i] = idx;
    }
    t->leader_node = fl_malloc((size_t)t->bucket_count * sizeof(int32_t));
    for (int32_t b = 0; b < t->bucket_count; b++) t->leader_node[b] = -1;
    t->types = fl_calloc(n ? n : 1, sizeof(fl_datatype_t *));
    for (size_t i = 0; i < n; i++) t->types[i] = t->desc.schema.columns[i].type;
    if (fl_table_init_partitions(t, err) || fl_table_init_pk(t, err)) {
        fluss_table_close(t);
        return NULL;
    }
    return t;
}

void fluss_table_close(fluss_table_t *t) {
    if (!t) return;
    for (size_t i = 0; i < t->desc.schema.column_count; i++) fl_free(t->type_text[i]);
    fl_free(t->type_text);
    fl_free(t->types);
    fl_free(t->pk);
    fl_free(t->kpk);
    fl_free(t->part_cols);
    fl_table_desc_free(&t->desc);
    fl_free(t->bucket_key);
    fl_free(t->leader_node);
    fl_free(t->nodes);
    fl_free(t->database);
    fl_free(t->name);
    fl_free(t);
}

static int fl_table_load_metadata(fluss_table_t *t, fl_client_conn_t *coord, fl_error_t *err) {
    Fluss__PbTablePath path = FLUSS__PB_TABLE_PATH__INIT;
    path.database_name = t->database;
    path.table_name = t->name;
    Fluss__PbTablePath *paths[1] = {&path};
    Fluss__MetadataRequest req = FLUSS__METADATA_REQUEST__INIT;
    req.n_table_path = 1;
    req.table_path = paths;
    Fluss__MetadataResponse *md = NULL;
    int rc = fl_client_conn_call(coord, FL_API_GET_METADATA, &req.base,
                                 &fluss__metadata_response__descriptor, (ProtobufCMessage **)&md,
                                 err);
    if (rc) return rc;
    if (md->coordinator_server) {
        t->coordinator.id = md->coordinator_server->node_id;
        snprintf(t->coordinator.host, FL_HOST_MAX, "%s", md->coordinator_server->host);
        t->coordinator.port = md->coordinator_server->port;
    }
    t->node_count = md->n_tablet_servers;
    t->nodes = fl_calloc(t->node_count ? t->node_count : 1, sizeof(fl_node_t));
    for (size_t i = 0; i < md->n_tablet_servers; i++) {
        t->nodes[i].id = md->tablet_servers[i]->node_id;
        snprintf(t->nodes[i].host, FL_HOST_MAX, "%s", md->tablet_servers[i]->host);
        t->nodes[i].port = md->tablet_servers[i]->port;
    }
    for (size_t k = 0; k < md->n_table_metadata; k++) {
        const Fluss__PbTableMetadata *tm = md->table_metadata[k];
        if (tm->table_id != t->table_id) continue;
        for (size_t j = 0; j < tm->n_bucket_metadata; j++) {
            const Fluss__PbBucketMetadata *bm = tm->bucket_metadata[j];
            if (bm->bucket_id < 0 || bm->bucket_id >= t->bucket_count || !bm->has_leader_id)
                continue;
            t->leader_node[bm->bucket_id] = fl_table_node_index(t, bm->leader_id);
        }
    }
    protobuf_c_message_free_unpacked(&md->base, NULL);
    return 0;
}

int fluss_table_open(fluss_client_t *client, const char *database, const char *table,
                     fluss_table_t **out, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    int timeout_ms;
    fl_client_conn_t *coord = fl_client_coordinator(client, &timeout_ms);
    Fluss__PbTablePath path = FLUSS__PB_TABLE_PATH__INIT;
    path.database_name = (char *)database;
    path.table_name = (char *)table;
    Fluss__GetTableInfoRequest req = FLUSS__GET_TABLE_INFO_REQUEST__INIT;
    req.table_path = &path;
    Fluss__GetTableInfoResponse *resp = NULL;
    int rc = fl_client_conn_call(coord, FL_API_GET_TABLE_INFO, &req.base,
                                 &fluss__get_table_info_response__descriptor,
                                 (ProtobufCMessage **)&resp, &err);
    if (rc) return fl_client_error_out(e, &err);
    fl_table_desc_t d;
    rc = fl_table_desc_from_bytes(resp->table_json.data, resp->table_json.len, &d, &err);
    int64_t table_id = resp->table_id;
    int32_t schema_id = resp->schema_id;
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    if (rc) return fl_client_error_out(e, &err);
    fluss_table_t *t = fl_table_new_local(database, table, table_id, schema_id, &d, &err);
    if (!t) {
        fl_table_desc_free(&d);
        return fl_client_error_out(e, &err);
    }
    t->timeout_ms = timeout_ms > 0 ? timeout_ms : 30000;
    t->auth = coord->auth;
    if ((rc = fl_table_load_metadata(t, coord, &err))) {
        fluss_table_close(t);
        return fl_client_error_out(e, &err);
    }
    *out = t;
    return 0;
}

int64_t fluss_table_id(const fluss_table_t *t) { return t->table_id; }
int32_t fluss_table_bucket_count(const fluss_table_t *t) { return t->bucket_count; }

const char *fluss_table_property(const fluss_table_t *t, const char *key) {
    return fl_kvlist_get(&t->desc.properties, key);
}
size_t fluss_table_column_count(const fluss_table_t *t) { return t->desc.schema.column_count; }

const char *fluss_table_column_name(const fluss_table_t *t, size_t col) {
    return col < t->desc.schema.column_count ? t->desc.schema.columns[col].name : NULL;
}

const char *fluss_table_column_type(const fluss_table_t *t, size_t col) {
    return col < t->desc.schema.column_count ? t->type_text[col] : NULL;
}

int fluss_table_column_index(const fluss_table_t *t, const char *name) {
    return fl_schema_column_index(&t->desc.schema, name);
}

size_t fluss_table_primary_key(const fluss_table_t *t, const int32_t **cols) {
    *cols = t->pk;
    return t->pk_count;
}

int fl_table_connect_node(const fluss_table_t *t, int node, fl_client_conn_t *conn,
                          fl_error_t *err) {
    if (node < 0 || (size_t)node >= t->node_count)
        return fl_err_set(err, FLUSS_ERR_LEADER_NOT_AVAILABLE_EXCEPTION, "no such tablet server");
    return fl_client_conn_open(conn, t->nodes[node].host, t->nodes[node].port, t->timeout_ms, &t->auth, err);
}

int fl_table_connect_coordinator(const fluss_table_t *t, fl_client_conn_t *conn, fl_error_t *err) {
    if (t->coordinator.port <= 0)
        return fl_err_set(err, FLUSS_ERR__STATE, "the cluster named no coordinator");
    return fl_client_conn_open(conn, t->coordinator.host, t->coordinator.port, t->timeout_ms, &t->auth,
                               err);
}

int32_t fl_table_node_index(const fluss_table_t *t, int32_t node_id) {
    for (size_t i = 0; i < t->node_count; i++)
        if (t->nodes[i].id == node_id) return (int32_t)i;
    return -1;
}

int fl_table_connect_leader(const fluss_table_t *t, int32_t bucket, fl_client_conn_t *conn,
                            int *node, fl_error_t *err) {
    if (bucket < 0 || bucket >= t->bucket_count)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "bucket %d out of range [0, %d)", bucket,
                          t->bucket_count);
    if (t->leader_node[bucket] < 0)
        return fl_err_set(err, FLUSS_ERR_LEADER_NOT_AVAILABLE_EXCEPTION,
                          "bucket %d of %s.%s has no leader", bucket, t->database, t->name);
    *node = t->leader_node[bucket];
    return fl_table_connect_node(t, *node, conn, err);
}

int fl_table_list_offsets(const fluss_table_t *t, int64_t partition_id, const int32_t *leader,
                          const int32_t *buckets, size_t n, fluss_offset_spec_t spec,
                          int64_t timestamp_ms, int64_t *offsets, fl_error_t *errp) {
    fl_error_t err;
    fl_err_clear(&err);
    int rc = 0;
    int32_t *ids = fl_malloc((n ? n : 1) * sizeof(int32_t));
    for (size_t i = 0; i < n; i++) ids[i] = buckets ? buckets[i] : (int32_t)i;
    bool *done = fl_calloc(n ? n : 1, sizeof(bool));
    /* one request per leader */
    for (size_t i = 0; i < n && !rc; i++) {
        if (done[i]) continue;
        if (ids[i] < 0 || ids[i] >= t->bucket_count) {
            rc = fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "bucket %d out of range", ids[i]);
            break;
        }
        int node = leader[ids[i]];
        fl_client_conn_t conn;
        if (node < 0) {
            rc = fl_err_set(&err, FLUSS_ERR_LEADER_NOT_AVAILABLE_EXCEPTION,
                            "bucket %d of %s.%s has no leader", ids[i], t->database, t->name);
            break;
        }
        if ((rc = fl_table_connect_node(t, node, &conn, &err))) break;
        int32_t *mine = fl_malloc(n * sizeof(int32_t));
        size_t m = 0;
        for (size_t j = i; j < n; j++)
            if (!done[j] && ids[j] >= 0 && ids[j] < t->bucket_count &&
                leader[ids[j]] == node)
                mine[m++] = ids[j];
        Fluss__ListOffsetsRequest req = FLUSS__LIST_OFFSETS_REQUEST__INIT;
        req.follower_server_id = -1;
        req.offset_type = (int32_t)spec;
        req.table_id = t->table_id;
        req.has_partition_id = partition_id >= 0;
        req.partition_id = partition_id;
        req.n_bucket_id = m;
        req.bucket_id = mine;
        if (spec == FLUSS_OFFSETS_TIMESTAMP) {
            req.has_starttimestamp = 1;
            req.starttimestamp = timestamp_ms;
        }
        Fluss__ListOffsetsResponse *resp = NULL;
        rc = fl_client_conn_call(&conn, FL_API_LIST_OFFSETS, &req.base,
                                 &fluss__list_offsets_response__descriptor,
                                 (ProtobufCMessage **)&resp, &err);
        fl_client_conn_close(&conn);
        fl_free(mine);
        if (rc) break;
        for (size_t k = 0; k < resp->n_buckets_resp && !rc; k++) {
            const Fluss__PbListOffsetsRespForBucket *br = resp->buckets_resp[k];
            if (br->has_error_code && br->error_code != 0) {
                rc = fl_err_set(&err, br->error_code, "bucket %d: %s", br->bucket_id,
                                br->error_message ? br->error_message
                                                  : fl_err_default_message(br->error_code));
                break;
            }
            for (size_t j = 0; j < n; j++)
                if (ids[j] == br->bucket_id && !done[j]) {
                    offsets[j] = br->has_offset ? br->offset : -1;
                    done[j] = true;
                }
        }
        protobuf_c_message_free_unpacked(&resp->base, NULL);
        if (!rc && !done[i])
            rc = fl_err_set(&err, FLUSS_ERR__CORRUPT, "LIST_OFFSETS did not answer bucket %d",
                            ids[i]);
    }
    fl_free(done);
    fl_free(ids);
    if (rc) *errp = err;
    return rc;
}

int fluss_table_list_offsets(const fluss_table_t *t, const int32_t *buckets, size_t n,
                             fluss_offset_spec_t spec, int64_t timestamp_ms, int64_t *offsets,
                             fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    if (t->part_count > 0) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG,
                   "%s.%s is partitioned; name the partition (fluss_table_list_partition_offsets)",
                   t->database, t->name);
        return fl_client_error_out(e, &err);
    }
    int rc = fl_table_list_offsets(t, -1, t->leader_node, buckets, n, spec, timestamp_ms, offsets,
                                   &err);
    return rc ? fl_client_error_out(e, &err) : 0;
}
