/*
 * cli_lake.c — `fluss lake status DB.TABLE` (the table's lake snapshot
 * and, per bucket, its lake offset, the log's latest offset and the lag
 * between them) and `fluss lake tier DB.TABLE --now` (a tiering round now,
 * returning once it ended: what tests and scripts wait on instead of
 * sleeping through a freshness). Exit codes as cli_main.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_data.h"

static void usage_lake(FILE *f) {
    fprintf(f,
            "usage: fluss lake status DB.TABLE\n"
            "       fluss lake tier DB.TABLE --now\n"
            "\n"
            "status prints the table's lake snapshot and, for every bucket, its lake offset\n"
            "(the first offset the lake lacks), the log's latest offset and the lag in\n"
            "records. tier --now runs a tiering round of the table at once and returns when\n"
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

/* One line per bucket of one partition (-1: the table's own buckets). */
static int status_buckets(const fluss_table_t *t, const fluss_lake_snapshot_t *s,
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
        int64_t lag = latest[b] - (lake < 0 ? 0 : lake);
        printf("%s | %d | %lld | %lld | %lld\n", partition ? partition : "-", b,
               (long long)lake, (long long)latest[b], (long long)lag);
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
    printf("partition | bucket | lake offset | latest offset | lag\n");
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
