/*
 * cli_scan.c — `fluss scan DB.TABLE`: prints a log table's rows through
 * libfluss's log scanner, from the earliest offsets, the latest, or a
 * timestamp, up to the latest offsets at start (or forever with
 * --follow). A primary-key table's log is its changelog: every change is
 * a row, and --changelog shows each row's change type (+I, -U, +U, -D;
 * +A for a log table's appends). Exit codes: 0 ok, 1 a server / connection failure, 2 bad
 * usage. Single-threaded; stdout is flushed after every batch.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_data.h"

#define FL_CLI_POLL_MS 1000
#define FL_CLI_VALUE_MAX 65536

static volatile sig_atomic_t g_stop = 0;

static void on_signal(int sig) {
    (void)sig;
    g_stop = 1;
}

static void usage_scan(FILE *f) {
    fprintf(f,
            "usage: fluss scan DB.TABLE [--from earliest|latest|TIMESTAMP_MS] [--columns a,b]\n"
            "                  [--follow] [--format table|json|csv] [--limit N] [--changelog]\n"
            "\n"
            "Prints the rows of a table's log, every bucket (of a primary-key table: its\n"
            "changelog, one row per change).\n"
            "  --from earliest     (default) from the first row\n"
            "  --from latest       only rows appended from now on (use with --follow)\n"
            "  --from TIMESTAMP_MS rows committed at or after this epoch millisecond\n"
            "  --columns a,b       only these columns, in this order\n"
            "  --follow            keep waiting for new rows (stop with Ctrl-C or --limit);\n"
            "                      without it the scan stops at the latest offsets at start\n"
            "  --format table      (default) bucket | offset | columns...\n"
            "  --format json       one JSON object per row\n"
            "  --format csv        a header line, then CSV rows (NULL is an empty field)\n"
            "  --limit N           stop after N rows\n"
            "  --changelog         show each row's change type: +I insert, -U update before,\n"
            "                      +U update after, -D delete (+A append-only)\n");
}

typedef enum { FMT_TABLE, FMT_JSON, FMT_CSV } fl_fmt_t;

static void print_csv_field(const char *s, size_t n) {
    bool quote = n == 0 || strpbrk(s, ",\"\r\n") != NULL || s[0] == ' ' || s[n - 1] == ' ';
    if (!quote) {
        fwrite(s, 1, n, stdout);
        return;
    }
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"') putchar('"');
        putchar(s[i]);
    }
    putchar('"');
}

static void print_json_key(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') putchar('\\');
        putchar(*s);
    }
    putchar('"');
}

static const char *change_text(fluss_change_type_t c) {
    switch (c) {
    case FLUSS_CHANGE_INSERT: return "+I";
    case FLUSS_CHANGE_UPDATE_BEFORE: return "-U";
    case FLUSS_CHANGE_UPDATE_AFTER: return "+U";
    case FLUSS_CHANGE_DELETE: return "-D";
    default: return "+A";
    }
}

static void print_row(const fluss_record_batch_t *b, size_t r, fl_fmt_t fmt, bool changelog,
                      char *buf) {
    size_t nc = fluss_record_batch_column_count(b);
    const char *change = change_text(fluss_record_batch_change_type(b, r));
    if (fmt == FMT_TABLE)
        printf("%d | %lld", fluss_record_batch_bucket(b), (long long)fluss_record_batch_offset(b, r));
    if (fmt == FMT_TABLE && changelog) printf(" | %s", change);
    if (fmt == FMT_JSON) putchar('{');
    if (fmt == FMT_JSON && changelog) printf("\"_change\": \"%s\"%s", change, nc ? ", " : "");
    if (fmt == FMT_CSV && changelog) printf("%s%s", change, nc ? "," : "");
    for (size_t c = 0; c < nc; c++) {
        bool null = fluss_record_batch_is_null(b, r, c);
        size_t n = fluss_record_batch_value_text(b, r, c, fmt == FMT_JSON ? FLUSS_TEXT_JSON : 0, buf,
                                                 FL_CLI_VALUE_MAX);
        if (n >= FL_CLI_VALUE_MAX) n = FL_CLI_VALUE_MAX - 1; /* very long values are cut */
        switch (fmt) {
        case FMT_TABLE:
            fputs(" | ", stdout);
            if (null) fputs("NULL", stdout);
            else fwrite(buf, 1, n, stdout);
            break;
        case FMT_JSON:
            if (c) fputs(", ", stdout);
            print_json_key(fluss_record_batch_column_name(b, c));
            fputs(": ", stdout);
            fwrite(buf, 1, n, stdout);
            break;
        case FMT_CSV:
            if (c) putchar(',');
            if (!null) print_csv_field(buf, n);
            break;
        }
    }
    if (fmt == FMT_JSON) putchar('}');
    putchar('\n');
}

