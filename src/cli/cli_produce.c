/*
 * cli_produce.c — `fluss produce DB.TABLE`: rows from stdin (CSV or JSON
 * lines) appended to a log table through libfluss's append writer, with
 * progress on stderr. The reading of rows is shared with `fluss upsert`
 * and `fluss delete` (cli_kv.c) through a sink (fl_cli_sink_t). Exit codes: 0 ok, 1 bad input or a server /
 * connection failure, 2 bad usage. Single-threaded.
 *
 * The writer has no thread of its own, so rows read from a slow pipe
 * (`tail -f log | fluss produce`) would wait in an open batch while the
 * CLI blocks on input: stdin is read through a cookie stream whose read
 * first flushes the writer whenever no input is ready.
 */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_data.h"

static void usage_produce(FILE *f) {
    fprintf(f,
            "usage: fluss produce DB.TABLE [--format csv|json] [--header] [--batch-bytes N]\n"
            "                     [--linger-ms N] [--partition K=V[,K2=V2]]\n"
            "\n"
            "Appends rows read from stdin to a log table. Rows of a partitioned table go to\n"
            "the partition their partition-key values name (created when missing).\n"
            "  --format csv    (default) comma-separated values in column order; an empty\n"
            "                  unquoted field is NULL, \"\" an empty string; quotes as in RFC 4180\n"
            "  --header        the first CSV line names the columns (any order, a subset)\n"
            "  --format json   one JSON object per line, keys are column names\n"
            "  --batch-bytes N batch size per bucket (default 1 MiB)\n"
            "  --linger-ms N   how long a batch may wait to fill (default 100)\n"
            "  --partition K=V every row goes to this partition (all partition keys named):\n"
            "                  the rows may leave its columns out; a row naming another\n"
            "                  partition is an error\n"
            "Values: true/false, numbers, DECIMAL as text, BYTES as hex, DATE YYYY-MM-DD,\n"
            "TIME HH:MM:SS[.fff], TIMESTAMP YYYY-MM-DD HH:MM:SS[.fff] or epoch ms.\n"
            "Progress (rows, MB/s) goes to stderr every second.\n");
}

static double fl_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int fl_cli_split_path(const char *path, char *db, size_t cap, const char **table) {
    const char *dot = strchr(path, '.');
    if (!dot) {
        snprintf(db, cap, "fluss");
        *table = path;
        return 0;
    }
    if ((size_t)(dot - path) >= cap) return -1;
    memcpy(db, path, (size_t)(dot - path));
    db[dot - path] = '\0';
    *table = dot + 1;
    return 0;
}

int fl_cli_connect(const char *bootstrap, fluss_client_t **client) {
    const char *b = bootstrap ? bootstrap : getenv("FLUSS_BOOTSTRAP");
    if (!b || !*b) b = "127.0.0.1:9123";
    fluss_error_t err;
    /* SASL/PLAIN when a user is named (the password only from the
     * environment, never argv) */
    const char *user = getenv("FLUSS_SASL_USERNAME");
    fluss_client_opts_t o = {.timeout_ms = 30000};
    if (user && *user) {
        o.security_protocol = "SASL";
        o.sasl_mechanism = getenv("FLUSS_SASL_MECHANISM");
        o.sasl_username = user;
        o.sasl_password = getenv("FLUSS_SASL_PASSWORD");
        if (!o.sasl_password) o.sasl_password = "";
    }
    /* TLS (ours) when a CA is named: SSL, or SASL_SSL with a user */
    const char *ca = getenv("FLUSS_TLS_CA");
    if (ca && *ca) {
        o.security_protocol = o.security_protocol ? "SASL_SSL" : "SSL";
        o.ssl_ca_file = ca;
        o.ssl_cert_file = getenv("FLUSS_TLS_CERT");
        o.ssl_key_file = getenv("FLUSS_TLS_KEY");
        if (o.ssl_cert_file && !*o.ssl_cert_file) o.ssl_cert_file = NULL;
        if (o.ssl_key_file && !*o.ssl_key_file) o.ssl_key_file = NULL;
    }
    if (fluss_client_open(b, &o, client, &err) != 0) {
        fprintf(stderr, "fluss: cannot connect to %s: %s\n", b, err.message);
        return 1;
    }
    return 0;
}

