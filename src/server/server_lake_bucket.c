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
 * timeout). A lake table's local segments above its lake offset are kept
 * until tiered (that guard is the log's); what lies below the local log
 * start (a table whose lake was turned on after its log was tiered to
 * remote storage) is read from the remote log's segments. Below both: a
 * log table's expired range is skipped (gone for every reader); a
 * primary-key bucket whose changelog expired below its lake offset is
 * written from its KV state (fl_kv_tablet_image), every row the lake held
 * of it position-deleted.
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
#include "common_time.h"
#include "lake_parquet_meta.h"
#include "log_remote_log.h"
#include "server_node.h"
#include "server_tablet.h"
#include "common_fs.h"
#include "common_uuid.h"
#include "common_vfs.h"
#include "kv_tablet.h"
#include "server_lake_index.h"
#include "server_tablet_kv.h"
#include "tier_deletes.h"
#include "tier_pk_key.h"
#include "tier_pk_sync.h"
#include "tier_writer.h"

#define FL_LAKE_BUCKET_BYTES_MAX ((size_t)256 << 20)
#define FL_LAKE_READ_BYTES ((size_t)8 << 20)
#define FL_LAKE_FILE_BYTES_MAX ((size_t)1 << 31) /* a lake file read whole (index rebuild) */

static const fl_schema_t *fl_lake_schema_of(void *ctx, int16_t schema_id) {
    const fl_hosted_table_t *t = ctx;
    if (schema_id < 1 || (size_t)schema_id > t->schema_count || !t->schema_ok[schema_id - 1])
        return NULL;
    return &t->schemas[schema_id - 1];
}

/* Feeds [start, hw) of r to w, at most FL_LAKE_BUCKET_BYTES_MAX; *end is
 * where it stopped (a batch boundary). */
static int fl_lake_feed(fl_replica_t *r, fl_tier_writer_t *w, int64_t start, int64_t *end,
                        size_t *total_bytes, fl_error_t *err) {
    int64_t pos = start, hw = fl_replica_high_watermark(r);
    size_t total = *total_bytes;
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
    *total_bytes = total;
    return rc;
}

/* The batches of remote segment s from *pos on, while *pos < until, into
 * w: read in chunks from the file's start, a chunk doubled when one batch
 * is larger. */
static int fl_lake_feed_segment(fl_replica_t *r, const fl_remote_segment_t *s,
                                fl_tier_writer_t *w, int64_t *pos, int64_t until, size_t *total,
                                fl_error_t *err) {
    uint64_t file_pos = 0;
    size_t chunk = FL_LAKE_READ_BYTES;
    fl_buf_t buf;
    fl_buf_init(&buf);
    int rc = 0;
    while (!rc && *pos < s->end_offset && *pos < until && *total < FL_LAKE_BUCKET_BYTES_MAX) {
        buf.len = 0;
        size_t got = 0;
        if ((rc = fl_remote_log_read_records(r->remote, s, file_pos, chunk, &buf, &got, err)))
            break;
        size_t at = 0;
        fl_batch_view_t b;
        int more;
        while ((more = fl_batch_parse_next(buf.data, buf.len, &at, &b, err)) == 0) {
            if (fl_batch_next_offset(&b) <= *pos) continue; /* before the range */
            if (b.base_offset != *pos) {
                rc = fl_err_set(err, FLUSS_ERR__STATE,
                                "the lake offset %" PRId64 " is not a batch boundary in remote "
                                "segment %s (a batch starts at %" PRId64 ")",
                                *pos, s->id, b.base_offset);
                break;
            }
            if ((rc = fl_tier_writer_add_batch(w, b.data, b.size, err))) break;
            *pos = fl_batch_next_offset(&b);
            *total += b.size;
            if (*pos >= until || *total >= FL_LAKE_BUCKET_BYTES_MAX) break;
        }
        if (!rc && more < 0) rc = more;
        if (rc) break;
        if (at == 0) {
            if (got < chunk || chunk >= FL_LAKE_BUCKET_BYTES_MAX)
                rc = fl_err_set(err, FLUSS_ERR_CORRUPT_MESSAGE,
                                "remote segment %s ends at offset %" PRId64 ", before its end "
                                "%" PRId64,
                                s->id, *pos, s->end_offset);
            chunk *= 2;
            continue;
        }
        file_pos += at;
    }
    fl_buf_free(&buf);
    return rc;
}

/* Feeds w from the bucket's remote log with what only remote storage
 * holds: [*pos, until), until being the local log's start (tiered before
 * the lake was turned on, or before the lake caught up). */
static int fl_lake_feed_remote(fl_replica_t *r, fl_tier_writer_t *w, int64_t *pos, int64_t until,
                               size_t *total, fl_error_t *err) {
    fl_remote_manifest_t m;
    memset(&m, 0, sizeof(m));
    fl_remote_log_manifest(r->remote, &m);
    int rc = 0;
    for (size_t i = 0; i < m.count && !rc && *pos < until && *total < FL_LAKE_BUCKET_BYTES_MAX;
         i++) {
        const fl_remote_segment_t *s = &m.segments[i];
        if (s->end_offset <= *pos) continue;
        if (s->start_offset > *pos) {
            rc = fl_err_set(err, FLUSS_ERR_LOG_OFFSET_OUT_OF_RANGE_EXCEPTION,
                            "offset %" PRId64 " is in neither the remote log (next segment "
                            "from %" PRId64 ") nor the local one (from %" PRId64 ")",
                            *pos, s->start_offset, until);
            break;
        }
        rc = fl_lake_feed_segment(r, s, w, pos, until, total, err);
    }
    fl_remote_manifest_free(&m);
    return rc;
}

typedef struct fl_lake_image {
    fl_tier_writer_t *w;
    int64_t end; /* the image's changelog offset (set before the first row) */
    int64_t ts_ms;
    int64_t rows;
} fl_lake_image_t;

static int fl_lake_image_row(void *arg, fl_row_t *row, fl_error_t *err) {
    fl_lake_image_t *im = arg;
    im->rows++;
    return fl_tier_writer_add_row(im->w, im->end - 1, im->ts_ms, FL_CHANGE_INSERT, row, err);
}

/* A primary-key bucket whose changelog expired before the lake had all of
 * it: its rows as of one offset (the KV state, kv_tablet.h
 * fl_kv_tablet_image) go into the lake as +I, each with __offset that
 * offset - 1 and __timestamp now (through the change hook: a row the
 * lake held for the key is position-deleted); *end is the offset, where
 * the next round follows the changelog on. */
static int fl_lake_feed_image(fl_tablet_server_t *ts, const fl_hosted_table_t *t,
                              fl_replica_t *r, fl_tier_writer_t *w, int64_t *end,
                              fl_error_t *err) {
    fl_kv_tablet_t *kt = NULL;
    int rc = fl_tablet_kv_acquire(ts->kv, t, r, &kt, err);
    if (rc) return rc;
    fl_lake_image_t im = {.w = w, .end = 0, .ts_ms = fl_time_wall_ms()};
    rc = fl_kv_tablet_image(kt, t->kv, fl_lake_image_row, &im, &im.end, err);
    fl_tablet_kv_release(ts->kv, r, kt);
    if (rc) return rc;
    *end = im.end;
    FL_INFO("lake tiering: %s.%s bucket %d: the changelog below %lld expired before the lake "
            "had it: %lld rows from the KV state as of offset %lld",
            t->database, t->name, r->bucket, (long long)fl_replica_earliest(r),
            (long long)im.rows, (long long)im.end);
    return 0;
}

/* The answer's entry of one written file. */
static void fl_lake_pb_file(const fl_ice_data_file_t *f, Fluss__PbLakeDataFile *pf,
                            Fluss__PbLakeColumnStats *cols, Fluss__PbLakeColumnStats **col_ptrs) {
    fluss__pb_lake_data_file__init(pf);
    pf->file_path = (char *)f->file_path;
    pf->record_count = f->record_count;
    pf->file_size = f->file_size_bytes;
    pf->n_columns = f->n_columns;
    pf->columns = col_ptrs;
    pf->split_offsets = (int64_t *)f->split_offsets;
    pf->n_split_offsets = f->n_split_offsets;
    for (size_t i = 0; i < f->n_columns; i++) {
        const fl_ice_column_stats_t *s = &f->columns[i];
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

static void fl_lake_reply(fl_buf_t *out, int32_t rid, int64_t end, const fl_tier_writer_result_t *res,
                          const fl_ice_data_file_t *deletes) {
    size_t n = res ? res->n_files : 0, ncols = 0;
    for (size_t i = 0; i < n; i++) ncols += res->files[i].file.n_columns;
    if (deletes) ncols += deletes->n_columns;
    Fluss__PbLakeDataFile *files = fl_calloc(n + 1, sizeof(*files));
    Fluss__PbLakeDataFile **file_ptrs = fl_calloc(n + 1, sizeof(*file_ptrs));
    Fluss__PbLakeColumnStats *cols = fl_calloc(ncols + 1, sizeof(*cols));
    Fluss__PbLakeColumnStats **col_ptrs = fl_calloc(ncols + 1, sizeof(*col_ptrs));
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        fl_lake_pb_file(&res->files[i].file, &files[i], cols + at, col_ptrs + at);
        at += res->files[i].file.n_columns;
        file_ptrs[i] = &files[i];
    }
    Fluss__TierLakeBucketResponse resp = FLUSS__TIER_LAKE_BUCKET_RESPONSE__INIT;
    resp.end_offset = end;
    resp.n_data_files = n;
    resp.data_files = file_ptrs;
    Fluss__PbLakeDataFile del;
    Fluss__PbLakeDataFile *del_ptr = &del;
    if (deletes) {
        fl_lake_pb_file(deletes, &del, cols + at, col_ptrs + at);
        resp.n_delete_files = 1;
        resp.delete_files = &del_ptr;
    }
    fl_server_reply(out, rid, &resp.base);
    fl_free(col_ptrs);
    fl_free(cols);
    fl_free(file_ptrs);
    fl_free(files);
}

/* The writer's options for table t from the request. */
/* The Parquet codec a round asks for (the lake table's
 * write.parquet.compression-codec, as the coordinator read it). */
static int32_t fl_lake_codec(const Fluss__TierLakeBucketRequest *req) {
    int32_t c = fl_pq_codec_of_name(req->compression);
    return c < 0 ? FL_PQ_CODEC_ZSTD : c;
}

static int fl_lake_writer_options(const Fluss__TierLakeBucketRequest *req,
                                  const fl_hosted_table_t *t, fl_tier_writer_options_t *o,
                                  fl_error_t *err) {
    fl_tier_writer_options_init(o);
    const fl_schema_t *s = fl_lake_schema_of((void *)t, (int16_t)t->schema_id);
    if (!s)
        return fl_err_set(err, FLUSS_ERR_SCHEMA_NOT_EXIST, "table %s.%s has no schema %d",
                          t->database, t->name, t->schema_id);
    if (req->n_field_ids != fl_tier_field_id_count(s))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "%zu lake field ids for a table of %zu columns whose types have %zu "
                          "(schema %d)",
                          req->n_field_ids, s->column_count, fl_tier_field_id_count(s),
                          t->schema_id);
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
    if (t->kv) o->kv_format = t->kv->kv_format;
    o->codec = fl_lake_codec(req);
    o->target_file_bytes = req->has_target_file_bytes && req->target_file_bytes > 0
                               ? (uint64_t)req->target_file_bytes
                               : 0;
    return 0;
}

/* ---- primary-key tables: position deletes through the lake index ---- */

typedef struct fl_lake_pk {
    const fl_schema_t *schema; /* the rows' layout: the current schema */
    fl_pk_index_t *x;
    fl_buf_t key;
} fl_lake_pk_t;

/* The change hook: +A/+I/+U write the row (deleting the key's live one),
 * -U/-D delete the live one and write nothing. */
static int fl_lake_pk_change(void *ctx, const fl_tier_record_t *rec, fl_tier_row_action_t *action,
                             fl_error_t *err) {
    fl_lake_pk_t *c = ctx;
    int rc = fl_tier_pk_key_of_row(c->schema, rec->row, &c->key, err);
    if (rc) {
        fl_err_prefix(err, "the record at offset %lld: ", (long long)rec->offset);
        return rc;
    }
    switch (rec->change_type) {
    case FL_CHANGE_APPEND_ONLY:
    case FL_CHANGE_INSERT:
    case FL_CHANGE_UPDATE_AFTER:
        fl_pk_index_round_put(c->x, c->key.data, c->key.len, rec->file, rec->position);
        *action = FL_TIER_ROW_WRITE;
        break;
    default:
        fl_pk_index_round_remove(c->x, c->key.data, c->key.len);
        *action = FL_TIER_ROW_SKIP;
        break;
    }
    return 0;
}

/* Brings the bucket's index to the round's base snapshot (tier_pk_sync.h). */
static int fl_lake_pk_sync(const Fluss__TierLakeBucketRequest *req, const fl_schema_t *s,
                           fl_pk_index_t *x, const char *what, fl_error_t *err) {
    if (!req->table_dir)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "a primary-key table's tiering call names no lake table directory");
    int32_t *keys = fl_calloc(s->primary_key.count + 1, sizeof(int32_t));
    for (size_t k = 0; k < s->primary_key.count; k++) {
        int col = fl_schema_column_index(s, s->primary_key.items[k]);
        keys[k] = col >= 0 ? req->field_ids[fl_tier_field_id_index(s, (size_t)col)] : -1;
    }
    fl_tier_pk_bucket_t b = {
        .table_dir = req->table_dir,
        .snapshot_id = req->has_base_snapshot_id ? req->base_snapshot_id : FL_ICE_NONE,
        .start = req->start_offset,
        .partition_values = (const char *const *)req->partition_values,
        .n_values = req->n_partition_values,
        .bucket = req->bucket_id,
        .key_field_ids = keys,
        .n_keys = s->primary_key.count,
        .max_file_bytes = FL_LAKE_FILE_BYTES_MAX,
    };
    fl_tier_pk_sync_how_t how;
    int rc = fl_tier_pk_sync(x, &b, &how, err);
    if (!rc && how == FL_TIER_PK_REBUILT && b.snapshot_id != FL_ICE_NONE)
        FL_INFO("lake tiering: %s: index rebuilt from snapshot %lld: %zu live keys at offset %lld",
                what, (long long)b.snapshot_id, fl_pk_index_live(x), (long long)b.start);
    fl_free(keys);
    return rc;
}

