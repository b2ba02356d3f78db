/*
 * test_lake_iceberg_table.c — Iceberg v2 table metadata and the Hadoop
 * layout (lake_iceberg_table.h): an encode → decode round trip of a full
 * metadata (two schemas with identifier ids, an identity and a bucket
 * spec, sort orders, properties, snapshots with summaries, both logs);
 * metadata written by pyiceberg and in Java's style decoded; the
 * snapshot and schema edits and what they refuse; create, load and
 * commit in a directory, with a stale, garbled, early or missing hint;
 * committers racing on one base (exactly one wins, the others get
 * FLUSS_ERR__CONFLICT and leave no tmp); a failure injected at every
 * file-system call of a commit (nothing or everything visible, never a
 * tmp left); decode refusals naming the key; every truncation of a valid
 * file refused; encode refusals. Nested columns: a schema with a list of
 * structs and a map round trip (Appendix C's keys, the tree read back
 * whole), a Java-style file with nested types decoded, the walk, lookups
 * and limits (depth, total fields), ADD COLUMN of nested types and the
 * evolution rules inside them, refusals of malformed nested JSON naming
 * the key path.
 */
#define _GNU_SOURCE /* nftw (test_tmpdir.h) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common_fs.h"
#include "common_vfs.h"
#include "lake_iceberg_table.h"
#include "test_tmpdir.h"

#define assert_error(rc, e, code_, text)                                                   \
    do {                                                                                   \
        int rc_ = (rc);                                                                    \
        if (rc_ != (code_) || (e).code != (code_) || !strstr((e).msg, (text)))             \
            fail_msg("got %d \"%s\", want %d with \"%s\"", rc_, (e).msg, (code_), (text)); \
    } while (0)

/* ---- a full metadata ---- */

static const fl_ice_field_t FIELDS0[] = {
    {1, "id", true, "int", NULL, NULL},
    {2, "name", false, "string", "the customer's name", NULL},
    {3, "ts", false, "timestamptz", NULL, NULL},
    {4, "amount", false, "decimal(10,2)", NULL, NULL},
    {5, "__bucket", true, "int", NULL, NULL},
    {6, "__offset", true, "long", NULL, NULL},
    {7, "__timestamp", true, "timestamptz", NULL, NULL},
};
static const fl_ice_field_t FIELDS1[] = {
    {1, "id", true, "int", NULL, NULL},
    {2, "name", false, "string", "the customer's name", NULL},
    {3, "ts", false, "timestamptz", NULL, NULL},
    {4, "amount", false, "decimal(10,2)", NULL, NULL},
    {8, "tag", false, "fixed[16]", NULL, NULL},
    {5, "__bucket", true, "int", NULL, NULL},
    {6, "__offset", true, "long", NULL, NULL},
    {7, "__timestamp", true, "timestamptz", NULL, NULL},
};
static const int32_t IDENT[] = {1};
static const fl_ice_schema_t SCHEMAS[] = {
    {0, FIELDS0, 7, IDENT, 1},
    {1, FIELDS1, 8, IDENT, 1},
};
static const fl_ice_partition_field_t SPEC0[] = {
    {"__bucket", 5, 1000, FL_ICE_IDENTITY, 0, FL_ICE_INT},
};
static const fl_ice_partition_field_t SPEC1[] = {
    {"id_bucket", 1, 1001, FL_ICE_BUCKET, 16, FL_ICE_INT},
    {"name", 2, 1002, FL_ICE_IDENTITY, 0, FL_ICE_STRING},
};
static const fl_ice_partition_spec_t SPECS[] = {{0, SPEC0, 1}, {1, SPEC1, 2}};
static const fl_ice_sort_field_t SORT1[] = {{6, false, false}, {1, true, true}};
static const fl_ice_sort_order_t ORDERS[] = {{0, NULL, 0}, {1, SORT1, 2}};
static const fl_ice_prop_t PROPS[] = {
    {"fluss.table.replication.factor", "1"},
    {"write.parquet.compression-codec", "zstd"},
    {"comment", "quotes \" and \\ and \xc3\xa9"},
};
static const fl_ice_prop_t SUM1[] = {
    {"operation", "append"}, {"commit-user", "__fluss_lake_tiering"},
    {"added-data-files", "1"}, {"added-records", "3"}, {"total-records", "3"},
};
static const fl_ice_prop_t SUM2[] = {{"operation", "append"}, {"added-records", "2"}};
static const fl_ice_prop_t SUM3[] = {{"operation", "overwrite"}, {"fluss-offsets", "file:///o"}};
static const fl_ice_snapshot_t SNAPS[] = {
    {1000, FL_ICE_NONE, 1, 1700000001000, "file:///wh/t/metadata/snap-1000.avro", 0, SUM1, 5},
    {1001, 1000, 2, 1700000002000, "file:///wh/t/metadata/snap-1001.avro", 0, SUM2, 2},
    {1002, 1001, 3, 1700000003000, "file:///wh/t/metadata/snap-1002.avro", 1, SUM3, 2},
};
static const fl_ice_snapshot_log_t SLOG[] = {
    {1700000001000, 1000}, {1700000002000, 1001}, {1700000003000, 1002}};
static const fl_ice_metadata_log_t MLOG[] = {
    {1700000000000, "file:///wh/t/metadata/v1.metadata.json"},
    {1700000001000, "file:///wh/t/metadata/v2.metadata.json"},
};

static fl_ice_table_meta_t full_meta(void) {
    fl_ice_table_meta_t m = {
        .table_uuid = "5e4f7a52-1c7b-4e0e-9d35-4c1a9a6b2f10",
        .location = "file:///wh/t",
        .last_sequence_number = 3,
        .last_updated_ms = 1700000003000,
        .last_column_id = 8,
        .schemas = SCHEMAS, .n_schemas = 2, .current_schema_id = 1,
        .specs = SPECS, .n_specs = 2, .default_spec_id = 0, .last_partition_id = 1002,
        .sort_orders = ORDERS, .n_sort_orders = 2, .default_sort_order_id = 1,
        .properties = PROPS, .n_properties = 3,
        .current_snapshot_id = 1002,
        .snapshots = SNAPS, .n_snapshots = 3,
        .snapshot_log = SLOG, .n_snapshot_log = 3,
        .metadata_log = MLOG, .n_metadata_log = 2,
    };
    return m;
}

/* A new table: schema 0, spec 0, sort order 1, no snapshot. */
static fl_ice_table_meta_t new_meta(const char *location) {
    fl_ice_table_meta_t m = full_meta();
    m.location = location;
    m.last_sequence_number = 0;
    m.last_updated_ms = 1700000000000;
    m.last_column_id = 7;
    m.n_schemas = 1;
    m.current_schema_id = 0;
    m.n_specs = 1;
    m.last_partition_id = 1000;
    m.current_snapshot_id = FL_ICE_NONE;
    m.n_snapshots = m.n_snapshot_log = m.n_metadata_log = 0;
    return m;
}

/* ---- a nested schema ----
 *
 * DESIGN.md's example as the Hadoop catalog creates it: a INT NOT NULL,
 * b ARRAY<ROW<x INT, y STRING NOT NULL>> (a comment "rows"),
 * c MAP<STRING, INT NOT NULL>, then the system columns. */

static const fl_ice_field_t NX_FIELDS[] = {
    {8, "x", false, "int", NULL, NULL},
    {9, "y", true, "string", "why", NULL},
};
static const fl_ice_nested_t NX_ROW = {FL_ICE_STRUCT, NX_FIELDS, 2, NULL, NULL, NULL};
static const fl_ice_field_t NB_ELEMENT = {7, "element", false, NULL, NULL, &NX_ROW};
static const fl_ice_nested_t NB_LIST = {FL_ICE_LIST, NULL, 0, &NB_ELEMENT, NULL, NULL};
static const fl_ice_field_t NC_KEY = {10, "key", true, "string", NULL, NULL};
static const fl_ice_field_t NC_VALUE = {11, "value", true, "int", NULL, NULL};
static const fl_ice_nested_t NC_MAP = {FL_ICE_MAP, NULL, 0, NULL, &NC_KEY, &NC_VALUE};
static const fl_ice_field_t NFIELDS[] = {
    {1, "a", true, "int", NULL, NULL},
    {2, "b", false, NULL, "rows", &NB_LIST},
    {3, "c", false, NULL, NULL, &NC_MAP},
    {4, "__bucket", true, "int", NULL, NULL},
    {5, "__offset", true, "long", NULL, NULL},
    {6, "__timestamp", true, "timestamptz", NULL, NULL},
};
static const fl_ice_schema_t NSCHEMA = {0, NFIELDS, 6, IDENT, 1};
static const fl_ice_partition_field_t NSPEC_FIELDS[] = {
    {"__bucket", 4, 1000, FL_ICE_IDENTITY, 0, FL_ICE_INT},
};
static const fl_ice_partition_spec_t NSPEC = {0, NSPEC_FIELDS, 1};
static const fl_ice_sort_field_t NSORT_FIELDS[] = {{5, false, false}};
static const fl_ice_sort_order_t NSORT = {1, NSORT_FIELDS, 1};

static fl_ice_table_meta_t nested_meta(void) {
    fl_ice_table_meta_t m = new_meta("file:///wh/nested");
    m.last_column_id = 11;
    m.schemas = &NSCHEMA;
    m.specs = &NSPEC;
    m.sort_orders = &NSORT;
    m.n_sort_orders = 1;
    return m;
}

/* ---- comparing ---- */

static void assert_field_equal(const fl_ice_field_t *a, const fl_ice_field_t *b);

static void assert_str_eq(const char *a, const char *b) {
    if (!a || !b)
        assert_true(a == b);
    else
        assert_string_equal(a, b);
}

static void assert_props_equal(const fl_ice_prop_t *a, size_t na, const fl_ice_prop_t *b, size_t nb) {
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++) { /* a JSON object's order is kept both ways */
        assert_str_eq(a[i].key, b[i].key);
        assert_str_eq(a[i].value, b[i].value);
    }
}

/* The whole tree: ids, names, requiredness, types, docs, at every depth. */
static void assert_field_equal(const fl_ice_field_t *a, const fl_ice_field_t *b) {
    assert_int_equal(a->id, b->id);
    assert_str_eq(a->name, b->name);
    assert_int_equal(a->required, b->required);
    assert_str_eq(a->type, b->type);
    assert_str_eq(a->doc, b->doc);
    assert_int_equal(a->nested == NULL, b->nested == NULL);
    if (!a->nested) return;
    const fl_ice_nested_t *x = a->nested, *y = b->nested;
    assert_int_equal(x->kind, y->kind);
    assert_int_equal(x->n_fields, y->n_fields);
    for (size_t i = 0; i < x->n_fields; i++) assert_field_equal(&x->fields[i], &y->fields[i]);
    const fl_ice_field_t *const xs[] = {x->element, x->key, x->value};
    const fl_ice_field_t *const ys[] = {y->element, y->key, y->value};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(xs[i] == NULL, ys[i] == NULL);
        if (xs[i]) assert_field_equal(xs[i], ys[i]);
    }
}

static void assert_schema_equal(const fl_ice_schema_t *a, const fl_ice_schema_t *b) {
    assert_int_equal(a->schema_id, b->schema_id);
    assert_int_equal(a->n_fields, b->n_fields);
    for (size_t i = 0; i < a->n_fields; i++) assert_field_equal(&a->fields[i], &b->fields[i]);
    assert_int_equal(a->n_identifier_ids, b->n_identifier_ids);
    for (size_t i = 0; i < a->n_identifier_ids; i++)
        assert_int_equal(a->identifier_ids[i], b->identifier_ids[i]);
}

static void assert_specs_equal(const fl_ice_table_meta_t *a, const fl_ice_table_meta_t *b) {
    assert_int_equal(a->n_specs, b->n_specs);
    for (size_t i = 0; i < a->n_specs; i++) {
        assert_int_equal(a->specs[i].spec_id, b->specs[i].spec_id);
        assert_int_equal(a->specs[i].n_fields, b->specs[i].n_fields);
        for (size_t j = 0; j < a->specs[i].n_fields; j++) {
            const fl_ice_partition_field_t *x = &a->specs[i].fields[j], *y = &b->specs[i].fields[j];
            assert_str_eq(x->name, y->name);
            assert_int_equal(x->source_id, y->source_id);
            assert_int_equal(x->field_id, y->field_id);
            assert_int_equal(x->transform, y->transform);
            assert_int_equal(x->buckets, y->buckets);
            assert_int_equal(x->type, y->type);
        }
    }
    assert_int_equal(a->n_sort_orders, b->n_sort_orders);
    for (size_t i = 0; i < a->n_sort_orders; i++) {
        const fl_ice_sort_order_t *x = &a->sort_orders[i], *y = &b->sort_orders[i];
        assert_int_equal(x->order_id, y->order_id);
        assert_int_equal(x->n_fields, y->n_fields);
        for (size_t j = 0; j < x->n_fields; j++) {
            assert_int_equal(x->fields[j].source_id, y->fields[j].source_id);
            assert_int_equal(x->fields[j].descending, y->fields[j].descending);
            assert_int_equal(x->fields[j].nulls_last, y->fields[j].nulls_last);
        }
    }
}

