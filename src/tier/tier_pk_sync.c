/*
 * tier_pk_sync.c — a primary-key bucket's lake index brought to the
 * lake a round builds on (tier_pk_sync.h).
 */
#include "tier_pk_sync.h"

#include <string.h>

#include "common_alloc.h"
#include "common_buf.h"
#include "lake_iceberg_manifest.h"
#include "lake_iceberg_table.h"
#include "lake_parquet_reader.h"
#include "tier_deletes.h"
#include "tier_eq_deletes.h"
#include "tier_pk_key.h"

#define PS_CORRUPT FLUSS_ERR__CORRUPT

/* True when entry file f of manifest m is the bucket's. */
static bool is_bucket_file(const fl_ice_manifest_t *m, const fl_ice_data_file_t *f,
                           int32_t fid_bucket, const fl_tier_pk_bucket_t *b) {
    size_t k = 0;
    bool bucket_seen = false;
    for (size_t i = 0; i < m->spec.n_fields; i++) {
        const fl_ice_partition_field_t *pf = &m->spec.fields[i];
        const fl_ice_value_t *v = &f->partition[i];
        if (pf->source_id == fid_bucket || pf->transform == FL_ICE_BUCKET) {
            if (v->null || v->i != b->bucket) return false;
            bucket_seen = true;
            continue;
        }
        if (pf->transform != FL_ICE_IDENTITY || pf->type != FL_ICE_STRING) continue;
        if (k >= b->n_values || v->null) return false;
        const char *want = b->partition_values[k++];
        if (strlen(want) != v->s.len || memcmp(want, v->s.p, v->s.len) != 0) return false;
    }
    return bucket_seen && k == b->n_values;
}

static int32_t field_id_of(const fl_ice_table_meta_t *m, const char *name) {
    const fl_ice_schema_t *s = fl_ice_meta_schema(m, m->current_schema_id);
    for (size_t i = 0; s && i < s->n_fields; i++)
        if (strcmp(s->fields[i].name, name) == 0) return s->fields[i].id;
    return -1;
}

/* The bucket's live data files and delete files in snapshot sn; with
 * only_added, the entries of the manifests sn added (a witness search).
 * Equality deletes (Fluss's own tiering job writes them: a lake it tiered
 * before flussd took over) are read into eq when eq is given. */
typedef struct bucket_files {
    fl_strlist_t data, deletes; /* manifest file_path URIs */
    int64_t *data_seq;          /* each data file's data sequence number */
    size_t cap_seq;
} bucket_files_t;

static void bucket_files_free(bucket_files_t *f) {
    fl_strlist_free(&f->data);
    fl_strlist_free(&f->deletes);
    fl_free(f->data_seq);
}

static void add_data_file(bucket_files_t *out, const char *uri, int64_t seq) {
    if (out->data.count == out->cap_seq) {
        out->cap_seq = out->cap_seq ? out->cap_seq * 2 : 16;
        out->data_seq = fl_realloc(out->data_seq, out->cap_seq * sizeof(*out->data_seq));
    }
    out->data_seq[out->data.count] = seq;
    fl_strlist_add(&out->data, uri);
}

static int collect(const fl_ice_table_meta_t *meta, const fl_ice_snapshot_t *sn,
                   const fl_tier_pk_bucket_t *b, bool only_added, bucket_files_t *out,
                   fl_tier_eq_deletes_t *eq, fl_error_t *err) {
    int32_t fid_bucket = field_id_of(meta, "__bucket");
    fl_ice_manifest_list_read_t list;
    fl_ice_manifest_list_read_init(&list);
    fl_ice_manifest_read_t man;
    fl_ice_manifest_read_init(&man);
    int rc = fl_ice_manifest_list_read(fl_lake_uri_path(sn->manifest_list), &list, err);
    for (size_t i = 0; !rc && i < list.list.n_manifests; i++) {
        const fl_ice_manifest_file_t *mf = &list.list.manifests[i];
        if (only_added && mf->added_snapshot_id != sn->snapshot_id) continue;
        if ((rc = fl_ice_manifest_read(fl_lake_uri_path(mf->manifest_path), &man, err))) break;
        for (size_t e = 0; !rc && e < man.manifest.n_entries; e++) {
            const fl_ice_manifest_entry_t *en = &man.manifest.entries[e];
            if (en->status == FL_ICE_DELETED) continue;
            if (!is_bucket_file(&man.manifest, &en->file, fid_bucket, b)) continue;
            /* an added entry's null sequence number is its manifest's */
            int64_t seq =
                en->sequence_number != FL_ICE_NONE ? en->sequence_number : mf->sequence_number;
            if (en->file.content == FL_ICE_DATA)
                add_data_file(out, en->file.file_path, seq);
            else if (en->file.content == FL_ICE_POSITION_DELETES)
                fl_strlist_add(&out->deletes, en->file.file_path);
            else if (eq)
                rc = fl_tier_eq_deletes_read(eq, fl_lake_uri_path(en->file.file_path),
                                             en->file.equality_ids, en->file.n_equality_ids, seq,
                                             b->max_file_bytes, err);
            else
                fl_strlist_add(&out->deletes, en->file.file_path); /* a witness is any file */
        }
    }
    fl_ice_manifest_read_reset(&man);
    fl_ice_manifest_list_read_reset(&list);
    return rc;
}

