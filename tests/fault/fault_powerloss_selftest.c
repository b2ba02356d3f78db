/*
 * fault_powerloss_selftest.c — proves the power-loss shim (fault_powerloss.c)
 * keeps exactly what its model says: after each step of a scripted sequence
 * of writes, syncs, renames and removals the shadow directory is compared
 * with the expected disk content.
 *
 *   fault_powerloss_selftest eager|strict
 *
 * The program is linked against libfl_powerloss.so (so its calls go through
 * the shim without LD_PRELOAD) and sets FL_POWERLOSS_* itself before the
 * first intercepted call; it works under LD_PRELOAD as well. It makes its
 * own directories under $TMPDIR (or /tmp) and removes them. Exit 0 = pass.
 * Threading: main thread only, except the concurrent-sync step.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The test's paths are short; a truncated one would fail a check anyway. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

static char base[4096], root[4200], shadow[4200];
static int failures;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);               \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            failures++;                                                         \
        }                                                                       \
    } while (0)

#define SYS(call)                                                               \
    do {                                                                        \
        if ((call) < 0) {                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
                    strerror(errno));                                           \
            exit(2);                                                            \
        }                                                                       \
    } while (0)

static const char *R(const char *rel) {
    static __thread char bufs[4][4400]; /* per thread: the writers call it concurrently */
    static __thread int i;
    char *b = bufs[i++ & 3];
    snprintf(b, sizeof(bufs[0]), "%s/%s", root, rel);
    return b;
}

/* the shadow content of rel, or NULL when absent */
static char *shadow_read(const char *rel, size_t *len) {
    char p[4400];
    snprintf(p, sizeof(p), "%s/%s", shadow, rel);
    int fd = open(p, O_RDONLY);
    if (fd < 0) return NULL;
    char *buf = malloc(1 << 20);
    ssize_t n = read(fd, buf, 1 << 20);
    close(fd);
    if (n < 0) n = 0;
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

#define EXPECT_FILE(rel, want) expect_file(__LINE__, rel, want, sizeof(want) - 1)
static void expect_file(int line, const char *rel, const char *want, size_t want_len) {
    size_t len = 0;
    char *got = shadow_read(rel, &len);
    if (!got) {
        fprintf(stderr, "line %d: FAIL: shadow %s absent, want \"%s\"\n", line, rel, want);
        failures++;
        return;
    }
    if (len != want_len || memcmp(got, want, len) != 0) {
        fprintf(stderr, "line %d: FAIL: shadow %s is \"%.*s\" (%zu bytes), want \"%s\"\n", line,
                rel, (int)len, got, len, want);
        failures++;
    }
    free(got);
}

#define EXPECT_ABSENT(rel) expect_absent(__LINE__, rel)
static void expect_absent(int line, const char *rel) {
    char p[4400];
    struct stat st;
    snprintf(p, sizeof(p), "%s/%s", shadow, rel);
    if (lstat(p, &st) == 0) {
        fprintf(stderr, "line %d: FAIL: shadow %s exists, want absent\n", line, rel);
        failures++;
    }
}

#define EXPECT_DIR(rel) expect_dir(__LINE__, rel)
static void expect_dir(int line, const char *rel) {
    char p[4400];
    struct stat st;
    snprintf(p, sizeof(p), "%s/%s", shadow, rel);
    if (lstat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "line %d: FAIL: shadow %s is not a directory\n", line, rel);
        failures++;
    }
}

/* sorted, space-separated names of the shadow tree (dirs end in '/') */
static void list_tree(const char *dir, const char *prefix, char *out, size_t cap) {
    DIR *d = opendir(dir);
    if (!d) return;
    char names[256][256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(names[n++], 256, "%s", e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, 256, (int (*)(const void *, const void *))strcmp);
    for (int i = 0; i < n; i++) {
        char p[4400], rel[4400];
        struct stat st;
        snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
        snprintf(rel, sizeof(rel), "%s%s", prefix, names[i]);
        int is_dir = lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
        size_t l = strlen(out);
        snprintf(out + l, cap - l, "%s%s%s", l ? " " : "", rel, is_dir ? "/" : "");
        if (is_dir) {
            char sub[4400];
            snprintf(sub, sizeof(sub), "%s/", rel);
            list_tree(p, sub, out, cap);
        }
    }
}

#define EXPECT_TREE(want) expect_tree(__LINE__, want)
static void expect_tree(int line, const char *want) {
    char got[8192] = "";
    list_tree(shadow, "", got, sizeof(got));
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "line %d: FAIL: shadow tree\n  got  [%s]\n  want [%s]\n", line, got, want);
        failures++;
    }
}

static int create(const char *rel, int flags) {
    int fd = open(R(rel), flags | O_CREAT | O_CLOEXEC, 0644);
    SYS(fd);
    return fd;
}

