/*
 * common_tz.h — time zones without the C library's process-wide TZ state
 * (localtime_r reads one global zone; a server holds tables in many):
 * a zone is a value made from a TZif file (RFC 8536, the files under
 * /usr/share/zoneinfo) or from a fixed offset, and answers "which UTC
 * offset at this instant" and "which instant is this local wall-clock
 * time", the latter with java.time's rules for DST gaps and overlaps.
 *
 * TZif layout (all integers big-endian), version 1 block then, for
 * versions 2..4, the same again with 64-bit times and a footer:
 *
 * | offset | size | field                                            |
 * |--------|------|--------------------------------------------------|
 * | 0      | 4    | magic "TZif"                                     |
 * | 4      | 1    | version: 0, '2', '3' or '4'                      |
 * | 5      | 15   | unused                                           |
 * | 20     | 24   | isutcnt isstdcnt leapcnt timecnt typecnt charcnt |
 * | 44     | ...  | timecnt times (4 bytes; 8 in the second block)   |
 * |        |      | timecnt type indexes (1 byte, < typecnt)         |
 * |        |      | typecnt x {utoff s32, isdst u8, desigidx u8}     |
 * |        |      | charcnt abbreviation bytes                       |
 * |        |      | leapcnt x {time (4 or 8), correction s32}        |
 * |        |      | isstdcnt bytes, isutcnt bytes                    |
 * | end    |      | (v2+) '\n' POSIX TZ rule (common_tz_rule.h) '\n' |
 *
 * Before the first transition the zone has time type 0's offset; after
 * the last one, the footer rule's (or the last transition's without one).
 * Leap-second records are skipped: times are POSIX seconds.
 *
 * Thread rule: a zone is immutable once made; share it freely.
 */
#ifndef FL_COMMON_TZ_H
#define FL_COMMON_TZ_H

#include <stddef.h>
#include <stdint.h>

#include "common_error.h"

#define FL_TZ_FILE_BYTES_MAX (1u << 20)
#define FL_TZ_TRANSITIONS_MAX 100000
#define FL_TZ_OFFSET_MAX_S (26 * 3600) /* RFC 8536: -89999..93599 */
#define FL_TZ_NAME_MAX 128

typedef struct fl_tz fl_tz_t;

/* Decodes TZif bytes. FLUSS_ERR__CORRUPT for anything not a whole valid
 * file (truncated, counts that disagree, unsorted transitions, type
 * indexes out of range, a bad footer). name is kept for messages. */
int fl_tz_parse_tzif(const uint8_t *data, size_t len, const char *name, fl_tz_t **out,
                     fl_error_t *err);
/* A zone with one offset forever. */
fl_tz_t *fl_tz_fixed(int32_t offset_s, const char *name);
/* Reads dir/id as TZif. The id must look like a zone id (letters, digits,
 * '/', '_', '+', '-'; no empty, "." or ".." component): it never leaves
 * dir. A missing file is FLUSS_ERR__INVALID_ARG ("unknown time zone"). */
int fl_tz_load(const char *dir, const char *id, fl_tz_t **out, fl_error_t *err);
void fl_tz_free(fl_tz_t *tz);
const char *fl_tz_name(const fl_tz_t *tz);

/* Seconds east of UTC in effect at utc_s (epoch seconds). */
int32_t fl_tz_offset_at(const fl_tz_t *tz, int64_t utc_s);

/* The instant of a local wall-clock reading (civil seconds, common_civil.h),
 * as java.time's ZonedDateTime.ofLocal: a reading that exists once maps to
 * that instant; one that exists twice (clocks set back) to the instant
 * with preferred_offset_s if that is one of the two, else the earlier; one
 * that does not exist (clocks set forward) moves later by the length of
 * the gap. *offset_s gets the offset of the result. */
int64_t fl_tz_local_to_utc(const fl_tz_t *tz, int64_t local_s, int32_t preferred_offset_s,
                           int32_t *offset_s);

#endif
