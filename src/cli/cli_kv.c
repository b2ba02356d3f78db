/*
 * cli_kv.c — the CLI's primary-key commands over libfluss's upsert writer
 * and lookuper:
 *   fluss upsert DB.TABLE [--format csv|json] [--header] [--columns a,b]
 *   fluss delete DB.TABLE [KEY...] [--key COL=V[,COL=V]...]...
 *   fluss lookup DB.TABLE [--format table|json] [KEY...] [--key COL=V,...]...
 * Rows are read like `fluss produce` reads them (cli_produce.c). A KEY is
 * one CSV record of the primary-key values in key order ("7", or
 * "7,abc" for a two-column key), or with --key the key columns by name
 * ("id=7", "a=1,b=x"); without keys they are read from stdin, one per
 * line (CSV). Exit codes as cli_main.c. Single-threaded.
 */
#define _GNU_SOURCE /* fmemopen */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_data.h"

#define FL_CLI_LOOKUP_BATCH 512 /* keys per lookup call */
#define FL_CLI_VALUE_MAX 65536

static void usage_kv(FILE *f) {
    fprintf(f,
            "usage: fluss upsert DB.TABLE [--format csv|json] [--header] [--columns a,b]\n"
            "                    [--batch-bytes N] [--linger-ms N]\n"
            "       fluss delete DB.TABLE [KEY...] [--key COL=VALUE[,COL=VALUE]...]...\n"
            "       fluss lookup DB.TABLE [--format table|json] [KEY...] [--key COL=VALUE,...]...\n"
            "\n"
            "Primary-key tables. upsert reads rows from stdin like `fluss produce`;\n"
            "  --columns a,b   a partial update: the fields are these columns (which must\n"
            "                  include the primary key), the other columns keep their values\n"
            "A KEY is the primary-key values in key order as one CSV record (\"7\" or\n"
            "\"7,abc\"), or --key with the key columns by name (--key id=7, --key a=1,b=x);\n"
            "without keys they are read from stdin, one per line.\n"
            "lookup prints each key's row, or \"not found: KEY\" (json: null).\n");
}

static int fail_err(const fluss_error_t *err) {
    fprintf(stderr, "fluss: %s (%s, code %d)\n", err->message, fluss_error_name(err->code),
            err->code);
    return 1;
}

/* Parses "a,b" into column indexes; returns the count or -1. */
static int parse_columns(const fluss_table_t *t, const char *list, int32_t *cols, size_t cap) {
    char *copy = strdup(list), *save = NULL;
    int n = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        int idx = fluss_table_column_index(t, tok);
        if (idx < 0 || (size_t)n >= cap) {
            fprintf(stderr, "fluss: unknown column '%s'\n", tok);
            n = -1;
            break;
        }
        cols[n++] = idx;
    }
    free(copy);
    return n;
}

/* text as one CSV record into rec; 1 unless it has exactly npk fields. */
static int read_key_record(const char *text, size_t npk, fl_csv_record_t *rec) {
    FILE *in = fmemopen((void *)text, strlen(text), "r");
    if (!in) return 1;
    long line = 0;
    int got = fl_csv_read(in, rec, &line);
    fclose(in);
    return got <= 0 || rec->count != npk;
}

/* A key given as "--key COL=VALUE[,COL=VALUE]...": every primary-key
 * column once, by name (CSV fields, so a value may be quoted). */
static int parse_named_key(const fluss_table_t *t, const char *text, fluss_row_t *key) {
    const int32_t *pk;
    size_t npk = fluss_table_primary_key(t, &pk);
    fl_csv_record_t rec = {0};
    int rc = read_key_record(text, npk, &rec);
    if (rc)
        fprintf(stderr, "fluss: --key '%s': expected %zu COL=VALUE pair%s (the primary key)\n",
                text, npk, npk == 1 ? "" : "s");
    bool seen[FL_CLI_FIELDS_MAX] = {false};
    fluss_row_clear(key);
    for (size_t i = 0; !rc && i < rec.count; i++) {
        const char *f = fl_csv_field(&rec, i), *eq = strchr(f, '=');
        size_t k = 0;
        if (eq) {
            char name[256];
            snprintf(name, sizeof(name), "%.*s", (int)(eq - f), f);
            int col = fluss_table_column_index(t, name);
            while (k < npk && pk[k] != col) k++;
        }
        if (!eq || k == npk || seen[k]) {
            fprintf(stderr, "fluss: --key '%s': '%s' is not COL=VALUE of a primary-key column "
                            "(once each)\n", text, f);
            rc = 1;
            break;
        }
        seen[k] = true;
        fluss_error_t err;
        if (fluss_row_set_text(key, (size_t)pk[k], eq + 1, &err)) {
            fprintf(stderr, "fluss: --key '%s': %s\n", text, err.message);
            rc = 1;
        }
    }
    free(rec.buf);
    return rc;
}

