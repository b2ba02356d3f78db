/*
 * common_log.h — leveled logging to stderr, one line per call. The level is
 * process-wide (set once in main before threads start).
 */
#ifndef FL_COMMON_LOG_H
#define FL_COMMON_LOG_H

enum fl_log_level { FL_LOG_DEBUG = 0, FL_LOG_INFO, FL_LOG_WARN, FL_LOG_ERROR };

void fl_log_set_level(enum fl_log_level level);
void fl_log(enum fl_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define FL_DEBUG(...) fl_log(FL_LOG_DEBUG, __VA_ARGS__)
#define FL_INFO(...) fl_log(FL_LOG_INFO, __VA_ARGS__)
#define FL_WARN(...) fl_log(FL_LOG_WARN, __VA_ARGS__)
#define FL_ERROR(...) fl_log(FL_LOG_ERROR, __VA_ARGS__)

#endif
