/*
 * test_coordinator_producer_offsets.c — producer offsets
 * (coordinator_producer_offsets.h, coordinator_producer_codec.h):
 * register / get / delete, a second register keeps the first entry, a
 * bucket given twice keeps its last offset; entries read back by a new
 * store; expiry (register replaces an expired entry, get hides it, the
 * sweep removes its file); producer id rules; the file codec round trip;
 * a damaged file fences its producer until a delete; a failed write
 * latches the store
 * and changes nothing; the bucket limit; and registers racing gets from
 * other threads (run under ThreadSanitizer by make test-tsan).
 */
#define _XOPEN_SOURCE 700
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_tmpdir.h"

#include "common_alloc.h"
#include "common_fs.h"
#include "coordinator_producer_offsets.h"

#define NOW 1700000000000LL
#define HOUR (3600LL * 1000)

typedef fl_producer_bucket_offset_t bo_t;

static bo_t plain(int64_t table, int32_t bucket, int64_t offset) {
    return (bo_t){table, false, 0, bucket, offset};
}

static bo_t part(int64_t table, int64_t partition, int32_t bucket, int64_t offset) {
    return (bo_t){table, true, partition, bucket, offset};
}

#define NONE (-999)

/* The offset of (table, partition when has_part, bucket) in e, or NONE. */
static int64_t offset_in(const fl_producer_entry_t *e, int64_t table, bool has_part,
                         int64_t partition, int32_t bucket) {
    for (size_t i = 0; i < e->n; i++)
        if (e->b[i].table_id == table && e->b[i].bucket == bucket &&
            e->b[i].has_partition == has_part && (!has_part || e->b[i].partition_id == partition))
            return e->b[i].offset;
    return NONE;
}

#define OFF(e, table, bucket) offset_in(e, table, false, 0, bucket)
#define OFF_P(e, table, partition, bucket) offset_in(e, table, true, partition, bucket)

static fl_producer_register_t reg(fl_producer_offsets_t *p, const char *id, const bo_t *b,
                                  size_t n, int64_t ttl, int64_t now) {
    fl_producer_register_t r;
    fl_error_t err;
    if (fl_producer_offsets_register(p, id, b, n, ttl, now, &r, &err))
        fail_msg("register %s: %s", id, err.msg);
    return r;
}

static bool get(fl_producer_offsets_t *p, const char *id, int64_t now, fl_producer_entry_t *e) {
    bool found;
    fl_error_t err;
    if (fl_producer_offsets_get(p, id, now, e, &found, &err)) fail_msg("get %s: %s", id, err.msg);
    return found;
}

static void path_of(char *out, size_t n, const char *dir, const char *name) {
    snprintf(out, n, "%s/producers/%s", dir, name);
}

static bool exists(const char *dir, const char *name) {
    char path[600];
    path_of(path, sizeof(path), dir, name);
    return access(path, F_OK) == 0;
}

