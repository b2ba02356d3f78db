/*
 * test_server_config.c — flussd configuration (server_config.h): Fluss's
 * memory-size, duration and listener formats, server.yaml loading with
 * nested keys and lists, and -D key=value overrides.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "server_config.h"

static void expect_bytes(const char *text, int64_t want) {
    int64_t v = -7;
    if (fl_parse_bytes(text, &v) != 0) fail_msg("'%s' rejected", text);
    if (v != want) fail_msg("'%s' = %lld, want %lld", text, (long long)v, (long long)want);
}

static void expect_bytes_bad(const char *text) {
    int64_t v = -7;
    if (fl_parse_bytes(text, &v) == 0) fail_msg("'%s' accepted as %lld", text, (long long)v);
    assert_int_equal(v, -7);
}

static void test_parse_bytes(void **state) {
    (void)state;
    expect_bytes("100 mb", 100LL << 20);
    expect_bytes("100mb", 100LL << 20);
    expect_bytes("100 MB", 100LL << 20);
    expect_bytes("1 gb", 1LL << 30);
    expect_bytes("512", 512);
    expect_bytes("512 b", 512);
    expect_bytes("1k", 1024);
    expect_bytes("64 kb", 64 << 10);
    expect_bytes("2 t", 2LL << 40);
    expect_bytes("  3m  ", 3LL << 20);
    expect_bytes("0", 0);
    expect_bytes_bad("");
    expect_bytes_bad("mb");
    expect_bytes_bad("-1");
    expect_bytes_bad("1.5 gb");
    expect_bytes_bad("10 parsecs");
    expect_bytes_bad("10 mb x");
    expect_bytes_bad("99999999999999999999");
    expect_bytes_bad("9999999999 tb"); /* overflows int64 */
}

static void expect_ms(const char *text, int64_t want) {
    int64_t v = -7;
    if (fl_parse_duration_ms(text, &v) != 0) fail_msg("'%s' rejected", text);
    if (v != want) fail_msg("'%s' = %lld, want %lld", text, (long long)v, (long long)want);
}

static void test_parse_duration(void **state) {
    (void)state;
    expect_ms("10 min", 600000);
    expect_ms("30 s", 30000);
    expect_ms("500 ms", 500);
    expect_ms("1 h", 3600000);
    expect_ms("7 d", 7LL * 86400000);
    expect_ms("7d", 7LL * 86400000);
    expect_ms("2 hours", 7200000);
    expect_ms("1 second", 1000);
    expect_ms("250", 250);
    const char *bad[] = {"", "s", "ten s", "-1 s", "1.5 h", "10 fortnights", "1min30s"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t v = -7;
        if (fl_parse_duration_ms(bad[i], &v) == 0) fail_msg("'%s' accepted", bad[i]);
        assert_int_equal(v, -7);
    }
}

static void expect_listener(const char *text, const char *name, const char *host, int port) {
    fl_listener_addr_t a;
    if (fl_parse_listener(text, &a) != 0) fail_msg("'%s' rejected", text);
    assert_string_equal(a.name, name);
    assert_string_equal(a.host, host);
    assert_int_equal(a.port, port);
}

static void test_parse_double(void **state) {
    (void)state;
    const struct {
        const char *text;
        double want;
    } good[] = {{"0.85", 0.85}, {"1", 1.0}, {"1.0", 1.0}, {" 0.8 ", 0.8}, {".5", 0.5},
                {"8.5e-1", 0.85}, {"-0.25", -0.25}};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        double v = -7;
        if (fl_parse_double(good[i].text, &v) != 0) fail_msg("'%s' rejected", good[i].text);
        if (v != good[i].want) fail_msg("'%s' = %g, want %g", good[i].text, v, good[i].want);
    }
    const char *bad[] = {"", "x", "0.85x", "nan", "inf", "-inf", "1e999", "0x1p-1", "85%", "-",
                         "0.8 0.9"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        double v = -7;
        if (fl_parse_double(bad[i], &v) == 0) fail_msg("'%s' accepted as %g", bad[i], v);
        assert_true(v == -7);
    }
    fl_config_t cfg;
    fl_config_init(&cfg);
    fl_error_t err;
    double v;
    assert_int_equal(fl_config_double(&cfg, "server.data-disk.write-limit-ratio", 0.85, &v, &err), 0);
    assert_true(v == 0.85);
    fl_config_set(&cfg, "server.data-disk.write-limit-ratio", "0.9");
    assert_int_equal(fl_config_double(&cfg, "server.data-disk.write-limit-ratio", 0.85, &v, &err), 0);
    assert_true(v == 0.9);
    fl_config_set(&cfg, "server.data-disk.write-limit-ratio", "ninety");
    assert_int_not_equal(fl_config_double(&cfg, "server.data-disk.write-limit-ratio", 0.85, &v, &err),
                         0);
    assert_non_null(strstr(err.msg, "is not a number"));
    fl_config_free(&cfg);
}

