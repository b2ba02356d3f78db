/*
 * replica_purgatory.h — delayed operations keyed by bucket (Fluss's
 * DelayedOperationManager, Kafka's purgatory): an operation parks on the
 * buckets it waits for, with a deadline on the monotonic clock, and is
 * completed exactly once — when a watermark of one of its buckets moves
 * and its check says it is ready, when the deadline passes, or at shutdown.
 * Long-poll fetches, acks=all produce waits and (later) primary-key
 * flushes all use it.
 *
 * An operation is only checked when a bucket it watches reports a move
 * (fl_purgatory_check): a fetch parked on bucket A costs nothing when B
 * is appended to. Checks must be cheap and do no I/O (read atomics, count
 * bytes); on_complete does the real work, outside the purgatory's lock, on
 * whichever thread completed the operation (the one that moved the
 * watermark, the purgatory's timer thread, or the one shutting down).
 *
 * Thread rule: every function is safe from any thread. try_complete runs
 * under the purgatory's lock: it must not call back into the purgatory.
 */
#ifndef FL_REPLICA_PURGATORY_H
#define FL_REPLICA_PURGATORY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fl_bucket_key {
    int64_t table_id;
    int64_t partition_id; /* -1: not partitioned */
    int32_t bucket;
} fl_bucket_key_t;

#define FL_PURGATORY_KEYS_MAX 4096 /* buckets one operation may watch */

typedef struct fl_delayed_op fl_delayed_op_t;
typedef struct fl_purgatory_watch fl_purgatory_watch_t;

typedef struct fl_delayed_ops {
    /* Is op ready now that key's watermark moved (key is NULL for the check
     * right after parking)? */
    bool (*try_complete)(fl_delayed_op_t *op, const fl_bucket_key_t *key);
    /* Exactly once. expired: the deadline passed, or the purgatory shuts down. */
    void (*on_complete)(fl_delayed_op_t *op, bool expired);
} fl_delayed_ops_t;

/* Embedded in the caller's operation; the purgatory owns the fields below
 * `ops` and `deadline_ms` while the operation is parked. */
struct fl_delayed_op {
    const fl_delayed_ops_t *ops;
    int64_t deadline_ms;      /* monotonic */
    atomic_uint_fast64_t checks; /* try_complete calls (tests, stats) */
    atomic_bool completed;
    size_t watch_count;
    fl_purgatory_watch_t *watches;
    size_t heap_index;
};

typedef struct fl_purgatory fl_purgatory_t;

fl_purgatory_t *fl_purgatory_new(const char *name);
/* Completes every parked operation (expired = true) and stops the timer
 * thread. Operations parked afterwards complete at once; checks still work
 * (and find nothing). */
void fl_purgatory_shutdown(fl_purgatory_t *p);
/* Shuts down if needed and frees: nothing may call in afterwards. */
void fl_purgatory_destroy(fl_purgatory_t *p);

/* Parks op on keys (copied) until ready or its deadline. try_complete runs
 * once right after parking, so a move between the caller's own check and
 * the parking is never missed. */
void fl_purgatory_watch(fl_purgatory_t *p, fl_delayed_op_t *op, const fl_bucket_key_t *keys,
                        size_t key_count);
/* A watermark of key moved: checks the operations parked on it. */
void fl_purgatory_check(fl_purgatory_t *p, const fl_bucket_key_t *key);
/* Parked operations (a lock-free read: the fetch path asks it per request). */
size_t fl_purgatory_size(fl_purgatory_t *p);

#endif
