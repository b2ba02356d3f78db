/*
 * lake_iceberg_meta_edit.c — the three edits flussd makes to an Iceberg
 * table's metadata (lake_iceberg_table.h): a tiering round's snapshot,
 * ADD COLUMN's schema, and snapshot expiry's removal. Each copies the
 * base whole into the result's arena (the base may live in a head that is
 * reloaded, or in the caller's own arrays), appends or removes, and runs
 * the shared rules on the result, so an edit cannot produce metadata the
 * encoder would refuse. Thread rule: none.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "common_time.h"
#include "lake_iceberg_meta_int.h"

#define INVALID(err, ...) fl_err_set((err), FLUSS_ERR__INVALID_ARG, __VA_ARGS__)

/* ---- a deep copy ---- */

typedef struct cp {
    fl_avro_arena_t *a;
    bool oom;
} cp_t;

static const char *cp_str(cp_t *c, const char *s) {
    if (!s) return NULL;
    char *p = fl_ice_arena_strndup(c->a, s, strlen(s));
    c->oom |= !p;
    return p;
}

/* n items of `size` bytes from src, with room for `room` more. */
static void *cp_mem(cp_t *c, const void *src, size_t n, size_t room, size_t size) {
    void *p = fl_ice_arena_alloc(c->a, (n + room) * size);
    c->oom |= !p;
    if (p && n) memcpy(p, src, n * size);
    return p;
}

static const fl_ice_prop_t *cp_props(cp_t *c, const fl_ice_prop_t *p, size_t n) {
    fl_ice_prop_t *q = cp_mem(c, p, n, 0, sizeof(*q));
    for (size_t i = 0; q && i < n; i++) {
        q[i].key = cp_str(c, p[i].key);
        q[i].value = cp_str(c, p[i].value);
    }
    return q;
}

static void cp_field(cp_t *c, fl_ice_field_t *f);

/* n fields from src, deepened; NULL for none or out of memory. */
static fl_ice_field_t *cp_fields(cp_t *c, const fl_ice_field_t *src, size_t n) {
    fl_ice_field_t *f = cp_mem(c, src, n, 0, sizeof(*f));
    for (size_t i = 0; f && i < n; i++) cp_field(c, &f[i]);
    return f;
}

/* Deepens a field whose struct was copied already (its nested type at
 * most FL_ICE_TYPE_DEPTH_MAX deep: checked before any copy). */
static void cp_field(cp_t *c, fl_ice_field_t *f) {
    f->name = cp_str(c, f->name);
    f->type = cp_str(c, f->type);
    f->doc = cp_str(c, f->doc);
    if (!f->nested) return;
    fl_ice_nested_t *n = cp_mem(c, f->nested, 1, 0, sizeof(*n));
    f->nested = n;
    if (!n) return;
    n->fields = n->n_fields ? cp_fields(c, n->fields, n->n_fields) : NULL;
    n->element = n->element ? cp_fields(c, n->element, 1) : NULL;
    n->key = n->key ? cp_fields(c, n->key, 1) : NULL;
    n->value = n->value ? cp_fields(c, n->value, 1) : NULL;
}

/* Deepens a schema whose struct was copied already. */
static void cp_schema(cp_t *c, fl_ice_schema_t *s) {
    s->fields = cp_fields(c, s->fields, s->n_fields);
    s->identifier_ids = cp_mem(c, s->identifier_ids, s->n_identifier_ids, 0, sizeof(int32_t));
}

static void cp_snapshot(cp_t *c, fl_ice_snapshot_t *s) {
    s->manifest_list = cp_str(c, s->manifest_list);
    s->summary = cp_props(c, s->summary, s->n_summary);
}

/* The arrays an edit appends to, writable. */
typedef struct edit {
    fl_ice_schema_t *schemas;
    fl_ice_snapshot_t *snapshots;
    fl_ice_snapshot_log_t *snapshot_log;
    fl_ice_metadata_log_t *metadata_log;
} edit_t;

