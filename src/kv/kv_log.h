/*
 * kv_log.h — the bucket's log as a kv tablet sees it: the port through
 * which the tablet appends its changelog, replays the log after its
 * store's applied offset, and learns what is committed. The replica that
 * owns the tablet implements it (replica_kv_log.h); nothing in src/kv
 * names the replica.
 *
 * Thread rule: as the implementation's (the replica's functions are safe
 * from any thread).
 */
#ifndef FL_KV_LOG_H
#define FL_KV_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"

/* What an append of a changelog batch did. */
typedef struct fl_kv_appended {
    int64_t base_offset; /* first offset of the batch (original offset of a duplicate) */
    int64_t end_offset;  /* one past its last offset */
    bool duplicate;
    /* the answer waits until the flushed offset reaches this (0: no wait) */
    int64_t durable_wait_offset;
} fl_kv_appended_t;

typedef struct fl_kv_log_ops {
    int64_t (*log_start)(void *log);
    int64_t (*log_end)(void *log);
    /* what is committed: the high watermark */
    int64_t (*high_watermark)(void *log);
    /* below which offset the pre-write buffer may go into the store (the
     * high watermark, and where answers wait for an fsync the flushed
     * offset too) */
    int64_t (*apply_bound)(void *log);
    /* whole batches from offset to the log end, up to max_bytes (at least
     * one) */
    int (*read)(void *log, int64_t offset, size_t max_bytes, fl_buf_t *out, fl_error_t *err);
    /* appends one changelog batch (rewritten in place: offsets, times) */
    int (*append)(void *log, uint8_t *batch, size_t len, int64_t now_ms, fl_kv_appended_t *res,
                  fl_error_t *err);
} fl_kv_log_ops_t;

typedef struct fl_kv_log {
    const fl_kv_log_ops_t *ops;
    void *ctx; /* the owner's: passed to every op */
} fl_kv_log_t;

#endif
