/*
 * common_workq.h — a fixed pool of worker threads taking jobs from one FIFO
 * queue: the place for everything slow that must not run on a network loop
 * (fsync, segment finalisation, bucket recovery, metadata writes).
 *
 * Ordering: jobs start in submission order; with more than one thread they
 * may run concurrently, so a caller that needs two jobs ordered submits the
 * second from the first or serialises them itself (a replica does, with its
 * own lock).
 *
 * Thread rule: every function may be called from any thread, except
 * fl_workq_destroy, which must not be called from a worker of the pool.
 */
#ifndef FL_COMMON_WORKQ_H
#define FL_COMMON_WORKQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FL_WORKQ_THREADS_MAX 64

typedef struct fl_workq fl_workq_t;
typedef void (*fl_workq_fn)(void *arg);

/* Starts threads workers named "<name>-<i>". */
fl_workq_t *fl_workq_new(size_t threads, const char *name);
/* Queues fn(arg). Jobs submitted after destroy began run inline. */
void fl_workq_submit(fl_workq_t *q, fl_workq_fn fn, void *arg);
/* Runs every queued job, then stops and joins the threads. */
void fl_workq_destroy(fl_workq_t *q);
size_t fl_workq_threads(const fl_workq_t *q);

/* Fork-join for one request's parallel part: fl_workq_fork queues
 * fn(arg); fl_workq_join (exactly once) runs it on the calling thread if
 * no worker has started it yet, else waits until that worker is done. A
 * worker that forks and joins thus never waits on a job still in the
 * queue, so a pool whose workers all fork cannot deadlock. */
typedef struct fl_workq_fork fl_workq_fork_t;
fl_workq_fork_t *fl_workq_fork(fl_workq_t *q, fl_workq_fn fn, void *arg);
/* Returns true when a worker ran it, false when the caller did. */
bool fl_workq_join(fl_workq_fork_t *f);
/* Jobs finished so far (for tests and stats). */
uint64_t fl_workq_completed(const fl_workq_t *q);

#endif
