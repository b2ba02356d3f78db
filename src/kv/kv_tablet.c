/*
 * kv_tablet.c — a bucket's primary-key state (kv_tablet.h): the put path
 * (read, merge, changelog, append, pre-write buffer, RocksDB below the
 * high watermark) with auto-increment values, LOOKUP's inserts of missing
 * keys through it, the reads, and the replay at open.
 */
#include "kv_tablet.h"

#include <stdlib.h>
#include <string.h>

#include "arrow_decode.h"
#include "arrow_rows.h"
#include "common_alloc.h"
#include "common_log.h"
#include "common_time.h"
#include "kv_merge.h"
#include "record_batch.h"
#include "record_builder.h"
#include "record_row_builder.h"
#include "record_kv.h"
#include "types_row_compacted.h"
#include "types_row_field.h"

#define FL_KV_REPLAY_READ_BYTES (8u << 20)


static int16_t fl_kv_value_schema(const uint8_t *v) {
    return (int16_t)((uint16_t)v[0] | (uint16_t)v[1] << 8);
}

static void fl_kv_value_begin(fl_buf_t *b, int16_t schema_id) {
    fl_buf_reset(b);
    uint8_t id[2] = {(uint8_t)schema_id, (uint8_t)((uint16_t)schema_id >> 8)};
    fl_buf_append(b, id, 2);
}

/* A value that is not a row of the table's kv format but is a whole row
 * of the other one: the refusal says so, as PRODUCE_LOG's does for log
 * formats (record_validate.h). row is left all NULL. */
static int fl_kv_name_mismatch(const fl_kv_table_t *t, int rc, const uint8_t *p, size_t len,
                               const fl_datatype_t *const *types, size_t n, fl_row_t *row,
                               fl_error_t *err) {
    fl_row_format_t other = t->kv_format == FL_ROW_INDEXED ? FL_ROW_COMPACTED : FL_ROW_INDEXED;
    fl_error_t ignored;
    if (fl_row_decode(other, p, len, types, n, row, &ignored)) return rc;
    fl_row_reset(row, n);
    return fl_err_set(err, rc, "the value is not a %s row; this table's kv format is %s (it is %s "
                      "%s row)",
                      fl_row_format_name(t->kv_format), fl_row_format_name(t->kv_format),
                      other == FL_ROW_INDEXED ? "an" : "a", fl_row_format_name(other));
}

/* Decodes a stored value (or schema id + incoming row) into row, in the
 * latest schema's layout (columns matched by id). */
static int fl_kv_decode_value(const fl_kv_table_t *t, int16_t schema_id, const uint8_t *row_bytes,
                              size_t len, fl_row_t *row, fl_error_t *err) {
    size_t n = 0;
    const fl_datatype_t *const *types = t->types(t->types_ctx, schema_id, &n);
    if (!types)
        return fl_err_set(err, FLUSS_ERR_SCHEMA_NOT_EXIST, "The schema id %d does not exist.",
                          schema_id);
    int rc = fl_row_decode(t->kv_format, row_bytes, len, types, n, row, err);
    if (rc) return fl_kv_name_mismatch(t, rc, row_bytes, len, types, n, row, err);
    fl_kv_row_to_latest(t, schema_id, row);
    return 0;
}

/* ---- opening and replay ---- */

static const fl_datatype_t *const *fl_kv_latest_types(const fl_kv_table_t *t, size_t *n) {
    return t->types(t->types_ctx, t->latest_schema_id, n);
}

/* What a replay carries from batch to batch. */
typedef struct fl_kv_replay {
    fl_kv_write_t *w;
    fl_row_t row;
    fl_buf_t key, val;
    int64_t from;       /* records below this offset are in the store already */
    int64_t records;    /* applied to w */
    int64_t row_delta;  /* the row count's move: +I/+U add a row, -U/-D take one */
    int16_t schema_id;  /* of the batch being replayed */
} fl_kv_replay_t;

/* One changelog record at offset: the row count follows its change type;
 * a row (decoded by fetch under the batch's schema, then moved into the
 * latest's layout) goes into the write. */
static int fl_kv_replay_record(const fl_kv_table_t *t, fl_kv_replay_t *rp, int64_t offset,
                               fl_change_type_t ct,
                               int (*fetch)(void *arg, fl_row_t *row, fl_error_t *err),
                               void *arg, fl_error_t *err) {
    if (offset < rp->from) return 0;
    if (ct == FL_CHANGE_INSERT || ct == FL_CHANGE_UPDATE_AFTER) rp->row_delta++;
    else if (ct == FL_CHANGE_UPDATE_BEFORE || ct == FL_CHANGE_DELETE) rp->row_delta--;
    if (ct == FL_CHANGE_UPDATE_BEFORE) return 0;
    int rc = fetch(arg, &rp->row, err);
    if (rc) return rc;
    size_t latest_n = 0;
    const fl_datatype_t *const *latest = fl_kv_latest_types(t, &latest_n);
    fl_kv_row_to_latest(t, rp->schema_id, &rp->row);
    fl_buf_reset(&rp->key);
    rc = fl_key_encode(t->pk_codec, &rp->row, t->latest, t->phys_pk_cols, t->phys_pk_count,
                       &rp->key, err);
    if (rc) return rc;
    rp->records++;
    if (ct == FL_CHANGE_DELETE) {
        fl_kv_write_delete(rp->w, rp->key.data, rp->key.len);
        return 0;
    }
    fl_kv_value_begin(&rp->val, t->latest_schema_id);
    if ((rc = fl_row_encode(t->kv_format, &rp->row, latest, latest_n, &rp->val, err))) return rc;
    fl_kv_write_put(rp->w, rp->key.data, rp->key.len, rp->val.data, rp->val.len);
    return 0;
}

/* A row of a COMPACTED/INDEXED changelog record. */
typedef struct fl_kv_row_src {
    fl_row_format_t format;
    const uint8_t *bytes;
    size_t len;
    const fl_datatype_t *const *types;
    size_t n;
} fl_kv_row_src_t;

static int fl_kv_row_src_fetch(void *arg, fl_row_t *row, fl_error_t *err) {
    const fl_kv_row_src_t *s = arg;
    return fl_row_decode(s->format, s->bytes, s->len, s->types, s->n, row, err);
}

/* Row i of the decoded columns of an ARROW changelog batch. */
typedef struct fl_kv_arrow_src {
    const fl_arrow_array_t *cols;
    const fl_datatype_t *const *types;
    size_t n;
    int64_t i;
} fl_kv_arrow_src_t;

static int fl_kv_arrow_src_fetch(void *arg, fl_row_t *row, fl_error_t *err) {
    const fl_kv_arrow_src_t *s = arg;
    return fl_arrow_row_read(s->cols, s->n, s->types, s->i, row, err);
}

