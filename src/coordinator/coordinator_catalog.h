/*
 * coordinator_catalog.h — databases and tables as the coordinator manages
 * them (CoordinatorService + MetadataManager in Fluss): create/drop with
 * Fluss's checks and error codes, table ids and schema ids, creation times,
 * and the bucket → replica assignment of a new table. Reads go straight to
 * the metastore views.
 *
 * Thread rule: the coordinator's loop thread only.
 */
#ifndef FL_COORDINATOR_CATALOG_H
#define FL_COORDINATOR_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"
#include "common_strlist.h"
#include "coordinator_assignment.h"
#include "coordinator_table_check.h"
#include "metastore.h"

#define FL_CATALOG_DEFAULT_DATABASE "fluss"
#define FL_CATALOG_TABLET_SERVERS_MAX FL_ASSIGNMENT_SERVERS_MAX

typedef struct fl_catalog {
    fl_metastore_t *ms;
    fl_table_defaults_t defaults;
    size_t tablet_count;
    int32_t tablet_ids[FL_CATALOG_TABLET_SERVERS_MAX]; /* live tablet servers */
    fl_assignment_rack_t tablet_racks[FL_CATALOG_TABLET_SERVERS_MAX]; /* tablet_ids[i]'s rack */
} fl_catalog_t;

/* Creates the default database when the store has no database at all. */
int fl_catalog_init(fl_catalog_t *cat, fl_metastore_t *ms, const fl_table_defaults_t *defaults,
                    const int32_t *tablet_ids, size_t tablet_count, fl_error_t *err);

/* A tablet server registered (rack: its tablet-server.rack, NULL: none;
 * a known one takes the new rack) or went. New buckets go to the live
 * ones (coordinator_assignment.h). */
void fl_catalog_tablet_up(fl_catalog_t *cat, int32_t id, const char *rack);
void fl_catalog_tablet_down(fl_catalog_t *cat, int32_t id);

int fl_catalog_create_database(fl_catalog_t *cat, const char *name, const uint8_t *json,
                               size_t json_len, bool ignore_if_exists, fl_error_t *err);
int fl_catalog_drop_database(fl_catalog_t *cat, const char *name, bool ignore_if_not_exists,
                             bool cascade, fl_error_t *err);
/* Number of tables in a database. */
size_t fl_catalog_table_count(fl_catalog_t *cat, const char *db);

int fl_catalog_create_table(fl_catalog_t *cat, const char *db, const char *name,
                            const uint8_t *json, size_t json_len, bool ignore_if_exists,
                            fl_error_t *err);
int fl_catalog_drop_table(fl_catalog_t *cat, const char *db, const char *name,
                          bool ignore_if_not_exists, fl_error_t *err);
/* Partitions (CoordinatorService#createPartition/dropPartition): spec_keys
 * and spec_values are the request's key/value pairs in any order; they
 * must name exactly the table's partition keys. The partition name is the
 * values in partition-key order joined by '$'. Creation checks, in the
 * reference's order: the spec, the replication factor, existence
 * (PARTITION_ALREADY_EXISTS), defaults.max_partition_num
 * (PARTITION_MAX_NUM_EXCEPTION) and defaults.max_bucket_num over the
 * table's partitions with the new one (BUCKET_MAX_NUM_EXCEPTION). */
int fl_catalog_create_partition(fl_catalog_t *cat, const char *db, const char *table,
                                const char *const *spec_keys, const char *const *spec_values,
                                size_t spec_count, bool ignore_if_exists, fl_error_t *err);
int fl_catalog_drop_partition(fl_catalog_t *cat, const char *db, const char *table,
                              const char *const *spec_keys, const char *const *spec_values,
                              size_t spec_count, bool ignore_if_not_exists,
                              int64_t *dropped_id, fl_error_t *err);
/* The partition keys of a table's descriptor (caller frees the list). */
int fl_catalog_partition_keys(const fl_ms_table_t *t, fl_strlist_t *keys, fl_error_t *err);

/* The table or NULL with TABLE_NOT_EXIST set in err. */
const fl_ms_table_t *fl_catalog_get_table(fl_catalog_t *cat, const char *db, const char *name,
                                          fl_error_t *err);

#endif
