/*
 * lake_iceberg_table.c — the Hadoop layout of an Iceberg table
 * (lake_iceberg_table.h has the files, the commit order and the crash
 * matrix): loading the newest v<N>.metadata.json and committing v<N+1>
 * with link(2). Every change to the disk goes through common_vfs, so the
 * fault suites can fail any step; listing and stat-ing stay plain calls
 * (they change nothing). Thread rule: none; no state between calls.
 */
#include "lake_iceberg_table.h"
#include "lake_iceberg_meta_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common_alloc.h"
#include "common_fs.h"
#include "common_log.h"
#include "common_uuid.h"
#include "common_vfs.h"

#define HINT_NAME "version-hint.text"
#define HINT_BYTES_MAX 64 /* "2147483647" and some slack for a newline */

/* <dir>/metadata/<name>, heap. */
static char *meta_path(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + sizeof("/metadata/");
    char *p = fl_malloc(n);
    snprintf(p, n, "%s/metadata/%s", dir, name);
    return p;
}

static char *meta_dir(const char *dir) {
    size_t n = strlen(dir) + sizeof("/metadata");
    char *p = fl_malloc(n);
    snprintf(p, n, "%s/metadata", dir);
    return p;
}

static char *version_path(const char *dir, int32_t v) {
    char name[40];
    snprintf(name, sizeof(name), "v%" PRId32 ".metadata.json", v);
    return meta_path(dir, name);
}

/* 1: the path exists, 0: it does not, -1: stat failed otherwise (errno). */
static int exists(const char *path) {
    struct stat st;
    if (stat(path, &st) == 0) return 1;
    return errno == ENOENT ? 0 : -1;
}

/* "v<N>.metadata.json" -> N (1 .. INT32_MAX, no leading zero), else 0. */
static int32_t version_of_name(const char *name) {
    if (name[0] != 'v' || name[1] < '1' || name[1] > '9') return 0;
    int64_t v = 0;
    const char *p = name + 1;
    for (; *p >= '0' && *p <= '9'; p++)
        if ((v = v * 10 + (*p - '0')) > INT32_MAX) return 0;
    return strcmp(p, ".metadata.json") ? 0 : (int32_t)v;
}

/* ---- loading ---- */

void fl_ice_table_head_init(fl_ice_table_head_t *h) {
    memset(h, 0, sizeof(*h));
    fl_ice_meta_read_init(&h->meta);
}

void fl_ice_table_head_reset(fl_ice_table_head_t *h) {
    fl_free(h->metadata_path);
    fl_free(h->metadata_location);
    fl_ice_meta_read_reset(&h->meta);
    fl_ice_table_head_init(h);
}

/* The hint's version, or 0 when it is missing or not digits (a lenient
 * reader: a trailing newline some writers add is taken). */
static int32_t read_hint(const char *dir) {
    char *p = meta_path(dir, HINT_NAME);
    fl_buf_t b;
    fl_error_t err;
    fl_buf_init(&b);
    int32_t v = 0;
    if (fl_fs_read_all(p, HINT_BYTES_MAX, &b, NULL, &err) == 0) {
        size_t n = b.len;
        if (n && b.data[n - 1] == '\n') n--;
        char name[HINT_BYTES_MAX + 32];
        snprintf(name, sizeof(name), "v%.*s.metadata.json", (int)n, (const char *)b.data);
        if (!memchr(b.data, 0, n)) v = version_of_name(name);
    }
    fl_buf_free(&b);
    fl_free(p);
    return v;
}

/* The highest v<N> in a listing of metadata/: 0 when there is none. */
static int highest_listed(const char *dir, int32_t *out, fl_error_t *err) {
    char *p = meta_dir(dir);
    fl_strlist_t names = {0};
    int rc = fl_fs_list(p, true, &names, err);
    *out = 0;
    for (size_t i = 0; !rc && i < names.count; i++) {
        int32_t v = version_of_name(names.items[i]);
        if (v > *out) *out = v;
    }
    fl_strlist_free(&names);
    fl_free(p);
    return rc;
}

/* From a version that exists, the last of the run v, v+1, v+2...: a hint
 * may lag any number of versions behind racing committers. */
static int probe_forward(const char *dir, int32_t *v, fl_error_t *err) {
    while (*v < INT32_MAX) {
        char *p = version_path(dir, *v + 1);
        int e = exists(p);
        if (e < 0) fl_err_set(err, FLUSS_ERR__IO, "stat %s: %s", p, strerror(errno));
        fl_free(p);
        if (e < 0) return FLUSS_ERR__IO;
        if (!e) break;
        ++*v;
    }
    return 0;
}

