/*
 * kv_snapshot.h — the completed KV snapshots of one primary-key bucket in
 * remote storage (`remote.data.dir`, a local directory today), laid out as
 * Fluss lays them out, so the Java client and the Flink source can
 * download one and open it with their own RocksDB:
 *
 *   {remote}/kv/{db}/{table}-{id}[/{partition}-p{pid}]/{bucket}/
 *       shared/{instance}-{NNNNNN}.sst   SST files, shared by snapshots
 *       snap-{id}/MANIFEST-*, CURRENT, OPTIONS-*   one snapshot's own files
 *       snap-{id}/_METADATA              our record of the snapshot
 *
 * A snapshot exists once its _METADATA is in place (written atomically,
 * last): a crash before that leaves a directory that retention removes.
 * _METADATA is JSON: {"version":1, "snapshot_id", "log_offset" (the
 * changelog offset the snapshot covers up to, exclusive), "row_count"
 * (the bucket's rows at that offset, absent when the table keeps none —
 * a record, like Fluss's; a restore takes the count the checkpoint holds
 * beside the offset), "created_ms", "files": [{"path" (relative to the
 * bucket dir), "local" (the file name RocksDB expects), "size"}]}. SST
 * names carry the store's instance id (RocksDB's IDENTITY), so a rebuilt
 * store never collides with old files.
 *
 * Thread rule: one writer (upload, retain) per bucket at a time — the kv
 * tablet serialises them; readers (list, read) may run alongside and see
 * a snapshot whole or not at all (a reader racing retention may find it
 * gone: KV_SNAPSHOT_NOT_EXIST).
 */
#ifndef FL_KV_SNAPSHOT_H
#define FL_KV_SNAPSHOT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common_buf.h"
#include "common_error.h"

#define FL_KV_SNAPSHOT_META_MAX (4u << 20) /* a _METADATA file larger is refused */

typedef struct fl_kv_snapshot_file {
    char *path;   /* absolute (after fl_kv_snapshot_read) */
    char *local;  /* file name inside the RocksDB directory */
    int64_t size;
} fl_kv_snapshot_file_t;

typedef struct fl_kv_snapshot {
    int64_t id;
    int64_t log_offset;
    int64_t row_count;  /* -1: not recorded */
    int64_t created_ms;
    size_t file_count;
    fl_kv_snapshot_file_t *files;
} fl_kv_snapshot_t;

/* The remote directory of a bucket's snapshots into out (partition NULL:
 * not partitioned). */
void fl_kv_snapshot_bucket_dir(char *out, size_t cap, const char *remote_root, const char *db,
                               const char *table, int64_t table_id, const char *partition,
                               int64_t partition_id, int32_t bucket);

/*
 * The commit point of an upload: makes snapshot `id`, whose _METADATA is
 * meta[0, len), complete. NULL: written here (fl_kv_snapshot_commit_meta).
 * A tablet server asks the coordinator instead (COMMIT_KV_SNAPSHOT),
 * which checks the bucket's leader epoch first. FLUSS_ERR_NETWORK_EXCEPTION:
 * no answer, whether it committed is unknown.
 */
typedef int (*fl_kv_snapshot_commit_fn)(void *ctx, int64_t id, const char *meta, size_t len,
                                        fl_error_t *err);

/* Uploads the RocksDB checkpoint in checkpoint_dir as snapshot id covering
 * the changelog up to log_offset, with row_count rows (-1: not kept).
 * instance names the store (shared SST names). SSTs already in shared/
 * (same name and size) are not copied again; files are hard-linked when
 * they can be, copied otherwise, and every copy is fsynced before the
 * commit (see above) writes _METADATA. */
int fl_kv_snapshot_upload(const char *bucket_dir, const char *checkpoint_dir,
                          const char *instance, int64_t id, int64_t log_offset,
                          int64_t row_count, int64_t now_ms, fl_kv_snapshot_commit_fn commit,
                          void *commit_ctx, fl_error_t *err);

/* The commit point itself: checks that meta parses as snapshot id's
 * record and that every file it names is under bucket_dir with its size,
 * then writes snap-{id}/_METADATA, atomically. *log_offset (when not
 * NULL): the offset the snapshot covers. */
int fl_kv_snapshot_commit_meta(const char *bucket_dir, int64_t id, const char *meta, size_t len,
                               int64_t *log_offset, fl_error_t *err);

/* COMMIT_KV_SNAPSHOT's completed_snapshot bytes between our servers (the
 * reference sends its CompletedSnapshot JSON; ours carries the bucket and
 * the _METADATA to write): {"version":1, "table_id", "partition_id"
 * (absent: not partitioned), "bucket_id", "snapshot_id", "metadata"
 * (the _METADATA text)}. */
typedef struct fl_kv_snapshot_commit {
    int64_t table_id;
    int64_t partition_id; /* -1: not partitioned */
    int32_t bucket;
    int64_t snapshot_id;
    char *meta;           /* NUL-terminated */
    size_t meta_len;
} fl_kv_snapshot_commit_t;

void fl_kv_snapshot_commit_encode(const fl_kv_snapshot_commit_t *c, fl_buf_t *out);
/* Every field checked (ids >= 0 or -1 for the partition, a bucket in
 * int32 range >= 0, metadata a string of at most FL_KV_SNAPSHOT_META_MAX
 * bytes); KV_STORAGE_EXCEPTION otherwise. *out is zeroed either way. */
int fl_kv_snapshot_commit_decode(const uint8_t *data, size_t len, fl_kv_snapshot_commit_t *out,
                                 fl_error_t *err);
void fl_kv_snapshot_commit_free(fl_kv_snapshot_commit_t *c);

/* Ids of the complete snapshots, ascending (*ids NULL when none; free()). */
int fl_kv_snapshot_list(const char *bucket_dir, int64_t **ids, size_t *count, fl_error_t *err);

/* Reads snapshot id. KV_SNAPSHOT_NOT_EXIST when it is not there (or its
 * _METADATA is damaged). */
int fl_kv_snapshot_read(const char *bucket_dir, int64_t id, fl_kv_snapshot_t *out,
                        fl_error_t *err);
/* Parses _METADATA bytes (paths stay relative; bucket_dir NULL) or makes
 * them absolute under bucket_dir. Every field is checked: a path never
 * leaves the bucket directory, a local name is a plain file name. */
int fl_kv_snapshot_parse(const char *json, size_t len, const char *bucket_dir, int64_t want_id,
                         fl_kv_snapshot_t *out, fl_error_t *err);
void fl_kv_snapshot_free(fl_kv_snapshot_t *s);

/* Keeps the newest `keep` complete snapshots and every pinned one (leases),
 * removes the rest, the incomplete directories older than the newest
 * complete one, and the shared files no kept snapshot names. */
typedef bool (*fl_kv_snapshot_pinned_fn)(void *ctx, int64_t id);
int fl_kv_snapshot_retain(const char *bucket_dir, size_t keep, fl_kv_snapshot_pinned_fn pinned,
                          void *ctx, fl_error_t *err);

/* Materialises snapshot id as a RocksDB directory at local_dir (which must
 * not exist): files copied into a temporary sibling, fsynced, renamed. */
int fl_kv_snapshot_restore(const char *bucket_dir, int64_t id, const char *local_dir,
                           fl_error_t *err);
#endif
