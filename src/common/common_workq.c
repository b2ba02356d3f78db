/*
 * common_workq.c — the worker pool (common_workq.h): a mutex-protected
 * singly linked FIFO and a condition variable; each worker pops one job at
 * a time and runs it without the lock held.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "common_workq.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common_alloc.h"

typedef struct fl_workq_job {
    struct fl_workq_job *next;
    fl_workq_fn fn;
    void *arg;
} fl_workq_job_t;

struct fl_workq {
    pthread_mutex_t lock;
    pthread_cond_t ready;
    fl_workq_job_t *head, *tail;
    bool stopping;
    size_t thread_count;
    pthread_t threads[FL_WORKQ_THREADS_MAX];
    atomic_uint_fast64_t completed;
    char name[16];
};

static void *fl_workq_main(void *arg) {
    fl_workq_t *q = arg;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (!q->head && !q->stopping) pthread_cond_wait(&q->ready, &q->lock);
        fl_workq_job_t *j = q->head;
        if (!j) break; /* stopping and drained */
        q->head = j->next;
        if (!q->head) q->tail = NULL;
        pthread_mutex_unlock(&q->lock);
        j->fn(j->arg);
        fl_free(j);
        atomic_fetch_add(&q->completed, 1);
        pthread_mutex_lock(&q->lock);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

fl_workq_t *fl_workq_new(size_t threads, const char *name) {
    if (threads < 1) threads = 1;
    if (threads > FL_WORKQ_THREADS_MAX) threads = FL_WORKQ_THREADS_MAX;
    fl_workq_t *q = fl_calloc(1, sizeof(*q));
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->ready, NULL);
    snprintf(q->name, sizeof(q->name), "%s", name ? name : "worker");
    for (size_t i = 0; i < threads; i++) {
        if (pthread_create(&q->threads[i], NULL, fl_workq_main, q) != 0) break;
        char tname[48];
        snprintf(tname, sizeof(tname), "%.11s-%zu", q->name, i);
        tname[15] = '\0'; /* the kernel's limit for thread names */
        pthread_setname_np(q->threads[i], tname);
        q->thread_count++;
    }
    return q;
}

void fl_workq_submit(fl_workq_t *q, fl_workq_fn fn, void *arg) {
    fl_workq_job_t *j = fl_malloc(sizeof(*j));
    j->next = NULL;
    j->fn = fn;
    j->arg = arg;
    pthread_mutex_lock(&q->lock);
    if (q->stopping && q->thread_count == 0) {
        pthread_mutex_unlock(&q->lock);
        fn(arg);
        fl_free(j);
        return;
    }
    if (q->tail) q->tail->next = j;
    else q->head = j;
    q->tail = j;
    pthread_cond_signal(&q->ready);
    pthread_mutex_unlock(&q->lock);
}

void fl_workq_destroy(fl_workq_t *q) {
    if (!q) return;
    pthread_mutex_lock(&q->lock);
    q->stopping = true;
    pthread_cond_broadcast(&q->ready);
    pthread_mutex_unlock(&q->lock);
    for (size_t i = 0; i < q->thread_count; i++) pthread_join(q->threads[i], NULL);
    /* a job that submitted more work after the last worker left */
    pthread_mutex_lock(&q->lock);
    q->thread_count = 0;
    fl_workq_job_t *j = q->head;
    q->head = q->tail = NULL;
    pthread_mutex_unlock(&q->lock);
    while (j) {
        fl_workq_job_t *next = j->next;
        j->fn(j->arg);
        fl_free(j);
        j = next;
    }
    pthread_cond_destroy(&q->ready);
    pthread_mutex_destroy(&q->lock);
    fl_free(q);
}

size_t fl_workq_threads(const fl_workq_t *q) { return q->thread_count; }

uint64_t fl_workq_completed(const fl_workq_t *q) {
    return atomic_load(&((fl_workq_t *)q)->completed);
}

/* ---- fork-join ---- */

enum { FL_FORK_QUEUED, FL_FORK_RUNNING, FL_FORK_DONE };

struct fl_workq_fork {
    fl_workq_fn fn;
    void *arg;
    atomic_int state;
    atomic_int refs; /* the queued job's and the joiner's */
    pthread_mutex_t mu;
    pthread_cond_t done;
};

static void fl_workq_fork_unref(fl_workq_fork_t *f) {
    if (atomic_fetch_sub(&f->refs, 1) != 1) return;
    pthread_cond_destroy(&f->done);
    pthread_mutex_destroy(&f->mu);
    fl_free(f);
}

/* The queued side: runs fn unless the joiner took it first. */
static void fl_workq_fork_run(void *arg) {
    fl_workq_fork_t *f = arg;
    int want = FL_FORK_QUEUED;
    if (atomic_compare_exchange_strong(&f->state, &want, FL_FORK_RUNNING)) {
        f->fn(f->arg);
        pthread_mutex_lock(&f->mu);
        atomic_store(&f->state, FL_FORK_DONE);
        pthread_cond_signal(&f->done);
        pthread_mutex_unlock(&f->mu);
    }
    fl_workq_fork_unref(f);
}

fl_workq_fork_t *fl_workq_fork(fl_workq_t *q, fl_workq_fn fn, void *arg) {
    fl_workq_fork_t *f = fl_calloc(1, sizeof(*f));
    f->fn = fn;
    f->arg = arg;
    atomic_init(&f->state, FL_FORK_QUEUED);
    atomic_init(&f->refs, 2);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->done, NULL);
    fl_workq_submit(q, fl_workq_fork_run, f);
    return f;
}

bool fl_workq_join(fl_workq_fork_t *f) {
    int want = FL_FORK_QUEUED;
    bool by_worker = !atomic_compare_exchange_strong(&f->state, &want, FL_FORK_RUNNING);
    if (!by_worker) {
        f->fn(f->arg);
    } else {
        pthread_mutex_lock(&f->mu);
        while (atomic_load(&f->state) != FL_FORK_DONE) pthread_cond_wait(&f->done, &f->mu);
        pthread_mutex_unlock(&f->mu);
    }
    fl_workq_fork_unref(f);
    return by_worker;
}
