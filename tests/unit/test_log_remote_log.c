/*
 * test_log_remote_log.c — a bucket's remote log (log_remote_log.h) on the
 * local file system storage: the reference's layout after upload and
 * commit (segment bytes equal to the local ones), reload after a restart,
 * the fetch answer (segments from the one holding an offset, the position
 * to start at — a batch boundary at or before the batch holding it),
 * offsets by timestamp, expiry, a dropped bucket's files going, and
 * crashes: a storage that "dies" at every write step in turn of an upload
 * and commit leaves, after a reopen, exactly the old or the new manifest
 * and no file that no manifest names; a damaged handle deletes nothing.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_tmpdir.h"

#include "batch_builder.h"
#include "common_alloc.h"
#include "common_fs.h"
#include "log_remote_log.h"
#include "log_tablet.h"

static const fl_remote_bucket_t BUCKET = {"db", "t", NULL, 7, -1, 0};

/* A local log of `batches` batches of 3 records (~200 bytes each) with
 * segments of about three batches, every rolled one durable and indexed. */
static fl_log_tablet_t *make_log(const char *dir, int batches) {
    fl_log_config_t c;
    memset(&c, 0, sizeof(c));
    c.segment_bytes = 700;
    c.index_interval = 150;
    c.batch_bytes_max = 1 << 20;
    fl_log_tablet_t *t = NULL;
    fl_error_t err;
    if (fl_log_tablet_open(dir, &c, &t, &err)) fail_msg("open %s: %s", dir, err.msg);
    for (int i = 0; i < batches; i++) {
        bb_spec_t s = bb_spec(5, i, 3, 150, (uint8_t)i);
        size_t len = 0;
        uint8_t *req = bb_append(NULL, &len, &s);
        fl_append_result_t res;
        if (fl_log_tablet_append(t, req, len, 1000 + i, &res, &err)) fail_msg("append: %s", err.msg);
        free(req);
    }
    return t;
}

static char *path_join(const char *a, const char *b) {
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = fl_malloc(n);
    snprintf(p, n, "%s/%s", a, b);
    return p;
}

typedef struct env {
    char *local, *remote;
    fl_remote_storage_t *storage;
    fl_log_tablet_t *log;
} env_t;

static void env_open(env_t *e, const char *tmp, int batches) {
    e->local = path_join(tmp, "local");
    e->remote = path_join(tmp, "remote");
    fl_error_t err;
    assert_int_equal(fl_remote_storage_fs_new(e->remote, &e->storage, &err), 0);
    e->log = make_log(e->local, batches);
}

static void env_close(env_t *e) {
    fl_log_tablet_close(e->log);
    fl_remote_storage_destroy(e->storage);
    fl_free(e->local);
    fl_free(e->remote);
}

/* Uploads rolled segments [from, to) and commits them; returns the ids. */
static void tier(fl_remote_log_t *rl, fl_log_tablet_t *log, size_t from, size_t to,
                 size_t expired) {
    fl_remote_segment_t added[64];
    assert_true(to - from <= 64 && to < log->segment_count);
    fl_error_t err;
    for (size_t i = from; i < to; i++)
        if (fl_remote_log_upload(rl, log->segments[i], log->dir, log->segments[i + 1]->base_offset,
                                 &added[i - from], &err))
            fail_msg("upload: %s", err.msg);
    if (fl_remote_log_commit(rl, expired, added, to - from, NULL, NULL, &err)) fail_msg("commit: %s", err.msg);
}

static size_t count_entries(const char *dir, const char *suffix) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        size_t l = strlen(de->d_name), m = strlen(suffix);
        if (l >= m && strcmp(de->d_name + l - m, suffix) == 0) n++;
    }
    closedir(d);
    return n;
}

static char *tablet_dir(const env_t *e) {
    char rel[FL_REMOTE_PATH_MAX];
    fl_remote_log_tablet_dir(rel, sizeof(rel), &BUCKET);
    char *canon = realpath(e->remote, NULL);
    char *p = path_join(canon, rel);
    free(canon);
    return p;
}

