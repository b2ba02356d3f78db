/*
 * perf_main.c — `fluss-perf`, a load generator for any Fluss server
 * (fluss-c's flussd or Apache Fluss), in the spirit of librdkafka's
 * rdkafka_performance and Kafka's producer/consumer perf tests:
 *   fluss-perf produce  N writers append sized rows at a target rate
 *   fluss-perf consume  N scanners read a table, whole or projected
 *   fluss-perf latency  append→poll latency inside one process
 *   fluss-perf upsert   N upsert writers on a primary-key table (perf_kv.c)
 *   fluss-perf lookup   N lookupers of random keys, call latency (perf_kv.c)
 * It prints a progress line per second on stderr and a summary (text,
 * or one JSON line with --json) on stdout, including its own CPU time
 * (getrusage) so a reader can tell whether the generator was the
 * bottleneck. Exit codes: 0 ok, 1 a server / connection error, 2 bad
 * usage.
 *
 * Thread rule: main parses options, prepares the table, starts the
 * worker threads (perf_produce.c, perf_consume.c) and then only reads
 * their atomic counters; the one global is the stop flag.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "perf_int.h"

atomic_bool fl_perf_stop = false;

int64_t fl_perf_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

double fl_perf_now_s(void) { return (double)fl_perf_now_us() / 1e6; }

void fl_perf_error(fl_perf_stats_t *st, const char *what, const fluss_error_t *err) {
    pthread_mutex_lock(&st->error_lock);
    if (atomic_fetch_add(&st->errors, 1) == 0)
        snprintf(st->first_error, sizeof(st->first_error), "%s: %s (%s, code %d)", what,
                 err->message, fluss_error_name(err->code), err->code);
    pthread_mutex_unlock(&st->error_lock);
}

void fl_perf_worker_done(fl_perf_stats_t *st) {
    int64_t now = fl_perf_now_us(), end = atomic_load(&st->end_us);
    while (now > end && !atomic_compare_exchange_weak(&st->end_us, &end, now)) {
    }
    atomic_fetch_sub(&st->running, 1);
}

void fl_perf_split_path(const char *path, char *db, size_t db_cap, const char **table) {
    const char *dot = strchr(path, '.');
    if (!dot) {
        snprintf(db, db_cap, "fluss");
        *table = path;
        return;
    }
    snprintf(db, db_cap, "%.*s", (int)(dot - path), path);
    *table = dot + 1;
}

static void fl_perf_on_signal(int sig) {
    (void)sig;
    atomic_store(&fl_perf_stop, true);
}

static void fl_perf_usage(FILE *f) {
    fprintf(f,
        "usage: fluss-perf produce|consume|latency|upsert|lookup [options]\n"
        "\n"
        "  produce   N writers append rows \"id BIGINT, ts BIGINT, payload BYTES\"\n"
        "  consume   N scanners read a table (whole, or --columns), from earliest or latest\n"
        "  latency   append->poll latency: writers put their send time in ts, a scanner of\n"
        "            the same process tailing the table reports now - ts per row\n"
        "  upsert    N upsert writers on a primary-key table \"id BIGINT NOT NULL, v BYTES\"\n"
        "            (created when missing), keys 0..keys-1 in order, then again\n"
        "  lookup    N lookupers of random keys of that table; latency per lookup call\n"
        "\n"
        "common:\n"
        "  --bootstrap-server HOST:PORT  ($FLUSS_BOOTSTRAP, else 127.0.0.1:9123)\n"
        "  --table DB.TABLE     produce/latency: created when missing (default\n"
        "                       perf.perf_<ms>); consume: required, a comma list reads several\n"
        "  --records N          total records (default produce 100000, latency 10000;\n"
        "                       consume: up to the latest offsets at start)\n"
        "  --duration S         stop after S seconds instead\n"
        "  --threads N          writers or scanners, each with its own connections (default 1;\n"
        "                       consume: one per table)\n"
        "  --json               the summary as one JSON line (progress stays on stderr)\n"
        "  --quiet              no progress lines\n"
        "  --timeout-ms N       request timeout (default 30000)\n"
        "produce, latency:\n"
        "  --record-size B      bytes per row (default 1024; the payload gets B - 20)\n"
        "  --payload text|random  letters A-Z (default, compressible) or random bytes\n"
        "  --payload-columns N  a created table gets N BYTES columns payload, payload_1, ...\n"
        "                       sharing the payload (default 1; for projection tests)\n"
        "  --batch-bytes B      writer batch size per bucket (default 1 MiB)\n"
        "  --batch-rows N       the same as rows: batch bytes = N x record size\n"
        "  --linger-ms N        (default 100; latency mode: 0)\n"
        "  --rate R             records/s over all writers (0 = unlimited; latency default 1000)\n"
        "  --acks all|-1|1      (default all)\n"
        "  --max-inflight N     PRODUCE_LOG requests in flight per writer (default 5)\n"
        "  --no-idempotence     plain writers (no INIT_WRITER, no batch sequences)\n"
        "  --replay             measure the server: each thread builds one PRODUCE_LOG\n"
        "                       request (one batch of --batch-bytes) and sends it again and\n"
        "                       again to its bucket's leader, --max-inflight at a time\n"
        "  --compression NONE|LZ4_FRAME|ZSTD  of a created table (default: the server's;\n"
        "                       upsert: its changelog's)\n"
        "  --buckets N          of a created table (default 1)\n"
        "consume:\n"
        "  --from earliest|latest  (default earliest)\n"
        "  --columns a,b        projection, pushed down to the server\n"
        "  --buckets N          read only buckets 0..N-1\n"
        "upsert, lookup (and --threads, --records, --duration, --rate, --buckets,\n"
        "--batch-bytes, --linger-ms, --max-inflight, --acks as above):\n"
        "  --keys N             key space (default 100000)\n"
        "  --value-size B       bytes of the value column (default 100)\n"
        "  --lookup-batch N     keys per lookup call (default 1)\n");
}

enum {
    OPT_BOOTSTRAP = 256, OPT_TABLE, OPT_RECORDS, OPT_DURATION, OPT_THREADS, OPT_JSON, OPT_QUIET,
    OPT_TIMEOUT, OPT_RECORD_SIZE, OPT_PAYLOAD, OPT_BATCH_BYTES, OPT_BATCH_ROWS, OPT_LINGER,
    OPT_RATE, OPT_ACKS, OPT_INFLIGHT, OPT_NO_IDEMPOTENCE, OPT_REPLAY, OPT_COMPRESSION, OPT_BUCKETS, OPT_FROM,
    OPT_COLUMNS, OPT_PAYLOAD_COLUMNS, OPT_KEYS, OPT_VALUE_SIZE, OPT_LOOKUP_BATCH, OPT_HELP
};

static const struct option fl_perf_longopts[] = {
    {"bootstrap-server", required_argument, NULL, OPT_BOOTSTRAP},
    {"table", required_argument, NULL, OPT_TABLE},
    {"records", required_argument, NULL, OPT_RECORDS},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"json", no_argument, NULL, OPT_JSON},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"timeout-ms", required_argument, NULL, OPT_TIMEOUT},
    {"record-size", required_argument, NULL, OPT_RECORD_SIZE},
    {"payload", required_argument, NULL, OPT_PAYLOAD},
    {"batch-bytes", required_argument, NULL, OPT_BATCH_BYTES},
    {"batch-rows", required_argument, NULL, OPT_BATCH_ROWS},
    {"linger-ms", required_argument, NULL, OPT_LINGER},
    {"rate", required_argument, NULL, OPT_RATE},
    {"acks", required_argument, NULL, OPT_ACKS},
    {"max-inflight", required_argument, NULL, OPT_INFLIGHT},
    {"no-idempotence", no_argument, NULL, OPT_NO_IDEMPOTENCE},
    {"replay", no_argument, NULL, OPT_REPLAY},
    {"compression", required_argument, NULL, OPT_COMPRESSION},
    {"buckets", required_argument, NULL, OPT_BUCKETS},
    {"from", required_argument, NULL, OPT_FROM},
    {"columns", required_argument, NULL, OPT_COLUMNS},
    {"payload-columns", required_argument, NULL, OPT_PAYLOAD_COLUMNS},
    {"keys", required_argument, NULL, OPT_KEYS},
    {"value-size", required_argument, NULL, OPT_VALUE_SIZE},
    {"lookup-batch", required_argument, NULL, OPT_LOOKUP_BATCH},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static int fl_perf_bad(const char *fmt, const char *arg) {
    fprintf(stderr, "fluss-perf: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(fluss-perf --help for usage)\n");
    return 2;
}

/* A number >= min from text, or -1 (with a message) when it is not one. */
static int fl_perf_num(const char *s, double min, double *out) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || v < min) {
        fl_perf_bad("bad number %s", s);
        return -1;
    }
    *out = v;
    return 0;
}

