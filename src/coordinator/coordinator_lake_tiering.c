/*
 * coordinator_lake_tiering.c — the schedule of lake tables for an
 * external tiering service (coordinator_lake_tiering.h): an array of
 * tables and a FIFO of pending ids, under one mutex.
 */
#include "coordinator_lake_tiering.h"

#include <pthread.h>
#include <string.h>

#include "common_alloc.h"

typedef enum lt_state { LT_SCHEDULED, LT_PENDING, LT_TIERING } lt_state_t;

typedef struct lt_table {
    int64_t table_id;
    int64_t freshness_ms;
    lt_state_t state;
    int64_t epoch;
    int64_t base_ms;      /* Scheduled: the freshness counts from here */
    int64_t heartbeat_ms; /* Tiering: the last renewal */
    bool seen;            /* listed by the last sync */
} lt_table_t;

struct fl_lake_tiering {
    pthread_mutex_t mu;
    lt_table_t *tables;
    size_t n, cap;
    int64_t *queue; /* Pending ids, oldest first */
    size_t qn, qcap;
};

fl_lake_tiering_t *fl_lake_tiering_new(void) {
    fl_lake_tiering_t *t = fl_calloc(1, sizeof(*t));
    pthread_mutex_init(&t->mu, NULL);
    return t;
}

void fl_lake_tiering_destroy(fl_lake_tiering_t *t) {
    if (!t) return;
    pthread_mutex_destroy(&t->mu);
    fl_free(t->tables);
    fl_free(t->queue);
    fl_free(t);
}

static lt_table_t *find(fl_lake_tiering_t *t, int64_t table_id) {
    for (size_t i = 0; i < t->n; i++)
        if (t->tables[i].table_id == table_id) return &t->tables[i];
    return NULL;
}

static void to_pending(fl_lake_tiering_t *t, lt_table_t *x) {
    x->state = LT_PENDING;
    x->epoch++;
    if (t->qn == t->qcap) {
        t->qcap = t->qcap ? t->qcap * 2 : 16;
        t->queue = fl_realloc(t->queue, t->qcap * sizeof(*t->queue));
    }
    t->queue[t->qn++] = x->table_id;
}

void fl_lake_tiering_sync(fl_lake_tiering_t *t, const fl_lake_tiering_table_t *tables, size_t n,
                          int64_t now_ms) {
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->n; i++) t->tables[i].seen = false;
    for (size_t i = 0; i < n; i++) {
        lt_table_t *x = find(t, tables[i].table_id);
        if (!x) {
            if (t->n == t->cap) {
                t->cap = t->cap ? t->cap * 2 : 16;
                t->tables = fl_realloc(t->tables, t->cap * sizeof(*t->tables));
            }
            x = &t->tables[t->n++];
            *x = (lt_table_t){tables[i].table_id, 0, LT_SCHEDULED, 0, now_ms, 0, false};
        }
        x->freshness_ms = tables[i].freshness_ms; /* an ALTER of it applies at once */
        x->seen = true;
    }
    /* forget the tables gone (dropped, lake turned off); queued ids of
     * them are skipped by take */
    size_t w = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->tables[i].seen) t->tables[w++] = t->tables[i];
    t->n = w;
    for (size_t i = 0; i < t->n; i++) {
        lt_table_t *x = &t->tables[i];
        if (x->state == LT_SCHEDULED && now_ms >= x->base_ms + x->freshness_ms)
            to_pending(t, x);
        else if (x->state == LT_TIERING && now_ms - x->heartbeat_ms > FL_LAKE_TIERING_TIMEOUT_MS)
            to_pending(t, x);
    }
    pthread_mutex_unlock(&t->mu);
}

/* The table of a report, checked as 0.9.1's validateTieringServiceRequest. */
static int check(fl_lake_tiering_t *t, int64_t table_id, int64_t epoch, lt_table_t **out) {
    lt_table_t *x = find(t, table_id);
    if (!x) return FL_LAKE_TIERING_UNKNOWN_TABLE;
    if (x->epoch != epoch) return FL_LAKE_TIERING_FENCED;
    *out = x;
    return FL_LAKE_TIERING_OK;
}

int fl_lake_tiering_renew(fl_lake_tiering_t *t, int64_t table_id, int64_t epoch, int64_t now_ms) {
    pthread_mutex_lock(&t->mu);
    lt_table_t *x = NULL;
    int rc = check(t, table_id, epoch, &x);
    if (!rc && x->state != LT_TIERING) rc = FL_LAKE_TIERING_BAD_STATE;
    if (!rc) x->heartbeat_ms = now_ms;
    pthread_mutex_unlock(&t->mu);
    return rc;
}

int fl_lake_tiering_finished(fl_lake_tiering_t *t, int64_t table_id, int64_t epoch, bool force,
                             int64_t now_ms) {
    pthread_mutex_lock(&t->mu);
    lt_table_t *x = NULL;
    int rc = check(t, table_id, epoch, &x);
    if (!rc && x->state != LT_TIERING) rc = FL_LAKE_TIERING_BAD_STATE;
    if (!rc) {
        x->state = LT_SCHEDULED;
        x->base_ms = now_ms;
        if (force) to_pending(t, x); /* cut short by its freshness: more is waiting */
    }
    pthread_mutex_unlock(&t->mu);
    return rc;
}

int fl_lake_tiering_failed(fl_lake_tiering_t *t, int64_t table_id, int64_t epoch, int64_t now_ms) {
    (void)now_ms;
    pthread_mutex_lock(&t->mu);
    lt_table_t *x = NULL;
    int rc = check(t, table_id, epoch, &x);
    if (!rc && x->state != LT_TIERING) rc = FL_LAKE_TIERING_BAD_STATE;
    if (!rc) to_pending(t, x);
    pthread_mutex_unlock(&t->mu);
    return rc;
}

bool fl_lake_tiering_take(fl_lake_tiering_t *t, int64_t now_ms, int64_t *table_id, int64_t *epoch) {
    pthread_mutex_lock(&t->mu);
    bool found = false;
    size_t i = 0;
    for (; i < t->qn && !found; i++) {
        lt_table_t *x = find(t, t->queue[i]);
        if (!x || x->state != LT_PENDING) continue; /* gone, or queued twice */
        x->state = LT_TIERING;
        x->heartbeat_ms = now_ms;
        *table_id = x->table_id;
        *epoch = x->epoch;
        found = true;
    }
    if (i) {
        memmove(t->queue, t->queue + i, (t->qn - i) * sizeof(*t->queue));
        t->qn -= i;
    }
    pthread_mutex_unlock(&t->mu);
    return found;
}

bool fl_lake_tiering_state(fl_lake_tiering_t *t, int64_t table_id, int64_t *epoch, bool *tiering) {
    pthread_mutex_lock(&t->mu);
    lt_table_t *x = find(t, table_id);
    if (x) {
        *epoch = x->epoch;
        *tiering = x->state == LT_TIERING;
    }
    pthread_mutex_unlock(&t->mu);
    return x != NULL;
}
