/*
 * coordinator_lake_tiering.h — the coordinator's schedule of lake tables
 * for an external tiering service (`lake.tiering.mode: external`, ours):
 * Fluss 0.9.1's LakeTableTieringManager as its LAKE_TIERING_HEARTBEAT
 * shows it to the official Flink tiering job.
 *
 * Each lake table is Scheduled from the moment it is seen (coordinator
 * start, CREATE, the lake turned on), Pending once its
 * table.datalake.freshness has passed since then or since its last round
 * ended (its tiering epoch grows by one, it joins a FIFO queue), Tiering
 * once a heartbeat with request_table took it (the reply names it with its
 * epoch), then Scheduled again when the job reports it finished (Pending
 * at once when force-finished, a round cut short by the freshness), or
 * Pending again when reported failed or when its heartbeats stop for
 * FL_LAKE_TIERING_TIMEOUT_MS. A report of a table with another epoch is
 * fenced (50 FENCED_TIERING_EPOCH_EXCEPTION), of an unknown table 7
 * TABLE_NOT_EXIST, a renewal of a table not Tiering -1 (0.9.1's
 * IllegalStateException). Epochs and states live in memory, as in 0.9.1:
 * a restarted coordinator starts every table Scheduled at epoch 0.
 *
 * Time is passed in (monotonic ms); fl_lake_tiering_sync brings the
 * schedule to the catalog's lake tables and moves due tables to Pending
 * (the heartbeat calls it first: the job's poll interval is the clock).
 *
 * Thread rule: one mutex inside; any thread.
 */
#ifndef FL_COORDINATOR_LAKE_TIERING_H
#define FL_COORDINATOR_LAKE_TIERING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 0.9.1's TIERING_SERVICE_TIMEOUT_MS */
#define FL_LAKE_TIERING_TIMEOUT_MS 120000

typedef struct fl_lake_tiering fl_lake_tiering_t;

/* One lake table as the catalog has it now. */
typedef struct fl_lake_tiering_table {
    int64_t table_id;
    int64_t freshness_ms;
} fl_lake_tiering_table_t;

/* Outcome codes of a report (the wire's error codes). */
#define FL_LAKE_TIERING_OK 0
#define FL_LAKE_TIERING_UNKNOWN_TABLE 7
#define FL_LAKE_TIERING_FENCED 50
#define FL_LAKE_TIERING_BAD_STATE (-1)

fl_lake_tiering_t *fl_lake_tiering_new(void);
void fl_lake_tiering_destroy(fl_lake_tiering_t *t);

/* The lake tables are tables[0..n): new ones Scheduled from now, ones not
 * listed forgotten, due ones Pending (queued), Tiering ones whose
 * heartbeat is older than the timeout Pending again. */
void fl_lake_tiering_sync(fl_lake_tiering_t *t, const fl_lake_tiering_table_t *tables, size_t n,
                          int64_t now_ms);
/* The job's reports; each returns an FL_LAKE_TIERING_* code. */
int fl_lake_tiering_renew(fl_lake_tiering_t *t, int64_t table_id, int64_t epoch, int64_t now_ms);
int fl_lake_tiering_finished(fl_lake_tiering_t *t, int64_t table_id, int64_t epoch, bool force,
                             int64_t now_ms);
int fl_lake_tiering_failed(fl_lake_tiering_t *t, int64_t table_id, int64_t epoch, int64_t now_ms);
/* request_table: the first Pending table, now Tiering; false when none. */
bool fl_lake_tiering_take(fl_lake_tiering_t *t, int64_t now_ms, int64_t *table_id, int64_t *epoch);
/* The table's epoch and whether it is Tiering (tests, status); false when unknown. */
bool fl_lake_tiering_state(fl_lake_tiering_t *t, int64_t table_id, int64_t *epoch, bool *tiering);

#endif
