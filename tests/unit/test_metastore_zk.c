/*
 * test_metastore_zk.c — the ZooKeeper metastore (metastore_zk.h) against a
 * throwaway ZooKeeper this test starts from Debian's package
 * (tests/zk/start, loopback, a free port) and stops by its PID: the same
 * DDL and counter sequence as the embedded store gives the same results
 * and return codes, and both read back the same after a reopen; Fluss's
 * znode layout is what zkCli would show; a second coordinator's epoch
 * fences the first one's writes; a coordinator whose session expired is
 * demoted and writes nothing; a standby's watch wakes it when the active
 * one goes; a tablet server's ephemeral registration vanishes with
 * its session and a new one gets a larger incarnation epoch; counters
 * never reissue after a reopen; LeaderAndIsr updates are conditional on
 * the znode version; ACL documents live at Fluss's /fluss-acls/<TYPE>/<name>
 * byte for byte, every change leaves a /fluss-acl-changes notification, a
 * second store reads them back, and a fenced coordinator writes none;
 * SCRAM credentials live at /fluss-scram/<mechanism>/<user> byte for byte,
 * user names ZooKeeper cannot take are refused clearly, a second store
 * reads them back, a fenced coordinator writes none, and a znode name
 * this store cannot hold fails the load instead of vanishing.
 * Each test works under its own root prefix.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <zookeeper/zookeeper.h>

#include "test_tmpdir.h"

#include "common_buf.h"
#include "metastore.h"
#include "metastore_zk.h"
#include "metastore_zk_int.h" /* the session's handle, to expire it */

static char g_zk_dir[64];
static char g_connect[64];

static int group_setup(void **state) {
    (void)state;
    /* the raw handles below log to stderr; their INFO lines are noise */
    zoo_set_debug_level(ZOO_LOG_LEVEL_WARN);
    snprintf(g_zk_dir, sizeof(g_zk_dir), "/tmp/fluss_zk_XXXXXX");
    if (!mkdtemp(g_zk_dir)) return -1;
    char cmd[512];
    /* ZK_OWNER_PID: the ZooKeeper goes with this process if it dies before
     * its teardown */
    snprintf(cmd, sizeof(cmd), "ZK_OWNER_PID=%d %s/tests/zk/start %s/zk 0", (int)getpid(),
             FLUSS_SOURCE_DIR, g_zk_dir);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    char line[32] = "";
    char *got = fgets(line, sizeof(line), p);
    int rc = pclose(p);
    if (!got || rc != 0) {
        fprintf(stderr, "tests/zk/start failed (exit %d)\n", rc);
        return -1;
    }
    line[strcspn(line, "\n")] = '\0';
    snprintf(g_connect, sizeof(g_connect), "127.0.0.1:%s", line);
    return 0;
}