static void put(int fd, const char *s) {
    size_t n = strlen(s);
    if (write(fd, s, n) != (ssize_t)n) {
        perror("write");
        exit(2);
    }
}

static void fsync_dir(const char *rel) {
    int fd = open(R(rel), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    SYS(fd);
    SYS(fsync(fd));
    close(fd);
}

/* ------------------------------------------------------------------------- */

typedef struct {
    int id;
    size_t synced; /* bytes written as of the last fsync */
} writer_t;

static void *writer_main(void *arg) {
    writer_t *w = arg;
    char name[32], chunk[101];
    snprintf(name, sizeof(name), "d/t%d", w->id);
    int fd = create(name, O_WRONLY | O_TRUNC);
    size_t written = 0;
    for (int i = 0; i < 200; i++) {
        memset(chunk, 'a' + (i + w->id) % 26, 100);
        chunk[100] = '\0';
        put(fd, chunk);
        written += 100;
        if (i % 7 == w->id) {
            SYS(fsync(fd));
            w->synced = written;
        }
    }
    close(fd);
    return NULL;
}

static void check_writer(const writer_t *w) {
    char name[32];
    snprintf(name, sizeof(name), "d/t%d", w->id);
    size_t len = 0;
    char *got = shadow_read(name, &len);
    CHECK(got && len == w->synced, "%s: %zu bytes in the shadow, %zu synced", name,
          got ? len : 0, w->synced);
    for (size_t i = 0; got && i < len && i < w->synced; i++)
        if (got[i] != 'a' + (int)((i / 100 + (size_t)w->id) % 26)) {
            CHECK(0, "%s: wrong byte at %zu", name, i);
            break;
        }
    free(got);
}

static void scenario_eager(void) {
    /* mkdir is mirrored; a file never synced is absent */
    SYS(mkdir(R("d"), 0755));
    EXPECT_DIR("d");
    int fd = create("d/a", O_RDWR);
    put(fd, "hello");
    EXPECT_ABSENT("d/a");
    SYS(fsync(fd));
    EXPECT_FILE("d/a", "hello");
    put(fd, " world");
    EXPECT_FILE("d/a", "hello");
    SYS(fdatasync(fd));
    EXPECT_FILE("d/a", "hello world");
    /* ftruncate counts at the next sync only */
    SYS(ftruncate(fd, 4));
    EXPECT_FILE("d/a", "hello world");
    SYS(fsync(fd));
    EXPECT_FILE("d/a", "hell");
    /* sync_file_range: only the range, and only with WAIT_AFTER */
    SYS(pwrite(fd, "HE", 2, 0));
    SYS(sync_file_range(fd, 0, 1, SYNC_FILE_RANGE_WRITE));
    EXPECT_FILE("d/a", "hell");
    SYS(sync_file_range(fd, 0, 1,
                        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                            SYNC_FILE_RANGE_WAIT_AFTER));
    EXPECT_FILE("d/a", "Hell");
    SYS(fsync(fd));
    EXPECT_FILE("d/a", "HEll");
    close(fd);

    /* a write-only fd, then a dup of it */
    fd = create("d/b", O_WRONLY | O_TRUNC);
    put(fd, "bee");
    SYS(fsync(fd));
    EXPECT_FILE("d/b", "bee");
    int fd2 = dup(fd);
    SYS(fd2);
    put(fd2, "s");
    SYS(fsync(fd2));
    EXPECT_FILE("d/b", "bees");
    int fd3 = fcntl(fd, F_DUPFD_CLOEXEC, 100);
    SYS(fd3);
    put(fd3, "!");
    SYS(fsync(fd3));
    EXPECT_FILE("d/b", "bees!");
    close(fd3);
    close(fd2);
    close(fd);

    /* close without sync keeps nothing; renames follow the synced data */
    fd = create("d/c", O_WRONLY);
    put(fd, "sea");
    close(fd);
    EXPECT_ABSENT("d/c");
    SYS(rename(R("d/a"), R("d/a2")));
    EXPECT_ABSENT("d/a");
    EXPECT_FILE("d/a2", "HEll");
    /* a name pointed at never-synced data: absent */
    SYS(rename(R("d/c"), R("d/a2")));
    EXPECT_ABSENT("d/c");
    EXPECT_ABSENT("d/a2");
    fd = open(R("d/a2"), O_RDONLY);
    SYS(fd);
    SYS(fsync(fd)); /* fsync through a read-only fd syncs the file too */
    close(fd);
    EXPECT_FILE("d/a2", "sea");
    int dfd = open(R("d"), O_RDONLY | O_DIRECTORY);
    SYS(dfd);
    SYS(renameat(dfd, "a2", AT_FDCWD, R("e")));
    EXPECT_ABSENT("d/a2");
    EXPECT_FILE("e", "sea");
    /* a rename of an open file: later syncs land under the new name */
    fd = create("d/f", O_WRONLY);
    put(fd, "1");
    SYS(fsync(fd));
    SYS(renameat2(dfd, "f", dfd, "g", 0));
    put(fd, "2");
    SYS(fsync(fd));
    close(fd);
    EXPECT_ABSENT("d/f");
    EXPECT_FILE("d/g", "12");
    /* RENAME_EXCHANGE swaps */
    SYS(renameat2(AT_FDCWD, R("d/g"), AT_FDCWD, R("e"), RENAME_EXCHANGE));
    EXPECT_FILE("d/g", "sea");
    EXPECT_FILE("e", "12");
    /* unlink and unlinkat; syncs of an unlinked open file are dropped */
    SYS(unlink(R("d/b")));
    EXPECT_ABSENT("d/b");
    fd = create("d/h", O_WRONLY);
    put(fd, "x");
    SYS(fsync(fd));
    EXPECT_FILE("d/h", "x");
    SYS(unlinkat(dfd, "h", 0));
    EXPECT_ABSENT("d/h");
    put(fd, "y");
    SYS(fsync(fd));
    EXPECT_ABSENT("d/h");
    close(fd);
    /* mkdirat, rmdir, unlinkat(AT_REMOVEDIR), relative paths */
    SYS(mkdirat(dfd, "sub", 0755));
    SYS(mkdir(R("d/sub2"), 0755));
    EXPECT_DIR("d/sub");
    EXPECT_DIR("d/sub2");
    SYS(rmdir(R("d/sub")));
    SYS(unlinkat(dfd, "sub2", AT_REMOVEDIR));
    EXPECT_ABSENT("d/sub");
    EXPECT_ABSENT("d/sub2");
    char cwd[4096];
    if (!getcwd(cwd, sizeof(cwd))) exit(2);
    SYS(chdir(R("d")));
    fd = open("rel", O_WRONLY | O_CREAT, 0644);
    SYS(fd);
    put(fd, "r");
    SYS(fsync(fd));
    close(fd);
    SYS(rename("rel", "../rel2"));
    SYS(chdir(cwd));
    EXPECT_FILE("rel2", "r");
    close(dfd);

    /* files outside ROOT are not looked at */
    char out[4400];
    snprintf(out, sizeof(out), "%s/outside", base);
    fd = open(out, O_WRONLY | O_CREAT, 0644);
    SYS(fd);
    put(fd, "o");
    SYS(fsync(fd));
    close(fd);
    SYS(rename(out, R("in")));
    EXPECT_ABSENT("in"); /* moved in, never synced here */
    EXPECT_TREE("d/ d/g e rel2");

    /* concurrent writers, each syncing its own file now and then */
    pthread_t th[4];
    writer_t w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (writer_t){i, 0};
        pthread_create(&th[i], NULL, writer_main, &w[i]);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) check_writer(&w[i]);

    /* syncfs: everything, and the shadow mirrors ROOT exactly */
    fd = create("d/late", O_WRONLY);
    put(fd, "L");
    close(fd);
    SYS(mkdir(R("x"), 0755));
    EXPECT_ABSENT("d/late");
    fd = open(root, O_RDONLY | O_DIRECTORY);
    SYS(syncfs(fd));
    close(fd);
    EXPECT_FILE("d/late", "L");
    EXPECT_FILE("in", "o");
    EXPECT_TREE("d/ d/g d/late d/t0 d/t1 d/t2 d/t3 e in rel2 x/");
}

