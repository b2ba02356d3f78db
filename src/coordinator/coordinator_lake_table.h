/*
 * coordinator_lake_table.h — a Fluss table's Iceberg table, as the
 * reference's IcebergLakeCatalog creates it (0.9.1), written by fluss-c
 * itself in the Hadoop layout (lake_iceberg_table.h) under
 * <datalake.iceberg.warehouse>/<db>/<table>:
 *
 * - schema 0: the columns in order with ids from 1, their nullability and
 *   comments (TINYINT/SMALLINT/INT → int, BIGINT → long, CHAR/STRING →
 *   string, BINARY/BYTES → binary, DECIMAL → decimal(P,S), DATE → date,
 *   TIME → time, TIMESTAMP → timestamp, TIMESTAMP_LTZ → timestamptz), then
 *   the required system columns __bucket int, __offset long,
 *   __timestamp timestamptz; the primary key as identifier-field-ids.
 * - spec 0: identity(<partition key>) per partition key (STRING only),
 *   then bucket[N](<bucket key>) named <key>_bucket, or identity(__bucket)
 *   for a log table without a bucket key; field ids from 1000.
 * - sort order 1: __offset ascending, nulls first.
 * - properties: write.parquet.compression-codec=zstd (what Iceberg sets on
 *   a new table), write.{delete,update,merge}.mode=merge-on-read for a
 *   primary-key table, every table property and custom property k as
 *   fluss.k — or, for iceberg.k, as k — and ours: fluss.table-id, which
 *   ties the lake table to the Fluss table it tiers.
 *
 * Nested columns (the mapping of the reference's
 * FlussDataTypeToIcebergDataType): ARRAY → list (element-required when
 * the element type is NOT NULL), MAP → map (the key required, as Iceberg
 * has it; value-required when the value type is NOT NULL), ROW → struct
 * (a field required when NOT NULL, its description the doc). Their ids
 * are those the reference's Hadoop catalog gives: its create renumbers
 * the schema with Iceberg's TypeUtil.assignFreshIds — the root struct's
 * fields first (the columns, then __bucket, __offset, __timestamp: 1..n),
 * then the inside of each column in order, where a struct numbers all its
 * fields and then descends into each, a list its element then descends, a
 * map its key, its value, then descends into the key and the value. So
 * `a INT, b ARRAY<ROW<x INT, y STRING>>, c MAP<STRING, INT>` is a=1, b=2,
 * c=3, __bucket=4, __offset=5, __timestamp=6, b.element=7, b.element.x=8,
 * b.element.y=9, c.key=10, c.value=11, last-column-id 11. An added column
 * takes last-column-id + 1 and its inside the ids after it in the same
 * order (SchemaUpdate#addColumn), placed before __bucket.
 *
 * The tiering writes nested columns as tier_nested.h lays them out.
 *
 * Thread rule: none (the coordinator's catalog calls it).
 */
#ifndef FL_COORDINATOR_LAKE_TABLE_H
#define FL_COORDINATOR_LAKE_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "common_error.h"
#include "coordinator_lake.h"
#include "lake_iceberg_table.h"
#include "types_datatype.h"
#include "types_table.h"

/* What makes a descriptor unfit for a lake table under config c: a table
 * datalake format other than the cluster's, a type with no Iceberg type
 * (nested ones checked down to their leaves), a non-STRING
 * partition key, a primary-key table without a bucket key, iceberg.*
 * properties the writer cannot honour. INVALID_TABLE_EXCEPTION (or
 * INVALID_CONFIG_EXCEPTION for a property) with the reason. */
int fl_lake_table_check(const fl_table_desc_t *d, const fl_lake_config_t *c, fl_error_t *err);

/* Creates the Iceberg table (metadata v1, no snapshot) for table_id.
 * It checks d as fl_lake_table_check does.
 * LAKE_TABLE_ALREADY_EXIST when the directory holds one already (the
 * reference's message: "Table db.t already exists."). */
int fl_lake_table_create(const fl_lake_config_t *c, const char *db, const char *name,
                         int64_t table_id, const fl_table_desc_t *d, fl_error_t *err);

/* As create, but a lake table this Fluss table made before (its
 * fluss.table-id property is table_id: the lake was on, then off, now on
 * again) is kept as it is. Any other lake table at the path:
 * LAKE_TABLE_ALREADY_EXIST. */
int fl_lake_table_open_or_create(const fl_lake_config_t *c, const char *db, const char *name,
                                 int64_t table_id, const fl_table_desc_t *d, fl_error_t *err);

/* Brings the lake table of table_id in line with descriptor d after an
 * ALTER TABLE: its properties (mapped as at create) and its schema (new
 * columns take ids above last-column-id, before the system columns, their
 * nested ids numbered as above; kept columns keep theirs),
 * committed as one new metadata version when anything differs. A missing
 * lake table, or one another Fluss table made, is left alone unless
 * must_exist (the lake is on): then UNKNOWN_SERVER_ERROR, as the
 * reference ("Lake table doesn't exist for lake-enabled table ..."). */
int fl_lake_table_sync(const fl_lake_config_t *c, const char *db, const char *name,
                       int64_t table_id, const fl_table_desc_t *d, bool must_exist,
                       fl_error_t *err);

/* Whether lake table metadata m belongs to Fluss table table_id (its
 * fluss.table-id property). */
bool fl_lake_table_is_of(const fl_ice_table_meta_t *m, int64_t table_id);

/* The Iceberg field ids of Fluss column type t's nodes in pre-order — the
 * column itself, then for an ARRAY its element's subtree, for a MAP its
 * key's subtree then its value's subtree, for a ROW each field's subtree
 * in order — taken from the Iceberg field f (the column of the same name
 * in the current schema), appended to out (*n entries, capacity cap).
 * This order is not Iceberg's numbering order (a struct's fields are all
 * numbered before any of their insides): the tiering walks values so.
 * FLUSS_ERR__STATE naming the column when the shapes differ (a kind, a
 * struct's field names or count, a primitive's Iceberg type: a type
 * changed under the lake); INVALID_ARG when cap is too small. */
int fl_lake_column_ids(const fl_datatype_t *t, const fl_ice_field_t *f, int32_t *out, size_t cap,
                       size_t *n, fl_error_t *err);

#endif
