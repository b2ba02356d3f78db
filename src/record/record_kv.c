/*
 * record_kv.c — KvRecordBatch view, iterator and builder (record_kv.h;
 * protocol.md §5.1). Thread rule: none.
 *
 * Field positions (batch): Length 0, Magic 4, CRC 5, SchemaId 9,
 * Attributes 11, WriterId 12, BatchSequence 20, RecordCount 24, records 28.
 */
#include "record_kv.h"

#include <assert.h>
#include <limits.h>
#include <string.h>

#include "common_crc32c.h"
#include "record_batch.h"

#define KV_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION
#define KV_OFF_MAGIC 4
#define KV_OFF_CRC 5
#define KV_OFF_SCHEMA_ID 9
#define KV_OFF_ATTRIBUTES 11
#define KV_OFF_WRITER_ID 12
#define KV_OFF_BATCH_SEQUENCE 20
#define KV_OFF_RECORD_COUNT 24
#define KV_RECORD_LENGTH 4   /* int32 before each record */
#define KV_VARINT_BYTES_MAX 5 /* an int32 as unsigned LEB128 */

/* ---- key-length varint ---- */

/* Decodes the unsigned LEB128 key length at p[0, n). Java writes it with
 * VarLengthUtils#writeUnsignedVarInt (minimal, at most 5 bytes) and reads
 * the key from the *minimal* size of the value it decoded, so an overlong
 * encoding would make the reference misplace the key: refused here.
 * Returns the bytes read, or 0 for a varint that is cut short, longer than
 * 5 bytes, not minimal or above INT32_MAX (*why says which). */
static size_t fl_kv_uvarint(const uint8_t *p, size_t n, uint32_t *out, const char **why) {
    uint64_t v = 0;
    for (size_t i = 0; i < KV_VARINT_BYTES_MAX; i++) {
        if (i == n) {
            *why = "is cut off by the record's end";
            return 0;
        }
        v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            if (i > 0 && p[i] == 0) {
                *why = "is not minimally encoded";
                return 0;
            }
            if (v > INT32_MAX) {
                *why = "is above 2^31 - 1";
                return 0;
            }
            *out = (uint32_t)v;
            return i + 1;
        }
    }
    *why = "runs past 5 bytes";
    return 0;
}

/* ---- records ---- */

/* Reads record `index` at p[0, n) into *rec and sets *size to the bytes it
 * takes. */
static int fl_kv_record_read(const uint8_t *p, size_t n, int32_t index, fl_kv_record_t *rec,
                             size_t *size, fl_error_t *err) {
    if (n < KV_RECORD_LENGTH)
        return fl_err_set(err, KV_CORRUPT,
                          "kv record %d: its length field is cut off (%zu bytes left)", index, n);
    int32_t length = fl_get_le32(p);
    if (length < 1)
        return fl_err_set(err, KV_CORRUPT,
                          "kv record %d: length %d is below the 1 byte of a key-length varint",
                          index, length);
    if ((size_t)length > n - KV_RECORD_LENGTH)
        return fl_err_set(err, KV_CORRUPT,
                          "kv record %d: length %d runs past the batch (%zu bytes left)", index,
                          length, n - KV_RECORD_LENGTH);
    const uint8_t *body = p + KV_RECORD_LENGTH;
    size_t body_len = (size_t)length;
    uint32_t key_len = 0;
    const char *why = "";
    size_t vb = fl_kv_uvarint(body, body_len, &key_len, &why);
    if (vb == 0)
        return fl_err_set(err, KV_CORRUPT, "kv record %d: the key-length varint %s", index, why);
    if (key_len > body_len - vb)
        return fl_err_set(err, KV_CORRUPT,
                          "kv record %d: key length %u runs past the record's %zu bytes", index,
                          key_len, body_len - vb);
    rec->key = body + vb;
    rec->key_len = key_len;
    rec->value_len = body_len - vb - key_len;
    rec->value = rec->value_len ? rec->key + key_len : NULL;
    rec->is_delete = rec->value_len == 0;
    *size = KV_RECORD_LENGTH + body_len;
    return 0;
}

