/*
 * record_value.h — the DefaultValueRecordBatch a PK table's LIMIT_SCAN
 * answers with (Fluss DefaultValueRecordBatch, DefaultValueRecord;
 * protocol.md §3.12, §5.3): a writer for the server and a checked
 * zero-copy view and iterator for the client. All integers little-endian.
 *
 *   batch                                  record (DefaultValueRecord)
 *   0 int32 Length (= batch bytes - 4)     int32 LE length L (= 2 + row bytes)
 *   4 int8  Magic (0)                      int16 SchemaId of the row
 *   5 int32 RecordCount                    L - 2 bytes row (kv format)
 *   9 ...   RecordCount records
 *
 * A record's SchemaId ‖ row is exactly the stored value of a key
 * (protocol.md §5.2), so the server copies values from RocksDB verbatim.
 * The reference reads RecordCount records and ignores what follows; the
 * parser here refuses bytes that do not match the header exactly. Thread
 * rule: none; views borrow the caller's bytes.
 */
#ifndef FL_RECORD_VALUE_H
#define FL_RECORD_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"

#define FL_VALUE_BATCH_OVERHEAD 4 /* the Length field */
#define FL_VALUE_BATCH_HEADER 9
#define FL_VALUE_BATCH_MAGIC 0
#define FL_VALUE_SCHEMA_ID_BYTES 2

/* Writes one batch into a caller's buffer. Embeddable. */
typedef struct fl_value_batch_writer {
    fl_buf_t *buf; /* borrowed */
    size_t start;  /* where the batch begins in buf */
    int32_t record_count;
} fl_value_batch_writer_t;

/* Appends the header placeholder to buf. */
void fl_value_batch_begin(fl_value_batch_writer_t *w, fl_buf_t *buf);
/* Appends a record of schema_id and row[0, row_len). */
void fl_value_batch_add(fl_value_batch_writer_t *w, int16_t schema_id, const uint8_t *row,
                        size_t row_len);
/* Appends a stored value (int16 LE schema id ‖ row, value_len >= 2)
 * verbatim, as the server reads it from the kv store. */
void fl_value_batch_add_value(fl_value_batch_writer_t *w, const uint8_t *value, size_t value_len);
/* Writes Length and RecordCount; the batch is buf[start, buf->len). */
void fl_value_batch_end(fl_value_batch_writer_t *w);

typedef struct fl_value_batch_view {
    const uint8_t *data;
    size_t size; /* Length + 4 */
    int8_t magic;
    int32_t record_count;
    const uint8_t *records;
    size_t records_len;
} fl_value_batch_view_t;

/* Parses and checks one whole batch p[0, len): Length = len - 4, magic 0,
 * RecordCount >= 0, every record's length >= 2 and inside the batch, and
 * exactly RecordCount records filling it. FLUSS_ERR_CORRUPT_RECORD_EXCEPTION
 * naming the record. Row bytes are not decoded. */
int fl_value_batch_parse(const uint8_t *p, size_t len, fl_value_batch_view_t *v,
                         fl_error_t *err);

typedef struct fl_value_record {
    int16_t schema_id;
    const uint8_t *row;
    size_t row_len;
    const uint8_t *value; /* schema id ‖ row: the stored value */
    size_t value_len;
} fl_value_record_t;

typedef struct fl_value_batch_iter {
    const fl_value_batch_view_t *v; /* borrowed */
    size_t pos;
    int32_t index;
} fl_value_batch_iter_t;

typedef enum fl_value_next {
    FL_VALUE_NEXT_ERROR = -1, /* err set */
    FL_VALUE_NEXT_END = 0,
    FL_VALUE_NEXT_RECORD = 1,
} fl_value_next_t;

void fl_value_batch_iter_init(fl_value_batch_iter_t *it, const fl_value_batch_view_t *v);
/* The next record of a parsed view (bounds checked again). */
fl_value_next_t fl_value_batch_next(fl_value_batch_iter_t *it, fl_value_record_t *rec,
                                    fl_error_t *err);

#endif
