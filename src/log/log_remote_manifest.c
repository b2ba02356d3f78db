/*
 * log_remote_manifest.c — remote log manifests and their commit handle
 * (log_remote_manifest.h): the model, its queries and the JSON codec.
 */
#include "log_remote_manifest.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common_alloc.h"

#define FL_MANIFEST_VERSION 1

static char *fl_dup_or_null(const char *s) { return s ? fl_strdup(s) : NULL; }

void fl_remote_manifest_init(fl_remote_manifest_t *m, const fl_remote_bucket_t *b) {
    memset(m, 0, sizeof(*m));
    m->partition_id = -1;
    if (!b) return;
    m->database = fl_dup_or_null(b->database);
    m->table = fl_dup_or_null(b->table);
    m->partition_name = fl_dup_or_null(b->partition_name);
    m->table_id = b->table_id;
    m->partition_id = b->partition_name ? b->partition_id : -1;
    m->bucket = b->bucket;
}

void fl_remote_manifest_free(fl_remote_manifest_t *m) {
    if (!m) return;
    fl_free(m->database);
    fl_free(m->table);
    fl_free(m->partition_name);
    fl_free(m->segments);
    memset(m, 0, sizeof(*m));
    m->partition_id = -1;
}

void fl_remote_manifest_copy(fl_remote_manifest_t *dst, const fl_remote_manifest_t *src) {
    fl_remote_bucket_t b = {src->database, src->table, src->partition_name, src->table_id,
                            src->partition_id, src->bucket};
    fl_remote_manifest_init(dst, &b);
    if (src->count) {
        dst->cap = src->count;
        dst->segments = fl_malloc(src->count * sizeof(*dst->segments));
        memcpy(dst->segments, src->segments, src->count * sizeof(*dst->segments));
        dst->count = src->count;
    }
}

static bool fl_str_eq(const char *a, const char *b) {
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

bool fl_remote_manifest_is_for(const fl_remote_manifest_t *m, const fl_remote_bucket_t *b) {
    return fl_str_eq(m->database, b->database) && fl_str_eq(m->table, b->table) &&
           fl_str_eq(m->partition_name, b->partition_name) && m->table_id == b->table_id &&
           m->partition_id == (b->partition_name ? b->partition_id : -1) && m->bucket == b->bucket;
}

int fl_remote_manifest_append(fl_remote_manifest_t *m, const fl_remote_segment_t *s,
                              fl_error_t *err) {
    if (s->start_offset < 0 || s->end_offset <= s->start_offset || s->size_bytes < 0 ||
        !fl_uuid_text_ok(s->id, strlen(s->id)))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "remote segment %s [%" PRId64 ", %" PRId64
                          ") is not valid", s->id, s->start_offset, s->end_offset);
    if (m->count && s->start_offset < m->segments[m->count - 1].end_offset)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "remote segment at %" PRId64 " overlaps the manifest's end %" PRId64,
                          s->start_offset, m->segments[m->count - 1].end_offset);
    if (m->count >= FL_REMOTE_MANIFEST_SEGMENTS_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "the remote manifest is full");
    if (m->count == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 16;
        m->segments = fl_realloc(m->segments, m->cap * sizeof(*m->segments));
    }
    m->segments[m->count++] = *s;
    return 0;
}

void fl_remote_manifest_drop_front(fl_remote_manifest_t *m, size_t n) {
    if (n > m->count) n = m->count;
    if (n == 0) return;
    memmove(m->segments, m->segments + n, (m->count - n) * sizeof(*m->segments));
    m->count -= n;
}

int64_t fl_remote_manifest_start(const fl_remote_manifest_t *m) {
    return m->count ? m->segments[0].start_offset : INT64_MAX;
}

int64_t fl_remote_manifest_end(const fl_remote_manifest_t *m) {
    return m->count ? m->segments[m->count - 1].end_offset : -1;
}

int64_t fl_remote_manifest_bytes(const fl_remote_manifest_t *m) {
    int64_t n = 0;
    for (size_t i = 0; i < m->count; i++) n += m->segments[i].size_bytes;
    return n;
}

size_t fl_remote_manifest_relevant(const fl_remote_manifest_t *m, int64_t offset) {
    /* the floor segment (largest start <= offset), else the first */
    size_t lo = 0, hi = m->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->segments[mid].start_offset <= offset) lo = mid + 1;
        else hi = mid;
    }
    size_t i = lo ? lo - 1 : 0;
    while (i < m->count && m->segments[i].end_offset <= offset) i++;
    return i;
}

