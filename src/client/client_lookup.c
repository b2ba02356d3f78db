/*
 * client_lookup.c — libfluss's lookuper for primary-key tables (fluss.h
 * fluss_lookuper_*; Fluss's Lookuper / PrefixLookuper and the client side
 * of LIMIT_SCAN). A key row becomes the compacted key encoding of the
 * primary key (or, for a prefix lookup, of the bucket key) and the bucket
 * it hashes to, as the upsert writer does; keys are grouped per bucket
 * and per leader, one request per tablet server, all sent before the
 * first answer is read. A stored value is int16 LE schema id ‖ row in the
 * table's kv format (protocol.md §5.2); a row of another schema than the
 * table handle's (ALTER TABLE) is read with that schema and placed by
 * column id (client_schemas.h). LIMIT_SCAN
 * answers a DefaultValueRecordBatch (record_value.h, bounds-checked).
 * Reads are idempotent, so a call that fails retriably (a connection the
 * server closed as idle, a leader moving) is sent again, on a new
 * connection when the old one broke, up to FL_LOOKUP_ATTEMPTS_MAX times.
 * Of a partitioned table a key names its partition by its partition-key
 * columns (resolved through GET_METADATA when first met, never created);
 * a key of a partition that does not exist is not found, as in Java's
 * PrimaryKeyLookuper.
 * Thread rule: one user at a time (the connections are the lookuper's).
 */
#include <string.h>
#include <time.h>

#include "client_partition.h"
#include "client_schemas.h"
#include "client_table.h"
#include "common_alloc.h"
#include "common_murmur.h"
#include "common_time.h"
#include "fluss_api.pb-c.h"
#include "proto_api.h"
#include "record_value.h"
#include "types_row_compacted.h"
#include "types_row_field.h"
#include "types_row_nested.h"

#define FL_LOOKUP_KEYS_MAX 1000000 /* keys in one fluss_lookuper_lookup */
#define FL_LOOKUP_ATTEMPTS_MAX 5
#define FL_LOOKUP_BACKOFF_MS 50

struct fluss_lookuper {
    fluss_table_t *t;
    fl_client_conn_t *conns; /* per node; fd < 0 until used */
    fl_buf_t key;
    fl_parts_t parts;
    fl_schemas_t schemas; /* rows written under other schemas */
    fl_buf_t pname;
};

int fluss_lookuper_new(fluss_table_t *t, fluss_lookuper_t **out, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    if (t->pk_count == 0) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "%s.%s has no primary key", t->database, t->name);
        return fl_client_error_out(e, &err);
    }
    fluss_lookuper_t *l = fl_calloc(1, sizeof(*l));
    l->t = t;
    l->conns = fl_calloc(t->node_count ? t->node_count : 1, sizeof(fl_client_conn_t));
    for (size_t i = 0; i < t->node_count; i++) l->conns[i].fd = -1;
    fl_buf_init(&l->key);
    fl_buf_init(&l->pname);
    fl_parts_init(&l->parts, t);
    fl_schemas_init(&l->schemas, t);
    *out = l;
    return 0;
}

void fluss_lookuper_destroy(fluss_lookuper_t *l) {
    if (!l) return;
    for (size_t i = 0; i < l->t->node_count; i++) fl_client_conn_close(&l->conns[i]);
    fl_free(l->conns);
    fl_buf_free(&l->key);
    fl_buf_free(&l->pname);
    fl_parts_free(&l->parts);
    fl_schemas_free(&l->schemas);
    fl_free(l);
}

void fluss_rows_free(fluss_row_t **rows, size_t count) {
    if (!rows) return;
    for (size_t i = 0; i < count; i++) fluss_row_destroy(rows[i]);
    fl_free(rows);
}

/* After attempt (0-based) failed with rc: whether to try again (then
 * after a pause from the second retry on: a broken connection is usually
 * fixed at once by a new one, a moving leader takes longer). */
