/*
 * server_lake_commit.c — the commit of a lake tiering round
 * (server_lake_commit.h).
 */
#include "server_lake_commit.h"

#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common_alloc.h"
#include "common_buf.h"
#include "common_fs.h"
#include "common_log.h"
#include "common_time.h"
#include "common_uuid.h"
#include "common_vfs.h"

#define FL_LAKE_OFFSETS_BYTES_MAX (64u << 20)
/* Manifests a snapshot's list may name before the old ones are merged
 * (lakehouse.md: "merged above 16 per snapshot"). */
#define FL_LAKE_MANIFESTS_MAX 16
/* Bounds of an offsets file (max.bucket.num's default is 128,000). */
#define FL_LAKE_BUCKETS_MAX 131072
#define FL_LAKE_PARTITIONS_MAX 131072

void fl_lake_kill_point(const char *step) {
    const char *at = getenv("FLUSS_TEST_LAKE_KILL");
    if (!at || strcmp(at, step) != 0) return;
    FL_WARN("test hook FLUSS_TEST_LAKE_KILL: killed at '%s'", step);
    raise(SIGKILL);
}

/* ---- offsets ---- */

void fl_lake_offsets_free(fl_lake_offsets_t *o) {
    fl_free(o->items);
    memset(o, 0, sizeof(*o));
}

int64_t fl_lake_offsets_get(const fl_lake_offsets_t *o, int64_t partition_id, int32_t bucket) {
    for (size_t i = 0; i < o->count; i++)
        if (o->items[i].partition_id == partition_id && o->items[i].bucket == bucket)
            return o->items[i].offset;
    return -1;
}

void fl_lake_offsets_set(fl_lake_offsets_t *o, int64_t partition_id, int32_t bucket,
                         int64_t offset) {
    for (size_t i = 0; i < o->count; i++)
        if (o->items[i].partition_id == partition_id && o->items[i].bucket == bucket) {
            o->items[i].offset = offset;
            return;
        }
    if (o->count == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 16;
        o->items = fl_realloc(o->items, o->cap * sizeof(*o->items));
    }
    o->items[o->count++] = (fl_lake_offset_t){partition_id, bucket, offset};
}

/* One bucket_offsets array into o (-1 entries are no offset). */
/* Appends one bucket_offsets array for partition_id (each partition
 * comes once, so nothing is looked up). */
static int fl_lake_offsets_take(const json_t *arr, int64_t partition_id, fl_lake_offsets_t *o,
                                const char *path, fl_error_t *err) {
    if (!json_is_array(arr))
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "%s: bucket_offsets is not an array", path);
    if (json_array_size(arr) > FL_LAKE_BUCKETS_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "%s: more than %d bucket offsets", path,
                          FL_LAKE_BUCKETS_MAX);
    for (size_t b = 0; b < json_array_size(arr); b++) {
        const json_t *v = json_array_get(arr, b);
        if (!json_is_integer(v) || json_integer_value(v) < -1)
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "%s: bucket_offsets[%zu] is not an offset",
                              path, b);
        if (json_integer_value(v) < 0) continue;
        if (o->count == o->cap) {
            o->cap = o->cap ? o->cap * 2 : 16;
            o->items = fl_realloc(o->items, o->cap * sizeof(*o->items));
        }
        o->items[o->count++] =
            (fl_lake_offset_t){partition_id, (int32_t)b, (int64_t)json_integer_value(v)};
    }
    return 0;
}

