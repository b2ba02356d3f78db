/*
 * lake_iceberg_manifest.c — writing Iceberg v2 manifests and manifest
 * lists (lake_iceberg_manifest.h): checks of the caller's description,
 * the header metadata, one Avro record per entry, and the summary a
 * manifest-list entry needs. The schemas are lake_iceberg_manifest_schema.c,
 * the readers lake_iceberg_manifest_read.c. Thread rule: none.
 */
#include "lake_iceberg_manifest.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "common_alloc.h"
#include "lake_avro_file.h"
#include "lake_iceberg_manifest_int.h"

/* ---- bounds, summaries ---- */

size_t fl_ice_bound_int(int32_t v, uint8_t out[4]) {
    for (int i = 0; i < 4; i++) out[i] = (uint8_t)((uint32_t)v >> (8 * i));
    return 4;
}

size_t fl_ice_bound_long(int64_t v, uint8_t out[8]) {
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)((uint64_t)v >> (8 * i));
    return 8;
}

size_t fl_ice_bound_float(float v, uint8_t out[4]) {
    uint32_t bits;
    memcpy(&bits, &v, 4);
    return fl_ice_bound_int((int32_t)bits, out);
}

size_t fl_ice_bound_double(double v, uint8_t out[8]) {
    uint64_t bits;
    memcpy(&bits, &v, 8);
    return fl_ice_bound_long((int64_t)bits, out);
}

size_t fl_ice_bound_decimal(__int128 unscaled, uint8_t out[16]) {
    unsigned __int128 u = (unsigned __int128)unscaled;
    size_t n = 16;
    /* drop a leading byte while the next one carries the same sign */
    while (n > 1) {
        uint8_t top = (uint8_t)(u >> (8 * (n - 1)));
        uint8_t next = (uint8_t)(u >> (8 * (n - 2)));
        if (!((top == 0x00 && !(next & 0x80)) || (top == 0xFF && (next & 0x80)))) break;
        n--;
    }
    for (size_t i = 0; i < n; i++) out[i] = (uint8_t)(u >> (8 * (n - 1 - i)));
    return n;
}

void fl_ice_manifest_summary_init(fl_ice_manifest_summary_t *s) {
    memset(s, 0, sizeof(*s));
    fl_avro_arena_init(&s->arena);
}

void fl_ice_manifest_summary_reset(fl_ice_manifest_summary_t *s) {
    fl_avro_arena_reset(&s->arena);
    fl_ice_manifest_summary_init(s);
}

/* The caller's sizes: out of memory aborts, as for every builder. */
static void *arena_alloc(fl_avro_arena_t *a, size_t n) {
    void *p = fl_avro_arena_try_alloc(a, n ? n : 1);
    if (!p) abort();
    return p;
}

static fl_avro_bytes_t arena_copy(fl_avro_arena_t *a, const void *p, size_t n) {
    uint8_t *q = arena_alloc(a, n + 1);
    if (n) memcpy(q, p, n);
    return (fl_avro_bytes_t){q, n};
}

/* -1, 0, 1 as a < b over the partition values of type t (non-null). */
static int value_cmp(fl_ice_type_t t, const fl_ice_value_t *a, const fl_ice_value_t *b) {
    if (t != FL_ICE_STRING) return a->i < b->i ? -1 : a->i > b->i;
    size_t n = a->s.len < b->s.len ? a->s.len : b->s.len;
    int c = n ? memcmp(a->s.p, b->s.p, n) : 0;
    if (c) return c < 0 ? -1 : 1;
    return a->s.len < b->s.len ? -1 : a->s.len > b->s.len;
}

static fl_avro_bytes_t bound_bytes(fl_avro_arena_t *a, fl_ice_type_t t, const fl_ice_value_t *v) {
    uint8_t b[8];
    if (t == FL_ICE_STRING) return arena_copy(a, v->s.p, v->s.len);
    if (t == FL_ICE_LONG) return arena_copy(a, b, fl_ice_bound_long(v->i, b));
    return arena_copy(a, b, fl_ice_bound_int((int32_t)v->i, b));
}