static void assert_snapshots_equal(const fl_ice_table_meta_t *a, const fl_ice_table_meta_t *b) {
    assert_int_equal(a->n_snapshots, b->n_snapshots);
    for (size_t i = 0; i < a->n_snapshots; i++) {
        const fl_ice_snapshot_t *x = &a->snapshots[i], *y = &b->snapshots[i];
        assert_int_equal(x->snapshot_id, y->snapshot_id);
        assert_int_equal(x->parent_snapshot_id, y->parent_snapshot_id);
        assert_int_equal(x->sequence_number, y->sequence_number);
        assert_int_equal(x->timestamp_ms, y->timestamp_ms);
        assert_str_eq(x->manifest_list, y->manifest_list);
        assert_int_equal(x->schema_id, y->schema_id);
        assert_props_equal(x->summary, x->n_summary, y->summary, y->n_summary);
    }
    assert_int_equal(a->n_snapshot_log, b->n_snapshot_log);
    for (size_t i = 0; i < a->n_snapshot_log; i++) {
        assert_int_equal(a->snapshot_log[i].timestamp_ms, b->snapshot_log[i].timestamp_ms);
        assert_int_equal(a->snapshot_log[i].snapshot_id, b->snapshot_log[i].snapshot_id);
    }
    assert_int_equal(a->n_metadata_log, b->n_metadata_log);
    for (size_t i = 0; i < a->n_metadata_log; i++) {
        assert_int_equal(a->metadata_log[i].timestamp_ms, b->metadata_log[i].timestamp_ms);
        assert_str_eq(a->metadata_log[i].metadata_file, b->metadata_log[i].metadata_file);
    }
}

static void assert_meta_equal(const fl_ice_table_meta_t *a, const fl_ice_table_meta_t *b) {
    assert_string_equal(a->table_uuid, b->table_uuid);
    assert_str_eq(a->location, b->location);
    assert_int_equal(a->last_sequence_number, b->last_sequence_number);
    assert_int_equal(a->last_updated_ms, b->last_updated_ms);
    assert_int_equal(a->last_column_id, b->last_column_id);
    assert_int_equal(a->n_schemas, b->n_schemas);
    for (size_t i = 0; i < a->n_schemas; i++) assert_schema_equal(&a->schemas[i], &b->schemas[i]);
    assert_int_equal(a->current_schema_id, b->current_schema_id);
    assert_int_equal(a->default_spec_id, b->default_spec_id);
    assert_int_equal(a->last_partition_id, b->last_partition_id);
    assert_int_equal(a->default_sort_order_id, b->default_sort_order_id);
    assert_specs_equal(a, b);
    assert_props_equal(a->properties, a->n_properties, b->properties, b->n_properties);
    assert_int_equal(a->current_snapshot_id, b->current_snapshot_id);
    assert_snapshots_equal(a, b);
}

static void encode_ok(const fl_ice_table_meta_t *m, fl_buf_t *out) {
    fl_error_t err = {0};
    fl_buf_init(out);
    if (fl_ice_meta_encode(m, out, &err)) fail_msg("encode: %s", err.msg);
}

/* ---- round trips ---- */

static void test_round_trip(void **state) {
    (void)state;
    fl_ice_table_meta_t m = full_meta();
    fl_buf_t a, b;
    encode_ok(&m, &a);
    fl_ice_meta_read_t r;
    fl_ice_meta_read_init(&r);
    fl_error_t err = {0};
    if (fl_ice_meta_decode(a.data, a.len, &r, &err)) fail_msg("decode: %s", err.msg);
    assert_meta_equal(&m, &r.meta);
    encode_ok(&r.meta, &b); /* the same bytes again: nothing lost or reordered */
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);

    /* what readers look for, by name */
    json_t *j = json_loadb((const char *)a.data, a.len, 0, NULL);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "format-version")), 2);
    json_t *main = json_object_get(json_object_get(j, "refs"), "main");
    assert_int_equal(json_integer_value(json_object_get(main, "snapshot-id")), 1002);
    assert_string_equal(json_string_value(json_object_get(main, "type")), "branch");
    json_t *s0 = json_array_get(json_object_get(j, "snapshots"), 0);
    assert_null(json_object_get(s0, "parent-snapshot-id")); /* omitted, not -1 */
    json_t *f = json_array_get(json_object_get(json_array_get(json_object_get(j, "schemas"), 1),
                                               "fields"), 3);
    assert_string_equal(json_string_value(json_object_get(f, "type")), "decimal(10,2)");
    json_decref(j);
    fl_buf_free(&a);
    fl_buf_free(&b);
    fl_ice_meta_read_reset(&r);
}

static void test_new_table_round_trip(void **state) {
    (void)state;
    fl_ice_table_meta_t m = new_meta("file:///wh/new");
    fl_buf_t a;
    encode_ok(&m, &a);
    assert_non_null(strstr((const char *)a.data, "\"current-snapshot-id\":-1"));
    assert_non_null(strstr((const char *)a.data, "\"refs\":{}"));
    fl_ice_meta_read_t r;
    fl_ice_meta_read_init(&r);
    fl_error_t err = {0};
    if (fl_ice_meta_decode(a.data, a.len, &r, &err)) fail_msg("decode: %s", err.msg);
    assert_meta_equal(&m, &r.meta);
    fl_buf_free(&a);
    fl_ice_meta_read_reset(&r);
}

/* pyiceberg 0.12's file after one append (SqlCatalog), verbatim but for
 * the paths. */
static const char PYICEBERG[] =
    "{\"location\":\"file:///tmp/wh/db/t\",\"table-uuid\":\"3202346f-e63c-495f-91b9-3b53f41a0e09\","
    "\"last-updated-ms\":1796587897827,\"last-column-id\":3,\"schemas\":[{\"type\":\"struct\","
    "\"fields\":[{\"id\":1,\"name\":\"id\",\"type\":\"long\",\"required\":false},{\"id\":2,"
    "\"name\":\"s\",\"type\":\"string\",\"required\":false},{\"id\":3,\"name\":\"d\",\"type\":"
    "\"double\",\"required\":false}],\"schema-id\":0,\"identifier-field-ids\":[]}],"
    "\"current-schema-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
    "\"default-spec-id\":0,\"last-partition-id\":999,\"properties\":{},\"current-snapshot-id\":"
    "6601668506700870412,\"snapshots\":[{\"snapshot-id\":6601668506700870412,\"sequence-number\":1,"
    "\"timestamp-ms\":1796587897827,\"manifest-list\":\"file:///tmp/wh/db/t/metadata/snap-1.avro\","
    "\"summary\":{\"operation\":\"append\",\"added-files-size\":\"1282\",\"added-data-files\":\"1\","
    "\"added-records\":\"3\",\"total-data-files\":\"1\",\"total-delete-files\":\"0\","
    "\"total-records\":\"3\",\"total-files-size\":\"1282\",\"total-position-deletes\":\"0\","
    "\"total-equality-deletes\":\"0\"},\"schema-id\":0}],\"snapshot-log\":[{\"snapshot-id\":"
    "6601668506700870412,\"timestamp-ms\":1796587897827}],\"metadata-log\":[{\"metadata-file\":"
    "\"file:///tmp/wh/db/t/metadata/00000-b3ce5ca2.metadata.json\",\"timestamp-ms\":1796587897769}],"
    "\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],\"default-sort-order-id\":0,\"refs\":{\"main\":"
    "{\"snapshot-id\":6601668506700870412,\"type\":\"branch\"}},\"statistics\":[],"
    "\"partition-statistics\":[],\"format-version\":2,\"last-sequence-number\":1}";

/* Java's style: -1 for no snapshot, "decimal(9, 2)" with a space, refs
 * with a tag, statistics and keys we do not keep, a null doc. */
static const char JAVA_STYLE[] =
    "{\"format-version\":2,\"table-uuid\":\"AB4F7A52-1C7B-4E0E-9D35-4C1A9A6B2F10\","
    "\"location\":\"file:/wh/j\",\"last-sequence-number\":0,\"last-updated-ms\":5,"
    "\"last-column-id\":2,\"current-schema-id\":0,\"schemas\":[{\"type\":\"struct\","
    "\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"p\",\"required\":true,\"type\":"
    "\"decimal(9, 2)\",\"doc\":null},{\"id\":2,\"name\":\"d\",\"required\":false,\"type\":"
    "\"date\",\"initial-default\":null}]}],\"default-spec-id\":0,\"partition-specs\":[{"
    "\"spec-id\":0,\"fields\":[{\"name\":\"d\",\"transform\":\"identity\",\"source-id\":2,"
    "\"field-id\":1000}]}],\"last-partition-id\":1000,\"default-sort-order-id\":0,"
    "\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],\"properties\":{\"owner\":\"x\"},"
    "\"current-snapshot-id\":-1,\"refs\":{\"t\":{\"snapshot-id\":9,\"type\":\"tag\"}},"
    "\"snapshots\":[],\"statistics\":[],\"snapshot-log\":[],\"metadata-log\":[]}";

static void test_foreign_metadata(void **state) {
    (void)state;
    fl_ice_meta_read_t r;
    fl_ice_meta_read_init(&r);
    fl_error_t err = {0};
    if (fl_ice_meta_decode((const uint8_t *)PYICEBERG, strlen(PYICEBERG), &r, &err))
        fail_msg("pyiceberg: %s", err.msg);
    const fl_ice_table_meta_t *m = &r.meta;
    assert_int_equal(m->current_snapshot_id, 6601668506700870412LL);
    assert_int_equal(m->last_partition_id, 999);
    assert_int_equal(m->n_specs, 1);
    assert_int_equal(m->specs[0].n_fields, 0);
    assert_int_equal(m->n_schemas, 1);
    assert_string_equal(m->schemas[0].fields[2].type, "double");
    assert_int_equal(m->n_snapshots, 1);
    assert_int_equal(m->snapshots[0].parent_snapshot_id, FL_ICE_NONE);
    assert_int_equal(m->snapshots[0].n_summary, 10);
    assert_int_equal(m->n_metadata_log, 1);

    /* only refs.main names the current snapshot: taken from there */
    json_t *j = json_loads(PYICEBERG, 0, NULL);
    json_object_del(j, "current-snapshot-id");
    char *only_refs = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (fl_ice_meta_decode((const uint8_t *)only_refs, strlen(only_refs), &r, &err))
        fail_msg("refs only: %s", err.msg);
    free(only_refs);
    assert_int_equal(m->current_snapshot_id, 6601668506700870412LL);

    if (fl_ice_meta_decode((const uint8_t *)JAVA_STYLE, strlen(JAVA_STYLE), &r, &err))
        fail_msg("java style: %s", err.msg);
    assert_int_equal(m->current_snapshot_id, FL_ICE_NONE);
    assert_string_equal(m->schemas[0].fields[0].type, "decimal(9,2)");
    assert_null(m->schemas[0].fields[0].doc);
    assert_int_equal(m->specs[0].fields[0].type, FL_ICE_DATE);
    assert_int_equal(m->n_properties, 1);
    fl_ice_meta_read_reset(&r);
}

/* ---- edits ---- */

static void test_with_snapshot(void **state) {
    (void)state;
    fl_ice_table_meta_t base = new_meta("file:///wh/t");
    fl_ice_snapshot_t s = {77, FL_ICE_NONE, FL_ICE_NONE, 1700000005000, "file:///wh/t/m/s77.avro",
                           FL_ICE_NO_SCHEMA, SUM1, 5};
    fl_ice_meta_read_t a, b;
    fl_ice_meta_read_init(&a);
    fl_ice_meta_read_init(&b);
    fl_error_t err = {0};
    if (fl_ice_meta_with_snapshot(&base, "file:///wh/t/metadata/v1.metadata.json", &s, &a, &err))
        fail_msg("with_snapshot: %s", err.msg);
    const fl_ice_table_meta_t *m = &a.meta;
    assert_int_equal(m->current_snapshot_id, 77);
    assert_int_equal(m->last_sequence_number, 1);
    assert_int_equal(m->n_snapshots, 1);
    assert_int_equal(m->snapshots[0].sequence_number, 1);
    assert_int_equal(m->snapshots[0].schema_id, 0);
    assert_int_equal(m->last_updated_ms, 1700000005000);
    assert_int_equal(m->n_snapshot_log, 1);
    assert_int_equal(m->snapshot_log[0].snapshot_id, 77);
    assert_int_equal(m->snapshot_log[0].timestamp_ms, 1700000005000);
    assert_int_equal(m->n_metadata_log, 1);
    assert_int_equal(m->metadata_log[0].timestamp_ms, 1700000000000);
    assert_string_equal(m->metadata_log[0].metadata_file, "file:///wh/t/metadata/v1.metadata.json");
    assert_schema_equal(&m->schemas[0], &base.schemas[0]);

    /* the next on top: parent 77, timestamp from the clock, never back */
    fl_ice_snapshot_t s2 = {78, 77, FL_ICE_NONE, FL_ICE_NONE, "file:///wh/t/m/s78.avro", 0, SUM2, 2};
    if (fl_ice_meta_with_snapshot(&a.meta, "file:///wh/t/metadata/v2.metadata.json", &s2, &b, &err))
        fail_msg("with_snapshot 2: %s", err.msg);
    assert_int_equal(b.meta.current_snapshot_id, 78);
    assert_int_equal(b.meta.snapshots[1].parent_snapshot_id, 77);
    assert_int_equal(b.meta.snapshots[1].sequence_number, 2);
    assert_true(b.meta.snapshots[1].timestamp_ms > 1700000005000);
    assert_int_equal(b.meta.last_updated_ms, b.meta.snapshots[1].timestamp_ms);
    assert_int_equal(b.meta.n_metadata_log, 2);
    /* a is untouched, and b owns its memory: reset a and read b */
    fl_ice_meta_read_reset(&a);
    assert_string_equal(b.meta.snapshots[0].manifest_list, "file:///wh/t/m/s77.avro");
    assert_string_equal(b.meta.snapshots[0].summary[1].value, "__fluss_lake_tiering");
    fl_ice_meta_read_reset(&b);
}

