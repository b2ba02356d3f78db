/*
 * coordinator_producer_codec.c — one producer's offsets and their file
 * (coordinator_producer_codec.h). The encoder prints the JSON itself (a
 * producer may hold a quarter million buckets; no tree of them is built);
 * the decoder goes through jansson and then checks every value.
 */
#include "coordinator_producer_codec.h"

#include <assert.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "types_table.h"

#define FL_PRODUCER_FILE_VERSION 1

int fl_producer_bucket_cmp(const fl_producer_bucket_offset_t *a,
                           const fl_producer_bucket_offset_t *b) {
    if (a->table_id != b->table_id) return a->table_id < b->table_id ? -1 : 1;
    if (a->has_partition != b->has_partition) return a->has_partition ? 1 : -1;
    if (a->has_partition && a->partition_id != b->partition_id)
        return a->partition_id < b->partition_id ? -1 : 1;
    if (a->bucket != b->bucket) return a->bucket < b->bucket ? -1 : 1;
    return 0;
}

typedef struct fl_positioned {
    fl_producer_bucket_offset_t v;
    size_t pos;
} fl_positioned_t;

static int fl_positioned_cmp(const void *x, const void *y) {
    const fl_positioned_t *a = x, *b = y;
    int c = fl_producer_bucket_cmp(&a->v, &b->v);
    if (c) return c;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

void fl_producer_buckets_normalize(fl_producer_bucket_offset_t *b, size_t *n) {
    if (*n < 2) return;
    fl_positioned_t *t = fl_malloc(*n * sizeof(*t));
    for (size_t i = 0; i < *n; i++) t[i] = (fl_positioned_t){b[i], i};
    qsort(t, *n, sizeof(*t), fl_positioned_cmp);
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) {
        /* of equal keys, the last given (highest position) sorts last */
        if (i + 1 < *n && fl_producer_bucket_cmp(&t[i].v, &t[i + 1].v) == 0) continue;
        b[k++] = t[i].v;
    }
    *n = k;
    fl_free(t);
}

void fl_producer_entry_free(fl_producer_entry_t *e) {
    fl_free(e->producer_id);
    fl_free(e->b);
    memset(e, 0, sizeof(*e));
}

/* ---- encode ---- */

static void fl_buf_printf(fl_buf_t *out, const char *fmt, ...) {
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    assert(n >= 0 && (size_t)n < sizeof(tmp));
    fl_buf_append(out, tmp, (size_t)n);
}

void fl_producer_entry_encode(const fl_producer_entry_t *e, fl_buf_t *out) {
    char why[FL_ERROR_MSG_MAX];
    assert(!fl_name_invalid(e->producer_id, why, sizeof(why))); /* no JSON escaping needed */
    fl_buf_printf(out, "{\"version\":%d,\"producer_id\":\"", FL_PRODUCER_FILE_VERSION);
    fl_buf_append(out, e->producer_id, strlen(e->producer_id));
    fl_buf_printf(out, "\",\"expiration_time\":%" PRId64 ",\"tables\":[", e->expiration_ms);
    for (size_t i = 0; i < e->n; i++) {
        const fl_producer_bucket_offset_t *b = &e->b[i];
        assert(i == 0 || fl_producer_bucket_cmp(&e->b[i - 1], b) < 0);
        bool first_of_table = i == 0 || e->b[i - 1].table_id != b->table_id;
        if (first_of_table)
            fl_buf_printf(out, "%s{\"table_id\":%" PRId64 ",\"buckets\":[", i ? "]}," : "",
                          b->table_id);
        else fl_buf_append(out, ",", 1);
        if (b->has_partition)
            fl_buf_printf(out, "[%" PRId32 ",%" PRId64 ",%" PRId64 "]", b->bucket, b->offset,
                          b->partition_id);
        else fl_buf_printf(out, "[%" PRId32 ",%" PRId64 "]", b->bucket, b->offset);
    }
    fl_buf_printf(out, "%s]}\n", e->n ? "]}" : "");
}

/* ---- decode ---- */

static bool fl_json_int(const json_t *v, int64_t *out) {
    if (!json_is_integer(v)) return false;
    *out = (int64_t)json_integer_value(v);
    return true;
}