int fl_cli_fail(const fluss_error_t *err) {
    fprintf(stderr, "fluss: %s (%s, code %d)\n", err->message, fluss_error_name(err->code),
            err->code);
    return 1;
}

int fl_cli_open_table(const char *bootstrap, const char *path, fluss_client_t **client,
                      fluss_table_t **table) {
    char db[256];
    const char *name;
    if (fl_cli_split_path(path, db, sizeof(db), &name)) return 2;
    if (fl_cli_connect(bootstrap, client)) return 1;
    fluss_error_t err;
    if (fluss_table_open(*client, db, name, table, &err) != 0) {
        fl_cli_fail(&err);
        fluss_client_destroy(*client);
        *client = NULL;
        return 1;
    }
    return 0;
}

/* The presets of `--partition K=V,...`: every partition key named, its
 * column preset to the value, and the partition's name. Returns an exit
 * code (2 for a bad spec). */
static int fl_cli_partition_preset(const fluss_table_t *t, char *spec, fl_cli_preset_t *pre) {
    const int32_t *keys;
    size_t nk = fluss_table_partition_keys(t, &keys);
    memset(pre, 0, sizeof(*pre));
    if (nk == 0) {
        fprintf(stderr, "fluss: the table is not partitioned; --partition does not apply\n");
        return 2;
    }
    char *save = NULL;
    for (char *item = strtok_r(spec, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq || pre->n == FL_CLI_PRESETS_MAX) {
            fprintf(stderr, "fluss: --partition: expected K=V items, got '%s'\n", item);
            return 2;
        }
        *eq = '\0';
        while (*item == ' ') item++;
        int col = fluss_table_column_index(t, item);
        size_t k = 0;
        while (k < nk && keys[k] != col) k++;
        if (col < 0 || k == nk) {
            fprintf(stderr, "fluss: --partition: '%s' is not a partition key\n", item);
            return 2;
        }
        pre->cols[pre->n] = col;
        pre->vals[pre->n++] = eq + 1;
    }
    size_t len = 0;
    for (size_t k = 0; k < nk; k++) {
        size_t i = 0;
        while (i < pre->n && pre->cols[i] != keys[k]) i++;
        if (i == pre->n) {
            fprintf(stderr, "fluss: --partition names no value for partition key '%s'\n",
                    fluss_table_column_name(t, (size_t)keys[k]));
            return 2;
        }
        int w = snprintf(pre->name + len, sizeof(pre->name) - len, "%s%s", k ? "$" : "",
                         pre->vals[i]);
        if (w < 0 || (size_t)w >= sizeof(pre->name) - len) return 2;
        len += (size_t)w;
    }
    return 0;
}

/* Sets a row's presets (before its fields are read). */
static int fl_cli_apply_presets(fluss_row_t *row, const fl_cli_preset_t *pre, fluss_error_t *err) {
    for (size_t i = 0; pre && i < pre->n; i++)
        if (fluss_row_set_text(row, (size_t)pre->cols[i], pre->vals[i], err)) return err->code;
    return 0;
}

/* With presets: whether the row still names their partition. */
static int fl_cli_check_partition(const fluss_row_t *row, const fl_cli_preset_t *pre,
                                  fluss_error_t *err) {
    if (!pre) return 0;
    char name[1024];
    if (fluss_row_partition_name(row, name, sizeof(name), err)) return err->code;
    if (strcmp(name, pre->name) == 0) return 0;
    err->code = FLUSS_ERR__INVALID_ARG;
    snprintf(err->message, sizeof(err->message),
             "the row belongs to partition '%.900s', not to '%.900s' (--partition)", name, pre->name);
    return err->code;
}

/* ---- stdin that flushes the writer before it blocks ---- */

typedef struct fl_stdin {
    const fl_cli_sink_t *sink;
    bool failed;
    fluss_error_t err;
} fl_stdin_t;

