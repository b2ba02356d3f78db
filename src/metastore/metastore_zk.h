/*
 * metastore_zk.h — the ZooKeeper backend of metastore.h (cluster mode) and
 * what cluster mode needs of ZooKeeper beyond the common interface:
 * coordinator election with a fencing epoch, tablet-server registration,
 * and each bucket's LeaderAndIsr. The znodes are Apache Fluss's (ZkData;
 * payloads in metastore_zk_codec.h), so `zkCli.sh ls /metadata/databases`
 * reads a fluss-c cluster as it reads a Fluss one.
 *
 * Consistency: ZooKeeper is the truth. The store keeps a cache of the
 * metadata (loaded at open, reloaded on becoming active coordinator,
 * updated by its own successful writes); getters return views of it,
 * valid until the next mutation. A mutation returns 0 only after
 * ZooKeeper acknowledged it (a quorum has it on disk).
 *
 * Fencing: only the active coordinator writes metadata. Becoming active
 * creates the ephemeral /coordinators/active and bumps /coordinators/epoch;
 * every later write is one zoo_multi whose first op checks that epoch
 * znode's version, so once another coordinator became active, the old
 * one's writes fail whole with INVALID_COORDINATOR_EXCEPTION. A store that
 * is not active refuses writes with NOT_COORDINATOR_LEADER_EXCEPTION. A
 * write whose outcome is unknown (connection lost before the answer)
 * fails with __TRANSPORT and the cache is reloaded before the next one.
 *
 * Thread rule: like metastore.h, one thread at a time (the coordinator's
 * worker); calls block on ZooKeeper round trips and are never made on a
 * network loop. libzookeeper_mt runs its own I/O and completion threads;
 * what they touch (session state, election wake-ups) is under the
 * connection's mutex.
 */
#ifndef FL_METASTORE_ZK_H
#define FL_METASTORE_ZK_H

#include <stdbool.h>
#include <stdint.h>

#include "metastore.h"
#include "metastore_zk_codec.h"

/* A ZooKeeper session (libzookeeper_mt handle). root is a path prefix
 * under which every znode lives ("" or NULL: none; else "/a/b"), created
 * when missing. Opening waits up to connect_timeout_ms for the session
 * (zookeeper.client.connection-timeout; <= 0: the session timeout). */
typedef struct fl_zk_conn fl_zk_conn_t;

int fl_zk_conn_open(const char *connect_string, const char *root, int session_timeout_ms,
                    int connect_timeout_ms, fl_zk_conn_t **out, fl_error_t *err);
/* Closes the session: its ephemeral znodes go at once. */
void fl_zk_conn_close(fl_zk_conn_t *c);
/* False once the server expired the session (it does not come back). */
bool fl_zk_conn_alive(fl_zk_conn_t *c);

/* Opens the store: a session of its own, the base znodes created when
 * missing, the cache loaded. Not active until fl_metastore_zk_elect. */
int fl_metastore_zk_open(const char *connect_string, const char *root, int session_timeout_ms,
                         int connect_timeout_ms, fl_metastore_t **out, fl_error_t *err);
/* The store's session (for registrations and listings on it). */
fl_zk_conn_t *fl_metastore_zk_conn(fl_metastore_t *ms);

/* ---- coordinator election ---- */

/* Tries to become the active coordinator: creates the ephemeral
 * /coordinators/active with {id, listeners}; while another holds it,
 * watches it and tries again when it goes, for up to wait_ms (0: one
 * try). On success bumps the coordinator epoch (fenced by the epoch
 * znode's version), reloads the cache and sets *active. */
int fl_metastore_zk_elect(fl_metastore_t *ms, const char *id, const char *listeners, int wait_ms,
                          bool *active, fl_error_t *err);
/* The epoch this store writes under, or -1 when it is not active. */
int32_t fl_metastore_zk_epoch(fl_metastore_t *ms);
/* Who is active now: *id and *listeners (fl_free) or NULL when nobody. */
int fl_metastore_zk_active_coordinator(fl_metastore_t *ms, char **id, char **listeners,
                                       fl_error_t *err);

/* The same, read on any session (a tablet server finding its coordinator). */
int fl_zk_active_coordinator(fl_zk_conn_t *c, char **id, char **listeners, fl_error_t *err);

/* ---- tablet servers ---- */

/* Registers a tablet server: the ephemeral /tabletservers/ids/<id>.
 * ts->incarnation is set to the registration's epoch (its creation zxid,
 * larger than any earlier registration's). A live registration of the
 * same id (another process, or this one's previous session not yet
 * expired) is refused with __STATE. */
int fl_zk_tablet_server_register(fl_zk_conn_t *c, fl_zk_tablet_server_t *ts, fl_error_t *err);
/* The live tablet servers, by id; free with fl_zk_tablet_servers_free. */
int fl_zk_tablet_servers_list(fl_zk_conn_t *c, fl_zk_tablet_server_t **out, size_t *count,
                              fl_error_t *err);
void fl_zk_tablet_servers_free(fl_zk_tablet_server_t *servers, size_t count);

/* ---- LeaderAndIsr of a bucket (partition_id -1: a table's bucket) ---- */

typedef struct fl_zk_bucket_ref {
    int64_t table_id;
    int64_t partition_id;
    int32_t bucket;
} fl_zk_bucket_ref_t;

/* Reads it and its znode version; LEADER_NOT_AVAILABLE_EXCEPTION when the
 * bucket has none yet. */
int fl_metastore_zk_leader_isr_get(fl_metastore_t *ms, const fl_zk_bucket_ref_t *b,
                                   fl_zk_leader_isr_t *out, int32_t *version, fl_error_t *err);
/* Creates it (fenced); __STATE when it exists, the bucket's table or
 * partition missing is TABLE_NOT_EXIST / PARTITION_NOT_EXISTS. */
int fl_metastore_zk_leader_isr_create(fl_metastore_t *ms, const fl_zk_bucket_ref_t *b,
                                      const fl_zk_leader_isr_t *l, fl_error_t *err);
/* Replaces it if its znode version is still expected_version (fenced);
 * __STATE when it changed meanwhile. *new_version is the version after. */
int fl_metastore_zk_leader_isr_update(fl_metastore_t *ms, const fl_zk_bucket_ref_t *b,
                                      const fl_zk_leader_isr_t *l, int32_t expected_version,
                                      int32_t *new_version, fl_error_t *err);
/* The store's bucket_leader_set: read, then replace at that version. */
int fl_metastore_zk_bucket_leader_set(fl_metastore_t *ms, int64_t table_id,
                                      int64_t partition_id, int32_t bucket,
                                      const fl_ms_bucket_t *b, fl_error_t *err);

#endif
