/*
 * cli_scan.c — `fluss scan DB.TABLE`: prints a log table's rows through
 * libfluss's log scanner, from the earliest offsets, the latest, or a
 * timestamp, up to the latest offsets at start (or forever with
 * --follow). A primary-key table's log is its changelog: every change is
 * a row, and --changelog shows each row's change type (+I, -U, +U, -D;
 * +A for a log table's appends). A partitioned table is read in every
 * partition (or those --partition names; --follow also picks up
 * partitions created later, every FL_CLI_DISCOVER_MS); --filter keeps the
 * rows matching simple predicates (libfluss's scanner filter, pushed to
 * the server too). Rows come from libfluss's union scanner: on a lake
 * table a scan from the earliest offsets is a union read, the rows of the
 * table's lake snapshot first (read from its Iceberg files), then each
 * bucket's log from its lake offset on — every row once, also those the
 * log has expired, and with --follow a partition found later from the
 * snapshot newest then (--log-only reads the log alone, --lake-only the
 * snapshot alone); otherwise the log from the start offsets. A
 * primary-key table's union read prints its current rows: the snapshot's
 * rows overlaid by key with the changelog after it (cli_merge.h), unless
 * --changelog or --follow asks for the changes (the snapshot's rows as
 * +I, then the changelog). Exit
 * codes: 0 ok, 1 a server / connection failure, 2 bad usage.
 * Single-threaded; stdout is flushed after every batch.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli_data.h"
#include "cli_merge.h"

#define FL_CLI_POLL_MS 1000
#define FL_CLI_DISCOVER_MS 5000
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
            "                  [--partition K=V[,K2=V2]] [--filter EXPR] [--stats]\n"
            "                  [--lake-only | --log-only]\n"
            "\n"
            "Prints the rows of a table's log, every bucket (of a primary-key table: its\n"
            "changelog, one row per change; of a partitioned table: every partition).\n"
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
            "                      +U update after, -D delete (+A append-only)\n"
            "  --partition K=V     only the partitions with these partition-key values\n"
            "  --filter EXPR       only rows matching, e.g. \"amount >= 10 AND kind = 'buy'\":\n"
            "                      = != < <= > >= against a value, IS [NOT] NULL, joined by AND\n"
            "                      (also sent to the server, which skips batches that cannot\n"
            "                      match when the table keeps statistics)\n"
            "  --stats             print rows, batches and bytes fetched to stderr at the end\n"
            "  --lake-only         a lake table's lake snapshot alone (no log)\n"
            "  --log-only          the log alone; without either, a scan of a lake table from\n"
            "                      earliest reads its lake snapshot, then the log after it\n"
            "                      (the table's warehouse must be readable from here); on a\n"
            "                      primary-key table it prints the current rows, merged by key\n"
            "                      (with --changelog or --follow: the lake rows, then the changes)\n");
}

typedef enum { FMT_TABLE, FMT_JSON, FMT_CSV } fl_fmt_t;

static void print_csv_field(FILE *out, const char *s, size_t n) {
    bool quote = n == 0 || strpbrk(s, ",\"\r\n") != NULL || s[0] == ' ' || s[n - 1] == ' ';
    if (!quote) {
        fwrite(s, 1, n, out);
        return;
    }
    fputc('"', out);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"') fputc('"', out);
        fputc(s[i], out);
    }
    fputc('"', out);
}

static void print_json_key(FILE *out, const char *s) {
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', out);
        fputc(*s, out);
    }
    fputc('"', out);
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

static void print_row(FILE *out, const fluss_record_batch_t *b, size_t r, fl_fmt_t fmt,
                      bool changelog, const char *partition, char *buf) {
    size_t nc = fluss_record_batch_column_count(b);
    const char *change = change_text(fluss_record_batch_change_type(b, r));
    if (fmt == FMT_TABLE && partition) fprintf(out, "%s | ", partition);
    if (fmt == FMT_TABLE)
        fprintf(out, "%d | %lld", fluss_record_batch_bucket(b), (long long)fluss_record_batch_offset(b, r));
    if (fmt == FMT_TABLE && changelog) fprintf(out, " | %s", change);
    if (fmt == FMT_JSON) fputc('{', out);
    if (fmt == FMT_JSON && changelog) fprintf(out, "\"_change\": \"%s\"%s", change, nc ? ", " : "");
    if (fmt == FMT_CSV && changelog) fprintf(out, "%s%s", change, nc ? "," : "");
    for (size_t c = 0; c < nc; c++) {
        bool null = fluss_record_batch_is_null(b, r, c);
        size_t n = fluss_record_batch_value_text(b, r, c, fmt == FMT_JSON ? FLUSS_TEXT_JSON : 0, buf,
                                                 FL_CLI_VALUE_MAX);
        if (n >= FL_CLI_VALUE_MAX) n = FL_CLI_VALUE_MAX - 1; /* very long values are cut */
        switch (fmt) {
        case FMT_TABLE:
            fputs(" | ", out);
            if (null) fputs("NULL", out);
            else fwrite(buf, 1, n, out);
            break;
        case FMT_JSON:
            if (c) fputs(", ", out);
            print_json_key(out, fluss_record_batch_column_name(b, c));
            fputs(": ", out);
            fwrite(buf, 1, n, out);
            break;
        case FMT_CSV:
            if (c) fputc(',', out);
            if (!null) print_csv_field(out, buf, n);
            break;
        }
    }
    if (fmt == FMT_JSON) fputc('}', out);
    fputc('\n', out);
}

