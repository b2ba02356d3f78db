/*
 * server_filter.h — FETCH_LOG's filter pushdown (Fluss main: the request's
 * filter_predicate and filter_schema_id, the answer's filtered_end_offset)
 * and the statistics-free layout for readers of 0.9.1.
 *
 * A fetch reads batches as usual; fl_fetch_filter then keeps those whose
 * column statistics (magic 1 and 2 batches written with
 * table.statistics.columns) may hold a matching row, drops the others, and
 * reports how far it looked when it dropped the trailing ones, as Fluss
 * main does, so the client resumes after them. Batches without statistics,
 * or of another schema than the filter's, are always kept: the answer is
 * never short of a matching row. Clients re-apply the filter to rows.
 *
 * Batches with statistics use Fluss main's magic 1/2 layout, which a 0.9.1
 * reader (the Java client, Flink) would misread as its own magic 1: for a
 * connection that did not announce a reader of the new layout
 * (fl_client_reads_statistics) every such batch is sent as magic 0.
 */
#ifndef FL_SERVER_FILTER_H
#define FL_SERVER_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "fluss_api.pb-c.h"
#include "record_batch.h"
#include "record_filter.h"
#include "types_schema.h"

/* Builds the filter for schema from the wire predicate. Parts that cannot
 * be used (unknown function, field id, type or literal; nesting deeper than
 * 64) become "may match": never an error, never a wrong skip. */
void fl_filter_from_wire(const Fluss__PbPredicate *p, const fl_schema_t *schema,
                         fl_filter_node_t *out);

/* Whether a client named so in API_VERSIONS reads Fluss main's batch
 * layout (pyfluss / fluss-rust 1.0 and later). */
bool fl_client_reads_statistics(const char *software_name, const char *software_version);

/* Where fl_fetch_filter finds the statistics the server computed for a
 * batch that came without (the segment sidecars); NULL: none kept. */
typedef bool (*fl_stats_lookup_fn)(void *ctx, const fl_batch_view_t *b, fl_buf_t *out);

/* Whether any batch in p[0, len) has magic 1 or 2 (headers only). */
bool fl_records_have_new_layout(const uint8_t *p, size_t len);

/* Rewrites the batches in[0, len) read for one bucket into out: with
 * filter set, only the batches of filter_schema_id whose statistics may
 * match (others of that schema dropped); with to_v0, batches of magic 1/2
 * as magic 0. *filtered_end is set to the next offset after the last batch
 * looked at when the trailing batches were dropped (-1 otherwise). */
int fl_fetch_filter(const uint8_t *in, size_t len, const fl_filter_node_t *filter,
                    int32_t filter_schema_id, bool to_v0, fl_stats_lookup_fn lookup,
                    void *lookup_ctx, fl_buf_t *out, int64_t *filtered_end, fl_error_t *err);

#endif
