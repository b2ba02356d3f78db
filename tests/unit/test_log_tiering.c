/*
 * test_log_tiering.c — the tiering decisions (log_tiering.h): which local
 * segments go to remote storage (rolled, durable, below the high
 * watermark, in order from the remote end, stopping at the first that
 * cannot go), which local segments may be deleted (covered by the remote
 * end and the retain offset, at least `keep` left, never the active one),
 * and which remote segments expire.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "log_tiering.h"

/* Five segments of 100 offsets each: [0,100) ... [400,500), the last active. */
static void five(fl_tier_segment_t *s) {
    for (int i = 0; i < 5; i++)
        s[i] = (fl_tier_segment_t){i * 100, (i + 1) * 100, 4096, 1000 + i, i < 4};
}

static void test_copy_from_the_start(void **state) {
    (void)state;
    fl_tier_segment_t s[5];
    five(s);
    size_t first;
    assert_int_equal(fl_tiering_to_copy(s, 5, 500, -1, &first), 4); /* never the active one */
    assert_int_equal(first, 0);
    /* only segments wholly below the high watermark */
    assert_int_equal(fl_tiering_to_copy(s, 5, 399, -1, &first), 3);
    assert_int_equal(fl_tiering_to_copy(s, 5, 400, -1, &first), 4);
    assert_int_equal(fl_tiering_to_copy(s, 5, 99, -1, &first), 0);
    /* a single (active) segment never goes */
    assert_int_equal(fl_tiering_to_copy(s + 4, 1, 500, -1, &first), 0);
    assert_int_equal(fl_tiering_to_copy(s, 0, 500, -1, &first), 0);
}

static void test_copy_after_remote_end(void **state) {
    (void)state;
    fl_tier_segment_t s[5];
    five(s);
    size_t first;
    assert_int_equal(fl_tiering_to_copy(s, 5, 500, 200, &first), 2);
    assert_int_equal(first, 2);
    assert_int_equal(fl_tiering_to_copy(s, 5, 500, 400, &first), 0);
    assert_int_equal(first, 4);
    /* a remote end inside a local segment: that one is not sent twice */
    assert_int_equal(fl_tiering_to_copy(s, 5, 500, 150, &first), 2);
    assert_int_equal(first, 2);
}

static void test_copy_stops_at_first_that_cannot_go(void **state) {
    (void)state;
    fl_tier_segment_t s[5];
    five(s);
    size_t first;
    s[1].durable = false; /* rolled, not yet fsynced and indexed */
    assert_int_equal(fl_tiering_to_copy(s, 5, 500, -1, &first), 1);
    five(s);
    s[2].size = (uint64_t)INT32_MAX + 1; /* cannot be described to a client */
    assert_int_equal(fl_tiering_to_copy(s, 5, 500, -1, &first), 2);
    five(s);
    s[0].size = 0;
    assert_int_equal(fl_tiering_to_copy(s, 5, 500, -1, &first), 0);
    five(s);
    s[2].base_offset = 205; /* does not follow its predecessor */
    s[1].next_offset = 200;
    assert_int_equal(fl_tiering_to_copy(s, 5, 500, -1, &first), 1);
}

static void test_local_deletion(void **state) {
    (void)state;
    fl_tier_segment_t s[5];
    five(s);
    /* nothing remote: nothing goes */
    assert_int_equal(fl_tiering_local_deletable(s, 5, -1, INT64_MAX, 2), 0);
    /* remote up to 400: four rolled segments covered, two kept (active incl.) */
    assert_int_equal(fl_tiering_local_deletable(s, 5, 400, INT64_MAX, 2), 3);
    assert_int_equal(fl_tiering_local_deletable(s, 5, 400, INT64_MAX, 1), 4);
    assert_int_equal(fl_tiering_local_deletable(s, 5, 400, INT64_MAX, 5), 0);
    assert_int_equal(fl_tiering_local_deletable(s, 5, 400, INT64_MAX, 0), 4); /* >= 1 kept */
    /* only what the remote end covers whole */
    assert_int_equal(fl_tiering_local_deletable(s, 5, 250, INT64_MAX, 1), 2);
    assert_int_equal(fl_tiering_local_deletable(s, 5, 99, INT64_MAX, 1), 0);
    /* a primary-key changelog keeps what its newest KV snapshot needs */
    assert_int_equal(fl_tiering_local_deletable(s, 5, 400, 150, 1), 1);
    assert_int_equal(fl_tiering_local_deletable(s, 5, 400, 0, 1), 0);
    /* never the active segment, even when the remote end passed it */
    assert_int_equal(fl_tiering_local_deletable(s, 5, 500, INT64_MAX, 1), 4);
}

static void test_remote_expiry(void **state) {
    (void)state;
    fl_remote_manifest_t m;
    fl_remote_manifest_init(&m, NULL);
    const char *ids[] = {"0b8a4f7e-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "1c9b5a8f-2d3e-4f60-9bac-1d2e3f4a5b6c",
                         "2dac6b90-3e4f-4071-acbd-2e3f4a5b6c7d"};
    for (int i = 0; i < 3; i++) {
        fl_remote_segment_t seg;
        memset(&seg, 0, sizeof(seg));
        strcpy(seg.id, ids[i]);
        seg.start_offset = i * 10;
        seg.end_offset = (i + 1) * 10;
        seg.max_timestamp = 1000 * (i + 1);
        seg.size_bytes = 10;
        fl_error_t err;
        assert_int_equal(fl_remote_manifest_append(&m, &seg, &err), 0);
    }
    assert_int_equal(fl_tiering_remote_expired(&m, 100000, 0), 0);  /* no TTL */
    assert_int_equal(fl_tiering_remote_expired(&m, 100000, -1), 0);
    assert_int_equal(fl_tiering_remote_expired(&m, 2500, 1000), 1); /* 1000 is 1500 old */
    assert_int_equal(fl_tiering_remote_expired(&m, 3000, 1000), 1); /* 2000: exactly the TTL */
    assert_int_equal(fl_tiering_remote_expired(&m, 3001, 1000), 2);
    assert_int_equal(fl_tiering_remote_expired(&m, 10000, 1000), 3);
    fl_remote_manifest_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_from_the_start),
        cmocka_unit_test(test_copy_after_remote_end),
        cmocka_unit_test(test_copy_stops_at_first_that_cannot_go),
        cmocka_unit_test(test_local_deletion),
        cmocka_unit_test(test_remote_expiry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
