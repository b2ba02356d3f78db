/*
 * server_config.h — flussd configuration: a Fluss-style server.yaml (flat
 * "a.b.c: value" keys; nested maps are joined with '.') plus command-line
 * overrides (-D key=value, --data-dir). Typed getters parse Fluss's value
 * formats: integers, decimals, booleans, memory sizes ("100 mb"), durations
 * ("10 min") and listener lists ("FLUSS://127.0.0.1:9123").
 */
#ifndef FL_SERVER_CONFIG_H
#define FL_SERVER_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "common_error.h"
#include "common_strlist.h"

typedef struct fl_config {
    fl_kvlist_t values;
} fl_config_t;

typedef struct fl_listener_addr {
    char name[64];
    char host[256];
    int port;
} fl_listener_addr_t;

void fl_config_init(fl_config_t *cfg);
void fl_config_free(fl_config_t *cfg);
int fl_config_load_yaml(fl_config_t *cfg, const char *path, fl_error_t *err);
void fl_config_set(fl_config_t *cfg, const char *key, const char *value);
/* "key=value" */
int fl_config_set_arg(fl_config_t *cfg, const char *kv, fl_error_t *err);

const char *fl_config_string(const fl_config_t *cfg, const char *key, const char *dflt);
int fl_config_int(const fl_config_t *cfg, const char *key, int64_t dflt, int64_t *out,
                  fl_error_t *err);
int fl_config_bytes(const fl_config_t *cfg, const char *key, int64_t dflt, int64_t *out,
                    fl_error_t *err);
int fl_config_duration_ms(const fl_config_t *cfg, const char *key, int64_t dflt, int64_t *out,
                          fl_error_t *err);
/* A finite decimal number ("0.85", "1", "8.5e-1"). */
int fl_config_double(const fl_config_t *cfg, const char *key, double dflt, double *out,
                     fl_error_t *err);
/* First listener of a listener list. */
int fl_config_listener(const fl_config_t *cfg, const char *key, const char *dflt,
                       fl_listener_addr_t *out, fl_error_t *err);

/* Every listener of a listener list ("A://h:1, B://h:2"): at most cap,
 * names distinct. */
#define FL_LISTENERS_MAX 8
int fl_config_listeners(const fl_config_t *cfg, const char *key, const char *dflt,
                        fl_listener_addr_t *out, size_t cap, size_t *n, fl_error_t *err);
/* The listener of that name, or NULL. */
const fl_listener_addr_t *fl_listener_find(const fl_listener_addr_t *l, size_t n,
                                           const char *name);

/* Value parsers, exposed for tests. */
int fl_parse_listeners(const char *text, fl_listener_addr_t *out, size_t cap, size_t *n);
int fl_parse_bytes(const char *text, int64_t *out);
int fl_parse_duration_ms(const char *text, int64_t *out);
int fl_parse_listener(const char *text, fl_listener_addr_t *out);
int fl_parse_double(const char *text, double *out);

#endif
