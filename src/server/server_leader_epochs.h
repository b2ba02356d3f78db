/*
 * server_leader_epochs.h — the follower's side of LIST_LEADER_EPOCHS
 * (fluss-c's api key 1902; the leader's answer is server_leader_epochs.c):
 * one bucket of the answer read into the entries a follower cuts its log
 * against (replica_replication.h, fl_replica_follower_truncate).
 *
 * Thread rule: any thread.
 */
#ifndef FL_SERVER_LEADER_EPOCHS_H
#define FL_SERVER_LEADER_EPOCHS_H

#include <stddef.h>

#include "fluss_api.pb-c.h"
#include "replica_epoch.h"

/* 0 with *out (fl_free'd by the caller) and *count: the bucket's entries;
 * -1 when the bucket answered an error, or what it sent could not be a
 * leader's cache (epoch and offset counts differ, entries not strictly
 * increasing or negative, no log end), which a follower must not take. */
int fl_leader_epochs_entries(const Fluss__PbListLeaderEpochsRespForBucket *b,
                             fl_epoch_entry_t **out, size_t *count);

#endif
