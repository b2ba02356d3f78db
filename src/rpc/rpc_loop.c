/*
 * rpc_loop.c — a libuv loop on its own thread with a task inbox
 * (rpc_loop.h). The inbox is a mutex-protected FIFO drained by a uv_async
 * callback; uv_async_send coalesces wake-ups, so one drain may run many
 * tasks.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "rpc_loop.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "common_alloc.h"
#include "common_log.h"

typedef struct fl_rpc_task {
    struct fl_rpc_task *next;
    fl_rpc_task_fn fn;
    void *arg;
} fl_rpc_task_t;

struct fl_rpc_loop {
    uv_loop_t uv;
    uv_async_t wake;
    pthread_t thread;
    bool started;
    atomic_bool stopped; /* the thread has left uv_run for good */
    pthread_mutex_t lock;
    fl_rpc_task_t *head, *tail;
    bool stopping;
    size_t hook_count;
    fl_rpc_task_fn hooks[FL_RPC_LOOP_STOP_HOOKS_MAX];
    void *hook_args[FL_RPC_LOOP_STOP_HOOKS_MAX];
    char name[16];
};

/* The loop whose thread this is (NULL elsewhere): how a caller knows it may
 * touch the loop's handles directly. Per thread, never shared. */
static __thread fl_rpc_loop_t *fl_loop_current;

static void fl_loop_close_walk(uv_handle_t *h, void *arg) {
    (void)arg;
    if (!uv_is_closing(h)) uv_close(h, NULL);
}

static void fl_loop_drain(uv_async_t *a) {
    fl_rpc_loop_t *l = a->data;
    pthread_mutex_lock(&l->lock);
    fl_rpc_task_t *t = l->head;
    l->head = l->tail = NULL;
    bool stop = l->stopping;
    pthread_mutex_unlock(&l->lock);
    while (t) {
        fl_rpc_task_t *next = t->next;
        t->fn(t->arg);
        fl_free(t);
        t = next;
    }
    if (stop) {
        /* tasks posted before the stop ran above; new ones after this
         * point are picked up by the final drain in the thread */
        for (size_t i = 0; i < l->hook_count; i++) l->hooks[i](l->hook_args[i]);
        uv_walk(&l->uv, fl_loop_close_walk, NULL);
    }
}

static void *fl_loop_main(void *arg) {
    fl_rpc_loop_t *l = arg;
    fl_loop_current = l;
    uv_run(&l->uv, UV_RUN_DEFAULT);
    /* handles are closed; run what was posted while closing */
    for (;;) {
        pthread_mutex_lock(&l->lock);
        fl_rpc_task_t *t = l->head;
        l->head = l->tail = NULL;
        if (!t) atomic_store(&l->stopped, true);
        pthread_mutex_unlock(&l->lock);
        if (!t) break;
        while (t) {
            fl_rpc_task_t *next = t->next;
            t->fn(t->arg);
            fl_free(t);
            t = next;
        }
        uv_run(&l->uv, UV_RUN_NOWAIT);
    }
    return NULL;
}

fl_rpc_loop_t *fl_rpc_loop_new(const char *name) {
    fl_rpc_loop_t *l = fl_calloc(1, sizeof(*l));
    uv_loop_init(&l->uv);
    pthread_mutex_init(&l->lock, NULL);
    uv_async_init(&l->uv, &l->wake, fl_loop_drain);
    l->wake.data = l;
    snprintf(l->name, sizeof(l->name), "%s", name ? name : "net");
    return l;
}

int fl_rpc_loop_start(fl_rpc_loop_t *l) {
    if (pthread_create(&l->thread, NULL, fl_loop_main, l) != 0) return -1;
    pthread_setname_np(l->thread, l->name);
    l->started = true;
    return 0;
}

void fl_rpc_loop_post(fl_rpc_loop_t *l, fl_rpc_task_fn fn, void *arg) {
    pthread_mutex_lock(&l->lock);
    if (atomic_load(&l->stopped)) {
        pthread_mutex_unlock(&l->lock);
        fn(arg);
        return;
    }
    fl_rpc_task_t *t = fl_malloc(sizeof(*t));
    t->next = NULL;
    t->fn = fn;
    t->arg = arg;
    if (l->tail) l->tail->next = t;
    else l->head = t;
    l->tail = t;
    /* uv_async_send is safe from any thread; the handle stays valid until
     * `stopped`, which is set under this lock */
    uv_async_send(&l->wake);
    pthread_mutex_unlock(&l->lock);
}

bool fl_rpc_loop_on_thread(const fl_rpc_loop_t *l) { return fl_loop_current == l; }

uv_loop_t *fl_rpc_loop_uv(fl_rpc_loop_t *l) { return &l->uv; }

void fl_rpc_loop_on_stop(fl_rpc_loop_t *l, fl_rpc_task_fn fn, void *arg) {
    if (l->hook_count == FL_RPC_LOOP_STOP_HOOKS_MAX) {
        FL_ERROR("rpc loop %s: too many stop hooks", l->name);
        return;
    }
    l->hooks[l->hook_count] = fn;
    l->hook_args[l->hook_count++] = arg;
}

void fl_rpc_loop_destroy(fl_rpc_loop_t *l) {
    if (!l) return;
    if (l->started) {
        pthread_mutex_lock(&l->lock);
        l->stopping = true;
        uv_async_send(&l->wake);
        pthread_mutex_unlock(&l->lock);
        pthread_join(l->thread, NULL);
    } else {
        /* never started: run what was posted, here, as the thread would have */
        fl_loop_current = l;
        fl_rpc_task_t *t = l->head;
        l->head = l->tail = NULL;
        while (t) {
            fl_rpc_task_t *next = t->next;
            t->fn(t->arg);
            fl_free(t);
            t = next;
        }
        fl_loop_current = NULL;
        for (size_t i = 0; i < l->hook_count; i++) l->hooks[i](l->hook_args[i]);
        uv_walk(&l->uv, fl_loop_close_walk, NULL);
        uv_run(&l->uv, UV_RUN_DEFAULT);
        atomic_store(&l->stopped, true);
    }
    uv_loop_close(&l->uv);
    pthread_mutex_destroy(&l->lock);
    fl_free(l);
}