static bool fl_lookup_again(int rc, int attempt) {
    if (!fl_client_retriable(rc) || attempt + 1 >= FL_LOOKUP_ATTEMPTS_MAX) return false;
    if (attempt > 0) {
        struct timespec ts = {0, (long)FL_LOOKUP_BACKOFF_MS * attempt * 1000000L};
        nanosleep(&ts, NULL);
    }
    return true;
}

/* The partition index of a key row (0 without partitions); *missing
 * when the partition does not exist. */
static int fl_lookup_part(fluss_lookuper_t *l, const fl_row_t *row, size_t *part, bool *missing,
                          fl_error_t *err) {
    const fluss_table_t *t = l->t;
    *part = 0;
    *missing = false;
    if (t->part_count == 0) return 0;
    int rc = fl_partition_name_of_row(t->types, row, t->part_cols, t->part_count, &l->pname, err);
    if (!rc) rc = fl_parts_by_name(&l->parts, (const char *)l->pname.data, false, part, err);
    if (rc == FLUSS_ERR_PARTITION_NOT_EXISTS) {
        fl_err_clear(err);
        *missing = true;
        return 0;
    }
    return rc;
}

/* The connection to the leader of (partition index, bucket) (opened if
 * needed) and its node. */
static fl_client_conn_t *fl_lookup_conn(fluss_lookuper_t *l, size_t part, int32_t bucket,
                                        int *node, fl_error_t *err) {
    const fluss_table_t *t = l->t;
    if (bucket < 0 || bucket >= t->bucket_count) {
        fl_err_set(err, FLUSS_ERR__INVALID_ARG, "bucket %d out of range [0, %d)", bucket,
                   t->bucket_count);
        return NULL;
    }
    *node = fl_parts_leader(&l->parts, part, bucket);
    if (*node < 0) {
        fl_err_set(err, FLUSS_ERR_LEADER_NOT_AVAILABLE_EXCEPTION, "bucket %d of %s.%s has no leader",
                   bucket, t->database, t->name);
        return NULL;
    }
    fl_client_conn_t *c = &l->conns[*node];
    if (c->fd < 0 && fl_table_connect_node(t, *node, c, err)) return NULL;
    return c;
}

/* Decodes a stored value (schema id ‖ row) into a new row of the table.
 * A value of another schema id is read with that schema (from schemas;
 * refused when NULL) and its cells placed by column id. */
