/*
 * coordinator_schema_update.c — ALTER TABLE's column changes on a schema
 * (coordinator_schema_update.h). Messages of refusals the reference also
 * makes are its words; an IllegalArgumentException or SchemaChangeException
 * reaches a Fluss client as UNKNOWN_SERVER_ERROR with the Java stack
 * trace, of which we send the first line.
 */
#include "coordinator_schema_update.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"

#define FL_IAE "java.lang.IllegalArgumentException: "
#define FL_SCE "org.apache.fluss.exception.SchemaChangeException: "

/* Why a column may not be dropped or renamed: the table's layout or a
 * property names it. NULL when it may. */
static const char *fl_column_pinned_by(const fl_table_desc_t *d, const char *name) {
    const fl_schema_t *s = &d->schema;
    if (fl_strlist_index(&s->primary_key, name) >= 0) return "the primary key";
    if (fl_strlist_index(&d->partition_keys, name) >= 0) return "the partition keys";
    if (fl_strlist_index(&d->bucket_keys, name) >= 0) return "the bucket keys";
    if (fl_strlist_index(&s->auto_increment, name) >= 0) return "the auto-increment column";
    const char *vc = fl_kvlist_get(&d->properties, "table.merge-engine.versioned.ver-column");
    if (vc && strcmp(vc, name) == 0) return "table.merge-engine.versioned.ver-column";
    return NULL;
}

static int fl_update_add(const fl_column_change_t *c, fl_schema_t *s, fl_error_t *err) {
    if (fl_schema_column_index(s, c->name) >= 0)
        return fl_err_set(err, FLUSS_ERR_INVALID_ALTER_TABLE_EXCEPTION,
                          "Column %s already exists.", c->name);
    if (!c->type->nullable)
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          FL_IAE "Column %s must be nullable.", c->name);
    if (s->column_count >= FL_SCHEMA_COLUMNS_MAX)
        return fl_err_set(err, FLUSS_ERR_INVALID_ALTER_TABLE_EXCEPTION,
                          "Table has %zu columns, the most fluss-c keeps.", s->column_count);
    fl_schema_add_column(s, c->name, fl_datatype_clone(c->type), c->comment);
    fl_schema_assign_ids(s); /* the new column only: every other has its id */
    return 0;
}

static int fl_update_drop(const fl_table_desc_t *d, const fl_column_change_t *c, fl_schema_t *s,
                          fl_error_t *err) {
    int idx = fl_schema_column_index(s, c->name);
    if (idx < 0)
        return fl_err_set(err, FLUSS_ERR_INVALID_ALTER_TABLE_EXCEPTION,
                          "Column %s does not exist.", c->name);
    const char *pin = fl_column_pinned_by(d, c->name);
    if (pin)
        return fl_err_set(err, FLUSS_ERR_INVALID_ALTER_TABLE_EXCEPTION,
                          "Column %s cannot be dropped: it is in %s.", c->name, pin);
    if (s->column_count == 1)
        return fl_err_set(err, FLUSS_ERR_INVALID_ALTER_TABLE_EXCEPTION,
                          "Column %s cannot be dropped: it is the only column.", c->name);
    fl_column_t *col = &s->columns[idx];
    fl_free(col->name);
    fl_free(col->comment);
    fl_datatype_destroy(col->type);
    if (col->agg_function) json_decref(col->agg_function);
    memmove(col, col + 1, (s->column_count - (size_t)idx - 1) * sizeof(*col));
    s->column_count--;
    /* highest_field_id stays: a dropped id is never given out again */
    return 0;
}

static int fl_update_rename(const fl_table_desc_t *d, const fl_column_change_t *c,
                            fl_schema_t *s, fl_error_t *err) {
    int idx = fl_schema_column_index(s, c->name);
    if (idx < 0)
        return fl_err_set(err, FLUSS_ERR_INVALID_ALTER_TABLE_EXCEPTION,
                          "Column %s does not exist.", c->name);
    if (strcmp(c->name, c->new_name) == 0) return 0;
    if (fl_schema_column_index(s, c->new_name) >= 0)
        return fl_err_set(err, FLUSS_ERR_INVALID_ALTER_TABLE_EXCEPTION,
                          "Column %s already exists.", c->new_name);
    if (c->new_name[0] == '\0')
        return fl_err_set(err, FLUSS_ERR_INVALID_ALTER_TABLE_EXCEPTION,
                          "Column %s cannot be renamed to an empty name.", c->name);
    const char *pin = fl_column_pinned_by(d, c->name);
    if (pin)
        return fl_err_set(err, FLUSS_ERR_INVALID_ALTER_TABLE_EXCEPTION,
                          "Column %s cannot be renamed: it is in %s.", c->name, pin);
    fl_free(s->columns[idx].name);
    s->columns[idx].name = fl_strdup(c->new_name);
    return 0;
}

static bool fl_schema_same(const fl_schema_t *a, const fl_schema_t *b) {
    json_t *ja = fl_schema_to_json(a), *jb = fl_schema_to_json(b);
    bool same = json_equal(ja, jb);
    json_decref(ja);
    json_decref(jb);
    return same;
}

int fl_schema_update(const fl_table_desc_t *d, const fl_column_change_t *changes, size_t n,
                     fl_schema_t *out, bool *changed, fl_error_t *err) {
    fl_schema_copy(out, &d->schema);
    *changed = false;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const fl_column_change_t *c = &changes[i];
        switch (c->kind) {
        case FL_COLUMN_ADD: rc = fl_update_add(c, out, err); break;
        case FL_COLUMN_DROP: rc = fl_update_drop(d, c, out, err); break;
        case FL_COLUMN_RENAME: rc = fl_update_rename(d, c, out, err); break;
        case FL_COLUMN_MODIFY:
            rc = fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                            FL_SCE "Not support modify column now.");
            break;
        }
    }
    if (rc) {
        fl_schema_free(out);
        return rc;
    }
    *changed = !fl_schema_same(out, &d->schema);
    return 0;
}
