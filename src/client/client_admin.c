/*
 * client_admin.c — libfluss client handle and the admin API of fluss.h:
 * bootstrap through GET_METADATA, then every admin call to the
 * coordinator.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client_conn.h"
#include "common_alloc.h"
#include "common_buf.h"
#include "fluss.h"
#include "fluss_api.pb-c.h"
#include "proto_api.h"
#include "types_table.h"

struct fluss_client {
    fl_client_conn_t coord;
    int timeout_ms;
};

static int fl_fail(fluss_error_t *out, const fl_error_t *in, int code) {
    if (out) {
        out->code = code;
        snprintf(out->message, sizeof(out->message), "%s",
                 in->msg[0] ? in->msg : fl_err_default_message(code));
    }
    return code;
}

const char *fluss_error_name(int code) { return fl_err_name(code); }

void fluss_strings_free(char **strings) {
    if (!strings) return;
    for (size_t i = 0; strings[i]; i++) fl_free(strings[i]);
    fl_free(strings);
}

static char **fl_strings_new(size_t n) { return fl_calloc(n + 1, sizeof(char *)); }

int fluss_client_new(const char *bootstrap, int timeout_ms, fluss_client_t **out,
                     fluss_error_t *e) {
    fluss_client_opts_t o = {.timeout_ms = timeout_ms};
    return fluss_client_open(bootstrap, &o, out, e);
}

/* opts' security settings as a connection's. */
static int fl_client_auth_from(const fluss_client_opts_t *o, fl_client_auth_t *a,
                               fl_error_t *err) {
    memset(a, 0, sizeof(*a));
    if (!o || !o->security_protocol || !*o->security_protocol ||
        strcasecmp(o->security_protocol, "PLAINTEXT") == 0)
        return 0;
    bool sasl = strcasecmp(o->security_protocol, "SASL") == 0 ||
                strcasecmp(o->security_protocol, "SASL_SSL") == 0;
    a->tls = strcasecmp(o->security_protocol, "SSL") == 0 ||
             strcasecmp(o->security_protocol, "SASL_SSL") == 0;
    if (!sasl && !a->tls)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "client.security.protocol '%s' is not supported (PLAINTEXT, SASL, SSL, "
                          "SASL_SSL)", o->security_protocol);
    if (a->tls) {
        if (!o->ssl_ca_file || !*o->ssl_ca_file)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "%s needs ssl_ca_file (the CA of the server's certificate)",
                              o->security_protocol);
        if (!o->ssl_cert_file != !o->ssl_key_file)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "a client certificate needs both ssl_cert_file and ssl_key_file");
        if (strlen(o->ssl_ca_file) >= sizeof(a->ca_file) ||
            (o->ssl_cert_file && strlen(o->ssl_cert_file) >= sizeof(a->cert_file)) ||
            (o->ssl_key_file && strlen(o->ssl_key_file) >= sizeof(a->key_file)))
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "TLS file name too long");
        snprintf(a->ca_file, sizeof(a->ca_file), "%s", o->ssl_ca_file);
        snprintf(a->cert_file, sizeof(a->cert_file), "%s", o->ssl_cert_file ? o->ssl_cert_file : "");
        snprintf(a->key_file, sizeof(a->key_file), "%s", o->ssl_key_file ? o->ssl_key_file : "");
    }
    if (!sasl) return 0;
    const char *mech = o->sasl_mechanism && *o->sasl_mechanism ? o->sasl_mechanism : "PLAIN";
    if (!o->sasl_username || !o->sasl_password)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "SASL needs client.security.sasl.username and .password");
    if (strlen(mech) >= sizeof(a->mechanism) || strlen(o->sasl_username) >= sizeof(a->username) ||
        strlen(o->sasl_password) >= sizeof(a->password))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "SASL mechanism, username or password too long (255 bytes at most)");
    snprintf(a->mechanism, sizeof(a->mechanism), "%s", mech);
    snprintf(a->username, sizeof(a->username), "%s", o->sasl_username);
    snprintf(a->password, sizeof(a->password), "%s", o->sasl_password);
    return 0;
}

