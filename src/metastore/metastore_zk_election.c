/*
 * metastore_zk_election.c — coordinator election and the coordinator
 * epoch (Fluss's /coordinators/active and /coordinators/epoch; Kafka's
 * controller znode and KAFKA-6082's epoch-version fencing).
 *
 * Election is ZooKeeper's: whoever creates the ephemeral
 * /coordinators/active is active; the others watch it and try again when
 * it goes (its owner's session closed or expired). The winner then bumps
 * the epoch with a compare-and-set on the epoch znode's version; that
 * version fences every later metadata write (fl_msz_commit), so a
 * coordinator that lost its seat without noticing cannot write: the epoch
 * znode moved on under it.
 *
 * Thread rule: the store's (one thread); the watch only wakes the waiter
 * through the connection's condition variable.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common_alloc.h"
#include "common_log.h"
#include "metastore_zk_int.h"

static int64_t fl_msz_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* epoch + 1, compare-and-set on the epoch znode's version */
static int fl_msz_bump_epoch(fl_ms_zk_t *m, fl_error_t *err) {
    char *path = fl_zk_path(m->conn, FL_ZK_COORD_EPOCH);
    char text[12];
    fl_zk_epoch_encode(FL_ZK_EPOCH_INITIAL - 1, text);
    int zrc = zoo_create(m->conn->zh, path, text, (int)strlen(text), &ZOO_OPEN_ACL_UNSAFE,
                         ZOO_PERSISTENT, NULL, 0);
    int rc = 0;
    if (zrc != ZOK && zrc != ZNODEEXISTS) {
        rc = fl_zk_err(err, zrc, "create", path);
        goto done;
    }
    fl_buf_t buf;
    fl_buf_init(&buf);
    struct Stat st;
    int32_t epoch;
    rc = fl_zk_get(m->conn, path, &buf, &st, NULL, err);
    if (!rc) rc = fl_zk_epoch_decode(buf.data, buf.len, &epoch, err);
    fl_buf_free(&buf);
    if (!rc && epoch == INT32_MAX)
        rc = fl_err_set(err, FLUSS_ERR__STATE, "coordinator epoch exhausted");
    if (rc) goto done;
    fl_zk_epoch_encode(epoch + 1, text);
    struct Stat after;
    zrc = zoo_set2(m->conn->zh, path, text, (int)strlen(text), st.version, &after);
    if (zrc == ZBADVERSION) {
        rc = fl_err_set(err, FLUSS_ERR_INVALID_COORDINATOR_EXCEPTION,
                        "another coordinator bumped the epoch past %" PRId32 " meanwhile", epoch);
        goto done;
    }
    if (zrc != ZOK) {
        rc = fl_zk_err(err, zrc, "set", path);
        goto done;
    }
    m->epoch = epoch + 1;
    m->epoch_version = after.version;
done:
    fl_free(path);
    return rc;
}

int fl_metastore_zk_elect(fl_metastore_t *ms, const char *id, const char *listeners, int wait_ms,
                          bool *active, fl_error_t *err) {
    fl_ms_zk_t *m = FL_MSZ(ms);
    *active = false;
    if (m->active && fl_zk_conn_alive(m->conn)) {
        *active = true;
        return 0;
    }
    m->active = false;
    m->epoch = -1;
    char *path = fl_zk_path(m->conn, FL_ZK_COORD_ACTIVE);
    char *data = fl_zk_coordinator_encode(id, listeners);
    int64_t deadline = fl_msz_now_ms() + (wait_ms > 0 ? wait_ms : 0);
    int rc = 0;
    for (;;) {
        uint64_t seen = fl_zk_changes(m->conn);
        int zrc = zoo_create(m->conn->zh, path, data, (int)strlen(data), &ZOO_OPEN_ACL_UNSAFE,
                             ZOO_EPHEMERAL, NULL, 0);
        if (zrc == ZOK) break;
        if (zrc != ZNODEEXISTS) {
            rc = fl_zk_err(err, zrc, "create", path);
            goto done;
        }
        /* someone is active: watch the seat, try again when it is free */
        struct Stat st;
        zrc = zoo_wexists(m->conn->zh, path, fl_zk_watch_wake, m->conn, &st);
        if (zrc == ZNONODE) continue;
        if (zrc != ZOK) {
            rc = fl_zk_err(err, zrc, "watch", path);
            goto done;
        }
        int64_t left = deadline - fl_msz_now_ms();
        if (left <= 0) goto done; /* standby */
        if (!fl_zk_conn_alive(m->conn)) {
            rc = fl_err_set(err, FLUSS_ERR__TRANSPORT, "ZooKeeper session expired");
            goto done;
        }
        fl_zk_wait_change(m->conn, seen, (int)left);
    }
    if ((rc = fl_msz_bump_epoch(m, err))) goto give_up;
    m->active = true;
    /* the metadata as it is now, whatever the previous coordinator wrote */
    if ((rc = fl_msz_reload(m, err))) goto give_up;
    FL_INFO("coordinator %s is active with epoch %" PRId32, id, m->epoch);
    *active = true;
    goto done;
give_up:
    m->active = false;
    m->epoch = -1;
    zoo_delete(m->conn->zh, path, -1);
done:
    fl_free(path);
    free(data);
    return rc;
}

int32_t fl_metastore_zk_epoch(fl_metastore_t *ms) {
    fl_ms_zk_t *m = FL_MSZ(ms);
    return m->active && fl_zk_conn_alive(m->conn) ? m->epoch : -1;
}

int fl_zk_active_coordinator(fl_zk_conn_t *c, char **id, char **listeners, fl_error_t *err) {
    *id = *listeners = NULL;
    char *path = fl_zk_path(c, FL_ZK_COORD_ACTIVE);
    fl_buf_t buf;
    fl_buf_init(&buf);
    bool missing;
    int rc = fl_zk_get(c, path, &buf, NULL, &missing, err);
    if (!rc && !missing) rc = fl_zk_coordinator_decode(buf.data, buf.len, id, listeners, err);
    fl_buf_free(&buf);
    fl_free(path);
    return rc;
}

int fl_metastore_zk_active_coordinator(fl_metastore_t *ms, char **id, char **listeners,
                                       fl_error_t *err) {
    return fl_zk_active_coordinator(FL_MSZ(ms)->conn, id, listeners, err);
}
