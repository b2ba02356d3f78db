/*
 * test_client_kv.c — libfluss's primary-key side against an in-process
 * cluster (a coordinator and two tablet servers, server_local.h): the
 * upsert writer (PUT_KV) and the lookuper (LOOKUP, PREFIX_LOOKUP,
 * LIMIT_SCAN). Every test reads back what it wrote and compares values:
 * upsert → the exact row; delete → not found; a partial update keeps the
 * other columns; a prefix lookup finds exactly its rows; a limit scan of
 * every bucket finds every row once; every scalar type round-trips in
 * both kv formats (COMPACTED, INDEXED), NULLs included; batching holds
 * over many flushes; and (a second cluster whose servers close idle
 * connections after 300 ms) the writer and lookuper reconnect.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <cmocka.h>

#include "test_client_env.h"
#include "test_client_util.h"

typedef client_env_t kv_env_t;

/* A cluster whose servers close connections idle for idle_ms. */
static int env_setup_idle(void **state, int64_t idle_ms) {
    client_env_t *e = client_env_config("/tmp/fluss_kv_XXXXXX");
    if (!e) return -1;
    e->cc.limits.idle_timeout_ms = idle_ms;
    for (int i = 0; i < CLIENT_ENV_SERVERS; i++) e->tc[i].limits.idle_timeout_ms = idle_ms;
    if (client_env_start(e)) return -1;
    *state = e;
    return 0;
}

static int env_setup(void **state) { return env_setup_idle(state, 600000); }
static int env_setup_short_idle(void **state) { return env_setup_idle(state, 300); }

static int env_teardown(void **state) { return client_env_stop(*state); }

static fluss_table_t *make_table(kv_env_t *e, const char *name, const char *schema,
                                 const char *pk, const char *bucket_keys, int buckets,
                                 const char *const *props) {
    fluss_table_spec_t spec = {0};
    spec.schema = schema;
    spec.primary_key = pk;
    spec.bucket_keys = bucket_keys;
    spec.bucket_count = buckets;
    spec.properties = props;
    fluss_table_t *t = client_env_table(e, name, &spec);
    assert_non_null(t);
    return t;
}

static void set_text(fluss_row_t *r, size_t col, const char *text) {
    fluss_error_t fe;
    int rc = fluss_row_set_text(r, col, text, &fe);
    if (rc) fprintf(stderr, "set_text(%zu, %s): %s\n", col, text ? text : "NULL", fe.message);
    assert_int_equal(rc, 0);
}

static void flush(fluss_upsert_writer_t *w) {
    fluss_error_t fe;
    int rc = fluss_upsert_writer_flush(w, &fe);
    if (rc) fprintf(stderr, "flush: %s\n", fe.message);
    assert_int_equal(rc, 0);
}

/* Looks up one key; NULL when not found. */
static fluss_row_t *lookup1(fluss_lookuper_t *l, const fluss_row_t *key) {
    fluss_row_t *out = NULL;
    fluss_error_t fe;
    int rc = fluss_lookuper_lookup(l, &key, 1, &out, &fe);
    if (rc) fprintf(stderr, "lookup: %s\n", fe.message);
    assert_int_equal(rc, 0);
    return out;
}

static void assert_text(const fluss_row_t *r, size_t col, const char *want) {
    char buf[256];
    fluss_row_value_text(r, col, 0, buf, sizeof(buf));
    assert_string_equal(buf, want);
}

/* Every column of a and b has the same text (plain and JSON). */
static void assert_rows_equal(const fluss_row_t *a, const fluss_row_t *b, size_t n) {
    char x[512], y[512];
    for (size_t c = 0; c < n; c++) {
        assert_int_equal(fluss_row_is_null(a, c), fluss_row_is_null(b, c));
        for (int flags = 0; flags <= FLUSS_TEXT_JSON; flags += FLUSS_TEXT_JSON) {
            fluss_row_value_text(a, c, flags, x, sizeof(x));
            fluss_row_value_text(b, c, flags, y, sizeof(y));
            assert_string_equal(x, y);
        }
    }
}

