/*
 * record_batch.c — LogRecordBatch header view and checks (record_batch.h).
 */
#include "record_batch.h"

#include <assert.h>
#include <string.h>

#include "common_crc32c.h"

/* Where the fields from SchemaId on start: after the CRC (magic 0, 1) or
 * after LeaderEpoch and the CRC (magic 2). Offsets inside that block:
 * SchemaId +0, Attributes +2, LastOffsetDelta +3, WriterId +7,
 * BatchSequence +15, RecordCount +19. */
#define FL_BATCH_TAIL_V01 25
#define FL_BATCH_TAIL_V2 29
#define FL_BATCH_CRC_V01 21
#define FL_BATCH_CRC_V2 25
#define FL_BATCH_LEADER_EPOCH_V2 21

size_t fl_batch_field_offset(int8_t magic, fl_batch_field_t f) {
    assert(magic >= 0 && magic <= FL_BATCH_MAGIC_MAX);
    size_t tail = magic == 2 ? FL_BATCH_TAIL_V2 : FL_BATCH_TAIL_V01;
    switch (f) {
    case FL_BATCH_FIELD_BASE_OFFSET: return 0;
    case FL_BATCH_FIELD_LENGTH: return 8;
    case FL_BATCH_FIELD_MAGIC: return 12;
    case FL_BATCH_FIELD_COMMIT_TIMESTAMP: return 13;
    case FL_BATCH_FIELD_LEADER_EPOCH: assert(magic == 2); return FL_BATCH_LEADER_EPOCH_V2;
    case FL_BATCH_FIELD_CRC: return magic == 2 ? FL_BATCH_CRC_V2 : FL_BATCH_CRC_V01;
    case FL_BATCH_FIELD_SCHEMA_ID: return tail;
    case FL_BATCH_FIELD_ATTRIBUTES: return tail + 2;
    case FL_BATCH_FIELD_LAST_OFFSET_DELTA: return tail + 3;
    case FL_BATCH_FIELD_WRITER_ID: return tail + 7;
    case FL_BATCH_FIELD_BATCH_SEQUENCE: return tail + 15;
    case FL_BATCH_FIELD_RECORD_COUNT: return tail + 19;
    case FL_BATCH_FIELD_STATISTICS_LENGTH: assert(magic >= 1); return fl_batch_header_size(magic) - 4;
    }
    assert(!"unknown batch header field");
    return 0;
}

size_t fl_batch_header_size(int8_t magic) {
    switch (magic) {
    case 0: return FL_BATCH_HEADER_V0;
    case 1: return FL_BATCH_HEADER_V1;
    case 2: return FL_BATCH_HEADER_V2;
    default: return 0;
    }
}

void fl_batch_write_header(uint8_t *p, size_t len, const fl_batch_header_t *h) {
    size_t hs = fl_batch_header_size(h->magic);
    assert(hs > 0 && len >= hs && (h->magic == 0 || len - hs >= h->stats_size));
    fl_put_le64(p, (uint64_t)h->base_offset);
    fl_batch_set_length(p, len);
    p[12] = (uint8_t)h->magic;
    fl_put_le64(p + 13, (uint64_t)h->commit_timestamp);
    uint8_t *t = p + (h->magic == 2 ? FL_BATCH_TAIL_V2 : FL_BATCH_TAIL_V01);
    if (h->magic == 2) fl_put_le32(p + FL_BATCH_LEADER_EPOCH_V2, (uint32_t)h->leader_epoch);
    t[0] = (uint8_t)h->schema_id;
    t[1] = (uint8_t)((uint16_t)h->schema_id >> 8);
    t[2] = (uint8_t)h->attributes;
    fl_put_le32(t + 3, (uint32_t)h->last_offset_delta);
    fl_put_le64(t + 7, (uint64_t)h->writer_id);
    fl_put_le32(t + 15, (uint32_t)h->batch_sequence);
    fl_put_le32(t + 19, (uint32_t)h->record_count);
    if (h->magic >= 1) fl_put_le32(p + hs - 4, h->stats_size);
    fl_batch_refresh_crc(p, len);
}

