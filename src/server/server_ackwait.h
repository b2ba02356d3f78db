/*
 * server_ackwait.h — the wait of a write request for its buckets'
 * watermarks (Fluss's DelayedWrite): PRODUCE_LOG and PUT_KV with acks=all
 * wait until the high watermark covers what they appended, and an append
 * that crossed log.flush.interval-messages until the flushed offset does.
 * The wait parks in the tablet server's purgatory on exactly those buckets;
 * when every bucket is ready or failed, or the deadline passes, the
 * request's own reply function answers (fl_ack_wait_error: a bucket whose
 * replica went offline before it was covered gets LOG_STORAGE_EXCEPTION —
 * nothing the failed write or fsync concerned is acknowledged —, one whose
 * replica stopped leading in the epoch that appended (a leader demoted, or
 * a zombie whose session expired: the high watermark it takes as a
 * follower counts the new leader's records, not these)
 * NOT_LEADER_OR_FOLLOWER, one still not ready at the deadline
 * REQUEST_TIME_OUT). A request with nothing to
 * wait for is answered at once, on the caller's thread.
 *
 * Thread rule: filled by one handler; after fl_ack_wait_finish parks it,
 * the purgatory owns it (completion runs on any thread, exactly once).
 */
#ifndef FL_SERVER_ACKWAIT_H
#define FL_SERVER_ACKWAIT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "replica.h"
#include "replica_purgatory.h"
#include "server_node.h"

typedef struct fl_ack_wait fl_ack_wait_t;

/* What the request type supplies: its answer (ready tells which buckets
 * made it) and how the rest of the request's state is freed. */
typedef struct fl_ack_wait_ops {
    void (*reply)(fl_ack_wait_t *w, int32_t request_id, fl_buf_t *out);
    void (*destroy)(fl_ack_wait_t *w); /* frees the enclosing op, after _release */
} fl_ack_wait_ops_t;

/* Embedded first in a request's own delayed operation. */
struct fl_ack_wait {
    fl_delayed_op_t op;
    const fl_ack_wait_ops_t *ops;
    fl_req_ctx_t *req;         /* deferred while parked */
    size_t count;              /* buckets of the request */
    fl_replica_t **replicas;   /* NULL: nothing to wait for in that bucket */
    int64_t *hw_wait;          /* high watermark to reach (0: none) */
    int64_t *durable_wait;     /* flushed offset to reach (0: none) */
    int32_t *lead_epoch;       /* with hw_wait: the leadership that appended */
    fl_bucket_key_t *keys;
    size_t key_count;
};

void fl_ack_wait_init(fl_ack_wait_t *w, const fl_ack_wait_ops_t *ops, size_t count);
/* Bucket i appended: wait for hw (acks=all) and durable offsets (0 =
 * none). Takes over the reference on r (released at once when there is
 * nothing to wait for). */
void fl_ack_wait_bucket(fl_ack_wait_t *w, size_t i, fl_replica_t *r, int64_t hw, int64_t durable);
bool fl_ack_wait_ready(const fl_ack_wait_t *w, size_t i);
/* 0 when bucket i is ready; else its error code (LOG_STORAGE_EXCEPTION:
 * the replica went offline; REQUEST_TIME_OUT, with timeout_msg) and
 * *msg, the message to answer with. */
int fl_ack_wait_error(const fl_ack_wait_t *w, size_t i, const char *timeout_msg, const char **msg);
/* Answers into out now when every bucket is ready (or the request cannot
 * park: no connection or purgatory), else defers ctx and parks until
 * timeout_ms (<= 0: 30 s; at most 300 s). */
void fl_ack_wait_finish(fl_ack_wait_t *w, fl_req_ctx_t *ctx, fl_purgatory_t *purgatory,
                        int32_t timeout_ms, fl_buf_t *out);
/* Frees what the wait holds (replica references, arrays, the deferred
 * request); the destroy op calls it. */
void fl_ack_wait_release(fl_ack_wait_t *w);
#endif
