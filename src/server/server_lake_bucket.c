/*
 * server_lake_bucket.c — a bucket leader's part of a lake tiering round:
 * TIER_LAKE_BUCKET (fluss-c's key 1903, from the coordinator's tiering
 * service, server_lake_tier.h). The leader reads its log from the lake
 * offset up to its high watermark, whole batches only, writes them as
 * Parquet data files into the lake table's data directory (tier_writer.h)
 * and answers what each file holds, for the coordinator's manifest, and
 * where its range ended: the bucket's lake offset once committed.
 *
 * A call tiers at most FL_LAKE_BUCKET_BYTES_MAX of log; the rest waits for
 * the next round (an answer must come within the coordinator's request
 * timeout). The range must be in the local log: a lake table's segments
 * above its lake offset are kept until tiered (that guard is the log's),
 * so a start below the local log start is refused rather than skipped.
 * Files of a failed call are deleted; files of an answered call that the
 * coordinator does not commit are its to delete.
 *
 * Thread rule: runs on the tablet server's worker pool (file I/O).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common_alloc.h"
#include "common_log.h"
#include "lake_parquet_meta.h"
#include "server_node.h"
#include "server_tablet.h"
#include "tier_writer.h"

#define FL_LAKE_BUCKET_BYTES_MAX ((size_t)256 << 20)
#define FL_LAKE_READ_BYTES ((size_t)8 << 20)

static const fl_schema_t *fl_lake_schema_of(void *ctx, int16_t schema_id) {
    const fl_hosted_table_t *t = ctx;
    if (schema_id < 1 || (size_t)schema_id > t->schema_count || !t->schema_ok[schema_id - 1])
        return NULL;
    return &t->schemas[schema_id - 1];
}

/* Feeds [start, hw) of r to w, at most FL_LAKE_BUCKET_BYTES_MAX; *end is
 * where it stopped (a batch boundary). */
static int fl_lake_feed(fl_replica_t *r, fl_tier_writer_t *w, int64_t start, int64_t *end,
                        fl_error_t *err) {
    int64_t pos = start, hw = fl_replica_high_watermark(r);
    size_t total = 0;
    fl_buf_t buf;
    fl_buf_init(&buf);
    int rc = 0;
    while (pos < hw && total < FL_LAKE_BUCKET_BYTES_MAX && !rc) {
        buf.len = 0;
        if ((rc = fl_replica_read(r, pos, FL_LAKE_READ_BYTES, &buf, err))) break;
        if (buf.len == 0) break;
        size_t at = 0;
        fl_batch_view_t b;
        int more;
        while (!rc && (more = fl_batch_parse_next(buf.data, buf.len, &at, &b, err)) == 0) {
            if (fl_batch_next_offset(&b) <= pos) continue; /* before the range */
            if (b.base_offset != pos) {
                rc = fl_err_set(err, FLUSS_ERR__STATE,
                                "the lake offset %" PRId64 " is not a batch boundary (a batch "
                                "starts at %" PRId64 ")",
                                pos, b.base_offset);
                break;
            }
            if (fl_batch_next_offset(&b) > hw) break;
            if ((rc = fl_tier_writer_add_batch(w, b.data, b.size, err))) break;
            pos = fl_batch_next_offset(&b);
            total += b.size;
        }
        if (!rc && more < 0) rc = more;
        if (!rc && at == 0) break; /* nothing whole came back */
    }
    fl_buf_free(&buf);
    *end = pos;
    return rc;
}

/* The answer's entry of one written file. */
static void fl_lake_pb_file(const fl_tier_file_t *f, Fluss__PbLakeDataFile *pf,
                            Fluss__PbLakeColumnStats *cols, Fluss__PbLakeColumnStats **col_ptrs) {
    fluss__pb_lake_data_file__init(pf);
    pf->file_path = (char *)f->file.file_path;
    pf->record_count = f->file.record_count;
    pf->file_size = f->file.file_size_bytes;
    pf->n_columns = f->file.n_columns;
    pf->columns = col_ptrs;
    pf->split_offsets = (int64_t *)f->file.split_offsets;
    pf->n_split_offsets = f->file.n_split_offsets;
    for (size_t i = 0; i < f->file.n_columns; i++) {
        const fl_ice_column_stats_t *s = &f->file.columns[i];
        Fluss__PbLakeColumnStats *c = &cols[i];
        fluss__pb_lake_column_stats__init(c);
        c->field_id = s->field_id;
        c->has_column_size = s->column_size != FL_ICE_NONE;
        c->column_size = s->column_size;
        c->has_value_count = s->value_count != FL_ICE_NONE;
        c->value_count = s->value_count;
        c->has_null_count = s->null_count != FL_ICE_NONE;
        c->null_count = s->null_count;
        c->has_nan_count = s->nan_count != FL_ICE_NONE;
        c->nan_count = s->nan_count;
        c->has_lower = s->lower.p != NULL;
        c->lower = (ProtobufCBinaryData){s->lower.len, (uint8_t *)s->lower.p};
        c->has_upper = s->upper.p != NULL;
        c->upper = (ProtobufCBinaryData){s->upper.len, (uint8_t *)s->upper.p};
        col_ptrs[i] = c;
    }
}