static void test_with_snapshot_refusals(void **state) {
    (void)state;
    fl_ice_table_meta_t base = full_meta();
    fl_ice_meta_read_t out;
    fl_ice_meta_read_init(&out);
    fl_error_t err = {0};
    fl_ice_snapshot_t s = {2000, 1002, FL_ICE_NONE, 1, "file:///x.avro", FL_ICE_NO_SCHEMA, SUM2, 2};
    fl_ice_snapshot_t bad = s;
    bad.snapshot_id = 1001;
    assert_error(fl_ice_meta_with_snapshot(&base, NULL, &bad, &out, &err), err,
                 FLUSS_ERR__INVALID_ARG, "already in the table");
    bad = s;
    bad.parent_snapshot_id = 1001;
    assert_error(fl_ice_meta_with_snapshot(&base, NULL, &bad, &out, &err), err,
                 FLUSS_ERR__INVALID_ARG, "is not the current snapshot 1002");
    bad = s;
    bad.sequence_number = 3;
    assert_error(fl_ice_meta_with_snapshot(&base, NULL, &bad, &out, &err), err,
                 FLUSS_ERR__INVALID_ARG, "not above last-sequence-number 3");
    bad = s;
    bad.schema_id = 9;
    assert_error(fl_ice_meta_with_snapshot(&base, NULL, &bad, &out, &err), err,
                 FLUSS_ERR__INVALID_ARG, "schema 9 not in the table");
    bad = s;
    bad.summary = SUM1 + 1; /* no "operation" */
    bad.n_summary = 2;
    assert_error(fl_ice_meta_with_snapshot(&base, NULL, &bad, &out, &err), err,
                 FLUSS_ERR__INVALID_ARG, "summary.operation \"(missing)\"");
    bad = s;
    bad.manifest_list = "";
    assert_error(fl_ice_meta_with_snapshot(&base, NULL, &bad, &out, &err), err,
                 FLUSS_ERR__INVALID_ARG, "manifest-list missing");
    assert_int_equal(out.meta.n_snapshots, 0); /* reset after each failure */

    /* a base breaking the rules is refused too */
    fl_ice_table_meta_t broken = base;
    broken.current_schema_id = 5;
    assert_error(fl_ice_meta_with_snapshot(&broken, NULL, &s, &out, &err), err,
                 FLUSS_ERR__INVALID_ARG, "current-schema-id 5 names no schema");

    /* the metadata-log keeps the newest previous-versions-max entries */
    fl_ice_prop_t props[] = {{"write.metadata.previous-versions-max", "2"}};
    fl_ice_table_meta_t small = base;
    small.properties = props;
    small.n_properties = 1;
    if (fl_ice_meta_with_snapshot(&small, "file:///wh/t/metadata/v3.metadata.json", &s, &out, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(out.meta.n_metadata_log, 2);
    assert_string_equal(out.meta.metadata_log[0].metadata_file, MLOG[1].metadata_file);
    assert_string_equal(out.meta.metadata_log[1].metadata_file,
                        "file:///wh/t/metadata/v3.metadata.json");
    assert_int_equal(out.meta.metadata_log[1].timestamp_ms, base.last_updated_ms);
    fl_ice_meta_read_reset(&out);
}

/* ---- snapshot expiry ---- */

#define T0 1700000010000LL

/* base: new_meta with snapshots 101..105, one a second from T0, each the
 * parent of the next, into five reads (the last is the table). */
static void expire_chain(fl_ice_meta_read_t r[5]) {
    fl_ice_table_meta_t base = new_meta("file:///wh/t");
    const fl_ice_table_meta_t *prev = &base;
    static char lists[5][32];
    fl_error_t err = {0};
    for (int i = 0; i < 5; i++) {
        snprintf(lists[i], sizeof(lists[i]), "file:///wh/t/m/s%d.avro", 101 + i);
        fl_ice_snapshot_t s = {101 + i, i ? 100 + i : FL_ICE_NONE, FL_ICE_NONE, T0 + i * 1000,
                               lists[i], FL_ICE_NO_SCHEMA, SUM2, 2};
        fl_ice_meta_read_init(&r[i]);
        if (fl_ice_meta_with_snapshot(prev, "file:///wh/t/metadata/vX.metadata.json", &s, &r[i],
                                      &err))
            fail_msg("chain %d: %s", i, err.msg);
        prev = &r[i].meta;
    }
}

static void expire_chain_reset(fl_ice_meta_read_t r[5]) {
    for (int i = 0; i < 5; i++) fl_ice_meta_read_reset(&r[i]);
}

/* m with these properties (m's arrays borrowed). */
static fl_ice_table_meta_t with_props(const fl_ice_table_meta_t *m, const fl_ice_prop_t *p,
                                      size_t n) {
    fl_ice_table_meta_t x = *m;
    x.properties = p;
    x.n_properties = n;
    return x;
}

static void test_expire_policy(void **state) {
    (void)state;
    fl_ice_table_meta_t m = new_meta("file:///wh/t");
    fl_ice_expire_policy_t p;
    fl_ice_table_meta_t x = with_props(&m, NULL, 0);
    fl_ice_expire_policy_of(&x, &p);
    assert_int_equal(p.max_age_ms, 432000000);
    assert_int_equal(p.min_keep, 1);
    assert_true(p.gc_enabled);
    fl_ice_prop_t set[] = {{"history.expire.max-snapshot-age-ms", "1"},
                           {"history.expire.min-snapshots-to-keep", "2"},
                           {"gc.enabled", "TRUE"}};
    x = with_props(&m, set, 3);
    fl_ice_expire_policy_of(&x, &p);
    assert_int_equal(p.max_age_ms, 1);
    assert_int_equal(p.min_keep, 2);
    assert_true(p.gc_enabled);
    /* garbage and negative ages take the default; fewer than one kept is one */
    fl_ice_prop_t odd[] = {{"history.expire.max-snapshot-age-ms", "-5"},
                           {"history.expire.min-snapshots-to-keep", "0"},
                           {"gc.enabled", "yes"}};
    x = with_props(&m, odd, 3);
    fl_ice_expire_policy_of(&x, &p);
    assert_int_equal(p.max_age_ms, 432000000);
    assert_int_equal(p.min_keep, 1);
    assert_false(p.gc_enabled); /* Boolean.parseBoolean("yes") */
    fl_ice_prop_t bad[] = {{"history.expire.max-snapshot-age-ms", "10s"},
                           {"history.expire.min-snapshots-to-keep", "x"}};
    x = with_props(&m, bad, 2);
    fl_ice_expire_policy_of(&x, &p);
    assert_int_equal(p.max_age_ms, 432000000);
    assert_int_equal(p.min_keep, 1);
}

static void test_expired_selection(void **state) {
    (void)state;
    fl_ice_meta_read_t r[5];
    expire_chain(r);
    const fl_ice_table_meta_t *m = &r[4].meta;
    int64_t ids[5];
    /* defaults: nothing is five days old */
    fl_ice_expire_policy_t p = {432000000, 1, true};
    assert_int_equal(fl_ice_meta_expired(m, &p, T0 + 10000, ids), 0);
    /* every one old: min-snapshots-to-keep from the current back */
    p = (fl_ice_expire_policy_t){1, 2, true};
    assert_int_equal(fl_ice_meta_expired(m, &p, T0 + 10000, ids), 3);
    assert_int_equal(ids[0], 101);
    assert_int_equal(ids[1], 102);
    assert_int_equal(ids[2], 103);
    /* by age: 104 and 105 are younger than 2.5 s at T0 + 5 s; 103 is not */
    p = (fl_ice_expire_policy_t){2500, 1, true};
    assert_int_equal(fl_ice_meta_expired(m, &p, T0 + 5000, ids), 3);
    assert_int_equal(ids[2], 103);
    /* the current snapshot stays, however old, even at min_keep 1 */
    p = (fl_ice_expire_policy_t){0, 1, true};
    assert_int_equal(fl_ice_meta_expired(m, &p, T0 + 99999, ids), 4);
    for (int i = 0; i < 4; i++) assert_true(ids[i] != 105);
    /* gc.enabled=false: Java refuses to expire at all */
    p = (fl_ice_expire_policy_t){0, 1, false};
    assert_int_equal(fl_ice_meta_expired(m, &p, T0 + 99999, ids), 0);
    /* more to keep than there are: none */
    p = (fl_ice_expire_policy_t){0, 10, true};
    assert_int_equal(fl_ice_meta_expired(m, &p, T0 + 99999, ids), 0);

    /* a snapshot off the current one's ancestry (102's parent cut): young
     * it stays, as Java keeps unreferenced snapshots until they are old */
    fl_ice_snapshot_t snaps[5];
    memcpy(snaps, m->snapshots, sizeof(snaps));
    snaps[1].parent_snapshot_id = FL_ICE_NONE;
    snaps[0].timestamp_ms = T0 + 9000;
    fl_ice_table_meta_t cut = *m;
    cut.snapshots = snaps;
    p = (fl_ice_expire_policy_t){5000, 2, true};
    assert_int_equal(fl_ice_meta_expired(&cut, &p, T0 + 10000, ids), 2);
    assert_int_equal(ids[0], 102);
    assert_int_equal(ids[1], 103);
    expire_chain_reset(r);
}

static void test_without_snapshots(void **state) {
    (void)state;
    fl_ice_meta_read_t r[5], out, again;
    expire_chain(r);
    fl_ice_meta_read_init(&out);
    fl_ice_meta_read_init(&again);
    const fl_ice_table_meta_t *m = &r[4].meta;
    fl_error_t err = {0};
    const int64_t old[] = {103, 101, 102};
    if (fl_ice_meta_without_snapshots(m, "file:///wh/t/metadata/v6.metadata.json", old, 3, &out,
                                      &err))
        fail_msg("without: %s", err.msg);
    const fl_ice_table_meta_t *o = &out.meta;
    assert_int_equal(o->n_snapshots, 2);
    assert_int_equal(o->snapshots[0].snapshot_id, 104);
    assert_int_equal(o->snapshots[0].parent_snapshot_id, 103); /* ancestry ends there */
    assert_int_equal(o->snapshots[1].snapshot_id, 105);
    assert_int_equal(o->current_snapshot_id, 105);
    assert_int_equal(o->last_sequence_number, 5);
    assert_int_equal(o->n_snapshot_log, 2);
    assert_int_equal(o->snapshot_log[0].snapshot_id, 104);
    assert_int_equal(o->snapshot_log[1].snapshot_id, 105);
    assert_int_equal(o->n_metadata_log, m->n_metadata_log + 1);
    assert_string_equal(o->metadata_log[o->n_metadata_log - 1].metadata_file,
                        "file:///wh/t/metadata/v6.metadata.json");
    assert_true(o->last_updated_ms >= m->last_updated_ms);
    /* what the encoder writes the decoder reads back: a dangling parent
     * is valid metadata */
    fl_buf_t json;
    fl_buf_init(&json);
    if (fl_ice_meta_encode(o, &json, &err)) fail_msg("encode: %s", err.msg);
    if (fl_ice_meta_decode(json.data, json.len, &again, &err)) fail_msg("decode: %s", err.msg);
    assert_int_equal(again.meta.n_snapshots, 2);
    assert_int_equal(again.meta.snapshots[0].parent_snapshot_id, 103);
    fl_buf_free(&json);

    /* one from the middle: the snapshot-log entries before it go too
     * (the log must not show 102 current straight before 104) */
    const int64_t mid[] = {103};
    if (fl_ice_meta_without_snapshots(m, NULL, mid, 1, &out, &err)) fail_msg("mid: %s", err.msg);
    assert_int_equal(out.meta.n_snapshots, 4);
    assert_int_equal(out.meta.n_snapshot_log, 2);
    assert_int_equal(out.meta.snapshot_log[0].snapshot_id, 104);
    assert_int_equal(out.meta.n_metadata_log, m->n_metadata_log);

    /* refusals, each naming the id; out is reset after each */
    const int64_t cur[] = {101, 105};
    assert_error(fl_ice_meta_without_snapshots(m, NULL, cur, 2, &out, &err), err,
                 FLUSS_ERR__INVALID_ARG, "snapshot 105 is the current snapshot");
    assert_int_equal(out.meta.n_snapshots, 0);
    const int64_t unknown[] = {999};
    assert_error(fl_ice_meta_without_snapshots(m, NULL, unknown, 1, &out, &err), err,
                 FLUSS_ERR__INVALID_ARG, "snapshot 999 not in the table");
    const int64_t twice[] = {102, 102};
    assert_error(fl_ice_meta_without_snapshots(m, NULL, twice, 2, &out, &err), err,
                 FLUSS_ERR__INVALID_ARG, "snapshot 102 named twice");
    assert_error(fl_ice_meta_without_snapshots(m, NULL, twice, 0, &out, &err), err,
                 FLUSS_ERR__INVALID_ARG, "no snapshot to expire");
    fl_ice_meta_read_reset(&again);
    fl_ice_meta_read_reset(&out);
    expire_chain_reset(r);
}

static void test_with_schema(void **state) {
    (void)state;
    fl_ice_table_meta_t base = new_meta("file:///wh/t");
    fl_ice_schema_t s = {FL_ICE_NO_SCHEMA, FIELDS1, 8, IDENT, 1};
    fl_ice_meta_read_t out;
    fl_ice_meta_read_init(&out);
    fl_error_t err = {0};
    if (fl_ice_meta_with_schema(&base, "file:///wh/t/metadata/v1.metadata.json", &s, &out, &err))
        fail_msg("with_schema: %s", err.msg);
    assert_int_equal(out.meta.n_schemas, 2);
    assert_int_equal(out.meta.current_schema_id, 1);
    assert_int_equal(out.meta.last_column_id, 8);
    assert_int_equal(out.meta.schemas[1].schema_id, 1);
    assert_string_equal(out.meta.schemas[1].fields[4].name, "tag");
    assert_true(out.meta.last_updated_ms >= base.last_updated_ms);
    assert_int_equal(out.meta.n_metadata_log, 1);

    /* widening int -> long is evolution; the rest is refused by name */
    fl_ice_field_t f[8];
    memcpy(f, FIELDS1, sizeof(f));
    fl_ice_schema_t e = {FL_ICE_NO_SCHEMA, f, 8, NULL, 0};
    f[0].type = "long";
    if (fl_ice_meta_with_schema(&base, NULL, &e, &out, &err)) fail_msg("widen: %s", err.msg);
    f[0].type = "string";
    assert_error(fl_ice_meta_with_schema(&base, NULL, &e, &out, &err), err,
                 FLUSS_ERR__INVALID_ARG, "column id: int cannot become string");
    f[0].type = "int";
    f[4].required = true;
    assert_error(fl_ice_meta_with_schema(&base, NULL, &e, &out, &err), err,
                 FLUSS_ERR__INVALID_ARG, "new column tag is required");
    f[4].required = false;
    f[1].required = true;
    assert_error(fl_ice_meta_with_schema(&base, NULL, &e, &out, &err), err,
                 FLUSS_ERR__INVALID_ARG, "column name: optional cannot become required");
    f[1].required = false;
    f[4].id = 3; /* an id of the table under a new column: a clash */
    assert_error(fl_ice_meta_with_schema(&base, NULL, &e, &out, &err), err,
                 FLUSS_ERR__INVALID_ARG, "repeats the id 3");
    fl_ice_schema_t drop = {FL_ICE_NO_SCHEMA, FIELDS1, 5, NULL, 0}; /* no __bucket */
    assert_error(fl_ice_meta_with_schema(&base, NULL, &drop, &out, &err), err,
                 FLUSS_ERR__INVALID_ARG, "drops column 5 of partition field __bucket");
    fl_ice_schema_t dup = {0, FIELDS1, 8, NULL, 0};
    assert_error(fl_ice_meta_with_schema(&base, NULL, &dup, &out, &err), err,
                 FLUSS_ERR__INVALID_ARG, "schema id 0 already in the table");
    /* a column dropped in schema 1 cannot come back as new under its id */
    fl_ice_table_meta_t two = full_meta();
    fl_ice_field_t g[8];
    memcpy(g, FIELDS1, sizeof(g));
    g[4].name = "tag2";
    fl_ice_schema_t s1 = {FL_ICE_NO_SCHEMA, FIELDS0, 7, IDENT, 1}; /* drops 8 */
    if (fl_ice_meta_with_schema(&two, NULL, &s1, &out, &err)) fail_msg("drop: %s", err.msg);
    fl_ice_meta_read_t again;
    fl_ice_meta_read_init(&again);
    fl_ice_schema_t back = {FL_ICE_NO_SCHEMA, g, 8, IDENT, 1};
    assert_error(fl_ice_meta_with_schema(&out.meta, NULL, &back, &again, &err), err,
                 FLUSS_ERR__INVALID_ARG, "id 8 was used before");
    fl_ice_meta_read_reset(&again);
    fl_ice_meta_read_reset(&out);
}

/* ---- the layout ---- */

static char *path_in(const char *dir, const char *name) {
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

static void write_text(const char *dir, const char *name, const char *text) {
    char *p = path_in(dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(p);
}

static char *read_text(const char *dir, const char *name) {
    char *p = path_in(dir, name);
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t err;
    assert_int_equal(fl_fs_read_all(p, 1 << 20, &b, NULL, &err), 0);
    char *s = strndup((const char *)b.data, b.len);
    fl_buf_free(&b);
    free(p);
    return s;
}

/* Files in dir/metadata whose name ends with suffix. */
static int count_suffix(const char *dir, const char *suffix) {
    char *p = path_in(dir, "metadata");
    DIR *d = opendir(p);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        size_t l = strlen(de->d_name), k = strlen(suffix);
        n += l >= k && !strcmp(de->d_name + l - k, suffix);
    }
    if (d) closedir(d);
    free(p);
    return n;
}

static void load_ok(const char *dir, fl_ice_table_head_t *h) {
    fl_error_t err = {0};
    if (fl_ice_table_load(dir, h, &err)) fail_msg("load %s: %s", dir, err.msg);
}

/* The table at dir gets v2: snapshot `id` on top of v1. */
static int commit_snapshot(const char *dir, const fl_ice_table_head_t *h, int64_t id,
                           fl_error_t *err) {
    fl_ice_snapshot_t s = {id, h->meta.meta.current_snapshot_id, FL_ICE_NONE, FL_ICE_NONE,
                           "file:///x/snap.avro", FL_ICE_NO_SCHEMA, SUM2, 2};
    fl_ice_meta_read_t next;
    fl_ice_meta_read_init(&next);
    int rc = fl_ice_meta_with_snapshot(&h->meta.meta, h->metadata_location, &s, &next, err);
    if (!rc) rc = fl_ice_table_commit(dir, h->version, &next.meta, err);
    fl_ice_meta_read_reset(&next);
    return rc;
}

/* write.metadata.delete-after-commit.enabled with previous-versions-max 2:
 * after each commit the versions the metadata-log no longer names are
 * gone, the ones it names (and the new one) stay and still load; off,
 * every version stays. */
static void test_old_versions_deleted(void **state) {
    const char *tmp = *state;
    for (int on = 0; on < 2; on++) {
        char name[32];
        snprintf(name, sizeof(name), "db/keep%d", on);
        char *dir = path_in(tmp, name);
        fl_error_t err = {0};
        fl_ice_table_meta_t m = new_meta("file:///wh/t");
        fl_ice_prop_t props[2] = {{"write.metadata.delete-after-commit.enabled",
                                   on ? "TRUE" : "false"},
                                  {"write.metadata.previous-versions-max", "2"}};
        m.properties = props;
        m.n_properties = 2;
        if (fl_ice_table_create(dir, &m, &err)) fail_msg("create: %s", err.msg);
        for (int64_t id = 10; id < 16; id++) {
            fl_ice_table_head_t h;
            fl_ice_table_head_init(&h);
            load_ok(dir, &h);
            if (commit_snapshot(dir, &h, id, &err)) fail_msg("commit: %s", err.msg);
            fl_ice_table_head_reset(&h);
        }
        /* v7 is the head; its log names v5 and v6 */
        fl_ice_table_head_t h;
        fl_ice_table_head_init(&h);
        load_ok(dir, &h);
        assert_int_equal(h.version, 7);
        assert_int_equal(h.meta.meta.n_metadata_log, 2);
        assert_int_equal(count_suffix(dir, ".metadata.json"), on ? 3 : 7);
        for (int v = 1; v <= 7; v++) {
            char f[64];
            snprintf(f, sizeof(f), "metadata/v%d.metadata.json", v);
            char *p = path_in(dir, f);
            assert_int_equal(access(p, F_OK) == 0, !on || v >= 5);
            free(p);
        }
        fl_ice_table_head_reset(&h);
        free(dir);
    }
}

static void test_create_load_commit(void **state) {
    const char *tmp = *state;
    char *dir = path_in(tmp, "db/t");
    fl_error_t err = {0};
    fl_ice_table_head_t h;
    fl_ice_table_head_init(&h);
    assert_error(fl_ice_table_load(dir, &h, &err), err, FLUSS_ERR_TABLE_NOT_EXIST, "no v<N>");

    fl_ice_table_meta_t m = new_meta("file:///wh/t");
    if (fl_ice_table_create(dir, &m, &err)) fail_msg("create: %s", err.msg);
    char *hint = read_text(dir, "metadata/version-hint.text");
    assert_string_equal(hint, "1"); /* digits, no newline (pyiceberg reads it literally) */
    free(hint);
    assert_error(fl_ice_table_create(dir, &m, &err), err, FLUSS_ERR__CONFLICT, "v1.metadata.json exists");
    assert_int_equal(count_suffix(dir, ".tmp"), 0);

    load_ok(dir, &h);
    assert_int_equal(h.version, 1);
    assert_meta_equal(&m, &h.meta.meta);
    assert_non_null(strstr(h.metadata_path, "/metadata/v1.metadata.json"));
    assert_true(!strncmp(h.metadata_location, "file:///", 8));
    assert_non_null(strstr(h.metadata_location, "/db/t/metadata/v1.metadata.json"));

    if (commit_snapshot(dir, &h, 5, &err)) fail_msg("commit: %s", err.msg);
    /* the same base again: v2 is taken */
    assert_error(commit_snapshot(dir, &h, 6, &err), err, FLUSS_ERR__CONFLICT, "v2.metadata.json exists");
    assert_int_equal(count_suffix(dir, ".tmp"), 0);
    hint = read_text(dir, "metadata/version-hint.text");
    assert_string_equal(hint, "2");
    free(hint);
    char *loc = strdup(h.metadata_location);
    load_ok(dir, &h);
    assert_int_equal(h.version, 2);
    assert_int_equal(h.meta.meta.current_snapshot_id, 5);
    assert_int_equal(h.meta.meta.n_metadata_log, 1);
    assert_string_equal(h.meta.meta.metadata_log[0].metadata_file, loc);
    free(loc);

    /* a base that names no version is the caller's bug, not a conflict */
    assert_error(fl_ice_table_commit(dir, 7, &h.meta.meta, &err), err, FLUSS_ERR__INVALID_ARG,
                 "v7.metadata.json missing");
    /* nor does a metadata that breaks the rules get a tmp */
    fl_ice_table_meta_t bad = h.meta.meta;
    bad.current_schema_id = 42;
    assert_error(fl_ice_table_commit(dir, 2, &bad, &err), err, FLUSS_ERR__INVALID_ARG, "current-schema-id");
    assert_int_equal(count_suffix(dir, ".tmp"), 0);
    fl_ice_table_head_reset(&h);
    free(dir);
}

static void test_hint_recovery(void **state) {
    const char *dir = *state;
    fl_error_t err = {0};
    fl_ice_table_meta_t m = new_meta("file:///wh/t");
    fl_ice_table_head_t h;
    fl_ice_table_head_init(&h);
    if (fl_ice_table_create(dir, &m, &err)) fail_msg("create: %s", err.msg);
    load_ok(dir, &h);
    if (commit_snapshot(dir, &h, 5, &err)) fail_msg("commit: %s", err.msg);
    load_ok(dir, &h);
    if (commit_snapshot(dir, &h, 6, &err)) fail_msg("commit: %s", err.msg);

    /* stale by two (the hint may lag), garbled, ahead of the files,
     * with a newline, or missing: v3 every time */
    static const char *hints[] = {"1", "2", "x7", "9", "3\n", "", "0", "-1", "03", NULL};
    for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
        char *p = path_in(dir, "metadata/version-hint.text");
        unlink(p);
        free(p);
        if (hints[i]) write_text(dir, "metadata/version-hint.text", hints[i]);
        load_ok(dir, &h);
        assert_int_equal(h.version, 3);
        assert_int_equal(h.meta.meta.current_snapshot_id, 6);
    }
    /* a newer version written by hand is found by probing past the hint */
    write_text(dir, "metadata/version-hint.text", "3");
    fl_buf_t json;
    fl_ice_table_meta_t m4 = h.meta.meta;
    m4.last_updated_ms += 1;
    encode_ok(&m4, &json);
    char *p4 = path_in(dir, "metadata/v4.metadata.json");
    assert_int_equal(fl_fs_write_atomic(p4, json.data, json.len, &err), 0);
    load_ok(dir, &h);
    assert_int_equal(h.version, 4);
    /* a damaged newest version is reported with its path, not skipped */
    write_text(dir, "metadata/v4.metadata.json", "{\"format-version\":2");
    assert_error(fl_ice_table_load(dir, &h, &err), err, FLUSS_ERR__CORRUPT, "v4.metadata.json: metadata: not JSON");
    assert_int_equal(h.version, 0);
    free(p4);
    fl_buf_free(&json);
    fl_ice_table_head_reset(&h);
}

/* ---- racing committers ---- */

#define RACERS 8

typedef struct racer {
    const char *dir;
    const fl_ice_table_head_t *head;
    pthread_barrier_t *go;
    int64_t id;
    int rc;
    fl_error_t err;
} racer_t;

static void *race(void *arg) {
    racer_t *r = arg;
    fl_ice_snapshot_t s = {r->id, r->head->meta.meta.current_snapshot_id, FL_ICE_NONE,
                           FL_ICE_NONE, "file:///x/snap.avro", FL_ICE_NO_SCHEMA, SUM2, 2};
    fl_ice_meta_read_t next;
    fl_ice_meta_read_init(&next);
    r->rc = fl_ice_meta_with_snapshot(&r->head->meta.meta, NULL, &s, &next, &r->err);
    pthread_barrier_wait(r->go); /* everyone reaches it, or the others wait forever */
    if (!r->rc) r->rc = fl_ice_table_commit(r->dir, r->head->version, &next.meta, &r->err);
    fl_ice_meta_read_reset(&next);
    return NULL;
}

static void test_racing_commits(void **state) {
    const char *dir = *state;
    fl_error_t err = {0};
    fl_ice_table_meta_t m = new_meta("file:///wh/t");
    fl_ice_table_head_t h;
    fl_ice_table_head_init(&h);
    if (fl_ice_table_create(dir, &m, &err)) fail_msg("create: %s", err.msg);
    for (int round = 0; round < 5; round++) {
        load_ok(dir, &h);
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, RACERS);
        racer_t r[RACERS];
        pthread_t t[RACERS];
        for (int i = 0; i < RACERS; i++) {
            r[i] = (racer_t){dir, &h, &go, 100 * round + i, -1, {0}};
            pthread_create(&t[i], NULL, race, &r[i]);
        }
        int won = -1;
        for (int i = 0; i < RACERS; i++) {
            pthread_join(t[i], NULL);
            if (r[i].rc == 0) {
                assert_int_equal(won, -1);
                won = i;
            } else {
                assert_error(r[i].rc, r[i].err, FLUSS_ERR__CONFLICT, "another commit");
            }
        }
        pthread_barrier_destroy(&go);
        assert_int_not_equal(won, -1);
        assert_int_equal(count_suffix(dir, ".tmp"), 0);
        load_ok(dir, &h);
        assert_int_equal(h.version, round + 2);
        assert_int_equal(h.meta.meta.current_snapshot_id, r[won].id);
    }
    fl_ice_table_head_reset(&h);
}

/* ---- a failure at every file-system call of a commit ---- */

typedef struct failer {
    int calls; /* counted: open, pwrite, fsync, close, link, rename */
    int fail_at; /* 1-based; 0: never */
} failer_t;

static failer_t FAILER;

static bool fail_now(void) { return ++FAILER.calls == FAILER.fail_at; }

#define FAILABLE(call) (fail_now() ? (errno = EIO, -1) : (call))

static int f_open(void *c, const char *p, int fl, mode_t m) {
    (void)c;
    return FAILABLE(fl_vfs_posix()->open(NULL, p, fl, m));
}
static int f_close(void *c, int fd) {
    (void)c;
    int rc = fl_vfs_posix()->close(NULL, fd); /* closed either way, as close(2) does */
    return fail_now() ? (errno = EIO, -1) : rc;
}
static int f_dup(void *c, int fd) { return fl_vfs_posix()->dup(c, fd); }
static ssize_t f_pread(void *c, int fd, void *b, size_t n, off_t o) {
    return fl_vfs_posix()->pread(c, fd, b, n, o);
}
static ssize_t f_pwrite(void *c, int fd, const void *b, size_t n, off_t o) {
    (void)c;
    return FAILABLE(fl_vfs_posix()->pwrite(NULL, fd, b, n, o));
}
static int f_fsync(void *c, int fd, bool d) {
    (void)c;
    return FAILABLE(fl_vfs_posix()->fsync(NULL, fd, d));
}
static int f_ftruncate(void *c, int fd, off_t n) { return fl_vfs_posix()->ftruncate(c, fd, n); }
static int f_rename(void *c, const char *a, const char *b) {
    (void)c;
    return FAILABLE(fl_vfs_posix()->rename(NULL, a, b));
}
static int f_link(void *c, const char *a, const char *b) {
    (void)c;
    return FAILABLE(fl_vfs_posix()->link(NULL, a, b));
}
static int f_unlink(void *c, const char *p) { return fl_vfs_posix()->unlink(c, p); }
static int f_mkdir(void *c, const char *p, mode_t m) { return fl_vfs_posix()->mkdir(c, p, m); }
static int f_rmdir(void *c, const char *p) { return fl_vfs_posix()->rmdir(c, p); }

static const fl_vfs_ops_t FAILING = {f_open, f_close, f_dup, f_pread, f_pwrite, f_fsync,
                                     f_ftruncate, f_rename, f_link, f_unlink, f_mkdir, f_rmdir,
                                     NULL};

static void test_commit_faults(void **state) {
    const char *dir = *state;
    fl_error_t err = {0};
    fl_ice_table_meta_t m = new_meta("file:///wh/t");
    fl_ice_table_head_t h;
    fl_ice_table_head_init(&h);
    if (fl_ice_table_create(dir, &m, &err)) fail_msg("create: %s", err.msg);
    load_ok(dir, &h);
    fl_ice_snapshot_t s = {9, FL_ICE_NONE, FL_ICE_NONE, 1800000000000, "file:///x/snap.avro",
                           FL_ICE_NO_SCHEMA, SUM2, 2};
    fl_ice_meta_read_t next;
    fl_ice_meta_read_init(&next);
    if (fl_ice_meta_with_snapshot(&h.meta.meta, NULL, &s, &next, &err)) fail_msg("%s", err.msg);
    char *v2 = path_in(dir, "metadata/v2.metadata.json");
    int outcomes[4] = {0}; /* nothing, visible in doubt, durable without hint, all */
    for (int at = 1;; at++) {
        unlink(v2);
        write_text(dir, "metadata/version-hint.text", "1");
        FAILER = (failer_t){0, at};
        fl_vfs_install(&FAILING, NULL);
        fl_ice_commit_info_t info;
        int rc = fl_ice_table_commit_info(dir, 1, &next.meta, &info, &err);
        fl_vfs_install(NULL, NULL);
        int calls = FAILER.calls;
        assert_int_equal(count_suffix(dir, ".tmp"), 0);
        struct stat st;
        bool present = stat(v2, &st) == 0;
        assert_int_equal(present, info.visible);
        if (rc == 0) {
            assert_true(info.durable);
            char *hint = read_text(dir, "metadata/version-hint.text");
            assert_string_equal(hint, info.hint_written ? "2" : "1");
            free(hint);
            outcomes[info.hint_written ? 3 : 2]++;
        } else {
            assert_int_equal(rc, FLUSS_ERR__IO);
            assert_false(info.durable);
            if (info.visible) assert_non_null(strstr(err.msg, "visible but not known durable"));
            outcomes[info.visible ? 1 : 0]++;
        }
        /* whatever happened, a load sees a whole version */
        load_ok(dir, &h);
        assert_int_equal(h.version, present ? 2 : 1);
        assert_int_equal(h.meta.meta.current_snapshot_id, present ? 9 : FL_ICE_NONE);
        if (at > calls) { /* the commit made fewer calls: every one has failed once */
            assert_int_equal(rc, 0);
            break;
        }
    }
    /* open, write, fsync, close of the tmp; the link (nothing visible);
     * the directory fsync (in doubt); the hint's tmp and rename (no hint);
     * the directory fsync after the rename (the hint says 2) */
    assert_int_equal(outcomes[0], 5);
    assert_true(outcomes[1] >= 1);
    assert_int_equal(outcomes[2], 5);
    assert_true(outcomes[3] >= 2); /* a failed fsync after the hint's rename, and success */
    free(v2);
    fl_ice_meta_read_reset(&next);
    fl_ice_table_head_reset(&h);
}

/* ---- decode refusals ---- */

typedef void (*mutate_fn)(json_t *root);

static json_t *at(json_t *root, const char *key, size_t i) {
    return json_array_get(json_object_get(root, key), i);
}

static void m_version1(json_t *j) { json_object_set_new(j, "format-version", json_integer(1)); }
static void m_version3(json_t *j) { json_object_set_new(j, "format-version", json_integer(3)); }
static void m_version_str(json_t *j) { json_object_set_new(j, "format-version", json_string("2")); }
static void m_no_column_id(json_t *j) { json_object_del(j, "last-column-id"); }
static void m_no_uuid(json_t *j) { json_object_del(j, "table-uuid"); }
static void m_bad_uuid(json_t *j) { json_object_set_new(j, "table-uuid", json_string("../../x")); }
static void m_no_location(json_t *j) { json_object_del(j, "location"); }
static void m_no_sort_orders(json_t *j) { json_object_del(j, "sort-orders"); }
static void m_schemas_obj(json_t *j) { json_object_set_new(j, "schemas", json_object()); }
static void m_column_id_big(json_t *j) {
    json_object_set_new(j, "last-column-id", json_integer(1LL << 40));
}
static void m_required_str(json_t *j) {
    json_object_set_new(json_array_get(json_object_get(at(j, "schemas", 0), "fields"), 0),
                        "required", json_string("yes"));
}
/* Schema 0's column 1 ("name", id 2; last-column-id 8) of type t. */
static void set_type0(json_t *j, json_t *t) {
    json_object_set_new(json_array_get(json_object_get(at(j, "schemas", 0), "fields"), 1), "type", t);
}
static json_t *list_of(int id, json_t *element) {
    return json_pack("{s:s, s:i, s:o, s:b}", "type", "list", "element-id", id, "element", element,
                     "element-required", 0);
}
static void m_nested_id_big(json_t *j) { set_type0(j, list_of(9, json_string("int"))); }
static void m_nested_id_dup(json_t *j) { set_type0(j, list_of(1, json_string("int"))); }
static void m_nested_no_id(json_t *j) {
    set_type0(j, json_pack("{s:s, s:s, s:b}", "type", "list", "element", "int", "element-required", 0));
}
static void m_nested_no_required(json_t *j) {
    set_type0(j, json_pack("{s:s, s:i, s:s}", "type", "list", "element-id", 8, "element", "int"));
}
static void m_nested_kind(json_t *j) { set_type0(j, json_pack("{s:s}", "type", "union")); }
static void m_nested_no_kind(json_t *j) { set_type0(j, json_pack("{s:[]}", "fields")); }
static void m_nested_element_int(json_t *j) { set_type0(j, list_of(8, json_integer(5))); }
static void m_nested_element_v3(json_t *j) { set_type0(j, list_of(8, json_string("timestamp_ns"))); }
static void m_nested_fields_obj(json_t *j) {
    set_type0(j, json_pack("{s:s, s:{}}", "type", "struct", "fields"));
}
static void m_nested_no_name(json_t *j) {
    set_type0(j, json_pack("{s:s, s:[{s:i, s:b, s:s}]}", "type", "struct", "fields", "id", 8,
                           "required", 0, "type", "int"));
}
static void m_nested_names_twice(json_t *j) {
    json_object_set_new(j, "last-column-id", json_integer(10));
    set_type0(j, list_of(8, json_pack("{s:s, s:[{s:i, s:s, s:b, s:s}, {s:i, s:s, s:b, s:s}]}",
                                      "type", "struct", "fields", "id", 9, "name", "x",
                                      "required", 0, "type", "int", "id", 10, "name", "x",
                                      "required", 0, "type", "long")));
}
static void m_nested_map_no_value_id(json_t *j) {
    set_type0(j, json_pack("{s:s, s:i, s:s, s:s, s:b}", "type", "map", "key-id", 8, "key",
                           "string", "value", "int", "value-required", 0));
}
static void m_nested_ident(json_t *j) { /* the identifier column "id" a struct */
    json_object_set_new(json_array_get(json_object_get(at(j, "schemas", 0), "fields"), 0), "type",
                        json_pack("{s:s, s:[]}", "type", "struct", "fields"));
}
static void m_nested_partition(json_t *j) { /* spec 1's identity(name) over a struct */
    json_object_set_new(json_array_get(json_object_get(at(j, "schemas", 1), "fields"), 1), "type",
                        json_pack("{s:s, s:[]}", "type", "struct", "fields"));
}
static void m_v3_type(json_t *j) {
    json_object_set_new(json_array_get(json_object_get(at(j, "schemas", 1), "fields"), 2), "type",
                        json_string("timestamp_ns"));
}
static void m_bad_decimal(json_t *j) {
    json_object_set_new(json_array_get(json_object_get(at(j, "schemas", 1), "fields"), 3), "type",
                        json_string("decimal(39,2)"));
}
static void m_day(json_t *j) {
    json_object_set_new(json_array_get(json_object_get(at(j, "partition-specs", 1), "fields"), 1),
                        "transform", json_string("day"));
}
static void m_bucket0(json_t *j) {
    json_object_set_new(json_array_get(json_object_get(at(j, "partition-specs", 1), "fields"), 0),
                        "transform", json_string("bucket[0]"));
}
static void m_identity_ts(json_t *j) {
    json_object_set_new(json_array_get(json_object_get(at(j, "partition-specs", 1), "fields"), 1),
                        "source-id", json_integer(3));
}
static void m_source_missing(json_t *j) {
    json_object_set_new(json_array_get(json_object_get(at(j, "partition-specs", 0), "fields"), 0),
                        "source-id", json_integer(99));
}
static void m_sort_bucket(json_t *j) {
    json_object_set_new(json_array_get(json_object_get(at(j, "sort-orders", 1), "fields"), 0),
                        "transform", json_string("bucket[4]"));
}
static void m_sort_dir(json_t *j) {
    json_object_set_new(json_array_get(json_object_get(at(j, "sort-orders", 1), "fields"), 0),
                        "direction", json_string("up"));
}
static void m_no_operation(json_t *j) {
    json_object_del(json_object_get(at(j, "snapshots", 1), "summary"), "operation");
}
static void m_summary_int(json_t *j) {
    json_object_set_new(json_object_get(at(j, "snapshots", 0), "summary"), "added-records",
                        json_integer(3));
}
static void m_seq_above(json_t *j) {
    json_object_set_new(at(j, "snapshots", 2), "sequence-number", json_integer(4));
}
static void m_dup_snapshot(json_t *j) {
    json_object_set_new(at(j, "snapshots", 2), "snapshot-id", json_integer(1000));
}
static void m_current_missing(json_t *j) {
    json_object_set_new(j, "current-snapshot-id", json_integer(5));
    json_object_set_new(json_object_get(json_object_get(j, "refs"), "main"), "snapshot-id",
                        json_integer(5));
}
static void m_refs_disagree(json_t *j) {
    json_object_set_new(json_object_get(json_object_get(j, "refs"), "main"), "snapshot-id",
                        json_integer(1001));
}
static void m_v1_manifests(json_t *j) {
    json_t *s = at(j, "snapshots", 0);
    json_object_del(s, "manifest-list");
    json_object_set_new(s, "manifests", json_pack("[s]", "file:///m.avro"));
}
static void m_dup_field(json_t *j) {
    json_object_set_new(json_array_get(json_object_get(at(j, "schemas", 0), "fields"), 1), "id",
                        json_integer(1));
}
static void m_ident_optional(json_t *j) {
    json_object_set_new(at(j, "schemas", 0), "identifier-field-ids", json_pack("[i]", 2));
}
static void m_default_spec(json_t *j) { json_object_set_new(j, "default-spec-id", json_integer(7)); }
static void m_log_file(json_t *j) {
    json_object_set_new(at(j, "metadata-log", 0), "metadata-file", json_integer(1));
}
static void m_many_fields(json_t *j) {
    json_t *fields = json_array();
    for (int i = 0; i <= FL_ICE_SCHEMA_FIELDS_MAX; i++)
        json_array_append_new(fields, json_pack("{s:i,s:s,s:b,s:s}", "id", i + 1, "name", "c",
                                                "required", 0, "type", "int"));
    json_object_set_new(at(j, "schemas", 0), "fields", fields);
}
static void m_many_sort_fields(json_t *j) {
    json_t *fields = json_array();
    for (int i = 0; i <= FL_ICE_SORT_FIELDS_MAX; i++)
        json_array_append_new(fields, json_pack("{s:s,s:i,s:s,s:s}", "transform", "identity",
                                                "source-id", 6, "direction", "asc", "null-order",
                                                "nulls-first"));
    json_object_set_new(at(j, "sort-orders", 1), "fields", fields);
}
static void m_many_props(json_t *j) {
    json_t *p = json_object();
    for (int i = 0; i <= FL_ICE_PROPS_MAX; i++) {
        char k[16];
        snprintf(k, sizeof(k), "k%d", i);
        json_object_set_new(p, k, json_string("v"));
    }
    json_object_set_new(j, "properties", p);
}

static const struct refusal {
    const char *name;
    mutate_fn mutate;
    int code;
    const char *text;
} REFUSALS[] = {
    {"v1", m_version1, FLUSS_ERR__INVALID_ARG, "format-version 1 not supported (only 2)"},
    {"v3", m_version3, FLUSS_ERR__INVALID_ARG, "format-version 3 not supported"},
    {"version str", m_version_str, FLUSS_ERR__CORRUPT, "format-version is not an integer"},
    {"no column id", m_no_column_id, FLUSS_ERR__CORRUPT, "last-column-id missing"},
    {"no uuid", m_no_uuid, FLUSS_ERR__CORRUPT, "table-uuid missing"},
    {"bad uuid", m_bad_uuid, FLUSS_ERR__CORRUPT, "table-uuid is not a UUID"},
    {"no location", m_no_location, FLUSS_ERR__CORRUPT, "location missing"},
    {"no sort orders", m_no_sort_orders, FLUSS_ERR__CORRUPT, "sort-orders missing"},
    {"schemas obj", m_schemas_obj, FLUSS_ERR__CORRUPT, "schemas is not an array"},
    {"column id big", m_column_id_big, FLUSS_ERR__CORRUPT, "last-column-id 1099511627776 out of range"},
    {"required str", m_required_str, FLUSS_ERR__CORRUPT, "schemas[0].fields[0].required is not a boolean"},
    {"nested id big", m_nested_id_big, FLUSS_ERR__CORRUPT, "schemas[0].fields[1].type.element.id 9 above last-column-id 8"},
    {"nested id dup", m_nested_id_dup, FLUSS_ERR__CORRUPT, "schemas[0].fields[1].type.element repeats the id 1"},
    {"nested no id", m_nested_no_id, FLUSS_ERR__CORRUPT, "schemas[0].fields[1].type.element-id missing"},
    {"nested no required", m_nested_no_required, FLUSS_ERR__CORRUPT, "schemas[0].fields[1].type.element-required missing"},
    {"nested kind", m_nested_kind, FLUSS_ERR__CORRUPT, "schemas[0].fields[1].type.type is not struct, list or map"},
    {"nested no kind", m_nested_no_kind, FLUSS_ERR__CORRUPT, "schemas[0].fields[1].type.type missing"},
    {"nested element int", m_nested_element_int, FLUSS_ERR__CORRUPT, "schemas[0].fields[1].type.element is not a string or an object"},
    {"nested element v3", m_nested_element_v3, FLUSS_ERR__INVALID_ARG, "schemas[0].fields[1].type.element \"timestamp_ns\" not supported"},
    {"nested fields obj", m_nested_fields_obj, FLUSS_ERR__CORRUPT, "schemas[0].fields[1].type.fields is not an array"},
    {"nested no name", m_nested_no_name, FLUSS_ERR__CORRUPT, "schemas[0].fields[1].type.fields[0].name missing"},
    {"nested names twice", m_nested_names_twice, FLUSS_ERR__CORRUPT, "schemas[0].fields[1].type.element.type.fields[1] repeats the name \"x\""},
    {"map no value id", m_nested_map_no_value_id, FLUSS_ERR__CORRUPT, "schemas[0].fields[1].type.value-id missing"},
    {"nested ident", m_nested_ident, FLUSS_ERR__CORRUPT, "schemas[0].identifier-field-ids: id is nested"},
    {"nested partition", m_nested_partition, FLUSS_ERR__CORRUPT, "partition-specs[1].fields[1].source-id names a nested column"},
    {"v3 type", m_v3_type, FLUSS_ERR__INVALID_ARG, "schemas[1].fields[2].type \"timestamp_ns\" not supported"},
    {"decimal 39", m_bad_decimal, FLUSS_ERR__INVALID_ARG, "\"decimal(39,2)\" not supported"},
    {"day", m_day, FLUSS_ERR__INVALID_ARG, "partition-specs[1].fields[1].transform \"day\" not supported"},
    {"bucket 0", m_bucket0, FLUSS_ERR__INVALID_ARG, "transform \"bucket[0]\" not supported"},
    {"identity ts", m_identity_ts, FLUSS_ERR__INVALID_ARG, "identity over a timestamptz column"},
    {"source missing", m_source_missing, FLUSS_ERR__CORRUPT, "partition-specs[0].fields[0].source-id names no column"},
    {"sort bucket", m_sort_bucket, FLUSS_ERR__INVALID_ARG, "sort-orders[1].fields[0].transform \"bucket[4]\""},
    {"sort dir", m_sort_dir, FLUSS_ERR__CORRUPT, "sort-orders[1].fields[0].direction is not asc or desc"},
    {"no operation", m_no_operation, FLUSS_ERR__CORRUPT, "snapshots[1].summary.operation \"(missing)\""},
    {"summary int", m_summary_int, FLUSS_ERR__CORRUPT, "snapshots[0].summary.added-records is not a string"},
    {"seq above", m_seq_above, FLUSS_ERR__CORRUPT, "snapshots[2].sequence-number 4 negative or above last-sequence-number 3"},
    {"dup snapshot", m_dup_snapshot, FLUSS_ERR__CORRUPT, "snapshot-id 1000 twice"},
    {"current missing", m_current_missing, FLUSS_ERR__CORRUPT, "current-snapshot-id 5 names no snapshot"},
    {"refs disagree", m_refs_disagree, FLUSS_ERR__CORRUPT, "refs.main.snapshot-id is not current-snapshot-id"},
    {"v1 manifests", m_v1_manifests, FLUSS_ERR__INVALID_ARG, "snapshots[0]: a v1 \"manifests\" list"},
    {"dup field", m_dup_field, FLUSS_ERR__CORRUPT, "schemas[0].fields[1] repeats the id 1"},
    {"ident optional", m_ident_optional, FLUSS_ERR__CORRUPT, "identifier-field-ids: name is optional"},
    {"default spec", m_default_spec, FLUSS_ERR__CORRUPT, "default-spec-id 7 names no spec"},
    {"log file", m_log_file, FLUSS_ERR__CORRUPT, "metadata-log[0].metadata-file is not a string"},
    {"many fields", m_many_fields, FLUSS_ERR__CORRUPT, "schemas[0].fields has 4097 entries (at most 4096)"},
    {"many sort fields", m_many_sort_fields, FLUSS_ERR__CORRUPT, "sort-orders[1].fields has 65 entries (at most 64)"},
    {"many props", m_many_props, FLUSS_ERR__CORRUPT, "properties has 4097 entries (at most 4096)"},
};

static void test_decode_refusals(void **state) {
    (void)state;
    fl_ice_table_meta_t m = full_meta();
    fl_buf_t good;
    encode_ok(&m, &good);
    fl_ice_meta_read_t r;
    fl_ice_meta_read_init(&r);
    fl_error_t err = {0};
    for (size_t i = 0; i < sizeof(REFUSALS) / sizeof(REFUSALS[0]); i++) {
        json_t *j = json_loadb((const char *)good.data, good.len, 0, NULL);
        REFUSALS[i].mutate(j);
        char *s = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        int rc = fl_ice_meta_decode((const uint8_t *)s, strlen(s), &r, &err);
        free(s);
        if (rc != REFUSALS[i].code || !strstr(err.msg, REFUSALS[i].text))
            fail_msg("%s: got %d \"%s\", want %d with \"%s\"", REFUSALS[i].name, rc, err.msg,
                     REFUSALS[i].code, REFUSALS[i].text);
        assert_int_equal(r.meta.n_schemas, 0); /* reset on failure */
    }
    static const struct {
        const char *json, *text;
    } raw[] = {
        {"", "not JSON"},
        {"not json", "not JSON"},
        {"[]", "not a JSON object"},
        {"7", "not JSON"}, /* jansson's own refusal of a bare value */
        {"{\"format-version\":2,\"format-version\":2}", "not JSON: duplicate object key"},
        {"{\"format-version\":2,\"location\":\"a\\u0000b\"}", "not JSON"},
        {"{}", "format-version missing"},
    };
    for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++) {
        int rc = fl_ice_meta_decode((const uint8_t *)raw[i].json, strlen(raw[i].json), &r, &err);
        if (rc != FLUSS_ERR__CORRUPT || !strstr(err.msg, raw[i].text))
            fail_msg("raw %zu: got %d \"%s\", want \"%s\"", i, rc, err.msg, raw[i].text);
    }
    fl_buf_free(&good);
    fl_ice_meta_read_reset(&r);
}

