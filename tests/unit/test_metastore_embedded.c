/*
 * test_metastore_embedded.c — the embedded metadata store (metastore.h):
 * everything survives close/reopen, counters continue, a stray temp file is
 * ignored, a corrupt store file fails to open (never half-loaded), a
 * table's auto-increment counter goes on after a reopen, a
 * writer killed with SIGKILL in the middle of creating tables leaves a
 * store that opens with every acknowledged table in it, and ACL documents
 * (one per resource) are put, replaced, deleted and read back byte for
 * byte after a reopen; a file from before ACLs loads, a malformed "acls"
 * entry is refused, and a store latched by a failed write refuses them.
 * SCRAM credentials (one per user and mechanism) go the same way: put,
 * replaced, deleted, in order after a reopen, absent from the file when
 * there are none; old files load, malformed "scram" entries are refused,
 * a latched store writes none.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_tmpdir.h"

#include "common_vfs.h"
#include "common_vfs_fault.h"
#include "metastore.h"


static fl_metastore_t *open_ok(const char *dir) {
    fl_metastore_t *ms = NULL;
    fl_error_t err;
    if (fl_metastore_embedded_open(dir, &ms, &err)) fail_msg("open %s: %s", dir, err.msg);
    return ms;
}

static void write_file(const char *dir, const char *name, const void *data, size_t len) {
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static char *read_file(const char *dir, const char *name, size_t *len) {
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 20);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

static int make_table(fl_metastore_t *ms, const char *db, const char *name, int32_t buckets,
                      fl_error_t *err) {
    fl_ms_table_t t;
    memset(&t, 0, sizeof(t));
    int rc = ms->ops->next_id(ms, FL_MS_COUNTER_TABLE_ID, &t.table_id, err);
    if (rc) return rc;
    char tj[128], s1[64], s2[64];
    snprintf(tj, sizeof(tj), "{\"table\":\"%s\"}", name);
    snprintf(s1, sizeof(s1), "{\"schema\":1,\"of\":\"%s\"}", name);
    snprintf(s2, sizeof(s2), "{\"schema\":2,\"of\":\"%s\"}", name);
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

static void check_table(fl_metastore_t *ms, const char *db, const char *name, int64_t id,
                        int32_t buckets) {
    const fl_ms_table_t *t = ms->ops->table_get(ms, db, name);
    if (!t) fail_msg("table %s.%s missing", db, name);
    char want[128];
    assert_int_equal(t->table_id, id);
    assert_ptr_equal(ms->ops->table_by_id(ms, id), t);
    assert_int_equal(t->schema_id, 2);
    snprintf(want, sizeof(want), "{\"table\":\"%s\"}", name);
    assert_string_equal(t->table_json, want);
    assert_int_equal(t->schema_count, 2);
    snprintf(want, sizeof(want), "{\"schema\":2,\"of\":\"%s\"}", name);
    assert_string_equal(t->schema_jsons[1], want);
    assert_int_equal(t->created_ms, 1796208227741 + id);
    assert_int_equal(t->modified_ms, 1796208227999 + id);
    assert_int_equal(t->bucket_count, buckets);
    for (int32_t i = 0; i < buckets; i++) {
        assert_int_equal(t->buckets[i].leader, 100 + i);
        assert_int_equal(t->buckets[i].leader_epoch, i * 3);
        assert_int_equal(t->buckets[i].replica_count, 2);
        assert_int_equal(t->buckets[i].replicas[1], 200 + i);
    }
}

static void test_reopen_keeps_everything(void **state) {
    const char *dir = *state;
    fl_error_t err;
    fl_metastore_t *ms = open_ok(dir);
    assert_int_equal(ms->ops->db_count(ms), 0);
    assert_int_equal(ms->ops->table_count(ms), 0);
    fl_ms_database_t db = {.name = "d1", .json = "{\"version\":1}", .created_ms = 11,
                           .modified_ms = 12};
    assert_int_equal(ms->ops->db_create(ms, &db, &err), 0);
    db.name = "d2";
    db.created_ms = 21;
    assert_int_equal(ms->ops->db_create(ms, &db, &err), 0);
    assert_int_equal(ms->ops->db_create(ms, &db, &err), FLUSS_ERR_DATABASE_ALREADY_EXIST);
    assert_int_equal(make_table(ms, "d1", "a", 3, &err), 0);
    assert_int_equal(make_table(ms, "d2", "b", 0, &err), 0);
    assert_int_equal(make_table(ms, "d2", "c", 8, &err), 0);
    assert_int_equal(make_table(ms, "d2", "c", 1, &err), FLUSS_ERR_TABLE_ALREADY_EXIST);
    assert_int_equal(make_table(ms, "nodb", "x", 1, &err), FLUSS_ERR_DATABASE_NOT_EXIST);
    int64_t pid;
    assert_int_equal(ms->ops->next_id(ms, FL_MS_COUNTER_PARTITION_ID, &pid, &err), 0);
    assert_int_equal(pid, 0);
    ms->ops->close(ms);

    ms = open_ok(dir);
    assert_int_equal(ms->ops->db_count(ms), 2);
    const fl_ms_database_t *d = ms->ops->db_get(ms, "d1");
    assert_non_null(d);
    assert_string_equal(d->json, "{\"version\":1}");
    assert_int_equal(d->created_ms, 11);
    assert_int_equal(d->modified_ms, 12);
    assert_int_equal(ms->ops->db_get(ms, "d2")->created_ms, 21);
    assert_string_equal(ms->ops->db_at(ms, 1)->name, "d2");
    assert_null(ms->ops->db_at(ms, 2));
    assert_int_equal(ms->ops->table_count(ms), 3);
    check_table(ms, "d1", "a", 0, 3);
    check_table(ms, "d2", "b", 1, 0);
    /* ids 3 and 4 went to the failed creates: ids are never reused */
    check_table(ms, "d2", "c", 2, 8);
    int64_t id;
    assert_int_equal(ms->ops->next_id(ms, FL_MS_COUNTER_TABLE_ID, &id, &err), 0);
    assert_int_equal(id, 5);
    assert_int_equal(ms->ops->next_id(ms, FL_MS_COUNTER_PARTITION_ID, &id, &err), 0);
    assert_int_equal(id, 1);
    assert_int_equal(ms->ops->next_id(ms, FL_MS_COUNTER_WRITER_ID, &id, &err), 0);
    assert_int_equal(id, 0);

    /* drops are durable too; a database drop takes its tables */
    assert_int_equal(ms->ops->table_drop(ms, "d1", "a", &err), 0);
    assert_int_equal(ms->ops->table_drop(ms, "d1", "a", &err), FLUSS_ERR_TABLE_NOT_EXIST);
    assert_int_equal(ms->ops->db_drop(ms, "d2", &err), 0);
    assert_int_equal(ms->ops->db_drop(ms, "d2", &err), FLUSS_ERR_DATABASE_NOT_EXIST);
    ms->ops->close(ms);

    ms = open_ok(dir);
    assert_int_equal(ms->ops->db_count(ms), 1);
    assert_int_equal(ms->ops->table_count(ms), 0);
    assert_null(ms->ops->table_by_id(ms, 2));
    assert_int_equal(ms->ops->next_id(ms, FL_MS_COUNTER_TABLE_ID, &id, &err), 0);
    assert_int_equal(id, 6);
    assert_int_equal(ms->ops->next_id(ms, FL_MS_COUNTER_WRITER_ID, &id, &err), 0);
    assert_int_equal(id, 1);
    ms->ops->close(ms);
}