/* The live keys of one data file into x. */
static int load_file(fl_pk_index_t *x, const char *uri, const fl_tier_deletes_t *dels,
                     const fl_tier_pk_bucket_t *b, fl_buf_t *key, fl_error_t *err) {
    const char *path = fl_lake_uri_path(uri);
    fl_pq_reader_t *r = NULL;
    int rc = fl_pq_reader_open_file(path, b->max_file_bytes, &r, err);
    if (rc) return rc;
    int *cols = fl_calloc(b->n_keys + 1, sizeof(int));
    fl_pq_values_t *vals = fl_calloc(b->n_keys + 1, sizeof(*vals));
    for (size_t k = 0; k < b->n_keys && !rc; k++)
        if ((cols[k] = fl_pq_reader_column_of(r, b->key_field_ids[k])) < 0)
            rc = fl_err_set(err, PS_CORRUPT, "%s has no primary-key column (field id %d)", path,
                            b->key_field_ids[k]);
    int32_t file = rc ? -1 : fl_pk_index_file_id(x, uri);
    const fl_pq_file_meta_t *m = fl_pq_reader_meta(r);
    int64_t row0 = 0;
    bool any_deleted = fl_tier_deletes_count(dels, uri) > 0;
    for (size_t g = 0; !rc && g < m->n_row_groups; g++) {
        size_t rows = 0;
        for (size_t k = 0; k < b->n_keys && !rc; k++) {
            rc = fl_pq_reader_read_column(r, g, (size_t)cols[k], &vals[k], err);
            if (!rc && k > 0 && vals[k].rows != rows)
                rc = fl_err_set(err, PS_CORRUPT, "%s: columns of unequal length", path);
            rows = vals[k].rows;
        }
        for (size_t i = 0; !rc && i < rows; i++) {
            int64_t pos = row0 + (int64_t)i;
            if (any_deleted && fl_tier_deletes_has(dels, uri, pos)) continue;
            fl_buf_reset(key);
            for (size_t k = 0; k < b->n_keys && !rc; k++)
                rc = fl_tier_pk_key_append(&vals[k], i, key, err);
            if (!rc) rc = fl_pk_index_load(x, key->data, key->len, file, pos, err);
        }
        row0 += (int64_t)rows;
        for (size_t k = 0; k < b->n_keys; k++) fl_pq_values_free(&vals[k]);
    }
    if (rc) fl_err_prefix(err, "lake index of bucket %d: ", b->bucket);
    fl_free(vals);
    fl_free(cols);
    fl_pq_reader_destroy(r);
    return rc;
}

static int load_head(const fl_tier_pk_bucket_t *b, fl_ice_table_head_t *h,
                     const fl_ice_snapshot_t **sn, fl_error_t *err) {
    int rc = fl_ice_table_load(b->table_dir, h, err);
    if (rc) return rc;
    *sn = fl_ice_meta_snapshot(&h->meta.meta, b->snapshot_id);
    if (!*sn)
        return fl_err_set(err, FLUSS_ERR_LAKE_SNAPSHOT_NOT_EXIST,
                          "lake snapshot %lld is not in %s", (long long)b->snapshot_id,
                          b->table_dir);
    return 0;
}