static void print_header(const fluss_table_t *t, const int32_t *cols, size_t n, fl_fmt_t fmt,
                         bool changelog, bool partitioned) {
    if (fmt == FMT_JSON) return;
    if (fmt == FMT_TABLE && partitioned) fputs("partition | ", stdout);
    if (fmt == FMT_TABLE) fputs(changelog ? "bucket | offset | change" : "bucket | offset", stdout);
    if (fmt == FMT_CSV && changelog) fputs(n ? "_change," : "_change", stdout);
    for (size_t i = 0; i < n; i++) {
        const char *name = fluss_table_column_name(t, (size_t)cols[i]);
        if (fmt == FMT_TABLE) printf(" | %s", name);
        else {
            if (i) putchar(',');
            print_csv_field(stdout, name, strlen(name));
        }
    }
    putchar('\n');
}

static int fail_err(const fluss_error_t *err) { return fl_cli_fail(err); }

static int64_t fl_cli_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef struct fl_scan_opts {
    const char *path, *from, *columns, *partition, *filter;
    bool follow, changelog, stats, lake_only, log_only;
    fl_fmt_t fmt;
    long long limit, from_ts;
} fl_scan_opts_t;

/* One bucket read: of the table, or of one partition (pid >= 0). */
typedef struct fl_scan_target {
    int64_t pid;
    char *pname;
    int32_t bucket;
    int64_t start, stop;
} fl_scan_target_t;

typedef struct fl_scan {
    fl_scan_opts_t o;
    fluss_client_t *client;
    fluss_table_t *t;
    char db[256];
    const char *table;
    fl_scan_target_t *targets;
    size_t count;
    fluss_union_scanner_t *s;
    bool unions; /* the lake first (scan_unions) */
    int32_t *cols;
    size_t ncols;
    /* a PK table's union read, merged by key (cli_merge.h): the key
     * columns' positions in the printed columns */
    fl_cli_merge_t *merge;
    size_t *key_at, nkey;
} fl_scan_t;

/* 0 ok, 2 bad usage, 3 help shown. */
static int scan_args(int argc, char **argv, fl_scan_opts_t *o) {
    memset(o, 0, sizeof(*o));
    o->from = "earliest";
    o->limit = -1;
    o->from_ts = -1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage_scan(stdout);
            return 3;
        }
        if (strcmp(a, "--follow") == 0) o->follow = true;
        else if (strcmp(a, "--changelog") == 0) o->changelog = true;
        else if (strcmp(a, "--stats") == 0) o->stats = true;
        else if (strcmp(a, "--lake-only") == 0) o->lake_only = true;
        else if (strcmp(a, "--log-only") == 0) o->log_only = true;
        else if (strcmp(a, "--from") == 0 && v) o->from = v, i++;
        else if (strcmp(a, "--columns") == 0 && v) o->columns = v, i++;
        else if (strcmp(a, "--partition") == 0 && v) o->partition = v, i++;
        else if (strcmp(a, "--filter") == 0 && v) o->filter = v, i++;
        else if (strcmp(a, "--format") == 0 && v) {
            i++;
            if (strcmp(v, "table") == 0) o->fmt = FMT_TABLE;
            else if (strcmp(v, "json") == 0) o->fmt = FMT_JSON;
            else if (strcmp(v, "csv") == 0) o->fmt = FMT_CSV;
            else return 2;
        } else if (strcmp(a, "--limit") == 0 && v) {
            char *end;
            o->limit = strtoll(argv[++i], &end, 10);
            if (*end || o->limit < 0) return 2;
        } else if (a[0] != '-' && !o->path) o->path = a;
        else return 2;
    }
    if (!o->path) return 2;
    if (o->lake_only && (o->log_only || o->follow || strcmp(o->from, "earliest") != 0)) return 2;
    if (strcmp(o->from, "earliest") != 0 && strcmp(o->from, "latest") != 0) {
        char *end;
        o->from_ts = strtoll(o->from, &end, 10);
        if (*end || o->from_ts < 0) return 2;
    }
    return 0;
}