int fl_lake_offsets_decode(const char *path, const void *text, size_t len, int64_t table_id,
                           fl_lake_offsets_t *o, fl_error_t *err) {
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    int rc = 0;
    const json_t *tid = json_object_get(root, "table_id");
    if (!root || !json_is_integer(tid)) {
        rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "%s: not a bucket offsets file", path);
    } else if (json_integer_value(tid) != table_id) {
        rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "%s: offsets of table %" PRId64 ", not %" PRId64,
                        path, (int64_t)json_integer_value(tid), table_id);
    } else if (json_object_get(root, "bucket_offsets")) {
        rc = fl_lake_offsets_take(json_object_get(root, "bucket_offsets"), -1, o, path, err);
    } else {
        const json_t *parts = json_object_get(root, "partition_offsets");
        size_t i;
        const json_t *p;
        if (!json_is_array(parts))
            rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "%s: no bucket or partition offsets", path);
        if (!rc && json_array_size(parts) > FL_LAKE_PARTITIONS_MAX)
            rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "%s: more than %d partitions", path,
                            FL_LAKE_PARTITIONS_MAX);
        json_array_foreach(parts, i, p) {
            const json_t *pid = json_object_get(p, "partition_id");
            if (rc) break;
            bool again = false;
            for (size_t k = 0; k < i && json_is_integer(pid) && !again; k++)
                again = json_equal(json_object_get(json_array_get(parts, k), "partition_id"), pid);
            if (!json_is_integer(pid) || json_integer_value(pid) < 0 || again)
                rc = fl_err_set(err, FLUSS_ERR__CORRUPT,
                                "%s: partition_offsets[%zu] has no id, or one named before", path,
                                i);
            else
                rc = fl_lake_offsets_take(json_object_get(p, "bucket_offsets"),
                                          json_integer_value(pid), o, path, err);
        }
    }
    json_decref(root);
    return rc;
}

const char *fl_lake_summary(const fl_ice_snapshot_t *s, const char *key) {
    for (size_t i = 0; i < s->n_summary; i++)
        if (strcmp(s->summary[i].key, key) == 0) return s->summary[i].value;
    return NULL;
}

int fl_lake_head_offsets(const fl_ice_table_head_t *h, int64_t table_id, fl_lake_offsets_t *out,
                         fl_error_t *err) {
    const fl_ice_table_meta_t *m = &h->meta.meta;
    const fl_ice_snapshot_t *s = fl_ice_meta_snapshot(m, m->current_snapshot_id);
    bool tiered;
    return s ? fl_lake_snapshot_offsets(s, table_id, out, &tiered, err) : 0;
}

int fl_lake_snapshot_offsets(const fl_ice_snapshot_t *s, int64_t table_id,
                             fl_lake_offsets_t *out, bool *tiered, fl_error_t *err) {
    const char *uri = fl_lake_summary(s, "fluss-offsets");
    *tiered = uri != NULL;
    if (!uri) return 0; /* a snapshot not of ours: nothing tiered by it */
    const char *path = fl_lake_uri_path(uri);
    fl_buf_t text;
    fl_buf_init(&text);
    int rc = fl_fs_read_all(path, FL_LAKE_OFFSETS_BYTES_MAX, &text, NULL, err);
    if (!rc) rc = fl_lake_offsets_decode(path, text.data, text.len, table_id, out, err);
    fl_buf_free(&text);
    return rc;
}

static int fl_lake_offset_cmp(const void *a, const void *b) {
    const fl_lake_offset_t *x = a, *y = b;
    if (x->partition_id != y->partition_id) return x->partition_id < y->partition_id ? -1 : 1;
    return (x->bucket > y->bucket) - (x->bucket < y->bucket);
}

char *fl_lake_offsets_encode(const fl_lake_offsets_t *o, int64_t table_id, bool partitioned) {
    /* by partition, then bucket: one array per partition, -1 in its gaps */
    fl_lake_offset_t *sorted = fl_calloc(o->count + 1, sizeof(*sorted));
    if (o->count) memcpy(sorted, o->items, o->count * sizeof(*sorted));
    qsort(sorted, o->count, sizeof(*sorted), fl_lake_offset_cmp);
    json_t *root = json_object();
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "table_id", json_integer(table_id));
    json_t *parts = json_array(), *arr = NULL;
    for (size_t i = 0; i < o->count; i++) {
        if (i == 0 || sorted[i].partition_id != sorted[i - 1].partition_id) {
            arr = json_array();
            if (partitioned) {
                json_t *p = json_object();
                json_object_set_new(p, "partition_id", json_integer(sorted[i].partition_id));
                json_object_set_new(p, "bucket_offsets", arr);
                json_array_append_new(parts, p);
            } else if (!json_object_get(root, "bucket_offsets")) {
                json_object_set_new(root, "bucket_offsets", arr);
            } else {
                json_decref(arr); /* a table without partitions has one array */
                arr = NULL;
            }
        }
        if (!arr) continue;
        while ((int32_t)json_array_size(arr) < sorted[i].bucket)
            json_array_append_new(arr, json_integer(-1));
        json_array_append_new(arr, json_integer(sorted[i].offset));
    }
    if (partitioned) json_object_set_new(root, "partition_offsets", parts);
    else json_decref(parts);
    if (!partitioned && !json_object_get(root, "bucket_offsets"))
        json_object_set_new(root, "bucket_offsets", json_array());
    char *text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    fl_free(sorted);
    return text;
}

