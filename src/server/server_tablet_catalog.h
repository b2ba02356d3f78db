/*
 * server_tablet_catalog.h — a tablet server's view of the cluster, as the
 * coordinator's UPDATE_METADATA gives it (Fluss's TabletServerMetadataCache
 * plus the table of hosted tables): the tables this server may host
 * (fl_hosted_table_t: leaders and epochs per bucket and partition,
 * schemas, log format, TTL, primary key; immutable, reference-counted,
 * swapped whole), the other tablet servers' internal listeners (where a
 * follower fetches from its leader), and the metadata cache that answers
 * clients' GET_METADATA (server_metadata_cache.h). The request path reads
 * tables from here and never reads the metastore.
 *
 * It knows nothing of replicas, the coordinator or the network: what a
 * published or forgotten table means for the buckets here is the tablet
 * server's (fl_tablet_server_publish_table / _forget_table).
 *
 * Thread rule: any thread. One read-write lock guards the tables and the
 * peers; it is a leaf among the tablet server's locks (taken after the
 * coordinator's catalog lock in local mode, before a replica's). The
 * metadata cache has its own lock. Writers are the control thread's
 * handlers; readers every request.
 */
#ifndef FL_SERVER_TABLET_CATALOG_H
#define FL_SERVER_TABLET_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "fluss_api.pb-c.h"
#include "server_hosted_table.h"
#include "server_metadata_cache.h"

/* Peers an UPDATE_METADATA may name that are kept (the rest ignored). */
#define FL_TABLET_PEERS_MAX 64

typedef struct fl_tablet_catalog fl_tablet_catalog_t;

/* internal_listener_name: internal.listener.name, the listener of a
 * peer's registration that this server reaches it on ("": no peers are
 * kept, local mode reaches them in process). */
fl_tablet_catalog_t *fl_tablet_catalog_new(const char *internal_listener_name);
/* Drops the references of the tables still held. */
void fl_tablet_catalog_destroy(fl_tablet_catalog_t *c);

/* Publishes t in place of the table of its id, taking the caller's
 * reference; returns the table it replaced (the caller's reference now)
 * or NULL. */
fl_hosted_table_t *fl_tablet_catalog_put(fl_tablet_catalog_t *c, fl_hosted_table_t *t);
/* Removes the table named db.name; returns it (the caller's reference
 * now) or NULL. */
fl_hosted_table_t *fl_tablet_catalog_remove(fl_tablet_catalog_t *c, const char *db,
                                           const char *name);
/* The table (referenced: fl_hosted_table_unref), or NULL. */
fl_hosted_table_t *fl_tablet_catalog_table(fl_tablet_catalog_t *c, int64_t table_id);
/* How many tables are published. */
size_t fl_tablet_catalog_count(fl_tablet_catalog_t *c);

/* UPDATE_METADATA's tablet servers: their internal listeners replace the
 * peers known. */
void fl_tablet_catalog_set_peers(fl_tablet_catalog_t *c, Fluss__PbServerNode *const *nodes,
                                 size_t count);
/* A peer's internal listener: 0, or -1 when unknown. */
int fl_tablet_catalog_peer(fl_tablet_catalog_t *c, int32_t id, char *host, size_t cap, int *port);

/* The cluster's metadata as clients get it (borrowed: lives as long as
 * the catalog). */
fl_metadata_cache_t *fl_tablet_catalog_mdcache(fl_tablet_catalog_t *c);

#endif