/* The presented columns (--columns, else all). Returns an exit code. */
static int scan_columns(fl_scan_t *sc) {
    size_t n = fluss_table_column_count(sc->t);
    sc->cols = calloc(n + 1, sizeof(int32_t));
    if (!sc->o.columns) {
        for (size_t i = 0; i < n; i++) sc->cols[sc->ncols++] = (int32_t)i;
        return 0;
    }
    char *copy = strdup(sc->o.columns), *save = NULL;
    int rc = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        int idx = fluss_table_column_index(sc->t, tok);
        if (idx < 0 || sc->ncols >= n) {
            fprintf(stderr, "fluss: unknown or repeated column '%s'\n", tok);
            rc = 2;
        } else {
            sc->cols[sc->ncols++] = idx;
        }
    }
    free(copy);
    return rc;
}

static void scan_add_target(fl_scan_t *sc, int64_t pid, const char *pname, int32_t bucket) {
    sc->targets = realloc(sc->targets, (sc->count + 1) * sizeof(*sc->targets));
    if (!sc->targets) abort();
    fl_scan_target_t *g = &sc->targets[sc->count++];
    g->pid = pid;
    g->pname = pname ? strdup(pname) : NULL;
    g->bucket = bucket;
    g->start = FLUSS_OFFSET_EARLIEST;
    g->stop = 0;
}

static fl_scan_target_t *scan_find(fl_scan_t *sc, int64_t pid, int32_t bucket) {
    for (size_t i = 0; i < sc->count; i++)
        if (sc->targets[i].pid == pid && sc->targets[i].bucket == bucket) return &sc->targets[i];
    return NULL;
}

/* Prints row r of b (from target g), or with a merge records it as its
 * key's row (gone for -U and -D). */
static void scan_emit(fl_scan_t *sc, const fluss_record_batch_t *b, size_t r,
                      const fl_scan_target_t *g, char *buf) {
    if (!sc->merge) {
        print_row(stdout, b, r, sc->o.fmt, sc->o.changelog, g->pname, buf);
        return;
    }
    char *key = NULL, *line = NULL;
    size_t key_len = 0, line_len = 0;
    FILE *k = open_memstream(&key, &key_len);
    if (!k) abort();
    fprintf(k, "%lld;", (long long)g->pid);
    for (size_t i = 0; i < sc->nkey; i++) {
        size_t n = fluss_record_batch_value_text(b, r, sc->key_at[i], 0, buf, FL_CLI_VALUE_MAX);
        if (n >= FL_CLI_VALUE_MAX) n = FL_CLI_VALUE_MAX - 1;
        fprintf(k, "%zu:", n);
        fwrite(buf, 1, n, k);
    }
    fclose(k);
    fluss_change_type_t ct = fluss_record_batch_change_type(b, r);
    bool gone = ct == FLUSS_CHANGE_UPDATE_BEFORE || ct == FLUSS_CHANGE_DELETE;
    if (!gone) {
        FILE *l = open_memstream(&line, &line_len);
        if (!l) abort();
        print_row(l, b, r, sc->o.fmt, false, g->pname, buf);
        fclose(l);
    }
    fl_cli_merge_put(sc->merge, key, key_len, gone ? NULL : line, line_len, g->pid, g->bucket,
                     fluss_record_batch_offset(b, r));
    free(key);
    free(line);
}

/* A PK lake table read once from the earliest offsets (not --follow, not
 * --changelog) is merged by key; its printed columns must hold the key.
 * Returns an exit code. */