static void test_register_get_delete(void **state) {
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/producers", (const char *)*state);
    fl_producer_offsets_t *p;
    fl_error_t err;
    assert_int_equal(fl_producer_offsets_open(dir, &p, &err), 0);
    /* a partitioned and a plain table, unsorted, bucket (1, 1) twice */
    bo_t b[] = {part(2, 20, 1, 301), plain(1, 1, 101), part(2, 10, 0, 200),
                plain(1, 0, 100),    part(2, 20, 0, 300), part(2, 10, 1, 201),
                plain(1, 1, 111)};
    assert_int_equal(reg(p, "job-1", b, 7, HOUR, NOW), FL_PRODUCER_REGISTER_CREATED);
    assert_true(exists(*state, "job-1.json"));
    fl_producer_entry_t e;
    assert_true(get(p, "job-1", NOW, &e));
    assert_string_equal(e.producer_id, "job-1");
    assert_int_equal(e.expiration_ms, NOW + HOUR);
    assert_int_equal(e.n, 6);
    assert_int_equal(OFF(&e, 1, 0), 100);
    assert_int_equal(OFF(&e, 1, 1), 111); /* the last one given */
    assert_int_equal(OFF_P(&e, 2, 10, 0), 200);
    assert_int_equal(OFF_P(&e, 2, 10, 1), 201);
    assert_int_equal(OFF_P(&e, 2, 20, 0), 300);
    assert_int_equal(OFF_P(&e, 2, 20, 1), 301);
    for (size_t i = 1; i < e.n; i++) assert_true(fl_producer_bucket_cmp(&e.b[i - 1], &e.b[i]) < 0);
    fl_producer_entry_free(&e);
    /* again, other offsets: kept as they were */
    bo_t other = plain(3, 0, 5);
    assert_int_equal(reg(p, "job-1", &other, 1, HOUR, NOW + 10), FL_PRODUCER_REGISTER_EXISTS);
    assert_true(get(p, "job-1", NOW + 10, &e));
    assert_int_equal(e.n, 6);
    assert_int_equal(e.expiration_ms, NOW + HOUR);
    assert_int_equal(OFF(&e, 3, 0), NONE);
    fl_producer_entry_free(&e);
    /* an empty registration is an entry too */
    assert_int_equal(reg(p, "empty", NULL, 0, HOUR, NOW), FL_PRODUCER_REGISTER_CREATED);
    assert_true(get(p, "empty", NOW, &e));
    assert_int_equal(e.n, 0);
    fl_producer_entry_free(&e);
    assert_false(get(p, "nobody", NOW, &e));
    assert_int_equal(fl_producer_offsets_count(p), 2);
    /* delete; deleting what is not there is no error */
    assert_int_equal(fl_producer_offsets_delete(p, "job-1", &err), 0);
    assert_false(exists(*state, "job-1.json"));
    assert_false(get(p, "job-1", NOW, &e));
    assert_int_equal(fl_producer_offsets_delete(p, "job-1", &err), 0);
    assert_int_equal(fl_producer_offsets_delete(p, "nobody", &err), 0);
    assert_int_equal(reg(p, "job-1", &other, 1, HOUR, NOW), FL_PRODUCER_REGISTER_CREATED);
    /* a table with buckets with and without a partition: refused, even
     * for an id that exists (the reference fails before it looks) */
    bo_t mixed[] = {plain(4, 0, 1), part(4, 9, 0, 1)};
    fl_producer_register_t r;
    assert_int_equal(fl_producer_offsets_register(p, "job-1", mixed, 2, HOUR, NOW, &r, &err),
                     FLUSS_ERR_UNKNOWN_SERVER_ERROR);
    assert_int_equal(fl_producer_offsets_register(p, "job-2", mixed, 2, HOUR, NOW, &r, &err),
                     FLUSS_ERR_UNKNOWN_SERVER_ERROR);
    assert_false(get(p, "job-2", NOW, &e));
    bo_t apart[] = {plain(4, 0, 1), part(5, 9, 0, 1)};
    assert_int_equal(reg(p, "job-2", apart, 2, HOUR, NOW), FL_PRODUCER_REGISTER_CREATED);
    fl_producer_offsets_close(p);
}

