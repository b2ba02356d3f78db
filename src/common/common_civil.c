/*
 * common_civil.c — Gregorian calendar arithmetic (common_civil.h). The
 * day-number conversions count in 400-year eras of 146097 days, so they are
 * exact for every year in range without tables. Thread rule: none.
 */
#include "common_civil.h"

#include <assert.h>

bool fl_civil_is_leap(int64_t year) {
    return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

int fl_civil_month_days(int64_t year, int month) {
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    assert(month >= 1 && month <= 12);
    return month == 2 && fl_civil_is_leap(year) ? 29 : days[month - 1];
}

/* Years counted from March, so the leap day is the last day of a year. */
int64_t fl_civil_days_from_ymd(int64_t year, int month, int day) {
    int64_t y = month <= 2 ? year - 1 : year;
    int64_t era = fl_civil_floor_div(y, 400);
    int64_t yoe = y - era * 400;                                   /* 0..399 */
    int64_t mp = month > 2 ? month - 3 : month + 9;                /* 0..11, March first */
    int64_t doy = (153 * mp + 2) / 5 + day - 1;                    /* 0..365 */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;           /* 0..146096 */
    return era * 146097 + doe - 719468;                            /* 719468: 0000-03-01 → 1970-01-01 */
}

void fl_civil_ymd_from_days(int64_t days, int64_t *year, int *month, int *day) {
    int64_t z = days + 719468;
    int64_t era = fl_civil_floor_div(z, 146097);
    int64_t doe = z - era * 146097;                                      /* 0..146096 */
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* 0..399 */
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* 0..365 */
    int64_t mp = (5 * doy + 2) / 153;                                    /* 0..11 */
    int d = (int)(doy - (153 * mp + 2) / 5 + 1);
    int m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *year = yoe + era * 400 + (m <= 2 ? 1 : 0);
    *month = m;
    *day = d;
}

int fl_civil_weekday(int64_t days) {
    /* 1970-01-01 was a Thursday (4) */
    int64_t w = (days + 4) % 7;
    return (int)(w < 0 ? w + 7 : w);
}

int64_t fl_civil_to_seconds(const fl_civil_t *c) {
    return fl_civil_days_from_ymd(c->year, c->month, c->day) * FL_CIVIL_SECONDS_PER_DAY +
           c->hour * 3600 + c->minute * 60 + c->second;
}

void fl_civil_from_seconds(int64_t seconds, fl_civil_t *out) {
    int64_t days = fl_civil_floor_div(seconds, FL_CIVIL_SECONDS_PER_DAY);
    int64_t rest = seconds - days * FL_CIVIL_SECONDS_PER_DAY; /* 0..86399 */
    fl_civil_ymd_from_days(days, &out->year, &out->month, &out->day);
    out->hour = (int)(rest / 3600);
    out->minute = (int)(rest / 60 % 60);
    out->second = (int)(rest % 60);
}

void fl_civil_add_months(fl_civil_t *c, int64_t months) {
    int64_t total = c->year * 12 + (c->month - 1) + months;
    c->year = fl_civil_floor_div(total, 12);
    c->month = (int)(total - c->year * 12) + 1;
    int last = fl_civil_month_days(c->year, c->month);
    if (c->day > last) c->day = last;
}