static int scan_merge_setup(fl_scan_t *sc) {
    const int32_t *pk;
    size_t n = fluss_table_primary_key(sc->t, &pk);
    if (!n || sc->o.follow || sc->o.changelog || sc->o.lake_only) return 0;
    sc->key_at = calloc(n, sizeof(size_t));
    if (!sc->key_at) abort();
    for (size_t i = 0; i < n; i++) {
        size_t at = sc->ncols;
        for (size_t c = 0; c < sc->ncols; c++)
            if (sc->cols[c] == pk[i]) at = c;
        if (at == sc->ncols) {
            fprintf(stderr,
                    "fluss: a union read of primary-key table %s merges rows by key: --columns "
                    "must name the primary key (%s), or read --changelog\n",
                    sc->o.path, fluss_table_column_name(sc->t, (size_t)pk[i]));
            return 2;
        }
        sc->key_at[sc->nkey++] = at;
    }
    sc->merge = fl_cli_merge_new();
    return 0;
}

/* Start and stop offsets of targets[first..count) (one partition's
 * buckets at a time), per --from; new targets of a running --follow scan
 * (earliest true) start at the beginning of their partition. */
static int scan_offsets(fl_scan_t *sc, size_t first, bool earliest, fluss_error_t *err) {
    int32_t nb = fluss_table_bucket_count(sc->t);
    int64_t *off = calloc((size_t)nb, sizeof(int64_t));
    int rc = 0;
    for (size_t i = first; i < sc->count && !rc; i += (size_t)nb) {
        fl_scan_target_t *g = &sc->targets[i];
        if (!sc->o.follow) {
            rc = fluss_table_list_partition_offsets(sc->t, g->pid, NULL, (size_t)nb,
                                                    FLUSS_OFFSETS_LATEST, 0, off, err);
            for (int32_t b = 0; !rc && b < nb; b++) g[b].stop = off[b];
        }
        if (rc || earliest) continue;
        if (sc->o.from_ts >= 0 || (strcmp(sc->o.from, "latest") == 0 && sc->o.follow)) {
            bool ts = sc->o.from_ts >= 0;
            rc = fluss_table_list_partition_offsets(sc->t, g->pid, NULL, (size_t)nb,
                                                    ts ? FLUSS_OFFSETS_TIMESTAMP : FLUSS_OFFSETS_LATEST,
                                                    ts ? sc->o.from_ts : 0, off, err);
            for (int32_t b = 0; !rc && b < nb; b++) g[b].start = off[b];
        } else if (strcmp(sc->o.from, "latest") == 0) {
            for (int32_t b = 0; b < nb; b++) g[b].start = g[b].stop;
        }
    }
    free(off);
    return rc ? 1 : 0;
}

/* Adds the buckets of the partitions --partition names (all of them
 * without it) that are not targets yet; *added counts them. */
static int scan_discover(fl_scan_t *sc, size_t *added, fluss_error_t *err) {
    fluss_partition_info_t *infos = NULL;
    size_t n = 0;
    *added = 0;
    if (fluss_partition_list(sc->client, sc->db, sc->table, sc->o.partition, &infos, &n, err))
        return 1;
    int32_t nb = fluss_table_bucket_count(sc->t);
    for (size_t i = 0; i < n; i++) {
        if (scan_find(sc, infos[i].partition_id, 0)) continue;
        for (int32_t b = 0; b < nb; b++) scan_add_target(sc, infos[i].partition_id, infos[i].name, b);
        *added += (size_t)nb;
    }
    fluss_partition_infos_free(infos, n);
    return 0;
}

/* --partition names partition keys only (LIST_PARTITION_INFOS with
 * another key is the server's to refuse, and flussd lists nothing).
 * Returns an exit code. */
static int scan_check_partition(const fl_scan_t *sc, bool partitioned) {
    if (!partitioned) {
        fprintf(stderr, "fluss: %s is not partitioned; --partition does not apply\n", sc->o.path);
        return 2;
    }
    const int32_t *keys;
    size_t nk = fluss_table_partition_keys(sc->t, &keys);
    char *copy = strdup(sc->o.partition), *save = NULL;
    int rc = 0;
    for (char *item = strtok_r(copy, ",", &save); item && !rc; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (eq) *eq = '\0';
        while (*item == ' ') item++;
        char *end = item + strlen(item);
        while (end > item && end[-1] == ' ') *--end = '\0';
        int col = fluss_table_column_index(sc->t, item);
        size_t k = 0;
        while (k < nk && keys[k] != col) k++;
        if (!eq || col < 0 || k == nk) {
            fprintf(stderr, "fluss: --partition: '%s' is not a partition key (K=V,...)\n", item);
            rc = 2;
        }
    }
    free(copy);
    return rc;
}