#define KEYS 200

/* 200 keys over 4 buckets on two tablet servers: one batched lookup
 * finds each row, then deletes of the even keys leave only odd ones. */
static void test_upsert_lookup_delete(void **state) {
    kv_env_t *e = *state;
    fluss_table_t *t = make_table(e, "t_basic", "id INT NOT NULL, name STRING, v BIGINT", "id",
                                  NULL, 4, NULL);
    fluss_upsert_writer_t *w = NULL;
    fluss_error_t fe;
    assert_int_equal(fluss_upsert_writer_new(t, NULL, &w, &fe), 0);
    fluss_row_t *r = fluss_row_new(t);
    char text[64];
    for (int i = 0; i < KEYS; i++) {
        fluss_row_clear(r);
        fluss_row_set_int64(r, 0, i, NULL);
        snprintf(text, sizeof(text), "first %d", i);
        fluss_row_set_string(r, 1, text, NULL);
        fluss_row_set_int64(r, 2, (int64_t)i * 1000, NULL);
        assert_int_equal(fluss_upsert_writer_upsert(w, r, &fe), 0);
    }
    /* an update of every key: the last value wins */
    for (int i = 0; i < KEYS; i++) {
        fluss_row_clear(r);
        fluss_row_set_int64(r, 0, i, NULL);
        snprintf(text, sizeof(text), "name %d", i);
        fluss_row_set_string(r, 1, text, NULL);
        fluss_row_set_int64(r, 2, (int64_t)i * -7, NULL);
        assert_int_equal(fluss_upsert_writer_upsert(w, r, &fe), 0);
    }
    flush(w);
    int64_t acked = 0;
    fluss_upsert_writer_stats(w, &acked, NULL);
    assert_int_equal(acked, 2 * KEYS);

    fluss_lookuper_t *l = NULL;
    assert_int_equal(fluss_lookuper_new(t, &l, &fe), 0);
    fluss_row_t *keys[KEYS + 1];
    fluss_row_t *rows[KEYS + 1];
    for (int i = 0; i <= KEYS; i++) {
        keys[i] = fluss_row_new(t);
        fluss_row_set_int64(keys[i], 0, i, NULL); /* key KEYS was never written */
    }
    assert_int_equal(fluss_lookuper_lookup(l, (const fluss_row_t *const *)keys, KEYS + 1, rows, &fe), 0);
    for (int i = 0; i < KEYS; i++) {
        assert_non_null(rows[i]);
        assert_int_equal(fluss_row_get_int64(rows[i], 0), i);
        size_t n;
        const char *s = fluss_row_get_bytes(rows[i], 1, &n);
        snprintf(text, sizeof(text), "name %d", i);
        assert_int_equal(n, strlen(text));
        assert_memory_equal(s, text, n);
        assert_int_equal(fluss_row_get_int64(rows[i], 2), (int64_t)i * -7);
        fluss_row_destroy(rows[i]);
    }
    assert_null(rows[KEYS]);

    for (int i = 0; i < KEYS; i += 2) assert_int_equal(fluss_upsert_writer_delete(w, keys[i], &fe), 0);
    flush(w);
    assert_int_equal(fluss_lookuper_lookup(l, (const fluss_row_t *const *)keys, KEYS, rows, &fe), 0);
    for (int i = 0; i < KEYS; i++) {
        if (i % 2 == 0) {
            assert_null(rows[i]);
        } else {
            assert_non_null(rows[i]);
            assert_int_equal(fluss_row_get_int64(rows[i], 2), (int64_t)i * -7);
        }
        fluss_row_destroy(rows[i]);
    }
    for (int i = 0; i <= KEYS; i++) fluss_row_destroy(keys[i]);
    fluss_row_destroy(r);
    fluss_lookuper_destroy(l);
    fluss_upsert_writer_destroy(w);
    fluss_table_close(t);
}

