/*
 * metastore_zk.c — the ZooKeeper backend of metastore.h: databases,
 * tables with their schemas, partitions, bucket assignments and the id
 * counters in Apache Fluss's znodes (layout and payloads in
 * metastore_zk_codec.h), behind the interface the embedded backend has;
 * the ACLs in metastore_zk_acl.c, the SCRAM credentials in
 * metastore_zk_scram.c.
 *
 * The cache: the whole metadata in memory, in the shapes of metastore.h,
 * loaded at open and on becoming active (metastore_zk_election.c), then
 * changed only by this store's own writes after ZooKeeper acknowledged
 * them. Every write is one zoo_multi fenced by the coordinator epoch
 * (fl_msz_commit): all of a DDL's znodes or none. A write whose outcome
 * is unknown marks the cache for a reload before the next write.
 *
 * Thread rule: one thread at a time (metastore.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "common_log.h"
#include "metastore_zk_int.h"

/* Retries of a counter update that raced another writer. */
#define FL_MSZ_COUNTER_RETRIES 16

static const char *const fl_msz_counter_paths[FL_MS_COUNTER_COUNT] = {
    [FL_MS_COUNTER_TABLE_ID] = FL_ZK_TABLE_SEQID,
    [FL_MS_COUNTER_PARTITION_ID] = FL_ZK_PARTITION_SEQID,
    [FL_MS_COUNTER_WRITER_ID] = FL_ZK_WRITER_ID,
};

/* ---- paths ---- */

static char *fl_msz_db_path(fl_ms_zk_t *m, const char *db) {
    return fl_zk_path(m->conn, FL_ZK_DATABASES "/%s", db);
}

static char *fl_msz_table_path(fl_ms_zk_t *m, const char *db, const char *name,
                               const char *sub) {
    return fl_zk_path(m->conn, FL_ZK_DATABASES "/%s/tables/%s%s", db, name, sub ? sub : "");
}

/* /tabletservers/tables/<id> or /tabletservers/partitions/<id>, + sub */
static char *fl_msz_assign_path(fl_ms_zk_t *m, int64_t table_id, int64_t partition_id,
                                const char *sub) {
    if (partition_id >= 0)
        return fl_zk_path(m->conn, FL_ZK_PARTITION_IDS "/%" PRId64 "%s", partition_id,
                          sub ? sub : "");
    return fl_zk_path(m->conn, FL_ZK_TABLE_IDS "/%" PRId64 "%s", table_id, sub ? sub : "");
}

static int fl_msz_name_check(const char *what, const char *name, fl_error_t *err) {
    if (!name[0] || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
        strlen(name) > 1024)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "%s name \"%s\" cannot be a znode name",
                          what, name);
    return 0;
}

/* ---- cache ---- */

static void fl_msz_clear_arrays(fl_ms_database_t *dbs, size_t db_count, fl_ms_table_t *tables,
                                size_t table_count) {
    for (size_t i = 0; i < db_count; i++) fl_ms_database_clear(&dbs[i]);
    for (size_t i = 0; i < table_count; i++) fl_ms_table_clear(&tables[i]);
    fl_free(dbs);
    fl_free(tables);
}

fl_ms_table_t *fl_msz_table_mut(fl_ms_zk_t *m, int64_t id) {
    return fl_ms_find_table_id(m->tables, m->table_count, id);
}

/* ---- loading ---- */

/* Buckets of one table or partition: replicas from the assignment znode,
 * leader and epoch from each bucket's leader_isr (none yet: leader -1). */
static int fl_msz_load_buckets(fl_ms_zk_t *m, int64_t table_id, int64_t partition_id,
                               fl_ms_bucket_t **buckets, int32_t *count, fl_buf_t *buf,
                               fl_error_t *err) {
    *buckets = NULL;
    *count = 0;
    char *path = fl_msz_assign_path(m, table_id, partition_id, NULL);
    bool missing;
    int rc = fl_zk_get(m->conn, path, buf, NULL, &missing, err);
    if (!rc && !missing) {
        int64_t owner;
        rc = fl_zk_assignment_decode(buf->data, buf->len, &owner, buckets, count, err);
        if (rc) fl_err_prefix(err, "%s: ", path);
    }
    fl_free(path);
    for (int32_t b = 0; !rc && b < *count; b++) {
        char sub[48];
        snprintf(sub, sizeof(sub), "/buckets/%" PRId32 "/leader_isr", b);
        path = fl_msz_assign_path(m, table_id, partition_id, sub);
        rc = fl_zk_get(m->conn, path, buf, NULL, &missing, err);
        fl_zk_leader_isr_t l;
        if (!rc && !missing && !(rc = fl_zk_leader_isr_decode(buf->data, buf->len, &l, err))) {
            (*buckets)[b].leader = l.leader;
            (*buckets)[b].leader_epoch = l.leader_epoch;
            (*buckets)[b].isr_count = l.isr_count;
            memcpy((*buckets)[b].isr, l.isr, sizeof(l.isr));
            (*buckets)[b].bucket_epoch = l.bucket_epoch;
        } else if (rc) {
            fl_err_prefix(err, "%s: ", path);
        }
        fl_free(path);
    }
    if (rc) {
        fl_free(*buckets);
        *buckets = NULL;
        *count = 0;
    }
    return rc;
}

/* Splits "a$b$c" into its values (a partition 0.9.1 wrote). */
static void fl_msz_split_name(const char *name, char ***values, size_t *count) {
    size_t n = 1;
    for (const char *p = name; *p; p++) n += *p == '$';
    *values = fl_calloc(n, sizeof(char *));
    *count = n;
    const char *start = name;
    for (size_t i = 0; i < n; i++) {
        const char *end = strchr(start, '$');
        size_t len = end ? (size_t)(end - start) : strlen(start);
        (*values)[i] = fl_malloc(len + 1);
        memcpy((*values)[i], start, len);
        (*values)[i][len] = '\0';
        start = end ? end + 1 : start + len;
    }
}