static void summarize_field(const fl_ice_manifest_t *m, size_t f, fl_avro_arena_t *a,
                            fl_ice_field_summary_t *out) {
    fl_ice_type_t t = m->spec.fields[f].type;
    const fl_ice_value_t *lo = NULL, *hi = NULL;
    out->contains_null = false;
    out->contains_nan = 0; /* int, long, string, date: never NaN */
    for (size_t e = 0; e < m->n_entries; e++) {
        const fl_ice_value_t *v = &m->entries[e].file.partition[f];
        if (v->null) {
            out->contains_null = true;
            continue;
        }
        if (!lo || value_cmp(t, v, lo) < 0) lo = v;
        if (!hi || value_cmp(t, v, hi) > 0) hi = v;
    }
    out->lower = lo ? bound_bytes(a, t, lo) : (fl_avro_bytes_t){0};
    out->upper = hi ? bound_bytes(a, t, hi) : (fl_avro_bytes_t){0};
}

static void summarize(const fl_ice_manifest_t *m, const char *path, uint64_t length,
                      fl_ice_manifest_summary_t *s) {
    fl_ice_manifest_summary_reset(s);
    fl_ice_manifest_file_t *f = &s->file;
    f->manifest_path = (const char *)arena_copy(&s->arena, path, strlen(path)).p;
    f->manifest_length = (int64_t)length;
    f->partition_spec_id = m->spec.spec_id;
    f->content = m->content;
    f->sequence_number = FL_ICE_NONE;
    f->min_sequence_number = FL_ICE_NONE;
    f->added_snapshot_id = m->snapshot_id;
    for (size_t e = 0; e < m->n_entries; e++) {
        const fl_ice_manifest_entry_t *x = &m->entries[e];
        int64_t rows = x->file.record_count;
        if (x->status == FL_ICE_ADDED) f->added_files_count++, f->added_rows_count += rows;
        if (x->status == FL_ICE_EXISTING) f->existing_files_count++, f->existing_rows_count += rows;
        if (x->status == FL_ICE_DELETED) f->deleted_files_count++, f->deleted_rows_count += rows;
        if (x->status != FL_ICE_DELETED && x->sequence_number != FL_ICE_NONE &&
            (f->min_sequence_number == FL_ICE_NONE || x->sequence_number < f->min_sequence_number))
            f->min_sequence_number = x->sequence_number;
    }
    fl_ice_field_summary_t *p = arena_alloc(&s->arena, m->spec.n_fields * sizeof(*p));
    for (size_t i = 0; i < m->spec.n_fields; i++) summarize_field(m, i, &s->arena, &p[i]);
    f->partitions = p;
    f->n_partitions = m->spec.n_fields;
}

/* ---- validation ---- */

/* An Avro name ([A-Za-z_][A-Za-z0-9_]*): the partition record's field
 * names. Java escapes other characters; our partition columns need not. */
static bool avro_name(const char *s) {
    if (!s || !*s || (*s >= '0' && *s <= '9')) return false;
    for (; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9')))
            return false;
    return true;
}

static int check_spec(const fl_ice_partition_spec_t *spec, fl_error_t *err) {
    if (spec->n_fields > FL_ICE_PARTITION_FIELDS_MAX || (spec->n_fields && !spec->fields))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "manifest: %zu partition fields (max %d)",
                          spec->n_fields, FL_ICE_PARTITION_FIELDS_MAX);
    for (size_t i = 0; i < spec->n_fields; i++) {
        const fl_ice_partition_field_t *f = &spec->fields[i];
        if (!avro_name(f->name) || f->field_id < 0 || (unsigned)f->type > FL_ICE_DATE)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "manifest: partition field %zu malformed", i);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(spec->fields[j].name, f->name) || spec->fields[j].field_id == f->field_id)
                return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                                  "manifest: partition field %s repeats a name or id", f->name);
        if (f->transform == FL_ICE_BUCKET ? f->buckets <= 0 || f->type != FL_ICE_INT
                                          : f->transform != FL_ICE_IDENTITY)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                              "manifest: partition field %s: bad transform", f->name);
    }
    return 0;
}

