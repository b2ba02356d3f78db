/*
 * test_client_union.c — libfluss's union scanner (client_union.c) against
 * an in-process cluster (a coordinator and two tablet servers,
 * server_local.h) that tiers lake tables into an Iceberg warehouse of its
 * own. One log lake table of two buckets, 200 rows tiered, 100 more in
 * the log only:
 *
 * - Bucket 0 subscribed at FLUSS_OFFSET_LAKE: its lake rows (none of
 *   bucket 1's, though the snapshot holds them), in offset order, below
 *   its lake offset; the poll that ends the lake phase returns no batch
 *   and leaves the position at the lake offset; then its log from there.
 *   Every offset of the bucket once.
 * - Bucket 1 subscribed at FLUSS_OFFSET_LAKE while bucket 0 follows the
 *   log: a second lake phase, the same for bucket 1; the two buckets
 *   hold every id once, and the scanner counts the lake rows it gave.
 * - A bucket subscribed at an offset is read from the log alone.
 * - A table whose lake is off: FLUSS_OFFSET_LAKE is its log's earliest.
 *
 * And the table read (fluss_table_read_new): a log lake table read whole
 * is every row once, lake and log; a primary-key lake table, after rounds
 * of upserts and deletes with tiering between them and changes after the
 * last round, reads as its rows now (a model of the writes), each key
 * once with its last value, the lake's rows as +I and the log's as +I or
 * +U; a projection without the key is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common_strlist.h"
#include "coordinator_lake.h"
#include "test_client_env.h"

#define TIERED 200
#define ROWS 300

typedef client_env_t union_env_t;

/* The lake configured as flussd's configuration gives it: Iceberg in a
 * Hadoop warehouse under the environment's directory. */
static int env_setup(void **state) {
    client_env_t *e = client_env_config("/tmp/fluss_union_XXXXXX");
    if (!e) return -1;
    fl_error_t err;
    fl_err_clear(&err);
    char wh[128];
    snprintf(wh, sizeof(wh), "%s/wh", e->dir);
    fl_kvlist_t conf = {0};
    fl_kvlist_set(&conf, "datalake.format", "iceberg");
    fl_kvlist_set(&conf, "datalake.iceberg.type", "hadoop");
    fl_kvlist_set(&conf, "datalake.iceberg.warehouse", wh);
    int rc = fl_lake_config_parse(&conf, "/", &e->cc.defaults.lake, &err);
    fl_kvlist_free(&conf);
    if (rc || client_env_start(e)) return -1;
    *state = e;
    return 0;
}

static int env_teardown(void **state) { return client_env_stop(*state); }

static fluss_table_t *make_table(union_env_t *e, const char *name, const char *const *props) {
    fluss_table_spec_t spec = {0};
    spec.schema = "id BIGINT NOT NULL, s STRING";
    spec.bucket_count = 2;
    spec.properties = props;
    fluss_table_t *t = client_env_table(e, name, &spec);
    assert_non_null(t);
    return t;
}

static void append(fluss_table_t *t, int from, int to) {
    fluss_append_writer_t *w = NULL;
    fluss_error_t fe;
    fluss_append_writer_options_t o = {0};
    o.linger_ms = 0;
    o.batch_bytes = 512; /* several batches per bucket */
    assert_int_equal(fluss_append_writer_new(t, &o, &w, &fe), 0);
    fluss_row_t *r = fluss_row_new(t);
    char text[32];
    for (int i = from; i < to; i++) {
        fluss_row_clear(r);
        fluss_row_set_int64(r, 0, i, NULL);
        snprintf(text, sizeof(text), "row %d", i);
        fluss_row_set_string(r, 1, text, NULL);
        assert_int_equal(fluss_append_writer_append(w, r, &fe), 0);
    }
    int rc = fluss_append_writer_flush(w, &fe);
    if (rc) fprintf(stderr, "flush: %s\n", fe.message);
    assert_int_equal(rc, 0);
    fluss_row_destroy(r);
    fluss_append_writer_destroy(w);
}

/* What the polls gave, per bucket: each offset's id (-1: not seen) and
 * whether it came from the lake. */
