/*
 * record_stats_build.c — server-side column statistics of ARROW batches
 * (record_stats_build.h), written as Fluss main's statistics bytes with
 * AlignedRow minimum and maximum rows.
 */
#include "record_stats_build.h"

#include <math.h>
#include <string.h>

#include "arrow_decode.h"
#include "common_alloc.h"

#define FL_STATS_STRING_MAX 1024

/* One column's summary. */
typedef struct fl_col_stats {
    int column;
    const fl_datatype_t *type;
    int32_t nulls;
    bool any;          /* a non-null value was seen */
    int64_t lo_i, hi_i; /* ints; timestamps in the column's unit */
    double lo_d, hi_d;
    const uint8_t *lo_b, *hi_b;
    size_t lo_len, hi_len;
} fl_col_stats_t;

static int fl_bytes_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
    size_t n = al < bl ? al : bl;
    int c = n ? memcmp(a, b, n) : 0;
    return c ? c : (al < bl ? -1 : al > bl);
}

/* Summarises column a; false when it cannot be (left out). */
static bool fl_summarise(const fl_arrow_array_t *a, int64_t rows, fl_col_stats_t *s) {
    fl_type_root_t r = s->type->root;
    if (r == FL_TYPE_DECIMAL && s->type->precision > 18) return false;
    /* TIME kept only in milliseconds, the unit its statistics hold */
    if (r == FL_TYPE_TIME && s->type->precision > 3) return false;
    for (int64_t i = 0; i < rows; i++) {
        if (fl_arrow_array_is_null(a, i)) {
            s->nulls++;
            continue;
        }
        if (r == FL_TYPE_FLOAT || r == FL_TYPE_DOUBLE) {
            double d = fl_arrow_array_double(a, i);
            if (isnan(d)) return false;
            if (!s->any || d < s->lo_d) s->lo_d = d;
            if (!s->any || d > s->hi_d) s->hi_d = d;
        } else if (r == FL_TYPE_STRING || r == FL_TYPE_CHAR) {
            size_t len;
            const uint8_t *b = fl_arrow_array_bytes(a, i, &len);
            if (len > FL_STATS_STRING_MAX) return false;
            if (!s->any || fl_bytes_cmp(b, len, s->lo_b, s->lo_len) < 0) {
                s->lo_b = b;
                s->lo_len = len;
            }
            if (!s->any || fl_bytes_cmp(b, len, s->hi_b, s->hi_len) > 0) {
                s->hi_b = b;
                s->hi_len = len;
            }
        } else {
            int64_t v = r == FL_TYPE_BOOLEAN   ? fl_arrow_array_bool(a, i)
                        : r == FL_TYPE_DECIMAL ? (int64_t)fl_arrow_array_decimal(a, i)
                                               : fl_arrow_array_int(a, i);
            if (!s->any || v < s->lo_i) s->lo_i = v;
            if (!s->any || v > s->hi_i) s->hi_i = v;
        }
        s->any = true;
    }
    return true;
}

/* A timestamp in its column's unit as epoch millis and nanos of the milli. */
static void fl_ts_split(int64_t v, int32_t precision, int64_t *ms, int32_t *nanos) {
    int64_t per_ms = precision <= 3 ? 1 : precision <= 6 ? 1000 : 1000000;
    int64_t m = v / per_ms, rem = v % per_ms;
    if (rem < 0) {
        m -= 1;
        rem += per_ms;
    }
    *ms = m;
    *nanos = (int32_t)(rem * (1000000 / per_ms));
}

