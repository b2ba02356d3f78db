/*
 * test_arrow_util.h — helpers shared by the test_arrow_*.c unit tests: the
 * pyarrow fixtures of tests/unit/data/arrow (make_fixtures.py), the Fluss
 * types of their all-types schema, and a check of a message we wrote by
 * pyarrow itself (check_projection.py). Header-only: each test is its own
 * executable. Include after <cmocka.h>.
 */
#ifndef TEST_ARROW_UTIL_H
#define TEST_ARROW_UTIL_H

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arrow_ipc.h"
#include "common_buf.h"
#include "types_datatype.h"

extern char **environ;

#define ARROW_DATA_DIR FLUSS_SOURCE_DIR "/tests/unit/data/arrow"
#define ARROW_PYTHON FLUSS_SOURCE_DIR "/.venv/bin/python"

/* make_fixtures.SCHEMA: JSON field list and Fluss SQL types, same order. */
#define ARROW_ALL_TYPES_COUNT 21
static const char *const arrow_all_types_sql[ARROW_ALL_TYPES_COUNT] = {
    "TINYINT",      "SMALLINT",      "INT",           "BIGINT",
    "BOOLEAN",      "FLOAT",         "DOUBLE",        "STRING",
    "BYTES",        "BINARY(4)",     "DECIMAL(10, 2)", "DATE",
    "TIME(3)",      "TIME(6)",       "TIMESTAMP(0)",  "TIMESTAMP(3)",
    "TIMESTAMP_LTZ(6)", "TIMESTAMP(9)", "ARRAY<STRING>", "MAP<STRING NOT NULL, INT>",
    "ROW<a INT, b STRING>",
};
static const char *const arrow_all_types_json[ARROW_ALL_TYPES_COUNT] = {
    "[\"i8\",\"int8\"]",        "[\"i16\",\"int16\"]",
    "[\"i32\",\"int32\"]",      "[\"i64\",\"int64\"]",
    "[\"b\",\"bool\"]",         "[\"f32\",\"float32\"]",
    "[\"f64\",\"float64\"]",    "[\"s\",\"utf8\"]",
    "[\"bin\",\"binary\"]",     "[\"fbin\",\"fixed_size_binary[4]\"]",
    "[\"dec\",\"decimal128(10,2)\"]", "[\"d\",\"date32\"]",
    "[\"t32\",\"time32[ms]\"]", "[\"t64\",\"time64[us]\"]",
    "[\"ts_s\",\"timestamp[s]\"]", "[\"ts_ms\",\"timestamp[ms]\"]",
    "[\"ts_us\",\"timestamp[us]\"]", "[\"ts_ns\",\"timestamp[ns]\"]",
    "[\"l\",\"list<utf8>\"]",   "[\"m\",\"map<utf8,int32>\"]",
    "[\"st\",\"struct<a:int32,b:utf8>\"]",
};
/* flattened totals of the all-types schema */
#define ARROW_ALL_TYPES_NODES 27
#define ARROW_ALL_TYPES_BUFFERS 57

/* make_fixtures.PROJECTIONS */
#define ARROW_PROJECTION_COUNT 8
static const int32_t arrow_projections[ARROW_PROJECTION_COUNT][ARROW_ALL_TYPES_COUNT + 1] = {
    /* first element: count */
    {1, 0},
    {1, 7},
    {3, 1, 4, 8},
    {3, 18, 19, 20},
    {6, 2, 9, 10, 11, 12, 13},
    {8, 3, 5, 6, 14, 15, 16, 17, 19},
    {1, 20},
    {21, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20},
};

static const char *const arrow_codec_names[3] = {"none", "lz4", "zstd"};

static inline void arrow_read_file(const char *path, fl_buf_t *out) {
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    uint8_t chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) fl_buf_append(out, chunk, n);
    fclose(f);
}

static inline void arrow_fixture(const char *name, fl_buf_t *out) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", ARROW_DATA_DIR, name);
    fl_buf_reset(out);
    arrow_read_file(path, out);
}

/* The all-types schema's Fluss types; free with arrow_types_free. */
static inline void arrow_all_types(fl_datatype_t *types[ARROW_ALL_TYPES_COUNT]) {
    for (size_t i = 0; i < ARROW_ALL_TYPES_COUNT; i++) {
        const char *text = arrow_all_types_sql[i];
        fl_error_t err;
        if (fl_datatype_parse(&text, &types[i], &err))
            fail_msg("cannot parse %s: %s", arrow_all_types_sql[i], err.msg);
    }
}

static inline void arrow_types_free(fl_datatype_t **types, size_t n) {
    for (size_t i = 0; i < n; i++) fl_datatype_destroy(types[i]);
}

/* JSON "fields" array of the all-types columns cols[0, n). */
static inline void arrow_fields_json(const int32_t *cols, size_t n, fl_buf_t *out) {
    fl_buf_append(out, "[", 1);
    for (size_t i = 0; i < n; i++) {
        if (i) fl_buf_append(out, ",", 1);
        const char *f = arrow_all_types_json[cols[i]];
        fl_buf_append(out, f, strlen(f));
    }
    fl_buf_append(out, "]", 1);
}

/* Runs check_projection.py SPEC FILE on msg. Returns 0 when pyarrow reads it
 * and it matches, 1 when not. A missing .venv/bin/python fails the test: the
 * cross-check is part of the test, never skipped (make test-unit makes the
 * virtualenv first). */
/* $FLUSS_TEST_PYTHON overrides the interpreter (a worktree without its
 * own virtualenv). */
static inline const char *arrow_python(void) {
    const char *p = getenv("FLUSS_TEST_PYTHON");
    return p && *p ? p : ARROW_PYTHON;
}

static inline int arrow_python_check(const char *spec, const uint8_t *msg, size_t len) {
    const char *python = arrow_python();
    if (access(python, X_OK) != 0)
        fail_msg("pyarrow check: %s missing (run make venv)", python);
    char path[] = "/tmp/fluss_arrow_test_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) fail_msg("mkstemp failed");
    if (write(fd, msg, len) != (ssize_t)len) fail_msg("write failed");
    close(fd);
    char *argv[] = {(char *)python, (char *)ARROW_DATA_DIR "/check_projection.py",
                    (char *)spec, path, NULL};
    pid_t pid;
    if (posix_spawn(&pid, python, NULL, NULL, argv, environ) != 0)
        fail_msg("cannot spawn %s", python);
    int status = 0;
    waitpid(pid, &status, 0);
    unlink(path);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "check_projection.py %s failed (status %d)\n", spec, status);
        return 1;
    }
    return 0;
}

#endif