typedef struct seen {
    int64_t id[2][ROWS];
    bool lake[2][ROWS];
    int ids[ROWS]; /* times each id came */
    int64_t lake_rows;
} seen_t;

static void seen_init(seen_t *s) {
    memset(s, 0, sizeof(*s));
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < ROWS; i++) s->id[b][i] = -1;
}

/* One poll; records its batch. Returns the rows it had. */
static size_t poll_once(fluss_union_scanner_t *u, seen_t *s, bool *was_lake) {
    fluss_record_batch_t *b = NULL;
    fluss_error_t fe;
    int rc = fluss_union_scanner_poll(u, 200, &b, &fe);
    if (rc) fprintf(stderr, "poll: %s\n", fe.message);
    assert_int_equal(rc, 0);
    *was_lake = fluss_union_scanner_in_lake(u);
    if (!b) return 0;
    int32_t bucket = fluss_record_batch_bucket(b);
    assert_true(bucket == 0 || bucket == 1);
    size_t n = fluss_record_batch_row_count(b);
    int64_t prev = -1;
    for (size_t r = 0; r < n; r++) {
        int64_t off = fluss_record_batch_offset(b, r);
        assert_true(off > prev && off < ROWS);
        prev = off;
        char text[32];
        fluss_record_batch_value_text(b, r, 0, 0, text, sizeof(text));
        int64_t id = strtoll(text, NULL, 10);
        assert_true(id >= 0 && id < ROWS);
        assert_int_equal(s->id[bucket][off], -1); /* each offset once */
        s->id[bucket][off] = id;
        s->lake[bucket][off] = *was_lake;
        s->ids[id]++;
        if (*was_lake) s->lake_rows++;
        assert_int_equal(fluss_record_batch_change_type(b, r), FLUSS_CHANGE_APPEND_ONLY);
    }
    fluss_record_batch_free(b);
    return n;
}

/* Polls until bucket's position reaches end. */
static void poll_to(fluss_union_scanner_t *u, seen_t *s, int32_t bucket, int64_t end) {
    bool lake;
    for (int i = 0; i < 300 && fluss_union_scanner_position(u, -1, bucket) < end; i++)
        poll_once(u, s, &lake);
    assert_int_equal(fluss_union_scanner_position(u, -1, bucket), end);
}

/* Polls through one lake phase: lake batches of want_bucket only, then
 * the poll that ends it (no batch). */
static void poll_lake_phase(fluss_union_scanner_t *u, seen_t *s, int32_t want_bucket) {
    bool lake = true;
    int polls = 0;
    while (lake) {
        assert_true(fluss_union_scanner_in_lake(u));
        seen_t before = *s;
        size_t n = poll_once(u, s, &lake);
        if (lake) {
            assert_true(n > 0);
            for (int off = 0; off < ROWS; off++)
                if (s->id[1 - want_bucket][off] != before.id[1 - want_bucket][off])
                    fail_msg("a lake row of bucket %d, which is not subscribed there",
                             1 - want_bucket);
        } else {
            assert_int_equal(n, 0);
        }
        assert_true(++polls < 1000);
    }
}