static void test_leftover_temp_file_ignored(void **state) {
    const char *dir = *state;
    const char junk[] = "{\"version\":1,\"counters\":[99,";
    /* before any store exists */
    write_file(dir, "metadata.json.tmp", junk, sizeof(junk) - 1);
    fl_metastore_t *ms = open_ok(dir);
    assert_int_equal(ms->ops->db_count(ms), 0);
    fl_error_t err;
    fl_ms_database_t db = {.name = "keep", .json = "{}", .created_ms = 1, .modified_ms = 1};
    assert_int_equal(ms->ops->db_create(ms, &db, &err), 0);
    ms->ops->close(ms);
    /* next to a good store */
    write_file(dir, "metadata.json.tmp", "\0\xff garbage", 10);
    ms = open_ok(dir);
    assert_int_equal(ms->ops->db_count(ms), 1);
    assert_non_null(ms->ops->db_get(ms, "keep"));
    int64_t id;
    assert_int_equal(ms->ops->next_id(ms, FL_MS_COUNTER_TABLE_ID, &id, &err), 0);
    assert_int_equal(id, 0);
    ms->ops->close(ms);
}

static void expect_corrupt(const char *dir, const void *data, size_t len) {
    write_file(dir, "metadata.json", data, len);
    fl_metastore_t *ms = (fl_metastore_t *)0x1;
    fl_error_t err;
    fl_err_clear(&err);
    int rc = fl_metastore_embedded_open(dir, &ms, &err);
    if (rc != FLUSS_ERR__CORRUPT)
        fail_msg("%.*s: rc %d (%s), want __CORRUPT", (int)len, (const char *)data, rc, err.msg);
    assert_int_equal(err.code, FLUSS_ERR__CORRUPT);
    assert_ptr_equal(ms, (fl_metastore_t *)0x1); /* nothing handed out */
}

static void test_corrupt_store_fails_to_open(void **state) {
    const char *dir = *state;
    fl_error_t err;
    fl_metastore_t *ms = open_ok(dir);
    fl_ms_database_t db = {.name = "d", .json = "{}", .created_ms = 1, .modified_ms = 1};
    assert_int_equal(ms->ops->db_create(ms, &db, &err), 0);
    assert_int_equal(make_table(ms, "d", "t1", 2, &err), 0);
    assert_int_equal(make_table(ms, "d", "t2", 2, &err), 0);
    ms->ops->close(ms);
    size_t len;
    char *good = read_file(dir, "metadata.json", &len);
    assert_true(len > 100);

    /* every flipped bit is found by the checksum line */
    char *flipped = malloc(len);
    for (size_t at = 0; at < len; at += 3) {
        memcpy(flipped, good, len);
        flipped[at] ^= (char)(1u << (at % 8));
        expect_corrupt(dir, flipped, len);
    }
    free(flipped);
    /* every proper prefix of a good file is rejected, none half-loads */
    for (size_t cut = 0; cut < len; cut += (cut < 40 ? 1 : 37)) expect_corrupt(dir, good, cut);
    expect_corrupt(dir, good, len - 17); /* exactly without its checksum line */
    /* a version 1 file, from before the checksum line, still loads */
    const char *v1 = "{\"version\":1,\"counters\":[3,0,0],\"databases\":[],\"tables\":[]}";
    write_file(dir, "metadata.json", v1, strlen(v1));
    fl_metastore_t *old_store = open_ok(dir);
    int64_t next;
    assert_int_equal(old_store->ops->next_id(old_store, FL_MS_COUNTER_TABLE_ID, &next, &err), 0);
    assert_int_equal(next, 3);
    old_store->ops->close(old_store);
    expect_corrupt(dir, "garbage", 7);
    expect_corrupt(dir, "[]", 2);
    expect_corrupt(dir, "{\"version\":2,\"counters\":[0,0,0],\"databases\":[],\"tables\":[]}", 58);
    expect_corrupt(dir, "{\"version\":1,\"counters\":[0,0],\"databases\":[],\"tables\":[]}", 56);
    const char *bad_db = "{\"version\":1,\"counters\":[0,0,0],\"databases\":[{\"name\":\"d\"}],"
                         "\"tables\":[]}";
    expect_corrupt(dir, bad_db, strlen(bad_db));
    const char *bad_table = "{\"version\":1,\"counters\":[1,0,0],\"databases\":[{\"name\":\"d\","
                            "\"json\":\"{}\"}],\"tables\":[{\"database\":\"d\",\"name\":\"t\","
                            "\"id\":0,\"schema_id\":1,\"table_json\":\"{}\",\"schemas\":[],"
                            "\"buckets\":[]}]}";
    expect_corrupt(dir, bad_table, strlen(bad_table));

    /* the good bytes still open */
    write_file(dir, "metadata.json", good, len);
    ms = open_ok(dir);
    assert_int_equal(ms->ops->table_count(ms), 2);
    check_table(ms, "d", "t2", 1, 2);
    ms->ops->close(ms);
    free(good);
}