static int check_columns(const fl_ice_data_file_t *f, fl_error_t *err) {
    if (f->n_columns > FL_ICE_COLUMNS_MAX || (f->n_columns && !f->columns))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "%zu stats columns", f->n_columns);
    for (size_t c = 0; c < f->n_columns; c++) {
        const fl_ice_column_stats_t *s = &f->columns[c];
        if (c && s->field_id <= f->columns[c - 1].field_id)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "stats field ids not ascending at %zu", c);
        if (s->column_size < FL_ICE_NONE || s->value_count < FL_ICE_NONE ||
            s->null_count < FL_ICE_NONE || s->nan_count < FL_ICE_NONE)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "negative count of column %" PRId32,
                              s->field_id);
    }
    return 0;
}

static int check_file(const fl_ice_manifest_t *m, const fl_ice_data_file_t *f, fl_error_t *err) {
    bool deletes = f->content != FL_ICE_DATA;
    if ((unsigned)f->content > FL_ICE_EQUALITY_DELETES ||
        deletes != (m->content == FL_ICE_MANIFEST_DELETES))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "content %d in a %s manifest", f->content,
                          m->content == FL_ICE_MANIFEST_DATA ? "data" : "deletes");
    if (!f->file_path || !f->file_format || (m->spec.n_fields && !f->partition))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "path, format or partition missing");
    if (f->record_count < 0 || f->file_size_bytes < 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "negative record count or size");
    if ((f->n_equality_ids > 0) != (f->content == FL_ICE_EQUALITY_DELETES))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "equality ids belong to equality deletes only");
    if (f->n_split_offsets > FL_ICE_LIST_MAX || f->n_equality_ids > FL_ICE_LIST_MAX ||
        (f->n_split_offsets && !f->split_offsets) || (f->n_equality_ids && !f->equality_ids))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "split offsets or equality ids malformed");
    for (size_t i = 1; i < f->n_split_offsets; i++)
        if (f->split_offsets[i] < f->split_offsets[i - 1])
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "split offsets not ascending");
    for (size_t i = 0; i < m->spec.n_fields; i++) {
        const fl_ice_value_t *v = &f->partition[i];
        fl_ice_type_t t = m->spec.fields[i].type;
        if (v->null) continue;
        if (t == FL_ICE_STRING && !v->s.p && v->s.len)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "partition value %zu has no bytes", i);
        if ((t == FL_ICE_INT || t == FL_ICE_DATE) && (v->i < INT32_MIN || v->i > INT32_MAX))
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "partition value %zu over 32 bits", i);
    }
    if (f->sort_order_id < FL_ICE_NO_ORDER)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "sort order id %" PRId32, f->sort_order_id);
    return check_columns(f, err);
}

static int check_entry(const fl_ice_manifest_t *m, const fl_ice_manifest_entry_t *e,
                       fl_error_t *err) {
    if ((unsigned)e->status > FL_ICE_DELETED)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "status %d", e->status);
    if (e->status != FL_ICE_ADDED &&
        (e->sequence_number == FL_ICE_NONE || e->file_sequence_number == FL_ICE_NONE))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "an existing or deleted entry needs its sequence numbers");
    if (e->snapshot_id < FL_ICE_NONE || e->sequence_number < FL_ICE_NONE ||
        e->file_sequence_number < FL_ICE_NONE)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "negative snapshot id or sequence number");
    return check_file(m, &e->file, err);
}

/* The rows of each status must add up without overflow (the summary's). */
static int check_totals(const fl_ice_manifest_t *m, fl_error_t *err) {
    int64_t rows[3] = {0, 0, 0};
    for (size_t e = 0; e < m->n_entries; e++)
        if (__builtin_add_overflow(rows[m->entries[e].status], m->entries[e].file.record_count,
                                   &rows[m->entries[e].status]))
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "manifest: row counts overflow");
    return 0;
}

static int check_manifest(const fl_ice_manifest_t *m, fl_error_t *err) {
    if ((unsigned)m->content > FL_ICE_MANIFEST_DELETES || !m->schema_json ||
        (m->n_entries && !m->entries) || m->n_entries > INT32_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "manifest: content, schema or entries missing");
    int rc = check_spec(&m->spec, err);
    for (size_t e = 0; !rc && e < m->n_entries; e++)
        if ((rc = check_entry(m, &m->entries[e], err)))
            fl_err_prefix(err, "manifest entry %zu: ", e);
    return rc ? rc : check_totals(m, err);
}

/* ---- header ---- */

