/*
 * lake_iceberg_manifest_schema.c — the Avro schemas of Iceberg v2
 * manifest_entry (its partition record r102 built from a partition spec)
 * and manifest_file, with the specification's field ids, names and
 * optional fields (lake_iceberg_manifest.h has the layout). Thread rule:
 * none; each call builds a new tree.
 */
#include <inttypes.h>
#include <stdio.h>

#include "lake_iceberg_manifest_int.h"

static fl_avro_schema_t *prim(fl_avro_type_t t) { return fl_avro_schema_new(t); }
static fl_avro_schema_t *opt(fl_avro_type_t t) { return fl_avro_schema_optional(prim(t)); }

/* Iceberg's map<int, V>: an optional array of records k<K>_v<V>{key, value}. */
static fl_avro_schema_t *int_map(int32_t kid, int32_t vid, fl_avro_type_t value) {
    char name[32];
    snprintf(name, sizeof(name), "k%" PRId32 "_v%" PRId32, kid, vid);
    fl_avro_schema_t *kv = fl_avro_schema_record_new(name);
    fl_avro_schema_record_add(kv, "key", kid, prim(FL_AVRO_INT));
    fl_avro_schema_record_add(kv, "value", vid, prim(value));
    return fl_avro_schema_optional(
        fl_avro_schema_set_logical(fl_avro_schema_array_new(kv, FL_AVRO_NO_ID), "map"));
}

static fl_avro_schema_t *opt_list(fl_avro_type_t t, int32_t element_id) {
    return fl_avro_schema_optional(fl_avro_schema_array_new(prim(t), element_id));
}

static fl_avro_schema_t *partition_type(fl_ice_type_t t) {
    switch (t) {
    case FL_ICE_LONG: return prim(FL_AVRO_LONG);
    case FL_ICE_STRING: return prim(FL_AVRO_STRING);
    case FL_ICE_DATE: return fl_avro_schema_set_logical(prim(FL_AVRO_INT), "date");
    default: return prim(FL_AVRO_INT);
    }
}

static fl_avro_schema_t *partition_schema(const fl_ice_partition_spec_t *spec) {
    fl_avro_schema_t *r = fl_avro_schema_record_new("r102");
    for (size_t i = 0; i < spec->n_fields; i++) {
        const fl_ice_partition_field_t *f = &spec->fields[i];
        fl_avro_schema_record_add(r, f->name, f->field_id,
                                  fl_avro_schema_optional(partition_type(f->type)));
    }
    return r;
}

fl_avro_schema_t *fl_ice_manifest_entry_schema(const fl_ice_partition_spec_t *spec) {
    fl_avro_schema_t *df = fl_avro_schema_record_new("r2");
    fl_avro_schema_record_add(df, "content", ICE_DF_CONTENT, prim(FL_AVRO_INT));
    fl_avro_schema_record_add(df, "file_path", ICE_DF_PATH, prim(FL_AVRO_STRING));
    fl_avro_schema_record_add(df, "file_format", ICE_DF_FORMAT, prim(FL_AVRO_STRING));
    fl_avro_schema_record_add(df, "partition", ICE_DF_PARTITION, partition_schema(spec));
    fl_avro_schema_record_add(df, "record_count", ICE_DF_RECORDS, prim(FL_AVRO_LONG));
    fl_avro_schema_record_add(df, "file_size_in_bytes", ICE_DF_SIZE, prim(FL_AVRO_LONG));
    fl_avro_schema_record_add(df, "column_sizes", ICE_DF_COLUMN_SIZES, int_map(117, 118, FL_AVRO_LONG));
    fl_avro_schema_record_add(df, "value_counts", ICE_DF_VALUE_COUNTS, int_map(119, 120, FL_AVRO_LONG));
    fl_avro_schema_record_add(df, "null_value_counts", ICE_DF_NULL_COUNTS,
                              int_map(121, 122, FL_AVRO_LONG));
    fl_avro_schema_record_add(df, "nan_value_counts", ICE_DF_NAN_COUNTS,
                              int_map(138, 139, FL_AVRO_LONG));
    fl_avro_schema_record_add(df, "lower_bounds", ICE_DF_LOWER, int_map(126, 127, FL_AVRO_BYTES));
    fl_avro_schema_record_add(df, "upper_bounds", ICE_DF_UPPER, int_map(129, 130, FL_AVRO_BYTES));
    fl_avro_schema_record_add(df, "split_offsets", ICE_DF_SPLITS, opt_list(FL_AVRO_LONG, 133));
    fl_avro_schema_record_add(df, "equality_ids", ICE_DF_EQUALITY_IDS, opt_list(FL_AVRO_INT, 136));
    fl_avro_schema_record_add(df, "sort_order_id", ICE_DF_SORT_ORDER, opt(FL_AVRO_INT));
    fl_avro_schema_t *e = fl_avro_schema_record_new("manifest_entry");
    fl_avro_schema_record_add(e, "status", ICE_ME_STATUS, prim(FL_AVRO_INT));
    fl_avro_schema_record_add(e, "snapshot_id", ICE_ME_SNAPSHOT, opt(FL_AVRO_LONG));
    fl_avro_schema_record_add(e, "sequence_number", ICE_ME_SEQ, opt(FL_AVRO_LONG));
    fl_avro_schema_record_add(e, "file_sequence_number", ICE_ME_FILE_SEQ, opt(FL_AVRO_LONG));
    fl_avro_schema_record_add(e, "data_file", ICE_ME_DATA_FILE, df);
    return e;
}