/* After the writer finished: seals the round and writes its position
 * deletes, if any, into *dels (path set once written). */
static int fl_lake_pk_seal(const Fluss__TierLakeBucketRequest *req, fl_pk_index_t *x, int64_t end,
                           const fl_tier_writer_result_t *res, fl_tier_delete_file_t *df,
                           bool *has_df, fl_error_t *err) {
    *has_df = false;
    const char **paths = fl_calloc(res->n_files + 1, sizeof(char *));
    for (size_t i = 0; i < res->n_files; i++) paths[i] = res->files[i].file.file_path;
    const fl_pk_delete_t *dels = NULL;
    size_t n_dels = 0;
    int rc = fl_pk_index_round_seal(x, paths, res->n_files, end, res->n_files ? paths[0] : NULL,
                                    &dels, &n_dels, err);
    fl_free(paths);
    if (rc || !n_dels) return rc;
    char uuid[FL_UUID_TEXT_LEN + 1], path[8192];
    fl_uuid_random(uuid);
    int n = snprintf(path, sizeof(path), "%s/%s-%d-deletes-%s.parquet", req->data_dir,
                     req->file_prefix, req->bucket_id, uuid);
    if (n < 0 || (size_t)n >= sizeof(path))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "the delete file's path is too long");
    int32_t codec = fl_lake_codec(req);
    if ((rc = fl_tier_deletes_write(path, dels, n_dels, codec, df, err))) {
        fl_vfs_unlink(path);
        return rc;
    }
    *has_df = true;
    if ((rc = fl_fs_fsync_dir(req->data_dir, err))) return rc;
    if (!res->n_files) fl_pk_index_round_set_witness(x, df->uri);
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
    fl_lake_pk_t pk = {0};
    fl_tier_delete_file_t df;
    bool has_df = false;
    fl_buf_init(&pk.key);
    char what[512] = "";
    int rc = fl_tablet_server_replica(ts, req->table_id, t, req->has_partition_id,
                                      req->partition_id, req->bucket_id, &r, err);
    if (rc) goto done;
    snprintf(what, sizeof(what), "%s.%s bucket %d (partition %lld)", t->database, t->name,
             req->bucket_id, req->has_partition_id ? (long long)req->partition_id : -1LL);
    fl_tier_writer_options_t o;
    if ((rc = fl_lake_writer_options(req, t, &o, err))) goto done;
    int64_t start = req->start_offset, earliest = fl_replica_log_start(r);
    bool image = false;
    if (t->has_primary_key) {
        pk.x = fl_lake_indexes_take(ts->lake_indexes, req->table_id,
                                    req->has_partition_id ? req->partition_id : -1, req->bucket_id,
                                    atomic_load(&r->lead_epoch));
        if (!pk.x) {
            rc = fl_err_set(err, FLUSS_ERR_NOT_LEADER_OR_FOLLOWER,
                            "a lake tiering round of %s is running already", what);
            goto done;
        }
        if ((rc = fl_lake_pk_sync(req, o.schema, pk.x, what, err))) goto done;
        /* a changelog that expired before it was tiered is a lake that
         * lacks changes: the bucket's KV state (the image) is written
         * instead, and every row the lake holds of the bucket is
         * position-deleted (the changes it missed, deletes included,
         * cannot be told one by one: the image replaces them whole) */
        if (start < fl_replica_earliest(r)) image = true;
        fl_pk_index_round_begin(pk.x);
        pk.schema = o.schema;
        o.on_change = fl_lake_pk_change;
        o.change_ctx = &pk;
    }
    if (start < fl_replica_earliest(r)) start = fl_replica_earliest(r); /* expired: gone */
    if (!image && start < earliest && !r->remote) {
        rc = fl_err_set(err, FLUSS_ERR_LOG_OFFSET_OUT_OF_RANGE_EXCEPTION,
                        "offsets %" PRId64 "..%" PRId64 " of the bucket are gone", start,
                        earliest);
        goto done;
    }
    if ((rc = fl_tier_writer_open(&o, &w, err))) goto done;
    int64_t end = start;
    size_t total = 0;
    const fl_tier_writer_result_t *res = NULL;
    if (image) {
        rc = fl_lake_feed_image(ts, t, r, w, &end, err);
        size_t replaced = rc ? 0 : fl_pk_index_live(pk.x);
        size_t left_out = rc ? 0 : fl_pk_index_round_remove_rest(pk.x);
        if (replaced)
            FL_INFO("lake tiering: %s: the image replaces the lake's %zu rows of the bucket "
                    "(%zu keys no longer in it)",
                    what, replaced, left_out);
    } else {
        /* below the local log: from the remote log's segments first */
        if (start < earliest) rc = fl_lake_feed_remote(r, w, &end, earliest, &total, err);
        if (!rc && end >= earliest) rc = fl_lake_feed(r, w, end, &end, &total, err);
    }
    if (!rc) rc = fl_tier_writer_finish(w, &res, err);
    if (!rc && pk.x) rc = fl_lake_pk_seal(req, pk.x, end, res, &df, &has_df, err);
    if (rc) {
        fl_tier_writer_abort(w);
        w = NULL;
        goto done;
    }
    fl_lake_reply(out, ctx->request_id, end, res, has_df ? &df.file : NULL);
done:
    if (rc && has_df) fl_vfs_unlink(df.path);
    if (has_df) fl_tier_delete_file_free(&df);
    if (rc && pk.x) fl_pk_index_round_begin(pk.x); /* drops the failed round */
    if (pk.x) fl_lake_indexes_give(ts->lake_indexes, pk.x);
    fl_buf_free(&pk.key);
    if (w) fl_tier_writer_close(w);
    fl_replica_unref(r);
    fl_hosted_table_unref(t);
    return rc;
}