static char *spec_json(const fl_ice_partition_spec_t *spec) {
    json_t *a = json_array();
    for (size_t i = 0; i < spec->n_fields; i++) {
        const fl_ice_partition_field_t *f = &spec->fields[i];
        char transform[32] = "identity";
        if (f->transform == FL_ICE_BUCKET)
            snprintf(transform, sizeof(transform), "bucket[%" PRId32 "]", f->buckets);
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(f->name));
        json_object_set_new(o, "transform", json_string(transform));
        json_object_set_new(o, "source-id", json_integer(f->source_id));
        json_object_set_new(o, "field-id", json_integer(f->field_id));
        json_array_append_new(a, o);
    }
    char *s = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    if (!s) abort(); /* names are checked Avro names: always UTF-8 */
    return s;
}

/* ---- records ---- */

static void set_opt_long(fl_avro_value_t *v, fl_avro_arena_t *a, int64_t x) {
    if (x == FL_ICE_NONE)
        fl_avro_value_set_null(fl_avro_value_set_branch(v, a, 0));
    else
        fl_avro_value_set_long(fl_avro_value_set_branch(v, a, 1), x);
}

static void set_opt_bytes(fl_avro_value_t *v, fl_avro_arena_t *a, fl_avro_bytes_t b) {
    if (!b.p)
        fl_avro_value_set_null(fl_avro_value_set_branch(v, a, 0));
    else
        fl_avro_value_set_bytes(fl_avro_value_set_branch(v, a, 1), b.p, b.len);
}

/* Which stat of a column a map carries. */
typedef enum { ST_SIZE, ST_VALUES, ST_NULLS, ST_NANS, ST_LOWER, ST_UPPER } stat_t;

static bool stat_present(const fl_ice_column_stats_t *c, stat_t s) {
    switch (s) {
    case ST_SIZE: return c->column_size != FL_ICE_NONE;
    case ST_VALUES: return c->value_count != FL_ICE_NONE;
    case ST_NULLS: return c->null_count != FL_ICE_NONE;
    case ST_NANS: return c->nan_count != FL_ICE_NONE;
    case ST_LOWER: return c->lower.p != NULL;
    default: return c->upper.p != NULL;
    }
}

static void stat_set(fl_avro_value_t *v, const fl_ice_column_stats_t *c, stat_t s) {
    switch (s) {
    case ST_SIZE: fl_avro_value_set_long(v, c->column_size); break;
    case ST_VALUES: fl_avro_value_set_long(v, c->value_count); break;
    case ST_NULLS: fl_avro_value_set_long(v, c->null_count); break;
    case ST_NANS: fl_avro_value_set_long(v, c->nan_count); break;
    case ST_LOWER: fl_avro_value_set_bytes(v, c->lower.p, c->lower.len); break;
    default: fl_avro_value_set_bytes(v, c->upper.p, c->upper.len); break;
    }
}

/* The map of one stat: the columns that have it, or null if none does. */
static void set_stat_map(fl_avro_value_t *v, fl_avro_arena_t *a, const fl_ice_data_file_t *f,
                         stat_t s) {
    size_t n = 0;
    for (size_t c = 0; c < f->n_columns; c++) n += stat_present(&f->columns[c], s);
    if (!n) {
        fl_avro_value_set_null(fl_avro_value_set_branch(v, a, 0));
        return;
    }
    fl_avro_value_t *items = fl_avro_value_set_array(fl_avro_value_set_branch(v, a, 1), a, n);
    for (size_t c = 0, i = 0; c < f->n_columns; c++) {
        if (!stat_present(&f->columns[c], s)) continue;
        fl_avro_value_t *kv = fl_avro_value_set_record(&items[i++], a, 2);
        fl_avro_value_set_int(&kv[0], f->columns[c].field_id);
        stat_set(&kv[1], &f->columns[c], s);
    }
}

static void set_partition(fl_avro_value_t *v, fl_avro_arena_t *a,
                          const fl_ice_partition_spec_t *spec, const fl_ice_value_t *p) {
    fl_avro_value_t *fields = fl_avro_value_set_record(v, a, spec->n_fields);
    for (size_t i = 0; i < spec->n_fields; i++) {
        if (p[i].null) {
            fl_avro_value_set_null(fl_avro_value_set_branch(&fields[i], a, 0));
            continue;
        }
        fl_avro_value_t *x = fl_avro_value_set_branch(&fields[i], a, 1);
        switch (spec->fields[i].type) {
        case FL_ICE_LONG: fl_avro_value_set_long(x, p[i].i); break;
        case FL_ICE_STRING:
            fl_avro_value_set_string(x, "");
            if (p[i].s.p) x->u.bytes = p[i].s;
            break;
        default: fl_avro_value_set_int(x, (int32_t)p[i].i); break;
        }
    }
}