/* A COMPACTED/INDEXED changelog batch (record_row_builder.h). */
static int fl_kv_replay_rows(const fl_kv_table_t *t, const fl_batch_view_t *b,
                             const fl_datatype_t *const *types, size_t n, fl_kv_replay_t *rp,
                             fl_error_t *err) {
    size_t pos = b->records_start;
    fl_kv_row_src_t src = {.format = t->log_format, .types = types, .n = n};
    for (int32_t i = 0; i < b->record_count; i++) {
        fl_change_type_t ct;
        int rc = fl_row_record_next(b->data, b->size, &pos, i, &ct, &src.bytes, &src.len, err);
        if (!rc)
            rc = fl_kv_replay_record(t, rp, b->base_offset + i, ct, fl_kv_row_src_fetch, &src,
                                     err);
        if (rc) return rc;
    }
    return 0;
}

/* Applies one changelog batch of the log to the replay's write. */
static int fl_kv_replay_batch(const fl_kv_table_t *t, const fl_batch_view_t *b,
                              fl_kv_replay_t *rp, fl_error_t *err) {
    if (b->record_count == 0) return 0;
    if (b->attributes & FL_BATCH_ATTR_APPEND_ONLY) return 0; /* not a changelog */
    size_t n = 0;
    const fl_datatype_t *const *types = t->types(t->types_ctx, b->schema_id, &n);
    if (!types)
        return fl_err_set(err, FLUSS_ERR_SCHEMA_NOT_EXIST,
                          "The changelog batch at offset %lld has unknown schema id %d.",
                          (long long)b->base_offset, b->schema_id);
    rp->schema_id = b->schema_id;
    size_t pos = b->records_start;
    size_t rows = (size_t)b->record_count;
    if (t->log_rows) return fl_kv_replay_rows(t, b, types, n, rp, err);
    if (b->size < pos || b->size - pos < rows)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                          "The changelog batch at offset %lld is shorter than its change types.",
                          (long long)b->base_offset);
    const uint8_t *ct = b->data + pos;
    pos += rows;
    fl_arrow_batch_view_t av;
    int rc = fl_arrow_message_parse(b->data + pos, b->size - pos, &av, err);
    if (rc) return rc;
    fl_arrow_array_t *cols = fl_calloc(n ? n : 1, sizeof(*cols));
    fl_arrow_decoder_t d;
    fl_arrow_decoder_init(&d, &av, (size_t)1 << 30);
    size_t decoded = 0;
    for (; decoded < n; decoded++)
        if ((rc = fl_arrow_decoder_next(&d, types[decoded], &cols[decoded], err))) goto out;
    fl_kv_arrow_src_t src = {.cols = cols, .types = types, .n = n};
    for (size_t i = 0; i < rows && !rc; i++) {
        src.i = (int64_t)i;
        rc = fl_kv_replay_record(t, rp, b->base_offset + (int64_t)i, (fl_change_type_t)ct[i],
                                 fl_kv_arrow_src_fetch, &src, err);
    }
out:
    for (size_t i = 0; i < decoded; i++) fl_arrow_array_free(&cols[i]);
    fl_free(cols);
    return rc;
}

/* The row count to commit at a replay step: the stored count moved by the
 * changelog so far, or unknown. Both come from disk: a count that would
 * go below zero does not belong to this changelog, and the keys are
 * counted instead (*base unknown). */
static int64_t fl_kv_replay_rows_now(const fl_kv_tablet_t *kt, int64_t *base,
                                     const fl_kv_replay_t *rp) {
    if (*base < 0) return FL_KV_ROW_COUNT_UNKNOWN;
    if (*base + rp->row_delta < 0) {
        FL_WARN("kv %s: the stored row count %lld does not match the changelog (%lld); "
                "counting the rows instead",
                kt->dir, (long long)*base, (long long)rp->row_delta);
        *base = FL_KV_ROW_COUNT_UNKNOWN;
        return FL_KV_ROW_COUNT_UNKNOWN;
    }
    return *base + rp->row_delta;
}

/* Replays the log from the store's applied offset to the log end (a new
 * leader's high watermark may still lag what its log holds, and the
 * store is ahead of the high watermark anyway: puts apply at append);
 * *base is the row count the replay starts from (unknown when the store
 * has none, or when the log lost changes after its offset). */
static int fl_kv_replay_log(fl_kv_tablet_t *kt, const fl_kv_table_t *t, fl_kv_replay_t *rp,
                            int64_t *base, fl_error_t *err) {
    int64_t from = fl_kv_store_applied_offset(kt->store);
    int64_t end = kt->log.ops->log_end(kt->log.ctx);
    int64_t start = kt->log.ops->log_start(kt->log.ctx);
    *base = kt->rows_kept ? fl_kv_store_row_count(kt->store) : FL_KV_ROW_COUNT_UNKNOWN;
    if (from > end) {
        FL_WARN("kv %s: the store is at offset %lld, past the log end %lld (log lost?); "
                "keeping the store",
                kt->dir, (long long)from, (long long)end);
        return 0;
    }
    if (from < start) {
        FL_WARN("kv %s: the log starts at %lld, after the store's offset %lld: changes in "
                "between are lost",
                kt->dir, (long long)start, (long long)from);
        from = start;
        *base = FL_KV_ROW_COUNT_UNKNOWN; /* counted again after the replay */
    }
    rp->from = from;
    fl_buf_t buf;
    fl_buf_init(&buf);
    int rc = 0;
    int64_t off = from;
    while (off < end) {
        fl_buf_reset(&buf);
        if ((rc = kt->log.ops->read(kt->log.ctx, off, FL_KV_REPLAY_READ_BYTES, &buf, err)))
            break;
        if (buf.len == 0) break;
        size_t pos = 0;
        int64_t next = off;
        fl_batch_view_t b;
        while ((rc = fl_batch_parse_next(buf.data, buf.len, &pos, &b, err)) == 0) {
            if (fl_batch_next_offset(&b) > off && (rc = fl_kv_replay_batch(t, &b, rp, err)))
                goto done;
            next = fl_batch_next_offset(&b);
        }
        if (rc < 0 || rc > 1) goto done;
        rc = 0;
        if (next <= off) break;
        off = next;
        if ((rc = fl_kv_store_commit(kt->store, rp->w, off, fl_kv_replay_rows_now(kt, base, rp),
                                     err)))
            break;
    }
done:
    fl_buf_free(&buf);
    return rc;
}

static bool fl_kv_count_row(void *arg, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl) {
    (void)k, (void)kl, (void)v, (void)vl;
    (*(int64_t *)arg)++;
    return true;
}

/* A store without a usable row count (written before there was one, one
 * that does not fit the changelog, or the log lost changes after it): its
 * keys counted once, committed with its offset. */
static int fl_kv_recount(fl_kv_tablet_t *kt, fl_error_t *err) {
    int64_t t0 = fl_time_mono_ms(), rows = 0;
    int rc = fl_kv_store_scan(kt->store, NULL, 0, fl_kv_count_row, &rows, err);
    if (rc) return rc;
    fl_kv_write_t *w = fl_kv_write_new();
    rc = fl_kv_store_commit(kt->store, w, fl_kv_store_applied_offset(kt->store), rows, err);
    fl_kv_write_destroy(w);
    if (!rc)
        FL_INFO("kv %s: no usable stored row count; counted %lld rows in %lld ms", kt->dir,
                (long long)rows, (long long)(fl_time_mono_ms() - t0));
    return rc;
}