static void test_parse_listener(void **state) {
    (void)state;
    expect_listener("FLUSS://127.0.0.1:9123", "FLUSS", "127.0.0.1", 9123);
    expect_listener("CLIENT://[::1]:9123", "CLIENT", "::1", 9123);
    expect_listener("host:1", "FLUSS", "host", 1);
    expect_listener("INTERNAL://localhost:0", "INTERNAL", "localhost", 0);
    expect_listener("FLUSS://h:65535", "FLUSS", "h", 65535);
    /* a list: the first listener */
    expect_listener("CLIENT://a:1,INTERNAL://b:2", "CLIENT", "a", 1);
    const char *bad[] = {"",
                         "FLUSS://127.0.0.1",
                         "127.0.0.1",
                         "FLUSS://:9123",
                         "FLUSS://h:65536",
                         "FLUSS://h:-1",
                         "FLUSS://h:12ab",
                         "FLUSS://h:port",
                         "AVERYLONGLISTENERNAMEAVERYLONGLISTENERNAMEAVERYLONGLISTENERNAMEXX://h:1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        fl_listener_addr_t a;
        if (fl_parse_listener(bad[i], &a) == 0) fail_msg("'%s' accepted", bad[i]);
    }
}

static void test_parse_listeners(void **state) {
    (void)state;
    fl_listener_addr_t l[FL_LISTENERS_MAX];
    size_t n = 0;
    assert_int_equal(fl_parse_listeners("FLUSS://127.0.0.1:9124, INTERNAL://127.0.0.1:9224", l,
                                        FL_LISTENERS_MAX, &n),
                     0);
    assert_int_equal(n, 2);
    assert_string_equal(l[1].name, "INTERNAL");
    assert_int_equal(l[1].port, 9224);
    assert_ptr_equal(fl_listener_find(l, n, "INTERNAL"), &l[1]);
    assert_null(fl_listener_find(l, n, "CLIENT"));
    assert_int_equal(fl_parse_listeners("h:1", l, FL_LISTENERS_MAX, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(l[0].name, "FLUSS");
    const char *bad[] = {"", "A://h:1,", "A://h:1,A://h:2", "A://h:1,,B://h:2", "A://h:1,B://h",
                         "A://h:1,B://h:2,C://h:3"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (fl_parse_listeners(bad[i], l, 2, &n) == 0) fail_msg("'%s' accepted", bad[i]);
}

static char *temp_yaml(const char *content) {
    char *path = strdup("/tmp/fl_config_XXXXXX.yaml");
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
    close(fd);
    return path;
}

static void test_yaml_loading(void **state) {
    (void)state;
    char *path = temp_yaml("# flussd\n"
                           "data.dir: /var/lib/fluss\n"
                           "default.bucket.number: 3\n"
                           "log:\n"
                           "  segment:\n"
                           "    file-size: 1 gb\n"
                           "  retention: 7 d\n"
                           "bind.listeners:\n"
                           "  - CLIENT://127.0.0.1:9123\n"
                           "  - INTERNAL://127.0.0.1:9124\n"
                           "quoted: \"a: b\"\n");
    fl_config_t cfg;
    fl_config_init(&cfg);
    fl_error_t err;
    assert_int_equal(fl_config_load_yaml(&cfg, path, &err), 0);
    assert_string_equal(fl_config_string(&cfg, "data.dir", NULL), "/var/lib/fluss");
    assert_string_equal(fl_config_string(&cfg, "log.segment.file-size", NULL), "1 gb");
    assert_string_equal(fl_config_string(&cfg, "quoted", NULL), "a: b");
    assert_null(fl_config_string(&cfg, "log", NULL));
    assert_string_equal(fl_config_string(&cfg, "nope", "dflt"), "dflt");

    int64_t v = 0;
    assert_int_equal(fl_config_int(&cfg, "default.bucket.number", 1, &v, &err), 0);
    assert_int_equal(v, 3);
    assert_int_equal(fl_config_int(&cfg, "missing", 42, &v, &err), 0);
    assert_int_equal(v, 42);
    assert_int_equal(fl_config_bytes(&cfg, "log.segment.file-size", 0, &v, &err), 0);
    assert_int_equal(v, 1LL << 30);
    assert_int_equal(fl_config_duration_ms(&cfg, "log.retention", 0, &v, &err), 0);
    assert_int_equal(v, 7LL * 86400000);
    assert_int_equal(fl_config_int(&cfg, "data.dir", 0, &v, &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fl_config_bytes(&cfg, "data.dir", 0, &v, &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fl_config_duration_ms(&cfg, "data.dir", 0, &v, &err),
                     FLUSS_ERR__INVALID_ARG);

    fl_listener_addr_t a;
    assert_int_equal(fl_config_listener(&cfg, "bind.listeners", NULL, &a, &err), 0);
    assert_string_equal(a.name, "CLIENT");
    assert_string_equal(a.host, "127.0.0.1");
    assert_int_equal(a.port, 9123);
    assert_int_equal(fl_config_listener(&cfg, "none", "FLUSS://0.0.0.0:7", &a, &err), 0);
    assert_int_equal(a.port, 7);
    assert_int_equal(fl_config_listener(&cfg, "data.dir", NULL, &a, &err), FLUSS_ERR__INVALID_ARG);

    /* -D overrides replace loaded values */
    assert_int_equal(fl_config_set_arg(&cfg, "default.bucket.number=8", &err), 0);
    assert_int_equal(fl_config_int(&cfg, "default.bucket.number", 1, &v, &err), 0);
    assert_int_equal(v, 8);
    assert_int_equal(fl_config_set_arg(&cfg, "k=a=b", &err), 0);
    assert_string_equal(fl_config_string(&cfg, "k", NULL), "a=b");
    assert_int_equal(fl_config_set_arg(&cfg, "empty=", &err), 0);
    assert_string_equal(fl_config_string(&cfg, "empty", NULL), "");
    assert_int_equal(fl_config_set_arg(&cfg, "novalue", &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fl_config_set_arg(&cfg, "=v", &err), FLUSS_ERR__INVALID_ARG);
    assert_true(strlen(err.msg) > 0);
    fl_config_free(&cfg);
    unlink(path);
    free(path);
}

static void test_yaml_errors(void **state) {
    (void)state;
    fl_config_t cfg;
    fl_error_t err;
    fl_config_init(&cfg);
    assert_int_equal(fl_config_load_yaml(&cfg, "/nonexistent/server.yaml", &err), FLUSS_ERR__IO);
    char *path = temp_yaml("a: [1, 2\nb: c\n");
    assert_int_equal(fl_config_load_yaml(&cfg, path, &err), FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(err.msg, path));
    unlink(path);
    free(path);
    path = temp_yaml("- a\n- b\n");
    assert_int_equal(fl_config_load_yaml(&cfg, path, &err), FLUSS_ERR__INVALID_ARG);
    unlink(path);
    free(path);
    /* an empty file is an empty configuration */
    path = temp_yaml("");
    assert_int_equal(fl_config_load_yaml(&cfg, path, &err), 0);
    assert_int_equal(cfg.values.count, 0);
    unlink(path);
    free(path);
    fl_config_free(&cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_bytes),
        cmocka_unit_test(test_parse_duration),
        cmocka_unit_test(test_parse_double),
        cmocka_unit_test(test_parse_listener),
        cmocka_unit_test(test_parse_listeners),
        cmocka_unit_test(test_yaml_loading),
        cmocka_unit_test(test_yaml_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