size_t fl_remote_manifest_for_time(const fl_remote_manifest_t *m, int64_t ts) {
    for (size_t i = 0; i < m->count; i++)
        if (m->segments[i].max_timestamp >= ts) return i;
    return m->count;
}

/* ---- JSON ---- */

void fl_remote_manifest_encode(const fl_remote_manifest_t *m, fl_buf_t *out) {
    json_t *root = json_object();
    json_object_set_new(root, "version", json_integer(FL_MANIFEST_VERSION));
    json_object_set_new(root, "database", json_string(m->database ? m->database : ""));
    json_object_set_new(root, "table", json_string(m->table ? m->table : ""));
    if (m->partition_name) json_object_set_new(root, "partition_name", json_string(m->partition_name));
    json_object_set_new(root, "table_id", json_integer(m->table_id));
    if (m->partition_name) json_object_set_new(root, "partition_id", json_integer(m->partition_id));
    json_object_set_new(root, "bucket_id", json_integer(m->bucket));
    json_t *segs = json_array();
    for (size_t i = 0; i < m->count; i++) {
        const fl_remote_segment_t *s = &m->segments[i];
        json_t *o = json_object();
        json_object_set_new(o, "segment_id", json_string(s->id));
        json_object_set_new(o, "start_offset", json_integer(s->start_offset));
        json_object_set_new(o, "end_offset", json_integer(s->end_offset));
        json_object_set_new(o, "max_timestamp", json_integer(s->max_timestamp));
        json_object_set_new(o, "size_in_bytes", json_integer(s->size_bytes));
        json_array_append_new(segs, o);
    }
    json_object_set_new(root, "remote_log_segments", segs);
    char *text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    fl_buf_append(out, text, strlen(text));
    free(text);
}

/* A database, table or partition name that is one plain path component. */
static const char *fl_json_name(json_t *v) {
    const char *s = json_string_value(v);
    if (!s) return NULL;
    size_t n = json_string_length(v);
    if (n == 0 || n > FL_REMOTE_NAME_MAX || strlen(s) != n || strchr(s, '/') ||
        strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return NULL;
    return s;
}

static bool fl_json_int(json_t *v, int64_t lo, int64_t hi, int64_t *out) {
    if (!json_is_integer(v)) return false;
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi) return false;
    *out = (int64_t)x;
    return true;
}

static const char *fl_manifest_segment(json_t *o, fl_remote_segment_t *s) {
    memset(s, 0, sizeof(*s));
    if (!json_is_object(o)) return "a segment is not an object";
    json_t *id = json_object_get(o, "segment_id");
    const char *ids = json_string_value(id);
    if (!ids || !fl_uuid_text_ok(ids, json_string_length(id))) return "bad segment_id";
    memcpy(s->id, ids, FL_UUID_TEXT_LEN + 1);
    int64_t size = 0;
    if (!fl_json_int(json_object_get(o, "start_offset"), 0, INT64_MAX, &s->start_offset))
        return "bad start_offset";
    if (!fl_json_int(json_object_get(o, "end_offset"), 0, INT64_MAX, &s->end_offset) ||
        s->end_offset <= s->start_offset)
        return "bad end_offset";
    if (!fl_json_int(json_object_get(o, "max_timestamp"), INT64_MIN, INT64_MAX, &s->max_timestamp))
        return "bad max_timestamp";
    if (!fl_json_int(json_object_get(o, "size_in_bytes"), 0, INT32_MAX, &size))
        return "bad size_in_bytes";
    s->size_bytes = (int32_t)size;
    return NULL;
}

static int fl_cmp_id(const void *a, const void *b) {
    return strcasecmp(*(const char *const *)a, *(const char *const *)b);
}

/* Segment ids name directories: two segments never share one. */
static bool fl_manifest_ids_unique(const fl_remote_manifest_t *m) {
    if (m->count < 2) return true;
    const char **ids = fl_malloc(m->count * sizeof(*ids));
    for (size_t i = 0; i < m->count; i++) ids[i] = m->segments[i].id;
    qsort(ids, m->count, sizeof(*ids), fl_cmp_id);
    bool ok = true;
    for (size_t i = 1; i < m->count && ok; i++) ok = strcasecmp(ids[i - 1], ids[i]) != 0;
    fl_free(ids);
    return ok;
}

