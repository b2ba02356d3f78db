/*
 * common_time.h — clocks. Wall time (epoch ms) is only for values Fluss
 * stores as timestamps; every timer and deadline uses the monotonic clock.
 */
#ifndef FL_COMMON_TIME_H
#define FL_COMMON_TIME_H

#include <stdint.h>

int64_t fl_time_wall_ms(void);
int64_t fl_time_mono_ms(void);
/* Monotonic microseconds (latency measurements). */
int64_t fl_time_mono_us(void);

#endif
