/*
 * fuzz_lake_iceberg_meta.c — bytes from a file (untrusted) as Iceberg
 * table metadata JSON, through fl_ice_meta_decode (lake_iceberg_table.h).
 * Invariants checked: what the decoder accepts the encoder writes (the
 * same rules run on both sides), the bytes written decode again and
 * encode to the same bytes; a snapshot appended on top of what was read
 * (the next tiering round) is accepted unless a bound or an id space is
 * exhausted, and its result encodes; an ADD COLUMN of a nested type
 * (list<struct<x int>>, ids above last-column-id) on top of it is
 * accepted unless a bound is reached or the table's spec or sort order
 * names a column the current schema lacks, and the ids it added are found
 * again; every field a walk of the current schema visits is found by its
 * id; ASan sees every value read.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "lake_iceberg_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void append_round(const fl_ice_table_meta_t *m) {
    int64_t id = 0; /* a new id: above every one (-1 when none is left) */
    for (size_t i = 0; i < m->n_snapshots && id >= 0; i++)
        if (m->snapshots[i].snapshot_id >= id)
            id = m->snapshots[i].snapshot_id == INT64_MAX ? -1 : m->snapshots[i].snapshot_id + 1;
    static const fl_ice_prop_t summary[] = {{"operation", "append"}};
    fl_ice_snapshot_t s = {id, m->current_snapshot_id, FL_ICE_NONE, 1, "file:///fuzz/snap.avro",
                           FL_ICE_NO_SCHEMA, summary, 1};
    fl_ice_meta_read_t next;
    fl_ice_meta_read_init(&next);
    fl_error_t err;
    int rc = fl_ice_meta_with_snapshot(m, "file:///fuzz/v1.metadata.json", &s, &next, &err);
    bool exhausted = id < 0 || m->last_sequence_number == INT64_MAX ||
                     m->n_snapshots >= FL_ICE_SNAPSHOTS_MAX ||
                     m->n_snapshot_log >= FL_ICE_SNAPSHOTS_MAX;
    FUZZ_CHECK(rc == 0 || (rc == FLUSS_ERR__INVALID_ARG && exhausted));
    if (rc == 0) {
        FUZZ_CHECK(next.meta.current_snapshot_id == id);
        FUZZ_CHECK(next.meta.last_sequence_number == m->last_sequence_number + 1);
        fl_buf_t b;
        fl_buf_init(&b);
        FUZZ_CHECK(fl_ice_meta_encode(&next.meta, &b, &err) == 0);
        fl_buf_free(&b);
    }
    fl_ice_meta_read_reset(&next);
}

static int count_node(const fl_ice_field_t *f, int depth, void *ctx) {
    (void)depth;
    size_t *n = ctx;
    (*n)++;
    return 0;
}

typedef struct found {
    const fl_ice_schema_t *s;
} found_t;

static int find_again(const fl_ice_field_t *f, int depth, void *ctx) {
    const found_t *x = ctx;
    FUZZ_CHECK(depth <= FL_ICE_TYPE_DEPTH_MAX);
    FUZZ_CHECK(fl_ice_schema_find(x->s, f->id) == f); /* ids unique at every depth */
    return 0;
}

/* Whether the default spec and sort order name only columns of s (else
 * an edit keeping s's columns is refused as dropping one). */
static bool sources_in(const fl_ice_table_meta_t *m, const fl_ice_schema_t *s) {
    const fl_ice_partition_spec_t *spec = fl_ice_meta_spec(m, m->default_spec_id);
    for (size_t i = 0; i < spec->n_fields; i++)
        if (!fl_ice_schema_field(s, spec->fields[i].source_id)) return false;
    for (size_t i = 0; i < m->n_sort_orders; i++)
        for (size_t j = 0; m->sort_orders[i].order_id == m->default_sort_order_id &&
                           j < m->sort_orders[i].n_fields;
             j++)
            if (!fl_ice_schema_field(s, m->sort_orders[i].fields[j].source_id)) return false;
    return true;
}

