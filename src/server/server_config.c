/*
 * server_config.c — server.yaml loading and typed getters (server_config.h).
 */
#include "server_config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "common_alloc.h"
#include "common_duration.h"

void fl_config_init(fl_config_t *cfg) { memset(cfg, 0, sizeof(*cfg)); }

void fl_config_free(fl_config_t *cfg) { fl_kvlist_free(&cfg->values); }

void fl_config_set(fl_config_t *cfg, const char *key, const char *value) {
    fl_kvlist_set(&cfg->values, key, value);
}

int fl_config_set_arg(fl_config_t *cfg, const char *kv, fl_error_t *err) {
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "expected key=value, got '%s'", kv);
    char *key = fl_strndup(kv, (size_t)(eq - kv));
    fl_config_set(cfg, key, eq + 1);
    fl_free(key);
    return 0;
}

#define FL_YAML_DEPTH_MAX 16
/* YAML aliases can make a small file expand exponentially: refuse files
 * with more keys than any real server.yaml has. */
#define FL_YAML_KEYS_MAX 4096

/* Walks a YAML mapping, joining nested keys with '.'. */
static int fl_yaml_walk(fl_config_t *cfg, yaml_document_t *doc, yaml_node_t *node,
                        const char *prefix, int depth, size_t *keys, fl_error_t *err) {
    if (depth > FL_YAML_DEPTH_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "configuration nested too deeply");
    if (node->type != YAML_MAPPING_NODE)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "configuration must be a mapping");
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        if (++*keys > FL_YAML_KEYS_MAX)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "configuration has more than %d keys (aliases expanded)",
                              FL_YAML_KEYS_MAX);
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        yaml_node_t *v = yaml_document_get_node(doc, p->value);
        if (!k || !v || k->type != YAML_SCALAR_NODE)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "configuration keys must be scalars");
        char key[512];
        snprintf(key, sizeof(key), "%s%s%s", prefix, *prefix ? "." : "",
                 (const char *)k->data.scalar.value);
        if (v->type == YAML_SCALAR_NODE) {
            fl_config_set(cfg, key, (const char *)v->data.scalar.value);
        } else if (v->type == YAML_MAPPING_NODE) {
            int rc = fl_yaml_walk(cfg, doc, v, key, depth + 1, keys, err);
            if (rc) return rc;
        } else {
            /* sequences: join scalars with ',' (e.g. listener lists) */
            char joined[2048] = "";
            size_t n = 0;
            for (yaml_node_item_t *it = v->data.sequence.items.start;
                 it < v->data.sequence.items.top; it++) {
                yaml_node_t *item = yaml_document_get_node(doc, *it);
                if (!item || item->type != YAML_SCALAR_NODE) continue;
                n += (size_t)snprintf(joined + n, sizeof(joined) - n, "%s%s", n ? "," : "",
                                      (const char *)item->data.scalar.value);
                if (n >= sizeof(joined)) break;
            }
            fl_config_set(cfg, key, joined);
        }
    }
    return 0;
}

int fl_config_load_yaml(fl_config_t *cfg, const char *path, fl_error_t *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return fl_err_set(err, FLUSS_ERR__IO, "open %s: %s", path, strerror(errno));
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, f);
    int rc = 0;
    if (!yaml_parser_load(&parser, &doc)) {
        rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "%s:%zu: %s", path,
                        parser.problem_mark.line + 1,
                        parser.problem ? parser.problem : "invalid YAML");
        yaml_parser_delete(&parser);
        fclose(f);
        return rc;
    }
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    size_t keys = 0;
    if (root) rc = fl_yaml_walk(cfg, &doc, root, "", 0, &keys, err);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    fclose(f);
    return rc;
}

const char *fl_config_string(const fl_config_t *cfg, const char *key, const char *dflt) {
    const char *v = fl_kvlist_get(&cfg->values, key);
    return v ? v : dflt;
}

/* number followed by an optional unit from the table; scales by factor */
typedef struct fl_unit {
    const char *name;
    int64_t factor;
} fl_unit_t;

static int fl_parse_scaled(const char *text, const fl_unit_t *units, size_t n_units,
                           int64_t *out) {
    const char *p = text;
    while (isspace((unsigned char)*p)) p++;
    if (!isdigit((unsigned char)*p)) return -1;
    errno = 0;
    char *end;
    long long v = strtoll(p, &end, 10);
    if (errno) return -1;
    while (isspace((unsigned char)*end)) end++;
    size_t len = strlen(end);
    while (len && isspace((unsigned char)end[len - 1])) len--;
    for (size_t i = 0; i < n_units; i++) {
        if (strlen(units[i].name) == len && strncasecmp(end, units[i].name, len) == 0) {
            if (units[i].factor && v > INT64_MAX / units[i].factor) return -1;
            *out = (int64_t)v * units[i].factor;
            return 0;
        }
    }
    return -1;
}

int fl_parse_bytes(const char *text, int64_t *out) {
    static const fl_unit_t units[] = {
        {"", 1},           {"b", 1},           {"bytes", 1},        {"k", 1024},
        {"kb", 1024},      {"kibibytes", 1024}, {"m", 1048576},      {"mb", 1048576},
        {"mebibytes", 1048576}, {"g", 1073741824}, {"gb", 1073741824},
        {"gibibytes", 1073741824}, {"t", 1099511627776LL}, {"tb", 1099511627776LL},
    };
    return fl_parse_scaled(text, units, sizeof(units) / sizeof(units[0]), out);
}

