/*
 * coordinator_producer_offsets.h — producer offsets (Fluss's
 * ProducerOffsetsManager and ProducerOffsetsStore): a writer such as a
 * Flink sink registers, under a producer id of its choosing (the Flink job
 * id, or `sink.producer-id`), the log end offset of every bucket it is
 * about to write. After a failure without a checkpoint it reads them back
 * and undoes what was written past them. Register is "check and create":
 * an entry that exists and has not expired is kept as it is and the answer
 * says so (RegisterResult ALREADY_EXISTS); that is how the sink tells a
 * first start from a restart.
 *
 * Semantics follow 0.9.1: table ids are not checked (offsets of unknown or
 * dropped tables are stored and returned; dropping a table leaves them);
 * a bucket given twice keeps the last offset; an entry expires at
 * register time + TTL (the request's ttl_ms, else the coordinator's
 * `coordinator.producer-offsets.ttl`) and is expired once now is past that
 * instant. An expired entry is treated as absent — GET finds nothing,
 * REGISTER replaces it — where the reference may still return one until
 * its next sweep; fl_producer_offsets_expire (the coordinator's sweep,
 * every `coordinator.producer-offsets.cleanup-interval`) removes their
 * files. Producer ids follow TablePath's character rules (they name
 * files): INVALID_PRODUCER_ID_EXCEPTION otherwise.
 *
 * Persistence: one file per producer, <dir>/<producer id>.json (format in
 * coordinator_producer_codec.h), created with fl_fs_write_atomic (temp
 * file, fsync, rename, fsync dir) and removed with unlink + fsync dir: after
 * a crash an acknowledged register or delete is there, and nothing
 * half-written is. A producer file that does not read or decode whole at
 * open fences its producer: GET and REGISTER of that id fail with
 * STORAGE_EXCEPTION (never "none" or CREATED, which would turn the sink's
 * restart into a first start and skip its undo) until a DELETE removes
 * the file; other producers and the coordinator carry on. A
 * "<id>.json.tmp" left by an interrupted write is removed.
 *
 * A failed write latches the store: memory keeps the state before the
 * change, and every later mutation fails with STORAGE_EXCEPTION until a
 * restart reads the files again (no retry of a failed fsync).
 *
 * Thread rule: every function is safe from any thread. Mutations are
 * serialized by a writer lock held across their file I/O; readers take
 * only a short state lock, so a GET never waits for an fsync.
 */
#ifndef FL_COORDINATOR_PRODUCER_OFFSETS_H
#define FL_COORDINATOR_PRODUCER_OFFSETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"
#include "coordinator_producer_codec.h"

#define FL_PRODUCER_OFFSETS_TTL_MS_DEFAULT (24LL * 3600 * 1000)
#define FL_PRODUCER_OFFSETS_CLEANUP_MS_DEFAULT (3600LL * 1000)

typedef struct fl_producer_offsets fl_producer_offsets_t;

/* The wire's RegisterResult codes. */
typedef enum fl_producer_register {
    FL_PRODUCER_REGISTER_CREATED = 0,
    FL_PRODUCER_REGISTER_EXISTS = 1,
} fl_producer_register_t;

/* Opens the store over dir (created when missing; NULL: in memory only)
 * and loads every producer file in it; fails only when dir cannot be
 * made or listed. */
int fl_producer_offsets_open(const char *dir, fl_producer_offsets_t **out, fl_error_t *err);
void fl_producer_offsets_close(fl_producer_offsets_t *p);

/* Registers producer_id's offsets unless an unexpired entry exists
 * (*result says which). The entry expires at now_ms + ttl_ms (saturating;
 * a negative TTL gives an entry expired at once, as in the reference). b
 * need not be in order; of a bucket given twice the last offset counts.
 * UNKNOWN_SERVER_ERROR, whether or not the entry exists (as in the
 * reference): a table with buckets both with and without a partition id
 * (0.9.1's offsets file cannot hold them), or more than
 * FL_PRODUCER_BUCKETS_MAX distinct buckets. */
int fl_producer_offsets_register(fl_producer_offsets_t *p, const char *producer_id,
                                 const fl_producer_bucket_offset_t *b, size_t n, int64_t ttl_ms,
                                 int64_t now_ms, fl_producer_register_t *result, fl_error_t *err);
/* Copies producer_id's unexpired entry into *out (the caller frees it with
 * fl_producer_entry_free); *found is false when there is none. Fails only
 * for an invalid id. */
int fl_producer_offsets_get(fl_producer_offsets_t *p, const char *producer_id, int64_t now_ms,
                            fl_producer_entry_t *out, bool *found, fl_error_t *err);
/* Removes producer_id's entry (a fenced one too); none is no error. */
int fl_producer_offsets_delete(fl_producer_offsets_t *p, const char *producer_id,
                               fl_error_t *err);
/* Removes the entries expired at now_ms (not fenced ones), files first;
 * returns how many went. A failed removal is logged and latches the
 * store. */
size_t fl_producer_offsets_expire(fl_producer_offsets_t *p, int64_t now_ms);
/* Entries held, expired and fenced ones included (tests, stats). */
size_t fl_producer_offsets_count(fl_producer_offsets_t *p);

#endif
