/*
 * kv_merge.h — how an upsert or a delete meets the current row of its key
 * (Fluss's RowMerger family: DefaultRowMerger with its partial update,
 * FirstRowRowMerger, VersionedRowMerger, AggregateRowMerger through
 * kv_agg.h). Rows are decoded (types_row.h) and in the latest schema.
 *
 * | engine      | upsert, no row        | upsert, row exists                  | delete (allowed)      |
 * |-------------|-----------------------|-------------------------------------|-----------------------|
 * | last row    | the new row           | the new row                         | row removed           |
 * | partial upd.| targets, others NULL  | targets from new, others kept       | targets NULLed, or    |
 * |             |                       | (PK-only targets: unchanged)        | removed if no other   |
 * |             |                       |                                     | column is set         |
 * | first_row   | the new row           | unchanged                           | never allowed         |
 * | versioned   | the new row           | new if old version <= new (NULL=min)| never allowed         |
 * | aggregation | kv_agg_merge(NULL,new)| kv_agg_merge(old, new)              | row removed           |
 *
 * Thread rule: none; pure functions of their arguments.
 */
#ifndef FL_KV_MERGE_H
#define FL_KV_MERGE_H
#include <stdbool.h>
#include "common_error.h"
#include "kv_table.h"
#include "types_row.h"

typedef enum fl_kv_merge_result {
    FL_KV_MERGE_NEW = 0, /* the incoming row as it came */
    FL_KV_MERGE_OLD,     /* nothing changes */
    FL_KV_MERGE_ROW,     /* the merged row in *out */
    FL_KV_MERGE_DELETE,  /* the row goes */
} fl_kv_merge_result_t;

/* Checks PUT_KV's target columns against the table (Fluss's
 * auto-increment check first, then PartialUpdater's sanity check and the
 * engines' refusals) and fills mask[column] (latest schema width). n = 0:
 * a full-row write (refused on a table with an auto-increment column),
 * mask untouched, *partial false.
 * INVALID_TARGET_COLUMN / UNKNOWN_SERVER_ERROR with the reference's words. */
int fl_kv_targets_check(const fl_kv_table_t *t, const int32_t *cols, size_t n, bool *mask,
                        bool *partial, fl_error_t *err);

/* mask NULL: full row. old NULL: the key has no row. */
int fl_kv_merge_upsert(const fl_kv_table_t *t, const bool *mask, const fl_row_t *old,
                       const fl_row_t *in, fl_row_t *out, fl_kv_merge_result_t *res,
                       fl_error_t *err);
/* For a delete the table allows, of an existing row. */
int fl_kv_merge_delete(const fl_kv_table_t *t, const bool *mask, const fl_row_t *old,
                       fl_row_t *out, fl_kv_merge_result_t *res, fl_error_t *err);

/* Copies cell sc of src into cell dc of dst (bytes into dst's arena). */
void fl_kv_cell_copy(fl_row_t *dst, size_t dc, const fl_row_t *src, size_t sc,
                     const fl_datatype_t *type);
/* Grows r to n columns, the new ones NULL (rows of an older schema). */
void fl_kv_row_pad(fl_row_t *r, size_t n);
/* A row decoded under schema_id into the latest schema's layout: its
 * cells moved by column id (t->latest_map), NULL for the columns that
 * schema lacks; padded when the table gives no map or only columns were
 * added since. */
void fl_kv_row_to_latest(const fl_kv_table_t *t, int16_t schema_id, fl_row_t *r);
#endif
