/*
 * tier_pk_index.h — a primary-key bucket's lake index: where each live
 * key's row is in the lake (data file, row position), so that tiering a
 * change of a key position-deletes the row the lake holds for it
 * (lakehouse.md §1 "PK tables": position deletes, not equality deletes,
 * because pyiceberg cannot read equality deletes).
 *
 * Two states. The committed state is the lake at a stamp: the bucket's
 * lake offset whose rows it reflects (-1: unknown, rebuild from the lake
 * first). A round is an overlay over it: the changes one tiering round
 * makes in offset order (a put: the key's live row, if any, is deleted
 * and its new row is at (new file, position); a remove: its live row is
 * deleted), sealed with the names of the round's files and its end
 * offset, and applied to the committed state only once the round's
 * snapshot is known to be committed (fl_pk_index_round_commit); a round
 * that is not committed is dropped by the next round_begin.
 *
 * Keys are tier_pk_key.h's bytes. File ids name the index's table of
 * file paths: fl_pk_index_file_id for the rebuild, the round's files
 * after the committed ones for a round (round file k is id
 * committed_files + k until it commits).
 *
 * Thread rule: one user at a time (the caller serialises a bucket's
 * rounds). Memory: about 48 bytes plus the key per live key, and the
 * path of every file the index has seen since it was last cleared.
 */
#ifndef FL_TIER_PK_INDEX_H
#define FL_TIER_PK_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"

typedef struct fl_pk_index fl_pk_index_t;

/* One position delete of a sealed round. */
typedef struct fl_pk_delete {
    const char *path; /* as given to the index (the manifest's file_path) */
    int64_t pos;
} fl_pk_delete_t;

fl_pk_index_t *fl_pk_index_new(void);
void fl_pk_index_destroy(fl_pk_index_t *x);

/* ---- the committed state ---- */

/* -1 after new and clear: the lake state is unknown. */
int64_t fl_pk_index_stamp(const fl_pk_index_t *x);
/* Live keys in the committed state. */
size_t fl_pk_index_live(const fl_pk_index_t *x);
/* Empties everything (round included); stamp -1. */
void fl_pk_index_clear(fl_pk_index_t *x);
/* The id of path in the file table, added when new. */
int32_t fl_pk_index_file_id(fl_pk_index_t *x, const char *path);
/* The rebuild: key's live row is at (file, pos). CORRUPT when key is
 * live already (a lake with a key live twice is not one we wrote). */
int fl_pk_index_load(fl_pk_index_t *x, const void *key, size_t len, int32_t file, int64_t pos,
                     fl_error_t *err);
void fl_pk_index_set_stamp(fl_pk_index_t *x, int64_t stamp);
/* The committed location of key: true and *path, *pos when live. */
bool fl_pk_index_get(const fl_pk_index_t *x, const void *key, size_t len, const char **path,
                     int64_t *pos);

/* ---- a round ---- */

/* Starts a round over the committed state, dropping a round before it. */
void fl_pk_index_round_begin(fl_pk_index_t *x);
/* key's new row is row pos of the round's file round_file. */
void fl_pk_index_round_put(fl_pk_index_t *x, const void *key, size_t len, size_t round_file,
                           int64_t pos);
/* key is deleted (nothing when it is not live). */
void fl_pk_index_round_remove(fl_pk_index_t *x, const void *key, size_t len);
/* The round rewrote the bucket whole (its KV state): every key live in
 * the committed state that the round has neither put nor removed is
 * removed, so that the round's state is exactly its puts. Returns how
 * many were removed. */
size_t fl_pk_index_round_remove_rest(fl_pk_index_t *x);
/* Ends the round: paths[0..n) are its files, end its end offset,
 * witness the path of one file its snapshot will hold (a data or delete
 * file; NULL when the round wrote none), by which a later call knows
 * the snapshot committed (fl_pk_index_round_witness).
 * *dels (sorted by path, then position; valid until the next round_begin,
 * commit or clear) are its position deletes. INVALID_ARG when a put
 * named a file past n. */
int fl_pk_index_round_seal(fl_pk_index_t *x, const char *const *paths, size_t n, int64_t end,
                           const char *witness, const fl_pk_delete_t **dels, size_t *n_dels,
                           fl_error_t *err);
/* The sealed round's witness (NULL: none), its first offset (the stamp
 * it began at) and its end. */
const char *fl_pk_index_round_witness(const fl_pk_index_t *x);
/* Names the sealed round's witness after the seal (its delete file). */
void fl_pk_index_round_set_witness(fl_pk_index_t *x, const char *witness);
int64_t fl_pk_index_round_start(const fl_pk_index_t *x);
int64_t fl_pk_index_round_end(const fl_pk_index_t *x);
/* True when a sealed round waits for its commit. */
bool fl_pk_index_round_sealed(const fl_pk_index_t *x);
/* The sealed round's snapshot committed: its changes become the committed
 * state and its end the stamp. Nothing without a sealed round. */
void fl_pk_index_round_commit(fl_pk_index_t *x);

#endif
