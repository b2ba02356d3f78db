/*
 * replica_purgatory.c — delayed operations (replica_purgatory.h). One mutex
 * guards a hash table of watch lists (bucket key → the operations parked
 * on it, doubly linked so a completed operation leaves every list in O(1))
 * and a binary min-heap of deadlines served by one timer thread.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "replica_purgatory.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common_alloc.h"
#include "common_time.h"

#define FL_PURGATORY_SLOTS 1024

struct fl_purgatory_watch {
    fl_purgatory_watch_t *prev, *next; /* in the slot's list */
    fl_bucket_key_t key;
    fl_delayed_op_t *op;
    size_t slot;
};

struct fl_purgatory {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    fl_purgatory_watch_t *slots[FL_PURGATORY_SLOTS];
    size_t heap_count, heap_cap;
    fl_delayed_op_t **heap;
    atomic_size_t parked; /* heap_count, readable without the lock */
    bool stopping;
    pthread_t timer;
    bool timer_started;
};

static size_t fl_key_slot(const fl_bucket_key_t *k) {
    uint64_t h = (uint64_t)k->table_id * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)(k->partition_id + 1) * 0xC2B2AE3D27D4EB4Full;
    h ^= (uint64_t)(uint32_t)k->bucket * 0x165667B19E3779F9ull;
    h ^= h >> 29;
    return (size_t)(h % FL_PURGATORY_SLOTS);
}

static bool fl_key_eq(const fl_bucket_key_t *a, const fl_bucket_key_t *b) {
    return a->table_id == b->table_id && a->partition_id == b->partition_id &&
           a->bucket == b->bucket;
}

/* ---- deadline heap (under lock) ---- */

static void fl_heap_swap(fl_purgatory_t *p, size_t i, size_t j) {
    fl_delayed_op_t *t = p->heap[i];
    p->heap[i] = p->heap[j];
    p->heap[j] = t;
    p->heap[i]->heap_index = i;
    p->heap[j]->heap_index = j;
}

static void fl_heap_up(fl_purgatory_t *p, size_t i) {
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (p->heap[parent]->deadline_ms <= p->heap[i]->deadline_ms) break;
        fl_heap_swap(p, i, parent);
        i = parent;
    }
}

static void fl_heap_down(fl_purgatory_t *p, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < p->heap_count && p->heap[l]->deadline_ms < p->heap[m]->deadline_ms) m = l;
        if (r < p->heap_count && p->heap[r]->deadline_ms < p->heap[m]->deadline_ms) m = r;
        if (m == i) return;
        fl_heap_swap(p, i, m);
        i = m;
    }
}

static void fl_heap_push(fl_purgatory_t *p, fl_delayed_op_t *op) {
    if (p->heap_count == p->heap_cap) {
        p->heap_cap = p->heap_cap ? p->heap_cap * 2 : 64;
        p->heap = fl_realloc(p->heap, p->heap_cap * sizeof(*p->heap));
    }
    op->heap_index = p->heap_count;
    p->heap[p->heap_count++] = op;
    atomic_store(&p->parked, p->heap_count);
    fl_heap_up(p, op->heap_index);
}

static void fl_heap_remove(fl_purgatory_t *p, fl_delayed_op_t *op) {
    size_t i = op->heap_index;
    p->heap_count--;
    atomic_store(&p->parked, p->heap_count);
    if (i != p->heap_count) {
        p->heap[i] = p->heap[p->heap_count];
        p->heap[i]->heap_index = i;
        fl_heap_down(p, i);
        fl_heap_up(p, i);
    }
}

/* Takes a claimed op out of every list and the heap (under lock). */
static void fl_op_unlink(fl_purgatory_t *p, fl_delayed_op_t *op) {
    for (size_t i = 0; i < op->watch_count; i++) {
        fl_purgatory_watch_t *w = &op->watches[i];
        if (w->prev) w->prev->next = w->next;
        else p->slots[w->slot] = w->next;
        if (w->next) w->next->prev = w->prev;
    }
    fl_heap_remove(p, op);
}

static void fl_op_finish(fl_delayed_op_t *op, bool expired) {
    fl_free(op->watches);
    op->watches = NULL;
    op->watch_count = 0;
    op->ops->on_complete(op, expired);
}

