/*
 * replica_isr.h — a leader's view of its bucket's in-sync replicas (the ISR
 * part of Fluss's Replica.java, Kafka's Partition): how far each follower
 * has fetched and when it was last caught up, which followers leave the
 * ISR (no catch-up within log.replica.max-lag-time) and which may join
 * (fetched up to the high watermark and into the leader's epoch), the high
 * watermark those imply, and whether acks=all may be taken
 * (log.replica.min-in-sync-replicas-number).
 *
 * An ISR change is proposed to the coordinator (ADJUST_ISR) and applies
 * only once committed; while one is in flight no other is proposed, and
 * the high watermark counts the "maximal" ISR — the current one plus any
 * follower being added — so it never runs ahead of a replica that may be
 * in the ISR the coordinator answers with.
 *
 * Pure state, no clock and no I/O: callers pass the time and offsets.
 * Thread rule: one user at a time (the replica's lock).
 */
#ifndef FL_REPLICA_ISR_H
#define FL_REPLICA_ISR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FL_ISR_REPLICAS_MAX 16

typedef struct fl_isr_follower {
    int32_t id;
    int64_t log_end;            /* its log end offset, from its last fetch */
    int64_t last_caught_up_ms;  /* the last time it had everything the leader had */
    int64_t last_fetch_leader_end; /* the leader's log end at its previous fetch */
    int64_t last_fetch_ms;
    bool alive;                 /* a live tablet server (metadata) */
} fl_isr_follower_t;

typedef struct fl_isr {
    int32_t leader_id;
    int32_t leader_epoch;
    int64_t epoch_start_offset; /* where the leader's epoch began in its log */
    int32_t min_isr;            /* log.replica.min-in-sync-replicas-number */
    int64_t max_lag_ms;         /* log.replica.max-lag-time */
    size_t isr_count;
    int32_t isr[FL_ISR_REPLICAS_MAX];    /* the committed ISR, the leader included */
    bool inflight;                       /* an ADJUST_ISR awaits its answer */
    size_t proposed_count;
    int32_t proposed[FL_ISR_REPLICAS_MAX];
    size_t follower_count;
    fl_isr_follower_t followers[FL_ISR_REPLICAS_MAX]; /* every replica but the leader */
} fl_isr_t;

/* The leader's state on becoming leader of `epoch` at log offset
 * epoch_start with the coordinator's ISR and the bucket's replicas:
 * followers start with an unknown log end (-1) and, if in the ISR, caught
 * up as of now_ms (they get max_lag_ms to show up). */
void fl_isr_init(fl_isr_t *s, int32_t leader_id, int32_t epoch, int64_t epoch_start,
                 const int32_t *replicas, size_t replica_count, const int32_t *isr,
                 size_t isr_count, int32_t min_isr, int64_t max_lag_ms, int64_t now_ms);

bool fl_isr_contains(const fl_isr_t *s, int32_t id);

/* A follower fetched from fetch_offset (so it holds everything before it)
 * when the leader's log ended at leader_end. It is caught up now when it
 * asked for leader_end or more, and was as of its previous fetch when it
 * has now reached what the leader had then. Unknown ids are ignored. */
void fl_isr_on_fetch(fl_isr_t *s, int32_t follower, int64_t fetch_offset, int64_t leader_end,
                     int64_t now_ms);

/* The high watermark the followers allow: the least log end among the
 * maximal ISR's followers, at most leader_end, never below current_hw;
 * current_hw unchanged while the ISR is under min_isr. */
int64_t fl_isr_high_watermark(const fl_isr_t *s, int64_t leader_end, int64_t current_hw);

/* ISR members that were not caught up within max_lag_ms (none while a
 * change is in flight); their ids in out, the count returned. */
size_t fl_isr_out_of_sync(const fl_isr_t *s, int64_t leader_end, int64_t now_ms,
                          int32_t out[FL_ISR_REPLICAS_MAX]);

/* Whether follower, outside the ISR, may join it now — asked right after
 * its fetch, as it is the fetch that shows it caught up: alive, fetched up
 * to hw and into the leader's epoch, and no change in flight. */
bool fl_isr_may_join(const fl_isr_t *s, int32_t follower, int64_t hw);

/* acks=all may be taken (the ISR has at least min_isr replicas). */
bool fl_isr_enough_for_acks_all(const fl_isr_t *s);

/* The ISR to propose: the current one without `remove` and with `add`
 * (either list may be empty); becomes the in-flight proposal. Returns
 * false (nothing proposed) while another is in flight, when it would not
 * change the ISR, or when it would leave out the leader. */
bool fl_isr_propose(fl_isr_t *s, const int32_t *remove, size_t remove_count, const int32_t *add,
                    size_t add_count);
/* The coordinator's answer: the ISR it committed (committed NULL: refused,
 * the current ISR stays). Either way nothing is in flight after. */
void fl_isr_complete(fl_isr_t *s, const int32_t *committed, size_t count);

#endif
