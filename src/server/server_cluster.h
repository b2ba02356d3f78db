/*
 * server_cluster.h — the processes of cluster mode: `flussd coordinator`
 * and `flussd tablet`, each one server role on ZooKeeper (metastore_zk.h),
 * talking to the others over TCP on internal listeners with the same
 * messages local mode sends through in-process connections.
 *
 * A coordinator opens the ZooKeeper store, waits to be elected (a standby
 * waits here), then serves: its membership thread lists the registered
 * tablet servers, connects to each one's internal listener and tells it
 * every table (fl_coordinator_server_tablet_up), and forgets the ones
 * whose registration went. Losing the ZooKeeper session ends the process
 * (another coordinator takes over; the epoch fences this one's writes).
 *
 * A tablet server starts its listeners, registers (the ephemeral
 * /tabletservers/ids/<id> with its listeners and rack), and follows the
 * active coordinator: its client to the coordinator's internal listener
 * is pointed at whoever is active. A session that expired is opened again
 * and the server registers again (a new incarnation).
 *
 * Both return when SIGINT or SIGTERM arrives (blocked in sigs by the
 * caller) after a clean stop: the registration goes with the session.
 */
#ifndef FL_SERVER_CLUSTER_H
#define FL_SERVER_CLUSTER_H

#include <signal.h>

#include "server_coordinator.h"
#include "server_tablet.h"

typedef struct fl_cluster_opts {
    const char *zk_address;     /* zookeeper.address */
    const char *zk_root;        /* zookeeper.path.root */
    int zk_session_timeout_ms;  /* zookeeper.client.session-timeout */
    int zk_connect_timeout_ms;  /* zookeeper.client.connection-timeout */
    /* this process's listeners as the others reach them
     * ("FLUSS://h:9124,INTERNAL://h:9224"): what is registered */
    const char *listeners;
    const char *internal_name;  /* internal.listener.name */
    const char *rack;           /* tablet-server.rack; NULL: none */
} fl_cluster_opts_t;

int fl_cluster_coordinator_main(fl_coordinator_config_t *cc, const fl_cluster_opts_t *o,
                                const sigset_t *sigs, fl_error_t *err);
int fl_cluster_tablet_main(const fl_tablet_config_t *tc, const fl_cluster_opts_t *o,
                           const sigset_t *sigs, fl_error_t *err);

#endif
