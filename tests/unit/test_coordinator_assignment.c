/*
 * test_coordinator_assignment.c — which servers hold each bucket's
 * replicas (coordinator_assignment.h): round robin without racks, Fluss's
 * documented rack-aware example, one replica per rack with as many racks
 * as replicas, leaders spread over the servers, and the errors for a
 * replication factor over the live servers and for racks on only some.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "coordinator_assignment.h"

#define BUCKETS_MAX 64
#define RF_MAX 8

static void racks_of(fl_assignment_rack_t *racks, const char *const *names, size_t n) {
    for (size_t i = 0; i < n; i++) fl_assignment_rack_set(&racks[i], names[i]);
}

static const char *rack_of(const int32_t *ids, const char *const *names, size_t n, int32_t id) {
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id) return names[i];
    fail_msg("server %d not in the list", id);
    return NULL;
}

static void assert_distinct(const int32_t *replicas, int32_t rf) {
    for (int32_t a = 0; a < rf; a++)
        for (int32_t b = a + 1; b < rf; b++) assert_int_not_equal(replicas[a], replicas[b]);
}

static void test_no_racks_is_round_robin(void **state) {
    (void)state;
    int32_t ids[] = {5, 7, 9, 11};
    fl_assignment_rack_t racks[4];
    racks_of(racks, (const char *[]){NULL, NULL, NULL, NULL}, 4);
    int32_t got[6 * 3];
    fl_error_t err;
    assert_int_equal(fl_assignment_generate(ids, racks, 4, 3, 6, 2, got, &err), 0);
    /* bucket b: the list from position seed + b, consecutive */
    for (int32_t b = 0; b < 6; b++)
        for (int32_t r = 0; r < 3; r++) assert_int_equal(got[b * 3 + r], ids[(2 + b + r) % 4]);
}

/* TableAssignmentUtils' own example: servers 0..5 on rack1, rack3, rack3,
 * rack2, rack2, rack1 alternate as 0, 3, 1, 5, 4, 2; from start 0 with no
 * shift six buckets walk that list, the seventh shifts its followers */
static void test_fluss_documented_example(void **state) {
    (void)state;
    int32_t ids[] = {0, 1, 2, 3, 4, 5};
    fl_assignment_rack_t racks[6];
    racks_of(racks, (const char *[]){"rack1", "rack3", "rack3", "rack2", "rack2", "rack1"}, 6);
    int32_t got[7 * 3];
    fl_assignment_rack_aware(ids, racks, 6, 3, 7, 0, 0, got);
    const int32_t want[7 * 3] = {0, 3, 1, 3, 1, 5, 1, 5, 4, 5, 4, 2, 4, 2, 0, 2, 0, 3, 0, 4, 2};
    for (size_t i = 0; i < 7 * 3; i++) assert_int_equal(got[i], want[i]);
}

/* the servers are listed out of id and rack order, as they register */
static void test_one_replica_per_rack(void **state) {
    (void)state;
    int32_t ids[] = {8, 3, 6, 1, 7, 2, 5, 4, 0};
    const char *names[] = {"c", "b", "a", "c", "b", "a", "a", "c", "b"};
    fl_assignment_rack_t racks[9];
    racks_of(racks, names, 9);
    for (uint64_t seed = 0; seed < 40; seed++) {
        int32_t got[27 * 3], leaders[9] = {0}, hosted[9] = {0};
        fl_error_t err;
        assert_int_equal(fl_assignment_generate(ids, racks, 9, 3, 27, seed, got, &err), 0);
        for (int32_t b = 0; b < 27; b++) {
            const int32_t *rep = &got[b * 3];
            assert_distinct(rep, 3);
            bool seen[3] = {false};
            for (int r = 0; r < 3; r++) {
                const char *rk = rack_of(ids, names, 9, rep[r]);
                assert_false(seen[rk[0] - 'a']);
                seen[rk[0] - 'a'] = true;
                hosted[rep[r]]++;
            }
            leaders[rep[0]]++;
        }
        /* 27 buckets over 9 servers: three leaders and nine replicas each */
        for (int s = 0; s < 9; s++) {
            assert_int_equal(leaders[s], 3);
            assert_int_equal(hosted[s], 9);
        }
    }
}

/* fewer racks than replicas: every rack holds one, and no server two */
static void test_racks_fewer_than_replicas(void **state) {
    (void)state;
    int32_t ids[] = {0, 1, 2, 3};
    const char *names[] = {"r0", "r0", "r1", "r2"};
    fl_assignment_rack_t racks[4];
    racks_of(racks, names, 4);
    int32_t got[8 * 4], leaders[4] = {0};
    fl_error_t err;
    assert_int_equal(fl_assignment_generate(ids, racks, 4, 4, 8, 3, got, &err), 0);
    for (int32_t b = 0; b < 8; b++) {
        assert_distinct(&got[b * 4], 4);
        leaders[got[b * 4]]++;
    }
    for (int s = 0; s < 4; s++) assert_int_equal(leaders[s], 2);
    /* replication 3 on the same servers: r0 holds one replica per bucket,
     * where round robin would put two on r0 */
    int32_t three[8 * 3];
    assert_int_equal(fl_assignment_generate(ids, racks, 4, 3, 8, 0, three, &err), 0);
    for (int32_t b = 0; b < 8; b++) {
        int on_r0 = 0;
        for (int r = 0; r < 3; r++)
            on_r0 += strcmp(rack_of(ids, names, 4, three[b * 3 + r]), "r0") == 0;
        assert_int_equal(on_r0, 1);
    }
}

static void test_some_racks_missing(void **state) {
    (void)state;
    int32_t ids[] = {0, 1, 2};
    fl_assignment_rack_t racks[3];
    racks_of(racks, (const char *[]){"r0", NULL, "r2"}, 3);
    int32_t got[3];
    fl_error_t err;
    assert_int_equal(fl_assignment_generate(ids, racks, 3, 1, 3, 0, got, &err),
                     FLUSS_ERR_INVALID_SERVER_RACK_INFO_EXCEPTION);
    assert_int_equal(FLUSS_ERR_INVALID_SERVER_RACK_INFO_EXCEPTION, 52);
    assert_string_equal(err.msg, "Not all tabletServers have rack information for replica rack "
                                 "aware assignment.");
}

static void test_replication_over_servers(void **state) {
    (void)state;
    int32_t ids[] = {0, 1};
    fl_assignment_rack_t racks[2];
    racks_of(racks, (const char *[]){"r0", NULL}, 2);
    int32_t got[3 * 3];
    fl_error_t err;
    /* the replication factor is checked before the racks, as in Fluss */
    assert_int_equal(fl_assignment_generate(ids, racks, 2, 3, 3, 0, got, &err),
                     FLUSS_ERR_INVALID_REPLICATION_FACTOR);
    assert_string_equal(err.msg, "Replication factor: 3 larger than available tablet servers: 2.");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_racks_is_round_robin),
        cmocka_unit_test(test_fluss_documented_example),
        cmocka_unit_test(test_one_replica_per_rack),
        cmocka_unit_test(test_racks_fewer_than_replicas),
        cmocka_unit_test(test_some_racks_missing),
        cmocka_unit_test(test_replication_over_servers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
