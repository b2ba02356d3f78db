/*
 * server_lake_tier.h — the coordinator's lake tiering service: flussd
 * tiers every lake-enabled table into its Iceberg table itself, where
 * Fluss 0.9.1 needs a Flink tiering job (issue 21; DESIGN.md "Lake
 * tiering").
 *
 * One thread. Every table with table.datalake.enabled=true gets a round
 * table.datalake.freshness (3 min by default, as in Fluss) after its last
 * one began, never two at once, tables one after another:
 *
 *   1. the lake head (lake_iceberg_table.h) and the offsets its current
 *      snapshot holds (server_lake_commit.h): the only truth of what is
 *      tiered;
 *   2. for each bucket (of each partition), TIER_LAKE_BUCKET to its
 *      leader: the leader writes its log from the lake offset to its high
 *      watermark as Parquet data files, durable, and answers what they
 *      hold and where its range ended;
 *   3. one commit of every answered bucket's files and offsets as the
 *      table's next version (a bucket whose leader failed keeps its
 *      offset and is tiered by the next round).
 *
 * A commit that loses (FLUSS_ERR__CONFLICT) or fails removes the round's
 * data files; the next round builds on the head as it then is, so no
 * range is tiered twice and none is skipped.
 *
 * Thread rule: start/stop/destroy from the coordinator's owner; the
 * service takes the coordinator's lock only to copy what a round needs.
 */
#ifndef FL_SERVER_LAKE_TIER_H
#define FL_SERVER_LAKE_TIER_H

#include <stdint.h>

#include "common_error.h"

typedef struct fl_coordinator_server fl_coordinator_server_t;
typedef struct fl_lake_tierer fl_lake_tierer_t;

#define FL_LAKE_FRESHNESS_DEFAULT_MS (3 * 60 * 1000)

fl_lake_tierer_t *fl_lake_tierer_new(fl_coordinator_server_t *cs);
/* Nothing when the cluster has no lake, or tiers it through an external
 * job (lake.tiering.mode: external; fl_lake_tierer_ask then answers
 * FLUSS_ERR__STATE saying so). */
void fl_lake_tierer_start(fl_lake_tierer_t *t);
/* A round under way finishes first; rounds asked for and not begun are
 * answered FLUSS_ERR__STATE. */
void fl_lake_tierer_stop(fl_lake_tierer_t *t);
/* The end of a round asked for: rc 0 with snapshot_id the table's lake
 * snapshot after it (FL_ICE_NONE: none) and added the rows it tiered; or
 * the round's error, INVALID_TABLE_EXCEPTION for a table whose lake is
 * off, FLUSS_ERR__STATE when the service does not run. Called on the
 * tiering thread (or the caller's, when refused at once). */
typedef void (*fl_lake_tier_done_fn)(void *arg, int rc, const fl_error_t *err,
                                     int64_t snapshot_id, int64_t added);
/* Runs a round of table table_id as soon as the round under way (if any)
 * ends, whatever its freshness (LAKE_TIER_NOW). Any thread. */
void fl_lake_tierer_ask(fl_lake_tierer_t *t, int64_t table_id, fl_lake_tier_done_fn done,
                        void *arg);
void fl_lake_tierer_destroy(fl_lake_tierer_t *t);

struct fl_lake_offsets;
/* NOTIFY_LAKE_TABLE_OFFSET of a table's lake offsets (its snapshot
 * snapshot_id) to every tablet server, unanswered: their replicas keep the
 * segments the lake lacks and delete the rest as retention allows. After
 * every round, and after an external job's COMMIT_LAKE_TABLE_SNAPSHOT. */
void fl_lake_notify_offsets(fl_coordinator_server_t *cs, int64_t table_id, int64_t snapshot_id,
                            const struct fl_lake_offsets *offs);

#endif
