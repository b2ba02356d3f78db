/*
 * server_metadata.c — GET_METADATA: the coordinator, every tablet server,
 * and for each requested table its id, schema id, descriptor JSON, times
 * and bucket → leader/replica assignment. Hosts and ports are the
 * endpoints this process advertises for each role.
 */
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "server_authz.h"
#include "server_coordinator.h"
#include "server_node.h"
#include "server_pb_metadata.h"
#include "server_tablet.h"

static void fl_node_of(const fl_endpoint_t *e, Fluss__PbServerNode *n) {
    Fluss__PbServerNode init = FLUSS__PB_SERVER_NODE__INIT;
    *n = init;
    n->node_id = e->id;
    n->host = (char *)e->host;
    n->port = e->port;
}

FL_API_HANDLER(fl_api_get_metadata) {
    int32_t rid = ctx->request_id;
    const Fluss__MetadataRequest *req = (const Fluss__MetadataRequest *)m;
    fl_coordinator_server_t *cs = ctx->cs;
    fl_catalog_t *cat = &cs->catalog;
    int rc = 0;

    /* the partitions asked for, by path or by id */
    /* what the caller may not DESCRIBE is left out, silently */
    fl_authz_t *az = FL_AUTHZ(ctx);
    bool checked = az && !ctx->who.trusted;
    size_t nq = req->n_partitions_path + req->n_partitions_id, q = 0;
    const fl_ms_table_t **ptables = fl_calloc(nq ? nq : 1, sizeof(*ptables));
    const fl_ms_partition_t **parts = fl_calloc(nq ? nq : 1, sizeof(*parts));
    for (size_t i = 0; i < req->n_partitions_path; i++) {
        const Fluss__PbPhysicalTablePath *p = req->partitions_path[i];
        if (checked && !fl_authz_allowed_table(az, ctx, FL_ACL_OP_DESCRIBE, p->database_name,
                                               p->table_name))
            continue;
        const fl_ms_table_t *t = cat->ms->ops->table_get(cat->ms, p->database_name, p->table_name);
        const fl_ms_partition_t *part =
            t && p->partition_name ? fl_ms_table_partition(t, 0, p->partition_name) : NULL;
        if (!part) {
            fl_free(ptables);
            fl_free(parts);
            return fl_err_set(err, FLUSS_ERR_PARTITION_NOT_EXISTS,
                              "Table partition '%s.%s(p=%s)' does not exist.", p->database_name,
                              p->table_name, p->partition_name ? p->partition_name : "");
        }
        ptables[q] = t;
        parts[q++] = part;
    }
    for (size_t i = 0; i < req->n_partitions_id; i++) {
        const fl_ms_partition_t *part = NULL;
        const fl_ms_table_t *t = NULL;
        for (size_t k = 0; k < cat->ms->ops->table_count(cat->ms) && !part; k++) {
            t = cat->ms->ops->table_at(cat->ms, k);
            if (checked &&
                !fl_authz_allowed_table(az, ctx, FL_ACL_OP_DESCRIBE, t->database, t->name))
                continue;
            part = fl_ms_table_partition(t, req->partitions_id[i], NULL);
        }
        if (!part) {
            fl_free(ptables);
            fl_free(parts);
            if (checked)
                return fl_err_set(err, FLUSS_ERR_PARTITION_NOT_EXISTS,
                                  "The partition id '%lld' does not exist or you don't have "
                                  "permission to access it.",
                                  (long long)req->partitions_id[i]);
            return fl_err_set(err, FLUSS_ERR_PARTITION_NOT_EXISTS,
                              "Partition with id %lld does not exist.",
                              (long long)req->partitions_id[i]);
        }
        ptables[q] = t;
        parts[q++] = part;
    }
    nq = q;

    Fluss__PbServerNode coord;
    fl_node_of(&cs->self, &coord);
    fl_endpoint_t eps[FL_CATALOG_TABLET_SERVERS_MAX];
    size_t tablet_count = fl_push_tablets(cs->push, eps, FL_CATALOG_TABLET_SERVERS_MAX);
    Fluss__PbServerNode tablets[FL_CATALOG_TABLET_SERVERS_MAX];
    Fluss__PbServerNode *tablet_ptrs[FL_CATALOG_TABLET_SERVERS_MAX];
    for (size_t i = 0; i < tablet_count; i++) {
        fl_node_of(&eps[i], &tablets[i]);
        tablet_ptrs[i] = &tablets[i];
    }

    size_t nt = req->n_table_path;
    Fluss__PbTableMetadata *tms = fl_calloc(nt ? nt : 1, sizeof(*tms));
    Fluss__PbTableMetadata **tm_ptrs = fl_calloc(nt ? nt : 1, sizeof(*tm_ptrs));
    Fluss__PbTablePath *paths = fl_calloc(nt ? nt : 1, sizeof(*paths));
    Fluss__PbBucketMetadata **bucket_blocks = fl_calloc(nt ? nt : 1, sizeof(*bucket_blocks));
    Fluss__PbBucketMetadata ***bucket_ptr_blocks = fl_calloc(nt ? nt : 1, sizeof(*bucket_ptr_blocks));
    char **shown = fl_calloc(nt ? nt : 1, sizeof(*shown)); /* lake tables' descriptors */
    size_t shown_tables = 0;
    for (size_t i = 0; i < nt; i++) {
        const Fluss__PbTablePath *p = req->table_path[i];
        if (checked && !fl_authz_allowed_table(az, ctx, FL_ACL_OP_DESCRIBE, p->database_name,
                                               p->table_name))
            continue;
        const fl_ms_table_t *t = fl_catalog_get_table(cat, p->database_name, p->table_name, err);
        if (!t) {
            rc = err->code;
            goto done;
        }
        fl_pb_table_metadata(t, &paths[i], &tms[i], &bucket_blocks[i]);
        shown[i] = fl_lake_present_table_json(&cat->defaults.lake, t->table_json);
        if (shown[i]) {
            tms[i].table_json.data = (uint8_t *)shown[i];
            tms[i].table_json.len = strlen(shown[i]);
        }
        bucket_ptr_blocks[i] = tms[i].bucket_metadata;
        tm_ptrs[shown_tables++] = &tms[i];
    }
    Fluss__PbPartitionMetadata *pms = fl_calloc(nq ? nq : 1, sizeof(*pms));
    Fluss__PbPartitionMetadata **pm_ptrs = fl_calloc(nq ? nq : 1, sizeof(*pm_ptrs));
    Fluss__PbBucketMetadata **pblocks = fl_calloc(nq ? nq : 1, sizeof(*pblocks));
    Fluss__PbBucketMetadata ***pblock_ptrs = fl_calloc(nq ? nq : 1, sizeof(*pblock_ptrs));
    for (size_t i = 0; i < nq; i++) {
        fl_pb_partition_metadata(ptables[i]->table_id, parts[i], &pms[i], &pblocks[i]);
        pblock_ptrs[i] = pms[i].bucket_metadata;
        pm_ptrs[i] = &pms[i];
    }
    Fluss__MetadataResponse resp = FLUSS__METADATA_RESPONSE__INIT;
    resp.n_partition_metadata = nq;
    resp.partition_metadata = pm_ptrs;
    resp.coordinator_server = &coord;
    resp.n_tablet_servers = tablet_count;
    resp.tablet_servers = tablet_ptrs;
    resp.n_table_metadata = shown_tables;
    resp.table_metadata = tm_ptrs;
    fl_server_reply(out, rid, &resp.base);
    for (size_t i = 0; i < nq; i++) {
        fl_free(pblocks[i]);
        fl_free(pblock_ptrs[i]);
    }
    fl_free(pblocks);
    fl_free(pblock_ptrs);
    fl_free(pms);
    fl_free(pm_ptrs);
done:
    fl_free(ptables);
    fl_free(parts);
    for (size_t i = 0; i < nt; i++) {
        fl_free(bucket_blocks[i]);
        fl_free(bucket_ptr_blocks[i]);
        free(shown[i]);
    }
    fl_free(shown);
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
FL_API_HANDLER(fl_api_get_fs_token) {
    int32_t rid = ctx->request_id;
    (void)m;
    (void)err;
    Fluss__GetFileSystemSecurityTokenResponse resp = FLUSS__GET_FILE_SYSTEM_SECURITY_TOKEN_RESPONSE__INIT;
    resp.schema = "file";
    resp.token.len = 0;
    resp.token.data = NULL;
    fl_server_reply(out, rid, &resp.base);
    return 0;
}
