/*
 * log_remote_storage.h — where tiered log segments go (Fluss RemoteLogStorage
 * with its FileSystem): a small interface so that an object store can come
 * later, and the local file system behind it first (remote.data.dir is a
 * directory today).
 *
 * Paths are relative to the storage root ("log/db/t-1/0/<uuid>/....log"),
 * '/'-separated, made by our code (never by a peer). What a call promises:
 *
 *   put_file     the file at `rel` has src's bytes and survives a crash
 *                (with its directory entries) once it returns 0; it
 *                appears whole or not at all;
 *   put_bytes    the same for bytes in memory — and an existing file is
 *                replaced atomically: after a crash, old or new content;
 *   read         a whole small file (missing is told apart);
 *   read_range   bytes [pos, pos + len) of a file (fewer at its end);
 *   size         a file's length;
 *   list         the names directly under a directory (none if missing);
 *   remove       a file, or a directory with everything under it;
 *                missing is fine;
 *   url          what a client is told to read `rel` from (an absolute
 *                path for the local file system; Fluss's clients take a
 *                path without a scheme as file://).
 *
 * Thread rule: every call is safe from any thread; callers keep two
 * writers off one path (one tiering task per bucket).
 */
#ifndef FL_LOG_REMOTE_STORAGE_H
#define FL_LOG_REMOTE_STORAGE_H

#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "common_strlist.h"

typedef struct fl_remote_storage fl_remote_storage_t;

typedef struct fl_remote_storage_ops {
    int (*put_file)(fl_remote_storage_t *s, const char *src_path, const char *rel,
                    fl_error_t *err);
    int (*put_bytes)(fl_remote_storage_t *s, const char *rel, const void *data, size_t len,
                     fl_error_t *err);
    int (*read)(fl_remote_storage_t *s, const char *rel, size_t max_bytes, fl_buf_t *out,
                int *missing, fl_error_t *err);
    int (*read_range)(fl_remote_storage_t *s, const char *rel, uint64_t pos, size_t len,
                      uint8_t *dst, size_t *got, fl_error_t *err);
    int (*size)(fl_remote_storage_t *s, const char *rel, uint64_t *bytes, fl_error_t *err);
    int (*list)(fl_remote_storage_t *s, const char *rel, fl_strlist_t *names, fl_error_t *err);
    int (*remove)(fl_remote_storage_t *s, const char *rel, fl_error_t *err);
    void (*destroy)(fl_remote_storage_t *s);
} fl_remote_storage_ops_t;

struct fl_remote_storage {
    const fl_remote_storage_ops_t *ops;
    char *root; /* the root as clients see it: an absolute path or a URL */
};

/* The local file system under root_dir (an absolute path; created when
 * missing). Files are hard-linked in where the file system allows it
 * (tiered segments are immutable), copied and fsynced otherwise. */
int fl_remote_storage_fs_new(const char *root_dir, fl_remote_storage_t **out, fl_error_t *err);

static inline void fl_remote_storage_destroy(fl_remote_storage_t *s) {
    if (s) s->ops->destroy(s);
}

/* "<root>/<rel>" into out. */
void fl_remote_storage_url(const fl_remote_storage_t *s, const char *rel, char *out, size_t cap);

#endif
