/*
 * coordinator_partition_time.c — partition values of auto-partitioned
 * tables and the time zones they are computed in
 * (coordinator_partition_time.h). Thread rule: none.
 */
#include "coordinator_partition_time.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common_civil.h"

static const char *const fl_partition_time_unit_names[] = {"YEAR", "QUARTER", "MONTH", "DAY",
                                                           "HOUR"};

bool fl_partition_time_unit_parse(const char *text, fl_partition_time_unit_t *out) {
    for (int i = 0; i <= FL_PARTITION_TIME_HOUR; i++)
        if (strcasecmp(text, fl_partition_time_unit_names[i]) == 0) {
            *out = (fl_partition_time_unit_t)i;
            return true;
        }
    return false;
}

const char *fl_partition_time_unit_name(fl_partition_time_unit_t unit) {
    return fl_partition_time_unit_names[unit];
}

/* The local reading of an instant. */
static void fl_partition_local(const fl_tz_t *tz, int64_t utc_s, fl_civil_t *out,
                               int32_t *offset_s) {
    *offset_s = fl_tz_offset_at(tz, utc_s);
    fl_civil_from_seconds(utc_s + *offset_s, out);
}

bool fl_partition_time_value(const fl_tz_t *tz, int64_t now_ms, int64_t offset,
                             fl_partition_time_unit_t unit, char out[FL_PARTITION_TIME_VALUE_MAX]) {
    /* beyond ±10^8 units every format is out of range anyway; the bound
     * keeps the arithmetic below far from overflow */
    const int64_t offset_max = 100000000;
    if (offset > offset_max || offset < -offset_max) return false;
    int64_t now_s = fl_civil_floor_div(now_ms, 1000);
    fl_civil_t c;
    int32_t off;
    if (unit == FL_PARTITION_TIME_HOUR) {
        fl_partition_local(tz, now_s + offset * 3600, &c, &off);
    } else {
        fl_partition_local(tz, now_s, &c, &off);
        if (unit == FL_PARTITION_TIME_DAY) {
            int64_t days = fl_civil_days_from_ymd(c.year, c.month, c.day) + offset;
            fl_civil_ymd_from_days(days, &c.year, &c.month, &c.day);
        } else {
            int64_t months = unit == FL_PARTITION_TIME_MONTH     ? offset
                             : unit == FL_PARTITION_TIME_QUARTER ? offset * 3
                                                                 : offset * 12;
            fl_civil_add_months(&c, months);
        }
        /* place the moved reading in the zone (a DST gap moves it forward) */
        int64_t utc = fl_tz_local_to_utc(tz, fl_civil_to_seconds(&c), off, &off);
        fl_civil_from_seconds(utc + off, &c);
    }
    if (c.year < 1 || c.year > 9999) return false;
    /* every field is in range here, so at most 10 characters; the scratch
     * buffer is only for the compiler, which cannot see those ranges */
    int y = (int)c.year, q = (c.month - 1) / 3 + 1;
    char tmp[64];
    int n = 0;
    switch (unit) {
    case FL_PARTITION_TIME_YEAR: n = snprintf(tmp, sizeof(tmp), "%04d", y); break;
    case FL_PARTITION_TIME_QUARTER: n = snprintf(tmp, sizeof(tmp), "%04d%d", y, q); break;
    case FL_PARTITION_TIME_MONTH: n = snprintf(tmp, sizeof(tmp), "%04d%02d", y, c.month); break;
    case FL_PARTITION_TIME_DAY:
        n = snprintf(tmp, sizeof(tmp), "%04d%02d%02d", y, c.month, c.day);
        break;
    case FL_PARTITION_TIME_HOUR:
        n = snprintf(tmp, sizeof(tmp), "%04d%02d%02d%02d", y, c.month, c.day, c.hour);
        break;
    }
    assert(n > 0 && n < FL_PARTITION_TIME_VALUE_MAX);
    memcpy(out, tmp, (size_t)n + 1);
    return true;
}

/* ---- zone ids as java.util.TimeZone reads them ---- */

/* The JDK's legacy ids (its tzdb "backward" aliases), which TimeZone
 * accepts and the zoneinfo directory does not have. */