/* A partial update of (id, b) leaves a and c as they were; a partial
 * writer without the key in its targets is refused by the server. */
static void test_partial_update(void **state) {
    kv_env_t *e = *state;
    fluss_table_t *t = make_table(e, "t_partial", "id INT NOT NULL, a STRING, b INT, c DOUBLE",
                                  "id", NULL, 2, NULL);
    fluss_error_t fe;
    fluss_upsert_writer_t *w = NULL;
    assert_int_equal(fluss_upsert_writer_new(t, NULL, &w, &fe), 0);
    fluss_row_t *r = fluss_row_new(t);
    set_text(r, 0, "1");
    set_text(r, 1, "alpha");
    set_text(r, 2, "10");
    set_text(r, 3, "2.5");
    assert_int_equal(fluss_upsert_writer_upsert(w, r, &fe), 0);
    flush(w);

    int32_t targets[] = {0, 2};
    fluss_upsert_writer_options_t o = {.base = {.linger_ms = -1, .idempotent = -1},
                                       .target_columns = targets,
                                       .target_column_count = 2};
    fluss_upsert_writer_t *pw = NULL;
    assert_int_equal(fluss_upsert_writer_new(t, &o, &pw, &fe), 0);
    fluss_row_t *p = fluss_row_new(t);
    set_text(p, 0, "1");
    set_text(p, 2, "99");
    assert_int_equal(fluss_upsert_writer_upsert(pw, p, &fe), 0);
    flush(pw);

    fluss_lookuper_t *l = NULL;
    assert_int_equal(fluss_lookuper_new(t, &l, &fe), 0);
    fluss_row_t *got = lookup1(l, p);
    assert_non_null(got);
    assert_text(got, 0, "1");
    assert_text(got, 1, "alpha");
    assert_text(got, 2, "99");
    assert_text(got, 3, "2.5");
    fluss_row_destroy(got);

    int32_t bad[] = {2};
    o.target_columns = bad;
    o.target_column_count = 1;
    fluss_upsert_writer_t *bw = NULL;
    assert_int_equal(fluss_upsert_writer_new(t, &o, &bw, &fe), 0);
    assert_int_equal(fluss_upsert_writer_upsert(bw, p, &fe), 0);
    assert_int_equal(fluss_upsert_writer_flush(bw, &fe), FLUSS_ERR_INVALID_TARGET_COLUMN);
    fluss_upsert_writer_destroy(bw);

    fluss_lookuper_destroy(l);
    fluss_row_destroy(r);
    fluss_row_destroy(p);
    fluss_upsert_writer_destroy(w);
    fluss_upsert_writer_destroy(pw);
    fluss_table_close(t);
}

/* PK (a, b), bucket key a: a prefix lookup of a = k finds exactly the
 * rows with a = k; a lookuper refuses a prefix lookup when the bucket
 * key is the whole primary key. */
