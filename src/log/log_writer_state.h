/*
 * log_writer_state.h — idempotent writers of one bucket (Fluss
 * WriterStateManager / WriterAppendInfo): per writer id the last five
 * batches (sequence, first and last offset), so a retried batch is answered
 * as a duplicate with its original offset and an out-of-order one is
 * refused. Rebuilt from the log's batches on open. A writer whose newest
 * batch is older than server.writer-id.expiration-time is forgotten by the
 * periodic expiry (its next batch must start again at sequence 0). One
 * bucket, one thread.
 */
#ifndef FL_LOG_WRITER_STATE_H
#define FL_LOG_WRITER_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"

#define FL_WRITER_BATCHES_KEPT 5

typedef struct fl_writer_batch {
    int32_t sequence;
    int64_t first_offset;
    int64_t last_offset;
} fl_writer_batch_t;

typedef struct fl_writer_entry {
    int64_t writer_id; /* -1 = empty slot */
    int32_t count;     /* batches kept, <= FL_WRITER_BATCHES_KEPT */
    int32_t head;      /* index of the newest */
    int64_t last_timestamp; /* commit timestamp of the newest batch; -1 unknown */
    fl_writer_batch_t batches[FL_WRITER_BATCHES_KEPT];
} fl_writer_entry_t;

typedef struct fl_writer_state {
    size_t cap; /* power of two */
    size_t used;
    fl_writer_entry_t *slots;
} fl_writer_state_t;

enum fl_writer_check { FL_WRITER_NEW_BATCH = 0, FL_WRITER_DUPLICATE = 1 };

void fl_writer_state_init(fl_writer_state_t *s);
void fl_writer_state_free(fl_writer_state_t *s);
/* Classifies a batch of writer_id/sequence: FL_WRITER_NEW_BATCH (append
 * it), FL_WRITER_DUPLICATE (*dup set to the retained batch: where it was
 * appended, first and last offset), or OUT_OF_ORDER_SEQUENCE_EXCEPTION
 * with err set. */
int fl_writer_state_check(const fl_writer_state_t *s, int64_t writer_id, int32_t sequence,
                          fl_writer_batch_t *dup, fl_error_t *err);
/* Records an appended batch committed at timestamp (ms). */
void fl_writer_state_record(fl_writer_state_t *s, int64_t writer_id, int32_t sequence,
                            int64_t first_offset, int64_t last_offset, int64_t timestamp);
/* Forgets the writers whose newest batch is more than expiration_ms older
 * than now_ms (Fluss's WriterStateManager.removeExpiredWriters); a writer
 * with an unknown timestamp (from a version 1 snapshot) is stamped now_ms
 * instead. Returns how many were removed. */
size_t fl_writer_state_expire(fl_writer_state_t *s, int64_t now_ms, int64_t expiration_ms);

/* Snapshot encoding (the body of a .writer_snapshot file), little-endian:
 *   0 "FLWS" | 4 int32 version 2 | 8 int32 writer count |
 *   per writer: int64 writer id, int64 last timestamp (version 2 only),
 *   int32 batch count, then per batch oldest first: int32 sequence,
 *   int64 first offset, int64 last offset |
 *   last 4 bytes: CRC-32C of everything before them.
 * Version 1 files (no timestamps) still decode, timestamps unknown. */
void fl_writer_state_encode(const fl_writer_state_t *s, fl_buf_t *out);
/* Replaces s with a decoded snapshot; CORRUPT on any inconsistency. */
int fl_writer_state_decode(fl_writer_state_t *s, const uint8_t *p, size_t len, fl_error_t *err);

#endif