static void assert_same_file(const char *a, const char *b) {
    fl_buf_t x, y;
    fl_buf_init(&x);
    fl_buf_init(&y);
    fl_error_t err;
    assert_int_equal(fl_fs_read_all(a, 1 << 24, &x, NULL, &err), 0);
    assert_int_equal(fl_fs_read_all(b, 1 << 24, &y, NULL, &err), 0);
    assert_int_equal(x.len, y.len);
    assert_memory_equal(x.data, y.data, x.len);
    fl_buf_free(&x);
    fl_buf_free(&y);
}

static void test_layout_and_reload(void **state) {
    env_t e;
    env_open(&e, *state, 30);
    assert_true(e.log->segment_count >= 6);
    fl_remote_log_t *rl;
    fl_error_t err;
    assert_int_equal(fl_remote_log_open(e.storage, &BUCKET, &rl, &err), 0);
    int64_t start, end;
    fl_remote_log_bounds(rl, &start, &end);
    assert_int_equal(start, INT64_MAX);
    assert_int_equal(end, -1);
    tier(rl, e.log, 0, 2, 0);
    tier(rl, e.log, 2, 4, 0);
    fl_remote_log_bounds(rl, &start, &end);
    assert_int_equal(start, 0);
    assert_int_equal(end, e.log->segments[4]->base_offset);
    fl_remote_log_close(rl, false);

    /* a restart: the same manifest, one manifest file, the handle */
    assert_int_equal(fl_remote_log_open(e.storage, &BUCKET, &rl, &err), 0);
    fl_remote_manifest_t m;
    fl_remote_log_manifest(rl, &m);
    assert_int_equal(m.count, 4);
    char *tdir = tablet_dir(&e);
    char *meta = path_join(tdir, "metadata");
    assert_int_equal(count_entries(meta, ".manifest"), 1);
    assert_int_equal(count_entries(meta, "manifest-handle"), 1);
    for (size_t i = 0; i < m.count; i++) {
        const fl_remote_segment_t *s = &m.segments[i];
        const fl_log_segment_t *ls = e.log->segments[i];
        assert_int_equal(s->start_offset, ls->base_offset);
        assert_int_equal(s->end_offset, e.log->segments[i + 1]->base_offset);
        assert_int_equal(s->size_bytes, (int32_t)ls->size);
        assert_int_equal(s->max_timestamp, ls->max_timestamp);
        char name[128];
        char *sdir = path_join(tdir, s->id);
        snprintf(name, sizeof(name), "%020" PRId64 ".log", s->start_offset);
        char *lf = path_join(sdir, name);
        assert_same_file(lf, ls->path);
        snprintf(name, sizeof(name), "%020" PRId64 ".index", s->start_offset);
        char *ix = path_join(sdir, name);
        struct stat st;
        assert_int_equal(stat(ix, &st), 0);
        assert_int_equal((size_t)st.st_size, ls->index_count * 8);
        snprintf(name, sizeof(name), "%020" PRId64 ".timeindex", s->start_offset);
        char *ti = path_join(sdir, name);
        assert_int_equal(stat(ti, &st), 0);
        assert_int_equal((size_t)st.st_size, ls->time_count * 12);
        fl_free(lf);
        fl_free(ix);
        fl_free(ti);
        fl_free(sdir);
    }
    /* the newest writer snapshot the local log still has went with its segment */
    char name[64];
    snprintf(name, sizeof(name), "%020" PRId64 ".writer_snapshot", m.segments[3].end_offset);
    char *snap_local = path_join(e.local, name);
    if (access(snap_local, F_OK) == 0) {
        char *sdir = path_join(tdir, m.segments[3].id);
        char *snap = path_join(sdir, name);
        assert_same_file(snap, snap_local);
        fl_free(snap);
        fl_free(sdir);
    }
    fl_free(snap_local);
    fl_remote_manifest_free(&m);
    fl_free(meta);
    fl_free(tdir);
    fl_remote_log_close(rl, false);
    env_close(&e);
}

