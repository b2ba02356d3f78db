/*
 * kv_snapshot.c — a bucket's KV snapshots in remote storage (kv_snapshot.h):
 * upload of a RocksDB checkpoint, the _METADATA record, listing,
 * retention with pinned (leased) snapshots, and restore.
 */
#include "kv_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common_alloc.h"
#include "common_buf.h"
#include "common_fs.h"
#include "common_vfs.h"

#define FL_SNAP_PREFIX "snap-"
#define FL_SNAP_META "_METADATA"
#define FL_SNAP_SHARED "shared"
#define FL_SNAP_PATH_MAX 4096

void fl_kv_snapshot_bucket_dir(char *out, size_t cap, const char *remote_root, const char *db,
                               const char *table, int64_t table_id, const char *partition,
                               int64_t partition_id, int32_t bucket) {
    if (partition)
        snprintf(out, cap, "%s/kv/%s/%s-%" PRId64 "/%s-p%" PRId64 "/%d", remote_root, db, table,
                 table_id, partition, partition_id, bucket);
    else
        snprintf(out, cap, "%s/kv/%s/%s-%" PRId64 "/%d", remote_root, db, table, table_id,
                 bucket);
}

static int fl_snap_io(fl_error_t *err, const char *what, const char *path) {
    return fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION, "KV snapshot: %s %s: %s", what, path,
                      strerror(errno));
}

/* Copies src to dst (created; fsynced). */
static int fl_snap_copy(const char *src, const char *dst, fl_error_t *err) {
    fl_error_t e;
    if (fl_fs_copy(src, dst, &e) == 0) return 0;
    return fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION, "KV snapshot: %s", e.msg);
}

/* dst gets src's content: a hard link where the file system allows it
 * (RocksDB never rewrites a file), a synced copy otherwise. */
static int fl_snap_place(const char *src, const char *dst, bool linkable, fl_error_t *err) {
    char tmp[FL_SNAP_PATH_MAX * 2 + 8];
    snprintf(tmp, sizeof(tmp), "%s.tmp", dst);
    fl_vfs_unlink(tmp);
    if (!(linkable && fl_vfs_link(src, tmp) == 0)) {
        int rc = fl_snap_copy(src, tmp, err);
        if (rc) return rc;
    }
    if (fl_vfs_rename(tmp, dst) != 0) {
        int rc = fl_snap_io(err, "rename", dst);
        fl_vfs_unlink(tmp);
        return rc;
    }
    return 0;
}

static bool fl_snap_is_sst(const char *name) {
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".sst") == 0;
}

int fl_kv_snapshot_upload(const char *bucket_dir, const char *checkpoint_dir,
                          const char *instance, int64_t id, int64_t log_offset,
                          int64_t row_count, int64_t now_ms, fl_kv_snapshot_commit_fn commit,
                          void *commit_ctx, fl_error_t *err) {
    char shared[FL_SNAP_PATH_MAX], snap[FL_SNAP_PATH_MAX];
    snprintf(shared, sizeof(shared), "%s/" FL_SNAP_SHARED, bucket_dir);
    snprintf(snap, sizeof(snap), "%s/" FL_SNAP_PREFIX "%" PRId64, bucket_dir, id);
    fl_error_t e2;
    fl_fs_remove_tree(snap, &e2); /* an earlier attempt that never completed */
    int rc = fl_fs_mkdirs(shared, err);
    if (!rc) rc = fl_fs_mkdirs(snap, err);
    if (rc) return rc;
    fl_strlist_t names = {0};
    fl_error_t le;
    if (fl_fs_list(checkpoint_dir, false, &names, &le) != 0)
        return fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION, "KV snapshot: %s", le.msg);
    json_t *files = json_array();
    for (size_t i = 0; i < names.count && !rc; i++) {
        const char *name = names.items[i];
        if (name[0] == '.') continue;
        char src[FL_SNAP_PATH_MAX], dst[FL_SNAP_PATH_MAX * 2], rel[FL_SNAP_PATH_MAX];
        snprintf(src, sizeof(src), "%s/%s", checkpoint_dir, name);
        struct stat st;
        if (stat(src, &st) != 0) {
            rc = fl_snap_io(err, "stat", src);
            break;
        }
        if (!S_ISREG(st.st_mode)) continue;
        bool sst = fl_snap_is_sst(name);
        if (sst) snprintf(rel, sizeof(rel), FL_SNAP_SHARED "/%s-%s", instance, name);
        else snprintf(rel, sizeof(rel), FL_SNAP_PREFIX "%" PRId64 "/%s", id, name);
        snprintf(dst, sizeof(dst), "%s/%s", bucket_dir, rel);
        struct stat have;
        bool present = sst && stat(dst, &have) == 0 && have.st_size == st.st_size;
        /* an SST is immutable: link it; MANIFEST and CURRENT of a
         * checkpoint are its own copies, but linking them is as safe */
        if (!present) rc = fl_snap_place(src, dst, true, err);
        json_array_append_new(files, json_pack("{s:s, s:s, s:I}", "path", rel, "local",
                                               name, "size", (json_int_t)st.st_size));
    }
    fl_strlist_free(&names);
    if (!rc) rc = fl_fs_fsync_dir(shared, err);
    if (!rc) rc = fl_fs_fsync_dir(snap, err);
    if (!rc) {
        json_t *meta = json_pack("{s:i, s:I, s:I, s:I, s:o}", "version", 1, "snapshot_id",
                                 (json_int_t)id, "log_offset", (json_int_t)log_offset,
                                 "created_ms", (json_int_t)now_ms, "files", files);
        files = NULL;
        if (row_count >= 0) json_object_set_new(meta, "row_count", json_integer(row_count));
        char *text = json_dumps(meta, JSON_COMPACT);
        json_decref(meta);
        rc = commit ? commit(commit_ctx, id, text, strlen(text), err)
                    : fl_kv_snapshot_commit_meta(bucket_dir, id, text, strlen(text), NULL, err);
        free(text);
    }
    json_decref(files);
    return rc;
}

