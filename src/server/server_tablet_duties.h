/*
 * server_tablet_duties.h — what a tablet server does on a clock rather than
 * on a request (Fluss's schedulers of LogManager, ReplicaManager,
 * KvManager, RemoteLogManager), each duty a timer on the server's first
 * network loop:
 *
 *   duty           every                                 runs
 *   retention      log.retention.check-interval (5 min)  a worker, each tick
 *   writer expiry  server.writer-id.expiration-check-    a worker, each tick
 *                  interval (10 min)
 *   ISR check      max-lag / 4, at most 250 ms           a worker, one at a time
 *   flush          log.flush.interval-ms (not with       the loop (it queues the
 *                  sync durability or no interval)       flushes on the workers)
 *   KV snapshot    kv.snapshot.interval (10 min)         a worker, one at a time
 *   disk sample    server.data-disk.check-interval       a worker, one at a time
 *                  (only with the write protection on)
 *   tiering        remote.log.task-interval-duration     a worker, one at a time
 *                  (only with tiering on)
 *
 * "One at a time": a tick that finds the duty's last job still queued or
 * running queues nothing (a slow round is not piled up behind itself).
 * The jobs are the tablet server's own (retention and writer expiry of its
 * replica manager, fl_tablet_isr_round, fl_tablet_server_snapshot_now,
 * fl_disk_guard_sample, fl_tablet_server_tier_now): this module owns when
 * they run, not what they do.
 *
 * Thread rule: _new and _destroy on the thread that builds and destroys the
 * tablet server (_destroy after its loops and workers are gone: the
 * timers are handles of loop 0, the jobs hold the duties); _start on loop
 * 0. Each duty's `queued` flag is set on the loop and cleared by its job
 * on a worker.
 */
#ifndef FL_SERVER_TABLET_DUTIES_H
#define FL_SERVER_TABLET_DUTIES_H

#include "server_node.h"

typedef struct fl_tablet_duties fl_tablet_duties_t;

/* The duties of ts (not started). */
fl_tablet_duties_t *fl_tablet_duties_new(fl_tablet_server_t *ts);
/* Starts the timers on ts's first loop; a fl_rpc_loop_post task (arg: the
 * duties), posted once before that loop starts. */
void fl_tablet_duties_start(void *duties);
void fl_tablet_duties_destroy(fl_tablet_duties_t *d);

#endif