static int fl_msz_load_partition(fl_ms_zk_t *m, fl_ms_table_t *t, const char *name,
                                 fl_ms_partition_t *p, fl_buf_t *buf, fl_error_t *err) {
    char *path = fl_msz_table_path(m, t->database, t->name, "/partitions/");
    size_t n = strlen(path) + strlen(name) + 1;
    path = fl_realloc(path, n);
    strcat(path, name);
    struct Stat st;
    int rc = fl_zk_get(m->conn, path, buf, &st, NULL, err);
    int64_t table_id;
    int has_created = 0;
    if (!rc)
        rc = fl_zk_partition_decode(buf->data, buf->len, &table_id, &p->partition_id, &p->values,
                                    &p->value_count, &p->created_ms, &has_created, err);
    if (rc) fl_err_prefix(err, "%s: ", path);
    fl_free(path);
    if (rc) return rc;
    p->name = fl_strdup(name);
    if (!p->values) fl_msz_split_name(name, &p->values, &p->value_count);
    if (!has_created) p->created_ms = st.ctime;
    return fl_msz_load_buckets(m, t->table_id, p->partition_id, &p->buckets, &p->bucket_count,
                               buf, err);
}

static int fl_msz_partition_cmp(const void *a, const void *b) {
    int64_t x = ((const fl_ms_partition_t *)a)->partition_id;
    int64_t y = ((const fl_ms_partition_t *)b)->partition_id;
    return (x > y) - (x < y);
}

/* Schemas 1..n of a table: its schemas/ children must be exactly those. */
static int fl_msz_load_schemas(fl_ms_zk_t *m, fl_ms_table_t *t, fl_buf_t *buf,
                               fl_error_t *err) {
    char *dir = fl_msz_table_path(m, t->database, t->name, "/schemas");
    struct String_vector kids;
    int rc = fl_zk_children(m->conn, dir, &kids, NULL, err);
    if (rc) goto done;
    size_t n = (size_t)kids.count;
    deallocate_String_vector(&kids);
    if (n == 0 || n > INT16_MAX) {
        rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "%s: %zu schemas", dir, n);
        goto done;
    }
    t->schema_jsons = fl_calloc(n, sizeof(char *));
    for (size_t i = 0; i < n && !rc; i++) {
        char *path = fl_zk_path(m->conn, "%s/%zu", dir + strlen(m->conn->root), i + 1);
        rc = fl_zk_get(m->conn, path, buf, NULL, NULL, err);
        if (!rc) {
            t->schema_jsons[i] = fl_malloc(buf->len + 1);
            memcpy(t->schema_jsons[i], buf->data, buf->len);
            t->schema_jsons[i][buf->len] = '\0';
            t->schema_count = i + 1;
        } else if (err && err->code == FLUSS_ERR__STATE) {
            rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "%s: schema ids are not 1..%zu", dir, n);
        }
        fl_free(path);
    }
    t->schema_id = (int32_t)t->schema_count;
done:
    fl_free(dir);
    return rc;
}

static int fl_msz_load_autoinc(fl_ms_zk_t *m, fl_ms_table_t *t, fl_buf_t *buf,
                               fl_error_t *err) {
    char *dir = fl_msz_table_path(m, t->database, t->name, "/auto_inc");
    struct String_vector kids;
    bool missing;
    int rc = fl_zk_children(m->conn, dir, &kids, &missing, err);
    for (int32_t i = 0; !rc && !missing && i < kids.count; i++) {
        if (strncmp(kids.data[i], "col_", 4) != 0) continue;
        char *path = fl_zk_path(m->conn, "%s/%s", dir + strlen(m->conn->root), kids.data[i]);
        rc = fl_zk_get(m->conn, path, buf, NULL, NULL, err);
        if (!rc) rc = fl_zk_counter_decode(buf->data, buf->len, &t->autoinc_next, err);
        if (rc) fl_err_prefix(err, "%s: ", path);
        fl_free(path);
    }
    if (!missing) deallocate_String_vector(&kids);
    fl_free(dir);
    return rc;
}

static int fl_msz_load_table(fl_ms_zk_t *m, const char *db, const char *name, fl_ms_table_t *t,
                             fl_buf_t *buf, fl_error_t *err) {
    t->database = fl_strdup(db);
    t->name = fl_strdup(name);
    int rc = fl_msz_load_schemas(m, t, buf, err);
    if (rc) return rc;
    char *path = fl_msz_table_path(m, db, name, NULL);
    rc = fl_zk_get(m->conn, path, buf, NULL, NULL, err);
    if (!rc)
        rc = fl_zk_table_reg_decode(buf->data, buf->len, t->schema_jsons[t->schema_count - 1],
                                    &t->table_json, &t->table_id, &t->created_ms,
                                    &t->modified_ms, err);
    if (rc) fl_err_prefix(err, "%s: ", path);
    fl_free(path);
    if (!rc)
        rc = fl_msz_load_buckets(m, t->table_id, -1, &t->buckets, &t->bucket_count, buf, err);
    if (!rc) rc = fl_msz_load_autoinc(m, t, buf, err);
    if (rc) return rc;
    path = fl_msz_table_path(m, db, name, "/partitions");
    struct String_vector kids;
    bool missing;
    rc = fl_zk_children(m->conn, path, &kids, &missing, err);
    fl_free(path);
    if (rc || missing) return rc;
    t->partitions = fl_calloc(kids.count ? (size_t)kids.count : 1, sizeof(fl_ms_partition_t));
    for (int32_t i = 0; i < kids.count && !rc; i++) {
        t->partition_count = (size_t)i + 1;
        rc = fl_msz_load_partition(m, t, kids.data[i], &t->partitions[i], buf, err);
    }
    deallocate_String_vector(&kids);
    if (!rc && t->partition_count > 1)
        qsort(t->partitions, t->partition_count, sizeof(*t->partitions), fl_msz_partition_cmp);
    return rc;
}