static void test_fetch_and_time(void **state) {
    env_t e;
    env_open(&e, *state, 30);
    fl_remote_log_t *rl;
    fl_error_t err;
    assert_int_equal(fl_remote_log_open(e.storage, &BUCKET, &rl, &err), 0);
    tier(rl, e.log, 0, 4, 0);
    int64_t end = e.log->segments[4]->base_offset;
    fl_remote_fetch_t f;
    for (int64_t off = 0; off < end; off++) {
        assert_int_equal(fl_remote_log_fetch(rl, off, &f, &err), 0);
        size_t seg = 0;
        while (e.log->segments[seg + 1]->base_offset <= off) seg++;
        assert_int_equal(f.count, 4 - seg);
        assert_int_equal(f.segments[0].start_offset, e.log->segments[seg]->base_offset);
        assert_null(f.partition_name);
        assert_non_null(strstr(f.tablet_url, "/log/db/t-7/0"));
        assert_true(f.tablet_url[0] == '/');
        /* a batch boundary at or before the batch holding off */
        uint64_t pos;
        assert_int_equal(fl_log_segment_find(e.log->segments[seg], off, &pos, &err), 0);
        assert_true((uint64_t)f.first_start_pos <= pos);
        bool boundary = f.first_start_pos == 0;
        for (size_t k = 0; k < e.log->segments[seg]->index_count; k++)
            boundary |= e.log->segments[seg]->index[k].position == (uint64_t)f.first_start_pos;
        assert_true(boundary);
        fl_remote_fetch_free(&f);
    }
    assert_int_equal(fl_remote_log_fetch(rl, end, &f, &err), 1);
    /* timestamps: batch i was committed at 1000 + i, three offsets each */
    int64_t off;
    assert_int_equal(fl_remote_log_offset_for_time(rl, 0, &off, &err), 0);
    assert_int_equal(off, 0);
    assert_int_equal(fl_remote_log_offset_for_time(rl, 1005, &off, &err), 0);
    assert_int_equal(off, 15);
    assert_int_equal(fl_remote_log_offset_for_time(rl, 1000 + end / 3, &off, &err), 1);
    fl_remote_log_close(rl, false);
    env_close(&e);
}

static void test_expiry_and_drop(void **state) {
    env_t e;
    env_open(&e, *state, 30);
    fl_remote_log_t *rl;
    fl_error_t err;
    assert_int_equal(fl_remote_log_open(e.storage, &BUCKET, &rl, &err), 0);
    tier(rl, e.log, 0, 3, 0);
    fl_remote_manifest_t m;
    fl_remote_log_manifest(rl, &m);
    char *tdir = tablet_dir(&e);
    char *gone = path_join(tdir, m.segments[0].id);
    assert_int_equal(access(gone, F_OK), 0);
    tier(rl, e.log, 3, 4, 2); /* two expire as one more arrives */
    assert_int_not_equal(access(gone, F_OK), 0);
    int64_t start, end;
    fl_remote_log_bounds(rl, &start, &end);
    assert_int_equal(start, m.segments[2].start_offset);
    fl_remote_log_close(rl, true);
    assert_int_not_equal(access(tdir, F_OK), 0);
    fl_free(gone);
    fl_free(tdir);
    fl_remote_manifest_free(&m);
    env_close(&e);
}

/* ---- crashes: a storage whose writes stop working after `budget` ---- */

typedef struct dying {
    fl_remote_storage_t base;
    fl_remote_storage_t *inner;
    int budget; /* writes (put_file, put_bytes, remove) left before the "crash" */
} dying_t;