static int fl_kv_replay(fl_kv_tablet_t *kt, const fl_kv_table_t *t, fl_error_t *err) {
    fl_kv_replay_t rp = {.w = fl_kv_write_new()};
    fl_row_init(&rp.row, t->latest->column_count);
    fl_buf_init(&rp.key);
    fl_buf_init(&rp.val);
    int64_t base = FL_KV_ROW_COUNT_UNKNOWN;
    int rc = fl_kv_replay_log(kt, t, &rp, &base, err);
    kt->recovered_records = rp.records;
    fl_kv_write_destroy(rp.w);
    fl_row_free(&rp.row);
    fl_buf_free(&rp.key);
    fl_buf_free(&rp.val);
    /* the store now holds every change up to its offset: count its rows if
     * the replay could not carry a count along */
    if (!rc && kt->rows_kept && (base < 0 || fl_kv_store_row_count(kt->store) < 0))
        rc = fl_kv_recount(kt, err);
    return rc;
}

int fl_kv_tablet_open(const char *dir, fl_kv_log_t log, const fl_kv_table_t *t,
                      const fl_kv_store_options_t *o, fl_kv_tablet_t **out, fl_error_t *err) {
    int64_t t0 = fl_time_mono_ms();
    fl_kv_tablet_t *kt = fl_calloc(1, sizeof(*kt));
    pthread_rwlock_init(&kt->lock, NULL);
    pthread_mutex_init(&kt->snap_lock, NULL);
    pthread_mutex_init(&kt->commit_lock, NULL);
    pthread_mutex_init(&kt->commit_mu, NULL);
    pthread_cond_init(&kt->commit_cond, NULL);
    kt->log = log;
    kt->dir = fl_strdup(dir);
    kt->rows_kept = !t->changelog_wal;
    kt->autoinc_next = 1;
    kt->autoinc_end = 0;
    fl_kv_prewrite_init(&kt->pw);
    int rc = fl_kv_store_open(dir, o, &kt->store, err);
    if (!rc) rc = fl_kv_replay(kt, t, err);
    if (rc) {
        fl_kv_tablet_close(kt, true);
        return rc;
    }
    kt->rows_stored = fl_kv_store_row_count(kt->store);
    kt->recovery_ms = fl_time_mono_ms() - t0;
    if (kt->recovered_records)
        FL_INFO("kv %s: replayed %lld changelog records in %lld ms", dir,
                (long long)kt->recovered_records, (long long)kt->recovery_ms);
    *out = kt;
    return 0;
}

void fl_kv_tablet_close(fl_kv_tablet_t *kt, bool deleted) {
    if (!kt) return;
    if (kt->on_close) kt->on_close(kt->on_close_ctx, kt);
    pthread_mutex_lock(&kt->commit_mu); /* no put runs now; a commit job may */
    while (kt->commit_queued || kt->commit_running)
        pthread_cond_wait(&kt->commit_cond, &kt->commit_mu);
    pthread_mutex_unlock(&kt->commit_mu);
    if (!deleted && kt->store && !kt->failed) {
        fl_error_t e;
        if (fl_kv_tablet_flush_hw(kt, &e)) FL_WARN("kv %s close: %s", kt->dir, e.msg);
    }
    fl_kv_store_close(kt->store, !deleted && !kt->failed);
    fl_kv_prewrite_free(&kt->pw);
    pthread_rwlock_destroy(&kt->lock);
    pthread_mutex_destroy(&kt->snap_lock);
    pthread_mutex_destroy(&kt->commit_lock);
    pthread_mutex_destroy(&kt->commit_mu);
    pthread_cond_destroy(&kt->commit_cond);
    fl_free(kt->remote_dir);
    fl_free(kt->dir);
    fl_free(kt);
}

/* ---- writes ---- */

/* A put that finds the pre-write buffer holding more than this commits
 * before it returns instead of leaving it to the committer: the bound on
 * what a slow committer lets the buffer grow to. */
#define FL_KV_PW_ASYNC_BYTES ((size_t)64 << 20)

static void fl_kv_commit_idle(fl_kv_tablet_t *kt) {
    pthread_mutex_lock(&kt->commit_mu);
    kt->commit_queued = false;
    kt->commit_moved = false;
    pthread_cond_broadcast(&kt->commit_cond);
    pthread_mutex_unlock(&kt->commit_mu);
}

/* The job found nothing below the high watermark it read: idle, unless
 * the owner said the watermark moved meanwhile (fl_kv_tablet_committed
 * found the job queued): then true, and it stays queued to look again. */
static bool fl_kv_commit_idle_unless_moved(fl_kv_tablet_t *kt) {
    pthread_mutex_lock(&kt->commit_mu);
    bool again = kt->commit_moved;
    kt->commit_moved = false;
    if (!again) {
        kt->commit_queued = false;
        pthread_cond_broadcast(&kt->commit_cond);
    }
    pthread_mutex_unlock(&kt->commit_mu);
    return again;
}

/* One commit (commit_lock held): the entries below the high watermark into
 * RocksDB, then out of the buffer. *more: something was committed (there
 * may be more by now), or the watermark moved after it was read. job: the
 * commit job's round, which goes idle when it finds nothing to do, under
 * the same write lock a put checks it in. */
static int fl_kv_commit_round(fl_kv_tablet_t *kt, bool job, bool *more, fl_error_t *err) {
    *more = false;
    pthread_rwlock_wrlock(&kt->lock);
    if (kt->failed) {
        if (job) fl_kv_commit_idle(kt);
        pthread_rwlock_unlock(&kt->lock);
        return fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION,
                          "The kv store of this bucket failed earlier; it refuses writes.");
    }
    int64_t hw = kt->log.ops->apply_bound(kt->log.ctx); /* the durable part, where that matters */
    size_t n = 0;
    int64_t delta = 0;
    const fl_kv_pw_entry_t **v = fl_kv_prewrite_collect(&kt->pw, hw, &n, &delta);
    if (!n) {
        if (job) *more = fl_kv_commit_idle_unless_moved(kt);
        pthread_rwlock_unlock(&kt->lock);
        return 0;
    }
    int64_t rows = FL_KV_ROW_COUNT_UNKNOWN, stored = fl_kv_store_row_count(kt->store);
    if (kt->rows_kept && stored >= 0) {
        rows = stored + delta;
        /* every -1 is a key the count holds, unless the stored count did
         * not match the rows it was read with: then it is not kept until
         * the next open counts the keys */
        if (rows < 0) {
            FL_WARN("kv %s: the row count went below zero; it is counted again at the next "
                    "open",
                    kt->dir);
            rows = FL_KV_ROW_COUNT_UNKNOWN;
        }
    }
    pthread_rwlock_unlock(&kt->lock);

    /* RocksDB is written without the tablet's lock: puts go on appending
     * (at offsets from the high watermark up, never collected here) and
     * reads still find these entries in the buffer, which RocksDB's state
     * underneath cannot contradict */
    fl_kv_write_t *w = fl_kv_write_new();
    fl_kv_prewrite_stage_entries(v, n, w);
    fl_free(v);
    int rc = fl_kv_store_commit(kt->store, w, hw, rows, err);
    fl_kv_write_destroy(w);

    pthread_rwlock_wrlock(&kt->lock);
    if (rc) {
        kt->failed = true;
        if (job) fl_kv_commit_idle(kt);
    } else {
        fl_kv_prewrite_release(&kt->pw, hw);
        kt->rows_stored = fl_kv_store_row_count(kt->store);
        *more = true;
    }
    pthread_rwlock_unlock(&kt->lock);
    return rc;
}

