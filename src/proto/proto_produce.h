/*
 * proto_produce.h — a PRODUCE_LOG request (ProduceLogRequest) decoded as a
 * view: the message and its buckets are built as protobuf-c structs, but
 * every bucket's `records` points into the request bytes instead of a copy
 * (the records are most of a request: copying them was a full pass over
 * the data). The bytes must outlive the view, and be writable although the
 * frame is passed as const: the leader's append writes each batch's base
 * offset and commit timestamp into them in place (log_tablet.c), so the
 * rpc layer's read buffer is what the log writes; a caller that handles a
 * frame from read-only memory copies it first (fuzz_server_dispatch.c).
 *
 * Stricter than protobuf-c, never looser: whatever the view accepts,
 * protobuf_c_message_unpack accepts with the same field values (proved by
 * fuzz/fuzz_proto_produce.c); anything unusual (wrong wire types, groups,
 * overlong varints, a missing required field) is refused, and the caller
 * falls back to protobuf-c, which decides.
 *
 *   ProduceLogRequest: 1 acks int32, 2 table_id int64, 3 timeout_ms int32
 *     (all required), 4 buckets_req repeated PbProduceLogReqForBucket
 *   PbProduceLogReqForBucket: 1 partition_id int64 (optional),
 *     2 bucket_id int32, 3 records bytes (required)
 *
 * Thread rule: none (caller-owned bytes and result).
 */
#ifndef FL_PROTO_PRODUCE_H
#define FL_PROTO_PRODUCE_H

#include <stddef.h>
#include <stdint.h>

#include "fluss_api.pb-c.h"

#define FL_PRODUCE_VIEW_BUCKETS_MAX 65536

/* 0 with *out set (free with fl_proto_produce_view_free), or -1. */
int fl_proto_produce_view(const uint8_t *body, size_t len, Fluss__ProduceLogRequest **out);
void fl_proto_produce_view_free(Fluss__ProduceLogRequest *m);

#endif
