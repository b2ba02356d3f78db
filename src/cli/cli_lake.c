/*
 * cli_lake.c — `fluss lake status DB.TABLE` (the table's lake snapshot
 * and, per bucket, its lake offset, the log's latest offset, the lag
 * between them in records, and in milliseconds: the age of the oldest
 * record the lake lacks, from its commit timestamp) and `fluss lake tier DB.TABLE --now` (a tiering round now,
 * returning once it ended: what tests and scripts wait on instead of
 * sleeping through a freshness). Exit codes as cli_main.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_data.h"

static void usage_lake(FILE *f) {
    fprintf(f,
            "usage: fluss lake status DB.TABLE\n"
            "       fluss lake tier DB.TABLE --now\n"
            "\n"
            "status prints the table's lake snapshot and, for every bucket, its lake offset\n"
            "(the first offset the lake lacks), the log's latest offset, the lag in\n"
            "records and the lag in ms (the age of the oldest record the lake lacks, by its\n"
            "commit timestamp; 0 without lag). tier --now runs a tiering round of the table at once and returns when\n"
            "it ended (the server's datalake.format must be set, the table lake-enabled).\n");
}

static int bad(const char *msg) {
    fprintf(stderr, "fluss: %s\n\n", msg);
    usage_lake(stderr);
    return 2;
}

/* The lake offset of (partition, bucket) in s, or -1. */
static int64_t lake_offset(const fluss_lake_snapshot_t *s, int64_t partition_id, int32_t bucket) {
    for (size_t i = 0; s && i < s->bucket_count; i++)
        if (s->buckets[i].partition_id == partition_id && s->buckets[i].bucket == bucket)
            return s->buckets[i].offset;
    return -1;
}

/* The commit timestamp of the first record at or after offset (<0: the
 * log's start) of the bucket, or -1 when none came within a few seconds. */
static int64_t first_timestamp(fluss_table_t *t, int64_t partition_id, int32_t bucket,
                               int64_t offset) {
    const int32_t first_column = 0;
    fluss_log_scanner_t *sc = NULL;
    fluss_error_t err;
    int64_t ts = -1;
    if (fluss_log_scanner_new(t, &first_column, 1, &sc, &err) ||
        fluss_log_scanner_subscribe_partition(sc, partition_id, bucket,
                                              offset < 0 ? FLUSS_OFFSET_EARLIEST : offset, &err))
        goto out;
    for (int tries = 0; tries < 5 && ts < 0; tries++) {
        fluss_record_batch_t *b = NULL;
        if (fluss_log_scanner_poll(sc, 1000, &b, &err)) break;
        if (b && fluss_record_batch_row_count(b) > 0) ts = fluss_record_batch_timestamp(b, 0);
        if (b) fluss_record_batch_free(b);
    }
out:
    fluss_log_scanner_destroy(sc);
    return ts;
}

static int64_t wall_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* One line per bucket of one partition (-1: the table's own buckets). */
static int status_buckets(fluss_table_t *t, const fluss_lake_snapshot_t *s,
                          int64_t partition_id, const char *partition) {
    int32_t n = fluss_table_bucket_count(t);
    int64_t *latest = calloc((size_t)(n > 0 ? n : 1), sizeof(*latest));
    fluss_error_t err;
    int rc = fluss_table_list_partition_offsets(t, partition_id, NULL, (size_t)n,
                                                FLUSS_OFFSETS_LATEST, 0, latest, &err);
    if (rc) {
        free(latest);
        return fl_cli_fail(&err);
    }
    for (int32_t b = 0; b < n; b++) {
        int64_t lake = lake_offset(s, partition_id, b);
        int64_t lag = latest[b] - (lake < 0 ? 0 : lake), lag_ms = 0;
        if (lag > 0) {
            int64_t ts = first_timestamp(t, partition_id, b, lake);
            lag_ms = ts < 0 ? -1 : wall_ms() - ts;
            if (ts >= 0 && lag_ms < 0) lag_ms = 0; /* clocks a little apart */
        }
        printf("%s | %d | %lld | %lld | %lld | %lld\n", partition ? partition : "-", b,
               (long long)lake, (long long)latest[b], (long long)lag, (long long)lag_ms);
    }
    free(latest);
    return 0;
}

static int lake_status(fluss_client_t *c, fluss_table_t *t, const char *db, const char *table) {
    fluss_lake_snapshot_t *s = NULL;
    fluss_error_t err;
    if (fluss_lake_snapshot_get(c, db, table, &s, &err)) {
        if (strcmp(fluss_error_name(err.code), "LAKE_SNAPSHOT_NOT_EXIST") != 0)
            return fl_cli_fail(&err);
        printf("lake snapshot: none yet\n");
    } else {
        printf("lake snapshot: %lld\n", (long long)s->snapshot_id);
    }
    printf("partition | bucket | lake offset | latest offset | lag | lag ms\n");
    int rc = 0;
    const int32_t *cols;
    if (fluss_table_partition_keys(t, &cols) == 0) {
        rc = status_buckets(t, s, -1, NULL);
    } else {
        fluss_partition_info_t *parts = NULL;
        size_t n = 0;
        if (fluss_partition_list(c, db, table, NULL, &parts, &n, &err)) rc = fl_cli_fail(&err);
        for (size_t i = 0; i < n && !rc; i++)
            rc = status_buckets(t, s, parts[i].partition_id, parts[i].name);
        fluss_partition_infos_free(parts, n);
    }
    fluss_lake_snapshot_free(s);
    return rc;
}

int fl_cli_lake(const char *bootstrap, int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage_lake(stdout);
            return 0;
        }
    if (argc < 2) return bad("lake needs a command and DB.TABLE");
    bool status = strcmp(argv[0], "status") == 0, tier = strcmp(argv[0], "tier") == 0;
    if (!status && !tier) return bad("unknown lake command");
    if (status && argc != 2) return bad("lake status takes DB.TABLE only");
    if (tier && (argc != 3 || strcmp(argv[2], "--now") != 0))
        return bad("lake tier takes DB.TABLE --now");
    char db[256];
    const char *table;
    if (fl_cli_split_path(argv[1], db, sizeof(db), &table)) return bad("bad DB.TABLE");
    fluss_client_t *c = NULL;
    fluss_table_t *t = NULL;
    int rc = fl_cli_open_table(bootstrap, argv[1], &c, &t);
    if (rc) return rc;
    if (status) {
        rc = lake_status(c, t, db, table);
    } else {
        int64_t snapshot = -1, added = 0;
        fluss_error_t err;
        if (fluss_lake_tier_now(c, db, table, &snapshot, &added, &err)) {
            rc = fl_cli_fail(&err);
        } else if (snapshot < 0) {
            printf("tiered %lld rows; the lake has no snapshot yet\n", (long long)added);
        } else {
            printf("tiered %lld rows; lake snapshot %lld\n", (long long)added,
                   (long long)snapshot);
        }
    }
    fluss_table_close(t);
    fluss_client_destroy(c);
    return rc;
}