int fluss_client_open(const char *bootstrap, const fluss_client_opts_t *opts,
                      fluss_client_t **out, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    int timeout_ms = opts ? opts->timeout_ms : 0;
    fl_client_auth_t auth;
    int rc = fl_client_auth_from(opts, &auth, &err);
    if (rc) return fl_fail(e, &err, rc);
    char host[256];
    int port;
    rc = fl_client_parse_hostport(bootstrap, host, sizeof(host), &port, &err);
    if (rc) return fl_fail(e, &err, rc);
    fl_client_conn_t boot;
    if ((rc = fl_client_conn_open(&boot, host, port, timeout_ms, &auth, &err)))
        return fl_fail(e, &err, rc);
    Fluss__MetadataRequest mreq = FLUSS__METADATA_REQUEST__INIT;
    ProtobufCMessage *resp = NULL;
    rc = fl_client_conn_call(&boot, FL_API_GET_METADATA, &mreq.base,
                             &fluss__metadata_response__descriptor, &resp, &err);
    if (rc) {
        fl_client_conn_close(&boot);
        return fl_fail(e, &err, rc);
    }
    Fluss__MetadataResponse *md = (Fluss__MetadataResponse *)resp;
    fluss_client_t *c = fl_calloc(1, sizeof(*c));
    c->timeout_ms = timeout_ms;
    if (md->coordinator_server && boot.server_type != 1) {
        rc = fl_client_conn_open(&c->coord, md->coordinator_server->host,
                                 md->coordinator_server->port, timeout_ms, &auth, &err);
        fl_client_conn_close(&boot);
    } else if (!md->coordinator_server) {
        rc = fl_err_set(&err, FLUSS_ERR__STATE, "the cluster has no coordinator");
        fl_client_conn_close(&boot);
    } else {
        c->coord = boot;
    }
    protobuf_c_message_free_unpacked(resp, NULL);
    if (rc) {
        fl_free(c);
        return fl_fail(e, &err, rc);
    }
    *out = c;
    return 0;
}

void fluss_client_destroy(fluss_client_t *c) {
    if (!c) return;
    fl_client_conn_close(&c->coord);
    fl_free(c);
}

/* For client_table.c (declared in client_table.h): the coordinator
 * connection and the per-call timeout, borrowed. */
fl_client_conn_t *fl_client_coordinator(fluss_client_t *c, int *timeout_ms) {
    *timeout_ms = c->timeout_ms;
    return &c->coord;
}

#define FL_CALL(c, key, req, desc, resp, err) \
    fl_client_conn_call(&(c)->coord, (key), &(req).base, (desc), (ProtobufCMessage **)(resp), (err))

/* ---- databases ---- */

int fluss_database_create(fluss_client_t *c, const char *name, const char *comment,
                          const char *const *custom_properties, bool ignore_if_exists,
                          fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    json_t *j = json_object();
    json_object_set_new(j, "version", json_integer(1));
    if (comment) json_object_set_new(j, "comment", json_string(comment));
    json_t *props = json_object();
    for (size_t i = 0; custom_properties && custom_properties[i]; i++) {
        const char *eq = strchr(custom_properties[i], '=');
        if (!eq) {
            json_decref(props);
            json_decref(j);
            fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "expected key=value, got '%s'",
                       custom_properties[i]);
            return fl_fail(e, &err, FLUSS_ERR__INVALID_ARG);
        }
        char *k = fl_strndup(custom_properties[i], (size_t)(eq - custom_properties[i]));
        json_object_set_new(props, k, json_string(eq + 1));
        fl_free(k);
    }
    json_object_set_new(j, "custom_properties", props);
    char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    Fluss__CreateDatabaseRequest req = FLUSS__CREATE_DATABASE_REQUEST__INIT;
    req.database_name = (char *)name;
    req.ignore_if_exists = ignore_if_exists;
    req.has_database_json = 1;
    req.database_json.data = (uint8_t *)text;
    req.database_json.len = strlen(text);
    ProtobufCMessage *resp = NULL;
    int rc = FL_CALL(c, FL_API_CREATE_DATABASE, req, &fluss__create_database_response__descriptor,
                     &resp, &err);
    free(text);
    if (resp) protobuf_c_message_free_unpacked(resp, NULL);
    return rc ? fl_fail(e, &err, rc) : 0;
}

