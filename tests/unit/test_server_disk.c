/*
 * test_server_disk.c — the data-disk write protection (server_disk.h):
 * main's configuration rule, the hysteresis between the limit and recover
 * ratios, 1.0 turning it off, the refusal (STORAGE_EXCEPTION with main's
 * words), and sampling a small file system (emulated through the
 * file-system seam, common_vfs_fault.h) as it fills and empties — a data
 * dir that does not exist yet is sampled through its parent.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_tmpdir.h"

#include "common_log.h"
#include "common_vfs.h"
#include "common_vfs_fault.h"
#include "server_disk.h"

static void test_config_rule(void **state) {
    (void)state;
    fl_error_t err;
    assert_int_equal(fl_disk_guard_check_config(0.85, 0.80, &err), 0);
    assert_int_equal(fl_disk_guard_check_config(1.0, 0.99, &err), 0);
    double bad[][2] = {{0.80, 0.80}, {0.80, 0.85}, {1.01, 0.5}, {0.9, 0.0}, {0.9, -0.1}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_not_equal(fl_disk_guard_check_config(bad[i][0], bad[i][1], &err), 0);
        assert_non_null(strstr(err.msg, "server.data-disk.write-recover-ratio"));
    }
}

static void test_hysteresis(void **state) {
    (void)state;
    fl_disk_guard_t g;
    fl_disk_guard_init(&g, 3, "/nowhere", 0.85, 0.80);
    fl_error_t err;
    assert_int_equal(fl_disk_guard_refuse(&g, &err), 0);
    fl_disk_guard_update(&g, 0.849);
    assert_false(fl_disk_guard_locked(&g));
    fl_disk_guard_update(&g, 0.85); /* reaching the limit locks */
    assert_true(fl_disk_guard_locked(&g));
    assert_int_equal(fl_disk_guard_refuse(&g, &err), FLUSS_ERR_STORAGE_EXCEPTION);
    assert_string_equal(err.msg, "TabletServer 3 has rejected writes because the data disk usage "
                                 "reached 85.00% (limit: 85.00%). Free up space or scale the "
                                 "cluster.");
    fl_disk_guard_update(&g, 0.83); /* between the ratios: stays locked */
    assert_true(fl_disk_guard_locked(&g));
    fl_disk_guard_update(&g, 0.80); /* at the recover ratio: unlocked */
    assert_false(fl_disk_guard_locked(&g));
    fl_disk_guard_update(&g, 0.83); /* and between them again: stays unlocked */
    assert_false(fl_disk_guard_locked(&g));
    fl_disk_guard_t off;
    fl_disk_guard_init(&off, 3, "/nowhere", 1.0, 0.80);
    fl_disk_guard_update(&off, 1.0);
    assert_false(fl_disk_guard_locked(&off));
}

static void fill(const char *dir, const char *name, size_t bytes) {
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = fl_vfs_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    static char block[4096];
    memset(block, 'f', sizeof(block));
    for (size_t off = 0; off < bytes; off += sizeof(block))
        assert_int_equal(fl_vfs_pwrite_full(fd, block, sizeof(block), (off_t)off), 0);
    assert_int_equal(fl_vfs_fsync(fd), 0);
    fl_vfs_close(fd);
}

static void test_sample_small_disk(void **state) {
    const char *dir = *state;
    char spec[4300], data[4200], path[4300];
    snprintf(spec, sizeof(spec), "disk=1048576,path=%s", dir); /* 1 MiB */
    fl_vfs_fault_config_t cfg;
    fl_error_t err;
    assert_int_equal(fl_vfs_fault_parse(spec, &cfg, &err), 0);
    fl_vfs_fault_t *vf = fl_vfs_fault_new(&cfg);
    fl_vfs_install(fl_vfs_fault_ops(), vf);
    snprintf(data, sizeof(data), "%s/data/tablet-server-0", dir); /* not there yet */
    fl_disk_guard_t g;
    fl_disk_guard_init(&g, 0, data, 0.5, 0.25);
    double u = fl_disk_guard_sample(&g);
    assert_true(u >= 0 && u < 0.05);
    assert_false(fl_disk_guard_locked(&g));
    fill(dir, "a", 600 * 1024);
    u = fl_disk_guard_sample(&g);
    assert_true(u > 0.55 && u < 0.65);
    assert_true(fl_disk_guard_locked(&g));
    fill(dir, "a", 400 * 1024); /* 39 %: between the ratios */
    fl_disk_guard_sample(&g);
    assert_true(fl_disk_guard_locked(&g));
    snprintf(path, sizeof(path), "%s/a", dir);
    assert_int_equal(fl_vfs_unlink(path), 0);
    u = fl_disk_guard_sample(&g);
    assert_true(u < 0.05);
    assert_false(fl_disk_guard_locked(&g));
    fl_vfs_install(NULL, NULL);
    fl_vfs_fault_free(vf);
}

int main(void) {
    fl_log_set_level(FL_LOG_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_rule),
        cmocka_unit_test(test_hysteresis),
        cmocka_unit_test_setup_teardown(test_sample_small_disk, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
