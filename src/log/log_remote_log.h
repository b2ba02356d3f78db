/*
 * log_remote_log.h — a bucket's log in remote storage (Fluss RemoteLogTablet
 * with DefaultRemoteLogStorage's layout): its committed manifest, the upload
 * of rolled segments, the commit of a new manifest, and the reads the
 * request path makes (which segments a fetch below the local log needs,
 * where to start in the first; offsets by timestamp).
 *
 * Layout under the storage root, as the reference writes it and as both
 * official clients read it ({tablet} = log/{db}/{table}-{table id}
 * [/{partition}-p{partition id}]/{bucket}):
 *
 *   {tablet}/{segment uuid}/{base offset, 20 digits}.log       the segment
 *   {tablet}/{segment uuid}/{base}.index, {base}.timeindex     its indexes
 *   {tablet}/{segment uuid}/{end offset}.writer_snapshot       writer state
 *                                                              (when kept)
 *   {tablet}/metadata/{manifest uuid}.manifest                 the manifest
 *   {tablet}/metadata/manifest-handle                          the commit
 *
 * A commit writes segment files first, then a new manifest under a new
 * name, then — atomically, last — the handle naming it. On a tablet
 * server the handle is the coordinator's to write: the leader sends
 * COMMIT_REMOTE_LOG_MANIFEST, and the coordinator, which keeps the record
 * (the reference's RemoteLogManifestHandle, in ZooKeeper there), writes
 * it only for the bucket's current leader epoch. A segment is remote once a committed manifest lists it; a
 * crash anywhere before the handle leaves files no manifest names, and
 * fl_remote_log_clean_orphans removes them (and manifests the handle does
 * not name). If the handle or its manifest cannot be read, open fails and
 * deletes nothing.
 *
 * In a cluster every replica of the bucket opens the same remote log
 * (remote.data.dir is shared): only the leader writes it (upload, commit,
 * orphan cleanup, at the start of its leadership after a refresh); the
 * followers refresh their view of the committed manifest from storage.
 *
 * Thread rule: one writer at a time (upload, commit, refresh, cleanup,
 * close — the bucket's tiering task); the reads may run alongside from any
 * thread: the committed manifest is swapped under `lock`, files are read
 * outside it. A read racing the expiry of a segment may name files that
 * are gone when the client comes for them, as in the reference.
 */
#ifndef FL_LOG_REMOTE_LOG_H
#define FL_LOG_REMOTE_LOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common_error.h"
#include "log_remote_manifest.h"
#include "log_remote_storage.h"
#include "log_segment.h"

#define FL_REMOTE_PATH_MAX 4096

typedef struct fl_remote_log {
    fl_remote_storage_t *storage; /* borrowed */
    char *dir;                    /* the tablet dir, relative to the storage root */
    pthread_mutex_t lock;
    fl_remote_manifest_t manifest; /* (lock) the committed one */
    char *manifest_file;           /* (lock) its file name under metadata/, NULL: none */
} fl_remote_log_t;

/* {tablet} of bucket b into out. */
void fl_remote_log_tablet_dir(char *out, size_t cap, const fl_remote_bucket_t *b);

/* Loads the bucket's committed manifest (removes nothing: see
 * fl_remote_log_clean_orphans). */
int fl_remote_log_open(fl_remote_storage_t *storage, const fl_remote_bucket_t *b,
                       fl_remote_log_t **out, fl_error_t *err);
/* deleted: the bucket is dropped: its remote files go too. */
void fl_remote_log_close(fl_remote_log_t *rl, bool deleted);
/* Reads the committed manifest again from storage (another server may
 * have committed since): the view the bounds and reads use follows it. An
 * unreadable handle or manifest keeps the view as it was. */
int fl_remote_log_refresh(fl_remote_log_t *rl, fl_error_t *err);
/* Removes what a crash between upload and commit left: segment
 * directories and manifests no committed manifest names, temporary files.
 * Only the bucket's one writer calls it, on a fresh view (a refresh
 * first): an upload of another writer in progress would be taken for an
 * orphan. */