static void test_truncations_and_flips(void **state) {
    (void)state;
    fl_ice_table_meta_t m = full_meta();
    fl_buf_t good;
    encode_ok(&m, &good);
    fl_ice_meta_read_t r;
    fl_ice_meta_read_init(&r);
    fl_error_t err;
    for (size_t n = 0; n < good.len; n++) {
        uint8_t *cut = malloc(n ? n : 1); /* exactly n bytes: ASan sees any overread */
        memcpy(cut, good.data, n);
        int rc = fl_ice_meta_decode(cut, n, &r, &err);
        free(cut);
        if (rc != FLUSS_ERR__CORRUPT) fail_msg("cut at %zu of %zu: %d %s", n, good.len, rc, err.msg);
    }
    /* flipped bytes: any outcome but a crash; what decodes encodes again */
    uint8_t *b = malloc(good.len);
    for (size_t i = 0; i < good.len; i++) {
        memcpy(b, good.data, good.len);
        b[i] ^= (uint8_t)(1u << (i % 7));
        if (fl_ice_meta_decode(b, good.len, &r, &err) == 0) {
            fl_buf_t again;
            encode_ok(&r.meta, &again);
            fl_buf_free(&again);
        }
    }
    free(b);
    fl_buf_free(&good);
    fl_ice_meta_read_reset(&r);
}

