/*
 * perf_int.h — fluss-perf's shared state: the options of one run, the
 * counters workers add to and the reporter reads, and the worker entry
 * points (perf_produce.c, perf_consume.c). The tool is a load generator
 * like librdkafka's rdkafka_performance: N worker threads, each with its
 * own fluss_client_t and writer or scanner, and the main thread printing
 * a progress line per second and the summary (perf_main.c).
 *
 * Thread rule: fl_perf_opts_t is written by main before the workers
 * start and read-only afterwards; fl_perf_stats_t fields are atomics
 * (workers add, the reporter reads); everything else a worker owns.
 */
#ifndef FL_PERF_INT_H
#define FL_PERF_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fluss.h"
#include "perf_histogram.h"

#define FL_PERF_THREADS_MAX 1024
#define FL_PERF_TABLES_MAX 1024
#define FL_PERF_COLUMNS_MAX 64

typedef enum {
    FL_PERF_PRODUCE,
    FL_PERF_CONSUME,
    FL_PERF_LATENCY,
    FL_PERF_UPSERT, /* perf_kv.c */
    FL_PERF_LOOKUP, /* perf_kv.c */
} fl_perf_mode_t;

typedef struct fl_perf_opts {
    fl_perf_mode_t mode;
    const char *bootstrap;
    char *tables[FL_PERF_TABLES_MAX]; /* "db.table" (several only for consume) */
    int table_count;
    int64_t records;     /* total, 0 = none given */
    double duration_s;   /* 0 = none given */
    int record_size;     /* bytes per row: id + ts + payload */
    int threads;         /* writers or scanners */
    int64_t batch_bytes;
    int linger_ms;
    double rate;         /* records/s over all threads, 0 = unlimited */
    int acks;
    const char *compression; /* NULL = the server's default */
    int buckets;         /* produce: of a created table; consume: read the first N (0 = all) */
    int max_inflight;
    bool idempotent;
    bool replay;         /* produce: resend one prepared request (perf_replay.c) */
    bool random_payload;
    int payload_columns; /* of a created table (default 1) */
    bool from_latest;
    const char *columns; /* consume projection, comma list */
    bool json;
    bool quiet;
    int timeout_ms;
    int64_t keys;        /* upsert/lookup: key space 0..keys-1 */
    int value_size;      /* upsert/lookup: bytes of the value column */
    int lookup_batch;    /* lookup: keys per lookup call */
} fl_perf_opts_t;

typedef struct fl_perf_stats {
    _Atomic int64_t records;
    _Atomic int64_t bytes;      /* produce: uncompressed Arrow acknowledged; consume: fetched */
    _Atomic int64_t wire_bytes; /* produce: batches as sent */
    _Atomic int64_t requests;   /* produce: acknowledged batches */
    _Atomic int errors;
    _Atomic int running;        /* workers not finished */
    _Atomic int64_t end_us;     /* the last worker's end (fl_perf_now_us), for exact durations */
    _Atomic int64_t found;      /* lookup: keys that had a row */
    fl_perf_hist_t lat_window;  /* drained every second by the reporter */
    fl_perf_hist_t lat_total;
    char first_error[2300];     /* the first worker error (guarded by error_lock) */
    pthread_mutex_t error_lock;
} fl_perf_stats_t;

/* Set by SIGINT/SIGTERM or when the duration is over; workers stop. */
extern atomic_bool fl_perf_stop;

/* Monotonic clock in µs / s. */
int64_t fl_perf_now_us(void);
double fl_perf_now_s(void);

/* Counts a worker error and keeps the first message. */
void fl_perf_error(fl_perf_stats_t *st, const char *what, const fluss_error_t *err);

/* A worker's last act: notes its end time and leaves `running`. */
void fl_perf_worker_done(fl_perf_stats_t *st);

/* Splits "db.table" (default database "fluss"). */
void fl_perf_split_path(const char *path, char *db, size_t db_cap, const char **table);

/* Producer threads of `produce` and `latency`: each appends its share of
 * the records (or until fl_perf_stop), rows "id, ts, payload". In
 * latency mode ts is the send time (fl_perf_now_us) and the writer
 * lingers 0; otherwise ts is wall-clock ms. */
typedef struct fl_perf_producer {
    const fl_perf_opts_t *o;
    fl_perf_stats_t *st;
    int index;
    int64_t records; /* this thread's share, 0 = until stopped */
    double rate;     /* this thread's share, 0 = unlimited */
    const uint8_t *pool; /* payload bytes, shared read-only (fl_perf_pool_new) */
    size_t pool_len;
    pthread_t thread;
} fl_perf_producer_t;
void *fl_perf_produce_run(void *arg);
/* Replay producers (--replay): one prepared PRODUCE_LOG request per
 * thread, resent with max_inflight in flight; the same records/rate
 * shares (rate is not applied: replay runs flat out). */
void *fl_perf_replay_run(void *arg);
/* The payload pool of a run (malloc'd; random letters or bytes per
 * --payload), at least one payload long. */
void fl_perf_pool_new(const fl_perf_opts_t *o, uint8_t **pool, size_t *len);
/* Name of payload column k: payload, payload_1, payload_2, ... */
void fl_perf_payload_name(int k, char *buf, size_t cap);

/* Key-value threads (perf_kv.c) on a primary-key table "id BIGINT NOT
 * NULL, v BYTES": upsert writes keys (i x threads + index) mod keys in
 * order (a first pass of `keys` records writes every key once), counted
 * on acknowledgement with the PUT_KV request latency; lookup reads
 * random keys, lookup_batch per call, recording each call's latency. */
void *fl_perf_kv_run(void *arg);
/* Creates the key-value table when missing (--buckets, default 1). */
int fl_perf_kv_prepare_table(fl_perf_opts_t *o, fluss_error_t *err);
/* Creates o->tables[0] (and its database) with spec when missing, then
 * waits for its bucket leaders; *created says whether it was created. */
int fl_perf_ensure_table(const fl_perf_opts_t *o, const fluss_table_spec_t *spec, bool *created,
                         fluss_error_t *err);
/* Waits until every bucket of db.name answers LIST_OFFSETS (perf_main.c). */
int fl_perf_wait_leaders(fluss_client_t *c, const char *db, const char *name, int timeout_ms,
                         fluss_error_t *err);

/* Consumer threads: a table, the buckets to read, where to start, where
 * to stop. The latency consumer records now - ts per row. */
typedef struct fl_perf_consumer {
    const fl_perf_opts_t *o;
    fl_perf_stats_t *st;
    const char *table;
    int32_t *buckets;
    int bucket_count;
    bool measure_latency;
    atomic_bool *ready; /* set once subscribed (latency mode waits for it) */
    _Atomic int64_t *target; /* latency: stop at this many rows (set when producers end), or -1 */
    pthread_t thread;
} fl_perf_consumer_t;
void *fl_perf_consume_run(void *arg);

#endif
