/*
 * crash_child.h — runs one recovery check of the storage-fault tools in a
 * child process, so that a crash of the code under test is a counted
 * figure, not the end of the run. The child writes a fixed-size result
 * struct back through a pipe; it is either a fork running fn, or (exec_argv
 * not NULL) a fresh exec of the tool whose stdout is the result (RocksDB's
 * threads do not survive fork).
 */
#ifndef FL_CRASH_CHILD_H
#define FL_CRASH_CHILD_H

#include <stdbool.h>
#include <stddef.h>

typedef void (*crash_child_fn)(void *ctx, void *out);

/* out (len bytes) is zeroed, then filled by the child. Returns false when
 * the child did not finish (signal, non-zero exit, short result); *status
 * is its wait status. */
bool crash_child_run(crash_child_fn fn, void *ctx, char *const *exec_argv, void *out, size_t len,
                     int *status);

/* A new scratch directory (memory-backed /dev/shm when there is one: the
 * states are small and many) named prefix-XXXXXX, into base (cap bytes). */
int crash_scratch_dir(const char *prefix, char *base, size_t cap);
/* Prints a run's JSON figures line and appends it to ledger (if set). */
void crash_report(const char *line, const char *ledger);

#endif