int fl_kv_snapshot_commit_meta(const char *bucket_dir, int64_t id, const char *meta, size_t len,
                               int64_t *log_offset, fl_error_t *err) {
    fl_kv_snapshot_t s;
    fl_error_t pe;
    int rc = fl_kv_snapshot_parse(meta, len, bucket_dir, id, &s, &pe);
    if (rc) return fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION, "%s", pe.msg);
    for (size_t i = 0; i < s.file_count && !rc; i++) {
        struct stat st;
        if (stat(s.files[i].path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != s.files[i].size)
            rc = fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION,
                            "snapshot %" PRId64 ": %s is missing or not %lld bytes", id,
                            s.files[i].path, (long long)s.files[i].size);
    }
    if (log_offset) *log_offset = s.log_offset;
    fl_kv_snapshot_free(&s);
    if (rc) return rc;
    char path[FL_SNAP_PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/" FL_SNAP_PREFIX "%" PRId64 "/" FL_SNAP_META, bucket_dir, id);
    return fl_fs_write_atomic(path, meta, len, err);
}

void fl_kv_snapshot_commit_encode(const fl_kv_snapshot_commit_t *c, fl_buf_t *out) {
    json_t *root = json_pack("{s:i, s:I, s:i, s:I, s:s%}", "version", 1, "table_id",
                             (json_int_t)c->table_id, "bucket_id", (int)c->bucket, "snapshot_id",
                             (json_int_t)c->snapshot_id, "metadata", c->meta, c->meta_len);
    if (c->partition_id >= 0)
        json_object_set_new(root, "partition_id", json_integer(c->partition_id));
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    fl_buf_append(out, text, strlen(text));
    free(text);
}

int fl_kv_snapshot_commit_decode(const uint8_t *data, size_t len, fl_kv_snapshot_commit_t *out,
                                 fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    json_error_t je;
    json_t *root = len <= 2 * (size_t)FL_KV_SNAPSHOT_META_MAX
                       ? json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES, &je)
                       : NULL;
    if (!root)
        return fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION,
                          "A snapshot commit that does not parse.");
    json_t *ver = json_object_get(root, "version"), *tid = json_object_get(root, "table_id"),
           *pid = json_object_get(root, "partition_id"), *b = json_object_get(root, "bucket_id"),
           *sid = json_object_get(root, "snapshot_id"), *meta = json_object_get(root, "metadata");
    const char *why = NULL;
    if (!json_is_integer(ver) || json_integer_value(ver) != 1) why = "unknown version";
    else if (!json_is_integer(tid) || json_integer_value(tid) < 0) why = "bad table_id";
    else if (pid && (!json_is_integer(pid) || json_integer_value(pid) < 0)) why = "bad partition_id";
    else if (!json_is_integer(b) || json_integer_value(b) < 0 || json_integer_value(b) > INT32_MAX)
        why = "bad bucket_id";
    else if (!json_is_integer(sid) || json_integer_value(sid) < 0) why = "bad snapshot_id";
    else if (!json_is_string(meta) || json_string_length(meta) > FL_KV_SNAPSHOT_META_MAX)
        why = "bad metadata";
    if (!why) {
        out->table_id = json_integer_value(tid);
        out->partition_id = pid ? json_integer_value(pid) : -1;
        out->bucket = (int32_t)json_integer_value(b);
        out->snapshot_id = json_integer_value(sid);
        out->meta_len = json_string_length(meta);
        out->meta = fl_malloc(out->meta_len + 1);
        memcpy(out->meta, json_string_value(meta), out->meta_len);
        out->meta[out->meta_len] = 0;
    }
    json_decref(root);
    if (why) return fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION, "A snapshot commit with %s.", why);
    return 0;
}

