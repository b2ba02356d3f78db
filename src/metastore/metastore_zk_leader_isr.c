/*
 * metastore_zk_leader_isr.c — each bucket's LeaderAndIsr (Fluss's
 * .../buckets/<b>/leader_isr): read with its znode version, create, and
 * update only if nobody changed it since it was read (the version), every
 * write fenced by the coordinator epoch like all metadata writes. A
 * successful write also updates the cached bucket's leader and epoch.
 *
 * Thread rule: the store's (one thread).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common_alloc.h"
#include "metastore_zk_int.h"

static char *fl_msz_leader_isr_path(fl_ms_zk_t *m, const fl_zk_bucket_ref_t *b) {
    if (b->partition_id >= 0)
        return fl_zk_path(m->conn, FL_ZK_PARTITION_IDS "/%" PRId64 "/buckets/%" PRId32 "/leader_isr",
                          b->partition_id, b->bucket);
    return fl_zk_path(m->conn, FL_ZK_TABLE_IDS "/%" PRId64 "/buckets/%" PRId32 "/leader_isr",
                      b->table_id, b->bucket);
}

static void fl_msz_cache_leader(fl_ms_zk_t *m, const fl_zk_bucket_ref_t *b,
                                const fl_zk_leader_isr_t *l) {
    fl_ms_bucket_t *cb = fl_ms_bucket_mut(fl_msz_table_mut(m, b->table_id), b->partition_id,
                                          b->bucket);
    if (!cb) return;
    cb->leader = l->leader;
    cb->leader_epoch = l->leader_epoch;
    cb->isr_count = l->isr_count;
    memcpy(cb->isr, l->isr, sizeof(cb->isr));
    cb->bucket_epoch = l->bucket_epoch;
}

int fl_metastore_zk_bucket_leader_set(fl_metastore_t *ms, int64_t table_id,
                                      int64_t partition_id, int32_t bucket,
                                      const fl_ms_bucket_t *nb, fl_error_t *err) {
    fl_zk_bucket_ref_t ref = {.table_id = table_id, .partition_id = partition_id,
                              .bucket = bucket};
    fl_zk_leader_isr_t cur;
    int32_t version;
    int rc = fl_metastore_zk_leader_isr_get(ms, &ref, &cur, &version, err);
    if (rc) return rc;
    fl_zk_leader_isr_t l = {.leader = nb->leader, .leader_epoch = nb->leader_epoch,
                            .coordinator_epoch = FL_MSZ(ms)->epoch,
                            .bucket_epoch = cur.bucket_epoch + 1};
    int32_t n;
    const int32_t *isr = fl_ms_bucket_isr(nb, &n);
    l.isr_count = n;
    memcpy(l.isr, isr, (size_t)n * sizeof(int32_t));
    return fl_metastore_zk_leader_isr_update(ms, &ref, &l, version, NULL, err);
}

int fl_metastore_zk_leader_isr_get(fl_metastore_t *ms, const fl_zk_bucket_ref_t *b,
                                   fl_zk_leader_isr_t *out, int32_t *version, fl_error_t *err) {
    fl_ms_zk_t *m = FL_MSZ(ms);
    char *path = fl_msz_leader_isr_path(m, b);
    fl_buf_t buf;
    fl_buf_init(&buf);
    struct Stat st;
    bool missing;
    int rc = fl_zk_get(m->conn, path, &buf, &st, &missing, err);
    if (!rc && missing)
        rc = fl_err_set(err, FLUSS_ERR_LEADER_NOT_AVAILABLE_EXCEPTION,
                        "bucket %" PRId32 " of table %" PRId64 " (partition %" PRId64
                        ") has no LeaderAndIsr",
                        b->bucket, b->table_id, b->partition_id);
    if (!rc) rc = fl_zk_leader_isr_decode(buf.data, buf.len, out, err);
    if (!rc) *version = st.version;
    fl_buf_free(&buf);
    fl_free(path);
    return rc;
}

/* Writes path with one fenced op (create, or set at version); maps the
 * op's failure. */
static int fl_msz_leader_isr_write(fl_ms_zk_t *m, const fl_zk_bucket_ref_t *b,
                                   const fl_zk_leader_isr_t *l, bool create, int32_t version,
                                   int32_t *new_version, fl_error_t *err) {
    if (l->isr_count < 0 || l->isr_count > FL_REPLICAS_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "isr of %" PRId32 " replicas",
                          l->isr_count);
    fl_zk_txn_t x;
    int rc = fl_msz_begin(m, &x, err);
    if (rc) {
        fl_zk_txn_free(&x);
        return rc;
    }
    char *path = fl_msz_leader_isr_path(m, b);
    char *data = fl_zk_leader_isr_encode(l);
    size_t at = x.count;
    if (create) fl_zk_txn_create(&x, path, data, strlen(data));
    else fl_zk_txn_set(&x, path, data, strlen(data), version);
    int zrc;
    size_t failed;
    rc = fl_msz_commit(m, &x, &zrc, &failed, err);
    if (rc == FL_ZK_TXN_OP_FAILED) {
        if (zrc == ZNODEEXISTS)
            rc = fl_err_set(err, FLUSS_ERR__STATE, "bucket %" PRId32 " has a LeaderAndIsr already",
                            b->bucket);
        else if (zrc == ZBADVERSION)
            rc = fl_err_set(err, FLUSS_ERR__STATE,
                            "LeaderAndIsr of bucket %" PRId32
                            " changed since version %" PRId32 " was read",
                            b->bucket, version);
        else if (zrc == ZNONODE && create)
            rc = fl_err_set(err, b->partition_id >= 0 ? FLUSS_ERR_PARTITION_NOT_EXISTS
                                                       : FLUSS_ERR_TABLE_NOT_EXIST,
                            "bucket %" PRId32 " of table %" PRId64 " (partition %" PRId64
                            ") does not exist",
                            b->bucket, b->table_id, b->partition_id);
        else if (zrc == ZNONODE)
            rc = fl_err_set(err, FLUSS_ERR_LEADER_NOT_AVAILABLE_EXCEPTION,
                            "bucket %" PRId32 " has no LeaderAndIsr", b->bucket);
        else
            rc = err ? err->code : FLUSS_ERR__STATE;
    }
    if (!rc) {
        if (new_version) *new_version = create ? 0 : fl_zk_txn_stat(&x, at)->version;
        fl_msz_cache_leader(m, b, l);
    }
    fl_zk_txn_free(&x);
    return rc;
}

int fl_metastore_zk_leader_isr_create(fl_metastore_t *ms, const fl_zk_bucket_ref_t *b,
                                      const fl_zk_leader_isr_t *l, fl_error_t *err) {
    return fl_msz_leader_isr_write(FL_MSZ(ms), b, l, true, -1, NULL, err);
}

int fl_metastore_zk_leader_isr_update(fl_metastore_t *ms, const fl_zk_bucket_ref_t *b,
                                      const fl_zk_leader_isr_t *l, int32_t expected_version,
                                      int32_t *new_version, fl_error_t *err) {
    return fl_msz_leader_isr_write(FL_MSZ(ms), b, l, false, expected_version, new_version, err);
}