static void test_prefix_lookup(void **state) {
    kv_env_t *e = *state;
    fluss_table_t *t = make_table(e, "t_prefix", "a INT NOT NULL, b STRING NOT NULL, v INT",
                                  "a,b", "a", 3, NULL);
    fluss_error_t fe;
    fluss_upsert_writer_t *w = NULL;
    assert_int_equal(fluss_upsert_writer_new(t, NULL, &w, &fe), 0);
    fluss_row_t *r = fluss_row_new(t);
    char text[32];
    for (int a = 0; a < 10; a++)
        for (int b = 0; b <= a; b++) {
            fluss_row_clear(r);
            fluss_row_set_int64(r, 0, a, NULL);
            snprintf(text, sizeof(text), "b%d", b);
            fluss_row_set_string(r, 1, text, NULL);
            fluss_row_set_int64(r, 2, a * 100 + b, NULL);
            assert_int_equal(fluss_upsert_writer_upsert(w, r, &fe), 0);
        }
    flush(w);
    fluss_lookuper_t *l = NULL;
    assert_int_equal(fluss_lookuper_new(t, &l, &fe), 0);
    for (int a = 0; a < 11; a++) {
        fluss_row_clear(r);
        fluss_row_set_int64(r, 0, a, NULL);
        fluss_row_t **rows = NULL;
        size_t n = 99;
        int rc = fluss_lookuper_prefix_lookup(l, r, &rows, &n, &fe);
        if (rc) fprintf(stderr, "prefix: %s\n", fe.message);
        assert_int_equal(rc, 0);
        assert_int_equal(n, a < 10 ? (size_t)a + 1 : 0);
        bool seen[10] = {0};
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(fluss_row_get_int64(rows[i], 0), a);
            int64_t v = fluss_row_get_int64(rows[i], 2);
            assert_int_equal(v / 100, a);
            assert_false(seen[v % 100]);
            seen[v % 100] = true;
            snprintf(text, sizeof(text), "b%d", (int)(v % 100));
            assert_text(rows[i], 1, text);
        }
        fluss_rows_free(rows, n);
    }
    fluss_lookuper_destroy(l);
    fluss_upsert_writer_destroy(w);
    fluss_table_close(t);

    fluss_table_t *t2 = make_table(e, "t_noprefix", "a INT NOT NULL, v INT", "a", NULL, 1, NULL);
    assert_int_equal(fluss_lookuper_new(t2, &l, &fe), 0);
    fluss_row_t *k = fluss_row_new(t2);
    fluss_row_set_int64(k, 0, 1, NULL);
    fluss_row_t **rows = NULL;
    size_t n = 0;
    assert_int_equal(fluss_lookuper_prefix_lookup(l, k, &rows, &n, &fe), FLUSS_ERR__INVALID_ARG);
    fluss_row_destroy(k);
    fluss_row_destroy(r);
    fluss_lookuper_destroy(l);
    fluss_table_close(t2);
}

/* LIMIT_SCAN of every bucket finds every live row exactly once; a
 * smaller limit returns that many. */
static void test_limit_scan(void **state) {
    kv_env_t *e = *state;
    fluss_table_t *t = make_table(e, "t_scan", "id BIGINT NOT NULL, s STRING", "id", NULL, 3, NULL);
    fluss_error_t fe;
    fluss_upsert_writer_t *w = NULL;
    assert_int_equal(fluss_upsert_writer_new(t, NULL, &w, &fe), 0);
    fluss_row_t *r = fluss_row_new(t);
    char text[32];
    for (int i = 0; i < 60; i++) {
        fluss_row_clear(r);
        fluss_row_set_int64(r, 0, i, NULL);
        snprintf(text, sizeof(text), "s%d", i);
        fluss_row_set_string(r, 1, text, NULL);
        assert_int_equal(fluss_upsert_writer_upsert(w, r, &fe), 0);
    }
    for (int i = 50; i < 60; i++) {
        fluss_row_clear(r);
        fluss_row_set_int64(r, 0, i, NULL);
        assert_int_equal(fluss_upsert_writer_delete(w, r, &fe), 0);
    }
    flush(w);
    fluss_lookuper_t *l = NULL;
    assert_int_equal(fluss_lookuper_new(t, &l, &fe), 0);
    int seen[60] = {0};
    size_t total = 0, biggest = 0;
    int32_t big_bucket = 0;
    for (int32_t b = 0; b < 3; b++) {
        fluss_row_t **rows = NULL;
        size_t n = 0;
        int rc = fluss_lookuper_limit_scan(l, b, 1000, &rows, &n, &fe);
        if (rc) fprintf(stderr, "limit scan: %s\n", fe.message);
        assert_int_equal(rc, 0);
        for (size_t i = 0; i < n; i++) {
            int64_t id = fluss_row_get_int64(rows[i], 0);
            assert_true(id >= 0 && id < 50);
            seen[id]++;
            snprintf(text, sizeof(text), "s%d", (int)id);
            assert_text(rows[i], 1, text);
        }
        total += n;
        if (n > biggest) biggest = n, big_bucket = b;
        fluss_rows_free(rows, n);
    }
    assert_int_equal(total, 50);
    for (int i = 0; i < 50; i++) assert_int_equal(seen[i], 1);
    fluss_row_t **rows = NULL;
    size_t n = 0;
    assert_int_equal(fluss_lookuper_limit_scan(l, big_bucket, 2, &rows, &n, &fe), 0);
    assert_int_equal(n, biggest < 2 ? biggest : 2);
    fluss_rows_free(rows, n);
    assert_int_equal(fluss_lookuper_limit_scan(l, 7, 2, &rows, &n, &fe), FLUSS_ERR__INVALID_ARG);
    fluss_row_destroy(r);
    fluss_lookuper_destroy(l);
    fluss_upsert_writer_destroy(w);
    fluss_table_close(t);
}