/* One [bucket, offset(, partition)] of table_id into *b; NULL or why not. */
static const char *fl_producer_decode_bucket(const json_t *t, int64_t table_id,
                                             fl_producer_bucket_offset_t *b) {
    size_t k = json_array_size(t);
    int64_t bucket, offset, partition = 0;
    if (!json_is_array(t) || (k != 2 && k != 3)) return "a bucket is not [bucket, offset(, partition)]";
    if (!fl_json_int(json_array_get(t, 0), &bucket) || bucket < INT32_MIN || bucket > INT32_MAX)
        return "a bucket id is not an int32";
    if (!fl_json_int(json_array_get(t, 1), &offset)) return "an offset is not an integer";
    if (k == 3 && !fl_json_int(json_array_get(t, 2), &partition))
        return "a partition id is not an integer";
    *b = (fl_producer_bucket_offset_t){table_id, k == 3, partition, (int32_t)bucket, offset};
    return NULL;
}

/* The tables array into out->b (counted and bounded first). */
static const char *fl_producer_decode_tables(const json_t *tables, fl_producer_entry_t *out) {
    if (!json_is_array(tables)) return "no table list";
    size_t total = 0;
    for (size_t i = 0; i < json_array_size(tables); i++) {
        const json_t *t = json_array_get(tables, i);
        const json_t *buckets = json_object_get(t, "buckets");
        if (!json_is_object(t) || json_object_size(t) != 2 || !json_is_array(buckets) ||
            json_array_size(buckets) == 0)
            return "a table is not {table_id, buckets: [at least one]}";
        total += json_array_size(buckets);
        if (total > FL_PRODUCER_BUCKETS_MAX) return "more buckets than a producer may hold";
    }
    out->b = fl_calloc(total ? total : 1, sizeof(*out->b));
    for (size_t i = 0; i < json_array_size(tables); i++) {
        const json_t *t = json_array_get(tables, i), *buckets = json_object_get(t, "buckets");
        int64_t table_id;
        if (!fl_json_int(json_object_get(t, "table_id"), &table_id))
            return "a table id is not an integer";
        if (out->n && out->b[out->n - 1].table_id >= table_id)
            return "tables out of order or given twice";
        for (size_t k = 0; k < json_array_size(buckets); k++) {
            fl_producer_bucket_offset_t *b = &out->b[out->n];
            const char *why = fl_producer_decode_bucket(json_array_get(buckets, k), table_id, b);
            if (why) return why;
            /* strictly ascending: what the encoder writes, and no key twice */
            if (out->n && fl_producer_bucket_cmp(&out->b[out->n - 1], b) >= 0)
                return "tables or buckets out of order or given twice";
            if (k && out->b[out->n - 1].has_partition != b->has_partition)
                return "a table with buckets with and without a partition id";
            out->n++;
        }
    }
    return NULL;
}

static const char *fl_producer_decode_root(const json_t *root, fl_producer_entry_t *out) {
    int64_t version;
    if (!json_is_object(root) || json_object_size(root) != 4) return "not a producer offsets object";
    if (!fl_json_int(json_object_get(root, "version"), &version) ||
        version != FL_PRODUCER_FILE_VERSION)
        return "unknown version";
    const json_t *id = json_object_get(root, "producer_id");
    char why[FL_ERROR_MSG_MAX];
    if (!json_is_string(id) || strlen(json_string_value(id)) != json_string_length(id) ||
        fl_name_invalid(json_string_value(id), why, sizeof(why)))
        return "bad producer id";
    out->producer_id = fl_strdup(json_string_value(id));
    if (!fl_json_int(json_object_get(root, "expiration_time"), &out->expiration_ms))
        return "no expiration time";
    return fl_producer_decode_tables(json_object_get(root, "tables"), out);
}

int fl_producer_entry_decode(const char *text, size_t len, fl_producer_entry_t *out,
                             fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    if (len > FL_PRODUCER_FILE_MAX)
        return fl_err_set(err, FLUSS_ERR_STORAGE_EXCEPTION,
                          "A producer offsets file is larger than %u bytes", FL_PRODUCER_FILE_MAX);
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return fl_err_set(err, FLUSS_ERR_STORAGE_EXCEPTION,
                          "A producer offsets file does not parse: %s", je.text);
    const char *why = fl_producer_decode_root(root, out);
    json_decref(root);
    if (!why) return 0;
    fl_producer_entry_free(out);
    return fl_err_set(err, FLUSS_ERR_STORAGE_EXCEPTION, "A producer offsets file is damaged: %s",
                      why);
}
