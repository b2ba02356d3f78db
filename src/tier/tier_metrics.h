/*
 * tier_metrics.h — the per-column metrics of one Iceberg data file, as its
 * manifest entry carries them (Iceberg spec "Manifests": value_counts,
 * null_value_counts, nan_value_counts, lower_bounds, upper_bounds), kept
 * while the tiering writer appends values; what Iceberg's Java writers
 * compute in the default metrics mode truncate(16).
 *
 * Bounds are Appendix D single values (lake_iceberg_manifest.h encodes
 * them): boolean 1 byte; int and date 4 bytes LE; long, time and
 * timestamp 8 bytes LE (µs); float and double LE; decimal the fewest
 * big-endian two's-complement bytes of the unscaled value; string UTF-8;
 * binary the bytes. Rules:
 *
 * - Counts: value_counts includes nulls and NaNs; nan_value_counts exists
 *   for float and double columns only.
 * - Float/double bounds leave NaN out (a column of only NaN and nulls has
 *   none). A zero lower bound is written -0.0 and a zero upper bound +0.0
 *   (as Parquet's statistics do), so that a reader comparing either by
 *   IEEE or by totalOrder keeps the file for a predicate on either zero.
 * - Strings: truncated to 16 Unicode code points (Iceberg's
 *   UnicodeUtil.truncateStringMin/Max — characters, not bytes, so the
 *   bound stays UTF-8). The lower bound is the prefix; the upper bound of a
 *   longer value is the prefix with its last code point incremented
 *   (U+D7FF goes to U+E000, past the surrogates; U+10FFFF cannot grow and
 *   is dropped, carrying to the one before); none is written when nothing
 *   can be incremented. Bytes that are not UTF-8 count as one unit each
 *   and are never incremented.
 * - Binary: the same over 16 bytes, incrementing the last byte below 0xFF.
 *
 * Only the first 17 units of the least and greatest string or binary are
 * kept: a prefix orders like the whole value (truncation is monotone), and
 * the 17th unit tells whether the greatest one was longer than 16.
 *
 * Thread rule: a metrics object has one user.
 */
#ifndef FL_TIER_METRICS_H
#define FL_TIER_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "common_buf.h"
#include "lake_parquet_writer.h"
#include "tier_convert.h"

/* Iceberg's default truncate(16) (write.metadata.metrics.default). */
#define FL_TIER_TRUNCATE_UNITS 16

/* How a column's bounds compare and encode. */
typedef enum fl_tier_bound_kind {
    FL_TIER_BOUND_BOOLEAN,
    FL_TIER_BOUND_INT,     /* INT32: int, date */
    FL_TIER_BOUND_LONG,    /* INT64: long, time, timestamp(tz) */
    FL_TIER_BOUND_FLOAT,
    FL_TIER_BOUND_DOUBLE,
    FL_TIER_BOUND_DECIMAL, /* INT32, INT64 or FIXED_LEN_BYTE_ARRAY DECIMAL */
    FL_TIER_BOUND_STRING,
    FL_TIER_BOUND_BINARY,
} fl_tier_bound_kind_t;

typedef struct fl_tier_metrics {
    fl_tier_bound_kind_t kind;
    bool int32; /* DECIMAL: its values are fl_tier_value_t.i32 (else i64) */
    int32_t fixed; /* DECIMAL in FIXED_LEN_BYTE_ARRAY: bytes of a value (big-endian) */
    int64_t values, nulls, nans;
    bool has_bounds;
    __int128 min_i, max_i; /* BOOLEAN, INT, LONG, DECIMAL */
    double min_d, max_d;  /* FLOAT (widened), DOUBLE */
    fl_buf_t min_b, max_b; /* STRING, BINARY: the first 17 units */
} fl_tier_metrics_t;

/* Metrics for a column written as spec (a spec fl_tier_column_spec made). */
void fl_tier_metrics_init(fl_tier_metrics_t *m, const fl_pq_column_spec_t *spec);
/* Nothing counted (a new file); memory kept. */
void fl_tier_metrics_reset(fl_tier_metrics_t *m);
void fl_tier_metrics_free(fl_tier_metrics_t *m);
/* Counts one value; v NULL is a null. */
void fl_tier_metrics_add(fl_tier_metrics_t *m, const fl_tier_value_t *v);
/* Counts rows values at once, as many fl_tier_metrics_add calls would:
 * x is an array of the column's Parquet values (uint8_t BOOLEAN 0/1,
 * int32_t, int64_t, float, double, fl_pq_bytes_t or FLBA's fixed bytes), valid[i] 0 a NULL
 * (valid NULL: none). The tiering writer's column path. */
void fl_tier_metrics_add_column(fl_tier_metrics_t *m, const uint8_t *valid, const void *x,
                                size_t rows);
/* Whether the column has a lower (upper) bound; if so its bytes replace
 * out's content. */
bool fl_tier_metrics_lower(const fl_tier_metrics_t *m, fl_buf_t *out);
bool fl_tier_metrics_upper(const fl_tier_metrics_t *m, fl_buf_t *out);
/* The NaN count, or -1 when the column's type has none (not float/double). */
int64_t fl_tier_metrics_nans(const fl_tier_metrics_t *m);

#endif