#define TYPES_SCHEMA                                                                           \
    "id INT NOT NULL, bo BOOLEAN, ti TINYINT, si SMALLINT, i INT, bi BIGINT, f FLOAT, "        \
    "d DOUBLE, dc DECIMAL(10, 2), dcb DECIMAL(30, 5), s STRING, c CHAR(5), by BYTES, "         \
    "bin BINARY(3), dt DATE, tm TIME(3), ts TIMESTAMP(3), ts6 TIMESTAMP(6), "                  \
    "ltz TIMESTAMP_LTZ(3), ltz9 TIMESTAMP_LTZ(9)"

/* The text set and the text expected back, per column after id. */
static const char *const type_values[][2] = {
    {"true", "true"},
    {"-128", "-128"},
    {"-32768", "-32768"},
    {"-2147483648", "-2147483648"},
    {"9223372036854775807", "9223372036854775807"},
    {"1.5", "1.5"},
    {"-3.141592653589793", "-3.141592653589793"},
    {"-12345678.91", "-12345678.91"},
    {"1234567890123456789012345.12345", "1234567890123456789012345.12345"},
    {"héllo, \"world\"", "héllo, \"world\""},
    {"ab", "ab"},
    {"00ff10", "00ff10"},
    {"0a0b0c", "0a0b0c"},
    {"2024-02-29", "2024-02-29"},
    {"23:59:58.123", "23:59:58.123"},
    {"1969-12-31 23:59:59.999", "1969-12-31T23:59:59.999"},
    {"2023-06-01 12:00:00.123456", "2023-06-01T12:00:00.123456"},
    {"2023-06-01T12:00:00.5Z", "2023-06-01T12:00:00.500Z"},
    {"2023-06-01T12:00:00.123456789Z", "2023-06-01T12:00:00.123456789Z"},
};
#define TYPE_COLS (sizeof(type_values) / sizeof(type_values[0]))

