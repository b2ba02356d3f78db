/*
 * common_tz_rule.h — a POSIX TZ rule string ("EST5EDT,M3.2.0,M11.1.0",
 * "<+0330>-3:30", "AEST-10AEDT,M10.1.0,M4.1.0/3"), as found in the footer
 * of a TZif file (RFC 8536 §3.3, with its version-3 extensions: hours up
 * to 167 in transition times, negative times). The footer says what a
 * zone does after its last listed transition, which is how dates past
 * 2037 (fat files) or past the last change (slim files) get their offset.
 *
 * Offsets here are seconds east of UTC (the opposite sign of the POSIX
 * text). Thread rule: none (pure functions over a caller's struct).
 */
#ifndef FL_COMMON_TZ_RULE_H
#define FL_COMMON_TZ_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"

#define FL_TZ_RULE_TEXT_MAX 256

typedef struct fl_tz_rule_date {
    char kind;       /* 'J' (1..365, no Feb 29), 'N' (0..365), 'M' (month.week.weekday) */
    int n;           /* J / N: the day; M: the month 1..12 */
    int week;        /* M: 1..5 (5 = the last such weekday of the month) */
    int weekday;     /* M: 0 = Sunday .. 6 */
    int32_t time_s;  /* local time of day of the change, -167h..167h */
} fl_tz_rule_date_t;

typedef struct fl_tz_rule {
    int32_t std_offset_s;
    bool has_dst;
    int32_t dst_offset_s;
    fl_tz_rule_date_t start, end; /* DST starts (local standard time), ends (local DST) */
} fl_tz_rule_t;

/* Parses exactly len bytes of text (no NUL needed). FLUSS_ERR__CORRUPT
 * for anything that is not a whole valid rule. */
int fl_tz_rule_parse(const char *text, size_t len, fl_tz_rule_t *out, fl_error_t *err);
/* The offset in effect at an instant (seconds since the epoch, UTC). */
int32_t fl_tz_rule_offset_at(const fl_tz_rule_t *r, int64_t utc_s);

#endif