static void test_lake_then_log_per_bucket(void **state) {
    union_env_t *e = *state;
    static const char *const props[] = {"table.datalake.enabled=true",
                                        "table.datalake.freshness=1h", NULL};
    fluss_table_t *t = make_table(e, "u", props);
    append(t, 0, TIERED);
    int64_t snap = -1, added = 0;
    fluss_error_t fe;
    int rc = fluss_lake_tier_now(e->client, "db", "u", &snap, &added, &fe);
    if (rc) fprintf(stderr, "tier now: %s\n", fe.message);
    assert_int_equal(rc, 0);
    assert_int_equal(added, TIERED);
    assert_true(snap >= 0);
    append(t, TIERED, ROWS);
    int32_t buckets[2] = {0, 1};
    int64_t lake_off[2], end[2];
    fluss_lake_snapshot_t *ls = NULL;
    assert_int_equal(fluss_lake_snapshot_get(e->client, "db", "u", &ls, &fe), 0);
    assert_int_equal(ls->bucket_count, 2);
    for (size_t i = 0; i < 2; i++) lake_off[ls->buckets[i].bucket] = ls->buckets[i].offset;
    fluss_lake_snapshot_free(ls);
    assert_int_equal(lake_off[0] + lake_off[1], TIERED);
    assert_int_equal(fluss_table_list_offsets(t, buckets, 2, FLUSS_OFFSETS_LATEST, 0, end, &fe), 0);
    assert_int_equal(end[0] + end[1], ROWS);
    assert_true(lake_off[0] > 0 && lake_off[0] < end[0]);
    assert_true(lake_off[1] > 0 && lake_off[1] < end[1]);

    fluss_union_scanner_t *u = NULL;
    assert_int_equal(fluss_union_scanner_new(e->client, t, NULL, 0, &u, &fe), 0);
    assert_false(fluss_union_scanner_in_lake(u));
    assert_int_equal(fluss_union_scanner_lake_snapshot(u), -1);
    seen_t s;
    seen_init(&s);

    /* bucket 0: the lake, then its log from the lake offset */
    assert_int_equal(fluss_union_scanner_subscribe(u, -1, 0, FLUSS_OFFSET_LAKE, &fe), 0);
    assert_int_equal(fluss_union_scanner_position(u, -1, 0), FLUSS_OFFSET_LAKE);
    assert_int_equal(fluss_union_scanner_position(u, -1, 1), -1);
    poll_lake_phase(u, &s, 0);
    assert_int_equal(fluss_union_scanner_position(u, -1, 0), lake_off[0]);
    assert_int_equal(fluss_union_scanner_lake_snapshot(u), snap);
    assert_true(fluss_union_scanner_lake_files(u) > 0);
    poll_to(u, &s, 0, end[0]);
    for (int64_t off = 0; off < end[0]; off++) {
        assert_true(s.id[0][off] >= 0);
        assert_int_equal(s.lake[0][off], off < lake_off[0]);
    }

    /* bucket 1 later: a lake phase of its own, bucket 0 stays at its end */
    assert_int_equal(fluss_union_scanner_subscribe(u, -1, 1, FLUSS_OFFSET_LAKE, &fe), 0);
    assert_true(fluss_union_scanner_in_lake(u));
    poll_lake_phase(u, &s, 1);
    assert_int_equal(fluss_union_scanner_position(u, -1, 1), lake_off[1]);
    poll_to(u, &s, 1, end[1]);
    for (int64_t off = 0; off < end[1]; off++) {
        assert_true(s.id[1][off] >= 0);
        assert_int_equal(s.lake[1][off], off < lake_off[1]);
    }
    for (int i = 0; i < ROWS; i++) assert_int_equal(s.ids[i], 1);
    assert_int_equal(s.lake_rows, TIERED);
    assert_int_equal(fluss_union_scanner_lake_rows(u), TIERED);
    assert_int_equal(fluss_union_scanner_position(u, -1, 0), end[0]);

    /* at an offset: the log alone, from there */
    assert_int_equal(fluss_union_scanner_subscribe(u, -1, 0, 5, &fe), 0);
    assert_false(fluss_union_scanner_in_lake(u));
    seen_t again;
    seen_init(&again);
    poll_to(u, &again, 0, end[0]);
    for (int64_t off = 0; off < end[0]; off++) {
        assert_int_equal(again.id[0][off] >= 0, off >= 5);
        if (off >= 5) assert_int_equal(again.id[0][off], s.id[0][off]);
    }
    assert_int_equal(again.lake_rows, 0);
    fluss_union_scanner_unsubscribe(u, -1, 0);
    assert_int_equal(fluss_union_scanner_position(u, -1, 0), -1);
    fluss_union_scanner_destroy(u);
    fluss_table_close(t);
}

