/*
 * common_fs.h — durable file helpers. fl_fs_write_atomic replaces a file so
 * that after a crash at any instant the path holds either the old or the new
 * content, never a mix: write a temporary, fsync it, rename over the path,
 * fsync the directory. A failed fsync is reported, never retried.
 */
#ifndef FL_COMMON_FS_H
#define FL_COMMON_FS_H

#include <stdbool.h>
#include <stddef.h>

#include "common_buf.h"
#include "common_error.h"
#include "common_strlist.h"

int fl_fs_mkdirs(const char *path, fl_error_t *err);
int fl_fs_write_atomic(const char *path, const void *data, size_t len,
                       fl_error_t *err);
/* Reads a whole file of at most max_bytes into out (appended).
 * Returns FLUSS_ERR__IO with errno-style message; a missing file gives
 * FLUSS_ERR__IO with *missing set to 1 when missing is not NULL. */
int fl_fs_read_all(const char *path, size_t max_bytes, fl_buf_t *out,
                   int *missing, fl_error_t *err);
int fl_fs_fsync_dir(const char *dir, fl_error_t *err);
/* The names in dir (without "." and "..") appended to out, in the order
 * the directory gives them. A missing dir lists as empty when missing_ok;
 * any other failure is FLUSS_ERR__IO with errno left as the call set it.
 * The one place the server reads a directory: its descriptor is opened
 * and closed here, on whichever thread asks. */
int fl_fs_list(const char *dir, bool missing_ok, fl_strlist_t *out, fl_error_t *err);
/* Removes a directory tree (no symlinks followed); a missing path is fine. */
int fl_fs_remove_tree(const char *path, fl_error_t *err);
/* Copies src into dst (created or truncated) and fsyncs dst; a failed copy
 * leaves no dst behind. */
int fl_fs_copy(const char *src, const char *dst, fl_error_t *err);

#endif