static void print_header(const fluss_table_t *t, const int32_t *cols, size_t n, fl_fmt_t fmt,
                         bool changelog) {
    if (fmt == FMT_JSON) return;
    if (fmt == FMT_TABLE) fputs(changelog ? "bucket | offset | change" : "bucket | offset", stdout);
    if (fmt == FMT_CSV && changelog) fputs(n ? "_change," : "_change", stdout);
    for (size_t i = 0; i < n; i++) {
        const char *name = fluss_table_column_name(t, (size_t)cols[i]);
        if (fmt == FMT_TABLE) printf(" | %s", name);
        else {
            if (i) putchar(',');
            print_csv_field(name, strlen(name));
        }
    }
    putchar('\n');
}

static int fail_err(const fluss_error_t *err) {
    fprintf(stderr, "fluss: %s (%s, code %d)\n", err->message, fluss_error_name(err->code), err->code);
    return 1;
}

/* Subscribes every bucket that has something to read at positions start. */
static int subscribe_all(fluss_log_scanner_t *s, int32_t nb, const int64_t *start,
                         const int64_t *stop, bool follow, fluss_error_t *err) {
    for (int32_t b = 0; b < nb; b++) {
        if (!follow && start[b] >= 0 && start[b] >= stop[b]) continue;
        if (!follow && stop[b] == 0) continue;
        if (fluss_log_scanner_subscribe(s, b, start[b], err)) return 1;
    }
    return 0;
}