/* ---- crash in the middle ---- */

#define CRASH_TABLES_MAX 100000

static void crash_child(const char *dir, int round, int fd) {
    fl_metastore_t *ms = NULL;
    fl_error_t err;
    if (fl_metastore_embedded_open(dir, &ms, &err)) _exit(2);
    for (int i = 0; i < CRASH_TABLES_MAX; i++) {
        char name[32];
        snprintf(name, sizeof(name), "r%d_t%d", round, i);
        if (make_table(ms, "d", name, (int32_t)(i % 4), &err)) _exit(3);
        char line[40];
        int n = snprintf(line, sizeof(line), "%s\n", name);
        if (write(fd, line, (size_t)n) != n) _exit(4);
    }
    _exit(0);
}

static void test_crash_in_the_middle(void **state) {
    const char *dir = *state;
    fl_error_t err;
    fl_metastore_t *ms = open_ok(dir);
    fl_ms_database_t db = {.name = "d", .json = "{}", .created_ms = 1, .modified_ms = 1};
    assert_int_equal(ms->ops->db_create(ms, &db, &err), 0);
    ms->ops->close(ms);

    const int delays_ms[] = {50, 80, 120, 160, 200};
    size_t total_acked = 0, tables_before = 0;
    for (int round = 0; round < 5; round++) {
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            crash_child(dir, round, fds[1]);
        }
        close(fds[1]);
        struct timespec ts = {0, (long)delays_ms[round] * 1000000L};
        nanosleep(&ts, NULL);
        assert_int_equal(kill(pid, SIGKILL), 0);
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFSIGNALED(status)) fail_msg("child exited early, status %d", status);

        /* the acknowledged names, read to EOF */
        size_t cap = 1 << 20, len = 0;
        char *acks = malloc(cap);
        ssize_t n;
        while ((n = read(fds[0], acks + len, cap - 1 - len)) > 0) len += (size_t)n;
        close(fds[0]);
        acks[len] = '\0';

        ms = open_ok(dir);
        size_t acked = 0;
        for (char *save = NULL, *name = strtok_r(acks, "\n", &save); name;
             name = strtok_r(NULL, "\n", &save)) {
            if (!ms->ops->table_get(ms, "d", name)) fail_msg("acked table %s lost", name);
            acked++;
        }
        free(acks);
        size_t count = ms->ops->table_count(ms);
        size_t grown = count - tables_before;
        if (grown != acked && grown != acked + 1)
            fail_msg("round %d: %zu tables new, %zu acknowledged", round, grown, acked);
        /* ids are unique and the counter is past all of them */
        int64_t max_id = -1;
        for (size_t i = 0; i < count; i++) {
            const fl_ms_table_t *t = ms->ops->table_at(ms, i);
            assert_ptr_equal(ms->ops->table_by_id(ms, t->table_id), t);
            if (t->table_id > max_id) max_id = t->table_id;
        }
        int64_t next;
        assert_int_equal(ms->ops->next_id(ms, FL_MS_COUNTER_TABLE_ID, &next, &err), 0);
        assert_true(next > max_id);
        ms->ops->close(ms);
        print_message("round %d: killed after %d ms, %zu acknowledged, %zu new\n", round,
                      delays_ms[round], acked, grown);
        total_acked += acked;
        tables_before = count;
    }
    assert_true(total_acked > 0); /* the child got work done */
}