int fl_tier_pk_rebuild(fl_pk_index_t *x, const fl_tier_pk_bucket_t *b, fl_error_t *err) {
    fl_pk_index_clear(x);
    if (b->snapshot_id == FL_ICE_NONE) {
        fl_pk_index_set_stamp(x, b->start);
        return 0;
    }
    fl_ice_table_head_t h;
    fl_ice_table_head_init(&h);
    bucket_files_t files = {0};
    fl_tier_deletes_t dels;
    fl_tier_deletes_init(&dels);
    fl_tier_eq_deletes_t eq;
    fl_tier_eq_deletes_init(&eq);
    fl_buf_t key;
    fl_buf_init(&key);
    const fl_ice_snapshot_t *sn = NULL;
    int rc = load_head(b, &h, &sn, err);
    if (!rc) rc = collect(&h.meta.meta, sn, b, false, &files, &eq, err);
    for (size_t i = 0; !rc && i < files.deletes.count; i++)
        rc = fl_tier_deletes_read(&dels, fl_lake_uri_path(files.deletes.items[i]),
                                  b->max_file_bytes, err);
    /* equality deletes become position deletes of the rows they name, as
     * libfluss's lake reader applies them */
    fl_tier_eq_deletes_seal(&eq);
    for (size_t i = 0; !rc && fl_tier_eq_deletes_count(&eq) && i < files.data.count; i++)
        rc = fl_tier_eq_deletes_apply(&eq, fl_lake_uri_path(files.data.items[i]),
                                      files.data.items[i], files.data_seq[i], b->max_file_bytes,
                                      &dels, err);
    fl_tier_deletes_seal(&dels);
    for (size_t i = 0; !rc && i < files.data.count; i++)
        rc = load_file(x, files.data.items[i], &dels, b, &key, err);
    if (rc) fl_pk_index_clear(x);
    else fl_pk_index_set_stamp(x, b->start);
    fl_buf_free(&key);
    fl_tier_deletes_free(&dels);
    fl_tier_eq_deletes_free(&eq);
    bucket_files_free(&files);
    fl_ice_table_head_reset(&h);
    return rc;
}

/* True when snapshot b->snapshot_id added the witness file. */
static int holds_witness(const fl_tier_pk_bucket_t *b, const char *witness, bool *yes,
                         fl_error_t *err) {
    *yes = false;
    if (b->snapshot_id == FL_ICE_NONE) return 0;
    fl_ice_table_head_t h;
    fl_ice_table_head_init(&h);
    bucket_files_t files = {0};
    const fl_ice_snapshot_t *sn = NULL;
    int rc = load_head(b, &h, &sn, err);
    if (!rc) rc = collect(&h.meta.meta, sn, b, true, &files, NULL, err);
    if (!rc)
        *yes = fl_strlist_index(&files.data, witness) >= 0 ||
               fl_strlist_index(&files.deletes, witness) >= 0;
    bucket_files_free(&files);
    fl_ice_table_head_reset(&h);
    return rc;
}

int fl_tier_pk_sync(fl_pk_index_t *x, const fl_tier_pk_bucket_t *b, fl_tier_pk_sync_how_t *how,
                    fl_error_t *err) {
    *how = FL_TIER_PK_KEPT;
    if (fl_pk_index_round_sealed(x) && fl_pk_index_round_end(x) == b->start &&
        fl_pk_index_round_start(x) == fl_pk_index_stamp(x) && fl_pk_index_stamp(x) >= 0) {
        const char *w = fl_pk_index_round_witness(x);
        bool yes = w == NULL;
        if (w) {
            fl_error_t e;
            fl_err_clear(&e);
            if (holds_witness(b, w, &yes, &e)) yes = false; /* unknown: rebuild below */
        }
        if (yes) {
            fl_pk_index_round_commit(x);
            *how = FL_TIER_PK_COMMITTED;
            return 0;
        }
    }
    if (fl_pk_index_stamp(x) == b->start && fl_pk_index_stamp(x) >= 0) {
        fl_pk_index_round_begin(x); /* drops an uncommitted round */
        return 0;
    }
    *how = FL_TIER_PK_REBUILT;
    return fl_tier_pk_rebuild(x, b, err);
}
