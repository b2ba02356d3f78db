/*
 * tier_deletes.c — Iceberg position-delete files (tier_deletes.h).
 */
#include "tier_deletes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "lake_parquet_reader.h"
#include "lake_parquet_writer.h"

#define TD_CORRUPT FLUSS_ERR__CORRUPT
#define TD_CHUNK 4096

typedef struct fl_tier_del_item {
    size_t path; /* index into paths */
    int64_t pos;
} td_item_t;

static void put_le64(uint8_t *p, int64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

int fl_tier_deletes_write(const char *path, const fl_pk_delete_t *dels, size_t n, int32_t codec,
                          fl_tier_delete_file_t *out, fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    if (n == 0) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "no position deletes to write");
    for (size_t i = 1; i < n; i++) {
        int c = strcmp(dels[i - 1].path, dels[i].path);
        if (c > 0 || (c == 0 && dels[i - 1].pos >= dels[i].pos))
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "position deletes must be sorted by path, then position");
    }
    fl_pq_column_spec_t cols[2] = {
        {"file_path", FL_ICE_DELETE_FILE_PATH_ID, FL_PQ_BYTE_ARRAY, false, {.kind = FL_PQ_LT_STRING}, 0},
        {"pos", FL_ICE_DELETE_POS_ID, FL_PQ_INT64, false, {.kind = FL_PQ_LT_NONE}, 0},
    };
    fl_pq_writer_options_t o;
    fl_pq_writer_options_init(&o);
    o.codec = codec;
    fl_pq_writer_t *w = NULL;
    int rc = fl_pq_writer_open(path, cols, 2, &o, &w, err);
    fl_pq_bytes_t *paths = fl_calloc(TD_CHUNK, sizeof(*paths));
    int64_t *pos = fl_calloc(TD_CHUNK, sizeof(*pos));
    for (size_t at = 0; !rc && at < n; at += TD_CHUNK) {
        size_t k = n - at < TD_CHUNK ? n - at : TD_CHUNK;
        for (size_t i = 0; i < k; i++) {
            paths[i] = (fl_pq_bytes_t){(const uint8_t *)dels[at + i].path,
                                       (uint32_t)strlen(dels[at + i].path)};
            pos[i] = dels[at + i].pos;
        }
        fl_pq_column_data_t data[2] = {{.values = paths}, {.values = pos}};
        rc = fl_pq_writer_append(w, data, k, err);
    }
    fl_free(paths);
    fl_free(pos);
    if (!rc) rc = fl_pq_writer_finish(w, err);
    if (rc) {
        fl_pq_writer_destroy(w);
        return rc;
    }
    out->path = fl_strdup(path);
    size_t ulen = strlen(path) + 8;
    out->uri = fl_malloc(ulen);
    snprintf(out->uri, ulen, "file://%s", path);
    size_t n_groups;
    const fl_pq_row_group_t *groups = fl_pq_writer_row_groups(w, &n_groups);
    out->splits = fl_calloc(n_groups + 1, sizeof(int64_t));
    int64_t sizes[2] = {0, 0};
    for (size_t g = 0; g < n_groups; g++) {
        out->splits[g] = groups[g].file_offset;
        for (size_t c = 0; c < 2 && c < groups[g].n_columns; c++)
            sizes[c] += groups[g].columns[c].meta.total_compressed_size;
    }
    /* pos bounds: the least and greatest position (the list is sorted by
     * path first, so look at all) */
    int64_t lo = dels[0].pos, hi = dels[0].pos;
    for (size_t i = 1; i < n; i++) {
        if (dels[i].pos < lo) lo = dels[i].pos;
        if (dels[i].pos > hi) hi = dels[i].pos;
    }
    put_le64(out->pos_lower, lo);
    put_le64(out->pos_upper, hi);
    const char *first = dels[0].path, *last = dels[n - 1].path;
    out->cols[0] = (fl_ice_column_stats_t){FL_ICE_DELETE_POS_ID, sizes[1], (int64_t)n, 0,
                                           FL_ICE_NONE, {out->pos_lower, 8}, {out->pos_upper, 8}};
    out->cols[1] = (fl_ice_column_stats_t){FL_ICE_DELETE_FILE_PATH_ID, sizes[0], (int64_t)n, 0,
                                           FL_ICE_NONE, {(const uint8_t *)first, strlen(first)},
                                           {(const uint8_t *)last, strlen(last)}};
    fl_ice_data_file_t *f = &out->file;
    f->content = FL_ICE_POSITION_DELETES;
    f->file_path = out->uri;
    f->file_format = "PARQUET";
    f->record_count = (int64_t)n;
    f->file_size_bytes = (int64_t)fl_pq_writer_position(w);
    f->columns = out->cols;
    f->n_columns = 2;
    f->split_offsets = out->splits;
    f->n_split_offsets = n_groups;
    f->sort_order_id = FL_ICE_NO_ORDER;
    fl_pq_writer_destroy(w);
    return 0;
}