static ssize_t fl_stdin_read(void *cookie, char *buf, size_t size) {
    fl_stdin_t *in = cookie;
    struct pollfd p = {STDIN_FILENO, POLLIN, 0};
    if (in->sink && !in->failed && poll(&p, 1, 0) == 0 &&
        in->sink->flush(in->sink->w, &in->err))
        in->failed = true;
    for (;;) {
        ssize_t n = read(STDIN_FILENO, buf, size);
        if (n < 0 && errno == EINTR) continue;
        return n;
    }
}

/* ---- CSV ---- */

static void fl_csv_put(fl_csv_record_t *r, size_t *len, char c) {
    if (*len + 1 >= r->cap) {
        r->cap = r->cap ? r->cap * 2 : 4096;
        r->buf = realloc(r->buf, r->cap);
        if (!r->buf) abort();
    }
    r->buf[(*len)++] = c;
}

/* Reads one CSV record (which may span lines inside quotes). Returns 1 on
 * a record, 0 at end of input, -1 on malformed input. */
int fl_csv_read(FILE *in, fl_csv_record_t *r, long *line_no) {
    size_t len = 0;
    r->count = 0;
    int c = fgetc(in);
    if (c == EOF) return 0;
    (*line_no)++;
    bool in_quotes = false, field_start = true;
    r->starts[0] = 0;
    r->quoted[0] = false;
    r->count = 1;
    for (;; c = fgetc(in)) {
        if (c == EOF) {
            if (in_quotes) return -1;
            break;
        }
        if (in_quotes) {
            if (c == '"') {
                int d = fgetc(in);
                if (d == '"') {
                    fl_csv_put(r, &len, '"');
                } else {
                    in_quotes = false;
                    if (d != EOF) ungetc(d, in);
                }
            } else {
                if (c == '\n') (*line_no)++;
                fl_csv_put(r, &len, (char)c);
            }
            continue;
        }
        if (c == '"' && field_start) {
            in_quotes = true;
            r->quoted[r->count - 1] = true;
            field_start = false;
            continue;
        }
        if (c == ',') {
            fl_csv_put(r, &len, '\0');
            if (r->count >= FL_CLI_FIELDS_MAX) return -1;
            r->starts[r->count] = len;
            r->quoted[r->count] = false;
            r->count++;
            field_start = true;
            continue;
        }
        if (c == '\n') break;
        if (c == '\r') {
            int d = fgetc(in);
            if (d == '\n') break;
            if (d != EOF) ungetc(d, in);
            continue;
        }
        field_start = false;
        fl_csv_put(r, &len, (char)c);
    }
    fl_csv_put(r, &len, '\0');
    return 1;
}

const char *fl_csv_field(const fl_csv_record_t *r, size_t i) { return r->buf + r->starts[i]; }

/* ---- JSON ---- */

/* The end of the JSON string starting at p (after its closing quote). */
static const char *fl_json_skip_string(const char *p, const char *end) {
    for (p++; p < end; p++) {
        if (*p == '\\') p++;
        else if (*p == '"') return p + 1;
    }
    return end;
}

/* The end of the JSON value starting at p (a string, an array or object
 * with all it holds, or a bare token). */
static const char *fl_json_skip_value(const char *p, const char *end) {
    if (p < end && *p == '"') return fl_json_skip_string(p, end);
    int depth = 0;
    for (; p < end; p++) {
        if (*p == '"') {
            p = fl_json_skip_string(p, end) - 1;
        } else if (*p == '[' || *p == '{') {
            depth++;
        } else if (*p == ']' || *p == '}') {
            if (depth == 0) return p;
            if (--depth == 0) return p + 1;
        } else if (depth == 0 && (*p == ',' || *p == ' ' || *p == '\t')) {
            return p;
        }
    }
    return p;
}

/* The text of member key's value in the JSON object line[0, n) as
 * written (numbers keep every digit; jansson reads them as doubles), or
 * NULL. Keys with escapes are not matched (column names have none). */