static void test_partitions_persist(void **state) {
    const char *dir = *state;
    fl_metastore_t *ms = open_ok(dir);
    fl_error_t err;
    fl_ms_database_t db = {.name = "d", .json = "{}", .created_ms = 1, .modified_ms = 1};
    assert_int_equal(ms->ops->db_create(ms, &db, &err), 0);
    assert_int_equal(make_table(ms, "d", "t", 0, &err), 0);
    int64_t tid = ms->ops->table_get(ms, "d", "t")->table_id;
    char *values[2] = {"2026", "eu"};
    fl_ms_bucket_t b[2] = {{.leader = 7, .replica_count = 1, .replicas = {7}},
                           {.leader = 8, .leader_epoch = 3, .replica_count = 1, .replicas = {8}}};
    fl_ms_partition_t p = {.partition_id = 41, .name = "2026$eu", .values = values,
                           .value_count = 2, .created_ms = 99, .bucket_count = 2, .buckets = b};
    assert_int_equal(ms->ops->partition_create(ms, tid, &p, &err), 0);
    assert_int_equal(ms->ops->partition_create(ms, tid, &p, &err),
                     FLUSS_ERR_PARTITION_ALREADY_EXISTS);
    p.partition_id = 42;
    p.name = "2027$eu";
    assert_int_equal(ms->ops->partition_create(ms, tid, &p, &err), 0);
    assert_int_equal(ms->ops->partition_drop(ms, tid, 41, &err), 0);
    assert_int_equal(ms->ops->partition_drop(ms, tid, 41, &err), FLUSS_ERR_PARTITION_NOT_EXISTS);
    ms->ops->close(ms);

    ms = open_ok(dir);
    const fl_ms_table_t *t = ms->ops->table_get(ms, "d", "t");
    assert_non_null(t);
    assert_int_equal(t->partition_count, 1);
    const fl_ms_partition_t *q = fl_ms_table_partition(t, 42, NULL);
    assert_non_null(q);
    assert_ptr_equal(fl_ms_table_partition(t, 0, "2027$eu"), q);
    assert_null(fl_ms_table_partition(t, 41, NULL));
    assert_int_equal(q->value_count, 2);
    assert_string_equal(q->values[1], "eu");
    assert_int_equal(q->created_ms, 99);
    assert_int_equal(q->bucket_count, 2);
    assert_int_equal(q->buckets[1].leader, 8);
    assert_int_equal(q->buckets[1].leader_epoch, 3);
    /* dropping the database drops the table with its partitions */
    assert_int_equal(ms->ops->db_drop(ms, "d", &err), 0);
    ms->ops->close(ms);
}

/* A table's auto-increment counter: blocks reserved durably, continued
 * after a reopen, gone with the table. */
static void test_table_counter_persists(void **state) {
    const char *dir = *state;
    fl_metastore_t *ms = open_ok(dir);
    fl_error_t err;
    fl_ms_database_t db = {.name = "d", .json = "{}", .created_ms = 1, .modified_ms = 1};
    assert_int_equal(ms->ops->db_create(ms, &db, &err), 0);
    assert_int_equal(make_table(ms, "d", "t", 1, &err), 0);
    assert_int_equal(make_table(ms, "d", "u", 1, &err), 0);
    int64_t tid = ms->ops->table_get(ms, "d", "t")->table_id;
    int64_t uid = ms->ops->table_get(ms, "d", "u")->table_id;
    int64_t first = -1;
    assert_int_equal(ms->ops->reserve_table_ids(ms, tid, 100, &first, &err), 0);
    assert_int_equal(first, 0);
    assert_int_equal(ms->ops->reserve_table_ids(ms, tid, 100, &first, &err), 0);
    assert_int_equal(first, 100);
    assert_int_equal(ms->ops->reserve_table_ids(ms, uid, 5, &first, &err), 0);
    assert_int_equal(first, 0); /* each table counts on its own */
    assert_int_equal(ms->ops->reserve_table_ids(ms, 999, 5, &first, &err),
                     FLUSS_ERR_TABLE_NOT_EXIST);
    ms->ops->close(ms);

    ms = open_ok(dir);
    assert_int_equal(ms->ops->table_get(ms, "d", "t")->autoinc_next, 200);
    assert_int_equal(ms->ops->reserve_table_ids(ms, tid, 10, &first, &err), 0);
    assert_int_equal(first, 200);
    assert_int_equal(ms->ops->reserve_table_ids(ms, uid, 1, &first, &err), 0);
    assert_int_equal(first, 5);
    assert_int_equal(ms->ops->table_drop(ms, "d", "t", &err), 0);
    assert_int_equal(ms->ops->reserve_table_ids(ms, tid, 1, &first, &err),
                     FLUSS_ERR_TABLE_NOT_EXIST);
    ms->ops->close(ms);
}

/* ---- ACLs ---- */

/* The reference's document (ResourceAclJsonSerde), as the authorizer writes it. */
#define ACL_DOC(op)                                                                           \
    "{\"version\":1,\"acls\":[{\"principal_type\":\"User\",\"principal_name\":\"guest\","  \
    "\"permission_type\":\"ALLOW\",\"host\":\"*\",\"operation\":\"" op "\"}]}"

static void check_acl(fl_metastore_t *ms, size_t i, int32_t type, const char *name,
                      const char *json) {
    const fl_ms_acl_node_t *a = ms->ops->acl_at(ms, i);
    if (!a) fail_msg("acl %zu missing", i);
    assert_int_equal(a->resource_type, type);
    assert_string_equal(a->resource_name, name);
    assert_string_equal(a->json, json);
}