/* The newest version: the hint when its file exists, else the listing. */
static int find_head(const char *dir, int32_t *v, fl_error_t *err) {
    *v = read_hint(dir);
    if (*v) {
        char *p = version_path(dir, *v);
        int e = exists(p);
        fl_free(p);
        if (e <= 0) *v = 0; /* ahead of the files (or unreadable): list */
    }
    if (!*v && highest_listed(dir, v, err)) return FLUSS_ERR__IO;
    if (!*v)
        return fl_err_set(err, FLUSS_ERR_TABLE_NOT_EXIST, "iceberg table %s: no v<N>.metadata.json",
                          dir);
    return probe_forward(dir, v, err);
}

/* file:// URI of a path, made absolute against the working directory. */
static char *file_uri(const char *path) {
    char cwd[PATH_MAX];
    const char *base = "";
    if (path[0] != '/') base = getcwd(cwd, sizeof(cwd)) ? cwd : ".";
    size_t n = strlen(base) + strlen(path) + sizeof("file:///");
    char *u = fl_malloc(n);
    snprintf(u, n, "file://%s%s%s", base, *base ? "/" : "", path);
    return u;
}

int fl_ice_table_load(const char *dir, fl_ice_table_head_t *out, fl_error_t *err) {
    fl_ice_table_head_reset(out);
    int32_t v;
    if (find_head(dir, &v, err)) return err->code;
    fl_buf_t b;
    fl_buf_init(&b);
    char *path = version_path(dir, v);
    int rc = fl_fs_read_all(path, FL_ICE_META_BYTES_MAX, &b, NULL, err);
    if (!rc) rc = fl_ice_meta_decode(b.data, b.len, &out->meta, err);
    if (rc && rc != FLUSS_ERR__IO) fl_err_prefix(err, "%s: ", path);
    fl_buf_free(&b);
    if (rc) {
        fl_free(path);
        fl_ice_table_head_reset(out);
        return rc;
    }
    out->version = v;
    out->metadata_path = path;
    out->metadata_location = file_uri(path);
    return 0;
}

/* ---- committing ---- */

/* A new file at path holding exactly data, fsynced and closed (O_EXCL: a
 * name another writer holds is never touched). Nothing left on failure. */
static int write_new_file(const char *path, const void *data, size_t len, fl_error_t *err) {
    int fd = fl_vfs_open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return fl_err_set(err, FLUSS_ERR__IO, "open %s: %s", path, strerror(errno));
    const char *step = NULL;
    if (fl_vfs_pwrite_full(fd, data, len, 0) != 0)
        step = "write";
    else if (fl_vfs_fsync(fd) != 0)
        step = "fsync";
    int e = errno;
    if (fl_vfs_close(fd) != 0 && !step) {
        step = "close";
        e = errno;
    }
    if (!step) return 0;
    fl_vfs_unlink(path);
    return fl_err_set(err, FLUSS_ERR__IO, "%s %s: %s", step, path, strerror(e));
}

/* version-hint.text := "v" through a uniquely named temp (two committers'
 * hints never mix), skipped when v+1 exists already: a slower committer
 * must not set the hint back. Best-effort: 0 or IO, nothing else;
 * *renamed tells whether the hint now says v (a failed fsync after the
 * rename leaves it so, not yet durable). */
static int write_hint(const char *dir, int32_t v, bool *renamed, fl_error_t *err) {
    *renamed = false;
    char *next = version_path(dir, v + 1);
    int newer = v < INT32_MAX ? exists(next) : 0;
    fl_free(next);
    if (newer > 0) return 0;
    char uuid[FL_UUID_TEXT_LEN + 1], name[FL_UUID_TEXT_LEN + 32], digits[16];
    fl_uuid_random(uuid);
    snprintf(name, sizeof(name), "version-hint-%s.tmp", uuid);
    int n = snprintf(digits, sizeof(digits), "%" PRId32, v);
    char *tmp = meta_path(dir, name), *hint = meta_path(dir, HINT_NAME), *mdir = meta_dir(dir);
    int rc = write_new_file(tmp, digits, (size_t)n, err);
    if (!rc && fl_vfs_rename(tmp, hint) != 0) {
        rc = fl_err_set(err, FLUSS_ERR__IO, "rename %s: %s", tmp, strerror(errno));
        fl_vfs_unlink(tmp);
    }
    *renamed = !rc;
    if (!rc) rc = fl_fs_fsync_dir(mdir, err);
    fl_free(tmp);
    fl_free(hint);
    fl_free(mdir);
    return rc;
}

