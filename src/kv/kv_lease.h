/*
 * kv_lease.h — KV snapshot leases (Fluss's KvSnapshotLeaseManager): a
 * reader (the Flink source, a Java client) leases the snapshots it is about
 * to download, and retention keeps a leased snapshot until the lease is
 * released, dropped or expires. A lease has an id chosen by the client,
 * an expiry (now + duration at each acquire, which also renews it) and one
 * snapshot per bucket; acquiring a bucket again moves it to the new
 * snapshot. An expired lease pins nothing; it leaves the file at the next
 * acquire (or fl_kv_leases_expire), on the coordinator's side.
 *
 * Leases survive restarts: every change rewrites one JSON file atomically
 * ({"version":1,"leases":[{"id","expires_ms","buckets":[[table id,
 * partition id or -1, bucket, snapshot id], …]}]}). A file that does not
 * parse whole is refused at open.
 *
 * Thread rule: every function is safe from any thread (one mutex).
 */
#ifndef FL_KV_LEASE_H
#define FL_KV_LEASE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common_buf.h"
#include "common_error.h"

#define FL_KV_LEASES_FILE_MAX (64u << 20)

typedef struct fl_kv_leases fl_kv_leases_t;

typedef struct fl_kv_lease_bucket {
    int64_t table_id;
    int64_t partition_id; /* -1: not partitioned */
    int32_t bucket;
    int64_t snapshot_id;  /* ignored by release */
} fl_kv_lease_bucket_t;

/* Loads path when it exists (path NULL: in memory only). */
int fl_kv_leases_open(const char *path, fl_kv_leases_t **out, fl_error_t *err);
void fl_kv_leases_close(fl_kv_leases_t *l);
/* Parses the file's bytes into l (replacing what it holds). */
int fl_kv_leases_parse(fl_kv_leases_t *l, const char *text, size_t len, fl_error_t *err);
/* The JSON l would write. */
void fl_kv_leases_dump(fl_kv_leases_t *l, fl_buf_t *out);

int fl_kv_leases_acquire(fl_kv_leases_t *l, const char *lease_id, int64_t duration_ms,
                         int64_t now_ms, const fl_kv_lease_bucket_t *b, size_t n, fl_error_t *err);
/* Releases the buckets (their snapshot ids ignored); a lease left empty is
 * dropped. An unknown lease id is no error. */
int fl_kv_leases_release(fl_kv_leases_t *l, const char *lease_id, const fl_kv_lease_bucket_t *b,
                         size_t n, fl_error_t *err);
int fl_kv_leases_drop(fl_kv_leases_t *l, const char *lease_id, fl_error_t *err);
/* The distinct tables lease_id holds buckets of (fl_calloc'd into
 * *table_ids; NULL and 0 when there is no such lease). */
size_t fl_kv_leases_tables(fl_kv_leases_t *l, const char *lease_id, int64_t **table_ids);
/* Whether an unexpired lease holds the snapshot. */
bool fl_kv_leases_pinned(fl_kv_leases_t *l, int64_t table_id, int64_t partition_id,
                         int32_t bucket, int64_t snapshot_id, int64_t now_ms);
/* Drops the leases expired at now_ms; returns how many. */
/* The snapshot ids of one bucket some unexpired lease holds (*ids NULL
 * when none; fl_free). */
size_t fl_kv_leases_pinned_ids(fl_kv_leases_t *l, int64_t table_id, int64_t partition_id,
                               int32_t bucket, int64_t now_ms, int64_t **ids);
size_t fl_kv_leases_expire(fl_kv_leases_t *l, int64_t now_ms);
/* Leases held (tests, stats). */
size_t fl_kv_leases_count(fl_kv_leases_t *l);
#endif
