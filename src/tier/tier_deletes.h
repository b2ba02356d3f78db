/*
 * tier_deletes.h — Iceberg position-delete files (spec "Position Delete
 * Files"): a primary-key bucket's tiering round writes one, sorted by
 * file path and then position, with the reserved columns
 *
 * | column    | field id   | type                |
 * |-----------|------------|---------------------|
 * | file_path | 2147483546 | string, required    |
 * | pos       | 2147483545 | long, required      |
 *
 * and readers (the lake index rebuild, libfluss's lake scanner) read the
 * deletes of a snapshot back into a set they look rows up in. The bounds
 * of file_path are the whole least and greatest paths (not truncated),
 * so that a reader matching delete files to data files by bounds
 * (pyiceberg) finds exactly the files a delete file may touch.
 *
 * Thread rule: a set has one user; writing is per call.
 */
#ifndef FL_TIER_DELETES_H
#define FL_TIER_DELETES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "lake_iceberg_manifest.h"
#include "tier_pk_index.h"

#define FL_ICE_DELETE_FILE_PATH_ID 2147483546
#define FL_ICE_DELETE_POS_ID 2147483545

/* One written position-delete file and its manifest description (content
 * position deletes, "file://" + path, counts, exact size, both columns'
 * stats, split offsets; partition NULL, for the caller to point). */
typedef struct fl_tier_delete_file {
    fl_ice_data_file_t file;
    char *path; /* local */
    char *uri;
    fl_ice_column_stats_t cols[2]; /* pos (2147483545), file_path (2147483546) */
    uint8_t pos_lower[8], pos_upper[8];
    int64_t *splits;
} fl_tier_delete_file_t;

/* Writes dels[0..n) (n > 0, sorted as fl_pk_index_round_seal gives them)
 * to a new file at path, fsynced (its directory entry is the caller's),
 * codec FL_PQ_CODEC_ZSTD, _SNAPPY, _GZIP or _UNCOMPRESSED. INVALID_ARG for n == 0 or an
 * unsorted list, IO. */
int fl_tier_deletes_write(const char *path, const fl_pk_delete_t *dels, size_t n, int32_t codec,
                          fl_tier_delete_file_t *out, fl_error_t *err);
void fl_tier_delete_file_free(fl_tier_delete_file_t *f);

/* The position deletes of some delete files. */
typedef struct fl_tier_deletes {
    char **paths; /* distinct, sorted once sealed */
    size_t n_paths, cap_paths;
    struct fl_tier_del_item *items;
    size_t n_items, cap_items;
    size_t *first; /* sealed: items of paths[i] are items[first[i] .. first[i + 1]) */
    bool sealed;
} fl_tier_deletes_t;

void fl_tier_deletes_init(fl_tier_deletes_t *s);
void fl_tier_deletes_free(fl_tier_deletes_t *s);
/* Adds the deletes of the delete file at path (read whole, at most
 * max_bytes; untrusted: CORRUPT for a file without the two columns or
 * with a NULL or negative position). Not after seal. */
int fl_tier_deletes_read(fl_tier_deletes_t *s, const char *path, size_t max_bytes,
                         fl_error_t *err);
/* The same for a delete file's bytes file[0..len) (name: for messages). */
int fl_tier_deletes_read_image(fl_tier_deletes_t *s, const uint8_t *file, size_t len,
                               const char *name, fl_error_t *err);
/* Adds one position delete (row pos of the data file whose manifest path
 * is file_path). Not after seal. */
void fl_tier_deletes_add(fl_tier_deletes_t *s, const char *file_path, int64_t pos);
/* Sorts the set for lookups; no adds after it. */
void fl_tier_deletes_seal(fl_tier_deletes_t *s);
/* True when row pos of the data file whose manifest path is file_path is
 * deleted (after seal). */
bool fl_tier_deletes_has(const fl_tier_deletes_t *s, const char *file_path, int64_t pos);
/* Deletes that name file_path (after seal). */
size_t fl_tier_deletes_count(const fl_tier_deletes_t *s, const char *file_path);

#endif