/* ---- batch ---- */

int fl_kv_batch_parse(const uint8_t *p, size_t len, fl_kv_batch_view_t *v, fl_error_t *err) {
    if (len < FL_KV_BATCH_HEADER)
        return fl_err_set(err, KV_CORRUPT,
                          "kv record batch of %zu bytes is shorter than its %d-byte header", len,
                          FL_KV_BATCH_HEADER);
    int32_t length = fl_get_le32(p);
    if (length < FL_KV_BATCH_HEADER - FL_KV_BATCH_OVERHEAD ||
        (size_t)length != len - FL_KV_BATCH_OVERHEAD)
        return fl_err_set(err, KV_CORRUPT,
                          "kv record batch length %d does not match its %zu bytes (want %zu)",
                          length, len, len - FL_KV_BATCH_OVERHEAD);
    v->data = p;
    v->size = len;
    v->magic = (int8_t)p[KV_OFF_MAGIC];
    if (v->magic != FL_KV_BATCH_MAGIC)
        return fl_err_set(err, KV_CORRUPT, "unsupported kv record batch magic %d", v->magic);
    v->crc = (uint32_t)fl_get_le32(p + KV_OFF_CRC);
    v->schema_id = (int16_t)((uint16_t)p[KV_OFF_SCHEMA_ID] |
                             (uint16_t)p[KV_OFF_SCHEMA_ID + 1] << 8);
    v->attributes = (int8_t)p[KV_OFF_ATTRIBUTES];
    v->writer_id = fl_get_le64(p + KV_OFF_WRITER_ID);
    v->batch_sequence = fl_get_le32(p + KV_OFF_BATCH_SEQUENCE);
    v->record_count = fl_get_le32(p + KV_OFF_RECORD_COUNT);
    v->records = p + FL_KV_BATCH_HEADER;
    v->records_len = len - FL_KV_BATCH_HEADER;
    if (v->record_count < 0)
        return fl_err_set(err, KV_CORRUPT, "kv record batch has a negative record count %d",
                          v->record_count);
    size_t pos = 0;
    int32_t i = 0;
    for (; pos < v->records_len; i++) {
        if (i == v->record_count)
            return fl_err_set(err, KV_CORRUPT,
                              "kv record batch declares %d records but %zu bytes follow them",
                              v->record_count, v->records_len - pos);
        fl_kv_record_t rec;
        size_t size = 0;
        int rc = fl_kv_record_read(v->records + pos, v->records_len - pos, i, &rec, &size, err);
        if (rc) return rc;
        pos += size;
    }
    if (i != v->record_count)
        return fl_err_set(err, KV_CORRUPT, "kv record batch declares %d records but holds %d",
                          v->record_count, i);
    return 0;
}

uint32_t fl_kv_batch_compute_crc(const uint8_t *p, size_t len) {
    assert(len >= FL_KV_BATCH_HEADER);
    return fl_crc32c(0, p + FL_KV_BATCH_CRC_FROM, len - FL_KV_BATCH_CRC_FROM);
}

bool fl_kv_batch_crc_ok(const fl_kv_batch_view_t *v) {
    return fl_kv_batch_compute_crc(v->data, v->size) == v->crc;
}

void fl_kv_batch_iter_init(fl_kv_batch_iter_t *it, const fl_kv_batch_view_t *v) {
    it->v = v;
    it->pos = 0;
    it->index = 0;
}

fl_kv_next_t fl_kv_batch_next(fl_kv_batch_iter_t *it, fl_kv_record_t *rec, fl_error_t *err) {
    const fl_kv_batch_view_t *v = it->v;
    if (it->index >= v->record_count) return FL_KV_NEXT_END;
    size_t size = 0;
    if (fl_kv_record_read(v->records + it->pos, v->records_len - it->pos, it->index, rec, &size,
                          err))
        return FL_KV_NEXT_ERROR;
    it->pos += size;
    it->index++;
    return FL_KV_NEXT_RECORD;
}