void fl_tier_delete_file_free(fl_tier_delete_file_t *f) {
    fl_free(f->path);
    fl_free(f->uri);
    fl_free(f->splits);
    memset(f, 0, sizeof(*f));
}

/* ---- the set ---- */

void fl_tier_deletes_init(fl_tier_deletes_t *s) { memset(s, 0, sizeof(*s)); }

void fl_tier_deletes_free(fl_tier_deletes_t *s) {
    for (size_t i = 0; i < s->n_paths; i++) fl_free(s->paths[i]);
    fl_free(s->paths);
    fl_free(s->items);
    fl_free(s->first);
    memset(s, 0, sizeof(*s));
}

static size_t path_index(fl_tier_deletes_t *s, const uint8_t *p, size_t len) {
    /* a delete file is sorted by path: the last one is nearly always it */
    if (s->n_paths) {
        const char *l = s->paths[s->n_paths - 1];
        if (strlen(l) == len && memcmp(l, p, len) == 0) return s->n_paths - 1;
    }
    if (s->n_paths == s->cap_paths) {
        s->cap_paths = s->cap_paths ? s->cap_paths * 2 : 16;
        s->paths = fl_realloc(s->paths, s->cap_paths * sizeof(*s->paths));
    }
    char *c = fl_malloc(len + 1);
    memcpy(c, p, len);
    c[len] = 0;
    s->paths[s->n_paths] = c;
    return s->n_paths++;
}

/* Row pos of the data file whose path is p[0..len), as one more item. */
static void add_item(fl_tier_deletes_t *s, const uint8_t *p, size_t len, int64_t pos) {
    size_t path = path_index(s, p, len);
    if (s->n_items == s->cap_items) {
        s->cap_items = s->cap_items ? s->cap_items * 2 : 256;
        s->items = fl_realloc(s->items, s->cap_items * sizeof(*s->items));
    }
    s->items[s->n_items++] = (td_item_t){path, pos};
}

/* The deletes of the open delete file r (named path in messages). */
static int read_reader(fl_tier_deletes_t *s, fl_pq_reader_t *r, const char *path, fl_error_t *err) {
    int rc = 0;
    int cp = fl_pq_reader_column_of(r, FL_ICE_DELETE_FILE_PATH_ID);
    int cq = fl_pq_reader_column_of(r, FL_ICE_DELETE_POS_ID);
    if (cp < 0 || cq < 0)
        return fl_err_set(err, TD_CORRUPT, "%s: not a position-delete file (no file_path and pos)",
                          path);
    const fl_pq_file_meta_t *m = fl_pq_reader_meta(r);
    for (size_t g = 0; !rc && g < m->n_row_groups; g++) {
        fl_pq_values_t vp = {0}, vq = {0};
        rc = fl_pq_reader_read_column(r, g, (size_t)cp, &vp, err);
        if (!rc) rc = fl_pq_reader_read_column(r, g, (size_t)cq, &vq, err);
        if (!rc && (vp.type != FL_PQ_BYTE_ARRAY || vq.type != FL_PQ_INT64 || vp.rows != vq.rows))
            rc = fl_err_set(err, TD_CORRUPT, "%s: file_path or pos of the wrong type", path);
        for (size_t i = 0; !rc && i < vp.rows; i++) {
            int64_t pos = ((const int64_t *)vq.values)[i];
            uint64_t a = vp.offsets[i], b = vp.offsets[i + 1];
            if (!vp.valid[i] || !vq.valid[i] || pos < 0 || b < a) {
                rc = fl_err_set(err, TD_CORRUPT, "%s: row %zu is not a position delete", path, i);
                break;
            }
            add_item(s, vp.bytes + a, (size_t)(b - a), pos);
        }
        fl_pq_values_free(&vp);
        fl_pq_values_free(&vq);
    }
    return rc;
}