static void roundtrip_types(kv_env_t *e, const char *name, const char *format) {
    char prop[64];
    snprintf(prop, sizeof(prop), "table.kv.format=%s", format);
    const char *props[] = {prop, NULL};
    fluss_table_t *t = make_table(e, name, TYPES_SCHEMA, "id", NULL, 2, props);
    assert_int_equal(fluss_table_column_count(t), TYPE_COLS + 1);
    fluss_error_t fe;
    fluss_upsert_writer_t *w = NULL;
    assert_int_equal(fluss_upsert_writer_new(t, NULL, &w, &fe), 0);
    fluss_row_t *full = fluss_row_new(t), *nulls = fluss_row_new(t);
    set_text(full, 0, "1");
    for (size_t c = 0; c < TYPE_COLS; c++) set_text(full, c + 1, type_values[c][0]);
    set_text(nulls, 0, "2"); /* every other column NULL */
    assert_int_equal(fluss_upsert_writer_upsert(w, full, &fe), 0);
    assert_int_equal(fluss_upsert_writer_upsert(w, nulls, &fe), 0);
    flush(w);
    fluss_lookuper_t *l = NULL;
    assert_int_equal(fluss_lookuper_new(t, &l, &fe), 0);
    fluss_row_t *got = lookup1(l, full);
    assert_non_null(got);
    assert_rows_equal(got, full, TYPE_COLS + 1);
    for (size_t c = 0; c < TYPE_COLS; c++) assert_text(got, c + 1, type_values[c][1]);
    fluss_row_destroy(got);
    got = lookup1(l, nulls);
    assert_non_null(got);
    assert_rows_equal(got, nulls, TYPE_COLS + 1);
    for (size_t c = 1; c <= TYPE_COLS; c++) assert_true(fluss_row_is_null(got, c));
    fluss_row_destroy(got);
    fluss_row_destroy(full);
    fluss_row_destroy(nulls);
    fluss_lookuper_destroy(l);
    fluss_upsert_writer_destroy(w);
    fluss_table_close(t);
}

static void test_types_compacted(void **state) { roundtrip_types(*state, "t_types_c", "COMPACTED"); }
static void test_types_indexed(void **state) { roundtrip_types(*state, "t_types_i", "INDEXED"); }

/* Writers refuse the wrong kind of table; a key with a NULL primary-key
 * column is refused before anything is sent. */
static void test_wrong_table(void **state) {
    kv_env_t *e = *state;
    fluss_table_spec_t spec = {.schema = "id INT, v STRING", .bucket_count = 1};
    fluss_error_t fe;
    assert_int_equal(fluss_table_create(e->client, "db", "t_log", &spec, false, &fe), 0);
    fluss_table_t *log = NULL;
    assert_int_equal(fluss_table_open(e->client, "db", "t_log", &log, &fe), 0);
    fluss_upsert_writer_t *w = NULL;
    fluss_lookuper_t *l = NULL;
    assert_int_equal(fluss_upsert_writer_new(log, NULL, &w, &fe), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fluss_lookuper_new(log, &l, &fe), FLUSS_ERR__INVALID_ARG);
    fluss_table_close(log);

    fluss_table_t *t = make_table(e, "t_pk", "id INT NOT NULL, v STRING", "id", NULL, 1, NULL);
    fluss_append_writer_t *aw = NULL;
    assert_int_equal(fluss_append_writer_new(t, NULL, &aw, &fe), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fluss_upsert_writer_new(t, NULL, &w, &fe), 0);
    fluss_row_t *r = fluss_row_new(t);
    fluss_row_set_string(r, 1, "no key", NULL);
    assert_int_equal(fluss_upsert_writer_upsert(w, r, &fe), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fluss_upsert_writer_flush(w, &fe), 0);
    fluss_row_destroy(r);
    fluss_upsert_writer_destroy(w);
    fluss_table_close(t);
}

static void count_ack(void *opaque, const fluss_append_ack_t *a) {
    int *n = opaque;
    assert_int_equal(a->error_code, 0);
    assert_int_equal(a->base_offset, -1); /* PUT_KV answers no offsets */
    assert_true(a->rows > 0 && a->wire_bytes > 28);
    (*n)++;
}

/* Batching holds over many flushes: 100 rows after five flush cycles
 * still go out as one batch per bucket (the writer's memory count does
 * not drift). */