static void test_persistence(void **state) {
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/producers", (const char *)*state);
    fl_producer_offsets_t *p;
    fl_error_t err;
    assert_int_equal(fl_producer_offsets_open(dir, &p, &err), 0);
    bo_t b[] = {plain(7, 0, INT64_MAX), plain(7, 1, -1), part(9, -5, INT32_MAX, 0),
                part(9, INT64_MIN, INT32_MIN, INT64_MIN)};
    assert_int_equal(reg(p, "a", b, 4, HOUR, NOW), FL_PRODUCER_REGISTER_CREATED);
    assert_int_equal(reg(p, "b", b, 1, 2 * HOUR, NOW), FL_PRODUCER_REGISTER_CREATED);
    assert_int_equal(reg(p, "c", NULL, 0, HOUR, NOW), FL_PRODUCER_REGISTER_CREATED);
    fl_producer_offsets_close(p);
    assert_int_equal(fl_producer_offsets_open(dir, &p, &err), 0);
    assert_int_equal(fl_producer_offsets_count(p), 3);
    fl_producer_entry_t e;
    assert_true(get(p, "a", NOW, &e));
    assert_int_equal(e.n, 4);
    assert_int_equal(OFF(&e, 7, 0), INT64_MAX);
    assert_int_equal(OFF(&e, 7, 1), -1);
    assert_int_equal(OFF_P(&e, 9, -5, INT32_MAX), 0);
    assert_true(OFF_P(&e, 9, INT64_MIN, INT32_MIN) == INT64_MIN);
    fl_producer_entry_free(&e);
    assert_true(get(p, "b", NOW, &e));
    assert_int_equal(e.expiration_ms, NOW + 2 * HOUR);
    fl_producer_entry_free(&e);
    assert_true(get(p, "c", NOW, &e));
    assert_int_equal(e.n, 0);
    fl_producer_entry_free(&e);
    /* the registration survives as it was: a second one still sees it */
    assert_int_equal(reg(p, "a", NULL, 0, HOUR, NOW), FL_PRODUCER_REGISTER_EXISTS);
    assert_int_equal(fl_producer_offsets_delete(p, "b", &err), 0);
    fl_producer_offsets_close(p);
    assert_int_equal(fl_producer_offsets_open(dir, &p, &err), 0);
    assert_int_equal(fl_producer_offsets_count(p), 2);
    assert_false(get(p, "b", NOW, &e));
    fl_producer_offsets_close(p);
}

static void test_expiry(void **state) {
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/producers", (const char *)*state);
    fl_producer_offsets_t *p;
    fl_error_t err;
    assert_int_equal(fl_producer_offsets_open(dir, &p, &err), 0);
    bo_t b1 = plain(1, 0, 10), b2 = plain(1, 0, 20);
    assert_int_equal(reg(p, "short", &b1, 1, 1000, NOW), FL_PRODUCER_REGISTER_CREATED);
    assert_int_equal(reg(p, "long", &b1, 1, HOUR, NOW), FL_PRODUCER_REGISTER_CREATED);
    fl_producer_entry_t e;
    /* expired once now is past the expiration time, not at it */
    assert_true(get(p, "short", NOW + 1000, &e));
    fl_producer_entry_free(&e);
    assert_int_equal(reg(p, "short", &b2, 1, 1000, NOW + 1000), FL_PRODUCER_REGISTER_EXISTS);
    assert_false(get(p, "short", NOW + 1001, &e));
    /* register replaces an expired entry */
    assert_int_equal(reg(p, "short", &b2, 1, 1000, NOW + 1001), FL_PRODUCER_REGISTER_CREATED);
    assert_true(get(p, "short", NOW + 1001, &e));
    assert_int_equal(OFF(&e, 1, 0), 20);
    assert_int_equal(e.expiration_ms, NOW + 2001);
    fl_producer_entry_free(&e);
    /* a negative TTL: expired at once; a huge one saturates */
    assert_int_equal(reg(p, "neg", &b1, 1, -1, NOW), FL_PRODUCER_REGISTER_CREATED);
    assert_false(get(p, "neg", NOW, &e));
    assert_int_equal(reg(p, "neg", &b2, 1, -1, NOW), FL_PRODUCER_REGISTER_CREATED);
    assert_int_equal(reg(p, "forever", &b1, 1, INT64_MAX, NOW), FL_PRODUCER_REGISTER_CREATED);
    assert_true(get(p, "forever", INT64_MAX, &e));
    assert_true(e.expiration_ms == INT64_MAX);
    fl_producer_entry_free(&e);
    assert_int_equal(reg(p, "past", &b1, 1, INT64_MIN, -5), FL_PRODUCER_REGISTER_CREATED);
    /* the sweep removes what expired, files too; an expired entry that
     * was loaded from disk goes the same way */
    assert_int_equal(fl_producer_offsets_count(p), 5);
    assert_int_equal(fl_producer_offsets_expire(p, NOW + 1500), 2); /* neg, past */
    assert_false(exists(*state, "neg.json"));
    assert_true(exists(*state, "short.json"));
    fl_producer_offsets_close(p);
    assert_int_equal(fl_producer_offsets_open(dir, &p, &err), 0);
    assert_int_equal(fl_producer_offsets_count(p), 3);
    assert_int_equal(fl_producer_offsets_expire(p, NOW + 3000), 1); /* short */
    assert_false(exists(*state, "short.json"));
    assert_int_equal(fl_producer_offsets_expire(p, NOW + 3000), 0);
    assert_int_equal(fl_producer_offsets_count(p), 2);
    fl_producer_offsets_close(p);
}