static void set_lists(fl_avro_value_t *df, fl_avro_arena_t *a, const fl_ice_data_file_t *f) {
    fl_avro_value_t *v = &df[ICE_DF_I_SPLITS];
    if (!f->n_split_offsets) {
        fl_avro_value_set_null(fl_avro_value_set_branch(v, a, 0));
    } else {
        fl_avro_value_t *x = fl_avro_value_set_array(fl_avro_value_set_branch(v, a, 1), a,
                                                     f->n_split_offsets);
        for (size_t i = 0; i < f->n_split_offsets; i++) fl_avro_value_set_long(&x[i], f->split_offsets[i]);
    }
    v = &df[ICE_DF_I_EQUALITY_IDS];
    if (!f->n_equality_ids) {
        fl_avro_value_set_null(fl_avro_value_set_branch(v, a, 0));
    } else {
        fl_avro_value_t *x = fl_avro_value_set_array(fl_avro_value_set_branch(v, a, 1), a,
                                                     f->n_equality_ids);
        for (size_t i = 0; i < f->n_equality_ids; i++) fl_avro_value_set_int(&x[i], f->equality_ids[i]);
    }
    v = &df[ICE_DF_I_SORT_ORDER];
    if (f->sort_order_id == FL_ICE_NO_ORDER)
        fl_avro_value_set_null(fl_avro_value_set_branch(v, a, 0));
    else
        fl_avro_value_set_int(fl_avro_value_set_branch(v, a, 1), f->sort_order_id);
}

static void set_data_file(fl_avro_value_t *v, fl_avro_arena_t *a,
                          const fl_ice_partition_spec_t *spec, const fl_ice_data_file_t *f) {
    fl_avro_value_t *df = fl_avro_value_set_record(v, a, ICE_DF_N);
    fl_avro_value_set_int(&df[ICE_DF_I_CONTENT], (int32_t)f->content);
    fl_avro_value_set_string(&df[ICE_DF_I_PATH], f->file_path);
    fl_avro_value_set_string(&df[ICE_DF_I_FORMAT], f->file_format);
    set_partition(&df[ICE_DF_I_PARTITION], a, spec, f->partition);
    fl_avro_value_set_long(&df[ICE_DF_I_RECORDS], f->record_count);
    fl_avro_value_set_long(&df[ICE_DF_I_SIZE], f->file_size_bytes);
    for (stat_t s = ST_SIZE; s <= ST_UPPER; s++) set_stat_map(&df[ICE_DF_I_COLUMN_SIZES + s], a, f, s);
    set_lists(df, a, f);
}

static void set_entry(fl_avro_value_t *v, fl_avro_arena_t *a, const fl_ice_partition_spec_t *spec,
                      const fl_ice_manifest_entry_t *e) {
    fl_avro_value_t *f = fl_avro_value_set_record(v, a, 5);
    fl_avro_value_set_int(&f[0], (int32_t)e->status);
    set_opt_long(&f[1], a, e->snapshot_id);
    set_opt_long(&f[2], a, e->sequence_number);
    set_opt_long(&f[3], a, e->file_sequence_number);
    set_data_file(&f[4], a, spec, &e->file);
}

/* ---- files ---- */

/* Opens a writer (path NULL: in memory), appends every record set_record
 * builds, finishes. *w is the caller's to destroy. */
typedef void (*set_record_fn)(fl_avro_value_t *v, fl_avro_arena_t *a, const void *ctx, size_t i);

