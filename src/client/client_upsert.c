/*
 * client_upsert.c — libfluss's upsert writer for primary-key tables
 * (fluss.h fluss_upsert_writer_*; Fluss's UpsertWriter): a row becomes a
 * KvRecord — key = the compacted key encoding of the primary key
 * (CompactedKeyEncoder, types_row_compacted.h), value = the row in the
 * table's kv format (COMPACTED or INDEXED), no value for a delete — in
 * the bucket its bucket key hashes to (FlussBucketingFunction, as the
 * Java client). Batching, pipelining, retries and idempotence are the
 * append writer's engine in kv mode (client_writer.c). Thread rule: one
 * user at a time, like the append writer.
 */
#include <string.h>

#include "client_table.h"
#include "common_alloc.h"
#include "common_murmur.h"
#include "types_row_compacted.h"

struct fluss_upsert_writer {
    fluss_table_t *t;
    fluss_append_writer_t *engine; /* kv mode */
    fl_buf_t key;
    fl_buf_t bucket_key;
    fl_buf_t value;
};

int fluss_upsert_writer_new(fluss_table_t *t, const fluss_upsert_writer_options_t *opts,
                            fluss_upsert_writer_t **out, fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    size_t nt = opts ? opts->target_column_count : 0;
    for (size_t i = 0; i < nt; i++)
        if (opts->target_columns[i] < 0 ||
            (size_t)opts->target_columns[i] >= t->desc.schema.column_count) {
            fl_err_set(&err, FLUSS_ERR__INVALID_ARG, "target column %d out of range",
                       opts->target_columns[i]);
            return fl_client_error_out(e, &err);
        }
    fluss_append_writer_options_t base = {.linger_ms = -1, .idempotent = -1};
    if (opts) base = opts->base;
    fluss_append_writer_t *engine = NULL;
    if (fl_writer_open(t, &base, true, opts ? opts->target_columns : NULL, nt, &engine, &err))
        return fl_client_error_out(e, &err);
    fluss_upsert_writer_t *w = fl_calloc(1, sizeof(*w));
    w->t = t;
    w->engine = engine;
    fl_buf_init(&w->key);
    fl_buf_init(&w->bucket_key);
    fl_buf_init(&w->value);
    *out = w;
    return 0;
}

/* Encodes row's key (its physical primary key) into w->key and picks its
 * partition (index in the engine's cache) and bucket. */
static int fl_upsert_key(fluss_upsert_writer_t *w, const fluss_row_t *row, size_t *part,
                         int32_t *bucket, fl_error_t *err) {
    const fluss_table_t *t = w->t;
    if (row->row.column_count != t->desc.schema.column_count)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "the row is of another table");
    w->key.len = 0;
    int rc = fl_key_encode(t->pk_codec, &row->row, &t->desc.schema, t->kpk, t->kpk_count, &w->key,
                           err);
    if (!rc) rc = fl_writer_route(w->engine, &row->row, part, err);
    if (rc) return rc;
    if (t->default_bucket_key && t->pk_codec == t->bucket_codec) {
        *bucket = fl_key_bucket(t->bucket_codec, w->key.data, w->key.len, t->bucket_count);
        return 0;
    }
    w->bucket_key.len = 0;
    rc = fl_key_encode(t->bucket_codec, &row->row, &t->desc.schema, t->bucket_key,
                       t->bucket_key_count, &w->bucket_key, err);
    if (!rc)
        *bucket = fl_key_bucket(t->bucket_codec, w->bucket_key.data, w->bucket_key.len,
                                t->bucket_count);
    return rc;
}

int fluss_upsert_writer_upsert(fluss_upsert_writer_t *w, const fluss_row_t *row,
                               fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    int32_t bucket = 0;
    size_t part = 0;
    int rc = fl_upsert_key(w, row, &part, &bucket, &err);
    if (!rc) {
        w->value.len = 0;
        rc = fl_row_encode(w->t->kv_format, &row->row, w->t->types,
                           w->t->desc.schema.column_count, &w->value, &err);
    }
    if (!rc)
        rc = fl_writer_put_kv(w->engine, part, bucket, w->key.data, w->key.len, w->value.data,
                              w->value.len, &err);
    return rc ? fl_client_error_out(e, &err) : 0;
}

int fluss_upsert_writer_delete(fluss_upsert_writer_t *w, const fluss_row_t *key,
                               fluss_error_t *e) {
    fl_error_t err;
    fl_err_clear(&err);
    int32_t bucket = 0;
    size_t part = 0;
    int rc = fl_upsert_key(w, key, &part, &bucket, &err);
    if (!rc) rc = fl_writer_put_kv(w->engine, part, bucket, w->key.data, w->key.len, NULL, 0, &err);
    return rc ? fl_client_error_out(e, &err) : 0;
}

int fluss_upsert_writer_flush(fluss_upsert_writer_t *w, fluss_error_t *e) {
    return fluss_append_writer_flush(w->engine, e);
}

int fluss_upsert_writer_poll(fluss_upsert_writer_t *w, int timeout_ms, fluss_error_t *e) {
    return fluss_append_writer_poll(w->engine, timeout_ms, e);
}

void fluss_upsert_writer_set_ack_callback(fluss_upsert_writer_t *w, fluss_append_ack_cb cb,
                                          void *opaque) {
    fluss_append_writer_set_ack_callback(w->engine, cb, opaque);
}

void fluss_upsert_writer_stats(const fluss_upsert_writer_t *w, int64_t *rows_acked,
                               int64_t *bytes_acked) {
    fluss_append_writer_stats(w->engine, rows_acked, bytes_acked);
}

void fluss_upsert_writer_destroy(fluss_upsert_writer_t *w) {
    if (!w) return;
    fluss_append_writer_destroy(w->engine);
    fl_buf_free(&w->key);
    fl_buf_free(&w->bucket_key);
    fl_buf_free(&w->value);
    fl_free(w);
}