static int fl_msz_db_cmp(const void *a, const void *b) {
    const fl_ms_database_t *x = a, *y = b;
    if (x->created_ms != y->created_ms) return (x->created_ms > y->created_ms) ? 1 : -1;
    return strcmp(x->name, y->name);
}

static int fl_msz_table_cmp(const void *a, const void *b) {
    int64_t x = ((const fl_ms_table_t *)a)->table_id, y = ((const fl_ms_table_t *)b)->table_id;
    return (x > y) - (x < y);
}

static int fl_msz_load_db(fl_ms_zk_t *m, const char *name, fl_ms_database_t *d,
                          fl_ms_table_t **tables, size_t *table_count, size_t *table_cap,
                          fl_buf_t *buf, fl_error_t *err) {
    char *path = fl_msz_db_path(m, name);
    int rc = fl_zk_get(m->conn, path, buf, NULL, NULL, err);
    d->name = fl_strdup(name);
    if (!rc)
        rc = fl_zk_db_reg_decode(buf->data, buf->len, &d->json, &d->created_ms, &d->modified_ms,
                                 err);
    if (rc) fl_err_prefix(err, "%s: ", path);
    fl_free(path);
    if (rc) return rc;
    path = fl_zk_path(m->conn, FL_ZK_DATABASES "/%s/tables", name);
    struct String_vector kids;
    bool missing;
    rc = fl_zk_children(m->conn, path, &kids, &missing, err);
    fl_free(path);
    if (rc || missing) return rc;
    for (int32_t i = 0; i < kids.count && !rc; i++) {
        if (*table_count == *table_cap) {
            *table_cap = *table_cap ? *table_cap * 2 : 8;
            *tables = fl_realloc(*tables, *table_cap * sizeof(**tables));
        }
        fl_ms_table_t *t = &(*tables)[(*table_count)++];
        memset(t, 0, sizeof(*t));
        rc = fl_msz_load_table(m, name, kids.data[i], t, buf, err);
    }
    deallocate_String_vector(&kids);
    return rc;
}

int fl_msz_reload(fl_ms_zk_t *m, fl_error_t *err) {
    fl_buf_t buf;
    fl_buf_init(&buf);
    fl_ms_database_t *dbs = NULL;
    fl_ms_table_t *tables = NULL;
    fl_ms_acl_node_t *acls = NULL;
    fl_ms_scram_node_t *scrams = NULL;
    size_t db_count = 0, table_count = 0, table_cap = 0, acl_count = 0, scram_count = 0;
    char *path = fl_zk_path(m->conn, FL_ZK_DATABASES);
    struct String_vector kids;
    int rc = fl_zk_children(m->conn, path, &kids, NULL, err);
    fl_free(path);
    if (rc) goto done;
    dbs = fl_calloc(kids.count ? (size_t)kids.count : 1, sizeof(*dbs));
    for (int32_t i = 0; i < kids.count && !rc; i++) {
        db_count = (size_t)i + 1;
        rc = fl_msz_load_db(m, kids.data[i], &dbs[i], &tables, &table_count, &table_cap, &buf,
                            err);
    }
    deallocate_String_vector(&kids);
    if (!rc) rc = fl_msz_acls_load(m, &acls, &acl_count, err);
    if (!rc) rc = fl_msz_scram_load(m, &scrams, &scram_count, err);
done:
    fl_buf_free(&buf);
    if (rc) {
        fl_msz_clear_arrays(dbs, db_count, tables, table_count);
        fl_ms_acl_free(acls, acl_count);
        return rc;
    }
    if (db_count > 1) qsort(dbs, db_count, sizeof(*dbs), fl_msz_db_cmp);
    if (table_count > 1) qsort(tables, table_count, sizeof(*tables), fl_msz_table_cmp);
    fl_msz_clear_arrays(m->dbs, m->db_count, m->tables, m->table_count);
    m->dbs = dbs;
    m->db_count = m->db_cap = db_count;
    m->tables = tables;
    m->table_count = table_count;
    m->table_cap = table_cap;
    fl_ms_acl_free(m->acls, m->acl_count);
    m->acls = acls;
    m->acl_count = m->acl_cap = acl_count;
    fl_ms_scram_free(m->scrams, m->scram_count);
    m->scrams = scrams;
    m->scram_count = m->scram_cap = scram_count;
    m->reload_needed = false;
    return 0;
}

/* ---- writing ---- */

int fl_msz_begin(fl_ms_zk_t *m, fl_zk_txn_t *t, fl_error_t *err) {
    fl_zk_txn_init(t);
    if (m->active && !fl_zk_conn_alive(m->conn)) m->active = false;
    if (!m->active)
        return fl_err_set(err, FLUSS_ERR_NOT_COORDINATOR_LEADER_EXCEPTION,
                          "this coordinator is not the active one: metadata writes refused");
    if (m->reload_needed) {
        int rc = fl_msz_reload(m, err);
        if (rc) return rc;
    }
    fl_zk_txn_check(t, fl_zk_path(m->conn, FL_ZK_COORD_EPOCH), m->epoch_version);
    return 0;
}