static const struct {
    const char *id, *zone;
} fl_java_legacy_ids[] = {
    {"ACT", "Australia/Darwin"},     {"AET", "Australia/Sydney"},
    {"AGT", "America/Argentina/Buenos_Aires"}, {"ART", "Africa/Cairo"},
    {"AST", "America/Anchorage"},    {"BET", "America/Sao_Paulo"},
    {"BST", "Asia/Dhaka"},           {"CAT", "Africa/Harare"},
    {"CNT", "America/St_Johns"},     {"CST", "America/Chicago"},
    {"CTT", "Asia/Shanghai"},        {"EAT", "Africa/Addis_Ababa"},
    {"ECT", "Europe/Paris"},         {"IET", "America/Indiana/Indianapolis"},
    {"IST", "Asia/Kolkata"},         {"JST", "Asia/Tokyo"},
    {"MIT", "Pacific/Apia"},         {"NET", "Asia/Yerevan"},
    {"NST", "Pacific/Auckland"},     {"PLT", "Asia/Karachi"},
    {"PNT", "America/Phoenix"},      {"PRT", "America/Puerto_Rico"},
    {"PST", "America/Los_Angeles"},  {"SST", "Pacific/Guadalcanal"},
    {"VST", "Asia/Ho_Chi_Minh"},
};

/* Fixed in Java (its "old mapping" is off by default). */
static const struct {
    const char *id;
    int32_t offset_s;
} fl_java_fixed_ids[] = {{"EST", -5 * 3600}, {"MST", -7 * 3600}, {"HST", -10 * 3600}};

/* Files of the zoneinfo directory that are no Java zone. */
static bool fl_java_not_a_zone(const char *id) {
    return strncmp(id, "posix/", 6) == 0 || strncmp(id, "right/", 6) == 0 ||
           strcmp(id, "posixrules") == 0 || strcmp(id, "localtime") == 0 ||
           strcmp(id, "Factory") == 0;
}

/* TimeZone's custom ids: "GMT", a sign, then digits read as h, hh, hmm or
 * hhmm (leading zeros allowed), or [h]h:mm (hours <= 23, minutes <= 59).
 * false if id is not one. */
static bool fl_java_custom_offset(const char *id, int32_t *offset_s) {
    size_t n = strlen(id);
    if (n < 5 || strncmp(id, "GMT", 3) != 0 || (id[3] != '+' && id[3] != '-')) return false;
    int sign = id[3] == '-' ? -1 : 1;
    int hours = 0, num = 0, len = 0, colons = 0;
    for (size_t i = 4; i < n; i++) {
        char c = id[i];
        if (c == ':') {
            if (colons++ > 0 || len > 2) return false;
            hours = num;
            num = len = 0;
            continue;
        }
        if (c < '0' || c > '9') return false;
        num = num * 10 + (c - '0');
        if (num > 9999) return false; /* hours > 23 whichever way it is read */
        len++;
    }
    if (colons == 0) {
        if (len <= 2) {
            hours = num;
            num = 0;
        } else {
            hours = num / 100;
            num %= 100;
        }
    } else if (len != 2) {
        return false;
    }
    if (hours > 23 || num > 59) return false;
    *offset_s = sign * (hours * 3600 + num * 60);
    return true;
}

fl_tz_t *fl_partition_time_zone(const char *zoneinfo_dir, const char *id, bool *known) {
    fl_tz_t *tz = NULL;
    fl_error_t err;
    int32_t off;
    *known = true;
    for (size_t i = 0; i < sizeof(fl_java_fixed_ids) / sizeof(fl_java_fixed_ids[0]); i++)
        if (strcmp(id, fl_java_fixed_ids[i].id) == 0)
            return fl_tz_fixed(fl_java_fixed_ids[i].offset_s, id);
    const char *file = id;
    for (size_t i = 0; i < sizeof(fl_java_legacy_ids) / sizeof(fl_java_legacy_ids[0]); i++)
        if (strcmp(id, fl_java_legacy_ids[i].id) == 0) file = fl_java_legacy_ids[i].zone;
    if (!fl_java_not_a_zone(file) && fl_tz_load(zoneinfo_dir, file, &tz, &err) == 0) return tz;
    if (fl_java_custom_offset(id, &off)) return fl_tz_fixed(off, id);
    *known = false;
    return fl_tz_fixed(0, "GMT");
}
