/*
 * server_lake_gc.c — orphan files of a lake table (server_lake_gc.h).
 */
#include "server_lake_gc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common_alloc.h"
#include "common_fs.h"
#include "common_log.h"
#include "common_strlist.h"
#include "common_time.h"
#include "common_vfs.h"
#include "lake_iceberg_table.h"
#include "server_lake_commit.h"

#define FL_LAKE_GC_DEPTH_MAX 16

static int fl_gc_cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void fl_lake_paths_sort(fl_strlist_t *l) {
    if (l->count) qsort(l->items, l->count, sizeof(char *), fl_gc_cmp);
}

bool fl_lake_paths_have(const fl_strlist_t *sorted, const char *path) {
    return sorted->count &&
           bsearch(&path, sorted->items, sorted->count, sizeof(char *), fl_gc_cmp);
}

/* The manifest lists and fluss-offsets files of the snapshots into refs,
 * the manifests the lists name into manifests. */
static int fl_lake_list_files(const fl_ice_snapshot_t *snaps, size_t n, fl_strlist_t *refs,
                              fl_strlist_t *manifests, fl_error_t *err) {
    fl_ice_manifest_list_read_t list;
    fl_ice_manifest_list_read_init(&list);
    int rc = 0;
    for (size_t s = 0; s < n && !rc; s++) {
        const fl_ice_snapshot_t *snap = &snaps[s];
        for (size_t k = 0; k < snap->n_summary; k++)
            if (strcmp(snap->summary[k].key, "fluss-offsets") == 0)
                fl_strlist_add(refs, fl_lake_uri_path(snap->summary[k].value));
        const char *lp = fl_lake_uri_path(snap->manifest_list);
        fl_strlist_add(refs, lp);
        if ((rc = fl_ice_manifest_list_read(lp, &list, err))) break;
        for (size_t i = 0; i < list.list.n_manifests; i++)
            fl_strlist_add(manifests, fl_lake_uri_path(list.list.manifests[i].manifest_path));
    }
    fl_ice_manifest_list_read_reset(&list);
    return rc;
}

int fl_lake_snapshot_files(const fl_ice_snapshot_t *snaps, size_t n, fl_strlist_t *refs,
                           fl_error_t *err) {
    fl_strlist_t manifests = {0};
    fl_ice_manifest_read_t man;
    fl_ice_manifest_read_init(&man);
    int rc = fl_lake_list_files(snaps, n, refs, &manifests, err);
    /* snapshots share most manifests (each list names its parent's):
     * read each once */
    fl_lake_paths_sort(&manifests);
    for (size_t i = 0; i < manifests.count && !rc; i++) {
        const char *mp = manifests.items[i];
        if (i && strcmp(mp, manifests.items[i - 1]) == 0) continue;
        fl_strlist_add(refs, mp);
        if ((rc = fl_ice_manifest_read(mp, &man, err))) break;
        for (size_t e = 0; e < man.manifest.n_entries; e++)
            fl_strlist_add(refs, fl_lake_uri_path(man.manifest.entries[e].file.file_path));
    }
    fl_ice_manifest_read_reset(&man);
    fl_strlist_free(&manifests);
    return rc;
}

static bool fl_gc_ends(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

typedef struct fl_gc {
    const fl_strlist_t *refs; /* sorted */
    int64_t cutoff_ms;        /* wall clock: files modified at or before it */
    size_t removed;
} fl_gc_t;

static void fl_gc_consider(fl_gc_t *g, const char *path, const struct stat *st) {
    int64_t mtime_ms = (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
    if (mtime_ms > g->cutoff_ms) return;
    if (fl_lake_paths_have(g->refs, path)) return;
    if (fl_vfs_unlink(path) == 0) {
        g->removed++;
        FL_INFO("lake: removed orphan %s", path);
    }
}

/* The files of dir (recursively under data/) that may be orphans. */
static int fl_gc_walk(fl_gc_t *g, const char *dir, bool data, int depth, fl_error_t *err) {
    if (depth > FL_LAKE_GC_DEPTH_MAX) return 0;
    fl_strlist_t names = {0};
    int rc = fl_fs_list(dir, true, &names, err);
    for (size_t i = 0; i < names.count && !rc; i++) {
        size_t n = strlen(dir) + strlen(names.items[i]) + 2;
        char *p = fl_malloc(n);
        snprintf(p, n, "%s/%s", dir, names.items[i]);
        struct stat st;
        if (lstat(p, &st) == 0) {
            if (S_ISDIR(st.st_mode) && data) {
                rc = fl_gc_walk(g, p, data, depth + 1, err);
            } else if (S_ISREG(st.st_mode)) {
                const char *name = names.items[i];
                bool ours = data ? fl_gc_ends(name, ".parquet")
                                 : fl_gc_ends(name, ".avro") ||
                                       fl_gc_ends(name, ".fluss-offsets.json") ||
                                       fl_gc_ends(name, ".tmp");
                if (ours) fl_gc_consider(g, p, &st);
            }
        }
        fl_free(p);
    }
    fl_strlist_free(&names);
    return rc;
}

int fl_lake_gc(const char *dir, int64_t min_age_ms, size_t *removed, fl_error_t *err) {
    *removed = 0;
    fl_ice_table_head_t h;
    fl_ice_table_head_init(&h);
    fl_strlist_t refs = {0};
    int rc = fl_ice_table_load(dir, &h, err);
    if (!rc) rc = fl_lake_snapshot_files(h.meta.meta.snapshots, h.meta.meta.n_snapshots, &refs, err);
    if (!rc) {
        fl_lake_paths_sort(&refs);
        fl_gc_t g = {&refs, fl_time_wall_ms() - min_age_ms, 0};
        size_t n = strlen(dir) + 16;
        char *sub = fl_malloc(n);
        snprintf(sub, n, "%s/metadata", dir);
        rc = fl_gc_walk(&g, sub, false, 0, err);
        snprintf(sub, n, "%s/data", dir);
        if (!rc) rc = fl_gc_walk(&g, sub, true, 0, err);
        fl_free(sub);
        *removed = g.removed;
    }
    fl_strlist_free(&refs);
    fl_ice_table_head_reset(&h);
    return rc;
}
