/*
 * test_common_vfs_fault.c — the fault-injecting seam table
 * (common_vfs_fault.h): the spec parser, failures of each kind with the
 * chosen errno, the path prefix (dup'd descriptors keep their path), the
 * seeded draw (same seed, same failures; a rate of 0.3 fails about 30 %),
 * short writes before the error, and the emulated small disk (ENOSPC past
 * its size, a short write where part fits, statvfs that follows the files,
 * writes again after a file is removed), and the table used by several
 * threads at once (its counters, fd table and disk emulation; run under
 * ThreadSanitizer by make test-tsan).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_tmpdir.h"

#include "common_log.h"
#include "common_vfs.h"
#include "common_vfs_fault.h"

static fl_vfs_fault_t *install(const char *spec) {
    fl_vfs_fault_config_t cfg;
    fl_error_t err;
    if (fl_vfs_fault_parse(spec, &cfg, &err)) fail_msg("spec '%s': %s", spec, err.msg);
    fl_vfs_fault_t *f = fl_vfs_fault_new(&cfg);
    fl_vfs_install(fl_vfs_fault_ops(), f);
    return f;
}

static void uninstall(fl_vfs_fault_t *f) {
    fl_vfs_install(NULL, NULL);
    fl_vfs_fault_free(f);
}

static int open_in(const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = fl_vfs_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) fail_msg("open %s: %s", path, strerror(errno));
    return fd;
}

static off_t size_of(int fd) {
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    return st.st_size;
}

static void test_parse(void **state) {
    (void)state;
    fl_vfs_fault_config_t c;
    fl_error_t err;
    assert_int_equal(fl_vfs_fault_parse("", &c, &err), 0);
    assert_true(c.rate == 0);
    assert_int_equal(c.ops, 1u << FL_VFS_FAULT_WRITE | 1u << FL_VFS_FAULT_FSYNC);
    assert_int_equal(c.errno_count, 1);
    assert_int_equal(c.errnos[0], EIO);
    assert_string_equal(c.prefix, "");
    assert_int_equal(fl_vfs_fault_parse("rate=0.01,ops=fsync+rename,errno=EIO+ENOSPC,seed=42,"
                                        "path=/data/x/,disk=65536",
                                        &c, &err),
                     0);
    assert_true(c.rate > 0.0099 && c.rate < 0.0101);
    assert_int_equal(c.ops, 1u << FL_VFS_FAULT_FSYNC | 1u << FL_VFS_FAULT_RENAME);
    assert_int_equal(c.errno_count, 2);
    assert_int_equal(c.errnos[1], ENOSPC);
    assert_int_equal(c.seed, 42);
    assert_string_equal(c.prefix, "/data/x"); /* trailing slash dropped */
    assert_int_equal(c.disk_bytes, 65536);
    assert_int_equal(fl_vfs_fault_parse("ops=all", &c, &err), 0);
    assert_int_equal(c.ops, (1u << FL_VFS_FAULT_KINDS) - 1);
    const char *bad[] = {"rate=2", "rate=-0.1", "rate=x", "ops=read", "ops=", "errno=EBADF",
                         "seed=-1", "disk=64m", "disk=100", "color=red", "rate", "lose=2"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (fl_vfs_fault_parse(bad[i], &c, &err) == 0) fail_msg("'%s' accepted", bad[i]);
}

static void test_fsync_and_write_fail(void **state) {
    const char *dir = *state;
    fl_vfs_fault_t *f = install("rate=1,ops=fsync,errno=ENOSPC");
    int fd = open_in(dir, "a");
    assert_int_equal(fl_vfs_pwrite_full(fd, "hello", 5, 0), 0);
    errno = 0;
    assert_int_equal(fl_vfs_fdatasync(fd), -1);
    assert_int_equal(errno, ENOSPC);
    assert_int_equal(fl_vfs_fsync_dir(dir), -1); /* directories too */
    fl_vfs_close(fd);
    fl_vfs_fault_stats_t s;
    fl_vfs_fault_get_stats(f, &s);
    assert_int_equal(s.injected[FL_VFS_FAULT_FSYNC], 2);
    assert_int_equal(s.calls[FL_VFS_FAULT_WRITE], 1);
    assert_int_equal(s.injected[FL_VFS_FAULT_WRITE], 0);
    uninstall(f);

    f = install("rate=1,ops=write+truncate+rename+create");
    char path[4096], path2[4096];
    snprintf(path, sizeof(path), "%s/b", dir);
    snprintf(path2, sizeof(path2), "%s/c", dir);
    errno = 0;
    assert_int_equal(fl_vfs_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644), -1);
    assert_int_equal(errno, EIO);
    fd = fl_vfs_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644); /* still refused */
    assert_int_equal(fd, -1);
    uninstall(f);
    fd = open_in(dir, "b");
    f = install("rate=1,ops=write+truncate+rename");
    assert_int_equal(fl_vfs_pwrite_full(fd, "x", 1, 0), -1);
    assert_int_equal(errno, EIO);
    assert_int_equal(size_of(fd), 0);
    assert_int_equal(fl_vfs_ftruncate(fd, 10), -1);
    assert_int_equal(fl_vfs_rename(path, path2), -1);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(fl_vfs_fsync(fd), 0); /* not asked for */
    fl_vfs_close(fd);
    uninstall(f);
}