/* ---- the round's files ---- */

typedef struct fl_lake_commit {
    const char *dir;
    const fl_ice_table_meta_t *base;
    const fl_ice_schema_t *schema;
    const fl_ice_partition_spec_t *spec;
    int64_t snapshot_id, sequence;
    char uuid[FL_UUID_TEXT_LEN + 1];
    /* the round's manifests: [0] data, [1] deletes; merged ones likewise */
    char offsets_path[4600], manifest_path[2][4600], list_path[4600], merged_path[2][4600];
    bool wrote_offsets, wrote_manifest[2], wrote_list, wrote_merged[2];
    int64_t added_records, added_bytes, added_deletes;
    size_t added_data_files, added_delete_files;
    size_t changed_partitions;
} fl_lake_commit_t;

static void fl_lake_commit_cleanup(fl_lake_commit_t *c) {
    if (c->wrote_offsets) fl_vfs_unlink(c->offsets_path);
    if (c->wrote_list) fl_vfs_unlink(c->list_path);
    for (int k = 0; k < 2; k++) {
        if (c->wrote_manifest[k]) fl_vfs_unlink(c->manifest_path[k]);
        if (c->wrote_merged[k]) fl_vfs_unlink(c->merged_path[k]);
    }
}

static void fl_lake_commit_keep(fl_lake_commit_t *c) {
    c->wrote_offsets = c->wrote_list = false;
    memset(c->wrote_manifest, 0, sizeof(c->wrote_manifest));
    memset(c->wrote_merged, 0, sizeof(c->wrote_merged));
}

/* The partition value of spec field f for a file. */
static int fl_lake_partition_value(const fl_lake_commit_t *c, const fl_ice_partition_field_t *f,
                                   const fl_lake_new_file_t *nf, const fl_strlist_t *keys,
                                   fl_ice_value_t *out, fl_error_t *err) {
    const fl_ice_field_t *src = fl_ice_schema_field(c->schema, f->source_id);
    memset(out, 0, sizeof(*out));
    if (f->transform == FL_ICE_BUCKET || (src && strcmp(src->name, "__bucket") == 0)) {
        out->i = nf->bucket;
        return 0;
    }
    int k = src ? fl_strlist_index(keys, src->name) : -1;
    if (k < 0 || !nf->partition_values || f->type != FL_ICE_STRING)
        return fl_err_set(err, FLUSS_ERR__STATE,
                          "the lake table's partition field '%s' is neither the bucket nor a "
                          "string partition key of the table",
                          f->name);
    const char *v = nf->partition_values[k];
    out->s.p = (const uint8_t *)v;
    out->s.len = strlen(v);
    return 0;
}

static int fl_lake_stats_cmp(const void *a, const void *b) {
    const fl_ice_column_stats_t *x = a, *y = b;
    return (x->field_id > y->field_id) - (x->field_id < y->field_id);
}

