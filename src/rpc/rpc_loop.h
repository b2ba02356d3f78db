/*
 * rpc_loop.h — one network loop: a thread running a libuv loop, with an
 * inbox other threads post tasks to (Fluss's netty event loop). Servers
 * own several; connections are spread over them, and everything that
 * touches a connection runs on the loop that owns it.
 *
 * Stopping: fl_rpc_loop_stop posts a stop task behind every task already
 * posted, runs the on_stop hooks on the loop thread (servers close their
 * connections there), closes every remaining handle, and joins the thread.
 *
 * Thread rule: fl_rpc_loop_post and fl_rpc_loop_on_thread are safe from any
 * thread; fl_rpc_loop_uv's loop may only be used on the loop thread (or
 * before start / after stop).
 */
#ifndef FL_RPC_LOOP_H
#define FL_RPC_LOOP_H

#include <stdbool.h>
#include <uv.h>

typedef struct fl_rpc_loop fl_rpc_loop_t;
typedef void (*fl_rpc_task_fn)(void *arg);

#define FL_RPC_LOOP_STOP_HOOKS_MAX 8

fl_rpc_loop_t *fl_rpc_loop_new(const char *name);
/* Starts the loop thread. */
int fl_rpc_loop_start(fl_rpc_loop_t *l);
/* Queues fn(arg) to run on the loop thread (FIFO). After the loop stopped
 * the task runs inline on the caller's thread, so a task is never lost. */
void fl_rpc_loop_post(fl_rpc_loop_t *l, fl_rpc_task_fn fn, void *arg);
bool fl_rpc_loop_on_thread(const fl_rpc_loop_t *l);
uv_loop_t *fl_rpc_loop_uv(fl_rpc_loop_t *l);
/* A hook run on the loop thread when it stops (before handles close). */
void fl_rpc_loop_on_stop(fl_rpc_loop_t *l, fl_rpc_task_fn fn, void *arg);
/* Stops the loop (see above) and joins its thread; then frees it. */
void fl_rpc_loop_destroy(fl_rpc_loop_t *l);

#endif