void fl_kv_tablet_committed(fl_kv_tablet_t *kt) {
    if (!kt->commit_submit) return;
    pthread_mutex_lock(&kt->commit_mu);
    bool submit = !kt->commit_queued;
    if (submit) kt->commit_queued = true;
    else kt->commit_moved = true; /* a job that read the watermark before looks again */
    pthread_mutex_unlock(&kt->commit_mu);
    if (submit) kt->commit_submit(kt->commit_ctx, kt);
}

int fl_kv_tablet_flush_hw(fl_kv_tablet_t *kt, fl_error_t *err) {
    pthread_mutex_lock(&kt->commit_lock);
    bool more = false;
    int rc = fl_kv_commit_round(kt, false, &more, err);
    pthread_mutex_unlock(&kt->commit_lock);
    return rc;
}

void fl_kv_tablet_commit_job(fl_kv_tablet_t *kt) {
    /* running: close waits for this, not only for the queued flag, which
     * the round below may clear before the job has let go of the tablet */
    pthread_mutex_lock(&kt->commit_mu);
    kt->commit_running++;
    pthread_mutex_unlock(&kt->commit_mu);
    pthread_mutex_lock(&kt->commit_lock);
    bool more = false;
    fl_error_t e;
    int rc = fl_kv_commit_round(kt, true, &more, &e);
    pthread_mutex_unlock(&kt->commit_lock);
    if (rc) FL_WARN("kv %s: %s", kt->dir, e.msg);
    /* still queued: to the back of the committer's queue, behind the
     * other tablets' commits, to look again */
    else if (more) kt->commit_submit(kt->commit_ctx, kt);
    pthread_mutex_lock(&kt->commit_mu);
    kt->commit_running--;
    pthread_cond_broadcast(&kt->commit_cond);
    pthread_mutex_unlock(&kt->commit_mu); /* the job's last touch of kt */
}

int fl_kv_tablet_set_write_buffer(fl_kv_tablet_t *kt, size_t bytes, fl_error_t *err) {
    pthread_rwlock_rdlock(&kt->lock);
    int rc = fl_kv_store_set_write_buffer(kt->store, bytes, err);
    pthread_rwlock_unlock(&kt->lock);
    return rc;
}

int fl_kv_tablet_checkpoint(fl_kv_tablet_t *kt, const char *dir, int64_t *log_offset,
                            int64_t *row_count, fl_error_t *err) {
    /* under commit_lock nothing else writes RocksDB: after the commit the
     * store holds exactly the changes before its applied offset, while
     * puts go on into the pre-write buffer */
    pthread_mutex_lock(&kt->commit_lock);
    bool more = false;
    int rc = fl_kv_commit_round(kt, false, &more, err);
    if (!rc) {
        *log_offset = fl_kv_store_applied_offset(kt->store);
        *row_count = kt->rows_kept ? fl_kv_store_row_count(kt->store) : FL_KV_ROW_COUNT_UNKNOWN;
        rc = fl_kv_store_checkpoint(kt->store, dir, err);
    }
    pthread_mutex_unlock(&kt->commit_lock);
    return rc;
}

typedef struct fl_kv_image_ctx {
    const fl_kv_table_t *t;
    fl_kv_row_fn fn;
    void *arg;
    fl_row_t row;
    fl_error_t *err;
    int rc;
} fl_kv_image_ctx_t;

static bool fl_kv_image_visit(void *arg, const uint8_t *key, size_t klen, const uint8_t *v,
                              size_t vlen) {
    (void)key;
    fl_kv_image_ctx_t *c = arg;
    if (vlen < 2) {
        c->rc = fl_err_set(c->err, FLUSS_ERR_KV_STORAGE_EXCEPTION,
                           "a stored value of %zu bytes (key of %zu bytes): no schema id", vlen,
                           klen);
        return false;
    }
    c->rc = fl_kv_decode_value(c->t, fl_kv_value_schema(v), v + 2, vlen - 2, &c->row, c->err);
    if (c->rc) {
        c->rc = FLUSS_ERR_KV_STORAGE_EXCEPTION;
        if (c->err) c->err->code = c->rc;
        return false;
    }
    c->rc = c->fn(c->arg, &c->row, c->err);
    return c->rc == 0;
}

int fl_kv_tablet_image(fl_kv_tablet_t *kt, const fl_kv_table_t *t, fl_kv_row_fn fn, void *arg,
                       int64_t *log_offset, fl_error_t *err) {
    /* as a checkpoint: under commit_lock the store holds exactly the
     * changes before its applied offset; the view keeps that state */
    pthread_mutex_lock(&kt->commit_lock);
    bool more = false;
    int rc = fl_kv_commit_round(kt, false, &more, err);
    fl_kv_view_t *view = NULL;
    if (!rc) {
        *log_offset = fl_kv_store_applied_offset(kt->store);
        view = fl_kv_store_view(kt->store);
    }
    pthread_mutex_unlock(&kt->commit_lock);
    if (rc) return rc;
    fl_kv_image_ctx_t c = {.t = t, .fn = fn, .arg = arg, .err = err};
    fl_row_init(&c.row, t->latest->column_count);
    rc = fl_kv_view_scan(view, fl_kv_image_visit, &c, err);
    if (!rc) rc = c.rc;
    fl_row_free(&c.row);
    fl_kv_view_free(view);
    return rc;
}

int fl_kv_tablet_row_count(fl_kv_tablet_t *kt, int64_t *out, fl_error_t *err) {
    if (!kt->rows_kept)
        return fl_err_set(err, FLUSS_ERR_INVALID_TABLE_EXCEPTION,
                          "The row count is not kept for a table whose changelog image is "
                          "WAL; set table.changelog.image to FULL to keep it.");
    pthread_rwlock_rdlock(&kt->lock);
    int64_t hw = kt->log.ops->high_watermark(kt->log.ctx);
    int64_t stored = kt->rows_stored;
    int64_t rows = stored + fl_kv_prewrite_row_delta(&kt->pw, hw);
    pthread_rwlock_unlock(&kt->lock);
    if (stored < 0 || rows < 0)
        return fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION,
                          "The row count of this bucket was lost (it did not match its rows); "
                          "it is counted again when the bucket next opens.");
    *out = rows;
    return 0;
}

/* What one put works with. */
typedef struct fl_kv_put_ctx {
    fl_kv_tablet_t *kt;
    const fl_kv_table_t *t;
    fl_kv_prewrite_t staged;    /* this batch's changes, offsets relative to its base */
    fl_record_builder_t builder; /* ARROW changelog */
    fl_row_builder_t rows;       /* COMPACTED/INDEXED changelog (t->log_rows) */
    int64_t next;               /* relative offset of the next changelog record */
    const bool *mask;           /* partial update */
    bool overwrite;
    fl_row_t old_row, new_row, merged;
    fl_buf_t cur, val;
    /* the batch's old rows read ahead (fl_kv_read_ahead): the slot in
     * `ahead` of each record, SIZE_MAX when not read ahead */
    fl_kv_pinned_t *ahead;
    size_t *ahead_slot;
    size_t rec; /* the record being fed */
} fl_kv_put_ctx_t;

