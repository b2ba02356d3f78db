/*
 * replica_kv_log.h — a replica as its kv tablet's log (kv_log.h): the
 * replica owns the bucket's log and its KvTablet; the tablet appends its
 * changelog, replays and reads the high watermark through this port and
 * never calls the replica itself.
 *
 * Thread rule: as the replica's functions (any thread).
 */
#ifndef FL_REPLICA_KV_LOG_H
#define FL_REPLICA_KV_LOG_H

#include "kv_log.h"
#include "replica.h"

/* The port onto r (borrowed: the replica outlives its tablet). */
fl_kv_log_t fl_replica_kv_log(fl_replica_t *r);
/* The replica behind a port made by fl_replica_kv_log. */
static inline fl_replica_t *fl_replica_of_kv_log(const fl_kv_log_t *l) { return l->ctx; }

#endif