int fluss_database_drop(fluss_client_t *c, const char *name, bool ignore_if_not_exists,
                        bool cascade, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    Fluss__DropDatabaseRequest req = FLUSS__DROP_DATABASE_REQUEST__INIT;
    req.database_name = (char *)name;
    req.ignore_if_not_exists = ignore_if_not_exists;
    req.cascade = cascade;
    ProtobufCMessage *resp = NULL;
    int rc = FL_CALL(c, FL_API_DROP_DATABASE, req, &fluss__drop_database_response__descriptor,
                     &resp, &err);
    if (resp) protobuf_c_message_free_unpacked(resp, NULL);
    return rc ? fl_fail(e, &err, rc) : 0;
}

int fluss_database_list(fluss_client_t *c, char ***names, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    Fluss__ListDatabasesRequest req = FLUSS__LIST_DATABASES_REQUEST__INIT;
    Fluss__ListDatabasesResponse *resp = NULL;
    int rc = FL_CALL(c, FL_API_LIST_DATABASES, req, &fluss__list_databases_response__descriptor,
                     &resp, &err);
    if (rc) return fl_fail(e, &err, rc);
    char **out = fl_strings_new(resp->n_database_name);
    for (size_t i = 0; i < resp->n_database_name; i++) out[i] = fl_strdup(resp->database_name[i]);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    *names = out;
    return 0;
}

int fluss_database_exists(fluss_client_t *c, const char *name, bool *exists, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    Fluss__DatabaseExistsRequest req = FLUSS__DATABASE_EXISTS_REQUEST__INIT;
    req.database_name = (char *)name;
    Fluss__DatabaseExistsResponse *resp = NULL;
    int rc = FL_CALL(c, FL_API_DATABASE_EXISTS, req, &fluss__database_exists_response__descriptor,
                     &resp, &err);
    if (rc) return fl_fail(e, &err, rc);
    *exists = resp->exists;
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return 0;
}

static char **fl_props_strings(const fl_kvlist_t *l) {
    char **out = fl_strings_new(l->count);
    for (size_t i = 0; i < l->count; i++) {
        size_t n = strlen(l->items[i].key) + strlen(l->items[i].value) + 2;
        out[i] = fl_malloc(n);
        snprintf(out[i], n, "%s=%s", l->items[i].key, l->items[i].value);
    }
    return out;
}

static char **fl_names_strings(const fl_strlist_t *l) {
    char **out = fl_strings_new(l->count);
    for (size_t i = 0; i < l->count; i++) out[i] = fl_strdup(l->items[i]);
    return out;
}

int fluss_database_info(fluss_client_t *c, const char *name, fluss_database_info_t **out,
                        fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    Fluss__GetDatabaseInfoRequest req = FLUSS__GET_DATABASE_INFO_REQUEST__INIT;
    req.database_name = (char *)name;
    Fluss__GetDatabaseInfoResponse *resp = NULL;
    int rc = FL_CALL(c, FL_API_GET_DATABASE_INFO, req,
                     &fluss__get_database_info_response__descriptor, &resp, &err);
    if (rc) return fl_fail(e, &err, rc);
    fl_database_desc_t d;
    rc = fl_database_desc_from_bytes(resp->database_json.data, resp->database_json.len, &d, &err);
    if (rc) {
        protobuf_c_message_free_unpacked(&resp->base, NULL);
        return fl_fail(e, &err, rc);
    }
    fluss_database_info_t *info = fl_calloc(1, sizeof(*info));
    info->name = fl_strdup(name);
    info->comment = d.comment ? fl_strdup(d.comment) : NULL;
    info->custom_properties = fl_props_strings(&d.custom_properties);
    info->created_time_ms = resp->created_time;
    info->modified_time_ms = resp->modified_time;
    fl_database_desc_free(&d);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    *out = info;
    return 0;
}

void fluss_database_info_free(fluss_database_info_t *info) {
    if (!info) return;
    fl_free(info->name);
    fl_free(info->comment);
    fluss_strings_free(info->custom_properties);
    fl_free(info);
}

/* ---- tables ---- */

static Fluss__PbTablePath fl_path(const char *db, const char *table) {
    Fluss__PbTablePath p = FLUSS__PB_TABLE_PATH__INIT;
    p.database_name = (char *)db;
    p.table_name = (char *)table;
    return p;
}

