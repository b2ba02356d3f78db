/*
 * server_metadata_cache.c — a tablet server's copy of the cluster's
 * metadata, and GET_METADATA answered from it (server_metadata_cache.h).
 */
#include "server_metadata_cache.h"

#include <pthread.h>
#include <string.h>

#include "common_alloc.h"
#include "proto_frame.h"

/* One table's or partition's entry: the packed message a client gets. */
typedef struct fl_md_entry {
    int64_t table_id;
    int64_t partition_id; /* -1: the table's own entry */
    char *db, *table, *partition;
    uint8_t *pb;
    size_t len;
} fl_md_entry_t;

struct fl_metadata_cache {
    pthread_rwlock_t lock;
    uint8_t *coordinator; /* packed PbServerNode, NULL until the first update */
    size_t coordinator_len;
    size_t server_count;
    uint8_t **servers;    /* packed PbServerNode each */
    size_t *server_lens;
    size_t count, cap;
    fl_md_entry_t *entries;
};

fl_metadata_cache_t *fl_metadata_cache_new(void) {
    fl_metadata_cache_t *c = fl_calloc(1, sizeof(*c));
    pthread_rwlock_init(&c->lock, NULL);
    return c;
}

static void fl_md_servers_free(fl_metadata_cache_t *c) {
    for (size_t i = 0; i < c->server_count; i++) fl_free(c->servers[i]);
    fl_free(c->servers);
    fl_free(c->server_lens);
    c->servers = NULL;
    c->server_lens = NULL;
    c->server_count = 0;
}

static void fl_md_entry_free(fl_md_entry_t *e) {
    fl_free(e->db);
    fl_free(e->table);
    fl_free(e->partition);
    fl_free(e->pb);
}

void fl_metadata_cache_free(fl_metadata_cache_t *c) {
    if (!c) return;
    fl_free(c->coordinator);
    fl_md_servers_free(c);
    for (size_t i = 0; i < c->count; i++) fl_md_entry_free(&c->entries[i]);
    fl_free(c->entries);
    pthread_rwlock_destroy(&c->lock);
    fl_free(c);
}

static uint8_t *fl_md_pack(const ProtobufCMessage *m, size_t *len) {
    *len = protobuf_c_message_get_packed_size(m);
    uint8_t *p = fl_malloc(*len ? *len : 1);
    protobuf_c_message_pack(m, p);
    return p;
}

/* A node as clients see it: id, host and port of its client listener
 * (UPDATE_METADATA's host and port; its listener list is for servers). */
static uint8_t *fl_md_node(const Fluss__PbServerNode *n, size_t *len) {
    Fluss__PbServerNode out = FLUSS__PB_SERVER_NODE__INIT;
    out.node_id = n->node_id;
    out.host = n->host ? n->host : "";
    out.port = n->port;
    return fl_md_pack(&out.base, len);
}

/* (write lock) Removes table_id's entries, its partitions' with them. */
static void fl_md_drop_table(fl_metadata_cache_t *c, int64_t table_id) {
    size_t k = 0;
    for (size_t i = 0; i < c->count; i++) {
        if (c->entries[i].table_id == table_id) fl_md_entry_free(&c->entries[i]);
        else c->entries[k++] = c->entries[i];
    }
    c->count = k;
}

/* (write lock) */
static fl_md_entry_t *fl_md_add(fl_metadata_cache_t *c) {
    if (c->count == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        c->entries = fl_realloc(c->entries, c->cap * sizeof(*c->entries));
    }
    fl_md_entry_t *e = &c->entries[c->count++];
    memset(e, 0, sizeof(*e));
    return e;
}

/* (read lock) The entry of a table by path, or NULL. */
static const fl_md_entry_t *fl_md_table(const fl_metadata_cache_t *c, const char *db,
                                        const char *name) {
    for (size_t i = 0; i < c->count; i++) {
        const fl_md_entry_t *e = &c->entries[i];
        if (e->partition_id < 0 && strcmp(e->db, db) == 0 && strcmp(e->table, name) == 0) return e;
    }
    return NULL;
}