static bool dying_step(dying_t *d, fl_error_t *err) {
    if (d->budget-- > 0) return true;
    fl_err_set(err, FLUSS_ERR__IO, "the process died here");
    return false;
}

static int d_put_file(fl_remote_storage_t *b, const char *src, const char *rel, fl_error_t *err) {
    dying_t *d = (dying_t *)b;
    return dying_step(d, err) ? d->inner->ops->put_file(d->inner, src, rel, err) : FLUSS_ERR__IO;
}
static int d_put_bytes(fl_remote_storage_t *b, const char *rel, const void *p, size_t n,
                       fl_error_t *err) {
    dying_t *d = (dying_t *)b;
    return dying_step(d, err) ? d->inner->ops->put_bytes(d->inner, rel, p, n, err) : FLUSS_ERR__IO;
}
static int d_read(fl_remote_storage_t *b, const char *rel, size_t max, fl_buf_t *out, int *missing,
                  fl_error_t *err) {
    dying_t *d = (dying_t *)b;
    return d->inner->ops->read(d->inner, rel, max, out, missing, err);
}
static int d_read_range(fl_remote_storage_t *b, const char *rel, uint64_t pos, size_t len,
                        uint8_t *dst, size_t *got, fl_error_t *err) {
    dying_t *d = (dying_t *)b;
    return d->inner->ops->read_range(d->inner, rel, pos, len, dst, got, err);
}
static int d_size(fl_remote_storage_t *b, const char *rel, uint64_t *n, fl_error_t *err) {
    dying_t *d = (dying_t *)b;
    return d->inner->ops->size(d->inner, rel, n, err);
}
static int d_list(fl_remote_storage_t *b, const char *rel, fl_strlist_t *names, fl_error_t *err) {
    dying_t *d = (dying_t *)b;
    return d->inner->ops->list(d->inner, rel, names, err);
}
static int d_remove(fl_remote_storage_t *b, const char *rel, fl_error_t *err) {
    dying_t *d = (dying_t *)b;
    return dying_step(d, err) ? d->inner->ops->remove(d->inner, rel, err) : FLUSS_ERR__IO;
}
static void d_destroy(fl_remote_storage_t *b) { (void)b; }
static const fl_remote_storage_ops_t dying_ops = {d_put_file, d_put_bytes, d_read,   d_read_range,
                                                  d_size,     d_list,      d_remove, d_destroy};

/* Names in the tablet dir that look like segment directories. */
static size_t segment_dirs(const char *tdir) {
    DIR *d = opendir(tdir);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d))) n += strlen(de->d_name) == 36;
    closedir(d);
    return n;
}

