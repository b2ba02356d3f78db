/*
 * server_lake_index.c — a tablet server's lake indexes
 * (server_lake_index.h): a list under one mutex (a server tiers a few
 * hundred primary-key buckets at most, once per freshness each).
 */
#include "server_lake_index.h"

#include <pthread.h>
#include <stdbool.h>

#include "common_alloc.h"

typedef struct li_entry {
    int64_t table_id, partition_id;
    int32_t bucket, leader_epoch;
    fl_pk_index_t *x;
    bool taken, dropped;
    struct li_entry *next;
} li_entry_t;

struct fl_lake_indexes {
    pthread_mutex_t mu;
    li_entry_t *head;
};

fl_lake_indexes_t *fl_lake_indexes_new(void) {
    fl_lake_indexes_t *s = fl_calloc(1, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    return s;
}

void fl_lake_indexes_destroy(fl_lake_indexes_t *s) {
    if (!s) return;
    for (li_entry_t *e = s->head, *n; e; e = n) {
        n = e->next;
        fl_pk_index_destroy(e->x);
        fl_free(e);
    }
    pthread_mutex_destroy(&s->mu);
    fl_free(s);
}

fl_pk_index_t *fl_lake_indexes_take(fl_lake_indexes_t *s, int64_t table_id, int64_t partition_id,
                                    int32_t bucket, int32_t leader_epoch) {
    pthread_mutex_lock(&s->mu);
    li_entry_t *e = s->head;
    while (e && (e->table_id != table_id || e->partition_id != partition_id ||
                 e->bucket != bucket || e->dropped))
        e = e->next;
    if (!e) {
        e = fl_calloc(1, sizeof(*e));
        *e = (li_entry_t){table_id, partition_id, bucket, leader_epoch, fl_pk_index_new(),
                          false, false, s->head};
        s->head = e;
    }
    fl_pk_index_t *x = NULL;
    if (!e->taken) {
        if (e->leader_epoch != leader_epoch) {
            fl_pk_index_clear(e->x);
            e->leader_epoch = leader_epoch;
        }
        e->taken = true;
        x = e->x;
    }
    pthread_mutex_unlock(&s->mu);
    return x;
}

void fl_lake_indexes_give(fl_lake_indexes_t *s, fl_pk_index_t *x) {
    pthread_mutex_lock(&s->mu);
    for (li_entry_t **p = &s->head; *p; p = &(*p)->next) {
        li_entry_t *e = *p;
        if (e->x != x) continue;
        e->taken = false;
        if (e->dropped) {
            *p = e->next;
            fl_pk_index_destroy(e->x);
            fl_free(e);
        }
        break;
    }
    pthread_mutex_unlock(&s->mu);
}

void fl_lake_indexes_drop(fl_lake_indexes_t *s, int64_t table_id, int64_t partition_id) {
    pthread_mutex_lock(&s->mu);
    for (li_entry_t **p = &s->head; *p;) {
        li_entry_t *e = *p;
        if (e->table_id != table_id || (partition_id >= 0 && e->partition_id != partition_id)) {
            p = &e->next;
            continue;
        }
        if (e->taken) {
            e->dropped = true;
            p = &e->next;
            continue;
        }
        *p = e->next;
        fl_pk_index_destroy(e->x);
        fl_free(e);
    }
    pthread_mutex_unlock(&s->mu);
}

size_t fl_lake_indexes_count(fl_lake_indexes_t *s) {
    pthread_mutex_lock(&s->mu);
    size_t n = 0;
    for (li_entry_t *e = s->head; e; e = e->next) n++;
    pthread_mutex_unlock(&s->mu);
    return n;
}