static void test_prefix(void **state) {
    const char *dir = *state;
    char inside[4096], path[4096];
    snprintf(inside, sizeof(inside), "%s/in", dir);
    assert_int_equal(mkdir(inside, 0755), 0);
    char spec[4200];
    snprintf(spec, sizeof(spec), "rate=1,ops=write+fsync,path=%s/", inside);
    fl_vfs_fault_t *f = install(spec);
    int out = open_in(dir, "out");
    int in = open_in(inside, "x");
    assert_int_equal(fl_vfs_pwrite_full(out, "ok", 2, 0), 0);
    assert_int_equal(fl_vfs_fsync(out), 0);
    assert_int_equal(fl_vfs_pwrite_full(in, "no", 2, 0), -1);
    int d = fl_vfs_dup(in); /* keeps the path */
    assert_true(d >= 0);
    assert_int_equal(fl_vfs_fdatasync(d), -1);
    fl_vfs_close(d);
    assert_int_equal(fl_vfs_fsync_dir(inside), -1);
    assert_int_equal(fl_vfs_fsync_dir(dir), 0);
    /* a sibling whose name only starts like the prefix is outside */
    snprintf(path, sizeof(path), "%s/inner", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(fl_vfs_fsync_dir(path), 0);
    fl_vfs_close(in);
    fl_vfs_close(out);
    /* a descriptor number reused for a file outside the prefix is outside */
    out = open_in(dir, "out2");
    assert_int_equal(fl_vfs_fsync(out), 0);
    fl_vfs_close(out);
    uninstall(f);
}

/* Which of n fsyncs failed, as a bit string. */
static void fsync_pattern(const char *dir, const char *spec, char *pattern, size_t n) {
    fl_vfs_fault_t *f = install(spec);
    int fd = open_in(dir, "p");
    for (size_t i = 0; i < n; i++) pattern[i] = fl_vfs_fdatasync(fd) ? '1' : '0';
    pattern[n] = '\0';
    fl_vfs_close(fd);
    uninstall(f);
}

static void test_seeded(void **state) {
    const char *dir = *state;
    enum { N = 2000 };
    static char a[N + 1], b[N + 1], c[N + 1];
    fsync_pattern(dir, "rate=0.3,ops=fsync,seed=7", a, N);
    fsync_pattern(dir, "rate=0.3,ops=fsync,seed=7", b, N);
    fsync_pattern(dir, "rate=0.3,ops=fsync,seed=8", c, N);
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);
    size_t ones = 0;
    for (size_t i = 0; i < N; i++) ones += a[i] == '1';
    if (ones < N * 25 / 100 || ones > N * 35 / 100) fail_msg("%zu of %d failed at rate 0.3", ones, N);
    fsync_pattern(dir, "rate=0,ops=fsync", a, 100);
    assert_null(strchr(a, '1'));
}