/* The current value of key: this batch first, then the pre-write buffer,
 * then RocksDB. *found false: no row. */
static int fl_kv_read_current(fl_kv_put_ctx_t *c, const uint8_t *key, size_t klen,
                              const uint8_t **v, size_t *vlen, bool *found, fl_error_t *err) {
    /* read ahead: the key was not in the pre-write buffer, which cannot
     * change during the put */
    bool ahead = c->ahead && c->ahead_slot[c->rec] != SIZE_MAX;
    fl_kv_pw_lookup_t l = fl_kv_prewrite_get(&c->staged, key, klen, v, vlen);
    if (l == FL_KV_PW_MISS && !ahead) l = fl_kv_prewrite_get(&c->kt->pw, key, klen, v, vlen);
    if (l != FL_KV_PW_MISS) {
        *found = l == FL_KV_PW_VALUE;
        return 0;
    }
    if (ahead) {
        *found = fl_kv_pinned_get(c->ahead, c->ahead_slot[c->rec], v, vlen);
        return 0;
    }
    int rc = fl_kv_store_get(c->kt->store, key, klen, &c->cur, found, err);
    if (rc) return rc;
    *v = c->cur.data;
    *vlen = c->cur.len;
    return 0;
}

static int fl_kv_emit(fl_kv_put_ctx_t *c, const fl_row_t *row, fl_change_type_t change_type,
                      fl_error_t *err) {
    if (c->t->log_rows) {
        int rc = fl_row_builder_append(&c->rows, row, change_type, err);
        if (rc) return rc;
    } else {
        fl_record_builder_append_change(&c->builder, row, change_type);
    }
    c->next++;
    return 0;
}

static int fl_kv_put_delete(fl_kv_put_ctx_t *c, const uint8_t *key, size_t klen,
                            fl_error_t *err) {
    const fl_kv_table_t *t = c->t;
    if (t->delete_behavior == FL_KV_DELETE_IGNORE) return 0;
    if (t->delete_behavior == FL_KV_DELETE_DISABLE)
        return fl_err_set(err, FLUSS_ERR_DELETION_DISABLED_EXCEPTION,
                          "Delete operations are disabled for this table. The "
                          "table.delete.behavior is set to 'disable'.");
    const uint8_t *v;
    size_t vlen;
    bool found;
    int rc = fl_kv_read_current(c, key, klen, &v, &vlen, &found, err);
    if (rc || !found) return rc;
    if (vlen < 2)
        return fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION, "A stored value is %zu bytes.",
                          vlen);
    if ((rc = fl_kv_decode_value(t, fl_kv_value_schema(v), v + 2, vlen - 2, &c->old_row, err)))
        return rc;
    fl_kv_merge_result_t res;
    if ((rc = fl_kv_merge_delete(t, c->mask, &c->old_row, &c->merged, &res, err))) return rc;
    if (res == FL_KV_MERGE_DELETE) {
        if ((rc = fl_kv_emit(c, &c->old_row, FL_CHANGE_DELETE, err))) return rc;
        fl_kv_prewrite_put(&c->staged, key, klen, NULL, 0, c->next - 1, -1);
        return 0;
    }
    size_t n;
    const fl_datatype_t *const *latest = fl_kv_latest_types(t, &n);
    fl_kv_value_begin(&c->val, t->latest_schema_id);
    if ((rc = fl_row_encode(t->kv_format, &c->merged, latest, n, &c->val, err))) return rc;
    if (!t->changelog_wal && (rc = fl_kv_emit(c, &c->old_row, FL_CHANGE_UPDATE_BEFORE, err)))
        return rc;
    if ((rc = fl_kv_emit(c, &c->merged, FL_CHANGE_UPDATE_AFTER, err))) return rc;
    fl_kv_prewrite_put(&c->staged, key, klen, c->val.data, c->val.len, c->next - 1, 0);
    return 0;
}

/* The bucket's next auto-increment value (write lock held): from its
 * block, or from a new block reserved durably first
 * (BoundedSegmentSequenceGenerator). */
static int fl_kv_autoinc_next(fl_kv_tablet_t *kt, const fl_kv_table_t *t, int64_t *out,
                              fl_error_t *err) {
    const fl_column_t *col = &t->latest->columns[t->autoinc_col];
    if (kt->autoinc_next > kt->autoinc_end) {
        int64_t cache = t->autoinc_cache > 0 ? t->autoinc_cache : 1, first;
        if (!t->autoinc_reserve)
            return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                              "Failed to fetch auto-increment values, column_name=%s: no "
                              "sequence source.",
                              col->name);
        int rc = t->autoinc_reserve(t->autoinc_ctx, t->table_id, cache, &first, err);
        if (rc) return rc;
        kt->autoinc_next = first + 1;
        kt->autoinc_end = first > INT64_MAX - cache ? INT64_MAX : first + cache;
        FL_INFO("kv %s: auto-increment values %lld..%lld reserved for column %s", kt->dir,
                (long long)kt->autoinc_next, (long long)kt->autoinc_end, col->name);
    }
    int64_t max = col->type->root == FL_TYPE_INTEGER ? INT32_MAX : INT64_MAX;
    if (kt->autoinc_next > max)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          "Reached maximum value of sequence \"<%s>\" (%lld).", col->name,
                          (long long)max);
    *out = kt->autoinc_next++;
    return 0;
}

static int fl_kv_put_upsert(fl_kv_put_ctx_t *c, int16_t schema_id, const uint8_t *key,
                            size_t klen, const uint8_t *row, size_t rlen, fl_error_t *err) {
    const fl_kv_table_t *t = c->t;
    int rc = fl_kv_decode_value(t, schema_id, row, rlen, &c->new_row, err);
    if (rc) return rc;
    bool plain = c->overwrite || (!c->mask && t->engine == FL_KV_ENGINE_LAST_ROW);
    const uint8_t *v = NULL;
    size_t vlen = 0;
    bool found = false;
    /* WAL image with last-row-wins needs no old row: every write is +U */
    if (!(plain && t->changelog_wal) &&
        (rc = fl_kv_read_current(c, key, klen, &v, &vlen, &found, err)))
        return rc;
    if (found) {
        if (vlen < 2)
            return fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION,
                              "A stored value is %zu bytes.", vlen);
        if ((rc = fl_kv_decode_value(t, fl_kv_value_schema(v), v + 2, vlen - 2, &c->old_row,
                                     err)))
            return rc;
    }
    fl_kv_merge_result_t res = FL_KV_MERGE_NEW;
    if (!plain &&
        (rc = fl_kv_merge_upsert(t, c->mask, found ? &c->old_row : NULL, &c->new_row, &c->merged,
                                 &res, err)))
        return rc;
    if (res == FL_KV_MERGE_OLD) return 0;
    fl_row_t *out = res == FL_KV_MERGE_NEW ? &c->new_row : &c->merged;
    bool autoinc = !found && t->has_autoinc; /* a new key: the server's value */
    if (autoinc) {
        fl_cell_t *cell = &out->cells[t->autoinc_col];
        if ((rc = fl_kv_autoinc_next(c->kt, t, &cell->i, err))) return rc;
        cell->is_null = false;
    }
    if (res == FL_KV_MERGE_NEW && !autoinc) { /* the row as it came, under its own schema id */
        fl_kv_value_begin(&c->val, schema_id);
        fl_buf_append(&c->val, row, rlen);
    } else {
        size_t n;
        const fl_datatype_t *const *latest = fl_kv_latest_types(t, &n);
        fl_kv_value_begin(&c->val, t->latest_schema_id);
        if ((rc = fl_row_encode(t->kv_format, out, latest, n, &c->val, err))) return rc;
    }
    if (!found) {
        rc = fl_kv_emit(c, out, (plain && t->changelog_wal) ? FL_CHANGE_UPDATE_AFTER
                                                           : FL_CHANGE_INSERT, err);
    } else {
        if (!t->changelog_wal) rc = fl_kv_emit(c, &c->old_row, FL_CHANGE_UPDATE_BEFORE, err);
        if (!rc) rc = fl_kv_emit(c, out, FL_CHANGE_UPDATE_AFTER, err);
    }
    if (rc) return rc;
    /* a new key adds a row (with a WAL image and no merge the old row was
     * not read: such tables keep no count) */
    fl_kv_prewrite_put(&c->staged, key, klen, c->val.data, c->val.len, c->next - 1,
                       found ? 0 : 1);
    return 0;
}

