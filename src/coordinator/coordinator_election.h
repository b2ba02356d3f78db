/*
 * coordinator_election.h — a bucket's leader and ISR when a tablet server
 * goes or comes back (Fluss's ReplicaStateMachine and TableBucketStateMachine
 * with the default election: the first live in-sync replica in assignment
 * order).
 *
 *  - a server goes: it leaves the ISR, unless it is the last member (the
 *    ISR never empties: its last member holds everything acknowledged). If
 *    it led, the first replica, in assignment order, that is in the ISR and
 *    alive leads with the next leader epoch; with none the bucket has no
 *    leader (-1) until one comes back;
 *  - a server comes back: a bucket without a leader whose ISR names it
 *    gets it as leader (the next epoch). Anything else waits for the
 *    leader to take it back into the ISR.
 *
 * Only in-sync replicas are elected (no unclean election): an
 * acknowledged batch is on every ISR member.
 *
 * Pure: no I/O, no clock. Thread rule: none (the caller's data).
 */
#ifndef FL_COORDINATOR_ELECTION_H
#define FL_COORDINATOR_ELECTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"
#include "metastore.h"

/* b's state once server `gone` is down (live: the servers up, gone not
 * among them) into *out; true when anything changed. */
bool fl_election_server_down(const fl_ms_bucket_t *b, int32_t gone, const int32_t *live,
                             size_t live_count, fl_ms_bucket_t *out);
/* The same once server `up` is back. */
bool fl_election_server_up(const fl_ms_bucket_t *b, int32_t up, fl_ms_bucket_t *out);

/* A leader's ADJUST_ISR for b (Fluss's AdjustIsr, Kafka's AlterPartition):
 * accepted only from the bucket's leader in its current leader epoch
 * (else FENCED_LEADER_EPOCH_EXCEPTION), at the bucket epoch it last heard
 * of (else INVALID_UPDATE_VERSION_EXCEPTION: the coordinator changed the
 * bucket since), for an ISR of the bucket's replicas that holds the
 * leader, each once (else INVALID_UPDATE_VERSION_EXCEPTION), whose new
 * members are live servers (else INELIGIBLE_REPLICA_EXCEPTION). *out is
 * b with that ISR (its bucket epoch still b's: storing bumps it). */
int fl_election_adjust_isr(const fl_ms_bucket_t *b, int32_t leader, int32_t leader_epoch,
                           int32_t bucket_epoch, const int32_t *isr, size_t count,
                           const int32_t *live, size_t live_count, fl_ms_bucket_t *out,
                           fl_error_t *err);

#endif