static char *fl_json_raw_member(const char *line, size_t n, const char *key) {
    const char *p = line, *end = line + n;
    size_t klen = strlen(key);
    while (p < end && *p != '{') p++;
    for (p++; p < end;) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == ',')) p++;
        if (p >= end || *p != '"') return NULL;
        const char *ks = p + 1, *ke = fl_json_skip_string(p, end) - 1;
        p = ke + 1;
        while (p < end && (*p == ' ' || *p == '\t' || *p == ':')) p++;
        const char *vs = p, *ve = fl_json_skip_value(p, end);
        p = ve;
        if ((size_t)(ke - ks) == klen && memcmp(ks, key, klen) == 0) return strndup(vs, (size_t)(ve - vs));
    }
    return NULL;
}

static int fl_json_set(fluss_row_t *row, const fluss_table_t *t, int col, json_t *v,
                       const char *line, size_t n, const char *key, fluss_error_t *err) {
    char tmp[64];
    switch (json_typeof(v)) {
    case JSON_NULL: return fluss_row_set_null(row, (size_t)col, err);
    case JSON_TRUE:
    case JSON_FALSE: return fluss_row_set_text(row, (size_t)col, json_is_true(v) ? "true" : "false", err);
    case JSON_STRING: return fluss_row_set_text(row, (size_t)col, json_string_value(v), err);
    case JSON_INTEGER:
        snprintf(tmp, sizeof(tmp), "%lld", (long long)json_integer_value(v));
        return fluss_row_set_text(row, (size_t)col, tmp, err);
    case JSON_REAL: {
        const char *type = fluss_table_column_type(t, (size_t)col);
        if (strncmp(type, "FLOAT", 5) == 0 || strncmp(type, "DOUBLE", 6) == 0)
            return fluss_row_set_double(row, (size_t)col, json_real_value(v), err);
        break; /* a DECIMAL: the number as written */
    }
    default: break; /* an array or object: an ARRAY, MAP or ROW value in its JSON text */
    }
    char *text = fl_json_raw_member(line, n, key);
    if (!text) text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    int rc = fluss_row_set_text(row, (size_t)col, text, err);
    free(text);
    return rc;
}

/* ---- the command ---- */

typedef struct fl_progress {
    double start, last;
    long long rows;
    long long bytes;
    bool shown;
} fl_progress_t;

static void fl_progress_tick(fl_progress_t *p, const char *verb, bool final) {
    double now = fl_now_s();
    if (!final && now - p->last < 1.0) return;
    p->last = now;
    double el = now - p->start > 1e-9 ? now - p->start : 1e-9;
    if (final) {
        if (p->shown) fprintf(stderr, "\n");
        fprintf(stderr, "%s %lld rows (%.1f MB) in %.2f s: %.0f rows/s, %.1f MB/s\n", verb, p->rows,
                (double)p->bytes / 1e6, el, (double)p->rows / el, (double)p->bytes / 1e6 / el);
    } else {
        fprintf(stderr, "\r%lld rows, %.1f MB, %.1f MB/s", p->rows, (double)p->bytes / 1e6,
                (double)p->bytes / 1e6 / el);
        p->shown = true;
    }
}

static int fl_append_put(void *w, const fluss_row_t *row, fluss_error_t *err) {
    return fluss_append_writer_append(w, row, err);
}

static int fl_append_flush(void *w, fluss_error_t *err) { return fluss_append_writer_flush(w, err); }

static int64_t fl_append_acked(void *w) {
    int64_t acked = 0;
    fluss_append_writer_stats(w, &acked, NULL);
    return acked;
}