void fl_kv_snapshot_commit_free(fl_kv_snapshot_commit_t *c) {
    fl_free(c->meta);
    memset(c, 0, sizeof(*c));
}

static int fl_snap_cmp_id(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The id of a "snap-<digits>" name, or -1. */
static int64_t fl_snap_dir_id(const char *name) {
    if (strncmp(name, FL_SNAP_PREFIX, strlen(FL_SNAP_PREFIX)) != 0) return -1;
    const char *p = name + strlen(FL_SNAP_PREFIX);
    if (!*p || strlen(p) > 18 || (p[0] == '0' && p[1])) return -1; /* canonical only */
    int64_t v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9') return -1;
        v = v * 10 + (*p - '0');
    }
    return v;
}

/* Every snap-N directory: complete ones into ids, incomplete into partial. */
static int fl_snap_scan(const char *bucket_dir, int64_t **ids, size_t *count, int64_t **partial,
                        size_t *pcount, fl_error_t *err) {
    *ids = NULL;
    *count = 0;
    if (partial) *partial = NULL, *pcount = 0;
    fl_strlist_t names = {0};
    fl_error_t le;
    if (fl_fs_list(bucket_dir, true, &names, &le) != 0)
        return fl_err_set(err, FLUSS_ERR_KV_STORAGE_EXCEPTION, "KV snapshot: %s", le.msg);
    size_t cap = 0, pcap = 0;
    for (size_t i = 0; i < names.count; i++) {
        int64_t id = fl_snap_dir_id(names.items[i]);
        if (id < 0) continue;
        char meta[FL_SNAP_PATH_MAX * 2];
        snprintf(meta, sizeof(meta), "%s/%s/" FL_SNAP_META, bucket_dir, names.items[i]);
        if (access(meta, F_OK) == 0) {
            if (*count == cap) *ids = fl_realloc(*ids, (cap = cap ? cap * 2 : 8) * sizeof(**ids));
            (*ids)[(*count)++] = id;
        } else if (partial) {
            if (*pcount == pcap)
                *partial = fl_realloc(*partial, (pcap = pcap ? pcap * 2 : 8) * sizeof(**partial));
            (*partial)[(*pcount)++] = id;
        }
    }
    fl_strlist_free(&names);
    if (*count) qsort(*ids, *count, sizeof(**ids), fl_snap_cmp_id);
    return 0;
}

int fl_kv_snapshot_list(const char *bucket_dir, int64_t **ids, size_t *count, fl_error_t *err) {
    return fl_snap_scan(bucket_dir, ids, count, NULL, NULL, err);
}

static bool fl_snap_rel_ok(const char *p) {
    /* relative, inside the bucket dir: no leading '/', no "." or ".."
     * component, no empty component */
    if (!*p || *p == '/' || strlen(p) >= FL_SNAP_PATH_MAX) return false;
    const char *c = p;
    while (*c) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        if (!e) break;
        c = e + 1;
        if (!*c) return false;
    }
    return true;
}

static bool fl_snap_name_ok(const char *n) {
    return *n && strlen(n) < 256 && !strchr(n, '/') && strcmp(n, ".") != 0 && strcmp(n, "..") != 0;
}