void fl_batch_append_v0(const fl_batch_view_t *b, fl_buf_t *out) {
    if (b->magic == 0) {
        fl_buf_append(out, b->data, b->size);
        return;
    }
    size_t records = b->size - b->records_start;
    size_t len = FL_BATCH_HEADER_V0 + records;
    uint8_t *p = fl_buf_reserve(out, len);
    memcpy(p + FL_BATCH_HEADER_V0, b->data + b->records_start, records);
    fl_batch_header_t h = {
        .magic = 0,
        .base_offset = b->base_offset,
        .commit_timestamp = b->commit_timestamp,
        .leader_epoch = -1,
        .schema_id = b->schema_id,
        .attributes = b->attributes,
        .last_offset_delta = b->last_offset_delta,
        .writer_id = b->writer_id,
        .batch_sequence = b->batch_sequence,
        .record_count = b->record_count,
    };
    fl_batch_write_header(p, len, &h);
    out->len += len;
}

void fl_batch_refresh_crc(uint8_t *p, size_t len) {
    int8_t magic = (int8_t)p[12];
    fl_put_le32(p + (magic == 2 ? FL_BATCH_CRC_V2 : FL_BATCH_CRC_V01),
                fl_batch_compute_crc(p, len, magic));
}

int fl_batch_peek_size(const uint8_t *p, size_t len, size_t size_max, size_t *size,
                       fl_error_t *err) {
    if (len < FL_BATCH_LOG_OVERHEAD) return 1;
    int32_t length = fl_get_le32(p + 8);
    if (length < FL_BATCH_HEADER_V0 - FL_BATCH_LOG_OVERHEAD)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                          "record batch length %d is smaller than a batch header", length);
    size_t total = (size_t)length + FL_BATCH_LOG_OVERHEAD;
    if (total > size_max)
        return fl_err_set(err, FLUSS_ERR_RECORD_TOO_LARGE_EXCEPTION,
                          "record batch of %zu bytes is larger than the limit %zu", total,
                          size_max);
    *size = total;
    return 0;
}

int fl_batch_peek_header(const uint8_t *p, size_t len, fl_batch_peek_t *out, fl_error_t *err) {
    assert(len >= FL_BATCH_HEADER_V0);
    (void)len;
    int8_t magic = (int8_t)p[12];
    if (magic < 0 || magic > FL_BATCH_MAGIC_MAX)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                          "unsupported record batch magic %d", magic);
    out->base_offset = fl_get_le64(p);
    out->length = fl_get_le32(p + 8);
    out->magic = magic;
    out->last_offset_delta =
        fl_get_le32(p + fl_batch_field_offset(magic, FL_BATCH_FIELD_LAST_OFFSET_DELTA));
    return 0;
}