static void *fl_purgatory_timer_main(void *arg) {
    fl_purgatory_t *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->stopping) {
        int64_t now = fl_time_mono_ms();
        if (p->heap_count && p->heap[0]->deadline_ms <= now) {
            fl_delayed_op_t *op = p->heap[0];
            atomic_store(&op->completed, true);
            fl_op_unlink(p, op);
            pthread_mutex_unlock(&p->lock);
            fl_op_finish(op, true);
            pthread_mutex_lock(&p->lock);
            continue;
        }
        if (!p->heap_count) {
            pthread_cond_wait(&p->wake, &p->lock);
            continue;
        }
        int64_t wait_ms = p->heap[0]->deadline_ms - now;
        struct timespec ts = fl_time_mono_deadline(wait_ms);
        pthread_cond_timedwait(&p->wake, &p->lock, &ts);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

fl_purgatory_t *fl_purgatory_new(const char *name) {
    fl_purgatory_t *p = fl_calloc(1, sizeof(*p));
    atomic_init(&p->parked, 0);
    pthread_mutex_init(&p->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->wake, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&p->timer, NULL, fl_purgatory_timer_main, p) == 0) {
        p->timer_started = true;
        char tname[16]; /* the kernel's limit for thread names */
        snprintf(tname, sizeof(tname), "%.15s", name ? name : "purgatory");
        pthread_setname_np(p->timer, tname);
    }
    return p;
}

void fl_purgatory_shutdown(fl_purgatory_t *p) {
    pthread_mutex_lock(&p->lock);
    bool first = !p->stopping;
    p->stopping = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    if (first && p->timer_started) pthread_join(p->timer, NULL);
    for (;;) {
        pthread_mutex_lock(&p->lock);
        fl_delayed_op_t *op = p->heap_count ? p->heap[0] : NULL;
        if (op) {
            atomic_store(&op->completed, true);
            fl_op_unlink(p, op);
        }
        pthread_mutex_unlock(&p->lock);
        if (!op) break;
        fl_op_finish(op, true);
    }
}

void fl_purgatory_destroy(fl_purgatory_t *p) {
    if (!p) return;
    fl_purgatory_shutdown(p);
    fl_free(p->heap);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    fl_free(p);
}

void fl_purgatory_watch(fl_purgatory_t *p, fl_delayed_op_t *op, const fl_bucket_key_t *keys,
                        size_t key_count) {
    if (key_count > FL_PURGATORY_KEYS_MAX) key_count = FL_PURGATORY_KEYS_MAX;
    atomic_init(&op->completed, false);
    atomic_init(&op->checks, 0);
    op->watch_count = key_count;
    op->watches = fl_calloc(key_count ? key_count : 1, sizeof(*op->watches));
    pthread_mutex_lock(&p->lock);
    if (p->stopping) {
        pthread_mutex_unlock(&p->lock);
        atomic_store(&op->completed, true);
        fl_op_finish(op, true);
        return;
    }
    for (size_t i = 0; i < key_count; i++) {
        fl_purgatory_watch_t *w = &op->watches[i];
        w->key = keys[i];
        w->op = op;
        w->slot = fl_key_slot(&keys[i]);
        w->prev = NULL;
        w->next = p->slots[w->slot];
        if (w->next) w->next->prev = w;
        p->slots[w->slot] = w;
    }
    bool earliest = !p->heap_count || op->deadline_ms < p->heap[0]->deadline_ms;
    fl_heap_push(p, op);
    atomic_fetch_add(&op->checks, 1);
    bool ready = op->ops->try_complete(op, NULL);
    if (ready) {
        atomic_store(&op->completed, true);
        fl_op_unlink(p, op);
    } else if (earliest) {
        pthread_cond_signal(&p->wake);
    }
    pthread_mutex_unlock(&p->lock);
    if (ready) fl_op_finish(op, false);
}

#define FL_PURGATORY_BATCH 64

void fl_purgatory_check(fl_purgatory_t *p, const fl_bucket_key_t *key) {
    size_t slot = fl_key_slot(key);
    for (;;) {
        fl_delayed_op_t *ready[FL_PURGATORY_BATCH];
        size_t n = 0;
        bool more = false;
        pthread_mutex_lock(&p->lock);
        for (fl_purgatory_watch_t *w = p->slots[slot], *next; w; w = next) {
            next = w->next;
            if (!fl_key_eq(&w->key, key)) continue;
            fl_delayed_op_t *op = w->op;
            atomic_fetch_add(&op->checks, 1);
            if (!op->ops->try_complete(op, key)) continue;
            if (n == FL_PURGATORY_BATCH) {
                more = true;
                break;
            }
            atomic_store(&op->completed, true);
            /* unlinking may remove `next` (another watch of the same op) */
            fl_op_unlink(p, op);
            ready[n++] = op;
            next = p->slots[slot];
        }
        pthread_mutex_unlock(&p->lock);
        for (size_t i = 0; i < n; i++) fl_op_finish(ready[i], false);
        if (!more) return;
    }
}

size_t fl_purgatory_size(fl_purgatory_t *p) { return atomic_load(&p->parked); }