int fl_cli_scan(const char *bootstrap, int argc, char **argv) {
    const char *path = NULL, *from = "earliest", *columns = NULL;
    bool follow = false, changelog = false;
    fl_fmt_t fmt = FMT_TABLE;
    long long limit = -1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage_scan(stdout);
            return 0;
        }
        if (strcmp(a, "--follow") == 0) follow = true;
        else if (strcmp(a, "--changelog") == 0) changelog = true;
        else if (strcmp(a, "--from") == 0 && i + 1 < argc) from = argv[++i];
        else if (strcmp(a, "--columns") == 0 && i + 1 < argc) columns = argv[++i];
        else if (strcmp(a, "--format") == 0 && i + 1 < argc) {
            const char *f = argv[++i];
            if (strcmp(f, "table") == 0) fmt = FMT_TABLE;
            else if (strcmp(f, "json") == 0) fmt = FMT_JSON;
            else if (strcmp(f, "csv") == 0) fmt = FMT_CSV;
            else goto bad;
        } else if (strcmp(a, "--limit") == 0 && i + 1 < argc) {
            char *end;
            limit = strtoll(argv[++i], &end, 10);
            if (*end || limit < 0) goto bad;
        } else if (a[0] != '-' && !path) path = a;
        else goto bad;
    }
    if (!path) goto bad;
    long long from_ts = -1;
    if (strcmp(from, "earliest") != 0 && strcmp(from, "latest") != 0) {
        char *end;
        from_ts = strtoll(from, &end, 10);
        if (*end || from_ts < 0) goto bad;
    }

    fluss_client_t *client = NULL;
    fluss_table_t *t = NULL;
    int rc = fl_cli_open_table(bootstrap, path, &client, &t);
    if (rc) return rc;
    fluss_error_t err;
    int32_t nb = fluss_table_bucket_count(t);
    size_t ncols = fluss_table_column_count(t);
    int32_t *cols = calloc(ncols + 1, sizeof(int32_t));
    size_t n = 0;
    int exit_code = 0;
    if (columns) {
        char *copy = strdup(columns), *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            while (*tok == ' ') tok++;
            int idx = fluss_table_column_index(t, tok);
            if (idx < 0 || n >= ncols) {
                fprintf(stderr, "fluss: unknown or repeated column '%s'\n", tok);
                exit_code = 2;
                break;
            }
            cols[n++] = idx;
        }
        free(copy);
    } else {
        for (size_t i = 0; i < ncols; i++) cols[n++] = (int32_t)i;
    }
    int64_t *start = calloc((size_t)nb, sizeof(int64_t));
    int64_t *stop = calloc((size_t)nb, sizeof(int64_t));
    fluss_log_scanner_t *s = NULL;
    char *buf = malloc(FL_CLI_VALUE_MAX);
    if (exit_code) goto done;
    if (!follow && fluss_table_list_offsets(t, NULL, (size_t)nb, FLUSS_OFFSETS_LATEST, 0, stop, &err)) {
        exit_code = fail_err(&err);
        goto done;
    }
    if (from_ts >= 0) {
        if (fluss_table_list_offsets(t, NULL, (size_t)nb, FLUSS_OFFSETS_TIMESTAMP, from_ts, start, &err)) {
            exit_code = fail_err(&err);
            goto done;
        }
    } else if (strcmp(from, "latest") == 0) {
        if (follow) {
            if (fluss_table_list_offsets(t, NULL, (size_t)nb, FLUSS_OFFSETS_LATEST, 0, start, &err)) {
                exit_code = fail_err(&err);
                goto done;
            }
        } else {
            memcpy(start, stop, (size_t)nb * sizeof(int64_t));
        }
    } else {
        for (int32_t b = 0; b < nb; b++) start[b] = FLUSS_OFFSET_EARLIEST;
    }
    bool projected = columns != NULL;
    if (fluss_log_scanner_new(t, projected ? cols : NULL, n, &s, &err) ||
        subscribe_all(s, nb, start, stop, follow, &err)) {
        exit_code = fail_err(&err);
        goto done;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    print_header(t, cols, n, fmt, changelog);
    fflush(stdout);
    long long printed = 0;
    bool pushdown = true;
    while (!g_stop && (limit < 0 || printed < limit)) {
        if (!follow) {
            bool left = false;
            for (int32_t b = 0; b < nb; b++) {
                int64_t pos = fluss_log_scanner_position(s, b);
                if (pos == -1) continue;
                if (pos >= 0 && pos >= stop[b]) fluss_log_scanner_unsubscribe(s, b);
                else left = true;
            }
            if (!left) break;
        }
        fluss_record_batch_t *batch = NULL;
        if (fluss_log_scanner_poll(s, FL_CLI_POLL_MS, &batch, &err)) {
            if (err.code == FLUSS_ERR_INVALID_COLUMN_PROJECTION && projected && pushdown) {
                /* the server cannot project: fetch whole batches and project here */
                fprintf(stderr, "fluss: note: %s; projecting on the client instead\n", err.message);
                pushdown = false;
                fluss_log_scanner_set_projection_pushdown(s, false);
                continue;
            }
            exit_code = fail_err(&err);
            break;
        }
        if (!batch) continue;
        size_t rows = fluss_record_batch_row_count(batch);
        for (size_t r = 0; r < rows && (limit < 0 || printed < limit); r++) {
            if (!follow && fluss_record_batch_offset(batch, r) >= stop[fluss_record_batch_bucket(batch)])
                break;
            print_row(batch, r, fmt, changelog, buf);
            printed++;
        }
        fflush(stdout);
        fluss_record_batch_free(batch);
    }
done:
    free(buf);
    fluss_log_scanner_destroy(s);
    free(start);
    free(stop);
    free(cols);
    fluss_table_close(t);
    fluss_client_destroy(client);
    return exit_code;
bad:
    fprintf(stderr, "fluss: bad arguments for scan\n\n");
    usage_scan(stderr);
    return 2;
}
