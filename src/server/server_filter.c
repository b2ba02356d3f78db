/*
 * server_filter.c — FETCH_LOG filter pushdown and the magic 0 layout for
 * readers of 0.9.1 (server_filter.h).
 */
#include "server_filter.h"

#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "record_batch.h"
#include "record_stats_build.h"

#define FL_FILTER_DEPTH_MAX 64

/* Fluss main's PbPredicate.type and PbCompoundPredicate.function. */
#define FL_WIRE_PREDICATE_LEAF 0
#define FL_WIRE_PREDICATE_COMPOUND 1
#define FL_WIRE_COMPOUND_AND 0
#define FL_WIRE_COMPOUND_OR 1

static bool fl_is_int_type(fl_type_root_t r) {
    return r == FL_TYPE_BOOLEAN || r == FL_TYPE_TINYINT || r == FL_TYPE_SMALLINT ||
           r == FL_TYPE_INTEGER || r == FL_TYPE_BIGINT || r == FL_TYPE_DATE || r == FL_TYPE_TIME;
}

/* A literal as a statistics value of the column's type; FL_STAT_UNKNOWN
 * when it does not fit (a NULL literal, another type, DECIMAL: the wire
 * literal has no scale to compare unscaled values with). */
static fl_stat_value_t fl_literal(const Fluss__PbLiteralValue *l, const fl_datatype_t *t) {
    fl_stat_value_t v;
    memset(&v, 0, sizeof(v));
    if (l->is_null) return v;
    fl_type_root_t r = t->root;
    if (fl_is_int_type(r)) {
        if (r == FL_TYPE_BOOLEAN && l->has_boolean_value) v.i = l->boolean_value;
        else if (l->has_bigint_value) v.i = l->bigint_value;
        else if (l->has_int_value) v.i = l->int_value;
        else return v;
        v.kind = FL_STAT_INT;
    } else if (r == FL_TYPE_FLOAT || r == FL_TYPE_DOUBLE) {
        if (l->has_double_value) v.d = l->double_value;
        else if (l->has_float_value) v.d = l->float_value;
        else return v;
        v.kind = FL_STAT_DOUBLE;
    } else if (r == FL_TYPE_STRING || r == FL_TYPE_CHAR) {
        if (!l->string_value) return v;
        v.len = strlen(l->string_value);
        uint8_t *copy = fl_malloc(v.len ? v.len : 1);
        memcpy(copy, l->string_value, v.len);
        v.bytes = copy;
        v.kind = FL_STAT_BYTES;
    } else if (r == FL_TYPE_TIMESTAMP || r == FL_TYPE_TIMESTAMP_LTZ) {
        if (!l->has_timestamp_millis_value) return v;
        v.i = l->timestamp_millis_value;
        v.nanos = l->has_timestamp_nano_of_millis_value ? l->timestamp_nano_of_millis_value : 0;
        if (v.nanos < 0 || v.nanos > 999999) return (fl_stat_value_t){0};
        v.kind = FL_STAT_TIMESTAMP;
    }
    return v;
}

static void fl_filter_build(const Fluss__PbPredicate *p, const fl_schema_t *schema, int depth,
                            fl_filter_node_t *out) {
    memset(out, 0, sizeof(*out));
    out->kind = FL_FILTER_NODE_ANY;
    if (!p || depth > FL_FILTER_DEPTH_MAX) return;
    if (p->type == FL_WIRE_PREDICATE_COMPOUND && p->compound) {
        const Fluss__PbCompoundPredicate *c = p->compound;
        if (c->function != FL_WIRE_COMPOUND_AND && c->function != FL_WIRE_COMPOUND_OR) return;
        out->kind = c->function == FL_WIRE_COMPOUND_AND ? FL_FILTER_NODE_AND : FL_FILTER_NODE_OR;
        out->child_count = c->n_children;
        out->children = fl_calloc(c->n_children ? c->n_children : 1, sizeof(*out->children));
        for (size_t i = 0; i < c->n_children; i++)
            fl_filter_build(c->children[i], schema, depth + 1, &out->children[i]);
        return;
    }
    if (p->type != FL_WIRE_PREDICATE_LEAF || !p->leaf) return;
    const Fluss__PbLeafPredicate *l = p->leaf;
    if (l->function < FL_FILTER_EQUAL || l->function > FL_FILTER_NOT_IN) return;
    int column = -1;
    for (size_t i = 0; i < schema->column_count; i++)
        if (schema->columns[i].id == l->field_id) column = (int)i;
    if (column < 0) return;
    out->kind = FL_FILTER_NODE_LEAF;
    out->fn = (fl_filter_fn_t)l->function;
    out->column = column;
    out->type = schema->columns[column].type;
    out->literal_count = l->n_literals;
    out->literals = fl_calloc(l->n_literals ? l->n_literals : 1, sizeof(*out->literals));
    for (size_t i = 0; i < l->n_literals; i++)
        out->literals[i] = fl_literal(l->literals[i], out->type);
}

void fl_filter_from_wire(const Fluss__PbPredicate *p, const fl_schema_t *schema,
                         fl_filter_node_t *out) {
    fl_filter_build(p, schema, 0, out);
}

bool fl_client_reads_statistics(const char *name, const char *version) {
    if (!name || !version || strcmp(name, "fluss-rust") != 0) return false;
    return atoi(version) >= 1;
}

bool fl_records_have_new_layout(const uint8_t *p, size_t len) {
    size_t pos = 0;
    while (len - pos >= FL_BATCH_HEADER_V0) {
        int32_t length = fl_get_le32(p + pos + 8);
        if (p[pos + 12] != 0) return true;
        if (length < FL_BATCH_HEADER_V0 - FL_BATCH_LOG_OVERHEAD ||
            (size_t)length > len - pos - FL_BATCH_LOG_OVERHEAD)
            return false;
        pos += FL_BATCH_LOG_OVERHEAD + (size_t)length;
    }
    return false;
}

int fl_fetch_filter(const uint8_t *in, size_t len, const fl_filter_node_t *filter,
                    int32_t filter_schema_id, bool to_v0, fl_stats_lookup_fn lookup,
                    void *lookup_ctx, fl_buf_t *out, int64_t *filtered_end, fl_error_t *err) {
    *filtered_end = -1;
    size_t pos = 0;
    int64_t kept_end = -1, seen_end = -1;
    fl_buf_t side;
    fl_buf_init(&side);
    for (;;) {
        fl_batch_view_t b;
        int rc = fl_batch_parse_next(in, len, &pos, &b, err);
        if (rc == 1) break;
        if (rc) {
            fl_buf_free(&side);
            return rc;
        }
        seen_end = fl_batch_next_offset(&b);
        bool keep = true;
        if (filter && b.schema_id == filter_schema_id) {
            fl_batch_stats_t st;
            fl_error_t ignored;
            const uint8_t *sp = NULL;
            size_t sl = 0;
            if (b.stats_size > 0) {
                sp = b.data + b.header_size;
                sl = b.stats_size;
            } else if (lookup) {
                side.len = 0;
                if (lookup(lookup_ctx, &b, &side)) {
                    sp = side.data;
                    sl = side.len;
                }
            }
            if (sp && fl_batch_stats_parse(sp, sl, &st, &ignored) == 0)
                keep = fl_filter_may_match(filter, &st, b.record_count);
        }
        if (!keep) continue;
        kept_end = seen_end;
        if (to_v0) fl_batch_append_v0(&b, out);
        else fl_buf_append(out, b.data, b.size);
    }
    fl_buf_free(&side);
    if (filter && seen_end >= 0 && seen_end > kept_end) *filtered_end = seen_end;
    return 0;
}