int fl_msz_commit(fl_ms_zk_t *m, fl_zk_txn_t *t, int *zrc, size_t *failed, fl_error_t *err) {
    int rc = fl_zk_txn_run(m->conn, t, failed);
    *zrc = rc;
    if (rc == ZOK) return 0;
    if (*failed == 0) {
        m->active = false;
        return fl_err_set(err, FLUSS_ERR_INVALID_COORDINATOR_EXCEPTION,
                          "coordinator epoch %" PRId32
                          " is fenced: another coordinator became active (%s)",
                          m->epoch, zerror(rc));
    }
    if (*failed != SIZE_MAX) {
        fl_zk_err(err, rc, "write", (const char *)t->owned[3 * *failed]);
        return FL_ZK_TXN_OP_FAILED;
    }
    /* the request as a whole: it may or may not have been applied */
    m->reload_needed = true;
    if (rc == ZSESSIONEXPIRED) m->active = false;
    return fl_err_set(err, FLUSS_ERR__TRANSPORT,
                      "ZooKeeper write outcome unknown (%s); metadata will be re-read",
                      zerror(rc));
}

/* Runs t; an op failure becomes `code` with msg when the op is `at`,
 * else a state error. */
static int fl_msz_run(fl_ms_zk_t *m, fl_zk_txn_t *t, size_t at, int expect_zrc, int code,
                      const char *msg, fl_error_t *err) {
    int zrc;
    size_t failed;
    int rc = fl_msz_commit(m, t, &zrc, &failed, err);
    if (rc == FL_ZK_TXN_OP_FAILED) {
        if (failed == at && zrc == expect_zrc) rc = fl_err_set(err, code, "%s", msg);
        else rc = err ? err->code : FLUSS_ERR__STATE;
    }
    fl_zk_txn_free(t);
    return rc;
}

static void fl_msz_add_buckets(fl_ms_zk_t *m, fl_zk_txn_t *t, int64_t table_id,
                               int64_t partition_id, const fl_ms_bucket_t *buckets,
                               int32_t count) {
    char *assign = fl_zk_assignment_encode(partition_id >= 0 ? table_id : -1, buckets, count);
    fl_zk_txn_create(t, fl_msz_assign_path(m, table_id, partition_id, NULL), assign,
                     strlen(assign));
    fl_zk_txn_create(t, fl_msz_assign_path(m, table_id, partition_id, "/buckets"), NULL, 0);
    for (int32_t b = 0; b < count; b++) {
        char sub[48];
        snprintf(sub, sizeof(sub), "/buckets/%" PRId32, b);
        fl_zk_txn_create(t, fl_msz_assign_path(m, table_id, partition_id, sub), NULL, 0);
        if (buckets[b].leader < 0) continue; /* no leader yet: no LeaderAndIsr */
        fl_zk_leader_isr_t l = {.leader = buckets[b].leader,
                                .leader_epoch = buckets[b].leader_epoch,
                                .isr_count = buckets[b].replica_count,
                                .coordinator_epoch = m->epoch};
        memcpy(l.isr, buckets[b].replicas, sizeof(l.isr));
        char *data = fl_zk_leader_isr_encode(&l);
        snprintf(sub, sizeof(sub), "/buckets/%" PRId32 "/leader_isr", b);
        fl_zk_txn_create(t, fl_msz_assign_path(m, table_id, partition_id, sub), data,
                         strlen(data));
    }
}

/* ---- operations ---- */

static void fl_msz_close(fl_metastore_t *ms) {
    fl_ms_zk_t *m = FL_MSZ(ms);
    fl_msz_clear_arrays(m->dbs, m->db_count, m->tables, m->table_count);
    fl_ms_acl_free(m->acls, m->acl_count);
    fl_ms_scram_free(m->scrams, m->scram_count);
    fl_zk_conn_close(m->conn);
    fl_free(m);
}

static size_t fl_msz_db_count(fl_metastore_t *ms) { return FL_MSZ(ms)->db_count; }

static const fl_ms_database_t *fl_msz_db_at(fl_metastore_t *ms, size_t i) {
    return i < FL_MSZ(ms)->db_count ? &FL_MSZ(ms)->dbs[i] : NULL;
}

static const fl_ms_database_t *fl_msz_db_get(fl_metastore_t *ms, const char *name) {
    return fl_ms_find_db(FL_MSZ(ms)->dbs, FL_MSZ(ms)->db_count, name);
}

static int fl_msz_db_create(fl_metastore_t *ms, const fl_ms_database_t *db, fl_error_t *err) {
    fl_ms_zk_t *m = FL_MSZ(ms);
    fl_zk_txn_t t;
    int rc = fl_msz_begin(m, &t, err);
    if (!rc) rc = fl_msz_name_check("Database", db->name, err);
    if (!rc && fl_msz_db_get(ms, db->name))
        rc = fl_err_set(err, FLUSS_ERR_DATABASE_ALREADY_EXIST, "Database %s already exists.",
                        db->name);
    char *reg = rc ? NULL : fl_zk_db_reg_encode(db->json, db->created_ms, db->modified_ms, err);
    if (rc || !reg) {
        fl_zk_txn_free(&t);
        return rc ? rc : FLUSS_ERR__INVALID_ARG;
    }
    size_t at = t.count;
    fl_zk_txn_create(&t, fl_msz_db_path(m, db->name), reg, strlen(reg));
    fl_zk_txn_create(&t, fl_zk_path(m->conn, FL_ZK_DATABASES "/%s/tables", db->name), NULL, 0);
    char msg[1200];
    snprintf(msg, sizeof(msg), "Database %s already exists.", db->name);
    if ((rc = fl_msz_run(m, &t, at, ZNODEEXISTS, FLUSS_ERR_DATABASE_ALREADY_EXIST, msg, err)))
        return rc;
    if (m->db_count == m->db_cap) {
        m->db_cap = m->db_cap ? m->db_cap * 2 : 8;
        m->dbs = fl_realloc(m->dbs, m->db_cap * sizeof(*m->dbs));
    }
    fl_ms_database_t *d = &m->dbs[m->db_count++];
    d->name = fl_strdup(db->name);
    d->json = fl_strdup(db->json);
    d->created_ms = db->created_ms;
    d->modified_ms = db->modified_ms;
    return 0;
}

