/*
 * common_duration.h — the one parser of duration values, for every config
 * key and table property that holds one (server.yaml keys like
 * log.segment.roll-interval... and table.log.ttl): the syntax of Fluss's
 * and Flink's TimeUtils.parseDuration, "<digits> [unit]". Thread rule:
 * none (pure function).
 *
 * | unit labels (case-insensitive, spaces around the unit allowed)        | one unit  |
 * |-----------------------------------------------------------------------|-----------|
 * | ns, nano, nanos, nanosecond, nanoseconds                              | 1 ns      |
 * | us, µs, micro, micros, microsecond, microseconds                      | 1 µs      |
 * | (none), ms, milli, millis, millisecond, milliseconds                  | 1 ms      |
 * | s, sec, secs, second, seconds                                         | 1 s       |
 * | m, min, mins, minute, minutes                                         | 1 min     |
 * | h, hour, hours                                                        | 1 h       |
 * | d, day, days                                                          | 1 d       |
 *
 * The number is decimal digits only: no sign, no fraction, no exponent
 * (Flink rejects "-1 s" and "1.5 h" too). Sub-millisecond units truncate
 * toward zero when converted to milliseconds, like Duration.toMillis.
 */
#ifndef FL_COMMON_DURATION_H
#define FL_COMMON_DURATION_H

#include <stdint.h>

#include "common_error.h"

/* Parses text into milliseconds (>= 0). FLUSS_ERR__INVALID_ARG, *out_ms
 * untouched, for an empty text, a missing or signed or fractional number,
 * an unknown unit, trailing garbage, or a value that overflows int64
 * milliseconds. */
int fl_duration_parse_ms(const char *text, int64_t *out_ms, fl_error_t *err);

#endif