static void test_producer_id_rules(void **state) {
    (void)state;
    fl_producer_offsets_t *p;
    fl_error_t err;
    assert_int_equal(fl_producer_offsets_open(NULL, &p, &err), 0);
    char long_id[202];
    memset(long_id, 'x', 201);
    long_id[201] = 0;
    const char *bad[] = {"", ".", "..", "a/b", "a b", "a.json", "ä", long_id};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        fl_producer_register_t r;
        fl_producer_entry_t e;
        bool found;
        assert_int_equal(fl_producer_offsets_register(p, bad[i], NULL, 0, HOUR, NOW, &r, &err),
                         FLUSS_ERR_INVALID_PRODUCER_ID_EXCEPTION);
        assert_non_null(strstr(err.msg, "Invalid producer ID"));
        assert_int_equal(fl_producer_offsets_get(p, bad[i], NOW, &e, &found, &err),
                         FLUSS_ERR_INVALID_PRODUCER_ID_EXCEPTION);
        assert_int_equal(fl_producer_offsets_delete(p, bad[i], &err),
                         FLUSS_ERR_INVALID_PRODUCER_ID_EXCEPTION);
    }
    long_id[200] = 0; /* 200 characters: allowed, and so is a "__" prefix here */
    assert_int_equal(reg(p, long_id, NULL, 0, HOUR, NOW), FL_PRODUCER_REGISTER_CREATED);
    assert_int_equal(reg(p, "__internal", NULL, 0, HOUR, NOW), FL_PRODUCER_REGISTER_CREATED);
    assert_int_equal(reg(p, "Job_0-A", NULL, 0, HOUR, NOW), FL_PRODUCER_REGISTER_CREATED);
    fl_producer_offsets_close(p);
}

static void test_codec(void **state) {
    (void)state;
    bo_t b[] = {plain(-3, 0, 1), part(5, 1, 0, 8), part(5, 1, 1, 9), part(5, 2, 2, 7)};
    fl_producer_entry_t e = {"p-1", 42, 4, b}, d;
    fl_buf_t out;
    fl_buf_init(&out);
    fl_producer_entry_encode(&e, &out);
    const char *want = "{\"version\":1,\"producer_id\":\"p-1\",\"expiration_time\":42,\"tables\":["
                       "{\"table_id\":-3,\"buckets\":[[0,1]]},"
                       "{\"table_id\":5,\"buckets\":[[0,8,1],[1,9,1],[2,7,2]]}]}\n";
    assert_int_equal(out.len, strlen(want));
    assert_memory_equal(out.data, want, out.len);
    fl_error_t err;
    assert_int_equal(fl_producer_entry_decode((const char *)out.data, out.len, &d, &err), 0);
    assert_string_equal(d.producer_id, "p-1");
    assert_int_equal(d.expiration_ms, 42);
    assert_int_equal(d.n, 4);
    for (size_t i = 0; i < 4; i++) assert_int_equal(fl_producer_bucket_cmp(&d.b[i], &b[i]), 0);
    assert_int_equal(OFF_P(&d, 5, 1, 1), 9);
    fl_producer_entry_free(&d);
    fl_buf_reset(&out);
    fl_producer_entry_t empty = {"q", -1, 0, NULL};
    fl_producer_entry_encode(&empty, &out);
    assert_int_equal(fl_producer_entry_decode((const char *)out.data, out.len, &d, &err), 0);
    assert_int_equal(d.n, 0);
    fl_producer_entry_free(&d);
    fl_buf_free(&out);
}