/* Deletes of a table's assignments (its partitions' as cached), which
 * live outside its own znode. */
static int fl_msz_drop_assign_ops(fl_ms_zk_t *m, fl_zk_txn_t *t, const fl_ms_table_t *tb,
                                  fl_error_t *err) {
    for (size_t i = 0; i < tb->partition_count; i++) {
        char *p = fl_msz_assign_path(m, tb->table_id, tb->partitions[i].partition_id, NULL);
        int rc = fl_zk_txn_delete_tree(t, m->conn, p, err);
        fl_free(p);
        if (rc) return rc;
    }
    char *p = fl_msz_assign_path(m, tb->table_id, -1, NULL);
    int rc = fl_zk_txn_delete_tree(t, m->conn, p, err);
    fl_free(p);
    return rc;
}

/* Deletes of a table's znodes and its assignments. */
static int fl_msz_drop_table_ops(fl_ms_zk_t *m, fl_zk_txn_t *t, const fl_ms_table_t *tb,
                                 fl_error_t *err) {
    int rc = fl_msz_drop_assign_ops(m, t, tb, err);
    if (rc) return rc;
    char *p = fl_msz_table_path(m, tb->database, tb->name, NULL);
    rc = fl_zk_txn_delete_tree(t, m->conn, p, err);
    fl_free(p);
    return rc;
}

static void fl_msz_remove_table_at(fl_ms_zk_t *m, size_t i) {
    fl_ms_table_clear(&m->tables[i]);
    memmove(&m->tables[i], &m->tables[i + 1], (m->table_count - i - 1) * sizeof(*m->tables));
    m->table_count--;
}

static int fl_msz_db_drop(fl_metastore_t *ms, const char *name, fl_error_t *err) {
    fl_ms_zk_t *m = FL_MSZ(ms);
    fl_zk_txn_t t;
    int rc = fl_msz_begin(m, &t, err);
    size_t at = m->db_count;
    for (size_t i = 0; !rc && i < m->db_count; i++)
        if (strcmp(m->dbs[i].name, name) == 0) at = i;
    if (!rc && at == m->db_count)
        rc = fl_err_set(err, FLUSS_ERR_DATABASE_NOT_EXIST, "Database %s does not exist.", name);
    for (size_t i = 0; !rc && i < m->table_count; i++)
        if (strcmp(m->tables[i].database, name) == 0)
            rc = fl_msz_drop_assign_ops(m, &t, &m->tables[i], err);
    if (!rc) { /* the tables go with the database's tree */
        char *p = fl_msz_db_path(m, name);
        rc = fl_zk_txn_delete_tree(&t, m->conn, p, err);
        fl_free(p);
    }
    if (rc) {
        fl_zk_txn_free(&t);
        return rc;
    }
    /* a znode added below meanwhile (ZNOTEMPTY) fails it whole: try again */
    if ((rc = fl_msz_run(m, &t, SIZE_MAX, 0, 0, "", err))) return rc;
    for (size_t i = m->table_count; i-- > 0;)
        if (strcmp(m->tables[i].database, name) == 0) fl_msz_remove_table_at(m, i);
    fl_ms_database_clear(&m->dbs[at]);
    memmove(&m->dbs[at], &m->dbs[at + 1], (m->db_count - at - 1) * sizeof(*m->dbs));
    m->db_count--;
    return 0;
}

static size_t fl_msz_table_count(fl_metastore_t *ms) { return FL_MSZ(ms)->table_count; }

static const fl_ms_table_t *fl_msz_table_at(fl_metastore_t *ms, size_t i) {
    return i < FL_MSZ(ms)->table_count ? &FL_MSZ(ms)->tables[i] : NULL;
}

static const fl_ms_table_t *fl_msz_table_get(fl_metastore_t *ms, const char *db,
                                             const char *name) {
    return fl_ms_find_table(FL_MSZ(ms)->tables, FL_MSZ(ms)->table_count, db, name);
}

static const fl_ms_table_t *fl_msz_table_by_id(fl_metastore_t *ms, int64_t id) {
    return fl_msz_table_mut(FL_MSZ(ms), id);
}

/* The auto-increment counter's znode of a table (its schema's column), or NULL. */
static char *fl_msz_autoinc_path(fl_ms_zk_t *m, const fl_ms_table_t *t) {
    int32_t col = fl_zk_schema_autoinc_column(t->schema_jsons[t->schema_count - 1]);
    if (col < 0) return NULL;
    char sub[48];
    snprintf(sub, sizeof(sub), "/auto_inc/col_%" PRId32, col);
    return fl_msz_table_path(m, t->database, t->name, sub);
}