/* fl_fs_write_atomic's sequence, stopped after `steps` of its 4 steps */
static void write_atomic(const char *rel, const char *data, int steps) {
    char tmp[256];
    snprintf(tmp, sizeof(tmp), "%s.tmp", rel);
    int fd = create(tmp, O_WRONLY | O_TRUNC);
    put(fd, data);
    if (steps >= 1) SYS(fsync(fd));
    close(fd);
    if (steps >= 2) SYS(rename(R(tmp), R(rel)));
    if (steps >= 3) {
        char dir[256];
        snprintf(dir, sizeof(dir), "%s", rel);
        char *s = strrchr(dir, '/');
        if (s) *s = '\0';
        else snprintf(dir, sizeof(dir), ".");
        fsync_dir(dir);
    }
}

static void scenario_strict(void) {
    SYS(mkdir(R("m"), 0755));
    EXPECT_DIR("m"); /* mkdir stays immediate */
    write_atomic("m/meta", "v1", 1);
    EXPECT_FILE("m/meta.tmp", "v1");
    EXPECT_ABSENT("m/meta");
    SYS(rename(R("m/meta.tmp"), R("m/meta")));
    EXPECT_FILE("m/meta.tmp", "v1"); /* the rename waits for the directory fsync */
    EXPECT_ABSENT("m/meta");
    fsync_dir("m");
    EXPECT_FILE("m/meta", "v1");
    EXPECT_ABSENT("m/meta.tmp");
    /* killed between rename and directory fsync: the old version stays */
    write_atomic("m/meta", "v2", 2);
    EXPECT_FILE("m/meta", "v1");
    EXPECT_FILE("m/meta.tmp", "v2");
    /* an fsync of another directory commits nothing of m's */
    SYS(mkdir(R("o"), 0755));
    fsync_dir("o");
    EXPECT_FILE("m/meta", "v1");

    /* a synced file renamed, not yet committed: its syncs go to the old name */
    int fd = create("m/x", O_WRONLY);
    put(fd, "x1");
    SYS(fsync(fd));
    SYS(rename(R("m/x"), R("m/y")));
    put(fd, "x2");
    SYS(fsync(fd));
    close(fd);
    EXPECT_FILE("m/x", "x1x2");
    EXPECT_ABSENT("m/y");
    fsync_dir("m"); /* commits meta.tmp -> meta and x -> y, in order */
    EXPECT_FILE("m/meta", "v2");
    EXPECT_ABSENT("m/meta.tmp");
    EXPECT_FILE("m/y", "x1x2");
    EXPECT_ABSENT("m/x");

    /* unlink and rmdir wait for the directory fsync too */
    SYS(mkdir(R("m/s"), 0755));
    SYS(unlink(R("m/y")));
    SYS(rmdir(R("m/s")));
    EXPECT_FILE("m/y", "x1x2");
    EXPECT_DIR("m/s");
    fsync_dir("m");
    EXPECT_ABSENT("m/y");
    EXPECT_ABSENT("m/s");

    /* a new file under a name a queued rename moved away: the queue is
     * committed up to that rename before the new file's data lands */
    fd = create("m/p", O_WRONLY);
    put(fd, "p1");
    SYS(fsync(fd));
    close(fd);
    SYS(rename(R("m/p"), R("m/q")));
    EXPECT_FILE("m/p", "p1");
    fd = create("m/p", O_WRONLY);
    put(fd, "p2");
    SYS(fsync(fd));
    close(fd);
    EXPECT_FILE("m/q", "p1");
    EXPECT_FILE("m/p", "p2");

    /* a renamed directory: files synced inside it land under its old name */
    SYS(mkdir(R("m/dir1"), 0755));
    fsync_dir("m");
    SYS(rename(R("m/dir1"), R("m/dir2")));
    fd = create("m/dir2/f", O_WRONLY);
    put(fd, "in");
    SYS(fsync(fd));
    close(fd);
    EXPECT_FILE("m/dir1/f", "in");
    EXPECT_ABSENT("m/dir2");
    fsync_dir("m");
    EXPECT_FILE("m/dir2/f", "in");
    EXPECT_ABSENT("m/dir1");

    /* sync() commits and mirrors everything */
    SYS(rename(R("m/q"), R("m/q2")));
    EXPECT_FILE("m/q", "p1");
    sync();
    EXPECT_FILE("m/q2", "p1");
    EXPECT_TREE("m/ m/dir2/ m/dir2/f m/meta m/p m/q2 o/");
}