static void fl_lake_reply(fl_buf_t *out, int32_t rid, int64_t end, const fl_tier_writer_result_t *res) {
    size_t n = res ? res->n_files : 0, ncols = 0;
    for (size_t i = 0; i < n; i++) ncols += res->files[i].file.n_columns;
    Fluss__PbLakeDataFile *files = fl_calloc(n + 1, sizeof(*files));
    Fluss__PbLakeDataFile **file_ptrs = fl_calloc(n + 1, sizeof(*file_ptrs));
    Fluss__PbLakeColumnStats *cols = fl_calloc(ncols + 1, sizeof(*cols));
    Fluss__PbLakeColumnStats **col_ptrs = fl_calloc(ncols + 1, sizeof(*col_ptrs));
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        fl_lake_pb_file(&res->files[i], &files[i], cols + at, col_ptrs + at);
        at += res->files[i].file.n_columns;
        file_ptrs[i] = &files[i];
    }
    Fluss__TierLakeBucketResponse resp = FLUSS__TIER_LAKE_BUCKET_RESPONSE__INIT;
    resp.end_offset = end;
    resp.n_data_files = n;
    resp.data_files = file_ptrs;
    fl_server_reply(out, rid, &resp.base);
    fl_free(col_ptrs);
    fl_free(cols);
    fl_free(file_ptrs);
    fl_free(files);
}

/* The writer's options for table t from the request. */
static int fl_lake_writer_options(const Fluss__TierLakeBucketRequest *req,
                                  const fl_hosted_table_t *t, fl_tier_writer_options_t *o,
                                  fl_error_t *err) {
    fl_tier_writer_options_init(o);
    const fl_schema_t *s = fl_lake_schema_of((void *)t, (int16_t)t->schema_id);
    if (!s)
        return fl_err_set(err, FLUSS_ERR_SCHEMA_NOT_EXIST, "table %s.%s has no schema %d",
                          t->database, t->name, t->schema_id);
    if (req->n_field_ids != s->column_count + FL_TIER_SYSTEM_COLUMNS)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "%zu lake field ids for a table of %zu columns (schema %d)",
                          req->n_field_ids, s->column_count, t->schema_id);
    int format = fl_log_format_from_name(t->log_format);
    if (format < 0)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION, "unknown log format %s",
                          t->log_format);
    o->dir = req->data_dir;
    o->prefix = req->file_prefix;
    o->bucket = req->bucket_id;
    o->schema = s;
    o->schema_id = (int16_t)t->schema_id;
    o->schema_of = fl_lake_schema_of;
    o->schema_ctx = (void *)t;
    o->field_ids = req->field_ids;
    o->log_format = (fl_log_format_t)format;
    o->codec = req->compression && strcasecmp(req->compression, "uncompressed") == 0
                   ? FL_PQ_CODEC_UNCOMPRESSED
                   : FL_PQ_CODEC_ZSTD;
    o->target_file_bytes = req->has_target_file_bytes && req->target_file_bytes > 0
                               ? (uint64_t)req->target_file_bytes
                               : 0;
    return 0;
}

FL_API_HANDLER(fl_api_tier_lake_bucket) {
    const Fluss__TierLakeBucketRequest *req = (const Fluss__TierLakeBucketRequest *)m;
    fl_tablet_server_t *ts = ctx->ts;
    if (req->coordinator_epoch < atomic_load(&ts->coordinator_epoch))
        return fl_err_set(err, FLUSS_ERR_INVALID_COORDINATOR_EXCEPTION,
                          "coordinator epoch %d is older than %d", req->coordinator_epoch,
                          atomic_load(&ts->coordinator_epoch));
    fl_hosted_table_t *t = fl_tablet_catalog_table(ts->catalog, req->table_id);
    fl_replica_t *r = NULL;
    fl_tier_writer_t *w = NULL;
    int rc = fl_tablet_server_replica(ts, req->table_id, t, req->has_partition_id,
                                      req->partition_id, req->bucket_id, &r, err);
    if (rc) goto done;
    if (t->has_primary_key) {
        rc = fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                        "primary-key table %s.%s: its lake tiering (position deletes) is not "
                        "built yet",
                        t->database, t->name);
        goto done;
    }
    fl_tier_writer_options_t o;
    if ((rc = fl_lake_writer_options(req, t, &o, err))) goto done;
    int64_t start = req->start_offset, earliest = fl_replica_log_start(r);
    if (start < fl_replica_earliest(r)) start = fl_replica_earliest(r); /* expired: gone */
    if (start < earliest) {
        rc = fl_err_set(err, FLUSS_ERR_LOG_OFFSET_OUT_OF_RANGE_EXCEPTION,
                        "offsets %" PRId64 "..%" PRId64 " of the bucket are in remote storage "
                        "only, which lake tiering does not read yet",
                        start, earliest);
        goto done;
    }
    if ((rc = fl_tier_writer_open(&o, &w, err))) goto done;
    int64_t end = start;
    const fl_tier_writer_result_t *res = NULL;
    rc = fl_lake_feed(r, w, start, &end, err);
    if (!rc) rc = fl_tier_writer_finish(w, &res, err);
    if (rc) {
        fl_tier_writer_abort(w);
        w = NULL;
        goto done;
    }
    fl_lake_reply(out, ctx->request_id, end, res);
done:
    if (w) fl_tier_writer_close(w);
    fl_replica_unref(r);
    fl_hosted_table_unref(t);
    return rc;
}