/* ---- encode refusals ---- */

static void test_encode_refusals(void **state) {
    (void)state;
    fl_buf_t out;
    fl_buf_init(&out);
    fl_error_t err = {0};
    fl_ice_table_meta_t m = full_meta();
    strcpy(m.table_uuid, "not-a-uuid");
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG, "table-uuid \"not-a-uuid\"");

    fl_ice_field_t f[7];
    memcpy(f, FIELDS0, sizeof(f));
    fl_ice_schema_t s[2] = {{0, f, 7, IDENT, 1}, SCHEMAS[1]};
    m = full_meta();
    m.schemas = s;
    f[3].type = "decimal(10;2)";
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "schemas[0].fields[3].type \"decimal(10;2)\" not a v2 primitive type");
    f[3].type = "decimal(10,2)";
    f[6].id = 9;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "schemas[0].fields[6].id 9 above last-column-id 8");
    f[6].id = 7;
    f[0].required = false;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "identifier-field-ids: id is optional or a float");
    f[0].required = true;

    fl_ice_partition_field_t pf[2];
    memcpy(pf, SPEC1, sizeof(pf));
    fl_ice_partition_spec_t sp[2] = {SPECS[0], {1, pf, 2}};
    m = full_meta();
    m.specs = sp;
    pf[1].type = FL_ICE_INT;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "value type int, the column gives string");
    pf[1].type = FL_ICE_STRING;
    pf[0].buckets = 0;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "(\"id_bucket\"): transform not supported on int");
    pf[0].buckets = 16;
    pf[1].field_id = 1005;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "above last-partition-id 1002");

    m = full_meta();
    m.default_sort_order_id = 3;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "default-sort-order-id 3 names no sort order");
    m = full_meta();
    fl_ice_prop_t dup[] = {{"a", "1"}, {"b", "2"}, {"a", "3"}};
    m.properties = dup;
    m.n_properties = 3;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "properties has key \"a\" twice");
    fl_ice_prop_t latin1[] = {{"k", "caf\xe9"}};
    m.properties = latin1;
    m.n_properties = 1;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "a string in \"properties\" is not UTF-8");
    m = full_meta();
    m.n_snapshots = 2; /* current 1002 is the third */
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "current-snapshot-id 1002 names no snapshot");
    assert_int_equal(out.len, 0); /* nothing appended by any refusal */

    fl_ice_type_info_t t;
    assert_true(fl_ice_type_parse("decimal( 38 , 0 )", &t));
    assert_int_equal(t.precision, 38);
    assert_false(fl_ice_type_parse("decimal(3,4)", &t));
    assert_false(fl_ice_type_parse("fixed[0]", &t));
    assert_true(fl_ice_type_parse("fixed[16]", &t));
    assert_int_equal(t.length, 16);
    assert_false(fl_ice_type_parse("Int", &t));
    fl_buf_free(&out);
}

