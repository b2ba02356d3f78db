/*
 * tier_eq_deletes.h — Iceberg equality deletes (spec "Equality Delete
 * Files"), as a reader applies them: a delete file's rows are key values
 * of its `equality_ids` columns, and a row of a data file whose data
 * sequence number is lower than the delete file's, with the same values
 * in those columns, is deleted. Fluss's own tiering job writes them for
 * primary-key tables (the primary key's columns); libfluss's lake scanner
 * turns them into position deletes of the data files they touch
 * (fl_tier_eq_deletes_apply), so that the rest of its read steps over
 * positions only.
 *
 * Keys are tier_pk_key.h's bytes of the columns in equality-id order, the
 * same for a delete file and a data file of one table (one writer). A set
 * takes one list of equality ids: delete files of another list are
 * refused (INVALID_ARG), as a table whose key changed would need.
 *
 * Thread rule: a set has one user.
 */
#ifndef FL_TIER_EQ_DELETES_H
#define FL_TIER_EQ_DELETES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "tier_deletes.h"

/* One key of the set: its bytes in keys (at; key points there once the
 * set is sealed and keys no longer moves), the delete's sequence number. */
struct fl_tier_eq_item {
    size_t at, len;
    const uint8_t *key;
    int64_t seq;
};

typedef struct fl_tier_eq_deletes {
    int32_t *ids; /* the equality ids (NULL before the first file) */
    size_t n_ids;
    fl_buf_t keys; /* every key's bytes, back to back */
    struct fl_tier_eq_item *items;
    size_t n_items, cap_items;
} fl_tier_eq_deletes_t;

void fl_tier_eq_deletes_init(fl_tier_eq_deletes_t *s);
void fl_tier_eq_deletes_free(fl_tier_eq_deletes_t *s);
/* Adds the deletes of the equality-delete file at path (read whole, at
 * most max_bytes; untrusted: CORRUPT for a missing column or a NULL key
 * value), whose data sequence number is seq. Not after seal. */
int fl_tier_eq_deletes_read(fl_tier_eq_deletes_t *s, const char *path, const int32_t *ids,
                            size_t n_ids, int64_t seq, size_t max_bytes, fl_error_t *err);
/* The same for a delete file's bytes file[0..len) (the fuzz target's). */
int fl_tier_eq_deletes_read_image(fl_tier_eq_deletes_t *s, const uint8_t *file, size_t len,
                                  const int32_t *ids, size_t n_ids, int64_t seq,
                                  fl_error_t *err);
/* Sorts the set for lookups; no adds after it. */
void fl_tier_eq_deletes_seal(fl_tier_eq_deletes_t *s);
/* Whether a delete of a sequence number above seq names key (after seal). */
bool fl_tier_eq_deletes_has(const fl_tier_eq_deletes_t *s, const uint8_t *key, size_t len,
                            int64_t seq);
/* How many keys the set holds. */
size_t fl_tier_eq_deletes_count(const fl_tier_eq_deletes_t *s);
/* Reads the key columns of the data file at path (manifest path uri, data
 * sequence number seq) and adds to pos a position delete of every row a
 * delete of a higher sequence number names. After seal; pos not sealed. */
int fl_tier_eq_deletes_apply(const fl_tier_eq_deletes_t *s, const char *path, const char *uri,
                             int64_t seq, size_t max_bytes, fl_tier_deletes_t *pos,
                             fl_error_t *err);

#endif
