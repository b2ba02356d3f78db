/*
 * server_cluster.c — `flussd coordinator` and `flussd tablet`
 * (server_cluster.h).
 */
#define _GNU_SOURCE
#include "server_cluster.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"
#include "metastore_zk.h"
#include "proto_api.h"
#include "server_call.h"
#include "server_config.h"

#define FL_MEMBERSHIP_POLL_MS 300
#define FL_COORDINATOR_POLL_MS 300
/* While a tablet server knows no active coordinator (it registered first,
 * as a cluster starts): a client's INIT_WRITER or catalog read it passes
 * on would fail until it looks again, so it looks often. */
#define FL_COORDINATOR_FIND_MS 20

/* SIGINT/SIGTERM arrived (they are blocked: taken here, not delivered). */
static bool fl_signalled(const sigset_t *sigs, int wait_ms, int *signum) {
    struct timespec ts = {wait_ms / 1000, (long)(wait_ms % 1000) * 1000000L};
    int s = sigtimedwait(sigs, NULL, &ts);
    if (s > 0) {
        *signum = s;
        return true;
    }
    return false;
}

/* The internal and the client endpoint of a registration's listeners: the
 * internal one by name; for clients the first other one (the internal one
 * when it is the only one). */
static int fl_split_listeners(const char *text, const char *internal_name, fl_listener_addr_t *internal,
                              fl_listener_addr_t *client) {
    fl_listener_addr_t l[FL_LISTENERS_MAX];
    size_t n;
    if (!text || fl_parse_listeners(text, l, FL_LISTENERS_MAX, &n) != 0) return -1;
    const fl_listener_addr_t *in = fl_listener_find(l, n, internal_name);
    if (!in) return -1;
    *internal = *in;
    *client = *in;
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i].name, internal_name) != 0) {
            *client = l[i];
            break;
        }
    return 0;
}

/* ---- the coordinator ---- */

typedef struct fl_known_tablet {
    int32_t id;
    int64_t incarnation;
} fl_known_tablet_t;

typedef struct fl_membership {
    fl_coordinator_server_t *cs;
    fl_metastore_t *ms;
    const fl_cluster_opts_t *o;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stopping;
    bool lost;         /* the ZooKeeper session is gone: leadership with it */
    size_t known_count;
    fl_known_tablet_t known[FL_CATALOG_TABLET_SERVERS_MAX];
} fl_membership_t;

static void fl_membership_pass(fl_membership_t *m) {
    fl_zk_tablet_server_t *live = NULL;
    size_t n = 0;
    fl_error_t err;
    if (fl_zk_tablet_servers_list(fl_metastore_zk_conn(m->ms), &live, &n, &err)) {
        FL_WARN("coordinator: listing tablet servers: %s", err.msg);
        return;
    }
    /* gone, or registered again (a new incarnation: a restart) */
    for (size_t k = 0; k < m->known_count;) {
        bool same = false;
        for (size_t i = 0; i < n && !same; i++)
            same = live[i].id == m->known[k].id && live[i].incarnation == m->known[k].incarnation;
        if (same) {
            k++;
            continue;
        }
        fl_coordinator_server_tablet_down(m->cs, m->known[k].id);
        m->known[k] = m->known[--m->known_count];
    }
    for (size_t i = 0; i < n; i++) {
        bool known = false;
        for (size_t k = 0; k < m->known_count && !known; k++) known = m->known[k].id == live[i].id;
        if (known || m->known_count == FL_CATALOG_TABLET_SERVERS_MAX) continue;
        fl_listener_addr_t in, cl;
        if (fl_split_listeners(live[i].listeners, m->o->internal_name, &in, &cl)) {
            FL_WARN("coordinator: tablet server %d registered listeners '%s' without '%s'; "
                    "not served", live[i].id, live[i].listeners ? live[i].listeners : "",
                    m->o->internal_name);
            continue;
        }
        fl_endpoint_t ep = {.id = live[i].id, .port = cl.port};
        snprintf(ep.host, sizeof(ep.host), "%s", cl.host);
        fl_coordinator_server_tablet_up(m->cs, &ep, live[i].listeners, live[i].rack, in.host,
                                        in.port, live[i].incarnation);
        m->known[m->known_count++] = (fl_known_tablet_t){live[i].id, live[i].incarnation};
    }
    fl_zk_tablet_servers_free(live, n);
}