static int write_records(const char *path, const fl_avro_schema_t *s, const fl_avro_meta_t *meta,
                         size_t n_meta, set_record_fn set, const void *ctx, size_t n,
                         fl_avro_file_writer_t **w, fl_error_t *err) {
    fl_avro_file_options_t o;
    fl_avro_file_options_init(&o);
    int rc = fl_avro_file_writer_open(path, s, meta, n_meta, &o, w, err);
    fl_avro_arena_t a;
    fl_avro_arena_init(&a);
    for (size_t i = 0; !rc && i < n; i++) {
        fl_avro_value_t v;
        set(&v, &a, ctx, i);
        rc = fl_avro_file_writer_append(*w, &v, err);
        fl_avro_arena_reset(&a);
    }
    if (!rc) rc = fl_avro_file_writer_finish(*w, err);
    return rc;
}

static void set_entry_at(fl_avro_value_t *v, fl_avro_arena_t *a, const void *ctx, size_t i) {
    const fl_ice_manifest_t *m = ctx;
    set_entry(v, a, &m->spec, &m->entries[i]);
}

static int manifest_write(const char *path, const fl_ice_manifest_t *m, fl_buf_t *out,
                          fl_ice_manifest_summary_t *summary, fl_error_t *err) {
    int rc = check_manifest(m, err);
    if (rc) return rc;
    char *spec = spec_json(&m->spec);
    char schema_id[16], spec_id[16];
    snprintf(schema_id, sizeof(schema_id), "%" PRId32, m->schema_id);
    snprintf(spec_id, sizeof(spec_id), "%" PRId32, m->spec.spec_id);
    const fl_avro_meta_t meta[] = {
        fl_avro_meta_str("schema", m->schema_json),
        fl_avro_meta_str("schema-id", schema_id),
        fl_avro_meta_str("partition-spec", spec),
        fl_avro_meta_str("partition-spec-id", spec_id),
        fl_avro_meta_str("format-version", "2"),
        fl_avro_meta_str("content", m->content == FL_ICE_MANIFEST_DATA ? "data" : "deletes"),
    };
    fl_avro_schema_t *s = fl_ice_manifest_entry_schema(&m->spec);
    fl_avro_file_writer_t *w = NULL;
    rc = write_records(path, s, meta, sizeof(meta) / sizeof(meta[0]), set_entry_at, m,
                       m->n_entries, &w, err);
    if (!rc && out) {
        const fl_buf_t *b = fl_avro_file_writer_bytes(w);
        fl_buf_append(out, b->data, b->len);
    }
    if (!rc && summary) summarize(m, path ? path : "", fl_avro_file_writer_position(w), summary);
    fl_avro_file_writer_destroy(w);
    fl_avro_schema_destroy(s);
    free(spec);
    return rc;
}

int fl_ice_manifest_write(const char *path, const fl_ice_manifest_t *m,
                          fl_ice_manifest_summary_t *summary, fl_error_t *err) {
    return manifest_write(path, m, NULL, summary, err);
}

int fl_ice_manifest_encode(const fl_ice_manifest_t *m, fl_buf_t *out,
                           fl_ice_manifest_summary_t *summary, fl_error_t *err) {
    return manifest_write(NULL, m, out, summary, err);
}

/* ---- manifest lists ---- */

static void set_summaries(fl_avro_value_t *v, fl_avro_arena_t *a, const fl_ice_manifest_file_t *m) {
    if (!m->partitions) {
        fl_avro_value_set_null(fl_avro_value_set_branch(v, a, 0));
        return;
    }
    fl_avro_value_t *items =
        fl_avro_value_set_array(fl_avro_value_set_branch(v, a, 1), a, m->n_partitions);
    for (size_t i = 0; i < m->n_partitions; i++) {
        const fl_ice_field_summary_t *p = &m->partitions[i];
        fl_avro_value_t *f = fl_avro_value_set_record(&items[i], a, 4);
        fl_avro_value_set_boolean(&f[0], p->contains_null);
        if (p->contains_nan < 0)
            fl_avro_value_set_null(fl_avro_value_set_branch(&f[1], a, 0));
        else
            fl_avro_value_set_boolean(fl_avro_value_set_branch(&f[1], a, 1), p->contains_nan);
        set_opt_bytes(&f[2], a, p->lower);
        set_opt_bytes(&f[3], a, p->upper);
    }
}