static void test_errno_mix_and_short_writes(void **state) {
    const char *dir = *state;
    fl_vfs_fault_t *f = install("rate=1,ops=write,errno=EIO+ENOSPC,seed=3");
    int fd = open_in(dir, "s");
    static uint8_t buf[8192];
    memset(buf, 'z', sizeof(buf));
    int seen_eio = 0, seen_enospc = 0;
    for (int i = 0; i < 64; i++) {
        assert_int_equal(fl_vfs_ftruncate(fd, 0), 0);
        errno = 0;
        assert_int_equal(fl_vfs_pwrite_full(fd, buf, sizeof(buf), 0), -1);
        seen_eio += errno == EIO;
        seen_enospc += errno == ENOSPC;
        off_t sz = size_of(fd); /* nothing, or half landed before the error */
        assert_true(sz == 0 || sz == (off_t)sizeof(buf) / 2);
    }
    assert_true(seen_eio > 0 && seen_enospc > 0);
    assert_int_equal(seen_eio + seen_enospc, 64);
    fl_vfs_fault_stats_t s;
    fl_vfs_fault_get_stats(f, &s);
    assert_int_equal(s.injected[FL_VFS_FAULT_WRITE], 64);
    assert_true(s.short_writes > 0 && s.short_writes < 64);
    char line[512];
    fl_vfs_fault_summary(f, line, sizeof(line));
    assert_non_null(strstr(line, "write calls="));
    assert_non_null(strstr(line, "injected=64"));
    fl_vfs_close(fd);
    uninstall(f);
}

static void test_emulated_disk(void **state) {
    const char *dir = *state;
    char spec[4200], path[4200];
    snprintf(spec, sizeof(spec), "disk=65536,path=%s", dir);
    fl_vfs_fault_t *f = install(spec);
    struct statvfs sv;
    assert_int_equal(fl_vfs_statvfs(dir, &sv), 0);
    assert_int_equal(sv.f_frsize, 4096);
    assert_int_equal(sv.f_blocks, 16);
    assert_int_equal(sv.f_bavail, 16);
    static uint8_t buf[32768];
    memset(buf, 'd', sizeof(buf));
    int fd = open_in(dir, "filler");
    assert_int_equal(fl_vfs_pwrite_full(fd, buf, 16384, 0), 0);
    fsync(fd); /* allocated blocks show in st_blocks */
    assert_int_equal(fl_vfs_statvfs(dir, &sv), 0);
    assert_true(sv.f_bavail <= 12 && sv.f_bavail >= 10);
    int g = open_in(dir, "grow");
    errno = 0;
    assert_int_equal(fl_vfs_pwrite_full(g, buf, sizeof(buf), 0), 0);
    assert_int_equal(fl_vfs_pwrite_full(g, buf, sizeof(buf), sizeof(buf)), -1);
    assert_int_equal(errno, ENOSPC);
    off_t sz = size_of(g);
    assert_true(sz > (off_t)sizeof(buf) && sz < 2 * (off_t)sizeof(buf)); /* part fitted */
    assert_int_equal(fl_vfs_pwrite_full(g, "a", 1, 0), 0); /* overwrites need no room */
    fl_vfs_fault_stats_t s;
    fl_vfs_fault_get_stats(f, &s);
    assert_true(s.enospc >= 1);
    /* space freed: writes fit again */
    fl_vfs_close(fd);
    snprintf(path, sizeof(path), "%s/filler", dir);
    assert_int_equal(fl_vfs_unlink(path), 0);
    assert_int_equal(fl_vfs_statvfs(dir, &sv), 0);
    assert_true(sv.f_bavail >= 2);
    assert_int_equal(fl_vfs_pwrite_full(g, buf, 4096, sz), 0);
    fl_vfs_close(g);
    /* outside the path: the real file system */
    assert_int_equal(fl_vfs_statvfs("/", &sv), 0);
    assert_true(sv.f_blocks != 16);
    uninstall(f);
}

static void test_lose_unsynced(void **state) {
    const char *dir = *state;
    int fd = open_in(dir, "l");
    assert_int_equal(fl_vfs_pwrite_full(fd, "old", 3, 0), 0); /* before: kept */
    char spec[4200];
    snprintf(spec, sizeof(spec), "rate=0,lose=1,path=%s", dir);
    fl_vfs_fault_t *f = install(spec);
    int g = open_in(dir, "m");
    assert_int_equal(fl_vfs_pwrite_full(fd, "synced", 6, 3), 0);
    assert_int_equal(fl_vfs_fdatasync(fd), 0);
    assert_int_equal(fl_vfs_pwrite_full(fd, "lost", 4, 9), 0);
    assert_int_equal(fl_vfs_pwrite_full(g, "never", 5, 0), 0);
    uninstall(f);
    /* same table, failing every fsync now */
    fl_vfs_fault_config_t cfg;
    fl_error_t err;
    snprintf(spec, sizeof(spec), "rate=1,ops=fsync,lose=1,path=%s", dir);
    assert_int_equal(fl_vfs_fault_parse(spec, &cfg, &err), 0);
    assert_true(cfg.lose);
    f = fl_vfs_fault_new(&cfg);
    fl_vfs_install(fl_vfs_fault_ops(), f);
    int d = fl_vfs_dup(fd); /* seen first now: its size then counts as synced */
    assert_int_equal(fl_vfs_pwrite_full(d, "gone", 4, 13), 0);
    assert_int_equal(fl_vfs_fdatasync(d), -1);
    assert_int_equal(size_of(fd), 13);
    fl_vfs_close(d);
    uninstall(f);
    /* with the first table: a failed fsync cuts back to the good one */
    f = install(spec);
    int h = open_in(dir, "n");
    assert_int_equal(fl_vfs_pwrite_full(h, "abc", 3, 0), 0);
    assert_int_equal(fl_vfs_fsync(h), -1);
    assert_int_equal(size_of(h), 0); /* never synced since it was opened empty */
    fl_vfs_fault_stats_t st;
    fl_vfs_fault_get_stats(f, &st);
    assert_int_equal(st.lost_bytes, 3);
    fl_vfs_close(h);
    fl_vfs_close(g);
    fl_vfs_close(fd);
    uninstall(f);
}