static int fl_msz_table_create(fl_metastore_t *ms, const fl_ms_table_t *t, fl_error_t *err) {
    fl_ms_zk_t *m = FL_MSZ(ms);
    fl_zk_txn_t x;
    int rc = fl_msz_begin(m, &x, err);
    if (!rc && !fl_msz_db_get(ms, t->database))
        rc = fl_err_set(err, FLUSS_ERR_DATABASE_NOT_EXIST, "Database %s does not exist.",
                        t->database);
    if (!rc && fl_msz_table_get(ms, t->database, t->name))
        rc = fl_err_set(err, FLUSS_ERR_TABLE_ALREADY_EXIST, "Table %s.%s already exists.",
                        t->database, t->name);
    if (!rc) rc = fl_msz_name_check("Table", t->name, err);
    if (!rc && (t->schema_count < 1 || (size_t)t->schema_id != t->schema_count))
        rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "table %s.%s: schema id %d of %zu schemas",
                        t->database, t->name, t->schema_id, t->schema_count);
    char *reg = NULL;
    if (!rc && !(reg = fl_zk_table_reg_encode(t->table_json, t->schema_jsons[t->schema_count - 1],
                                              t->table_id, t->created_ms, t->modified_ms, err)))
        rc = err ? err->code : FLUSS_ERR__INVALID_ARG;
    if (rc) {
        fl_zk_txn_free(&x);
        return rc;
    }
    size_t at = x.count;
    fl_zk_txn_create(&x, fl_msz_table_path(m, t->database, t->name, NULL), reg, strlen(reg));
    fl_zk_txn_create(&x, fl_msz_table_path(m, t->database, t->name, "/schemas"), NULL, 0);
    for (size_t s = 0; s < t->schema_count; s++) {
        char sub[32];
        snprintf(sub, sizeof(sub), "/schemas/%zu", s + 1);
        fl_zk_txn_create(&x, fl_msz_table_path(m, t->database, t->name, sub),
                         fl_strdup(t->schema_jsons[s]), strlen(t->schema_jsons[s]));
    }
    fl_zk_txn_create(&x, fl_msz_table_path(m, t->database, t->name, "/partitions"), NULL, 0);
    char *counter = t->autoinc_next > 0 ? fl_msz_autoinc_path(m, t) : NULL;
    if (counter) {
        fl_zk_txn_create(&x, fl_msz_table_path(m, t->database, t->name, "/auto_inc"), NULL, 0);
        uint8_t *v = fl_malloc(8);
        fl_zk_counter_encode(t->autoinc_next, v);
        fl_zk_txn_create(&x, counter, (char *)v, 8);
    }
    if (t->bucket_count > 0) fl_msz_add_buckets(m, &x, t->table_id, -1, t->buckets, t->bucket_count);
    char msg[1200];
    snprintf(msg, sizeof(msg), "Table %s.%s already exists.", t->database, t->name);
    if ((rc = fl_msz_run(m, &x, at, ZNODEEXISTS, FLUSS_ERR_TABLE_ALREADY_EXIST, msg, err)))
        return rc;
    if (m->table_count == m->table_cap) {
        m->table_cap = m->table_cap ? m->table_cap * 2 : 8;
        m->tables = fl_realloc(m->tables, m->table_cap * sizeof(*m->tables));
    }
    fl_ms_table_t *c = &m->tables[m->table_count++];
    fl_ms_table_copy(c, t);
    if (!counter) c->autoinc_next = 0; /* not stored: what a reload would read */
    return 0;
}

static int fl_msz_table_drop(fl_metastore_t *ms, const char *db, const char *name,
                             fl_error_t *err) {
    fl_ms_zk_t *m = FL_MSZ(ms);
    fl_zk_txn_t x;
    int rc = fl_msz_begin(m, &x, err);
    size_t at = m->table_count;
    for (size_t i = 0; !rc && i < m->table_count; i++)
        if (strcmp(m->tables[i].database, db) == 0 && strcmp(m->tables[i].name, name) == 0)
            at = i;
    if (!rc && at == m->table_count)
        rc = fl_err_set(err, FLUSS_ERR_TABLE_NOT_EXIST, "Table %s.%s does not exist.", db, name);
    if (!rc) rc = fl_msz_drop_table_ops(m, &x, &m->tables[at], err);
    if (rc) {
        fl_zk_txn_free(&x);
        return rc;
    }
    if ((rc = fl_msz_run(m, &x, SIZE_MAX, 0, 0, "", err))) return rc;
    fl_msz_remove_table_at(m, at);
    return 0;
}

static int fl_msz_partition_create(fl_metastore_t *ms, int64_t table_id,
                                   const fl_ms_partition_t *p, fl_error_t *err) {
    fl_ms_zk_t *m = FL_MSZ(ms);
    fl_zk_txn_t x;
    int rc = fl_msz_begin(m, &x, err);
    fl_ms_table_t *t = rc ? NULL : fl_msz_table_mut(m, table_id);
    if (!rc && !t)
        rc = fl_err_set(err, FLUSS_ERR_TABLE_NOT_EXIST, "Table %lld does not exist.",
                        (long long)table_id);
    if (!rc && fl_ms_table_partition(t, 0, p->name))
        rc = fl_err_set(err, FLUSS_ERR_PARTITION_ALREADY_EXISTS,
                        "Partition '%s' already exists.", p->name);
    if (!rc) rc = fl_msz_name_check("Partition", p->name, err);
    char *data = NULL;
    if (!rc && !(data = fl_zk_partition_encode(table_id, p, err)))
        rc = err ? err->code : FLUSS_ERR__INVALID_ARG;
    if (rc) {
        fl_zk_txn_free(&x);
        return rc;
    }
    size_t at = x.count;
    char *path = fl_msz_table_path(m, t->database, t->name, "/partitions/");
    path = fl_realloc(path, strlen(path) + strlen(p->name) + 1);
    strcat(path, p->name);
    fl_zk_txn_create(&x, path, data, strlen(data));
    fl_msz_add_buckets(m, &x, table_id, p->partition_id, p->buckets, p->bucket_count);
    char msg[1200];
    snprintf(msg, sizeof(msg), "Partition '%s' already exists.", p->name);
    if ((rc = fl_msz_run(m, &x, at, ZNODEEXISTS, FLUSS_ERR_PARTITION_ALREADY_EXISTS, msg, err)))
        return rc;
    t->partitions = fl_realloc(t->partitions, (t->partition_count + 1) * sizeof(*t->partitions));
    fl_ms_partition_copy(&t->partitions[t->partition_count++], p);
    return 0;
}