static void test_acls_persist(void **state) {
    const char *dir = *state;
    fl_error_t err;
    fl_metastore_t *ms = open_ok(dir);
    assert_int_equal(ms->ops->acl_count(ms), 0);
    assert_null(ms->ops->acl_at(ms, 0));
    /* a document with what JSON escapes: quotes, a newline, non-ASCII */
    const char *odd = "{\"version\":1,\"acls\":[],\"note\":\"line\nbreak \\\"q\\\" h\u00e9\"}";
    assert_int_equal(ms->ops->acl_put(ms, 4, "db.t", ACL_DOC("READ"), &err), 0);
    assert_int_equal(ms->ops->acl_put(ms, 2, "fluss-cluster", ACL_DOC("DESCRIBE"), &err), 0);
    assert_int_equal(ms->ops->acl_put(ms, 3, "db", odd, &err), 0);
    assert_int_equal(ms->ops->acl_put(ms, 4, "*", ACL_DOC("WRITE"), &err), 0);
    assert_int_equal(ms->ops->acl_put(ms, 3, "gone", ACL_DOC("DROP"), &err), 0);
    /* replaced, deleted, and a delete of nothing is no error and no write */
    assert_int_equal(ms->ops->acl_put(ms, 4, "db.t", ACL_DOC("ALL"), &err), 0);
    assert_int_equal(ms->ops->acl_put(ms, 3, "gone", NULL, &err), 0);
    size_t before_len, after_len;
    char *before = read_file(dir, "metadata.json", &before_len);
    assert_int_equal(ms->ops->acl_put(ms, 3, "gone", NULL, &err), 0);
    assert_int_equal(ms->ops->acl_put(ms, 4, "never", NULL, &err), 0);
    char *after = read_file(dir, "metadata.json", &after_len);
    assert_int_equal(before_len, after_len);
    assert_memory_equal(before, after, before_len);
    free(before);
    free(after);
    /* what has no place in the store */
    assert_int_equal(ms->ops->acl_put(ms, 1, "x", ACL_DOC("READ"), &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(ms->ops->acl_put(ms, 5, "x", ACL_DOC("READ"), &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(ms->ops->acl_put(ms, 4, "", ACL_DOC("READ"), &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(ms->ops->acl_put(ms, 4, "bad\xff", ACL_DOC("READ"), &err),
                     FLUSS_ERR__INVALID_ARG);
    assert_int_equal(ms->ops->acl_put(ms, 4, "x", "{\"bad\":\"\xc3\"}", &err),
                     FLUSS_ERR__INVALID_ARG);

    /* by type, then name */
    assert_int_equal(ms->ops->acl_count(ms), 4);
    check_acl(ms, 0, 2, "fluss-cluster", ACL_DOC("DESCRIBE"));
    check_acl(ms, 1, 3, "db", odd);
    check_acl(ms, 2, 4, "*", ACL_DOC("WRITE"));
    check_acl(ms, 3, 4, "db.t", ACL_DOC("ALL"));
    assert_null(ms->ops->acl_at(ms, 4));
    ms->ops->close(ms);

    ms = open_ok(dir);
    assert_int_equal(ms->ops->acl_count(ms), 4);
    check_acl(ms, 0, 2, "fluss-cluster", ACL_DOC("DESCRIBE"));
    check_acl(ms, 1, 3, "db", odd);
    check_acl(ms, 2, 4, "*", ACL_DOC("WRITE"));
    check_acl(ms, 3, 4, "db.t", ACL_DOC("ALL"));
    /* all deleted: the file has no "acls" any more */
    for (size_t n = ms->ops->acl_count(ms); n > 0; n--) {
        const fl_ms_acl_node_t *a = ms->ops->acl_at(ms, 0);
        char name[64];
        snprintf(name, sizeof(name), "%s", a->resource_name);
        assert_int_equal(ms->ops->acl_put(ms, a->resource_type, name, NULL, &err), 0);
    }
    assert_int_equal(ms->ops->acl_count(ms), 0);
    ms->ops->close(ms);
    char *file = read_file(dir, "metadata.json", &after_len);
    assert_null(strstr(file, "\"acls\":"));
    free(file);
    ms = open_ok(dir);
    assert_int_equal(ms->ops->acl_count(ms), 0);
    ms->ops->close(ms);
}

static void test_acls_old_and_malformed_files(void **state) {
    const char *dir = *state;
    /* a file from before ACLs */
    const char *v1 = "{\"version\":1,\"counters\":[3,0,0],\"databases\":[],\"tables\":[]}";
    write_file(dir, "metadata.json", v1, strlen(v1));
    fl_metastore_t *ms = open_ok(dir);
    assert_int_equal(ms->ops->acl_count(ms), 0);
    ms->ops->close(ms);
    /* one written by hand out of order still loads, in order */
    const char *unordered = "{\"version\":1,\"counters\":[0,0,0],\"databases\":[],\"tables\":[],"
                            "\"acls\":[{\"type\":4,\"name\":\"b\",\"json\":\"{}\"},"
                            "{\"type\":2,\"name\":\"fluss-cluster\",\"json\":\"[]\"},"
                            "{\"type\":4,\"name\":\"a\",\"json\":\"\"}]}";
    write_file(dir, "metadata.json", unordered, strlen(unordered));
    ms = open_ok(dir);
    assert_int_equal(ms->ops->acl_count(ms), 3);
    check_acl(ms, 0, 2, "fluss-cluster", "[]");
    check_acl(ms, 1, 4, "a", "");
    check_acl(ms, 2, 4, "b", "{}");
    ms->ops->close(ms);

    static const char *const bad[] = {
        "\"acls\":{}",
        "\"acls\":[1]",
        "\"acls\":[{\"name\":\"a\",\"json\":\"{}\"}]",
        "\"acls\":[{\"type\":\"TABLE\",\"name\":\"a\",\"json\":\"{}\"}]",
        "\"acls\":[{\"type\":1,\"name\":\"a\",\"json\":\"{}\"}]",
        "\"acls\":[{\"type\":5,\"name\":\"a\",\"json\":\"{}\"}]",
        "\"acls\":[{\"type\":4,\"json\":\"{}\"}]",
        "\"acls\":[{\"type\":4,\"name\":\"\",\"json\":\"{}\"}]",
        "\"acls\":[{\"type\":4,\"name\":\"a\"}]",
        "\"acls\":[{\"type\":4,\"name\":\"a\",\"json\":{}}]",
        "\"acls\":[{\"type\":4,\"name\":\"a\",\"json\":\"{}\"},"
        "{\"type\":4,\"name\":\"a\",\"json\":\"[]\"}]",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char doc[512];
        int n = snprintf(doc, sizeof(doc),
                         "{\"version\":1,\"counters\":[0,0,0],\"databases\":[],\"tables\":[],%s}",
                         bad[i]);
        expect_corrupt(dir, doc, (size_t)n);
        fl_metastore_t *none = NULL;
        fl_error_t err;
        assert_int_equal(fl_metastore_embedded_open(dir, &none, &err), FLUSS_ERR__CORRUPT);
        if (!strstr(err.msg, "acl")) fail_msg("%s: error does not name the acls: %s", bad[i], err.msg);
    }
}

static void test_acl_put_latched(void **state) {
    const char *dir = *state;
    fl_error_t err;
    fl_metastore_t *ms = open_ok(dir);
    assert_int_equal(ms->ops->acl_put(ms, 4, "db.t", ACL_DOC("READ"), &err), 0);
    /* the next write's fsync fails: the store latches */
    char spec[4300];
    snprintf(spec, sizeof(spec), "rate=1,ops=fsync,path=%s", dir);
    fl_vfs_fault_config_t cfg;
    if (fl_vfs_fault_parse(spec, &cfg, &err)) fail_msg("%s", err.msg);
    fl_vfs_fault_t *vf = fl_vfs_fault_new(&cfg);
    fl_vfs_install(fl_vfs_fault_ops(), vf);
    assert_int_equal(ms->ops->acl_put(ms, 4, "db.t", ACL_DOC("WRITE"), &err),
                     FLUSS_ERR_STORAGE_EXCEPTION);
    fl_vfs_install(NULL, NULL);
    fl_vfs_fault_free(vf);
    /* the last durable state shows, and nothing more is written */
    assert_int_equal(ms->ops->acl_count(ms), 1);
    check_acl(ms, 0, 4, "db.t", ACL_DOC("READ"));
    assert_int_equal(ms->ops->acl_put(ms, 2, "fluss-cluster", ACL_DOC("ALL"), &err),
                     FLUSS_ERR_STORAGE_EXCEPTION);
    assert_non_null(strstr(err.msg, "read-only"));
    assert_int_equal(ms->ops->acl_put(ms, 4, "db.t", NULL, &err), FLUSS_ERR_STORAGE_EXCEPTION);
    assert_int_equal(ms->ops->acl_count(ms), 1);
    ms->ops->close(ms);
    ms = open_ok(dir);
    assert_int_equal(ms->ops->acl_count(ms), 1);
    check_acl(ms, 0, 4, "db.t", ACL_DOC("READ"));
    ms->ops->close(ms);
}

/* ---- SCRAM credentials ---- */

#define S256 FL_MS_SCRAM_SHA_256
#define S512 FL_MS_SCRAM_SHA_512
/* The authenticator's text: opaque to the store. */
#define CRED(salt) "salt=" salt ",iterations=4096,stored_key=c3Rv,server_key=c2Vy"

static void check_scram(fl_metastore_t *ms, size_t i, const char *user, const char *mech,
                        const char *cred) {
    const fl_ms_scram_node_t *n = ms->ops->scram_at(ms, i);
    if (!n) fail_msg("scram %zu missing", i);
    assert_string_equal(n->user, user);
    assert_string_equal(n->mechanism, mech);
    assert_string_equal(n->credential, cred);
}

static void test_scram_persist(void **state) {
    const char *dir = *state;
    fl_error_t err;
    fl_metastore_t *ms = open_ok(dir);
    assert_int_equal(ms->ops->scram_count(ms), 0);
    assert_null(ms->ops->scram_at(ms, 0));
    /* text with what JSON escapes: quotes, a newline, non-ASCII */
    const char *odd = "line\nbreak \"q\" h\u00e9 \\";
    char longest[FL_MS_SCRAM_USER_MAX + 2];
    memset(longest, 'u', FL_MS_SCRAM_USER_MAX + 1);
    longest[FL_MS_SCRAM_USER_MAX + 1] = '\0';
    assert_int_equal(ms->ops->scram_put(ms, "bob", S512, CRED("b5"), &err), 0);
    assert_int_equal(ms->ops->scram_put(ms, "alice", S512, CRED("a5"), &err), 0);
    assert_int_equal(ms->ops->scram_put(ms, "alice", S256, CRED("a2"), &err), 0);
    assert_int_equal(ms->ops->scram_put(ms, "j\u00f6rg", S256, odd, &err), 0);
    assert_int_equal(ms->ops->scram_put(ms, "gone", S256, CRED("g"), &err), 0);
    assert_int_equal(ms->ops->scram_put(ms, longest + 1, S256, "", &err), 0); /* 512 bytes */
    /* replaced, deleted, and a delete of nothing is no error and no write */
    assert_int_equal(ms->ops->scram_put(ms, "alice", S256, CRED("a2'"), &err), 0);
    assert_int_equal(ms->ops->scram_put(ms, "gone", S256, NULL, &err), 0);
    size_t before_len, after_len;
    char *before = read_file(dir, "metadata.json", &before_len);
    assert_int_equal(ms->ops->scram_put(ms, "gone", S256, NULL, &err), 0);
    assert_int_equal(ms->ops->scram_put(ms, "bob", S256, NULL, &err), 0);
    assert_int_equal(ms->ops->scram_put(ms, "never", S512, NULL, &err), 0);
    char *after = read_file(dir, "metadata.json", &after_len);
    assert_int_equal(before_len, after_len);
    assert_memory_equal(before, after, before_len);
    free(before);
    free(after);
    /* what has no place in the store */
    static const char *const bad_mechs[] = {"SCRAM-SHA-1", "scram-sha-256", "SCRAM-SHA-256 ",
                                            "PLAIN", ""};
    for (size_t i = 0; i < sizeof(bad_mechs) / sizeof(bad_mechs[0]); i++) {
        assert_int_equal(ms->ops->scram_put(ms, "x", bad_mechs[i], CRED("x"), &err),
                         FLUSS_ERR__INVALID_ARG);
        assert_non_null(strstr(err.msg, "mechanism"));
    }
    assert_int_equal(ms->ops->scram_put(ms, "x", NULL, CRED("x"), &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(ms->ops->scram_put(ms, "", S256, CRED("x"), &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(ms->ops->scram_put(ms, longest, S256, CRED("x"), &err),
                     FLUSS_ERR__INVALID_ARG); /* 513 bytes */
    assert_non_null(strstr(err.msg, "512"));
    assert_int_equal(ms->ops->scram_put(ms, "bad\xff", S256, CRED("x"), &err),
                     FLUSS_ERR__INVALID_ARG);
    assert_int_equal(ms->ops->scram_put(ms, "x", S256, "bad\xc3", &err), FLUSS_ERR__INVALID_ARG);
    char *huge = malloc(FL_MS_SCRAM_CREDENTIAL_MAX + 2);
    memset(huge, 'c', FL_MS_SCRAM_CREDENTIAL_MAX + 1);
    huge[FL_MS_SCRAM_CREDENTIAL_MAX + 1] = '\0';
    assert_int_equal(ms->ops->scram_put(ms, "x", S256, huge, &err), FLUSS_ERR__INVALID_ARG);
    free(huge);
    /* the refused ones wrote nothing */
    after = read_file(dir, "metadata.json", &after_len);
    assert_int_equal(before_len, after_len);
    free(after);

    /* by user, then mechanism */
    assert_int_equal(ms->ops->scram_count(ms), 5);
    check_scram(ms, 0, "alice", S256, CRED("a2'"));
    check_scram(ms, 1, "alice", S512, CRED("a5"));
    check_scram(ms, 2, "bob", S512, CRED("b5"));
    check_scram(ms, 3, "j\u00f6rg", S256, odd);
    check_scram(ms, 4, longest + 1, S256, "");
    assert_null(ms->ops->scram_at(ms, 5));
    ms->ops->close(ms);

    /* the file holds them as documented, beside the ACLs */
    char *file = read_file(dir, "metadata.json", &after_len);
    assert_non_null(strstr(file, "\"scram\":[{\"user\":\"alice\",\"mechanism\":\"SCRAM-SHA-256\","
                                 "\"credential\":\"" CRED("a2'") "\"},"));
    free(file);
    ms = open_ok(dir);
    assert_int_equal(ms->ops->acl_put(ms, 4, "db.t", "{}", &err), 0);
    ms->ops->close(ms);
    ms = open_ok(dir);
    assert_int_equal(ms->ops->acl_count(ms), 1);
    assert_int_equal(ms->ops->scram_count(ms), 5);
    check_scram(ms, 0, "alice", S256, CRED("a2'"));
    check_scram(ms, 1, "alice", S512, CRED("a5"));
    check_scram(ms, 2, "bob", S512, CRED("b5"));
    check_scram(ms, 3, "j\u00f6rg", S256, odd);
    check_scram(ms, 4, longest + 1, S256, "");
    /* all deleted: the file has no "scram" any more */
    for (size_t n = ms->ops->scram_count(ms); n > 0; n--) {
        const fl_ms_scram_node_t *a = ms->ops->scram_at(ms, 0);
        char user[FL_MS_SCRAM_USER_MAX + 1], mech[32];
        snprintf(user, sizeof(user), "%s", a->user);
        snprintf(mech, sizeof(mech), "%s", a->mechanism);
        assert_int_equal(ms->ops->scram_put(ms, user, mech, NULL, &err), 0);
    }
    assert_int_equal(ms->ops->scram_count(ms), 0);
    ms->ops->close(ms);
    file = read_file(dir, "metadata.json", &after_len);
    assert_null(strstr(file, "\"scram\""));
    free(file);
    ms = open_ok(dir);
    assert_int_equal(ms->ops->scram_count(ms), 0);
    assert_int_equal(ms->ops->acl_count(ms), 1);
    ms->ops->close(ms);
}

static void test_scram_old_and_malformed_files(void **state) {
    const char *dir = *state;
    /* a file from before SCRAM (and one from before ACLs) */
    const char *v1 = "{\"version\":1,\"counters\":[3,0,0],\"databases\":[],\"tables\":[],"
                     "\"acls\":[{\"type\":4,\"name\":\"b\",\"json\":\"{}\"}]}";
    write_file(dir, "metadata.json", v1, strlen(v1));
    fl_metastore_t *ms = open_ok(dir);
    assert_int_equal(ms->ops->scram_count(ms), 0);
    assert_int_equal(ms->ops->acl_count(ms), 1);
    ms->ops->close(ms);
    /* one written by hand out of order still loads, in order */
    const char *unordered =
        "{\"version\":1,\"counters\":[0,0,0],\"databases\":[],\"tables\":[],"
        "\"scram\":[{\"user\":\"b\",\"mechanism\":\"SCRAM-SHA-256\",\"credential\":\"1\"},"
        "{\"user\":\"a\",\"mechanism\":\"SCRAM-SHA-512\",\"credential\":\"2\"},"
        "{\"user\":\"a\",\"mechanism\":\"SCRAM-SHA-256\",\"credential\":\"\"}]}";
    write_file(dir, "metadata.json", unordered, strlen(unordered));
    ms = open_ok(dir);
    assert_int_equal(ms->ops->scram_count(ms), 3);
    check_scram(ms, 0, "a", S256, "");
    check_scram(ms, 1, "a", S512, "2");
    check_scram(ms, 2, "b", S256, "1");
    ms->ops->close(ms);

#define E(u, m, c) "{\"user\":" u ",\"mechanism\":" m ",\"credential\":" c "}"
    char long_user[FL_MS_SCRAM_USER_MAX + 128];
    snprintf(long_user, sizeof(long_user), "\"scram\":[" E("\"%0*d\"", "\"SCRAM-SHA-256\"",
                                                          "\"c\"") "]",
             FL_MS_SCRAM_USER_MAX + 1, 7);
    const char *const bad[] = {
        "\"scram\":{}",
        "\"scram\":[1]",
        "\"scram\":[" E("\"\"", "\"SCRAM-SHA-256\"", "\"c\"") "]",
        "\"scram\":[" E("7", "\"SCRAM-SHA-256\"", "\"c\"") "]",
        "\"scram\":[" E("\"a\"", "\"SCRAM-SHA-1\"", "\"c\"") "]",
        "\"scram\":[" E("\"a\"", "\"scram-sha-256\"", "\"c\"") "]",
        "\"scram\":[" E("\"a\"", "256", "\"c\"") "]",
        "\"scram\":[" E("\"a\"", "\"SCRAM-SHA-512\"", "{}") "]",
        "\"scram\":[" E("\"a\"", "\"SCRAM-SHA-512\"", "null") "]",
        "\"scram\":[{\"user\":\"a\",\"mechanism\":\"SCRAM-SHA-512\"}]",
        "\"scram\":[{\"mechanism\":\"SCRAM-SHA-512\",\"credential\":\"c\"}]",
        "\"scram\":[" E("\"a\"", "\"SCRAM-SHA-512\"", "\"c\"") ","
        E("\"a\"", "\"SCRAM-SHA-512\"", "\"d\"") "]",
        long_user,
    };
#undef E
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char doc[1024];
        int n = snprintf(doc, sizeof(doc),
                         "{\"version\":1,\"counters\":[0,0,0],\"databases\":[],\"tables\":[],%s}",
                         bad[i]);
        assert_true(n > 0 && (size_t)n < sizeof(doc));
        expect_corrupt(dir, doc, (size_t)n);
        fl_metastore_t *none = NULL;
        fl_error_t err;
        assert_int_equal(fl_metastore_embedded_open(dir, &none, &err), FLUSS_ERR__CORRUPT);
        if (!strstr(err.msg, "scram"))
            fail_msg("%s: error does not name the scram entries: %s", bad[i], err.msg);
    }
}

static void test_scram_put_latched(void **state) {
    const char *dir = *state;
    fl_error_t err;
    fl_metastore_t *ms = open_ok(dir);
    assert_int_equal(ms->ops->scram_put(ms, "alice", S256, CRED("1"), &err), 0);
    /* the next write's fsync fails: the store latches */
    char spec[4300];
    snprintf(spec, sizeof(spec), "rate=1,ops=fsync,path=%s", dir);
    fl_vfs_fault_config_t cfg;
    if (fl_vfs_fault_parse(spec, &cfg, &err)) fail_msg("%s", err.msg);
    fl_vfs_fault_t *vf = fl_vfs_fault_new(&cfg);
    fl_vfs_install(fl_vfs_fault_ops(), vf);
    assert_int_equal(ms->ops->scram_put(ms, "alice", S256, CRED("2"), &err),
                     FLUSS_ERR_STORAGE_EXCEPTION);
    fl_vfs_install(NULL, NULL);
    fl_vfs_fault_free(vf);
    /* the last durable state shows, and nothing more is written */
    assert_int_equal(ms->ops->scram_count(ms), 1);
    check_scram(ms, 0, "alice", S256, CRED("1"));
    assert_int_equal(ms->ops->scram_put(ms, "bob", S512, CRED("3"), &err),
                     FLUSS_ERR_STORAGE_EXCEPTION);
    assert_non_null(strstr(err.msg, "read-only"));
    assert_int_equal(ms->ops->scram_put(ms, "alice", S256, NULL, &err),
                     FLUSS_ERR_STORAGE_EXCEPTION);
    assert_int_equal(ms->ops->scram_count(ms), 1);
    ms->ops->close(ms);
    ms = open_ok(dir);
    assert_int_equal(ms->ops->scram_count(ms), 1);
    check_scram(ms, 0, "alice", S256, CRED("1"));
    ms->ops->close(ms);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reopen_keeps_everything, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leftover_temp_file_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_store_fails_to_open, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_in_the_middle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partitions_persist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_counter_persists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_acls_persist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_acls_old_and_malformed_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_acl_put_latched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scram_persist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scram_old_and_malformed_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scram_put_latched, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
