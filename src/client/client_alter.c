/*
 * client_alter.c — ALTER_TABLE from libfluss (fluss.h fluss_table_alter;
 * Fluss's Admin#alterTable and ClientRpcMessageUtils#toPbAlterConfigs /
 * #toPbAddColumn): options set (PbAlterConfig op SET = 0) and reset
 * (DELETE = 1), columns added at the end (column_position_type LAST = 0,
 * the only position 0.9.1 accepts) with their type as DataTypeJsonSerde
 * JSON. Thread rule: like every admin call (the client's coordinator
 * connection).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "client_table.h"
#include "common_alloc.h"
#include "fluss_api.pb-c.h"
#include "proto_api.h"

#define FL_ALTER_OP_SET 0
#define FL_ALTER_OP_DELETE 1
#define FL_ALTER_POSITION_LAST 0

/* Adds the PbAddColumn of one "name TYPE [NOT NULL] [COMMENT '...']". */
static int fl_alter_add_column(const char *text, Fluss__PbAddColumn *out, fl_schema_t *keep,
                               fl_error_t *err) {
    size_t before = keep->column_count;
    int rc = fl_client_parse_columns(text, keep, err);
    if (rc) return rc;
    if (keep->column_count != before + 1)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "--add-column takes one column, got '%s'",
                          text);
    const fl_column_t *c = &keep->columns[before];
    fluss__pb_add_column__init(out);
    out->column_name = c->name;
    json_t *j = fl_datatype_to_json(c->type);
    char *json = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    out->data_type_json.data = (uint8_t *)json;
    out->data_type_json.len = strlen(json);
    out->comment = c->comment;
    out->column_position_type = FL_ALTER_POSITION_LAST;
    return 0;
}

int fluss_table_alter(fluss_client_t *c, const char *database, const char *table,
                      const fluss_table_change_t *changes, size_t n, bool ignore_if_not_exists,
                      fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    Fluss__PbAlterConfig *cfg = fl_calloc(n ? n : 1, sizeof(*cfg));
    Fluss__PbAlterConfig **cfgp = fl_calloc(n ? n : 1, sizeof(*cfgp));
    Fluss__PbAddColumn *add = fl_calloc(n ? n : 1, sizeof(*add));
    Fluss__PbAddColumn **addp = fl_calloc(n ? n : 1, sizeof(*addp));
    fl_schema_t cols;
    memset(&cols, 0, sizeof(cols));
    size_t ncfg = 0, nadd = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const fluss_table_change_t *ch = &changes[i];
        switch (ch->kind) {
        case FLUSS_TABLE_SET_OPTION:
        case FLUSS_TABLE_RESET_OPTION:
            if (!ch->key || !*ch->key || (ch->kind == FLUSS_TABLE_SET_OPTION && !ch->value)) {
                rc = fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "change %zu: an option needs a key%s",
                                i, ch->kind == FLUSS_TABLE_SET_OPTION ? " and a value" : "");
                break;
            }
            fluss__pb_alter_config__init(&cfg[ncfg]);
            cfg[ncfg].config_key = (char *)ch->key;
            cfg[ncfg].config_value = ch->kind == FLUSS_TABLE_SET_OPTION ? (char *)ch->value : NULL;
            cfg[ncfg].op_type = ch->kind == FLUSS_TABLE_SET_OPTION ? FL_ALTER_OP_SET : FL_ALTER_OP_DELETE;
            cfgp[ncfg] = &cfg[ncfg];
            ncfg++;
            break;
        case FLUSS_TABLE_ADD_COLUMN:
            if (!ch->column) {
                rc = fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "change %zu: no column", i);
                break;
            }
            rc = fl_alter_add_column(ch->column, &add[nadd], &cols, &err);
            if (!rc) addp[nadd] = &add[nadd], nadd++;
            break;
        default: rc = fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "change %zu: unknown kind", i);
        }
    }
    if (!rc) {
        Fluss__PbTablePath path = FLUSS__PB_TABLE_PATH__INIT;
        path.database_name = (char *)database;
        path.table_name = (char *)table;
        Fluss__AlterTableRequest req = FLUSS__ALTER_TABLE_REQUEST__INIT;
        req.table_path = &path;
        req.ignore_if_not_exists = ignore_if_not_exists;
        req.n_config_changes = ncfg;
        req.config_changes = cfgp;
        req.n_add_columns = nadd;
        req.add_columns = addp;
        int timeout_ms;
        fl_client_conn_t *coord = fl_client_coordinator(c, &timeout_ms);
        ProtobufCMessage *resp = NULL;
        rc = fl_client_conn_call(coord, FL_API_ALTER_TABLE, &req.base,
                                 &fluss__alter_table_response__descriptor, &resp, &err);
        if (resp) protobuf_c_message_free_unpacked(resp, NULL);
    }
    for (size_t i = 0; i < nadd; i++) free(add[i].data_type_json.data);
    fl_schema_free(&cols);
    fl_free(cfg);
    fl_free(cfgp);
    fl_free(add);
    fl_free(addp);
    return rc ? fl_client_error_out(e, &err) : 0;
}
