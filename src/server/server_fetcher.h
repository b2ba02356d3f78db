/*
 * server_fetcher.h — a tablet server's fetches as a follower (Fluss's
 * ReplicaFetcherManager): one thread per leader it follows, each with a
 * TCP client to that leader's internal listener (from UPDATE_METADATA's
 * server list), sending FETCH_LOG with follower_server_id for every bucket
 * it follows there, from each replica's log end, and appending what comes
 * back (replica_replication.h: byte for byte, CRC-checked) with the
 * leader's high watermark. The leader parks a fetch that finds nothing
 * new (max_wait_ms), so a quiet bucket costs no busy loop and a new batch
 * reaches the followers at once.
 *
 * Thread rule: any thread; the fetch threads take references on the
 * replicas they fetch for.
 */
#ifndef FL_SERVER_FETCHER_H
#define FL_SERVER_FETCHER_H

#include "replica.h"

typedef struct fl_tablet_server fl_tablet_server_t;
typedef struct fl_fetchers fl_fetchers_t;

fl_fetchers_t *fl_fetchers_new(fl_tablet_server_t *ts);
/* Fetches for r from leader (a reference taken), instead of from any
 * leader it was fetched from before. */
void fl_fetchers_add(fl_fetchers_t *f, int32_t leader, fl_replica_t *r);
/* Stops fetching for that bucket (it leads now, or is stopped). */
void fl_fetchers_remove(fl_fetchers_t *f, int64_t table_id, int64_t partition_id, int32_t bucket);
/* Stops every thread (their fetches in flight end first) and closes their
 * connections; later adds do nothing. */
void fl_fetchers_shutdown(fl_fetchers_t *f);
/* Shuts down if needed and frees. */
void fl_fetchers_destroy(fl_fetchers_t *f);

#endif