static void cp_specs_orders(cp_t *c, const fl_ice_table_meta_t *b, fl_ice_table_meta_t *m) {
    fl_ice_partition_spec_t *sp = cp_mem(c, b->specs, b->n_specs, 0, sizeof(*sp));
    for (size_t i = 0; sp && i < b->n_specs; i++) {
        fl_ice_partition_field_t *f = cp_mem(c, sp[i].fields, sp[i].n_fields, 0, sizeof(*f));
        for (size_t j = 0; f && j < sp[i].n_fields; j++) f[j].name = cp_str(c, f[j].name);
        sp[i].fields = f;
    }
    m->specs = sp;
    fl_ice_sort_order_t *so = cp_mem(c, b->sort_orders, b->n_sort_orders, 0, sizeof(*so));
    for (size_t i = 0; so && i < b->n_sort_orders; i++)
        so[i].fields = cp_mem(c, so[i].fields, so[i].n_fields, 0, sizeof(*so[i].fields));
    m->sort_orders = so;
}

/* base into out (reset), with room for one more schema, snapshot and
 * entry of each log. */
static int clone(const fl_ice_table_meta_t *b, fl_ice_meta_read_t *out, edit_t *e,
                 fl_error_t *err) {
    cp_t c = {&out->arena, false};
    fl_ice_table_meta_t *m = &out->meta;
    *m = *b;
    m->location = cp_str(&c, b->location);
    e->schemas = cp_mem(&c, b->schemas, b->n_schemas, 1, sizeof(*e->schemas));
    for (size_t i = 0; e->schemas && i < b->n_schemas; i++) cp_schema(&c, &e->schemas[i]);
    m->schemas = e->schemas;
    cp_specs_orders(&c, b, m);
    m->properties = cp_props(&c, b->properties, b->n_properties);
    e->snapshots = cp_mem(&c, b->snapshots, b->n_snapshots, 1, sizeof(*e->snapshots));
    for (size_t i = 0; e->snapshots && i < b->n_snapshots; i++) cp_snapshot(&c, &e->snapshots[i]);
    m->snapshots = e->snapshots;
    e->snapshot_log = cp_mem(&c, b->snapshot_log, b->n_snapshot_log, 1, sizeof(*e->snapshot_log));
    m->snapshot_log = e->snapshot_log;
    e->metadata_log = cp_mem(&c, b->metadata_log, b->n_metadata_log, 1, sizeof(*e->metadata_log));
    for (size_t i = 0; e->metadata_log && i < b->n_metadata_log; i++)
        e->metadata_log[i].metadata_file = cp_str(&c, e->metadata_log[i].metadata_file);
    m->metadata_log = e->metadata_log;
    return c.oom ? fl_err_set(err, FLUSS_ERR__NO_MEMORY, "metadata: out of memory") : 0;
}

/* ---- shared steps ---- */

/* "write.metadata.previous-versions-max", as Java reads it (1 and up;
 * our own bound above; anything else: the default). */
size_t fl_ice_meta_previous_versions_max(const fl_ice_table_meta_t *m) {
    const char *v = fl_ice_prop_get(m->properties, m->n_properties,
                                    "write.metadata.previous-versions-max");
    char *end;
    long long n = v ? strtoll(v, &end, 10) : 0;
    if (!v || !*v || *end || n < 1) return FL_ICE_METADATA_LOG_DEFAULT;
    return n > FL_ICE_METADATA_LOG_MAX ? FL_ICE_METADATA_LOG_MAX : (size_t)n;
}

/* The base's file into the metadata-log, the oldest entries past the
 * table's limit dropped (Java keeps the log so). */
static int log_base(const fl_ice_table_meta_t *base, const char *base_file,
                    fl_ice_meta_read_t *out, edit_t *e, fl_error_t *err) {
    fl_ice_table_meta_t *m = &out->meta;
    if (base_file) {
        cp_t c = {&out->arena, false};
        e->metadata_log[m->n_metadata_log].timestamp_ms = base->last_updated_ms;
        e->metadata_log[m->n_metadata_log].metadata_file = cp_str(&c, base_file);
        m->n_metadata_log++;
        if (c.oom) return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "metadata: out of memory");
    }
    size_t keep = fl_ice_meta_previous_versions_max(base);
    if (m->n_metadata_log > keep) {
        m->metadata_log += m->n_metadata_log - keep;
        m->n_metadata_log = keep;
    }
    return 0;
}