/* One duration syntax for every key (common_duration.h). */
int fl_parse_duration_ms(const char *text, int64_t *out) {
    fl_error_t err;
    return fl_duration_parse_ms(text, out, &err) == 0 ? 0 : -1;
}

int fl_parse_listener(const char *text, fl_listener_addr_t *out) {
    memset(out, 0, sizeof(*out));
    const char *end = strchr(text, ',');
    size_t len = end ? (size_t)(end - text) : strlen(text);
    char buf[512];
    if (len >= sizeof(buf)) return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    char *p = buf;
    while (isspace((unsigned char)*p)) p++;
    char *sep = strstr(p, "://");
    if (sep) {
        size_t nlen = (size_t)(sep - p);
        if (nlen == 0 || nlen >= sizeof(out->name)) return -1;
        memcpy(out->name, p, nlen);
        p = sep + 3;
    } else {
        strcpy(out->name, "FLUSS");
    }
    char *colon = strrchr(p, ':');
    if (!colon) return -1;
    *colon = '\0';
    char *host = p;
    if (*host == '[') { /* [::1]:port */
        host++;
        size_t hl = strlen(host);
        if (hl == 0 || host[hl - 1] != ']') return -1;
        host[hl - 1] = '\0';
    }
    if (strlen(host) >= sizeof(out->host) || !*host) return -1;
    strcpy(out->host, host);
    if (!isdigit((unsigned char)colon[1])) return -1;
    char *pend;
    long port = strtol(colon + 1, &pend, 10);
    while (isspace((unsigned char)*pend)) pend++;
    if (*pend || port < 0 || port > 65535) return -1;
    out->port = (int)port;
    return 0;
}

int fl_config_int(const fl_config_t *cfg, const char *key, int64_t dflt, int64_t *out,
                  fl_error_t *err) {
    const char *v = fl_kvlist_get(&cfg->values, key);
    if (!v) {
        *out = dflt;
        return 0;
    }
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (errno || end == v || *end)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "config '%s': '%s' is not an integer", key, v);
    *out = n;
    return 0;
}

int fl_config_bytes(const fl_config_t *cfg, const char *key, int64_t dflt, int64_t *out,
                    fl_error_t *err) {
    const char *v = fl_kvlist_get(&cfg->values, key);
    if (!v) {
        *out = dflt;
        return 0;
    }
    if (fl_parse_bytes(v, out) != 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "config '%s': '%s' is not a memory size",
                          key, v);
    return 0;
}

int fl_config_duration_ms(const fl_config_t *cfg, const char *key, int64_t dflt, int64_t *out,
                          fl_error_t *err) {
    const char *v = fl_kvlist_get(&cfg->values, key);
    if (!v) {
        *out = dflt;
        return 0;
    }
    if (fl_parse_duration_ms(v, out) != 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "config '%s': '%s' is not a duration", key,
                          v);
    return 0;
}

int fl_parse_double(const char *text, double *out) {
    const char *p = text;
    while (isspace((unsigned char)*p)) p++;
    /* digits first: no "inf", "nan", hex floats or a bare sign */
    if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])) &&
        !((*p == '-' || *p == '+') && (isdigit((unsigned char)p[1]) || p[1] == '.')))
        return -1;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) return -1;
    errno = 0;
    char *end;
    double v = strtod(p, &end);
    if (errno || end == p || !isfinite(v)) return -1;
    while (isspace((unsigned char)*end)) end++;
    if (*end) return -1;
    *out = v;
    return 0;
}

int fl_config_double(const fl_config_t *cfg, const char *key, double dflt, double *out,
                     fl_error_t *err) {
    const char *v = fl_kvlist_get(&cfg->values, key);
    if (!v) {
        *out = dflt;
        return 0;
    }
    if (fl_parse_double(v, out) != 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "config '%s': '%s' is not a number", key, v);
    return 0;
}

int fl_config_listener(const fl_config_t *cfg, const char *key, const char *dflt,
                       fl_listener_addr_t *out, fl_error_t *err) {
    const char *v = fl_config_string(cfg, key, dflt);
    if (fl_parse_listener(v, out) != 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "config '%s': '%s' is not a listener like FLUSS://host:port", key, v);
    return 0;
}

int fl_parse_listeners(const char *text, fl_listener_addr_t *out, size_t cap, size_t *n) {
    *n = 0;
    const char *p = text;
    for (;;) {
        if (*n == cap) return -1;
        if (fl_parse_listener(p, &out[*n]) != 0) return -1;
        for (size_t i = 0; i < *n; i++)
            if (strcmp(out[i].name, out[*n].name) == 0) return -1;
        (*n)++;
        const char *comma = strchr(p, ',');
        if (!comma) return 0;
        p = comma + 1;
    }
}

int fl_config_listeners(const fl_config_t *cfg, const char *key, const char *dflt,
                        fl_listener_addr_t *out, size_t cap, size_t *n, fl_error_t *err) {
    const char *v = fl_config_string(cfg, key, dflt);
    if (!v || fl_parse_listeners(v, out, cap, n) != 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "config '%s': '%s' is not a list of listeners like "
                          "FLUSS://host:port,INTERNAL://host:port (names distinct, at most %zu)",
                          key, v ? v : "", cap);
    return 0;
}

const fl_listener_addr_t *fl_listener_find(const fl_listener_addr_t *l, size_t n,
                                           const char *name) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i].name, name) == 0) return &l[i];
    return NULL;
}
