/*
 * common_duration.c — durations in Fluss/Flink syntax (common_duration.h
 * has the unit table). Thread rule: none.
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "common_duration.h"

typedef struct fl_duration_unit {
    const char *label;
    int64_t ms;      /* milliseconds per unit, or 0 for sub-millisecond units */
    int64_t per_ms;  /* units per millisecond for ns and µs */
} fl_duration_unit_t;

static const fl_duration_unit_t fl_duration_units[] = {
    {"ns", 0, 1000000},          {"nano", 0, 1000000},        {"nanos", 0, 1000000},
    {"nanosecond", 0, 1000000},  {"nanoseconds", 0, 1000000}, {"us", 0, 1000},
    {"\xc2\xb5s", 0, 1000},      {"micro", 0, 1000},          {"micros", 0, 1000},
    {"microsecond", 0, 1000},    {"microseconds", 0, 1000},   {"", 1, 0},
    {"ms", 1, 0},                {"milli", 1, 0},             {"millis", 1, 0},
    {"millisecond", 1, 0},       {"milliseconds", 1, 0},      {"s", 1000, 0},
    {"sec", 1000, 0},            {"secs", 1000, 0},           {"second", 1000, 0},
    {"seconds", 1000, 0},        {"m", 60000, 0},             {"min", 60000, 0},
    {"mins", 60000, 0},          {"minute", 60000, 0},        {"minutes", 60000, 0},
    {"h", 3600000, 0},           {"hour", 3600000, 0},        {"hours", 3600000, 0},
    {"d", 86400000, 0},          {"day", 86400000, 0},        {"days", 86400000, 0},
};

/* strncasecmp folds ASCII only; "µs" (UTF-8 C2 B5 73) has no case to fold
 * but its 's' may be 'S'. */
static bool fl_duration_label_is(const char *p, size_t n, const char *label) {
    return strlen(label) == n && strncasecmp(p, label, n) == 0;
}

int fl_duration_parse_ms(const char *text, int64_t *out_ms, fl_error_t *err) {
    const char *p = text;
    while (isspace((unsigned char)*p)) p++;
    if (!isdigit((unsigned char)*p))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "duration '%s' does not start with a number", text);
    uint64_t v = 0;
    for (; isdigit((unsigned char)*p); p++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (v > ((uint64_t)INT64_MAX - d) / 10)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "duration '%s' overflows", text);
        v = v * 10 + d;
    }
    while (isspace((unsigned char)*p)) p++;
    size_t n = strlen(p);
    while (n && isspace((unsigned char)p[n - 1])) n--;
    for (size_t i = 0; i < sizeof(fl_duration_units) / sizeof(fl_duration_units[0]); i++) {
        const fl_duration_unit_t *u = &fl_duration_units[i];
        if (!fl_duration_label_is(p, n, u->label)) continue;
        if (u->ms == 0) {
            *out_ms = (int64_t)(v / (uint64_t)u->per_ms);
            return 0;
        }
        if (v > (uint64_t)(INT64_MAX / u->ms))
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "duration '%s' overflows int64 milliseconds", text);
        *out_ms = (int64_t)v * u->ms;
        return 0;
    }
    return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                      "duration '%s': unit '%.*s' is not one of ns, us, ms, s, min, h, d", text,
                      (int)(n > 32 ? 32 : n), p);
}
