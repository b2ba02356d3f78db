/*
 * coordinator_alter.h — ALTER TABLE on the coordinator (Fluss's
 * CoordinatorService#alterTable with MetadataManager#alterTableProperties
 * and #alterTableSchema): table and custom properties set or reset, or
 * column changes (coordinator_schema_update.h) that register the next
 * schema id. One request changes properties or the schema, never both.
 *
 * Properties, as in 0.9.1: a `table.*` key must be one of the alterable
 * options (table.datalake.enabled, table.datalake.freshness,
 * table.log.tiered.local-segments); enabling the data lake is refused
 * (no lake here); any other key is a custom property. The new descriptor
 * is validated like a created one. A change that leaves the properties as
 * they were writes nothing. Neither kind of change moves the table's
 * modified_time (0.9.1 answers the creation time there after both).
 *
 * The request is protocol-neutral (strings and bytes as they came);
 * parsing its data types and positions is part of the call, in the
 * reference's order, so every error is the one a 0.9.1 server answers.
 *
 * Thread rule: the coordinator's catalog lock held (like the catalog).
 */
#ifndef FL_COORDINATOR_ALTER_H
#define FL_COORDINATOR_ALTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator_catalog.h"

/* PbAlterConfig.op_type */
enum { FL_ALTER_OP_SET = 0, FL_ALTER_OP_DELETE = 1, FL_ALTER_OP_APPEND = 2,
       FL_ALTER_OP_SUBTRACT = 3 };
/* PbAddColumn/PbModifyColumn.column_position_type: 0.9.1 knows LAST only */
enum { FL_ALTER_POSITION_LAST = 0 };

typedef struct fl_alter_config {
    const char *key;
    const char *value; /* NULL when absent */
    int32_t op;
} fl_alter_config_t;

/* One PbAddColumn, PbDropColumn, PbRenameColumn or PbModifyColumn. */
typedef struct fl_alter_column {
    const char *name;          /* column_name / old_column_name */
    const char *new_name;      /* rename */
    const uint8_t *type_json;  /* add; modify (NULL when absent) */
    size_t type_json_len;
    const char *comment;       /* NULL when absent */
    bool has_position;
    int32_t position;
} fl_alter_column_t;

typedef struct fl_alter_table_req {
    const char *database, *table;
    bool ignore_if_not_exists;
    const fl_alter_config_t *configs;
    size_t n_configs;
    const fl_alter_column_t *add, *drop, *rename, *modify;
    size_t n_add, n_drop, n_rename, n_modify;
} fl_alter_table_req_t;

typedef enum fl_alter_outcome {
    FL_ALTER_NOTHING = 0,  /* no change (or a missing table ignored) */
    FL_ALTER_PROPERTIES,   /* the descriptor's properties changed */
    FL_ALTER_SCHEMA,       /* a new schema id is the latest */
} fl_alter_outcome_t;

int fl_catalog_alter_table(fl_catalog_t *cat, const fl_alter_table_req_t *req,
                           fl_alter_outcome_t *outcome, fl_error_t *err);

#endif
