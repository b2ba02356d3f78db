/*
 * replica_replication.h — a bucket replica as leader or follower of its
 * bucket (Fluss's Replica.java, Kafka's Partition): the transitions the
 * coordinator's NOTIFY_LEADER_AND_ISR asks for, a follower's appends of
 * what it fetched from its leader, and a leader's view of its followers'
 * fetches, from which its high watermark and ISR follow (replica_isr.h).
 *
 * A leader of a bucket with one replica is what it always was: its high
 * watermark follows its log end (or its flushed offset in the durable
 * mode). With followers, the high watermark is the least log end of the
 * in-sync replicas, so acks=all answers once every in-sync replica holds
 * the batch. ISR changes are decided by the leader (a follower that did
 * not catch up within log.replica.max-lag-time leaves; one that caught up
 * into the leader's epoch joins) and applied at once; committing them to
 * ZooKeeper through ADJUST_ISR comes with leader failover.
 *
 * A follower takes no client writes and no client reads (the layer above
 * answers NOT_LEADER_OR_FOLLOWER); it appends what its leader's log holds,
 * byte for byte, and its high watermark is the leader's, capped at its
 * own log end.
 *
 * Thread rule: any thread; state under the replica's lock.
 */
#ifndef FL_REPLICA_REPLICATION_H
#define FL_REPLICA_REPLICATION_H

#include "replica.h"

typedef struct fl_replica_leadership {
    int32_t self;          /* this tablet server */
    int32_t leader_epoch;
    const int32_t *replicas;
    size_t replica_count;
    const int32_t *isr;
    size_t isr_count;
    int32_t bucket_epoch;  /* the coordinator's version of leader and ISR */
    int32_t min_isr;       /* log.replica.min-in-sync-replicas-number */
    int64_t max_lag_ms;    /* log.replica.max-lag-time */
} fl_replica_leadership_t;

/* Becomes the bucket's leader (again: an unchanged epoch keeps the
 * followers' progress). */
void fl_replica_become_leader(fl_replica_t *r, const fl_replica_leadership_t *l, int64_t now_ms);
/* 0 when a leadership named in leader_epoch may be taken: not older
 * than the epoch the replica leads or follows in (the same epoch again
 * is the coordinator telling a new ISR); else FENCED_LEADER_EPOCH. */
int fl_replica_check_leader_epoch(fl_replica_t *r, int32_t leader_epoch, fl_error_t *err);
/* Becomes a follower of leader (-1: none yet). A new leader or epoch
 * leaves a truncation pending: nothing is fetched until
 * fl_replica_follower_truncate has cut the log where it and the leader's
 * agree. */
void fl_replica_become_follower(fl_replica_t *r, int32_t leader, int32_t leader_epoch);
/* A follower whose log is still to be cut against its leader's epochs;
 * *leader_epoch (may be NULL): the epoch of the leader it follows. */
bool fl_replica_truncation_pending(fl_replica_t *r, int32_t *leader_epoch);
/* The leader's side: a copy of its leader-epoch entries (fl_free'd by the
 * caller) and its log end, asked by a follower that knows it as leader in
 * leader_epoch. A replica that is not the leader answers
 * NOT_LEADER_OR_FOLLOWER (also for an epoch newer than its own, which it
 * will hear of), an older epoch FENCED_LEADER_EPOCH. */
int fl_replica_leader_epochs(fl_replica_t *r, int32_t leader_epoch, fl_epoch_entry_t **entries,
                             size_t *count, int64_t *log_end, fl_error_t *err);
/* The follower's cut (KIP-101/279, never at its high watermark): with its
 * leader's epochs and log end, the log is cut where the two agree, the
 * leader's later epochs are taken into its own cache (durably) and
 * fetching may start. Does nothing when the replica follows another
 * leader or epoch by now. Fails only when the cut does (the replica goes
 * offline). */
int fl_replica_follower_truncate(fl_replica_t *r, int32_t leader, int32_t leader_epoch,
                                 const fl_epoch_entry_t *entries, size_t count,
                                 int64_t leader_end, fl_error_t *err);
static inline int fl_replica_role(const fl_replica_t *r) {
    return atomic_load(&((fl_replica_t *)r)->role);
}

/* A follower whose leader answered that its log now begins at offset,
 * past this replica's end (the records between were tiered to remote
 * storage and deleted there): the log is emptied and starts again at
 * offset (fl_log_tablet_reset_at). Nothing if the replica follows another
 * leader now, or its log reaches offset. */
int fl_replica_follower_reset(fl_replica_t *r, int32_t leader, int64_t offset,
                              fl_error_t *err);
/* A follower of leader appends records it sent (nothing, and no error,
 * once it follows another or its cut is pending) (whole batches from its log
 * end; log_tablet.h's follower append) and takes leader_hw as its high
 * watermark, capped at its log end. */
int fl_replica_follower_append(fl_replica_t *r, int32_t leader, uint8_t *records, size_t len,
                               int64_t leader_hw, fl_error_t *err);

/* A leader learns that follower fetched from fetch_offset (it holds
 * everything before it): ISR and high watermark follow. */
void fl_replica_follower_fetched(fl_replica_t *r, int32_t follower, int64_t fetch_offset,
                                 int64_t now_ms);
/* A leader's periodic check: followers that fell behind leave the ISR
 * (its high watermark may then move). */
void fl_replica_isr_check(fl_replica_t *r, int64_t now_ms);
/* An ISR change the leader proposed and has not sent yet (taken: sent
 * once), for ADJUST_ISR. */
typedef struct fl_isr_proposal {
    int32_t leader_epoch;
    int32_t bucket_epoch;
    size_t count;
    int32_t isr[FL_ISR_REPLICAS_MAX];
} fl_isr_proposal_t;
bool fl_replica_isr_proposal(fl_replica_t *r, fl_isr_proposal_t *out);
/* The coordinator's answer to it: the committed ISR and bucket epoch
 * (isr NULL: refused; the next check proposes again if it still holds).
 * An answer for another leader epoch, or older than what the replica
 * has, changes nothing. */
void fl_replica_isr_answer(fl_replica_t *r, int32_t leader_epoch, const int32_t *isr,
                           size_t count, int32_t bucket_epoch);
/* Under lock, a leader with followers: its high watermark moved up to
 * what every member of the maximal ISR holds (of its log end, or its
 * flushed offset in the durable mode); true when it moved. */
bool fl_replica_hw_from_isr_locked(fl_replica_t *r);

/* Whether an acks=all write may be taken: 0 when the replica is not
 * replicated or its ISR has min_isr members, else
 * NOT_ENOUGH_REPLICAS_EXCEPTION. */
int fl_replica_check_acks_all(fl_replica_t *r, fl_error_t *err);

/* Whole batches from offset up to the log end (not the high watermark:
 * what a follower fetches), at most max_bytes (at least one batch). */
int fl_replica_read_to_end(fl_replica_t *r, int64_t offset, size_t max_bytes, fl_buf_t *out,
                           fl_error_t *err);

#endif