static int fl_lookup_decode(const fluss_table_t *t, fl_schemas_t *schemas, const uint8_t *p,
                            size_t len, fluss_row_t **out, fl_error_t *err) {
    if (len < FL_VALUE_SCHEMA_ID_BYTES)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION, "a value of %zu bytes", len);
    int16_t schema_id = (int16_t)(p[0] | (uint16_t)p[1] << 8);
    const fl_schema_t *other = NULL;
    const fl_schema_map_t *map = NULL;
    if (schema_id != t->schema_id && !schemas)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "a row of schema %d; the table is at schema %d", schema_id,
                          t->schema_id);
    if (schema_id != t->schema_id) {
        int rc = fl_schemas_get(schemas, schema_id, &other, &map, err);
        if (rc) return rc;
    }
    fluss_row_t *r = fluss_row_new(t);
    int rc;
    if (other) {
        size_t n = other->column_count;
        const fl_datatype_t **types = fl_calloc(n ? n : 1, sizeof(*types));
        for (size_t i = 0; i < n; i++) types[i] = other->columns[i].type;
        rc = fl_row_decode(t->kv_format, p + 2, len - 2, types, n, &r->row, err);
        fl_free(types);
        if (!rc) fl_schema_map_row(map, &r->row);
    } else {
        rc = fl_row_decode(t->kv_format, p + 2, len - 2, t->types, t->desc.schema.column_count,
                           &r->row, err);
    }
    /* nested values are checked whole here, so reading them later cannot fail */
    for (size_t i = 0; !rc && i < t->desc.schema.column_count; i++) {
        const fl_cell_t *c = &r->row.cells[i];
        if (!c->is_null && fl_row_type_nested(t->types[i]->root))
            rc = fl_nested_check(t->types[i], t->kv_format, fl_row_cell_bytes(&r->row, c), c->len,
                                 0, err);
    }
    if (rc) {
        fluss_row_destroy(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* The bucket of an encoded key: hashed from the key when the bucket key
 * is the primary key, else from the bucket-key columns of row. */
static int fl_lookup_bucket(fluss_lookuper_t *l, const fluss_row_t *row, int32_t *bucket,
                            fl_error_t *err) {
    const fluss_table_t *t = l->t;
    if (t->default_bucket_key && t->pk_codec == t->bucket_codec) {
        *bucket = fl_key_bucket(t->bucket_codec, l->key.data, l->key.len, t->bucket_count);
        return 0;
    }
    fl_buf_t bk;
    fl_buf_init(&bk);
    int rc = fl_key_encode(t->bucket_codec, &row->row, &t->desc.schema, t->bucket_key,
                           t->bucket_key_count, &bk, err);
    if (!rc) *bucket = fl_key_bucket(t->bucket_codec, bk.data, bk.len, t->bucket_count);
    fl_buf_free(&bk);
    return rc;
}

/* ---- LOOKUP ---- */

typedef struct fl_lookup_plan {
    size_t n;
    fl_buf_t keys;      /* every key's bytes, back to back */
    size_t *key_off, *key_len;
    int32_t *bucket;    /* per key */
    size_t *part;       /* per key: partition index */
    int *node;          /* per key; -1: its partition does not exist (not found) */
    int32_t *rid;       /* per node: request id in flight, -1 none */
} fl_lookup_plan_t;

static void fl_lookup_plan_free(fl_lookup_plan_t *p) {
    fl_buf_free(&p->keys);
    fl_free(p->key_off);
    fl_free(p->key_len);
    fl_free(p->bucket);
    fl_free(p->part);
    fl_free(p->node);
    fl_free(p->rid);
}

/* Encodes every key and finds its bucket and leader. */
static int fl_lookup_plan_keys(fluss_lookuper_t *l, const fluss_row_t *const *keys, size_t n,
                               fl_lookup_plan_t *p, fl_error_t *err) {
    const fluss_table_t *t = l->t;
    for (size_t i = 0; i < n; i++) {
        if (keys[i]->row.column_count != t->desc.schema.column_count)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "key %zu is a row of another table", i);
        l->key.len = 0;
        int rc = fl_key_encode(t->pk_codec, &keys[i]->row, &t->desc.schema, t->kpk, t->kpk_count,
                               &l->key, err);
        if (!rc) rc = fl_lookup_bucket(l, keys[i], &p->bucket[i], err);
        bool missing = false;
        if (!rc) rc = fl_lookup_part(l, &keys[i]->row, &p->part[i], &missing, err);
        if (rc) return rc;
        p->key_off[i] = p->keys.len;
        p->key_len[i] = l->key.len;
        fl_buf_append(&p->keys, l->key.data, l->key.len);
        p->node[i] = -1;
        if (missing) continue;
        if (!fl_lookup_conn(l, p->part[i], p->bucket[i], &p->node[i], err)) return err->code;
    }
    return 0;
}

/* Whether keys i and j go to the same bucket of the same partition. */
static bool fl_lookup_same_bucket(const fl_lookup_plan_t *p, size_t i, size_t j) {
    return p->bucket[i] == p->bucket[j] && p->part[i] == p->part[j];
}

/* Sends node's LOOKUP (reconnecting if needed): one
 * PbLookupReqForBucket per (partition, bucket), keys in their order. */
static int fl_lookup_send(fluss_lookuper_t *l, fl_lookup_plan_t *p, int node, fl_error_t *err) {
    const fluss_table_t *t = l->t;
    if (l->conns[node].fd < 0) { /* broken on an earlier attempt */
        int rc = fl_table_connect_node(t, node, &l->conns[node], err);
        if (rc) return rc;
    }
    Fluss__PbLookupReqForBucket *reqs = fl_calloc(p->n, sizeof(*reqs));
    Fluss__PbLookupReqForBucket **ptrs = fl_calloc(p->n, sizeof(*ptrs));
    ProtobufCBinaryData *kb = fl_calloc(p->n, sizeof(*kb));
    bool *grouped = fl_calloc(p->n, sizeof(bool));
    size_t nb = 0, k = 0;
    for (size_t g = 0; g < p->n; g++) {
        if (grouped[g] || p->node[g] != node) continue;
        size_t first = k;
        for (size_t i = g; i < p->n; i++)
            if (!grouped[i] && p->node[i] == node && fl_lookup_same_bucket(p, g, i)) {
                grouped[i] = true;
                kb[k].data = p->keys.data + p->key_off[i];
                kb[k].len = p->key_len[i];
                k++;
            }
        fluss__pb_lookup_req_for_bucket__init(&reqs[nb]);
        int64_t pid = l->parts.items[p->part[g]].id;
        reqs[nb].has_partition_id = pid >= 0;
        reqs[nb].partition_id = pid;
        reqs[nb].bucket_id = p->bucket[g];
        reqs[nb].n_keys = k - first;
        reqs[nb].keys = kb + first;
        ptrs[nb] = &reqs[nb];
        nb++;
    }
    Fluss__LookupRequest req = FLUSS__LOOKUP_REQUEST__INIT;
    req.table_id = t->table_id;
    req.n_buckets_req = nb;
    req.buckets_req = ptrs;
    int rc = fl_client_conn_send(&l->conns[node], FL_API_LOOKUP, &req.base, &p->rid[node], err);
    fl_free(reqs);
    fl_free(ptrs);
    fl_free(kb);
    fl_free(grouped);
    return rc;
}

/* Places node's answer: bucket by bucket, values in key order. */
static int fl_lookup_place(fluss_lookuper_t *l, fl_lookup_plan_t *p, int node,
                           const Fluss__LookupResponse *resp, fluss_row_t **rows,
                           fl_error_t *err) {
    for (size_t j = 0; j < resp->n_buckets_resp; j++) {
        const Fluss__PbLookupRespForBucket *br = resp->buckets_resp[j];
        if (br->has_error_code && br->error_code != 0)
            return fl_err_set(err, br->error_code, "bucket %d: %s", br->bucket_id,
                              br->error_message ? br->error_message
                                                : fl_err_default_message(br->error_code));
        size_t v = 0;
        int64_t pid = br->has_partition_id ? br->partition_id : -1;
        for (size_t i = 0; i < p->n; i++) {
            if (p->node[i] != node || p->bucket[i] != br->bucket_id ||
                l->parts.items[p->part[i]].id != pid)
                continue;
            if (v >= br->n_values)
                return fl_err_set(err, FLUSS_ERR__CORRUPT,
                                  "LOOKUP answered %zu values for bucket %d, asked more",
                                  br->n_values, br->bucket_id);
            const Fluss__PbValue *pv = br->values[v++];
            if (rows[i]) fluss_row_destroy(rows[i]), rows[i] = NULL;
            if (!pv->has_values) continue;
            int rc = fl_lookup_decode(l->t, &l->schemas, pv->values.data, pv->values.len, &rows[i],
                                      err);
            if (rc) return rc;
        }
        if (v != br->n_values)
            return fl_err_set(err, FLUSS_ERR__CORRUPT,
                              "LOOKUP answered %zu values for bucket %d, asked %zu",
                              br->n_values, br->bucket_id, v);
    }
    return 0;
}

/* Sends one request per node and reads every answer (all of them, so
 * the connections stay in step even after an error). */
static int fl_lookup_exchange(fluss_lookuper_t *l, fl_lookup_plan_t *p, fluss_row_t **rows,
                              fl_error_t *err) {
    const fluss_table_t *t = l->t;
    int rc = 0;
    for (size_t node = 0; node < t->node_count && !rc; node++) {
        bool used = false;
        for (size_t i = 0; i < p->n; i++) used |= p->node[i] == (int)node;
        if (used) rc = fl_lookup_send(l, p, (int)node, err);
    }
    for (size_t node = 0; node < t->node_count; node++) {
        if (p->rid[node] < 0) continue;
        fl_error_t e;
        fl_err_clear(&e);
        int32_t rid = -1;
        ProtobufCMessage *resp = NULL;
        int r = fl_client_conn_recv(&l->conns[node], fl_time_mono_ms() + t->timeout_ms,
                                    &fluss__lookup_response__descriptor, &rid, &resp, &e);
        if (!r && rid != p->rid[node])
            r = fl_err_set(&e, FLUSS_ERR__CORRUPT, "answer to unknown request %d", rid);
        if (!r) r = fl_lookup_place(l, p, (int)node, (Fluss__LookupResponse *)resp, rows, &e);
        if (resp) protobuf_c_message_free_unpacked(resp, NULL);
        if (r && (e.code == FLUSS_ERR__CORRUPT || e.code == FLUSS_ERR__TIMED_OUT))
            fl_client_conn_close(&l->conns[node]);
        if (r && !rc) {
            rc = r;
            *err = e;
        }
    }
    return rc;
}

int fluss_lookuper_lookup(fluss_lookuper_t *l, const fluss_row_t *const *keys, size_t n,
                          fluss_row_t **rows, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    for (size_t i = 0; i < n; i++) rows[i] = NULL;
    if (n == 0) return 0;
    if (n > FL_LOOKUP_KEYS_MAX) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "%zu keys; at most %d at once", n,
                   FL_LOOKUP_KEYS_MAX);
        return fl_client_error_out(e, &err);
    }
    fl_lookup_plan_t p = {.n = n};
    fl_buf_init(&p.keys);
    p.key_off = fl_malloc(n * sizeof(size_t));
    p.key_len = fl_malloc(n * sizeof(size_t));
    p.bucket = fl_malloc(n * sizeof(int32_t));
    p.part = fl_calloc(n, sizeof(size_t));
    p.node = fl_malloc(n * sizeof(int));
    size_t nodes = l->t->node_count ? l->t->node_count : 1;
    p.rid = fl_malloc(nodes * sizeof(int32_t));
    for (size_t i = 0; i < nodes; i++) p.rid[i] = -1;
    int rc = fl_lookup_plan_keys(l, keys, n, &p, &err);
    for (int attempt = 0; !rc; attempt++) {
        for (size_t i = 0; i < nodes; i++) p.rid[i] = -1;
        rc = fl_lookup_exchange(l, &p, rows, &err);
        if (!rc || !fl_lookup_again(rc, attempt)) break;
        for (size_t i = 0; i < n; i++) fluss_row_destroy(rows[i]), rows[i] = NULL;
        fl_err_clear(&err);
        rc = 0;
    }
    fl_lookup_plan_free(&p);
    if (rc) {
        for (size_t i = 0; i < n; i++) fluss_row_destroy(rows[i]), rows[i] = NULL;
        return fl_client_error_out(e, &err);
    }
    return 0;
}