static void test_damaged_file_fences_its_producer(void **state) {
#define HEAD "{\"version\":1,\"producer_id\":\"p\",\"expiration_time\":1,"
    static const char *bad[] = {
        "", "{", "[]", "null",
        "{\"version\":2,\"producer_id\":\"p\",\"expiration_time\":1,\"tables\":[]}",
        "{\"version\":1,\"producer_id\":\"p\",\"expiration_time\":1}",
        "{\"version\":1,\"producer_id\":\"q\",\"expiration_time\":1,\"tables\":[]}", /* name */
        "{\"version\":1,\"producer_id\":\"a b\",\"expiration_time\":1,\"tables\":[]}",
        "{\"version\":1,\"producer_id\":\"p\",\"expiration_time\":\"1\",\"tables\":[]}",
        "{\"version\":1,\"producer_id\":\"p\",\"expiration_time\":1.5,\"tables\":[]}",
        HEAD "\"tables\":[],\"extra\":0}",
        HEAD "\"tables\":{}}",
        HEAD "\"tables\":[{\"table_id\":1,\"buckets\":[]}]}",
        HEAD "\"tables\":[{\"table_id\":1}]}",
        HEAD "\"tables\":[{\"table_id\":\"1\",\"buckets\":[[0,1]]}]}",
        HEAD "\"tables\":[{\"table_id\":1,\"buckets\":[[0,1]],\"x\":1}]}",
        HEAD "\"tables\":[{\"table_id\":1,\"buckets\":[[0]]}]}",
        HEAD "\"tables\":[{\"table_id\":1,\"buckets\":[[0,1,2,3]]}]}",
        HEAD "\"tables\":[{\"table_id\":1,\"buckets\":[[2147483648,1]]}]}",
        HEAD "\"tables\":[{\"table_id\":1,\"buckets\":[[0,true]]}]}",
        HEAD "\"tables\":[{\"table_id\":1,\"buckets\":[[0,1,null]]}]}",
        HEAD "\"tables\":[{\"table_id\":1,\"buckets\":[[0,9223372036854775808]]}]}",
        HEAD "\"tables\":[{\"table_id\":1,\"buckets\":[[0,1],[0,2]]}]}",         /* twice */
        HEAD "\"tables\":[{\"table_id\":1,\"buckets\":[[1,1],[0,2]]}]}",         /* order */
        HEAD "\"tables\":[{\"table_id\":2,\"buckets\":[[0,1]]},{\"table_id\":1,\"buckets\":[[0,1]]}]}",
        HEAD "\"tables\":[{\"table_id\":1,\"buckets\":[[0,1]]},{\"table_id\":1,\"buckets\":[[1,1]]}]}",
        HEAD "\"tables\":[{\"table_id\":1,\"buckets\":[[0,1,5],[0,1]]}]}",       /* order */
        HEAD "\"tables\":[{\"table_id\":1,\"buckets\":[[0,1],[0,1,5]]}]}",       /* mixed */
        HEAD "\"tables\":[]}trailing",
    };
#undef HEAD
    char dir[512], path[600];
    snprintf(dir, sizeof(dir), "%s/producers", (const char *)*state);
    path_of(path, sizeof(path), *state, "p.json");
    fl_error_t err;
    assert_int_equal(fl_fs_mkdirs(dir, &err), 0);
    bo_t b = plain(1, 0, 10);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(fl_fs_write_atomic(path, bad[i], strlen(bad[i]), &err), 0);
        fl_producer_offsets_t *p = NULL;
        assert_int_equal(fl_producer_offsets_open(dir, &p, &err), 0);
        /* p is fenced: neither "none" nor a new registration */
        fl_producer_entry_t e;
        bool found;
        fl_producer_register_t r;
        if (fl_producer_offsets_get(p, "p", NOW, &e, &found, &err) != FLUSS_ERR_STORAGE_EXCEPTION)
            fail_msg("accepted #%zu: %s", i, bad[i]);
        assert_non_null(strstr(err.msg, "did not load"));
        assert_int_equal(fl_producer_offsets_register(p, "p", &b, 1, HOUR, NOW, &r, &err),
                         FLUSS_ERR_STORAGE_EXCEPTION);
        assert_int_equal(fl_producer_offsets_expire(p, INT64_MAX), 0);
        assert_true(exists(*state, "p.json"));
        /* others carry on */
        assert_int_equal(reg(p, "other", &b, 1, HOUR, NOW), FL_PRODUCER_REGISTER_CREATED);
        assert_int_equal(fl_producer_offsets_delete(p, "other", &err), 0);
        /* a delete removes the file and lifts the fence */
        assert_int_equal(fl_producer_offsets_delete(p, "p", &err), 0);
        assert_false(exists(*state, "p.json"));
        assert_false(get(p, "p", NOW, &e));
        assert_int_equal(fl_producer_offsets_count(p), 0);
        fl_producer_offsets_close(p);
    }
    /* a good file loads; a temp file of an interrupted write is removed;
     * other names, and .json files that name no valid producer, are left
     * alone */
    const char *good = "{\"version\":1,\"producer_id\":\"p\",\"expiration_time\":9,\"tables\":"
                       "[{\"table_id\":4,\"buckets\":[[0,1]]},{\"table_id\":6,\"buckets\":[[0,2,3]]}]}";
    assert_int_equal(fl_fs_write_atomic(path, good, strlen(good), &err), 0);
    path_of(path, sizeof(path), *state, "x.json.tmp");
    assert_int_equal(fl_fs_write_atomic(path, "{", 1, &err), 0);
    path_of(path, sizeof(path), *state, "README");
    assert_int_equal(fl_fs_write_atomic(path, "hi", 2, &err), 0);
    path_of(path, sizeof(path), *state, "not an id.json");
    assert_int_equal(fl_fs_write_atomic(path, "{", 1, &err), 0);
    fl_producer_offsets_t *p;
    assert_int_equal(fl_producer_offsets_open(dir, &p, &err), 0);
    assert_int_equal(fl_producer_offsets_count(p), 1);
    assert_false(exists(*state, "x.json.tmp"));
    assert_true(exists(*state, "README"));
    assert_true(exists(*state, "not an id.json"));
    fl_producer_entry_t e;
    assert_true(get(p, "p", 0, &e));
    assert_int_equal(OFF(&e, 4, 0), 1);
    assert_int_equal(OFF_P(&e, 6, 3, 0), 2);
    fl_producer_entry_free(&e);
    fl_producer_offsets_close(p);
}