/* Subscribes targets[first..count) that have something to read: a
 * union read at their lake rows, else at their start offsets. */
static int scan_subscribe(fl_scan_t *sc, size_t first, fluss_error_t *err) {
    for (size_t i = first; i < sc->count; i++) {
        const fl_scan_target_t *g = &sc->targets[i];
        if (!sc->o.follow && (g->stop == 0 || (g->start >= 0 && g->start >= g->stop))) continue;
        if (fluss_union_scanner_subscribe(sc->s, g->pid, g->bucket,
                                          sc->unions ? FLUSS_OFFSET_LAKE : g->start, err))
            return 1;
    }
    return 0;
}

/* Without --follow: unsubscribes the buckets read up to their stop
 * offsets; false when none is left. */
static bool scan_left(fl_scan_t *sc) {
    bool left = false;
    for (size_t i = 0; i < sc->count; i++) {
        const fl_scan_target_t *g = &sc->targets[i];
        int64_t pos = fluss_union_scanner_position(sc->s, g->pid, g->bucket);
        if (pos == -1) continue;
        if (pos >= 0 && pos >= g->stop) fluss_union_scanner_unsubscribe(sc->s, g->pid, g->bucket);
        else left = true;
    }
    return left;
}

/* Whether this scan reads the table's lake first: a lake table, from the
 * earliest offsets, not --log-only. */
static bool scan_unions(const fl_scan_t *sc) {
    const char *en = fluss_table_property(sc->t, "table.datalake.enabled");
    return en && strcasecmp(en, "true") == 0 && !sc->o.log_only &&
           strcmp(sc->o.from, "earliest") == 0;
}

/* Polls and prints until the stop offsets (or the limit, or a signal
 * with --follow; with --lake-only until the lake rows are read): a union
 * read's lake rows first, whole (the stop offsets are the log's), then
 * the log. Returns the rows printed; *exit_code on failure. */
static long long scan_loop(fl_scan_t *sc, bool partitioned, char *buf, long long printed,
                           int *exit_code) {
    fluss_error_t err;
    size_t added;
    bool pushdown = true;
    int64_t next_discover = fl_cli_now_ms() + FL_CLI_DISCOVER_MS;
    while (!*exit_code && !g_stop && (sc->merge || sc->o.limit < 0 || printed < sc->o.limit)) {
        if (!sc->o.follow && !scan_left(sc)) break;
        if (sc->o.follow && partitioned && fl_cli_now_ms() >= next_discover) {
            size_t first = sc->count;
            next_discover = fl_cli_now_ms() + FL_CLI_DISCOVER_MS;
            if (scan_discover(sc, &added, &err) || scan_offsets(sc, first, true, &err) ||
                scan_subscribe(sc, first, &err)) {
                *exit_code = fail_err(&err);
                break;
            }
        }
        fluss_record_batch_t *batch = NULL;
        if (fluss_union_scanner_poll(sc->s, FL_CLI_POLL_MS, &batch, &err)) {
            if (err.code == FLUSS_ERR_INVALID_COLUMN_PROJECTION && sc->o.columns && pushdown) {
                /* the server cannot project: fetch whole batches and project here */
                fprintf(stderr, "fluss: note: %s; projecting on the client instead\n", err.message);
                pushdown = false;
                fluss_union_scanner_set_projection_pushdown(sc->s, false);
                continue;
            }
            *exit_code = fail_err(&err);
            break;
        }
        bool lake = fluss_union_scanner_in_lake(sc->s);
        if (sc->o.lake_only && !lake) {
            fluss_record_batch_free(batch);
            break;
        }
        if (!batch) continue;
        const fl_scan_target_t *g = scan_find(sc, fluss_record_batch_partition_id(batch),
                                              fluss_record_batch_bucket(batch));
        size_t rows = fluss_record_batch_row_count(batch);
        for (size_t r = 0; g && r < rows && (sc->merge || sc->o.limit < 0 || printed < sc->o.limit);
             r++) {
            if (!sc->o.follow && !lake && fluss_record_batch_offset(batch, r) >= g->stop) break;
            scan_emit(sc, batch, r, g, buf);
            printed++;
        }
        fflush(stdout);
        fluss_record_batch_free(batch);
    }
    return printed;
}

