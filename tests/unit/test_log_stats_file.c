/*
 * test_log_stats_file.c — the statistics sidecar of a segment
 * (log_stats_file.h): records found by base offset and CRC, kept across a
 * reopen, a rewrite of an offset wins, a stale CRC is no answer, a torn or
 * corrupt tail is dropped and overwritten by the next append. (The
 * statistics the server computes into it are checked end to end with the
 * Java client in test_filter_pushdown.py.)
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <fcntl.h>
#include <unistd.h>

#include "log_stats_file.h"
#include "record_batch.h"
#include "test_tmpdir.h"

static bool get(fl_stats_file_t *f, int64_t base, uint32_t crc, const char *want) {
    fl_buf_t b;
    fl_buf_init(&b);
    bool ok = fl_stats_file_get(f, base, crc, &b);
    if (ok && want) ok = b.len == strlen(want) && memcmp(b.data, want, b.len) == 0;
    fl_buf_free(&b);
    return ok;
}

static void test_sidecar_records(void **state) {
    char path[512];
    snprintf(path, sizeof(path), "%s/00000000000000000000.stats", (char *)*state);
    assert_null(fl_stats_file_open(path, false));
    fl_stats_file_t *f = fl_stats_file_open(path, true);
    assert_non_null(f);
    fl_error_t err;
    for (int i = 0; i < 200; i++) {
        char s[32];
        snprintf(s, sizeof(s), "stats-%d", i);
        assert_int_equal(fl_stats_file_put(f, i * 10, (uint32_t)i, (const uint8_t *)s, strlen(s), &err), 0);
    }
    assert_true(get(f, 70, 7, "stats-7"));
    assert_false(get(f, 70, 8, NULL)); /* another batch at that offset */
    assert_false(get(f, 71, 7, NULL));
    /* a rewrite of offset 70 (after a truncation) wins */
    assert_int_equal(fl_stats_file_put(f, 70, 99, (const uint8_t *)"new", 3, &err), 0);
    assert_true(get(f, 70, 99, "new"));
    fl_stats_file_close(f);

    f = fl_stats_file_open(path, false);
    assert_non_null(f);
    assert_true(get(f, 1990, 199, "stats-199"));
    assert_true(get(f, 70, 99, "new"));
    fl_stats_file_close(f);

    /* a torn tail and a flipped byte in the last record: dropped */
    int fd = open(path, O_RDWR);
    off_t end = lseek(fd, 0, SEEK_END);
    assert_int_equal(ftruncate(fd, end - 3), 0);
    uint8_t x = 0xff;
    assert_int_equal(pwrite(fd, &x, 1, 40), 1); /* inside the second record */
    close(fd);
    f = fl_stats_file_open(path, false);
    assert_non_null(f);
    assert_true(get(f, 0, 0, "stats-0"));
    assert_false(get(f, 10, 1, NULL));
    assert_false(get(f, 70, 99, NULL));
    /* appends go after the valid prefix and are found after a reopen */
    assert_int_equal(fl_stats_file_put(f, 5000, 5, (const uint8_t *)"after", 5, &err), 0);
    fl_stats_file_close(f);
    f = fl_stats_file_open(path, false);
    assert_true(get(f, 5000, 5, "after"));
    assert_true(get(f, 0, 0, "stats-0"));
    fl_stats_file_close(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sidecar_records, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