int fl_kv_snapshot_parse(const char *text, size_t len, const char *bucket_dir, int64_t want_id,
                         fl_kv_snapshot_t *out, fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return fl_err_set(err, FLUSS_ERR_KV_SNAPSHOT_NOT_EXIST,
                          "The metadata of kv snapshot %" PRId64 " does not parse: %s", want_id,
                          je.text);
    const char *why = NULL;
    json_t *ver = json_object_get(root, "version"), *id = json_object_get(root, "snapshot_id"),
           *lo = json_object_get(root, "log_offset"), *cr = json_object_get(root, "created_ms"),
           *files = json_object_get(root, "files"), *rows = json_object_get(root, "row_count");
    if (!json_is_integer(ver) || json_integer_value(ver) != 1) why = "unknown version";
    else if (!json_is_integer(id) || json_integer_value(id) < 0) why = "bad snapshot_id";
    else if (want_id >= 0 && json_integer_value(id) != want_id) why = "snapshot_id mismatch";
    else if (!json_is_integer(lo) || json_integer_value(lo) < 0) why = "bad log_offset";
    else if (cr && !json_is_integer(cr)) why = "bad created_ms";
    else if (rows && (!json_is_integer(rows) || json_integer_value(rows) < 0)) why = "bad row_count";
    else if (!json_is_array(files) || json_array_size(files) > 1000000) why = "bad files";
    if (!why) {
        out->id = json_integer_value(id);
        out->log_offset = json_integer_value(lo);
        out->created_ms = cr ? json_integer_value(cr) : 0;
        out->row_count = rows ? json_integer_value(rows) : -1;
        size_t n = json_array_size(files);
        out->files = fl_calloc(n ? n : 1, sizeof(*out->files));
        for (size_t i = 0; i < n && !why; i++) {
            json_t *f = json_array_get(files, i);
            const char *p = json_string_value(json_object_get(f, "path"));
            const char *l = json_string_value(json_object_get(f, "local"));
            json_t *sz = json_object_get(f, "size");
            if (!p || !fl_snap_rel_ok(p)) why = "bad file path";
            else if (!l || !fl_snap_name_ok(l)) why = "bad local file name";
            else if (!json_is_integer(sz) || json_integer_value(sz) < 0) why = "bad file size";
            else {
                fl_kv_snapshot_file_t *sf = &out->files[out->file_count++];
                if (bucket_dir) {
                    size_t m = strlen(bucket_dir) + strlen(p) + 2;
                    sf->path = fl_malloc(m);
                    snprintf(sf->path, m, "%s/%s", bucket_dir, p);
                } else sf->path = fl_strdup(p);
                sf->local = fl_strdup(l);
                sf->size = json_integer_value(sz);
            }
        }
    }
    json_decref(root);
    if (why) {
        fl_kv_snapshot_free(out);
        return fl_err_set(err, FLUSS_ERR_KV_SNAPSHOT_NOT_EXIST,
                          "The metadata of kv snapshot %" PRId64 " is damaged: %s", want_id, why);
    }
    return 0;
}

void fl_kv_snapshot_free(fl_kv_snapshot_t *s) {
    if (!s) return;
    for (size_t i = 0; i < s->file_count; i++) {
        fl_free(s->files[i].path);
        fl_free(s->files[i].local);
    }
    fl_free(s->files);
    memset(s, 0, sizeof(*s));
}

int fl_kv_snapshot_read(const char *bucket_dir, int64_t id, fl_kv_snapshot_t *out,
                        fl_error_t *err) {
    char path[FL_SNAP_PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/" FL_SNAP_PREFIX "%" PRId64 "/" FL_SNAP_META, bucket_dir, id);
    fl_buf_t b;
    fl_buf_init(&b);
    int missing = 0;
    fl_error_t e;
    if (fl_fs_read_all(path, FL_KV_SNAPSHOT_META_MAX, &b, &missing, &e)) {
        fl_buf_free(&b);
        memset(out, 0, sizeof(*out));
        return fl_err_set(err, FLUSS_ERR_KV_SNAPSHOT_NOT_EXIST,
                          "The kv snapshot %" PRId64 " does not exist%s%s.", id,
                          missing ? "" : ": ", missing ? "" : e.msg);
    }
    int rc = fl_kv_snapshot_parse((const char *)b.data, b.len, bucket_dir, id, out, err);
    fl_buf_free(&b);
    return rc;
}

/* A set of relative shared-file paths named by kept snapshots. */
typedef struct fl_snap_names {
    char **v;
    size_t n, cap;
} fl_snap_names_t;

static void fl_snap_names_add(fl_snap_names_t *s, const char *p) {
    if (s->n == s->cap) s->v = fl_realloc(s->v, (s->cap = s->cap ? s->cap * 2 : 64) * sizeof(*s->v));
    s->v[s->n++] = fl_strdup(p);
}

static bool fl_snap_names_has(const fl_snap_names_t *s, const char *p) {
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], p) == 0) return true;
    return false;
}