/* The manifest entry of one new file (its memory in arena). */
static int fl_lake_entry(fl_lake_commit_t *c, const fl_lake_new_file_t *nf,
                         const fl_strlist_t *keys, fl_avro_arena_t *a,
                         fl_ice_manifest_entry_t *e, fl_error_t *err) {
    const Fluss__PbLakeDataFile *f = nf->file;
    memset(e, 0, sizeof(*e));
    e->status = FL_ICE_ADDED;
    e->snapshot_id = e->sequence_number = e->file_sequence_number = FL_ICE_NONE;
    fl_ice_data_file_t *d = &e->file;
    d->content = nf->deletes ? FL_ICE_POSITION_DELETES : FL_ICE_DATA;
    d->file_path = f->file_path;
    d->file_format = "PARQUET";
    d->record_count = f->record_count;
    d->file_size_bytes = f->file_size;
    d->sort_order_id = nf->deletes ? FL_ICE_NO_ORDER : c->base->default_sort_order_id;
    fl_ice_value_t *pv = fl_avro_arena_try_alloc(a, (c->spec->n_fields + 1) * sizeof(*pv));
    fl_ice_column_stats_t *cs =
        fl_avro_arena_try_alloc(a, (f->n_columns + 1) * sizeof(*cs));
    if (!pv || !cs) return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "lake commit: out of memory");
    for (size_t i = 0; i < c->spec->n_fields; i++) {
        int rc = fl_lake_partition_value(c, &c->spec->fields[i], nf, keys, &pv[i], err);
        if (rc) return rc;
    }
    d->partition = pv;
    for (size_t i = 0; i < f->n_columns; i++) {
        const Fluss__PbLakeColumnStats *s = f->columns[i];
        cs[i] = (fl_ice_column_stats_t){
            .field_id = s->field_id,
            .column_size = s->has_column_size ? s->column_size : FL_ICE_NONE,
            .value_count = s->has_value_count ? s->value_count : FL_ICE_NONE,
            .null_count = s->has_null_count ? s->null_count : FL_ICE_NONE,
            .nan_count = s->has_nan_count ? s->nan_count : FL_ICE_NONE,
        };
        static const uint8_t empty[1];
        if (s->has_lower)
            cs[i].lower = (fl_avro_bytes_t){s->lower.data ? s->lower.data : empty, s->lower.len};
        if (s->has_upper)
            cs[i].upper = (fl_avro_bytes_t){s->upper.data ? s->upper.data : empty, s->upper.len};
    }
    qsort(cs, f->n_columns, sizeof(*cs), fl_lake_stats_cmp);
    d->columns = cs;
    d->n_columns = f->n_columns;
    d->split_offsets = f->split_offsets;
    d->n_split_offsets = f->n_split_offsets;
    if (nf->deletes) {
        c->added_deletes += f->record_count;
        c->added_delete_files++;
    } else {
        c->added_records += f->record_count;
        c->added_data_files++;
    }
    c->added_bytes += f->file_size;
    return 0;
}

/* Writes entries as a data (deletes: delete) manifest of the round's
 * snapshot at path (*wrote set first: a failed write leaves a file to
 * remove). */
static int fl_lake_write_entries(const fl_lake_commit_t *c, const char *path, bool deletes,
                                 const fl_ice_manifest_entry_t *entries, size_t n, bool *wrote,
                                 fl_ice_manifest_summary_t *sum, fl_error_t *err) {
    fl_buf_t schema_json;
    fl_buf_init(&schema_json);
    int rc = fl_ice_schema_encode(c->schema, &schema_json, err);
    if (!rc) {
        fl_buf_put_u8(&schema_json, 0);
        fl_ice_manifest_t m = {deletes ? FL_ICE_MANIFEST_DELETES : FL_ICE_MANIFEST_DATA,
                               (const char *)schema_json.data,
                               c->schema->schema_id, *c->spec, c->snapshot_id, entries, n};
        *wrote = true;
        rc = fl_ice_manifest_write(path, &m, sum, err);
    }
    fl_buf_free(&schema_json);
    return rc;
}

/* The round's manifest of its data files (deletes: of its delete files),
 * when it has any; *has says whether one was written. */
static int fl_lake_write_manifest(fl_lake_commit_t *c, const fl_strlist_t *keys,
                                  const fl_lake_new_file_t *files, size_t n, bool deletes,
                                  fl_ice_manifest_summary_t *sum, bool *has, fl_error_t *err) {
    fl_avro_arena_t a;
    fl_avro_arena_init(&a);
    fl_ice_manifest_entry_t *entries = fl_calloc(n + 1, sizeof(*entries));
    size_t k = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        if (files[i].deletes == deletes) rc = fl_lake_entry(c, &files[i], keys, &a, &entries[k++], err);
    *has = k > 0;
    if (!rc && k)
        rc = fl_lake_write_entries(c, c->manifest_path[deletes], deletes, entries, k,
                                   &c->wrote_manifest[deletes], sum, err);
    fl_free(entries);
    fl_avro_arena_reset(&a);
    return rc;
}

/* Partitions touched: distinct (partition, bucket) among the files. */
static size_t fl_lake_changed_partitions(const fl_lake_new_file_t *files, size_t n) {
    size_t changed = 0;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = files[k].partition_id == files[i].partition_id &&
                   files[k].bucket == files[i].bucket;
        if (!seen) changed++;
    }
    return changed;
}

/* Rewrites the live entries of the old manifests of one content (deletes:
 * the delete manifests) as EXISTING entries of one manifest (their
 * snapshot ids and sequence numbers made explicit: inherited ones from
 * the list entry that named the manifest; a delete's sequence number says
 * which data it applies to), for the list that replaces them with it.
 * *has: false when there were none of that content. */
