/*
 * lake_avro.c — Avro's binary encoding (lake_avro.h has the byte table).
 * The reader checks every length against the bytes left before it looks
 * at them and names the byte position in each error; varints go through
 * common_buf's one ULEB128 reader.
 */
#include "lake_avro.h"

#include <string.h>

/* ---- writing ---- */

void fl_avro_put_boolean(fl_buf_t *b, bool v) { fl_buf_put_u8(b, v ? 1 : 0); }

void fl_avro_put_long(fl_buf_t *b, int64_t v) { fl_buf_put_uvarint(b, fl_zigzag64(v)); }

void fl_avro_put_int(fl_buf_t *b, int32_t v) { fl_avro_put_long(b, v); }

static void put_le(fl_buf_t *b, uint64_t v, size_t n) {
    uint8_t p[8];
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
    fl_buf_append(b, p, n);
}

void fl_avro_put_float(fl_buf_t *b, float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    put_le(b, u, 4);
}

void fl_avro_put_double(fl_buf_t *b, double v) {
    uint64_t u;
    memcpy(&u, &v, 8);
    put_le(b, u, 8);
}

void fl_avro_put_bytes(fl_buf_t *b, const void *p, size_t n) {
    fl_avro_put_long(b, (int64_t)n);
    fl_buf_append(b, p, n);
}

void fl_avro_put_string(fl_buf_t *b, const char *s) { fl_avro_put_bytes(b, s, strlen(s)); }

void fl_avro_put_fixed(fl_buf_t *b, const void *p, size_t n) { fl_buf_append(b, p, n); }

void fl_avro_put_index(fl_buf_t *b, uint32_t index) { fl_avro_put_long(b, index); }

void fl_avro_put_block(fl_buf_t *b, int64_t count) { fl_avro_put_long(b, count); }

void fl_avro_put_block_sized(fl_buf_t *b, int64_t count, size_t bytes) {
    fl_avro_put_long(b, -count);
    fl_avro_put_long(b, (int64_t)bytes);
}

/* ---- reading ---- */

void fl_avro_reader_init(fl_avro_reader_t *r, const void *p, size_t len) {
    r->p = p;
    r->len = len;
    r->pos = 0;
}

static int truncated(const fl_avro_reader_t *r, size_t need, fl_error_t *err) {
    return fl_err_set(err, FLUSS_ERR__CORRUPT,
                      "avro: truncated: %zu bytes needed at byte %zu, %zu left", need, r->pos,
                      r->len - r->pos);
}

/* A varint of at most max_bytes bytes (10 for a long, 5 for an int). */
static int read_varint(fl_avro_reader_t *r, size_t max_bytes, uint64_t *v, fl_error_t *err) {
    size_t left = r->len - r->pos;
    size_t used;
    fl_uvarint_outcome_t o =
        fl_uvarint_get(r->p + r->pos, left < max_bytes ? left : max_bytes, v, &used);
    if (o == FL_UVARINT_OK) {
        r->pos += used;
        return 0;
    }
    if (o == FL_UVARINT_TRUNCATED && left < max_bytes) return truncated(r, left + 1, err);
    return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro: varint over %zu bytes or 64 bits at byte %zu",
                      max_bytes, r->pos);
}

int fl_avro_read_long(fl_avro_reader_t *r, int64_t *v, fl_error_t *err) {
    uint64_t u;
    if (read_varint(r, 10, &u, err)) return FLUSS_ERR__CORRUPT;
    *v = fl_unzigzag64(u);
    return 0;
}

int fl_avro_read_int(fl_avro_reader_t *r, int32_t *v, fl_error_t *err) {
    uint64_t u;
    size_t at = r->pos;
    if (read_varint(r, 5, &u, err)) return FLUSS_ERR__CORRUPT;
    if (u > UINT32_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro: int over 32 bits at byte %zu", at);
    *v = (int32_t)fl_unzigzag64(u);
    return 0;
}

int fl_avro_read_boolean(fl_avro_reader_t *r, bool *v, fl_error_t *err) {
    if (r->pos >= r->len) return truncated(r, 1, err);
    uint8_t b = r->p[r->pos];
    if (b > 1)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro: boolean byte 0x%02x at byte %zu", b,
                          r->pos);
    r->pos++;
    *v = b == 1;
    return 0;
}