static void test_lake_off_reads_the_log(void **state) {
    union_env_t *e = *state;
    fluss_table_t *t = make_table(e, "plain", NULL);
    append(t, 0, 40);
    fluss_union_scanner_t *u = NULL;
    fluss_error_t fe;
    assert_int_equal(fluss_union_scanner_new(e->client, t, NULL, 0, &u, &fe), 0);
    seen_t s;
    seen_init(&s);
    int32_t buckets[2] = {0, 1};
    int64_t end[2];
    assert_int_equal(fluss_table_list_offsets(t, buckets, 2, FLUSS_OFFSETS_LATEST, 0, end, &fe), 0);
    for (int32_t b = 0; b < 2; b++)
        assert_int_equal(fluss_union_scanner_subscribe(u, -1, b, FLUSS_OFFSET_LAKE, &fe), 0);
    assert_false(fluss_union_scanner_in_lake(u));
    poll_to(u, &s, 0, end[0]);
    poll_to(u, &s, 1, end[1]);
    for (int i = 0; i < 40; i++) assert_int_equal(s.ids[i], 1);
    assert_int_equal(s.lake_rows, 0);
    assert_int_equal(fluss_union_scanner_lake_snapshot(u), -1);
    fluss_union_scanner_destroy(u);
    fluss_table_close(t);
}

/* The first column of each row a table read gives, as ids; each row's
 * second column in names (NULL: not wanted) by id. */
static size_t read_ids(const fluss_table_read_t *r, int *seen, size_t max, char (*names)[32]) {
    size_t rows = 0;
    for (size_t i = 0; i < fluss_table_read_batch_count(r); i++) {
        const size_t *idx;
        size_t n;
        const fluss_record_batch_t *b = fluss_table_read_batch(r, i, &idx, &n);
        assert_non_null(b);
        assert_true(n > 0);
        for (size_t k = 0; k < n; k++) {
            assert_true(k == 0 || idx[k] > idx[k - 1]);
            char text[32];
            fluss_record_batch_value_text(b, idx[k], 0, 0, text, sizeof(text));
            long id = strtol(text, NULL, 10);
            assert_true(id >= 0 && (size_t)id < max);
            seen[id]++;
            fluss_change_type_t ct = fluss_record_batch_change_type(b, idx[k]);
            assert_true(ct == FLUSS_CHANGE_APPEND_ONLY || ct == FLUSS_CHANGE_INSERT ||
                        ct == FLUSS_CHANGE_UPDATE_AFTER);
            if (names) fluss_record_batch_value_text(b, idx[k], 1, 0, names[id], 32);
            rows++;
        }
    }
    assert_int_equal(rows, fluss_table_read_row_count(r));
    return rows;
}

static void test_table_read_of_a_log_table(void **state) {
    union_env_t *e = *state;
    static const char *const props[] = {"table.datalake.enabled=true",
                                        "table.datalake.freshness=1h", NULL};
    fluss_table_t *t = make_table(e, "whole", props);
    append(t, 0, 120);
    int64_t snap = -1, added = 0;
    fluss_error_t fe;
    assert_int_equal(fluss_lake_tier_now(e->client, "db", "whole", &snap, &added, &fe), 0);
    assert_int_equal(added, 120);
    append(t, 120, 170);
    fluss_table_read_t *r = NULL;
    int rc = fluss_table_read_new(e->client, t, NULL, 0, &r, &fe);
    if (rc) fprintf(stderr, "read: %s\n", fe.message);
    assert_int_equal(rc, 0);
    int seen[170] = {0};
    assert_int_equal(read_ids(r, seen, 170, NULL), 170);
    for (int i = 0; i < 170; i++) assert_int_equal(seen[i], 1);
    fluss_table_read_destroy(r);
    fluss_table_close(t);
}

#define KEYS 200

/* Upserts ids [from, to) by step as "<tag><id>" and deletes ids [dfrom,
 * 200) by dstep; model[id] follows ("" : no row). */
