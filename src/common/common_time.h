/*
 * common_time.h — clocks. Wall time (epoch ms) is only for values Fluss
 * stores as timestamps; every timer and deadline uses the monotonic clock.
 */
#ifndef FL_COMMON_TIME_H
#define FL_COMMON_TIME_H

#include <stdint.h>
#include <time.h>

int64_t fl_time_wall_ms(void);
int64_t fl_time_mono_ms(void);
/* Monotonic microseconds (latency measurements). */
int64_t fl_time_mono_us(void);
/* The monotonic time ms from now, as pthread_cond_timedwait takes it (for
 * a condition variable on CLOCK_MONOTONIC). */
struct timespec fl_time_mono_deadline(int64_t ms);

#endif