static int fl_perf_split_tables(fl_perf_opts_t *o, const char *list) {
    char *copy = strdup(list);
    if (!copy) abort();
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (o->table_count >= FL_PERF_TABLES_MAX) return fl_perf_bad("more than %s tables", "1024");
        o->tables[o->table_count] = strdup(tok);
        if (!o->tables[o->table_count++]) abort();
    }
    free(copy);
    return o->table_count ? 0 : fl_perf_bad("--table %s names no table", list);
}

static int fl_perf_opt_value(fl_perf_opts_t *o, int c, const char *arg, double *batch_rows) {
    double v = 0;
    switch (c) {
    case OPT_BOOTSTRAP: o->bootstrap = arg; return 0;
    case OPT_TABLE: return fl_perf_split_tables(o, arg);
    case OPT_JSON: o->json = true; return 0;
    case OPT_QUIET: o->quiet = true; return 0;
    case OPT_NO_IDEMPOTENCE: o->idempotent = false; return 0;
    case OPT_REPLAY: o->replay = true; return 0;
    case OPT_COLUMNS: o->columns = arg; return 0;
    case OPT_PAYLOAD:
        if (strcmp(arg, "text") && strcmp(arg, "random")) return fl_perf_bad("--payload %s: text or random", arg);
        o->random_payload = strcmp(arg, "random") == 0;
        return 0;
    case OPT_FROM:
        if (strcmp(arg, "earliest") && strcmp(arg, "latest")) return fl_perf_bad("--from %s: earliest or latest", arg);
        o->from_latest = strcmp(arg, "latest") == 0;
        return 0;
    case OPT_ACKS:
        if (!strcmp(arg, "all") || !strcmp(arg, "-1")) o->acks = -1;
        else if (!strcmp(arg, "1")) o->acks = 1;
        else if (!strcmp(arg, "0")) return fl_perf_bad("--acks %s: libfluss's writer always waits for an answer (all or 1)", arg);
        else return fl_perf_bad("--acks %s: all, -1 or 1", arg);
        return 0;
    case OPT_COMPRESSION:
        if (strcmp(arg, "NONE") && strcmp(arg, "LZ4_FRAME") && strcmp(arg, "ZSTD"))
            return fl_perf_bad("--compression %s: NONE, LZ4_FRAME or ZSTD", arg);
        o->compression = arg;
        return 0;
    default: break;
    }
    if (fl_perf_num(arg, 0, &v)) return 2;
    switch (c) {
    case OPT_RECORDS: o->records = (int64_t)v; break;
    case OPT_DURATION: o->duration_s = v; break;
    case OPT_THREADS: o->threads = (int)v; break;
    case OPT_TIMEOUT: o->timeout_ms = (int)v; break;
    case OPT_RECORD_SIZE: o->record_size = (int)v; break;
    case OPT_BATCH_BYTES: o->batch_bytes = (int64_t)v; break;
    case OPT_BATCH_ROWS: *batch_rows = v; break;
    case OPT_LINGER: o->linger_ms = (int)v; break;
    case OPT_RATE: o->rate = v; break;
    case OPT_INFLIGHT: o->max_inflight = (int)v; break;
    case OPT_BUCKETS: o->buckets = (int)v; break;
    case OPT_PAYLOAD_COLUMNS: o->payload_columns = (int)v; break;
    case OPT_KEYS: o->keys = (int64_t)v; break;
    case OPT_VALUE_SIZE: o->value_size = (int)v; break;
    case OPT_LOOKUP_BATCH: o->lookup_batch = (int)v; break;
    default: return 2;
    }
    return 0;
}