static void test_failed_write_latches(void **state) {
    char dir[512], blocker[600];
    snprintf(dir, sizeof(dir), "%s/producers", (const char *)*state);
    fl_producer_offsets_t *p;
    fl_error_t err;
    assert_int_equal(fl_producer_offsets_open(dir, &p, &err), 0);
    bo_t b = plain(1, 0, 10);
    assert_int_equal(reg(p, "kept", &b, 1, HOUR, NOW), FL_PRODUCER_REGISTER_CREATED);
    /* a directory where the temp file goes: the write fails (also as root) */
    path_of(blocker, sizeof(blocker), *state, "lost.json.tmp");
    assert_int_equal(mkdir(blocker, 0755), 0);
    fl_producer_register_t r;
    assert_int_equal(fl_producer_offsets_register(p, "lost", &b, 1, HOUR, NOW, &r, &err),
                     FLUSS_ERR_STORAGE_EXCEPTION);
    fl_producer_entry_t e;
    assert_false(get(p, "lost", NOW, &e)); /* nothing applied */
    /* latched: no more changes, reads go on */
    assert_int_equal(fl_producer_offsets_register(p, "other", &b, 1, HOUR, NOW, &r, &err),
                     FLUSS_ERR_STORAGE_EXCEPTION);
    assert_int_equal(fl_producer_offsets_delete(p, "kept", &err), FLUSS_ERR_STORAGE_EXCEPTION);
    assert_int_equal(reg(p, "kept", &b, 1, HOUR, NOW), FL_PRODUCER_REGISTER_EXISTS);
    assert_true(get(p, "kept", NOW, &e));
    fl_producer_entry_free(&e);
    assert_int_equal(fl_producer_offsets_delete(p, "nobody", &err), 0);
    assert_int_equal(fl_producer_offsets_expire(p, INT64_MAX), 0);
    fl_producer_offsets_close(p);
    /* a restart reads the files again */
    assert_int_equal(rmdir(blocker), 0);
    assert_int_equal(fl_producer_offsets_open(dir, &p, &err), 0);
    assert_int_equal(fl_producer_offsets_count(p), 1);
    assert_int_equal(reg(p, "other", &b, 1, HOUR, NOW), FL_PRODUCER_REGISTER_CREATED);
    fl_producer_offsets_close(p);
}