static void test_crash_at_every_step(void **state) {
    bool saw_old = false, saw_new = false;
    bool done = false;
    for (int budget = 0; !done; budget++) {
        assert_true(budget < 64);
        char sub[64];
        snprintf(sub, sizeof(sub), "%s/run%d", (const char *)*state, budget);
        assert_int_equal(mkdir(sub, 0755), 0);
        env_t e;
        env_open(&e, sub, 15);
        fl_remote_log_t *rl;
        fl_error_t err;
        /* committed before the crash: two segments */
        assert_int_equal(fl_remote_log_open(e.storage, &BUCKET, &rl, &err), 0);
        tier(rl, e.log, 0, 2, 0);
        fl_remote_log_close(rl, false);
        /* the round that dies: two more segments up, the first one expired */
        dying_t d = {{&dying_ops, e.storage->root}, e.storage, budget};
        assert_int_equal(fl_remote_log_open(&d.base, &BUCKET, &rl, &err), 0);
        fl_remote_segment_t added[2];
        int rc = 0;
        size_t up = 0;
        for (size_t i = 2; i < 4 && !rc; i++, up += !rc)
            rc = fl_remote_log_upload(rl, e.log->segments[i], e.log->dir,
                                      e.log->segments[i + 1]->base_offset, &added[i - 2], &err);
        if (!rc) rc = fl_remote_log_commit(rl, 1, added, up, NULL, NULL, &err);
        fl_remote_log_close(rl, false); /* no cleanup after the "crash" */
        done = d.budget > 0; /* the whole round fitted in the budget: every step was tried */
        /* restart with a working storage; the writer cleans up first */
        assert_int_equal(fl_remote_log_open(e.storage, &BUCKET, &rl, &err), 0);
        fl_remote_log_clean_orphans(rl);
        fl_remote_manifest_t m;
        fl_remote_log_manifest(rl, &m);
        bool old = m.count == 2 && m.segments[0].start_offset == 0;
        bool new = m.count == 3 && m.segments[0].start_offset == e.log->segments[1]->base_offset &&
                   m.segments[2].end_offset == e.log->segments[4]->base_offset;
        if (!old && !new) fail_msg("budget %d: %zu segments after the crash", budget, m.count);
        saw_old |= old;
        saw_new |= new;
        if (!rc) assert_true(new);
        /* nothing left that no manifest names, everything named is there */
        char *tdir = tablet_dir(&e);
        char *meta = path_join(tdir, "metadata");
        assert_int_equal(segment_dirs(tdir), m.count);
        assert_int_equal(count_entries(meta, ".manifest"), 1);
        assert_int_equal(count_entries(meta, ".tmp"), 0);
        for (size_t i = 0; i < m.count; i++) {
            char name[128];
            snprintf(name, sizeof(name), "%s/%020" PRId64 ".log", m.segments[i].id,
                     m.segments[i].start_offset);
            char *lf = path_join(tdir, name);
            struct stat st;
            assert_int_equal(stat(lf, &st), 0);
            assert_int_equal(st.st_size, m.segments[i].size_bytes);
            fl_free(lf);
        }
        fl_free(meta);
        fl_free(tdir);
        fl_remote_manifest_free(&m);
        fl_remote_log_close(rl, false);
        env_close(&e);
    }
    assert_true(saw_old && saw_new);
}

static void test_damaged_handle_deletes_nothing(void **state) {
    env_t e;
    env_open(&e, *state, 30);
    fl_remote_log_t *rl;
    fl_error_t err;
    assert_int_equal(fl_remote_log_open(e.storage, &BUCKET, &rl, &err), 0);
    tier(rl, e.log, 0, 3, 0);
    fl_remote_log_close(rl, false);
    char *tdir = tablet_dir(&e);
    char *meta = path_join(tdir, "metadata");
    char *handle = path_join(meta, "manifest-handle");
    assert_int_equal(fl_fs_write_atomic(handle, "{\"version\":1", 12, &err), 0);
    assert_int_not_equal(fl_remote_log_open(e.storage, &BUCKET, &rl, &err), 0);
    assert_int_equal(segment_dirs(tdir), 3);
    /* a handle naming something else than a manifest is refused too */
    const char *escape = "{\"version\":1,\"remote_log_manifest_path\":\"/x/../../etc/passwd\","
                         "\"remote_log_end_offset\":3}";
    assert_int_equal(fl_fs_write_atomic(handle, escape, strlen(escape), &err), 0);
    assert_int_not_equal(fl_remote_log_open(e.storage, &BUCKET, &rl, &err), 0);
    assert_int_equal(segment_dirs(tdir), 3);
    fl_free(handle);
    fl_free(meta);
    fl_free(tdir);
    env_close(&e);
}