/* ---- PREFIX_LOOKUP ---- */

/* Whether the bucket key is a proper prefix of the primary key (the
 * condition of Fluss's PrefixLookuper). */
static bool fl_bucket_key_is_prefix(const fluss_table_t *t) {
    if (t->bucket_key_count == 0 || t->bucket_key_count >= t->kpk_count) return false;
    for (size_t i = 0; i < t->bucket_key_count; i++)
        if (t->bucket_key[i] != t->kpk[i]) return false;
    return true;
}

/* Decodes n stored values into a new array of rows. */
static int fl_lookup_decode_list(const fluss_table_t *t, fl_schemas_t *schemas,
                                 const ProtobufCBinaryData *vals, size_t n, fluss_row_t ***rows,
                                 size_t *count, fl_error_t *err) {
    fluss_row_t **out = fl_calloc(n ? n : 1, sizeof(*out));
    for (size_t i = 0; i < n; i++) {
        int rc = fl_lookup_decode(t, schemas, vals[i].data, vals[i].len, &out[i], err);
        if (rc) {
            fluss_rows_free(out, i);
            return rc;
        }
    }
    *rows = out;
    *count = n;
    return 0;
}

int fluss_lookuper_prefix_lookup(fluss_lookuper_t *l, const fluss_row_t *prefix,
                                 fluss_row_t ***rows, size_t *count, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    const fluss_table_t *t = l->t;
    *rows = NULL;
    *count = 0;
    if (!fl_bucket_key_is_prefix(t)) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG,
                   "%s.%s: the bucket key is not a proper prefix of the primary key",
                   t->database, t->name);
        return fl_client_error_out(e, &err);
    }
    if (prefix->row.column_count != t->desc.schema.column_count) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "the prefix is a row of another table");
        return fl_client_error_out(e, &err);
    }
    l->key.len = 0;
    int node = -1;
    fl_client_conn_t *c = NULL;
    size_t part = 0;
    bool missing = false;
    /* the key: a byte prefix of the primary key's encoding; the bucket:
     * from the bucket key's own (the lake's) */
    int rc = fl_key_encode(t->pk_codec, &prefix->row, &t->desc.schema, t->bucket_key,
                           t->bucket_key_count, &l->key, &err);
    if (!rc) rc = fl_lookup_part(l, &prefix->row, &part, &missing, &err);
    if (!rc && missing) { /* no partition, no rows */
        *rows = fl_calloc(1, sizeof(fluss_row_t *));
        return 0;
    }
    int32_t bucket = 0;
    if (!rc) rc = fl_lookup_bucket(l, prefix, &bucket, &err);
    if (!rc && !(c = fl_lookup_conn(l, part, bucket, &node, &err))) rc = err.code;
    if (rc) return fl_client_error_out(e, &err);
    ProtobufCBinaryData kb = {l->key.len, l->key.data};
    Fluss__PbPrefixLookupReqForBucket br = FLUSS__PB_PREFIX_LOOKUP_REQ_FOR_BUCKET__INIT;
    int64_t pid = l->parts.items[part].id;
    br.has_partition_id = pid >= 0;
    br.partition_id = pid;
    br.bucket_id = bucket;
    br.n_keys = 1;
    br.keys = &kb;
    Fluss__PbPrefixLookupReqForBucket *brp = &br;
    Fluss__PrefixLookupRequest req = FLUSS__PREFIX_LOOKUP_REQUEST__INIT;
    req.table_id = t->table_id;
    req.n_buckets_req = 1;
    req.buckets_req = &brp;
    Fluss__PrefixLookupResponse *resp = NULL;
    for (int attempt = 0;; attempt++) {
        rc = fl_client_conn_call(c, FL_API_PREFIX_LOOKUP, &req.base,
                                 &fluss__prefix_lookup_response__descriptor,
                                 (ProtobufCMessage **)&resp, &err);
        if (!rc || !fl_lookup_again(rc, attempt)) break;
        if (!(c = fl_lookup_conn(l, part, bucket, &node, &err))) return fl_client_error_out(e, &err);
    }
    if (rc) return fl_client_error_out(e, &err);
    const Fluss__PbPrefixLookupRespForBucket *r = NULL;
    for (size_t j = 0; j < resp->n_buckets_resp; j++)
        if (resp->buckets_resp[j]->bucket_id == bucket) r = resp->buckets_resp[j];
    if (!r)
        rc = fl_err_set(&err, FLUSS_ERR__CORRUPT, "PREFIX_LOOKUP did not answer bucket %d", bucket);
    else if (r->has_error_code && r->error_code != 0)
        rc = fl_err_set(&err, r->error_code, "bucket %d: %s", bucket,
                        r->error_message ? r->error_message
                                         : fl_err_default_message(r->error_code));
    else if (r->n_value_lists != 1)
        rc = fl_err_set(&err, FLUSS_ERR__CORRUPT, "PREFIX_LOOKUP answered %zu lists for 1 key",
                        r->n_value_lists);
    else
        rc = fl_lookup_decode_list(t, &l->schemas, r->value_lists[0]->values,
                                   r->value_lists[0]->n_values, rows, count, &err);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return rc ? fl_client_error_out(e, &err) : 0;
}

