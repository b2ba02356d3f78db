/*
 * metastore_zk_servers.c — tablet-server registration (Fluss's ephemeral
 * /tabletservers/ids/<id>) with an incarnation epoch, and the list of live
 * servers the coordinator reads.
 *
 * The incarnation epoch is the registration znode's creation zxid
 * (KAFKA-7235's broker epoch, Fluss #1153): ZooKeeper orders every
 * creation, so a server that restarts always registers with a larger
 * epoch than its previous life, and requests stamped with the old one can
 * be told apart. The registration lives as long as the session.
 *
 * Thread rule: the connection's (one thread at a time).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "metastore_zk_int.h"

int fl_zk_tablet_server_register(fl_zk_conn_t *c, fl_zk_tablet_server_t *ts, fl_error_t *err) {
    if (ts->id < 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "tablet server id %" PRId32, ts->id);
    char *path = fl_zk_path(c, FL_ZK_SERVER_IDS "/%" PRId32, ts->id);
    char *data = fl_zk_tablet_server_encode(ts);
    struct Stat st;
    int zrc = zoo_create2(c->zh, path, data, (int)strlen(data), &ZOO_OPEN_ACL_UNSAFE,
                          ZOO_EPHEMERAL, NULL, 0, &st);
    int rc = 0;
    if (zrc == ZNODEEXISTS)
        rc = fl_err_set(err, FLUSS_ERR__STATE,
                        "tablet server %" PRId32
                        " is registered already (another server with this id, or this "
                        "server's previous session not expired yet)",
                        ts->id);
    else if (zrc != ZOK)
        rc = fl_zk_err(err, zrc, "create", path);
    else
        ts->incarnation = st.czxid;
    fl_free(path);
    free(data);
    return rc;
}

static int fl_zk_server_cmp(const void *a, const void *b) {
    int32_t x = ((const fl_zk_tablet_server_t *)a)->id;
    int32_t y = ((const fl_zk_tablet_server_t *)b)->id;
    return (x > y) - (x < y);
}

/* A server id znode name: decimal, no sign, fits int32. */
static int32_t fl_zk_server_id(const char *name) {
    size_t n = strlen(name);
    if (n == 0 || n > 10) return -1;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (name[i] < '0' || name[i] > '9') return -1;
        v = v * 10 + (name[i] - '0');
    }
    return v <= INT32_MAX ? (int32_t)v : -1;
}

int fl_zk_tablet_servers_list(fl_zk_conn_t *c, fl_zk_tablet_server_t **out, size_t *count,
                              fl_error_t *err) {
    *out = NULL;
    *count = 0;
    char *dir = fl_zk_path(c, FL_ZK_SERVER_IDS);
    struct String_vector kids;
    bool missing;
    int rc = fl_zk_children(c, dir, &kids, &missing, err);
    if (rc || missing) {
        fl_free(dir);
        return rc;
    }
    fl_zk_tablet_server_t *list = fl_calloc(kids.count ? (size_t)kids.count : 1, sizeof(*list));
    size_t n = 0;
    fl_buf_t buf;
    fl_buf_init(&buf);
    for (int32_t i = 0; i < kids.count && !rc; i++) {
        int32_t id = fl_zk_server_id(kids.data[i]);
        if (id < 0) continue; /* not a registration */
        char *path = fl_zk_path(c, FL_ZK_SERVER_IDS "/%s", kids.data[i]);
        struct Stat st;
        rc = fl_zk_get(c, path, &buf, &st, &missing, err);
        if (!rc && !missing) { /* missing: its session ended meanwhile */
            rc = fl_zk_tablet_server_decode(buf.data, buf.len, &list[n], err);
            if (rc) fl_err_prefix(err, "%s: ", path);
            list[n].id = id;
            list[n].incarnation = st.czxid;
            if (!rc) n++;
        }
        fl_free(path);
    }
    fl_buf_free(&buf);
    deallocate_String_vector(&kids);
    fl_free(dir);
    if (rc) {
        fl_zk_tablet_servers_free(list, n);
        return rc;
    }
    qsort(list, n, sizeof(*list), fl_zk_server_cmp);
    *out = list;
    *count = n;
    return 0;
}

void fl_zk_tablet_servers_free(fl_zk_tablet_server_t *servers, size_t count) {
    for (size_t i = 0; i < count; i++) fl_zk_tablet_server_clear(&servers[i]);
    fl_free(servers);
}