static int read_le(fl_avro_reader_t *r, size_t n, uint64_t *v, fl_error_t *err) {
    if (r->len - r->pos < n) return truncated(r, n, err);
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) x |= (uint64_t)r->p[r->pos + i] << (8 * i);
    r->pos += n;
    *v = x;
    return 0;
}

int fl_avro_read_float(fl_avro_reader_t *r, float *v, fl_error_t *err) {
    uint64_t x = 0;
    if (read_le(r, 4, &x, err)) return FLUSS_ERR__CORRUPT;
    uint32_t u = (uint32_t)x;
    memcpy(v, &u, 4);
    return 0;
}

int fl_avro_read_double(fl_avro_reader_t *r, double *v, fl_error_t *err) {
    uint64_t x = 0;
    if (read_le(r, 8, &x, err)) return FLUSS_ERR__CORRUPT;
    memcpy(v, &x, 8);
    return 0;
}

int fl_avro_read_bytes(fl_avro_reader_t *r, const uint8_t **p, size_t *n, fl_error_t *err) {
    size_t at = r->pos;
    int64_t len;
    if (fl_avro_read_long(r, &len, err)) return FLUSS_ERR__CORRUPT;
    if (len < 0)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro: negative length %lld at byte %zu",
                          (long long)len, at);
    if ((uint64_t)len > r->len - r->pos)
        return fl_err_set(err, FLUSS_ERR__CORRUPT,
                          "avro: length %lld at byte %zu past the end (%zu bytes left)",
                          (long long)len, at, r->len - r->pos);
    *p = r->p + r->pos;
    *n = (size_t)len;
    r->pos += (size_t)len;
    return 0;
}

int fl_avro_read_fixed(fl_avro_reader_t *r, size_t size, const uint8_t **p, fl_error_t *err) {
    if (r->len - r->pos < size) return truncated(r, size, err);
    *p = r->p + r->pos;
    r->pos += size;
    return 0;
}

static int index_range(int64_t v, size_t n, size_t at, const char *what, uint32_t *index,
                       fl_error_t *err) {
    if (v < 0 || (uint64_t)v >= n)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro: %s index %lld at byte %zu not below %zu",
                          what, (long long)v, at, n);
    *index = (uint32_t)v;
    return 0;
}

int fl_avro_read_enum(fl_avro_reader_t *r, size_t n_symbols, uint32_t *index, fl_error_t *err) {
    size_t at = r->pos;
    int32_t v;
    if (fl_avro_read_int(r, &v, err)) return FLUSS_ERR__CORRUPT;
    return index_range(v, n_symbols, at, "enum", index, err);
}

int fl_avro_read_branch(fl_avro_reader_t *r, size_t n_branches, uint32_t *index,
                        fl_error_t *err) {
    size_t at = r->pos;
    int64_t v;
    if (fl_avro_read_long(r, &v, err)) return FLUSS_ERR__CORRUPT;
    return index_range(v, n_branches, at, "union branch", index, err);
}

int fl_avro_read_block(fl_avro_reader_t *r, int64_t *count, int64_t *bytes, fl_error_t *err) {
    size_t at = r->pos;
    int64_t n;
    if (fl_avro_read_long(r, &n, err)) return FLUSS_ERR__CORRUPT;
    *bytes = -1;
    if (n >= 0) {
        *count = n;
        return 0;
    }
    if (n == INT64_MIN)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro: block count %lld at byte %zu",
                          (long long)n, at);
    size_t size_at = r->pos;
    int64_t size;
    if (fl_avro_read_long(r, &size, err)) return FLUSS_ERR__CORRUPT;
    if (size < 0 || (uint64_t)size > r->len - r->pos)
        return fl_err_set(err, FLUSS_ERR__CORRUPT,
                          "avro: block byte size %lld at byte %zu: %zu bytes left",
                          (long long)size, size_at, r->len - r->pos);
    *count = -n;
    *bytes = size;
    return 0;
}