static int fl_lake_merge_manifests(fl_lake_commit_t *c, const fl_ice_manifest_list_t *old,
                                   bool deletes, fl_ice_manifest_summary_t *merged, bool *has,
                                   fl_error_t *err) {
    size_t cap = 64, n = 0;
    fl_ice_manifest_entry_t *entries = fl_calloc(cap, sizeof(*entries));
    fl_ice_manifest_read_t *reads = fl_calloc(old->n_manifests + 1, sizeof(*reads));
    for (size_t i = 0; i < old->n_manifests; i++) fl_ice_manifest_read_init(&reads[i]);
    fl_ice_manifest_content_t want = deletes ? FL_ICE_MANIFEST_DELETES : FL_ICE_MANIFEST_DATA;
    int rc = 0;
    *has = false;
    for (size_t i = 0; i < old->n_manifests && !rc; i++) {
        const fl_ice_manifest_file_t *mf = &old->manifests[i];
        if (mf->content != want) continue;
        *has = true;
        if ((rc = fl_ice_manifest_read(fl_lake_uri_path(mf->manifest_path), &reads[i], err)))
            break;
        const fl_ice_manifest_t *m = &reads[i].manifest;
        for (size_t k = 0; k < m->n_entries; k++) {
            const fl_ice_manifest_entry_t *e = &m->entries[k];
            if (e->status == FL_ICE_DELETED) continue;
            if (n == cap) entries = fl_realloc(entries, (cap *= 2) * sizeof(*entries));
            fl_ice_manifest_entry_t x = *e;
            x.status = FL_ICE_EXISTING;
            if (x.snapshot_id == FL_ICE_NONE) x.snapshot_id = mf->added_snapshot_id;
            if (x.sequence_number == FL_ICE_NONE) x.sequence_number = mf->sequence_number;
            if (x.file_sequence_number == FL_ICE_NONE) x.file_sequence_number = mf->sequence_number;
            entries[n++] = x;
        }
    }
    if (!rc && *has)
        rc = fl_lake_write_entries(c, c->merged_path[deletes], deletes, entries, n,
                                   &c->wrote_merged[deletes], merged, err);
    for (size_t i = 0; i < old->n_manifests; i++) fl_ice_manifest_read_reset(&reads[i]);
    fl_free(reads);
    fl_free(entries);
    return rc;
}

/* The manifest list: the base snapshot's manifests (once there would be
 * more than FL_LAKE_MANIFESTS_MAX, its data manifests merged into one and
 * its delete manifests into another: a reader opens every manifest of a
 * snapshot), then the round's data and delete manifests. */
static int fl_lake_write_list(fl_lake_commit_t *c, const fl_ice_manifest_summary_t sum[2],
                              const bool has_new[2], fl_error_t *err) {
    const fl_ice_snapshot_t *prev = fl_ice_meta_snapshot(c->base, c->base->current_snapshot_id);
    fl_ice_manifest_list_read_t old;
    fl_ice_manifest_list_read_init(&old);
    fl_ice_manifest_summary_t merged[2];
    fl_ice_manifest_summary_init(&merged[0]);
    fl_ice_manifest_summary_init(&merged[1]);
    bool has_merged[2] = {false, false};
    int rc = 0;
    if (prev) rc = fl_ice_manifest_list_read(fl_lake_uri_path(prev->manifest_list), &old, err);
    size_t n_old = prev && !rc ? old.list.n_manifests : 0;
    char merged_uri[2][4700], uri[2][4700];
    bool merge = n_old + has_new[0] + has_new[1] > FL_LAKE_MANIFESTS_MAX;
    for (int k = 0; k < 2 && !rc && merge; k++) {
        rc = fl_lake_merge_manifests(c, &old.list, k == 1, &merged[k], &has_merged[k], err);
        snprintf(merged_uri[k], sizeof(merged_uri[k]), "file://%s", c->merged_path[k]);
        merged[k].file.manifest_path = merged_uri[k];
    }
    if (rc) goto done;
    fl_ice_manifest_file_t *all = fl_calloc(n_old + 5, sizeof(*all));
    size_t n = 0;
    if (merge) {
        for (int k = 0; k < 2; k++)
            if (has_merged[k]) all[n++] = merged[k].file;
    } else if (n_old) {
        memcpy(all, old.list.manifests, n_old * sizeof(*all));
        n = n_old;
    }
    for (int k = 0; k < 2; k++) {
        if (!has_new[k]) continue;
        all[n] = sum[k].file;
        snprintf(uri[k], sizeof(uri[k]), "file://%s", c->manifest_path[k]);
        all[n++].manifest_path = uri[k];
    }
    fl_ice_manifest_list_t l = {c->snapshot_id, prev ? prev->snapshot_id : FL_ICE_NONE,
                                c->sequence, all, n};
    c->wrote_list = true;
    rc = fl_ice_manifest_list_write(c->list_path, &l, NULL, err);
    fl_free(all);
done:
    fl_ice_manifest_summary_reset(&merged[0]);
    fl_ice_manifest_summary_reset(&merged[1]);
    fl_ice_manifest_list_read_reset(&old);
    return rc;
}

