/*
 * lake_iceberg_manifest_int.h — shared by the writer and the readers of
 * Iceberg manifests (lake_iceberg_manifest.h): the field ids of the
 * specification's manifest_entry, data_file and manifest_file structs,
 * the positions of data_file's fields in the schema we write, and the
 * schema builders (the tests and the fuzz target check them too).
 */
#ifndef FL_LAKE_ICEBERG_MANIFEST_INT_H
#define FL_LAKE_ICEBERG_MANIFEST_INT_H

#include "lake_avro_schema.h"
#include "lake_iceberg_manifest.h"

enum {
    /* manifest_entry */
    ICE_ME_STATUS = 0,
    ICE_ME_SNAPSHOT = 1,
    ICE_ME_DATA_FILE = 2,
    ICE_ME_SEQ = 3,
    ICE_ME_FILE_SEQ = 4,
    /* data_file */
    ICE_DF_PATH = 100,
    ICE_DF_FORMAT = 101,
    ICE_DF_PARTITION = 102,
    ICE_DF_RECORDS = 103,
    ICE_DF_SIZE = 104,
    ICE_DF_COLUMN_SIZES = 108,
    ICE_DF_VALUE_COUNTS = 109,
    ICE_DF_NULL_COUNTS = 110,
    ICE_DF_LOWER = 125,
    ICE_DF_UPPER = 128,
    ICE_DF_SPLITS = 132,
    ICE_DF_CONTENT = 134,
    ICE_DF_EQUALITY_IDS = 135,
    ICE_DF_NAN_COUNTS = 137,
    ICE_DF_SORT_ORDER = 140,
    /* manifest_file */
    ICE_MF_PATH = 500,
    ICE_MF_LENGTH = 501,
    ICE_MF_SPEC_ID = 502,
    ICE_MF_SNAPSHOT = 503,
    ICE_MF_ADDED_FILES = 504,
    ICE_MF_EXISTING_FILES = 505,
    ICE_MF_DELETED_FILES = 506,
    ICE_MF_PARTITIONS = 507,
    ICE_MF_ADDED_ROWS = 512,
    ICE_MF_EXISTING_ROWS = 513,
    ICE_MF_DELETED_ROWS = 514,
    ICE_MF_SEQ = 515,
    ICE_MF_MIN_SEQ = 516,
    ICE_MF_CONTENT = 517,
    ICE_MF_KEY_METADATA = 519,
    /* field_summary (element 508) */
    ICE_FS_CONTAINS_NULL = 509,
    ICE_FS_LOWER = 510,
    ICE_FS_UPPER = 511,
    ICE_FS_CONTAINS_NAN = 518,
};

/* data_file's fields in the order we write them (the six stat maps in the
 * order of the writer's stat kinds: sizes, values, nulls, NaNs, lower,
 * upper). */
enum {
    ICE_DF_I_CONTENT,
    ICE_DF_I_PATH,
    ICE_DF_I_FORMAT,
    ICE_DF_I_PARTITION,
    ICE_DF_I_RECORDS,
    ICE_DF_I_SIZE,
    ICE_DF_I_COLUMN_SIZES,
    ICE_DF_I_VALUE_COUNTS,
    ICE_DF_I_NULL_COUNTS,
    ICE_DF_I_NAN_COUNTS,
    ICE_DF_I_LOWER,
    ICE_DF_I_UPPER,
    ICE_DF_I_SPLITS,
    ICE_DF_I_EQUALITY_IDS,
    ICE_DF_I_SORT_ORDER,
    ICE_DF_N
};

/* The manifest_entry schema for a spec (its partition record r102), and
 * the manifest_file schema. The caller destroys them. */
fl_avro_schema_t *fl_ice_manifest_entry_schema(const fl_ice_partition_spec_t *spec);
fl_avro_schema_t *fl_ice_manifest_file_schema(void);

#endif