static int fl_msz_partition_drop(fl_metastore_t *ms, int64_t table_id, int64_t partition_id,
                                 fl_error_t *err) {
    fl_ms_zk_t *m = FL_MSZ(ms);
    fl_zk_txn_t x;
    int rc = fl_msz_begin(m, &x, err);
    fl_ms_table_t *t = rc ? NULL : fl_msz_table_mut(m, table_id);
    size_t at = SIZE_MAX;
    for (size_t i = 0; t && i < t->partition_count; i++)
        if (t->partitions[i].partition_id == partition_id) at = i;
    if (!rc && at == SIZE_MAX)
        rc = fl_err_set(err, FLUSS_ERR_PARTITION_NOT_EXISTS, "Partition %lld does not exist.",
                        (long long)partition_id);
    if (!rc) {
        char *p = fl_msz_assign_path(m, table_id, partition_id, NULL);
        rc = fl_zk_txn_delete_tree(&x, m->conn, p, err);
        fl_free(p);
    }
    if (!rc) {
        char *p = fl_msz_table_path(m, t->database, t->name, "/partitions/");
        p = fl_realloc(p, strlen(p) + strlen(t->partitions[at].name) + 1);
        strcat(p, t->partitions[at].name);
        rc = fl_zk_txn_delete_tree(&x, m->conn, p, err);
        fl_free(p);
    }
    if (rc) {
        fl_zk_txn_free(&x);
        return rc;
    }
    if ((rc = fl_msz_run(m, &x, SIZE_MAX, 0, 0, "", err))) return rc;
    fl_ms_partition_clear(&t->partitions[at]);
    memmove(&t->partitions[at], &t->partitions[at + 1],
            (t->partition_count - at - 1) * sizeof(*t->partitions));
    t->partition_count--;
    return 0;
}

static int fl_msz_table_alter(fl_metastore_t *ms, int64_t table_id, const char *table_json,
                              const char *new_schema_json, int64_t modified_ms,
                              fl_error_t *err) {
    fl_ms_zk_t *m = FL_MSZ(ms);
    fl_zk_txn_t x;
    int rc = fl_msz_begin(m, &x, err);
    fl_ms_table_t *t = rc ? NULL : fl_msz_table_mut(m, table_id);
    if (!rc && !t)
        rc = fl_err_set(err, FLUSS_ERR_TABLE_NOT_EXIST, "Table %lld does not exist.",
                        (long long)table_id);
    if (!rc && new_schema_json && t->schema_id >= INT16_MAX)
        rc = fl_err_set(err, FLUSS_ERR_INVALID_ALTER_TABLE_EXCEPTION,
                        "Table %s.%s has %d schemas, the most a batch header can name.",
                        t->database, t->name, t->schema_id);
    const char *latest = rc ? NULL : new_schema_json ? new_schema_json
                                                     : t->schema_jsons[t->schema_count - 1];
    char *reg = NULL;
    if (!rc && !(reg = fl_zk_table_reg_encode(table_json, latest, table_id, t->created_ms,
                                              modified_ms, err)))
        rc = err ? err->code : FLUSS_ERR__INVALID_ARG;
    if (rc) {
        fl_zk_txn_free(&x);
        return rc;
    }
    fl_zk_txn_set(&x, fl_msz_table_path(m, t->database, t->name, NULL), reg, strlen(reg), -1);
    if (new_schema_json) {
        char sub[32];
        snprintf(sub, sizeof(sub), "/schemas/%zu", t->schema_count + 1);
        fl_zk_txn_create(&x, fl_msz_table_path(m, t->database, t->name, sub),
                         fl_strdup(new_schema_json), strlen(new_schema_json));
    }
    if ((rc = fl_msz_run(m, &x, SIZE_MAX, 0, 0, "", err))) return rc;
    fl_free(t->table_json);
    t->table_json = fl_strdup(table_json);
    t->modified_ms = modified_ms;
    if (new_schema_json) {
        t->schema_jsons = fl_realloc(t->schema_jsons, (t->schema_count + 1) * sizeof(char *));
        t->schema_jsons[t->schema_count++] = fl_strdup(new_schema_json);
        t->schema_id++;
    }
    return 0;
}

/* Adds count to the counter at path (created at 0 when missing) with a
 * fenced compare-and-set; *first is the value before. Another writer
 * between the read and the write (version moved) makes it read again. */
static int fl_msz_counter_add(fl_ms_zk_t *m, const char *path, const char *parent,
                              int64_t count, int64_t *first, fl_error_t *err) {
    if (count < 1) count = 1;
    fl_buf_t buf;
    fl_buf_init(&buf);
    int rc = 0;
    for (int attempt = 0; attempt < FL_MSZ_COUNTER_RETRIES; attempt++) {
        fl_zk_txn_t x;
        if ((rc = fl_msz_begin(m, &x, err))) break;
        struct Stat st;
        bool missing;
        int64_t v = 0;
        rc = fl_zk_get(m->conn, path, &buf, &st, &missing, err);
        if (!rc && !missing) rc = fl_zk_counter_decode(buf.data, buf.len, &v, err);
        if (!rc && count > INT64_MAX - v)
            rc = fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR, "counter %s is exhausted", path);
        if (rc) {
            fl_zk_txn_free(&x);
            break;
        }
        uint8_t *data = fl_malloc(8);
        fl_zk_counter_encode(v + count, data);
        if (missing && parent) {
            struct Stat pst;
            if (zoo_exists(m->conn->zh, parent, 0, &pst) == ZNONODE)
                fl_zk_txn_create(&x, fl_strdup(parent), NULL, 0);
        }
        if (missing) fl_zk_txn_create(&x, fl_strdup(path), (char *)data, 8);
        else fl_zk_txn_set(&x, fl_strdup(path), (char *)data, 8, st.version);
        int zrc;
        size_t failed;
        rc = fl_msz_commit(m, &x, &zrc, &failed, err);
        fl_zk_txn_free(&x);
        if (rc == FL_ZK_TXN_OP_FAILED &&
            (zrc == ZBADVERSION || zrc == ZNODEEXISTS || zrc == ZNONODE))
            continue; /* raced: read again */
        if (rc == FL_ZK_TXN_OP_FAILED) rc = err ? err->code : FLUSS_ERR__STATE;
        if (!rc) *first = v;
        break;
    }
    if (rc == FL_ZK_TXN_OP_FAILED)
        rc = fl_err_set(err, FLUSS_ERR__STATE, "counter %s: too many concurrent updates", path);
    fl_buf_free(&buf);
    return rc;
}

