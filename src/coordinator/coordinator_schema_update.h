/*
 * coordinator_schema_update.h — the column changes of ALTER TABLE applied
 * to a table's latest schema (Fluss's SchemaUpdate): the result is the
 * next schema id's schema. Pure: no metadata store, no I/O.
 *
 * As in Fluss 0.9.1: ADD COLUMN appends a nullable column (a new column id
 * = highest field id + 1, nested ROW field ids after it); MODIFY COLUMN is
 * refused. fluss-c extensions (the reference refuses both): DROP COLUMN
 * and RENAME COLUMN of a column no key, partition, auto-increment value or
 * version depends on. Column ids never change and are never reused, so
 * data written under any schema id maps onto any other by id
 * (types_schema_map.h).
 *
 * Thread rule: none (caller's values only).
 */
#ifndef FL_COORDINATOR_SCHEMA_UPDATE_H
#define FL_COORDINATOR_SCHEMA_UPDATE_H

#include <stdbool.h>
#include <stddef.h>

#include "common_error.h"
#include "types_table.h"

typedef enum fl_column_change_kind {
    FL_COLUMN_ADD = 0,
    FL_COLUMN_DROP,
    FL_COLUMN_RENAME,
    FL_COLUMN_MODIFY,
} fl_column_change_kind_t;

typedef struct fl_column_change {
    fl_column_change_kind_t kind;
    const char *name;           /* the column; ADD: the new one */
    const char *new_name;       /* RENAME */
    const fl_datatype_t *type;  /* ADD (copied) */
    const char *comment;        /* ADD; NULL = none */
} fl_column_change_t;

/* Applies changes in order to d's schema into out (a new schema the
 * caller frees). *changed is false when the result equals the current
 * schema. Errors, with the reference's codes and words where it has them:
 * INVALID_ALTER_TABLE_EXCEPTION (column exists / does not exist, a column
 * the table depends on, the last column), UNKNOWN_SERVER_ERROR for what
 * Fluss answers with an IllegalArgumentException or an unmapped
 * SchemaChangeException (NOT NULL column, MODIFY). On error out is
 * empty. */
int fl_schema_update(const fl_table_desc_t *d, const fl_column_change_t *changes, size_t n,
                     fl_schema_t *out, bool *changed, fl_error_t *err);

#endif
