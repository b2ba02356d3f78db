/*
 * server_alter.c — the ALTER_TABLE API (1044, coordinator): protobuf in,
 * coordinator_alter.h, and the changed table pushed to the tablet
 * servers (new properties, or a new latest schema id whose schemas the
 * data path then reads batches and values with).
 *
 * Runs on the coordinator's worker with the catalog lock held
 * (server_dispatch.c): it writes the metadata store.
 */
#include "common_alloc.h"
#include "coordinator_alter.h"
#include "server_authz.h"
#include "server_coordinator.h"
#include "server_node.h"

static void fl_alter_columns_of(fl_alter_column_t *out, Fluss__PbAddColumn **add, size_t n) {
    for (size_t i = 0; i < n; i++)
        out[i] = (fl_alter_column_t){.name = add[i]->column_name,
                                     .type_json = add[i]->data_type_json.data,
                                     .type_json_len = add[i]->data_type_json.len,
                                     .comment = add[i]->comment,
                                     .has_position = true,
                                     .position = add[i]->column_position_type};
}

FL_API_HANDLER(fl_api_alter_table) {
    const Fluss__AlterTableRequest *req = (const Fluss__AlterTableRequest *)m;
    if (!req->table_path || !req->table_path->database_name || !req->table_path->table_name)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE, "the request has no table path");
    if (fl_authz_require_table(FL_AUTHZ(ctx), ctx, FL_ACL_OP_ALTER,
                               req->table_path->database_name, req->table_path->table_name, err))
        return err->code;
    size_t nc = req->n_config_changes, na = req->n_add_columns, nd = req->n_drop_columns,
           nr = req->n_rename_columns, nm = req->n_modify_columns;
    fl_alter_config_t *configs = fl_calloc(nc ? nc : 1, sizeof(*configs));
    fl_alter_column_t *cols = fl_calloc(na + nd + nr + nm + 1, sizeof(*cols));
    for (size_t i = 0; i < nc; i++)
        configs[i] = (fl_alter_config_t){req->config_changes[i]->config_key,
                                         req->config_changes[i]->config_value,
                                         req->config_changes[i]->op_type};
    fl_alter_column_t *add = cols, *drop = add + na, *rename = drop + nd, *modify = rename + nr;
    fl_alter_columns_of(add, req->add_columns, na);
    for (size_t i = 0; i < nd; i++) drop[i].name = req->drop_columns[i]->column_name;
    for (size_t i = 0; i < nr; i++) {
        rename[i].name = req->rename_columns[i]->old_column_name;
        rename[i].new_name = req->rename_columns[i]->new_column_name;
    }
    for (size_t i = 0; i < nm; i++) {
        const Fluss__PbModifyColumn *c = req->modify_columns[i];
        modify[i] = (fl_alter_column_t){
            .name = c->column_name,
            .type_json = c->has_data_type_json ? c->data_type_json.data : NULL,
            .type_json_len = c->has_data_type_json ? c->data_type_json.len : 0,
            .comment = c->comment,
            .has_position = c->has_column_position_type,
            .position = c->column_position_type};
    }
    fl_alter_table_req_t ar = {
        .database = req->table_path->database_name, .table = req->table_path->table_name,
        .ignore_if_not_exists = req->ignore_if_not_exists,
        .configs = configs, .n_configs = nc,
        .add = add, .n_add = na, .drop = drop, .n_drop = nd,
        .rename = rename, .n_rename = nr, .modify = modify, .n_modify = nm};
    fl_alter_outcome_t outcome;
    int rc = fl_catalog_alter_table(&ctx->cs->catalog, &ar, &outcome, err);
    fl_free(configs);
    fl_free(cols);
    if (rc) return rc;
    if (outcome != FL_ALTER_NOTHING) {
        fl_metastore_t *ms = ctx->cs->catalog.ms;
        const fl_ms_table_t *t = ms->ops->table_get(ms, ar.database, ar.table);
        if (t) fl_coordinator_server_table_changed(ctx->cs, t->table_id);
    }
    Fluss__AlterTableResponse resp = FLUSS__ALTER_TABLE_RESPONSE__INIT;
    fl_server_reply(out, ctx->request_id, &resp.base);
    return 0;
}