int fluss_table_create(fluss_client_t *c, const char *database, const char *table,
                       const fluss_table_spec_t *spec, bool ignore_if_exists, fluss_error_t *e) {
    char *json = fluss_table_spec_to_json(spec, e);
    if (!json) return e ? e->code : FLUSS_ERR__INVALID_ARG;
    fl_error_t err;
    fl_err_clear(&err);
    Fluss__PbTablePath path = fl_path(database, table);
    Fluss__CreateTableRequest req = FLUSS__CREATE_TABLE_REQUEST__INIT;
    req.table_path = &path;
    req.table_json.data = (uint8_t *)json;
    req.table_json.len = strlen(json);
    req.ignore_if_exists = ignore_if_exists;
    ProtobufCMessage *resp = NULL;
    int rc = FL_CALL(c, FL_API_CREATE_TABLE, req, &fluss__create_table_response__descriptor, &resp,
                     &err);
    free(json);
    if (resp) protobuf_c_message_free_unpacked(resp, NULL);
    return rc ? fl_fail(e, &err, rc) : 0;
}

int fluss_table_drop(fluss_client_t *c, const char *database, const char *table,
                     bool ignore_if_not_exists, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    Fluss__PbTablePath path = fl_path(database, table);
    Fluss__DropTableRequest req = FLUSS__DROP_TABLE_REQUEST__INIT;
    req.table_path = &path;
    req.ignore_if_not_exists = ignore_if_not_exists;
    ProtobufCMessage *resp = NULL;
    int rc = FL_CALL(c, FL_API_DROP_TABLE, req, &fluss__drop_table_response__descriptor, &resp,
                     &err);
    if (resp) protobuf_c_message_free_unpacked(resp, NULL);
    return rc ? fl_fail(e, &err, rc) : 0;
}

int fluss_table_list(fluss_client_t *c, const char *database, char ***names, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    Fluss__ListTablesRequest req = FLUSS__LIST_TABLES_REQUEST__INIT;
    req.database_name = (char *)database;
    Fluss__ListTablesResponse *resp = NULL;
    int rc = FL_CALL(c, FL_API_LIST_TABLES, req, &fluss__list_tables_response__descriptor, &resp,
                     &err);
    if (rc) return fl_fail(e, &err, rc);
    char **out = fl_strings_new(resp->n_table_name);
    for (size_t i = 0; i < resp->n_table_name; i++) out[i] = fl_strdup(resp->table_name[i]);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    *names = out;
    return 0;
}

int fluss_table_exists(fluss_client_t *c, const char *database, const char *table, bool *exists,
                       fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    Fluss__PbTablePath path = fl_path(database, table);
    Fluss__TableExistsRequest req = FLUSS__TABLE_EXISTS_REQUEST__INIT;
    req.table_path = &path;
    Fluss__TableExistsResponse *resp = NULL;
    int rc = FL_CALL(c, FL_API_TABLE_EXISTS, req, &fluss__table_exists_response__descriptor,
                     &resp, &err);
    if (rc) return fl_fail(e, &err, rc);
    *exists = resp->exists;
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return 0;
}

static char *fl_schema_text(const fl_schema_t *s) {
    fl_buf_t b;
    fl_buf_init(&b);
    for (size_t i = 0; i < s->column_count; i++) {
        if (i) fl_buf_append(&b, ", ", 2);
        fl_buf_append(&b, s->columns[i].name, strlen(s->columns[i].name));
        fl_buf_put_u8(&b, ' ');
        fl_datatype_format(s->columns[i].type, &b);
        if (s->columns[i].comment) {
            fl_buf_append(&b, " COMMENT '", 10);
            fl_buf_append(&b, s->columns[i].comment, strlen(s->columns[i].comment));
            fl_buf_put_u8(&b, '\'');
        }
    }
    fl_buf_put_u8(&b, '\0');
    return (char *)b.data;
}

