/*
 * replica_kv.c — the slot of a replica's primary-key store: uses,
 * retirement and the generation that fences a late publish
 * (replica_kv.h).
 */
#include "replica_kv.h"

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <time.h>

void fl_replica_kv_init(fl_replica_kv_t *s) {
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cond, &a);
    pthread_condattr_destroy(&a);
    pthread_mutex_init(&s->lock, NULL);
    s->kv = NULL;
    s->retired = NULL;
    s->users = 0;
    s->opening = false;
    s->gen = 0;
    s->close = NULL;
}

void fl_replica_kv_reset(fl_replica_kv_t *s, bool deleted) {
    assert(s->users == 0 && s->retired == NULL && !s->opening);
    if (s->kv && s->close) s->close(s->kv, deleted);
    s->kv = NULL;
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
}

void *fl_replica_kv_acquire(fl_replica_kv_t *s) {
    pthread_mutex_lock(&s->lock);
    void *kv = s->kv;
    if (kv) s->users++;
    pthread_mutex_unlock(&s->lock);
    return kv;
}

void *fl_replica_kv_release(fl_replica_kv_t *s, void *kv) {
    if (!kv) return NULL;
    pthread_mutex_lock(&s->lock);
    assert(s->users > 0 && (kv == s->kv || kv == s->retired));
    bool last = --s->users == 0 && kv == s->retired;
    pthread_mutex_unlock(&s->lock);
    return last ? kv : NULL;
}

fl_replica_kv_begin_t fl_replica_kv_begin(fl_replica_kv_t *s, void **kv, uint64_t *gen) {
    pthread_mutex_lock(&s->lock);
    fl_replica_kv_begin_t b = FL_REPLICA_KV_EMPTY;
    *kv = NULL;
    *gen = s->gen;
    if (s->kv) {
        *kv = s->kv;
        s->users++;
        b = FL_REPLICA_KV_PUBLISHED;
    } else if (s->retired) {
        b = FL_REPLICA_KV_BUSY;
    } else {
        assert(!s->opening); /* one opener at a time */
        s->opening = true;
    }
    pthread_mutex_unlock(&s->lock);
    return b;
}

bool fl_replica_kv_publish(fl_replica_kv_t *s, void *kv, uint64_t gen,
                           void (*close)(void *kv, bool deleted)) {
    pthread_mutex_lock(&s->lock);
    /* one opener at a time, and it began with the slot empty: whatever
     * retired since had nothing to detach */
    assert(s->opening && s->kv == NULL && s->retired == NULL && s->users == 0);
    s->opening = false;
    bool ok = s->gen == gen;
    if (ok) {
        s->kv = kv;
        s->close = close;
        s->users = 1;
    } else {
        s->retired = kv; /* a demotion overtook the open: never seen by anyone */
    }
    pthread_mutex_unlock(&s->lock);
    return ok;
}

bool fl_replica_kv_abandon(fl_replica_kv_t *s, uint64_t gen) {
    pthread_mutex_lock(&s->lock);
    assert(s->opening);
    s->opening = false;
    bool retired = s->gen != gen;
    pthread_mutex_unlock(&s->lock);
    return retired;
}

fl_replica_kv_retire_t fl_replica_kv_retire(fl_replica_kv_t *s, void **kv) {
    pthread_mutex_lock(&s->lock);
    s->gen++;
    *kv = NULL;
    fl_replica_kv_retire_t r = FL_REPLICA_KV_RETIRE_NONE;
    if (s->kv) {
        assert(s->retired == NULL); /* nothing is published while one is retired */
        s->retired = s->kv;
        s->kv = NULL;
        if (s->users == 0) {
            *kv = s->retired;
            r = FL_REPLICA_KV_RETIRE_NOW;
        } else {
            r = FL_REPLICA_KV_RETIRE_LATER;
        }
    } else if (s->retired || s->opening) {
        r = FL_REPLICA_KV_RETIRE_LATER;
    }
    pthread_mutex_unlock(&s->lock);
    return r;
}

void fl_replica_kv_closed(fl_replica_kv_t *s) {
    pthread_mutex_lock(&s->lock);
    assert(s->retired != NULL && s->users == 0);
    s->retired = NULL;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

bool fl_replica_kv_busy(fl_replica_kv_t *s) {
    pthread_mutex_lock(&s->lock);
    bool busy = s->retired != NULL;
    pthread_mutex_unlock(&s->lock);
    return busy;
}

bool fl_replica_kv_wait_closed(fl_replica_kv_t *s, int64_t timeout_ms) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&s->lock);
    int rc = 0;
    while (s->retired && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&s->cond, &s->lock, &until);
    bool closed = s->retired == NULL;
    pthread_mutex_unlock(&s->lock);
    return closed;
}