static int finish(fl_ice_meta_read_t *out, int rc, fl_error_t *err) {
    if (!rc) rc = fl_ice_meta_check(&out->meta, FLUSS_ERR__INVALID_ARG, err);
    if (rc) fl_ice_meta_read_reset(out);
    return rc;
}

/* ---- a snapshot ---- */

static int check_new_snapshot(const fl_ice_table_meta_t *b, const fl_ice_snapshot_t *s,
                              fl_error_t *err) {
    if (s->snapshot_id < 0) return INVALID(err, "snapshot id %" PRId64 " negative", s->snapshot_id);
    if (fl_ice_meta_snapshot(b, s->snapshot_id))
        return INVALID(err, "snapshot id %" PRId64 " already in the table", s->snapshot_id);
    /* one branch, linear: a round builds on the head it read */
    if (s->parent_snapshot_id != b->current_snapshot_id)
        return INVALID(err, "snapshot %" PRId64 ": parent %" PRId64
                            " is not the current snapshot %" PRId64,
                       s->snapshot_id, s->parent_snapshot_id, b->current_snapshot_id);
    if (s->sequence_number != FL_ICE_NONE && s->sequence_number <= b->last_sequence_number)
        return INVALID(err, "snapshot %" PRId64 ": sequence number %" PRId64
                            " not above last-sequence-number %" PRId64,
                       s->snapshot_id, s->sequence_number, b->last_sequence_number);
    if (b->last_sequence_number == INT64_MAX)
        return INVALID(err, "last-sequence-number exhausted");
    if (s->schema_id != FL_ICE_NO_SCHEMA && !fl_ice_meta_schema(b, s->schema_id))
        return INVALID(err, "snapshot %" PRId64 ": schema %" PRId32 " not in the table",
                       s->snapshot_id, s->schema_id);
    if (b->n_snapshots >= FL_ICE_SNAPSHOTS_MAX || b->n_snapshot_log >= FL_ICE_SNAPSHOTS_MAX)
        return INVALID(err, "%zu snapshots: expire some first", b->n_snapshots);
    return 0;
}

int fl_ice_meta_with_snapshot(const fl_ice_table_meta_t *base, const char *base_metadata_file,
                              const fl_ice_snapshot_t *s, fl_ice_meta_read_t *out,
                              fl_error_t *err) {
    assert(base != &out->meta);
    fl_ice_meta_read_reset(out);
    edit_t e;
    int rc = fl_ice_meta_check(base, FLUSS_ERR__INVALID_ARG, err);
    if (!rc) rc = check_new_snapshot(base, s, err);
    if (!rc) rc = clone(base, out, &e, err);
    if (rc) return finish(out, rc, err);
    fl_ice_table_meta_t *m = &out->meta;
    fl_ice_snapshot_t *n = &e.snapshots[m->n_snapshots++];
    cp_t c = {&out->arena, false};
    *n = *s;
    cp_snapshot(&c, n);
    if (n->sequence_number == FL_ICE_NONE) n->sequence_number = base->last_sequence_number + 1;
    if (n->timestamp_ms == FL_ICE_NONE) n->timestamp_ms = fl_time_wall_ms();
    if (n->schema_id == FL_ICE_NO_SCHEMA) n->schema_id = base->current_schema_id;
    m->last_sequence_number = n->sequence_number;
    m->current_snapshot_id = n->snapshot_id;
    if (n->timestamp_ms > m->last_updated_ms) m->last_updated_ms = n->timestamp_ms;
    e.snapshot_log[m->n_snapshot_log++] = (fl_ice_snapshot_log_t){n->timestamp_ms, n->snapshot_id};
    rc = c.oom ? fl_err_set(err, FLUSS_ERR__NO_MEMORY, "metadata: out of memory")
               : log_base(base, base_metadata_file, out, &e, err);
    return finish(out, rc, err);
}

/* ---- a schema ---- */

/* Whether a column of type `from` may become `to` (the specification's
 * "Schema Evolution": int to long, float to double, a wider decimal). */