/* Reads the old rows of a batch's records ahead, in one batched MultiGet:
 * those whose change needs the row and whose key the pre-write buffer
 * lacks. RocksDB cannot change such a key's row while the put holds the
 * write lock: the committer writes only entries of the buffer. */
static int fl_kv_read_ahead(fl_kv_put_ctx_t *c, const fl_kv_batch_view_t *v, fl_error_t *err) {
    const fl_kv_table_t *t = c->t;
    bool plain = c->overwrite || (!c->mask && t->engine == FL_KV_ENGINE_LAST_ROW);
    bool upserts = !(plain && t->changelog_wal), deletes = t->delete_behavior == FL_KV_DELETE_ALLOW;
    if (!upserts && !deletes) return 0;
    size_t n = (size_t)(v->record_count > 0 ? v->record_count : 0), m = 0;
    if (n < 2) return 0; /* a Get is as good */
    c->ahead_slot = fl_malloc(n * sizeof(*c->ahead_slot));
    const uint8_t **keys = fl_malloc(n * sizeof(*keys));
    size_t *klens = fl_malloc(n * sizeof(*klens));
    fl_kv_batch_iter_t it;
    fl_kv_batch_iter_init(&it, v);
    fl_kv_record_t rec;
    fl_error_t e;
    size_t i = 0;
    for (; i < n && fl_kv_batch_next(&it, &rec, &e) == FL_KV_NEXT_RECORD; i++) {
        const uint8_t *pv;
        size_t pl;
        c->ahead_slot[i] = SIZE_MAX;
        if (!rec.key_len || !(rec.is_delete ? deletes : upserts) ||
            fl_kv_prewrite_get(&c->kt->pw, rec.key, rec.key_len, &pv, &pl) != FL_KV_PW_MISS)
            continue;
        c->ahead_slot[i] = m;
        keys[m] = rec.key;
        klens[m++] = rec.key_len;
    }
    for (; i < n; i++) c->ahead_slot[i] = SIZE_MAX; /* a bad record: the feed reports it */
    int rc = m ? fl_kv_store_multi_get_pinned(c->kt->store, m, keys, klens, &c->ahead, err) : 0;
    fl_free(keys);
    fl_free(klens);
    if (rc || !c->ahead) {
        fl_free(c->ahead_slot);
        c->ahead_slot = NULL;
    }
    return rc;
}

static int fl_kv_put_records(fl_kv_put_ctx_t *c, const void *arg, fl_error_t *err) {
    const fl_kv_batch_view_t *v = arg;
    int rc = fl_kv_read_ahead(c, v, err);
    if (rc) return rc;
    fl_kv_batch_iter_t it;
    fl_kv_batch_iter_init(&it, v);
    fl_kv_record_t rec;
    fl_kv_next_t next;
    /* the iterator stops at the header's record count (the parse checked
     * that the records match it), so c->rec stays inside ahead_slot */
    for (c->rec = 0; (next = fl_kv_batch_next(&it, &rec, err)) == FL_KV_NEXT_RECORD; c->rec++) {
        if (rec.key_len == 0)
            return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                              "A KV record has an empty key.");
        rc = rec.is_delete ? fl_kv_put_delete(c, rec.key, rec.key_len, err)
                           : fl_kv_put_upsert(c, v->schema_id, rec.key, rec.key_len, rec.value,
                                              rec.value_len, err);
        if (rc) return rc;
    }
    return next == FL_KV_NEXT_ERROR ? err->code : 0;
}

/* One write of the tablet: what a put does around its records. */
typedef struct fl_kv_put_spec {
    const int32_t *targets;
    size_t n_targets;
    bool overwrite;
    int64_t now_ms;
    int64_t writer_id;
    int32_t sequence;
    /* stages the changes into c (write lock held) */
    int (*feed)(fl_kv_put_ctx_t *c, const void *arg, fl_error_t *err);
    const void *arg;
} fl_kv_put_spec_t;

/* Checks the targets, then under the write lock: feed → changelog batch →
 * log append → pre-write buffer; all or nothing. */