/* Several threads write, fsync, dup and close their own files through one
 * installed table while another reads statvfs: every call is counted and
 * every failed fsync is one the table injected. */
#define THREADS 4
#define ROUNDS 150

typedef struct worker {
    const char *dir;
    int id;
    long writes, fsyncs, fsync_failures;
} worker_t;

static atomic_bool stop_statvfs;

static void *worker_main(void *arg) {
    worker_t *w = arg;
    char name[32];
    snprintf(name, sizeof(name), "w%d", w->id);
    int fd = open_in(w->dir, name);
    uint8_t block[1024];
    memset(block, w->id, sizeof(block));
    off_t pos = 0;
    for (int i = 0; i < ROUNDS; i++) {
        ssize_t n = fl_vfs_pwrite(fd, block, sizeof(block), pos);
        w->writes++;
        if (n > 0) pos += n;
        int dfd = fl_vfs_dup(fd); /* the fd table under churn */
        w->fsyncs++;
        if (fl_vfs_fdatasync(dfd >= 0 ? dfd : fd) != 0) w->fsync_failures++;
        if (dfd >= 0) fl_vfs_close(dfd);
    }
    fl_vfs_close(fd);
    return NULL;
}

static void *statvfs_main(void *arg) {
    const char *dir = arg;
    while (!atomic_load(&stop_statvfs)) {
        struct statvfs sv;
        assert_int_equal(fl_vfs_statvfs(dir, &sv), 0);
    }
    return NULL;
}

static void test_threads(void **state) {
    const char *dir = *state;
    char spec[4200];
    snprintf(spec, sizeof(spec), "rate=0.2,ops=write+fsync,errno=EIO+ENOSPC,seed=9,lose=1,"
                                 "path=%s,disk=2097152", dir);
    fl_log_set_level(FL_LOG_ERROR); /* one WARN per injection otherwise */
    fl_vfs_fault_t *f = install(spec);
    worker_t w[THREADS];
    pthread_t t[THREADS], sv;
    atomic_store(&stop_statvfs, false);
    assert_int_equal(pthread_create(&sv, NULL, statvfs_main, (void *)dir), 0);
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker_t){.dir = dir, .id = i};
        assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
    }
    long writes = 0, fsyncs = 0, fsync_failures = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        writes += w[i].writes;
        fsyncs += w[i].fsyncs;
        fsync_failures += w[i].fsync_failures;
    }
    atomic_store(&stop_statvfs, true);
    pthread_join(sv, NULL);
    fl_vfs_fault_stats_t s;
    fl_vfs_fault_get_stats(f, &s);
    uninstall(f);
    fl_log_set_level(FL_LOG_INFO);
    assert_int_equal(s.calls[FL_VFS_FAULT_WRITE], writes);
    assert_int_equal(s.calls[FL_VFS_FAULT_FSYNC], fsyncs);
    assert_int_equal(s.injected[FL_VFS_FAULT_FSYNC], fsync_failures);
    assert_true(fsync_failures > 0 && s.injected[FL_VFS_FAULT_WRITE] > 0);
}

int main(void) {
    fl_log_set_level(FL_LOG_ERROR); /* one WARN line per injection otherwise */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test_setup_teardown(test_fsync_and_write_fail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seeded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errno_mix_and_short_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_emulated_disk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lose_unsynced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