static bool type_widens(const char *from, const char *to) {
    fl_ice_type_info_t a, b;
    if (!fl_ice_type_parse(from, &a) || !fl_ice_type_parse(to, &b)) return false;
    if (a.prim == b.prim && a.precision == b.precision && a.scale == b.scale &&
        a.length == b.length)
        return true;
    if (a.prim == FL_ICE_T_INT && b.prim == FL_ICE_T_LONG) return true;
    if (a.prim == FL_ICE_T_FLOAT && b.prim == FL_ICE_T_DOUBLE) return true;
    return a.prim == FL_ICE_T_DECIMAL && b.prim == FL_ICE_T_DECIMAL && a.scale == b.scale &&
           b.precision > a.precision;
}

/* "column NAME" for a top-level column, "field NAME (id N)" inside one. */
static const char *label(const fl_ice_field_t *f, bool top, char *buf, size_t n) {
    if (top)
        snprintf(buf, n, "column %s", f->name);
    else
        snprintf(buf, n, "field %s (id %" PRId32 ")", f->name, f->id);
    return buf;
}

/* The fields directly inside f's type into g (room for 2 unless a struct:
 * then *fields), how many. */
static size_t inner(const fl_ice_field_t *f, const fl_ice_field_t **g,
                    const fl_ice_field_t **fields) {
    *fields = NULL;
    if (!f->nested) return 0;
    switch (f->nested->kind) {
    case FL_ICE_STRUCT: *fields = f->nested->fields; return f->nested->n_fields;
    case FL_ICE_LIST: g[0] = f->nested->element; return 1;
    case FL_ICE_MAP: g[0] = f->nested->key, g[1] = f->nested->value; return 2;
    }
    return 0;
}

/* A field new to the table: optional (older rows have no value) when
 * added on its own (a column, a struct's new field), not when inside a
 * new one; every id in its tree never used before. */
static int check_new_field(const fl_ice_table_meta_t *b, const fl_ice_field_t *f, bool added,
                           bool top, fl_error_t *err) {
    char l[320];
    if (f->required && added)
        return INVALID(err, "new %s is required: older rows have no value",
                       label(f, top, l, sizeof(l)));
    if (f->id <= b->last_column_id)
        return INVALID(err, "%s: id %" PRId32 " was used before (ids never come back)",
                       label(f, top, l, sizeof(l)), f->id);
    const fl_ice_field_t *g[2], *fields;
    size_t n = inner(f, g, &fields);
    for (size_t i = 0; i < n; i++)
        if (check_new_field(b, fields ? &fields[i] : g[i], false, false, err))
            return FLUSS_ERR__INVALID_ARG;
    return 0;
}

static const char *kind_name(const fl_ice_field_t *f) {
    if (!f->nested) return f->type;
    switch (f->nested->kind) {
    case FL_ICE_STRUCT: return "struct";
    case FL_ICE_LIST: return "list";
    case FL_ICE_MAP: return "map";
    }
    return "?";
}

/* A field the table has (old) as f now: the same kind, no narrower, and
 * for a nested one, the same element, key and value ids, each of these
 * and a struct's fields checked in turn. */
static int check_kept_field(const fl_ice_table_meta_t *b, const fl_ice_field_t *old,
                            const fl_ice_field_t *f, bool top, fl_error_t *err) {
    char l[320];
    if (f->required && !old->required)
        return INVALID(err, "%s: optional cannot become required", label(f, top, l, sizeof(l)));
    if (!old->nested != !f->nested || (old->nested && old->nested->kind != f->nested->kind) ||
        (!old->nested && !type_widens(old->type, f->type)))
        return INVALID(err, "%s: %s cannot become %s", label(f, top, l, sizeof(l)),
                       kind_name(old), kind_name(f));
    const fl_ice_field_t *was[2], *now[2], *was_fields, *now_fields;
    size_t n_was = inner(old, was, &was_fields), n = inner(f, now, &now_fields);
    if (!now_fields) {
        for (size_t i = 0; i < n; i++) {
            if (was[i]->id != now[i]->id)
                return INVALID(err, "%s: the %s id %" PRId32 " cannot become %" PRId32,
                               label(f, top, l, sizeof(l)), now[i]->name, was[i]->id, now[i]->id);
            if (check_kept_field(b, was[i], now[i], false, err)) return FLUSS_ERR__INVALID_ARG;
        }
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        const fl_ice_field_t *g = &now_fields[i], *before = NULL;
        for (size_t j = 0; j < n_was && !before; j++)
            if (was_fields[j].id == g->id) before = &was_fields[j];
        if (before ? check_kept_field(b, before, g, false, err)
                   : check_new_field(b, g, true, false, err))
            return FLUSS_ERR__INVALID_ARG;
    }
    return 0;
}