static int64_t fl_lake_total(const fl_ice_snapshot_t *prev, const char *key) {
    const char *v = prev ? fl_lake_summary(prev, key) : NULL;
    return v ? strtoll(v, NULL, 10) : 0;
}

/* The new snapshot's summary (Appendix F) into props/texts. */
static size_t fl_lake_snapshot_summary(const fl_lake_commit_t *c, fl_ice_prop_t *p,
                                       char (*t)[4800]) {
    const fl_ice_snapshot_t *prev = fl_ice_meta_snapshot(c->base, c->base->current_snapshot_id);
    size_t n = 0;
#define FL_SUM_TEXT(k, ...)                                      \
    do {                                                         \
        snprintf(t[n], sizeof(t[n]), __VA_ARGS__);               \
        p[n] = (fl_ice_prop_t){k, t[n]};                         \
        n++;                                                     \
    } while (0)
    /* a round that deletes rows replaces them: overwrite, as Iceberg's
     * row-delta commits with deletes say */
    FL_SUM_TEXT("operation", c->added_delete_files ? "overwrite" : "append");
    FL_SUM_TEXT("commit-user", FL_LAKE_COMMIT_USER);
    FL_SUM_TEXT("fluss-offsets", "file://%s", c->offsets_path);
    FL_SUM_TEXT("added-data-files", "%zu", c->added_data_files);
    FL_SUM_TEXT("added-records", "%" PRId64, c->added_records);
    if (c->added_delete_files) {
        FL_SUM_TEXT("added-delete-files", "%zu", c->added_delete_files);
        FL_SUM_TEXT("added-position-delete-files", "%zu", c->added_delete_files);
        FL_SUM_TEXT("added-position-deletes", "%" PRId64, c->added_deletes);
    }
    FL_SUM_TEXT("added-files-size", "%" PRId64, c->added_bytes);
    FL_SUM_TEXT("changed-partition-count", "%zu", c->changed_partitions);
    FL_SUM_TEXT("total-records", "%" PRId64, fl_lake_total(prev, "total-records") + c->added_records);
    FL_SUM_TEXT("total-files-size", "%" PRId64,
                fl_lake_total(prev, "total-files-size") + c->added_bytes);
    FL_SUM_TEXT("total-data-files", "%" PRId64,
                fl_lake_total(prev, "total-data-files") + (int64_t)c->added_data_files);
    FL_SUM_TEXT("total-delete-files", "%" PRId64,
                fl_lake_total(prev, "total-delete-files") + (int64_t)c->added_delete_files);
    FL_SUM_TEXT("total-position-deletes", "%" PRId64,
                fl_lake_total(prev, "total-position-deletes") + c->added_deletes);
    FL_SUM_TEXT("total-equality-deletes", "%" PRId64,
                fl_lake_total(prev, "total-equality-deletes"));
#undef FL_SUM_TEXT
    return n;
}

#define FL_LAKE_SUMMARY_KEYS 16