static void test_bucket_limit(void **state) {
    (void)state;
    fl_producer_offsets_t *p;
    fl_error_t err;
    assert_int_equal(fl_producer_offsets_open(NULL, &p, &err), 0);
    size_t n = FL_PRODUCER_BUCKETS_MAX + 1;
    bo_t *b = fl_calloc(n, sizeof(*b));
    for (size_t i = 0; i < n; i++) b[i] = plain((int64_t)(i / 1000), (int32_t)(i % 1000), 1);
    fl_producer_register_t r;
    assert_int_equal(fl_producer_offsets_register(p, "big", b, n, HOUR, NOW, &r, &err),
                     FLUSS_ERR_UNKNOWN_SERVER_ERROR);
    assert_int_equal(fl_producer_offsets_count(p), 0);
    /* duplicates do not count */
    b[n - 1] = b[0];
    assert_int_equal(reg(p, "big", b, n, HOUR, NOW), FL_PRODUCER_REGISTER_CREATED);
    fl_free(b);
    fl_producer_offsets_close(p);
}

typedef struct race {
    fl_producer_offsets_t *p;
    atomic_int created;
    atomic_bool stop;
    atomic_long reads;
} race_t;

static void *registrar(void *arg) {
    race_t *r = arg;
    for (int round = 0; round < 200; round++) {
        char id[32];
        snprintf(id, sizeof(id), "job-%d", round);
        bo_t b = plain(1, round, round);
        fl_producer_register_t res;
        fl_error_t err;
        if (fl_producer_offsets_register(r->p, id, &b, 1, HOUR, NOW, &res, &err) == 0 &&
            res == FL_PRODUCER_REGISTER_CREATED)
            atomic_fetch_add(&r->created, 1);
    }
    return NULL;
}

static void *reader(void *arg) {
    race_t *r = arg;
    while (!atomic_load(&r->stop)) {
        for (int round = 0; round < 200; round += 7) {
            char id[32];
            snprintf(id, sizeof(id), "job-%d", round);
            fl_producer_entry_t e;
            if (get(r->p, id, NOW, &e)) {
                assert_int_equal(e.n, 1);
                fl_producer_entry_free(&e);
            }
        }
        fl_producer_offsets_expire(r->p, NOW);
        atomic_fetch_add(&r->reads, 1);
    }
    return NULL;
}

static void test_threads(void **state) {
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/producers", (const char *)*state);
    race_t r = {0};
    fl_error_t err;
    assert_int_equal(fl_producer_offsets_open(dir, &r.p, &err), 0);
    pthread_t rd, wr[3];
    pthread_create(&rd, NULL, reader, &r);
    for (int i = 0; i < 3; i++) pthread_create(&wr[i], NULL, registrar, &r);
    for (int i = 0; i < 3; i++) pthread_join(wr[i], NULL);
    while (atomic_load(&r.reads) < 3) sched_yield();
    atomic_store(&r.stop, true);
    pthread_join(rd, NULL);
    /* each id created exactly once among the three registrars */
    assert_int_equal(atomic_load(&r.created), 200);
    assert_int_equal(fl_producer_offsets_count(r.p), 200);
    fl_producer_offsets_close(r.p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_register_get_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_persistence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expiry, setup, teardown),
        cmocka_unit_test(test_producer_id_rules),
        cmocka_unit_test(test_codec),
        cmocka_unit_test_setup_teardown(test_damaged_file_fences_its_producer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_write_latches, setup, teardown),
        cmocka_unit_test(test_bucket_limit),
        cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