/* Steps 1-4 of the commit: the tmp, the link, the directory fsync. */
static int link_version(const char *dir, int32_t v, const fl_buf_t *json,
                        fl_ice_commit_info_t *info, fl_error_t *err) {
    char uuid[FL_UUID_TEXT_LEN + 1], name[FL_UUID_TEXT_LEN + 8];
    fl_uuid_random(uuid);
    snprintf(name, sizeof(name), "%s.tmp", uuid);
    char *tmp = meta_path(dir, name), *target = version_path(dir, v), *mdir = meta_dir(dir);
    int rc = write_new_file(tmp, json->data, json->len, err);
    if (rc) goto done;
    if (fl_vfs_link(tmp, target) != 0) {
        int e = errno;
        fl_vfs_unlink(tmp);
        rc = e == EEXIST ? fl_err_set(err, FLUSS_ERR__CONFLICT,
                                      "%s exists: another commit on version %" PRId32 " won",
                                      target, v - 1)
                         : fl_err_set(err, FLUSS_ERR__IO, "link %s: %s", target, strerror(e));
        goto done;
    }
    info->visible = true;
    rc = fl_fs_fsync_dir(mdir, err);
    if (rc)
        fl_err_prefix(err, "%s is visible but not known durable (keep its files, reload): ", target);
    info->durable = !rc;
    if (fl_vfs_unlink(tmp) != 0) FL_WARN("iceberg commit: unlink %s: %s", tmp, strerror(errno));
done:
    fl_free(tmp);
    fl_free(target);
    fl_free(mdir);
    return rc;
}

/* base_version names a version that exists (0: the table is new). */
static int check_base(const char *dir, int32_t base_version, fl_error_t *err) {
    if (base_version < 0 || base_version == INT32_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "base version %" PRId32, base_version);
    if (base_version == 0) return 0;
    char *p = version_path(dir, base_version);
    int e = exists(p);
    int rc = e > 0 ? 0
             : e == 0 ? fl_err_set(err, FLUSS_ERR__INVALID_ARG, "base version: %s missing", p)
                      : fl_err_set(err, FLUSS_ERR__IO, "stat %s: %s", p, strerror(errno));
    fl_free(p);
    return rc;
}

/* write.metadata.delete-after-commit.enabled: the version files the
 * metadata-log no longer names (older than the newest previous-versions-max)
 * go, oldest last-deleted first, down to the first one already gone.
 * Readers holding an older version's path lose it, as with Java. */
static void delete_old_versions(const char *dir, int32_t v, const fl_ice_table_meta_t *next) {
    const char *on = fl_ice_prop_get(next->properties, next->n_properties,
                                     "write.metadata.delete-after-commit.enabled");
    if (!on || strcasecmp(on, "true") != 0) return;
    int64_t keep = (int64_t)fl_ice_meta_previous_versions_max(next);
    for (int64_t k = (int64_t)v - 1 - keep; k >= 1; k--) {
        char *path = version_path(dir, (int32_t)k);
        int gone = fl_vfs_unlink(path) != 0;
        fl_free(path);
        if (gone) break;
    }
}

int fl_ice_table_commit_info(const char *dir, int32_t base_version,
                             const fl_ice_table_meta_t *next, fl_ice_commit_info_t *info,
                             fl_error_t *err) {
    fl_ice_commit_info_t scratch;
    if (!info) info = &scratch;
    *info = (fl_ice_commit_info_t){base_version + 1, false, false, false};
    if (check_base(dir, base_version, err)) return err->code;
    fl_buf_t json;
    fl_buf_init(&json);
    int rc = fl_ice_meta_encode(next, &json, err);
    if (!rc) rc = link_version(dir, base_version + 1, &json, info, err);
    fl_buf_free(&json);
    if (rc) return rc;
    fl_error_t hint_err;
    if (write_hint(dir, base_version + 1, &info->hint_written, &hint_err)) /* readers probe on */
        FL_WARN("iceberg commit v%" PRId32 " of %s: hint not updated: %s", base_version + 1, dir,
                hint_err.msg);
    delete_old_versions(dir, base_version + 1, next);
    return 0;
}

int fl_ice_table_commit(const char *dir, int32_t base_version, const fl_ice_table_meta_t *next,
                        fl_error_t *err) {
    return fl_ice_table_commit_info(dir, base_version, next, NULL, err);
}

const char *fl_lake_uri_path(const char *uri) {
    if (strncmp(uri, "file://", 7) == 0) return uri + 7;
    if (strncmp(uri, "file:", 5) == 0) return uri + 5;
    return uri;
}

int fl_ice_table_create(const char *dir, const fl_ice_table_meta_t *m, fl_error_t *err) {
    char *mdir = meta_dir(dir);
    int rc = fl_fs_mkdirs(mdir, err);
    fl_free(mdir);
    return rc ? rc : fl_ice_table_commit(dir, 0, m, err);
}