static int fl_perf_parse(fl_perf_opts_t *o, int argc, char **argv) {
    memset(o, 0, sizeof(*o));
    o->record_size = 1024;
    o->linger_ms = 100;
    o->rate = -1;
    o->acks = -1;
    o->max_inflight = 5;
    o->idempotent = true;
    o->timeout_ms = 30000;
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fl_perf_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : -1;
    }
    if (!strcmp(argv[1], "produce")) o->mode = FL_PERF_PRODUCE;
    else if (!strcmp(argv[1], "consume")) o->mode = FL_PERF_CONSUME;
    else if (!strcmp(argv[1], "latency")) o->mode = FL_PERF_LATENCY;
    else if (!strcmp(argv[1], "upsert")) o->mode = FL_PERF_UPSERT;
    else if (!strcmp(argv[1], "lookup")) o->mode = FL_PERF_LOOKUP;
    else return fl_perf_bad("unknown mode %s (produce, consume, latency, upsert or lookup)", argv[1]);
    double batch_rows = 0;
    optind = 2;
    int c;
    while ((c = getopt_long(argc, argv, "h", fl_perf_longopts, NULL)) != -1) {
        if (c == 'h' || c == OPT_HELP) {
            fl_perf_usage(stdout);
            return -1;
        }
        if (c == '?') return 2;
        int rc = fl_perf_opt_value(o, c, optarg, &batch_rows);
        if (rc) return rc;
    }
    if (optind < argc) return fl_perf_bad("unexpected argument %s", argv[optind]);
    if (!o->bootstrap) o->bootstrap = getenv("FLUSS_BOOTSTRAP");
    if (!o->bootstrap || !*o->bootstrap) o->bootstrap = "127.0.0.1:9123";
    if (batch_rows > 0) o->batch_bytes = (int64_t)(batch_rows * o->record_size);
    if (o->rate < 0) o->rate = o->mode == FL_PERF_LATENCY ? 1000 : 0;
    if (o->mode != FL_PERF_CONSUME && o->records == 0 && o->duration_s == 0)
        o->records = o->mode == FL_PERF_LATENCY ? 10000 : 100000;
    if (o->mode == FL_PERF_CONSUME && o->table_count == 0) return fl_perf_bad("consume needs --table%s", "");
    if (o->mode != FL_PERF_CONSUME && o->table_count > 1)
        return fl_perf_bad("%s writes one table", argv[1]);
    if (o->mode == FL_PERF_CONSUME && o->from_latest && o->records == 0 && o->duration_s == 0)
        o->duration_s = 10;
    if (o->payload_columns <= 0) o->payload_columns = 1;
    if (o->payload_columns > FL_PERF_COLUMNS_MAX - 2)
        return fl_perf_bad("--payload-columns: at most %s", "62");
    if (o->threads <= 0) o->threads = o->mode == FL_PERF_CONSUME ? o->table_count : 1;
    if (o->threads > FL_PERF_THREADS_MAX) return fl_perf_bad("more than %s threads", "1024");
    if (o->keys <= 0) o->keys = 100000;
    if (o->value_size <= 0) o->value_size = 100;
    if (o->lookup_batch <= 0) o->lookup_batch = 1;
    if (o->mode == FL_PERF_UPSERT || o->mode == FL_PERF_LOOKUP)
        o->record_size = o->value_size + 8; /* the key's BIGINT + the value */
    if (o->lookup_batch > 100000) return fl_perf_bad("--lookup-batch: at most %s", "100000");
    if (o->replay && (o->mode == FL_PERF_UPSERT || o->mode == FL_PERF_LOOKUP))
        return fl_perf_bad("--replay is for %s", "produce");
    return 0;
}

