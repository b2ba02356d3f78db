/*
 * common_uuid.c — random UUIDs (common_uuid.h). The bytes come from
 * getrandom(2); should it fail (it does not block once the pool is
 * initialised), the clock and a counter stand in: the ids need to be
 * unique, not secret.
 */
#include "common_uuid.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static void fl_uuid_fallback_bytes(uint8_t b[16]) {
    static atomic_uint_fast64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t a = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    uint64_t c = atomic_fetch_add(&counter, 1) ^ (uint64_t)(uintptr_t)b;
    memcpy(b, &a, 8);
    memcpy(b + 8, &c, 8);
}

void fl_uuid_random_bytes(void *out, size_t n) {
    uint8_t *o = out;
    while (n > 0) {
        uint8_t b[16];
        if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) fl_uuid_fallback_bytes(b);
        size_t k = n < sizeof(b) ? n : sizeof(b);
        memcpy(o, b, k);
        o += k;
        n -= k;
    }
}

void fl_uuid_random(char out[FL_UUID_TEXT_LEN + 1]) {
    uint8_t b[16];
    fl_uuid_random_bytes(b, sizeof(b));
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80); /* IETF variant */
    snprintf(out, FL_UUID_TEXT_LEN + 1,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
             b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
             b[15]);
}

bool fl_uuid_text_ok(const char *s, size_t len) {
    if (!s || len != FL_UUID_TEXT_LEN) return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (c != '-') return false;
        } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
            return false;
        }
    }
    return true;
}