fl_avro_schema_t *fl_ice_manifest_file_schema(void) {
    fl_avro_schema_t *fs = fl_avro_schema_record_new("r508");
    fl_avro_schema_record_add(fs, "contains_null", ICE_FS_CONTAINS_NULL, prim(FL_AVRO_BOOLEAN));
    fl_avro_schema_record_add(fs, "contains_nan", ICE_FS_CONTAINS_NAN, opt(FL_AVRO_BOOLEAN));
    fl_avro_schema_record_add(fs, "lower_bound", ICE_FS_LOWER, opt(FL_AVRO_BYTES));
    fl_avro_schema_record_add(fs, "upper_bound", ICE_FS_UPPER, opt(FL_AVRO_BYTES));
    fl_avro_schema_t *m = fl_avro_schema_record_new("manifest_file");
    fl_avro_schema_record_add(m, "manifest_path", ICE_MF_PATH, prim(FL_AVRO_STRING));
    fl_avro_schema_record_add(m, "manifest_length", ICE_MF_LENGTH, prim(FL_AVRO_LONG));
    fl_avro_schema_record_add(m, "partition_spec_id", ICE_MF_SPEC_ID, prim(FL_AVRO_INT));
    fl_avro_schema_record_add(m, "content", ICE_MF_CONTENT, prim(FL_AVRO_INT));
    fl_avro_schema_record_add(m, "sequence_number", ICE_MF_SEQ, prim(FL_AVRO_LONG));
    fl_avro_schema_record_add(m, "min_sequence_number", ICE_MF_MIN_SEQ, prim(FL_AVRO_LONG));
    fl_avro_schema_record_add(m, "added_snapshot_id", ICE_MF_SNAPSHOT, prim(FL_AVRO_LONG));
    fl_avro_schema_record_add(m, "added_files_count", ICE_MF_ADDED_FILES, prim(FL_AVRO_INT));
    fl_avro_schema_record_add(m, "existing_files_count", ICE_MF_EXISTING_FILES, prim(FL_AVRO_INT));
    fl_avro_schema_record_add(m, "deleted_files_count", ICE_MF_DELETED_FILES, prim(FL_AVRO_INT));
    fl_avro_schema_record_add(m, "added_rows_count", ICE_MF_ADDED_ROWS, prim(FL_AVRO_LONG));
    fl_avro_schema_record_add(m, "existing_rows_count", ICE_MF_EXISTING_ROWS, prim(FL_AVRO_LONG));
    fl_avro_schema_record_add(m, "deleted_rows_count", ICE_MF_DELETED_ROWS, prim(FL_AVRO_LONG));
    fl_avro_schema_record_add(m, "partitions", ICE_MF_PARTITIONS,
                              fl_avro_schema_optional(fl_avro_schema_array_new(fs, 508)));
    fl_avro_schema_record_add(m, "key_metadata", ICE_MF_KEY_METADATA, opt(FL_AVRO_BYTES));
    return m;
}

