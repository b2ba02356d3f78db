/*
 * coordinator_producer_codec.h — one producer's offsets (Fluss's
 * ProducerOffsets with its TableBucketOffsets) in memory and in their
 * file, <data.dir>/coordinator/producer-offsets/<producer id>.json:
 *
 *   {"version":1,"producer_id":"<id>","expiration_time":<epoch ms>,
 *    "tables":[{"table_id":<int64>,
 *               "buckets":[[<bucket int32>,<offset int64>]               not partitioned
 *                         |[<bucket int32>,<offset int64>,<partition id int64>], ...]}, ...]}
 *
 * Keys are the reference's ZooKeeper node's ("version", "expiration_time",
 * "tables", "table_id"); the reference keeps the bucket offsets in files
 * of remote storage, we inline them. The encoder writes tables in
 * ascending id and buckets in entry order (partition-less first, then by
 * partition id, then bucket), every table with at least one bucket. The
 * decoder trusts nothing: it checks every type and range, refuses a
 * table or bucket given twice, a table mixing buckets with and without a
 * partition id, a producer id that breaks TablePath's
 * rules, more than FL_PRODUCER_BUCKETS_MAX buckets, other versions and
 * unknown shapes — it accepts exactly what the encoder can write.
 *
 * Thread rule: pure functions over caller-owned values.
 */
#ifndef FL_COORDINATOR_PRODUCER_CODEC_H
#define FL_COORDINATOR_PRODUCER_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"

#define FL_PRODUCER_FILE_MAX (32u << 20)
/* Buckets of one producer: at most ~110 bytes each on disk, so a file
 * stays under FL_PRODUCER_FILE_MAX and decodes in bounded memory. */
#define FL_PRODUCER_BUCKETS_MAX 262144u

typedef struct fl_producer_bucket_offset {
    int64_t table_id;
    bool has_partition;
    int64_t partition_id; /* when has_partition */
    int32_t bucket;
    int64_t offset;
} fl_producer_bucket_offset_t;

/* One producer's entry (fl_producer_entry_free frees what it owns). */
typedef struct fl_producer_entry {
    char *producer_id;
    int64_t expiration_ms;
    size_t n;
    fl_producer_bucket_offset_t *b; /* in entry order, no bucket twice */
} fl_producer_entry_t;

/* Whether a bucket offset's key (table, partition, bucket) sorts before,
 * at or after another's: <0, 0, >0. Entry order. */
int fl_producer_bucket_cmp(const fl_producer_bucket_offset_t *a,
                           const fl_producer_bucket_offset_t *b);
/* Sorts b[0..*n) into entry order keeping, of a bucket given twice, the
 * later one (a map put, as the reference does); *n shrinks to match. */
void fl_producer_buckets_normalize(fl_producer_bucket_offset_t *b, size_t *n);

/* Decodes one file's bytes into *out (zeroed first; nothing on failure).
 * Errors: STORAGE_EXCEPTION naming what is wrong. */
int fl_producer_entry_decode(const char *text, size_t len, fl_producer_entry_t *out,
                             fl_error_t *err);
/* Appends e's file bytes to out. e's buckets must be in entry order with
 * no duplicate and its id valid (asserted). */
void fl_producer_entry_encode(const fl_producer_entry_t *e, fl_buf_t *out);
void fl_producer_entry_free(fl_producer_entry_t *e);

#endif