static void test_schema_json(void **state) {
    (void)state;
    fl_buf_t out;
    fl_buf_init(&out);
    fl_error_t err = {0};
    assert_int_equal(fl_ice_schema_encode(&SCHEMAS[0], &out, &err), 0);
    json_t *j = json_loadb((const char *)out.data, out.len, 0, NULL);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "type")), "struct");
    assert_int_equal(json_integer_value(json_object_get(j, "schema-id")), 0);
    assert_int_equal(json_array_size(json_object_get(j, "fields")), 7);
    json_t *f1 = json_array_get(json_object_get(j, "fields"), 1);
    assert_string_equal(json_string_value(json_object_get(f1, "doc")), "the customer's name");
    json_decref(j);
    fl_buf_free(&out);
}


/* ---- nested columns ---- */

static int collect_id(const fl_ice_field_t *f, int depth, void *ctx) {
    int32_t *ids = ctx; /* ids[0]: count, then (id, depth) pairs */
    ids[1 + 2 * ids[0]] = f->id;
    ids[2 + 2 * ids[0]] = depth;
    ids[0]++;
    return 0;
}

static void test_nested_round_trip(void **state) {
    (void)state;
    fl_ice_table_meta_t m = nested_meta();
    fl_buf_t a, b;
    encode_ok(&m, &a);
    fl_ice_meta_read_t r;
    fl_ice_meta_read_init(&r);
    fl_error_t err = {0};
    if (fl_ice_meta_decode(a.data, a.len, &r, &err)) fail_msg("decode: %s", err.msg);
    assert_meta_equal(&m, &r.meta); /* every tree read back whole */
    encode_ok(&r.meta, &b);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);

    /* Appendix C's keys, as readers look for them */
    json_t *j = json_loadb((const char *)a.data, a.len, 0, NULL);
    json_t *fields = json_object_get(json_array_get(json_object_get(j, "schemas"), 0), "fields");
    json_t *bt = json_object_get(json_array_get(fields, 1), "type");
    assert_string_equal(json_string_value(json_object_get(bt, "type")), "list");
    assert_int_equal(json_integer_value(json_object_get(bt, "element-id")), 7);
    assert_true(json_is_false(json_object_get(bt, "element-required")));
    json_t *et = json_object_get(bt, "element");
    assert_string_equal(json_string_value(json_object_get(et, "type")), "struct");
    json_t *y = json_array_get(json_object_get(et, "fields"), 1);
    assert_int_equal(json_integer_value(json_object_get(y, "id")), 9);
    assert_true(json_is_true(json_object_get(y, "required")));
    assert_string_equal(json_string_value(json_object_get(y, "doc")), "why");
    json_t *ct = json_object_get(json_array_get(fields, 2), "type");
    assert_string_equal(json_string_value(json_object_get(ct, "type")), "map");
    assert_int_equal(json_integer_value(json_object_get(ct, "key-id")), 10);
    assert_string_equal(json_string_value(json_object_get(ct, "key")), "string");
    assert_int_equal(json_integer_value(json_object_get(ct, "value-id")), 11);
    assert_string_equal(json_string_value(json_object_get(ct, "value")), "int");
    assert_true(json_is_true(json_object_get(ct, "value-required")));
    assert_null(json_object_get(ct, "key-required")); /* keys are always required */
    json_decref(j);

    /* lookups and the walk over what was read */
    const fl_ice_schema_t *sc = &r.meta.schemas[0];
    assert_null(fl_ice_schema_field(sc, 9)); /* top level only */
    assert_string_equal(fl_ice_schema_find(sc, 9)->name, "y");
    assert_string_equal(fl_ice_schema_find(sc, 10)->name, "key");
    assert_string_equal(fl_ice_schema_find(sc, 6)->name, "__timestamp");
    assert_null(fl_ice_schema_find(sc, 12));
    assert_int_equal(fl_ice_field_max_id(&sc->fields[1]), 9);
    assert_int_equal(fl_ice_field_max_id(&sc->fields[2]), 11);
    assert_int_equal(fl_ice_field_max_id(&sc->fields[0]), 1);
    int32_t ids[1 + 2 * 8] = {0};
    fl_ice_field_walk(&sc->fields[1], collect_id, ids);
    int32_t want_b[] = {4, 2, 0, 7, 1, 8, 2, 9, 2};
    assert_memory_equal(ids, want_b, sizeof(want_b));
    memset(ids, 0, sizeof(ids));
    fl_ice_field_walk(&sc->fields[2], collect_id, ids);
    int32_t want_c[] = {3, 3, 0, 10, 1, 11, 1};
    assert_memory_equal(ids, want_c, sizeof(want_c));
    assert_true(fl_ice_field_same(&sc->fields[1], &NFIELDS[1]));
    assert_false(fl_ice_field_same(&sc->fields[1], &NFIELDS[2]));
    fl_ice_field_t y2 = NX_FIELDS[1];
    y2.required = false;
    fl_ice_field_t xs[2] = {NX_FIELDS[0], y2};
    fl_ice_nested_t row = NX_ROW;
    row.fields = xs;
    fl_ice_field_t el = NB_ELEMENT;
    el.nested = &row;
    fl_ice_nested_t list = NB_LIST;
    list.element = &el;
    fl_ice_field_t b2 = NFIELDS[1];
    b2.nested = &list;
    assert_false(fl_ice_field_same(&b2, &NFIELDS[1])); /* y's requiredness, two levels down */
    y2.required = true;
    y2.doc = NULL;
    xs[1] = y2;
    assert_true(fl_ice_field_same(&b2, &NFIELDS[1])); /* docs aside */

    /* a manifest's "schema" header */
    fl_buf_t sj;
    fl_buf_init(&sj);
    assert_int_equal(fl_ice_schema_encode(&NSCHEMA, &sj, &err), 0);
    assert_non_null(strstr((const char *)sj.data, "\"element-id\":7"));
    fl_buf_free(&sj);
    fl_buf_free(&a);
    fl_buf_free(&b);
    fl_ice_meta_read_reset(&r);
}