/* ---- LIMIT_SCAN ---- */

/* The rows of a DefaultValueRecordBatch (p[0, len); empty = no rows). */
int fl_lookup_value_batch_rows(const fluss_table_t *t, fl_schemas_t *schemas, const uint8_t *p,
                               size_t len, fluss_row_t ***rows, size_t *count, fl_error_t *err) {
    *rows = NULL;
    *count = 0;
    if (len == 0) {
        *rows = fl_calloc(1, sizeof(fluss_row_t *));
        return 0;
    }
    fl_value_batch_view_t v;
    int rc = fl_value_batch_parse(p, len, &v, err);
    if (rc) return rc;
    fluss_row_t **out = fl_calloc(v.record_count ? (size_t)v.record_count : 1, sizeof(*out));
    fl_value_batch_iter_t it;
    fl_value_batch_iter_init(&it, &v);
    fl_value_record_t rec;
    size_t n = 0;
    fl_value_next_t nx;
    while ((nx = fl_value_batch_next(&it, &rec, err)) == FL_VALUE_NEXT_RECORD) {
        if ((rc = fl_lookup_decode(t, schemas, rec.value, rec.value_len, &out[n], err))) break;
        n++;
    }
    if (!rc && nx == FL_VALUE_NEXT_ERROR) rc = err->code;
    if (rc) {
        fluss_rows_free(out, n);
        return rc;
    }
    *rows = out;
    *count = n;
    return 0;
}