static int fl_msz_reserve_ids(fl_metastore_t *ms, enum fl_ms_counter c, int64_t count,
                              int64_t *first, fl_error_t *err) {
    fl_ms_zk_t *m = FL_MSZ(ms);
    char *path = fl_zk_path(m->conn, "%s", fl_msz_counter_paths[c]);
    int rc = fl_msz_counter_add(m, path, NULL, count, first, err);
    fl_free(path);
    return rc;
}

static int fl_msz_next_id(fl_metastore_t *ms, enum fl_ms_counter c, int64_t *out,
                          fl_error_t *err) {
    return fl_msz_reserve_ids(ms, c, 1, out, err);
}

static int fl_msz_reserve_table_ids(fl_metastore_t *ms, int64_t table_id, int64_t count,
                                    int64_t *first, fl_error_t *err) {
    fl_ms_zk_t *m = FL_MSZ(ms);
    fl_ms_table_t *t = fl_msz_table_mut(m, table_id);
    if (!t)
        return fl_err_set(err, FLUSS_ERR_TABLE_NOT_EXIST, "Table %lld does not exist.",
                          (long long)table_id);
    char *path = fl_msz_autoinc_path(m, t);
    if (!path)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "Table %s.%s has no auto-increment column: its schema names none",
                          t->database, t->name);
    char *parent = fl_msz_table_path(m, t->database, t->name, "/auto_inc");
    if (count < 1) count = 1;
    int rc = fl_msz_counter_add(m, path, parent, count, first, err);
    fl_free(path);
    fl_free(parent);
    /* a reload in between may have moved the table */
    if (!rc && (t = fl_msz_table_mut(m, table_id))) t->autoinc_next = *first + count;
    return rc;
}

/* The ACL and SCRAM caches (written in metastore_zk_acl.c and
 * metastore_zk_scram.c, reloaded with the rest). */
static size_t fl_msz_acl_count(fl_metastore_t *ms) { return FL_MSZ(ms)->acl_count; }
static const fl_ms_acl_node_t *fl_msz_acl_at(fl_metastore_t *ms, size_t i) {
    return i < FL_MSZ(ms)->acl_count ? &FL_MSZ(ms)->acls[i] : NULL;
}
static size_t fl_msz_scram_count(fl_metastore_t *ms) { return FL_MSZ(ms)->scram_count; }
static const fl_ms_scram_node_t *fl_msz_scram_at(fl_metastore_t *ms, size_t i) {
    return i < FL_MSZ(ms)->scram_count ? &FL_MSZ(ms)->scrams[i] : NULL;
}

static const struct fl_metastore_ops fl_msz_ops = {
    .close = fl_msz_close,
    .db_count = fl_msz_db_count,
    .db_at = fl_msz_db_at,
    .db_get = fl_msz_db_get,
    .db_create = fl_msz_db_create,
    .db_drop = fl_msz_db_drop,
    .table_count = fl_msz_table_count,
    .table_at = fl_msz_table_at,
    .table_get = fl_msz_table_get,
    .table_by_id = fl_msz_table_by_id,
    .table_create = fl_msz_table_create,
    .table_drop = fl_msz_table_drop,
    .partition_create = fl_msz_partition_create,
    .partition_drop = fl_msz_partition_drop,
    .table_alter = fl_msz_table_alter,
    .next_id = fl_msz_next_id,
    .reserve_ids = fl_msz_reserve_ids,
    .reserve_table_ids = fl_msz_reserve_table_ids,
    .bucket_leader_set = fl_metastore_zk_bucket_leader_set,
    .acl_count = fl_msz_acl_count,
    .acl_at = fl_msz_acl_at,
    .acl_put = fl_msz_acl_put,
    .scram_count = fl_msz_scram_count,
    .scram_at = fl_msz_scram_at,
    .scram_put = fl_msz_scram_put,
};

int fl_metastore_zk_open(const char *connect_string, const char *root, int session_timeout_ms,
                         int connect_timeout_ms, fl_metastore_t **out, fl_error_t *err) {
    fl_ms_zk_t *m = fl_calloc(1, sizeof(*m));
    m->base.ops = &fl_msz_ops;
    m->epoch = -1;
    int rc = fl_zk_conn_open(connect_string, root, session_timeout_ms, connect_timeout_ms,
                             &m->conn, err);
    static const char *const bases[] = {FL_ZK_DATABASES, "/coordinators", FL_ZK_SERVER_IDS,
                                        FL_ZK_TABLE_IDS, FL_ZK_PARTITION_IDS};
    for (size_t i = 0; !rc && i < sizeof(bases) / sizeof(bases[0]); i++) {
        char *p = fl_zk_path(m->conn, "%s", bases[i]);
        rc = fl_zk_ensure(m->conn, p, err);
        fl_free(p);
    }
    if (!rc) rc = fl_msz_reload(m, err);
    if (rc) {
        fl_msz_close(&m->base);
        return rc;
    }
    *out = &m->base;
    return 0;
}

fl_zk_conn_t *fl_metastore_zk_conn(fl_metastore_t *ms) { return FL_MSZ(ms)->conn; }