int fl_cli_produce(const char *bootstrap, int argc, char **argv) {
    const char *path = NULL;
    char *partition = NULL;
    bool json = false, header = false;
    fluss_append_writer_options_t o = {0};
    o.linger_ms = -1;
    o.idempotent = -1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage_produce(stdout);
            return 0;
        }
        if (strcmp(a, "--header") == 0) header = true;
        else if (strcmp(a, "--format") == 0 && i + 1 < argc) {
            const char *f = argv[++i];
            if (strcmp(f, "json") == 0) json = true;
            else if (strcmp(f, "csv") != 0) goto bad;
        } else if (strcmp(a, "--batch-bytes") == 0 && i + 1 < argc) {
            char *end;
            long long n = strtoll(argv[++i], &end, 10);
            if (*end || n <= 0) goto bad;
            o.batch_bytes = (size_t)n;
        } else if (strcmp(a, "--linger-ms") == 0 && i + 1 < argc) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end || n < 0) goto bad;
            o.linger_ms = (int)n;
        } else if (strcmp(a, "--partition") == 0 && i + 1 < argc) {
            partition = argv[++i];
        } else if (a[0] != '-' && !path) path = a;
        else goto bad;
    }
    if (!path) goto bad;

    fluss_client_t *client = NULL;
    fluss_table_t *t = NULL;
    int rc = fl_cli_open_table(bootstrap, path, &client, &t);
    if (rc) return rc;
    fl_cli_preset_t preset;
    char *spec = partition ? strdup(partition) : NULL;
    rc = spec ? fl_cli_partition_preset(t, spec, &preset) : 0;
    if (rc) {
        free(spec);
        fluss_table_close(t);
        fluss_client_destroy(client);
        return rc;
    }
    fluss_error_t err;
    fluss_append_writer_t *w = NULL;
    if (fluss_append_writer_new(t, &o, &w, &err)) {
        fprintf(stderr, "fluss: %s (%s, code %d)\n", err.message, fluss_error_name(err.code), err.code);
        free(spec);
        fluss_table_close(t);
        fluss_client_destroy(client);
        return 1;
    }
    fl_cli_sink_t sink = {fl_append_put, fl_append_flush, fl_append_acked, w, "produced",
                          spec ? &preset : NULL};
    int exit_code = fl_cli_read_rows(t, json, header, NULL, 0, &sink);
    free(spec);
    fluss_append_writer_destroy(w);
    fluss_table_close(t);
    fluss_client_destroy(client);
    return exit_code;
bad:
    fprintf(stderr, "fluss: bad arguments for produce\n\n");
    usage_produce(stderr);
    return 2;
}