int fluss_lookuper_limit_scan_partition(fluss_lookuper_t *l, int64_t partition_id,
                                        int32_t bucket, int32_t limit, fluss_row_t ***rows,
                                        size_t *count, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    *rows = NULL;
    *count = 0;
    int node = -1;
    size_t part = 0;
    if ((partition_id < 0) != (l->t->part_count == 0)) {
        fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "%s.%s %s", l->t->database, l->t->name,
                   l->t->part_count ? "is partitioned: name the partition" : "has no partitions");
        return fl_client_error_out(e, &err);
    }
    if (partition_id >= 0 && fl_parts_by_id(&l->parts, partition_id, &part, &err))
        return fl_client_error_out(e, &err);
    fl_client_conn_t *c = fl_lookup_conn(l, part, bucket, &node, &err);
    if (!c) return fl_client_error_out(e, &err);
    Fluss__LimitScanRequest req = FLUSS__LIMIT_SCAN_REQUEST__INIT;
    req.table_id = l->t->table_id;
    req.has_partition_id = partition_id >= 0;
    req.partition_id = partition_id;
    req.bucket_id = bucket;
    req.limit = limit;
    Fluss__LimitScanResponse *resp = NULL;
    int rc;
    for (int attempt = 0;; attempt++) {
        rc = fl_client_conn_call(c, FL_API_LIMIT_SCAN, &req.base,
                                 &fluss__limit_scan_response__descriptor,
                                 (ProtobufCMessage **)&resp, &err);
        if (!rc || !fl_lookup_again(rc, attempt)) break;
        if (!(c = fl_lookup_conn(l, part, bucket, &node, &err))) return fl_client_error_out(e, &err);
    }
    if (rc) return fl_client_error_out(e, &err);
    if (resp->has_error_code && resp->error_code != 0)
        rc = fl_err_set(&err, resp->error_code, "bucket %d: %s", bucket,
                        resp->error_message ? resp->error_message
                                            : fl_err_default_message(resp->error_code));
    else if (resp->has_is_log_table && resp->is_log_table)
        rc = fl_err_set(&err, FLUSS_ERR__CORRUPT, "LIMIT_SCAN answered log batches for a PK table");
    else
        rc = fl_lookup_value_batch_rows(l->t, &l->schemas, resp->records.data, resp->records.len,
                                        rows, count, &err);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return rc ? fl_client_error_out(e, &err) : 0;
}

int fluss_lookuper_limit_scan(fluss_lookuper_t *l, int32_t bucket, int32_t limit,
                              fluss_row_t ***rows, size_t *count, fluss_error_t *e) {
    return fluss_lookuper_limit_scan_partition(l, -1, bucket, limit, rows, count, e);
}