static void remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char child[4400];
            snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
            remove_tree(child);
        }
        if (d) closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

int main(int argc, char **argv) {
    int strict = argc > 1 && strcmp(argv[1], "strict") == 0;
    if (argc < 2 || (!strict && strcmp(argv[1], "eager") != 0)) {
        fprintf(stderr, "usage: %s eager|strict\n", argv[0]);
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(base, sizeof(base), "%s/fl_powerloss_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 2;
    }
    snprintf(root, sizeof(root), "%s/root", base);
    snprintf(shadow, sizeof(shadow), "%s/shadow", base);
    /* the shim is inert until both variables are set */
    SYS(mkdir(root, 0755));
    SYS(mkdir(shadow, 0755));
    setenv("FL_POWERLOSS_ROOT", root, 1);
    setenv("FL_POWERLOSS_SHADOW", shadow, 1);
    setenv("FL_POWERLOSS_STRICT", strict ? "1" : "0", 1);
    if (strict) scenario_strict();
    else scenario_eager();
    unsetenv("FL_POWERLOSS_ROOT");
    if (getenv("FL_POWERLOSS_KEEP")) fprintf(stderr, "kept %s\n", base);
    else remove_tree(base);
    if (failures) {
        fprintf(stderr, "fault_powerloss_selftest %s: %d failure(s)\n", argv[1], failures);
        return 1;
    }
    printf("fault_powerloss_selftest %s: ok\n", argv[1]);
    return 0;
}