static int check_column(const fl_ice_table_meta_t *b, const fl_ice_schema_t *cur,
                        const fl_ice_field_t *f, fl_error_t *err) {
    const fl_ice_field_t *old = fl_ice_schema_field(cur, f->id);
    return old ? check_kept_field(b, old, f, true, err) : check_new_field(b, f, true, true, err);
}

static int check_evolution(const fl_ice_table_meta_t *b, const fl_ice_schema_t *s,
                           fl_error_t *err) {
    const fl_ice_schema_t *cur = fl_ice_meta_schema(b, b->current_schema_id);
    for (size_t i = 0; i < s->n_fields; i++)
        if (check_column(b, cur, &s->fields[i], err)) return FLUSS_ERR__INVALID_ARG;
    const fl_ice_partition_spec_t *spec = fl_ice_meta_spec(b, b->default_spec_id);
    for (size_t i = 0; i < spec->n_fields; i++)
        if (!fl_ice_schema_field(s, spec->fields[i].source_id))
            return INVALID(err, "schema drops column %" PRId32 " of partition field %s",
                           spec->fields[i].source_id, spec->fields[i].name);
    for (size_t i = 0; i < b->n_sort_orders; i++) {
        const fl_ice_sort_order_t *o = &b->sort_orders[i];
        for (size_t j = 0; o->order_id == b->default_sort_order_id && j < o->n_fields; j++)
            if (!fl_ice_schema_field(s, o->fields[j].source_id))
                return INVALID(err, "schema drops column %" PRId32 " of the sort order",
                               o->fields[j].source_id);
    }
    return 0;
}

/* The schema with its id chosen, checked on its own and against base. */
static int check_new_schema(const fl_ice_table_meta_t *b, const fl_ice_schema_t *schema,
                            fl_ice_schema_t *s, fl_error_t *err) {
    *s = *schema;
    if (s->schema_id == FL_ICE_NO_SCHEMA) {
        s->schema_id = 0;
        for (size_t i = 0; i < b->n_schemas; i++) {
            if (b->schemas[i].schema_id == INT32_MAX) /* a file may hold it */
                return INVALID(err, "schema ids exhausted");
            if (b->schemas[i].schema_id >= s->schema_id) s->schema_id = b->schemas[i].schema_id + 1;
        }
    }
    if (fl_ice_schema_check(s, FL_ICE_FIELD_ID_MAX, "schema", FLUSS_ERR__INVALID_ARG, err))
        return FLUSS_ERR__INVALID_ARG;
    if (fl_ice_meta_schema(b, s->schema_id))
        return INVALID(err, "schema id %" PRId32 " already in the table", s->schema_id);
    if (b->n_schemas >= FL_ICE_SCHEMAS_MAX) return INVALID(err, "%zu schemas", b->n_schemas);
    return check_evolution(b, s, err);
}

int fl_ice_meta_with_schema(const fl_ice_table_meta_t *base, const char *base_metadata_file,
                            const fl_ice_schema_t *schema, fl_ice_meta_read_t *out,
                            fl_error_t *err) {
    assert(base != &out->meta);
    fl_ice_meta_read_reset(out);
    edit_t e;
    fl_ice_schema_t s;
    int rc = fl_ice_meta_check(base, FLUSS_ERR__INVALID_ARG, err);
    if (!rc) rc = check_new_schema(base, schema, &s, err);
    if (!rc) rc = clone(base, out, &e, err);
    if (rc) return finish(out, rc, err);
    fl_ice_table_meta_t *m = &out->meta;
    cp_t c = {&out->arena, false};
    e.schemas[m->n_schemas] = s;
    cp_schema(&c, &e.schemas[m->n_schemas++]);
    m->current_schema_id = s.schema_id;
    for (size_t i = 0; i < s.n_fields; i++) {
        int32_t max = fl_ice_field_max_id(&s.fields[i]);
        if (max > m->last_column_id) m->last_column_id = max;
    }
    int64_t now = fl_time_wall_ms();
    if (now > m->last_updated_ms) m->last_updated_ms = now;
    rc = c.oom ? fl_err_set(err, FLUSS_ERR__NO_MEMORY, "metadata: out of memory")
               : log_base(base, base_metadata_file, out, &e, err);
    return finish(out, rc, err);
}