static void test_batching_after_flushes(void **state) {
    kv_env_t *e = *state;
    fluss_table_t *t = make_table(e, "t_batching", "id INT NOT NULL, v STRING", "id", NULL, 2, NULL);
    fluss_error_t fe;
    fluss_upsert_writer_t *w = NULL;
    assert_int_equal(fluss_upsert_writer_new(t, NULL, &w, &fe), 0);
    int acks = 0;
    fluss_upsert_writer_set_ack_callback(w, count_ack, &acks);
    fluss_row_t *r = fluss_row_new(t);
    for (int round = 0; round < 6; round++) {
        acks = 0;
        for (int i = 0; i < 100; i++) {
            fluss_row_clear(r);
            fluss_row_set_int64(r, 0, i, NULL);
            fluss_row_set_string(r, 1, "x", NULL);
            assert_int_equal(fluss_upsert_writer_upsert(w, r, &fe), 0);
        }
        flush(w);
        assert_true(acks >= 1 && acks <= 2);
    }
    int64_t rows = 0, bytes = 0;
    fluss_upsert_writer_stats(w, &rows, &bytes);
    assert_int_equal(rows, 600);
    fluss_row_destroy(r);
    fluss_upsert_writer_destroy(w);
    fluss_table_close(t);
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The servers close connections idle for 300 ms: a lookuper (lookups,
 * limit scans) and an upsert writer used again after a pause reconnect
 * instead of failing. */
static void test_idle_connections_reconnect(void **state) {
    kv_env_t *e = *state;
    fluss_table_t *t = make_table(e, "t_idle", "id INT NOT NULL, v STRING", "id", NULL, 4, NULL);
    fluss_error_t fe;
    fluss_upsert_writer_t *w = NULL;
    fluss_lookuper_t *l = NULL;
    assert_int_equal(fluss_upsert_writer_new(t, NULL, &w, &fe), 0);
    assert_int_equal(fluss_lookuper_new(t, &l, &fe), 0);
    fluss_row_t *r = fluss_row_new(t);
    for (int round = 0; round < 2; round++) {
        char text[32];
        snprintf(text, sizeof(text), "round %d", round);
        for (int i = 0; i < 20; i++) {
            fluss_row_clear(r);
            fluss_row_set_int64(r, 0, i, NULL);
            fluss_row_set_string(r, 1, text, NULL);
            assert_int_equal(fluss_upsert_writer_upsert(w, r, &fe), 0);
        }
        flush(w);
        for (int i = 0; i < 20; i++) {
            fluss_row_clear(r);
            fluss_row_set_int64(r, 0, i, NULL);
            fluss_row_t *got = lookup1(l, r);
            assert_non_null(got);
            assert_text(got, 1, text);
            fluss_row_destroy(got);
        }
        if (round > 0) sleep_ms(2300); /* and the limit scans find theirs closed */
        size_t total = 0;
        for (int32_t b = 0; b < 4; b++) {
            fluss_row_t **rows = NULL;
            size_t n = 0;
            assert_int_equal(fluss_lookuper_limit_scan(l, b, 100, &rows, &n, &fe), 0);
            for (size_t i = 0; i < n; i++) assert_text(rows[i], 1, text);
            total += n;
            fluss_rows_free(rows, n);
        }
        assert_int_equal(total, 20);
        /* the servers scan for idle connections every second: every
         * connection is closed meanwhile */
        if (round == 0) sleep_ms(2300);
    }
    fluss_row_destroy(r);
    fluss_lookuper_destroy(l);
    fluss_upsert_writer_destroy(w);
    fluss_table_close(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upsert_lookup_delete),
        cmocka_unit_test(test_partial_update),
        cmocka_unit_test(test_prefix_lookup),
        cmocka_unit_test(test_limit_scan),
        cmocka_unit_test(test_types_compacted),
        cmocka_unit_test(test_types_indexed),
        cmocka_unit_test(test_wrong_table),
        cmocka_unit_test(test_batching_after_flushes),
    };
    const struct CMUnitTest idle_tests[] = {
        cmocka_unit_test(test_idle_connections_reconnect),
    };
    int failed = cmocka_run_group_tests(tests, env_setup, env_teardown);
    return failed + cmocka_run_group_tests(idle_tests, env_setup_short_idle, env_teardown);
}