static int fl_kv_put_run(fl_kv_tablet_t *kt, const fl_kv_table_t *t, const fl_kv_put_spec_t *sp,
                         fl_kv_appended_t *res, fl_error_t *err) {
    size_t ncols = t->latest->column_count;
    bool *mask = fl_calloc(ncols ? ncols : 1, sizeof(bool));
    bool partial = false;
    /* agg_mode OVERWRITE (Flink's undo recovery) writes like last-row-wins,
     * partial targets included */
    fl_kv_table_t ow;
    if (sp->overwrite) {
        ow = *t;
        ow.engine = FL_KV_ENGINE_LAST_ROW;
        t = &ow;
    }
    int rc = fl_kv_targets_check(t, sp->targets, sp->n_targets, mask, &partial, err);
    if (rc) {
        fl_free(mask);
        return rc;
    }
    fl_kv_put_ctx_t c = {.kt = kt, .t = t, .mask = partial ? mask : NULL,
                         .overwrite = sp->overwrite && !partial};
    fl_kv_prewrite_init(&c.staged);
    fl_record_builder_options_t bo = {.schema_id = t->latest_schema_id, .codec = t->codec,
                                      .zstd_level = t->zstd_level};
    fl_record_builder_init(&c.builder, t->latest, &bo);
    fl_record_builder_set_changelog(&c.builder); /* attributes 0 even when empty */
    /* ARRAY/MAP/ROW cells hold their values in the kv format: written into
     * the changelog as Arrow list/map/struct children */
    if (t->has_nested) fl_record_builder_set_nested(&c.builder, t->kv_format);
    size_t latest_n = 0;
    const fl_datatype_t *const *latest = fl_kv_latest_types(t, &latest_n);
    fl_row_builder_init(&c.rows, t->log_format, latest, latest_n, t->latest_schema_id, true);
    fl_row_init(&c.old_row, ncols);
    fl_row_init(&c.new_row, ncols);
    fl_row_init(&c.merged, ncols);
    fl_buf_init(&c.cur);
    fl_buf_init(&c.val);
    fl_buf_t batch;
    fl_buf_init(&batch);

    /* a nested column ALTER TABLE added since the store opened: the
     * replay does not read its values from an ARROW changelog, so RocksDB's
     * WAL keeps them (switched on once, between commits) */
    if (t->has_nested && !atomic_load(&kt->wal_kept)) {
        pthread_mutex_lock(&kt->commit_lock);
        rc = fl_kv_store_keep_wal(kt->store, err);
        pthread_mutex_unlock(&kt->commit_lock);
        if (!rc) atomic_store(&kt->wal_kept, true);
    }
    bool submit = false, commit_now = false;
    pthread_rwlock_wrlock(&kt->lock);
    if (!rc && kt->failed)
        rc = fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION,
                        "The kv store of this bucket failed earlier; it refuses writes.");
    if (!rc) rc = sp->feed(&c, sp->arg, err);
    if (!rc && t->log_rows) fl_row_builder_finish(&c.rows, sp->writer_id, sp->sequence, &batch);
    else if (!rc) rc = fl_record_builder_finish(&c.builder, sp->writer_id, sp->sequence, &batch, err);
    if (!rc) rc = kt->log.ops->append(kt->log.ctx, batch.data, batch.len, sp->now_ms, res, err);
    if (!rc && !res->duplicate) {
        /* the changes become visible with their offsets in the log */
        for (fl_kv_pw_entry_t *e = c.staged.head; e; e = e->lnext) e->offset += res->base_offset;
        fl_kv_prewrite_move(&kt->pw, &c.staged);
        /* RocksDB is written by the committer, in parallel with the next
         * put; inline when there is none or the buffer ran ahead of it */
        if (kt->commit_submit && kt->pw.bytes <= FL_KV_PW_ASYNC_BYTES) {
            pthread_mutex_lock(&kt->commit_mu);
            submit = !kt->commit_queued;
            kt->commit_queued = true;
            pthread_mutex_unlock(&kt->commit_mu);
        } else {
            commit_now = true;
        }
    }
    pthread_rwlock_unlock(&kt->lock);
    if (submit) kt->commit_submit(kt->commit_ctx, kt);
    if (commit_now) {
        fl_error_t fe;
        if (fl_kv_tablet_flush_hw(kt, &fe)) FL_WARN("kv %s: %s", kt->dir, fe.msg);
    }

    fl_buf_free(&batch);
    fl_buf_free(&c.cur);
    fl_kv_pinned_free(c.ahead);
    fl_free(c.ahead_slot);
    fl_buf_free(&c.val);
    fl_row_free(&c.old_row);
    fl_row_free(&c.new_row);
    fl_row_free(&c.merged);
    fl_record_builder_free(&c.builder);
    fl_row_builder_free(&c.rows);
    fl_kv_prewrite_free(&c.staged);
    fl_free(mask);
    return rc;
}

int fl_kv_tablet_put(fl_kv_tablet_t *kt, const fl_kv_table_t *t, const fl_kv_put_t *p,
                     fl_kv_appended_t *res, fl_error_t *err) {
    fl_kv_batch_view_t v;
    int rc = fl_kv_batch_parse(p->records, p->len, &v, err);
    if (rc) return rc;
    if (v.schema_id < 1 || v.schema_id > t->latest_schema_id)
        return fl_err_set(err, FLUSS_ERR_SCHEMA_NOT_EXIST,
                          "Invalid schema id: %d, latest schema id: %d", v.schema_id,
                          t->latest_schema_id);
    fl_kv_put_spec_t sp = {.targets = p->targets, .n_targets = p->n_targets,
                           .overwrite = p->overwrite, .now_ms = p->now_ms,
                           .writer_id = v.writer_id, .sequence = v.batch_sequence,
                           .feed = fl_kv_put_records, .arg = &v};
    return fl_kv_put_run(kt, t, &sp, res, err);
}

/* ---- LOOKUP with insert_if_not_exists ---- */

typedef struct fl_kv_insert_keys {
    const fl_kv_key_t *keys;
    size_t n;
    const fl_row_t *base;
} fl_kv_insert_keys_t;

/* The primary-key columns of key (encoded as the table's clients encode
 * it, types_key.h) into row. */
static int fl_kv_key_decode(const fl_kv_table_t *t, const fl_kv_key_t *key, fl_buf_t *scratch,
                            fl_row_t *keyrow, fl_row_t *row, fl_error_t *err) {
    size_t n = 0;
    const fl_datatype_t *const *latest = fl_kv_latest_types(t, &n);
    const fl_datatype_t *types[FL_KV_PK_MAX];
    for (size_t i = 0; i < t->phys_pk_count; i++) types[i] = latest[t->phys_pk_cols[i]];
    fl_error_t e;
    if (fl_key_decode(t->pk_codec, key->data, key->len, types, t->phys_pk_count, scratch, keyrow,
                      &e))
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                          "A lookup key of %zu bytes is not a primary key of this table: %s",
                          key->len, e.msg);
    for (size_t i = 0; i < t->phys_pk_count; i++)
        fl_kv_cell_copy(row, (size_t)t->phys_pk_cols[i], keyrow, i, types[i]);
    return 0;
}

static int fl_kv_insert_keys_feed(fl_kv_put_ctx_t *c, const void *arg, fl_error_t *err) {
    const fl_kv_insert_keys_t *in = arg;
    const fl_kv_table_t *t = c->t;
    size_t n = 0;
    const fl_datatype_t *const *latest = fl_kv_latest_types(t, &n);
    fl_row_t keyrow, row;
    fl_row_init(&keyrow, t->phys_pk_count);
    fl_row_init(&row, n);
    fl_buf_t scratch, bytes;
    fl_buf_init(&scratch);
    fl_buf_init(&bytes);
    int rc = 0;
    for (size_t k = 0; k < in->n && !rc; k++) {
        fl_row_clear(&row);
        fl_kv_row_pad(&row, n);
        for (size_t i = 0; in->base && i < t->part_count; i++) {
            size_t col = (size_t)t->part_cols[i];
            fl_kv_cell_copy(&row, col, in->base, col, latest[col]);
        }
        if (in->keys[k].len == 0)
            rc = fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION, "A lookup key is empty.");
        if (!rc) rc = fl_kv_key_decode(t, &in->keys[k], &scratch, &keyrow, &row, err);
        fl_buf_reset(&bytes);
        if (!rc) rc = fl_row_encode(t->kv_format, &row, latest, n, &bytes, err);
        if (!rc)
            rc = fl_kv_put_upsert(c, t->latest_schema_id, in->keys[k].data, in->keys[k].len,
                                  bytes.data, bytes.len, err);
    }
    fl_buf_free(&scratch);
    fl_buf_free(&bytes);
    fl_row_free(&keyrow);
    fl_row_free(&row);
    return rc;
}

