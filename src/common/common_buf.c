/*
 * common_buf.c — growable byte buffer (see common_buf.h).
 */
#include "common_buf.h"

#include <string.h>

#include "common_alloc.h"

void fl_buf_init(fl_buf_t *b) {
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void fl_buf_reset(fl_buf_t *b) { b->len = 0; }

void fl_buf_free(fl_buf_t *b) {
    fl_free(b->data);
    fl_buf_init(b);
}

static size_t fl_buf_grow_to(const fl_buf_t *b, size_t need) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) cap *= 2;
    return cap;
}

uint8_t *fl_buf_try_reserve(fl_buf_t *b, size_t n) {
    if (n > SIZE_MAX / 4 - b->len) return NULL;
    if (b->len + n > b->cap) {
        size_t cap = fl_buf_grow_to(b, b->len + n);
        uint8_t *d = fl_try_realloc(b->data, cap);
        if (!d) return NULL;
        b->data = d;
        b->cap = cap;
    }
    return b->data + b->len;
}

uint8_t *fl_buf_reserve(fl_buf_t *b, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = fl_buf_grow_to(b, b->len + n);
        b->data = fl_realloc(b->data, cap);
        b->cap = cap;
    }
    return b->data + b->len;
}

void fl_buf_append(fl_buf_t *b, const void *p, size_t n) {
    if (n == 0) return;
    memcpy(fl_buf_reserve(b, n), p, n);
    b->len += n;
}

void fl_buf_put_u8(fl_buf_t *b, uint8_t v) { fl_buf_append(b, &v, 1); }

void fl_buf_put_uvarint(fl_buf_t *b, uint64_t v) {
    uint8_t tmp[10];
    size_t n = 0;
    while (v >= 0x80) {
        tmp[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    tmp[n++] = (uint8_t)v;
    fl_buf_append(b, tmp, n);
}

fl_uvarint_outcome_t fl_uvarint_get(const uint8_t *p, size_t len, uint64_t *v, size_t *used) {
    uint64_t x = 0;
    for (size_t i = 0; i < 10; i++) {
        if (i >= len) return FL_UVARINT_TRUNCATED;
        uint8_t b = p[i];
        if (i == 9 && b > 1) return FL_UVARINT_OVERLONG;
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            *used = i + 1;
            return FL_UVARINT_OK;
        }
    }
    return FL_UVARINT_OVERLONG; /* unreachable: the tenth byte is 0 or 1 */
}

void fl_buf_put_be16(fl_buf_t *b, uint16_t v) {
    uint8_t p[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    fl_buf_append(b, p, 2);
}

void fl_buf_put_be32(fl_buf_t *b, uint32_t v) {
    uint8_t p[4];
    fl_put_be32(p, v);
    fl_buf_append(b, p, 4);
}

void fl_buf_consume(fl_buf_t *b, size_t n) {
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}
