/*
 * record_stats.c — column statistics of a log batch (record_stats.h).
 */
#include "record_stats.h"

#include <string.h>

#include "record_batch.h"

#define FL_STATS_VERSION 1

int fl_batch_stats_parse(const uint8_t *p, size_t len, fl_batch_stats_t *out, fl_error_t *err) {
    const int code = FLUSS_ERR_CORRUPT_RECORD_EXCEPTION;
    memset(out, 0, sizeof(*out));
    if (len < 3 || p[0] != FL_STATS_VERSION)
        return fl_err_set(err, code, "batch statistics: version %d", len ? p[0] : -1);
    int32_t n = (int16_t)((uint16_t)p[1] | (uint16_t)p[2] << 8);
    size_t pos = 3;
    if (n < 0 || (len - pos) / 6 < (size_t)n)
        return fl_err_set(err, code, "batch statistics: %d columns do not fit %zu bytes", n, len);
    out->count = n;
    out->columns = p + pos;
    pos += 2 * (size_t)n;
    out->null_counts = p + pos;
    pos += 4 * (size_t)n;
    for (int which = 0; which < 2; which++) {
        if (len - pos < 4) return fl_err_set(err, code, "batch statistics: row size cut off");
        int32_t size = fl_get_le32(p + pos);
        pos += 4;
        if (size < 0 || (size_t)size > len - pos)
            return fl_err_set(err, code, "batch statistics: row of %d bytes past the end", size);
        const uint8_t *row = size ? p + pos : NULL;
        if (which == 0) {
            out->min_row = row;
            out->min_len = (size_t)size;
        } else {
            out->max_row = row;
            out->max_len = (size_t)size;
        }
        pos += (size_t)size;
    }
    if (pos != len) return fl_err_set(err, code, "batch statistics: %zu bytes left over", len - pos);
    return 0;
}

int fl_batch_stats_find(const fl_batch_stats_t *s, int column) {
    for (int k = 0; k < s->count; k++) {
        int c = (int16_t)((uint16_t)s->columns[2 * k] | (uint16_t)s->columns[2 * k + 1] << 8);
        if (c == column) return k;
    }
    return -1;
}

int32_t fl_batch_stats_null_count(const fl_batch_stats_t *s, int k) {
    return fl_get_le32(s->null_counts + 4 * (size_t)k);
}

static size_t fl_aligned_null_bytes(int32_t fields) {
    return (((size_t)fields + 63 + 8) / 64) * 8;
}

/* The variable-length value of a slot: inline when byte 7 has 0x80. */
static bool fl_aligned_var(const uint8_t *row, size_t row_len, const uint8_t *slot,
                           const uint8_t **data, size_t *len) {
    if (slot[7] & 0x80) {
        *len = slot[7] & 0x7f;
        if (*len > 7) return false;
        *data = slot;
        return true;
    }
    uint64_t v = (uint64_t)fl_get_le64(slot);
    uint64_t off = v >> 32, n = v & 0xffffffffu;
    if (off > row_len || n > row_len - off) return false;
    *data = row + off;
    *len = (size_t)n;
    return true;
}

fl_stat_value_t fl_batch_stats_value(const fl_batch_stats_t *s, bool max, int k,
                                     const fl_datatype_t *type) {
    fl_stat_value_t v;
    memset(&v, 0, sizeof(v));
    const uint8_t *row = max ? s->max_row : s->min_row;
    size_t row_len = max ? s->max_len : s->min_len;
    if (!row || k < 0 || k >= s->count) return v;
    size_t nb = fl_aligned_null_bytes(s->count);
    size_t slot_at = nb + 8 * (size_t)k;
    if (slot_at > row_len || row_len - slot_at < 8) return v;
    size_t bit = (size_t)k + 8;
    if (row[bit / 8] & (1u << (bit % 8))) {
        v.kind = FL_STAT_NULL;
        return v;
    }
    const uint8_t *slot = row + slot_at;
    switch (type->root) {
    case FL_TYPE_BOOLEAN:
        v.kind = FL_STAT_INT;
        v.i = slot[0] != 0;
        break;
    case FL_TYPE_TINYINT:
        v.kind = FL_STAT_INT;
        v.i = (int8_t)slot[0];
        break;
    case FL_TYPE_SMALLINT:
        v.kind = FL_STAT_INT;
        v.i = (int16_t)((uint16_t)slot[0] | (uint16_t)slot[1] << 8);
        break;
    case FL_TYPE_INTEGER:
    case FL_TYPE_DATE:
    case FL_TYPE_TIME:
        v.kind = FL_STAT_INT;
        v.i = fl_get_le32(slot);
        break;
    case FL_TYPE_BIGINT:
        v.kind = FL_STAT_INT;
        v.i = fl_get_le64(slot);
        break;
    case FL_TYPE_DECIMAL:
        /* compact (precision <= 18): the unscaled long; wider ones are not compared */
        if (type->precision <= 18) {
            v.kind = FL_STAT_INT;
            v.i = fl_get_le64(slot);
        }
        break;
    case FL_TYPE_FLOAT: {
        uint32_t bits = (uint32_t)fl_get_le32(slot);
        float f;
        memcpy(&f, &bits, sizeof(f));
        v.kind = FL_STAT_DOUBLE;
        v.d = f;
        break;
    }
    case FL_TYPE_DOUBLE: {
        uint64_t bits = (uint64_t)fl_get_le64(slot);
        memcpy(&v.d, &bits, sizeof(v.d));
        v.kind = FL_STAT_DOUBLE;
        break;
    }
    case FL_TYPE_STRING:
    case FL_TYPE_CHAR:
        if (fl_aligned_var(row, row_len, slot, &v.bytes, &v.len)) v.kind = FL_STAT_BYTES;
        break;
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ:
        if (type->precision <= 3) {
            v.kind = FL_STAT_TIMESTAMP;
            v.i = fl_get_le64(slot);
        } else {
            uint64_t w = (uint64_t)fl_get_le64(slot);
            uint64_t off = w >> 32;
            if (off <= row_len && row_len - off >= 8) {
                v.kind = FL_STAT_TIMESTAMP;
                v.i = fl_get_le64(row + off);
                v.nanos = (int32_t)(w & 0xffffffffu);
            }
        }
        break;
    default:
        break;
    }
    return v;
}