/* ---- the table of produce and latency ---- */

/* A new table's buckets get their leaders asynchronously; writing before
 * every bucket answers LIST_OFFSETS raced with the reference server's
 * leader set-up (its writer state came back empty after the first batch:
 * OUT_OF_ORDER_SEQUENCE on the second), so wait until all answer. */
int fl_perf_wait_leaders(fluss_client_t *c, const char *db, const char *name, int timeout_ms,
                         fluss_error_t *err) {
    double end = fl_perf_now_s() + timeout_ms / 1e3;
    for (;;) {
        fluss_table_t *t = NULL;
        int rc = fluss_table_open(c, db, name, &t, err);
        if (!rc) {
            int32_t n = fluss_table_bucket_count(t);
            int64_t *offs = calloc((size_t)n, sizeof(int64_t));
            if (!offs) abort();
            rc = fluss_table_list_offsets(t, NULL, (size_t)n, FLUSS_OFFSETS_LATEST, 0, offs, err);
            free(offs);
            fluss_table_close(t);
        }
        if (!rc || fl_perf_now_s() > end) return rc;
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

int fl_perf_ensure_table(const fl_perf_opts_t *o, const fluss_table_spec_t *spec, bool *created,
                         fluss_error_t *err) {
    char db[256];
    const char *name;
    fl_perf_split_path(o->tables[0], db, sizeof(db), &name);
    fluss_client_t *c = NULL;
    *created = false;
    int rc = fluss_client_new(o->bootstrap, o->timeout_ms, &c, err);
    if (!rc) rc = fluss_database_create(c, db, NULL, NULL, true, err);
    bool exists = false;
    if (!rc) rc = fluss_table_exists(c, db, name, &exists, err);
    if (!rc && !exists) {
        rc = fluss_table_create(c, db, name, spec, true, err);
        *created = rc == 0;
    }
    if (!rc) rc = fl_perf_wait_leaders(c, db, name, o->timeout_ms, err);
    fluss_client_destroy(c);
    return rc;
}

static int fl_perf_prepare_table(fl_perf_opts_t *o, fluss_error_t *err) {
    if (o->table_count == 0) {
        char name[96];
        snprintf(name, sizeof(name), "perf.perf_%lld", (long long)time(NULL) * 1000 + (fl_perf_now_us() / 1000) % 1000);
        o->tables[o->table_count++] = strdup(name);
    }
    char prop[128];
    snprintf(prop, sizeof(prop), "table.log.arrow.compression.type=%s", o->compression ? o->compression : "");
    const char *props[2] = {o->compression ? prop : NULL, NULL};
    char schema[4096] = "id BIGINT, ts BIGINT";
    for (int k = 0; k < o->payload_columns; k++) {
        char col[32];
        fl_perf_payload_name(k, col, sizeof(col));
        size_t len = strlen(schema);
        snprintf(schema + len, sizeof(schema) - len, ", %s BYTES", col);
    }
    fluss_table_spec_t spec = {0};
    spec.schema = schema;
    spec.bucket_count = o->buckets > 0 ? o->buckets : 1;
    spec.properties = props;
    bool created;
    int rc = fl_perf_ensure_table(o, &spec, &created, err);
    if (!rc && !created && !o->quiet && (o->compression || o->buckets))
        fprintf(stderr, "fluss-perf: %s exists; --compression and --buckets are not applied\n", o->tables[0]);
    return rc;
}

/* Bucket counts of the tables consume reads. */
static int fl_perf_bucket_counts(const fl_perf_opts_t *o, int32_t *counts, fluss_error_t *err) {
    fluss_client_t *c = NULL;
    int rc = fluss_client_new(o->bootstrap, o->timeout_ms, &c, err);
    for (int i = 0; !rc && i < o->table_count; i++) {
        char db[256];
        const char *name;
        fl_perf_split_path(o->tables[i], db, sizeof(db), &name);
        fluss_table_t *t = NULL;
        rc = fluss_table_open(c, db, name, &t, err);
        if (!rc) counts[i] = fluss_table_bucket_count(t);
        fluss_table_close(t);
    }
    fluss_client_destroy(c);
    return rc;
}

/* ---- workers ---- */

typedef struct fl_perf_run {
    fl_perf_opts_t *o;
    fl_perf_stats_t *prod; /* produce, latency */
    fl_perf_stats_t *cons; /* consume, latency */
    fl_perf_producer_t *producers;
    int producer_count;
    fl_perf_consumer_t *consumers;
    int consumer_count;
    uint8_t *pool;
    size_t pool_len;
    atomic_bool consumer_ready;
    _Atomic int64_t latency_target;
    double start_s;
    double cpu0_user_s, cpu0_sys_s; /* the process's CPU when the run started */
} fl_perf_run_t;

static fl_perf_stats_t *fl_perf_stats_new(void) {
    fl_perf_stats_t *st = calloc(1, sizeof(*st));
    if (!st) abort();
    fl_perf_hist_init(&st->lat_window);
    fl_perf_hist_init(&st->lat_total);
    pthread_mutex_init(&st->error_lock, NULL);
    return st;
}

static void fl_perf_start_producers(fl_perf_run_t *r) {
    fl_perf_opts_t *o = r->o;
    r->producer_count = o->threads;
    r->producers = calloc((size_t)o->threads, sizeof(*r->producers));
    if (!r->producers) abort();
    atomic_store(&r->prod->running, o->threads);
    for (int i = 0; i < o->threads; i++) {
        fl_perf_producer_t *p = &r->producers[i];
        p->o = o;
        p->st = r->prod;
        p->index = i;
        p->records = o->records / o->threads + (i < o->records % o->threads ? 1 : 0);
        if (o->records > 0 && p->records == 0) p->records = -1; /* nothing to do */
        p->rate = o->rate / o->threads;
        p->pool = r->pool;
        p->pool_len = r->pool_len;
    }
    for (int i = 0; i < o->threads; i++) {
        if (r->producers[i].records < 0) {
            r->producers[i].records = 0;
            atomic_fetch_sub(&r->prod->running, 1);
            r->producers[i].o = NULL; /* not started */
            continue;
        }
        void *(*run)(void *) = o->replay ? fl_perf_replay_run : fl_perf_produce_run;
        if (o->mode == FL_PERF_UPSERT || o->mode == FL_PERF_LOOKUP) run = fl_perf_kv_run;
        if (pthread_create(&r->producers[i].thread, NULL, run, &r->producers[i])) abort();
    }
}

/* Thread i reads table i % T and, of that table's buckets (the first
 * --buckets), those with b % g == i / T, g = the threads on that table. */
static void fl_perf_assign(fl_perf_run_t *r, fl_perf_consumer_t *p, int i, const int32_t *counts) {
    fl_perf_opts_t *o = r->o;
    int T = o->table_count, N = o->threads, t = i % T;
    int g = (N - t + T - 1) / T, rank = i / T;
    int nb = counts[t];
    if (o->buckets > 0 && o->buckets < nb) nb = o->buckets;
    p->buckets = calloc((size_t)nb + 1, sizeof(int32_t));
    if (!p->buckets) abort();
    for (int b = 0; b < nb; b++)
        if (b % g == rank) p->buckets[p->bucket_count++] = b;
    p->table = o->tables[t];
}

static int fl_perf_start_consumers(fl_perf_run_t *r, int n, fluss_error_t *err) {
    fl_perf_opts_t *o = r->o;
    int32_t *counts = calloc((size_t)o->table_count, sizeof(int32_t));
    if (!counts) abort();
    int rc = fl_perf_bucket_counts(o, counts, err);
    if (rc) {
        free(counts);
        return rc;
    }
    r->consumer_count = n;
    r->consumers = calloc((size_t)n, sizeof(*r->consumers));
    if (!r->consumers) abort();
    atomic_store(&r->cons->running, n);
    for (int i = 0; i < n; i++) {
        fl_perf_consumer_t *p = &r->consumers[i];
        p->o = o;
        p->st = r->cons;
        p->measure_latency = o->mode == FL_PERF_LATENCY;
        p->ready = p->measure_latency ? &r->consumer_ready : NULL;
        p->target = &r->latency_target;
        fl_perf_assign(r, p, i, counts);
        if (pthread_create(&p->thread, NULL, fl_perf_consume_run, p)) abort();
    }
    free(counts);
    return 0;
}

/* ---- reporting ---- */

static double fl_perf_cpu_s(double *user, double *sys) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    *sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    return *user + *sys;
}

/* The stats the progress and summary talk about: what was acknowledged
 * (produce), read (consume) or received with its latency (latency). */
static bool fl_perf_writes(fl_perf_mode_t m) {
    return m == FL_PERF_PRODUCE || m == FL_PERF_UPSERT || m == FL_PERF_LOOKUP;
}

static fl_perf_stats_t *fl_perf_main_stats(const fl_perf_run_t *r) {
    return fl_perf_writes(r->o->mode) ? r->prod : r->cons;
}

static void fl_perf_progress(fl_perf_run_t *r, double now, double *last_t, int64_t *last_rec,
                             int64_t *last_bytes, fl_perf_hist_snap_t *total) {
    fl_perf_stats_t *st = fl_perf_main_stats(r);
    int64_t rec = atomic_load(&st->records), bytes = atomic_load(&st->bytes);
    fl_perf_hist_snap_t win;
    fl_perf_hist_snap_init(&win);
    fl_perf_hist_drain(&st->lat_window, &win);
    fl_perf_hist_merge(total, &win);
    double dt = now - *last_t;
    if (!r->o->quiet && dt > 0 && (dt >= 1.0 || rec != *last_rec)) {
        fprintf(stderr, "[%6.1f s] %12.0f rec/s %9.2f MB/s", now - r->start_s,
                (double)(rec - *last_rec) / dt, (double)(bytes - *last_bytes) / dt / 1e6);
        if (win.n)
            fprintf(stderr, "  %s p50 %.3f ms p99 %.3f ms",
                    r->o->mode == FL_PERF_LATENCY  ? "e2e"
                    : r->o->mode == FL_PERF_LOOKUP ? "lookup"
                                                   : "request",
                    fl_perf_hist_quantile_us(&win, 0.5) / 1e3, fl_perf_hist_quantile_us(&win, 0.99) / 1e3);
        fprintf(stderr, "  total %lld\n", (long long)rec);
    }
    *last_t = now;
    *last_rec = rec;
    *last_bytes = bytes;
}

static void fl_perf_join_producers(fl_perf_run_t *r) {
    for (int i = 0; i < r->producer_count; i++)
        if (r->producers[i].o) pthread_join(r->producers[i].thread, NULL);
    r->producer_count = 0;
    atomic_store(&r->latency_target, atomic_load(&r->prod->records));
}

/* Progress every second until the workers are done; ends the run at
 * --duration. Fills *total with every latency recorded. */
static void fl_perf_watch(fl_perf_run_t *r, fl_perf_hist_snap_t *total) {
    double last_t = r->start_s;
    int64_t last_rec = 0, last_bytes = 0;
    for (;;) {
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
        double now = fl_perf_now_s();
        if (r->o->duration_s > 0 && now - r->start_s >= r->o->duration_s) atomic_store(&fl_perf_stop, true);
        if (r->producer_count && atomic_load(&r->prod->running) == 0) fl_perf_join_producers(r);
        bool done = atomic_load(&fl_perf_main_stats(r)->running) == 0;
        if (now - last_t >= 1.0 || done)
            fl_perf_progress(r, now, &last_t, &last_rec, &last_bytes, total);
        if (done) return;
    }
}

/* ---- summary ---- */

typedef struct fl_perf_result {
    int64_t records, bytes, wire_bytes, requests, produced, found;
    int errors;
    double seconds, cpu_s, cpu_user_s, cpu_sys_s;
    double p50_ms, p99_ms, max_ms, avg_ms;  /* request (produce) or e2e (latency) latency */
    double req_p50_ms, req_p99_ms;          /* latency mode: the producers' request latency */
} fl_perf_result_t;

static const char *fl_perf_mode_name(fl_perf_mode_t m) {
    static const char *const names[] = {"produce", "consume", "latency", "upsert", "lookup"};
    return names[m];
}

static void fl_perf_collect(fl_perf_run_t *r, const fl_perf_hist_snap_t *lat, fl_perf_result_t *out) {
    fl_perf_stats_t *st = fl_perf_main_stats(r);
    memset(out, 0, sizeof(*out));
    int64_t end_us = atomic_load(&st->end_us);
    out->seconds = (end_us ? (double)end_us / 1e6 : fl_perf_now_s()) - r->start_s;
    out->records = atomic_load(&st->records);
    out->bytes = atomic_load(&st->bytes);
    out->wire_bytes = atomic_load(&st->wire_bytes);
    out->requests = atomic_load(&st->requests);
    out->found = atomic_load(&st->found);
    out->errors = atomic_load(&st->errors) + (r->prod && r->prod != st ? atomic_load(&r->prod->errors) : 0);
    fl_perf_cpu_s(&out->cpu_user_s, &out->cpu_sys_s);
    out->cpu_user_s -= r->cpu0_user_s;
    out->cpu_sys_s -= r->cpu0_sys_s;
    out->cpu_s = out->cpu_user_s + out->cpu_sys_s;
    out->p50_ms = fl_perf_hist_quantile_us(lat, 0.5) / 1e3;
    out->p99_ms = fl_perf_hist_quantile_us(lat, 0.99) / 1e3;
    out->max_ms = (double)lat->max_us / 1e3;
    out->avg_ms = lat->n ? (double)lat->sum_us / (double)lat->n / 1e3 : 0;
    if (r->o->mode == FL_PERF_LATENCY) {
        fl_perf_hist_snap_t req;
        fl_perf_hist_snap_init(&req);
        fl_perf_hist_drain(&r->prod->lat_total, &req);
        out->produced = atomic_load(&r->prod->records);
        out->req_p50_ms = fl_perf_hist_quantile_us(&req, 0.5) / 1e3;
        out->req_p99_ms = fl_perf_hist_quantile_us(&req, 0.99) / 1e3;
        out->wire_bytes = atomic_load(&r->prod->wire_bytes);
    }
}

static void fl_perf_print_json(const fl_perf_opts_t *o, const fl_perf_result_t *x) {
    double s = x->seconds > 0 ? x->seconds : 1e-9;
    printf("{\"mode\":\"%s\",\"table\":\"%s\",\"records\":%lld,\"seconds\":%.3f,"
           "\"records_per_s\":%.1f,\"mb_per_s\":%.3f,\"bytes\":%lld,\"wire_bytes\":%lld,"
           "\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,\"avg_ms\":%.3f,\"requests\":%lld,"
           "\"errors\":%d,\"cpu_s\":%.3f,\"cpu_user_s\":%.3f,\"cpu_sys_s\":%.3f,\"cpu_pct\":%.1f,"
           "\"threads\":%d,\"record_size\":%d,\"rate\":%.0f,\"acks\":%d,\"max_inflight\":%d,"
           "\"batch_bytes\":%lld,\"linger_ms\":%d,\"compression\":\"%s\",\"buckets\":%d,\"columns\":\"%s\","
           "\"from\":\"%s\"",
           fl_perf_mode_name(o->mode), o->table_count == 1 ? o->tables[0] : "(several)",
           (long long)x->records, x->seconds, (double)x->records / s, (double)x->bytes / s / 1e6,
           (long long)x->bytes, (long long)x->wire_bytes, x->p50_ms, x->p99_ms, x->max_ms, x->avg_ms,
           (long long)x->requests, x->errors, x->cpu_s, x->cpu_user_s, x->cpu_sys_s,
           100.0 * x->cpu_s / s, o->threads, o->record_size, o->rate, o->acks, o->max_inflight,
           (long long)o->batch_bytes, o->mode == FL_PERF_LATENCY ? 0 : o->linger_ms,
           o->compression ? o->compression : "default", o->buckets, o->columns ? o->columns : "",
           o->from_latest ? "latest" : "earliest");
    if (o->mode == FL_PERF_LATENCY)
        printf(",\"produced\":%lld,\"request_p50_ms\":%.3f,\"request_p99_ms\":%.3f",
               (long long)x->produced, x->req_p50_ms, x->req_p99_ms);
    if (o->mode == FL_PERF_UPSERT || o->mode == FL_PERF_LOOKUP)
        printf(",\"keys\":%lld,\"value_size\":%d,\"lookup_batch\":%d,\"found\":%lld",
               (long long)o->keys, o->value_size, o->lookup_batch, (long long)x->found);
    printf("}\n");
}

static void fl_perf_print_text(const fl_perf_opts_t *o, const fl_perf_result_t *x) {
    double s = x->seconds > 0 ? x->seconds : 1e-9;
    printf("%s %s: %lld records in %.2f s: %.0f records/s, %.2f MB/s", fl_perf_mode_name(o->mode),
           o->table_count == 1 ? o->tables[0] : "(several tables)", (long long)x->records, x->seconds,
           (double)x->records / s, (double)x->bytes / s / 1e6);
    if (o->mode == FL_PERF_PRODUCE || o->mode == FL_PERF_UPSERT)
        printf(" (%.2f MB/s as sent)\n  request latency", (double)x->wire_bytes / s / 1e6);
    else if (o->mode == FL_PERF_LOOKUP)
        printf(", %lld found\n  lookup call latency", (long long)x->found);
    else if (o->mode == FL_PERF_LATENCY)
        printf(", %lld produced\n  append->poll latency", (long long)x->produced);
    else
        printf(" fetched\n");
    if (o->mode != FL_PERF_CONSUME)
        printf(" p50 %.3f ms, p99 %.3f ms, max %.3f ms, avg %.3f ms\n", x->p50_ms, x->p99_ms,
               x->max_ms, x->avg_ms);
    if (o->mode == FL_PERF_LATENCY)
        printf("  request latency p50 %.3f ms, p99 %.3f ms\n", x->req_p50_ms, x->req_p99_ms);
    printf("  %lld %s, %d errors; fluss-perf CPU %.2f s (user %.2f, sys %.2f) = %.0f %% of one core\n",
           (long long)x->requests,
           o->mode == FL_PERF_LOOKUP     ? "lookup calls"
           : fl_perf_writes(o->mode)     ? "batches"
                                         : "batches polled",
           x->errors, x->cpu_s, x->cpu_user_s, x->cpu_sys_s, 100.0 * x->cpu_s / s);
}

static int fl_perf_run(fl_perf_opts_t *o) {
    fl_perf_run_t r;
    memset(&r, 0, sizeof(r));
    r.o = o;
    atomic_init(&r.consumer_ready, false);
    atomic_init(&r.latency_target, -1);
    fluss_error_t err;
    memset(&err, 0, sizeof(err));
    int rc = 0;
    if (o->mode == FL_PERF_UPSERT || o->mode == FL_PERF_LOOKUP) {
        r.prod = fl_perf_stats_new();
        if ((rc = fl_perf_kv_prepare_table(o, &err))) goto fail;
        fl_perf_opts_t po = *o;
        po.record_size = o->value_size + 20; /* fl_perf_pool_new sizes payloads of B - 20 */
        fl_perf_pool_new(&po, &r.pool, &r.pool_len);
    } else if (o->mode != FL_PERF_CONSUME) {
        r.prod = fl_perf_stats_new();
        if ((rc = fl_perf_prepare_table(o, &err))) goto fail;
        fl_perf_pool_new(o, &r.pool, &r.pool_len);
    }
    if (!fl_perf_writes(o->mode)) {
        r.cons = fl_perf_stats_new();
        if ((rc = fl_perf_start_consumers(&r, o->mode == FL_PERF_LATENCY ? 1 : o->threads, &err))) goto fail;
    }
    if (o->mode == FL_PERF_LATENCY)
        while (!atomic_load(&r.consumer_ready)) {
            struct timespec ts = {0, 1000000L};
            nanosleep(&ts, NULL);
        }
    r.start_s = fl_perf_now_s();
    fl_perf_cpu_s(&r.cpu0_user_s, &r.cpu0_sys_s);
    if (o->mode != FL_PERF_CONSUME) fl_perf_start_producers(&r);
    fl_perf_hist_snap_t *lat = calloc(1, sizeof(*lat));
    if (!lat) abort();
    fl_perf_watch(&r, lat);
    if (r.producer_count) fl_perf_join_producers(&r);
    for (int i = 0; i < r.consumer_count; i++) pthread_join(r.consumers[i].thread, NULL);
    fl_perf_result_t x;
    fl_perf_collect(&r, lat, &x);
    if (o->json) fl_perf_print_json(o, &x);
    else fl_perf_print_text(o, &x);
    fflush(stdout);
    fl_perf_stats_t *st = fl_perf_main_stats(&r);
    if (x.errors)
        fprintf(stderr, "fluss-perf: %s\n", r.prod && atomic_load(&r.prod->errors) ? r.prod->first_error : st->first_error);
    rc = x.errors ? 1 : 0;
    free(lat);
    for (int i = 0; i < r.consumer_count; i++) free(r.consumers[i].buckets);
    free(r.consumers);
    free(r.producers);
    free(r.prod);
    free(r.cons);
    free(r.pool);
    return rc;
fail:
    fprintf(stderr, "fluss-perf: %s (%s, code %d)\n", err.message, fluss_error_name(err.code), err.code);
    free(r.prod);
    free(r.cons);
    return 1;
}

int main(int argc, char **argv) {
    fl_perf_opts_t o;
    int rc = fl_perf_parse(&o, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = fl_perf_on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    rc = fl_perf_run(&o);
    for (int i = 0; i < o.table_count; i++) free(o.tables[i]);
    return rc;
}