static int group_teardown(void **state) {
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "%s/tests/zk/stop %s/zk && rm -rf %s", FLUSS_SOURCE_DIR, g_zk_dir,
             g_zk_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- helpers ---- */

static fl_metastore_t *zk_open(const char *root) {
    fl_metastore_t *ms = NULL;
    fl_error_t err;
    if (fl_metastore_zk_open(g_connect, root, 6000, 15000, &ms, &err))
        fail_msg("open %s%s: %s", g_connect, root, err.msg);
    return ms;
}

static fl_metastore_t *zk_open_active(const char *root, const char *id) {
    fl_metastore_t *ms = zk_open(root);
    fl_error_t err;
    bool active = false;
    if (fl_metastore_zk_elect(ms, id, "INTERNAL://127.0.0.1:9123", 5000, &active, &err))
        fail_msg("elect: %s", err.msg);
    assert_true(active);
    return ms;
}

static fl_metastore_t *emb_open(const char *dir) {
    fl_metastore_t *ms = NULL;
    fl_error_t err;
    if (fl_metastore_embedded_open(dir, &ms, &err)) fail_msg("open %s: %s", dir, err.msg);
    return ms;
}

static void schema_json(char *out, size_t n, const char *name, int version) {
    snprintf(out, n,
             "{\"version\":1,\"columns\":[{\"name\":\"id\",\"data_type\":{\"type\":\"BIGINT\"},"
             "\"id\":0},{\"name\":\"v%s%d\",\"data_type\":{\"type\":\"STRING\"},\"id\":%d}],"
             "\"auto_increment_column\":[\"id\"],\"highest_field_id\":%d}",
             name, version, version, version);
}

static void table_json(char *out, size_t n, const char *schema, int32_t buckets,
                       const char *prop) {
    snprintf(out, n,
             "{\"version\":1,\"schema\":%s,\"comment\":\"t\",\"partition_key\":[],"
             "\"bucket_key\":[\"id\"],\"bucket_count\":%d,\"properties\":{\"k\":\"%s\"},"
             "\"custom_properties\":{}}",
             schema, buckets ? buckets : 1, prop);
}

static int make_table(fl_metastore_t *ms, const char *db, const char *name, int32_t buckets,
                      fl_error_t *err) {
    fl_ms_table_t t;
    memset(&t, 0, sizeof(t));
    int rc = ms->ops->next_id(ms, FL_MS_COUNTER_TABLE_ID, &t.table_id, err);
    if (rc) return rc;
    char s1[512], s2[512], tj[1200];
    schema_json(s1, sizeof(s1), name, 1);
    schema_json(s2, sizeof(s2), name, 2);
    table_json(tj, sizeof(tj), s2, buckets, "a");
    char *schemas[2] = {s1, s2};
    fl_ms_bucket_t b[8];
    memset(b, 0, sizeof(b));
    for (int32_t i = 0; i < buckets; i++) {
        b[i].leader = 100 + i;
        b[i].leader_epoch = i * 3;
        b[i].replica_count = 2;
        b[i].replicas[0] = 100 + i;
        b[i].replicas[1] = 200 + i;
    }
    t.database = (char *)db;
    t.name = (char *)name;
    t.schema_id = 2;
    t.table_json = tj;
    t.schema_count = 2;
    t.schema_jsons = schemas;
    t.created_ms = 1796208227741 + t.table_id;
    t.modified_ms = 1796208227999 + t.table_id;
    t.bucket_count = buckets;
    t.buckets = b;
    return ms->ops->table_create(ms, &t, err);
}

static void dump_buckets(fl_buf_t *out, const fl_ms_bucket_t *b, int32_t n) {
    char line[256];
    for (int32_t i = 0; i < n; i++) {
        int k = snprintf(line, sizeof(line), "  b%d leader %d epoch %d replicas", i, b[i].leader,
                         b[i].leader_epoch);
        for (int32_t r = 0; r < b[i].replica_count; r++)
            k += snprintf(line + k, sizeof(line) - (size_t)k, " %d", b[i].replicas[r]);
        snprintf(line + k, sizeof(line) - (size_t)k, "\n");
        fl_buf_append(out, line, strlen(line));
    }
}

static void put(fl_buf_t *out, const char *fmt, ...) {
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fl_buf_append(out, line, strlen(line));
}

/* Everything a store shows through metastore.h, as text. */
static char *dump(fl_metastore_t *ms) {
    fl_buf_t out;
    fl_buf_init(&out);
    for (size_t i = 0; i < ms->ops->db_count(ms); i++) {
        const fl_ms_database_t *d = ms->ops->db_at(ms, i);
        assert_ptr_equal(ms->ops->db_get(ms, d->name), d);
        put(&out, "db %s %s %lld %lld\n", d->name, d->json, (long long)d->created_ms,
            (long long)d->modified_ms);
    }
    for (size_t i = 0; i < ms->ops->table_count(ms); i++) {
        const fl_ms_table_t *t = ms->ops->table_at(ms, i);
        assert_ptr_equal(ms->ops->table_get(ms, t->database, t->name), t);
        assert_ptr_equal(ms->ops->table_by_id(ms, t->table_id), t);
        put(&out, "table %s.%s id %lld schema %d %lld %lld autoinc %lld\n  %s\n", t->database,
            t->name, (long long)t->table_id, t->schema_id, (long long)t->created_ms,
            (long long)t->modified_ms, (long long)t->autoinc_next, t->table_json);
        for (size_t s = 0; s < t->schema_count; s++) put(&out, "  schema %s\n", t->schema_jsons[s]);
        dump_buckets(&out, t->buckets, t->bucket_count);
        for (size_t p = 0; p < t->partition_count; p++) {
            const fl_ms_partition_t *pp = &t->partitions[p];
            put(&out, "  partition %lld %s %lld values", (long long)pp->partition_id, pp->name,
                (long long)pp->created_ms);
            for (size_t v = 0; v < pp->value_count; v++) put(&out, " %s", pp->values[v]);
            put(&out, "\n");
            dump_buckets(&out, pp->buckets, pp->bucket_count);
        }
    }
    for (size_t i = 0; i < ms->ops->acl_count(ms); i++) {
        const fl_ms_acl_node_t *a = ms->ops->acl_at(ms, i);
        put(&out, "acl %d %s %s\n", a->resource_type, a->resource_name, a->json);
    }
    assert_null(ms->ops->acl_at(ms, ms->ops->acl_count(ms)));
    for (size_t i = 0; i < ms->ops->scram_count(ms); i++) {
        const fl_ms_scram_node_t *n = ms->ops->scram_at(ms, i);
        put(&out, "scram %s %s %s\n", n->user, n->mechanism, n->credential);
    }
    assert_null(ms->ops->scram_at(ms, ms->ops->scram_count(ms)));
    put(&out, "end\n");
    fl_buf_append(&out, "", 1);
    return (char *)out.data;
}

static void same(fl_metastore_t *a, fl_metastore_t *b, const char *when) {
    char *x = dump(a), *y = dump(b);
    if (strcmp(x, y) != 0) fail_msg("%s: embedded\n%s\nzookeeper\n%s", when, x, y);
    free(x);
    free(y);
}

/* The same call on both stores returns the same code (and value). */
#define BOTH(call_e, call_z)                                                                   \
    do {                                                                                       \
        fl_error_t e1, e2;                                                                     \
        fl_err_clear(&e1);                                                                     \
        fl_err_clear(&e2);                                                                     \
        int r1 = (call_e), r2 = (call_z);                                                      \
        if (r1 != r2) fail_msg("%s: embedded %d (%s), zookeeper %d (%s)", #call_e, r1, e1.msg, \
                               r2, e2.msg);                                                    \
    } while (0)

static void raw_get(const char *path, char *out, int *len) {
    zhandle_t *zh = zookeeper_init(g_connect, NULL, 6000, NULL, NULL, 0);
    assert_non_null(zh);
    int rc;
    for (int i = 0; i < 100; i++) { /* the session comes up asynchronously */
        rc = zoo_get(zh, path, 0, out, len, NULL);
        if (rc != ZCONNECTIONLOSS && rc != ZINVALIDSTATE) break;
        usleep(50000);
    }
    if (rc != ZOK) fail_msg("get %s: %s", path, zerror(rc));
    zookeeper_close(zh);
}

static int name_cmp(const void *a, const void *b) { return strcmp(a, b); }

/* The children of path, sorted, and how many; ZNONODE gives 0. */
static int raw_children(const char *path, char names[][64], int max) {
    zhandle_t *zh = zookeeper_init(g_connect, NULL, 6000, NULL, NULL, 0);
    assert_non_null(zh);
    struct String_vector kids = {0};
    int rc;
    for (int i = 0; i < 100; i++) {
        rc = zoo_get_children(zh, path, 0, &kids);
        if (rc != ZCONNECTIONLOSS && rc != ZINVALIDSTATE) break;
        usleep(50000);
    }
    zookeeper_close(zh);
    if (rc == ZNONODE) return 0;
    if (rc != ZOK) fail_msg("list %s: %s", path, zerror(rc));
    int n = kids.count;
    assert_true(n <= max);
    for (int i = 0; i < n; i++) snprintf(names[i], 64, "%s", kids.data[i]);
    deallocate_String_vector(&kids);
    qsort(names, (size_t)n, 64, name_cmp);
    return n;
}

static int raw_create(const char *path, const char *data) {
    zhandle_t *zh = zookeeper_init(g_connect, NULL, 6000, NULL, NULL, 0);
    assert_non_null(zh);
    int rc;
    for (int i = 0; i < 100; i++) {
        rc = zoo_create(zh, path, data, (int)strlen(data), &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT,
                        NULL, 0);
        if (rc != ZCONNECTIONLOSS && rc != ZINVALIDSTATE) break;
        usleep(50000);
    }
    zookeeper_close(zh);
    return rc;
}

static int raw_delete(const char *path) {
    zhandle_t *zh = zookeeper_init(g_connect, NULL, 6000, NULL, NULL, 0);
    assert_non_null(zh);
    int rc;
    for (int i = 0; i < 100; i++) {
        rc = zoo_delete(zh, path, -1);
        if (rc != ZCONNECTIONLOSS && rc != ZINVALIDSTATE) break;
        usleep(50000);
    }
    zookeeper_close(zh);
    return rc;
}

/* ---- the embedded store's sequence, on both ---- */

static void test_same_as_embedded(void **state) {
    const char *dir = *state;
    fl_metastore_t *e = emb_open(dir), *z = zk_open_active("/same", "c1");
    same(e, z, "empty");
    fl_ms_database_t db = {.name = "d1", .json = "{\"version\":1,\"custom_properties\":{}}",
                           .created_ms = 11, .modified_ms = 12};
    BOTH(e->ops->db_create(e, &db, &e1), z->ops->db_create(z, &db, &e2));
    db.name = "d2";
    db.json = "{\"version\":1,\"comment\":\"second\",\"custom_properties\":{\"a\":\"b\"}}";
    db.created_ms = 21;
    BOTH(e->ops->db_create(e, &db, &e1), z->ops->db_create(z, &db, &e2));
    BOTH(e->ops->db_create(e, &db, &e1), z->ops->db_create(z, &db, &e2));
    assert_int_equal(z->ops->db_create(z, &db, NULL), FLUSS_ERR_DATABASE_ALREADY_EXIST);
    BOTH(make_table(e, "d1", "a", 3, &e1), make_table(z, "d1", "a", 3, &e2));
    BOTH(make_table(e, "d2", "b", 0, &e1), make_table(z, "d2", "b", 0, &e2));
    BOTH(make_table(e, "d2", "c", 8, &e1), make_table(z, "d2", "c", 8, &e2));
    BOTH(make_table(e, "d2", "c", 1, &e1), make_table(z, "d2", "c", 1, &e2));
    BOTH(make_table(e, "nodb", "x", 1, &e1), make_table(z, "nodb", "x", 1, &e2));
    assert_int_equal(make_table(e, "nodb", "x", 1, NULL), FLUSS_ERR_DATABASE_NOT_EXIST);
    assert_int_equal(make_table(z, "nodb", "x", 1, NULL), FLUSS_ERR_DATABASE_NOT_EXIST);
    same(e, z, "after creates");

    /* partitions */
    int64_t tid = e->ops->table_get(e, "d2", "b")->table_id;
    char *values[2] = {"2026", "eu"};
    fl_ms_bucket_t pb[2] = {{.leader = 7, .replica_count = 1, .replicas = {7}},
                            {.leader = 8, .leader_epoch = 3, .replica_count = 1, .replicas = {8}}};
    fl_ms_partition_t p = {.partition_id = 41, .name = "2026$eu", .values = values,
                           .value_count = 2, .created_ms = 99, .bucket_count = 2, .buckets = pb};
    BOTH(e->ops->partition_create(e, tid, &p, &e1), z->ops->partition_create(z, tid, &p, &e2));
    BOTH(e->ops->partition_create(e, tid, &p, &e1), z->ops->partition_create(z, tid, &p, &e2));
    p.partition_id = 42;
    p.name = "2027$eu";
    values[0] = "2027";
    BOTH(e->ops->partition_create(e, tid, &p, &e1), z->ops->partition_create(z, tid, &p, &e2));
    p.partition_id = 43;
    p.name = "2028$eu";
    values[0] = "2028";
    BOTH(e->ops->partition_create(e, tid, &p, &e1), z->ops->partition_create(z, tid, &p, &e2));
    BOTH(e->ops->partition_create(e, 999, &p, &e1), z->ops->partition_create(z, 999, &p, &e2));
    BOTH(e->ops->partition_drop(e, tid, 41, &e1), z->ops->partition_drop(z, tid, 41, &e2));
    BOTH(e->ops->partition_drop(e, tid, 41, &e1), z->ops->partition_drop(z, tid, 41, &e2));
    same(e, z, "after partitions");

    /* alter: properties only, then with a new schema */
    int64_t aid = e->ops->table_get(e, "d1", "a")->table_id;
    char s2[512], s3[512], tj[1200];
    schema_json(s2, sizeof(s2), "a", 2);
    schema_json(s3, sizeof(s3), "a", 3);
    table_json(tj, sizeof(tj), s2, 3, "altered");
    BOTH(e->ops->table_alter(e, aid, tj, NULL, 5000, &e1),
         z->ops->table_alter(z, aid, tj, NULL, 5000, &e2));
    table_json(tj, sizeof(tj), s3, 3, "altered again");
    BOTH(e->ops->table_alter(e, aid, tj, s3, 6000, &e1),
         z->ops->table_alter(z, aid, tj, s3, 6000, &e2));
    BOTH(e->ops->table_alter(e, 999, tj, s3, 6000, &e1),
         z->ops->table_alter(z, 999, tj, s3, 6000, &e2));
    same(e, z, "after alter");

    /* counters, global and per table */
    for (int c = 0; c < FL_MS_COUNTER_COUNT; c++) {
        int64_t v1 = -1, v2 = -2;
        BOTH(e->ops->next_id(e, c, &v1, &e1), z->ops->next_id(z, c, &v2, &e2));
        assert_int_equal(v1, v2);
        BOTH(e->ops->reserve_ids(e, c, 1000, &v1, &e1), z->ops->reserve_ids(z, c, 1000, &v2, &e2));
        assert_int_equal(v1, v2);
    }
    int64_t v1 = -1, v2 = -2;
    BOTH(e->ops->reserve_table_ids(e, aid, 100, &v1, &e1),
         z->ops->reserve_table_ids(z, aid, 100, &v2, &e2));
    assert_int_equal(v1, 0);
    assert_int_equal(v2, 0);
    BOTH(e->ops->reserve_table_ids(e, aid, 100, &v1, &e1),
         z->ops->reserve_table_ids(z, aid, 100, &v2, &e2));
    assert_int_equal(v1, 100);
    assert_int_equal(v2, 100);
    BOTH(e->ops->reserve_table_ids(e, 999, 5, &v1, &e1),
         z->ops->reserve_table_ids(z, 999, 5, &v2, &e2));
    same(e, z, "after counters");

    /* ACLs */
    const char *doc = "{\"version\":1,\"acls\":[{\"principal_type\":\"User\",\"principal_name\":"
                      "\"guest\",\"permission_type\":\"ALLOW\",\"host\":\"*\",\"operation\":\"READ\"}]}";
    BOTH(e->ops->acl_put(e, 4, "d1.a", doc, &e1), z->ops->acl_put(z, 4, "d1.a", doc, &e2));
    BOTH(e->ops->acl_put(e, 2, "fluss-cluster", "{}", &e1),
         z->ops->acl_put(z, 2, "fluss-cluster", "{}", &e2));
    BOTH(e->ops->acl_put(e, 3, "d2", doc, &e1), z->ops->acl_put(z, 3, "d2", doc, &e2));
    BOTH(e->ops->acl_put(e, 3, "*", doc, &e1), z->ops->acl_put(z, 3, "*", doc, &e2));
    BOTH(e->ops->acl_put(e, 2, "fluss-cluster", doc, &e1),
         z->ops->acl_put(z, 2, "fluss-cluster", doc, &e2));
    BOTH(e->ops->acl_put(e, 3, "d2", NULL, &e1), z->ops->acl_put(z, 3, "d2", NULL, &e2));
    BOTH(e->ops->acl_put(e, 3, "d2", NULL, &e1), z->ops->acl_put(z, 3, "d2", NULL, &e2));
    BOTH(e->ops->acl_put(e, 1, "x", doc, &e1), z->ops->acl_put(z, 1, "x", doc, &e2));
    BOTH(e->ops->acl_put(e, 4, "", doc, &e1), z->ops->acl_put(z, 4, "", doc, &e2));
    assert_int_equal(z->ops->acl_count(z), 3);
    same(e, z, "after acls");

    /* SCRAM credentials */
    char too_long[FL_MS_SCRAM_USER_MAX + 2];
    memset(too_long, 'u', sizeof(too_long) - 1);
    too_long[sizeof(too_long) - 1] = '\0';
    BOTH(e->ops->scram_put(e, "bob", FL_MS_SCRAM_SHA_512, "b", &e1),
         z->ops->scram_put(z, "bob", FL_MS_SCRAM_SHA_512, "b", &e2));
    BOTH(e->ops->scram_put(e, "alice", FL_MS_SCRAM_SHA_512, "a5", &e1),
         z->ops->scram_put(z, "alice", FL_MS_SCRAM_SHA_512, "a5", &e2));
    BOTH(e->ops->scram_put(e, "alice", FL_MS_SCRAM_SHA_256, "a2", &e1),
         z->ops->scram_put(z, "alice", FL_MS_SCRAM_SHA_256, "a2", &e2));
    BOTH(e->ops->scram_put(e, "alice", FL_MS_SCRAM_SHA_256, "a2'", &e1),
         z->ops->scram_put(z, "alice", FL_MS_SCRAM_SHA_256, "a2'", &e2));
    BOTH(e->ops->scram_put(e, "bob", FL_MS_SCRAM_SHA_512, NULL, &e1),
         z->ops->scram_put(z, "bob", FL_MS_SCRAM_SHA_512, NULL, &e2));
    BOTH(e->ops->scram_put(e, "bob", FL_MS_SCRAM_SHA_512, NULL, &e1),
         z->ops->scram_put(z, "bob", FL_MS_SCRAM_SHA_512, NULL, &e2));
    BOTH(e->ops->scram_put(e, "x", "SCRAM-SHA-1", "c", &e1),
         z->ops->scram_put(z, "x", "SCRAM-SHA-1", "c", &e2));
    BOTH(e->ops->scram_put(e, "", FL_MS_SCRAM_SHA_256, "c", &e1),
         z->ops->scram_put(z, "", FL_MS_SCRAM_SHA_256, "c", &e2));
    BOTH(e->ops->scram_put(e, too_long, FL_MS_SCRAM_SHA_256, "c", &e1),
         z->ops->scram_put(z, too_long, FL_MS_SCRAM_SHA_256, "c", &e2));
    BOTH(e->ops->scram_put(e, too_long + 1, FL_MS_SCRAM_SHA_256, "c", &e1),
         z->ops->scram_put(z, too_long + 1, FL_MS_SCRAM_SHA_256, "c", &e2));
    assert_int_equal(z->ops->scram_count(z), 3);
    same(e, z, "after scram");

    /* reopened, both read back the same */
    e->ops->close(e);
    z->ops->close(z);
    e = emb_open(dir);
    z = zk_open_active("/same", "c1");
    same(e, z, "after reopen");

    /* what zkCli shows is Fluss's layout */
    char buf[4096];
    int len = sizeof(buf) - 1;
    raw_get("/same/metadata/databases/d1/tables/a", buf, &len);
    buf[len] = '\0';
    assert_non_null(strstr(buf, "\"table_id\":0,"));
    assert_null(strstr(buf, "\"schema\""));
    assert_non_null(strstr(buf, "\"created_time\":1796208227741,\"modified_time\":6000}"));
    len = sizeof(buf);
    raw_get("/same/metadata/table_seqid", buf, &len);
    assert_int_equal(len, 8); /* big-endian long: 6 ids asked for, + 1 + 1000 */
    assert_int_equal((unsigned char)buf[6], (1007 >> 8) & 0xff);
    assert_int_equal((unsigned char)buf[7], 1007 & 0xff);
    len = sizeof(buf) - 1;
    raw_get("/same/tabletservers/tables/0/buckets/1/leader_isr", buf, &len);
    buf[len] = '\0';
    assert_string_equal(buf, "{\"version\":1,\"leader\":101,\"leader_epoch\":3,\"isr\":[101,201],"
                             "\"coordinator_epoch\":0,\"bucket_epoch\":0}");
    len = sizeof(buf) - 1;
    raw_get("/same/tabletservers/tables/0", buf, &len);
    buf[len] = '\0';
    assert_string_equal(buf, "{\"version\":1,\"buckets\":{\"0\":[100,200],\"1\":[101,201],"
                             "\"2\":[102,202]}}");
    len = sizeof(buf) - 1;
    raw_get("/same/metadata/databases/d1/tables/a/schemas/3", buf, &len);
    buf[len] = '\0';
    assert_string_equal(buf, s3);

    /* drops: a table, then a database with its tables and partitions */
    BOTH(e->ops->table_drop(e, "d1", "a", &e1), z->ops->table_drop(z, "d1", "a", &e2));
    BOTH(e->ops->table_drop(e, "d1", "a", &e1), z->ops->table_drop(z, "d1", "a", &e2));
    BOTH(e->ops->db_drop(e, "d2", &e1), z->ops->db_drop(z, "d2", &e2));
    BOTH(e->ops->db_drop(e, "d2", &e1), z->ops->db_drop(z, "d2", &e2));
    same(e, z, "after drops");
    e->ops->close(e);
    z->ops->close(z);
    e = emb_open(dir);
    z = zk_open("/same"); /* a standby reads the same */
    same(e, z, "after drops, reopened");
    assert_int_equal(raw_delete("/same/tabletservers/tables/0"), ZNONODE);
    assert_int_equal(raw_delete("/same/tabletservers/partitions/42"), ZNONODE);
    e->ops->close(e);
    z->ops->close(z);
}

/* ---- ACLs ---- */

#define ACL_DOC(op)                                                                           \
    "{\"version\":1,\"acls\":[{\"principal_type\":\"User\",\"principal_name\":\"guest\","  \
    "\"permission_type\":\"ALLOW\",\"host\":\"*\",\"operation\":\"" op "\"}]}"

static void expect_raw(const char *path, const char *want) {
    char buf[4096];
    int len = sizeof(buf) - 1;
    raw_get(path, buf, &len);
    assert_true(len >= 0);
    buf[len] = '\0';
    assert_int_equal((size_t)len, strlen(want));
    assert_string_equal(buf, want);
}

/* The notifications under /acl/fluss-acl-changes, in order, must say want[]. */
static void expect_notes(const char *const *want, int n) {
    char names[32][64];
    int got = raw_children("/acl/fluss-acl-changes", names, 32);
    assert_int_equal(got, n);
    for (int i = 0; i < n; i++) {
        /* acl_changes_ and ZooKeeper's 10-digit sequence */
        assert_int_equal(strlen(names[i]), strlen("acl_changes_") + 10);
        assert_memory_equal(names[i], "acl_changes_", strlen("acl_changes_"));
        char path[128];
        snprintf(path, sizeof(path), "/acl/fluss-acl-changes/%s", names[i]);
        expect_raw(path, want[i]);
    }
}

static void test_acls(void **state) {
    (void)state;
    fl_error_t err;
    fl_metastore_t *a = zk_open_active("/acl", "a");
    assert_int_equal(a->ops->acl_count(a), 0);
    /* a document with what JSON escapes: quotes, a newline, non-ASCII */
    const char *odd = "{\"version\":1,\"acls\":[],\"note\":\"line\nbreak \\\"q\\\" h\u00e9\"}";
    assert_int_equal(a->ops->acl_put(a, 4, "db.t", ACL_DOC("READ"), &err), 0);
    assert_int_equal(a->ops->acl_put(a, 2, "fluss-cluster", ACL_DOC("DESCRIBE"), &err), 0);
    assert_int_equal(a->ops->acl_put(a, 3, "db", odd, &err), 0);
    assert_int_equal(a->ops->acl_put(a, 4, "*", ACL_DOC("WRITE"), &err), 0);
    assert_int_equal(a->ops->acl_put(a, 4, "db.t", ACL_DOC("ALL"), &err), 0); /* replaced */
    assert_int_equal(a->ops->acl_put(a, 3, "gone", ACL_DOC("DROP"), &err), 0);
    assert_int_equal(a->ops->acl_put(a, 3, "gone", NULL, &err), 0);
    /* deleting nothing: no error, no write, no notification */
    assert_int_equal(a->ops->acl_put(a, 3, "gone", NULL, &err), 0);
    assert_int_equal(a->ops->acl_put(a, 4, "never", NULL, &err), 0);
    /* what has no znode */
    assert_int_equal(a->ops->acl_put(a, 4, "db/t", ACL_DOC("READ"), &err), FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(err.msg, "'/'"));
    assert_int_equal(a->ops->acl_put(a, 1, "x", ACL_DOC("READ"), &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(a->ops->acl_put(a, 4, "..", ACL_DOC("READ"), &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(a->ops->acl_put(a, 4, "", ACL_DOC("READ"), &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(a->ops->acl_count(a), 4);

    /* at the reference's paths, the document's exact bytes */
    expect_raw("/acl/fluss-acls/TABLE/db.t", ACL_DOC("ALL"));
    expect_raw("/acl/fluss-acls/TABLE/*", ACL_DOC("WRITE"));
    expect_raw("/acl/fluss-acls/CLUSTER/fluss-cluster", ACL_DOC("DESCRIBE"));
    expect_raw("/acl/fluss-acls/DATABASE/db", odd);
    assert_int_equal(raw_delete("/acl/fluss-acls/DATABASE/gone"), ZNONODE);
    char names[8][64];
    assert_int_equal(raw_children("/acl/fluss-acls/TABLE", names, 8), 2);
    /* one notification per change, "<TYPE>:<name>" */
    static const char *const notes[] = {"TABLE:db.t", "CLUSTER:fluss-cluster", "DATABASE:db",
                                        "TABLE:*", "TABLE:db.t", "DATABASE:gone",
                                        "DATABASE:gone"};
    expect_notes(notes, 7);

    /* a second store on the same ZooKeeper reads the same; as a standby it
     * writes nothing */
    fl_metastore_t *b = zk_open("/acl");
    char *x = dump(a), *y = dump(b);
    assert_string_equal(x, y);
    free(y);
    assert_int_equal(b->ops->acl_count(b), 4);
    assert_int_equal(b->ops->acl_put(b, 4, "db.t", NULL, &err),
                     FLUSS_ERR_NOT_COORDINATOR_LEADER_EXCEPTION);
    const fl_ms_acl_node_t *n = b->ops->acl_at(b, 0);
    assert_int_equal(n->resource_type, 2);
    assert_string_equal(n->resource_name, "fluss-cluster");
    n = b->ops->acl_at(b, 1);
    assert_int_equal(n->resource_type, 3);
    assert_string_equal(n->json, odd);
    n = b->ops->acl_at(b, 3);
    assert_string_equal(n->resource_name, "db.t");
    assert_string_equal(n->json, ACL_DOC("ALL"));

    /* a's seat goes to b: a's ACL writes are fenced, with no notification */
    assert_int_equal(raw_delete("/acl/coordinators/active"), ZOK);
    bool active = false;
    assert_int_equal(fl_metastore_zk_elect(b, "b", "INTERNAL://127.0.0.1:9124", 5000, &active,
                                           &err), 0);
    assert_true(active);
    assert_int_equal(a->ops->acl_put(a, 4, "db.t", ACL_DOC("READ"), &err),
                     FLUSS_ERR_INVALID_COORDINATOR_EXCEPTION);
    expect_raw("/acl/fluss-acls/TABLE/db.t", ACL_DOC("ALL"));
    expect_notes(notes, 7);
    a->ops->close(a);

    /* b deletes and replaces; a reopened store sees exactly that */
    assert_int_equal(b->ops->acl_put(b, 4, "db.t", NULL, &err), 0);
    assert_int_equal(b->ops->acl_put(b, 2, "fluss-cluster", ACL_DOC("ALTER"), &err), 0);
    assert_int_equal(b->ops->acl_put(b, 4, "new_table", ACL_DOC("READ"), &err), 0);
    static const char *const notes2[] = {"TABLE:db.t", "CLUSTER:fluss-cluster", "DATABASE:db",
                                         "TABLE:*", "TABLE:db.t", "DATABASE:gone",
                                         "DATABASE:gone", "TABLE:db.t", "CLUSTER:fluss-cluster",
                                         "TABLE:new_table"};
    expect_notes(notes2, 10);
    assert_int_equal(raw_delete("/acl/fluss-acls/TABLE/db.t"), ZNONODE);
    fl_metastore_t *c = zk_open("/acl");
    free(x);
    x = dump(b);
    y = dump(c);
    assert_string_equal(x, y);
    assert_int_equal(c->ops->acl_count(c), 4);
    assert_string_equal(c->ops->acl_at(c, 0)->json, ACL_DOC("ALTER"));
    assert_string_equal(c->ops->acl_at(c, 3)->resource_name, "new_table");
    free(x);
    free(y);
    c->ops->close(c);

    /* another writer (a Fluss server on the same ZooKeeper) changed a node
     * b never saw: b's writes go by what ZooKeeper holds, not its cache */
    assert_int_equal(raw_create("/acl/fluss-acls/DATABASE/outside", "{}"), ZOK);
    assert_int_equal(b->ops->acl_put(b, 3, "outside", ACL_DOC("READ"), &err), 0);
    expect_raw("/acl/fluss-acls/DATABASE/outside", ACL_DOC("READ"));
    assert_int_equal(b->ops->acl_count(b), 5);
    assert_int_equal(raw_delete("/acl/fluss-acls/DATABASE/outside"), ZOK);
    assert_int_equal(b->ops->acl_put(b, 3, "outside", NULL, &err), 0);
    assert_int_equal(b->ops->acl_count(b), 4);
    b->ops->close(b);
}

/* ---- SCRAM credentials ---- */

#define S256 FL_MS_SCRAM_SHA_256
#define S512 FL_MS_SCRAM_SHA_512
#define CRED(salt) "salt=" salt ",iterations=4096,stored_key=c3Rv,server_key=c2Vy"

static void check_scram(fl_metastore_t *ms, size_t i, const char *user, const char *mech,
                        const char *cred) {
    const fl_ms_scram_node_t *n = ms->ops->scram_at(ms, i);
    if (!n) fail_msg("scram %zu missing", i);
    assert_string_equal(n->user, user);
    assert_string_equal(n->mechanism, mech);
    assert_string_equal(n->credential, cred);
}

static void test_scram(void **state) {
    (void)state;
    fl_error_t err;
    fl_metastore_t *a = zk_open_active("/scram", "a");
    assert_int_equal(a->ops->scram_count(a), 0);
    const char *odd = "line\nbreak \"q\" h\u00e9 \\";
    char longest[FL_MS_SCRAM_USER_MAX + 2]; /* longest + 1: the longest name taken */
    memset(longest, 'u', sizeof(longest) - 1);
    longest[sizeof(longest) - 1] = '\0';
    assert_int_equal(a->ops->scram_put(a, "bob", S512, CRED("b5"), &err), 0);
    assert_int_equal(a->ops->scram_put(a, "alice", S512, CRED("a5"), &err), 0);
    assert_int_equal(a->ops->scram_put(a, "alice", S256, CRED("a2"), &err), 0);
    assert_int_equal(a->ops->scram_put(a, "j\u00f6rg", S256, odd, &err), 0);
    assert_int_equal(a->ops->scram_put(a, longest + 1, S256, "", &err), 0);
    assert_int_equal(a->ops->scram_put(a, "gone", S256, CRED("g"), &err), 0);
    assert_int_equal(a->ops->scram_put(a, "alice", S256, CRED("a2'"), &err), 0); /* replaced */
    assert_int_equal(a->ops->scram_put(a, "gone", S256, NULL, &err), 0);
    /* deleting nothing: no error */
    assert_int_equal(a->ops->scram_put(a, "gone", S256, NULL, &err), 0);
    assert_int_equal(a->ops->scram_put(a, "bob", S256, NULL, &err), 0);

    /* what has no znode, refused by name before ZooKeeper is asked */
    static const char *const bad_users[] = {
        "",       "a/b",      "/",       ".",         "..",
        "x\ny",   "x\x7f",    "\x01",    "x\xc2\x85" /* U+0085 */,
        "x\xee\x80\x80" /* U+E000, private use */, "x\xef\xbf\xb0" /* U+FFF0 */,
        "x\xf0\x9f\x98\x80" /* U+1F600: two UTF-16 units ZooKeeper refuses */,
        "bad\xff", "\xc0\xaf" /* overlong '/' */, "\xed\xa0\x80" /* a surrogate */,
        "cut\xe2\x82",
    };
    for (size_t i = 0; i < sizeof(bad_users) / sizeof(bad_users[0]); i++) {
        fl_err_clear(&err);
        int rc = a->ops->scram_put(a, bad_users[i], S256, CRED("x"), &err);
        if (rc != FLUSS_ERR__INVALID_ARG) fail_msg("user %zu: rc %d (%s)", i, rc, err.msg);
        assert_non_null(strstr(err.msg, "SCRAM user name"));
    }
    assert_int_equal(a->ops->scram_put(a, "a/b", S256, CRED("x"), &err), FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(err.msg, "'/'"));
    assert_int_equal(a->ops->scram_put(a, "x\xee\x80\x80", S256, CRED("x"), &err),
                     FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(err.msg, "U+E000"));
    assert_int_equal(a->ops->scram_put(a, longest, S256, CRED("x"), &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(a->ops->scram_put(a, "x", "SCRAM-SHA-1", CRED("x"), &err),
                     FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(err.msg, "mechanism"));
    assert_int_equal(a->ops->scram_put(a, "x", NULL, CRED("x"), &err), FLUSS_ERR__INVALID_ARG);
    char *huge = malloc(FL_MS_SCRAM_CREDENTIAL_MAX + 2);
    memset(huge, 'c', FL_MS_SCRAM_CREDENTIAL_MAX + 1);
    huge[FL_MS_SCRAM_CREDENTIAL_MAX + 1] = '\0';
    assert_int_equal(a->ops->scram_put(a, "x", S256, huge, &err), FLUSS_ERR__INVALID_ARG);
    free(huge);
    /* the rule is ZooKeeper's own: those names cannot be znodes at all */
    assert_int_equal(raw_create("/scram/fluss-scram/SCRAM-SHA-256/ok", "c"), ZOK);
    assert_int_equal(raw_delete("/scram/fluss-scram/SCRAM-SHA-256/ok"), ZOK);
    assert_int_not_equal(raw_create("/scram/fluss-scram/SCRAM-SHA-256/x\xee\x80\x80", "c"), ZOK);
    assert_int_not_equal(raw_create("/scram/fluss-scram/SCRAM-SHA-256/x\xf0\x9f\x98\x80", "c"),
                         ZOK);
    assert_int_not_equal(raw_create("/scram/fluss-scram/SCRAM-SHA-256/x\xc2\x85", "c"), ZOK);

    /* by user, then mechanism */
    assert_int_equal(a->ops->scram_count(a), 5);
    check_scram(a, 0, "alice", S256, CRED("a2'"));
    check_scram(a, 1, "alice", S512, CRED("a5"));
    check_scram(a, 2, "bob", S512, CRED("b5"));
    check_scram(a, 3, "j\u00f6rg", S256, odd);
    check_scram(a, 4, longest + 1, S256, "");

    /* at their paths, the credential's exact bytes */
    expect_raw("/scram/fluss-scram/SCRAM-SHA-256/alice", CRED("a2'"));
    expect_raw("/scram/fluss-scram/SCRAM-SHA-512/alice", CRED("a5"));
    expect_raw("/scram/fluss-scram/SCRAM-SHA-512/bob", CRED("b5"));
    expect_raw("/scram/fluss-scram/SCRAM-SHA-256/j\u00f6rg", odd);
    assert_int_equal(raw_delete("/scram/fluss-scram/SCRAM-SHA-256/gone"), ZNONODE);
    char names[8][64];
    assert_int_equal(raw_children("/scram/fluss-scram/SCRAM-SHA-512", names, 8), 2);
    assert_string_equal(names[0], "alice");
    assert_string_equal(names[1], "bob");

    /* a second store on the same ZooKeeper reads the same; as a standby it
     * writes nothing */
    fl_metastore_t *b = zk_open("/scram");
    char *x = dump(a), *y = dump(b);
    assert_string_equal(x, y);
    free(x);
    free(y);
    assert_int_equal(b->ops->scram_count(b), 5);
    check_scram(b, 3, "j\u00f6rg", S256, odd);
    check_scram(b, 4, longest + 1, S256, "");
    assert_int_equal(b->ops->scram_put(b, "alice", S256, NULL, &err),
                     FLUSS_ERR_NOT_COORDINATOR_LEADER_EXCEPTION);

    /* a's seat goes to b: a's writes are fenced */
    assert_int_equal(raw_delete("/scram/coordinators/active"), ZOK);
    bool active = false;
    assert_int_equal(fl_metastore_zk_elect(b, "b", "INTERNAL://127.0.0.1:9124", 5000, &active,
                                           &err), 0);
    assert_true(active);
    assert_int_equal(a->ops->scram_put(a, "alice", S256, CRED("stale"), &err),
                     FLUSS_ERR_INVALID_COORDINATOR_EXCEPTION);
    assert_int_equal(a->ops->scram_put(a, "mallory", S256, CRED("m"), &err),
                     FLUSS_ERR_NOT_COORDINATOR_LEADER_EXCEPTION);
    check_scram(a, 0, "alice", S256, CRED("a2'"));
    assert_int_equal(a->ops->scram_count(a), 5);
    expect_raw("/scram/fluss-scram/SCRAM-SHA-256/alice", CRED("a2'"));
    assert_int_equal(raw_delete("/scram/fluss-scram/SCRAM-SHA-256/mallory"), ZNONODE);
    a->ops->close(a);

    /* b deletes, replaces and adds; a reopened store sees exactly that */
    assert_int_equal(b->ops->scram_put(b, "alice", S512, NULL, &err), 0);
    assert_int_equal(b->ops->scram_put(b, "bob", S512, CRED("b5'"), &err), 0);
    assert_int_equal(b->ops->scram_put(b, "carol", S256, CRED("c2"), &err), 0);
    assert_int_equal(raw_delete("/scram/fluss-scram/SCRAM-SHA-512/alice"), ZNONODE);
    fl_metastore_t *c = zk_open("/scram");
    x = dump(b);
    y = dump(c);
    assert_string_equal(x, y);
    free(x);
    free(y);
    assert_int_equal(c->ops->scram_count(c), 5);
    check_scram(c, 0, "alice", S256, CRED("a2'"));
    check_scram(c, 1, "bob", S512, CRED("b5'"));
    check_scram(c, 2, "carol", S256, CRED("c2"));
    c->ops->close(c);

    /* another writer changed a znode b never saw: b's writes go by what
     * ZooKeeper holds, not its cache */
    assert_int_equal(raw_create("/scram/fluss-scram/SCRAM-SHA-512/outside", "x"), ZOK);
    assert_int_equal(b->ops->scram_put(b, "outside", S512, CRED("o"), &err), 0);
    expect_raw("/scram/fluss-scram/SCRAM-SHA-512/outside", CRED("o"));
    assert_int_equal(b->ops->scram_count(b), 6);
    assert_int_equal(raw_delete("/scram/fluss-scram/SCRAM-SHA-512/outside"), ZOK);
    assert_int_equal(b->ops->scram_put(b, "outside", S512, NULL, &err), 0);
    assert_int_equal(b->ops->scram_count(b), 5);

    /* a mechanism this store does not know is not read */
    assert_int_equal(raw_create("/scram/fluss-scram/SCRAM-SHA-1", ""), ZOK);
    assert_int_equal(raw_create("/scram/fluss-scram/SCRAM-SHA-1/zed", "z"), ZOK);
    c = zk_open("/scram");
    assert_int_equal(c->ops->scram_count(c), 5);
    c->ops->close(c);
    /* a user name this store cannot hold, made by someone else: the load
     * fails and says where, instead of dropping the credential */
    char path[1024];
    snprintf(path, sizeof(path), "/scram/fluss-scram/SCRAM-SHA-256/%0*d",
             FL_MS_SCRAM_USER_MAX + 1, 1);
    assert_int_equal(raw_create(path, "c"), ZOK);
    fl_metastore_t *none = NULL;
    assert_int_equal(fl_metastore_zk_open(g_connect, "/scram", 6000, 15000, &none, &err),
                     FLUSS_ERR__CORRUPT);
    assert_null(none);
    assert_non_null(strstr(err.msg, "/scram/fluss-scram/SCRAM-SHA-256"));
    assert_non_null(strstr(err.msg, "SCRAM user name"));
    assert_int_equal(raw_delete(path), ZOK);
    c = zk_open("/scram");
    assert_int_equal(c->ops->scram_count(c), 5);
    c->ops->close(c);
    b->ops->close(b);
}

/* ---- fencing ---- */

static void test_stale_coordinator_fenced(void **state) {
    (void)state;
    fl_error_t err;
    fl_metastore_t *a = zk_open_active("/fence", "a");
    int32_t epoch_a = fl_metastore_zk_epoch(a);
    assert_true(epoch_a >= 0);
    fl_metastore_t *b = zk_open("/fence");
    bool active = true;
    assert_int_equal(fl_metastore_zk_elect(b, "b", "INTERNAL://127.0.0.1:9124", 0, &active, &err), 0);
    assert_false(active); /* a standby */
    assert_int_equal(fl_metastore_zk_epoch(b), -1);
    char *id, *listeners;
    assert_int_equal(fl_metastore_zk_active_coordinator(b, &id, &listeners, &err), 0);
    assert_string_equal(id, "a");
    assert_string_equal(listeners, "INTERNAL://127.0.0.1:9123");
    free(id);
    free(listeners);
    fl_ms_database_t db = {.name = "x", .json = "{\"version\":1,\"custom_properties\":{}}"};
    /* a standby does not write */
    assert_int_equal(b->ops->db_create(b, &db, &err), FLUSS_ERR_NOT_COORDINATOR_LEADER_EXCEPTION);
    assert_int_equal(a->ops->db_create(a, &db, &err), 0);

    /* a loses its seat without noticing (its session expired while it was
     * paused, say): the seat goes, b wins it and bumps the epoch */
    assert_int_equal(raw_delete("/fence/coordinators/active"), ZOK);
    assert_int_equal(fl_metastore_zk_elect(b, "b", "INTERNAL://127.0.0.1:9124", 5000, &active, &err), 0);
    assert_true(active);
    assert_int_equal(fl_metastore_zk_epoch(b), epoch_a + 1);
    assert_non_null(b->ops->db_get(b, "x")); /* b re-read what a wrote */

    /* every kind of write of a now fails whole on the epoch check */
    db.name = "y";
    assert_int_equal(a->ops->db_create(a, &db, &err), FLUSS_ERR_INVALID_COORDINATOR_EXCEPTION);
    assert_null(a->ops->db_get(a, "y"));
    assert_int_equal(fl_metastore_zk_epoch(a), -1);
    assert_int_equal(a->ops->db_create(a, &db, &err), FLUSS_ERR_NOT_COORDINATOR_LEADER_EXCEPTION);
    int64_t id_a;
    assert_int_equal(a->ops->next_id(a, FL_MS_COUNTER_TABLE_ID, &id_a, &err),
                     FLUSS_ERR_NOT_COORDINATOR_LEADER_EXCEPTION);
    /* a re-elected later would take the next epoch; b still holds the seat */
    assert_int_equal(fl_metastore_zk_elect(a, "a", "INTERNAL://127.0.0.1:9123", 0, &active, &err), 0);
    assert_false(active);
    /* nothing of a's attempts landed; b writes */
    fl_metastore_t *r = zk_open("/fence");
    assert_null(r->ops->db_get(r, "y"));
    r->ops->close(r);
    assert_int_equal(b->ops->db_create(b, &db, &err), 0);
    int64_t tid;
    assert_int_equal(b->ops->next_id(b, FL_MS_COUNTER_TABLE_ID, &tid, &err), 0);
    assert_int_equal(tid, 0);
    a->ops->close(a);
    b->ops->close(b);
}

/* The session of a is expired by the server (the classic way: a second
 * handle attached to the same session id closes it): a's seat goes, a
 * learns it is no longer active, nothing it writes lands, and b takes
 * over with the next epoch. */
static void test_expired_session_demotes(void **state) {
    (void)state;
    fl_error_t err;
    fl_metastore_t *a = zk_open_active("/expire", "a");
    int32_t epoch_a = fl_metastore_zk_epoch(a);
    fl_metastore_t *b = zk_open("/expire");
    clientid_t cid = *zoo_client_id(FL_MSZ(a)->conn->zh);
    zhandle_t *dup = zookeeper_init(g_connect, NULL, 6000, &cid, NULL, 0);
    assert_non_null(dup);
    for (int i = 0; i < 100 && zoo_state(dup) != ZOO_CONNECTED_STATE; i++) usleep(20000);
    assert_int_equal(zoo_state(dup), ZOO_CONNECTED_STATE);
    zookeeper_close(dup); /* closes a's session on the server */
    bool active = false;
    assert_int_equal(fl_metastore_zk_elect(b, "b", "INTERNAL://127.0.0.1:9124", 5000, &active, &err), 0);
    assert_true(active);
    assert_int_equal(fl_metastore_zk_epoch(b), epoch_a + 1);
    fl_ms_database_t db = {.name = "late", .json = "{\"version\":1,\"custom_properties\":{}}"};
    int rc = a->ops->db_create(a, &db, &err);
    assert_int_not_equal(rc, 0); /* fenced, expired or demoted: which one depends on timing */
    print_message("the expired coordinator's write: %s (%s)\n", fl_err_name(rc), err.msg);
    for (int i = 0; i < 200 && fl_zk_conn_alive(FL_MSZ(a)->conn); i++) usleep(20000);
    assert_false(fl_zk_conn_alive(FL_MSZ(a)->conn));
    assert_int_equal(fl_metastore_zk_epoch(a), -1);
    assert_int_equal(a->ops->db_create(a, &db, &err), FLUSS_ERR_NOT_COORDINATOR_LEADER_EXCEPTION);
    fl_metastore_t *r = zk_open("/expire");
    assert_null(r->ops->db_get(r, "late"));
    r->ops->close(r);
    a->ops->close(a);
    b->ops->close(b);
}

struct elect_arg {
    fl_metastore_t *ms;
    bool active;
    int rc;
    int64_t waited_ms;
};

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *elect_thread(void *p) {
    struct elect_arg *a = p;
    fl_error_t err;
    int64_t t0 = now_ms();
    a->rc = fl_metastore_zk_elect(a->ms, "standby", "INTERNAL://127.0.0.1:9125", 20000,
                                  &a->active, &err);
    a->waited_ms = now_ms() - t0;
    return NULL;
}

static void test_standby_takes_over(void **state) {
    (void)state;
    fl_metastore_t *a = zk_open_active("/takeover", "a");
    int32_t epoch_a = fl_metastore_zk_epoch(a);
    struct elect_arg arg = {.ms = zk_open("/takeover")};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, elect_thread, &arg), 0);
    usleep(300000);
    a->ops->close(a); /* the session closes: the seat is free at once */
    pthread_join(th, NULL);
    assert_int_equal(arg.rc, 0);
    assert_true(arg.active);
    assert_true(arg.waited_ms >= 250 && arg.waited_ms < 10000); /* woken by the watch */
    assert_int_equal(fl_metastore_zk_epoch(arg.ms), epoch_a + 1);
    print_message("standby active %lld ms after it started waiting\n", (long long)arg.waited_ms);
    arg.ms->ops->close(arg.ms);
}

/* ---- tablet servers ---- */

static void test_registration_is_ephemeral(void **state) {
    (void)state;
    fl_error_t err;
    fl_metastore_t *ms = zk_open("/servers");
    fl_zk_conn_t *c1, *c2, *c3;
    assert_int_equal(fl_zk_conn_open(g_connect, "/servers", 6000, 15000, &c1, &err), 0);
    assert_int_equal(fl_zk_conn_open(g_connect, "/servers", 6000, 15000, &c2, &err), 0);
    fl_zk_tablet_server_t ts1 = {.id = 1, .listeners = "CLIENT://127.0.0.1:9124",
                                 .register_ms = 1700000000000};
    fl_zk_tablet_server_t ts2 = {.id = 2, .listeners = "CLIENT://127.0.0.1:9125,INTERNAL://127.0.0.1:9225",
                                 .rack = "r1", .register_ms = 1700000000001};
    assert_int_equal(fl_zk_tablet_server_register(c1, &ts1, &err), 0);
    assert_int_equal(fl_zk_tablet_server_register(c2, &ts2, &err), 0);
    assert_true(ts2.incarnation > ts1.incarnation);
    fl_zk_tablet_server_t dup = ts1;
    assert_int_equal(fl_zk_tablet_server_register(c2, &dup, &err), FLUSS_ERR__STATE);

    fl_zk_tablet_server_t *list;
    size_t n;
    assert_int_equal(fl_zk_tablet_servers_list(fl_metastore_zk_conn(ms), &list, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(list[0].id, 1);
    assert_string_equal(list[0].listeners, "CLIENT://127.0.0.1:9124");
    assert_null(list[0].rack);
    assert_int_equal(list[0].register_ms, 1700000000000);
    assert_int_equal(list[0].incarnation, ts1.incarnation);
    assert_int_equal(list[1].id, 2);
    assert_string_equal(list[1].rack, "r1");
    fl_zk_tablet_servers_free(list, n);
    char buf[512];
    int len = sizeof(buf) - 1;
    raw_get("/servers/tabletservers/ids/2", buf, &len);
    buf[len] = '\0';
    assert_string_equal(buf, "{\"version\":3,\"listeners\":\"CLIENT://127.0.0.1:9125,INTERNAL://"
                             "127.0.0.1:9225\",\"register_timestamp\":1700000000001,\"rack\":\"r1\"}");

    /* server 1's session ends: its registration is gone */
    fl_zk_conn_close(c1);
    assert_int_equal(fl_zk_tablet_servers_list(fl_metastore_zk_conn(ms), &list, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(list[0].id, 2);
    fl_zk_tablet_servers_free(list, n);
    /* and it comes back as a new incarnation */
    assert_int_equal(fl_zk_conn_open(g_connect, "/servers", 6000, 15000, &c3, &err), 0);
    fl_zk_tablet_server_t again = ts1;
    assert_int_equal(fl_zk_tablet_server_register(c3, &again, &err), 0);
    assert_true(again.incarnation > ts2.incarnation);
    fl_zk_conn_close(c3);
    fl_zk_conn_close(c2);
    assert_int_equal(fl_zk_tablet_servers_list(fl_metastore_zk_conn(ms), &list, &n, &err), 0);
    assert_int_equal(n, 0);
    fl_zk_tablet_servers_free(list, n);
    ms->ops->close(ms);
}

/* ---- counters ---- */

static void test_counters_never_reissue(void **state) {
    (void)state;
    fl_error_t err;
    int64_t seen_max[FL_MS_COUNTER_COUNT] = {-1, -1, -1};
    for (int round = 0; round < 3; round++) {
        fl_metastore_t *ms = zk_open_active("/counters", "c");
        if (round == 0) {
            fl_ms_database_t db = {.name = "d", .json = "{\"version\":1,\"custom_properties\":{}}"};
            assert_int_equal(ms->ops->db_create(ms, &db, &err), 0);
            assert_int_equal(make_table(ms, "d", "t", 1, &err), 0);
        }
        for (int c = 0; c < FL_MS_COUNTER_COUNT; c++) {
            int64_t v, first;
            assert_int_equal(ms->ops->next_id(ms, c, &v, &err), 0);
            assert_true(v > seen_max[c]);
            assert_int_equal(ms->ops->reserve_ids(ms, c, 1000, &first, &err), 0);
            assert_int_equal(first, v + 1);
            seen_max[c] = first + 999;
        }
        const fl_ms_table_t *t = ms->ops->table_get(ms, "d", "t");
        assert_int_equal(t->autoinc_next, round * 10);
        int64_t first;
        assert_int_equal(ms->ops->reserve_table_ids(ms, t->table_id, 10, &first, &err), 0);
        assert_int_equal(first, round * 10);
        ms->ops->close(ms);
    }
}

/* ---- LeaderAndIsr ---- */

static void test_leader_isr(void **state) {
    (void)state;
    fl_error_t err;
    fl_metastore_t *ms = zk_open_active("/lisr", "c");
    fl_ms_database_t db = {.name = "d", .json = "{\"version\":1,\"custom_properties\":{}}"};
    assert_int_equal(ms->ops->db_create(ms, &db, &err), 0);
    assert_int_equal(make_table(ms, "d", "t", 2, &err), 0);
    int64_t tid = ms->ops->table_get(ms, "d", "t")->table_id;
    fl_zk_bucket_ref_t b1 = {.table_id = tid, .partition_id = -1, .bucket = 1};
    fl_zk_leader_isr_t l;
    int32_t version = -1;
    assert_int_equal(fl_metastore_zk_leader_isr_get(ms, &b1, &l, &version, &err), 0);
    assert_int_equal(version, 0);
    assert_int_equal(l.leader, 101);
    assert_int_equal(l.leader_epoch, 3);
    assert_int_equal(l.isr_count, 2);
    l.leader = 201;
    l.leader_epoch = 4;
    l.isr_count = 1;
    l.isr[0] = 201;
    int32_t v2;
    assert_int_equal(fl_metastore_zk_leader_isr_update(ms, &b1, &l, version, &v2, &err), 0);
    assert_int_equal(v2, 1);
    assert_int_equal(ms->ops->table_by_id(ms, tid)->buckets[1].leader, 201);
    /* a writer that read version 0 lost the race */
    assert_int_equal(fl_metastore_zk_leader_isr_update(ms, &b1, &l, version, &v2, &err),
                     FLUSS_ERR__STATE);
    assert_int_equal(fl_metastore_zk_leader_isr_create(ms, &b1, &l, &err), FLUSS_ERR__STATE);
    fl_zk_bucket_ref_t gone = {.table_id = 999, .partition_id = -1, .bucket = 0};
    assert_int_equal(fl_metastore_zk_leader_isr_get(ms, &gone, &l, &version, &err),
                     FLUSS_ERR_LEADER_NOT_AVAILABLE_EXCEPTION);
    assert_int_equal(fl_metastore_zk_leader_isr_create(ms, &gone, &l, &err),
                     FLUSS_ERR_TABLE_NOT_EXIST);
    /* a partition's bucket without a leader yet: created later */
    fl_ms_bucket_t pb = {.leader = -1, .replica_count = 1, .replicas = {5}};
    char *values[1] = {"p"};
    fl_ms_partition_t p = {.partition_id = 7, .name = "p", .values = values, .value_count = 1,
                           .bucket_count = 1, .buckets = &pb};
    assert_int_equal(ms->ops->partition_create(ms, tid, &p, &err), 0);
    fl_zk_bucket_ref_t pb0 = {.table_id = tid, .partition_id = 7, .bucket = 0};
    assert_int_equal(fl_metastore_zk_leader_isr_get(ms, &pb0, &l, &version, &err),
                     FLUSS_ERR_LEADER_NOT_AVAILABLE_EXCEPTION);
    fl_zk_leader_isr_t pl = {.leader = 5, .leader_epoch = 0, .isr_count = 1, .isr = {5},
                             .coordinator_epoch = fl_metastore_zk_epoch(ms)};
    assert_int_equal(fl_metastore_zk_leader_isr_create(ms, &pb0, &pl, &err), 0);
    ms->ops->close(ms);

    ms = zk_open("/lisr");
    const fl_ms_table_t *t = ms->ops->table_by_id(ms, tid);
    assert_int_equal(t->buckets[1].leader, 201);
    assert_int_equal(t->buckets[1].leader_epoch, 4);
    assert_int_equal(t->partitions[0].buckets[0].leader, 5);
    /* not active: LeaderAndIsr writes are refused too */
    assert_int_equal(fl_metastore_zk_leader_isr_update(ms, &b1, &l, 1, &v2, &err),
                     FLUSS_ERR_NOT_COORDINATOR_LEADER_EXCEPTION);
    ms->ops->close(ms);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_same_as_embedded, setup, teardown),
        cmocka_unit_test(test_stale_coordinator_fenced),
        cmocka_unit_test(test_standby_takes_over),
        cmocka_unit_test(test_expired_session_demotes),
        cmocka_unit_test(test_registration_is_ephemeral),
        cmocka_unit_test(test_counters_never_reissue),
        cmocka_unit_test(test_leader_isr),
        cmocka_unit_test(test_acls),
        cmocka_unit_test(test_scram),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
