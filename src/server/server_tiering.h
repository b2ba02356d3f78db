/*
 * server_tiering.h — tiered log storage on a tablet server (Fluss
 * RemoteLogManager): the remote storage under remote.data.dir, a tiering
 * round over every hosted replica every remote.log.task-interval-duration
 * (1 min; 0 turns tiering off), each bucket with its table's
 * table.log.tiered.local-segments and table.log.ttl (and, for a primary-key
 * table, the offset of its newest KV snapshot, below which its changelog
 * may go), the FETCH_LOG answer for an offset below the local log
 * (PbRemoteLogFetchInfo), and the removal of a dropped table's or
 * partition's remote log directory.
 *
 * Every log tablet tiers when tiering is on, log tables and primary-key
 * changelogs alike, as in 0.9.1; table.log.ttl then applies to remote
 * segments and local segments go only by tiering. With tiering off, the
 * local TTL expiry (log.retention.check-interval) applies.
 *
 * Thread rule: rounds run on the tablet workers, one at a time; the fetch
 * helper runs on any thread.
 */
#ifndef FL_SERVER_TIERING_H
#define FL_SERVER_TIERING_H

#include <stddef.h>
#include <stdint.h>

#include "fluss_api.pb-c.h"
#include "log_remote_log.h"
#include "replica.h"

typedef struct fl_tablet_server fl_tablet_server_t;

/* Opens the remote storage when tiering is on (at server creation). */
int fl_tablet_tiering_init(fl_tablet_server_t *ts, fl_error_t *err);
void fl_tablet_tiering_destroy(fl_tablet_server_t *ts);

/* One tiering round over every open replica now (what the timer runs;
 * tests call it). Returns how many segments went to remote storage. Not
 * on a loop. */
size_t fl_tablet_server_tier_now(fl_tablet_server_t *ts);

/* The remote fetch answer for offset, or NULL when r holds nothing there
 * remotely (the caller reads the local log). Free with _free. */
typedef struct fl_remote_fetch_pb {
    Fluss__PbRemoteLogFetchInfo info;
    Fluss__PbRemoteLogSegment *segments;
    Fluss__PbRemoteLogSegment **ptrs;
    fl_remote_fetch_t fetch;
} fl_remote_fetch_pb_t;

fl_remote_fetch_pb_t *fl_tablet_remote_fetch(fl_replica_t *r, int64_t offset);
void fl_remote_fetch_pb_free(fl_remote_fetch_pb_t *p);

/* Removes the remote log directory of a dropped table / partition. */
void fl_tablet_tiering_drop(fl_tablet_server_t *ts, const char *db, const char *table,
                            int64_t table_id, const char *partition_name, int64_t partition_id);

#endif