static void upsert_round(fluss_table_t *t, int from, int to, int step, const char *tag, int dfrom,
                         int dstep, char (*model)[32]) {
    fluss_upsert_writer_t *w = NULL;
    fluss_error_t fe;
    fluss_upsert_writer_options_t o = {0};
    o.base.linger_ms = 0;
    o.base.batch_bytes = 512; /* several batches per bucket */
    assert_int_equal(fluss_upsert_writer_new(t, &o, &w, &fe), 0);
    fluss_row_t *r = fluss_row_new(t);
    for (int i = from; i < to; i += step) {
        fluss_row_clear(r);
        fluss_row_set_int64(r, 0, i, NULL);
        snprintf(model[i], 32, "%s%d", tag, i);
        fluss_row_set_string(r, 1, model[i], NULL);
        assert_int_equal(fluss_upsert_writer_upsert(w, r, &fe), 0);
    }
    for (int i = dfrom; dstep && i < KEYS; i += dstep) {
        fluss_row_clear(r);
        fluss_row_set_int64(r, 0, i, NULL);
        assert_int_equal(fluss_upsert_writer_delete(w, r, &fe), 0);
        model[i][0] = '\0';
    }
    int rc = fluss_upsert_writer_flush(w, &fe);
    if (rc) fprintf(stderr, "flush: %s\n", fe.message);
    assert_int_equal(rc, 0);
    fluss_row_destroy(r);
    fluss_upsert_writer_destroy(w);
}

static void test_table_read_merges_a_pk_table(void **state) {
    union_env_t *e = *state;
    static const char *const props[] = {"table.datalake.enabled=true",
                                        "table.datalake.freshness=1h", NULL};
    fluss_table_spec_t spec = {0};
    spec.schema = "id BIGINT NOT NULL, s STRING";
    spec.primary_key = "id";
    spec.bucket_count = 2;
    spec.properties = props;
    fluss_table_t *t = client_env_table(e, "kv", &spec);
    assert_non_null(t);
    static char model[KEYS][32];
    memset(model, 0, sizeof(model));
    fluss_error_t fe;
    int64_t snap = -1, added = 0;
    upsert_round(t, 0, 150, 1, "a", 0, 0, model);
    assert_int_equal(fluss_lake_tier_now(e->client, "db", "kv", &snap, &added, &fe), 0);
    assert_int_equal(added, 150);
    upsert_round(t, 0, 150, 3, "b", 1, 10, model); /* updates and deletes of lake rows */
    assert_int_equal(fluss_lake_tier_now(e->client, "db", "kv", &snap, &added, &fe), 0);
    /* after the lake: updates of lake rows, deleted keys back, new keys,
     * deletes of rows the lake holds and of rows it never saw */
    upsert_round(t, 1, KEYS, 5, "c", 2, 7, model);
    upsert_round(t, 100, KEYS, 4, "d", 3, 13, model);
    for (int pass = 0; pass < 2; pass++) {
        /* the whole table, then a projection that holds the key */
        static const int32_t proj[2] = {0, 1};
        fluss_table_read_t *r = NULL;
        int rc = fluss_table_read_new(e->client, t, pass ? proj : NULL, pass ? 2 : 0, &r, &fe);
        if (rc) fprintf(stderr, "read: %s\n", fe.message);
        assert_int_equal(rc, 0);
        int seen[KEYS] = {0};
        static char got[KEYS][32];
        memset(got, 0, sizeof(got));
        size_t want = 0;
        for (int i = 0; i < KEYS; i++) want += model[i][0] != '\0';
        assert_int_equal(read_ids(r, seen, KEYS, got), want);
        for (int i = 0; i < KEYS; i++) {
            assert_int_equal(seen[i], model[i][0] != '\0');
            if (model[i][0]) assert_string_equal(got[i], model[i]);
        }
        fluss_table_read_destroy(r);
    }
    static const int32_t no_key[1] = {1};
    fluss_table_read_t *r = NULL;
    assert_int_equal(fluss_table_read_new(e->client, t, no_key, 1, &r, &fe),
                     FLUSS_ERR__INVALID_ARG);
    assert_null(r);
    assert_non_null(strstr(fe.message, "must hold the primary key"));
    fluss_table_close(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lake_then_log_per_bucket),
        cmocka_unit_test(test_lake_off_reads_the_log),
        cmocka_unit_test(test_table_read_of_a_log_table),
        cmocka_unit_test(test_table_read_merges_a_pk_table),
    };
    return cmocka_run_group_tests(tests, env_setup, env_teardown);
}