int fl_tier_deletes_read(fl_tier_deletes_t *s, const char *path, size_t max_bytes,
                         fl_error_t *err) {
    if (s->sealed) return fl_err_set(err, FLUSS_ERR__STATE, "position deletes: the set is sealed");
    fl_pq_reader_t *r = NULL;
    int rc = fl_pq_reader_open_file(path, max_bytes, &r, err);
    if (!rc) rc = read_reader(s, r, path, err);
    fl_pq_reader_destroy(r);
    return rc;
}

int fl_tier_deletes_read_image(fl_tier_deletes_t *s, const uint8_t *file, size_t len,
                               const char *name, fl_error_t *err) {
    if (s->sealed) return fl_err_set(err, FLUSS_ERR__STATE, "position deletes: the set is sealed");
    fl_pq_reader_t *r = NULL;
    int rc = fl_pq_reader_open(file, len, &r, err);
    if (!rc) rc = read_reader(s, r, name, err);
    fl_pq_reader_destroy(r);
    return rc;
}

void fl_tier_deletes_add(fl_tier_deletes_t *s, const char *file_path, int64_t pos) {
    add_item(s, (const uint8_t *)file_path, strlen(file_path), pos);
}

/* Items by path, then position: once paths are sorted and distinct, the
 * order of their indices is the order of the paths. */
static int item_cmp(const void *a, const void *b) {
    const td_item_t *x = a, *y = b;
    if (x->path != y->path) return x->path < y->path ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

static int str_cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void fl_tier_deletes_seal(fl_tier_deletes_t *s) {
    if (s->sealed) return;
    s->sealed = true;
    /* paths sorted and distinct, then items renumbered by them */
    char **old = fl_calloc(s->n_paths + 1, sizeof(char *));
    if (s->n_paths) memcpy(old, s->paths, s->n_paths * sizeof(char *));
    if (s->n_paths) qsort(s->paths, s->n_paths, sizeof(char *), str_cmp);
    size_t w = 0;
    for (size_t i = 0; i < s->n_paths; i++) {
        if (w && strcmp(s->paths[w - 1], s->paths[i]) == 0) continue;
        s->paths[w++] = s->paths[i];
    }
    size_t *map = fl_calloc(s->n_paths + 1, sizeof(size_t));
    for (size_t i = 0; i < s->n_paths; i++) {
        char **hit = bsearch(&old[i], s->paths, w, sizeof(char *), str_cmp);
        map[i] = (size_t)(hit - s->paths);
    }
    /* duplicates' strings (not kept in paths) are freed */
    for (size_t i = 0; i < s->n_paths; i++)
        if (s->paths[map[i]] != old[i]) fl_free(old[i]);
    for (size_t i = 0; i < s->n_items; i++) s->items[i].path = map[s->items[i].path];
    s->n_paths = w;
    fl_free(map);
    fl_free(old);
    if (s->n_items) qsort(s->items, s->n_items, sizeof(*s->items), item_cmp);
    s->first = fl_calloc(s->n_paths + 1, sizeof(size_t));
    size_t at = 0;
    for (size_t p = 0; p < s->n_paths; p++) {
        s->first[p] = at;
        while (at < s->n_items && s->items[at].path == p) at++;
    }
    s->first[s->n_paths] = s->n_items;
}

static bool path_range(const fl_tier_deletes_t *s, const char *file_path, size_t *lo, size_t *hi) {
    if (!s->sealed || !s->n_paths) return false;
    char **hit = bsearch(&file_path, s->paths, s->n_paths, sizeof(char *), str_cmp);
    if (!hit) return false;
    size_t p = (size_t)(hit - s->paths);
    *lo = s->first[p];
    *hi = s->first[p + 1];
    return true;
}

bool fl_tier_deletes_has(const fl_tier_deletes_t *s, const char *file_path, int64_t pos) {
    size_t lo, hi;
    if (!path_range(s, file_path, &lo, &hi)) return false;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->items[mid].pos == pos) return true;
        if (s->items[mid].pos < pos) lo = mid + 1;
        else hi = mid;
    }
    return false;
}

size_t fl_tier_deletes_count(const fl_tier_deletes_t *s, const char *file_path) {
    size_t lo, hi;
    return path_range(s, file_path, &lo, &hi) ? hi - lo : 0;
}