static void fl_put_le64_at(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* One AlignedRow of the summaries' minimum (max = false) or maximum. */
static void fl_aligned_row(const fl_col_stats_t *cs, size_t n, bool max, fl_buf_t *out) {
    size_t nb = ((n + 63 + 8) / 64) * 8, fixed = nb + 8 * n;
    size_t var = 0;
    for (size_t k = 0; k < n; k++) {
        const fl_col_stats_t *s = &cs[k];
        fl_type_root_t r = s->type->root;
        size_t len = max ? s->hi_len : s->lo_len;
        if (!s->any) continue;
        if ((r == FL_TYPE_STRING || r == FL_TYPE_CHAR) && len > 7) var += (len + 7) / 8 * 8;
        if ((r == FL_TYPE_TIMESTAMP || r == FL_TYPE_TIMESTAMP_LTZ) && s->type->precision > 3)
            var += 8;
    }
    uint8_t *row = fl_calloc(1, fixed + var);
    size_t at = fixed;
    for (size_t k = 0; k < n; k++) {
        const fl_col_stats_t *s = &cs[k];
        uint8_t *slot = row + nb + 8 * k;
        if (!s->any) {
            row[(k + 8) / 8] |= (uint8_t)(1u << ((k + 8) % 8));
            continue;
        }
        fl_type_root_t r = s->type->root;
        int64_t iv = max ? s->hi_i : s->lo_i;
        switch (r) {
        case FL_TYPE_FLOAT: {
            float f = (float)(max ? s->hi_d : s->lo_d);
            memcpy(slot, &f, 4);
            break;
        }
        case FL_TYPE_DOUBLE: {
            double d = max ? s->hi_d : s->lo_d;
            memcpy(slot, &d, 8);
            break;
        }
        case FL_TYPE_STRING:
        case FL_TYPE_CHAR: {
            const uint8_t *b = max ? s->hi_b : s->lo_b;
            size_t len = max ? s->hi_len : s->lo_len;
            if (len <= 7) {
                if (len) memcpy(slot, b, len);
                slot[7] = (uint8_t)(0x80 | len);
            } else {
                memcpy(row + at, b, len);
                fl_put_le64_at(slot, (uint64_t)at << 32 | len);
                at += (len + 7) / 8 * 8;
            }
            break;
        }
        case FL_TYPE_TIMESTAMP:
        case FL_TYPE_TIMESTAMP_LTZ: {
            int64_t ms;
            int32_t nanos;
            fl_ts_split(iv, s->type->precision, &ms, &nanos);
            if (s->type->precision <= 3) {
                fl_put_le64_at(slot, (uint64_t)ms);
            } else {
                fl_put_le64_at(row + at, (uint64_t)ms);
                fl_put_le64_at(slot, (uint64_t)at << 32 | (uint32_t)nanos);
                at += 8;
            }
            break;
        }
        case FL_TYPE_BOOLEAN:
        case FL_TYPE_TINYINT:
            slot[0] = (uint8_t)iv;
            break;
        case FL_TYPE_SMALLINT:
            slot[0] = (uint8_t)iv;
            slot[1] = (uint8_t)((uint64_t)iv >> 8);
            break;
        case FL_TYPE_INTEGER:
        case FL_TYPE_DATE:
        case FL_TYPE_TIME:
            fl_put_le64_at(slot, (uint64_t)(uint32_t)iv);
            break;
        default: /* BIGINT, compact DECIMAL */
            fl_put_le64_at(slot, (uint64_t)iv);
            break;
        }
    }
    uint8_t w[4];
    fl_put_le32(w, (uint32_t)(fixed + var));
    fl_buf_append(out, w, 4);
    fl_buf_append(out, row, fixed + var);
    fl_free(row);
}

int fl_stats_build(const fl_batch_view_t *b, const fl_datatype_t *const *types, size_t n,
                   const int *cols, size_t ncols, fl_buf_t *out, fl_error_t *err) {
    if (!ncols || b->record_count <= 0) return 0;
    size_t pos = b->records_start;
    if (!(b->attributes & FL_BATCH_ATTR_APPEND_ONLY)) pos += (size_t)b->record_count;
    if (pos > b->size)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION, "batch shorter than its header");
    fl_arrow_batch_view_t av;
    int rc = fl_arrow_message_parse(b->data + pos, b->size - pos, &av, err);
    if (rc) return rc;
    size_t last = (size_t)cols[ncols - 1];
    if (last >= n) return 0;
    fl_arrow_array_t *arrays = fl_calloc(last + 1, sizeof(*arrays));
    fl_col_stats_t *cs = fl_calloc(ncols, sizeof(*cs));
    size_t kept = 0, decoded = 0;
    fl_arrow_decoder_t d;
    fl_arrow_decoder_init(&d, &av, (size_t)1 << 30);
    for (; decoded <= last; decoded++)
        if ((rc = fl_arrow_decoder_next(&d, types[decoded], &arrays[decoded], err))) goto out;
    for (size_t k = 0; k < ncols; k++) {
        fl_col_stats_t s = {.column = cols[k], .type = types[cols[k]]};
        if (fl_datatype_has_statistics(s.type) &&
            fl_summarise(&arrays[cols[k]], b->record_count, &s))
            cs[kept++] = s;
    }
    if (kept) {
        uint8_t w[4];
        fl_buf_put_u8(out, 1);
        w[0] = (uint8_t)kept;
        w[1] = (uint8_t)(kept >> 8);
        fl_buf_append(out, w, 2);
        for (size_t k = 0; k < kept; k++) {
            w[0] = (uint8_t)cs[k].column;
            w[1] = (uint8_t)(cs[k].column >> 8);
            fl_buf_append(out, w, 2);
        }
        for (size_t k = 0; k < kept; k++) {
            fl_put_le32(w, (uint32_t)cs[k].nulls);
            fl_buf_append(out, w, 4);
        }
        fl_aligned_row(cs, kept, false, out);
        fl_aligned_row(cs, kept, true, out);
    }
out:
    for (size_t i = 0; i < decoded && i <= last; i++) fl_arrow_array_free(&arrays[i]);
    fl_free(arrays);
    fl_free(cs);
    return rc;
}