int fl_cli_read_rows(fluss_table_t *t, bool json, bool header, const int32_t *cols,
                     size_t ncols_given, const fl_cli_sink_t *sink) {
    fluss_error_t err;
    size_t ncols = fluss_table_column_count(t);
    fl_stdin_t cookie = {sink, false, {0}};
    cookie_io_functions_t io = {fl_stdin_read, NULL, NULL, NULL};
    FILE *in = fopencookie(&cookie, "r", io);
    if (!in) abort();
    setvbuf(in, NULL, _IOFBF, 1 << 16);
    fluss_row_t *row = fluss_row_new(t);
    fl_progress_t prog = {fl_now_s(), fl_now_s(), 0, 0, false};
    long line_no = 0;
    int exit_code = 0;
    int map[FL_CLI_FIELDS_MAX];
    size_t map_count = cols ? ncols_given : ncols;
    for (size_t i = 0; i < map_count && i < FL_CLI_FIELDS_MAX; i++) map[i] = cols ? cols[i] : (int)i;
    if (json) {
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        while (!cookie.failed && (n = getline(&line, &cap, in)) > 0) {
            line_no++;
            while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
            if (n == 0) continue;
            json_error_t je;
            json_t *obj = json_loadb(line, (size_t)n, 0, &je);
            if (!obj || !json_is_object(obj)) {
                fprintf(stderr, "fluss: line %ld: not a JSON object%s%s\n", line_no,
                        obj ? "" : ": ", obj ? "" : je.text);
                json_decref(obj);
                exit_code = 1;
                break;
            }
            fluss_row_clear(row);
            if (fl_cli_apply_presets(row, sink->preset, &err)) {
                fprintf(stderr, "fluss: --partition: %s\n", err.message);
                json_decref(obj);
                exit_code = 1;
                break;
            }
            const char *key;
            json_t *v;
            json_object_foreach(obj, key, v) {
                int col = fluss_table_column_index(t, key);
                if (col < 0) {
                    fprintf(stderr, "fluss: line %ld: unknown column '%s'\n", line_no, key);
                    exit_code = 1;
                    break;
                }
                if (fl_json_set(row, t, col, v, line, (size_t)n, key, &err)) {
                    fprintf(stderr, "fluss: line %ld: %s\n", line_no, err.message);
                    exit_code = 1;
                    break;
                }
            }
            json_decref(obj);
            if (!exit_code && fl_cli_check_partition(row, sink->preset, &err)) {
                fprintf(stderr, "fluss: line %ld: %s\n", line_no, err.message);
                exit_code = 1;
            }
            if (exit_code) break;
            if (sink->put(sink->w, row, &err)) {
                fprintf(stderr, "fluss: %s (%s, code %d)\n", err.message, fluss_error_name(err.code), err.code);
                exit_code = 1;
                break;
            }
            prog.rows++;
            prog.bytes += n + 1;
            fl_progress_tick(&prog, sink->verb, false);
        }
        free(line);
    } else {
        fl_csv_record_t rec = {0};
        int got;
        if (header) {
            got = fl_csv_read(in, &rec, &line_no);
            if (got < 0) {
                fprintf(stderr, "fluss: line %ld: malformed CSV header\n", line_no);
                exit_code = 1;
            }
            map_count = got > 0 ? rec.count : 0;
            for (size_t i = 0; i < map_count && !exit_code; i++) {
                map[i] = fluss_table_column_index(t, fl_csv_field(&rec, i));
                if (map[i] < 0) {
                    fprintf(stderr, "fluss: unknown column '%s' in the CSV header\n", fl_csv_field(&rec, i));
                    exit_code = 1;
                }
            }
        }
        while (!exit_code && !cookie.failed) {
            long first_line = line_no + 1;
            got = fl_csv_read(in, &rec, &line_no);
            if (got == 0) break;
            if (got < 0) {
                fprintf(stderr, "fluss: line %ld: malformed CSV (unclosed quote?)\n", first_line);
                exit_code = 1;
                break;
            }
            if (rec.count == 1 && rec.buf[0] == '\0' && !rec.quoted[0]) continue; /* empty line */
            if (rec.count != map_count) {
                fprintf(stderr, "fluss: line %ld: %zu fields, expected %zu\n", first_line, rec.count, map_count);
                exit_code = 1;
                break;
            }
            fluss_row_clear(row);
            if (fl_cli_apply_presets(row, sink->preset, &err)) {
                fprintf(stderr, "fluss: --partition: %s\n", err.message);
                exit_code = 1;
                break;
            }
            for (size_t i = 0; i < rec.count; i++) {
                const char *f = fl_csv_field(&rec, i);
                const char *text = (f[0] == '\0' && !rec.quoted[i]) ? NULL : f;
                if (fluss_row_set_text(row, (size_t)map[i], text, &err)) {
                    fprintf(stderr, "fluss: line %ld: %s\n", first_line, err.message);
                    exit_code = 1;
                    break;
                }
            }
            if (!exit_code && fl_cli_check_partition(row, sink->preset, &err)) {
                fprintf(stderr, "fluss: line %ld: %s\n", first_line, err.message);
                exit_code = 1;
            }
            if (exit_code) break;
            if (sink->put(sink->w, row, &err)) {
                fprintf(stderr, "fluss: %s (%s, code %d)\n", err.message, fluss_error_name(err.code), err.code);
                exit_code = 1;
                break;
            }
            prog.rows++;
            prog.bytes += (long long)(rec.starts[rec.count - 1] + strlen(fl_csv_field(&rec, rec.count - 1)) + 1);
            fl_progress_tick(&prog, sink->verb, false);
        }
        free(rec.buf);
    }
    fclose(in);
    if (cookie.failed) {
        err = cookie.err;
        fprintf(stderr, "fluss: %s (%s, code %d)\n", err.message, fluss_error_name(err.code), err.code);
        exit_code = 1;
    } else if (sink->flush(sink->w, &err)) {
        fprintf(stderr, "fluss: %s (%s, code %d)\n", err.message, fluss_error_name(err.code), err.code);
        exit_code = 1;
    }
    prog.rows = sink->acked(sink->w);
    fl_progress_tick(&prog, sink->verb, true);
    fluss_row_destroy(row);
    return exit_code;
}
