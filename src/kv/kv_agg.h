/*
 * kv_agg.h — the `aggregation` merge engine of primary-key tables (Fluss
 * 0.9.1 AggregateRowMerger + rowmerger/aggregate): each non-key column
 * folds the row an upsert brings into the stored row with its own
 * aggregate function; key columns take the new value. A spec is parsed
 * once per schema from the columns' "agg_function" JSON (types_aggfn.h),
 * then merges rows in memory (fl_row_t): the KV tablet decodes the stored
 * and the incoming value, calls fl_kv_agg_merge and encodes `out`.
 *
 * Semantics (DESIGN.md, "Aggregation merge engine"): no stored row -> the
 * new row as it is; sum/product wrap like Java integers, DECIMAL sums and
 * products that leave the precision become NULL; DELETE only under
 * table.delete.behavior=ALLOW (default IGNORE), and then removes the row
 * (partial delete: clears the target columns); no function retracts.
 *
 * Thread rule: a spec is immutable after _init and may be shared; a merge
 * uses only its arguments.
 */
#ifndef FL_KV_AGG_H
#define FL_KV_AGG_H

#include <stdbool.h>
#include <stddef.h>

#include "common_error.h"
#include "types_aggfn.h"
#include "types_datatype.h"
#include "types_row.h"
#include "types_schema.h"

typedef struct fl_kv_agg_column {
    char *name;
    fl_aggfn_type_t fn;   /* LAST_VALUE for key columns (they take the new value) */
    bool is_primary_key;
    bool nullable;
    fl_type_root_t root;
    char *delimiter;      /* LISTAGG / STRING_AGG: the separator, else NULL */
    size_t delimiter_len;
} fl_kv_agg_column_t;

/* Callers read it; only kv_agg.c writes it. */
typedef struct fl_kv_agg_spec {
    size_t column_count;
    fl_kv_agg_column_t *columns;
} fl_kv_agg_spec_t;

/* One function per column, like AggregationContext.createAggregators: a key
 * column takes the new value, a column without a (known) function gets
 * last_value_ignore_nulls, listagg/string_agg take "delimiter" (default
 * ","). Refuses what Fluss's aggregator factories refuse (sum/product on a
 * non-numeric type, bool_and/bool_or on non-BOOLEAN, listagg/string_agg on
 * anything but STRING — CHAR included, rbm32/rbm64 on non-BYTES) and max/min
 * on a type Fluss cannot compare (BOOLEAN, ARRAY, MAP, ROW: Fluss fails at
 * the first merge instead), all with FLUSS_ERR_UNKNOWN_SERVER_ERROR, the
 * code Fluss's IllegalArgumentException reaches the client with. The
 * CREATE TABLE check is fl_aggfn_validate_schema (types_aggfn.h). On error
 * s is left empty. */
int fl_kv_agg_spec_init(fl_kv_agg_spec_t *s, const fl_schema_t *schema, fl_error_t *err);
void fl_kv_agg_spec_reset(fl_kv_agg_spec_t *s);

/* Partial update: target[i] marks the columns a write names (NULL = all).
 * Fluss refuses targets missing a key column or leaving a NOT NULL non-key
 * column out of the fold: FLUSS_ERR_INVALID_TARGET_COLUMN. */
int fl_kv_agg_check_target(const fl_kv_agg_spec_t *s, const bool *target, fl_error_t *err);

/* Folds new_row into old_row into out, column by column (n columns, types
 * the schema's column types). old_row NULL (first write of the key): out
 * is a copy of new_row. Non-target columns keep the old value. out must be
 * an initialized row of n cells distinct from both inputs; it is cleared
 * first. Errors: a stored or incoming rbm32/rbm64 value that does not
 * decode (FLUSS_ERR_UNKNOWN_SERVER_ERROR, like Fluss's "Unable to
 * se/deserialize roaring bitmap."). */
int fl_kv_agg_merge(const fl_kv_agg_spec_t *s, const fl_datatype_t *const *types, size_t n,
                    const fl_row_t *old_row, const fl_row_t *new_row, const bool *target,
                    fl_row_t *out, fl_error_t *err);

/* What a DELETE does to a stored row when table.delete.behavior is ALLOW
 * (the tablet drops deletes under IGNORE, the default for aggregation
 * tables, and refuses them under DISABLE). */
typedef enum fl_kv_agg_delete_outcome {
    FL_KV_AGG_DELETE_ROW,   /* remove the key */
    FL_KV_AGG_DELETE_UPDATE /* keep the key with `out` (target columns cleared) */
} fl_kv_agg_delete_outcome_t;

/* target NULL: the row goes. A partial delete clears the non-key target
 * columns, unless every non-target column is already NULL, then the row
 * goes. */
fl_kv_agg_delete_outcome_t fl_kv_agg_delete(const fl_kv_agg_spec_t *s, const fl_row_t *old_row,
                                            const bool *target, fl_row_t *out);

/* Fluss 0.9.1 has no retraction for any aggregate function (a -U/-D
 * record never un-folds a value): always false. Kept so the tablet states
 * the rule in one place. */
bool fl_kv_agg_supports_retract(const fl_kv_agg_spec_t *s);

#endif