static void *fl_membership_main(void *arg) {
    fl_membership_t *m = arg;
    pthread_setname_np(pthread_self(), "cs-members");
    pthread_mutex_lock(&m->mu);
    while (!m->stopping) {
        pthread_mutex_unlock(&m->mu);
        if (!fl_zk_conn_alive(fl_metastore_zk_conn(m->ms))) {
            pthread_mutex_lock(&m->mu);
            m->lost = true;
            break;
        }
        fl_membership_pass(m);
        pthread_mutex_lock(&m->mu);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += FL_MEMBERSHIP_POLL_MS * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        if (!m->stopping) pthread_cond_timedwait(&m->cv, &m->mu, &ts);
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

int fl_cluster_coordinator_main(fl_coordinator_config_t *cc, const fl_cluster_opts_t *o,
                                const sigset_t *sigs, fl_error_t *err) {
    fl_metastore_t *ms = NULL;
    int rc = fl_metastore_zk_open(o->zk_address, o->zk_root, o->zk_session_timeout_ms,
                                  o->zk_connect_timeout_ms, &ms, err);
    if (rc) return rc;
    char id[512];
    snprintf(id, sizeof(id), "%s:%d", cc->advertised.host, cc->advertised.port);
    FL_INFO("coordinator %s: waiting to be elected (ZooKeeper %s)", id, o->zk_address);
    int signum = 0;
    for (bool active = false; !active;) {
        if ((rc = fl_metastore_zk_elect(ms, id, o->listeners, 1000, &active, err))) {
            ms->ops->close(ms);
            return rc;
        }
        if (!active && fl_signalled(sigs, 0, &signum)) {
            FL_INFO("coordinator %s: stopped while standby", id);
            ms->ops->close(ms);
            return 0;
        }
    }
    /* the tablet servers registered now; the membership thread follows */
    cc->metastore = ms;
    cc->coordinator_epoch = fl_metastore_zk_epoch(ms);
    cc->tablet_count = 0;
    fl_coordinator_server_t *cs = NULL;
    if ((rc = fl_coordinator_server_new(cc, &cs, err))) return rc;
    if ((rc = fl_coordinator_server_start(cs, err))) {
        fl_coordinator_server_destroy(cs);
        return rc;
    }
    FL_INFO("coordinator %s: active with epoch %d, serving on %s:%d", id,
            fl_metastore_zk_epoch(ms), cs->self.host, cs->self.port);
    fl_membership_t m = {.cs = cs, .ms = ms, .o = o};
    pthread_mutex_init(&m.mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&m.cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_create(&m.thread, NULL, fl_membership_main, &m);
    for (;;) {
        if (fl_signalled(sigs, 200, &signum)) {
            FL_INFO("coordinator %s: received %s, shutting down", id,
                    signum == SIGINT ? "SIGINT" : "SIGTERM");
            break;
        }
        pthread_mutex_lock(&m.mu);
        bool lost = m.lost;
        pthread_mutex_unlock(&m.mu);
        if (lost) {
            rc = fl_err_set(err, FLUSS_ERR__TRANSPORT,
                            "the ZooKeeper session expired: no longer the active coordinator");
            break;
        }
    }
    pthread_mutex_lock(&m.mu);
    m.stopping = true;
    pthread_cond_signal(&m.cv);
    pthread_mutex_unlock(&m.mu);
    pthread_join(m.thread, NULL);
    pthread_mutex_destroy(&m.mu);
    pthread_cond_destroy(&m.cv);
    fl_coordinator_server_destroy(cs); /* closes the store: the seat goes with the session */
    return rc;
}

/* ---- a tablet server ---- */

typedef struct fl_follow {
    fl_tablet_server_t *ts;
    const fl_cluster_opts_t *o;
    fl_zk_tablet_server_t reg;
    fl_zk_conn_t *zk;
    char coordinator[512]; /* the active one's internal endpoint, "host:port" */
} fl_follow_t;

static int fl_follow_register(fl_follow_t *f, fl_error_t *err) {
    int rc = fl_zk_conn_open(f->o->zk_address, f->o->zk_root, f->o->zk_session_timeout_ms,
                             f->o->zk_connect_timeout_ms, &f->zk, err);
    if (rc) return rc;
    f->reg.register_ms = fl_time_wall_ms();
    /* a previous session of ours may linger until ZooKeeper expires it */
    int64_t deadline = fl_time_mono_ms() + f->o->zk_session_timeout_ms + 2000;
    while ((rc = fl_zk_tablet_server_register(f->zk, &f->reg, err)) == FLUSS_ERR__STATE &&
           fl_time_mono_ms() < deadline)
        usleep(200 * 1000);
    if (rc) {
        fl_zk_conn_close(f->zk);
        f->zk = NULL;
        return rc;
    }
    FL_INFO("tablet server %d: registered (incarnation %lld) with listeners %s", f->reg.id,
            (long long)f->reg.incarnation, f->reg.listeners);
    return 0;
}

/* Points the client at the active coordinator's internal listener. */
static void fl_follow_coordinator(fl_follow_t *f) {
    char *cid = NULL, *listeners = NULL;
    fl_error_t err;
    if (fl_zk_active_coordinator(f->zk, &cid, &listeners, &err) || !listeners) {
        fl_free(cid);
        fl_free(listeners);
        return;
    }
    fl_listener_addr_t in, cl;
    if (fl_split_listeners(listeners, f->o->internal_name, &in, &cl) == 0) {
        char now[512];
        snprintf(now, sizeof(now), "%s:%d", in.host, in.port);
        if (strcmp(now, f->coordinator) != 0) {
            FL_INFO("tablet server %d: the active coordinator is %s (internal %s)", f->reg.id,
                    cid ? cid : "?", now);
            snprintf(f->coordinator, sizeof(f->coordinator), "%s", now);
            fl_rpc_client_set_peer(f->ts->coordinator, in.host, in.port);
        }
    } else {
        FL_WARN("tablet server %d: the coordinator's listeners '%s' have no '%s'", f->reg.id,
                listeners, f->o->internal_name);
    }
    fl_free(cid);
    fl_free(listeners);
}

#define FL_CONTROLLED_SHUTDOWN_TRIES 3
#define FL_CONTROLLED_SHUTDOWN_PAUSE_MS 500

/* Before it stops, a tablet server asks the coordinator to move its
 * leaderships to other in-sync replicas (CONTROLLED_SHUTDOWN), so clients
 * meet a leader change they are told of instead of a dead leader until
 * its session expires. Asked again while some bucket has no other
 * replica in sync (its followers may be catching up), a few times; then
 * it stops anyway. */
static void fl_tablet_controlled_shutdown(fl_tablet_server_t *ts, int32_t id,
                                          int64_t incarnation) {
    for (int attempt = 1; attempt <= FL_CONTROLLED_SHUTDOWN_TRIES; attempt++) {
        Fluss__ControlledShutdownRequest req = FLUSS__CONTROLLED_SHUTDOWN_REQUEST__INIT;
        req.tablet_server_id = id;
        req.tablet_server_epoch = (int32_t)incarnation; /* the wire's int32: its low bits */
        ProtobufCMessage *m = NULL;
        fl_error_t e;
        if (fl_server_call(ts->coordinator, FL_API_CONTROLLED_SHUTDOWN, &req.base,
                           &fluss__controlled_shutdown_response__descriptor, &m, &e)) {
            FL_WARN("tablet server %d: controlled shutdown: %s", id, e.msg);
        } else {
            size_t left = ((Fluss__ControlledShutdownResponse *)m)->n_remaining_leader_buckets;
            protobuf_c_message_free_unpacked(m, NULL);
            FL_INFO("tablet server %d: controlled shutdown: %zu bucket(s) still led here", id,
                    left);
            if (left == 0) return;
        }
        if (attempt < FL_CONTROLLED_SHUTDOWN_TRIES)
            usleep(FL_CONTROLLED_SHUTDOWN_PAUSE_MS * 1000);
    }
}

int fl_cluster_tablet_main(const fl_tablet_config_t *tc, const fl_cluster_opts_t *o,
                           const sigset_t *sigs, fl_error_t *err) {
    fl_tablet_server_t *ts = NULL;
    int rc = fl_tablet_server_new(tc, &ts, err);
    if (rc) return rc;
    /* the client exists before any request can use it; it connects once
     * the active coordinator is known */
    ts->coordinator = fl_rpc_client_new(ts->client_loop, "127.0.0.1", 0, NULL);
    /* clients in at once: a table not yet announced by the coordinator
     * answers UNKNOWN_TABLE_OR_BUCKET, which clients retry after a
     * metadata refresh (as against Fluss's tablet servers) */
    if ((rc = fl_tablet_server_start(ts, err)) || (rc = fl_tablet_server_accept(ts, err))) {
        fl_tablet_server_destroy(ts);
        return rc;
    }
    fl_follow_t f = {.ts = ts, .o = o};
    f.reg.id = tc->id;
    f.reg.listeners = (char *)o->listeners;
    f.reg.rack = (char *)o->rack;
    if ((rc = fl_follow_register(&f, err))) {
        fl_tablet_server_destroy(ts);
        return rc;
    }
    int signum = 0;
    for (;;) {
        fl_follow_coordinator(&f);
        int wait_ms = f.coordinator[0] ? FL_COORDINATOR_POLL_MS : FL_COORDINATOR_FIND_MS;
        if (fl_signalled(sigs, wait_ms, &signum)) break;
        if (!fl_zk_conn_alive(f.zk)) {
            FL_WARN("tablet server %d: the ZooKeeper session expired; registering again",
                    tc->id);
            fl_zk_conn_close(f.zk);
            f.zk = NULL;
            fl_error_t e;
            while (fl_follow_register(&f, &e)) {
                FL_WARN("tablet server %d: registering again: %s", tc->id, e.msg);
                if (fl_signalled(sigs, 1000, &signum)) goto stop;
            }
        }
    }
stop:
    FL_INFO("tablet server %d: received %s, shutting down", tc->id,
            signum == SIGINT ? "SIGINT" : "SIGTERM");
    if (f.zk) fl_tablet_controlled_shutdown(ts, tc->id, f.reg.incarnation);
    if (f.zk) fl_zk_conn_close(f.zk); /* the registration goes at once */
    fl_tablet_server_stop(ts);
    fl_tablet_server_destroy(ts);
    return 0;
}