/* A new table for `a INT, b ARRAY<ROW<x INT, y STRING>>, c MAP<STRING,
 * INT>` in Java's style (SchemaParser's key order, a null doc, keys we do
 * not keep on nested fields), as the reference's Hadoop catalog writes it. */
static const char JAVA_NESTED[] =
    "{\"format-version\":2,\"table-uuid\":\"0b6ad1a1-6c1e-4a48-9a51-2f4d1f0e7c11\","
    "\"location\":\"file:/wh/db/t\",\"last-sequence-number\":0,\"last-updated-ms\":7,"
    "\"last-column-id\":11,\"current-schema-id\":0,\"schemas\":[{\"type\":\"struct\","
    "\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":false,\"type\":\"int\"},"
    "{\"id\":2,\"name\":\"b\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":7,"
    "\"element\":{\"type\":\"struct\",\"fields\":[{\"id\":8,\"name\":\"x\",\"required\":false,"
    "\"type\":\"int\",\"doc\":null,\"initial-default\":null},{\"id\":9,\"name\":\"y\","
    "\"required\":false,\"type\":\"string\",\"doc\":\"a y\"}]},\"element-required\":false}},"
    "{\"id\":3,\"name\":\"c\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":10,"
    "\"key\":\"string\",\"value-id\":11,\"value\":\"int\",\"value-required\":false}},"
    "{\"id\":4,\"name\":\"__bucket\",\"required\":true,\"type\":\"int\"},{\"id\":5,\"name\":"
    "\"__offset\",\"required\":true,\"type\":\"long\"},{\"id\":6,\"name\":\"__timestamp\","
    "\"required\":true,\"type\":\"timestamptz\"}]}],\"default-spec-id\":0,\"partition-specs\":"
    "[{\"spec-id\":0,\"fields\":[{\"name\":\"__bucket\",\"transform\":\"identity\","
    "\"source-id\":4,\"field-id\":1000}]}],\"last-partition-id\":1000,"
    "\"default-sort-order-id\":1,\"sort-orders\":[{\"order-id\":1,\"fields\":[{\"transform\":"
    "\"identity\",\"source-id\":5,\"direction\":\"asc\",\"null-order\":\"nulls-first\"}]}],"
    "\"properties\":{\"write.parquet.compression-codec\":\"zstd\"},\"current-snapshot-id\":-1,"
    "\"refs\":{},\"snapshots\":[],\"statistics\":[],\"partition-statistics\":[],"
    "\"snapshot-log\":[],\"metadata-log\":[]}";

static void test_nested_foreign(void **state) {
    (void)state;
    fl_ice_meta_read_t r;
    fl_ice_meta_read_init(&r);
    fl_error_t err = {0};
    if (fl_ice_meta_decode((const uint8_t *)JAVA_NESTED, strlen(JAVA_NESTED), &r, &err))
        fail_msg("java nested: %s", err.msg);
    const fl_ice_schema_t *sc = &r.meta.schemas[0];
    assert_int_equal(r.meta.last_column_id, 11);
    assert_int_equal(sc->n_fields, 6);
    const fl_ice_field_t *b = &sc->fields[1], *c = &sc->fields[2];
    assert_null(b->type);
    assert_int_equal(b->nested->kind, FL_ICE_LIST);
    const fl_ice_field_t *e = b->nested->element;
    assert_int_equal(e->id, 7);
    assert_string_equal(e->name, "element");
    assert_false(e->required);
    assert_int_equal(e->nested->kind, FL_ICE_STRUCT);
    assert_int_equal(e->nested->n_fields, 2);
    assert_int_equal(e->nested->fields[0].id, 8);
    assert_string_equal(e->nested->fields[0].name, "x");
    assert_string_equal(e->nested->fields[0].type, "int");
    assert_null(e->nested->fields[0].doc);
    assert_int_equal(e->nested->fields[1].id, 9);
    assert_string_equal(e->nested->fields[1].doc, "a y");
    assert_int_equal(c->nested->kind, FL_ICE_MAP);
    assert_int_equal(c->nested->key->id, 10);
    assert_true(c->nested->key->required);
    assert_string_equal(c->nested->key->type, "string");
    assert_int_equal(c->nested->value->id, 11);
    assert_false(c->nested->value->required);
    assert_null(c->nested->element);
    /* and what we write of it reads back the same */
    fl_buf_t a;
    encode_ok(&r.meta, &a);
    fl_ice_meta_read_t again;
    fl_ice_meta_read_init(&again);
    if (fl_ice_meta_decode(a.data, a.len, &again, &err)) fail_msg("again: %s", err.msg);
    assert_meta_equal(&r.meta, &again.meta);
    fl_buf_free(&a);
    fl_ice_meta_read_reset(&again);
    fl_ice_meta_read_reset(&r);
}

/* A column of `levels` lists nested in each other around an int (ids
 * from 1: the column, then each element), in a table whose last-column-id
 * covers them. */
static char *deep_lists_json(int levels) {
    fl_ice_table_meta_t m = nested_meta();
    fl_buf_t a;
    encode_ok(&m, &a);
    json_t *j = json_loadb((const char *)a.data, a.len, 0, NULL);
    fl_buf_free(&a);
    json_t *t = json_string("int");
    for (int i = levels; i >= 1; i--)
        t = json_pack("{s:s, s:i, s:o, s:b}", "type", "list", "element-id", 100 + i, "element", t,
                      "element-required", 0);
    json_t *col = json_pack("{s:i, s:s, s:b, s:o}", "id", 100, "name", "deep", "required", 0,
                            "type", t);
    json_array_append_new(json_object_get(json_array_get(json_object_get(j, "schemas"), 0),
                                          "fields"),
                          col);
    json_object_set_new(j, "last-column-id", json_integer(100 + levels));
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return s;
}

