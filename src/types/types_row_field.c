/*
 * types_row_field.c — field pieces shared by the row codecs
 * (types_row_field.h). Thread rule: none.
 */
#include "types_row_field.h"

#include <math.h>
#include <string.h>

void fl_row_put_le(fl_buf_t *b, uint64_t v, size_t n) {
    uint8_t *p = fl_buf_reserve(b, n);
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
    b->len += n;
}

uint64_t fl_row_get_le(const uint8_t *p, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* A float NaN's 23 payload bits sit at the top of a double NaN's 52, the
 * quiet bit first in both: the same place the hardware puts them. */
uint32_t fl_row_float_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    if (isnan(d)) {
        uint32_t m = (uint32_t)(u >> 29 & 0x7FFFFF);
        if (!m) m = 0x400000; /* payload only in the dropped bits: a quiet NaN */
        return (uint32_t)(u >> 63) << 31 | 0x7F800000u | m;
    }
    float f = (float)d;
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

double fl_row_float_from_bits(uint32_t b) {
    if ((b & 0x7F800000u) == 0x7F800000u && (b & 0x7FFFFF)) {
        uint64_t u = (uint64_t)(b >> 31) << 63 | (uint64_t)0x7FF << 52 | (uint64_t)(b & 0x7FFFFF) << 29;
        double d;
        memcpy(&d, &u, 8);
        return d;
    }
    float f;
    memcpy(&f, &b, 4);
    return f;
}

size_t fl_row_decimal_to_bytes(__int128 v, uint8_t be[FL_DECIMAL_BYTES_MAX]) {
    uint8_t full[16];
    unsigned __int128 u = (unsigned __int128)v;
    for (int i = 15; i >= 0; i--) {
        full[i] = (uint8_t)u;
        u >>= 8;
    }
    size_t start = 0; /* drop sign bytes the next byte's top bit repeats */
    while (start < 15 && ((full[start] == 0x00 && !(full[start + 1] & 0x80)) ||
                          (full[start] == 0xFF && (full[start + 1] & 0x80))))
        start++;
    memcpy(be, full + start, 16 - start);
    return 16 - start;
}

bool fl_row_decimal_from_bytes(const uint8_t *p, size_t n, __int128 *v) {
    if (n == 0 || n > FL_DECIMAL_BYTES_MAX) return false;
    if (n > 1 && ((p[0] == 0x00 && !(p[1] & 0x80)) || (p[0] == 0xFF && (p[1] & 0x80))))
        return false;
    unsigned __int128 u = (p[0] & 0x80) ? ~(unsigned __int128)0 : 0;
    for (size_t i = 0; i < n; i++) u = u << 8 | p[i];
    *v = (__int128)u;
    return true;
}