/* ---- snapshots expired ---- */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static bool in_sorted(const int64_t *sorted, size_t n, int64_t id) {
    return n && bsearch(&id, sorted, n, sizeof(*sorted), cmp_i64);
}

/* ids (sorted, n) each once, each in b, none current. Sorting b's ids
 * keeps this n log n: a table that never expired may hold many. */
static int check_expired_ids(const fl_ice_table_meta_t *b, const int64_t *ids, size_t n,
                             fl_error_t *err) {
    if (n == 0) return INVALID(err, "no snapshot to expire");
    int64_t *have = fl_malloc((b->n_snapshots + 1) * sizeof(*have));
    for (size_t i = 0; i < b->n_snapshots; i++) have[i] = b->snapshots[i].snapshot_id;
    qsort(have, b->n_snapshots, sizeof(*have), cmp_i64);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (i && ids[i] == ids[i - 1])
            rc = INVALID(err, "snapshot %" PRId64 " named twice", ids[i]);
        else if (ids[i] == b->current_snapshot_id)
            rc = INVALID(err, "snapshot %" PRId64 " is the current snapshot", ids[i]);
        else if (!in_sorted(have, b->n_snapshots, ids[i]))
            rc = INVALID(err, "snapshot %" PRId64 " not in the table", ids[i]);
    }
    fl_free(have);
    return rc;
}

/* The kept snapshots, in place; the snapshot-log rewritten as Java's
 * TableMetadata.Builder#updateSnapshotLog does: an entry of a removed
 * snapshot drops every entry before it. */
static void drop_expired(fl_ice_table_meta_t *m, edit_t *e, const int64_t *sorted, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < m->n_snapshots; i++)
        if (!in_sorted(sorted, n, e->snapshots[i].snapshot_id)) e->snapshots[k++] = e->snapshots[i];
    m->n_snapshots = k;
    k = 0;
    for (size_t i = 0; i < m->n_snapshot_log; i++) {
        if (in_sorted(sorted, n, e->snapshot_log[i].snapshot_id)) k = 0;
        else e->snapshot_log[k++] = e->snapshot_log[i];
    }
    m->n_snapshot_log = k;
}

int fl_ice_meta_without_snapshots(const fl_ice_table_meta_t *base, const char *base_metadata_file,
                                  const int64_t *ids, size_t n, fl_ice_meta_read_t *out,
                                  fl_error_t *err) {
    assert(base != &out->meta);
    fl_ice_meta_read_reset(out);
    if (n > FL_ICE_SNAPSHOTS_MAX) return INVALID(err, "%zu snapshots to expire", n);
    int64_t *sorted = fl_malloc((n + 1) * sizeof(*sorted));
    if (n) memcpy(sorted, ids, n * sizeof(*sorted));
    qsort(sorted, n, sizeof(*sorted), cmp_i64);
    edit_t e;
    int rc = fl_ice_meta_check(base, FLUSS_ERR__INVALID_ARG, err);
    if (!rc) rc = check_expired_ids(base, sorted, n, err);
    if (!rc) rc = clone(base, out, &e, err);
    if (!rc) {
        fl_ice_table_meta_t *m = &out->meta;
        drop_expired(m, &e, sorted, n);
        int64_t now = fl_time_wall_ms();
        if (now > m->last_updated_ms) m->last_updated_ms = now;
        rc = log_base(base, base_metadata_file, out, &e, err);
    }
    fl_free(sorted);
    return finish(out, rc, err);
}