static void test_nested_limits(void **state) {
    (void)state;
    fl_ice_meta_read_t r;
    fl_ice_meta_read_init(&r);
    fl_error_t err = {0};
    char *ok = deep_lists_json(FL_ICE_TYPE_DEPTH_MAX), *deep = deep_lists_json(FL_ICE_TYPE_DEPTH_MAX + 1);
    if (fl_ice_meta_decode((const uint8_t *)ok, strlen(ok), &r, &err))
        fail_msg("%d levels: %s", FL_ICE_TYPE_DEPTH_MAX, err.msg);
    const fl_ice_field_t *f = &r.meta.schemas[0].fields[6];
    int levels = 0;
    for (; f->nested; f = f->nested->element) levels++;
    assert_int_equal(levels, FL_ICE_TYPE_DEPTH_MAX);
    assert_string_equal(f->type, "int");
    assert_int_equal(f->id, 100 + FL_ICE_TYPE_DEPTH_MAX);
    fl_buf_t out;
    encode_ok(&r.meta, &out); /* the encoder takes what the decoder gave */
    fl_buf_free(&out);
    assert_error(fl_ice_meta_decode((const uint8_t *)deep, strlen(deep), &r, &err), err,
                 FLUSS_ERR__CORRUPT, "nests deeper than 32");
    free(ok);
    free(deep);

    /* the fields of a schema at every depth together: bounded */
    fl_ice_table_meta_t m = nested_meta();
    fl_buf_t a;
    encode_ok(&m, &a);
    json_t *j = json_loadb((const char *)a.data, a.len, 0, NULL);
    fl_buf_free(&a);
    json_t *outer = json_array();
    int32_t id = 100;
    for (int i = 0; i < 4096; i++) {
        json_t *inner = json_array();
        for (int k = 0; k < 15; k++) {
            char name[8];
            snprintf(name, sizeof(name), "f%d", k);
            json_array_append_new(inner, json_pack("{s:i,s:s,s:b,s:s}", "id", id++, "name", name,
                                                   "required", 0, "type", "int"));
        }
        char name[8];
        snprintf(name, sizeof(name), "s%d", i);
        json_array_append_new(outer, json_pack("{s:i,s:s,s:b,s:{s:s,s:o}}", "id", id++, "name",
                                               name, "required", 0, "type", "type", "struct",
                                               "fields", inner));
    }
    json_array_append_new(json_object_get(json_array_get(json_object_get(j, "schemas"), 0), "fields"),
                          json_pack("{s:i,s:s,s:b,s:{s:s,s:o}}", "id", id, "name", "wide",
                                    "required", 0, "type", "type", "struct", "fields", outer));
    json_object_set_new(j, "last-column-id", json_integer(id));
    char *wide = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    assert_error(fl_ice_meta_decode((const uint8_t *)wide, strlen(wide), &r, &err), err,
                 FLUSS_ERR__CORRUPT, "more than 65536 fields at all depths in the schema");
    free(wide);
    fl_ice_meta_read_reset(&r);
}

/* ADD COLUMN d MAP<STRING, ARRAY<ROW<p INT>>> to the nested table whose
 * ids 12 and 13 were used by columns since dropped: d = 14, its key 15,
 * value 16, the value's element 17, p 18. */
static const fl_ice_field_t ND_P[] = {{18, "p", false, "int", NULL, NULL}};
static const fl_ice_nested_t ND_ROW = {FL_ICE_STRUCT, ND_P, 1, NULL, NULL, NULL};
static const fl_ice_field_t ND_ELEMENT = {17, "element", false, NULL, NULL, &ND_ROW};
static const fl_ice_nested_t ND_LIST = {FL_ICE_LIST, NULL, 0, &ND_ELEMENT, NULL, NULL};
static const fl_ice_field_t ND_KEY = {15, "key", true, "string", NULL, NULL};
static const fl_ice_field_t ND_VALUE = {16, "value", false, NULL, NULL, &ND_LIST};
static const fl_ice_nested_t ND_MAP = {FL_ICE_MAP, NULL, 0, NULL, &ND_KEY, &ND_VALUE};

static void test_nested_with_schema(void **state) {
    (void)state;
    fl_ice_table_meta_t base = nested_meta();
    base.last_column_id = 13;
    fl_ice_field_t f[7];
    memcpy(f, NFIELDS, 3 * sizeof(*f));
    f[3] = (fl_ice_field_t){14, "d", false, NULL, NULL, &ND_MAP};
    memcpy(f + 4, NFIELDS + 3, 3 * sizeof(*f));
    fl_ice_schema_t s = {FL_ICE_NO_SCHEMA, f, 7, IDENT, 1};
    fl_ice_meta_read_t out;
    fl_ice_meta_read_init(&out);
    fl_error_t err = {0};
    if (fl_ice_meta_with_schema(&base, NULL, &s, &out, &err)) fail_msg("add d: %s", err.msg);
    assert_int_equal(out.meta.last_column_id, 18); /* the nested ids counted */
    assert_int_equal(out.meta.current_schema_id, 1);
    assert_field_equal(&out.meta.schemas[1].fields[3], &f[3]);
    assert_field_equal(&out.meta.schemas[0].fields[1], &NFIELDS[1]); /* a deep copy of the base */
    fl_buf_t a;
    encode_ok(&out.meta, &a);
    fl_ice_meta_read_t back;
    fl_ice_meta_read_init(&back);
    if (fl_ice_meta_decode(a.data, a.len, &back, &err)) fail_msg("decode: %s", err.msg);
    assert_meta_equal(&out.meta, &back.meta);
    fl_buf_free(&a);
    fl_ice_meta_read_reset(&back);

    /* an id inside the new column used before */
    fl_ice_field_t p = ND_P[0];
    p.id = 12;
    fl_ice_nested_t row = ND_ROW;
    row.fields = &p;
    fl_ice_field_t el = ND_ELEMENT;
    el.nested = &row;
    fl_ice_nested_t list = ND_LIST;
    list.element = &el;
    fl_ice_field_t val = ND_VALUE;
    val.nested = &list;
    fl_ice_nested_t map = ND_MAP;
    map.value = &val;
    f[3].nested = &map;
    assert_error(fl_ice_meta_with_schema(&base, NULL, &s, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "field p (id 12): id 12 was used before");
    p.id = 18;
    p.required = true; /* inside a new column: taken, as Iceberg's addColumn */
    if (fl_ice_meta_with_schema(&base, NULL, &s, &out, &err)) fail_msg("required p: %s", err.msg);
    f[3].nested = &ND_MAP;

    /* the kept column b: its element id, kind, and the struct inside */
    fl_ice_field_t xs[3] = {NX_FIELDS[0], NX_FIELDS[1], {19, "z", false, "long", NULL, NULL}};
    fl_ice_nested_t brow = NX_ROW;
    brow.fields = xs;
    fl_ice_field_t bel = NB_ELEMENT;
    bel.nested = &brow;
    fl_ice_nested_t blist = NB_LIST;
    blist.element = &bel;
    f[1].nested = &blist;
    brow.n_fields = 3; /* a new optional field z in b's struct, x widened */
    xs[0].type = "long";
    if (fl_ice_meta_with_schema(&base, NULL, &s, &out, &err)) fail_msg("evolve b: %s", err.msg);
    assert_int_equal(out.meta.last_column_id, 19);
    assert_int_equal(fl_ice_schema_find(&out.meta.schemas[1], 19)->id, 19);
    xs[2].required = true;
    assert_error(fl_ice_meta_with_schema(&base, NULL, &s, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "new field z (id 19) is required");
    xs[2].required = false;
    xs[0].type = "string";
    assert_error(fl_ice_meta_with_schema(&base, NULL, &s, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "field x (id 8): int cannot become string");
    xs[0].type = "int";
    bel.required = true;
    assert_error(fl_ice_meta_with_schema(&base, NULL, &s, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "field element (id 7): optional cannot become required");
    bel.required = false;
    bel.id = 20;
    assert_error(fl_ice_meta_with_schema(&base, NULL, &s, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "column b: the element id 7 cannot become 20");
    bel.id = 7;
    f[1].nested = &NC_MAP; /* b a map now, with c's ids: refused before the ids clash */
    f[2] = (fl_ice_field_t){3, "c", false, "string", NULL, NULL};
    assert_error(fl_ice_meta_with_schema(&base, NULL, &s, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "column b: list cannot become map");
    fl_ice_meta_read_reset(&out);
}

static void test_nested_encode_refusals(void **state) {
    (void)state;
    fl_buf_t out;
    fl_buf_init(&out);
    fl_error_t err = {0};
    fl_ice_table_meta_t m = nested_meta();
    fl_ice_field_t f[6];
    memcpy(f, NFIELDS, sizeof(f));
    fl_ice_schema_t sc = {0, f, 6, IDENT, 1};
    m.schemas = &sc;

    fl_ice_field_t key = NC_KEY;
    fl_ice_nested_t map = NC_MAP;
    map.key = &key;
    f[2].nested = &map;
    key.required = false;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "schemas[0].fields[2].type.key is optional (a map's key is required)");
    key.required = true;
    key.name = "k";
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "schemas[0].fields[2].type.key is named \"k\"");
    key.name = "key";
    key.type = "decimal(1,2)";
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "schemas[0].fields[2].type.key.type \"decimal(1,2)\" not a v2 primitive type");
    key.type = "string";
    map.element = &NB_ELEMENT;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "schemas[0].fields[2].type: a map has a key and a value and nothing else");
    map.element = NULL;
    map.value = NULL;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "a map has a key and a value");
    map.value = &NC_VALUE;
    map.kind = (fl_ice_nested_kind_t)9;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "schemas[0].fields[2].type kind 9 not struct, list or map");
    map.kind = FL_ICE_MAP;
    f[2].type = "int";
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "schemas[0].fields[2] has a type \"int\" and a nested type");
    f[2].type = NULL;

    /* ids: unique at every depth, none above last-column-id */
    fl_ice_field_t xs[2] = {NX_FIELDS[0], NX_FIELDS[1]};
    fl_ice_nested_t row = NX_ROW;
    row.fields = xs;
    fl_ice_field_t el = NB_ELEMENT;
    el.nested = &row;
    fl_ice_nested_t list = NB_LIST;
    list.element = &el;
    f[1].nested = &list;
    xs[1].id = 1;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "schemas[0].fields[1].type.element.type.fields[1] repeats the id 1");
    xs[1].id = 12;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "schemas[0].fields[1].type.element.type.fields[1].id 12 above last-column-id 11");
    xs[1].id = 9;
    xs[1].name = "x";
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "schemas[0].fields[1].type.element.type.fields[1] repeats the name \"x\"");
    xs[1].name = "y";
    el.doc = "no";
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "schemas[0].fields[1].type.element is named \"element\" or has a doc");
    el.doc = NULL;
    list.key = &NC_KEY;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "a list has an element and nothing else");
    list.key = NULL;
    row.element = &NB_ELEMENT;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "schemas[0].fields[1].type.element.type: a struct has fields and nothing else");
    row.element = NULL;
    assert_int_equal(fl_ice_meta_encode(&m, &out, &err), 0);
    out.len = 0;

    /* keys of a row, partition and sort sources: top-level primitives */
    int32_t ident = 2;
    sc.identifier_ids = &ident;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "schemas[0].identifier-field-ids: b is nested");
    ident = 8;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "schemas[0].identifier-field-ids: 8 names no column");
    sc.identifier_ids = IDENT;
    fl_ice_sort_field_t sf = {3, false, false};
    fl_ice_sort_order_t so = {1, &sf, 1};
    m.sort_orders = &so;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "sort-orders[0].fields[0].source-id 3 names no primitive top-level column");
    m.sort_orders = &NSORT;
    fl_ice_partition_field_t pf = {"c", 3, 1000, FL_ICE_IDENTITY, 0, FL_ICE_STRING};
    fl_ice_partition_spec_t sp = {0, &pf, 1};
    m.specs = &sp;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "partition-specs[0].fields[0].source-id 3 names no primitive top-level column");
    m.specs = &NSPEC;

    /* depth: 33 lists around an int */
    enum { LEVELS = FL_ICE_TYPE_DEPTH_MAX + 1 };
    fl_ice_field_t chain[LEVELS + 1];
    fl_ice_nested_t lists[LEVELS];
    for (int i = 0; i <= LEVELS; i++)
        chain[i] = (fl_ice_field_t){100 + i, i ? "element" : "deep", false, i == LEVELS ? "int" : NULL,
                                    NULL, i == LEVELS ? NULL : &lists[i]};
    for (int i = 0; i < LEVELS; i++)
        lists[i] = (fl_ice_nested_t){FL_ICE_LIST, NULL, 0, &chain[i + 1], NULL, NULL};
    fl_ice_field_t g[7];
    memcpy(g, NFIELDS, sizeof(NFIELDS));
    g[6] = chain[0];
    fl_ice_schema_t deep = {0, g, 7, IDENT, 1};
    m.schemas = &deep;
    m.last_column_id = 100 + LEVELS;
    assert_error(fl_ice_meta_encode(&m, &out, &err), err, FLUSS_ERR__INVALID_ARG,
                 "nests deeper than 32");
    lists[LEVELS - 1].element = &(fl_ice_field_t){100 + LEVELS, "element", false, "int", NULL, NULL};
    chain[LEVELS - 1].nested = NULL; /* 32 levels: taken */
    chain[LEVELS - 1].type = "int";
    assert_int_equal(fl_ice_meta_encode(&m, &out, &err), 0);
    assert_int_equal(fl_ice_field_max_id(&g[6]), 100 + LEVELS - 1);
    fl_buf_free(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_new_table_round_trip),
        cmocka_unit_test(test_foreign_metadata),
        cmocka_unit_test(test_with_snapshot),
        cmocka_unit_test(test_with_snapshot_refusals),
        cmocka_unit_test(test_with_schema),
        cmocka_unit_test(test_expire_policy),
        cmocka_unit_test(test_expired_selection),
        cmocka_unit_test(test_without_snapshots),
        cmocka_unit_test_setup_teardown(test_create_load_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_versions_deleted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hint_recovery, setup, teardown),
        cmocka_unit_test_setup_teardown(test_racing_commits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_faults, setup, teardown),
        cmocka_unit_test(test_decode_refusals),
        cmocka_unit_test(test_truncations_and_flips),
        cmocka_unit_test(test_encode_refusals),
        cmocka_unit_test(test_schema_json),
        cmocka_unit_test(test_nested_round_trip),
        cmocka_unit_test(test_nested_foreign),
        cmocka_unit_test(test_nested_limits),
        cmocka_unit_test(test_nested_with_schema),
        cmocka_unit_test(test_nested_encode_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