static void set_manifest_file_at(fl_avro_value_t *v, fl_avro_arena_t *a, const void *ctx, size_t i) {
    const fl_ice_manifest_list_t *l = ctx;
    const fl_ice_manifest_file_t *m = &l->manifests[i];
    fl_avro_value_t *f = fl_avro_value_set_record(v, a, 15);
    fl_avro_value_set_string(&f[0], m->manifest_path);
    fl_avro_value_set_long(&f[1], m->manifest_length);
    fl_avro_value_set_int(&f[2], m->partition_spec_id);
    fl_avro_value_set_int(&f[3], (int32_t)m->content);
    fl_avro_value_set_long(&f[4], m->sequence_number == FL_ICE_NONE ? l->sequence_number
                                                                    : m->sequence_number);
    fl_avro_value_set_long(&f[5], m->min_sequence_number == FL_ICE_NONE ? l->sequence_number
                                                                        : m->min_sequence_number);
    fl_avro_value_set_long(&f[6], m->added_snapshot_id);
    fl_avro_value_set_int(&f[7], m->added_files_count);
    fl_avro_value_set_int(&f[8], m->existing_files_count);
    fl_avro_value_set_int(&f[9], m->deleted_files_count);
    fl_avro_value_set_long(&f[10], m->added_rows_count);
    fl_avro_value_set_long(&f[11], m->existing_rows_count);
    fl_avro_value_set_long(&f[12], m->deleted_rows_count);
    set_summaries(&f[13], a, m);
    set_opt_bytes(&f[14], a, m->key_metadata);
}

static int check_list(const fl_ice_manifest_list_t *l, fl_error_t *err) {
    if (l->snapshot_id < 0 || l->sequence_number < 0 || l->parent_snapshot_id < FL_ICE_NONE ||
        (l->n_manifests && !l->manifests))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "manifest list: bad snapshot or sequence");
    for (size_t i = 0; i < l->n_manifests; i++) {
        const fl_ice_manifest_file_t *m = &l->manifests[i];
        if (!m->manifest_path || m->manifest_length < 0 || (unsigned)m->content > 1 ||
            m->added_snapshot_id < 0 || m->sequence_number < FL_ICE_NONE ||
            m->min_sequence_number < FL_ICE_NONE || m->added_files_count < 0 ||
            m->existing_files_count < 0 || m->deleted_files_count < 0 ||
            m->added_rows_count < 0 || m->existing_rows_count < 0 || m->deleted_rows_count < 0 ||
            m->n_partitions > FL_ICE_PARTITION_FIELDS_MAX)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "manifest list: entry %zu malformed", i);
    }
    return 0;
}

static int list_write(const char *path, const fl_ice_manifest_list_t *l, fl_buf_t *out,
                      uint64_t *length, fl_error_t *err) {
    int rc = check_list(l, err);
    if (rc) return rc;
    char snap[24], parent[24] = "null", seq[24];
    snprintf(snap, sizeof(snap), "%" PRId64, l->snapshot_id);
    if (l->parent_snapshot_id != FL_ICE_NONE)
        snprintf(parent, sizeof(parent), "%" PRId64, l->parent_snapshot_id);
    snprintf(seq, sizeof(seq), "%" PRId64, l->sequence_number);
    const fl_avro_meta_t meta[] = {
        fl_avro_meta_str("snapshot-id", snap),
        fl_avro_meta_str("parent-snapshot-id", parent),
        fl_avro_meta_str("sequence-number", seq),
        fl_avro_meta_str("format-version", "2"),
    };
    fl_avro_schema_t *s = fl_ice_manifest_file_schema();
    fl_avro_file_writer_t *w = NULL;
    rc = write_records(path, s, meta, sizeof(meta) / sizeof(meta[0]), set_manifest_file_at, l,
                       l->n_manifests, &w, err);
    if (!rc && out) {
        const fl_buf_t *b = fl_avro_file_writer_bytes(w);
        fl_buf_append(out, b->data, b->len);
    }
    if (!rc && length) *length = fl_avro_file_writer_position(w);
    fl_avro_file_writer_destroy(w);
    fl_avro_schema_destroy(s);
    return rc;
}

int fl_ice_manifest_list_write(const char *path, const fl_ice_manifest_list_t *l,
                               uint64_t *length, fl_error_t *err) {
    return list_write(path, l, NULL, length, err);
}

int fl_ice_manifest_list_encode(const fl_ice_manifest_list_t *l, fl_buf_t *out, fl_error_t *err) {
    return list_write(NULL, l, out, NULL, err);
}
