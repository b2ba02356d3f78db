/*
 * server_tablet_catalog.c — a tablet server's hosted tables, peers and
 * metadata cache (server_tablet_catalog.h).
 */
#include "server_tablet_catalog.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "common_alloc.h"
#include "server_config.h"
#include "server_node.h"

struct fl_tablet_catalog {
    pthread_rwlock_t lock;
    /* (lock) the published tables, one per id, in no order */
    size_t table_count, table_cap;
    fl_hosted_table_t **tables;
    /* (lock) the other tablet servers' internal listeners, from
     * UPDATE_METADATA: where a follower fetches from its leader */
    size_t peer_count;
    struct fl_tablet_peer {
        int32_t id;
        char host[FL_SERVER_HOST_MAX];
        int port;
    } peers[FL_TABLET_PEERS_MAX];
    char internal_listener_name[64]; /* set at creation */
    /* (its own lock) GET_METADATA's answers */
    fl_metadata_cache_t *mdcache;
};

fl_tablet_catalog_t *fl_tablet_catalog_new(const char *internal_listener_name) {
    fl_tablet_catalog_t *c = fl_calloc(1, sizeof(*c));
    pthread_rwlock_init(&c->lock, NULL);
    snprintf(c->internal_listener_name, sizeof(c->internal_listener_name), "%s",
             internal_listener_name);
    c->mdcache = fl_metadata_cache_new();
    return c;
}

void fl_tablet_catalog_destroy(fl_tablet_catalog_t *c) {
    if (!c) return;
    for (size_t i = 0; i < c->table_count; i++) fl_hosted_table_unref(c->tables[i]);
    fl_free(c->tables);
    pthread_rwlock_destroy(&c->lock);
    fl_metadata_cache_free(c->mdcache);
    fl_free(c);
}

/* Under the lock: index of table_id or -1. */
static ssize_t fl_catalog_find(const fl_tablet_catalog_t *c, int64_t table_id) {
    for (size_t i = 0; i < c->table_count; i++)
        if (c->tables[i]->table_id == table_id) return (ssize_t)i;
    return -1;
}

fl_hosted_table_t *fl_tablet_catalog_put(fl_tablet_catalog_t *c, fl_hosted_table_t *t) {
    fl_hosted_table_t *old = NULL;
    pthread_rwlock_wrlock(&c->lock);
    ssize_t i = fl_catalog_find(c, t->table_id);
    if (i >= 0) {
        old = c->tables[i];
        c->tables[i] = t;
    } else {
        if (c->table_count == c->table_cap) {
            c->table_cap = c->table_cap ? c->table_cap * 2 : 16;
            c->tables = fl_realloc(c->tables, c->table_cap * sizeof(*c->tables));
        }
        c->tables[c->table_count++] = t;
    }
    pthread_rwlock_unlock(&c->lock);
    return old;
}

fl_hosted_table_t *fl_tablet_catalog_remove(fl_tablet_catalog_t *c, const char *db,
                                           const char *name) {
    fl_hosted_table_t *old = NULL;
    pthread_rwlock_wrlock(&c->lock);
    for (size_t i = 0; i < c->table_count && !old; i++)
        if (strcmp(c->tables[i]->database, db) == 0 && strcmp(c->tables[i]->name, name) == 0) {
            old = c->tables[i];
            c->tables[i] = c->tables[--c->table_count];
        }
    pthread_rwlock_unlock(&c->lock);
    return old;
}

fl_hosted_table_t *fl_tablet_catalog_table(fl_tablet_catalog_t *c, int64_t table_id) {
    pthread_rwlock_rdlock(&c->lock);
    ssize_t i = fl_catalog_find(c, table_id);
    fl_hosted_table_t *t = i >= 0 ? c->tables[i] : NULL;
    if (t) atomic_fetch_add(&t->refs, 1);
    pthread_rwlock_unlock(&c->lock);
    return t;
}

size_t fl_tablet_catalog_count(fl_tablet_catalog_t *c) {
    pthread_rwlock_rdlock(&c->lock);
    size_t n = c->table_count;
    pthread_rwlock_unlock(&c->lock);
    return n;
}

void fl_tablet_catalog_set_peers(fl_tablet_catalog_t *c, Fluss__PbServerNode *const *nodes,
                                 size_t count) {
    pthread_rwlock_wrlock(&c->lock);
    c->peer_count = 0;
    for (size_t i = 0; i < count && c->peer_count < FL_TABLET_PEERS_MAX; i++) {
        fl_listener_addr_t l[FL_LISTENERS_MAX];
        size_t n;
        if (!nodes[i]->listeners || !c->internal_listener_name[0] ||
            fl_parse_listeners(nodes[i]->listeners, l, FL_LISTENERS_MAX, &n) != 0)
            continue;
        const fl_listener_addr_t *in = fl_listener_find(l, n, c->internal_listener_name);
        if (!in) continue;
        struct fl_tablet_peer *p = &c->peers[c->peer_count++];
        p->id = nodes[i]->node_id;
        snprintf(p->host, sizeof(p->host), "%s", in->host);
        p->port = in->port;
    }
    pthread_rwlock_unlock(&c->lock);
}

int fl_tablet_catalog_peer(fl_tablet_catalog_t *c, int32_t id, char *host, size_t cap, int *port) {
    int rc = -1;
    pthread_rwlock_rdlock(&c->lock);
    for (size_t i = 0; i < c->peer_count && rc; i++)
        if (c->peers[i].id == id) {
            snprintf(host, cap, "%s", c->peers[i].host);
            *port = c->peers[i].port;
            rc = 0;
        }
    pthread_rwlock_unlock(&c->lock);
    return rc;
}

fl_metadata_cache_t *fl_tablet_catalog_mdcache(fl_tablet_catalog_t *c) {
    return c->mdcache;
}