static void add_nested_column(const fl_ice_table_meta_t *m) {
    const fl_ice_schema_t *cur = fl_ice_meta_schema(m, m->current_schema_id);
    size_t nodes = 0;
    bool named = false, top_schema_id = false;
    for (size_t i = 0; i < cur->n_fields; i++) {
        fl_ice_field_walk(&cur->fields[i], count_node, &nodes);
        named |= strcmp(cur->fields[i].name, "fuzz_nested") == 0;
    }
    for (size_t i = 0; i < m->n_schemas; i++) top_schema_id |= m->schemas[i].schema_id == INT32_MAX;
    int32_t last = m->last_column_id;
    bool exhausted = last > FL_ICE_FIELD_ID_MAX - 3 || cur->n_fields >= FL_ICE_SCHEMA_FIELDS_MAX ||
                     nodes + 3 > FL_ICE_SCHEMA_NODES_MAX || m->n_schemas >= FL_ICE_SCHEMAS_MAX ||
                     named || top_schema_id || !sources_in(m, cur);
    const fl_ice_field_t x = {last + 3, "x", true, "int", NULL, NULL};
    const fl_ice_nested_t row = {FL_ICE_STRUCT, &x, 1, NULL, NULL, NULL};
    const fl_ice_field_t element = {last + 2, "element", false, NULL, NULL, &row};
    const fl_ice_nested_t list = {FL_ICE_LIST, NULL, 0, &element, NULL, NULL};
    fl_ice_field_t *fields = malloc((cur->n_fields + 1) * sizeof(*fields));
    if (cur->n_fields) memcpy(fields, cur->fields, cur->n_fields * sizeof(*fields));
    fields[cur->n_fields] = (fl_ice_field_t){last + 1, "fuzz_nested", false, NULL, NULL, &list};
    fl_ice_schema_t s = {FL_ICE_NO_SCHEMA, fields, cur->n_fields + 1, cur->identifier_ids,
                         cur->n_identifier_ids};
    fl_ice_meta_read_t next;
    fl_ice_meta_read_init(&next);
    fl_error_t err;
    /* last <= FL_ICE_FIELD_ID_MAX: last + 3 still fits an int32 */
    int rc = fl_ice_meta_with_schema(m, NULL, &s, &next, &err);
    FUZZ_CHECK(rc == 0 || (rc == FLUSS_ERR__INVALID_ARG && exhausted));
    if (rc == 0) {
        const fl_ice_schema_t *now = fl_ice_meta_schema(&next.meta, next.meta.current_schema_id);
        FUZZ_CHECK(next.meta.last_column_id == last + 3);
        FUZZ_CHECK(fl_ice_schema_find(now, last + 3) && fl_ice_schema_find(now, last + 2));
        FUZZ_CHECK(fl_ice_field_max_id(&now->fields[now->n_fields - 1]) == last + 3);
        fl_buf_t b;
        fl_buf_init(&b);
        FUZZ_CHECK(fl_ice_meta_encode(&next.meta, &b, &err) == 0);
        fl_buf_free(&b);
    }
    fl_ice_meta_read_reset(&next);
    free(fields);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_ice_meta_read_t r1, r2;
    fl_ice_meta_read_init(&r1);
    fl_ice_meta_read_init(&r2);
    fl_error_t err;
    int rc = fl_ice_meta_decode(data, size, &r1, &err);
    FUZZ_CHECK(rc == 0 || rc == FLUSS_ERR__CORRUPT || rc == FLUSS_ERR__INVALID_ARG ||
               rc == FLUSS_ERR__NO_MEMORY);
    if (rc == 0) {
        fl_buf_t b1, b2;
        fl_buf_init(&b1);
        fl_buf_init(&b2);
        FUZZ_CHECK(fl_ice_meta_encode(&r1.meta, &b1, &err) == 0);
        FUZZ_CHECK(fl_ice_meta_decode(b1.data, b1.len, &r2, &err) == 0);
        FUZZ_CHECK(fl_ice_meta_encode(&r2.meta, &b2, &err) == 0);
        FUZZ_CHECK(b1.len == b2.len && memcmp(b1.data, b2.data, b1.len) == 0);
        append_round(&r1.meta);
        add_nested_column(&r1.meta);
        found_t x = {fl_ice_meta_schema(&r1.meta, r1.meta.current_schema_id)};
        for (size_t i = 0; i < x.s->n_fields; i++) fl_ice_field_walk(&x.s->fields[i], find_again, &x);
        fl_buf_free(&b1);
        fl_buf_free(&b2);
    }
    fl_ice_meta_read_reset(&r1);
    fl_ice_meta_read_reset(&r2);
    return 0;
}