void fl_metadata_cache_update(fl_metadata_cache_t *c, const Fluss__UpdateMetadataRequest *req) {
    pthread_rwlock_wrlock(&c->lock);
    if (req->coordinator_server) {
        fl_free(c->coordinator);
        c->coordinator = fl_md_node(req->coordinator_server, &c->coordinator_len);
        fl_md_servers_free(c);
        c->server_count = req->n_tablet_servers;
        c->servers = fl_calloc(req->n_tablet_servers ? req->n_tablet_servers : 1,
                               sizeof(*c->servers));
        c->server_lens = fl_calloc(req->n_tablet_servers ? req->n_tablet_servers : 1,
                                   sizeof(*c->server_lens));
        for (size_t i = 0; i < req->n_tablet_servers; i++)
            c->servers[i] = fl_md_node(req->tablet_servers[i], &c->server_lens[i]);
    }
    for (size_t i = 0; i < req->n_table_metadata; i++) {
        const Fluss__PbTableMetadata *tm = req->table_metadata[i];
        if (!tm->table_path || !tm->table_path->database_name || !tm->table_path->table_name)
            continue;
        if (tm->table_id < 0) { /* deleted: by path */
            const fl_md_entry_t *old = fl_md_table(c, tm->table_path->database_name,
                                                   tm->table_path->table_name);
            if (old) fl_md_drop_table(c, old->table_id);
            continue;
        }
        fl_md_drop_table(c, tm->table_id);
        /* a table re-created under the same path has another id */
        const fl_md_entry_t *same_path = fl_md_table(c, tm->table_path->database_name,
                                                     tm->table_path->table_name);
        if (same_path) fl_md_drop_table(c, same_path->table_id);
        Fluss__PbTableMetadata client = *tm;
        client.n_flussc_schemas = 0;
        client.flussc_schemas = NULL;
        fl_md_entry_t *e = fl_md_add(c);
        e->table_id = tm->table_id;
        e->partition_id = -1;
        e->db = fl_strdup(tm->table_path->database_name);
        e->table = fl_strdup(tm->table_path->table_name);
        e->pb = fl_md_pack(&client.base, &e->len);
        for (size_t k = 0; k < req->n_partition_metadata; k++) {
            const Fluss__PbPartitionMetadata *pm = req->partition_metadata[k];
            if (pm->table_id != tm->table_id || !pm->partition_name) continue;
            fl_md_entry_t *pe = fl_md_add(c);
            pe->table_id = tm->table_id;
            pe->partition_id = pm->partition_id;
            pe->db = fl_strdup(tm->table_path->database_name);
            pe->table = fl_strdup(tm->table_path->table_name);
            pe->partition = fl_strdup(pm->partition_name);
            pe->pb = fl_md_pack(&pm->base, &pe->len);
        }
    }
    pthread_rwlock_unlock(&c->lock);
}

/* (read lock) A partition's entry by path or id, or NULL. */
static const fl_md_entry_t *fl_md_partition(const fl_metadata_cache_t *c, const char *db,
                                            const char *name, const char *partition,
                                            int64_t partition_id) {
    for (size_t i = 0; i < c->count; i++) {
        const fl_md_entry_t *e = &c->entries[i];
        if (e->partition_id < 0) continue;
        if (partition ? strcmp(e->db, db) == 0 && strcmp(e->table, name) == 0 &&
                            strcmp(e->partition, partition) == 0
                      : e->partition_id == partition_id)
            return e;
    }
    return NULL;
}

static size_t fl_md_field_len(size_t len) { return 1 + fl_uvarint_len(len) + len; }

/* A length-delimited field (numbers below 16: a one-byte tag). */
static void fl_md_put_field(fl_buf_t *out, int field, const uint8_t *p, size_t len) {
    fl_buf_put_u8(out, (uint8_t)((field << 3) | 2));
    fl_buf_put_uvarint(out, len);
    fl_buf_append(out, p, len);
}

bool fl_metadata_cache_answer(fl_metadata_cache_t *c, const Fluss__MetadataRequest *req,
                              int32_t request_id, fl_buf_t *out) {
    size_t nt = req->n_table_path, np = req->n_partitions_path + req->n_partitions_id;
    const fl_md_entry_t **tables = fl_calloc(nt ? nt : 1, sizeof(*tables));
    const fl_md_entry_t **parts = fl_calloc(np ? np : 1, sizeof(*parts));
    pthread_rwlock_rdlock(&c->lock);
    bool hit = c->coordinator != NULL;
    for (size_t i = 0; hit && i < nt; i++) {
        const Fluss__PbTablePath *p = req->table_path[i];
        tables[i] = p->database_name && p->table_name
                        ? fl_md_table(c, p->database_name, p->table_name)
                        : NULL;
        hit = tables[i] != NULL;
    }
    for (size_t i = 0; hit && i < req->n_partitions_path; i++) {
        const Fluss__PbPhysicalTablePath *p = req->partitions_path[i];
        parts[i] = p->database_name && p->table_name && p->partition_name
                       ? fl_md_partition(c, p->database_name, p->table_name, p->partition_name, 0)
                       : NULL;
        hit = parts[i] != NULL;
    }
    for (size_t i = 0; hit && i < req->n_partitions_id; i++) {
        parts[req->n_partitions_path + i] =
            fl_md_partition(c, NULL, NULL, NULL, req->partitions_id[i]);
        hit = parts[req->n_partitions_path + i] != NULL;
    }
    if (hit) {
        size_t body = fl_md_field_len(c->coordinator_len);
        for (size_t i = 0; i < c->server_count; i++) body += fl_md_field_len(c->server_lens[i]);
        for (size_t i = 0; i < nt; i++) body += fl_md_field_len(tables[i]->len);
        for (size_t i = 0; i < np; i++) body += fl_md_field_len(parts[i]->len);
        fl_frame_put_response_header(out, FL_RESPONSE_SUCCESS, request_id, body);
        fl_md_put_field(out, 1, c->coordinator, c->coordinator_len);
        for (size_t i = 0; i < c->server_count; i++)
            fl_md_put_field(out, 2, c->servers[i], c->server_lens[i]);
        for (size_t i = 0; i < nt; i++) fl_md_put_field(out, 3, tables[i]->pb, tables[i]->len);
        for (size_t i = 0; i < np; i++) fl_md_put_field(out, 4, parts[i]->pb, parts[i]->len);
    }
    pthread_rwlock_unlock(&c->lock);
    fl_free(tables);
    fl_free(parts);
    return hit;
}
