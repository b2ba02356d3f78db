/*
 * test_tmpdir.h — cmocka setup/teardown giving each test a fresh directory
 * under /tmp (*state is its path), removed with everything in it after.
 */
#ifndef TEST_TMPDIR_H
#define TEST_TMPDIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_tmpdir_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int setup(void **state) {
    char *dir = strdup("/tmp/fluss_test_XXXXXX");
    if (!mkdtemp(dir)) return -1;
    *state = dir;
    return 0;
}

static int teardown(void **state) {
    nftw(*state, test_tmpdir_rm, 8, FTW_DEPTH | FTW_PHYS);
    free(*state);
    return 0;
}

#endif