int fl_lake_commit_round(const char *dir, const fl_ice_table_head_t *head, int64_t table_id,
                         const fl_strlist_t *partition_keys, const fl_lake_new_file_t *files,
                         size_t n, const fl_lake_offsets_t *offsets,
                         fl_lake_round_result_t *result, fl_error_t *err) {
    fl_lake_commit_t *c = fl_calloc(1, sizeof(*c));
    const fl_ice_table_meta_t *base = &head->meta.meta;
    c->dir = dir;
    c->base = base;
    c->schema = fl_ice_meta_schema(base, base->current_schema_id);
    c->spec = fl_ice_meta_spec(base, base->default_spec_id);
    fl_ice_manifest_summary_t sum[2];
    fl_ice_manifest_summary_init(&sum[0]);
    fl_ice_manifest_summary_init(&sum[1]);
    fl_ice_meta_read_t next;
    fl_ice_meta_read_init(&next);
    char *offsets_json = NULL;
    fl_ice_prop_t *props = NULL;
    char(*texts)[4800] = NULL;
    int rc = 0;
    if (!c->schema || !c->spec) {
        rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "%s: no current schema or default spec", dir);
        goto done;
    }
    /* snapshot ids grow: the next above the newest, at least the clock's
     * milliseconds (never reused, even across a lost commit) */
    int64_t id = fl_time_wall_ms();
    for (size_t i = 0; i < base->n_snapshots; i++)
        if (base->snapshots[i].snapshot_id >= id) id = base->snapshots[i].snapshot_id + 1;
    c->snapshot_id = id;
    c->sequence = base->last_sequence_number + 1;
    fl_uuid_random(c->uuid);
    snprintf(c->offsets_path, sizeof(c->offsets_path), "%s/metadata/%05" PRId64 "-%s.fluss-offsets.json",
             dir, c->sequence, c->uuid);
    snprintf(c->manifest_path[0], sizeof(c->manifest_path[0]), "%s/metadata/%s-m0.avro", dir,
             c->uuid);
    snprintf(c->manifest_path[1], sizeof(c->manifest_path[1]), "%s/metadata/%s-m2.avro", dir,
             c->uuid);
    snprintf(c->list_path, sizeof(c->list_path), "%s/metadata/snap-%" PRId64 "-1-%s.avro", dir,
             c->snapshot_id, c->uuid);
    snprintf(c->merged_path[0], sizeof(c->merged_path[0]), "%s/metadata/%s-m1.avro", dir,
             c->uuid);
    snprintf(c->merged_path[1], sizeof(c->merged_path[1]), "%s/metadata/%s-m3.avro", dir,
             c->uuid);

    offsets_json = fl_lake_offsets_encode(offsets, table_id, partition_keys->count > 0);
    c->wrote_offsets = true;
    if ((rc = fl_fs_write_atomic(c->offsets_path, offsets_json, strlen(offsets_json), err)))
        goto done;
    fl_lake_kill_point("offsets");
    bool has_new[2] = {false, false};
    for (int k = 0; k < 2 && !rc; k++)
        rc = fl_lake_write_manifest(c, partition_keys, files, n, k == 1, &sum[k], &has_new[k], err);
    if (rc) goto done;
    c->changed_partitions = fl_lake_changed_partitions(files, n);
    fl_lake_kill_point("manifest");
    if ((rc = fl_lake_write_list(c, sum, has_new, err))) goto done;
    fl_lake_kill_point("list");

    props = fl_calloc(FL_LAKE_SUMMARY_KEYS, sizeof(*props));
    texts = fl_calloc(FL_LAKE_SUMMARY_KEYS, sizeof(*texts));
    size_t ns = fl_lake_snapshot_summary(c, props, texts);
    char list_uri[4700];
    snprintf(list_uri, sizeof(list_uri), "file://%s", c->list_path);
    fl_ice_snapshot_t s = {c->snapshot_id,
                           base->current_snapshot_id,
                           c->sequence,
                           FL_ICE_NONE,
                           list_uri,
                           base->current_schema_id,
                           props,
                           ns};
    if ((rc = fl_ice_meta_with_snapshot(base, head->metadata_location, &s, &next, err))) goto done;
    fl_ice_commit_info_t info = {0};
    rc = fl_ice_table_commit_info(dir, head->version, &next.meta, &info, err);
    if (rc && info.visible) {
        /* linked, not known durable: its files stay (readers may read them) */
        fl_lake_commit_keep(c);
    }
    if (!rc) {
        fl_lake_commit_keep(c);
        if (result) *result = (fl_lake_round_result_t){info.version, c->snapshot_id, c->added_records};
    }
done:
    if (rc) fl_lake_commit_cleanup(c);
    free(offsets_json);
    fl_free(props);
    fl_free(texts);
    fl_ice_meta_read_reset(&next);
    fl_ice_manifest_summary_reset(&sum[0]);
    fl_ice_manifest_summary_reset(&sum[1]);
    fl_free(c);
    return rc;
}