void fl_remote_log_clean_orphans(fl_remote_log_t *rl);

/* The committed manifest's first offset (INT64_MAX: none) and end (-1). */
void fl_remote_log_bounds(fl_remote_log_t *rl, int64_t *start, int64_t *end);
/* A copy of the committed manifest. */
void fl_remote_log_manifest(fl_remote_log_t *rl, fl_remote_manifest_t *out);

/* Bytes [pos, pos + len) of remote segment s's records (its .log file)
 * into out (appended; fewer at the file's end, *got how many). A segment
 * expired meanwhile is an error (its files are gone). */
int fl_remote_log_read_records(fl_remote_log_t *rl, const fl_remote_segment_t *s, uint64_t pos,
                               size_t len, fl_buf_t *out, size_t *got, fl_error_t *err);
/* Uploads rolled segment s of the local log in local_dir, whose records
 * end at end_offset, under a new segment id (not yet part of the log). */
int fl_remote_log_upload(fl_remote_log_t *rl, const fl_log_segment_t *s, const char *local_dir,
                         int64_t end_offset, fl_remote_segment_t *out, fl_error_t *err);
/* Removes the files of an uploaded segment no manifest names. */
void fl_remote_log_discard(fl_remote_log_t *rl, const fl_remote_segment_t *s);
/*
 * The commit point of a commit: makes the manifest at manifest_path (a
 * file under the tablet's metadata/, just written) the committed one,
 * whose records run [start_offset, end_offset). NULL: the remote log
 * writes the handle itself (fl_remote_log_commit_handle). A cluster's
 * leader asks the coordinator instead (COMMIT_REMOTE_LOG_MANIFEST), which
 * checks the leader epoch first. FLUSS_ERR_NETWORK_EXCEPTION: no answer,
 * whether it committed is unknown.
 */
typedef int (*fl_remote_commit_fn)(void *ctx, const char *manifest_path, int64_t start_offset,
                                   int64_t end_offset, fl_error_t *err);

/* Commits the manifest without its first `expired` segments and with
 * `added` after the rest, through commit (see above); then removes the
 * old manifest and the expired segments' files. Nothing changes when it
 * fails: the new manifest is removed again, except after a commit point
 * that did not answer (NETWORK_EXCEPTION, returned as it came): it may
 * have committed, so nothing is removed and the view is left as it was
 * (refresh, then clean orphans, to learn which). */
int fl_remote_log_commit(fl_remote_log_t *rl, size_t expired, const fl_remote_segment_t *added,
                         size_t n_added, fl_remote_commit_fn commit, void *commit_ctx,
                         fl_error_t *err);

/* The commit point itself: checks that the manifest manifest_path names
 * (by its file name, under bucket b's metadata/ in storage) is b's and
 * ends at end_offset, then writes b's handle naming it, atomically. */
int fl_remote_log_commit_handle(fl_remote_storage_t *storage, const fl_remote_bucket_t *b,
                                const char *manifest_path, int64_t end_offset, fl_error_t *err);

/* What a fetch from offset is told (PbRemoteLogFetchInfo). */
typedef struct fl_remote_fetch {
    char tablet_url[FL_REMOTE_PATH_MAX];
    const char *partition_name; /* NULL or into name_buf */
    char name_buf[FL_REMOTE_NAME_MAX + 1];
    size_t count;
    fl_remote_segment_t *segments;
    int32_t first_start_pos;
} fl_remote_fetch_t;

/* Returns 1 when no remote segment holds offset or anything after it. */
int fl_remote_log_fetch(fl_remote_log_t *rl, int64_t offset, fl_remote_fetch_t *out,
                        fl_error_t *err);
void fl_remote_fetch_free(fl_remote_fetch_t *f);

/* The first remote offset whose commit timestamp is >= ts; 1 when no
 * remote segment reaches ts. */
int fl_remote_log_offset_for_time(fl_remote_log_t *rl, int64_t ts, int64_t *offset,
                                  fl_error_t *err);

#endif