/* ---- builder ---- */

static void fl_kv_builder_start(fl_kv_batch_builder_t *b) {
    b->buf.len = 0;
    memset(fl_buf_reserve(&b->buf, FL_KV_BATCH_HEADER), 0, FL_KV_BATCH_HEADER);
    b->buf.len = FL_KV_BATCH_HEADER;
    b->record_count = 0;
}

void fl_kv_batch_builder_init(fl_kv_batch_builder_t *b, int16_t schema_id, int64_t writer_id,
                              int32_t batch_sequence) {
    fl_buf_init(&b->buf);
    b->schema_id = schema_id;
    b->writer_id = writer_id;
    b->batch_sequence = batch_sequence;
    fl_kv_builder_start(b);
}

void fl_kv_batch_builder_free(fl_kv_batch_builder_t *b) { fl_buf_free(&b->buf); }

void fl_kv_batch_builder_add(fl_kv_batch_builder_t *b, const uint8_t *key, size_t key_len,
                             const uint8_t *value, size_t value_len) {
    if (!value) value_len = 0;
    assert(key_len <= INT32_MAX && value_len <= INT32_MAX);
    size_t vb = fl_uvarint_len((uint32_t)key_len);
    size_t body = vb + key_len + value_len;
    assert(body <= INT32_MAX && b->record_count < INT32_MAX);
    uint8_t *p = fl_buf_reserve(&b->buf, KV_RECORD_LENGTH + body);
    fl_put_le32(p, (uint32_t)body);
    p += KV_RECORD_LENGTH;
    uint32_t k = (uint32_t)key_len;
    while (k >= 0x80) {
        *p++ = (uint8_t)(k | 0x80);
        k >>= 7;
    }
    *p++ = (uint8_t)k;
    if (key_len) memcpy(p, key, key_len);
    if (value_len) memcpy(p + key_len, value, value_len);
    b->buf.len += KV_RECORD_LENGTH + body;
    b->record_count++;
}

int32_t fl_kv_batch_builder_count(const fl_kv_batch_builder_t *b) { return b->record_count; }

size_t fl_kv_batch_builder_size(const fl_kv_batch_builder_t *b) { return b->buf.len; }

void fl_kv_batch_builder_finish(fl_kv_batch_builder_t *b, fl_buf_t *out) {
    uint8_t *p = b->buf.data;
    size_t len = b->buf.len;
    assert(len >= FL_KV_BATCH_HEADER && len - FL_KV_BATCH_OVERHEAD <= INT32_MAX);
    fl_put_le32(p, (uint32_t)(len - FL_KV_BATCH_OVERHEAD));
    p[KV_OFF_MAGIC] = FL_KV_BATCH_MAGIC;
    p[KV_OFF_SCHEMA_ID] = (uint8_t)b->schema_id;
    p[KV_OFF_SCHEMA_ID + 1] = (uint8_t)((uint16_t)b->schema_id >> 8);
    p[KV_OFF_ATTRIBUTES] = 0;
    fl_put_le32(p + KV_OFF_RECORD_COUNT, (uint32_t)b->record_count);
    fl_kv_batch_set_writer_state(p, len, b->writer_id, b->batch_sequence);
    fl_buf_append(out, p, len);
    fl_kv_builder_start(b);
}

void fl_kv_batch_set_writer_state(uint8_t *p, size_t len, int64_t writer_id,
                                  int32_t batch_sequence) {
    assert(len >= FL_KV_BATCH_HEADER);
    fl_put_le64(p + KV_OFF_WRITER_ID, (uint64_t)writer_id);
    fl_put_le32(p + KV_OFF_BATCH_SEQUENCE, (uint32_t)batch_sequence);
    fl_put_le32(p + KV_OFF_CRC, fl_kv_batch_compute_crc(p, len));
}