/* Fills key's primary-key columns from one CSV record of text. */
static int parse_key(const fluss_table_t *t, const char *text, fluss_row_t *key) {
    const int32_t *pk;
    size_t npk = fluss_table_primary_key(t, &pk);
    fl_csv_record_t rec = {0};
    int rc = 0;
    fluss_error_t err;
    fluss_row_clear(key);
    if (read_key_record(text, npk, &rec)) {
        fprintf(stderr, "fluss: key '%s': expected %zu value%s (the primary key)\n", text, npk,
                npk == 1 ? "" : "s");
        rc = 1;
    }
    for (size_t i = 0; !rc && i < npk; i++)
        if (fluss_row_set_text(key, (size_t)pk[i], fl_csv_field(&rec, i), &err)) {
            fprintf(stderr, "fluss: key '%s': %s\n", text, err.message);
            rc = 1;
        }
    free(rec.buf);
    return rc;
}

static int parse_any_key(const fluss_table_t *t, const char *text, bool named, fluss_row_t *key) {
    return named ? parse_named_key(t, text, key) : parse_key(t, text, key);
}

/* The keys on a command line: CSV records, and --key COL=V,... values. */
typedef struct fl_cli_keys {
    const char **text;
    bool *named;
    int n;
} fl_cli_keys_t;

static void cli_keys_add(fl_cli_keys_t *k, int cap, const char *text, bool named) {
    if (!k->text) {
        k->text = calloc((size_t)cap, sizeof(*k->text));
        k->named = calloc((size_t)cap, sizeof(*k->named));
    }
    k->text[k->n] = text;
    k->named[k->n++] = named;
}

static void cli_keys_free(fl_cli_keys_t *k) {
    free(k->text);
    free(k->named);
}

/* ---- upsert / delete ---- */

static int fl_upsert_put(void *w, const fluss_row_t *row, fluss_error_t *err) {
    return fluss_upsert_writer_upsert(w, row, err);
}

static int fl_delete_put(void *w, const fluss_row_t *row, fluss_error_t *err) {
    return fluss_upsert_writer_delete(w, row, err);
}

static int fl_upsert_flush(void *w, fluss_error_t *err) { return fluss_upsert_writer_flush(w, err); }

static int64_t fl_upsert_acked(void *w) {
    int64_t acked = 0;
    fluss_upsert_writer_stats(w, &acked, NULL);
    return acked;
}

/* Opens the table and an upsert writer (targets: a partial update). */
static int open_writer(const char *bootstrap, const char *path, const char *columns,
                       fluss_upsert_writer_options_t *o, int32_t *targets,
                       fluss_client_t **client, fluss_table_t **t, fluss_upsert_writer_t **w) {
    int rc = fl_cli_open_table(bootstrap, path, client, t);
    if (rc) return rc;
    if (columns) {
        int n = parse_columns(*t, columns, targets, FL_CLI_FIELDS_MAX);
        if (n <= 0) return 2;
        o->target_columns = targets;
        o->target_column_count = (size_t)n;
    }
    fluss_error_t err;
    if (fluss_upsert_writer_new(*t, o, w, &err)) return fail_err(&err);
    return 0;
}

