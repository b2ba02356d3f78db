/*
 * fuzz_server_config.c — fuzzes flussd's configuration readers
 * (server_config.h): the server.yaml loader (libyaml document, nested maps
 * joined with '.', sequences joined with ','), the value parsers for memory
 * sizes, durations and listener lists, and "key=value" overrides.
 *
 * The input is written to one temp file per process (under /dev/shm, else
 * /tmp; removed at exit) and loaded; then every loaded value, and the input
 * itself as a C string, go through the value parsers.
 *
 * Invariants checked: parsed listeners have a NUL-terminated name and host
 * and a port in 0..65535; sizes and durations are not negative; a parsed
 * kv.rocksdb.compression.per.level list has 1..FL_KV_LEVELS_MAX known
 * RocksDB compression types.
 */
#define _GNU_SOURCE /* mkstemp */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rocksdb/c.h>

#include "common_error.h"
#include "kv_store.h"
#include "server_config.h"
#include "fuzz_common.h"

#define FUZZ_PATH_MAX 256

static struct {
    int fd;
    char path[FUZZ_PATH_MAX];
} fuzz = {-1, ""};

static void fuzz_teardown(void) {
    if (fuzz.fd < 0) return;
    close(fuzz.fd);
    unlink(fuzz.path);
    fuzz.fd = -1;
}

static void fuzz_setup(void) {
    struct stat st;
    const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
                               access("/dev/shm", W_OK) == 0
                           ? "/dev/shm"
                           : "/tmp";
    snprintf(fuzz.path, sizeof(fuzz.path), "%s/fluss-fuzz-config-XXXXXX", base);
    fuzz.fd = mkstemp(fuzz.path);
    FUZZ_CHECK(fuzz.fd >= 0);
    atexit(fuzz_teardown);
}

static void fuzz_values(const char *text) {
    int64_t v;
    if (fl_parse_bytes(text, &v) == 0) FUZZ_CHECK(v >= 0);
    if (fl_parse_duration_ms(text, &v) == 0) FUZZ_CHECK(v >= 0);
    int levels[FL_KV_LEVELS_MAX], n = -1;
    fl_error_t err;
    if (fl_kv_compression_parse(text, levels, &n, &err) == 0) {
        FUZZ_CHECK(n >= 1 && n <= FL_KV_LEVELS_MAX);
        for (int i = 0; i < n; i++)
            FUZZ_CHECK(levels[i] == rocksdb_no_compression ||
                       levels[i] == rocksdb_snappy_compression ||
                       levels[i] == rocksdb_lz4_compression ||
                       levels[i] == rocksdb_zstd_compression);
    }
    fl_listener_addr_t a;
    if (fl_parse_listener(text, &a) == 0) {
        FUZZ_CHECK(memchr(a.name, '\0', sizeof(a.name)) != NULL);
        FUZZ_CHECK(memchr(a.host, '\0', sizeof(a.host)) != NULL && a.host[0] != '\0');
        FUZZ_CHECK(a.port >= 0 && a.port <= 65535);
    }
    /* listener lists: also what a tablet server registers in ZooKeeper,
     * read back by the coordinator and by the other tablet servers */
    fl_listener_addr_t l[FL_LISTENERS_MAX];
    size_t ln = 0;
    if (fl_parse_listeners(text, l, FL_LISTENERS_MAX, &ln) == 0) {
        FUZZ_CHECK(ln >= 1 && ln <= FL_LISTENERS_MAX);
        for (size_t i = 0; i < ln; i++) {
            FUZZ_CHECK(l[i].host[0] != '\0' && l[i].port >= 0 && l[i].port <= 65535);
            for (size_t k = 0; k < i; k++) FUZZ_CHECK(strcmp(l[i].name, l[k].name) != 0);
            FUZZ_CHECK(fl_listener_find(l, ln, l[i].name) == &l[i]);
        }
    }
}

/* The typed getters flussd calls, on whatever the file set. */
static void fuzz_getters(const fl_config_t *cfg) {
    fl_error_t err;
    int64_t v;
    fl_listener_addr_t a;
    fl_err_clear(&err);
    (void)fl_config_int(cfg, "default.bucket.number", 1, &v, &err);
    (void)fl_config_int(cfg, "tablet-server.id", 0, &v, &err);
    (void)fl_config_bytes(cfg, "netty.server.max-request-size", 100LL << 20, &v, &err);
    (void)fl_config_duration_ms(cfg, "netty.connection.max-idle-time", 600000, &v, &err);
    (void)fl_config_listener(cfg, "bind.listeners", "FLUSS://127.0.0.1:9123", &a, &err);
    (void)fl_config_listener(cfg, "tablet-server.bind.listeners", "FLUSS://127.0.0.1:9124", &a,
                             &err);
    fl_listener_addr_t l[FL_LISTENERS_MAX];
    size_t n;
    (void)fl_config_listeners(cfg, "bind.listeners", "FLUSS://127.0.0.1:9123", l,
                              FL_LISTENERS_MAX, &n, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (fuzz.fd < 0) fuzz_setup();
    FUZZ_CHECK(ftruncate(fuzz.fd, 0) == 0);
    FUZZ_CHECK(pwrite(fuzz.fd, data, size, 0) == (ssize_t)size);

    fl_config_t cfg;
    fl_config_init(&cfg);
    fl_error_t err;
    fl_err_clear(&err);
    if (fl_config_load_yaml(&cfg, fuzz.path, &err) == 0) {
        for (size_t i = 0; i < cfg.values.count; i++) fuzz_values(cfg.values.items[i].value);
        fuzz_getters(&cfg);
    }
    fl_config_free(&cfg);

    char *text = malloc(size + 1);
    FUZZ_CHECK(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    fuzz_values(text);
    fl_config_init(&cfg);
    fl_err_clear(&err);
    if (fl_config_set_arg(&cfg, text, &err) == 0) fuzz_getters(&cfg);
    fl_config_free(&cfg);
    free(text);
    return 0;
}
