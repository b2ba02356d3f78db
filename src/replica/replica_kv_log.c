/*
 * replica_kv_log.c — a replica as its kv tablet's log (replica_kv_log.h).
 */
#include "replica_kv_log.h"

#include "replica_replication.h"

static int64_t fl_rkl_start(void *r) { return fl_replica_log_start(r); }
static int64_t fl_rkl_end(void *r) { return fl_replica_log_end(r); }
static int64_t fl_rkl_hw(void *r) { return fl_replica_high_watermark(r); }
static int64_t fl_rkl_bound(void *r) { return fl_replica_apply_bound(r); }

static int fl_rkl_read(void *r, int64_t offset, size_t max_bytes, fl_buf_t *out,
                       fl_error_t *err) {
    return fl_replica_read_to_end(r, offset, max_bytes, out, err);
}

static int fl_rkl_append(void *r, uint8_t *batch, size_t len, int64_t now_ms,
                         fl_kv_appended_t *res, fl_error_t *err) {
    fl_replica_append_t a;
    int rc = fl_replica_append(r, batch, len, now_ms, &a, err);
    if (!rc)
        *res = (fl_kv_appended_t){a.base_offset, a.end_offset, a.duplicate,
                                  a.durable_wait_offset};
    return rc;
}

static const fl_kv_log_ops_t fl_replica_kv_log_ops = {
    fl_rkl_start, fl_rkl_end, fl_rkl_hw, fl_rkl_bound, fl_rkl_read, fl_rkl_append,
};

fl_kv_log_t fl_replica_kv_log(fl_replica_t *r) { return (fl_kv_log_t){&fl_replica_kv_log_ops, r}; }
