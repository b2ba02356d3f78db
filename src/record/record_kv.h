/*
 * record_kv.h — the KvRecordBatch a client sends in PUT_KV (Fluss
 * DefaultKvRecordBatch, KvRecordBatchBuilder, DefaultKvRecord; protocol.md
 * §3.10, §5.1): a checked zero-copy view of one batch, an iterator over its
 * records, and a builder for libfluss and tests. All integers little-endian.
 *
 *   batch                                      record (DefaultKvRecord)
 *   0  int32  Length (= batch bytes - 4)       int32 LE length L of the rest
 *   4  int8   Magic (0)                        uvarint key length k (1-5 B)
 *   5  uint32 CRC-32C of [9, end)              k bytes key (encoded primary key)
 *   9  int16  SchemaId (of the value rows)     L - varint - k bytes value row,
 *   11 int8   Attributes (0)                     no schema-id prefix;
 *   12 int64  WriterId (-1 none)                 0 bytes = delete the key
 *   20 int32  BatchSequence (-1 none)
 *   24 int32  RecordCount
 *   28 ...    RecordCount records
 *
 * One PUT_KV bucket carries exactly one batch: the reference points one
 * DefaultKvRecordBatch at the bytes and reads RecordCount records from it,
 * ignoring whatever follows (ServerRpcMessageUtils#getPutKvData,
 * KvTablet#processKvRecords). fluss-c is stricter — bytes after the batch,
 * records that do not fill the batch exactly, or fewer than RecordCount
 * are refused rather than dropped or read past; every client writes one
 * exact batch. The reference does not check this CRC either; the server
 * may, with fl_kv_batch_crc_ok. Thread rule: none; views borrow the
 * caller's bytes and are valid while those are.
 */
#ifndef FL_RECORD_KV_H
#define FL_RECORD_KV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"

#define FL_KV_BATCH_OVERHEAD 4 /* the Length field */
#define FL_KV_BATCH_HEADER 28
#define FL_KV_BATCH_MAGIC 0
#define FL_KV_BATCH_CRC_FROM 9 /* the CRC covers [9, end) */

/* A parsed batch; owns nothing. */
typedef struct fl_kv_batch_view {
    const uint8_t *data; /* the whole batch */
    size_t size;         /* Length + 4 */
    int8_t magic;
    uint32_t crc;
    int16_t schema_id;
    int8_t attributes;
    int64_t writer_id;
    int32_t batch_sequence;
    int32_t record_count;
    const uint8_t *records; /* after the header */
    size_t records_len;
} fl_kv_batch_view_t;

/* Parses and checks one whole batch p[0, len): the header (Length = len -
 * 4, magic 0, RecordCount >= 0) and the structure of every record (length,
 * key-length varint of at most 5 bytes and minimal, key inside the record),
 * exactly RecordCount records filling the batch to its end. Fails with
 * FLUSS_ERR_CORRUPT_RECORD_EXCEPTION, naming the record and what is wrong.
 * Neither the CRC nor the schema id is checked (the caller's, §3.10). */
int fl_kv_batch_parse(const uint8_t *p, size_t len, fl_kv_batch_view_t *v, fl_error_t *err);
/* Whether the stored CRC matches the bytes. */
bool fl_kv_batch_crc_ok(const fl_kv_batch_view_t *v);
/* The CRC a batch p[0, len) (len >= FL_KV_BATCH_HEADER) should carry. */
uint32_t fl_kv_batch_compute_crc(const uint8_t *p, size_t len);

/* One record, borrowed from the batch's bytes. */
typedef struct fl_kv_record {
    const uint8_t *key;
    size_t key_len;
    const uint8_t *value; /* the row; NULL for a delete */
    size_t value_len;
    bool is_delete; /* value_len == 0 */
} fl_kv_record_t;

typedef struct fl_kv_batch_iter {
    const fl_kv_batch_view_t *v; /* borrowed */
    size_t pos;                  /* in v->records */
    int32_t index;               /* records handed out */
} fl_kv_batch_iter_t;

/* What fl_kv_batch_next returned. */
typedef enum fl_kv_next {
    FL_KV_NEXT_ERROR = -1, /* err set (CORRUPT_RECORD_EXCEPTION) */
    FL_KV_NEXT_END = 0,
    FL_KV_NEXT_RECORD = 1, /* *rec filled */
} fl_kv_next_t;

void fl_kv_batch_iter_init(fl_kv_batch_iter_t *it, const fl_kv_batch_view_t *v);
/* The next record of a view from fl_kv_batch_parse. Bounds are checked
 * again, so an error can only come from a view that was not parsed. */
fl_kv_next_t fl_kv_batch_next(fl_kv_batch_iter_t *it, fl_kv_record_t *rec, fl_error_t *err);

/* Builds one batch. Embeddable; callers use the functions, not the fields. */
typedef struct fl_kv_batch_builder {
    fl_buf_t buf; /* header placeholder + records */
    int16_t schema_id;
    int64_t writer_id;
    int32_t batch_sequence;
    int32_t record_count;
} fl_kv_batch_builder_t;

void fl_kv_batch_builder_init(fl_kv_batch_builder_t *b, int16_t schema_id, int64_t writer_id,
                              int32_t batch_sequence);
void fl_kv_batch_builder_free(fl_kv_batch_builder_t *b);
/* Appends a record; value NULL or value_len 0 deletes the key. Sizes are
 * the caller's (a record must stay below 2 GiB). */
void fl_kv_batch_builder_add(fl_kv_batch_builder_t *b, const uint8_t *key, size_t key_len,
                             const uint8_t *value, size_t value_len);
int32_t fl_kv_batch_builder_count(const fl_kv_batch_builder_t *b);
/* Bytes the batch would take now. */
size_t fl_kv_batch_builder_size(const fl_kv_batch_builder_t *b);
/* Appends the finished batch (header, CRC) to out; the builder is empty
 * afterwards, with the same schema id and writer state. */
void fl_kv_batch_builder_finish(fl_kv_batch_builder_t *b, fl_buf_t *out);

/* Rewrites WriterId and BatchSequence of the finished batch p[0, len) and
 * its CRC (a writer that learns its id after building, Fluss
 * KvRecordBatchBuilder#resetWriterState). */
void fl_kv_batch_set_writer_state(uint8_t *p, size_t len, int64_t writer_id,
                                  int32_t batch_sequence);

#endif
