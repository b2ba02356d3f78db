/*
 * replica_manager.c — hosted bucket replicas (replica_manager.h). A flat
 * array is enough for the bucket counts of one local server; lookups are
 * linear in the number of open replicas.
 */
#include "replica_manager.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common_alloc.h"
#include "common_fs.h"
#include "common_log.h"

void fl_replica_manager_init(fl_replica_manager_t *rm, const char *data_dir,
                             const fl_log_config_t *log_defaults) {
    memset(rm, 0, sizeof(*rm));
    rm->data_dir = fl_strdup(data_dir);
    rm->log_defaults = *log_defaults;
}

static void fl_replica_free(fl_replica_t *r) {
    fl_free(r->table_dir);
    fl_free(r);
}

void fl_replica_manager_close(fl_replica_manager_t *rm) {
    for (size_t i = 0; i < rm->count; i++) {
        fl_log_tablet_close(rm->replicas[i]->log);
        fl_replica_free(rm->replicas[i]);
    }
    fl_free(rm->replicas);
    fl_free(rm->data_dir);
    memset(rm, 0, sizeof(*rm));
}

fl_replica_t *fl_replica_manager_find(fl_replica_manager_t *rm, int64_t table_id,
                                      int64_t partition_id, int32_t bucket) {
    for (size_t i = 0; i < rm->count; i++) {
        fl_replica_t *r = rm->replicas[i];
        if (r->table_id == table_id && r->partition_id == partition_id && r->bucket == bucket)
            return r;
    }
    return NULL;
}

/* The leader-epoch → start-offset checkpoint beside the log (the batch
 * format of magic 0 cannot carry epochs). Text, as Kafka and Fluss write
 * it: version, entry count, then "epoch start_offset" lines. A local server
 * leads every bucket at epoch 0 from the log's first offset. */
static int fl_replica_epoch_checkpoint(const char *dir, const fl_log_tablet_t *log,
                                       fl_error_t *err) {
    size_t plen = strlen(dir) + sizeof("/leader-epoch-checkpoint");
    char *path = fl_malloc(plen);
    snprintf(path, plen, "%s/leader-epoch-checkpoint", dir);
    int rc = 0;
    if (access(path, F_OK) != 0) {
        char text[64];
        int n = snprintf(text, sizeof(text), "0\n1\n0 %" PRId64 "\n", log->log_start_offset);
        if (fl_fs_write_atomic(path, text, (size_t)n, err))
            rc = fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "leader epoch checkpoint: %s",
                            path);
    }
    fl_free(path);
    return rc;
}

static char *fl_table_dir(const fl_replica_manager_t *rm, const char *db, const char *table,
                          int64_t table_id) {
    size_t n = strlen(rm->data_dir) + strlen(db) + strlen(table) + 48;
    char *dir = fl_malloc(n);
    snprintf(dir, n, "%s/%s/%s-%" PRId64, rm->data_dir, db, table, table_id);
    return dir;
}

int fl_replica_manager_open(fl_replica_manager_t *rm, const char *db, const char *table,
                            int64_t table_id, int64_t partition_id, const char *partition_name,
                            int32_t bucket, int64_t ttl_ms, fl_replica_t **out, fl_error_t *err) {
    fl_replica_t *r = fl_replica_manager_find(rm, table_id, partition_id, bucket);
    if (r) {
        *out = r;
        return 0;
    }
    if (!rm->data_dir)
        return fl_err_set(err, FLUSS_ERR_LOG_STORAGE_EXCEPTION, "this server hosts no bucket data");
    char *tdir = fl_table_dir(rm, db, table, table_id);
    char dir[4096];
    if (partition_id >= 0)
        snprintf(dir, sizeof(dir), "%s/%s-p%" PRId64 "/log-%d", tdir, partition_name ? partition_name : "",
                 partition_id, bucket);
    else
        snprintf(dir, sizeof(dir), "%s/log-%d", tdir, bucket);
    fl_log_config_t cfg = rm->log_defaults;
    cfg.ttl_ms = ttl_ms;
    fl_log_tablet_t *log = NULL;
    int rc = fl_log_tablet_open(dir, &cfg, &log, err);
    if (!rc) rc = fl_replica_epoch_checkpoint(dir, log, err);
    if (rc) {
        if (log) fl_log_tablet_close(log);
        fl_free(tdir);
        return rc;
    }
    r = fl_calloc(1, sizeof(*r));
    r->table_id = table_id;
    r->partition_id = partition_id;
    r->bucket = bucket;
    r->table_dir = tdir;
    r->log = log;
    if (rm->count == rm->cap) {
        rm->cap = rm->cap ? rm->cap * 2 : 16;
        rm->replicas = fl_realloc(rm->replicas, rm->cap * sizeof(*rm->replicas));
    }
    rm->replicas[rm->count++] = r;
    *out = r;
    return 0;
}

int fl_replica_manager_drop_table(fl_replica_manager_t *rm, const char *db, const char *table,
                                  int64_t table_id, fl_error_t *err) {
    if (!rm->data_dir) return 0; /* a server without bucket data (tests) */
    for (size_t i = rm->count; i-- > 0;) {
        fl_replica_t *r = rm->replicas[i];
        if (r->table_id != table_id) continue;
        fl_log_tablet_close(r->log);
        fl_replica_free(r);
        memmove(&rm->replicas[i], &rm->replicas[i + 1], (rm->count - i - 1) * sizeof(*rm->replicas));
        rm->count--;
    }
    char *tdir = fl_table_dir(rm, db, table, table_id);
    int rc = fl_fs_remove_tree(tdir, err);
    if (rc) FL_WARN("dropping %s: %s", tdir, err->msg);
    fl_free(tdir);
    return rc;
}

int fl_replica_manager_drop_partition(fl_replica_manager_t *rm, const char *db, const char *table,
                                      int64_t table_id, const char *partition_name,
                                      int64_t partition_id, fl_error_t *err) {
    if (!rm->data_dir) return 0;
    for (size_t i = rm->count; i-- > 0;) {
        fl_replica_t *r = rm->replicas[i];
        if (r->table_id != table_id || r->partition_id != partition_id) continue;
        fl_log_tablet_close(r->log);
        fl_replica_free(r);
        memmove(&rm->replicas[i], &rm->replicas[i + 1], (rm->count - i - 1) * sizeof(*rm->replicas));
        rm->count--;
    }
    char *tdir = fl_table_dir(rm, db, table, table_id);
    size_t n = strlen(tdir) + strlen(partition_name) + 32;
    char *pdir = fl_malloc(n);
    snprintf(pdir, n, "%s/%s-p%" PRId64, tdir, partition_name, partition_id);
    int rc = fl_fs_remove_tree(pdir, err);
    if (rc) FL_WARN("dropping %s: %s", pdir, err->msg);
    fl_free(pdir);
    fl_free(tdir);
    return rc;
}

void fl_replica_manager_retention(fl_replica_manager_t *rm, int64_t now_ms) {
    for (size_t i = 0; i < rm->count; i++) {
        fl_error_t err;
        if (fl_log_tablet_apply_retention(rm->replicas[i]->log, now_ms, &err))
            FL_WARN("retention: %s", err.msg);
    }
}