/* The fields of a manifest; why on failure. */
static const char *fl_manifest_fields(json_t *root, fl_remote_manifest_t *m) {
    int64_t v = 0, bucket = 0;
    if (!fl_json_int(json_object_get(root, "version"), FL_MANIFEST_VERSION, FL_MANIFEST_VERSION, &v))
        return "unknown version";
    const char *db = fl_json_name(json_object_get(root, "database"));
    const char *table = fl_json_name(json_object_get(root, "table"));
    json_t *pn = json_object_get(root, "partition_name"), *pid = json_object_get(root, "partition_id");
    const char *part = pn ? fl_json_name(pn) : NULL;
    if (!db || !table) return "bad database or table name";
    if ((pn != NULL) != (pid != NULL)) return "partition_name and partition_id go together";
    if (pn && !part) return "bad partition_name";
    if (!fl_json_int(json_object_get(root, "table_id"), 0, INT64_MAX, &m->table_id))
        return "bad table_id";
    if (pid && !fl_json_int(pid, 0, INT64_MAX, &m->partition_id)) return "bad partition_id";
    if (!fl_json_int(json_object_get(root, "bucket_id"), 0, INT32_MAX, &bucket))
        return "bad bucket_id";
    m->bucket = (int32_t)bucket;
    m->database = fl_strdup(db);
    m->table = fl_strdup(table);
    m->partition_name = fl_dup_or_null(part);
    json_t *segs = json_object_get(root, "remote_log_segments");
    if (!json_is_array(segs) || json_array_size(segs) > FL_REMOTE_MANIFEST_SEGMENTS_MAX)
        return "bad remote_log_segments";
    for (size_t i = 0; i < json_array_size(segs); i++) {
        fl_remote_segment_t s;
        const char *why = fl_manifest_segment(json_array_get(segs, i), &s);
        if (why) return why;
        if (m->count && s.start_offset < m->segments[m->count - 1].end_offset)
            return "segments overlap or are out of order";
        fl_error_t e;
        if (fl_remote_manifest_append(m, &s, &e)) return "bad segment";
    }
    return fl_manifest_ids_unique(m) ? NULL : "a segment id repeats";
}

int fl_remote_manifest_decode(const uint8_t *data, size_t len, fl_remote_manifest_t *m,
                              fl_error_t *err) {
    fl_remote_manifest_init(m, NULL);
    if (len > FL_REMOTE_MANIFEST_BYTES_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "remote log manifest of %zu bytes is too large",
                          len);
    json_error_t je;
    json_t *root = json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "remote log manifest does not parse: %s",
                          je.text);
    const char *why = json_is_object(root) ? fl_manifest_fields(root, m) : "not an object";
    json_decref(root);
    if (why) {
        fl_remote_manifest_free(m);
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "remote log manifest is damaged: %s", why);
    }
    return 0;
}

void fl_remote_handle_encode(const char *manifest_path, int64_t end_offset, fl_buf_t *out) {
    json_t *root = json_object();
    json_object_set_new(root, "version", json_integer(FL_MANIFEST_VERSION));
    json_object_set_new(root, "remote_log_manifest_path", json_string(manifest_path));
    json_object_set_new(root, "remote_log_end_offset", json_integer(end_offset));
    char *text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    fl_buf_append(out, text, strlen(text));
    free(text);
}

int fl_remote_handle_decode(const uint8_t *data, size_t len, fl_remote_handle_t *h,
                            fl_error_t *err) {
    memset(h, 0, sizeof(*h));
    if (len > 64 * 1024)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "remote log manifest handle is too large");
    json_error_t je;
    json_t *root = json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "remote log manifest handle does not parse: %s",
                          je.text);
    int64_t v = 0;
    json_t *p = json_object_get(root, "remote_log_manifest_path");
    const char *path = json_string_value(p);
    const char *why = NULL;
    if (!fl_json_int(json_object_get(root, "version"), FL_MANIFEST_VERSION, FL_MANIFEST_VERSION, &v))
        why = "unknown version";
    else if (!path || json_string_length(p) == 0 || strlen(path) != json_string_length(p) ||
             json_string_length(p) > 8192)
        why = "bad remote_log_manifest_path";
    else if (!fl_json_int(json_object_get(root, "remote_log_end_offset"), -1, INT64_MAX,
                          &h->end_offset))
        why = "bad remote_log_end_offset";
    if (!why) h->manifest_path = fl_strdup(path);
    json_decref(root);
    if (why) return fl_err_set(err, FLUSS_ERR__CORRUPT, "remote log manifest handle: %s", why);
    return 0;
}

void fl_remote_handle_free(fl_remote_handle_t *h) {
    if (!h) return;
    fl_free(h->manifest_path);
    h->manifest_path = NULL;
}