int fluss_table_info(fluss_client_t *c, const char *database, const char *table,
                     fluss_table_info_t **out, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    Fluss__PbTablePath path = fl_path(database, table);
    Fluss__GetTableInfoRequest req = FLUSS__GET_TABLE_INFO_REQUEST__INIT;
    req.table_path = &path;
    Fluss__GetTableInfoResponse *resp = NULL;
    int rc = FL_CALL(c, FL_API_GET_TABLE_INFO, req, &fluss__get_table_info_response__descriptor,
                     &resp, &err);
    if (rc) return fl_fail(e, &err, rc);
    fl_table_desc_t d;
    rc = fl_table_desc_from_bytes(resp->table_json.data, resp->table_json.len, &d, &err);
    if (rc) {
        protobuf_c_message_free_unpacked(&resp->base, NULL);
        return fl_fail(e, &err, FLUSS_ERR__CORRUPT);
    }
    fluss_table_info_t *info = fl_calloc(1, sizeof(*info));
    info->database = fl_strdup(database);
    info->name = fl_strdup(table);
    info->table_id = resp->table_id;
    info->schema_id = resp->schema_id;
    info->bucket_count = d.bucket_count;
    info->schema = fl_schema_text(&d.schema);
    info->primary_key = fl_names_strings(&d.schema.primary_key);
    info->bucket_keys = fl_names_strings(&d.bucket_keys);
    info->partition_keys = fl_names_strings(&d.partition_keys);
    info->comment = d.comment ? fl_strdup(d.comment) : NULL;
    info->properties = fl_props_strings(&d.properties);
    info->custom_properties = fl_props_strings(&d.custom_properties);
    info->descriptor_json = fl_strndup((const char *)resp->table_json.data, resp->table_json.len);
    info->created_time_ms = resp->created_time;
    info->modified_time_ms = resp->modified_time;
    fl_table_desc_free(&d);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    *out = info;
    return 0;
}

void fluss_table_info_free(fluss_table_info_t *info) {
    if (!info) return;
    fl_free(info->database);
    fl_free(info->name);
    fl_free(info->schema);
    fluss_strings_free(info->primary_key);
    fluss_strings_free(info->bucket_keys);
    fluss_strings_free(info->partition_keys);
    fl_free(info->comment);
    fluss_strings_free(info->properties);
    fluss_strings_free(info->custom_properties);
    fl_free(info->descriptor_json);
    fl_free(info);
}

/* ---- the lake tier ---- */

int fluss_lake_snapshot_get(fluss_client_t *c, const char *database, const char *table,
                            fluss_lake_snapshot_t **out, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    Fluss__PbTablePath path = fl_path(database, table);
    Fluss__GetLakeSnapshotRequest req = FLUSS__GET_LAKE_SNAPSHOT_REQUEST__INIT;
    req.table_path = &path;
    Fluss__GetLakeSnapshotResponse *resp = NULL;
    int rc = FL_CALL(c, FL_API_GET_LAKE_SNAPSHOT, req,
                     &fluss__get_lake_snapshot_response__descriptor, &resp, &err);
    if (rc) return fl_fail(e, &err, rc);
    fluss_lake_snapshot_t *s = fl_calloc(1, sizeof(*s));
    s->table_id = resp->table_id;
    s->snapshot_id = resp->snapshotid;
    s->bucket_count = resp->n_bucket_snapshots;
    s->buckets = fl_calloc(s->bucket_count ? s->bucket_count : 1, sizeof(*s->buckets));
    for (size_t i = 0; i < s->bucket_count; i++) {
        const Fluss__PbLakeSnapshotForBucket *b = resp->bucket_snapshots[i];
        fluss_lake_bucket_t *o = &s->buckets[i];
        o->partition_id = b->has_partition_id ? b->partition_id : -1;
        o->partition_name = b->partition_name ? fl_strdup(b->partition_name) : NULL;
        o->bucket = b->bucket_id;
        o->offset = b->has_log_offset ? b->log_offset : -1;
    }
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    *out = s;
    return 0;
}

void fluss_lake_snapshot_free(fluss_lake_snapshot_t *s) {
    if (!s) return;
    for (size_t i = 0; i < s->bucket_count; i++) fl_free(s->buckets[i].partition_name);
    fl_free(s->buckets);
    fl_free(s);
}

int fluss_lake_tier_now(fluss_client_t *c, const char *database, const char *table,
                        int64_t *snapshot_id, int64_t *added, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    Fluss__PbTablePath path = fl_path(database, table);
    Fluss__LakeTierNowRequest req = FLUSS__LAKE_TIER_NOW_REQUEST__INIT;
    req.table_path = &path;
    Fluss__LakeTierNowResponse *resp = NULL;
    int rc = FL_CALL(c, FL_API_LAKE_TIER_NOW, req, &fluss__lake_tier_now_response__descriptor,
                     &resp, &err);
    if (rc) return fl_fail(e, &err, rc);
    *snapshot_id = resp->has_snapshot_id ? resp->snapshot_id : -1;
    *added = resp->has_added_records ? resp->added_records : 0;
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return 0;
}
