/*
 * server_metadata.c — GET_METADATA: the coordinator, every tablet server,
 * and for each requested table its id, schema id, descriptor JSON, times
 * and bucket → leader/replica assignment. Hosts and ports are the
 * endpoints this process advertises for each role.
 */
#include <string.h>

#include "common_alloc.h"
#include "server_node.h"

static void fl_node_of(const fl_endpoint_t *e, Fluss__PbServerNode *n) {
    Fluss__PbServerNode init = FLUSS__PB_SERVER_NODE__INIT;
    *n = init;
    n->node_id = e->id;
    n->host = (char *)e->host;
    n->port = e->port;
}

int fl_api_get_metadata(fl_server_role_t *role, const ProtobufCMessage *m, int32_t rid,
                        fl_buf_t *out, fl_error_t *err) {
    const Fluss__MetadataRequest *req = (const Fluss__MetadataRequest *)m;
    fl_server_t *srv = role->server;
    fl_catalog_t *cat = &srv->catalog;
    int rc = 0;

    if (req->n_partitions_path > 0) {
        const Fluss__PbPhysicalTablePath *p = req->partitions_path[0];
        return fl_err_set(err, FLUSS_ERR_PARTITION_NOT_EXISTS,
                          "Table partition '%s.%s(p=%s)' does not exist.", p->database_name,
                          p->table_name, p->partition_name ? p->partition_name : "");
    }
    if (req->n_partitions_id > 0)
        return fl_err_set(err, FLUSS_ERR_PARTITION_NOT_EXISTS,
                          "Partition with id %lld does not exist.",
                          (long long)req->partitions_id[0]);

    Fluss__PbServerNode coord;
    fl_node_of(&srv->coordinator, &coord);
    Fluss__PbServerNode tablets[FL_CATALOG_TABLET_SERVERS_MAX];
    Fluss__PbServerNode *tablet_ptrs[FL_CATALOG_TABLET_SERVERS_MAX];
    for (size_t i = 0; i < srv->tablet_count; i++) {
        fl_node_of(&srv->tablets[i], &tablets[i]);
        tablet_ptrs[i] = &tablets[i];
    }

    size_t nt = req->n_table_path;
    Fluss__PbTableMetadata *tms = fl_calloc(nt ? nt : 1, sizeof(*tms));
    Fluss__PbTableMetadata **tm_ptrs = fl_calloc(nt ? nt : 1, sizeof(*tm_ptrs));
    Fluss__PbTablePath *paths = fl_calloc(nt ? nt : 1, sizeof(*paths));
    Fluss__PbBucketMetadata **bucket_blocks = fl_calloc(nt ? nt : 1, sizeof(*bucket_blocks));
    Fluss__PbBucketMetadata ***bucket_ptr_blocks = fl_calloc(nt ? nt : 1, sizeof(*bucket_ptr_blocks));
    for (size_t i = 0; i < nt; i++) {
        const Fluss__PbTablePath *p = req->table_path[i];
        const fl_ms_table_t *t = fl_catalog_get_table(cat, p->database_name, p->table_name, err);
        if (!t) {
            rc = err->code;
            goto done;
        }
        Fluss__PbTableMetadata tm = FLUSS__PB_TABLE_METADATA__INIT;
        Fluss__PbTablePath path = FLUSS__PB_TABLE_PATH__INIT;
        path.database_name = t->database;
        path.table_name = t->name;
        paths[i] = path;
        tm.table_path = &paths[i];
        tm.table_id = t->table_id;
        tm.schema_id = t->schema_id;
        tm.table_json.data = (uint8_t *)t->table_json;
        tm.table_json.len = strlen(t->table_json);
        tm.created_time = t->created_ms;
        tm.modified_time = t->modified_ms;
        size_t nb = (size_t)t->bucket_count;
        bucket_blocks[i] = fl_calloc(nb ? nb : 1, sizeof(Fluss__PbBucketMetadata));
        bucket_ptr_blocks[i] = fl_calloc(nb ? nb : 1, sizeof(Fluss__PbBucketMetadata *));
        for (size_t b = 0; b < nb; b++) {
            Fluss__PbBucketMetadata bm = FLUSS__PB_BUCKET_METADATA__INIT;
            bm.bucket_id = (int32_t)b;
            bm.has_leader_id = 1;
            bm.leader_id = t->buckets[b].leader;
            bm.n_replica_id = (size_t)t->buckets[b].replica_count;
            bm.replica_id = (int32_t *)t->buckets[b].replicas;
            bm.has_leader_epoch = 1;
            bm.leader_epoch = t->buckets[b].leader_epoch;
            bucket_blocks[i][b] = bm;
            bucket_ptr_blocks[i][b] = &bucket_blocks[i][b];
        }
        tm.n_bucket_metadata = nb;
        tm.bucket_metadata = bucket_ptr_blocks[i];
        tms[i] = tm;
        tm_ptrs[i] = &tms[i];
    }
    Fluss__MetadataResponse resp = FLUSS__METADATA_RESPONSE__INIT;
    resp.coordinator_server = &coord;
    resp.n_tablet_servers = srv->tablet_count;
    resp.tablet_servers = tablet_ptrs;
    resp.n_table_metadata = nt;
    resp.table_metadata = tm_ptrs;
    fl_server_reply(out, rid, &resp.base);
done:
    for (size_t i = 0; i < nt; i++) {
        fl_free(bucket_blocks[i]);
        fl_free(bucket_ptr_blocks[i]);
    }
    fl_free(bucket_blocks);
    fl_free(bucket_ptr_blocks);
    fl_free(paths);
    fl_free(tms);
    fl_free(tm_ptrs);
    return rc;
}

/* GET_FILESYSTEM_SECURITY_TOKEN: remote storage is the local file system
 * (no tiered data yet), which needs no credentials: scheme "file" and an
 * empty token, as the reference answers for a local remote.data.dir. */
int fl_api_get_fs_token(fl_server_role_t *role, const ProtobufCMessage *m, int32_t rid,
                        fl_buf_t *out, fl_error_t *err) {
    (void)role;
    (void)m;
    (void)err;
    Fluss__GetFileSystemSecurityTokenResponse resp = FLUSS__GET_FILE_SYSTEM_SECURITY_TOKEN_RESPONSE__INIT;
    resp.schema = "file";
    resp.token.len = 0;
    resp.token.data = NULL;
    fl_server_reply(out, rid, &resp.base);
    return 0;
}
