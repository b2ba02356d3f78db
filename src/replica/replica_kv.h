/*
 * replica_kv.h — a replica's slot for its bucket's primary-key state (a
 * KvTablet: opaque here, the layer above opens and closes it): who uses
 * the store, and when a demoted leader's store may close while the
 * process runs on.
 *
 * A leader opens its store and publishes it in the slot; every operation
 * that reads or writes it (a put, a lookup, a snapshot, a tiering round)
 * acquires it and releases it when done. A leader demoted to follower
 * retires the store: it is detached at once, so no operation acquires it
 * again, and it is handed back for closing when nothing uses it — to the
 * retire itself, or to the release that drops the last use. That caller
 * closes it away from its own thread (it may be a network loop or the
 * control thread) and then says so (fl_replica_kv_closed). Until then the
 * slot is busy: no store is published beside the retired one, so a new
 * leadership in the same process never serves the retired store nor
 * opens its directory while the old handle holds it.
 *
 * Each retire begins a new generation. An opener publishes only in the
 * generation it began in (fl_replica_kv_begin → open → publish, or
 * abandon when the open failed): a store whose open a demotion overtook
 * is retired instead of published, and the opener, not the demotion,
 * cleans up after it, so a demotion never touches a store's files while
 * it opens.
 *
 *   empty --begin--> opening --publish--> published --retire--> retired
 *     ^                  |  (generation moved: retired)             |
 *     |                  +--abandon--> empty        last use ends --+
 *     +------------------------- closed <---- handed back to close --+
 *
 * Thread rule: every function is safe from any thread. `lock` is a leaf:
 * nothing is called under it, and it is never held while a store opens
 * or closes.
 */
#ifndef FL_REPLICA_KV_H
#define FL_REPLICA_KV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct fl_replica_kv {
    pthread_mutex_t lock;
    pthread_cond_t cond;   /* the retired store closed */
    void *kv;              /* (lock) the published store; NULL: none */
    void *retired;         /* (lock) detached, not closed yet; NULL: none */
    int users;             /* (lock) acquisitions of kv or retired not released */
    bool opening;          /* (lock) between a begin that answered EMPTY and its publish */
    uint64_t gen;          /* (lock) retirements so far */
    /* closes the published store when the replica goes (deleted: the
     * bucket was dropped); set with it */
    void (*close)(void *kv, bool deleted);
} fl_replica_kv_t;

void fl_replica_kv_init(fl_replica_kv_t *s);
/* The replica goes: a published store is closed here (nobody uses it: a
 * user holds the replica). A retired one must be closed by now. */
void fl_replica_kv_reset(fl_replica_kv_t *s, bool deleted);

/* The published store with one use taken, or NULL (none, or retired). */
void *fl_replica_kv_acquire(fl_replica_kv_t *s);
/* Gives back a use of kv. Returns kv when it was retired and this was its
 * last use: the caller closes it, not inline on a network loop, then
 * calls fl_replica_kv_closed. NULL otherwise. */
void *fl_replica_kv_release(fl_replica_kv_t *s, void *kv);

typedef enum fl_replica_kv_begin {
    FL_REPLICA_KV_PUBLISHED, /* *kv: the published store, acquired */
    FL_REPLICA_KV_EMPTY,     /* none: open one, publish it in *gen */
    FL_REPLICA_KV_BUSY,      /* a retired store is still to close */
} fl_replica_kv_begin_t;
fl_replica_kv_begin_t fl_replica_kv_begin(fl_replica_kv_t *s, void **kv, uint64_t *gen);
/* Publishes kv, opened after fl_replica_kv_begin answered EMPTY with gen,
 * and takes one use of it for the caller: true. false when a retire came
 * in between: kv is retired now, without users, and the caller closes it
 * as it would a store fl_replica_kv_release handed back. One opener at a
 * time (the layer above serialises opens). */
bool fl_replica_kv_publish(fl_replica_kv_t *s, void *kv, uint64_t gen,
                           void (*close)(void *kv, bool deleted));
/* The open that began in gen failed: true when a retire came in between
 * (the caller cleans up what the demotion left to it). */
bool fl_replica_kv_abandon(fl_replica_kv_t *s, uint64_t gen);

typedef enum fl_replica_kv_retire {
    FL_REPLICA_KV_RETIRE_NONE,  /* no store, none opening: the caller cleans up */
    FL_REPLICA_KV_RETIRE_NOW,   /* *kv: unused, the caller closes it now */
    FL_REPLICA_KV_RETIRE_LATER, /* in use, closing, or opening: whoever ends that does */
} fl_replica_kv_retire_t;
/* Detaches the published store and begins a new generation. A store still
 * in use is handed back by its last release. */
fl_replica_kv_retire_t fl_replica_kv_retire(fl_replica_kv_t *s, void **kv);
/* The retired store is closed: the slot may publish again. */
void fl_replica_kv_closed(fl_replica_kv_t *s);
/* A retired store is still to close. */
bool fl_replica_kv_busy(fl_replica_kv_t *s);
/* Waits up to timeout_ms until no retired store is left; true: none. */
bool fl_replica_kv_wait_closed(fl_replica_kv_t *s, int64_t timeout_ms);

#endif
