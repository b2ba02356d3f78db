/*
 * record_value.c — DefaultValueRecordBatch writer, view and iterator
 * (record_value.h; protocol.md §5.3). Thread rule: none.
 *
 * Field positions: Length 0, Magic 4, RecordCount 5, records 9; a record
 * is int32 length, int16 schema id, row.
 */
#include "record_value.h"

#include <assert.h>
#include <limits.h>
#include <string.h>

#include "record_batch.h"

#define VB_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION
#define VB_OFF_MAGIC 4
#define VB_OFF_RECORD_COUNT 5
#define VB_RECORD_LENGTH 4

/* ---- writer ---- */

void fl_value_batch_begin(fl_value_batch_writer_t *w, fl_buf_t *buf) {
    w->buf = buf;
    w->start = buf->len;
    w->record_count = 0;
    memset(fl_buf_reserve(buf, FL_VALUE_BATCH_HEADER), 0, FL_VALUE_BATCH_HEADER);
    buf->len += FL_VALUE_BATCH_HEADER;
}

static uint8_t *fl_value_record_start(fl_value_batch_writer_t *w, size_t value_len) {
    assert(value_len >= FL_VALUE_SCHEMA_ID_BYTES && value_len <= INT32_MAX &&
           w->record_count < INT32_MAX);
    uint8_t *p = fl_buf_reserve(w->buf, VB_RECORD_LENGTH + value_len);
    fl_put_le32(p, (uint32_t)value_len);
    w->buf->len += VB_RECORD_LENGTH + value_len;
    w->record_count++;
    return p + VB_RECORD_LENGTH;
}

void fl_value_batch_add(fl_value_batch_writer_t *w, int16_t schema_id, const uint8_t *row,
                        size_t row_len) {
    assert(row_len <= INT32_MAX - FL_VALUE_SCHEMA_ID_BYTES);
    uint8_t *p = fl_value_record_start(w, FL_VALUE_SCHEMA_ID_BYTES + row_len);
    p[0] = (uint8_t)schema_id;
    p[1] = (uint8_t)((uint16_t)schema_id >> 8);
    if (row_len) memcpy(p + FL_VALUE_SCHEMA_ID_BYTES, row, row_len);
}

void fl_value_batch_add_value(fl_value_batch_writer_t *w, const uint8_t *value,
                              size_t value_len) {
    uint8_t *p = fl_value_record_start(w, value_len);
    memcpy(p, value, value_len);
}

void fl_value_batch_end(fl_value_batch_writer_t *w) {
    uint8_t *p = w->buf->data + w->start;
    size_t len = w->buf->len - w->start;
    assert(len >= FL_VALUE_BATCH_HEADER && len - FL_VALUE_BATCH_OVERHEAD <= INT32_MAX);
    fl_put_le32(p, (uint32_t)(len - FL_VALUE_BATCH_OVERHEAD));
    p[VB_OFF_MAGIC] = FL_VALUE_BATCH_MAGIC;
    fl_put_le32(p + VB_OFF_RECORD_COUNT, (uint32_t)w->record_count);
}

/* ---- reader ---- */

static int fl_value_record_read(const uint8_t *p, size_t n, int32_t index, fl_value_record_t *rec,
                                size_t *size, fl_error_t *err) {
    if (n < VB_RECORD_LENGTH)
        return fl_err_set(err, VB_CORRUPT,
                          "value record %d: its length field is cut off (%zu bytes left)", index,
                          n);
    int32_t length = fl_get_le32(p);
    if (length < FL_VALUE_SCHEMA_ID_BYTES)
        return fl_err_set(err, VB_CORRUPT,
                          "value record %d: length %d is below the 2 bytes of its schema id",
                          index, length);
    if ((size_t)length > n - VB_RECORD_LENGTH)
        return fl_err_set(err, VB_CORRUPT,
                          "value record %d: length %d runs past the batch (%zu bytes left)",
                          index, length, n - VB_RECORD_LENGTH);
    rec->value = p + VB_RECORD_LENGTH;
    rec->value_len = (size_t)length;
    rec->schema_id = (int16_t)((uint16_t)rec->value[0] | (uint16_t)rec->value[1] << 8);
    rec->row = rec->value + FL_VALUE_SCHEMA_ID_BYTES;
    rec->row_len = rec->value_len - FL_VALUE_SCHEMA_ID_BYTES;
    *size = VB_RECORD_LENGTH + rec->value_len;
    return 0;
}

int fl_value_batch_parse(const uint8_t *p, size_t len, fl_value_batch_view_t *v,
                         fl_error_t *err) {
    if (len < FL_VALUE_BATCH_HEADER)
        return fl_err_set(err, VB_CORRUPT,
                          "value record batch of %zu bytes is shorter than its %d-byte header",
                          len, FL_VALUE_BATCH_HEADER);
    int32_t length = fl_get_le32(p);
    if (length < FL_VALUE_BATCH_HEADER - FL_VALUE_BATCH_OVERHEAD ||
        (size_t)length != len - FL_VALUE_BATCH_OVERHEAD)
        return fl_err_set(err, VB_CORRUPT,
                          "value record batch length %d does not match its %zu bytes (want %zu)",
                          length, len, len - FL_VALUE_BATCH_OVERHEAD);
    v->data = p;
    v->size = len;
    v->magic = (int8_t)p[VB_OFF_MAGIC];
    if (v->magic != FL_VALUE_BATCH_MAGIC)
        return fl_err_set(err, VB_CORRUPT, "unsupported value record batch magic %d", v->magic);
    v->record_count = fl_get_le32(p + VB_OFF_RECORD_COUNT);
    v->records = p + FL_VALUE_BATCH_HEADER;
    v->records_len = len - FL_VALUE_BATCH_HEADER;
    if (v->record_count < 0)
        return fl_err_set(err, VB_CORRUPT, "value record batch has a negative record count %d",
                          v->record_count);
    size_t pos = 0;
    int32_t i = 0;
    for (; pos < v->records_len; i++) {
        if (i == v->record_count)
            return fl_err_set(err, VB_CORRUPT,
                              "value record batch declares %d records but %zu bytes follow them",
                              v->record_count, v->records_len - pos);
        fl_value_record_t rec;
        size_t size = 0;
        int rc = fl_value_record_read(v->records + pos, v->records_len - pos, i, &rec, &size, err);
        if (rc) return rc;
        pos += size;
    }
    if (i != v->record_count)
        return fl_err_set(err, VB_CORRUPT, "value record batch declares %d records but holds %d",
                          v->record_count, i);
    return 0;
}

void fl_value_batch_iter_init(fl_value_batch_iter_t *it, const fl_value_batch_view_t *v) {
    it->v = v;
    it->pos = 0;
    it->index = 0;
}

fl_value_next_t fl_value_batch_next(fl_value_batch_iter_t *it, fl_value_record_t *rec,
                                    fl_error_t *err) {
    const fl_value_batch_view_t *v = it->v;
    if (it->index >= v->record_count) return FL_VALUE_NEXT_END;
    size_t size = 0;
    if (fl_value_record_read(v->records + it->pos, v->records_len - it->pos, it->index, rec,
                             &size, err))
        return FL_VALUE_NEXT_ERROR;
    it->pos += size;
    it->index++;
    return FL_VALUE_NEXT_RECORD;
}
