/*
 * server_metadata_cache.h — what a tablet server knows of the cluster's
 * metadata, from the coordinator's UPDATE_METADATA: the coordinator's and
 * the tablet servers' client endpoints, and each table's and partition's
 * entry as GET_METADATA gives it to clients (path, id, schema id,
 * descriptor, times, buckets with leaders, replicas and epochs).
 *
 * A tablet server answers GET_METADATA from it (Fluss's TabletServer reads
 * its own metadata cache the same way), so clients that refresh their
 * metadata through a tablet server do not wait on the coordinator, and
 * are answered while no coordinator is active. A request naming a table
 * or partition the cache does not hold (not pushed here yet, or gone) is
 * not answered from it: the caller passes it on to the coordinator, whose
 * catalog decides (Fluss reads ZooKeeper there).
 *
 * Each UPDATE_METADATA carries the servers whole and each table it names
 * whole (its partitions with it); a deleted table (id -2) goes with its
 * partitions. Entries are kept as the bytes a client is sent (fluss-c's
 * field 1000, the schemas for the tablet server, is left out), so an
 * answer is a concatenation.
 *
 * Thread rule: any thread; a read-write lock inside.
 */
#ifndef FL_SERVER_METADATA_CACHE_H
#define FL_SERVER_METADATA_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "common_buf.h"
#include "fluss_api.pb-c.h"

typedef struct fl_metadata_cache fl_metadata_cache_t;

fl_metadata_cache_t *fl_metadata_cache_new(void);
void fl_metadata_cache_free(fl_metadata_cache_t *c);

/* Applies one UPDATE_METADATA (already checked by its handler). */
void fl_metadata_cache_update(fl_metadata_cache_t *c, const Fluss__UpdateMetadataRequest *req);

/* GET_METADATA's answer (a whole response frame for request_id) appended
 * to out: true. false, out untouched: the cache has no coordinator yet,
 * or misses a table or partition the request names. */
bool fl_metadata_cache_answer(fl_metadata_cache_t *c, const Fluss__MetadataRequest *req,
                              int32_t request_id, fl_buf_t *out);

#endif