int fl_batch_parse(const uint8_t *p, size_t len, fl_batch_view_t *b, fl_error_t *err) {
    const int code = FLUSS_ERR_CORRUPT_RECORD_EXCEPTION;
    if (len < FL_BATCH_HEADER_V0)
        return fl_err_set(err, code, "record batch of %zu bytes is shorter than its header", len);
    b->data = p;
    b->size = len;
    b->base_offset = fl_get_le64(p);
    int32_t length = fl_get_le32(p + 8);
    if (length < 0 || (size_t)length + FL_BATCH_LOG_OVERHEAD != len)
        return fl_err_set(err, code, "record batch length %d does not match its %zu bytes",
                          length, len);
    b->magic = (int8_t)p[12];
    b->commit_timestamp = fl_get_le64(p + 13);
    const uint8_t *h;
    switch (b->magic) {
    case 0:
    case 1:
        b->leader_epoch = -1;
        b->crc = (uint32_t)fl_get_le32(p + FL_BATCH_CRC_V01);
        h = p + FL_BATCH_TAIL_V01;
        b->header_size = b->magic == 0 ? FL_BATCH_HEADER_V0 : FL_BATCH_HEADER_V1;
        break;
    case 2:
        b->leader_epoch = fl_get_le32(p + FL_BATCH_LEADER_EPOCH_V2);
        b->crc = (uint32_t)fl_get_le32(p + FL_BATCH_CRC_V2);
        h = p + FL_BATCH_TAIL_V2;
        b->header_size = FL_BATCH_HEADER_V2;
        break;
    default:
        return fl_err_set(err, code, "unsupported record batch magic %d", b->magic);
    }
    if (len < b->header_size)
        return fl_err_set(err, code, "record batch of %zu bytes is shorter than its v%d header",
                          len, b->magic);
    b->schema_id = (int16_t)((uint16_t)h[0] | (uint16_t)h[1] << 8);
    b->attributes = (int8_t)h[2];
    b->last_offset_delta = fl_get_le32(h + 3);
    b->writer_id = fl_get_le64(h + 7);
    b->batch_sequence = fl_get_le32(h + 15);
    b->record_count = fl_get_le32(h + 19);
    b->stats_size = 0;
    if (b->magic >= 1) {
        int32_t stats = fl_get_le32(p + b->header_size - 4);
        if (stats < 0 || (size_t)stats > len - b->header_size)
            return fl_err_set(err, code, "record batch statistics length %d is out of bounds",
                              stats);
        b->stats_size = (size_t)stats;
    }
    b->records_start = b->header_size + b->stats_size;
    if (b->record_count < 0)
        return fl_err_set(err, code, "record batch has a negative record count %d",
                          b->record_count);
    int32_t want_delta = b->record_count > 0 ? b->record_count - 1 : 0;
    if (b->last_offset_delta != want_delta)
        return fl_err_set(err, code,
                          "record batch last offset delta %d does not match its %d records",
                          b->last_offset_delta, b->record_count);
    if (b->schema_id < 0)
        return fl_err_set(err, code, "record batch has a negative schema id %d", b->schema_id);
    return 0;
}

uint32_t fl_batch_compute_crc(const uint8_t *p, size_t len, int8_t magic) {
    size_t from = magic == 2 ? FL_BATCH_TAIL_V2 : FL_BATCH_TAIL_V01;
    if (len < from) return 0;
    return fl_crc32c(0, p + from, len - from);
}

int fl_batch_check_crc(const fl_batch_view_t *b, fl_error_t *err) {
    uint32_t crc = fl_batch_compute_crc(b->data, b->size, b->magic);
    if (crc != b->crc)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                          "record batch is corrupt (stored crc = %u, computed crc = %u)", b->crc,
                          crc);
    return 0;
}

void fl_batch_set_base_offset(uint8_t *p, int64_t base_offset) {
    fl_put_le64(p, (uint64_t)base_offset);
}

void fl_batch_set_commit_timestamp(uint8_t *p, int64_t ts) { fl_put_le64(p + 13, (uint64_t)ts); }

void fl_batch_set_length(uint8_t *p, size_t len) {
    fl_put_le32(p + 8, (uint32_t)(len - FL_BATCH_LOG_OVERHEAD));
}

int fl_batch_parse_next(const uint8_t *p, size_t len, size_t *pos, fl_batch_view_t *out,
                        fl_error_t *err) {
    if (*pos >= len) return 1;
    size_t size = 0;
    int rc = fl_batch_peek_size(p + *pos, len - *pos, len - *pos, &size, err);
    if (rc == 1 || (rc == 0 && size > len - *pos)) return 1;
    if (rc) return rc;
    if ((rc = fl_batch_parse(p + *pos, size, out, err))) return rc;
    *pos += size;
    return 0;
}