static int run_kv_write(const char *bootstrap, int argc, char **argv, bool del) {
    const char *path = NULL, *columns = NULL;
    bool json = false, header = false;
    fluss_upsert_writer_options_t o = {.base = {.linger_ms = -1, .idempotent = -1}};
    fl_cli_keys_t keys = {0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage_kv(stdout);
            cli_keys_free(&keys);
            return 0;
        }
        if (del && strcmp(a, "--key") == 0 && i + 1 < argc) cli_keys_add(&keys, argc, argv[++i], true);
        else if (!del && strcmp(a, "--header") == 0) header = true;
        else if (!del && strcmp(a, "--format") == 0 && i + 1 < argc) {
            const char *f = argv[++i];
            if (strcmp(f, "json") == 0) json = true;
            else if (strcmp(f, "csv") != 0) goto bad;
        } else if (!del && strcmp(a, "--columns") == 0 && i + 1 < argc) columns = argv[++i];
        else if (!del && strcmp(a, "--batch-bytes") == 0 && i + 1 < argc) {
            long long n = strtoll(argv[++i], NULL, 10);
            if (n <= 0) goto bad;
            o.base.batch_bytes = (size_t)n;
        } else if (!del && strcmp(a, "--linger-ms") == 0 && i + 1 < argc) {
            long n = strtol(argv[++i], NULL, 10);
            if (n < 0) goto bad;
            o.base.linger_ms = (int)n;
        } else if (!path && a[0] != '-') path = a;
        else if (del && path) cli_keys_add(&keys, argc, a, false); /* "-5" is a key too */
        else goto bad;
    }
    if (!path) goto bad;
    fluss_client_t *client = NULL;
    fluss_table_t *t = NULL;
    fluss_upsert_writer_t *w = NULL;
    int32_t *targets = calloc(FL_CLI_FIELDS_MAX, sizeof(int32_t));
    int rc = open_writer(bootstrap, path, columns, &o, targets, &client, &t, &w);
    if (!rc) {
        fl_cli_sink_t sink = {del ? fl_delete_put : fl_upsert_put, fl_upsert_flush,
                              fl_upsert_acked, w, del ? "deleted" : "upserted", NULL};
        const int32_t *pk;
        size_t npk = fluss_table_primary_key(t, &pk);
        if (del && keys.n > 0) {
            fluss_row_t *key = fluss_row_new(t);
            fluss_error_t err;
            for (int i = 0; i < keys.n && !rc; i++) {
                rc = parse_any_key(t, keys.text[i], keys.named[i], key);
                if (!rc && fluss_upsert_writer_delete(w, key, &err)) rc = fail_err(&err);
            }
            if (!rc && fluss_upsert_writer_flush(w, &err)) rc = fail_err(&err);
            if (!rc) fprintf(stderr, "deleted %lld keys\n", (long long)fl_upsert_acked(w));
            fluss_row_destroy(key);
        } else if (del) {
            rc = fl_cli_read_rows(t, false, false, pk, npk, &sink);
        } else {
            rc = fl_cli_read_rows(t, json, header, columns ? targets : NULL,
                                  o.target_column_count, &sink);
        }
    }
    fluss_upsert_writer_destroy(w);
    free(targets);
    fluss_table_close(t);
    fluss_client_destroy(client);
    cli_keys_free(&keys);
    return rc;
bad:
    cli_keys_free(&keys);
    fprintf(stderr, "fluss: bad arguments for %s\n\n", del ? "delete" : "upsert");
    usage_kv(stderr);
    return 2;
}

int fl_cli_upsert(const char *bootstrap, int argc, char **argv) {
    return run_kv_write(bootstrap, argc, argv, false);
}

int fl_cli_delete(const char *bootstrap, int argc, char **argv) {
    return run_kv_write(bootstrap, argc, argv, true);
}

/* ---- lookup ---- */

static void print_json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') putchar('\\');
        putchar(*s);
    }
    putchar('"');
}

static void print_found(const fluss_table_t *t, const fluss_row_t *r, bool json, char *buf) {
    size_t nc = fluss_table_column_count(t);
    if (json) putchar('{');
    for (size_t c = 0; c < nc; c++) {
        size_t n = fluss_row_value_text(r, c, json ? FLUSS_TEXT_JSON : 0, buf, FL_CLI_VALUE_MAX);
        if (n >= FL_CLI_VALUE_MAX) n = FL_CLI_VALUE_MAX - 1;
        if (json) {
            if (c) fputs(", ", stdout);
            print_json_string(fluss_table_column_name(t, c));
            fputs(": ", stdout);
            fwrite(buf, 1, n, stdout);
        } else {
            if (c) fputs(" | ", stdout);
            if (fluss_row_is_null(r, c)) fputs("NULL", stdout);
            else fwrite(buf, 1, n, stdout);
        }
    }
    if (json) putchar('}');
    putchar('\n');
}

typedef struct fl_lookup_batch {
    fluss_row_t *keys[FL_CLI_LOOKUP_BATCH];
    char *texts[FL_CLI_LOOKUP_BATCH];
    size_t n;
} fl_lookup_batch_t;