int fl_kv_tablet_insert_keys(fl_kv_tablet_t *kt, const fl_kv_table_t *t, const fl_kv_key_t *keys,
                             size_t n, const fl_row_t *base, int64_t now_ms,
                             fl_kv_appended_t *res, fl_error_t *err) {
    fl_kv_insert_keys_t in = {keys, n, base};
    fl_kv_put_spec_t sp = {.targets = t->pk_cols, .n_targets = t->pk_count, .now_ms = now_ms,
                           .writer_id = -1, .sequence = -1,
                           .feed = fl_kv_insert_keys_feed, .arg = &in};
    return fl_kv_put_run(kt, t, &sp, res, err);
}

/* ---- reads ---- */

/* A key's value under the read lock: the pre-write buffer, then RocksDB
 * (would_block NULL: a read that may wait for the disk; else memory only,
 * *would_block set when the disk would be needed). */
static int fl_kv_lookup_locked(fl_kv_tablet_t *kt, const uint8_t *key, size_t klen, fl_buf_t *val,
                               bool *found, bool *would_block, fl_error_t *err) {
    const uint8_t *v;
    size_t vlen;
    fl_kv_pw_lookup_t l = fl_kv_prewrite_get(&kt->pw, key, klen, &v, &vlen);
    if (l == FL_KV_PW_VALUE) {
        fl_buf_reset(val);
        fl_buf_append(val, v, vlen);
        *found = true;
        return 0;
    }
    if (l == FL_KV_PW_DELETED) {
        *found = false;
        return 0;
    }
    if (would_block)
        return fl_kv_store_get_cached(kt->store, key, klen, val, found, would_block, err);
    return fl_kv_store_get(kt->store, key, klen, val, found, err);
}

int fl_kv_tablet_lookup(fl_kv_tablet_t *kt, const uint8_t *key, size_t klen, fl_buf_t *val,
                        bool *found, fl_error_t *err) {
    pthread_rwlock_rdlock(&kt->lock);
    int rc = fl_kv_lookup_locked(kt, key, klen, val, found, NULL, err);
    pthread_rwlock_unlock(&kt->lock);
    return rc;
}

int fl_kv_tablet_lookup_many(fl_kv_tablet_t *kt, size_t n, const uint8_t *const *keys,
                             const size_t *klens, fl_buf_t *vals, bool *found, fl_error_t *err) {
    /* the pre-write buffer first; RocksDB's batched MultiGet for the rest,
     * each value copied once, from where RocksDB pins it */
    size_t *miss = fl_malloc((n ? n : 1) * sizeof(*miss));
    const uint8_t **mkeys = fl_malloc((n ? n : 1) * sizeof(*mkeys));
    size_t *mlens = fl_malloc((n ? n : 1) * sizeof(*mlens));
    size_t m = 0;
    pthread_rwlock_rdlock(&kt->lock);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *v;
        size_t vlen;
        fl_kv_pw_lookup_t l = fl_kv_prewrite_get(&kt->pw, keys[i], klens[i], &v, &vlen);
        fl_buf_reset(&vals[i]);
        found[i] = l == FL_KV_PW_VALUE;
        if (l == FL_KV_PW_VALUE) fl_buf_append(&vals[i], v, vlen);
        else if (l == FL_KV_PW_MISS) {
            miss[m] = i;
            mkeys[m] = keys[i];
            mlens[m] = klens[i];
            m++;
        }
    }
    fl_kv_pinned_t *got = NULL;
    int rc = m ? fl_kv_store_multi_get_pinned(kt->store, m, mkeys, mlens, &got, err) : 0;
    pthread_rwlock_unlock(&kt->lock);
    for (size_t j = 0; !rc && j < m; j++) {
        const uint8_t *v;
        size_t vlen;
        if (fl_kv_pinned_get(got, j, &v, &vlen)) {
            fl_buf_append(&vals[miss[j]], v, vlen);
            found[miss[j]] = true;
        }
    }
    fl_kv_pinned_free(got);
    fl_free(miss);
    fl_free(mkeys);
    fl_free(mlens);
    return rc;
}

int fl_kv_tablet_lookup_nowait(fl_kv_tablet_t *kt, const uint8_t *key, size_t klen, fl_buf_t *val,
                               bool *found, bool *would_block, fl_error_t *err) {
    *would_block = false;
    if (pthread_rwlock_tryrdlock(&kt->lock) != 0) {
        *would_block = true; /* a put holds it (and may be reading the disk) */
        return 0;
    }
    int rc = fl_kv_lookup_locked(kt, key, klen, val, found, would_block, err);
    pthread_rwlock_unlock(&kt->lock);
    return rc;
}

void fl_kv_values_init(fl_kv_values_t *v) {
    memset(v, 0, sizeof(*v));
    fl_buf_init(&v->bytes);
}

void fl_kv_values_free(fl_kv_values_t *v) {
    fl_buf_free(&v->bytes);
    fl_free(v->off);
    fl_free(v->len);
    memset(v, 0, sizeof(*v));
}

static void fl_kv_values_add(fl_kv_values_t *v, const uint8_t *p, size_t n) {
    if (v->count == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 16;
        v->off = fl_realloc(v->off, v->cap * sizeof(size_t));
        v->len = fl_realloc(v->len, v->cap * sizeof(size_t));
    }
    v->off[v->count] = v->bytes.len;
    v->len[v->count++] = n;
    fl_buf_append(&v->bytes, p, n);
}

typedef struct fl_kv_scan_ctx {
    fl_kv_tablet_t *kt;
    fl_kv_values_t *out;
    size_t limit;
} fl_kv_scan_ctx_t;

/* RocksDB rows the pre-write buffer has not changed. */
static bool fl_kv_scan_store_row(void *arg, const uint8_t *key, size_t klen, const uint8_t *val,
                                 size_t vlen) {
    fl_kv_scan_ctx_t *s = arg;
    const uint8_t *v;
    size_t n;
    if (fl_kv_prewrite_get(&s->kt->pw, key, klen, &v, &n) == FL_KV_PW_MISS)
        fl_kv_values_add(s->out, val, vlen);
    return !s->limit || s->out->count < s->limit;
}

static void fl_kv_scan_pw_row(void *arg, const fl_kv_pw_entry_t *e) {
    fl_kv_scan_ctx_t *s = arg;
    if (e->deleted || (s->limit && s->out->count >= s->limit)) return;
    fl_kv_values_add(s->out, e->data + e->klen, e->vlen);
}

int fl_kv_tablet_prefix_lookup(fl_kv_tablet_t *kt, const uint8_t *prefix, size_t plen,
                               size_t limit, fl_kv_values_t *out, fl_error_t *err) {
    pthread_rwlock_rdlock(&kt->lock);
    fl_kv_scan_ctx_t s = {kt, out, limit};
    fl_kv_prewrite_visit(&kt->pw, prefix, plen, fl_kv_scan_pw_row, &s);
    int rc = 0;
    if (!limit || out->count < limit)
        rc = fl_kv_store_scan(kt->store, prefix, plen, fl_kv_scan_store_row, &s, err);
    pthread_rwlock_unlock(&kt->lock);
    return rc;
}