int fl_cli_scan(const char *bootstrap, int argc, char **argv) {
    fl_scan_t sc;
    memset(&sc, 0, sizeof(sc));
    int rc = scan_args(argc, argv, &sc.o);
    if (rc == 3) return 0;
    if (rc) {
        fprintf(stderr, "fluss: bad arguments for scan\n\n");
        usage_scan(stderr);
        return 2;
    }
    if (fl_cli_split_path(sc.o.path, sc.db, sizeof(sc.db), &sc.table)) return 2;
    if ((rc = fl_cli_open_table(bootstrap, sc.o.path, &sc.client, &sc.t))) return rc;
    fluss_error_t err;
    const int32_t *pkeys;
    bool partitioned = fluss_table_partition_keys(sc.t, &pkeys) > 0;
    char *buf = malloc(FL_CLI_VALUE_MAX);
    int exit_code = scan_columns(&sc);
    if (!exit_code && sc.o.partition) exit_code = scan_check_partition(&sc, partitioned);
    size_t added = 0;
    if (!exit_code && partitioned) exit_code = scan_discover(&sc, &added, &err) ? fail_err(&err) : 0;
    for (int32_t b = 0; !exit_code && !partitioned && b < fluss_table_bucket_count(sc.t); b++)
        scan_add_target(&sc, -1, NULL, b);
    if (!exit_code && scan_offsets(&sc, 0, false, &err)) exit_code = fail_err(&err);
    if (!exit_code &&
        (fluss_union_scanner_new(sc.client, sc.t, sc.o.columns ? sc.cols : NULL, sc.ncols, &sc.s,
                                 &err) ||
         (sc.o.filter && fluss_union_scanner_set_filter(sc.s, sc.o.filter, &err)))) {
        fl_cli_fail(&err);
        exit_code = err.code == FLUSS_ERR__INVALID_ARG ? 2 : 1;
    }
    bool unions = sc.unions = !exit_code && scan_unions(&sc);
    if (!exit_code && sc.o.lake_only && !unions) {
        fprintf(stderr, "fluss: %s is not a lake table; --lake-only does not apply\n", sc.o.path);
        exit_code = 2;
    }
    if (!exit_code && unions) exit_code = scan_merge_setup(&sc);
    long long printed = 0;
    if (!exit_code) {
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        print_header(sc.t, sc.cols, sc.ncols, sc.o.fmt, sc.o.changelog, partitioned);
        fflush(stdout);
    }
    if (!exit_code && scan_subscribe(&sc, 0, &err)) exit_code = fail_err(&err);
    if (!exit_code) printed = scan_loop(&sc, partitioned, buf, printed, &exit_code);
    if (!exit_code && sc.merge) {
        size_t live = fl_cli_merge_print(sc.merge, stdout, sc.o.limit);
        if (sc.o.stats) fprintf(stderr, "merged by key: %zu rows\n", live);
    }
    if (sc.o.stats && sc.s)
        fprintf(stderr, "scanned %lld rows, %lld batches, %lld bytes fetched\n", printed,
                (long long)fluss_log_scanner_batches_fetched(fluss_union_scanner_log(sc.s)),
                (long long)fluss_log_scanner_bytes_fetched(fluss_union_scanner_log(sc.s)));
    if (sc.o.stats && sc.s && fluss_union_scanner_lake_snapshot(sc.s) >= 0)
        fprintf(stderr, "lake: %lld rows from %zu files of snapshot %lld\n",
                (long long)fluss_union_scanner_lake_rows(sc.s), fluss_union_scanner_lake_files(sc.s),
                (long long)fluss_union_scanner_lake_snapshot(sc.s));
    free(buf);
    fl_cli_merge_free(sc.merge);
    free(sc.key_at);
    fluss_union_scanner_destroy(sc.s);
    for (size_t i = 0; i < sc.count; i++) free(sc.targets[i].pname);
    free(sc.targets);
    free(sc.cols);
    fluss_table_close(sc.t);
    fluss_client_destroy(sc.client);
    return exit_code;
}