/* Looks the batch's keys up and prints them in order; empties the batch. */
static int lookup_batch(fluss_lookuper_t *l, const fluss_table_t *t, fl_lookup_batch_t *b,
                        bool json, char *buf) {
    fluss_row_t *rows[FL_CLI_LOOKUP_BATCH];
    fluss_error_t err;
    int rc = 0;
    if (fluss_lookuper_lookup(l, (const fluss_row_t *const *)b->keys, b->n, rows, &err)) {
        rc = fail_err(&err);
    } else {
        for (size_t i = 0; i < b->n; i++) {
            if (rows[i]) print_found(t, rows[i], json, buf);
            else if (json) puts("null");
            else printf("not found: %s\n", b->texts[i]);
            fluss_row_destroy(rows[i]);
        }
    }
    for (size_t i = 0; i < b->n; i++) free(b->texts[i]);
    b->n = 0;
    fflush(stdout);
    return rc;
}

static int lookup_add(fluss_lookuper_t *l, const fluss_table_t *t, fl_lookup_batch_t *b,
                      const char *text, bool named, bool json, char *buf) {
    if (parse_any_key(t, text, named, b->keys[b->n])) return 1;
    b->texts[b->n++] = strdup(text);
    return b->n == FL_CLI_LOOKUP_BATCH ? lookup_batch(l, t, b, json, buf) : 0;
}

static int run_lookup(fluss_table_t *t, bool json, const fl_cli_keys_t *keys) {
    fluss_error_t err;
    fluss_lookuper_t *l = NULL;
    if (fluss_lookuper_new(t, &l, &err)) return fail_err(&err);
    fl_lookup_batch_t *b = calloc(1, sizeof(*b));
    for (size_t i = 0; i < FL_CLI_LOOKUP_BATCH; i++) b->keys[i] = fluss_row_new(t);
    char *buf = malloc(FL_CLI_VALUE_MAX);
    int rc = 0;
    if (!json) {
        for (size_t c = 0; c < fluss_table_column_count(t); c++)
            printf("%s%s", c ? " | " : "", fluss_table_column_name(t, c));
        putchar('\n');
    }
    if (keys->n > 0) {
        for (int i = 0; i < keys->n && !rc; i++)
            rc = lookup_add(l, t, b, keys->text[i], keys->named[i], json, buf);
    } else {
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        while (!rc && (n = getline(&line, &cap, stdin)) > 0) {
            while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
            if (n > 0) rc = lookup_add(l, t, b, line, false, json, buf);
        }
        free(line);
    }
    if (!rc && b->n) rc = lookup_batch(l, t, b, json, buf);
    for (size_t i = 0; i < b->n; i++) free(b->texts[i]);
    for (size_t i = 0; i < FL_CLI_LOOKUP_BATCH; i++) fluss_row_destroy(b->keys[i]);
    free(b);
    free(buf);
    fluss_lookuper_destroy(l);
    return rc;
}

int fl_cli_lookup(const char *bootstrap, int argc, char **argv) {
    const char *path = NULL;
    bool json = false;
    fl_cli_keys_t keys = {0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage_kv(stdout);
            cli_keys_free(&keys);
            return 0;
        }
        if (strcmp(a, "--format") == 0 && i + 1 < argc) {
            const char *f = argv[++i];
            if (strcmp(f, "json") == 0) json = true;
            else if (strcmp(f, "table") != 0) goto bad;
        } else if (strcmp(a, "--key") == 0 && i + 1 < argc) {
            cli_keys_add(&keys, argc, argv[++i], true);
        } else if (!path && a[0] != '-') {
            path = a;
        } else if (path) {
            cli_keys_add(&keys, argc, a, false); /* "-5" is a key too */
        } else {
            goto bad;
        }
    }
    if (!path) goto bad;
    fluss_client_t *client = NULL;
    fluss_table_t *t = NULL;
    int rc = fl_cli_open_table(bootstrap, path, &client, &t);
    if (rc) {
        cli_keys_free(&keys);
        return rc;
    }
    rc = run_lookup(t, json, &keys);
    fluss_table_close(t);
    fluss_client_destroy(client);
    cli_keys_free(&keys);
    return rc;
bad:
    cli_keys_free(&keys);
    fprintf(stderr, "fluss: bad arguments for lookup\n\n");
    usage_kv(stderr);
    return 2;
}