static void test_orphans_removed_by_the_writer(void **state) {
    env_t e;
    env_open(&e, *state, 30);
    fl_remote_log_t *rl;
    fl_error_t err;
    /* files a crash left before the first commit: no handle at all */
    char rel[256];
    fl_remote_log_tablet_dir(rel, sizeof(rel), &BUCKET);
    char orphan[512];
    snprintf(orphan, sizeof(orphan), "%s/0b8a4f7e-1c2d-4e5f-8a9b-0c1d2e3f4a5b/00000000000000000000.log",
             rel);
    assert_int_equal(e.storage->ops->put_bytes(e.storage, orphan, "x", 1, &err), 0);
    snprintf(orphan, sizeof(orphan), "%s/metadata/1c9b5a8f-2d3e-4f60-9bac-1d2e3f4a5b6c.manifest",
             rel);
    assert_int_equal(e.storage->ops->put_bytes(e.storage, orphan, "{}", 2, &err), 0);
    snprintf(orphan, sizeof(orphan), "%s/notes.txt", rel); /* not ours to judge: kept */
    assert_int_equal(e.storage->ops->put_bytes(e.storage, orphan, "x", 1, &err), 0);
    assert_int_equal(fl_remote_log_open(e.storage, &BUCKET, &rl, &err), 0);
    char *tdir = tablet_dir(&e);
    char *meta = path_join(tdir, "metadata");
    /* open alone removes nothing (another server may be uploading) */
    assert_int_equal(segment_dirs(tdir), 1);
    assert_int_equal(count_entries(meta, ".manifest"), 1);
    fl_remote_log_clean_orphans(rl);
    assert_int_equal(segment_dirs(tdir), 0);
    assert_int_equal(count_entries(meta, ".manifest"), 0);
    assert_int_equal(count_entries(tdir, ".txt"), 1);
    fl_free(meta);
    fl_free(tdir);
    fl_remote_log_close(rl, false);
    env_close(&e);
}

/* Two servers' replicas of one bucket on one remote storage (a cluster's
 * shared remote.data.dir): the leader commits, the follower's refresh
 * takes the new manifest, and a new leader's refresh and cleanup keep
 * every segment the last commit names. */
static void test_two_servers_share_the_remote_log(void **state) {
    env_t e;
    env_open(&e, *state, 30);
    fl_remote_log_t *leader, *follower;
    fl_error_t err;
    assert_int_equal(fl_remote_log_open(e.storage, &BUCKET, &leader, &err), 0);
    assert_int_equal(fl_remote_log_open(e.storage, &BUCKET, &follower, &err), 0);
    int64_t start, end;
    assert_int_equal(fl_remote_log_refresh(follower, &err), 0); /* nothing committed: as it was */
    fl_remote_log_bounds(follower, &start, &end);
    assert_int_equal(end, -1);
    tier(leader, e.log, 0, 2, 0);
    fl_remote_log_bounds(follower, &start, &end);
    assert_int_equal(end, -1); /* not read again yet */
    assert_int_equal(fl_remote_log_refresh(follower, &err), 0);
    fl_remote_log_bounds(follower, &start, &end);
    assert_int_equal(start, 0);
    assert_int_equal(end, e.log->segments[2]->base_offset);
    /* leadership moves: the old leader's view is stale, the new leader
     * refreshes, cleans up and commits on top of the last commit */
    tier(leader, e.log, 2, 3, 0);
    assert_int_equal(fl_remote_log_refresh(follower, &err), 0);
    fl_remote_log_clean_orphans(follower);
    tier(follower, e.log, 3, 4, 1);
    char *tdir = tablet_dir(&e);
    char *meta = path_join(tdir, "metadata");
    assert_int_equal(segment_dirs(tdir), 3); /* segments 1..3: the first expired */
    assert_int_equal(count_entries(meta, ".manifest"), 1);
    assert_int_equal(fl_remote_log_refresh(leader, &err), 0);
    fl_remote_log_bounds(leader, &start, &end);
    assert_int_equal(start, e.log->segments[1]->base_offset);
    assert_int_equal(end, e.log->segments[4]->base_offset);
    fl_free(meta);
    fl_free(tdir);
    fl_remote_log_close(leader, false);
    fl_remote_log_close(follower, false);
    env_close(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_layout_and_reload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fetch_and_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expiry_and_drop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_at_every_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_handle_deletes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_orphans_removed_by_the_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_servers_share_the_remote_log, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