int fl_kv_snapshot_retain(const char *bucket_dir, size_t keep, fl_kv_snapshot_pinned_fn pinned,
                          void *ctx, fl_error_t *err) {
    int64_t *ids, *partial;
    size_t n, pn;
    int rc = fl_snap_scan(bucket_dir, &ids, &n, &partial, &pn, err);
    if (rc) return rc;
    fl_snap_names_t used = {0};
    char path[FL_SNAP_PATH_MAX + 64];
    fl_error_t e;
    for (size_t i = 0; i < n && !rc; i++) {
        bool kept = i + keep >= n || (pinned && pinned(ctx, ids[i]));
        snprintf(path, sizeof(path), "%s/" FL_SNAP_PREFIX "%" PRId64, bucket_dir, ids[i]);
        if (!kept) {
            /* _METADATA first: the snapshot stops existing before its files go */
            char meta[sizeof(path) + 16];
            snprintf(meta, sizeof(meta), "%s/" FL_SNAP_META, path);
            if (fl_vfs_unlink(meta) != 0 && errno != ENOENT) rc = fl_snap_io(err, "remove", meta);
            else rc = fl_fs_remove_tree(path, err);
            continue;
        }
        fl_kv_snapshot_t s;
        if (fl_kv_snapshot_read(bucket_dir, ids[i], &s, &e) == 0) {
            for (size_t k = 0; k < s.file_count; k++) {
                const char *rel = s.files[k].path + strlen(bucket_dir) + 1;
                if (strncmp(rel, FL_SNAP_SHARED "/", strlen(FL_SNAP_SHARED) + 1) == 0)
                    fl_snap_names_add(&used, rel + strlen(FL_SNAP_SHARED) + 1);
            }
            fl_kv_snapshot_free(&s);
        }
    }
    int64_t newest = n ? ids[n - 1] : -1;
    for (size_t i = 0; i < pn && !rc; i++) {
        if (partial[i] >= newest) continue; /* maybe still being written */
        snprintf(path, sizeof(path), "%s/" FL_SNAP_PREFIX "%" PRId64, bucket_dir, partial[i]);
        rc = fl_fs_remove_tree(path, err);
    }
    if (!rc) {
        snprintf(path, sizeof(path), "%s/" FL_SNAP_SHARED, bucket_dir);
        fl_strlist_t names = {0};
        fl_error_t le;
        fl_fs_list(path, true, &names, &le); /* unreadable: nothing removed */
        for (size_t i = 0; i < names.count; i++) {
            const char *name = names.items[i];
            if (name[0] == '.' || fl_snap_names_has(&used, name)) continue;
            char f[sizeof(path) + 256];
            snprintf(f, sizeof(f), "%s/%s", path, name);
            fl_vfs_unlink(f);
        }
        fl_strlist_free(&names);
    }
    for (size_t i = 0; i < used.n; i++) fl_free(used.v[i]);
    fl_free(used.v);
    fl_free(ids);
    fl_free(partial);
    return rc;
}

int fl_kv_snapshot_restore(const char *bucket_dir, int64_t id, const char *local_dir,
                           fl_error_t *err) {
    fl_kv_snapshot_t s;
    int rc = fl_kv_snapshot_read(bucket_dir, id, &s, err);
    if (rc) return rc;
    char tmp[FL_SNAP_PATH_MAX + 16];
    snprintf(tmp, sizeof(tmp), "%s.restoring", local_dir);
    fl_error_t e;
    fl_fs_remove_tree(tmp, &e);
    rc = fl_fs_mkdirs(tmp, err);
    for (size_t i = 0; i < s.file_count && !rc; i++) {
        char dst[sizeof(tmp) + 300];
        snprintf(dst, sizeof(dst), "%s/%s", tmp, s.files[i].local);
        /* copies, not links: the restored store will write beside them */
        rc = fl_snap_copy(s.files[i].path, dst, err);
    }
    if (!rc) rc = fl_fs_fsync_dir(tmp, err);
    if (!rc && fl_vfs_rename(tmp, local_dir) != 0) rc = fl_snap_io(err, "rename", local_dir);
    if (!rc) {
        char parent[FL_SNAP_PATH_MAX];
        snprintf(parent, sizeof(parent), "%s", local_dir);
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) {
            *slash = 0;
            rc = fl_fs_fsync_dir(parent, err);
        }
    }
    if (rc) fl_fs_remove_tree(tmp, &e);
    fl_kv_snapshot_free(&s);
    return rc;
}
