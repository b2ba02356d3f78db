/*
 * common_murmur.c — Fluss bucketing hash (common_murmur.h).
 */
#include "common_murmur.h"

#include <string.h>

#define FL_C1 0xcc9e2d51u
#define FL_C2 0x1b873593u

static uint32_t fl_rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

static uint32_t fl_mix_k1(uint32_t k) {
    k *= FL_C1;
    k = fl_rotl(k, 15);
    return k * FL_C2;
}

static uint32_t fl_mix_h1(uint32_t h, uint32_t k) {
    h ^= k;
    h = fl_rotl(h, 13);
    return h * 5 + 0xe6546b64u;
}

static uint32_t fl_fmix(uint32_t h, uint32_t len) {
    h ^= len;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/* The whole 4-byte little-endian blocks of p[0, aligned) mixed into h. */
static uint32_t fl_murmur_blocks(const uint8_t *p, size_t aligned, uint32_t h) {
    for (size_t i = 0; i < aligned; i += 4) {
        uint32_t k = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 | (uint32_t)p[i + 2] << 16 |
                     (uint32_t)p[i + 3] << 24;
        h = fl_mix_h1(h, fl_mix_k1(k));
    }
    return h;
}

int32_t fl_murmur_hash_bytes(const void *data, size_t len, uint32_t seed) {
    const uint8_t *p = data;
    size_t aligned = len - len % 4;
    uint32_t h = fl_murmur_blocks(p, aligned, seed);
    for (size_t i = aligned; i < len; i++) /* each tail byte, sign-extended */
        h = fl_mix_h1(h, fl_mix_k1((uint32_t)(int32_t)(int8_t)p[i]));
    return (int32_t)fl_fmix(h, (uint32_t)len);
}

uint32_t fl_murmur3_32(const void *data, size_t len, uint32_t seed) {
    const uint8_t *p = data;
    size_t aligned = len - len % 4;
    uint32_t h = fl_murmur_blocks(p, aligned, seed);
    if (len > aligned) { /* the tail, up to 3 bytes, as one little-endian block */
        uint32_t k = 0;
        for (size_t i = len; i > aligned; i--) k = k << 8 | p[i - 1];
        h ^= fl_mix_k1(k);
    }
    return fl_fmix(h, (uint32_t)len);
}

int32_t fl_iceberg_bucket_of(const void *key, size_t len, int32_t n) {
    if (n <= 0) return 0;
    return (int32_t)((fl_murmur3_32(key, len, 0) & 0x7fffffffu) % (uint32_t)n);
}

int32_t fl_murmur_mix_int(int32_t code) {
    uint32_t k = fl_mix_k1((uint32_t)code);
    uint32_t h = fl_rotl(k, 13) * 5 + 0xe6546b64u;
    h = fl_fmix(h, 4);
    int32_t r = (int32_t)h;
    if (r == INT32_MIN) return 0;
    return r < 0 ? -r : r;
}

int32_t fl_bucket_of(const void *key, size_t len, int32_t n) {
    if (n <= 0) return 0;
    return fl_murmur_mix_int(fl_murmur_hash_bytes(key, len, FL_MURMUR_SEED)) % n;
}
