/*
 * lake_rle.c — the RLE/bit-packing hybrid (lake_rle.h). The encoder sees
 * the whole page's values at once, so it looks ahead instead of keeping a
 * state machine: at each group boundary it asks how long the run starting
 * there is. The decoder checks every run header and byte count against the
 * bytes left.
 */
#include "lake_rle.h"

#include <assert.h>

#include "lake_thrift.h"

/* Groups per bit-packed run: the common writers' one-byte header limit. */
#define RLE_GROUPS_MAX 63

int fl_rle_bit_width(uint32_t max_value) {
    int w = 0;
    while (w < 32 && (max_value >> w) != 0) w++;
    return w;
}

static size_t run_at(const uint32_t *v, size_t n, size_t i) {
    size_t j = i + 1;
    while (j < n && v[j] == v[i]) j++;
    return j - i;
}

static void put_rle(fl_buf_t *out, uint32_t value, size_t count, int width) {
    fl_buf_put_uvarint(out, (uint64_t)count << 1);
    for (int b = 0; b < (width + 7) / 8; b++) fl_buf_put_u8(out, (uint8_t)(value >> (8 * b)));
}

/* groups * 8 values from v[i..), zeros past n. */
static void put_packed(fl_buf_t *out, const uint32_t *v, size_t n, size_t i, size_t groups,
                       int width) {
    fl_buf_put_uvarint(out, (uint64_t)groups << 1 | 1);
    /* 8 values of any width fill whole bytes: groups * width of them */
    size_t bytes = groups * (size_t)width, at = 0;
    uint8_t *o = fl_buf_reserve(out, bytes ? bytes : 1);
    uint64_t acc = 0;
    int bits = 0;
    for (size_t k = 0; k < groups * 8; k++) {
        uint64_t x = i + k < n ? v[i + k] : 0;
        assert(width == 32 || x >> width == 0);
        acc |= x << bits;
        bits += width;
        while (bits >= 8) {
            o[at++] = (uint8_t)acc;
            acc >>= 8;
            bits -= 8;
        }
    }
    assert(bits == 0 && at == bytes);
    out->len += bytes;
}

void fl_rle_encode(fl_buf_t *out, const uint32_t *v, size_t n, int width) {
    assert(width >= 0 && width <= FL_RLE_WIDTH_MAX);
    size_t i = 0;
    while (i < n) {
        size_t r = run_at(v, n, i);
        if (r >= 8) {
            put_rle(out, v[i], r, width);
            i += r;
            continue;
        }
        size_t groups = 0;
        size_t j = i;
        while (j < n && groups < RLE_GROUPS_MAX) {
            if (j > i && run_at(v, n, j) >= 8) break;
            j += 8;
            groups++;
        }
        put_packed(out, v, n, i, groups, width);
        i = j < n ? j : n;
    }
}

int fl_rle_decode(const uint8_t *p, size_t len, int width, uint32_t *out, size_t n, size_t *used,
                  fl_error_t *err) {
    if (width < 0 || width > FL_RLE_WIDTH_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "rle: bit width %d", width);
    size_t pos = 0, got = 0;
    size_t value_bytes = (size_t)(width + 7) / 8;
    while (got < n) {
        uint64_t h = 0;
        int shift = 0;
        for (;;) {
            if (pos >= len)
                return fl_err_set(err, FLUSS_ERR__CORRUPT, "rle: %zu of %zu values, then the end",
                                  got, n);
            uint8_t b = p[pos++];
            if (shift > 56) return fl_err_set(err, FLUSS_ERR__CORRUPT, "rle: run header too long");
            h |= (uint64_t)(b & 0x7f) << shift;
            shift += 7;
            if (!(b & 0x80)) break;
        }
        if (!(h & 1)) {
            uint64_t count = h >> 1;
            if (count == 0) return fl_err_set(err, FLUSS_ERR__CORRUPT, "rle: empty run");
            if (value_bytes > len - pos)
                return fl_err_set(err, FLUSS_ERR__CORRUPT, "rle: run value truncated");
            uint32_t x = 0;
            for (size_t b = 0; b < value_bytes; b++) x |= (uint32_t)p[pos + b] << (8 * b);
            pos += value_bytes;
            if (width < 32 && x >> width)
                return fl_err_set(err, FLUSS_ERR__CORRUPT, "rle: value %u over width %d", x, width);
            size_t take = count < n - got ? (size_t)count : n - got;
            for (size_t k = 0; k < take; k++) out[got + k] = x;
            got += take;
            continue;
        }
        uint64_t groups = h >> 1;
        if (groups == 0) return fl_err_set(err, FLUSS_ERR__CORRUPT, "rle: empty bit-packed run");
        if (groups > ((uint64_t)1 << 32)) /* keeps groups * 8 * width in range */
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "rle: %llu groups",
                              (unsigned long long)groups);
        size_t values = (size_t)groups * 8;
        size_t run_bytes = (size_t)groups * (size_t)width;
        size_t take = values < n - got ? values : n - got;
        /* a writer may end the last run's bytes at the last real value */
        size_t need = (take * (size_t)width + 7) / 8;
        if (need > len - pos)
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "rle: bit-packed run truncated");
        uint64_t acc = 0;
        int bits = 0;
        size_t q = pos;
        uint64_t mask = width == 32 ? 0xffffffffu : ((uint64_t)1 << width) - 1;
        for (size_t k = 0; k < take; k++) {
            while (bits < width) {
                acc |= (uint64_t)p[q++] << bits;
                bits += 8;
            }
            out[got + k] = (uint32_t)(acc & mask);
            acc >>= width;
            bits -= width;
        }
        got += take;
        pos += run_bytes < len - pos ? run_bytes : len - pos;
    }
    if (used) *used = pos;
    return 0;
}
