/*
 * common_civil.h — proleptic Gregorian calendar arithmetic on plain
 * integers (the calendar java.time uses): days since 1970-01-01 to and from
 * year/month/day, weekdays, month lengths, and "civil seconds" (a local
 * wall-clock reading counted like epoch seconds, with no zone attached).
 * Time zones build on this (common_tz.h); auto-partitioning formats
 * partition names with it. Thread rule: none (pure functions).
 *
 * Ranges: years -1000000 .. 1000000 are exact (every intermediate fits
 * int64); callers bound their inputs before they get here.
 */
#ifndef FL_COMMON_CIVIL_H
#define FL_COMMON_CIVIL_H

#include <stdbool.h>
#include <stdint.h>

#define FL_CIVIL_SECONDS_PER_DAY 86400

typedef struct fl_civil {
    int64_t year;
    int month;  /* 1..12 */
    int day;    /* 1..31 */
    int hour;   /* 0..23 */
    int minute; /* 0..59 */
    int second; /* 0..59 */
} fl_civil_t;

bool fl_civil_is_leap(int64_t year);
/* 28..31 */
int fl_civil_month_days(int64_t year, int month);
/* Days from 1970-01-01 to year-month-day (month 1..12, day 1..31). */
int64_t fl_civil_days_from_ymd(int64_t year, int month, int day);
void fl_civil_ymd_from_days(int64_t days, int64_t *year, int *month, int *day);
/* 0 = Sunday .. 6 = Saturday (POSIX TZ rules count this way). */
int fl_civil_weekday(int64_t days);

/* Civil seconds <-> fields (floor division: negative values are before 1970). */
int64_t fl_civil_to_seconds(const fl_civil_t *c);
void fl_civil_from_seconds(int64_t seconds, fl_civil_t *out);

/* Month and year arithmetic of java.time's LocalDateTime.plusMonths:
 * the day is clamped to the target month's length (Jan 31 + 1 month =
 * Feb 28 or 29); the time of day is kept. */
void fl_civil_add_months(fl_civil_t *c, int64_t months);

/* floor(a / b) for b > 0. */
static inline int64_t fl_civil_floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

#endif
