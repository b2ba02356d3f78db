/*
 * test_coordinator_lake_tiering.c — the schedule an external tiering job
 * follows (coordinator_lake_tiering.h), as 0.9.1's LakeTableTieringManager
 * behaves: a table is handed out once its freshness has passed, with epoch
 * 1, then 2 after a failure; reports with another epoch are fenced, of an
 * unknown table refused, a renewal of a table not tiering is a state
 * error; finished waits a freshness again, force-finished is pending at
 * once; a silent job loses the table after the timeout; the queue is
 * FIFO; a table dropped from the catalog is forgotten, also in the queue.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "coordinator_lake_tiering.h"

static void test_schedule(void **state) {
    (void)state;
    fl_lake_tiering_t *t = fl_lake_tiering_new();
    fl_lake_tiering_table_t tables[2] = {{10, 1000}, {11, 5000}};
    int64_t id, epoch;
    fl_lake_tiering_sync(t, tables, 2, 0);
    assert_false(fl_lake_tiering_take(t, 0, &id, &epoch)); /* a freshness first */
    fl_lake_tiering_sync(t, tables, 2, 999);
    assert_false(fl_lake_tiering_take(t, 999, &id, &epoch));
    fl_lake_tiering_sync(t, tables, 2, 1000);
    assert_true(fl_lake_tiering_take(t, 1000, &id, &epoch));
    assert_int_equal(id, 10);
    assert_int_equal(epoch, 1);
    assert_false(fl_lake_tiering_take(t, 1000, &id, &epoch));
    /* reports */
    assert_int_equal(fl_lake_tiering_renew(t, 10, 1, 1500), FL_LAKE_TIERING_OK);
    assert_int_equal(fl_lake_tiering_renew(t, 10, 2, 1500), FL_LAKE_TIERING_FENCED);
    assert_int_equal(fl_lake_tiering_renew(t, 99, 1, 1500), FL_LAKE_TIERING_UNKNOWN_TABLE);
    assert_int_equal(fl_lake_tiering_renew(t, 11, 0, 1500), FL_LAKE_TIERING_BAD_STATE);
    /* failed: pending again at once, epoch 2 */
    assert_int_equal(fl_lake_tiering_failed(t, 10, 1, 2000), FL_LAKE_TIERING_OK);
    assert_true(fl_lake_tiering_take(t, 2000, &id, &epoch));
    assert_int_equal(id, 10);
    assert_int_equal(epoch, 2);
    /* finished: the next round a freshness after it */
    assert_int_equal(fl_lake_tiering_finished(t, 10, 2, false, 2500), FL_LAKE_TIERING_OK);
    assert_int_equal(fl_lake_tiering_finished(t, 10, 2, false, 2500), FL_LAKE_TIERING_BAD_STATE);
    fl_lake_tiering_sync(t, tables, 2, 3499);
    assert_false(fl_lake_tiering_take(t, 3499, &id, &epoch));
    fl_lake_tiering_sync(t, tables, 2, 3500);
    assert_true(fl_lake_tiering_take(t, 3500, &id, &epoch));
    assert_int_equal(id, 10);
    assert_int_equal(epoch, 3);
    /* force-finished: pending at once */
    assert_int_equal(fl_lake_tiering_finished(t, 10, 3, true, 3600), FL_LAKE_TIERING_OK);
    /* table 11 became due at 5000: FIFO after 10 */
    fl_lake_tiering_sync(t, tables, 2, 5000);
    assert_true(fl_lake_tiering_take(t, 5000, &id, &epoch));
    assert_int_equal(id, 10);
    assert_int_equal(epoch, 4);
    assert_true(fl_lake_tiering_take(t, 5000, &id, &epoch));
    assert_int_equal(id, 11);
    assert_int_equal(epoch, 1);
    /* a silent job: after the timeout the table is pending again */
    fl_lake_tiering_sync(t, tables, 2, 5000 + FL_LAKE_TIERING_TIMEOUT_MS);
    assert_false(fl_lake_tiering_take(t, 5000 + FL_LAKE_TIERING_TIMEOUT_MS, &id, &epoch));
    fl_lake_tiering_sync(t, tables, 2, 5001 + FL_LAKE_TIERING_TIMEOUT_MS);
    assert_true(fl_lake_tiering_take(t, 5001 + FL_LAKE_TIERING_TIMEOUT_MS, &id, &epoch));
    assert_int_equal(epoch, 5); /* table 10 (renewed last at 5000) */
    assert_int_equal(fl_lake_tiering_renew(t, 11, 1, 0), FL_LAKE_TIERING_FENCED); /* 11 timed out too */
    bool tiering;
    assert_true(fl_lake_tiering_state(t, 11, &epoch, &tiering));
    assert_int_equal(epoch, 2);
    assert_false(tiering);
    /* table 11 dropped: forgotten, its queued id skipped */
    fl_lake_tiering_sync(t, tables, 1, 5002 + FL_LAKE_TIERING_TIMEOUT_MS);
    assert_false(fl_lake_tiering_state(t, 11, &epoch, &tiering));
    assert_false(fl_lake_tiering_take(t, 5002 + FL_LAKE_TIERING_TIMEOUT_MS, &id, &epoch));
    assert_int_equal(fl_lake_tiering_finished(t, 11, 2, false, 0), FL_LAKE_TIERING_UNKNOWN_TABLE);
    fl_lake_tiering_destroy(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_schedule)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
